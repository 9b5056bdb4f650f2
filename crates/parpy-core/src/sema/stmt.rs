//! Statements: parameters, blocks with `parpy.label` handling, assignments
//! (locals, array elements, slice statements), loops, conditionals,
//! `with parpy.gpu:`, returns and expression statements.

use std::collections::BTreeMap;

use crate::diag::{Diagnostic, Span};
use crate::ir::{self, Block, ElemTy, ExprKind, ForLoop, Place, StmtKind, Type, VarKind};
use crate::resolve::{Builtin, Resolved};
use crate::signature::ArgType;
use crate::syntax::ast;
use crate::ScalarValue;

use super::expr::Sub;
use super::permute::Axes;
use super::scope::Binding;
use super::slices::IndexSlot;
use super::types::{const_bool, const_int, convert, promote, widens};
use super::{Lowerer, TExpr};

/// The value of an assignment: still to be lowered, or lowered already
/// (`None` after an error in it).
pub(super) enum Value<'e> {
    Ast(&'e ast::Expr),
    Lowered(Option<TExpr>),
}

/// Does this target contain a slice (or is an under-indexed array)?
fn has_slice(e: &ast::Expr) -> bool {
    match &e.kind {
        ast::ExprKind::Subscript { value, indices } => {
            indices
                .iter()
                .any(|i| matches!(i.kind, ast::ExprKind::Slice { .. }))
                || has_slice(value)
        }
        _ => false,
    }
}

fn subscript_depth(e: &ast::Expr) -> (Option<&str>, usize) {
    match &e.kind {
        ast::ExprKind::Subscript { value, indices } => {
            let (n, d) = subscript_depth(value);
            (n, d + indices.len())
        }
        ast::ExprKind::Name(n) => (Some(n.as_str()), 0),
        _ => (None, 0),
    }
}

/// Converts the value of every `return e` in `block` to `ty`.
/// Converts every returned value of `block` to `ty`; a literal that `ty`
/// does not hold exactly (a Python number returned where another path
/// returns a NumPy value: Python returns each as it is) goes into
/// `inexact` with its span.
/// Whether a statement of `body` (or of a block inside it) assigns the
/// name `var` (`var = ...`, `a, var = ...`, `var += ...`).
fn assigns_name(body: &[ast::Stmt], var: &str) -> bool {
    fn names(t: &ast::Expr, var: &str) -> bool {
        match &t.kind {
            ast::ExprKind::Name(n) => n == var,
            ast::ExprKind::Tuple(ts) => ts.iter().any(|t| names(t, var)),
            _ => false,
        }
    }
    let mut found = false;
    ast::for_each_stmt(body, &mut |s| match &s.kind {
        ast::StmtKind::Assign { targets, .. } => found |= targets.iter().any(|t| names(t, var)),
        ast::StmtKind::AugAssign { target, .. } => found |= names(target, var),
        _ => {}
    });
    found
}

/// A `range` step that is not a non-zero constant when compiling.
fn non_constant_step(at: Span) -> Diagnostic {
    Diagnostic::error("the step of `range` must be a non-zero integer constant")
        .at(at, "not a non-zero constant")
        .note("the step's sign decides how the loop runs, so parpy needs its value when compiling")
        .help("a step passed as an argument is one while the call specializes on its value (`specialize_scalars = True`, the default)")
}

fn convert_returns(block: &mut Block, ty: ElemTy, inexact: &mut Vec<Span>) {
    for s in block.iter_mut() {
        match &mut s.kind {
            StmtKind::Return(Some(e)) => {
                // (the rule of a local's store: a Python int an integer
                // type cannot hold is an error, a Python number is
                // otherwise converted, a float rounded)
                if matches!(e.kind, ExprKind::Int(c) if !super::assign::python_int_held(c.into(), ty))
                {
                    inexact.push(e.span);
                }
                // (a Python float a float16/32 would make another number:
                // `return 1e300` beside `return x32[i]`; `0.1` is rounded)
                if matches!(e.kind, ExprKind::Float(f) if super::types::float_changed_by(f, ty)) {
                    inexact.push(e.span);
                }
                let v = std::mem::replace(e, ir::Expr::int(0, ty, s.span));
                *e = convert(v, ty);
            }
            StmtKind::For(l) => convert_returns(&mut l.body, ty, inexact),
            StmtKind::While { body, .. } | StmtKind::OnDevice(body) => {
                convert_returns(body, ty, inexact)
            }
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                convert_returns(then_body, ty, inexact);
                convert_returns(else_body, ty, inexact);
            }
            _ => {}
        }
    }
}

/// What a call passes for a parameter, as a `parpy.types.buffer`
/// annotation is checked against it.
pub(super) enum Passed<'s> {
    Array(ElemTy, &'s [i64]),
    Scalar(ElemTy),
}

/// The annotation as written (`parpy.types.buffer(parpy.types.F32, [N])`),
/// from the parameter's source text.
fn annotation_text(p: &ast::Param) -> String {
    crate::diag::source(p.span.file)
        .and_then(|f| {
            let text = f.text.get(p.span.lo as usize..p.span.hi as usize)?;
            Some(text.split_once(':')?.1.trim().to_string())
        })
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| "parpy.types.buffer(...)".to_string())
}

/// A parameter annotated `parpy.types.buffer(T, [dims])` (`Resolved::Buffer`
/// for the path `[ANNOTATION, param]`) checked against what one call passes:
/// an array of that element type (a type variable binds to the first one it
/// meets, `type_vars`), rank and fixed sizes, and one size per shape symbol
/// over all the parameters of the call (`syms`: symbol -> its size and the
/// parameter that fixed it). The type error, if any (without its labels).
pub(super) fn buffer_annotation_error(
    resolver: &dyn crate::resolve::Resolver,
    p: &ast::Param,
    passed: Passed<'_>,
    syms: &mut BTreeMap<u64, (i64, String)>,
    type_vars: &mut BTreeMap<u64, ElemTy>,
) -> Option<Diagnostic> {
    use crate::resolve::AnnElem;
    use crate::signature::ExtDim;
    let Resolved::Buffer {
        elem: ann_elem,
        dims,
    } = resolver.resolve(&[crate::resolve::ANNOTATION, p.name.as_str()])
    else {
        return None;
    };
    let (elem, shape, found) = match passed {
        Passed::Array(elem, shape) => {
            let d: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            (
                elem,
                shape,
                format!("{}[{}] (an array)", elem.numpy_name(), d.join(", ")),
            )
        }
        Passed::Scalar(elem) => (elem, &[][..], format!("{} (a scalar)", elem.numpy_name())),
    };
    let why: Option<String> = if matches!(passed, Passed::Scalar(_)) {
        Some("the annotation is an array's, and the argument is a scalar".to_string())
    } else if dims.len() != shape.len() {
        Some(format!(
            "the annotation has {} dimension{}, the argument {}",
            dims.len(),
            if dims.len() == 1 { "" } else { "s" },
            shape.len()
        ))
    } else {
        let elem_why = match ann_elem {
            AnnElem::Dtype(t) if t != elem => Some(format!(
                "the annotation's element type is {}",
                t.numpy_name()
            )),
            AnnElem::Dtype(_) => None,
            AnnElem::TypeVar(id) => match type_vars.get(&id) {
                Some(t) if *t != elem => Some(format!(
                    "its element type variable is {} from an earlier parameter",
                    t.numpy_name()
                )),
                Some(_) => None,
                None => {
                    type_vars.insert(id, elem);
                    None
                }
            },
        };
        elem_why.or_else(|| {
            dims.iter()
                .zip(shape)
                .enumerate()
                .find_map(|(k, (d, &n))| match *d {
                    ExtDim::Fixed(m) if m != n => Some(format!(
                        "dimension {k} of the argument is {n}, the annotation says {m}"
                    )),
                    ExtDim::Fixed(_) => None,
                    ExtDim::Symbol(id) => match syms.get(&id) {
                        Some((m, first)) if *m != n => Some(format!(
                            "dimension {k} of the argument is {n}, but the same shape symbol is \
                         {m} in parameter `{first}`"
                        )),
                        Some(_) => None,
                        None => {
                            syms.insert(id, (n, p.name.clone()));
                            None
                        }
                    },
                })
        })
    };
    let why = why?;
    Some(
        Diagnostic::error(format!(
            "Parameter {} was annotated with type {} which is incompatible with argument \
             type {found}",
            p.name,
            annotation_text(p)
        ))
        .note(why)
        .type_error(),
    )
}

/// A loop target bound to its value at the loop's hidden index.
type TargetValue = ((String, Span), ast::Expr);

impl Lowerer<'_, '_> {
    pub(super) fn bind_param(&mut self, p: &ast::Param, a: &ArgType, weak_arg: bool) {
        let annotated = match &p.annotation {
            Some(ann) => self.check_annotation(p, ann, a, weak_arg),
            None => None,
        };
        let passed = match a {
            ArgType::Array { elem, shape } => Some(Passed::Array(*elem, shape)),
            ArgType::Scalar { elem, .. } => Some(Passed::Scalar(*elem)),
            ArgType::Dict(_) | ArgType::Unusable(_) => None,
        };
        if let Some(passed) = passed.filter(|_| p.annotation.is_none()) {
            let mut syms = std::mem::take(&mut self.shape_syms);
            let mut type_vars = std::mem::take(&mut self.type_vars);
            let e = buffer_annotation_error(self.resolver, p, passed, &mut syms, &mut type_vars);
            self.shape_syms = syms;
            self.type_vars = type_vars;
            if let Some(d) = e {
                self.error(d.at(p.span, "annotation"));
            }
        }
        let (ty, value, weak) = match a {
            ArgType::Array { elem, shape } => (
                Type::Array {
                    elem: *elem,
                    shape: shape.clone(),
                },
                None,
                false,
            ),
            // an int annotated with another int type takes that type
            ArgType::Scalar { value, .. } if annotated.is_some() => (
                Type::Scalar(annotated.unwrap_or(ElemTy::I64)),
                *value,
                false,
            ),
            ArgType::Scalar { elem, value, .. } => (Type::Scalar(*elem), *value, weak_arg),
            // `sema::dicts` flattened every dict before the parameters are
            // bound (and left out the entries it cannot take)
            ArgType::Dict(_) | ArgType::Unusable(_) => {
                self.error(Diagnostic::error(format!(
                    "internal: the dict parameter `{}` was not flattened",
                    p.name
                )));
                return;
            }
        };
        // indices are computed in the int type: with force_int_size=32 it
        // must reach every position of a dimension (the writer computes the
        // flat offset in 64 bits)
        if let (ArgType::Array { shape, .. }, ElemTy::I32) = (a, self.opts.int_type) {
            if let Some(d) = shape.iter().find(|&&d| d - 1 > i32::MAX as i64) {
                self.error(
                    Diagnostic::error(format!(
                        "parameter `{}` has a dimension of {d} elements, more than the 32-bit \
                         integers of force_int_size=32 can index",
                        p.name
                    ))
                    .at(p.span, "too large for the index type")
                    .help("leave force_int_size unset (64-bit indices), or pass a smaller array"),
                );
            }
        }
        let var = self.func.add_var(ir::Var {
            name: p.name.clone(),
            ty,
            kind: VarKind::Param,
            value,
            span: p.span,
        });
        self.func.params.push(var);
        self.scope.params.push(p.name.clone());
        self.scope.bind(&p.name, Binding { var, weak });
    }

    /// Checks a parameter annotation that names a type (`int`, `float`,
    /// `parpy.types.F32`, `np.float32`) against the argument (a mismatch
    /// is a type error). An integer scalar annotated with another integer
    /// type is converted to it (`n: parpy.types.I32` given a Python int):
    /// the returned type. Other annotations are ignored.
    fn check_annotation(
        &mut self,
        p: &ast::Param,
        ann: &ast::Expr,
        a: &ArgType,
        weak_arg: bool,
    ) -> Option<ElemTy> {
        if self.is_local_value(ann) {
            return None;
        }
        let path = ann.dotted_path()?;
        let (elem, found) = match a {
            ArgType::Array { elem, shape } => {
                let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
                (
                    *elem,
                    format!("{}[{}] (an array)", elem.numpy_name(), dims.join(", ")),
                )
            }
            ArgType::Scalar { elem, .. } => (*elem, format!("{} (a scalar)", elem.numpy_name())),
            ArgType::Dict(_) | ArgType::Unusable(_) => return None,
        };
        let is_array = matches!(a, ArgType::Array { .. });
        let mut converted = None;
        let mut note = None;
        let by_param = self
            .resolver
            .resolve(&[crate::resolve::ANNOTATION, p.name.as_str()]);
        let resolved = match by_param {
            Resolved::NotFound => self.resolver.resolve(&path),
            r => r,
        };
        let dtype_for_array = is_array && matches!(resolved, Resolved::Dtype(_));
        let mismatch = match resolved {
            // a type variable: the first parameter it annotates binds it (a
            // weak literal adapts to it), the others must agree
            Resolved::TypeVar(_) if weak_arg => false,
            Resolved::TypeVar(id) => match self.type_vars.get(&id) {
                Some(t) if *t != elem => {
                    note = Some(format!(
                        "`{}` is {} from an earlier parameter",
                        path.join("."),
                        t.numpy_name()
                    ));
                    true
                }
                Some(_) => false,
                None => {
                    self.type_vars.insert(id, elem);
                    false
                }
            },
            Resolved::Builtin(Builtin::Int) => is_array || !(elem.is_int() || elem == ElemTy::Bool),
            Resolved::Builtin(Builtin::Float) => is_array || elem == ElemTy::Bool,
            // an element type annotates a scalar: an array (even of that
            // element type) is a mismatch
            Resolved::Dtype(t) if t == elem => is_array,
            Resolved::Dtype(t) if !is_array && t.is_int() && elem.is_int() => {
                converted = Some(t);
                // (a uint64's value is its bits: a Python int of 2**63 ..
                // 2**64 - 1 too; one not known here is checked at the call,
                // the binding's `narrow_ints`)
                let fits = match a {
                    ArgType::Scalar {
                        value: Some(ScalarValue::Int(v)),
                        ..
                    } => {
                        let v = match elem {
                            ElemTy::U64 => *v as u64 as i128,
                            _ => *v as i128,
                        };
                        t.int_range().is_some_and(|(lo, hi)| (lo..=hi).contains(&v))
                    }
                    _ => true,
                };
                if !fits {
                    note = Some(format!("the value does not fit in {}", t.numpy_name()));
                }
                !fits
            }
            // a Python float (or a float64 scalar) for a `F32` parameter
            // becomes that type, as ParPy converts it (as for ints)
            Resolved::Dtype(t) if !is_array && t.is_float() && elem.is_float() => {
                converted = Some(t);
                false
            }
            Resolved::Dtype(_) => true,
            _ => false,
        };
        if mismatch {
            let mut d = Diagnostic::error(format!(
                "Parameter {} was annotated with type {} which is incompatible with \
                 argument type {found}",
                p.name,
                path.join(".")
            ))
            .at(ann.span, "annotation")
            .type_error();
            if let Some(n) = note {
                d = d.note(n);
            }
            if dtype_for_array {
                d = d.help(format!(
                    "`{}` is the type of a scalar; an array parameter is annotated \
                     `buffer({}, [...])` (parpy.types.buffer)",
                    path.join("."),
                    path.join(".")
                ));
            }
            self.error(d);
            return None;
        }
        converted
    }

