# `max_unroll_count` bounds the loops parpy unrolls completely: the row of
# rows_in_registers.py takes 9 elements per thread, more than the 8 allowed
# here, so no row stays in registers (no `#pragma unroll`, no `x_reg`).
# args: x: f32[16, 257], w: f32[16, 257], N: i64 = 16
# par: N = threads(16)
# par: M = threads(32)
# max_unroll_count: 8
import parpy


@parpy.jit
def rows_unroll_bound(x, w, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        s = parpy.operators.sum(x[i, :])
        parpy.label('M')
        t = parpy.operators.sum(w[i, :])
        parpy.label('M')
        x[i, :] = x[i, :] * w[i, :] / (s + t + w[i, 0])
