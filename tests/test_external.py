"""`parpy.external` (issue 12, item 7): C / CUDA / Metal functions declared
in Python and called from jit code.

On Cpu the functions come from a header (tests/data/ext/parpy_ext_test.h,
found through `opts.includes`) or a shared library built here; each program
runs against its plain-Python version (the decorated function's body). The
Cuda output is compiled by NVRTC with the user's include directory (the
jit's own path, by a dry run), Metal's syntax-checked by clang.
"""

import os
import pathlib
import re
import shutil
import subprocess

import numpy as np
import pytest

import parpy
from parpy import types
from conftest import backend_opts, cpu_opts, run_both
from test_cuda_codegen import device_part, needs_nvcc, needs_nvrtc
from test_cuda_programs import HAS_GPU, cuda_opts, dry_run
from test_metal_codegen import assert_clang_ok, needs_clang

T = parpy.threads
HERE = pathlib.Path(__file__).parent
INCLUDE = str(HERE / "data" / "ext")
N = types.symbol()
rng = np.random.default_rng(7)


def with_includes(opts):
    opts.includes += [INCLUDE]
    return opts


@parpy.external("clamp_ext", parpy.CompileBackend.Cpu, parpy.Target.Device,
                header="parpy_ext_test.h")
@parpy.external("clamp_ext", parpy.CompileBackend.Cuda, parpy.Target.Device,
                header="<parpy_ext_test.cuh>")
def clamp(x: types.F32, lo: types.F32, hi: types.F32) -> types.F32:
    return min(max(x, lo), hi)


@parpy.external("sum_row_ext", parpy.CompileBackend.Cpu, parpy.Target.Device,
                header="<parpy_ext_test.h>")
@parpy.external("sum_row_ext", parpy.CompileBackend.Cuda, parpy.Target.Device,
                header="<parpy_ext_test.cuh>")
def sum_row(x: types.buffer(types.F64, [N]), n: types.I64) -> types.F64:
    return x[:n].sum()


@parpy.external("prefix_sum_ext", parpy.CompileBackend.Cpu, parpy.Target.Host,
                header='"parpy_ext_test.h"')
def prefix_sum(x: types.buffer(types.F32, [N]), n: types.I64):
    np.cumsum(x[:n], out=x[:n])


@parpy.external("metal::sqrt", parpy.CompileBackend.Metal, parpy.Target.Device)
def metal_sqrt(x: types.F32) -> types.F32:
    return np.sqrt(x)


@parpy.jit
def clamp_rows(x, y, z, w, N, M):
    parpy.label('N')
    for i in range(N):
        y[i] = clamp(x[i], 0.25, 0.75)
    parpy.label('N')
    for i in range(N):
        w[i] = sum_row(z[i], M) + sum_row(z[i, :], 2)


