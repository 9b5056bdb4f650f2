"""Reductions of 1-D slices whose bounds are known only at run time:
`np.sum(x[i, :i])`, `x[i, a:b].max()`, `sum(x[k:j])`, `np.dot(L[i, :j],
L[j, :j])`, `np.sum(L[i, :j] * L[j, :j])`, `x[max(0, i - k):i + 1].mean()`.
Python's slice semantics at run time (negative bounds from the end, bounds
clamped, an empty slice the reduction's identity, NumPy's ValueError for the
max or min of none); a float sum is NumPy's pairwise sum over the run-time
count, bit for bit. Each program runs as plain Python (the reference) and
compiled (conftest.run_both / bits_of, which tests/test_cuda_programs.py runs
on Cuda too)."""

import warnings

import numpy as np
import pytest

import parpy
from conftest import bits_of, check_gpu_code, cpu_opts, run_both
from test_assert import expect_raised

N, M = 6, 300


def _data(dtype, seed, shape=(N, M)):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind == 'f':
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-50, 50, shape).astype(dtype)


def _quiet(fn, args):
    """`fn` run by Python, NumPy's warnings for an empty mean silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        fn(*args)


@parpy.jit
def tail_sums(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = parpy.operators.sum(x[i, i:])


@parpy.jit
def row_reductions(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.sum(x[i, :i * 53])
        y[i, 1] = x[i, i:].sum()
        y[i, 2] = np.prod(x[i, i * 59:i * 59 + 3])
        y[i, 3] = np.max(x[i, i:])
        y[i, 4] = x[i, :i + 1].min()
        y[i, 5] = sum(x[i, i * 11:])
        y[i, 6] = max(x[i, i:i + 7])
        y[i, 7] = min(x[i, -i - 1:])
        y[i, 8] = np.sum(x[i, i::3])
        y[i, 9] = np.sum(x[i, i * 40::-1])
        y[i, 10] = np.sum(x[i, -1:i * 50:-2])
        y[i, 11] = parpy.operators.max(x[i, 1:i + 2])


@parpy.jit
def means(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.mean(x[i, :i * 37])
        y[i, 1] = x[i, i:].mean()
        y[i, 2] = np.var(x[i, :i * 37 + 2])
        y[i, 3] = np.std(x[i, i * 3:], ddof=1)


@parpy.jit
def truths(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.any(x[i, :i])
        y[i, 1] = np.all(x[i, :i])
        y[i, 2] = x[i, i * 60:].any()
        y[i, 3] = all(x[i, :i + 1])
        y[i, 4] = np.count_nonzero(x[i, i:])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64])
def test_reductions_of_slices_with_run_time_bounds_are_numpys(dtype):
    x = _data(dtype, 1)
    opts = cpu_opts({'i': parpy.threads(N)})
    bits_of(run_both, tail_sums, [x, np.zeros(N, x.dtype if dtype != np.int32 else np.int64), N],
            1, opts)
    # (float32 results stored as float32: a GPU's within float32 rounding)
    out = x.dtype if x.dtype.kind == 'f' else np.float64
    bits_of(run_both, row_reductions, [x, np.zeros((N, 12), out), N], 1, opts)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_mean_var_and_std_divide_by_the_run_time_count(dtype):
    x = _data(dtype, 2)
    opts = cpu_opts({'i': parpy.threads(N)})
    # (row 0's mean is of no elements: NaN, as NumPy's)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = x.dtype if x.dtype.kind == 'f' else np.float64
        bits_of(run_both, means, [x, np.zeros((N, 4), out), N], 1, opts)


@pytest.mark.parametrize("dtype", [np.bool_, np.float64, np.int64])
def test_any_all_and_count_nonzero_of_run_time_slices(dtype):
    x = _data(dtype, 3)
    bits_of(run_both, truths, [x, np.zeros((N, 5)), N], 1, cpu_opts({'i': parpy.threads(N)}))


@parpy.jit
def prefix_sums(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.sum(x[:i])


@parpy.jit
def cholesky_sums(L, y, N):
    parpy.label('i')
    for i in range(N):
        for j in range(N):
            y[i, j, 0] = np.sum(L[i, :j] * L[j, :j])
            y[i, j, 1] = np.sum(L[i, j:] * L[j, j:] + 1.0)


@parpy.jit
def cholesky_dots(L, y, N):
    parpy.label('i')
    for i in range(N):
        for j in range(N):
            y[i, j, 0] = np.dot(L[i, :j], L[j, :j])
            y[i, j, 1] = L[i, :j] @ L[j, :j]


@parpy.jit
def moving_means(x, y, N, k):
    parpy.label('i')
    for i in range(N):
        y[i] = x[max(0, i - k):i + 1].mean()


def test_prefix_sums_triangular_dots_and_windows_are_numpys():
    opts = cpu_opts({'i': parpy.threads(8)})
    x = _data(np.float64, 4, (700,))
    bits_of(run_both, prefix_sums, [x, np.zeros(700), 700], 1, opts)
    L = _data(np.float64, 5, (9, 9))
    bits_of(run_both, cholesky_sums, [L, np.zeros((9, 9, 2)), 9], 1, opts)
    bits_of(run_both, moving_means, [x, np.zeros(700), 700, 5], 1, opts)
    # (`np.dot` adds in order, as for slices of constant bounds: within
    # rounding of NumPy's BLAS)
    run_both(cholesky_dots, [L, np.zeros((9, 9, 2)), 9], opts)
    # (a dimension of one element: `np.dot` of none is 0.0, not a max)
    L1 = _data(np.float32, 6, (1, 1))
    bits_of(run_both, cholesky_dots, [L1, np.zeros((1, 1, 2), np.float32), 1], 1, opts)


@parpy.jit
def between(x, y, N, a, b):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.sum(x[i, a:b])
        y[i, 1] = np.prod(x[i, a:b] * 0.5 + 1.0)
        y[i, 2] = np.mean(x[i, a:b])
        y[i, 3] = sum(x[i, b:a:-1])
        y[i, 4] = np.sum(x[a:b, i])


@pytest.mark.parametrize("a,b", [(0, 10), (3, 3), (7, 2), (-5, -1), (-20, 4), (2, 50),
                                 (-50, 50), (9, -3), (0, 0), (10, 11)])
def test_bounds_take_pythons_meaning_at_run_time(a, b):
    x = _data(np.float64, 7, (10, 10))
    opts = cpu_opts({'i': parpy.threads(10)}, specialize_scalars=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        bits_of(run_both, between, [x, np.zeros((10, 5)), 10, a, b], 1, opts)


def test_one_row():
    x = _data(np.float32, 8, (1, M))
    bits_of(run_both, tail_sums, [x, np.zeros(1, np.float32), 1], 1, cpu_opts({'i': parpy.threads(1)}))


@parpy.jit
def max_between(x, y, N, a, b):
    parpy.label('i')
    for i in range(N):
        y[i] = np.max(x[i, a:b])


@parpy.jit
def python_min_between(x, y, N, a, b):
    parpy.label('i')
    for i in range(N):
        y[i] = min(x[i, a:b])


def test_max_and_min_of_an_empty_run_time_slice_raise_value_error():
    x = _data(np.float64, 9, (4, 8))
    opts = cpu_opts({'i': parpy.threads(4)}, specialize_scalars=False)
    run_both(max_between, [x, np.zeros(4), 4, 2, 5], opts)
    expect_raised(max_between, [x, np.zeros(4), 4, 5, 2], opts, ValueError,
                  "zero-size array to reduction operation maximum which has no identity")
    expect_raised(python_min_between, [x, np.zeros(4), 4, 9, 20], opts, ValueError,
                  "min() iterable argument is empty")


@parpy.jit
def two_lengths(x, y, N, a, b):
    parpy.label('i')
    for i in range(N):
        y[i] = np.sum(x[i, :a] * x[i, b:])


def test_slices_of_different_texts_must_agree_in_length_at_run_time():
    x = _data(np.float64, 10, (4, 8))
    opts = cpu_opts({'i': parpy.threads(4)}, specialize_scalars=False)
    # (`x[i, :3] * x[i, 5:]`: three elements each)
    bits_of(run_both, two_lengths, [x, np.zeros(4), 4, 3, 5], 1, opts)
    expect_raised(two_lengths, [x, np.zeros(4), 4, 3, 4], opts, ValueError,
                  "operands could not be broadcast together")


@parpy.jit
def labelled_sums(x, y, N):
    parpy.label('i')
    for i in range(N):
        parpy.label('k')
        y[i] = np.sum(x[i, i:])


def test_a_labelled_reduction_of_a_run_time_slice():
    x = _data(np.float64, 11)
    opts = cpu_opts({'i': parpy.threads(N), 'k': parpy.threads(32).par_reduction()})
    run_both(labelled_sums, [x, np.zeros(N), N], opts)


@parpy.jit
def slice_with_a_whole_array(x, w, y, N):
    for i in range(N):
        y[i] = np.sum(x[i, :i] * w)


@parpy.jit
def two_dimensional_run_time_product(x, y, N):
    for i in range(N):
        y[i] = np.sum(x[:, :i] * x[:, :i])


@parpy.jit
def python_sum_of_rows(x, y, N):
    for i in range(N):
        y[i] = sum(x[:i, :i])


@parpy.jit
def row_times_column(x, y, N):
    for i in range(N):
        y[i] = np.sum(x[i, :i] * x[:i, i])


def test_what_a_run_time_slice_cannot_be_is_a_located_error():
    opts = cpu_opts()
    x, w = np.zeros((4, 4)), np.zeros(4)
    with pytest.raises(parpy.CompileError) as e:
        slice_with_a_whole_array(x, w, np.zeros(4), 4, opts=opts)
    assert "combines a slice with run-time bounds with an array of a length known" in str(e.value)
    assert "y[i] = np.sum(x[i, :i] * w)" in str(e.value)
    # (an expression of more dimensions: only a 1-D one, or one subscript,
    # ends at the count)
    with pytest.raises(parpy.CompileError, match="a slice bound must be a compile-time constant"):
        two_dimensional_run_time_product(x, np.zeros(4), 4, opts=opts)
    # (Python's `sum` of a 2-D slice adds its rows: an array, not a number)
    with pytest.raises(parpy.CompileError, match="a slice bound must be a compile-time constant"):
        python_sum_of_rows(x, np.zeros(4), 4, opts=opts)
    # (slices of dimensions of other sizes: one error, not the slices
    # lowered again as if outside a reduction)
    with pytest.raises(parpy.CompileError) as e:
        row_times_column(np.zeros((4, 5)), np.zeros(4), 4, opts=opts)
    msg = str(e.value)
    assert "incompatible shapes: the slices (5,) and (4,) do not match" in msg
    assert "compile-time constant" not in msg


def test_run_time_slices_compile_for_cuda_and_metal():
    f32 = lambda backend: [np.zeros((N, M), np.float32), np.zeros((N, 12), np.float32), N]
    check_gpu_code(row_reductions, f32, {'i': parpy.threads(N)}, "row_reductions")
    tail = lambda backend: [np.zeros((N, M), np.float32), np.zeros(N, np.float32), N]
    codes = check_gpu_code(labelled_sums, tail,
                           {'i': parpy.threads(N), 'k': parpy.threads(32).par_reduction()},
                           "labelled_sums")
    assert any("count" in c for c in codes.values())


# Stores into slices with run-time bounds: NumPy's rules when the statement
# runs (the value's length must be the target's, a scalar or a slice of one
# element broadcasts, a ValueError otherwise); a read of the stored array
# that overlaps the target goes through a temporary as for compile-time
# slices (issue 9 item 11), unless it is the target's own slice.

@parpy.jit
def run_time_stores(x, y, N, a, b):
    parpy.label('i')
    for i in range(N):
        y[i, a:b] = 0.0
        y[i, :i] = x[i, :i] + 1
        y[i, b:a:-1] = x[i, b:a:-1] * 2.0
        y[i, a:b:2] = x[i + 1, a:b:2]
        y[i, i::3] += x[i, i::3]
        y[i, -i:] = x[i, 0]


@parpy.jit
def store_into_shorter(x, y, a, b):
    with parpy.gpu:
        y[a:b] = x[a:b] * 2.0


@parpy.jit
def add_into(y, v, k, j):
    with parpy.gpu:
        y[k:j] += v


@parpy.jit
def shift_left(y, a, b):
    with parpy.gpu:
        y[a:b] = y[a + 1:b + 1]


@parpy.jit
def shift_right(y, a, b):
    with parpy.gpu:
        y[a + 1:b + 1] = y[a:b] + 1.0


@parpy.jit
def three_into(x, y, a, b):
    with parpy.gpu:
        y[a:b] = x[0:3]


@parpy.jit
def window_into_whole(x, y, a):
    with parpy.gpu:
        y[:] = x[a:a + 4]


@parpy.jit
def labelled_band(x, y, N, a, b):
    parpy.label('i')
    for i in range(N):
        parpy.label('k')
        y[i, a:b] = x[i, a:b] - x[i, 0]


_BOUNDS = [(2, 6), (-5, -1), (6, 2), (0, 30), (-30, 3), (0, 0), (3, 12), (11, 12)]


@pytest.mark.parametrize("a,b", _BOUNDS)
def test_stores_into_run_time_slices_are_numpys(a, b):
    opts = cpu_opts({'i': parpy.threads(8)}, specialize_scalars=False)
    x = _data(np.float64, 12, (9, 12))
    bits_of(run_both, run_time_stores, [x, np.ones((8, 12)), 8, a, b], 1, opts)
    bits_of(run_both, add_into, [np.arange(12.0), 2.5, a, b], 0, cpu_opts(specialize_scalars=False))
    bits_of(run_both, labelled_band, [x, np.ones((8, 12)), 8, a, b], 1,
            cpu_opts({'i': parpy.threads(8), 'k': parpy.threads(16)},
                     specialize_scalars=False))


def _store_or_raise(fn, args, out, opts, words="could not broadcast input array", numpys=False):
    """`fn` as NumPy runs it: the same array, or NumPy's ValueError (with
    `words` in parpy's message; with `numpys`, NumPy's message itself: a
    1-D store's, "could not broadcast input array from shape (2,) into
    shape (3,)")."""
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        fn.py_func(*want)
    except ValueError as e:
        expect_raised(fn, args, opts, ValueError, str(e) if numpys else words)
        return
    bits_of(run_both, fn, args, out, opts)


