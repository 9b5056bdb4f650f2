"""Arguments passed None and `is None` tests: an optional array or number
(`def f(x, y, w=None)`) and `if w is not None:` were refused ("`is`
comparisons are not supported", and None was no argument type). The
function is compiled for the None passed: `w is None` is known, only the
code Python runs for it is compiled, and a read of the None that Python
would make is a located type error. Checked against the plain-Python run."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both


@parpy.jit
def weighted(x, y, N, w=None, b=None):
    parpy.label('i')
    for i in range(N):
        v = x[i]
        if w is not None:
            v *= w[i]
        if b is not None and b[i] > 0.0:
            v += b[i]
        y[i] = v


@pytest.mark.parametrize("w", [None, "array"])
@pytest.mark.parametrize("b", [None, "array"])
def test_optional_arrays_passed_or_none(w, b):
    x = np.array([1.0, -2.0, 3.0, 0.5])
    w = None if w is None else np.array([2.0, 3.0, 0.5, -1.0])
    b = None if b is None else np.array([1.0, -1.0, 2.0, 0.0])
    run_both(weighted, [x, np.zeros(4), 4, w, b], cpu_opts({'i': parpy.threads(4)}), rtol=0, atol=0)


@parpy.jit
def scale_by(x, y, N, scale=None):
    if scale is None:
        scale = 2
    parpy.label('i')
    for i in range(N):
        y[i] = x[i] * scale + (0.0 if scale is None else 1.0)


@parpy.jit
def scaled(v, s=None):
    if s is None:
        return v
    return v * s


@parpy.jit
def through_helpers(x, y, N, w=None):
    parpy.label('i')
    for i in range(N):
        y[i] = scaled(x[i]) + scaled(x[i], 3.0) + scaled(x[i], None) + scaled(x[i], w)


def test_none_defaults_of_numbers_and_helpers():
    x = np.array([1.0, -2.0, 3.0])
    opts = cpu_opts({'i': parpy.threads(3)})
    run_both(scale_by, [x, np.zeros(3), 3], opts, rtol=0, atol=0)
    run_both(scale_by, [x, np.zeros(3), 3, 0.5], opts, rtol=0, atol=0)
    run_both(through_helpers, [x, np.zeros(3), 3], opts, rtol=0, atol=0)
    run_both(through_helpers, [x, np.zeros(3), 3, 4.0], opts, rtol=0, atol=0)


@parpy.jit
def is_none_values(x, y, N, w=None):
    parpy.label('i')
    for i in range(N):
        t = x[i]
        y[i, 0] = t is None
        y[i, 1] = x is not None and w is None
        y[i, 2] = w is None or w[i] > 0.0


def test_is_none_as_a_value():
    # (a local or an array is never None; `or` stops at a known True)
    x = np.array([1.0, -2.0])
    opts = cpu_opts({'i': parpy.threads(2)})
    run_both(is_none_values, [x, np.zeros((2, 3), bool), 2], opts)
    run_both(is_none_values, [x, np.zeros((2, 3), bool), 2, np.array([1.0, -1.0])], opts)


def test_one_function_compiled_for_none_and_for_an_array():
    # (None is part of the specialization key: the code for an array is
    # not reused for None, nor the other way round)
    x, w = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    opts = cpu_opts({'i': parpy.threads(2)})
    for args, want in [((None, None), x), ((w, None), x * w), ((None, None), x), ((None, w), x + w)]:
        y = np.zeros(2)
        weighted(x, y, 2, *args, opts=opts)
        np.testing.assert_array_equal(y, want)
    code = parpy.print_compiled(weighted, [x, np.zeros(2), 2, None, None], opts)
    assert "w" not in code.split("parpy-param: N")[1].split("\n")[0]
    assert "b[" not in code and "w[" not in code


@parpy.jit
def loop_over_the_name(x, y, N, w=None):
    parpy.label('i')
    for i in range(N):
        y[i] = 0.0
        for w in range(2):
            y[i] += x[i] * w if w is not None else -1.0


def test_a_loop_over_the_name_of_a_none_parameter():
    # (inside the loop the name holds the counter: `w is not None` there)
    run_both(loop_over_the_name, [np.arange(3.0), np.zeros(3), 3], cpu_opts({'i': parpy.threads(3)}))


@parpy.jit
def reads_none(x, y, N, w=None):
    parpy.label('i')
    for i in range(N):
        y[i] = x[i] * w


@parpy.jit
def assigns_in_loop(x, y, N, w=None):
    for i in range(N):
        if w is None:
            w = x[i]
        y[i] = w


def other_is_test(x, y, N):
    for i in range(N):
        y[i] = x[i] is x[i]


def test_what_none_cannot_be_is_a_located_error():
    x, y = np.ones(3), np.zeros(3)
    opts = cpu_opts({'i': parpy.threads(3)})
    with pytest.raises(TypeError, match="`w` is None here") as e:
        reads_none(x, y, 3, opts=opts)
    assert isinstance(e.value, parpy.CompileError)
    assert "y[i] = x[i] * w" in str(e.value) and "if w is not None:" in str(e.value)
    # the test in a loop that assigns the name: not known when compiling
    with pytest.raises(parpy.CompileError, match="`w is None` where `w` may have been assigned"):
        assigns_in_loop(x, y, 3, opts=cpu_opts())
    # with an array passed it is known again (the array is not None)
    run_both(assigns_in_loop, [x, y, 3, 5.0], cpu_opts())
    # (at decoration)
    with pytest.raises(parpy.CompileError, match="`is` comparisons other than `is None`"):
        parpy.jit(other_is_test)


def test_none_code_compiles_for_cuda_and_metal():
    # (NVRTC and clang-19 check the code, each where installed)
    def args(backend):
        x = np.ones(4, np.float32)
        return [x, np.zeros_like(x), 4, None, x]
    codes = check_gpu_code(weighted, args, {'i': parpy.threads(4)}, "weighted")
    assert all("b[" in c and "w[" not in c for c in codes.values())
