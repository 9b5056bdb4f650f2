# A float64 value computed on the device, with float32 arrays.
# backend: metal
# args: x: f32[256], y: f32[256]
# par: i = threads(256)
import parpy


@parpy.jit
def widen(x, y):
    parpy.label('i')
    for i in range(256):
        d = parpy.builtin.convert(x[i], parpy.types.F64)
        y[i] = parpy.builtin.convert(d * d, parpy.types.F32)
