"""NumPy's array methods and the calls that write arrays, as NumPy users
write them in kernels: `x[i, :].dot(w)`, `.clip(lo, hi)`, `.round(d)`,
`.item()`, Python's `min(s)` / `max(s)` of a slice, `s.fill(v)`,
`np.copyto(dst, src)`, `np.outer(a, b)`. A method is its NumPy function with
the array first (`keywords.method_builtin`), so it has the function's
semantics. Each program runs as plain Python (the reference) and compiled
(conftest.run_both)."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both

N, M = 5, 12


def _par():
    return cpu_opts({'i': parpy.threads(N)})


def rng(seed):
    return np.random.default_rng(seed)


@parpy.jit
def methods(x, w, y, v, N):
    parpy.label('i')
    for i in range(N):
        v[i, 0] = x[i, :].dot(w)
        v[i, 1] = x[i, 0].item() * 2
        v[i, 2] = min(x[i, :]) + max(x[i, 1:])
        y[i, :] = x[i, :].clip(-0.5, 0.5) + x[i, :].round(2) + x[i, :].clip(max=0.25)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_methods_are_their_numpy_functions(dtype):
    # (each was "method `dot` / `clip` / `round` / `item` is not supported",
    # `min(s)` "takes at least 2 arguments")
    x = rng(1).standard_normal((N, M)).astype(dtype)
    x[2, 3] = 0.125  # a tie: 0.125 rounds to 0.12 in NumPy
    w = rng(2).standard_normal(M).astype(dtype)
    got = run_both(methods, [x, w, np.zeros((N, M), dtype), np.zeros((N, 3), dtype), N], _par())
    assert np.array_equal(got[2], np.clip(x, -0.5, 0.5) + np.round(x, 2) + np.minimum(x, 0.25))
    assert np.array_equal(got[3][:, 2], x.min(axis=1) + x[:, 1:].max(axis=1))


@parpy.jit
def items(x, y, N):
    parpy.label('i')
    for i in range(N):
        # an index of a 1-D slice, the flat index and the indices of a
        # block, a tuple of them, the one element of a slice, a negative one
        y[i, 0] = x[i, 1, :].item(2) + x[i].item(1, 2)
        y[i, 1] = x[i].item(4) * 3 + x[i, :, 1:].item((1, 0))
        y[i, 2] = x[i, 0, 1:2].item() - x[i, 0, :].item(-1)
        y[i, 3] = x[i].item(5 - i)


@pytest.mark.parametrize("dtype", [np.float64, np.int8])
def test_item_takes_numpys_indices(dtype):
    # (was: "slices can only be used in slice assignments and reductions")
    x = rng(3).integers(-20, 20, (N, 2, 3)).astype(dtype)
    got = run_both(items, [x, np.zeros((N, 4)), N], _par())[1]
    want = np.zeros((N, 4))
    items.py_func(x, want, N)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("call,python,error,words", [
    ("x[i, 1, :].item()", ValueError, parpy.CompileValueError,
     "can only convert an array of size 1 to a Python scalar"),
    ("x[i].item(0, 1, 2)", ValueError, parpy.CompileValueError,
     "incorrect number of indices for array"),
    ("x[i].item(7 - i)", IndexError, IndexError,
     r"index 7 is out of bounds for axis 0 of `x.reshape\(6\)`"),
    # (its index was ignored: 1.0, where NumPy raises)
    ("x[i, 0, 1].item(5)", IndexError, parpy.CompileError,
     r"parpy takes `.item\(\)` of a number without indices"),
])
def test_what_item_refuses_is_numpys_error(call, python, error, words, tmp_path):
    from conftest import module_from_source
    mod = module_from_source(
        tmp_path, "item_mod",
        "import parpy\n\n"
        "def f(x, y, N):\n"
        "    parpy.label('i')\n"
        "    for i in range(N):\n"
        f"        y[i] = {call}\n")
    x = np.ones((N, 2, 3))
    with pytest.raises(python):
        mod.f(x.copy(), np.zeros(N), N)
    with pytest.raises(error, match=words) as e:
        parpy.jit(mod.f)(x, np.zeros(N), N, opts=_par())
    assert "item_mod.py:6" in str(e.value)


@parpy.jit
def integer_methods(k, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = k[i, :].clip(-3, 3) * k[i, 0].item()
        y[i, 0] = k[i, :].dot(k[0, :])


def test_integer_methods_keep_integers():
    k = rng(3).integers(-9, 9, (N, M)).astype(np.int32)
    run_both(integer_methods, [k, np.zeros((N, M), np.int32), N], _par())


@parpy.jit
def fills(x, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i, :].fill(x[i, 0])
        np.copyto(z[i, 1:], x[i, :-1])
        z[i, 0] = 7.0
        tmp = np.zeros(x.shape[1], dtype=x.dtype)
        tmp.fill(1.5)
        y[i, :] += tmp


@parpy.jit
def fill_whole(x, y):
    parpy.label('j')
    y.fill(2.0)
    parpy.label('j')
    np.copyto(x, y, casting='same_kind')


def test_fill_and_copyto_are_assignments():
    # (they were "method `fill` is not supported" and "no parpy equivalent")
    x = rng(4).standard_normal((N, M))
    got = run_both(fills, [x, np.zeros((N, M)), np.zeros((N, M)), N], _par())
    assert np.array_equal(got[1], np.repeat(x[:, :1], M, axis=1) + 1.5)
    got = run_both(fill_whole, [np.zeros((3, 4)), np.zeros((3, 4))],
                   cpu_opts({'j': parpy.threads(4)}))
    assert (got[0] == 2.0).all()


@parpy.jit
def outer_products(a, b, c, N):
    parpy.label('i')
    for i in range(N):
        c[i, :, :] = np.outer(a[i, :], b[i, :]) + np.outer(a[i, :] * 2, b[0, :])


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_np_outer_of_slices(dtype):
    a = (rng(5).standard_normal((N, 3)) * 10).astype(dtype)
    b = (rng(6).standard_normal((N, 4)) * 10).astype(dtype)
    got = run_both(outer_products, [a, b, np.zeros((N, 3, 4), dtype), N], _par())
    assert np.array_equal(got[2][1], np.outer(a[1], b[1]) + np.outer(a[1] * 2, b[0]))


def test_gpu_code_of_methods_compiles():
    x = np.zeros((N, M), np.float32)
    check_gpu_code(methods, lambda backend: [x, np.zeros(M, np.float32), x,
                                              np.zeros((N, 3), np.float32), N],
                   {'i': parpy.threads(N)}, "methods")
    check_gpu_code(fills, lambda backend: [x, x, x, N], {'i': parpy.threads(N)}, "fills")
