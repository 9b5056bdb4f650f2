"""Metal code generation checked on machines without a Mac.

Metal is code generation only for now: `print_compiled` with
`CompileBackend.Metal` returns Metal Shading Language kernels plus a host part
(Objective-C++ pseudo-code under `#if 0`) that shows how each kernel is
dispatched. Here:

- every golden Metal file (crates/parpy-core/tests/out/metal/*.metal) and the
  printed file of each execution-test program Metal supports
  (tests/test_programs.py, with float32/int32 data) is syntax-checked by
  Debian's clang-19 as C++17 against the stub header
  crates/parpy-core/tests/metal_stub/metal_stub.h, unknown attributes
  silenced and every other warning an error;
- the printed files of the execution-test programs are compared with
  tests/metal_golden/NAME.metal (PARPY_BLESS=1 rewrites them);
- broken kernels must fail that check, and Metal's own errors (float64,
  CUDA-only options) are checked as messages.

Without clang-19 the syntax checks are skipped, except under CI=true where a
missing clang-19 is a failure (.ci/run installs it).
"""

import functools
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

import numpy as np
import pytest

import parpy
import test_break_continue as tj
import test_float16 as tf
import test_int_types as ti
import test_natural as tn
import test_programs as tp
from conftest import b8, backend_opts, f32, i32

ROOT = pathlib.Path(__file__).resolve().parent.parent
CRATE_TESTS = ROOT / "crates" / "parpy-core" / "tests"
STUB_DIR = CRATE_TESTS / "metal_stub"
GOLDEN_CRATE = CRATE_TESTS / "out" / "metal"
GOLDEN_PY = pathlib.Path(__file__).resolve().parent / "metal_golden"
BLESS = os.environ.get("PARPY_BLESS") == "1"
IN_CI = os.environ.get("CI") == "true"

CLANG = shutil.which(os.environ.get("PARPY_CLANG", "clang-19"))


def needs_clang(f):
    """Skips without clang-19, except under CI=true, where it fails."""
    if CLANG is None and IN_CI:
        @functools.wraps(f)
        def fail(*args, **kwargs):
            pytest.fail("CI=true but clang-19 is not installed: the Metal syntax check "
                        "needs it (apt-get install clang-19)")
        return fail
    return pytest.mark.skipif(
        CLANG is None, reason="clang-19 is not installed (apt-get install clang-19)")(f)


def clang_check(code, name):
    """Returns (ok, diagnostics) of the clang syntax check of a Metal file."""
    with tempfile.TemporaryDirectory() as d:
        src = pathlib.Path(d) / f"{name}.metal"
        src.write_text(code)
        r = subprocess.run(
            [CLANG, "-x", "c++", "-std=c++17", "-fsyntax-only",
             "-Wall", "-Wextra", "-Wno-unknown-attributes", "-Werror",
             "-I", str(STUB_DIR), "-include", str(STUB_DIR / "metal_stub.h"), str(src)],
            capture_output=True, text=True, timeout=120)
        return r.returncode == 0, r.stderr


def assert_clang_ok(code, name):
    ok, log = clang_check(code, name)
    assert ok, f"clang rejected the Metal code of {name}:\n{log}\n--- code\n{code}"


def metal_opts(spec=None, **fields):
    return backend_opts(parpy.CompileBackend.Metal, spec, **fields)


T = parpy.threads


@parpy.jit
def scaled_total(x, y, N):
    # The reduction runs in a kernel; the host reads its result from the
    # shared-storage buffer and passes `s` to the second kernel by value.
    parpy.label('a')
    s = parpy.operators.sum(x[:]) * 2.0
    parpy.label('b')
    for i in range(N):
        y[i] = x[i] / s


