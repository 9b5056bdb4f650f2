"""Stores through a boolean mask: `t[t < 0] = 0.0`, `y[i, x[i, :] > 0.5] =
v`, `y[i, m] += 1` (the mask the last index, one value): NumPy's store into
the elements where the mask is true. Each program runs as plain Python (the
reference) and compiled (conftest.run_both), compared bit for bit."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both

N, M = 5, 8


def _x(seed):
    x = np.random.default_rng(seed).standard_normal((N, M))
    x[1, 2] = np.nan
    return x


@parpy.jit
def masked_rows(x, y, N):
    parpy.label('i')
    for i in range(N):
        t = x[i, :].copy()
        t[t < 0] = 0.0
        m = x[i, :] > 0.5
        y[i, :] = t
        y[i, m] = x[i, 0]
        y[i, np.isnan(x[i, :])] = -1.0
        y[i, x[i, :] < -0.5] += 10


def test_a_masked_store_writes_where_the_mask_is_true():
    x = _x(1)
    got = run_both(masked_rows, [x, np.zeros((N, M)), N], cpu_opts({'i': parpy.threads(N)}),
                   rtol=0, atol=0)
    assert got[1][1, 2] == -1.0


@parpy.jit
def masked_matrix(x, y, N):
    parpy.label('i')
    x[x < 0] = -1.0
    parpy.label('i')
    for i in range(N):
        y[i, :] = x[i, :]
    parpy.label('i')
    y[y > 1.0] *= 0.5


def test_a_mask_of_a_whole_matrix_stands_for_both_dimensions():
    x = _x(2)
    got = run_both(masked_matrix, [x, np.zeros((N, M)), N], cpu_opts({'i': parpy.threads(N)}),
                   rtol=0, atol=0)
    assert not (got[0] < -1.0).any()


@parpy.jit
def mask_not_last(x, y, N):
    for i in range(N):
        y[x[:, 0] > 0, i] = 1.0


@parpy.jit
def mask_of_values(x, y, N):
    for i in range(N):
        y[i, x[i, :] > 0] = x[i, :]


@parpy.jit
def index_array(x, y, N):
    for i in range(N):
        y[i, x[i, :].astype(np.int64)] = 1.0


@parpy.jit
def masked_read(x, y, N):
    for i in range(N):
        y[i, 0] = np.sum(x[i, x[i, :] > 0])


@parpy.jit
def masked_read_of_a_row(x, y, N):
    for i in range(N):
        r = x[i, :]
        y[i, 0] = np.max(r[1:][r[1:] > 0.5])


@parpy.jit
def bool_scalar_index(x, y, N):
    for i in range(N):
        y[i, 0] = x[i, x[i, 0] > 0]


@pytest.mark.parametrize("fn,message", [
    # (these summed `x[i, 0]` or `x[i, 1]` per element before: the mask
    # was taken for integer indices)
    (masked_read, "a boolean index selects elements (a mask), which parpy supports only in a store"),
    (masked_read_of_a_row,
     "a boolean index selects elements (a mask), which parpy supports only in a store"),
    (bool_scalar_index,
     "a boolean index selects elements (a mask), which parpy supports only in a store"),
    (mask_not_last, "a boolean mask is supported as the last index of a store in parpy functions"),
    (mask_of_values, "a masked store takes one value in parpy functions"),
    (index_array, "an array of indices is not supported as an index in parpy functions"),
])
def test_what_a_masked_store_cannot_be_is_a_located_error(fn, message):
    with pytest.raises(parpy.CompileError) as e:
        fn(np.zeros((N, N)), np.zeros((N, N)), N, opts=cpu_opts())
    assert str(e.value).splitlines()[0] == "error: " + message, str(e.value)
    assert "test_masks.py:" in str(e.value), str(e.value)
