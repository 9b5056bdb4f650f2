# A local re-bound to a type no integer type shares with its first one.
import parpy


def rebind_signedness(x, y, N):
    for i in range(N):
        v = x[i]
        if i > 100:
            v = parpy.builtin.convert(i, parpy.types.U64)
        y[i] = v


# Values of other types on the two paths of a conditional expression.
def conditional_of_two_types(x, y, N):
    for i in range(N):
        y[i] = (x[i] if x[i] > 0 else 1.5) * 100


def half_or_value(a):
    if a > 0:
        return a
    return 1.5


# A helper returning values of other types on two paths.
def helper_of_two_types(x, y, N):
    for i in range(N):
        y[i] = half_or_value(x[i]) * 100


# A local that starts as a Python int and then holds uint8 values.
def running_max_from_minus_one(x, y, N):
    for i in range(N):
        best = -1
        for c in range(3):
            if x[i, c] > best:
                best = x[i, c]
        y[i] = best * 2


def int_or_float(a):
    if a > 0.0:
        return 1
    return 2.5


# A helper returning a Python int and a Python float, called from code
# without a parallel loop (inlined there on the GPUs).
def host_helper_of_int_and_float(x, N):
    for i in range(N):
        x[i] = int_or_float(x[i])


# A slice among the targets of a tuple assignment.
def rotate_rows(x, N):
    for i in range(N):
        x[i, 1:], x[i, 0] = x[i, :-1], x[i, -1]


def huge_or_value(a):
    if a > 0.0:
        return 1e300
    return a


# A helper returning a Python float its other path's float32 cannot hold,
# called from code without a parallel loop.
def host_helper_of_huge_or_value(x, N):
    for i in range(N):
        x[i] = huge_or_value(x[i])
