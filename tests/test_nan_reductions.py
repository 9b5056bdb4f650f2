"""NumPy's reductions that skip NaN (`np.nansum`, `np.nanprod`,
`np.nanmax`, `np.nanmin`, `np.nanmean`), `np.ptp` and `np.average`, with
`axis=` and `keepdims=`: NumPy's bits wherever `np.sum` is (along an axis,
over a 1-D slice), NaN where a whole row is NaN, integers as NumPy's plain
reductions. Each program runs as plain Python (the reference) and compiled
(conftest.run_both), and is compared bit for bit with NumPy itself."""

import warnings

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both, same_bits

N = 4


def _par():
    return cpu_opts({'i': parpy.threads(N)})


def data(dtype):
    rng = np.random.default_rng(7)
    if np.dtype(dtype).kind == 'f':
        x = (rng.standard_normal((N, 6, 10)) * 10).astype(dtype)
        x[0, :, 3] = np.nan     # a NaN in every row of axis 2
        x[1, 2, :] = np.nan     # a whole row
        x[2] = np.nan           # everything
        x[3, 1, 1] = np.nan
        x[3, 4, 4] = -np.inf
        return x
    return rng.integers(-50, 50, (N, 6, 10)).astype(dtype)


@parpy.jit
def along_axes(x, s, p, mx, mn, me, pt, av, N):
    parpy.label('i')
    for i in range(N):
        s[i, :] = np.nansum(x[i, :, :], axis=1)
        p[i, :] = np.nanprod(x[i, :, 0:3], axis=1)
        mx[i, :] = np.nanmax(x[i, :, :], axis=0)
        mn[i, :, :] = np.nanmin(x[i, :, :], axis=1, keepdims=True)
        me[i, :] = np.nanmean(x[i, :, :], axis=1)
        pt[i, :] = np.ptp(x[i, :, :], axis=0)
        av[i, :] = np.average(x[i, :, :], axis=1)


@parpy.jit
def of_rows(x, s, mx, mn, me, N):
    parpy.label('i')
    for i in range(N):
        s[i] = np.nansum(x[i, 2, :])
        mx[i] = np.nanmax(x[i, 2, :])
        mn[i] = x[i, 3, :].min() + np.nanmin(x[i, 1, :])
        me[i] = np.nanmean(x[i, 0, :])


def expected(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [np.nansum(x, axis=2), np.nanprod(x[:, :, 0:3], axis=2),
                np.nanmax(x, axis=1), np.nanmin(x, axis=2, keepdims=True),
                np.nanmean(x, axis=2), np.ptp(x, axis=1), np.average(x, axis=2)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32, np.int8],
                         ids=lambda d: np.dtype(d).name)
def test_nan_reductions_along_axes_are_numpys(dtype):
    # (each was "no parpy equivalent inside jit code")
    x = data(dtype)
    want = expected(x)
    outs = [np.zeros(w.shape, w.dtype) for w in want]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = run_both(along_axes, [x, *outs, N], _par())
    for g, w in zip(got[1:-1], want):
        same_bits(g, w, _par())


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=lambda d: np.dtype(d).name)
def test_nan_reductions_of_rows(dtype):
    x = data(dtype)
    outs = [np.zeros(N, dtype) for _ in range(4)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = run_both(of_rows, [x, *outs, N], _par())
        same_bits(got[1], np.nansum(x[:, 2, :], axis=1), _par())
        same_bits(got[2], np.nanmax(x[:, 2, :], axis=1), _par())  # row 1: all NaN
        same_bits(got[4], np.nanmean(x[:, 0, :], axis=1), _par())
    assert np.isnan(got[2][1]) and np.isnan(got[2][2])


@parpy.jit
def variances(x, v, s, v1, va, sk, N):
    parpy.label('i')
    for i in range(N):
        v[i] = np.nanvar(x[i, 2, :])
        s[i] = np.nanstd(x[i, :, :])
        v1[i] = np.nanvar(x[i, 3, :], ddof=1)
        va[i, :] = np.nanvar(x[i, :, :], axis=1)
        sk[i, :, :] = np.nanstd(x[i, :, 1:], axis=0, keepdims=True, ddof=2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32],
                         ids=lambda d: np.dtype(d).name)
