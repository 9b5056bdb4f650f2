"""The same array passed for two parameters is one array under both names,
as in Python (`Options::same_arrays`: a specialization of its own); views
that only partly overlap one another, where one is written, are a
ValueError. Each program is compared with plain Python called with the same
aliasing (run_both copies each argument, which would undo it)."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts


@parpy.jit
def shift(x, y, N):
    parpy.label('i')
    y[1:N] = x[:N - 1]


@parpy.jit
def reverse(x, y, N):
    parpy.label('i')
    y[:N] = x[N - 1::-1]


@parpy.jit
def transpose(x, y, N):
    parpy.label('i')
    y[:, :] = x.T


@parpy.jit
def square(x, y, N):
    parpy.label('i')
    y[:, :] = x @ x


@parpy.jit
def normalize_rows(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = x[i, :] / x[i, :].sum()


@parpy.jit
def axpy(a, x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = a * x[i] + y[i]


@parpy.jit
def shift_left(x, y, N):
    parpy.label('i')
    for i in range(N - 1):
        y[i] = x[i + 1]


def opts():
    return cpu_opts({'i': parpy.threads(4)})


def same_twice(fn, make, *scalars):
    """`fn(a, a)` compiled against the same call in Python."""
    want, got = make(), make()
    fn.py_func(*scalars[:-1], want, want, scalars[-1])
    fn(*scalars[:-1], got, got, scalars[-1], opts=opts())
    np.testing.assert_array_equal(got, want)
    return got


@pytest.mark.parametrize("fn,make", [
    (shift, lambda: np.arange(6.0)),
    (reverse, lambda: np.arange(7.0)),
    (transpose, lambda: np.arange(9.0).reshape(3, 3)),
    (square, lambda: np.arange(1.0, 10.0).reshape(3, 3)),
    (normalize_rows, lambda: np.arange(1.0, 13.0).reshape(3, 4)),
])
def test_the_same_array_twice_gives_pythons_answer(fn, make):
    # these read what they overwrite: separate arrays in the compiled code
    # gave [0 0 0 0 0 0] for the shift, a half-transposed matrix, garbage
    # for the product
    n = make().shape[0]
    same_twice(fn, make, n)


def test_an_update_in_place_through_two_names_runs_in_parallel():
    got = same_twice(axpy, lambda: np.arange(1000.0), 2.0, 1000)
    np.testing.assert_array_equal(got, 3 * np.arange(1000.0))


def test_separate_and_same_arrays_are_separate_specializations():
    # the aliasing is part of the cache key: each call gets its own code
    a, b = np.arange(6.0), np.zeros(6)
    shift(a, b, 6, opts=opts())
    assert b.tolist() == [0, 0, 1, 2, 3, 4]
    c = np.arange(6.0)
    shift(c, c, 6, opts=opts())
    assert c.tolist() == [0, 0, 1, 2, 3, 4]
    d, e = np.arange(6.0), np.full(6, 9.0)
    shift(d, e, 6, opts=opts())
    assert e.tolist() == [9, 0, 1, 2, 3, 4] and d.tolist() == list(range(6))


def test_a_race_that_the_one_array_makes_is_refused_and_says_why():
    a = np.arange(8.0)
    with pytest.raises(parpy.CompileError,
                       match="reads elements of `x` that other iterations write") as e:
        shift_left(a, a, 8, opts=opts())
    assert e.value.__notes__ == [
        "in this call `x` and `y` are the same array, which parpy compiles as one array "
        "under both names"]
    b = np.zeros(8)
    shift_left(a, b, 8, opts=opts())
    assert b.tolist() == [1, 2, 3, 4, 5, 6, 7, 0]


def test_partly_overlapping_views_are_a_value_error():
    base = np.arange(7.0)
    with pytest.raises(ValueError, match=r"arguments `x` and `y` of `shift` overlap in memory "
                       r"\(views of one buffer\), and `shift` writes `y`.*`x.copy\(\)`"):
        shift(base[:6], base[1:], 6, opts=opts())
    assert base.tolist() == list(range(7))
    # a view of another shape at the same address is not the same array
    m = np.arange(9.0)
    with pytest.raises(ValueError, match="`x` and `y` of `reverse` overlap in memory"):
        reverse(m, m[:8], 8, opts=opts())


def test_arrays_only_read_may_overlap():
    @parpy.jit
    def add(x, z, y, N):
        parpy.label('i')
        for i in range(N):
            y[i] = x[i] + z[i]

    base = np.arange(7.0)
    y = np.zeros(6)
    add(base[:6], base[1:], y, 6, opts=opts())
    assert y.tolist() == [1, 3, 5, 7, 9, 11]


def test_compile_string_refuses_the_same_array_twice(tmp_path):
    # printed code is for separate arrays, whatever the call that printed it
    o = cpu_opts({'i': parpy.threads(4)})
    a = np.arange(6.0)
    code = parpy.print_compiled(axpy, [2.0, a, np.zeros(6), 6], o)
    f = parpy.compile_string("axpy", code, o)
    with pytest.raises(ValueError, match="arguments `x` and `y` of `axpy` overlap in memory"):
        f(2.0, a, a, 6)
    y = np.ones(6)
    f(2.0, a, y, 6)
    assert y.tolist() == (2 * np.arange(6.0) + 1).tolist()


# a local array expression (`e = x * 2.0`, computed where it is used) must
# not move past a write through the other name of its array


@parpy.jit
def doubled_after_write(x, z, y):
    e = x * 2.0
    z[0] = 100.0
    y[:] = e


@parpy.jit
def through_a_helper(a, y):
    doubled_after_write(a, a, y)


def test_an_array_expression_read_before_a_write_through_the_other_name():
    # (gave [200 2 4 6]: `e` was computed after `z[0] = 100.0`)
    a, y = np.arange(4.0), np.zeros(4)
    doubled_after_write(a, a, y, opts=opts())
    assert y.tolist() == [0.0, 2.0, 4.0, 6.0] and a[0] == 100.0
    a, y = np.arange(4.0), np.zeros(4)
    through_a_helper(a, y, opts=opts())
    assert y.tolist() == [0.0, 2.0, 4.0, 6.0] and a[0] == 100.0


def test_print_compiled_shows_the_code_of_the_same_array_twice():
    # the code printed is the code a call with these arguments runs: one
    # array under both names
    a = np.arange(4.0)
    code = parpy.print_compiled(doubled_after_write, [a, a, np.zeros(4)], opts())
    assert "doubled_after_write(double *x, double *y)" in code, code
    code = parpy.print_compiled(doubled_after_write, [a, a.copy(), np.zeros(4)], opts())
    assert "double *x, double *z, double *y)" in code, code


@parpy.jit
def copy_into_second(x, y):
    y[0] = x[1]


def test_a_read_only_array_passed_twice_names_the_written_parameter():
    # (the one array compiles under the first name, `x`, which the error
    # named though the function writes `y`)
    ro = np.arange(4.0)
    ro.flags.writeable = False
    with pytest.raises(ValueError) as e:
        copy_into_second(ro, ro, opts=cpu_opts())
    assert str(e.value).startswith("argument `y` of `copy_into_second` is read-only"), e.value
