"""`np.<ufunc>.reduce` of the binary ufuncs that are no NumPy reduction of
their own (`np.subtract.reduce`, `np.logaddexp.reduce`, `np.bitwise_or`,
`np.gcd`, ...): NumPy's left fold `r = op(r, a[k])` from `a[0]`, in order,
each step the ufunc's elementwise rule, in the type of `op(a[0], a[0])`
(`np.divide.reduce` of integers is a float64); their `accumulate`, the
running fold, assigned to a slice. Compared bit for bit with the
undecorated function run on NumPy."""

import functools
import pathlib
import tempfile

import numpy as np
import pytest

import parpy
from conftest import bits_of, check_gpu_code, cpu_opts, module_from_source, run_both

# (ufunc, the dtypes NumPy has a loop for that the test reduces)
FLOATS = ["float16", "float32", "float64"]
INTS = ["int8", "uint8", "int32", "int64"]
UFUNCS = {
    "subtract": INTS + ["float32", "float64"],
    "divide": ["bool", "int8", "int64", "float32", "float64"],
    "floor_divide": ["bool"] + INTS + FLOATS,
    "remainder": INTS + FLOATS,
    "power": ["bool"] + INTS + ["float16"],
    "float_power": ["int32"] + FLOATS,
    "fmod": INTS + FLOATS,
    "bitwise_and": ["bool"] + INTS,
    "bitwise_or": ["bool"] + INTS,
    "bitwise_xor": ["bool"] + INTS,
    "left_shift": ["uint8", "int32"],
    "right_shift": INTS,
    "logical_xor": ["bool", "int32"] + FLOATS,
    "logaddexp": ["bool", "int8", "int32"] + FLOATS,
    "logaddexp2": ["int64"] + FLOATS,
    "hypot": ["uint8", "int32"] + FLOATS,
    "arctan2": ["int8", "float16"],
    "copysign": ["int32"] + FLOATS,
    "heaviside": FLOATS,
    "nextafter": ["float32", "float64"],
    "gcd": INTS,
    "lcm": ["int32", "int64"],
    "equal": ["bool"],
    "less": ["bool"],
}

_SOURCE = "import numpy as np\nimport parpy\n" + "".join(f"""

@parpy.jit
def fold_{u}(x, y, cols, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.{u}.reduce(x[i, :])
    parpy.label('k')
    for k in range(1):
        cols[:] = np.{u}.reduce(x)


@parpy.jit
def scan_{u}(x, rows, down, N):
    parpy.label('i')
    for i in range(N):
        rows[i, :] = np.{u}.accumulate(x[i, :])
    parpy.label('k')
    for k in range(1):
        down[:, :] = np.{u}.accumulate(x)
""" for u in UFUNCS)


@functools.cache
def _folds():
    # (a plain function, not a fixture: tests/test_cuda_programs.py
    # re-collects the tests of this module in its own)
    return module_from_source(pathlib.Path(tempfile.mkdtemp()), "ufunc_folds", _SOURCE)


def _operand(ufunc, dtype, seed=1):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == bool:
        x = rng.random((4, 6)) < 0.6
        if ufunc in ("divide", "floor_divide"):
            x[:, 1:] = True  # (no division by zero)
        return x
    if dtype.kind in "iu":
        lo = 1 if ufunc in ("power", "lcm", "floor_divide", "remainder", "fmod", "divide") else -5
        if dtype.kind == "u" or ufunc in ("left_shift", "right_shift", "hypot"):
            lo = max(lo, 0)
        hi = 3 if ufunc in ("power", "left_shift", "right_shift") else 9
        return rng.integers(lo, hi, (4, 6)).astype(dtype)
    x = (rng.random((4, 6)) * 3 - 1).astype(dtype)
    if ufunc not in ("power", "float_power"):
        x[0, 2] = -0.0
        x[3, 3] = np.nan
    else:
        x = np.abs(x) + dtype.type(0.5)
    return x


def _case(ufunc, dtype):
    x = _operand(ufunc, dtype)
    rt = getattr(np, ufunc).reduce(x[0]).dtype
    return x, np.zeros(4, rt), np.zeros(6, rt)


