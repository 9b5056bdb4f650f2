"""Membership tests, `a in b` and `a not in b`: of a tuple or a list (each
item compared with `==`), of a `range` (its bounds, its step's direction
and its step: a float is in a range only at an integer), of an array (NumPy's
`(b == a).any()`). The result is a Python bool. Compared with plain
Python."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both

N = 6


@parpy.jit
def memberships(k, x, t, f, N):
    parpy.label('i')
    for i in range(N):
        t[i, 0] = k[i, 0] in (1, 2, 3)
        t[i, 1] = k[i, 0] not in [0, -2]
        t[i, 2] = k[i, 1] in range(N)
        t[i, 3] = k[i, 1] in range(-4, 9, 3)
        t[i, 4] = k[i, 1] in range(8, -5, -2)
        t[i, 5] = k[i, 2] in k[(i + 1) % N, :]
        t[i, 6] = 3 not in k[i, :]
        t[i, 7] = x[i, 0] in range(5)
        # (a Python bool: 1 + True is 2)
        f[i] = (k[i, 0] in (1, 2)) + 0.5 * (x[i, 1] in (0, 1.5))


@parpy.jit
def first_stop(k, y, N):
    parpy.label('i')
    for i in range(N):
        j = 0
        while k[i, j] not in (0, 1) and j < 7:
            j += 1
        y[i] = j


@parpy.jit
def unsigned_in_ranges(u, t, N):
    parpy.label('i')
    for i in range(N):
        # (the step's test on the values, as Python's ints: no uint16 less a
        # negative Python int, which NumPy refuses; fuzz cases such as 7067)
        t[i, 0] = u[i, 0] in range(5, -1, -2)
        t[i, 1] = u[i, 1] not in range(-4, 9, 3)
        t[i, 2] = u[i, 2] in (-1, 3, 7)


def test_an_unsigned_value_in_a_range_with_negative_bounds():
    u = np.random.default_rng(8).integers(0, 10, (N, 3)).astype(np.uint16)
    run_both(unsigned_in_ranges, [u, np.zeros((N, 3), bool), N], cpu_opts({'i': parpy.threads(N)}))


def test_membership_in_tuples_lists_ranges_and_arrays():
    rng = np.random.default_rng(3)
    k = rng.integers(-5, 9, (N, 8))
    x = np.round(rng.uniform(-1, 5, (N, 8)) * 2) / 2  # halves and integers
    run_both(memberships, [k, x, np.zeros((N, 8), bool), np.zeros(N), N],
             cpu_opts({'i': parpy.threads(N)}))
    run_both(first_stop, [k, np.zeros(N, np.int64), N], cpu_opts({'i': parpy.threads(N)}))


@parpy.jit
def in_a_number(k, t, N):
    for i in range(N):
        t[i] = 1 in k[i, 0]


@parpy.jit
def in_a_range_of_unknown_step(k, t, N):
    for i in range(N):
        t[i] = k[i, 0] in range(0, 9, k[i, 1])


@pytest.mark.parametrize("fn,message", [
    (in_a_number, "`in` tests a tuple, a list, a `range` or an array in parpy functions"),
    (in_a_range_of_unknown_step,
     "the step of a `range` an `in` tests must be a non-zero integer written in the code"),
])
def test_what_in_cannot_test_is_a_located_error(fn, message):
    k = np.ones((N, 8), np.int64)
    with pytest.raises(parpy.CompileError) as e:
        fn(k, np.zeros(N, bool), N, opts=cpu_opts())
    assert str(e.value).splitlines()[0] == "error: " + message, str(e.value)
    assert "test_membership.py:" in str(e.value), str(e.value)


def test_an_in_chained_with_comparisons_is_refused_at_decoration():
    with pytest.raises(parpy.CompileError) as e:
        @parpy.jit
        def in_a_chain(k, t, N):
            for i in range(N):
                t[i] = 0 < k[i, 0] in (1, 2)
    assert "`in` tests chained with comparisons are not supported" in str(e.value)
