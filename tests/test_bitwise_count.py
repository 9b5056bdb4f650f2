"""`np.bitwise_count(x)` inside jit code (NumPy 2's popcount ufunc) was
"not callable from jit code". NumPy counts the 1-bits of `|x|` (the least
int64 has one), a bool as one bit, and gives a uint8; floats have no loop
(a TypeError). Checked against the plain-Python run for every integer type,
its extremes included."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both

INT_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@parpy.jit
def counts(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.bitwise_count(x[i])


@parpy.jit
def row_counts(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.bitwise_count(x[i, :]) + np.bitwise_count(7)


def extremes(dt):
    info = np.iinfo(dt)
    return np.array([0, 1, 5, 7, info.min, info.max, info.min + 1, info.max - 1], dtype=dt)


@pytest.mark.parametrize("dt", INT_TYPES, ids=lambda t: t.__name__)
def test_bitwise_count_is_numpys(dt):
    run_both(counts, [extremes(dt), np.zeros(8, np.uint8), 8], cpu_opts({'i': parpy.threads(8)}))


def test_bitwise_count_of_bools_and_slices():
    opts = cpu_opts({'i': parpy.threads(4)})
    run_both(counts, [np.array([True, False, True, True]), np.zeros(4, np.uint8), 4], opts)
    run_both(row_counts, [np.arange(12).reshape(4, 3) - 6, np.zeros((4, 3), np.int64), 4], opts)


def test_bitwise_count_of_floats_is_a_type_error():
    with pytest.raises(TypeError, match="`np.bitwise_count` of float64 values") as e:
        counts(np.ones(2), np.zeros(2, np.uint8), 2, opts=cpu_opts({'i': parpy.threads(2)}))
    assert isinstance(e.value, parpy.CompileError)


def test_bitwise_count_compiles_for_cuda_and_metal():
    def args(backend):
        return [extremes(np.int32), np.zeros(8, np.uint8), 8]
    check_gpu_code(counts, args, {'i': parpy.threads(8)}, "counts")
