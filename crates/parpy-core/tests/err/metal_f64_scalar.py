# A Python float forced to 64 bits (force_float_size=64) cannot be passed to
# a Metal kernel.
# backend: metal
# force_float_size: 64
# args: a: f64, x: f32[1000], y: f32[1000]
# par: i = threads(1000)
import parpy


@parpy.jit
def axpy(a, x, y):
    parpy.label('i')
    for i in range(1000):
        y[i] = y[i] + a * x[i]
