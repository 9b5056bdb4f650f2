"""Differential tests: each program runs as plain Python/NumPy (the reference
semantics, via `fn.py_func`) and compiled for the CPU backend; all arrays
are compared (see conftest.run_both)."""

import re

import numpy as np
import pytest

import parpy
import progs_alias
from conftest import cpu_opts, run_both

FLOATS = [np.float32, np.float64]
INTS = [np.int32, np.int64]


def rng(seed=0):
    return np.random.default_rng(seed)


def randn(shape, dtype, seed=0):
    return rng(seed).standard_normal(shape).astype(dtype)


# --------------------------------------------------------------------------
# 1. row sum (the first program), over sizes, dtypes, thread counts


@parpy.jit
def sum_rows(x, y, N):
    parpy.label('outer')
    for i in range(N):
        y[i] = parpy.operators.sum(x[i, :])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("N,M", [(1, 1), (7, 33), (100, 1024)])
@pytest.mark.parametrize("threads", [1, 4, None])
def test_sum_rows(dtype, N, M, threads):
    x = randn((N, M), dtype)
    y = np.zeros((N,), dtype)
    t = N if threads is None else threads  # fewer workers than rows: strided
    run_both(sum_rows, [x, y, N], cpu_opts({'outer': parpy.threads(t)}),
             rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-4)


# the reduction spellings: operators.sum, reduce.sum, parpy.sum


@parpy.jit
def sum_rows_reduce(x, y, N):
    parpy.label('outer')
    for i in range(N):
        y[i] = parpy.reduce.sum(x[i, :])


@parpy.jit
def sum_rows_short(x, y, N):
    parpy.label('outer')
    for i in range(N):
        y[i] = parpy.sum(x[i, :])


@pytest.mark.parametrize("fn", [sum_rows_reduce, sum_rows_short])
def test_sum_spellings(fn):
    x = randn((10, 50), np.float64)
    y = np.zeros((10,), np.float64)
    run_both(fn, [x, y, 10], cpu_opts({'outer': parpy.threads(10)}))


# parallel (labelled) reduction over the row, with the tpb option


