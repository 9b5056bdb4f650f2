#!/usr/bin/env python3
"""parpy CPU benchmarks (C1-C7 of BENCHMARKS.md; N1-N4: natural loops,
issue 13: conv2d, k-means assignment, naive matmul, batched GEMM with an
unannotated `acc = 0.0`) against NumPy and Numba.

    python benchmarks/run.py            # all CPU workloads
    python benchmarks/run.py --quick    # fewer repetitions, under a minute
    python benchmarks/run.py --only C1,C3
    python benchmarks/run.py --bounds-check compare   # checks on vs off


Every result is checked against NumPy before it is timed. Each measurement
is printed as one JSON object on stdout (median of --runs timed runs after
warm-up, pooled over --rounds rounds in which parpy and its peers take
turns); a table with ratios between systems measured in this same run
follows at the end. Numba (`@njit(parallel=True)` with `prange`) and SciPy
are optional: their rows are skipped with a note when they are not installed.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings

import numpy as np

import parpy

try:
    import numba
    from numba import njit, prange
except ImportError:  # optional peer
    numba = None

try:
    import scipy.sparse as sp
except ImportError:  # optional peer
    sp = None

RESULTS = []
NOTES = []
# opts.bounds_check of every parpy measurement; `--bounds-check compare`
# runs each benchmark in --rounds rounds with checks on and off in
# alternating order (on off, off on, ...), so that a load that comes and goes
# weighs on both; the samples of all rounds are pooled (parpy rows only)
BOUNDS_CHECK = [True]
OFF = " [bounds_check=off]"
# (bench, system) -> every sample so far (all rounds)
SAMPLES = {}


def emit(bench, system, times, **extra):
    if not BOUNDS_CHECK[0]:
        if not system.startswith("parpy"):
            return  # measured in the pass with checks on
        system += OFF
    times = SAMPLES.setdefault((bench, system), []) + list(times)
    SAMPLES[(bench, system)] = times
    RESULTS[:] = [r for r in RESULTS if (r["bench"], r["system"]) != (bench, system)]
    row = {
        "bench": bench,
        "system": system,
        "median_s": statistics.median(times),
        "min_s": min(times),
        "runs": len(times),
    }
    row.update(extra)
    RESULTS.append(row)
    print(json.dumps(row), flush=True)


def note(msg):
    if msg in NOTES:
        return  # said in an earlier round
    NOTES.append(msg)
    print(json.dumps({"note": msg}), flush=True)


def timeit(fn, runs, warmup=1, setup=None):
    """Seconds of each of `runs` calls of `fn` (after `warmup` calls); with
    `setup`, each call is `fn(*setup())` and only `fn` is timed."""
    def once():
        args = setup() if setup is not None else ()
        t0 = time.perf_counter()
        fn(*args)
        return time.perf_counter() - t0
    for _ in range(warmup):
        once()
    return [once() for _ in range(runs)]


def per_call(fn, calls, runs):
    """Median-able list of seconds per call, each sample averaging `calls` calls."""
    fn()
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - t0) / calls)
    return samples


def cpu_opts(spec, **fields):
    opts = parpy.par(spec)
    opts.backend = parpy.CompileBackend.Cpu
    opts.bounds_check = BOUNDS_CHECK[0]
    for k, v in fields.items():
        setattr(opts, k, v)
    return opts


def check(name, got, expected, rtol, atol):
    try:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    except AssertionError as e:
        raise SystemExit(f"{name}: result differs from NumPy, not timing it\n{e}")


# ---------------------------------------------------------------------------
# programs


@parpy.jit
def trivial(x, y, n, a):
    y[0] = x[n - 1] * a


@parpy.jit
def row_sum(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = parpy.operators.sum(x[i, :])


@parpy.jit
def softmax(x, y, N, M):
    parpy.label('N')
    for i in range(N):
        m = parpy.operators.max(x[i, :])
        for j in range(M):
            y[i, j] = parpy.math.exp(x[i, j] - m)
        s = parpy.operators.sum(y[i, :])
        for j in range(M):
            y[i, j] = y[i, j] / s


@parpy.jit
def jacobi_2d(A, B, N, T):
    for t in range(T):
        parpy.label('i')
        for i in range(1, N - 1):
            for j in range(1, N - 1):
                B[i, j] = 0.2 * (A[i, j] + A[i, j - 1] + A[i, j + 1] + A[i + 1, j] + A[i - 1, j])
        parpy.label('i')
        for i in range(1, N - 1):
            for j in range(1, N - 1):
                A[i, j] = 0.2 * (B[i, j] + B[i, j - 1] + B[i, j + 1] + B[i + 1, j] + B[i - 1, j])


@parpy.jit
def matvec(A, x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = parpy.operators.sum(A[i, :] * x[:])


@parpy.jit
def spmv(rows, cols, vals, x, y, N):
    parpy.label('N')
    for i in range(N):
        acc = 0.0
        for k in range(rows[i], rows[i + 1]):
            acc += vals[k] * x[cols[k]]
        y[i] = acc


if numba is not None:
    @njit(parallel=True)
    def nb_trivial(x, y, n, a):
        y[0] = x[n - 1] * a

    @njit(parallel=True)
    def nb_row_sum(x, y):
        for i in prange(x.shape[0]):
            y[i] = np.sum(x[i, :])

    @njit(parallel=True)
    def nb_softmax(x, y):
        for i in prange(x.shape[0]):
            m = np.max(x[i, :])
            s = np.float32(0.0)
            for j in range(x.shape[1]):
                e = np.exp(x[i, j] - m)
                y[i, j] = e
                s += e
            for j in range(x.shape[1]):
                y[i, j] = y[i, j] / s

    @njit(parallel=True)
    def nb_jacobi_2d(A, B, T):
        N = A.shape[0]
        for t in range(T):
            for i in prange(1, N - 1):
                for j in range(1, N - 1):
                    B[i, j] = 0.2 * (A[i, j] + A[i, j - 1] + A[i, j + 1] + A[i + 1, j] + A[i - 1, j])
            for i in prange(1, N - 1):
                for j in range(1, N - 1):
                    A[i, j] = 0.2 * (B[i, j] + B[i, j - 1] + B[i, j + 1] + B[i + 1, j] + B[i - 1, j])

    @njit(parallel=True)
    def nb_matvec(A, x, y):
        for i in prange(A.shape[0]):
            acc = np.float32(0.0)
            for j in range(A.shape[1]):
                acc += A[i, j] * x[j]
            y[i] = acc

    @njit(parallel=True)
    def nb_spmv(rows, cols, vals, x, y):
        for i in prange(y.shape[0]):
            acc = 0.0
            for k in range(rows[i], rows[i + 1]):
                acc += vals[k] * x[cols[k]]
            y[i] = acc


def numba_missing(bench):
    note(f"{bench}: numba is not installed; its rows are skipped (pip install numba)")


# ---------------------------------------------------------------------------
# C1: cached-call overhead


def bench_c1(args):
    x = np.ones(16, np.float64)
    y = np.zeros(16, np.float64)
    calls = 2000 if args.quick else 20000
    for specialize in (True, False):
        opts = cpu_opts({}, specialize_scalars=specialize)
        trivial(x, y, 16, 2.5, opts=opts)
        check("C1 parpy", y[0], 2.5, 0, 0)
        emit("C1", f"parpy (specialize_scalars={specialize})",
             per_call(lambda: trivial(x, y, 16, 2.5, opts=opts), calls, args.runs),
             unit="per call")
    if numba is None:
        return numba_missing("C1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nothing to parallelize: a warning
        nb_trivial(x, y, 16, 2.5)
    emit("C1", "numba", per_call(lambda: nb_trivial(x, y, 16, 2.5), calls, args.runs),
         unit="per call")


# ---------------------------------------------------------------------------
# C2: first call, empty cache and warm disk cache, each in a new process

CHILD_PARPY = '''
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import parpy
t_import = time.perf_counter() - t0

@parpy.jit
def row_sum(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = parpy.operators.sum(x[i, :])

N, M = 256, 256
x = np.ones((N, M), np.float32)
y = np.zeros(N, np.float32)
opts = parpy.par({'N': parpy.threads(N)})
opts.backend = parpy.CompileBackend.Cpu
opts.cache_dir = sys.argv[1]
t0 = time.perf_counter()
row_sum(x, y, N, opts=opts)
t_first = time.perf_counter() - t0
assert np.allclose(y, M), y
print(json.dumps({"first_call_s": t_first, "import_s": t_import}))
'''

CHILD_NUMBA = '''
import json, sys, time
import numpy as np
from numba import njit, prange

@njit(parallel=True, cache=CACHE)
def row_sum(x, y):
    for i in prange(x.shape[0]):
        y[i] = np.sum(x[i, :])

N, M = 256, 256
x = np.ones((N, M), np.float32)
y = np.zeros(N, np.float32)
t0 = time.perf_counter()
row_sum(x, y)
t_first = time.perf_counter() - t0
assert np.allclose(y, M), y
print(json.dumps({"first_call_s": t_first}))
'''


def run_child(path, argv, env=None):
    proc = subprocess.run([sys.executable, path, *argv], capture_output=True, text=True,
                          env=env, timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"benchmark child {path} failed:\n{proc.stdout}\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def bench_c2(args):
    reps = 2 if args.quick else 5
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "child_parpy.py")
        with open(script, "w") as f:
            f.write(CHILD_PARPY)
        cold, warm = [], []
        for r in range(reps):
            cache = os.path.join(tmp, f"cache{r}")
            cold.append(run_child(script, [cache])["first_call_s"])
            warm.append(run_child(script, [cache])["first_call_s"])
        emit("C2", "parpy (empty cache)", cold, unit="first call")
        emit("C2", "parpy (warm disk cache)", warm, unit="first call")
        if numba is None:
            return numba_missing("C2")
        cold, warm = [], []
        for cache_flag, out in (("False", cold), ("True", warm)):
            script = os.path.join(tmp, f"child_numba_{cache_flag}.py")
            with open(script, "w") as f:
                f.write(CHILD_NUMBA.replace("CACHE", cache_flag))
            for r in range(reps):
                env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(tmp, f"nb{r}"))
                if cache_flag == "True":
                    run_child(script, [], env)  # populate the cache
                out.append(run_child(script, [], env)["first_call_s"])
        emit("C2", "numba (empty cache)", cold, unit="first call")
        emit("C2", "numba (warm disk cache)", warm, unit="first call")


# ---------------------------------------------------------------------------
# C3: row sum 4096 x 4096 float32


def bench_c3(args):
    N = M = 4096
    x = np.random.default_rng(0).standard_normal((N, M)).astype(np.float32)
    y = np.zeros(N, np.float32)
    ref = x.sum(axis=1)
    opts = cpu_opts({'N': parpy.threads(N)})
    row_sum(x, y, N, opts=opts)
    check("C3 parpy", y, ref, 1e-3, 1e-3)
    emit("C3", "parpy", timeit(lambda: row_sum(x, y, N, opts=opts), args.runs))
    emit("C3", "numpy", timeit(lambda: x.sum(axis=1), args.runs))
    if numba is None:
        return numba_missing("C3")
    y2 = np.zeros(N, np.float32)
    nb_row_sum(x, y2)
    check("C3 numba", y2, ref, 1e-3, 1e-3)
    emit("C3", "numba", timeit(lambda: nb_row_sum(x, y2), args.runs))


# ---------------------------------------------------------------------------
# C4: softmax over the last axis, (16, 16, 256, 256) float32


def np_softmax(x):
    m = x.max(axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=-1, keepdims=True)


def bench_c4(args):
    shape = (16, 16, 256, 256)
    x4 = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    ref = np_softmax(x4)
    x = x4.reshape(-1, shape[-1])  # a view: the last axis stays contiguous
    N, M = x.shape
    y = np.zeros_like(x)
    opts = cpu_opts({'N': parpy.threads(N)})
    softmax(x, y, N, M, opts=opts)
    check("C4 parpy", y.reshape(shape), ref, 1e-4, 1e-6)
    emit("C4", "parpy", timeit(lambda: softmax(x, y, N, M, opts=opts), args.runs))
    emit("C4", "numpy", timeit(lambda: np_softmax(x4), args.runs))
    if numba is None:
        return numba_missing("C4")
    y2 = np.zeros_like(x)
    nb_softmax(x, y2)
    check("C4 numba", y2.reshape(shape), ref, 1e-4, 1e-6)
    emit("C4", "numba", timeit(lambda: nb_softmax(x, y2), args.runs))


# ---------------------------------------------------------------------------
# C5: jacobi-2d N=700, 50 steps, float64


def np_jacobi_2d(A, B, T):
    for _ in range(T):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1]
                               + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1]
                               + B[:-2, 1:-1])


def bench_c5(args):
    N, T = 700, 50
    rng = np.random.default_rng(2)
    A0 = rng.random((N, N))
    B0 = rng.random((N, N))
    Ar, Br = A0.copy(), B0.copy()
    np_jacobi_2d(Ar, Br, T)
    opts = cpu_opts({'i': parpy.threads(N)})
    A, B = A0.copy(), B0.copy()
    jacobi_2d(A, B, N, T, opts=opts)
    check("C5 parpy", A, Ar, 1e-10, 1e-12)
    # each run starts from the same data, copied outside the timed call
    fresh = lambda: (A0.copy(), B0.copy())  # noqa: E731
    emit("C5", "parpy", timeit(lambda A, B: jacobi_2d(A, B, N, T, opts=opts), args.runs,
                               setup=fresh))
    emit("C5", "numpy", timeit(lambda A, B: np_jacobi_2d(A, B, T), args.runs, setup=fresh))
    if numba is None:
        return numba_missing("C5")
    A, B = A0.copy(), B0.copy()
    nb_jacobi_2d(A, B, T)
    check("C5 numba", A, Ar, 1e-10, 1e-12)
    emit("C5", "numba", timeit(lambda A, B: nb_jacobi_2d(A, B, T), args.runs, setup=fresh))


# ---------------------------------------------------------------------------
# C6: matrix-vector 4096 x 4096 float32


def bench_c6(args):
    N = 4096
    rng = np.random.default_rng(3)
    A = rng.standard_normal((N, N)).astype(np.float32)
    x = rng.standard_normal(N).astype(np.float32)
    # The reference avoids BLAS on purpose: OpenBLAS's worker threads keep
    # spinning for a while after a call and would slow whatever runs next on
    # a 2-core machine. BLAS itself is timed after parpy.
    ref = (A.astype(np.float64) * x.astype(np.float64)).sum(axis=1)
    y = np.zeros(N, np.float32)
    opts = cpu_opts({'N': parpy.threads(N)})
    matvec(A, x, y, N, opts=opts)
    check("C6 parpy", y, ref, 1e-3, 1e-2)
    emit("C6", "parpy", timeit(lambda: matvec(A, x, y, N, opts=opts), args.runs))
    if numba is None:
        numba_missing("C6")
    else:
        y2 = np.zeros(N, np.float32)
        nb_matvec(A, x, y2)
        check("C6 numba", y2, ref, 1e-3, 1e-2)
        emit("C6", "numba", timeit(lambda: nb_matvec(A, x, y2), args.runs))
    # BLAS last (see above).
    emit("C6", "numpy (BLAS)", timeit(lambda: A @ x, args.runs))


# ---------------------------------------------------------------------------
# C7: CSR SpMV, 1M rows, 8 nnz per row, float64


def bench_c7(args):
    N, per_row = 1_000_000, 8
    rng = np.random.default_rng(4)
    rows = np.arange(0, N * per_row + 1, per_row, dtype=np.int64)
    cols = rng.integers(0, N, N * per_row).astype(np.int64)
    vals = rng.standard_normal(N * per_row)
    x = rng.standard_normal(N)
    ref = np.add.reduceat(vals * x[cols], rows[:-1])
    y = np.zeros(N)
    opts = cpu_opts({'N': parpy.threads(N)})
    spmv(rows, cols, vals, x, y, N, opts=opts)
    check("C7 parpy", y, ref, 1e-10, 1e-10)
    emit("C7", "parpy", timeit(lambda: spmv(rows, cols, vals, x, y, N, opts=opts), args.runs))
    if sp is not None:
        m = sp.csr_matrix((vals, cols, rows), shape=(N, N))
        check("C7 scipy", m @ x, ref, 1e-10, 1e-10)
        emit("C7", "scipy", timeit(lambda: m @ x, args.runs))
    else:
        note("C7: scipy is not installed; its row is skipped")
    if numba is None:
        return numba_missing("C7")
    y2 = np.zeros(N)
    nb_spmv(rows, cols, vals, x, y2)
    check("C7 numba", y2, ref, 1e-10, 1e-10)
    emit("C7", "numba", timeit(lambda: nb_spmv(rows, cols, vals, x, y2), args.runs))


# ---------------------------------------------------------------------------
# N1-N4: natural loops written as a Numba user writes them (issue 13): an
# unannotated accumulator `acc = 0.0` over float32 data, tuple unpacking of
# shapes; the same source for parpy (a label) and Numba (`prange`).


@parpy.jit
def conv2d_nat(x, w, y):
    H, W = y.shape
    K = w.shape[0]
    parpy.label('i')
    for i in range(H):
        for j in range(W):
            acc = 0.0
            for a in range(K):
                for b in range(K):
                    acc += x[i + a, j + b] * w[a, b]
            y[i, j] = acc


@parpy.jit
def kmeans_assign_nat(X, C, labels):
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


@parpy.jit
def matmul_nat(A, B, Cm):
    N, K = A.shape
    M = B.shape[1]
    parpy.label('i')
    for i in range(N):
        for j in range(M):
            acc = 0.0
            for k in range(K):
                acc += A[i, k] * B[k, j]
            Cm[i, j] = acc


@parpy.jit
def bgemm_nat(A, B, Cm):
    Bt, N, K = A.shape
    M = B.shape[2]
    parpy.label('b')
    for b in range(Bt):
        for i in range(N):
            for j in range(M):
                acc = 0.0
                for k in range(K):
                    acc += A[b, i, k] * B[b, k, j]
                Cm[b, i, j] = acc


if numba is not None:
    @njit(parallel=True)
    def nb_conv2d(x, w, y):
        H, W = y.shape
        K = w.shape[0]
        for i in prange(H):
            for j in range(W):
                acc = 0.0
                for a in range(K):
                    for b in range(K):
                        acc += x[i + a, j + b] * w[a, b]
                y[i, j] = acc

    @njit(parallel=True)
    def nb_kmeans_assign(X, C, labels):
        N, D = X.shape
        K = C.shape[0]
        for i in prange(N):
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

    @njit(parallel=True)
    def nb_matmul(A, B, Cm):
        N, K = A.shape
        M = B.shape[1]
        for i in prange(N):
            for j in range(M):
                acc = 0.0
                for k in range(K):
                    acc += A[i, k] * B[k, j]
                Cm[i, j] = acc

    @njit(parallel=True)
    def nb_bgemm(A, B, Cm):
        Bt, N, K = A.shape
        M = B.shape[2]
        for b in prange(Bt):
            for i in range(N):
                for j in range(M):
                    acc = 0.0
                    for k in range(K):
                        acc += A[b, i, k] * B[b, k, j]
                    Cm[b, i, j] = acc


def natural_bench(name, par_fn, nb_name, args_fn, out_index, ref, spec, runs, rtol, atol):
    """Times `par_fn` (parpy) and the Numba twin on fresh outputs from
    `args_fn`, after checking both against `ref` (`rtol=None`: labels, of
    which at most 0.1% may differ: float32 near-ties)."""
    def check_out(who, got):
        if rtol is None:
            bad = np.mean(got != ref)
            if bad > 1e-3:
                raise SystemExit(f"{who}: {bad:.2%} of the labels differ from NumPy's")
        else:
            check(who, got, ref, rtol, atol)

    a = args_fn()
    opts = cpu_opts(spec)
    par_fn(*a, opts=opts)
    check_out(f"{name} parpy", a[out_index])
    emit(name, "parpy", timeit(lambda: par_fn(*a, opts=opts), runs))
    if numba is None:
        return numba_missing(name)
    nb = globals()[nb_name]
    b = args_fn()
    nb(*b)
    check_out(f"{name} numba", b[out_index])
    emit(name, "numba", timeit(lambda: nb(*b), runs))


def bench_n1(args):
    rng = np.random.default_rng(11)
    H, W, K = 1024, 1024, 5
    x = rng.standard_normal((H + K - 1, W + K - 1)).astype(np.float32)
    w = rng.standard_normal((K, K)).astype(np.float32)
    ref = np.zeros((H, W))
    for a in range(K):
        for b in range(K):
            ref += x[a:a + H, b:b + W].astype(np.float64) * w[a, b]
    natural_bench("N1", conv2d_nat, "nb_conv2d", lambda: [x, w, np.zeros((H, W), np.float32)],
                  2, ref, {'i': parpy.threads(H)}, args.runs, 1e-4, 1e-3)


def bench_n2(args):
    rng = np.random.default_rng(12)
    N, D, K = 200_000, 16, 16
    X = rng.standard_normal((N, D)).astype(np.float32)
    C = rng.standard_normal((K, D)).astype(np.float32)
    d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
    ref = d.argmin(axis=1)
    natural_bench("N2", kmeans_assign_nat, "nb_kmeans_assign",
                  lambda: [X, C, np.zeros(N, np.int32)], 2, ref, {'i': parpy.threads(N)},
                  args.runs, None, None)


def bench_n3(args):
    rng = np.random.default_rng(13)
    N = 512
    A = rng.standard_normal((N, N)).astype(np.float32)
    B = rng.standard_normal((N, N)).astype(np.float32)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    natural_bench("N3", matmul_nat, "nb_matmul", lambda: [A, B, np.zeros((N, N), np.float32)],
                  2, ref, {'i': parpy.threads(N)}, args.runs, 1e-3, 1e-3)


def bench_n4(args):
    rng = np.random.default_rng(14)
    Bt, N = 64, 96
    A = rng.standard_normal((Bt, N, N)).astype(np.float32)
    B = rng.standard_normal((Bt, N, N)).astype(np.float32)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    natural_bench("N4", bgemm_nat, "nb_bgemm", lambda: [A, B, np.zeros((Bt, N, N), np.float32)],
                  2, ref, {'b': parpy.threads(Bt)}, args.runs, 1e-3, 1e-3)


BENCHES = {
    "C1": bench_c1, "C2": bench_c2, "C3": bench_c3, "C4": bench_c4,
    "C5": bench_c5, "C6": bench_c6, "C7": bench_c7,
    "N1": bench_n1, "N2": bench_n2, "N3": bench_n3, "N4": bench_n4,
}


def fmt_time(s):
    if s < 1e-3:
        return f"{s * 1e6:9.2f} us"
    if s < 1:
        return f"{s * 1e3:9.2f} ms"
    return f"{s:9.3f} s "


def print_table():
    print()
    print("| bench | system | median | runs | parpy / this |")
    print("|---|---|---|---|---|")
    for bench in BENCHES:
        rows = [r for r in RESULTS if r["bench"] == bench]
        if not rows:
            continue
        base = {}
        for r in rows:  # parpy row(s) of the same kind to compare against
            if r["system"].startswith("parpy"):
                base[r["system"]] = r["median_s"]
        for r in rows:
            ratio = ""
            if not r["system"].startswith("parpy") and base:
                # compare with the parpy row of the same kind when there is one
                kind = r["system"].split(" ", 1)[1] if " " in r["system"] else ""
                key = next((k for k in base if kind and k.endswith(kind)), next(iter(base)))
                ratio = f"{base[key] / r['median_s']:.2f} ({key})"
            print(f"| {bench} | {r['system']} | {fmt_time(r['median_s']).strip()} | "
                  f"{r['runs']} | {ratio} |")
    for n in NOTES:
        print(f"note: {n}")
    print("parpy / this < 1 means parpy is faster than that system in this run.")
    pairs = [(r, next((o for o in RESULTS if o["bench"] == r["bench"]
                       and o["system"] == r["system"] + OFF), None)) for r in RESULTS]
    pairs = [(on, off) for on, off in pairs if off is not None]
    if pairs:
        print()
        print("| bench | system | checks on | checks off | on / off | runs |")
        print("|---|---|---|---|---|---|")
        for on, off in pairs:
            ratio = on["median_s"] / off["median_s"]
            flag = " (> 3%)" if ratio > 1.03 else ""
            print(f"| {on['bench']} | {on['system']} | {fmt_time(on['median_s']).strip()} | "
                  f"{fmt_time(off['median_s']).strip()} | {ratio:.3f}{flag} | "
                  f"{on['runs']} + {off['runs']} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer runs; C1-C4 only; < 1 minute")
    ap.add_argument("--runs", type=int, default=None, help="timed runs per measurement")
    ap.add_argument("--only", default=None, help="comma-separated list, e.g. C1,C3")
    ap.add_argument("--bounds-check", choices=["on", "off", "compare"], default="on",
                    help="opts.bounds_check of the parpy runs; compare: on and off, "
                         "alternating, in --rounds rounds")
    ap.add_argument("--rounds", type=int, default=None,
                    help="rounds per benchmark, samples pooled (default 3, --quick 1): "
                         "parpy and its peers take turns in blocks of --runs, so a "
                         "load that comes and goes weighs on all of them; with "
                         "--bounds-check compare, rounds of on/off")
    args = ap.parse_args()
    if args.runs is None:
        args.runs = 5 if args.quick else 10
    if args.rounds is None:
        args.rounds = 1 if args.quick else 3
    if args.only:
        names = [s.strip().upper() for s in args.only.split(",")]
    else:
        names = ["C1", "C2", "C3", "C4"] if args.quick else list(BENCHES)
    unknown = [n for n in names if n not in BENCHES]
    if unknown:
        ap.error(f"unknown benchmark(s): {', '.join(unknown)}")
    print(json.dumps({
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0],
                    "numpy": np.__version__,
                    "numba": getattr(numba, "__version__", None)}}), flush=True)
    if args.bounds_check == "compare":
        # on off, off on, on off, ...: neither setting always runs first
        passes = [c for r in range(max(args.rounds, 1))
                  for c in ([True, False] if r % 2 == 0 else [False, True])]
    else:
        passes = [args.bounds_check == "on"] * max(args.rounds, 1)
    for n in names:
        for checks in passes:
            BOUNDS_CHECK[0] = checks
            BENCHES[n](args)
    print_table()


if __name__ == "__main__":
    main()
