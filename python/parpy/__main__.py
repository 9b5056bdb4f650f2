"""`python -m parpy`: what parpy sees on this machine, its disk cache, and the
generated code of a function without writing a script.

    python -m parpy info
    python -m parpy cache size|list|clear [--dir DIR]
    python -m parpy print MODULE:FUNCTION --backend cuda \\
        --arg 'f32[100,1024]' --arg 'f32[100]' --arg 100 --par '{"outer": 100}'

MODULE is an importable module name or a path to a .py file. Each `--arg` is
one argument of the function, in order: `DTYPE[d0,d1,...]` for an array
(`f32[100,1024]`, `int64[8]`, `bool[4,4]`), an int, float or `True`/`False`
literal for a Python scalar, or `DTYPE:VALUE` for a NumPy scalar
(`f32:0.5`); parameters with a default may be left out at the end. `--par`
is the parallel specification as JSON: a label maps to a thread count, or to
an object `{"threads": N, "tpb": M, "reduction": true}` ("threads" required).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import json
import os
import platform
import re
import shutil
import stat
import subprocess
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

import parpy
from . import _native

_DTYPES = {
    "bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f16": np.float16, "f32": np.float32, "f64": np.float64,
}
_ARRAY = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\[\s*([0-9,\s]*)\]\s*$")


class UsageError(Exception):
    """A mistake on the command line (printed without a traceback)."""


def _dtype(name: str) -> Any:
    if name in _DTYPES:
        return _DTYPES[name]
    try:
        t = np.dtype(name).type
    except TypeError:
        raise UsageError(f"unknown element type {name!r} (use one of {', '.join(_DTYPES)})")
    if t not in _DTYPES.values():  # (NumPy's other types: 'O', 'U8', 'c16', ...)
        raise UsageError(f"element type {name!r} ({np.dtype(t).name}) is not supported by "
                         f"parpy (use one of {', '.join(_DTYPES)})")
    return t


def parse_arg(text: str) -> Any:
    """One `--arg` value: an array of zeros, a Python scalar or a NumPy scalar."""
    m = _ARRAY.match(text)
    if m:
        dims = [d.strip() for d in m.group(2).split(",") if d.strip()]
        try:
            return np.zeros(tuple(int(d) for d in dims), dtype=_dtype(m.group(1)))
        except (ValueError, MemoryError) as e:  # too large to allocate
            raise UsageError(f"--arg {text!r}: {e}")
    if ":" in text:
        name, value = text.split(":", 1)
        t = _dtype(name.strip())
        try:
            return t(_scalar(value.strip()))
        except (OverflowError, ValueError, TypeError) as e:  # i8:300
            raise UsageError(f"--arg {text!r}: {e}")
    v = _scalar(text.strip())
    if isinstance(v, int) and not isinstance(v, bool) and not -2**63 <= v < 2**63:
        raise UsageError(f"--arg {text!r}: an int argument must fit in 64 bits")
    return v


def _scalar(text: str) -> Any:
    if text in ("True", "true"):
        return True
    if text in ("False", "false"):
        return False
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    raise UsageError(f"cannot read argument {text!r}: expected DTYPE[dims], a number, "
                     "True/False or DTYPE:VALUE")


def parse_par(text: Optional[str]) -> Dict[str, parpy.LoopPar]:
    if not text:
        return {}
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as e:
        raise UsageError(f"--par is not valid JSON: {e}")
    if not isinstance(raw, dict):
        raise UsageError("--par must be a JSON object mapping labels to thread counts")
    spec = {}
    for label, v in raw.items():
        if isinstance(v, bool) or not isinstance(v, (int, dict)):
            raise UsageError(f"--par: label {label!r} needs a thread count or an object")
        try:
            if isinstance(v, int):
                spec[label] = parpy.threads(v)
                continue
            unknown = set(v) - {"threads", "tpb", "reduction"}
            if unknown:
                raise UsageError(f"--par: label {label!r} has unknown keys {sorted(unknown)}")
            if "threads" not in v:
                # (parpy.reduce() without a count is no parallel specification)
                raise UsageError(f'--par: the object for label {label!r} has no "threads" '
                                 f'(write {{"threads": N, ...}})')
            p = parpy.threads(v["threads"])
            if v.get("reduction"):
                p = p.par_reduction()
            if "tpb" in v:
                p = p.tpb(v["tpb"])
        except (TypeError, ValueError, OverflowError) as e:
            raise UsageError(f"--par: label {label!r}: {e}")
        spec[label] = p
    return spec


def load_function(target: str) -> Any:
    if ":" not in target:
        raise UsageError(f"expected MODULE:FUNCTION, got {target!r}")
    mod_name, _, fn_name = target.rpartition(":")
    if mod_name.endswith(".py") or os.sep in mod_name:
        if not os.path.isfile(mod_name):
            raise UsageError(f"no such file: {mod_name}")
        spec = importlib.util.spec_from_file_location("__parpy_cli_module__", mod_name)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    else:
        sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(mod_name)
        except ImportError as e:
            raise UsageError(f"cannot import module {mod_name!r}: {e}")
    fn = getattr(module, fn_name, None)
    if fn is None:
        raise UsageError(f"module {mod_name!r} has no attribute {fn_name!r}")
    if not isinstance(fn, parpy.JitFunction):
        if not inspect.isfunction(fn):  # K = 3: not a function to print
            raise UsageError(f"{target}: {fn_name} is {type(fn).__name__} {_short(fn)}, "
                             f"not a function")
        fn = parpy.jit(fn)
    return fn


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_BACKENDS = {"cpu": "Cpu", "c": "Cpu", "cuda": "Cuda", "metal": "Metal", "auto": "Auto"}


def cmd_print(a: argparse.Namespace) -> int:
    spec = parse_par(a.par)
    fn = load_function(a.target)
    args = [parse_arg(x) for x in a.arg]
    params = _parameters(fn)
    least = sum(1 for _, has_default in params if not has_default)
    if not least <= len(args) <= len(params):
        takes = f"{least} to {len(params)}" if least < len(params) else f"{len(params)}"
        shown = ", ".join(n + ("=..." if d else "") for n, d in params)
        raise UsageError(f"{fn.__name__} takes {takes} arguments ({shown}); "
                         f"{len(args)} --arg given")
    opts = parpy.par(spec)
    opts.backend = getattr(parpy.CompileBackend, _BACKENDS[a.backend.lower()])
    if a.no_specialize:
        opts.specialize_scalars = False
    try:
        code = parpy.print_compiled(fn, args, opts)
    except parpy.CompileError:
        raise
    except (TypeError, ValueError, OverflowError) as e:
        # the checks of the arguments (an unsupported dtype, an int beyond
        # 64 bits): about the --arg values, not a bug to trace
        raise UsageError(str(e))
    sys.stdout.write(code)
    return 0


def _parameters(fn: Any) -> List[Tuple[str, bool]]:
    """(name, has a default) of each parameter of the jit function; a
    parameter with a default may be left out (print_compiled fills it in)."""
    try:
        sig = inspect.signature(fn.py_func)
    except (TypeError, ValueError):
        return [(n, False) for n in fn.parameters]
    return [(p.name, p.default is not inspect.Parameter.empty)
            for p in sig.parameters.values()]


# --- cache ----------------------------------------------------------------

def _cache_dir(a: argparse.Namespace) -> str:
    return os.fspath(a.dir) if a.dir else os.fspath(_native.default_cache_dir())


def cache_entries(d: str) -> List[Tuple[str, int, float]]:
    """(name, bytes, mtime) of every file in the cache directory (not its
    `compilers/` folder, where parpy remembers the compilers' hashes)."""
    out = []
    if not os.path.isdir(d):
        return out
    for name in sorted(os.listdir(d)):
        p = os.path.join(d, name)
        try:
            st = os.lstat(p)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            continue
        out.append((name, st.st_size, st.st_mtime))
    return out


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _size_line(d: str) -> str:
    entries = cache_entries(d)
    return f"{d}: {_builds(d)} builds, {len(entries)} files, {_human(sum(s for _, s, _ in entries))}"


def cmd_cache(a: argparse.Namespace) -> int:
    d = _cache_dir(a)
    if a.dir and os.path.exists(d) and not os.path.isdir(d):
        raise UsageError(f"--dir {d}: not a directory")
    if a.action == "size":
        print(_size_line(d))
    elif a.action == "list":
        import time
        for name, size, mtime in cache_entries(d):
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(mtime))
            print(f"{stamp}  {size:>10}  {name}")
        print(_size_line(d))
    else:  # clear: that directory only (the default one without --dir)
        builds = _builds(d)
        if a.dir:
            try:
                removed = _native._clear_cache_dir(d)
            except OSError as e:  # a directory parpy may not read or write
                raise UsageError(f"--dir {d}: {e}")
        else:
            before = len(cache_entries(d))
            _native.clear_cache()  # the default directory (and nothing is in memory)
            removed = before - len(cache_entries(d))
        print(f"removed {removed} files ({builds - _builds(d)} builds) from {d}")
    return 0


