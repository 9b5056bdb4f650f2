# Two perfectly nested labelled loops with a short outer range (collapsed).
# args: x: f64[8, 300], y: f64[8, 300], a: f64
# par: row = threads(8)
# par: col = threads(300)
import parpy


@parpy.jit
def scale2d(x, y, a):
    parpy.label('row')
    for i in range(8):
        parpy.label('col')
        for j in range(300):
            y[i, j] = a * x[i, j] + 1.0
