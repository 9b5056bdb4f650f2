"""`np.eye`, `np.identity`, `np.tri`, `np.triu` and `np.tril` read by an
array expression: NumPy's matrices, each element computed where the
expression reads it (`c - r == k`, `c - r <= k`; `triu`/`tril` keep the
elements on their side of the `k`-th diagonal, zeros of the array's type
elsewhere). Each program runs as plain Python (the reference) and
compiled (conftest.run_both), compared bit for bit."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both

N = 4


@parpy.jit
def diagonals(x, k, y, yi, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0, :, :] = np.eye(3, 4) * x[i, 0, 0]
        y[i, 1, :, :] = np.eye(3, 4, k=1) + np.eye(3, 4, -i)
        y[i, 2, :, :] = np.identity(4)[0:3, :] - x[i, 0:3, 0:4] * np.tri(3, 4, 1)
        y[i, 3, :, :] = np.tri(3, M=4, k=i - 2, dtype=np.float32) * 0.5
        yi[i, :, :] = np.eye(3, dtype=np.int32) * k[i] + np.tri(3, dtype=int)
        t = np.eye(3, 4)
        t[0, 3] = x[i, 1, 1]
        y[i, 4, :, :] = t
        y[i, 5, 0, 0] = np.sum(np.eye(4) * x[i, 0:4, 0:4])


def test_eye_identity_and_tri():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, 4, 4))
    k = rng.integers(-9, 9, N)
    run_both(diagonals, [x, k, np.zeros((N, 6, 3, 4)), np.zeros((N, 3, 3), np.int64), N],
             cpu_opts({'i': parpy.threads(N)}))


@parpy.jit
def triangles(x, b, y, c, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0, :, :] = np.triu(x[i, 0:3, :])
        y[i, 1, :, :] = np.triu(x[i, 1:4, :], 1) + np.tril(x[i, 0:3, :], k=-1)
        y[i, 2, :, :] = np.tril(x[i, 0:3, :] * 2.0, i - 2)
        y[i, 3, :, :] = np.triu(np.tril(x[i, 0:3, :], 1), -1)
        c[i, :, :, :] = np.triu(b[i, :, :, :])


def test_triu_and_tril_of_slices_and_expressions():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((N, 4, 4))
    x[0, 0, 1] = -0.0
    b = rng.random((N, 2, 3, 3)) > 0.3
    run_both(triangles, [x, b, np.zeros((N, 4, 3, 4)), np.zeros((N, 2, 3, 3), bool), N],
             cpu_opts({'i': parpy.threads(N)}))


@parpy.jit
def triu_of_a_row(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.triu(x[i, :])


@parpy.jit
def eye_of_a_runtime_size(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :, :] = np.eye(i)


@parpy.jit
def eye_with_a_misspelled_keyword(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :, :] = np.eye(3, m=3)


@pytest.mark.parametrize("fn,message", [
    (triu_of_a_row, "`np.triu` takes an array of at least 2 dimensions"),
    (eye_of_a_runtime_size, "the size of `np.eye` must be an integer known when compiling"),
    (eye_with_a_misspelled_keyword, "`np.eye` has no parameter `m`"),
])
def test_what_a_triangle_cannot_be_is_a_located_error(fn, message):
    with pytest.raises(parpy.CompileError) as e:
        fn(np.ones((N, 3)), np.zeros((N, 3, 3)), N, opts=cpu_opts({'i': parpy.threads(N)}))
    assert message in str(e.value), str(e.value)
    assert "test_eye.py:" in str(e.value), str(e.value)
