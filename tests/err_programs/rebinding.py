# A local re-bound to a type no integer type shares with its first one.
import parpy


def rebind_signedness(x, y, N):
    for i in range(N):
        v = x[i]
        if i > 100:
            v = parpy.builtin.convert(i, parpy.types.U64)
        y[i] = v
