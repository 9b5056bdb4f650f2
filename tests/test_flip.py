"""`np.flip(m)`, `np.flip(m, axis)`, `np.fliplr` and `np.flipud` of an
array or a subscript inside jit code: NumPy's view with the slices walked
backwards (nothing copied), wherever a slice goes (slice statements,
reductions, operands of an expression); `np.diff(a, n, axis)`: NumPy's
differences of neighbours, `n` times, in the elements' type (`!=` of
bools). Compared with plain Python; a computed operand is refused with
the rewrite."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both

N = 3


def _par():
    return cpu_opts({'i': parpy.threads(N)})


@parpy.jit
def flips(x, w, a, b, c, d, e, f, N):
    parpy.label('i')
    for i in range(N):
        a[i, :] = np.flip(x[i, 0, :])
        b[i, :, :] = np.flip(x[i, :, 1:4]) * 2.0
        c[i, :, :] = np.flip(x[i], axis=0) + np.fliplr(x[i]) - np.flip(x[i], -1)
        d[i] = np.sum(np.flip(x[i, 2, ::2]) * x[i, 2, 1::2])
        e[i, :] = np.flipud(x[i, 1, -5:-1]) + np.flip(w[1:5])
        f[i, :, :] = np.flip(x.T[:, 1:4, i], axis=1)


def test_flips_are_numpys():
    x = np.random.default_rng(1).standard_normal((N, 5, 6))
    w = np.arange(6.0)
    outs = [np.zeros((N, 6)), np.zeros((N, 5, 3)), np.zeros((N, 5, 6)), np.zeros(N),
            np.zeros((N, 4)), np.zeros((N, 6, 3))]
    got = run_both(flips, [x, w, *outs, N], _par())
    assert np.array_equal(got[2], x[:, 0, ::-1])
    assert np.array_equal(got[3], x[:, ::-1, 3:0:-1] * 2.0)
    assert np.array_equal(got[5], np.sum(x[:, 2, ::2][:, ::-1] * x[:, 2, 1::2], axis=1))
    assert np.array_equal(got[7][1], np.flip(x.T[:, 1:4, 1], axis=1))


@parpy.jit
def flip_of_a_product(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.flip(x[i, :] * 2.0)


@parpy.jit
def flip_past_the_axes(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.flip(x[i, :], axis=1)


def test_a_flip_of_a_computed_value_names_the_rewrite():
    x = np.zeros((N, 4))
    with pytest.raises(parpy.CompileError, match=r"np.flip\(x\[i, :\]\) \* 2"):
        parpy.print_compiled(flip_of_a_product, [x, np.zeros((N, 4)), N], _par())


def test_a_flip_past_the_views_axes_is_an_error():
    x = np.zeros((N, 4))
    with pytest.raises(parpy.CompileError, match="axis 1 is out of bounds for a view of 1 dimension"):
        parpy.print_compiled(flip_past_the_axes, [x, np.zeros((N, 4)), N], _par())


def test_flips_compile_for_cuda_and_metal():
    x = np.zeros((N, 5, 6), np.float32)
    outs = [np.zeros((N, 6), np.float32), np.zeros((N, 5, 3), np.float32),
            np.zeros((N, 5, 6), np.float32), np.zeros(N, np.float32),
            np.zeros((N, 4), np.float32), np.zeros((N, 6, 3), np.float32)]
    check_gpu_code(flips, lambda backend: [x, np.zeros(6, np.float32), *outs, N],
                   {'i': parpy.threads(N)}, "flips")


@parpy.jit
def diffs(x, k, b, d1, d2, d3, dk, db, s, N):
    parpy.label('i')
    for i in range(N):
        d1[i, :] = np.diff(x[i, 0, :])
        d2[i, :, :] = np.diff(x[i, :, 1:], n=2)
        d3[i, :, :] = np.diff(x[i], 3, axis=0)
        dk[i, :] = np.diff(k[i, :])
        db[i, :] = np.diff(b[i, :])
        s[i] = np.sum(np.diff(x[i, 1, ::-1]) ** 2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16],
                         ids=lambda d: np.dtype(d).name)
def test_differences_are_numpys(dtype):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((N, 5, 6)) * 10).astype(dtype)
    k = rng.integers(0, 256, (N, 7)).astype(np.uint8)        # wraps as NumPy's
    b = rng.random((N, 7)) < 0.5                             # `!=` of bools
    outs = [np.zeros((N, 5), dtype), np.zeros((N, 5, 3), dtype), np.zeros((N, 2, 6), dtype),
            np.zeros((N, 6), np.uint8), np.zeros((N, 6), bool), np.zeros(N, dtype)]
    got = run_both(diffs, [x, k, b, *outs, N], _par())
    assert np.array_equal(got[3], np.diff(x[:, 0, :]))
    assert np.array_equal(got[4], np.diff(x[:, :, 1:], n=2))
    assert np.array_equal(got[5], np.diff(x, 3, axis=1))
    assert np.array_equal(got[6], np.diff(k))
    assert np.array_equal(got[7], np.diff(b))


@parpy.jit
def diff_of_order(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.diff(x[i, :], n=-1)


def test_a_negative_order_is_an_error():
    x = np.zeros((N, 4))
    with pytest.raises(parpy.CompileError, match="order `n` of `np.diff` is negative"):
        parpy.print_compiled(diff_of_order, [x, np.zeros((N, 4)), N], _par())


def test_differences_compile_for_cuda_and_metal():
    x = np.zeros((N, 5, 6), np.float32)
    k = np.zeros((N, 7), np.uint8)
    b = np.zeros((N, 7), bool)
    outs = [np.zeros((N, 5), np.float32), np.zeros((N, 5, 3), np.float32),
            np.zeros((N, 2, 6), np.float32), np.zeros((N, 6), np.uint8), np.zeros((N, 6), bool),
            np.zeros(N, np.float32)]
    check_gpu_code(diffs, lambda backend: [x, k, b, *outs, N], {'i': parpy.threads(N)}, "diffs")
