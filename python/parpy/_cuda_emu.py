"""A CUDA emulator for testing without a GPU (a developer tool, not a
backend).

`run(fn, args, opts)` compiles `fn` for the Cuda backend, takes the CUDA C++
program `print_compiled` shows (kernels and the host function that launches
them with `<<<grid, block>>>`), and runs it on the CPU: the program is
compiled as C++ against a stand-in `cuda_runtime.h` in which every GPU
thread of a block is a fiber (`ucontext`) of one OS thread. A fiber runs
until it reaches `__syncthreads()` (all the block's live threads must reach
it before any goes on) or a warp shuffle (the 32 lanes of its warp
exchange values), or ends. Blocks run one after the other. To expose a
missing barrier, the fibers of a block take turns in a random order between
two barriers, and the blocks run in a random order (`seed`).

What it checks is the kernels' logic: barriers, the grid mapping, shared
memory, warp reductions, atomic updates (each fiber runs alone, so every
update is atomic), the host function's launches and copies. It does not
model the memory consistency of a real GPU, its math library's rounding
(the host's libm computes `sin`, `exp`, ...), float16, or thread block
clusters. A program that differs here differs on a GPU; one that agrees
here may still differ there.

The arrays are NumPy arrays (device memory is host memory here); scalars
are passed as the generated entry reads them.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import subprocess
import tempfile
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

HEADER = r"""
// parpy's CUDA emulator: a stand-in cuda_runtime.h (see parpy/_cuda_emu.py)
#ifndef PARPY_CUDA_EMU_H
#define PARPY_CUDA_EMU_H
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#include <math.h>
#include <cmath>
#include <ucontext.h>
#include <vector>
#include <random>
#include <functional>
#include <algorithm>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static

struct dim3 {
  unsigned int x, y, z;
  dim3(unsigned int a = 1, unsigned int b = 1, unsigned int c = 1) : x(a), y(b), z(c) {}
};
struct uint3 { unsigned int x, y, z; };
static uint3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;

typedef int cudaError_t;
enum { cudaSuccess = 0 };
enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };
static inline cudaError_t cudaGetLastError() { return cudaSuccess; }
static inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
template <typename T> static inline cudaError_t cudaMalloc(T **p, size_t n) {
  *p = (T *)calloc(n ? n : 1, 1);
  return *p ? cudaSuccess : 2;
}
static inline cudaError_t cudaFree(void *p) { free(p); return cudaSuccess; }
static inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind) {
  memmove(d, s, n);
  return cudaSuccess;
}

static inline float __int_as_float(int v) { float f; memcpy(&f, &v, 4); return f; }
static inline float __uint_as_float(unsigned int v) { float f; memcpy(&f, &v, 4); return f; }
static inline unsigned int __float_as_uint(float v) { unsigned int u; memcpy(&u, &v, 4); return u; }
static inline int __float_as_int(float v) { int u; memcpy(&u, &v, 4); return u; }
static inline double __longlong_as_double(long long v) { double f; memcpy(&f, &v, 8); return f; }
static inline long long __double_as_longlong(double v) { long long u; memcpy(&u, &v, 8); return u; }

template <typename T> static inline T atomicAdd(T *p, T v) { T o = *p; *p = o + v; return o; }
template <typename T> static inline T atomicMax(T *p, T v) { T o = *p; *p = o > v ? o : v; return o; }
template <typename T> static inline T atomicMin(T *p, T v) { T o = *p; *p = o < v ? o : v; return o; }
template <typename T> static inline T atomicCAS(T *p, T c, T v) { T o = *p; if (o == c) *p = v; return o; }
template <typename T> static inline T atomicExch(T *p, T v) { T o = *p; *p = v; return o; }

