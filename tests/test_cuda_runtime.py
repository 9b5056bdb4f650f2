"""The Cuda runtime: what can be checked without a GPU (NVRTC from the wheel
compiling generated device code to a cubin, the cubin disk cache, the launch
plan built from real programs, device-array arguments with fake
`__cuda_array_interface__` objects and a fake `torch` module, backend
resolution, compile_string with nvcc), and, marked `cuda`, runs on a GPU
(skipped here; scripts/gpu-check.sh runs them).
"""

import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import parpy
from parpy import _native
from parpy import _cuda

import test_programs as tp
from conftest import _SESSION_CACHE_DIR  # noqa: F401  (set by the fixture)
from conftest import f32, f64, needs_driver

HAS_NVRTC = _cuda.nvrtc_path() is not None
HAS_NVCC = _cuda.nvcc_path() is not None
HAS_GPU = parpy.backend.is_enabled(parpy.CompileBackend.Cuda)

# NVRTC comes from a wheel that scripts/test.sh installs on Linux: missing it
# there is a failure of the setup, not a reason to skip.
needs_nvrtc = pytest.mark.skipif(
    not HAS_NVRTC and not sys.platform.startswith("linux"),
    reason="the nvidia-cuda-nvrtc wheel exists for Linux only")
needs_nvcc = pytest.mark.skipif(
    not HAS_NVCC and not sys.platform.startswith("linux"),
    reason="the nvidia-cuda-nvcc wheel exists for Linux only")


def cuda_opts(spec=None, cache_dir=None, **fields):
    opts = parpy.par(dict(spec or {}))
    opts.backend = parpy.CompileBackend.Cuda
    import conftest
    opts.cache_dir = cache_dir or conftest._SESSION_CACHE_DIR
    for k, v in fields.items():
        setattr(opts, k, v)
    return opts


def run_py(code, env=None):
    """Runs `code` in a fresh interpreter; returns (rc, stdout+stderr)."""
    e = dict(os.environ)
    e.update(env or {})
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                       capture_output=True, text=True, env=e, timeout=120)
    return r.returncode, r.stdout + r.stderr


AXPY = r'''
extern "C" __global__ void axpy(float *y, const float *x, float a, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
'''

# --------------------------------------------------------------------------
# NVRTC in-process (no GPU needed)


@needs_nvrtc
def test_nvrtc_is_found_in_the_wheel():
    p = _cuda.nvrtc_path()
    assert p is not None and p.endswith("libnvrtc.so.13") and os.path.isabs(p)
    major, minor = _native._cuda_nvrtc_version().split(".")
    assert int(major) == 13


@needs_nvrtc
def test_nvrtc_compiles_a_kernel_to_a_cubin_for_sm_90():
    cubin = _native._cuda_nvrtc_compile(AXPY, "axpy", 90)
    assert cubin[:4] == b"\x7fELF"
    assert b"axpy" in cubin
    # a different architecture gives a different image
    assert _native._cuda_nvrtc_compile(AXPY, "axpy", 80) != cubin


@needs_nvrtc
def test_nvrtc_error_carries_the_log():
    bad = 'extern "C" __global__ void k(float *y) { y[0] = not_declared; }\n'
    with pytest.raises(RuntimeError) as e:
        _native._cuda_nvrtc_compile(bad, "broken", 90)
    msg = str(e.value)
    assert "could not compile `broken` for sm_90" in msg
    assert "not_declared" in msg and "error" in msg


@needs_nvrtc
def test_nvrtc_bundled_headers_give_cuda_fp16():
    src = ('#include <cuda_fp16.h>\n'
           'extern "C" __global__ void h(__half *y) { y[0] = __hadd(y[0], __float2half(1.0f)); }\n')
    assert _native._cuda_nvrtc_compile(src, "half", 90)[:4] == b"\x7fELF"


T = parpy.threads

DRY = {
    "sum_rows": (tp.sum_rows, [f32(100, 1024), f32(100), 100], {'outer': T(100)}),
    "sum_rows_par": (tp.sum_rows_par, [f32(10, 1000), f32(10), 10],
                     {'N': T(10), 'M': T(256)}),
    "softmax_par": (tp.softmax_par, [f32(32, 1024), f32(32, 1024), 32],
                    {'N': T(32), 'M': T(256)}),
    "axpy": (tp.axpy, [2.5, f64(5000), f64(5000), 5000], {'N': T(5000)}),
    "jacobi_1d": (tp.jacobi_1d, [f64(100), f64(100), 100, 5], {'N': T(8)}),
    "prefix_then_scale": (tp.prefix_then_scale, [f64(40), f64(40), 40], {'N': T(8)}),
}