# The execution-test programs (tests/test_programs.py) with data Metal
# supports (float32, int32, bool arrays; Python ints and floats are 32-bit
# on Metal). Programs whose host code writes device arrays are rejected on
# every GPU backend and are not listed (see test_host_store_is_an_error).
PROGRAMS = {
    "sum_rows": (tp.sum_rows, [f32(100, 1024), f32(100), 100], {'outer': T(100)}),
    "sum_rows_strided": (tp.sum_rows, [f32(7, 33), f32(7), 7], {'outer': T(4)}),
    "sum_rows_reduce": (tp.sum_rows_reduce, [f32(10, 50), f32(10), 10], {'outer': T(10)}),
    "sum_rows_par": (tp.sum_rows_par, [f32(10, 1000), f32(10), 10],
                     {'N': T(10), 'M': T(256)}),
    # (NumPy's sum and product of int32 values are int64s: 64-bit partials)
    "sum_rows_par_int": (tp.sum_rows_par, [i32(10, 31), np.zeros(10, np.int64), 10],
                         {'N': T(10), 'M': T(64)}),
    "sum_rows_par_tpb": (tp.sum_rows_par, [f32(10, 1000), f32(10), 10],
                         {'N': T(10), 'M': T(2048).tpb(512)}),
    "normalize_rows": (tp.normalize_rows, [f32(64, 257), 64], {'N': T(64), 'M': T(32)}),
    "softmax_seq": (tp.softmax_seq, [f32(13, 100), f32(13, 100), 13, 100], {'N': T(13)}),
    "softmax_par": (tp.softmax_par, [f32(32, 1024), f32(32, 1024), 32],
                    {'N': T(32), 'M': T(128)}),
    "matvec_loop": (tp.matvec_loop, [f32(50, 70), f32(70), f32(50), 50, 70], {'N': T(50)}),
    "matvec_sum": (tp.matvec_sum, [f32(40, 300), f32(300), f32(40), 40],
                   {'N': T(40), 'M': T(64)}),
    "axpy": (tp.axpy, [2.5, f32(1000), f32(1000), 1000], {'N': T(1000)}),
    "axpy_blocks": (tp.axpy, [2.5, f32(5000), f32(5000), 5000], {'N': T(5000)}),
    "add_2d": (tp.add_2d, [f32(64, 300), f32(64, 300), f32(64, 300)], {'ij': T(32)}),
    "row_prod_par_int": (tp.row_prod_par, [i32(6, 57), np.zeros(6, np.int64), 6],
                         {'N': T(6), 'M': T(16)}),
    "row_max_par": (tp.row_max_par, [f32(6, 57), f32(6), 6], {'N': T(6), 'M': T(16)}),
    "row_min_par": (tp.row_min_par, [f32(6, 57), f32(6), 6], {'N': T(6), 'M': T(16)}),
    "row_prod": (tp.row_prod, [f32(6, 57), f32(6), 6], {'N': T(6)}),
    "manual_sum": (tp.manual_sum, [f32(1000), f32(1), 1000], {'N': T(64).par_reduction()}),
    "manual_max": (tp.manual_max, [i32(1000), i32(1), 1000], {'N': T(64).par_reduction()}),
    "map_2d": (tp.map_2d, [f32(20, 30), f32(20, 30), 20, 30], {'i': T(20), 'j': T(8)}),
    "collatz": (tp.collatz, [i32(50), i32(50), 50], {'N': T(7)}),
    "clamp_sign": (tp.clamp_sign, [f32(100), f32(100), 100], {'N': T(16)}),
    "divmod_arrays": (tp.divmod_arrays, [i32(8), i32(8), i32(8), i32(8), 8], {'N': T(4)}),
    "jacobi_1d": (tp.jacobi_1d, [f32(100), f32(100), 100, 5], {'N': T(8)}),
    "cond_expr": (tp.cond_expr, [f32(333), f32(333), 333], {'N': T(8)}),
    "chained": (tp.chained, [i32(40), i32(40), 0, 10, 40], {'N': T(4)}),
    "bool_ops": (tp.bool_ops, [f32(200), b8(200), b8(200), b8(200), 200], {'N': T(8)}),
    "math_fns": (tp.math_fns, [f32(400), f32(400), 400], {'N': T(8)}),
    "prefix_then_scale": (tp.prefix_then_scale, [f32(40), f32(40), 40], {'N': T(8)}),
    "use_helpers": (tp.use_helpers, [f32(64), f32(64), i32(64), 64], {'N': T(8)}),
    "weak_literals": (tp.weak_literals, [f32(256), f32(256), 256], {'N': T(8)}),
    "reverse_copy": (tp.reverse_copy, [i32(101), i32(101), 101], {'N': T(4)}),
    "every_third_backwards": (tp.every_third_backwards, [i32(101), i32(101), 101],
                              {'N': T(3)}),
    "last_minus_first": (tp.last_minus_first, [f32(6, 9), f32(6), 6], {'N': T(2)}),
    "powers": (tp.powers, [f32(40), f32(40), i32(40), 40], {'N': T(4)}),
    "bitwise": (tp.bitwise, [i32(64), i32(64), i32(64), 64], {'N': T(4)}),
    "builtins_mix": (tp.builtins_mix, [f32(50), i32(50), f32(50), i32(50), 50], {'N': T(4)}),
    "scaled_total": (scaled_total, [f32(4096), f32(4096), 4096], {'a': T(256), 'b': T(4096)}),
    # 8/16-bit and unsigned integers (char, ushort, uint...): wrapping casts,
    # Python // and %, SIMD reductions over 16-bit values
    "int8_div_mod_bits": (ti.div_mod_bits, [np.zeros(300, np.int8) for _ in range(5)] + [300],
                          {'N': T(64)}),
    "uint16_row_stats": (ti.row_stats, [np.zeros((13, 300), np.uint16), np.zeros(13, np.uint64),
                                        np.zeros(13, np.uint16), np.zeros(13, np.uint16), 13],
                         {'N': T(13), 'M': T(64)}),
    "int16_negate": (ti.negate_invert, [np.zeros(100, np.int16) for _ in range(3)] + [100], {'N': T(32)}),
    # float16 (`half`): rounded literals, per-operation casts, SIMD reductions
    "float16_fma": (tf.fma_like, [np.zeros(64, np.float16) for _ in range(3)] + [64], {'N': T(64)}),
    "float16_row_stats": (tf.row_stats, [np.zeros((8, 64), np.float16), np.zeros(8, np.float16),
                                         np.zeros(8, np.float16), 8], {'N': T(8), 'M': T(32)}),
    # natural Python (issue 13): tuple assignment, np/math functions, methods
    "mandelbrot": (tn.mandelbrot, [i32(24, 36), -2.0, -1.2, 0.08, 0.1, 50], {'i': T(24)}),
    "metal_math": (tn.metal_math, [f32(10), f32(10, 3), b8(10, 3), 10], {'N': T(10)}),
    "logsumexp": (tn.logsumexp, [f32(6, 300), f32(6), 6], {'i': T(6)}),
    "dot_with_locals": (tn.dot_with_locals, [f32(1000), f32(1000), f32(1), 1000],
                        {'N': T(256).par_reduction()}),
    "matmul_natural": (tn.matmul_natural, [f32(64, 32), f32(32, 48), f32(64, 48)],
                       {'i': T(64)}),
    # break and continue: a search loop, `while True`, a host loop around
    # a kernel, inner parallel loops with `continue` (rows in registers)
    "first_above": (tj.first_above, [f32(17, 40), i32(17), 17, 40], {'N': T(17)}),
    "collatz_capped": (tj.collatz_capped, [i32(64), i32(64), 64, 100], {'N': T(8)}),
    "steps_until": (tj.steps_until, [f32(100), f32(100), 100, 4], {'N': T(100)}),
    "clip_rows": (tj.clip_rows, [f32(6, 64), f32(6, 64), 6, 64], {'N': T(6), 'M': T(32)}),
}


