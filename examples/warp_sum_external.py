"""Calling your own CUDA function from parpy: a warp-wide sum of each row.

`warp_sum` (examples/code/warp_sum.cuh) is a CUDA device function that the
32 threads of a warp call together (`parallelize=parpy.threads(32)`):
each iteration of the parallel loop `N` runs on 32 threads, all of which
call it, and the store `y[i] = ...` is made once. On the Cpu backend the
same Python name is a plain C function (examples/code/warp_sum.h).

    python examples/warp_sum_external.py                  # Cpu
    python examples/warp_sum_external.py --backend cuda   # an NVIDIA GPU
    python examples/warp_sum_external.py --backend cuda --emulate
        # parpy's CUDA emulator (a developer tool: the kernels run on the CPU)
"""

import argparse
import os

import numpy as np

import parpy

HERE = os.path.dirname(os.path.realpath(__file__))
W = parpy.types.symbol()


@parpy.external("warp_sum", parpy.CompileBackend.Cuda, parpy.Target.Device,
                header="<warp_sum.cuh>", parallelize=parpy.threads(32))
@parpy.external("warp_sum_c", parpy.CompileBackend.Cpu, parpy.Target.Device,
                header="<warp_sum.h>")
def warp_sum(x: parpy.types.buffer(parpy.types.I32, [W])) -> parpy.types.I32:
    return x.sum()  # what a plain Python call runs


@parpy.jit
def sum_rows(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = warp_sum(x[i])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--emulate", action="store_true",
                    help="run the Cuda backend on parpy's CUDA emulator")
    args = ap.parse_args(argv)

    N = 100
    x = np.random.default_rng(0).integers(1, 1000, (N, 32)).astype(np.int32)
    y = np.zeros(N, np.int32)
    opts = parpy.par({'N': parpy.threads(N)})
    opts.backend = (parpy.CompileBackend.Cuda if args.backend == "cuda"
                    else parpy.CompileBackend.Cpu)
    opts.includes += [os.path.join(HERE, "code")]

    if args.backend == "cuda":
        code = parpy.print_compiled(sum_rows, [x, y, N], opts)
        kernel = code[code.index("__global__"):code.index("\n}\n", code.index("__global__")) + 2]
        print("---- the CUDA kernel ----")
        print(kernel)
        launch = [line.strip() for line in code.splitlines() if "<<<" in line]
        print("launch:", launch[0])
    if args.emulate:
        from parpy import _cuda_emu
        _cuda_emu.install()
    elif args.backend == "cuda" and not parpy.backend.is_enabled(parpy.CompileBackend.Cuda):
        print("Cuda is not usable here (use --emulate to run on the CUDA emulator)")
        return

    sum_rows(x, y, N, opts=opts)
    assert np.array_equal(y, x.sum(axis=1)), "parpy and NumPy disagree"
    print(f"{args.backend}{' (emulated)' if args.emulate else ''}: row sums match NumPy")


if __name__ == "__main__":
    main()
