"""`np.select(condlist, choicelist, default=0)` in jit code: the value of the
first condition that holds, else the default, elementwise or of scalars, of
NumPy's type of all the values (Python numbers weak); NumPy's ValueError and
TypeError as located compile errors."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, module_from_source, same_bits

N, M = 6, 9


@parpy.jit
def piecewise(x, y, s, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.select([x[i, :] < -0.5, x[i, :] > 0.5], [-x[i, :], x[i, :] * 2.0],
                            default=0.25)
        s[i, 0] = np.sum(np.select((x[i, :] < 0.0,), (x[i, :] * x[i, :],), x[i, :]))
        # the first condition that holds wins, here the second of three
        s[i, 1] = np.select([x[i, 0] > 9.0, x[i, 0] > -9.0, x[i, 0] > 0.0], [1, 2, 3])
        s[i, 2] = np.select([x[i, 1] < 0.0], [x[i, 2]], x[i, 3] * 2.0)


@parpy.jit
def typed(x, k, y, N):
    parpy.label('i')
    for i in range(N):
        # float32 and Python numbers: float32; an int8 and an int16: int16
        y[i, :] = np.select([x[i, :] < 0.0, x[i, :] > 0.3], [x[i, :], 1.5], 2) * x[i, :]
        k[i, :] = np.select([x[i, :] < 0.0], [k[i, :]], np.int8(-3)) + np.int16(200)


def test_select_is_numpys(run_both):
    x = np.random.default_rng(1).standard_normal((N, M))
    x[0, :4] = [0.5, -0.5, np.nan, -0.0]
    got = run_both(piecewise, [x, np.zeros((N, M)), np.zeros((N, 3)), N],
                   cpu_opts({'i': parpy.threads(N)}))
    want = [x.copy(), np.zeros((N, M)), np.zeros((N, 3)), N]
    piecewise.py_func(*want)
    same_bits(got[1], want[1], cpu_opts())
    same_bits(got[2], want[2], cpu_opts())


def test_select_takes_numpys_types(run_both):
    x = np.random.default_rng(2).standard_normal((N, M)).astype(np.float32)
    k = np.arange(N * M, dtype=np.int16).reshape(N, M) % 50
    got = run_both(typed, [x, k, np.zeros((N, M), np.float32), N],
                   cpu_opts({'i': parpy.threads(N)}))
    want = [x.copy(), k.copy(), np.zeros((N, M), np.float32), N]
    typed.py_func(*want)
    assert np.array_equal(got[1], want[1]) and np.array_equal(got[2], want[2])


def test_select_compiles_for_cuda_and_metal():
    check_gpu_code(typed, lambda b: [np.zeros((N, M), np.float32), np.zeros((N, M), np.int16),
                                     np.zeros((N, M), np.float32), N],
                   {'i': parpy.threads(N)}, "select")


@pytest.mark.parametrize("call,error,words", [
    ("np.select([x[i, :] < 0], [x[i, :], x[i, :]])", parpy.CompileValueError,
     "list of cases must be same length as list of conditions"),
    ("np.select([], [])", parpy.CompileValueError,
     "select with an empty condition list is not possible"),
    ("np.select([x[i, :]], [x[i, :]])", parpy.CompileTypeError,
     "invalid entry 0 in condlist: should be boolean ndarray"),
    ("np.select(x[i, :] < 0, [x[i, :]])", parpy.CompileError,
     "takes a list or tuple literal here"),
])
def test_what_select_refuses_is_numpys_error(call, error, words, tmp_path):
    mod = module_from_source(
        tmp_path, "select_mod",
        "import numpy as np\nimport parpy\n\n"
        "def f(x, y, N):\n"
        "    parpy.label('i')\n"
        "    for i in range(N):\n"
        f"        y[i, :] = {call}\n")
    x = np.ones((N, M))
    if error is not parpy.CompileError:
        with pytest.raises((ValueError, TypeError)):
            mod.f(x.copy(), np.zeros((N, M)), N)
    with pytest.raises(error, match=words) as e:
        parpy.jit(mod.f)(x, np.zeros((N, M)), N, opts=cpu_opts({'i': parpy.threads(N)}))
    assert "select_mod.py:7" in str(e.value)
