"""NumPy's ufuncs called by name inside jit code (`np.add(a, b)`,
`np.logical_and`, `np.greater`, `np.rint`, `np.deg2rad`, `np.signbit`,
`np.logaddexp`, ...): each is the expression it stands for, so its answer is
NumPy's to the last bit, for every dtype NumPy takes, and a dtype NumPy
refuses is a TypeError. The kernels are written out from one template per
ufunc into a module of their own (parpy reads a function's source)."""

import functools
import importlib.util
import textwrap

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, scratch_dir

UNARY = ['negative', 'positive', 'invert', 'bitwise_not', 'logical_not', 'square', 'rint',
         'reciprocal', 'deg2rad', 'radians', 'rad2deg', 'degrees', 'signbit', 'fix', 'sinc']
BINARY = ['add', 'subtract', 'multiply', 'divide', 'true_divide', 'floor_divide',
          'remainder', 'mod', 'bitwise_and', 'bitwise_or', 'bitwise_xor', 'left_shift',
          'right_shift', 'equal', 'not_equal', 'less', 'less_equal', 'greater',
          'greater_equal', 'logical_and', 'logical_or', 'logical_xor', 'logaddexp',
          'logaddexp2', 'fmod', 'power', 'heaviside', 'float_power']
N, M = 4, 16

_TEMPLATE = '''
import numpy as np
import parpy

@parpy.jit
def un_{u}(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.{u}(x[i, :])

@parpy.jit
def bin_{u}(a, b, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.{u}(a[i, :], b[i, :])

@parpy.jit
def scalar_{u}(a, y, N):
    parpy.label('i')
    for i in range(N):
        for j in range(a.shape[1]):
            y[i, j] = np.{u}(a[i, j], 3)
'''


