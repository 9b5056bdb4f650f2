# while with a per-element trip count, if/elif/else, conditional expressions,
# boolean operators and math in parallel code.
# args: x: f32[256], n: i32[256], y: f32[256]
# par: i = threads(256)
import parpy


@parpy.jit
def control_flow(x, n, y):
    parpy.label('i')
    for i in range(256):
        k = 0
        v = x[i]
        while k < n[i]:
            v = parpy.math.sqrt(abs(v)) + 1.0
            k += 1
        if v > 2.0 and not (v > 100.0):
            y[i] = v
        elif v < 0.0:
            y[i] = -v
        else:
            y[i] = v * 2.0 if k % 2 == 0 else v ** 2
