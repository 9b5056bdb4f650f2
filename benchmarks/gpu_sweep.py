#!/usr/bin/env python3
"""Sweeps for tuning the GPU workloads of benchmarks/gpu.py: thread counts
per level (the call-site choice a user tunes) for G5-G7, and NVRTC options
(`PARPY_NVRTC_OPTIONS`) against first-call time and kernel time.

    python benchmarks/gpu_sweep.py [--only threads,nvrtc]

One JSON object per measurement on stdout; every result is checked against
torch before it is timed.
"""

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu  # noqa: E402
import parpy  # noqa: E402


def row(**kw):
    print(json.dumps(kw), flush=True)


def sweep_one(torch, runs, bench, fn, args, n, counts, check, cache):
    """Times `fn(*args)` with 'N' on n threads and 'M' on each of `counts`,
    after checking its result (`check()`)."""
    for m in counts:
        o = gpu.opts_for({'N': parpy.threads(n), 'M': parpy.threads(m)}, cache)
        fn(*args, opts=o)
        torch.cuda.synchronize()
        row(bench=bench, M=m, ok=bool(check()),
            ms=gpu.events_ms(torch, lambda: fn(*args, opts=o), runs))


def sweep_threads(torch, runs):
    cache = tempfile.mkdtemp()
    for bench, (rows, cols), counts in (("G5", (10, 10**8), [b * 1024 for b in (64, 128, 256, 512)]),
                                        ("G6", (65536, 1024), (32, 64, 128))):
        x = torch.rand(rows, cols, device="cuda")
        y = torch.zeros(rows, device="cuda")
        ref = x.sum(dim=1)
        sweep_one(torch, runs, bench, gpu.row_sum, [x, y, rows], rows, counts,
                  lambda: torch.allclose(y, ref, rtol=1e-3, atol=1e-2), cache)
        del x
    shape = (64, 16, 448, 448)
    x = torch.randn(*shape, device="cuda")
    y = torch.zeros_like(x)
    n = shape[0] * shape[1] * shape[2]
    ref = torch.softmax(x, dim=-1)
    sweep_one(torch, runs, "G7", gpu.softmax, [x.view(n, shape[3]), y.view(n, shape[3]), n], n,
              (32, 64, 128), lambda: torch.allclose(y, ref, rtol=1e-3, atol=1e-5), cache)


def sweep_nvrtc(torch, runs):
    shape = (64, 16, 448, 448)
    x = torch.randn(*shape, device="cuda")
    y = torch.zeros_like(x)
    n = shape[0] * shape[1] * shape[2]
    x2, y2 = x.view(n, shape[3]), y.view(n, shape[3])
    ref = torch.softmax(x, dim=-1)
    small = [torch.rand(1024, 1024, device="cuda"), torch.zeros(1024, 1024, device="cuda"), 1024]
    for extra in ("", "--minimal", "--Ofast-compile=min", "--Ofast-compile=mid",
                  "--minimal --Ofast-compile=mid", "--extra-device-vectorization", ""):
        os.environ["PARPY_NVRTC_OPTIONS"] = extra
        try:
            parpy.clear_cache()
            o = gpu.opts_for({'N': parpy.threads(1024), 'M': parpy.threads(256)}, tempfile.mkdtemp())
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            gpu.softmax(*small, opts=o)
            torch.cuda.synchronize()
            first = (time.perf_counter() - t0) * 1e3
            o = gpu.opts_for({'N': parpy.threads(n), 'M': parpy.threads(128)}, tempfile.mkdtemp())
            gpu.softmax(x2, y2, n, opts=o)
            torch.cuda.synchronize()
            ok = bool(torch.allclose(y, ref, rtol=1e-3, atol=1e-5))
            row(bench="nvrtc", options=extra, first_call_ms=first, ok=ok,
                g7_ms=gpu.events_ms(torch, lambda: gpu.softmax(x2, y2, n, opts=o), runs))
        except Exception as e:  # an option this NVRTC rejects
            row(bench="nvrtc", options=extra, error=str(e)[:300])
    os.environ.pop("PARPY_NVRTC_OPTIONS", None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="threads,nvrtc")
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    import torch
    parts = args.only.split(",")
    if "nvrtc" in parts:
        sweep_nvrtc(torch, args.runs)
    if "threads" in parts:
        sweep_threads(torch, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
