"""Programs ported from Numba and NumPy code (the kinds of Numba's
documentation, tutorials and benchmark suites), written as a user writes
them, with `parpy.label` on the loops to parallelize. Each runs as the
undecorated function on NumPy values, on the Cpu backend and on the CUDA
emulator: all three must agree bit for bit (a program of `np.exp` and
`np.log`: the two backends bit for bit, NumPy closely, as NumPy's own SIMD
`exp` differs from the C library's in the last place; docs/arithmetic.md).
The Metal code of each (float32 arguments) must pass clang's syntax
check."""

import math
import shutil

import numpy as np
import pytest

import parpy
from parpy import _cuda_emu
from conftest import backend_opts, cpu_opts, py_func
import test_metal_codegen as tm

T = parpy.threads


@parpy.jit
def mc_pi(hits, seeds, N, S):
    parpy.label('t')
    for t in range(N):
        state = seeds[t]
        count = 0
        for s in range(S):
            state = (state * 1103515245 + 12345) % 2147483648
            x = state / 2147483648.0
            state = (state * 1103515245 + 12345) % 2147483648
            y = state / 2147483648.0
            if x * x + y * y <= 1.0:
                count += 1
        hits[t] = count


@parpy.jit
def mandelbrot(out, xmin, xmax, ymin, ymax, H, W, max_iter):
    parpy.label('y')
    for py in range(H):
        parpy.label('x')
        for px in range(W):
            cr = xmin + (xmax - xmin) * px / W
            ci = ymin + (ymax - ymin) * py / H
            zr = 0.0
            zi = 0.0
            n = 0
            while zr * zr + zi * zi <= 4.0 and n < max_iter:
                zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
                n += 1
            out[py, px] = n


@parpy.jit
def histogram(x, bins, N, B):
    parpy.label('i')
    for i in range(N):
        b = min(int(x[i] * B), B - 1)
        with parpy.atomic:
            bins[b] += 1


@parpy.jit
def cnd(d):
    return 0.5 * (1.0 + math.erf(d / math.sqrt(2.0)))


@parpy.jit
def black_scholes(S, K, Tm, call, put, r, sigma, N):
    parpy.label('i')
    for i in range(N):
        sqrtT = np.sqrt(Tm[i])
        d1 = (np.log(S[i] / K[i]) + (r + 0.5 * sigma * sigma) * Tm[i]) / (sigma * sqrtT)
        d2 = d1 - sigma * sqrtT
        expRT = np.exp(-r * Tm[i])
        call[i] = S[i] * cnd(d1) - K[i] * expRT * cnd(d2)
        put[i] = K[i] * expRT * (1.0 - cnd(d2)) - S[i] * (1.0 - cnd(d1))


@parpy.jit
def layernorm(x, gamma, beta, y, N, eps):
    parpy.label('i')
    for i in range(N):
        mu = x[i].mean()
        var = ((x[i] - mu) ** 2).mean()
        y[i] = (x[i] - mu) / np.sqrt(var + eps) * gamma + beta


@parpy.jit
def row_trapezoid(y, x, out, N):
    parpy.label('i')
    for i in range(N):
        out[i] = np.trapezoid(y[i], x)


@parpy.jit
def blur(img, out, H, W):
    k = ((1.0, 2.0, 1.0), (2.0, 4.0, 2.0), (1.0, 2.0, 1.0))
    parpy.label('i')
    for i in range(1, H - 1):
        parpy.label('j')
        for j in range(1, W - 1):
            s = 0.0
            for a in range(3):
                for b in range(3):
                    s += k[a][b] * img[i + a - 1, j + b - 1]
            out[i, j] = s / 16.0


@parpy.jit
def life(grid, new, N, M, steps):
    for s in range(steps):
        parpy.label('i')
        for i in range(N):
            parpy.label('j')
            for j in range(M):
                n = 0
                for di in range(-1, 2):
                    for dj in range(-1, 2):
                        if di != 0 or dj != 0:
                            n += grid[(i + di) % N, (j + dj) % M]
                alive = grid[i, j] == 1
                new[i, j] = 1 if (alive and (n == 2 or n == 3)) or (not alive and n == 3) else 0
        parpy.label('i')
        for i in range(N):
            parpy.label('j')
            for j in range(M):
                grid[i, j] = new[i, j]


@parpy.jit
def edit_distance(A, B, out, P, n, m):
    parpy.label('p')
    for p in range(P):
        prev = np.zeros(m + 1, dtype=np.int64)
        cur = np.zeros(m + 1, dtype=np.int64)
        for j in range(m + 1):
            prev[j] = j
        for i in range(1, n + 1):
            cur[0] = i
            for j in range(1, m + 1):
                cost = 0 if A[p, i - 1] == B[p, j - 1] else 1
                cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            for j in range(m + 1):
                prev[j] = cur[j]
        out[p] = prev[m]


