"""`np.einsum(subscripts, *operands)` inside jit code: NumPy's parse of the
subscripts (explicit `->` output, the implicit one, `...`, a label twice in
one operand for a diagonal), its result type (the operands' promoted type:
int32 sums stay int32) and its ValueErrors as located compile errors.
Each program runs as plain Python (NumPy's einsum) and compiled
(conftest.run_both). Integer results are NumPy's exactly; float sums add
each output element's terms in order, while NumPy's own order depends on
the machine's SIMD width, so they agree within rounding (and exactly where
no rounding happens, as for outer products and transposes)."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both

B, N, K, M = 3, 4, 5, 6


def _par():
    return cpu_opts({'b': parpy.threads(B)})


def _floats(*shape, dtype=np.float64, seed=3):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _ints(*shape, dtype=np.int32, seed=3):
    return np.random.default_rng(seed).integers(-60, 60, shape).astype(dtype)


def _exact(got, fn, args, k):
    """Argument `k` after `fn` runs as plain Python: NumPy's value, type and
    bits (integers, and floats where no sum rounds)."""
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    fn.py_func(*want)
    assert got[k].dtype == want[k].dtype
    assert np.array_equal(got[k], want[k]), (got[k], want[k])


@parpy.jit
def row_dots(a, c, y):
    parpy.label('b')
    for b in range(a.shape[0]):
        y[b] = np.einsum('j,j->', a[b, :], c[b, :])


@parpy.jit
def mat_vecs(A, v, y):
    parpy.label('b')
    for b in range(A.shape[0]):
        y[b, :] = np.einsum('jk,k->j', A[b], v[b])


@parpy.jit
def mat_mats(A, Bm, C):
    parpy.label('b')
    for b in range(A.shape[0]):
        C[b, :, :] = np.einsum('ij,jk->ik', A[b], Bm[b])


@parpy.jit
def implicit_mat_mats(A, Bm, C):
    parpy.label('b')
    for b in range(A.shape[0]):
        C[b, :, :] = np.einsum('ij,jk', A[b], Bm[b])


@parpy.jit
def traces(A, t):
    parpy.label('b')
    for b in range(A.shape[0]):
        t[b] = np.einsum('ii', A[b])


@parpy.jit
def diagonals(A, d):
    parpy.label('b')
    for b in range(A.shape[0]):
        d[b, :] = np.einsum('ii->i', A[b])


@parpy.jit
def transposes(A, T):
    parpy.label('b')
    for b in range(A.shape[0]):
        T[b, :, :] = np.einsum('ij->ji', A[b])


@parpy.jit
def outers(u, v, O):
    parpy.label('b')
    for b in range(u.shape[0]):
        O[b, :, :] = np.einsum('i,j->ij', u[b], v[b])


@parpy.jit
def row_sums(A, s):
    parpy.label('b')
    for b in range(A.shape[0]):
        s[b, :] = np.einsum('ij->i', A[b])


@parpy.jit
def column_sums(A, s):
    parpy.label('b')
    for b in range(A.shape[0]):
        s[b, :] = np.einsum('ij->j', A[b])


@parpy.jit
def implicit_transposes(A, T):
    # (the output's labels in alphabetical order: 'ij', a transpose)
    parpy.label('b')
    for b in range(A.shape[0]):
        T[b, :, :] = np.einsum('ji', A[b])


@parpy.jit
def transposed_products(A, Bm, C):
    parpy.label('b')
    for b in range(A.shape[0]):
        C[b, :, :] = np.einsum('ji,jk->ik', A[b], Bm[b])


@parpy.jit
def products_transposed(A, Bm, C):
    parpy.label('b')
    for b in range(A.shape[0]):
        C[b, :, :] = np.einsum('ij,jk->ki', A[b], Bm[b])


@parpy.jit
def three_operands(u, A, v, y):
    parpy.label('b')
    for b in range(A.shape[0]):
        y[b] = np.einsum('i,ij,j->', u[b], A[b], v[b])


@parpy.jit
def ellipsis_sums(A, v, y):
    parpy.label('b')
    for b in range(A.shape[0]):
        y[b, :] = np.einsum('...j,j->...', A[b], v[b])


@parpy.jit
def elementwise_operand(a, c, y):
    parpy.label('b')
    for b in range(a.shape[0]):
        y[b, :, :] = np.einsum('i,j->ij', a[b, :] * 2.0 + 1.0, c[b, :])


@parpy.jit
def optimized(A, Bm, C):
    parpy.label('b')
    for b in range(A.shape[0]):
        C[b, :, :] = np.einsum('ij,jk->ik', A[b], Bm[b], optimize='greedy')


@parpy.jit
def whole_product(A, Bm, y):
    # a full contraction of matrices: every label summed
    parpy.label('b')
    for b in range(A.shape[0]):
        y[b] = np.einsum('ij,ij', A[b], Bm[b])


def _cases(dtype):
    if np.dtype(dtype).kind == 'f':
        mk = lambda *s, seed=3: _floats(*s, dtype=dtype, seed=seed)  # noqa: E731
    else:
        mk = lambda *s, seed=3: _ints(*s, dtype=dtype, seed=seed)  # noqa: E731
    return [
        (row_dots, [mk(B, K), mk(B, K, seed=4), np.zeros(B, dtype)], 2),
        (mat_vecs, [mk(B, N, K), mk(B, K, seed=4), np.zeros((B, N), dtype)], 2),
        (mat_mats, [mk(B, N, K), mk(B, K, M, seed=4), np.zeros((B, N, M), dtype)], 2),
        (implicit_mat_mats, [mk(B, N, K), mk(B, K, M, seed=4), np.zeros((B, N, M), dtype)], 2),
        (traces, [mk(B, N, N), np.zeros(B, dtype)], 1),
        (diagonals, [mk(B, N, N), np.zeros((B, N), dtype)], 1),
        (transposes, [mk(B, N, K), np.zeros((B, K, N), dtype)], 1),
        (outers, [mk(B, N), mk(B, K, seed=4), np.zeros((B, N, K), dtype)], 2),
        (row_sums, [mk(B, N, K), np.zeros((B, N), dtype)], 1),
        (column_sums, [mk(B, N, K), np.zeros((B, K), dtype)], 1),
        (implicit_transposes, [mk(B, N, K), np.zeros((B, K, N), dtype)], 1),
        (transposed_products, [mk(B, K, N), mk(B, K, M, seed=4), np.zeros((B, N, M), dtype)], 2),
        (products_transposed, [mk(B, N, K), mk(B, K, M, seed=4), np.zeros((B, M, N), dtype)], 2),
        (three_operands, [mk(B, N), mk(B, N, K, seed=4), mk(B, K, seed=5), np.zeros(B, dtype)], 3),
        (ellipsis_sums, [mk(B, N, K), mk(B, K, seed=4), np.zeros((B, N), dtype)], 2),
        (optimized, [mk(B, N, K), mk(B, K, M, seed=4), np.zeros((B, N, M), dtype)], 2),
        (whole_product, [mk(B, N, K), mk(B, N, K, seed=4), np.zeros(B, dtype)], 2),
    ]


_ALL = [(fn, dt) for dt in (np.int32, np.float64) for fn, _, _ in _cases(dt)]


@pytest.mark.parametrize("fn,dtype", _ALL, ids=[f"{f.__name__}-{np.dtype(d).name}" for f, d in _ALL])
def test_einsum_as_numpy(fn, dtype):
    args, k = next((a, k) for f, a, k in _cases(dtype) if f is fn)
    got = run_both(fn, args, _par())
    if np.dtype(dtype).kind != 'f':
        # integer sums are NumPy's exactly, in NumPy's type
        _exact(got, fn, args, k)


@pytest.mark.parametrize("fn", [outers, transposes, implicit_transposes, diagonals])
def test_einsum_without_a_sum_has_numpys_bits(fn):
    args, k = next((a, k) for f, a, k in _cases(np.float32) if f is fn)
    _exact(run_both(fn, args, _par()), fn, args, k)


def test_int32_einsum_sums_in_int32():
    # NumPy's einsum keeps the operands' type (np.sum would give int64):
    # wrapping sums prove it
    a = np.full((B, K), 2 ** 30, dtype=np.int32)
    c = np.full((B, K), 3, dtype=np.int32)
    y = np.zeros(B, np.int32)
    got = run_both(row_dots, [a, c, y], _par())
    assert np.array_equal(got[2], np.array([np.einsum('j,j->', a[b], c[b]) for b in range(B)]))


def test_einsum_of_an_elementwise_operand():
    args = [_floats(B, N), _floats(B, K, seed=4), np.zeros((B, N, K))]
    _exact(run_both(elementwise_operand, args, _par()), elementwise_operand, args, 2)


def test_einsum_of_mixed_types_promotes():
    args = [_ints(B, N, K, dtype=np.int8), _ints(B, K, dtype=np.int16, seed=4), np.zeros((B, N), np.int16)]
    _exact(run_both(mat_vecs, args, _par()), mat_vecs, args, 2)


def test_float16_einsum_adds_in_float32():
    args = [_floats(B, K, dtype=np.float16), _floats(B, K, dtype=np.float16, seed=4),
            np.zeros(B, np.float16)]
    run_both(row_dots, args, _par(), rtol=1e-2, atol=1e-2)


@parpy.jit
def bool_products(a, c, y):
    parpy.label('b')
    for b in range(a.shape[0]):
        y[b] = np.einsum('j,j->', a[b, :], c[b, :])


def test_bool_einsum_is_a_logical_or_of_ands():
    a = np.array([[True, False, True], [False, False, True], [True, True, False]])
    c = np.array([[False, False, True], [True, True, False], [False, False, True]])
    args = [a, c, np.zeros(3, bool)]
    _exact(run_both(bool_products, args, _par()), bool_products, args, 2)


# --------------------------------------------------------------------------
# NumPy's ValueErrors, as located compile errors


@parpy.jit
def wrong_count(a, y):
    for b in range(a.shape[0]):
        y[b] = np.einsum('j,j->', a[b, :])


@parpy.jit
def bad_label(a, y):
    for b in range(a.shape[0]):
        y[b] = np.einsum('j%->', a[b, :])


@parpy.jit
def mismatched(A, Bm, C):
    for b in range(A.shape[0]):
        C[b, :, :] = np.einsum('ij,jk->ik', A[b], Bm[b])


@parpy.jit
def unknown_output(a, y):
    for b in range(a.shape[0]):
        y[b] = np.einsum('j->k', a[b, :])


@parpy.jit
def too_many(a, y):
    for b in range(a.shape[0]):
        y[b] = np.einsum('jk->', a[b, :])


@parpy.jit
def non_square_trace(A, t):
    for b in range(A.shape[0]):
        t[b] = np.einsum('ii', A[b])


@parpy.jit
def bad_optimize(a, c, y):
    for b in range(a.shape[0]):
        y[b] = np.einsum('j,j->', a[b, :], c[b, :], optimize='fastest')


SUBSCRIPTS = 'j->'


@parpy.jit
def global_subscripts(a, y):
    for b in range(a.shape[0]):
        y[b] = np.einsum(SUBSCRIPTS, a[b, :])


@pytest.mark.parametrize("fn,args,message", [
    # (NumPy's words: two operands in the subscripts, one given)
    (wrong_count, [np.ones((2, 3)), np.zeros(2)],
     "more operands provided to einstein sum function than specified in the subscripts string"),
    (bad_label, [np.ones((2, 3)), np.zeros(2)],
     "invalid subscript '%' in einstein sum subscripts string, subscripts must be letters"),
    (mismatched, [np.ones((2, 3, 4)), np.ones((2, 5, 3)), np.zeros((2, 3, 3))],
     "operands could not be broadcast together"),
    (unknown_output, [np.ones((2, 3)), np.zeros(2)],
     "einstein sum subscripts string included output subscript 'k' which never appeared in an input"),
    (too_many, [np.ones((2, 3)), np.zeros(2)],
     "einstein sum subscripts string contains too many subscripts for operand 0"),
    (non_square_trace, [np.ones((2, 3, 4)), np.zeros(2)],
     "dimensions in single operand for collapsing index 'i' don't match (3 != 4)"),
])
def test_numpy_value_errors_are_located_compile_errors(fn, args, message):
    # NumPy raises the same ValueError
    with pytest.raises(ValueError):
        fn.py_func(*[a.copy() for a in args])
    with pytest.raises(parpy.CompileError) as e:
        fn(*args, opts=cpu_opts({}))
    assert isinstance(e.value, ValueError)
    assert message in str(e.value)
    assert "np.einsum(" in str(e.value)


def test_optimize_takes_numpys_choices_only():
    with pytest.raises(parpy.CompileError, match="optimize="):
        bad_optimize(np.ones((2, 3)), np.ones((2, 3)), np.zeros(2), opts=cpu_opts({}))


def test_subscripts_other_than_a_literal_are_refused():
    with pytest.raises(parpy.CompileError, match="must be a string literal"):
        global_subscripts(np.ones((2, 3)), np.zeros(2), opts=cpu_opts({}))


# --------------------------------------------------------------------------
# other backends' code


def test_einsum_compiles_for_cuda_and_metal():
    def args_for(backend):
        dt = np.float32 if backend == parpy.CompileBackend.Metal else np.float64
        return [_floats(B, N, K, dtype=dt), _floats(B, K, M, dtype=dt, seed=4),
                np.zeros((B, N, M), dt)]
    codes = check_gpu_code(mat_mats, args_for, {'b': parpy.threads(B)}, "einsum_mat_mats")
    for code in codes.values():
        assert "for" in code
