# A label in the spec that matches no statement (a warning).
# args: x: f32[100, 1024], y: f32[100], N: i64 = 100
# par: outre = threads(100)
import parpy


@parpy.jit
def sum_rows(x, y, N):
    parpy.label('outer')
    for i in range(N):
        y[i] = parpy.operators.sum(x[i, :])
