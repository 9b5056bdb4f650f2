"""ParPy language features (issue 12): helpers, labels, reductions, arrays.

Every program here runs on the Cpu backend against its plain-Python version
(`run_both`), and its Cuda and Metal output is compiled: NVRTC for the Cuda
device code, clang-19 as a syntax check for Metal (each skipped, saying why,
when the tool is missing; see test_cuda_codegen.py and test_metal_codegen.py).
"""

import numpy as np
import pytest

import parpy
from conftest import backend_opts, cpu_opts, run_both
from test_cuda_codegen import check_nvrtc, needs_nvrtc
from test_cuda_programs import HAS_GPU, cuda_opts, dry_run, run_three
from test_metal_codegen import assert_clang_ok, needs_clang

T = parpy.threads
rng = np.random.default_rng(12)


def rand(*shape, dtype=np.float32):
    return rng.random(shape).astype(dtype)


def cuda_code(fn, args, spec):
    return parpy.print_compiled(fn, args, backend_opts(parpy.CompileBackend.Cuda, spec))


def metal_code(fn, args, spec):
    return parpy.print_compiled(fn, args, backend_opts(parpy.CompileBackend.Metal, spec))


# --------------------------------------------------------------------------
# 1. helper specializations are printed after the helpers they call


@parpy.jit
def square(x):
    return x * x


@parpy.jit
def add(x, y):
    return x + y


@parpy.jit
def add_then_square(x):
    # calls `add` and a second specialization of `square`: both must be
    # printed before this helper
    return add(x, 1.0) + square(x)


@parpy.jit
def helper_chain(a, out, N):
    parpy.label('N')
    for i in range(N):
        out[i] = square(a[i]) + square(2)
        out[i] = add(add(out[i], a[i]), a[i]) + add_then_square(a[i])


# --------------------------------------------------------------------------
# 3. several labels on one slice statement; one label on a reduction covers
#    all its dimensions


@parpy.jit
def stencil_2d(A, B):
    # 'j' (the last label) is the innermost sliced dimension, 'i' the outer
    parpy.label('i')
    parpy.label('j')
    B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[:-2, 1:-1]
                           + A[2:, 1:-1])


@parpy.jit
def inner_label_only(A, B):
    parpy.label('j')
    B[:, :] = A[:, :] * 2.0


@parpy.jit
def sum_planes(x, out):
    parpy.label('i')
    for i in range(x.shape[0]):
        parpy.label('r')
        out[i] = parpy.operators.sum(x[i, :, :])


# --------------------------------------------------------------------------
# 4. a labelled reduction at the top level (on a GPU: a reduction kernel,
#    then a one-thread kernel stores the result)


@parpy.jit
def top_sum(x, out):
    parpy.label('r')
    out[0] = parpy.reduce.sum(x[:])


@parpy.jit
def top_max_2d(x, out):
    parpy.label('r')
    out[0] = parpy.reduce.max(x[:, :])


@parpy.jit
def top_min_prod(x, out):
    parpy.label('r')
    out[0] = parpy.reduce.min(x[:]) + 1.0
    parpy.label('r')
    out[1] = parpy.operators.prod(x[:])


@parpy.jit
def top_sum_then_scale(x, out, N):
    parpy.label('r')
    s = parpy.reduce.sum(x[:, :])
    parpy.label('N')
    for i in range(N):
        out[i] = x[i, 0] / s


# --------------------------------------------------------------------------
# 9./10. inlined helpers: parpy.builtin.inline, labels inside helpers, rows
#        and slices passed to helpers, values returned by helpers with loops


@parpy.jit
def add_row(x, y, M):
    parpy.label('1d')
    y[:] += x[:]


@parpy.jit
def add_rows(x, y, N, M):
    parpy.label('2d')
    for i in range(N):
        parpy.builtin.inline(add_row(x[i], y[i], M))


@parpy.jit
def add_rows_implicit(x, y, z, N, M):
    # a helper with labels is inlined without being asked
    parpy.label('2d')
    for i in range(N):
        add_row(x[i], y[i, :], M)
        add_row(y[i], z[i], M)


