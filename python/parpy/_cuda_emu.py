"""A CUDA emulator for testing without a GPU (a developer tool, not a
backend).

`install(seed)` makes the Cuda backend of the process run on it: parpy's
launch plan, staging and copies as on a GPU, the kernels run by the
emulator (crates/parpy-runtime/src/cuda/emu.rs). What a GPU runs is that
path.

`run(fn, args, opts)` compiles `fn` for the Cuda backend, takes the CUDA C++
program `print_compiled` shows (kernels and the host function that launches
them with `<<<grid, block>>>`), and runs it on the CPU: the program is
compiled as C++ against a stand-in `cuda_runtime.h` in which every GPU
thread of a block is a fiber (`ucontext`) of one OS thread. A fiber runs
until it reaches `__syncthreads()` (all the block's live threads must reach
it before any goes on) or a warp shuffle (the 32 lanes of its warp
exchange values), or ends. Blocks run one after the other. To expose a
missing barrier, the fibers of a block take turns in a random order between
two barriers, and the blocks run in a random order (`seed`).

What it checks is the kernels' logic: barriers, the grid mapping, shared
memory, warp reductions, atomic updates (under one lock), thread block
clusters, the host function's launches and copies. It does not
model the memory consistency of a real GPU or its math library's rounding
(the host's libm computes `sin`, `exp`, ...). The blocks of a thread block
cluster run at once, one OS thread each, with their own shared memory.
float16 is GCC's `_Float16` (the generated code rounds every float16
operation by a cast, as `__half`'s operators do). A program that differs
here differs on a GPU; one that agrees here may still differ there.

The arrays are NumPy arrays (device memory is host memory here); scalars
are passed as the generated entry reads them.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from typing import Any, Dict, Iterator, List, Optional, Sequence

import numpy as np

from . import _native

# the headers the program includes, as the emulator provides them: the
# stand-in cuda_runtime.h (crates/parpy-runtime/src/cuda/emu.h) and the ones
# that include it
_HEADERS: Dict[str, str] = dict(_native.cuda_emulator_headers())
HEADER: str = _HEADERS["cuda_runtime.h"]

_DIR: Dict[str, str] = {}


def _private_dir() -> str:
    """This process's folder for emulated kernels, created once and removed
    when the process exits."""
    if "private" not in _DIR:
        d = tempfile.mkdtemp(prefix="parpy-cuda-emu-")
        atexit.register(shutil.rmtree, d, True)
        _DIR["private"] = d
    return _DIR["private"]


def install(seed: int = 0, workdir: Optional[str] = None) -> None:
    """Runs the Cuda backend of this process on the emulator from now on:
    calls with `backend=parpy.CompileBackend.Cuda` go through parpy's own
    launch plan (argument staging, grids, temporaries, host reads of device
    data, bounds checks, CUDA graphs), with the kernels compiled for the CPU
    into `workdir` (the first call's; a fresh private folder by default).
    Calling it again sets the seed of the thread and block order of later
    launches. NumPy arguments only (there are no device arrays)."""
    if "dir" not in _DIR:
        _DIR["dir"] = workdir or _private_dir()
    _native.cuda_emulator(_DIR["dir"], int(seed) & 0xFFFFFFFF)


def uninstall() -> None:
    """Later Cuda builds go to the GPU again (specializations built on the
    emulator stay there: use new functions)."""
    if "dir" in _DIR:
        _native.cuda_emulator(_DIR["dir"], None)


@contextlib.contextmanager
def installed(seed: int = 0) -> Iterator[None]:
    """`install(seed)` for the duration of a `with` block."""
    install(seed)
    try:
        yield
    finally:
        uninstall()


_LAUNCH = re.compile(r"(\b[A-Za-z_][A-Za-z0-9_]*)<<<(.*?)>>>\((.*?)\);")


def _split_top(s: str) -> List[str]:
    """Splits at the commas outside parentheses."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(s):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(s[start:i].strip())
            start = i + 1
    out.append(s[start:].strip())
    return out


def emulated_source(code: str) -> str:
    """The printed CUDA program with its `<<<...>>>` launches made calls of
    the emulator."""
    # the kernels that form thread block clusters, and their dimensions
    clusters = dict((name, dims) for dims, name in re.findall(
        r"__cluster_dims__\(([^)]*)\)\s*(?:__launch_bounds__\([^)]*\)\s*)?(\w+)\(", code))

    def launch(m: "re.Match[str]") -> str:
        geometry = _split_top(m.group(2))[:2]
        args = m.group(3).strip()
        name = m.group(1)
        head = (f"parpy_emu::launch_cluster(dim3({clusters[name]}), {name}"
                if name in clusters else f"parpy_emu::launch({name}")
        return f"{head}, {', '.join(geometry)}" + (f", {args}" if args else "") + ");"

    return _LAUNCH.sub(launch, code)


def _params(code: str) -> List[tuple]:
    out = []
    for line in code.splitlines():
        if line.startswith("// parpy-param: "):
            parts = line[len("// parpy-param: "):].split()
            name, ty = parts[0], parts[1]
            m = re.match(r"([a-z]+[0-9]*)(\[(.*)\])?$", ty)
            assert m is not None, line
            out.append((name, m.group(1), m.group(2) is not None))
    return out


_DTYPES = {"bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
           "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
           "f16": np.float16, "f32": np.float32, "f64": np.float64}

_C_TYPES = {"bool": np.bool_, "int8_t": np.int8, "int16_t": np.int16, "int32_t": np.int32,
            "int64_t": np.int64, "uint8_t": np.uint8, "uint16_t": np.uint16,
            "uint32_t": np.uint32, "uint64_t": np.uint64, "float": np.float32,
            "double": np.float64}

_LIBS: Dict[str, Any] = {}


def _write(path: str, text: str) -> None:
    """Writes a file whole (other processes may use the same folder)."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _build(src: str, workdir: Optional[str]) -> Any:
    key = hashlib.sha256((HEADER + src).encode()).hexdigest()[:24]
    if key in _LIBS:
        return _LIBS[key]
    d = workdir or _private_dir()
    os.makedirs(d, exist_ok=True)
    for name, text in _HEADERS.items():
        path = os.path.join(d, name)
        try:
            with open(path) as f:
                same = f.read() == text
        except OSError:
            same = False
        if not same:
            _write(path, text)
    cpp = os.path.join(d, f"emu_{key}.{os.getpid()}.cpp")
    so = os.path.join(d, f"emu_{key}.{os.getpid()}.so")
    _write(cpp, '#include "cuda_runtime.h"\n' + src)
    cxx = os.environ.get("CXX", "c++")
    r = subprocess.run([cxx, "-std=c++17", "-O1", "-fwrapv", "-fPIC", "-shared", "-w",
                        "-I", d, cpp, "-o", so], capture_output=True, text=True)
    if r.returncode != 0:
        errors = [line for line in r.stderr.splitlines() if "error" in line]
        raise RuntimeError("the CUDA emulator could not compile the program ({}):\n{}".format(
            cpp, "\n".join(errors[:5]) or r.stderr[-4000:]))
    lib = ctypes.CDLL(so)
    _LIBS[key] = lib
    return lib


def run(fn: Any, args: Sequence[Any], opts: Any, seed: int = 0,
        workdir: Optional[str] = None) -> None:
    """Runs `fn(*args)` as its Cuda code would, on the CPU (see the module
    documentation). Arrays are updated in place, as on a GPU."""
    import parpy

    backend = opts.backend
    try:
        opts.backend = parpy.CompileBackend.Cuda
        code = parpy.print_compiled(fn, list(args), opts)
    finally:
        opts.backend = backend
    run_source(code, args, seed, workdir)


def run_source(code: str, args: Sequence[Any], seed: int = 0,
               workdir: Optional[str] = None) -> None:
    """Runs a CUDA program as `print_compiled` prints it (maybe edited) on
    `args` (see [`run`])."""
    src = emulated_source(code)
    entry = re.search(r'extern "C" int32_t (\w+)\(void \*\*args\)', src)
    if entry is None:
        raise RuntimeError("no entry in the printed CUDA program")
    params = _params(code)
    if len(params) != len(args):
        raise TypeError(f"the program takes {len(params)} arguments, got {len(args)}")
    lib = _build(src, workdir)
    keep: List[Any] = []
    slots = []
    for (name, ty, is_array), a in zip(params, args):
        if is_array:
            if not isinstance(a, np.ndarray) or not a.flags.c_contiguous:
                raise TypeError(f"the CUDA emulator takes C-contiguous NumPy arrays ({name})")
            slots.append(a.ctypes.data)
        else:
            # the value in an 8-byte slot, of the type the entry reads it as
            # (`*(double *)args[k]` for a float32 parameter given a Python
            # float, say)
            slot = re.search(r"\*\((\w+) \*\)args\[%d\]" % len(slots), src[entry.start():])
            cty = _C_TYPES.get(slot.group(1)) if slot else None
            v = np.zeros(1, np.uint64)
            raw = np.array([a]).astype(cty or _DTYPES[ty]).tobytes()
            v.view(np.uint8)[: len(raw)] = np.frombuffer(raw, np.uint8)
            keep.append(v)
            slots.append(v.ctypes.data)
    # the bounds record, when the entry takes one more pointer
    n_args = len(re.findall(r"args\[\d+\]", src[entry.start():]))
    record = np.zeros(_native.RECORD_LEN, np.int64)
    if n_args > len(params):
        slots.append(record.ctypes.data)
    argv = (ctypes.c_void_p * max(len(slots), 1))(*slots)
    lib.parpy_emu_seed(ctypes.c_uint(seed))
    lib.parpy_emu_reset()
    f = getattr(lib, entry.group(1))
    f.restype = ctypes.c_int32
    status = f(argv)
    lib.parpy_emu_error.restype = ctypes.c_char_p
    why = lib.parpy_emu_error()
    if why is not None:
        raise RuntimeError(f"the emulated CUDA program failed: {why.decode()}")
    if status != 0:
        raise RuntimeError("the emulated CUDA program returned an error")
    # (raised as a call of the jit function raises it)
    name = re.search(r"^// Generated by parpy \S+ from (\S+) ", code, re.M)
    _native._raise_bounds_failure(name.group(1) if name else "?", code, [int(v) for v in record])
