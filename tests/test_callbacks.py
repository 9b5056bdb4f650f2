"""`parpy.callback` (issue 12, item 8): Python functions called from the
host code of a jit function, between kernels.

Each program runs compiled on the Cpu backend against its plain-Python run
(`run_both`: the callback gets buffers over the same data either way);
the Cuda side is checked here by a dry run (NVRTC cubin and launch plan)
and NVRTC compilation, and run on a GPU where one is present (marked cuda);
Metal output is syntax-checked with clang.
"""

import numpy as np
import pytest

import parpy
from conftest import backend_opts, cpu_opts, run_both
from test_cuda_codegen import check_nvcc, check_nvrtc, needs_nvcc, needs_nvrtc
from test_cuda_programs import HAS_GPU, cuda_opts, dry_run
from test_metal_codegen import assert_clang_ok, needs_clang

T = parpy.threads
rng = np.random.default_rng(8)


def rand(*shape):
    return rng.random(shape).astype(np.float32)


calls = []


@parpy.callback
def scale_rows(a, s, row):
    # a: the whole array; row: a view of one row of another array
    calls.append((a.shape, type(s).__name__, row.shape))
    a.numpy()[:] *= s
    row.numpy()[0] = row.numpy()[-1] + 10.0


@parpy.jit
def between_kernels(x, y, N):
    parpy.label('N')
    for i in range(N):
        x[i, 0] = x[i, 0] + 1.0
    for k in range(2):
        scale_rows(y, 2.0, x[k])
    scale_rows(y, 0.5, x[-1, :])
    parpy.label('N')
    for i in range(N):
        x[i, 1] = x[i, 0] + y[i]


@parpy.callback
def record_scalars(i, f, b, u):
    calls.append((type(i).__name__, i, type(f).__name__, f, type(b).__name__, b, u))


@parpy.jit
def scalars(x, n):
    record_scalars(n - 1, x[0] * 2.0, n > 2, np.uint8(n))


@parpy.callback
def gemm(alpha, beta, A, B, C):
    C.copy_from(alpha * A.numpy() @ B.numpy() + beta * C.numpy())


@parpy.jit
def ones_init(C, M, N):
    parpy.label('M')
    for i in range(M):
        parpy.label('N')
        for j in range(N):
            C[i, j] = 1.0


@parpy.jit
def batched_gemm(alpha, beta, A, B, C, R):
    # ParPy's test: a helper fills C[i], the callback multiplies
    for i in range(R):
        parpy.builtin.inline(ones_init(C[i], C.shape[1], C.shape[2]))
        gemm(alpha, beta, A[i], B[i], C[i])


@parpy.jit
def labelled_gemm(alpha, beta, A, B, C, R):
    # as ParPy writes it: the loop around the callback is labelled too; it
    # runs in order in host code, the helper's loops stay parallel
    parpy.label('R')
    for i in range(R):
        parpy.builtin.inline(ones_init(C[i], C.shape[1], C.shape[2]))
        gemm(alpha, beta, A[i], B[i], C[i])


@parpy.jit
def add_one(a, N):
    parpy.label('N')
    for i in range(N):
        a[i] += 1.0


@parpy.callback
def call_jit(row):
    add_one(row, row.shape[0], opts=cpu_opts({'N': T(32)}))


@parpy.jit
def jit_in_callback(a, M):
    for i in range(M):
        call_jit(a[i])


