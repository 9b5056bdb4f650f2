"""Helpers that return from several places, as Python allows: a pair from an
`if` and from the end, a pair from both branches of an `if`/`else`, a value
from inside `while True:`. parpy refused them ("a tuple cannot be stored in
one variable", "this helper returns a value here but may end without
`return`", though every path returns). Also a uint64 literal written out
(`0x8000000000000000`), refused as "does not fit in 64 bits"."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both


@parpy.jit
def ordered(a, b):
    if a < b:
        return a, b
    return b, a


@parpy.jit
def ordered_else(a, b):
    if a < b:
        return a, b
    else:
        return b, a


@parpy.jit
def pick(a, b):
    if a < b:
        return a
    elif a > b + 1.0:
        return b
    else:
        return a + b


@parpy.jit
def first_step(a):
    k = 0
    while True:
        if a * k > 1.0:
            return k
        k += 1


def _use_helpers(x, y, N):
    parpy.label('i')
    for i in range(N):
        lo, hi = ordered(x[i, 0], x[i, 1])
        y[i, 0] = lo
        y[i, 1] = hi
        lo, hi = ordered_else(x[i, 1], x[i, 2])
        y[i, 2] = hi - lo
        y[i, 3] = pick(x[i, 0], x[i, 2])
        y[i, 4] = first_step(abs(x[i, 0]) + 0.1)


def test_helpers_that_return_from_several_places():
    x = np.random.default_rng(7).standard_normal((6, 3))
    got = [x, np.zeros((6, 5)), 6]
    ref = [x, np.zeros((6, 5)), 6]
    parpy.jit(_use_helpers)(*got, opts=cpu_opts({'i': parpy.threads(6)}))
    g = dict(_use_helpers.__globals__)
    for h in (ordered, ordered_else, pick, first_step):
        g[h.py_func.__name__] = h.py_func
    type(_use_helpers)(_use_helpers.__code__, g)(*ref)
    np.testing.assert_array_equal(got[1], ref[1])


@parpy.jit
def maybe(a):
    if a > 0.0:
        return a
    # Python returns None here


def _use_maybe(x, y):
    with parpy.gpu:
        y[0] = maybe(x[0])


def test_a_helper_that_may_end_without_return_is_still_refused():
    with pytest.raises(parpy.CompileError, match="may end without `return`"):
        parpy.jit(_use_maybe)(np.ones(1), np.zeros(1), opts=cpu_opts())


T = parpy.types.type_var()


@parpy.jit
def halve_static_type(v: T) -> T:
    if parpy.builtin.static_types_eq(T, parpy.types.F32):
        return v / parpy.builtin.convert(2, T)
    else:
        return v * parpy.builtin.convert(2, T)


@parpy.jit
def halve_static_backend(v):
    if parpy.builtin.static_backend_eq(parpy.CompileBackend.Cpu):
        return v / 2.0
    else:
        return v * 2.0


@parpy.jit
def halve_static_false(v: T):
    if parpy.builtin.static_types_eq(T, parpy.types.F64):
        return v / 2.0
    else:
        return v * 2.0


@pytest.mark.parametrize("helper, want", [
    (halve_static_type, [0.5, 1.0, 1.5, 2.0]),
    (halve_static_backend, [0.5, 1.0, 1.5, 2.0]),
    (halve_static_false, [2.0, 4.0, 6.0, 8.0]),
], ids=["types_eq", "backend_eq", "types_eq_false"])
def test_a_compile_time_if_whose_branches_both_return(helper, want):
    # the branch taken is compiled alone (`if True:` without `else`): it
    # returns on every path, which the check for a missing `return` missed
    @parpy.jit
    def use(x, N):
        parpy.label('N')
        for i in range(N):
            x[i] = helper(x[i])

    x = np.arange(1, 5, dtype=np.float32)
    use(x, 4, opts=cpu_opts({'N': parpy.threads(4)}))
    np.testing.assert_array_equal(x, want)


def _top_bits(a, y, N):
    for i in range(N):
        y[i, 0] = (a[i] & 0x8000000000000000) != 0
        y[i, 1] = a[i] ^ 0xFFFFFFFFFFFFFFFF
        y[i, 2] = a[i] < 9223372036854775808


def test_uint64_literals_past_int64():
    a = np.array([0, 1, 2**63, 2**64 - 1], np.uint64)
    got = [a, np.zeros((4, 3), np.uint64), 4]
    ref = [a, np.zeros((4, 3), np.uint64), 4]
    parpy.jit(_top_bits)(*got, opts=cpu_opts())
    _top_bits(*ref)
    np.testing.assert_array_equal(got[1], ref[1])


@parpy.jit
def _positive_or_tenth(a):
    if a > 0:
        return a
    return 0.1


@parpy.jit
def _positive_or_tenth_of_row(r, k):
    # (a row argument: inlined)
    if r[k] > 0:
        return r[k]
    return 0.1


@parpy.jit
def _use_tenths(x, y, N):
    for i in range(N):
        y[i, 0] = _positive_or_tenth(x[i, 0])
        y[i, 1] = _positive_or_tenth_of_row(x[i], 1)
        s = x[i, 2]
        if s <= 0:
            s = 0.1
        y[i, 2] = s


def test_a_helper_returning_float32_and_a_python_float_is_float32_as_a_local_is():
    # (docs/natural-python.md: a local or a helper's result that holds a
    # float32 on one path and a Python float on another is float32, the
    # float rounded; the helper was refused: "`float32` does not hold it")
    x = np.array([[1.5, -2.5, 0.25], [-1.0, 3.0, -4.0]], np.float32)
    y = np.zeros((2, 3), np.float32)
    _use_tenths(x, y, 2, opts=cpu_opts())
    want = np.array([[1.5, np.float32(0.1), 0.25], [np.float32(0.1), 3.0, np.float32(0.1)]],
                    np.float32)
    assert np.array_equal(y, want)
    # the plain run stores the same into float32
    ref = np.zeros((2, 3), np.float32)
    _use_tenths.py_func(x, ref, 2)
    assert np.array_equal(ref, want)


@parpy.jit
def pair_and_nested_pair(v):
    return v, v * 2, (v + 1, v - 1)


@parpy.jit
def deeply_nested(v):
    return v, (v * 2, (v + 1, v - 1))


@parpy.jit
def unpacks_nested_results(x, y, N):
    parpy.label('i')
    for i in range(N):
        a, b, (c, d) = pair_and_nested_pair(x[i])
        e, (f, (g, h)) = deeply_nested(x[i] + 1)
        y[i, 0] = a + b * 10 + c * 100 + d * 1000
        y[i, 1] = e + f * 10 + g * 100 + h * 1000


def test_a_helpers_nested_tuple_unpacks_into_nested_targets():
    # (refused at decoration: "nested tuple targets are not supported")
    x = np.arange(5.0)
    for spec in ({}, {'i': parpy.threads(2)}):
        y = np.zeros((5, 2))
        unpacks_nested_results(x, y, 5, opts=cpu_opts(spec))
        want = np.zeros((5, 2))
        unpacks_nested_results.py_func(x, want, 5)
        assert y.tolist() == want.tolist()


@parpy.jit
def nested_into_a_name(x, y, N):
    for i in range(N):
        a, b, cd = pair_and_nested_pair(x[i])
        y[i] = a + b


@parpy.jit
def nested_miscounted(x, y, N):
    for i in range(N):
        a, b, (c, d, e) = pair_and_nested_pair(x[i])
        y[i] = a + b


@parpy.jit
def nested_item_indexed(x, y, N):
    for i in range(N):
        y[i] = pair_and_nested_pair(x[i])[3]


@parpy.jit
def nested_targets_of_divmod(x, y, N):
    for i in range(N):
        a, (b, c) = divmod(x[i], 2.0)
        y[i] = a


@pytest.mark.parametrize("fn, message", [
    (nested_into_a_name, "a tuple cannot be stored in one variable"),
    (nested_miscounted, "cannot unpack 2 values into 3 targets"),
    (nested_item_indexed, "an item of a nested tuple a helper returns cannot be indexed"),
    (nested_targets_of_divmod, "cannot unpack one value into 2 targets"),
])
def test_what_a_nested_tuple_cannot_be_is_one_located_error(fn, message):
    with pytest.raises(parpy.CompileError) as e:
        fn(np.arange(4.0), np.zeros(4), 4, opts=cpu_opts())
    text = str(e.value)
    assert text.splitlines()[0] == f"error: {message}", text
    assert text.count("error:") == 1, text
    assert "test_helper_returns.py:" in text


def _find_for_else(row, t):
    for i in range(3):
        if row[i] == t:
            return i
    else:
        return -1


def _find_while_else(row, t):
    i = 0
    while i < 3:
        if row[i] == t:
            return i
        i += 1
    else:
        return -1


@parpy.jit
def find_with_loop_else(x, y, N):
    for r in range(N):
        y[r] = _find_for_else(x[r], 2)
        y[r + N] = _find_while_else(x[r], 1)


def test_a_loop_else_that_returns_ends_every_path():
    # (with no `break`, the `else:` runs whenever the loop ends: it was
    # refused as "may end without `return`")
    x = np.array([[0, 2, 1], [3, 3, 3]])
    y = run_both(find_with_loop_else, [x, np.zeros(4, np.int64), 2], cpu_opts())[1]
    assert y.tolist() == [1, -1, 2, -1]
