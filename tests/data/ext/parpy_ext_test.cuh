// CUDA device functions for the external-function tests (tests/test_external.py).
#pragma once

__device__ float clamp_ext(float x, float lo, float hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

__device__ double sum_row_ext(double *p, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) {
    s += p[i];
  }
  return s;
}

// Called by the 32 threads of a warp together (parallelize=parpy.threads(32)):
// lane k reads p[k]; every lane returns the sum of p[0..32).
__device__ float warp_sum_ext(const float *p) {
  float v = p[threadIdx.x % 32];
  for (int d = 16; d > 0; d /= 2) {
    v += __shfl_xor_sync(0xFFFFFFFFu, v, d);
  }
  return v;
}

// Called by a block of 64 threads together: the largest of p[0..n), every
// thread gets it (threads past n contribute nothing).
__device__ double block_max_ext(const double *p, int64_t n) {
  __shared__ double part[64];
  double m = -1.0 / 0.0;
  for (int64_t i = threadIdx.x; i < n; i += 64) {
    m = p[i] > m ? p[i] : m;
  }
  part[threadIdx.x] = m;
  __syncthreads();
  double r = part[0];
  for (int k = 1; k < 64; k++) {
    r = part[k] > r ? part[k] : r;
  }
  __syncthreads();
  return r;
}

// A host function (Target.Host on Cuda: parpy's launch plan calls it, built
// by nvcc): x * k + 0.5.
static inline float scale_add_ext(float x, int32_t k) {
  return x * (float)k + 0.5f;
}
