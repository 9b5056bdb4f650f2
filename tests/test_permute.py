"""The spellings of a permutation of an array's axes (`np.swapaxes`,
`x.swapaxes`, `x.mT`, `np.matrix_transpose`, `np.transpose(x, axes)`,
`x.transpose(*axes)`, `np.permute_dims`, `np.moveaxis`): those that keep
the axes or reverse them all are the array itself or its `x.T` view, of
arguments, subscripts, computed and local arrays, read and written;
another order, or axes NumPy refuses, is a located error. Compared with
plain Python."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


@parpy.jit
def swapped_views(x, a, b, c, d, N):
    parpy.label('i')
    for i in range(N):
        a[i, :, :] = np.swapaxes(x[i, 0:2, 0:3], 0, 1)
        b[i, :, :] = x[i, 0:2, 0:3].swapaxes(-1, -2) + x[i, 1:3, 2:5].mT
        c[i, :, :] = np.matrix_transpose(x[i, 0:2, 0:3]) - np.transpose(x[i, 0:2, 1:4], (1, 0))
        d[i, :, :] = (x[i, 0:2, 0:3].transpose(1, 0) * np.permute_dims(x[i, 2:4, 0:3], axes=[1, 0])
                      + np.moveaxis(x[i, 0:2, 2:5], 0, -1))


def test_a_reversing_permutation_is_the_transposed_view():
    x = _x(4, 4, 5)
    out = [np.zeros((4, 3, 2)) for _ in range(4)]
    run_both(swapped_views, [x, *out, 4], cpu_opts({'i': parpy.threads(4)}))


@parpy.jit
def kept_axes(x, v, a, b, N):
    parpy.label('i')
    for i in range(N):
        a[i, :, :] = np.swapaxes(x[i, :, :], 1, 1) + x[i, :, :].transpose(0, 1)
        b[i, :] = np.moveaxis(v[i, :], 0, 0) * np.swapaxes(v[i, :], -1, 0)


def test_a_permutation_that_keeps_the_axes_is_the_array():
    x, v = _x(3, 2, 5), _x(3, 6, seed=1)
    run_both(kept_axes, [x, v, np.zeros((3, 2, 5)), np.zeros((3, 6)), 3],
             cpu_opts({'i': parpy.threads(3)}))


@parpy.jit
def whole_arguments(z, m, a, b, N):
    parpy.label('i')
    for i in range(N):
        # (a 3-D swap of the outer axes and a move of two reverse all)
        a[i, :, :] = np.swapaxes(z, 0, 2)[i, :, :] + np.moveaxis(z, (0, 2), (2, 0))[i, :, :]
        b[i, :] = m.mT[i, :] + np.swapaxes(m, 0, 1)[i, :]


def test_permutations_of_whole_arguments_and_of_three_dimensions():
    z, m = _x(4, 3, 4, seed=2), _x(5, 4, seed=3)
    run_both(whole_arguments, [z, m, np.zeros((4, 3, 4)), np.zeros((4, 5)), 4],
             cpu_opts({'i': parpy.threads(4)}))


@parpy.jit
def computed_and_local(x, a, b, N):
    parpy.label('i')
    for i in range(N):
        a[i, :, :] = np.swapaxes(x[i, 0:2, 0:3] * 2.0, 0, 1) + (x[i, 1:3, 0:3] - 1.0).mT
        t = x[i, 0:2, 1:4] + 0.5
        b[i, :, :] = t.swapaxes(0, 1) * np.moveaxis(t, 1, 0)


def test_permutations_of_computed_and_local_arrays():
    x = _x(3, 4, 5, seed=4)
    run_both(computed_and_local, [x, np.zeros((3, 3, 2)), np.zeros((3, 3, 2)), 3],
             cpu_opts({'i': parpy.threads(3)}))


@parpy.jit
def store_through_a_swap(x, y, N):
    parpy.label('i')
    for i in range(N):
        np.swapaxes(y, 0, 1)[:, i] = x[i, :] * 3.0


def test_a_store_through_a_swapped_view():
    x = _x(4, 6, seed=5)
    run_both(store_through_a_swap, [x, np.zeros((4, 6)), 4], cpu_opts({'i': parpy.threads(4)}))


@parpy.jit
def other_order(z, y, N):
    for i in range(N):
        y[i, :, :] = np.swapaxes(z, 1, 2)[i, :, :]


@parpy.jit
def other_order_mt(z, y, N):
    for i in range(N):
        y[i, :, :] = z.mT[i, :, :]


@parpy.jit
def axis_out_of_bounds(z, y, N):
    for i in range(N):
        y[i, :, :] = np.swapaxes(z[i, :, :], 0, 2)


@parpy.jit
def matrix_transpose_of_a_vector(z, y, N):
    for i in range(N):
        y[i, :, :] = z[i, 0, :].mT


@parpy.jit
def repeated_axes(z, y, N):
    for i in range(N):
        y[i, :, :] = np.transpose(z[i, :, :], (0, 0))


@parpy.jit
def axes_not_written_in_the_code(z, y, N):
    for i in range(N):
        y[i, :, :] = np.swapaxes(z[i, :, :], N - 4, 0)


@pytest.mark.parametrize("fn,message", [
    (other_order, "the axes of this 3-D array in the order (0, 2, 1) are not a view parpy has"),
    (other_order_mt, "the axes of this 3-D array in the order (0, 2, 1) are not a view parpy has"),
    (axis_out_of_bounds, "`np.swapaxes`: axis 2 is out of bounds for array of dimension 2"),
    (matrix_transpose_of_a_vector, "`.mT` needs an array of at least 2 dimensions, not 1"),
    (repeated_axes, "`np.transpose`: repeated axis 0"),
    (axes_not_written_in_the_code, "the axes of `np.swapaxes` must be integers written in the code"),
])
def test_what_parpy_cannot_view_is_a_located_error(fn, message):
    z = _x(4, 4, 4, seed=6)
    with pytest.raises(parpy.CompileError) as e:
        fn(z, np.zeros((4, 4, 4)), 4, opts=cpu_opts())
    assert str(e.value).splitlines()[0] == "error: " + message, str(e.value)
    assert "test_permute.py:" in str(e.value), str(e.value)