def _builds(d: str) -> int:
    return sum(1 for n, _, _ in cache_entries(d) if n.endswith(".meta"))


# --- info -----------------------------------------------------------------

def _compiler_line() -> str:
    cc = os.environ.get("CC") or "cc"
    exe = shutil.which(cc.split()[0]) if cc.split() else None
    if exe is None:
        return f"{cc}: not found (the Cpu backend needs a C compiler; set CC)"
    try:
        v = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=20)
        first = (v.stdout or v.stderr).splitlines()[0] if (v.stdout or v.stderr) else "?"
    except (OSError, subprocess.TimeoutExpired) as e:
        first = f"cannot run: {e}"
    return f"{exe} ({first})"


def cmd_info(a: argparse.Namespace) -> int:
    print(f"parpy {parpy.__version__} (Python {platform.python_version()}, "
          f"NumPy {np.__version__}, {platform.system()} {platform.machine()})")
    print(f"module: {os.path.dirname(parpy.__file__)}")
    print("backends:")
    for b in ("Cpu", "Cuda", "Metal"):
        backend = getattr(parpy.CompileBackend, b)
        ok = parpy.backend.is_enabled(backend)
        why = parpy.backend.explain(backend).split(": ", 1)[-1]
        print(f"  {b:<6} {why}" if why.startswith(("usable", "not usable")) else
              f"  {b:<6} {'usable' if ok else 'not usable'}: {why}")
    print(f"C compiler: {_compiler_line()}")
    try:
        nvrtc = _native._cuda_nvrtc_version()
    except Exception as e:  # no NVRTC here: say why
        nvrtc = f"not available ({str(e).splitlines()[0] if str(e) else type(e).__name__})"
    print(f"NVRTC: {nvrtc}")
    print(f"cache: {_size_line(os.fspath(_native.default_cache_dir()))}")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m parpy", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("info", help="versions, backends, compilers and the cache")
    c = sub.add_parser("cache", help="the disk cache: size, list or clear")
    c.add_argument("action", choices=["size", "list", "clear"])
    c.add_argument("--dir", help="a cache directory other than the default")
    p = sub.add_parser("print", help="print the generated code of a function",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("target", help="MODULE:FUNCTION (module name or path to a .py file)")
    p.add_argument("--backend", default="cpu", choices=sorted(_BACKENDS))
    p.add_argument("--arg", action="append", default=[], help="one argument (repeat in order)")
    p.add_argument("--par", help='parallel specification as JSON, e.g. \'{"outer": 100}\'')
    p.add_argument("--no-specialize", action="store_true",
                   help="do not specialize on scalar values (specialize_scalars=False)")
    a = ap.parse_args(argv)
    try:
        return {"info": cmd_info, "cache": cmd_cache, "print": cmd_print}[a.cmd](a)
    except UsageError as e:
        print(f"python -m parpy {a.cmd}: error: {e}", file=sys.stderr)
        return 2
    except parpy.CompileError as e:
        print(str(e), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
