"""NumPy's and Python's functions of a float's representation and a few
small ones, inside jit code, bit for bit against NumPy and Python:
`np.ldexp` / `math.ldexp`, `np.nextafter` / `math.nextafter`,
`np.spacing`, `math.ulp`, `math.remainder`, `math.degrees` /
`math.radians`, `np.isposinf` / `np.isneginf`, `np.real` / `np.conj`."""

import math
import warnings

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts

X = np.array([0.3, -1.5, 0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310,
              1.7976931348623157e308, 2.5, -3.75, 5e-324, -2.2250738585072014e-308, 1e300])
K = np.array([3, -2, 5, 1000, -1080, 7, 0, 2000, -3, 1, -1, 1074, -52, 30], np.int64)


def same_bits(want, got):
    assert want.dtype == got.dtype
    assert np.array_equal(want.view(np.uint8), got.view(np.uint8)), (want, got)


def both(fn, args):
    """Plain Python and compiled runs of `fn` on copies; (python, compiled)."""
    ref = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    out = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn.__wrapped__(*ref)
        fn(*out, opts=cpu_opts({}))
    return ref, out


@parpy.jit
def numpy_steps(x, f, k, y, z, N):
    for i in range(N):
        y[i, 0] = np.ldexp(x[i], k[i])
        y[i, 1] = np.nextafter(x[i], 0.0)
        y[i, 2] = np.nextafter(x[i], np.inf)
        y[i, 3] = np.spacing(x[i])
        z[i, 0] = np.ldexp(f[i], k[i])
        z[i, 1] = np.nextafter(f[i], np.float32(-np.inf))
        z[i, 2] = np.spacing(f[i])
        z[i, 3] = np.ldexp(f[i], 3)


def test_numpy_ldexp_nextafter_and_spacing_of_float32_and_float64():
    n = len(X)
    ref, out = both(numpy_steps, [X, X.astype(np.float32), K, np.zeros((n, 4)),
                                  np.zeros((n, 4), np.float32), n])
    same_bits(ref[3], out[3])
    same_bits(ref[4], out[4])


@parpy.jit
def python_steps(x, k, y, N):
    for i in range(N):
        y[i, 0] = math.nextafter(x[i], 1.0)
        y[i, 1] = math.ulp(x[i])
        if x[i] == x[i] and abs(x[i]) < 1e300:
            y[i, 2] = math.remainder(x[i], 0.75) + math.remainder(x[i], -2.5)
            y[i, 3] = math.ldexp(x[i], int(k[i] % 40))
        y[i, 4] = math.degrees(x[i]) + math.radians(k[i])


def test_python_nextafter_ulp_remainder_ldexp_and_angles():
    n = len(X)
    ref, out = both(python_steps, [X, K, np.zeros((n, 5)), n])
    same_bits(ref[2], out[2])


@parpy.jit
def math_errors(x, y, N):
    for i in range(N):
        y[i] = math.remainder(x[i], 0.0) + math.ldexp(x[i], 2000)


def test_python_math_errors_of_remainder_and_ldexp():
    with pytest.raises(ValueError, match="math domain error"):
        math_errors(np.array([1.0]), np.zeros(1), 1, opts=cpu_opts({}))


@parpy.jit
def ldexp_overflow(x, y, N):
    for i in range(N):
        y[i] = math.ldexp(x[i], 2000)


def test_python_ldexp_overflow_is_an_overflow_error():
    with pytest.raises(OverflowError, match="math range error"):
        ldexp_overflow(np.array([1.0]), np.zeros(1), 1, opts=cpu_opts({}))
    y = np.zeros(1)
    ldexp_overflow(np.array([0.0]), y, 1, opts=cpu_opts({}))
    assert y[0] == 0.0


@parpy.jit
def signed_infs(x, k, b, y, w, N):
    for i in range(N):
        y[i, 0] = np.isposinf(x[i])
        y[i, 1] = np.isneginf(x[i])
        y[i, 2] = np.isposinf(k[i]) or np.isneginf(b[i])
        w[i] = np.real(x[i]) + np.conj(x[i]) + np.conjugate(k[i]) + np.conj(b[i]) + np.real(True)


def test_isposinf_isneginf_real_and_conj():
    n = len(X)
    ref, out = both(signed_infs, [X, K, K > 0, np.zeros((n, 3), bool), np.zeros(n), n])
    same_bits(ref[3], out[3])
    same_bits(ref[4], out[4])


@parpy.jit
def real_of_python_numbers(h, y, N):
    for i in range(N):
        y[i, 0] = h[i] * np.real(2.5)
        y[i, 1] = h[i] + np.real(3)


@parpy.jit
def conj_of_a_python_float(h, y, N):
    for i in range(N):
        y[i] = h[i] * np.conj(2.5)