namespace parpy_emu {
enum State { READY, BARRIER, WARP, DONE };
struct Fiber {
  ucontext_t ctx;
  State st;
  uint3 tid;
  unsigned char val[8];
  unsigned char out[8];
  int src;
};
// a CUDA thread has at most 512 KiB of local memory (the Cuda backend
// refuses larger arrays); frames come on top
static const size_t STACK = 1 << 20;
static std::vector<Fiber> fibers;
static std::vector<char *> stacks;
static ucontext_t sched;
static int cur = -1;
static std::function<void()> body;
static std::mt19937 rng(1);

static void fail(const char *what) {
  fprintf(stderr, "parpy CUDA emulator: %s\n", what);
  fflush(stderr);
  abort();
}

static void trampoline() {
  body();
  fibers[cur].st = DONE;
  swapcontext(&fibers[cur].ctx, &sched);
}

static void yield(State s) {
  Fiber &f = fibers[cur];
  f.st = s;
  swapcontext(&f.ctx, &sched);
}

static void run_block(unsigned int n) {
  while (stacks.size() < n) stacks.push_back((char *)malloc(STACK));
  fibers.assign(n, Fiber());
  for (unsigned int i = 0; i < n; i++) {
    Fiber &f = fibers[i];
    f.st = READY;
    f.tid.x = i % blockDim.x;
    f.tid.y = (i / blockDim.x) % blockDim.y;
    f.tid.z = i / (blockDim.x * blockDim.y);
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = stacks[i];
    f.ctx.uc_stack.ss_size = STACK;
    f.ctx.uc_link = nullptr;
    makecontext(&f.ctx, trampoline, 0);
  }
  std::vector<unsigned int> order(n);
  for (unsigned int i = 0; i < n; i++) order[i] = i;
  for (;;) {
    bool ran = false;
    std::shuffle(order.begin(), order.end(), rng);
    for (unsigned int i : order) {
      if (fibers[i].st != READY) continue;
      cur = (int)i;
      threadIdx = fibers[i].tid;
      swapcontext(&sched, &fibers[i].ctx);
      ran = true;
    }
    if (ran) continue;
    // nobody can run: release the warps whose live lanes all shuffle
    bool released = false;
    for (unsigned int w = 0; w * 32 < n; w++) {
      unsigned int lo = w * 32, hi = std::min(n, lo + 32);
      bool any = false, all = true;
      for (unsigned int l = lo; l < hi; l++) {
        if (fibers[l].st == WARP) any = true;
        else if (fibers[l].st != DONE) all = false;
      }
      if (!any || !all) continue;
      // the generated code shuffles with the full mask: all 32 lanes must
      // be there (a lane missing or gone is undefined behaviour on a GPU)
      for (unsigned int l = lo; l < lo + 32; l++) {
        if (l >= hi || fibers[l].st != WARP) fail("a full-mask warp shuffle in a warp with fewer than 32 live threads");
      }
      for (unsigned int l = lo; l < hi; l++) {
        memcpy(fibers[l].out, fibers[lo + (unsigned int)fibers[l].src].val, 8);
      }
      for (unsigned int l = lo; l < hi; l++) {
        if (fibers[l].st == WARP) fibers[l].st = READY;
      }
      released = true;
    }
    if (released) continue;
    bool any_barrier = false, any_warp = false;
    for (unsigned int i = 0; i < n; i++) {
      any_barrier |= fibers[i].st == BARRIER;
      any_warp |= fibers[i].st == WARP;
    }
    if (any_warp) fail("a warp shuffle that not every live lane of the warp reaches");
    if (!any_barrier) break;
    for (unsigned int i = 0; i < n; i++) {
      if (fibers[i].st == BARRIER) fibers[i].st = READY;
    }
  }
}

template <typename K, typename... A>
static void launch(K kernel, dim3 grid, dim3 block, A... args) {
  if (block.x * block.y * block.z > 1024) fail("more than 1024 threads per block");
  gridDim = grid;
  blockDim = block;
  body = [&]() { kernel(args...); };
  std::vector<uint3> blocks;
  for (unsigned int z = 0; z < grid.z; z++)
    for (unsigned int y = 0; y < grid.y; y++)
      for (unsigned int x = 0; x < grid.x; x++) blocks.push_back(uint3{x, y, z});
  std::shuffle(blocks.begin(), blocks.end(), rng);
  for (const uint3 &b : blocks) {
    blockIdx = b;
    run_block(block.x * block.y * block.z);
  }
}

template <typename T> static T shuffle(T v, int src) {
  Fiber &f = fibers[cur];
  memcpy(f.val, &v, sizeof(T));
  f.src = src;
  yield(WARP);
  T r;
  memcpy(&r, fibers[cur].out, sizeof(T));
  return r;
}

static unsigned int lane() {
  unsigned int i = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  return i % 32;
}
}  // namespace parpy_emu