@needs_nvrtc
@pytest.mark.parametrize("specialize", [True, False])
@pytest.mark.parametrize("name", sorted(DRY))
def test_generated_code_compiles_in_process_and_plans(name, specialize, tmp_path):
    """The whole Cuda miss path except the GPU: compile for Cuda, NVRTC the
    device code to an sm_90 cubin, build the launch plan."""
    fn, args, spec = DRY[name]
    opts = cuda_opts(spec, cache_dir=str(tmp_path), specialize_scalars=specialize)
    names, launches, size = _native._cuda_dry_run(fn, args, opts, 90)
    assert len(names) >= 1 and len(names) == len(launches)
    assert size > 1000
    for grid, block in launches:
        assert all(g >= 1 for g in grid) and all(1 <= b <= 1024 for b in block)
    assert len(list(tmp_path.glob("*.cubin"))) == 1


@needs_nvrtc
def test_cubin_disk_cache_hits_and_rebuilds_corrupt_entries(tmp_path):
    fn, args, spec = DRY["sum_rows"]
    opts = cuda_opts(spec, cache_dir=str(tmp_path))
    _native._cuda_dry_run(fn, args, opts, 90)
    [cubin] = tmp_path.glob("*.cubin")
    good = cubin.read_bytes()
    mtime = cubin.stat().st_mtime_ns
    _native._cuda_dry_run(fn, args, opts, 90)
    assert cubin.stat().st_mtime_ns == mtime  # a hit: not rewritten
    cubin.write_bytes(good[: len(good) // 2])  # truncated
    _native._cuda_dry_run(fn, args, opts, 90)
    assert cubin.read_bytes() == good
    # another architecture is another entry
    _native._cuda_dry_run(fn, args, opts, 80)
    assert len(list(tmp_path.glob("*.cubin"))) == 2
    parpy.clear_cache()
    assert not list(tmp_path.glob("*.cubin"))


@needs_nvrtc
def _dry_run_setup(cache_dir):
    """The start of a script for a new process: `o`, Cuda options with the
    disk cache `cache_dir`, and `args` for `tp.sum_rows`."""
    return f"""
        import sys, time
        sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r})
        import numpy as np, parpy
        from parpy import _native
        import test_programs as tp
        o = parpy.par({{'outer': parpy.threads(100)}})
        o.backend = parpy.CompileBackend.Cuda
        o.cache_dir = {str(cache_dir)!r}
        args = [np.zeros((100, 1024), np.float32), np.zeros(100, np.float32), 100]
"""


def test_warm_disk_cache_needs_no_nvrtc_in_a_new_process(tmp_path):
    """G3: a new process with a warm disk cache reads the cubin and never
    loads NVRTC (loading it alone costs ~30 ms)."""
    code = _dry_run_setup(tmp_path) + """
        t = time.perf_counter()
        _native._cuda_dry_run(tp.sum_rows, args, o, 90)
        print("LOADED" if _native._cuda_nvrtc_loaded() else "NOT-LOADED",
              "%.2f ms" % ((time.perf_counter() - t) * 1e3))
    """
    rc, out = run_py(code)
    assert rc == 0 and "LOADED" in out and "NOT-LOADED" not in out, out
    rc, out = run_py(code)
    assert rc == 0 and "NOT-LOADED" in out, out
    print(out)


def test_an_nvrtc_that_cannot_be_loaded_is_a_runtime_error_not_a_bug(tmp_path):
    """An environment failure says what failed (a RuntimeError), not
    "internal compiler error: this is a bug in parpy" (the dry run said so
    for an NVRTC too old to have bundled headers, and for this library that
    is not NVRTC)."""
    code = _dry_run_setup(tmp_path) + """
        try:
            _native._cuda_dry_run(tp.sum_rows, args, o, 90)
        except RuntimeError as e:
            print(type(e).__name__, e)
    """
    # a shared library that loads but is not NVRTC
    not_nvrtc = np._core._multiarray_umath.__file__
    rc, out = run_py(code, {"PARPY_NVRTC_PATH": not_nvrtc})
    assert rc == 0 and out.startswith("RuntimeError NVRTC is not available"), out
    assert "bug in parpy" not in out, out


def test_sync_without_gpu_work_is_a_no_op():
    parpy.sync()
    parpy.sync()


# --------------------------------------------------------------------------
# backend resolution without a driver


@pytest.mark.skipif(HAS_GPU, reason="this machine has a usable GPU")
def test_cuda_backend_explains_why_not_usable():
    why = parpy.backend.explain(parpy.CompileBackend.Cuda)
    assert why.startswith("Cuda: not usable: ")
    assert "libcuda.so.1" in why or "GPU" in why or "NVRTC" in why, why
    assert parpy.CompileBackend.Cuda not in parpy.backend.available


@pytest.mark.skipif(HAS_GPU, reason="this machine has a usable GPU")
def test_auto_picks_cpu_and_verbose_resolution_says_why(capfd):
    opts = parpy.par({'outer': parpy.threads(4)})
    opts.verbose_backend_resolution = True
    x = np.ones((4, 8), np.float32)
    y = np.zeros(4, np.float32)
    tp.sum_rows(x, y, 4, opts=opts)
    assert np.allclose(y, 8)
    err = capfd.readouterr().err
    assert "Cuda: not usable" in err and "Auto: chose Cpu" in err, err


@pytest.mark.skipif(HAS_GPU, reason="this machine has a usable GPU")
def test_running_on_cuda_without_a_gpu_is_a_clear_error():
    opts = cuda_opts({'outer': parpy.threads(4)})
    with pytest.raises(RuntimeError, match="cannot run `sum_rows` on the Cuda backend: Cuda: not usable"):
        tp.sum_rows(np.ones((4, 8), np.float32), np.zeros(4, np.float32), 4, opts=opts)


# --------------------------------------------------------------------------
# device arrays as arguments (fake objects; no GPU needed for the checks)


class FakeCai:
    """An object with `__cuda_array_interface__` (like a CuPy array)."""

    def __init__(self, shape, typestr="<f4", ptr=0x7000_0000, readonly=False, strides=None,
                 stream=None):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "typestr": typestr, "data": (ptr, readonly),
            "strides": strides, "version": 3,
        }
        if stream is not None:
            self.__cuda_array_interface__["stream"] = stream


def test_cai_array_on_the_cpu_backend_is_rejected_by_name():
    from conftest import cpu_opts
    opts = cpu_opts({'outer': parpy.threads(4)})
    with pytest.raises(ValueError, match=r"argument `x` of `sum_rows` is a CUDA device array.*Cpu"):
        tp.sum_rows(FakeCai((4, 8)), np.zeros(4, np.float32), 4, opts=opts)


def test_non_contiguous_cai_array_is_rejected():
    from conftest import cpu_opts
    opts = cpu_opts({'outer': parpy.threads(4)})
    with pytest.raises(ValueError, match="argument `x` of `sum_rows` is not contiguous"):
        tp.sum_rows(FakeCai((4, 8), strides=(4, 16)), np.zeros(4, np.float32), 4, opts=opts)
    # C-contiguous explicit strides are fine up to the backend check
    with pytest.raises(ValueError, match="CUDA device array"):
        tp.sum_rows(FakeCai((4, 8), strides=(32, 4)), np.zeros(4, np.float32), 4, opts=opts)


def test_unsupported_cai_dtype_and_bad_interface():
    from conftest import cpu_opts
    opts = cpu_opts({'outer': parpy.threads(4)})
    with pytest.raises(TypeError, match="dtype <c8"):
        tp.sum_rows(FakeCai((4, 8), typestr="<c8"), np.zeros(4, np.float32), 4, opts=opts)
    bad = FakeCai((4, 8))
    bad.__cuda_array_interface__ = {"shape": (4, 8)}
    with pytest.raises(TypeError, match="invalid __cuda_array_interface__"):
        tp.sum_rows(bad, np.zeros(4, np.float32), 4, opts=opts)


def test_cai_typestr_with_non_ascii_characters_is_a_clear_error():
    # the size after the first two characters is sliced from user text; a
    # multi-byte character there must not reach Rust's char-boundary panic
    from conftest import cpu_opts
    opts = cpu_opts({'outer': parpy.threads(4)})
    with pytest.raises(TypeError, match="dtype <\u00e94"):
        tp.sum_rows(FakeCai((4, 8), typestr="<\u00e94"), np.zeros(4, np.float32), 4, opts=opts)
    with pytest.raises(TypeError, match="invalid __cuda_array_interface__ \\(bad typestr\\)"):
        tp.sum_rows(FakeCai((4, 8), typestr="<\u00e94", strides=(32, 4)),
                    np.zeros(4, np.float32), 4, opts=opts)


class FakeDlpack:
    """An object with only `__dlpack__`, returning a hand-made DLPack capsule
    (DLManagedTensor built with ctypes; no deleter)."""

    _NAME = b"dltensor"

    def __init__(self, shape, device_type=2, code=2, bits=32, strides=None, device_id=0):
        import ctypes as C

        class DLTensor(C.Structure):
            _fields_ = [("data", C.c_void_p), ("device_type", C.c_int32),
                        ("device_id", C.c_int32), ("ndim", C.c_int32), ("code", C.c_uint8),
                        ("bits", C.c_uint8), ("lanes", C.c_uint16),
                        ("shape", C.POINTER(C.c_int64)), ("strides", C.POINTER(C.c_int64)),
                        ("byte_offset", C.c_uint64)]

        class DLManagedTensor(C.Structure):
            _fields_ = [("t", DLTensor), ("ctx", C.c_void_p), ("deleter", C.c_void_p)]

        self._shape = (C.c_int64 * len(shape))(*shape)
        self._strides = (C.c_int64 * len(shape))(*strides) if strides else None
        m = DLManagedTensor()
        m.t.data = 0x7000_0000
        m.t.device_type = device_type
        m.t.device_id = device_id
        m.t.ndim = len(shape)
        m.t.code, m.t.bits, m.t.lanes = code, bits, 1
        m.t.shape = self._shape
        if self._strides is not None:
            m.t.strides = self._strides
        self._m = m
        new = C.pythonapi.PyCapsule_New
        new.restype = C.py_object
        new.argtypes = [C.c_void_p, C.c_char_p, C.c_void_p]
        self._new = lambda: new(C.addressof(self._m), self._NAME, None)

    def __dlpack__(self, *args, **kwargs):
        return self._new()


def test_dlpack_arrays_are_read_and_checked():
    from conftest import cpu_opts
    opts = cpu_opts({'outer': parpy.threads(4)})
    y = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match="argument `x` of `sum_rows` is a CUDA device array"):
        tp.sum_rows(FakeDlpack((4, 8)), y, 4, opts=opts)
    with pytest.raises(ValueError, match="DLPack array on a non-CUDA device"):
        tp.sum_rows(FakeDlpack((4, 8), device_type=1), y, 4, opts=opts)
    with pytest.raises(ValueError, match="is not contiguous"):
        tp.sum_rows(FakeDlpack((4, 8), strides=(1, 4)), y, 4, opts=opts)
    with pytest.raises(TypeError, match="DLPack"):
        tp.sum_rows(FakeDlpack((4, 8), code=5, bits=64), y, 4, opts=opts)


