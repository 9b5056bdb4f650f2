# Slice assignments whose shapes do not match.
import parpy


def mismatched_1d(x, y):
    y[0:10] = x[0:5]


def mismatched_2d(a, b):
    parpy.label('S')
    b[:, :] = a[:, :] + 1.0
