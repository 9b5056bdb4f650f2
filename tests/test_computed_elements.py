"""An element of a computed array (`np.diff(u[i, :])[0]`, `(x[i, :] *
2)[-1]`, `a[i].sum(axis=0)[j]`, `np.outer(p, q)[2, 1]`) and of a tuple
(`divmod(a, b)[0]`, `h(x)[1]` of a helper that returns a pair), as NumPy
and Python give them: nothing is allocated, the expression is evaluated
at that element. Compared with plain Python; an index that cannot be
checked (a slice, a run-time index not known to be in range) is refused
at the line."""

import re

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both

N = 3


def _par():
    return cpu_opts({'i': parpy.threads(N)})


@parpy.jit
def pair(a, b):
    return a + b, a * b


@parpy.jit
def elements(x, a, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.diff(x[i, :])[0] + (x[i, :] * 2.0)[-2]
        y[i, 1] = a[i].sum(axis=0)[1] * np.outer(a[i, 0], a[i, 1])[2, -1]
        y[i, 2] = np.flip(x[i, 1:])[0] + np.diff(x[i, :], 2)[-1]
        y[i, 3] = divmod(x[i, 3], 0.25)[0] + divmod(x[i, 4], 0.25)[-1] + pair(x[i, 0], 3.0)[1]
        for j in range(4):
            z[i, j] = (x[i, 1:] - x[i, :-1])[j] * a[i].max(axis=1)[j]


def test_elements_of_computed_arrays_and_tuples_are_pythons():
    rng = np.random.default_rng(9)
    x, a = rng.standard_normal((N, 6)), rng.standard_normal((N, 4, 4))
    y, z = run_both(elements, [x, a, np.zeros((N, 4)), np.zeros((N, 4)), N], _par(), rtol=0,
                    atol=0)[2:4]
    assert np.array_equal(y[:, 0], np.diff(x)[:, 0] + (x * 2.0)[:, -2])
    assert np.array_equal(z, (x[:, 1:5] - x[:, :4]) * a.max(axis=2))


@parpy.jit
def slice_of_a_product(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = (x[i, :] * 2.0)[1:]


def test_a_slice_of_a_computed_array_reads_the_array_made_first():
    # (it was refused; `sema/hoist.rs` names the product first)
    x = np.random.default_rng(7).standard_normal((N, 6))
    run_both(slice_of_a_product, [x, np.zeros((N, 5)), N], cpu_opts({'i': parpy.threads(N)}),
             rtol=0, atol=0)


@parpy.jit
def past_the_end(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.diff(x[i, :])[5]


@parpy.jit
def unknown_index(x, k, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.diff(x[i, :])[k]


@parpy.jit
def number_indexed(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.sum(x[i, :])[0]


@parpy.jit
def too_few_indices(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.outer(x[i, :], x[i, :])[0]


@parpy.jit
def tuple_past_the_end(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = divmod(x[i, 0], 2.0)[2]


@pytest.mark.parametrize("fn, args, message", [
    (past_the_end, [np.zeros((N, 6)), np.zeros(N)],
     r"index 5 is out of bounds for a dimension of size 5 of this computed array"),
    (number_indexed, [np.zeros((N, 6)), np.zeros(N)], r"a number cannot be indexed"),
    (too_few_indices, [np.zeros((N, 6)), np.zeros(N)],
     r"this computed array has 2 dimensions but 1 index was given"),
    (tuple_past_the_end, [np.zeros((N, 6)), np.zeros(N)],
     r"tuple index 2 is out of range for a tuple of 2"),
])
def test_an_index_that_cannot_be_checked_is_refused(fn, args, message):
    opts = _par()
    opts.specialize_scalars = False
    with pytest.raises(parpy.CompileError, match=message):
        parpy.print_compiled(fn, [*args, N], opts)


@pytest.mark.parametrize("k", [0, 4, -1, -5])
def test_a_run_time_index_of_a_computed_array_in_range(k):
    # (was "an index of a computed array must be known to be in range")
    x = np.random.default_rng(4).random((N, 6))
    opts = _par()
    opts.specialize_scalars = False
    run_both(unknown_index, [x, k, np.zeros(N), N], opts)


@parpy.jit
def list_item(k, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = [0.5, 1.5, 2.5][k[i]]


@pytest.mark.parametrize("fn, k, message", [
    (unknown_index, 5, "index 5 is out of bounds for axis 0 with size 5"),
    (unknown_index, -6, "index -6 is out of bounds for axis 0 with size 5"),
    (list_item, np.array([0, 1, 3, 2]), "list index out of range"),
])
def test_a_run_time_index_out_of_a_computed_array_raises_index_error(fn, k, message):
    args = [np.zeros((N, 6)), k, np.zeros(N)] if fn is unknown_index else [k, np.zeros(N)]
    with pytest.raises(IndexError, match=re.escape(message)):
        fn.py_func(*args, N)
    opts = _par()
    opts.specialize_scalars = False
    with pytest.raises(IndexError, match=re.escape(message)):
        fn(*args, N, opts=opts)


def test_elements_compile_for_cuda_and_metal():
    check_gpu_code(elements, lambda backend: [
        np.zeros((N, 6), np.float32), np.zeros((N, 4, 4), np.float32),
        np.zeros((N, 4), np.float32), np.zeros((N, 4), np.float32), N],
        {'i': parpy.threads(N)}, "elements")
