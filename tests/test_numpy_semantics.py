"""NumPy's arithmetic rules, each checked against plain Python over NumPy
values (issue 9): bool operators, reduction accumulators and identities,
math on small integers, strong NumPy scalars, shifts by any count,
comparisons with out-of-range Python ints, negative runtime indices,
overlapping slice assignments and integer division by zero.
tests/test_cuda_programs.py re-runs every test here on Cuda."""

import math

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, python_opts, run_both
from test_assert import expect_raised

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's division notes


@parpy.jit
def bool_ops(a, b, n, s, p, N):
    parpy.label('N')
    for i in range(N):
        n[i] = ~a[i]
        s[i] = a[i] + b[i]
        p[i] = a[i] * b[i]


def test_bool_invert_add_and_mul_stay_bool():
    a = np.array([True, False, True, False])
    b = np.array([True, True, False, False])
    out = run_both(bool_ops, [a, b, *(np.zeros(4, bool) for _ in range(3)), 4],
                   cpu_opts({'N': parpy.threads(2)}))
    assert out[2].tolist() == [False, True, False, True]


@parpy.jit
def python_bool_plus_int(y, N):
    parpy.label('N')
    for i in range(N):
        y[i] += (i > 0) + 1


def test_python_bool_arithmetic_is_a_weak_int():
    run_both(python_bool_plus_int, [np.arange(5, dtype=np.uint64), 5],
             cpu_opts({'N': parpy.threads(2)}))


@parpy.jit
def row_min_max(x, mn, mx, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        mn[i] = parpy.operators.min(x[i, :])
        parpy.label('M')
        mx[i] = parpy.operators.max(x[i, :])


@pytest.mark.parametrize("dtype", [np.uint64, np.uint32, np.int64, np.int8])
@pytest.mark.parametrize("par_rows", [False, True])
def test_min_max_identities_cover_the_type(dtype, par_rows):
    info = np.iinfo(dtype)
    x = np.full((3, 64), info.max, dtype)
    x[1] = info.min
    x[2, 5] = info.max - 1
    spec = {'N': parpy.threads(3)}
    if par_rows:
        spec['M'] = parpy.threads(32).par_reduction()
    run_both(row_min_max, [x, np.zeros(3, dtype), np.zeros(3, dtype), 3], cpu_opts(spec))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("par_rows", [False, True])
def test_min_max_reductions_propagate_nan(dtype, par_rows):
    # NumPy's max and min of values holding a NaN are NaN, wherever it is;
    # they ignored it (and OpenMP's max clause dropped it depending on the
    # lane), giving the largest number
    x = np.random.default_rng(3).random((6, 300)).astype(dtype)
    for row, col in enumerate([0, 1, 150, 298, 299]):
        x[row, col] = np.nan
    x[5, :] = 0.25
    spec = {'N': parpy.threads(6)}
    if par_rows:
        spec['M'] = parpy.threads(64).par_reduction()
    mn, mx = run_both(row_min_max, [x, np.zeros(6, dtype), np.zeros(6, dtype), 6],
                      cpu_opts(spec))[1:3]
    assert np.isnan(mn[:5]).all() and np.isnan(mx[:5]).all()
    assert mn[5] == mx[5] == dtype(0.25)


@parpy.jit
def elementwise_extremes(x, a, b, c, d, N):
    parpy.label('N')
    for i in range(N):
        a[i] = np.maximum(0.5, x[i])
        b[i] = np.minimum(x[i], 0.5)
        c[i] = max(x[i], 0.5, x[N - 1 - i])
        d[i] = min(0.5, x[i])


def test_elementwise_max_and_min_of_a_nan_are_nan():
    # NumPy's maximum(0.5, nan) is nan; the C helper returned 0.5 when the
    # NaN came second. Python's max / min compare: a NaN after the first
    # argument is skipped (`min(0.5, nan)` is 0.5), a first one kept
    x = np.array([np.nan, 1.0, -1.0, 0.5, np.inf, -np.inf, -0.0, np.nan])
    outs = [np.zeros(8) for _ in range(4)]
    got = run_both(elementwise_extremes, [x, *outs, 8], cpu_opts({'N': parpy.threads(4)}))
    assert np.isnan(got[1][0]) and np.isnan(got[2][0]) and got[4][0] == 0.5
    assert np.isnan(got[3]).tolist() == [True] + [False] * 6 + [True]


@parpy.jit
def top_level_max(x, out, N):
    parpy.label('r')
    for i in range(N):
        out[0] = max(out[0], x[i])


@pytest.mark.parametrize("where", [0, 500, 999])
@pytest.mark.parametrize("start", [0.0, np.nan])
def test_a_parallel_reduction_of_pythons_max_folds_as_python_does(where, start):
    # `out[0] = max(out[0], x[i])` in Python keeps `out[0]` where it is NaN
    # and skips a NaN element (`nan > v` and `v > nan` are false): the
    # parallel reduction gives that value too (it gave NaN, NumPy's rule)
    x = np.random.default_rng(4).random(1000)
    x[where] = np.nan
    got = run_both(top_level_max, [x, np.full(1, start), 1000],
                   cpu_opts({'r': parpy.threads(128).par_reduction()}))
    assert np.isnan(got[1][0]) == np.isnan(start)


@parpy.jit
def row_sum_prod(x, s, p, N):
    parpy.label('N')
    for i in range(N):
        s[i] = parpy.operators.sum(x[i, :])
        p[i] = parpy.operators.prod(x[i, :])


@pytest.mark.parametrize("dtype,acc", [(np.int32, np.int64), (np.uint32, np.uint64)])
def test_32_bit_sums_and_products_accumulate_in_64_bits(dtype, acc):
    x = np.full((2, 3), 2**30, dtype)
    x[1] = 3 * 2**29
    assert x.sum(axis=1).dtype == acc
    out = run_both(row_sum_prod, [x, np.zeros(2, acc), np.zeros(2, acc), 2],
                   cpu_opts({'N': parpy.threads(2)}))
    assert out[1][0] == 3 * 2**30


@parpy.jit
def row_sum(x, s, N):
    parpy.label('N')
    for i in range(N):
        s[i] = parpy.operators.sum(x[i, :])


def test_float16_sum_accumulates_in_float32():
    x = np.ones((2, 4096), np.float16)
    out = run_both(row_sum, [x, np.zeros(2, np.float16), 2], cpu_opts({'N': parpy.threads(2)}))
    assert out[1].tolist() == [4096.0, 4096.0]


@parpy.jit
def math_small(k, b, y, z, w, N):
    parpy.label('N')
    for i in range(N):
        y[i] = parpy.math.sqrt(k[i])
        z[i] = parpy.math.sin(b[i]) * 10000
        w[i] = parpy.math.cos(b[i] > 0)


def test_math_on_small_ints_computes_in_float16_or_float32():
    k = np.arange(9, dtype=np.int16)
    b = np.arange(-4, 5, dtype=np.int8)
    args = [k, b, np.zeros(9, np.float32), np.zeros(9, np.float64), np.zeros(9, np.float16), 9]
    out = run_both(math_small, args, cpu_opts({'N': parpy.threads(2)}), rtol=0, atol=0)
    assert out[3][5] == 8416.0


@parpy.jit
def scale(a, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = a * 100


@pytest.mark.parametrize("a,dtype", [
    (np.int8(5), np.int64), (np.uint8(200), np.int64), (np.float32(0.1), np.float64),
    (np.float64(0.1), np.float64), (5, np.int64), (np.bool_(True), np.int64),
])
@pytest.mark.parametrize("specialize", [True, False])
def test_numpy_scalars_are_strong_python_scalars_weak(a, dtype, specialize):
    run_both(scale, [a, np.zeros(3, dtype), 3],
             cpu_opts({'N': parpy.threads(2)}, specialize_scalars=specialize))


@parpy.jit
def shifts(x, s, l, r, c, N):
    parpy.label('N')
    for i in range(N):
        l[i] = x[i] << s[i]
        r[i] = x[i] >> s[i]
        c[i] = (x[i] >> 40) + (x[i] << 33)


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint32, np.uint64, np.int64])
def test_shifts_by_any_count_match_numpy(dtype):
    signed = np.issubdtype(dtype, np.signedinteger)
    x = np.array([-5, 7, 100, -1, 3, 1, 9, -100] if signed else [5, 7, 100, 1, 3, 1, 9, 200], dtype)
    s = np.array([40, 32, -1, 31, 8, 63, 64, 7] if signed else [40, 32, 70, 31, 8, 63, 64, 7], dtype)
    run_both(shifts, [x, s, *(np.zeros(8, dtype) for _ in range(3)), 8],
             cpu_opts({'N': parpy.threads(2)}))


