"""`assert cond` and `assert cond, "message"` in jit code: checked where the
statement runs, on the host or in parallel loops, with bounds checks on or
off; a false condition makes the call raise Python's `AssertionError` with
the message and the source line (the statements after it still run, as
after a failed index check). A condition known true when compiling costs
nothing."""

import importlib.util
import math
import shutil

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, module_from_source, run_both


@parpy.jit
def scaled_rows(x, y, N, M):
    assert N > 0, "N must be positive"
    assert x.shape[1] == M
    parpy.label('i')
    for i in range(N):
        assert x[i, 0] >= 0.0, "rows must start with a non-negative value"
        y[i] = x[i, :].sum() * 2.0


def expect_assertion(fn, args, opts, *words):
    """The call raises AssertionError with each of `words` in its message
    (tests/test_cuda_programs.py swaps in a compile-only check where no GPU
    is present)."""
    with pytest.raises(AssertionError) as e:
        fn(*args, opts=opts)
    assert all(w in str(e.value) for w in words), str(e.value)


def _rows(n=4, m=5, seed=0):
    return np.abs(np.random.default_rng(seed).standard_normal((n, m))) + 0.5


def test_asserts_that_hold_change_nothing():
    x = _rows()
    run_both(scaled_rows, [x, np.zeros(4), 4, 5], cpu_opts({'i': parpy.threads(4)}))


def test_a_false_assert_raises_assertion_error_with_its_message_and_line():
    x = _rows()
    opts = cpu_opts({'i': parpy.threads(4)})
    expect_assertion(scaled_rows, [x, np.zeros(4), 4, 6], opts,
                     "`scaled_rows`: assertion failed (at ", "test_assert.py:",
                     ": assert x.shape[1] == M)")
    x[2, 0] = -1.0
    expect_assertion(scaled_rows, [x, np.zeros(4), 4, 5], opts,
                     "rows must start with a non-negative value")
    # and the Python reference says the same
    with pytest.raises(AssertionError, match="rows must start with a non-negative value"):
        scaled_rows.py_func(x, np.zeros(4), 4, 5)


def test_asserts_stay_with_bounds_checks_off_and_scalars_not_specialized():
    x = _rows()
    x[1, 0] = -3.0
    for fields in ({'bounds_check': False}, {'specialize_scalars': False}):
        opts = cpu_opts({'i': parpy.threads(4)}, **fields)
        expect_assertion(scaled_rows, [x, np.zeros(4), 4, 5], opts, "non-negative")
        expect_assertion(scaled_rows, [x[:0], np.zeros(0), 0, 5], opts, "N must be positive")


@parpy.jit
def checked_step(v, lo):
    assert v >= lo, "below the lower bound"
    return v - lo


