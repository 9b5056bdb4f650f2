// A CUDA function that the 32 threads of a warp call together (declared in
// examples/warp_sum_external.py with parallelize=parpy.threads(32)): lane k
// reads p[k], the lanes add their values by shuffles, and every lane
// returns the row's sum.
#pragma once

__device__ int32_t warp_sum(const int32_t *p) {
  int32_t v = p[threadIdx.x % 32];
  for (int d = 16; d > 0; d /= 2) {
    v += __shfl_xor_sync(0xFFFFFFFFu, v, d);
  }
  return v;
}
