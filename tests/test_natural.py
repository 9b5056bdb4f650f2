"""Natural Python inside jit code (issue 13): the way people write kernels
in Numba style compiles unchanged. Each program runs as plain Python/NumPy
(the reference, `fn.py_func`) and compiled for the CPU (conftest.run_both)."""

import itertools

import numpy as np
import pytest

import parpy
from conftest import bits_of, check_gpu_code, cpu_opts, python_opts, run_both
from test_assert import expect_raised


def rng(seed=0):
    return np.random.default_rng(seed)


# --------------------------------------------------------------------------
# 1. tuple unpacking and multiple assignment


@parpy.jit
def mandelbrot(out, x0, y0, dx, dy, max_iter):
    H, W = out.shape
    parpy.label('i')
    for i in range(H):
        for j in range(W):
            cr, ci = x0 + j * dx, y0 + i * dy
            zr, zi = 0.0, 0.0
            n = 0
            while n < max_iter and zr * zr + zi * zi <= 4.0:
                # simultaneous: both right sides use the old zr and zi
                zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
                n += 1
            out[i, j] = n


def test_mandelbrot_simultaneous_assignment():
    out = np.zeros((24, 36), np.int32)
    res = run_both(mandelbrot, [out, -2.0, -1.2, 0.08, 0.1, 50],
                   cpu_opts({'i': parpy.threads(4)}))
    # the sequential reading (zr assigned before zi is computed) differs
    assert len(np.unique(res[0])) > 5


@parpy.jit
def swap_elems(x, y, N):
    for i in range(N):
        a, b = x[i], y[i]
        a, b = b, a
        x[i], y[i] = a, b
    x[0], x[1] = x[1], x[0]


def test_swap():
    x = np.arange(6, dtype=np.float32)
    y = -np.arange(6, dtype=np.float32)
    run_both(swap_elems, [x, y, 6], cpu_opts())


@parpy.jit
def views_in_a_tuple(x, y, z, N):
    parpy.label('i')
    for i in range(N):
        even, odd = x[i, ::2], x[i, 1::2]
        y[i, ::2] = odd
        y[i, 1::2] = even
        lo, hi, mid = x[i, :3], x[i, -3:], np.sum(x[i, 2:5])
        z[i, :] = lo * hi + mid


def test_views_in_a_tuple_assignment_are_views():
    # (`a, b = x[i, ::2], x[i, 1::2]` was "slices can only be used in
    # slice assignments and reductions"; assigned one after the other, as
    # no value reads a target)
    x = rng(46).random((4, 8))
    run_both(views_in_a_tuple, [x, np.zeros((4, 8)), np.zeros((4, 3)), 4],
             cpu_opts({'i': parpy.threads(4)}), rtol=0, atol=0)


@parpy.jit
def nested_unpacking(x, y, N):
    parpy.label('i')
    for i in range(N):
        a, (b, c) = x[i, 0], (x[i, 1], x[i, 2])
        (a, b), c = (c, a), b
        y[i, 0], (y[i, 1], y[i, 2]) = a, (b * 2.0, c - 1.0)


def test_a_nested_tuple_target_takes_a_tuple_of_its_shape():
    # Python evaluates the whole right side, then binds in order
    x = np.random.default_rng(11).random((4, 3))
    got = run_both(nested_unpacking, [x, np.zeros((4, 3)), 4], cpu_opts({'i': parpy.threads(4)}),
                   rtol=0, atol=0)
    assert np.array_equal(got[1], np.stack([x[:, 2], x[:, 0] * 2.0, x[:, 1] - 1.0], axis=1))


@parpy.jit
def unpack_arrays(x, z, y, N):
    parpy.label('i')
    for i in range(N):
        # (an array unpacks along its first dimension, as Python iterates
        # it: was "slices can only be used in slice assignments ...")
        a, b, c = x[i, 0, :3]
        p, q = x[i, 1, 2::-2] * 2.0
        r0, r1 = x[i]            # rows: views
        r0[3] = a + r1[0]
        z[i, 0], z[i, 1] = z[i, 1::-1]
        y[i] = a * b - c + p / q + r0.sum()


def test_an_array_unpacks_into_its_elements_or_rows():
    x = np.random.default_rng(12).random((4, 2, 4))
    z = np.random.default_rng(13).random((4, 3))
    got = run_both(unpack_arrays, [x, z, np.zeros(4), 4], cpu_opts({'i': parpy.threads(4)}),
                   rtol=0, atol=0)
    assert np.array_equal(got[0][:, 0, 3], x[:, 0, 0] + x[:, 1, 0])
    assert np.array_equal(got[1][:, :2], z[:, 1::-1])


@parpy.jit
def unpack_rows_into_their_array(x, y, N):
    for i in range(N):
        x, q = x[i]
        y[i] = q[0]


def test_unpacking_rows_into_the_array_they_come_from_is_an_error():
    with pytest.raises(parpy.CompileError, match="a name cannot take a row of the array it names"):
        unpack_rows_into_their_array(np.zeros((2, 2, 2)), np.zeros(2), 2, opts=cpu_opts())


@parpy.jit
def ping_pong(a, b, out, T, N):
    src, dst = a, b
    for t in range(T):
        parpy.label('i')
        for i in range(1, N - 1):
            dst[i] = (src[i - 1] + src[i] + src[i + 1]) / 3.0
        src, dst = dst, src
    first = last = src
    parpy.label('i')
    for i in range(N):
        out[i] = first[i] + last[i]


@pytest.mark.parametrize("T", [0, 1, 4, 7])
def test_array_names_swapped_in_a_tuple(T):
    # the right side is read before either name is re-bound: a sequential
    # reading (src = dst; dst = src) would leave both names on one array
    a = rng(T).random(16)
    b = a.copy()
    out = np.zeros(16)
    res = run_both(ping_pong, [a, b, out, T, 16],
                   cpu_opts({'i': parpy.threads(4)}))
    assert not np.allclose(res[2], 2 * a) or T == 0


@parpy.jit
def swap_mismatched(a, c, N):
    src, dst = a, c
    src, dst = dst, src
    for i in range(N):
        src[i] = 1.0


def test_array_swap_of_different_shapes_is_an_error():
    with pytest.raises(parpy.CompileError, match="different types or shapes"):
        swap_mismatched(np.zeros(4), np.zeros(5), 4, opts=cpu_opts())


@parpy.jit
def chained_and_shape(x, y):
    N, M = x.shape
    a = b = 0.0
    for i in range(N):
        for j in range(M):
            a += x[i, j]
            b = c = b + 2.0 * x[i, j]
            y[i] = c
    y[0] = a - b


def test_chained_and_shape():
    x = rng().standard_normal((5, 7))
    y = np.zeros(5)
    run_both(chained_and_shape, [x, y], cpu_opts())


# --------------------------------------------------------------------------
# 5. reassigned parameters, reused loop variables


@parpy.jit
def param_reassigned(y, n, scale):
    scale = scale * 2.0
    while n > 0:
        n -= 1
        y[n] = scale * n


@parpy.jit
def loop_var_reused(x, y, N):
    for i in range(N):
        y[i] = x[i]
    for i in range(N):
        y[i] += x[N - 1 - i]
    i = 0
    y[i] = -1.0


@pytest.mark.parametrize("specialize", [True, False])
def test_param_reassigned(specialize):
    y = np.zeros(6)
    run_both(param_reassigned, [y, 6, 1.5], cpu_opts(specialize_scalars=specialize))


def test_loop_var_reused():
    x = rng().standard_normal(9)
    run_both(loop_var_reused, [x, np.zeros(9), 9], cpu_opts())


@parpy.jit
def loop_var_was_local(x, y, N):
    i = 100
    for i in range(N):
        y[i] = x[i]
    y[0] = i
    k = 7
    for k in range(0):
        y[1] = 0.0
    y[1] = k


@pytest.mark.parametrize("N", [1, 5])
def test_loop_var_was_a_local(N):
    x = rng().standard_normal(5)
    run_both(loop_var_was_local, [x, np.zeros(5), N], cpu_opts())


@parpy.jit
def inner_loop_reuses_the_name(x, y, N, M):
    for i in range(N):
        for i in range(M):
            y[i] += 1.0
        y[i] += x[i]


@parpy.jit
def inner_loop_reuses_the_name_in_parallel(x, y, N):
    parpy.label('N')
    for i in range(N):
        for i in range(i):
            y[i] += 1.0
        y[i] += x[i]


@pytest.mark.parametrize("M", [0, 2, 3])
def test_an_inner_loop_over_the_outer_loops_name_leaves_its_value(M):
    # Python has one `i`: after the inner loop it is the inner loop's last
    # value (the outer one's when the inner loop runs zero times); the
    # outer loop's `i` was used (y[i] += x[i] of every row)
    x = np.arange(1.0, 5.0)
    run_both(inner_loop_reuses_the_name, [x, np.zeros(4), 4, M], cpu_opts())


def test_an_inner_loop_over_the_outer_loops_name_in_a_parallel_loop():
    # (iterations 2 and 3 both update y[0]: refused as a race; sequential
    # it runs as Python)
    x = np.arange(1.0, 5.0)
    run_both(inner_loop_reuses_the_name_in_parallel, [x, np.zeros(4), 4], cpu_opts())
    with pytest.raises(parpy.CompileError, match="may update the same element"):
        inner_loop_reuses_the_name_in_parallel(x, np.zeros(4), 4,
                                               opts=cpu_opts({'N': parpy.threads(4)}))


# --------------------------------------------------------------------------
# 2. `math.*` and `np.*` inside jit code; 3. reductions as methods


import math  # noqa: E402


