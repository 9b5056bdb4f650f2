"""Python evaluates each operand once: the index of an augmented assignment
(`y[nxt(c)] += v` reads and writes one element, calling `nxt` once) and the
middle operand of a chained comparison (`0.0 < bump(c, v) < 1.0` calls
`bump` once). parpy evaluated them twice, so a helper that changes an
array gave other answers (a counter at 8 where Python has 4), silently."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both


@parpy.jit
def nxt(c):
    c[0] += 1
    return c[0] - 1


@parpy.jit
def bump(c, v):
    c[0] += 1
    return v * c[0]


def _scatter_add(x, y, c, N):
    for i in range(N):
        y[nxt(c)] += x[i]
        y[nxt(c), 0] *= 2.0


def _chained(x, y, c, N):
    for i in range(N):
        y[i] = 0.0 < bump(c, x[i]) < 1.0
        y[i + N] = -1.0 < x[i] <= nxt(c) < 100


def plain(fn, args):
    """`fn` as Python runs it: the helpers called as plain functions."""
    g = dict(fn.__globals__)
    g.update(nxt=nxt.py_func, bump=bump.py_func)
    f = type(fn)(fn.__code__, g)
    f(*args)


def test_an_augmented_index_is_evaluated_once():
    x = np.arange(1.0, 5.0)
    got = [x, np.zeros((10, 1)), np.zeros(1, np.int64), 4]
    ref = [a.copy() if isinstance(a, np.ndarray) else a for a in got]
    parpy.jit(_scatter_add)(*got, opts=cpu_opts())
    plain(_scatter_add, ref)
    assert got[2][0] == ref[2][0] == 8
    np.testing.assert_array_equal(got[1], ref[1])


def test_a_chained_comparison_evaluates_its_middle_once():
    x = np.array([0.1, 0.2, 0.3, 0.4])
    got = [x, np.zeros(8, bool), np.zeros(1, np.int64), 4]
    ref = [a.copy() if isinstance(a, np.ndarray) else a for a in got]
    parpy.jit(_chained)(*got, opts=cpu_opts())
    plain(_chained, ref)
    assert got[2][0] == ref[2][0] == 8
    np.testing.assert_array_equal(got[1], ref[1])


def _while_called(c, y):
    with parpy.gpu:
        n = 0
        while -1 < nxt(c) < 4:
            n += 1
        y[0] = n


def test_a_while_condition_that_calls_a_helper_runs_it_once_per_test():
    got = [np.zeros(1, np.int64), np.zeros(1, np.int64)]
    ref = [a.copy() for a in got]
    parpy.jit(_while_called)(*got, opts=cpu_opts())
    plain(_while_called, ref)
    assert [got[0][0], got[1][0]] == [ref[0][0], ref[1][0]] == [5, 4]


def _while_reduced(x, y, d, N):
    parpy.label('i')
    for i in range(N):
        n = 0
        v = 1000
        while v // d > 0 and x[i, :].sum() > n:
            v = v // d
            n += 1
        y[i] = n


def test_a_while_condition_may_reduce_and_check():
    # a reduction and Python's ZeroDivisionError check of `v // d` in the
    # condition run before each test (they were refused: "reductions in a
    # `while` condition are not supported")
    x = np.arange(20.0).reshape(4, 5) / 10
    o = cpu_opts({'i': parpy.threads(4)}, specialize_scalars=False)
    got = [x, np.zeros(4, np.int64), 3, 4]
    ref = [x, np.zeros(4, np.int64), 3, 4]
    parpy.jit(_while_reduced)(*got, opts=o)
    _while_reduced(*ref)
    assert got[1].tolist() == ref[1].tolist() == [1, 4, 6, 6]
    import pytest
    with pytest.raises(ZeroDivisionError, match="by zero"):
        parpy.jit(_while_reduced)(x, np.zeros(4, np.int64), 0, 4, opts=o)


@parpy.jit
def chained_store_into_int8(o, y, N):
    parpy.label('i')
    for i in range(N):
        u = o[i] = i * 50
        y[i] = u


def test_a_chained_assignment_checks_the_value_it_stores():
    """`u = o[i] = i * 50` of an int8 `o` computes the value into a
    temporary; the check that the Python int fits int8 was placed before
    that temporary's assignment: it read the previous iteration's value
    (150 was stored as -106 without Python's OverflowError), and in a
    parallel loop the race check refused the program, naming `u_new`."""
    o, y = np.zeros(3, np.int8), np.zeros(3, np.int64)
    got = run_both(chained_store_into_int8, [o, y, 3], cpu_opts({'i': parpy.threads(3)}))
    assert got[0].tolist() == [0, 50, 100] and got[1].tolist() == [0, 50, 100]
    with pytest.raises(OverflowError, match="Python integer out of bounds for int8"):
        chained_store_into_int8(np.zeros(4, np.int8), np.zeros(4, np.int64), 4,
                                opts=cpu_opts({'i': parpy.threads(1)}))