@parpy.jit
def clamp_then_scan(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = clamp(x[i], 0.25, 0.75)
    prefix_sum(y, N)


def clamp_rows_args():
    return [rng.random(8).astype(np.float32), np.zeros(8, np.float32), rng.random((8, 5)),
            np.zeros(8), 8, 5]


def test_device_externals_from_a_header_on_cpu():
    x, y, z, w, n, m = clamp_rows_args()
    run_both(clamp_rows, [x, y, z, w, n, m], with_includes(cpu_opts({'N': T(8)})))
    clamp_rows(x, y, z, w, n, m, opts=with_includes(cpu_opts({'N': T(8)})))
    np.testing.assert_allclose(y, np.clip(x, 0.25, 0.75))
    np.testing.assert_allclose(w, z.sum(axis=1) + z[:, :2].sum(axis=1))


def test_a_host_external_runs_in_host_code():
    x, y = rng.random(16).astype(np.float32), np.zeros(16, np.float32)
    run_both(clamp_then_scan, [x, y, 16], with_includes(cpu_opts({'N': T(16)})))
    clamp_then_scan(x, y, 16, opts=with_includes(cpu_opts({'N': T(16)})))
    np.testing.assert_allclose(y, np.cumsum(np.clip(x, 0.25, 0.75)), rtol=1e-6)


def test_an_external_from_a_shared_library(tmp_path):
    lib_dir = tmp_path / "lib"
    lib_dir.mkdir()
    src = lib_dir / "dot.c"
    src.write_text("#include <stdint.h>\n"
                   "double parpy_test_dot(const double *a, const double *b, int64_t n) {\n"
                   "  double s = 0; for (int64_t i = 0; i < n; i++) s += a[i] * b[i];\n"
                   "  return s;\n}\n")
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(lib_dir / "libparpydot.so"),
                    str(src)], check=True)
    (lib_dir / "parpy_dot.h").write_text(
        "#include <stdint.h>\n"
        "double parpy_test_dot(const double *a, const double *b, int64_t n);\n")

    @parpy.external("parpy_test_dot", parpy.CompileBackend.Cpu, parpy.Target.Device,
                    header="parpy_dot.h")
    def dot(a: types.buffer(types.F64, [N]), b: types.buffer(types.F64, [N]),
            n: types.I64) -> types.F64:
        return float(a[:n] @ b[:n])

    @parpy.jit
    def row_dots(a, b, out, R, C):
        parpy.label('R')
        for i in range(R):
            out[i] = dot(a[i], b[i], C)

    opts = cpu_opts({'R': T(6)})
    opts.includes += [str(lib_dir)]
    opts.libs += ["parpydot"]
    opts.extra_flags += [f"-L{lib_dir}", f"-Wl,-rpath,{lib_dir}"]
    a, b, out = rng.random((6, 9)), rng.random((6, 9)), np.zeros(6)
    row_dots(a, b, out, 6, 9, opts=opts)
    np.testing.assert_allclose(out, (a * b).sum(axis=1))


def compile_error(fn, args, opts=None):
    with pytest.raises(parpy.CompileError) as e:
        fn(*args, opts=with_includes(opts or cpu_opts({'N': T(8)})))
    return str(e.value)


def test_argument_types_are_checked_against_the_declaration():
    @parpy.jit
    def strong_float64(x, y, N):
        for i in range(N):
            y[i] = clamp(x[i], 0.25, 0.75)

    msg = compile_error(strong_float64, [np.zeros(8), np.zeros(8), 8])
    assert "argument `x` of the external `clamp` is float64, but its declaration says " \
           "float32" in msg

    @parpy.jit
    def wrong_elem(z, w, N):
        for i in range(N):
            w[i] = sum_row(z[i], 5)

    msg = compile_error(wrong_elem, [np.zeros((8, 5), np.float32), np.zeros(8), 8])
    assert "argument `x` of the external `sum_row` is float32[5]" in msg
    assert "float64[_]" in msg

    @parpy.jit
    def wrong_rank(z, w):
        w[0] = sum_row(z, 5)

    msg = compile_error(wrong_rank, [np.zeros((8, 5)), np.zeros(8)])
    assert "is float64[8, 5], but its declaration says float64[_]" in msg

    @parpy.jit
    def scalar_for_array(w):
        w[0] = sum_row(w[0], 5)

    assert "is a slice or an element" in compile_error(scalar_for_array, [np.zeros(8)])

    @parpy.jit
    def too_few(w):
        w[0] = sum_row(w)

    assert "takes 2 arguments but 1 were given" in compile_error(too_few, [np.zeros(8)])


def test_fixed_and_symbolic_sizes_are_checked():
    M = types.symbol()

    @parpy.external("pair_ext", parpy.CompileBackend.Cpu, parpy.Target.Device)
    def pair(a: types.buffer(types.F64, [M]), b: types.buffer(types.F64, [M]),
             c: types.buffer(types.F64, [3])) -> types.F64:
        return 0.0

    @parpy.jit
    def bad_symbol(a, b, c):
        c[0] = pair(a, b, c)

    msg = compile_error(bad_symbol, [np.zeros(4), np.zeros(5), np.zeros(3)])
    assert "dimension 0 of argument `b` of the external `pair` is 5, but the same shape " \
           "symbol is 4 in dimension 0 of `a`" in msg
    msg = compile_error(bad_symbol, [np.zeros(4), np.zeros(4), np.zeros(6)])
    assert "argument `c` of the external `pair` is float64[6], but its declaration says " \
           "float64[3]" in msg


