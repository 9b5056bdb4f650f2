"""The CUDA emulator (`parpy._cuda_emu`): the Cuda backend's kernels run on
the CPU, one fiber per GPU thread, in a random order between barriers,
both as `print_compiled` prints the program (`run`, `run_source`) and
through the Cuda backend's own call path (`install`: staging, the launch
plan, temporaries, the bounds record, CUDA graphs). First that it catches
what it is for (a barrier taken out of a tree reduction, a kernel that
reads what another block writes), then GPU programs of the kinds the
gpu-mismatch reports combine, which must agree with plain Python under
several schedules, both ways."""

import re
import shutil

import numpy as np
import pytest

import parpy
from parpy import _cuda_emu
from conftest import cpu_opts, python_opts

pytestmark = pytest.mark.skipif(shutil.which("c++") is None, reason="needs a C++ compiler")

SEEDS = range(4)


def cuda_opts(spec, **fields):
    opts = cpu_opts(spec, **fields)
    opts.backend = parpy.CompileBackend.Cuda
    return opts


def reference(fn, args, spec):
    ref = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    fn(*ref, opts=python_opts(cpu_opts(spec)))
    return ref


def emulated(fn, args, spec, seed, plan=False, **fields):
    """`fn` on copies of `args` as the printed program (`plan=False`) or
    through the Cuda backend's call path (`plan=True`)."""
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    if plan:
        with _cuda_emu.installed(seed):
            fn(*got, opts=cuda_opts(spec, **fields))
    else:
        with np.errstate(all="ignore"):
            _cuda_emu.run(fn, got, cuda_opts(spec, **fields), seed=seed)
    return got


def agree(fn, args, spec, seeds=SEEDS, **fields):
    ref = reference(fn, args, spec)
    for plan in (False, True):
        for seed in seeds:
            got = emulated(fn, args, spec, seed, plan, **fields)
            for k, (r, g) in enumerate(zip(ref, got)):
                if isinstance(r, np.ndarray):
                    np.testing.assert_allclose(
                        g, r, rtol=1e-5, atol=1e-6,
                        err_msg=f"argument {k}, schedule {seed}, launch plan {plan}")


@parpy.jit
def row_sums(x, y, N):
    parpy.label('i')
    for i in range(N):
        parpy.label('j')
        y[i] = parpy.operators.sum(x[i, :])


ROW_SPEC = {'i': parpy.threads(4), 'j': parpy.threads(256)}


def test_row_sums_agree():
    x = np.random.default_rng(1).random((4, 1000)).astype(np.float32)
    agree(row_sums, [x, np.zeros(4, np.float32), 4], ROW_SPEC)


def test_a_missing_barrier_is_caught():
    x = np.random.default_rng(2).random((4, 1000)).astype(np.float32)
    args = [x, np.zeros(4, np.float32), 4]
    code = parpy.print_compiled(row_sums, args, cuda_opts(ROW_SPEC))
    assert "__syncthreads();" in code
    broken = code.replace("__syncthreads();", "")
    ref = reference(row_sums, args, ROW_SPEC)[1]
    wrong = 0
    for seed in SEEDS:
        got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        _cuda_emu.run_source(broken, got, seed=seed)
        wrong += not np.allclose(got[1], ref, rtol=1e-5)
    assert wrong > 0
    # and with the barriers, every schedule agrees
    for seed in SEEDS:
        got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        _cuda_emu.run_source(code, got, seed=seed)
        np.testing.assert_allclose(got[1], ref, rtol=1e-5)


def test_a_read_of_another_blocks_write_is_caught():
    # one block per `i` writes row i of y, then reads row i - 1, which
    # another block writes: a race on a GPU, which the random block order
    # shows
    code = cross_block_program()
    outcomes = set()
    for seed in range(8):
        y = np.zeros((8, 32), np.float32)
        z = np.zeros(8, np.float32)
        _cuda_emu.run_source(code, [np.ones(8, np.float32), y, z], seed=seed)
        outcomes.add(tuple(z.tolist()))
    assert len(outcomes) > 1


