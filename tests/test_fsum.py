"""Python's `math.fsum` inside jit code: of a 1-D slice, a generator
expression and a tuple or list literal, CPython's correctly rounded sum bit
for bit (its half-even step across partials, NaN and infinities), and its
`OverflowError` / `ValueError` raised from the compiled call."""

import math

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both


def expect_raised(fn, args, opts, exception, *words):
    """The call raises `exception` with `words` in its message, as Python's
    run does (tests/test_cuda_programs.py swaps in a compile-only check)."""
    with pytest.raises(exception) as want:
        fn.__wrapped__(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    with pytest.raises(exception) as e:
        fn(*args, opts=opts)
    assert type(e.value) is type(want.value) is exception
    assert str(want.value) in str(e.value)
    assert all(w in str(e.value) for w in words), str(e.value)


def bits_equal(fn, args, opts):
    """Compiled and plain Python runs of `fn` leave the same bits in every
    array argument."""
    got = run_both(fn, args, opts, rtol=0, atol=0)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with np.errstate(all="ignore"):
        fn.__wrapped__(*want)
    for g, w in zip(got, want):
        if isinstance(w, np.ndarray):
            assert np.array_equal(g.view(np.uint8), w.view(np.uint8)), (g, w)


@parpy.jit
def row_sums(x, w, y, N, M):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = math.fsum(x[i, :])
        y[i, 1] = math.fsum(x[i, j] * w[j] for j in range(M))
        y[i, 2] = math.fsum((x[i, 0], x[i, 1], 1e-17, 3))
        y[i, 3] = math.fsum([x[i, 0], x[i, M - 1], -x[i, 0]])
        y[i, 4] = math.fsum(x[i, j] for j in range(M) if j % 2 == 0)


def adversarial_rows(rng, n, m):
    rows = [
        [1e16, 1.0, -1e16] + [0.0] * (m - 3),
        [1e308, -1e308, 1e-308, 5e-324] + [0.0] * (m - 4),
        # alternating huge and tiny, of both signs
        [(1e300 if k % 2 == 0 else 1e-300) * (-1) ** (k // 2) for k in range(m)],
        # half-way cases that the last step rounds to even
        [1.0, 2.0 ** -53, 2.0 ** -106] + [0.0] * (m - 3),
        [1.0, -(2.0 ** -53), -(2.0 ** -106)] + [0.0] * (m - 3),
        [2.0 ** 53, 1.0, 2.0 ** -60] + [0.0] * (m - 3),
        [0.1] * m,
        [-0.0] * m,
    ]
    rows += [list(rng.standard_normal(m) * 10.0 ** rng.integers(-300, 300, m))
             for _ in range(n - len(rows))]
    return np.array(rows)


def test_fsum_is_cpythons_bit_for_bit():
    rng = np.random.default_rng(7)
    n, m = 64, 9
    x = adversarial_rows(rng, n, m)
    w = rng.standard_normal(m) * 1e3
    bits_equal(row_sums, [x, w, np.zeros((n, 5)), n, m], cpu_opts({'i': parpy.threads(8)}))


def test_fsum_of_many_random_rows_with_cancellation():
    rng = np.random.default_rng(11)
    n, m = 200, 33
    x = rng.standard_normal((n, m)) * 10.0 ** rng.integers(-20, 20, (n, m))
    x[:, m // 2:] = -x[:, : m - m // 2][:, ::-1] * (1 + 2.0 ** -52)
    w = np.ones(m)
    bits_equal(row_sums, [x, w, np.zeros((n, 5)), n, m], cpu_opts({'i': parpy.threads(8)}))


@parpy.jit
def special_sums(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = math.fsum(x[i, :])


def test_fsum_of_nan_and_infinities_is_cpythons():
    nan, inf = np.nan, np.inf
    x = np.array([[1.0, nan, 2.0], [inf, 1.0, inf], [-inf, 5.0, 1e308],
                  [nan, inf, -1.0], [inf, nan, 0.0]])
    bits_equal(special_sums, [x, np.zeros(5), 5], cpu_opts({'i': parpy.threads(5)}))


@parpy.jit
def int_and_float32_sums(k, f, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = math.fsum(k[i, :])
        y[i, 1] = math.fsum(f[i, :])
        y[i, 2] = math.fsum((k[i, 0], f[i, 0], True))


def test_fsum_converts_ints_and_float32_to_python_floats():
    rng = np.random.default_rng(3)
    k = rng.integers(-2 ** 62, 2 ** 62, (6, 4))
    k[0] = [2 ** 53 + 1, 1, -(2 ** 53), 7]
    f = (rng.standard_normal((6, 4)) * 1e30).astype(np.float32)
    bits_equal(int_and_float32_sums, [k, f, np.zeros((6, 3)), 6], cpu_opts({'i': parpy.threads(2)}))


@parpy.jit
def overflowing_sum(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = math.fsum(x[i, :])


def test_fsum_intermediate_overflow_raises_overflow_error():
    x = np.array([[1e308, 1e308, -1e308]])
    expect_raised(overflowing_sum, [x, np.zeros(1), 1], cpu_opts({'i': parpy.threads(1)}), OverflowError,
                  "intermediate overflow in fsum")


def test_fsum_of_inf_and_minus_inf_raises_value_error():
    x = np.array([[np.inf, 1.0, -np.inf]])
    expect_raised(overflowing_sum, [x, np.zeros(1), 1], cpu_opts({'i': parpy.threads(1)}), ValueError,
                  "-inf + inf in fsum")


@parpy.jit
def fsum_of_a_matrix(x, y):
    y[0] = math.fsum(x)


def test_fsum_of_a_2d_array_is_a_located_error():
    with pytest.raises(parpy.CompileError, match="takes a 1-D slice, a tuple or list literal"):
        fsum_of_a_matrix(np.ones((2, 2)), np.zeros(1), opts=cpu_opts({}))


def test_fsum_compiles_for_cuda():
    x = np.ones((4, 9))
    opts = cpu_opts({'i': parpy.threads(4)})
    opts.backend = parpy.CompileBackend.Cuda
    code = parpy.print_compiled(row_sums, [x, np.ones(9), np.zeros((4, 5)), 4, 9], opts)
    assert "partials_1[1050]" in code
    assert "raise OverflowError: intermediate overflow in fsum" in code


@parpy.jit
def float32_row_sums(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = math.fsum(x[i, :])


def test_fsum_on_metal_is_a_located_float64_error():
    opts = cpu_opts({'i': parpy.threads(4)})
    opts.backend = parpy.CompileBackend.Metal
    x = np.ones((4, 9), np.float32)
    with pytest.raises(parpy.CompileError) as e:
        parpy.print_compiled(float32_row_sums, [x, np.zeros(4, np.float32), 4], opts)
    msg = str(e.value)
    assert "Metal does not support double-precision" in msg and "`math.fsum` sums Python floats" in msg, msg
    assert "math.fsum(x[i, :])" in msg and msg.count("error:") == 1, msg
