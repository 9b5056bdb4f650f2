//! `np.concatenate((a, b, ...))` (along axis 0), `np.hstack` of 1-D parts
//! and `np.append(a, v)` of a 1-D `a`: NumPy's new array, made by the slice
//! assignment of its parts, each into its run of the target (`y[i, :] =
//! np.concatenate((s[4:], s[:4]))` is `y[i, :][0:4] = s[4:]` then
//! `y[i, :][4:8] = s[:4]`). A part that reads the target's array is
//! concatenated into a local array first, then copied, as NumPy makes the
//! whole new array before it stores it. Read anywhere else, `hoist.rs`
//! names it first (a local array). Its type is NumPy's: the parts' types
//! promoted, a list of Python floats float64.

use crate::diag::{Diagnostic, Span};
use crate::ir::{ElemTy, Stmt};
use crate::resolve::Resolved;
use crate::syntax::ast::{self, Expr, ExprKind};

use super::types::promote_strong;
use super::Lowerer;

impl Lowerer<'_, '_> {
    /// The parts of `np.concatenate(parts)`, `np.hstack(parts)` and
    /// `np.append(a, v)` (`[a, v]`, a number `v` as the list `[v]`); `None`
    /// for other values.
    pub(super) fn concatenation_of(&self, e: &Expr) -> Option<Vec<Expr>> {
        let ExprKind::Call { func, args, .. } = &e.kind else {
            return None;
        };
        let path = func.dotted_path().filter(|_| !self.is_local_root(func))?;
        let Resolved::Allocates(what) = self.resolve_path(&path) else {
            return None;
        };
        let what = match what.as_str() {
            "numpy.concatenate" => "concatenate",
            "numpy.hstack" => "hstack",
            "numpy.append" => "append",
            _ => return None,
        };
        match (what, args.as_slice()) {
            ("append", [a, v]) => {
                let v = match self.rank(v) {
                    0 => ast::Expr::list(vec![v.clone()], v.span),
                    _ => v.clone(),
                };
                Some(vec![a.clone(), v])
            }
            (_, [parts, ..]) => match (&parts.kind, parts.list_items()) {
                (ExprKind::Tuple(items), _) => Some(items.clone()),
                (_, Some(items)) => Some(items.to_vec()),
                _ => None,
            },
            _ => None,
        }
    }

    /// The shape and NumPy's element type of the concatenation of
    /// `parts`; `None` after an error.
    pub(super) fn concatenation_type(
        &mut self,
        value: &Expr,
        parts: &[Expr],
    ) -> Option<(Vec<i64>, ElemTy)> {
        self.concatenation_args(value)?;
        let mut shape: Option<Vec<i64>> = None;
        let mut elem: Option<ElemTy> = None;
        for p in parts {
            let (s, e) = self.shape_of(p, "a part of `np.concatenate`")?;
            elem = Some(elem.map_or(e, |t| promote_strong(t, e)));
            shape = match shape {
                None => Some(s),
                Some(mut all) if all.len() == s.len() && all[1..] == s[1..] => {
                    all[0] += s[0];
                    Some(all)
                }
                Some(all) => {
                    self.error(
                        Diagnostic::error("the parts of `np.concatenate` do not fit together")
                            .at(
                                p.span,
                                format!("shape {}", super::local_arrays::shape_text(&s)),
                            )
                            .note(format!(
                                "the parts before have the shape {} but along the first axis",
                                super::local_arrays::shape_text(&all)
                            ))
                            .note(
                                "NumPy raises ValueError: all dimensions but the first must match",
                            )
                            .type_error(),
                    );
                    return None;
                }
            };
        }
        Some((shape?, elem?))
    }

    /// NumPy's arguments of the concatenation other than its parts, as far
    /// as parpy supports them (axis 0, no `dtype` or `out`): `None` after
    /// an error.
    fn concatenation_args(&mut self, value: &Expr) -> Option<()> {
        let ExprKind::Call {
            func,
            args,
            keywords,
        } = &value.kind
        else {
            return Some(());
        };
        let name = func
            .dotted_path()
            .map_or_else(|| "np.concatenate".into(), |p| p.join("."));
        let axis_zero = |e: &Expr| matches!(e.kind, ExprKind::Int(0));
        let extra_ok = name.ends_with("append") || args.iter().skip(1).all(axis_zero);
        let kw_ok = keywords
            .iter()
            .all(|k| k.name == "axis" && axis_zero(&k.value));
        if extra_ok && kw_ok {
            return Some(());
        }
        self.error(
            Diagnostic::error(format!(
                "`{name}` joins along the first axis only in parpy functions"
            ))
            .at(value.span, "another axis or a keyword")
            .help("join rows of one dimension, or write each part into its slice of the target"),
        );
        None
    }

    /// `target[...] = <the concatenation of parts>` (see the module doc).
    pub(super) fn concatenate_assign(
        &mut self,
        target: &Expr,
        value: &Expr,
        parts: &[Expr],
        labels: &[(String, Span)],
        span: Span,
    ) -> Option<Vec<Stmt>> {
        let (shape, elem) = self.concatenation_type(value, parts)?;
        let base = super::expr::flatten_subscript(target).0;
        let reads_target = match &base.kind {
            ExprKind::Name(b) => parts
                .iter()
                .any(|p| self.names_read(p).0.iter().any(|n| n == b)),
            _ => true,
        };
        if !reads_target {
            return self.parts_into(target, parts, labels, span);
        }
        // into a local array first, then copied
        let hidden = format!("concatenated@{}", value.span.lo);
        self.declare_local(
            &hidden,
            (&shape, elem),
            "`np.concatenate`",
            value.span,
            span,
        )?;
        let whole = ast::Expr {
            kind: ExprKind::Subscript {
                value: Box::new(ast::Expr::name(&hidden, value.span)),
                indices: vec![ast::Expr::full_slice(value.span); shape.len()],
            },
            span: value.span,
        };
        let mut out = self.parts_into(&whole, parts, &[], span)?;
        out.extend(self.slice_assign(
            target,
            &ast::Expr::name(&hidden, value.span),
            labels,
            span,
        )?);
        Some(out)
    }

    /// Each part stored into its run of `target`'s first sliced dimension.
    fn parts_into(
        &mut self,
        target: &Expr,
        parts: &[Expr],
        labels: &[(String, Span)],
        span: Span,
    ) -> Option<Vec<Stmt>> {
        let mut out = vec![];
        let mut at = 0;
        for p in parts {
            let (s, _) = self.shape_of(p, "a part of `np.concatenate`")?;
            let run = ast::Expr {
                kind: ExprKind::Slice {
                    lo: Some(Box::new(ast::Expr::int(at, p.span))),
                    hi: Some(Box::new(ast::Expr::int(at + s[0], p.span))),
                    step: None,
                },
                span: p.span,
            };
            let into = ast::Expr {
                kind: ExprKind::Subscript {
                    value: Box::new(target.clone()),
                    indices: vec![run],
                },
                span: target.span,
            };
            out.extend(self.slice_assign(&into, p, labels, span)?);
            at += s[0];
        }
        Some(out)
    }
}
