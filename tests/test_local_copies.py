"""Array values that parpy keeps in a local array of their own, as NumPy's
new arrays: a name re-bound to array values (`t = t * 2`, a value in each
branch), written through (`t[0] = 0`, `e /= e.sum()`), sliced or iterated,
or computed from an array written later; copies (`x[i, :].copy()`,
`np.copy`, `np.array`); and the in-place `x += v` of an array name. Each
program runs as plain Python (the reference) and compiled
(conftest.run_both), compared bit for bit where no math function is
involved."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both

N, M = 5, 8


def _par():
    return cpu_opts({'i': parpy.threads(N)})


def _x(seed=0, dtype=np.float64):
    return (np.random.default_rng(seed).standard_normal((N, M))).astype(dtype)


@parpy.jit
def softmax_in_place(x, y, N):
    parpy.label('i')
    for i in range(N):
        e = np.exp(x[i, :] - x[i, :].max())
        e /= e.sum()
        y[i, :] = e


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_an_array_divided_in_place_is_numpys_softmax(dtype):
    x = _x(1, dtype)
    # (exp is the C library's, NumPy's may differ in the last bit)
    got = run_both(softmax_in_place, [x, np.zeros((N, M), dtype), N], _par())
    assert np.allclose(got[1].sum(axis=1), 1.0)


@parpy.jit
def rebound_in_loops(x, y, z, N):
    parpy.label('i')
    for i in range(N):
        acc = np.zeros(x.shape[1])
        for k in range(3):
            acc = acc + x[i, :] * k
        t = x[i, :] * 2.0
        for k in range(3):
            t = t[::-1] + k
        y[i, :] = acc
        z[i, :] = t


def test_a_name_re_bound_to_arrays_holds_the_last_one():
    x = _x(2)
    got = run_both(rebound_in_loops, [x, np.zeros((N, M)), np.zeros((N, M)), N], _par(),
                   rtol=0, atol=0)
    assert np.array_equal(got[1], x * 0 + x * 1 + x * 2)
    t = x * 2.0
    for k in range(3):
        t = t[:, ::-1] + k
    assert np.array_equal(got[2], t)


@parpy.jit
def bound_in_branches(x, y, N):
    parpy.label('i')
    for i in range(N):
        if x[i, 0] > 0.0:
            t = x[i, :] * 2.0
        else:
            t = x[i, :] - 1.0
        t[1] = 0.5
        y[i, :] = t + 1.0


def test_a_name_bound_in_two_branches_is_one_local_array():
    x = _x(3)
    x[0, 0], x[1, 0] = 1.0, -1.0
    got = run_both(bound_in_branches, [x, np.zeros((N, M)), N], _par(), rtol=0, atol=0)
    assert got[1][0, 1] == 1.5 and got[1][1, 1] == 1.5


@parpy.jit
def written_computed_arrays(x, y, z, N):
    parpy.label('i')
    for i in range(N):
        t = x[i, :] * 2.0
        t[0] = 5.0
        e = x[i, :] * 3.0
        x[i, :] = 0.0
        s = 0.0
        for v in t:
            s += v
        y[i, :] = t + e
        z[i, 0] = s
        z[i, 1] = t[2:5].sum()
        z[i, 2] = len(t)
        z[i, 3] = e[-1]


def test_a_computed_array_written_sliced_or_outliving_its_source_is_numpys_copy():
    x = _x(4)
    before = x.copy()
    got = run_both(written_computed_arrays, [x, np.zeros((N, M)), np.zeros((N, 4)), N], _par(),
                   rtol=0, atol=0)
    assert (got[0] == 0).all()
    assert np.array_equal(got[1][:, 1:], before[:, 1:] * 2.0 + before[:, 1:] * 3.0)
    assert np.array_equal(got[2][:, 3], before[:, -1] * 3.0)


@parpy.jit
def copies(x, y, z, w, N):
    parpy.label('i')
    for i in range(N):
        t = x[i, :].copy()
        t[0] = 9.0
        c = np.copy(x[i, :])
        f = np.array(x[i, :], dtype=np.float32)
        a = np.asarray(x[i, :])
        a[1] = 7.0
        y[i, :] = t + x[i, :]
        z[i, :] = c
        w[i, :] = f * 3


def test_copies_are_new_arrays_and_asarray_a_view():
    x = _x(5)
    got = run_both(copies, [x, np.zeros((N, M)), np.zeros((N, M)), np.zeros((N, M), np.float32),
                            N], _par(), rtol=0, atol=0)
    assert (got[0][:, 1] == 7.0).all()
    assert np.array_equal(got[2], _x(5))  # `c` was copied before `a[1] = 7.0`
    assert (got[1][:, 0] == 9.0 + got[0][:, 0]).all()


@parpy.jit
def in_place_names(x, v, y, N):
    parpy.label('i')
    x *= 2.0
    parpy.label('i')
    for i in range(N):
        r = v[i]
        r += 1
        r *= 3
        t = (x[i, :] * 10).astype(np.int64)
        t += 3
        t //= 2
        y[i, :] = t


def test_augmented_assignment_of_an_array_name_is_in_place():
    x = _x(6)
    v = np.arange(N * M, dtype=np.int32).reshape(N, M)
    got = run_both(in_place_names, [x, v, np.zeros((N, M), np.int64), N], _par(), rtol=0, atol=0)
    assert np.array_equal(got[1], (np.arange(N * M).reshape(N, M) + 1) * 3)


@parpy.jit
def other_name_of_a_local(x, y, N):
    parpy.label('i')
    for i in range(N):
        a = x[i, :] * 1.0
        a[0] = 1.0
        b = a
        b[1] = 2.0
        y[i, :] = a


def test_another_name_of_a_local_array_is_the_same_array():
    x = _x(7)
    got = run_both(other_name_of_a_local, [x, np.zeros((N, M)), N], _par(), rtol=0, atol=0)
    assert (got[1][:, :2] == [1.0, 2.0]).all()


@parpy.jit
def labelled_rebinding(x, y, N):
    parpy.label('i')
    for i in range(N):
        t = x[i, :] ** 2
        parpy.label('j')
        t = t + 1.0
        y[i, :] = t


def test_labels_parallelize_the_store_of_a_new_value():
    x = _x(8)
    run_both(labelled_rebinding, [x, np.zeros((N, M)), N],
             cpu_opts({'i': parpy.threads(N), 'j': parpy.threads(M)}),
             rtol=0, atol=0)


@parpy.jit
def rebound_other_type(x, y, N):
    for i in range(N):
        t = x[i, :] * 2.0
        if i > 100:
            t = x[i, :] > 0.0
        y[i] = t.sum()


@parpy.jit
def view_rebound_and_written(x, y, N):
    for i in range(N):
        r = x[i, :]
        if i > 0:
            r = x[i - 1, :]
        r[0] = 1.0
        y[i] = r[1]


@parpy.jit
def other_name_re_bound(x, y, N):
    for i in range(N):
        a = x[i, :] * 1.0
        b = x[i, :] * 2.0
        for k in range(2):
            a, b = b, a
        y[i] = a[0]


@parpy.jit
def too_big_a_copy(x, y, N):
    for i in range(N):
        t = x[i, :] * 2.0
        t[0] = 1.0
        y[i] = t[1]


@pytest.mark.parametrize("fn,message", [
    (rebound_other_type, "`t` is re-bound to an array of another shape or type"),
    (view_rebound_and_written, "`r` would be a view of `x` here, and is also bound to other arrays"),
    (other_name_re_bound, "parpy cannot re-bind names to the local array `b` in a multiple assignment"),
])
def test_what_a_local_copy_cannot_be_is_a_located_error(fn, message):
    with pytest.raises(parpy.CompileError) as e:
        fn(_x(9), np.zeros(N), N, opts=cpu_opts())
    assert message in str(e.value).splitlines()[0], str(e.value)
    assert "test_local_copies.py:" in str(e.value), str(e.value)


def test_a_copy_larger_than_a_local_array_may_be_says_so():
    x = np.zeros((2, 4096))
    with pytest.raises(parpy.CompileError) as e:
        too_big_a_copy(x, np.zeros(2), 2, opts=cpu_opts())
    assert "the local array `t` takes 32768 bytes, more than the 16384" in str(e.value)


@parpy.jit
def shared_by_a_level(x, y, N):
    parpy.label('i')
    for i in range(N):
        t = np.zeros(x.shape[1], dtype=x.dtype)
        t[0] = x[i, 0]
        parpy.label('j')
        t[1:] = x[i, 1:] + t[0]
        s = t[1]
        parpy.label('j')
        y[i, :] = t * s


def test_a_local_array_of_an_outer_iteration_is_shared_by_its_inner_level():
    # on a GPU, `t` is the block's: the threads of `j` read what thread 0
    # stored, and the block reads what they stored (each thread had a copy
    # of its own before, and read zeros: found with the CUDA emulator)
    x = _x(10)
    run_both(shared_by_a_level, [x, np.zeros((N, M)), N],
             cpu_opts({'i': parpy.threads(N), 'j': parpy.threads(M)}), rtol=0, atol=0)


def test_a_local_array_shared_by_a_level_is_block_memory_in_gpu_code():
    x = np.zeros((N, M), np.float32)
    codes = check_gpu_code(shared_by_a_level, lambda b: [x, np.zeros((N, M), np.float32), N],
                           {'i': parpy.threads(N), 'j': parpy.threads(M)}, "local_shared")
    for code in codes.values():
        assert "__shared__ float t[" in code or "threadgroup float t[" in code, code
