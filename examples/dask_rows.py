"""A parpy kernel on every block of a dask array, on a local cluster of
worker processes.

    python examples/dask_rows.py [--workers 2] [--rows 20000] [--cols 256]

Each block of rows is sent to a worker process; the worker runs the jit
function on it (compiling once per block shape, or loading the build from
the shared disk cache) and returns the block's row norms. The result is
checked against NumPy. On a cluster of GPU machines the same code runs with
`opts.backend = parpy.CompileBackend.Cuda` and one GPU per worker (start
each worker with its own CUDA_VISIBLE_DEVICES).
"""

import argparse

import numpy as np

import parpy


@parpy.jit
def row_norms(x, y, N):
    parpy.label('row')
    for i in range(N):
        y[i] = parpy.math.sqrt(parpy.sum(x[i, :] * x[i, :]))


def block_norms(block, opts):
    y = np.empty(block.shape[0], dtype=block.dtype)
    row_norms(block, y, block.shape[0], opts=opts)
    return y


def main():
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--cols", type=int, default=256)
    a = ap.parse_args()

    opts = parpy.par({'row': parpy.threads(64)})
    opts.backend = parpy.CompileBackend.Cpu
    x = da.random.default_rng(0).standard_normal((a.rows, a.cols), chunks=(a.rows // 8, a.cols))
    with LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        norms = x.map_blocks(block_norms, opts, drop_axis=1, dtype=x.dtype)
        got, xs = client.compute([norms, x], sync=True)
        workers = len(client.scheduler_info()["workers"])
    want = np.sqrt((xs * xs).sum(axis=1))
    assert np.allclose(got, want, rtol=1e-12), "parpy and NumPy disagree"
    print(f"{a.rows} row norms on {workers} worker processes agree with NumPy")


if __name__ == "__main__":
    main()
