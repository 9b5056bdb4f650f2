"""`np.roll(a, shift, axis)` of an array or a subscript inside jit code:
NumPy's elements, the slice's indices cyclic (nothing copied: one
negative-index wrap per element, no bounds check), wherever a slice goes;
`np.cross(a, b)` of 3-element vectors along the last axis: NumPy's
products and differences of rolled views, to the last bit. Compared with
NumPy; misuse is refused as NumPy refuses it, or with the rewrite."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both, same_bits

N = 3


def _par():
    return cpu_opts({'i': parpy.threads(N)})


@parpy.jit
def periodic_laplacian(u, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.roll(u[i], 1) + np.roll(u[i], -1) - 2.0 * u[i]


@parpy.jit
def rolls(u, a, b, c, s, N):
    parpy.label('i')
    for i in range(N):
        a[i, :, :] = np.roll(u[i], 2, axis=0) - np.roll(u[i, :, ::-1], -7, 1)
        b[i, :] = np.roll(u[i, 1, 1:-1], shift=23)
        c[i, :, :] = np.roll(u.T[:, 2:, i], 0, -1) + np.roll(u[i, 2:, 0], -1)
        s[i] = np.sum(np.roll(u[i], 3, 1))


def test_rolls_are_numpys():
    rng = np.random.default_rng(6)
    u = rng.standard_normal((N, 40)) * 10.0 ** rng.integers(-6, 6, (N, 40))
    y = run_both(periodic_laplacian, [u, np.zeros((N, 40)), N], _par())[1]
    same_bits(y, np.roll(u, 1, 1) + np.roll(u, -1, 1) - 2.0 * u, _par())
    u = rng.standard_normal((N, 6, 90)) * 10.0 ** rng.integers(-6, 6, (N, 6, 90))
    outs = [np.zeros((N, 6, 90)), np.zeros((N, 88)), np.zeros((N, 90, 4)), np.zeros(N)]
    a, b, c, s = run_both(rolls, [u, *outs, N], _par())[1:-1]
    same_bits(a, np.stack([np.roll(m, 2, axis=0) - np.roll(m[:, ::-1], -7, 1) for m in u]),
              _par())
    same_bits(b, np.stack([np.roll(m[1, 1:-1], shift=23) for m in u]), _par())
    same_bits(c, np.stack([np.roll(u.T[:, 2:, i], 0, -1) + np.roll(u[i, 2:, 0], -1)
                           for i in range(N)]), _par())
    same_bits(s, np.array([np.sum(np.roll(m, 3, 1)) for m in u]), _par())


@parpy.jit
def rolls_in_place(u, v, N):
    parpy.label('i')
    for i in range(N):
        u[i, :] = np.roll(u[i, :], 1)
        v[i, :, :] = np.roll(v[i], -2, axis=1) * 2.0 + np.roll(v[i], 1, axis=0)


def test_a_roll_written_over_what_it_reads_reads_it_all_first():
    # (a roll's index is no constant distance from the element written:
    # the statement goes through a temporary, as NumPy's copy)
    rng = np.random.default_rng(8)
    u, v = rng.standard_normal((N, 9)), rng.standard_normal((N, 4, 5))
    got = run_both(rolls_in_place, [u, v, N], _par())
    assert np.array_equal(got[0], np.roll(u, 1, axis=1))
    assert np.array_equal(got[1], np.roll(v, -2, axis=2) * 2.0 + np.roll(v, 1, axis=1))


def test_a_roll_indexes_without_a_check():
    code = parpy.print_compiled(periodic_laplacian, [np.zeros((N, 6)), np.zeros((N, 6)), N],
                                _par())
    assert "parpy_wrap_i64(j - 1, 6)" in code and "parpy_wrap_i64(j - 5, 6)" in code
    # no bounds check, and no second copy of the loop for bounds that
    # never keep the indices in range
    assert "parpy_check_index" not in code
    assert code.count("for (int64_t j") == 1


@parpy.jit
def crosses(a, b, w, c, d, N):
    parpy.label('i')
    for i in range(N):
        c[i, :] = np.cross(a[i, 0], b[i, 0])
        d[i, :, :] = np.cross(a[i], w) * 2 + np.cross(b[i, :, ::-1], a[i])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32, np.int8])
def test_cross_products_are_numpys(dtype):
    rng = np.random.default_rng(7)
    if np.dtype(dtype).kind == "i":
        a, b, w = (rng.integers(-100, 100, s).astype(dtype) for s in [(N, 5, 3), (N, 5, 3), 3])
    else:
        a, b, w = (rng.standard_normal(s).astype(dtype) for s in [(N, 5, 3), (N, 5, 3), 3])
    rt = np.cross(a[0], w).dtype
    with np.errstate(over="ignore"):
        c, d = run_both(crosses, [a, b, w, np.zeros((N, 3), rt), np.zeros((N, 5, 3), rt), N],
                        _par())[3:5]
        same_bits(c, np.cross(a[:, 0], b[:, 0]), _par())
        want = np.stack([np.cross(a[i], w) * 2 + np.cross(b[i, :, ::-1], a[i])
                         for i in range(N)]).astype(rt)
    same_bits(d, want, _par())


@parpy.jit
def roll_of_a_matrix(u, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :, :] = np.roll(u[i], 1)


@parpy.jit
def cross_of_pairs(a, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.cross(a[i, 0, :], a[i, 1, :])


@parpy.jit
def roll_of_a_product(u, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.roll(u[i] * 2.0, 1)


@parpy.jit
def roll_by_a_run_time_shift(u, y, k, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.roll(u[i], k)


@pytest.mark.parametrize("fn, args, message", [
    (roll_of_a_matrix, [np.zeros((N, 4, 5)), np.zeros((N, 4, 5))],
     r"`np.roll` without an axis of a view of 2 dimensions is not supported"),
    (cross_of_pairs, [np.zeros((N, 2, 2)), np.zeros(N)],
     r"`np.cross` of vectors of 2 elements is not supported"),
])
def test_misuse_of_roll_and_cross_is_refused(fn, args, message):
    with pytest.raises(parpy.CompileError, match=message):
        parpy.print_compiled(fn, [*args, N], _par())


def test_a_shift_must_be_known_when_compiling():
    opts = _par()
    opts.specialize_scalars = False
    with pytest.raises(parpy.CompileError, match=r"`np.roll`"):
        parpy.print_compiled(roll_by_a_run_time_shift, [np.zeros((N, 4)), np.zeros((N, 4)), 1, N],
                             opts)


def test_rolls_and_crosses_compile_for_cuda_and_metal():
    def args(backend):
        f = np.float32
        return [np.zeros((N, 6, 90), f), np.zeros((N, 6, 90), f), np.zeros((N, 88), f),
                np.zeros((N, 90, 4), f), np.zeros(N, f), N]
    check_gpu_code(rolls, args, {'i': parpy.threads(N)}, "rolls")
    check_gpu_code(crosses, lambda backend: [np.zeros((N, 5, 3), np.float32) for _ in range(2)] + [
        np.zeros(3, np.float32), np.zeros((N, 3), np.float32), np.zeros((N, 5, 3), np.float32),
        N], {'i': parpy.threads(N)}, "crosses")


def test_a_roll_of_a_product_is_numpys():
    # (was refused: "roll the arrays it reads")
    u = np.random.default_rng(2).standard_normal((N, 4))
    run_both(roll_of_a_product, [u, np.zeros((N, 4)), N], _par())
