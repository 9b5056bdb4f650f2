"""List literals where NumPy reads them as arrays: `y[i, :3] = [a, b, c]`,
`x[i, :3] * [1.0, 2.0, 0.5]`, `v = np.array([a, b, c])` (`dtype=` too, or a
tuple), `np.zeros([2, 2])`; a list's type is NumPy's (Python ints int64,
floats float64, bools bool, with the items' types promoted). Each program
runs as plain Python (the reference) and compiled (conftest.run_both),
compared bit for bit."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both

N, M = 5, 8


def _x(seed, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal((N, M)).astype(dtype)


@parpy.jit
def list_operands(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0:3] = [x[i, 0], 1.0, 2]
        y[i, 3:6] = x[i, 3:6] * [1.0, 2.0, 0.5]
        y[i, 6] = sum([x[i, 0], x[i, 1], x[i, 2]])
        y[i, 7] = max([x[i, 0], x[i, 1], x[i, 2]]) + np.mean([x[i, 0], x[i, 5]])


def test_a_list_is_an_operand_of_array_expressions():
    # (a list of float32 items and Python floats is float64, as in NumPy)
    run_both(list_operands, [_x(1), np.zeros((N, M)), N], cpu_opts({'i': parpy.threads(N)}),
             rtol=0, atol=0)


@parpy.jit
def named_lists(x, y, N):
    parpy.label('i')
    for i in range(N):
        v = np.array([x[i, 0], x[i, 1], x[i, 2]])
        w = np.array((x[i, 3], 2.0, 3.0), dtype=np.float32)
        u = np.array([x[i, 4], x[i, 5], 0.0])
        u[2] = x[i, 7]
        u /= np.sqrt(np.sum(u * u))
        t = np.zeros([2, 2])
        t[0, :] = [1, 2]
        y[i, 0] = np.sum(v * v)
        y[i, 1:4] = v * w
        y[i, 4] = v[1] + w[-1]
        y[i, 5:8] = u + t[0, 1]


def test_a_named_list_is_an_array_and_can_be_written():
    run_both(named_lists, [_x(2), np.zeros((N, M)), N], cpu_opts({'i': parpy.threads(N)}),
             rtol=0, atol=0)


@parpy.jit
def typed_lists(x, k, b, N):
    parpy.label('i')
    for i in range(N):
        k[i, :] = np.array([1, 2, 3]) * i
        b[i, :] = [True, x[i, 0] > 0, False]


def test_a_list_has_numpys_type():
    k = np.zeros((N, 3), np.int64)
    b = np.zeros((N, 3), bool)
    run_both(typed_lists, [_x(3), k, b, N], cpu_opts({'i': parpy.threads(N)}), rtol=0, atol=0)


@parpy.jit
def list_loops(x, y, N):
    parpy.label('i')
    for i in range(N):
        for w in [x[i, 0], x[i, 1]]:
            y[i, 0] += w
        for k, w in enumerate((0.25, 0.5, 0.25)):
            y[i, 1 + k] = w * x[i, k]
        for a, b in zip(x[i, :3], [1, 2, 3]):
            y[i, 4] += a * b
        for k, w in enumerate([x[i, 5], x[i, 6]]):
            y[i, 5 + k] = w * 2
        y[i, 7] = sum([x[i, 0], x[i, 1], x[i, 2]]) + max([x[i, 3], x[i, 4]])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_loop_over_a_list_reads_its_items_as_python_does(dtype):
    # Python numbers stay Python numbers (float32 * 0.25 is float32)
    run_both(list_loops, [_x(5, dtype), np.zeros((N, M), dtype), N],
             cpu_opts({'i': parpy.threads(N)}), rtol=0, atol=0)


@parpy.jit
def reductions_of_numbers(x, k, b, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.sum(x[i, 0])
        y[i, 1] = np.max(x[i, 1])
        y[i, 2] = np.mean(k[i, 0])
        y[i, 3] = np.var(x[i, 2])
        y[i, 4] = x[i, 3].sum()
        y[i, 5] = np.std(x[i, 4] * 2.0)
        z[i, 0] = np.sum(k[i, 1])
        z[i, 1] = np.sum(b[i, 0])
        z[i, 2] = np.argmax(x[i, 0])
        z[i, 3] = np.prod(k[i, 2])


def test_a_numpy_reduction_of_a_number_is_that_of_its_0d_array():
    # (a one-item list: `np.sum` of an int32 is an int64, `np.mean` of an
    # int a float64, `np.var` of NaN is NaN); it said "contains no slice"
    x = _x(6)
    x[1, 2], x[2, 4] = np.nan, np.inf
    k = (np.abs(_x(7)) * 100).astype(np.int32)
    b = _x(8) > 0
    run_both(reductions_of_numbers, [x, k, b, np.zeros((N, 6)), np.zeros((N, 4), np.int64), N],
             cpu_opts({'i': parpy.threads(N)}), rtol=0, atol=0)


@parpy.jit
def list_loop_of_mixed_types(x, y, N):
    for i in range(N):
        for w in [x[i, 0], 0.5]:
            y[i, 0] += w


@parpy.jit
def list_loop_reading_a_written_array(x, y, N):
    for i in range(N):
        for k, w in enumerate([x[i, 1], x[i, 0]]):
            x[i, k] = w * 2.0


@parpy.jit
def list_as_a_number(x, y, N):
    for i in range(N):
        y[i] = [x[i, 0], 1.0]


@parpy.jit
def list_of_arrays(x, y, N):
    for i in range(N):
        y[i, :] = np.sum([x[i, :], x[i, :]])


@parpy.jit
def empty_list(x, y, N):
    for i in range(N):
        y[i, 0:0] = []


@parpy.jit
def sum_of_an_empty_list(x, y, N):
    for i in range(N):
        # (was a panic: the type check of the list's items read item 0)
        t = []
        y[i] = sum(t) + x[i, 0]


@parpy.jit
def loop_over_empty_lists(x, y, N):
    for i in range(N):
        # (was a panic: the loop's element chose among no items)
        for a, b in zip([], []):
            y[i] = a + b


@parpy.jit
def list_repeated(x, y, N):
    for i in range(N):
        # (Python: a list of 4 items, which does not fit; not `2 * v`)
        v = [x[i, 0], x[i, 1]]
        y[i, 0:2] = v * 2


@parpy.jit
def lists_joined(x, y, N):
    for i in range(N):
        y[i, 0:2] = [x[i, 0], 1.0] + [x[i, 1], 2.0]


@parpy.jit
def list_plus_a_number(x, y, N):
    for i in range(N):
        v = [x[i, 0], x[i, 1]]
        v += 1.0
        y[i, 0:2] = -v


@parpy.jit
def nested_list(x, y, N):
    for i in range(N):
        k = np.array([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0]])
        y[i, 0] = k[1, 0] * x[i, 0]


def test_a_nested_list_says_so_and_its_fixes_compile():
    # (it was "a list of arrays", with a help to store each array into a
    # row of an array argument: the items were lists of numbers)
    with pytest.raises(parpy.CompileError) as e:
        nested_list(_x(4), np.zeros((N, M)), N, opts=cpu_opts())
    text = str(e.value)
    assert text.splitlines()[0] == (
        "error: a nested list (a 2-D array literal) is not supported in parpy functions"), text
    assert "a tuple of tuples" in text and "k = np.empty((2, 3))" in text, text
    run_both(nested_list_as_tuples, [_x(4), np.zeros((N, M)), N], cpu_opts())


@parpy.jit
def nested_list_as_tuples(x, y, N):
    for i in range(N):
        K = ((-1.0, 0.0, 1.0), (-2.0, 0.0, 2.0))
        k = np.empty((2, 3))
        k[0, :] = [-1.0, 0.0, 1.0]
        k[1, :] = [-2.0, 0.0, 2.0]
        for a in range(3):
            y[i, a] = K[1][a] * x[i, 0] + k[1, a]


def test_sum_of_an_empty_list_is_pythons_0():
    # (`t = []; sum(t)` was the located error "an empty list is an array
    # without elements", before that a panic; Python's sum gives the int 0)
    run_both(sum_of_an_empty_list, [np.ones((N, M)), np.zeros(N), N], cpu_opts())


@pytest.mark.parametrize("fn,message", [
    (list_repeated, "`*` of a Python list is not NumPy's elementwise operation"),
    (lists_joined, "`+` of a Python list is not NumPy's elementwise operation"),
    (list_plus_a_number, "`+=` of a Python list is not NumPy's elementwise operation"),
    (list_as_a_number, "a list is an array in parpy functions, read by an array expression"),
    (list_of_arrays, "a list of arrays is not supported in parpy functions"),
    (empty_list, "an empty list is an array without elements"),
    (loop_over_empty_lists, "a loop over an empty list never runs"),
    (list_loop_of_mixed_types,
     "the items of the list of this loop are of different types: float64 and a Python float"),
    (list_loop_reading_a_written_array,
     "the list of this loop reads `x`, which changes in the function"),
])
def test_what_a_list_cannot_be_is_a_located_error(fn, message):
    y = np.zeros((N, M)) if fn in (list_of_arrays, empty_list) else np.zeros(N)
    with pytest.raises(parpy.CompileError) as e:
        fn(_x(4), y, N, opts=cpu_opts())
    assert str(e.value).splitlines()[0] == "error: " + message, str(e.value)
    assert "test_lists.py:" in str(e.value), str(e.value)


@parpy.jit
def list_times_a_local_array(x, y, N):
    parpy.label('i')
    for i in range(N):
        v = [x[i, 0], x[i, 1]]
        w = x[i, 2:4]
        # (NumPy's elementwise product: `w` is an array, which the check of
        # list operators cannot see before the body binds it)
        y[i, 0:2] = v * w + [1.0, 2.0] * x[i, 0:2]


def test_a_list_with_an_array_operand_is_elementwise():
    run_both(list_times_a_local_array, [_x(4), np.zeros((N, M)), N],
             cpu_opts({'i': parpy.threads(N)}))


@parpy.jit
def python_number_items(x, y, z, w, u, N):
    parpy.label('i')
    for i in range(N):
        c = [0.1, 0.7, 0.2]
        acc = 0.0
        for k in range(3):
            acc += c[k] * x[i, k]
        y[i] = acc
        z[i] = x[i, 0] * c[1] + [0.3, 0.9][1]
        w[i] = 0.0
        for v in c:
            w[i] += x[i, 2] * v
        # (a slice of the list is NumPy's float64 array: a float64 product)
        u[i, :] = x[i, 0:2] * c[1:3]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_the_items_of_a_list_of_python_numbers_are_python_numbers(dtype):
    # (were float64 NumPy values: a float32 row times `c[k]` was float64,
    # refused as a narrowing store)
    x = _x(5, dtype)
    out = [np.zeros(N, dtype) for _ in range(3)]
    run_both(python_number_items, [x, *out, np.zeros((N, 2)), N],
             cpu_opts({'i': parpy.threads(N)}))


@parpy.jit
def mixed_items_at_known_indices(x, y, N):
    parpy.label('i')
    for i in range(N):
        c = [x[i, 0], 0.1]
        # (each item as Python reads it: a float32 value, a Python float)
        y[i] = c[1] * x[i, 1] + c[0] + [x[i, 2], 3][-1] * x[i, 3]


def test_an_item_of_a_list_of_several_types_at_a_known_index_is_that_item():
    x = _x(6, np.float32)
    run_both(mixed_items_at_known_indices, [x, np.zeros(N), N], cpu_opts({'i': parpy.threads(N)}))


@parpy.jit
def numpy_array_items(x32, x8, y, k, N):
    parpy.label('i')
    for i in range(N):
        # (NumPy's array of Python floats is float64: its elements are
        # np.float64 values, not Python floats, so the products are float64)
        v = np.array([3.0, 0.1])
        y[i, 0] = v[0] * x32[i, 0]
        t = v[1]
        y[i, 1] = t * x32[i, 1]
        w = np.array([v[1], v[0]])
        y[i, 2] = w[1] * x32[i, 2]
        # (a float32 value and a Python float: a float64 array)
        u = np.array([x32[i, 0], 3.0])
        y[i, 3] = u[1] * x32[i, 3]
        y[i, 4] = np.array([0.1, 0.7])[1] * x32[i, 4]
        s = np.array([0.1, 0.2])
        s[0] = 0.3
        y[i, 5] = s[0] * x32[i, 5]
        # (a Python list's items are Python numbers: float32 products)
        c = [3.0, 0.5]
        y[i, 6] = c[0] * x32[i, 6]
        # (NumPy's array of Python ints is int64, of a bool and an int too)
        a = np.array([3, 100])
        k[i, 0] = a[1] * x8[i, 0]
        b = np.array([True, 3])
        k[i, 1] = b[0] * x8[i, 1] * 100
        d = np.array([True, False])
        k[i, 2] = d[0] + x8[i, 2]
        # (`in` NumPy's array compares its float64 elements: False)
        y[i, 7] = (x32[i, 7] * 0.0 + np.float32(0.1)) in np.array([0.1, 0.7])


def test_the_elements_of_an_array_of_python_numbers_are_numpy_values():
    # (were read as Python numbers: `v[0] * x32[i, 0]` was a float32
    # product, `a[1] * x8[i, 0]` an int8 one)
    x32 = _x(7, np.float32)
    x8 = np.random.default_rng(8).integers(-100, 100, (N, M)).astype(np.int8)
    with np.errstate(over="ignore"):
        run_both(numpy_array_items, [x32, x8, np.zeros((N, M)), np.zeros((N, 3), np.int64), N],
                 cpu_opts({'i': parpy.threads(N)}), rtol=0, atol=0)


@parpy.jit
def python_list_reductions(x32, y, N):
    parpy.label('i')
    for i in range(N):
        # (Python's sum, max, min of Python floats are Python floats: the
        # products are float32)
        y[i, 0] = sum([3.0, 0.1]) * x32[i, 0]
        y[i, 1] = max([0.3, 0.1]) * x32[i, 1]
        c = [0.3, 0.7]
        y[i, 2] = min(c) * x32[i, 2] + sum(c) * x32[i, 3]
        # (of NumPy's float64 array: float64 products)
        y[i, 3] = sum(np.array([3.0, 0.1])) * x32[i, 4]


def test_sum_min_max_of_a_list_of_python_numbers_are_python_numbers():
    # (`sum` of a Python list was a float64 value: a float64 product)
    run_both(python_list_reductions, [_x(9, np.float32), np.zeros((N, 4)), N],
             cpu_opts({'i': parpy.threads(N)}), rtol=0, atol=0)


@parpy.jit
def item_of_another_type_stored(x, y, N):
    for i in range(N):
        c = [0.1, 0.2]
        c[1] = x[i, 1]
        y[i] = x[i, 0] * c[1] + c[0]


@parpy.jit
def python_int_stored_into_floats(x, y, N):
    for i in range(N):
        c = [0.1, 0.2]
        c[0] += 1
        c[1] = 3
        y[i] = x[i, 0] * c[1]


@parpy.jit
def mixed_items_at_a_run_time_index(x, y, N):
    for i in range(N):
        c = [x[i, 0], 0.1]
        y[i] = c[i % 2] * x[i, 1]


@pytest.mark.parametrize("fn,message", [
    # (was float64: a different sum in the last bits, silently)
    (item_of_another_type_stored,
     "storing float32 into an item of the list `c`, whose items are Python floats, makes that item float32 in Python"),
    (python_int_stored_into_floats,
     "storing a Python int into an item of the list `c`, whose items are Python floats, makes that item a Python int in Python"),
    (mixed_items_at_a_run_time_index,
     "the items of this list are of different types, and this reads one"),
])
def test_what_python_reads_as_items_of_other_types_is_a_located_error(fn, message):
    with pytest.raises(parpy.CompileError) as e:
        fn(_x(7, np.float32), np.zeros(N), N, opts=cpu_opts())
    assert str(e.value).splitlines()[0] == "error: " + message, str(e.value)
    assert "test_lists.py:" in str(e.value), str(e.value)


@parpy.jit
def tuple_reductions(x, k, y, j, b, N):
    parpy.label('i')
    for i in range(N):
        # (Python's `min` / `max` of a tuple are of its items; `sum` adds
        # them to 0 one at a time, each in its own type)
        y[i] = min((x[i, 0],)) + max((x[i, 0], x[i, 1], 0.5)) + sum((x[i, 2], x[i, 3]))
        j[i] = sum((k[i, 0], k[i, 1], 3))
        b[i] = any((x[i, 0] > 0, x[i, 1] > 1)) and all((x[i, 2] > -2, x[i, 3] < 2))


def test_min_max_sum_any_all_of_a_tuple():
    # (were refused: "`min` takes at least 2 arguments", "a tuple can only
    # be the value of an assignment")
    x = _x(9)
    k = np.random.default_rng(9).integers(-9, 9, (N, M))
    run_both(tuple_reductions, [x, k, np.zeros(N), np.zeros(N, np.int64), np.zeros(N, bool), N],
             cpu_opts({'i': parpy.threads(N)}), rtol=0, atol=0)


@parpy.jit
def local_tuples(x, k, y, N):
    parpy.label('i')
    for i in range(N):
        # (a local name of a tuple reads as the tuple literal did: was "a
        # tuple cannot be stored in one variable")
        w = (0.25, 0.5, 0.25)
        pair = (x[i, 0], x[i, 1])
        offsets = ((0, 1), (1, 0), (-1, 2))
        s = 0.0
        for dy, dx in offsets:
            s += x[(i + dy) % N, 3 + dx]
        a, b = pair
        y[i, 0] = (x[i, :3] * w).sum() + w[k[i]] + len(w)
        y[i, 1] = s + a * b - max(pair) + sum(w) + offsets[2][1] * offsets[-1][0]
        y[i, 2] = k[i] in (0, 2)


def test_a_local_tuple_reads_as_python_does():
    k = np.array([0, 1, 2, -1, -3])
    got = run_both(local_tuples, [_x(30), k, np.zeros((N, 3)), N],
                   cpu_opts({'i': parpy.threads(N)}))
    assert list(got[2][:, 2]) == [1.0, 0.0, 1.0, 0.0, 0.0]


@parpy.jit
def tuple_item_stored(x, y, N):
    for i in range(N):
        t = (x[i, 0], x[i, 1])
        t[0] = 2.0
        y[i] = t[0]


@parpy.jit
def tuple_appended(x, y, N):
    for i in range(N):
        t = (x[i, 0], x[i, 1])
        t.append(2.0)
        y[i] = t[0]


@pytest.mark.parametrize("fn, exc, message", [
    (tuple_item_stored, TypeError, "'tuple' object does not support item assignment"),
    (tuple_appended, AttributeError, "'tuple' object has no attribute 'append'"),
])
def test_changing_a_local_tuple_is_pythons_error(fn, exc, message):
    with pytest.raises(exc, match=message):
        fn.py_func(_x(31), np.zeros(N), N)
    with pytest.raises(parpy.CompileError, match=message):
        fn(_x(31), np.zeros(N), N, opts=cpu_opts())


@parpy.jit
def swap_first_two(x):
    x[:2] = x[1], x[0]


@parpy.jit
def tuple_into_row(y, a, b, N):
    for i in range(N):
        y[i, :] = a[i], b[i], a[i] + b[i]


def test_a_tuple_stored_into_a_slice_is_the_sequence_of_its_items():
    # (was "a tuple cannot be stored in one variable")
    run_both(swap_first_two, [np.array([1.0, 2.0, 3.0])], cpu_opts())
    run_both(tuple_into_row, [np.zeros((2, 3)), np.array([1.0, 2.0]), np.array([3.0, 4.0]), 2],
             cpu_opts())


@parpy.jit
def arrays_rebound(x, n, m, y, k, b, N):
    for i in range(N):
        w = np.array([1.0, 0.0])
        w = np.array([w[0] * x[i], w[1] + x[i]])
        y[i, :] = w
        v = np.array([1, 2])
        v = np.array([v[0] * n[i], v[1] + n[i]])
        k[i, :] = v
        t = np.array([True, False])
        t = np.array([t[0] & m[i], t[1] | m[i]])
        b[i, :] = t


def test_an_array_of_a_list_rebound_to_another_of_its_type():
    # (np.array of Python floats, ints, bools is a float64, int64, bool
    # array: was "the items of the list `w` are of different types", with
    # a help suggesting the code as written)
    run_both(arrays_rebound, [_x(40)[:, 0], np.arange(N), np.arange(N) % 2 == 0,
                              np.zeros((N, 2)), np.zeros((N, 2), np.int64),
                              np.zeros((N, 2), bool), N], cpu_opts(), rtol=0, atol=0)


@parpy.jit
def array_items_are_numpy_values(x32, y, N):
    for i in range(N):
        w = np.array([3.0, 0.5])
        w = np.array([w[1], w[0]])
        # (an element of NumPy's float64 array: float64 * float32 is
        # float64, not the float32 of a Python float's product)
        y[i] = w[1] * x32[i]


def test_the_elements_of_an_array_of_python_floats_are_float64_values():
    run_both(array_items_are_numpy_values, [_x(41, np.float32)[:, 0], np.zeros(N), N],
             cpu_opts(), rtol=0, atol=0)


@parpy.jit
def complex_power(zr, zi, out, N):
    for i in range(N):
        w = (1.0, 0.0)
        for p in range(5):
            w = (w[0] * zr[i] - w[1] * zi[i], w[0] * zi[i] + w[1] * zr[i])
        out[i, 0] = w[0]
        out[i, 1] = w[1]


@parpy.jit
def cmul(a, b):
    return a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]


@parpy.jit
def complex_power_of_tuple_arguments(zr, zi, out, N):
    for i in range(N):
        wr, wi = 1.0, 0.0
        for p in range(5):
            wr, wi = cmul((wr, wi), (zr[i], zi[i]))
        out[i, 0] = wr
        out[i, 1] = wi


def test_a_local_tuple_of_python_floats_rebound_to_float64_values():
    # (Python holds float64 items from the first re-binding on, as a local
    # first assigned a Python float and then float64 values: was "the
    # items of the list `w` are of different types")
    args = [_x(42)[:, 0], _x(43)[:, 0], np.zeros((N, 2)), N]
    run_both(complex_power, args, cpu_opts(), rtol=0, atol=0)
    # (tuples passed to a helper: were "a tuple can only be the value of
    # an assignment", with a help to unpack them)
    run_both(complex_power_of_tuple_arguments, args, cpu_opts(), rtol=0, atol=0)


@parpy.jit
def tuple_rebound_to_float32(zr, out, N):
    for i in range(N):
        w = (1.0, 0.0)
        w = (w[0] * zr[i], w[1] * zr[i])
        out[i, 0] = w[0]


@parpy.jit
def tuple_rebound_to_float32_fixed(zr, out, N):
    for i in range(N):
        w = (np.float32(1.0), np.float32(0.0))
        w = (w[0] * zr[i], w[1] * zr[i])
        out[i, 0] = w[0]


def test_a_local_tuple_rebound_to_another_type_says_tuple_and_the_types():
    x = _x(44, np.float32)[:, 0].copy()
    with pytest.raises(parpy.CompileError) as e:
        tuple_rebound_to_float32(x, np.zeros((N, 1), np.float32), N, opts=cpu_opts())
    text = str(e.value)
    assert "`w` is re-bound to a tuple of items of another type" in text, text
    assert "item 0 is float32 here and a Python float where first bound" in text, text
    # (the fix the help gives compiles and is Python's)
    run_both(tuple_rebound_to_float32_fixed, [x, np.zeros((N, 1), np.float32), N], cpu_opts())
