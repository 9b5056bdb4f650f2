# The two sweeps of a Jacobi step: the second reads rows i-1..i+1 of what
# the first writes at row i. On Cpu they run fused, one chunk of rows per
# thread, the second sweep one row behind the first (each array goes
# through the cache once per step); the first and last row of each chunk
# wait for the other threads (the second kernel).
# args: A: f64[64, 48], B: f64[64, 48], T: i64 = 4
# par: i = threads(62)
import parpy


@parpy.jit
def jacobi_skew(A, B, T):
    for t in range(T):
        parpy.label('i')
        for i in range(1, 63):
            for j in range(1, 47):
                B[i, j] = 0.2 * (A[i, j] + A[i, j - 1] + A[i, j + 1] + A[i + 1, j] + A[i - 1, j])
        parpy.label('i')
        for i in range(1, 63):
            for j in range(1, 47):
                A[i, j] = 0.2 * (B[i, j] + B[i, j - 1] + B[i, j + 1] + B[i + 1, j] + B[i - 1, j])
