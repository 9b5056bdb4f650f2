"""New arrays read by array expressions: `np.linspace(start, stop, num)`
(bounds maybe known only at run time, `endpoint=`, `dtype=`), and
`np.zeros`/`np.ones`/`np.full` and their `_like` forms inside an expression
(`np.maximum(s, np.zeros(8))`, `np.ones_like(s).sum()`). NumPy allocates
them; parpy computes each element where the expression reads it, with
NumPy's arithmetic (linspace's step, its small-step path, its end point).
Each program runs as plain Python (the reference) and compiled
(conftest.run_both), compared bit for bit."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both

N, M = 5, 8


def _x(seed, dtype=np.float64):
    return (np.random.default_rng(seed).random((N, M)) - 0.3).astype(dtype)


@parpy.jit
def ramps(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0, :] = np.linspace(0.0, 1.0, 8)
        y[i, 1, :] = np.linspace(x[i, 0], x[i, 1], 8)
        y[i, 2, :] = np.linspace(x[i, 0], 3, 8, endpoint=False)
        y[i, 3, :] = np.linspace(x[i, 2], x[i, 2], num=8)
        # a step too small to divide: (k / 7) * delta + start
        y[i, 4, :] = np.linspace(0.0, 5e-324, 8) + x[i, 3] * 0.0
        y[i, 5, :1] = np.linspace(x[i, 4], 7.0, 1)
        t = np.linspace(0.0, x[i, 5], x.shape[1])
        y[i, 6, :] = t * 2.0


def test_linspace_is_numpys_ramp():
    run_both(ramps, [_x(1), np.zeros((N, 7, M)), N], cpu_opts({'i': parpy.threads(N)}),
             rtol=0, atol=0)


@parpy.jit
def weighted(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.sum(np.linspace(-1.0, x[i, 6], 8) * x[i, :])


def test_a_reduction_reads_a_ramp():
    # (NumPy's pairwise sum on the Cpu; a GPU adds in its own order)
    run_both(weighted, [_x(5), np.zeros(N), N], cpu_opts({'i': parpy.threads(N)}))


@parpy.jit
def typed_ramps(x, y, k, N):
    parpy.label('i')
    for i in range(N):
        # float32 bounds make a float32 ramp; a dtype converts NumPy's
        # float64 one; an integer dtype takes its floor
        y[i, 0, :] = np.linspace(x[i, 0], 1.0, 8)
        y[i, 1, :] = np.linspace(0.0, 1.0, 8, dtype=np.float32) * x[i, :]
        k[i, :] = np.linspace(0, 100 * x[i, 1], 8, dtype=np.int64)


def test_linspace_takes_numpys_types():
    x = _x(2, np.float32)
    run_both(typed_ramps, [x, np.zeros((N, 2, M), np.float32), np.zeros((N, M), np.int64), N],
             cpu_opts({'i': parpy.threads(N)}), rtol=0, atol=0)


@parpy.jit
def fills(x, y, k, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0, :] = np.full(8, 3.0)
        y[i, 1, :] = np.full(8, x[i, 0]) + x[i, :]
        y[i, 2, :] = np.maximum(x[i, :], np.zeros(8))
        y[i, 3, 0] = np.ones_like(x[i, :]).sum() + np.ones((2, 4)).sum()
        y[i, 4, :] = x[i, :] + np.zeros_like(x[i, :], dtype=np.float32)
        y[i, 5, :] = np.full_like(x[i, :], 0.5, dtype=np.float32) * x[i, :]
        k[i, :] = np.full_like(k[i, :], 7) - np.ones(8, dtype=np.int8)


def test_zeros_ones_and_full_are_values_in_an_expression():
    run_both(fills, [_x(3), np.zeros((N, 6, M)), np.zeros((N, M), np.int64), N],
             cpu_opts({'i': parpy.threads(N)}), rtol=0, atol=0)


@parpy.jit
def fill_products(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.dot(x[i, :], np.ones(M))
        y[i, 1] = x[i] @ np.full(M, 0.5)
        y[i, 2] = np.dot(np.ones((M,)), x[i])
        y[i, 3] = np.ones_like(x[i, :]) @ x[i, :]
        y[i, 4:6] = np.ones((2, M), np.float32) @ x[i, :]
        y[i, 6] = x[i].dot(np.zeros(M) + 2.0)


def test_a_fill_is_an_operand_of_a_product():
    # the rank of a fill is its shape's length (it was read as a number:
    # "`x` has 2 dimensions but 1 index was given", "`@` of a number")
    run_both(fill_products, [_x(6), np.zeros((N, 7)), N], cpu_opts({'i': parpy.threads(N)}))


@parpy.jit
def empty_read(x, y, N):
    for i in range(N):
        y[i, :] = np.empty(8)


@parpy.jit
def linspace_pair(x, y, N):
    for i in range(N):
        y[i, :] = np.linspace(0.0, 1.0, 8, retstep=True)


@parpy.jit
def linspace_of_a_row(x, y, N):
    for i in range(N):
        y[i, :] = np.linspace(x[i, :], 1.0, 8)


@parpy.jit
def linspace_unknown_num(x, y, N):
    for i in range(N):
        y[i, :] = np.linspace(0.0, 1.0, i)


@pytest.mark.parametrize("fn,message", [
    (empty_read, "`np.empty` read in an expression has no values"),
    (linspace_pair, "`np.linspace(..., retstep=True)` returns a pair"),
    (linspace_of_a_row, "`np.linspace` takes numbers as `start` and `stop` in parpy functions"),
    (linspace_unknown_num, "`num` of `np.linspace` must be an integer known when compiling"),
])
def test_what_a_fill_cannot_be_is_a_located_error(fn, message):
    with pytest.raises(parpy.CompileError) as e:
        fn(_x(4), np.zeros((N, M)), N, opts=cpu_opts())
    assert str(e.value).splitlines()[0] == "error: " + message, str(e.value)
    assert "test_fills.py:" in str(e.value), str(e.value)
