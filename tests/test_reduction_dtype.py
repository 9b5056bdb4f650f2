"""`np.sum(a, dtype=T)`, `np.prod(a, dtype=T)`, `np.mean(a, dtype=T)` and
their methods: NumPy casts the elements to `T` and reduces in `T` (a
narrow integer wraps as NumPy's does); and a float32 sum the program
converts itself (`a.astype(np.float64)`) adds float64 elements pairwise,
as NumPy does, not in float32 blocks. `astype(int / float / bool)` is
NumPy's int64, float64, bool. Each program runs as plain Python (the
reference) and compiled, compared bit for bit."""

import numpy as np
import pytest

import parpy
from conftest import bits_of, cpu_opts, run_both

N = 4


def _bits(fn, args, out):
    bits_of(run_both, fn, args, out, cpu_opts({'i': parpy.threads(N)}))


@parpy.jit
def sums_in_a_dtype(x, h, k, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.sum(x[i, :], dtype=np.float64)
        y[i, 1] = x[i, :].mean(dtype=np.float64)
        y[i, 2] = np.sum(x[i, :].astype(np.float64))
        y[i, 3] = np.sum(np.float64(x[i, 0:300]) * 2.0)
        y[i, 4] = np.sum(k[i, :], dtype=np.float32)
        y[i, 5] = np.mean(h[i, :], dtype=np.float32) + np.sum(h[i, :], dtype=np.float16)
        y[i, 6] = np.sum(x[0:2, 0:50], dtype=np.float64) + np.prod(k[i, 0:6], dtype=np.float64)
        y[i, 7] = k[i, :].astype(float).sum() + x[i, 0:8].astype(bool).sum()
        z[i, 0] = np.sum(k[i, :], dtype=np.int8)
        z[i, 1] = k[i, :].sum(dtype=np.uint8)
        z[i, 2] = np.prod(k[i, 0:5], dtype=np.int16)
        z[i, 3] = np.sum(k[i, :] - 100, dtype=bool)
        z[i, 4] = np.sum(k[i, :], dtype=np.int64) + (x[i, 0:4] * 10.0).astype(int)[1]


def test_a_reduction_in_a_dtype_is_numpys():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, 3000)).astype(np.float32)
    h = rng.standard_normal((N, 300)).astype(np.float16)
    k = rng.integers(90, 110, (N, 40)).astype(np.int8)
    k[0, :] = 100
    args = [x, h, k, np.zeros((N, 8)), np.zeros((N, 5), np.int64), N]
    _bits(sums_in_a_dtype, args, 3)
    _bits(sums_in_a_dtype, args, 4)


@parpy.jit
def long_cast_sum(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.sum(x[i, :], dtype=np.float64)


@parpy.jit
def integer_mean(k, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.mean(k[i, :], dtype=np.int64)


@pytest.mark.parametrize("fn,x,message", [
    (long_cast_sum, np.ones((N, 9000), np.float32), "NumPy casts the 9000 elements in buffers of 8192"),
    (integer_mean, np.ones((N, 8), np.int32), "NumPy's mean in an integer or float16 type"),
])
def test_what_a_dtype_cannot_be_is_a_located_error(fn, x, message):
    with pytest.raises(parpy.CompileError) as e:
        fn(x, np.zeros(N), N, opts=cpu_opts({'i': parpy.threads(N)}))
    assert "with this `dtype` is not supported here" in str(e.value), str(e.value)
    assert message in str(e.value), str(e.value)
    assert "test_reduction_dtype.py:" in str(e.value), str(e.value)
