"""Bounds checks and 64-bit index arithmetic (issue 10, items 1-2).

Indices proven in range cost nothing (no check in the code); the others are
checked at run time and a failure is an IndexError naming the array, the
index, the shape and the source line. Negative indices count from the end as
in NumPy, whether their value is known at compile time or not.

tests/test_cuda_programs.py re-collects every test here for the Cuda backend
(`cpu_opts`, `run_both` and `expect_index_error` swapped), so the GPU check
runs them on a GPU and every machine compiles them to a cubin.
"""

import os

import re

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both

pytestmark = pytest.mark.timeout(120)


def expect_index_error(fn, args, opts, *words):
    """`fn(*args, opts=opts)` raises IndexError with each of `words` in
    its message."""
    with pytest.raises(IndexError) as e:
        fn(*args, opts=opts)
    for w in words:
        assert w in str(e.value), str(e.value)


def call(fn, args, opts):
    """Runs `fn(*args, opts=opts)`; returns whether it ran (the Cuda dry run
    of test_cuda_programs only compiles)."""
    fn(*args, opts=opts)
    return True


def runs_compile_string(opts):
    """compile_string can build and run the printed code here."""
    if opts.backend != parpy.CompileBackend.Cuda:
        return True
    return (parpy.backend.is_enabled(parpy.CompileBackend.Cuda)
            and os.environ.get("PARPY_TEST_NO_NVCC") != "1")


def code_of(fn, args, opts):
    return parpy.print_compiled(fn, args, opts)


@parpy.jit
def shifted(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i + 5] = x[i]


def test_a_store_past_the_end_raises():
    x = np.arange(10, dtype=np.float32)
    y = np.zeros(10, np.float32)
    opts = cpu_opts({'i': parpy.threads(4)})
    line = open(__file__).read().split("\n").index("        y[i + 5] = x[i]") + 1
    # one check of the last index, 9 + 5, in front of the loop
    expect_index_error(shifted, [x, y, 10], opts,
                       "index 14 ", "axis 0 of `y`", "shape (10,)", f"test_bounds.py:{line}",
                       "y[i + 5] = x[i]")


def test_a_proven_index_has_no_check():
    x = np.arange(10, dtype=np.float32)
    y = np.zeros(10, np.float32)
    opts = cpu_opts({'i': parpy.threads(4)})
    assert "parpy_check" not in code_of(shifted, [x, y, 5], opts)
    run_both(shifted, [x, y, 5], opts)


@parpy.jit
def scale(x, y, n, a):
    parpy.label('i')
    for i in range(n):
        y[i] = x[i] * a


def test_a_runtime_loop_bound_is_checked_once_in_front_of_the_loop():
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    opts = cpu_opts({'i': parpy.threads(4)}, specialize_scalars=False)
    code = code_of(scale, [x, y, 16, 2.0], opts)
    body = [ln for ln in code.splitlines() if "y[i] = " in ln]
    assert body and not any("parpy_check_index" in ln for ln in body), code
    assert "parpy_check_index(n - 1, 16" in code, code
    run_both(scale, [x, y, 16, 2.0], opts)
    run_both(scale, [x, y, 0, 2.0], opts)
    expect_index_error(scale, [x, y, 17, 2.0], opts, "index 16 ", "shape (16,)")


@parpy.jit
def shifted_if(x, y, N):
    parpy.label('i')
    for i in range(N):
        if x[i] > 100.0:
            y[i + 5] = x[i]


def test_a_conditional_access_is_checked_only_when_it_runs():
    x = np.arange(10, dtype=np.float32)
    y = np.zeros(10, np.float32)
    opts = cpu_opts({'i': parpy.threads(4)})
    run_both(shifted_if, [x, y, 10], opts)
    x[7] = 1000.0
    expect_index_error(shifted_if, [x, y, 10], opts, "index 12 ", "`y`")


@parpy.jit
def gather(x, y, idx):
    parpy.label('i')
    for i in range(3):
        y[i] = x[idx[i]]


