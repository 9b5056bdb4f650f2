# NumPy's sum of int32 values is an int64: every backend accumulates the row
# in int64, Metal too (its SIMD-group functions take 32-bit values: the
# partials' halves are shuffled), so a row past 2**31 does not wrap.
# args: x: i32[64, 512], y: i64[64]
# par: N = threads(64)
# par: M = threads(256)
import parpy


@parpy.jit
def int_row_sums(x, y):
    parpy.label('N')
    for i in range(64):
        parpy.label('M')
        y[i] = parpy.operators.sum(x[i, :])
