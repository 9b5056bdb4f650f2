//! The Python subset: parse source text (rustpython-parser underneath) into
//! our own AST with spans. Unsupported constructs are rejected here, one
//! diagnostic per occurrence.

pub mod ast;
mod convert;
mod messages;
pub mod webs;

pub use ast::{Expr, ExprKind, FunctionDef, Param, Stmt, StmtKind};

use crate::diag::{self, Diagnostic, SourceFile, Span};
use rustpython_parser::ast as py;
use rustpython_parser::Mode;

/// Parses the single `def` in `file` (possibly inside the `if 1:` wrapper of
/// [`SourceFile::from_function_text`]) into our AST.
pub fn parse_function(file: SourceFile) -> Result<FunctionDef, Vec<Diagnostic>> {
    let text = file.text.clone();
    let path = file.path.clone();
    let id = diag::register_source(file);
    let module = match rustpython_parser::parse(&text, Mode::Module, &path) {
        Ok(m) => m,
        Err(e) => {
            let lo = e.offset.to_u32();
            let hi = (lo + 1).min(text.len() as u32).max(lo);
            return Err(vec![Diagnostic::error(format!(
                "invalid syntax: {}",
                e.error
            ))
            .at(Span::new(id, lo, hi), "here")]);
        }
    };
    let body = match module {
        py::Mod::Module(m) => m.body,
        _ => vec![],
    };
    let mut defs = vec![];
    for s in &body {
        match s {
            py::Stmt::FunctionDef(f) => defs.push(f),
            py::Stmt::If(i) => {
                for s in &i.body {
                    if let py::Stmt::FunctionDef(f) = s {
                        defs.push(f);
                    }
                }
            }
            _ => {}
        }
    }
    match defs.as_slice() {
        [f] => convert::Converter::new(id).function(f).map(|mut def| {
            webs::split(&mut def);
            def
        }),
        [] => Err(vec![Diagnostic::error(
            "expected a function definition (`def`) in the source",
        )
        .at(Span::new(id, 0, 0), "no `def` found")]),
        [_, second, ..] => {
            let r = second.range;
            Err(vec![Diagnostic::error(
                "expected a single function definition",
            )
            .at(
                Span::new(id, r.start().to_u32(), r.end().to_u32()),
                "second `def`",
            )])
        }
    }
}

#[cfg(test)]
mod tests;