FAKE_TORCH = """
import sys, types
torch = types.ModuleType("torch")
class Tensor:
    def __init__(self, dev, contiguous=True):
        self.dev = dev
        self.contig = contiguous
        self.dtype = "torch.float32"
        self.shape = (4, 8)
    def get_device(self):
        return self.dev
    def is_contiguous(self):
        return self.contig
    def data_ptr(self):
        return 0x7000_0000
torch.Tensor = Tensor
"""


def test_torch_is_not_imported_and_fake_tensors_are_recognised():
    code = f"""
        import sys
        sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r})
        import numpy as np
        import parpy
        assert "torch" not in sys.modules, "importing parpy imported torch"
        import test_programs as tp
        opts = parpy.par({{'outer': parpy.threads(4)}})
        opts.backend = parpy.CompileBackend.Cpu
        x = np.ones((4, 8), np.float32); y = np.zeros(4, np.float32)
        tp.sum_rows(x, y, 4, opts=opts)
        assert "torch" not in sys.modules, "calling imported torch"
        {textwrap.indent(FAKE_TORCH, '        ').strip()}
        sys.modules["torch"] = torch
        # (tensors in host memory are read in place: test_parpy_compat.py)
        for t, want in [(Tensor(0, contiguous=False), "is not contiguous"),
                        (Tensor(0), "is a CUDA device array")]:
            try:
                tp.sum_rows(t, y, 4, opts=opts)
            except (ValueError, TypeError) as e:
                assert want in str(e), (want, str(e))
                assert "`x`" in str(e), str(e)
            else:
                raise AssertionError("no error for " + want)
        print("OK")
    """
    rc, out = run_py(code)
    assert rc == 0 and "OK" in out, out


