"""The Cpu backend vectorizes an inner parallel loop (`#pragma omp simd`)
only when each iteration reads the elements it writes at the subscripts it
writes them (found by the fuzzer, seed 37: an iteration read the old value
of an element it had written one statement before)."""

import numpy as np
import parpy

from conftest import cpu_opts, run_both


@parpy.jit
def reads_own_element_elsewhere(o3, o4, N):
    parpy.label('L1')
    for i in range(N):
        o3[i] = 1
        parpy.label('L2')
        for j in range(N):
            o4[i, j, 1] = 2.0
            o4[i, j, 0] = o4[i, j, (i + 2) % 2] + 1.0


@parpy.jit
def scale_rows(x, s, N, M):
    parpy.label('i')
    for i in range(N):
        parpy.label('j')
        for j in range(M):
            x[i, j] = x[i, j] / s[i]


SPEC = {'L1': parpy.threads(2), 'L2': parpy.threads(2)}


def test_read_at_another_subscript_of_a_written_array():
    out = run_both(reads_own_element_elsewhere,
                   [np.zeros(4, np.int64), np.zeros((4, 4, 2)), 4], cpu_opts(SPEC))
    assert out[1][:, 0, 0].tolist() == [1.0, 3.0, 1.0, 3.0]
    code = parpy.print_compiled(reads_own_element_elsewhere,
                                [np.zeros(4, np.int64), np.zeros((4, 4, 2)), 4], cpu_opts(SPEC))
    assert "omp simd" not in code


def test_same_subscript_read_and_write_stays_vectorized():
    # 128 rows: the outer level alone keeps the cores busy (no collapse)
    x = np.random.default_rng(3).random((128, 64)) + 1.0
    s = np.arange(1, 129, dtype=np.float64)
    spec = {'i': parpy.threads(128), 'j': parpy.threads(64)}
    run_both(scale_rows, [x, s, 128, 64], cpu_opts(spec))
    code = parpy.print_compiled(scale_rows, [x, s, 128, 64], cpu_opts(spec))
    assert "#pragma omp simd" in code
