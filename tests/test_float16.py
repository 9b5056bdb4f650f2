"""float16 on the Cpu backend (C `_Float16`), against plain Python over
NumPy: every operation is rounded to float16 as NumPy rounds it (computed in
float32, then rounded), weak Python floats are rounded to float16 first, and
math functions are computed in float32. On Cuda the same programs use
`__half` (cuda_fp16.h) with the same rounding (tests/test_cuda_programs.py)."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both

H = np.float16


def halves(n, seed, lo=-4.0, hi=4.0):
    return np.random.default_rng(seed).uniform(lo, hi, n).astype(H)


@parpy.jit
def fma_like(x, z, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = x[i] * 0.1 + z[i] / 3.0 - x[i] * z[i]


@parpy.jit
def math_mix(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = parpy.math.exp(x[i] * 0.5) + parpy.math.sqrt(abs(x[i])) + parpy.math.sin(x[i])


@parpy.jit
def widen(x16, x32, y32, N):
    parpy.label('N')
    for i in range(N):
        y32[i] = x16[i] * 2.5 + x32[i]


@parpy.jit
def scaled(x, y, a, N):
    parpy.label('N')
    for i in range(N):
        y[i] = x[i] * a


@parpy.jit
def div_mod_floor(a, b, q, r, N):
    parpy.label('N')
    for i in range(N):
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


@parpy.jit
def row_stats(x, s, mx, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        s[i] = parpy.operators.sum(x[i, :])
        parpy.label('M')
        mx[i] = parpy.operators.max(x[i, :])


def test_arithmetic_rounds_every_operation_like_numpy():
    # exact: each operation computed in float32 and rounded to float16, with
    # the literals rounded to float16 first, is what NumPy does
    x, z = halves(500, 1), halves(500, 2)
    y = np.zeros(500, H)
    run_both(fma_like, [x, z, y, 500], cpu_opts({'N': parpy.threads(4)}), rtol=0, atol=0)


def test_math_functions_are_computed_in_float32():
    x = halves(300, 3)
    y = np.zeros(300, H)
    run_both(math_mix, [x, y, 300], cpu_opts({'N': parpy.threads(4)}), rtol=1e-3, atol=1e-3)


def test_float16_with_float32_promotes_to_float32():
    x16, x32 = halves(100, 4), np.random.default_rng(5).standard_normal(100).astype(np.float32)
    y32 = np.zeros(100, np.float32)
    run_both(widen, [x16, x32, y32, 100], cpu_opts({'N': parpy.threads(4)}))


@pytest.mark.parametrize("specialize", [True, False])
def test_a_float16_scalar_argument(specialize):
    x = halves(64, 6)
    y = np.zeros(64, H)
    opts = cpu_opts({'N': parpy.threads(4)}, specialize_scalars=specialize)
    out = run_both(scaled, [x, y, H(0.3), 64], opts, rtol=0, atol=0)
    np.testing.assert_array_equal(out[1], x * H(0.3))


def test_floor_division_and_modulo():
    a = halves(200, 7, -20, 20)
    b = halves(200, 8, 0.5, 6) * np.where(np.arange(200) % 2 == 0, 1, -1).astype(H)
    q, r = np.zeros(200, H), np.zeros(200, H)
    run_both(div_mod_floor, [a, b, q, r, 200], cpu_opts({'N': parpy.threads(4)}))


@pytest.mark.parametrize("parallel_rows", [False, True])
def test_row_sums_and_maxima(parallel_rows):
    N, M = 8, 200
    x = halves(N * M, 9, 0, 1).reshape(N, M)
    s, mx = np.zeros(N, H), np.zeros(N, H)
    spec = {'N': parpy.threads(N)}
    if parallel_rows:
        spec['M'] = parpy.threads(16)
    out = run_both(row_stats, [x, s, mx, N], cpu_opts(spec))
    np.testing.assert_array_equal(out[2], x.max(axis=1))


def test_cuda_code_uses_half_and_computes_math_in_float():
    # tests/test_cuda_programs.py runs every program above on Cuda too (NVRTC
    # to the cubin here, on the GPU with -m cuda)
    x = np.zeros(8, H)
    opts = parpy.par({'N': parpy.threads(8)})
    opts.backend = parpy.CompileBackend.Cuda
    code = parpy.print_compiled(math_mix, [x, x.copy(), 8], opts)
    assert "#include <cuda_fp16.h>" in code
    assert "__half *y" in code
    assert "(__half)expf(" in code and "(__half)sinf(" in code


@parpy.jit
def truth(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = bool(x[i])
        y[i + N] = not x[i + 1]


def test_the_truth_of_a_float16_is_numpys_on_every_backend():
    # (Cuda's `__half != 0` is ambiguous: NVRTC refused the code, an
    # InternalError; the zero is a half now)
    from conftest import check_gpu_code
    x = np.array([0.0, -0.0, 1.5, np.nan, 0.0, 2.0, np.inf, 0.0, 1.0], H)
    run_both(truth, [x, np.zeros(16, bool), 8], cpu_opts({'N': parpy.threads(8)}))
    check_gpu_code(truth, lambda b: [np.zeros(9, H), np.zeros(16, bool), 8],
                   {'N': parpy.threads(8)}, "float16_truth")
