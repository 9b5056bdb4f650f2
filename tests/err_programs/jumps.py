# Loop exits that parpy refuses (tested by the module of jumps in loops).
import parpy


def find_first(x, found, N):
    parpy.label('N')
    for i in range(N):
        if x[i] > 0.0:
            found[0] = i
            break


def total_until(x, s, N):
    parpy.label('N')
    for i in range(N):
        if x[i] < 0.0:
            break
        s[0] += x[i]


def halve_until_small(x):
    for t in range(100):
        with parpy.gpu:
            x[0] = x[0] * 0.5
            if x[0] < 1.0:
                break


def total_positive(x, s, N):
    parpy.label('N')
    for i in range(N):
        if x[i] < 0.0:
            continue
        s[0] += x[i]


def copy_unless_empty(x, y, N):
    parpy.label('N')
    for i in range(N):
        if x[i] < 0.0:
            return
        y[i] = x[i]


def halve_then_mark(x, y):
    with parpy.gpu:
        x[0] = x[0] * 0.5
        if x[0] < 1.0:
            return
        x[1] = x[0]
    y[0] = 1.0