def printed(name, **fields):
    fn, args, spec = PROGRAMS[name]
    return parpy.print_compiled(fn, args, metal_opts(spec, **fields))


# --------------------------------------------------------------------------
# golden files of the compiler's test programs (crates/parpy-core/tests)

GOLDEN_FILES = sorted(GOLDEN_CRATE.glob("*.metal"))


def test_there_are_golden_metal_files():
    names = {p.name for p in GOLDEN_FILES}
    # The tutorial programs: the row sum and both fixes of normalize_rows.
    assert {"sum_rows.metal", "normalize_rows_equal.metal",
            "normalize_rows_split.metal", "softmax.metal"} <= names, names


@needs_clang
@pytest.mark.parametrize("path", GOLDEN_FILES, ids=lambda p: p.stem)
def test_golden_clang(path):
    assert_clang_ok(path.read_text(), path.stem)


# --------------------------------------------------------------------------
# the check itself must be able to fail

GOOD = """#include <metal_stdlib>
using namespace metal;

[[kernel]] void scale(
    device float *x [[buffer(0)]],
    uint3 parpy_thread [[thread_position_in_threadgroup]]) {
  x[(long)parpy_thread.x] = metal::sqrt(x[(long)parpy_thread.x]) * 2.0f;
}
"""

BROKEN = {
    "undeclared identifier": GOOD.replace("* 2.0f", "* undeclared_factor"),
    "type error": GOOD.replace("x[(long)parpy_thread.x] = ", "x = "),
    "unknown function": GOOD.replace("metal::sqrt", "metal::sqrtt"),
    "float64": GOOD.replace("* 2.0f", "* (double)2.0"),
    "missing semicolon": GOOD.replace("2.0f;", "2.0f"),
}


