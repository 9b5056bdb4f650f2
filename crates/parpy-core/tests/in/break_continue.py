# break and continue: a host loop around a parallel nest that skips one
# step and stops early, `continue` in the parallel loop (each worker goes on
# with its next index), a sequential search loop left by `break` (its range
# is cut by the `break` before the access, so the index needs no check),
# and a `while True` loop with both.
# args: x: f32[64, 32], y: f32[64], first: i64[64]
# par: i = threads(64)
import parpy


@parpy.jit
def break_continue(x, y, first):
    for t in range(8):
        if t == 2:
            continue
        if t >= 5:
            break
        parpy.label('i')
        for i in range(64):
            if x[i, 0] < 0.0:
                continue
            k = -1
            for j in range(40):
                if j >= 32:
                    break
                if x[i, j] > 1.0:
                    k = j
                    break
            first[i] = k
            s = 0.0
            n = 0
            while True:
                n += 1
                if n > 32:
                    break
                if x[i, n - 1] < 0.5:
                    continue
                s += x[i, n - 1]
            y[i] = s + y[i]
