"""Unroll-and-jam on the Cpu backend (`passes::cpu_unroll_jam`): a
sequential loop with independent iterations around an inner loop with a
loop-carried scalar runs eight iterations side by side. Each lane does the
operations of its iteration in their order, so the results are bit for bit
those of plain Python; loops whose iterations depend on each other are left
alone, and still give Python's answer."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both


def jammed(fn, args, opts):
    code = parpy.print_compiled(fn, args, opts)
    return "j += 8)" in code or "j += 16)" in code


def exact(fn, args, opts):
    return run_both(fn, args, opts, rtol=0, atol=0)


@parpy.jit
def matmul(A, B, C):
    N, K = A.shape
    M = B.shape[1]
    parpy.label('i')
    for i in range(N):
        for j in range(M):
            # (a Python int: the accumulator takes the elements' type; a
            # float one stored into int32 `C` is checked as NumPy's int(v))
            acc = 0
            for k in range(K):
                acc += A[i, k] * B[k, j]
            C[i, j] = acc


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16])
@pytest.mark.parametrize("m", [8, 20, 35, 3])
def test_matmul_is_bit_identical(dtype, m):
    rng = np.random.default_rng(3)
    A = (rng.standard_normal((9, 13)) * 4).astype(dtype)
    B = (rng.standard_normal((13, m)) * 4).astype(dtype)
    args = [A, B, np.zeros((9, m), dtype)]
    opts = cpu_opts({'i': parpy.threads(3)})
    exact(matmul, args, opts)
    assert jammed(matmul, args, opts) == (m >= 8)


@parpy.jit
def rows_then_scale(A, B, C, s):
    N, K = A.shape
    M = B.shape[1]
    for i in range(N):
        for j in range(M):
            acc = 0.0
            big = A[i, 0]
            for k in range(K):
                acc += A[i, k] * B[k, j]
                if B[k, j] > big:
                    big = B[k, j]
            if acc > 0.0:
                C[i, j] = acc * s
            else:
                C[i, j] = big


def test_conditionals_and_two_chains():
    rng = np.random.default_rng(4)
    args = [rng.standard_normal((5, 7)), rng.standard_normal((7, 19)), np.zeros((5, 19)), 0.5]
    opts = cpu_opts()
    exact(rows_then_scale, args, opts)
    assert jammed(rows_then_scale, args, opts)


@parpy.jit
def acc_read_after(A, C, last):
    N, M = A.shape
    for j in range(M):
        acc = 0.0
        for k in range(N):
            acc += A[k, j]
        C[j] = acc
    last[0] = acc


@parpy.jit
def reads_what_it_writes(A, C):
    N, M = A.shape
    for j in range(1, M):
        acc = C[j - 1]
        for k in range(N):
            acc += A[k, j]
        C[j] = acc


@parpy.jit
def one_element(A, C):
    N, M = A.shape
    for j in range(M):
        acc = 0.0
        for k in range(N):
            acc += A[k, j]
        C[0] = acc


@parpy.jit
def two_offsets(A, C):
    N, M = A.shape
    for j in range(M):
        acc = 0.0
        for k in range(N):
            acc += A[k, j]
        C[j] = acc
        C[j + 1] = -acc


@parpy.jit
def carried_into_next(A, C):
    N, M = A.shape
    acc = 0.0
    for j in range(M):
        for k in range(N):
            acc += A[k, j]
        C[j] = acc


@pytest.mark.parametrize("fn,extra", [
    (acc_read_after, [np.zeros(1)]), (reads_what_it_writes, []), (one_element, []),
    (two_offsets, []), (carried_into_next, []),
])
def test_dependent_iterations_are_left_alone(fn, extra):
    rng = np.random.default_rng(5)
    A = rng.standard_normal((6, 17))
    args = [A, np.zeros(18)] + extra
    opts = cpu_opts()
    exact(fn, args, opts)
    assert not jammed(fn, args, opts)


@parpy.jit
def matmul_from(A, B, C, lo, hi):
    N, K = A.shape
    parpy.label('i')
    for i in range(N):
        for j in range(lo, hi):
            acc = 0.0
            for k in range(K):
                acc += A[i, k] * B[k, j]
            C[i, j] = acc


@pytest.mark.parametrize("checks", [True, False])
@pytest.mark.parametrize("lo,hi", [(0, 40), (3, 21), (5, 12), (7, 7), (9, 2), (-40, -3)])
def test_bounds_known_at_run_time(lo, hi, checks):
    # not specialized: the loop splits at lo + (max(hi - lo, 0) & -16);
    # check_bounds first made a copy without checks (or, with checks off,
    # without the negative-index wraps) for lo >= 0 and hi <= 40
    rng = np.random.default_rng(6)
    args = [rng.standard_normal((5, 9)).astype(np.float32),
            rng.standard_normal((9, 40)).astype(np.float32), np.zeros((5, 40), np.float32), lo, hi]
    opts = cpu_opts({'i': parpy.threads(2)}, specialize_scalars=False, bounds_check=checks)
    exact(matmul_from, args, opts)
    code = parpy.print_compiled(matmul_from, args, opts)
    fast = code.split("if (lo >= 0 && hi <= 40) {")[1].split("} else {")[0]
    assert "j += 16)" in fast and "B[k * 40 + (j + 15)]" in fast, fast