def test_indices_read_from_an_array_are_checked():
    x = np.arange(10, dtype=np.float32)
    y = np.zeros(3, np.float32)
    opts = cpu_opts({'i': parpy.threads(3)})
    # negative indices count from the end, as in NumPy
    run_both(gather, [x, y, np.array([0, -1, -10], np.int64)], opts)
    expect_index_error(gather, [x, y, np.array([0, 12, 1], np.int64)], opts,
                       "index 12 ", "`x`", "shape (10,)")
    # the message gives the index the program computed, as NumPy's does
    # (it said -1, the index after counting from the end)
    expect_index_error(gather, [x, y, np.array([0, -11, 1], np.int64)], opts,
                       "index -11 is out of bounds for axis 0 of `x`")
    expect_index_error(gather, [x, y, np.array([0, 1, -20], np.int64)], opts,
                       "index -20 is out of bounds for axis 0 of `x`")
    # far away: an IndexError, not a crash
    expect_index_error(gather, [x, y, np.array([10**12, 0, 1], np.int64)], opts,
                       f"index {10**12} ")


def test_bounds_check_off_removes_the_checks():
    x = np.arange(10, dtype=np.float32)
    y = np.zeros(3, np.float32)
    opts = cpu_opts({'i': parpy.threads(3)}, bounds_check=False)
    idx = np.array([0, -1, 4], np.int64)
    code = code_of(gather, [x, y, idx], opts)
    assert "parpy_check" not in code and "parpy-bounds" not in code
    run_both(gather, [x, y, idx], opts)
    assert cpu_opts().bounds_check is True


@parpy.jit
def read_at(x, y, k):
    with parpy.gpu:
        y[0] = x[k]


def test_runtime_scalar_indices_wrap_and_are_checked():
    x = np.arange(10, dtype=np.float32)
    y = np.zeros(1, np.float32)
    opts = cpu_opts(specialize_scalars=False)
    run_both(read_at, [x, y, -1], opts)
    run_both(read_at, [x, y, 9], opts)
    expect_index_error(read_at, [x, y, 10], opts, "index 10 ", "`x`")
    expect_index_error(read_at, [x, y, -11], opts, "index -11 is out of bounds for axis 0 of `x`")


@parpy.jit
def stencil(x, y, N):
    parpy.label('i')
    for i in range(N):
        if i > 0 and i < N - 1:
            y[i] = x[i - 1] + x[i + 1]


def test_guarded_stencil_is_proven():
    x = np.arange(16, dtype=np.float64)
    y = np.zeros(16)
    opts = cpu_opts({'i': parpy.threads(4)})
    code = code_of(stencil, [x, y, 16], opts)
    assert "parpy_check" not in code and "< 0 ?" not in code
    run_both(stencil, [x, y, 16], opts)


@parpy.jit
def pick(x, k):
    return x[k]


@parpy.jit
def via_helper(x, y, idx):
    parpy.label('i')
    for i in range(3):
        y[i] = pick(x, idx[i])


def test_a_check_in_a_helper_reaches_the_caller():
    x = np.arange(10, dtype=np.float32)
    y = np.zeros(3, np.float32)
    opts = cpu_opts({'i': parpy.threads(3)})
    run_both(via_helper, [x, y, np.array([1, -2, 3], np.int64)], opts)
    expect_index_error(via_helper, [x, y, np.array([1, 2, 30], np.int64)], opts,
                       "index 30 ", "`x`", "return x[k]")


def test_compile_string_reports_the_failed_check():
    x = np.arange(10, dtype=np.float32)
    y = np.zeros(3, np.float32)
    opts = cpu_opts({'i': parpy.threads(3)})
    idx = np.array([0, 1, 2], np.int64)
    code = code_of(gather, [x, y, idx], opts)
    assert "// parpy-bounds: is out of bounds for axis 0 of `x`" in code
    if not runs_compile_string(opts):
        return
    built = parpy.compile_string("gather", code, opts)
    built(x, y, idx)
    np.testing.assert_array_equal(y, x[:3])
    with pytest.raises(IndexError, match="index 11 is out of bounds for axis 0 of `x`"):
        built(x, y, np.array([0, 11, 2], np.int64))


