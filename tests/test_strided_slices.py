"""Strided slices `a[lo:hi:step]` (natural Python): every bound and step
Python accepts selects the elements NumPy selects, in slice assignments,
reductions and loops over a slice, and an assignment that reads what it
writes through another strided slice gives NumPy's answer. Each program runs
as plain Python (the reference) and compiled for the CPU (conftest.run_both);
the many-slice programs are generated, one statement per slice, so that one
compilation covers them all."""

import importlib.util
import itertools

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both

BOUNDS = [None, -12, -9, -4, -1, 0, 1, 3, 8, 9, 12]
STEPS = [None, 1, 2, 3, -1, -2, -4, 9, -9, 20]


def text(v):
    return "" if v is None else str(v)


def spelled(lo, hi, step):
    s = f"{text(lo)}:{text(hi)}"
    return s if step is None else f"{s}:{text(step)}"


def load(tmp_path, name, src):
    path = tmp_path / f"{name}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def program(name, params, stmts):
    body = "".join(f"        {s}\n" for s in stmts)
    return (f"import parpy\n\n\n@parpy.jit\ndef {name}({params}):\n"
            f"    with parpy.gpu:\n{body}")


def test_every_1d_slice_selects_what_numpy_selects(tmp_path):
    x = np.arange(1.0, 10.0)  # 9 elements
    specs = list(itertools.product(BOUNDS, BOUNDS, STEPS))
    stmts = []
    for k, (lo, hi, step) in enumerate(specs):
        n = len(x[slice(lo, hi, step)])
        stmts.append(f"out[{k}, :{n}] = x[{spelled(lo, hi, step)}]")
        stmts.append(f"sums[{k}] = parpy.operators.sum(x[{spelled(lo, hi, step)}])")
    fn = load(tmp_path, "every_1d", program("every_1d", "x, out, sums", stmts))
    out = np.full((len(specs), 9), -1.0)
    got = run_both(fn, [x, out, np.zeros(len(specs))], cpu_opts())
    for k, (lo, hi, step) in enumerate(specs):
        want = x[slice(lo, hi, step)]
        assert np.array_equal(got[1][k, :len(want)], want), (lo, hi, step)
        assert got[2][k] == want.sum()


def test_2d_strided_slices_and_broadcasting(tmp_path):
    X = np.arange(48.0).reshape(6, 8)
    cases = [
        ("::2", "::3"), ("1::2", "::-1"), ("::-2", "7:0:-3"), ("-1:-7:-1", "1:-1:2"),
        ("4:1:-1", ":"), (":", "::-8"), ("5:", "::4"),
    ]
    stmts = []
    for k, (a, b) in enumerate(cases):
        r, c = X[eval(f"np.s_[{a}, {b}]")].shape
        stmts.append(f"out[{k}, :{r}, :{c}] = X[{a}, {b}] * 2.0 + X[{a}, 0:1]")
    fn = load(tmp_path, "two_d", program("two_d", "X, out", stmts))
    out = np.zeros((len(cases), 6, 8))
    got = run_both(fn, [X, out], cpu_opts())
    assert got[1][1, 0, 0] == X[1, 7] * 2 + X[1, 0]


@parpy.jit
def overlapping(y, z, w, v):
    with parpy.gpu:
        y[::-1] = y                # a reversal: through a temporary
        y[2::2] = y[:-2:2] + 1.0   # reads run one iteration behind
        y[1:-2:2] = y[3::2] * 2.0  # and one ahead
        y[::3] = y[1::3]           # never the same element
        z[1:, ::-1] = z[:-1, :]    # rows one ahead, columns mirrored
        w[::2] = w[::-2]
        v[4::-2] = v[:5:2]         # reversed into itself: a temporary


def test_assignments_that_read_what_they_write_evaluate_the_right_side_first():
    a = np.arange(11.0)
    b = np.arange(20.0).reshape(4, 5)
    run_both(overlapping, [a, b, np.arange(9.0), np.arange(9.0)], cpu_opts())


@parpy.jit
def strided_rows(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, ::2] = x[i, 1::2]
        y[i, 1::2] = x[i, -1::-2] + parpy.operators.max(x[i, ::3])
        for e in x[i, ::-3]:
            y[i, 0] += e


def test_strided_slices_in_a_parallel_loop():
    x = np.random.default_rng(3).random((16, 10))
    run_both(strided_rows, [x, np.zeros((16, 10)), 16],
             cpu_opts({'i': parpy.threads(4)}))


@parpy.jit
def zero_step(x, y):
    with parpy.gpu:
        y[:] = x[::0]


@parpy.jit
def step_not_known(x, y, s):
    with parpy.gpu:
        y[:3] = x[::s]


def test_a_zero_step_or_one_not_known_when_compiling_is_an_error():
    x, y = np.arange(6.0), np.zeros(6)
    with pytest.raises(parpy.CompileError, match="slice step cannot be zero") as e:
        zero_step(x, y, opts=cpu_opts())
    assert "x[::0]" in str(e.value)
    opts = cpu_opts()
    opts.specialize_scalars = False
    with pytest.raises(parpy.CompileError, match="a slice step must be a compile-time constant"):
        step_not_known(x, y, 2, opts=opts)
    # specialized (the default), the step is a constant
    step_not_known(x, y, 2, opts=cpu_opts())
    assert np.array_equal(y[:3], x[::2])


def test_strided_slices_compile_for_cuda_and_metal():
    x = np.zeros((16, 10), np.float32)
    codes = check_gpu_code(strided_rows, lambda _: [x, np.zeros_like(x), 16],
                           {'i': parpy.threads(16)}, "strided_rows")
    for code in codes.values():
        assert "1 + 2 * " in code and "- 2 * " in code, code


# --------------------------------------------------------------------------
# Locals assigned once a constant are known when compiling: slice bounds and
# steps, `round`'s decimals, `x.shape[k]` and the ranges of `enumerate` may
# name them (they were "must be a compile-time constant").


@parpy.jit
def halves(x, y, z, N):
    H, W = x.shape
    h = W // 2
    k = 1
    step = -k - 1
    parpy.label('i')
    for i in range(N):
        y[i, :h] = x[i, :W:2] + x[i, h:]
        y[i, h:] = x[i, W - 1::step]
        d = 2
        z[i] = np.round(x[i, x.shape[k] - 1] * 1000.0, d)
        for j, v in enumerate(x[i, h::3], h):
            z[i] += j * v


def test_locals_assigned_once_a_constant_are_compile_time_values():
    x = np.random.default_rng(5).random((6, 8))
    run_both(halves, [x, np.zeros((6, 8)), np.zeros(6), 6],
             cpu_opts({'i': parpy.threads(3)}))


@parpy.jit
def bound_assigned_twice(x, y):
    with parpy.gpu:
        h = 2
        if x[0] > 0.5:
            h = 3
        y[:h] = x[:h]


def test_a_local_assigned_twice_is_not_a_compile_time_value():
    # (a slice bound known only at run time: `runtime_slices.rs`)
    run_both(bound_assigned_twice, [np.ones(4), np.zeros(4)], cpu_opts())
    run_both(bound_assigned_twice, [np.zeros(4), np.zeros(4)], cpu_opts())
