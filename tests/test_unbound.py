"""A local read before any assignment of it raises Python's
UnboundLocalError where Python raises it (compiled code read 0 or whatever
the stack held), and a local an earlier iteration of a loop assigned
further down keeps that value (`if i > 0: d[i] = x[i] - prev` before
`prev = x[i]` was refused as "not defined")."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both
from test_assert import expect_raised

MESSAGE = "cannot access local variable"


@parpy.jit
def keep_positive(x, y, N):
    for i in range(N):
        if x[i] > 0.0:
            t = x[i]
        y[i] = t


@parpy.jit
def last_of_inner(x, y, N, K):
    for i in range(N):
        for k in range(K):
            acc = x[i] * k
        y[i] = acc


@parpy.jit
def last_of_inner_parallel(x, y, N, K):
    parpy.label('i')
    for i in range(N):
        for k in range(K):
            acc = x[i] * k
        y[i] = acc


@parpy.jit
def differences(x, d, N):
    for i in range(N):
        if i > 0:
            d[i] = x[i] - prev
        prev = x[i]


@parpy.jit
def previous_first(x, d, N):
    for i in range(N):
        d[i] = prev
        prev = x[i]


@parpy.jit
def until_found(x, y, N):
    k = 0
    while k < N:
        if x[k] < 0.0:
            found = k
            break
        k += 1
    y[0] = found


@parpy.jit
def guarded_by_and(x, y, N):
    for i in range(N):
        if x[i] > 0.0:
            t = x[i]
        y[i] = x[i] > 0.0 and t > 1.0


@parpy.jit
def always_assigned(x, y, N):
    for i in range(N):
        if x[i] > 0.0:
            t = x[i]
        else:
            t = -x[i]
        y[i] = t


@parpy.jit
def keep_positive_on_device(x, y, N):
    with parpy.gpu:
        for i in range(N):
            if x[i] > 0.0:
                t = x[i]
            y[i] = t


@parpy.jit
def differences_on_device(x, d, N):
    with parpy.gpu:
        for i in range(N):
            if i > 0:
                d[i] = x[i] - prev
            prev = x[i]


def test_a_sequential_block_on_the_device():
    # (the modules' host loops touch arrays: GPU backends run them in a
    # `with parpy.gpu:` block)
    run_both(keep_positive_on_device, [np.array([1.0, -2.0, 4.0]), np.zeros(3), 3], cpu_opts())
    expect_raised(keep_positive_on_device, [np.array([-1.0, 2.0]), np.zeros(2), 2], cpu_opts(),
                  UnboundLocalError, MESSAGE, "'t'")
    run_both(differences_on_device, [np.array([1.0, 3.0, 7.0]), np.zeros(3), 3], cpu_opts())


def test_a_local_no_path_assigned_raises_unbound_local_error():
    x = np.array([-1.0, 2.0, -3.0, 4.0])
    expect_raised(keep_positive, [x, np.zeros(4), 4], cpu_opts(), UnboundLocalError,
                  MESSAGE, "'t'", "y[i] = t")


def test_a_local_keeps_the_value_an_earlier_iteration_assigned():
    run_both(keep_positive, [np.array([1.0, -2.0, -3.0, 4.0]), np.zeros(4), 4], cpu_opts())


def test_a_loop_that_runs_zero_times_assigns_nothing():
    x = np.array([1.0, 2.0, 3.0])
    for opts in (cpu_opts(), cpu_opts(specialize_scalars=False)):
        run_both(last_of_inner, [x, np.zeros(3), 3, 4], opts)
        expect_raised(last_of_inner, [x, np.zeros(3), 3, 0], opts, UnboundLocalError,
                      MESSAGE, "'acc'")


def test_an_inner_loop_known_to_run_assigns_inside_a_parallel_loop():
    # (check_races counted a loop of known trips as maybe not assigning)
    x = np.array([1.0, 2.0, 3.0])
    run_both(last_of_inner_parallel, [x, np.zeros(3), 3, 4], cpu_opts({'i': parpy.threads(3)}))


def test_a_read_before_the_assignment_further_down_the_loop():
    x = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    run_both(differences, [x, np.zeros(5), 5], cpu_opts())
    expect_raised(previous_first, [x, np.zeros(5), 5], cpu_opts(), UnboundLocalError,
                  MESSAGE, "'prev'")


def test_a_read_before_any_assignment_outside_loops_is_a_compile_error():
    @parpy.jit
    def f(x, y, N):
        y[0] = t
        t = x[0]
    # (Python's UnboundLocalError, a NameError: `t` is a local of `f`)
    with pytest.raises(NameError, match="local variable `t` is read before it is assigned"):
        f(np.ones(2), np.zeros(2), 2, opts=cpu_opts())


def test_a_local_assigned_before_a_break():
    x = np.array([1.0, 2.0, -3.0, 4.0])
    run_both(until_found, [x, np.zeros(1, np.int64), 4], cpu_opts())
    expect_raised(until_found, [np.ones(4), np.zeros(1, np.int64), 4], cpu_opts(),
                  UnboundLocalError, MESSAGE, "'found'")


def test_a_read_under_and_is_not_checked_where_python_does_not_evaluate_it():
    x = np.array([-1.0, 2.0, -3.0, 0.5])
    run_both(guarded_by_and, [x, np.zeros(4, np.bool_), 4], cpu_opts())


def test_a_local_every_path_assigns_has_no_flag():
    x = np.array([1.0, -2.0])
    code = parpy.print_compiled(always_assigned, [x, np.zeros(2), 2], cpu_opts())
    assert "_bound" not in code
    code = parpy.print_compiled(keep_positive, [x, np.zeros(2), 2], cpu_opts())
    assert "t_bound" in code


def test_a_value_carried_across_iterations_is_declared_outside_the_loop():
    # (in C a local of the loop's body starts each iteration with no value)
    x = np.array([1.0, -2.0])
    code = parpy.print_compiled(keep_positive, [x, np.zeros(2), 2], cpu_opts())
    assert code.index("double t;") < code.index("for (")


@parpy.jit
def index_of_first_negative(x, y, N):
    for i in range(N):
        if x[i] < 0.0:
            break
    y[0] = i


@parpy.jit
def counter_after_two_loops(x, y, M):
    for i in range(3):
        x[i] += 1.0
    for i in range(M):
        x[i] += 1.0
    y[0] = i


@pytest.mark.parametrize("specialize", [True, False])
def test_a_loop_variable_after_a_loop_of_unknown_trips_or_with_break(specialize):
    opts = cpu_opts(specialize_scalars=specialize)
    y = np.zeros(1, np.int64)
    run_both(index_of_first_negative, [np.array([1.0, -2.0, 3.0]), y, 3], opts)
    run_both(index_of_first_negative, [np.array([1.0, 2.0, 3.0]), y, 3], opts)
    expect_raised(index_of_first_negative, [np.ones(3), y, 0], opts, UnboundLocalError,
                  MESSAGE, "'i'")
    # (zero iterations of the second loop keep the first one's last index)
    run_both(counter_after_two_loops, [np.zeros(3), y, 0], opts)
    run_both(counter_after_two_loops, [np.zeros(3), y, 2], opts)


@parpy.jit
def counter_of_inner_loop(y, N, M):
    for i in range(N):
        for i in range(M):
            y[1] += 1
    y[0] = i


@pytest.mark.parametrize("M", [2, 0])
def test_a_loop_variable_after_an_inner_loop_over_the_same_name(M):
    # (Python's `i` holds the inner loop's last value; parpy gave the
    # outer loop's)
    run_both(counter_of_inner_loop, [np.zeros(2, np.int64), 3, M], cpu_opts())


@parpy.jit
def read_under_a_condition(x, y, N, lim):
    with parpy.gpu:
        for i in range(N):
            if x[i] > 0.0:
                t = x[i]
            y[i, 0] = t if x[i] > lim else -1.0
            y[i, 1] = x[i] > lim and t > 6.0


def test_a_read_under_a_condition_raises_where_python_does():
    # (`t if c else ...` and `c and t` read an unset value where `c` held
    # and `t` was never assigned: the check was a statement for the reads
    # the whole expression makes only)
    x = np.array([1.0, -2.0, 7.0])
    opts = cpu_opts()
    # the conditions choose `t` where it is assigned: no error
    run_both(read_under_a_condition, [x, np.zeros((3, 2)), 3, 0.0], opts, rtol=0, atol=0)
    expect_raised(read_under_a_condition, [np.array([-2.0, 1.0, 7.0]), np.zeros((3, 2)), 3, -10.0], opts,
                  UnboundLocalError, MESSAGE, "'t'")


@parpy.jit
def set_and_read_under_one_condition(x, y, N):
    parpy.label('i')
    for i in range(N):
        if x[i] > 0.0:
            t = x[i] * 2.0
        else:
            y[i] = -1.0
        if x[i] > 0.0:
            y[i] = t


@parpy.jit
def condition_changed_in_between(x, y, N):
    for i in range(N):
        if x[i] > 0.0:
            t = x[i] * 2.0
        x[i] = x[i] + 5.0
        if x[i] > 0.0:
            y[i] = t


def test_a_local_read_under_the_condition_that_assigned_it():
    # `if c: t = ...` then `if c: use t`: every read follows the
    # assignment of its own iteration (the parallel loop was refused,
    # "reads it before assigning it", and a flag checked each read)
    x = np.array([1.0, -2.0, 3.0, -0.5])
    opts = cpu_opts({'i': parpy.threads(4)})
    run_both(set_and_read_under_one_condition, [x, np.zeros(4), 4], opts, rtol=0, atol=0)
    code = parpy.print_compiled(set_and_read_under_one_condition, [x, np.zeros(4), 4], opts)
    assert "t_bound" not in code
    # with the condition's value changed in between, Python may raise
    expect_raised(condition_changed_in_between, [np.array([-2.0, 1.0]), np.zeros(2), 2], cpu_opts(),
                  UnboundLocalError, MESSAGE, "'t'")
    run_both(condition_changed_in_between, [np.array([1.0, -2.0]), np.zeros(2), 2], cpu_opts(),
             rtol=0, atol=0)


@parpy.jit
def last_index_after_loop(y, N):
    for i in range(N):
        y[1] = i
    y[0] = i


@pytest.mark.parametrize("specialize", [True, False])
def test_a_loop_variable_after_a_loop_known_to_run_zero_times(specialize):
    # (with N = 0 known when compiling, the name was "not defined", a
    # CompileNameError, where Python raises UnboundLocalError when it runs)
    opts = cpu_opts()
    opts.specialize_scalars = specialize
    expect_raised(last_index_after_loop, [np.zeros(2, np.int64), 0], opts,
                  UnboundLocalError, MESSAGE, "'i'")
    run_both(last_index_after_loop, [np.zeros(2, np.int64), 3], opts)


@parpy.jit
def counter_reuses_a_local(lab, c, y, N, K):
    with parpy.gpu:
        for i in range(N):
            k = lab[i]
            c[k] += 1.0
    parpy.label('k')
    for k in range(K):
        y[k] = c[k] * 2.0


@parpy.jit
def counter_reuses_a_float_local(x, y, N):
    parpy.label('i')
    for i in range(N):
        k = x[i] * 0.5
        y[i] = k
        for k in range(3):
            y[i] += k


def test_a_loop_variable_may_reuse_the_name_of_a_local():
    # (a labelled loop over the name of an integer local, and any loop over
    # the name of a float local, were refused: "the loop variable `k` is
    # already used as a local variable"; Python rebinds the name)
    for specialize in (True, False):
        opts = cpu_opts({'k': parpy.threads(3), 'i': parpy.threads(4)}, specialize_scalars=specialize)
        run_both(counter_reuses_a_local, [np.array([2, 0, 2, 1, 2]), np.zeros(3), np.zeros(3), 5, 3], opts)
        run_both(counter_reuses_a_float_local, [np.arange(4.0), np.zeros(4), 4], opts)


@parpy.jit
def labelled_counter_read_after(y, K0, K):
    k = K0
    parpy.label('k')
    for k in range(K):
        y[k] = k * 2.0
    y[K] = k


def test_after_a_labelled_loop_over_a_local_the_name_holds_the_last_value():
    # (the last value when the loop runs, the local's when it runs zero
    # times; a count known only when running: the name is not defined)
    opts = cpu_opts({'k': parpy.threads(3)})
    run_both(labelled_counter_read_after, [np.zeros(4), 7, 3], opts)
    run_both(labelled_counter_read_after, [np.zeros(4), 7, 0], opts)
    opts.specialize_scalars = False
    with pytest.raises(parpy.CompileError, match="`k` is not defined"):
        labelled_counter_read_after(np.zeros(4), 7, 3, opts=opts)
