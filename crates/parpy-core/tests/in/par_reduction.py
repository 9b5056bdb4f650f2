# A manual reduction loop marked par_reduction() in the spec.
# args: x: f64[4096], s: f64[1], N: i64 = 4096
# par: red = threads(64).par_reduction()
import parpy


@parpy.jit
def psum(x, s, N):
    parpy.label('red')
    for i in range(N):
        s[0] += x[i]