def test_real_of_a_python_number_is_that_python_number():
    # (found by the fuzzer's `new_math`) NumPy's `np.real(v)` is `v.real`:
    # of a Python float a Python float, so a float16 times it stays a
    # float16; parpy made it a NumPy float64 and refused the store into a
    # float16 array
    h = np.array([1.5, -0.25, 3.0], np.float16)
    ref, out = both(real_of_python_numbers, [h, np.zeros((3, 2), np.float16), 3])
    same_bits(ref[1], out[1])
    assert (h * np.real(2.5)).dtype == np.float16
    # `np.conj`, a ufunc, does make a NumPy float64
    assert (h * np.conj(2.5)).dtype == np.float64
    with pytest.raises(parpy.CompileTypeError, match="f64"):
        conj_of_a_python_float(h, np.zeros(3, np.float16), 3, opts=cpu_opts({}))


@parpy.jit
def spacing_f16(h, y, N):
    for i in range(N):
        y[i] = np.spacing(h[i])


@parpy.jit
def ldexp_float_exponent(x, y, N):
    for i in range(N):
        y[i] = np.ldexp(x[i], 2.0)


@parpy.jit
def math_ldexp_numpy_exponent(x, k, y, N):
    for i in range(N):
        y[i] = math.ldexp(x[i], k[i])


def test_what_parpy_or_python_refuses():
    h = np.ones(2, np.float16)
    with pytest.raises(parpy.CompileError, match="float16 values is not supported"):
        spacing_f16(h, np.zeros(2, np.float16), 2, opts=cpu_opts({}))
    with pytest.raises(TypeError, match="exponent of `np.ldexp` is a float64"):
        ldexp_float_exponent(np.ones(2), np.zeros(2), 2, opts=cpu_opts({}))
    with pytest.raises(TypeError, match="Expected an int as second argument to ldexp"):
        math_ldexp_numpy_exponent(np.ones(2), np.ones(2, np.int64), np.zeros(2), 2,
                                  opts=cpu_opts({}))


@parpy.jit
def scaled(x, k, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.ldexp(x[i], k[i]) + np.real(x[i])


def test_gpu_code_of_ldexp_compiles():
    x = np.ones(8, np.float32)

    def args_for(backend):
        return [x, np.arange(8, dtype=np.int32), np.zeros(8, np.float32), 8]

    codes = check_gpu_code(scaled, args_for, {'i': parpy.threads(8)}, "scaled_ldexp")
    for code in codes.values():
        assert "ldexp" in code


@parpy.jit
def products(x, k, y, N):
    for i in range(N):
        y[i, 0] = math.prod((x[i], 2.0, 3))
        y[i, 1] = math.prod([x[i], k[i]], start=2)
        y[i, 2] = math.prod(())
        y[i, 3] = math.prod([k[i], k[i]])


def test_python_math_prod_of_a_tuple_or_list():
    ref, out = both(products, [X[:6], K[:6].astype(np.int8), np.zeros((6, 4)), 6])
    same_bits(ref[2], out[2])


@parpy.jit
def prod_of_a_row(x, y, N):
    for i in range(N):
        y[i, 0] = math.prod(x[i, :])
        y[i, 1] = math.prod(x[i, 1:], start=0.5)
        y[i, 2] = math.prod(v + 1 for v in x[i, :] if v > 0)
        y[i, 3] = math.prod((j + 1 for j in range(i)), start=2)


def test_math_prod_of_a_row_or_generator_multiplies_left_to_right():
    # (Python's `start * x[0] * x[1] ...`, one product at a time: rounded as
    # np.prod's pairwise product is not)
    x = np.random.default_rng(5).uniform(0.5, 1.7, (5, 37))
    x[1, 3] = -0.0
    x[2, 4] = np.nan
    ref, out = both(prod_of_a_row, [x, np.zeros((5, 4)), 5])
    same_bits(ref[1], out[1])


@parpy.jit
def int_prods(k, y, N):
    for i in range(N):
        y[i, 0] = math.prod(k[i, :])
        y[i, 1] = math.prod(k[i, :2], start=True)


def test_math_prod_of_an_int_row_wraps_as_numpy_scalars():
    # (NumPy's int64 scalars: Python's `1 * k[0]` is an np.int64, wrapping)
    k = np.array([[2**40, 2**30, 3], [-7, 5, 0], [1, -1, 2**62]], np.int64)
    ref, out = both(int_prods, [k, np.zeros((3, 2), np.int64), 3])
    assert np.array_equal(ref[1], out[1])


@parpy.jit
def prod_of_a_block(x, y, N):
    for i in range(N):
        y[i] = math.prod(x[:, :])


def test_math_prod_of_a_block_points_at_np_prod():
    with pytest.raises(parpy.CompileError, match="use `np.prod"):
        prod_of_a_block(np.ones((2, 2)), np.zeros(2), 2, opts=cpu_opts({}))
