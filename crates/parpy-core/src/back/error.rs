//! The back layer's error: what can go wrong while printing code.

use crate::diag::Diagnostic;
use crate::error::CompileError;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmitError {
    /// The program asks for something the target cannot express (a math
    /// function a target lacks for an element type, ...): the user's
    /// program, reported as a compile error.
    #[error("{0}")]
    Unsupported(String),
    /// A broken invariant of the IR reached the writer: a bug in parpy.
    #[error("{0}")]
    Invariant(String),
}

/// Plain messages are broken invariants (`.ok_or("no open block")?`).
impl From<String> for EmitError {
    fn from(m: String) -> Self {
        EmitError::Invariant(m)
    }
}

impl From<&str> for EmitError {
    fn from(m: &str) -> Self {
        EmitError::Invariant(m.to_string())
    }
}

impl From<EmitError> for CompileError {
    fn from(e: EmitError) -> Self {
        match e {
            EmitError::Unsupported(m) => CompileError::User(vec![Diagnostic::error(m)]),
            EmitError::Invariant(m) => CompileError::Internal(m),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsupported_is_the_users_error_and_invariants_are_bugs() {
        let e: CompileError = EmitError::Unsupported("`erf` on f16".into()).into();
        assert!(matches!(&e, CompileError::User(d) if d.len() == 1));
        assert!(!e.to_string().contains("a bug in parpy"), "{e}");
        let e: CompileError = EmitError::from("no open block").into();
        assert!(matches!(&e, CompileError::Internal(m) if m == "no open block"));
        assert!(e.to_string().contains("a bug in parpy"), "{e}");
    }
}