@parpy.jit
def corner(x, y):
    with parpy.gpu:
        y[0] = x[65536, 32767]


def test_offsets_past_2_31_elements_are_64_bit():
    # 2^31 + 32768 bytes of zeros: mapped lazily, only one page is touched
    x = np.zeros((65537, 32768), np.int8)
    x[65536, 32767] = 7
    y = np.zeros(1, np.int8)
    opts = cpu_opts()
    code = code_of(corner, [x, y], opts)
    assert "x[65536 * 32768" not in code, code
    if call(corner, [x, y], opts):
        assert y[0] == 7


@parpy.jit
def corner_at(x, y, i, j):
    with parpy.gpu:
        y[0] = x[i, j]


def test_int32_indices_into_a_wide_array_are_widened():
    x = np.zeros((65537, 32768), np.int8)
    x[65536, 32767] = 5
    y = np.zeros(1, np.int8)
    opts = cpu_opts(force_int_size=32, specialize_scalars=False)
    code = code_of(corner_at, [x, y, 65536, 32767], opts)
    assert "(int64_t)" in code or "(long)" in code, code
    if call(corner_at, [x, y, 65536, 32767], opts):
        assert y[0] == 5


def test_int32_indices_cannot_reach_past_2_31_elements():
    x = np.zeros(2**31 + 8, np.int8)
    y = np.zeros(1, np.int8)
    opts = cpu_opts(force_int_size=32)
    with pytest.raises(parpy.CompileError, match="force_int_size=32"):
        code_of(corner_at, [x.reshape(1, -1), y, 0, 2**31 + 1], opts)


@parpy.jit
def add_scalar(x, k, N):
    parpy.label('N')
    for i in range(N):
        x[i] = x[i] + k


def test_a_python_int_argument_beyond_the_forced_int_size_names_the_argument():
    # (`2**40` as force_int_size=32's int32 wrapped to 0: `x[i] + k` was x)
    x = np.zeros(4, np.int64)
    opts = cpu_opts({'N': parpy.threads(4)}, force_int_size=32)
    with pytest.raises(parpy.CompileError, match="Python integer 1099511627776 out of bounds "
                       "for int32: the argument `k` of `add_scalar`"):
        add_scalar(x, 2**40, 4, opts=opts)
    add_scalar(x, -2**31, 4, opts=opts)
    assert x.tolist() == [-2**31] * 4


@pytest.mark.parametrize('k', [2**40, -2**31 - 1, 2**31])
def test_an_unspecialized_python_int_beyond_the_forced_int_size_is_an_overflow_error(k):
    # (read at run time as `(int32_t)*(int64_t *)args[k]`, 2**40 wrapped to 0)
    x = np.zeros(4, np.int64)
    opts = cpu_opts({'N': parpy.threads(4)}, force_int_size=32, specialize_scalars=False)
    with pytest.raises(OverflowError, match=f"Python integer {k} out of bounds for int32: "
                       "the argument `k` of `add_scalar`"):
        add_scalar(x, k, 4, opts=opts)
    assert x.tolist() == [0] * 4
    for ok in (2**31 - 1, -2**31):
        add_scalar(x, ok, 4, opts=opts)
    assert x.tolist() == [2**31 - 1 - 2**31] * 4
    # a NumPy int64 keeps its type and is not narrowed
    add_scalar(x, np.int64(2**40), 4, opts=opts)
    assert x.tolist() == [2**40 - 1] * 4


