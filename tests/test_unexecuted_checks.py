"""A check raises only for a statement the Python program runs (probes 112,
113): an index out of bounds, a Python int that a NumPy integer cannot hold
or a float NaN made an integer is an error when compiling only where the
statement certainly runs, of Python's class too (`CompileIndexError`,
`CompileOverflowError`, `CompileValueError`); elsewhere a check where it
runs, as Python raises it."""

import sys
import warnings

import numpy as np
import pytest

import parpy
from conftest import cpu_opts


def opts(spec=True, backend=None):
    o = cpu_opts()
    o.specialize_scalars = spec
    if backend is not None:
        o.backend = backend
    return o


def copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def outcome(fn, args, o):
    """What the call does: ('ok', first array) or (exception class, message)."""
    a = copies(args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(*a, opts=o)
        except Exception as e:  # noqa: BLE001 (the class is the result)
            return type(e), str(e)
    return "ok", a[0]


@parpy.jit
def guarded_idx(x, k, N):
    if k < N:
        x[k] = 1.0


@parpy.jit
def guarded_store(x, a, N):
    for i in range(N):
        if a < 128:
            x[i] = a


@parpy.jit
def guarded_by_element(x, a, N):
    for i in range(N):
        if x[i] > 5:
            x[i] = a


@parpy.jit
def guarded_nan(x, a, N):
    for i in range(N):
        if a == a:
            x[i] = a


@parpy.jit
def loop_idx(x, N):
    for i in range(N):
        if i < 4:
            x[i] = 1.0
        else:
            x[10] = 2.0


@parpy.jit
def first_or_nothing(x, out):
    if x.shape[0] > 0:
        out[0] = x[0]


@parpy.jit
def sixth(x, out):
    if x.shape[0] > 5:
        out[0] = x[5]


@parpy.jit
def col0(x, y, N):
    for i in range(N):
        y[i] = x[i, 0]


@parpy.jit
def after_return(x, k):
    if k > 2:
        return
    x[k + 10] = 1.0


@parpy.jit
def in_conditional_expression(x, k, out):
    out[0] = x[7] if k > 3 else x[0]


@parpy.jit
def index_past_64_bits(x, k):
    if k > 5:
        x[2 ** 64] = 1.0


NOT_RUN = [
    (index_past_64_bits, [np.zeros(4), 1]),
    (guarded_idx, [np.zeros(4), 10, 4]),
    (guarded_store, [np.zeros(2, np.int8), 300, 2]),
    (guarded_store, [np.zeros(2, np.int8), 300, 0]),
    (guarded_by_element, [np.zeros(2, np.int8), 300, 2]),
    (guarded_nan, [np.zeros(2, np.int8), float("nan"), 2]),
    (loop_idx, [np.zeros(4), 4]),
    (first_or_nothing, [np.zeros(0), np.full(1, 7.0)]),
    (sixth, [np.arange(3.0), np.full(1, 7.0)]),
    (col0, [np.zeros((0, 0)), np.zeros(3), 0]),
    (after_return, [np.zeros(4), 3]),
    (in_conditional_expression, [np.arange(4.0), 1, np.zeros(1)]),
]


@pytest.mark.parametrize("spec", [True, False])
@pytest.mark.parametrize("fn,args", NOT_RUN, ids=[f"{f.__name__}-{k}" for k, (f, _) in enumerate(NOT_RUN)])
def test_a_statement_that_does_not_run_raises_nothing(fn, args, spec):
    # (before: a CompileError when specialized, for loop_idx unspecialized
    # too; an OverflowError checked at the function's entry unspecialized)
    ref = copies(args)
    fn.py_func(*ref)
    kind, got = outcome(fn, args, opts(spec))
    assert kind == "ok", got
    np.testing.assert_array_equal(got, ref[0])


RUN = [
    (index_past_64_bits, [np.zeros(4), 7], IndexError, "index 18446744073709551616 "),
    (guarded_idx, [np.zeros(4), 10, 11], IndexError, "index 10"),
    (guarded_by_element, [np.array([0, 6], np.int8), 300, 2], OverflowError, "out of bounds for int8"),
    (guarded_nan, [np.zeros(2, np.int8), float("inf"), 2], OverflowError, "infinity"),
    (loop_idx, [np.zeros(4), 5], IndexError, "index 10"),
    (sixth, [np.arange(6.0), np.full(1, 7.0)], None, None),
    (after_return, [np.zeros(4), 1], IndexError, "index 11"),
    (in_conditional_expression, [np.arange(4.0), 5, np.zeros(1)], IndexError, "index 7"),
]


@pytest.mark.parametrize("spec", [True, False])
@pytest.mark.parametrize("fn,args,exc,words", RUN, ids=[f"{r[0].__name__}-{k}" for k, r in enumerate(RUN)])
def test_a_statement_that_runs_raises_what_python_raises(fn, args, exc, words, spec):
    py = copies(args)
    if exc is None:
        fn.py_func(*py)
        kind, got = outcome(fn, args, opts(spec))
        assert kind == "ok", got
        np.testing.assert_array_equal(got, py[0])
        return
    with pytest.raises(exc):
        fn(*py, opts=opts(backend=parpy.CompileBackend.Python))
    kind, message = outcome(fn, args, opts(spec))
    assert kind != "ok" and issubclass(kind, exc), (kind, message)
    assert words in message


@parpy.jit
def store(x, a, N):
    for i in range(N):
        x[i] = a


@parpy.jit
def store_first(x, a):
    x[0] = a


@parpy.jit
def idx(x, k):
    x[k] = 1.0


@pytest.mark.parametrize("fn,args,exc", [
    (store_first, [np.zeros(2, np.int8), float("nan")], ValueError),
    (store_first, [np.zeros(2, np.int8), 300], OverflowError),
    (store, [np.zeros(2, np.int8), 300, 2], OverflowError),
    (idx, [np.zeros(4), 10], IndexError),
])
def test_the_class_does_not_depend_on_specialization(fn, args, exc):
    # (before: specialized, a plain CompileError, neither of Python's classes)
    for mode in [opts(True), opts(False), opts(backend=parpy.CompileBackend.Python)]:
        kind, message = outcome(fn, args, mode)
        assert kind != "ok" and issubclass(kind, exc), (mode.specialize_scalars, kind, message)


def test_a_statement_certain_to_run_is_refused_when_compiling_with_pythons_class():
    for fn, args, cls, base in [
            (idx, [np.zeros(4), 10], parpy.CompileIndexError, IndexError),
            (store_first, [np.zeros(2, np.int8), 300], parpy.CompileOverflowError, OverflowError),
            (store_first, [np.zeros(2, np.int8), float("nan")], parpy.CompileValueError, ValueError)]:
        with pytest.raises(cls) as e:
            parpy.print_compiled(fn, args, opts())
        assert isinstance(e.value, parpy.CompileError) and isinstance(e.value, base)
        assert issubclass(cls, parpy.CompileError) and issubclass(cls, base)


HANG = """
import numpy as np, parpy, sys
@parpy.jit
def every_fourth(x, N):
    for i in range(N):
        x[4 * i] = 1.0
o = parpy.CompileOptions(); o.backend = parpy.CompileBackend.Cpu
o.specialize_scalars = sys.argv[1] == "1"
x = np.zeros(10)
try:
    every_fourth(x, 2 ** 62 + 1, opts=o)
except IndexError as e:
    assert "index 12 " in str(e), e
    assert list(x[[0, 4, 8]]) == [1.0, 1.0, 1.0]
    print("raised")
"""


@pytest.mark.parametrize("spec", ["1", "0"])
def test_a_loop_whose_last_index_overflows_stops_at_its_failure(spec, tmp_path):
    # (before: specialized, N = 2**62 + 1 ran ~2**62 iterations, a hang;
    # in a process of its own, so that a hang fails the test)
    import subprocess
    script = tmp_path / "hang.py"
    script.write_text(HANG)
    try:
        r = subprocess.run([sys.executable, str(script), spec], capture_output=True, text=True,
                           timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the loop ran on past its IndexError")
    assert r.stdout.strip() == "raised", r.stdout + r.stderr


@parpy.jit
def shift(a, b, z):
    z[0] = a << b


@pytest.mark.parametrize("a,b", [(1, 64), (1, 100), (1, 1000), (-1, 1000), (3, 127)])
def test_a_shift_of_python_ints_past_64_bits_is_refused(a, b):
    # (before: `1 << 1000` and `-1 << 1000` gave 0, past 128 bits)
    with pytest.raises(parpy.CompileError, match="does not fit in 64 bits"):
        shift(a, b, np.zeros(1, np.int64), opts=opts())
