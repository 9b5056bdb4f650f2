# `max_unroll_count` above the default: 24 elements of a row per thread
# (768 columns over 32 threads) stay in registers, `#pragma unroll` loops
# of 24 iterations (the default bound, 16, keeps this row in memory).
# args: x: f32[16, 768], N: i64 = 16
# par: N = threads(16)
# par: M = threads(32)
# max_unroll_count: 32
import parpy


@parpy.jit
def rows_unroll_wide(x, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        m = parpy.operators.max(x[i, :])
        parpy.label('M')
        x[i, :] = x[i, :] - m
