"""`np.gcd` / `np.lcm` (ufuncs of integers) and Python's `math.gcd` /
`math.lcm` (any number of ints) inside jit code, against NumPy and
Python: of the magnitudes, wrapping in the integers' type as NumPy does
(`np.gcd(int8(-128), 0)` is -128, `np.lcm(int8(50), 3)` is -106)."""

import itertools
import math

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both

INT_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@parpy.jit
def gcd_lcm(a, b, g, m, N):
    parpy.label('i')
    for i in range(N):
        g[i] = np.gcd(a[i], b[i])
        m[i] = np.lcm(a[i], b[i])


def edge_pairs(dt):
    info = np.iinfo(dt)
    vals = {0, 1, 2, 3, 6, 7, 12, 18, 50, 100, 128, 1 << 20, info.max, info.max - 1,
            info.min, info.min + 1, -1, -6, -7, -50}
    vals = sorted(v for v in vals if info.min <= v <= info.max)
    pairs = list(itertools.product(vals, vals))
    return np.array([p[0] for p in pairs], dt), np.array([p[1] for p in pairs], dt)


@pytest.mark.parametrize("dt", INT_TYPES, ids=lambda t: t.__name__)
def test_numpy_gcd_and_lcm_of_every_integer_type(dt):
    a, b = edge_pairs(dt)
    n = len(a)
    got = run_both(gcd_lcm, [a, b, np.zeros(n, dt), np.zeros(n, dt), n],
                   cpu_opts({'i': parpy.threads(n)}), rtol=0, atol=0)
    with np.errstate(all="ignore"):
        assert np.array_equal(got[2], np.gcd(a, b))
        assert np.array_equal(got[3], np.lcm(a, b))


@parpy.jit
def lcm_rows(a, y, N):
    parpy.label('i')
    y[:] = np.lcm(a[:], 6) + np.gcd(a[:], np.int64(4))


def test_in_a_slice_statement_with_a_python_int():
    a = np.arange(-5, 7, dtype=np.int64)
    got = run_both(lcm_rows, [a, np.zeros(12, np.int64), 12], cpu_opts({'i': parpy.threads(12)}))
    assert np.array_equal(got[1], np.lcm(a, 6) + np.gcd(a, 4))


@parpy.jit
def python_gcds(a, b, y, N):
    for i in range(N):
        y[i, 0] = math.gcd(a[i], b[i], 12)
        y[i, 1] = math.lcm(a[i], 3, b[i] % 5 + 1)
        y[i, 2] = math.gcd() + math.lcm()
        y[i, 3] = math.gcd(a[i]) + math.lcm(b[i])
        y[i, 4] = math.gcd(True, a[i])


def test_python_math_gcd_and_lcm_take_any_number_of_ints():
    a = np.array([4, -6, 0, 9, 100, -128], np.int32)
    b = np.array([6, 9, 0, -12, 75, 3], np.int8)
    got = run_both(python_gcds, [a, b, np.zeros((6, 5), np.int64), 6], cpu_opts({}))
    want = [[math.gcd(int(x), int(y), 12), math.lcm(int(x), 3, int(y) % 5 + 1), 1,
             abs(int(x)) + abs(int(y)), math.gcd(True, int(x))] for x, y in zip(a, b)]
    assert got[2].tolist() == want


@parpy.jit
def gcd_of_floats(x, y, N):
    for i in range(N):
        y[i] = np.gcd(x[i], 2)


@parpy.jit
def math_gcd_of_a_float(x, y, N):
    for i in range(N):
        y[i] = math.gcd(x[i], 2.0)


@parpy.jit
def math_gcd_of_a_numpy_bool(m, y, N):
    for i in range(N):
        y[i] = math.gcd(m[i], 2)


@pytest.mark.parametrize("fn, arr, words", [
    (gcd_of_floats, np.ones(3), "`np.gcd` of float64 values"),
    (math_gcd_of_a_float, np.ones(3, np.int64), "'float' object cannot be interpreted as an integer"),
    (math_gcd_of_a_numpy_bool, np.ones(3, bool), "'numpy.bool' object cannot be interpreted"),
])
def test_what_python_refuses_is_a_located_type_error(fn, arr, words):
    with pytest.raises(TypeError) as e:
        fn(arr, np.zeros(3, np.int64), 3, opts=cpu_opts({}))
    assert isinstance(e.value, parpy.CompileError)
    assert words in str(e.value)
    # the plain Python run raises a TypeError too
    with pytest.raises(TypeError):
        fn.__wrapped__(arr, np.zeros(3, np.int64), 3)


def test_gpu_code_of_gcd_and_lcm_compiles():
    a = np.arange(8, dtype=np.int32)

    def args_for(backend):
        return [a, a + 3, np.zeros(8, np.int32), np.zeros(8, np.int32), 8]

    codes = check_gpu_code(gcd_lcm, args_for, {'i': parpy.threads(8)}, "gcd_lcm")
    for code in codes.values():
        assert "parpy_gcd_i32(" in code and "parpy_lcm_i32(" in code


@parpy.jit
def math_gcd_of_uint64(u, y, N):
    for i in range(N):
        y[i, 0] = math.gcd(u[i], 0) % 1000
        y[i, 1] = math.lcm(u[i], 1) % 1000


def test_math_gcd_of_a_uint64_past_2_63_raises_as_int_of_it_does():
    # (found by the fuzzer's `new_math`) Python's gcd of
    # np.uint64(2**64 - 1) is that Python int; parpy's Python int is an
    # int64, and the operand wrapped to -1 gave 1 silently: an
    # OverflowError now, as `int()` of such a uint64 raises
    small = np.array([12, 2**63 - 1], np.uint64)
    y = np.zeros((2, 2), np.int64)
    math_gcd_of_uint64(small, y, 2, opts=cpu_opts({}))
    assert y.tolist() == [[12, 12], [(2**63 - 1) % 1000] * 2]
    big = np.array([5, 2**64 - 1], np.uint64)
    with pytest.raises(OverflowError, match="does not fit in an int64"):
        math_gcd_of_uint64(big, np.zeros((2, 2), np.int64), 2, opts=cpu_opts({}))
