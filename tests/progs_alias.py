"""Test programs that use `import parpy as pp` and module-level constants."""

import numpy as np  # noqa: F401 (resolved by name inside the jit code)
import parpy as pp

SCALE = 3.0
OFFSET = 2
USE_SCALE = True


@pp.jit
def scale_offset(x, y, N):
    pp.label('N')
    for i in range(N):
        if USE_SCALE:
            y[i] = x[i] * SCALE + OFFSET
        else:
            y[i] = x[i] + OFFSET


@pp.jit
def row_sum_alias(x, y, N):
    pp.label('N')
    for i in range(N):
        y[i] = pp.sum(x[i, :])
