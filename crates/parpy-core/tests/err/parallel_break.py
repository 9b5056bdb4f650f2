# A `break` in a parallel loop (the search runs sequentially in Python).
# args: x: f32[1024], found: i64[1]
# par: i = threads(1024)
import parpy


@parpy.jit
def find_first(x, found):
    parpy.label('i')
    for i in range(1024):
        if x[i] > 0.0:
            found[0] = i
            break
