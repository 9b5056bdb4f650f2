"""Type stubs for parpy's native module (the pyo3 binding in crates/parpy-py)."""

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, overload

__version__: str
# how a `// parpy-bounds:` line of an assertion / a `raise` starts
RECORD_LEN: int

class CompileError(RuntimeError):
    """A mistake in a parpy program or its options (the message is the
    rendered diagnostics)."""

class CompileTypeError(CompileError, TypeError):
    """A type error in a parpy program (operand types, a narrowing store,
    an annotation the argument does not match) or in a call of a jit
    function (an unknown keyword, `opts=` not a CompileOptions, an argument
    parpy cannot pass): both a CompileError and a TypeError."""

class CompileNameError(CompileError, NameError):
    """A name without a value where the program reads it (not defined, or
    a shape symbol no parameter annotation uses): both a CompileError and a
    NameError."""

class CompileValueError(CompileError, ValueError):
    """An option given a value it cannot take (CompileOptions fields, a
    thread count, threads per block), a non-contiguous tensor argument, or
    a float NaN made an integer in a statement certain to run: both a
    CompileError and a ValueError."""

class CompileIndexError(CompileError, IndexError):
    """An index out of bounds that a statement certain to run uses, found
    when compiling (the same statement that may not run is checked when it
    runs, an IndexError): both a CompileError and an IndexError."""

class CompileOverflowError(CompileError, OverflowError):
    """A Python int that the NumPy integer it meets cannot hold, or a float
    infinity made an integer, in a statement certain to run, found when
    compiling: both a CompileError and an OverflowError."""

class InternalError(Exception):
    """A bug in parpy."""

class BuildError(RuntimeError):
    """The environment failed a build (the C compiler, the disk, the cache
    directory); the message names the compiler or path and what to check."""

class ParpyWarning(UserWarning):
    """A warning from the compiler (e.g. a label that matches nothing)."""

class LoopPar:
    """The parallelism of one label: `parpy.threads(n)` and its modifiers.
    Immutable: the methods return new objects. Built as in ParPy too:
    `LoopPar()` has no thread count (not parallel), `.threads(n)` sets it
    once."""

    def __new__(cls, threads: Optional[int] = None) -> LoopPar: ...
    @overload
    def threads(self) -> Optional[int]:
        """The thread count, or None (also `.nthreads`)."""
    @overload
    def threads(self, n: int) -> LoopPar:
        """A new LoopPar with `n` threads (ParPy's builder); a LoopPar that
        has a count already raises CompileValueError (a ValueError and a
        RuntimeError)."""
    def tpb(self, n: int) -> LoopPar:
        """Threads per block; a positive multiple of 32 (else
        CompileValueError: a ValueError and a RuntimeError)."""
    def par_reduction(self) -> LoopPar:
        """Marks a manual reduction loop."""
    def reduce(self) -> LoopPar:
        """Older spelling of `par_reduction()`."""
    def is_parallel(self) -> bool:
        """Whether it has a thread count (ParPy's name)."""
    @property
    def nthreads(self) -> Optional[int]: ...
    @property
    def threads_per_block(self) -> Optional[int]: ...
    @property
    def is_reduction(self) -> bool: ...

class CompileBackend:
    Auto: CompileBackend
    Cuda: CompileBackend
    Metal: CompileBackend
    Cpu: CompileBackend
    Python: CompileBackend

class CompileOptions:
    """Options of one compilation. Mutable; assign fields. `parallelize`
    reads as a read-only mapping, `includes`, `libs` and `extra_flags` as
    read-only lists: copies, so changing one in place raises TypeError;
    assign instead (`opts.parallelize = {...}`, `opts.parallelize |= {...}`,
    `opts.includes += [d]`). An unknown keyword of the constructor is a
    TypeError; setting an unknown field an AttributeError.

    The Cuda options (docs/cuda-options.md): `max_unroll_count` bounds
    the register arrays whose loops are unrolled (Cuda and Metal);
    `use_cuda_thread_block_clusters` (at most `max_thread_blocks_per_cluster`
    blocks) runs a wide reduction as one kernel of thread block clusters;
    `use_cuda_graphs` replays a call's launches as a CUDA graph (the runtime
    only: the generated code is the same). The Cpu backend ignores the
    CUDA-only switches; the Metal backend rejects them when they are on."""

    parallelize: Mapping[str, LoopPar]
    backend: CompileBackend
    verbose_backend_resolution: bool
    debug_print: bool
    write_output: bool
    max_unroll_count: int
    use_cuda_thread_block_clusters: bool
    max_thread_blocks_per_cluster: int
    use_cuda_graphs: bool
    # a bit count (64) or a parpy.types element type (parpy.types.I64),
    # read back as given
    force_int_size: Optional[Any]
    force_float_size: Optional[Any]
    debug_callbacks: bool
    implicit_shape_labels: bool
    includes: List[str]
    # each entry: a directory (searched, `-L dir`, and on the loader's
    # path), a library file (linked as that file) or a name (`-lname`)
    libs: List[str]
    extra_flags: List[str]
    specialize_scalars: bool
    bounds_check: bool
    # the CUDA device; None (the default): the device of the device-array
    # arguments, device 0 when there are none
    device: Optional[int]
    cache_dir: Optional[str]
    def __new__(cls, **kwargs: Any) -> CompileOptions: ...
    def copy(self) -> CompileOptions: ...

