"""`np.trapezoid(y, x, dx, axis)` (and `np.trapz`, where NumPy still has
it) inside jit code: the trapezoidal rule as NumPy's Python code computes
it, `(d * (y[1:] + y[:-1]) / 2.0).sum(axis)`, so its types and its
pairwise sum are NumPy's, bit for bit. Compared with plain Python."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both, same_bits


@parpy.jit
def areas(y, t, out, N):
    parpy.label('i')
    for i in range(N):
        out[i, 0] = np.trapezoid(y[i, :])
        out[i, 1] = np.trapezoid(y[i, :], t[i, :])
        out[i, 2] = np.trapezoid(y[i, :], dx=0.1)
        out[i, 3] = np.trapezoid(y[i], x=t[i])
        out[i, 4] = np.trapezoid(y[i, ::2], dx=0.5, axis=0)


@parpy.jit
def along_axes(y, t, rows, cols, timed):
    parpy.label('k')
    for k in range(1):
        rows[:] = np.trapezoid(y)
        cols[:] = np.trapezoid(y, axis=0)
        timed[:] = np.trapezoid(y, t, axis=1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32],
                         ids=lambda d: np.dtype(d).name)
def test_numpys_integral_bit_for_bit(dtype):
    rng = np.random.default_rng(1)
    # (300 samples: NumPy's pairwise sum splits into blocks)
    y = (rng.random((4, 300)) * 10).astype(dtype)
    t = np.sort(rng.random((4, 300)), axis=1).astype(np.float64 if dtype == np.int32 else dtype)
    out_t = np.float64 if dtype == np.int32 else dtype
    opts = cpu_opts({'i': parpy.threads(4)})
    got = run_both(areas, [y, t, np.zeros((4, 5), out_t), 4], opts)[2]
    want = np.stack([np.trapezoid(y, axis=1), np.trapezoid(y, t, axis=1),
                     np.trapezoid(y, dx=0.1, axis=1), np.trapezoid(y, t, axis=1),
                     np.trapezoid(y[:, ::2], dx=0.5, axis=1)], 1).astype(out_t)
    same_bits(got, want, opts)


def test_along_either_axis_of_a_matrix():
    rng = np.random.default_rng(2)
    y, t = rng.random((5, 40)), np.cumsum(rng.random((5, 40)), axis=1)
    opts = cpu_opts({'k': parpy.threads(1)})
    got = run_both(along_axes, [y, t, np.zeros(5), np.zeros(40), np.zeros(5)], opts)
    same_bits(got[3], np.trapezoid(y, axis=0), opts)
    same_bits(got[4], np.trapezoid(y, t, axis=1), opts)


def test_a_computed_array_is_refused_with_what_to_write():
    @parpy.jit
    def scaled(y, out):
        parpy.label('i')
        for i in range(2):
            out[i] = np.trapezoid(y[i, :] * 2.0)

    with pytest.raises(parpy.CompileError, match="integrates an array or a subscript of one") as e:
        scaled(np.ones((2, 5)), np.zeros(2), opts=cpu_opts({'i': parpy.threads(2)}))
    assert "2.0 * np.trapezoid(y[i, :])" in str(e.value)
