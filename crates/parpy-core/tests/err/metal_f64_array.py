# Metal has no 64-bit floats: float64 array arguments are rejected, pointing
# at each parameter.
# backend: metal
# args: x: f64[100, 1024], y: f64[100], N: i64 = 100
# par: outer = threads(100)
import parpy


@parpy.jit
def sum_rows(x, y, N):
    parpy.label('outer')
    for i in range(N):
        y[i] = parpy.operators.sum(x[i, :])
