"""Diagnostics, compared as rendered text.

Every error program lives in tests/err_programs/ (fixed line numbers; the
expected line and column are still computed from the file, so editing a
program cannot silently break the check). Each test checks the essentials
structurally (message, `file:line:col`, the source line, the caret under the
exact span) and compares the whole rendered text with a snapshot under
tests/snapshots/. `UPDATE_SNAPSHOTS=1 pytest tests/test_errors.py` rewrites
the snapshots; review the diff before committing it.
"""

import importlib.util
import os
import pathlib
import re
import warnings

import numpy as np
import pytest

import parpy
from conftest import cpu_opts

HERE = pathlib.Path(__file__).resolve().parent
ERR_DIR = HERE / "err_programs"
SNAP_DIR = HERE / "snapshots"


def load(name):
    """Imports tests/err_programs/NAME.py under a private module name."""
    spec = importlib.util.spec_from_file_location(f"err_programs_{name}", ERR_DIR / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def locate(name, needle, occurrence=0):
    """1-based (line, column) of the `occurrence`-th `needle` in err_programs/NAME.py."""
    text = (ERR_DIR / f"{name}.py").read_text()
    pos = -1
    for _ in range(occurrence + 1):
        pos = text.index(needle, pos + 1)
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


def source_line(name, line):
    return (ERR_DIR / f"{name}.py").read_text().splitlines()[line - 1]


def normalize(text):
    """Makes the rendered text independent of where the checkout lives."""
    return re.sub(r"[^\s:]*err_programs[/\\]", "err_programs/", text)


def check_snapshot(snap, text):
    path = SNAP_DIR / f"{snap}.txt"
    text = normalize(text).rstrip("\n") + "\n"
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        return
    assert path.exists(), f"missing snapshot {path}; run with UPDATE_SNAPSHOTS=1 and review it"
    assert text == path.read_text(), f"rendered text differs from {path}:\n{text}"


def assert_points_at(text, name, needle, width=None, mark="^", occurrence=0, multiline=False):
    """The rendered diagnostic names `err_programs/NAME.py:LINE:COL` of
    `needle` (when `mark` is the primary caret), shows that source line, and
    puts `mark` characters under the start of `needle` (`width` of them when
    given). A span over several lines (`multiline`) is drawn with a bracket
    in the margin instead of carets under the column: only the location and
    the source line are checked then."""
    text = normalize(text)
    line, col = locate(name, needle, occurrence)
    if mark == "^":
        assert f"err_programs/{name}.py:{line}:{col}" in text, (
            f"expected location err_programs/{name}.py:{line}:{col} in:\n{text}")
    lines = text.splitlines()
    src = source_line(name, line)
    for k, ln in enumerate(lines):
        m = re.match(rf"^\s*{line} \|", ln)
        if not m or not ln.endswith(src.rstrip()):
            continue
        if multiline:
            return
        bar = ln.index("|")
        start = bar + 1 + col
        for marker_line in lines[k + 1:k + 4]:
            if marker_line.strip().startswith("|") and len(marker_line) > start \
                    and marker_line[start] == mark and marker_line[start - 1] != mark:
                if width is not None:
                    run = re.match(rf"{re.escape(mark)}+", marker_line[start:]).group(0)
                    assert len(run) == width, (
                        f"expected {width} {mark!r} under {needle!r}, got {len(run)}:\n{text}")
                return
        raise AssertionError(f"no {mark!r} under column {col} of line {line}:\n{text}")
    raise AssertionError(f"source line {line} ({src.strip()!r}) not shown:\n{text}")


def compile_error(fn_module, fn_name, args, opts):
    """Decorates and calls the error program; returns the CompileError text
    (the error may come at decoration or at the call)."""
    mod = load(fn_module)
    with pytest.raises(parpy.CompileError) as info:
        jitted = parpy.jit(getattr(mod, fn_name))
        jitted(*args, opts=opts)
    text = str(info.value)
    assert text.startswith("error"), text
    return text


# --------------------------------------------------------------------------
# undefined name: the tutorial's typo


def typo_args():
    x = np.ones((4, 8), np.float32)
    y = np.zeros(4, np.float32)
    return [x, y, 4]


def test_undefined_name():
    text = compile_error("typo", "sum_rows_typo", typo_args(), cpu_opts({'N': parpy.threads(4)}))
    first = text.splitlines()[0]
    assert "`out`" in first and "not defined" in first, first
    assert_points_at(text, "typo", "out[i]", width=3)
    check_snapshot("undefined_name", text)


def test_undefined_name_in_print_compiled():
    mod = load("typo")
    with pytest.raises(parpy.CompileError) as info:
        parpy.print_compiled(mod.sum_rows_typo, typo_args(), cpu_opts({'N': parpy.threads(4)}))
    assert_points_at(str(info.value), "typo", "out[i]", width=3)


def test_compile_error_is_not_internal():
    assert not issubclass(parpy.CompileError, parpy.InternalError)
    assert not issubclass(parpy.InternalError, parpy.CompileError)


# --------------------------------------------------------------------------
# unsupported constructs


@pytest.mark.parametrize("fn_name,needle,words,multiline", [
    ("list_comprehension", "[x[j] for j in range(N)]", ["comprehension"], False),
    ("try_statement", "try:", ["try"], False),
    ("import_statement", "import math", ["import"], False),
    ("keyword_argument", "x=x[i]", ["keyword", "position"], False),
])
def test_unsupported_construct(fn_name, needle, words, multiline):
    x = np.zeros(4, np.float64)
    text = compile_error("unsupported", fn_name, [x, 4], cpu_opts())
    first = text.splitlines()[0].lower()
    for w in words:
        assert w in first, f"the message should name the construct ({w!r}):\n{text}"
    assert_points_at(text, "unsupported", needle, multiline=multiline)
    check_snapshot(f"unsupported_{fn_name}", text)


# --------------------------------------------------------------------------
# inconsistent parallel structure


def test_inconsistent_parallel_structure():
    N = 16
    x = np.ones((N, 300), np.float32)
    opts = cpu_opts({'N': parpy.threads(N), 'M1': parpy.threads(128), 'M2': parpy.threads(256)})
    text = compile_error("structure", "normalize_rows", [x, N], opts)
    first = text.splitlines()[0].lower()
    assert "inconsistent" in first and "parallel" in first, text
    for word in ("`M1`", "`M2`", "128", "256"):
        assert word in text, f"{word} missing:\n{text}"
    # both statements are pointed at (the labelled statement or its label)
    norm = normalize(text)
    for stmt, label in [("s = parpy", "parpy.label('M1')"), ("x[i, :] = x", "parpy.label('M2')")]:
        shown = [locate("structure", n)[0] for n in (stmt, label)]
        assert any(re.search(rf"^\s*{ln} \|", norm, re.M) for ln in shown), (
            f"neither line {shown} is shown:\n{text}")
    # both fixes are suggested
    helps = [ln for ln in text.splitlines() if "help" in ln]
    joined = " ".join(helps).lower()
    assert ("same" in joined or "equal" in joined), f"fix 1 not suggested:\n{text}"
    assert ("nest" in joined or "kernel" in joined or "split" in joined), (
        f"fix 2 not suggested:\n{text}")
    check_snapshot("inconsistent_structure", text)


def test_consistent_structure_is_accepted():
    N = 16
    mod = load("structure")
    x = (np.random.default_rng(0).random((N, 300)) + 0.5).astype(np.float32)
    expected = x / x.sum(axis=1, keepdims=True)
    opts = cpu_opts({'N': parpy.threads(N), 'M1': parpy.threads(128), 'M2': parpy.threads(128)})
    parpy.jit(mod.normalize_rows)(x, N, opts=opts)
    np.testing.assert_allclose(x, expected, rtol=1e-4)


# --------------------------------------------------------------------------
# mismatched slice shapes


def test_mismatched_slice_1d():
    x = np.zeros(10, np.float64)
    y = np.zeros(10, np.float64)
    text = compile_error("shapes", "mismatched_1d", [x, y], cpu_opts())
    assert "shape" in text.lower(), text
    assert "10" in text and "5" in text, text
    assert_points_at(text, "shapes", "y[0:10] = x[0:5]")
    check_snapshot("mismatched_slice_1d", text)


def test_mismatched_slice_2d():
    a = np.zeros((4, 5), np.float64)
    b = np.zeros((4, 6), np.float64)
    text = compile_error("shapes", "mismatched_2d", [a, b], cpu_opts({'S': parpy.threads(4)}))
    assert "shape" in text.lower(), text
    assert "5" in text and "6" in text, text
    assert_points_at(text, "shapes", "b[:, :] = a[:, :] + 1.0")
    check_snapshot("mismatched_slice_2d", text)


# --------------------------------------------------------------------------
# a label in the spec that matches nothing: a warning


def test_unused_label_warns():
    mod = load("labels")
    fn = parpy.jit(mod.copy)
    x = np.arange(10, dtype=np.float64)
    y = np.zeros(10, np.float64)
    opts = cpu_opts({'Nope': parpy.threads(8)})
    with pytest.warns(parpy.ParpyWarning, match="Nope"):
        fn(x, y, 10, opts=opts)
    np.testing.assert_array_equal(x, y)


def test_shared_spec_does_not_warn_for_absent_labels():
    # one specification for several functions: `K` is not in `copy`, but
    # `N` is, so nothing warns (ParPy's programs share specs like this)
    mod = load("labels")
    fn = parpy.jit(mod.copy)
    x = np.arange(10, dtype=np.float64)
    y = np.zeros(10, np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fn(x, y, 10, opts=cpu_opts({'N': parpy.threads(4), 'K': parpy.threads(8)}))
    np.testing.assert_array_equal(x, y)


def test_label_differing_in_case_warns():
    mod = load("labels")
    fn = parpy.jit(mod.copy)
    x = np.arange(10, dtype=np.float64)
    y = np.zeros(10, np.float64)
    with pytest.warns(parpy.ParpyWarning, match="`n`"):
        fn(x, y, 10, opts=cpu_opts({'n': parpy.threads(4)}))


def test_used_labels_do_not_warn():
    mod = load("labels")
    fn = parpy.jit(mod.copy)
    x = np.arange(10, dtype=np.float64)
    y = np.zeros(10, np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error", parpy.ParpyWarning)
        fn(x, y, 10, opts=cpu_opts({'N': parpy.threads(4)}))


def test_parpy_warning_is_a_warning():
    assert issubclass(parpy.ParpyWarning, Warning)


# --------------------------------------------------------------------------
# argument errors at the call


@parpy.jit
def copy_args(src, dst, N):
    parpy.label('N')
    for i in range(N):
        dst[i] = src[i]


def good_args():
    return np.arange(8, dtype=np.float64), np.zeros(8, np.float64), 8


def test_wrong_argument_count():
    src, dst, N = good_args()
    opts = cpu_opts({'N': parpy.threads(4)})
    with pytest.raises(TypeError, match="copy_args"):
        copy_args(src, dst, opts=opts)
    with pytest.raises(TypeError, match="copy_args"):
        copy_args(src, dst, N, N, opts=opts)


def test_missing_opts():
    src, dst, N = good_args()
    with pytest.raises(TypeError, match="opts"):
        copy_args(src, dst, N)


def test_unknown_keyword():
    src, dst, N = good_args()
    with pytest.raises(TypeError, match="bogus"):
        copy_args(src, dst, N, opts=cpu_opts({'N': parpy.threads(4)}), bogus=1)


def test_non_contiguous_array():
    src = np.arange(16, dtype=np.float64)[::2]
    dst = np.zeros(8, np.float64)
    with pytest.raises(ValueError, match=r"\bsrc\b") as info:
        copy_args(src, dst, 8, opts=cpu_opts({'N': parpy.threads(4)}))
    assert "contiguous" in str(info.value)


def test_masked_array_is_refused_even_after_a_compiled_call():
    # (its mask was ignored: the masked elements were read as values; a
    # cache hit with an unmasked array of the same shape must not let it in)
    src, dst, N = good_args()
    opts = cpu_opts({'N': parpy.threads(4)})
    copy_args(src, dst, N, opts=opts)
    masked = np.ma.masked_array(src, mask=src > 2)
    with pytest.raises(TypeError, match=r"argument `src` of `copy_args` is a masked array"):
        copy_args(masked, dst, N, opts=opts)


def test_read_only_written_array():
    src, dst, N = good_args()
    dst.setflags(write=False)
    with pytest.raises(ValueError, match=r"\bdst\b") as info:
        copy_args(src, dst, N, opts=cpu_opts({'N': parpy.threads(4)}))
    assert "read-only" in str(info.value) or "writ" in str(info.value)


def test_read_only_array_that_is_only_read_is_fine():
    src, dst, N = good_args()
    src.setflags(write=False)
    copy_args(src, dst, N, opts=cpu_opts({'N': parpy.threads(4)}))
    np.testing.assert_array_equal(src, dst)


def test_complex128_is_rejected():
    src = np.zeros(8, np.complex128)
    dst = np.zeros(8, np.complex128)
    with pytest.raises(TypeError, match=r"\bsrc\b") as info:
        copy_args(src, dst, 8, opts=cpu_opts({'N': parpy.threads(4)}))
    assert "complex128" in str(info.value)


def test_non_native_byte_order_and_complex_scalar_name_the_dtype():
    opts = cpu_opts({'N': parpy.threads(4)})
    src = np.zeros(8, np.dtype(np.float64).newbyteorder())
    dst = np.zeros(8, np.float64)
    with pytest.raises(TypeError, match=r"`src`.*dtype >f8.*non-native byte order"):
        copy_args(src, dst, 8, opts=opts)
    with pytest.raises(TypeError, match=r"`N`.*dtype complex64.*does not support"):
        copy_args(dst.copy(), dst, np.complex64(8), opts=opts)
    # a NumPy integer scalar is accepted like a Python int
    copy_args(np.arange(8.0), dst, np.int32(8), opts=opts)
    np.testing.assert_array_equal(dst, np.arange(8.0))


def test_dtype_mismatch_with_print_compiled_also_errors():
    src = np.zeros(8, np.complex128)
    dst = np.zeros(8, np.float64)
    with pytest.raises(TypeError, match=r"\bsrc\b"):
        parpy.print_compiled(copy_args, [src, dst, 8], cpu_opts({'N': parpy.threads(4)}))


# --------------------------------------------------------------------------
# natural Python (issue 13): NumPy allocation, unpacking, methods


def natural_args():
    return [np.ones((4, 8), np.float32), np.zeros(4, np.float32), 4]


@pytest.mark.parametrize("fn,needle,first,snap", [
    ("allocates", "np.tile(x[i, :], 3)", "`np.tile` makes an array, where a number is expected",
     "natural_np_tile"),
    ("unpack_count", "x[0, 0], x[1, 0], x[2, 0]", "cannot unpack 3 values into 2 targets",
     "natural_unpack_count"),
    ("unpack_scalar", "x[3, 0]", "only a tuple", "natural_unpack_scalar"),
    ("bad_method", "x[i, :].ptp", "method `ptp` is not supported", "natural_bad_method"),
    ("no_equivalent", "np.kron", "no parpy equivalent", "natural_no_equivalent"),
    ("no_equivalent_with_keyword", "np.unique", "cannot call `np.unique`",
     "natural_no_equivalent_with_keyword"),
    ("enumerate_one_name", "p in", "`enumerate` gives (index, element) pairs",
     "natural_enumerate_one_name"),
    ("zip_too_few_names", "a, b in zip", "`zip` of 3 iterables gives tuples of 3",
     "natural_zip_too_few_names"),
    ("tuple_over_range", "a, b in range", "a tuple loop target needs `enumerate(...)`, `zip(...)` or an array of rows",
     "natural_tuple_over_range"),
    ("enumerate_2d", "x * 2.0)", "`enumerate` takes arrays, slices of arrays", "natural_enumerate_2d"),
    ("enumerate_runtime_start", "start)", "the start of `enumerate` must be an integer constant",
     "natural_enumerate_runtime_start"),
    ("zip_outside_loop", "zip(x[0, :], x[1, :])", "`zip` can only be used as the iterator of a `for` loop",
     "natural_zip_outside_loop"),
    ("keyword_typo", "decimal=2", "`np.round` has no parameter `decimal`", "natural_keyword_typo"),
    ("keyword_twice", "a=1.0", "`scaled` got multiple values for argument `a`", "natural_keyword_twice"),
    ("axis_out_of_bounds", "1)", "axis 1 is out of bounds for array of dimension 1",
     "natural_axis_out_of_bounds"),
    ("ufunc_operand_by_name", "x=x[i, 0]", "`np.sqrt` takes no keyword argument `x`",
     "natural_ufunc_operand_by_name"),
    ("none_as_value", "a * s", "`a` is None here", "natural_none_as_value"),
    ("rebound_other_shape", "x[i, 1:] * 2.0", "`e` is re-bound to an array of another shape or type",
     "natural_rebound_other_shape"),
    ("array_rebound_to_number", "y[i] * 1.0", "`d` holds an array; parpy cannot re-bind it to a number",
     "natural_array_rebound_to_number"),
    ("view_of_rebound", "x[i, :] - 3.0", "`h` is a view of `e`, which is re-bound here",
     "natural_view_of_rebound"),
    ("tuple_of_names", "N + 0", "the items of the list of this loop are of different types: "
     "a Python float and a Python int",
     "natural_tuple_of_names"),
    ("tuple_ragged", "(1, 0.5, 2.0)", "this element has 3 values, the loop target 2 names",
     "natural_tuple_ragged"),
    ("pair_as_one_value", "pair(x[i, 0])", "`pair` returns 2 values: unpack them where it is called",
     "natural_pair_as_one_value"),
    ("pair_into_three", "pair(x[i, 1])", "cannot unpack 2 values into 3 targets",
     "natural_pair_into_three"),
    ("assert_message_of_an_array", "x[i, :]}",
     "a field of the message of an `assert` or a `raise` must be a number",
     "natural_assert_message_of_an_array"),
    ("axis_left_in_an_element", "np.max(x[1:3, :], axis=0)",
     "`max` with this axis leaves 1 dimension (an array), but it is not assigned to a slice",
     "natural_axis_left_in_an_element"),
    ("matmul_of_an_expression", "np.max(x, axis=0, keepdims=True)",
     "`@` with a matrix on the right takes a left operand built elementwise from arrays",
     "natural_matmul_of_an_expression"),
    ("newaxis_as_a_value", "np.newaxis", "`np.newaxis` cannot be used as a value",
     "natural_newaxis_as_a_value"),
    ("two_ellipses", "...]", "an index can only have a single ellipsis (`...`)",
     "natural_two_ellipses"),
    ("fill_as_a_value", "x[i, :].fill(0.0)", "`.fill(v)` is a statement of its own",
     "natural_fill_as_a_value"),
    ("outer_of_a_matrix", "x * 2.0,", "`np.outer` takes 1-D operands in parpy functions",
     "natural_outer_of_a_matrix"),
    ("attribute_of_an_element", "x[i, 0].real", "attribute `real` of an expression cannot be used here",
     "natural_attribute_of_an_element"),
    ("print_in_a_kernel", "print(i", "cannot call `print`", "natural_print_in_a_kernel"),
    ("matmul_of_a_number", "2.0)\n", "`@` of a number", "natural_matmul_of_a_number"),
    ("flip_of_a_run_time_slice", "x[i, i:2 * i])",
     "this use of a slice with run-time bounds is not supported",
     "natural_flip_of_a_run_time_slice"),
    ("run_time_slice_with_a_row", "x[i, :i] * x[0]",
     "`np.sum` combines a slice with run-time bounds with an array of a length known when compiling",
     "natural_run_time_slice_with_a_row"),
    ("histogram_of_edges", "np.histogram(x[i, :], x[0, :])",
     "`np.histogram` is supported as the value of an assignment", "natural_histogram_of_edges"),
    ("histogram_weights", "x[i, :4]",
     "weights should have the same shape as a.",
     "natural_histogram_weights"),
    ("pad_mode_unsupported", "'linear_ramp'", "`np.pad` with mode 'linear_ramp' is not supported",
     "natural_pad_mode_unsupported"),
    ("pad_negative_width", "-2)", "index can't contain negative values",
     "natural_pad_negative_width"),
    ("pad_run_time_width", "i))", "the widths of `np.pad` must be integers known when compiling",
     "natural_pad_run_time_width"),
    ("print_of_an_f_string", "print(f", "cannot call `print`", "natural_print_of_an_f_string"),
])
def test_natural_python_errors(fn, needle, first, snap):
    text = compile_error("natural", fn, natural_args(), cpu_opts())
    assert first in text.splitlines()[0], text
    assert_points_at(text, "natural", needle)
    check_snapshot(snap, text)


# --------------------------------------------------------------------------
# re-binding a local to a type that no integer type shares with its first


def test_rebinding_without_integer_join_points_at_both_assignments():
    args = [np.arange(4, dtype=np.int64), np.zeros(4, np.int64), 4]
    text = compile_error("rebinding", "rebind_signedness", args, cpu_opts())
    assert "variable `v` holds `i64` values but this assigns a `u64`" in text.splitlines()[0]
    assert_points_at(text, "rebinding", "parpy.builtin.convert(i, parpy.types.U64)")
    assert_points_at(text, "rebinding", "v = x[i]", mark="-")
    check_snapshot("rebinding_no_join", text)


@parpy.jit
def positive_part(a):
    if a > 0.0:
        return a


@parpy.jit
def clamp_or_fail(a):
    if a > 0.0:
        return a
    raise ValueError("negative")


@parpy.jit
def apply_helper(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = positive_part(x[i])


@parpy.jit
def apply_raising_helper(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = clamp_or_fail(x[i])


def test_a_helper_that_may_end_without_return_is_refused():
    # Python's `positive_part(-2.0)` is None; the compiled helper returned
    # whatever its register held (the last row's value)
    x = np.array([1.0, -2.0, 3.0, -4.0])
    with pytest.raises(parpy.CompileError) as e:
        apply_helper(x, np.zeros(4), 4, opts=cpu_opts({'N': parpy.threads(2)}))
    text = str(e.value)
    assert "this helper returns a value here but may end without `return`" in text
    assert "return a" in text and "end the helper with `return value`" in text
    # one that raises where it would fall off is fine
    y = np.zeros(3)
    apply_raising_helper(np.array([1.0, 2.0, 3.0]), y, 3, opts=cpu_opts({'N': parpy.threads(2)}))
    assert y.tolist() == [1.0, 2.0, 3.0]


@parpy.jit
def poke_far(x):
    x[2 ** 64] = 7.0


@parpy.jit
def peek_far(x, y):
    y[0] = x[-2 ** 64 + 2]


def test_an_index_past_64_bits_is_out_of_bounds():
    # (before: the literal wrapped, and `x[2**64] = 7.0` wrote x[0])
    for fn, args, shown in [(poke_far, [np.zeros(4)], "index 18446744073709551616 "),
                            (peek_far, [np.zeros(4), np.zeros(1)],
                             "index -18446744073709551614 ")]:
        with pytest.raises(parpy.CompileError) as e:
            parpy.print_compiled(fn, args, cpu_opts())
        assert shown in str(e.value) and "out of bounds for dimension 0" in str(e.value)


@parpy.jit
def first_big(x, y, N, M):
    parpy.label('N')
    for i in range(N):
        for j in range(M):
            if x[i, j] > 0.8:
                break
        y[i] = j


def test_a_loop_variable_read_after_its_loop_is_explained():
    # (before: "did you mean `M`?", which pointed the wrong way)
    with pytest.raises(parpy.CompileNameError) as e:
        parpy.print_compiled(first_big, [np.zeros((2, 3)), np.zeros(2, np.int64), 2, 3],
                             cpu_opts({'N': parpy.threads(2)}))
    text = str(e.value)
    assert "`j` is the variable of a loop above" in text and "did you mean" not in text
    assert "assign `j` before the loop (`j = 0`)" in text


@parpy.jit
def transposed_twice(x, y, N):
    parpy.label('N')
    y[:, :] = x.T.T


def test_a_transpose_of_a_transpose_says_what_to_write():
    # (before: "only `.T`, ... are supported", which contradicted itself)
    with pytest.raises(parpy.CompileError) as e:
        parpy.print_compiled(transposed_twice, [np.zeros((2, 2)), np.zeros((2, 2)), 2],
                             cpu_opts({'N': parpy.threads(2)}))
    assert "`.T` of `.T` is the array itself: write `x`" in str(e.value)


@parpy.jit
def pair_or_number(a):
    if a > 0.5:
        return a, a
    return a


@parpy.jit
def stores_a_mixed_return(x, N):
    for i in range(N):
        x[i] = pair_or_number(x[i])


def test_a_helper_returning_a_pair_here_and_a_number_there_is_an_error():
    # (compiled code stored 0.0 where Python raises)
    with pytest.raises(parpy.CompileError) as e:
        stores_a_mixed_return(np.array([0.25, 0.75]), 2, opts=cpu_opts())
    text = str(e.value)
    assert text.splitlines()[0] == "error: `pair_or_number` returns a tuple of 2 here and one value there", text
    assert "return a, a" in text and "test_errors.py:" in text


@parpy.jit
def chained_on_a_row(x, y, N):
    for i in range(N):
        y[i] = np.sum(0.0 < x[i, :] < 0.5)


def test_a_chained_comparison_of_arrays_is_pythons_value_error():
    # (`a < b < c` reads the truth of `a < b`: compiled code ANDed the rows)
    with pytest.raises(parpy.CompileError, match="the truth value of an array with more than one element is ambiguous"):
        chained_on_a_row(np.zeros((2, 3)), np.zeros(2), 2, opts=cpu_opts())


@parpy.jit
def min_with_initial(x, y, N):
    for i in range(N):
        y[i] = x[i, :].min(where=x[i, :] > 0)


@parpy.jit
def scaled(v, s=2.0):
    return v * s


@parpy.jit
def row_into_a_number(x, y, N):
    for i in range(N):
        y[i] = scaled(x[i])


@pytest.mark.parametrize("fn,first", [
    # (it said "`this function` has no parameter")
    (min_with_initial, "error: `.min()` with `where=` needs `initial=`"),
    # (it named the inlined view `x#2.0`)
    (row_into_a_number, "error: `x` has 2 dimensions but 1 index was given"),
])
def test_messages_name_what_the_user_wrote(fn, first):
    with pytest.raises(parpy.CompileError) as e:
        fn(np.ones((2, 3)), np.zeros(2), 2, opts=cpu_opts())
    assert str(e.value).splitlines()[0] == first, str(e.value)


@parpy.jit
def divmod_by_zero(x, y, N):
    for i in range(N):
        y[i] = divmod(x[i], 0)[0]


def test_an_error_of_a_statement_lowered_twice_is_reported_once():
    # (divmod's two results each reported the zero divisor)
    with pytest.raises(parpy.CompileError) as e:
        divmod_by_zero(np.ones(4), np.zeros(4), 4, opts=cpu_opts())
    assert str(e.value).count("error: division by zero") == 1, str(e.value)


SHADOWED_RANGE = '''\
import parpy

def range(n):
    return [0] * n

@parpy.jit
def f(x, N):
    for i in range(N):
        x[i] = i
'''


def test_a_module_level_range_is_named_as_the_shadow_it_is(tmp_path):
    # (it said "not a `range` call ... help: write `for i in range(n):`",
    # which is what the function says)
    path = tmp_path / "shadowed_range.py"
    path.write_text(SHADOWED_RANGE)
    spec = importlib.util.spec_from_file_location("shadowed_range", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(parpy.CompileError) as e:
        mod.f(np.zeros(4), 4, opts=cpu_opts())
    text = str(e.value)
    assert text.splitlines()[0] == "error: `range` here is not Python's builtin `range`", text
    assert "`range` names a Python function of the module here" in text, text
    assert "write `for i in range(n):`" not in text, text


# --------------------------------------------------------------------------
# values of other types from two paths: a conditional expression, a
# helper's returns, a local that starts as a Python number


def test_conditional_of_two_types_names_both_sides():
    args = [np.array([3, -2], np.int8), np.zeros(2), 2]
    text = compile_error("rebinding", "conditional_of_two_types", args, cpu_opts())
    assert ("this conditional expression gives a value of type `int8` on one path "
            "and a Python float on another") in text.splitlines()[0], text
    assert_points_at(text, "rebinding", "x[i] if")
    assert_points_at(text, "rebinding", "1.5) * 100", width=3, mark="-")
    check_snapshot("rebinding_conditional_of_two_types", text)


def test_helper_returning_two_types_names_both_returns():
    args = [np.array([3, -2], np.int8), np.zeros(2), 2]
    text = compile_error("rebinding", "helper_of_two_types", args, cpu_opts())
    assert ("`half_or_value` returns a value of type `int8` on one path "
            "and a Python float on another") in text.splitlines()[0], text
    check_snapshot("rebinding_helper_of_two_types", text)


@pytest.mark.parametrize("backend", ["Cpu", "Cuda", "Metal"])
def test_helper_returning_an_int_and_a_float_is_one_type_error_on_every_backend(backend):
    # (the GPUs inline the helper into code without a parallel loop; its
    # early return was an error about the hidden `return#value`)
    from conftest import backend_opts
    mod = load("rebinding")
    fn = parpy.jit(mod.host_helper_of_int_and_float)
    x = np.arange(-2, 6).astype(np.float32)
    opts = backend_opts(getattr(parpy.CompileBackend, backend))
    with pytest.raises(parpy.CompileError) as info:
        parpy.print_compiled(fn, [x, 8], opts)
    text = str(info.value)
    assert isinstance(info.value, TypeError), text
    assert ("`int_or_float` returns a Python int on one path "
            "and a Python float on another") in text.splitlines()[0], text
    assert "#" not in text, text
    if backend == "Cuda":
        check_snapshot("rebinding_inlined_helper_of_int_and_float", text)


@pytest.mark.parametrize("backend", ["Cuda", "Metal"])
def test_an_inlined_helpers_returns_a_float32_cannot_join_name_the_helper(backend):
    from conftest import backend_opts
    mod = load("rebinding")
    fn = parpy.jit(mod.host_helper_of_huge_or_value)
    x = np.arange(-2, 6).astype(np.float32)
    opts = backend_opts(getattr(parpy.CompileBackend, backend))
    with pytest.raises(parpy.CompileError) as info:
        parpy.print_compiled(fn, [x, 8], opts)
    text = str(info.value)
    assert text.startswith("error: `huge_or_value` returns a value of type `float32`"), text
    assert "#" not in text, text


def test_a_slice_target_of_a_tuple_assignment_is_its_one_error():
    args = [np.arange(8.0).reshape(2, 4), 2]
    text = compile_error("rebinding", "rotate_rows", args, cpu_opts())
    assert text.splitlines()[0] == "error: slices cannot be targets of a multiple assignment", text
    assert text.count("error:") == 1, text
    assert_points_at(text, "rebinding", "x[i, 1:], x[i, 0]", width=8)
    check_snapshot("rebinding_slice_target_of_a_tuple_assignment", text)


def test_local_from_a_literal_the_data_does_not_hold_names_both():
    args = [np.array([[0, 7, 200], [1, 2, 3]], np.uint8), np.zeros(2, np.int64), 2]
    text = compile_error("rebinding", "running_max_from_minus_one", args, cpu_opts())
    assert ("`best` is assigned a value of type `uint8` on one path and the Python int -1 "
            "on another") in text.splitlines()[0], text
    assert_points_at(text, "rebinding", "x[i, c]\n", mark="-")
    check_snapshot("rebinding_literal_not_held", text)


# --------------------------------------------------------------------------
# a Python error that a statement certain to run raises, found when
# compiling: a CompileError of Python's class too (probe 113; before: a
# plain CompileError, where Python and the unspecialized build raise
# IndexError / OverflowError / ValueError)

@pytest.mark.parametrize("fn,args,cls,base,needle,first,snap", [
    ("index_past_the_end", [np.zeros(4), 10], parpy.CompileIndexError, IndexError, "k]",
     "index 10 is out of bounds for dimension 0 of `x` (size 4)", "certain_index_past_the_end"),
    ("python_int_into_int8", [np.zeros(2, np.int8), 300], parpy.CompileOverflowError, OverflowError,
     "a\n", "Python integer 300 out of bounds for int8", "certain_python_int_into_int8"),
    ("nan_into_int8", [np.zeros(2, np.int8), float("nan")], parpy.CompileValueError, ValueError,
     "a\n", "cannot convert float NaN to integer", "certain_nan_into_int8"),
])
def test_a_certain_python_error_has_pythons_class(fn, args, cls, base, needle, first, snap):
    mod = load("certain")
    with pytest.raises(cls) as info:
        parpy.jit(getattr(mod, fn))(*args, opts=cpu_opts())
    assert isinstance(info.value, base) and isinstance(info.value, parpy.CompileError)
    text = str(info.value)
    assert text.splitlines()[0] == f"error: {first}", text
    assert_points_at(text, "certain", needle, occurrence=0 if needle == "k]" else
                     ["python_int_into_int8", "nan_into_int8"].index(fn))
    check_snapshot(snap, text)


@pytest.mark.parametrize("a", [1, -1])
def test_a_python_int_past_128_bits_does_not_fit(a):
    # (before: `1 << 1000` and `-1 << 1000` silently gave 0)
    text = compile_error("certain", "shift_past_128_bits", [a, 1000, np.zeros(1, np.int64)],
                         cpu_opts())
    assert text.splitlines()[0] == \
        "error: this Python int is at least 2**127 in size, which does not fit in 64 bits", text
    assert_points_at(text, "certain", "a << b")
    check_snapshot(f"certain_shift_past_128_bits_{'neg' if a < 0 else 'pos'}", text)