def test_a_parallel_loop_around_a_host_external_runs_in_order_in_host_code():
    # ParPy's rule: the call is a statement, so the loop runs its iterations
    # in order in host code
    @parpy.jit
    def scan_rows(x, N):
        parpy.label('N')
        for i in range(N):
            prefix_sum(x[i], 4)

    x = rng.random((8, 4)).astype(np.float32)
    want = np.cumsum(x, axis=1)
    scan_rows(x, 8, opts=with_includes(cpu_opts({'N': T(8)})))
    np.testing.assert_allclose(x, want, rtol=1e-6)


def test_an_external_of_another_backend_is_an_error():
    @parpy.jit
    def uses_metal(x):
        x[0] = metal_sqrt(x[0])

    msg = compile_error(uses_metal, [np.ones(2, np.float32)])
    assert "`metal_sqrt` is an external function for Metal, not for the Cpu backend" in msg


def test_a_missing_header_is_a_compile_error():
    @parpy.external("nope_ext", parpy.CompileBackend.Cpu, parpy.Target.Device,
                    header="parpy_no_such_header.h")
    def nope(x: types.F32) -> types.F32:
        return x

    @parpy.jit
    def calls_nope(x):
        x[0] = nope(x[0])

    with pytest.raises(parpy.CompileError, match="parpy_no_such_header.h"):
        calls_nope(np.ones(2, np.float32), opts=cpu_opts({}))


def test_declaration_errors():
    with pytest.raises(TypeError, match="parameter `x` needs a type annotation"):
        @parpy.external("f", parpy.CompileBackend.Cpu, parpy.Target.Device)
        def f(x):
            return x
    with pytest.raises(RuntimeError, match="Host externals cannot be parallel"):
        parpy.external("f", parpy.CompileBackend.Cpu, parpy.Target.Host,
                       parallelize=parpy.threads(32))
    with pytest.raises(TypeError, match="target must be parpy.Target"):
        parpy.external("f", parpy.CompileBackend.Cpu, "device")
    with pytest.raises(TypeError, match="needs concrete element types"):
        @parpy.external("g", parpy.CompileBackend.Cpu, parpy.Target.Device)
        def g(x: types.buffer(types.type_var(), [4])) -> types.F32:
            return 0.0


def test_a_plain_call_runs_the_python_body():
    assert clamp(2.0, 0.0, 1.0) == 1.0


@needs_nvrtc
def test_cuda_device_code_with_the_users_header_compiles():
    args = clamp_rows_args()
    opts = with_includes(cuda_opts({'N': T(8)}))
    code = parpy.print_compiled(clamp_rows, args, opts)
    assert "#include <parpy_ext_test.cuh>" in code and "sum_row_ext(&z[" in code
    parpy._native._cuda_nvrtc_compile(device_part(code), "clamp_rows", 90, [f"-I{INCLUDE}"])
    # the jit's own path: NVRTC through the disk cache with opts.includes
    dry_run(clamp_rows, args, opts)


def test_cuda_externals_in_host_code_are_errors():
    @parpy.jit
    def host_call(x, y):
        y[0] = clamp(x[0], 0.0, 1.0)

    with pytest.raises(parpy.CompileError, match="runs on the device, but this call is in host"):
        parpy.print_compiled(host_call, [np.ones(2, np.float32), np.ones(2, np.float32)],
                             with_includes(cuda_opts({})))


@parpy.external("scale_add_ext", parpy.CompileBackend.Cpu, parpy.Target.Host,
                header='"parpy_ext_test.h"')
@parpy.external("scale_add_ext", parpy.CompileBackend.Cuda, parpy.Target.Host,
                header="<parpy_ext_test.cuh>")
def scale_add(x: types.F32, k: types.I32) -> types.F32:
    return np.float32(x * k + 0.5)


@parpy.jit
def fill_scaled(x, y, k, N):
    # ParPy's test_call_host_external: a host function's result used by the
    # device code
    z = scale_add(x, k)
    parpy.label('N')
    for i in range(N):
        y[i] = z + i


def test_a_host_external_on_cpu_returns_a_value():
    y = np.zeros(6, np.float32)
    run_both(fill_scaled, [1.25, y, 3, 6], with_includes(cpu_opts({'N': T(6)})))


