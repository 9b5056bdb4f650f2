"""`np.cov` and `np.corrcoef` of one or two 1-D slices: NumPy's Python
code step for step (float64 rows, their means subtracted, the dot of the
centered rows times `np.true_divide(1, fact)`, for `np.corrcoef` the
division by the standard deviations and the clip to [-1, 1]). Floats agree
with NumPy within the reordering of the dot's sum (NumPy calls BLAS), and
exactly where the sums are exact (small integers)."""

import warnings

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both


@parpy.jit
def cov_rows(a, b, c, r, v, w, N):
    parpy.label('i')
    for i in range(N):
        c[i] = np.cov(a[i, :], b[i, :])[0, 1]
        r[i] = np.corrcoef(a[i, :], b[i, :])[0, 1]
        v[i] = np.cov(a[i, :])
        w[i] = np.corrcoef(a[i, :])


@parpy.jit
def cov_matrices(a, b, C, R, N):
    parpy.label('i')
    for i in range(N):
        C[i, :, :] = np.cov(a[i, :], b[i, :])
        R[i] = np.corrcoef(a[i, :], b[i, :])


@parpy.jit
def cov_options(a, b, c0, c1, c2, c3, N):
    parpy.label('i')
    for i in range(N):
        c0[i] = np.cov(a[i, :], b[i, :], ddof=0)[0, 1]
        c1[i] = np.cov(a[i, :], b[i, :], bias=True)[1, 0]
        c2[i] = np.cov(a[i, :], b[i, :], rowvar=False, ddof=2)[1, 1]
        c3[i] = np.cov(a[i, :], bias=1)


def rows(dt, n, seed, small=False):
    rng = np.random.default_rng(seed)
    if small or not np.issubdtype(dt, np.floating):
        hi = 2 if dt == np.bool_ else 9
        return rng.integers(0, hi, (4, n)).astype(dt), rng.integers(0, hi, (4, n)).astype(dt)
    return rng.standard_normal((4, n)).astype(dt), rng.standard_normal((4, n)).astype(dt)


def outs(*shapes):
    return [np.zeros(s) for s in shapes]


@pytest.mark.parametrize("n", [2, 3, 7, 40, 300])
@pytest.mark.parametrize("dt", [np.float64, np.float32, np.float16, np.int64, np.int32, np.uint8, np.bool_],
                         ids=lambda t: t.__name__)
def test_elements_are_numpys(n, dt):
    a, b = rows(dt, n, n)
    got = run_both(cov_rows, [a, b, *outs(4, 4, 4, 4), 4], cpu_opts({'i': parpy.threads(4)}), rtol=1e-12, atol=1e-14)
    want_c = [np.cov(p, q)[0, 1] for p, q in zip(a, b)]
    want_r = [np.corrcoef(p, q)[0, 1] for p, q in zip(a, b)]
    np.testing.assert_allclose(got[2], want_c, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got[3], want_r, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got[4], [np.cov(p) for p in a], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got[5], [np.corrcoef(p) for p in a], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("n", [4, 8, 32])
def test_small_integers_give_numpys_bits(n):
    """(means of a power-of-two count are exact, and so every sum after)"""
    a, b = rows(np.int64, n, 7, small=True)
    got = run_both(cov_rows, [a, b, *outs(4, 4, 4, 4), 4], cpu_opts({'i': parpy.threads(4)}), rtol=0, atol=0)
    assert got[2].tolist() == [np.cov(p, q)[0, 1] for p, q in zip(a, b)]
    assert got[3].tolist() == [np.corrcoef(p, q)[0, 1] for p, q in zip(a, b)]
    assert got[4].tolist() == [float(np.cov(p)) for p in a]
    assert got[5].tolist() == [float(np.corrcoef(p)) for p in a]


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int16], ids=lambda t: t.__name__)
def test_the_whole_matrix_is_stored(dt):
    a, b = rows(dt, 11, 5)
    got = run_both(cov_matrices, [a, b, *outs((4, 2, 2), (4, 2, 2)), 4], cpu_opts({'i': parpy.threads(4)}),
                   rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got[2], [np.cov(p, q) for p, q in zip(a, b)], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got[3], [np.corrcoef(p, q) for p, q in zip(a, b)], rtol=1e-12, atol=1e-14)
    # (NumPy's matrix is symmetric, its diagonal of np.corrcoef clipped to 1)
    assert (got[2][:, 0, 1] == got[2][:, 1, 0]).all()
    assert (np.abs(got[3]) <= 1).all()