def test_compile_string_checks_an_int32_parameter_of_the_printed_code():
    opts = cpu_opts({'N': parpy.threads(4)}, force_int_size=32, specialize_scalars=False)
    x = np.zeros(4, np.int64)
    code = parpy.print_compiled(add_scalar, [x, 3, 4], opts)
    f = parpy.compile_string('add_scalar', code, opts)
    with pytest.raises(OverflowError, match="Python integer 1099511627776 out of bounds for "
                       "int32: the argument `k` of `add_scalar`"):
        f(x, 2**40, 4)
    f(x, 3, 4)
    assert x.tolist() == [3] * 4


def test_a_wrapped_index_is_read_once():
    # `x[idx[i]]` with a possibly negative index: one check that counts
    # from the end, not `idx[i] < 0 ? idx[i] + 10 : idx[i]` with three reads
    x = np.arange(10, dtype=np.float32)
    y = np.zeros(3, np.float32)
    opts = cpu_opts({'i': parpy.threads(3)})
    code = code_of(gather, [x, y, np.array([0, -1, 4], np.int64)], opts)
    # (on Cuda a check in a kernel's innermost loop records after the loop:
    # `parpy_check_wrap_index_d`)
    assert re.search(r"parpy_check_wrap_index(_d)?\(idx\[", code), code
    kernels = code[code.find("__global__"):] if "__global__" in code else code
    assert "< 0 ?" not in kernels, code


@parpy.jit
def csr_rows(rows, cols, vals, x, y, N):
    parpy.label('N')
    for i in range(N):
        acc = 0.0
        for k in range(rows[i], rows[i + 1]):
            acc += vals[k] * x[cols[k]]
        y[i] = acc


def csr_args(rows, cols):
    rng = np.random.default_rng(7)
    rows = np.array(rows, np.int64)
    cols = np.array(cols, np.int64)
    return [rows, cols, rng.standard_normal(len(cols)), rng.standard_normal(6),
            np.zeros(len(rows) - 1), len(rows) - 1]


def test_a_loop_with_runtime_bounds_runs_unchecked_when_they_are_in_range():
    # Cpu: `for k in range(rows[i], rows[i + 1])` gets a copy without the
    # checks of vals[k] and cols[k], run when rows[i] >= 0 and
    # rows[i + 1] <= len(vals); x[cols[k]] stays checked in both
    opts = cpu_opts({'N': parpy.threads(2)})
    args = csr_args([0, 2, 2, 5, 8], [0, 5, 1, 2, 3, 4, 0, 5])
    run_both(csr_rows, args, opts)
    if opts.backend == parpy.CompileBackend.Cpu:
        code = code_of(csr_rows, args, opts)
        assert "if (rows[i] >= 0 && rows[i + 1] <= 8) {" in code, code
        fast = code.split("if (rows[i] >= 0")[1].split("} else {")[0]
        assert "vals[k] * x[parpy_check_wrap_index_d(cols[k], 6," in fast, fast


def test_a_loop_with_runtime_bounds_still_wraps_and_raises():
    opts = cpu_opts({'N': parpy.threads(2)})
    # negative bounds count from the end, as NumPy's vals[k] does
    run_both(csr_rows, csr_args([-8, -6, 0, 3], [0, 1, 2, 3, 4, 5, 0, 1]), opts)
    # past the end of vals: the checked copy raises
    expect_index_error(csr_rows, csr_args([0, 4, 9], [0, 1, 2, 3, 4, 5, 0, 1]), opts,
                       "index 8", "`vals`", "(8,)")
    # a bad column in the unchecked copy is still caught
    expect_index_error(csr_rows, csr_args([0, 4, 8], [0, 1, 2, 3, 4, 5, 6, 1]), opts,
                       "index 6", "`x`", "(6,)")


