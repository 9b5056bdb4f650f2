// parpy's CUDA emulator: a stand-in cuda_runtime.h. The CUDA C++ that
// parpy generates compiles against it as C++ and runs on the CPU: every GPU
// thread of a block is a fiber (ucontext) of one OS thread, switched at
// __syncthreads() and warp shuffles, in a random order (seeded). See
// parpy/_cuda_emu.py (the printed program) and parpy-runtime's cuda/emu.rs
// (the runtime's launch plan over emulated kernels).
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
#include <utility>

// the kernels run as device code (the device branch of parpy's bounds record)
#define __CUDA_ARCH__ 900
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

// float16 (the cuda_fp16.h stand-in includes this header): GCC's _Float16.
// The generated code casts every float16 operation's result, so each is
// rounded once, as __half's operators do.
typedef _Float16 __half;
static inline __half __float2half(float f) { return (__half)f; }
static inline float __half2float(__half h) { return (float)h; }
static inline unsigned short __half_as_ushort(__half h) { unsigned short u; memcpy(&u, &h, 2); return u; }
static inline __half __ushort_as_half(unsigned short u) { __half h; memcpy(&h, &u, 2); return h; }

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

// the first failure of the current launch (a sticky error, as CUDA's): the
// launch stops, its remaining fibers are abandoned
static const char *failed = nullptr;

static void fail(const char *what) {
  if (!failed) failed = what;
  // inside a fiber: back to the scheduler, never to return
  if (cur >= 0) swapcontext(&fibers[cur].ctx, &sched);
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
      cur = -1;
      if (failed) return;
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
        if (l >= hi || fibers[l].st != WARP) {
          fail("a full-mask warp shuffle in a warp with fewer than 32 live threads");
          return;
        }
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
    if (any_warp) {
      fail("a warp shuffle that not every live lane of the warp reaches");
      return;
    }
    if (!any_barrier) break;
    for (unsigned int i = 0; i < n; i++) {
      if (fibers[i].st == BARRIER) fibers[i].st = READY;
    }
  }
}

// runs a kernel over the grid; false when it failed (`failed` says why)
template <typename K, typename... A>
static bool launch(K kernel, dim3 grid, dim3 block, A... args) {
  if (failed) return false;
  if (block.x * block.y * block.z > 1024) {
    fail("more than 1024 threads per block");
    return false;
  }
  if (block.x * block.y * block.z == 0 || grid.x * grid.y * grid.z == 0) {
    fail("a launch with an empty grid or block");
    return false;
  }
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
    if (failed) return false;
  }
  return true;
}

// a launch as the driver makes it (cuLaunchKernel): each parameter's value
// behind a pointer, read as the kernel's parameter type
template <typename... A, size_t... I>
static bool launch_unpacked(void (*kernel)(A...), dim3 grid, dim3 block, void **params,
                            std::index_sequence<I...>) {
  return launch(kernel, grid, block, *(A *)params[I]...);
}
template <typename... A>
static int launch_packed(void (*kernel)(A...), const unsigned int *geo, void **params) {
  failed = nullptr;
  if (geo[6] != 0) fail("dynamic shared memory (the generated kernels use none)");
  bool ok = launch_unpacked(kernel, dim3(geo[0], geo[1], geo[2]), dim3(geo[3], geo[4], geo[5]),
                            params, std::index_sequence_for<A...>{});
  return ok ? 0 : 1;
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
// why the last launch failed (NULL: it did not), and a fresh start
extern "C" const char *parpy_emu_error(void) { return parpy_emu::failed; }
extern "C" void parpy_emu_reset(void) { parpy_emu::failed = nullptr; }
#endif