def test_ddof_and_bias_are_numpys():
    a, b = rows(np.float64, 9, 11)
    got = run_both(cov_options, [a, b, *outs(4, 4, 4, 4), 4], cpu_opts({'i': parpy.threads(4)}), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got[2], [np.cov(p, q, ddof=0)[0, 1] for p, q in zip(a, b)], rtol=1e-12)
    np.testing.assert_allclose(got[3], [np.cov(p, q, bias=True)[1, 0] for p, q in zip(a, b)], rtol=1e-12)
    np.testing.assert_allclose(got[4], [np.cov(p, q, ddof=2)[1, 1] for p, q in zip(a, b)], rtol=1e-12)
    np.testing.assert_allclose(got[5], [np.cov(p, bias=1) for p in a], rtol=1e-12)


@parpy.jit
def cov_run_time_ddof(a, b, c, v, d, N):
    parpy.label('i')
    for i in range(N):
        c[i] = np.cov(a[i, :], b[i, :], ddof=d)[0, 1]
        v[i] = np.corrcoef(a[i, :], b[i, :])[0, 0]


@pytest.mark.parametrize("d", [0, 1, 4, 5, 7])
def test_ddof_past_the_observations_gives_numpys_inf_and_nan(d):
    """NumPy warns (`Degrees of freedom <= 0`), takes `fact = 0.0` and gives
    `c * inf`: inf, -inf, or nan for a zero product."""
    a = np.array([[1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 1.0, 1.0, 1.0, 1.0]])
    b = np.array([[2.0, 1.0, 0.0, 1.0, 3.0], [3.0, 1.0, 2.0, 1.0, 0.0]])
    args = [a, b, np.zeros(2), np.zeros(2), d, 2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = run_both(cov_run_time_ddof, args, cpu_opts({'i': parpy.threads(2)}), rtol=1e-12)
        want = [np.cov(p, q, ddof=d)[0, 1] for p, q in zip(a, b)]
        want_r = [np.corrcoef(p, q)[0, 0] for p, q in zip(a, b)]
    np.testing.assert_allclose(got[2], want, rtol=1e-12)
    np.testing.assert_array_equal(np.isnan(got[3]), np.isnan(want_r))


@parpy.jit
def pearson(a, b, r, N):
    parpy.label('i')
    for i in range(N):
        r[i] = np.corrcoef(a[i, :], b[i, :])[0, 1]


def test_constant_and_perfectly_correlated_rows():
    """A constant row: NumPy's 0/0 is nan; a row against itself or its
    negation is clipped to exactly 1 or -1."""
    a = np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0], [1.0, 2.0, 4.0], [0.1, 0.7, 0.3]])
    b = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 4.0], [-1.0, -2.0, -4.0], [0.2, 1.4, 0.6]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = run_both(pearson, [a, b, np.zeros(4), 4], cpu_opts({'i': parpy.threads(4)}), rtol=1e-15, atol=0)
        want = [np.corrcoef(p, q)[0, 1] for p, q in zip(a, b)]
    assert np.isnan(got[2][0]) and np.isnan(want[0])
    assert got[2][1:3].tolist() == want[1:3] == [1.0, -1.0]
    np.testing.assert_allclose(got[2][3], want[3], rtol=1e-15)


@parpy.jit
def cov_2d(a, c, N):
    for i in range(N):
        c[i] = np.cov(a)[0, 1]


@parpy.jit
def cov_weights(a, b, c, N):
    for i in range(N):
        c[i] = np.cov(a[i, :], b[i, :], aweights=b[i, :])[0, 1]


@parpy.jit
def cov_fweights(a, b, c, N):
    for i in range(N):
        c[i] = np.cov(a[i, :], fweights=b[i, :])


@parpy.jit
def cov_dtype(a, b, c, N):
    for i in range(N):
        c[i] = np.corrcoef(a[i, :], b[i, :], dtype=np.float32)[0, 1]


@parpy.jit
def cov_three(a, b, c, N):
    for i in range(N):
        c[i] = np.cov(a[i, :], b[i, :], a[i, :])[0, 1]


@parpy.jit
def cov_unindexed(a, b, c, N):
    for i in range(N):
        c[i] = np.cov(a[i, :], b[i, :]) * 2.0


@parpy.jit
def cov_run_time_index(a, b, c, N):
    for i in range(N):
        c[i] = np.cov(a[i, :], b[i, :])[0, i]


@parpy.jit
def cov_out_of_bounds(a, b, c, N):
    for i in range(N):
        c[i] = np.corrcoef(a[i, :], b[i, :])[2, 0]


