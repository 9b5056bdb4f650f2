# Naive matmul written as loops with an `acc = 0.0` accumulator. On Cpu the
# sequential `j` loop is unrolled and jammed: 16 columns side by side,
# each with its own accumulator (the same operations in the same order), and
# the last 20 % 16 columns in the original loop.
# args: A: f32[32, 24], B: f32[24, 20], C: f32[32, 20]
# par: i = threads(32)
import parpy


@parpy.jit
def matmul_jam(A, B, C):
    parpy.label('i')
    for i in range(32):
        for j in range(20):
            acc = 0.0
            for k in range(24):
                acc += A[i, k] * B[k, j]
            C[i, j] = acc
