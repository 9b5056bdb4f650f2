# Error programs: a Python error that a statement certain to run raises,
# found when compiling (tests/test_errors.py). Line numbers are fixed.
import numpy as np


def index_past_the_end(x, k):
    x[k] = 1.0


def python_int_into_int8(x, a):
    x[0] = a


def nan_into_int8(x, a):
    x[0] = a


def shift_past_128_bits(a, b, z):
    z[0] = a << b
