"""`np.interp(x, xp, fp, left, right)` inside jit code, `x` a number (or
the elements of a slice) and `xp`, `fp` 1-D slices: NumPy's answer bit for
bit, as NumPy's C code computes it in float64 (the interval searched with
NumPy's steps, so a number finds NumPy's interval even in an `xp` that does
not increase; a sample point gives its `fp`; an interpolation that gives
NaN is retried from the right end of the interval). Compared with plain
Python."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both


@parpy.jit
def lookup(x, xp, fp, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.interp(x[i], xp, fp)


@parpy.jit
def lookup_filled(x, xp, fp, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.interp(x[i], xp, fp, left=-1.0, right=np.inf)


@parpy.jit
def resample(x, xp, fp, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.interp(x[i, :], xp[i, :], fp[i, :] * 2.0)


def _points(n, seed):
    rng = np.random.default_rng(seed)
    xp = np.sort(rng.integers(0, n + 3, n)).astype(np.float64)  # with ties
    fp = rng.standard_normal(n)
    if n > 3:
        fp[2] = np.inf  # an interval whose interpolation is NaN one way
    x = np.concatenate([rng.uniform(-2, n + 5, 40), xp, [np.nan, np.inf, -np.inf]])
    return x, xp, fp


@parpy.jit
def lowest_of_rows(x, xp, fp, y, N, R):
    parpy.label('i')
    for i in range(N):
        acc = np.inf
        parpy.label('r')
        for r in range(R):
            acc = min(acc, np.interp(x[i], xp[r, :], fp[r, :]))
        y[i] = acc


# (the search of a long `xp` is a `while` loop, which a par_reduction()
# loop's body may hold: it only assigns the iteration's locals)
@pytest.mark.parametrize("n", [4, 30])
def test_an_interpolation_in_a_parallel_reduction(n):
    rows = [_points(n, 200 + r) for r in range(6)]
    x = rows[0][0]
    xp = np.stack([r[1] for r in rows])
    fp = np.stack([r[2] for r in rows])
    m = len(x)
    opts = cpu_opts({'i': parpy.threads(m), 'r': parpy.threads(6).par_reduction()})
    run_both(lowest_of_rows, [x, xp, fp, np.zeros(m), m, 6], opts, rtol=0, atol=0)


# lengths of each kind of search: a point, linear (up to 4), around the
# guess, bisection with and without the narrower ranges
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 10, 11, 12, 30])
def test_numpys_value_bit_for_bit(n):
    x, xp, fp = _points(n, n)
    m = len(x)
    opts = cpu_opts({'i': parpy.threads(m)})
    run_both(lookup, [x, xp, fp, np.zeros(m), m], opts, rtol=0, atol=0)
    run_both(lookup_filled, [x, xp, fp, np.zeros(m), m], opts, rtol=0, atol=0)


@pytest.mark.parametrize("n", [3, 5, 9, 13, 40])
def test_an_xp_that_does_not_increase_gives_numpys_value_too(n):
    rng = np.random.default_rng(100 + n)
    x, xp, fp = rng.standard_normal(50), rng.standard_normal(n), rng.standard_normal(n)
    run_both(lookup, [x, xp, fp, np.zeros(50), 50], cpu_opts({'i': parpy.threads(50)}),
             rtol=0, atol=0)


@pytest.mark.parametrize("dtypes", [(np.float32, np.float32, np.float16), (np.int64, np.int32, np.float64),
                                    (np.uint8, np.float64, np.int16)],
                         ids=lambda d: "-".join(np.dtype(t).name for t in d))
def test_any_number_types_are_computed_in_float64(dtypes):
    rng = np.random.default_rng(7)
    tx, txp, tfp = dtypes
    xp = np.sort(rng.choice(np.arange(0, 40), 12, replace=False)).astype(txp)
    fp = rng.integers(-9, 9, 12).astype(tfp)
    x = rng.integers(0, 45, 60).astype(tx)
    run_both(lookup, [x, xp, fp, np.zeros(60), 60], cpu_opts({'i': parpy.threads(60)}),
             rtol=0, atol=0)


def test_each_element_of_a_slice_is_interpolated():
    rng = np.random.default_rng(8)
    x = rng.uniform(-1, 11, (4, 30))
    xp = np.sort(rng.uniform(0, 10, (4, 12)), axis=1)
    fp = rng.standard_normal((4, 12))
    y = run_both(resample, [x, xp, fp, np.zeros((4, 30)), 4], cpu_opts({'i': parpy.threads(4)}),
                 rtol=0, atol=0)[3]
    assert np.array_equal(y[1], np.interp(x[1], xp[1], fp[1] * 2.0))


def test_misuse_is_refused_at_the_call():
    @parpy.jit
    def periodic(x, xp, fp, y):
        parpy.label('i')
        for i in range(4):
            y[i] = np.interp(x[i], xp, fp, period=360.0)

    @parpy.jit
    def unequal(x, xp, fp, y):
        parpy.label('i')
        for i in range(4):
            y[i] = np.interp(x[i], xp, fp[1:])

    @parpy.jit
    def table(x, xp, fp, y):
        parpy.label('i')
        for i in range(4):
            y[i] = np.interp(x[i], xp, fp)

    x, y, opts = np.ones(4), np.zeros(4), cpu_opts({'i': parpy.threads(4)})
    with pytest.raises(parpy.CompileError, match="takes no `period`"):
        periodic(x, np.arange(3.0), np.ones(3), y, opts=opts)
    with pytest.raises(parpy.CompileError, match=r"fp and xp are not of the same length \(2 and 3\)"):
        unequal(x, np.arange(3.0), np.ones(3), y, opts=opts)
    with pytest.raises(parpy.CompileError, match="takes 1-D sample points"):
        table(x, np.ones((2, 3)), np.ones(3), y, opts=opts)


def test_interpolation_compiles_for_cuda_and_metal_refuses_its_float64():
    import test_cuda_codegen as cc
    args = [np.ones(8), np.arange(6.0), np.ones(6), np.zeros(8), 8]
    opts = parpy.par({'i': parpy.threads(8)})
    opts.backend = parpy.CompileBackend.Metal
    f32 = [a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args]
    with pytest.raises(parpy.CompileError, match="Metal does not support double-precision"):
        parpy.print_compiled(lookup_f32, f32, opts)
    if cc.NVRTC_PATH is None:
        pytest.skip("NVRTC is not installed")
    opts.backend = parpy.CompileBackend.Cuda
    cc.check_nvrtc(parpy.print_compiled(lookup, args, opts), "interp")


@parpy.jit
def lookup_f32(x, xp, fp, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.float32(np.interp(x[i], xp, fp))
