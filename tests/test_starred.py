"""`f(*v)` inside jit code: a starred argument spreads a tuple literal's
items, or the elements of an array (a row of a 2-D array, the rows of a
2-D block) whose length is known when compiling, as Python spreads them;
keywords and a helper's defaults bind after the spread. Checked against
the plain-Python run."""

import math

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both


def mix(p, q, r=2.0):
    return p * q + r


@parpy.jit
def spreads(x, w, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = math.hypot(*x[i, :])
        y[i, 1] = max(*x[i, :3])
        y[i, 2] = min(*x[i, 1:3], 0.25)
        y[i, 3] = max(*(x[i, 0], x[i, 1]), x[i, 2])
        y[i, 4] = mix(*x[i, 1:3])            # the default r
        y[i, 5] = mix(*x[i, 1:3], r=x[i, 4])
        y[i, 6] = math.isclose(*x[i, :2], abs_tol=0.5)
        y[i, 7] = np.maximum(*w[i % 2, :2])
        y[i, 8] = mix(x[i, 0], *x[i, 3:5])
        # a tuple value: an array's shape, divmod's pair
        y[i, 9] = max(*x.shape) + math.hypot(*divmod(x[i, 0], 0.5))


def test_starred_arguments_spread_as_python_spreads_them():
    # (each was "starred arguments (`*args`) are not supported")
    rng = np.random.default_rng(5)
    x = rng.normal(size=(6, 5))
    w = rng.normal(size=(2, 4))
    run_both(spreads, [x, w, np.zeros((6, 10)), 6], cpu_opts({'i': parpy.threads(6)}))


@parpy.jit
def spread_rows(a, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.maximum(*a[i, :2, :])


def test_a_2d_block_spreads_its_rows():
    a = np.random.default_rng(6).normal(size=(3, 2, 4))
    run_both(spread_rows, [a, np.zeros((3, 4)), 3], cpu_opts({'i': parpy.threads(3)}),
             rtol=0, atol=0)


@parpy.jit
def spread_number(x, y, N):
    for i in range(N):
        y[i] = max(*x[i])


@parpy.jit
def spread_long(x, y, N):
    for i in range(N):
        y[i] = max(*x[i, :])


@parpy.jit
def spread_range(y, N):
    for i in range(N):
        y[i] = max(*range(3))


def test_a_starred_value_parpy_cannot_spread_says_what_it_spreads():
    # (not "`*` of a number", which a range is not)
    with pytest.raises(parpy.CompileError, match=r"`\*` spreads a tuple literal or an array of known length"):
        spread_range(np.zeros(3), 3, opts=cpu_opts())


def test_a_starred_number_is_pythons_type_error():
    with pytest.raises(TypeError, match=r"`\*` of a number: it is not iterable"):
        spread_number(np.ones(3), np.zeros(3), 3, opts=cpu_opts())


def test_a_starred_array_too_long_to_spell_out_is_refused():
    with pytest.raises(parpy.CompileError, match=r"an array of 100 elements \(parpy spells out at most 64\)"):
        spread_long(np.ones((2, 100)), np.zeros(2), 2, opts=cpu_opts())
    # (64 elements are spelled out)
    x = np.random.default_rng(7).normal(size=(2, 64))
    y = np.zeros(2)
    spread_long(x, y, 2, opts=cpu_opts())
    assert (y == x.max(axis=1)).all()


def test_python_max_of_many_floats_is_linear_code(tmp_path):
    # (each argument doubled the code of `max(a, b, c, ...)` of floats:
    # 14 took 9 s to compile, 16 failed in the C compiler)
    from conftest import module_from_source
    n = 24
    src = ("import parpy\n\n@parpy.jit\ndef many(x, y, N):\n    for i in range(N):\n"
           "        y[i, 0] = max(" + ", ".join(f"x[i, {k}]" for k in range(n)) + ")\n"
           "        y[i, 1] = min(" + ", ".join(f"x[i, {k}]" for k in range(n)) + ")\n")
    m = module_from_source(tmp_path, "many_args", src)
    x = np.random.default_rng(8).normal(size=(3, n))
    x[1, 5] = np.nan
    x[2, 0], x[2, 1] = -0.0, 0.0
    code = parpy.print_compiled(m.many, [x, np.zeros((3, 2)), 3], cpu_opts())
    assert len(code) < 30000, len(code)
    run_both(m.many, [x, np.zeros((3, 2)), 3], cpu_opts(), rtol=0, atol=0)
