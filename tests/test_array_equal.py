"""`np.array_equal(a1, a2, equal_nan=False)` and `np.array_equiv(a1, a2)`
in jit code: a Python bool, NumPy's answer (shapes known when compiling
that differ, for `array_equiv` that do not broadcast: False; NaN equal to
NaN only with `equal_nan=True`). Compared with plain Python."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, module_from_source, run_both


@parpy.jit
def equal(x, y, r, N):
    parpy.label('i')
    for i in range(N):
        r[i, 0] = np.array_equal(x[i, :], y[i, :])
        r[i, 1] = np.array_equal(x[i, :], y[i, :], equal_nan=True)
        r[i, 2] = np.array_equiv(x[i, :], y[i, 0])
        r[i, 3] = np.array_equal(x[i, :], y[i, 1:])
        r[i, 4] = np.array_equiv(x[i, :2], y[i, :])
        r[i, 5] = np.array_equiv(x[i, :], y[i, :])
        r[i, 6] = np.array_equal(x[i, :] * 2, y[i, :] + y[i, :])
        r[i, 7] = np.array_equal(x[i, ::-1], y[i, :], True)
        r[i, 8] = np.array_equal(x[i, 0], y[i, 0])
        r[i, 9] = np.array_equal(x[i, :1], y[i, 0])
        r[i, 10] = np.array_equiv(x[i, :1], y[i, 0])
        r[i, 11] = np.array_equal(a1=x[i, :], a2=x[i, :], equal_nan=True)
        r[i, 12] = np.array_equal(x[i, :], x[i, :])
        if np.array_equal(x[i, :], y[i, :]):
            r[i, 13] = True


@parpy.jit
def whole(x, y, z, r, k):
    parpy.label('k')
    for k0 in range(k):
        r[0] = np.array_equal(x, y)
        r[1] = np.array_equal(x, y, equal_nan=True)
        r[2] = np.array_equiv(x, z)
        r[3] = np.array_equal(x, z)
        r[4] = np.array_equiv(x[0, :], x)
        r[5] = np.array_equiv(x, y[:, :1])


def _rows(n, dtype):
    rng = np.random.default_rng(n)
    x = rng.integers(0, 3, (8, n)).astype(dtype)
    y = x.copy()
    y[1, -1] += 1
    y[2] = y[2, ::-1]
    y[3] = y[3, 0]
    x[4] = y[4] = x[4, 0]
    if np.dtype(dtype).kind == 'f':
        x[5, 0] = y[5, 0] = np.nan
        x[6, -1] = np.nan
        x[7, :] = y[7, :] = [np.inf, -0.0, np.nan][:1] * n
        y[7, 0] = np.inf
    return x, y


@pytest.mark.parametrize("n", range(2, 10))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64],
                         ids=lambda d: np.dtype(d).name)
def test_array_equal_is_numpys(dtype, n):
    x, y = _rows(n, dtype)
    run_both(equal, [x, y, np.zeros((8, 14), np.bool_), 8], cpu_opts({'i': parpy.threads(8)}),
             rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [np.float64, np.int64], ids=lambda d: np.dtype(d).name)
def test_array_equal_of_whole_arrays_is_numpys(dtype):
    x, y = _rows(5, dtype)
    for z in [x[:1], x[:, :1], x.T.copy()]:
        run_both(whole, [x, y, z, np.zeros(6, np.bool_), 1], cpu_opts({'k': parpy.threads(1)}),
                 rtol=0, atol=0)
    x[2, 2] = y[2, 2] = -0.0 if dtype == np.float64 else 0
    run_both(whole, [x, x.copy(), x[:1], np.zeros(6, np.bool_), 1],
             cpu_opts({'k': parpy.threads(1)}), rtol=0, atol=0)


def test_equal_nan_must_be_known_when_compiling(tmp_path):
    mod = module_from_source(
        tmp_path, "array_equal_mod",
        "import numpy as np\nimport parpy\n\n"
        "def f(x, r, N):\n"
        "    parpy.label('i')\n"
        "    for i in range(N):\n"
        "        r[i] = np.array_equal(x[i, :], x[i, :], equal_nan=x[i, 0] > 0.0)\n")
    with pytest.raises(parpy.CompileError, match="`equal_nan` of `np.array_equal` must be True or False") as e:
        parpy.jit(mod.f)(np.zeros((3, 4)), np.zeros(3, np.bool_), 3,
                         opts=cpu_opts({'i': parpy.threads(3)}))
    assert "array_equal_mod.py:7" in str(e.value)


@parpy.jit
def equal32(x, y, r, N):
    parpy.label('i')
    for i in range(N):
        r[i, 0] = np.array_equal(x[i, :], y[i, :], equal_nan=True)
        r[i, 1] = np.array_equiv(x[i, :], y[i, 0])


def test_array_equal_compiles_for_cuda_and_metal():
    def args(backend):
        return [np.zeros((4, 7), np.float32), np.zeros((4, 7), np.float32),
                np.zeros((4, 2), np.bool_), 4]
    check_gpu_code(equal32, args, {'i': parpy.threads(4)}, "array_equal")
