"""Float sums in NumPy's order: on the Cpu backend an unlabelled 1-D
`np.sum` / `.sum()` / `parpy.sum` / `np.mean` / `np.var` gives NumPy's
result bit for bit (`passes::pairwise_sums`: NumPy's pairwise
summation, its accumulator types, and the buffers of 8192 elements of its
float16 and integer means). So does such a sum inside a GPU thread, of at
most 64 blocks: a helper that adds one block, the halves split when
compiling (no recursion on the GPUs). A labelled (parallel) sum adds in a
tree."""

import re
import shutil

import numpy as np
import pytest

import parpy
from conftest import cpu_opts

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def pairwise(values, acc):
    """NumPy's pairwise summation (numpy/_core/src/umath/loops_utils.h.src)
    of `values` in the accumulator type `acc`, written out for the tests."""
    n = len(values)
    if n < 8:
        s = acc(-0.0)
        for v in values:
            s = acc(s + v)
        return s
    if n <= 128:
        r = [acc(v) for v in values[:8]]
        k = 8
        while k < n - n % 8:
            for t in range(8):
                r[t] = acc(r[t] + values[k + t])
            k += 8
        res = acc(acc(acc(r[0] + r[1]) + acc(r[2] + r[3])) + acc(acc(r[4] + r[5]) + acc(r[6] + r[7])))
        for v in values[k:]:
            res = acc(res + v)
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return acc(pairwise(values[:n2], acc) + pairwise(values[n2:], acc))


def in_order(values, acc):
    s = acc(0.0)
    for v in values:
        s = acc(s + v)
    return s


def same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    assert got.tobytes() == want.tobytes(), f"{got!r} != {want!r} (NumPy)"


def test_the_reference_is_numpys_sum():
    # the reference above is NumPy's algorithm, and the data below tells
    # it from a sum in order: a test of the order can fail
    x = np.random.default_rng(0).standard_normal(1000)
    assert pairwise(x, np.float64) == np.sum(x)
    assert in_order(x, np.float64) != np.sum(x)
    h = np.random.default_rng(1).standard_normal(300).astype(np.float16)
    assert np.float16(pairwise(h.astype(np.float32), np.float32)) == np.sum(h)


@parpy.jit
def three_sums(x, a, b, c, N):
    parpy.label('N')
    for i in range(N):
        a[i] = np.sum(x[i, :])
        b[i] = x[i, :].sum()
        c[i] = parpy.operators.sum(x[i, :])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("n", [1, 7, 8, 9, 100, 128, 129, 255, 1000, 4099])
def test_row_sums_are_numpys_bit_for_bit(dtype, n):
    x = (np.random.default_rng(n).standard_normal((3, n)) * 10).astype(dtype)
    out = [np.zeros(3, dtype) for _ in range(3)]
    three_sums(x, *out, 3, opts=cpu_opts({'N': parpy.threads(3)}))
    want = np.array([np.sum(x[i, :]) for i in range(3)])
    for got in out:
        same_bits(got, want)


@parpy.jit
def weighted(x, w, dot, ex, N):
    parpy.label('N')
    for i in range(N):
        dot[i] = np.sum(x[i, :] * w)
        m = np.max(x[i, :])
        ex[i] = np.sum(np.exp(x[i, :] - m))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sums_of_expressions_add_the_rounded_elements_pairwise(dtype):
    # NumPy rounds each product (no fused multiply-add), then adds pairwise
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 777)).astype(dtype)
    w = rng.standard_normal(777).astype(dtype)
    dot, ex = np.zeros(4, dtype), np.zeros(4, dtype)
    weighted(x, w, dot, ex, 4, opts=cpu_opts({'N': parpy.threads(2)}))
    same_bits(dot, np.array([np.sum(x[i, :] * w) for i in range(4)]))
    # exp itself is the C library's, NumPy's may differ in the last bit:
    # the sum of the same exponentials is NumPy's
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(ex, e.sum(axis=1), rtol=4 * np.finfo(dtype).eps)