@pytest.mark.parametrize("a,b", _BOUNDS + [(-3, None), (4, 5)])
def test_store_lengths_are_checked_and_overlaps_read_first(a, b):
    opts = cpu_opts(specialize_scalars=False)
    x = _data(np.float64, 13, (20,))
    # (NumPy's message where the shapes are 1-D: the lengths where it runs)
    if b is None:
        _store_or_raise(window_into_whole, [x, np.zeros(4), a], 1, opts, numpys=True)
        return
    _store_or_raise(store_into_shorter, [x, np.zeros(12), a, b], 1, opts, numpys=True)
    _store_or_raise(shift_left, [x.copy(), a, b], 0, opts, numpys=True)
    _store_or_raise(shift_right, [x.copy(), a, b], 0, opts, numpys=True)
    _store_or_raise(three_into, [x, np.zeros(12), a, b], 1, opts, numpys=True)
    _store_or_raise(window_into_whole, [x, np.zeros(4), a], 1, opts, numpys=True)


@parpy.jit
def searches(x, y, N, a, b):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.argmax(x[i, a:b])
        y[i, 1] = x[i, a:b].argmin()
        y[i, 2] = np.argmax(x[i, b:a:-1])
        y[i, 3] = np.argmin(x[i, i:])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
@pytest.mark.parametrize("a,b", [(2, 6), (-5, -1), (0, 30), (-30, 3), (3, 12), (6, 2)])
def test_argmax_and_argmin_of_run_time_slices_are_relative_to_the_slice(dtype, a, b):
    x = _data(dtype, 14, (8, 12))
    if dtype == np.float64:
        x[1, 3] = x[2, 7] = np.nan
    # (ties: the first one wins, as NumPy's)
    x[3, :] = 1
    opts = cpu_opts({'i': parpy.threads(8)}, specialize_scalars=False)
    want = [x, np.zeros((8, 4), np.int64), 8, a, b]
    if len(range(*slice(a, b).indices(12))) == 0 or len(range(*slice(b, a, -1).indices(12))) == 0:
        expect_raised(searches, want, opts, ValueError, "attempt to get arg")
        return
    bits_of(run_both, searches, want, 1, opts)


