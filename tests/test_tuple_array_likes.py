"""A tuple literal passed to a NumPy function where it takes an array-like
is NumPy's 1-D array of its items, as the list literal is
(`np.max((x[i], 0.5))` is `np.max([x[i], 0.5])`); checked against the
plain function (`py_func`)."""

import math

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, py_func


@parpy.jit
def tuple_reductions(x, o, N):
    for i in range(N):
        o[i, 0] = np.max((x[i], 0.5))
        o[i, 1] = np.sum((x[i], 1.0, 2.0))
        o[i, 2] = np.mean((x[i], 1.0, 2.0)) + np.min((x[i], -1.0))
        o[i, 3] = np.dot((x[i], 1.0), (2.0, x[i]))
        o[i, 4] = np.var((x[i], 1.0), ddof=1)
        o[i, 5] = np.interp(x[i], (0.0, 1.0), (5.0, 7.0))
        o[i, 6] = np.polyval((1.0, 2.0, 3.0), x[i])
        o[i, 7] = np.maximum((x[i], 1.0), (2.0, 3.0))[0]


def test_a_tuple_is_an_array_like_as_the_list_is():
    x = np.array([0.25, 0.75, -3.5])
    got = np.zeros((3, 8))
    want = np.zeros((3, 8))
    tuple_reductions(x, got, 3, opts=cpu_opts())
    py_func(tuple_reductions)(x, want, 3)
    assert got.tobytes() == want.tobytes(), (got, want)


@parpy.jit
def tuple_as_a_number(x, o, N):
    for i in range(N):
        o[i] = math.sqrt((x[i], 1.0))


def test_a_tuple_elsewhere_is_still_refused():
    # (Python's `math.sqrt` of a tuple raises TypeError)
    with pytest.raises(parpy.CompileError, match="tuple"):
        tuple_as_a_number(np.zeros(2), np.zeros(2), 2, opts=cpu_opts())