@needs_nvcc
def test_a_host_external_on_cuda_is_called_by_the_launch_plan():
    # Cuda: nvcc builds the host functions the host code calls into a
    # library the launch plan calls (here with the emulated GPU)
    from parpy import _cuda_emu
    opts = with_includes(cuda_opts({'N': T(6)}))
    code = parpy.print_compiled(fill_scaled, [1.25, np.zeros(6, np.float32), 3, 6], opts)
    host = code[code.index("static int32_t fill_scaled("):]
    assert "float z = scale_add_ext(1.25f, 3);" in host, host
    with _cuda_emu.installed(1):
        y = np.zeros(6, np.float32)
        fill_scaled(1.25, y, 3, 6, opts=opts)
        np.testing.assert_array_equal(y, np.float32(1.25 * 3 + 0.5) + np.arange(6))
        # another value, the same specialization's library (scalars
        # specialized: a new one, built from the cache's source)
        fill_scaled(-2.0, y, 5, 6, opts=opts)
        np.testing.assert_array_equal(y, np.float32(-2.0 * 5 + 0.5) + np.arange(6))


@needs_nvcc
def test_editing_a_host_externals_header_rebuilds_it_on_cuda(tmp_path):
    from parpy import _cuda_emu
    header = tmp_path / "parpy_hk.cuh"

    @parpy.external("parpy_hk", parpy.CompileBackend.Cuda, parpy.Target.Host,
                    header="<parpy_hk.cuh>")
    def hk(a: types.I32) -> types.I32:
        return a

    def run():
        # a new jit function each time: only the disk cache could remember
        @parpy.jit
        def put_hk(y, a, N):
            v = hk(a)
            parpy.label('N')
            for i in range(N):
                y[i] = v

        y = np.zeros(4, np.int32)
        opts = cuda_opts({'N': T(4)})
        opts.includes += [str(tmp_path)]
        with _cuda_emu.installed(1):
            put_hk(y, 5, 4, opts=opts)
        return y.tolist()

    header.write_text("static inline int32_t parpy_hk(int32_t a) { return a + 1; }\n")
    assert run() == [6] * 4
    header.write_text("static inline int32_t parpy_hk(int32_t a) { return a * 3; }\n")
    assert run() == [15] * 4


def test_a_host_external_on_cuda_takes_scalars_only():
    @parpy.jit
    def scan_on_host(x, N):
        prefix_sum(x, N)
        parpy.label('N')
        for i in range(N):
            x[i] += 1.0

    @parpy.external("prefix_sum_ext", parpy.CompileBackend.Cuda, parpy.Target.Host,
                    header="<parpy_ext_test.cuh>")
    def prefix_sum(x: types.buffer(types.F32, [N]), n: types.I64):
        np.cumsum(x[:n], out=x[:n])

    with pytest.raises(parpy.CompileError,
                       match="takes an array, and on the Cuda backend the arrays are in device "
                             "memory"):
        parpy.print_compiled(scan_on_host, [np.zeros(4, np.float32), 4],
                             with_includes(cuda_opts({'N': T(4)})))


@needs_clang
def test_metal_external_parses():
    @parpy.jit
    def roots(x, y, N):
        parpy.label('N')
        for i in range(N):
            y[i] = metal_sqrt(x[i])

    code = parpy.print_compiled(roots, [np.ones(8, np.float32), np.ones(8, np.float32), 8],
                                backend_opts(parpy.CompileBackend.Metal, {'N': T(8)}))
    assert "metal::sqrt(" in code
    assert_clang_ok(code, "roots")


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU (scripts/gpu-check.sh)")
def test_runs_on_cuda():
    run_both(clamp_rows, clamp_rows_args(), with_includes(cuda_opts({'N': T(8)})))


