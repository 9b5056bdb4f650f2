//! Calls of `parpy.external` functions: the arguments checked against the
//! declaration given in Python (element types, ranks, fixed and symbolic
//! sizes), the declaration of the backend compiled for recorded in
//! `Program::externals`, an `ExprKind::External` of the declared type.

use std::collections::BTreeMap;

use crate::diag::{Diagnostic, Span};
use crate::ir::{CallArg, Expr, ExprKind, Type};
use crate::options::Backend;
use crate::signature::{ExtDecl, ExtDim, ExtParam};
use crate::syntax::ast;
use crate::types::ElemTy;

use super::{Lowerer, TExpr};

impl Lowerer<'_, '_> {
    pub(super) fn external_call(
        &mut self,
        name: &str,
        decls: &[(Backend, ExtDecl)],
        args: &[ast::Expr],
        span: Span,
    ) -> Option<TExpr> {
        let backend = self.opts.backend;
        let Some((_, decl)) = decls.iter().find(|(b, _)| *b == backend) else {
            let declared: Vec<&str> = decls.iter().map(|(b, _)| b.name()).collect();
            self.error(
                // ParPy's words first ("Call to unknown function"); a
                // TypeError there, as here (the function has no declaration
                // of the kind this backend needs)
                Diagnostic::error(format!(
                    "Call to unknown function `{name}` on the {} backend: `{name}` is an \
                     external function for {}, not for the {} backend",
                    backend.name(),
                    declared.join(" and "),
                    backend.name()
                ))
                .at(span, "no declaration for this backend")
                .type_error()
                .help(format!(
                    "declare it for {} too: @parpy.external(\"...\", parpy.CompileBackend.{}, ...)",
                    backend.name(),
                    backend.name()
                )),
            );
            return None;
        };
        if let (Some(n), Backend::Cpu) = (decl.threads, backend) {
            // GPU backends: passes::gpu_cooperative_externals
            self.error(
                Diagnostic::error(format!(
                    "the external `{name}` is declared with parallelize=parpy.threads({n}) for \
                     the Cpu backend, where one thread calls an external function"
                ))
                .at(span, "called here")
                .help(
                    "declare the Cpu function without parallelize= (threads that call a \
                       function together are a GPU notion)",
                ),
            );
            return None;
        }
        if args.len() != decl.params.len() {
            let n = decl.params.len();
            self.error(
                Diagnostic::error(format!(
                    "the external `{name}` takes {n} argument{} but {} were given",
                    if n == 1 { "" } else { "s" },
                    args.len()
                ))
                .at(span, "wrong number of arguments"),
            );
            return None;
        }
        let mut out = vec![];
        let mut symbols: BTreeMap<u64, (i64, String)> = BTreeMap::new();
        let mut ok = true;
        for ((pname, p), a) in decl.params.iter().zip(args) {
            match self.external_arg(name, pname, p, a, &mut symbols) {
                Some(x) => out.push(x),
                None => ok = false,
            }
        }
        if !ok {
            return None;
        }
        let ext = match self.sh.externals.iter().position(|d| d == decl) {
            Some(i) => i,
            None => {
                self.sh.externals.push(decl.clone());
                self.sh.externals.len() - 1
            }
        } as u32;
        let ty = decl.ret.map_or(Type::Void, Type::Scalar);
        Some(TExpr {
            e: Expr::new(ExprKind::External { ext, args: out }, ty, span),
            weak: false,
        })
    }

    fn external_arg(
        &mut self,
        name: &str,
        pname: &str,
        p: &ExtParam,
        a: &ast::Expr,
        symbols: &mut BTreeMap<u64, (i64, String)>,
    ) -> Option<CallArg> {
        let mismatch = |found: String, want: String| {
            Diagnostic::error(format!(
                "argument `{pname}` of the external `{name}` is {found}, but its declaration says {want}"
            ))
            .at(a.span, format!("this is {found}"))
        };
        match p {
            ExtParam::Scalar(want) => {
                if self.array_or_alias_arg(a).is_some() || self.row_view(a).is_some() {
                    self.error(mismatch("an array".into(), want.numpy_name().into()));
                    return None;
                }
                let t = self.lower_expr(a)?;
                let have = self.scalar_elem(&t)?;
                if have == *want {
                    return Some(CallArg::Scalar(t.e));
                }
                // a Python literal or scalar adapts within its kind
                let fits = t.weak
                    && (want.is_float()
                        || (have.is_int() && want.is_int())
                        || have == ElemTy::Bool);
                if !fits {
                    self.error(mismatch(have.numpy_name().into(), want.numpy_name().into()));
                    return None;
                }
                Some(CallArg::Scalar(super::types::convert(t.e, *want)))
            }
            ExtParam::Array { elem, dims } => {
                let (array, prefix) = if let Some((v, _)) = self.array_arg(a) {
                    (v, vec![])
                } else if let Some((v, idx)) = self.row_view(a) {
                    (v, self.view_prefix(v, idx)?)
                } else {
                    let found = if matches!(a.kind, ast::ExprKind::Subscript { .. }) {
                        "a slice or an element"
                    } else {
                        "a scalar"
                    };
                    self.error(
                        mismatch(found.into(), format!("an array of {}", elem.numpy_name()))
                            .help("pass an array or a row `a[i]`"),
                    );
                    return None;
                };
                if self.alias_of(array).is_some() {
                    self.error(
                        Diagnostic::error(format!(
                            "argument `{pname}` of the external `{name}` is a name re-bound to several arrays"
                        ))
                        .at(a.span, "pass the array itself"),
                    );
                    return None;
                }
                let Type::Array { elem: have, shape } = self.func.var(array).ty.clone() else {
                    return None;
                };
                let shape = &shape[prefix.len()..];
                let show = |e: ElemTy, s: &[i64]| {
                    let d: Vec<String> = s.iter().map(|d| d.to_string()).collect();
                    format!("{}[{}]", e.numpy_name(), d.join(", "))
                };
                let want_dims: Vec<String> = dims
                    .iter()
                    .map(|d| match d {
                        ExtDim::Fixed(n) => n.to_string(),
                        ExtDim::Symbol(_) => "_".into(),
                    })
                    .collect();
                let want = format!("{}[{}]", elem.numpy_name(), want_dims.join(", "));
                if have != *elem || shape.len() != dims.len() {
                    self.error(mismatch(show(have, shape), want));
                    return None;
                }
                for (k, (d, &n)) in dims.iter().zip(shape).enumerate() {
                    match d {
                        ExtDim::Fixed(m) if *m != n => {
                            self.error(mismatch(show(have, shape), want));
                            return None;
                        }
                        ExtDim::Symbol(id) => {
                            let (m, first) = symbols
                                .entry(*id)
                                .or_insert((n, format!("dimension {k} of `{pname}`")))
                                .clone();
                            if m != n {
                                self.error(
                                    Diagnostic::error(format!(
                                        "dimension {k} of argument `{pname}` of the external `{name}` is {n}, but the same shape symbol is {m} in {first}"
                                    ))
                                    .at(a.span, format!("this is {}", show(have, shape))),
                                );
                                return None;
                            }
                        }
                        _ => {}
                    }
                }
                Some(CallArg::Array { array, prefix })
            }
        }
    }
}
