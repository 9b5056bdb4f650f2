# Benchmark G5: rows much wider than one block. Each row's reduction spills
# into 64 blocks of 1024 threads (partials), a second kernel reduces the 64
# partials of each row and stores y[i].
# args: x: f32[10, 100000000], y: f32[10], N: i64 = 10
# par: N = threads(10)
# par: M = threads(65536)
import parpy


@parpy.jit
def row_sum(x, y, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        y[i] = parpy.operators.sum(x[i, :])
