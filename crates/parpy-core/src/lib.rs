//! parpy-core: the compiler. Pure Rust, no Python objects.
//!
//! Pipeline (see ARCHITECTURE.md):
//!
//! ```text
//! source text --syntax::parse_function--> syntax::FunctionDef (at decoration)
//!   --sema::lower--> ir::Program (typed, specialized on the argument types)
//!   --passes::run_pipeline--> ir::Program (scheduled, reductions, kernels)
//!   --back::emit--> generated source text for the backend
//! ```
//!
//! This file only declares the modules and re-exports the public API; the
//! layer order they keep is in ARCHITECTURE.md ("Layers").

pub mod back;
pub mod diag;
pub mod driver;
pub mod error;
pub mod ir;
pub mod ops;
pub mod options;
pub mod passes;
pub mod resolve;
pub mod schedule;
pub mod sema;
pub mod signature;
pub mod syntax;
pub mod types;

pub use diag::{Diagnostic, SourceFile, Span};
pub use driver::{compile, parse_function, CompileOutput};
pub use error::{catch_internal, catch_panic, CompileError};
pub use options::{Backend, Options, ParSpec, VERSION};
pub use resolve::{
    math_module_builtin, numpy_allocates, numpy_builtin, AnnElem, Builtin, PermuteFn, Resolved,
    Resolver, StaticResolver,
};
pub use signature::{ArgType, ExtDecl, ExtDim, ExtParam, ExtTarget, ParamInfo};
pub use types::{ElemTy, ScalarValue};
