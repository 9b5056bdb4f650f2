"""parpy.atomic.add / max / min: atomic updates of one array element in
parallel loops. Cpu runs match plain Python (and NumPy's own answer);
the Cuda code compiles with NVRTC; the Metal code parses with clang;
unsupported element types and misuse are source-located errors."""

import numpy as np
import pytest

import parpy
from conftest import backend_opts, cpu_opts, run_both
from test_cuda_codegen import check_nvrtc, needs_nvrtc
from test_metal_codegen import assert_clang_ok, needs_clang


@parpy.jit
def histogram(x, hist, N):
    parpy.label('i')
    for i in range(N):
        parpy.atomic.add(hist, x[i], 1)


@parpy.jit
def weighted(x, w, hist, N):
    parpy.label('i')
    for i in range(N):
        parpy.atomic.add(hist, x[i], w[i])


@parpy.jit
def extremes(x, hi, lo, N):
    parpy.label('i')
    for i in range(N):
        parpy.atomic.max(hi, (0, i % 3), x[i])
        parpy.atomic.min(lo, i % 4, x[i])


@parpy.jit
def grid_counts(rows, cols, counts, N):
    parpy.label('i')
    for i in range(N):
        parpy.atomic.add(counts, (rows[i], cols[i]), 1)


@parpy.jit
def block_histogram(x, w, hist, grid, N):
    parpy.label('i')
    for i in range(N):
        with parpy.atomic:
            hist[x[i]] += w[i]
            grid[x[i] % 2, x[i] % 3] += 1


@parpy.jit
def block_with_a_store(x, hist, N):
    parpy.label('i')
    for i in range(N):
        with parpy.atomic:
            hist[x[i]] = 1


@parpy.jit
def sequential_add(x, hist, N):
    for i in range(N):
        parpy.atomic.add(hist, x[i], 2)


def spec(n=8):
    return cpu_opts({'i': parpy.threads(n)})


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.int16, np.uint64])
def test_histogram_matches_bincount(dtype):
    n = 20000
    x = (np.arange(n) * 7919 % 10).astype(np.int64)
    out = run_both(histogram, [x, np.zeros(10, dtype), n], spec(16))
    # (uint8 counts wrap around as NumPy's do)
    assert out[1].tolist() == np.bincount(x, minlength=10).astype(dtype).tolist()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_weighted_float_sums(dtype):
    # integer weights: every order of the additions gives the exact sum
    n = 5000
    x = (np.arange(n) * 31 % 7).astype(np.int64)
    w = (np.arange(n) % 5).astype(dtype)
    out = run_both(weighted, [x, w, np.zeros(7, dtype), n], spec(16))
    assert out[2].tolist() == np.bincount(x, weights=w, minlength=7).tolist()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int8, np.uint16, np.int64])
def test_max_and_min_match_numpy(dtype):
    n = 997
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(n) * 40).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        hi, lo = np.full((1, 3), -np.inf, dtype), np.full(4, np.inf, dtype)
    else:
        hi = np.full((1, 3), np.iinfo(dtype).min, dtype)
        lo = np.full(4, np.iinfo(dtype).max, dtype)
    out = run_both(extremes, [x, hi, lo, n], spec(8))
    assert out[1][0].tolist() == [x[j::3].max() for j in range(3)]
    assert out[2].tolist() == [x[j::4].min() for j in range(4)]


def test_max_and_min_propagate_nan_as_numpy():
    x = np.array([1.0, 2.0, np.nan, 3.0, -1.0, 5.0, 0.5, 4.0] * 4)
    hi, lo = np.full((1, 3), -np.inf), np.full(4, np.inf)
    out = run_both(extremes, [x, hi, lo, len(x)], spec(4))
    # the elements that saw the NaN are NaN, as np.maximum.reduce gives
    assert [np.isnan(v) for v in out[1][0]] == [np.isnan(np.maximum.reduce(x[j::3])) for j in range(3)]
    assert [np.isnan(v) for v in out[2]] == [np.isnan(np.minimum.reduce(x[j::4])) for j in range(4)]


def test_two_dimensional_index():
    n = 3000
    rows = (np.arange(n) % 4).astype(np.int32)
    cols = (np.arange(n) * 7 % 5).astype(np.int32)
    out = run_both(grid_counts, [rows, cols, np.zeros((4, 5), np.int64), n], spec(8))
    expect = np.zeros((4, 5), np.int64)
    np.add.at(expect, (rows, cols), 1)
    assert out[2].tolist() == expect.tolist()


def test_atomic_block_updates_match_python():
    n = 4000
    x = (np.arange(n) * 13 % 9).astype(np.int64)
    w = (np.arange(n) % 3).astype(np.float64)
    out = run_both(block_histogram, [x, w, np.zeros(9), np.zeros((2, 3), np.int32), n], spec(16))
    assert out[2].tolist() == np.bincount(x, weights=w, minlength=9).tolist()
    code = parpy.print_compiled(block_histogram, [x, w, np.zeros(9), np.zeros((2, 3), np.int32), n],
                                spec(16))
    if "#pragma omp" in code:  # (test_cuda_programs runs this on Cuda too)
        assert "__atomic_fetch_add(&grid[" in code and "__atomic_compare_exchange(" in code, code
    else:
        assert "atomicAdd((int *)&grid[" in code and "atomicAdd(&hist[" in code, code


def test_atomic_block_holds_only_updates():
    x = np.zeros(4, np.int64)
    text = errors(block_with_a_store, [x, np.zeros(4, np.int64), 4], spec())
    assert "holds only updates of array elements" in text and "test_atomics.py" in text, text


