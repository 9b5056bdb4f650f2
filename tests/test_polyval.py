"""`np.polyval(p, x)`: NumPy's Horner loop over the coefficients (a 1-D
array or slice, or a list of numbers), `x` a number or an array read by
an array expression, in NumPy's types (a Python number `x` of its default
type; `y` starting at zero of `x`'s type). Each program runs as plain
Python (the reference) and compiled, compared bit for bit."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both, same_bits

N = 4


@parpy.jit
def polynomials(x, c, k, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.polyval([1.0, -2.0, 0.5], x[i, 0])
        y[i, 1] = np.polyval(x[i, 0:4], x[i, 5])
        y[i, 2] = np.polyval(c[i, :], x[i, 1]) + np.polyval([3, 1, 2], x[i, 2])
        y[i, 3] = np.polyval(x[i, 0:3], 2) + np.polyval([-0.0], x[i, 3])
        y[i, 4:8] = np.polyval(c[0, :], x[i, 0:4] * 2.0)
        z[i, 0] = np.polyval([3, 1, 2], k[i, 0])
        z[i, 1] = np.polyval(k[i, 0:3], k[i, 4])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_polyval_is_numpys_horner_loop(dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, 8)).astype(dtype)
    c = rng.standard_normal((N, 3)).astype(np.float32)
    k = rng.integers(-9, 9, (N, 8)).astype(np.int8)
    want_y = np.zeros((N, 8))
    args = [x, c, k, want_y, np.zeros((N, 2), np.int64), N]
    got = run_both(polynomials, args, cpu_opts({'i': parpy.threads(N)}))
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    polynomials.py_func(*want)
    same_bits(got[3], want[3], cpu_opts())


@parpy.jit
def polyval_of_a_matrix(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.polyval(x[0:2, 0:2], x[i, 0])


def test_polyval_takes_1d_coefficients():
    with pytest.raises(parpy.CompileError) as e:
        polyval_of_a_matrix(np.ones((N, 4)), np.zeros(N), N, opts=cpu_opts({'i': parpy.threads(N)}))
    assert "`np.polyval` takes its coefficients as a 1-D array or a list of numbers" in str(e.value)
    assert "test_polyval.py:" in str(e.value)
