"""`break` and `continue` (REFERENCE.md §3): differential runs against plain
Python on Cpu (tests/test_cuda_programs.py re-runs them on Cuda: a dry run
to the cubin here), the Metal code of some of them (clang-19), and the
errors: a `break` of a parallel loop, a jump out of `with parpy.gpu:`;
`for ... else` and `while ... else`."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both
from test_errors import assert_points_at, check_snapshot, compile_error, load

T = parpy.threads


def rng(seed=0):
    return np.random.default_rng(seed)


def first_line(text):
    return text.splitlines()[0]


# --------------------------------------------------------------------------
# sequential loops inside parallel ones, nested loops, `while`


@parpy.jit
def first_above(x, out, N, M):
    """The first column of each row above 0.5 (-1 if none): a search loop
    left by `break` inside a parallel loop."""
    parpy.label('N')
    for i in range(N):
        found = -1
        for j in range(M):
            if x[i, j] > 0.5:
                found = j
                break
        out[i] = found


@pytest.mark.parametrize("threads", [1, 3, None])
def test_search_loop_breaks(threads):
    N, M = 17, 40
    x = rng(1).uniform(0.0, 0.55, (N, M))
    out = np.zeros(N, np.int64)
    run_both(first_above, [x, out, N, M], cpu_opts({'N': T(threads or N)}))


@parpy.jit
def skip_negatives(x, y, N):
    """`continue` in a parallel loop: the rest of the iteration is skipped,
    the worker goes on with its next index."""
    parpy.label('N')
    for i in range(N):
        if x[i] < 0.0:
            continue
        y[i] = parpy.math.sqrt(x[i]) + 1.0


@pytest.mark.parametrize("threads", [1, 4, 1000])
def test_continue_in_a_parallel_loop(threads):
    x = rng(2).standard_normal(333).astype(np.float32)
    y = np.full(333, -7.0, np.float32)
    run_both(skip_negatives, [x, y, 333], cpu_opts({'N': T(threads)}))


@parpy.jit
def nested_jumps(x, counts, N, M):
    """Nested loops: each `break` / `continue` acts on the innermost loop
    around it, also inside `if`/`else`."""
    parpy.label('N')
    for i in range(N):
        c = 0
        for j in range(M):
            if x[i, j] < 0.1:
                continue
            for k in range(M):
                if k == j:
                    continue
                if x[i, k] > x[i, j]:
                    break
                else:
                    c += 1
            if c > 3 * M:
                break
        counts[i] = c


def test_nested_loops():
    N, M = 12, 15
    x = rng(3).uniform(0.0, 1.0, (N, M))
    counts = np.zeros(N, np.int64)
    run_both(nested_jumps, [x, counts, N, M], cpu_opts({'N': T(4)}))


@parpy.jit
def collatz_capped(n, steps, N, cap):
    """`while True` left by `break`, with a `continue`."""
    parpy.label('N')
    for i in range(N):
        v = n[i]
        s = 0
        while True:
            if v == 1:
                break
            s += 1
            if s >= cap:
                s = -1
                break
            if v % 2 == 0:
                v = v // 2
                continue
            v = 3 * v + 1
        steps[i] = s


@pytest.mark.parametrize("cap", [5, 1000])
def test_while_true_with_break_and_continue(cap):
    n = np.arange(1, 65, dtype=np.int64)
    steps = np.zeros(64, np.int64)
    run_both(collatz_capped, [n, steps, 64, cap], cpu_opts({'N': T(8)}))


@parpy.jit
def last_index_kept(x, out, N, M):
    """The loop variable of a sequential loop keeps the value it had at the
    `break` (a local of the same name is assigned each iteration)."""
    parpy.label('N')
    for i in range(N):
        j = 0
        for j in range(M):
            if x[i, j] < 0.0:
                break
        out[i] = j


def test_loop_variable_after_break():
    x = rng(4).standard_normal((9, 6))
    out = np.zeros(9, np.int64)
    run_both(last_index_kept, [x, out, 9, 6], cpu_opts({'N': T(9)}))


# --------------------------------------------------------------------------
# host code: a sequential loop around parallel nests (kernels on Cuda)


@parpy.jit
def steps_until(x, y, N, stop):
    for t in range(10):
        if t == 1:
            continue
        if t >= stop:
            break
        parpy.label('N')
        for i in range(N):
            y[i] = y[i] * 0.5 + x[i] + t


@pytest.mark.parametrize("stop", [0, 4, 99])
def test_host_loop_around_a_kernel(stop):
    x = rng(5).standard_normal(100)
    y = np.zeros(100)
    run_both(steps_until, [x, y, 100, stop], cpu_opts({'N': T(100)}))


# --------------------------------------------------------------------------
# helpers and sequential functions


@parpy.jit
def count_below(x, i, M, thr):
    n = 0
    for j in range(M):
        if x[i, j] >= thr:
            continue
        n += 1
        if n == 5:
            break
    return n


@parpy.jit
def use_count_below(x, out, N, M):
    parpy.label('N')
    for i in range(N):
        out[i] = count_below(x, i, M, 0.3)


def test_helper_with_break_and_continue():
    x = rng(6).uniform(0.0, 1.0, (20, 30))
    out = np.zeros(20, np.int64)
    run_both(use_count_below, [x, out, 20, 30], cpu_opts({'N': T(5)}))


@parpy.jit
def sequential_prefix(x, y, N):
    """No parallel loop at all: the host function itself."""
    s = 0.0
    for i in range(N):
        if x[i] < -1.0:
            break
        if x[i] < 0.0:
            continue
        s += x[i]
        y[i] = s


@parpy.jit
def sequential_prefix_on_device(x, y, N):
    """The same in one GPU thread (`with parpy.gpu:`)."""
    with parpy.gpu:
        s = 0.0
        for i in range(N):
            if x[i] < -1.0:
                break
            if x[i] < 0.0:
                continue
            s += x[i]
            y[i] = s


@pytest.mark.parametrize("fn", [sequential_prefix, sequential_prefix_on_device])
def test_sequential_function(fn):
    x = rng(7).standard_normal(50)
    y = np.zeros(50)
    run_both(fn, [x, y, 50], cpu_opts())


# --------------------------------------------------------------------------
# the GPU rewrites: inner parallel loops with `continue` (strided per
# thread, a row kept in registers) and a reduction next to them


@parpy.jit
def clip_rows(x, y, N, M):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        for j in range(M):
            if x[i, j] < 0.0:
                continue
            y[i, j] = x[i, j] * 2.0
        parpy.label('M')
        for j in range(M):
            if y[i, j] > 1.0:
                continue
            y[i, j] = y[i, j] + 1.0
        parpy.label('M')
        s = parpy.operators.sum(y[i, :])
        parpy.label('M')
        for j in range(M):
            if j % 3 == 0:
                continue
            y[i, j] = y[i, j] / s


@pytest.mark.parametrize("M,threads", [(64, 32), (300, 64)])
def test_continue_in_inner_parallel_loops(M, threads):
    N = 6
    x = rng(8).standard_normal((N, M)).astype(np.float32)
    y = np.full((N, M), 0.25, np.float32)
    run_both(clip_rows, [x, y, N, M], cpu_opts({'N': T(N), 'M': T(threads)}),
             rtol=1e-4, atol=1e-5)


def test_registers_are_loaded_when_continue_skips_the_store():
    """On Cuda the row of `y` stays in registers across the inner loops; the
    first loop stores into it only where it does not `continue`, so the row
    is loaded first."""
    N, M = 6, 64
    x = np.zeros((N, M), np.float32)
    y = np.zeros((N, M), np.float32)
    opts = cpu_opts({'N': T(N), 'M': T(32)})
    opts.backend = parpy.CompileBackend.Cuda
    code = parpy.print_compiled(clip_rows, [x, y, N, M], opts)
    assert "float y_reg[2];" in code, code
    load = code.index("] = y[i * 64 + ")
    first_continue = code.index("continue;")
    assert load < first_continue, code


@parpy.jit
def halve_on_device(x, out):
    """The `while` condition reads a value the device computes: the host
    copies it back at the end of each iteration and before `continue`."""
    s = 1000.0
    it = 0
    while s > 1.0:
        it += 1
        if it % 3 == 0:
            continue
        with parpy.gpu:
            s = s * 0.5 + x[0]
    with parpy.gpu:
        out[0] = s
        out[1] = it


def test_a_device_value_in_a_while_condition_is_read_again_at_continue():
    x = np.array([0.125, 0.0])
    out = np.zeros(2)
    run_both(halve_on_device, [x, out], cpu_opts())


def test_the_cuda_host_copies_the_condition_back_before_continue():
    opts = cpu_opts()
    opts.backend = parpy.CompileBackend.Cuda
    code = parpy.print_compiled(halve_on_device, [np.zeros(2), np.zeros(2)], opts)
    body = code[code.index("while (s_value > 1.0) {"):]
    before = body[:body.index("continue;")]
    assert "cudaMemcpy(&s_value, s + 0" in before, code


@parpy.jit
def shift_mix(x, T, N):
    """A statement's temporary on the heap (`x_rhs`, 8 * N bytes) is freed
    on the way out of the iteration at `continue`."""
    for t in range(T):
        if x[0] > 5.0:
            break
        x[1:N - 1] = x[0:N - 2] + x[2:N]
        if t == 2:
            continue
        x[0] = x[0] + 1.0


def test_a_heap_temporary_is_freed_at_continue():
    N = 20000
    x = np.zeros(N)
    run_both(shift_mix, [x, 10, N], cpu_opts())
    code = parpy.print_compiled(shift_mix, [x, 10, N], cpu_opts())
    assert "malloc" in code and "free(x_rhs);\n      continue;" in code, code


# --------------------------------------------------------------------------
# index checks: a loop that may stop early need not reach its last index


@parpy.jit
def copy_until_negative(x, y, N):
    # N may exceed len(x): the break comes first in the data below
    for i in range(N):
        if x[i] < 0.0:
            break
        y[i] = x[i]


def test_break_before_an_out_of_range_index_is_no_error():
    x = np.array([1.0, 2.0, 3.0, -1.0, 5.0])
    y = np.zeros(5)
    run_both(copy_until_negative, [x, y, 9], cpu_opts())


def test_an_index_reached_after_no_break_is_still_checked():
    x = np.ones(5)
    y = np.zeros(5)
    with pytest.raises(IndexError):
        copy_until_negative(x.copy(), y.copy(), 9, opts=cpu_opts())
    with pytest.raises(IndexError):
        copy_until_negative.py_func(x.copy(), y.copy(), 9)


@parpy.jit
def skip_the_tail(x, y, N, M):
    parpy.label('N')
    for i in range(N):
        for j in range(M + 4):
            if j >= M:
                continue
            y[i] += x[i, j]


def test_a_range_cut_by_continue_needs_no_check():
    x = rng(9).standard_normal((7, 11))
    y = np.zeros(7)
    opts = cpu_opts({'N': T(7)})
    run_both(skip_the_tail, [x, y, 7, 11], opts)
    code = parpy.print_compiled(skip_the_tail, [x, y, 7, 11], opts)
    assert "parpy_check_index" not in code, code


# --------------------------------------------------------------------------
# the race check and privatization see the jumps


@parpy.jit
def any_positive(x, flag, N):
    """After `if x[i] <= 0: continue`, the store sits under a condition on
    the data, as `if x[i] > 0: flag[0] = 1` would."""
    parpy.label('N')
    for i in range(N):
        if x[i] <= 0.0:
            continue
        flag[0] = 1


def test_a_store_after_a_data_dependent_continue_is_accepted():
    x = -np.ones(64)
    x[17] = 2.0
    flag = np.zeros(1, np.int64)
    run_both(any_positive, [x, flag, 64], cpu_opts({'N': T(8)}))


@parpy.jit
def private_after_continue(x, y, N):
    t = 0.0
    parpy.label('N')
    for i in range(N):
        if x[i] < 0.0:
            continue
        t = x[i] * 2.0
        y[i] = t
    t = 1.0
    parpy.label('N')
    for i in range(N):
        y[i] = y[i] + t


def test_a_scalar_assigned_after_continue_is_private():
    x = rng(10).standard_normal(64)
    y = np.zeros(64)
    run_both(private_after_continue, [x, y, 64], cpu_opts({'N': T(8)}))


# --------------------------------------------------------------------------
# errors


def test_break_in_a_parallel_loop_is_an_error():
    x = np.ones(64)
    text = compile_error("jumps", "find_first", [x, np.zeros(1, np.int64), 64],
                         cpu_opts({'N': T(8)}))
    assert first_line(text) == "error: `break` cannot stop the parallel loop `N`", text
    assert "run `N` sequentially" in text
    assert_points_at(text, "jumps", "break", width=5)
    check_snapshot("break_in_parallel_loop", text)


def test_the_same_loop_runs_sequentially():
    mod_fn = parpy.jit(load("jumps").find_first)
    x = np.array([-1.0, -2.0, 3.0, 4.0])
    found = np.zeros(1, np.int64)
    run_both(mod_fn, [x, found, 4], cpu_opts())


def test_break_in_a_par_reduction_loop_is_an_error():
    x = np.ones(64)
    text = compile_error("jumps", "total_until", [x, np.zeros(1), 64],
                         cpu_opts({'N': T(8).par_reduction()}))
    assert first_line(text) == \
        "error: `break` cannot stop the parallel reduction loop `N`", text
    assert_points_at(text, "jumps", "break", width=5, occurrence=1)


def test_continue_in_a_par_reduction_loop_suggests_the_identity():
    text = compile_error("jumps", "total_positive", [np.ones(64), np.zeros(1), 64],
                         cpu_opts({'N': T(8).par_reduction()}))
    assert "is marked par_reduction() but its body is not a reduction" in first_line(text)
    assert "skips the update: combine the identity instead" in text, text
    assert_points_at(text, "jumps", "continue", width=8)


def test_break_out_of_a_gpu_block_is_an_error():
    text = compile_error("jumps", "halve_until_small", [np.full(4, 100.0)], cpu_opts())
    assert first_line(text) == "error: `break` cannot leave a `with parpy.gpu:` block", text
    assert_points_at(text, "jumps", "break", width=5, occurrence=2)


def test_return_in_a_parallel_loop_is_an_error():
    # (the C compiler refused the generated code: an internal error)
    text = compile_error("jumps", "copy_unless_empty", [np.ones(4), np.zeros(4), 4],
                         cpu_opts({'N': T(4)}))
    assert first_line(text) == "error: `return` cannot stop the parallel loop `N`", text
    assert_points_at(text, "jumps", "return", width=6)
    check_snapshot("return_in_parallel_loop", text)


def test_return_out_of_a_gpu_block_that_code_follows_is_an_error():
    # (the block's kernel returned and the statements after it ran: a
    # silent wrong result)
    text = compile_error("jumps", "halve_then_mark", [np.ones(2), np.zeros(1)], cpu_opts())
    assert first_line(text) == \
        "error: `return` cannot leave a `with parpy.gpu:` block that code follows", text
    assert_points_at(text, "jumps", "return", width=6, occurrence=1)


@parpy.jit
def scale_until_small(x, y, N, stop):
    # a `return` in a sequential loop around parallel ones, and in a
    # `with parpy.gpu:` block that ends the function
    for t in range(10):
        parpy.label('N')
        for i in range(N):
            y[i] = y[i] * 0.5 + x[i]
        if t == stop:
            return
    with parpy.gpu:
        y[0] = -1.0
        if stop > 3:
            return
        y[1] = -2.0


@pytest.mark.parametrize("stop", [2, 4, 20])
@pytest.mark.parametrize("start", [1.0, 100.0])
def test_return_from_a_sequential_loop_or_a_last_gpu_block(stop, start):
    x = np.full(4, 0.25)
    run_both(scale_until_small, [x, np.full(4, start), 4, stop], cpu_opts({'N': T(4)}))


@parpy.jit
def search_else(x, found, N):
    with parpy.gpu:
        for i in range(N):
            if x[i] > 0.0:
                found[0] = i
                break
        else:
            found[0] = -1


@pytest.mark.parametrize("hit", [True, False])
def test_for_else_runs_the_else_only_without_a_break(hit):
    # (it was "`for ... else` statements are not supported")
    x = np.zeros(4)
    if hit:
        x[2] = 1.0
    run_both(search_else, [x, np.zeros(1, np.int64), 4], cpu_opts())


@parpy.jit
def first_above_else(x, t, out, N, M):
    parpy.label('i')
    for i in range(N):
        out[i] = -1
        for j in range(M):
            if x[i, j] > t:
                out[i] = j
                break
        else:
            out[i] = M
        k = 0
        while k < M:
            k += 1
            if x[i, k - 1] < 0.05:
                break
        else:
            out[i] += 100
        # an inner loop's else: its break leaves the outer loop
        for a in range(3):
            for b in range(M):
                if x[i, b] > 2.0:
                    break
            else:
                out[i] += 1000
                break
        else:
            out[i] = -7
        # no break at all: the else follows the loop
        for c in range(2):
            out[i] += 1
        else:
            out[i] *= 2


def test_for_else_and_while_else_in_a_parallel_loop():
    x = np.random.default_rng(5).random((9, 6))
    x[3, :] = 0.5
    x[4, :] = 0.0
    run_both(first_above_else, [x, 0.9, np.zeros(9, np.int64), 9, 6],
             cpu_opts({'i': parpy.threads(4)}))


@parpy.jit
def parallel_else(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = x[i] * 2.0
    else:
        with parpy.gpu:
            y[0] += 1.0


def test_the_else_of_a_parallel_loop_runs_after_it():
    run_both(parallel_else, [np.arange(8.0), np.zeros(8), 8], cpu_opts({'i': parpy.threads(4)}))


@pytest.mark.parametrize("backend", ["Cuda", "Cpu"])
def test_an_early_return_of_host_code_compiles_as_printed(backend):
    """The printed file of a `return` in host code builds with the target's
    own compiler: CUDA's host function returns a status, and its bare
    `return;` was an error for nvcc, so compile_string failed on an H200
    (the JIT, which runs host code from its launch plan, passed)."""
    from conftest import python_opts
    from test_cuda_codegen import NVCC_PATH, check_nvcc
    args = [np.full(4, 0.25), np.full(4, 1.0), 4, 2]
    opts = cpu_opts({'N': T(4)})
    opts.backend = getattr(parpy.CompileBackend, backend)
    code = parpy.print_compiled(scale_until_small, args, opts)
    if backend == "Cpu":
        built = parpy.compile_string("scale_until_small", code, opts)
        y = args[1].copy()
        built(args[0], y, 4, 2)
        ref = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        scale_until_small(*ref, opts=python_opts(opts))
        np.testing.assert_array_equal(y, ref[1])
        return
    if NVCC_PATH is None:
        pytest.skip("needs nvcc (the nvidia-cuda-nvcc wheel)")
    check_nvcc(code, "early_return")
