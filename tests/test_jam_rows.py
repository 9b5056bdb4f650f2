"""Rows in pairs on the Cpu backend (`passes::cpu_jam_rows`, with
`passes::lanes`): a parallel loop whose rows read each other's neighbours
runs two rows per iteration side by side, and loads once an element both
read in a step of an inner loop. Each row does its operations in order, on
the same values: bit for bit plain Python's, for any count of rows (the row
left over runs alone); loops whose rows read nothing in common, or that
are not independent rows, are left alone."""

import re

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both


def paired(fn, args, opts, array):
    code = parpy.print_compiled(fn, args, opts)
    return re.search(r"\w+ \+= 2\)", code) is not None and f" {array}_at = " in code


def exact(fn, args, opts):
    return run_both(fn, args, opts, rtol=0, atol=0)


@parpy.jit
def blur_rows(x, y, N, M):
    parpy.label('i')
    for i in range(1, N - 1):
        for j in range(M):
            y[i, j] = 0.25 * x[i - 1, j] + 0.5 * x[i, j] + 0.25 * x[i + 1, j]


@pytest.mark.parametrize("n", [3, 4, 11, 12, 40])
@pytest.mark.parametrize("specialize", [True, False])
def test_a_vertical_stencil_is_bit_identical(n, specialize):
    rng = np.random.default_rng(n)
    m = 21
    args = [rng.standard_normal((n, m)), np.zeros((n, m)), n, m]
    opts = cpu_opts({'i': parpy.threads(n)}, specialize_scalars=specialize)
    exact(blur_rows, args, opts)
    # with the rows known when compiling, fewer than eight stay as they are
    assert paired(blur_rows, args, opts, "x") == (not specialize or n - 2 >= 8)


@parpy.jit
def blur_slices(x, y, N, M):
    parpy.label('i')
    parpy.label('j')
    y[1:-1, :] = 0.25 * x[:-2, :] + 0.5 * x[1:-1, :] + 0.25 * x[2:, :]


@pytest.mark.parametrize("inner", [False, True])
@pytest.mark.parametrize("n", [11, 12])
def test_a_stencil_of_slices_is_paired(inner, n):
    # rows `1 + j` of a slice statement; the columns an inner parallel level
    rng = np.random.default_rng(n)
    m = 19
    args = [rng.standard_normal((n, m)), np.zeros((n, m)), n, m]
    spec = {'i': parpy.threads(n)}
    if inner:
        spec['j'] = parpy.threads(m)
    opts = cpu_opts(spec)
    exact(blur_slices, args, opts)
    assert paired(blur_slices, args, opts, "x")


@parpy.jit
def matvec_rows(A, x, y, N, M):
    parpy.label('i')
    for i in range(N):
        # (a Python int: the accumulator takes the elements' type; a float
        # one stored into int64 `y` is checked as NumPy's int(v))
        acc = 0
        for j in range(M):
            acc += A[i, j] * x[j]
        y[i] = acc


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("n", [9, 16])
def test_rows_with_their_own_accumulators(dtype, n):
    # two running sums side by side, each in its order; x[j] loaded once
    rng = np.random.default_rng(7)
    m = 37
    A = (rng.standard_normal((n, m)) * 8).astype(dtype)
    x = (rng.standard_normal(m) * 8).astype(dtype)
    args = [A, x, np.zeros(n, dtype), n, m]
    opts = cpu_opts({'i': parpy.threads(n)})
    exact(matvec_rows, args, opts)
    assert paired(matvec_rows, args, opts, "x")


@parpy.jit
def two_apart(x, y, N, M):
    parpy.label('i')
    for i in range(1, N - 1):
        for j in range(M):
            y[i, j] = x[i - 1, j] - x[i + 1, j]


@parpy.jit
def under_a_branch(x, y, N, M):
    parpy.label('i')
    for i in range(N - 1):
        for j in range(M):
            y[i, j] = x[i + 1, j] if j > 2 else x[i, j] * 2.0


@parpy.jit
def row_sums_then_scale(x, y, N, M):
    parpy.label('i')
    for i in range(N):
        s = 0.0
        for j in range(M):
            s += x[i, j]
        for j in range(M):
            y[i, j] = x[i, j] / s


@parpy.jit
def rows_with_a_local_array(x, y, N, M):
    parpy.label('i')
    for i in range(1, N - 1):
        t = np.zeros(8)
        for j in range(8):
            t[j] = x[i - 1, j] + x[i, j]
        y[i, 0:8] = t * 2.0


@pytest.mark.parametrize("fn", [two_apart, under_a_branch, row_sums_then_scale,
                                rows_with_a_local_array])
def test_rows_without_shared_reads_stay(fn):
    # two rows apart; a read only some steps make; each row reads its own;
    # a local array, one per row (the rows of a pair would share it)
    rng = np.random.default_rng(2)
    n, m = 20, 9
    args = [rng.random((n, m)) + 1.0, np.zeros((n, m)), n, m]
    opts = cpu_opts({'i': parpy.threads(n)})
    exact(fn, args, opts)
    assert "i += 2)" not in parpy.print_compiled(fn, args, opts)


@parpy.jit
def reads_the_next_row(x, y, N, M):
    parpy.label('i')
    for i in range(N):
        for j in range(M):
            y[i, j] = x[i, j] + x[i + 1, j]


def test_an_index_past_the_end_still_raises():
    # the last row reads row N: the pairs keep the run-time check
    n, m = 10, 4
    opts = cpu_opts({'i': parpy.threads(n)}, specialize_scalars=False)
    with pytest.raises(IndexError):
        reads_the_next_row(np.zeros((n, m)), np.zeros((n, m)), n, m, opts=opts)
    # one row fewer is in bounds, and paired
    args = [np.arange(n * m, dtype=np.float64).reshape(n, m), np.zeros((n, m)), n - 1, m]
    exact(reads_the_next_row, args, opts)
    assert paired(reads_the_next_row, args, opts, "x")
