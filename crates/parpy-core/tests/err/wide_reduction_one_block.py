# A reduction wider than one block under an outer loop whose trip count is a
# run-time scalar: the partials cannot be sized, so the reduction keeps one
# block per row, and the compiler says so instead of ignoring the request.
# backend: cuda
# args: x: f32[10, 100000], y: f32[10], N: i64
# par: N = threads(10)
# par: M = threads(65536)
import parpy


@parpy.jit
def row_sum(x, y, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        y[i] = parpy.operators.sum(x[i, :])
