"""Shared fixtures and helpers for the parpy test suite.

* every test session gets a fresh cache directory (`cache_dir` fixture), and
  the default user cache directory is redirected into it, so the tests never
  touch the user's cache and never depend on what an earlier run left there;
* `PARPY_TEST_EMULATED_GPU=1` runs the Cuda backend on the CUDA emulator
  (see below);
* `cpu_opts(spec)` builds CompileOptions for the CPU backend that use it;
* `run_both(fn, args, opts)` runs the reference (`fn` with
  `CompileBackend.Python`: plain Python with the jit meaning of builtins, on
  copies of the arrays) and the compiled function, then compares every array.
"""

import atexit
import copy
import os
import shutil
import tempfile
import types
from pathlib import Path

import numpy as np
import pytest

import parpy
from parpy import _pymode

_SESSION_CACHE_DIR = None

# PARPY_TEST_EMULATED_GPU=1: the Cuda backend of the session runs on the CUDA
# emulator (parpy._cuda_emu.install) and reports itself usable, so the GPU
# tests (`-m cuda`, and the ones behind `is_enabled(Cuda)`) run without a
# GPU. Tests that need CUDA device memory (torch or CuPy tensors,
# DeviceMemory) skip or fail for want of a driver.
EMULATED_GPU = os.environ.get("PARPY_TEST_EMULATED_GPU") == "1"
# a GPU test that needs the CUDA driver itself (device memory, a fault)
needs_driver = pytest.mark.skipif(
    EMULATED_GPU, reason="needs the CUDA driver, not the emulator (PARPY_TEST_EMULATED_GPU)")
if EMULATED_GPU:
    from parpy import _cuda_emu

    _cuda_emu.install(seed=int(os.environ.get("PARPY_TEST_EMULATED_GPU_SEED", "1")))
    # compile_string builds the printed Cuda program with nvcc: not here
    os.environ["PARPY_TEST_NO_NVCC"] = "1"


@pytest.fixture(scope="session", autouse=True)
def cache_dir(tmp_path_factory):
    """A fresh cache directory for this test session."""
    global _SESSION_CACHE_DIR
    d = tmp_path_factory.mktemp("parpy-cache")
    _SESSION_CACHE_DIR = str(d)
    old = os.environ.get("XDG_CACHE_HOME")
    # The default cache location (when `cache_dir` is not set) follows the
    # user cache directory; keep it inside the session directory too.
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield str(d)
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


def scratch_dir(prefix):
    """A new temporary directory (pathlib.Path) removed when the process
    exits: for files a test writes outside pytest's fixtures (modules of
    generated kernels, shared by tests of several files)."""
    d = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, d, True)
    return Path(d)


def backend_opts(backend, spec=None, cache_dir=None, **fields):
    """CompileOptions for `backend` with the parallel `spec`, the cache in
    `cache_dir` (when given); `fields` sets further CompileOptions
    attributes."""
    opts = parpy.par(dict(spec or {}))
    opts.backend = backend
    if cache_dir is not None:
        opts.cache_dir = str(cache_dir)
    for k, v in fields.items():
        setattr(opts, k, v)
    return opts


def cpu_opts(spec=None, **fields):
    """CompileOptions for the CPU backend with the session's cache directory.
    `fields` sets further CompileOptions attributes."""
    return backend_opts(parpy.CompileBackend.Cpu, spec, _SESSION_CACHE_DIR, **fields)


def f32(*shape):
    """A float32 array of zeros (argument of a codegen-only test)."""
    return np.zeros(shape, np.float32)


def f64(*shape):
    return np.zeros(shape, np.float64)


def i32(*shape):
    return np.zeros(shape, np.int32)


def i64(*shape):
    return np.zeros(shape, np.int64)


def b8(*shape):
    return np.zeros(shape, np.bool_)


def py_func(fn):
    """The undecorated function behind a jit function."""
    for attr in ("py_func", "__wrapped__"):
        f = getattr(fn, attr, None)
        if f is not None:
            return f
    if isinstance(fn, types.FunctionType):
        return fn
    raise AttributeError(f"{fn!r} does not expose the undecorated function (.py_func)")


