"""A ufunc's `reduce` and `accumulate` inside jit code: `np.add.reduce(s)`
is NumPy's `np.sum(s, axis=0)` (so are `multiply` / `np.prod`, `maximum` /
`np.max`, `minimum`, `fmax` / `np.nanmax`, `fmin`, `logical_or` / `np.any`,
`logical_and` / `np.all`), `np.maximum.accumulate(s)` the running maximum
(and `minimum`, `add` / `np.cumsum`, `multiply` / `np.cumprod`), assigned to
a slice. Both run along axis 0 unless told, as NumPy's do (`np.sum` and
`np.cumsum` take the whole array). Compared with plain Python."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both, same_bits


@parpy.jit
def row_reductions(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.add.reduce(x[i, :])
        y[i, 1] = np.multiply.reduce(x[i, :] + 0.5)
        y[i, 2] = np.maximum.reduce(x[i, :])
        y[i, 3] = np.minimum.reduce(x[i, :])
        y[i, 4] = np.fmax.reduce(x[i, :])
        y[i, 5] = np.fmin.reduce(x[i, :])
        y[i, 6] = np.logical_or.reduce(x[i, :] > 0.9)
        y[i, 7] = np.logical_and.reduce(x[i, :] > 0.05)


@parpy.jit
def running_extremes(x, hi, lo, s, p, N):
    parpy.label('i')
    for i in range(N):
        hi[i, :] = np.maximum.accumulate(x[i, :])
        lo[i, :] = np.minimum.accumulate(x[i, :])
        s[i, :] = np.add.accumulate(x[i, :])
        p[i, :] = np.multiply.accumulate(x[i, :])


@parpy.jit
def along_axes(x, cols, rows, down, across):
    parpy.label('k')
    for k in range(1):
        cols[:] = np.add.reduce(x)
        rows[:] = np.maximum.reduce(x, axis=1)
        down[:, :] = np.maximum.accumulate(x)
        across[:, :] = np.minimum.accumulate(x, axis=1)


@parpy.jit
def drawdown(prices, dd, N):
    parpy.label('i')
    for i in range(N):
        peak = prices[i, :]
        dd[i, :] = np.maximum.accumulate(peak)
        dd[i, :] = (peak - dd[i, :]) / dd[i, :]


def _matrix(dtype, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        x = rng.random((5, 12)).astype(dtype)
        x[1, 4] = np.nan
        x[2, :] = np.nan
        x[3, 0] = -0.0
        return x
    return rng.integers(-50, 50, (5, 12)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16],
                         ids=lambda d: np.dtype(d).name)
def test_reduce_is_numpys_reduction_bit_for_bit(dtype):
    x = _matrix(dtype, 1)
    opts = cpu_opts({'i': parpy.threads(5)})
    got = run_both(row_reductions, [x, np.zeros((5, 8), dtype), 5], opts)[1]
    want = np.stack([np.sum(x, 1), np.prod(x + dtype(0.5), 1), np.max(x, 1), np.min(x, 1),
                     np.fmax.reduce(x, 1), np.fmin.reduce(x, 1), np.any(x > 0.9, 1),
                     np.all(x > 0.05, 1)], 1).astype(dtype)
    same_bits(got, want, opts)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.int32, np.uint16],
                         ids=lambda d: np.dtype(d).name)
def test_accumulate_is_numpys_scan(dtype):
    x = _matrix(dtype, 2)
    if np.dtype(dtype).kind != "f":
        x = x % 5 + 1  # products that fit
    outs = [np.zeros((5, 12), np.result_type(x, x)) for _ in range(2)]
    scans = [np.zeros_like(np.cumsum(x, axis=1)) for _ in range(2)]
    run_both(running_extremes, [x, *outs, *scans, 5],
             cpu_opts({'i': parpy.threads(5)}), rtol=0, atol=0)


def test_a_running_maximum_keeps_the_elements_type():
    x = np.array([[3, -5, 7, 2, 100, -128]], np.int8)
    hi, lo = np.zeros((1, 6), np.int8), np.zeros((1, 6), np.int8)
    s, p = np.zeros((1, 6), np.int64), np.zeros((1, 6), np.int64)
    out = run_both(running_extremes, [x, hi, lo, s, p, 1], cpu_opts({'i': parpy.threads(1)}),
                   rtol=0, atol=0)
    assert list(out[1][0]) == [3, 3, 7, 7, 100, 100]
    assert list(out[2][0]) == [3, -5, -5, -5, -5, -128]


def test_both_run_along_axis_zero_unless_told():
    x = _matrix(np.float64, 3)
    cols, rows, down, across = np.zeros(12), np.zeros(5), np.zeros((5, 12)), np.zeros((5, 12))
    out = run_both(along_axes, [x, cols, rows, down, across],
                   cpu_opts({'k': parpy.threads(1)}), rtol=0, atol=0)
    assert np.array_equal(out[1], np.sum(x, axis=0), equal_nan=True)
    assert np.array_equal(out[3], np.maximum.accumulate(x, axis=0), equal_nan=True)


def test_a_drawdown_reads_the_running_peak():
    prices = np.cumprod(1 + np.random.default_rng(4).normal(0, 0.05, (3, 50)), axis=1)
    dd = run_both(drawdown, [prices, np.zeros((3, 50)), 3], cpu_opts({'i': parpy.threads(3)}),
                  rtol=0, atol=0)[1]
    assert np.all(dd <= 0)


def test_bool_scans_and_reductions():
    @parpy.jit
    def flags(x, seen, always, N):
        parpy.label('i')
        for i in range(N):
            seen[i, :] = np.maximum.accumulate(x[i, :] > 0.8)
            always[i] = np.logical_and.reduce(x[i, :] < 0.99)

    x = np.random.default_rng(5).random((6, 9))
    run_both(flags, [x, np.zeros((6, 9), bool), np.zeros(6, bool), 6],
             cpu_opts({'i': parpy.threads(6)}), rtol=0, atol=0)


def test_other_ufunc_methods_are_refused_by_name():
    @parpy.jit
    def outer(x, y):
        parpy.label('i')
        for i in range(3):
            y[i] = np.add.outer(x, x)[0, i]

    with pytest.raises(parpy.CompileError, match=r"np\.add\.outer.*numpy\.add\.outer"):
        outer(np.ones(3), np.zeros(3), opts=cpu_opts({'i': parpy.threads(3)}))


def test_an_accumulate_read_in_an_expression_is_made_first():
    # (it was refused: a scan is computed by a statement of its own,
    # which `sema/hoist.rs` now writes before this one)
    @parpy.jit
    def loose(x, y):
        parpy.label('i')
        for i in range(3):
            y[i] = np.maximum.accumulate(x)[i] * 2.0

    run_both(loose, [np.array([1.0, 3.0, 2.0]), np.zeros(3)], cpu_opts({'i': parpy.threads(3)}),
             rtol=0, atol=0)


@parpy.jit
def column_totals(x, y, z):
    parpy.label('k')
    for k in range(1):
        s = np.add.reduce(x)
        y[:] = s * 2.0
        z[:] = np.maximum.reduce(x, axis=0) - np.minimum.reduce(x)


def test_a_reduce_along_axis_zero_is_an_array():
    # (`s = np.add.reduce(x)` of a matrix was taken for a number: "`sum`
    # with this axis leaves 1 dimension (an array), but `s` is a name,
    # without dimensions")
    x = np.random.default_rng(6).random((4, 7))
    out = run_both(column_totals, [x, np.zeros(7), np.zeros(7)],
                   cpu_opts({'k': parpy.threads(1)}), rtol=0, atol=0)
    assert np.array_equal(out[1], np.add.reduce(x) * 2.0)