    /// An inlined helper's scalar parameter annotated with a type variable
    /// (`x: T`): binds it in `type_vars` or checks it against the earlier
    /// binding, as `check_annotation` does for called helpers. False after
    /// an error.
    pub(super) fn bind_type_var(
        &mut self,
        resolver: &dyn crate::resolve::Resolver,
        type_vars: &mut BTreeMap<u64, ElemTy>,
        p: &ast::Param,
        ann: &ast::Expr,
        elem: ElemTy,
    ) -> bool {
        let Some(path) = ann.dotted_path() else {
            return true;
        };
        let by_param = resolver.resolve(&[crate::resolve::ANNOTATION, p.name.as_str()]);
        let resolved = match by_param {
            Resolved::NotFound => resolver.resolve(&path),
            r => r,
        };
        let Resolved::TypeVar(id) = resolved else {
            return true;
        };
        match type_vars.get(&id) {
            None => {
                type_vars.insert(id, elem);
                true
            }
            Some(t) if *t == elem => true,
            Some(t) => {
                self.error(
                    Diagnostic::error(format!(
                        "Parameter {} was annotated with type {} which is incompatible with \
                         argument type {} (a scalar)",
                        p.name,
                        path.join("."),
                        elem.numpy_name()
                    ))
                    .at(ann.span, "annotation")
                    .note(format!(
                        "`{}` is {} from an earlier parameter",
                        path.join("."),
                        t.numpy_name()
                    ))
                    .type_error(),
                );
                false
            }
        }
    }

    /// If `s` is `parpy.label('name')`, its label (`Some(None)` after an
    /// error in the label).
    pub(super) fn label_of(&mut self, s: &ast::Stmt) -> Option<Option<(String, Span)>> {
        let ast::StmtKind::Expr(e) = &s.kind else {
            return None;
        };
        let ast::ExprKind::Call { func, args, .. } = &e.kind else {
            return None;
        };
        if self.builtin_of(func) != Some(Builtin::Label) {
            return None;
        }
        match args.as_slice() {
            [ast::Expr {
                kind: ast::ExprKind::Str(name),
                ..
            }] => Some(Some((name.clone(), s.span))),
            _ => {
                self.error(
                    Diagnostic::error("`parpy.label` takes one string literal")
                        .at(e.span, "invalid label")
                        .help("write `parpy.label('name')`"),
                );
                Some(None)
            }
        }
    }

    /// `target = e[::-1]` of a computed array `e` (a call or an operation,
    /// not a view) as `target[::-1] = e`; `None` for other statements.
    fn reversed_store(&self, s: &ast::Stmt) -> Option<ast::Stmt> {
        let ast::StmtKind::Assign { targets, value } = &s.kind else {
            return None;
        };
        let [target] = targets.as_slice() else {
            return None;
        };
        let ast::ExprKind::Subscript { value: e, indices } = &value.kind else {
            return None;
        };
        let backwards = |i: &ast::Expr| match &i.kind {
            ast::ExprKind::Slice {
                lo: None,
                hi: None,
                step: Some(st),
            } => match &st.kind {
                ast::ExprKind::Int(-1) => true,
                ast::ExprKind::Unary {
                    op: crate::ops::UnOp::Neg,
                    arg,
                } => matches!(arg.kind, ast::ExprKind::Int(1)),
                _ => false,
            },
            _ => false,
        };
        let computed = matches!(
            e.kind,
            ast::ExprKind::Call { .. } | ast::ExprKind::Binary { .. } | ast::ExprKind::Unary { .. }
        );
        let reversed = matches!(indices.as_slice(), [i] if backwards(i));
        if !(computed && reversed && self.is_slice_target(target)) {
            return None;
        }
        let target = ast::Expr {
            kind: ast::ExprKind::Subscript {
                value: Box::new(target.clone()),
                indices: indices.clone(),
            },
            span: target.span,
        };
        Some(ast::Stmt {
            kind: ast::StmtKind::Assign {
                targets: vec![target],
                value: (**e).clone(),
            },
            span: s.span,
        })
    }

    /// `x.fill(v)` and `np.copyto(x, v)` as the assignments they are:
    /// `x[...] = v` (`x[i, :] = v` of a slice), and `x += v` of an array
    /// name as NumPy's in-place `x[...] += v`; `None` for other
    /// statements (and for a destination that is not an array, which the
    /// call's lowering refuses).
    fn fill_statement(&self, s: &ast::Stmt) -> Option<ast::Stmt> {
        if let ast::StmtKind::AugAssign {
            target, op, value, ..
        } = &s.kind
        {
            // (`t += v` of a named view, `t = y.T` or `r = y.ravel()`,
            // reads `y.T += v`: sema::views; a call, which Python cannot
            // assign to, only so)
            let rank = self.rank(target);
            let whole = match &target.kind {
                ast::ExprKind::Name(_) => true,
                ast::ExprKind::Attr { .. } => super::expr::transpose_of(target).is_some(),
                ast::ExprKind::Call { .. } => {
                    return (rank > 0).then(|| ast::Stmt {
                        kind: ast::StmtKind::AugAssign {
                            target: ast::Expr {
                                kind: ast::ExprKind::Subscript {
                                    value: Box::new(target.clone()),
                                    indices: vec![ast::Expr::full_slice(target.span); rank],
                                },
                                span: target.span,
                            },
                            op: *op,
                            value: value.clone(),
                            rebind: None,
                        },
                        span: s.span,
                    })
                }
                _ => false,
            } && rank > 0;
            return whole.then(|| ast::Stmt {
                kind: ast::StmtKind::AugAssign {
                    target: all_of(target),
                    op: *op,
                    value: value.clone(),
                    rebind: None,
                },
                span: s.span,
            });
        }
        let ast::StmtKind::Expr(ast::Expr {
            kind:
                ast::ExprKind::Call {
                    func,
                    args,
                    keywords,
                },
            ..
        }) = &s.kind
        else {
            return None;
        };
        let sorted;
        let (dst, src) = match (&func.kind, args.as_slice()) {
            (ast::ExprKind::Attr { value, attr }, _)
                if attr == "sort" && self.is_local_value(value) =>
            {
                sorted = super::sort::in_place_sort(value, args, keywords, s.span)?;
                (&**value, &sorted)
            }
            (ast::ExprKind::Attr { value, attr }, [v])
                if attr == "fill" && self.is_local_value(value) =>
            {
                (&**value, v)
            }
            (_, [d, v, ..]) if self.builtin_of(func) == Some(Builtin::CopyTo) => (d, v),
            _ => return None,
        };
        if self.rank(dst) == 0 {
            return None;
        }
        let target = match &dst.kind {
            ast::ExprKind::Subscript { .. } => dst.clone(),
            _ => all_of(dst),
        };
        Some(ast::Stmt {
            kind: ast::StmtKind::Assign {
                targets: vec![target],
                value: src.clone(),
            },
            span: s.span,
        })
    }

