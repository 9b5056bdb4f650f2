"""`np.stack(parts, axis)`, `np.vstack`, `np.column_stack`, `np.tile(a, n)`
and `np.repeat(a, n)` of slices and array expressions: NumPy's new array,
each part stored into its place of the target (an index along the new
axis, a run, every n-th element), through a local array when a part reads
the target. Each program runs as plain Python (the reference) and
compiled (conftest.run_both), compared bit for bit."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both

N = 4


@parpy.jit
def stacked(x, k, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0, :, :] = np.stack((x[i, 0:4], x[i, 4:8] * 2.0))
        y[i, 1, :, :] = np.vstack([x[i, 0:4], k[i, 0:4]])
        y[i, 2, :, :] = np.stack((x[0, 0:4], x[i, 0:4]), axis=0) + np.vstack((x[1:2, 0:4], x[2:3, 4:8]))
        z[i, 0, :, :] = np.stack((x[i, 0:4], k[i, 0:4]), axis=1)
        z[i, 1, :, :] = np.stack((x[i, 0:4], x[i, 4:8]), -1) - np.column_stack((k[i, 4:8], x[i, 0:4]))
        t = np.stack((x[i, 0:4], x[0, 0:4]))
        t[0, 0] = 9.0
        y[i, 3, :, :] = t
        y[i, 4, :, :] = np.stack((y[i, 3, 1, :], y[i, 3, 0, :]))


def test_stack_vstack_and_column_stack():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, 8))
    k = rng.integers(-9, 9, (N, 8)).astype(np.int32)
    run_both(stacked, [x, k, np.zeros((N, 5, 2, 4)), np.zeros((N, 2, 4, 2)), N],
             cpu_opts({'i': parpy.threads(N)}))


@parpy.jit
def tiled_and_repeated(x, b, y, c, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0, :] = np.tile(x[i, 0:4], 3)
        y[i, 1, :] = np.repeat(x[i, 0:3] * 2.0, 4)
        y[i, 2, :] = np.repeat(x[i, 0:6], 2, axis=0)
        y[i, 3, 0] = np.sum(np.repeat(x[i, 0:4], 3)[2:]) + np.tile(x[i, 0:2], 2)[3]
        y[i, 4, :] = np.tile(y[i, 4, 0:6], 2)
        y[i, 5, :] = np.repeat(y[i, 5, 0:6], 2)
        c[i, :] = np.repeat(b[i, :], 2)


def test_tile_and_repeat_of_one_dimension():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((N, 8))
    y = rng.standard_normal((N, 6, 12))
    b = rng.random((N, 4)) > 0.5
    run_both(tiled_and_repeated, [x, b, y, np.zeros((N, 8), bool), N],
             cpu_opts({'i': parpy.threads(N)}))


@parpy.jit
def stack_of_other_shapes(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :, :] = np.stack((x[i, 0:4], x[i, 1:4]))


@parpy.jit
def stack_axis_out_of_bounds(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :, :] = np.stack((x[i, 0:4], x[i, 4:8]), axis=2)


@parpy.jit
def tile_of_a_matrix(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :, :] = np.tile(x[0:2, 0:4], 1)


@parpy.jit
def repeat_runtime_count(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0, :] = np.repeat(x[i, 0:4], i)


@parpy.jit
def hstack_of_matrices(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :, :] = np.hstack((x[0:2, 0:2], x[2:4, 0:2]))


@pytest.mark.parametrize("fn,message", [
    (stack_of_other_shapes, "the parts of `np.stack` do not fit together"),
    (stack_axis_out_of_bounds, "axis 2 is out of bounds for array of dimension 2"),
    (tile_of_a_matrix, "`np.tile` takes an array of one dimension in parpy functions"),
    (repeat_runtime_count, "`repeats` of `np.repeat` must be an integer known when compiling"),
    (hstack_of_matrices, "`np.hstack` of arrays of more than one dimension is not supported"),
])
def test_what_a_stack_cannot_be_is_a_located_error(fn, message):
    with pytest.raises(parpy.CompileError) as e:
        fn(np.ones((N, 8)), np.zeros((N, 2, 4)), N, opts=cpu_opts({'i': parpy.threads(N)}))
    assert message in str(e.value), str(e.value)
    assert "test_stack.py:" in str(e.value), str(e.value)
