/* The Cpu version of warp_sum (examples/warp_sum_external.py): one thread
   adds the 32 elements. */
#pragma once
#include <stdint.h>

static inline int32_t warp_sum_c(const int32_t *p) {
  int32_t s = 0;
  for (int k = 0; k < 32; k++) {
    s += p[k];
  }
  return s;
}
