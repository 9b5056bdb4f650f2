"""`np.searchsorted(s, v, side)` inside jit code, `s` a 1-D slice and `v` a
number, or elementwise a slice or array: NumPy's index, found by NumPy's own binary search (so an unsorted
`s` gives NumPy's index too), comparing in the common type of `s` and `v`
with NaN after every number. The binning step of a histogram. Compared
with plain Python."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both


@parpy.jit
def bin_of(edges, x, left, right, N):
    parpy.label('i')
    for i in range(N):
        left[i] = np.searchsorted(edges, x[i])
        right[i] = np.searchsorted(edges[1:], x[i], side='right')


@parpy.jit
def histogram(edges, x, counts, N):
    for i in range(N):
        k = np.searchsorted(edges, x[i], side='right') - 1
        if 0 <= k < len(counts):
            counts[k] += 1


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32, np.uint8],
                         ids=lambda d: np.dtype(d).name)
def test_searches_are_numpys(dtype):
    rng = np.random.default_rng(3)
    edges = np.sort(rng.integers(0, 20, 11)).astype(dtype)  # with ties
    if np.dtype(dtype).kind == "f":
        x = np.concatenate([rng.uniform(-2, 22, 40), edges[:5], [np.nan, -np.inf, np.inf]]).astype(dtype)
        edges[-1] = np.nan
    else:
        x = np.concatenate([rng.integers(0, 21, 40), edges[:5]]).astype(dtype)
    n = len(x)
    run_both(bin_of, [edges, x, np.zeros(n, np.int64), np.zeros(n, np.int64), n],
             cpu_opts({'i': parpy.threads(n)}), rtol=0, atol=0)


def test_an_unsorted_array_gives_numpys_index_too():
    rng = np.random.default_rng(4)
    edges, x = rng.standard_normal(13), rng.standard_normal(30)
    run_both(bin_of, [edges, x, np.zeros(30, np.int64), np.zeros(30, np.int64), 30],
             cpu_opts({'i': parpy.threads(30)}), rtol=0, atol=0)


def test_a_histogram_is_numpys():
    rng = np.random.default_rng(5)
    edges, x = np.linspace(0, 1, 9), rng.random(500)
    counts = run_both(histogram, [edges, x, np.zeros(8, np.int64), 500], cpu_opts(), rtol=0, atol=0)[2]
    want = np.histogram(x, edges)[0]
    want[-1] -= np.sum(x == 1.0)  # (np.histogram closes its last bin)
    assert np.array_equal(counts, want)


@parpy.jit
def bad_side(edges, x, y):
    y[0] = np.searchsorted(edges, x[0], side='middle')


def test_a_side_other_than_left_or_right_is_refused():
    with pytest.raises(ValueError):
        bad_side.py_func(np.zeros(3), np.zeros(1), np.zeros(1, np.int64))
    with pytest.raises(parpy.CompileError, match="the `side` of `np.searchsorted` is 'left' or 'right'"):
        bad_side(np.zeros(3), np.zeros(1), np.zeros(1, np.int64), opts=cpu_opts())


def test_searches_compile_for_cuda_and_metal():
    check_gpu_code(bin_of, lambda backend: [np.zeros(11, np.float32), np.zeros(40, np.float32),
                                            np.zeros(40, np.int64), np.zeros(40, np.int64), 40],
                   {'i': parpy.threads(40)}, "bin_of")


@parpy.jit
def bins_of_rows(edges, x, left, right, ties, N):
    parpy.label('i')
    for i in range(N):
        k = np.searchsorted(edges, x[i, :])
        left[i, :] = k
        right[i, :] = np.searchsorted(edges, x[i, :], side='right') - k
        ties[i] = np.sum(np.searchsorted(edges, x[i, :], 'right') > k)


@pytest.mark.parametrize("etype,xtype", [(np.float64, np.float64), (np.float32, np.float64),
                                         (np.int32, np.float32), (np.float64, np.int64)],
                         ids=["f64", "f32-f64", "int-edges", "int-x"])
def test_a_named_search_of_a_row_is_numpys(etype, xtype):
    # (`k`, an array expression of a name, reads the row's searches)
    rng = np.random.default_rng(6)
    edges = np.sort(rng.integers(-6, 6, 9)).astype(etype)
    x = (rng.integers(-16, 16, (5, 12)) / 2).astype(xtype)
    if np.dtype(xtype).kind == "f":
        x[0, :3] = [np.nan, np.inf, -np.inf]
    if np.dtype(etype).kind == "f":
        edges[-2:] = np.nan
    run_both(bins_of_rows, [edges, x, np.zeros((5, 12), np.int64), np.zeros((5, 12), np.int64),
                            np.zeros(5, np.int64), 5],
             cpu_opts({'i': parpy.threads(5)}), rtol=0, atol=0)
