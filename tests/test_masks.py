"""Boolean masks. Stores: `t[t < 0] = 0.0`, `y[i, x[i, :] > 0.5] = v`,
`y[i, m] += 1` (the mask the last index, one value): NumPy's store into the
elements where the mask is true. Reductions of a masked read: `np.sum(s[m])`,
`x[i, m].mean()`, `np.max(s[m])`, `len(s[m])`, ...: of NumPy's new array of
the selected elements, its sum pairwise over them (bit for bit), `np.max` of
none a ValueError. Each program runs as plain Python (the reference) and
compiled (conftest.run_both), compared bit for bit."""

import numpy as np
import pytest

import parpy
from conftest import bits_of, cpu_opts, run_both
from test_assert import expect_raised

N, M = 5, 8


def _x(seed):
    x = np.random.default_rng(seed).standard_normal((N, M))
    x[1, 2] = np.nan
    return x


@parpy.jit
def masked_rows(x, y, N):
    parpy.label('i')
    for i in range(N):
        t = x[i, :].copy()
        t[t < 0] = 0.0
        m = x[i, :] > 0.5
        y[i, :] = t
        y[i, m] = x[i, 0]
        y[i, np.isnan(x[i, :])] = -1.0
        y[i, x[i, :] < -0.5] += 10


def test_a_masked_store_writes_where_the_mask_is_true():
    x = _x(1)
    got = run_both(masked_rows, [x, np.zeros((N, M)), N], cpu_opts({'i': parpy.threads(N)}),
                   rtol=0, atol=0)
    assert got[1][1, 2] == -1.0


@parpy.jit
def masked_matrix(x, y, N):
    parpy.label('i')
    x[x < 0] = -1.0
    parpy.label('i')
    for i in range(N):
        y[i, :] = x[i, :]
    parpy.label('i')
    y[y > 1.0] *= 0.5


def test_a_mask_of_a_whole_matrix_stands_for_both_dimensions():
    x = _x(2)
    got = run_both(masked_matrix, [x, np.zeros((N, M)), N], cpu_opts({'i': parpy.threads(N)}),
                   rtol=0, atol=0)
    assert not (got[0] < -1.0).any()


@parpy.jit
def mask_not_last(x, y, N):
    for i in range(N):
        y[x[:, 0] > 0, i] = 1.0


@parpy.jit
def mask_of_values(x, y, N):
    for i in range(N):
        y[i, x[i, :] > 0] = x[i, :]


@parpy.jit
def index_array(x, y, N):
    for i in range(N):
        y[i, x[i, :].astype(np.int64)] = 1.0


