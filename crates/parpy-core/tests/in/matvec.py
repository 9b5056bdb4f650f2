# Matrix-vector product, a sequential inner reduction loop.
# args: A: f64[32, 48], x: f64[48], y: f64[32], N: i64 = 32, M: i64 = 48
# par: row = threads(32)
import parpy


@parpy.jit
def matvec(A, x, y, N, M):
    parpy.label('row')
    for i in range(N):
        acc = 0.0
        for j in range(M):
            acc += A[i, j] * x[j]
        y[i] = acc
