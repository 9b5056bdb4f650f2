"""CUDA code generation checked on machines without a GPU.

Every golden CUDA file (crates/parpy-core/tests/out/cuda/*.cu) and the file
`print_compiled` returns with the Cuda backend for a set of the execution-test
programs (tests/test_programs.py) is compiled twice:

(a) its device part (everything before the host function: includes, prelude,
    helpers, kernels; the same text as `CompileOutput.device_code`) with
    NVRTC for sm_90, loaded with ctypes from the `nvidia-cuda-nvrtc` wheel;
(b) the whole file with `nvcc -c` from the `nvidia-cuda-nvcc` wheel.

Tests that need a wheel are skipped, saying which, when it is not installed
(`pip install nvidia-cuda-nvrtc nvidia-cuda-nvcc nvidia-cuda-cccl
nvidia-cuda-runtime`).
"""

import atexit
import ctypes
import math
import os
import pathlib
import shutil
import subprocess
import tempfile

import numpy as np
import pytest

import parpy
import test_int_types as ti
import test_natural as tn
import test_programs as tp
from conftest import backend_opts, f32, f64, i64

ROOT = pathlib.Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "crates" / "parpy-core" / "tests" / "out" / "cuda"
ARCH = "sm_90"
# the host part starts with the host function (static) or, before it, the
# callback pointer (extern "C")
HOST_MARKS = ('\nstatic int32_t ', '\nextern "C" int32_t ')


def _nvidia_dirs():
    """The `nvidia/cu13` (or cu12) folders of the installed wheels."""
    try:
        import nvidia  # namespace package of the NVIDIA wheels
    except ImportError:
        return []
    dirs = []
    for base in getattr(nvidia, "__path__", []):
        for sub in ("cu13", "cu12"):
            d = pathlib.Path(base) / sub
            if d.is_dir():
                dirs.append(d)
    return dirs


def _find(rel_paths):
    for d in _nvidia_dirs():
        for rel in rel_paths:
            p = d / rel
            if p.exists():
                return p
    return None


NVRTC_PATH = _find(["lib/libnvrtc.so.13", "lib/libnvrtc.so.12"])
NVCC_PATH = _find(["bin/nvcc"])

needs_nvrtc = pytest.mark.skipif(
    NVRTC_PATH is None,
    reason="the nvidia-cuda-nvrtc wheel is not installed (pip install nvidia-cuda-nvrtc)")
needs_nvcc = pytest.mark.skipif(
    NVCC_PATH is None,
    reason="the nvidia-cuda-nvcc wheel is not installed "
           "(pip install nvidia-cuda-nvcc nvidia-cuda-cccl nvidia-cuda-runtime)")


