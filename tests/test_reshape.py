"""`a.reshape(d0, d1)` (a tuple too, one -1 inferred), `np.reshape(a,
shape)`, `a.ravel()`, `a.flatten()`, `np.ravel(a)` read by an array
expression: NumPy's elements of `a` in row-major order, in the new shape,
each read where the expression reads it. Each program runs as plain Python
(the reference) and compiled (conftest.run_both), compared bit for bit."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both

N = 4


@parpy.jit
def reshaped(x, x3, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0, :2] = x[i, :].reshape(2, 4).sum(axis=1)
        y[i, 1, :4] = np.reshape(x[i, :], (2, 4)).max(axis=0)
        y[i, 2, :6] = x3[i].ravel() * 2.0
        y[i, 3, :6] = np.ravel(x3[i, :, :])
        y[i, 4, :6] = x3[i].flatten()
        t = x[i, :].reshape(4, -1)
        y[i, 5, :4] = t[:, 1]
        y[i, 6, 0] = x3[i].reshape(6)[5] + x[i, :].reshape((2, 2, 2))[1, 0, 1]
        y[i, 7, :4] = (x[i, :] * 3.0).reshape(2, 4)[1, :]


def test_a_reshaped_array_reads_the_elements_in_row_major_order():
    rng = np.random.default_rng(12)
    x, x3 = rng.standard_normal((N, 8)), rng.standard_normal((N, 2, 3))
    x[1, 5] = np.nan
    run_both(reshaped, [x, x3, np.zeros((N, 8, 8)), N], cpu_opts({'i': parpy.threads(N)}),
             rtol=0, atol=0)


@parpy.jit
def wrong_size(x, y, N):
    for i in range(N):
        y[i, :3] = x[i, :].reshape(3, 3)[0]


@parpy.jit
def unknown_shape(x, y, N):
    for i in range(N):
        y[i, :] = x[i, :].reshape(i, -1)[0]


@parpy.jit
def size_past_int64(x, y, N):
    # (2**32 * 2**32 wrapped to 0 elements: the reshape of an empty row
    # passed its check, and the sum ran ~2**64 iterations)
    for i in range(N):
        y[i, 0] = x[i, :0].reshape(2**32, 2**32).sum()


@parpy.jit
def too_big_to_make(x, y, N):
    # (the sum of 2**64 ones ran no iteration and gave 0.0)
    for i in range(N):
        y[i, 0] = np.ones((2**32, 2**32)).sum()


@pytest.mark.parametrize("fn,message", [
    (wrong_size, "cannot reshape an array of 8 elements into shape (3, 3)"),
    (unknown_shape, "the new shape of a reshape must be known when compiling"),
    (size_past_int64, "cannot reshape an array of 0 elements into shape (4294967296, 4294967296)"),
    (too_big_to_make, "array is too big (`np.ones` of shape (4294967296, 4294967296))"),
])
def test_what_a_reshape_cannot_be_is_a_located_error(fn, message):
    with pytest.raises(parpy.CompileError) as e:
        fn(np.zeros((N, 8)), np.zeros((N, 8)), N, opts=cpu_opts())
    assert str(e.value).splitlines()[0] == "error: " + message, str(e.value)
    assert "test_reshape.py:" in str(e.value), str(e.value)
