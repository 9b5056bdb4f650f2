// parpy's CUDA emulator: a stand-in cuda_runtime.h. The CUDA C++ that
// parpy generates compiles against it as C++ and runs on the CPU: every GPU
// thread of a block is a fiber (ucontext) of one OS thread, switched at
// __syncthreads(), warp shuffles and cluster.sync(), in a random order
// (seeded). Blocks run one after the other, in a random order; the blocks of
// a thread block cluster run at once, one OS thread each, so that they can
// wait for each other and read each other's shared memory (which is
// thread_local: each block has its own). See
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
#include <atomic>
#include <mutex>
#include <condition_variable>
#include <thread>

// the kernels run as device code (the device branch of parpy's bounds record)
#define __CUDA_ARCH__ 900
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __shared__ static thread_local
#define __cluster_dims__(...)

struct dim3 {
  unsigned int x, y, z;
  dim3(unsigned int a = 1, unsigned int b = 1, unsigned int c = 1) : x(a), y(b), z(c) {}
};
struct uint3 { unsigned int x, y, z; };
static thread_local uint3 threadIdx, blockIdx;
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

// atomics: one lock (the blocks of a cluster run on several OS threads)
namespace parpy_emu { static std::mutex atomic_lock; }
#define PARPY_EMU_ATOMIC std::lock_guard<std::mutex> parpy_emu_g(parpy_emu::atomic_lock)
template <typename T> static inline T atomicAdd(T *p, T v) { PARPY_EMU_ATOMIC; T o = *p; *p = o + v; return o; }
template <typename T> static inline T atomicMax(T *p, T v) { PARPY_EMU_ATOMIC; T o = *p; *p = o > v ? o : v; return o; }
template <typename T> static inline T atomicMin(T *p, T v) { PARPY_EMU_ATOMIC; T o = *p; *p = o < v ? o : v; return o; }
template <typename T> static inline T atomicCAS(T *p, T c, T v) { PARPY_EMU_ATOMIC; T o = *p; if (o == c) *p = v; return o; }
template <typename T> static inline T atomicExch(T *p, T v) { PARPY_EMU_ATOMIC; T o = *p; *p = v; return o; }

// float16 (the cuda_fp16.h stand-in includes this header): GCC's _Float16.
// The generated code casts every float16 operation's result, so each is
// rounded once, as __half's operators do.
typedef _Float16 __half;
static inline __half __float2half(float f) { return (__half)f; }
static inline float __half2float(__half h) { return (float)h; }
static inline unsigned short __half_as_ushort(__half h) { unsigned short u; memcpy(&u, &h, 2); return u; }
static inline __half __ushort_as_half(unsigned short u) { __half h; memcpy(&h, &u, 2); return h; }

