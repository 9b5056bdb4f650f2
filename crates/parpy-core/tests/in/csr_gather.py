# CSR sparse matrix-vector product: loop bounds and indices read from arrays.
# Each index that may be negative is checked once with its wrap (Python's
# negative index) folded into the check, not evaluated three times.
# args: rows: i64[65], cols: i64[512], vals: f64[512], x: f64[64], y: f64[64]
# par: row = threads(64)
import parpy


@parpy.jit
def csr_gather(rows, cols, vals, x, y):
    parpy.label('row')
    for i in range(64):
        acc = 0.0
        for k in range(rows[i], rows[i + 1]):
            acc += vals[k] * x[cols[k]]
        y[i] = acc