@functools.cache
def kernels():
    """The module of the kernels, written once per process (a fixture would
    not reach tests/test_cuda_programs.py's re-collection of these tests)."""
    path = scratch_dir("parpy-ufuncs-") / "ufunc_kernels.py"
    path.write_text("".join(textwrap.dedent(_TEMPLATE).format(u=u) for u in UNARY + BINARY))
    spec = importlib.util.spec_from_file_location("ufunc_kernels", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def values(dtype, seed):
    """N x M values of `dtype` with the edge cases: zeros of both signs,
    halves (rounding), infinities, NaN, the integer limits."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, (N, M)).astype(bool)
    if dt.kind == 'f':
        special = [0.0, -0.0, 0.5, -0.5, 1.5, -2.5, np.inf, -np.inf, np.nan, 1.0, -1.0, 3.0]
        v = np.concatenate([special, rng.standard_normal(N * M - len(special)) * 100])
        return rng.permutation(v).reshape(N, M).astype(dt)
    info = np.iinfo(dt)
    special = [0, 1, -1, 2, -3, 7, info.min, info.max] if dt.kind == 'i' else [0, 1, 2, 7, info.max]
    v = np.concatenate([special, rng.integers(info.min // 2, info.max // 2, N * M - len(special))])
    return rng.permutation(v.astype(dt)).reshape(N, M)


def same_bits(got, want):
    """Equal values, the signs of zeros and NaN positions included."""
    assert got.dtype == want.dtype
    nan = np.isnan(want) if want.dtype.kind == 'f' else np.zeros(want.shape, bool)
    if want.dtype.kind == 'f':
        assert np.array_equal(np.isnan(got), nan)
        assert np.array_equal(np.signbit(got[~nan]), np.signbit(want[~nan]))
    assert np.array_equal(got[~nan], want[~nan])


def call(fn, args, opts):
    """Runs `fn(*args, opts=opts)`; returns whether it ran (the Cuda dry run
    of test_cuda_programs only compiles)."""
    fn(*args, opts=opts)
    return True


def check(u, got, want, opts):
    """NumPy's bits; on Cuda hardware `exp` and `log1p` are the device's
    (within ulps of the C library's), and NumPy's `power` and `sin` are its
    own vector code (SVML where the CPU has AVX-512), within an ulp of the
    C library's `pow` and `sin` everywhere."""
    transcendental = u in ('logaddexp', 'logaddexp2', 'power', 'float_power', 'sinc') \
        and want.dtype.kind == 'f'
    if transcendental and (u in ('power', 'float_power', 'sinc')
                           or opts.backend == parpy.CompileBackend.Cuda):
        np.testing.assert_allclose(got, want, rtol=4 * np.finfo(want.dtype).eps)
    else:
        same_bits(got, want)


def numpy_answer(f, *args):
    with np.errstate(all='ignore'):
        try:
            return f(*args)
        except TypeError:
            return None


DTYPES = [np.float64, np.float32, np.float16, np.int64, np.int32, np.int8, np.uint8,
          np.uint64, np.bool_]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("u", UNARY)
def test_unary_ufunc_is_numpy(u, dtype):
    x = values(dtype, 1)
    want = numpy_answer(getattr(np, u), x)
    fn = getattr(kernels(), f"un_{u}")
    opts = cpu_opts({'i': parpy.threads(N)})
    if want is None:
        with pytest.raises(TypeError):
            call(fn, [x, np.zeros((N, M)), N], opts)
        return
    y = np.zeros(want.shape, want.dtype)
    if call(fn, [x, y, N], opts):
        check(u, y, want, opts)


PAIRS = [(t, t) for t in DTYPES] + [
    (np.float32, np.int64), (np.int8, np.uint8), (np.uint64, np.int64), (np.int32, np.float16),
    (np.bool_, np.int32), (np.float32, np.float64), (np.uint8, np.int64)]


@pytest.mark.parametrize("ta,tb", PAIRS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("u", BINARY)
def test_binary_ufunc_is_numpy(u, ta, tb):
    a, b = values(ta, 2), values(tb, 3)
    if np.dtype(ta).kind in 'iub' and np.dtype(tb).kind in 'iu' and 'shift' in u:
        b = (b % 70).astype(tb)  # counts at and past the width
    b[0, :4] = a[0, :4].astype(tb)  # equal operands (logaddexp's own case)
    if u == 'power' and np.dtype(tb).kind in 'iub':
        b = (b % 5).astype(tb)  # (NumPy refuses negative integer powers)
    want = numpy_answer(getattr(np, u), a, b)
    fn = getattr(kernels(), f"bin_{u}")
    opts = cpu_opts({'i': parpy.threads(N)})
    if want is None:
        with pytest.raises(TypeError):
            call(fn, [a, b, np.zeros((N, M)), N], opts)
        return
    y = np.zeros(want.shape, want.dtype)
    if call(fn, [a, b, y, N], opts):
        check(u, y, want, opts)


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.uint8, np.bool_],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("u", ['add', 'multiply', 'floor_divide', 'greater', 'logaddexp',
                               'logical_xor', 'left_shift'])
def test_a_python_number_adapts_to_the_array(u, dtype):
    # NEP 50: the 3 takes the element's type (int8 * 3 wraps in int8)
    a = values(dtype, 4)
    want = numpy_answer(lambda v: getattr(np, u)(v, 3), a)
    fn = getattr(kernels(), f"scalar_{u}")
    opts = cpu_opts({'i': parpy.threads(N)})
    if want is None:
        with pytest.raises(TypeError):
            call(fn, [a, np.zeros((N, M)), N], opts)
        return
    y = np.zeros(want.shape, want.dtype)
    if call(fn, [a, y, N], opts):
        check(u, y, want, opts)


@parpy.jit
def nan_to_num_kinds(x, k, y, z, w, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.nan_to_num(x[i, :])
        z[i, :] = np.nan_to_num(x[i, :], nan=-1.0, posinf=1e30, neginf=-7)
        w[i, :] = np.nan_to_num(k[i, :], copy=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16],
                         ids=lambda d: np.dtype(d).name)
def test_nan_to_num_is_numpys(dtype):
    x = values(dtype, 8)
    k = values(np.int16, 9)
    ys = [np.zeros((N, M), dtype), np.zeros((N, M), dtype), np.zeros((N, M), np.int16)]
    if call(nan_to_num_kinds, [x, k, *ys, N], cpu_opts({'i': parpy.threads(N)})):
        with np.errstate(all='ignore'):
            same_bits(ys[0], np.nan_to_num(x))
            same_bits(ys[1], np.nan_to_num(x, nan=-1.0, posinf=1e30, neginf=-7))
        same_bits(ys[2], k)


@parpy.jit
def isclose_kinds(a, b, k, y, z, w, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.isclose(a[i, :], b[i, :])
        z[i, :] = np.isclose(a[i, :], b[i, :] * 1.000001, rtol=1e-3, atol=0.5, equal_nan=True)
        w[i, :] = np.isclose(k[i, :], a[i, :]) | np.isclose(3, k[i, :])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16],
                         ids=lambda d: np.dtype(d).name)
def test_isclose_is_numpys(dtype):
    a = values(dtype, 10)
    b = a.copy()
    b[:, ::3] += np.asarray(1e-6, dtype)
    b[:, 1::3] = values(dtype, 11)[:, 1::3]
    k = values(np.int8, 12)
    ys = [np.zeros((N, M), bool) for _ in range(3)]
    if call(isclose_kinds, [a, b, k, *ys, N], cpu_opts({'i': parpy.threads(N)})):
        with np.errstate(all='ignore'):
            same_bits(ys[0], np.isclose(a, b))
            same_bits(ys[1], np.isclose(a, b * 1.000001, rtol=1e-3, atol=0.5, equal_nan=True))
            same_bits(ys[2], np.isclose(k, a) | np.isclose(3, k))


@parpy.jit
def allclose_kinds(a, b, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.allclose(a[i, :], b[i, :])
        y[i, 1] = np.allclose(a[i, :], b[i, :], rtol=0.0, atol=1e-3)
        y[i, 2] = np.allclose(a[i, :], b[i, :], equal_nan=True)
        y[i, 3] = np.allclose(a[i, 0], b[i, 0]) + 1
        if np.allclose(a[i, 1:4], 0.5, atol=0.6):
            y[i, 4] = 7


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=lambda d: np.dtype(d).name)
def test_allclose_is_numpys(dtype):
    # (was "cannot call `np.allclose`")
    rng = np.random.default_rng(13)
    a = rng.random((6, 9)).astype(dtype)
    a[2, 3] = np.nan
    b = (a + rng.normal(0, 1e-6, a.shape)).astype(dtype)
    b[4, 5] += 0.01
    y = np.zeros((6, 5), np.int64)
    if call(allclose_kinds, [a, b, y, 6], cpu_opts({'i': parpy.threads(6)})):
        want = np.zeros_like(y)
        for i in range(6):
            want[i, :4] = [np.allclose(a[i], b[i]), np.allclose(a[i], b[i], rtol=0.0, atol=1e-3),
                           np.allclose(a[i], b[i], equal_nan=True), np.allclose(a[i, 0], b[i, 0]) + 1]
            want[i, 4] = 7 if np.allclose(a[i, 1:4], 0.5, atol=0.6) else 0
        same_bits(y, want)


@parpy.jit
def python_numbers_alone(y, z):
    parpy.label('i')
    for i in range(1):
        # numbers alone become NumPy values: `np.invert(True)` is False
        # (where `~True` is -2) and `np.add(1, 2)` is an int64, so the
        # int8 product wraps to int64, not to int8
        y[0] = np.invert(True)
        z[0] = np.add(100, 100) * np.int8(2)


def test_ufuncs_of_python_numbers_alone_are_numpy_values():
    y, z = np.ones(1, bool), np.zeros(1, np.int64)
    if call(python_numbers_alone, [y, z], cpu_opts({'i': parpy.threads(1)})):
        assert not y[0] and z[0] == np.add(100, 100) * np.int8(2) == 400


@parpy.jit
def log_sum_exp_rows(x, y, N):
    parpy.label('i')
    for i in range(N):
        acc = -np.inf
        for j in range(x.shape[1]):
            acc = np.logaddexp(acc, x[i, j])
        y[i] = acc


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_running_logaddexp_is_numpys(dtype):
    x = (np.random.default_rng(5).standard_normal((N, 300)) * 30).astype(dtype)
    y = np.zeros(N, dtype)
    opts = cpu_opts({'i': parpy.threads(N)})
    if call(log_sum_exp_rows, [x, y, N], opts):
        check('logaddexp', y, np.array([np.logaddexp.reduce(r) for r in x], dtype), opts)


@pytest.mark.parametrize("u", ['logical_xor', 'floor_divide', 'greater_equal', 'right_shift'])
def test_gpu_code_of_binary_ufuncs_compiles(u):
    a = np.zeros((N, M), np.int32 if 'shift' in u else np.float32)
    args = lambda backend: [a, a, np.zeros((N, M), a.dtype), N]
    check_gpu_code(getattr(kernels(), f"bin_{u}"), args, {'i': parpy.threads(N)}, f"ufunc_{u}")


@pytest.mark.parametrize("u", ['signbit', 'rint', 'deg2rad', 'logical_not'])
def test_gpu_code_of_unary_ufuncs_compiles(u):
    a = np.zeros((N, M), np.float32)
    args = lambda backend: [a, np.zeros((N, M), np.float32), N]
    check_gpu_code(getattr(kernels(), f"un_{u}"), args, {'i': parpy.threads(N)}, f"ufunc_{u}")


@pytest.mark.parametrize("u", ['logaddexp', 'logaddexp2'])
def test_logaddexp_on_gpus(u):
    # Cuda has log1p; Metal's standard library does not (as for np.log1p)
    import test_cuda_codegen as cc
    a = np.zeros((N, M), np.float32)
    opts = parpy.par({'i': parpy.threads(N)})
    opts.backend = parpy.CompileBackend.Metal
    with pytest.raises(parpy.CompileError, match="`log1p` is not in the Metal standard library"):
        parpy.print_compiled(getattr(kernels(), f"bin_{u}"), [a, a, a, N], opts)
    if cc.NVRTC_PATH is None:
        pytest.skip("NVRTC is not installed")
    opts.backend = parpy.CompileBackend.Cuda
    cc.check_nvrtc(parpy.print_compiled(getattr(kernels(), f"bin_{u}"), [a, a, a, N], opts), u)


@parpy.jit
def float16_predicates(a, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.isfinite(a[i, :]) | np.isnan(a[i, :]) | np.isinf(a[i, :])


def test_float16_predicates_compile_for_gpus():
    # (NVRTC refused `isfinite(__half)` as ambiguous: a float16 is tested
    # as a float32); the Cuda code goes to a cubin as a call would
    from parpy import _cuda, _native
    a = np.zeros((N, M), np.float16)
    args = [a, np.zeros((N, M), bool), N]
    opts = parpy.par({'i': parpy.threads(N)})
    opts.backend = parpy.CompileBackend.Cuda
    assert "isfinite((float)" in parpy.print_compiled(float16_predicates, args, opts)
    if _cuda.nvrtc_path() is None:
        pytest.skip("NVRTC is not installed")
    _native._cuda_dry_run(float16_predicates, args, opts, 90)


@parpy.jit
def math_of_bools_and_mixed_ints(b, k, u, fl, ro, ab, at, N):
    parpy.label('i')
    for i in range(N):
        fl[i, :] = np.floor(b[i, :])
        ro[i, :] = np.round(b[i, :])
        ab[i, :] = np.abs(b[i, :])
        at[i, :] = np.arctan2(k[i, :], u[i, :])


@parpy.jit
def sign_of_bools(b, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.sign(b[i, :])


def test_math_of_bools_and_mixed_integers_has_numpys_types():
    # (floor of a bool was an int64, round of a bool an int64, abs of a
    # bool an int64, atan2(int8, uint8) a float32; NumPy: bool, float16,
    # bool, float16)
    b, k, u = values(np.bool_, 13), values(np.int8, 14), values(np.uint8, 15)
    want = [np.floor(b), np.round(b), np.abs(b), np.arctan2(k, u)]
    outs = [np.zeros(w.shape, w.dtype) for w in want]
    if call(math_of_bools_and_mixed_ints, [b, k, u, *outs, N],
            cpu_opts({'i': parpy.threads(N)})):
        for got, w in zip(outs, want):
            check('arctan2', got, w, cpu_opts())
    with pytest.raises(TypeError, match="of a bool is not defined in NumPy"):
        call(sign_of_bools, [b, np.zeros((N, M), np.int8), N], cpu_opts({'i': parpy.threads(N)}))
