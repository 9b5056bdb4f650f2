//! Local arrays: `tmp = np.zeros(K)` (also `np.ones`, `np.empty`,
//! `np.full` and the `_like` forms) in jit code.
//!
//! The shape is known when compiling (constants, shapes, specialized scalar
//! arguments). The array is a local variable of the function, which the
//! back ends declare in the innermost block holding all its uses: inside a
//! parallel loop, each iteration has its own, as Python makes a new array
//! each time the statement runs. The statement fills it (`np.empty` with
//! zeros, so no run reads what another left), as NumPy does.

use crate::diag::{Diagnostic, Span};
use crate::ir::{ElemTy, Expr, Place, Stmt, StmtKind, Type, VarKind};
use crate::resolve::{Builtin, Resolved};
use crate::syntax::ast;

use super::scope::Binding;
use super::types::convert;
use super::Lowerer;

/// The most bytes one local array may take: it lives in a GPU thread's
/// local memory or on a CPU thread's stack.
pub(super) const MAX_LOCAL_ARRAY_BYTES: i64 = 16 * 1024;

/// The NumPy functions that make a local array, and whether each takes an
/// array whose shape it copies (`_like`) and a fill value.
fn allocation(name: &str) -> Option<(bool, bool)> {
    Some(match name {
        "zeros" | "ones" | "empty" => (false, false),
        "full" => (false, true),
        "zeros_like" | "ones_like" | "empty_like" => (true, false),
        "full_like" => (true, true),
        _ => return None,
    })
}

impl Lowerer<'_, '_> {
    /// `name = np.zeros(shape, dtype)` and the other allocations: the
    /// statements that fill the new local array, in loops that the
    /// statement's labels parallelize (`Some(None)` after an error); `None`
    /// when `value` is not such a call.
    pub(super) fn local_array_assign(
        &mut self,
        name: &str,
        value: &ast::Expr,
        labels: &[(String, Span)],
        span: Span,
    ) -> Option<Option<Vec<Stmt>>> {
        let ast::ExprKind::Call {
            func,
            args,
            keywords,
        } = &value.kind
        else {
            return None;
        };
        let path = func.dotted_path()?;
        if self.scope.get(path[0]).is_some() {
            return None;
        }
        let Resolved::Allocates(what) = self.resolver.resolve(&path) else {
            return None;
        };
        let function = what.strip_prefix("numpy.")?;
        let (like, fill) = allocation(function)?;
        let call = format!("np.{function}");
        let r = self
            .local_array(name, &call, (like, fill), args, keywords, value.span, span)
            .and_then(|(shape, fill)| {
                // the labels of the statement parallelize the fill
                let per_dim = self.labels_per_dim(labels, shape.len(), span)?;
                let int_ty = self.opts.int_type;
                let (vars, body) = fill;
                Some(super::slices::loop_nest(
                    &vars, &shape, body, per_dim, None, int_ty, span,
                ))
            });
        if r.is_none() {
            self.scope.mark_failed(name);
        }
        Some(r)
    }

