"""compile_string with hand-written C, and the disk cache: entries, verified
loads (corrupt, truncated or half-written entries are rebuilt), clear_cache."""

import hashlib
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import parpy
from conftest import backend_opts

SUM_ROWS_C = textwrap.dedent("""\
    // parpy-entry: sum_rows_entry
    // parpy-param: x float32[4, 8]
    // parpy-param: y f32[4] written
    // parpy-param: N int64
    #include <stdint.h>
    static void sum_rows(const float *x, float *y, int64_t N) {
      for (int64_t i = 0; i < N; i++) {
        float s = 0.0f;
        for (int64_t j = 0; j < 8; j++) s += x[i * 8 + j];
        y[i] = s;
      }
    }
    int32_t sum_rows_entry(void **args) {
      sum_rows((const float *)args[0], (float *)args[1], *(int64_t *)args[2]);
      return 0;
    }
    """)

SCALE_ANY_C = textwrap.dedent("""\
    // parpy-entry: scale_entry
    // parpy-param: x f64[?]
    // parpy-param: n i64
    // parpy-param: a f64
    // parpy-param: flag bool
    #include <stdint.h>
    int32_t scale_entry(void **args) {
      double *x = args[0];
      int64_t n = *(int64_t *)args[1];
      double a = *(double *)args[2];
      int64_t flag = *(int64_t *)args[3];
      if (n < 0) return 7;
      for (int64_t i = 0; i < n; i++) x[i] = flag ? x[i] * a : -x[i];
      return 0;
    }
    """)


def opts_in(d, **fields):
    return backend_opts(parpy.CompileBackend.Cpu, None, d, **fields)


def entries(d):
    d = pathlib.Path(d)
    return sorted(p.name for p in d.iterdir() if p.is_file()) if d.exists() else []