    /// `np.transpose(x)`, `x.transpose()`, `np.swapaxes(m, 0, 1)`, `m.mT`
    /// (a permutation reversing the axes, `permute.rs`) of an array `x`:
    /// `x`, which `x.T` views; not `x.T` itself.
    fn transposed_array<'e>(&self, e: &'e ast::Expr) -> Option<&'e ast::Expr> {
        if matches!(&e.kind, ast::ExprKind::Attr { attr, .. } if attr == "T") {
            return None;
        }
        let x = self.transposed_operand(e)?;
        (matches!(x.kind, ast::ExprKind::Name(_)) && self.array_arg(x).is_some()).then_some(x)
    }

    /// The operand of a permutation that reverses its axes (`x.T`,
    /// `np.transpose(x)`, `np.swapaxes(m, 0, 1)` of a matrix).
    fn transposed_operand<'e>(&self, e: &'e ast::Expr) -> Option<&'e ast::Expr> {
        let p = self.permutation(e)?;
        (p.axes == Ok(Axes::Reversed)).then_some(p.operand)
    }

    /// The operand of a permutation that keeps its axes as they are
    /// (`np.swapaxes(x, 1, 1)`, `np.moveaxis(v, 0, 0)`): the operand
    /// itself.
    fn unpermuted<'e>(&self, e: &'e ast::Expr) -> Option<&'e ast::Expr> {
        let p = self.permutation(e)?;
        (p.axes == Ok(Axes::Same)).then_some(p.operand)
    }

    /// `x[idx].T` (or `np.transpose(x[idx])`, `x[idx].transpose()`) of an
    /// array argument `x`: `x.T` indexed by `idx` reversed, after the full
    /// slices of the dimensions `idx` leaves out (`x[i].T` of a 3-D `x` is
    /// `x.T[:, :, i]`). `None` for anything else (a new axis or `...` in
    /// `idx`: not rewritten).
    pub(super) fn transposed_subscript(&self, e: &ast::Expr) -> Option<ast::Expr> {
        let sub = self.transposed_operand(e)?;
        let ast::ExprKind::Subscript { value, indices } = &sub.kind else {
            return None;
        };
        let Some((_, Type::Array { shape, .. })) = self.array_arg(value) else {
            return None;
        };
        let plain =
            |i: &ast::Expr| !matches!(i.kind, ast::ExprKind::Ellipsis) && !self.is_new_axis(i);
        if indices.len() > shape.len() || !indices.iter().all(plain) {
            return None;
        }
        let full = ast::Expr::full_slice(sub.span);
        let mut idx = indices.clone();
        idx.resize(shape.len(), full);
        idx.reverse();
        Some(ast::Expr {
            kind: ast::ExprKind::Subscript {
                value: Box::new(ast::Expr {
                    kind: ast::ExprKind::Attr {
                        value: value.clone(),
                        attr: "T".to_string(),
                    },
                    span: value.span,
                }),
                indices: idx,
            },
            span: e.span,
        })
    }

    /// `s` with each `...` of a subscript of a known array replaced by
    /// the full slices it stands for (`x[..., 0]` of a 3-D `x` is `x[:, :,
    /// 0]`), `np.transpose(x)` / `x.transpose()` of an array as `x.T`,
    /// and a copy (`x[i, :].copy()`, `np.copy`, `np.array`) as the new
    /// array it is (`local_arrays.rs` `copy_of`);
    /// `None` when `s` has neither. An ellipsis or a transpose in a block
    /// inside `s` of an array made there is rewritten when that block is
    /// lowered.
    fn rewrite_views(&self, s: &ast::Stmt) -> Option<ast::Stmt> {
        let filled = self.fill_statement(s);
        let s = filled.as_ref().unwrap_or(s);
        let mut any = false;
        ast::for_each_stmt(std::slice::from_ref(s), &mut |st| {
            for e in st.own_exprs() {
                e.walk(&mut |x| {
                    any |= matches!(x.kind, ast::ExprKind::Ellipsis)
                        || self.copy_of(x).is_some()
                        || self.transposed_array(x).is_some()
                        || self.transposed_subscript(x).is_some()
                        || self.unpermuted(x).is_some()
                });
            }
        });
        if !any {
            return filled;
        }
        let mut c = s.clone();
        ast::walk_stmts_mut(std::slice::from_mut(&mut c), &mut |e| {
            if let Some(x) = self.copy_of(e) {
                *e = x;
                return;
            }
            if let Some(x) = self.transposed_array(e) {
                *e = ast::Expr {
                    kind: ast::ExprKind::Attr {
                        value: Box::new(x.clone()),
                        attr: "T".to_string(),
                    },
                    span: e.span,
                };
                return;
            }
            if let Some(t) = self.transposed_subscript(e) {
                *e = t;
                return;
            }
            if let Some(x) = self.unpermuted(e) {
                *e = x.clone();
                return;
            }
            let ast::ExprKind::Subscript { value, indices } = &mut e.kind else {
                return;
            };
            let is_ellipsis = |i: &ast::Expr| matches!(i.kind, ast::ExprKind::Ellipsis);
            let (Some(at), 1) = (
                indices.iter().position(is_ellipsis),
                indices.iter().filter(|i| is_ellipsis(i)).count(),
            ) else {
                return;
            };
            // `s[...]` of a subscript is the subscript (a helper's view
            // parameter stored through: `np.exp(v, out=out)`)
            if indices.len() == 1 && matches!(value.kind, ast::ExprKind::Subscript { .. }) {
                let view = (**value).clone();
                *e = view;
                return;
            }
            let array = super::expr::transpose_of(value).unwrap_or(value);
            let rank = match self.array_arg(array) {
                Some((_, Type::Array { shape, .. })) => shape.len(),
                // (a named reshaped view, `r.fill(v)` of `r = y.ravel()`:
                // sema::views)
                _ if matches!(value.kind, ast::ExprKind::Call { .. }) && self.rank(value) > 0 => {
                    self.rank(value)
                }
                _ => return,
            };
            let new_axes = indices.iter().filter(|i| self.is_new_axis(i)).count();
            let Some(n) = rank.checked_sub(indices.len() - 1 - new_axes) else {
                return;
            };
            let span = indices[at].span;
            let full = ast::Expr::full_slice(span);
            indices.splice(at..=at, std::iter::repeat_n(full, n));
        });
        Some(c)
    }

    /// `a op= v` whose new value is another variable than the one read
    /// (`rebind`, see `syntax::webs`): of a scalar, `rebind = a op v`
    /// (Python re-binds the name to the new value, with its own type); of
    /// an array, the update in place and `rebind` another name of the same
    /// array (a row name's subscript, or the array, as `self.rows` keeps
    /// names of rows; an assignment `rebind = a` where other assignments
    /// also bind `rebind`).
    fn split_rebind(&mut self, s: &ast::Stmt) -> Option<Vec<ast::Stmt>> {
        let ast::StmtKind::AugAssign {
            target,
            op,
            value,
            rebind: Some(r),
        } = &s.kind
        else {
            return None;
        };
        let ast::ExprKind::Name(n) = &target.kind else {
            return None;
        };
        let new_name = ast::Expr::name(r, target.span);
        let assign = |value: ast::Expr| ast::Stmt {
            kind: ast::StmtKind::Assign {
                targets: vec![new_name.clone()],
                value,
            },
            span: s.span,
        };
        // (a row or view name, `r = x[i]`, stands for a subscript of its
        // array: `r *= v` updates that array's elements)
        let row = self.rows.iter().rev().find(|(row, _)| row == n);
        let same_array = match (row, self.scope.get(n)) {
            (Some((_, e)), _) => Some(e.clone()),
            (None, Some(b)) if self.func.var(b.var).ty.is_array() => Some(target.clone()),
            // (a name re-bound to several arrays selects among them)
            (None, Some(b)) if self.aliases.contains_key(&b.var) => None,
            (None, _) => {
                return Some(vec![assign(ast::Expr::binary(
                    *op,
                    target.clone(),
                    value.clone(),
                    s.span,
                ))])
            }
        };
        let update = ast::Stmt {
            kind: ast::StmtKind::AugAssign {
                target: target.clone(),
                op: *op,
                value: value.clone(),
                rebind: None,
            },
            span: s.span,
        };
        match same_array {
            Some(e) if self.once.binds_once(r) && self.scope.get(r).is_none() => {
                self.rows.push((r.clone(), e));
                Some(vec![update])
            }
            _ => Some(vec![update, assign(target.clone())]),
        }
    }

    pub(super) fn lower_block(&mut self, stmts: &[ast::Stmt]) -> Block {
        self.lower_labelled_block(stmts, vec![])
    }

    /// `lower_block` after the labels `labels` (of its first statement).
    fn lower_labelled_block(
        &mut self,
        stmts: &[ast::Stmt],
        mut labels: Vec<(String, Span)>,
    ) -> Block {
        let mut out = vec![];
        let mut left = false;
        for s in stmts {
            if let Some(l) = self.label_of(s) {
                if let Some(l) = l {
                    if !self.labels_ok {
                        self.error(
                            Diagnostic::error("labels inside helper functions are not supported yet")
                                .at(l.1, "label in a helper")
                                .help("inline this helper where it is called from the function called with the parallel spec (`parpy.builtin.inline(f(...))`)"),
                        );
                    } else {
                        labels.push(l);
                    }
                }
                continue;
            }
            if let Some(parts) = self.split_rebind(s) {
                let labs = std::mem::take(&mut labels);
                out.extend(self.lower_labelled_block(&parts, labs));
                continue;
            }
            let labs = std::mem::take(&mut labels);
            let outer_pre = std::mem::take(&mut self.pre);
            // reads of row names (`r = x[i]`) as the rows' subscripts
            let with_rows;
            let s = if self.rows.is_empty() {
                s
            } else {
                let mut c = s.clone();
                super::inline::subst_stmts(std::slice::from_mut(&mut c), &self.rows);
                with_rows = c;
                &with_rows
            };
            // `x[..., 0]`: the ellipsis as the full slices it stands for;
            // `np.transpose(x)` as `x.T`
            let with_slices;
            let s = match self.rewrite_views(s) {
                Some(c) => {
                    with_slices = c;
                    &with_slices
                }
                None => s,
            };
            // (`np.swapaxes(z, 1, 2)` of a 3-D `z`: before its reads
            // report what else it is not)
            if self.report_permutations(s) {
                self.pre = outer_pre;
                continue;
            }
            let lowered = self.lower_stmt(s, &labs);
            let pre = std::mem::replace(&mut self.pre, outer_pre);
            out.extend(pre);
            out.extend(lowered);
            // (the statements after one that may leave the block, `if c:
            // return`, a loop with a `break`, an `assert`, may not run)
            if !left && may_leave(s) {
                left = true;
                self.unsure += 1;
            }
        }
        self.unsure -= u32::from(left);
        for (_, span) in labels {
            self.error(
                Diagnostic::error("this label is not followed by a statement")
                    .at(span, "nothing to label")
                    .help("put the label directly before a `for` loop, a slice assignment or a reduction"),
            );
        }
        out
    }

    pub(super) fn label_error(&mut self, labels: &[(String, Span)], stmt: Span) {
        for (_, span) in labels {
            self.error(
                Diagnostic::error(
                    "a label must be followed by a `for` loop, a slice assignment or an assignment with a reduction",
                )
                .at(*span, "this label")
                .also(stmt, "cannot be labelled"),
            );
        }
    }

    /// The implicit shape labels of a statement (`Options::implicit_labels`):
    /// the symbols that a `for` loop's range or a slice assignment's
    /// sides read by name, in order of appearance, after `labels`.
    fn implicit_labels(&self, s: &ast::Stmt, labels: &[(String, Span)]) -> Vec<(String, Span)> {
        let mut out = labels.to_vec();
        if self.opts.implicit_labels.is_empty() || !self.labels_ok {
            return out;
        }
        let exprs: Vec<&ast::Expr> = match &s.kind {
            ast::StmtKind::For { iter, .. } => vec![iter],
            ast::StmtKind::Assign { targets, value } if targets.len() == 1 => {
                if !has_slice(&targets[0]) {
                    return out;
                }
                vec![&targets[0], value]
            }
            ast::StmtKind::AugAssign { target, value, .. } => {
                if !has_slice(target) {
                    return out;
                }
                vec![target, value]
            }
            _ => return out,
        };
        let mut found = vec![];
        for e in exprs {
            names_in(e, &mut found);
        }
        for n in found {
            if self.opts.implicit_labels.iter().any(|l| l == n)
                && self.scope.get(n).is_none()
                && !out.iter().any(|(l, _)| l == n)
            {
                out.push((n.to_string(), s.span));
            }
        }
        out
    }

    fn lower_stmt(&mut self, s: &ast::Stmt, labels: &[(String, Span)]) -> Vec<ir::Stmt> {
        if let Some(out) = self.loop_else(s, labels) {
            return out;
        }
        // a store into a subscript of a slice (`x[i, 1:][j] = v`) as a
        // store into the one subscript it is (sema::chains)
        if let Some(flat) = self.composed_target(s) {
            return match flat {
                Some(flat) => self.lower_stmt(&flat, labels),
                None => vec![],
            };
        }
        // `y[i, :] = np.sort(s)[::-1]`: `y[i, :][::-1] = np.sort(s)`, the
        // computed array stored backwards (it has no elements to reverse)
        if let Some(backwards) = self.reversed_store(s) {
            return self.lower_stmt(&backwards, labels);
        }
        // `t[t < 0] = v`: `t[:] = np.where(t < 0, v, t[:])` (sema::masks)
        if let Some(select) = self.mask_store(s) {
            return match select {
                Some(select) => self.lower_stmt(&select, labels),
                None => vec![],
            };
        }
        // `y[i, :] = [e for j in range(n)]`: a loop storing each element
        // (sema::generators)
        if let Some(store) = self.list_comprehension_store(s) {
            return match store {
                Some(store) => self.lower_stmt(&store, labels),
                None => vec![],
            };
        }
        // `y[i, :] = np.convolve(a, v, mode)`: a loop storing each element
        // (sema::convolve)
        if let Some(store) = self.convolution_store(s) {
            return match store {
                Some(store) => self.lower_stmt(&store, labels),
                None => vec![],
            };
        }
        // `C[i, :, :] = np.cov(a, b)`: the four elements stored (sema::cov)
        if let Some(store) = self.cov_store(s) {
            return match store {
                Some(stmts) => self.lower_labelled_block(&stmts, labels.to_vec()),
                None => vec![],
            };
        }
        // `h[i, :] = np.histogram(x[i, :], 8)[0]`, `c, e = np.histogram(v)`:
        // NumPy's statements (sema::histogram)
        if let Some(store) = self.histogram_store(s) {
            return match store {
                Some(stmts) => self.lower_labelled_block(&stmts, labels.to_vec()),
                None => vec![],
            };
        }
        let with_implicit = self.implicit_labels(s, labels);
        let labels = with_implicit.as_slice();
        let names: Vec<String> = labels.iter().map(|l| l.0.clone()).collect();
        let span = s.span;
        let one = |k: StmtKind| vec![ir::Stmt::new(k, span)];
        match &s.kind {
            ast::StmtKind::Assign { targets, value } => match targets.as_slice() {
                [target]
                    if !matches!(target.kind, ast::ExprKind::Tuple(_))
                        && !matches!(value.kind, ast::ExprKind::Tuple(_)) =>
                {
                    self.assign(target, value, labels, span).unwrap_or_default()
                }
                _ => self.multi_assign(targets, value, labels, span),
            },
            ast::StmtKind::AugAssign {
                target, op, value, ..
            } => {
                // a 0-d array is updated in place (`z += v` is `z[()] += v`)
                let element;
                let target = match &target.kind {
                    ast::ExprKind::Name(n) if self.zero_d_array(n) => {
                        element = ast::Expr {
                            kind: ast::ExprKind::Subscript {
                                value: Box::new(target.clone()),
                                indices: vec![],
                            },
                            span: target.span,
                        };
                        &element
                    }
                    _ => target,
                };
                let hoisted = self.hoist_called_indices(target);
                let target = hoisted.as_ref().unwrap_or(target);
                let combined = ast::Expr {
                    kind: ast::ExprKind::Binary {
                        op: *op,
                        lhs: Box::new(target.clone()),
                        rhs: Box::new(value.clone()),
                    },
                    span,
                };
                self.assign(target, &combined, labels, span)
                    .unwrap_or_default()
            }
            ast::StmtKind::For {
                var,
                var_span,
                unpack,
                group,
                iter,
                body,
                ..
            } => self
                .for_in(var, *var_span, (unpack, *group), iter, body, names)
                .map(one)
                .unwrap_or_default(),
            other => {
                if !labels.is_empty() {
                    self.label_error(labels, span);
                }
                self.simple_stmt(other, span).map(one).unwrap_or_default()
            }
        }
    }

    /// `y[f(c)] op= v` reads and writes one element, calling `f` once: an
    /// index that calls a helper is kept in a hidden local first (named
    /// `index@OFFSET`, no Python name), the target rewritten to read it.
    /// `None` where no index calls one.
    fn hoist_called_indices(&mut self, target: &ast::Expr) -> Option<ast::Expr> {
        let ast::ExprKind::Subscript { value, indices } = &target.kind else {
            return None;
        };
        let calls = |e: &ast::Expr| {
            let mut found = false;
            e.walk(&mut |x| found |= matches!(x.kind, ast::ExprKind::Call { .. }));
            found
        };
        if !indices.iter().any(calls) {
            return None;
        }
        let mut out = vec![];
        for ix in indices {
            let scalar = !matches!(ix.kind, ast::ExprKind::Slice { .. }) && self.rank(ix) == 0;
            if !calls(ix) || !scalar {
                out.push(ix.clone());
                continue;
            }
            let t = self.lower_expr(ix)?;
            if crate::ir::visit::pure(&t.e) {
                out.push(ix.clone());
                continue;
            }
            let e = self.stash(t.e, ix.span);
            let ExprKind::Var(var) = e.kind else {
                return None;
            };
            let name = format!("index@{}", ix.span.lo);
            self.scope.bind(&name, Binding { var, weak: t.weak });
            out.push(ast::Expr {
                kind: ast::ExprKind::Name(name),
                span: ix.span,
            });
        }
        Some(ast::Expr {
            kind: ast::ExprKind::Subscript {
                value: value.clone(),
                indices: out,
            },
            span: target.span,
        })
    }

    fn simple_stmt(&mut self, kind: &ast::StmtKind, span: Span) -> Option<StmtKind> {
        match kind {
            ast::StmtKind::While { cond, body, .. } => {
                let before = self.pre.len();
                let c = self.lower_condition(cond);
                if self.pre.len() == before {
                    let body = self.loop_body(body, false);
                    return Some(StmtKind::While { cond: c?, body });
                }
                // what the condition needs first (a reduction, a helper's
                // value kept once, a check of Python's raises) runs before
                // each test: `while True: <pre>; if not c: break; body`
                let mut first: Block = self.pre.drain(before..).collect();
                let body = self.loop_body(body, false);
                let c = c?;
                let cspan = c.span;
                first.push(ir::Stmt::new(
                    StmtKind::If {
                        cond: ir::Expr::not(c, cspan),
                        then_body: vec![ir::Stmt::new(StmtKind::Break, cspan)],
                        else_body: vec![],
                    },
                    cspan,
                ));
                first.extend(body);
                Some(StmtKind::While {
                    cond: ir::Expr::new(ExprKind::Bool(true), Type::Scalar(ElemTy::Bool), cspan),
                    body: first,
                })
            }
            ast::StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                let c = self.lower_condition(cond);
                // A condition known when compiling (`static_backend_eq`,
                // `static_types_eq`, literals): only the branch taken is
                // compiled, so the other may hold `static_fail` or code
                // meant for another backend or type.
                if let Some(taken) = c.as_ref().and_then(const_bool) {
                    let body = self.lower_block(if taken { then_body } else { else_body });
                    return Some(StmtKind::If {
                        cond: ir::Expr::new(ExprKind::Bool(true), Type::Scalar(ElemTy::Bool), span),
                        then_body: body,
                        else_body: vec![],
                    });
                }
                self.unsure += 1;
                let then_body = self.lower_block(then_body);
                let else_body = self.lower_block(else_body);
                self.unsure -= 1;
                Some(StmtKind::If {
                    cond: c?,
                    then_body,
                    else_body,
                })
            }
            ast::StmtKind::With { ctx, body } => {
                let named = matches!(
                    ctx.kind,
                    ast::ExprKind::Name(_) | ast::ExprKind::Attr { .. }
                );
                if named && self.builtin_of(ctx) == Some(Builtin::AtomicBlock) {
                    let stmts = self.atomic_block(body);
                    self.pre.extend(stmts);
                    return None;
                }
                let is_gpu = named && self.builtin_of(ctx) == Some(Builtin::Gpu);
                if !is_gpu {
                    self.error(
                        Diagnostic::error(
                            "only `with parpy.gpu:` and `with parpy.atomic:` are supported",
                        )
                        .at(ctx.span, "unsupported context manager"),
                    );
                }
                // a `break` / `continue` inside does not leave the block
                let loops = std::mem::take(&mut self.loops);
                self.device_depth += u32::from(is_gpu);
                let body = self.lower_block(body);
                self.device_depth -= u32::from(is_gpu);
                self.loops = loops;
                is_gpu.then_some(StmtKind::OnDevice(body))
            }
            ast::StmtKind::Return(v) => self.return_stmt(v.as_ref(), span),
            ast::StmtKind::Expr(e) => match &e.kind {
                // Docstrings and other bare strings.
                ast::ExprKind::Str(_) => None,
                ast::ExprKind::Call { func, args, .. } if self.callback_of(func).is_some() => {
                    self.callback_stmt(func, args, span)
                }
                ast::ExprKind::Call { func, args, .. } if self.atomic_op(func).is_some() => {
                    let op = self.atomic_op(func)?;
                    self.atomic_stmt(op, args, span)
                }
                ast::ExprKind::Call { func, .. } => {
                    let t = self.lower_expr(e)?;
                    if matches!(t.e.kind, ExprKind::Call { .. })
                        || (matches!(t.e.kind, ExprKind::External { .. }) && t.e.ty == Type::Void)
                    {
                        Some(StmtKind::Expr(t.e))
                    } else if t.e.ty == Type::Void || self.is_helper(func) {
                        // an inlined helper: its statements were hoisted
                        // (and a value it returns is dropped, as Python
                        // drops it)
                        None
                    } else {
                        self.error(
                            Diagnostic::error("the result of this call is not used")
                                .at(e.span, "value computed and discarded")
                                .help("assign it to a variable or remove the call"),
                        );
                        None
                    }
                }
                _ => {
                    self.error(
                        Diagnostic::error("this expression statement has no effect")
                            .at(e.span, "value computed and discarded"),
                    );
                    None
                }
            },
            // `assert test, msg`: checked where it runs (a condition known
            // true when compiling needs no check)
            ast::StmtKind::Assert {
                test,
                msg,
                values,
                exception,
                printf,
            } => {
                let c = self.lower_condition(test)?;
                if const_bool(&c) == Some(true) {
                    return None;
                }
                let values = self.noted_values(values)?;
                Some(StmtKind::Expr(ir::Expr::assert_noting(
                    c,
                    msg.clone(),
                    values,
                    exception,
                    *printf,
                    span,
                )))
            }
            ast::StmtKind::Pass => None,
            ast::StmtKind::Break | ast::StmtKind::Continue => {
                let brk = matches!(kind, ast::StmtKind::Break);
                if self.loops == 0 {
                    // the converter saw a loop around it: a `with` between
                    let word = if brk { "break" } else { "continue" };
                    self.error(
                        Diagnostic::error(format!(
                            "`{word}` cannot leave a `with parpy.gpu:` block"
                        ))
                        .at(span, format!("`{word}` of a loop outside the block"))
                        .note("the block runs on the device as a kernel of its own; the loop around it runs on the host")
                        .help("move the loop into the `with parpy.gpu:` block, or compute a flag in the block and test it after the block"),
                    );
                    return None;
                }
                Some(if brk {
                    StmtKind::Break
                } else {
                    StmtKind::Continue
                })
            }
            ast::StmtKind::Assign { .. }
            | ast::StmtKind::AugAssign { .. }
            | ast::StmtKind::For { .. } => None,
        }
    }

    /// The fields of an f-string message (`assert c, f"n is {n}"`): each a
    /// number or a bool, computed when the check fails.
    fn noted_values(&mut self, values: &[ast::Expr]) -> Option<Vec<(ir::Expr, bool)>> {
        let mut out = vec![];
        for v in values {
            if self.rank(v) > 0 {
                self.error(
                    Diagnostic::error("a field of the message of an `assert` or a `raise` must be a number in parpy functions")
                        .at(v.span, "this is an array")
                        .help("name one element (`x[i]`) or a reduction of it (`x.max()`)"),
                );
                return None;
            }
            let t = self.lower_expr(v)?;
            self.scalar_elem(&t)?;
            out.push((t.e, t.weak));
        }
        Some(out)
    }

    fn value_of(&mut self, v: Value<'_>) -> Option<TExpr> {
        match v {
            Value::Ast(e) => self.lower_expr(e),
            Value::Lowered(t) => t,
        }
    }

    fn return_stmt(&mut self, v: Option<&ast::Expr>, span: Span) -> Option<StmtKind> {
        let Some(v) = v else {
            self.bare_return.get_or_insert(span);
            return Some(StmtKind::Return(None));
        };
        if self.inlined {
            self.error(
                Diagnostic::error(
                    "an inlined function can only return a value in its last statement",
                )
                .at(v.span, "returned here")
                .help("compute the result into a variable and return it at the end"),
            );
            return None;
        }
        if self.is_entry {
            self.error(
                Diagnostic::error(format!(
                    "Main function {} cannot return a value (it is called from Python)",
                    self.func.name
                ))
                .at(v.span, "returned value")
                .help("write the result into an array argument instead")
                .type_error(),
            );
            return None;
        }
        let t = self.lower_expr(v)?;
        let ty = self.scalar_elem(&t)?;
        let known = super::types::const_scalar(&t.e);
        self.returns.push((ty, t.weak, known, v.span));
        Some(StmtKind::Return(Some(t.e)))
    }

    /// A `return` inside `with parpy.gpu:` ends the block's kernel only:
    /// Python's return of the function is that only when the block is the
    /// function's last statement. Any other is an error.
    pub(super) fn check_device_returns(&mut self, body: &[ir::Stmt]) {
        let mut spans = vec![];
        for (k, s) in body.iter().enumerate() {
            let last = k + 1 == body.len();
            crate::ir::visit::walk_stmts(std::slice::from_ref(s), &mut |t| {
                if let StmtKind::OnDevice(b) = &t.kind {
                    if !(last && std::ptr::eq(t, s)) {
                        spans.extend(
                            crate::ir::visit::returns(b)
                                .iter()
                                .map(|r| (r.span, t.span)),
                        );
                    }
                }
            });
        }
        for (at, block) in spans {
            self.error(
                Diagnostic::error("`return` cannot leave a `with parpy.gpu:` block that code follows")
                    .at(at, "ends only the block here")
                    .also(block.header(), "the block")
                    .note("the block runs on the device as a kernel of its own: a `return` in it ends the kernel, and the statements after the block would still run")
                    .help("compute a flag in the block and return after it (`if done[0]: return`), or make the block the function's last statement"),
            );
        }
    }

    /// Fixes a helper's return type (the promoted type of all returned
    /// values) and converts every returned value to it. Returns whether the
    /// result is weak (all returned values were).
    pub(super) fn finish_returns(&mut self) -> bool {
        let Some(&(t0, w0, ..)) = self.returns.first() else {
            return false;
        };
        let first = (t0, w0);
        if let Some(span) = self.bare_return {
            self.error(
                Diagnostic::error("this function returns a value on some paths but not here")
                    .at(span, "returns nothing"),
            );
        }
        // (a return whose value failed to lower is missing from the body:
        // that error is the one to report, `fact(n - 1)` of a recursion)
        let failed = self.sh.diags.iter().any(|d| d.is_error());
        if !failed && !always_returns(&self.func.body) {
            let mut at = None;
            ir::visit::walk_stmts(&self.func.body, &mut |s| {
                if matches!(s.kind, StmtKind::Return(Some(_))) {
                    at.get_or_insert(s.span);
                }
            });
            self.error(super::inline::ends_without_return(
                at.unwrap_or(self.func.span),
            ));
        }
        // (values of other types on two paths: the rule of `a if c else
        // b`, `types.rs` `path_types_differ`)
        let rs = &self.returns;
        let differ = (0..rs.len()).find_map(|i| {
            rs[i + 1..].iter().find_map(|&(t, w, c, at)| {
                let (ta, wa, ca, a_at) = rs[i];
                self.path_types_differ((ta, wa, ca), (t, w, c))
                    .map(|words| (words, a_at, at))
            })
        });
        if let Some((words, a_at, b_at)) = differ {
            let what = format!("`{}` returns", self.func.name);
            self.path_types_error(&what, words, a_at, b_at);
            return false;
        }
        let (ty, weak) = self.returns[1..]
            .iter()
            .fold(first, |acc, r| promote(acc, (r.0, r.1), self.opts));
        self.func.ret = Type::Scalar(ty);
        let mut inexact = vec![];
        convert_returns(&mut self.func.body, ty, &mut inexact);
        if let Some(&at) = inexact.first().filter(|_| !weak) {
            let t = ty.numpy_name();
            let kind = if ty.is_float() { "float" } else { "int" };
            self.error(
                Diagnostic::error(format!(
                    "`{}` returns this Python {kind} on one path and a value of type `{t}` on another, and `{t}` cannot hold it",
                    self.func.name
                ))
                .at(at, format!("not a `{t}`"))
                .note(format!(
                    "Python returns each value as it is; parpy gives a function one return type, here `{t}`, NumPy's type of the values together"
                ))
                .help(format!(
                    "return values of one type on every path: convert the NumPy value (`int(v)`, `float(v)`) where the Python number must stay as it is, or the number (`np.{t}(...)`) where the `{t}` value of it is meant"
                )),
            );
        }
        weak
    }

    /// `for ... else:` / `while ... else:` (`None` for any other statement):
    /// the `else:` runs when the loop ends without `break`. Without a
    /// `break` of this loop it simply follows the loop; otherwise a hidden
    /// flag (`loop@FILE.OFFSET.broke`, no Python name) is set before each `break` and
    /// tested after the loop.
    fn loop_else(&mut self, s: &ast::Stmt, labels: &[(String, Span)]) -> Option<Vec<ir::Stmt>> {
        let (ast::StmtKind::For { orelse, .. } | ast::StmtKind::While { orelse, .. }) = &s.kind
        else {
            return None;
        };
        if orelse.is_empty() {
            return None;
        }
        let span = s.span;
        let flag = format!("loop@{}.{}.broke", span.file.0, span.lo);
        let name = ast::Expr::name(&flag, span);
        let set = |value: bool| ast::Stmt {
            kind: ast::StmtKind::Assign {
                targets: vec![name.clone()],
                value: ast::Expr {
                    kind: ast::ExprKind::Bool(value),
                    span,
                },
            },
            span,
        };
        // the loop without its `else:`, the flag set before each `break`
        let mut plain = s.clone();
        let (ast::StmtKind::For { body, orelse, .. } | ast::StmtKind::While { body, orelse, .. }) =
            &mut plain.kind
        else {
            return None;
        };
        let orelse = std::mem::take(orelse);
        if !mark_breaks(body, &set(true)) {
            let mut out = self.lower_stmt(&plain, labels);
            out.extend(self.lower_block(&orelse));
            return Some(out);
        }
        let after = ast::Stmt {
            kind: ast::StmtKind::If {
                cond: ast::Expr {
                    kind: ast::ExprKind::Unary {
                        op: crate::ops::UnOp::Not,
                        arg: Box::new(name.clone()),
                    },
                    span,
                },
                then_body: orelse,
                else_body: vec![],
            },
            span,
        };
        let mut out = self.lower_stmt(&set(false), &[]);
        out.extend(self.lower_stmt(&plain, labels));
        out.extend(self.lower_stmt(&after, &[]));
        Some(out)
    }

    /// A loop's body (where `break` and `continue` act on the loop);
    /// `runs`: it certainly runs at least once (else its statements may
    /// not run: `unsure`).
    fn loop_body(&mut self, body: &[ast::Stmt], runs: bool) -> Block {
        self.loops += 1;
        self.unsure += u32::from(!runs);
        let body = self.lower_block(body);
        self.unsure -= u32::from(!runs);
        self.loops -= 1;
        body
    }

    /// An iterable of a `for` loop that is an array or a slice of one: its
    /// length and its element at the hidden index `index`
    /// ([`iteration_index`]). Python iterates the first dimension of the
    /// view: the element of a 1-D view is a number, of a matrix `x` the row
    /// `x[index]` (a row view, as `r = x[i]`), of `x[1:4, ::2]` the view
    /// `x[1 + index, ::2]`.
    /// The `index`-th column of the matrix view `x[indices]` (an array
    /// name, `indices` with exactly two full slices once padded), as a
    /// subscript of `x`: its last full slice replaced by `index`. With the
    /// length of that dimension.
    fn column(
        &mut self,
        index: ast::Expr,
        x: &ast::Expr,
        indices: &[ast::Expr],
    ) -> Option<(i64, ast::Expr)> {
        let (_, Type::Array { shape, .. }) = self.array_arg(x)? else {
            return None;
        };
        let mut at: Vec<ast::Expr> = indices.to_vec();
        while at.len() < shape.len() {
            at.push(ast::Expr::full_slice(x.span));
        }
        let slices: Vec<usize> = (0..at.len()).filter(|k| at[*k].is_full_slice()).collect();
        let others_scalar = at.iter().all(|e| {
            e.is_full_slice()
                || !matches!(
                    e.kind,
                    ast::ExprKind::Slice { .. } | ast::ExprKind::Ellipsis
                )
        });
        let ([_, last], true, true) = (slices.as_slice(), at.len() == shape.len(), others_scalar)
        else {
            return None;
        };
        let n = shape[*last];
        at[*last] = index;
        let span = x.span;
        Some((
            n,
            ast::Expr {
                kind: ast::ExprKind::Subscript {
                    value: Box::new(x.clone()),
                    indices: at,
                },
                span,
            },
        ))
    }

    fn element(&mut self, index_name: &str, iter: &ast::Expr) -> Option<(i64, ast::Expr)> {
        let span = iter.span;
        let index = ast::Expr::name(index_name, span);
        let subscript = |value: ast::Expr, indices: Vec<ast::Expr>| ast::Expr {
            kind: ast::ExprKind::Subscript {
                value: Box::new(value),
                indices,
            },
            span,
        };
        match &iter.kind {
            ast::ExprKind::Name(_) => match self.array_arg(iter)? {
                (_, Type::Array { shape, .. }) if !shape.is_empty() => {
                    Some((shape[0], subscript(iter.clone(), vec![index])))
                }
                _ => None,
            },
            // `for col in x.T` of a matrix, and of a matrix row `x[i].T`
            // (which `rewrite_views` makes `x.T[:, :, i]`): the columns,
            // `x[:, k]` and `x[i, :, k]`
            ast::ExprKind::Attr { value, attr } if attr == "T" => self.column(index, value, &[]),
            ast::ExprKind::Subscript { value, indices } if matches!(&value.kind, ast::ExprKind::Attr { attr, .. } if attr == "T") =>
            {
                let ast::ExprKind::Attr { value: x, .. } = &value.kind else {
                    return None;
                };
                let reversed: Vec<ast::Expr> = indices.iter().rev().cloned().collect();
                self.column(index, x, &reversed)
            }
            // a slice of a slice (`x[i, 2:9][1:4]`): the one subscript
            ast::ExprKind::Subscript { .. } if self.subscript_of_a_view(iter).is_some() => {
                let flat = self.composed_subscript(iter)?;
                self.element(index_name, &flat)
            }
            ast::ExprKind::Subscript { .. } => {
                // `x[i][lo:hi]` is `x[i, lo:hi]`
                let (value, indices) = super::expr::flatten_subscript(iter);
                let (_, Type::Array { shape, .. }) = self.array_arg(value)? else {
                    return None;
                };
                // a row (`x[i]` of a matrix) is `x[i, :]`
                let mut indices: Vec<ast::Expr> = indices.into_iter().cloned().collect();
                while indices.len() < shape.len() {
                    indices.push(ast::Expr::full_slice(span));
                }
                let slices: Vec<usize> = indices
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| matches!(e.kind, ast::ExprKind::Slice { .. }))
                    .map(|(k, _)| k)
                    .collect();
                let (Some(k), true) = (slices.first(), indices.len() == shape.len()) else {
                    return None;
                };
                let ast::ExprKind::Slice { lo, hi, step } = &indices[*k].kind else {
                    return None;
                };
                let parts = (lo.as_deref(), hi.as_deref(), step.as_deref());
                let IndexSlot::Slice {
                    lo: start,
                    extent,
                    step,
                    ..
                } = self.slice_bounds(parts, shape[*k], span)?
                else {
                    return None;
                };
                // the element: the slice's first index (Python's, clamped
                // and counted from the end) plus step times the iteration
                // index
                let term = |op, k: i64, e: ast::Expr| {
                    ast::Expr::binary(op, ast::Expr::int(k, span), e, span)
                };
                let index = match step {
                    1 => index,
                    s => term(crate::ir::BinOp::Mul, s, index),
                };
                let first = match (const_int(&start), lo) {
                    (Some(0), _) => index,
                    (Some(s), _) => term(crate::ir::BinOp::Add, s, index),
                    // a window (`x[i, j:j + 3]`): its start as written, when
                    // the names it reads keep their values
                    (None, Some(l)) if self.keeps_value(l) => {
                        ast::Expr::binary(crate::ir::BinOp::Add, (**l).clone(), index, span)
                    }
                    (None, _) => return None,
                };
                let mut at = indices.clone();
                at[*k] = first;
                Some((extent, subscript(value.clone(), at)))
            }
            _ => None,
        }
    }

    /// `for target in iter:`. A `range(...)` loop as it is; over arrays and
    /// slices (`x`, `enumerate(x[, start])`, `zip(x, y, ...)`) a range loop
    /// over a hidden index whose body first assigns the targets (Python
    /// reads each element when its iteration starts).
    fn for_in(
        &mut self,
        var: &str,
        var_span: Span,
        (unpack, group): (&[(String, Span)], ast::Group),
        iter: &ast::Expr,
        body: &[ast::Stmt],
        labels: Vec<String>,
    ) -> Option<StmtKind> {
        let span = iter.span;
        let call = match &iter.kind {
            ast::ExprKind::Call { func, args, .. } => self.builtin_of(func).map(|b| (b, args)),
            _ => None,
        };
        // `for i, (a, b) in enumerate(zip(x, y)):` (the one nested target
        // parpy unpacks): zip's iterables
        let zipped = match (group, call) {
            (Some((1, hi)), Some((Builtin::Enumerate, args))) if hi == unpack.len() => {
                match args.first().map(|a| &a.kind) {
                    Some(ast::ExprKind::Call { func, args: z, .. })
                        if self.builtin_of(func) == Some(Builtin::Zip) =>
                    {
                        Some(z)
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        if group.is_some() && zipped.is_none() {
            self.error(
                Diagnostic::error("a tuple inside a loop target unpacks the elements of `zip` in `enumerate(zip(...))`")
                    .at(var_span, "the loop target")
                    .help("write `for i, (a, b) in enumerate(zip(x, y)):`, or unpack inside the loop"),
            );
            return None;
        }
        let index = iteration_index(var);
        let name = |n: &str| ast::Expr::name(n, span);
        let tuple_error = |this: &mut Self, what: &str, fix: &str| {
            this.error(
                Diagnostic::error(what.to_string())
                    .at(var_span, "the loop target")
                    .help(fix.to_string()),
            );
        };
        // `reversed(...)`: the hidden index counts down
        let mut down = false;
        // (length, [(target, value)])
        let (n, values) = match call {
            Some((Builtin::Range, _)) if unpack.is_empty() => {
                return self.for_loop(var, var_span, iter, body, labels);
            }
            Some((Builtin::Reversed, args)) if unpack.is_empty() => {
                let [x] = args.as_slice() else {
                    self.arity_error("reversed", "1 argument", args.len(), span);
                    return None;
                };
                if let ast::ExprKind::Call { func, args: r, .. } = &x.kind {
                    if self.builtin_of(func) == Some(Builtin::Range) {
                        if let Some(lowered) =
                            self.run_time_step(var, var_span, r, x.span, body, &labels, true)
                        {
                            return lowered;
                        }
                        let rev = self.reversed_range(func, r, x.span)?;
                        return self.for_loop(var, var_span, &rev, body, labels);
                    }
                }
                down = true;
                let (n, v) = self.iterable(&index, x, "reversed")?;
                (n, vec![((var.to_string(), var_span), v)])
            }
            Some((Builtin::Enumerate, args)) => {
                if unpack.len() != 2 && zipped.is_none() {
                    tuple_error(
                        self,
                        "`enumerate` gives (index, element) pairs: unpack them into two names",
                        "write `for i, v in enumerate(x):`",
                    );
                    return None;
                }
                let start = match args.get(1) {
                    None => 0,
                    Some(s) => match self.lower_expr(s).and_then(|t| self.known_int(&t.e)) {
                        Some(c) => c,
                        None => {
                            self.error(
                                Diagnostic::error(
                                    "the start of `enumerate` must be an integer constant",
                                )
                                .at(s.span, "not an integer constant")
                                .help("add the offset inside the loop: `j = i + start`"),
                            );
                            return None;
                        }
                    },
                };
                let x = match args.as_slice() {
                    [x] | [x, _] => x,
                    _ => {
                        self.arity_error("enumerate", "1 or 2 arguments", args.len(), span);
                        return None;
                    }
                };
                let (n, mut values) = match zipped {
                    Some(z) => self.zip_elements(&index, z, &unpack[1..], var_span)?,
                    None => {
                        let (n, v) = self.iterable(&index, x, "enumerate")?;
                        (n, vec![(unpack[1].clone(), v)])
                    }
                };
                let i = match start {
                    0 => name(&index),
                    s => ast::Expr::binary(
                        crate::ir::BinOp::Add,
                        name(&index),
                        ast::Expr::int(s, span),
                        span,
                    ),
                };
                values.insert(0, (unpack[0].clone(), i));
                (n, values)
            }
            Some((Builtin::Zip, args)) => self.zip_elements(&index, args, unpack, var_span)?,
            _ if matches!(iter.kind, ast::ExprKind::Tuple(_)) => {
                let ast::ExprKind::Tuple(items) = &iter.kind else {
                    return None;
                };
                let literal = |e: &ast::Expr| {
                    e.is_number_literal() || matches!(e.kind, ast::ExprKind::Tuple(_))
                };
                if unpack.is_empty() && !items.iter().all(literal) {
                    // `for v in [x[i, 0], x[i, 1]]`: a list of numbers
                    let (n, v) = self.iterable(&index, iter, "for")?;
                    (n, vec![((var.to_string(), var_span), v)])
                } else {
                    self.literal_elements(&index, (var, var_span), unpack, items, span)?
                }
            }
            // `for a, b in pts[i]` of an array of rows: each row unpacked
            // (as Python iterates the array, then unpacks each row)
            _ if !unpack.is_empty() && call.is_none() => match self.array_shape_of(iter)? {
                (Some(shape), _) if shape.len() > 1 => {
                    if shape[1] != unpack.len() as i64 {
                        self.error(
                            Diagnostic::error(format!(
                                "cannot unpack rows of {} values into {} targets",
                                shape[1],
                                unpack.len()
                            ))
                            .at(iter.span, format!("rows of {}", shape[1]))
                            .also(var_span, format!("{} targets", unpack.len()))
                            .note("Python raises ValueError here"),
                        );
                        return None;
                    }
                    let Some((n, row)) = self.element(&index, iter) else {
                        tuple_error(
                            self,
                            "parpy cannot iterate this array here",
                            "write the loop over an index: `for j in range(n):`",
                        );
                        return None;
                    };
                    let items = unpack.iter().enumerate();
                    (
                        n,
                        items
                            .map(|(k, t)| (t.clone(), super::assign::item(&row, k as i64)))
                            .collect(),
                    )
                }
                _ => {
                    tuple_error(self, TUPLE_TARGET, TUPLE_TARGET_FIX);
                    return None;
                }
            },
            _ if !unpack.is_empty() => {
                tuple_error(self, TUPLE_TARGET, TUPLE_TARGET_FIX);
                return None;
            }
            // `for w in np.array([0.5, 1.5])`: NumPy's array of the list,
            // its elements NumPy values (as `enumerate` of it reads them)
            _ if iter.list_items().is_some() => {
                let (n, v) = self.iterable(&index, iter, "for")?;
                (n, vec![((var.to_string(), var_span), v)])
            }
            _ => match self.element(&index, iter) {
                Some((n, v)) => (n, vec![((var.to_string(), var_span), v)]),
                None => return self.for_loop(var, var_span, iter, body, labels),
            },
        };
        let int = |v: i64| ast::Expr::int(v, span);
        let bounds = match down {
            false => vec![int(n)],
            true => vec![int(n - 1), int(-1), int(-1)],
        };
        let range = Self::range_call(bounds, span);
        // a view target (a row of `x`) re-bound by another loop (`for row
        // in x:` twice): a view is one name bound once, so the body reads
        // a fresh name
        let mut renames = vec![];
        let values: Vec<TargetValue> = values
            .into_iter()
            .map(|((target, at), value)| {
                if self.rank(&value) == 0 || self.once.assigns_once(&target) {
                    return ((target, at), value);
                }
                let fresh = self.fresh_name(&target);
                self.once.bind_once(&fresh);
                renames.push((target, ast::Expr::name(&fresh, at)));
                ((fresh, at), value)
            })
            .collect();
        let mut body = body.to_vec();
        super::inline::subst_stmts(&mut body, &renames);
        let mut inner: Vec<ast::Stmt> = values
            .into_iter()
            .map(|((target, at), value)| ast::Stmt {
                kind: ast::StmtKind::Assign {
                    targets: vec![ast::Expr::name(&target, at)],
                    value,
                },
                span: at,
            })
            .collect();
        inner.extend(body);
        self.for_loop(&index, var_span, &range, &inner, labels)
    }

    /// `for v in range(a, b, s)` (`down`: `reversed(range(a, b, s))`) with
    /// a step known only at run time: a loop over the count of its values,
    /// `-((a - b) // s)` (zero or less: no iteration), whose body first
    /// sets `v = a + index * s` (`a + (count - 1 - index) * s`). `a`, `b`
    /// and `s` are read once, before the loop, as Python's `range` reads
    /// them, as ints of the index type; a zero step raises Python's
    /// `ValueError`. `None` where the step is known when compiling and not
    /// zero, or is a zero written in the source (or is not an integer: the
    /// caller reports it).
    #[allow(clippy::too_many_arguments)]
    fn run_time_step(
        &mut self,
        var: &str,
        var_span: Span,
        args: &[ast::Expr],
        span: Span,
        body: &[ast::Stmt],
        labels: &[String],
        down: bool,
    ) -> Option<Option<StmtKind>> {
        let [a, b, s] = args else {
            return None;
        };
        let (mark, diags) = (self.pre.len(), self.sh.diags.len());
        let step = self.lower_expr(s);
        let known = step.as_ref().and_then(|t| self.known_int(&t.e));
        // (a zero that is not written in the source, a specialized
        // argument's: Python's ValueError when the loop is reached)
        let run_time = known.is_none() || known == Some(0) && !super::expr::is_python_constant(s);
        let int_step = step
            .filter(|_| run_time)
            .filter(|t| self.scalar_elem(t).is_some_and(|e| !e.is_float()));
        self.pre.truncate(mark);
        self.sh.diags.truncate(diags);
        int_step?;
        // each read once, in order, into a hidden local of the index type
        let mut names = Vec::with_capacity(3);
        for (e, what) in [(a, "start"), (b, "stop"), (s, "step")] {
            let t = self.lower_expr(e);
            let Some(value) = t.and_then(|t| self.index_value(t, "a `range` bound")) else {
                return Some(None);
            };
            names.push(self.hidden_local(&format!("{var}_{what}"), value, e.span));
        }
        let [a, b, s] = <[ast::Expr; 3]>::try_from(names).ok()?;
        let nonzero = ast::Expr::binary(
            crate::ir::BinOp::Ne,
            s.clone(),
            ast::Expr::int(0, s.span),
            s.span,
        );
        let nonzero = self.lower_expr(&nonzero)?.e;
        self.raise_unless(
            vec![(nonzero, "range() arg 3 must not be zero", "ValueError")],
            s.span,
        );
        use crate::ir::BinOp::{Add, FloorDiv, Mul, Sub};
        let bin = |op, l, r| ast::Expr::binary(op, l, r, span);
        let zero = ast::Expr::int(0, span);
        let mut count = bin(Sub, zero, bin(FloorDiv, bin(Sub, a.clone(), b), s.clone()));
        let index = iteration_index(var);
        let mut at = ast::Expr::name(&index, span);
        if down {
            let n = self.lower_expr(&count)?.e;
            count = self.hidden_local(&format!("{var}_count"), n, span);
            let last = bin(Sub, count.clone(), ast::Expr::int(1, span));
            at = bin(Sub, last, at);
        }
        let mut inner = vec![ast::Stmt {
            kind: ast::StmtKind::Assign {
                targets: vec![ast::Expr::name(var, var_span)],
                value: bin(Add, a, bin(Mul, at, s)),
            },
            span: var_span,
        }];
        inner.extend(body.iter().cloned());
        let range = Self::range_call(vec![count], span);
        Some(self.for_loop(&index, var_span, &range, &inner, labels.to_vec()))
    }

    /// `value` kept in a new local of a fresh name made from `base`, set
    /// before the statement: a read of it, for code sema builds.
    fn hidden_local(&mut self, base: &str, value: ir::Expr, span: Span) -> ast::Expr {
        let name = self.fresh_name(base);
        let id = self.new_var(&name, value.ty.clone(), VarKind::Local, span);
        self.pre.push(ir::Stmt::new(
            StmtKind::Assign {
                dst: Place::Var(id),
                value,
            },
            span,
        ));
        self.scope.bind(
            &name,
            Binding {
                var: id,
                weak: true,
            },
        );
        ast::Expr::name(&name, span)
    }

    /// `zip(args)` unpacked into `targets`: the loop's length (the
    /// shortest iterable's, as Python's `zip` stops there) and each
    /// target's element at `index`.
    fn zip_elements(
        &mut self,
        index: &str,
        args: &[ast::Expr],
        targets: &[(String, Span)],
        var_span: Span,
    ) -> Option<(i64, Vec<TargetValue>)> {
        if args.is_empty() || targets.len() != args.len() {
            self.error(
                Diagnostic::error(format!(
                    "`zip` of {} iterables gives tuples of {}: unpack them into as many names",
                    args.len(),
                    args.len()
                ))
                .at(var_span, "the loop target")
                .help("write `for a, b in zip(x, y):`"),
            );
            return None;
        }
        let mut n = i64::MAX;
        let mut values = vec![];
        for (a, target) in args.iter().zip(targets) {
            let (len, v) = self.iterable(index, a, "zip")?;
            n = n.min(len);
            values.push((target.clone(), v));
        }
        Some((n, values))
    }

    /// A loop over a tuple (or list) literal of numbers, or of tuples of
    /// numbers unpacked into as many names (`for dx, dy in ((0, 1), (1,
    /// 0)):`): its length and each target's value at `index`, `e0 if index
    /// == 0 else e1 if index == 1 else ...` (literals, so evaluating them
    /// in the loop is evaluating them once before it, as Python does; a
    /// literal stays a weak Python number).
    fn literal_elements(
        &mut self,
        index: &str,
        var: (&str, Span),
        unpack: &[(String, Span)],
        items: &[ast::Expr],
        span: Span,
    ) -> Option<(i64, Vec<TargetValue>)> {
        let fail = |this: &mut Self, at: Span, msg: String, label: &str, help: &str| {
            this.error(
                Diagnostic::error(msg)
                    .at(at, label.to_string())
                    .help(help.to_string()),
            );
            None
        };
        if items.is_empty() {
            return fail(
                self,
                span,
                "a loop over an empty tuple never runs".into(),
                "empty",
                "remove the loop",
            );
        }
        let targets: Vec<(String, Span)> = match unpack {
            [] => vec![(var.0.to_string(), var.1)],
            u => u.to_vec(),
        };
        // one column of values per target
        let mut cols: Vec<Vec<ast::Expr>> = vec![vec![]; targets.len()];
        for it in items {
            let parts = match (&it.kind, unpack.is_empty()) {
                (ast::ExprKind::Tuple(parts), false) if parts.len() == targets.len() => {
                    parts.clone()
                }
                (ast::ExprKind::Tuple(parts), false) => {
                    return fail(
                        self,
                        it.span,
                        format!(
                            "this element has {} values, the loop target {} names",
                            parts.len(),
                            targets.len()
                        ),
                        "wrong number of values",
                        "give every element as many values as the target has names",
                    )
                }
                (ast::ExprKind::Tuple(_), true) => {
                    return fail(
                        self,
                        it.span,
                        "the elements of this loop are tuples: unpack them into names".into(),
                        "a tuple",
                        "write `for a, b in ((1, 2), (3, 4)):`",
                    )
                }
                (_, false) => {
                    return fail(
                        self,
                        it.span,
                        format!("cannot unpack a number into {} names", targets.len()),
                        "not a tuple",
                        "give every element as a tuple: `for a, b in ((1, 2), (3, 4)):`",
                    )
                }
                (_, true) => vec![it.clone()],
            };
            for (col, p) in cols.iter_mut().zip(parts) {
                if !p.is_number_literal() {
                    return fail(
                        self,
                        p.span,
                        "the elements of a loop over a tuple must be number literals".into(),
                        "not a number literal",
                        "loop over `range(n)` and read the values from an array argument",
                    );
                }
                col.push(p);
            }
        }
        let values = targets
            .into_iter()
            .zip(cols)
            .map(|(t, col)| (t, select_chain(index, col, span)))
            .collect();
        Some((items.len() as i64, values))
    }

    /// `reversed(range(...))` as a `range` counting down: `range(n)` is
    /// `range(n - 1, -1, -1)`, `range(a, b)` is `range(b - 1, a - 1, -1)`,
    /// and `range(a, b, s)` (a constant `s`) is `range(last, a - s, -s)`
    /// with `last = a + (b - a - 1) // s * s` (for `s < 0`:
    /// `a + (a - b - 1) // -s * s`), which is empty when the range is.
    fn reversed_range(
        &mut self,
        range: &ast::Expr,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<ast::Expr> {
        let int = |v: i64| ast::Expr::int(v, span);
        let bin = |op, l, r| ast::Expr::binary(op, l, r, span);
        use crate::ir::BinOp::{Add, FloorDiv, Mul, Sub};
        let (start, stop, step) = match args {
            [n] => (bin(Sub, n.clone(), int(1)), int(-1), -1),
            [a, b] => (bin(Sub, b.clone(), int(1)), bin(Sub, a.clone(), int(1)), -1),
            [a, b, s] => {
                let Some(s) = self
                    .lower_expr(s)
                    .and_then(|t| self.known_int(&t.e))
                    .filter(|s| *s != 0)
                else {
                    self.error(non_constant_step(s.span));
                    // (the loop lowered over `range(a, b)`: its body and
                    // the name after it as Python has them, so the one
                    // error is the step's)
                    return Some(ast::Expr::call(
                        range.clone(),
                        vec![a.clone(), b.clone()],
                        span,
                    ));
                };
                // the number of steps to the last value
                let span_len = match s > 0 {
                    true => bin(Sub, bin(Sub, b.clone(), a.clone()), int(1)),
                    false => bin(Sub, bin(Sub, a.clone(), b.clone()), int(1)),
                };
                let k = bin(FloorDiv, span_len, int(s.abs()));
                let last = bin(Add, a.clone(), bin(Mul, k, int(s)));
                (last, bin(Sub, a.clone(), int(s)), -s)
            }
            _ => {
                self.error(
                    Diagnostic::error(format!(
                        "`range` takes 1 to 3 arguments but {} were given",
                        args.len()
                    ))
                    .at(span, "invalid `range`"),
                );
                return None;
            }
        };
        Some(ast::Expr::call(
            range.clone(),
            vec![start, stop, int(step)],
            span,
        ))
    }

    /// An argument of `enumerate` / `zip`: an array or a slice (as
    /// [`Self::element`]), else an error pointing at it.
    fn iterable(&mut self, index: &str, x: &ast::Expr, what: &str) -> Option<(i64, ast::Expr)> {
        if let ast::ExprKind::Call { func, args, .. } = &x.kind {
            match self.builtin_of(func) {
                Some(Builtin::Range) => return self.range_elements(index, args, x.span, what),
                // `reversed(x)`: the element at `n - 1 - index`
                Some(Builtin::Reversed) if args.len() == 1 => {
                    let (n, mut v) = self.iterable(index, &args[0], what)?;
                    let span = x.span;
                    let back = ast::Expr::binary(
                        crate::ir::BinOp::Sub,
                        ast::Expr::int(n - 1, span),
                        ast::Expr::name(index, span),
                        span,
                    );
                    super::inline::subst_expr(&mut v, &[(index.to_string(), back)]);
                    return Some((n, v));
                }
                _ => {}
            }
        }
        // a list (`enumerate([0.25, 0.5])`): its element at the index, as
        // NumPy's array of the list has it, where reading the items in the
        // loop reads what Python read before it
        let tuple = match &x.kind {
            ast::ExprKind::Tuple(items) => Some(ast::Expr::list(items.clone(), x.span)),
            _ => None,
        };
        let x = tuple.as_ref().unwrap_or(x);
        if let Some(items) = x.list_items() {
            if items.is_empty() {
                self.error(
                    Diagnostic::error("a loop over an empty list never runs")
                        .at(x.span, "empty")
                        .help("remove the loop"),
                );
                return None;
            }
            let weak = self.python_list(x, "of this loop")??;
            if let Some(m) = self.changing_name(x) {
                self.error(
                    Diagnostic::error(format!(
                        "the list of this loop reads `{m}`, which changes in the function"
                    ))
                    .at(x.span, format!("reads `{m}`"))
                    .note("Python makes the list before the loop; parpy reads its items where the loop uses them")
                    .help("name the list before the loop (`v = np.array([...])`) and loop over the name"),
                );
                return None;
            }
            // Python numbers stay Python numbers (weak), as the loop reads
            // them; NumPy values are one type, the array's
            let element = match weak {
                true => select_chain(index, items.to_vec(), x.span),
                false => ast::Expr {
                    kind: ast::ExprKind::Subscript {
                        value: Box::new(x.clone()),
                        indices: vec![ast::Expr::name(index, x.span)],
                    },
                    span: x.span,
                },
            };
            return Some((items.len() as i64, element));
        }
        let e = self.element(index, x);
        if e.is_none() {
            self.error(
                Diagnostic::error(format!(
                    "`{what}` takes arrays, slices of arrays, lists and ranges"
                ))
                .at(x.span, "not an array, slice or range")
                .help("loop over an index: `for i in range(n):`"),
            );
        }
        e
    }

    /// `(lo, hi, step)` of `range(args)` when they are known when compiling
    /// (the step not zero).
    pub(super) fn known_range(&mut self, args: &[ast::Expr]) -> Option<(i64, i64, i64)> {
        let consts: Option<Vec<i64>> = args
            .iter()
            .map(|a| self.lower_expr(a).and_then(|t| self.known_int(&t.e)))
            .collect();
        match consts?.as_slice() {
            [n] => Some((0, *n, 1)),
            [a, b] => Some((*a, *b, 1)),
            [a, b, s] if *s != 0 => Some((*a, *b, *s)),
            _ => None,
        }
    }

    /// A `range(...)` given to `enumerate` / `zip` (its bounds known when
    /// compiling): its length and its value `lo + index * step`.
    fn range_elements(
        &mut self,
        index: &str,
        args: &[ast::Expr],
        span: Span,
        what: &str,
    ) -> Option<(i64, ast::Expr)> {
        let (lo, hi, step) = match self.known_range(args) {
            Some(r) => r,
            None => {
                self.error(
                    Diagnostic::error(format!(
                        "a `range` in `{what}` needs bounds known when compiling"
                    ))
                    .at(span, "not constant")
                    .help(
                        "loop over the range itself and count: `for j in range(a, b): i = j - a`",
                    ),
                );
                return None;
            }
        };
        let n = range_len(lo, hi, step);
        use crate::ir::BinOp::{Add, Mul};
        let at = ast::Expr::binary(
            Mul,
            ast::Expr::name(index, span),
            ast::Expr::int(step, span),
            span,
        );
        let value = ast::Expr::binary(Add, ast::Expr::int(lo, span), at, span);
        Some((n, value))
    }

    fn for_loop(
        &mut self,
        var: &str,
        var_span: Span,
        iter: &ast::Expr,
        body: &[ast::Stmt],
        labels: Vec<String>,
    ) -> Option<StmtKind> {
        let args = match &iter.kind {
            ast::ExprKind::Call { func, args, .. }
                if self.builtin_of(func) == Some(Builtin::Range) =>
            {
                args
            }
            ast::ExprKind::Call { func, .. } if matches!(&func.kind, ast::ExprKind::Name(n) if n == "range") =>
            {
                // `range(...)` as written, but the name is not the builtin
                let what = if self.is_local_root(func) {
                    "a local variable of this function".to_string()
                } else {
                    match self.resolve_path(&["range"]) {
                        Resolved::Function { .. } => "a Python function of the module".into(),
                        Resolved::Unsupported(d) => d,
                        Resolved::Builtin(_) => "a parpy builtin".into(),
                        _ => "a module-level name".into(),
                    }
                };
                self.error(
                    Diagnostic::error("`range` here is not Python's builtin `range`")
                        .at(func.span, format!("`range` names {what} here"))
                        .note(
                            "a name `range` of the module (or of the function) hides the \
                             builtin, and `for` loops iterate over the builtin's `range(...)`, \
                             an array or a slice of one",
                        )
                        .help("rename that `range`, so that `range` is the builtin again"),
                );
                return None;
            }
            _ => {
                self.error(
                    Diagnostic::error(
                        "`for` loops must iterate over `range(...)`, an array or a slice of one",
                    )
                    .at(iter.span, "not a `range` call")
                    .help("write `for i in range(n):`"),
                );
                return None;
            }
        };
        if args.is_empty() || args.len() > 3 {
            self.error(
                Diagnostic::error(format!(
                    "`range` takes 1 to 3 arguments but {} were given",
                    args.len()
                ))
                .at(iter.span, "invalid `range`"),
            );
            return None;
        }
        if let Some(lowered) =
            self.run_time_step(var, var_span, args, iter.span, body, &labels, false)
        {
            return lowered;
        }
        let int_ty = self.opts.int_type;
        let bound = |this: &mut Self, e: &ast::Expr| {
            let t = this.lower_expr(e)?;
            if this
                .exact_python_int(&t)
                .is_some_and(|c| c > i64::MAX as i128)
            {
                // (its 64 bits read as an int64 are negative: the loop ran
                // no iteration)
                this.error(
                    Diagnostic::error("a `range` bound of 2**63 or more is past parpy's 64-bit loop counters")
                        .at(e.span, "2**63 or more")
                        .help("write the last value the loop takes plus one, below 2**63 (`range(a, 2**63 - 1)` stops before 2**63 - 1)"),
                );
                return None;
            }
            if t.e.ty == Type::Scalar(ElemTy::Bool) && !t.weak {
                // (a Python bool is an int to `range`, a NumPy one is not)
                this.error(
                    Diagnostic::error("'numpy.bool' object cannot be interpreted as an integer")
                        .at(e.span, "a NumPy bool")
                        .note("Python's `range` takes Python ints and bools and NumPy integers, not NumPy bools")
                        .help("convert it with `int(...)`")
                        .type_error(),
                );
                return None;
            }
            this.index_value(t, "a `range` bound")
        };
        let (lo, hi) = if args.len() == 1 {
            (
                Some(ir::Expr::int(0, int_ty, iter.span)),
                bound(self, &args[0]),
            )
        } else {
            (bound(self, &args[0]), bound(self, &args[1]))
        };
        let step = match args.get(2) {
            None => Some(1),
            Some(s) => {
                let c = self.lower_expr(s).and_then(|t| self.known_int(&t.e));
                match c {
                    Some(c) if c != 0 => Some(c),
                    _ => {
                        self.error(non_constant_step(s.span));
                        None
                    }
                }
            }
        };
        // A local of the same name (Python has one scope per function) gets
        // the index at the start of each iteration, so that after the loop
        // it holds the last value, or its old one when the loop ran zero
        // times. Not in a labelled (possibly parallel) loop: every iteration
        // would write the same variable.
        let mut copy_to = None;
        let mut breaks = false;
        super::inline::own_breaks(body, &mut breaks);
        // The body assigns the name (`i = i * 10`): Python's next iteration
        // takes the next value of the range regardless, so the body's name
        // is a local copied from the counter at the start of each iteration
        // (the local that holds the name after the loop where there is one)
        let assigned = assigns_name(body, var);
        // The name of an enclosing loop's variable: Python's one `i` holds
        // this loop's last value after it (the enclosing loop's when this
        // one runs zero times). A new local takes that role: set from the
        // enclosing counter before the loop, from this one in each
        // iteration. After a labelled loop the name is not defined.
        let mut reused: Option<Option<(ir::VarId, ir::VarId)>> = None;
        // A local the loop's counter cannot be copied into (the loop is
        // labelled, or the local is no integer): Python rebinds the name, so
        // the counter shadows it, and after the loop the name holds the
        // last value (when known), the local (no iterations) or nothing
        let mut shadowed = false;
        let before = self
            .scope
            .get(var)
            .filter(|b| !self.loop_last.contains(&b.var));
        if let Some(b) = before {
            let old = self.func.var(b.var);
            let kind = old.kind;
            let int_local = kind == VarKind::Local
                && old.ty.elem().is_some_and(|t| t.is_int())
                && !old.ty.is_array();
            if int_local && labels.is_empty() {
                copy_to = Some(b.var);
            } else if kind == VarKind::LoopIndex {
                let (outer, ty) = (b.var, old.ty.clone());
                reused = Some(None);
                if labels.is_empty() {
                    let local = self.new_var(var, ty, VarKind::Local, var_span);
                    copy_to = Some(local);
                    reused = Some(Some((outer, local)));
                }
            } else if kind == VarKind::Local && !old.ty.is_array() {
                shadowed = true;
            } else {
                let what = if kind == VarKind::Param {
                    "parameter"
                } else {
                    "local variable"
                };
                self.error(
                    Diagnostic::error(format!(
                        "the loop variable `{var}` is already used as a {what}"
                    ))
                    .at(var_span, "already defined")
                    .help("use a fresh name for the loop variable"),
                );
                return None;
            }
        }
        // Python's name keeps the last value after the loop: known when the
        // loop runs a known number of times (one or more) and has no
        // `break` (a local set before the loop holds it); else, in code no
        // mapped loop runs, a local assigned the counter in each iteration
        // (`carry`): unbound when the loop runs zero times, which
        // `unbound.rs` checks where it is read
        let known = |this: &Self, e: &Option<ir::Expr>| e.as_ref().and_then(|e| this.known_int(e));
        let last = match (known(self, &lo), known(self, &hi), step) {
            (Some(l), Some(h), Some(s)) if !breaks && !assigned => {
                let n = range_len(l, h, s);
                Some((n >= 1).then(|| l + (n - 1) * s))
            }
            _ => None,
        };
        // a body that assigns the name, run at least once without `break`:
        // after the loop the name holds what its last iteration assigned
        let assigned_last = assigned
            && !breaks
            && match (known(self, &lo), known(self, &hi), step) {
                (Some(l), Some(h), Some(s)) => range_len(l, h, s) >= 1,
                _ => false,
            };
        // (the counter first: it keeps the plain name in the code)
        let v = self.new_var(var, Type::Scalar(int_ty), VarKind::LoopIndex, var_span);
        let mut carry = None;
        if before.is_none() && labels.is_empty() && last.is_none() && self.device_depth == 0 {
            let old = self.scope.get(var).map(|b| b.var);
            let local = match old.filter(|o| self.carries.contains(o)) {
                Some(o) => o,
                None => {
                    let ty = Type::Scalar(int_ty);
                    let local = self.new_var(var, ty.clone(), VarKind::Local, var_span);
                    if let Some(o) = old {
                        // (an earlier loop's known last value, kept when
                        // this one runs zero times)
                        let value = super::types::convert(
                            ir::Expr::var(o, self.func.var(o).ty.clone(), var_span),
                            int_ty,
                        );
                        self.pre.push(ir::Stmt::new(
                            StmtKind::Assign {
                                dst: Place::Var(local),
                                value,
                            },
                            var_span,
                        ));
                    }
                    self.carries.insert(local);
                    self.loop_last.insert(local);
                    self.user_locals.insert(local);
                    local
                }
            };
            copy_to = Some(local);
            carry = Some(local);
        }
        let range = |e: &Option<ir::Expr>| e.as_ref().and_then(|e| self.range(e));
        if let (Some(lo), Some(hi), Some(s)) = (range(&lo), range(&hi), step) {
            self.loop_ranges
                .set(v, crate::ir::range::counter(lo, hi, s));
        }
        if assigned && copy_to.is_none() {
            let local = self.new_var(var, Type::Scalar(int_ty), VarKind::Local, var_span);
            self.user_locals.insert(local);
            copy_to = Some(local);
        }
        let body_var = copy_to.filter(|_| assigned);
        let prev = self.scope.bind(
            var,
            Binding {
                var: body_var.unwrap_or(v),
                weak: true,
            },
        );
        let mapped = labels.iter().any(|l| self.opts.parallelize.contains_key(l));
        self.device_depth += u32::from(mapped);
        let runs = match (known(self, &lo), known(self, &hi), step) {
            (Some(l), Some(h), Some(s)) => range_len(l, h, s) >= 1,
            _ => false,
        };
        let mut body = self.loop_body(body, runs);
        self.device_depth -= u32::from(mapped);
        // (an inner loop over the same name leaves its own last value in
        // it: the name's binding at the end of the body)
        let rebound = self
            .scope
            .get(var)
            .filter(|b| b.var != v && Some(b.var) != body_var);
        if let Some(local) = copy_to {
            let ty = self.func.var(local).ty.clone();
            let e = ir::Expr::var(v, Type::Scalar(int_ty), var_span);
            let value = match ty.elem() {
                Some(t) => super::types::convert(e, t),
                None => e,
            };
            body.insert(
                0,
                ir::Stmt::new(
                    StmtKind::Assign {
                        dst: Place::Var(local),
                        value,
                    },
                    var_span,
                ),
            );
        }
        // (a local holding an earlier loop's last value is replaced)
        let old = prev;
        let prev = prev.filter(|p| !self.loop_last.contains(&p.var) && !shadowed);
        match (prev, reused) {
            (_, Some(Some((outer, local)))) => {
                let ty = self.func.var(outer).ty.clone();
                self.pre.push(ir::Stmt::new(
                    StmtKind::Assign {
                        dst: Place::Var(local),
                        value: ir::Expr::var(outer, ty, var_span),
                    },
                    var_span,
                ));
                self.scope.bind(
                    var,
                    Binding {
                        var: local,
                        weak: true,
                    },
                );
            }
            (Some(p), None) => {
                self.scope.bind(var, p);
            }
            _ => {
                match (last, old, rebound, carry) {
                    (Some(Some(_)), _, Some(b), _) => {
                        self.scope.bind(var, b);
                    }
                    (None, _, b, None) if assigned_last && (b.is_some() || body_var.is_some()) => {
                        let b = b.or(body_var.map(|var| Binding { var, weak: true }));
                        self.scope.bind(var, b.expect("a binding"));
                    }
                    (_, _, None, Some(c)) => {
                        self.scope.bind(var, Binding { var: c, weak: true });
                    }
                    // no iterations: the name keeps what it held
                    (Some(None), Some(p), _, _) => {
                        self.scope.bind(var, p);
                    }
                    // ... or stays unbound: a read is Python's
                    // UnboundLocalError (`unbound.rs`), as where the count
                    // is known only when the code runs
                    (Some(None), None, None, None) if labels.is_empty() => {
                        let ty = Type::Scalar(int_ty);
                        let local = self.new_var(var, ty, VarKind::Local, var_span);
                        self.user_locals.insert(local);
                        self.scope.bind(
                            var,
                            Binding {
                                var: local,
                                weak: true,
                            },
                        );
                    }
                    (Some(Some(v)), _, None, _) => {
                        let ty = Type::Scalar(int_ty);
                        let local = self.new_var(var, ty, VarKind::Local, var_span);
                        self.pre.push(ir::Stmt::new(
                            StmtKind::Assign {
                                dst: Place::Var(local),
                                value: ir::Expr::int(v, int_ty, var_span),
                            },
                            var_span,
                        ));
                        self.loop_last.insert(local);
                        self.scope.bind(
                            var,
                            Binding {
                                var: local,
                                weak: true,
                            },
                        );
                    }
                    _ => {
                        self.scope.unbind(var);
                        self.ended_loop_vars.insert(var.to_string());
                    }
                }
            }
        }
        // Python evaluates the bounds of `range` once, before the loop; C
        // tests the condition `k < hi` every iteration. A bound that reads
        // what the body writes (`range(n[0])` with `n[0] = ...` inside) is
        // read once, into a local, in front of the loop.
        let hi = hi.map(|h| {
            let mut reads = std::collections::BTreeSet::new();
            crate::ir::visit::expr_uses(&h, &mut reads);
            let written = crate::ir::visit::written(&body);
            if reads.is_disjoint(&written) {
                return h;
            }
            let (ty, span) = (h.ty.clone(), h.span);
            let t = self.new_var("hi", ty.clone(), VarKind::Local, span);
            self.pre.push(ir::Stmt::new(
                StmtKind::Assign {
                    dst: Place::Var(t),
                    value: h,
                },
                span,
            ));
            ir::Expr::var(t, ty, span)
        });
        Some(StmtKind::For(Box::new(ForLoop {
            var: v,
            lo: lo?,
            hi: hi?,
            step: step?,
            body,
            labels,
            par: None,
            reduction: None,
            wants_reduction: false,
            unroll: false,
        })))
    }

    pub(super) fn assign(
        &mut self,
        target: &ast::Expr,
        value: &ast::Expr,
        labels: &[(String, Span)],
        span: Span,
    ) -> Option<Vec<ir::Stmt>> {
        if self.is_slice_target(target) {
            return self.slice_assign(target, value, labels, span);
        }
        if let ast::ExprKind::Name(n) = &target.kind {
            if let Some(r) = self.local_array_assign(n, value, labels, span) {
                return r;
            }
            // `t = y.T`, `f = np.flip(y)`, `r = y.reshape(3, 2)`: a view
            if let Some(r) = self.view_assign(n, value) {
                return r;
            }
            if let Some(r) = self.local_copy_assign(n, value, labels, span) {
                return r;
            }
        }
        if let (ast::ExprKind::Name(n), true) = (&target.kind, labels.is_empty()) {
            if let Some(r) = self.expr_view_assign(n, value, span) {
                return r;
            }
        }
        self.red_labels = (!labels.is_empty()).then(|| labels.to_vec());
        self.red_labels_used = false;
        let r = self.scalar_assign(target, Value::Ast(value));
        let used = std::mem::take(&mut self.red_labels_used);
        if self.red_labels.take().is_some() && !used {
            self.label_error(labels, span);
        }
        r.map(|k| vec![ir::Stmt::new(k, span)])
    }

    /// Is `target` a slice (`a[i, :]`) or an under-indexed array (`a[i]`
    /// of a matrix)?
    pub(super) fn is_slice_target(&self, target: &ast::Expr) -> bool {
        has_slice(target) || {
            let (n, depth) = subscript_depth(target);
            n.and_then(|n| self.scope.get(n))
                .map(|b| self.alias_of(b.var).map_or(b.var, |c| c[0]))
                .map(|v| match &self.func.var(v).ty {
                    Type::Array { shape, .. } => depth > 0 && depth < shape.len(),
                    _ => false,
                })
                .unwrap_or(false)
        }
    }

    /// `target = value` for a name or an element; the value is lowered here
    /// (after the target's indices, as Python evaluates them) or was
    /// lowered before (multiple assignments).
    pub(super) fn scalar_assign(
        &mut self,
        target: &ast::Expr,
        value: Value<'_>,
    ) -> Option<StmtKind> {
        match &target.kind {
            ast::ExprKind::Name(n) => {
                let v = match value {
                    Value::Ast(e) => {
                        if let Some(s) = self.row_assign(n, e) {
                            return s;
                        }
                        if let Some(s) = self.alias_assign(n, e, target.span) {
                            return s;
                        }
                        let outer = self.name_target.replace((n.clone(), target.span));
                        let t = self.lower_expr(e);
                        self.name_target = outer;
                        t
                    }
                    Value::Lowered(t) => t,
                };
                match self.scope.get(n) {
                    Some(b) => {
                        let var = self.func.var(b.var).clone();
                        // a Local with a value is a constant argument of an
                        // inlined helper: a parameter
                        if var.kind != VarKind::Local || var.value.is_some() {
                            let what = if var.kind != VarKind::LoopIndex {
                                "parameter"
                            } else {
                                "loop variable"
                            };
                            let help = if var.ty.is_array() {
                                format!("to write its elements, assign to `{n}[...]` or `{n}[:]`")
                            } else {
                                format!("assign to a new local variable instead of `{n}`")
                            };
                            self.error(
                                Diagnostic::error(format!("cannot assign to the {what} `{n}`"))
                                    .at(target.span, format!("`{n}` is a {what}"))
                                    .help(help),
                            );
                            return None;
                        }
                        let elem = var.ty.elem()?;
                        let v = v?;
                        let vt = self.scalar_elem(&v)?;
                        // (the value of an inlined helper's early returns:
                        // values of other types on two paths are the
                        // helper's error, as where it is not inlined)
                        let returned = n.starts_with(super::inline::RETURN_VALUE);
                        let assigned = match returned {
                            true => {
                                let helper = self.inlined_from.clone().unwrap_or_default();
                                format!("`{helper}` returns")
                            }
                            false => format!("`{n}` is assigned"),
                        };
                        if returned {
                            let differ =
                                self.path_types_differ((elem, b.weak, None), (vt, v.weak, None));
                            if let Some(words) = differ {
                                self.path_types_error(&assigned, words, var.span, v.e.span);
                                return None;
                            }
                        }
                        let literal = self.acc_uses.get(&b.var).map(|u| u.0.clone());
                        // (a local that starts as a Python number and then
                        // holds NumPy values is of their type, `typed_by_use`:
                        // the number must be one of its values)
                        let rounded = literal
                            // (one the local's type cannot hold has its
                            // own error below: `acc = -1; acc += xu64[i]`)
                            .filter(|_| !v.weak && b.weak && vt != ElemTy::Bool && widens(vt, elem))
                            .and_then(|lit| match lit.kind {
                                ExprKind::Float(f) if !vt.is_float() => Some(format!("{f:?}")),
                                _ => self.python_number_changed(&TExpr { e: lit, weak: true }, vt),
                            });
                        if let Some(c) = rounded {
                            // (`a = 1e300`, and on another path reaching
                            // the same reads `a = x32[i]`: one `float32`
                            // would round the Python float; `best = -1`
                            // and `best = xu8[i]`: no uint8 is -1)
                            self.python_number_join_error(&assigned, vt, &c, v.e.span, var.span);
                            return None;
                        }
                        if vt.is_float() && !elem.is_float() {
                            // Python would rebind the name to a float; we
                            // cannot change the variable's type.
                            let d = rebind_error(n, elem, vt, v.e.span, var.span).help(format!(
                                "give `{n}` a float type from its first assignment (e.g. `{n} = 0.0`), or convert with `int(...)`"
                            ));
                            // (unless it is a Python int's accumulator of
                            // that float, which `typed_by_use` types so)
                            let first = self
                                .acc_uses
                                .get_mut(&b.var)
                                .filter(|u| !v.weak && matches!(u.0.kind, ExprKind::Int(_)));
                            if let Some(u) = first {
                                u.1.push((vt, false));
                                self.int_rebinds.push((var.span, d));
                                return Some(StmtKind::Assign {
                                    dst: Place::Var(b.var),
                                    value: convert(v.e, elem),
                                });
                            }
                            self.error(d);
                            return None;
                        }
                        if let Some(u) = self.acc_uses.get_mut(&b.var) {
                            // (weak only through the local itself: `t = t
                            // * 100` is of the local's type once it has one)
                            // (after a strong value was stored: before
                            // it, the local may still hold a Python int)
                            let strong_before = u.1.iter().any(|s| !s.1);
                            if v.weak && strong_before && crate::ir::visit::uses_var(&v.e, b.var) {
                                u.2.push(vt);
                            } else {
                                u.1.push((vt, v.weak));
                            }
                        }
                        if elem == ElemTy::Bool
                            && vt != ElemTy::Bool
                            && self.join_bool_local(var.span, vt, v.weak, !b.weak)
                        {
                            // (an int re-binds a bool local: the int, not
                            // its truth; lowered again with an int local)
                            return Some(StmtKind::Assign {
                                dst: Place::Var(b.var),
                                value: convert(v.e, elem),
                            });
                        }
                        if !v.weak && self.widen_local(var.span, elem, vt) {
                            // lowered again with the variable of the
                            // wider type; this pass's IR is dropped
                            return Some(StmtKind::Assign {
                                dst: Place::Var(b.var),
                                value: convert(v.e, elem),
                            });
                        }
                        // (Python re-binds the name; parpy keeps one type
                        // per local, its first assignment's)
                        if !v.weak && !widens(vt, elem) && vt.is_float() && elem.is_float() {
                            self.error(
                                rebind_error(n, elem, vt, v.e.span, var.span)
                                    .note(format!(
                                        "Python re-binds the name to the new value; parpy gives `{n}` one type, its first assignment's, and `{elem}` would round this `{vt}`"
                                    ))
                                    .help(format!(
                                        "use a new name for this value, or give `{n}` the wider type where it is first assigned (`np.{}(...)`)",
                                        vt.numpy_name()
                                    ))
                                    .type_error(),
                            );
                            return None;
                        }
                        let outside = self
                            .exact_python_int(&v)
                            .filter(|c| !super::assign::python_int_held(*c, elem));
                        if let Some(c) = outside {
                            self.error(
                                Diagnostic::error(format!(
                                    "variable `{n}` holds `{}` values but this assigns the Python int {c}, which `{}` cannot hold",
                                    elem.numpy_name(),
                                    elem.numpy_name()
                                ))
                                .at(v.e.span, "a Python int")
                                .also(var.span, format!("`{n}` was first assigned here"))
                                .note(format!(
                                    "Python re-binds the name to the int; parpy gives `{n}` one type, its first assignment's"
                                ))
                                .help(format!(
                                    "use a new name for this value, or give `{n}` a type that holds it where it is first assigned (`int(...)`)"
                                ))
                                .type_error(),
                            );
                            return None;
                        }
                        if !v.weak && !widens(vt, elem) && vt.is_int() && elem.is_int() {
                            // (a Python int's accumulator of uint64 values,
                            // `acc = 0; acc += x[i]`: a uint64 from its
                            // first update on, which `typed_by_use` types
                            // so when the literal is a uint64)
                            let literal = self
                                .acc_uses
                                .get(&b.var)
                                .map(|u| u.0.clone())
                                .filter(|l| matches!(l.kind, ExprKind::Int(_)));
                            if let Some(lit) = literal {
                                let d = if super::assign::exact_in(&lit, vt) {
                                    rebind_error(n, elem, vt, v.e.span, var.span)
                                } else {
                                    let ExprKind::Int(c) = lit.kind else {
                                        unreachable!()
                                    };
                                    let t = vt.numpy_name();
                                    Diagnostic::error(format!(
                                        "variable `{n}` starts as the Python int {c}, which `{t}` cannot hold, and is then assigned `{t}` values"
                                    ))
                                    .at(v.e.span, format!("this has type `{vt}`"))
                                    .also(var.span, format!("`{n}` was first assigned here"))
                                    .note(format!(
                                        "Python holds the int until the first update makes `{n}` a \
                                         `{t}` (NEP 50: `{c} + x` of a `{t}` raises `OverflowError`); \
                                         parpy gives `{n}` one type"
                                    ))
                                    .help(format!(
                                        "start `{n}` at a value `{t}` holds (`{n} = 0`)"
                                    ))
                                    .type_error()
                                };
                                self.int_rebinds.push((var.span, d));
                                return Some(StmtKind::Assign {
                                    dst: Place::Var(b.var),
                                    value: convert(v.e, elem),
                                });
                            }
                            self.error(
                                rebind_error(n, elem, vt, v.e.span, var.span)
                                .note(format!(
                                    "parpy gives `{n}` one type that holds every value assigned \
                                     to it; no integer type holds both `{elem}` and `{vt}` (NumPy \
                                     promotes them to a float)"
                                ))
                                .help(format!(
                                    "convert explicitly: `parpy.builtin.convert(e, parpy.types.{})`, \
                                     or use a new variable",
                                    elem.short_name().to_uppercase()
                                ))
                                .type_error(),
                            );
                            return None;
                        }
                        // (of the user's names and an inlined helper's
                        // returns, not sema's other hidden names)
                        let hidden = !returned
                            && (n.contains('@')
                                || (n.contains('#') && crate::diag::shown_names(n) == *n));
                        if !b.weak && elem.is_float() && !hidden {
                            // (a float local of NumPy values assigned a
                            // Python float it rounds, `a = x32[i]` and
                            // elsewhere `a = 1e300`)
                            if let Some(c) = self.python_number_changed(&v, elem) {
                                self.python_number_join_error(
                                    &assigned, elem, &c, var.span, v.e.span,
                                );
                                return None;
                            }
                        }
                        let e = self.store_convert(v, elem, target.span)?;
                        Some(StmtKind::Assign {
                            dst: Place::Var(b.var),
                            value: e,
                        })
                    }
                    None => {
                        let Some(v) = v else {
                            self.scope.mark_failed(n);
                            return None;
                        };
                        let retyped = self
                            .sh
                            .widened
                            .get(&target.span)
                            .or_else(|| self.retype.get(&target.span));
                        let (ty, v) = match retyped {
                            Some(&t) => {
                                // (a Python bool joined with a Python int
                                // is a Python int: still weak)
                                let weak = v.weak
                                    && t == self.opts.int_type
                                    && self.scalar_elem(&v) == Some(ElemTy::Bool);
                                (
                                    t,
                                    TExpr {
                                        e: convert(v.e, t),
                                        weak,
                                    },
                                )
                            }
                            None => (self.scalar_elem(&v)?, v),
                        };
                        if let Some(c) = self.exact_python_int(&v).filter(|c| *c > i64::MAX as i128)
                        {
                            // (its 64 bits as parpy's int64 would be negative)
                            self.error(
                                Diagnostic::error(format!(
                                    "the Python int {c} does not fit in the int64 local `{n}`"
                                ))
                                .at(v.e.span, "larger than 2**63 - 1")
                                .note("parpy keeps a Python int in an int64")
                                .help(format!(
                                    "use it where it is needed (`x[i] < {c}`), or make it a \
                                     uint64 (`np.uint64({c})`) or a float (`{:e}`)",
                                    c as f64
                                )),
                            );
                            return None;
                        }
                        let id = self.new_var(n, Type::Scalar(ty), VarKind::Local, target.span);
                        if !n.contains(['@', '.', '#']) {
                            self.user_locals.insert(id);
                        }
                        if v.weak
                            && matches!(
                                v.e.kind,
                                ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_)
                            )
                        {
                            self.acc_uses.insert(id, (v.e.clone(), vec![], vec![]));
                        } else if let Some(c) = self
                            .known_int(&v.e)
                            .filter(|_| v.weak && ty.is_int() && ty != ElemTy::Bool)
                        {
                            // (a Python int known when compiling: `total
                            // += 2` after `total = 0` binds a new variable
                            // of its own, `syntax::webs`)
                            let lit = ir::Expr::int(c, ty, v.e.span);
                            self.acc_uses.insert(id, (lit, vec![], vec![]));
                        }
                        self.scope.bind(
                            n,
                            Binding {
                                var: id,
                                weak: v.weak,
                            },
                        );
                        self.note_first_assignment(n, id, &v.e);
                        Some(StmtKind::Assign {
                            dst: Place::Var(id),
                            value: v.e,
                        })
                    }
                }
            }
            ast::ExprKind::Subscript { .. } => {
                let t = self.lower_subscript(target);
                let v = match (&t, &value) {
                    // Python picks one side, then the store converts it
                    (Some(Sub::Elem { elem, .. }), Value::Ast(e))
                        if matches!(
                            e.kind,
                            ast::ExprKind::IfExp { .. } | ast::ExprKind::BoolOp { .. }
                        ) =>
                    {
                        let outer = self.stored_select.replace((e.span, *elem, target.span));
                        let v = self.lower_expr(e);
                        self.stored_select = outer;
                        v
                    }
                    _ => self.value_of(value),
                };
                match t? {
                    Sub::Elem {
                        array,
                        indices,
                        elem,
                        alias,
                    } => {
                        let v = v?;
                        self.python_item_store(array, &v, target.span)?;
                        let e = self.store_convert(v, elem, target.span)?;
                        if let Some(sel) = alias {
                            return Some(self.alias_store(sel, indices, e, target.span));
                        }
                        Some(StmtKind::Assign {
                            dst: Place::Index { array, indices },
                            value: e,
                        })
                    }
                    Sub::Const(_) => {
                        self.error(
                            Diagnostic::error("cannot assign to an array's shape")
                                .at(target.span, "not assignable"),
                        );
                        None
                    }
                }
            }
            _ => {
                self.error(
                    Diagnostic::error("cannot assign to this expression")
                        .at(target.span, "not assignable"),
                );
                None
            }
        }
    }
}

/// The plain names an expression reads (not attribute names), in order.
pub(super) fn names_in<'a>(e: &'a ast::Expr, out: &mut Vec<&'a str>) {
    use ast::ExprKind as K;
    match &e.kind {
        K::Int(_) | K::Float(_) | K::Bool(_) | K::Str(_) | K::None | K::Ellipsis => {}
        K::Name(n) => out.push(n),
        K::Attr { value, .. } => {
            // `parpy.types.x` is a path, not a read of a name
            if !matches!(value.kind, K::Name(_) | K::Attr { .. }) {
                names_in(value, out);
            }
        }
        K::Subscript { value, indices } => {
            names_in(value, out);
            indices.iter().for_each(|i| names_in(i, out));
        }
        K::Slice { lo, hi, step } => {
            lo.iter()
                .chain(hi.iter())
                .chain(step.iter())
                .for_each(|x| names_in(x, out));
        }
        K::Unary { arg, .. } | K::Starred(arg) => names_in(arg, out),
        K::Binary { lhs, rhs, .. } => {
            names_in(lhs, out);
            names_in(rhs, out);
        }
        K::Compare { first, rest } => {
            names_in(first, out);
            rest.iter().for_each(|(_, x)| names_in(x, out));
        }
        K::BoolOp { values, .. } | K::Tuple(values) => {
            values.iter().for_each(|x| names_in(x, out));
        }
        K::IfExp { cond, then, else_ } => {
            names_in(cond, out);
            names_in(then, out);
            names_in(else_, out);
        }
        K::Call {
            func,
            args,
            keywords,
        } => {
            if !matches!(func.kind, K::Name(_) | K::Attr { .. }) {
                names_in(func, out);
            }
            args.iter().for_each(|x| names_in(x, out));
            keywords.iter().for_each(|k| names_in(&k.value, out));
        }
        K::Generator { elt, clauses, .. } => {
            // the names it reads, less its own targets
            let mut read = vec![];
            let mut own = vec![];
            for c in clauses {
                names_in(&c.iter, &mut read);
                own.extend(c.targets());
                c.ifs.iter().for_each(|x| names_in(x, &mut read));
            }
            names_in(elt, &mut read);
            out.extend(read.into_iter().filter(|n| !own.contains(n)));
        }
        K::Lambda { params, body } => {
            let mut read = vec![];
            names_in(body, &mut read);
            out.extend(read.into_iter().filter(|n| !params.iter().any(|p| p == n)));
        }
    }
}

/// A local of type `elem` (first assigned at `first`) assigned a `vt` at
/// `at` that it cannot hold; the caller adds why and the fix.
fn rebind_error(n: &str, elem: ElemTy, vt: ElemTy, at: Span, first: Span) -> Diagnostic {
    Diagnostic::error(format!(
        "variable `{n}` holds `{elem}` values but this assigns a `{vt}`"
    ))
    .at(at, format!("this has type `{vt}`"))
    .also(first, format!("`{n}` was first assigned here"))
}

/// The hidden index of `for v in x:` (not a Python identifier, so no name
/// of the program can be it).
fn iteration_index(var: &str) -> String {
    format!("{var}.index")
}

/// Puts `set` before each `break` of the loop whose body is `body` (not of
/// a loop inside it; an inner loop's `else:` belongs to this body); says
/// whether there was one.
fn mark_breaks(body: &mut Vec<ast::Stmt>, set: &ast::Stmt) -> bool {
    let mut found = false;
    let mut out = Vec::with_capacity(body.len());
    for mut s in std::mem::take(body) {
        match &mut s.kind {
            ast::StmtKind::Break => {
                found = true;
                out.push(ast::Stmt {
                    span: s.span,
                    ..set.clone()
                })
            }
            ast::StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                // both branches, even when the first has one
                let t = mark_breaks(then_body, set);
                found |= mark_breaks(else_body, set) | t;
            }
            ast::StmtKind::With { body, .. }
            | ast::StmtKind::For { orelse: body, .. }
            | ast::StmtKind::While { orelse: body, .. } => found |= mark_breaks(body, set),
            _ => {}
        }
        out.push(s);
    }
    *body = out;
    found
}

/// Python's `len(range(lo, hi, step))` (`step` not zero), also the number
/// of elements a normalized slice `lo:hi:step` selects.
pub(super) fn range_len(lo: i64, hi: i64, step: i64) -> i64 {
    let (lo, hi, step) = (lo as i128, hi as i128, step as i128);
    let n = if step > 0 {
        (hi - lo + step - 1).div_euclid(step)
    } else {
        (lo - hi - step - 1).div_euclid(-step)
    };
    n.clamp(0, i64::MAX as i128) as i64
}

/// `x[...]`: all of array `x`, as a target.
pub(super) fn all_of(x: &ast::Expr) -> ast::Expr {
    ast::Expr {
        kind: ast::ExprKind::Subscript {
            value: Box::new(x.clone()),
            indices: vec![ast::Expr {
                kind: ast::ExprKind::Ellipsis,
                span: x.span,
            }],
        },
        span: x.span,
    }
}

/// `e0 if index == 0 else e1 if index == 1 else ...` of the items `col`
/// (not empty).
fn select_chain(index: &str, mut col: Vec<ast::Expr>, span: Span) -> ast::Expr {
    let at = |k: usize| ast::Expr {
        kind: ast::ExprKind::Compare {
            first: Box::new(ast::Expr::name(index, span)),
            rest: vec![(crate::ir::BinOp::Eq, ast::Expr::int(k as i64, span))],
        },
        span,
    };
    let mut v = col.pop().expect("a tuple that is not empty");
    while let Some(e) = col.pop() {
        v = ast::Expr {
            kind: ast::ExprKind::IfExp {
                cond: Box::new(at(col.len())),
                then: Box::new(e),
                else_: Box::new(v),
            },
            span,
        };
    }
    v
}

/// A tuple loop target over what does not give tuples.
const TUPLE_TARGET: &str =
    "a tuple loop target needs `enumerate(...)`, `zip(...)` or an array of rows";
const TUPLE_TARGET_FIX: &str =
    "write `for i, v in enumerate(x):`, `for a, b in zip(x, y):` or `for a, b in pts[i]:` over rows of 2";

/// Does every path through `b` end in `return value` (or a `raise`, or
/// loop forever in a `while True:` with no `break`)?
fn always_returns(b: &[ir::Stmt]) -> bool {
    match b.last().map(|s| &s.kind) {
        Some(StmtKind::Return(Some(_))) => true,
        Some(StmtKind::Expr(e)) => matches!(
            &e.kind,
            ExprKind::Assert { cond, .. } if matches!(cond.kind, ExprKind::Bool(false))
        ),
        // (a condition known when compiling, `static_types_eq`, is lowered
        // as `if True:` holding the branch taken, with no `else`)
        Some(StmtKind::If {
            cond,
            then_body,
            else_body,
        }) => match cond.kind {
            ExprKind::Bool(true) => always_returns(then_body),
            ExprKind::Bool(false) => always_returns(else_body),
            _ => always_returns(then_body) && always_returns(else_body),
        },
        Some(StmtKind::While { cond, body }) => {
            matches!(cond.kind, ExprKind::Bool(true)) && ir::visit::loop_exits(body).is_empty()
        }
        _ => false,
    }
}

/// `s` may end its block early, or raise where Python would: a `return`,
/// `break`, `continue` or `assert` / `raise` anywhere inside it (the
/// statements after it may then not run: `Lowerer::unsure`).
fn may_leave(s: &ast::Stmt) -> bool {
    match &s.kind {
        ast::StmtKind::Return(_)
        | ast::StmtKind::Break
        | ast::StmtKind::Continue
        | ast::StmtKind::Assert { .. } => true,
        ast::StmtKind::For { body, orelse, .. } | ast::StmtKind::While { body, orelse, .. } => {
            body.iter().chain(orelse).any(may_leave)
        }
        ast::StmtKind::If {
            then_body,
            else_body,
            ..
        } => then_body.iter().chain(else_body).any(may_leave),
        ast::StmtKind::With { body, .. } => body.iter().any(may_leave),
        ast::StmtKind::Assign { .. }
        | ast::StmtKind::AugAssign { .. }
        | ast::StmtKind::Expr(_)
        | ast::StmtKind::Pass => false,
    }
}
