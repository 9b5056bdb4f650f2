"""The CUDA features the options name: `max_unroll_count`, thread block
clusters (`use_cuda_thread_block_clusters`, `max_thread_blocks_per_cluster`)
and CUDA graphs (`use_cuda_graphs`).

Without a GPU: the generated code (NVRTC for sm_90 and nvcc compile it, see
test_cuda_codegen.py), the Cuda miss path up to the cubin and the launch plan
(`_native._cuda_dry_run`), the warnings. Marked `cuda`, the same programs run
on a GPU against NumPy (skipped here; scripts/gpu-check.sh runs them). The
graph logic itself (first call builds, replays, updated nodes) is tested
against a fake driver in crates/parpy-runtime/src/cuda/call/tests.rs.
"""

import warnings

import numpy as np
import pytest

import parpy
from parpy import _native

import test_cuda_codegen as cg

HAS_GPU = parpy.backend.is_enabled(parpy.CompileBackend.Cuda)
T = parpy.threads
gpu = pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU (scripts/gpu-check.sh)")


def opts(spec, **fields):
    o = parpy.par(dict(spec))
    o.backend = parpy.CompileBackend.Cuda
    import conftest
    o.cache_dir = conftest._SESSION_CACHE_DIR
    for k, v in fields.items():
        setattr(o, k, v)
    return o


