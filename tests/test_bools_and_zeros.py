"""Python bools given to NumPy's and Python's number functions, and the sign
of a zero NumPy's order statistics and products give, each compared bit for
bit with the function run as plain Python on NumPy values:
- `round(s, d)` of a Python bool is the int's (`round(True, 1)` is 1);
  Python's `round` of a NumPy bool and NumPy's `np.round` of a bool to
  decimals raise TypeError (located compile errors);
- NumPy's float function of a Python bool alone computes in the bool's
  float16 loop (`np.exp(True)` is float16 2.719), `np.abs(True)` is a NumPy
  bool;
- `np.median` is never -0.0 (NumPy's mean adds from 0.0);
- `np.dot` / `np.inner` of one-element float vectors is their product
  (-0.0 kept), `matmul` / `vdot` add it to 0.0;
- `np.argmax` / `np.argmin` of an empty slice raise ValueError when they
  run, as `np.max` does;
- `a if s else b` with `s` a number the call is specialized on lowers only
  the chosen side."""

import importlib.util
import itertools
import shutil
import warnings

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, scratch_dir

_DIR = scratch_dir("parpy-bools-zeros-")
_COUNT = itertools.count()


def kernel(expr):
    """A jit function `f(x, s, y, N)` whose loop stores `expr` into `y[i]`,
    written to a module file (parpy reads the source)."""
    path = _DIR / f"k{next(_COUNT)}.py"
    path.write_text(
        "import math\nimport numpy as np\nimport parpy\n\n"
        "def f(x, s, y, N):\n"
        "    parpy.label('i')\n"
        "    for i in range(N):\n"
        f"        y[i] = {expr}\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.f


def cuda_emu_opts(spec):
    opts = cpu_opts(spec)
    opts.backend = parpy.CompileBackend.Cuda
    return opts


def same(expr, x, s, y, emulated=False):
    """`y[i] = expr` compiled (on Cpu, or on the emulated Cuda backend)
    and plain: every array equal, bit for bit (the sign of a zero too, not
    of a NaN)."""
    fn = kernel(expr)
    n = len(y)
    ref, got = y.copy(), y.copy()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        fn(x.copy(), s, ref, n)
    spec = {'i': parpy.threads(2)}
    if emulated:
        from parpy import _cuda_emu
        with _cuda_emu.installed(0):
            parpy.jit(fn)(x.copy(), s, got, n, opts=cuda_emu_opts(spec))
    else:
        parpy.jit(fn)(x.copy(), s, got, n, opts=cpu_opts(spec))
    assert got.dtype == ref.dtype
    assert np.array_equal(got, ref, equal_nan=True), (expr, got, ref)
    if ref.dtype.kind == 'f':
        # (a NaN's sign is no arithmetic's promise)
        real = ~np.isnan(ref)
        assert np.array_equal(np.signbit(got[real]), np.signbit(ref[real])), (expr, got, ref)
    return got


def compile_error(expr, x, s, y):
    fn = parpy.jit(kernel(expr))
    with pytest.raises(parpy.CompileError) as e:
        fn(x, s, y, len(y), opts=cpu_opts({'i': parpy.threads(2)}))
    return e.value


BOOLS = np.array([False, True])


@pytest.mark.parametrize("expr", ["round(s, 1) + x[i]", "round(s, 0) + x[i]",
                                  "round(s, -1) + x[i]", "round(s) + x[i]"])
@pytest.mark.parametrize("s", [True, False])
def test_round_of_a_python_bool_to_decimals_is_the_ints(expr, s):
    # (round(True, 1) is the int 1: a bool array plus it counts)
    got = same(expr, BOOLS, s, np.zeros(2, np.int64))
    if expr.startswith("round(s, 1)") and s:
        assert list(got) == [1, 2]


@pytest.mark.parametrize("expr", ["round(x[i] > 0)", "round(x[i] > 0, 1)", "round(s, 1)",
                                  "round(s)"])
def test_pythons_round_of_a_numpy_bool_is_a_type_error(expr):
    # Python: TypeError: type numpy.bool doesn't define __round__ method
    with pytest.raises(TypeError, match="__round__"):
        kernel(expr)(np.ones(2), np.True_, np.zeros(2, np.int64), 2)
    e = compile_error(expr, np.ones(2), np.True_, np.zeros(2, np.int64))
    assert isinstance(e, TypeError)
    assert "numpy.bool doesn't define __round__" in str(e)
    assert "a NumPy bool" in str(e)


@pytest.mark.parametrize("d", [1, -1, 2])
def test_numpys_round_of_a_bool_to_decimals_is_a_type_error(d):
    expr = f"np.round(x[i] > 0, {d})"
    with pytest.raises(TypeError):
        kernel(expr)(np.ones(2), True, np.zeros(2), 2)
    e = compile_error(expr, np.ones(2), True, np.zeros(2))
    assert isinstance(e, TypeError)
    assert "UFuncTypeError" in str(e) and "k" in str(e)


@pytest.mark.parametrize("expr", ["np.round(x[i])", "np.round(x[i], 0)", "np.round(s)",
                                  "np.round(s, 0)", "np.around(x[i] & s)"])
def test_numpys_round_of_a_bool_is_float16(expr):
    same(expr, BOOLS, True, np.zeros(2, np.float16))


@pytest.mark.parametrize("expr,out", [
    ("np.exp(True) / x[i]", np.float64),
    ("np.exp(s) / x[i]", np.float64),
    ("np.sqrt(s) + x[i]", np.float64),
    ("np.exp(s)", np.float16),
    ("np.log1p(s)", np.float32),
    ("np.sin(True)", np.float16),
    ("np.sqrt(2) + x[i]", np.float64),
    ("np.sqrt(2.0) * x[i]", np.float64),
    ("np.arctan2(s, True) + x[i]", np.float64),
    ("np.hypot(s, 3) + x[i]", np.float64),
    ("np.abs(s) + x[i]", np.float64),
])
def test_a_numpy_function_of_a_python_bool_is_the_numpy_bools(expr, out):
    # NumPy makes Python numbers alone arrays first: np.exp(True) is
    # float16 2.719
    same(expr, np.array([3.0, 7.0]), True, np.zeros(2, out))


def test_numpys_abs_of_a_python_bool_is_a_numpy_bool():
    # np.True_ + int8 is int8 (wraps), the int 1 + int8 would be int64
    same("np.abs(s) + x[i]", np.array([127, 5], np.int8), True, np.zeros(2, np.int64))
    same("abs(s) + x[i]", np.array([127, 5], np.int8), True, np.zeros(2, np.int64))


def _zero_rows(n, dtype):
    """Every row of n zeros of both signs, then rows with a 1.0, a -1.0
    and a NaN among -0.0s."""
    rows = [list(r) for r in itertools.product([0.0, -0.0], repeat=n)]
    rows += [[-0.0] * (n - 1) + [v] for v in (1.0, -1.0, np.nan)]
    return np.array(rows, dtype)


@pytest.mark.parametrize("n", range(1, 7))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_the_median_of_zeros_is_numpys(n, dtype):
    x = _zero_rows(n, dtype)
    same("np.median(x[i, :])", x, True, np.full(len(x), 7, dtype))


@pytest.mark.skipif(shutil.which("c++") is None, reason="needs a C++ compiler")
def test_the_median_of_zeros_is_numpys_on_the_emulated_gpu():
    x = _zero_rows(3, np.float64)
    same("np.median(x[i, :])", x, True, np.full(len(x), 7.0), emulated=True)


DOTS = ["np.dot(x[i, :], x[i, :] * -1.0)", "np.inner(x[i, :], x[i, :] * -1.0)",
        "np.vdot(x[i, :], x[i, :] * -1.0)", "x[i, :] @ (x[i, :] * -1.0)",
        "np.matmul(x[i, :], x[i, :] * -1.0)", "x[i, :].dot(-x[i, :])"]


@pytest.mark.parametrize("expr", DOTS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("m", [1, 2, 3])
def test_the_dot_of_one_element_vectors_is_their_product(expr, dtype, m):
    # NumPy's dot / inner of one-element float32 / float64 vectors is the
    # product (-0.0 here), its matmul and vdot, and longer ones, 0.0
    x = np.array([[0.0] * m, [-0.0] * m, [2.0] * m, [np.nan] * m], dtype)
    same(expr, x, True, np.full(len(x), 7, dtype))


@pytest.mark.skipif(shutil.which("c++") is None, reason="needs a C++ compiler")
def test_the_dot_of_one_element_vectors_is_their_product_on_the_emulated_gpu():
    x = np.array([[0.0], [-0.0]])
    for expr in DOTS[:2] + DOTS[3:4]:
        same(expr, x, True, np.full(2, 7.0), emulated=True)


@pytest.mark.parametrize("call", ["np.argmax", "np.argmin"])
def test_the_argmax_of_an_empty_slice_raises_value_error_as_max_does(call):
    fn = kernel(f"{call}(x[i, 1:1])")
    with pytest.raises(ValueError) as want:
        fn(np.zeros((2, 3)), True, np.zeros(2, np.int64), 2)
    with pytest.raises(ValueError) as got:
        parpy.jit(fn)(np.zeros((2, 3)), True, np.zeros(2, np.int64), 2,
                      opts=cpu_opts({'i': parpy.threads(2)}))
    assert str(want.value) in str(got.value)
    assert not isinstance(got.value, parpy.CompileError)


@pytest.mark.parametrize("s", [2.5, -3, 3, np.float32(2.5), np.int8(-3), np.float32(np.nan),
                               float('inf'), True, np.True_])
@pytest.mark.parametrize("expr", ["x[i] if s else -x[i]", "-x[i] if not s else x[i]"])
def test_a_known_condition_lowers_only_the_chosen_side(expr, s):
    # (`-x[i]` of a bool is a TypeError Python never meets here)
    same(expr, BOOLS, s, np.zeros(2, np.bool_))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                                   np.int64, np.uint64, np.bool_])
@pytest.mark.parametrize("expr", ["np.reciprocal(x[i])", "np.reciprocal(s)"])
def test_np_reciprocal_of_an_integer_is_numpys(dtype, expr):
    # NumPy's integer loop: (T) (1.0 / x): 1 and -1 stay, others are 0, and
    # 0 is the cast of an infinity (the least int32 / int64, else 0); a
    # bool's is int8's
    info = np.iinfo(dtype) if dtype != np.bool_ else None
    if info is None:
        x = np.array([False, True])
    elif info.min < 0:
        x = np.array([0, 1, -1, 2, -2, 3, info.min, info.max], dtype)
    else:
        x = np.array([0, 1, 2, 3, info.max], dtype)
    out = np.reciprocal(x).dtype
    for s in (x[0], x[1], x[-1]):
        same(expr, x, s, np.zeros(len(x), out))