PROGRAMS = {
    "between_kernels": (between_kernels, lambda: [rand(4, 3), rand(4), 4], {'N': T(4)}),
    "batched_gemm": (batched_gemm, lambda: [1.5, 2.5, rand(3, 8, 16), rand(3, 16, 4),
                                            rand(3, 8, 4), 3], {'M': T(8), 'N': T(4)}),
    "labelled_gemm": (labelled_gemm, lambda: [1.5, 2.5, rand(3, 8, 16), rand(3, 16, 4),
                                              rand(3, 8, 4), 3],
                      {'R': T(3), 'M': T(8), 'N': T(4)}),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_runs_on_cpu(name):
    fn, args, spec = PROGRAMS[name]
    calls.clear()
    run_both(fn, args(), cpu_opts(spec))


def test_callback_sees_the_arguments_and_its_writes_are_seen():
    calls.clear()
    x, y = rand(4, 3), rand(4)
    want_x, want_y = x.copy(), y.copy()
    between_kernels(x, y, 4, opts=cpu_opts({'N': T(4)}))
    assert calls == [((4,), 'float', (3,))] * 3
    want_x[:, 0] += 1.0
    for k, s in [(0, 2.0), (1, 2.0), (3, 0.5)]:
        want_y *= s
        want_x[k, 0] = want_x[k, -1] + 10.0
    want_x[:, 1] = want_x[:, 0] + want_y
    np.testing.assert_allclose(y, want_y, rtol=1e-6)
    np.testing.assert_allclose(x, want_x, rtol=1e-6)


def test_gemm_callback_matches_numpy():
    A, B, C = rand(3, 8, 16), rand(3, 16, 4), rand(3, 8, 4)
    batched_gemm(1.5, 2.5, A, B, C, 3, opts=cpu_opts({'M': T(8), 'N': T(4)}))
    np.testing.assert_allclose(C, 1.5 * A @ B + 2.5, rtol=1e-5)


@parpy.callback
def record_row(i, row):
    calls.append((i, float(row.numpy()[0])))


@parpy.jit
def callback_per_row(x, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        for j in range(x.shape[1]):
            x[i, j] = x[i, j] * 2.0
        record_row(i, x[i])


@pytest.mark.parametrize("spec", [{'N': T(4)}, {'N': T(4), 'M': T(3)}])
def test_a_parallel_loop_around_a_callback_runs_in_order_in_host_code(spec):
    # ParPy's rule: the loop calls the callback once per iteration, in order,
    # after the work of that iteration (the inner loop keeps its parallelism)
    x = rand(4, 3)
    want = x * 2.0
    calls.clear()
    callback_per_row(x, 4, opts=cpu_opts(spec))
    np.testing.assert_allclose(x, want)
    assert calls == [(i, pytest.approx(float(want[i, 0]))) for i in range(4)]
    code = parpy.print_compiled(callback_per_row, [rand(4, 3), 4], cpu_opts(spec))
    assert ("#pragma omp parallel" in code) == ('M' in spec)


def test_labelled_gemm_callback_matches_numpy():
    A, B, C = rand(3, 8, 16), rand(3, 16, 4), rand(3, 8, 4)
    labelled_gemm(1.5, 2.5, A, B, C, 3, opts=cpu_opts({'R': T(3), 'M': T(8), 'N': T(4)}))
    np.testing.assert_allclose(C, 1.5 * A @ B + 2.5, rtol=1e-5)


def test_scalars_arrive_as_python_numbers():
    calls.clear()
    scalars(np.array([0.25], np.float32), 3, opts=cpu_opts({}))
    assert calls == [('int', 2, 'float', 0.5, 'bool', True, 3)]


def test_a_callback_may_call_jit_code():
    a = rand(5, 40)
    want = a + 1.0
    jit_in_callback(a, 5, opts=cpu_opts({}))
    np.testing.assert_allclose(a, want)


@parpy.callback
def write_both(whole, row):
    whole.numpy()[1, :] = 7.0                 # through `whole`
    row.copy_from(row.numpy() + 1.0)          # `row` is whole[1]: 7 + 1


@parpy.callback
def add_both(a, b):
    a.numpy()[:] += 1.0
    b.numpy()[:] += 1.0                       # the same array: + 2


def overlapping_programs():
    # (new functions per call: the emulator's specializations stay there)
    def whole_and_row(x):
        write_both(x, x[1])

    def twice(x):
        add_both(x, x)

    def row_and_whole(x):
        add_both(x[1], x)

    want = np.zeros((3, 4), np.float32)
    want[1] = 8.0
    return [(parpy.jit(whole_and_row), want), (parpy.jit(twice), np.full((3, 4), 2.0)),
            (parpy.jit(row_and_whole), np.array([1.0, 2.0, 1.0])[:, None] + np.zeros(4))]


@pytest.mark.parametrize("emulated", [False, True], ids=["cpu", "cuda-emulator"])
def test_arguments_that_share_memory_see_each_others_writes(emulated):
    # one memory, as Python sees it: the callback gets views of one copy
    # (each argument its own copy lost the writes through the other)
    for fn, want in overlapping_programs():
        x = np.zeros((3, 4), np.float32)
        if emulated:
            from parpy import _cuda_emu
            with _cuda_emu.installed(0):
                fn(x, opts=cuda_opts({}))
        else:
            run_both(fn, [x.copy()], cpu_opts({}))
            fn(x, opts=cpu_opts({}))
        np.testing.assert_array_equal(x, want, err_msg=fn.__name__)


class Boom(Exception):
    pass


@parpy.callback
def fails(a):
    raise Boom(f"no ({a.shape})")


@parpy.jit
def stops_at_the_failure(x, N):
    parpy.label('N')
    for i in range(N):
        x[i] = 1.0
    fails(x)
    parpy.label('N')
    for i in range(N):
        x[i] = 2.0


def test_an_exception_in_the_callback_propagates_and_stops_the_call():
    x = np.zeros(8, np.float32)
    with pytest.raises(Boom, match=r"no \(\(8,\)\)"):
        stops_at_the_failure(x, 8, opts=cpu_opts({'N': T(8)}))
    assert (x == 1.0).all()
    # the next call works
    with pytest.raises(Boom):
        stops_at_the_failure(x, 8, opts=cpu_opts({'N': T(8)}))


KEPT = []


@parpy.callback
def keeps_its_buffer(a):
    KEPT.append(a)
    a.numpy()[0] += 1.0


@parpy.jit
def passes_a_local_array(x, N):
    t = np.zeros(4)
    for i in range(4):
        t[i] = x[i] + 1.0
    keeps_its_buffer(t)
    keeps_its_buffer(x)


def test_a_buffer_the_callback_keeps_outlives_the_call():
    # (the buffer pointed at the compiled code's memory: a kept one read
    # the stack of a later call, or wrote into an array that reused the
    # freed memory of the argument)
    KEPT.clear()
    x = np.arange(4.0)
    passes_a_local_array(x, 4, opts=cpu_opts())
    assert x.tolist() == [1.0, 1.0, 2.0, 3.0]   # the write is seen
    passes_a_local_array(np.full(4, 10.0), 4, opts=cpu_opts())
    assert KEPT[0].numpy().tolist() == [2.0, 2.0, 3.0, 4.0]
    assert KEPT[1].numpy().tolist() == [1.0, 1.0, 2.0, 3.0]
    del x
    KEPT[1].numpy()[:] = -1.0   # its own memory: nothing else changes


def test_a_callback_called_from_plain_python_gets_buffers():
    got = []

    @parpy.callback
    def cb(a, s):
        got.append((type(a).__name__, a.shape, s))

    cb(np.zeros((2, 3)), 4)
    assert got == [('Buffer', (2, 3), 4)]


@pytest.mark.parametrize("body,match", [
    ("with parpy.gpu:\n        fails(x)", "inside a `with parpy.gpu:` block"),
    ("y = fails(x)", "returns nothing"),
    ("fails(x[1:3])", "takes whole arrays, rows"),
    ("call_fails(x)", "only be called from the host code of the function called from Python"),
])
def test_misplaced_callbacks_are_compile_errors(body, match, tmp_path):
    src = f"def bad(x, N):\n    {body}\n"
    ns = {"parpy": parpy, "fails": fails, "call_fails": call_fails}
    exec(compile(src, str(tmp_path / "bad.py"), "exec"), ns)
    (tmp_path / "bad.py").write_text(src)
    fn = parpy.jit(ns["bad"])
    with pytest.raises(parpy.CompileError, match=match):
        fn(np.zeros(8, np.float32), 8, opts=cpu_opts({'N': T(8)}))


@parpy.jit
def call_fails(x):
    fails(x)


@needs_nvrtc
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_cuda_dry_run(name):
    fn, args, spec = PROGRAMS[name]
    dry_run(fn, args(), cuda_opts(spec))


@needs_nvrtc
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_cuda_compiles(name):
    fn, args, spec = PROGRAMS[name]
    code = parpy.print_compiled(fn, args(), cuda_opts(spec))
    assert "cudaDeviceSynchronize()" in code and "parpy_callback(0, " in code
    check_nvrtc(code, name)


@needs_nvcc
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_cuda_host_code_compiles(name):
    # the host side (callback pointer, synchronization) as compile_string builds it
    fn, args, spec = PROGRAMS[name]
    check_nvcc(parpy.print_compiled(fn, args(), cuda_opts(spec)), name)


@needs_clang
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_metal_parses(name):
    fn, args, spec = PROGRAMS[name]
    code = parpy.print_compiled(fn, args(), backend_opts(parpy.CompileBackend.Metal, spec))
    assert_clang_ok(code, name)


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU (scripts/gpu-check.sh)")
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_runs_on_cuda(name):
    fn, args, spec = PROGRAMS[name]
    run_both(fn, args(), cuda_opts(spec))


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU (scripts/gpu-check.sh)")
def test_an_exception_propagates_on_cuda():
    x = np.zeros(8, np.float32)
    with pytest.raises(Boom):
        stops_at_the_failure(x, 8, opts=cuda_opts({'N': T(8)}))