@parpy.jit
def lengths(x, y, N, a, b):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = len(x[i, a:b])
        y[i, 1] = x[i, :i].shape[0]
        y[i, 2] = len(x[a:b, i]) + len(x[i, b:a:-2])
        y[i, 3] = len(x[i, 1:3]) + x[i, 2:].shape[0]


@pytest.mark.parametrize("a,b", _BOUNDS)
def test_len_and_shape_of_run_time_slices(a, b):
    opts = cpu_opts({'i': parpy.threads(8)}, specialize_scalars=False)
    bits_of(run_both, lengths, [np.zeros((12, 12)), np.zeros((8, 4), np.int64), 8, a, b], 1, opts)


def test_run_time_stores_compile_for_cuda_and_metal():
    args = lambda backend: [np.zeros((N, M), np.float32), np.zeros((N, M), np.float32), N, 2, 9]
    check_gpu_code(run_time_stores, args, {'i': parpy.threads(N)}, "run_time_stores",
                   specialize_scalars=False)
    check_gpu_code(labelled_band, args, {'i': parpy.threads(N), 'k': parpy.threads(32)},
                   "labelled_band", specialize_scalars=False)
    # (indices are int64 on Cuda, int32 on Metal)
    index = {parpy.CompileBackend.Cuda: np.int64, parpy.CompileBackend.Metal: np.int32}
    search = lambda backend: [np.zeros((N, M), np.float32), np.zeros((N, 4), index[backend]), N, 2, 9]
    check_gpu_code(searches, search, {'i': parpy.threads(N)}, "searches",
                   specialize_scalars=False)
    check_gpu_code(lengths, search, {'i': parpy.threads(N)}, "lengths", specialize_scalars=False)
    scans = lambda backend: [np.zeros((N, M), np.float32), np.zeros((3 * N, M), np.float32), N, 2, 9]
    check_gpu_code(run_time_scans, scans, {'i': parpy.threads(N)}, "run_time_scans",
                   specialize_scalars=False)
    # (`np.nanvar` of float32 computes in float64 on Metal, run-time
    # bounds or not: a NaN-aware sum and max here)
    nans = lambda backend: [np.zeros((N, M), np.float32), np.zeros(N, np.float32), N, 2, 9]
    check_gpu_code(nanmax_between, nans, {'i': parpy.threads(N)}, "nanmax_between",
                   specialize_scalars=False)
    check_gpu_code(norms, nans, {'i': parpy.threads(N)}, "norms", specialize_scalars=False)
    # (an operand of one element broadcast: its counter held at its first)
    ones = lambda backend: [np.zeros((N, M), np.float32), np.zeros((N, M), np.float32), N, 2, 9, 3, 4]
    check_gpu_code(rows_plus_one_of, ones, {'i': parpy.threads(N), 'k': parpy.threads(32)},
                   "rows_plus_one_of", specialize_scalars=False)
    # (a reduction of a run-time block: one run of its elements)
    blur = lambda backend: [np.zeros((N, M), np.float32), np.zeros((N, M), np.float32), N, M, 2]
    check_gpu_code(box_blur, blur, {'i': parpy.threads(N)}, "box_blur", specialize_scalars=False)
    blocks = lambda backend: [np.zeros((N, M), np.float32), np.zeros((N, 8), np.float32), N, 1, 4, 2, 9]
    check_gpu_code(block_reductions, blocks, {'i': parpy.threads(N)}, "block_reductions",
                   specialize_scalars=False)
    check_gpu_code(block_extremes, blocks, {'i': parpy.threads(N)}, "block_extremes",
                   specialize_scalars=False)
    spreads = lambda backend: [np.zeros((N, M), np.float32), np.zeros((N, 5), np.float32), N, 1, 4, 2, 9]
    check_gpu_code(block_spreads, spreads, {'i': parpy.threads(N)}, "block_spreads",
                   specialize_scalars=False)
    ones_scanned = lambda backend: [np.zeros(12, np.float32), np.zeros((4, 7), np.float32),
                                    np.zeros((6, 8), np.float32), np.zeros((4, 3, 7), np.float32), 1, 4, 2]
    check_gpu_code(scans_of_one_element, ones_scanned, {}, "scans_of_one_element", specialize_scalars=False)
    found = lambda backend: [np.zeros((N, M), np.float32), np.zeros((N, 4), np.int64), N, 1, 4, 2, 9]
    check_gpu_code(block_searches, found, {'i': parpy.threads(N)}, "block_searches",
                   specialize_scalars=False)


