"""NumPy adds a float sum over several dimensions (`np.sum(x[i])`,
`np.mean(x[i, 1:-1, 1:-1])`, `x[i, :, :, 0].sum()`) in its own order: a
view its iterator walks as one dimension is summed pairwise in place;
otherwise NumPy copies runs of whole rows into buffers of 8192 elements
and sums each buffer pairwise, the runs in order (float16: each run in
float32, the running sum rounded to float16). The Cpu keeps that order, so
its answer is NumPy's to the last bit, for every layout rule: one merged
dimension, small slices in one buffer, many runs per block, rows longer
than a buffer, computed operands (a new array: one dimension), and the
means of integers, bools and float16, which NumPy converts in its
buffers."""

import functools
import importlib.util
import warnings

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both, same_bits, scratch_dir

N = 3


def _par():
    return cpu_opts({'i': parpy.threads(N)})


@parpy.jit
def sums(x, s, e, m, v, t, c, n, N):
    parpy.label('i')
    for i in range(N):
        s[i] = np.sum(x[i])
        e[i] = np.sum(x[i, 1:-1, 1:])
        m[i] = np.mean(x[i, 1:, 1:-1])
        v[i] = np.var(x[i, :-1, 1:-1])
        t[i] = x[i, :, 2:].sum()
        c[i] = np.sum(x[i, 1:, :] * 2.0)
        n[i] = np.nansum(x[i, :, 1:])


@parpy.jit
def strided(x, s, m, N):
    parpy.label('i')
    for i in range(N):
        s[i] = np.sum(x[i, :, :, 1])
        m[i] = np.mean(x[i, 1:, :-1, 0:3])


@parpy.jit
def stepped(x, s, t, u, w, N):
    parpy.label('i')
    for i in range(N):
        s[i] = np.sum(x[i, ::-1, 1:])
        t[i] = np.sum(x[i, 1:, ::-1])
        u[i] = np.sum(x[i, ::-2, ::3])
        w[i] = np.mean(x[i, ::-1, ::-1])


@parpy.jit
def on_the_host(x, y):
    y[0] = np.sum(x[1:, 1:])
    y[1] = np.sum(x[:, :])


def data(shape, dtype, seed=3):
    """Values over many orders of magnitude, so that any other order of
    additions gives other bits."""
    rng = np.random.default_rng(seed)
    lo, hi = (-2, 2) if np.dtype(dtype) == np.float16 else (-3, 6)
    x = rng.standard_normal(shape) * 10.0 ** rng.uniform(lo, hi, shape)
    return x.astype(dtype)