@parpy.jit
def black_scholes(S, K, T, r, v, call, put, N):
    parpy.label('i')
    for i in range(N):
        sqrt_t = np.sqrt(T[i])
        d1 = (np.log(S[i] / K[i]) + (r + 0.5 * v * v) * T[i]) / (v * sqrt_t)
        d2 = d1 - v * sqrt_t
        cdf1 = 0.5 * (1.0 + math.erf(d1 / math.sqrt(2.0)))
        cdf2 = 0.5 * (1.0 + math.erf(d2 / math.sqrt(2.0)))
        disc = np.exp(-r * T[i])
        call[i] = S[i] * cdf1 - K[i] * disc * cdf2
        put[i] = K[i] * disc * (1.0 - cdf2) - S[i] * (1.0 - cdf1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_black_scholes_np_and_math(dtype):
    N = 64
    g = rng(2)
    S = g.uniform(10, 100, N).astype(dtype)
    K = g.uniform(10, 100, N).astype(dtype)
    T = g.uniform(0.1, 2, N).astype(dtype)
    call = np.zeros(N, dtype)
    put = np.zeros(N, dtype)
    run_both(black_scholes, [S, K, T, 0.02, 0.3, call, put, N],
             cpu_opts({'i': parpy.threads(8)}),
             rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-3)


@parpy.jit
def np_builtins(x, y, N):
    for i in range(N):
        a = np.abs(x[i]) + np.float32(0.5)
        b = np.minimum(a, 2.0) + np.maximum(x[i], -np.inf)
        c = np.float64(x[i]) * math.pi + np.pi
        k = math.floor(x[i]) + math.ceil(x[i]) + round(x[i])
        y[i, 0] = a
        y[i, 1] = b
        y[i, 2] = c
        y[i, 3] = k
        y[i, 4] = np.sum(x[:]) + np.max(x[:]) - np.min(x[:])
        y[i, 5] = np.power(np.fabs(x[i]), 1.5) + np.arctan2(x[i], 2.0)


def test_np_and_math_builtins():
    x = (rng(3).standard_normal(7) * 3).astype(np.float32)
    x[0] = 2.5  # round half to even
    y = np.zeros((7, 6), np.float64)
    run_both(np_builtins, [x, y, 7], cpu_opts(), rtol=1e-6)


@parpy.jit
def layernorm(x, y, N):
    parpy.label('i')
    for i in range(N):
        M = x.shape[1]
        mean = x[i, :].sum() / M
        var = ((x[i, :] - mean) * (x[i, :] - mean)).sum() / M
        y[i, :] = (x[i, :] - mean) / np.sqrt(var + 1e-5)


@parpy.jit
def row_stats(x, out, N):
    parpy.label('i')
    for i in range(N):
        out[i, 0] = x[i, :].max()
        out[i, 1] = x[i, :].min()
        out[i, 2] = x[i, 1:4].prod()
        out[i, 3] = parpy.max(x[i, :]) - parpy.min(x[i, :]) + parpy.prod(x[i, :2])
    out[0, 4] = x.sum()


@parpy.jit
def logsumexp(x, out, N):
    parpy.label('i')
    for i in range(N):
        m = x[i, :].max()
        out[i] = m + np.log(np.exp(x[i, :] - m).sum())


def test_reduction_methods():
    x = rng(4).standard_normal((6, 9))
    run_both(row_stats, [x, np.zeros((6, 5)), 6], cpu_opts({'i': parpy.threads(3)}))
    run_both(layernorm, [x, np.zeros((6, 9)), 6], cpu_opts({'i': parpy.threads(3)}))
    run_both(logsumexp, [x * 10, np.zeros(6), 6], cpu_opts({'i': parpy.threads(3)}))


# --------------------------------------------------------------------------
# 4. more math, with NumPy's result types


@parpy.jit
def more_math(x, y, f, N):
    parpy.label('N')
    for i in range(N):
        v = x[i]
        y[i, 0] = parpy.math.erf(v)
        y[i, 1] = parpy.math.erfc(v)
        y[i, 2] = np.expm1(v)
        y[i, 3] = np.log1p(np.abs(v))
        y[i, 4] = np.hypot(v, 3.0)
        y[i, 5] = np.copysign(2.0, v)
        y[i, 6] = np.fmod(v, 0.75)
        y[i, 7] = np.cbrt(v)
        y[i, 8] = np.round(v)
        f[i, 0] = np.isnan(v)
        f[i, 1] = np.isinf(v)
        f[i, 2] = math.isfinite(v)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_more_math(dtype):
    x = (rng(5).standard_normal(12) * 4).astype(dtype)
    x[:6] = [np.nan, np.inf, -np.inf, 0.5, 1.5, -2.5]
    y = np.zeros((12, 9), dtype)
    f = np.zeros((12, 3), np.bool_)
    with np.errstate(invalid="ignore"):
        run_both(more_math, [x, y, f, 12], cpu_opts(),
                 rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)


def test_more_math_result_types():
    # NumPy's types: float32 stays float32, predicates are bool
    src = parpy.print_compiled(more_math, [np.zeros(3, np.float32), np.zeros((3, 9), np.float32),
                                           np.zeros((3, 3), np.bool_), 3], cpu_opts())
    for name in ["erff(", "erfcf(", "expm1f(", "log1pf(", "hypotf(", "copysignf(", "fmodf(",
                 "cbrtf(", "rintf(", "isnan(", "isinf(", "isfinite("]:
        assert name in src, name
    body = src.split("void more_math(")[1].split("parpy_entry")[0]
    # (Python's `math.isfinite` reads a Python float: the float32 as a double)
    assert "double" not in body.replace("isfinite((double)v)", "")


@parpy.jit
def trig_and_logs(x, y, k, t, N):
    parpy.label('N')
    for i in range(N):
        v = x[i]
        y[i, 0] = np.log10(np.abs(v))
        y[i, 1] = np.log2(np.abs(v))
        y[i, 2] = np.exp2(v)
        y[i, 3] = np.arcsin(v / 16)
        y[i, 4] = math.acos(v / 16)
        y[i, 5] = np.arctan(v)
        y[i, 6] = math.sinh(v)
        y[i, 7] = np.cosh(v)
        y[i, 8] = np.arcsinh(v)
        y[i, 9] = np.arccosh(np.abs(v) + 1)
        y[i, 10] = math.atanh(v / 16)
        y[i, 11] = np.trunc(v)
        y[i, 12] = parpy.math.log2(k[i])
        t[i, 0] = np.trunc(k[i])
        t[i, 1] = math.trunc(float(v))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log10_log2_exp2_inverse_and_hyperbolic_trig_and_trunc(dtype):
    # (each was "... has no parpy equivalent inside jit code")
    x = (rng(7).standard_normal(12) * 4).astype(dtype)
    # (no NaN or inf: Python's math.trunc raises on them)
    x[:5] = [0.0, 8.0, -0.5, 1.5, -2.5]
    k = np.arange(1, 13, dtype=np.int16)
    y = np.zeros((12, 13), dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        run_both(trig_and_logs, [x, y, k, np.zeros((12, 2), np.int64), 12], cpu_opts(),
                 rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)
    src = parpy.print_compiled(trig_and_logs, [x, y, k, np.zeros((12, 2), np.int64), 12],
                               cpu_opts())
    suffix = "f(" if dtype == np.float32 else "("
    for name in ["log10", "log2", "exp2", "asin", "atan", "cosh", "asinh", "acosh", "trunc"]:
        assert name + suffix in src, name
    # (Python's `math` computes on Python floats, doubles, whatever NumPy
    # type it is given)
    for name in ["acos", "sinh", "atanh"]:
        assert name + "(" in src, name


def _trig_args(int_ty):
    return [np.zeros(12, np.float32), np.zeros((12, 13), np.float32),
            np.zeros(12, np.int16), np.zeros((12, 2), int_ty), 12]


def test_log10_to_trunc_compile_for_cuda():
    import test_cuda_codegen as cc  # (it imports this module: not at the top)
    if cc.NVRTC_PATH is None:
        pytest.skip("the nvidia-cuda-nvrtc wheel is not installed")
    opts = parpy.par({'N': parpy.threads(12)})
    opts.backend = parpy.CompileBackend.Cuda
    cc.check_nvrtc(parpy.print_compiled(trig_and_logs, _trig_args(np.int64), opts), "trig")


def test_log10_to_trunc_are_in_metals_library():
    import test_metal_codegen as mc
    if mc.CLANG is None and not mc.IN_CI:
        pytest.skip("clang-19 is not installed")
    opts = parpy.par({'N': parpy.threads(12)})
    opts.backend = parpy.CompileBackend.Metal
    mc.assert_clang_ok(parpy.print_compiled(trig_and_logs, _trig_args(np.int32), opts), "trig")


@parpy.jit
def metal_math(x, y, f, N):
    parpy.label('N')
    for i in range(N):
        v = x[i]
        y[i, 0] = np.copysign(2.0, v)
        y[i, 1] = np.fmod(v, 0.75)
        y[i, 2] = np.round(v)
        f[i, 0] = np.isnan(v)
        f[i, 1] = np.isinf(v)
        f[i, 2] = np.isfinite(v)


def test_metal_math_on_cpu():
    x = (rng(6).standard_normal(10) * 4).astype(np.float32)
    x[:3] = [np.nan, np.inf, 2.5]
    run_both(metal_math, [x, np.zeros((10, 3), np.float32), np.zeros((10, 3), np.bool_), 10],
             cpu_opts(), rtol=1e-6)


# --------------------------------------------------------------------------
# 8. accumulators typed by use: `acc = 0.0` over float32 data is a float32


@parpy.jit
def matmul_natural(A, B, C):
    N, K = A.shape
    M = B.shape[1]
    parpy.label('i')
    for i in range(N):
        for j in range(M):
            acc = 0.0
            for k in range(K):
                acc += A[i, k] * B[k, j]
            C[i, j] = acc


@parpy.jit
def kmeans_assign(X, C, labels, dist):
    N, D = X.shape
    K = C.shape[0]
    parpy.label('i')
    for i in range(N):
        best = 0
        best_d = np.inf
        for k in range(K):
            d = 0.0
            for j in range(D):
                t = X[i, j] - C[k, j]
                d += t * t
            if d < best_d:
                best_d = d
                best = k
        labels[i] = best
        dist[i] = best_d / D


@parpy.jit
def int_accumulator(x, out, N):
    s = 0
    for i in range(N):
        s += x[i]
    out[0] = s


def test_accumulators_typed_by_use():
    g = rng(8)
    A = g.standard_normal((9, 13)).astype(np.float32)
    B = g.standard_normal((13, 7)).astype(np.float32)
    opts = cpu_opts({'i': parpy.threads(3)})
    run_both(matmul_natural, [A, B, np.zeros((9, 7), np.float32)], opts, rtol=0, atol=0)
    src = parpy.print_compiled(matmul_natural, [A, B, np.zeros((9, 7), np.float32)], opts)
    assert "double" not in src.split("parpy_entry")[0], src
    X = g.standard_normal((50, 4)).astype(np.float32)
    C = g.standard_normal((5, 4)).astype(np.float32)
    # bit-identical to NumPy: the distances are float32 from the first update
    run_both(kmeans_assign, [X, C, np.zeros(50, np.int32), np.zeros(50, np.float64)], opts,
             rtol=0, atol=0)
    # int32 wraps at 32 bits, as `0 + np.int32(...)` does in NumPy
    x = np.full(4, 2**30, np.int32)
    out = run_both(int_accumulator, [x, np.zeros(1, np.int64), 4], cpu_opts())
    assert out[1][0] == np.int32(0)


@parpy.jit
def rebound_then_scaled(x, h, y, z, N):
    parpy.label('i')
    for i in range(N):
        t = 0
        t = x[i]
        t = t * 100
        y[i] = t
        u = 0.0
        u = h[i]
        z[i] = u * 3.3


@parpy.jit
def scaled_before_rebound(x, y, N):
    parpy.label('i')
    for i in range(N):
        t = 5
        t = t * 100
        y[i, 0] = t
        t = x[i]
        y[i, 1] = t


def test_a_local_re_bound_to_a_numpy_value_computes_in_its_type():
    # `t = 0; t = x[i]` holds an int8 from then on, so `t * 100` wraps in
    # int8 (it gave 300 and 5000); `u = 0.0; u = h[i]` a float16, so
    # `u * 3.3` rounds to float16 (it computed in float64)
    x = np.array([3, 50, -100], np.int8)
    h = np.array([1000, 0.1, 3], np.float16)
    out = run_both(rebound_then_scaled, [x, h, np.zeros(3, np.int64), np.zeros(3), 3],
                   cpu_opts({'i': parpy.threads(3)}), rtol=0, atol=0)
    assert out[2].tolist() == [44, -120, -16] and out[3][1] == np.float16(0.330078125)
    # before the NumPy value is stored, the local is still a Python int
    out = run_both(scaled_before_rebound, [x, np.zeros((3, 2), np.int64), 3],
                   cpu_opts({'i': parpy.threads(3)}))
    assert out[1][:, 0].tolist() == [500] * 3


@parpy.jit
def python_int_totals(x, x32, y, y32, N):
    parpy.label('i')
    for i in range(N):
        total = 0
        for j in range(x.shape[1]):
            total += x[i, j]
        y[i] = total
        t32 = 0
        for v in x32[i, :]:
            t32 = t32 + v * 0.5
        y32[i] = t32


@parpy.jit
def python_int_then_mixed(x, y, N):
    parpy.label('i')
    for i in range(N):
        total = 0
        total += 2
        for j in range(3):
            total += x[i, j]
        total += 1
        y[i] = total


def test_a_python_int_total_of_floats_is_the_floats_type():
    # `total = 0; total += x[i, j]`: Python's name is a float from its first
    # update on (was "variable `total` holds `i64` values but this assigns
    # a `f64`")
    g = rng(9)
    x, x32 = g.standard_normal((5, 7)), g.standard_normal((5, 6)).astype(np.float32)
    run_both(python_int_totals, [x, x32, np.zeros(5), np.zeros(5, np.float32), 5],
             cpu_opts({'i': parpy.threads(5)}), rtol=0, atol=0)
    # (Python ints added too: a float plus a Python int is that float)
    run_both(python_int_then_mixed, [x, np.zeros(5), 5], cpu_opts({'i': parpy.threads(5)}),
             rtol=0, atol=0)


# --------------------------------------------------------------------------
# 9. scalars that change every call stop being specialized on


@parpy.jit
def shift(x, y, c, N):
    for i in range(N):
        y[i] = x[i] + c


def test_scalar_values_stop_specializing():
    import warnings
    shift_fn = parpy.jit(shift.py_func)
    x = np.arange(5.0)
    y = np.zeros(5)
    opts = cpu_opts()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for k in range(10):
            shift_fn(x, y, 0.5 * k, 5, opts=opts)
            np.testing.assert_array_equal(y, x + 0.5 * k)
    msgs = [str(m.message) for m in w if issubclass(m.category, parpy.ParpyWarning)]
    assert len(msgs) == 1 and "`c`" in msgs[0], msgs
    # 4 specialized values + one compilation for all the others
    assert shift_fn.cache_size() == 5
    # `N` kept one value: still specialized
    assert "c" in msgs[0] and "`N`" not in msgs[0]


@parpy.jit
def prefix_double(x, y, n):
    parpy.label('i')
    y[0:n] = x[0:n] * 2.0


def test_scalar_needed_at_compile_time_stays_specialized():
    # a slice statement takes a bound known only at run time
    # (runtime_slices.rs): after its 5th value `n` is passed at run time
    # (one warning, one compilation for the others, every value right)
    import warnings
    fn = parpy.jit(prefix_double.py_func)
    opts = cpu_opts({'i': parpy.threads(4)})
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for n in range(1, 9):
            x, y = np.arange(8.0), np.zeros(8)
            fn(x, y, n, opts=opts)
            np.testing.assert_array_equal(y, np.where(np.arange(8) < n, 2 * x, 0))
    msgs = [str(m.message) for m in w if issubclass(m.category, parpy.ParpyWarning)]
    assert len(msgs) == 1 and "`n`" in msgs[0], msgs
    assert fn.cache_size() == 5


def test_python_mode_calls_do_not_count_as_compilations():
    import warnings
    fn = parpy.jit(shift.py_func)
    x, y = np.arange(5.0), np.zeros(5)
    py = parpy.CompileOptions()
    py.backend = parpy.CompileBackend.Python
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for k in range(10):
            fn(x, y, 0.5 * k, 5, opts=py)
        for k in range(3):
            fn(x, y, 0.5 * k, 5, opts=cpu_opts())
            np.testing.assert_array_equal(y, x + 0.5 * k)
    assert not [m for m in w if issubclass(m.category, parpy.ParpyWarning)]


# --------------------------------------------------------------------------
# 5. a par_reduction() loop whose body computes locals before the update


@parpy.jit
def dot_with_locals(x, y, out, N):
    parpy.label('N')
    for i in range(N):
        a = x[i] * 2.0
        b = a * y[i] + 1.0
        out[0] += b


@parpy.jit
def reduction_local_used_after(x, out, N):
    parpy.label('N')
    for i in range(N):
        a = x[i] * 2.0
        out[0] += a
    out[1] = a


def test_par_reduction_with_several_statements():
    x = rng(9).standard_normal(1000)
    y = rng(10).standard_normal(1000)
    opts = cpu_opts({'N': parpy.threads(8).par_reduction()})
    run_both(dot_with_locals, [x, y, np.zeros(1), 1000], opts, rtol=1e-10)
    # `a` is read after the loop: not private to an iteration
    with pytest.raises(parpy.CompileError, match="used only in this loop"):
        reduction_local_used_after(x, np.zeros(2), 1000, opts=opts)


@parpy.jit
def double_by_shape(x, y):
    H, W = x.shape
    n = W - 1
    parpy.label('N')
    for i in range(H):
        for j in range(n):
            y[i, j] = x[i, j + 1] * 2.0


def test_shape_locals_are_constant_trip_counts():
    # locals that hold one specialized value are that literal in the code:
    # the C compiler sees constant trip counts
    x, y = np.arange(15.0).reshape(3, 5), np.zeros((3, 5))
    opts = cpu_opts({'N': parpy.threads(3)})
    code = parpy.print_compiled(double_by_shape, [x, y], opts)
    assert "j < 4;" in code and "i < 3;" in code, code
    assert " W " not in code and " n " not in code, code
    run_both(double_by_shape, [x, y], opts)


# --------------------------------------------------------------------------
# float('inf'), float('-inf'), float('nan'): Python's spellings of the
# special values (they were "strings can only be used as labels")


@parpy.jit
def row_extremes_from_inf(x, lo, hi, bad, N, M):
    parpy.label('i')
    for i in range(N):
        mn = float('inf')
        mx = float(' -Infinity ')
        for j in range(M):
            mn = min(mn, x[i, j])
            mx = max(mx, x[i, j])
        lo[i] = mn
        hi[i] = mx
        bad[i] = float('nan') if mx > 0.9 else float('+inf')


def test_float_of_inf_and_nan_strings():
    x = rng(7).random((5, 40))
    args = [x, np.zeros(5), np.zeros(5), np.zeros(5), 5, 40]
    run_both(row_extremes_from_inf, args, cpu_opts({'i': parpy.threads(5)}))


@parpy.jit
def float_of_number_string(y):
    with parpy.gpu:
        y[0] = float('1.5')


def test_float_of_a_number_string_asks_for_the_literal():
    with pytest.raises(parpy.CompileError, match=r"write the number itself: `1\.5`"):
        float_of_number_string(np.zeros(1), opts=cpu_opts())


# --------------------------------------------------------------------------
# np.where, np.clip, np.mean / .mean(), np.dot and Python's sum: NumPy's
# (and Python's) answers, types included (they were "cannot call ...")


@parpy.jit
def where_clip(x, k, y, z, w, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.where(x[i] > 0.5, x[i], -1)
        z[i] = np.clip(x[i], 0.25, 0.75)
        w[i] = np.clip(k[i], -3, 4) + np.where(k[i] > 0, 1, 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_where_and_clip(dtype):
    x = rng(1).random(12).astype(dtype)
    # NaN stays NaN; values on a bound stay themselves, as NumPy's
    x[:4] = [np.nan, -0.0, 0.25, 0.75]
    k = np.arange(-6, 6, dtype=np.int32)
    # np.where of Python ints is a 0-d int64 array: the sum is int64
    args = [x, k, np.zeros(12, dtype), np.zeros(12, dtype), np.zeros(12, np.int64), 12]
    res = run_both(where_clip, args, cpu_opts({'i': parpy.threads(4)}))
    assert np.isnan(res[3][0])


@parpy.jit
def clip_signed_zero(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.clip(x[i], 0.0, 1.0)


def test_clip_keeps_the_value_on_ties_bit_for_bit():
    x = np.array([-0.0, 0.0, 2.0, np.nan])
    y = np.zeros(4)
    clip_signed_zero(x, y, 4, opts=cpu_opts({'i': parpy.threads(2)}))
    want = np.clip(x, 0.0, 1.0)
    assert (np.signbit(y) == np.signbit(want)).all(), (y, want)
    assert y.tobytes()[:24] == want.tobytes()[:24] and np.isnan(y[3])


@parpy.jit
def means(x, m1, m2, N):
    parpy.label('i')
    for i in range(N):
        m1[i] = np.mean(x[i, :])
        parpy.label('j')
        m2[i] = x[i, :, ].mean()


@pytest.mark.parametrize("dtype,out", [(np.float64, np.float64), (np.float32, np.float32),
                                       (np.float16, np.float16), (np.int32, np.float64),
                                       (np.uint8, np.float64), (np.bool_, np.float64)])
@pytest.mark.parametrize("par", [False, True])
def test_mean_types_and_values(dtype, out, par):
    x = (rng(2).random((5, 300)) * 200).astype(dtype)
    spec = {'i': parpy.threads(5)}
    if par:
        spec['j'] = parpy.threads(64)
    res = run_both(means, [x, np.zeros(5, out), np.zeros(5, out), 5], cpu_opts(spec))
    assert res[1].dtype == np.mean(x[0]).dtype


@parpy.jit
def mean_2d(x, m, N):
    parpy.label('i')
    for i in range(N):
        m[i] = np.mean(x[i, :, 1:])


def test_mean_of_a_2d_slice():
    x = rng(3).random((4, 6, 9))
    run_both(mean_2d, [x, np.zeros(4), 4], cpu_opts({'i': parpy.threads(4)}))


@parpy.jit
def dots_and_sums(a, b, d, s, N):
    parpy.label('i')
    for i in range(N):
        d[i] = np.dot(a[i, :], b[:, i])
        s[i] = sum(a[i, :])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int8])
def test_dot_and_python_sum_add_in_the_element_type(dtype):
    # int8 and int32 wrap around as NumPy's dot and Python's sum of NumPy
    # integers do (NumPy's np.sum would widen to int64)
    a = (rng(4).random((6, 40)) * 100).astype(dtype)
    b = (rng(5).random((40, 6)) * 100).astype(dtype)
    args = [a, b, np.zeros(6, dtype), np.zeros(6, dtype), 6]
    with np.errstate(over="ignore"):
        run_both(dots_and_sums, args, cpu_opts({'i': parpy.threads(3)}))


@parpy.jit
def sum_of_bools(m, s, N):
    parpy.label('i')
    for i in range(N):
        s[i] = sum(m[i, :])


def test_python_sum_of_bools_counts():
    m = rng(6).random((4, 50)) > 0.3
    run_both(sum_of_bools, [m, np.zeros(4, np.int64), 4], cpu_opts({'i': parpy.threads(4)}))


@parpy.jit
def sum_2d(x, s, N):
    parpy.label('i')
    for i in range(N):
        s[i] = sum(x[i, :, :])


@parpy.jit
def dot_bools(a, b, s, N):
    parpy.label('i')
    for i in range(N):
        s[i] = np.dot(a[i, :], b[i, :])


def test_python_sum_of_a_2d_slice_and_bool_dots_are_errors():
    with pytest.raises(parpy.CompileError, match="`sum` of a 2-dimensional slice is not a number"):
        sum_2d(np.zeros((2, 3, 4)), np.zeros(2), 2, opts=cpu_opts())
    m = np.zeros((2, 3), np.bool_)
    with pytest.raises(parpy.CompileError, match="of bool vectors is not supported"):
        dot_bools(m, m, np.zeros(2, np.bool_), 2, opts=cpu_opts())


# --------------------------------------------------------------------------
# for v in x[i, :] / for v in a: iteration over a 1-D array or slice (it
# was "`for` loops must iterate over `range(...)`")


@parpy.jit
def iterate_rows(x, w, y, z, N):
    parpy.label('i')
    for i in range(N):
        s = 0.0
        for v in x[i, :]:
            s += v * v
        t = 0.0
        for v in x[i, -3:]:
            t = max(t, v)
        c = 0
        for u in w:
            if u > 0.5:
                c += 1
        y[i] = s + t + c
        for v in x[i, 2:-100]:
            y[i] = -1.0
        for v in x[i, -100:2]:
            z[i] = z[i] * 10.0 + v


def test_iterating_over_a_1d_array_or_slice():
    x = rng(8).random((5, 9))
    args = [x, rng(9).random(7), np.zeros(5), np.zeros(5), 5]
    run_both(iterate_rows, args, cpu_opts({'i': parpy.threads(5)}))


@parpy.jit
def iterate_2d(x, y):
    with parpy.gpu:
        for row in x:
            y[0] = row[0]


def test_iterating_over_a_2d_array_gives_its_rows():
    # (was an error: "a 1-D array or a 1-D slice"); tests/test_views.py
    y = run_both(iterate_2d, [rng(2).random((2, 3)), np.zeros(1)], cpu_opts(), rtol=0, atol=0)[1]
    assert y[0] != 0.0


# --------------------------------------------------------------------------
# for i, v in enumerate(...) / for a, b in zip(...): tuple loop targets (they
# were "loop targets must be a single name")


@parpy.jit
def enumerate_and_zip(x, w, y, z, N):
    parpy.label('i')
    for i in range(N):
        for j, v in enumerate(x[i, :]):
            y[i, j] = v * j
        s = 0.0
        # zip stops at the shortest: x[i, 1:] has one element fewer
        for a, b in zip(x[i, 1:], x[i, :]):
            s += a - b
        for k, v in enumerate(x[i, -4:], 10):
            s += v * k
        for k, (v) in enumerate(w):
            s += v - k
        for a, b, c in zip(w, x[i, :], w[2:]):
            s = s * 0.5 + a * b - c
        z[i] = s


def test_enumerate_and_zip_over_arrays_and_slices():
    x = rng(10).random((5, 9))
    args = [x, rng(11).random(6), np.zeros((5, 9)), np.zeros(5), 5]
    run_both(enumerate_and_zip, args, cpu_opts({'i': parpy.threads(5)}))


@parpy.jit
def enumerate_parallel(x, y):
    parpy.label('j')
    for j, v in enumerate(x):
        y[j] = v + j


def test_a_labelled_enumerate_loop_is_parallel():
    opts = cpu_opts({'j': parpy.threads(4)})
    run_both(enumerate_parallel, [rng(12).random(37), np.zeros(37)], opts)
    code = parpy.print_compiled(enumerate_parallel, [np.zeros(37), np.zeros(37)], opts)
    assert "#pragma omp parallel for" in code


@parpy.jit
def enumerate_scalar_start(x, y, k):
    with parpy.gpu:
        for i, v in enumerate(x, k):
            y[i - k] = v * i


def test_an_enumerate_start_must_be_known_when_compiling():
    # a specialized parameter is a constant; without specialization the
    # error says where to add the offset instead
    run_both(enumerate_scalar_start, [rng(13).random(6), np.zeros(6), 3], cpu_opts())
    with pytest.raises(parpy.CompileError, match="the start of `enumerate` must be an integer"):
        enumerate_scalar_start(np.zeros(6), np.zeros(6), 3,
                               opts=cpu_opts(specialize_scalars=False))


# --------------------------------------------------------------------------
# np.argmax / np.argmin / .argmax() / .argmin() of a 1-D slice (it was "no
# parpy equivalent inside jit code")


@parpy.jit
def arg_extremes(x, k, hi, lo, khi, N):
    parpy.label('i')
    for i in range(N):
        hi[i] = np.argmax(x[i, :])
        lo[i] = x[i, 1:].argmin()
        khi[i] = np.argmax(k[i, :]) + k[i, :].argmin() * 100


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_argmax_and_argmin_keep_the_first_index_and_a_nan_wins(dtype):
    x = rng(20).random((7, 9)).astype(dtype)
    x[1, 3] = x[1, 6] = np.nan     # the first NaN's index
    x[2, :] = 0.5                   # ties: the first index
    x[3, 0] = np.nan
    x[4, 8] = np.inf
    x[5, 1:] = -np.inf
    k = rng(21).integers(-3, 3, (7, 9)).astype(np.int8)
    outs = [np.zeros(7, np.int64) for _ in range(3)]
    got = run_both(arg_extremes, [x, k, *outs, 7], cpu_opts({'i': parpy.threads(3)}))
    np.testing.assert_array_equal(got[2], np.argmax(x, axis=1))
    np.testing.assert_array_equal(got[3], np.argmin(x[:, 1:], axis=1))


@parpy.jit
def argmax_flattened(x, k, hi, lo, kt, N):
    parpy.label('i')
    for i in range(N):
        # (of more than one dimension: the index into the flattened slice)
        hi[i] = np.argmax(x[i])
        lo[i] = x[i, ::-1, 1:].argmin()
        kt[i] = np.argmax(k[i].T) * 100 + np.argmin(k[i, :, :, 0])


def test_argmax_of_a_slice_of_several_dimensions_is_the_flattened_index():
    x = rng(22).random((5, 3, 4))
    x[1, 2, 1] = x[1, 2, 3] = np.nan
    x[2, 1:, :] = np.nan
    x[3] = 0.25                      # ties: the first index
    k = rng(23).integers(-2, 2, (5, 4, 3, 2)).astype(np.int16)
    outs = [np.zeros(5, np.int64) for _ in range(3)]
    got = run_both(argmax_flattened, [x, k, *outs, 5], cpu_opts({'i': parpy.threads(5)}))
    assert got[2][1] == 9 and got[2][2] == 4 and got[2][3] == 0


@parpy.jit
def argmax_labelled(x, y, N):
    parpy.label('r')
    y[0] = np.argmax(x[:])


def test_argmax_with_a_label_is_an_error():
    with pytest.raises(parpy.CompileError, match="`argmax` runs sequentially and takes no label"):
        argmax_labelled(np.zeros(4), np.zeros(1, np.int64), 4,
                        opts=cpu_opts({'r': parpy.threads(4)}))


def test_argmax_compiles_for_cuda_and_metal():
    def args(backend):
        it = np.int64 if backend == parpy.CompileBackend.Cuda else np.int32
        return [np.zeros((7, 9), np.float32), np.zeros((7, 9), np.int8),
                *[np.zeros(7, it) for _ in range(3)], 7]
    check_gpu_code(arg_extremes, args, {'i': parpy.threads(7)}, "arg_extremes")


# --------------------------------------------------------------------------
# reversed(range(...)), reversed(x[i, :]), x.size, x.ndim (each was refused)


@parpy.jit
def reversed_loops(x, out, a, b):
    with parpy.gpu:
        k = 0
        for i in reversed(range(a)):
            out[k] = i
            k += 1
        for i in reversed(range(a, b)):
            out[k] = i
            k += 1
        for i in reversed(range(a, b, 3)):
            out[k] = i
            k += 1
        for i in reversed(range(b, a, -2)):
            out[k] = i
            k += 1
        for i in reversed(range(b, a)):    # empty
            out[k] = -5
            k += 1
        for v in reversed(x[1:]):
            out[k] = v * 10
            k += 1
        out[k] = x.size * 100 + x.ndim


@pytest.mark.filterwarnings("ignore:`reversed_loops` was compiled for")
@pytest.mark.parametrize("a,b", [(0, 7), (2, 9), (3, 3), (4, 13), (-3, 5)])
def test_reversed_ranges_and_slices(a, b):
    x = np.arange(5.0)
    for specialize in (True, False):
        run_both(reversed_loops, [x, np.zeros(64), a, b], cpu_opts(specialize_scalars=specialize))


@parpy.jit
def matvec_at(A, w, k, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i] = A[i, :] @ w
        z[i] = k[i, 1:] @ k[i, :-1]


def test_the_at_operator_of_1d_vectors_is_a_dot_product():
    # (it was "matrix multiplications (`@`) are not supported")
    A = rng(30).random((5, 8))
    k = rng(31).integers(-9, 9, (5, 8)).astype(np.int32)
    run_both(matvec_at, [A, rng(32).random(8), k, np.zeros(5), np.zeros(5, np.int32), 5],
             cpu_opts({'i': parpy.threads(5)}))


@parpy.jit
def sign_and_square(x, k, u, y, ks, us, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.sign(x[i])
        y[i, 1] = np.square(x[i])
        # (`np.square(2.0)` is a NumPy float64, not a Python float: with
        # it the product is a float64, which parpy does not store into a
        # float32 implicitly)
        y[i, 2] = parpy.math.sign(x[i] - 0.5) * np.square(np.float32(2.0))
        ks[i, 0] = np.sign(k[i])
        ks[i, 1] = np.square(k[i])
        us[i] = np.sign(u[i])


def test_sign_and_square_keep_numpys_types():
    # (both were "no parpy equivalent inside jit code"); np.sign(nan) is
    # nan, np.sign(-0.0) is +0.0, an int8 square wraps as in NumPy
    x = np.array([np.nan, -0.0, 0.0, 2.5, -3.0, np.inf], np.float32)
    k = np.array([-12, 0, 12, 100, -128, 1], np.int8)
    u = np.array([0, 1, 200, 0, 5, 255], np.uint8)
    got = run_both(sign_and_square, [x, k, u, np.zeros((6, 3), np.float32),
                                     np.zeros((6, 2), np.int8), np.zeros(6, np.uint8), 6],
                   cpu_opts({'i': parpy.threads(2)}))
    assert not np.signbit(got[3][1, 0]) and np.isnan(got[3][0, 0])
    np.testing.assert_array_equal(got[4][:, 1], np.square(k))


@parpy.jit
def divmod_and_round(x, k, y, q, N, W):
    parpy.label('i')
    for i in range(N):
        r, c = divmod(i, W)
        a, b = np.divmod(k[i], -3)
        q[i, 0] = r * 100 + c
        q[i, 1] = a * 100 + b
        y[i, 0] = np.round(x[i], 2)
        y[i, 1] = round(x[i], 1)
        y[i, 2] = np.round(x[i] * 1000, -2)
        y[i, 3] = np.round(k[i], 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_divmod_unpacks_and_round_takes_decimals_as_numpy(dtype):
    # (divmod was "cannot call", np.round(x, d) "takes 1 argument")
    x = (rng(40).standard_normal(9) * 3).astype(dtype)
    x[:4] = [0.125, 0.135, -2.675, 1.005]
    k = np.array([-7, -6, -1, 0, 1, 5, 6, 7, 100], np.int64)
    run_both(divmod_and_round, [x, k, np.zeros((9, 4), dtype), np.zeros((9, 2), np.int64), 9, 4],
             cpu_opts({'i': parpy.threads(3)}), rtol=0, atol=0)


@parpy.jit
def rounds_ints_to_tens(k, N, y):
    for i in range(N):
        y[i, 0] = round(k[i], -1)
        y[i, 1] = np.round(k[i], -2)
        y[i, 2] = round(k[i], 2)
        y[i, 3] = round(N * 5, -1)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64])
def test_round_of_an_integer_to_negative_decimals_is_numpys(dtype):
    # halves to even, in the integer's type (wrapping as NumPy's cast:
    # round(np.uint8(255), -1) is 4); it was "not supported"
    info = np.iinfo(dtype)
    k = np.array([15, 25, 35, 45, 5, 127, info.max, info.min, 0, 250 % (info.max + 1)]).astype(dtype)
    if info.min < 0:
        k[-1] = -25
    y = np.zeros((len(k), 4), dtype)
    bits_of(run_both, rounds_ints_to_tens, [k, len(k), y], 2, cpu_opts({}))
    assert round(dtype(25), -1) == 20 and np.round(dtype(45), -2) == 0


@parpy.jit
def divmod_as_value(x, y):
    with parpy.gpu:
        t = divmod(x[0], 2)
        y[0] = 1.0


def test_divmod_not_unpacked_is_an_error():
    with pytest.raises(parpy.CompileError, match="`divmod` gives a pair"):
        divmod_as_value(np.ones(2), np.zeros(1), opts=cpu_opts())


@parpy.jit
def enumerate_ranges(x, y, z):
    with parpy.gpu:
        for k, i in enumerate(range(2, 7)):
            y[k] = x[i]
        for k, i in enumerate(range(9, 0, -3), 1):
            z[k] = i
        for i, v in zip(range(1, 20, 2), x):
            z[0] += i * v


def test_enumerate_and_zip_over_ranges_with_constant_bounds():
    run_both(enumerate_ranges, [np.arange(8.0), np.zeros(5), np.zeros(5)], cpu_opts())


@parpy.jit
def enumerate_reversed(x, y):
    with parpy.gpu:
        for k, v in enumerate(reversed(x[1:])):
            y[k] = v * 10 + k
        for i, v in zip(reversed(range(3, 12, 4)), x):
            y[7] += i * v


def test_enumerate_and_zip_of_reversed_arrays_and_ranges():
    run_both(enumerate_reversed, [np.arange(6.0), np.zeros(8)], cpu_opts())


# --------------------------------------------------------------------------
# np.var / np.std / .var() / .std() and np.linalg.norm of slices (each was
# "no parpy equivalent")


@parpy.jit
def spread(x, k, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.var(x[i, :])
        y[i, 1] = x[i, 1:].std()
        y[i, 2] = np.linalg.norm(x[i, :])
        # a layer norm
        y[i, 3] = (x[i, 0] - x[i, :].mean()) / np.sqrt(x[i, :].var() + 1e-5)
        # integers: float64, as NumPy
        z[i, 0] = np.std(k[i, :])
        z[i, 1] = np.linalg.norm(k[i, :])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_var_std_and_norm_as_numpy(dtype):
    x = (rng(50).standard_normal((6, 33)) * 3 + 1).astype(dtype)
    k = rng(51).integers(-50, 50, (6, 33)).astype(np.int16)
    got = run_both(spread, [x, k, np.zeros((6, 4), dtype), np.zeros((6, 2)), 6],
                   cpu_opts({'i': parpy.threads(3)}),
                   rtol=2e-5 if dtype == np.float32 else 1e-12, atol=1e-6)
    np.testing.assert_allclose(got[2][:, 0], x.var(axis=1), rtol=2e-5)
    np.testing.assert_allclose(got[3][:, 1], np.linalg.norm(k, axis=1), rtol=1e-12)


@parpy.jit
def any_all(x, b, y, c, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.any(x[i, :] > 0.9)
        y[i, 1] = x[i, :].all()
        y[i, 2] = any(b[i, :])
        y[i, 3] = all(x[i, :] < 2.0)
        y[i, 4] = b[i, 1:].any() and not np.all(b[i, :])
        c[i] = np.count_nonzero(x[i, :] > 0.5) * 10 + np.count_nonzero(b[i, :])


def test_any_all_and_count_nonzero_of_slices():
    # (each was "no parpy equivalent"); NaN counts as true, as in NumPy
    x = rng(60).random((6, 9))
    x[1, 3] = 0.0
    x[2, :] = np.nan
    x[3, 4] = 3.0
    b = rng(61).random((6, 9)) > 0.7
    b[0] = True
    b[5] = False
    run_both(any_all, [x, b, np.zeros((6, 5), np.bool_), np.zeros(6, np.int64), 6],
             cpu_opts({'i': parpy.threads(3)}))


# --------------------------------------------------------------------------
# bool(x) and len of slices and rows (were "cannot call `bool`" and "`len`
# takes one array argument")


@parpy.jit
def truth_and_lengths(x, k, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = bool(x[i, 0]) + 2 * bool(k[i]) + 4 * bool(x[i, 1] - x[i, 1])
        y[i, 1] = len(x[i, 1:]) + 10 * len(x[i]) + 100 * len(x[1:-1, ::2]) + 1000 * len(x[:, 0])
        y[i, 2] = len(x[i, 2::-1]) + 10 * len(x[i, 9:])


def test_bool_is_pythons_truth_and_len_takes_slices_and_rows():
    x = np.array([[0.0, 1.0, 2.0], [-0.0, np.nan, 0.5], [np.inf, 0.0, 3.0], [1e-300, -1.0, 0.0]])
    got = run_both(truth_and_lengths, [x, np.array([0, 3, -1, 0]), np.zeros((4, 3), np.int64), 4],
                   cpu_opts({'i': parpy.threads(2)}))
    assert list(got[2][:, 0]) == [0, 6, 3, 1]   # NaN is true, and so is NaN - NaN
    assert got[2][0, 1] == 2 + 30 + 200 + 4000


@parpy.jit
def len_of_an_element(x, y):
    with parpy.gpu:
        y[0] = len(x[0, 0])


def test_len_of_an_element_is_an_error():
    with pytest.raises(TypeError):
        len_of_an_element.py_func(np.zeros((2, 2)), np.zeros(1, np.int64))
    with pytest.raises(parpy.CompileError, match="`len` of a number"):
        len_of_an_element(np.zeros((2, 2)), np.zeros(1, np.int64), opts=cpu_opts())


@parpy.jit
def lengths_of_expressions(x, y, N):
    parpy.label('i')
    for i in range(N):
        # (any array expression: was "`len` takes one array, ...")
        y[i] = len(x[i][0]) + 10 * len(x[i] * 2.0) + 100 * len(x[i].T) + 1000 * len(x[i, 0][1:])


def test_len_of_any_array_expression_is_its_first_dimension():
    got = run_both(lengths_of_expressions, [np.zeros((3, 4, 5)), np.zeros(3, np.int64), 3],
                   cpu_opts({'i': parpy.threads(3)}))
    assert list(got[1]) == [5 + 40 + 500 + 4000] * 3


# --------------------------------------------------------------------------
# Row views: `r = x[i]` names row i of x, as NumPy's view (was "`x` has 2
# dimensions but 1 index was given")


def double_at(row, j):
    return row[j] * 2.0


@parpy.jit
def row_views(x, z, y, N):
    parpy.label('i')
    for i in range(N):
        r = x[i]
        zi = z[i]
        last = x[-1]
        k = i
        row_k = x[k]
        k = 0                      # the view stays on row i
        y[i, 0] = r[0] + r[-1] + last[1] + row_k[2]
        y[i, 1] = sum(r) + parpy.operators.sum(r[1:]) + len(r) + r[1:].max()
        s = 0.0
        for v in r:
            s += v
        y[i, 2] = s + double_at(r, 1) + double_at(zi[1], 0)
        zi[0, 0] = 5.0 + i         # a write through the view reaches z
        y[i, 3] = z[i, 0, 0] + zi[0][0] + zi[1, 2]
        y[i, 4:] = r[:3] * 2.0


def test_a_name_assigned_a_row_is_a_view_of_it():
    rng = np.random.default_rng(6)
    got = run_both(row_views, [rng.random((6, 5)), rng.random((6, 2, 3)), np.zeros((6, 7)), 6],
                   cpu_opts({'i': parpy.threads(3)}))
    assert (got[1][:, 0, 0] == 5.0 + np.arange(6)).all()


@parpy.jit
def row_assigned_twice(x, y, N):
    for i in range(N):
        r = x[i]
        if i > 0:
            r = x[i - 1]
        y[i] = r[0]


def test_a_row_name_assigned_twice_is_a_copy_where_no_write_tells():
    # neither `r` nor `x` is written: a copy of the row is what the view is
    x = np.random.default_rng(3).random((3, 2))
    got = run_both(row_assigned_twice, [x, np.zeros(3), 3], cpu_opts(), rtol=0, atol=0)
    assert np.array_equal(got[1], [x[0, 0], x[0, 0], x[1, 0]])


@parpy.jit
def rows_iterated_by_slices(x, y, N):
    parpy.label('i')
    for i in range(N):
        r = x[i]
        s = 0.0
        for v in r[::-2]:
            s = s * 2.0 + v
        for v in x[i][1:3]:
            s = s * 2.0 + v
        y[i] = s


def test_a_row_and_a_chained_subscript_iterate_by_their_slices():
    x = np.random.default_rng(7).random((5, 6))
    run_both(rows_iterated_by_slices, [x, np.zeros(5), 5], cpu_opts({'i': parpy.threads(5)}))


@parpy.jit
def slice_indexed_again(x, y):
    with parpy.gpu:
        y[:] = x[0:3][1]


def test_indexing_a_slice_again_reads_the_slices_dimension_not_the_arrays():
    # flattening the chain would read x[0:3, 1] (a column); NumPy reads row 1
    x = np.arange(9.0).reshape(3, 3)
    y = np.zeros(3)
    slice_indexed_again(x, y, opts=cpu_opts())
    assert list(y) == [3.0, 4.0, 5.0]


# --------------------------------------------------------------------------
# Python's `sum` of a slice adds in order, as Python does


@parpy.jit
def python_sums(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = sum(x[i, :])


def test_python_sum_of_floats_adds_in_order():
    # cancellation makes any other order visible: the C compiler vectorized
    # the loop (a reduction it may reorder) and gave another number
    row = np.array([1.0, 1e16, 1.0, -1e16] * 50 + [3.0, 1e-3] * 7)
    x = np.stack([row, row[::-1], np.roll(row, 3)])
    got = run_both(python_sums, [x, np.zeros(3), 3], cpu_opts({'i': parpy.threads(3)}))[1]
    assert [float(v) for v in got] == [sum(r) for r in x]
    assert got[0] != x[0].sum()   # NumPy's pairwise order gives another value here


# --------------------------------------------------------------------------
# loops over tuples (and lists) of numbers: stencil offsets and weights


@parpy.jit
def smooth3(x, y, N):
    parpy.label('i')
    for i in range(1, N - 1):
        s = x[i] * 0
        for d, w in ((-1, 0.25), (0, 0.5), (1, 0.25)):
            s += w * x[i + d]
        y[i] = s


def test_a_loop_over_a_tuple_of_offsets_and_weights():
    # the weights are Python floats (weak): float32 stays float32, bit for bit
    x = rng(1).random(9, dtype=np.float32)
    got = run_both(smooth3, [x, np.zeros(9, np.float32), 9], cpu_opts({'i': parpy.threads(4)}),
                   rtol=0, atol=0)[1]
    assert got.dtype == np.float32


@parpy.jit
def life_step(g, out, N):
    parpy.label('i')
    for i in range(1, N - 1):
        for j in range(1, N - 1):
            n = 0
            for dx, dy in [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]:
                n += g[i + dx, j + dy]
            out[i, j] = 1 if n == 3 or (n == 2 and g[i, j] == 1) else 0


def test_game_of_life_with_a_list_of_neighbour_offsets():
    g = (rng(2).random((12, 12)) < 0.4).astype(np.int32)
    run_both(life_step, [g, np.zeros((12, 12), np.int32), 12], cpu_opts({'i': parpy.threads(8)}))


@parpy.jit
def tuple_generators(x, y, z, N):
    parpy.label('i')
    for i in range(1, N - 1):
        y[i] = sum(x[i + d] for d in (-1, 0, 1))
        z[i] = max(x[i + d] * w for d, w in ((-1, 2.0), (1, 0.5)))


def test_generators_over_tuples():
    x = rng(3).random(10)
    run_both(tuple_generators, [x, np.zeros(10), np.zeros(10), 10], cpu_opts({'i': parpy.threads(8)}))


@parpy.jit
def first_threshold(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = -1.0
        for c in (0.25, 0.5, 0.75):
            if x[i] < c:
                y[i] = c
                break


def test_break_leaves_a_loop_over_a_tuple():
    x = rng(4).random(16)
    run_both(first_threshold, [x, np.zeros(16), 16], cpu_opts({'i': parpy.threads(4)}))


def test_tuple_loops_compile_for_cuda_and_metal():
    check_gpu_code(smooth3, lambda b: [np.zeros(9, np.float32), np.zeros(9, np.float32), 9],
                   {'i': parpy.threads(4)}, "smooth3")


# --------------------------------------------------------------------------
# helpers that return several values: `return a, b`, unpacked by the caller


@parpy.jit
def rotate(a, b, c, s):
    return c * a - s * b, s * a + c * b


@parpy.jit
def spin(x, y, N):
    parpy.label('i')
    for i in range(N):
        u, v = x[i], y[i]
        for k in range(3):
            u, v = rotate(u, v, 0.8, 0.6)     # the arguments are the targets
        x[i], y[i] = u, v


def test_a_helper_returns_a_pair():
    r = rng(5)
    run_both(spin, [r.random(8), r.random(8), 8], cpu_opts({'i': parpy.threads(4)}))


@parpy.jit
def row_summary(x, i, scale=1.0):
    m = np.mean(x[i, :])
    return m * scale, np.std(x[i, :]), np.argmax(x[i, :])


@parpy.jit
def normalized_peaks(x, y, N):
    parpy.label('i')
    for i in range(N):
        m, s, k = row_summary(x, i, scale=2.0)
        y[i] = (x[i, k] - m) / s


def test_a_helper_returns_reductions_by_name():
    x = rng(6).random((5, 40), dtype=np.float32)
    run_both(normalized_peaks, [x, np.zeros(5, np.float32), 5], cpu_opts({'i': parpy.threads(5)}))


@parpy.jit
def early_exit(x, y, N):
    if N == 0:
        return None
    parpy.label('i')
    for i in range(N):
        y[i] = x[i] * 2.0
    return None


def test_return_none_is_a_bare_return():
    run_both(early_exit, [np.arange(4.0), np.zeros(4), 4], cpu_opts({'i': parpy.threads(4)}))


# --------------------------------------------------------------------------
# np.linalg.norm(v, ord) of a vector and math.log(x, base): NumPy's and
# Python's formulas (were refused: "supports only `ord=None`", "`math.log`
# takes 1 argument")


@parpy.jit
def vector_norms(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.linalg.norm(x[i, :], 1)
        y[i, 1] = np.linalg.norm(x[i, :], np.inf)
        y[i, 2] = np.linalg.norm(x[i, :], -np.inf)
        y[i, 3] = np.linalg.norm(x[i, :], 0)
        y[i, 4] = np.linalg.norm(x[i, :], 3)
        y[i, 5] = np.linalg.norm(x[i, :], ord=0.5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32],
                         ids=lambda d: np.dtype(d).name)
def test_vector_norms_of_an_ord_are_numpys(dtype):
    x = (rng(11).standard_normal((4, 9)) * 3).astype(dtype)
    x[1, :3] = 0
    rt = np.linalg.norm(x[0], 1).dtype
    run_both(vector_norms, [x, np.zeros((4, 6), rt), 4], cpu_opts({'i': parpy.threads(4)}),
             rtol=0, atol=0)


@parpy.jit
def logs_of_a_base(x, y, N):
    for i in range(N):
        y[i] = math.log(x[i], 2) + math.log(x[i] + 1.0, 10.0)


def test_math_log_of_a_base_is_pythons():
    x = rng(12).random(6) * 100 + 0.5
    run_both(logs_of_a_base, [x, np.zeros(6), 6], cpu_opts(), rtol=0, atol=0)


@parpy.jit
def weighted_positions(x, w, y, N):
    parpy.label('i')
    for i in range(N):
        for k, (a, b) in enumerate(zip(x[i, :], w)):
            y[i, k] = a * b + k
        for k, (a, b, c) in enumerate(zip(x[i, 1:], x[i, :], w), 1):
            y[i, k] += a - b * c


def test_a_tuple_inside_a_loop_target_unpacks_enumerate_of_zip():
    # (was "loop targets must be a name or a tuple of names")
    rng = np.random.default_rng(21)
    x, w = rng.random((4, 9)), rng.random(9)
    run_both(weighted_positions, [x, w, np.zeros((4, 9)), 4], cpu_opts({'i': parpy.threads(4)}),
             rtol=0, atol=0)


@parpy.jit
def polygon_areas(pts, quads, y, z, N):
    parpy.label('i')
    for i in range(N):
        # (a loop over an array of rows unpacks each row, as Python does:
        # was "a tuple loop target needs `enumerate(...)` or `zip(...)`")
        area = 0.0
        px, py = pts[i, -1]
        for qx, qy in pts[i]:
            area += px * qy - qx * py
            px, py = qx, qy
        y[i] = abs(area) / 2
        s = 0.0
        for a, b in quads[i, 1:]:       # rows of rows: views
            s = s * 0.5 + a.sum() - b[1]
        z[i] = s


def test_a_tuple_loop_target_unpacks_the_rows_of_an_array():
    r = np.random.default_rng(22)
    pts, quads = r.random((4, 5, 2)), r.random((4, 3, 2, 2))
    got = run_both(polygon_areas, [pts, quads, np.zeros(4), np.zeros(4), 4],
                   cpu_opts({'i': parpy.threads(4)}), rtol=0, atol=0)
    square = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.0, 0.0]])
    got = run_both(polygon_areas, [np.stack([square] * 4), quads, np.zeros(4), np.zeros(4), 4],
                   cpu_opts({'i': parpy.threads(4)}), rtol=0, atol=0)
    assert list(got[2]) == [1.0] * 4


@parpy.jit
def columns(x, m, y, z, N):
    parpy.label('i')
    for i in range(N):
        # (a loop over `x.T` walks the columns: was "`for` loops must
        # iterate over `range(...)`, an array or a slice of one")
        s = 0.0
        for j, col in enumerate(x[i].T):
            s += j * col.sum() - col[0]
        for a, b, c in x[i].T:
            s = s * 0.5 + a - b * c
        y[i] = s
        t = 0.0
        for col in m.T:
            t += col[i] * col.max()
        z[i] = t


def test_a_loop_over_a_transpose_walks_the_columns():
    r = np.random.default_rng(23)
    run_both(columns, [r.random((4, 3, 5)), r.random((4, 6)), np.zeros(4), np.zeros(4), 4],
             cpu_opts({'i': parpy.threads(4)}), rtol=0, atol=0)


@parpy.jit
def rows_of_three_into_two(pts, y, N):
    for i in range(N):
        for a, b in pts[i]:
            y[i] += a * b


def test_rows_of_another_length_are_python_s_value_error():
    pts = np.zeros((2, 4, 3))
    with pytest.raises(ValueError):
        rows_of_three_into_two.py_func(pts, np.zeros(2), 2)
    with pytest.raises(parpy.CompileError, match="cannot unpack rows of 3 values into 2 targets"):
        rows_of_three_into_two(pts, np.zeros(2), 2, opts=cpu_opts())


def test_other_nested_loop_targets_are_refused_with_what_to_write():
    @parpy.jit
    def pairs(x, w, y):
        for (a, b), c in zip(zip(x, w), w):
            y[0] += a * b * c

    with pytest.raises(parpy.CompileError, match=r"unpacks the elements of `zip` in `enumerate\(zip"):
        pairs(np.ones(3), np.ones(3), np.zeros(1), opts=cpu_opts())


@parpy.jit
def parts(x, f, w, N):
    parpy.label('i')
    for i in range(N):
        a, b = np.modf(x[i])
        f[i] = a
        w[i] = b
        f[i + N] = np.modf(x[i] * 3)[0]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int8],
                         ids=lambda d: np.dtype(d).name)
def test_modf_gives_numpys_parts(dtype):
    # (was "cannot call `np.modf`")
    x = np.array([2.5, -2.5, -0.0, 0.0, -3.0, np.inf, -np.inf, np.nan, 1e-8, 7.75],
                 np.float64)
    if np.dtype(dtype).kind == "i":
        x = np.array([3, -4, 0, 127, -128, 5, 6, 7, 8, 9])
    x = x.astype(dtype)
    t = np.modf(x)[0].dtype
    f, w = np.zeros(20, t), np.zeros(10, t)
    f, w = run_both(parts, [x, f, w, 10], cpu_opts({'i': parpy.threads(10)}), rtol=0, atol=0)[1:3]
    want_f, want_w = np.modf(x)
    assert np.array_equal(np.signbit(f[:10]), np.signbit(want_f))
    assert np.array_equal(np.signbit(w), np.signbit(want_w))


@parpy.jit
def truths(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.all(x[i, 0] > 0.5)
        y[i, 1] = np.any(np.isnan(x[i, 2]))
        y[i, 2] = np.any(x[i, 5])
        y[i, 3] = np.all(np.isnan(x[i, :]) | (x[i, :] > 0))


def test_any_and_all_of_a_number_are_its_truth():
    # (was "the argument of the `min` reduction contains no slice")
    x = np.random.default_rng(22).random((4, 8))
    x[1, 2], x[2, 5] = np.nan, 0.0
    run_both(truths, [x, np.zeros((4, 4), bool), 4], cpu_opts({'i': parpy.threads(4)}),
             rtol=0, atol=0)


# --------------------------------------------------------------------------
# Python's `pow(a, b)` is `a ** b`; NumPy's norm of a matrix is that of its
# elements in a row (the Frobenius norm)


@parpy.jit
def powers_and_norms(x, k, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = pow(x[i, 0, 0], 2) + pow(k[i, 0], 3) + pow(2, -1) + pow(k[i, 1], 2.0)
        y[i, 1] = np.linalg.norm(x[i, :, :])
        y[i, 2] = np.sum(pow(x[i, 0, :], 2.0))
        y[i, 3] = np.linalg.norm(x[i, 0:2, 1:3])


def test_pow_and_the_norm_of_a_matrix():
    x = rng(5).standard_normal((4, 3, 3))
    k = rng(6).integers(-3, 4, (4, 2))
    run_both(powers_and_norms, [x, k, np.zeros((4, 4)), 4], cpu_opts({'i': parpy.threads(4)}))


# --------------------------------------------------------------------------
# `**` of integers: Python's ints give a float for a negative exponent;
# NumPy's integers raise ValueError for one


@parpy.jit
def int_powers(k, y, N):
    e = -2
    parpy.label('i')
    for i in range(N):
        y[i, 0] = 2 ** -1 + 3 ** e + pow(2, -3)
        y[i, 1] = 2 ** i + k[i] ** 2 + k[i] ** i
        y[i, 2] = k[i] ** (k[i] - 3) if k[i] >= 3 else -1


@parpy.jit
def numpy_int_to_a_negative_power(k, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = k[i] ** (k[i] - 3)


@parpy.jit
def python_int_to_a_run_time_negative_power(k, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = 2 ** (i - 2)


def test_integer_powers_follow_python_and_numpy():
    opts = cpu_opts({'i': parpy.threads(4)})
    k = np.array([1, 3, 4, 2])
    run_both(int_powers, [k, np.zeros((4, 3)), 4], opts)
    expect_raised(numpy_int_to_a_negative_power, [k, np.zeros(4), 4], opts, ValueError,
                  "Integers to negative integer powers are not allowed.", "test_natural.py:")


def test_a_python_int_to_a_run_time_negative_power_raises():
    # (Python's answer here is a float, which parpy's int power cannot hold:
    # a clear error, not a wrong number)
    opts = cpu_opts({'i': parpy.threads(4)})
    with pytest.raises(ValueError, match="a negative exponent makes Python's int power a float"):
        python_int_to_a_run_time_negative_power(np.ones(4), np.zeros(4), 4, opts=opts)


# --------------------------------------------------------------------------
# A local lambda, `f = lambda a: ...`, called after it: its body where the
# call is, reading the names it does not bind then, as Python's lambda
# does when it is called (was "lambda expressions are not supported")


@parpy.jit
def black_scholes_calls(s, y, N):
    parpy.label('i')
    for i in range(N):
        K, T, r, v = 100.0, 1.0, 0.05, 0.2
        cnd = lambda d: 0.5 * (1 + math.erf(d / math.sqrt(2)))  # noqa: E731
        d1 = (math.log(s[i] / K) + (r + 0.5 * v * v) * T) / (v * math.sqrt(T))
        d2 = d1 - v * math.sqrt(T)
        y[i] = s[i] * cnd(d1) - K * math.exp(-r * T) * cnd(d2)


@parpy.jit
def lambda_rules(x, y, N):
    parpy.label('i')
    for i in range(N):
        scale = 2.0
        f = lambda a, b: a * scale - b  # noqa: E731
        scale = 3.0                     # (read when f is called)
        sq = lambda v: (v ** 2).sum()   # noqa: E731
        g = lambda a: f(a, a) + 1       # noqa: E731
        h = lambda j: x[i, j] * j       # noqa: E731
        b = 5.0
        y[i, 0] = f(b, x[i, 0]) + g(x[i, 1])
        y[i, 1] = sq(x[i, :]) - sq(x[i, 2:4])
        y[i, 2] = sum(h(k) for k in range(6))


def test_a_local_lambda_is_called_as_python_calls_it():
    s = 80.0 + 40.0 * rng(40).random(6)
    run_both(black_scholes_calls, [s, np.zeros(6), 6], cpu_opts({'i': parpy.threads(6)}),
             rtol=0, atol=0)
    x = rng(41).random((4, 6))
    got = run_both(lambda_rules, [x, np.zeros((4, 3)), 4], cpu_opts({'i': parpy.threads(4)}),
                   rtol=0, atol=0)
    assert np.allclose(got[1][:, 0], 5.0 * 3.0 - x[:, 0] + x[:, 1] * 2.0 + 1)


def lambda_reads_a_generator_name(x, y, N):
    for i in range(N):
        j = 2
        h = lambda a: a * j  # noqa: E731
        y[i] = sum(h(x[i, j]) for j in range(3))


def lambda_in_a_branch(x, y, N):
    for i in range(N):
        if x[i, 0] > 0:
            h = lambda a: a * 2  # noqa: E731
        else:
            h = lambda a: a * 3  # noqa: E731
        y[i] = h(1.0)


def lambda_as_a_value(x, y, N):
    for i in range(N):
        h = lambda a: a  # noqa: E731
        g = h
        y[i] = g(1.0)


def lambda_calls_itself(x, y, N):
    for i in range(N):
        h = lambda a: h(a - 1) if a > 0 else 0  # noqa: E731
        y[i] = h(3)


def lambda_with_a_default(x, y, N):
    for i in range(N):
        h = lambda a, b=2.0: a - b  # noqa: E731
        y[i] = h(1.0)


def lambda_with_a_generator_of_its_argument(x, y, N):
    for i in range(N):
        f = lambda a: sum(a * k for k in range(3))  # noqa: E731
        k = 5.0
        y[i] = f(k)


@pytest.mark.parametrize("fn, message", [
    (lambda_with_a_generator_of_its_argument,
     "parpy cannot call the lambda `f` here: a generator in it binds `k`, a parameter or a name the arguments read"),
    (lambda_reads_a_generator_name, "the lambda `h` reads `j`, which the generator around this call binds"),
    (lambda_in_a_branch, "the lambda `h` is defined in a block this call is outside of"),
    (lambda_as_a_value, "`h` names a lambda, which parpy functions can only call"),
    (lambda_calls_itself, "a lambda cannot call itself in a parpy function"),
    (lambda_with_a_default, "a lambda in a parpy function takes plain parameters only"),
])
def test_what_a_local_lambda_cannot_do_is_a_located_error(fn, message):
    with pytest.raises(parpy.CompileError) as e:
        parpy.jit(fn)(rng(42).random((3, 4)), np.zeros(3), 3, opts=cpu_opts())
    assert str(e.value).splitlines()[0] == "error: " + message, str(e.value)
    assert "test_natural.py:" in str(e.value)


# --------------------------------------------------------------------------
# A nested `def f(a): return ...` is a local lambda (was "nested function
# definitions are not supported")


@parpy.jit
def nested_functions(x, y, N):
    parpy.label('i')
    for i in range(N):
        def smooth(a, b):
            """The mean of two values, scaled."""
            return (a + b) * 0.5 * w

        def sq(v):
            return v * v
        w = 2.0  # (read when smooth is called)
        y[i] = smooth(x[i, 0], sq(x[i, 1])) + sq(x[i, 2])


def test_a_nested_function_returning_an_expression_is_called_as_python_does():
    x = rng(43).random((5, 4))
    run_both(nested_functions, [x, np.zeros(5), 5], cpu_opts({'i': parpy.threads(5)}),
             rtol=0, atol=0)


def nested_function_of_statements(x, y, N):
    for i in range(N):
        def f(a):
            b = a * 2
            return b
        y[i] = f(x[i, 0])


def nested_function_calls_itself(x, y, N):
    for i in range(N):
        def f(a):
            return f(a - 1) if a > 0 else 0.0
        y[i] = f(3)


def nested_function_with_a_default(x, y, N):
    for i in range(N):
        def f(a, b=1.0):
            return a + b
        y[i] = f(x[i, 0])


@pytest.mark.parametrize("fn, message", [
    (nested_function_of_statements,
     "a function defined inside a parpy function can only return an expression"),
    (nested_function_calls_itself, "a lambda cannot call itself in a parpy function"),
    (nested_function_with_a_default,
     "a nested function in a parpy function takes plain parameters only"),
])
def test_what_a_nested_function_cannot_do_is_a_located_error(fn, message):
    with pytest.raises(parpy.CompileError) as e:
        parpy.jit(fn)(rng(42).random((3, 4)), np.zeros(3), 3, opts=cpu_opts())
    assert str(e.value).splitlines()[0] == "error: " + message, str(e.value)
    assert "test_natural.py:" in str(e.value)


# --------------------------------------------------------------------------
# Walrus assignments, `(s := e)`: the assignment `s = e` before the
# statement, where Python evaluates it first; in a `while` condition, before
# each test (was "walrus assignments (`:=`) are not supported")


@parpy.jit
def walruses(x, y, N):
    parpy.label('i')
    for i in range(N):
        if (s := x[i, 0] + x[i, 1]) > 1.0:
            y[i, 0] = s
        elif (t := x[i, 2] * 2.0) > 0.5:
            y[i, 0] = t - s
        else:
            y[i, 0] = (u := s * 3.0) + u
        j = 0
        while (v := x[i, j]) < 0.9 and j < 5:
            j += 1
            if v < 0.1:
                continue
            y[i, 2] += v
        y[i, 1] = j + v  # (v read after the loop: every exit assigned it)
        y[i, 3] = (m := np.max(x[i, :])) - np.min(x[i, :]) / m


def test_a_walrus_assigns_where_python_evaluates_it():
    x = rng(44).random((8, 6))
    run_both(walruses, [x, np.zeros((8, 4)), 8], cpu_opts({'i': parpy.threads(8)}),
             rtol=0, atol=0)


@parpy.jit
def while_true_then_read(x, y, N):
    parpy.label('i')
    for i in range(N):
        j = 0
        while True:
            v = x[i, j] * 2.0
            if v > 1.0 or j == 5:
                break
            j += 1
        y[i] = v


def test_a_value_every_break_of_a_while_true_assigned_is_read_after_it():
    # (was "every iteration of the parallel loop `i` assigns the variable
    # `v`, and reads it before assigning it")
    x = rng(45).random((8, 6))
    run_both(while_true_then_read, [x, np.zeros(8), 8], cpu_opts({'i': parpy.threads(8)}),
             rtol=0, atol=0)


def walrus_in_or(x, y, N):
    for i in range(N):
        y[i] = x[i, 0] > 0 or (s := x[i, 1]) > 0


def walrus_in_a_generator(x, y, N):
    for i in range(N):
        y[i] = sum((s := x[i, j]) for j in range(3))


def walrus_after_a_read(x, y, N):
    for i in range(N):
        s = 1.0
        y[i] = s + (s := x[i, 0])


def walrus_in_while_else(x, y, N):
    for i in range(N):
        j = 0
        while (v := x[i, j]) > 0.5:
            j += 1
        else:
            j = -1
        y[i] = j


@pytest.mark.parametrize("fn, message", [
    (walrus_in_or, "a walrus assignment (`:=`) here is not supported in parpy functions"),
    (walrus_in_a_generator, "a walrus assignment (`:=`) here is not supported in parpy functions"),
    (walrus_after_a_read,
     "a walrus assignment (`:=`) after a part of its statement that could tell when it ran"),
    (walrus_in_while_else, "a `while` loop whose condition has a walrus assignment (`:=`) "
     "cannot have an `else:` in parpy functions"),
])
def test_what_a_walrus_cannot_be_is_a_located_error(fn, message):
    with pytest.raises(parpy.CompileError) as e:
        parpy.jit(fn)(rng(42).random((3, 4)), np.zeros(3), 3, opts=cpu_opts())
    assert str(e.value).splitlines()[0] == "error: " + message, str(e.value)
    assert "test_natural.py:" in str(e.value)


# --------------------------------------------------------------------------
# `and` / `or` of values that are not all bools give the operand that
# decides, as Python's do (were bools: `x[i] or 5.0` was 1.0, a silent
# wrong result)


@parpy.jit
def and_or_values(x, k, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = x[i, 0] > 0 and x[i, 1] or x[i, 2]
        y[i, 1] = x[i, 1] or 5.0
        y[i, 2] = k[i] and k[i] * 2 - 1
        y[i, 3] = (x[i, 0] > 0 and 5) + 0.5
        y[i, 4] = x[i, 1] or x[i, 0] or 7.0
        y[i, 5] = not (x[i, 0] and x[i, 1])


def test_and_or_give_the_deciding_operand_as_python_does():
    x = rng(43).standard_normal((6, 3))
    x[0, 1] = x[2, 1] = 0.0
    x[1, 0] = x[3, 0] = -1.0
    x[4, :2] = 0.0
    k = np.array([0, 3, -1, 0, 2, 5])
    got = run_both(and_or_values, [x, k, np.zeros((6, 6)), 6],
                   cpu_opts({'i': parpy.threads(6)}), rtol=0, atol=0)
    assert got[2][0, 1] == 5.0 and got[2][4, 4] == 7.0


@parpy.jit
def rounds_of_python_floats(alpha, y, N):
    for i in range(N):
        # (Python's round of a Python float rounds its exact value: 2.675
        # is 2.67499..., so 2.67; NumPy's np.round(2.675, 2) is 2.68)
        y[0] = round(2.675, 2)
        y[1] = round(alpha, 2)
        y[2] = round(0.125, 2) + round(-0.001, 2)
        y[3] = np.round(2.675, 2)
        y[4] = round(np.float64(2.675), 2)


def test_python_round_of_a_python_float_is_pythons():
    got = run_both(rounds_of_python_floats, [1.005, np.zeros(5), 1], cpu_opts(), rtol=0, atol=0)
    assert list(got[1]) == [2.67, 1.0, 0.12, 2.68, 2.68]


@parpy.jit
def and_of_two_types(x, k, y, N):
    for i in range(N):
        y[i] = k[i] and x[i, 1]


@parpy.jit
def and_or_conditions(x, k, y, N):
    parpy.label('i')
    for i in range(N):
        # (read for their truth only, operands of any types)
        if (k[i] and x[i, 1]) or (x[i, 0] and not k[i]):
            y[i, 0] = 1.0
        y[i, 1] = 1.0 if k[i] or x[i, 1] else 2.0
        y[i, 2] = not (k[i] and x[i, 0])


def test_and_or_read_for_their_truth_take_operands_of_any_types():
    x = rng(44).standard_normal((6, 2))
    x[0, 1] = x[2, 0] = 0.0
    run_both(and_or_conditions, [x, np.array([0, 3, 0, 1, 0, 2]), np.zeros((6, 3)), 6],
             cpu_opts({'i': parpy.threads(6)}), rtol=0, atol=0)


@parpy.jit
def and_or_of_numpy_types(a8, b16, c32, d64, y16, y32, y64, N):
    for i in range(N):
        y16[i] = a8[i] and b16[i]
        y32[i] = c32[i] or a8[i]
        y64[i, 0] = c32[i] and d64[i]
        y64[i, 1] = b16[i] and d64[i] or a8[i]
        y64[i, 2] = a8[i] or 1000


@parpy.jit
def and_of_int64_and_float64_computed(x, k, y, N):
    for i in range(N):
        y[i] = (k[i] and x[i, 1]) * 2.0


def test_and_or_of_numpy_values_of_several_types_stored_as_python_stores_them():
    # (two NumPy types were "`and` of values of different types"; stored
    # into an element, Python stores the operand that decides as it is)
    n = 5
    a8 = np.array([0, 1, -1, 2, 127], np.int8)
    b16 = np.array([1, 0, 300, 0, -7], np.int16)
    c32 = np.array([0.0, 1.5, -0.0, np.nan, 0.1], np.float32)
    d64 = np.array([2.5, 0.0, 1e300, -3.0, 0.0])
    run_both(and_or_of_numpy_types,
             [a8, b16, c32, d64, np.zeros(n, np.int16), np.zeros(n, np.float32),
              np.zeros((n, 3)), n], cpu_opts(), rtol=0, atol=0)
    # stored as it is, whatever the types (an int64 into float64, as Python
    # stores it)
    k = np.array([0, 2**53 + 1, 3], np.int64)
    x = np.array([[0.0, 0.5], [1.0, 0.0], [2.0, 7.25]])
    run_both(and_of_two_types, [x, k, np.zeros(3), 3], cpu_opts(), rtol=0, atol=0)


def test_and_or_of_several_types_computed_further_is_an_error():
    # (Python's `k[i] and x[i, 1]` is an int64 or a float64: the product
    # is then of that type, which the compiled program must know)
    with pytest.raises(parpy.CompileError) as e:
        and_of_int64_and_float64_computed(np.ones((2, 2)), np.ones(2, np.int64), np.zeros(2), 2,
                                          opts=cpu_opts())
    text = str(e.value)
    assert "`and` of values of types `int64`, `float64`" in text
    assert "`y[i] = a and b`" in text


def truth_of_a_slice_or(x, y, N):
    for i in range(N):
        y[i, :] = x[i, :] or 1.0


def truth_of_a_slice_not(x, y, N):
    for i in range(N):
        y[i, :] = not x[i, :]


def truth_of_a_slice_test(x, y, N):
    for i in range(N):
        y[i, :] = 1.0 if x[i, :] > 0 else 2.0


@pytest.mark.parametrize("fn", [truth_of_a_slice_or, truth_of_a_slice_not, truth_of_a_slice_test])
def test_the_truth_of_an_array_is_pythons_value_error(fn):
    # (each was computed element by element: a silent result where Python
    # raises)
    x = rng(45).standard_normal((3, 4))
    with pytest.raises(ValueError, match="ambiguous"):
        fn(x, np.zeros((3, 4)), 3)
    with pytest.raises(parpy.CompileError,
                       match="the truth value of an array with more than one element is ambiguous"):
        parpy.jit(fn)(x, np.zeros((3, 4)), 3, opts=cpu_opts())


@parpy.jit
def set_first(r, v):
    r[0] = v
    return v


@parpy.jit
def first_of_rows(x, N):
    parpy.label('i')
    for i in range(N):
        set_first(x[i], 9.0)


def test_a_helper_called_for_its_writes_drops_its_value():
    # Python drops the returned value; parpy refused the call ("the result
    # of this call is not used ... remove the call"), which would drop the
    # write too
    out = run_both(first_of_rows, [np.zeros((3, 4)), 3], cpu_opts({'i': parpy.threads(3)}))
    assert out[0][:, 0].tolist() == [9.0] * 3 and out[0][:, 1:].sum() == 0


@parpy.jit
def add_u64(a, k, o, N):
    parpy.label('i')
    for i in range(N):
        o[i] = a[i] + k
        if k > 5:
            o[i] += 1


@pytest.mark.parametrize("specialize", [True, False])
@pytest.mark.parametrize("k", [5, 2 ** 63, 2 ** 64 - 1])
def test_numpy_uint64_arguments_past_2_63(k, specialize):
    # np.uint64(2**63) was refused: "does not fit in a 64-bit integer"
    a = np.array([1, 2], np.uint64)
    opts = cpu_opts({'i': parpy.threads(2)}, specialize_scalars=specialize)
    with np.errstate(over="ignore"):
        out = run_both(add_u64, [a, np.uint64(k), np.zeros(2, np.uint64), 2], opts)
        want = a + np.uint64(k) + np.uint64(k > 5)
    assert out[2].tolist() == want.tolist()


def test_a_python_int_argument_past_2_63_is_its_literal_when_specialized():
    # a Python int of 2**63 .. 2**64 - 1 was refused ("does not fit in a
    # 64-bit integer") where its literal works; specialized, it is that
    # literal (a uint64 takes it, `k > 5` is Python's)
    a = np.array([1, 2], np.uint64)
    opts = cpu_opts({'i': parpy.threads(2)})
    for k in (2 ** 63, 2 ** 64 - 2):
        with np.errstate(over="ignore"):
            out = run_both(add_u64, [a, k, np.zeros(2, np.uint64), 2], opts)
        assert out[2].tolist() == [(1 + k + 1) % 2 ** 64, (2 + k + 1) % 2 ** 64]
    # an int64 cannot take it: NumPy's OverflowError, the literal's error
    with pytest.raises(OverflowError):
        add_u64.py_func(np.zeros(2, np.int64), 2 ** 63, np.zeros(2, np.int64), 2)
    with pytest.raises(parpy.CompileError,
                       match="Python integer 9223372036854775808 out of bounds for int64"):
        add_u64(np.zeros(2, np.int64), 2 ** 63, np.zeros(2, np.int64), 2, opts=opts)
    # passed at run time (an int64 there): a clear error naming the fix
    o = cpu_opts({'i': parpy.threads(2)}, specialize_scalars=False)
    with pytest.raises(OverflowError, match=r"past int64.*np\.uint64\(k\)"):
        add_u64(a, 2 ** 63, np.zeros(2, np.uint64), 2, opts=o)


GUB = np.uint64(2 ** 64 - 1)


@parpy.jit
def below_gub(x, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i] = GUB - x[i]
        z[i] = (x[i] < GUB) * 2 + (GUB > 5)


def test_a_module_level_uint64_past_2_63_is_its_value():
    # it was refused: "`GUB` is a NumPy scalar of type uint64, which
    # cannot be used in parpy functions"
    x = np.array([1, 2, 255, 2 ** 64 - 1], np.uint64)
    out = run_both(below_gub, [x, np.zeros(4, np.uint64), np.zeros(4, np.int64), 4],
                   cpu_opts({'i': parpy.threads(2)}))
    assert out[1].tolist() == [2 ** 64 - 2, 2 ** 64 - 3, 2 ** 64 - 256, 0]
    assert out[2].tolist() == [3, 3, 3, 1]


@parpy.jit
def a_local_named_range(x, y, M):
    range = M - 1
    for v in x:
        y[0] += v * range
    for k, v in enumerate(x):
        y[1] += k * v
    for c in (1.0, 2.0):
        y[2] += c
    y[3] = sum(v for v in x)


def test_a_local_named_range_leaves_the_loops_over_arrays_alone():
    # (`for v in x` became a loop over `range(...)`, which read the local:
    # "`for` loops must iterate over `range(...)`, an array or a slice")
    run_both(a_local_named_range, [np.arange(1.0, 5.0), np.zeros(4), 3], cpu_opts())


@parpy.jit
def counter_after_its_loop(x, y, N, M):
    for i in range(N):
        y[i] = x[i]
    y[0] = i
    for i in range(M):
        y[i] += 1.0
    y[1] = i
    parpy.label('k')
    for k in range(N - 1, -1, -2):
        y[k] += 2.0
    y[2] = k


@pytest.mark.parametrize("N,M", [(5, 3), (5, 0), (1, 2)])
def test_a_loop_variable_read_after_its_loop_is_its_last_value(N, M):
    # (was "name `i` is not defined"): the loop runs a known number of
    # times, so Python's last value is known; one of zero runs keeps the
    # value from before
    x = np.arange(1.0, 6.0)
    run_both(counter_after_its_loop, [x, np.zeros(5), N, M], cpu_opts({'k': parpy.threads(4)}))


@parpy.jit
def counter_after_a_loop_with_break(x, y, N):
    for i in range(N):
        if x[i] > 2.0:
            break
    y[0] = i


def test_a_loop_variable_after_a_loop_that_may_break_is_its_value_at_the_break():
    # (was refused, "name `i` is not defined"; tests/test_unbound.py has
    # the loops that run zero times)
    run_both(counter_after_a_loop_with_break, [np.arange(5.0), np.zeros(1), 5], cpu_opts())
    run_both(counter_after_a_loop_with_break, [np.zeros(5), np.zeros(1), 5], cpu_opts())


@parpy.jit
def builtin_any_all(x, y):
    y[0] = all(x > 0) + all(x > 0)
    y[1] = any(x > 1) * 3 + np.any(x > 1)


def test_pythons_any_and_all_give_python_bools():
    # (`all(m) + all(m)` is 2 in Python; parpy added them as NumPy bools)
    run_both(builtin_any_all, [np.array([1.0, 2.0, 3.0]), np.zeros(2, np.int64)], cpu_opts())


@parpy.jit
def stepped(x, y, a, b, s):
    for i in range(a, b, s):
        y[i] = x[i] + i


RUN_TIME_STEPS = [(9, -1, -2), (0, 10, 3), (0, 10, -1), (3, 3, 1), (1, 10, 4), (9, 0, -4),
                  (-5, 10, 7)]


@pytest.mark.parametrize('a,b,s', RUN_TIME_STEPS)
def test_a_range_step_known_only_at_run_time_runs_as_pythons_range(a, b, s):
    # (it was "the step of `range` must be a non-zero integer constant")
    x = np.arange(10)
    for opts in (cpu_opts(), cpu_opts(specialize_scalars=False)):
        run_both(stepped, [x, np.zeros(10, np.int64), a, b, s], opts)


@parpy.jit
def stepped_last(x, y, a, b, s):
    i = -7
    for i in range(a, b, s):
        y[0] += x[i]
    y[1] = i


@parpy.jit
def stepped_inner(x, y, s, N):
    parpy.label('i')
    for i in range(N):
        for j in range(i, 10, s):
            y[i] += x[j] * (j + 1)


@parpy.jit
def stepped_labelled(x, y, a, s):
    parpy.label('i')
    for i in range(a, 10, s):
        y[i] = x[i] * 2


def test_a_run_time_step_keeps_pythons_last_value_and_runs_in_parallel_loops():
    x = np.arange(10.0)
    opts = cpu_opts({'i': parpy.threads(4)}, specialize_scalars=False)
    for a, b, s in RUN_TIME_STEPS:
        # (no iteration: the name keeps its value from before the loop)
        run_both(stepped_last, [x, np.zeros(2), a, b, s], cpu_opts(specialize_scalars=False))
    for s in (1, 2, 3, 11, -1):
        run_both(stepped_inner, [x, np.zeros(10), s, 10], opts)
    for a, s in ((0, 1), (1, 3), (9, -2), (8, -3), (10, -1)):
        run_both(stepped_labelled, [x, np.zeros(10), a, s], opts)


def test_a_run_time_step_compiles_for_the_gpus():
    def args_for(backend):
        return [np.arange(10.0, dtype=np.float32), np.zeros(10, np.float32), 3, 10]
    codes = check_gpu_code(stepped_inner, args_for, {'i': parpy.threads(10)}, "stepped_inner",
                           specialize_scalars=False)
    if parpy.CompileBackend.Cuda in codes:
        assert "range() arg 3 must not be zero" in codes[parpy.CompileBackend.Cuda]


def test_a_run_time_step_of_zero_is_pythons_value_error():
    x, y = np.arange(10), np.zeros(10, np.int64)
    # (a fresh function: specialized on s = 0 first, then at run time)
    fresh = parpy.jit(stepped.py_func)
    for opts in (cpu_opts(), cpu_opts(specialize_scalars=False)):
        with pytest.raises(ValueError, match="range\\(\\) arg 3 must not be zero"):
            fresh(x, y, 0, 10, 0, opts=opts)
    with pytest.raises(ValueError, match="range\\(\\) arg 3 must not be zero"):
        stepped(x, y, 0, 10, 0, opts=python_opts(cpu_opts()))
    assert not y.any()


DEBUG_SCALE = False


@parpy.jit
def chosen_side(x, y, N):
    for i in range(N):
        # (Python evaluates the side a condition known when compiling
        # chooses: the other was lowered too, and its Python int of 2**63
        # was "out of bounds for int64"; its float made the int a float)
        y[i, 0] = -2 ** 63 // -1 if False else x[i]
        y[i, 1] = (x[i] * 0.5 if DEBUG_SCALE else x[i]) // 2


def test_a_conditional_expression_known_when_compiling_is_its_chosen_side():
    x = np.array([3, -7, 2 ** 62], np.int64)
    got = run_both(chosen_side, [x, np.zeros((3, 2), np.int64), 3], cpu_opts(), rtol=0, atol=0)
    assert got[1][:, 1].tolist() == [1, -4, 2 ** 61]


@parpy.jit
def python_max_min(a, b, y):
    parpy.label('i')
    for i in range(4):
        y[i, 0] = max(a[i], b[i])
        y[i, 1] = min(a[i], b[i])
        y[i, 2] = max(a[i], b[i], a[i] * 0.5)
        y[i, 3] = min(a[i], 2.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_python_max_min_of_floats_compare_as_python_does(dtype):
    # (they were NumPy's maximum / minimum: max(1.0, nan) NaN where Python
    # gives 1.0, max(0.0, -0.0) -0.0 in Python mode where Python gives 0.0)
    vals = [0.0, -0.0, np.nan, 1.0]
    pairs = [(u, v) for u in vals for v in vals]
    opts = cpu_opts({'i': parpy.threads(2)})
    for k in range(0, len(pairs), 4):
        a = np.array([p[0] for p in pairs[k:k + 4]], dtype)
        b = np.array([p[1] for p in pairs[k:k + 4]], dtype)
        want = np.zeros((4, 4), dtype)
        python_max_min.py_func(a, b, want)
        for o in (opts, python_opts(opts)):
            y = np.zeros((4, 4), dtype)
            python_max_min(a, b, y, opts=o)
            assert y.tobytes() == want.tobytes(), (o.backend, a, b, y, want)


@parpy.jit
def python_max_min_of_rows(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = max(x[i, :])
        y[i, 1] = min(x[i, 1:])
        parpy.label('r')
        y[i, 2] = max(x[i, ::-1])
        y[i, 3] = np.max(x[i, :])


def rows_of_edge_values(dtype):
    vals = [np.nan, 1.0, -1.0, 0.0, -0.0, np.inf, -np.inf]
    return np.array(list(itertools.product(vals, repeat=3)), dtype)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("spec", [{}, {'i': parpy.threads(7), 'r': parpy.threads(2)}])
def test_python_max_min_of_a_row_fold_as_python_does(dtype, spec):
    # (they were NumPy's max / min of the row: NaN wherever a NaN was,
    # where Python keeps the first element unless a later one compares
    # greater, and the other zero of a tie of 0.0 and -0.0)
    x = rows_of_edge_values(dtype)
    want = np.zeros((len(x), 4), dtype)
    python_max_min_of_rows.py_func(x, want, len(x))
    for o in (cpu_opts(spec), python_opts(cpu_opts(spec))):
        y = np.zeros((len(x), 4), dtype)
        python_max_min_of_rows(x, y, len(x), opts=o)
        assert y.tobytes() == want.tobytes(), (o.backend, y, want)


@parpy.jit
def count_infinities(x, y, N):
    for i in range(N):
        y[i, 0] = np.isinf(x[i, 0]) * 1
        y[i, 1] = np.sum(np.isinf(x[i, :]))
        y[i, 2] = np.isinf(x[i, 0]) != np.isinf(x[i, 1])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_isinf_of_minus_infinity_is_true(dtype):
    # (C's isinf is -1 for -inf in glibc: `np.isinf(x) * 1` was -1, the
    # sum of [-inf, inf, 1] 0)
    x = np.array([[-np.inf, np.inf, 1.0], [1.0, -np.inf, -np.inf], [np.nan, 0.0, 2.0]], dtype)
    run_both(count_infinities, [x, np.zeros((3, 3), np.int64), 3], cpu_opts())


@parpy.jit
def numpy_extremes_of_zeros(a, b, y, N):
    for i in range(N):
        y[i, 0] = np.maximum(a[i], b[i])
        y[i, 1] = np.minimum(a[i], b[i])
        y[i, 2] = np.max(a[:])
        y[i, 3] = np.min(b[:])
        y[i, 4] = np.clip(a[i], b[i], None)
        y[i, 5] = a[i].clip(None, b[i])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_numpy_extremes_of_signed_zeros_bit_for_bit(dtype):
    # NumPy's float16 maximum / minimum keep the first of a tie, its others
    # the second; a one-sided clip is maximum / minimum (it kept the value)
    a = np.array([-0.0, 0.0], dtype)
    b = np.array([0.0, -0.0], dtype)
    want = np.zeros((2, 6), dtype)
    numpy_extremes_of_zeros.py_func(a, b, want, 2)
    got = np.zeros((2, 6), dtype)
    numpy_extremes_of_zeros(a, b, got, 2, opts=cpu_opts())
    assert np.signbit(got).tolist() == np.signbit(want).tolist(), (got, want)


@parpy.jit
def truths_of_empty_rows(x, y, N, k):
    for i in range(N):
        y[i, 0] = np.any(x[i, k:] > 0)
        y[i, 1] = all(x[i, k:])
        y[i, 2] = x[i, k:].all()
        y[i, 3] = np.allclose(x[i, k:], 0.0)


def test_any_and_all_of_an_empty_slice_are_false_and_true():
    # (they raised "zero-size array to reduction operation maximum")
    run_both(truths_of_empty_rows, [np.ones((2, 4)), np.zeros((2, 4), bool), 2, 4], cpu_opts())
    run_both(truths_of_empty_rows, [np.ones((2, 4)), np.zeros((2, 4), bool), 2, 1], cpu_opts())


@parpy.jit
def or_a_default(x, k8, y, z, N):
    for i in range(N):
        y[i, 0] = x[i] or -1
        y[i, 1] = x[i] and 2.5
        z[i] = k8[i] or 100


def test_and_or_with_a_python_number_the_type_holds_exactly():
    # (`x[i] or -1` was "`or` of values of different types": the operand
    # that decides has one value in either type)
    x = np.array([0.0, 1.5, -2.0])
    run_both(or_a_default, [x, np.array([0, 7, -3], np.int8), np.zeros((3, 2)),
                            np.zeros(3, np.int8), 3], cpu_opts(), rtol=0, atol=0)


@parpy.jit
def stepped_reversed(x, y, a, b, s):
    k = 0
    for i in reversed(range(a, b, s)):
        y[k] = x[i]
        k += 1
    y[k] = i


@pytest.mark.parametrize('a,b,s', RUN_TIME_STEPS)
def test_a_reversed_range_of_a_run_time_step_runs_backwards(a, b, s):
    # (it was "the step of `range` must be a non-zero integer constant")
    x = np.arange(20.0)
    for opts in (cpu_opts(), cpu_opts(specialize_scalars=False)):
        if len(range(a, b, s)) == 0:
            continue  # (`y[k] = i` after no iteration: `i` is not bound)
        run_both(stepped_reversed, [x, np.zeros(20), a, b, s], opts)


@parpy.jit
def two_values(v):
    return v + 1, v * 3


@parpy.jit
def two_through_a_call(v):
    q, r = two_values(v)
    return two_values(q + r)


@parpy.jit
def unpacks_a_returned_call(x, y, N):
    for i in range(N):
        a, b = two_through_a_call(x[i])
        y[i] = a + b


@parpy.jit
def unpacks_a_pair_kept_in_a_name(x, y, N):
    for i in range(N):
        t = two_values(x[i])
        a, b = t
        y[i] = a + b


def test_a_helper_that_returns_a_call_of_a_pair_returns_the_pair():
    # (it was "`two_values` returns 2 values: unpack them where it is called")
    got = run_both(unpacks_a_returned_call, [np.arange(4.0), np.zeros(4), 4], cpu_opts())
    want = np.zeros(4)
    unpacks_a_returned_call.py_func(np.arange(4.0), want, 4)
    assert got[1].tolist() == want.tolist()


@pytest.mark.parametrize("fn", [unpacks_a_pair_kept_in_a_name])
def test_a_pair_used_as_one_value_is_one_error(fn):
    # (the caller's `a, b = ...` added "only a tuple ... can be unpacked")
    with pytest.raises(parpy.CompileError) as e:
        fn(np.arange(4.0), np.zeros(4), 4, opts=cpu_opts())
    text = str(e.value)
    assert text.splitlines()[0] == (
        "error: `two_values` returns 2 values: unpack them where it is called")
    assert text.count("error:") == 1, text


@parpy.jit
def loop_var_assigned(y, N):
    k = 0
    for i in range(N):
        y[k] = i
        i = i * 10
        y[k + 1] = i
        k += 2
    y[k] = i


@parpy.jit
def loop_var_updated_in_a_branch(x, y):
    s = 0.0
    for i in range(6):
        if x[i] > 0.5:
            i += 3
        s += x[i % 6] * i
    y[0] = s
    y[1] = i


@parpy.jit
def loop_var_assigned_in_parallel(y, N):
    parpy.label('i')
    for i in range(N):
        i = 2 * i + 1
        y[i] = i


@pytest.mark.parametrize("specialize", [True, False])
def test_the_loop_variable_may_be_assigned_in_its_body(specialize):
    # (Python's next iteration takes the next value of the range: the
    # body's name is a copy of the counter; it was refused)
    opts = cpu_opts(specialize_scalars=specialize)
    got = run_both(loop_var_assigned, [np.zeros(12, np.int64), 5], opts)
    assert got[0].tolist()[:11] == [0, 0, 1, 10, 2, 20, 3, 30, 4, 40, 40]
    run_both(loop_var_updated_in_a_branch, [rng(3).random(9), np.zeros(2)], opts)
    run_both(loop_var_assigned_in_parallel, [np.zeros(10), 5],
             cpu_opts({'i': parpy.threads(4)}, specialize_scalars=specialize))


@parpy.jit
def range_of_numpy_bools(x, y):
    for i in range(x[0], x[1]):
        y[0] += i


def test_a_range_of_numpy_bools_is_pythons_type_error():
    x = np.array([False, True])
    with pytest.raises(TypeError, match="'numpy.bool' object cannot be interpreted as an integer"):
        range_of_numpy_bools.py_func(x, np.zeros(1))
    with pytest.raises(parpy.CompileTypeError) as e:
        range_of_numpy_bools(x, np.zeros(1), opts=cpu_opts())
    text = str(e.value)
    assert text.splitlines()[0] == (
        "error: 'numpy.bool' object cannot be interpreted as an integer")
    assert "range(x[0], x[1])" in text


@parpy.jit
def loop_over_np_array(x, y, x8):
    for i in range(3):
        for w in np.array([0.5, 1.5, 2.5]):
            y[i] += x[i] * w
        for k in np.array([3, 100]):
            x8[i] += k * x8[i]


def test_a_loop_over_np_array_of_a_list_reads_numpy_values():
    # (it was "`for` loops must iterate over `range(...)`, an array or a
    # slice of one"; the elements are NumPy's: `k * x8[i]` in int64)
    run_both(loop_over_np_array, [np.arange(3.0), np.zeros(3),
                                  np.array([1, 2, 3], np.int64)], cpu_opts())


@parpy.jit
def reassigned_loop_variable(x, y, N):
    parpy.label('p')
    for r in range(N):
        for k in range(4):
            k = 3 - k
        for j in range(5):
            if x[r, j] > 0.5:
                j = j * 10
        y[r] = x[r, k] + j


def test_a_loop_variable_its_body_assigns_is_read_after_the_loop_in_a_parallel_loop():
    # (it was "name `k` is not defined": Python's `k` holds what the last
    # iteration assigned)
    x = np.array([[0.1, 0.9, 0.3, 0.7, 0.2], [0.6, 0.1, 0.2, 0.3, 0.8]])
    run_both(reassigned_loop_variable, [x, np.zeros(2), 2], cpu_opts({'p': parpy.threads(2)}))


@parpy.jit
def sum_of_nothing(x8, y):
    for i in range(3):
        y[i] = (sum([]) + x8[i]) * 100 + sum(())


def test_pythons_sum_of_an_empty_list_is_the_int_0():
    # (it was "an empty list is an array without elements"; a Python int
    # 0 keeps `x8[i]`'s int8 arithmetic)
    run_both(sum_of_nothing, [np.array([1, 2, 3], np.int8), np.zeros(3)], cpu_opts())