@needs_clang
def test_clang_accepts_a_valid_kernel():
    assert_clang_ok(GOOD, "good")


@needs_clang
@pytest.mark.parametrize("what", sorted(BROKEN))
def test_clang_rejects_a_broken_kernel(what):
    code = BROKEN[what]
    assert code != GOOD
    ok, log = clang_check(code, "broken")
    assert not ok, f"clang accepted a kernel with a {what}:\n{code}"
    assert "error" in log


@needs_clang
def test_a_broken_golden_kernel_fails():
    code = (GOLDEN_CRATE / "sum_rows.metal").read_text()
    broken = code.replace("y[i] = acc;", "y[i] = undefined_array[i];", 1)
    assert broken != code
    ok, _ = clang_check(broken, "sum_rows_broken")
    assert not ok


# --------------------------------------------------------------------------
# print_compiled for the execution-test programs


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_print_compiled_golden(name):
    code = printed(name)
    assert code == printed(name), "print_compiled is not deterministic"
    path = GOLDEN_PY / f"{name}.metal"
    if BLESS:
        GOLDEN_PY.mkdir(exist_ok=True)
        path.write_text(code)
    assert path.exists(), f"{path} is missing; PARPY_BLESS=1 creates it (then review it)"
    assert code == path.read_text(), f"{path} differs (PARPY_BLESS=1 rewrites it)"


@needs_clang
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_print_compiled_clang(name):
    assert_clang_ok(printed(name), name)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_print_compiled_is_metal(name):
    code = printed(name)
    device, sep, host = code.partition("#if 0 // host side")
    assert sep, "no host part"
    assert "[[kernel]] void " in device
    assert "#include <metal_stdlib>" in device
    assert not re.search(r"\bdouble\b", device), "float64 in Metal device code"
    assert "MTL" not in device
    assert "dispatchThreadgroups:" in host
    assert host.rstrip().endswith("#endif // host side")


def test_runtime_scalars_go_in_a_constant_struct():
    code = printed("axpy", specialize_scalars=False)
    assert "constant parpy_params_" in code
    assert "float a = parpy_params.a;" in code
    assert "setBytes:&parpy_params length:sizeof(parpy_params)" in code
    assert_clang_ok_if_possible(code, "axpy_runtime")


def assert_clang_ok_if_possible(code, name):
    if CLANG is not None:
        assert_clang_ok(code, name)


def test_default_sizes_are_32_bit():
    code = printed("axpy")
    assert "// parpy-param: a f32" in code
    assert "// parpy-param: N i32" in code
    assert not re.search(r"\blong\b", code.partition("#if 0")[0].replace("(long)", ""))


def test_force_int_size_is_honoured():
    code = printed("reverse_copy", specialize_scalars=False, force_int_size=64)
    assert "// parpy-param: N i64" in code
    assert "int64_t N = parpy_params.N;" in code
    assert_clang_ok_if_possible(code, "reverse_copy_i64")


def test_grid_mapping_in_printed_code():
    code = printed("softmax_par")
    assert ("dispatchThreadgroups:MTLSizeMake(32, 1, 1) "
            "threadsPerThreadgroup:MTLSizeMake(128, 1, 1)") in code
    for piece in ["parpy_warp_max_f32(", "simd_shuffle_xor(", "simd_sum(", "threadgroup float ",
                  "threadgroup_barrier(mem_flags::mem_threadgroup);",
                  "[[threadgroup_position_in_grid]]", "[[thread_position_in_threadgroup]]",
                  "[[thread_index_in_simdgroup]]", "[[simdgroup_index_in_threadgroup]]",
                  "metal::exp("]:
        assert piece in code, piece
    code = printed("row_prod_par_int")
    assert "parpy_warp_prod_i64(" in code and "simd_product(" not in code  # int64 partials
    code = printed("manual_max")
    assert "simd_max(" in code
    code = printed("row_min_par")
    assert "parpy_warp_min_f32(" in code  # NaN-aware; ints use simd_min


def test_host_loop_around_dispatches():
    code = printed("jacobi_1d")
    host = code.partition("#if 0 // host side")[2]
    loop = host.index("for (")
    assert host.index("dispatchThreadgroups:", loop) > loop


