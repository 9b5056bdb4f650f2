"""The Cpu backend vectorizes an inner parallel loop (`#pragma omp simd`)
only when each iteration reads the elements it writes at the subscripts it
writes them (found by the fuzzer, seed 37: an iteration read the old value
of an element it had written one statement before), and its stores into
one array are at one subscript or at subscripts apart in a constant
position (fuzzer seed 30115: GCC kept the first of two stores a `while`
loop makes into one element)."""

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


@parpy.jit
def two_stores_that_may_meet(x1, o3, o4, N):
    parpy.label('L1')
    for i in range(N):
        o3[i] = 8.0
        parpy.label('L2')
        for j in range(N):
            o4[i, j, j % 8] = x1[(i + 1) % 8, j % 8]
            w = 0
            while w < 2:
                o4[i, j, (i + 1) % 8] = o3[i]
                o4[i, j, (w + 1) % 8] = 100.0
                w += 1


@parpy.jit
def stores_at_constant_columns(x, y, N, M):
    parpy.label('i')
    for i in range(N):
        parpy.label('j')
        for j in range(M):
            y[i, j, 0] = x[i, j] * 2.0
            y[i, j, 1] = x[i, j] + 1.0


def test_stores_that_may_reach_one_element_are_not_vectorized():
    x1 = np.random.default_rng(4).standard_normal((8, 8)).astype(np.float32)
    args = [x1, np.zeros(13), np.zeros((13, 13, 8)), 13]
    spec = {'L1': parpy.threads(32), 'L2': parpy.threads(3)}
    out = run_both(two_stores_that_may_meet, args, cpu_opts(spec))
    # the last store of each `while` iteration wins, as in Python
    assert out[2][0, 0, 1] == 8.0 and out[2][0, 0, 2] == 100.0
    assert "omp simd" not in parpy.print_compiled(two_stores_that_may_meet, args, cpu_opts(spec))


def test_stores_at_constant_columns_stay_vectorized():
    x = np.random.default_rng(5).random((128, 64))
    args = [x, np.zeros((128, 64, 2)), 128, 64]
    spec = {'i': parpy.threads(128), 'j': parpy.threads(64)}
    run_both(stores_at_constant_columns, args, cpu_opts(spec))
    assert "#pragma omp simd" in parpy.print_compiled(stores_at_constant_columns, args, cpu_opts(spec))
