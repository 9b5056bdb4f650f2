"""Local arrays in jit code: `tmp = np.zeros(K)` (also `np.ones`,
`np.empty`, `np.full`, the `_like` forms, with `dtype=`). Made inside a
parallel loop, each iteration has its own; made outside, it is one array.
Each program runs as plain Python (the reference) and compiled
(conftest.run_both)."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both

N, M = 6, 9


def _par():
    return cpu_opts({'i': parpy.threads(N)})


@parpy.jit
def running_sums(x, y, N):
    parpy.label('i')
    for i in range(N):
        tmp = np.zeros(x.shape[1], dtype=x.dtype)
        for j in range(x.shape[1]):
            tmp[j] = x[i, j] * 2
        for j in range(1, x.shape[1]):
            tmp[j] += tmp[j - 1]
        y[i, :] = tmp


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_each_parallel_iteration_has_its_own_array(dtype):
    x = (np.random.default_rng(1).standard_normal((N, M)) * 10).astype(dtype)
    got = run_both(running_sums, [x, np.zeros((N, M), dtype), N], _par())
    assert np.array_equal(got[1], np.cumsum(x * 2, axis=1, dtype=dtype))


@parpy.jit
def histograms(v, counts, N):
    parpy.label('i')
    for i in range(N):
        h = np.zeros(4, dtype=np.int64)
        for j in range(v.shape[1]):
            h[v[i, j] % 4] += 1
        counts[i, :] = h


def test_a_local_histogram_per_row():
    v = np.random.default_rng(2).integers(0, 100, (N, M))
    got = run_both(histograms, [v, np.zeros((N, 4), np.int64), N], _par())
    assert np.array_equal(got[1], [np.bincount(r % 4, minlength=4) for r in v])


@parpy.jit
def made_every_way(x, y, z, N):
    parpy.label('i')
    for i in range(N):
        a = np.zeros_like(x[i, :])
        b = np.full(x.shape[1], 2.5, dtype=np.float32)
        c = np.ones((2, 3), int)
        e = np.empty((x.shape[1],), np.float64)
        f = np.full_like(x[i, :], x[i, 0])
        g = np.full(3, 7)
        e[:] = x[i, :]
        a[:] = e + b
        y[i, :] = a * np.sum(c) + f
        z[i] = g[1] + c[1, 2]


def test_shapes_dtypes_and_fill_values_are_numpys():
    x = np.random.default_rng(3).standard_normal((N, M))
    got = run_both(made_every_way, [x, np.zeros((N, M)), np.zeros(N, np.int64), N], _par())
    np.testing.assert_allclose(got[1], (x + np.float32(2.5)) * 6 + x[:, :1])
    assert list(got[2]) == [8] * N


@parpy.jit
def one_array_for_all_iterations(x, y, N):
    # (on a GPU, the label fills it in parallel code)
    parpy.label('i')
    vals = np.zeros(N)
    parpy.label('i')
    for i in range(N):
        vals[i] = np.max(x[i, :])
    parpy.label('i')
    y[:] = vals[::-1] * 2.0


def test_an_array_made_outside_the_parallel_loop_is_one_array():
    x = np.random.default_rng(4).standard_normal((N, M))
    got = run_both(one_array_for_all_iterations, [x, np.zeros(N), N], _par())
    np.testing.assert_allclose(got[1], x.max(axis=1)[::-1] * 2.0)


def test_local_arrays_compile_for_cuda_and_metal():
    def args(backend):
        return [np.zeros((N, M), np.float32), np.zeros((N, M), np.float32), N]
    codes = check_gpu_code(running_sums, args, {'i': parpy.threads(N)}, "running_sums")
    for code in codes.values():
        assert f"tmp[{M}]" in code


@parpy.jit
def too_big(x, y):
    t = np.zeros(4096)
    y[0] = x[0]


@parpy.jit
def shape_at_run_time(x, y, n):
    t = np.zeros(n)
    y[0] = x[0]


@parpy.jit
def without_elements(x, y):
    t = np.zeros((3, 0))
    y[0] = x[0]


@parpy.jit
def unknown_keyword(x, y):
    t = np.zeros(3, order='F')
    y[0] = x[0]


@parpy.jit
def like_a_number(x, y):
    t = np.zeros_like(x[0])
    y[0] = x[0]


@parpy.jit
def shared_by_iterations(x, y, N):
    acc = np.zeros(x.shape[1])
    parpy.label('i')
    for i in range(N):
        acc[:] += x[i, :]
    y[:] = acc


@pytest.mark.parametrize("fn,message", [
    (too_big, "the local array `t` takes 32768 bytes, more than the 16384"),
    (shape_at_run_time, "the shape of `np.zeros` must be known when compiling"),
    (without_elements, "`np.zeros` makes an array without elements"),
    (unknown_keyword, "`np.zeros` takes no keyword `order` in parpy functions"),
    (like_a_number, "`np.zeros_like` of a number"),
    (shared_by_iterations, "every iteration of the parallel loop `i` updates the same element of `acc`"),
])
def test_what_a_local_array_cannot_be_is_a_located_error(fn, message):
    args = {shared_by_iterations: [np.ones((N, M)), np.zeros(M), N]}.get(fn, [np.ones(3), np.zeros(1)])
    if fn is shape_at_run_time:
        args = [np.ones(3), np.zeros(1), 3]
    opts = _par()
    opts.specialize_scalars = False
    with pytest.raises(parpy.CompileError) as e:
        fn(*args, opts=opts)
    assert message in str(e.value), str(e.value)
    assert "test_local_arrays.py:" in str(e.value), str(e.value)


@parpy.jit
def assigned_twice(x, y):
    # (Python binds `t` to two arrays: each is a local array of its own)
    t = np.zeros(3)
    t[1] = x[0]
    y[0] = t[1] + t[0]
    t = np.zeros((2, 4), np.int8)
    t[1, 3] = 7
    y[1] = t[1, 3] * 20 + t[0, 0]


def test_a_name_assigned_two_arrays_holds_each_in_turn():
    # (was "`t` is re-bound to an array of another shape or type": one
    # variable for both, where Python has two arrays)
    with np.errstate(over="ignore"):
        got = run_both(assigned_twice, [np.array([1.5]), np.zeros(2)], cpu_opts(), rtol=0, atol=0)
    # (the int8 product wraps, as NumPy's does: 7 * 20 is 140 - 256)
    assert got[1].tolist() == [1.5, -116.0]


@parpy.jit
def shaped_like_arguments(x, y, N):
    parpy.label('i')
    for i in range(N):
        t = np.zeros(x.shape)
        u = np.empty(x[i].shape, x.dtype)
        r = np.ones(x[0].shape, np.int32)
        t[i, :] = x[i, :] * 2.0
        u[:] = t[i, :] + r
        y[i, :] = u


def test_a_new_array_takes_another_arrays_shape():
    # (np.zeros(x.shape) was "attribute `shape` of `x` cannot be used here")
    x = np.arange(12.0).reshape(3, 4)
    run_both(shaped_like_arguments, [x, np.zeros((3, 4)), 3], cpu_opts({'i': parpy.threads(3)}))
