"""NumPy's advanced indexing with arrays of integers (sema `index_slots`,
`IndexSlot::Gather`) and subscripts of views (sema/chains.rs): an array of
indices combined with slices takes whole rows / columns (`x[idx, :]` is
`x[idx[i], j]`, its dimensions where NumPy puts them), a subscript of a
gather or of a new axis indexes the view's own dimensions (`x[idx][0]` is
row `idx[0]`, `x[None][0, 1]` is `x[1]`). Compared with plain Python."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both


def _x(*shape):
    return np.arange(np.prod(shape), dtype=np.float64).reshape(shape)


IDX = np.array([2, 0, 1, -1, 2])


@parpy.jit
def gather_rows(x, idx, z):
    z[:, :] = x[idx, :]


@parpy.jit
def gather_rows_implicit(x, idx, z):
    z[:, :] = x[idx]


@parpy.jit
def gather_cols(x, idx, z):
    z[:, :] = x[:, idx]


@parpy.jit
def gather_list_rows(x, z):
    z[:, :] = x[[2, 0, 1], :]


@parpy.jit
def gather_middle(x, idx, z):
    z[:, :, :] = x[:, idx, :]


@parpy.jit
def gather_not_adjacent(x, idx, z):
    z[:, :] = x[0, :, idx]


@parpy.jit
def gather_adjacent_number(x, idx, z):
    z[:, :] = x[:, 0, idx]


@parpy.jit
def gather_two_arrays(x, idx, jdx, z):
    z[:, :] = x[idx, :, jdx]


@parpy.jit
def gather_2d_index(x, i2, z):
    z[:, :, :] = x[i2, :]


@parpy.jit
def gather_reversed_plus(x, idx, z):
    z[:, :] = x[idx, ::-1] + 1.0


@parpy.jit
def gather_rows_times_cols(x, idx, z):
    z[:, :] = x[idx, :] * x[:, idx]


@parpy.jit
def gather_sums(x, idx, v, out):
    out[0] = np.sum(x[idx, 1:] * 2.0)
    out[1] = np.sum(v[idx] * 2.0)


@pytest.mark.parametrize("fn, args", [
    (gather_rows, lambda: [_x(3, 4), IDX, np.zeros((5, 4))]),
    (gather_rows_implicit, lambda: [_x(3, 4), IDX, np.zeros((5, 4))]),
    (gather_cols, lambda: [_x(3, 4), np.array([3, 0, 1]), np.zeros((3, 3))]),
    (gather_list_rows, lambda: [_x(3, 3), np.zeros((3, 3))]),
    (gather_middle, lambda: [_x(3, 4, 5), np.array([3, 0]), np.zeros((3, 2, 5))]),
    (gather_not_adjacent, lambda: [_x(3, 4, 5), np.array([0, 3, 2, 4, 1]), np.zeros((5, 4))]),
    (gather_adjacent_number, lambda: [_x(3, 4, 5), np.array([0, 3, 2, 4, 1]), np.zeros((3, 5))]),
    (gather_two_arrays, lambda: [_x(3, 4, 5), IDX, np.array([0, 3, 2, 4, 1]), np.zeros((5, 4))]),
    (gather_2d_index, lambda: [_x(3, 4), np.array([[0, 1], [2, 2]]), np.zeros((2, 2, 4))]),
    (gather_reversed_plus, lambda: [_x(3, 4), IDX, np.zeros((5, 4))]),
    (gather_rows_times_cols, lambda: [_x(3, 3), np.array([2, 0, 1]), np.zeros((3, 3))]),
    (gather_sums, lambda: [_x(3, 4), IDX, _x(5), np.zeros(2)]),
])
def test_an_array_of_indices_with_slices_takes_whole_rows(fn, args):
    run_both(fn, args(), cpu_opts())


def test_a_gather_of_the_wrong_shape_is_an_error():
    @parpy.jit
    def into_1d(x, idx, z):
        z[:] = x[idx, :]

    with pytest.raises(parpy.CompileError, match="incompatible shapes"):
        into_1d(_x(3, 3), np.array([2, 0, 1]), np.zeros(3), opts=cpu_opts())


def test_a_gather_from_a_transpose_is_refused_naming_it():
    @parpy.jit
    def from_transpose(x, idx, y):
        y[:, :] = x.T[idx]

    with pytest.raises(parpy.CompileError, match="into a transpose"):
        from_transpose(_x(3, 4), np.array([3, 0]), np.zeros((2, 3)), opts=cpu_opts())


def test_an_index_out_of_bounds_in_a_gather_raises():
    with pytest.raises(IndexError, match="out of bounds"):
        gather_rows(_x(3, 4), np.array([0, 3]), np.zeros((2, 4)), opts=cpu_opts())


@parpy.jit
def row_of_gather(x, idx, y):
    y[:] = x[idx][0]


@parpy.jit
def row_of_named_gather(x, idx, y):
    g = x[idx]
    y[:] = g[1]


@parpy.jit
def row_of_list_gather(x, y):
    y[:] = x[[2, 0, 1]][0]


@parpy.jit
def named_gather_scaled(v, idx, y):
    g = v[idx]
    y[:] = g * 2.0


@parpy.jit
def gather_reversed(v, idx, y):
    y[:] = v[idx][::-1]


@parpy.jit
def element_of_gather(v, idx, y):
    y[0] = v[idx][1]
    y[1] = v[idx][-1]


@parpy.jit
def row_of_gather_not_adjacent(x, idx, y):
    y[:] = x[0, :, idx][2]


@parpy.jit
def gathered_rows_of_a_column(x, idx, y):
    y[:, :] = x[:, idx][1:, ::-1]


@parpy.jit
def column_of_gathered_rows(x, idx, y):
    y[:] = x[idx][:, 2]


@pytest.mark.parametrize("fn, args", [
    (row_of_gather, lambda: [_x(3, 3), np.array([2, 0, 1]), np.zeros(3)]),
    (row_of_named_gather, lambda: [_x(3, 3), np.array([2, 0, 1]), np.zeros(3)]),
    (row_of_list_gather, lambda: [_x(3, 3), np.zeros(3)]),
    (named_gather_scaled, lambda: [_x(10), np.array([2, 0, 1]), np.zeros(3)]),
    (gather_reversed, lambda: [_x(4), np.array([3, 1, 0, 2]), np.zeros(4)]),
    (element_of_gather, lambda: [_x(10), np.array([2, 0, 7]), np.zeros(2)]),
    (row_of_gather_not_adjacent, lambda: [_x(3, 4, 5), np.array([0, 3, 2, 4, 1]), np.zeros(4)]),
    (gathered_rows_of_a_column, lambda: [_x(3, 4), np.array([3, 0, 1]), np.zeros((2, 3))]),
    (column_of_gathered_rows, lambda: [_x(3, 4), IDX, np.zeros(5)]),
])
def test_a_subscript_of_a_gather_indexes_the_gathered_rows(fn, args):
    run_both(fn, args(), cpu_opts())


@parpy.jit
def newaxis_row(x, y):
    y[:] = x[None][0, 1]


@parpy.jit
def newaxis_whole(x, y):
    y[:, :] = x[None][0]


@parpy.jit
def newaxis_of_row(x, y):
    y[:] = x[1][None][0]


@parpy.jit
def newaxis_element(x, y):
    y[0] = x[None][0, 1, 2]


@parpy.jit
def newaxis_middle(x, y):
    y[:, :] = x[:, None][:, 0]


@parpy.jit
def named_newaxis(x, y):
    r = x[None]
    y[:] = r[0, 1]


@parpy.jit
def named_newaxis_written(x, y):
    c = x[:, None]
    c[1, 0, 2] = 40.0
    y[:] = c[1, 0]


@pytest.mark.parametrize("fn, shape", [
    (named_newaxis, (3,)), (named_newaxis_written, (3,)),
    (newaxis_row, (3,)), (newaxis_whole, (3, 3)), (newaxis_of_row, (3,)),
    (newaxis_element, (1,)), (newaxis_middle, (3, 3)),
])
def test_a_subscript_of_a_new_axis_indexes_it_first(fn, shape):
    run_both(fn, [_x(3, 3), np.zeros(shape)], cpu_opts())


def test_a_new_axis_indexed_past_its_one_element_is_an_error():
    @parpy.jit
    def past(x, y):
        y[:] = x[None][1]

    with pytest.raises(parpy.CompileError, match="out of bounds for a new axis"):
        past(_x(3), np.zeros(3), opts=cpu_opts())


def test_a_gather_of_a_slice_is_refused_naming_it():
    @parpy.jit
    def gather_of_a_slice(x, idx, y):
        y[:] = x[1:][idx][:, 0]

    with pytest.raises(parpy.CompileError, match="an array of indices into a slice"):
        gather_of_a_slice(_x(4, 3), np.array([2, 0, 1]), np.zeros(3), opts=cpu_opts())


def test_a_named_gather_of_an_array_written_later_is_refused():
    @parpy.jit
    def written(x, idx, y):
        g = x[idx]
        x[0] = 5.0
        y[:] = g

    with pytest.raises(parpy.CompileError, match="names a gather"):
        written(_x(4), np.array([0, 1]), np.zeros(2), opts=cpu_opts())


def test_a_subscript_of_a_masked_read_is_refused_naming_it():
    @parpy.jit
    def masked_again(y):
        y[:] = y[y > -1][::-1]

    with pytest.raises(parpy.CompileError, match="masked read"):
        masked_again(_x(4), opts=cpu_opts())


def test_gathers_compile_for_cuda_and_metal():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([2, 0, 1, 2], dtype=np.int32)

    @parpy.jit
    def gathers(x, idx, z, y):
        parpy.label("i")
        z[:, :] = x[idx, :]
        parpy.label("j")
        y[:] = x[idx][1]

    check_gpu_code(gathers, lambda b: [x, idx, np.zeros((4, 4), np.float32), np.zeros(4, np.float32)],
                   {"i": parpy.threads(4), "j": parpy.threads(4)}, "gathers")
