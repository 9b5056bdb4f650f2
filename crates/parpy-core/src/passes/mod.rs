//! The pass pipeline, in order. (Placeholder.)

use crate::diag::Diagnostic;
use crate::ir::Program;
use crate::options::Options;
use crate::CompileError;

pub fn run_pipeline(
    program: Program,
    _options: &Options,
    _log: &mut String,
) -> Result<(Program, Vec<Diagnostic>), CompileError> {
    Ok((program, vec![]))
}
