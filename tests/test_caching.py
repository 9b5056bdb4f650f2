"""Caching, observed without timing: every test points `$CC` at a wrapper
script that logs each compilation and then runs the real C compiler, and uses
its own `cache_dir`. The number of logged builds says exactly how often parpy
compiled; the disk cache directory shows what was stored.
"""

import os
import pathlib
import shutil
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import parpy
from conftest import backend_opts

HERE = pathlib.Path(__file__).resolve().parent


@pytest.fixture
def cc_log(tmp_path, monkeypatch):
    """Installs a logging `$CC`; returns a function giving the number of
    compilations so far."""
    real = shutil.which(os.environ.get("CC", "") or "cc") or shutil.which("gcc")
    assert real, "no C compiler found"
    log = tmp_path / "cc.log"
    log.write_text("")
    wrapper = tmp_path / "cc-wrapper.sh"
    wrapper.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        for a in "$@"; do
            if [ "$a" = "-o" ]; then echo "build: $*" >> "{log}"; break; fi
        done
        exec "{real}" "$@"
        """))
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    monkeypatch.setenv("CC", str(wrapper))
    parpy.clear_cache()  # nothing from other tests in memory

    def builds():
        return sum(1 for ln in log.read_text().splitlines() if ln.startswith("build:"))

    builds.wrapper = str(wrapper)
    return builds


def opts_for(cache_dir, **fields):
    return backend_opts(parpy.CompileBackend.Cpu, {'N': parpy.threads(4)}, cache_dir, **fields)


def cache_files(cache_dir):
    """{relative path: (size, mtime_ns)} of the files in the cache directory."""
    root = pathlib.Path(cache_dir)
    if not root.exists():
        return {}
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*")) if p.is_file()
    }


def shared_libraries(cache_dir):
    return sorted(pathlib.Path(cache_dir).rglob("*.so"))


@parpy.jit
def scale(x, y, a, N):
    parpy.label('N')
    for i in range(N):
        y[i] = a * x[i]


def run_scale(N, a, opts):
    x = np.arange(N, dtype=np.float64)
    y = np.zeros(N, np.float64)
    scale(x, y, a, N, opts=opts)
    np.testing.assert_allclose(y, a * x)


def test_second_call_does_not_recompile(tmp_path, cc_log):
    opts = opts_for(tmp_path / "cache")
    run_scale(100, 2.0, opts)
    assert cc_log() == 1
    assert scale.cache_size() == 1
    files = cache_files(tmp_path / "cache")
    assert len(shared_libraries(tmp_path / "cache")) == 1, files
    for _ in range(5):
        run_scale(100, 2.0, opts)
    assert cc_log() == 1
    assert cache_files(tmp_path / "cache") == files, "the disk cache was rewritten"


def test_new_options_object_with_same_content_hits(tmp_path, cc_log):
    run_scale(100, 2.0, opts_for(tmp_path / "cache"))
    run_scale(100, 2.0, opts_for(tmp_path / "cache"))
    assert cc_log() == 1


def test_shape_change_is_a_new_specialization(tmp_path, cc_log):
    opts = opts_for(tmp_path / "cache")
    run_scale(100, 2.0, opts)
    run_scale(101, 2.0, opts)
    assert cc_log() == 2
    assert len(shared_libraries(tmp_path / "cache")) == 2
    run_scale(100, 2.0, opts)
    run_scale(101, 2.0, opts)
    assert cc_log() == 2
    assert scale.cache_size() == 2  # two specializations in memory


def test_dtype_change_is_a_new_specialization(tmp_path, cc_log):
    opts = opts_for(tmp_path / "cache")
    x = np.arange(10, dtype=np.float32)
    y = np.zeros(10, np.float32)
    scale(x, y, 2.0, 10, opts=opts)
    run_scale(10, 2.0, opts)
    assert cc_log() == 2


def test_scalar_change_recompiles_when_specialized(tmp_path, cc_log):
    opts = opts_for(tmp_path / "cache", specialize_scalars=True)
    run_scale(64, 2.0, opts)
    run_scale(64, 3.0, opts)
    assert cc_log() == 2
    run_scale(64, 2.0, opts)
    assert cc_log() == 2


def test_scalar_change_does_not_recompile_when_not_specialized(tmp_path, cc_log):
    opts = opts_for(tmp_path / "cache", specialize_scalars=False)
    run_scale(64, 2.0, opts)
    run_scale(64, 3.0, opts)
    run_scale(64, -1.5, opts)
    assert cc_log() == 1
    assert scale.cache_size() == 1
    # N is a scalar too, but the shapes still change: a new specialization
    run_scale(65, 2.0, opts)
    assert cc_log() == 2


def test_options_change_recompiles(tmp_path, cc_log):
    run_scale(64, 2.0, opts_for(tmp_path / "cache"))
    # no parallel spec: different code, so a new build
    opts = parpy.par({})
    opts.backend = parpy.CompileBackend.Cpu
    opts.cache_dir = str(tmp_path / "cache")
    run_scale(64, 2.0, opts)
    assert cc_log() == 2
    # a different thread count may or may not change the C code; when it
    # does not, the disk cache (keyed by the code) legitimately serves it
    opts8 = parpy.par({'N': parpy.threads(8)})
    opts8.backend = parpy.CompileBackend.Cpu
    opts8.cache_dir = str(tmp_path / "cache")
    x = np.arange(64, dtype=np.float64)
    code4 = parpy.print_compiled(scale, [x, x.copy(), 2.0, 64], opts_for(tmp_path / "cache"))
    code8 = parpy.print_compiled(scale, [x, x.copy(), 2.0, 64], opts8)
    run_scale(64, 2.0, opts8)
    assert cc_log() == (2 if code4 == code8 else 3)


SCRIPT = textwrap.dedent("""\
    import sys
    import numpy as np
    sys.path.insert(0, {tests!r})
    import parpy
    from test_caching import scale, opts_for

    opts = opts_for({cache!r})
    x = np.arange(100, dtype=np.float64)
    y = np.zeros(100, np.float64)
    scale(x, y, 2.0, 100, opts=opts)
    assert np.allclose(y, 2.0 * x), y
    print("ok")
    """)


def run_in_new_process(tmp_path, cache, cc_wrapper):
    script = tmp_path / "child.py"
    script.write_text(SCRIPT.format(tests=str(HERE), cache=str(cache)))
    env = dict(os.environ, CC=cc_wrapper)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stdout + proc.stderr


def test_new_process_reuses_disk_cache(tmp_path, cc_log):
    cache = tmp_path / "cache"
    run_in_new_process(tmp_path, cache, cc_log.wrapper)
    assert cc_log() == 1
    files = cache_files(cache)
    run_in_new_process(tmp_path, cache, cc_log.wrapper)
    assert cc_log() == 1, "a new process with a warm disk cache compiled again"
    assert cache_files(cache) == files


@pytest.mark.parametrize("damage", ["garbage", "truncate", "empty", "delete_meta"])
def test_corrupt_disk_entry_is_rebuilt(tmp_path, cc_log, damage):
    cache = tmp_path / "cache"
    run_in_new_process(tmp_path, cache, cc_log.wrapper)
    assert cc_log() == 1
    (so,) = shared_libraries(cache)
    data = so.read_bytes()
    if damage == "garbage":
        so.write_bytes(b"\x7fELF this is not a shared library" + b"\0" * 100)
    elif damage == "truncate":
        so.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        so.write_bytes(b"")
    else:
        others = [p for p in pathlib.Path(cache).rglob("*") if p.is_file() and p != so]
        assert others, "expected metadata next to the shared library"
        for p in others:
            p.unlink()
    damaged = so.read_bytes()
    run_in_new_process(tmp_path, cache, cc_log.wrapper)
    assert cc_log() == 2, "the damaged entry was not rebuilt"
    (so2,) = shared_libraries(cache)
    if damage != "delete_meta":
        assert so2.read_bytes() != damaged, "the damaged library is still in the cache"
    # and the rebuilt entry is trusted again by the next process
    run_in_new_process(tmp_path, cache, cc_log.wrapper)
    assert cc_log() == 2


def test_clear_cache_drops_memory_and_disk(tmp_path, cc_log):
    cache = tmp_path / "cache"
    opts = opts_for(cache)
    run_scale(100, 2.0, opts)
    assert cc_log() == 1
    parpy.clear_cache()
    assert scale.cache_size() == 0
    run_scale(100, 2.0, opts)
    assert cc_log() == 2, "clear_cache() did not drop the compiled function"


def test_print_compiled_does_not_build(tmp_path, cc_log):
    x = np.arange(10, dtype=np.float64)
    code = parpy.print_compiled(scale, [x, x.copy(), 2.0, 10], opts_for(tmp_path / "cache"))
    assert "#pragma omp" in code
    assert cc_log() == 0
    assert shared_libraries(tmp_path / "cache") == []


def test_a_jit_function_in_a_reference_cycle_is_collected():
    """JitFunction takes part in cycle collection: a function that refers to
    its own jit wrapper is freed once unreachable (it leaked before)."""
    import gc
    import weakref

    def body(x, N):
        for i in range(N):
            x[i] = 1.0

    f = parpy.jit(body)
    body.jitted = f  # body -> f -> body
    ref = weakref.ref(body)
    del body, f
    gc.collect()
    assert ref() is None


# Module-level names that compiled code takes: Python reads them at each
# call, so re-binding one makes the code stale (was: the first value kept
# for the life of the process, silently).
GAIN = 2.0
OFFSET = 1


@parpy.jit
def shifted(x, y, N):
    for i in range(N):
        y[i] = x[i] + OFFSET


@parpy.jit
def gained(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = GAIN * shifted_value(x[i])


@parpy.jit
def shifted_value(v):
    return v + OFFSET


@parpy.jit
def other_shift(v):
    return v - OFFSET


def test_a_module_level_number_re_bound_is_read_again(tmp_path, cc_log):
    global GAIN, OFFSET
    opts = opts_for(tmp_path / "cache")
    x, y = np.arange(4.0), np.zeros(4)
    try:
        gained(x, y, 4, opts=opts)
        assert list(y) == [2.0, 4.0, 6.0, 8.0]
        n = cc_log()
        gained(x, y, 4, opts=opts)
        assert cc_log() == n, "an unchanged name recompiled"
        GAIN = 3.0
        gained(x, y, 4, opts=opts)
        assert list(y) == [3.0, 6.0, 9.0, 12.0]
        # (a name a helper reads)
        OFFSET = 5
        gained(x, y, 4, opts=opts)
        assert list(y) == [15.0, 18.0, 21.0, 24.0]
        # (and back: the disk cache has that code already)
        GAIN, OFFSET = 2.0, 1
        n = cc_log()
        gained(x, y, 4, opts=opts)
        assert list(y) == [2.0, 4.0, 6.0, 8.0] and cc_log() == n
    finally:
        GAIN, OFFSET = 2.0, 1


def test_a_helper_name_re_bound_is_read_again(tmp_path):
    global shifted_value
    opts = opts_for(tmp_path / "cache")
    x, y = np.arange(4.0), np.zeros(4)
    saved = shifted_value
    try:
        gained(x, y, 4, opts=opts)
        assert list(y) == [2.0, 4.0, 6.0, 8.0]
        shifted_value = other_shift
        gained(x, y, 4, opts=opts)
        assert list(y) == [-2.0, 0.0, 2.0, 4.0]
    finally:
        shifted_value = saved


def test_a_closure_variable_re_bound_is_read_again(tmp_path):
    opts = opts_for(tmp_path / "cache")

    def make():
        k = 2.0

        @parpy.jit
        def times(x, y, N):
            parpy.label('N')
            for i in range(N):
                y[i] = x[i] * k

        def set_k(v):
            nonlocal k
            k = v
        return times, set_k

    times, set_k = make()
    x, y = np.arange(4.0), np.zeros(4)
    times(x, y, 4, opts=opts)
    assert list(y) == [0.0, 2.0, 4.0, 6.0]
    set_k(5.0)
    times(x, y, 4, opts=opts)
    assert list(y) == [0.0, 5.0, 10.0, 15.0]
