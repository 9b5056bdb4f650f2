"""Locals that start as a Python number and then hold NumPy values are of
the NumPy type (docs/arithmetic.md, "Accumulators keep the data's type"):
what reads them, a NumPy function too, sees that type, on every backend
and whatever the width of parpy's Python ints. Checked against the plain
function (`py_func`), bit for bit."""

import numpy as np
import pytest

import parpy
from conftest import backend_opts, cpu_opts, py_func


def same_as_python(fn, args, opts, exact=True):
    """Runs `fn` compiled and undecorated on copies; the arrays must be
    of the same dtype and equal, bit for bit (`exact`), or to a few units
    in the last place (the math library's `exp`)."""
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    ref = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    fn(*mine, opts=opts)
    py_func(fn)(*ref)
    for m, r in zip(mine, ref):
        if isinstance(m, np.ndarray):
            assert m.dtype == r.dtype
            if exact:
                assert m.tobytes() == r.tobytes(), (m, r)
            else:
                np.testing.assert_allclose(m, r, rtol=4e-7)
    return mine


# ---- a NumPy function of a float accumulator that started as a Python float


@parpy.jit
def row_norms(x, out, N, M):
    parpy.label('i')
    for i in range(N):
        s = 0.0
        for j in range(M):
            s += x[i, j] * x[i, j]
        out[i] = np.sqrt(s)


@parpy.jit
def row_exp(x, out, N, M):
    parpy.label('i')
    for i in range(N):
        s = 0.0
        for j in range(M):
            s += x[i, j]
        out[i] = np.exp(s) + np.abs(s) + np.square(s) + np.floor_divide(s, 0.75)


@parpy.jit
def joined_exp(x, y, N):
    parpy.label('i')
    for i in range(N):
        c = 0.5
        if x[i] > 1:
            c = x[i]
        y[i] = np.exp(c)


@parpy.jit
def int8_abs(x, out, N, M):
    for i in range(N):
        s = 0
        for j in range(M):
            s += x[i, j]
        out[i] = np.abs(s)


@parpy.jit
def helper_norm(v, M):
    s = 0.0
    for j in range(M):
        s += v[j] * v[j]
    return np.sqrt(s)


@parpy.jit
def calls_helper_norm(x, out, N, M):
    for i in range(N):
        out[i] = helper_norm(x[i], M)


def test_ufunc_of_a_float_accumulator_keeps_its_float32():
    x = np.random.default_rng(0).random((5, 7), dtype=np.float32)
    same_as_python(row_norms, [x, np.zeros(5, np.float32), 5, 7],
                   cpu_opts({'i': parpy.threads(5)}))
    same_as_python(row_exp, [x, np.zeros(5, np.float32), 5, 7],
                   cpu_opts({'i': parpy.threads(5)}), exact=False)
    same_as_python(calls_helper_norm, [x, np.zeros(5, np.float32), 5, 7], cpu_opts())


def test_ufunc_of_a_local_joined_from_a_python_float_and_float32():
    x = np.linspace(0, 3, 9, dtype=np.float32)
    same_as_python(joined_exp, [x, np.zeros(9, np.float32), 9],
                   cpu_opts({'i': parpy.threads(3)}), exact=False)


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_ufunc_of_an_int8_accumulator_is_int8():
    x = np.array([[100, 27, 1], [-100, -28, 0]], np.int8)
    out = same_as_python(int8_abs, [x, np.zeros(2, np.int8), 2, 3], cpu_opts())[1]
    assert out.tolist() == [-128, 128 - 256]


def test_a_wider_result_is_still_refused():
    # (the accumulator is a float32; its square root cannot go into an int8)
    x = np.ones((2, 3), np.float32)
    with pytest.raises(parpy.CompileError, match="cannot store"):
        row_norms(x, np.zeros(2, np.int8), 2, 3, opts=cpu_opts())


def test_metal_float16_accumulator():
    x = np.ones((2, 4), np.float16)
    opts = backend_opts(parpy.CompileBackend.Metal, {'i': parpy.threads(2)})
    code = parpy.print_compiled(row_norms, [x, np.zeros(2, np.float16), 2, 4], opts)
    assert "half s" in code


# ---- a Python int's accumulator of uint32 values with 32-bit Python ints


@parpy.jit
def u32_row_sums(x, out, N, M):
    parpy.label('i')
    for i in range(N):
        s = 0
        for j in range(M):
            s += x[i, j]
        out[i] = s


@parpy.jit
def u32_row_max(x, out, N, M):
    parpy.label('i')
    for i in range(N):
        m = 0
        for j in range(M):
            m = max(m, x[i, j])
        out[i] = m


@parpy.jit
def u32_joined(x, y, N):
    parpy.label('i')
    for i in range(N):
        c = 3
        if x[i] > 2:
            c = x[i]
        y[i] = c


U32_CASES = [
    (u32_row_sums, lambda: [np.array([[4000000000, 294967297, 5], [1, 2, 3]], np.uint32),
                            np.zeros(2, np.uint32), 2, 3]),
    (u32_row_max, lambda: [np.array([[4000000000, 7, 5], [1, 2, 3]], np.uint32),
                           np.zeros(2, np.uint32), 2, 3]),
    (u32_joined, lambda: [np.arange(4000000000, 4000000010, dtype=np.uint32) % 7,
                          np.zeros(10, np.uint32), 10]),
]


@pytest.mark.filterwarnings("ignore:overflow encountered")
@pytest.mark.parametrize("fn,args", U32_CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_uint32_accumulator_with_32_bit_python_ints(fn, args):
    spec = {'i': parpy.threads(2)}
    a = args()
    same_as_python(fn, a, cpu_opts(spec, force_int_size=parpy.types.I32))
    same_as_python(fn, args(), cpu_opts(spec))
    code = parpy.print_compiled(fn, args(), backend_opts(parpy.CompileBackend.Metal, spec))
    assert "int64_t" not in code