@parpy.jit
def compare_python_ints(u, c, y, N):
    parpy.label('N')
    for i in range(N):
        y[i, 0] = u[i] < -2
        y[i, 1] = u[i] > -2
        y[i, 2] = -2 != u[i]
        y[i, 3] = u[i] == 300
        y[i, 4] = u[i] >= c
        y[i, 5] = c < u[i]


@pytest.mark.parametrize("dtype", [np.uint8, np.uint32, np.uint64, np.int8])
@pytest.mark.parametrize("c,specialize", [(-2, False), (-2, True), (2**40, False), (3, False)])
def test_comparisons_with_python_ints_are_exact(dtype, c, specialize):
    u = np.arange(5).astype(dtype)
    run_both(compare_python_ints, [u, c, np.zeros((5, 6), bool), 5],
             cpu_opts({'N': parpy.threads(2)}, specialize_scalars=specialize))


@parpy.jit
def read_at(x, y, k):
    with parpy.gpu:
        y[0] = x[k]
        y[1] = x[k - 1]


@pytest.mark.parametrize("k", [-1, -4, 2])
@pytest.mark.parametrize("specialize", [True, False])
@pytest.mark.parametrize("checks", [True, False])
def test_negative_runtime_indices_wrap(k, specialize, checks):
    # without checks the wrap is parpy_wrap_<type>, not the checked helper
    opts = cpu_opts(specialize_scalars=specialize, bounds_check=checks)
    run_both(read_at, [np.arange(5.0), np.zeros(2), k], opts)


