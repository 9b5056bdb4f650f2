"""Generator expressions in `sum`, `any`, `all`, `max` and `min` (natural
Python): `sum(x[i, k] * w[k] for k in range(K) if m[k])` runs the loop
Python runs, in Python's order and types, on every backend. Each program
runs as plain Python (the reference) and compiled (conftest.run_both)."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both


@parpy.jit
def generators(x, m, y, N, M):
    k = 7
    parpy.label('i')
    for i in range(N):
        y[i, 0] = sum(x[i, j] * 2.0 for j in range(M))
        y[i, 1] = sum(x[i, j] for j in range(M) if m[j] if j > 0)
        y[i, 2] = max(x[i, j] - x[i, l] for j in range(M) for l in range(1, M))
        y[i, 3] = min(abs(x[i, j]) for j in range(M - 1, -1, -2))
        y[i, 4] = any(x[i, j] > 0.9 for j in range(M)) + 2 * all(x[i, j] > 0.01 for j in range(M))
        y[i, 5] = sum(v * w for v, w in zip(x[i, :], m)) + k
        y[i, 6] = sum(j * v for j, v in enumerate(x[i, ::2]))
        y[i, 7] = sum(x[i, j] * x[l, j] for l in range(N) for j in range(l % M) if l != i)
        y[i, 8] = sum(v for v in reversed(x[i, :])) - max(v for v in range(k, 3, -1))


def test_clauses_conditions_and_iterables():
    x = np.random.default_rng(1).random((6, 5))
    m = np.array([1, 0, 1, 1, 0], np.int32)
    got = run_both(generators, [x, m, np.zeros((6, 9)), 6, 5], cpu_opts({'i': parpy.threads(3)}))
    assert got[2][:, 7].min() > 0


@parpy.jit
def list_comprehensions(x, m, y, N, M):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = sum([x[i, j] * 2.0 for j in range(M)])
        y[i, 1] = max([x[i, j] - x[i, 0] for j in range(1, M)])
        y[i, 2] = min([abs(v) for v in x[i, ::2]])
        y[i, 3] = any([v > 0.9 for v in x[i, :]]) + 2 * all([x[i, j] > 0.01 for j in range(M)])
        y[i, 4] = sum([v * w for v, w in zip(x[i, :], m) if w])
        y[i, 5] = max(v * w for v, w in zip(x[i, :], m)) + min(j - v for j, v in enumerate(x[i, 1:], 2))
        y[i, 6] = max([v for v in reversed(x[i, :3])]) - min([-v for v in x[i, ::-2]])


def test_list_comprehensions_reduce_as_their_generators():
    x = np.random.default_rng(2).random((6, 5))
    m = np.array([1, 0, 1, 1, 0], np.int32)
    run_both(list_comprehensions, [x, m, np.zeros((6, 7)), 6, 5], cpu_opts({'i': parpy.threads(3)}))


@parpy.jit
def stored_lists(x, m, y, k, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0, :] = [x[i, j] * 2.0 for j in range(5)]
        y[i, 1, 0:3] = [x[i, j] + j for j in range(4, -1, -2)]
        y[i, 1, 3:5] = [abs(v) for v in x[i, 3:]]
        parpy.label('j')
        y[i, 2, :] = [a * b for a, b in zip(x[i, :], m)]
        y[i, 3, :] = [j * v for j, v in enumerate(x[i, :], 1)]
        y[i, 3, 0:2] = [v for v in reversed(x[i, 3:])]
        y[i, 4, :] = [sum(x[l, j] for l in range(N)) for j in range(5)]
        k[i, :] = [v * 2 for v in m]


def test_a_list_comprehension_stored_into_a_slice_is_numpys_array_of_it():
    x = np.random.default_rng(3).standard_normal((6, 5))
    m = np.array([1, 0, 3, 4, 0], np.int32)
    run_both(stored_lists, [x, m, np.zeros((6, 5, 5)), np.zeros((6, 5), np.int64), 6],
             cpu_opts({'i': parpy.threads(3), 'j': parpy.threads(2)}))


@parpy.jit
def typed_sums(x, c, n, y, N, M):
    parpy.label('i')
    for i in range(N):
        y[i] = sum(x[i, j] for j in range(M))          # float32, in order
        c[i] = sum(x[i, j] > 0.5 for j in range(M))     # bools count in int64
        n[i] = sum(j * j for j in range(M)) + sum(m for m in range(N) if m % 2) * 1000


def test_sums_add_in_pythons_order_and_types():
    x = np.random.default_rng(2).random((4, 1000)).astype(np.float32)
    y, c, n = np.zeros(4, np.float32), np.zeros(4, np.int64), np.zeros(4, np.int64)
    got = run_both(typed_sums, [x, c, n, y, 4, 1000], cpu_opts({'i': parpy.threads(2)}))
    want = np.float32(0)
    for v in x[3]:
        want = want + v
    assert got[3][3] == want  # bit for bit: one float32 addition after another
    assert got[1][0] == (x[0] > 0.5).sum()


@parpy.jit
def targets_are_their_own(x, y, N, M):
    parpy.label('i')
    for i in range(N):
        j = 2
        s = sum(x[i, j] for j in range(M))
        t = sum(j for j in range(j, 4))   # the range reads the outer j
        y[i] = s + j * 100 + t * 1000


def helper_with_a_generator(x, i, k):
    return sum(x[i, k] * k for k in range(k))


@parpy.jit
def calls_the_helper(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = helper_with_a_generator(x, i, 3)


def test_targets_do_not_touch_outer_names_nor_helper_parameters():
    x = np.random.default_rng(3).random((5, 6))
    run_both(targets_are_their_own, [x, np.zeros(5), 5, 6], cpu_opts({'i': parpy.threads(5)}))
    run_both(calls_the_helper, [x, np.zeros(5), 5], cpu_opts({'i': parpy.threads(5)}))


@parpy.jit
def generator_as_a_value(x, y, N):
    with parpy.gpu:
        g = (x[j] for j in range(N))
        y[0] = 1.0


@parpy.jit
def numpy_sum_of_a_generator(x, y, N):
    with parpy.gpu:
        y[0] = np.sum(x[j] for j in range(N))


@parpy.jit
def max_with_a_condition(x, y, N):
    with parpy.gpu:
        y[0] = max(x[j] for j in range(N) if x[j] > 0.5)


@parpy.jit
def max_of_an_empty_range(x, y, N):
    with parpy.gpu:
        y[0] = max(x[j] for j in range(N, 2))


@parpy.jit
def list_comprehension_as_a_value(x, y, N):
    with parpy.gpu:
        t = [x[j] for j in range(N)]
        y[0] = t[0]


@parpy.jit
def numpy_sum_of_a_list_comprehension(x, y, N):
    with parpy.gpu:
        y[0] = np.sum([x[j] for j in range(N)])


@parpy.jit
def stored_list_with_a_condition(x, y, N):
    with parpy.gpu:
        y[:] = [v for v in x if v > 0]


@parpy.jit
def stored_list_of_another_length(x, y, N):
    with parpy.gpu:
        y[:] = [v for v in x[1:]]


@parpy.jit
def stored_list_reading_its_target(x, y, N):
    with parpy.gpu:
        y[0:1] = [y[j] * 2.0 for j in range(1)]


@parpy.jit
def indexed_list_comprehension(x, y, N):
    with parpy.gpu:
        y[0] = [j * 2.0 for j in range(3)][1]


@parpy.jit
def indexed_list_stored_first(x, y, N):
    with parpy.gpu:
        t = np.empty(3)
        t[:] = [j * 2.0 for j in range(3)]
        y[0] = t[1]


@pytest.mark.parametrize("fn,words", [
    (indexed_list_comprehension, "a list comprehension cannot be indexed"),
    (generator_as_a_value, "a generator expression can only be the argument of `sum`"),
    (stored_list_with_a_condition, "a list comprehension stored into a slice takes no `if`"),
    (stored_list_of_another_length, "could not broadcast input array from shape (3,) into shape (1,)"),
    (stored_list_reading_its_target, "a list comprehension stored into a slice reads `y`, which it writes"),
    (list_comprehension_as_a_value, "a list comprehension can only be the argument of `sum`"),
    (numpy_sum_of_a_list_comprehension, "`np.sum` of a list comprehension is not supported"),
    (numpy_sum_of_a_generator, "`np.sum` does not take a generator expression"),
    (max_with_a_condition, "`max` of a generator needs to know when compiling that it is not empty"),
    (max_of_an_empty_range, "`max` of a generator needs to know when compiling that it is not empty"),
])
def test_what_cannot_be_compiled_is_a_located_error(fn, words):
    with pytest.raises(parpy.CompileError) as e:
        fn(np.ones(4), np.zeros(1), 4, opts=cpu_opts())
    assert words in str(e.value), str(e.value)
    assert "test_generators.py" in str(e.value)


def test_an_indexed_list_comprehension_is_named_with_a_fix_that_compiles():
    with pytest.raises(parpy.CompileError) as e:
        indexed_list_comprehension(np.ones(4), np.zeros(1), 4, opts=cpu_opts())
    text = str(e.value)
    assert "only array parameters" not in text, text
    assert "t[:] = [... for j in range(n)]" in text, text
    # the fix the message suggests
    y = np.zeros(1)
    indexed_list_stored_first(np.ones(4), y, 4, opts=cpu_opts())
    assert y[0] == 2.0


@parpy.jit
def max_over_n(x, y, N):
    with parpy.gpu:
        y[0] = max(x[j] for j in range(N))


def test_a_max_over_a_range_known_only_at_run_time_is_an_error():
    opts = cpu_opts()
    opts.specialize_scalars = False
    with pytest.raises(parpy.CompileError, match="not a `range` known to be non-empty"):
        max_over_n(np.ones(4), np.zeros(1), 4, opts=opts)
    # specialized (the default), `N` is known and the range is not empty
    y = np.zeros(1)
    max_over_n(np.arange(4.0), y, 4, opts=cpu_opts())
    assert y[0] == 3.0


def test_generators_compile_for_cuda_and_metal():
    x = np.zeros((6, 5), np.float32)
    codes = check_gpu_code(generators, lambda _: [x, np.zeros(5, np.float32), np.zeros((6, 9), np.float32), 6, 5],
                           {'i': parpy.threads(6)}, "generators")
    for code in codes.values():
        assert "sum_1" in code, code


# --------------------------------------------------------------------------
# Reductions and generators under `and`, `or` and `a if c else b` run only
# where Python evaluates them (they were hoisted unconditionally: a read
# Python skips raised a spurious IndexError)


@parpy.jit
def guarded_reductions(x, y, N, M):
    parpy.label('i')
    for i in range(N):
        if i < N - 1 and sum(x[i + 1, j] for j in range(M)) > 1.0:
            y[i, 0] = 1.0
        if i == 0 or parpy.operators.max(x[i - 1, :]) > 0.5:
            y[i, 1] = 2.0
        y[i, 2] = parpy.operators.sum(x[i + 1, :]) if i < N - 1 else -parpy.operators.sum(x[i - 1, :])
        y[i, 3:5] = x[i, :2] * (parpy.operators.sum(x[i + 1, :]) if i < N - 1 else 0.5)
        y[i, 5:] = np.where(x[i, :2] > 0.5, x[i, :2].sum(), 1.0)


def test_reductions_under_and_or_and_if_else_run_only_where_python_evaluates_them():
    x = np.random.default_rng(8).random((4, 5))
    run_both(guarded_reductions, [x, np.zeros((4, 7)), 4, 5], cpu_opts({'i': parpy.threads(4)}))
