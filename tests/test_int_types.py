"""The integer types beyond int32/int64 (REFERENCE.md: int8-64, uint8-64),
run against plain Python over NumPy: arithmetic wraps at the type's width
after every operation, Python's `//` and `%`, shifts and bitwise operators,
promotion between mixed types, and row reductions (sums of 8/16-bit values
accumulate in 64 bits, as NumPy's do)."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's overflow notes

SIGNED = [np.int8, np.int16]
UNSIGNED = [np.uint8, np.uint16, np.uint32, np.uint64]
ALL = SIGNED + UNSIGNED


def values(dtype, n, seed, nonzero=False):
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -100), min(info.max, 100)
    v = np.random.default_rng(seed).integers(lo, hi + 1, n).astype(dtype)
    if nonzero:
        v[v == 0] = 3
    return v


@parpy.jit
def affine(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = x[i] * 3 + 7


@parpy.jit
def div_mod_bits(a, b, q, r, s, N):
    parpy.label('N')
    for i in range(N):
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]
        s[i] = (((a[i] & 15) << 3) ^ b[i]) | ((a[i] >> 1) & b[i])


@parpy.jit
def negate_invert(x, y, z, N):
    parpy.label('N')
    for i in range(N):
        y[i] = -x[i]
        z[i] = ~x[i]


@parpy.jit
def mixed_add(a, b, z, N):
    parpy.label('N')
    for i in range(N):
        z[i] = a[i] + b[i]


@parpy.jit
def row_stats(x, s, mx, mn, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        s[i] = parpy.operators.sum(x[i, :])
        parpy.label('M')
        mx[i] = parpy.operators.max(x[i, :])
        parpy.label('M')
        mn[i] = parpy.operators.min(x[i, :])


@pytest.mark.parametrize("dtype", ALL)
def test_arithmetic_wraps_at_the_type_width(dtype):
    # values up to 100 times 3 plus 7 overflow the 8-bit types
    x = values(dtype, 257, 1)
    y = np.zeros(257, dtype)
    out = run_both(affine, [x, y, 257], cpu_opts({'N': parpy.threads(4)}))
    assert out[1].dtype == dtype


@pytest.mark.parametrize("dtype", ALL)
def test_floor_division_modulo_shifts_and_bits(dtype):
    n = 300
    a = values(dtype, n, 2)
    b = values(dtype, n, 3, nonzero=True)
    q, r, s = (np.zeros(n, dtype) for _ in range(3))
    run_both(div_mod_bits, [a, b, q, r, s, n], cpu_opts({'N': parpy.threads(4)}))


@pytest.mark.parametrize("dtype", ALL)
def test_negation_and_inversion(dtype):
    x = values(dtype, 100, 4)
    x[0] = np.iinfo(dtype).min  # -(-128) wraps to -128; -0 of unsigned is 0
    x[1] = np.iinfo(dtype).max
    y, z = np.zeros(100, dtype), np.zeros(100, dtype)
    run_both(negate_invert, [x, y, z, 100], cpu_opts({'N': parpy.threads(4)}))


@pytest.mark.parametrize("ta,tb,tz", [
    (np.uint8, np.int8, np.int16),
    (np.int8, np.int16, np.int16),
    (np.uint16, np.int32, np.int32),
    (np.uint32, np.int64, np.int64),
    (np.uint8, np.uint64, np.uint64),
])
def test_mixed_types_promote_like_numpy(ta, tb, tz):
    a, b = values(ta, 64, 5), values(tb, 64, 6)
    assert (a[:1] + b[:1]).dtype == tz
    z = np.zeros(64, tz)
    run_both(mixed_add, [a, b, z, 64], cpu_opts({'N': parpy.threads(4)}))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("parallel_rows", [False, True])
def test_row_sums_minima_and_maxima(dtype, parallel_rows):
    N, M = 13, 300   # 300 values up to 100 overflow 8-bit sums
    x = values(dtype, N * M, 7).reshape(N, M)
    acc = np.int64 if np.issubdtype(dtype, np.signedinteger) else np.uint64
    s, mx, mn = np.zeros(N, acc), np.zeros(N, dtype), np.zeros(N, dtype)
    spec = {'N': parpy.threads(N)}
    if parallel_rows:
        spec['M'] = parpy.threads(32)
    out = run_both(row_stats, [x, s, mx, mn, N], cpu_opts(spec))
    np.testing.assert_array_equal(out[1], x.sum(axis=1, dtype=acc))


def test_an_unsupported_dtype_names_the_argument():
    x = np.zeros(4, np.complex64)
    with pytest.raises(TypeError, match=r"argument `x` of `affine` has dtype complex64"):
        affine(x, x, 4, opts=cpu_opts({'N': parpy.threads(2)}))


def test_metal_rejects_8_bit_parallel_reductions_clearly():
    # Metal's simd_max has no 8-bit form: a CompileError at the reduction,
    # not an internal error from the code generator
    x = np.zeros((13, 300), np.int8)
    args = [x, np.zeros(13, np.int64), np.zeros(13, np.int8), np.zeros(13, np.int8), 13]
    opts = parpy.par({'N': parpy.threads(13), 'M': parpy.threads(64)})
    opts.backend = parpy.CompileBackend.Metal
    with pytest.raises(parpy.CompileError, match=r"`max` reduction over int8 values has no Metal"):
        parpy.print_compiled(row_stats, args, opts)


@pytest.mark.parametrize("parallel_rows", [False, True])
def test_uint64_minimum_above_int64_max(parallel_rows):
    # the min reduction of a slice starts from uint64's largest value (it
    # started from int64's, so every row of values above it gave 2**63-1)
    N, M = 3, 40
    x = np.full((N, M), 2**64 - 5, np.uint64)
    x[1, 7] = 2**63 + 11
    s, mx, mn = np.zeros(N, np.uint64), np.zeros(N, np.uint64), np.zeros(N, np.uint64)
    spec = {'N': parpy.threads(N)}
    if parallel_rows:
        spec['M'] = parpy.threads(32)
    out = run_both(row_stats, [x, s, mx, mn, N], cpu_opts(spec))
    np.testing.assert_array_equal(out[3], x.min(axis=1))
