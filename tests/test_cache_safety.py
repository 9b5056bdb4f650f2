"""The disk cache against other users, odd files and a failing environment
(issue 10, items 7-13): private directories and files, refused shared
directories, entries that are not regular files, symlinks planted where
parpy writes, compiler identity, environment failures as BuildError, and
clear_cache() during builds."""

import hashlib
import os
import pathlib
import shutil
import stat
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import parpy
from conftest import backend_opts

HERE = pathlib.Path(__file__).resolve().parent


@parpy.jit
def inc(x, y, n):
    for i in range(n):
        y[i] = x[i] + 1.0


def opts_in(cache, **fields):
    return backend_opts(parpy.CompileBackend.Cpu, {}, cache, **fields)


def run_inc(cache, fn=inc, n=8, **fields):
    x = np.arange(n, dtype=np.float64)
    y = np.zeros(n)
    fn(x, y, n, opts=opts_in(cache, **fields))
    assert np.array_equal(y, x + 1.0)


def fresh(f=inc):
    """A new JitFunction of the same Python function: empty memory cache."""
    return parpy.jit(f.py_func)


def mode(p):
    return stat.S_IMODE(os.stat(p).st_mode)


def test_cache_directory_and_files_are_private_whatever_the_umask(tmp_path):
    cache = tmp_path / "c"
    old = os.umask(0)
    try:
        run_inc(cache, fresh())
    finally:
        os.umask(old)
    assert mode(cache) == 0o700
    libs = list(cache.glob("*.so"))
    metas = list(cache.glob("*.meta"))
    assert libs and metas
    assert all(mode(p) == 0o700 for p in libs)
    assert all(mode(p) == 0o600 for p in metas)