@pytest.mark.parametrize("ufunc,dtype", [(u, d) for u, ds in UFUNCS.items() for d in ds])
def test_reduce_is_numpys_left_fold(ufunc, dtype):
    fn = getattr(_folds(), f"fold_{ufunc}")
    x, y, cols = _case(ufunc, dtype)
    opts = cpu_opts({'i': parpy.threads(4), 'k': parpy.threads(1)})
    with np.errstate(all="ignore"):
        bits_of(run_both, fn, [x, y, cols, 4], 1, opts)
        bits_of(run_both, fn, [x, y, cols, 4], 2, opts)


# (NumPy's float16 subtract and divide accumulate round each step, a plain
# fold, unlike their reduce)
SCANS = [(u, d) for u, ds in UFUNCS.items() for d in ds] \
    + [("subtract", "float16"), ("divide", "float16")]


@pytest.mark.parametrize("ufunc,dtype", SCANS)
def test_accumulate_is_numpys_running_fold(ufunc, dtype):
    fn = getattr(_folds(), f"scan_{ufunc}")
    x = _operand(ufunc, dtype)
    rt = getattr(np, ufunc).accumulate(x[0]).dtype
    args = [x, np.zeros((4, 6), rt), np.zeros((4, 6), rt), 4]
    opts = cpu_opts({'i': parpy.threads(4), 'k': parpy.threads(1)})
    with np.errstate(all="ignore"):
        bits_of(run_both, fn, args, 1, opts)
        bits_of(run_both, fn, args, 2, opts)


def test_a_running_fold_read_in_an_expression_is_made_first():
    @parpy.jit
    def loose(x, y):
        parpy.label('i')
        for i in range(4):
            y[i] = np.logaddexp.accumulate(x)[i] * 2.0

    x = np.array([1.0, -3.0, 2.5, 0.25])
    bits_of(run_both, loose, [x, np.zeros(4)], 1, cpu_opts({'i': parpy.threads(4)}))


def test_the_fold_is_in_order():
    # (a pairwise or reordered subtraction gives another answer)
    @parpy.jit
    def fold(x, y):
        parpy.label('i')
        for i in range(1):
            y[i] = np.subtract.reduce(x[:])

    x = np.array([1.0, 1e16, -1e16, 3.0, 0.25])
    y = run_both(fold, [x, np.zeros(1)], cpu_opts({'i': parpy.threads(1)}), rtol=0, atol=0)[1]
    assert y[0] == np.subtract.reduce(x)


@parpy.jit
def along(x, rows, kept, N):
    parpy.label('i')
    for i in range(N):
        rows[i] = np.logaddexp.reduce(x[i, :], axis=0)
    parpy.label('k')
    for k in range(1):
        kept[:, :] = np.hypot.reduce(x, axis=1, keepdims=True)


def test_axis_and_keepdims():
    x = np.random.default_rng(3).random((5, 7)).astype(np.float32)
    opts = cpu_opts({'i': parpy.threads(5), 'k': parpy.threads(1)})
    bits_of(run_both, along, [x, np.zeros(5, np.float32), np.zeros((5, 1), np.float32), 5],
            1, opts)
    bits_of(run_both, along, [x, np.zeros(5, np.float32), np.zeros((5, 1), np.float32), 5],
            2, opts)


@parpy.jit
def empties(x, y):
    parpy.label('i')
    for i in range(1):
        y[0] = np.bitwise_or.reduce(x[1:1])
        y[1] = np.bitwise_and.reduce(x[2:2])
        y[2] = np.gcd.reduce(x[:0])


def test_an_empty_reduction_is_the_identity():
    x = np.arange(5, dtype=np.uint8)
    out = run_both(empties, [x, np.ones(3, np.uint8)], cpu_opts({'i': parpy.threads(1)}),
                   rtol=0, atol=0)[1]
    assert list(out) == [0, 255, 0]


def test_an_empty_reduction_without_identity_raises_numpys_error():
    @parpy.jit
    def none(x, y):
        parpy.label('i')
        for i in range(1):
            y[i] = np.subtract.reduce(x[3:3])

    x = np.ones(4)
    with pytest.raises(ValueError, match="zero-size array to reduction operation subtract which has no identity"):
        none.py_func(x, np.zeros(1))
    with pytest.raises(ValueError, match="zero-size array to reduction operation subtract which has no identity"):
        none(x, np.zeros(1), opts=cpu_opts({'i': parpy.threads(1)}))