@parpy.jit
def run_time_scans(x, y, N, a, b):
    parpy.label('i')
    for i in range(N):
        y[i, a:b] = np.cumsum(x[i, a:b])
        y[i + N, :i] = np.cumprod(x[i, i:2 * i] * 0.5 + 1.0)
        y[i + 2 * N, b:a:-1] = np.maximum.accumulate(x[i, b:a:-1])


@parpy.jit
def nan_reductions_and_norms(x, y, N, a, b):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.nansum(x[i, :i + 2])
        y[i, 1] = np.nansum(x[i, a:b])
        y[i, 2] = np.nanprod(x[i, :i] * 0.5)
        y[i, 3] = np.nanmean(x[i, a:b])
        y[i, 4] = np.nanvar(x[i, a:b])
        y[i, 5] = np.nanstd(x[i, i:], ddof=1)
        y[i, 6] = np.nanmax(x[i, :i + 1])
        y[i, 7] = np.nanmin(x[i, i:])


@parpy.jit
def norms(x, y, N, a, b):
    parpy.label('i')
    for i in range(N):
        y[i] = np.linalg.norm(x[i, a:b])


@parpy.jit
def nanmax_between(x, y, N, a, b):
    parpy.label('i')
    for i in range(N):
        y[i] = np.nanmax(x[i, a:b])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("a,b", _BOUNDS)
