"""Python's `math.hypot` of any number of coordinates (Python 3.8+):
CPython's `vector_norm`, Python's result to the last bit (checked against
the plain function on random and extreme values); no coordinates give
0.0, one its absolute value; an infinity gives inf, a NaN NaN, and a
result past the largest float inf, without an error (as CPython).
`math.dist(p, q)` is the same norm of the float64 differences."""

import math

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, module_from_source, py_func


@parpy.jit
def norms(x, o, N):
    for i in range(N):
        o[i, 0] = math.hypot(x[i, 0], x[i, 1], x[i, 2])
        o[i, 1] = math.hypot(x[i, 0], x[i, 1])
        o[i, 2] = math.hypot(x[i, 0], x[i, 1], x[i, 2], x[i, 3], x[i, 4])
        o[i, 3] = math.hypot()
        o[i, 4] = math.hypot(x[i, 3])
        o[i, 5] = math.hypot(x[i, 0], 2, True)


def test_math_hypot_of_any_number_of_coordinates_is_pythons():
    rng = np.random.default_rng(0)
    n = 20000
    x = rng.standard_normal((n, 5)) * np.exp(rng.uniform(-3, 3, (n, 5)))
    x[:100] *= 1e300                       # no spurious overflow
    x[100:200] *= 1e-300
    x[200:210] = 0.0
    x[210:220, 1] = np.inf
    x[215:220, 0] = np.nan                 # an infinity wins over a NaN
    x[220:230, 2] = np.nan
    x[230:240] = rng.uniform(0.5e308, 1.7e308, (10, 5))  # inf, no error
    x[240:250] = -x[240:250]
    x[250] = [1.0, 2.0, 2.0, -4.0, 0.0]
    got = np.zeros((n, 6))
    want = np.zeros((n, 6))
    norms(x, got, n, opts=cpu_opts())
    py_func(norms)(x, want, n)
    assert got[250, 0] == 3.0 and got[250, 3] == 0.0 and got[250, 4] == 4.0
    assert np.isinf(got[230:240, 0]).any()
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    assert same.all(), (np.argwhere(~same)[:5], got[~same][:5], want[~same][:5])


@parpy.jit
def distances(x, o, N):
    for i in range(N):
        o[i, 0] = math.dist((x[i, 0], x[i, 1]), (x[i, 2], x[i, 3]))
        o[i, 1] = math.dist([x[i, 0], x[i, 1], 3], (x[i, 4], -1.5, x[i, 2]))
        o[i, 2] = math.dist((x[i, 0],), (x[i, 4],))
        o[i, 3] = math.dist((), ())


def test_math_dist_is_pythons():
    rng = np.random.default_rng(1)
    n = 20000
    x = rng.standard_normal((n, 5)) * 10.0 ** rng.integers(-300, 300, (n, 5))
    x[:10, 1] = np.inf
    x[10:20, 3] = np.nan
    x[20:30] = 0.0
    x[30:40] = rng.uniform(0.5e308, 1.7e308, (10, 5)) * [1, 1, -1, -1, 1]  # inf, no error
    x[40] = [3.0, 0.0, 0.0, 4.0, 1.0]
    got = np.zeros((n, 4))
    want = np.zeros((n, 4))
    distances(x, got, n, opts=cpu_opts())
    py_func(distances)(x, want, n)
    assert got[40, 0] == 5.0 and got[40, 2] == 2.0 and got[40, 3] == 0.0
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    assert same.all(), (np.argwhere(~same)[:5], got[~same][:5], want[~same][:5])


@pytest.mark.parametrize("call,words", [
    ("math.dist((x[0], x[1]), (x[2],))", "both points must have the same number of dimensions"),
    ("math.dist(x, x)", "`math.dist` takes two tuple or list literals here"),
    ("math.dist((x, 1.0), (1.0, 2.0))", "`math.dist` takes points of numbers"),
])
def test_what_math_dist_cannot_take_is_a_located_error(call, words, tmp_path):
    mod = module_from_source(tmp_path, "dist_mod", "import math\n\ndef d(x, o):\n"
                             f"    o[0] = {call}\n")
    with pytest.raises(parpy.CompileError) as e:
        parpy.print_compiled(parpy.jit(mod.d), [np.ones(3), np.zeros(1)], cpu_opts())
    assert words in str(e.value) and "dist_mod.py:4" in str(e.value), str(e.value)