@parpy.jit
def steps(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = checked_step(x[i], 0.25)


def test_an_assert_in_a_helper():
    x = np.linspace(0.5, 2.0, 8)
    opts = cpu_opts({'i': parpy.threads(8)})
    got = run_both(steps, [x, np.zeros(8), 8], opts)
    assert np.array_equal(got[1], x - 0.25)
    x[5] = 0.0
    expect_assertion(steps, [x, np.zeros(8), 8], opts, "`steps`: below the lower bound")


def test_asserts_compile_for_cuda_and_metal():
    codes = check_gpu_code(scaled_rows, lambda b: [_rows().astype(np.float32), np.zeros(4, np.float32), 4, 5],
                           {'i': parpy.threads(4)}, "asserts")
    if parpy.CompileBackend.Cuda in codes:
        code = codes[parpy.CompileBackend.Cuda]
        assert "parpy_check_index" in code
        assert "// parpy-bounds: assertion: rows must start with a non-negative value" in code
    if parpy.CompileBackend.Metal in codes:
        # no run-time record on Metal yet: the asserts are left out
        assert "non-negative" not in codes[parpy.CompileBackend.Metal]


def test_printed_code_run_by_compile_string_raises_too():
    x = _rows()
    x[3, 0] = -1.0
    opts = cpu_opts({'i': parpy.threads(4)})
    code = parpy.print_compiled(scaled_rows, [x, np.zeros(4), 4, 5], opts)
    assert "// parpy-bounds: assertion: rows must start" in code
    built = parpy.compile_string("scaled_rows", code, opts)
    with pytest.raises(AssertionError, match="non-negative"):
        built(x, np.zeros(4), 4, 5)


# f-string messages: the values they name are computed when the check
# fails, and the text is what the undecorated function's f-string gives


def expect_same_message(fn, args, opts, exception):
    """The call raises `exception` whose message is the undecorated
    function's (the same f-string of the same values), named and located
    (tests/test_cuda_programs.py swaps in a compile-only check where no GPU
    is present)."""
    with pytest.raises(exception) as want:
        fn.py_func(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    with pytest.raises(exception) as got:
        fn(*args, opts=opts)
    assert type(got.value) is exception
    msg = str(got.value)
    # (pytest's rewriting of this module's asserts adds lines to Python's)
    want = str(want.value).split("\n")[0]
    assert msg.startswith(f"`{fn.__name__}`: {want} (at "), (msg, want)
    assert "test_assert.py:" in msg


@parpy.jit
def positive_rows(x, y, N, M):
    assert x.shape[1] == M, f"x has {x.shape[1]} columns, not {M}"
    parpy.label('i')
    for i in range(N):
        assert x[i, 0] > 0.0, f"x[{i}, 0] = {x[i, 0]:.3f} ({x[i, 0]!r}) is not positive"
        y[i] = x[i, :].sum()


def test_an_f_string_message_names_the_failing_values():
    x = _rows()
    opts = cpu_opts({'i': parpy.threads(4)})
    run_both(positive_rows, [x, np.zeros(4), 4, 5], opts)
    expect_same_message(positive_rows, [x, np.zeros(4), 4, 6], opts, AssertionError)
    x[2, 0] = -1.0 / 3.0
    expect_same_message(positive_rows, [x, np.zeros(4), 4, 5], opts, AssertionError)
    for fields in ({'bounds_check': False}, {'specialize_scalars': False}):
        expect_same_message(positive_rows, [x, np.zeros(4), 4, 5],
                            cpu_opts({'i': parpy.threads(4)}, **fields), AssertionError)


@parpy.jit
def typed_values(a, b, c, d, k, N):
    parpy.label('i')
    for i in range(N):
        if a[i] > 100:
            raise ValueError(f"i={i} a={a[i]} b={b[i]!r} d={d[i]} "
                             f"{k * 2} {a[i] > 100} {{braces}} {b[i]:>12.4e}|{c[i]:x}")
        a[i] = a[i] + 1


def test_values_of_every_type_are_formatted_as_python_formats_them():
    a = np.array([1, 2, 120, 4], np.int8)
    b = np.array([0.1, 0.2, 1 / 3, 0.4], np.float32)
    c = np.array([0, 1, 2**64 - 1, 3], np.uint64)
    d = np.array([True, False, False, True])
    opts = cpu_opts({'i': parpy.threads(4)})
    run_both(typed_values, [a.copy() * 0, b, c, d, 7, 4], opts)
    expect_same_message(typed_values, [a, b, c, d, 7, 4], opts, ValueError)


@parpy.jit
def bounded_step(v, hi):
    assert v <= hi, f"step {v} is above {hi}"
    return hi - v


@parpy.jit
def bounded_steps(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = bounded_step(x[i], 1.5)


def test_an_f_string_message_in_a_helper():
    x = np.linspace(0.0, 1.0, 6)
    opts = cpu_opts({'i': parpy.threads(6)})
    run_both(bounded_steps, [x, np.zeros(6), 6], opts)
    x[4] = 2.25
    expect_same_message(bounded_steps, [x, np.zeros(6), 6], opts, AssertionError)


def test_a_format_python_cannot_apply_raises_pythons_error():
    @parpy.jit
    def int_format_of_a_float(x, N):
        parpy.label('i')
        for i in range(N):
            assert x[i] > 0.0, f"{x[i]:d}"
            x[i] = 1.0
    x = np.array([1.0, -2.0])
    with pytest.raises(ValueError, match="Unknown format code 'd' for object of type 'float'"):
        int_format_of_a_float.py_func(x.copy(), 2)
    with pytest.raises(ValueError, match="Unknown format code 'd' for object of type 'float'"):
        int_format_of_a_float(x, 2, opts=cpu_opts({'i': parpy.threads(2)}))


def test_printed_code_with_an_f_string_message_run_by_compile_string():
    x = _rows()
    x[3, 0] = -2.5
    opts = cpu_opts({'i': parpy.threads(4)})
    code = parpy.print_compiled(positive_rows, [x, np.zeros(4), 4, 5], opts)
    assert "// parpy-bounds: format AssertionError int,float64,float64: x[{0}, 0] = {1:.3f} ({2!r})" in code
    built = parpy.compile_string("positive_rows", code, opts)
    with pytest.raises(AssertionError, match=r"x\[3, 0\] = -2.500 \(np.float64\(-2.5\)\) is not positive"):
        built(x, np.zeros(4), 4, 5)


def test_what_a_message_may_not_be():
    def refused(src_fn, *words):
        with pytest.raises(parpy.CompileError) as e:
            parpy.print_compiled(parpy.jit(src_fn), [np.ones(3), 3], cpu_opts({'i': parpy.threads(3)}))
        assert all(w in str(e.value) for w in words), str(e.value)

    def array_field(x, N):
        parpy.label('i')
        for i in range(N):
            assert x[i] > 0, f"x is {x}"
    refused(array_field, "a field of the message of an `assert` or a `raise` must be a number",
            "this is an array", 'f"x is {x}"')

    def nine_fields(x, N):
        parpy.label('i')
        for i in range(N):
            assert x[i] > 0, f"{i}{i}{i}{i}{i}{i}{i}{i}{i}"
    refused(nine_fields, "may name at most 8 values")

    def computed_spec(x, N):
        parpy.label('i')
        for i in range(N):
            assert x[i] > 0, f"{x[i]:{N}}"
    refused(computed_spec, "the format spec of an f-string field must be written out")

    def a_variable(x, N):
        parpy.label('i')
        for i in range(N):
            assert x[i] > 0, N
    refused(a_variable, "the message of an `assert` must be a string literal, an f-string or a `str.format` of one")


# `"...".format(...)` and `"..." % (...)` messages: the same values
# recorded, formatted by Python's str.format / % operator


@parpy.jit
def format_messages(a, b, c, k, N):
    parpy.label('i')
    for i in range(N):
        assert a[i] < 100, "a[{0}] = {1!r:>16} twice {2:+d} {k:.2e} {{kept}} {0}".format(
            i, a[i], a[i] * 2, k=b[i])
        if b[i] < 0.0:
            raise ValueError("b[%d] = %8.3f%% (%r, %s, %#x, %-6d|)" % (i, b[i], b[i], b[i] < 0.0,
                                                                  c[i], k))
        a[i] = a[i] + 1


def test_str_format_and_percent_messages_are_pythons():
    a = np.array([1, 2, 3, 4], np.int16)
    b = np.array([0.5, 0.25, 1 / 3, 2.0], np.float32)
    c = np.array([7, 255, 4096, 1], np.uint32)
    opts = cpu_opts({'i': parpy.threads(4)})
    run_both(format_messages, [a.copy(), b, c, 9, 4], opts)
    bad = a.copy()
    bad[2] = 120
    expect_same_message(format_messages, [bad, b, c, 9, 4], opts, AssertionError)
    neg = b.copy()
    neg[1] = -1 / 7
    expect_same_message(format_messages, [a.copy(), neg, c, 9, 4], opts, ValueError)


@parpy.jit
def joined_messages(x, N):
    parpy.label('i')
    for i in range(N):
        assert x[i] >= 0.0, "x[" + str(i) + "] = " + repr(x[i]) + f" ({x[i]:.2f}) " + \
            format(x[i] * 3, ">10.3e") + " {not a field}" + format(i)
        x[i] = np.sqrt(x[i])


def test_a_message_joined_by_plus_is_pythons():
    x = np.array([4.0, 2.25, 9.0, 1.0])
    opts = cpu_opts({'i': parpy.threads(4)})
    run_both(joined_messages, [x.copy(), 4], opts)
    x[2] = -0.375
    expect_same_message(joined_messages, [x, 4], opts, AssertionError)


def test_a_percent_conversion_python_cannot_apply_raises_pythons_error():
    @parpy.jit
    def hex_of_a_float(x, N):
        parpy.label('i')
        for i in range(N):
            assert x[i] > 0.0, "%x" % x[i]
            x[i] = 1.0
    x = np.array([1.0, -2.0])
    with pytest.raises(TypeError, match="%x format: an integer is required, not numpy.float64"):
        hex_of_a_float.py_func(x.copy(), 2)
    with pytest.raises(TypeError, match="%x format: an integer is required, not numpy.float64"):
        hex_of_a_float(x, 2, opts=cpu_opts({'i': parpy.threads(2)}))


def test_printed_code_with_a_percent_message_run_by_compile_string():
    a = np.array([1, 2, 3, 4], np.int16)
    b = np.array([0.5, -0.25, 1 / 3, 2.0], np.float32)
    c = np.array([7, 255, 4096, 1], np.uint32)
    opts = cpu_opts({'i': parpy.threads(4)})
    code = parpy.print_compiled(format_messages, [a, b, c, 9, 4], opts)
    assert ("// parpy-bounds: printf ValueError int,float32,float32,bool_,uint32,int: "
            "b[%d] = %8.3f%% (%r, %s, %#x, %-6d|)") in code
    assert ("// parpy-bounds: format AssertionError int,int16,int16,float32: "
            "a[{0}] = {1!r:>16} twice {2:+d} {3:.2e} {{kept}} {0}") in code
    built = parpy.compile_string("format_messages", code, opts)
    with pytest.raises(ValueError, match=r"b\[1\] =   -0.250% \(np.float32\(-0.25\), True, 0xff, 9     \|\)"):
        built(a, b, c, 9, 4)


@pytest.mark.parametrize("message,words", [
    ('"{} {}".format(i)', "cannot be formatted: Replacement index 1 out of range"),
    ('"{k}".format(i)', "cannot be formatted: no argument `k`"),
    ('"{} {0}".format(i)', "cannot switch from automatic field numbering"),
    ('"a } b".format(i)', "Single '}' encountered in format string"),
    ('"{!x}".format(i)', "Unknown conversion specifier x"),
    ('"{:{w}}".format(i, w=3)', "computed from a field"),
    ('"{0.real}".format(i)', "reads an attribute or an item"),
    ('"{}".format(*x)', "`*args` of a message's `str.format`"),
    ('"%d %d" % i', "cannot be formatted: not enough arguments for format string"),
    ('"%d" % (i, i)', "not all arguments converted during string formatting"),
    ('"%y" % i', "unsupported format character 'y' (0x79) at index 1"),
    ('"%(a)d" % i', "needs a dict of values"),
    ('"%*d" % (i, i)', "a `*` width or precision"),
    ('"%d" * i', "must be a string literal, an f-string or a `str.format` of one"),
    ('"x is " + x[i]', "a part of the message of an `assert` joined by `+` must be a string"),
    ('"x is " + str(x)', "must be a number"),
    ('"x is " + format(x[i], f"{i}")', "joined by `+` must be a string"),
    ('"{}".format(x)', "must be a number"),
])
def test_what_a_format_or_percent_message_may_not_be(message, words, tmp_path):
    mod = module_from_source(
        tmp_path, "msg",
        "import parpy\n\n"
        "def checked(x, N):\n"
        "    parpy.label('i')\n"
        "    for i in range(N):\n"
        f"        assert x[i] > 0, {message}\n")
    with pytest.raises(parpy.CompileError) as e:
        parpy.print_compiled(parpy.jit(mod.checked), [np.ones(3), 3], cpu_opts({'i': parpy.threads(3)}))
    assert words in str(e.value), str(e.value)
    assert "msg.py:6" in str(e.value), str(e.value)


@pytest.mark.skipif(shutil.which("c++") is None, reason="the CUDA emulator needs a C++ compiler")
def test_printed_cuda_code_on_the_emulator_raises_too():
    from parpy import _cuda_emu
    x = _rows()
    x[1, 0] = -1.0
    with pytest.raises(AssertionError, match="rows must start with a non-negative value"):
        _cuda_emu.run(scaled_rows, [x, np.zeros(4), 4, 5], cpu_opts({'i': parpy.threads(4)}))


# `raise E("message")`: a check that always fails where it runs, raising E


@parpy.jit
def checked_roots(x, y, N):
    parpy.label('i')
    for i in range(N):
        if x[i] < 0.0:
            raise ValueError("x must not be negative")
        y[i] = np.sqrt(x[i])


@parpy.jit
def reciprocals(x, y, N):
    parpy.label('i')
    for i in range(N):
        if x[i] == 0.0:
            raise ZeroDivisionError
        y[i] = 1.0 / x[i]


@parpy.jit
def weighted_means(x, w, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.average(x[i, :], weights=w[i, :])


@parpy.jit
def close_pairs(x, tol, k, N):
    parpy.label('i')
    for i in range(N):
        k[i, 0] = math.isclose(x[i, 0], x[i, 1], rel_tol=0.25)
        k[i, 1] = math.isclose(x[i, 0], x[i, 0] + 1e-12)
        k[i, 2] = math.isclose(x[i, 0], x[i, 1], abs_tol=tol)
        k[i, 3] = math.isclose(x[i, 2], np.inf)


def expect_raised(fn, args, opts, exception, *words):
    """The call raises `exception` with each of `words` in its message, as
    the function run by Python does (tests/test_cuda_programs.py swaps in a
    compile-only check where no GPU is present)."""
    with pytest.raises(exception):
        fn.py_func(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    with pytest.raises(exception) as e:
        fn(*args, opts=opts)
    assert type(e.value) is exception
    assert all(w in str(e.value) for w in words), str(e.value)


def test_raise_raises_its_exception_with_its_message_and_line():
    x = np.array([1.0, 4.0, 9.0, 16.0])
    opts = cpu_opts({'i': parpy.threads(4)})
    run_both(checked_roots, [x, np.zeros(4), 4], opts)
    x[2] = -1.0
    expect_raised(checked_roots, [x, np.zeros(4), 4], opts, ValueError,
                  "`checked_roots`: x must not be negative (at ", "test_assert.py:",
                  'raise ValueError("x must not be negative")')
    expect_raised(reciprocals, [np.array([2.0, 0.0]), np.zeros(2), 2], cpu_opts({'i': parpy.threads(2)}),
                  ZeroDivisionError, "`reciprocals`: ZeroDivisionError (at ")


def test_weighted_average_is_numpys_and_raises_for_weights_summing_to_zero():
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((4, 9)), rng.random((4, 9))
    opts = cpu_opts({'i': parpy.threads(4)})
    run_both(weighted_means, [x, w, np.zeros(4), 4], opts)
    # float32 operands average in float32; an integer array in float64
    run_both(weighted_means, [x.astype(np.float32), w.astype(np.float32),
                              np.zeros(4, np.float32), 4], opts)
    run_both(weighted_means, [(x * 10).astype(np.int32), w, np.zeros(4), 4], opts)
    w[1, :] = 0.0
    expect_raised(weighted_means, [x, w, np.zeros(4), 4], opts, ZeroDivisionError,
                  "Weights sum to zero, can't be normalized")


def test_math_isclose_is_pythons_and_checks_its_tolerances():
    x = np.array([[1.0, 1.2, 2.0], [1.0, 2.0, np.inf], [np.nan, np.nan, 1.0], [0.0, 1e-300, 3.0]])
    opts = cpu_opts({'i': parpy.threads(4)})
    run_both(close_pairs, [x, 0.5, np.zeros((4, 4), np.int64), 4], opts)
    expect_raised(close_pairs, [x, -1.0, np.zeros((4, 4), np.int64), 4], opts, ValueError,
                  "tolerances must be non-negative")


@pytest.mark.parametrize("source,message", [
    ("raise MyError('x')", "parpy functions cannot raise `MyError`"),
    ("raise ValueError('x', i)", "the exception of a `raise` takes one message"),
    ("raise ValueError(i)", "the message of a `raise` must be a string literal, an f-string or a `str.format` of one"),
    ("raise", "a bare `raise` re-raises the exception being handled"),
    ("raise ValueError('x') from None", "`raise ... from ...` is not supported"),
    ("raise ValueError('x').with_traceback(None)", "parpy functions raise builtin exceptions only"),
])
def test_what_a_raise_cannot_be_is_a_located_error(source, message, tmp_path):
    path = tmp_path / "raising.py"
    path.write_text("import parpy\n\n@parpy.jit\ndef f(x, N):\n"
                    f"    for i in range(N):\n        {source}\n")
    spec = importlib.util.spec_from_file_location("raising", path)
    with pytest.raises(parpy.CompileError) as e:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    assert message in str(e.value), str(e.value)
    assert "raising.py:6:" in str(e.value), str(e.value)


@parpy.jit
def raises_lines(x, N):
    parpy.label('i')
    for i in range(N):
        if x[i] < 0.0:
            raise ValueError("line one\nline two\r\nline three ??/ */ end\\")


def test_a_message_keeps_its_line_ends_and_generated_comments_escape_it():
    # (the line ends were spaces; the message and the source line went raw
    # into a `// parpy-bounds:` comment, where NVRTC reads `??/` as a
    # trigraph and warns)
    message = "line one\nline two\r\nline three ??/ */ end\\"
    x = np.array([1.0, -1.0])
    opts = cpu_opts({'i': parpy.threads(2)})
    with pytest.raises(ValueError) as e:
        raises_lines.py_func(x, 2)
    assert str(e.value) == message
    with pytest.raises(ValueError) as e:
        raises_lines(x, 2, opts=opts)
    assert str(e.value).startswith(f"`raises_lines`: {message} (at "), repr(str(e.value))
    for backend in (parpy.CompileBackend.Cpu, parpy.CompileBackend.Cuda,
                    parpy.CompileBackend.Metal):
        o = cpu_opts({'i': parpy.threads(2)})
        o.backend = backend
        code = parpy.print_compiled(raises_lines, [x.astype(np.float32), 2], o)
        if backend != parpy.CompileBackend.Metal:  # (no run-time record on Metal yet)
            assert ("// parpy-bounds: raise ValueError: line one\\nline two\\r\\nline three "
                    "?\\?/ *\\/ end\\\\ (at ") in code
        assert "??" not in code
        for line in code.splitlines():
            if line.startswith("// parpy-bounds:"):
                assert "*/" not in line and not line.endswith("\\"), line
    built = parpy.compile_string("raises_lines", parpy.print_compiled(raises_lines, [x, 2], opts),
                                 opts)
    with pytest.raises(ValueError) as e:
        built(x, 2)
    assert str(e.value).startswith(f"`raises_lines`: {message} (at "), repr(str(e.value))


@pytest.mark.skipif(shutil.which("c++") is None, reason="the CUDA emulator needs a C++ compiler")
def test_printed_cuda_code_with_an_f_string_message_on_the_emulator():
    from parpy import _cuda_emu
    x = _rows()
    x[1, 0] = -0.125
    with pytest.raises(AssertionError, match=r"x\[1, 0\] = -0.125 \(np.float64\(-0.125\)\) is not positive"):
        _cuda_emu.run(positive_rows, [x, np.zeros(4), 4, 5], cpu_opts({'i': parpy.threads(4)}))
    with pytest.raises(AssertionError, match="x has 5 columns, not 7"):
        _cuda_emu.run(positive_rows, [x, np.zeros(4), 4, 7], cpu_opts({'i': parpy.threads(4)}))


def test_f_string_messages_compile_for_cuda_and_metal():
    codes = check_gpu_code(typed_values, lambda b: [np.zeros(4, np.int8), np.zeros(4, np.float32),
                                                    np.zeros(4, np.uint64), np.zeros(4, bool), 7, 4],
                           {'i': parpy.threads(4)}, "f_string_messages")
    if parpy.CompileBackend.Cuda in codes:
        code = codes[parpy.CompileBackend.Cuda]
        assert "parpy_bounds_note(" in code and "parpy_f64_bits(" in code
        assert "// parpy-bounds: format ValueError int,int8,float32,bool_,int,bool_,float32,uint64: " in code
    if parpy.CompileBackend.Metal in codes:
        assert "parpy_bounds_note" not in codes[parpy.CompileBackend.Metal]


def test_format_and_percent_messages_compile_for_cuda_and_metal():
    codes = check_gpu_code(format_messages, lambda b: [np.zeros(4, np.int16), np.zeros(4, np.float32),
                                                       np.zeros(4, np.uint32), 9, 4],
                           {'i': parpy.threads(4)}, "format_and_percent_messages")
    if parpy.CompileBackend.Cuda in codes:
        assert "// parpy-bounds: printf ValueError int,float32,float32,bool_,uint32,int: " in \
            codes[parpy.CompileBackend.Cuda]