    /// The array's shape, and the store that fills it with the counters of
    /// the loops around it.
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn local_array(
        &mut self,
        name: &str,
        call: &str,
        (like, fill): (bool, bool),
        args: &[ast::Expr],
        keywords: &[ast::Keyword],
        at: Span,
        span: Span,
    ) -> Option<(Vec<i64>, (Vec<crate::ir::VarId>, Vec<Stmt>))> {
        // the parameters, positional or named, in NumPy's order
        let first = if like { "a" } else { "shape" };
        let mut names = vec![first];
        if fill {
            names.push("fill_value");
        }
        names.push("dtype");
        let mut given: Vec<Option<&ast::Expr>> = vec![None; names.len()];
        if args.len() > names.len() {
            self.error(
                Diagnostic::error(format!(
                    "`{call}` takes at most {} arguments in parpy functions",
                    names.len()
                ))
                .at(at, format!("{} given", args.len()))
                .help(format!("its parameters here are {}", names.join(", "))),
            );
            return None;
        }
        for (k, a) in args.iter().enumerate() {
            given[k] = Some(a);
        }
        for kw in keywords {
            let Some(k) = names.iter().position(|n| *n == kw.name) else {
                self.error(
                    Diagnostic::error(format!(
                        "`{call}` takes no keyword `{}` in parpy functions",
                        kw.name
                    ))
                    .at(kw.span, "not supported")
                    .help(format!("its parameters here are {}", names.join(", "))),
                );
                return None;
            };
            given[k] = Some(&kw.value);
        }
        let Some(shape_arg) = given[0] else {
            self.error(
                Diagnostic::error(format!("`{call}` needs its `{first}` argument"))
                    .at(at, "missing"),
            );
            return None;
        };
        let fill_arg = if fill {
            let Some(f) = given[1] else {
                self.error(
                    Diagnostic::error(format!("`{call}` needs its `fill_value` argument"))
                        .at(at, "missing"),
                );
                return None;
            };
            Some(f)
        } else {
            None
        };
        let dtype_arg = given[names.len() - 1].filter(|d| !matches!(d.kind, ast::ExprKind::None));
        let (shape, like_elem) = if like {
            let (s, e) = self.shape_of(shape_arg, call)?;
            (s, Some(e))
        } else {
            (self.shape_arg(shape_arg, call)?, None)
        };
        let value = match (fill_arg, call.trim_start_matches("np.")) {
            (Some(f), _) => self.lower_expr(f)?,
            (None, "ones" | "ones_like") => self.weak_int(1, at),
            (None, _) => self.weak_int(0, at),
        };
        let elem = match dtype_arg {
            Some(d) => self.allocation_dtype(d)?,
            None => match like_elem {
                Some(e) => e,
                // `np.full` takes its fill value's type (a Python int is
                // int64, a float float64); the others are float64
                None if fill => {
                    let t = value.e.ty.elem()?;
                    if value.weak && t.is_int() {
                        ElemTy::I64
                    } else if value.weak && t.is_float() {
                        ElemTy::F64
                    } else {
                        t
                    }
                }
                None => ElemTy::F64,
            },
        };
        let count: i64 = shape.iter().product();
        if count == 0 {
            self.error(
                Diagnostic::error(format!("`{call}` makes an array without elements"))
                    .at(shape_arg.span, "a dimension of length 0")
                    .help("give every dimension at least one element"),
            );
            return None;
        }
        let bytes = count.saturating_mul(elem.size() as i64);
        if bytes > MAX_LOCAL_ARRAY_BYTES {
            self.error(
                Diagnostic::error(format!(
                    "the local array `{name}` takes {bytes} bytes, more than the {MAX_LOCAL_ARRAY_BYTES} a parpy function may allocate"
                ))
                .at(at, format!("{count} elements of {}", elem.numpy_name()))
                .note("a local array lives in a GPU thread's local memory or on a CPU thread's stack")
                .help("allocate the array in Python and pass it as an argument"),
            );
            return None;
        }
        if !self.once.assigns_once(name) || self.scope.get(name).is_some() {
            self.error(
                Diagnostic::error(format!(
                    "`{name}` is assigned a new array here and is assigned elsewhere too"
                ))
                .at(at, "a new array")
                .note("a local array keeps one name, shape and type in the whole function")
                .help("give each array its own name"),
            );
            return None;
        }
        let var = self.new_var(
            name,
            Type::Array {
                elem,
                shape: shape.clone(),
            },
            VarKind::Local,
            span,
        );
        self.scope.bind(name, Binding { var, weak: false });
        // fill it: one loop per dimension around the store
        let int_ty = self.opts.int_type;
        let mut ctx = super::slices::SliceCtx::default();
        self.init_ctx(&mut ctx, shape.clone(), span);
        let vars = ctx.vars().to_vec();
        let store = Stmt::new(
            StmtKind::Assign {
                dst: Place::Index {
                    array: var,
                    indices: vars
                        .iter()
                        .map(|v| Expr::var(*v, Type::Scalar(int_ty), span))
                        .collect(),
                },
                value: convert(value.e, elem),
            },
            span,
        );
        Some((shape, (vars, vec![store])))
    }

    /// The dimensions of a new array: an integer or a tuple of them, each
    /// known when compiling.
    fn shape_arg(&mut self, e: &ast::Expr, call: &str) -> Option<Vec<i64>> {
        let items: Vec<&ast::Expr> = match &e.kind {
            ast::ExprKind::Tuple(items) => items.iter().collect(),
            _ => vec![e],
        };
        let mut shape = vec![];
        for item in items {
            let t = self.lower_expr(item)?;
            let i = self.index_value(t, "a dimension")?;
            let Some(n) = self.known_int(&i) else {
                self.error(
                    Diagnostic::error(format!(
                        "the shape of `{call}` must be known when compiling"
                    ))
                    .at(item.span, "not a constant")
                    .help("use constants, shapes (`x.shape[0]`) or specialized scalar arguments"),
                );
                return None;
            };
            if n < 0 {
                self.error(
                    Diagnostic::error(format!("negative dimensions are not allowed (`{call}`)"))
                        .at(item.span, format!("{n}"))
                        .note("NumPy raises ValueError for it"),
                );
                return None;
            }
            shape.push(n);
        }
        Some(shape)
    }

    /// The shape and element type of the array or slice `e`, for `_like`
    /// (and `np.cross`), found by lowering it once (its statements
    /// dropped).
    pub(super) fn shape_of(&mut self, e: &ast::Expr, call: &str) -> Option<(Vec<i64>, ElemTy)> {
        let (from, diags) = (self.pre.len(), self.sh.diags.len());
        let (elem, ctx) = self.lower_reduced(e);
        self.pre.truncate(from);
        if self.sh.diags[diags..].iter().any(|d| d.is_error()) {
            return None;
        }
        let elem = elem?.e.ty.elem()?;
        match ctx.and_then(|c| c.extents().map(<[i64]>::to_vec)) {
            Some(shape) => Some((shape, elem)),
            None => {
                let d =
                    Diagnostic::error(format!("`{call}` of a number")).at(e.span, "not an array");
                self.error(match call.ends_with("_like") {
                    true => d.help("use a local scalar (`acc = 0.0`)"),
                    false => d,
                });
                None
            }
        }
    }

    /// The `dtype` of a new array: a NumPy or parpy type, or Python's
    /// `int`, `float` or `bool`.
    fn allocation_dtype(&mut self, d: &ast::Expr) -> Option<ElemTy> {
        if let Some(path) = d.dotted_path().filter(|p| self.scope.get(p[0]).is_none()) {
            if let Resolved::Builtin(b) = self.resolver.resolve(&path) {
                match b {
                    Builtin::Int => return Some(ElemTy::I64),
                    Builtin::Float => return Some(ElemTy::F64),
                    Builtin::Bool => return Some(ElemTy::Bool),
                    _ => {}
                }
            }
        }
        self.dtype_arg(d)
    }
}