def test_scans_nan_reductions_and_norms_of_run_time_slices(dtype, a, b):
    x = _data(dtype, 15, (8, 12))
    x[1, 2] = x[2, 5] = x[5, 0] = np.nan
    opts = cpu_opts({'i': parpy.threads(8)}, specialize_scalars=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        bits_of(run_both, run_time_scans, [x, np.zeros((18, 12), dtype), 6, a, b], 1, opts)
        bits_of(run_both, nan_reductions_and_norms, [x, np.zeros((8, 8), dtype), 8, a, b], 1,
                opts)
    # (`np.linalg.norm` is NumPy's `sqrt(dot(x, x))`, BLAS's order: within
    # rounding, as for slices of constant bounds)
    run_both(norms, [x, np.zeros(8, dtype), 8, a, b], opts)
    if len(range(*slice(a, b).indices(12))) == 0:
        expect_raised(nanmax_between, [x, np.zeros(8, dtype), 8, a, b], opts, ValueError,
                      "zero-size array to reduction operation fmax which has no identity")


# A run-time slice of one element broadcasts, as NumPy's does: an operand
# of a slice statement of count 1 is read at its first element for each
# element of the target (its count the target's or 1, else the ValueError).

@parpy.jit
def one_into(x, y, a, b, c, d):
    with parpy.gpu:
        y[a:b] = x[c:d]


@parpy.jit
def plus_one_of(x, y, a, b, c, d):
    with parpy.gpu:
        y[a:b] = x[a:b] + x[c:d]


@parpy.jit
def rows_plus_one_of(x, y, N, a, b, c, d):
    parpy.label('i')
    for i in range(N):
        parpy.label('k')
        y[i, a:b] = x[i, d:c:-1] * 2.0 - x[i, a:b]


@parpy.jit
def block_of_one(x, y, a, b, c, d):
    with parpy.gpu:
        y[a:b, a:b] = x[c:d, c:d]


@parpy.jit
def into_whole(x, y, c, d):
    with parpy.gpu:
        y[:] = x[c:d] + 1.0


@parpy.jit
def add_one_of(y, x, a, b, c, d):
    with parpy.gpu:
        y[a:b] += x[c:d]


@pytest.mark.parametrize("a,b,c,d", [(2, 6, 3, 4), (2, 6, 11, 12), (-3, -1, -1, 20), (0, 12, 5, 6),
                                     (2, 2, 3, 4), (3, 4, 2, 6), (2, 6, 3, 3), (2, 6, 3, 7),
                                     (2, 6, 3, 2), (2, 6, 2, 6)])
def test_a_run_time_slice_of_one_element_broadcasts(a, b, c, d):
    opts = cpu_opts(specialize_scalars=False)
    x = _data(np.float64, 16, (12,))
    _store_or_raise(one_into, [x, np.zeros(12), a, b, c, d], 1, opts)
    _store_or_raise(plus_one_of, [x, np.zeros(12), a, b, c, d], 1, opts)
    _store_or_raise(add_one_of, [x.copy(), x, a, b, c, d], 0, opts)
    _store_or_raise(into_whole, [x, np.zeros(1), c, d], 1, opts)
    X = _data(np.float64, 17, (6, 12))
    _store_or_raise(block_of_one, [X, np.zeros((6, 12)), a, b, c, d], 1, opts)
    # (NumPy's other ValueError, operands of two lengths, as parpy's: the
    # slice's length is not the target's)
    _store_or_raise(rows_plus_one_of, [X, np.zeros((6, 12)), 6, a, b, c, d], 1,
                    cpu_opts({'i': parpy.threads(6), 'k': parpy.threads(32)}, specialize_scalars=False))


@parpy.jit
def scan_of_one(x, y, a, b, c, d):
    with parpy.gpu:
        y[a:b] = np.cumsum(x[c:d])


@parpy.jit
def scans_of_one_element(x, m, y, z, a, b, c):
    with parpy.gpu:
        y[0, a:b] = np.cumsum(x[c:c + 1])
        y[1, 1:5] = np.cumsum(x[2:3])
        y[2, a:b] = np.cumprod(x[2:3])
        y[3, 1:5] = np.maximum.accumulate(x[c:c + 1])
        y[4, a:b] = np.add.accumulate(x[c:c + 1] * 2)
        y[5, 0:6] = np.cumsum(x[c:c + 1] + x[0:1])
        z[0, 0:3, a:b] = np.cumsum(m[0:3, c:c + 1], axis=1)
        z[1, 0:3, :] = np.cumsum(m[c:c + 1, :], axis=0)
        z[2, 0:3, :] = np.cumsum(m[1:2, :], axis=0)
        z[3, 0:3, a:b] = np.cumsum(m[0:3, a:b], axis=0)


def test_a_scan_of_one_element_broadcasts_as_numpys():
    # (NumPy scans the operand, then broadcasts a scan of one element: each
    # element of the target that element, never a running sum of copies;
    # operands of two other lengths are its ValueError)
    opts = cpu_opts(specialize_scalars=False)
    x = _data(np.float64, 18, (12,))
    for a, b, c, d in [(2, 6, 3, 7), (2, 6, 3, 4), (2, 6, 11, 12), (2, 3, 3, 4), (2, 6, 3, 5),
                       (2, 6, 12, 13), (5, 5, 3, 4), (-4, 12, -1, 12)]:
        _store_or_raise(scan_of_one, [x, np.zeros(12), a, b, c, d], 1, opts, numpys=True)
    m = _data(np.float32, 28, (4, 7))
    for dtype in [np.float32, np.int64]:
        for a, b, c in [(1, 4, 2), (0, 7, 0), (3, 4, 6), (2, 2, 1), (1, 5, 7)]:
            args = [x.astype(dtype), m.astype(dtype), np.zeros((6, 8), dtype), np.zeros((4, 3, 7), dtype),
                    a, b, c]
            _store_or_raise(scans_of_one_element, args, 2, opts)
            _store_or_raise(scans_of_one_element, args, 3, opts)


# Whole reductions of slices of more dimensions with run-time bounds: one
# run of the elements in row-major order (NumPy's buffer of them), the
# count the product of the slices' counts.

@parpy.jit
def box_blur(img, out, H, W, r):
    parpy.label('i')
    for i in range(H):
        for j in range(W):
            i0 = max(i - r, 0)
            i1 = min(i + r + 1, H)
            j0 = max(j - r, 0)
            j1 = min(j + r + 1, W)
            out[i, j] = img[i0:i1, j0:j1].mean()


@parpy.jit
def block_reductions(img, out, N, a, b, c, d):
    parpy.label('i')
    for i in range(N):
        out[i, 0] = img[a:b, c:d].sum()
        out[i, 1] = np.sum(img[a:b, c + i:d])
        out[i, 2] = np.mean(img[a:b, c:d])
        out[i, 3] = img[b:a:-1, c:d:2].sum()
        out[i, 4] = np.sum(img[a:b, :])
        out[i, 5] = img[i:b, 1:4].mean()
        out[i, 6] = parpy.operators.sum(img[a:b, c:d])
        out[i, 7] = np.nanmean(img[a:b, c + i:d]) + np.nansum(img[a:b, c:d])


@parpy.jit
def block_extremes(img, out, N, a, b, c, d):
    parpy.label('i')
    for i in range(N):
        out[i, 0] = img[a:b, c:d].max()
        out[i, 1] = np.min(img[a:b, c + i:d])
        out[i, 2] = np.max(img[b:a:-1, d:c:-2])


@parpy.jit
def block_truths(img, out, N, a, b, c, d):
    parpy.label('i')
    for i in range(N):
        out[i, 0] = np.any(img[a:b, c:d])
        out[i, 1] = img[a:b, c + i:d].all()
        out[i, 2] = np.count_nonzero(img[a:b, c:d])


@parpy.jit
def volume_sums(vol, out, N, a, b, c, d):
    parpy.label('i')
    for i in range(N):
        out[i, 0] = np.sum(vol[i, a:b, c:d])
        out[i, 1] = vol[a:b, i, c:d].mean()
        out[i, 2] = np.sum(vol[:, a:b, c:d])


_BLOCKS = [(1, 5, 2, 9), (0, 12, 0, 30), (-4, -1, 3, -2), (3, 3, 0, 9), (5, 2, 1, 4), (2, 3, 4, 5),
           (-30, 30, 29, 30)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64])