def test_device_values_reach_the_host_through_shared_buffers():
    host = printed("scaled_total").partition("#if 0 // host side")[2]
    alloc = host.index("id<MTLBuffer> acc = [parpy_device newBufferWithLength:1 * sizeof(float)")
    first = host.index("dispatchThreadgroups:", alloc)
    read = host.index("acc_value = ((float *)[acc contents])[0];", first)
    second = host.index("parpy_params_scaled_total_b parpy_params = {s};", read)
    assert host.index("dispatchThreadgroups:", second) > second
    assert "acc = nil;" in host


# --------------------------------------------------------------------------
# Metal's errors


def test_float64_array_is_an_error_pointing_at_the_argument():
    x = np.zeros((4, 8))
    y = np.zeros(4)
    with pytest.raises(parpy.CompileError) as e:
        parpy.print_compiled(tp.sum_rows, [x, y, 4], metal_opts({'outer': T(4)}))
    msg = str(e.value)
    assert "Metal does not support double-precision floating-point numbers (float64), but argument `x` is a float64 array" in msg
    assert "def sum_rows(x, y, N):" in msg
    assert "astype(numpy.float32)" in msg


def test_forced_float64_scalar_is_an_error():
    with pytest.raises(parpy.CompileError) as e:
        printed("axpy", force_float_size=64)
    msg = str(e.value)
    assert "argument `a` is a float64 scalar" in msg
    assert "force_float_size" in msg


def test_float_size_32_works_explicitly():
    code = printed("axpy", force_float_size=32)
    assert "// parpy-param: a f32" in code


def test_cuda_only_options_are_errors():
    with pytest.raises(parpy.CompileError, match="no Metal counterpart"):
        printed("sum_rows", use_cuda_graphs=True)
    with pytest.raises(parpy.CompileError, match="thread block clusters"):
        printed("sum_rows", use_cuda_thread_block_clusters=True)


@parpy.jit
def int_total(x, out):
    parpy.label('a')
    out[0] = np.sum(x)


# NumPy's sum and product of bools and integers narrower than 64 bits are
# int64s (uint64s for unsigned ones), whatever Metal's 32-bit Python ints:
# they were accumulated in int32 `partial`s and `simd_sum`, and a row past
# 2**31 wrapped. Now every partial is 64-bit, reduced across a SIMD group
# by shuffling its 32-bit halves (Metal's SIMD-group functions take 16- and
# 32-bit values); 8-bit values and bools are shuffled as 16-bit ones.
WIDE = {
    "sum_int32": (tp.sum_rows_par, np.int32, np.int64, "sum", "int64_t"),
    "prod_int32": (tp.row_prod_par, np.int32, np.int64, "prod", "int64_t"),
    "sum_uint32": (tp.sum_rows_par, np.uint32, np.uint64, "sum", "uint64_t"),
    "sum_int16": (tp.sum_rows_par, np.int16, np.int64, "sum", "int64_t"),
    "sum_int8": (tp.sum_rows_par, np.int8, np.int64, "sum", "int64_t"),
    "sum_bool": (tp.sum_rows_par, np.bool_, np.int64, "sum", "int64_t"),
    "prod_int64": (tp.row_prod_par, np.int64, np.int64, "prod", "int64_t"),
    "max_int8": (tp.row_max_par, np.int8, np.int8, "max", "int8_t"),
    "max_bool": (tp.row_max_par, np.bool_, np.bool_, "max", "bool"),
    "total_int32": (int_total, np.int32, np.int64, "sum", "int64_t"),
}


@pytest.mark.parametrize("name", sorted(WIDE))
def test_integer_reductions_run_in_numpys_type(name):
    fn, dt, ot, op, acc = WIDE[name]
    if fn is int_total:
        args, spec = [np.ones(1000, dt), np.zeros(1, ot)], {'a': T(256)}
    else:
        args, spec = [np.ones((6, 100), dt), np.zeros(6, ot), 6], {'N': T(6), 'M': T(64)}
    code = parpy.print_compiled(fn, args, metal_opts(spec))
    assert set(re.findall(r"(\w+) partial\b", code)) == {acc}, code
    sym = {"int64_t": "i64", "uint64_t": "u64", "int8_t": "i8", "bool": "bool"}[acc]
    assert f"parpy_warp_{op}_{sym}(" in code, code
    assert not re.search(r"simd_(sum|product|max|min)\(", code), code
    assert_clang_ok_if_possible(code, f"wide_{name}")


def test_host_store_is_an_error():
    a = np.zeros(12, np.float32)
    with pytest.raises(parpy.CompileError, match="`slice_bounds` does not contain any parallelism"):
        parpy.print_compiled(tp.slice_bounds, [a, a.copy(), a.copy()], metal_opts())