def test_the_first_bad_index_of_a_loop_is_the_one_reported():
    # row 1 reads x[7] and then x[-9]: the error names 7, the first in loop
    # order, also on Cuda, where the checks of an innermost kernel loop
    # record after the loop
    opts = cpu_opts({'N': parpy.threads(2)})
    expect_index_error(csr_rows, csr_args([0, 2, 5], [0, 1, 2, 7, -9]), opts,
                       "index 7", "`x`", "(6,)")
    expect_index_error(csr_rows, csr_args([0, 2, 5], [0, 1, 2, 3, -9]), opts,
                       "index -9", "`x`", "(6,)")


def test_checks_in_an_innermost_loop_record_after_it():
    # Cuda: no branch to the failure path inside the loop (a select and the
    # first failure kept in registers), so NVRTC unrolls it as the unchecked
    # loop; one record after the loop. Cpu: the same in the unchecked copy
    # of the row loop (a CSR SpMV ran 12% faster than with a branch per
    # check); its checked copy stops at a failure (below)
    opts = cpu_opts({'N': parpy.threads(2)})
    args = csr_args([0, 2, 2, 5, 8], [0, 5, 1, 2, 3, 4, 0, 5])
    run_both(csr_rows, args, opts)
    code = code_of(csr_rows, args, opts)
    if opts.backend == parpy.CompileBackend.Cuda:
        kernel = code[code.index("__global__"):]
        kernel = kernel[:kernel.index("\n}\n")]
        assert "parpy_check_wrap_index(" not in kernel, kernel
        assert ("x[parpy_check_wrap_index_d(cols[parpy_check_wrap_index_d(k, 8, 1, parpy_bad)], "
                "6, 2, parpy_bad)]") in kernel, kernel
        after = kernel.split("k += 1) {")[1].split("\n      }\n", 1)[1]
        assert after.lstrip().startswith("if (parpy_bad[0] >= 0) {"), kernel
    else:
        assert "x[parpy_check_wrap_index_d(cols[k], 6, 2, parpy_bad)]" in code, code
        assert code.count("if (parpy_bad[0] >= 0) {") == 1, code


@pytest.mark.timeout(120)
@pytest.mark.parametrize("end", [10**9, 2**62])
def test_a_loop_whose_bounds_run_past_an_array_stops_at_the_failure(end):
    # (garbage row pointers, `np.empty` ones: the checked copy of the CSR
    # loop read element 0 to the loop's end and raised after it, 2 s for
    # 10**9 steps, never for 2**62; Python raises at k = 8)
    opts = cpu_opts({'N': parpy.threads(2)})
    args = csr_args([0, end, 8], [0, 1, 2, 3, 4, 5, 0, 1])
    expect_index_error(csr_rows, args, opts, "index 8", "`vals`", "(8,)")
    code = code_of(csr_rows, args, opts)
    if opts.backend == parpy.CompileBackend.Cpu:
        checked = code.split("} else {")[1]
        assert "if (bounds[0] != 0) {" in checked, code


@parpy.jit
def runtime_nest(x, y, lo, hi, K):
    parpy.label('r')
    for r in range(2):
        for j in range(lo, hi):
            for k in range(K):
                y[r, j] += x[k]


def test_a_versioned_loop_keeps_the_checks_hoisted_inside_it():
    # the copy of `for j in range(lo, hi)` without the checks of y[r, j]
    # still checks x[k] (its last index, in front of the inner loop nest)
    opts = cpu_opts({'r': parpy.threads(2)}, specialize_scalars=False)
    run_both(runtime_nest, [np.ones(4), np.zeros((2, 8)), 1, 7, 4], opts)
    expect_index_error(runtime_nest, [np.ones(4), np.zeros((2, 8)), 0, 8, 6], opts,
                       "index 5", "`x`", "(4,)")
    expect_index_error(runtime_nest, [np.ones(4), np.zeros((2, 8)), 2, 9, 3], opts,
                       "index 8", "`y`", "(2, 8)")


@parpy.jit
def find_first_big(x, out, N):
    parpy.label('N')
    for i in range(N):
        j = 0
        while x[i, j] < 100.0:
            j += 1
        out[i] = j