@parpy.jit
def masked_reads(x, w, y, k, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.sum(x[i, x[i, :] > 0])
        y[i, 1] = x[i, x[i, :] > 0].mean()
        y[i, 2] = np.max(x[i, w[i, :] > 0.2])
        r = x[i, :]
        y[i, 3] = np.min(r[1:][w[i, 1:] > 0.3])
        # none selected: NumPy's sum of an empty array, and its mean (NaN)
        y[i, 4] = np.sum(x[i, w[i, :] > 2.0]) + np.mean(w[i, w[i, :] > 2.0])
        s = x[i, :] * 2.0
        y[i, 5] = np.sum(s[s < 0.5]) + sum(x[i, x[i, :] < 0.0])
        k[i, 0] = len(x[i, w[i, :] > 0.5])
        k[i, 1] = np.prod(k[i, 2:6][w[i, 2:6] > 0.1]) + np.any(x[i, w[i, :] > 0.9])


@pytest.mark.filterwarnings("ignore:Mean of empty slice")
@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_a_reduction_reads_the_elements_a_mask_selects():
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((N, 40)), rng.random((N, 40))
    x[1, 3] = np.nan
    k = rng.integers(1, 4, (N, 8))
    _numpys_bits(masked_reads, [x, w, np.zeros((N, 6)), k, N], 2)


def _numpys_bits(fn, args, out):
    """Runs `fn` compiled and as plain Python; argument `out` has NumPy's
    bits on the Cpu (a GPU adds in its own order: within rounding)."""
    bits_of(run_both, fn, args, out, cpu_opts({'i': parpy.threads(N)}))


@parpy.jit
def long_masked_sums(x, k, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.sum(x[i, x[i, :] > -0.3])
        y[i, 1] = np.mean(x[i, x[i, :] < 0.3])
        y[i, 2] = float(np.mean(k[i, x[i, :] < 0.3]))
        y[i, 3] = np.sum(k[i, k[i, :] > 3])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_long_masked_sum_is_numpys_pairwise_sum(dtype):
    # (hundreds selected: NumPy's blocks of 128 and halves, over the count)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((N, 300)).astype(dtype)
    k = rng.integers(0, 10, (N, 300)).astype(np.int32)
    _numpys_bits(long_masked_sums, [x, k, np.zeros((N, 4), dtype), N], 2)


@parpy.jit
def masked_spreads(x, k, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.var(x[i, x[i, :] > -0.3])
        y[i, 1] = np.std(x[i, x[i, :] < 0.3], ddof=1)
        y[i, 2] = x[i, x[i, :] > 0.0].var(ddof=2)
        z[i] = np.var(k[i, k[i, :] > 3])
        y[i, 3] = np.std(x[i, k[i, :] < 3], ddof=0)
        y[i, 4] = np.std(x[i, k[i, :] > 3] * 2.0 - x[i, k[i, :] > 3])
        # none, and one, selected: NumPy's NaN and its division by zero
        y[i, 5] = np.var(x[i, x[i, :] > 99.0]) + np.var(x[i, k[i, :] > 98], ddof=1)


@pytest.mark.filterwarnings("ignore:Degrees of freedom")
@pytest.mark.filterwarnings("ignore:invalid value encountered")
@pytest.mark.filterwarnings("ignore:divide by zero")
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_var_and_std_of_a_masked_read_divide_by_its_count(dtype):
    # (hundreds selected: the mean and the squares summed pairwise, as
    # NumPy's `_var` does, divided by the count less `ddof`)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((N, 300)).astype(dtype)
    k = rng.integers(0, 10, (N, 300)).astype(np.int32)
    k[:, 7] = 99
    _numpys_bits(masked_spreads, [x, k, np.zeros((N, 6), dtype), np.zeros(N), N], 2)
    _numpys_bits(masked_spreads, [x, k, np.zeros((N, 6), dtype), np.zeros(N), N], 3)


@parpy.jit
def max_of_a_selection(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.max(x[i, x[i, :] > 5.0])


def test_the_max_of_no_selected_elements_raises_numpys_value_error():
    x = np.random.default_rng(5).standard_normal((N, M))
    opts = cpu_opts({'i': parpy.threads(N)})
    x[:, 0] = 6.0
    run_both(max_of_a_selection, [x, np.zeros(N), N], opts)
    x[3, 0] = 0.0
    expect_raised(max_of_a_selection, [x, np.zeros(N), N], opts, ValueError,
                  "zero-size array to reduction operation maximum", "test_masks.py:")


@parpy.jit
def masked_expressions(x, w, y, k, N):
    parpy.label('i')
    for i in range(N):
        m = w[i, :] > 0.3
        y[i, 0] = np.sum(x[i, m] ** 2)
        y[i, 1] = np.sum(x[i, m] * w[i, m])
        y[i, 2] = np.mean(np.abs(x[i, m]))
        y[i, 3] = np.sum(x[i, m] - np.mean(x[i, m]))
        y[i, 4] = np.max(np.where(x[i, m] > 0, x[i, m], -x[i, m]))
        k[i, 0] = np.count_nonzero(x[i, m] > 0.1)
        k[i, 1] = np.any(x[i, w[i, :] > 0.9] > 0.5)


def test_a_reduction_reads_an_expression_of_reads_through_one_mask():
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((N, 30)), rng.random((N, 30))
    x[1, 3] = np.nan
    _numpys_bits(masked_expressions, [x, w, np.zeros((N, 5)), np.zeros((N, 2), np.int64), N], 2)


@parpy.jit
def masked_read_with_a_whole_row(x, y, N):
    for i in range(N):
        y[i, 0] = np.sum(x[i, x[i, :] > 0] * x[i, :])


@parpy.jit
def two_masks(x, y, N):
    for i in range(N):
        y[i, 0] = np.sum(x[i, x[i, :] > 0] * y[i, x[i, :] < 0])


@parpy.jit
def masked_read_along_an_axis(x, y, N):
    for i in range(N):
        y[i, 0] = np.sum(x[i, x[i, :] > 0], axis=0)


@parpy.jit
def bool_scalar_index(x, y, N):
    for i in range(N):
        y[i, 0] = x[i, x[i, 0] > 0]


@pytest.mark.parametrize("fn,message", [
    # (this read `x[i, 0]` or `x[i, 1]` before: the mask was taken for
    # integer indices)
    (bool_scalar_index,
     "a boolean index selects elements (a mask), which parpy supports in a store or as what a reduction reads"),
    (masked_read_with_a_whole_row,
     "`np.sum` combines a masked read with an array read without the mask"),
    (two_masks, "`np.sum` reads through two different masks"),
    (masked_read_along_an_axis,
     "`np.sum` of a masked read takes no axis or label in parpy functions"),
    (mask_not_last, "a boolean mask is supported as the last index of a store in parpy functions"),
    (mask_of_values, "a masked store takes one value in parpy functions"),
    (index_array, "an array of indices is not supported as an index in parpy functions"),
])
def test_what_a_masked_store_cannot_be_is_a_located_error(fn, message):
    with pytest.raises(parpy.CompileError) as e:
        fn(np.zeros((N, N)), np.zeros((N, N)), N, opts=cpu_opts())
    assert str(e.value).splitlines()[0] == "error: " + message, str(e.value)
    assert "test_masks.py:" in str(e.value), str(e.value)