@parpy.jit
def column_stats(x, s, v, d, M):
    parpy.label('M')
    for j in range(M):
        s[j] = x[:, j].sum()
        v[j] = np.var(x[:, j])
        d[j] = np.std(x[:, j], ddof=1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("n", [13, 300])
def test_strided_sums_and_variances_are_numpys(dtype, n):
    # a column is a strided view: NumPy sums it pairwise as well; np.var of
    # float16 rounds the sum to float16 before it divides
    x = np.random.default_rng(n).standard_normal((n, 3)).astype(dtype)
    s, v, d = (np.zeros(3, dtype) for _ in range(3))
    column_stats(x, s, v, d, 3, opts=cpu_opts({'M': parpy.threads(3)}))
    same_bits(s, np.array([x[:, j].sum() for j in range(3)]))
    same_bits(v, np.array([np.var(x[:, j]) for j in range(3)]))
    same_bits(d, np.array([np.std(x[:, j], ddof=1) for j in range(3)]))


@parpy.jit
def row_means(x, m, N):
    parpy.label('N')
    for i in range(N):
        m[i] = np.mean(x[i, :])


@pytest.mark.parametrize("dtype", [np.float16, np.int64, np.float32])
def test_means_follow_numpys_buffers(dtype):
    # NumPy's mean of float16 (in float32) and of integers (in float64)
    # converts the elements in buffers of 8192, each summed pairwise
    n = 30000
    rng = np.random.default_rng(3)
    if dtype == np.int64:
        x = rng.integers(-2**62, 2**62, (2, n))
    else:
        x = (rng.standard_normal((2, n)) * 100).astype(dtype)
    m = np.zeros(2, np.mean(x[0]).dtype)
    row_means(x, m, 2, opts=cpu_opts({'N': parpy.threads(2)}))
    same_bits(m, np.array([np.mean(x[i, :]) for i in range(2)]))
    if dtype == np.int64:
        # the buffers matter: one pairwise sum of all the elements differs
        whole = pairwise(x[0].astype(np.float64), np.float64) / n
        assert whole != np.mean(x[0])


@parpy.jit
def helper_sum(x, i):
    return np.sum(x[i, :]) * 2.0


@parpy.jit
def calls_helper(x, y, N):
    for i in range(N):
        y[i] = helper_sum(x, i)


def test_sums_in_helpers_and_host_code():
    # the sum's own helper is written before the jit helper that calls it
    x = np.random.default_rng(5).standard_normal((3, 500))
    y = np.zeros(3)
    calls_helper(x, y, 3, opts=cpu_opts())
    same_bits(y, np.array([np.sum(x[i, :]) * 2.0 for i in range(3)]))


@parpy.jit
def labelled_sum(x, y, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        y[i] = parpy.operators.sum(x[i, :])


def test_a_parallel_sum_keeps_its_threads():
    # a labelled sum runs in parallel (float64 partial sums): close to
    # NumPy, in an order of its own
    x = np.random.default_rng(9).standard_normal((2, 5000)).astype(np.float32)
    y = np.zeros(2, np.float32)
    opts = cpu_opts({'N': parpy.threads(2), 'M': parpy.threads(64)})
    labelled_sum(x, y, 2, opts=opts)
    np.testing.assert_allclose(y, x.sum(axis=1), rtol=1e-5)
    code = parpy.print_compiled(labelled_sum, [x, y, 2], opts)
    assert "pairwise_sum" not in code


@parpy.jit
def affine(a, b):
    return a * 2.0 + b


@parpy.jit
def scaled_row_sum(x, i):
    return np.sum(x[i, :] * affine(x[i, 0], 1.0))


@parpy.jit
def sums_calling_helpers(x, y, z, N):
    parpy.label('N')
    for i in range(N):
        y[i] = np.sum(x[i, :] * affine(x[i, 1], 0.5))
        z[i] = scaled_row_sum(x, i)


def test_a_sum_whose_element_calls_a_helper():
    # the sum's own helper calls `affine`: the C file defines `affine`
    # first, also when the sum is inside another helper
    x = np.random.default_rng(11).standard_normal((3, 300))
    y, z = np.zeros(3), np.zeros(3)
    sums_calling_helpers(x, y, z, 3, opts=cpu_opts({'N': parpy.threads(3)}))
    same_bits(y, np.array([np.sum(x[i, :] * (x[i, 1] * 2.0 + 0.5)) for i in range(3)]))
    same_bits(z, np.array([np.sum(x[i, :] * (x[i, 0] * 2.0 + 1.0)) for i in range(3)]))


@parpy.jit
def row_stats(x, mean, var, N):
    parpy.label('N')
    for i in range(N):
        mean[i] = np.mean(x[i])
        var[i] = ((x[i] - mean[i]) ** 2).sum()


@pytest.mark.skipif(shutil.which("c++") is None, reason="the CUDA emulator needs a C++ compiler")
@pytest.mark.parametrize("M", [10, 33, 300, 1000])
def test_a_sum_inside_a_cuda_thread_is_numpys(M):
    # (the sums of a thread were in order on Cuda: layer norms and
    # softmaxes ported from NumPy differed from it in the last bits)
    from parpy import _cuda_emu

    x = np.random.default_rng(M).standard_normal((3, M))
    mean, var = np.zeros(3), np.zeros(3)
    opts = cpu_opts({'N': parpy.threads(3)})
    opts.backend = parpy.CompileBackend.Cuda
    with _cuda_emu.installed(0):
        row_stats(x, mean, var, 3, opts=opts)
    same_bits(mean, np.mean(x, axis=1))
    same_bits(var, np.array([((x[i] - mean[i]) ** 2).sum() for i in range(3)]))
    assert in_order(x[0], np.float64) != np.sum(x[0]) or M == 10


def split_blocks(n):
    """The blocks NumPy's recursion adds `n` elements in."""
    if n <= 128:
        return [n]
    n2 = (n >> 1) & -8
    return split_blocks(n2) + split_blocks(n - n2)


@pytest.mark.parametrize("M", [100, 1000, 8192, 10000])
def test_a_metal_sum_splits_its_halves_when_compiling(M):
    # Metal has no recursion: the helper adds one block, the kernel adds
    # the blocks of NumPy's recursion; past 64 blocks, a sum in order
    x = np.zeros((2, M), np.float32)
    opts = cpu_opts({'N': parpy.threads(2)})
    opts.backend = parpy.CompileBackend.Metal
    code = parpy.print_compiled(row_stats, [x, np.zeros(2, np.float32), np.zeros(2, np.float32), 2], opts)
    helper = code[code.index("static float pairwise_sum("):code.index("[[kernel]]")] if M <= 8192 else ""
    calls = re.findall(r"pairwise_sum\(x, i, (\d+), (\d+)\)", code)
    if M <= 8192:
        # no helper calls itself; each sum calls it once per block
        assert "pairwise_sum(x" not in helper.split("{", 1)[1]
        blocks = split_blocks(M)
        assert [int(n) for _, n in calls] == blocks
        starts = [int(lo) for lo, _ in calls[:len(blocks)]]
        assert starts == [sum(blocks[:k]) for k in range(len(blocks))]
    else:
        assert calls == [] and "pairwise_sum" not in code
    import test_metal_codegen as tm
    if tm.CLANG is not None:
        tm.assert_clang_ok(code, f"row_stats_{M}")


@parpy.jit
def plane_sums(x, s, m, N):
    parpy.label('N')
    for i in range(N):
        s[i] = np.sum(x[i])
        m[i] = x[i].T.mean()


@pytest.mark.skipif(shutil.which("c++") is None, reason="the CUDA emulator needs a C++ compiler")
def test_a_sum_over_a_plane_inside_a_cuda_thread_is_numpys():
    # a view NumPy walks as one run is summed pairwise in place on Cuda too
    # (a run copied into a buffer first stays Cpu only)
    from parpy import _cuda_emu

    x = np.random.default_rng(5).standard_normal((2, 20, 17))
    s, m = np.zeros(2), np.zeros(2)
    opts = cpu_opts({'N': parpy.threads(2)})
    opts.backend = parpy.CompileBackend.Cuda
    with _cuda_emu.installed(0):
        plane_sums(x, s, m, 2, opts=opts)
    same_bits(s, np.array([np.sum(x[i]) for i in range(2)]))
    same_bits(m, np.array([x[i].T.mean() for i in range(2)]))
