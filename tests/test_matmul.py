"""Matrix products (`a @ b`, `np.matmul`, `np.dot` of matrices), new axes
(`x[:, None]`, `np.newaxis`), the ellipsis (`x[..., 0]`) and broadcasting
inside reductions
(`np.sum(a[:, None] * b[None, :])`, whose shape is all operands'
broadcast). Each program runs as plain Python (the reference) and compiled
(conftest.run_both); integer results are NumPy's exactly, and so are float
ones where NumPy adds in a fixed order."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both  # noqa: F401 (cpu_opts: swapped)

N, K, M = 5, 7, 3


def _par():
    # every statement is labelled 'i' (the Cuda backend needs parallelism)
    return cpu_opts({'i': parpy.threads(8)})


def _rng(seed=3):
    return np.random.default_rng(seed)


def _floats(*shape, dtype=np.float64, seed=3):
    return _rng(seed).standard_normal(shape).astype(dtype)


def _ints(*shape, dtype=np.int32, seed=3):
    return _rng(seed).integers(-60, 60, shape).astype(dtype)


# --------------------------------------------------------------------------
# new axes


@parpy.jit
def outer_product(a, b, y):
    parpy.label('i')
    y[:, :] = a[:, None] * b[np.newaxis, :]


def test_new_axes_broadcast_to_an_outer_product():
    a, b = _floats(N), _floats(M, seed=4)
    got = run_both(outer_product, [a, b, np.zeros((N, M))], _par())
    assert got[2].tobytes() == np.multiply.outer(a, b).tobytes()


@parpy.jit
def new_axes_everywhere(x, y, z, w):
    parpy.label('i')
    y[:, :, :] = x[:, None, :]
    parpy.label('i')
    z[:, :, :] = x.T[:, :, None]
    parpy.label('i')
    w[:, :] = x[None]


def test_new_axes_in_any_position_of_an_array_and_its_transpose():
    x = _floats(N, K)
    got = run_both(new_axes_everywhere,
                   [x, np.zeros((N, 1, K)), np.zeros((K, N, 1)), np.zeros((N, K))], _par())
    assert np.array_equal(got[2][:, :, 0], x.T)
    # NumPy drops the value's leading 1-long dimensions the target lacks
    assert np.array_equal(got[3], x)


@parpy.jit
def distances(p, d, N):
    parpy.label('i')
    for i in range(N):
        d[i, :] = np.sqrt(np.sum((p[i, None, :] - p) ** 2, axis=1))


@parpy.jit
def all_distances(p, d):
    parpy.label('i')
    d[:, :] = np.sqrt(np.sum((p[:, None, :] - p[None, :, :]) ** 2, axis=-1))


def test_pairwise_distances_are_numpys_bits():
    p = _floats(6, 4)
    want = np.sqrt(np.sum((p[:, None, :] - p[None, :, :]) ** 2, axis=-1))
    opts = _par()
    got = run_both(distances, [p, np.zeros((6, 6)), 6], opts)
    # (other backends: close, which run_both checked)
    exact = opts.backend == parpy.CompileBackend.Cpu
    assert got[1].tobytes() == want.tobytes() or not exact
    got = run_both(all_distances, [p, np.zeros((6, 6))], _par())
    assert got[1].tobytes() == want.tobytes() or not exact


@parpy.jit
def reductions_that_broadcast(a, b, x, y):
    # the first operand fixes a shape that a later one extends
    parpy.label('i')
    y[0] = np.sum(a[:, None] * b[None, :])
    parpy.label('i')
    y[1] = np.max(b * a[:, None])
    parpy.label('i')
    y[2] = np.sum(x[0:1, :] * x)
    parpy.label('i')
    y[3] = (a[:, None, None] * b[:, None]).sum()


def test_a_reduction_takes_the_broadcast_of_all_its_operands():
    a, b, x = _ints(N, dtype=np.int64), _ints(M, dtype=np.int64, seed=5), _ints(N, K, dtype=np.int64)
    got = run_both(reductions_that_broadcast, [a, b, x, np.zeros(4, np.int64)], _par())
    assert list(got[3]) == [np.sum(np.multiply.outer(a, b)), np.max(np.multiply.outer(a, b)),
                            np.sum(x[0:1] * x), np.sum(a[:, None, None] * b[:, None])]


@parpy.jit
def ellipses(x, y, z, w, N):
    parpy.label('i')
    y[...] = x[..., 0]
    parpy.label('i')
    for i in range(N):
        z[i, ...] = x[i, ..., 1] * 2.0
        t = np.zeros((x.shape[1], x.shape[2]))
        t[...] = x[i]
        w[i] = np.sum(t[..., 2])


def test_an_ellipsis_stands_for_the_dimensions_left():
    x = _floats(N, K, M)
    got = run_both(ellipses, [x, np.zeros((N, K)), np.zeros((N, K)), np.zeros(N), N], _par())
    assert np.array_equal(got[1], x[..., 0])
    assert np.array_equal(got[2], x[..., 1] * 2.0)


# --------------------------------------------------------------------------
# matrix products


@parpy.jit
def matmul(a, b, c):
    parpy.label('i')
    c[:, :] = a @ b


@parpy.jit
def matmul_rows(a, b, c, N):
    parpy.label('i')
    for i in range(N):
        c[i, :] = a[i, :] @ b


@parpy.jit
def matvec(a, v, y):
    parpy.label('i')
    y[:] = a @ v


@parpy.jit
def numpy_names(a, b, c, d):
    parpy.label('i')
    c[:, :] = np.matmul(a, b)
    parpy.label('i')
    d[:, :] = np.dot(a, b)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
def test_integer_matrix_products_are_numpys(dtype):
    a, b = _ints(N, K, dtype=dtype), _ints(K, M, dtype=dtype, seed=6)
    want = a @ b
    assert want.dtype == dtype
    got = run_both(matmul, [a, b, np.zeros((N, M), dtype)], _par())
    assert np.array_equal(got[2], want)
    got = run_both(matmul_rows, [a, b, np.zeros((N, M), dtype), N], _par())
    assert np.array_equal(got[2], want)
    got = run_both(matvec, [a, b[:, 0].copy(), np.zeros(N, dtype)], _par())
    assert np.array_equal(got[2], a @ b[:, 0])
    got = run_both(numpy_names, [a, b, np.zeros((N, M), dtype), np.zeros((N, M), dtype)], _par())
    assert np.array_equal(got[2], want) and np.array_equal(got[3], want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_float_matrix_products_match_numpy(dtype):
    a, b = _floats(N, K, dtype=dtype), _floats(K, M, dtype=dtype, seed=6)
    run_both(matmul, [a, b, np.zeros((N, M), dtype)], _par())
    run_both(matmul_rows, [a, b, np.zeros((N, M), dtype), N], _par())
    run_both(matvec, [a, b[:, 0].copy(), np.zeros(N, dtype)], _par())


@parpy.jit
def products_of_views(x, w, v, g, s, t, y):
    parpy.label('i')
    g[:, :] = x @ x.T
    parpy.label('i')
    s[:, :] = x[1:3, :] @ w[:, ::-1]
    parpy.label('i')
    t[:] = (x @ w) @ v
    parpy.label('i')
    y[:] = np.sum(x @ w, axis=1)


def test_products_of_transposes_slices_and_products():
    x, w, v = _ints(N, K, dtype=np.int64), _ints(K, M, dtype=np.int64, seed=7), _ints(M, dtype=np.int64, seed=8)
    got = run_both(products_of_views, [x, w, v, np.zeros((N, N), np.int64), np.zeros((2, M), np.int64),
                                       np.zeros(N, np.int64), np.zeros(N, np.int64)], _par())
    assert np.array_equal(got[3], x @ x.T)
    assert np.array_equal(got[4], x[1:3] @ w[:, ::-1])
    assert np.array_equal(got[5], (x @ w) @ v)
    assert np.array_equal(got[6], np.sum(x @ w, axis=1))


@parpy.jit
def dense_relu(x, w, b, y, N):
    parpy.label('i')
    for i in range(N):
        r = x[i, :]
        y[i, :] = np.maximum(r @ w + b, 0.0)


@parpy.jit
def transposes(x, y, g):
    parpy.label('i')
    y[:, :] = np.transpose(x) * 2
    parpy.label('i')
    g[:, :] = x.transpose() @ x


def test_np_transpose_and_the_method_are_the_transposed_view():
    x = _ints(N, K, dtype=np.int64)
    got = run_both(transposes, [x, np.zeros((K, N), np.int64), np.zeros((K, K), np.int64)], _par())
    assert np.array_equal(got[1], x.T * 2) and np.array_equal(got[2], x.T @ x)


@parpy.jit
def transposes_of_subscripts(x, v, a, b, c, N):
    parpy.label('i')
    for i in range(N):
        a[i, :, :] = x[i].T
        b[i, :, :] = np.transpose(x[i, 1:, ::2]) + x[i, 1:, 1:].transpose()
        c[i, :] = x[i].T @ v


@parpy.jit
def transpose_in_place(s, N):
    parpy.label('i')
    for i in range(N):
        s[i, :, :] = s[i].T * 2


def test_a_transpose_of_a_subscript_is_the_transposed_view():
    x, v = _ints(N, K, M, dtype=np.int64), _ints(K, dtype=np.int64, seed=3)
    outs = [np.zeros((N, M, K), np.int64), np.zeros((N, 2, K - 1), np.int64),
            np.zeros((N, M), np.int64)]
    a, b, c = run_both(transposes_of_subscripts, [x, v, *outs, N], _par())[2:5]
    assert np.array_equal(a, x.transpose(0, 2, 1))
    assert np.array_equal(b, [np.transpose(m[1:, ::2]) + m[1:, 1:].transpose() for m in x])
    assert np.array_equal(c, [m.T @ v for m in x])
    # a write through the view it reads: NumPy reads all of it first
    s = _ints(N, K, K, dtype=np.int64)
    got = run_both(transpose_in_place, [s, N], _par())[0]
    assert np.array_equal(got, s.transpose(0, 2, 1) * 2)


def test_a_dense_layer_on_row_views():
    x, w, b = _floats(N, K, dtype=np.float32), _floats(K, M, dtype=np.float32, seed=9), _floats(M, dtype=np.float32, seed=10)
    got = run_both(dense_relu, [x, w, b, np.zeros((N, M), np.float32), N], _par())
    np.testing.assert_allclose(got[3], np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-6)


@parpy.jit
def elementwise_left(x, w, y, z, N):
    parpy.label('i')
    for i in range(N):
        m = np.max(x[i, :])
        y[i, :] = np.exp(x[i, :] - m) @ w
    parpy.label('i')
    z[:, :] = np.where(x > 0, x, -x * w[:, 0]) @ w


def test_a_left_operand_built_elementwise_takes_the_new_axis_in_each_array():
    x, w = _floats(N, K), _floats(K, M, seed=11)
    got = run_both(elementwise_left, [x, w, np.zeros((N, M)), np.zeros((N, M)), N], _par())
    np.testing.assert_allclose(got[2], np.exp(x - x.max(axis=1, keepdims=True)) @ w, rtol=1e-12)
    np.testing.assert_allclose(got[3], np.where(x > 0, x, -x * w[:, 0]) @ w, rtol=1e-12)


def test_matrix_products_compile_for_cuda_and_metal():
    def args(backend):
        return [np.zeros((N, K), np.float32), np.zeros((K, M), np.float32), np.zeros((N, M), np.float32), N]
    check_gpu_code(matmul_rows, args, {'i': parpy.threads(N)}, "matmul_rows")


# --------------------------------------------------------------------------
# what is refused


@parpy.jit
def matmul_of_an_expression(x, y):
    parpy.label('i')
    y[:, :] = np.sum(x, axis=1, keepdims=True) @ x


@parpy.jit
def matmul_3d(x, y):
    parpy.label('i')
    y[0] = np.sum(x[None, :, :] @ x.T)


@parpy.jit
def matmul_bool(m, y):
    parpy.label('i')
    y[:, :] = m @ m


@parpy.jit
def newaxis_as_a_value(x, y):
    a = np.newaxis
    parpy.label('i')
    y[0] = x[0]


@parpy.jit
def matmul_of_a_named_product(a, c, N):
    parpy.label('i')
    for i in range(N):
        t = a[i] @ a[i]
        c[i, :, :] = t @ a[i]


def test_a_product_of_a_named_product_points_at_the_use():
    # (the caret was on `a[i] @ a[i]`, whose left operand is an array)
    with pytest.raises(parpy.CompileError) as e:
        matmul_of_a_named_product(np.ones((2, 3, 3)), np.zeros((2, 3, 3)), 2, opts=_par())
    lines = str(e.value).splitlines()
    marked = [k for k, l in enumerate(lines) if "^^^" in l]
    assert marked and "t @ a[i]" in lines[marked[0] - 1], str(e.value)
    assert "a local one: `t = np.empty((n, m))`" in str(e.value)


@pytest.mark.parametrize("fn,args,message", [
    # ((1, 1) @ (1, 4): the shapes agree, as NumPy wants)
    (matmul_of_an_expression, [np.ones((1, 4)), np.zeros((1, 4))],
     "`@` with a matrix on the right takes a left operand built elementwise from arrays"),
    (matmul_3d, [np.ones((3, 4)), np.zeros(1)], "`@` of 3- and 2-dimensional operands is not supported"),
    (matmul_bool, [np.ones((3, 3), bool), np.zeros((3, 3), bool)], "`@` of bool arrays is not supported"),
    (newaxis_as_a_value, [np.ones(3), np.zeros(3)], "`np.newaxis` cannot be used as a value"),
])
def test_what_a_matrix_product_cannot_be_is_a_located_error(fn, args, message):
    with pytest.raises(parpy.CompileError) as e:
        fn(*args, opts=_par())
    assert message in str(e.value), str(e.value)
    assert "test_matmul.py:" in str(e.value), str(e.value)


@parpy.jit
def inner_products(a, b, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.inner(a[i, ::-1], b[i, :])
        # (NumPy's vdot of unit-stride vectors is its dot, bit for bit)
        z[i] = np.vdot(a[i, :], b[i, :]) - np.dot(a[i, :], b[i, :])


@pytest.mark.parametrize("dtype", [np.int64, np.int16, np.float64, np.float32])
def test_np_inner_and_vdot_of_vectors_are_the_dot_product(dtype):
    if np.dtype(dtype).kind == 'f':
        a, b = _floats(N, K, dtype=dtype), _floats(N, K, dtype=dtype, seed=7)
    else:
        a, b = _ints(N, K, dtype=dtype), _ints(N, K, dtype=dtype, seed=7)
    got = run_both(inner_products, [a, b, np.zeros(N, dtype), np.zeros(N, dtype), N], _par())
    assert not got[3].any()
    if np.dtype(dtype).kind == 'i':
        assert np.array_equal(got[2], np.einsum('ij,ij->i', a[:, ::-1], b).astype(dtype))


@parpy.jit
def inner_of_matrices(a, y):
    with parpy.gpu:
        y[0] = np.inner(a, a)[0, 0]


@parpy.jit
def inner_by_name(a, y):
    with parpy.gpu:
        y[0] = np.inner(a[0, :], b=a[1, :])


def test_np_inner_of_matrices_or_by_name_is_an_error():
    a = np.ones((2, 3))
    with pytest.raises(parpy.CompileError, match="`np.inner` takes two 1-D operands"):
        inner_of_matrices(a, np.zeros(1), opts=cpu_opts())
    with pytest.raises(TypeError):
        inner_by_name.py_func(a, np.zeros(1))
    with pytest.raises(parpy.CompileError, match="`np.inner` takes `b` by position only"):
        inner_by_name(a, np.zeros(1), opts=cpu_opts())


# --------------------------------------------------------------------------
# products with a number; float16 products


@parpy.jit
def dot_of_a_number(x, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.dot(x[i, :], 2.5) + np.dot(x[i, 0], x[i, :])
        z[i] = np.dot(x[i, 1], 3.0)


def test_np_dot_of_a_number_is_the_product():
    # (it was the sum of the products: `np.dot(v, 2.5)` a number, stored
    # into every element of the row)
    x = _floats(N, K)
    got = run_both(dot_of_a_number, [x, np.zeros((N, K)), np.zeros(N), N], _par())
    assert got[1].tobytes() == (x * 2.5 + x[:, :1] * x).tobytes()
    assert got[2].tobytes() == (x[:, 1] * 3.0).tobytes()


@parpy.jit
def matmul_of_a_number(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = x[i, :] @ 2.0


def test_matmul_of_a_number_is_numpys_error():
    x = _floats(N, K)
    with pytest.raises(ValueError):
        matmul_of_a_number.py_func(x, np.zeros((N, K)), N)
    with pytest.raises(parpy.CompileError, match="`@` of a number"):
        matmul_of_a_number(x, np.zeros((N, K)), N, opts=_par())


@parpy.jit
def half_products(x, w, b, y, z, n, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.dot(x[i, :], x[(i + 1) % N, :]) + np.inner(x[i, :], b[i, :])
        z[i, :] = w @ x[i, :]
        n[i] = np.linalg.norm(x[i, :])


def test_float16_products_add_in_float32_as_numpy_does():
    # NumPy's float16 dot and matmul multiply and add in float32 and round
    # once; parpy added in float16 (the last bits differed in about one
    # result of three)
    x = _floats(40, 300, dtype=np.float16)
    w = _floats(3, 300, dtype=np.float16, seed=5)
    b = _ints(40, 300, dtype=np.int8, seed=6) % 3 == 0
    args = [x, w, b, np.zeros(40, np.float16), np.zeros((40, 3), np.float16),
            np.zeros(40, np.float16), 40]
    got = run_both(half_products, args, _par())
    want = [np.dot(x[i], x[(i + 1) % 40]) + np.inner(x[i], b[i]) for i in range(40)]
    assert got[3].tobytes() == np.array(want, np.float16).tobytes()
    assert got[4].tobytes() == (x @ w.T).tobytes()
    assert got[5].tobytes() == np.array([np.linalg.norm(r) for r in x]).tobytes()


@parpy.jit
def matmul_misaligned(a, b, c):
    c[:, :] = a @ b


@parpy.jit
def dot_misaligned(a, b, c):
    c[:] = np.dot(a, b)


def test_mismatched_core_dimensions_are_numpys_error():
    # (it was the internal broadcast "the slices (3, 4, 1) and (3, 5) do not
    # match")
    a, b, v = _floats(3, 4), _floats(3, 5), _floats(3)
    for fn, b, out in ((matmul_misaligned, b, np.zeros((3, 5))),
                       (dot_misaligned, v, np.zeros(3))):
        with pytest.raises(ValueError) as want:
            fn.py_func(a, b, out)
        with pytest.raises(parpy.CompileError) as e:
            fn(a, b, out, opts=cpu_opts())
        first = str(e.value).splitlines()[0]
        assert first == f"error: {want.value}", (first, str(want.value))