namespace parpy_emu {
enum State { READY, BARRIER, WARP, CLUSTER, DONE };
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
// one block's fibers, per OS thread
struct Stacks {
  std::vector<char *> v;
  ~Stacks() { for (char *p : v) free(p); }
};
static thread_local std::vector<Fiber> fibers;
static thread_local Stacks stacks;
static thread_local ucontext_t sched;
static thread_local int cur = -1;
static thread_local std::mt19937 rng(1);
// the launch's kernel call (read-only while its blocks run)
static std::function<void()> body;
static unsigned int seed_value = 1;
static bool reseed = true;

// the first failure of the current launch (a sticky error, as CUDA's): the
// launch stops, its remaining fibers are abandoned
static std::atomic<const char *> failed(nullptr);

// the blocks of a thread block cluster: a barrier for cluster.sync() and
// where each block's shared memory lies
struct Cluster {
  std::mutex m;
  std::condition_variable cv;
  unsigned int n = 1, live = 1, arrived = 0;
  unsigned long generation = 0;
  // each block's `anchor` (a thread_local): another block's copy of a
  // __shared__ variable lies at the same offset from its anchor
  char *anchors[16] = {};
};
static thread_local Cluster *cluster = nullptr;
static thread_local unsigned int cluster_rank = 0;
static thread_local char anchor;

// waits until every live block of the cluster arrives
static void cluster_arrive(Cluster *c) {
  std::unique_lock<std::mutex> l(c->m);
  unsigned long g = c->generation;
  if (++c->arrived == c->live) {
    c->arrived = 0;
    c->generation++;
    c->cv.notify_all();
  } else {
    c->cv.wait(l, [&] { return c->generation != g; });
  }
}

// a block that ends (or fails) no longer takes part
static void cluster_leave(Cluster *c) {
  std::lock_guard<std::mutex> l(c->m);
  c->live--;
  if (c->arrived > 0 && c->arrived == c->live) {
    c->arrived = 0;
    c->generation++;
    c->cv.notify_all();
  }
}

static void fail(const char *what) {
  const char *none = nullptr;
  failed.compare_exchange_strong(none, what);
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
  while (stacks.v.size() < n) stacks.v.push_back((char *)malloc(STACK));
  fibers.assign(n, Fiber());
  for (unsigned int i = 0; i < n; i++) {
    Fiber &f = fibers[i];
    f.st = READY;
    f.tid.x = i % blockDim.x;
    f.tid.y = (i / blockDim.x) % blockDim.y;
    f.tid.z = i / (blockDim.x * blockDim.y);
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = stacks.v[i];
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
    bool any_barrier = false, any_warp = false, any_cluster = false;
    for (unsigned int i = 0; i < n; i++) {
      any_barrier |= fibers[i].st == BARRIER;
      any_warp |= fibers[i].st == WARP;
      any_cluster |= fibers[i].st == CLUSTER;
    }
    if (any_warp) {
      fail("a warp shuffle that not every live lane of the warp reaches");
      return;
    }
    if (any_cluster && any_barrier) {
      fail("threads of one block wait at __syncthreads() and at cluster.sync() at once");
      return;
    }
    if (any_cluster) {
      // every live thread of the block is there: wait for the other blocks
      if (cluster) cluster_arrive(cluster);
      if (failed) return;
    } else if (!any_barrier) {
      break;
    }
    for (unsigned int i = 0; i < n; i++) {
      if (fibers[i].st == BARRIER || fibers[i].st == CLUSTER) fibers[i].st = READY;
    }
  }
}

// the calling thread's generator, seeded by the last parpy_emu_seed
static void seed_here() {
  if (reseed) {
    rng.seed(seed_value);
    reseed = false;
  }
}

// runs a kernel over the grid (`cdim`: its thread block clusters); false
// when it failed (`failed` says why)
template <typename K, typename... A>
static bool launch_cluster(dim3 cdim, K kernel, dim3 grid, dim3 block, A... args) {
  if (failed) return false;
  seed_here();
  if (block.x * block.y * block.z > 1024) {
    fail("more than 1024 threads per block");
    return false;
  }
  if (block.x * block.y * block.z == 0 || grid.x * grid.y * grid.z == 0) {
    fail("a launch with an empty grid or block");
    return false;
  }
  unsigned int csize = cdim.x * cdim.y * cdim.z;
  if (csize == 0 || csize > 16 || grid.x % cdim.x || grid.y % cdim.y || grid.z % cdim.z) {
    fail("a cluster size that is not a divisor of the grid, or larger than 16 blocks");
    return false;
  }
  gridDim = grid;
  blockDim = block;
  body = [&]() { kernel(args...); };
  unsigned int threads = block.x * block.y * block.z;
  if (csize == 1) {
    std::vector<uint3> blocks;
    for (unsigned int z = 0; z < grid.z; z++)
      for (unsigned int y = 0; y < grid.y; y++)
        for (unsigned int x = 0; x < grid.x; x++) blocks.push_back(uint3{x, y, z});
    std::shuffle(blocks.begin(), blocks.end(), rng);
    for (const uint3 &b : blocks) {
      blockIdx = b;
      run_block(threads);
      if (failed) return false;
    }
    return true;
  }
  // clusters one after the other, in a random order; the blocks of one at
  // once, each on its own OS thread with its own shared memory
  std::vector<uint3> clusters;
  for (unsigned int z = 0; z < grid.z / cdim.z; z++)
    for (unsigned int y = 0; y < grid.y / cdim.y; y++)
      for (unsigned int x = 0; x < grid.x / cdim.x; x++) clusters.push_back(uint3{x, y, z});
  std::shuffle(clusters.begin(), clusters.end(), rng);
  for (const uint3 &c : clusters) {
    Cluster cl;
    cl.n = cl.live = csize;
    unsigned int base = (unsigned int)rng();
    std::vector<std::thread> team;
    for (unsigned int r = 0; r < csize; r++) {
      team.emplace_back([&, r] {
        cluster = &cl;
        cluster_rank = r;
        blockIdx = uint3{c.x * cdim.x + r % cdim.x, c.y * cdim.y + (r / cdim.x) % cdim.y,
                         c.z * cdim.z + r / (cdim.x * cdim.y)};
        rng.seed(base + r);
        cl.anchors[r] = &anchor;
        cluster_arrive(&cl);  // every anchor is known
        run_block(threads);
        cluster_leave(&cl);
        cluster = nullptr;
      });
    }
    for (std::thread &t : team) t.join();
    if (failed) return false;
  }
  return true;
}

template <typename K, typename... A>
static bool launch(K kernel, dim3 grid, dim3 block, A... args) {
  return launch_cluster(dim3(1, 1, 1), kernel, grid, block, args...);
}

// a launch as the driver makes it (cuLaunchKernel): each parameter's value
// behind a pointer, read as the kernel's parameter type
template <typename... A, size_t... I>
static bool launch_unpacked(dim3 cdim, void (*kernel)(A...), dim3 grid, dim3 block, void **params,
                            std::index_sequence<I...>) {
  return launch_cluster(cdim, kernel, grid, block, *(A *)params[I]...);
}
// geo: grid, block, dynamic shared memory, cluster dimensions
template <typename... A>
static int launch_packed(void (*kernel)(A...), const unsigned int *geo, void **params) {
  failed = nullptr;
  if (geo[6] != 0) fail("dynamic shared memory (the generated kernels use none)");
  bool ok = launch_unpacked(dim3(geo[7], geo[8], geo[9]), kernel, dim3(geo[0], geo[1], geo[2]),
                            dim3(geo[3], geo[4], geo[5]), params,
                            std::index_sequence_for<A...>{});
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

// cooperative_groups (the cooperative_groups.h stand-in includes this
// header): thread block clusters
namespace cooperative_groups {
struct cluster_group {
  void sync() const { parpy_emu::yield(parpy_emu::CLUSTER); }
  unsigned int num_blocks() const { return parpy_emu::cluster ? parpy_emu::cluster->n : 1; }
  unsigned int block_rank() const { return parpy_emu::cluster_rank; }
  template <typename T> T *map_shared_rank(T *p, unsigned int rank) const {
    if (!parpy_emu::cluster) return p;
    if (rank >= parpy_emu::cluster->n) {
      parpy_emu::fail("map_shared_rank of a block outside the cluster");
      return p;
    }
    return (T *)((char *)p + (parpy_emu::cluster->anchors[rank] - &parpy_emu::anchor));
  }
};
static inline cluster_group this_cluster() { return cluster_group(); }
}  // namespace cooperative_groups
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

extern "C" void parpy_emu_seed(unsigned int s) {
  parpy_emu::seed_value = s;
  parpy_emu::reseed = true;
}
// why the last launch failed (NULL: it did not), and a fresh start
extern "C" const char *parpy_emu_error(void) { return parpy_emu::failed; }
extern "C" void parpy_emu_reset(void) { parpy_emu::failed = nullptr; }
#endif
