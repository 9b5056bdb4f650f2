"""Python's `math` module raises where it has no value: `math.sqrt(-1.0)`
is `ValueError: math domain error`, `math.exp(1000.0)` `OverflowError: math
range error`, `math.floor(nan)` and `int(nan)` `ValueError`. Compiled code
gave NaN, inf or INT64_MIN. NumPy's functions (`np.sqrt`) and parpy.math
keep giving NaN and inf, as NumPy does."""

import math

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both
from test_assert import expect_raised


@parpy.jit
def sqrt_log_acos(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = math.sqrt(x[i])
        y[i, 1] = math.log(x[i] + 1.0)
        y[i, 2] = math.acos(x[i] / 4.0)


@parpy.jit
def log_of(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = math.log(x[i])


@parpy.jit
def exp_pow(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = math.exp(x[i])
        y[i, 1] = math.pow(x[i], -1.0)


@parpy.jit
def to_ints(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = math.floor(x[i])
        y[i, 1] = int(x[i])
        y[i, 2] = round(x[i])


@parpy.jit
def numpy_gives_nan(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.sqrt(x[i])
        y[i, 1] = parpy.math.log(x[i])


@parpy.jit
def guarded(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = math.sqrt(x[i]) if x[i] >= 0.0 else -1.0


def opts():
    return cpu_opts({'i': parpy.threads(4)})


def test_values_in_the_domain_are_pythons():
    x = np.array([0.0, 1.0, 2.5, 3.0])
    run_both(sqrt_log_acos, [x, np.zeros((4, 3)), 4], opts())
    run_both(exp_pow, [x + 1.0, np.zeros((4, 2)), 4], opts())
    run_both(to_ints, [x - 1.5, np.zeros((4, 3), np.int64), 4], opts())


@pytest.mark.parametrize("fn,bad", [
    (sqrt_log_acos, -1.0),   # sqrt of a negative number
    (sqrt_log_acos, 8.0),    # acos(2.0)
    (log_of, 0.0),           # log(0.0): a pole, -inf from a finite number
    (log_of, -2.0),          # log of a negative number
])
def test_numbers_outside_the_domain_raise_value_error(fn, bad):
    x = np.array([1.0, 2.0, bad, 3.0])
    expect_raised(fn, [x, np.zeros((4, 3)), 4], opts(), ValueError, "math domain error")


def test_overflow_raises_overflow_error_and_a_pole_value_error():
    x = np.array([1.0, 1000.0, 2.0, 3.0])
    expect_raised(exp_pow, [x, np.zeros((4, 2)), 4], opts(), OverflowError, "math range error")
    x = np.array([1.0, 0.0, 2.0, 3.0])   # pow(0.0, -1.0)
    expect_raised(exp_pow, [x, np.zeros((4, 2)), 4], opts(), ValueError, "math domain error")


@pytest.mark.parametrize("bad,exception,words", [
    (np.nan, ValueError, "cannot convert float NaN to integer"),
    (np.inf, OverflowError, "cannot convert float infinity to integer"),
    (-np.inf, OverflowError, "cannot convert float infinity to integer"),
])
def test_nan_and_infinity_to_int_raise(bad, exception, words):
    x = np.array([1.5, bad, 2.0, -3.5])
    expect_raised(to_ints, [x, np.zeros((4, 3), np.int64), 4], opts(), exception, words)


def test_numpy_and_parpy_math_keep_nan():
    x = np.array([1.0, -1.0, 4.0, 0.0])
    with np.errstate(invalid="ignore", divide="ignore"):
        y = run_both(numpy_gives_nan, [x, np.zeros((4, 2)), 4], opts())[1]
    assert np.isnan(y[1, 0]) and np.isnan(y[1, 1]) and np.isneginf(y[3, 1])


def test_a_call_that_python_does_not_make_does_not_raise():
    x = np.array([4.0, -1.0, 9.0, -2.0])
    y = run_both(guarded, [x, np.zeros(4), 4], opts())[1]
    assert y.tolist() == [2.0, -1.0, 3.0, -1.0]


@parpy.jit
def python_divisions(y, z, a, b, c, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = a // (b - i)
        y[i, 1] = a % (b - i)
        z[i] = c / (b - i)


@parpy.jit
def numpy_divisions(x, y, k, N):
    parpy.label('i')
    for i in range(N):
        y[i] = x[i] // k


def test_python_numbers_divided_by_zero_raise_zero_division_error():
    # Python ints and floats (arguments, loop counters) raise where NumPy's
    # values would give 0 or inf: parpy gave 0 or inf
    o = cpu_opts({'i': parpy.threads(4)}, specialize_scalars=False)
    args = lambda b: [np.zeros((4, 2), np.int64), np.zeros(4), 7, b, 1.5, 4]
    run_both(python_divisions, args(10), o)
    expect_raised(python_divisions, args(2), o, ZeroDivisionError, "by zero")
    # a NumPy value divided by a zero Python int: NumPy's 0, no raise
    x = np.array([5, 6, 7, 8])
    with np.errstate(divide="ignore"):
        y = run_both(numpy_divisions, [x, np.zeros(4, np.int64), 0, 4], o)[1]
    assert y.tolist() == [0, 0, 0, 0]


@parpy.jit
def reduced_remainders(y, k, N):
    parpy.label('i')
    for i in range(N):
        acc = 0
        parpy.label('r')
        for j in range(N):
            acc += j % ((j & 7) + 1) + j // k
        y[i] = acc


def test_a_division_check_leaves_a_parallel_reduction_one():
    # the divisor `(j & 7) + 1` is never zero: no check; `k`'s check (a
    # run-time Python int) is a statement the reduction body may hold (the
    # fuzzer's seed 145320 was refused: "its body is not a reduction")
    o = cpu_opts({'i': parpy.threads(4), 'r': parpy.threads(4).par_reduction()},
                 specialize_scalars=False)
    run_both(reduced_remainders, [np.zeros(12, np.int64), 3, 12], o)
    expect_raised(reduced_remainders, [np.zeros(12, np.int64), 0, 12], o,
                  ZeroDivisionError, "by zero")


@parpy.jit
def ints_of_floats(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = float(int(x[i])) + round(x[i]) * 0.0


def test_the_int_of_a_float_past_int64_is_an_overflow_error_not_a_wrapped_value():
    # (Python's int holds 1e19; parpy's int64 wrapped it to -9.2e18)
    opts = cpu_opts({'i': parpy.threads(2)})
    run_both(ints_of_floats, [np.array([1e18, -9.2e18]), np.zeros(2), 2], opts)
    with pytest.raises(OverflowError, match="does not fit in an int64"):
        ints_of_floats(np.array([1.0, 1e19]), np.zeros(2), 2, opts=opts)
    with pytest.raises(OverflowError, match="does not fit in an int64"):
        ints_of_floats(np.array([-1e19, 1.0], np.float32), np.zeros(2), 2, opts=opts)


@parpy.jit
def half_of_int(u, y):
    y[0] = int(u[0]) // 2


def test_the_int_of_a_uint64_past_int64_is_an_overflow_error():
    run_both(half_of_int, [np.array([2**63 - 1], np.uint64), np.zeros(1, np.int64)], cpu_opts())
    with pytest.raises(OverflowError, match="does not fit in an int64"):
        half_of_int(np.array([2**64 - 2], np.uint64), np.zeros(1, np.int64), opts=cpu_opts())


@parpy.jit
def python_math_of_float32(x, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i] = math.sqrt(x[i])
        z[i] = math.exp(x[i]) / 3.0 + np.exp(x[i])


def test_pythons_math_computes_on_a_python_float():
    # (it computed in float32: math.sqrt(np.float32(2)) is a double in
    # Python, 1.4142135623730951)
    x = np.array([2.0, 0.5, 3.25], np.float32)
    got = run_both(python_math_of_float32, [x, np.zeros(3), np.zeros(3, np.float32), 3],
                   cpu_opts({'i': parpy.threads(3)}), rtol=0, atol=0)
    assert got[1][0] == math.sqrt(2.0)


@parpy.jit
def log_with_base(x, b, y, N):
    for i in range(N):
        y[i] = math.log(x[i], b[i])


@pytest.mark.parametrize("x,b,exception,message", [
    (0.0, 2.0, ValueError, "math domain error"),
    (-1.0, 2.0, ValueError, "math domain error"),
    (2.0, 1.0, ZeroDivisionError, "float division by zero"),
])
def test_log_with_a_base_raises_as_python_does(x, b, exception, message):
    # (the two-argument form gave -inf, NaN and inf: the checks were those
    # of one-argument functions only)
    expect_raised(log_with_base, [np.array([8.0, x]), np.array([2.0, b]), np.zeros(2), 2],
                  cpu_opts(), exception, message)
    run_both(log_with_base, [np.array([8.0, 0.5]), np.array([2.0, 10.0]), np.zeros(2), 2],
             cpu_opts())


@parpy.jit
def python_powers(x, y, N, k):
    for i in range(N):
        y[i, 0] = (i - k) ** -1
        y[i, 1] = float(x[i]) ** 0.5
        y[i, 2] = 10.0 ** (i * k * 100)


@pytest.mark.parametrize("x,k,exception,message", [
    (1.0, 1, ZeroDivisionError, "0.0 cannot be raised to a negative power"),
    (-4.0, 3, TypeError, "complex"),
    (1.0, 4, OverflowError, "Numerical result out of range"),
])
def test_powers_of_python_numbers_raise_as_python_does(x, k, exception, message):
    # (C gave inf, NaN and inf)
    args = [np.array([4.0, x]), np.zeros((2, 3)), 2, k]
    with pytest.raises(exception):
        python_powers.py_func(args[0], args[1].copy(), 2, k)
    with pytest.raises(exception, match=message):
        python_powers(*args, opts=cpu_opts())
    run_both(python_powers, [np.array([4.0, 9.0]), np.zeros((2, 3)), 2, 3], cpu_opts())


@parpy.jit
def floors_of_int64(k, y, N):
    for i in range(N):
        y[i, 0] = math.floor(k[i])
        y[i, 1] = math.ceil(k[i])


def test_floor_of_a_numpy_int64_goes_through_its_float_as_python_does():
    # (NumPy ints have no __floor__: math.floor(np.int64(2**53 + 1)) is
    # 2**53; compiled code kept the int, and 2**63 - 1 raised nothing)
    k = np.array([2**53 + 1, -(2**53) - 1, 2**60 + 3], np.int64)
    run_both(floors_of_int64, [k, np.zeros((3, 2), np.int64), 3], cpu_opts())
    expect_raised(floors_of_int64, [np.array([2**63 - 1], np.int64), np.zeros((1, 2), np.int64), 1],
                  cpu_opts(), OverflowError)