static inline void __syncthreads() { parpy_emu::yield(parpy_emu::BARRIER); }
template <typename T> static inline T __shfl_xor_sync(unsigned int, T v, int m, int = 32) {
  return parpy_emu::shuffle(v, (int)(parpy_emu::lane() ^ (unsigned int)m));
}
template <typename T> static inline T __shfl_down_sync(unsigned int, T v, unsigned int d, int = 32) {
  unsigned int l = parpy_emu::lane() + d;
  return parpy_emu::shuffle(v, (int)(l < 32 ? l : parpy_emu::lane()));
}
template <typename T> static inline T __shfl_sync(unsigned int, T v, int s, int = 32) {
  return parpy_emu::shuffle(v, s & 31);
}

extern "C" void parpy_emu_seed(unsigned int s) { parpy_emu::rng.seed(s); }
#endif
"""

_LAUNCH = re.compile(r"(\b[A-Za-z_][A-Za-z0-9_]*)<<<(.*?)>>>\((.*?)\);")


def _split_top(s: str) -> List[str]:
    """Splits at the commas outside parentheses."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(s):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(s[start:i].strip())
            start = i + 1
    out.append(s[start:].strip())
    return out


def emulated_source(code: str) -> str:
    """The printed CUDA program with its `<<<...>>>` launches made calls of
    the emulator."""
    if "cuda_fp16.h" in code:
        raise NotImplementedError("the CUDA emulator has no float16")
    if "cooperative_groups" in code:
        raise NotImplementedError("the CUDA emulator has no thread block clusters")

    def launch(m: "re.Match[str]") -> str:
        geometry = _split_top(m.group(2))[:2]
        args = m.group(3).strip()
        return (f"parpy_emu::launch({m.group(1)}, {', '.join(geometry)}"
                + (f", {args}" if args else "") + ");")

    return _LAUNCH.sub(launch, code)


def _params(code: str) -> List[tuple]:
    out = []
    for line in code.splitlines():
        if line.startswith("// parpy-param: "):
            parts = line[len("// parpy-param: "):].split()
            name, ty = parts[0], parts[1]
            m = re.match(r"([a-z]+[0-9]*)(\[(.*)\])?$", ty)
            assert m is not None, line
            out.append((name, m.group(1), m.group(2) is not None))
    return out


_DTYPES = {"bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
           "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
           "f16": np.float16, "f32": np.float32, "f64": np.float64}

_C_TYPES = {"bool": np.bool_, "int8_t": np.int8, "int16_t": np.int16, "int32_t": np.int32,
            "int64_t": np.int64, "uint8_t": np.uint8, "uint16_t": np.uint16,
            "uint32_t": np.uint32, "uint64_t": np.uint64, "float": np.float32,
            "double": np.float64}

_LIBS: Dict[str, Any] = {}


