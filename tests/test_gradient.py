"""`np.gradient(f, h, axis=0, edge_order=1)` in jit code, of a 1-D slice
or array (or along axis 0 of a matrix) and a uniform spacing: NumPy's
Python code for uniform spacing, bit for bit (the interior `(f[2:] -
f[:-2]) / (2. * h)`, one-sided ends of first or second order with NumPy's
coefficients, integers made float64 first, float32 kept), also inside
reductions and expressions. Compared with plain Python and with NumPy."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, module_from_source, run_both, same_bits


@parpy.jit
def grads(x, h, g, m, N):
    parpy.label('i')
    for i in range(N):
        g[i, 0, :] = np.gradient(x[i, :])
        g[i, 1, :] = np.gradient(x[i, :], h)
        g[i, 2, :] = np.gradient(x[i, :], edge_order=2)
        g[i, 3, :] = np.gradient(x[i, :], h, edge_order=2)
        g[i, 4, :] = np.gradient(x[i], 0.5, edge_order=1)
        g[i, 5, :] = np.gradient(x[i, :], 3) * 2.0
        g[i, 6, :] = np.gradient(x[i, :] * 0.5 + 1.0, edge_order=2)
        m[i, 0] = np.gradient(x[i, :]).max()
        m[i, 1] = np.sum(np.gradient(x[i, :], h, edge_order=2))
        m[i, 2] = np.gradient(x[i, :], h)[0]


def _grads(x, h):
    out_t = x.dtype if x.dtype.kind == 'f' else np.dtype(np.float64)
    n = x.shape[1]
    opts = cpu_opts({'i': parpy.threads(x.shape[0])})
    g, m = np.zeros((x.shape[0], 7, n), out_t), np.zeros((x.shape[0], 3), out_t)
    got = run_both(grads, [x, h, g, m, x.shape[0]], opts)
    want = np.stack([np.gradient(x, axis=1), np.gradient(x, h, axis=1),
                     np.gradient(x, axis=1, edge_order=2),
                     np.gradient(x, h, axis=1, edge_order=2),
                     np.gradient(x, 0.5, axis=1), np.gradient(x, 3, axis=1) * 2.0,
                     np.gradient(x * 0.5 + 1.0, axis=1, edge_order=2)], 1)
    same_bits(got[2], want.astype(out_t), opts)
    wm = np.stack([np.gradient(x, axis=1).max(1),
                   np.gradient(x, h, axis=1, edge_order=2).sum(1),
                   np.gradient(x, h, axis=1)[:, 0]], 1)
    same_bits(got[3], wm.astype(out_t), opts)


@pytest.mark.parametrize("n", range(3, 10))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64],
                         ids=lambda d: np.dtype(d).name)
def test_gradient_is_numpys(dtype, n):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((4, n)) * 100).astype(dtype)
    _grads(x, 0.3)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16],
                         ids=lambda d: np.dtype(d).name)
def test_gradient_of_nan_and_inf_is_numpys(dtype):
    x = np.array([[np.nan, 1.0, 2.0, 4.0, 7.0], [1.0, np.inf, 3.0, -np.inf, 0.0],
                  [-0.0, 0.0, -0.0, 0.0, -0.0], [1e300, -1e300, 1e300, 5.0, 2.0]], dtype)
    _grads(x, 0.1)
    _grads(x, 2)


@pytest.mark.parametrize("h", [np.float64(0.3), np.int64(3), np.float32(0.1)],
                         ids=lambda h: type(h).__name__)
def test_a_numpy_spacing_computes_in_its_type_and_stores_in_fs(h):
    # (NumPy's `out` keeps `f`'s type: float32 samples over a float64
    # spacing compute in float64, then round; compared with NumPy only,
    # as the plain-Python run refuses the float64 store it checks)
    x = np.random.default_rng(5).standard_normal((3, 6)).astype(np.float32)
    g, m = np.zeros((3, 7, 6), np.float32), np.zeros((3, 3), np.float32)
    opts = cpu_opts({'i': parpy.threads(3)})
    grads(x, h, g, m, 3, opts=opts)
    same_bits(g[:, 1], np.gradient(x, h, axis=1), opts)
    same_bits(g[:, 3], np.gradient(x, h, axis=1, edge_order=2), opts)
    same_bits(m[:, 1], np.gradient(x, h, axis=1, edge_order=2).sum(1), opts)


@parpy.jit
def two_samples(x, h, g, N):
    parpy.label('i')
    for i in range(N):
        g[i, 0, :] = np.gradient(x[i, :])
        g[i, 1, :] = np.gradient(x[i, :], h)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64],
                         ids=lambda d: np.dtype(d).name)
def test_gradient_of_two_samples_has_no_interior(dtype):
    x = np.array([[1, 4], [-3, 2], [7, 7]], dtype)
    out_t = x.dtype if x.dtype.kind == 'f' else np.dtype(np.float64)
    opts = cpu_opts({'i': parpy.threads(3)})
    got = run_both(two_samples, [x, 0.25, np.zeros((3, 2, 2), out_t), 3], opts)[2]
    want = np.stack([np.gradient(x, axis=1), np.gradient(x, 0.25, axis=1)], 1)
    same_bits(got, want.astype(out_t), opts)


@parpy.jit
def of_named(x, g, N):
    parpy.label('i')
    for i in range(N):
        t = np.exp(x[i, :] - 1.0)
        g[i, :] = np.gradient(t, 0.5)


def test_gradient_of_a_named_array_expression_is_numpys():
    x = np.random.default_rng(4).random((3, 7))
    opts = cpu_opts({'i': parpy.threads(3)})
    got = run_both(of_named, [x, np.zeros((3, 7)), 3], opts)[1]
    same_bits(got, np.gradient(np.exp(x - 1.0), 0.5, axis=1), opts)


@parpy.jit
def columns(x, g, k):
    parpy.label('k')
    for k0 in range(k):
        g[:, :] = np.gradient(x, axis=0, edge_order=2)


def test_gradient_along_axis_0_of_a_matrix_is_numpys():
    x = np.random.default_rng(3).random((6, 4))
    opts = cpu_opts({'k': parpy.threads(1)})
    got = run_both(columns, [x, np.zeros((6, 4)), 1], opts)[1]
    same_bits(got, np.gradient(x, axis=0, edge_order=2), opts)


@pytest.mark.parametrize("call,words,at,error", [
    ("np.gradient(x[i, :2], edge_order=2)", "Shape of array too small to calculate a numerical gradient",
     "2 element(s) along axis 0", parpy.CompileValueError),
    ("np.gradient(x[i, :1])", "Shape of array too small to calculate a numerical gradient",
     "1 element(s) along axis 0", parpy.CompileValueError),
    ("np.gradient(x[i, :], edge_order=3)", "'edge_order' greater than 2 not supported",
     "edge order 3", parpy.CompileValueError),
    ("np.gradient(x[i, :], t[i, :])", "takes a uniform spacing", "sample points",
     parpy.CompileError),
    ("np.gradient(x[i, :], 1.0, 2.0)", "invalid number of arguments", "2 spacings for 1 axis",
     parpy.CompileTypeError),
    ("np.gradient(x)", "gives a tuple of arrays, one per axis", "2 dimensions",
     parpy.CompileError),
    ("np.gradient(x, axis=1)", "works along axis 0", "axis 1", parpy.CompileError),
    ("np.gradient(x[i, :] > 0.0)", "numpy boolean subtract", "an array of bools",
     parpy.CompileTypeError),
    ("np.gradient(x[i, :], spacing=2.0)", "has no parameter `spacing`", "unknown keyword",
     parpy.CompileError),
])
def test_what_gradient_refuses_is_a_located_error(call, words, at, error, tmp_path):
    mod = module_from_source(
        tmp_path, "gradient_mod",
        "import numpy as np\nimport parpy\n\n"
        "def f(x, t, y, N):\n"
        "    parpy.label('i')\n"
        "    for i in range(N):\n"
        f"        y[i, :] = {call}[0]\n")
    with pytest.raises(error, match=words) as e:
        parpy.jit(mod.f)(np.zeros((3, 4)), np.zeros((3, 4)), np.zeros((3, 4)), 3,
                         opts=cpu_opts({'i': parpy.threads(3)}))
    assert "gradient_mod.py:7" in str(e.value)
    assert at in str(e.value)


@parpy.jit
def grads32(x, g, m, N):
    parpy.label('i')
    for i in range(N):
        g[i, 0, :] = np.gradient(x[i, :], 0.5)
        g[i, 1, :] = np.gradient(x[i, :], edge_order=2)
        m[i] = np.gradient(x[i, :]).max()


def test_gradient_compiles_for_cuda_and_metal():
    def args(backend):
        return [np.zeros((4, 7), np.float32), np.zeros((4, 2, 7), np.float32),
                np.zeros(4, np.float32), 4]
    check_gpu_code(grads32, args, {'i': parpy.threads(4)}, "gradient")
