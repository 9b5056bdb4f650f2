# A scalar set inside `with parpy.gpu:` and read by a later kernel: it lives
# in a 1-element array between the kernels.
# args: x: f64[10], y: f64[10]
# par: i = threads(10)
import parpy


@parpy.jit
def gpu_scalar(x, y):
    with parpy.gpu:
        m = x[0]
        for i in range(1, 10):
            if x[i] > m:
                m = x[i]
    parpy.label('i')
    for i in range(10):
        y[i] = x[i] - m