def test_a_directory_others_may_write_is_refused_with_a_warning(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.warns(parpy.ParpyWarning, match="writable by group or others"):
        run_inc(shared, fresh())
    assert not list(shared.iterdir()), "built into a world-writable directory"


def test_the_private_directory_used_instead_is_removed_when_the_process_exits(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    script = textwrap.dedent(f"""
        import re, sys, warnings, numpy as np, parpy
        @parpy.jit
        def inc(x, y, n):
            for i in range(n):
                y[i] = x[i] + 1.0
        x = np.arange(4.0); y = np.zeros(4)
        opts = parpy.par({{}})
        opts.backend = parpy.CompileBackend.Cpu
        opts.cache_dir = {str(shared)!r}
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            inc(x, y, 4, opts=opts)
        assert (y == x + 1).all()
        msg = " ".join(str(m.message) for m in w)
        private = re.search(r"building in the private directory (\\S+) instead", msg).group(1)
        import os
        assert os.path.isdir(private) and os.listdir(private)
        print(private)
    """)
    (tmp_path / "prog.py").write_text(script)
    out = subprocess.run([sys.executable, str(tmp_path / "prog.py")], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    private = out.stdout.strip().splitlines()[-1]
    assert "parpy-private" in private
    assert not os.path.exists(private), "the private cache directory outlived its process"


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
@pytest.mark.parametrize("where", ["/proc/self", "/dev/null"])
def test_a_directory_that_cannot_be_written_is_refused_with_a_warning(where):
    # /proc/self is the user's, mode 0555 (a read-only mount is the same):
    # the build failed with a BuildError blaming the C compiler, where a
    # file (/dev/null) was refused for a private directory
    why = "it cannot be written" if where == "/proc/self" else "it is not a directory"
    with pytest.warns(parpy.ParpyWarning, match=f"does not use the cache directory {where}: {why}"):
        run_inc(where, fresh())


def test_a_directory_of_another_user_is_refused(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, 65534, 65534)
    with pytest.warns(parpy.ParpyWarning, match="owned by uid 65534"):
        run_inc(theirs, fresh())
    assert not list(theirs.iterdir())


def test_the_fallback_cache_directory_is_per_user():
    env = {k: v for k, v in os.environ.items() if k not in ("HOME", "XDG_CACHE_HOME")}
    out = subprocess.run(
        [sys.executable, "-c", "from parpy import _native; print(_native.default_cache_dir())"],
        capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert os.path.basename(out.stdout.strip()) == f"parpy-cache-{os.geteuid()}"


def test_cache_dir_empty_string_is_an_error():
    opts = parpy.CompileOptions()
    with pytest.raises(ValueError, match="cache_dir must name a directory"):
        opts.cache_dir = ""


CHILD = textwrap.dedent("""\
    import sys
    sys.path.insert(0, {tests!r})
    import numpy as np
    import parpy
    from test_cache_safety import inc, run_inc
    run_inc({cache!r})
    print("ok")
    """)


def run_child(tmp_path, cache):
    script = tmp_path / "child.py"
    script.write_text(CHILD.format(tests=str(HERE), cache=str(cache)))
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=60)


def test_entries_that_are_directories_or_fifos_are_rebuilt(tmp_path):
    cache = tmp_path / "c"
    assert run_child(tmp_path, cache).returncode == 0
    (so,) = cache.glob("*.so")
    (meta,) = cache.glob("*.meta")
    so.unlink()
    so.mkdir()
    meta.unlink()
    os.mkfifo(meta)
    r = run_child(tmp_path, cache)  # hung (FIFO) or failed (directory) before
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr
    assert so.is_file() and meta.is_file()


def test_write_output_replaces_a_planted_symlink_instead_of_following_it(tmp_path, capsys):
    cache = tmp_path / "c"
    n = 8
    args = [np.zeros(n), np.zeros(n), n]
    code = parpy.print_compiled(inc, args, opts_in(cache))
    digest = hashlib.sha256(code.encode()).hexdigest()[:12]
    gen = cache / "generated"
    gen.mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    target = gen / f"inc-{digest}.c"
    target.symlink_to(victim)
    run_inc(cache, fresh(), n=n, write_output=True)
    assert victim.read_text() == "precious"
    assert not target.is_symlink() and target.read_text() == code


def write_wrapper(path, real, tag):
    path.write_text(f"#!/bin/sh\n# {tag}\nexec \"{real}\" \"$@\"\n")
    path.chmod(0o755)


def test_a_replaced_compiler_of_the_same_size_and_mtime_rebuilds(tmp_path, monkeypatch):
    real = shutil.which(os.environ.get("CC", "") or "cc") or shutil.which("gcc")
    cc = tmp_path / "cc"
    write_wrapper(cc, real, "AAAA")
    monkeypatch.setenv("CC", str(cc))
    cache = tmp_path / "c"
    run_inc(cache, fresh())
    st = os.stat(cc)
    write_wrapper(cc, real, "BBBB")  # same size
    os.utime(cc, ns=(st.st_atime_ns, st.st_mtime_ns))
    run_inc(cache, fresh())
    assert len(list(cache.glob("*.so"))) == 2, "the old compiler's entry was reused"


def test_a_compiler_that_fails_without_diagnostics_is_a_build_error(tmp_path, monkeypatch):
    monkeypatch.setenv("CC", "/bin/false")
    with pytest.raises(parpy.BuildError) as e:
        run_inc(tmp_path / "c", fresh())
    assert isinstance(e.value, RuntimeError)
    assert not isinstance(e.value, parpy.InternalError)
    msg = str(e.value)
    assert "false" in msg and "C compiler" in msg and "bug in parpy" not in msg


@parpy.jit
def scaled(x, y, n, k):
    for i in range(n):
        y[i] = x[i] * k


def test_clear_cache_during_builds_in_other_threads(tmp_path):
    cache = tmp_path / "c"
    errors = []
    stop = threading.Event()

    def build(t):
        try:
            for j in range(4):
                x = np.ones(4)
                y = np.zeros(4)
                k = float(10 * t + j)  # a new specialization each time
                scaled(x, y, 4, k, opts=opts_in(cache, specialize_scalars=True))
                assert np.all(y == k)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def clear():
        while not stop.is_set():
            parpy.clear_cache()

    threads = [threading.Thread(target=build, args=(t,)) for t in range(3)]
    clearer = threading.Thread(target=clear)
    clearer.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    stop.set()
    clearer.join(timeout=60)
    assert not errors, [str(e) for e in errors]


def test_no_c_compiler_at_all_is_a_build_error(tmp_path):
    # (before: a plain RuntimeError, where docs/safety.md promises
    # `parpy.BuildError` for a missing compiler)
    script = tmp_path / "p.py"
    script.write_text(textwrap.dedent("""
        import numpy as np, parpy
        @parpy.jit
        def f(x, N):
            for i in range(N):
                x[i] = 2.0
        o = parpy.CompileOptions(); o.backend = parpy.CompileBackend.Cpu
        try:
            f(np.zeros(3), 3, opts=o)
        except parpy.BuildError as e:
            print("BuildError", isinstance(e, RuntimeError), str(e).splitlines()[0])
    """))
    env = dict(os.environ, CC=str(tmp_path / "no-such-cc"), XDG_CACHE_HOME=str(tmp_path))
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.stdout.startswith("BuildError True cannot run `f` on the Cpu backend"), r
    assert "no C compiler found" in r.stdout, r.stdout


def _c_compiler():
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler")
    return cc


@pytest.mark.parametrize("how", ["header", "define", "cplusplus", "no-output"])
def test_a_compiler_that_fails_on_any_code_is_a_build_error_not_a_parpy_bug(
        tmp_path, monkeypatch, how):
    # (before: CC="gcc -m32" without 32-bit headers and CC="gcc -DNDEBUG"
    # with a function named NDEBUG were an InternalError, "a bug in parpy";
    # CC=g++ said "no entry symbol", CC=/bin/true an I/O error on a .so.tmp)
    cc = _c_compiler()
    if how == "header":       # fails on every C file, as -m32 without its headers
        cmd, words = f"{cc} -include /nonexistent/parpy-missing.h", ["minimal C file"]
    elif how == "define":     # the generated code's name `inc` made a macro by $CC
        cmd, words = f"{cc} -Dinc=", ["without the", "arguments `-Dinc=`"]
    elif how == "cplusplus":
        cxx = shutil.which("g++") or shutil.which("clang++")
        if cxx is None:
            pytest.skip("no C++ compiler")
        cmd, words = cxx, ["compiles C++, not C"]
    else:
        cmd, words = "/bin/true", ["wrote no library"]
    monkeypatch.setenv("CC", cmd)
    with pytest.raises(parpy.BuildError) as e:
        run_inc(tmp_path / "c", fresh())
    assert isinstance(e.value, RuntimeError)
    assert not isinstance(e.value, parpy.InternalError)
    msg = str(e.value)
    assert "bug in parpy" not in msg and "is not usable" in msg, msg
    for w in words:
        assert w in msg, msg