def test_functions_missing_from_metal_are_rejected_by_name():
    with pytest.raises(parpy.CompileError, match="`erf` is not in the Metal standard library"):
        parpy.print_compiled(tn.black_scholes,
                             [f32(64), f32(64), f32(64), 0.02, 0.3, f32(64), f32(64), 64],
                             metal_opts({'i': T(64)}))


@needs_clang
@pytest.mark.parametrize("name", ["par_shift", "par_row_shift", "row_smooth", "shift_picked"])
def test_overlap_temporaries_clang(name):
    # overlapping slice assignments through a temporary (a device buffer
    # between two kernels, or a thread's own array)
    import test_numpy_semantics as sem
    args = {"par_shift": [i32(100), 100], "par_row_shift": [f32(3, 10), 3],
            "row_smooth": [f32(3, 10), 3], "shift_picked": [f32(8), f32(8), 1, 8]}[name]
    code = parpy.print_compiled(getattr(sem, name), args,
                                metal_opts({'N': T(3), 'M': T(4)}))
    assert "_rhs" in code
    assert_clang_ok(code, name)


@parpy.jit
def _unused_after_folding(p0):
    return p0 * 2


@parpy.jit
def clang_quiet(m, x, y, o, N, c):
    parpy.label('N')
    for i in range(N):
        # `&`/`|` of bools whose right side calls a prelude helper; a
        # bitwise condition of `?:`; a helper called in a folded branch
        m[i] = m[i] & (x[(i + 1) % 4] > 0) | m[(i + 3) % 4]
        o[i] = 7 if (m[i] | (x[i] > y[i])) else N | 7
        o[i] += 1 if (m[(i + 1) % 4] ^ (x[i] > 0)) else 2
        y[i] = x[i] if c > 0 else _unused_after_folding(x[i])


@needs_clang
def test_metal_output_has_no_clang_warnings():
    # found by the fuzzer (seeds 33, 307, 1802): -Wbitwise-instead-of-logical,
    # -Wbitwise-conditional-parentheses, -Wunused-function
    code = parpy.print_compiled(clang_quiet, [b8(4), f32(4), f32(4), i32(4), 4, 1],
                                metal_opts({'N': T(4)}))
    assert "_unused_after_folding" not in code.partition("#if 0")[0]
    assert_clang_ok(code, "clang_quiet")


def test_parallel_reduction_beside_a_deeper_nest_parses():
    import test_programs as tp
    with pytest.warns(parpy.ParpyWarning, match="runs sequentially on the GPU"):
        code = parpy.print_compiled(tp.sibling_nest_reduction,
                                    [a.astype(np.float32) if isinstance(a, np.ndarray) else a
                                     for a in tp.sibling_args()],
                                    metal_opts(tp.SIBLING_SPEC))
    assert_clang_ok_if_possible(code, "sibling_nest_reduction")


@pytest.mark.parametrize("name", ["nested_reduction", "top_level_nested_max"])
def test_parallel_reduction_around_parallel_loops_parses(name):
    import test_programs as tp
    fn = getattr(tp, name)
    args = tp.nested_args() if name == "nested_reduction" else tp.top_nested_args()
    args = [a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args]
    with pytest.warns(parpy.ParpyWarning, match="runs? sequentially on the GPU"):
        code = parpy.print_compiled(fn, args, metal_opts(tp.NESTED_SPEC))
    assert_clang_ok_if_possible(code, name)


@parpy.jit
def unsigned_pow_abs(a, b, o, N):
    parpy.label('N')
    for i in range(N):
        o[i] = a[i] ** b[i] + abs(a[i])


@pytest.mark.parametrize("dtype", [np.uint16, np.uint32])
def test_unsigned_power_and_abs_compare_nothing_with_zero(dtype):
    # the prelude helpers (shared by every C-family dialect) tested
    # `e < 0` / `a < 0` of unsigned values: a pointless comparison
    a = np.arange(8, dtype=dtype)
    code = parpy.print_compiled(unsigned_pow_abs, [a, a.copy(), a.copy(), 8],
                                metal_opts({'N': T(8)}))
    assert "parpy_pow_u" in code and "parpy_abs_u" in code, code
    assert "e < 0" not in code and "a < 0" not in code, code
    assert_clang_ok_if_possible(code, f"unsigned_pow_abs_{np.dtype(dtype).name}")
