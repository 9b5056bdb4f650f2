"""Edges of NumPy's arithmetic that parpy got wrong silently, each compared
with the function run as plain Python on NumPy values (bit for bit: the
sign of a zero counts):
- a Python int of 2**63 .. 2**64 - 1 (`2**63`, `2**64 - 1`) meeting a float
  or compared with any integer kept only its 64 bits, a negative int64;
- int64 against uint64 compared in float64 (NumPy 2 compares exactly);
- a uint64 index of 2**63 and up read as a negative index, wrapping past
  the bounds check;
- ties of `np.maximum` / `np.minimum` (NumPy gives the second operand,
  `np.max` of `[0.0, -0.0]` is -0.0), of `np.clip` (the value) and of
  Python's `max` / `min` (the first)."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both


def same(fn, args, spec=None):
    """The compiled and the plain run of `fn` on copies of `args`: every
    array equal, bit for bit."""
    ref = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    fn(*ref)
    parpy.jit(fn)(*got, opts=cpu_opts(spec or {}))
    for r, g in zip(ref, got):
        if isinstance(r, np.ndarray):
            assert g.dtype == r.dtype
            assert np.array_equal(g, r, equal_nan=True), (g, r)
            if r.dtype.kind == 'f':
                assert np.array_equal(np.signbit(g), np.signbit(r)), (g, r)
    return got


def _wide_float(a, y, N):
    for i in range(N):
        y[i, 0] = a[i] + 2**63
        y[i, 1] = a[i] * 2**63
        y[i, 2] = a[i] - (2**64 - 1)
        y[i, 3] = float(2**64 - 1) + a[i]
        y[i, 4] = np.float32(2**63)


def _wide_compare(a, y, N):
    for i in range(N):
        y[i, 0] = a[i] < 2**63
        y[i, 1] = a[i] > 2**64 - 1
        y[i, 2] = a[i] == 2**63
        y[i, 3] = 2**64 - 1 != a[i]
        y[i, 4] = i < 2**63


def _wide_local(a, y, N):
    big = 2**63
    for i in range(N):
        y[i] = a[i] < big


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.int64, np.uint64])
def test_python_ints_past_int64_keep_their_value(dtype):
    a = np.array([0, 1, 100, 127], dtype)
    if dtype != np.uint64:
        a[0] = -1
    same(_wide_compare, [a, np.zeros((4, 5), bool), 4])
    if np.dtype(dtype).kind == 'f':
        y = same(_wide_float, [a, np.zeros((4, 5)), 4])
        assert y[1][0, 0] == a[0] + 2.0**63 and y[1][0, 4] == 2.0**63


def test_a_local_cannot_hold_a_python_int_past_int64():
    with pytest.raises(parpy.CompileError, match="does not fit in the int64 local `big`"):
        parpy.jit(_wide_local)(np.zeros(2), np.zeros(2, bool), 2, opts=cpu_opts())


def _mixed_compare(a, b, y, N):
    for i in range(N):
        y[i, 0] = a[i] < b[i]
        y[i, 1] = a[i] == b[i]
        y[i, 2] = b[i] >= a[i]
        y[i, 3] = np.not_equal(a[i], b[i])
        y[i, 4] = b[i] > a[i]


@pytest.mark.parametrize("signed", [np.int64, np.int32, np.int8])
def test_signed_against_uint64_compares_exactly(signed):
    info = np.iinfo(signed)
    a = np.array([info.max, -1, 0, info.min, 5], signed)
    b = np.array([2**63, 2**64 - 1, 0, 0, 5], np.uint64)
    if signed == np.int64:
        a[2], b[2] = 2**53 + 1, 2**53  # equal as float64
    y = same(_mixed_compare, [a, b, np.zeros((5, 5), bool), 5])
    assert y[2][0].tolist() == [True, False, True, True, True]


def _gather(x, idx, y, N):
    for i in range(N):
        y[i] = x[idx[i]]


def _scatter(x, idx, y, N):
    for i in range(N):
        y[idx[i]] = x[i]


@pytest.mark.parametrize("fn", [_gather, _scatter])
@pytest.mark.parametrize("bad", [2**64 - 1, 2**63, 2**64 - 10])
def test_a_uint64_index_past_int64_is_out_of_bounds_not_negative(fn, bad):
    x = np.arange(10.0)
    idx = np.array([1, bad, 3], np.uint64)
    y = np.zeros(10)
    with pytest.raises(IndexError, match="out of bounds"):
        parpy.jit(fn)(x, idx, y, 3, opts=cpu_opts())
    # the other iterations ran (a failed check skips its own access only);
    # nothing was read or written through `bad`
    want = np.zeros(10)
    if fn is _gather:
        want[[0, 2]] = 1.0, 3.0
    else:
        want[3] = 2.0
    assert y.tolist() == want.tolist()
    idx[1] = 9
    same(fn, [x, idx, np.zeros(10), 3])


def _ties(a, b, x, y, N):
    for i in range(N):
        y[i, 0] = np.maximum(a[i], b[i])
        y[i, 1] = np.minimum(a[i], b[i])
        y[i, 2] = np.clip(a[i], 0.0, 1.0)
        y[i, 3] = np.clip(a[i], -1.0, 0.0)
        y[i, 4] = max(a[i], b[i])
        y[i, 5] = min(a[i], b[i], 0.0)
        y[i, 6] = np.max(x[i, :])
        y[i, 7] = x[i, :].min()


def test_ties_of_max_min_and_clip_give_numpys_zero():
    a = np.array([-0.0, 0.0, -0.0, 0.0, 1.0])
    b = np.array([0.0, -0.0, -0.0, 0.0, 1.0])
    x = np.array([[0.0, 0.0, -0.0], [-0.0, 0.0, 0.0], [0.0, -0.0, 0.0],
                  [-0.0, -0.0, -0.0], [1.0, 2.0, 2.0]])
    y = same(_ties, [a, b, x, np.zeros((5, 8)), 5])
    # np.maximum(-0.0, 0.0) is 0.0, np.maximum(0.0, -0.0) -0.0
    assert np.signbit(y[3][:2, 0]).tolist() == [False, True]


def _nan_of_a_string(y):
    with parpy.gpu:
        y[0] = np.float32('nan') != np.float32('nan')
        y[1] = np.float64('-inf') < 0.0


def test_numpy_float_of_a_string():
    same(_nan_of_a_string, [np.zeros(2, bool)])


def _negated_flags(y, b, N):
    for i in range(N):
        y[i, 0] = -b
        y[i, 1] = -(i > 1)
        y[i, 2] = -(not b) + ~b


def test_minus_of_a_python_bool_is_an_int():
    # Python's `-True` is -1 (parpy refused it: "cannot negate a bool");
    # NumPy's bool has no `-`, which stays an error
    same(_negated_flags, [np.zeros((3, 3), np.int64), True, 3])
    same(_negated_flags, [np.zeros((3, 3), np.int64), False, 3])

    def numpy_bool(y, x):
        with parpy.gpu:
            y[0] = -(x[0] > 0.0)

    with pytest.raises(parpy.CompileError, match="cannot negate a bool"):
        parpy.jit(numpy_bool)(np.zeros(1), np.ones(1), opts=cpu_opts())


# a Python int computed at run time (a loop counter) that meets a narrower
# NumPy integer type: NumPy's OverflowError where the type cannot hold it,
# checked only where the loop's range does not fit


@parpy.jit
def plus_counter(x, y, N):
    for i in range(N):
        y[i] = x[i] + i


@parpy.jit
def counter_stored(y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = i - 3


@parpy.jit
def counter_under_a_test(x, y, N):
    for i in range(N):
        y[i] = x[i] + i if i < 128 else x[i]


@pytest.mark.parametrize("dtype,n,raises", [
    (np.int8, 128, False), (np.int8, 129, True), (np.uint8, 256, False),
    (np.uint8, 300, True), (np.int16, 300, False),
])
def test_a_loop_counter_meeting_a_narrow_int_overflows_as_numpy(dtype, n, raises):
    x = np.zeros(n, dtype)
    if raises:
        with pytest.raises(OverflowError, match=f"Python integer (\\d+ )?out of bounds for {np.dtype(dtype).name}"):
            plus_counter.py_func(x, np.zeros(n, dtype), n)
        with pytest.raises(OverflowError, match=f"Python integer (\\d+ )?out of bounds for {np.dtype(dtype).name}"):
            plus_counter(x, np.zeros(n, dtype), n, opts=cpu_opts())
    else:
        run_both(plus_counter, [x, np.zeros(n, dtype), n], cpu_opts())


def test_a_counter_stored_into_unsigned_elements_overflows_below_zero():
    # i - 3 is -3 .. -1 first: NumPy raises for the store into uint8
    with pytest.raises(OverflowError):
        counter_stored(np.zeros(8, np.uint8), 8, opts=cpu_opts({'i': parpy.threads(4)}))
    run_both(counter_stored, [np.zeros(8, np.int8), 8], cpu_opts({'i': parpy.threads(4)}))


def test_a_counter_in_a_branch_not_taken_is_not_checked():
    run_both(counter_under_a_test, [np.zeros(200, np.int8), np.zeros(200, np.int8), 200],
             cpu_opts())
    code = parpy.print_compiled(plus_counter, [np.zeros(100, np.int8), np.zeros(100, np.int8), 100],
                                cpu_opts())
    assert "check_index" not in code.split("static void plus_counter")[1], code


def _var_std(x, out):
    out[0] = np.var(x)
    out[1] = np.std(x)
    out[2] = np.var(x, ddof=1)
    out[3] = np.std(x, ddof=2)


@pytest.mark.parametrize("n", [7, 2049, 4099])
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_var_divides_a_narrow_sum_by_its_count_in_float64(dtype, n):
    # (float16's var divided by the count rounded to float16 first: 2049
    # became 2048, var 0.96875 where NumPy gives 0.96826171875)
    x = np.random.default_rng(n).standard_normal(n).astype(dtype)
    same(_var_std, [x, np.zeros(4, dtype)])
