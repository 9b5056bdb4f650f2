# A top-level reduction: the host reads the kernel's result.
# args: x: f32[1024], out: f32[1]
# par: all = threads(256)
import parpy


@parpy.jit
def total(x, out):
    parpy.label('all')
    s = parpy.operators.sum(x[:])
    out[0] = s * 2.0
