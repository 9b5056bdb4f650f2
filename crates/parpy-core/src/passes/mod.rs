//! The pass pipeline, in order. (Being written.)

use crate::diag::Diagnostic;
use crate::ir::Program;
use crate::options::Options;
use crate::CompileError;

#[cfg(test)]
pub(crate) mod testutil;

pub fn run_pipeline(
    program: Program,
    _options: &Options,
    _log: &mut String,
) -> Result<(Program, Vec<Diagnostic>), CompileError> {
    Ok((program, vec![]))
}
