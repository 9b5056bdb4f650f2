"""`np.histogram(a, bins, range)` of equal bins in jit code, stored by an
assignment (`h[i, :] = np.histogram(x[i, :], 8, (lo, hi))[0]`, `counts,
edges = np.histogram(x[i, :])`): NumPy's outer edges (its ValueErrors for a
range out of order or not finite), its `np.linspace` edges, and its count
of each element with the corrections against the edges, bit for bit."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, module_from_source, run_both

N = 6
M = 40
B = 7


@parpy.jit
def row_histograms(x, h, e, lo, hi, N):
    parpy.label('i')
    for i in range(N):
        h[i, 0, :] = np.histogram(x[i, :], bins=7, range=(lo, hi))[0]
        e[i, 0, :] = np.histogram(x[i, :], 7, (lo, hi))[1]
        counts, edges = np.histogram(x[i, :], bins=7)
        h[i, 1, :] = counts
        e[i, 1, :] = edges
        h[i, 2, :], e[i, 2, :] = np.histogram(x[i, :], 7, range=(-1, 2))
        h[i, 3, :], e[i, 3, :] = np.histogram(x[i, :], 7, range=(0.25, 0.25))
        h[i, 4, :], e[i, 4, :] = np.histogram(x[i, :], 7, range=(lo, hi + x[i, 0] * 0))


def _data(dtype, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        x = rng.integers(-8, 16, (N, M)) / 8   # values on the edges too
        x[1, :] = rng.normal(size=M)
        x[2, :] = 0.5                          # all the same: widened
        x[3, :5] = [-1.0, 2.0, -1.0 + 3 / 7, 0.25, 1e-300]
        return x.astype(dtype)
    x = rng.integers(0, 12, (N, M))
    x[2, :] = 3
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64, np.int32, np.uint8,
                                   np.int8])
@pytest.mark.parametrize("lo,hi", [(-1.0, 2.0), (0, 10), (0.5, 0.5), (3, 3), (-0.1, 0.7)])
def test_row_histograms_are_numpys(dtype, lo, hi):
    x = _data(dtype, 5)
    args = [x, np.zeros((N, 5, B), np.int64), np.zeros((N, 5, B + 1)), lo, hi, N]
    run_both(row_histograms, args, cpu_opts({'i': parpy.threads(N)}), rtol=0, atol=0)


def _direct(fn, args, want_args, n):
    fn(*args, opts=cpu_opts({'i': parpy.threads(n)}))
    fn.py_func(*want_args)
    for got, want in zip(args, want_args):
        if isinstance(got, np.ndarray):
            assert got.dtype == want.dtype
            assert np.array_equal(got, want, equal_nan=True), (got, want)


@parpy.jit
def histograms_of(x, h, e, lo, hi, N):
    parpy.label('i')
    for i in range(N):
        h[i, 0, :], e[i, 0, :] = np.histogram(x[i, :], 5, (lo, hi))
        h[i, 1, :], e[i, 1, :] = np.histogram(x[i, :], 5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64, np.uint8, np.int16])
def test_random_rows_are_numpys(dtype):
    # thousands of rows: values on the edges, at lo and hi, outside, NaN, inf
    rng = np.random.default_rng(11)
    rows = 2000
    kind = np.dtype(dtype).kind
    for trial in range(3):
        if kind == "f":
            lo, hi = sorted(rng.normal(size=2) * 4)
            x = rng.normal(size=(rows, 12)) * 3
            k = rng.integers(0, 6, (rows, 12))
            x = np.where(k == 0, lo + (hi - lo) * rng.integers(0, 6, (rows, 12)) / 5, x)
            x = np.where(k == 1, np.round(x), x).astype(dtype)
            x[rows // 2:, :] = np.round(x[rows // 2:, :] * 4) / 4
        else:
            info = np.iinfo(dtype)
            x = rng.integers(max(info.min, -1000), min(info.max, 1000), (rows, 12)).astype(dtype)
            lo, hi = sorted(int(v) for v in rng.integers(max(info.min, -1000), min(info.max, 1000), 2))
            x[:20, :] = x[:20, :1]             # one value: widened autodetected range
        if trial == 2 and kind != "f":
            lo, hi = float(lo), float(lo)
        h = np.zeros((rows, 2, 5), np.int64)
        e = np.zeros((rows, 2, 6))
        _direct(histograms_of, [x, h, e, lo, hi, rows],
                [x, h.copy(), e.copy(), lo, hi, rows], rows)


@parpy.jit
def histogram_of_array(x, h, e):
    h[:], e[:] = np.histogram(x, 4)


@parpy.jit
def histogram_of_2d(x, h, e):
    h[:], e[:] = np.histogram(x, 3, (0, 5))


def test_empty_and_2d_inputs_are_numpys():
    for x in [np.zeros(0), np.zeros(0, np.int32), np.array([np.inf, 1.0, 2.0])[1:]]:
        h, e = np.zeros(4, np.int64), np.zeros(5)
        _direct(histogram_of_array, [x, h, e], [x, h.copy(), e.copy()], 1)
    x = np.arange(12).reshape(3, 4) % 6
    h, e = np.zeros(3, np.int64), np.zeros(4)
    _direct(histogram_of_2d, [x, h, e], [x, h.copy(), e.copy()], 1)
    b = np.array([True, False, True, True])
    h, e = np.zeros(4, np.int64), np.zeros(5)
    with pytest.warns(RuntimeWarning):
        _direct(histogram_of_array, [b, h, e], [b, h.copy(), e.copy()], 1)


@pytest.mark.parametrize("x,lo,hi,words", [
    (np.zeros(4), 1.0, 0.0, "max must be larger than min in range parameter."),
    (np.zeros(4), 0.0, np.inf, r"supplied range of \[0.0, inf\] is not finite"),
    (np.zeros(4), np.nan, 1.0, r"supplied range of \[nan, 1.0\] is not finite"),
    (np.array([0.0, np.nan, 1.0, 2.0]), 0.0, 1.0, r"autodetected range of \[nan, nan\] is not finite"),
    (np.array([0.0, np.inf, 1.0, 2.0]), 0.0, 1.0, r"autodetected range of \[0.0, inf\] is not finite"),
    (np.zeros(4), 0.0, 5e-324, "Too many bins for data range. Cannot create 5 finite-sized bins."),
])
def test_bad_ranges_raise_numpys_value_error(x, lo, hi, words):
    h = np.zeros((1, 2, 5), np.int64)
    e = np.zeros((1, 2, 6))
    with pytest.raises(ValueError, match=words):
        histograms_of.py_func(x[None, :], h, e, lo, hi, 1)
    with pytest.raises(ValueError, match=words):
        histograms_of(x[None, :], h, e, lo, hi, 1, opts=cpu_opts({'i': parpy.threads(1)}))


@pytest.mark.parametrize("call,error,words", [
    ("np.histogram(x[i, :], np.zeros(3))[0]", parpy.CompileError,
     "`bins` of `np.histogram` as an array of edges is not supported"),
    ("np.histogram(x[i, :], 0)[0]", parpy.CompileError, "`bins` must be positive, when an integer"),
    ("np.histogram(x[i, :], int(x[i, 0]))[0]", parpy.CompileError,
     "`bins` of `np.histogram` must be an integer known when compiling"),
    ("np.histogram(x[i, :], 4, density=True)[0]", parpy.CompileError,
     "`density` of `np.histogram` is not supported"),
    ("np.histogram(x[i, :], 4, weights=x[i, :3])[0]", parpy.CompileError,
     "weights should have the same shape as a."),
    ("np.histogram(x[i, :], 4)[0] * 2", parpy.CompileError,
     "`np.histogram` is supported as the value of an assignment"),
    ("np.histogram(x[i, :], 4)[2]", parpy.CompileError, "`np.histogram` returns a pair"),
    ("np.histogram(x[i, 0], 4)[0]", parpy.CompileError,
     "`np.histogram` of a number is not supported"),
])
def test_what_histogram_refuses_is_a_located_error(call, error, words, tmp_path):
    mod = module_from_source(
        tmp_path, "histogram_mod",
        "import numpy as np\nimport parpy\n\n"
        "def f(x, y, N):\n"
        "    parpy.label('i')\n"
        "    for i in range(N):\n"
        f"        y[i, :] = {call}\n")
    with pytest.raises(error, match=words) as e:
        parpy.jit(mod.f)(np.zeros((3, 6)), np.zeros((3, 4), np.int64), 3,
                         opts=cpu_opts({'i': parpy.threads(3)}))
    assert "histogram_mod.py:7" in str(e.value)


@parpy.jit
def row_histograms_f32(x, h, e, lo, hi, N):
    parpy.label('i')
    for i in range(N):
        h[i, 0, :], e[i, 0, :] = np.histogram(x[i, :], 7, (lo, hi))
        counts, edges = np.histogram(x[i, :], 7)
        h[i, 1, :] = counts
        e[i, 1, :] = edges


def test_histogram_compiles_for_cuda_and_metal():
    check_gpu_code(row_histograms_f32,
                   lambda b: [np.zeros((N, M), np.float32), np.zeros((N, 2, B), np.int64),
                              np.zeros((N, 2, B + 1), np.float32), np.float32(-1.0),
                              np.float32(2.0), N],
                   {'i': parpy.threads(N)}, "histogram")


@parpy.jit
def default_bins(x, h, e, lo, hi, N):
    parpy.label('i')
    for i in range(N):
        h[i, :], e[i, :] = np.histogram(x[i, :], range=(lo, hi))


@pytest.mark.parametrize("lo,hi", [(np.float64(-0.3), np.float64(0.9)), (np.float32(-0.3), np.float32(0.9)),
                                   (-0.3, 0.9), (np.int64(-1), np.int64(1)), (np.int64(0), np.int64(0))])
def test_float32_data_with_ranges_of_other_types_is_numpys(lo, hi):
    # the edges' type is NumPy's result_type of the range and the data
    x = np.random.default_rng(4).normal(size=(300, 16)).astype(np.float32) / 2
    x[:, :3] = np.float32(lo), np.float32(hi), np.float32(-0.3)
    e = np.zeros((300, 11), np.histogram(x[0], range=(lo, hi))[1].dtype)
    h = np.zeros((300, 10), np.int64)
    _direct(default_bins, [x, h, e, lo, hi, 300], [x, h.copy(), e.copy(), lo, hi, 300], 300)


@parpy.jit
def weighted(x, w, h, lo, hi, N):
    parpy.label('i')
    for i in range(N):
        h[i, :] = np.histogram(x[i, :], 6, (lo, hi), weights=w[i, :])[0]


@parpy.jit
def weighted_2d(x, w, h):
    h[:] = np.histogram(x, 3, weights=w)[0]


@pytest.mark.parametrize("wtype", [np.float64, np.float32, np.int64, np.int8, np.bool_])
def test_weighted_counts_are_numpys(wtype):
    # NumPy's float64 sums of each bin, in the weights' type
    rng = np.random.default_rng(9)
    x = (rng.integers(-8, 16, (200, 30)) / 8).astype(np.float32)
    w = (rng.normal(size=(200, 30)) * 50).astype(wtype)
    h = np.zeros((200, 6), wtype)
    _direct(weighted, [x, w, h, -0.5, 1.0, 200], [x, w, h.copy(), -0.5, 1.0, 200], 200)
    x2, w2 = x[:4, :6].copy(), w[:4, :6].copy()
    h2 = np.zeros(3, wtype)
    _direct(weighted_2d, [x2, w2, h2], [x2, w2, h2.copy()], 1)