@parpy.jit
def add_planes(x, y, N, M, K):
    parpy.label('3d')
    for i in range(N):
        parpy.builtin.inline(add_rows(x[i], y[i], M, K))


@parpy.jit
def row_total(row, n):
    s = 0.0
    for j in range(n):
        s += row[j]
    return s


@parpy.jit
def row_norm(x, out, N):
    parpy.label('N')
    for i in range(N):
        out[i] = row_total(x[i], x.shape[1]) + parpy.builtin.inline(row_total(x[i, :], 2))


@parpy.jit
def labelled_sum(row):
    parpy.label('r')
    return parpy.reduce.sum(row[:])


@parpy.jit
def sum_rows_helper(x, out, N):
    parpy.label('N')
    for i in range(N):
        out[i] = labelled_sum(x[i]) * 2.0


@parpy.jit
def elementwise_helper(x, y, N):
    parpy.label('N')
    y[:] = add(x[:], y[:]) * square(x[:])


# --------------------------------------------------------------------------
# 11. re-binding arrays: a name that refers to one of several arrays of one
#     type and shape


@parpy.jit
def ping_pong(a, b, out, N, steps):
    src = a
    dst = b
    for t in range(steps):
        parpy.label('N')
        for i in range(1, N - 1):
            dst[i] = (src[i - 1] + src[i] + src[i + 1]) / 3.0
        tmp = src
        src = dst
        dst = tmp
    parpy.label('N')
    out[:] = src[:]


@parpy.jit
def pick_array(x, y, out, c, N):
    if c > 0:
        a = x
    else:
        a = y
    parpy.label('N')
    for i in range(N):
        out[i, :] = a[i, :] * 2.0 + a[i, 0]


@parpy.jit
def swap_inside(x, y, out, N):
    # re-bound inside the parallel loop, per thread, and passed to a helper
    parpy.label('N')
    for i in range(N):
        p = x
        q = y
        if i % 2 == 1:
            p = y
            q = x
        out[i] = row_total(p[i], 3) - q[i, 0]


# --------------------------------------------------------------------------
# 6. sibling parallel loops with different thread counts under a loop that
#    holds only parallel loops: one kernel per loop


@parpy.jit
def sibling_counts(x, y, N, M, K):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        for j in range(M):
            parpy.label('K_1')
            for k in range(K):
                x[i, j, k] = x[i, j, k] + 1.0
        parpy.label('M')
        for j in range(M):
            parpy.label('K_2')
            for k in range(K):
                y[i, j, k] = y[i, j, k] * 2.0 + x[i, j, k]


@parpy.jit
def inner_siblings(x, y, N, M, K):
    # the split happens one level down: M holds the two loops with other
    # counts, and A, B (equal counts) stay together in the first part
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        for j in range(M):
            parpy.label('A')
            for k in range(K):
                x[i, j, k] = x[i, j, k] - 0.5
            parpy.label('B')
            for k in range(K):
                x[i, j, k] = x[i, j, k] * 3.0
            parpy.label('C')
            for k in range(K):
                y[i, j, k] = x[i, j, k] + y[i, j, k]


# --------------------------------------------------------------------------
# the table of programs checked on every backend

