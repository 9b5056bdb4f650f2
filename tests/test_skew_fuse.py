"""Skewed fusion on the Cpu backend (`passes::cpu_skew_fuse`): two sibling
parallel loops over the same rows, the second reading rows `i + c` of what
the first writes, run fused, one chunk of rows per thread with the second
loop a few rows behind; the rows at the edges of each chunk wait for the
other threads. Every iteration does what it did before, so the results are
bit for bit plain Python's, whatever the number of threads; loops whose
rows do not line up are left alone."""

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both

HERE = os.path.dirname(os.path.abspath(__file__))


def fused(fn, args, opts):
    return "omp_get_max_threads" in parpy.print_compiled(fn, args, opts)


def parallel_regions(fn, args, opts):
    return parpy.print_compiled(fn, args, opts).count("#pragma omp parallel for")


def exact(fn, args, opts):
    return run_both(fn, args, opts, rtol=0, atol=0)


@parpy.jit
def jacobi(A, B, N, T):
    for t in range(T):
        parpy.label('i')
        for i in range(1, N - 1):
            for j in range(1, N - 1):
                B[i, j] = 0.2 * (A[i, j] + A[i, j - 1] + A[i, j + 1] + A[i + 1, j] + A[i - 1, j])
        parpy.label('i')
        for i in range(1, N - 1):
            for j in range(1, N - 1):
                A[i, j] = 0.2 * (B[i, j] + B[i, j - 1] + B[i, j + 1] + B[i + 1, j] + B[i - 1, j])


def jacobi_args(n, t=3, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.random((n, n)), rng.random((n, n)), n, t]


@pytest.mark.parametrize("n", [18, 40, 97])
@pytest.mark.parametrize("specialize", [True, False])
def test_jacobi_is_bit_identical(n, specialize):
    args = jacobi_args(n)
    opts = cpu_opts({'i': parpy.threads(n)}, specialize_scalars=specialize)
    exact(jacobi, args, opts)
    assert fused(jacobi, args, opts)


def test_jacobi_matches_numpy():
    A, B, n, t = jacobi_args(64, t=5)
    Ar, Br = A.copy(), B.copy()
    for _ in range(t):
        Br[1:-1, 1:-1] = 0.2 * (Ar[1:-1, 1:-1] + Ar[1:-1, :-2] + Ar[1:-1, 2:] + Ar[2:, 1:-1]
                                + Ar[:-2, 1:-1])
        Ar[1:-1, 1:-1] = 0.2 * (Br[1:-1, 1:-1] + Br[1:-1, :-2] + Br[1:-1, 2:] + Br[2:, 1:-1]
                                + Br[:-2, 1:-1])
    jacobi(A, B, n, t, opts=cpu_opts({'i': parpy.threads(n)}))
    assert np.array_equal(A, Ar) and np.array_equal(B, Br)


THREADS_SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {here!r})
    import numpy as np
    import parpy
    from conftest import cpu_opts, run_both
    from test_skew_fuse import jacobi, jacobi_args
    for n in (3, 4, 5, 9, 30):
        args = jacobi_args(n, t=4, seed=n)
        opts = cpu_opts({{'i': parpy.threads(64)}}, specialize_scalars=False)
        run_both(jacobi, args, opts, rtol=0, atol=0)
    print("ok")
