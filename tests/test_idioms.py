"""Natural Python that users write inside jit functions: a helper that
returns another helper's tuple (`return qr(a, b)`), nested tuple targets of
a tuple literal (`p, (q, r) = 7, qr(9, 4)`), Python's `max` / `min` of
numbers with `key=` (the first of equal keys wins; a NaN key never
replaces nor is replaced), a chained assignment of a new array
(`la = lb = np.zeros(3)`: two names for one array, as in Python),
NumPy's `initial=` of `np.max` / `np.min` / `np.sum` and their methods
(an empty slice gives the initial value) and their `where=` (the masked
elements added to the identity or reduced from `initial=`), Python's `sorted` of a tuple
or list literal of a few numbers (`a, b, c = sorted((x, y, z))`,
`key=`, `reverse=`: CPython's run detection and binary insertion, so NaN
lands where CPython puts it). Each gives the answer of the undecorated function on NumPy arrays
(tests/test_cuda_programs.py runs these on the CUDA emulator too)."""

import sys

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both


@parpy.jit
def quot_rem(a, b):
    return a // b, a % b


@parpy.jit
def quot_rem_of(a, b):
    return quot_rem(a, b)


@parpy.jit
def with_quot_rem(a, b):
    return a + b, quot_rem(a, b)


@parpy.jit
def passes_on_tuples(x, y, N):
    parpy.label('i')
    for i in range(N):
        q, r = quot_rem_of(x[i], 4)
        s, (q2, r2) = with_quot_rem(x[i], 3)
        y[i, 0] = q
        y[i, 1] = r
        y[i, 2] = s
        y[i, 3] = q2 * 10 + r2
        y[i, 4] = quot_rem_of(x[i], 5)[1]


@pytest.mark.parametrize("dt", [np.int64, np.int32, np.float64], ids=lambda t: t.__name__)
def test_a_helper_returns_another_helpers_tuple(dt):
    x = np.arange(-7, 9).astype(dt)
    got = run_both(passes_on_tuples, [x, np.zeros((16, 5), dt), 16], cpu_opts({'i': parpy.threads(16)}))
    want = np.zeros((16, 5), dt)
    passes_on_tuples.py_func(x, want, 16)
    assert got[1].tolist() == want.tolist()


@parpy.jit
def nested_targets(x, y, N):
    parpy.label('i')
    for i in range(N):
        p, (q, r) = 7, quot_rem(x[i], 4)
        (a, b), (c, d) = (x[i], 2), divmod(x[i], 3)
        y[i, 0] = p + q * 10 + r
        y[i, 1] = a - b
        y[i, 2] = c * 10 + d


def test_nested_targets_of_a_tuple_literal():
    x = np.arange(-5, 11)
    got = run_both(nested_targets, [x, np.zeros((16, 3), np.int64), 16], cpu_opts({'i': parpy.threads(16)}))
    want = np.zeros((16, 3), np.int64)
    nested_targets.py_func(x, want, 16)
    assert got[1].tolist() == want.tolist()


@parpy.jit
def square(v):
    return v * v


