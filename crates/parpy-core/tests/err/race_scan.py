# A naive prefix sum in a parallel loop: iteration i reads what i - 1 writes.
# args: x: f64[256], N: i64 = 256
# par: N = threads(64)
import parpy


@parpy.jit
def scan(x, N):
    parpy.label('N')
    for i in range(1, N):
        x[i] = x[i - 1] + x[i]
