//! Name resolution, typing and specialization: syntax AST -> typed IR.
//! (Placeholder: the front end replaces this.)

use crate::ir::Program;
use crate::options::Options;
use crate::resolve::Resolver;
use crate::syntax::FunctionDef;
use crate::{ArgType, CompileError};

pub fn lower(
    _def: &FunctionDef,
    _args: &[ArgType],
    _resolver: &dyn Resolver,
    _options: &Options,
) -> Result<Program, CompileError> {
    Err(CompileError::Internal("sema is not written yet".into()))
}