@parpy.jit
def keyed_extremes(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = max(x[i], x[i + 1], key=abs)
        y[i, 1] = min(x[i], x[i + 1], key=abs)
        y[i, 2] = max(x[i], x[i + 1], x[i + 2], key=np.abs)
        y[i, 3] = min(x[i], -x[i + 1], x[i + 2], key=square)
        y[i, 4] = max(x[i], 2, key=abs)


@pytest.mark.parametrize("x", [
    [3.0, -4.0, 4.0, -3.0, 2.0, -2.0, np.nan, 1.0, -0.0, 0.0, np.nan, 5.0],
    [3, -4, 4, -3, 2, -2, 1, 0, -1, 1, 2, -2],
], ids=["floats", "ints"])
def test_max_and_min_with_a_key_are_pythons(x):
    x = np.array(x)
    got = run_both(keyed_extremes, [x, np.zeros((10, 5), x.dtype), 10], cpu_opts({'i': parpy.threads(10)}))
    want = np.zeros((10, 5), x.dtype)
    keyed_extremes.py_func(x, want, 10)
    np.testing.assert_array_equal(got[1], want)
    assert np.signbit(got[1]).tolist() == np.signbit(want).tolist()


@parpy.jit
def chained_new_arrays(x, y, z, N):
    parpy.label('i')
    for i in range(N):
        a = b = c = np.zeros(4, np.float32)
        a[0] = x[i, 0]
        b[1] = 2.0 * x[i, 1]
        c[2] += a[0] + b[1]
        y[i, :] = c
        d = e = x[i, :] * 2.0
        d[0] = -1.0
        z[i, :] = e


def test_a_chained_assignment_of_a_new_array_names_one_array():
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    out = lambda: [np.zeros((3, 4), np.float32), np.zeros((3, 4), np.float32)]
    got = run_both(chained_new_arrays, [x, *out(), 3], cpu_opts({'i': parpy.threads(3)}))
    want = out()
    chained_new_arrays.py_func(x, *want, 3)
    assert got[1].tolist() == want[0].tolist() and got[2].tolist() == want[1].tolist()
    assert got[1][0].tolist() == [0.0, 2.0, 2.0, 0.0]


@parpy.jit
def reductions_with_initial(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = x[i, :].max(initial=0.5)
        y[i, 1] = np.max(x[i, :], initial=3)
        y[i, 2] = x[i, :].min(initial=-0.5)
        y[i, 3] = np.sum(x[i, :], initial=100.0)
        y[i, 4] = x[i, 1:3].sum(initial=-2)
        y[i, 5] = x[i, 0:0].max(initial=5.0)
        y[i, 6] = np.sum(x[i, 2:2], initial=7.0)
        y[i, 7] = np.min(x[i, 3:1], initial=-3)


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int32, np.int8], ids=lambda t: t.__name__)
def test_initial_of_max_min_and_sum_is_numpys(dt):
    x = (np.random.default_rng(4).standard_normal((4, 5)) * 4).astype(dt)
    if x.dtype.kind == "f":
        x[1, 2] = np.nan
    ydt = np.float64 if x.dtype.kind == "f" else np.int64
    got = run_both(reductions_with_initial, [x, np.zeros((4, 8), ydt), 4], cpu_opts({'i': parpy.threads(4)}))
    want = np.zeros((4, 8), ydt)
    reductions_with_initial.py_func(x, want, 4)
    np.testing.assert_array_equal(got[1], want)


def test_an_initial_python_int_the_type_cannot_hold_is_numpys_overflow_error():
    # (before: cast as C casts, -5 became 251 for uint8)
    def max_below(x, y, N):
        parpy.label('i')
        for i in range(N):
            y[i] = x[i, :].max(initial=-5)

    def sum_from(x, y, v, N):
        parpy.label('i')
        for i in range(N):
            y[i] = np.sum(x[i, :], initial=v)

    x = np.arange(6, dtype=np.uint8).reshape(2, 3)
    opts = cpu_opts({'i': parpy.threads(2)})
    with pytest.raises(OverflowError, match="Python integer -5 out of bounds for uint8"):
        max_below(x, np.zeros(2, np.uint8), 2)
    with pytest.raises(parpy.CompileError, match="Python integer -5 out of bounds for uint8"):
        parpy.jit(max_below)(x, np.zeros(2, np.uint8), 2, opts=opts)
    # a sum of uint8 adds in uint64: 300 fits, a negative int does not
    sums = parpy.jit(sum_from)
    y = np.zeros(2, np.uint64)
    sums(x, y, 300, 2, opts=opts)
    assert y.tolist() == [303, 312]
    with pytest.raises(OverflowError):
        sum_from(x, np.zeros(2, np.uint64), -5, 2)
    opts.specialize_scalars = False
    with pytest.raises(OverflowError, match="out of bounds for uint64"):
        sums(x, np.zeros(2, np.uint64), -5, 2, opts=opts)


@parpy.jit
def reductions_with_where(x, m, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.sum(x[i, :], where=m[i, :])
        y[i, 1] = x[i, :].max(initial=1, where=m[i, :])
        y[i, 2] = np.min(x[i, :], initial=7, where=m[i, :])
        y[i, 3] = x[i, 1:4].sum(where=m[i, 1:4], initial=2)
        y[i, 4] = np.sum(x[i, :], where=x[i, :] > 0)
        y[i, 5] = np.max(x[i, 2:2], initial=3, where=m[i, 2:2])
        y[i, 6] = np.max(x[i, :], initial=0, where=True)


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.float16, np.int32, np.int8, np.uint8, np.bool_],
                         ids=lambda t: t.__name__)