def sha(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


# ------------------------------------------------------------ compile_string


def test_compile_string_runs_hand_written_c(tmp_path):
    f = parpy.compile_string("sum_rows", SUM_ROWS_C, opts_in(tmp_path))
    x = np.random.rand(4, 8).astype(np.float32)
    y = np.zeros(4, np.float32)
    assert f(x, y, 4) is None
    np.testing.assert_allclose(y, x.sum(axis=1), rtol=1e-5)
    assert f.__name__ == "sum_rows" and f.entry_symbol == "sum_rows_entry"


def test_compile_string_checks_arguments(tmp_path):
    f = parpy.compile_string("sum_rows", SUM_ROWS_C, opts_in(tmp_path))
    x = np.zeros((4, 8), np.float32)
    y = np.zeros(4, np.float32)
    with pytest.raises(TypeError, match=r"sum_rows\(\) takes 3 positional arguments \(x, y, N\) but 2"):
        f(x, y)
    with pytest.raises(TypeError, match="argument `x` of `sum_rows` has dtype float64, but the code expects float32"):
        f(x.astype(np.float64), y, 4)
    with pytest.raises(ValueError, match=r"argument `x` of `sum_rows` has shape \(8, 4\), but the code expects \(4, 8\)"):
        f(np.zeros((8, 4), np.float32), y, 4)
    with pytest.raises(ValueError, match=r"argument `y` of `sum_rows` has shape \(5,\)"):
        f(x, np.zeros(5, np.float32), 4)
    with pytest.raises(ValueError, match="argument `x` of `sum_rows` is not C-contiguous"):
        f(np.zeros((8, 4), np.float32).T, y, 4)
    ro = y.copy()
    ro.setflags(write=False)
    with pytest.raises(ValueError, match="argument `y` of `sum_rows` is read-only"):
        f(x, ro, 4)
    xr = x.copy()
    xr.setflags(write=False)
    f(xr, y, 4)  # read-only input that is not written: fine
    with pytest.raises(TypeError, match="argument `N` of `sum_rows` must be a scalar of type int64, got float"):
        f(x, y, 4.0)
    with pytest.raises(TypeError, match="argument `x` of `sum_rows` must be a NumPy array"):
        f([[0.0] * 8] * 4, y, 4)
    with pytest.raises(TypeError):
        f(x, y, 4, opts=opts_in(tmp_path))


def test_compile_string_any_size_dims_and_scalar_kinds(tmp_path):
    f = parpy.compile_string("scale", SCALE_ANY_C, opts_in(tmp_path))
    for n in [3, 10]:
        x = np.arange(n, dtype=np.float64)
        f(x, n, 2.5, True)
        np.testing.assert_array_equal(x, np.arange(n) * 2.5)
        f(x, n, 1, np.bool_(False))  # an int for a float slot, a NumPy bool
        np.testing.assert_array_equal(x, -np.arange(n) * 2.5)
    with pytest.raises(TypeError, match="`flag` of `scale`"):
        f(np.zeros(2), 2, 1.0, 1)
    with pytest.raises(RuntimeError, match="error code 7"):
        f(np.zeros(2), -1, 1.0, True)


@pytest.mark.parametrize("dim", ["N", "-1", "4L", "18446744073709551615", "4.0", "+4"])
def test_compile_string_refuses_a_dimension_that_is_not_a_length(tmp_path, dim):
    # (any such dimension accepted arrays of every length, while the code
    # still ran over the length it was written for: a heap overflow)
    code = SUM_ROWS_C.replace("// parpy-param: y f32[4] written", f"// parpy-param: y f32[{dim}] written")
    with pytest.raises(ValueError) as e:
        parpy.compile_string("sum_rows", code, opts_in(tmp_path))
    assert f"dimension `{dim}` of parameter `y` is not a length" in str(e.value), str(e.value)
    assert "`?`" in str(e.value)


def test_compile_string_without_header(tmp_path):
    with pytest.raises(ValueError, match="parpy-entry"):
        parpy.compile_string("f", "int f(void) { return 0; }", opts_in(tmp_path))
    with pytest.raises(ValueError, match="unknown element type"):
        parpy.compile_string("f", "// parpy-entry: f\n// parpy-param: x c64[3]\n", opts_in(tmp_path))


def test_compile_string_refuses_a_parameter_or_entry_declared_twice(tmp_path):
    # (the duplicate parameter made a wrapper taking (x, y, N, N); a second
    # entry line won silently)
    code = SUM_ROWS_C.replace("// parpy-param: N int64", "// parpy-param: N int64\n// parpy-param: N int64")
    with pytest.raises(ValueError, match=r"^line \d+: `// parpy-param: N int64`: parameter `N` is "
                       r"declared twice \(first on line \d+\)"):
        parpy.compile_string("sum_rows", code, opts_in(tmp_path))
    code = SUM_ROWS_C.replace("// parpy-entry: sum_rows_entry",
                              "// parpy-entry: sum_rows_entry\n// parpy-entry: other")
    with pytest.raises(ValueError, match=r"^line \d+: `// parpy-entry: other`: a second "
                       r"`// parpy-entry` line \(line \d+ names `sum_rows_entry`\)"):
        parpy.compile_string("sum_rows", code, opts_in(tmp_path))


def test_compile_string_c_error_shows_compiler_output(tmp_path):
    code = "// parpy-entry: f\n#include <stdint.h>\nint32_t f(void **a) { return undeclared_name; }\n"
    with pytest.raises(parpy.CompileError, match="undeclared_name"):
        parpy.compile_string("f", code, opts_in(tmp_path))
    assert not [e for e in entries(tmp_path) if e.endswith(".so")]


def test_compile_string_missing_symbol(tmp_path):
    code = "// parpy-entry: nope\n#include <stdint.h>\nint32_t f(void **a) { (void)a; return 0; }\n"
    with pytest.raises(RuntimeError, match="`nope`"):
        parpy.compile_string("f", code, opts_in(tmp_path))


def test_compile_string_honours_flags(tmp_path):
    code = textwrap.dedent("""\
        // parpy-entry: f
        // parpy-param: x i64[1] written
        #include <stdint.h>
        int32_t f(void **a) { ((int64_t *)a[0])[0] = PARPY_TEST_VALUE; return 0; }
        """)
    with pytest.raises(parpy.CompileError, match="PARPY_TEST_VALUE"):
        parpy.compile_string("f", code, opts_in(tmp_path))
    f = parpy.compile_string("f", code, opts_in(tmp_path, extra_flags=["-DPARPY_TEST_VALUE=42"]))
    x = np.zeros(1, np.int64)
    f(x)
    assert x[0] == 42


def test_print_then_compile_string_round_trip(tmp_path):
    @parpy.jit
    def add(x, y, N):
        parpy.label('i')
        for i in range(N):
            y[i] = x[i] + 1.0

    x = np.arange(6, dtype=np.float32)
    y = np.zeros(6, np.float32)
    opts = opts_in(tmp_path)
    opts.parallelize = {'i': parpy.threads(2)}
    code = parpy.print_compiled(add, [x, y, 6], opts)
    f = parpy.compile_string("add", code, opts)
    f(x, y, 6)
    np.testing.assert_array_equal(y, x + 1)


@parpy.callback
def _bump(a):
    a.copy_from(a.numpy() + 100)


@parpy.jit
def _calls_back(x, N):
    parpy.label('N')
    for i in range(N):
        x[i] = x[i] * 2.0
    _bump(x)
    parpy.label('N')
    for i in range(N):
        x[i] = x[i] + 1.0


@pytest.mark.parametrize("backend", ["Cpu", "Cuda"])
def test_compile_string_refuses_code_that_calls_callbacks(tmp_path, backend):
    # the Cpu code returned early where its callback pointer was not set
    # (nothing after the callback ran, and no error); the Cuda code
    # returned 4. A function compiled from a string has no callbacks.
    opts = opts_in(tmp_path)
    opts.parallelize = {'N': parpy.threads(4)}
    opts.backend = getattr(parpy.CompileBackend, backend)
    code = parpy.print_compiled(_calls_back, [np.arange(4, dtype=np.float32), 4], opts)
    with pytest.raises(ValueError, match=r"the code calls Python callbacks \(`parpy.callback`\)"):
        parpy.compile_string("_calls_back", code, opts)


def test_compile_string_takes_a_dict_argument_as_the_jit_function_does(tmp_path):
    @parpy.jit
    def scale(A, y):
        parpy.label('N')
        for i in range(4):
            y[i] = A['w'][i] * A['m']['k']

    opts = opts_in(tmp_path)
    opts.parallelize = {'N': parpy.threads(4)}
    A = {'w': np.arange(4, dtype=np.float32), 'm': {'k': 3.0}, 'name': "unused"}
    code = parpy.print_compiled(scale, [A, np.zeros(4, np.float32)], opts)
    fn = parpy.compile_string("scale", code, opts)
    assert repr(fn) == "<parpy compiled function scale(A, y)>"
    y = np.zeros(4, np.float32)
    fn(A, y)                                  # the jit function's arguments
    np.testing.assert_array_equal(y, np.arange(4) * 3.0)
    y = np.zeros(4, np.float32)
    fn(A['w'], A['m']['k'], y)                # the header's parameters, one by one
    np.testing.assert_array_equal(y, np.arange(4) * 3.0)
    with pytest.raises(KeyError, match=r"argument `A\['m'\]` of `scale` has no key 'k'"):
        fn({'w': A['w'], 'm': {}}, y)
    with pytest.raises(TypeError, match=r"argument `A\['m'\]` of `scale` must be a dict"):
        fn({'w': A['w'], 'm': 3.0}, y)
    with pytest.raises(TypeError, match=r"scale\(\) takes 2 positional arguments \(A, y\) but 1 was"):
        fn(A)


def test_compile_string_refuses_code_printed_for_another_backend(tmp_path):
    # Cuda code built as C failed with gcc's "cuda_runtime.h: No such file"
    @parpy.jit
    def double(x, N):
        parpy.label('N')
        for i in range(N):
            x[i] = x[i] * 2.0

    opts = opts_in(tmp_path)
    opts.parallelize = {'N': parpy.threads(4)}
    x = np.arange(4, dtype=np.float32)
    for printed in ("Cuda", "Metal"):
        opts.backend = getattr(parpy.CompileBackend, printed)
        code = parpy.print_compiled(double, [x, 4], opts)
        opts.backend = parpy.CompileBackend.Cpu
        with pytest.raises(ValueError, match=(
                f"the code was printed for the {printed} backend .* but opts.backend "
                "compiles it for the Cpu backend")):
            parpy.compile_string("double", code, opts)
    code = parpy.print_compiled(double, [x, 4], opts)
    opts.backend = parpy.CompileBackend.Cuda
    with pytest.raises(ValueError, match="printed for the Cpu backend .* set opts.backend = "
                       r"parpy.CompileBackend.Cpu"):
        parpy.compile_string("double", code, opts)


def test_compile_string_refuses_values_other_than_the_specialized_ones(tmp_path):
    # The printed code folds N = 8 into its loops; called with N = 3 it used
    # to run the 8 iterations and write all of y.
    @parpy.jit
    def fill(y, a, N):
        parpy.label('i')
        for i in range(N):
            y[i] = a + i

    opts = opts_in(tmp_path)
    opts.parallelize = {'i': parpy.threads(2)}
    y = np.zeros(8)
    code = parpy.print_compiled(fill, [y, 0.1, 8], opts)
    assert "// parpy-param: N i64 = 8\n" in code
    assert "// parpy-param: a f64 = 0.1\n" in code
    f = parpy.compile_string("fill", code, opts)
    f(y, 0.1, 8)
    np.testing.assert_array_equal(y, 0.1 + np.arange(8))
    z = np.zeros(8)
    with pytest.raises(ValueError, match=r"argument `N` of `fill` is 3, but the code was "
                       r"specialized for N = 8 .*specialize_scalars = False"):
        f(z, 0.1, 3)
    with pytest.raises(ValueError, match=r"`a` of `fill` is 0.2, .* for a = 0.1 "):
        f(z, 0.2, 8)
    assert (z == 0).all()

    opts.specialize_scalars = False
    code = parpy.print_compiled(fill, [y, 0.1, 8], opts)
    assert "// parpy-param: N i64\n" in code
    g = parpy.compile_string("fill", code, opts)
    g(z, 0.5, 3)
    np.testing.assert_array_equal(z, [0.5, 1.5, 2.5, 0, 0, 0, 0, 0])


def test_compile_string_name_must_occur_in_the_code(tmp_path):
    with pytest.raises(ValueError, match="`sum_cols` does not occur in the code, whose entry "
                       "is `sum_rows_entry`"):
        parpy.compile_string("sum_cols", SUM_ROWS_C, opts_in(tmp_path))
    for name in ("sum_rows", "sum_rows_entry"):
        parpy.compile_string(name, SUM_ROWS_C, opts_in(tmp_path))


# ---------------------------------------------------------------- disk cache


def so_and_meta(d):
    names = entries(d)
    sos = [n for n in names if n.endswith(".so")]
    metas = [n for n in names if n.endswith(".meta")]
    assert len(sos) == 1 and len(metas) == 1, names
    assert sos[0][:-3] == metas[0][:-5]
    return pathlib.Path(d) / sos[0], pathlib.Path(d) / metas[0]


def test_entries_are_so_plus_verified_meta(tmp_path):
    parpy.compile_string("sum_rows", SUM_ROWS_C, opts_in(tmp_path))
    so, meta = so_and_meta(tmp_path)
    assert f"sha256={sha(so)}" in meta.read_text()
    assert len(so.name) == 64 + 3
    # no temporary files left behind
    assert all(n.endswith((".so", ".meta")) for n in entries(tmp_path))


def replace_bytes(path, data):
    # Damage the entry the way a crash or a bad disk would leave it, but as a
    # new file: this process still has the old library mapped, and writing
    # into a mapped shared object in place crashes the process (SIGBUS).
    tmp = path.with_name(path.name + ".damaged")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def corrupt_flip(so, meta):
    b = bytearray(so.read_bytes())
    b[len(b) // 2] ^= 0xFF
    replace_bytes(so, bytes(b))


def corrupt_truncate(so, meta):
    replace_bytes(so, so.read_bytes()[:100])


def corrupt_no_meta(so, meta):
    meta.unlink()


def corrupt_garbage_meta(so, meta):
    meta.write_text("sha256=0000\nsize=1\n")


def corrupt_no_so(so, meta):
    so.unlink()


def corrupt_truncate_matching_meta(so, meta):
    # a library the loader refuses, whose metadata says it is whole
    replace_bytes(so, so.read_bytes()[:100])
    meta.write_text(f"sha256={sha(so)}\nsize=100\n")


@pytest.mark.parametrize("corrupt", [
    corrupt_flip, corrupt_truncate, corrupt_no_meta, corrupt_garbage_meta, corrupt_no_so,
    corrupt_truncate_matching_meta,
])
def test_bad_entry_is_rebuilt_in_a_new_process(tmp_path, corrupt):
    parpy.compile_string("sum_rows", SUM_ROWS_C, opts_in(tmp_path))
    so, meta = so_and_meta(tmp_path)
    corrupt(so, meta)
    script = textwrap.dedent(f"""\
        import numpy as np, parpy
        o = parpy.par({{}})
        o.backend = parpy.CompileBackend.Cpu
        o.cache_dir = {str(tmp_path)!r}
        f = parpy.compile_string("sum_rows", {SUM_ROWS_C!r}, o)
        x = np.ones((4, 8), np.float32); y = np.zeros(4, np.float32)
        f(x, y, 4)
        assert (y == 8).all(), y
        print("ok")
        """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
    so2, meta2 = so_and_meta(tmp_path)
    assert so2 == so
    assert f"sha256={sha(so2)}" in meta2.read_text()


UNLOADABLE_C = textwrap.dedent("""\
    // parpy-entry: f
    #include <stdint.h>
    extern int32_t parpy_test_missing_symbol(void);
    int32_t f(void **args) { (void)args; return parpy_test_missing_symbol(); }
    """)


def test_a_library_the_loader_refuses_is_rebuilt_once_then_named_with_the_reason(tmp_path):
    with pytest.raises(RuntimeError) as e:
        parpy.compile_string("f", UNLOADABLE_C, opts_in(tmp_path))
    assert "undefined symbol: parpy_test_missing_symbol" in str(e.value), str(e.value)
    # the entry (it built) is in the cache: the next lookup finds it, the
    # loader refuses it, it is built once more and refused again
    so, _ = so_and_meta(tmp_path)
    with pytest.raises(RuntimeError) as e:
        parpy.compile_string("f", UNLOADABLE_C, opts_in(tmp_path))
    text = str(e.value)
    assert "undefined symbol: parpy_test_missing_symbol" in text, text
    assert "built again" in text and so.name in text, text


INTERRUPTED_BUILD = '''\
import os, signal, sys, threading, time
import numpy as np, parpy

@parpy.jit
def f(x, N):
    for i in range(N):
        x[i] = x[i] + 1.0

o = parpy.CompileOptions()
o.backend = parpy.CompileBackend.Cpu
o.cache_dir = sys.argv[1]
sent = []

def interrupt_once_the_compiler_runs():
    # (the compiler creates the file as it starts: under load the build
    # may start later than any fixed delay)
    while not os.path.exists(sys.argv[2]):
        time.sleep(0.01)
    sent.append(time.time())
    os.kill(os.getpid(), signal.SIGINT)

threading.Thread(target=interrupt_once_the_compiler_runs, daemon=True).start()
try:
    f(np.zeros(3), 3, opts=o)
    print("returned", time.time() - sent[0] if sent else None)
except KeyboardInterrupt:
    print("KeyboardInterrupt", time.time() - sent[0])
'''


def test_ctrl_c_stops_the_c_compiler(tmp_path):
    # a C compiler that takes 15 s: SIGINT once the build runs must stop
    # it and raise KeyboardInterrupt at once (it waited for the compiler)
    started = tmp_path / "started"
    cc = tmp_path / "slowcc.sh"
    cc.write_text(f'#!/bin/sh\ntouch "{started}"\nsleep 15\nexec cc "$@"\n')
    cc.chmod(0o755)
    script = tmp_path / "interrupted_build.py"
    script.write_text(INTERRUPTED_BUILD)
    cache = tmp_path / "cache"
    env = dict(os.environ, CC=str(cc))
    r = subprocess.run([sys.executable, str(script), str(cache), str(started)],
                       capture_output=True, text=True, env=env, timeout=60)
    words = r.stdout.split()
    assert words and words[0] == "KeyboardInterrupt", (r.stdout, r.stderr[-2000:])
    assert float(words[1]) < 3.0, r.stdout
    # the build left nothing behind (its sources, a half-written library)
    left = [p.name for p in cache.iterdir() if p.name != "compilers"] if cache.exists() else []
    assert left == [], left


def test_warm_disk_cache_is_used_by_a_new_process(tmp_path):
    parpy.compile_string("sum_rows", SUM_ROWS_C, opts_in(tmp_path))
    so, _ = so_and_meta(tmp_path)
    before = so.stat().st_mtime_ns
    # a C compiler that always fails: any build in the child would error out
    env = dict(os.environ, CC="false")
    script = textwrap.dedent(f"""\
        import parpy
        o = parpy.par({{}})
        o.backend = parpy.CompileBackend.Cpu
        o.cache_dir = {str(tmp_path)!r}
        parpy.compile_string("sum_rows", {SUM_ROWS_C!r}, o)
        """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    # CC changes the compiler identity, hence the key: the child must build
    # and fail, proving the key depends on the compiler...
    assert r.returncode != 0 and "failed" in r.stderr
    # ...while the same compiler finds the entry without building.
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert so.stat().st_mtime_ns == before


def test_flags_are_part_of_the_key(tmp_path):
    parpy.compile_string("sum_rows", SUM_ROWS_C, opts_in(tmp_path))
    parpy.compile_string("sum_rows", SUM_ROWS_C, opts_in(tmp_path, extra_flags=["-DUNUSED=1"]))
    assert len([n for n in entries(tmp_path) if n.endswith(".so")]) == 2


def test_clear_cache_removes_entries_and_keeps_other_files(tmp_path):
    parpy.compile_string("sum_rows", SUM_ROWS_C, opts_in(tmp_path))
    (tmp_path / "notes.txt").write_text("mine")
    assert len(entries(tmp_path)) == 3
    parpy.clear_cache()
    assert entries(tmp_path) == ["notes.txt"]
    # and everything still works afterwards
    f = parpy.compile_string("sum_rows", SUM_ROWS_C, opts_in(tmp_path))
    x = np.ones((4, 8), np.float32)
    y = np.zeros(4, np.float32)
    f(x, y, 4)
    assert (y == 8).all()


def test_clear_cache_drops_jit_specializations_and_disk_entries(tmp_path):
    @parpy.jit
    def fill(x, v, N):
        for i in range(N):
            x[i] = v

    x = np.zeros(3)
    fill(x, 1.5, 3, opts=opts_in(tmp_path))
    assert fill.cache_size() == 1
    assert [n for n in entries(tmp_path) if n.endswith(".so")]
    parpy.clear_cache()
    assert fill.cache_size() == 0
    assert not [n for n in entries(tmp_path) if n.endswith(".so")]
    fill(x, 2.5, 3, opts=opts_in(tmp_path))
    assert (x == 2.5).all()