@parpy.jit
def first_negative_per_row(x, out, N):
    parpy.label('N')
    for i in range(N):
        j = 0
        while x[i, j] >= 0.0:
            j += 1
        out[i] = j


@parpy.jit
def search_up_to(x, out, N, M):
    parpy.label('N')
    for i in range(N):
        out[i] = -1
        for j in range(M):
            if x[i, j] >= 100.0:
                out[i] = j
                break


def test_a_loop_whose_end_depends_on_what_it_reads_stops_at_a_failure():
    # the failed read yields element 0 (0.0 < 100): the loop must still end,
    # as Python's raises at index 5 (before, both loops ran forever)
    opts = cpu_opts({'N': parpy.threads(2)})
    x = np.arange(10.0).reshape(2, 5)
    expect_index_error(find_first_big, [x, np.zeros(2, np.int64), 2], opts,
                       "index 5 ", "axis 1 of `x`")
    x = np.array([[1.0, -1.0, 2.0], [1.0, 2.0, 3.0]])
    expect_index_error(first_negative_per_row, [x, np.zeros(2, np.int64), 2], opts,
                       "index 3 ", "axis 1 of `x`")


@pytest.mark.timeout(60)
def test_a_search_loop_stops_at_a_failure_not_at_its_end():
    # 2**40 steps of a search past the end of `x`: it stops at index 5
    # (before, it ran to its end, for hours)
    opts = cpu_opts({'N': parpy.threads(2)})
    x = np.arange(10.0).reshape(2, 5)
    expect_index_error(search_up_to, [x, np.zeros(2, np.int64), 2, 2 ** 40], opts, "index 5 ")


@parpy.jit
def put_at(x, k, v, N):
    parpy.label('N')
    for i in range(N):
        x[k[i]] = v


@parpy.jit
def put_through(x, b, k, v, N):
    parpy.label('N')
    for i in range(N):
        x[b[k[i]]] = v


@parpy.jit
def count_bins(h, b, N):
    parpy.label('N')
    for i in range(N):
        parpy.atomic.add(h, b[i], 1)


def test_a_store_out_of_bounds_writes_nothing():
    # the failed index yields 0 for reads; a store through it must not
    # write element 0 (nor an atomic update count there)
    opts = cpu_opts({'N': parpy.threads(2)})
    x = np.zeros(8)
    expect_index_error(put_at, [x, np.array([3, 20]), 42.0, 2], opts, "index 20 ")
    expect_index_error(put_at, [x, np.array([-9, 4]), 42.0, 2], opts, "index -9 ")
    if call(put_at, [x, np.array([-1, 2]), 7.0, 2], opts):
        assert x[0] == 0.0 and x[7] == 7.0 and x[2] == 7.0, x
    # an index that reads through a failed index (`b[0]` for `b[5]`, in
    # range) writes nothing either
    x = np.zeros(8)
    b = np.array([1, 3, 4])
    expect_index_error(put_through, [x, b, np.array([2, 5]), 42.0, 2], opts, "index 5 ", "`b`")
    if call(put_through, [x, b, np.array([2, 1]), 7.0, 2], opts):
        assert x[1] == 0.0 and x[3] == 7.0 and x[4] == 7.0, x
    h = np.zeros(4, np.int64)
    expect_index_error(count_bins, [h, np.array([1, 2, 9, 3]), 4],
                       cpu_opts({'N': parpy.threads(4)}), "index 9 ", "`h`")
    if call(count_bins, [h, np.array([1, 2, 0, 3]), 4], cpu_opts({'N': parpy.threads(4)})):
        # (bin 0 holds this call's one count; the counts of the failed call
        # stay in bins 1 to 3 on the Cpu, while Cuda copies nothing back
        # from a failed call)
        assert h[0] == 1 and h.tolist()[1:] in ([2, 2, 2], [1, 1, 1]), h


