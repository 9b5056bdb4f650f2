"""Generated names never clash with C, CUDA or Metal names (issue 10, items 4-5).

A function named after a C library function (`printf`, `exit`, `free`,
`y0`, `system`) used to be an exported symbol of that name: the entry called
the C library instead (wrong results, a silent exit, a shell command). Locals
named after macros or math functions (`INT64_MAX`, `HUGE_VAL`, `log2`,
`isinf`, `erf`) did not compile. Now the host function and helpers are
private, the entry is the library's only exported symbol, and user names
that are names of the languages or headers get a suffix or a prefix
(back/c_names.rs).

tests/test_cuda_programs.py re-collects the differential tests here for the
Cuda backend (a cubin through NVRTC here, a run in the GPU check).
"""

import pathlib
import shutil
import subprocess

import numpy as np
import pytest

import parpy
from conftest import backend_opts, cpu_opts, run_both
from test_cuda_codegen import check_nvcc, check_nvrtc, needs_nvcc, needs_nvrtc
from test_metal_codegen import assert_clang_ok, needs_clang

pytestmark = pytest.mark.timeout(120)


@parpy.jit
def printf(x, y, N):
    parpy.label("i")
    for i in range(N):
        y[i] = x[i] + 1.0


@parpy.jit
def exit(x, y, N):  # noqa: A001
    parpy.label("i")
    for i in range(N):
        y[i] = x[i] * 2.0


@parpy.jit
def free(x, y, N):
    parpy.label("i")
    for i in range(N):
        y[i] = x[i] - 3.0


@parpy.jit
def y0(x, y, N):
    parpy.label("i")
    for i in range(N):
        y[i] = x[i] * x[i]


@parpy.jit
def system(cmd, out, N):
    # its int8 argument used to reach libc's system() as a command
    parpy.label("i")
    for i in range(N):
        out[i] = cmd[i] + 1


@parpy.jit
def erf(a):
    # a helper named like libm's erf
    return a * 2.0 + 1.0


@parpy.jit
def isinf(a, b):
    return a - b


@parpy.jit
def macro_locals(x, y, HUGE_VAL, N):
    parpy.label("i")
    for i in range(N):
        INT64_MAX = x[i]
        log2 = INT64_MAX + HUGE_VAL
        isnan = log2 * 2.0
        INFINITY = isinf(isnan, 0.5)
        y[i] = erf(INFINITY) + parpy.math.sqrt(x[i])


def _args(dtype=np.float32, n=6):
    return [np.arange(n, dtype=dtype) + 1, np.zeros(n, dtype=dtype), n]


LIBC_NAMED = [printf, exit, free, y0]


@pytest.mark.parametrize("fn", LIBC_NAMED, ids=lambda f: f.__name__)
def test_functions_named_like_the_c_library_compute_their_own_result(fn):
    run_both(fn, _args(), cpu_opts({"i": parpy.threads(4)}))


def test_a_function_named_system_runs_no_command(tmp_path):
    marker = tmp_path / "ran"
    cmd = np.frombuffer(f"touch {marker}\0".encode(), dtype=np.int8).copy()
    out = np.zeros_like(cmd)
    run_both(system, [cmd, out, len(cmd)], cpu_opts({"i": parpy.threads(4)}))
    assert not marker.exists()


def test_locals_params_and_helpers_named_like_macros_and_math_functions():
    x, y, n = _args(np.float64)
    run_both(macro_locals, [x, y, 1.5, n], cpu_opts({"i": parpy.threads(4)}))


def _library(cache):
    libs = sorted(pathlib.Path(cache).rglob("*.so"))
    assert libs, f"no library in {cache}"
    return libs[-1]


@pytest.mark.skipif(shutil.which("nm") is None, reason="nm is not installed")
@pytest.mark.parametrize("fn", [printf, macro_locals], ids=lambda f: f.__name__)
def test_the_entry_is_the_only_exported_symbol(fn, tmp_path):
    args = _args(np.float64)
    if fn is macro_locals:
        args.insert(2, 1.5)
    fn(*args, opts=backend_opts(parpy.CompileBackend.Cpu, {"i": parpy.threads(4)},
                                cache_dir=tmp_path))
    r = subprocess.run(["nm", "-D", "--defined-only", str(_library(tmp_path))],
                       capture_output=True, text=True, check=True)
    text_symbols = [line.split()[-1] for line in r.stdout.splitlines()
                    if line.split()[1] in ("T", "t", "W")]
    assert text_symbols == [f"parpy_entry_{fn.__name__}"], r.stdout


def _printed(fn, backend, dtype):
    args = _args(dtype)
    if fn is macro_locals:
        args.insert(2, 1.5)
    return parpy.print_compiled(fn, args, backend_opts(backend, {"i": parpy.threads(32)}))


ALL = LIBC_NAMED + [macro_locals]


@needs_nvrtc
@pytest.mark.parametrize("fn", ALL, ids=lambda f: f.__name__)
def test_cuda_code_of_clashing_names_compiles_with_nvrtc(fn):
    check_nvrtc(_printed(fn, parpy.CompileBackend.Cuda, np.float32), fn.__name__)


@needs_nvcc
@pytest.mark.parametrize("fn", [printf, macro_locals], ids=lambda f: f.__name__)
def test_cuda_file_of_clashing_names_compiles_with_nvcc(fn):
    check_nvcc(_printed(fn, parpy.CompileBackend.Cuda, np.float32), fn.__name__)


@needs_clang
@pytest.mark.parametrize("fn", ALL, ids=lambda f: f.__name__)
def test_metal_code_of_clashing_names_passes_clang(fn):
    assert_clang_ok(_printed(fn, parpy.CompileBackend.Metal, np.float32), fn.__name__)


def test_clashing_names_are_renamed_in_the_code():
    code = _printed(macro_locals, parpy.CompileBackend.Cpu, np.float64)
    for renamed in ("v_INT64_MAX", "log2_1", "isnan_1", "erf_1(", "isinf_1("):
        assert renamed in code, code
    assert "static void printf_1(" in _printed(printf, parpy.CompileBackend.Cpu, np.float64)


# --------------------------------------------------------------------------
# identifiers are NFKC-normalized as Python does (item 6)

@parpy.jit
def fullwidth(ｖ, y, N):
    parpy.label("i")
    for ｉ in range(N):
        t = v[i] * 2.0
        ｔ = ｔ + ｖ[ｉ]
        y[i] = t


def test_fullwidth_identifiers_are_the_ascii_names():
    out = run_both(fullwidth, _args(np.float64), cpu_opts({"i": parpy.threads(4)}))
    np.testing.assert_allclose(out[1], 3.0 * (np.arange(6) + 1))