def cross_block_program():
    """A hand-written CUDA program in the printed form: block i writes
    y[i, :] and then reads y[i - 1, 0] (without any grid-wide barrier)."""
    return """// parpy-entry: parpy_entry_k
// parpy-param: x f32[8]
// parpy-param: y f32[8,32] written
// parpy-param: z f32[8] written
#include <stdint.h>
#include <math.h>
#include <cuda_runtime.h>
extern "C" __global__ void __launch_bounds__(32) k_i(const float *x, float *y, float *z) {
  int64_t i = (int64_t)blockIdx.x;
  y[i * 32 + (int64_t)threadIdx.x] = x[i] + 1.0f;
  __syncthreads();
  if (threadIdx.x == 0) {
    z[i] = i > 0 ? y[(i - 1) * 32] : 0.0f;
  }
}
static int32_t k(float *x, float *y, float *z) {
  k_i<<<dim3(8, 1, 1), dim3(32, 1, 1)>>>(x, y, z);
  if (cudaGetLastError() != cudaSuccess) {
    return 1;
  }
  return 0;
}
extern "C" int32_t parpy_entry_k(void **args) {
  return k((float *)args[0], (float *)args[1], (float *)args[2]);
}
"""


@parpy.jit
def read_after_inner_loop(x, o1, o2):
    # seed 349 of the gpu-mismatch reports, reduced: each `i` fills a row
    # of o2 in a parallel loop around a parallel reduction, then reads two
    # elements of that row. The middle level was spread over blocks (grid
    # y), so the reads raced with other blocks' writes; it runs inside one
    # block now (gpu_block_levels). Wrong under every schedule before.
    parpy.label('i')
    for i in range(8):
        parpy.label('j')
        for j in range(8):
            parpy.label('k')
            for k in range(8):
                o2[i, j] += x[i, k] * j
        o1[i] = o2[i, (i + 3) % 8] - o2[i, i]


def test_reads_after_an_inner_parallel_loop_agree():
    x = np.random.default_rng(4).integers(-50, 50, (8, 8)).astype(np.int64)
    args = [x, np.zeros(8, np.int64), np.zeros((8, 8), np.int64)]
    agree(read_after_inner_loop, args, {'i': parpy.threads(2), 'j': parpy.threads(512).tpb(1024),
                                        'k': parpy.threads(31).par_reduction()})


@parpy.jit
def softmax(x, y, N, M):
    parpy.label('i')
    for i in range(N):
        parpy.label('j')
        m = parpy.operators.max(x[i, :])
        parpy.label('j')
        for j in range(M):
            y[i, j] = parpy.math.exp(x[i, j] - m)
        parpy.label('j')
        s = parpy.operators.sum(y[i, :])
        parpy.label('j')
        for j in range(M):
            y[i, j] = y[i, j] / s


def test_softmax_agrees():
    x = np.random.default_rng(5).standard_normal((6, 300)).astype(np.float32)
    agree(softmax, [x, np.zeros_like(x), 6, 300], {'i': parpy.threads(6), 'j': parpy.threads(128)})


@parpy.jit
def nested_reduction(x, out, N):
    parpy.label('r')
    for i in range(N):
        parpy.label('k')
        out[0] += parpy.operators.sum(x[i, :])


def test_a_parallel_reduction_around_a_reduction_agrees():
    x = np.random.default_rng(6).integers(-9, 9, (40, 70)).astype(np.int64)
    agree(nested_reduction, [x, np.zeros(1, np.int64), 40],
          {'r': parpy.threads(64).par_reduction(), 'k': parpy.threads(32)})


@parpy.jit
def histogram(x, h, N):
    parpy.label('i')
    for i in range(N):
        parpy.atomic.add(h, x[i] % 8, 1)


def test_atomic_updates_agree():
    x = np.random.default_rng(7).integers(0, 100, 500).astype(np.int64)
    agree(histogram, [x, np.zeros(8, np.int64), 500], {'i': parpy.threads(500)})


@parpy.jit
def time_steps(a, b, T, N):
    for t in range(T):
        parpy.label('i')
        for i in range(1, N - 1):
            b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0
        parpy.label('i')
        for i in range(1, N - 1):
            a[i] = b[i]