# --------------------------------------------------------------------------
# compile_string with nvcc (builds here; runs on a GPU)


def printed_sum_rows():
    x = np.ones((16, 64), np.float32)
    y = np.zeros(16, np.float32)
    opts = cuda_opts({'outer': parpy.threads(16)})
    return parpy.print_compiled(tp.sum_rows, [x, y, 16], opts), x, y, opts


@needs_nvcc
def test_compile_string_cuda_builds_with_nvcc():
    code, x, y, opts = printed_sum_rows()
    f = parpy.compile_string("sum_rows", code, opts)
    assert f.entry_symbol.startswith("parpy_entry_")
    if HAS_GPU:
        f(x, y, 16)
        assert np.allclose(y, 64)
    else:
        with pytest.raises(RuntimeError, match="(?i)driver|cuda"):
            f(x, y, 16)
    # the library is cached on disk: a second build is a hit
    files = sorted(pathlib.Path(opts.cache_dir).glob("*.so"))
    parpy.compile_string("sum_rows", code, opts)
    assert sorted(pathlib.Path(opts.cache_dir).glob("*.so")) == files


@needs_nvcc
def test_compile_string_cuda_reports_nvcc_errors():
    code, _, _, opts = printed_sum_rows()
    broken = code.replace("__global__", "__global__ not_a_type", 1)
    with pytest.raises(parpy.CompileError, match="nvcc"):
        parpy.compile_string("sum_rows", broken, opts)


