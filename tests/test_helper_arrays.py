"""Helpers given rows and slices compute what Python computes. An
accumulator that starts as a Python int and adds a float row (`s = 0`,
`s += e`) held an int64 in a helper given a row (the sums were truncated);
a helper called in a slice statement with an array ran once per element,
so `v / v.sum()` divided each element by itself."""

import importlib.util
import math

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, python_opts, run_both, scratch_dir


@parpy.jit
def total(v):
    s = 0
    for e in v:
        s += e
    return s


@parpy.jit
def row_totals(b, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = total(b[i, :])


@parpy.jit
def mixed_totals(a, b, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = total(a[i, :])
        y[i, 1] = total(b[i, :])


def test_an_accumulator_in_a_helper_given_a_row_takes_the_rows_type():
    b = np.array([[0.25, 0.5], [1.5, 2.25]])
    run_both(row_totals, [b, np.zeros(2), 2], cpu_opts({'i': parpy.threads(2)}))
    run_both(row_totals, [b.astype(np.float32), np.zeros(2), 2], cpu_opts())
    # (each call types its own accumulator: int8 wraps as Python's does)
    a = np.array([[100, 100, 100], [1, 2, 3]], np.int8)
    run_both(mixed_totals, [a, b.astype(np.float32)[:, :1].repeat(3, 1), np.zeros((2, 2)), 2],
             cpu_opts())


@parpy.jit
def normalize(v):
    return v / v.sum()


@parpy.jit
def centered(v):
    return v - np.mean(v)


@parpy.jit
def square(v):
    return v * v


@parpy.jit
def normalized_rows(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = normalize(x[i, :])
        y[i, :] += centered(x[i, :]) + square(x[i, :])


@parpy.jit
def sum_of_normalized(x, y, N):
    for i in range(N):
        y[i] = np.sum(normalize(x[i, :]))


def test_a_helper_of_one_expression_takes_the_array_in_a_slice_statement():
    x = np.array([[1.0, 3.0, 4.0], [2.0, 6.0, 0.5]])
    run_both(normalized_rows, [x, np.zeros((2, 3)), 2], cpu_opts({'i': parpy.threads(2)}))
    run_both(sum_of_normalized, [x, np.zeros(2), 2], cpu_opts())


@parpy.jit
def plus(a, b):
    return a + b


@parpy.jit
def fused(a, b, c):
    d = plus(a, b) * c
    return plus(d, 1.0)


@parpy.jit
def shares_of(v):
    return v / v.sum()


@parpy.jit
def via_share(v, w):
    return plus(shares_of(v), w)


@parpy.jit
def fused_rows(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = fused(x[i, :], y[i, :], x[i, :])


def test_a_helper_calling_elementwise_helpers_runs_per_element():
    # (it was "uses its array as a whole": the helpers it calls were not
    # looked into)
    x = np.arange(12.0).reshape(3, 4)
    run_both(fused_rows, [x, np.ones((3, 4)), 3], cpu_opts({'i': parpy.threads(3)}), rtol=0, atol=0)


@parpy.jit
def via_shares(x, y, N):
    for i in range(N):
        y[i, :] = via_share(x[i, :], y[i, :])


@parpy.jit
def sums_then(a, b):
    t = a.sum()
    return plus(a, b) + t


@parpy.jit
def fused_sums(a, b):
    return plus(sums_then(a, b), 1.0)


def test_a_helper_calling_a_helper_that_reduces_takes_its_array_whole():
    # one `return` expression: put in place, the reduction sees the row
    x = np.arange(1.0, 13.0).reshape(3, 4)
    run_both(via_shares, [x, np.ones((3, 4)), 3], cpu_opts(), rtol=0, atol=0)

    @parpy.jit
    def bad(x, y, N):
        for i in range(N):
            y[i, :] = fused_sums(x[i, :], y[i, :])

    # a reduction behind a body of several statements: refused, not run
    # per element
    with pytest.raises(parpy.CompileError, match="`sums_then` is called with an array inside a slice statement"):
        bad(np.ones((2, 2)), np.zeros((2, 2)), 2, opts=cpu_opts())


@parpy.jit
def share(v):
    t = v.sum()
    return v / t


@parpy.jit
def shares(x, y, N):
    for i in range(N):
        y[i, :] = share(x[i, :])


def test_a_helper_that_is_not_elementwise_is_refused_in_a_slice_statement():
    with pytest.raises(parpy.CompileError) as e:
        shares(np.ones((2, 2)), np.zeros((2, 2)), 2, opts=cpu_opts())
    text = str(e.value)
    assert "`share` is called with an array inside a slice statement" in text
    assert "t = v.sum()" in text and "y[i, :] = share(x[i, :])" in text


@parpy.jit
def pick(v):
    if v > 0:
        return 1000
    return v


@parpy.jit
def picked(a, y):
    y[0] = pick(a[0])


@parpy.jit
def pick_small(v):
    if v > 0:
        return 100
    return v


@parpy.jit
def picked_small(a, y):
    y[0] = pick_small(a[0]) + pick_small(a[1])


def test_a_python_number_returned_beside_a_numpy_value_must_fit_its_type():
    # (1000 came back as int8, -24; Python returns the int as it is)
    with pytest.raises(parpy.CompileError) as e:
        picked(np.array([5], np.int8), np.zeros(1, np.int64), opts=cpu_opts())
    text = str(e.value)
    assert "`pick` returns this Python int on one path and a value of type `int8`" in text
    assert "return 1000" in text
    run_both(picked_small, [np.array([5, -3], np.int8), np.zeros(1, np.int64)], cpu_opts())


@parpy.jit
def squared(v):
    return v * v


@parpy.jit
def squares_shares(v):
    return squared(v) / squared(v).sum()


@parpy.jit
def squares_shares_rows(x, y, N):
    for i in range(N):
        y[i, :] = squares_shares(x[i, :])


def test_a_helper_reducing_another_helpers_result_takes_its_array_whole():
    # (`squared(v).sum()` counted as elementwise: each element was divided
    # by its own square, 1.0)
    x = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
    got = run_both(squares_shares_rows, [x, np.zeros((2, 3)), 2], cpu_opts(), rtol=0, atol=0)
    assert np.allclose(got[1][0], [1 / 14, 4 / 14, 9 / 14])


@parpy.jit
def clamp(v, lo, hi):
    if v < lo:
        return lo
    elif v > hi:
        return hi
    return v


@parpy.jit
def clamp_rows(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = clamp(x[i, :], 0.2, 0.8)


@parpy.jit
def clamp_elements(x, y, N, M):
    parpy.label('i')
    for i in range(N):
        for j in range(M):
            y[i, j] = clamp(x[i, j], 0.2, 0.8)


@parpy.jit
def clip(v, lo, hi):
    return np.where(v < lo, lo, np.where(v > hi, hi, v))


@parpy.jit
def clip_rows(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = clip(x[i, :], 0.2, 0.8)


@parpy.jit
def doubled_if(v, twice):
    if twice:
        return v * 2.0
    return v


@parpy.jit
def doubled_rows(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = doubled_if(x[i, :], True) + doubled_if(x[i, :], False)


@parpy.jit
def truth_in_ifexp(v, lo, hi):
    return lo if v < lo else v


@parpy.jit
def truth_in_and(v, lo, hi):
    return v > lo and v < hi


@parpy.jit
def truth_in_a_chain(v, lo, hi):
    return lo < v < hi


@parpy.jit
def truth_in_not(v, lo, hi):
    return not v


@parpy.jit
def truth_in_while(v, lo, hi):
    while v > hi:
        v = v / 2.0
    return v


@parpy.jit
def truth_in_assert(v, lo, hi):
    assert v >= lo
    return v * 2.0


@parpy.jit
def truth_through_a_helper(v, lo, hi):
    w = v * 2.0
    return clamp(w, lo, hi) + 1.0


def rows_of(helper):
    """`y[i, :] = helper(x[i, :], 0.2, 0.8)` for each row."""
    @parpy.jit
    def rows(x, y, N):
        for i in range(N):
            y[i, :] = helper(x[i, :], 0.2, 0.8)
    return rows


@pytest.mark.parametrize("helper, at", [
    (clamp, "if v < lo:"),
    (truth_in_ifexp, "return lo if v < lo else v"),
    (truth_in_and, "return v > lo and v < hi"),
    (truth_in_a_chain, "return lo < v < hi"),
    (truth_in_not, "return not v"),
    (truth_in_while, "while v > hi:"),
    (truth_in_assert, "assert v >= lo"),
    (truth_through_a_helper, "if v < lo:"),
])
def test_a_helper_testing_the_truth_of_its_array_is_refused_in_a_slice_statement(helper, at):
    # Python raises (the truth value of an array is ambiguous); parpy ran
    # the helper per element: a clamp, not an error
    rows = rows_of(helper)
    x = np.random.default_rng(0).random((3, 5))
    with pytest.raises(ValueError, match="ambiguous"):
        rows(x, np.zeros((3, 5)), 3, opts=python_opts(cpu_opts()))
    with pytest.raises(parpy.CompileError) as e:
        rows(x, np.zeros((3, 5)), 3, opts=cpu_opts())
    text = str(e.value)
    assert f"`{helper.__name__}` is called with an array inside a slice statement, but it uses the array as a truth value" in text, text
    assert at in text and "a test of an array" in text, text
    assert "np.where" in text and "loop" in text, text


def test_the_fixes_of_a_branch_on_an_array_and_helpers_branching_on_scalars_run():
    x = np.random.default_rng(0).random((3, 5))
    run_both(clamp_elements, [x, np.zeros((3, 5)), 3, 5], cpu_opts({'i': parpy.threads(3)}))
    run_both(clip_rows, [x, np.zeros((3, 5)), 3], cpu_opts({'i': parpy.threads(3)}))
    run_both(doubled_rows, [x, np.zeros((3, 5)), 3], cpu_opts({'i': parpy.threads(3)}))


# Python's functions of numbers (float, int, bool, math.*, max / min of
# several arguments) raise for an array of more than one element; inside a
# slice statement parpy applied them to each element
@parpy.jit
def number_of_float(v, lo, hi):
    return float(v) + lo


@parpy.jit
def number_of_max(v, lo, hi):
    return max(v, lo)


@parpy.jit
def number_of_math(v, lo, hi):
    w = v * hi
    return math.sqrt(w)


@parpy.jit
def number_of_floor(v, lo, hi):
    return math.floor(v) + hi


@pytest.mark.parametrize("helper, at, python_error", [
    (number_of_float, "float(v)", TypeError),
    (number_of_max, "max(v, lo)", ValueError),
    (number_of_math, "math.sqrt(w)", TypeError),
    (number_of_floor, "math.floor(v)", TypeError),
])
def test_a_helper_taking_a_python_number_of_its_array_is_refused_in_a_slice_statement(helper, at, python_error):
    rows = rows_of(helper)
    x = np.random.default_rng(0).random((3, 5))
    with pytest.raises(python_error):
        rows(x, np.zeros((3, 5)), 3, opts=python_opts(cpu_opts()))
    with pytest.raises(parpy.CompileError) as e:
        rows(x, np.zeros((3, 5)), 3, opts=cpu_opts())
    text = str(e.value)
    assert f"`{helper.__name__}` is called with an array inside a slice statement, but it converts the array to one Python number" in text, text
    assert at in text and "a Python number of an array" in text, text
    assert "np.maximum" in text and "loop" in text, text


def slice_of(body):
    """The jit function `rows(x, y, N)` storing `body` into each row
    (parpy reads a function's source: written into a module)."""
    path = scratch_dir("parpy-rows-") / "rows.py"
    path.write_text("import math\n\nimport numpy as np\n\nimport parpy\n\n\n@parpy.jit\n"
                    "def rows(x, y, N):\n    for i in range(N):\n"
                    f"        y[i, :] = {body}\n")
    spec = importlib.util.spec_from_file_location("rows", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.rows


@pytest.mark.parametrize("body, name", [
    ("float(x[i, :])", "float"),
    ("int(x[i, :]) * 1.0", "int"),
    ("max(x[i, :], 0.5)", "max"),
    ("min(0.5, x[i, :])", "min"),
    ("math.sqrt(x[i, :])", "math.sqrt"),
    ("math.ceil(x[i, :]) * 1.0", "math.ceil"),
    ("math.isclose(x[i, :], 0.5) * 1.0", "math.isclose"),
])
def test_a_python_function_of_numbers_given_a_row_in_a_slice_statement_is_refused(body, name):
    with pytest.raises(parpy.CompileError) as e:
        slice_of(body)(np.zeros((3, 5)), np.zeros((3, 5)), 3, opts=cpu_opts())
    text = str(e.value)
    assert f"`{name}` takes Python numbers, not arrays" in text, text
    assert "called with an array inside a slice statement" in text and body.split(" * ")[0] in text, text


def test_elementwise_python_functions_of_rows_and_of_elements_still_run():
    x = np.random.default_rng(1).random((3, 5)) - 0.5
    for body, want in [
        ("abs(x[i, :])", np.abs(x)),
        ("round(x[i, :])", np.round(x)),
        ("max(x[i, :]) + x[i, :]", x.max(axis=1, keepdims=True) + x),
        ("np.maximum(x[i, :], 0.0)", np.maximum(x, 0.0)),
    ]:
        y = np.zeros((3, 5))
        slice_of(body)(x, y, 3, opts=cpu_opts())
        assert np.array_equal(y, want), body
    @parpy.jit
    def per_element(x, y, N, M):
        for i in range(N):
            for j in range(M):
                y[i, j] = max(x[i, j], 0.0) + math.sqrt(abs(x[i, j])) + float(x[i, j])
    run_both(per_element, [x, np.zeros((3, 5)), 3, 5], cpu_opts())