def test_where_of_sum_max_and_min_is_numpys(dt):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((40, 6)) * 5).astype(dt)
    m = rng.random((40, 6)) < 0.5
    m[2, :] = True
    if x.dtype.kind == "f":
        x[1, 2] = x[3, 4] = np.nan
        x[2, :] = -0.0
    ydt = {"f": dt, "b": np.int64, "i": np.int64, "u": np.uint64}[x.dtype.kind]
    got = run_both(reductions_with_where, [x, m, np.zeros((40, 7), ydt), 40], cpu_opts({'i': parpy.threads(40)}))
    want = np.zeros((40, 7), ydt)
    reductions_with_where.py_func(x, m, want, 40)
    # (NumPy adds the masked elements to the identity: -0.0 alone is 0.0)
    assert np.signbit(got[2]).tolist() == np.signbit(want).tolist()
    if x.dtype.kind != "f":
        assert got[2].tolist() == want.tolist()


@parpy.jit
def sorted_scalars(x, y, N):
    parpy.label('i')
    for i in range(N):
        a, b, c = sorted((x[i, 0], x[i, 1], x[i, 2]))
        y[i, 0] = a
        y[i, 1] = b
        y[i, 2] = c
        y[i, 3], y[i, 4], y[i, 5], y[i, 6] = sorted([x[i, 3], x[i, 0], x[i, 4], x[i, 1]], reverse=True)
        y[i, 7] = sorted((x[i, 0], x[i, 1], x[i, 2], x[i, 3], x[i, 4]), key=abs)[1]
        y[i, 8] = sorted((x[i, 4], x[i, 2], x[i, 0]), key=square, reverse=True)[-1]
        p, (q, r) = x[i, 0], sorted([x[i, 1], 1])
        y[i, 9] = p + q * 2 - r
        y[i, 10] = sorted((x[i, 2],))[0]
        y[i, 11] = sorted((x[i, 0], x[i, 1], x[i, 2], x[i, 3], x[i, 4], x[i, 0], x[i, 1], x[i, 2]))[5]


# CPython 3.13 changed its run detection, which moves a NaN (parpy follows
# CPython 3.10 to 3.12, docs/natural-python.md); without NaN every version
# sorts alike
_SORT_BEFORE_3_13 = pytest.mark.skipif(
    sys.version_info >= (3, 13), reason="parpy sorts a NaN where CPython 3.10 to 3.12 do")


@pytest.mark.parametrize("vals", [
    pytest.param([1.0, -1.0, np.nan, 0.0, -0.0, 2.0, 0.5], marks=_SORT_BEFORE_3_13),
    [1.0, -1.0, 0.0, -0.0, 2.0, 0.5],
    [3, -3, 0, 1, -1, 2],
], ids=["floats", "floats_without_nan", "ints"])
def test_sorted_of_a_few_numbers_is_pythons(vals):
    # (CPython's order: a NaN sorts where its run detection and binary
    # insertion put it; -0.0 and 0.0 and equal keys keep their order)
    x = np.random.default_rng(7).choice(np.array(vals), size=(300, 5))
    got = run_both(sorted_scalars, [x, np.zeros((300, 12), x.dtype), 300], cpu_opts({'i': parpy.threads(64)}))
    want = np.zeros((300, 12), x.dtype)
    sorted_scalars.py_func(x, want, 300)
    np.testing.assert_array_equal(got[1], want)
    assert np.signbit(got[1]).tolist() == np.signbit(want).tolist()


@_SORT_BEFORE_3_13
def test_sorted_of_three_floats_is_pythons_for_every_order():
    vals = [1.0, -1.0, np.nan, 0.0, -0.0]
    three = np.array([[a, b, c] for a in vals for b in vals for c in vals])
    n = len(three)
    x = np.concatenate([three, three[::-1, :2]], axis=1)
    got = run_both(sorted_scalars, [x, np.zeros((n, 12)), n], cpu_opts({'i': parpy.threads(n)}))
    want = np.zeros((n, 12))
    sorted_scalars.py_func(x, want, n)
    np.testing.assert_array_equal(got[1], want)
    assert np.signbit(got[1]).tolist() == np.signbit(want).tolist()


@parpy.jit
def unpacks_three(x, y):
    a, b, c = quot_rem_of(x[0], 4)
    y[0] = a + b + c


