"""Locals holding array expressions (natural Python): `e = np.exp(x[i, :] -
m)`, then `y[i, :] = e / e.sum()`. NumPy would allocate `e`; parpy keeps it
as the expression, read where `e` is used (in slice assignments,
reductions, methods and elementwise math), with the scalars it reads copied
where it is assigned. Each program runs as plain Python (the reference) and
compiled (conftest.run_both)."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both


@parpy.jit
def softmax(x, y, N):
    parpy.label('i')
    for i in range(N):
        m = x[i, :].max()
        e = np.exp(x[i, :] - m)
        y[i, :] = e / e.sum()


def test_softmax_as_numpy_users_write_it():
    x = np.random.default_rng(1).standard_normal((6, 9)) * 4
    got = run_both(softmax, [x, np.zeros((6, 9)), 6], cpu_opts({'i': parpy.threads(6)}))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    assert np.allclose(got[1], e / e.sum(axis=1, keepdims=True), rtol=1e-14)


@parpy.jit
def row_features(x, w, y, z, N):
    parpy.label('i')
    for i in range(N):
        d = x[i, :] - w
        y[i, 0] = d @ d
        y[i, 1] = np.sqrt((d * d).sum())
        a = np.abs(d)
        y[i, 2] = a.max() + a.argmax()
        z[i, :] = np.where(a > 0.3, d, 0.0)
        r = x[i]
        t = r[1:] - r[:-1]
        y[i, 3] = t.mean()
        y[i, 4] = t.std(ddof=1)
        c = (x[i, :] > 0.5).astype(np.int64)
        y[i, 5] = c.sum()
        y[i, 6] = t.min() + (d > 0).sum() + np.linalg.norm(d)


def test_views_in_reductions_methods_and_stores():
    rng = np.random.default_rng(2)
    x, w = rng.random((5, 7)), rng.random(7)
    run_both(row_features, [x, w, np.zeros((5, 7)), np.zeros((5, 7)), 5],
             cpu_opts({'i': parpy.threads(5)}))


@parpy.jit
def scalars_are_read_where_assigned(x, y, N):
    parpy.label('i')
    for i in range(N):
        k = 2.0
        e = x[i, :] * k + i
        k = 3.0
        y[i, :] = e + k
        for t in range(3):
            f = x[i, :] * t
            y[i, :] += f


def test_scalars_are_read_where_the_expression_is_assigned():
    x = np.random.default_rng(3).random((4, 5))
    got = run_both(scalars_are_read_where_assigned, [x, np.zeros((4, 5)), 4],
                   cpu_opts({'i': parpy.threads(4)}))
    assert np.allclose(got[1], x * 2 + np.arange(4)[:, None] + 3 + 3 * x)


@parpy.jit
def whole_arrays(x, y, N):
    s = x * 2.0 - 1.0
    parpy.label('i')
    y[:] = np.maximum(s, 0.0) * s


def test_a_whole_array_expression():
    x = np.random.default_rng(4).random(8)
    run_both(whole_arrays, [x, np.zeros(8), 8], cpu_opts({'i': parpy.threads(8)}))


@parpy.jit
def reads_a_written_array(x, y, N):
    parpy.label('i')
    for i in range(N):
        e = x[i, :] * 2.0
        x[i, 0] = 0.0
        y[i, :] = e


@parpy.jit
def elements_of_a_view(x, y, N):
    parpy.label('i')
    for i in range(N):
        d = np.diff(x[i, :])
        y[i, 0] = d[0] + d[-1] * d.sum()
        for j in range(3):
            y[i, j + 1] = d[j] * d[j + 1]


def test_an_element_of_an_array_expression_is_the_expression_there():
    x = np.random.default_rng(5).standard_normal((3, 5))
    got = run_both(elements_of_a_view, [x, np.zeros((3, 4)), 3],
                   cpu_opts({'i': parpy.threads(3)}), rtol=0, atol=0)[1]
    d = np.diff(x)
    assert np.array_equal(got[:, 0], d[:, 0] + d[:, -1] * d.sum(axis=1))
    assert np.array_equal(got[:, 1:], d[:, :3] * d[:, 1:])


@parpy.jit
def indexes_a_view(x, y, N):
    parpy.label('i')
    for i in range(N):
        d = x[i, :] - 1.0
        y[i, 0] = d[1:].sum()


@pytest.mark.parametrize("fn", [reads_a_written_array, indexes_a_view])
def test_what_cannot_stand_for_its_expression_is_a_local_array(fn):
    # NumPy's new array: later writes to `x` do not reach `e`, and `d` is
    # sliced (both were refused before local copies)
    x = np.random.default_rng(4).random((3, 4))
    got = run_both(fn, [x, np.zeros((3, 4)), 3], cpu_opts({'i': parpy.threads(3)}),
                   rtol=0, atol=0)
    if fn is reads_a_written_array:
        assert np.array_equal(got[1], x * 2.0)


def test_array_expressions_compile_for_cuda_and_metal():
    x = np.random.default_rng(5).random((6, 9)).astype(np.float32)
    check_gpu_code(softmax, lambda b: [x, np.zeros((6, 9), np.float32), 6],
                   {'i': parpy.threads(6)}, "softmax_views")


@parpy.jit
def row_view_methods(x, y, N):
    parpy.label('i')
    for i in range(N):
        r = x[i]
        y[i] = r.sum() + r.max() * r.argmin()


def test_methods_of_a_row_view():
    # `r.sum()` of a row view `r = x[i]` was "name `r` is not defined"
    x = np.random.default_rng(6).random((4, 6))
    run_both(row_view_methods, [x, np.zeros(4), 4], cpu_opts({'i': parpy.threads(4)}))


@parpy.jit
def sliced_row_views(x, z, y, N):
    parpy.label('i')
    for i in range(N):
        r = x[i, :]
        p = z[i, :, :]
        y[i, :] = r + np.sum(p, axis=0)
        r[0] = p[1, 2] + r[1:].sum()


def test_a_row_written_with_full_slices_is_a_view():
    # `r = x[i, :]` was "Slice statements cannot have more slice dimensions
    # than their target"; NumPy's `x[i, :]` is the view `x[i]`
    rng = np.random.default_rng(7)
    x, z = rng.random((4, 6)), rng.random((4, 3, 6))
    got = run_both(sliced_row_views, [x, z, np.zeros((4, 6)), 4],
                   cpu_opts({'i': parpy.threads(4)}))
    assert not np.array_equal(got[0], x)  # written through the view


@parpy.jit
def centred_norm(v, eps=1e-9):
    d = v - v.mean()
    return np.sqrt((d * d).sum() + eps)


@parpy.jit
def row_sum_of(x, i):
    r = x[i]
    return r.sum()


@parpy.jit
def inlined_views(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = centred_norm(x[i, :])
        y[i, 1] = parpy.builtin.inline(row_sum_of(x, i))


def test_views_in_the_return_of_an_inlined_helper():
    # an inlined helper's `return e` was lowered without the substitution
    # of row views: `return r.sum()` was "name `r` is not defined"
    x = np.random.default_rng(7).random((4, 6))
    got = run_both(inlined_views, [x, np.zeros((4, 2)), 4], cpu_opts({'i': parpy.threads(4)}))
    assert np.allclose(got[1][:, 1], x.sum(axis=1))


@parpy.jit
def nearest_centre(X, C, labels, N, K):
    parpy.label('i')
    for i in range(N):
        best = np.inf
        for k in range(K):
            d = (X[i, :] - C[k, :]) @ (X[i, :] - C[k, :])
            if d < best:
                best = d
                labels[i] = k


def test_a_dot_product_is_a_number_not_an_array_expression():
    # `d = a @ b` of 1-D slices was taken for an array expression, and
    # `best = d` then for a second one ("assigned elsewhere too")
    rng = np.random.default_rng(8)
    X, C = rng.random((6, 3)), rng.random((4, 3))
    got = run_both(nearest_centre, [X, C, np.zeros(6, np.int64), 6, 4],
                   cpu_opts({'i': parpy.threads(6)}))
    assert (got[2] == np.argmin(((X[:, None, :] - C[None]) ** 2).sum(-1), axis=1)).all()


@parpy.jit
def twice(v):
    return v * 2


@parpy.jit
def bump_row(r):
    r[0] = r[0] + 1.0


@parpy.jit
def element_passed_to_a_helper(x, y, N):
    parpy.label('i')
    for i in range(N):
        e = x[i, :] * 3.0
        y[i, :] = e + twice(x[i, 0])


@parpy.jit
def row_passed_to_a_helper(x, y, N):
    parpy.label('i')
    for i in range(N):
        e = x[i, :] * 3.0
        bump_row(x[i])
        y[i, :] = e


def test_an_element_passed_to_a_helper_is_not_a_write():
    # an element argument cannot be written by the helper: the array stays
    # readable by an array expression; a row argument can be, so `e` is
    # then NumPy's copy, made before the helper writes the row
    x = np.random.default_rng(9).random((4, 5))
    run_both(element_passed_to_a_helper, [x, np.zeros((4, 5)), 4], cpu_opts({'i': parpy.threads(4)}))
    got = run_both(row_passed_to_a_helper, [x, np.zeros((4, 5)), 4],
                   cpu_opts({'i': parpy.threads(4)}), rtol=0, atol=0)
    assert np.array_equal(got[1], x * 3.0)


@parpy.jit
def transposes(x, w, y, z, t, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = x.T[0, i] + x.T[1][i]
        y[i, 1] = np.sum(x.T[:, i] * w) + x.T.shape[0]
        z[i, :] = x.T[:, i] + w.T
    parpy.label('j')
    t[:, :] = x.T * 2.0
    parpy.label('j')
    x.T[1, :] = 0.5 * t[1, :]


def test_transposes_read_and_write_the_array():
    # `x.T[0, i]` was "only array parameters can be indexed"
    rng = np.random.default_rng(8)
    x, w = rng.random((5, 4)), rng.random(4)
    got = run_both(transposes, [x, w, np.zeros((5, 2)), np.zeros((5, 4)), np.zeros((4, 5)), 5],
                   cpu_opts({'i': parpy.threads(5), 'j': parpy.threads(4)}))
    assert np.array_equal(got[4], x.T * 2.0)
    assert np.array_equal(got[0].T[1], 0.5 * got[4][1, :])


# --------------------------------------------------------------------------
# A computed array passed to a helper: Python's new array, which the helper
# reads (and may write, leaving the arrays it was computed from alone). Was
# "slices can only be used in slice assignments and reductions".

@parpy.jit
def length(v):
    return np.sqrt((v ** 2).sum())


@parpy.jit
def zero_first_then_sum(v):
    v[0] = 0.0
    return v.sum()


@parpy.jit
def helper_of_computed_arrays(x, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i] = length(x[i, :] * 2.0) + length(np.exp(x[i, 1:] - x[i, 0]))
        z[i] = zero_first_then_sum(x[i, :] - 0.5) + x[i, 0]


def test_a_computed_array_passed_to_a_helper_is_a_new_array():
    x = np.random.default_rng(7).random((5, 6))
    got = run_both(helper_of_computed_arrays, [x, np.zeros(5), np.zeros(5), 5],
                   cpu_opts({'i': parpy.threads(5)}))
    assert np.array_equal(got[0], x)


def test_a_computed_array_passed_to_a_helper_compiles_for_cuda_and_metal():
    check_gpu_code(helper_of_computed_arrays, lambda backend: [
        np.zeros((5, 6), np.float32), np.zeros(5, np.float32), np.zeros(5, np.float32), 5],
        {'i': parpy.threads(5)}, "helper_of_computed_arrays")


# --------------------------------------------------------------------------
# `out=` and `where=` of NumPy's elementwise functions, as statements: the
# store into `out` (was "`np.exp` supports only `out=None`")

@parpy.jit
def into_out(x, y, z, w, N):
    parpy.label('i')
    for i in range(N):
        np.sqrt(x[i, :], out=y[i, :])
        np.multiply(y[i, ::-1], 2.0, out=y[i, :])      # in place, reversed
        np.clip(x[i, :], 0.25, 0.75, out=z[i, :])
        np.subtract(x[i, :], 0.5, out=w[i, :], where=x[i, :] > 0.3)
    parpy.label('i')
    np.negative(z, out=z)


@parpy.jit
def roots_into(v, out):
    np.sqrt(v, out=out)
    out[...] += 1.0


@parpy.jit
def roots_through_a_helper(x, y, N):
    parpy.label('i')
    for i in range(N):
        roots_into(x[i, 1:], y[i, :-1])


def test_out_of_a_helpers_view_parameter_stores_through_the_view():
    # (was "`...` indexes only arrays": `out[...]` of a view `y[i, :-1]`)
    x = np.random.default_rng(9).random((4, 6))
    run_both(roots_through_a_helper, [x, np.zeros((4, 6)), 4],
             cpu_opts({'i': parpy.threads(4)}), rtol=0, atol=0)


def test_out_and_where_of_elementwise_functions_store_as_numpy_does():
    x = np.random.default_rng(8).random((5, 6))
    w = np.full((5, 6), -9.0)
    run_both(into_out, [x, np.zeros((5, 6)), np.zeros((5, 6)), w, 5],
             cpu_opts({'i': parpy.threads(5)}), rtol=0, atol=0)
