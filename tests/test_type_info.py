"""`np.finfo(t)` and `np.iinfo(t)` inside a kernel (`t` a NumPy type or
`x.dtype`): NumPy's constants with NumPy's types (a float of `t` for
`finfo`'s values, so `x[i] + np.finfo(np.float32).eps` stays float32 and
a float64 `eps` promotes a float32 operand; a Python int for `iinfo`'s).
Compared with plain Python."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both


@parpy.jit
def guarded_ratio(x, d, y, N):
    for i in range(N):
        y[i] = x[i] / max(d[i], np.finfo(d.dtype).tiny)
        y[i] += np.finfo(x.dtype).eps


@parpy.jit
def float_limits(y):
    y[0] = np.finfo(np.float16).eps
    y[1] = np.finfo(np.float16).max
    y[2] = np.finfo(np.float32).smallest_subnormal
    y[3] = np.finfo(np.float32).min
    y[4] = np.finfo(np.float64).epsneg
    y[5] = np.finfo(np.float64).smallest_normal
    y[6] = np.finfo(np.float32).resolution
    y[7] = np.finfo(np.float64).bits


@parpy.jit
def int_limits(x, y, u, N):
    for i in range(N):
        y[i] = min(x[i] * 1000, np.iinfo(np.int32).max) + np.iinfo(x.dtype).min
        u[i] = np.iinfo(np.uint64).max - np.uint64(i)


@parpy.jit
def promotes(x, y, N):
    for i in range(N):
        y[i] = x[i] + np.finfo(np.float64).eps


def test_finfo_and_iinfo_are_numpys_constants():
    rng = np.random.default_rng(2)
    for t in (np.float16, np.float32, np.float64):
        x = rng.random(7).astype(t)
        d = np.array([0, 1e-30, 2, 0, 3, 1e-40, 5]).astype(t)
        with np.errstate(all="ignore"):
            run_both(guarded_ratio, [x, d, np.zeros(7, t), 7], cpu_opts(), rtol=0, atol=0)
    y = run_both(float_limits, [np.zeros(8)], cpu_opts(), rtol=0, atol=0)[0]
    assert y[1] == 65504.0 and y[7] == 64.0
    x = np.array([5, -7, 3_000_000, -3_000_000], np.int32)
    run_both(int_limits, [x, np.zeros(4, np.int64), np.zeros(4, np.uint64), 4], cpu_opts(), rtol=0, atol=0)
    # a float64 `eps` is a NumPy float64: it promotes float32, as in NumPy
    x32 = rng.random(5).astype(np.float32)
    y = run_both(promotes, [x32, np.zeros(5), 5], cpu_opts(), rtol=0, atol=0)[1]
    assert np.array_equal(y, x32.astype(np.float64) + np.finfo(np.float64).eps)


@parpy.jit
def finfo_of_int(x, y):
    y[0] = np.finfo(x.dtype).eps


@parpy.jit
def unknown_attr(y):
    y[0] = np.finfo(np.float32).machep


def test_finfo_errors_are_numpys():
    with pytest.raises(ValueError):
        finfo_of_int.py_func(np.zeros(2, np.int32), np.zeros(1))
    with pytest.raises(parpy.CompileError, match="`np.finfo` takes an inexact type, not int32"):
        finfo_of_int(np.zeros(2, np.int32), np.zeros(1), opts=cpu_opts())
    with pytest.raises(parpy.CompileError, match="`np.finfo` has no attribute `machep` here"):
        unknown_attr(np.zeros(1), opts=cpu_opts())
