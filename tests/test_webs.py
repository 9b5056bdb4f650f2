"""Locals re-bound to values of other types (`syntax::webs`, sema's joins):
compiled runs against plain Python, each of which gave a silent wrong
answer before (docs/arithmetic.md)."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both

I64 = parpy.types.I64


# --- a bool local re-bound to an int is the int, not its truth -----------

@parpy.jit
def found_index(x, y, N):
    found = False
    for i in range(N):
        if x[i] > 1:
            found = i
            break
    y[0] = found


@parpy.jit
def bool_counter(x, y, N):
    cnt = False
    for i in range(N):
        if x[i] > 1:
            cnt += 1
    y[0] = cnt


@parpy.jit
def numpy_bool_then_int(x, y, N):
    for i in range(N):
        a = x[i] > 1
        if i % 2:
            a = 5
        y[i] = a + 1


@parpy.jit
def bool_or_index(x, i):
    r = False
    if x[i] > 0:
        r = i + 5
    return r


@parpy.jit
def helper_bool_then_int(x, y, N):
    for i in range(N):
        y[i] = bool_or_index(x, i)


@parpy.jit
def parallel_found(x, y, N):
    parpy.label('i')
    for i in range(N):
        found = False
        for j in range(4):
            if x[i, j] > 0.5:
                found = j + 1
                break
        y[i] = found


def test_bool_local_rebound_to_an_int():
    # (`found = i` stored True: 1; the counter stayed 1)
    got = run_both(found_index, [np.arange(6, dtype=np.int32), np.zeros(1, np.int64), 6], cpu_opts())
    assert got[1][0] == 2
    got = run_both(bool_counter, [np.arange(6, dtype=np.int32), np.zeros(1, np.int64), 6], cpu_opts())
    assert got[1][0] == 4
    got = run_both(numpy_bool_then_int, [np.arange(4, dtype=np.int32), np.zeros(4, np.int64), 4], cpu_opts())
    assert got[1].tolist() == [1, 6, 2, 6]
    run_both(helper_bool_then_int, [np.array([1.0, -1.0, 2.0, -9.0]), np.zeros(4, np.int64), 4], cpu_opts())
    x = np.random.default_rng(3).random((5, 4))
    run_both(parallel_found, [x, np.zeros(5, np.int64), 5], cpu_opts({'i': parpy.threads(5)}))


@parpy.jit
def inverted_joined_bool(x, y, N):
    for i in range(N):
        v = x[i] > 0.5
        y[i, 0] = ~v
        if i > 100:
            v = parpy.builtin.convert(i, parpy.types.I32)
        y[i, 1] = ~v


def test_invert_of_a_numpy_bool_joined_with_an_int_is_refused():
    with pytest.raises(parpy.CompileTypeError, match="`~v` of a local that holds a NumPy bool"):
        inverted_joined_bool(np.ones(3), np.zeros((3, 2), np.int64), 3, opts=cpu_opts())


# --- straight-line re-binding: each value with its own type ----------------

@parpy.jit
def literal_then_int8(x, y, N):
    for i in range(N):
        acc = 100
        y[i] = acc * 100
        acc = x[i]


@parpy.jit
def int8_then_int64(x, y, N):
    for i in range(N):
        p = x[i]
        y[i] = p * 100
        p = parpy.builtin.convert(i, I64) * 100000
        y[i] += p


@parpy.jit
def literal_then_uint8(x, y, N):
    for i in range(N):
        t = 1
        y[i, 0] = -t // 2
        y[i, 1] = t - 2
        t = x[i]
        y[i, 2] = t


@parpy.jit
def literal_read_then_float32_update(x, y, N):
    for i in range(N):
        acc = 0.5
        y[i, 0] = acc / 3
        acc += x[i]
        y[i, 1] = acc


@parpy.jit
def literal_read_then_int8_update(x, y, N):
    for i in range(N):
        acc = 100
        y[i, 0] = acc * 100
        acc += x[i]
        y[i, 1] = acc


def test_straight_line_rebinding_keeps_each_values_type():
    with np.errstate(all="ignore"):
        got = run_both(literal_then_int8, [np.arange(2, dtype=np.int8), np.zeros(2, np.int64), 2], cpu_opts())
        assert got[1].tolist() == [10000, 10000]
        # (Python's int8 product wraps: 3 * 100 is 44)
        got = run_both(int8_then_int64, [np.array([3, 4], np.int8), np.zeros(2, np.int64), 2], cpu_opts())
        assert got[1].tolist() == [44, -112 + 100000]
        run_both(literal_then_uint8, [np.arange(5, dtype=np.uint8), np.zeros((5, 3), np.int64), 5], cpu_opts())


@parpy.jit
def python_int_then_max(x, y):
    m = 100
    y[0] = m * 100
    m = max(x[0], x[1])
    y[1] = m


@parpy.jit
def python_numbers_then_calls(x32, x8, y, k, N):
    for i in range(N):
        a = 0.5
        y[i, 0] = a / 3
        a = np.float32(x32[i])
        y[i, 1] = a / 3
        b = 1
        k[i, 0] = b * 200
        b = int(x8[i])
        k[i, 1] = b * 100
        c = 3
        k[i, 2] = c * 100
        c = np.int8(x8[i])
        k[i, 3] = c * 3


def test_a_name_assigned_a_call_is_split_too():
    # (a name assigned a call was one variable: `m` int8, so `m * 100` was
    # 16, not Python's 10000; `a / 3` a float32 quotient)
    with np.errstate(all="ignore"):
        got = run_both(python_int_then_max, [np.array([3, 5], np.int8), np.zeros(2)], cpu_opts(),
                       rtol=0, atol=0)
        assert got[1].tolist() == [10000.0, 5.0]
        x8 = np.array([100, -7, 60], np.int8)
        run_both(python_numbers_then_calls,
                 [np.array([0.1, 0.7, 3.3], np.float32), x8, np.zeros((3, 2)),
                  np.zeros((3, 4), np.int64), 3], cpu_opts(), rtol=0, atol=0)


@parpy.jit
def row_scaled_in_place(x, y, N):
    for i in range(N):
        r = x[i]
        r *= 3.0
        y[i] = r[0]


@parpy.jit
def labelled_in_place_update(x, N):
    parpy.label('i')
    x *= 2.0
    x += 1


@parpy.jit
def updated_in_a_loop_then_rebound(x, y, N):
    a = 1
    for i in range(N):
        a += x[i]
    y[0] = a
    a = 2.5
    a *= x[0]
    y[1] = a


def test_augmented_assignment_binds_a_new_value():
    # (the update's float32 was the literal's type too: `acc / 3` was
    # 0.1666666716337204, the int8 product 100 * 100 wrapped to 16)
    x32 = np.array([1.5, -2.25, 0.125], np.float32)
    got = run_both(literal_read_then_float32_update, [x32, np.zeros((3, 2)), 3], cpu_opts(),
                   rtol=0, atol=0)
    assert got[1][0, 0] == 0.5 / 3
    with np.errstate(all="ignore"):
        got = run_both(literal_read_then_int8_update, [np.array([27, -3], np.int8), np.zeros((2, 2), np.int64), 2],
                       cpu_opts(), rtol=0, atol=0)
    assert got[1].tolist() == [[10000, 127], [10000, 97]]
    # an array's update stays in place: a row name, a parameter
    x = np.arange(6.0).reshape(3, 2)
    got = run_both(row_scaled_in_place, [x, np.zeros(3), 3], cpu_opts(), rtol=0, atol=0)
    assert got[0][:, 1].tolist() == [3.0, 9.0, 15.0]
    got = run_both(labelled_in_place_update, [np.arange(4.0), 4], cpu_opts({'i': parpy.threads(4)}))
    assert got[0].tolist() == [1.0, 3.0, 5.0, 7.0]
    run_both(updated_in_a_loop_then_rebound, [np.array([2, 5, -1], np.int16), np.zeros(2), 3], cpu_opts(),
             rtol=0, atol=0)


@parpy.jit
def float32_accumulator(x, y, N):
    acc = 0.0
    for k in range(N):
        acc += x[k]
    y[0] = acc


def test_accumulator_of_float32_is_float32_from_the_start():
    x = np.random.default_rng(1).random(100).astype(np.float32)
    run_both(float32_accumulator, [x, np.zeros(1, np.float32), 100], cpu_opts(), rtol=0, atol=0)


# --- a NumPy value joined with a Python number it does not hold -------------

@parpy.jit
def ternary_big_float(x, y, N):
    for i in range(N):
        a = x[i] if i % 2 == 0 else 1e300
        y[i] = a / 1e290


@parpy.jit
def branch_tiny_float(x, y, N):
    for i in range(N):
        if x[i] > 0.25:
            a = x[i]
        else:
            a = 1e-60
        y[i] = a * 1e60


@parpy.jit
def x_or_big(x, i):
    if i % 2 == 0:
        return x[i]
    return 1e300


@parpy.jit
def helper_big_float(x, y, N):
    for i in range(N):
        y[i] = x_or_big(x, i) / 1e290


@parpy.jit
def ternary_int8_outside(x, y, N):
    for i in range(N):
        a = x[i] if i % 2 == 0 else 1000
        y[i] = a * 100


def test_numpy_value_joined_with_a_python_number_it_rounds_is_an_error():
    # (each gave NaN, or was refused as "NumPy raises OverflowError here")
    x = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    with pytest.raises(parpy.CompileTypeError) as e:
        ternary_big_float(x, np.zeros(4), 4, opts=cpu_opts())
    text = str(e.value)
    assert "a value of type `float32` on one path and the Python float 1e300" in text
    assert "np.float32(1e300)" in text and "x[i] if i % 2 == 0 else 1e300" in text
    with pytest.raises(parpy.CompileTypeError) as e:
        branch_tiny_float(x, np.zeros(4), 4, opts=cpu_opts())
    text = str(e.value)
    assert "`a` is assigned a value of type `float32` on one path and the Python float 1e-60" in text
    assert "a = x[i]" in text and "a = 1e-60" in text
    with pytest.raises(parpy.CompileError, match="returns this Python float on one path"):
        helper_big_float(x, np.zeros(4), 4, opts=cpu_opts())
    with pytest.raises(parpy.CompileTypeError) as e:
        ternary_int8_outside(np.arange(4, dtype=np.int8), np.zeros(4, np.int64), 4, opts=cpu_opts())
    text = str(e.value)
    assert "the Python int 1000 on another, which `int8` does not hold" in text
    assert "NumPy raises OverflowError" not in text


@parpy.jit
def power_of_a_numpy_scalar(x, o, s):
    for i in range(2):
        v = 2.0
        v **= -s
        o[i] = v + x[i]


@parpy.jit
def straight_line_update_stored_into_int8(x, y, N):
    for i in range(N):
        acc = 0.0
        acc += x[i]
        y[i] = acc


def test_an_updated_python_float_is_the_numpy_value_it_became():
    # (`v` stayed the weak Python float: `v + x16[i]` was computed in
    # float16 and gave inf where NumPy's float64 gives 2.9e76)
    with np.errstate(all="ignore"):
        got = run_both(power_of_a_numpy_scalar, [np.array([1.0, -0.0], np.float16), np.zeros(2), np.uint8(2)],
                       cpu_opts(), rtol=0, atol=0)
    assert np.isfinite(got[1]).all()
    # the updated local is NumPy's float64, whose store into an integer
    # array needs a conversion (REFERENCE §3), as `y[i] = x[i]` does
    with pytest.raises(parpy.CompileTypeError, match="cannot store a value of type `f64` into a destination of type `i8`"):
        straight_line_update_stored_into_int8(np.ones(2), np.zeros(2, np.int8), 2, opts=cpu_opts())


# --- a Python bool that then holds NumPy bools is a NumPy bool -----------

@parpy.jit
def bool_or_updated(x, y, N):
    for r in range(N):
        f = False
        for c in range(2):
            f = f | (x[r] > 0)
        y[r] = f + True
        y[r + N] = ~f


@parpy.jit
def bool_aug_updated(x, y, N):
    for r in range(N):
        s = False
        o = False
        for k in range(4):
            s += x[r, k]
            o |= x[r, k]
        y[r, 0] = ~s
        y[r, 1] = ~o
        y[r, 2] = o + o


@parpy.jit
def bool_set_in_branch(x, y, N):
    for r in range(N):
        f = False
        if x[r] != 5:
            f = x[r] > 0
        y[r] = ~f


def test_a_python_bool_updated_with_numpy_bools_is_a_numpy_bool():
    # (`~f` was the int's -1 / -2, `f + f` 2: NumPy's bool gives its
    # logical not and True)
    x = np.array([1, -1, 0])
    y = run_both(bool_or_updated, [x, np.zeros(6, np.int64), 3], cpu_opts())[1]
    assert y.tolist() == [1, 1, 1, 0, 1, 1]
    xb = np.array([[True, True, False, True], [False] * 4])
    y = run_both(bool_aug_updated, [xb, np.zeros((2, 3), np.int64), 2], cpu_opts())[1]
    assert y.tolist() == [[0, 0, 1], [1, 1, 0]]
    y = run_both(bool_set_in_branch, [x, np.zeros(3, np.int64), 3], cpu_opts())[1]
    assert y.tolist() == [0, 1, 1]


# --- a Python literal joined with NumPy values takes their type ----------

@parpy.jit
def float_literal_then_f16(x, y, N):
    for r in range(N):
        t = 0.1
        if x[r] > 1:
            t = x[r]
        y[r] = t * 3


def test_a_python_float_local_then_float16_is_float16():
    # (the float16 path computed `t * 3` in float64: 21.3046875 where
    # NumPy's float16 gives 21.3125)
    x = np.array([7.1, 100.7], np.float16)
    y = run_both(float_literal_then_f16, [x, np.zeros(2), 2], cpu_opts())[1]
    assert y.tolist() == [21.3125, 302.0]


@parpy.jit
def int_literal_then_i8(x, y, N):
    for r in range(N):
        t = 1000
        if x[r] > 1:
            t = x[r]
        y[r] = t * 3


@parpy.jit
def float_literal_then_i8(x, y, N):
    for r in range(N):
        t = 2.0
        if x[r] > 1:
            t = x[r]
        y[r] = t * 100


@parpy.jit
def ternary_i8_or_float(x, y, N):
    for r in range(N):
        y[r] = (x[r] if x[r] > 0 else 1.5) * 100


@parpy.jit
def ternary_i8_or_i16(x, y, N):
    for r in range(N):
        y[r] = (x[r] if x[r] > 0 else np.int16(r)) * 100


@parpy.jit
def ternary_int_or_float(x, y, N):
    for r in range(N):
        y[r] = (1 if r > 1 else 2.5) * x[r] * 2


def _pos_or_half(a):
    if a > 0:
        return a
    return 1.5


@parpy.jit
def helper_i8_or_float(x, y, N):
    for r in range(N):
        y[r] = _pos_or_half(x[r]) * 100


@pytest.mark.parametrize("fn, words", [
    (int_literal_then_i8, "the Python int 1000"),
    (float_literal_then_i8, "the Python float 2.0"),
    (ternary_i8_or_float, "a value of type `int8` on one path and a Python float"),
    (ternary_i8_or_i16, "a value of type `int8` on one path and a value of type `int16`"),
    (ternary_int_or_float, "a Python int on one path and a Python float"),
    (helper_i8_or_float, "`_pos_or_half` returns a value of type `int8`"),
])
def test_values_of_other_types_on_two_paths_are_refused(fn, words):
    # (each was computed in the wider type on both paths: Python's int8
    # path wraps, `(x8[r] if x8[r] > 0 else 1.5) * 100` gave 300 for 44)
    x = np.array([3, -2, 7, 100], np.int8)
    with pytest.raises(parpy.CompileError) as e:
        fn(x, np.zeros(4, np.int64), 4, opts=cpu_opts())
    assert words in str(e.value).splitlines()[0], str(e.value)


@parpy.jit
def ternary_stored(x, k, y, N):
    for r in range(N):
        y[r] = x[r] if x[r] > 0 else k[r]


def test_a_conditional_of_two_types_stored_stores_the_value_chosen():
    x = np.array([3, -2, 7, -100], np.int8)
    k = np.array([1000, 2000, 3000, 4000], np.int16)
    y = run_both(ternary_stored, [x, k, np.zeros(4, np.int64), 4], cpu_opts())[2]
    assert y.tolist() == [3, 2000, 7, 4000]
