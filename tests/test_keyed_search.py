"""Python's `max(iterable, key=f, default=d)` and `min(...)` of one iterable
(a `range`, of run-time bounds too, a 1-D slice, a tuple, a generator
expression), `key=` a builtin, a jit helper, a lambda or a local lambda or
nested function: CPython's search (the first item of the greatest / least
key, a NaN key never replacing nor, if first, replaced; each key computed
once; ValueError "max() iterable argument is empty" for no items, the
default with `default=`), bit for bit against the undecorated function."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, module_from_source, run_both
from test_assert import expect_raised

TIES = [3.0, -4.0, 4.0, -3.0, np.nan, 2.0, -2.0, 1.0, -0.0, 0.0, np.nan, 5.0, -5.0, 0.5]


@parpy.jit
def dist(a, b):
    return abs(a - b)


@parpy.jit
def argmax_by_key(d, y, N, M):
    parpy.label('i')
    for i in range(N):
        # the classic argmax idiom, and the nearest index
        y[i, 0] = max(range(M), key=lambda j: d[i, j])
        y[i, 1] = min(range(M), key=lambda j: d[i, j])
        y[i, 2] = min(range(1, M - 1), key=lambda j: abs(d[i, j] - d[i, 0]))
        y[i, 3] = max(range(M - 1, -1, -1), key=lambda j: abs(d[i, j]))
        y[i, 4] = max((j for j in range(M) if d[i, j] < 2.0), key=lambda j: d[i, j], default=-1)
        y[i, 5] = min(range(M), key=lambda j: dist(d[i, j], 1.5))


def test_the_argmax_idiom_is_pythons():
    d = np.array([TIES, TIES[::-1], [np.nan] * len(TIES), [1.0] * len(TIES)])
    y = np.zeros((4, 6), np.int64)
    got = run_both(argmax_by_key, [d, y, 4, len(TIES)], cpu_opts({'i': parpy.threads(4)}))
    want = np.zeros((4, 6), np.int64)
    argmax_by_key.py_func(d, want, 4, len(TIES))
    assert got[1].tolist() == want.tolist()


@parpy.jit
def magnitudes(x, y, N, M):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = max(x[i, :], key=abs)
        y[i, 1] = min(x[i, :], key=abs)
        y[i, 2] = min((x[i, j] for j in range(M)), key=abs)
        y[i, 3] = max(x[i, 1:], key=np.abs)
        y[i, 4] = max(x[i, 1:1], default=x[i, 0])
        y[i, 5] = min((x[i, j] * 2 for j in range(M) if x[i, j] > 100), key=abs, default=x[i, 1])


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int32])
def test_the_item_of_largest_magnitude_is_pythons_bit_for_bit(dt):
    rows = [TIES, TIES[::-1], [np.nan] * len(TIES), [-0.0, 0.0] * (len(TIES) // 2)]
    x = np.array(rows)
    if dt == np.int32:
        x = np.nan_to_num(x, nan=-3.0)
    x = x.astype(dt)
    got = run_both(magnitudes, [x, np.zeros((4, 6), dt), 4, len(TIES)], cpu_opts({'i': parpy.threads(4)}))
    want = np.zeros((4, 6), dt)
    magnitudes.py_func(x, want, 4, len(TIES))
    np.testing.assert_array_equal(got[1], want)
    assert np.signbit(got[1]).tolist() == np.signbit(want).tolist()


@parpy.jit
def between(d, y, N, lo, hi):
    parpy.label('i')
    for i in range(N):
        y[i] = max(range(lo, hi), key=lambda j: d[i, j])


@parpy.jit
def between_or_default(d, y, N, lo, hi):
    key = lambda j: -d[i, j]
    parpy.label('i')
    for i in range(N):
        y[i] = min(range(lo, hi), key=key, default=-7)


def test_run_time_bounds_and_an_empty_range_raise_pythons_error():
    d = np.array([TIES, TIES[::-1]])
    opts = cpu_opts({'i': parpy.threads(2)}, specialize_scalars=False)
    for lo, hi in [(0, 14), (3, 9), (5, 6)]:
        got = run_both(between, [d, np.zeros(2, np.int64), 2, lo, hi], opts)
        want = np.zeros(2, np.int64)
        between.py_func(d, want, 2, lo, hi)
        assert got[1].tolist() == want.tolist()
    for lo, hi in [(0, 14), (4, 4), (9, 2)]:
        got = run_both(between_or_default, [d, np.zeros(2, np.int64), 2, lo, hi], opts)
        want = np.zeros(2, np.int64)
        between_or_default.py_func(d, want, 2, lo, hi)
        assert got[1].tolist() == want.tolist()
    expect_raised(between, [d, np.zeros(2, np.int64), 2, 4, 4], opts, ValueError,
                  "max() iterable argument is empty")


@parpy.jit
def negated(v):
    return -v


@parpy.jit
def keys_once(x, y, N):
    def key(v):
        return -v

    parpy.label('i')
    for i in range(N):
        y[i, 0] = max((x[i, j] for j in range(4)), key=key)
        y[i, 1] = min(range(0), key=key, default=x[i, 0])
        y[i, 2] = max((1, 3, 2), key=lambda v: v % 3)
        y[i, 3] = max(x[i, :], key=negated)
        y[i, 4] = min(range(4), key=lambda j: x[i, j], default=9)


def test_a_nested_function_and_a_tuple_are_pythons():
    x = np.array([[1.0, -2.0, 3.0, -2.0], [np.nan, 1.0, -1.0, 0.0]])
    opts = cpu_opts({'i': parpy.threads(2)})
    got = run_both(keys_once, [x, np.zeros((2, 5)), 2], opts)
    want = np.zeros((2, 5))
    keys_once.py_func(x, want, 2)
    np.testing.assert_array_equal(got[1], want)


def test_keyed_searches_compile_for_cuda_and_metal():
    args = lambda backend: [np.zeros((4, 14), np.float32), np.zeros((4, 6), np.int32), 4, 14]
    check_gpu_code(argmax_by_key, args, {'i': parpy.threads(4)}, "argmax_by_key")
    args = lambda backend: [np.zeros((4, 14), np.float32), np.zeros((4, 6), np.float32), 4, 14]
    check_gpu_code(magnitudes, args, {'i': parpy.threads(4)}, "magnitudes")


@parpy.jit
def labelled_search(d, y):
    for i in range(3):
        parpy.label('j')
        y[i] = max(range(4), key=lambda j: d[i, j])


@parpy.jit
def default_of_two(x, y):
    y[0] = max(x[0], x[1], default=0.0)


@parpy.jit
def iterable_of_rows(x, y):
    y[0] = max(x, key=abs)


@pytest.mark.parametrize("fn, message", [
    (labelled_search, "`max` runs sequentially and takes no label"),
    (default_of_two, r"Cannot specify a default for max\(\) with multiple positional arguments"),
    (iterable_of_rows, "takes numbers"),
])
def test_what_a_keyed_search_cannot_be_is_a_located_error(fn, message):
    with pytest.raises(parpy.CompileError, match=message) as e:
        fn(np.ones((3, 4)), np.zeros(3), opts=cpu_opts())
    assert "test_keyed_search.py" in str(e.value)


@pytest.mark.parametrize("body, message", [
    ("y[0] = max(range(3), key=lambda a, b: a)",
     "the `key=` lambda of `max` or `min` takes one plain parameter"),
    ("f = lambda a, b: a\n    y[0] = max(range(3), key=f)",
     "`f` takes 2 positional arguments but 1 was given"),
    ("y[0] = sorted((x[0], x[1]), key=lambda v: -v)[0]", "lambda expressions"),
])
def test_what_a_key_function_cannot_be_is_a_located_error(tmp_path, body, message):
    text = f"import parpy\n\n@parpy.jit\ndef f_(x, y):\n    {body}\n"
    with pytest.raises(parpy.CompileError, match=message) as e:
        module_from_source(tmp_path, "keyed_bad", text)
    assert "keyed_bad.py" in str(e.value)


@parpy.jit
def between_in_a_slice(x, y, lo, hi):
    y[0] = max(x[0, lo:hi], key=abs)


def test_a_slice_of_run_time_bounds_is_a_located_error():
    # (specialized bounds are known when compiling: Python's answer)
    x = np.array([[3.0, -4.0, 4.0, -0.0]])
    got = run_both(between_in_a_slice, [x, np.zeros(1), 1, 4], cpu_opts())
    assert got[1].tolist() == [-4.0]
    with pytest.raises(parpy.CompileError, match="a slice bound must be a compile-time constant") as e:
        between_in_a_slice(x, np.zeros(1), 1, 4, opts=cpu_opts(specialize_scalars=False))
    assert "test_keyed_search.py" in str(e.value)