PROGRAMS = {
    "helper_chain": (helper_chain, lambda: [rand(37), rand(37), 37], {'N': T(16)}),
    "stencil_2d": (stencil_2d, lambda: [rand(20, 70), rand(20, 70)], {'i': T(4), 'j': T(32)}),
    "stencil_2d_inner": (stencil_2d, lambda: [rand(9, 40), rand(9, 40)], {'j': T(32)}),
    "inner_label_only": (inner_label_only, lambda: [rand(9, 40), rand(9, 40)], {'j': T(32)}),
    "sum_planes": (sum_planes, lambda: [rand(5, 7, 9), rand(5)], {'i': T(5), 'r': T(32)}),
    "top_sum": (top_sum, lambda: [rand(1000), rand(1)], {'r': T(256)}),
    "top_sum_wide": (top_sum, lambda: [rand(100000), rand(1)], {'r': T(4096)}),
    "top_max_2d": (top_max_2d, lambda: [rand(30, 50), rand(1)], {'r': T(128)}),
    "top_min_prod": (top_min_prod, lambda: [rand(40) + 0.5, rand(2)], {'r': T(64)}),
    "add_rows": (add_rows, lambda: [rand(10, 15), rand(10, 15), 10, 15],
                 {'2d': T(10), '1d': T(15)}),
    "add_rows_seq_inner": (add_rows, lambda: [rand(10, 15), rand(10, 15), 10, 15],
                           {'2d': T(10)}),
    "add_rows_implicit": (add_rows_implicit,
                          lambda: [rand(6, 40), rand(6, 40), rand(6, 40), 6, 40],
                          {'2d': T(6), '1d': T(32)}),
    "add_planes": (add_planes, lambda: [rand(4, 5, 33), rand(4, 5, 33), 4, 5, 33],
                   {'3d': T(4), '2d': T(5), '1d': T(32)}),
    "row_norm": (row_norm, lambda: [rand(7, 9), rand(7), 7], {'N': T(7)}),
    "sum_rows_helper": (sum_rows_helper, lambda: [rand(9, 300), rand(9), 9],
                        {'N': T(9), 'r': T(128)}),
    "elementwise_helper": (elementwise_helper, lambda: [rand(50), rand(50), 50], {'N': T(16)}),
    "ping_pong": (ping_pong, lambda: [rand(40), rand(40), rand(40), 40, 5], {'N': T(16)}),
    "pick_array": (pick_array, lambda: [rand(6, 7), rand(6, 7), rand(6, 7), 1, 6], {'N': T(6)}),
    "pick_array_else": (pick_array, lambda: [rand(6, 7), rand(6, 7), rand(6, 7), 0, 6],
                        {'N': T(6)}),
    "swap_inside": (swap_inside, lambda: [rand(8, 5), rand(8, 5), rand(8), 8], {'N': T(8)}),
    "sibling_counts": (sibling_counts, lambda: [rand(10, 20, 70), rand(10, 20, 70), 10, 20, 70],
                       {'N': T(10), 'M': T(20), 'K_1': T(32), 'K_2': T(64)}),
    "inner_siblings": (inner_siblings, lambda: [rand(4, 6, 50), rand(4, 6, 50), 4, 6, 50],
                       {'N': T(4), 'M': T(6), 'A': T(32), 'B': T(32), 'C': T(64)}),
    "top_sum_then_scale": (top_sum_then_scale, lambda: [rand(8, 300), rand(8), 8],
                           {'r': T(512), 'N': T(8)}),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_runs_on_cpu(name):
    fn, args, spec = PROGRAMS[name]
    run_both(fn, args(), cpu_opts(spec))


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU (scripts/gpu-check.sh)")
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_runs_on_cuda(name):
    fn, args, spec = PROGRAMS[name]
    run_three(fn, args(), cuda_opts(spec))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_cuda_dry_run(name):
    """The Cuda miss path up to the cubin and the launch plan (no GPU)."""
    fn, args, spec = PROGRAMS[name]
    dry_run(fn, args(), cuda_opts(spec))


@needs_nvrtc
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_cuda_compiles(name):
    fn, args, spec = PROGRAMS[name]
    check_nvrtc(cuda_code(fn, args(), spec), name)


@needs_clang
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_metal_parses(name):
    fn, args, spec = PROGRAMS[name]
    assert_clang_ok(metal_code(fn, args(), spec), name)


def test_helpers_come_before_their_callers():
    fn, args, spec = PROGRAMS["helper_chain"]
    code = parpy.print_compiled(fn, args(), cpu_opts(spec))
    first = {name: code.index(name + "(") for name in ("square", "square_1", "add",
                                                       "add_then_square")}
    assert first["square_1"] < first["add_then_square"]
    assert first["add"] < first["add_then_square"]


# --------------------------------------------------------------------------
# 2. recursion through undecorated functions is a CompileError


def countdown(x):
    if x > 0:
        return countdown(x - 1)
    return x


def is_even(x):
    if x > 0:
        return is_odd(x - 1)
    return 1


def is_odd(x):
    if x > 0:
        return is_even(x - 1)
    return 0


@parpy.jit
def through_jit(x):
    return back_to_jit(x - 1)


def back_to_jit(x):
    return through_jit(x)


@parpy.jit
def calls_countdown(a, out, N):
    parpy.label('N')
    for i in range(N):
        out[i] = countdown(a[i])


@parpy.jit
def calls_is_even(a, out, N):
    parpy.label('N')
    for i in range(N):
        out[i] = is_even(a[i])


@parpy.jit
def calls_through_jit(a, out, N):
    parpy.label('N')
    for i in range(N):
        out[i] = through_jit(a[i])


@pytest.mark.parametrize("backend", [parpy.CompileBackend.Cpu, parpy.CompileBackend.Cuda,
                                     parpy.CompileBackend.Metal], ids=str)
@pytest.mark.parametrize("fn,name", [(calls_countdown, "countdown"),
                                     (calls_is_even, "is_even"),
                                     (calls_through_jit, "through_jit")])
def test_recursion_through_plain_functions_is_a_compile_error(fn, name, backend):
    args = [np.arange(4, dtype=np.float32), np.zeros(4, np.float32), 4]
    opts = backend_opts(backend, {'N': T(4)})
    with pytest.raises(parpy.CompileError, match=f"recursive call of `{name}`") as e:
        parpy.print_compiled(fn, args, opts)
    # the recursion's error alone: the return it broke is not "missing"
    assert "may end without `return`" not in str(e.value), str(e.value)
    if backend == parpy.CompileBackend.Cpu:
        with pytest.raises(parpy.CompileError, match="recursion is not supported"):
            fn(*args, opts=cpu_opts({'N': T(4)}))


def test_a_plain_helper_called_twice_is_one_specialization():
    @parpy.jit
    def twice(a, out, N):
        parpy.label('N')
        for i in range(N):
            out[i] = plain_square(a[i]) + plain_square(a[i] + 1.0)

    args = [rand(8), rand(8), 8]
    run_both(twice, args, cpu_opts({'N': T(8)}))
    code = parpy.print_compiled(twice, args, cpu_opts({'N': T(8)}))
    assert "plain_square(" in code and "plain_square_1" not in code


def plain_square(x):
    return x * x


def loop_labels_in_ir(fn, args, spec):
    """The parallel loops of the C output: (index variable, bound) pairs of
    the `omp parallel for` loops, outermost first."""
    code = parpy.print_compiled(fn, args, cpu_opts(spec))
    lines = code.splitlines()
    return [lines[k + 1].strip() for k, line in enumerate(lines) if "omp parallel for" in line]


def test_the_last_label_is_the_innermost_dimension():
    A = rand(20, 70)
    # only 'i' mapped: the outer dimension (18 rows) is parallel
    loops = loop_labels_in_ir(stencil_2d, [A, A.copy()], {'i': T(4)})
    assert len(loops) == 1 and "< 18;" in loops[0], loops
    # only 'j' mapped: the inner dimension (68 columns)
    loops = loop_labels_in_ir(stencil_2d, [A, A.copy()], {'j': T(4)})
    assert len(loops) == 1 and "< 68;" in loops[0], loops


def test_more_labels_than_sliced_dimensions_is_an_error():
    @parpy.jit
    def three_labels(A, B):
        parpy.label('i')
        parpy.label('j')
        parpy.label('k')
        B[:, :] = A[:, :]

    with pytest.raises(parpy.CompileError, match="3 labels on a statement with 2 sliced"):
        three_labels(rand(3, 4), rand(3, 4), opts=cpu_opts({'k': T(4)}))


def test_two_labels_on_a_reduction_is_an_error():
    @parpy.jit
    def two_labels(x, out):
        parpy.label('a')
        parpy.label('b')
        out[0] = parpy.operators.sum(x[:, :])

    with pytest.raises(parpy.CompileError, match="a reduction takes at most one label"):
        two_labels(rand(3, 4), rand(1), opts=cpu_opts({'a': T(4)}))


# --------------------------------------------------------------------------
# 9. compile-time branches: static_backend_eq, static_types_eq, static_fail

B = parpy.CompileBackend


@parpy.jit
def backend_code(x):
    with parpy.gpu:
        if parpy.builtin.static_backend_eq(parpy.CompileBackend.Cuda):
            x[0] = 10
        elif parpy.builtin.static_backend_eq(parpy.CompileBackend.Metal):
            x[0] = 20
        elif parpy.builtin.static_backend_eq(B.Cpu) and not parpy.builtin.static_types_eq(
                x, parpy.types.F32):
            x[0] = 30
        else:
            parpy.builtin.static_fail("backend_code: no code for this backend")


@parpy.jit
def type_code(x, out):
    with parpy.gpu:
        if parpy.builtin.static_types_eq(x, parpy.types.F32):
            out[0] = 32
        elif parpy.builtin.static_types_eq(x, np.float64):
            out[0] = 64
        elif parpy.builtin.static_types_eq(x[0], parpy.types.I16):
            out[0] = 16
        else:
            parpy.builtin.static_fail("type_code: float32, float64 or int16 arrays only")


def test_static_backend_eq_compiles_only_the_branch_taken():
    x = np.zeros(1, np.int32)
    backend_code(x, opts=cpu_opts())
    assert x[0] == 30
    cuda = cuda_code(backend_code, [x], {})
    assert "= 10;" in cuda and "= 20;" not in cuda and "= 30;" not in cuda
    metal = metal_code(backend_code, [x], {})
    assert "= 20;" in metal and "= 10;" not in metal


@needs_nvrtc
def test_static_backend_eq_cuda_compiles():
    check_nvrtc(cuda_code(backend_code, [np.zeros(1, np.int32)], {}), "backend_code")


@needs_clang
def test_static_backend_eq_metal_parses():
    assert_clang_ok(metal_code(backend_code, [np.zeros(1, np.int32)], {}), "backend_code")


def test_static_fail_is_a_compile_error_with_the_message():
    with pytest.raises(parpy.CompileError, match="backend_code: no code for this backend"):
        backend_code(np.zeros(1, np.float32), opts=cpu_opts())
    with pytest.raises(parpy.CompileError, match="float32, float64 or int16 arrays only"):
        type_code(np.zeros(1, np.int32), np.zeros(1, np.int32), opts=cpu_opts())


@pytest.mark.parametrize("dtype,code", [(np.float32, 32), (np.float64, 64), (np.int16, 16)])
def test_static_types_eq(dtype, code):
    out = np.zeros(1, np.int64)
    type_code(np.zeros(3, dtype), out, opts=cpu_opts())
    assert out[0] == code
    # plain Python agrees (Python mode)
    ref = np.zeros(1, np.int64)
    type_code.py_func(np.zeros(3, dtype), ref)
    assert ref[0] == code


def test_static_builtins_from_plain_python():
    assert parpy.builtin.inline(3) == 3
    assert parpy.builtin.static_backend_eq(B.Python)
    assert not parpy.builtin.static_backend_eq(B.Cuda)
    assert parpy.builtin.static_types_eq(np.zeros(2, np.float32), parpy.types.F32)
    with pytest.raises(RuntimeError, match="boom"):
        parpy.builtin.static_fail("boom")


def test_inline_needs_a_jit_call():
    @parpy.jit
    def bad(x):
        with parpy.gpu:
            x[0] = parpy.builtin.inline(3)

    with pytest.raises(parpy.CompileError, match="takes one call of a jit function"):
        bad(np.zeros(1, np.float32), opts=cpu_opts())


@parpy.jit
def early_return(x, n):
    for i in range(n):
        if x[i] < 0.0:
            return x[i]
    return 0.0


@parpy.jit
def first_above(s, c):
    for j in range(len(s)):
        for k in range(2):
            if s[j] * (k + 1) > c:
                return j * 10 + k
    return -1


@parpy.jit
def clear_until_negative(s):
    for j in range(len(s)):
        if s[j] < 0.0:
            return
        s[j] = 0.0


@parpy.jit
def corner_sum(m):
    return np.sum(m)


@parpy.jit
def early_returns(x, y, k, N):
    parpy.label('i')
    for i in range(N):
        y[i] = parpy.builtin.inline(early_return(x[i, :], 4)) + early_return(x[i, 1:], 3)
        # (views with slices: a block, a reversed stride)
        y[i] += corner_sum(x[0:2, 1:4]) * 0.5 + early_return(x[i, ::-2], 4)
        k[i] = first_above(x[i, 2:7], 0.9)
        clear_until_negative(x[i, 4:])


def test_an_inlined_helper_may_return_early_and_take_views():
    # (was refused: an inlined helper returned only at its end, and took a
    # row `x[i]` but no other view)
    x = np.random.default_rng(4).standard_normal((6, 8)).astype(np.float32)
    run_both(early_returns, [x, np.zeros(6, np.float32), np.zeros(6, np.int64), 6],
             cpu_opts({'i': parpy.threads(6)}), rtol=0, atol=0)


def test_a_helper_that_returns_early_must_end_with_return():
    @parpy.jit
    def no_final_return(s):
        for j in range(len(s)):
            if s[j] > 0.0:
                return s[j]

    @parpy.jit
    def caller(x, out):
        with parpy.gpu:
            out[0] = no_final_return(x[1:])

    with pytest.raises(parpy.CompileError, match="this helper returns a value here but may end without `return`"):
        caller(rand(3), rand(1), opts=cpu_opts())


def test_labels_in_a_helper_take_the_callers_spec():
    x, y = rand(10, 15), np.zeros((10, 15), np.float32)
    loops = loop_labels_in_ir(add_rows, [x, y, 10, 15], {'1d': T(4)})
    assert len(loops) == 1 and "< 15;" in loops[0], loops


def test_re_binding_to_arrays_of_other_shapes_is_an_error():
    @parpy.jit
    def bad(x, y, out):
        a = x
        if out[0] > 0.0:
            a = y
        parpy.label('N')
        out[:] = a[:]

    with pytest.raises(parpy.CompileError, match="refers to arrays of different types or shapes"):
        bad(rand(4), rand(5), rand(4), opts=cpu_opts({'N': T(4)}))


def test_sibling_loops_with_other_counts_become_two_kernels():
    fn, args, spec = PROGRAMS["sibling_counts"]
    code = cuda_code(fn, args(), spec)
    assert code.count("__global__") == 2
    assert "dim3(32, " in code and "dim3(64, " in code
    fn, args, spec = PROGRAMS["inner_siblings"]
    assert cuda_code(fn, args(), spec).count("__global__") == 2
    assert metal_code(fn, args(), spec).count("[[kernel]] void") == 2


def test_a_value_carried_between_sibling_loops_is_still_an_error():
    # (the tutorial's reduction case is test_errors.py's); a statement
    # between the loops keeps the nest whole
    @parpy.jit
    def carried(x, y, N, M):
        parpy.label('N')
        for i in range(N):
            parpy.label('M1')
            for j in range(M):
                x[i, j] = x[i, j] + 1.0
            first = x[i, 0]
            parpy.label('M2')
            for j in range(M):
                y[i, j] = first
    spec = {'N': T(4), 'M1': T(32), 'M2': T(64)}
    with pytest.raises(parpy.CompileError, match="inconsistent parallel structure"):
        carried(rand(4, 70), rand(4, 70), 4, 70, opts=cpu_opts(spec))


@parpy.jit
def factorial(n):
    if n <= 1:
        return 1
    return n * factorial(n - 1)


@parpy.jit
def factorials(a, out, N):
    parpy.label('N')
    for i in range(N):
        out[i] = factorial(a[i])


def test_a_recursive_helper_gets_one_error():
    # a second error said the helper "may end without `return`": the
    # recursive `return` had failed to lower
    args = [np.arange(4), np.zeros(4, np.int64), 4]
    with pytest.raises(parpy.CompileError) as e:
        parpy.print_compiled(factorials, args, cpu_opts({'N': T(4)}))
    text = str(e.value)
    assert text.count("error:") == 1 and "recursive call of `factorial`" in text, text
