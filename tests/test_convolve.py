"""`np.convolve(a, v, mode)` of 1-D operands stored into a 1-D slice: each
element the dot product NumPy's correlate takes there, the operands swapped
when `v` is the longer, in the modes 'full', 'same' and 'valid'. Integers
and bools exactly NumPy's; floats within rounding, as NumPy's float dot
calls BLAS (whose order for a window differs even from NumPy's own
`np.dot` of the same elements)."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both


@parpy.jit
def convolve_rows(x, w, full, same, valid, N):
    parpy.label('i')
    for i in range(N):
        full[i, :] = np.convolve(x[i, :], w)
        same[i, :] = np.convolve(x[i, :], w, mode='same')
        valid[i, :] = np.convolve(w, x[i, :], 'valid')


def outputs(n, m, dt):
    return [np.zeros((3, n + m - 1), dt), np.zeros((3, max(n, m)), dt),
            np.zeros((3, max(n, m) - min(n, m) + 1), dt)]


@pytest.mark.parametrize("n, m", [(7, 3), (7, 4), (5, 5), (3, 1), (1, 1), (9, 2), (2, 6), (40, 7)])
@pytest.mark.parametrize("dt", [np.int64, np.int32, np.uint8, np.float64, np.float32, np.float16],
                         ids=lambda t: t.__name__)
def test_every_mode_is_numpys(n, m, dt):
    rng = np.random.default_rng(n * 10 + m)
    if np.issubdtype(dt, np.integer):
        x, w = rng.integers(0, 9, (3, n)).astype(dt), rng.integers(0, 9, m).astype(dt)
        exact = {"rtol": 0, "atol": 0}
    else:
        x, w = rng.standard_normal((3, n)).astype(dt), rng.standard_normal(m).astype(dt)
        exact = {"rtol": 1e-2 if dt == np.float16 else 1e-5, "atol": 1e-2 if dt == np.float16 else 1e-6}
    got = run_both(convolve_rows, [x, w, *outputs(n, m, dt), 3], cpu_opts({'i': parpy.threads(3)}), **exact)
    for k, mode in enumerate(["full", "same"]):
        want = np.array([np.convolve(r, w, mode) for r in x])
        assert got[2 + k].dtype == want.dtype
        np.testing.assert_allclose(got[2 + k], want, **exact)
    np.testing.assert_allclose(got[4], np.array([np.convolve(w, r, "valid") for r in x]), **exact)


@parpy.jit
def moving_average(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.convolve(x[i, :], np.ones(4) / 4, mode='valid')


def test_a_moving_average():
    x = np.arange(30.0).reshape(3, 10) ** 2
    got = run_both(moving_average, [x, np.zeros((3, 7)), 3], cpu_opts({'i': parpy.threads(3)}))
    assert got[1].tolist() == [np.convolve(r, np.ones(4) / 4, 'valid').tolist() for r in x]


@parpy.jit
def convolve_bools(a, b, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.convolve(a[i, :], b[i, :], 'same')


def test_bools_or_their_ands_as_numpy():
    rng = np.random.default_rng(3)
    a, b = rng.random((4, 6)) < 0.3, rng.random((4, 3)) < 0.5
    got = run_both(convolve_bools, [a, b, np.zeros((4, 6), bool), 4], cpu_opts({'i': parpy.threads(4)}))
    assert got[2].tolist() == [np.convolve(p, q, 'same').tolist() for p, q in zip(a, b)]


def test_a_sum_of_negative_zeros_is_zero_as_numpys_dot():
    x, w = np.full((1, 3), -0.0), np.ones(1)
    got = run_both(convolve_rows, [x, w, *outputs(3, 1, np.float64), 1], cpu_opts({'i': parpy.threads(1)}))
    assert np.signbit(got[2][0]).tolist() == np.signbit(np.convolve(x[0], w)).tolist() == [False] * 3


@parpy.jit
def convolve_into_itself(x, w, N):
    for i in range(N):
        x[i, :] = np.convolve(x[i, :], w, 'same')


@parpy.jit
def convolve_wrong_length(x, w, y, N):
    for i in range(N):
        y[i, :] = np.convolve(x[i, :], w, 'full')


@parpy.jit
def convolve_bad_mode(x, w, y, N):
    for i in range(N):
        y[i, :] = np.convolve(x[i, :], w, 'middle')


@parpy.jit
def convolve_in_an_expression(x, w, y, N):
    for i in range(N):
        y[i, :] = np.convolve(x[i, :], w, 'same') * 2.0


@parpy.jit
def convolve_bound_to_a_name(x, w, y):
    y = np.convolve(x, w)


def test_a_name_bound_to_a_convolution_is_no_store():
    """`y = np.convolve(x, w)` binds the name `y` to a new array in Python:
    the array `y` held stays as it was (parpy stored into it)."""
    y = np.zeros(4)
    with pytest.raises(parpy.CompileError, match="gives an array"):
        convolve_bound_to_a_name(np.ones(3), np.ones(2), y, opts=cpu_opts({}))
    assert y.tolist() == [0.0] * 4


@pytest.mark.parametrize("fn, args, message", [
    (convolve_into_itself, [np.ones((2, 5)), np.ones(3), 2], "stored into `x`, which it reads"),
    (convolve_wrong_length, [np.ones((2, 5)), np.ones(3), np.zeros((2, 5)), 2],
     r"could not broadcast input array from shape \(7,\) into shape \(5,\)"),
    (convolve_bad_mode, [np.ones((2, 5)), np.ones(3), np.zeros((2, 5)), 2],
     "mode must be 'full', 'same' or 'valid'"),
    (convolve_in_an_expression, [np.ones((2, 5)), np.ones(3), np.zeros((2, 5)), 2],
     "gives an array: parpy computes it only as the whole right side of a slice assignment"),
])
def test_errors(fn, args, message):
    with pytest.raises(parpy.CompileError, match=message):
        fn(*args, opts=cpu_opts({}))


def test_gpu_code_compiles():
    def args(backend):
        return [np.zeros((3, 9), np.float32), np.zeros(4, np.float32), *outputs(9, 4, np.float32), 3]
    check_gpu_code(convolve_rows, args, {'i': parpy.threads(3)}, "convolve_rows")
