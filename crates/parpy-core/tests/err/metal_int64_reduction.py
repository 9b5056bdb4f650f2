# Metal SIMD-group reductions work on 16- and 32-bit values: a parallel sum over
# int64 data has no Metal counterpart.
# backend: metal
# args: x: i64[64, 512], y: i64[64]
# par: N = threads(64)
# par: M = threads(256)
import parpy


@parpy.jit
def sum_rows(x, y):
    parpy.label('N')
    for i in range(64):
        parpy.label('M')
        y[i] = parpy.operators.sum(x[i, :])
