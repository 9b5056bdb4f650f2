"""`np.isin(element, test_elements, assume_unique=False, invert=False)` in
jit code: of a number or an elementwise array expression, tested against
a 1-D array argument or slice, a tuple or list literal, NumPy's answers
(equality after NumPy's promotion of the two: NaN is in nothing, -0.0 is
0.0, an integer and a float compare as NumPy's promoted type does, uint64
and int64 by value; no test elements: False)."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, module_from_source, run_both

N = 12
M = 5


@parpy.jit
def member(x, vals, w, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.isin(x[i], vals)
        y[i, 1] = np.isin(x[i], vals[1:])
        y[i, 2] = np.isin(x[i], (1, 5, 7))
        y[i, 3] = np.isin(x[i], [w[0], w[1]])
        y[i, 4] = np.isin(x[i], vals, invert=True)
        y[i, 5] = np.isin(x[i], vals, assume_unique=True, invert=False)
        y[i, 6] = np.isin(x[i], vals[:0])
        y[i, 7] = np.isin(x[i], [0.5, -0.0])
        y[i, 8] = np.isin(element=x[i], test_elements=vals[::2])
        y[i, 9] = np.isin(x[i], ())


def _member(x, vals, w):
    run_both(member, [x, vals, w, np.ones((N, 10), np.bool_), N],
             cpu_opts({'i': parpy.threads(N)}), rtol=0, atol=0)


def _values(dtype):
    if np.dtype(dtype).kind == 'f':
        v = [np.nan, -0.0, 0.0, 1.0, 5.0, 0.5, 7.0, np.inf, -np.inf, 2.5, 3.0, -1.0]
    elif np.dtype(dtype).kind == 'u':
        v = [0, 1, 5, 7, 2, 3, 2**63 + 1 if dtype == np.uint64 else 200, 9, 4, 6, 8, 10]
    else:
        v = [0, 1, 5, 7, -1, 3, -(2**62) if dtype == np.int64 else -100, 9, 4, 2, 8, 10]
    return np.array(v, dtype)


TYPES = [np.float64, np.float32, np.int64, np.uint64, np.int8]


@pytest.mark.parametrize("xt", TYPES)
@pytest.mark.parametrize("vt", TYPES)
def test_isin_of_a_number_is_numpys(xt, vt):
    x = _values(xt)
    vals = np.array(_values(vt)[[0, 1, 3, 4, 6]])
    _member(x, vals, np.array([3, 7], xt))


def test_isin_compares_after_numpys_promotion():
    # (uint64 and int64 by value; int64 and float64 in float64, where
    # 2**53 + 1 is 2**53; float32 0.1 and float64 0.1 differ)
    x = np.array([2**64 - 1, 2**63, 1, 0, 5, 7, 3, 2, 2**63 + 1, 9, 4, 6], np.uint64)
    _member(x, np.array([-1, -(2**63), 1, 2**62, 3], np.int64), np.array([9, 4], np.uint64))
    x = np.array([2**53 + 1, 2**53, 3, -5, 0, 1, 5, 7, 2, 9, 4, 6], np.int64)
    _member(x, np.array([2.0**53, 0.5, -0.0, -5.0, 1.5]), np.array([2**53 + 1, 4]))
    x = np.full(N, 0.1, np.float32)
    _member(x, np.array([0.1, 1.0, 2.0]), np.array([0.1, 0.2], np.float32))


@parpy.jit
def rows(x, vals, v, y, c, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0, :] = np.isin(x[i, :], vals)
        y[i, 1, :] = np.isin(x[i, :], v[i, :])
        y[i, 2, :] = np.isin(x[i, :], (1, 2, 5), invert=True)
        y[i, 3, :] = np.isin(x[i, :] + 1, [v[i, 0], 3])
        y[i, 4, :] = np.isin(x[i, :], vals[:0])
        c[i, 0] = np.sum(np.isin(x[i, :], vals))
        c[i, 1] = np.any(np.isin(x[i, :], v[i, 1:]))
        c[i, 2] = np.sum(np.isin(x[i, :], vals, invert=True))
        c[i, 3] = np.all(np.isin(x[i, :], vals))


@pytest.mark.parametrize("xt,vt", [(np.float64, np.float64), (np.float32, np.float64),
                                   (np.int64, np.float32), (np.uint64, np.int64),
                                   (np.int8, np.uint64)])
def test_isin_of_a_slice_is_numpys_elementwise(xt, vt):
    rng = np.random.default_rng(7)
    x = rng.integers(0, 8, (N, M)).astype(xt)
    v = rng.integers(0, 8, (N, 4)).astype(vt)
    if np.dtype(xt).kind == 'f':
        x[0, :] = [np.nan, -0.0, 0.0, 1.0, 2.0]
    if np.dtype(vt).kind == 'f':
        v[0, :] = [np.nan, 0.0, -0.0, 2.0]
    vals = np.array([1, 3, 5], vt)
    run_both(rows, [x, vals, v, np.ones((N, 5, M), np.bool_), np.zeros((N, 4), np.int64), N],
             cpu_opts({'i': parpy.threads(N)}), rtol=0, atol=0)


@parpy.jit
def branches(k, vals, c, N):
    parpy.label('i')
    for i in range(N):
        c[i] = 0.0
        if np.isin(k[i], vals):
            c[i] = 1.0
        if not np.isin(k[i], vals, invert=True):
            c[i] += 2.0
        for j in range(3):
            if np.isin(j, vals[:2]):
                c[i] += 10.0
        c[i] += np.isin(0.1, vals) + 100.0 * np.isin(k[i], 1)


@pytest.mark.parametrize("vt", [np.float64, np.float32, np.int64])
def test_isin_as_a_condition_and_a_number(vt):
    k = np.arange(N, dtype=np.int64) % 5
    vals = np.array([2, 0.1, 4, 1], np.float64).astype(vt)
    run_both(branches, [k, vals, np.zeros(N), N], cpu_opts({'i': parpy.threads(N)}),
             rtol=0, atol=0)


@pytest.mark.parametrize("call,words,at", [
    ("np.isin(x[i, :], t)", "`np.isin` of an array element takes 1-D test elements", "2 dimensions"),
    ("np.isin(x[i, 0], t, kind='table')", "`np.isin` supports only `kind=None`", "another value"),
    ("np.isin(x[i, 0], t[0, :], invert=i > 0)", "takes `invert=True` or `invert=False`",
     "not a bool literal"),
    ("np.isin(x[i, 0], ((1, 2), (3, 4)))", "takes a tuple or list literal of numbers",
     "nested tuples or lists"),
    ("np.isin(x[i, 0], [[1, 2], [3, 4]])", "takes a tuple or list literal of numbers",
     "nested tuples or lists"),
    ("np.isin([x[i, 0], x[i, 1]], t[0, :])", "takes an elementwise array expression",
     "a list literal"),
    ("np.isin(x[i, :], t[0, :], False, True, None, 1)", "`np.isin` takes 2 to 4 positional arguments but 6",
     "wrong number of arguments"),
])
def test_what_isin_refuses_is_a_located_error(call, words, at, tmp_path):
    mod = module_from_source(
        tmp_path, "isin_mod",
        "import numpy as np\nimport parpy\n\n"
        "def f(x, t, y, N):\n"
        "    parpy.label('i')\n"
        "    for i in range(N):\n"
        f"        y[i, :] = {call}\n")
    with pytest.raises(parpy.CompileError, match=words) as e:
        parpy.jit(mod.f)(np.zeros((3, 4)), np.zeros((2, 2)), np.zeros((3, 4), np.bool_), 3,
                         opts=cpu_opts({'i': parpy.threads(3)}))
    assert "isin_mod.py:7" in str(e.value)
    assert at in str(e.value)


@parpy.jit
def rows32(x, vals, v, y, c, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0, :] = np.isin(x[i, :], vals)
        y[i, 1, :] = np.isin(x[i, :], v[i, :], invert=True)
        c[i, 0] = np.sum(np.isin(x[i, :], vals))
        c[i, 1] = np.isin(x[i, 0], (v[i, 0], v[i, 1]))


def test_isin_compiles_for_cuda_and_metal():
    # (float32 throughout: NumPy compares float32 with int64 in float64,
    # which Metal lacks)
    def args(backend):
        return [np.zeros((N, M), np.float32), np.zeros(3, np.float32),
                np.zeros((N, 4), np.float32), np.zeros((N, 2, M), np.bool_),
                np.zeros((N, 2), np.int64), N]
    check_gpu_code(rows32, args, {'i': parpy.threads(N)}, "isin")