@pytest.mark.parametrize("name,nested", [("parpy_k", False), ("parpy_k2", True)])
def test_editing_a_header_rebuilds(tmp_path, name, nested):
    # nested: the header includes the one edited (only the named header's
    # content keyed the disk cache: a new process loaded the library built
    # from the old included header)
    edited = tmp_path / (name + "_impl.h" if nested else name + ".h")
    if nested:
        (tmp_path / (name + ".h")).write_text(f'#include "{name}_impl.h"\n')

    @parpy.external(name, parpy.CompileBackend.Cpu, parpy.Target.Device, header=name + ".h")
    def k() -> types.F32:
        return 0.0

    def run():
        # a new jit function each time: only the disk cache could remember
        @parpy.jit
        def put_k(x):
            x[0] = k()

        x = np.zeros(1, np.float32)
        opts = cpu_opts({})
        opts.includes += [str(tmp_path)]
        put_k(x, opts=opts)
        return x[0]

    edited.write_text(f"static inline float {name}(void) {{ return 1.0f; }}\n")
    assert run() == 1.0
    edited.write_text(f"static inline float {name}(void) {{ return 2.0f; }}\n")
    assert run() == 2.0


# --------------------------------------------------------------------------
# Cooperative externals: parallelize=parpy.threads(P) declares a GPU function
# that P threads call together (it reads threadIdx.x, shuffles or shares
# values); each iteration of the innermost parallel loop gets a block of P
# threads that all call it, and its stores are made once.


@parpy.external("warp_sum_ext", parpy.CompileBackend.Cuda, parpy.Target.Device,
                header="<parpy_ext_test.cuh>", parallelize=parpy.threads(32))
def warp_sum(x: types.buffer(types.F32, [32])) -> types.F32:
    return x.sum()


@parpy.external("block_max_ext", parpy.CompileBackend.Cuda, parpy.Target.Device,
                header="<parpy_ext_test.cuh>", parallelize=parpy.threads(64))
def block_max(x: types.buffer(types.F64, [N]), n: types.I64) -> types.F64:
    return x[:n].max()


@parpy.jit
def warp_row_sums(x, out, N):
    parpy.label('N')
    for i in range(N):
        out[i] = warp_sum(x[i]) * 2.0 + 1.0


@parpy.jit
def scaled_by_max(x, y, N):
    with parpy.gpu:
        m = block_max(x, N)
        for i in range(N):
            y[i] = x[i] / m


def test_a_cooperative_external_runs_on_a_block_per_iteration():
    x = rng.standard_normal((10, 32)).astype(np.float32)
    opts = with_includes(cuda_opts({'N': T(10)}))
    code = parpy.print_compiled(warp_row_sums, [x, np.zeros(10, np.float32), 10], opts)
    # one block of 32 threads per row; all of them call it, thread 0 stores
    assert "<<<dim3(10, 1, 1), dim3(32, 1, 1)>>>" in code
    call = code.index("= warp_sum_ext(&x[")
    assert code.index("if ((int64_t)threadIdx.x == 0)", call) > call
    # a `with parpy.gpu:` block runs on 64 threads
    v = rng.standard_normal(100)
    code = parpy.print_compiled(scaled_by_max, [v, np.zeros(100), 100], opts)
    assert "<<<dim3(1, 1, 1), dim3(64, 1, 1)>>>" in code


@pytest.mark.skipif(shutil.which("c++") is None, reason="needs a C++ compiler")
def test_cooperative_externals_agree_on_the_emulated_gpu():
    from parpy import _cuda_emu
    x = rng.standard_normal((10, 32)).astype(np.float32)
    v = rng.standard_normal(100) + 3.0
    opts = with_includes(cuda_opts({'N': T(10)}))
    with _cuda_emu.installed(1):
        out = np.zeros(10, np.float32)
        warp_row_sums(x, out, 10, opts=opts)
        np.testing.assert_allclose(out, x.sum(axis=1) * 2.0 + 1.0, rtol=1e-5)
        y = np.zeros(100)
        scaled_by_max(v, y, 100, opts=opts)
        np.testing.assert_allclose(y, v / v.max())


@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU")
@pytest.mark.cuda
def test_cooperative_externals_on_the_gpu():
    x = rng.standard_normal((10, 32)).astype(np.float32)
    out = np.zeros(10, np.float32)
    warp_row_sums(x, out, 10, opts=with_includes(cuda_opts({'N': T(10)})))
    np.testing.assert_allclose(out, x.sum(axis=1) * 2.0 + 1.0, rtol=1e-5)


@parpy.jit
def coop_between_loops(x, out, N):
    parpy.label('N')
    for i in range(N):
        s = warp_sum(x[i])
        parpy.label('M')
        for j in range(32):
            x[i, j] = x[i, j] / s


