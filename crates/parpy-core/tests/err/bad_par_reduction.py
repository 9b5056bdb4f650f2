# A par_reduction() loop whose body is not `lhs = lhs OP e`.
# args: x: f64[4096], s: f64[1], N: i64 = 4096
# par: red = threads(64).par_reduction()
import parpy


@parpy.jit
def pdiff(x, s, N):
    parpy.label('red')
    for i in range(N):
        s[0] = s[0] - x[i]