def test_compile_string_cuda_without_nvcc_is_a_clear_error(monkeypatch):
    code, _, _, opts = printed_sum_rows()
    monkeypatch.setattr(_cuda, "nvcc_path", lambda: None)
    with pytest.raises(RuntimeError, match="needs nvcc, and none was found"):
        parpy.compile_string("sum_rows", code, opts)


# --------------------------------------------------------------------------
# on a GPU


# -- how the Cuda backend takes each kind of argument (no GPU needed) --------

class _CpuDlpack:
    """A non-NumPy object exporting a CPU DLPack tensor."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, **kw):
        return self._a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


class _FakeCai:
    def __init__(self):
        self.__cuda_array_interface__ = {
            "shape": (4,), "typestr": "<f4", "data": (4096, False), "version": 3}


@pytest.mark.parametrize("value", [
    np.zeros(8, np.float32),
    np.zeros((3, 4), np.int64),
    np.zeros(8, np.float64)[::2],
    2.0, 3, np.float32(1.5),
])
def test_numpy_arrays_and_scalars_are_staged_not_device_arrays(value):
    """NumPy arrays export __dlpack__ (a CPU tensor): the Cuda backend must
    still take them as NumPy arrays to copy, not reject them as CPU DLPack
    (the first GPU run failed 204 tests that way)."""
    assert _native._cuda_arg_kind(value) is None


def test_readonly_numpy_array_is_staged():
    # NumPy's __dlpack__ raises BufferError on a read-only array
    x = np.arange(5.0)
    x.setflags(write=False)
    assert _native._cuda_arg_kind(x) is None


def test_cpu_dlpack_object_is_rejected_naming_the_argument():
    with pytest.raises(ValueError, match=r"argument `x` .* non-CUDA device"):
        _native._cuda_arg_kind(_CpuDlpack(np.zeros(4, np.float32)))


def test_cuda_array_interface_object_is_taken_in_place():
    assert _native._cuda_arg_kind(_FakeCai()) == "cai"


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU (scripts/gpu-check.sh)")
@pytest.mark.parametrize("specialize", [True, False])
def test_gpu_axpy_numpy_in_and_out(specialize):
    """NumPy arguments are copied to the device and the written one back; a
    read-only input is accepted (it is not written, so not copied back).
    A function of its own: test_programs' axpy meets other values of `a` in
    other tests of the process, after which `a` is no longer specialized."""
    parpy.clear_cache()
    x = np.arange(5000, dtype=np.float64)
    y = np.ones(5000, np.float64)
    x.setflags(write=False)
    opts = cuda_opts({'N': T(5000)}, specialize_scalars=specialize)
    axpy_alone(2.0, x, y, 5000, opts=opts)
    np.testing.assert_allclose(y, 2.0 * x + 1.0)
    axpy_alone(3.0, x, y, 5000, opts=opts)
    np.testing.assert_allclose(y, 5.0 * x + 1.0)
    assert axpy_alone.cache_size() == (2 if specialize else 1)


@parpy.jit
def axpy_alone(a, x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = a * x[i] + y[i]


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU (scripts/gpu-check.sh)")
def test_gpu_write_output_names_the_file_cu(tmp_path, capsys):
    """write_output on the Cuda backend writes the CUDA file as `.cu`."""
    x = np.arange(64, dtype=np.float64)
    y = np.zeros(64, np.float64)
    opts = cuda_opts({'N': T(64)}, cache_dir=str(tmp_path), write_output=True)
    tp.axpy(2.0, x, y, 64, opts=opts)
    files = list((tmp_path / "generated").glob("axpy-*.cu"))
    assert len(files) == 1, list((tmp_path / "generated").iterdir())
    assert "__global__" in files[0].read_text()
    assert str(files[0]) in capsys.readouterr().err


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU (scripts/gpu-check.sh)")
def test_gpu_torch_tensors_in_place_on_the_current_stream():
    torch = pytest.importorskip("torch")
    x = torch.arange(4096, dtype=torch.float32, device="cuda")
    y = torch.ones(4096, dtype=torch.float32, device="cuda")
    opts = cuda_opts({'N': T(4096)}, specialize_scalars=False)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        tp.axpy(2.0, x, y, 4096, opts=opts)
    parpy.sync()
    assert torch.allclose(y, 2 * x + 1)
    # a CPU tensor beside device ones is copied to the device (REFERENCE:
    # torch CPU tensors are staged on GPUs, as NumPy arrays are)
    y2 = torch.ones(4096, dtype=torch.float32, device="cuda")
    tp.axpy(2.0, x.cpu(), y2, 4096, opts=opts)
    parpy.sync()
    assert torch.allclose(y2, 2 * x + 1)
    xc, yc = x.cpu(), torch.ones(4096, dtype=torch.float32)
    tp.axpy(2.0, xc, yc, 4096, opts=opts)
    assert torch.allclose(yc, 2 * xc + 1)


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU (scripts/gpu-check.sh)")
def test_gpu_cai_arrays_in_place():
    cupy = pytest.importorskip("cupy")
    x = cupy.arange(1000, dtype=cupy.float64)
    y = cupy.ones(1000, dtype=cupy.float64)
    tp.axpy(2.0, x, y, 1000, opts=cuda_opts({'N': T(1000)}))
    cupy.cuda.runtime.deviceSynchronize()
    assert bool(cupy.allclose(y, 2 * x + 1))


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU (scripts/gpu-check.sh)")
@needs_driver
def test_gpu_illegal_address_is_a_python_exception_naming_the_function():
    # in a subprocess: an illegal address poisons the CUDA context
    bad = (
        "// parpy-entry: parpy_entry_bad\n"
        "// parpy-param: y f32[16] written\n"
        "#include <stdint.h>\n"
        "__global__ void bad_kernel(float *y) { float *p = (float *)0x10; p[threadIdx.x] = 1.0f; }\n"
        'extern "C" int32_t parpy_entry_bad(void **args) '
        "{ bad_kernel<<<1, 16>>>((float *)args[0]); return 0; }\n"
    )
    code = f"""
        import numpy as np, parpy
        opts = parpy.CompileOptions(); opts.backend = parpy.CompileBackend.Cuda
        f = parpy.compile_string("bad", {bad!r}, opts)
        try:
            f(np.zeros(16, np.float32))
        except RuntimeError as e:
            assert "bad" in str(e) and "ILLEGAL_ADDRESS" in str(e), str(e)
            print("OK")
    """
    rc, out = run_py(code)
    assert rc == 0 and "OK" in out, out


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU (scripts/gpu-check.sh)")
def test_gpu_same_numpy_array_twice_shares_one_copy():
    # axpy(a, x, x): x = a*x + x, as on the CPU (two copies gave x = x)
    x = np.arange(1000, dtype=np.float64)
    tp.axpy(2.0, x, x, 1000, opts=cuda_opts({'N': T(1000)}))
    np.testing.assert_allclose(x, 3 * np.arange(1000))


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU (scripts/gpu-check.sh)")
def test_gpu_overlapping_numpy_views_are_an_error():
    buf = np.zeros(1001, np.float64)
    # (the check of every call, args::overlapping, says it first)
    with pytest.raises(ValueError, match=r"`x` and `y` of `axpy` overlap in memory"):
        tp.axpy(2.0, buf[1:], buf[:-1], 1000, opts=cuda_opts({'N': T(1000)}))