@parpy.jit
def gather(x, idx, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = x[idx[i]]


@pytest.mark.parametrize("checks", [True, False])
def test_negative_indices_read_from_an_array_wrap(checks):
    idx = np.array([0, -1, 3, -4], np.int64)
    opts = cpu_opts({'N': parpy.threads(2)}, bounds_check=checks)
    run_both(gather, [np.arange(4.0), idx, np.zeros(4), 4], opts)


@parpy.jit
def shift_right_by_one(y):
    with parpy.gpu:
        y[1:] = y[:-1] + 1


@parpy.jit
def shift_left_by_one(y):
    with parpy.gpu:
        y[:-1] = y[1:] * 2


@parpy.jit
def shift_rows(y):
    with parpy.gpu:
        y[1:, :] = y[:-1, :] + y[1:, :]


@pytest.mark.parametrize("fn", [shift_right_by_one, shift_left_by_one])
def test_overlapping_slice_assignment_reads_first(fn):
    out = run_both(fn, [np.zeros(6, np.int64) + np.arange(6) % 2], cpu_opts())
    if fn is shift_right_by_one:
        assert out[0].tolist() == [0, 1, 2, 1, 2, 1]


def test_overlapping_2d_slice_assignment_reads_first():
    run_both(shift_rows, [np.arange(12.0).reshape(4, 3)], cpu_opts())


# Overlapping slice assignments that no loop order serves go through a
# temporary: parallel ones, reads on both sides, a re-bound array name.
@parpy.jit
def par_shift(y, N):
    parpy.label('N')
    y[1:N] = y[0:N - 1] + 1


@parpy.jit
def par_row_shift(x, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        x[i, 1:] = x[i, :-1] * 2 + x[i, 1:]


@parpy.jit
def row_smooth(x, N):
    parpy.label('N')
    for i in range(N):
        x[i, 1:-1] = x[i, :-2] + x[i, 2:]


@parpy.jit
def shift_picked(x, y, c, N):
    if c > 0:
        a = x
    else:
        a = y
    parpy.label('N')
    a[1:] = a[:-1] + y[:-1]


@parpy.jit
def half_swap(y, N):
    parpy.label('N')
    y[:4] = y[4:] + 1


def test_parallel_overlapping_slice_assignment_reads_first():
    out = run_both(par_shift, [np.arange(100, dtype=np.int64) % 3, 100],
                   cpu_opts({'N': parpy.threads(16)}))
    assert out[0][:4].tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("spec", [{'N': parpy.threads(3)},
                                  {'N': parpy.threads(3), 'M': parpy.threads(4)}])
def test_overlapping_row_assignments_in_a_parallel_loop(spec):
    x = np.arange(30.0).reshape(3, 10) % 7
    run_both(par_row_shift, [x, 3], cpu_opts(spec))
    run_both(row_smooth, [x, 3], cpu_opts(spec))


@pytest.mark.parametrize("c", [1, 0])
def test_overlap_through_a_re_bound_array_name(c):
    run_both(shift_picked, [np.arange(8.0), np.arange(8.0) * 10, c, 8],
             cpu_opts({'N': parpy.threads(4)}))


def test_overlap_temporary_only_where_needed():
    from parpy import print_compiled
    shift = print_compiled(shift_right_by_one, [np.zeros(6, np.int64)], cpu_opts())
    apart = print_compiled(half_swap, [np.zeros(8), 8], cpu_opts({'N': parpy.threads(4)}))
    par = print_compiled(par_shift, [np.zeros(8), 8], cpu_opts({'N': parpy.threads(4)}))
    assert "y_rhs" not in shift and "y_rhs" not in apart and "y_rhs" in par
    run_both(half_swap, [np.arange(8.0), 8], cpu_opts({'N': parpy.threads(4)}))


@pytest.mark.parametrize("fn", [par_shift, par_row_shift])
def test_large_overlap_temporaries_are_not_on_the_stack(fn):
    # 16 MiB temporaries: more than a thread's stack
    n = 1 << 21
    x = np.arange(n, dtype=np.float64)
    args = [x, n] if fn is par_shift else [x.reshape(2, n // 2), 2]
    run_both(fn, args, cpu_opts({'N': parpy.threads(2)}))


@parpy.jit
def div_mod(a, b, q, r, N):
    parpy.label('N')
    for i in range(N):
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.uint32, np.uint64, np.float64])
def test_division_by_zero_and_min_by_minus_one_never_trap(dtype):
    if np.issubdtype(dtype, np.floating):
        a = np.array([5.0, -5.0, 0.0, 7.5, -7.5])
        b = np.array([0.0, 0.0, 0.0, 2.0, -0.0])
    else:
        lo = np.iinfo(dtype).min
        a = np.array([5, lo, lo, 7, 9], dtype)
        b = np.array([0, 0, -1 if lo < 0 else 1, 2, 0], dtype)
    q, r = np.zeros(5, dtype), np.zeros(5, dtype)
    run_both(div_mod, [a, b, q, r, 5], cpu_opts({'N': parpy.threads(2)}))


def test_constant_division_by_zero_is_a_compile_error():
    @parpy.jit
    def by_zero(x, N):
        for i in range(N):
            x[i] = x[i] // 0

    with pytest.raises(parpy.CompileError, match="division by zero") as e:
        by_zero(np.ones(3, np.int64), 3, opts=cpu_opts())
    assert "x[i] // 0" in str(e.value)
    # (a NumPy dividend does not raise in NumPy: the note says what NumPy
    # gives; it said "Python raises ZeroDivisionError")
    assert "NumPy gives 0 (integers) or inf / NaN (floats) with a RuntimeWarning" in str(e.value)


# --------------------------------------------------------------------------
# GPU launch structure (issue 9 item 14): the programs run differentially
# here on the Cpu and on Cuda through test_cuda_programs; the checks of the
# printed CUDA hold on any machine.

def cuda_code(fn, args, spec, **fields):
    opts = cpu_opts(spec, **fields)
    opts.backend = parpy.CompileBackend.Cuda
    return parpy.print_compiled(fn, args, opts)


@parpy.jit
def middle_level_then_read(x, y, z, N):
    parpy.label('A')
    for i in range(N):
        parpy.label('B')
        for j in range(8):
            parpy.label('C')
            for k in range(4):
                y[i, j, k] = x[i, j, k] * 2.0
        z[i] = y[i, 7, 3] + y[i, 0, 0]


MIDDLE_SPEC = {'A': parpy.threads(4), 'B': parpy.threads(8), 'C': parpy.threads(4)}


def test_a_middle_level_read_afterwards_stays_in_the_block():
    # seed349/1405/1633: the middle level ran on other blocks (blockIdx.y),
    # so z[i] read y before those blocks wrote it
    x = np.arange(4 * 8 * 4, dtype=np.float64).reshape(4, 8, 4)
    args = [x, np.zeros((4, 8, 4)), np.zeros(4), 4]
    run_both(middle_level_then_read, args, cpu_opts(MIDDLE_SPEC))
    code = cuda_code(middle_level_then_read, args, MIDDLE_SPEC)
    assert "blockIdx.y" not in code and "dim3(4, 1, 1)" in code


@parpy.jit
def wide_level_then_read(x, y, z, N):
    parpy.label('A')
    for i in range(N):
        parpy.label('B')
        for j in range(2048):
            y[i, j] = x[i, j] + 1.0
        z[i] = y[i, 2047] + y[i, 0]


def test_an_innermost_level_read_afterwards_does_not_spill_into_blocks():
    spec = {'A': parpy.threads(2), 'B': parpy.threads(2048)}
    x = np.arange(2 * 2048, dtype=np.float64).reshape(2, 2048)
    args = [x, np.zeros((2, 2048)), np.zeros(2), 2]
    run_both(wide_level_then_read, args, cpu_opts(spec))
    code = cuda_code(wide_level_then_read, args, spec)
    assert "blockIdx.y" not in code and "dim3(2, 1, 1), dim3(1024, 1, 1)" in code


@parpy.jit
def store_ends_a_sequential_loop(a, s, N):
    parpy.label('N')
    for i in range(N):
        for t in range(3):
            parpy.label('M')
            for j in range(64):
                a[i, j] = a[i, j] + s[i]
            s[i] = s[i] * 2.0


def test_a_store_at_the_end_of_a_sequential_loop_is_followed_by_a_barrier():
    spec = {'N': parpy.threads(4), 'M': parpy.threads(64)}
    args = [np.zeros((4, 64)), np.ones(4), 4]
    run_both(store_ends_a_sequential_loop, args, cpu_opts(spec))
    code = cuda_code(store_ends_a_sequential_loop, args, spec)
    store = code.index("s[i] = s[i] * 2.0;")
    assert "__syncthreads();" in code[store:code.index("}\n}", store)]


@parpy.jit
def square_minus(x, y, z, N):
    parpy.label('N')
    for i in range(N):
        z[i] = (x[i] * x[i] - y[i]) * 18014398509481984.0  # 2**54


def test_no_fused_multiply_add():
    # with a*b - c fused the rounding of a*b is skipped: 1.0 instead of 0.0
    x = np.full(4, 1 + 2.0 ** -27)
    y = x * x
    out = run_both(square_minus, [x, y, np.zeros(4), 4], cpu_opts({'N': parpy.threads(4)}))
    assert out[2].tolist() == [0.0] * 4


@parpy.jit
def shift_negative_left(x, y, c):
    with parpy.gpu:
        y[0] = c << 7
        y[1] = x[0] << 3


def test_negative_values_shifted_left_wrap_as_numpy():
    # C leaves a negative value shifted left undefined (clang refused the
    # Metal code of a specialized np.int8(-3) << 7: the fuzzer's seed 24422)
    x, y = np.array([-5], np.int8), np.zeros(2, np.int8)
    out = run_both(shift_negative_left, [x, y, np.int8(-3)], cpu_opts())
    assert out[1].tolist() == [np.int8(-3) << np.int8(7), np.int8(-5) << np.int8(3)]
    from test_metal_codegen import assert_clang_ok_if_possible
    metal = cpu_opts()
    metal.backend = parpy.CompileBackend.Metal
    assert_clang_ok_if_possible(parpy.print_compiled(shift_negative_left, [x, y, np.int8(-3)], metal),
                                "shift_negative_left")


@parpy.jit
def total_2d(x, out):
    parpy.label('all')
    out[0] = parpy.operators.sum(x[:, :])


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("par", [False, True])
def test_long_float_sums_are_as_close_as_numpy_on_the_cpu(dtype, par):
    # float32 sums of 204,800 values accumulated in float32 missed the
    # exact sum by ~1e-3 where NumPy's pairwise sum is within ~1e-5 (ParPy's
    # test_multi_block_reduction); the CPU now adds in float64 and rounds once
    x = np.random.default_rng(1234).standard_normal((100, 2048)).astype(dtype)
    exact = x.astype(np.float64).sum()
    out = np.zeros(1, dtype)
    opts = cpu_opts({'all': parpy.threads(256)} if par else {})
    if opts.backend != parpy.CompileBackend.Cpu:
        pytest.skip("the Cpu backend's float64 accumulation (tests/test_cuda_programs.py)")
    total_2d(x, out, opts=opts)
    assert out.dtype == x.sum().dtype
    # as close to the exact sum as NumPy's pairwise sum, or within a few
    # ulps (blocks of 128 added in float32, then in float64: the block sums
    # round as NumPy's do, in lanes as wide as the machine's SIMD, so which
    # of the two lands closer is chance: NumPy's is 1 ulp off here, parpy's
    # 5 with AVX-512 lanes); the float32 accumulation was ~65 ulps off
    ulp = np.spacing(np.abs(out[0])).astype(np.float64)
    numpy_error = abs(float(x.sum()) - exact)
    assert abs(float(out[0]) - exact) <= max(numpy_error, 8 * ulp), (out[0], x.sum(), exact)


@parpy.jit
def fmax_fmin(x, y, a, b, c, d, N):
    parpy.label('N')
    for i in range(N):
        a[i] = np.fmax(x[i], y[i])
        b[i] = np.fmin(x[i], y[i])
        c[i] = np.fmax(x[i], 0.5)
        d[i] = np.fmin(0.5, x[i])


def test_fmax_and_fmin_ignore_a_nan():
    # np.fmax(nan, 1) is 1: it was compiled as np.maximum (nan)
    x = np.array([np.nan, 1.0, np.nan, -0.0, 0.0, 2.0])
    y = np.array([1.0, np.nan, np.nan, 0.0, -0.0, 2.0])
    outs = [np.zeros(6) for _ in range(4)]
    got = run_both(fmax_fmin, [x, y, *outs, 6], cpu_opts({'N': parpy.threads(2)}))
    np.testing.assert_array_equal(got[2], np.fmax(x, y))
    np.testing.assert_array_equal(got[3], np.fmin(x, y))
    # a tie keeps the first operand, as NumPy (the sign of a zero shows it)
    assert np.signbit(got[2][3]) and not np.signbit(got[2][4])
    assert got[4][0] == 0.5 and got[5][0] == 0.5


@parpy.jit
def bound_written_in_body(n, y, N):
    """The bound of `range` read once, before the loop, as Python does:
    the body writes the array element (and the scalar) the bound reads."""
    parpy.label('N')
    for i in range(N):
        m = n[i]
        for k in range(n[i]):
            n[i] = 1
            y[i, k] = y[i, k] + 1.0
        for k in range(2, m):
            m = 3
            y[i, k] = y[i, k] + 2.0


def test_range_bounds_are_read_once():
    # C tests `k < n[i]` every iteration: the loop stopped after one
    n = np.array([5, 0, 7, 3], np.int64)
    got = run_both(bound_written_in_body, [n, np.zeros((4, 8)), 4],
                   cpu_opts({'N': parpy.threads(2)}))
    np.testing.assert_array_equal(got[1].sum(axis=1), [5 + 6, 0, 7 + 10, 3 + 2])


@parpy.jit
def row_products(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.prod(x[i, :])


def test_float32_products_overflow_as_numpy_multiplies_them():
    # NumPy multiplies float32 in order in float32: 1e20 * 1e20 is inf, and
    # stays inf. parpy multiplied in float64 (giving 1.0 here), and the C
    # compiler's reordering of the reduction could miss the overflow too.
    big, small = np.float32(1e20), np.float32(1e-20)
    x = np.array([[big, big, small, small, 1, 1, 1, 1],
                  [big, small, big, small, 1, 1, 1, 1],
                  [2, 3, 0.5, 4, 0.25, 1.5, 1, 2]], np.float32)
    got = run_both(row_products, [x, np.zeros(3, np.float32), 3], cpu_opts({'i': parpy.threads(3)}))[1]
    with np.errstate(over="ignore"):
        ref = np.prod(x, axis=1)
    assert np.array_equal(got, ref), (got, ref)
    assert np.isinf(got[0]) and np.isfinite(got[1])


# --------------------------------------------------------------------------
# A float32 or float16 constant widened to float64 keeps its rounding
# (`np.float32(0.1)` stored into a float64 array was 0.1: sema folded the
# conversion of a literal without rounding it)


@parpy.jit
def narrow_constants(y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.float32(0.1)
        y[i, 1] = np.float16(0.1)
        y[i, 2] = np.float16(65520.0)
        y[i, 3] = np.float32(16777217)
        y[i, 4] = np.float16(1 / 3) * 3


def test_narrow_constants_widen_with_their_rounding():
    with np.errstate(over="ignore"):
        y = run_both(narrow_constants, [np.zeros((2, 5)), 2], cpu_opts({'i': parpy.threads(2)}),
                     rtol=0, atol=0)[0]
    assert y[0, 0] == 0.10000000149011612 and y[0, 1] == 0.0999755859375
    assert np.isinf(y[0, 2]) and y[0, 3] == 16777216.0


@parpy.jit
def python_int_constants(y, z, N):
    parpy.label('N')
    for i in range(N):
        y[i, 0] = 2 ** 62 * 4 // 8
        y[i, 1] = 10 ** 20 // 10 ** 18
        y[i, 2] = (2 ** 64 + 5) % 7
        y[i, 3] = -(2 ** 65) >> 60
        z[i, 0] = 2 ** 70 * 1.0
        z[i, 1] = (3 ** 50 // 3 ** 45) / 2


def test_python_int_constants_are_exact_beyond_64_bits():
    # Python computes these before NumPy sees them: an intermediate value
    # past 64 bits must not wrap
    y, z = np.zeros((2, 4), np.int64), np.zeros((2, 2), np.float64)
    out = run_both(python_int_constants, [y, z, 2], cpu_opts({'N': parpy.threads(2)}))
    assert out[0][0].tolist() == [2 ** 61, 100, (2 ** 64 + 5) % 7, -32]
    assert out[1][0].tolist() == [2.0 ** 70, 121.5]


@parpy.jit
def store_wide(y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = 2 ** 63 + 5


@parpy.jit
def add_huge(y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = y[i] + 2 ** 70


@parpy.jit
def compare_huge(y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = -(2 ** 64) < i


def test_a_python_int_past_64_bits_is_refused_not_wrapped():
    # they used to keep 64 bits: `y[i] + 2 ** 70` added 0, `-(2 ** 64) < i`
    # was False, `2 ** 63 + 5` stored into an int64 became -2**63 + 5
    opts = cpu_opts({'N': parpy.threads(2)})
    y = run_both(store_wide, [np.zeros(2, np.uint64), 2], opts)[0]
    assert y.tolist() == [2 ** 63 + 5] * 2
    with pytest.raises(parpy.CompileError,
                       match="Python integer 9223372036854775813 out of bounds for int64"):
        parpy.print_compiled(store_wide, [np.zeros(2, np.int64), 2], opts)
    for fn, dtype, text in [(add_huge, np.float64, "1180591620717411303424"),
                            (add_huge, np.int64, "1180591620717411303424"),
                            (compare_huge, np.bool_, "-18446744073709551616")]:
        with pytest.raises(parpy.CompileError) as e:
            parpy.print_compiled(fn, [np.zeros(2, dtype), 2], opts)
        msg = str(e.value)
        assert f"this Python int is {text}, which does not fit in 64 bits" in msg, msg
    assert "write a float literal: `-1.8446744073709552e19`" in msg, msg


@parpy.jit
def known_int_sum(k, y):
    y[0] = k + k


@parpy.jit
def known_int_power_of_floats(k, x, y):
    y[0] = k * k * 1.0
    y[1] = x[0] * (k * 2)


@parpy.jit
def known_int_overflow(y, n):
    y[0] = 2 ** 62 * n


@parpy.jit
def local_int_overflow(y):
    big = 2 ** 62
    y[0] = big * 4


@parpy.jit
def known_int_square(k, x, y):
    y[0] = x[0] * (k * k)


def test_python_ints_known_when_compiling_are_exact_as_literals():
    # a specialized Python-int argument or a local holding a constant is
    # computed as its literal is: `k + k` with k = 2**62 was -2**63 (it
    # wrapped), `2 ** 62 * n` with n = 4 and `big * 4` were 0.0, `x * (k *
    # k)` with k = 2**40 was 0
    opts = cpu_opts()
    assert run_both(known_int_sum, [2 ** 62, np.zeros(1)], opts)[1][0] == 2.0 ** 63
    y = run_both(known_int_power_of_floats, [2 ** 40, np.ones(1), np.zeros(2)], opts)[2]
    assert y.tolist() == [2.0 ** 80, 2.0 ** 41]
    cases = [(known_int_overflow, [np.zeros(1), 4], "18446744073709551616", "`n` = 4"),
             (local_int_overflow, [np.zeros(1)], "18446744073709551616", "`big` = 4611686018427387904"),
             (known_int_square, [2 ** 40, np.ones(1, np.float32), np.zeros(1, np.float32)],
              "1208925819614629174706176", "`k` = 1099511627776")]
    for fn, args, value, known in cases:
        with pytest.raises(OverflowError):
            fn.py_func(*[a.astype(np.int64) if isinstance(a, np.ndarray) else a
                         for a in args])
        with pytest.raises(parpy.CompileError) as e:
            fn(*args, opts=opts)
        msg = str(e.value)
        assert f"this Python int is {value}, which does not fit in 64 bits" in msg, msg
        assert known in msg, msg


@parpy.jit
def choose_or_number(x, k, y, z, N):
    parpy.label('N')
    for i in range(N):
        y[i] = x[i] if x[i] > 0 else 0.1
        z[i] = k[i] if k[i] > 0 else (1000 if k[i] < -5 else k[i] * 2)


@pytest.mark.parametrize("xt", [np.float32, np.float16])
def test_a_conditional_stores_the_python_number_it_chooses(xt):
    # Python picks `0.1` (a double) or `1000` (an int), then the store
    # converts that: not the other side's float32 / int8
    x = np.array([1, -1, 2, -3], xt)
    k = np.array([1, -1, 2, -7], np.int8)
    out = run_both(choose_or_number, [x, k, np.zeros(4), np.zeros(4, np.int64), 4],
                   cpu_opts({'N': parpy.threads(2)}))
    assert out[2][1] == 0.1 and out[3].tolist() == [1, -2, 2, 1000]


def test_a_conditional_into_a_narrower_destination_is_still_refused():
    @parpy.jit
    def narrow(x, y, N):
        parpy.label('N')
        for i in range(N):
            y[i] = x[i] if x[i] > 0 else 0.1

    with pytest.raises(parpy.CompileError, match="cannot store a value of type `f64`"):
        parpy.print_compiled(narrow, [np.ones(3), np.zeros(3, np.float32), 3],
                             cpu_opts({'N': parpy.threads(3)}))


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.uint8])
def test_max_and_min_of_no_elements_raise_as_numpy_and_python_do(dtype):
    x = (np.random.default_rng(0).random((3, 4, 4)) * 10).astype(dtype)[:, 0, :].copy()
    x3 = np.repeat(x[:, None, :], 2, axis=1)
    y = np.zeros((3, 3), dtype)

    @parpy.jit
    def tails(x, x3, y, N, k):
        parpy.label('N')
        for i in range(N):
            y[i, 0] = x[i, k:].max()
            y[i, 1] = min(x[i, k:])
            y[i, 2] = np.max(x3[i, :, k:], axis=1)[0]

    opts = cpu_opts({'N': parpy.threads(3)})
    run_both(tails, [x, x3, y, 3, 1], opts)
    expect_raised(tails, [x, x3, y, 3, 4], opts, ValueError,
                  "zero-size array to reduction operation maximum")


@parpy.jit
def add_k(x, k, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = x[i] + k


@pytest.mark.parametrize("dtype,k", [(np.int8, 300), (np.int8, -129), (np.uint8, -1),
                                     (np.uint64, -1), (np.int32, 2 ** 31)])
def test_a_python_int_passed_at_run_time_must_fit_the_numpy_type_it_meets(dtype, k):
    # NumPy raises OverflowError for `np.int8(1) + 300`; so does parpy when
    # `k` is known when compiling (a compile error) and, now, when it is
    # passed at run time (before, it wrapped: 1 + 300 gave 45)
    opts = cpu_opts({'N': parpy.threads(2)}, specialize_scalars=False)
    x = np.array([1, 5, 100], dtype)
    run_both(add_k, [x, 20, np.zeros(3, dtype), 3], opts)
    expect_raised(add_k, [x, k, np.zeros(3, dtype), 3], opts, OverflowError,
                  f"out of bounds for {np.dtype(dtype).name}", "`k`")


def _same_as_plain_python(fn, args, out_idx, opts=None):
    """The compiled `fn` and the undecorated one give the same bits in the
    arrays `out_idx` (signed zeros and NaN too)."""
    opts = opts or cpu_opts()
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    fn.py_func(*want)
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    fn(*got, opts=opts)
    for k in out_idx:
        assert got[k].dtype == want[k].dtype
        assert got[k].tobytes() == want[k].tobytes(), (k, got[k], want[k])


@parpy.jit
def numpy_functions_of_python_ints(x, y, k, N):
    for i in range(N):
        y[0, i] = x[i] * np.maximum(1, 2)
        y[1, i] = x[i] * np.minimum(3, 2)
        y[2, i] = x[i] * np.fmax(1, 2)
        y[3, i] = x[i] * np.fmin(2, 3)
        y[4, i] = x[i] * np.abs(-2)
        y[5, i] = x[i] * np.absolute(-2)
        y[6, i] = x[i] * (np.sign(2) + 1)
        y[7, i] = x[i] * np.clip(5, 0, 2)
        y[8, i] = x[i] * np.round(2)
        y[9, i] = x[i] * np.around(2)
        y[10, i] = x[i] * np.floor(2)
        y[11, i] = x[i] * np.ceil(2)
        y[12, i] = x[i] * np.trunc(2)
        y[13, i] = x[i] * np.fix(2)
        y[14, i] = x[i] * np.array(2)
        y[15, i] = x[i] * np.asarray(2)
        y[16, i] = x[i] * np.maximum(k, 2)
        y[17, i] = x[i] * np.abs(-k)


@parpy.jit
def numpy_functions_of_python_ints_sliced(x, y, k):
    y[0, :] = x[:] * np.maximum(1, 2)
    y[1, :] = x[:] * np.clip(5, 0, 2)
    y[2, :] = x[:] * np.array(2)
    y[3, :] = x[:] * np.maximum(k, 2)


@parpy.jit
def numpy_functions_of_python_floats(x, y, q, N):
    for i in range(N):
        y[0, i] = x[i] * np.maximum(0.1, 0.2)
        y[1, i] = x[i] * np.fmin(0.1, 0.2)
        y[2, i] = x[i] * np.abs(-0.1)
        y[3, i] = x[i] * np.clip(0.1, 0, 1)
        y[4, i] = x[i] * np.array(0.1)
        y[5, i] = x[i] * np.sqrt(2.0)
        y[6, i] = x[i] * np.minimum(q, 1.0)


@pytest.mark.parametrize("specialize", [True, False])
def test_numpy_functions_of_python_numbers_give_numpy_values(specialize):
    # NumPy makes Python numbers alone NumPy values (int64 / float64):
    # `x8 * np.maximum(1, 2)` is computed in int64 (it wrapped in int8),
    # `x32 * np.maximum(0.1, 0.2)` in float64 (it was float32)
    opts = cpu_opts(specialize_scalars=specialize)
    x = np.array([100, -3, 127], np.int8)
    _same_as_plain_python(numpy_functions_of_python_ints,
                          [x, np.zeros((18, 3), np.int64), 2, 3], [1], opts)
    _same_as_plain_python(numpy_functions_of_python_ints_sliced,
                          [x, np.zeros((4, 3), np.int64), 2], [1], opts)
    x = np.array([0.1, 0.3, 1 / 3], np.float32)
    _same_as_plain_python(numpy_functions_of_python_floats,
                          [x, np.zeros((7, 3)), 0.1, 3], [1], opts)


@parpy.jit
def builtin_extremes(a, b, mx, mn, N):
    for i in range(N):
        mx[i] = parpy.builtin.maximum(a[i], b[i])
        mn[i] = parpy.builtin.minimum(a[i], b[i])


@parpy.jit
def builtin_extremes_of_python_floats(p, q, o):
    o[0] = parpy.builtin.maximum(p, q)
    o[1] = parpy.builtin.minimum(p, q)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_builtin_maximum_is_numpys_maximum(dtype):
    # NumPy's `np.maximum` (ParPy's meaning): a NaN gives NaN, a tie the
    # second operand (float16: the first), undecorated and in Python mode
    # as compiled
    nan = np.nan
    a = np.array([0.0, nan, 0.0, -0.0, 1.0, nan], dtype)
    b = np.array([nan, 0.0, -0.0, 0.0, nan, 1.0], dtype)
    args = [a, b, np.zeros(6, dtype), np.zeros(6, dtype), 6]
    _same_as_plain_python(builtin_extremes, args, [2, 3])
    _same_as_plain_python(builtin_extremes, args, [2, 3], python_opts(cpu_opts()))
    mx = np.zeros(6, dtype)
    builtin_extremes.py_func(a, b, mx, np.zeros(6, dtype), 6)
    assert mx.tobytes() == np.maximum(a, b).tobytes()
    for p, q in [(0.0, -0.0), (-0.0, 0.0), (1.0, nan), (nan, 1.0)]:
        _same_as_plain_python(builtin_extremes_of_python_floats, [p, q, np.zeros(2)], [2])
    assert type(parpy.builtin.maximum(1.0, nan)) is float


@parpy.jit
def python_max_of_python_floats(p, q, o):
    o[0] = max(p, q)
    o[1] = min(p, q)


def test_python_mode_max_of_python_floats_is_pythons():
    # (Python mode gave NaN for `max(1.0, nan)`, Python 1.0)
    for p, q in [(1.0, np.nan), (np.nan, 1.0), (0.0, -0.0), (-0.0, 0.0)]:
        _same_as_plain_python(python_max_of_python_floats, [p, q, np.zeros(2)], [2],
                              python_opts(cpu_opts()))
        _same_as_plain_python(python_max_of_python_floats, [p, q, np.zeros(2)], [2])


@parpy.jit
def store_into_bools(y, s, N):
    for i in range(N):
        y[i] = s
    y[N] = 2
    y[N + 1] = -1
    y[N + 2] = 0


@pytest.mark.parametrize("s", [2, -1, 0, 2.5, 2**40])
@pytest.mark.parametrize("specialize", [True, False])
def test_a_python_int_stored_into_a_bool_is_its_truth(s, specialize):
    # NumPy stores any non-zero int as True (it was "Python integer 2 out
    # of bounds for bool")
    _same_as_plain_python(store_into_bools, [np.zeros(5, bool), s, 2], [0],
                          cpu_opts(specialize_scalars=specialize))


@parpy.jit
def unary_plus(x, y, N):
    for i in range(N):
        y[i] = +x[i]


@parpy.jit
def unary_plus_of_python_bool(y, b):
    y[0] = +b + y[1]


def test_unary_plus_of_a_numpy_bool_is_refused():
    x = np.array([True, False])
    with pytest.raises(Exception, match="positive"):
        unary_plus.py_func(x, np.zeros(2, bool), 2)
    with pytest.raises(TypeError, match="of a bool is not defined in NumPy") as e:
        unary_plus(x, np.zeros(2, bool), 2, opts=cpu_opts())
    assert "+x[i]" in str(e.value)
    for dtype in [np.int8, np.uint16, np.float32]:
        _same_as_plain_python(unary_plus, [np.array([3, 0], dtype), np.zeros(2, dtype), 2], [1])
    # `+True` is the Python int 1: with an int8 it is an int8
    _same_as_plain_python(unary_plus_of_python_bool, [np.array([0, 127], np.int8), True], [0])


@parpy.jit
def python_trunc(x, o, N):
    for i in range(N):
        o[i] = math.trunc(x[i])


@parpy.jit
def python_trunc_of_python_numbers(o, p, k):
    o[0] = math.trunc(p)
    o[1] = math.trunc(k)
    o[2] = math.trunc(-2.5)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int8, np.int64, np.uint8, np.bool_])
def test_math_trunc_of_a_numpy_value_other_than_float64_is_refused(dtype):
    # Python's `math.trunc` calls `__trunc__`, which only NumPy's float64
    # (a Python float) of NumPy's types has: a TypeError in Python
    x = np.array([1, 0], dtype)
    with pytest.raises(TypeError, match="__trunc__"):
        python_trunc.py_func(x, np.zeros(2, np.int64), 2)
    with pytest.raises(TypeError, match="`math.trunc` of a NumPy") as e:
        python_trunc(x, np.zeros(2, np.int64), 2, opts=cpu_opts())
    assert "np.trunc" in str(e.value) and "math.trunc(x[i])" in str(e.value)


def test_math_trunc_of_float64_and_python_numbers_works():
    _same_as_plain_python(python_trunc, [np.array([1.5, -2.5, 7.0]), np.zeros(3, np.int64), 3], [1])
    _same_as_plain_python(python_trunc_of_python_numbers, [np.zeros(3, np.int64), -3.75, 5], [0])


def power_forms(x, e, y):
    # (NumPy's power takes a square root where one exponent for all
    # elements is 0.5 and a reciprocal where it is -1: np.power of
    # float32/float64, and `arr ** 0.5` of a Python number in any float
    # type; a NumPy scalar's `**` is C's pow)
    with parpy.gpu:
        y[0, :] = x ** 0.5
        y[1, :] = np.power(x, 0.5)
        y[2, :] = x ** e
        y[3, :] = np.power(x, e)
        y[4, :] = x ** -1
        y[5, :] = x ** e[1]
        for i in range(x.shape[0]):
            y[6, i] = x[i] ** 0.5
            y[7, i] = np.power(x[i], 0.5)
            y[8, i] = np.power(x[i], e[i])
            y[9, i] = x[i] ** e[i]
            y[10, i] = np.power(x[i], -1)
            y[11, i] = np.power(x[i], 1.5)


power_forms_jit = parpy.jit(power_forms)


@pytest.mark.parametrize('dtype', [np.float16, np.float32, np.float64])
def test_numpys_power_shortcuts_give_its_bits(dtype):
    # (parpy computed pow(-inf, 0.5) = inf and pow(-0.0, 0.5) = 0.0 where
    # NumPy's np.power(x, 0.5) is sqrt: nan and -0.0; and float32's powf
    # is not sqrt's exact result, 3 ** 0.5)
    import warnings
    x = np.array([-np.inf, -0.0, 0.0, 3.0, 7.0, np.inf, 1e-30, 2.5], dtype)
    e = np.array([0.5, 0.5, -1.0, 0.5, -1.0, 0.5, -1.0, 0.5], dtype)
    want = np.zeros((12, x.size), dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        power_forms(x, e, want)
    opts = cpu_opts()
    got = run_both(power_forms_jit, [x, e, np.zeros((12, x.size), dtype)], opts)[2]
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want) | np.isnan(got) & np.signbit(got))
    # (C's pow and NumPy's float32/float64 power may differ in the last
    # bits, docs/arithmetic.md; a square root or a division may not)
    tol = 1e-2 if dtype == np.float16 else 1e-6
    np.testing.assert_allclose(got, want, rtol=tol)
    if opts.backend == parpy.CompileBackend.Cuda:
        return
    exact = [0, 1, 4, 5, 7, 8, 10] if dtype != np.float16 else [0, 6, 7, 9]
    u = f'u{x.itemsize}'
    ok = np.isnan(want[exact]) | (got[exact].view(u) == want[exact].view(u))
    assert ok.all(), [(r, got[r].tolist(), want[r].tolist()) for r in exact]


def test_math_hypot_past_the_largest_float_is_inf_as_in_python():
    # (parpy raised OverflowError "math range error"; CPython's hypot gives inf)
    @parpy.jit
    def hyp(x, y):
        with parpy.gpu:
            for i in range(x.shape[0]):
                y[i] = math.hypot(x[i], x[i]) + math.hypot(float(x[i]), 1.0)
    x = np.array([1.7976931348623157e308, 3.0, -np.inf])
    y = run_both(hyp, [x, np.zeros(3)], cpu_opts())[1]
    assert y[0] == np.inf and y[2] == np.inf