@parpy.jit
def row_max(x, y, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        y[i] = parpy.operators.max(x[i, :])


@parpy.jit
def normalize(x, y, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        s = parpy.operators.sum(x[i, :])
        parpy.label('M')
        y[i, :] = x[i, :] / s


@parpy.jit
def scale_by_total(x, y):
    parpy.label('all')
    s = parpy.operators.sum(x[:])
    parpy.label('all')
    y[:] = x[:] / s


@parpy.jit
def steps(x, T, N):
    for t in range(T):
        parpy.label('N')
        for i in range(N):
            x[i] = x[i] * 0.5 + 1.0


@parpy.jit
def shift_rows(x, w, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        m = parpy.operators.max(x[i, :])
        parpy.label('M')
        x[i, :] = x[i, :] - m + w[i, 0]


def rows(n, m, seed=0):
    x = np.random.default_rng(seed).random((n, m), dtype=np.float32) + 0.5
    return x


def nvrtc_and_nvcc(code, name):
    if cg.NVRTC_PATH is not None:
        cg.check_nvrtc(code, name)
    if cg.NVCC_PATH is not None:
        cg.check_nvcc(code, name)


# --------------------------------------------------------------------------
# max_unroll_count


def test_max_unroll_count_bounds_the_rows_kept_in_registers():
    # 16 x 768 over 32 threads: 24 elements of a row per thread
    x = rows(16, 768)
    w = rows(16, 768, 1)
    spec = {'N': T(16), 'M': T(32)}
    default = parpy.print_compiled(shift_rows, [x, w, 16], opts(spec))
    wide = parpy.print_compiled(shift_rows, [x, w, 16], opts(spec, max_unroll_count=32))
    off = parpy.print_compiled(shift_rows, [x, w, 16], opts(spec, max_unroll_count=0))
    # the default bound (16) keeps the row in memory, 32 unrolls 24 loads
    assert "x_reg" not in default and "#pragma unroll" not in default
    assert "float x_reg[24];" in wide and "#pragma unroll" in wide
    assert off == default
    nvrtc_and_nvcc(wide, "shift_rows_unroll")


def test_max_unroll_count_does_not_change_the_c_backend():
    x = rows(16, 768)
    w = rows(16, 768, 1)
    cpu = parpy.par({'N': T(16), 'M': T(32)})
    cpu.backend = parpy.CompileBackend.Cpu
    a = parpy.print_compiled(shift_rows, [x, w, 16], cpu)
    cpu.max_unroll_count = 32
    assert parpy.print_compiled(shift_rows, [x, w, 16], cpu) == a


# --------------------------------------------------------------------------
# thread block clusters


def test_clusters_make_one_kernel_with_cluster_dims():
    x = rows(10, 100000)
    y = np.zeros(10, np.float32)
    spec = {'N': T(10), 'M': T(8192)}
    plain = parpy.print_compiled(row_max, [x, y, 10], opts(spec))
    assert "_partial" in plain and "__cluster_dims__" not in plain
    code = parpy.print_compiled(
        row_max, [x, y, 10], opts(spec, use_cuda_thread_block_clusters=True))
    assert "__cluster_dims__(1, 8, 1)" in code
    assert "#include <cooperative_groups.h>" in code
    assert "cl.map_shared_rank(&parpy_slot, b)" in code
    assert "_partial" not in code and code.count("<<<") == 1
    nvrtc_and_nvcc(code, "row_max_cluster")


@pytest.mark.skipif(cg.NVRTC_PATH is None, reason="needs the nvidia-cuda-nvrtc wheel")
def test_cluster_dry_run_plans_one_cluster_kernel_and_refuses_old_gpus():
    x = rows(4, 50000)
    y = np.zeros((4, 50000), np.float32)
    o = opts({'N': T(4), 'M': T(16384)}, use_cuda_thread_block_clusters=True,
             max_thread_blocks_per_cluster=16)
    d = _native._cuda_dry_run(normalize, [x, y, 4], o, 90, details=True)
    assert len(d["names"]) == 1
    assert d["clusters"] == [[1, 16, 1]]
    assert d["launches"][0] == ([4, 16, 1], [1024, 1, 1])
    with pytest.raises(RuntimeError, match=r"compute capability 9\.0 or newer; cuda:0 is 8\.0"):
        _native._cuda_dry_run(normalize, [x, y, 4], o, 80)
    # without clusters the same program plans on sm_80
    o.use_cuda_thread_block_clusters = False
    names, _, _ = _native._cuda_dry_run(normalize, [x, y, 4], o, 80)
    assert len(names) == 2
    # a top-level reduction: its cluster is along x
    v = rows(1, 50000)[0]
    o = opts({'all': T(4096)}, use_cuda_thread_block_clusters=True)
    d = _native._cuda_dry_run(scale_by_total, [v, v.copy()], o, 90, details=True)
    assert d["clusters"][0] == [4, 1, 1]


def test_a_reduction_wider_than_a_cluster_warns_and_splits():
    x = rows(10, 100000)
    y = np.zeros(10, np.float32)
    o = opts({'N': T(10), 'M': T(65536)}, use_cuda_thread_block_clusters=True)
    with pytest.warns(parpy.ParpyWarning, match="more than `max_thread_blocks_per_cluster` = 8"):
        code = parpy.print_compiled(row_max, [x, y, 10], o)
    assert "_partial" in code and "__cluster_dims__" not in code


def test_clusters_are_refused_on_metal_and_ignored_on_cpu():
    x = rows(4, 4096)
    y = np.zeros(4, np.float32)
    o = parpy.par({'N': T(4), 'M': T(2048)})
    o.use_cuda_thread_block_clusters = True
    o.backend = parpy.CompileBackend.Metal
    with pytest.raises(parpy.CompileError, match="thread block clusters"):
        parpy.print_compiled(row_max, [x, y, 4], o)
    o.backend = parpy.CompileBackend.Cpu
    row_max(x, y, 4, opts=o)
    np.testing.assert_allclose(y, x.max(axis=1))


# --------------------------------------------------------------------------
# CUDA graphs


@pytest.mark.skipif(cg.NVRTC_PATH is None, reason="needs the nvidia-cuda-nvrtc wheel")
def test_graphs_take_pure_launch_sequences_and_warn_about_host_reads():
    x = np.zeros(256, np.float32)
    o = opts({'N': T(256)}, use_cuda_graphs=True, specialize_scalars=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = _native._cuda_dry_run(steps, [x, 10, 256], o, 90, details=True)
    assert d["graph_blocker"] is None
    # the host reads the reduction's result: launched one by one, and said so
    v = rows(1, 4096)[0]
    out = np.zeros(4096, np.float32)
    o = opts({'all': T(1024)}, use_cuda_graphs=True)
    with pytest.warns(parpy.ParpyWarning, match="launched one by one instead of as a CUDA graph"):
        d = _native._cuda_dry_run(scale_by_total, [v, out], o, 90, details=True)
    assert d["graph_blocker"] is not None
    # graphs do not change the generated code
    o.use_cuda_graphs = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plain = parpy.print_compiled(scale_by_total, [v, out], o)
    o.use_cuda_graphs = True
    with pytest.warns(parpy.ParpyWarning):
        assert parpy.print_compiled(scale_by_total, [v, out], o) == plain


# --------------------------------------------------------------------------
# on a GPU


@pytest.mark.cuda
@gpu
def test_gpu_cluster_reductions_match_numpy():
    x = rows(10, 100000)
    y = np.zeros(10, np.float32)
    row_max(x, y, 10, opts=opts({'N': T(10), 'M': T(8192)},
                                use_cuda_thread_block_clusters=True))
    np.testing.assert_array_equal(y, x.max(axis=1))
    x = rows(4, 50000)
    y = np.zeros((4, 50000), np.float32)
    for per_cluster, m in [(8, 8192), (16, 16384)]:
        normalize(x, y, 4, opts=opts({'N': T(4), 'M': T(m)},
                                     use_cuda_thread_block_clusters=True,
                                     max_thread_blocks_per_cluster=per_cluster))
        np.testing.assert_allclose(y, x / x.sum(axis=1, keepdims=True), rtol=1e-4)
    v = rows(1, 50000)[0]
    out = np.zeros(50000, np.float32)
    scale_by_total(v, out, opts=opts({'all': T(4096)}, use_cuda_thread_block_clusters=True))
    np.testing.assert_allclose(out, v / v.sum(dtype=np.float64), rtol=1e-4)


@pytest.mark.cuda
@gpu
def test_gpu_graphs_replay_and_follow_new_arguments():
    o = opts({'N': T(256)}, use_cuda_graphs=True, specialize_scalars=False)

    def ref(x, t):
        x = x.copy()
        for _ in range(t):
            x = x * np.float32(0.5) + np.float32(1.0)
        return x

    a = np.zeros(256, np.float32)
    b = np.full(256, 4.0, np.float32)
    want_a, want_b = ref(a, 3), ref(b, 3)
    steps(a, 3, 256, opts=o)          # builds the graph
    steps(b, 3, 256, opts=o)          # new (staged) pointer: node updated
    np.testing.assert_allclose(a, want_a)
    np.testing.assert_allclose(b, want_b)
    want = ref(a, 5)
    steps(a, 5, 256, opts=o)          # more launches: a new graph
    np.testing.assert_allclose(a, want)
    assert steps.cache_size() == 1


@pytest.mark.cuda
@gpu
def test_gpu_graphs_with_device_arrays_in_place():
    torch = pytest.importorskip("torch")
    o = opts({'N': T(1024)}, use_cuda_graphs=True, specialize_scalars=False)
    x = torch.zeros(1024, dtype=torch.float32, device="cuda")
    for _ in range(3):                # replays the same graph
        steps(x, 4, 1024, opts=o)
    torch.cuda.synchronize()
    want = np.zeros(1024, np.float32)
    for _ in range(12):
        want = want * np.float32(0.5) + np.float32(1.0)
    np.testing.assert_allclose(x.cpu().numpy(), want, rtol=1e-6)
