"""`np.frexp`, `math.frexp` and `math.modf` inside jit code: the mantissa
and power of two of a float, and Python's parts of `float(x)`, each the
value NumPy or Python gives, bit for bit (zeros, infinities, NaN,
subnormals and the neighbours of powers of two included). `np.modf` is in
test_natural.py."""

import math

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both


def values(dtype):
    """Hard cases of `dtype` and random ones across its exponents."""
    t = np.dtype(dtype)
    if t.kind == "b":
        return np.array([True, False, True, True], bool)
    if t.kind in "iu":
        info = np.iinfo(t)
        v = [0, 1, 2, 3, 4, 7, 8, 100, int(info.max), int(info.min), int(info.max) - 1]
        return np.array(v + list(np.random.default_rng(1).integers(info.min, info.max, 9, dtype=t)), t)
    info = np.finfo(t)
    one = t.type(1)
    hard = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.0, 3.0, 0.75,
            info.max, -info.max, info.tiny, info.smallest_subnormal,
            -info.smallest_subnormal, info.tiny / 3,
            np.nextafter(t.type(2), t.type(0)), np.nextafter(one, t.type(2)),
            np.nextafter(t.type(0.5), t.type(0)), np.nextafter(t.type(1024), t.type(0))]
    rng = np.random.default_rng(2)
    exps = rng.integers(info.minexp - info.nmant, info.maxexp, 24)
    rand = rng.uniform(-1, 1, 24) * np.exp2(exps.astype(np.float64))
    with np.errstate(over="ignore"):
        return np.concatenate([np.array(hard, t), rand.astype(t)])


@parpy.jit
def np_frexp(x, m, e, N):
    parpy.label('i')
    for i in range(N):
        a, b = np.frexp(x[i])
        m[i] = a
        e[i] = b


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int8, np.int16,
                                   np.int32, np.int64, np.uint64, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_np_frexp_gives_numpys_mantissa_and_exponent(dtype):
    # (was "cannot call `np.frexp`")
    x = values(dtype)
    want_m, want_e = np.frexp(x)
    n = len(x)
    m, e = np.zeros(n, want_m.dtype), np.zeros(n, want_e.dtype)
    m, e = run_both(np_frexp, [x, m, e, n], cpu_opts({'i': parpy.threads(n)}))[1:3]
    assert m.tobytes() == want_m.tobytes() or np.array_equal(m, want_m, equal_nan=True)
    assert np.array_equal(np.signbit(m), np.signbit(want_m))
    assert np.array_equal(e, want_e)


@parpy.jit
def py_parts(x, m, e, f, w, N):
    parpy.label('i')
    for i in range(N):
        a, b = math.frexp(x[i])
        m[i] = a
        e[i] = b
        f[i], w[i] = math.modf(x[i])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64, np.uint8],
                         ids=lambda d: np.dtype(d).name)
def test_math_frexp_and_modf_give_pythons_parts_of_the_float(dtype):
    # (were "cannot call `math.frexp`" / "`math.modf`")
    x = values(dtype)
    x = x[np.isfinite(x)] if x.dtype.kind == "f" else x   # (Python raises for inf)
    n = len(x)
    args = [x, np.zeros(n), np.zeros(n, np.int64), np.zeros(n), np.zeros(n), n]
    m, e, f, w = run_both(py_parts, args, cpu_opts({'i': parpy.threads(n)}))[1:5]
    for k, v in enumerate(x.tolist()):
        assert (m[k], e[k]) == math.frexp(v), v
        assert math.copysign(1, m[k]) == math.copysign(1, math.frexp(v)[0]), v
        assert (f[k], w[k]) == math.modf(v), v
        assert math.copysign(1, f[k]) == math.copysign(1, math.modf(v)[0]), v


@parpy.jit
def weak_parts(x, y, N):
    parpy.label('i')
    for i in range(N):
        a, b = math.frexp(x[i])
        f, w = math.modf(x[i])
        # Python numbers: they take the float32 element's type
        y[i] = x[i] * a + b + f * x[i] - w


def test_math_parts_are_python_numbers():
    x = np.array([1.5, -2.25, 3e5, 7.0], np.float32)
    # (a float64 part would make the sum float64: a refused narrowing store)
    run_both(weak_parts, [x, np.zeros(4, np.float32), 4], cpu_opts({'i': parpy.threads(4)}))


@parpy.jit
def frexp_value(x, y, N):
    for i in range(N):
        y[i] = np.frexp(x[i])


def test_frexp_not_unpacked_says_to_unpack_it():
    with pytest.raises(parpy.CompileError, match=r"`np.frexp` gives a pair: unpack it"):
        frexp_value(np.ones(2), np.zeros(2), 2, opts=cpu_opts())


def test_frexp_generates_gpu_code():
    check_gpu_code(np_frexp, lambda backend: [np.ones(64, np.float32), np.ones(64, np.float32), np.ones(64, np.int32), 64],
                   {'i': parpy.threads(64)}, "np_frexp")
