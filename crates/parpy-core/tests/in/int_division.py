# Python semantics of // and % on ints and floats, with a run-time scalar.
# args: a: i64[16], b: i64[16], q: i64[16], r: i64[16], f: f64[16], k: i64
# par: i = threads(16)
import parpy


@parpy.jit
def divmod_all(a, b, q, r, f, k):
    parpy.label('i')
    for i in range(16):
        q[i] = a[i] // b[i] + k
        r[i] = a[i] % b[i]
        f[i] = f[i] % 2.5 + f[i] // -1.5
