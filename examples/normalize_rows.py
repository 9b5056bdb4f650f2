"""Normalize each row of a matrix: the "Inconsistent parallel structure" tutorial.

Inside the parallel loop over rows, the row sum (label M1) and the division
(label M2) are two sibling parallel statements. Asking for 128 threads for one
and 256 for the other is an inconsistent parallel structure, which parpy
reports. Two ways to fix it:

  fix 1: give both statements the same number of threads;
  fix 2: split the code into two loop nests (two kernels), each with its own
         parallelism.
"""

import sys

import numpy as np

import parpy


@parpy.jit
def normalize_rows(x, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M1')
        s = parpy.operators.sum(x[i, :])
        parpy.label('M2')
        x[i, :] = x[i, :] / s


@parpy.jit
def normalize_rows_split(x, s, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M1')
        s[i] = parpy.operators.sum(x[i, :])
    parpy.label('N')
    for i in range(N):
        parpy.label('M2')
        x[i, :] = x[i, :] / s[i]


def make_input(N, M):
    rng = np.random.default_rng(2)
    # positive entries keep the row sums well away from zero
    return (rng.random((N, M)) + 0.5).astype(np.float32)


def reference(x):
    return x / x.sum(axis=1, keepdims=True)


def main():
    N, M = 256, 1000
    x0 = make_input(N, M)
    expected = reference(x0)

    # The inconsistent structure: 128 threads for M1, 256 for M2.
    print("---- inconsistent parallel structure ----")
    bad = parpy.par({'N': parpy.threads(N), 'M1': parpy.threads(128),
                     'M2': parpy.threads(256)})
    x = x0.copy()
    try:
        normalize_rows(x, N, opts=bad)
    except parpy.CompileError as e:
        print(e)
    else:
        print("expected a CompileError for the inconsistent parallel structure")
        return 1

    # Fix 1: the same number of threads for both sibling statements.
    print("---- fix 1: equal thread counts ----")
    opts = parpy.par({'N': parpy.threads(N), 'M1': parpy.threads(256),
                      'M2': parpy.threads(256)})
    x = x0.copy()
    normalize_rows(x, N, opts=opts)
    assert np.allclose(x, expected, rtol=1e-4, atol=1e-6), "fix 1 gives a wrong result"
    print("fix 1: result matches NumPy")

    # Fix 2: two loop nests, so each gets its own kernel and parallelism.
    print("---- fix 2: two loop nests ----")
    x = x0.copy()
    s = np.empty((N,), dtype=np.float32)
    normalize_rows_split(x, s, N, opts=bad)
    assert np.allclose(x, expected, rtol=1e-4, atol=1e-6), "fix 2 gives a wrong result"
    assert np.allclose(s, x0.sum(axis=1), rtol=1e-4), "fix 2 row sums are wrong"
    print("fix 2: result matches NumPy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
