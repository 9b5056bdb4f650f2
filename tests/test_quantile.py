"""`np.percentile(s, q)` and `np.quantile(s, q)` of a slice inside jit code
(all its elements, a Python number `q`, NumPy's default `method='linear'`):
NumPy's value bit for bit, its two neighbours of the virtual index
`(n - 1) * q` interpolated by NumPy's own formula, in the elements' float
type (float64 for integers, whose difference wraps as NumPy's does), NaN
when an element is NaN; NumPy's quirks included (`np.percentile([1, inf],
100)` is NaN, the maximum -0.0 comes out as 0.0). Misuse is refused at
the line."""

import warnings

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both

N = 4


def _par():
    return cpu_opts({'i': parpy.threads(N)})


@parpy.jit
def spread(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.percentile(x[i, :], 25)
        y[i, 1] = np.percentile(x[i, :], 90.5)
        y[i, 2] = np.quantile(x[i, :], 0.5)
        y[i, 3] = np.quantile(x[i, :], 1.0 / 3.0)
        y[i, 4] = np.percentile(x[i, :], 100)
        y[i, 5] = np.percentile(x[i, :], 0)
        y[i, 6] = np.percentile(x[i, :], q=75)


def _values(rng, dtype, n):
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        # the whole range: differences that wrap
        return rng.integers(info.min, info.max, (N, n), endpoint=True).astype(dtype)
    x = (rng.standard_normal((N, n)) * 10).astype(dtype)
    if n > 3:
        x[1, n // 2] = np.nan
        x[2, :2] = x[2, 2]  # ties
        x[3, 0] = -0.0
    return x


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int8, np.int32, np.uint8,
                                   np.int64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [1, 2, 3, 8, 9, 64, 101])
def test_quantiles_are_numpys(dtype, n):
    x = _values(np.random.default_rng(n), dtype, n)
    rt = np.percentile(x[0], 25).dtype
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = run_both(spread, [x, np.zeros((N, 7), rt), N], _par(), rtol=0, atol=0)[1]
        want = np.array([[np.percentile(r, 25), np.percentile(r, 90.5), np.quantile(r, 0.5),
                          np.quantile(r, 1.0 / 3.0), np.percentile(r, 100), np.percentile(r, 0),
                          np.percentile(r, 75)] for r in x], rt)
    assert y.tobytes() == want.tobytes() or np.array_equal(y, want, equal_nan=True)


@parpy.jit
def top(x, y):
    y[0] = np.percentile(x, 100)


def test_numpys_quirks_at_the_top():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = run_both(top, [np.array([1.0, np.inf]), np.zeros(1)], cpu_opts(), rtol=0, atol=0)[1]
        assert np.isnan(y[0])
        y = run_both(top, [np.array([-1.0, -0.0]), np.zeros(1)], cpu_opts(), rtol=0, atol=0)[1]
        assert y[0] == 0.0 and not np.signbit(y[0])


@parpy.jit
def q_of_argument(x, y, q):
    y[0] = np.percentile(x[1:], q)


def test_q_may_be_a_scalar_argument():
    x = np.random.default_rng(1).random(20)
    for q in (10.0, 37, 99.9):
        run_both(q_of_argument, [x, np.zeros(1), q], cpu_opts(), rtol=0, atol=0)


@parpy.jit
def greatest_quantile(x, y):
    parpy.label('r')
    for r in range(5):
        y[0] = max(y[0], parpy.builtin.convert(np.quantile(x[r, 1:], 0.2), parpy.types.F64))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_a_parallel_reduction_of_quantiles(dtype):
    # float16 was "not a reduction": the NaN literal of the quantile's NaN
    # case was unlike itself, so `y[0] = max(y[0], e)` did not match
    x = np.random.default_rng(3).random((5, 6)).astype(dtype)
    opts = cpu_opts({'r': parpy.threads(4).par_reduction()})
    run_both(greatest_quantile, [x, np.zeros(1)], opts, rtol=0, atol=0)


@parpy.jit
def out_of_range(x, y):
    y[0] = np.percentile(x, 101)


@parpy.jit
def numpy_number_q(x, y):
    y[0] = np.quantile(x, np.float32(0.5))


@parpy.jit
def other_method(x, y):
    y[0] = np.percentile(x, 50, method='nearest')


@parpy.jit
def of_bools(b, y):
    y[0] = np.percentile(b, 50)


def test_misuse_is_refused_at_the_line():
    x, y = np.zeros(5), np.zeros(1)
    with pytest.raises(ValueError):
        out_of_range.py_func(x, y)
    with pytest.raises(parpy.CompileError, match=r"`q` is 101: Percentiles must be in the range \[0, 100\]"):
        out_of_range(x, y, opts=cpu_opts())
    with pytest.raises(parpy.CompileError, match="must be a Python number known when compiling"):
        numpy_number_q(x, y, opts=cpu_opts())
    with pytest.raises(parpy.CompileError, match="method"):
        other_method(x, y, opts=cpu_opts())
    with pytest.raises(TypeError):
        of_bools.py_func(np.zeros(3, bool), y)
    with pytest.raises(parpy.CompileError, match="of booleans is not supported"):
        of_bools(np.zeros(3, bool), y, opts=cpu_opts())


def test_quantiles_compile_for_cuda_and_metal():
    check_gpu_code(spread, lambda backend: [np.zeros((N, 9), np.float32), np.zeros((N, 7), np.float32), N],
                   {'i': parpy.threads(N)}, "spread")