def test_a_labelled_fold_is_refused():
    @parpy.jit
    def labelled(x, y):
        parpy.label('i')
        for i in range(2):
            parpy.label('j')
            y[i] = np.subtract.reduce(x[i, :])

    with pytest.raises(parpy.CompileError, match="runs sequentially and takes no label"):
        labelled(np.ones((2, 4)), np.zeros(2),
                 opts=cpu_opts({'i': parpy.threads(2), 'j': parpy.threads(4)}))


def test_a_labelled_scan_of_a_row_is_refused():
    @parpy.jit
    def labelled(x, y):
        parpy.label('j')
        y[:] = np.logaddexp.accumulate(x[:])

    with pytest.raises(parpy.CompileError, match="runs in order and takes no label"):
        labelled(np.ones(4), np.zeros(4), opts=cpu_opts({'j': parpy.threads(4)}))


def test_a_comparison_of_numbers_has_no_fold():
    @parpy.jit
    def compare(x, y):
        parpy.label('i')
        for i in range(2):
            y[i] = np.less.reduce(x[i, :])

    with pytest.raises(TypeError):
        np.less.reduce(np.ones(3))
    with pytest.raises(parpy.CompileError, match="NumPy has no loop that folds them"):
        compare(np.ones((2, 4)), np.zeros(2, bool), opts=cpu_opts({'i': parpy.threads(2)}))


def test_several_axes_of_a_non_reorderable_ufunc_are_refused():
    @parpy.jit
    def both(x, y):
        parpy.label('i')
        for i in range(1):
            y[i] = np.subtract.reduce(x, axis=(0, 1))

    with pytest.raises(ValueError, match="not reorderable"):
        both.py_func(np.ones((2, 3)), np.zeros(1))
    with pytest.raises(parpy.CompileError, match="several axes at once"):
        both(np.ones((2, 3)), np.zeros(1), opts=cpu_opts({'i': parpy.threads(1)}))


def test_several_axes_of_ints_fold_in_order():
    @parpy.jit
    def whole(x, y):
        parpy.label('i')
        for i in range(1):
            y[0] = np.bitwise_xor.reduce(x, axis=(1, 0))
            y[1] = np.gcd.reduce(x, axis=(0, 1))

    x = np.array([[12, 18, 30], [6, 42, 54]], np.int32)
    bits_of(run_both, whole, [x, np.zeros(2, np.int32)], 1, cpu_opts({'i': parpy.threads(1)}))


@parpy.jit
def gpu_folds(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.heaviside.reduce(x[i, :]) + np.subtract.reduce(x[i, :]) \
            + np.copysign.reduce(x[i, :])
        y[i, 1:] = np.subtract.accumulate(x[i, 1:])


def test_gpu_code_of_folds_compiles():
    check_gpu_code(gpu_folds, lambda b: [np.ones((4, 8), np.float32), np.zeros((4, 8), np.float32), 4],
                   {'i': parpy.threads(4)}, "gpu_folds")


@pytest.mark.parametrize("ufunc,dtype,method", [
    ("subtract", np.float16, "reduce"), ("divide", np.float16, "reduce"),
    ("power", np.float64, "reduce"), ("arctan2", np.float32, "reduce"),
    ("power", np.float32, "accumulate"), ("arctan2", np.float64, "accumulate")])
def test_folds_that_are_no_plain_fold_in_numpy_are_refused(tmp_path, ufunc, dtype, method):
    # (NumPy's float16 subtract and divide fold in float32 along a run of
    # memory; its float power and arctan2 reduce through SIMD loops whose
    # answer depends on the machine: on AVX-512 `np.arctan2.reduce(x)` of a
    # short row is `np.arctan2(x[0], x[-1])`)
    target = "y[i]" if method == "reduce" else "y[i, :]"
    mod = module_from_source(tmp_path, f"unlike_{ufunc}_{method}", f"""import numpy as np
import parpy


@parpy.jit
def f(x, y):
    parpy.label('i')
    for i in range(2):
        {target} = np.{ufunc}.{method}(x[i, :])
""")
    y = np.zeros(2 if method == "reduce" else (2, 3), dtype)
    with pytest.raises(parpy.CompileError, match="is not supported"):
        mod.f(np.ones((2, 3), dtype), y, opts=cpu_opts({'i': parpy.threads(2)}))
