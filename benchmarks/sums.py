"""Float sums on the Cpu backend: row sums, matrix-vector products and sums
of exponentials (float32 and float64, rows of 200 and 4096 elements), the
reductions that `passes::pairwise_sums` compiles in NumPy's order.

    python benchmarks/sums.py            # one line per measurement

Prints the median and the minimum of 40 calls. To compare two builds, run
it with each (alternating, a few times) and compare the minima: the machine
is shared and noisy.
"""

import os
import sys
import time

import numpy as np

import parpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import matvec, row_sum  # noqa: E402  (C3 and C6 of run.py)


@parpy.jit
def expsum(A, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = np.sum(np.exp(A[i, :]))


def main():
    for dt in [np.float32, np.float64]:
        for (n, m) in [(4096, 4096), (256, 4096), (2048, 200)]:
            x = np.random.default_rng(0).random((n, m)).astype(dt)
            v = np.random.default_rng(1).random(m).astype(dt)
            y = np.zeros(n, dt)
            opts = parpy.par({'N': parpy.threads(n)})
            opts.backend = parpy.CompileBackend.Cpu
            for name, f, args in [("rowsum", row_sum, (x, y, n)),
                                  ("matvec", matvec, (x, v, y, n)),
                                  ("expsum", expsum, (x, y, n))]:
                f(*args, opts=opts)
                ts = []
                for _ in range(40):
                    t = time.perf_counter()
                    f(*args, opts=opts)
                    ts.append(time.perf_counter() - t)
                print(f"{name:7s} {np.dtype(dt).name:8s} {n}x{m}: "
                      f"median {np.median(ts) * 1e3:.3f} ms, min {min(ts) * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
