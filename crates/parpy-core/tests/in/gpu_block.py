# A sequential block that runs on the device (a plain function on the CPU).
# args: x: i64[100], y: i64[100], N: i64
import parpy


@parpy.jit
def prefix_sum(x, y, N):
    with parpy.gpu:
        y[0] = x[0]
        for i in range(1, N):
            y[i] = y[i - 1] + x[i]
