# Normalize rows, first fix of the inconsistent structure: equal thread counts.
# args: x: f32[64, 256], y: f32[64, 256], N: i64 = 64
# par: N = threads(64)
# par: M1 = threads(256)
# par: M2 = threads(256)
import parpy


@parpy.jit
def normalize_rows(x, y, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M1')
        s = parpy.operators.sum(x[i, :])
        parpy.label('M2')
        y[i, :] = x[i, :] / s