""")


@pytest.mark.parametrize("threads", [1, 3, 8])
def test_any_number_of_threads(threads, tmp_path):
    # chunks of one row, empty chunks, more threads than cores (OpenMP
    # reads the count when it starts: a process of its own)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    script = tmp_path / "threads.py"
    script.write_text(THREADS_SCRIPT.format(here=HERE))
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-3000:]


@parpy.jit
def ahead_two(p, q, N, M):
    parpy.label('a')
    for i in range(N - 2):
        for j in range(M):
            q[i, j] = p[i, j] * 2.0 + p[i + 1, j]
    parpy.label('b')
    for i in range(N - 2):
        for j in range(M):
            p[i, j] = q[i + 2, j] - q[i, j]


@parpy.jit
def behind_two(p, q, N, M):
    parpy.label('a')
    for i in range(2, N):
        for j in range(M):
            q[i, j] = p[i, j] * 0.5 + 1.0
    parpy.label('b')
    for i in range(2, N):
        for j in range(M):
            p[i, j] = q[i - 2, j] + q[i - 1, j] * q[i, j]


@parpy.jit
def overwrite_read_rows(p, q, N, M):
    # the second loop writes rows of `p` the first reads around them
    parpy.label('a')
    for i in range(1, N - 1):
        for j in range(M):
            q[i, j] = p[i - 1, j] - p[i + 1, j]
    parpy.label('b')
    for i in range(1, N - 1):
        for j in range(M):
            p[i, j] = q[i, j] * 3.0


@parpy.jit
def shifted_store(p, q, N, M):
    # the first loop writes row i + 1; each loop's rows are its own
    parpy.label('a')
    for i in range(N - 1):
        s = p[i, 0]
        for j in range(M):
            q[i + 1, j] = p[i, j] + s
    parpy.label('b')
    for i in range(N - 1):
        s = q[i, M - 1]
        for j in range(M):
            p[i, j] = q[i, j] * s - q[i + 1, j]


@parpy.jit
def slice_rows(p, q, N, M):
    # row slices; the second loop's reads its own row of `p` it writes
    parpy.label('a')
    for i in range(1, N - 1):
        q[i, :] = p[i - 1, :] + p[i + 1, :]
    parpy.label('b')
    for i in range(1, N - 1):
        p[i, 1:] = p[i, :-1] + q[i - 1, 1:] * 0.5


@pytest.mark.parametrize("fn", [ahead_two, behind_two, overwrite_read_rows, shifted_store,
                                slice_rows])
@pytest.mark.parametrize("n", [19, 60])
@pytest.mark.parametrize("specialize", [True, False])
def test_skews(fn, n, specialize):
    rng = np.random.default_rng(n)
    m = 11
    args = [rng.standard_normal((n, m)), rng.standard_normal((n, m)), n, m]
    opts = cpu_opts({'a': parpy.threads(n), 'b': parpy.threads(n)},
                    specialize_scalars=specialize)
    exact(fn, args, opts)
    assert fused(fn, args, opts)


def paired(fn, args, opts, array):
    """Whether the fused loop runs two rows at a time, loading the elements
    of `array` both rows read once (`passes::lanes::share_reads`)."""
    code = parpy.print_compiled(fn, args, opts)
    return re.search(r"\w+ \+= 2\)", code) is not None and f"double {array}_at = " in code


@pytest.mark.parametrize("n", [18, 19, 40, 97])
def test_jacobi_rows_run_in_pairs_that_share_their_loads(n):
    # 16 or 17 rows: chunks of odd and even length on two threads
    args = jacobi_args(n)
    opts = cpu_opts({'i': parpy.threads(n)})
    exact(jacobi, args, opts)
    assert paired(jacobi, args, opts, "A") and paired(jacobi, args, opts, "B")


@parpy.jit
def jacobi_slices(A, B, N, T):
    # ParPy's way: one statement per sweep, a label per sliced dimension
    for t in range(T):
        parpy.label('i')
        parpy.label('j')
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1]
                               + A[:-2, 1:-1])
        parpy.label('i')
        parpy.label('j')
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1]
                               + B[:-2, 1:-1])


@pytest.mark.parametrize("inner", [False, True])
@pytest.mark.parametrize("n", [18, 19, 40])
def test_jacobi_of_slices_fuses_and_pairs(inner, n):
    # the slices index rows as `1 + j` (the counter second); with both
    # labels mapped the columns are an inner parallel level
    args = jacobi_args(n)
    spec = {'i': parpy.threads(n)}
    if inner:
        spec['j'] = parpy.threads(n)
    opts = cpu_opts(spec)
    exact(jacobi_slices, args, opts)
    assert fused(jacobi_slices, args, opts)
    assert paired(jacobi_slices, args, opts, "A") and paired(jacobi_slices, args, opts, "B")


@pytest.mark.parametrize("fn,first,second", [(ahead_two, True, False),
                                             (behind_two, False, True),
                                             (overwrite_read_rows, False, False)])
def test_only_loops_whose_rows_meet_share_loads(fn, first, second):
    # ahead_two's first loop reads p[i + 1, j], which row i + 1 reads as
    # p[i, j]; its second reads q two rows apart: no element in common
    n, m = 19, 11
    rng = np.random.default_rng(3)
    args = [rng.standard_normal((n, m)), rng.standard_normal((n, m)), n, m]
    opts = cpu_opts({'a': parpy.threads(n), 'b': parpy.threads(n)})
    exact(fn, args, opts)
    assert fused(fn, args, opts)
    code = parpy.print_compiled(fn, args, opts)
    assert ("double p_at = " in code) == first
    assert ("double q_at = " in code) == second
    assert ("i += 2" in code) == (first or second)


@parpy.jit
def far_ahead(p, q, N, M):
    parpy.label('a')
    for i in range(N - 5):
        for j in range(M):
            q[i, j] = p[i, j] + 1.0
    parpy.label('b')
    for i in range(N - 5):
        for j in range(M):
            p[i, j] = q[i + 5, j]


@parpy.jit
def reversed_rows(p, q, N, M):
    parpy.label('a')
    for i in range(N):
        for j in range(M):
            q[i, j] = p[i, j] + 1.0
    parpy.label('b')
    for i in range(N):
        for j in range(M):
            p[i, j] = q[N - 1 - i, j]


@parpy.jit
def other_bounds(p, q, N, M):
    parpy.label('a')
    for i in range(1, N):
        for j in range(M):
            q[i, j] = p[i, j] + 1.0
    parpy.label('b')
    for i in range(N - 1):
        for j in range(M):
            p[i, j] = q[i + 1, j]


@parpy.jit
def scalar_rows(p, q, N, M):
    parpy.label('a')
    for i in range(1, N - 1):
        q[i, 0] = p[i - 1, 0] + p[i + 1, 0]
    parpy.label('b')
    for i in range(1, N - 1):
        p[i, 0] = q[i - 1, 0] * q[i + 1, 0]


@parpy.jit
def column_read(p, q, N, M):
    parpy.label('a')
    for i in range(M):
        for j in range(N):
            q[j, i] = p[j, i] + 1.0
    parpy.label('b')
    for i in range(M):
        for j in range(N):
            p[j, i] = q[j, (i + 1) % M]


@pytest.mark.parametrize("fn", [far_ahead, reversed_rows, other_bounds, scalar_rows,
                                column_read])
def test_left_alone(fn):
    rng = np.random.default_rng(5)
    n, m = 40, 24
    args = [rng.standard_normal((n, m)), rng.standard_normal((n, m)), n, m]
    opts = cpu_opts({'a': parpy.threads(n), 'b': parpy.threads(n)})
    exact(fn, args, opts)
    assert not fused(fn, args, opts)
    assert parallel_regions(fn, args, opts) == 2


@parpy.jit
def normalize(x, s, y, N, M):
    parpy.label('a')
    for i in range(N):
        acc = 0.0
        for j in range(M):
            acc += x[i, j]
        s[i] = acc
    parpy.label('b')
    for i in range(N):
        for j in range(M):
            y[i, j] = x[i, j] / s[i]


def test_same_rows_fuse_into_one_loop():
    rng = np.random.default_rng(6)
    n, m = 33, 50
    args = [rng.random((n, m)) + 0.5, np.zeros(n), np.zeros((n, m)), n, m]
    opts = cpu_opts({'a': parpy.threads(n), 'b': parpy.threads(n)})
    exact(normalize, args, opts)
    assert parallel_regions(normalize, args, opts) == 1
    assert not fused(normalize, args, opts)


@parpy.jit
def reads_past_the_end(p, q, N, M):
    parpy.label('a')
    for i in range(N):
        for j in range(M):
            q[i, j] = p[i, j] + 1.0
    parpy.label('b')
    for i in range(N):
        for j in range(M):
            p[i, j] = q[i + 1, j]


def test_out_of_bounds_still_raises():
    n, m = 30, 8
    args = [np.zeros((n, m)), np.zeros((n, m)), n, m]
    opts = cpu_opts({'a': parpy.threads(n), 'b': parpy.threads(n)})
    with pytest.raises(IndexError):
        reads_past_the_end(*args, opts=opts)
