"""Views as NumPy makes them: a local bound to any slice of an array with
bounds known when compiling (`r = x[i, 1:]`, `c = x[:, j]`, `b = x[1:4]`,
`s = r[::2]`), a subscript of a slice (`x[i, 1:][j]`, `x[2:8][1:3]`), and
loops over the rows of a matrix (`for row in x`, `enumerate(x)`,
`zip(x, w)`). Reads and writes through a view reach the array; an index
of a slice is the slice's own (`x[1:][0]` is `x[1]`) and must stay inside
it, as NumPy raises an IndexError even where the array has an element.
Compared with plain Python."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both


@parpy.jit
def tail_stats(x, y, N):
    parpy.label('i')
    for i in range(N):
        r = x[i, 1:]
        s = r[::2]
        y[i, 0] = r[0] + r[-1] + len(r)
        y[i, 1] = np.sum(s) + s[1] - s[-2]
        y[i, 2] = r.max() - np.mean(r[2:5])


@parpy.jit
def column_norms(x, y, M):
    parpy.label('j')
    for j in range(M):
        col = x[:, j]
        y[j] = np.sqrt(np.sum(col * col))


@parpy.jit
def scale_middle(x, N):
    parpy.label('i')
    for i in range(N):
        r = x[i, 2:6]
        for j in range(len(r)):
            r[j] = r[j] * 2.0
        x[i, ::-1][1:3] += 1.0
        x[i, 1:][0] = -r[0]


@parpy.jit
def block_sums(x, y):
    blk = x[1:4]
    for i in range(3):
        y[i] = np.sum(blk[i]) + blk[i][-1]


@parpy.jit
def rows_by_iteration(x, w, y, z):
    for i, row in enumerate(x):
        y[i] = row.sum()
    k = 0
    for row in x[1:5, ::2]:
        z[k] = row[0] - row[-1]
        k += 1
    for r, s, i in zip(x, w, range(3)):
        z[4 + i] = np.max(r * s)


@parpy.jit
def planes_of_a_cube(c, y):
    for i, p in enumerate(c):
        y[i] = np.sum(p[1:, ::2])


def test_views_read_and_write_their_array():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 9))
    run_both(tail_stats, [x, np.zeros((6, 3)), 6], cpu_opts({'i': parpy.threads(6)}), rtol=0, atol=0)
    run_both(column_norms, [x, np.zeros(9), 9], cpu_opts({'j': parpy.threads(9)}))
    out = run_both(scale_middle, [x, 6], cpu_opts({'i': parpy.threads(6)}), rtol=0, atol=0)[0]
    assert out[0, 1] == -out[0, 2] and out[0, 2] == 2 * x[0, 2]
    run_both(block_sums, [x, np.zeros(3)], cpu_opts(), rtol=0, atol=0)


def test_loops_over_rows_bind_each_row_as_a_view():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 9))
    run_both(rows_by_iteration, [x, x * 2.0, np.zeros(6), np.zeros(7)], cpu_opts(), rtol=0, atol=0)
    c = rng.standard_normal((3, 4, 5))
    run_both(planes_of_a_cube, [c, np.zeros(3)], cpu_opts(), rtol=0, atol=0)


@parpy.jit
def chained_reads(x, y, N):
    for i in range(N):
        y[i] = x[i, 1:][2] + x[:, 3][i] + x[i, ::2][1] + x[2:8][1:3][1, -1] + np.sum(x[i, 1:][2:5])


def test_subscripts_of_slices_index_the_slice():
    x = np.random.default_rng(5).standard_normal((9, 9))
    run_both(chained_reads, [x, np.zeros(6), 6], cpu_opts(), rtol=0, atol=0)


@parpy.jit
def const_outside(x, y):
    r = x[0, :4]
    y[0] = r[5]


@parpy.jit
def runtime_outside(x, y):
    r = x[0, :4]
    for j in range(6):
        y[j] = r[j]


@parpy.jit
def runtime_inside(x, y, N):
    r = x[0, 2:6]
    for j in range(N):
        y[j] = r[j] + r[-1 - j]


def test_an_index_outside_the_slice_is_refused_where_numpy_raises():
    x, y = np.zeros((6, 9)), np.zeros(6)
    # the array has x[0, 5]; the slice r has 4 elements: NumPy raises
    with pytest.raises(IndexError):
        const_outside.py_func(x, y)
    with pytest.raises(parpy.CompileError, match=r"index 5 is out of bounds for a slice of 4 elements"):
        const_outside(x, y, opts=cpu_opts())
    with pytest.raises(parpy.CompileError,
                       match=r"this index is not known to stay inside the slice it indexes \(of 4 elements\)"):
        runtime_outside(x, y, opts=cpu_opts())
    # a specialized bound proves the index inside
    x = np.random.default_rng(6).standard_normal((6, 9))
    run_both(runtime_inside, [x, np.zeros(6), 4], cpu_opts(), rtol=0, atol=0)


@parpy.jit
def too_many(x, y):
    y[0] = x[0, 1:][1, 2]


def test_too_many_indices_for_a_slice_is_an_error():
    with pytest.raises(parpy.CompileError, match="too many indices: this slice has 1 dimension, indexed with 2"):
        too_many(np.zeros((3, 4)), np.zeros(3), opts=cpu_opts())


def test_views_compile_for_cuda_and_metal():
    check_gpu_code(tail_stats, lambda backend: [np.zeros((6, 9), np.float32), np.zeros((6, 3), np.float32), 6],
                   {'i': parpy.threads(6)}, "tail_stats")


@parpy.jit
def iterate_chains(x, y, N):
    for i in range(N):
        s = 0.0
        for v in x[i, 1:][::2]:
            s = s * 2.0 + v
        y[i] = s + sum(v for v in x[i, 2:8][1:4] if v > 0)


def test_loops_over_slices_of_slices():
    # (found by the fuzzer's `chains`: a generator over `x[i, 2:26][7:9]`
    # was refused)
    x = np.random.default_rng(8).standard_normal((5, 9))
    run_both(iterate_chains, [x, np.zeros(5), 5], cpu_opts(), rtol=0, atol=0)


@parpy.jit
def named_windows(x, y, N, M):
    parpy.label('i')
    for i in range(N):
        for j in range(M - 4):
            w = x[i, j:j + 5]
            v = w[1:4]
            y[i, j] = w[0] + 2.0 * w[2] + w[-1] + v[0] * v[2] + np.sum(w) + w.max() + len(w)
            for a in v:
                y[i, j] += a
            for k in range(3):
                y[i, j] -= w[k + 1]


@parpy.jit
def blocks(x, y, N, M):
    parpy.label('i')
    for i in range(1, N - 1):
        for j in range(1, M - 1):
            b = x[i - 1:i + 2, j - 1:j + 2]
            y[i, j] = np.sum(b) - b[1, 1] + b[0][2] + np.max(b[1:, :2])


@parpy.jit
def scale_windows(x, N, M):
    parpy.label('i')
    for i in range(N):
        for j in range(0, M - 2, 3):
            w = x[i, j:j + 3]
            w[1] = w[0] + w[2]
            w[:] *= 2.0
            for v in x[i, j:j + 2]:
                w[2] += v


@parpy.jit
def windows_of_slices(x, y, N):
    parpy.label('i')
    for i in range(N):
        for j in range(3):
            w = x[i, 1:12:2][j:j + 3]
            y[i, j] = w[0] - w[2] + np.sum(x[i, j:j + 6:2]) + w.max()
            for v in x[i, j:j + 5:3]:
                y[i, j + 4] += v
            u = x[i, 10:32:6][j:j + 2]
            y[i, j + 8] = u[1]


def test_windows_of_slices_and_strided_windows():
    # (found by the fuzzer's `windows`: `x[i, 10:32:6][j:j + 2]` stopped
    # past the array although its elements are inside it)
    x = np.random.default_rng(10).standard_normal((3, 33))
    run_both(windows_of_slices, [x, np.zeros((3, 12)), 3], cpu_opts({'i': parpy.threads(3)}),
             rtol=0, atol=0)


def test_named_windows_are_views():
    # (were refused: "`w` would be a view whose bounds are known only at
    # run time")
    x = np.random.default_rng(9).standard_normal((4, 12))
    opts = cpu_opts({'i': parpy.threads(4)})
    run_both(named_windows, [x, np.zeros((4, 12)), 4, 12], opts, rtol=0, atol=0)
    run_both(blocks, [x, np.zeros((4, 12)), 4, 12], opts, rtol=0, atol=0)
    run_both(scale_windows, [x, 4, 12], opts, rtol=0, atol=0)


@parpy.jit
def moving_window(x, y, N):
    for i in range(N):
        j = 0
        while j < 5:
            w = x[i, j:j + 3]
            y[i] += w[1]
            j += 1


@parpy.jit
def wide_window(x, y, N):
    for i in range(N):
        for j in range(9):
            w = x[i, j:j + 3]
            y[i] += w[1]


def test_a_window_that_may_move_or_leave_the_array_is_refused():
    with pytest.raises(parpy.CompileError,
                       match="`w` would be a view whose bounds read `j`, which changes") as e:
        moving_window(np.zeros((2, 9)), np.zeros(2), 2, opts=cpu_opts())
    assert "`x[i, j + 1]` for its element 1" in str(e.value)
    with pytest.raises(parpy.CompileError,
                       match="the bounds of this window are not known to stay inside"):
        wide_window(np.zeros((2, 9)), np.zeros(2), 2, opts=cpu_opts())


# slices of slices that select nothing (NumPy: empty), and the rest, over a
# grid of bounds and steps: every composed slice has NumPy's elements


@parpy.jit
def composed_slices(x, y, a, b, s, c, d, t):
    y[0] = len(x[a:b:s][c:d:t])
    y[1] = np.sum(x[a:b:s][c:d:t] * np.arange(1, 1 + len(x[a:b:s][c:d:t])))
    y[2] = len(x[a:b:s][c:d:t][::-1])
    for v in x[a:b:s][c:d:t][::-1]:
        y[3] = y[3] * 3.0 + v


def test_slices_of_slices_match_numpy_empty_ones_included():
    x = np.arange(1.0, 11.0)
    bounds = [-13, -9, -1, 0, 2, 9, 12]
    rng = np.random.default_rng(5)
    for _ in range(40):
        a, b, c, d = (int(v) for v in rng.choice(bounds, 4))
        s, t = (int(v) for v in rng.choice([1, 3, -1, -2], 2))
        got, want = np.zeros(4), np.zeros(4)
        composed_slices(x, got, a, b, s, c, d, t, opts=cpu_opts())
        composed_slices.py_func(x, want, a, b, s, c, d, t)
        assert np.array_equal(got, want), (f"x[{a}:{b}:{s}][{c}:{d}:{t}]", got, want)


@parpy.jit
def sums_of_empty_slices(x, y, k):
    y[0] = np.sum(x[:k][::-1])
    y[1] = len(x[:0][::-1])
    y[2] = np.sum(x[2:-12:3][::-1])
    for v in x[0:0][::-1]:
        y[3] += v


def test_a_reversed_empty_slice_selects_nothing():
    # (it walked the whole array backwards: 55 where NumPy has 0)
    y = np.ones(4)
    sums_of_empty_slices(np.arange(1.0, 11.0), y, 0, opts=cpu_opts())
    assert np.array_equal(y, [0.0, 0.0, 0.0, 1.0])
