"""Arrays that only a statement of their own computes (`np.sort`,
`np.argsort`, `np.cumsum`, `np.cumprod`, a ufunc's `accumulate`) read
anywhere in an expression, and computed arrays that a slice subscripts:
NumPy's new array, kept in a local array of a hidden name that a statement
right before fills (`sema/hoist.rs`), as NumPy makes it before the rest of
the expression reads it. `t = np.sort(s)` names one. Each program runs as
plain Python (the reference) and compiled (conftest.run_both), compared
bit for bit."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both

N, M = 5, 8


def _x(seed, dtype=np.float64):
    x = np.random.default_rng(seed).standard_normal((N, M)).astype(dtype)
    x[2, 3] = np.nan
    return x


@parpy.jit
def top_k(x, y, k, N):
    parpy.label('i')
    for i in range(N):
        y[i, :3] = np.sort(x[i, :])[-3:]
        y[i, 3] = np.sort(x[i, :])[:3].sum()
        t = np.sort(x[i, :])
        y[i, 4] = t[-1] - t[0]
        k[i, :3] = np.argsort(x[i, :], kind='stable')[::-1][:3]
        order = np.argsort(x[i, :], kind='stable')
        k[i, 3:] = order[:5] * 2


def test_a_sorted_array_is_sliced_reduced_and_named():
    run_both(top_k, [_x(1), np.zeros((N, 5)), np.zeros((N, M), np.int64), N],
             cpu_opts({'i': parpy.threads(N)}), rtol=0, atol=0)


@parpy.jit
def running(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0, :4] = np.cumsum(x[i, :])[::2]
        y[i, 1, :] = x[i, :].cumsum() / np.arange(1, 9)
        y[i, 2, :4] = (x[i, :] * 2.0)[2:6]
        y[i, 3, :7] = np.maximum.accumulate(x[i, :])[1:] - np.flip(x[i, :])[1:]
        s = 0.0
        for v in np.cumprod(x[i, :4]):
            s += v
        y[i, 4, 0] = s
        if np.sort(x[i, :])[0] < -1.0:
            y[i, 4, 1] = 1.0


def test_scans_and_computed_arrays_are_read_where_an_expression_reads_them():
    run_both(running, [_x(2), np.zeros((N, 5, M)), N], cpu_opts({'i': parpy.threads(N)}),
             rtol=0, atol=0)


@parpy.jit
def labelled(x, y, N):
    parpy.label('i')
    for i in range(N):
        parpy.label('j')
        y[i, :] = np.cumsum(x[i, :]) / 2.0


def test_a_hidden_statement_goes_before_the_labels_of_its_statement():
    opts = cpu_opts({'i': parpy.threads(N), 'j': parpy.threads(M)})
    run_both(labelled, [_x(3), np.zeros((N, M)), N], opts, rtol=0, atol=0)


@parpy.jit
def joined(x, w, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0, :] = np.concatenate((x[i, 4:], x[i, :4]))
        y[i, 1, :] = np.concatenate(([0.0], x[i, :-1]))
        y[i, 2, :] = np.hstack((x[i, :4], w[i, :4]))
        y[i, 3, :] = np.append(x[i, :7], 1.0)
        t = np.concatenate((x[i, :2], w[i, :6]))
        y[i, 4, :] = t * 2.0
        y[i, 5, :6] = np.concatenate([x[i, :3], w[i, :3]]) * np.concatenate((x[i, :3], x[i, :3]))
        y[i, 6, :] = np.concatenate([x[i, :4] * 2.0, np.sort(w[i, :4])])
        # (a part reads the target: the whole array is made first)
        x[i, :] = np.concatenate((x[i, 1:], x[i, :1]))


def test_concatenate_hstack_and_append_join_their_parts():
    w = np.random.default_rng(4).random((N, M))
    run_both(joined, [_x(4), w, np.zeros((N, 7, M)), N], cpu_opts({'i': parpy.threads(N)}),
             rtol=0, atol=0)


@parpy.jit
def joined_along_axis_one(x, y, N):
    for i in range(N):
        y[i, :] = np.concatenate((x[i:i + 1, :4], x[i:i + 1, 4:]), axis=1)[0]


@parpy.jit
def joined_unevenly(x, y, N):
    for i in range(N):
        y[i, :] = np.concatenate((x[i, :4], x[0:2, :2]))[0]


@pytest.mark.parametrize("fn,message", [
    (joined_along_axis_one, "`np.concatenate` joins along the first axis only in parpy functions"),
    (joined_unevenly, "the parts of `np.concatenate` do not fit together"),
])
def test_what_a_concatenation_cannot_be_is_a_located_error(fn, message):
    with pytest.raises(parpy.CompileError) as e:
        fn(_x(5), np.zeros((N, M)), N, opts=cpu_opts())
    assert str(e.value).splitlines()[0] == "error: " + message, str(e.value)
    assert "test_stored_arrays.py:" in str(e.value), str(e.value)


@parpy.jit
def largest_plus_positive(s):
    return np.sort(s)[-1] + np.sum(s[s > 0])


@parpy.jit
def through_a_helper(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = largest_plus_positive(x[i, :])


def test_a_helper_lowered_at_its_call_names_its_sorts_first_too():
    run_both(through_a_helper, [_x(6), np.zeros(N), N], cpu_opts({'i': parpy.threads(N)}),
             rtol=0, atol=0)
