"""`np.arange(...)` read by an array expression inside jit code
(`y[i, :] = x[i, :] * np.arange(10)`, `np.sum(np.arange(n) * x[i, :])`):
NumPy's elements (its length, its type, its fill `start + i * delta`)
computed where the expression reads them; the bounds are numbers known
when compiling. Compared with plain Python."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both, same_bits


@parpy.jit
def moments(x, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = x[i, :] * np.arange(10)
        z[i, 0] = np.sum(np.arange(10) * x[i, :])
        z[i, 1] = np.sum(np.arange(1, 11) ** 2 * x[i, :]) / np.sum(x[i, :])
        z[i, 2] = np.sum(np.arange(0.1, 1.0, 0.1) + x[i, 1:])
        z[i, 3] = np.max(np.arange(9, -1, -1) - x[i, :])
        z[i, 4] = np.sum(np.arange(0.5, 5.4, 0.5) * x[i, :])


@parpy.jit
def fills(y, k, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.arange(0.1, 1.0, 0.09)
        k[i, :] = np.arange(-3, 17, 2) + i


def test_numpys_elements_where_an_expression_reads_them():
    # (was "`np.arange` allocates a new array, which jit code cannot do")
    x = np.random.default_rng(3).random((4, 10))
    opts = cpu_opts({'i': parpy.threads(4)})
    y, z = run_both(moments, [x, np.zeros((4, 10)), np.zeros((4, 5)), 4], opts)[1:3]
    same_bits(y, x * np.arange(10), opts)
    same_bits(z, np.stack([np.sum(np.arange(10) * x, 1),
                           np.sum(np.arange(1, 11) ** 2 * x, 1) / np.sum(x, 1),
                           np.sum(np.arange(0.1, 1.0, 0.1) + x[:, 1:], 1),
                           np.max(np.arange(9, -1, -1) - x, 1),
                           np.sum(np.arange(0.5, 5.4, 0.5) * x, 1)], 1), opts)


def test_numpys_float_fill_and_integer_type():
    opts = cpu_opts({'i': parpy.threads(3)})
    y, k = run_both(fills, [np.zeros((3, 10)), np.zeros((3, 10), np.int64), 3], opts)[:2]
    same_bits(y[0], np.arange(0.1, 1.0, 0.09), opts)
    assert np.array_equal(k[2], np.arange(-3, 17, 2) + 2)


def test_misuse_is_refused_with_what_to_write():
    @parpy.jit
    def typed(y):
        parpy.label('i')
        for i in range(1):
            y[:] = np.arange(4, dtype=np.float32)

    @parpy.jit
    def moving(y, n):
        parpy.label('i')
        for i in range(1):
            y[:] = np.arange(n * 1.5)

    opts = cpu_opts({'i': parpy.threads(1)})
    with pytest.raises(parpy.CompileError, match="takes its bounds by position") as e:
        typed(np.zeros(4, np.float32), opts=opts)
    assert "keyword argument `dtype`" in str(e.value)
    # a specialized `n` is known when compiling, and so is `n * 1.5`
    y = np.zeros(4)
    moving(y, 2.5, opts=opts)
    assert y.tolist() == np.arange(2.5 * 1.5).tolist()
    with pytest.raises(parpy.CompileError, match="must be a number known when compiling"):
        moving(np.zeros(4), 2.5, opts=cpu_opts({'i': parpy.threads(1)}, specialize_scalars=False))


@parpy.jit
def named(x, y, flags, N):
    parpy.label('i')
    for i in range(N):
        k = np.arange(10)
        y[i, :] = x[i, :] * k
        flags[i] = np.any(np.arange(10) > x[i, 3] * 10)


def test_a_local_and_a_test_of_it():
    # (`k = np.arange(10)` was "allocates a new array"; `np.any` of it
    # took it for a number)
    x = np.random.default_rng(4).random((4, 10))
    run_both(named, [x, np.zeros((4, 10)), np.zeros(4, bool), 4],
             cpu_opts({'i': parpy.threads(4)}), rtol=0, atol=0)