class JitFunction:
    """A function compiled on demand; call it as `f(*args, opts=opts)`."""

    def __new__(cls, f: Callable[..., Any]) -> JitFunction: ...
    def __call__(self, *args: Any, opts: Optional[CompileOptions] = ..., **kwargs: Any) -> Any:
        """A call from Python needs `opts` (without it, or with None, the
        call raises CompileTypeError) and returns None. Inside jit code the
        function is a helper: called without `opts`, it gives what its
        `return` does."""
    @property
    def py_func(self) -> Callable[..., Any]: ...
    @property
    def __wrapped__(self) -> Callable[..., Any]: ...
    @property
    def __name__(self) -> str: ...
    @property
    def parameters(self) -> List[str]: ...
    def cache_size(self) -> int: ...
    def specializations(self) -> List[Dict[str, Any]]: ...

class DeviceMemory:
    """CUDA device memory owned by this object (the storage of
    `parpy.buffer` buffers on the Cuda backend); every copy waits for its
    stream before returning."""
    def __new__(cls, nbytes: int, device: int) -> DeviceMemory: ...
    @property
    def ptr(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def device(self) -> int: ...
    def write(self, offset: int, src: Any) -> None: ...
    def read(self, offset: int, dst: Any) -> None: ...
    def copy_from(self, offset: int, src: DeviceMemory, src_offset: int, nbytes: int) -> None: ...
    def zero(self, offset: int, nbytes: int) -> None: ...
    def dlpack(self, offset: int, shape: List[int], code: int, bits: int) -> Any:
        """A DLPack capsule ("dltensor", kDLCUDA) of a C-contiguous array at `offset`."""

class CompiledFunction:
    """What `compile_string` returns: checks its arguments, then calls the entry."""

    def __call__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def __name__(self) -> str: ...
    @property
    def entry_symbol(self) -> str: ...

def threads(n: int) -> LoopPar: ...
def reduce_marker(n: Optional[int] = None) -> LoopPar: ...
def par(spec: Dict[str, LoopPar]) -> CompileOptions: ...
def print_compiled(
    fun: Callable[..., Any], args: Sequence[Any], opts: Optional[CompileOptions] = None
) -> str: ...
def compile_string(
    fn_name: str, code: str, opts: Optional[CompileOptions] = None
) -> CompiledFunction: ...
def clear_cache() -> None: ...
def _raise_bounds_failure(name: str, code: str, record: List[int]) -> None: ...
def _clear_cache_dir(dir: str) -> int:
    """Removes the complete cache entries of `dir` (nothing else); returns how many files went."""
def set_max_loaded(n: int) -> int: ...
def _loaded_specializations() -> int: ...
def default_cache_dir() -> str: ...
def backend_explain(b: CompileBackend) -> Tuple[bool, str]: ...
def backend_is_enabled(b: CompileBackend) -> bool: ...
def backend_available() -> List[CompileBackend]: ...
def _scalar_sizes(opts: CompileOptions) -> Tuple[Any, Any]:
    """(int, float): the parpy.types element types of Python scalars under `opts`."""

# Cuda runtime helpers (internal; used by the tests and CI without a GPU)
def _cuda_nvrtc_compile(
    code: str, name: str, arch: int = 90, options: Sequence[str] = ...
) -> bytes: ...
def _cuda_nvrtc_version() -> str: ...
def _nvrtc_path() -> Optional[str]: ...
def _cuda_nvrtc_loaded() -> bool: ...
def _cuda_arg_kind(obj: Any) -> Optional[str]: ...
def _cuda_sync() -> None: ...
def cuda_emulator(dir: str, seed: Optional[int]) -> None:
    """Runs the Cuda backend on the CUDA emulator (`seed`), or stops (`None`);
    see parpy._cuda_emu.install."""
def cuda_emulator_headers() -> List[Tuple[str, str]]: ...
def _observe_ns(args: Sequence[Any], n: int) -> Tuple[float, List[int]]:
    """(ns per fast-path reading of all `args`, the key words); internal."""
def _cuda_dry_run(
    fun: Callable[..., Any],
    args: Sequence[Any],
    opts: Optional[CompileOptions] = None,
    arch: int = 90,
    details: bool = False,
) -> Any:
    """(kernel names, [(grid, block)], cubin size); with `details=True` a
    dict: names, launches, clusters, graph_blocker, size."""