def test_a_host_loop_of_launches_agrees():
    a = np.random.default_rng(8).random(100)
    agree(time_steps, [a, np.zeros(100), 5, 100], {'i': parpy.threads(98)})


def test_printed_launches_become_calls():
    src = _cuda_emu.emulated_source("k<<<dim3(2, 1, 1), dim3(64, 1, 1), 128>>>(x, f(a, b));")
    assert src == "parpy_emu::launch(k, dim3(2, 1, 1), dim3(64, 1, 1), x, f(a, b));"
    assert re.search(r"<<<", src) is None


@parpy.jit
def store_after_a_shared_read(x, o, p, N):
    # fuzz seed 6915 (emulated Cuda), reduced: every thread of the block
    # reads o[i] for the `continue`, then thread 0 stores into o[i]. Without
    # a barrier between them, a thread that reads late sees the new value
    # and leaves the iteration while the others go on
    parpy.label('i')
    for i in range(N):
        o[i] = x[i]
        if o[i] > 0:
            continue
        o[i] = 7
        parpy.label('j')
        for j in range(40):
            p[i, j] = o[i] * j


WAR_SPEC = {'i': parpy.threads(8), 'j': parpy.threads(64)}


def test_a_store_waits_for_the_reads_before_it():
    x = np.arange(-4, 4).astype(np.int64)
    args = [x, np.zeros(8, np.int64), np.zeros((8, 40), np.int64), 8]
    agree(store_after_a_shared_read, args, WAR_SPEC)
    code = parpy.print_compiled(store_after_a_shared_read, args, cuda_opts(WAR_SPEC))
    assert re.search(r"continue;\n    }\n    __syncthreads\(\);\n    if \(\(int64_t\)threadIdx.x == 0\)",
                     code), code


@parpy.jit
def scale_f32(x, y, s, N):
    parpy.label('i')
    for i in range(N):
        y[i] = x[i] * s


def test_a_float_scalar_reaches_the_program_as_its_entry_reads_it():
    # a float32 parameter (np.float32 argument) comes in a double slot that
    # the entry converts; the emulator packed float32 bits and read 0.0
    # (fuzz seed 6012)
    x = np.arange(10, dtype=np.float32)
    args = [x, np.zeros(10, np.float32), np.float32(1.5), 10]
    spec = {'i': parpy.threads(10)}
    code = parpy.print_compiled(scale_f32, args, cuda_opts(spec, specialize_scalars=False))
    assert "(float)*(double *)args[2]" in code
    agree(scale_f32, args, spec, seeds=[0], specialize_scalars=False)


# ---------------------------------------------------------------------------
# the Cuda backend's call path on the emulator (`install`)


@parpy.jit
def total(x, out, N):
    parpy.label('r')
    out[0] = parpy.operators.sum(x[:])


def test_the_call_path_runs_a_reduction_over_several_blocks():
    # two kernels (partial sums per block, then the final one) and the
    # device temporary between them, which the launch plan allocates
    x = np.random.default_rng(11).random(100_000)
    spec = {'r': parpy.threads(4096)}
    code = parpy.print_compiled(total, [x, np.zeros(1), 100_000], cuda_opts(spec))
    assert code.count("__global__") >= 2
    agree(total, [x, np.zeros(1), 100_000], spec, seeds=[0, 1])


