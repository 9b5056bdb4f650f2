//! Compile options as the core sees them (the binding converts
//! `parpy.CompileOptions` into this).

use std::collections::BTreeMap;

use crate::types::ElemTy;

/// The compiler version, baked into cache keys and generated file headers.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Backend {
    Cpu,
    Cuda,
    Metal,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "Cpu",
            Backend::Cuda => "Cuda",
            Backend::Metal => "Metal",
        }
    }

    /// The element types whose array elements `parpy.atomic.*` updates:
    /// the C backend takes every number type (GCC/Clang `__atomic`
    /// builtins); CUDA the 32- and 64-bit ones (`atomicAdd`, `atomicMax`,
    /// `atomicCAS`); Metal `int32`, `uint32` and `float32` (its atomic
    /// types).
    pub fn supports_atomic(self, t: ElemTy) -> bool {
        use ElemTy::*;
        match self {
            Backend::Cpu => t != Bool,
            Backend::Cuda => matches!(t, I32 | I64 | U32 | U64 | F32 | F64),
            Backend::Metal => matches!(t, I32 | U32 | F32),
        }
    }
}

/// The parallelism requested for one label: `parpy.threads(n)` with its
/// modifiers.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct ParSpec {
    pub threads: i64,
    /// Threads per block; `None` means the backend default (1024 on CUDA).
    pub tpb: Option<i64>,
    /// `par_reduction()` (or the older `reduce()`): a manual reduction loop.
    pub reduction: bool,
}

/// The largest block of threads a GPU backend launches (CUDA's and Metal's
/// limit): `.tpb(n)` takes at most this many.
pub const MAX_THREADS_PER_BLOCK: i64 = 1024;

/// The largest thread block cluster CUDA has (a non-portable size, 16 on
/// sm_90; 8 is portable): `max_thread_blocks_per_cluster` is at most this.
pub const MAX_CLUSTER_BLOCKS: i64 = 16;

/// Everything about a compilation that is not the program or its arguments.
#[derive(Clone, PartialEq, Debug)]
pub struct Options {
    pub backend: Backend,
    /// Label -> parallelism. A `BTreeMap` so iteration is deterministic.
    pub parallelize: BTreeMap<String, ParSpec>,
    /// Substitute scalar argument values into the code (default true).
    pub specialize_scalars: bool,
    /// Python `int` arguments become this type (default I64).
    pub int_type: ElemTy,
    /// Python `float` arguments and float literals without context become this
    /// type (default F64).
    pub float_type: ElemTy,
    pub max_unroll_count: i64,
    /// Print the IR after each pass to stderr (with timings).
    pub debug_print: bool,
    pub use_cuda_thread_block_clusters: bool,
    /// At most [`MAX_CLUSTER_BLOCKS`] (a power of two).
    pub max_thread_blocks_per_cluster: i64,
    pub use_cuda_graphs: bool,
    /// Check at run time the array indices not proven in range
    /// (`passes::check_bounds`; default true).
    pub bounds_check: bool,
    /// The names (in the entry function's scope) of the shape symbols its
    /// parameter annotations bind: a `for` loop whose bounds, or a slice
    /// assignment whose sides, read one of them gets a label of that name
    /// (ParPy's implicit shape labels; empty: none).
    pub implicit_labels: Vec<String>,
    /// `(j, k)`, `k < j`: argument `j` is the same array as argument `k`
    /// (`f(x, x)`). Sema binds parameter `j`'s name to `k`'s array, so the
    /// function reads and writes one array under both names, as Python
    /// does, and the entry has no parameter `j`.
    pub same_arrays: Vec<(usize, usize)>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            backend: Backend::Cpu,
            parallelize: BTreeMap::new(),
            specialize_scalars: true,
            int_type: ElemTy::I64,
            float_type: ElemTy::F64,
            max_unroll_count: 16,
            debug_print: false,
            use_cuda_thread_block_clusters: false,
            max_thread_blocks_per_cluster: 8,
            use_cuda_graphs: false,
            bounds_check: true,
            implicit_labels: vec![],
            same_arrays: vec![],
        }
    }
}
