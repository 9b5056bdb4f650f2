"""`np.flip(m)`, `np.flip(m, axis)`, `np.fliplr` and `np.flipud` of an
array or a subscript inside jit code: NumPy's view with the slices walked
backwards (nothing copied), wherever a slice goes (slice statements,
reductions, operands of an expression); `np.diff(a, n, axis)`: NumPy's
differences of neighbours, `n` times, in the elements' type (`!=` of
bools). Compared with plain Python. A computed operand (`np.diff(x[i, :]
** 2)`, `np.flip(x * 2.0)`, also of `np.roll`, `np.trace`, `np.diagonal`
and `np.cross`) is first stored into a local array, NumPy's new array."""

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


@parpy.jit
def views_of_computed_values(x, m, a, b, c, d, e, f, N):
    parpy.label('i')
    for i in range(N):
        a[i, :3] = np.diff(x[i, :] ** 2)
        b[i, :2] = np.diff(x[i, :] * x[i, :] - 1.0, 2)
        c[i, :] = np.roll(x[i, :] * 3.0, 1) + np.flip(x[i, :] + 1.0)
        d[i] = np.abs(np.diff(x[i, :] * 2.0)).max()
        e[i, :] = np.cross(x[i, :3] * 2.0, x[i, 1:] + 1.0)
    with parpy.gpu:
        f[0] = np.trace(m * 2.0) + (m @ m.T).trace()
        f[1] = np.sum(np.diagonal(m @ m.T))


def test_views_of_computed_values_are_numpys():
    # (each was "`np.diff` of a computed value is not supported")
    x = np.random.default_rng(5).standard_normal((N, 4))
    m = np.arange(9.0).reshape(3, 3) / 7
    outs = [np.zeros((N, 4)), np.zeros((N, 4)), np.zeros((N, 4)), np.zeros(N),
            np.zeros((N, 3)), np.zeros(2)]
    run_both(views_of_computed_values, [x, m, *outs, N], _par())
    run_both(flip_of_a_product, [x, np.zeros((N, 4)), N], _par())


@parpy.jit
def differences_of_a_named_product(x, y):
    with parpy.gpu:
        e = x * 2.0
        y[:] = np.diff(e)


@parpy.jit
def differences_too_big(x, y):
    with parpy.gpu:
        y[:] = np.diff(x * 2.0)


def test_differences_of_a_named_value_and_one_too_big():
    x = np.arange(12.0) ** 2
    run_both(differences_of_a_named_product, [x, np.zeros(11)], cpu_opts())
    big = np.arange(5001.0)
    with pytest.raises(parpy.CompileError) as e:
        parpy.print_compiled(differences_too_big, [big, np.zeros(5000)], cpu_opts())
    # (one error, of the new array; it named the hidden `viewed@..` local
    # and was followed by "`np.diff` of a computed value")
    text = str(e.value)
    assert text.startswith("error: the array this expression computes, a local array, takes 40008 bytes")
    assert text.count("error:") == 1 and "@" not in text.splitlines()[0]


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