def test_sequential_use_and_plain_python():
    x = np.array([0, 1, 1, 3], np.int64)
    out = run_both(sequential_add, [x, np.zeros(4, np.int64), 4], cpu_opts())
    assert out[1].tolist() == [2, 4, 0, 2]


def test_atomic_index_is_bounds_checked():
    x = np.array([0, 12, 1], np.int64)
    with pytest.raises(IndexError, match="hist"):
        histogram(x, np.zeros(10, np.int64), 3, opts=spec(2))


def test_the_plain_update_is_still_a_race_and_the_fix_is_named():
    from test_errors import compile_error
    x = np.arange(64, dtype=np.int64) % 7
    text = compile_error("races", "histogram", [x, np.zeros(8, np.int64), 64],
                         cpu_opts({'N': parpy.threads(8)}))
    assert "parpy.atomic.add(hist, index, value)" in text, text


def errors(fn, args, opts):
    with pytest.raises(parpy.CompileError) as e:
        parpy.print_compiled(fn, args, opts)
    return str(e.value)


@parpy.jit
def atomic_as_value(x, h, N):
    parpy.label('i')
    for i in range(N):
        h[0] = parpy.atomic.add(h, x[i], 1)


@parpy.jit
def atomic_two_args(x, h, N):
    parpy.label('i')
    for i in range(N):
        parpy.atomic.add(h, x[i])


@parpy.jit
def atomic_on_a_row(x, h, N):
    parpy.label('i')
    for i in range(N):
        parpy.atomic.add(h, i, 1)


@parpy.jit
def tuple_elsewhere(x, N):
    y = max((1, 2), 3)
    x[0] = y


def test_misuse_is_a_located_error():
    x, h = np.zeros(4, np.int64), np.zeros(4, np.int64)
    text = errors(atomic_as_value, [x, h, 4], spec())
    assert "call it as a statement of its own" in text and "test_atomics.py" in text, text
    text = errors(atomic_two_args, [x, h, 4], spec())
    assert "takes 3 arguments" in text and "parpy.atomic.add(hist, i, 1)" in text, text
    text = errors(atomic_on_a_row, [x, np.zeros((4, 4), np.int64), 4], spec())
    assert "has 2 dimensions but 1 index was given" in text, text
    text = errors(tuple_elsewhere, [np.zeros(2), 2], cpu_opts())
    assert "a tuple can only be" in text, text


@pytest.mark.parametrize("backend,dtype,ok", [
    (parpy.CompileBackend.Cpu, np.bool_, False),
    (parpy.CompileBackend.Cuda, np.int8, False),
    (parpy.CompileBackend.Cuda, np.uint64, True),
    (parpy.CompileBackend.Metal, np.int64, False),
    (parpy.CompileBackend.Metal, np.float32, True),
])
def test_element_types_per_backend(backend, dtype, ok):
    x = np.zeros(4, np.int64)
    h = np.zeros(4, dtype)
    opts = backend_opts(backend, {'i': parpy.threads(4)})
    if ok:
        parpy.print_compiled(weighted, [x, h.copy(), h, 4], opts)
    else:
        text = errors(weighted, [x, h.copy(), h, 4], opts)
        assert "is not supported by the" in text and "atomic" in text, text


ALL_CUDA = [np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64]


@needs_nvrtc
@pytest.mark.parametrize("dtype", ALL_CUDA)
def test_cuda_atomics_compile(dtype):
    opts = backend_opts(parpy.CompileBackend.Cuda, {'i': parpy.threads(256)})
    v = np.zeros(1000, dtype)
    code = parpy.print_compiled(extremes, [v, np.zeros((1, 3), dtype), np.zeros(4, dtype), 1000], opts)
    check_nvrtc(code, "extremes")
    code = parpy.print_compiled(weighted, [np.zeros(10, np.int64), v[:10], v, 10], opts)
    check_nvrtc(code, "weighted")


@needs_clang
@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.float32])
def test_metal_atomics_parse(dtype):
    opts = backend_opts(parpy.CompileBackend.Metal, {'i': parpy.threads(64)})
    v = np.zeros(100, dtype)
    code = parpy.print_compiled(extremes, [v, np.zeros((1, 3), dtype), np.zeros(4, dtype), 100], opts)
    assert_clang_ok(code, "extremes")
    code = parpy.print_compiled(weighted, [np.zeros(10, np.int64), v[:10], v, 10], opts)
    assert_clang_ok(code, "weighted")


@parpy.jit
def atomic_of_a_gathered_value(x, idx, h, N):
    parpy.label('i')
    for i in range(N):
        parpy.atomic.max(h, 0, x[idx[i]])


def test_a_checked_index_inside_the_value():
    # the run-time index check inside the atomic's value writes the bounds
    # record: the kernel's record parameter must not be const (the fuzzer's
    # seed 1376: NVRTC refused the Cuda code)
    x, idx = np.arange(8.0), np.array([3, 7, 1], np.int64)
    out = run_both(atomic_of_a_gathered_value, [x, idx, np.zeros(1), 3], spec(3))
    assert out[2][0] == 7.0
    with pytest.raises(IndexError, match="x"):
        atomic_of_a_gathered_value(x, np.array([3, 9], np.int64), np.zeros(1), 2, opts=spec(2))


@needs_nvrtc
def test_a_checked_index_inside_the_value_compiles_for_cuda():
    opts = backend_opts(parpy.CompileBackend.Cuda, {'i': parpy.threads(64)})
    code = parpy.print_compiled(atomic_of_a_gathered_value,
                                [np.zeros(8), np.zeros(3, np.int64), np.zeros(1), 3], opts)
    check_nvrtc(code, "atomic_of_a_gathered_value")
