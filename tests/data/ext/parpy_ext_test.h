/* C functions for the external-function tests (tests/test_external.py). */
#pragma once
#include <stdint.h>

static inline float clamp_ext(float x, float lo, float hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

static inline double sum_row_ext(const double *p, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) {
    s += p[i];
  }
  return s;
}

/* host only: writes a running sum */
static inline void prefix_sum_ext(float *p, int64_t n) {
  for (int64_t i = 1; i < n; i++) {
    p[i] += p[i - 1];
  }
}

// A host function (Target.Host) returning a value: x * k + 0.5.
static inline float scale_add_ext(float x, int32_t k) {
  return x * (float)k + 0.5f;
}
