# Row-wise softmax with parallel reductions.
# args: x: f32[64, 512], y: f32[64, 512], N: i64 = 64
# par: N = threads(64)
# par: M = threads(256)
import parpy


@parpy.jit
def softmax(x, y, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        m = parpy.operators.max(x[i, :])
        parpy.label('M')
        y[i, :] = parpy.math.exp(x[i, :] - m)
        parpy.label('M')
        s = parpy.operators.sum(y[i, :])
        parpy.label('M')
        y[i, :] = y[i, :] / s
