"""`np.digitize(x, bins, right=False)` of a number in jit code: NumPy's
check of the bins' order (its ValueError where they are neither
increasing nor decreasing), then its binary search of increasing bins or
of the reversed decreasing ones, bit for bit."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, module_from_source

N = 64


@parpy.jit
def binned(x, edges, k, N):
    parpy.label('i')
    for i in range(N):
        k[i, 0] = np.digitize(x[i], edges)
        k[i, 1] = np.digitize(x[i], edges, right=True)
        k[i, 2] = np.digitize(x[i], edges[::-1])
        k[i, 3] = np.digitize(x[i], [-1.0, 0.0, 0.0, 2.5])
        k[i, 4] = np.digitize(x[i], (3, 1, -2), True)
        k[i, 5] = np.digitize(x[i], edges[:1])


def _run(x, edges):
    k = np.zeros((N, 6), np.int64)
    binned(x, edges, k, N, opts=cpu_opts({'i': parpy.threads(N)}))
    want = np.zeros((N, 6), np.int64)
    binned.py_func(x, edges, want, N)
    assert np.array_equal(k, want), (k, want)


EDGES = [
    [-1.0, 0.0, 0.0, 1.0, 2.0],     # increasing, a repeat
    [3.0, 1.0, 1.0, 0.0, -2.0],     # decreasing
    [1.0, 1.0, 1.0, 1.0, 1.0],      # all the same: increasing
    [1.0, 1.0, 2.0, 2.0, 2.0],
    [np.nan, 2.0, 1.0, 0.0, -1.0],  # NaN first: differs, so decreasing
    [-np.inf, -1.0, 0.5, np.inf, np.inf],
]


@pytest.mark.parametrize("edges", EDGES, ids=range(len(EDGES)))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_digitize_is_numpys(edges, dtype):
    x = (np.random.default_rng(3).integers(-8, 8, N) / 2).astype(dtype)
    x[:4] = [np.nan, np.inf, -np.inf, -0.0]
    _run(x, np.array(edges, dtype))


def test_digitize_of_integers_is_numpys():
    x = np.random.default_rng(4).integers(-5, 5, N)
    _run(x, np.array([-3, -1, 0, 2, 4]))
    _run(x, np.array([4, 2, 2, -3, -3]))


@pytest.mark.parametrize("edges", [[1.0, 3.0, 2.0, 4.0, 5.0], [1.0, np.nan, 3.0, 4.0, 5.0],
                                   [3.0, 1.0, 2.0, 0.0, -1.0]])
def test_bins_out_of_order_raise_numpys_value_error(edges):
    x, edges = np.zeros(N), np.array(edges)
    with pytest.raises(ValueError, match="bins must be monotonically"):
        binned.py_func(x, edges, np.zeros((N, 6), np.int64), N)
    with pytest.raises(ValueError, match="bins must be monotonically increasing or decreasing"):
        binned(x, edges, np.zeros((N, 6), np.int64), N, opts=cpu_opts({'i': parpy.threads(N)}))


@pytest.mark.parametrize("call,error,words", [
    ("np.digitize(x[i], [1.0, 3.0, 2.0])", parpy.CompileValueError,
     "bins must be monotonically increasing or decreasing"),
    ("np.digitize(x[i:i + 2], [1.0, 2.0])", parpy.CompileError,
     "parpy takes `np.digitize` of a number"),
])
def test_what_digitize_refuses_is_a_located_error(call, error, words, tmp_path):
    mod = module_from_source(
        tmp_path, "digitize_mod",
        "import numpy as np\nimport parpy\n\n"
        "def f(x, y, N):\n"
        "    parpy.label('i')\n"
        "    for i in range(N):\n"
        f"        y[i] = {call}\n")
    with pytest.raises(error, match=words) as e:
        parpy.jit(mod.f)(np.zeros(4), np.zeros(4, np.int64), 3,
                         opts=cpu_opts({'i': parpy.threads(3)}))
    assert "digitize_mod.py:7" in str(e.value)


@parpy.jit
def binned_by_edges(x, edges, k, N):
    parpy.label('i')
    for i in range(N):
        k[i, 0] = np.digitize(x[i], edges)
        k[i, 1] = np.digitize(x[i], edges[::-1], right=True)


def test_digitize_compiles_for_cuda_and_metal():
    # (a list of Python floats is NumPy's float64 array, which Metal lacks)
    check_gpu_code(binned_by_edges, lambda b: [np.zeros(N, np.float32), np.zeros(5, np.float32),
                                      np.zeros((N, 6), np.int64), N],
                   {'i': parpy.threads(N)}, "digitize")