@parpy.jit
def cov_row(a, b, c, N):
    for i in range(N):
        c[i] = np.cov(a[i, :], b[i, :])[0]


@parpy.jit
def cov_different_lengths(a, b, c, N):
    for i in range(N):
        c[i] = np.cov(a[i, :], b[i, 1:])[0, 1]


@parpy.jit
def cov_wrong_store(a, b, c, N):
    for i in range(N):
        c[i, :] = np.cov(a[i, :], b[i, :])


@parpy.jit
def cov_of_a_number(a, c, N):
    for i in range(N):
        c[i] = np.cov(a[i, 0])


@parpy.jit
def cov_indexed_number(a, c, N):
    for i in range(N):
        c[i] = np.cov(a[i, :])[0]


@parpy.jit
def cov_fractional_ddof(a, c, N):
    for i in range(N):
        c[i] = np.cov(a[i, :], ddof=0.5)


@parpy.jit
def cov_float_ddof(a, c, d, N):
    for i in range(N):
        c[i] = np.cov(a[i, :], ddof=d)


def _f(*shape):
    return np.zeros(shape)


@pytest.mark.parametrize("fn, args, message", [
    (cov_2d, [_f(3, 4), _f(3), 3], r"`np.cov` of a 2-D array is not supported"),
    (cov_weights, [_f(3, 4), _f(3, 4), _f(3), 3], r"`np.cov` supports only `aweights=None`"),
    (cov_fweights, [_f(3, 4), _f(3, 4), _f(3), 3], r"`np.cov` supports only `fweights=None`"),
    (cov_dtype, [_f(3, 4), _f(3, 4), _f(3), 3], r"`np.corrcoef` supports only `dtype=None`"),
    (cov_three, [_f(3, 4), _f(3, 4), _f(3), 3], "`rowvar` of `np.cov` is a flag, not an array"),
    (cov_unindexed, [_f(3, 4), _f(3, 4), _f(3), 3], "of two vectors is a 2x2 matrix"),
    (cov_run_time_index, [_f(3, 4), _f(3, 4), _f(3), 3], "read by constant indices"),
    (cov_out_of_bounds, [_f(3, 4), _f(3, 4), _f(3), 3], "index 2 is out of bounds for axis of size 2"),
    (cov_row, [_f(3, 4), _f(3, 4), _f(3), 3], "reads it by two constant indices"),
    (cov_different_lengths, [_f(3, 4), _f(3, 4), _f(3), 3], "the vectors have 4 and 3 observations"),
    (cov_wrong_store, [_f(3, 4), _f(3, 4), _f(3, 3), 3],
     r"could not broadcast input array from shape \(2,2\) into shape \(3,\)"),
    (cov_of_a_number, [_f(3, 4), _f(3), 3], "`np.cov` of a number is not supported"),
    (cov_indexed_number, [_f(3, 4), _f(3), 3], "of one vector is a number"),
    (cov_fractional_ddof, [_f(3, 4), _f(3), 3], "`np.cov`: ddof must be integer"),
    (cov_float_ddof, [_f(3, 4), _f(3), 1.0, 3], "`np.cov`: ddof must be integer"),
])
def test_what_cov_cannot_take_is_a_located_error(fn, args, message):
    with pytest.raises(parpy.CompileError, match=message) as e:
        fn(*args, opts=cpu_opts({}))
    assert "-->" in str(e.value)


@parpy.jit
def pearson32(a, b, r, N):
    parpy.label('i')
    for i in range(N):
        r[i] = np.float32(np.corrcoef(a[i, :], b[i, :])[0, 1])


def test_cov_compiles_for_cuda_and_metal():
    """Cuda: NumPy's float64; Metal, which has no float64, refuses it."""
    def args(backend):
        dt = np.float32 if backend == parpy.CompileBackend.Metal else np.float64
        return [np.zeros((4, 9), dt), np.zeros((4, 9), dt), np.zeros((4, 2, 2)), np.zeros((4, 2, 2)), 4]
    opts = cpu_opts({'i': parpy.threads(4)})
    opts.backend = parpy.CompileBackend.Cuda
    code = parpy.print_compiled(cov_matrices, args(opts.backend), opts)
    assert code.count("* 0.125") == 6, code
    opts.backend = parpy.CompileBackend.Metal
    x = np.ones((4, 9), np.float32)
    with pytest.raises(parpy.CompileError, match="Metal does not support double-precision") as e:
        parpy.print_compiled(pearson32, [x, x, np.zeros(4, np.float32), 4], opts)
    assert "np.corrcoef(a[i, :], b[i, :])" in str(e.value)