def test_nanvar_and_nanstd_are_numpys(dtype):
    # (each was "no parpy equivalent inside jit code"): the mean of the
    # numbers, the squared deviations of the numbers, `ddof`, NaN where
    # fewer than `ddof + 1` numbers remain; integers as np.var / np.std
    x = data(dtype)
    out = np.float64 if np.dtype(dtype).kind == 'i' else dtype
    outs = [np.zeros(N, out), np.zeros(N, out), np.zeros(N, out), np.zeros((N, 6), out),
            np.zeros((N, 1, 9), out)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = run_both(variances, [x, *outs, N], _par(), rtol=1e-2, atol=1e-2)
        want = [np.array([f(x[i]) for i in range(N)]) for f in (
            lambda a: np.nanvar(a[2, :]), np.nanstd, lambda a: np.nanvar(a[3, :], ddof=1))]
        want += [np.nanvar(x, axis=2),
                np.nanstd(x[:, :, 1:], axis=1, keepdims=True, ddof=2)]
    for g, w in zip(got[1:-1], want):
        same_bits(g, w.astype(out), _par())
    if np.dtype(dtype).kind == 'f':
        assert np.isnan(got[1][2])          # all NaN


@parpy.jit
def nested(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.nanmax(np.sum(x[i, :, :], axis=1)) + np.nanmin(x[i, :, 0] * 2.0)


def test_a_reduction_inside_the_argument():
    x = data(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_both(nested, [x, np.zeros(N), N], _par())


@parpy.jit
def ptp_of_bools(b, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.ptp(b[i, :])


def test_ptp_of_bools_is_numpys_type_error():
    b = np.zeros((N, 3), bool)
    with pytest.raises(TypeError, match="cannot subtract NumPy bools"):
        parpy.print_compiled(ptp_of_bools, [b, np.zeros(N, bool), N], _par())


def test_nan_reductions_compile_for_cuda_and_metal():
    x = np.zeros((N, 6, 10), np.float32)
    outs = [np.zeros(w.shape, np.float32) for w in expected(x)]
    check_gpu_code(along_axes, lambda backend: [x, *outs, N], {'i': parpy.threads(N)},
                   "nan_reductions")


@parpy.jit
def nan_args(x, k, N):
    parpy.label('i')
    for i in range(N):
        k[i, 0] = np.nanargmax(x[i, 0, :])
        k[i, 1] = np.nanargmin(x[i, 0, :])
        k[i, 2] = np.nanargmax(x[i, 1:3, :])
        k[i, 3:13] = np.nanargmin(x[i, 2:4, :], axis=0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32],
                         ids=lambda d: np.dtype(d).name)
def test_nanargmax_and_nanargmin_are_numpys(dtype):
    # NaN read as -inf / inf: [nan, -inf] gives 0, NumPy's answer
    rng = np.random.default_rng(11)
    x = rng.integers(-9, 9, (N, 6, 10)).astype(dtype)
    if np.dtype(dtype).kind == 'f':
        x[rng.random((N, 6, 10)) < 0.3] = np.nan
        x[:, 3, :] = 1.0        # each column of rows 2:4 has a number
        x[0, 0, :2] = [np.nan, -np.inf]
        x[1, 0, :] = np.nan
        x[1, 0, 9] = np.inf
        x[2, 1:3, :] = np.nan
        x[2, 2, 5] = -np.inf
    got = run_both(nan_args, [x, np.zeros((N, 13), np.int64), N], _par())[1]
    want = np.zeros((N, 13), np.int64)
    nan_args.py_func(x, want, N)
    assert np.array_equal(got, want)


@parpy.jit
def all_nan_arg(x, k, N):
    parpy.label('i')
    for i in range(N):
        k[i] = np.nanargmax(x[i, 2, :])


def test_nanargmax_of_all_nan_is_numpys_value_error():
    x = data(np.float64)
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        all_nan_arg.py_func(x.copy(), np.zeros(N, np.int64), N)
    with pytest.raises(ValueError, match="All-NaN slice encountered") as e:
        all_nan_arg(x, np.zeros(N, np.int64), N, opts=_par())
    assert "test_nan_reductions.py" in str(e.value)
    x[1, 2, 7] = 0.5
    x[2, 2, 0] = -np.inf
    k = np.zeros(N, np.int64)
    all_nan_arg(x, k, N, opts=_par())
    assert k[1] == 7 and k[2] == 0


def test_nanargmax_compiles_for_cuda_and_metal():
    check_gpu_code(nan_args, lambda b: [np.zeros((N, 6, 10), np.float32),
                                        np.zeros((N, 13), np.int64), N],
                   {'i': parpy.threads(N)}, "nan_args")