@parpy.jit
def stores_a_pair(x, y):
    p, q = 7, quot_rem_of(x[0], 4)
    y[0] = p


@parpy.jit
def initial_with_an_axis(x, y):
    y[:] = x.max(axis=1, initial=0.0)


@parpy.jit
def sorted_of_a_row(x, y):
    a, b, c = sorted(x[:])
    y[0] = a


@parpy.jit
def stores_a_sorted_list(x, y):
    y[0] = sorted((x[0], x[1]))


@parpy.jit
def sorted_with_a_run_time_reverse(x, y):
    y[0] = sorted((x[0], x[1]), reverse=x[0] > 0)[0]


@parpy.jit
def sorted_of_nine(x, y):
    y[0] = sorted((x[0], x[0], x[0], x[0], x[0], x[0], x[0], x[0], x[0]))[0]


@parpy.jit
def sorted_with_a_positional_key(x, y):
    y[0] = sorted((x[0], x[1]), abs)[0]


@parpy.jit
def max_where_without_initial(x, y):
    y[0] = np.max(x[:], where=x[:] > 0)


@parpy.jit
def sum_where_with_an_axis(x, y):
    y[:] = np.sum(x, axis=1, where=x > 0)


@pytest.mark.parametrize("fn, message", [
    (unpacks_three, "cannot unpack 2 values into 3 targets"),
    (max_where_without_initial, "`np.max` with `where=` needs `initial=`"),
    (sum_where_with_an_axis, "`np.sum` with `where=` takes an array or a slice, without `axis`"),
    (sorted_of_a_row, "`sorted` takes a tuple or list literal of at most 8 numbers in parpy functions"),
    (sorted_of_nine, "`sorted` takes a tuple or list literal of at most 8 numbers in parpy functions"),
    (sorted_with_a_positional_key, "`sorted` takes a tuple or list literal of at most 8 numbers"),
    (stores_a_sorted_list, r"`sorted` gives a list of its items: unpack or index it where it is called"),
    (sorted_with_a_run_time_reverse, "`sorted`'s `reverse=` takes a bool known when compiling"),
    (initial_with_an_axis, r"`\.max\(\)` with `initial=` takes an array or a slice whose length is known when compiling, without `axis`"),
    (stores_a_pair, "`quot_rem_of` returns 2 values: unpack them where it is called"),
])
def test_what_an_idiom_cannot_be_is_a_located_error(fn, message):
    with pytest.raises(parpy.CompileError, match=message) as e:
        fn(np.arange(3), np.zeros(3, np.int64), opts=cpu_opts())
    assert "test_idioms.py" in str(e.value)


def test_idioms_compile_for_cuda_and_metal():
    args = lambda backend: [np.arange(16, dtype=np.int32), np.zeros((16, 5), np.int32), 16]
    check_gpu_code(passes_on_tuples, args, {'i': parpy.threads(16)}, "passes_on_tuples")
    args = lambda backend: [np.arange(16, dtype=np.int32), np.zeros((16, 3), np.int32), 16]
    check_gpu_code(nested_targets, args, {'i': parpy.threads(16)}, "nested_targets")
    args = lambda backend: [np.arange(12, dtype=np.float32), np.zeros((10, 5), np.float32), 10]
    check_gpu_code(keyed_extremes, args, {'i': parpy.threads(10)}, "keyed_extremes")
    args = lambda backend: [np.zeros((3, 4), np.float32), np.zeros((3, 4), np.float32),
                            np.zeros((3, 4), np.float32), 3]
    check_gpu_code(chained_new_arrays, args, {'i': parpy.threads(3)}, "chained_new_arrays")
    args = lambda backend: [np.zeros((4, 5), np.float32), np.zeros((4, 8), np.float32), 4]
    check_gpu_code(reductions_with_initial, args, {'i': parpy.threads(4)}, "reductions_with_initial")
    args = lambda backend: [np.zeros((4, 6), np.float32), np.zeros((4, 6), np.bool_), np.zeros((4, 7), np.float32), 4]
    check_gpu_code(reductions_with_where, args, {'i': parpy.threads(4)}, "reductions_with_where")
    args = lambda backend: [np.zeros((6, 5), np.float32), np.zeros((6, 12), np.float32), 6]
    check_gpu_code(sorted_scalars, args, {'i': parpy.threads(6)}, "sorted_scalars")