@parpy.jit
def gather(x, idx, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = x[idx[i]]


def test_the_call_path_raises_index_error_from_the_bounds_record():
    x = np.arange(10, dtype=np.float64)
    idx = np.array([1, 2, 30, 4], np.int64)
    with _cuda_emu.installed(0):
        with pytest.raises(IndexError, match=r"x.*30|30.*x"):
            gather(x, idx, np.zeros(4), 4, opts=cuda_opts({'i': parpy.threads(4)}))
        y = np.zeros(4)
        idx[2] = 3
        gather(x, idx, y, 4, opts=cuda_opts({'i': parpy.threads(4)}))
    np.testing.assert_array_equal(y, [1, 2, 3, 4])


def test_the_call_path_replays_cuda_graphs():
    # the first call records and builds the graph, the second replays it
    # with new pointers and a new step count (updated kernel nodes)
    spec = {'i': parpy.threads(98)}
    rng = np.random.default_rng(12)
    for T in (3, 5):
        a = rng.random(100)
        ref = reference(time_steps, [a, np.zeros(100), T, 100], spec)
        got = emulated(time_steps, [a, np.zeros(100), T, 100], spec, 0, plan=True,
                       use_cuda_graphs=True, specialize_scalars=False)
        np.testing.assert_allclose(got[0], ref[0], rtol=1e-12)


@parpy.jit
def scale_rows_f16(x, y, m, N):
    parpy.label('i')
    for i in range(N):
        s = parpy.operators.sum(x[i, :])
        parpy.label('j')
        for j in range(64):
            y[i, j] = x[i, j] * 0.3 + s / 7.0
        m[i] = parpy.operators.max(x[i, :]) > 1.5


def test_float16_agrees():
    # GCC's _Float16 stands in for __half; every float16 operation of the
    # generated code is rounded by a cast, so results are NumPy's (the
    # emulator refused float16 before)
    x = (np.random.default_rng(14).random((4, 64)) * 2).astype(np.float16)
    args = [x, np.zeros((4, 64), np.float16), np.zeros(4, np.bool_), 4]
    spec = {'i': parpy.threads(4), 'j': parpy.threads(64)}
    ref = reference(scale_rows_f16, args, spec)
    for plan in (False, True):
        got = emulated(scale_rows_f16, args, spec, 0, plan)
        np.testing.assert_array_equal(got[1], ref[1])
        np.testing.assert_array_equal(got[2], ref[2])


def test_a_failing_launch_is_an_error_not_an_abort():
    # a warp of 24 threads shuffling with the full mask is undefined on a
    # GPU; the emulator stops the launch and says why (it used to abort
    # the process)
    x = np.random.default_rng(13).random((4, 1000)).astype(np.float32)
    args = [x, np.zeros(4, np.float32), 4]
    code = parpy.print_compiled(row_sums, args, cuda_opts(ROW_SPEC))
    assert "__shfl_xor_sync" in code and "dim3(256, 1, 1)" in code
    broken = code.replace("dim3(256, 1, 1)", "dim3(248, 1, 1)")
    with pytest.raises(RuntimeError, match="fewer than 32 live threads"):
        _cuda_emu.run_source(broken, args, seed=0)


@parpy.jit
def row_sum_and_max(x, y, m, N):
    parpy.label('i')
    for i in range(N):
        parpy.label('j')
        y[i] = parpy.operators.sum(x[i, :])
        parpy.label('j')
        m[i] = parpy.operators.max(x[i, :])


@pytest.mark.filterwarnings("ignore::parpy.ParpyWarning")
def test_thread_block_clusters_agree():
    # use_cuda_thread_block_clusters: the blocks of a cluster combine their
    # partial sums through each other's shared memory (cluster.sync,
    # map_shared_rank); the emulator runs a cluster's blocks at once, one OS
    # thread each (it refused clusters before)
    x = np.random.default_rng(15).random(100_000)
    code = parpy.print_compiled(total, [x, np.zeros(1), 100_000],
                                cuda_opts({'r': parpy.threads(8192)},
                                          use_cuda_thread_block_clusters=True))
    assert "__cluster_dims__(8, 1, 1)" in code and "map_shared_rank" in code
    agree(total, [x, np.zeros(1), 100_000], {'r': parpy.threads(8192)}, seeds=[0, 1],
          use_cuda_thread_block_clusters=True)
    # clusters along y, one per row, and a second reduction in the
    # cluster's first block
    x = np.random.default_rng(16).random((3, 50_000)).astype(np.float32)
    agree(row_sum_and_max, [x, np.zeros(3, np.float32), np.zeros(3, np.float32), 3],
          {'i': parpy.threads(3), 'j': parpy.threads(4096)}, seeds=[0, 1],
          use_cuda_thread_block_clusters=True)


def test_cluster_launches_are_found_in_the_printed_program():
    code = ('extern "C" __global__ void __cluster_dims__(4, 1, 1) __launch_bounds__(64) k_r('
            'double *a) {}\nk_r<<<dim3(4, 2, 1), dim3(64, 1, 1)>>>(a);\n'
            'g<<<dim3(1, 1, 1), dim3(1, 1, 1)>>>(a);')
    src = _cuda_emu.emulated_source(code)
    assert "parpy_emu::launch_cluster(dim3(4, 1, 1), k_r, dim3(4, 2, 1), dim3(64, 1, 1), a);" in src
    assert "parpy_emu::launch(g, dim3(1, 1, 1), dim3(1, 1, 1), a);" in src


class HostCai:
    """A NumPy array posing as a CUDA array (`__cuda_array_interface__`)."""

    def __init__(self, a):
        self.a = a
        self.__cuda_array_interface__ = {
            "shape": a.shape, "typestr": a.dtype.str, "data": (a.ctypes.data, False),
            "version": 3, "strides": None}


def test_device_arrays_go_in_place_and_host_pointers_are_refused():
    # parpy.buffer memory of the emulated device passes in place (the
    # placement asks the emulated device about its pointers); a host
    # pointer behind __cuda_array_interface__ is not device memory, as on
    # a GPU
    # (a miss: a cached call does not ask about its pointers again, on a
    # GPU either)
    spec = {'i': parpy.threads(10)}
    with _cuda_emu.installed(0):
        x = parpy.buffer.from_array(np.arange(10, dtype=np.float32), parpy.CompileBackend.Cuda)
        y = parpy.buffer.zeros((10,), parpy.types.F32, parpy.CompileBackend.Cuda)
        with pytest.raises(ValueError, match="device memory"):
            scale_f32(HostCai(np.ones(10, np.float32)), y, np.float32(2.0), 10,
                      opts=cuda_opts(spec))
        scale_f32(x, y, np.float32(2.0), 10, opts=cuda_opts(spec))
        np.testing.assert_array_equal(y.numpy(), np.arange(10) * 2.0)


ROWS = parpy.types.symbol()


@parpy.jit
def add_one_annotated(x: parpy.types.buffer(parpy.types.F32, [ROWS])):
    parpy.label('i')
    for i in range(ROWS):
        x[i] += 1.0


def test_an_annotated_parameter_takes_a_cuda_buffer_view():
    # the annotation check read a Cuda buffer's dtype (a parpy DataType) as
    # its element type and refused the row of a buffer
    with _cuda_emu.installed(0):
        a = np.arange(64, dtype=np.float32).reshape(2, 32)
        b = parpy.buffer.from_array(a, parpy.CompileBackend.Cuda)
        add_one_annotated(b[1], opts=cuda_opts({'i': parpy.threads(32)}))
        np.testing.assert_array_equal(b.numpy(), a + np.array([[0.0], [1.0]], np.float32))
        with pytest.raises(parpy.CompileTypeError, match="its elements are int32, not float32"):
            add_one_annotated(parpy.buffer.from_array(np.zeros(4, np.int32),
                                                      parpy.CompileBackend.Cuda),
                              opts=cuda_opts({'i': parpy.threads(32)}))


@parpy.jit
def square_of(a):
    return a * a


@parpy.jit
def clamp_to(v, lo, hi):
    return min(max(v, lo), hi)


@parpy.jit
def host_calls_helpers(x, y, T, N):
    c = square_of(3.0)
    for t in range(T):
        s = clamp_to(t * 0.5, 0.0, 1.0)
        parpy.label('i')
        for i in range(N):
            y[i] = y[i] * s + x[i] + c


def test_helpers_called_from_host_code_run_on_the_cuda_launch_plan():
    # (the launch plan refused a call: "InternalError ... the host code
    # calls a helper function"); host calls are inlined on GPU backends
    agree(host_calls_helpers, [np.arange(6.0), np.ones(6), 4, 6], {'i': parpy.threads(6)},
          seeds=range(2))


def test_python_max_of_rows_folds_as_python_does_on_the_gpu():
    # Python's `max` of a row with NaN (the first kept if NaN, later NaN
    # skipped), in a labelled reduction across GPU threads, bit for bit
    from test_natural import python_max_min_of_rows, rows_of_edge_values
    x = rows_of_edge_values(np.float64)
    spec = {'i': parpy.threads(len(x)), 'r': parpy.threads(32)}
    want = np.zeros((len(x), 4))
    python_max_min_of_rows.py_func(x, want, len(x))
    for seed in (0, 1):
        got = emulated(python_max_min_of_rows, [x, np.zeros((len(x), 4)), len(x)], spec, seed, plan=True)
        assert got[1].tobytes() == want.tobytes()


@parpy.jit
def reversed_rows_via_local(x, y, N, M):
    parpy.label('i')
    for i in range(N):
        t = np.zeros(64)
        parpy.label('j')
        for j in range(M):
            t[j] = x[i, j]
        parpy.label('j')
        for j in range(M):
            y[i, j] = t[M - 1 - j]


@pytest.mark.parametrize("blocks", [1, 3])
def test_a_block_running_several_outer_iterations_refills_its_local_array_after_a_barrier(blocks):
    # (a block running iterations i and i + blocks of `i` zero-filled the
    # shared `t` of the next one while its threads still read this one's:
    # no barrier at the end of the body; 1-2 wrong elements per schedule)
    x = np.arange(4 * 64, dtype=np.float64).reshape(4, 64)
    spec = {'i': parpy.threads(blocks), 'j': parpy.threads(64)}
    want = x[:, ::-1].copy()
    for seed in range(3):
        got = emulated(reversed_rows_via_local, [x, np.zeros((4, 64)), 4, 64], spec, seed, plan=True)
        np.testing.assert_array_equal(got[1], want, err_msg=f"schedule {seed}")


@parpy.jit
def minus_the_sum(x, z):
    parpy.label('j')
    z[:] = x - x.sum()


@parpy.jit
def scaled_in_place(y, N):
    for t in range(N):
        parpy.label('j')
        y[:] = y / y.max() - y.mean()


@parpy.jit
def minus_the_matrix_sum(x, z):
    parpy.label('j')
    z[:, :] = x - x.sum() + x[0, x[:, 0].argmax()]


def test_a_reduction_inside_a_labelled_slice_statement_runs_on_the_device():
    # (it ran in host code: "does not contain any parallelism"; now it is
    # computed once, before the statement, by a parallel reduction where
    # it is one loop, else by one device thread)
    rng = np.random.default_rng(4)
    spec = {'j': parpy.threads(64)}
    agree(minus_the_sum, [rng.random(100), np.zeros(100)], spec, seeds=range(2))
    agree(scaled_in_place, [rng.random(50) + 1.0, 3], spec, seeds=range(2))
    agree(minus_the_matrix_sum, [rng.random((3, 40)), np.zeros((3, 40))], spec, seeds=range(2))
    code = parpy.print_compiled(minus_the_sum, [np.zeros(100), np.zeros(100)], cuda_opts(spec))
    assert "parpy_warp_sum_f64" in code, code


@parpy.jit
def f16_to_ints(x, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i] = int(x[i])
        z[i] = round(x[i])


def test_float16_to_int_runs_and_raises_as_python():
    # the NaN and infinity checks before `int()` / `round()` of a float16
    # were `isnan(__half)`, which the compiler calls ambiguous: the program
    # did not compile
    spec = {'i': parpy.threads(32)}
    x = (np.arange(10) * 1.5 - 4).astype(np.float16)
    args = [x, np.zeros(10, np.int64), np.zeros(10, np.int64), 10]
    ref = reference(f16_to_ints, args, spec)
    for plan in (False, True):
        got = emulated(f16_to_ints, args, spec, 0, plan)
        np.testing.assert_array_equal(got[1], ref[1])
        np.testing.assert_array_equal(got[2], ref[2])
    for bad, exc in ((np.nan, ValueError), (np.inf, OverflowError)):
        x[3] = bad
        with pytest.raises(exc):
            emulated(f16_to_ints, args, spec, 0, plan=True)