class Nvrtc:
    """The few NVRTC entry points the check needs, through ctypes."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(str(path))
        self.lib.nvrtcGetErrorString.restype = ctypes.c_char_p

    def _err(self, code):
        return self.lib.nvrtcGetErrorString(code).decode()

    def headers(self):
        """Include directories with NVRTC's bundled headers (NVRTC 13.3 and
        later), extracted once: what the runtime passes for code that
        includes `cooperative_groups.h` (thread block clusters) or
        `cuda_fp16.h` (float16)."""
        if getattr(self, "_headers", None) is None:
            d = tempfile.mkdtemp(prefix="parpy-nvrtc-headers-")
            atexit.register(shutil.rmtree, d, True)
            log = ctypes.c_char_p()
            r = self.lib.nvrtcInstallBundledHeaders(d.encode(), 0, ctypes.byref(log))
            assert r == 0, f"nvrtcInstallBundledHeaders: {self._err(r)}"
            self._headers = [d, os.path.join(d, "cccl")]
        return self._headers

    def compile(self, source, name="parpy.cu"):
        """Returns (ok, log, cubin_size)."""
        lib = self.lib
        prog = ctypes.c_void_p()
        r = lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(),
                                   0, None, None)
        assert r == 0, f"nvrtcCreateProgram: {self._err(r)}"
        try:
            opts = [f"--gpu-architecture={ARCH}".encode(), b"--std=c++17"]
            # (as the runtime's `nvrtc::needs_headers`)
            if any(f"#include <{h}>" in source for h in ("cooperative_groups.h", "cuda_fp16.h")):
                opts += [f"-I{d}".encode() for d in self.headers()]
            arr = (ctypes.c_char_p * len(opts))(*opts)
            rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
            size = ctypes.c_size_t()
            lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
            buf = ctypes.create_string_buffer(size.value + 1)
            lib.nvrtcGetProgramLog(prog, buf)
            log = buf.value.decode(errors="replace")
            cubin = ctypes.c_size_t(0)
            if rc == 0:
                lib.nvrtcGetCUBINSize(prog, ctypes.byref(cubin))
            return rc == 0, f"{self._err(rc)}\n{log}", cubin.value
        finally:
            lib.nvrtcDestroyProgram(ctypes.byref(prog))


_NVRTC = None


def nvrtc():
    global _NVRTC
    if _NVRTC is None:
        _NVRTC = Nvrtc(NVRTC_PATH)
    return _NVRTC


def device_part(code):
    """The file up to the host function: what NVRTC compiles."""
    found = [i for i in (code.find(m) for m in HOST_MARKS) if i > 0]
    assert found, "no host function in the CUDA file"
    i = min(found)
    return code[:i + 1]


def check_nvrtc(code, name):
    dev = device_part(code)
    assert "<<<" not in dev and "cudaMalloc" not in dev
    ok, log, cubin = nvrtc().compile(dev, name)
    assert ok, f"NVRTC rejected the device code of {name}:\n{log}\n--- code\n{dev}"
    assert cubin > 0
    # Warnings are defects of the generator too.
    assert "warning" not in log, f"NVRTC warnings for {name}:\n{log}"


def check_nvcc(code, name):
    with tempfile.TemporaryDirectory() as d:
        src = pathlib.Path(d) / f"{name}.cu"
        src.write_text(code)
        r = subprocess.run(
            [str(NVCC_PATH), "-c", f"-arch={ARCH}", "-Werror", "all-warnings",
             str(src), "-o", str(pathlib.Path(d) / f"{name}.o")],
            capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, (
            f"nvcc -c failed for {name}:\n{r.stdout}\n{r.stderr}\n--- code\n{code}")


# --------------------------------------------------------------------------
# golden files

GOLDEN_FILES = sorted(GOLDEN.glob("*.cu"))


def test_there_are_golden_cuda_files():
    names = {p.stem for p in GOLDEN_FILES}
    assert {"sum_rows", "softmax", "time_loop", "gpu_scalar"} <= names, names


@needs_nvrtc
@pytest.mark.parametrize("path", GOLDEN_FILES, ids=lambda p: p.stem)
def test_golden_nvrtc(path):
    check_nvrtc(path.read_text(), path.stem)


@needs_nvcc
@pytest.mark.parametrize("path", GOLDEN_FILES, ids=lambda p: p.stem)
def test_golden_nvcc(path):
    check_nvcc(path.read_text(), path.stem)


# --------------------------------------------------------------------------
# the checkers themselves must be able to fail

BROKEN = """extern "C" __global__ void broken(float *x) {
  x[threadIdx.x] = undefined_function(x[0]);
}
static int32_t host(void) { return 0; }
"""


@needs_nvrtc
def test_nvrtc_rejects_a_broken_kernel():
    ok, log, _ = nvrtc().compile(device_part(BROKEN), "broken.cu")
    assert not ok
    assert "undefined_function" in log


@needs_nvcc
def test_nvcc_rejects_a_broken_kernel():
    with pytest.raises(AssertionError, match="nvcc -c failed"):
        check_nvcc(BROKEN, "broken")


# --------------------------------------------------------------------------
# print_compiled for execution-test programs


def cuda_opts(spec=None, **fields):
    return backend_opts(parpy.CompileBackend.Cuda, spec, **fields)


T = parpy.threads

PROGRAMS = {
    "sum_rows": (tp.sum_rows, [f32(100, 1024), f32(100), 100], {'outer': T(100)}),
    "sum_rows_strided": (tp.sum_rows, [f64(7, 33), f64(7), 7], {'outer': T(4)}),
    "sum_rows_par": (tp.sum_rows_par, [f32(10, 1000), f32(10), 10],
                     {'N': T(10), 'M': T(256)}),
    "sum_rows_par_tpb": (tp.sum_rows_par, [f32(10, 1000), f32(10), 10],
                         {'N': T(10), 'M': T(2048).tpb(512)}),
    "normalize_rows": (tp.normalize_rows, [f64(64, 257), 64], {'N': T(64), 'M': T(32)}),
    "softmax_seq": (tp.softmax_seq, [f64(13, 100), f64(13, 100), 13, 100], {'N': T(13)}),
    "softmax_par": (tp.softmax_par, [f32(32, 1024), f32(32, 1024), 32],
                    {'N': T(32), 'M': T(128)}),
    "matvec_loop": (tp.matvec_loop, [f64(50, 70), f64(70), f64(50), 50, 70], {'N': T(50)}),
    "matvec_sum": (tp.matvec_sum, [f32(40, 300), f32(300), f32(40), 40],
                   {'N': T(40), 'M': T(64)}),
    "axpy": (tp.axpy, [2.5, f64(1000), f64(1000), 1000], {'N': T(1000)}),
    "axpy_blocks": (tp.axpy, [2.5, f64(5000), f64(5000), 5000], {'N': T(5000)}),
    "add_2d": (tp.add_2d, [f32(64, 300), f32(64, 300), f32(64, 300)], {'ij': T(32)}),
    "row_prod_par_int": (tp.row_prod_par, [i64(6, 57), i64(6), 6], {'N': T(6), 'M': T(16)}),
    "row_max_par": (tp.row_max_par, [f32(6, 57), f32(6), 6], {'N': T(6), 'M': T(16)}),
    "row_min_par": (tp.row_min_par, [f64(6, 57), f64(6), 6], {'N': T(6), 'M': T(16)}),
    "manual_sum": (tp.manual_sum, [f64(1000), f64(1), 1000],
                   {'N': T(64).par_reduction()}),
    "manual_sum_two_stage": (tp.manual_sum, [f64(100000), f64(1), 100000],
                             {'N': T(8192).par_reduction()}),
    "normalize_rows_two_stage": (tp.normalize_rows, [f64(8, 5000), 8],
                                 {'N': T(8), 'M': T(4096)}),
    # Benchmark G5's shape with narrower rows: 64 blocks of partials per row.
    "row_sum_wide": (tp.sum_rows_par, [f32(10, 100000), f32(10), 10],
                     {'N': T(10), 'M': T(1 << 16)}),
    "use_helpers": (tp.use_helpers, [f64(64), f64(64), i64(64), 64], {'N': T(8)}),
    "weak_literals": (tp.weak_literals, [f32(256), f32(256), 256], {'N': T(8)}),
    "reverse_copy": (tp.reverse_copy, [i64(101), i64(101), 101], {'N': T(8)}),
    "every_third_backwards": (tp.every_third_backwards, [i64(101), i64(101), 101],
                              {'N': T(8)}),
    "last_minus_first": (tp.last_minus_first, [f64(5, 6), f64(5), 5], {'N': T(5)}),
    "powers": (tp.powers, [f64(20), f64(20), i64(20), 20], {'N': T(8)}),
    "bitwise": (tp.bitwise, [i64(20), i64(20), i64(20), 20], {'N': T(8)}),
    "builtins_mix": (tp.builtins_mix, [f64(20), i64(20), f64(20), i64(20), 20],
                     {'N': T(8)}),
    "bool_ops": (tp.bool_ops, [f64(20), np.zeros(20, bool), np.zeros(20, bool),
                               np.zeros(20, bool), 20], {'N': T(8)}),
    "chained": (tp.chained, [f64(20), i64(20), 0.5, 2.0, 20], {'N': T(4)}),
    "map_2d": (tp.map_2d, [f64(20, 30), f64(20, 30), 20, 30], {'i': T(20), 'j': T(8)}),
    "collatz": (tp.collatz, [i64(50), i64(50), 50], {'N': T(7)}),
    "clamp_sign": (tp.clamp_sign, [f64(100), f64(100), 100], {'N': T(16)}),
    "divmod_arrays": (tp.divmod_arrays, [i64(8), i64(8), i64(8), i64(8), 8], {'N': T(4)}),
    "jacobi_1d": (tp.jacobi_1d, [f64(100), f64(100), 100, 5], {'N': T(8)}),
    "cond_expr": (tp.cond_expr, [f64(333), f64(333), 333], {'N': T(8)}),
    "math_fns": (tp.math_fns, [f32(400), f32(400), 400], {'N': T(8)}),
    "prefix_then_scale": (tp.prefix_then_scale, [f64(40), f64(40), 40], {'N': T(8)}),
    # 8/16-bit and unsigned integers: wrapping casts, Python // and %, and
    # warp reductions over them
    "int8_div_mod_bits": (ti.div_mod_bits, [np.zeros(300, np.int8) for _ in range(5)] + [300],
                          {'N': T(64)}),
    "int16_negate": (ti.negate_invert, [np.zeros(100, np.int16) for _ in range(3)] + [100], {'N': T(32)}),
    "uint16_row_stats": (ti.row_stats, [np.zeros((13, 300), np.uint16), np.zeros(13, np.uint64),
                                        np.zeros(13, np.uint16), np.zeros(13, np.uint16), 13],
                         {'N': T(13), 'M': T(64)}),
    "uint8_affine": (ti.affine, [np.zeros(64, np.uint8) for _ in range(2)] + [64], {'N': T(64)}),
    # natural Python (issue 13): tuple assignment, np/math functions, methods
    "mandelbrot": (tn.mandelbrot, [np.zeros((24, 36), np.int32), -2.0, -1.2, 0.08, 0.1, 50],
                   {'i': T(24)}),
    "black_scholes": (tn.black_scholes, [f32(64), f32(64), f32(64), 0.02, 0.3, f32(64), f32(64),
                                         64], {'i': T(64)}),
    "more_math_f32": (tn.more_math, [f32(12), f32(12, 9), np.zeros((12, 3), bool), 12],
                      {'N': T(12)}),
    "more_math_f64": (tn.more_math, [f64(12), f64(12, 9), np.zeros((12, 3), bool), 12],
                      {'N': T(12)}),
    "logsumexp": (tn.logsumexp, [f32(6, 300), f32(6), 6], {'i': T(6)}),
    "dot_with_locals": (tn.dot_with_locals, [f64(1000), f64(1000), f64(1), 1000],
                        {'N': T(256).par_reduction()}),
    "matmul_natural": (tn.matmul_natural, [f32(64, 32), f32(32, 48), f32(64, 48)],
                       {'i': T(64)}),
}


def printed(name, **fields):
    fn, args, spec = PROGRAMS[name]
    return parpy.print_compiled(fn, args, cuda_opts(spec, **fields))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_print_compiled_is_deterministic_and_shaped(name):
    code = printed(name)
    assert code == printed(name)
    assert "__global__" in code
    assert "<<<" in code
    assert "// parpy-entry: parpy_entry_" in code
    assert "cudaGetLastError()" in code


@needs_nvrtc
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_print_compiled_nvrtc(name):
    check_nvrtc(printed(name), name)


@needs_nvcc
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_print_compiled_nvcc(name):
    check_nvcc(printed(name), name)


@needs_nvrtc
def test_runtime_scalars_nvrtc():
    code = printed("axpy", specialize_scalars=False)
    assert "double a" in code
    check_nvrtc(code, "axpy_runtime_scalars")


def test_grid_mapping_in_printed_code():
    # One parallel level: the rows on threadIdx.x of one block.
    code = printed("sum_rows")
    assert "__launch_bounds__(100)" in code
    assert "<<<dim3(1, 1, 1), dim3(100, 1, 1)>>>" in code
    # 5000 threads spill into 5 blocks of tpb = 1024 threads (strided).
    code = printed("axpy_blocks")
    assert "<<<dim3(5, 1, 1), dim3(1024, 1, 1)>>>" in code
    assert "i = (int64_t)threadIdx.x + (int64_t)blockIdx.x * 1024; i < 5000; i += 5120" in code
    # Two levels: rows on blocks, the reduction tree inside each block.
    code = printed("softmax_par")
    assert "<<<dim3(32, 1, 1), dim3(128, 1, 1)>>>" in code
    assert "__shfl_xor_sync" in code and "__shared__" in code and "__syncthreads();" in code


def test_host_store_is_an_error_on_cuda():
    a = np.zeros(12)
    with pytest.raises(parpy.CompileError) as e:
        parpy.print_compiled(tp.slice_bounds, [a, a.copy(), a.copy()], cuda_opts())
    msg = str(e.value)
    # no parallel code at all: one error saying so, at the first statement
    assert msg.startswith("error: The function `slice_bounds` does not contain any "
                          "parallelism, so on the Cuda backend all of it runs on the host")
    assert msg.count("error:") == 1
    assert "y[2:10] = a[0:8] * b[3:11]" in msg
    assert "or use `with parpy.gpu:`" in msg
    # with parallel code elsewhere, each host statement that touches an
    # array is an error of its own
    with pytest.raises(parpy.CompileError) as e:
        parpy.print_compiled(host_store_after_a_loop, [a, 12], cuda_opts({'N': parpy.threads(12)}))
    msg = str(e.value)
    assert "assigning to device data from host code" in msg
    assert "use `with parpy.gpu:` or a reduction operator" in msg


@parpy.jit
def host_store_after_a_loop(a, N):
    parpy.label('N')
    for i in range(N):
        a[i] = 1.0
    a[0] = 2.0


@parpy.jit
def scaled_total(x, y, N):
    parpy.label('a')
    s = parpy.operators.sum(x[:]) * 2.0
    parpy.label('b')
    for i in range(N):
        y[i] = x[i] / s


def test_device_values_reach_the_host_by_copies():
    # The reduction runs in a kernel; the host copies its result back to
    # compute `s`, then passes `s` to the second kernel by value.
    x = np.zeros(4096, np.float32)
    code = parpy.print_compiled(scaled_total, [x, x.copy(), 4096],
                                cuda_opts({'a': T(256), 'b': T(4096)}))
    assert "cudaMalloc((void **)&acc, 1 * sizeof(float))" in code
    assert "cudaMemcpyHostToDevice" in code  # the reduction's start value
    assert "cudaMemcpyDeviceToHost" in code  # its result
    assert code.count("cudaFree(acc);") >= 3  # on every exit
    if NVRTC_PATH is not None:
        check_nvrtc(code, "scaled_total")
    if NVCC_PATH is not None:
        check_nvcc(code, "scaled_total")


def test_wide_reductions_use_two_kernels():
    # 8192 threads: 8 blocks of 1024 write partials, a second kernel reduces them.
    code = printed("manual_sum_two_stage")
    assert "manual_sum_N_partial<<<dim3(8, 1, 1), dim3(1024, 1, 1)>>>" in code
    assert "manual_sum_N_final<<<dim3(1, 1, 1), dim3(32, 1, 1)>>>" in code
    assert "cudaMalloc((void **)&parts, 8 * sizeof(double))" in code
    # Rows of 5000 with 4096 threads: 4 blocks per row (1250 iterations each),
    # then one block per row reduces and divides.
    code = printed("normalize_rows_two_stage")
    assert "<<<dim3(8, 4, 1), dim3(1024, 1, 1)>>>" in code
    assert "normalize_rows_N_final<<<dim3(8, 1, 1), dim3(1024, 1, 1)>>>" in code


def test_wide_row_reductions_under_an_outer_level_span_blocks():
    # G5: 65536 threads per row are 64 blocks of 1024, each summing a chunk
    # of ceil(100000 / 64) = 1563 elements; grid (rows, blocks). Then one
    # block of 64 threads per row reduces its 64 partials.
    code = printed("row_sum_wide")
    assert "sum_rows_par_N_partial<<<dim3(10, 64, 1), dim3(1024, 1, 1)>>>" in code
    assert "sum_rows_par_N_final<<<dim3(10, 1, 1), dim3(64, 1, 1)>>>" in code
    assert "cudaMalloc((void **)&parts, 640 * sizeof(float))" in code
    assert "parts[i * 64 + c] = blk;" in code
    assert "partial = partial + parts[i * 64 + b];" in code
    assert "j < parpy_min_i64(100000, c * 1563 + 1563)" in code
    assert "y[i] = acc;" in code


def test_a_wide_reduction_that_cannot_be_split_warns():
    # With a run-time N the partials cannot be sized: one block per row, and
    # a ParpyWarning says so (pointing at the reduction).
    fn, args, spec = PROGRAMS["row_sum_wide"]
    with pytest.warns(parpy.ParpyWarning, match="runs in one block of 1024 threads"):
        code = parpy.print_compiled(fn, args, cuda_opts(spec, specialize_scalars=False))
    assert "_partial" not in code
    # The splittable program compiles without warnings.
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", parpy.ParpyWarning)
        printed("row_sum_wide")


def test_stores_before_a_wide_reduction_go_to_the_final_kernel():
    # ParPy's `y[i] = 0.0` before `y[i] += x[i, j]` over 2048 threads: the
    # partials kernel computes without the stores, the final kernel makes
    # them; no warning.
    spec = {'N': parpy.threads(6), 'M': parpy.threads(2048).par_reduction()}
    args = [f64(6, 4001), f64(12), 0.5, 6, 4001]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", parpy.ParpyWarning)
        code = parpy.print_compiled(tp.odd_column_sums, args, cuda_opts(spec))
    partial = code[code.index("odd_column_sums_N_partial("):code.index("odd_column_sums_N_final(")]
    final = code[code.index("odd_column_sums_N_final("):]
    assert "<<<dim3(6, 2, 1), dim3(1024, 1, 1)>>>" in code
    assert "y[" not in partial
    assert "y[i] = 0.5;" in final and "y[6 + i] = 1.0;" in final
    # a store into what the reduction reads: one block per row, with a warning
    with pytest.warns(parpy.ParpyWarning, match="also reads or writes"):
        code = parpy.print_compiled(tp.sums_after_a_first_column_store,
                                    [f64(6, 4001), f64(6), 6, 4001], cuda_opts(spec))
    assert "_partial" not in code


@parpy.jit
def device_flag(x, y, N):
    with parpy.gpu:
        m = x[0]
    if m > 0.0:
        parpy.label('N')
        for i in range(N):
            y[i] = x[i] * m


def test_host_condition_on_a_device_value():
    # `m` is set on the device; the host copies it back to decide, and the
    # kernel reads it from the device temporary.
    x = np.zeros(64)
    code = parpy.print_compiled(device_flag, [x, x.copy(), 64], cuda_opts({'N': T(64)}))
    assert "device_flag_gpu<<<dim3(1, 1, 1), dim3(1, 1, 1)>>>" in code
    assert "cudaMemcpy(&m_value, m + 0, sizeof(double), cudaMemcpyDeviceToHost)" in code
    assert "if (m_value > 0.0) {" in code
    if NVRTC_PATH is not None:
        check_nvrtc(code, "device_flag")
    if NVCC_PATH is not None:
        check_nvcc(code, "device_flag")


# --------------------------------------------------------------------------
# gpu_register_rows: a thread's share of a row stays in registers across the
# loops that walk it


@parpy.jit
def row_then_peek(x, y, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        s = parpy.operators.sum(x[i, :])
        parpy.label('M')
        y[i, :] = x[i, :] / s
        y[i, 0] = x[i, 0]


@parpy.jit
def shifted_rows(x, y, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        s = parpy.operators.sum(x[i, :])
        parpy.label('M')
        y[i, :] = x[i + 1, :] / s


def test_softmax_rows_are_read_once_and_written_once():
    # 1024 columns over 128 threads: 8 elements per thread, no bound check
    code = printed("softmax_par")
    assert "float x_reg[8];" in code and "float y_reg[8];" in code
    assert code.count("= x[i * 1024 + ") == 1      # the load before the walks
    assert code.count("y[i * 1024 + ") == 1        # the store after them
    assert code.count("#pragma unroll") == 6
    assert "j < 1024" not in code


def test_a_ragged_share_checks_the_bound_and_in_place_rows_load_first():
    # 257 columns over 32 threads: 9 per thread, the last one partial; the
    # row is read (sum) before it is written, so it is loaded first
    code = printed("normalize_rows")
    assert "double x_reg[9];" in code
    assert code.count("if (j") >= 4
    assert code.count("x[i * 257 + ") == 2         # one load, one store


def test_rows_used_elsewhere_or_at_other_rows_are_not_cached():
    x, y = f32(16, 256), f32(16, 256)
    opts = cuda_opts({'N': T(16), 'M': T(64)})
    code = parpy.print_compiled(row_then_peek, [x, y, 16], opts)
    assert "x_reg" not in code          # x[i, 0] is read outside the walks
    assert "y_reg" not in code          # y[i, 0] is written outside them
    code = parpy.print_compiled(shifted_rows, [f32(17, 256), y, 16], opts)
    assert "x_reg" not in code          # x[i, :] and x[i + 1, :] differ


@parpy.jit
def tanh_of_int8(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = parpy.math.tanh(x[i])


@needs_nvrtc
def test_float16_values_without_float16_variables_include_cuda_fp16():
    # math on int8 computes in float16 (as NumPy): the code uses __half with
    # no float16 array or local, and needs cuda_fp16.h all the same (the
    # fuzzer's seeds 20363, 21194, ...: NVRTC said __half is undefined)
    opts = backend_opts(parpy.CompileBackend.Cuda, {'i': parpy.threads(32)})
    args = [np.zeros(8, np.int8), np.zeros(8), 8]
    code = parpy.print_compiled(tanh_of_int8, args, opts)
    assert "__half" in code and "#include <cuda_fp16.h>" in code
    # NVRTC with the headers the runtime gives it, to the cubin
    names, launches, size = parpy._native._cuda_dry_run(tanh_of_int8, args, opts, 90)
    assert size > 0


def test_parallel_reduction_beside_a_deeper_nest_runs_sequentially_with_a_warning():
    import test_programs as tp
    opts = cuda_opts(tp.SIBLING_SPEC)
    with pytest.warns(parpy.ParpyWarning, match="runs sequentially on the GPU"):
        code = parpy.print_compiled(tp.sibling_nest_reduction, tp.sibling_args(), opts)
    assert "for (int64_t r = 0; r < 8; r += 1)" in code, code
    if NVRTC_PATH is not None:
        check_nvrtc(code, "sibling_nest_reduction")


def test_parallel_reduction_around_parallel_loops_runs_sequentially_with_a_warning():
    # issue 12 item 5: was "not supported on the GPU yet". Inside a parallel
    # loop the reduction runs in order, its inner reductions stay tree
    # reductions
    import test_programs as tp
    with pytest.warns(parpy.ParpyWarning, match="`r` runs sequentially on the GPU: its body holds parallel loops"):
        code = parpy.print_compiled(tp.nested_reduction, tp.nested_args(), cuda_opts(tp.NESTED_SPEC))
    assert "for (int64_t r = 0; r < 8; r += 1)" in code, code
    assert "parpy_warp_sum_f64" in code
    if NVRTC_PATH is not None:
        check_nvrtc(code, "nested_reduction")


def test_top_level_parallel_reduction_around_parallel_loops_keeps_the_outer_one():
    # at the top level the reduction is the kernel's tree reduction and the
    # loops inside run in order (one kernel, not a launch per iteration)
    import test_programs as tp
    with pytest.warns(parpy.ParpyWarning, match="loops inside the parallel reduction `r` run sequentially"):
        code = parpy.print_compiled(tp.top_level_nested_max, tp.top_nested_args(),
                                    cuda_opts(tp.NESTED_SPEC))
    assert "top_level_nested_max_r<<<dim3(1, 1, 1), dim3(32, 1, 1)>>>" in code, code
    assert "parpy_warp_max_f64" in code and "j < 100; j += 1)" in code, code
    if NVRTC_PATH is not None:
        check_nvrtc(code, "top_level_nested_max")


@parpy.jit
def max_3d(x, out):
    parpy.label('outer')
    out[0] = parpy.reduce.max(x[:, :, :])


@parpy.jit
def sum_of_a_corner(x, out):
    parpy.label('outer')
    out[0] = parpy.reduce.sum(x[1:, :, 2:])


@pytest.mark.parametrize("backend", ["Cpu", "Cuda", "Metal"])
def test_a_flattened_whole_array_reduction_reads_by_its_counter(backend):
    # the loop over all elements of x[:, :, :] indexes x with j // 35,
    # (j // 7) % 5 and j % 7, whose row-major offset is j itself: no
    # division per element
    x = np.random.default_rng(3).standard_normal((6, 5, 7)).astype(np.float32)
    opts = backend_opts(getattr(parpy.CompileBackend, backend), {'outer': parpy.threads(8)})
    code = parpy.print_compiled(max_3d, [x, np.zeros(1, np.float32)], opts)
    reads = [line.strip() for line in code.splitlines() if "x[" in line]
    assert reads and all("x[j]" in r for r in reads), reads
    # a slice that does not start at 0 keeps its offsets
    code = parpy.print_compiled(sum_of_a_corner, [x, np.zeros(1, np.float32)], opts)
    assert "x[j]" not in code
    if backend == "Cpu":
        for fn, want in ((max_3d, x.max()), (sum_of_a_corner, x[1:, :, 2:].sum())):
            out = np.zeros(1, np.float32)
            fn(x, out, opts=opts)
            np.testing.assert_allclose(out[0], want, rtol=1e-5)


@parpy.jit
def offset_rows(x, y, N, M):
    parpy.label('i')
    for i in range(N):
        parpy.label('j')
        for j in range(M):
            y[i, j] = x[i, j] + i


def test_a_level_gets_no_more_workers_than_its_known_iterations():
    # threads(10**6) over 3 x 5 iterations launched (1000000, 977) blocks of
    # 1024 threads: each level gets its trip count, the same iterations
    x, y = np.ones((3, 5)), np.zeros((3, 5))
    spec = {'i': parpy.threads(10**6), 'j': parpy.threads(10**6)}
    code = parpy.print_compiled(offset_rows, [x, y, 3, 5], cuda_opts(spec))
    assert "<<<dim3(3, 1, 1), dim3(5, 1, 1)>>>" in code, code
    # a reduction over 100 elements: one block of whole warps, no partials
    x = np.ones(100)
    spec = {'N': parpy.threads(10**5).par_reduction()}
    code = parpy.print_compiled(tp.manual_sum, [x, np.zeros(1), 100], cuda_opts(spec))
    assert "<<<dim3(1, 1, 1), dim3(128, 1, 1)>>>" in code, code
    assert "_N_partial" not in code and "_N_final" not in code
    # fewer threads than iterations, or a count known only at run time: as asked
    spec = {'i': parpy.threads(2), 'j': parpy.threads(4096)}
    code = parpy.print_compiled(offset_rows, [x.reshape(4, 25), np.zeros((4, 25)), 4, 25],
                                cuda_opts(spec, specialize_scalars=False))
    assert "<<<dim3(2, 4, 1), dim3(1024, 1, 1)>>>" in code, code


@parpy.jit
def f16_to_ints(x, y, z, w, N):
    parpy.label('i')
    for i in range(N):
        y[i] = int(x[i])
        z[i] = round(x[i])
        w[i] = math.floor(x[i])


@parpy.jit
def python_max_of_f16_rows(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = max(x[i, :])


@needs_nvrtc
def test_nan_and_infinity_tests_of_float16_values_compile():
    # `int()` / `round()` / `math.floor` of a float16 check for NaN and
    # infinities first, and Python's `max` of a float16 row skips NaN: the
    # tests were `isnan(value)` of a raw `__half`, which NVRTC calls
    # ambiguous (no `isnan(__half)`); they read it as a float now
    opts = cuda_opts({'i': parpy.threads(32)})
    x16 = np.zeros(10, np.float16)
    code = parpy.print_compiled(f16_to_ints, [x16] + [np.zeros(10, np.int64)] * 3 + [10], opts)
    assert "isnan((float)" in code and "isinf((float)" in code, code
    check_nvrtc(code, "f16_to_ints")
    code = parpy.print_compiled(python_max_of_f16_rows,
                                [np.zeros((10, 5), np.float16), x16, 10], opts)
    assert "isnan((float)" in code, code
    check_nvrtc(code, "python_max_of_f16_rows")


@parpy.jit
def unsigned_pow_abs(a, b, o, N):
    parpy.label('i')
    for i in range(N):
        o[i] = a[i] ** b[i] + abs(a[i])


@needs_nvrtc
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_unsigned_power_and_abs_compile_without_warnings(dtype):
    # the helpers tested `e < 0` / `a < 0` of unsigned values: NVRTC warns
    # "pointless comparison of unsigned integer with zero" (#186-D)
    a = np.arange(8, dtype=dtype)
    code = parpy.print_compiled(unsigned_pow_abs, [a, a.copy(), a.copy(), 8],
                                cuda_opts({'i': parpy.threads(32)}))
    assert "e < 0" not in code and "a < 0" not in code, code
    check_nvrtc(code, f"unsigned_pow_abs_{np.dtype(dtype).name}")
