"""Transposes and shape attributes of arrays that are not parameters: a
computed array transposed (`(a * 2.0).T`, `np.transpose(a @ b)`,
`(x * w).transpose()`: named first, a local array, then viewed), a local
array's `.T`, and `.shape[k]`, `.size`, `.ndim` of slices and array
expressions (constants, as of a parameter). Each program runs as plain
Python (the reference) and compiled, compared bit for bit."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both, same_bits

N = 4


def fresh(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


@parpy.jit
def transposed_expressions(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0, :, :] = (x[i, 0:2, 0:3] * 2.0).T[0:2, :]
        y[i, 1, :, :] = np.transpose(x[i, 0:2, 0:2] - x[i, 2:4, 0:2]) + 1.0
        y[i, 2, :, :] = (x[i, 1:3, 1:3] * x[i, 0, 0]).transpose()
        t = x[i, 0:2, 2:4] * 3.0
        y[i, 3, :, :] = t.T
        y[i, 4, :, :] = (x[i, 0:2, 0:3] @ x[i, 0:3, 0:2]).T


def test_transpose_of_computed_and_local_arrays():
    x = fresh(N, 4, 4)
    y = np.zeros((N, 5, 2, 2))
    out = run_both(transposed_expressions, [x, y, N], cpu_opts({'i': parpy.threads(N)}))
    want = y.copy()
    transposed_expressions.py_func(x, want, N)
    same_bits(out[1][:, :4], want[:, :4], cpu_opts())


@parpy.jit
def whole_transpose_of_a_sum(x, y):
    parpy.label('i')
    y[:, :] = np.transpose(x + 1.0)


def test_whole_transpose_of_an_expression():
    x = fresh(3, 4, seed=3)
    run_both(whole_transpose_of_a_sum, [x, np.zeros((4, 3))], cpu_opts({'i': parpy.threads(4)}))


@parpy.jit
def local_transposed_twice(x, y, N):
    parpy.label('i')
    for i in range(N):
        t = np.exp(x[i, :, :])
        y[i, :, :] = t.T + t
        y[i, 0, 0] = t.T[0, 1]


def test_local_array_transposed_and_read():
    x = fresh(N, 3, 3, seed=1)
    y = np.zeros((N, 3, 3))
    run_both(local_transposed_twice, [x, y, N], cpu_opts({'i': parpy.threads(N)}))


@parpy.jit
def transposed_subscripts_indexed_again(x, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0, :] = x[i].T[0, :]
        y[i, 1, :] = x[i, :, :].T[-1, ::-1]
        y[i, 2, 0:2] = x[i].T[1:][0, 1:]
        y[i, 3, :] = np.repeat(x[i].T[1, 0:2], 2)[0:3] + np.sum(x[i].T[2, :])
        z[i].T[0, :] = x[i, 0, :]


def test_a_transposed_subscript_indexed_again_reads_the_array():
    x = fresh(N, 3, 3, seed=4)
    run_both(transposed_subscripts_indexed_again, [x, np.zeros((N, 4, 3)), np.zeros((N, 3, 3)), N],
             cpu_opts({'i': parpy.threads(N)}))


@parpy.jit
def shapes_of_parts(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = x[i, 1:].shape[0]
        y[i, 1] = x[i, 1:, ::2].shape[1]
        y[i, 2] = (x[i, :, :] * 2.0).shape[-1]
        y[i, 3] = x[i, :, 1:].size
        y[i, 4] = x[i, 0, :].ndim
        y[i, 5] = (x[i, :, :] + 1.0).T.shape[0]
        rows, cols = x[i, 1:, :].shape
        y[i, 6] = rows * 10 + cols
        y[i, 7] = np.sum(x[i, 0, :]) / x[i, 0, :].size


def test_shape_size_and_ndim_of_slices_and_expressions():
    x = fresh(N, 3, 5, seed=2)
    y = np.zeros((N, 8))
    out = run_both(shapes_of_parts, [x, y, N], cpu_opts({'i': parpy.threads(N)}))
    np.testing.assert_array_equal(out[1][0, :7], [2, 3, 5, 12, 1, 5, 25])


@parpy.jit
def shape_index_not_constant(x, y, N):
    for i in range(N):
        y[i] = x[i, 1:].shape[i]


def test_shape_of_a_slice_takes_a_constant_index():
    with pytest.raises(parpy.CompileError, match=r"`array.shape` must be indexed by one constant"):
        shape_index_not_constant(fresh(N, 3), np.zeros(N), N, opts=cpu_opts())


@parpy.jit
def strides_read(x, y):
    y[0] = x.shape[0] + x.strides[0]


@parpy.jit
def flat_read(x, y):
    y[0] = x.flat[4]


@parpy.jit
def real_read(x, y):
    y[:] = x.real[1]


@pytest.mark.parametrize("fn, attr", [(strides_read, "strides"), (flat_read, "flat"),
                                      (real_read, "real")])
def test_an_unsupported_attribute_indexed_names_the_attribute(fn, attr):
    # (it said "only array parameters can be indexed")
    with pytest.raises(parpy.CompileError) as e:
        fn(np.zeros((2, 3)), np.zeros(3), opts=cpu_opts())
    text = str(e.value)
    assert text.splitlines()[0] == (
        f"error: attribute `{attr}` of `x` is not supported in parpy functions")
    assert f"x.{attr}" in text


@parpy.jit
def dtype_facts(x, k, y, N):
    for i in range(N):
        y[i, 0] = 1.0 if x.dtype == np.float64 else 2.0
        y[i, 1] = x.dtype != k.dtype
        y[i, 2] = x.itemsize + x.nbytes + k[1:].nbytes + x[i:i + 1].itemsize
        y[i, 3] = ((k.dtype == np.int16) + (x.dtype == parpy.types.F32)
                   + (x.dtype == 'float32') + (x.dtype == np.dtype('float64')))


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_dtype_comparisons_itemsize_and_nbytes_are_known_when_compiling(dt):
    x, k = np.ones(4, dt), np.arange(4, dtype=np.int16)
    got = run_both(dtype_facts, [x, k, np.zeros((4, 4)), 4], cpu_opts({}))
    size = x.itemsize
    assert got[2][0].tolist() == [1.0 if dt == np.float64 else 2.0, 1.0, 6 * size + 6,
                                  1.0 + 2 * (dt == np.float32) + (dt == np.float64)]


@parpy.jit
def by_rank(x, y, N):
    parpy.label('i')
    for i in range(N):
        if x.ndim == 2:
            y[i] = x[i] @ x[i]
        else:
            y[i] = x[i] * x[i]
        y[i] += x[i].sum() if x.ndim > 1 else 0.5 if len(x) != 4 else x[i]


def test_a_comparison_of_attributes_known_when_compiling_chooses_the_branch():
    # (`x.ndim == 2` was not known when compiling: the branch for the other
    # rank was compiled too, and `x[i] @ x[i]` of a 1-D `x` refused)
    opts = cpu_opts({'i': parpy.threads(4)})
    run_both(by_rank, [np.arange(4.0), np.zeros(4), 4], opts)
    run_both(by_rank, [np.arange(12.0).reshape(4, 3), np.zeros(4), 4], opts)
