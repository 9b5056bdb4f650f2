"""Several GPUs and streams: which device a Cuda call runs on (its device
arrays', or `opts.device`), the device as part of the in-memory key, and
the stream it is queued on (torch's and CuPy's current stream, the
`stream` field of `__cuda_array_interface__`).

Without a GPU: the option, the key and the argument errors the fast path
raises. Marked `cuda` (skipped here; scripts/gpu-check.sh runs them): runs
on device 0 through torch, CAI objects with streams and CuPy, and on two
devices when the machine has them. The placement and stream rules
themselves are unit-tested in Rust (`parpy-runtime`, `cuda::placement` and
`cuda::call` against a fake machine with several GPUs).
"""

import numpy as np
import pytest

import parpy
from parpy import _native

import test_programs as tp
from test_cuda_runtime import FakeCai, FakeDlpack, cuda_opts, HAS_GPU
from conftest import cpu_opts

T = parpy.threads


# --------------------------------------------------------------------------
# no GPU needed


def test_device_option_is_unset_by_default():
    opts = parpy.par({})
    assert opts.device is None
    opts.device = 0
    assert opts.device == 0
    opts.device = None
    assert opts.device is None


def test_cai_stream_zero_is_an_error_naming_the_argument():
    opts = cpu_opts({'outer': T(4)})
    y = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match=r"argument `x` of `sum_rows` has an invalid "
                       r"__cuda_array_interface__: stream 0 is not allowed"):
        tp.sum_rows(FakeCai((4, 8), stream=0), y, 4, opts=opts)
    with pytest.raises(TypeError, match=r"argument `x` .*invalid __cuda_array_interface__ "
                       r"\(stream is not a CUstream handle or None\)"):
        tp.sum_rows(FakeCai((4, 8), stream="s"), y, 4, opts=opts)
    # valid streams reach the backend's own check
    for s in (None, 1, 2, 0x7f00_0000):
        with pytest.raises(ValueError, match="is a CUDA device array"):
            tp.sum_rows(FakeCai((4, 8), stream=s), y, 4, opts=opts)


def test_the_device_of_a_device_array_is_in_the_key():
    def key(*args):
        return _native._observe_ns(args, 1)[1]

    d0, d1 = FakeDlpack((4, 8), device_id=0), FakeDlpack((4, 8), device_id=1)
    assert key(d0) == key(FakeDlpack((4, 8), device_id=0))
    assert key(d0) != key(d1)
    # a CAI array's device is its pointer's; without a driver it is
    # unknown (a key no build has), with one GPU it is 0
    word = key(FakeCai((4, 8)))[0]
    device = (word >> 8) & 0xffff
    if not HAS_GPU:
        assert device == 0xffff
    # the stream is per call, not part of the key
    assert key(FakeCai((4, 8), stream=2)) == key(FakeCai((4, 8), stream=None))


@parpy.jit
def keep(x, N):
    for i in range(N):
        pass


def test_same_shapes_on_two_devices_are_two_specializations():
    # the Python backend takes device arrays without a GPU and caches by
    # the same key as the compiled backends
    opts = parpy.par({})
    opts.backend = parpy.CompileBackend.Python
    parpy.clear_cache()
    keep(FakeDlpack((4, 8), device_id=0), 0, opts=opts)
    keep(FakeDlpack((4, 8), device_id=0), 0, opts=opts)
    assert keep.cache_size() == 1
    keep(FakeDlpack((4, 8), device_id=1), 0, opts=opts)
    assert keep.cache_size() == 2


# --------------------------------------------------------------------------
# on a GPU

gpu = pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU (scripts/gpu-check.sh)")


class CaiOf:
    """A torch tensor's memory through `__cuda_array_interface__` only,
    with a `stream` field."""

    def __init__(self, t, stream=None):
        self._t = t  # keeps the memory alive
        self.__cuda_array_interface__ = {
            "shape": tuple(t.shape), "typestr": "<f4", "data": (t.data_ptr(), False),
            "strides": None, "version": 3, "stream": stream,
        }


def _gpu_count():
    torch = pytest.importorskip("torch")
    return torch.cuda.device_count()


@pytest.mark.cuda
@gpu
def test_gpu_torch_on_device_0_without_opts_device():
    torch = pytest.importorskip("torch")
    n = 4096
    x = torch.arange(n, dtype=torch.float32, device="cuda:0")
    y = torch.ones(n, dtype=torch.float32, device="cuda:0")
    opts = cuda_opts({'N': T(n)}, specialize_scalars=False)
    assert opts.device is None
    tp.axpy(2.0, x, y, n, opts=opts)
    torch.cuda.synchronize()
    assert torch.allclose(y, 2 * x + 1)
    opts.device = 0
    tp.axpy(2.0, x, y, n, opts=opts)
    torch.cuda.synchronize()
    assert torch.allclose(y, 4 * x + 1)


@pytest.mark.cuda
@gpu
def test_gpu_numpy_only_calls_run_on_device_0():
    n = 1000
    x = np.arange(n, dtype=np.float64)
    y = np.ones(n, np.float64)
    tp.axpy(2.0, x, y, n, opts=cuda_opts({'N': T(n)}))
    np.testing.assert_allclose(y, 2 * x + 1)


