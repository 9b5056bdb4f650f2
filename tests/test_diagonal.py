"""`np.diagonal(a, offset, axis1, axis2)`, `np.diag(a, k)` of a 2-D view,
`np.trace(a, offset, axis1, axis2)` and the methods `a.diagonal()` /
`a.trace()` of an array or a subscript inside jit code: NumPy's view of
the diagonal (nothing copied), wherever a slice goes, and its sum in
NumPy's order and type (int32 traces in int64). Compared bit for bit with
NumPy on the Cpu; misuse is refused as NumPy refuses it, or with the
rewrite."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both, same_bits

N = 3


def _par():
    return cpu_opts({'i': parpy.threads(N)})


def _run(fn, args):
    """The compiled run's arrays (checked against plain Python within
    rounding: the bits are checked against NumPy after)."""
    return run_both(fn, args, _par(), rtol=1e-2, atol=1e-2)


def _spread(rng, shape, dtype=np.float64):
    """Values over many orders of magnitude: any other order of the adds
    gives other bits."""
    e = 2 if dtype == np.float16 else 6
    x = rng.standard_normal(shape) * 10.0 ** rng.integers(-e, e, shape)
    return x.astype(dtype)


@parpy.jit
def traces(a, t0, t1, t2, t3, N):
    parpy.label('i')
    for i in range(N):
        t0[i] = np.trace(a[i])
        t1[i] = a[i].trace(3)
        t2[i] = np.trace(a[i], offset=-5)
        t3[i] = np.trace(a[i, 1::2, ::-1], 2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32, np.uint8,
                                   np.bool_])
def test_traces_are_numpys(dtype):
    rng = np.random.default_rng(3)
    if dtype == np.bool_:
        a = rng.random((N, 70, 70)) < 0.5
    elif np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, (N, 70, 70), endpoint=True).astype(dtype)
    else:
        a = _spread(rng, (N, 70, 70), dtype)
    rt = np.trace(a[0]).dtype
    outs = _run(traces, [a, *[np.zeros(N, rt) for _ in range(4)], N])[1:-1]
    same_bits(outs[0], np.array([np.trace(m) for m in a]), _par())
    same_bits(outs[1], np.array([m.trace(3) for m in a]), _par())
    same_bits(outs[2], np.array([np.trace(m, offset=-5) for m in a]), _par())
    same_bits(outs[3], np.array([np.trace(m[1::2, ::-1], 2) for m in a]), _par())


@parpy.jit
def diagonals(a, b, d0, d1, d2, d3, s, N):
    parpy.label('i')
    for i in range(N):
        d0[i, :] = np.diag(a[i])
        d1[i, :] = np.diag(a[i, :, 2:], k=-2) * 2.0 + 1.0
        d2[i, :, :] = np.diagonal(b[i], 1, -2, -1)
        d3[i, :] = b.T[:, 0, i].diagonal()
        s[i] = np.sum(np.diagonal(b[i], 0, 2, 1)) + np.mean(a[i].diagonal(1))


def test_diagonals_are_numpys():
    rng = np.random.default_rng(4)
    a = _spread(rng, (N, 40, 50))
    b = _spread(rng, (N, 6, 30, 30))
    outs = [np.zeros((N, 40)), np.zeros((N, 38)), np.zeros((N, 6, 29)), np.zeros((N, 3)),
            np.zeros(N)]
    outs = _run(diagonals, [a, b, *outs, N])[2:-1]
    same_bits(outs[0], np.array([np.diag(m) for m in a]), _par())
    same_bits(outs[1], np.array([np.diag(m[:, 2:], k=-2) * 2.0 + 1.0 for m in a]), _par())
    same_bits(outs[2], np.array([np.diagonal(m, 1, -2, -1) for m in b]), _par())
    same_bits(outs[3], np.array([b.T[:, 0, i].diagonal() for i in range(N)]), _par())
    want = [np.sum(np.diagonal(b[i], 0, 2, 1)) + np.mean(a[i].diagonal(1)) for i in range(N)]
    same_bits(outs[4], np.array(want), _par())


@parpy.jit
def traces_of_3d(b, t, u, N):
    parpy.label('i')
    for i in range(N):
        t[i, :] = np.trace(b[i], 0, 0, 2)
        u[i, :] = b[i].trace(axis1=2, axis2=1, offset=-1)


def test_a_trace_of_a_3d_view_keeps_the_other_dimension():
    rng = np.random.default_rng(5)
    b = rng.standard_normal((N, 4, 7, 5))
    t, u = _run(traces_of_3d, [b, np.zeros((N, 7)), np.zeros((N, 4)), N])[1:3]
    np.testing.assert_allclose(t, [np.trace(m, 0, 0, 2) for m in b], rtol=1e-13)
    np.testing.assert_allclose(u, [m.trace(axis1=2, axis2=1, offset=-1) for m in b],
                               rtol=1e-13)


@parpy.jit
def empty_diagonal(a, t, d, N):
    parpy.label('i')
    for i in range(N):
        t[i] = np.trace(a[i], 9)
        d[i] = np.sum(np.diag(a[i], -7))


def test_an_offset_past_the_matrix_is_an_empty_diagonal():
    a = np.ones((N, 4, 6), np.int32)
    t, d = _run(empty_diagonal, [a, np.full(N, 7, np.int64), np.full(N, 7, np.int64), N])[1:3]
    assert np.array_equal(t, [np.trace(m, 9) for m in a])
    assert np.array_equal(d, [0, 0, 0])


@parpy.jit
def diag_of_a_vector(v, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :, :] = np.diag(v[i])


@parpy.jit
def diagonal_not_last(b, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :, :] = np.diagonal(b[i])


@parpy.jit
def diagonal_same_axes(a, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.trace(a[i], 0, 1, -1)


@parpy.jit
def diagonal_of_a_row(a, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.trace(a[i, 0])


@parpy.jit
def diagonal_of_a_product(a, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.trace(a[i] * 2.0)


@pytest.mark.parametrize("fn, args, message", [
    (diag_of_a_vector, [np.zeros((N, 4)), np.zeros((N, 4, 4))],
     r"`np.diag` of a 1-D view is not supported"),
    (diagonal_not_last, [np.zeros((N, 3, 4, 5)), np.zeros((N, 5, 3))],
     r"a diagonal of axes other than the last two of a view is not supported"),
    (diagonal_same_axes, [np.zeros((N, 4, 4)), np.zeros(N)],
     r"the two axes of a diagonal are the same \(1 and -1\)"),
    (diagonal_of_a_row, [np.zeros((N, 4, 4)), np.zeros(N)],
     r"a diagonal needs a view of at least 2 dimensions, not 1"),
])
def test_misuse_is_refused_as_numpy_refuses_it(fn, args, message):
    with pytest.raises(parpy.CompileError, match=message):
        parpy.print_compiled(fn, [*args, N], _par())


def test_diagonals_compile_for_cuda_and_metal():
    def args(backend):
        return [np.zeros((N, 40, 50), np.float32), np.zeros((N, 6, 30, 30), np.float32),
                np.zeros((N, 40), np.float32), np.zeros((N, 38), np.float32),
                np.zeros((N, 6, 29), np.float32), np.zeros((N, 3), np.float32),
                np.zeros(N, np.float32), N]
    check_gpu_code(diagonals, args, {'i': parpy.threads(N)}, "diagonals")


def test_a_trace_of_a_product_is_numpys():
    # (was refused: "take the diagonal of the arrays it reads")
    a = np.random.default_rng(2).standard_normal((N, 4, 4))
    run_both(diagonal_of_a_product, [a, np.zeros(N), N], _par())
