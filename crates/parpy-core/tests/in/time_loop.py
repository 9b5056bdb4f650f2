# A sequential time loop around two parallel nests (two kernels per step).
# args: x: f32[1000], y: f32[1000], T: i64 = 10, N: i64 = 1000
# par: a = threads(1000)
# par: b = threads(1000)
import parpy


@parpy.jit
def smooth(x, y, T, N):
    for t in range(T):
        parpy.label('a')
        for i in range(1, N - 1):
            y[i] = (x[i - 1] + x[i] + x[i + 1]) / 3.0
        parpy.label('b')
        for i in range(1, N - 1):
            x[i] = y[i]
