"""Row sums: the first parpy program (README.md, "A short tour").

Runs `sum_rows` on the default backend (Auto: CPU on a machine without a
GPU), checks it against NumPy, prints the generated code and compiles that
code again with `parpy.compile_string`.

    python examples/sum_rows.py                 # CPU (or whatever Auto picks)
    python examples/sum_rows.py --backend cuda  # also print the CUDA code
"""

import argparse
import sys

import numpy as np

import parpy


@parpy.jit
def sum_rows(x, y, N):
    parpy.label('outer')
    for i in range(N):
        y[i] = parpy.operators.sum(x[i, :])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=["auto", "cpu", "cuda", "metal"], default="auto",
                    help="also print the code generated for this backend")
    ap.add_argument("-N", type=int, default=100)
    ap.add_argument("-M", type=int, default=1024)
    args = ap.parse_args(argv)

    N, M = args.N, args.M
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, M)).astype(np.float32)
    y = np.empty((N,), dtype=np.float32)

    # 1. Run on the default backend and check against NumPy.
    opts = parpy.par({'outer': parpy.threads(N)})
    sum_rows(x, y, N, opts=opts)
    expected = x.sum(axis=1)
    assert np.allclose(y, expected, atol=1e-3), "parpy and NumPy disagree"
    print("row sums (first 5):", y[:5])
    print("max abs difference from NumPy:", float(np.max(np.abs(y - expected))))

    # 2. Print the generated C code and compile it again from the text.
    opts.backend = parpy.CompileBackend.Cpu
    code = parpy.print_compiled(sum_rows, [x, y, N], opts)
    print("---- generated C code ----")
    print(code)
    print("--------------------------")
    fn = parpy.compile_string("sum_rows", code, opts)
    y2 = np.zeros_like(y)
    fn(x, y2, N)  # no opts here
    assert np.allclose(y2, expected, atol=1e-3), "compile_string result differs"
    print("compile_string: result matches NumPy")

    # 3. Optionally, the code for another backend (printing needs no GPU).
    if args.backend in ("cuda", "metal"):
        opts.backend = getattr(parpy.CompileBackend, args.backend.capitalize())
        other = parpy.print_compiled(sum_rows, [x, y, N], opts)
        print(f"---- generated {args.backend} code ----")
        print(other)
    return 0


if __name__ == "__main__":
    sys.exit(main())
