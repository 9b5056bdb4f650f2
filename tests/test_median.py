"""`np.median(s)` of a slice inside jit code (all its elements): NumPy's
value bit for bit, the middle element or the mean of the two middle ones
as `np.mean` adds them (float64 for integers and bools, float32 for
float16), NaN when an element is NaN, on every backend (no order of
additions is involved). Misuse is refused at the line."""

import warnings

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both

N = 4


def _par():
    return cpu_opts({'i': parpy.threads(N)})


@parpy.jit
def medians(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.median(x[i, :])


def _values(rng, dtype, n):
    if dtype == np.bool_:
        return rng.random((N, n)) < 0.5
    if np.dtype(dtype).kind in "iu":
        # few distinct values: ties
        return rng.integers(0, 9, (N, n)).astype(dtype)
    x = (rng.standard_normal((N, n)) * 10).astype(dtype)
    if n > 3:
        x[1, n // 2] = np.nan
        x[2, :2] = x[2, 2]  # ties
        x[3, 0] = -0.0
    return x


def _numpys(rows, rt):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.array([np.median(r) for r in rows], rt)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32, np.uint8,
                                   np.int64, np.bool_], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [1, 2, 3, 8, 9, 64, 101])
def test_a_median_is_numpys(dtype, n):
    x = _values(np.random.default_rng(n), dtype, n)
    rt = np.median(x[0]).dtype
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = run_both(medians, [x, np.zeros(N, rt), N], _par(), rtol=0, atol=0)[1]
    assert np.array_equal(y, _numpys(x, rt), equal_nan=True)


@parpy.jit
def medians_of_views(x, a, b, N):
    parpy.label('i')
    for i in range(N):
        a[i] = np.median(x[i, 1:, ::-2]) + np.median(x[i].T)
        b[i] = np.median(x[i, 0] * 2.0 - x[i, 1]) - np.median(np.sum(x[i], axis=0))


def test_medians_of_views_and_computed_values_are_numpys():
    x = np.random.default_rng(3).standard_normal((N, 6, 7))
    a, b = run_both(medians_of_views, [x, np.zeros(N), np.zeros(N), N], _par(), rtol=0,
                    atol=0)[1:3]
    assert np.array_equal(a, [np.median(m[1:, ::-2]) + np.median(m.T) for m in x])
    assert np.array_equal(b, [np.median(m[0] * 2.0 - m[1]) - np.median(np.sum(m, axis=0))
                              for m in x])


@parpy.jit
def median_along_an_axis(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.median(x[i], axis=0)


@parpy.jit
def median_of_many(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.median(x[i, :])


@parpy.jit
def median_of_a_number(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.median(x[i, 0])


@pytest.mark.parametrize("fn, args, message", [
    (median_along_an_axis, [np.zeros((N, 3, 4)), np.zeros((N, 4))],
     r"`np.median` supports only `axis=None`"),
    (median_of_many, [np.zeros((N, 5000)), np.zeros(N)],
     r"`np.median` of 5000 elements is not supported \(at most 4096\)"),
    (median_of_a_number, [np.zeros((N, 3)), np.zeros(N)], r"`np.median` of a number"),
])
def test_what_a_median_cannot_be_is_refused(fn, args, message):
    with pytest.raises(parpy.CompileError, match=message):
        parpy.print_compiled(fn, [*args, N], _par())


def test_medians_compile_for_cuda_and_metal():
    check_gpu_code(medians_of_views, lambda backend: [
        np.zeros((N, 6, 7), np.float32), np.zeros(N, np.float32), np.zeros(N, np.float32), N],
        {'i': parpy.threads(N)}, "medians_of_views")
