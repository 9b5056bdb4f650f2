"""`np.digitize(x, bins, right=False)` in jit code, of a number or
elementwise of a slice or array: NumPy's check of the bins' order, once a
call (its ValueError where they are neither increasing nor decreasing),
then its binary search of increasing bins or of the reversed decreasing
ones, bit for bit."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, module_from_source, run_both

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
    ("np.digitize(x[i], 2.0)", parpy.CompileTypeError,
     "`np.digitize` takes its bins as a 1-D array or slice or a list of numbers"),
    ("np.digitize(x[i], [0.0, x[0]])", parpy.CompileError,
     "parpy takes the bins of `np.digitize` as a list of number literals"),
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


# elementwise: `x` a row or an array, as NumPy's np.digitize takes it

M = 9


@parpy.jit
def binned_rows(x, edges, k, c, N):
    parpy.label('i')
    for i in range(N):
        k[i, 0, :] = np.digitize(x[i, :], edges)
        k[i, 1, :] = np.digitize(x[i, :], edges, right=True)
        k[i, 2, :] = np.digitize(x[i, :], edges[::-1])
        k[i, 3, :] = np.digitize(x[i, :], edges[::-1], right=True)
        k[i, 4, :] = np.digitize(x[i, :], [-1.0, 0.0, 0.0, 2.5], right=True)
        k[i, 5, :] = np.digitize(x[i, :], [3, 1, 1, -2])
        d = np.digitize(x[i, :], edges, True)
        k[i, 6, :] = d * 2 - 1
        c[i] = np.sum(np.digitize(x[i, :], edges) == 2)


ROW_EDGES = EDGES + [
    [np.nan, np.nan, np.nan, np.nan, np.nan],
    [-1.0, 0.0, 1.0, 2.0, np.nan],  # NaN last: increasing
    [],
]


def _rows(dtype, seed):
    x = np.random.default_rng(seed).integers(-8, 8, (N, M)) / 2
    if np.dtype(dtype).kind == "f":
        x[:2, :4] = [np.nan, np.inf, -np.inf, -0.0]
    return x.astype(dtype)


@pytest.mark.parametrize("edges", ROW_EDGES, ids=range(len(ROW_EDGES)))
@pytest.mark.parametrize("xtype,etype", [(np.float64, np.float64), (np.float32, np.float32),
                                         (np.int64, np.float64), (np.float64, np.int32)],
                         ids=["f64", "f32", "int-x", "int-bins"])
def test_digitize_of_rows_is_numpys(edges, xtype, etype):
    edges = np.array(edges)
    if np.dtype(etype).kind == "i":
        edges = np.nan_to_num(edges, nan=7, posinf=9, neginf=-9)
    run_both(binned_rows, [_rows(xtype, 5), edges.astype(etype), np.zeros((N, 7, M), np.int64),
                           np.zeros(N, np.int64), N],
             cpu_opts({'i': parpy.threads(N)}), rtol=0, atol=0)


@parpy.jit
def binned_array(x, bins, idx, k):
    idx[:] = np.digitize(x[:], bins)
    k[:, :] = np.digitize(k, bins, right=True)


@pytest.mark.parametrize("bins", [[0.5, 1.0, 2.0], [2.0, 1.0, 1.0, np.nan], [], [1.5]],
                         ids=["up", "down", "empty", "one"])
def test_digitize_of_a_whole_array_is_numpys(bins):
    # (an empty or one-element `bins` is increasing; NumPy gives 0 or the
    # side of the one bin)
    x = np.array([np.nan, -1.0, 0.5, 1.0, 1.5, 2.0, 3.0])
    k = np.random.default_rng(6).integers(-1, 4, (3, 5))
    got = [x.copy(), np.array(bins), np.zeros(7, np.int64), k.copy()]
    binned_array(*got, opts=cpu_opts())
    want = [x.copy(), np.array(bins), np.zeros(7, np.int64), k.copy()]
    binned_array.py_func(*want)
    assert np.array_equal(got[2], want[2]) and np.array_equal(got[3], want[3]), (got, want)


@parpy.jit
def binned_by_rows(x, bins, k, N):
    parpy.label('i')
    for i in range(N):
        k[i, :] = np.digitize(x[i, :], bins[i, :])


def test_bins_out_of_order_raise_once_a_call_even_for_no_elements():
    # NumPy checks the bins before it searches: an empty `x` raises too, so
    # the check runs before the loop over the elements, not in it
    bins = np.array([[1.0, 2.0, 3.0], [1.0, 3.0, 2.0]])
    for x in [np.zeros((2, 4)), np.zeros((2, 0))]:
        k = np.zeros(x.shape, np.int64)
        with pytest.raises(ValueError, match="bins must be monotonically"):
            binned_by_rows.py_func(x, bins, k, 2)
        with pytest.raises(ValueError, match="bins must be monotonically increasing or decreasing"):
            binned_by_rows(x, bins, k, 2, opts=cpu_opts({'i': parpy.threads(2)}))
    code = parpy.print_compiled(binned_by_rows, [np.zeros((2, 4)), bins, np.zeros((2, 4), np.int64), 2],
                                cpu_opts({'i': parpy.threads(2)}))
    # (one check of the order a row, before the loop over the row)
    body = code[code.index("static void binned_by_rows_i"):]
    check, search = body.index("parpy_check_index(("), body.index("while (lo < hi)")
    assert check < body.index("for (int64_t j = 0; j < 4;") < search, body


def test_elementwise_digitize_compiles_for_cuda_and_metal():
    # (no list of Python numbers: NumPy's float64 or int64 array, which
    # Metal lacks)
    check_gpu_code(binned_by_rows, lambda b: [np.zeros((N, M), np.float32), np.zeros((N, 5), np.float32),
                                              np.zeros((N, M), np.int64), N],
                   {'i': parpy.threads(N)}, "binned_by_rows")