@parpy.jit
def coop_under_or(x, out, N):
    parpy.label('N')
    for i in range(N):
        out[i] = 1.0 if x[i, 0] > 0.0 else warp_sum(x[i])


@parpy.jit
def coop_with_a_reduction(x, out, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        out[i] = warp_sum(x[i]) + parpy.operators.sum(x[i, :])


@parpy.external("warp_sum_ext", parpy.CompileBackend.Cuda, parpy.Target.Device,
                header="<parpy_ext_test.cuh>", parallelize=parpy.threads(64))
def warp_sum_64(x: types.buffer(types.F32, [32])) -> types.F32:
    return x.sum()


@parpy.jit
def coop_two_sizes(x, out, N):
    with parpy.gpu:
        out[0] = warp_sum(x[0]) + warp_sum_64(x[1])


@pytest.mark.parametrize("fn,spec,words", [
    (coop_between_loops, {'N': T(10), 'M': T(32)},
     "must be called in the body of the innermost parallel loop"),
    (coop_under_or, {'N': T(10)}, "not under `and`, `or` or a conditional expression"),
    (coop_with_a_reduction, {'N': T(10), 'M': T(32)}, "also holds a parallel reduction"),
    (coop_two_sizes, {}, "but `warp_sum_ext` in the same parallel code by 32"),
])
def test_cooperative_externals_misplaced_are_errors(fn, spec, words):
    x = rng.standard_normal((10, 32)).astype(np.float32)
    with pytest.raises(parpy.CompileError, match=re.escape(words)):
        parpy.print_compiled(fn, [x, np.zeros(10, np.float32), 10],
                             with_includes(cuda_opts(spec)))


def test_a_cooperative_external_on_cpu_is_an_error():
    @parpy.external("warp_sum_ext", parpy.CompileBackend.Cpu, parpy.Target.Device,
                    header="parpy_ext_test.h", parallelize=parpy.threads(32))
    def cpu_warp_sum(x: types.buffer(types.F32, [32])) -> types.F32:
        return x.sum()

    @parpy.jit
    def calls(x, out, N):
        parpy.label('N')
        for i in range(N):
            out[i] = cpu_warp_sum(x[i])

    with pytest.raises(parpy.CompileError, match="for the Cpu backend, where one thread"):
        calls(np.ones((2, 32), np.float32), np.zeros(2, np.float32), 2,
              opts=with_includes(cpu_opts({'N': T(2)})))


@pytest.mark.skipif(shutil.which("c++") is None, reason="needs a C++ compiler")
def test_an_undefined_cuda_external_fails_to_compile_with_parpys_words():
    @parpy.external("clamp_ext_undefined", parpy.CompileBackend.Cuda, parpy.Target.Device,
                    header="<parpy_ext_test.cuh>")
    def undefined(x: types.F32) -> types.F32:
        return x

    @parpy.jit
    def calls_undefined(x, N):
        parpy.label('N')
        for i in range(N):
            x[i] = undefined(x[i])

    from parpy import _cuda_emu
    with _cuda_emu.installed(0):
        with pytest.raises(RuntimeError, match="Compilation of generated CUDA code failed: "
                                               "the CUDA emulator could not compile"):
            calls_undefined(np.ones(4, np.float32), 4, opts=with_includes(cuda_opts({'N': T(4)})))


@parpy.external("metal::simd_sum", parpy.CompileBackend.Metal, parpy.Target.Device,
                parallelize=parpy.threads(32))
def simd_sum(x: types.F32) -> types.F32:
    return x


@parpy.jit
def simd_group_sums(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = simd_sum(x[i])


@needs_clang
def test_a_cooperative_external_on_metal_parses():
    o = parpy.par({'N': T(8)})
    o.backend = parpy.CompileBackend.Metal
    code = parpy.print_compiled(simd_group_sums, [np.ones(8, np.float32),
                                                  np.zeros(8, np.float32), 8], o)
    assert "float ext = metal::simd_sum(x[i]);" in code
    assert "if ((int64_t)parpy_thread.x == 0)" in code
    assert_clang_ok(code, "simd_group_sums")