def test_a_box_blur_of_run_time_windows_is_numpys(dtype):
    img = _data(dtype, 19, (13, 17))
    opts = cpu_opts({'i': parpy.threads(13)}, specialize_scalars=False)
    # (float32 results stored as float32: a GPU's within float32 rounding)
    out = dtype if np.dtype(dtype).kind == 'f' else np.float64
    for r in [0, 1, 3, 20]:
        bits_of(run_both, box_blur, [img, np.zeros((13, 17), out), 13, 17, r], 1, opts)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("a,b,c,d", _BLOCKS)
def test_reductions_of_run_time_blocks_are_numpys(dtype, a, b, c, d):
    img = _data(dtype, 20, (12, 30))
    vol = _data(dtype, 21, (6, 12, 30))
    opts = cpu_opts({'i': parpy.threads(6)}, specialize_scalars=False)
    out = dtype if np.dtype(dtype).kind == 'f' else np.float64
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        bits_of(run_both, block_reductions, [img, np.zeros((6, 8), out), 6, a, b, c, d], 1, opts)
        bits_of(run_both, volume_sums, [vol, np.zeros((6, 3), out), 6, a, b, c, d], 1, opts)
    bits_of(run_both, block_truths, [img, np.zeros((6, 3)), 6, a, b, c, d], 1, opts)
    _store_or_raise(block_extremes, [img, np.zeros((6, 3), out), 6, a, b, c, d], 1, opts,
                    "zero-size array to reduction operation")


