"""Reductions along an axis (`np.sum(x[i, :, :], axis=0)`, `s.max(axis=-1)`,
`np.mean(..., axis=(0, 2))`): the dimensions left are the result's, assigned
to a slice (or reduced further). Each program runs as plain Python (the
reference) and compiled (conftest.run_both); on the Cpu, float results are
NumPy's bit for bit (NumPy adds along the last axis pairwise, along the
others in order, in the elements' type)."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both

N = 3


def _par():
    return cpu_opts({'i': parpy.threads(N)})


def _exact_on_cpu(opts, got, want):
    """Float results equal NumPy's bits on the Cpu (other backends: close,
    which run_both checked)."""
    if opts.backend == parpy.CompileBackend.Cpu:
        assert got.dtype == want.dtype
        assert got.tobytes() == want.tobytes(), np.max(np.abs(got - want))


def _data(dtype, shape=(N, 37, 300), seed=1):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == 'f':
        return (rng.standard_normal(shape) * 3).astype(dtype)
    return rng.integers(-100, 100, shape).astype(dtype)


@parpy.jit
def sum_axis0(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.sum(x[i, :, :], axis=0)


@parpy.jit
def sum_last_axis(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = x[i, :, :].sum(axis=-1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32, np.uint8])
def test_sums_along_each_axis_are_numpys(dtype):
    x = _data(dtype)
    opts = _par()
    got = run_both(sum_axis0, [x, np.zeros((N, 300), x.sum(axis=1).dtype), N], opts)
    _exact_on_cpu(opts, got[1], x.sum(axis=1))
    got = run_both(sum_last_axis, [x, np.zeros((N, 37), x.sum(axis=2).dtype), N], opts)
    _exact_on_cpu(opts, got[1], x.sum(axis=2))


@parpy.jit
def stats(x, m0, v1, s0, a0, n1, N):
    parpy.label('i')
    for i in range(N):
        m0[i, :] = np.mean(x[i, :, :], axis=0)
        v1[i, :] = np.var(x[i, :, :], axis=1)
        s0[i, :] = x[i, :, :].std(axis=0, ddof=1)
        a0[i, :] = np.argmax(x[i, :, :], axis=0)
        n1[i, :] = np.linalg.norm(x[i, :, :], axis=1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_mean_var_std_argmax_and_norm_along_an_axis(dtype):
    x = _data(dtype, (N, 20, 30))
    outs = [np.zeros((N, 30), dtype), np.zeros((N, 20), dtype), np.zeros((N, 30), dtype),
            np.zeros((N, 30), np.int64), np.zeros((N, 20), dtype)]
    opts = _par()
    got = run_both(stats, [x, *outs, N], opts)
    _exact_on_cpu(opts, got[1], x.mean(axis=1))
    _exact_on_cpu(opts, got[2], x.var(axis=2))
    _exact_on_cpu(opts, got[3], x.std(axis=1, ddof=1))
    assert np.array_equal(got[4], x.argmax(axis=1))
    if dtype != np.float16:  # NumPy's norm of float16 squares in float16
        _exact_on_cpu(opts, got[5], np.linalg.norm(x, axis=2))


@parpy.jit
def any_all_max_min(x, a, b, c, d, N):
    parpy.label('i')
    for i in range(N):
        a[i, :] = np.any(x[i, :, :] > 2.0, axis=1)
        b[i, :] = (x[i, :, :] > -4.0).all(axis=0)
        c[i, :] = np.max(x[i, :, :], axis=0)
        d[i, :] = x[i, :, :].min(1)


def test_any_all_max_min_along_an_axis():
    x = _data(np.float64, (N, 20, 30))
    x[1, 3, 4] = np.nan
    outs = [np.zeros((N, 20), bool), np.zeros((N, 30), bool), np.zeros((N, 30)), np.zeros((N, 20))]
    got = run_both(any_all_max_min, [x, *outs, N], _par())
    assert np.array_equal(got[1], (x > 2.0).any(axis=2))
    assert np.array_equal(got[2], (x > -4.0).all(axis=1))
    assert np.array_equal(got[3], x.max(axis=1), equal_nan=True)
    assert np.array_equal(got[4], x.min(axis=2), equal_nan=True)


@parpy.jit
def center_and_scale(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :, :] = (x[i, :, :] - np.mean(x[i, :, :], axis=0)) / np.max(x[i, :, :])


def test_an_axis_reduction_broadcasts_against_the_other_operands():
    x = _data(np.float64, (N, 6, 7))
    opts = _par()
    got = run_both(center_and_scale, [x, np.zeros_like(x), N], opts)
    want = (x - x.mean(axis=1, keepdims=True)) / x.max(axis=(1, 2), keepdims=True)
    _exact_on_cpu(opts, got[1], want)


@parpy.jit
def several_axes(x, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.sum(x[i, :, :, :], axis=(0, 2))
        z[i, :, :] = np.prod(x[i, :, :, :], axis=1)


def test_a_tuple_of_axes_and_a_3d_result():
    x = _data(np.float64, (N, 3, 4, 5))
    got = run_both(several_axes, [x, np.zeros((N, 4)), np.zeros((N, 3, 5)), N], _par())
    assert np.allclose(got[1], x.sum(axis=(1, 3)), rtol=1e-14)
    assert np.array_equal(got[2], x.prod(axis=2))


@parpy.jit
def max_of_row_sums(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.max(np.sum(x[i, :, :], axis=1)) + np.argmin(np.sum(x[i, :, :], axis=0))


def test_a_reduction_of_an_axis_reduction():
    x = _data(np.float32, (N, 9, 11))
    opts = _par()
    got = run_both(max_of_row_sums, [x, np.zeros(N), N], opts)
    _exact_on_cpu(opts, got[1], x.sum(axis=2).max(axis=1) + x.sum(axis=1).argmin(axis=1))


@parpy.jit
def column_sums_in_place(x):
    parpy.label('j')
    x[0, :] = np.sum(x[:, ::-1], axis=0)


@parpy.jit
def column_sums_top_level(x, y):
    parpy.label('j')
    y[:] = np.sum(x, axis=0)


def test_axis_reductions_outside_loops_and_over_their_own_target():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 8))
    # NumPy sums first, then writes row 0: reads of row 0 see the old values
    run_both(column_sums_in_place, [x], cpu_opts({'j': parpy.threads(8)}))
    got = run_both(column_sums_top_level, [x, np.zeros(8)], cpu_opts({'j': parpy.threads(8)}))
    _exact_on_cpu(cpu_opts(), got[1], x.sum(axis=0))


@parpy.jit
def axis_reduction_in_a_local(x, y, z, N):
    parpy.label('i')
    for i in range(N):
        d = np.prod(x[i, 1:4, 0:3], axis=-2) - 1.0
        m = x[i, :, :].max(axis=0)
        z[i, :] = d * 2.0
        y[i, :] = m + np.sum(m)


def test_a_local_holds_an_axis_reduction_as_an_array_expression():
    # found by the fuzzer (feature axis_reduce): `d = np.prod(..., axis=-2)
    # - s0` was "leaves 1 dimension (an array), but `d` is a name"
    x = _data(np.float64, (N, 5, 7))
    got = run_both(axis_reduction_in_a_local, [x, np.zeros((N, 7)), np.zeros((N, 3)), N], _par())
    m = x.max(axis=1)
    _exact_on_cpu(_par(), got[1], m + m.sum(axis=1, keepdims=True))
    _exact_on_cpu(_par(), got[2], (x[:, 1:4, 0:3].prod(axis=1) - 1.0) * 2.0)


@parpy.jit
def normalize_with_keepdims(x, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i, :, :] = x[i, :, :] / np.sum(x[i, :, :], axis=1, keepdims=True) \
            - x[i, :, :].max(0, keepdims=True)
        m = np.mean(x[i, :, :], axis=-1, keepdims=True)
        z[i, :, :] = (x[i, :, :] - m) * np.std(x[i, :, :], keepdims=True)


def test_keepdims_leaves_the_reduced_axes_to_broadcast():
    # `keepdims=True` was "supports only `keepdims=False`"
    x = _data(np.float32, (N, 4, 6)) + 10
    opts = _par()
    got = run_both(normalize_with_keepdims, [x, np.zeros_like(x), np.zeros_like(x), N], opts)
    _exact_on_cpu(opts, got[1], x / x.sum(axis=2, keepdims=True) - x.max(axis=1, keepdims=True))
    # (the std of every element adds over two dimensions at once: close to
    # NumPy, which run_both checked, not bit for bit)
    want = (x - x.mean(axis=2, keepdims=True)) * np.array([s.std() for s in x])[:, None, None]
    assert np.allclose(got[2], want, rtol=1e-5)


@parpy.jit
def axis_sums_on_gpus(x, y, z, N):
    parpy.label('i')
    for i in range(N):
        parpy.label('j')
        y[i, :] = np.sum(x[i, :, :], axis=0)
        z[i, :] = np.mean(x[i, :, :], axis=1)


def test_axis_reductions_compile_for_cuda_and_metal():
    def args(_backend):
        return [np.zeros((N, 16, 24), np.float32), np.zeros((N, 24), np.float32),
                np.zeros((N, 16), np.float32), N]
    check_gpu_code(axis_sums_on_gpus, args, {'i': parpy.threads(N), 'j': parpy.threads(32)},
                   "axis_sums")


def _error(fn, args):
    with pytest.raises(parpy.CompileError) as e:
        fn(*args, opts=_par())
    return str(e.value)


@parpy.jit
def axis_out_of_bounds(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.sum(x[i, :, :], axis=2)


@parpy.jit
def repeated_axis(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.sum(x[i, :, :], axis=(1, -1))


@parpy.jit
def axis_result_into_an_element(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.sum(x[i, :, :], axis=1)


@parpy.jit
def axis_not_constant(x, y, N, a):
    parpy.label('i')
    for i in range(N):
        y[i, :] = x[i, :, :].sum(axis=a)


@parpy.jit
def argmax_of_two_axes(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.argmax(x[i, :, :], axis=(0, 1))


def test_what_an_axis_cannot_be_is_a_located_error():
    x = np.zeros((N, 4, 5))
    msg = _error(axis_out_of_bounds, [x, np.zeros((N, 4)), N])
    assert "axis 2 is out of bounds for array of dimension 2" in msg and "axis=2" in msg
    msg = _error(repeated_axis, [x, np.zeros((N, 4)), N])
    assert "repeated axis" in msg and "axis=(1, -1)" in msg
    msg = _error(axis_result_into_an_element, [x, np.zeros(N), N])
    assert "leaves 1 dimension (an array), but it is not assigned to a slice" in msg
    assert "y[i] = np.sum(" in msg
    msg = _error(axis_not_constant, [x, np.zeros((N, 4)), N, 1.5])
    assert "`axis` must be an integer or a tuple of integers known when compiling" in msg
    msg = _error(argmax_of_two_axes, [x, np.zeros((N, 4), np.int64), N])
    assert "the `axis` of `argmax` is one integer" in msg


@parpy.jit
def axis_from_a_scalar_argument(x, y, N, a):
    parpy.label('i')
    for i in range(N):
        y[i, :] = x[i, :, :].max(axis=a)


def test_an_axis_may_be_a_specialized_scalar_argument():
    x = _data(np.float64, (N, 4, 5))
    got = run_both(axis_from_a_scalar_argument, [x, np.zeros((N, 5)), N, 0], _par())
    assert np.array_equal(got[1], x.max(axis=1))
    got = run_both(axis_from_a_scalar_argument, [x, np.zeros((N, 4)), N, -1], _par())
    assert np.array_equal(got[1], x.max(axis=2))


@parpy.jit
def labelled_max_of_row_sums(x, y):
    parpy.label('i')
    y[0] = np.max(np.sum(x, axis=1))


def test_a_statements_label_goes_to_its_reduction_not_one_inside():
    # the label parallelizes the max; each row sum is an element of it (the
    # label used to reach the sum, which left the Cuda statement without a
    # parallel loop)
    x = _data(np.float32, (40, 9))
    opts = cpu_opts({'i': parpy.threads(32)})
    got = run_both(labelled_max_of_row_sums, [x, np.zeros(1, np.float32)], opts)
    assert np.isclose(got[1][0], x.sum(axis=1).max(), rtol=1e-6)
    cuda = parpy.par({'i': parpy.threads(32)})
    cuda.backend = parpy.CompileBackend.Cuda
    code = parpy.print_compiled(labelled_max_of_row_sums, [x, np.zeros(1, np.float32)], cuda)
    assert "parpy_warp_max_f32(partial)" in code
