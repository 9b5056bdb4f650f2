"""A slice whose bounds are known only at run time but differ by a
constant (`x[i - 1:i + 2, j - 1:j + 2]`, a stencil's window) is a slice of
that length, read or written, when the loops around keep both bounds
inside the dimension; elsewhere Python would clamp the bounds and the
window would change length, so it is refused with the loop to write.
Compared with plain Python."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both


@parpy.jit
def median_filter(img, out, H, W):
    parpy.label('i')
    for i in range(1, H - 1):
        for j in range(1, W - 1):
            out[i, j] = np.median(img[i - 1:i + 2, j - 1:j + 2])


@parpy.jit
def box_means(x, y, z, N, M):
    parpy.label('i')
    for i in range(N):
        for j in range(M - 4):
            y[i, j] = np.mean(x[i, j:j + 5])
        z[i, 2 * i:2 * i + 2] = x[i, i + 1:i + 3] * 3.0


def test_windows_are_pythons_slices():
    rng = np.random.default_rng(6)
    img = rng.random((30, 40))
    out = run_both(median_filter, [img, np.zeros((30, 40)), 30, 40],
                   cpu_opts({'i': parpy.threads(28)}), rtol=0, atol=0)[1]
    assert np.array_equal(out[1:-1, 1:-1], [[np.median(img[i - 1:i + 2, j - 1:j + 2])
                                             for j in range(1, 39)] for i in range(1, 29)])
    x = rng.random((4, 20))
    run_both(box_means, [x, np.zeros((4, 20)), np.zeros((4, 8)), 4, 20],
             cpu_opts({'i': parpy.threads(4)}), rtol=0, atol=0)


@parpy.jit
def window_past_the_edge(x, y, N, M):
    parpy.label('i')
    for i in range(N):
        for j in range(M):
            y[i, j] = np.median(x[i, j - 1:j + 2])


@parpy.jit
def window_sums_past_the_edge(x, y, N, M):
    parpy.label('i')
    for i in range(N):
        for j in range(M):
            y[i, j] = np.sum(x[i, j - 1:j + 2])


def test_a_window_that_may_leave_the_array_is_refused():
    with pytest.raises(parpy.CompileError,
                       match=r"the bounds of this window are not known to stay inside its "
                             r"dimension \(of 20\)"):
        parpy.print_compiled(window_past_the_edge, [np.zeros((4, 20)), np.zeros((4, 20)), 4, 20],
                             cpu_opts({'i': parpy.threads(4)}))
    # (a sum of it takes Python's slice at run time: `x[i, -1:2]` is empty,
    # tests/test_runtime_slices.py)
    x = np.random.default_rng(7).random((4, 20))
    got = run_both(window_sums_past_the_edge, [x, np.zeros((4, 20)), 4, 20],
                   cpu_opts({'i': parpy.threads(4)}), rtol=0, atol=0)[1]
    assert got[0, 0] == 0.0 and got[0, 19] == x[0, 18] + x[0, 19]


def test_windows_compile_for_cuda_and_metal():
    check_gpu_code(median_filter, lambda backend: [
        np.zeros((30, 40), np.float32), np.zeros((30, 40), np.float32), 30, 40],
        {'i': parpy.threads(28)}, "median_filter")
