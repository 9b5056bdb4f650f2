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