def plain_python(fn):
    """`fn` as `CompileBackend.Python` runs it: its undecorated function with
    helper jit functions replaced by their plain versions and `min`/`max`
    promoting like jit code (parpy._pymode.plain)."""
    return _pymode.plain(py_func(fn))


def python_opts(opts):
    """A copy of `opts` with `backend = CompileBackend.Python`."""
    o = copy.copy(opts)
    o.backend = parpy.CompileBackend.Python
    return o


def tolerances(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.float16:
        return dict(rtol=1e-2, atol=1e-3)
    if dtype == np.float32:
        return dict(rtol=2e-5, atol=1e-5)
    if dtype == np.float64:
        return dict(rtol=1e-12, atol=1e-12)
    return dict(rtol=0, atol=0)  # ints and bools: exact


def run_both(fn, args, opts, rtol=None, atol=None):
    """Runs `fn` in Python mode (`CompileBackend.Python`, the reference) on
    copies of the array arguments and the compiled `fn(*args, opts=opts)` on
    other copies; compares all arrays (tolerances by dtype unless given).
    Returns the compiled run's arrays."""
    ref_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    out_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    assert fn(*ref_args, opts=python_opts(opts)) is None
    result = fn(*out_args, opts=opts)
    assert result is None, f"a jit function without `return` returned {result!r}"
    for k, (ref, got) in enumerate(zip(ref_args, out_args)):
        if not isinstance(ref, np.ndarray):
            continue
        tol = tolerances(ref.dtype)
        if rtol is not None:
            tol["rtol"] = rtol
        if atol is not None:
            tol["atol"] = atol
        assert got.dtype == ref.dtype
        np.testing.assert_allclose(
            got, ref, err_msg=f"argument {k} of {getattr(fn, '__name__', fn)}", **tol
        )
    return out_args


def same_bits(got, want, opts):
    """NumPy's bits on the Cpu; a GPU adds in its own order (Cuda, as
    tests/test_cuda_programs.py re-collects these tests, swapping the test
    module's `cpu_opts`: `opts` are the options the test ran with): within
    rounding."""
    assert got.dtype == want.dtype
    if opts.backend == parpy.CompileBackend.Cuda and want.dtype.kind == 'f':
        rtol = {2: 1e-2, 4: 1e-5}.get(want.dtype.itemsize, 1e-12)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True)
        return
    assert np.array_equal(got, want, equal_nan=True), (got, want)


def bits_of(run, fn, args, out, opts):
    """Runs `fn` by `run` (a test module's `run_both`, which
    tests/test_cuda_programs.py swaps for its GPU run) and as plain Python;
    argument `out` has NumPy's bits (`same_bits`)."""
    got = run(fn, args, opts)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    fn.py_func(*want)
    same_bits(got[out], want[out], opts)


def check_gpu_code(fn, args_for, spec, name, **fields):
    """Prints `fn`'s code for Cuda and Metal (`args_for(backend)` gives the
    arguments; `fields` sets further CompileOptions attributes) and checks
    it with NVRTC and clang-19, each where installed; skips the test when
    neither is. Returns the code by backend."""
    import test_cuda_codegen as cc  # (they import test modules: not at the top)
    import test_metal_codegen as mc
    opts = parpy.par(spec)
    for k, v in fields.items():
        setattr(opts, k, v)
    codes = {}
    for backend, ok, check in [(parpy.CompileBackend.Cuda, cc.NVRTC_PATH is not None, cc.check_nvrtc),
                               (parpy.CompileBackend.Metal, mc.CLANG is not None, mc.assert_clang_ok)]:
        if not ok:
            continue
        opts.backend = backend
        codes[backend] = parpy.print_compiled(fn, args_for(backend), opts)
        check(codes[backend], name)
    if not codes:
        pytest.skip("neither NVRTC nor clang-19 is installed")
    return codes


@pytest.fixture(name="run_both")
def run_both_fixture():
    return run_both


@pytest.fixture(name="cpu_opts")
def cpu_opts_fixture():
    return cpu_opts


def module_from_source(tmp_path, name, text):
    """The module `name` whose source is `text`, written to a file under
    `tmp_path` (parpy reads a function's source from its file, so errors
    point at its lines)."""
    import importlib.util
    src = tmp_path / f"{name}.py"
    src.write_text(text)
    spec = importlib.util.spec_from_file_location(name, src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
