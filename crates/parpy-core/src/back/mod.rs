//! Backends: the shared C-family writer ([`c_writer`]) and one dialect per
//! target ([`c`] today; CUDA and Metal plug into the same writer).
//! Backends never change the IR.

pub mod c;
pub mod c_decls;
pub mod c_names;
pub mod c_writer;
pub mod cuda;
pub mod error;
pub mod metal;

use std::collections::BTreeSet;

use crate::error::CompileError;
use crate::ir::{Block, ExprKind, Function, Place, Program, StmtKind, Type, VarId};
use crate::options::{Backend, Options};
use crate::signature::{ArgType, ParamInfo};
pub use error::EmitError;

pub struct EmitOutput {
    pub text: String,
    pub entry_symbol: String,
    pub params: Vec<ParamInfo>,
    /// GPU backends: the device-only translation unit (prelude, helpers and
    /// kernels; no host code), for in-process compilation (NVRTC).
    pub device_text: Option<String>,
    /// The emitted name of each kernel, by `KernelId` (the symbol in the
    /// device code).
    pub kernel_names: Vec<String>,
}

pub fn emit(program: &Program, options: &Options) -> Result<EmitOutput, CompileError> {
    match options.backend {
        Backend::Cpu => c::emit(program, options),
        Backend::Cuda => cuda::emit(program, options),
        Backend::Metal => metal::emit(program, options),
    }
}

/// What the first line of `backend`'s code calls its target (`// Generated
/// by parpy ... (backend: C with OpenMP)`): the dialect's `target_name`.
pub fn target_name(backend: Backend) -> &'static str {
    use c_writer::Dialect;
    match backend {
        Backend::Cpu => c::CDialect.target_name(),
        Backend::Cuda => cuda::CudaDialect {
            f16: false,
            clusters: false,
        }
        .target_name(),
        Backend::Metal => metal::MetalDialect.target_name(),
    }
}

/// Which parameters (by position) each function may write, directly or
/// through the kernels and helpers it calls.
pub struct Writes {
    pub host: BTreeSet<usize>,
    pub kernels: Vec<BTreeSet<usize>>,
    pub helpers: Vec<BTreeSet<usize>>,
}