def run_isolated(tmp_path, body, timeout=30):
    """Runs `body` (a script that prints its findings) in a process of its
    own, killed after `timeout` seconds: a failed check that became a hang
    fails the test instead of hanging the suite. Returns its stdout."""
    import subprocess
    import sys
    script = tmp_path / "probe.py"    # parpy reads a function's source from its file
    script.write_text("import numpy as np, parpy\n" + body)
    try:
        r = subprocess.run([sys.executable, str(script)], capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"no answer in {timeout} s: the loop ran on after its failed check")
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


_COPY_TWICE = """
@parpy.jit
def copy_twice(a, b, N):
    parpy.label('i')
    for i in range(N):
        a[i] = b[i] * 2.0
o = parpy.par({'i': parpy.threads(2)}); o.backend = parpy.CompileBackend.Cpu
for N in (np.uint64(9), np.uint64(2**63), np.uint64(2**64 - 1), np.int64(2**63 - 1)):
    try:
        copy_twice(np.zeros(8), np.arange(8.0), N, opts=o)
        print("no error")
    except IndexError as e:
        print("IndexError", "`b`" in str(e))
code = parpy.print_compiled(copy_twice, [np.zeros(8), np.arange(8.0), np.uint64(2**63)], o)
print("front check", "parpy_check_index(" in code.split("static void copy_twice(")[1])
"""


def test_a_uint64_loop_bound_past_int64_is_checked_in_front_of_the_loop(tmp_path):
    # (a uint64 bound is clamped to INT64_MAX by a select, which the hoisting
    # took for a value that may change: no check in front of the loop, and
    # a parallel loop ran 2**63 iterations before its IndexError)
    out = run_isolated(tmp_path, _COPY_TWICE)
    assert out.split("\n")[:5] == ["IndexError True"] * 4 + ["front check True"], out


_DIV_INDEX = """
import time
@parpy.jit
def every_third(b, N, out):
    parpy.label('i')
    for i in range(N):
        out[i % 2] = b[i // 3] + b[(i + 1) >> 1] + b[2 * i // 5]
o = parpy.par({'i': parpy.threads(2)}); o.backend = parpy.CompileBackend.Cpu
o.specialize_scalars = False
for N in (24, 10**9, 2**62):
    try:
        out = np.zeros(2)
        every_third(np.arange(8.0), N, out, opts=o)
        print("ran", out.tolist())
    except IndexError as e:
        print("IndexError", "`b`" in str(e))
"""


def test_indices_monotone_in_the_counter_are_checked_in_front_of_the_loop(tmp_path):
    # (`b[i // 3]` in a parallel loop with a run-time bound was checked
    # per iteration and ran to the loop's end before raising: 2**62 never
    # returned)
    out = run_isolated(tmp_path, _DIV_INDEX)
    # N = 24: the last indices are 7, 12 and 9 -> the check fails too
    assert out.split("\n")[:3] == ["IndexError True"] * 3, out


@parpy.jit
def reshaped_read(x, idx, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = x.reshape(2, 3)[idx[i], 1]


def test_an_index_into_a_reshaped_view_names_the_index_the_axis_and_the_view():
    # (it said only "index out of bounds for a reshaped view of shape (2, 3)")
    opts = cpu_opts({'i': parpy.threads(2)})
    x = np.arange(6.0)
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 2"):
        reshaped_read.py_func(x, np.array([7, 0]), np.zeros(2), 2)
    expect_index_error(reshaped_read, [x, np.array([7, 0]), np.zeros(2), 2], opts,
                       "`reshaped_read`: index 7 is out of bounds for axis 0 of `x.reshape(2, 3)` "
                       "with shape (2, 3) (at ", "y[i] = x.reshape(2, 3)[idx[i], 1]")
    expect_index_error(reshaped_read, [x, np.array([0, -3]), np.zeros(2), 2], opts,
                       "index -1 is out of bounds for axis 0 of `x.reshape(2, 3)`")
    y = np.zeros(2)
    run_both(reshaped_read, [x, np.array([1, -2]), y, 2], opts)
