"""`np.unravel_index` and `np.ravel_multi_index` of scalar indices inside
jit code (a loop over a flattened index, `r, c = np.unravel_index(k,
x.shape)`): they were "not callable from jit code". NumPy's values (intp,
C order) and its ValueError for an index out of bounds, checked against the
plain-Python run."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both
from test_assert import expect_raised


@parpy.jit
def by_flat_index(x, y, N):
    parpy.label('k')
    for k in range(N):
        r, c = np.unravel_index(k, x.shape)
        y[r, c] = x[r, c] * 2.0 + np.unravel_index(k, (5, 4))[1]


@parpy.jit
def three_ways(idx, y, N):
    parpy.label('k')
    for k in range(N):
        a, b, c = np.unravel_index(idx[k], [2, 3, 4])
        y[k, 0] = a * 100 + b * 10 + c
        y[k, 1] = np.ravel_multi_index((a, b, c), (2, 3, 4))
        y[k, 2] = np.ravel_multi_index([c, b], (4, 3)) * np.int8(1)


@parpy.jit
def to_flat(x, y, N):
    parpy.label('r')
    for r in range(N):
        for c in range(4):
            y[np.ravel_multi_index((r, c), (6, 4))] = x[r, c] + r


def test_unravel_and_ravel_are_numpys():
    x = np.arange(20.0).reshape(5, 4)
    run_both(by_flat_index, [x, np.zeros((5, 4)), 20], cpu_opts({'k': parpy.threads(20)}))
    idx = np.array([0, 5, 23, 17, 11], np.int16)
    run_both(three_ways, [idx, np.zeros((5, 3), np.int64), 5], cpu_opts({'k': parpy.threads(5)}))
    run_both(to_flat, [x, np.zeros(24), 5], cpu_opts({'r': parpy.threads(5)}))


def test_an_index_out_of_bounds_raises_numpys_value_error():
    x = np.arange(20.0).reshape(5, 4)
    opts = cpu_opts({'k': parpy.threads(21)})
    expect_raised(by_flat_index, [x, np.zeros((5, 4)), 21], opts, ValueError,
                  "index 20 is out of bounds for array with size 20", "np.unravel_index(k, x.shape)")
    for bad in (-1, 24):
        expect_raised(three_ways, [np.array([3, bad], np.int16), np.zeros((2, 3), np.int64), 2],
                      cpu_opts({'k': parpy.threads(2)}), ValueError,
                      f"index {bad} is out of bounds for array with size 24")
    expect_raised(to_flat, [np.zeros((7, 4)), np.zeros(24), 7], cpu_opts({'r': parpy.threads(7)}),
                  ValueError, "invalid entry in coordinates array")


def float_index(x, y, N):
    for k in range(N):
        a, b = np.unravel_index(x[k], (3, 4))
        y[k] = a


def unknown_dims(x, y, N):
    for k in range(N):
        a, b = np.unravel_index(k, (N, 4))
        y[k] = a


def short_multi_index(x, y, N):
    for k in range(N):
        y[k] = np.ravel_multi_index((k,), (3, 4))


def test_what_unravel_cannot_take_is_a_located_error():
    opts = cpu_opts(specialize_scalars=False)
    for fn, exc, words in [(float_index, TypeError, "takes integer indices, not float64"),
                           (unknown_dims, parpy.CompileError, "must be known when compiling"),
                           (short_multi_index, ValueError, "multi_index must be a sequence of length 2")]:
        with pytest.raises(exc, match=words) as e:
            parpy.jit(fn)(np.ones(3), np.zeros(3), 3, opts=opts)
        assert isinstance(e.value, parpy.CompileError)


def test_unravel_compiles_for_cuda_and_metal():
    # (NVRTC and clang-19 check the code, each where installed)
    def args(backend):
        return [np.array([0, 5, 23, 17, 11], np.int16), np.zeros((5, 3), np.int64), 5]
    codes = check_gpu_code(three_ways, args, {'k': parpy.threads(5)}, "three_ways")
    assert "< 24" in codes.get(parpy.CompileBackend.Cuda, "< 24")