impl Writes {
    pub fn of(p: &Program) -> Writes {
        let mut helpers: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); p.helpers.len()];
        // Helpers may call helpers: iterate until nothing changes.
        for _ in 0..=p.helpers.len() {
            let mut changed = false;
            for (i, h) in p.helpers.iter().enumerate() {
                let w = written_params(h, &[], &helpers);
                if w != helpers[i] {
                    helpers[i] = w;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let kernels: Vec<BTreeSet<usize>> = p
            .kernels
            .iter()
            .map(|k| written_params(&k.func, &[], &helpers))
            .collect();
        let host = written_params(&p.host, &kernels, &helpers);
        Writes {
            host,
            kernels,
            helpers,
        }
    }
}

fn written_params(
    f: &Function,
    kernels: &[BTreeSet<usize>],
    helpers: &[BTreeSet<usize>],
) -> BTreeSet<usize> {
    let mut vars = BTreeSet::new();
    written_vars(&f.body, kernels, helpers, &mut vars);
    f.params
        .iter()
        .enumerate()
        .filter(|(_, v)| vars.contains(v))
        .map(|(i, _)| i)
        .collect()
}

fn written_vars(
    b: &Block,
    kernels: &[BTreeSet<usize>],
    helpers: &[BTreeSet<usize>],
    out: &mut BTreeSet<VarId>,
) {
    /// The variables `e` writes (arrays passed to helpers that write them or
    /// to externals, a bounds record a check may fill), through every
    /// sub-expression (`Expr::children`: no kind is missed).
    fn expr(e: &crate::ir::Expr, helpers: &[BTreeSet<usize>], out: &mut BTreeSet<VarId>) {
        match &e.kind {
            ExprKind::Call { func, args } => {
                let w = helpers.get(func.0 as usize);
                for (i, a) in args.iter().enumerate() {
                    if let ExprKind::Var(v) = a.kind {
                        if a.ty.is_array() && w.map(|w| w.contains(&i)).unwrap_or(true) {
                            out.insert(v);
                        }
                    }
                }
            }
            // an external may write any array it gets
            ExprKind::External { args, .. } => out.extend(crate::ir::call_arg_arrays(args)),
            // a failed check writes the record
            ExprKind::CheckIndex { record, .. } => {
                if let Some(ExprKind::Var(v)) = record.as_ref().map(|r| &r.kind) {
                    out.insert(*v);
                }
            }
            _ => {}
        }
        e.children().for_each(|c| expr(c, helpers, out));
    }
    for s in b {
        match &s.kind {
            StmtKind::Assign { dst, value } => {
                match dst {
                    Place::Var(v) => {
                        out.insert(*v);
                    }
                    Place::Index { array, indices } => {
                        out.insert(*array);
                        indices.iter().for_each(|i| expr(i, helpers, out));
                    }
                }
                expr(value, helpers, out);
            }
            StmtKind::For(l) => {
                expr(&l.lo, helpers, out);
                expr(&l.hi, helpers, out);
                written_vars(&l.body, kernels, helpers, out);
            }
            StmtKind::While { cond, body } => {
                expr(cond, helpers, out);
                written_vars(body, kernels, helpers, out);
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                expr(cond, helpers, out);
                written_vars(then_body, kernels, helpers, out);
                written_vars(else_body, kernels, helpers, out);
            }
            StmtKind::Return(Some(e)) | StmtKind::Expr(e) => expr(e, helpers, out),
            StmtKind::Return(None) | StmtKind::Barrier | StmtKind::Break | StmtKind::Continue => {}
            StmtKind::Callback(c) => {
                c.exprs().into_iter().for_each(|e| expr(e, helpers, out));
                out.extend(c.arrays());
            }
            StmtKind::OnDevice(body) => written_vars(body, kernels, helpers, out),
            StmtKind::Launch { kernel, args } => {
                let w = kernels.get(kernel.0 as usize);
                for (i, a) in args.iter().enumerate() {
                    if w.map(|w| w.contains(&i)).unwrap_or(true) {
                        out.insert(*a);
                    }
                }
            }
        }
    }
}

/// The entry parameters with their types, as `compile_string` and the
/// runtime see them.
pub fn param_infos(p: &Program, writes: &Writes) -> Vec<ParamInfo> {
    let record = p.bounds.as_ref().map(|b| b.record);
    p.host
        .params
        .iter()
        .enumerate()
        .filter(|&(_, &v)| Some(v) != record)
        .map(|(i, &v)| {
            let var = p.host.var(v);
            let ty = match &var.ty {
                Type::Array { elem, shape } => ArgType::Array {
                    elem: *elem,
                    shape: shape.clone(),
                },
                Type::Scalar(e) => ArgType::Scalar {
                    elem: *e,
                    value: var.value,
                    weak: false,
                },
                Type::Void => ArgType::Scalar {
                    elem: crate::types::ElemTy::I64,
                    value: None,
                    weak: false,
                },
            };
            ParamInfo {
                name: var.name.clone(),
                ty,
                written: var.ty.is_array() && writes.host.contains(&i),
            }
        })
        .collect()
}

/// The `// parpy-param: ...` text of one parameter (without the prefix).
pub fn param_line(p: &ParamInfo) -> String {
    match &p.ty {
        ArgType::Array { elem, shape } => {
            let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            format!(
                "{} {}[{}]{}",
                p.name,
                elem.short_name(),
                dims.join(","),
                if p.written { " written" } else { "" }
            )
        }
        ArgType::Scalar {
            elem,
            value: Some(v),
            ..
        } => format!("{} {} = {}", p.name, elem.short_name(), v.header_text()),
        ArgType::Scalar { elem, .. } => format!("{} {}", p.name, elem.short_name()),
        // never in an entry: sema gives each leaf of a dict a parameter
        ArgType::Dict(_) => format!("{} dict", p.name),
        ArgType::Unusable(t) => format!("{} {t}", p.name),
    }
}

/// `text` (a user's message, a source line) as the rest of one `//`
/// comment line of generated code, in every C-family language: a backslash
/// is `\\`, a line end `\n` / `\r` (a `//` comment ends at the line's end),
/// a `?` after a `?` is `\?` (no trigraph: `??/` is a backslash to NVRTC,
/// which warns), `*/` is `*\/` (no end of a block comment), and a text that
/// ends in a backslash or a blank gets `\.` (nothing: no line splice, no
/// trimmed blank). [`comment_unescape`] gives `text` back.
pub fn comment_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut prev = '\0';
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '?' if prev == '?' => out.push_str("\\?"),
            '/' if prev == '*' => out.push_str("\\/"),
            c => out.push(c),
        }
        prev = c;
    }
    if out.ends_with(|c: char| c == '\\' || c.is_whitespace()) {
        out.push_str("\\.");
    }
    out
}

/// The text [`comment_escape`] wrote (a backslash before another character
/// than those it writes stays, as hand-written lines may have it).
pub fn comment_unescape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('?') => out.push('?'),
            Some('/') => out.push('/'),
            Some('.') => {}
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod comment_tests {
    use super::{comment_escape, comment_unescape};

    #[test]
    fn comment_text_is_one_safe_line_and_reads_back() {
        for text in [
            "line one\nline two\r\nline three ??/",
            "a ???/ b ??= c */ d /* e",
            "ends in a backslash \\",
            "ends in blanks  ",
            "\\n is not a newline",
            "",
        ] {
            let line = comment_escape(text);
            assert!(!line.contains(['\n', '\r']), "{line}");
            assert!(!line.contains("??") && !line.contains("*/"), "{line}");
            assert!(!line.ends_with(|c: char| c == '\\' || c.is_whitespace()));
            assert_eq!(comment_unescape(&line), text);
        }
        assert_eq!(comment_escape("x ??/"), "x ?\\?/");
        // hand-written text keeps a backslash it does not escape
        assert_eq!(comment_unescape("C:\\temp"), "C:\\temp");
    }
}