def numpys(fn, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_both(fn, args, _par(), rtol=1e-2, atol=1e-2)


# (rows, columns) of x[i]: one buffer; many runs per block (columns of 98:
# runs of 83 rows); rows longer than a buffer, summed one at a time; a
# block of one row
SHAPES = [(5, 7), (300, 100), (4, 9000), (2, 8300), (40, 300)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_sums_over_two_dimensions_are_numpys(shape, dtype):
    x = data((N, *shape), dtype)
    outs = [np.zeros(N, dtype) for _ in range(7)]
    got = numpys(sums, [x, *outs, N])[1:-1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = [[f(x[i]) for i in range(N)] for f in (
            np.sum, lambda a: np.sum(a[1:-1, 1:]), lambda a: np.mean(a[1:, 1:-1]),
            lambda a: np.var(a[:-1, 1:-1]), lambda a: a[:, 2:].sum(),
            lambda a: np.sum(a[1:, :] * 2.0), lambda a: np.nansum(a[:, 1:]))]
    for g, w in zip(got, want):
        same_bits(g, np.array(w, dtype), _par())


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(6, 5, 4), (30, 70, 5), (3, 3000, 4)],
                         ids=lambda s: "x".join(map(str, s)))
def test_sums_of_strided_and_4d_views_are_numpys(shape, dtype):
    x = data((N, *shape), dtype)
    s, m = np.zeros(N, dtype), np.zeros(N, dtype)
    got = numpys(strided, [x, s, m, N])
    same_bits(got[1], np.array([np.sum(x[i, :, :, 1]) for i in range(N)], dtype), _par())
    same_bits(got[2], np.array([np.mean(x[i, 1:, :-1, 0:3]) for i in range(N)], dtype), _par())


@parpy.jit
def means(x, m, e, v, N):
    parpy.label('i')
    for i in range(N):
        m[i] = np.mean(x[i])
        e[i] = np.mean(x[i, 1:-1, 1:])
        v[i] = np.var(x[i, 1:, :-1])


def ints(shape, dtype, seed=4):
    """Integers whose float64 sums round (large magnitudes mixed with
    small ones)."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.bool_:
        return rng.random(shape) < 0.3
    info = np.iinfo(dtype)
    big = rng.integers(info.min // 2, info.max // 2, shape, dtype=dtype)
    return np.where(rng.random(shape) < 0.5, big, rng.integers(-50, 50, shape).astype(dtype))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.bool_, np.float16],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(5, 7), (300, 100), (3, 20000), (4, 9000)],
                         ids=lambda s: f"{s[0]}x{s[1]}")
def test_means_that_convert_their_elements_are_numpys(shape, dtype):
    # NumPy's mean of integers, bools (float64) and float16 (float32)
    # converts in its buffers: a row longer than a buffer in runs of 8192
    x = data((N, *shape), dtype) if dtype == np.float16 else ints((N, *shape), dtype)
    out = np.float16 if dtype == np.float16 else np.float64
    outs = [np.zeros(N, out) for _ in range(3)]
    got = numpys(means, [x, *outs, N])[1:-1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # (a float16 variance overflows)
        want = [[f(x[i]) for i in range(N)] for f in (
            np.mean, lambda a: np.mean(a[1:-1, 1:]), lambda a: np.var(a[1:, :-1]))]
    for g, w in zip(got, want):
        same_bits(g, np.array(w, out), _par())


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(9, 7), (300, 100), (40, 300)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_sums_of_strided_and_reversed_views_are_numpys(shape, dtype):
    # NumPy walks a reversed view in its own order (negative strides)
    x = data((N, *shape), dtype)
    got = numpys(stepped, [x, *[np.zeros(N, dtype) for _ in range(4)], N])[1:-1]
    want = [[f(x[i]) for i in range(N)] for f in (
        lambda a: np.sum(a[::-1, 1:]), lambda a: np.sum(a[1:, ::-1]),
        lambda a: np.sum(a[::-2, ::3]), lambda a: np.mean(a[::-1, ::-1]))]
    for g, w in zip(got, want):
        same_bits(g, np.array(w, dtype), _par())


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=lambda d: np.dtype(d).name)
def test_a_sum_on_the_host_is_numpys(dtype):
    x = data((3, 20000), dtype)
    y = np.zeros(2, dtype)
    got = numpys(on_the_host, [x, y])
    same_bits(got[1], np.array([np.sum(x[1:, 1:]), np.sum(x)], dtype), _par())


def test_the_runs_of_a_non_contiguous_view_go_through_a_buffer():
    x = np.zeros((N, 300, 100), np.float32)
    code = parpy.print_compiled(strided, [x[:, :, :, None].repeat(2, 3), np.zeros(N, np.float32),
                                          np.zeros(N, np.float32), N], _par())
    assert "pairwise_sum" in code and "buf[" in code


def test_the_full_runs_and_the_last_one_share_their_helper():
    # x[i, ::-1, 1:] of 300 x 100: three runs of 82 rows and one of 54;
    # four sums, four helpers (one per element), not seven
    x = np.zeros((N, 300, 100))
    code = parpy.print_compiled(stepped, [x, *[np.zeros(N) for _ in range(4)], N], _par())
    assert code.count("static double pairwise_sum") == 4


def test_sums_in_runs_compile_for_cuda_and_metal():
    x = np.zeros((N, 40, 300), np.float32)
    check_gpu_code(sums, lambda backend: [x, *[np.zeros(N, np.float32)] * 7, N],
                   {'i': parpy.threads(N)}, "sums_in_runs")


def _random_slices(count, seed):
    """`count` random slice texts of a (N, a, b, c) array `x`, each of two or
    three dimensions (steps, negative ones, and bounds from either end)
    with the other dimensions indexed, and the shape of `x` they need."""
    import random
    r = random.Random(seed)
    out = []
    for _ in range(count):
        shape = tuple(r.choice([1, 2, 3, 7, 40, 130, 300]) for _ in range(3))
        while np.prod(shape) > 120000:  # (at most 3 MB of float64 per i)
            shape = tuple(n // 2 if n == max(shape) else n for n in shape)
        dims = []
        for n in shape:
            kind = r.random()
            if kind < 0.2:
                dims.append(str(r.randrange(n)))
            elif kind < 0.4:
                dims.append(":")
            else:
                dims.append(_random_slice(r, n, [1, 1, 2, -1, -3]))
        out.append((f"x[i, {', '.join(dims)}]", shape))
    return out


def _random_slice(r, n, steps):
    """A random slice of a dimension of `n`: bounds from either end, one of
    the `steps`."""
    lo, hi = sorted(r.sample(range(-n, n + 1), 2)) if n > 1 else (0, 1)
    step = r.choice(steps)
    return f"{hi}:{lo}:{step}" if step < 0 else f"{lo}:{hi}:{step}"


_CASES = _random_slices(24, 31)


@functools.cache
def random_kernels():
    """The kernels of `_CASES`, one per slice, `s[i] = np.sum(SLICE)` and
    `m[i] = np.mean(SLICE)`, written into a module of their own."""
    src = []
    for k, (text, _) in enumerate(_CASES):
        src += ["@parpy.jit", f"def k{k}(x, s, m, N):", "    parpy.label('i')",
                "    for i in range(N):", f"        s[i] = np.sum({text})",
                f"        m[i] = np.mean({text})", ""]
    return kernel_module("sum_run_kernels", src)


def kernel_module(name, lines):
    """The module of the source `lines` (after NumPy's and parpy's
    imports), written to a file of its own so that parpy reads its source."""
    path = scratch_dir("parpy-sum-runs-") / f"{name}.py"
    path.write_text("\n".join(["import numpy as np", "import parpy", ""] + lines))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("case", range(len(_CASES)), ids=lambda k: _CASES[k][0])
def test_random_views_sum_as_numpy_does(case, dtype):
    text, shape = _CASES[case]
    x = data((N, *shape), dtype, seed=case)
    view = eval(text.replace("x[i, ", "x[:, "), {"x": x})
    if view.ndim < 3 or view.size == 0:
        pytest.skip("not a sum over several dimensions")
    fn = getattr(random_kernels(), f"k{case}")
    s, m = np.zeros(N, dtype), np.zeros(N, dtype)
    got = numpys(fn, [x, s, m, N])
    rows = [view[i] for i in range(N)]
    same_bits(got[1], np.array([np.sum(v) for v in rows], dtype), _par())
    same_bits(got[2], np.array([np.mean(v) for v in rows], dtype), _par())


@parpy.jit
def transposed(x, s, t, m, d, N):
    parpy.label('i')
    for i in range(N):
        s[i] = np.sum(x[i].T)
        t[i] = np.sum(x.T[::-1, 1:, i])
        m[i] = np.mean(np.transpose(x[i, ::2, ::-1]))
        d[i] = np.sum(np.diagonal(x[i].T, 1))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(5, 7), (300, 100), (40, 300)],
                         ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_transposed_view_sums_in_the_arrays_order(shape, dtype):
    # NumPy's iterator walks a view's dimensions by the length of their
    # strides in memory: the sum of `x[i].T` is the sum of `x[i]`
    x = data((N, *shape), dtype)
    got = numpys(transposed, [x, *[np.zeros(N, dtype) for _ in range(4)], N])[1:-1]
    want = [[np.sum(m.T) for m in x], [np.sum(x.T[::-1, 1:, i]) for i in range(N)],
            [np.mean(np.transpose(m[::2, ::-1])) for m in x],
            [np.sum(np.diagonal(m.T, 1)) for m in x]]
    for g, w in zip(got, want):
        same_bits(g, np.array(w, dtype), _par())


@parpy.jit
def nested(x, a, b, c, d, e, N):
    parpy.label('i')
    for i in range(N):
        a[i] = np.sum(np.sum(x[i], axis=0))
        b[i] = np.mean(np.max(x[i], axis=1))
        c[i] = np.var(np.sum(x[i], axis=1))
        d[i] = np.sum(np.sum(x[i], axis=1) * 2)
        e[i] = np.mean(np.sum(x[i, :, ::-1], axis=0) - np.min(x[i], axis=0))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(5, 7), (300, 100), (3000, 5)],
                         ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_reduction_of_reductions_is_numpys(shape, dtype):
    # NumPy computes the inner reductions into a new array, then reduces
    # that (pairwise, in buffers where it converts): so does the Cpu,
    # through a local array
    x = ints((N, *shape), dtype) if dtype == np.int32 else data((N, *shape), dtype)
    s = np.sum(x[0], axis=0).dtype
    m = np.mean(x[0, 0]).dtype
    outs = [np.zeros(N, s), np.zeros(N, m), np.zeros(N, m), np.zeros(N, s), np.zeros(N, m)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = run_both(nested, [x, *outs, N], _par(), rtol=1e-2, atol=1e-2)[1:-1]
        want = [[np.sum(np.sum(v, axis=0)) for v in x], [np.mean(np.max(v, axis=1)) for v in x],
                [np.var(np.sum(v, axis=1)) for v in x], [np.sum(np.sum(v, axis=1) * 2) for v in x],
                [np.mean(np.sum(v[:, ::-1], axis=0) - np.min(v, axis=0)) for v in x]]
    for g, w in zip(got, want):
        same_bits(g, np.array(w, g.dtype), _par())


@parpy.jit
def inside_a_par_reduction(x, s, N):
    parpy.label('i')
    for i in range(N):
        s[0] += np.sum(np.sum(x[i], axis=0)) + np.sum(x[i, :, 1:])


def test_a_sum_through_a_local_array_fits_in_a_par_reduction_body():
    # (its local array is private to the iteration, as its scalars are:
    # refused as "not a reduction" before)
    x = data((N, 40, 30), np.float64)
    opts = cpu_opts({'i': parpy.threads(N).par_reduction()})
    s = run_both(inside_a_par_reduction, [x, np.zeros(1), N], opts, rtol=1e-12)[1]
    assert np.isclose(s[0], sum(np.sum(np.sum(m, axis=0)) + np.sum(m[:, 1:]) for m in x))


# --------------------------------------------------------------------------
# Sums along some axes: NumPy walks the view's dimensions in memory order;
# where the innermost one is kept, each result adds its elements in order;
# where it is reduced, the innermost reduced dimensions (merged where they
# step over each other, in buffers where they do not) are summed in runs,
# each pairwise, for each step of the outer reduced dimensions in order.
# (Before: pairwise along the last axis only, in order otherwise, so
# `np.sum(x[i], axis=(1, 2))` of a contiguous block, a transposed view's
# axes and strided views missed NumPy's bits.)


def _random_axis_sums(count, seed):
    """`count` random (view text, axes, shape of x) of a (N, a, b, c)
    array `x`: 3-D views (steps, reversed, bounds from either end, some
    transposed) reduced along one or two of their axes."""
    import random
    r = random.Random(seed)
    out = []
    for _ in range(count):
        shape = tuple(r.choice([1, 2, 3, 7, 9, 40, 130]) for _ in range(3))
        dims = []
        for n in shape:
            kind = r.random()
            if kind < 0.4:
                dims.append(":")
            else:
                dims.append(_random_slice(r, n, [1, 1, 2, -1, -2]))
        text = f"x[i, {', '.join(dims)}]"
        if r.random() < 0.3:
            text += ".T"
        axes = tuple(sorted(r.sample(range(3), r.choice([1, 1, 2]))))
        out.append((text, axes, shape))
    return out


_AXIS_CASES = _random_axis_sums(44, 57) + [
    ("x[i]", (1, 2), (4, 9, 11)), ("x[i]", (0, 2), (4, 9, 11)), ("x[i].T", (1,), (9, 11, 7)),
    ("x[i].T", (0,), (9, 11, 7)), ("x[i, :, ::2, :]", (1, 2), (5, 12, 16)),
    ("x[i, :, :, 1:]", (1, 2), (5, 12, 16)), ("x[i]", (1, 2), (3, 90, 100)),
    ("x[i, :, 1:, :]", (0, 1), (130, 40, 7)),
]


@functools.cache
def axis_kernels():
    """The kernels of `_AXIS_CASES`: `s[i] = np.sum(VIEW, axis=AXES)`,
    `m[i] = np.mean(VIEW, axis=AXES)` and `c[i] = np.sum(VIEW * 2.0 + 1.0,
    axis=AXES)`, in a module of their own."""
    src = []
    for k, (text, axes, _) in enumerate(_AXIS_CASES):
        src += ["@parpy.jit", f"def a{k}(x, s, m, c, N):", "    parpy.label('i')",
                "    for i in range(N):", f"        s[i] = np.sum({text}, axis={axes})",
                f"        m[i] = np.mean({text}, axis={axes})",
                f"        c[i] = np.sum({text} * 2.0 + 1.0, axis={axes})", ""]
    return kernel_module("axis_sum_kernels", src)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("case", range(len(_AXIS_CASES)),
                         ids=lambda k: f"{_AXIS_CASES[k][0]}-axis{_AXIS_CASES[k][1]}")
def test_sums_along_axes_walk_the_view_as_numpy_does(case, dtype):
    text, axes, shape = _AXIS_CASES[case]
    x = data((N, *shape), dtype, seed=case)
    rows = [eval(text.replace("x[i", "x[k"), {"x": x, "k": k}) for k in range(N)]
    if rows[0].size == 0 or any(n == 0 for n in rows[0].shape):
        pytest.skip("an empty view")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = [np.array([f(v) for v in rows]) for f in (
            lambda v: np.sum(v, axis=axes), lambda v: np.mean(v, axis=axes),
            lambda v: np.sum(v * 2.0 + 1.0, axis=axes))]
    fn = getattr(axis_kernels(), f"a{case}")
    outs = [np.zeros(w.shape, dtype) for w in want]
    got = numpys(fn, [x, *outs, N])[1:-1]
    for g, w in zip(got, want):
        same_bits(g, w.astype(dtype), _par())


@parpy.jit
def products(x, p, q, r, N):
    parpy.label('i')
    for i in range(N):
        p[i] = np.prod(x[i].T)
        q[i] = np.prod(x[i, ::-1, 1:].T)
        r[i, :] = np.prod(x[i].T, axis=1)


def test_a_product_of_a_view_multiplies_in_memory_order():
    # (NumPy multiplies in order, walking the view as the array lies in
    # memory; the product of `x[i].T` went column by column)
    x = 1.0 + 0.01 * np.random.default_rng(5).standard_normal((N, 30, 20))
    outs = [np.zeros(N), np.zeros(N), np.zeros((N, 20))]
    got = numpys(products, [x, *outs, N])[1:-1]
    want = [[np.prod(m.T) for m in x], [np.prod(m[::-1, 1:].T) for m in x],
            [np.prod(m.T, axis=1) for m in x]]
    for g, w in zip(got, want):
        same_bits(g, np.array(w), _par())