# np.var / np.std (NumPy's mean, then the sum of the squared deviations,
# both in the block's run: `RtSlices::flat`; np.nanvar / np.nanstd too) and np.argmax / np.argmin (the
# flat index in the block, row-major; the first of ties, the first NaN) of
# a block with run-time bounds.

@parpy.jit
def block_spreads(img, out, N, a, b, c, d):
    parpy.label('i')
    for i in range(N):
        out[i, 0] = img[a:b, c:d].var()
        out[i, 1] = np.std(img[a:b, c + i:d])
        out[i, 2] = np.var(img[b:a:-1, c:d:2], ddof=1)
        out[i, 3] = img[i:b, c:d].std(ddof=2)
        out[i, 4] = np.var(img[a:b, :])


@parpy.jit
def block_nan_spreads(img, out, N, a, b, c, d):
    parpy.label('i')
    for i in range(N):
        out[i, 0] = np.nanvar(img[a:b, c:d])
        out[i, 1] = np.nanstd(img[a:b, c + i:d], ddof=1)


@parpy.jit
def volume_spreads(vol, out, N, a, b, c, d):
    parpy.label('i')
    for i in range(N):
        out[i, 0] = np.var(vol[i, a:b, c:d])
        out[i, 1] = vol[a:b, i, c:d].std(ddof=1)
        out[i, 2] = np.std(vol[:, a:b, c:d])


@parpy.jit
def block_searches(img, out, N, a, b, c, d):
    parpy.label('i')
    for i in range(N):
        out[i, 0] = img[a:b, c:d].argmax()
        out[i, 1] = np.argmin(img[a:b, c + i:d])
        out[i, 2] = np.argmax(img[b:a:-1, d:c:-2])
        out[i, 3] = img[i:b, c:d].argmin()


@parpy.jit
def volume_searches(vol, out, N, a, b, c, d):
    parpy.label('i')
    for i in range(N):
        out[i, 0] = np.argmax(vol[i, a:b, c:d])
        out[i, 1] = vol[a:b, i, c:d].argmin()
        out[i, 2] = np.argmin(vol[:, a:b, c:d])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32])
