"""Finding the NVIDIA pieces parpy's Cuda backend loads: NVRTC from the
`nvidia-cuda-nvrtc` wheel (`$PARPY_NVRTC_PATH`, read by the runtime,
overrides it), and nvcc for
`compile_string` (PATH, `$CUDA_HOME`, or the `nvidia-cuda-nvcc` wheel).

Nothing here imports torch or any CUDA Python package; the wheels are found
as files under the `nvidia` namespace package's folders.
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import List, Optional


def _nvidia_roots() -> List[str]:
    """`<entry>/nvidia/cu13` for every `sys.path` entry that has one (the
    folders of the NVIDIA wheels). sys.path is scanned directly rather than
    through the `nvidia` package: an old wheel's `nvidia/__init__.py`
    elsewhere on the path would hide the namespace's other folders."""
    roots = []
    for base in sys.path:
        d = os.path.join(base or ".", "nvidia", "cu13")
        if os.path.isdir(d) and d not in roots:
            roots.append(d)
    return roots


def nvrtc_path() -> Optional[str]:
    """The absolute path of `libnvrtc.so.13` parpy loads (`$PARPY_NVRTC_PATH`
    or the wheel's), or None."""
    from parpy import _native

    return _native._nvrtc_path()


def wheel_nvrtc_path() -> Optional[str]:
    """The `nvidia-cuda-nvrtc` wheel's `libnvrtc.so.13`, or None."""
    for r in _nvidia_roots():
        p = os.path.join(r, "lib", "libnvrtc.so.13")
        if os.path.isfile(p):
            return p
    return None


def nvcc_path() -> Optional[str]:
    """nvcc from PATH, `$CUDA_HOME/bin`, or the `nvidia-cuda-nvcc` wheel."""
    p = shutil.which("nvcc")
    if p:
        return p
    for var in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(var)
        if home and os.path.isfile(os.path.join(home, "bin", "nvcc")):
            return os.path.join(home, "bin", "nvcc")
    for r in _nvidia_roots():
        p = os.path.join(r, "bin", "nvcc")
        if os.path.isfile(p):
            return p
    return None


def nvcc_dirs() -> List[str]:
    """Extra `-I`/`-L` roots for an nvcc from the wheels (their include and
    lib folders: cuda_runtime.h from nvidia-cuda-runtime, CCCL...)."""
    return _nvidia_roots()
