# gpu_register_rows on a ragged, in-place row: 257 columns over 32 threads
# (9 per thread, the last one partial: bound checks), the row read (sum)
# before it is written, so it is loaded once before the walks and stored
# once after them; `w` is read outside the walks (w[i, 0]) and stays in
# memory.
# args: x: f32[16, 257], w: f32[16, 257], N: i64 = 16
# par: N = threads(16)
# par: M = threads(32)
import parpy


@parpy.jit
def rows_in_registers(x, w, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        s = parpy.operators.sum(x[i, :])
        parpy.label('M')
        t = parpy.operators.sum(w[i, :])
        parpy.label('M')
        x[i, :] = x[i, :] * w[i, :] / (s + t + w[i, 0])