@pytest.mark.parametrize("a,b,c,d", _BLOCKS + [(-1, 0, 0, 30)])
def test_var_and_std_of_run_time_blocks_are_numpys(dtype, a, b, c, d):
    img = _data(dtype, 23, (12, 30))
    vol = _data(dtype, 24, (6, 12, 30))
    if dtype == np.float64:
        img[2, 4] = img[3, 7] = np.nan
    opts = cpu_opts({'i': parpy.threads(6)}, specialize_scalars=False)
    out = dtype if np.dtype(dtype).kind == 'f' else np.float64
    # (an empty block, or one ddof takes all of: NaN or inf with NumPy's
    # warning, the compiled run's value the same)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        bits_of(run_both, block_spreads, [img, np.zeros((6, 5), out), 6, a, b, c, d], 1, opts)
        bits_of(run_both, volume_spreads, [vol, np.zeros((6, 3), out), 6, a, b, c, d], 1, opts)
        bits_of(run_both, block_nan_spreads, [img, np.zeros((6, 2), out), 6, a, b, c, d], 1, opts)


def test_var_of_a_large_run_time_block_sums_pairwise_as_numpy():
    # (runs of more than 128 elements: NumPy's pairwise halves, in the
    # mean's sum and in the squared deviations')
    img = _data(np.float32, 25, (70, 130))
    opts = cpu_opts({'i': parpy.threads(3)}, specialize_scalars=False)
    for a, b, c, d in [(0, 70, 0, 130), (3, 61, 1, 127), (-60, -2, 7, 120)]:
        bits_of(run_both, block_spreads, [img, np.zeros((3, 5), np.float32), 3, a, b, c, d], 1, opts)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
@pytest.mark.parametrize("a,b,c,d", _BLOCKS)
def test_argmax_and_argmin_of_run_time_blocks_are_numpys(dtype, a, b, c, d):
    img = _data(dtype, 26, (12, 30))
    vol = _data(dtype, 27, (6, 12, 30))
    if dtype == np.float64:
        img[2, 4] = img[3, 7] = vol[1, 2, 4] = vol[2, 3, 7] = np.nan
    # (ties: the first one wins)
    img[4, :] = 1
    vol[:, 4, :] = 1
    opts = cpu_opts({'i': parpy.threads(6)}, specialize_scalars=False)
    words = "attempt to get arg"
    _store_or_raise(block_searches, [img, np.zeros((6, 4), np.int64), 6, a, b, c, d], 1, opts, words)
    _store_or_raise(volume_searches, [vol, np.zeros((6, 3), np.int64), 6, a, b, c, d], 1, opts, words)


@parpy.jit
def block_var_along_an_axis(img, out, a, b, c, d):
    with parpy.gpu:
        out[0] = np.var(img[a:b, c:d], axis=0)[0]


def test_var_of_a_run_time_block_along_an_axis_is_a_located_error():
    with pytest.raises(parpy.CompileError) as e:
        block_var_along_an_axis(np.zeros((4, 4)), np.zeros(1), 0, 2, 1, 3,
                                opts=cpu_opts(specialize_scalars=False))
    assert "out[0] = np.var(img[a:b, c:d], axis=0)[0]" in str(e.value)
    assert "a NumPy reduction without `axis=` of one subscript of more dimensions" in str(e.value)


# A local view of a run-time slice read later stands for the slice: its
# read-only uses are those of the slice where it is.

@parpy.jit
def named_windows(img, out, H, W, r):
    parpy.label('i')
    for i in range(H):
        for j in range(W):
            i0 = max(i - r, 0)
            j0 = max(j - r, 0)
            win = img[i0:i + r + 1, j0:j + r + 1]
            s = win.sum()
            m = win.max()
            out[i, j, 0] = s + m
            out[i, j, 1] = np.mean(win) - win.min()
            row = img[i, j0:j + r + 1]
            out[i, j, 2] = row.sum() * len(row)


@parpy.jit
def store_through_a_named_window(img, H, a, b):
    for i in range(H):
        win = img[a:b, a:b]
        win[0, 0] = 1.0


def test_a_named_view_of_a_run_time_slice_is_read_as_the_slice():
    img = _data(np.float64, 22, (9, 11))
    opts = cpu_opts({'i': parpy.threads(9)}, specialize_scalars=False)
    for r in [0, 1, 4]:
        bits_of(run_both, named_windows, [img, np.zeros((9, 11, 3)), 9, 11, r], 1, opts)


def test_a_store_through_a_named_run_time_window_is_a_located_error():
    with pytest.raises(parpy.CompileError) as e:
        store_through_a_named_window(np.zeros((4, 4)), 4, 1, 3, opts=cpu_opts(specialize_scalars=False))
    assert "win = img[a:b, a:b]" in str(e.value)
