"""`CompileBackend.Python`: the function runs as plain Python with the jit
meaning of parpy's builtins (the reference of every differential test: see
conftest.run_both). Here: the switch itself, what it adds to plain Python,
and each builtin's semantics on NumPy values, checked against the Cpu
backend where the two must agree."""

import pickle

import numpy as np
import pytest

import parpy
from parpy import _pymode
from conftest import cpu_opts, python_opts, run_both


def py_opts(spec=None):
    return python_opts(cpu_opts(spec))


@parpy.jit
def twice(a):
    return a * 2


@parpy.jit
def with_helper(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = twice(x[i]) + min(x[i], 3)


def test_runs_the_python_function_on_the_callers_arrays():
    x = (np.arange(6) * 50).astype(np.int8)
    y = np.zeros(6, np.int8)
    assert with_helper(x, y, 6, opts=py_opts({'i': parpy.threads(2)})) is None
    # int8 wraps: 100 * 2 = -56, -56 + 3 = -53
    assert y.tolist() == [0, 103, -53, -62, 88, -18]
    run_both(with_helper, [x, np.zeros(6, np.int8), 6], cpu_opts({'i': parpy.threads(2)}))


def test_print_and_breakpoints_work_inside(capsys, monkeypatch):
    seen = []
    monkeypatch.setattr("sys.breakpointhook", lambda *a, **k: seen.append(True))

    @parpy.jit
    def chatty(x, N):
        for i in range(N):
            print("x", i, x[i])
            breakpoint()
            x[i] = x[i] + 1

    x = np.zeros(2, np.float32)
    chatty(x, 2, opts=py_opts())
    assert capsys.readouterr().out == "x 0 0.0\nx 1 0.0\n"
    assert seen == [True, True] and x.tolist() == [1.0, 1.0]


def test_a_formatted_print_inside_runs_in_python_mode(capsys):
    # the decorator refused the f-string ("f-strings are not supported")
    # and the `%` of a tuple ("tuple expressions are not supported"), so
    # Python mode could not run the function at all
    @parpy.jit
    def chatty(x, N):
        for i in range(N):
            print(f"x[{i}] = {x[i]:.2f}")
            print("%d: %.1f" % (i, x[i]))
            x[i] = x[i] + 1

    x = np.array([0.5, 1.25])
    chatty(x, 2, opts=py_opts())
    assert capsys.readouterr().out == "x[0] = 0.50\n0: 0.5\nx[1] = 1.25\n1: 1.2\n"
    assert x.tolist() == [1.5, 2.25]
    with pytest.raises(parpy.CompileError, match="cannot call `print`"):
        chatty(x, 2, opts=cpu_opts())


@parpy.jit
def quad(a):
    return twice(twice(a))


@parpy.jit
def with_nested_helpers(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = quad(x[i]) + 1


def test_helpers_of_an_undecorated_body_run_undecorated():
    # `fn.py_func(...)` is plain Python: the jit helpers it calls (and
    # theirs) run as plain Python too, with no `opts`
    x = np.arange(5, dtype=np.int64)
    y = np.zeros(5, np.int64)
    assert with_nested_helpers.py_func(x, y, 5) is None
    assert y.tolist() == [1, 5, 9, 13, 17]
    got = np.zeros(5, np.int64)
    with_nested_helpers(x, got, 5, opts=cpu_opts({'i': parpy.threads(5)}))
    assert np.array_equal(got, y)
    # a helper that returns a value runs as plain Python from anywhere (no
    # main function returns a value): the caller's decorator removed
    # (it was "missing the keyword argument `opts`")
    def plain_caller():
        return quad(3)
    assert plain_caller() == 12 and quad(3) == 12
    y = np.zeros(5, np.int64)
    _pymode_free_caller(x, y, 5)
    assert y.tolist() == [1, 5, 9, 13, 17]
    # a function that returns nothing, without `opts`, stays an error
    with pytest.raises(TypeError, match="missing the keyword argument `opts`"):
        with_nested_helpers(x, y, 5)


def _pymode_free_caller(x, y, N):
    # `with_nested_helpers` without its decorator
    for i in range(N):
        y[i] = quad(x[i]) + 1


def test_arguments_are_checked_as_for_a_compiled_backend():
    with pytest.raises(TypeError, match="missing the keyword argument `opts`"):
        with_helper(np.zeros(2, np.int8), np.zeros(2, np.int8), 2)
    with pytest.raises(TypeError):
        with_helper(np.zeros(2, np.int8), np.zeros(2, np.int8), opts=py_opts())
    with pytest.raises((TypeError, ValueError), match="x"):
        with_helper(np.zeros(2, np.complex64), np.zeros(2, np.int8), 2, opts=py_opts())


def test_code_generation_is_refused_clearly():
    args = [np.zeros(2, np.int8), np.zeros(2, np.int8), 2]
    with pytest.raises(ValueError, match="print_compiled needs a compiled backend"):
        parpy.print_compiled(with_helper, args, py_opts())
    with pytest.raises(ValueError, match="compile_string needs a compiled backend"):
        parpy.compile_string("f", "int x;", py_opts())


def test_the_switch_is_an_option_like_the_others():
    o = py_opts()
    assert o.backend == parpy.CompileBackend.Python
    assert pickle.loads(pickle.dumps(o)).backend == parpy.CompileBackend.Python
    assert parpy.backend.is_enabled(parpy.CompileBackend.Python)
    assert parpy.backend.explain(parpy.CompileBackend.Python).startswith("Python:")
    assert "Python" in repr(o)


def test_helpers_in_closures_run_as_python():
    @parpy.jit
    def inc(v):
        return v + 1

    @parpy.jit
    def f(x, N):
        for i in range(N):
            x[i] = inc(x[i])

    x = np.zeros(3, np.int64)
    f(x, 3, opts=py_opts())
    assert x.tolist() == [1, 1, 1]


def test_warnings_are_off_and_integers_wrap(recwarn):
    @parpy.jit
    def ovf(x, y, N):
        for i in range(N):
            y[i] = x[i] * 100 + x[i] // 0

    x = np.array([5, -3], np.int8)
    y = np.zeros(2, np.int8)
    ovf(x, y, 2, opts=py_opts())
    assert y.tolist() == [500 - 512, -300 + 256]  # wrapped; x // 0 is 0 in NumPy
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


# --- the builtins' meaning from plain Python ----------------------------


def test_convert_wraps_like_a_c_cast():
    assert parpy.builtin.convert(300, parpy.types.I8) == 44
    assert parpy.builtin.convert(300, parpy.types.I8).dtype == np.int8
    assert parpy.builtin.convert(-1, parpy.types.U8) == 255
    assert parpy.builtin.convert(-2.7, np.int32) == -2
    assert parpy.builtin.convert(np.int64(2**40 + 5), parpy.types.I32) == 5
    assert parpy.builtin.convert(0.1, parpy.types.F16) == np.float16(0.1)
    assert parpy.builtin.convert(3, parpy.types.Bool) is np.True_
    assert parpy.types.U16(-1) == 65535


def test_min_max_promote_like_jit_code():
    mn, mx = _pymode._OVERRIDES["min"], _pymode._OVERRIDES["max"]
    r = mn(np.int8(5), 3)
    assert r == 3 and r.dtype == np.int8
    r = mx(np.int8(5), np.int16(300))
    assert r == 300 and r.dtype == np.int16
    assert mn(1, 2.5) == 1.0 and type(mn(1, 2.5)) is float
    assert mx(1, 2) == 2 and type(mx(1, 2)) is int
    assert mx(np.float32(1.5), 2) .dtype == np.float32
    assert mn([3, 1, 2]) == 1  # one iterable: Python's own
    assert type(parpy.builtin.maximum(1, 2)) is int
    assert parpy.builtin.minimum(np.uint8(7), 3).dtype == np.uint8


def test_math_on_python_numbers_stays_weak_and_on_numpy_values_follows_numpy():
    assert type(parpy.math.sqrt(4)) is float
    assert type(parpy.math.sqrt(np.float64(4))) is np.float64  # strong, though a float
    assert type(parpy.builtin.maximum(np.float64(1), 2.0)) is np.float64
    assert parpy.math.sqrt(np.int16(4)).dtype == np.float32
    assert parpy.math.sin(np.int8(1)).dtype == np.float16
    assert parpy.math.exp(np.float32(1)).dtype == np.float32
    assert parpy.math.abs(True) == 1 and type(parpy.math.abs(True)) is int
    assert parpy.math.abs(np.int8(-128)) == -128  # wraps, as NumPy
    assert type(parpy.math.pow(2.0, 3)) is float


def test_reductions_accumulate_like_numpy():
    assert parpy.operators.sum(np.ones(4096, np.float16)) == 4096
    s = parpy.operators.sum(np.full(3, 2**30, np.int32))
    assert s == 3 * 2**30 and s.dtype == np.int64
    assert parpy.operators.max(np.array([2**64 - 1, 3], np.uint64)) == 2**64 - 1


MATH_PROGRAM_TYPES = [np.float32, np.float64, np.int32]


@parpy.jit
def math_mix(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = parpy.math.exp(parpy.math.sin(x[i]) * 0.5) + parpy.math.sqrt(2) * min(x[i], 1.5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_math_with_weak_arguments_keeps_the_array_type(dtype):
    x = np.linspace(-2, 2, 17).astype(dtype)
    run_both(math_mix, [x, np.zeros(17, dtype), 17], cpu_opts({'i': parpy.threads(4)}))


@parpy.jit
def torch_row_max(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = parpy.reduce.max(x[i, :]) + parpy.reduce.sum(x[i, :])


def test_torch_tensors_run_in_python_mode_as_numpy_views():
    # (parpy.reduce.max of a torch row raised torch's "max(): argument
    # 'dim' must be int, not NoneType")
    torch = pytest.importorskip("torch")
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    want = torch.zeros(3)
    torch_row_max(x, want, 3, opts=cpu_opts({'N': parpy.threads(3)}))
    y = torch.zeros(3)
    torch_row_max(x, y, 3, opts=python_opts(cpu_opts({'N': parpy.threads(3)})))
    assert y.tolist() == want.tolist() == [3.0 + 6.0, 7.0 + 22.0, 11.0 + 38.0]