@pytest.mark.cuda
@gpu
def test_gpu_cai_stream_field_orders_the_call():
    torch = pytest.importorskip("torch")
    n = 1 << 20
    x = torch.zeros(n, dtype=torch.float32, device="cuda:0")
    y = torch.ones(n, dtype=torch.float32, device="cuda:0")
    opts = cuda_opts({'N': T(n)}, specialize_scalars=False)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(50_000_000)  # the fill below lands late on s
        x.fill_(3.0)
    # queued on s (the CAI stream of x), the call sees the fill
    tp.axpy(2.0, CaiOf(x, s.cuda_stream), CaiOf(y), n, opts=opts)
    with torch.cuda.stream(s):
        z = y.clone()
    torch.cuda.synchronize()
    assert torch.all(z == 7.0)
    # the legacy and per-thread default streams are valid handles
    for stream in (1, 2):
        tp.axpy(1.0, CaiOf(x, stream), CaiOf(y, stream), n, opts=opts)
        torch.cuda.synchronize()
    assert torch.all(y == 13.0)


@pytest.mark.cuda
@gpu
def test_gpu_arguments_on_two_streams_are_joined():
    torch = pytest.importorskip("torch")
    n = 1 << 20
    x = torch.zeros(n, dtype=torch.float32, device="cuda:0")
    y = torch.zeros(n, dtype=torch.float32, device="cuda:0")
    opts = cuda_opts({'N': T(n)}, specialize_scalars=False)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    with torch.cuda.stream(s1):
        torch.cuda._sleep(20_000_000)
        x.fill_(3.0)
    with torch.cuda.stream(s2):
        torch.cuda._sleep(50_000_000)
        y.fill_(1.0)
    # launched on s1 (x's stream, the first), after the work on s2 too
    tp.axpy(2.0, CaiOf(x, s1.cuda_stream), CaiOf(y, s2.cuda_stream), n, opts=opts)
    # and s2's later work sees the call's writes
    with torch.cuda.stream(s2):
        z = y.clone()
    torch.cuda.synchronize()
    assert torch.all(z == 7.0)


@pytest.mark.cuda
@gpu
def test_gpu_cupy_arrays_on_cupys_current_stream():
    cupy = pytest.importorskip("cupy")
    n = 1 << 16
    opts = cuda_opts({'N': T(n)}, specialize_scalars=False)
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        x = cupy.full(n, 3.0, dtype=cupy.float64)
        y = cupy.ones(n, dtype=cupy.float64)
        tp.axpy(2.0, x, y, n, opts=opts)
        z = y * 1.0
    s.synchronize()
    assert bool(cupy.all(z == 7.0))
    tp.axpy(1.0, x, y, n, opts=opts)  # the null stream: the legacy one
    cupy.cuda.runtime.deviceSynchronize()
    assert bool(cupy.all(y == 10.0))


@pytest.mark.cuda
@gpu
def test_gpu_two_devices():
    if _gpu_count() < 2:
        pytest.skip("needs two GPUs")
    import torch
    n = 4096
    opts = cuda_opts({'N': T(n)}, specialize_scalars=False)
    parpy.clear_cache()
    on = {}
    for d in (1, 0, 1):
        x = torch.arange(n, dtype=torch.float32, device=f"cuda:{d}")
        y = torch.ones(n, dtype=torch.float32, device=f"cuda:{d}")
        tp.axpy(2.0, x, y, n, opts=opts)
        torch.cuda.synchronize(d)
        assert torch.allclose(y, 2 * x + 1), d
        on[d] = (x, y)
    # same shapes on two devices: two specializations
    assert tp.axpy.cache_size() == 2
    specs = tp.axpy.specializations()
    assert [s["device"] for s in specs] == [1, 0]
    assert specs[1]["reason"] == "new device: cuda:1 -> cuda:0"
    assert "Cuda on cuda:1" in parpy.explain(tp.axpy)
    # CAI arrays on device 1 (the pointer says where)
    x1, y1 = on[1]
    tp.axpy(1.0, CaiOf(x1), CaiOf(y1), n, opts=opts)
    torch.cuda.synchronize(1)
    assert torch.allclose(y1, 3 * x1 + 1)
    assert tp.axpy.cache_size() == 3
    with pytest.raises(ValueError, match=r"arguments `x` \(cuda:0\) and `y` \(cuda:1\) of "
                       r"`axpy` are on different CUDA devices"):
        tp.axpy(2.0, on[0][0], y1, n, opts=opts)
    opts.device = 0
    with pytest.raises(ValueError, match=r"argument `x` of `axpy` is on CUDA device 1, but "
                       r"the function runs on device 0 \(opts.device\)"):
        tp.axpy(2.0, x1, y1, n, opts=opts)
    # NumPy arguments go to the device opts.device names
    opts.device = 1
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    tp.axpy(2.0, x, y, n, opts=opts)
    np.testing.assert_allclose(y, 2 * x + 1)


@pytest.mark.cuda
@gpu
def test_gpu_compile_string_refuses_arrays_on_another_device():
    if _gpu_count() < 2:
        pytest.skip("needs two GPUs")
    import torch
    n = 1024
    opts = cuda_opts({'N': T(n)}, specialize_scalars=False)
    opts.device = 0
    x = torch.arange(n, dtype=torch.float32, device="cuda:0")
    code = parpy.print_compiled(tp.axpy, [2.0, x, x.clone(), n], opts)
    fn = parpy.compile_string("axpy", code, opts)
    x1 = torch.arange(n, dtype=torch.float32, device="cuda:1")
    with pytest.raises(ValueError, match="is on CUDA device 1, but this compiled code runs on "
                       "device 0"):
        fn(2.0, x1, x1.clone(), n)