@parpy.jit
def pagerank(indptr, src, outdeg, rank, new, N, d, iters):
    for it in range(iters):
        parpy.label('v')
        for v in range(N):
            s = 0.0
            for k in range(indptr[v], indptr[v + 1]):
                u = src[k]
                s += rank[u] / outdeg[u]
            new[v] = (1.0 - d) / N + d * s
        parpy.label('v')
        for v in range(N):
            rank[v] = new[v]


def pagerank_args():
    rng = np.random.default_rng(34)
    N = 12
    adj = rng.random((N, N)) < 0.3
    np.fill_diagonal(adj, False)
    for u in range(N):
        adj[u, (u + 1) % N] = True
    indptr = np.zeros(N + 1, np.int64)
    src = []
    for v in range(N):
        us = np.nonzero(adj[:, v])[0]
        src.extend(us)
        indptr[v + 1] = indptr[v] + len(us)
    outdeg = adj.sum(axis=1).astype(np.float64)
    return [indptr, np.array(src, np.int64), outdeg, np.full(N, 1.0 / N), np.zeros(N), N, 0.85, 8]


RNG = np.random.default_rng(2026)
P, n, m = 4, 9, 7

PROGRAMS = {
    "mc_pi": (mc_pi, lambda: [np.zeros(16, np.int64), np.arange(1, 17, dtype=np.int64) * 7919, 16, 100],
              {'t': T(16)}),
    "mandelbrot": (mandelbrot, lambda: [np.zeros((12, 16), np.int32), -2.0, 1.0, -1.0, 1.0, 12, 16, 40],
                   {'y': T(12), 'x': T(16)}),
    "histogram": (histogram, lambda: [RNG.random(500), np.zeros(8, np.int32), 500, 8], {'i': T(500)}),
    "black_scholes": (black_scholes,
                      lambda: [RNG.uniform(5, 30, 40), RNG.uniform(1, 100, 40), RNG.uniform(0.25, 10, 40),
                               np.zeros(40), np.zeros(40), 0.02, 0.3, 40], {'i': T(40)}),
    # an unlabelled row mean inside a thread: NumPy's pairwise order
    "layernorm": (layernorm, lambda: [RNG.standard_normal((4, 150)), RNG.random(150), RNG.random(150),
                                      np.zeros((4, 150)), 4, 1e-5], {'i': T(4)}),
    "row_trapezoid": (row_trapezoid, lambda: [RNG.random((3, 40)), np.linspace(0, 1, 40), np.zeros(3), 3],
                      {'i': T(3)}),
    # a table of Python floats at a run-time index, float32 data
    "blur": (blur, lambda: [RNG.random((8, 9)).astype(np.float32), np.zeros((8, 9), np.float32), 8, 9],
             {'i': T(6), 'j': T(7)}),
    "life": (life, lambda: [(RNG.random((8, 10)) < 0.35).astype(np.uint8), np.zeros((8, 10), np.uint8), 8, 10, 4],
             {'i': T(8), 'j': T(10)}),
    "edit_distance": (edit_distance, lambda: [RNG.integers(0, 4, (P, n)), RNG.integers(0, 4, (P, m)),
                                              np.zeros(P, np.int64), P, n, m], {'p': T(P)}),
    "pagerank": (pagerank, pagerank_args, {'v': T(12)}),
}


def copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


# programs whose transcendental functions NumPy computes with its own SIMD
# code
NUMPY_SIMD_MATH = {"black_scholes"}


def same(ref, got, what, close=False):
    for k, (r, g) in enumerate(zip(ref, got)):
        if isinstance(r, np.ndarray):
            assert g.dtype == r.dtype
            if close:
                np.testing.assert_allclose(g, r, rtol=1e-13, atol=1e-13, err_msg=f"{what}: argument {k}")
            else:
                assert g.tobytes() == r.tobytes(), f"{what}: argument {k}\n{g!r}\n!= NumPy's\n{r!r}"


@pytest.mark.skipif(shutil.which("c++") is None, reason="the CUDA emulator needs a C++ compiler")
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_ported_program(name):
    fn, make, spec = PROGRAMS[name]
    args = make()
    ref = copies(args)
    with np.errstate(all="ignore"):
        py_func(fn)(*ref)
    close = name in NUMPY_SIMD_MATH
    cpu = copies(args)
    fn(*cpu, opts=cpu_opts(spec))
    same(ref, cpu, "Cpu", close)
    got = copies(args)
    with _cuda_emu.installed(1):
        fn(*got, opts=backend_opts(parpy.CompileBackend.Cuda, spec))
    same(ref, got, "Cuda (emulated)", close)
    same(cpu, got, "Cuda (emulated) against Cpu")
    # the Metal program of float32 data passes clang's syntax check
    margs = [a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype == np.float64 else a for a in args]
    metal = backend_opts(parpy.CompileBackend.Metal, spec)
    if name == "black_scholes":
        with pytest.raises(parpy.CompileError, match="`erf` is not in the Metal standard library"):
            parpy.print_compiled(fn, margs, metal)
        return
    code = parpy.print_compiled(fn, margs, metal)
    if tm.CLANG is not None:
        tm.assert_clang_ok(code, name)
