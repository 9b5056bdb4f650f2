"""`y[i, :] = np.sort(s)` and `y[i, :] = np.argsort(s, kind='stable')` of a
1-D slice inside jit code: NumPy's result on every backend (NaN after every
number, equal elements in their order), also in place (`x[i, :] =
np.sort(x[i, :])`) and of computed slices. The default `np.argsort`, whose
order of equal elements NumPy leaves open, is refused. Compared with plain
Python."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both

N = 4


def _par():
    return cpu_opts({'i': parpy.threads(N)})


@parpy.jit
def sorted_rows(x, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.sort(x[i, :])
        z[i, :] = np.argsort(x[i, :], kind='stable')


@parpy.jit
def sort_in_place(x, N):
    parpy.label('i')
    for i in range(N):
        x[i, :] = np.sort(x[i, :])


@parpy.jit
def sort_computed(x, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i, 1:] = np.sort(np.abs(x[i, ::2]) - 1.0)
        z[i, :] = x[i, 1:].argsort(stable=True)


def _values(rng, dtype, n):
    if np.dtype(dtype).kind in "iub":
        # few distinct values: ties
        return rng.integers(0, 5, (N, n)).astype(dtype)
    x = (rng.standard_normal((N, n)) * 10).astype(dtype)
    if n > 3:
        x[1, n // 2] = np.nan
        x[1, 0] = np.nan
        x[2, :3] = x[2, 3]  # ties
        x[3, 0] = np.inf
    return x


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32, np.uint8,
                                   np.int64, np.bool_], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [1, 2, 7, 33, 64, 101, 1000])
def test_sorts_are_numpys(dtype, n):
    x = _values(np.random.default_rng(n), dtype, n)
    y, z = run_both(sorted_rows, [x, np.zeros((N, n), dtype), np.zeros((N, n), np.int64), N], _par(),
                    rtol=0, atol=0)[1:3]
    assert np.array_equal(y, np.sort(x, axis=1), equal_nan=True)
    assert np.array_equal(z, np.argsort(x, axis=1, kind='stable'))
    out = run_both(sort_in_place, [x, N], _par(), rtol=0, atol=0)[0]
    assert np.array_equal(out, np.sort(x, axis=1), equal_nan=True)


def test_sorts_of_computed_slices():
    x = _values(np.random.default_rng(3), np.float64, 9)
    run_both(sort_computed, [x, np.zeros((N, 6)), np.zeros((N, 8), np.int64), N], _par(), rtol=0, atol=0)


@parpy.jit
def default_argsort(x, z):
    z[:] = np.argsort(x)


@parpy.jit
def sort_in_a_loop_condition(x, y):
    k = 0
    while np.sort(x)[k] < 0.5:
        k += 1
    y[0] = k


@parpy.jit
def labelled_sort(x, y):
    parpy.label('j')
    y[:] = np.sort(x)


def test_misuse_is_refused_at_the_line():
    x = np.zeros(5)
    with pytest.raises(parpy.CompileError, match="`np.argsort` needs `kind='stable'` here"):
        default_argsort(x, np.zeros(5, np.int64), opts=cpu_opts())
    with pytest.raises(parpy.CompileError, match="`np.sort` gives an array: parpy computes it only as"):
        sort_in_a_loop_condition(x, np.zeros(1), opts=cpu_opts())
    with pytest.raises(parpy.CompileError, match="`np.sort` runs in order and takes no label"):
        labelled_sort(x, np.zeros(5), opts=cpu_opts({'j': parpy.threads(5)}))


def test_sorts_compile_for_cuda_and_metal():
    check_gpu_code(sorted_rows, lambda backend: [np.zeros((N, 9), np.float32), np.zeros((N, 9), np.float32),
                                                 np.zeros((N, 9), np.int64), N],
                   {'i': parpy.threads(N)}, "sorted_rows")


@parpy.jit
def sort_methods(x, N):
    parpy.label('i')
    for i in range(N):
        r = x[i]
        r[2:].sort(kind='stable')
        x[i, :2].sort()


def test_the_sort_method_sorts_in_place():
    x = _values(np.random.default_rng(9), np.float32, 11)
    out = run_both(sort_methods, [x, N], _par(), rtol=0, atol=0)[0]
    assert np.array_equal(out[:, 2:], np.sort(x[:, 2:], axis=1), equal_nan=True)


@parpy.jit
def reversed_computed_arrays(x, y, k, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.sort(x[i, :])[::-1]
        k[i, :] = np.argsort(x[i, :], kind='stable')[::-1]
        y[i, 0:3] = (x[i, 0:3] * 2.0)[::-1]
        y[i, 3:6] = np.cumsum(x[i, 3:6])[::-1]


def test_a_computed_array_reversed_is_stored_backwards():
    # `np.sort(s)[::-1]` (the descending sort users write) is
    # `y[i, :][::-1] = np.sort(s)`; it said "a computed array can only be
    # indexed by integers"
    x = np.random.default_rng(4).random((4, 8)) - 0.3
    x[1, 3] = np.nan
    got = run_both(reversed_computed_arrays, [x, np.zeros((4, 8)), np.zeros((4, 8), np.int64), 4],
                   cpu_opts({'i': parpy.threads(4)}), rtol=0, atol=0)
    assert got[2][1, 0] == 3  # NaN sorts last, so first backwards


@parpy.jit
def sort_a_copy_in_place(x, y, N):
    parpy.label('i')
    for i in range(N):
        t = x[i, :].copy()
        t.sort()
        u = np.copy(x[i, :])
        u.fill(0.5)
        w = x[i, :].copy()
        np.copyto(w, x[i, ::-1])
        y[i, 0] = t[1] + u[0] + w[0]
        y[i, 1] = x[i, 1]


def test_a_copy_sorted_filled_or_copied_into_in_place_is_a_local_array():
    """`t = x[i, :].copy(); t.sort()` was read as the expression of the
    copy (a name assigned once), so the sort had nothing to store into:
    'only array parameters can be indexed'. The statements that write an
    array in place (`.sort()`, `.fill()`, `np.copyto`) count as writes."""
    x = np.array([[3.0, 1.0, 2.0], [9.0, -1.0, 4.0], [0.0, 0.0, -5.0]])
    got = run_both(sort_a_copy_in_place, [x, np.zeros((3, 2)), 3], cpu_opts({'i': parpy.threads(3)}))
    assert got[1].tolist() == [[2.0 + 0.5 + 2.0, 1.0], [4.0 + 0.5 + 4.0, -1.0],
                               [0.0 + 0.5 - 5.0, 0.0]]


@parpy.jit
def sort_a_view_in_place(x, y, N):
    parpy.label('i')
    for i in range(N):
        r = x[i, :]
        r.sort()
        y[i] = x[i, 0]


def test_sorting_a_view_sorts_the_array():
    x = np.array([[3.0, 1.0, 2.0], [9.0, -1.0, 4.0]])
    got = run_both(sort_a_view_in_place, [x, np.zeros(2), 2], cpu_opts({'i': parpy.threads(2)}))
    assert got[0].tolist() == np.sort(x, axis=1).tolist()
    assert got[1].tolist() == [1.0, -1.0]
