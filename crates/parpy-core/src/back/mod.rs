//! Backends: the shared C-family writer and the dialects. (Placeholder.)

use crate::ir::Program;
use crate::options::Options;
use crate::{CompileError, ParamInfo};

pub struct EmitOutput {
    pub text: String,
    pub entry_symbol: String,
    pub params: Vec<ParamInfo>,
}

pub fn emit(_program: &Program, _options: &Options) -> Result<EmitOutput, CompileError> {
    Err(CompileError::Internal(
        "backends are not written yet".into(),
    ))
}
