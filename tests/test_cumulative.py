"""`np.cumsum` / `np.cumprod` (and the methods) of a 1-D slice, or along an
`axis` of a slice of more dimensions, as the right side of a slice
assignment: one loop in order per scan (a label parallelizes the lines of
an axis scan), in NumPy's
accumulator type (narrow integers and bools in int64, float16 in float16),
so the running results are NumPy's bit for bit on every backend. Each
program runs as plain Python (the reference) and compiled
(conftest.run_both)."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both

N = 4


@parpy.jit
def scans(x, xi, a, b, c, d, N):
    parpy.label('i')
    for i in range(N):
        a[i, :] = np.cumsum(x[i, :])
        b[i, :] = x[i, :].cumprod()
        c[i, :] = np.cumsum(xi[i, :] * 2)
        d[i, 1:] = np.cumsum(x[i, :-1] > 0.0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_running_sums_and_products_are_numpys(dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((N, 50)).astype(dtype)
    x[0, 0] = -0.0
    xi = rng.integers(-100, 100, (N, 50)).astype(np.int32)
    outs = [np.zeros((N, 50), dtype), np.zeros((N, 50), dtype),
            np.zeros((N, 50), np.int64), np.zeros((N, 50), np.int64)]
    got = run_both(scans, [x, xi, *outs, N], cpu_opts({'i': parpy.threads(N)}))
    for g, want in zip(got[2:6], [np.cumsum(x, axis=1), np.cumprod(x, axis=1),
                                  np.cumsum(xi * 2, axis=1)]):
        assert g.tobytes() == want.tobytes()
    assert np.array_equal(got[5][:, 1:], np.cumsum(x[:, :-1] > 0.0, axis=1))


@parpy.jit
def in_place(x, N):
    parpy.label('i')
    for i in range(N):
        x[i, :] = np.cumsum(x[i, :])


def test_a_scan_in_place():
    x = np.random.default_rng(2).random((N, 9))
    got = run_both(in_place, [x, N], cpu_opts({'i': parpy.threads(N)}))
    assert got[0].tobytes() == np.cumsum(x, axis=1).tobytes()


def test_scans_compile_for_cuda_and_metal():
    x = np.zeros((N, 8), np.float32)
    check_gpu_code(scans, lambda b: [x, np.zeros((N, 8), np.int32), x, x,
                                     np.zeros((N, 8), np.int64), np.zeros((N, 8), np.int64), N],
                   {'i': parpy.threads(N)}, "scans")


@parpy.jit
def labelled_scan(x, y, N):
    for i in range(N):
        parpy.label('j')
        y[i, :] = np.cumsum(x[i, :])


@parpy.jit
def scan_of_a_2d_slice(x, y):
    y[:, :] = np.cumsum(x[:, :])


@parpy.jit
def scan_as_a_value(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.cumsum(x[i, :])


@parpy.jit
def shifted_in_place(x, N):
    parpy.label('i')
    for i in range(N):
        x[i, 1:] = np.cumsum(x[i, :-1])


@parpy.jit
def labelled_shifted_in_place(x):
    parpy.label('i')
    x[:, 1:] = np.cumsum(x[:, :-1], axis=1)


@parpy.jit
def scans_over_what_they_read(x, y, z):
    with parpy.gpu:
        y[1:] = np.cumsum(y[:-1])
        y[:] = np.maximum.accumulate(y[::-1])
        z[0, :] = np.cumprod(z[:, 0])


def test_a_scan_that_overwrites_what_it_reads_is_kept_first_as_numpy_does():
    # (it was "`cumsum` into the array it reads, at positions it has
    # written already"; NumPy scans into a new array, then stores it)
    x = np.linspace(0.5, 2.0, N * 5).reshape(N, 5)
    run_both(shifted_in_place, [x, N], cpu_opts({'i': parpy.threads(N)}))
    y = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0])
    run_both(scans_over_what_they_read, [x.copy(), y, np.arange(1.0, 10.0).reshape(3, 3)],
             cpu_opts())


def test_a_scan_kept_first_compiles_for_the_gpus():
    check_gpu_code(shifted_in_place, lambda b: [np.ones((N, 5), np.float32), N],
                   {'i': parpy.threads(N)}, "shifted_in_place")


def test_what_a_scan_cannot_be_is_a_located_error():
    x, y = np.ones((N, 5)), np.zeros((N, 5))
    cases = [
        (labelled_scan, [x, y, N], {'j': parpy.threads(5)},
         "`cumsum` runs in order and takes no label"),
        (scan_of_a_2d_slice, [x, y], {}, "`cumsum` of a 2-dimensional slice is not supported"),
        (scan_as_a_value, [x, np.zeros(N), N], {'i': parpy.threads(N)},
         "`np.cumsum` gives an array"),
        (labelled_shifted_in_place, [x], {'i': parpy.threads(N)},
         "`cumsum` into the array it reads, at positions it has written already"),
    ]
    for fn, args, spec, words in cases:
        with pytest.raises(parpy.CompileError) as e:
            fn(*args, opts=cpu_opts(spec))
        assert words in str(e.value), str(e.value)


@parpy.jit
def axis_scans(x, a, b, c, d):
    parpy.label('j')
    a[:, :] = np.cumsum(x, axis=1)
    parpy.label('j')
    b[:, :] = np.cumsum(x, axis=0)
    parpy.label('j')
    c[:, :] = x.cumsum(axis=-1)
    parpy.label('j')
    d[:, :] = np.cumprod(x[:, ::-1], 0)


@parpy.jit
def labelled_lines(x, y, z):
    parpy.label('j')
    y[:, :] = np.cumsum(x, axis=0)
    parpy.label('j')
    z[:, :, :] = np.cumprod(x[:, :, None] * 0.5 + 1.0, axis=1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32, np.int8, np.uint8],
                         ids=lambda d: np.dtype(d).name)
def test_scans_along_an_axis_are_numpys(dtype):
    # (was "`cumsum` of a 2-dimensional slice is not supported" with axis=)
    x = (np.random.default_rng(5).standard_normal((5, 7)) * 3).astype(dtype)
    rt = [np.cumsum(x, axis=1).dtype] * 3 + [np.cumprod(x, axis=0).dtype]
    with np.errstate(all="ignore"):
        run_both(axis_scans, [x] + [np.zeros((5, 7), t) for t in rt], cpu_opts({'j': parpy.threads(7)}),
                 rtol=0, atol=0)


def test_a_label_parallelizes_the_lines_of_an_axis_scan():
    x = np.random.default_rng(6).standard_normal((5, 7))
    run_both(labelled_lines, [x, np.zeros((5, 7)), np.zeros((5, 7, 1))], cpu_opts({'j': parpy.threads(7)}),
             rtol=0, atol=0)
    opts = parpy.par({'j': parpy.threads(7)})
    opts.backend = parpy.CompileBackend.Cpu
    code = parpy.print_compiled(labelled_lines, [x, np.zeros((5, 7)), np.zeros((5, 7, 1))], opts)
    assert code.count("#pragma omp parallel for") == 2