def _write(path: str, text: str) -> None:
    """Writes a file whole (other processes may use the same folder)."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _build(src: str, workdir: Optional[str]) -> Any:
    key = hashlib.sha256((HEADER + src).encode()).hexdigest()[:24]
    if key in _LIBS:
        return _LIBS[key]
    d = workdir or tempfile.mkdtemp(prefix="parpy-cuda-emu-")
    os.makedirs(d, exist_ok=True)
    header = os.path.join(d, "cuda_runtime.h")
    try:
        with open(header) as f:
            same = f.read() == HEADER
    except OSError:
        same = False
    if not same:
        _write(header, HEADER)
    cpp = os.path.join(d, f"emu_{key}.{os.getpid()}.cpp")
    so = os.path.join(d, f"emu_{key}.{os.getpid()}.so")
    _write(cpp, '#include "cuda_runtime.h"\n' + src)
    cxx = os.environ.get("CXX", "c++")
    r = subprocess.run([cxx, "-std=c++17", "-O1", "-fwrapv", "-fPIC", "-shared", "-w",
                        "-I", d, cpp, "-o", so], capture_output=True, text=True)
    if r.returncode != 0:
        errors = [line for line in r.stderr.splitlines() if "error" in line]
        raise RuntimeError("the CUDA emulator could not compile the program ({}):\n{}".format(
            cpp, "\n".join(errors[:5]) or r.stderr[-4000:]))
    lib = ctypes.CDLL(so)
    _LIBS[key] = lib
    return lib


def run(fn: Any, args: Sequence[Any], opts: Any, seed: int = 0,
        workdir: Optional[str] = None) -> None:
    """Runs `fn(*args)` as its Cuda code would, on the CPU (see the module
    documentation). Arrays are updated in place, as on a GPU."""
    import parpy

    backend = opts.backend
    try:
        opts.backend = parpy.CompileBackend.Cuda
        code = parpy.print_compiled(fn, list(args), opts)
    finally:
        opts.backend = backend
    run_source(code, args, seed, workdir)


def run_source(code: str, args: Sequence[Any], seed: int = 0,
               workdir: Optional[str] = None) -> None:
    """Runs a CUDA program as `print_compiled` prints it (maybe edited) on
    `args` (see [`run`])."""
    src = emulated_source(code)
    entry = re.search(r'extern "C" int32_t (\w+)\(void \*\*args\)', src)
    if entry is None:
        raise RuntimeError("no entry in the printed CUDA program")
    params = _params(code)
    if len(params) != len(args):
        raise TypeError(f"the program takes {len(params)} arguments, got {len(args)}")
    lib = _build(src, workdir)
    keep: List[Any] = []
    slots = []
    for (name, ty, is_array), a in zip(params, args):
        if ty == "f16":
            raise NotImplementedError("the CUDA emulator has no float16")
        if is_array:
            if not isinstance(a, np.ndarray) or not a.flags.c_contiguous:
                raise TypeError(f"the CUDA emulator takes C-contiguous NumPy arrays ({name})")
            slots.append(a.ctypes.data)
        else:
            # the value in an 8-byte slot, of the type the entry reads it as
            # (`*(double *)args[k]` for a float32 parameter given a Python
            # float, say)
            slot = re.search(r"\*\((\w+) \*\)args\[%d\]" % len(slots), src[entry.start():])
            cty = _C_TYPES.get(slot.group(1)) if slot else None
            v = np.zeros(1, np.uint64)
            raw = np.array([a]).astype(cty or _DTYPES[ty]).tobytes()
            v.view(np.uint8)[: len(raw)] = np.frombuffer(raw, np.uint8)
            keep.append(v)
            slots.append(v.ctypes.data)
    # the bounds record, when the entry takes one more pointer
    n_args = len(re.findall(r"args\[\d+\]", src[entry.start():]))
    record = np.zeros(2, np.int64)
    if n_args > len(params):
        slots.append(record.ctypes.data)
    argv = (ctypes.c_void_p * max(len(slots), 1))(*slots)
    lib.parpy_emu_seed(ctypes.c_uint(seed))
    f = getattr(lib, entry.group(1))
    f.restype = ctypes.c_int32
    if f(argv) != 0:
        raise RuntimeError("the emulated CUDA program returned an error")
    if record[0] != 0:
        raise IndexError(f"index out of bounds (check {int(record[0]) - 1}, index {int(record[1])})")
