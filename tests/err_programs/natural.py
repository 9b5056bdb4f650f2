# Natural-Python mistakes (issue 13): each error names the parpy way.
import numpy as np

import parpy


def allocates(x, y, N):
    for i in range(N):
        tmp = np.zeros(3)
        y[i] = x[i, 0]


def unpack_count(x, y, N):
    a, b = x[0, 0], x[1, 0], x[2, 0]
    y[0] = a + b


def unpack_scalar(x, y, N):
    a, b = x[3, 0]
    y[0] = a + b


def bad_method(x, y, N):
    for i in range(N):
        y[i] = x[i, :].std()


def no_equivalent(x, y, N):
    for i in range(N):
        y[i] = np.median(x[i, :])