@parpy.jit
def sum_rows_par(x, y, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        y[i] = parpy.operators.sum(x[i, :])


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("M", [1, 31, 1000])
def test_sum_rows_parallel_reduction(dtype, M):
    N = 9
    x = (rng(3).integers(-50, 50, (N, M)).astype(dtype) if np.dtype(dtype).kind == "i"
         else randn((N, M), dtype))
    y = np.zeros((N,), x.sum(axis=1).dtype)  # int32 sums are int64, as in NumPy
    opts = cpu_opts({'N': parpy.threads(N), 'M': parpy.threads(64)})
    run_both(sum_rows_par, [x, y, N], opts, rtol=1e-4 if dtype == np.float32 else None,
             atol=1e-4 if dtype == np.float32 else None)


def test_tpb_option_accepted():
    N, M = 20, 300
    x = randn((N, M), np.float32)
    y = np.zeros((N,), np.float32)
    opts = cpu_opts({'N': parpy.threads(N), 'M': parpy.threads(256).tpb(64)})
    run_both(sum_rows_par, [x, y, N], opts, rtol=1e-4, atol=1e-4)


# --------------------------------------------------------------------------
# 2. normalize rows


@parpy.jit
def normalize_rows(x, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        s = parpy.operators.sum(x[i, :])
        parpy.label('M')
        x[i, :] = x[i, :] / s


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("N,M", [(3, 5), (64, 257)])
@pytest.mark.parametrize("parallel_inner", [False, True])
def test_normalize_rows(dtype, N, M, parallel_inner):
    x = (rng(4).random((N, M)) + 0.5).astype(dtype)
    spec = {'N': parpy.threads(N)}
    if parallel_inner:
        spec['M'] = parpy.threads(32)
    run_both(normalize_rows, [x, N], cpu_opts(spec), rtol=1e-4 if dtype == np.float32 else None)


# --------------------------------------------------------------------------
# 3. softmax, sequential and parallel reductions


@parpy.jit
def softmax_seq(x, y, N, M):
    parpy.label('N')
    for i in range(N):
        m = parpy.operators.max(x[i, :])
        for j in range(M):
            y[i, j] = parpy.math.exp(x[i, j] - m)
        s = parpy.operators.sum(y[i, :])
        for j in range(M):
            y[i, j] = y[i, j] / s


@parpy.jit
def softmax_par(x, y, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        m = parpy.operators.max(x[i, :])
        parpy.label('M')
        y[i, :] = parpy.math.exp(x[i, :] - m)
        parpy.label('M')
        s = parpy.operators.sum(y[i, :])
        parpy.label('M')
        y[i, :] = y[i, :] / s


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("N,M", [(1, 1), (13, 100), (32, 1024)])
def test_softmax_sequential_reductions(dtype, N, M):
    x = randn((N, M), dtype) * 4
    y = np.zeros((N, M), dtype)
    out = run_both(softmax_seq, [x, y, N, M], cpu_opts({'N': parpy.threads(N)}),
                   rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-7)
    np.testing.assert_allclose(out[1].sum(axis=1), 1.0, rtol=1e-3)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("N,M", [(1, 1), (13, 100), (32, 1024)])
def test_softmax_parallel_reductions(dtype, N, M):
    x = randn((N, M), dtype) * 4
    y = np.zeros((N, M), dtype)
    opts = cpu_opts({'N': parpy.threads(N), 'M': parpy.threads(128)})
    out = run_both(softmax_par, [x, y, N], opts,
                   rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-7)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out[1], e / e.sum(axis=1, keepdims=True), rtol=1e-3, atol=1e-6)


# --------------------------------------------------------------------------
# 4. matrix-vector


@parpy.jit
def matvec_loop(A, x, y, N, M):
    parpy.label('N')
    for i in range(N):
        acc = 0.0
        for j in range(M):
            acc += A[i, j] * x[j]
        y[i] = acc


@parpy.jit
def matvec_sum(A, x, y, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        y[i] = parpy.operators.sum(A[i, :] * x[:])


@pytest.mark.parametrize("N,M", [(1, 1), (50, 70), (256, 512)])
def test_matvec_loop(N, M):
    A = randn((N, M), np.float64)
    x = randn((M,), np.float64, seed=1)
    y = np.zeros((N,), np.float64)
    out = run_both(matvec_loop, [A, x, y, N, M], cpu_opts({'N': parpy.threads(N)}))
    np.testing.assert_allclose(out[2], A @ x, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("threads", [1, 64])
def test_matvec_sum_of_product(dtype, threads):
    N, M = 40, 300
    A = randn((N, M), dtype)
    x = randn((M,), dtype, seed=1)
    y = np.zeros((N,), dtype)
    opts = cpu_opts({'N': parpy.threads(N), 'M': parpy.threads(threads)})
    out = run_both(matvec_sum, [A, x, y, N], opts,
                   rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-4)
    np.testing.assert_allclose(out[2], A @ x, rtol=1e-3, atol=1e-3)


# --------------------------------------------------------------------------
# 5. axpy with a scalar, specialized and not


@parpy.jit
def axpy(a, x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = a * x[i] + y[i]


@pytest.mark.parametrize("specialize", [True, False])
@pytest.mark.parametrize("a", [0.0, 2.5, -1.0])
def test_axpy(specialize, a):
    N = 1000
    x = randn((N,), np.float64)
    y = randn((N,), np.float64, seed=1)
    opts = cpu_opts({'N': parpy.threads(N)}, specialize_scalars=specialize)
    out = run_both(axpy, [a, x, y, N], opts)
    np.testing.assert_allclose(out[2], a * x + y, rtol=1e-12)


def test_axpy_int_scalar_and_int_arrays():
    N = 100
    x = rng(1).integers(-100, 100, N).astype(np.int64)
    y = rng(2).integers(-100, 100, N).astype(np.int64)
    run_both(axpy, [3, x, y, N], cpu_opts({'N': parpy.threads(8)}))


# --------------------------------------------------------------------------
# 6. slice assignments


@parpy.jit
def add_2d(a, b, y):
    parpy.label('ij')
    y[:, :] = a[:, :] + b[:, :]


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("shape", [(1, 1), (17, 5), (64, 300)])
@pytest.mark.parametrize("threads", [1, 32])
def test_slice_2d(dtype, shape, threads):
    a = (randn(shape, dtype) * 10).astype(dtype)
    b = (randn(shape, dtype, seed=1) * 10).astype(dtype)
    y = np.zeros(shape, dtype)
    out = run_both(add_2d, [a, b, y], cpu_opts({'ij': parpy.threads(threads)}))
    np.testing.assert_array_equal(out[2], a + b)


@parpy.jit
def slice_bounds(a, b, y):
    y[2:10] = a[0:8] * b[3:11]
    y[0] = a[0]


@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_slice_1d_with_bounds(dtype):
    a = np.arange(1, 13).astype(dtype)
    b = np.arange(3, 15).astype(dtype)
    y = np.full(12, -1, dtype)
    out = run_both(slice_bounds, [a, b, y], cpu_opts())
    assert out[2][1] == -1 and out[2][10] == -1 and out[2][11] == -1


@parpy.jit
def slice_bounds_labelled(a, y):
    parpy.label('S')
    y[2:10] = a[2:10] + 1


def test_slice_1d_with_bounds_labelled():
    a = np.arange(12, dtype=np.int64)
    y = np.zeros(12, np.int64)
    run_both(slice_bounds_labelled, [a, y], cpu_opts({'S': parpy.threads(4)}))


# --------------------------------------------------------------------------
# 7. prod / max / min on ints and floats, sequential and parallel


@parpy.jit
def row_prod(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = parpy.operators.prod(x[i, :])


@parpy.jit
def row_max(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = parpy.operators.max(x[i, :])


@parpy.jit
def row_min(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = parpy.operators.min(x[i, :])


@parpy.jit
def row_prod_par(x, y, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        y[i] = parpy.operators.prod(x[i, :])


@parpy.jit
def row_max_par(x, y, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        y[i] = parpy.reduce.max(x[i, :])


@parpy.jit
def row_min_par(x, y, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        y[i] = parpy.reduce.min(x[i, :])


def reduction_input(kind, dtype, N, M):
    r = rng(5)
    if kind == "prod":
        if np.dtype(dtype).kind == "i":
            # products of 1, -1 and a few 2s stay small
            x = r.choice(np.array([1, -1, 1, 2, 1, -1]), size=(N, M))
            x[:, 20:] = 1
            return x.astype(dtype)
        return r.uniform(0.9, 1.1, (N, M)).astype(dtype)
    if np.dtype(dtype).kind == "i":
        info = np.iinfo(dtype)
        x = r.integers(-1000, 1000, (N, M)).astype(dtype)
        x[0, 0] = info.min  # extremes must survive the reduction
        x[-1, -1] = info.max
        return x
    return randn((N, M), dtype) * 100


@pytest.mark.parametrize("dtype", INTS + FLOATS)
@pytest.mark.parametrize("kind,seq,par", [
    ("prod", row_prod, row_prod_par),
    ("max", row_max, row_max_par),
    ("min", row_min, row_min_par),
])
@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("M", [1, 57])
def test_prod_max_min(dtype, kind, seq, par, parallel, M):
    N = 6
    x = reduction_input(kind, dtype, N, M)
    # NumPy's products of int32 are int64 (a narrowing store is an error)
    y = np.zeros((N,), getattr(x, kind)(axis=1).dtype)
    spec = {'N': parpy.threads(N)}
    if parallel:
        spec['M'] = parpy.threads(16)
    out = run_both(par if parallel else seq, [x, y, N], cpu_opts(spec),
                   rtol=1e-5 if dtype == np.float32 else None)
    expected = getattr(x, kind)(axis=1)
    np.testing.assert_allclose(out[1], expected, rtol=1e-5)


# --------------------------------------------------------------------------
# 8. a manual reduction loop with par_reduction()


@parpy.jit
def manual_sum(x, acc, N):
    parpy.label('N')
    for i in range(N):
        acc[0] += x[i]


@parpy.jit
def manual_max(x, acc, N):
    parpy.label('N')
    for i in range(N):
        acc[0] = max(acc[0], x[i])


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64])
@pytest.mark.parametrize("N", [1, 100, 10000])
@pytest.mark.parametrize("threads", [2, 64])
def test_par_reduction_sum(dtype, N, threads):
    x = rng(6).integers(-100, 100, N).astype(dtype)
    acc = np.array([5], dtype)
    run_both(manual_sum, [x, acc, N], cpu_opts({'N': parpy.threads(threads).par_reduction()}))


def test_par_reduction_float32_sum():
    N = 5000
    x = randn((N,), np.float32)
    acc = np.zeros(1, np.float32)
    out = run_both(manual_sum, [x, acc, N],
                   cpu_opts({'N': parpy.threads(64).par_reduction()}), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(out[1][0], x.astype(np.float64).sum(), rtol=1e-3, atol=1e-3)


def test_par_reduction_older_spelling():
    N = 1000
    x = rng(7).integers(-10, 10, N).astype(np.int64)
    acc = np.zeros(1, np.int64)
    run_both(manual_sum, [x, acc, N], cpu_opts({'N': parpy.threads(32).reduce()}))


@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_par_reduction_max(dtype):
    N = 777
    x = (randn((N,), np.float64) * 1000).astype(dtype)
    acc = np.array([np.iinfo(dtype).min if dtype == np.int64 else -np.inf], dtype)
    run_both(manual_max, [x, acc, N], cpu_opts({'N': parpy.threads(16).par_reduction()}))


# a row's reduction wider than a GPU block, after stores into the row's
# result (on Cuda: the partials kernel runs without those stores, the final
# kernel with them) or into what the reduction reads (one block per row)


@parpy.jit
def odd_column_sums(x, y, start, N, M):
    parpy.label('N')
    for i in range(N):
        y[i] = start
        y[N + i] = start * 2.0
        parpy.label('M')
        for j in range(1, M, 2):
            y[i] += x[i, j]


@parpy.jit
def sums_after_a_first_column_store(x, y, N, M):
    parpy.label('N')
    for i in range(N):
        x[i, 0] = 1.0
        parpy.label('M')
        for j in range(M):
            y[i] += x[i, j]


@pytest.mark.parametrize("threads", [64, 2048])
def test_stores_before_a_wide_row_reduction(threads):
    x = randn((6, 4001), np.float64)
    spec = {'N': parpy.threads(6), 'M': parpy.threads(threads).par_reduction()}
    run_both(odd_column_sums, [x, np.zeros(12), 0.5, 6, 4001], cpu_opts(spec))
    run_both(sums_after_a_first_column_store, [x.copy(), np.zeros(6), 6, 4001], cpu_opts(spec))


# a slice reduction (its accumulator and loop) before the update of a
# par_reduction() loop


@parpy.jit
def reduce_of_row_sums(x, out, N):
    parpy.label('N')
    for i in range(N):
        acc = 0.0
        parpy.label('R')
        for r in range(x.shape[0]):
            acc += parpy.operators.sum(x[r, :]) * i
        out[i] = acc


@parpy.jit
def total_of_row_maxima(x, acc, N):
    parpy.label('N')
    for i in range(N):
        m = parpy.operators.max(x[i, :])
        acc[0] += m * 2


@parpy.jit
def guarded_row_maxima(x, acc, N):
    parpy.label('N')
    for i in range(N):
        acc[0] = max(acc[0], x[i, 0] if i % 3 == 0 else parpy.operators.max(x[i, 1:] * 3))


@pytest.mark.parametrize("threads", [3, 64])
def test_slice_reductions_inside_a_par_reduction(threads):
    x = randn((37, 50), np.float64)
    run_both(reduce_of_row_sums, [x, np.zeros(5), 5],
             cpu_opts({'N': parpy.threads(5), 'R': parpy.threads(threads).par_reduction()}))
    run_both(total_of_row_maxima, [x, np.zeros(1), 37],
             cpu_opts({'N': parpy.threads(threads).par_reduction()}))
    # under `a if c else b`, sema computes the reduction under its
    # condition: an `if` the par_reduction body refused (fuzz seed 71029)
    run_both(guarded_row_maxima, [x, np.full(1, -np.inf), 37],
             cpu_opts({'N': parpy.threads(threads).par_reduction()}))


@parpy.jit
def reduction_copies_rows(x, y, acc, N):
    parpy.label('N')
    for i in range(N):
        y[i, :] = x[i, :]
        acc[0] += y[i, 0]


def test_a_loop_storing_into_an_array_in_a_par_reduction_is_an_error():
    x = np.ones((8, 4))
    with pytest.raises(parpy.CompileError, match="used only in this loop"):
        parpy.print_compiled(reduction_copies_rows, [x, x.copy(), np.zeros(1), 8],
                             cpu_opts({'N': parpy.threads(4).par_reduction()}))


# --------------------------------------------------------------------------
# 9. nested labelled loops: a 2-D map


@parpy.jit
def map_2d(x, y, N, M):
    parpy.label('i')
    for i in range(N):
        parpy.label('j')
        for j in range(M):
            y[i, j] = x[i, j] * 3 + i - 2 * j


@pytest.mark.parametrize("dtype", [np.int64, np.float64])
@pytest.mark.parametrize("ti,tj", [(1, 1), (4, 8), (100, 100)])
def test_nested_labelled_loops(dtype, ti, tj):
    N, M = 23, 45
    x = rng(8).integers(-50, 50, (N, M)).astype(dtype)
    y = np.zeros((N, M), dtype)
    run_both(map_2d, [x, y, N, M], cpu_opts({'i': parpy.threads(ti), 'j': parpy.threads(tj)}))


# --------------------------------------------------------------------------
# 10. while loop with a per-element trip count (Collatz steps)


@parpy.jit
def collatz(x, steps, N):
    parpy.label('N')
    for i in range(N):
        n = x[i]
        k = 0
        while n != 1:
            if n % 2 == 0:
                n = n // 2
            else:
                n = 3 * n + 1
            k += 1
        steps[i] = k


@pytest.mark.parametrize("dtype", INTS)
def test_while_collatz(dtype):
    N = 300
    x = np.arange(1, N + 1, dtype=dtype)
    steps = np.zeros(N, dtype)
    out = run_both(collatz, [x, steps, N], cpu_opts({'N': parpy.threads(7)}))
    assert out[1][26] == 111  # 27 takes 111 steps


# --------------------------------------------------------------------------
# 11. if / elif / else in parallel code


@parpy.jit
def clamp_sign(x, y, N):
    parpy.label('N')
    for i in range(N):
        if x[i] < -0.5:
            y[i] = -1.0
        elif x[i] > 0.5:
            y[i] = 1.0
        elif x[i] == 0.0:
            y[i] = 0.25
        else:
            y[i] = x[i] * 2.0


@pytest.mark.parametrize("dtype", FLOATS)
def test_if_elif_else(dtype):
    x = np.concatenate([randn((500,), dtype), np.array([0.0, 0.5, -0.5], dtype)])
    y = np.zeros_like(x)
    run_both(clamp_sign, [x, y, x.shape[0]], cpu_opts({'N': parpy.threads(16)}))


# --------------------------------------------------------------------------
# 12. integer // and % with negative operands (Python semantics)


@parpy.jit
def divmod_arrays(a, b, q, r, N):
    parpy.label('N')
    for i in range(N):
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


@parpy.jit
def divmod_literals(a, q, r, N):
    parpy.label('N')
    for i in range(N):
        q[i] = a[i] // 3 + a[i] // -4
        r[i] = a[i] % 3 + a[i] % -4


@pytest.mark.parametrize("dtype", INTS + [np.float64])
def test_floordiv_mod_negative(dtype):
    vals = np.arange(-20, 21)
    divs = np.array([d for d in range(-7, 8) if d != 0])
    a = np.repeat(vals, len(divs)).astype(dtype)
    b = np.tile(divs, len(vals)).astype(dtype)
    n = a.shape[0]
    q = np.zeros(n, dtype)
    r = np.zeros(n, dtype)
    out = run_both(divmod_arrays, [a, b, q, r, n], cpu_opts({'N': parpy.threads(4)}))
    # against Python's own int semantics, not just NumPy's
    pq = [int(x) // int(y) for x, y in zip(a, b)]
    pr = [int(x) % int(y) for x, y in zip(a, b)]
    np.testing.assert_array_equal(out[2], np.array(pq, dtype))
    np.testing.assert_array_equal(out[3], np.array(pr, dtype))


@pytest.mark.parametrize("dtype", INTS)
def test_floordiv_mod_literals(dtype):
    a = np.arange(-30, 31).astype(dtype)
    n = a.shape[0]
    q = np.zeros(n, dtype)
    r = np.zeros(n, dtype)
    out = run_both(divmod_literals, [a, q, r, n], cpu_opts({'N': parpy.threads(4)}))
    np.testing.assert_array_equal(out[1], [x // 3 + x // -4 for x in range(-30, 31)])
    np.testing.assert_array_equal(out[2], [x % 3 + x % -4 for x in range(-30, 31)])


# --------------------------------------------------------------------------
# 13. a time loop around two parallel nests (jacobi-1d)


@parpy.jit
def jacobi_1d(A, B, N, T):
    for t in range(T):
        parpy.label('N')
        for i in range(1, N - 1):
            B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1])
        parpy.label('N')
        for i in range(1, N - 1):
            A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1])


@pytest.mark.parametrize("N,T", [(3, 1), (30, 5), (400, 20)])
def test_time_loop_jacobi_1d(N, T):
    A = randn((N,), np.float64)
    B = np.zeros((N,), np.float64)
    run_both(jacobi_1d, [A, B, N, T], cpu_opts({'N': parpy.threads(8)}))


# --------------------------------------------------------------------------
# 14. conditional expressions, chained comparisons, bool arrays


@parpy.jit
def cond_expr(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = x[i] if x[i] > 0.0 else -x[i] * 0.5


@parpy.jit
def chained(x, y, lo, hi, N):
    parpy.label('N')
    for i in range(N):
        y[i] = 1 if lo <= x[i] < hi else (2 if x[i] < lo < hi else 0)


@parpy.jit
def bool_ops(x, m, out, both, N):
    parpy.label('N')
    for i in range(N):
        out[i] = x[i] > 0.0
        both[i] = (x[i] > 0.0 and m[i]) or (not m[i] and x[i] < -1.0)
        if m[i]:
            x[i] = x[i] + 1.0


@pytest.mark.parametrize("dtype", FLOATS)
def test_conditional_expression(dtype):
    x = randn((333,), dtype)
    y = np.zeros_like(x)
    run_both(cond_expr, [x, y, 333], cpu_opts({'N': parpy.threads(8)}))


@pytest.mark.parametrize("specialize", [True, False])
def test_chained_comparisons(specialize):
    x = np.arange(-10, 30, dtype=np.int64)
    y = np.full(x.shape, 9, np.int64)
    opts = cpu_opts({'N': parpy.threads(4)}, specialize_scalars=specialize)
    out = run_both(chained, [x, y, 0, 10, x.shape[0]], opts)
    assert out[1][10] == 1 and out[1][0] == 2 and out[1][-1] == 0


def test_bool_arrays():
    N = 200
    x = randn((N,), np.float64) * 2
    m = rng(9).random(N) > 0.5
    out = np.zeros(N, bool)
    both = np.zeros(N, bool)
    res = run_both(bool_ops, [x, m, out, both, N], cpu_opts({'N': parpy.threads(8)}))
    np.testing.assert_array_equal(res[2], x > 0)


# --------------------------------------------------------------------------
# 15. math functions


@parpy.jit
def math_fns(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = parpy.math.sqrt(x[i]) + parpy.math.exp(-x[i]) + parpy.math.tanh(x[i] - 1.0)


@pytest.mark.parametrize("dtype", FLOATS)
def test_math_functions(dtype):
    x = rng(10).uniform(0.0, 5.0, 400).astype(dtype)
    y = np.zeros_like(x)
    out = run_both(math_fns, [x, y, 400], cpu_opts({'N': parpy.threads(8)}),
                   rtol=1e-5 if dtype == np.float32 else 1e-12)
    np.testing.assert_allclose(out[1], np.sqrt(x) + np.exp(-x) + np.tanh(x - 1.0),
                               rtol=1e-5)


# --------------------------------------------------------------------------
# 16. `with parpy.gpu:` sequential block (a prefix sum), then a parallel map


@parpy.jit
def prefix_then_scale(x, y, N):
    with parpy.gpu:
        y[0] = x[0]
        for i in range(1, N):
            y[i] = y[i - 1] + x[i]
    parpy.label('N')
    for i in range(N):
        y[i] = y[i] * 2


@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_gpu_sequential_block(dtype):
    N = 100
    x = rng(11).integers(-9, 9, N).astype(dtype)
    y = np.zeros(N, dtype)
    out = run_both(prefix_then_scale, [x, y, N], cpu_opts({'N': parpy.threads(8)}))
    np.testing.assert_allclose(out[1], 2 * np.cumsum(x))


# --------------------------------------------------------------------------
# 17. a helper jit function called from a parallel loop


@parpy.jit
def poly(a, b):
    return a * a + 3.0 * b - 1.0


@parpy.jit
def clip_int(v, lo, hi):
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v


@parpy.jit
def use_helpers(x, y, k, N):
    parpy.label('N')
    for i in range(N):
        y[i] = poly(x[i], x[N - 1 - i])
        k[i] = clip_int(k[i], -3, 3)


def test_helper_function():
    N = 64
    x = randn((N,), np.float64)
    y = np.zeros(N, np.float64)
    k = rng(12).integers(-10, 10, N).astype(np.int64)
    out = run_both(use_helpers, [x, y, k, N], cpu_opts({'N': parpy.threads(8)}))
    np.testing.assert_allclose(out[1], x * x + 3.0 * x[::-1] - 1.0)


# --------------------------------------------------------------------------
# 18. `import parpy as pp`, module-level constants


def test_alias_and_module_constants():
    N = 50
    x = randn((N,), np.float64)
    y = np.zeros(N, np.float64)
    out = run_both(progs_alias.scale_offset, [x, y, N], cpu_opts({'N': parpy.threads(4)}))
    np.testing.assert_allclose(out[1], x * progs_alias.SCALE + progs_alias.OFFSET)


def test_alias_sum():
    x = randn((8, 20), np.float32)
    y = np.zeros(8, np.float32)
    run_both(progs_alias.row_sum_alias, [x, y, 8], cpu_opts({'N': parpy.threads(8)}),
             rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------
# 19. weak literals: float32 stays float32


@parpy.jit
def weak_literals(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = x[i] * 2.0 + 0.1 - x[i] / 3.0


def test_weak_literals_stay_float32():
    N = 256
    x = randn((N,), np.float32)
    y = np.zeros(N, np.float32)
    opts = cpu_opts({'N': parpy.threads(8)})
    code = parpy.print_compiled(weak_literals, [x, y, N], opts)
    assert re.search(r"\bfloat\b", code), code
    assert not re.search(r"\bdouble\b", code), (
        "float32 arithmetic with literals was promoted to double:\n" + code)
    run_both(weak_literals, [x, y, N], opts, rtol=1e-6, atol=1e-6)


# --------------------------------------------------------------------------
# 20. loops with a negative step


@parpy.jit
def reverse_copy(x, y, N):
    parpy.label('N')
    for i in range(N - 1, -1, -1):
        y[N - 1 - i] = x[i]


@parpy.jit
def suffix_sum(x, y, N):
    y[N - 1] = x[N - 1]
    for i in range(N - 2, -1, -1):
        y[i] = y[i + 1] + x[i]


@parpy.jit
def every_third_backwards(x, y, N):
    parpy.label('N')
    for i in range(N - 1, 0, -3):
        y[i] = x[i] + 100


@pytest.mark.parametrize("N", [1, 2, 101])
def test_negative_step(N):
    x = np.arange(N, dtype=np.int64) * 7 - 3
    y = np.zeros(N, np.int64)
    run_both(reverse_copy, [x, y, N], cpu_opts({'N': parpy.threads(4)}))
    y = np.zeros(N, np.int64)
    run_both(suffix_sum, [x, y, N], cpu_opts())
    y = np.zeros(N, np.int64)
    run_both(every_third_backwards, [x, y, N], cpu_opts({'N': parpy.threads(3)}))


# --------------------------------------------------------------------------
# 21. sequential code only (no labels at all), a 2-D stencil with a[i][j]


@parpy.jit
def stencil_2d(a, b, N):
    for i in range(1, N - 1):
        for j in range(1, N - 1):
            b[i][j] = 0.2 * (a[i][j] + a[i - 1][j] + a[i + 1][j] + a[i][j - 1] + a[i][j + 1])


def test_sequential_2d_stencil_nested_subscripts():
    N = 30
    a = randn((N, N), np.float64)
    b = np.zeros((N, N), np.float64)
    run_both(stencil_2d, [a, b, N], cpu_opts())


# --------------------------------------------------------------------------
# 22. the same jit function called with different dtypes and shapes


def test_respecialization_on_dtype_and_shape():
    for dtype, (N, M) in [(np.float32, (4, 8)), (np.float64, (4, 8)), (np.float32, (9, 3))]:
        x = randn((N, M), dtype)
        y = np.zeros((N,), dtype)
        run_both(sum_rows, [x, y, N], cpu_opts({'outer': parpy.threads(N)}),
                 rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------
# 23. more of the subset: negative literal indices, **, bitwise operators,
#     Python builtins min/max/abs/float/int, parpy.builtin.*


@parpy.jit
def last_minus_first(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = x[i, -1] - x[i, 0] + x[-1, -2]


@parpy.jit
def powers(x, y, k, N):
    parpy.label('N')
    for i in range(N):
        y[i] = x[i] ** 2 + x[i] ** 0.5
        k[i] = k[i] ** 3


@parpy.jit
def bitwise(a, b, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = ((a[i] & b[i]) | (a[i] ^ 5)) + (a[i] << 2) - (b[i] >> 1) + ~a[i]


@parpy.jit
def builtins_mix(x, k, y, z, N):
    parpy.label('N')
    for i in range(N):
        y[i] = max(x[i], 0.5) + min(x[i], -0.5) + abs(x[i]) + float(k[i])
        z[i] = int(x[i] * 10.0) + max(k[i], 2) - abs(k[i])


@parpy.jit
def parpy_builtins(x, y, N):
    parpy.label('N')
    for i in range(N):
        m = -parpy.builtin.inf
        m = parpy.builtin.maximum(m, x[i])
        y[i] = parpy.builtin.minimum(m, 1.0) + parpy.builtin.convert(i, parpy.types.F64)


def test_negative_literal_indices():
    x = randn((6, 9), np.float64)
    y = np.zeros(6, np.float64)
    run_both(last_minus_first, [x, y, 6], cpu_opts({'N': parpy.threads(2)}))


def test_power_operator():
    N = 40
    x = rng(13).uniform(0.0, 3.0, N)
    y = np.zeros(N)
    k = rng(14).integers(-20, 20, N).astype(np.int64)
    run_both(powers, [x, y, k, N], cpu_opts({'N': parpy.threads(4)}))


@pytest.mark.parametrize("dtype", INTS)
def test_bitwise_operators(dtype):
    N = 64
    a = rng(15).integers(-1000, 1000, N).astype(dtype)
    b = rng(16).integers(-1000, 1000, N).astype(dtype)
    y = np.zeros(N, dtype)
    run_both(bitwise, [a, b, y, N], cpu_opts({'N': parpy.threads(4)}))


def test_python_builtins_min_max_abs_float_int():
    N = 50
    x = randn((N,), np.float64) * 3
    k = rng(17).integers(-10, 10, N).astype(np.int64)
    y = np.zeros(N)
    z = np.zeros(N, np.int64)
    run_both(builtins_mix, [x, k, y, z, N], cpu_opts({'N': parpy.threads(4)}))


def test_parpy_builtin_namespace():
    N = 30
    x = randn((N,), np.float64) * 2
    y = np.zeros(N)
    run_both(parpy_builtins, [x, y, N], cpu_opts({'N': parpy.threads(4)}))


# --------------------------------------------------------------------------
# a parallel reduction beside a deeper sibling nest (issue 12 item 5): on a
# GPU its level maps to thread blocks, so it runs sequentially in each
# thread there (a warning); on every backend the answer is Python's


@parpy.jit
def sibling_nest_reduction(x, y, z, N, M, K):
    parpy.label('i')
    for i in range(N):
        parpy.label('j')
        for j in range(M):
            parpy.label('k')
            for k in range(K):
                y[i, j, k] = x[i, k] * 2.0 + j
        acc = 1.0
        parpy.label('r')
        for r in range(M):
            acc = acc + x[i, r]
        z[i] = acc


SIBLING_SPEC = {'i': parpy.threads(4), 'j': parpy.threads(8), 'k': parpy.threads(64),
                'r': parpy.threads(8).par_reduction()}


def sibling_args():
    x = randn((4, 64), np.float64)
    return [x, np.zeros((4, 8, 64)), np.zeros(4), 4, 8, 64]


def test_parallel_reduction_beside_a_deeper_nest():
    run_both(sibling_nest_reduction, sibling_args(), cpu_opts(SIBLING_SPEC))


# a parallel reduction whose body holds parallel loops (issue 12 item 5): on
# a GPU only the innermost level reduces in parallel, so the outer one runs
# in order in every thread (a warning); on every backend the answer is
# Python's


@parpy.jit
def nested_reduction(x, z, N, M):
    parpy.label('i')
    for i in range(N):
        acc = 1.0
        parpy.label('r')
        for r in range(M):
            parpy.label('k')
            t = parpy.operators.sum(x[i, r, :])
            acc = acc + t * 0.5
        z[i] = acc


@parpy.jit
def top_level_nested_max(x, out, M):
    parpy.label('r')
    for r in range(M):
        parpy.label('k')
        out[0] = max(out[0], parpy.operators.sum(x[r, :]))


NESTED_SPEC = {'i': parpy.threads(4), 'r': parpy.threads(8).par_reduction(),
               'k': parpy.threads(64)}


def nested_args():
    return [randn((4, 8, 100), np.float64), np.zeros(4), 4, 8]


def top_nested_args():
    return [randn((8, 100), np.float64), np.full(1, -1000.0), 8]


def test_parallel_reduction_around_parallel_reductions():
    run_both(nested_reduction, nested_args(), cpu_opts(NESTED_SPEC))


def test_top_level_parallel_reduction_around_parallel_reductions():
    spec = {'r': parpy.threads(8).par_reduction(), 'k': parpy.threads(64)}
    run_both(top_level_nested_max, top_nested_args(), cpu_opts(spec))


# A module-level NumPy scalar is a value of its type, as NumPy computes with
# it (was a weak Python number: np.float64 subclasses float, so a float32
# row times it stayed float32, silently).
WIDE_GAIN = np.float64(0.1)
NARROW_GAIN = np.float32(0.3)
SMALL_STEP = np.int8(3)


@parpy.jit
def numpy_scalar_globals(x, h, k, y, z, w, N):
    parpy.label('i')
    for i in range(N):
        y[i] = x[i] * WIDE_GAIN
        z[i] = h[i] * NARROW_GAIN
        w[i] = k[i] * SMALL_STEP


def test_a_module_level_numpy_scalar_keeps_its_type():
    rng = np.random.default_rng(12)
    x = rng.standard_normal(8).astype(np.float32)
    h = rng.standard_normal(8).astype(np.float16)
    k = rng.integers(-100, 100, 8).astype(np.int8)
    run_both(numpy_scalar_globals,
             [x, h, k, np.zeros(8), np.zeros(8, np.float32), np.zeros(8, np.int8), 8],
             cpu_opts({'i': parpy.threads(8)}), rtol=0, atol=0)


# A module-level tuple of Python numbers reads as its literal (was: "cannot
# be indexed"): items are Python numbers, so float32 data stays float32.
STENCIL = (0.25, 0.5, 0.25)
SHIFTS = (-1, 0, 1)


@parpy.jit
def tuple_globals(x, y, z, N):
    parpy.label('i')
    for i in range(1, N - 1):
        s = 0.0
        for k in range(len(STENCIL)):
            s += STENCIL[k] * x[i + SHIFTS[k]]
        y[i] = s
        t = 0.0
        for w in STENCIL:
            t += w * x[i]
        z[i] = t + STENCIL[i % 3]


def test_a_module_level_tuple_of_numbers_is_its_literal():
    x = np.random.default_rng(13).standard_normal(10).astype(np.float32)
    run_both(tuple_globals, [x, np.zeros(10, np.float32), np.zeros(10, np.float32), 10],
             cpu_opts({'i': parpy.threads(8)}), rtol=0, atol=0)


# A module-level tuple of tuples reads as the same tuple written in the
# function (was: "`SOBEL_X` cannot be indexed ... parpy functions read
# module-level numbers and tuples of them"); an index known only at run time
# (a loop's counter) picks the row (rows of one length and item type).
SOBEL_X = ((-1, 0, 1), (-2, 0, 2), (-1, 0, 1))
MIXED_ROWS = ((1, 2.5), (3, 4))


@parpy.jit
def sobel_global(img, out, H, W):
    parpy.label('i')
    for i in range(1, H - 1):
        for j in range(1, W - 1):
            g = 0.0
            for a in range(3):
                for b in range(3):
                    g += SOBEL_X[a][b] * img[i + a - 1, j + b - 1]
            out[i, j] = g + SOBEL_X[1][2] * SOBEL_X[-1][0]


@parpy.jit
def sobel_local(img, out, H, W):
    SOBEL = ((-1, 0, 1), (-2, 0, 2), (-1, 0, 1))
    parpy.label('i')
    for i in range(1, H - 1):
        for j in range(1, W - 1):
            g = 0.0
            for a in range(3):
                for b in range(3):
                    g += SOBEL[a][b] * img[i + a - 1, j + b - 1]
            out[i, j] = g + SOBEL[1][2] * SOBEL[-1][0]


@parpy.jit
def rows_of_several_types(x, y, N):
    for i in range(N):
        y[i] = MIXED_ROWS[i % 2][0] * x[i]


@parpy.jit
def rows_of_several_types_local(x, y, N):
    rows = ((1, 2.5), (3, 4))
    for i in range(N):
        y[i] = rows[i % 2][0] * x[i]


@pytest.mark.parametrize("fn", [sobel_global, sobel_local])
def test_a_tuple_of_tuples_global_or_local_at_run_time_indices(fn):
    img = np.random.default_rng(14).random((6, 7))
    run_both(fn, [img, np.zeros((6, 7)), 6, 7], cpu_opts({'i': parpy.threads(4)}),
             rtol=0, atol=0)


@pytest.mark.parametrize("fn", [rows_of_several_types, rows_of_several_types_local])
def test_a_tuple_of_tuples_global_or_local_says_the_same(fn):
    with pytest.raises(parpy.CompileError) as e:
        fn(np.ones(4), np.zeros(4), 4, opts=cpu_opts())
    first = str(e.value).splitlines()[0]
    assert first == ("error: a tuple of tuples indexed at a run-time index must have rows "
                     "alike: its numbers are of several types"), str(e.value)


# --------------------------------------------------------------------------
# par_reduction() forms and labelled statements with several reductions


@parpy.jit
def manual_max_element_first(x, acc, N):
    parpy.label('N')
    for i in range(N):
        acc[0] = max(x[i], acc[0])


@parpy.jit
def manual_numpy_maximum(x, acc, N):
    parpy.label('N')
    for i in range(N):
        acc[0] = np.maximum(acc[0], x[i])


def test_par_reduction_of_python_max_with_the_element_first_is_refused_for_floats():
    # Python's fold gives the greatest element after the last NaN (999 here);
    # the parallel reduction gave NaN
    x = np.arange(1000.0)
    x[5] = np.nan
    run_both(manual_max_element_first, [x, np.array([2.0]), 1000], cpu_opts())
    spec = {'N': parpy.threads(64).par_reduction()}
    with pytest.raises(parpy.CompileError) as e:
        manual_max_element_first(x, np.array([2.0]), 1000, opts=cpu_opts(spec))
    text = str(e.value)
    assert "its Python `max` takes the element first" in text, text
    assert "acc[0] = max(x[i], acc[0])" in text, text
    assert "out[0] = max(out[0], x[i])" in text and "np.maximum(out[0], x[i])" in text, text
    # the two fixes it suggests, and integers (no NaN: the max either way)
    run_both(manual_max, [x, np.array([2.0]), 1000], cpu_opts(spec))
    run_both(manual_numpy_maximum, [x, np.array([2.0]), 1000], cpu_opts(spec))
    xi = rng(9).integers(-1000, 1000, 1000)
    run_both(manual_max_element_first, [xi, np.array([-5000]), 1000], cpu_opts(spec))


@parpy.jit
def manual_bool_any_all(x, acc, N):
    parpy.label('N')
    for i in range(N):
        acc[0] += x[i]
    parpy.label('N')
    for i in range(N):
        acc[1] *= x[i]


@pytest.mark.parametrize("ones", [0, 1, 99, 100])
def test_par_reduction_of_bools_is_their_or_and_and(ones):
    # NumPy's `+` of bools is `or`, `*` is `and`: the max and min of bools
    # (it was "`or` is not a reduction operator (use + * max min)")
    x = np.zeros(100, bool)
    x[rng(8).permutation(100)[:ones]] = True
    for acc in ([False, True], [True, False]):
        run_both(manual_bool_any_all, [x, np.array(acc), 100],
                 cpu_opts({'N': parpy.threads(16).par_reduction()}))


@parpy.jit
def two_reductions_in_one_statement(x, out):
    parpy.label('r')
    out[0] = parpy.operators.max(x[:]) + parpy.operators.min(x[:])
    parpy.label('r')
    out[1] = np.var(x[:])
    parpy.label('r')
    out[2] = np.nanmean(x[:])


@pytest.mark.parametrize("threads", [64, 2048])
def test_each_reduction_of_a_labelled_statement_takes_its_label(threads):
    # the label parallelized the first reduction only: on Cuda the second
    # ran in host code ("reading device data from host code")
    x = randn((5000,), np.float64)
    run_both(two_reductions_in_one_statement, [x, np.zeros(3)],
             cpu_opts({'r': parpy.threads(threads)}))
