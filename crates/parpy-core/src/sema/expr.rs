//! Expressions: literals, names (locals, parameters, specialized values,
//! module globals via the resolver), operators with typing, subscripts.

use crate::diag::{Diagnostic, Span};
use crate::ir::eval::{python_binary, python_unary, wrap_int, PyNumber};
use crate::ir::{BinOp, ElemTy, Expr, ExprKind, Type, UnOp, VarId};
use crate::resolve::{Builtin, Resolved};
use crate::syntax::ast;
use crate::types::ScalarValue;

use super::slices::IndexSlot;
use super::types::{const_bool, const_int, const_scalar, convert};
use super::{Lowerer, TExpr};

/// NumPy's advanced indexing of a subscript (`Lowerer::gather_dims`).
struct Gather {
    /// which indices are arrays of integers
    arrays: Vec<bool>,
    /// their broadcast shape
    dims: Vec<i64>,
    /// the index in whose place the dimensions go (`None`: first)
    first: Option<usize>,
}

/// NumPy's place for the dimensions of the arrays of indices of a
/// subscript, given the positions of its advanced indices (the arrays and
/// the numbers among its indices), in order: in place of the first when
/// they are adjacent, else (`None`) before all others.
pub(super) fn gathered_at(advanced: &[usize]) -> Option<usize> {
    let (first, last) = (*advanced.first()?, *advanced.last()?);
    (last - first + 1 == advanced.len()).then_some(first)
}

/// The result of lowering a subscript.
pub(super) enum Sub {
    /// `array[indices]`, one index per dimension.
    Elem {
        array: VarId,
        indices: Vec<Expr>,
        elem: ElemTy,
        /// Through a re-bound name: its selector (`array` is the first of
        /// the arrays it can refer to).
        alias: Option<VarId>,
    },
    /// `x.shape[k]`: a compile-time constant.
    Const(i64),
}

/// `a[i][j]` -> (`a`, [`i`, `j`]) (see `Lowerer::subscript_of_a_view` for the
/// chains that are not that).
pub(super) fn flatten_subscript(e: &ast::Expr) -> (&ast::Expr, Vec<&ast::Expr>) {
    let mut groups: Vec<&Vec<ast::Expr>> = vec![];
    let mut cur = e;
    while let ast::ExprKind::Subscript { value, indices } = &cur.kind {
        groups.push(indices);
        cur = value;
    }
    let indices = groups.into_iter().rev().flatten().collect();
    (cur, indices)
}

/// `x` of `x.T` (a name's transpose).
pub(super) fn transpose_of(e: &ast::Expr) -> Option<&ast::Expr> {
    match &e.kind {
        ast::ExprKind::Attr { value, attr }
            if attr == "T" && matches!(value.kind, ast::ExprKind::Name(_)) =>
        {
            Some(value)
        }
        _ => None,
    }
}

/// The span of the root name of an attribute chain.
fn root_span(e: &ast::Expr) -> Span {
    match &e.kind {
        ast::ExprKind::Attr { value, .. } => root_span(value),
        _ => e.span,
    }
}

pub(super) fn literal(v: ScalarValue, ty: ElemTy, span: Span) -> Expr {
    match v {
        ScalarValue::Bool(b) => Expr::new(ExprKind::Bool(b), Type::Scalar(ElemTy::Bool), span),
        ScalarValue::Int(i) => convert(Expr::int(i, ElemTy::I64, span), ty),
        ScalarValue::Float(f) => convert(
            Expr::new(ExprKind::Float(f), Type::Scalar(ElemTy::F64), span),
            ty,
        ),
    }
}

impl Lowerer<'_, '_> {
    pub(super) fn weak_int(&self, v: i64, span: Span) -> TExpr {
        TExpr {
            e: Expr::int(v, self.opts.int_type, span),
            weak: true,
        }
    }

    /// Is the root name of this name/attribute chain a local name?
    pub(super) fn is_local_root(&self, e: &ast::Expr) -> bool {
        match &e.kind {
            ast::ExprKind::Name(n) => self.scope.get(n).is_some(),
            ast::ExprKind::Attr { value, .. } => self.is_local_root(value),
            _ => false,
        }
    }

    /// Is `e` a value of the function (an expression, or a chain rooted at
    /// a local name), not a global path such as `np.float32`?
    pub(super) fn is_local_value(&self, e: &ast::Expr) -> bool {
        e.dotted_path().is_none() || self.is_local_root(e)
    }

    pub(super) fn not_defined(&mut self, name: &str, span: Span) {
        if self.loops > 0 && self.once.assigns(name) && !self.inlined {
            // assigned further down a loop: a later iteration reads what
            // an earlier one assigned (`mod.rs` declares it and lowers
            // the function again, or reports it then)
            self.forward_reads.push((name.to_string(), span));
            return;
        }
        self.report_not_defined(name, span);
    }

    /// The error of a name read that no binding reaches.
    pub(super) fn report_not_defined(&mut self, name: &str, span: Span) {
        if self.dict_misused(name, span) {
            return;
        }
        if self.scope.is_failed(name) {
            // Its assignment was already reported.
            return;
        }
        let mut d = Diagnostic::error(format!("name `{name}` is not defined"))
            .at(span, "not defined here")
            .name_error();
        if self.ended_loop_vars.contains(name) {
            // (Python keeps a loop's variable after the loop)
            d = d.note(format!(
                "`{name}` is the variable of a loop above; after a labelled loop, or a loop inside a parallel one, parpy keeps its last value only when the loop runs a number of times known when compiling, or in a local assigned before the loop"
            ))
            .help(format!(
                "assign `{name}` before the loop (`{name} = 0`), or copy it inside the loop into a variable assigned before it"
            ));
            self.error(d);
            return;
        }
        if self.resolver.is_local(name) {
            self.report_unbound_local(name, span);
            return;
        }
        if let Some(c) = self.scope.closest(name) {
            d = d.help(format!("did you mean `{c}`?"));
        }
        if !self.scope.params.is_empty() {
            let ps: Vec<String> = self.scope.params.iter().map(|p| format!("`{p}`")).collect();
            d = d.help(format!("the parameters are {}", ps.join(", ")));
        }
        self.error(d);
    }

    /// The error of a read of a Python local (a name the function assigns
    /// somewhere) that no assignment reaches: Python's
    /// `UnboundLocalError`, even when a module global has that name.
    fn report_unbound_local(&mut self, name: &str, span: Span) {
        let mut d = Diagnostic::error(format!(
            "local variable `{name}` is read before it is assigned"
        ))
        .at(span, "read here before any assignment of it")
        .name_error()
        .note(format!(
            "`{name}` is assigned in this function, so Python makes it a local of the whole \
             function and raises UnboundLocalError here"
        ));
        if !matches!(self.resolver.inner().resolve(&[name]), Resolved::NotFound) {
            d = d.note(format!(
                "the module-level `{name}` is not read: Python reads a name assigned in a \
                 function as its local everywhere in it"
            ));
        }
        if self.inlined && self.loops > 0 {
            d = d.note(
                "in a helper inlined into its caller, parpy reads a local only below an \
                 assignment of it, not one further down a loop",
            );
        }
        d = d.help(format!(
            "assign `{name}` before reading it, or give the local another name"
        ));
        self.error(d);
    }

    /// Resolves a global dotted name; reports and returns `None` when it
    /// does not exist.
    pub(super) fn resolve_global(&mut self, e: &ast::Expr) -> Option<Resolved> {
        let Some(path) = e.dotted_path() else {
            self.error(
                Diagnostic::error("expected a name or an attribute path").at(e.span, "here"),
            );
            return None;
        };
        let full = self.resolve_path(&path);
        if !matches!(full, Resolved::NotFound) {
            return Some(full);
        }
        for k in 1..path.len() {
            match self.resolver.resolve(&path[..k]) {
                Resolved::Namespace => continue,
                Resolved::NotFound => break,
                _ => {
                    self.error(
                        Diagnostic::error(format!(
                            "`{}` has no attribute `{}` usable in parpy functions",
                            path[..k].join("."),
                            path[k]
                        ))
                        .at(e.span, "unknown attribute"),
                    );
                    return None;
                }
            }
        }
        if path.len() == 1 || matches!(self.resolver.resolve(&path[..1]), Resolved::NotFound) {
            self.not_defined(path[0], root_span(e));
        } else {
            self.error(
                Diagnostic::error(format!("`{}` is not defined", path.join(".")))
                    .at(e.span, "unknown attribute"),
            );
        }
        None
    }

    /// A global used as a value (a constant, `parpy.builtin.inf`).
    fn global_value(&mut self, e: &ast::Expr) -> Option<TExpr> {
        let r = self.resolve_global(e)?;
        let path = e.dotted_path().map(|p| p.join(".")).unwrap_or_default();
        match r {
            Resolved::Const(v) => {
                let (ty, weak) = match v {
                    ScalarValue::Bool(_) => (ElemTy::Bool, false),
                    ScalarValue::Int(_) => (self.opts.int_type, true),
                    ScalarValue::Float(_) => (self.opts.float_type, true),
                };
                Some(TExpr {
                    e: literal(v, ty, e.span),
                    weak,
                })
            }
            // a module-level `np.uint64` of 2**63 or more (its bits): as
            // `np.uint64(<its literal>)` written in the body
            Resolved::TypedConst(ScalarValue::Int(bits), ElemTy::U64) if bits < 0 => {
                let int = ast::Expr::int_literal(bits as u64, e.span);
                self.lower_expr(&Self::numpy_call("uint64", vec![int], e.span))
            }
            Resolved::TypedConst(v, ty) => Some(TExpr {
                e: literal(v, ty, e.span),
                weak: false,
            }),
            Resolved::Builtin(Builtin::Inf) => Some(TExpr {
                e: Expr::new(
                    ExprKind::Float(f64::INFINITY),
                    Type::Scalar(self.opts.float_type),
                    e.span,
                ),
                weak: true,
            }),
            Resolved::Unsupported(desc) => {
                self.error(
                    Diagnostic::error(format!(
                        "`{path}` is {desc}, which cannot be used in parpy functions"
                    ))
                    .at(e.span, "not supported"),
                );
                None
            }
            _ => {
                self.error(
                    Diagnostic::error(format!("`{path}` cannot be used as a value"))
                        .at(e.span, "not a value"),
                );
                None
            }
        }
    }

    /// Whether `name` is a 0-d array (an argument passed as an array:
    /// `FunctionDef::in_place_params`).
    pub(super) fn zero_d_array(&self, name: &str) -> bool {
        self.scope.get(name).is_some_and(|b| {
            self.alias_of(b.var).is_none()
                && matches!(&self.func.var(b.var).ty, Type::Array { shape, .. } if shape.is_empty())
        })
    }

    /// The value of `name` where it is a Python number known when
    /// compiling: a specialized Python bool, int or float argument, a
    /// local assigned once an int constant (`AssignedOnce`), a module-level
    /// Python int or float. An operator of such names and literals is
    /// computed as Python computes an operator of literals
    /// (`python_constant_fits`, `python_constant_value`): exactly.
    pub(super) fn known_python_number(&self, name: &str) -> Option<PyNumber> {
        let number = |v: ScalarValue| match v {
            ScalarValue::Bool(b) => PyNumber::Int(b as i128),
            ScalarValue::Int(i) => PyNumber::Int(i as i128),
            ScalarValue::Float(f) => PyNumber::Float(f),
        };
        let Some(b) = self.scope.get(name) else {
            return match self.resolver.resolve(&[name]) {
                Resolved::Const(v @ (ScalarValue::Int(_) | ScalarValue::Float(_))) => {
                    Some(number(v))
                }
                _ => None,
            };
        };
        let var = self.func.var(b.var);
        if !b.weak || !matches!(var.ty, Type::Scalar(_)) || self.alias_of(b.var).is_some() {
            return None;
        }
        match var.value {
            Some(ScalarValue::Int(i)) if var.ty == Type::Scalar(ElemTy::U64) => {
                Some(PyNumber::Int(i as u64 as i128))
            }
            Some(v) => Some(number(v)),
            None => self.once.value(b.var).map(|v| PyNumber::Int(v as i128)),
        }
    }

    /// `e` is an operator of number literals and names of Python numbers
    /// known when compiling ([`Self::known_python_number`]), or one of
    /// them alone.
    pub(super) fn is_known_python(&self, e: &ast::Expr) -> bool {
        match &e.kind {
            ast::ExprKind::Int(_) | ast::ExprKind::Float(_) | ast::ExprKind::Bool(_) => true,
            ast::ExprKind::Name(n) => self.known_python_number(n).is_some(),
            ast::ExprKind::Unary { arg, .. } => self.is_known_python(arg),
            ast::ExprKind::Binary { lhs, rhs, .. } => {
                self.is_known_python(lhs) && self.is_known_python(rhs)
            }
            _ => false,
        }
    }

    pub(super) fn read_name(&mut self, name: &str, span: Span) -> Option<TExpr> {
        let b = self.scope.get(name)?;
        if let Some(c) = self.alias_of(b.var) {
            // a re-bound array name: as `name[:, ...]`
            let e = ast::Expr {
                kind: ast::ExprKind::Subscript {
                    value: Box::new(ast::Expr {
                        kind: ast::ExprKind::Name(name.to_string()),
                        span,
                    }),
                    indices: vec![],
                },
                span,
            };
            if self.slice.is_some() && !c.is_empty() {
                return self.lower_expr(&e);
            }
            self.error(
                Diagnostic::error(format!("array `{name}` is used as a scalar value"))
                    .at(span, "this refers to an array")
                    .help(format!(
                        "index it (`{name}[i]`), or use it in a slice assignment or a reduction"
                    )),
            );
            return None;
        }
        let var = self.func.var(b.var).clone();
        match &var.ty {
            // a specialized Python int of 2**63 .. 2**64 - 1 (the binding
            // passes its bits as a weak uint64): its literal
            Type::Scalar(ElemTy::U64) if b.weak && var.value.is_some() => {
                let Some(ScalarValue::Int(bits)) = var.value else {
                    return None;
                };
                self.lower_expr(&ast::Expr::int_literal(bits as u64, span))
            }
            Type::Scalar(t) => {
                let e = match var.value {
                    Some(v) => literal(v, *t, span),
                    None => Expr::var(b.var, var.ty.clone(), span),
                };
                Some(TExpr { e, weak: b.weak })
            }
            Type::Array { elem, shape } => {
                if self.slice.is_some() || shape.is_empty() {
                    // A whole array in an elementwise context: `x` == `x[:, :]`;
                    // a 0-d array is its element anywhere (`z` == `z[()]`).
                    let slots = shape
                        .iter()
                        .map(|d| IndexSlot::full(*d, self.opts.int_type, span))
                        .collect();
                    let indices = self.map_slices(slots, false, span)?;
                    return Some(TExpr {
                        e: Expr::new(
                            ExprKind::Index {
                                array: b.var,
                                indices,
                            },
                            Type::Scalar(*elem),
                            span,
                        ),
                        weak: false,
                    });
                }
                let mut d = Diagnostic::error(format!("array `{name}` is used as a scalar value"))
                    .at(span, "this is an array");
                if name.contains("][") {
                    // ParPy refuses nested dictionaries; parpy takes them,
                    // and says where this array comes from
                    d = d.note(format!(
                        "`{name}` is an array in a nested dictionary argument"
                    ));
                }
                self.error(d.help(format!(
                    "index it (`{name}[i]`), or use it in a slice assignment or a reduction"
                )));
                None
            }
            Type::Void => None,
        }
    }

    pub(super) fn lower_expr(&mut self, e: &ast::Expr) -> Option<TExpr> {
        let t = self.lower_expr_uncounted(e);
        if t.is_none() {
            self.sh.note_silent_none(e.span);
        }
        t
    }

    fn lower_expr_uncounted(&mut self, e: &ast::Expr) -> Option<TExpr> {
        let span = e.span;
        // (`s.shape[0]` of a slice with run-time bounds: its count)
        if let Some(n) = self.runtime_shape(e) {
            return n;
        }
        if !self.in_python_constant
            && matches!(
                e.kind,
                ast::ExprKind::Unary { .. } | ast::ExprKind::Binary { .. }
            )
            && self.is_known_python(e)
        {
            // (operands known when compiling, specialized Python-number
            // arguments and locals holding a constant, as literals: `2 **
            // 62 * n` with `n = 4` is `2 ** 62 * 4`)
            self.python_constant_fits(e)?;
            self.in_python_constant = true;
            let t = self.lower_expr(e);
            self.in_python_constant = false;
            let known = |n: &str| self.known_python_number(n);
            return t.map(|t| python_constant_value(e, t, &known));
        }
        match &e.kind {
            ast::ExprKind::Int(v) => Some(self.weak_int(*v, span)),
            ast::ExprKind::Float(v) => Some(TExpr {
                e: Expr::new(
                    ExprKind::Float(*v),
                    Type::Scalar(self.opts.float_type),
                    span,
                ),
                weak: true,
            }),
            // Python bools are weak like Python ints: `np.int8(1) + True`
            // is int8, `True + True` is the int 2
            ast::ExprKind::Bool(b) => Some(TExpr {
                e: Expr::new(ExprKind::Bool(*b), Type::Scalar(ElemTy::Bool), span),
                weak: true,
            }),
            ast::ExprKind::Ellipsis => {
                self.error(
                    Diagnostic::error("`...` indexes only arrays")
                        .at(span, "`...` here")
                        .help("index an array argument or a local array: `x[..., 0]`"),
                );
                None
            }
            ast::ExprKind::None => {
                self.error(
                    Diagnostic::error("`None` is not a value in parpy functions")
                        .at(span, "`None` here")
                        .help("`None` can only be passed for a parameter whose default it is (`np.sum(x[i, :], axis=None)`)"),
                );
                None
            }
            ast::ExprKind::Str(_) => {
                self.error(
                    Diagnostic::error("strings can only be used as labels")
                        .at(span, "string not supported here"),
                );
                None
            }
            ast::ExprKind::Name(n) => {
                if self.scope.get(n).is_some() {
                    self.read_name(n, span)
                } else if self.dict_misused(n, span) {
                    None
                } else {
                    self.global_value(e)
                }
            }
            ast::ExprKind::Attr { value, attr } => {
                // `x.T` whole: `x.T[:, :]`
                if transpose_of(e).is_some_and(|x| self.array_arg(x).is_some()) {
                    let whole = ast::Expr {
                        kind: ast::ExprKind::Subscript {
                            value: Box::new(e.clone()),
                            indices: vec![],
                        },
                        span,
                    };
                    return self.lower_expr(&whole);
                }
                // `np.finfo(t).eps`, `np.iinfo(t).max`, ...: constants
                if let Some(c) = self.type_info(value, attr, span) {
                    return c;
                }
                // `x.itemsize` and `x.nbytes` of an array: constants
                if matches!(attr.as_str(), "itemsize" | "nbytes")
                    && self.array_shape(value).is_some()
                {
                    let (shape, elem) = self.array_shape_of(value)?;
                    let n: i64 = match attr.as_str() {
                        "nbytes" => shape?.iter().product(),
                        _ => 1,
                    };
                    return Some(self.weak_int(n * elem.size() as i64, span));
                }
                // `x.size` and `x.ndim` of an array (`x[i, 1:].size`):
                // constants
                if matches!(attr.as_str(), "size" | "ndim") {
                    if let Some(shape) = self.array_shape(value) {
                        let v = match attr.as_str() {
                            "size" => shape?.iter().product(),
                            _ => shape?.len() as i64,
                        };
                        return Some(self.weak_int(v, span));
                    }
                    // a NumPy number (a 0-d array argument read as its
                    // value, an element) has no dimensions and one element
                    if let ast::ExprKind::Name(n) = &value.kind {
                        let numpy_number = self.scope.get(n).is_some_and(|b| {
                            let ty = &self.func.var(b.var).ty;
                            !b.weak && !ty.is_array() && ty.elem().is_some()
                        });
                        if numpy_number {
                            let v = i64::from(attr == "size");
                            return Some(self.weak_int(v, span));
                        }
                    }
                }
                if self.is_local_value(e) {
                    if let Some(d) = self.permutation_error(e) {
                        self.error(d);
                        return None;
                    }
                    let base = match &value.kind {
                        ast::ExprKind::Name(n) => format!("`{n}`"),
                        _ => "an expression".to_string(),
                    };
                    let help = if attr == "shape" {
                        "index it: `.shape[k]` is the size of dimension k".to_string()
                    } else if attr == "T" {
                        // (`x.T.T`: `.T` is supported, of a name or a view)
                        match &value.kind {
                            ast::ExprKind::Attr {
                                value: inner,
                                attr: t,
                            } if t == "T" => format!(
                                "`.T` of `.T` is the array itself: write `{}`",
                                inner.dotted_path().map_or("x".into(), |p| p.join("."))
                            ),
                            _ => "`.T` applies to an array or a view of one (`x.T`, `x[i].T`)"
                                .to_string(),
                        }
                    } else {
                        "only `.T`, `.shape[k]`, `.size`, `.ndim`, `.itemsize`, `.nbytes` and `.dtype` (as a type, or compared with one) are supported on arrays"
                            .to_string()
                    };
                    self.error(
                        Diagnostic::error(format!(
                            "attribute `{attr}` of {base} cannot be used here"
                        ))
                        .at(span, "not supported")
                        .help(help),
                    );
                    return None;
                }
                self.global_value(e)
            }
            ast::ExprKind::Subscript { value, .. } if self.tuple_valued(value) => {
                self.tuple_element(e)
            }
            ast::ExprKind::Subscript { .. }
                if matches!(flatten_subscript(e).0.kind, ast::ExprKind::Tuple(_)) =>
            {
                self.tuple_literal_item(e)
            }
            // `np.corrcoef(a, b)[0, 1]` (sema::cov)
            ast::ExprKind::Subscript { .. } if self.cov_element_of(e) => self.cov_element(e),
            ast::ExprKind::Subscript { .. } if self.computed_base(e).is_some() => {
                let (value, idx) = flatten_subscript(e);
                self.element_of(value, &idx, span)
            }
            ast::ExprKind::Subscript { .. } => match self.lower_subscript(e)? {
                Sub::Const(v) => Some(self.weak_int(v, span)),
                Sub::Elem {
                    array,
                    indices,
                    elem,
                    alias,
                } => Some(TExpr {
                    // (an item, not a slice of NumPy's array of the list)
                    weak: match alias.is_none() && integer_indices(e) {
                        true => self.python_item_read(array, e)?,
                        false => false,
                    },
                    e: match alias {
                        Some(sel) => self.alias_read(sel, indices, elem, span),
                        None => {
                            Expr::new(ExprKind::Index { array, indices }, Type::Scalar(elem), span)
                        }
                    },
                }),
            },
            ast::ExprKind::Slice { .. } => {
                self.error(
                    Diagnostic::error("a slice can only appear inside a subscript")
                        .at(span, "slice here"),
                );
                None
            }
            ast::ExprKind::Starred(_) => {
                self.error(
                    Diagnostic::error("`*` can only spread the arguments of a call here")
                        .at(span, "not an argument of a call"),
                );
                None
            }
            ast::ExprKind::Lambda { .. } => {
                self.error(
                    Diagnostic::error(
                        "a lambda can only be called, or be the `key=` of `max` and `min`, in parpy functions",
                    )
                    .at(span, "a function here")
                    .help("call it, or define a `@parpy.jit` helper and call that"),
                );
                None
            }
            ast::ExprKind::Generator { list: false, .. } => {
                self.error(
                    Diagnostic::error(
                        "a generator expression can only be the argument of `sum`, `any`, `all`, `max` or `min`",
                    )
                    .at(span, "a generator here")
                    .note("kernels do not allocate: a generator is consumed where it is made")
                    .help("write `sum(... for ... in ...)`, or a `for` loop"),
                );
                None
            }
            ast::ExprKind::Generator { list: true, .. } => {
                self.error(
                    Diagnostic::error(
                        "a list comprehension can only be the argument of `sum`, `any`, `all`, `max` or `min`, or the value stored into a slice",
                    )
                    .at(span, "a list comprehension here")
                    .note("kernels do not allocate: parpy does not make the list")
                    .help("store it into a slice (`y[i, :] = [... for j in range(n)]`), or write an array expression"),
                );
                None
            }
            ast::ExprKind::Tuple(_) => {
                self.error(
                    Diagnostic::error(
                        "a tuple can only be the value of an assignment or the index of `parpy.atomic.*`",
                    )
                    .at(span, "tuple here")
                    .help("unpack it where it is made: `a, b = x, y` (a helper is passed a tuple by name: `t = (x, y)`, then `h(t)`)"),
                );
                None
            }
            ast::ExprKind::Unary { op, arg } => {
                let t = self.lower_unary(*op, arg, span)?;
                // (Python's value: `-2**63` is INT64_MIN, its operand no
                // int64)
                Some(match is_python_constant(arg) {
                    true => python_constant_value(e, t, &|_| None),
                    false => t,
                })
            }
            ast::ExprKind::Binary {
                op: BinOp::MatMul,
                lhs,
                rhs,
            } => {
                // (as `np.dot`, slices with run-time bounds included)
                let args = [(**lhs).clone(), (**rhs).clone()];
                self.builtin_call_with(crate::resolve::Builtin::Dot, "@", &args, span)
            }
            ast::ExprKind::Binary { op, lhs, rhs } => {
                // (an array to one power: NumPy's shortcuts, `numpy_power`)
                let array_power = *op == BinOp::Pow && self.rank(lhs) > 0 && self.rank(rhs) == 0;
                let a = self.lower_expr(lhs);
                let b = self.lower_expr(rhs);
                if matches!(op, BinOp::Div | BinOp::FloorDiv | BinOp::Mod) && is_literal_zero(rhs) {
                    // (of a NumPy value NumPy gives 0, inf or NaN with a
                    // warning: a divisor that is always zero is refused as
                    // the mistake it almost always is)
                    let note = match a.as_ref().is_some_and(|a| !a.weak) {
                        true => "NumPy gives 0 (integers) or inf / NaN (floats) with a RuntimeWarning here; parpy refuses a divisor that is always zero",
                        false => "Python raises ZeroDivisionError here",
                    };
                    self.error(
                        Diagnostic::error("division by zero")
                            .at(rhs.span, "this divisor is zero")
                            .note(note),
                    );
                    return None;
                }
                // Python numbers divided at run time: Python raises for a
                // zero divisor (NumPy's values give 0 or inf instead)
                let (mut a, mut b) = (a?, b?);
                // Python's errors of `**` of Python numbers at run time, on
                // operands evaluated once
                let python_pow = *op == BinOp::Pow
                    && a.weak
                    && b.weak
                    && !(is_python_constant(lhs) && is_python_constant(rhs));
                if python_pow {
                    for t in [&mut a, &mut b] {
                        if !crate::ir::visit::is_pure(&t.e) {
                            let e = std::mem::replace(&mut t.e, Expr::int(0, ElemTy::I64, span));
                            t.e = self.stash(e, span);
                        }
                    }
                }
                let pow_operands = python_pow.then(|| (a.e.clone(), b.e.clone()));
                let python_divisor = (matches!(op, BinOp::Div | BinOp::FloorDiv | BinOp::Mod)
                    && a.weak
                    && b.weak
                    && !is_python_constant(rhs))
                .then(|| (b.e.clone(), a.e.ty.elem(), b.e.ty.elem()));
                // ... and for a negative shift count
                let python_shift = (matches!(op, BinOp::Shl | BinOp::Shr)
                    && a.weak
                    && b.weak
                    && !is_python_constant(rhs))
                .then(|| b.e.clone());
                let power_operands = array_power.then(|| (a.e.clone(), b.e.clone(), b.weak));
                let t = self.binary(*op, a, b, span)?;
                let t = match power_operands {
                    Some((base, exp, weak)) => self.numpy_power(t, base, exp, weak, span),
                    None => t,
                };
                if let Some((d, ta, tb)) = python_divisor {
                    self.python_zero_division(*op, d, ta, tb, span);
                }
                if let Some(count) = python_shift {
                    self.python_negative_shift(count, span);
                }
                let t = match pow_operands {
                    Some((base, exp)) => self.python_pow_errors(t, base, exp, span),
                    None => t,
                };
                if is_python_constant(lhs) && is_python_constant(rhs) {
                    self.python_constant_check(&t, span)?;
                    return Some(python_constant_value(e, t, &|_| None));
                }
                Some(t)
            }
            ast::ExprKind::Compare { first, rest } if self.dtype_comparison(first, rest) => {
                // `x.dtype == np.float32`: a Python bool known when compiling
                let [(op, rhs)] = rest.as_slice() else {
                    return None;
                };
                let (a, b) = (self.compared_dtype(first)?, self.compared_dtype(rhs)?);
                let v = (a == b) == (*op == BinOp::Eq);
                Some(TExpr {
                    e: Expr::new(ExprKind::Bool(v), Type::Scalar(ElemTy::Bool), span),
                    weak: true,
                })
            }
            ast::ExprKind::Compare { first, rest } => {
                // `a < b < c` is `(a < b) and (b < c)`: the truth of each
                // comparison but the last is read (of arrays, Python's
                // ValueError)
                let read = std::iter::once(&**first).chain(rest.iter().map(|(_, r)| r));
                if rest.len() > 1 && read.take(rest.len()).any(|o| self.rank(o) > 0) {
                    self.ambiguous_truth(e);
                    return None;
                }
                let mut prev = self.lower_expr(first);
                let mut acc: Option<Expr> = None;
                let mut ok = prev.is_some();
                let mut all_weak = true;
                for (k, (op, rhs)) in rest.iter().enumerate() {
                    let mut r = self.lower_expr(rhs);
                    // a middle operand is evaluated once (`0 < f(c) < 1`
                    // calls `f` once): one that calls a helper is kept in
                    // a hidden local
                    if let Some(t) = r
                        .as_mut()
                        .filter(|t| k + 1 < rest.len() && !crate::ir::visit::pure(&t.e))
                    {
                        let e = std::mem::replace(&mut t.e, Expr::int(0, ElemTy::I64, span));
                        t.e = self.stash(e, rhs.span);
                    }
                    let (Some(p), Some(r)) = (prev.clone(), r.clone()) else {
                        ok = false;
                        prev = r;
                        continue;
                    };
                    let cmp_span = p.e.span.to(r.e.span);
                    let Some(c) = self.binary(*op, p, r.clone(), cmp_span) else {
                        ok = false;
                        prev = Some(r);
                        continue;
                    };
                    all_weak &= c.weak;
                    acc = Some(match acc {
                        None => c.e,
                        Some(a) => bool_binary(BinOp::And, a, c.e, span),
                    });
                    prev = Some(r);
                }
                if !ok {
                    return None;
                }
                Some(TExpr {
                    e: acc?,
                    weak: all_weak,
                })
            }
            ast::ExprKind::BoolOp { op, values } => {
                let truth_only = std::mem::take(&mut self.condition);
                // (the whole value an element store converts: each operand
                // converted as if stored alone, as for `a if c else b`)
                let stored = self.stored_select.filter(|s| s.0 == span);
                // (an array has no truth: Python raises ValueError)
                if let Some(v) = values.iter().find(|v| self.rank(v) > 0) {
                    self.ambiguous_truth(v);
                    return None;
                }
                let mut acc: Option<Expr> = None;
                let mut ok = true;
                let mut all_weak = true;
                // each operand with its truth, for values that are not
                // all bools
                let mut operands: Vec<(TExpr, Expr)> = vec![];
                for v in values {
                    let mark = self.pre.len();
                    self.condition = truth_only && matches!(v.kind, ast::ExprKind::BoolOp { .. });
                    self.stored_select = stored.map(|(_, ty, dst)| (v.span, ty, dst));
                    let later = u32::from(acc.is_some());
                    self.unsure += later;
                    let t = self.lower_expr(v);
                    self.unsure -= later;
                    self.stored_select = stored;
                    self.condition = false;
                    // what `v` hoists (reductions, generators) runs only
                    // where Python evaluates `v`: after true values for
                    // `and`, after false ones for `or`
                    if let Some(a) = &acc {
                        let guard = match op {
                            BinOp::And => a.clone(),
                            _ => Expr::new(
                                ExprKind::Unary {
                                    op: UnOp::Not,
                                    arg: Box::new(a.clone()),
                                },
                                Type::Scalar(ElemTy::Bool),
                                span,
                            ),
                        };
                        self.guard_hoisted(mark, guard, vec![], span);
                    }
                    let Some(t) = t else {
                        ok = false;
                        continue;
                    };
                    all_weak &= t.weak;
                    let Some(b) = self.truthy(t.clone()) else {
                        ok = false;
                        continue;
                    };
                    operands.push((t, b.clone()));
                    acc = Some(match acc {
                        None => b,
                        Some(a) => bool_binary(*op, a, b, span),
                    });
                }
                if !ok {
                    return None;
                }
                let bools = operands
                    .iter()
                    .all(|(t, _)| t.e.ty.elem() == Some(ElemTy::Bool));
                if bools || truth_only {
                    return Some(TExpr {
                        e: acc?,
                        weak: all_weak,
                    });
                }
                // Python's value: `a and b` is `b if a else a`, `a or b`
                // is `a if a else b` (the first operand that decides), in
                // the operands' promoted type. Python's value keeps the
                // type of the operand that decides, which a compiled
                // program must know: operands other than bools of one type
                // only (a Python number weak only in the default types,
                // where it is that type's value)
                let kinds: Vec<(ElemTy, bool)> = operands
                    .iter()
                    .filter_map(|(t, _)| t.e.ty.elem().map(|e| (e, t.weak)))
                    .filter(|(e, _)| *e != ElemTy::Bool)
                    .collect();
                let same = kinds.windows(2).all(|w| {
                    let ((a, aw), (b, bw)) = (w[0], w[1]);
                    a == b && (aw == bw || a == self.opts.float_type || a == self.opts.int_type)
                });
                // ... or values of one NumPy type and Python number
                // constants that type holds exactly (`x[i] or -1`): the
                // operand that decides has one value either way
                let mut strong: Vec<ElemTy> = kinds.iter().filter(|k| !k.1).map(|k| k.0).collect();
                strong.dedup();
                let exact = |c: crate::types::ScalarValue, t: ElemTy| match c {
                    crate::types::ScalarValue::Int(v) => match t.int_bounds() {
                        Some((lo, hi)) => (lo..=hi).contains(&(v as i128)),
                        // (a float holds every int up to 2**(its bits of
                        // precision))
                        None => {
                            let bits = match t {
                                ElemTy::F16 => 11,
                                ElemTy::F32 => 24,
                                _ => 53,
                            };
                            v.unsigned_abs() <= 1u64 << bits
                        }
                    },
                    crate::types::ScalarValue::Float(v) => {
                        t == ElemTy::F64 || (t == ElemTy::F32 && v as f32 as f64 == v)
                    }
                    crate::types::ScalarValue::Bool(_) => true,
                };
                let same = same
                    || (strong.len() == 1
                        && operands.iter().all(|(t, _)| {
                            !t.weak
                                || t.e.ty.elem() == Some(ElemTy::Bool)
                                || super::types::const_scalar(&t.e)
                                    .is_some_and(|c| exact(c, strong[0]))
                        }));
                if !same && stored.is_none() {
                    let word = if *op == BinOp::And { "and" } else { "or" };
                    let types: Vec<String> = operands
                        .iter()
                        .filter(|(t, _)| !t.weak)
                        .filter_map(|(t, _)| t.e.ty.elem())
                        .map(|e| format!("`{}`", e.numpy_name()))
                        .collect();
                    let types = match types.len() {
                        0 | 1 => {
                            "a NumPy value and a Python number it does not hold exactly".to_string()
                        }
                        _ => format!("values of types {}", types.join(", ")),
                    };
                    self.error(
                        Diagnostic::error(format!("`{word}` of {types}"))
                            .at(span, "operands of several types")
                            .note(format!("Python's `{word}` gives the operand that decides, with its own type, which parpy must know when compiling: the next operation depends on it"))
                            .help(format!("store it into an array element as it is (`y[i] = a {word} b`: the operand that decides is stored as Python stores it), or convert the operands to one type (`np.float64(a) {word} b`)")),
                    );
                    return None;
                }
                // Of other operands only the whole value stored into an
                // array element, where Python stores the operand that
                // decides as it is: each converted as if stored alone.
                let stored = stored.filter(|_| !same).map(|(_, ty, dst)| (ty, dst));
                let (last, _) = operands.pop()?;
                let mut value = match stored {
                    Some((ty, dst)) => TExpr {
                        e: self.store_convert(last, ty, dst)?,
                        weak: false,
                    },
                    None => last,
                };
                while let Some((a, truth)) = operands.pop() {
                    let (a, rest, ty, weak) = match stored {
                        Some((ty, dst)) => (self.store_convert(a, ty, dst)?, value.e, ty, false),
                        None => self.unify(a, value)?,
                    };
                    let (then, else_) = match op {
                        BinOp::And => (rest, a),
                        _ => (a, rest),
                    };
                    value = TExpr {
                        e: Expr::select_as(truth, then, else_, Type::Scalar(ty), span),
                        weak,
                    };
                }
                Some(value)
            }
            ast::ExprKind::IfExp { cond, then, else_ } => {
                let stored = self.stored_select.filter(|s| s.0 == span);
                // (a side that is itself a conditional is stored as well)
                let side = |e: &ast::Expr| stored.map(|(_, ty, dst)| (e.span, ty, dst));
                let c = self.lower_condition(cond);
                if let Some(known) = c.as_ref().and_then(const_bool) {
                    // a condition known when compiling: Python evaluates
                    // the side it chooses only (`2**63 if False else x[i]`
                    // is `x[i]`, its type and all)
                    let chosen = if known { then } else { else_ };
                    self.stored_select = side(chosen);
                    let v = self.lower_expr(chosen);
                    self.stored_select = stored;
                    return v;
                }
                let mark = self.pre.len();
                self.stored_select = side(then);
                self.unsure += 1;
                let t = self.lower_expr(then);
                let then_pre = self.pre.split_off(mark);
                self.stored_select = side(else_);
                let f = self.lower_expr(else_);
                self.unsure -= 1;
                self.stored_select = stored;
                // each side's hoisted statements run only when it is chosen
                if let Some(c) = &c {
                    let else_pre = self.pre.split_off(mark);
                    self.pre.extend(then_pre);
                    self.guard_hoisted(mark, c.clone(), else_pre, span);
                }
                let (c, t, f) = (c?, t?, f?);
                let (t, f, ty, weak) = match stored {
                    // a Python number beside a NumPy value: Python stores
                    // the number chosen, not the NumPy type of the other
                    // side (`x[i] if x[i] > 0 else 0.1` into float64)
                    // (and values of two types: each converted as Python
                    // stores the one it chooses)
                    Some((_, ty, dst)) if t.weak != f.weak || t.e.ty != f.e.ty => {
                        let t = self.store_convert(t, ty, dst);
                        let f = self.store_convert(f, ty, dst);
                        (t?, f?, ty, false)
                    }
                    _ => {
                        // (a NumPy value beside a Python number it does not
                        // hold: Python keeps the number chosen as it is)
                        if t.weak != f.weak {
                            let (s, w, s_at, w_at) = match t.weak {
                                false => (&t, &f, then.span, else_.span),
                                true => (&f, &t, else_.span, then.span),
                            };
                            let st = s.e.ty.elem();
                            let changed = st.and_then(|st| self.python_number_changed(w, st));
                            if let (Some(st), Some(v)) = (st, changed) {
                                self.python_number_join_error(
                                    "this conditional expression is",
                                    st,
                                    &v,
                                    s_at,
                                    w_at,
                                );
                                return None;
                            }
                        }
                        // (values of other types: Python's result keeps the
                        // type of the side chosen, the next operation's
                        // rule; not the items of a loop over a tuple of
                        // numbers, `select_chain`, read by a hidden index)
                        let side = |e: &TExpr| -> Option<_> {
                            Some((e.e.ty.elem()?, e.weak, const_scalar(&e.e)))
                        };
                        let differ = match (side(&t), side(&f)) {
                            (Some(a), Some(b)) if !hidden_index_test(cond) => {
                                self.path_types_differ(a, b)
                            }
                            _ => None,
                        };
                        if let Some(words) = differ {
                            self.path_types_error(
                                "this conditional expression gives",
                                words,
                                then.span,
                                else_.span,
                            );
                            return None;
                        }
                        self.unify(t, f)?
                    }
                };
                Some(TExpr {
                    e: Expr::select_as(c, t, f, Type::Scalar(ty), span),
                    weak,
                })
            }
            ast::ExprKind::Call {
                func,
                args,
                keywords,
            } => self.lower_call(func, (args, keywords), span),
        }
    }

    /// Puts the statements hoisted since `mark` under `if cond:` (with
    /// `else_body`), when there are any.
    fn guard_hoisted(
        &mut self,
        mark: usize,
        cond: Expr,
        else_body: Vec<crate::ir::Stmt>,
        span: Span,
    ) {
        let then_body = self.pre.split_off(mark);
        // a condition on the slice counters exists only inside the loop
        // nest: the hoisted statements then run unconditionally
        let per_element = self.slice.as_ref().is_some_and(|c| {
            c.vars()
                .iter()
                .any(|v| crate::ir::visit::uses_var(&cond, *v))
        });
        if per_element {
            self.pre.extend(then_body);
            self.pre.extend(else_body);
            return;
        }
        if then_body.is_empty() && else_body.is_empty() {
            return;
        }
        // the locals they assign get a value on every path first (the
        // unchosen side's value is never read; the race checks and the C
        // compiler see a definition)
        let mut assigned = vec![];
        for b in [&then_body, &else_body] {
            crate::ir::visit::walk_stmts(b, &mut |s| {
                if let crate::ir::StmtKind::Assign {
                    dst: crate::ir::Place::Var(v),
                    ..
                } = &s.kind
                {
                    if !assigned.contains(v) {
                        assigned.push(*v);
                    }
                }
            });
        }
        for v in assigned {
            let Type::Scalar(t) = self.func.var(v).ty.clone() else {
                continue;
            };
            self.pre.push(crate::ir::Stmt::new(
                crate::ir::StmtKind::Assign {
                    dst: crate::ir::Place::Var(v),
                    value: literal(ScalarValue::Int(0), t, span),
                },
                span,
            ));
        }
        self.pre.push(crate::ir::Stmt::new(
            crate::ir::StmtKind::If {
                cond,
                then_body,
                else_body,
            },
            span,
        ));
    }

    /// The error of an array read for its truth (`x[i, :] or 1.0`, `not
    /// x[i, :]`): Python's ValueError.
    fn ambiguous_truth(&mut self, v: &ast::Expr) {
        self.error(
            Diagnostic::error("the truth value of an array with more than one element is ambiguous")
                .at(v.span, "an array")
                .note("Python raises ValueError here")
                .help("use `.any()` or `.all()`, or `np.logical_or` / `np.logical_and` / `np.logical_not` for each element"),
        );
    }

    fn lower_unary(&mut self, op: UnOp, arg: &ast::Expr, span: Span) -> Option<TExpr> {
        if op == UnOp::Not {
            let b = self.lower_condition(arg)?;
            return self.unary(op, TExpr { e: b, weak: false }, span);
        }
        if op == UnOp::BitNot {
            if let ast::ExprKind::Name(n) = &arg.kind {
                let first = self.scope.get(n).map(|b| self.func.var(b.var).span);
                if let Some(first) = first.filter(|f| self.sh.bool_joined.contains(f)) {
                    self.error(
                        Diagnostic::error(format!(
                            "`~{n}` of a local that holds a NumPy bool on one path and an int on another"
                        ))
                        .at(span, "the bool's `~` is `not`, the int's is `-1 - v`")
                        .also(first, format!("`{n}` is a NumPy bool here"))
                        .note(format!(
                            "Python re-binds `{n}` to each value with its own type; parpy gives `{n}` one type, the int's, where NumPy's `~np.True_` is False but `~1` is -2"
                        ))
                        .help(format!(
                            "use a new name for the int, or write `not {n}` / `-1 - {n}` for the meaning you want"
                        ))
                        .type_error(),
                    );
                    return None;
                }
            }
        }
        let a = self.lower_expr(arg)?;
        self.unary(op, a, span)
    }

    /// `e` read for its truth (an `if` or `while` condition, `not e`, a
    /// conditional expression's test): Python's truth of its value (of an
    /// array, Python's ValueError); an `and` / `or` in it is the `and` /
    /// `or` of its operands' truths.
    pub(super) fn lower_condition(&mut self, e: &ast::Expr) -> Option<Expr> {
        if self.rank(e) > 0 {
            self.ambiguous_truth(e);
            return None;
        }
        self.condition = matches!(e.kind, ast::ExprKind::BoolOp { .. });
        let t = self.lower_expr(e);
        self.condition = false;
        self.truthy(t?)
    }

    /// `op a`: `-a`, `not a`, `~a`, `+a`.
    pub(super) fn unary(&mut self, op: UnOp, a: TExpr, span: Span) -> Option<TExpr> {
        let ty = self.scalar_elem(&a)?;
        match op {
            // `+` (`np.positive`) of a Python bool is the int's (`+True`
            // is 1); of a NumPy bool NumPy's TypeError (`np.positive` has
            // no bool loop); of a number the number
            UnOp::Pos if ty == ElemTy::Bool && a.weak => Some(TExpr {
                e: convert(a.e, self.opts.int_type),
                weak: true,
            }),
            UnOp::Pos if ty == ElemTy::Bool => {
                self.error(
                    Diagnostic::error("`+` (`np.positive`) of a bool is not defined in NumPy")
                        .at(a.e.span, "this is a bool")
                        .note("NumPy raises UFuncTypeError here: `np.positive` has no bool loop")
                        .help("convert it to an integer first: `int(b)`")
                        .type_error(),
                );
                None
            }
            UnOp::Pos => Some(a),
            // `-` of a Python bool is the int's (`-True` is -1); of a NumPy
            // bool, NumPy's TypeError
            UnOp::Neg if ty == ElemTy::Bool && a.weak => {
                let int = TExpr {
                    e: convert(a.e, self.opts.int_type),
                    weak: true,
                };
                self.unary(op, int, span)
            }
            UnOp::Neg => {
                if ty == ElemTy::Bool {
                    self.error(
                        Diagnostic::error("cannot negate a bool")
                            .at(span, "`-` on a bool")
                            .help("use `not` for a logical negation")
                            .type_error(),
                    );
                    return None;
                }
                // (a Python int is negated exactly: `-2**63` is INT64_MIN;
                // a NumPy integer wraps in its type: `-np.uint8(200)` is 56)
                let exact = self
                    .exact_python_int(&a)
                    .and_then(|c| i64::try_from(-c).ok());
                let kind = match (a.e.kind, exact) {
                    (_, Some(n)) => ExprKind::Int(n),
                    (ExprKind::Int(v), _) if !a.weak => {
                        ExprKind::Int(crate::ir::eval::wrap_int(v.wrapping_neg(), ty))
                    }
                    (ExprKind::Int(v), _) if v != i64::MIN => ExprKind::Int(-v),
                    (ExprKind::Float(v), _) => ExprKind::Float(-v),
                    (k, _) => ExprKind::Unary {
                        op: UnOp::Neg,
                        arg: Box::new(Expr::new(k, a.e.ty.clone(), a.e.span)),
                    },
                };
                Some(TExpr {
                    e: Expr::new(kind, a.e.ty, span),
                    weak: a.weak,
                })
            }
            UnOp::Not => {
                let b = self.truthy(a)?;
                Some(TExpr {
                    e: Expr::new(
                        ExprKind::Unary {
                            op: UnOp::Not,
                            arg: Box::new(b),
                        },
                        Type::Scalar(ElemTy::Bool),
                        span,
                    ),
                    // `not` always gives a Python bool
                    weak: true,
                })
            }
            UnOp::BitNot => {
                if ty.is_float() {
                    self.error(
                        Diagnostic::error("`~` needs an integer or bool operand")
                            .at(a.e.span, format!("this has type `{ty}`"))
                            .type_error(),
                    );
                    return None;
                }
                // `~` of a NumPy bool is logical not; of a Python bool, the
                // int's `~` (`~True` is -2)
                let (op, ty, arg) = match (ty, a.weak) {
                    (ElemTy::Bool, false) => (UnOp::Not, ty, a.e),
                    (ElemTy::Bool, true) => (
                        UnOp::BitNot,
                        self.opts.int_type,
                        convert(a.e, self.opts.int_type),
                    ),
                    _ => (UnOp::BitNot, ty, a.e),
                };
                Some(TExpr {
                    e: Expr::new(
                        ExprKind::Unary {
                            op,
                            arg: Box::new(arg),
                        },
                        Type::Scalar(ty),
                        span,
                    ),
                    weak: a.weak,
                })
            }
        }
    }

    /// `a op b` with promotion and conversions.
    pub(super) fn binary(&mut self, op: BinOp, a: TExpr, b: TExpr, span: Span) -> Option<TExpr> {
        if matches!(op, BinOp::And | BinOp::Or) {
            let a = self.truthy(a);
            let b = self.truthy(b);
            return Some(TExpr {
                e: bool_binary(op, a?, b?, span),
                weak: false,
            });
        }
        if op.is_comparison() {
            if let Some(c) = self.int_comparison(op, &a, &b, span) {
                return c;
            }
        }
        let ints = |t: &TExpr| t.e.ty.elem().is_some_and(|t| !t.is_float());
        if op == BinOp::Div && ints(&a) && ints(&b) && !(a.weak && b.weak) {
            // NumPy's true division of integers runs its float64 loop: a
            // Python int converts to float64 there, never to the other
            // operand's type (`u8 / -2` is -2.5, `i8 / 300` no overflow)
            let ty = self.opts.float_type;
            let (l, r) = (self.convert_exact(a, ty), self.convert_exact(b, ty));
            let e = Expr::binary(op, l, r, Type::Scalar(ty), span);
            return Some(TExpr { e, weak: false });
        }
        let (mut l, mut r, mut ty, weak) = self.unify(a, b)?;
        let is_bitwise = matches!(
            op,
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr
        );
        if is_bitwise && ty.is_float() {
            self.error(
                Diagnostic::error(format!(
                    "the operator `{}` needs integer operands, found `{ty}`",
                    op.symbol()
                ))
                .at(span, "float operands")
                .type_error(),
            );
            return None;
        }
        let mut op = op;
        if op == BinOp::Div && !ty.is_float() {
            ty = self.opts.float_type;
            l = convert(l, ty);
            r = convert(r, ty);
        } else if ty == ElemTy::Bool && !weak {
            // NumPy bools: `+` is logical or, `*` logical and, `-` an error;
            // `//`, `%`, `**` and shifts compute in int8
            match op {
                BinOp::Add => op = BinOp::Or,
                BinOp::Mul => op = BinOp::And,
                BinOp::Sub => {
                    self.error(
                        Diagnostic::error("cannot subtract NumPy bools")
                            .at(span, "`-` on bools")
                            .note("NumPy does not support `-` on bools")
                            .help("use `^` for a logical xor, or convert to an integer first")
                            .type_error(),
                    );
                    return None;
                }
                BinOp::FloorDiv | BinOp::Mod | BinOp::Pow | BinOp::Shl | BinOp::Shr => {
                    ty = ElemTy::I8;
                    l = convert(l, ty);
                    r = convert(r, ty);
                }
                _ => {}
            }
        } else if ty == ElemTy::Bool
            && matches!(
                op,
                BinOp::Add
                    | BinOp::Sub
                    | BinOp::Mul
                    | BinOp::FloorDiv
                    | BinOp::Mod
                    | BinOp::Pow
                    | BinOp::Shl
                    | BinOp::Shr
            )
        {
            // Python bools compute as Python ints
            ty = self.opts.int_type;
            l = convert(l, ty);
            r = convert(r, ty);
        }
        if op == BinOp::Pow && ty.is_signed_int() {
            // the exponent's values, a constant's or the loops'
            let values = match self.known_int(&r) {
                Some(v) => Some((v as i128, v as i128)),
                None => self.range(&r).map(|v| (v.lo, v.hi)),
            };
            // (Python's int power of a negative exponent is a float)
            if weak && values.is_some_and(|(_, hi)| hi < 0) {
                ty = self.opts.float_type;
                l = convert(l, ty);
                r = convert(r, ty);
            } else if values.is_none_or(|(lo, _)| lo < 0) {
                self.negative_power_check(&r, weak, span);
            }
        }
        let (res_ty, res_weak) = if op.is_comparison() {
            // a comparison of Python values is a Python bool
            (ElemTy::Bool, weak)
        } else {
            (ty, weak)
        };
        Some(TExpr {
            e: Expr::new(
                ExprKind::Binary {
                    op,
                    lhs: Box::new(l),
                    rhs: Box::new(r),
                },
                Type::Scalar(res_ty),
                span,
            ),
            weak: res_weak,
        })
    }

    /// Python's `ZeroDivisionError` (with its words) where `d`, the divisor
    /// of Python numbers of types `ta`, `tb`, is zero when the code runs:
    /// a check as an `assert` is, before the statement (none where the
    /// loops' ranges prove `d` is not zero: `j % ((j & 7) + 1)`).
    pub(super) fn python_zero_division(
        &mut self,
        op: BinOp,
        d: Expr,
        ta: Option<ElemTy>,
        tb: Option<ElemTy>,
        span: Span,
    ) {
        let (Some(ta), Some(tb)) = (ta, tb) else {
            return;
        };
        if self.range(&d).is_some_and(|r| r.lo > 0 || r.hi < 0) {
            return;
        }
        let float = ta.is_float() || tb.is_float();
        let message = match (op, float) {
            (BinOp::Div, false) => "division by zero",
            (BinOp::Div, true) => "float division by zero",
            (BinOp::FloorDiv, false) => "integer division or modulo by zero",
            (BinOp::FloorDiv, true) => "float floor division by zero",
            (_, false) => "integer modulo by zero",
            (_, true) => "float modulo",
        };
        let ty = d.ty.clone();
        let zero = match ty.elem() {
            Some(e) if e.is_float() => Expr::new(ExprKind::Float(0.0), ty, span),
            Some(ElemTy::Bool) => Expr::new(ExprKind::Bool(false), ty, span),
            Some(_) => Expr::new(ExprKind::Int(0), ty, span),
            None => return,
        };
        let nonzero = Expr::compare(BinOp::Ne, d, zero, span);
        self.raise_unless(vec![(nonzero, message, "ZeroDivisionError")], span);
    }

    /// `t`, Python's `base ** exp` of Python numbers computed at run time
    /// as a float, with Python's errors where C gives inf or NaN: `0.0 **
    /// -1` is `ZeroDivisionError`, an infinity from finite operands
    /// `OverflowError` (`10.0 ** 400`), and a negative float to a
    /// fractional power, which Python makes a complex number, a
    /// `TypeError` (parpy has no complex numbers; storing one raises it).
    fn python_pow_errors(&mut self, t: TExpr, base: Expr, exp: Expr, span: Span) -> TExpr {
        use crate::ops::MathFn;
        let Some(ft) = t.e.ty.elem().filter(|e| e.is_float()) else {
            return t;
        };
        let value = self.stash(t.e, span);
        let f = |e: Expr| super::types::convert(e, ElemTy::F64);
        let float = |v: f64| Expr::new(ExprKind::Float(v), Type::Scalar(ElemTy::F64), span);
        let test = |g: MathFn, e: Expr| super::calls::predicate(g, e, ElemTy::F64, span);
        let and =
            |a: Expr, b: Expr| Expr::binary(BinOp::And, a, b, Type::Scalar(ElemTy::Bool), span);
        let (b64, e64) = (f(base), f(exp));
        let pole = and(
            Expr::compare(BinOp::Eq, b64.clone(), float(0.0), span),
            Expr::compare(BinOp::Lt, e64.clone(), float(0.0), span),
        );
        let fractional = Expr::compare(
            BinOp::Ne,
            Expr::math(MathFn::Trunc, vec![e64.clone()], ElemTy::F64, span),
            e64.clone(),
            span,
        );
        let complex = and(
            and(
                Expr::compare(BinOp::Lt, b64.clone(), float(0.0), span),
                fractional,
            ),
            test(MathFn::IsFinite, e64.clone()),
        );
        let overflow = and(
            test(MathFn::IsInf, f(value.clone())),
            and(test(MathFn::IsFinite, b64), test(MathFn::IsFinite, e64)),
        );
        let mut checks = vec![(
            Expr::not(pole, span),
            "0.0 cannot be raised to a negative power",
            "ZeroDivisionError",
        )];
        if ft == ElemTy::F64 {
            checks.push((
                Expr::not(complex, span),
                "a negative number to a fractional power is a complex number (Python makes one; parpy has no complex numbers)",
                "TypeError",
            ));
            checks.push((
                Expr::not(overflow, span),
                "(34, 'Numerical result out of range')",
                "OverflowError",
            ));
        }
        self.raise_unless(checks, span);
        TExpr {
            e: value,
            weak: t.weak,
        }
    }

    /// Python's `ValueError: negative shift count` where `count`, the
    /// shift count of a shift of Python ints, is negative when the code
    /// runs (none where the loops' ranges prove it is not).
    fn python_negative_shift(&mut self, count: Expr, span: Span) {
        if self.range(&count).is_some_and(|r| r.lo >= 0) {
            return;
        }
        let Some(ElemTy::I64 | ElemTy::I32 | ElemTy::I16 | ElemTy::I8) = count.ty.elem() else {
            return;
        };
        let zero = Expr::new(ExprKind::Int(0), count.ty.clone(), span);
        let ok = Expr::compare(BinOp::Ge, count, zero, span);
        self.raise_unless(vec![(ok, "negative shift count", "ValueError")], span);
    }

    /// `e`, an operator of number literals (`2 ** 70`), has a value that
    /// parpy can hold: an int in -2**63 .. 2**64 (the top half for uint64),
    /// or a float. Python's exact int would meet NumPy as an OverflowError
    /// (`np.int64(1) + 2 ** 70`), or parpy would keep only 64 of its bits.
    fn python_constant_fits(&mut self, e: &ast::Expr) -> Option<()> {
        let known = |n: &str| self.known_python_number(n);
        let number = python_number(e, &known);
        // (an int past 128 bits, `1 << 1000`: beyond even `ir::eval`'s
        // exact ints, as far from 64 bits)
        let v = match number {
            None if python_int_overflows(e, &known) => None,
            Some(PyNumber::Int(v)) => Some(v),
            _ => return Some(()),
        };
        if let Some(v) = v {
            if (i64::MIN as i128..=i64::MAX as i128).contains(&v) {
                return Some(());
            }
            if (0..=u64::MAX as i128).contains(&v) {
                self.wide_constants.push((e.span, v));
                return Some(());
            }
        }
        let (shown, float) = match v {
            Some(v) => (
                v.to_string(),
                format!(
                    "for a float, write a float literal: `{}{:e}` (or `2.0 ** 70` for `2 ** 70`)",
                    if v < 0 { "-" } else { "" },
                    v.unsigned_abs() as f64
                ),
            ),
            None => (
                "at least 2**127 in size".to_string(),
                "for a float, compute it with floats (`2.0 ** 1000` for `2 ** 1000`)".to_string(),
            ),
        };
        let mut d = Diagnostic::error(format!(
            "this Python int is {shown}, which does not fit in 64 bits"
        ))
        .at(e.span, "Python computes this exactly")
        .note(
            "parpy computes integers in at most 64 bits, and NumPy raises OverflowError \
             when such an int meets an integer array",
        );
        let mut names = vec![];
        ast_names(e, &mut names);
        names.dedup();
        let known: Vec<String> = names
            .iter()
            .filter_map(|n| match self.known_python_number(n)? {
                PyNumber::Int(k) => Some(format!("`{n}` = {k}")),
                PyNumber::Float(f) => Some(format!("`{n}` = {f:?}")),
            })
            .collect();
        let help = match known.is_empty() {
            true => float,
            false => {
                d = d.note(format!(
                    "{} when compiling (a specialized argument or a constant): parpy computes \
                     with it as Python computes with a literal",
                    known.join(", ")
                ));
                format!(
                    "{float}, or make an operand a float (`float({})`)",
                    names[0]
                )
            }
        };
        self.error(d.help(help));
        None
    }

    /// Reports an operator of Python number literals (`t`, lowered) that
    /// Python does not compute (`ir::eval` in Python mode): it raises
    /// (`0.0 ** -1.0`, `1 << -1`) or its value is complex (`(-8.0) **
    /// 0.5`). `None` after reporting.
    fn python_constant_check(&mut self, t: &TExpr, span: Span) -> Option<()> {
        use crate::ir::eval::{self, EvalError, Mode};
        let ExprKind::Binary { op, lhs, rhs } = &t.e.kind else {
            return Some(());
        };
        let (Some(a), Some(b)) = (const_scalar(lhs), const_scalar(rhs)) else {
            return Some(());
        };
        if !t.weak {
            return Some(());
        }
        // (an int wider than 64 bits is not reported: parpy's Python int
        // wraps, which gives Python's value where the program keeps 64
        // bits of it, as `-2 ** 63` or `2 ** 64 - 1` stored into uint64)
        let (what, raises) = match eval::binary(*op, a, b, Mode::Python) {
            Ok(_) | Err(EvalError::Overflow) if t.e.ty.elem().is_some_and(ElemTy::is_int) => {
                return Some(())
            }
            Ok(_) => return Some(()),
            Err(EvalError::Overflow) => ("the power overflows a float", Some("OverflowError")),
            Err(EvalError::DivisionByZero) => ("it divides by zero", Some("ZeroDivisionError")),
            Err(EvalError::NegativeShift) => ("the shift count is negative", Some("ValueError")),
            Err(EvalError::NegativePower) => ("the power is negative", Some("ValueError")),
            Err(EvalError::Unsupported(w)) if w.contains("complex") => (
                "a negative number to a fractional power is a complex number",
                None,
            ),
            Err(EvalError::Unsupported(_)) => return Some(()),
        };
        let sym = op.symbol();
        let d = match raises {
            Some(r) => {
                Diagnostic::error(format!("this `{sym}` of Python numbers raises {r}: {what}"))
                    .at(span, "Python numbers")
                    .note(format!(
                        "Python computes it before NumPy sees it, and raises {r}"
                    ))
            }
            None => Diagnostic::error(format!(
                "this `{sym}` of Python numbers is not a float: {what}"
            ))
            .at(span, "Python numbers")
            .note("NumPy's float64 gives NaN here")
            .help("write `np.float64(a) ** b` for NumPy's NaN"),
        };
        self.error(d);
        None
    }

    /// The run-time check of an integer power's exponent `r` that may be
    /// negative: NumPy raises `ValueError` for its integers; Python's
    /// power of ints (`weak`) is a float then, which the int that parpy
    /// computes cannot hold, so it raises too, saying so.
    fn negative_power_check(&mut self, r: &Expr, weak: bool, span: Span) {
        let zero = Expr::new(ExprKind::Int(0), r.ty.clone(), span);
        let ok = Expr::compare(BinOp::Ge, r.clone(), zero, span);
        let message = match weak {
            false => "Integers to negative integer powers are not allowed.",
            true => "a negative exponent makes Python's int power a float, which parpy computes as an int here: write a float base (`2.0 ** e`)",
        };
        let check = Expr::assert(ok, Some(message.to_string()), "ValueError", span);
        self.pre
            .push(crate::ir::Stmt::new(crate::ir::StmtKind::Expr(check), span));
    }

    /// An item of a tuple literal (`((0, 1), (1, 0))[k][0]`, which a local
    /// name of one stands for: `lists.rs` `local_tuples`): a constant
    /// index picks the item, as Python does; a run-time one indexes a tuple
    /// of numbers as the list of them (checked where it runs).
    fn tuple_literal_item(&mut self, e: &ast::Expr) -> Option<TExpr> {
        let (base, idx) = flatten_subscript(e);
        let mut cur = base.clone();
        for (k, ix) in idx.iter().enumerate() {
            let ast::ExprKind::Tuple(items) = &cur.kind else {
                self.error(
                    Diagnostic::error("a number cannot be indexed")
                        .at(ix.span, "indexes an item of the tuple, a number"),
                );
                return None;
            };
            let nested = items
                .iter()
                .any(|i| matches!(i.kind, ast::ExprKind::Tuple(_)));
            let known = self.lower_expr(ix).and_then(|t| self.known_int(&t.e));
            match known {
                Some(c) => {
                    let n = items.len() as i64;
                    if !(-n..n).contains(&c) {
                        self.error(
                            Diagnostic::error("tuple index out of range")
                                .at(ix.span, format!("index {c} of a tuple of {n}"))
                                .note("Python raises IndexError here"),
                        );
                        return None;
                    }
                    cur = items[c.rem_euclid(n) as usize].clone();
                }
                None if !nested && k + 1 == idx.len() => {
                    let read = ast::Expr {
                        kind: ast::ExprKind::Subscript {
                            value: Box::new(ast::Expr::list(items.clone(), cur.span)),
                            indices: vec![(*ix).clone()],
                        },
                        span: e.span,
                    };
                    return self.lower_expr(&read);
                }
                None => return self.tuple_rows_item(items, ix, &idx[k + 1..], e.span),
            }
        }
        self.lower_expr(&cur)
    }

    /// `t[ix][rest]` of a tuple literal `t` of `items` (some of them
    /// tuples) at a run-time index `ix`: the row number is `ix` checked
    /// and wrapped as Python indexes the tuple (a read of the list of row
    /// numbers), each row read at `rest` and the one of that number
    /// chosen. The rows must be alike: tuples of one length whose numbers
    /// are of one type (as a list read at a run-time index is), so that
    /// the value is the item's as Python reads it.
    fn tuple_rows_item(
        &mut self,
        items: &[ast::Expr],
        ix: &ast::Expr,
        rest: &[&ast::Expr],
        span: Span,
    ) -> Option<TExpr> {
        fn leaves<'e>(e: &'e ast::Expr, out: &mut Vec<&'e ast::Expr>) {
            match &e.kind {
                ast::ExprKind::Tuple(items) => items.iter().for_each(|i| leaves(i, out)),
                _ => out.push(e),
            }
        }
        fn shape(e: &ast::Expr) -> Vec<usize> {
            match &e.kind {
                ast::ExprKind::Tuple(items) => {
                    let mut s = vec![items.len()];
                    s.extend(items.first().map(shape).unwrap_or_default());
                    s
                }
                _ => vec![],
            }
        }
        let rectangular = items.iter().all(|i| {
            let mut all = vec![];
            leaves(i, &mut all);
            shape(i) == shape(&items[0]) && all.len() == shape(i).iter().product::<usize>()
        });
        let mut all = vec![];
        items.iter().for_each(|i| leaves(i, &mut all));
        let numbers: Vec<ast::Expr> = all.into_iter().cloned().collect();
        let types = self.item_types(&numbers)?;
        let one_type = types.windows(2).all(|w| w[0] == w[1]);
        if !rectangular || !one_type {
            let why = if rectangular {
                "its numbers are of several types"
            } else {
                "its rows are not tuples of one length"
            };
            self.error(
                Diagnostic::error(format!(
                    "a tuple of tuples indexed at a run-time index must have rows alike: {why}"
                ))
                .at(ix.span, "not known when compiling")
                .note("Python reads the item as it is; parpy reads the row at a run-time index as one of rows of one shape and type")
                .help("give the rows one length and the numbers one type (`1.0` for `1`), or index with a constant"),
            );
            return None;
        }
        let n = items.len();
        let numbers: Vec<ast::Expr> = (0..n as i64)
            .map(|k| ast::Expr {
                kind: ast::ExprKind::Int(k),
                span: ix.span,
            })
            .collect();
        let row = ast::Expr {
            kind: ast::ExprKind::Subscript {
                value: Box::new(ast::Expr::list(numbers, ix.span)),
                indices: vec![ix.clone()],
            },
            span: ix.span,
        };
        let row = self.lower_expr(&row)?;
        let mut value: Option<TExpr> = None;
        for (k, item) in items.iter().enumerate().rev() {
            let mut read = item.clone();
            for r in rest {
                read = ast::Expr {
                    kind: ast::ExprKind::Subscript {
                        value: Box::new(read),
                        indices: vec![(*r).clone()],
                    },
                    span,
                };
            }
            let t = self.lower_expr(&read)?;
            value = Some(match value {
                None => t,
                Some(v) => {
                    let ty = t.e.ty.clone();
                    let k = Expr::int(k as i64, row.e.ty.elem()?, span);
                    let cond = Expr::compare(BinOp::Eq, row.e.clone(), k, span);
                    TExpr {
                        e: Expr::select_as(cond, t.e, v.e, ty, span),
                        weak: t.weak,
                    }
                }
            });
        }
        value
    }

    /// The value indexed by subscript `e` when it is computed (a call, an
    /// operator: `np.diff(u)[0]`), not an array, a transpose or a shape.
    fn computed_base<'e>(&mut self, e: &'e ast::Expr) -> Option<&'e ast::Expr> {
        let (base, _) = flatten_subscript(e);
        // (a reshaped view: `lower_subscript`, sema::views)
        if self.reshape_view(base).is_some() {
            return None;
        }
        match &base.kind {
            ast::ExprKind::Call { .. }
            | ast::ExprKind::Binary { .. }
            | ast::ExprKind::Unary { .. }
            | ast::ExprKind::Compare { .. }
            | ast::ExprKind::IfExp { .. } => Some(base),
            _ => None,
        }
    }

    /// Lowers a subscript (`a[i, j]`, `a[i][j]`, `a[i, :]`, `x.shape[k]`).
    pub(super) fn lower_subscript(&mut self, e: &ast::Expr) -> Option<Sub> {
        // (`np.flip`'s, `np.diff`'s or `np.diagonal`'s, for this subscript
        // only: not its indices')
        let view_op = self
            .view_op
            .filter(|(at, _)| *at == e.span)
            .map(|(_, op)| op);
        // `x[i, 1:][j]` as `x[i, 1 + j]` (sema::chains)
        if self.subscript_of_a_view(e).is_some() {
            let flat = self.composed_subscript(e)?;
            return self.lower_subscript(&flat);
        }
        let (base, idx) = flatten_subscript(e);
        // a reshaped view's element, a store into a diagonal (sema::views)
        if matches!(base.kind, ast::ExprKind::Call { .. }) {
            if let Some(r) = self.view_subscript(e, base, &idx) {
                return r;
            }
        }
        // `x.shape[k]` (and `x.T.shape[k]`)
        if let ast::ExprKind::Attr { value, attr } = &base.kind {
            let (value, t) = match transpose_of(value) {
                Some(x) => (x, true),
                None => (&**value, false),
            };
            if attr == "shape" {
                if let Some(shape) = self.array_shape(value) {
                    let mut shape = shape?;
                    if t {
                        shape.reverse();
                    }
                    let name = match &value.kind {
                        ast::ExprKind::Name(n) => n.as_str(),
                        _ => "array",
                    };
                    return self.shape_index(name, &shape, &idx, e.span);
                }
            }
        }
        // `x.T[i, j]` is `x[j, i]`: the indices reversed, the ones left out
        // full slices, whose dimensions come out in reverse order
        let full = ast::Expr::full_slice(e.span);
        let (base, idx, transposed) = match transpose_of(base) {
            Some(x) => {
                let rank = match self.array_arg(x) {
                    Some((_, Type::Array { shape, .. })) => shape.len(),
                    _ => idx.len(),
                };
                let mut idx = idx;
                let new_axes = idx.iter().filter(|ix| self.is_new_axis(ix)).count();
                if idx.len() - new_axes <= rank {
                    idx.resize(rank + new_axes, &full);
                    idx.reverse();
                }
                (x, idx, true)
            }
            None => (base, idx, false),
        };
        let mut alias = None;
        let (array, elem, shape, name) = match &base.kind {
            ast::ExprKind::Name(n) if self.scope.get(n).is_some() => {
                let mut b = self.scope.get(n)?;
                if let Some(c) = self.alias_of(b.var) {
                    alias = Some(b.var);
                    b.var = c[0];
                }
                match &self.func.var(b.var).ty {
                    // (an inlined helper's view of an argument is named
                    // `x#2.0`: messages name the argument)
                    Type::Array { elem, shape } => {
                        let shown = n.split(['#', '@']).next().unwrap_or(n);
                        (b.var, *elem, shape.clone(), shown.to_string())
                    }
                    t => {
                        let t = crate::ir::print::type_to_string(t);
                        self.error(
                            Diagnostic::error(format!("`{n}` cannot be indexed"))
                                .at(base.span, format!("this has type `{t}`, not an array")),
                        );
                        return None;
                    }
                }
            }
            ast::ExprKind::Name(n) => {
                if self.resolve_global(base).is_some() {
                    self.error(
                        Diagnostic::error(format!("`{n}` cannot be indexed"))
                            .at(base.span, "not an array parameter")
                            .help(format!(
                                "parpy functions read module-level numbers and tuples of them; \
                                 pass the array `{n}` as an argument"
                            )),
                    );
                }
                return None;
            }
            ast::ExprKind::Generator { list: true, .. } => {
                self.error(
                    Diagnostic::error("a list comprehension cannot be indexed in parpy functions")
                        .at(base.span, "a list comprehension")
                        .note("kernels do not allocate: parpy does not make the list")
                        .help(
                            "store it into a local array and index that: `t = np.empty(n)`, \
                             `t[:] = [... for j in range(n)]`, then `t[k]`; or index a list \
                             of the values: `[0, 2, 4][k]`",
                        ),
                );
                return None;
            }
            ast::ExprKind::Generator { list: false, .. } => {
                self.error(
                    Diagnostic::error("a generator expression cannot be indexed")
                        .at(base.span, "a generator")
                        .note("Python cannot index a generator either (TypeError)")
                        .help(
                            "store the values into a local array and index that: \
                             `t = np.empty(n)`, `t[:] = [... for j in range(n)]`, then `t[k]`",
                        ),
                );
                return None;
            }
            // `x.strides[0]`, `y.flat[4]`, `y.real[1]`: the attribute is
            // what parpy lacks
            ast::ExprKind::Attr { value, attr } if self.array_shape(value).is_some() => {
                let of = match &value.kind {
                    ast::ExprKind::Name(n) => format!("`{n}`"),
                    _ => "an array".to_string(),
                };
                self.error(
                    Diagnostic::error(format!(
                        "attribute `{attr}` of {of} is not supported in parpy functions"
                    ))
                    .at(base.span, "not supported")
                    .help("only `.T`, `.shape[k]`, `.size` and `.ndim` are supported on arrays"),
                );
                return None;
            }
            _ => {
                self.error(
                    Diagnostic::error("only array parameters can be indexed")
                        .at(base.span, "not an array"),
                );
                return None;
            }
        };
        // (`lower_block` expanded a single `...` into full slices)
        if let Some(second) = idx
            .iter()
            .filter(|ix| matches!(ix.kind, ast::ExprKind::Ellipsis))
            .nth(1)
        {
            self.error(
                Diagnostic::error("an index can only have a single ellipsis (`...`)")
                    .at(second.span, "a second `...`")
                    .note("NumPy raises IndexError for it"),
            );
            return None;
        }
        let mut slots = self.index_slots(&idx, &shape, &name, e.span)?;
        if let Some(op) = view_op {
            self.view_slots(&mut slots, op, transposed, e.span)?;
        }
        let indices = self.map_slices(slots, transposed, e.span)?;
        Some(Sub::Elem {
            array,
            indices,
            elem,
            alias,
        })
    }

    /// The slots of the indices `idx` of an array `name` of `shape` (too
    /// many or, outside a slice statement, too few indices an error).
    pub(super) fn index_slots(
        &mut self,
        idx: &[&ast::Expr],
        shape: &[i64],
        name: &str,
        span: Span,
    ) -> Option<Vec<IndexSlot>> {
        // `None` / `np.newaxis` indexes no dimension: it adds one of length 1
        let new_axes: Vec<bool> = idx.iter().map(|ix| self.is_new_axis(ix)).collect();
        let given = new_axes.iter().filter(|n| !**n).count();
        if given > shape.len() {
            self.error(
                Diagnostic::error(format!(
                    "too many indices: `{name}` has {} dimension{} but {} indices were given",
                    shape.len(),
                    if shape.len() == 1 { "" } else { "s" },
                    given
                ))
                .at(span, "too many indices"),
            );
            return None;
        }
        if given < shape.len() && self.slice.is_none() {
            let mut d = Diagnostic::error(format!(
                "`{name}` has {} dimensions but {} index{} given",
                shape.len(),
                given,
                if given == 1 { " was" } else { "es were" }
            ))
            .at(span, "not enough indices")
            .help("give one index per dimension (`a[i, j]`), or use a slice such as `a[i, :]` in a slice assignment or a reduction");
            if let Some((n, _)) = &self.name_target {
                d = d.help(format!(
                    "`{n} = {name}[...]` names a row of `{name}` when `{n}` is assigned nowhere else in the function"
                ));
            }
            self.error(d);
            return None;
        }
        let gather = self.gather_dims(idx, &new_axes)?;
        let mut slots = vec![];
        // the slot of each index (NumPy puts the gathered dimensions where
        // the first of the adjacent advanced indices is)
        let mut slot_of = vec![];
        let mut ok = true;
        let mut idx = idx.iter().zip(new_axes).peekable();
        for (k, dim) in shape.iter().enumerate() {
            while idx.next_if(|(_, new)| *new).is_some() {
                slot_of.push(slots.len());
                slots.push(IndexSlot::NewAxis);
            }
            let Some((ix, _)) = idx.next() else {
                slots.push(IndexSlot::full(*dim, self.opts.int_type, span));
                continue;
            };
            slot_of.push(slots.len());
            if gather.as_ref().is_some_and(|g| g.arrays[slot_of.len() - 1]) {
                slots.push(IndexSlot::Gathered {
                    index: (*ix).clone(),
                    dim: *dim,
                });
                continue;
            }
            if let ast::ExprKind::Slice { lo, hi, step } = &ix.kind {
                let parts = (lo.as_deref(), hi.as_deref(), step.as_deref());
                match self.slice_bounds(parts, *dim, ix.span) {
                    Some(s) => slots.push(s),
                    None => ok = false,
                }
                continue;
            }
            // (a Python int past 64 bits, which its literal would wrap)
            let known = |n: &str| self.known_python_number(n);
            let number = python_number(ix, &known).filter(|_| self.is_known_python(ix));
            let wide = match number {
                Some(PyNumber::Int(v)) => i64::try_from(v).is_err().then_some(v),
                _ => None,
            };
            if let Some(v) = wide {
                let message = format!(
                    "index {v} is out of bounds for dimension {k} of `{name}` (size {dim})"
                );
                let d = Diagnostic::error(message.clone()).at(ix.span, "out of bounds");
                // (where the statement may not run: a check that fails
                // where it runs, and an index past the end, which the
                // store's own check keeps from writing)
                match self.fails_when_run(d, &message, "IndexError", ix.span) {
                    true => slots.push(IndexSlot::Scalar(Expr::int(
                        *dim,
                        self.opts.int_type,
                        ix.span,
                    ))),
                    false => ok = false,
                }
                continue;
            }
            let Some(t) = self.lower_expr(ix) else {
                ok = false;
                continue;
            };
            let Some(i) = self.element_index(t, "an array index") else {
                ok = false;
                continue;
            };
            match const_int(&i) {
                // (a statement that may not run is checked where it runs:
                // Python raises only when it does)
                Some(c) if (c < -dim || c >= *dim) && !self.certain() => {
                    slots.push(IndexSlot::Scalar(self.wrap_negative(i, *dim)))
                }
                Some(c) if c < -dim || c >= *dim => {
                    self.error(
                        Diagnostic::error(format!(
                            "index {c} is out of bounds for dimension {k} of `{name}` (size {dim})"
                        ))
                        .at(ix.span, "out of bounds")
                        .raises("IndexError"),
                    );
                    ok = false;
                }
                Some(c) if c < 0 => slots.push(IndexSlot::Scalar(Expr::int(
                    c + dim,
                    self.opts.int_type,
                    ix.span,
                ))),
                _ => slots.push(IndexSlot::Scalar(self.wrap_negative(i, *dim))),
            }
        }
        slots.extend(idx.map(|_| IndexSlot::NewAxis));
        if !ok {
            return None;
        }
        if let Some(g) = gather {
            let at = g.first.map_or(0, |p| slot_of[p]);
            slots.insert(at, IndexSlot::Gather(g.dims));
        }
        Some(slots)
    }

    /// NumPy's advanced indexing among the indices `idx` (`new_axes` the
    /// `None`s among them): when some are arrays of integers (`x[idx, :]`,
    /// `x[:, [2, 0, 1]]`), which of them are, their broadcast shape, and
    /// the index in whose place NumPy puts its dimensions (`None`: first,
    /// the advanced indices, arrays and numbers, not being adjacent).
    /// `Some(None)` when no index is an array of integers (a boolean mask
    /// is another rule), `None` after an error.
    fn gather_dims(&mut self, idx: &[&ast::Expr], new_axes: &[bool]) -> Option<Option<Gather>> {
        let plain = |ix: &ast::Expr| {
            !matches!(
                ix.kind,
                ast::ExprKind::Slice { .. } | ast::ExprKind::Ellipsis
            )
        };
        let arrays: Vec<bool> = idx
            .iter()
            .zip(new_axes)
            .map(|(ix, new)| !new && plain(ix) && self.rank(ix) > 0)
            .collect();
        if !arrays.contains(&true) {
            return Some(None);
        }
        let mut dims: Vec<i64> = vec![];
        let mut first_shape: Option<(Vec<i64>, Span)> = None;
        for (ix, _) in idx.iter().zip(&arrays).filter(|(_, a)| **a) {
            let (from, diags) = (self.pre.len(), self.sh.diags.len());
            let saved = self.slice.take();
            let shape = self.array_shape_of(ix);
            self.slice = saved;
            self.pre.truncate(from);
            let Some((Some(shape), elem)) = shape else {
                if self.sh.diags.len() == diags {
                    return Some(None);
                }
                return None;
            };
            if elem == ElemTy::Bool {
                // (a mask: `masks.rs` rewrites the stores and reductions
                // of one)
                self.mask_read_error(ix.span);
                return None;
            }
            match super::slices::broadcast(&dims, &shape) {
                Some(b) => dims = b,
                None => {
                    let (other, at) = first_shape.clone().unwrap_or((dims.clone(), ix.span));
                    self.error(
                        Diagnostic::error(format!(
                            "shape mismatch: indexing arrays of shapes {} and {} could not be broadcast together",
                            super::local_arrays::shape_text(&other),
                            super::local_arrays::shape_text(&shape)
                        ))
                        .at(ix.span, "this index array")
                        .also(at, "the first index array")
                        .note("NumPy raises an IndexError"),
                    );
                    return None;
                }
            }
            first_shape.get_or_insert((shape, ix.span));
        }
        // the advanced indices: the arrays and the numbers
        let advanced: Vec<usize> = (0..idx.len())
            .filter(|&p| arrays[p] || (!new_axes[p] && plain(idx[p])))
            .collect();
        Some(Some(Gather {
            arrays,
            dims,
            first: gathered_at(&advanced),
        }))
    }

    /// Whether the index `ix` is `None` or a global that is (`np.newaxis`).
    pub(super) fn is_new_axis(&self, ix: &ast::Expr) -> bool {
        match &ix.kind {
            ast::ExprKind::None => true,
            ast::ExprKind::Name(_) | ast::ExprKind::Attr { .. } => {
                let Some(path) = ix.dotted_path() else {
                    return false;
                };
                self.scope.get(path[0]).is_none()
                    && matches!(self.resolver.resolve(&path), Resolved::NoneValue)
            }
            _ => false,
        }
    }

    /// The values an integer expression can take (`None`: not an integer).
    pub(super) fn range(&self, e: &Expr) -> Option<crate::ir::range::Interval> {
        self.loop_ranges.expr(&self.func, e)
    }

    /// `i < 0 ? i + dim : i` (Python's negative indices) unless `i` cannot
    /// be negative; constant indices are wrapped when lowering them.
    pub(super) fn wrap_negative(&self, i: Expr, dim: i64) -> Expr {
        if self.range(&i).is_some_and(|r| r.lo >= 0) {
            return i;
        }
        crate::ir::range::negative_wrap(i, dim)
    }

    /// Whether `first rest` is `a == b` or `a != b` with `a` or `b` an
    /// array's `.dtype` (a comparison of types, known when compiling).
    fn dtype_comparison(&self, first: &ast::Expr, rest: &[(BinOp, ast::Expr)]) -> bool {
        let is_dtype = |e: &ast::Expr| {
            matches!(&e.kind, ast::ExprKind::Attr { value, attr }
                if attr == "dtype" && self.array_arg(value).is_some())
        };
        matches!(rest, [(BinOp::Eq | BinOp::Ne, rhs)] if is_dtype(first) || is_dtype(rhs))
    }

    /// A type compared with an array's `.dtype`: a type (`np.float32`,
    /// `parpy.types.F32`, `y.dtype`), its NumPy name (`'float32'`) or
    /// `np.dtype(...)` of one.
    fn compared_dtype(&mut self, e: &ast::Expr) -> Option<ElemTy> {
        match &e.kind {
            ast::ExprKind::Str(name) => {
                match ElemTy::from_numpy_name(name) {
                    Some(t) => Some(t),
                    None => {
                        self.error(
                        Diagnostic::error(format!("`'{name}'` is not a NumPy type parpy has"))
                            .at(e.span, "not a type name")
                            .help("use a name such as 'float32' or 'int64', or the type `np.float32`"),
                    );
                        None
                    }
                }
            }
            ast::ExprKind::Call { func, args, .. }
                if args.len() == 1
                    && func
                        .dotted_path()
                        .is_some_and(|p| p.last() == Some(&"dtype")) =>
            {
                self.compared_dtype(&args[0])
            }
            _ => self.dtype_arg(e),
        }
    }

    /// The shape of `e` if it is an array (a name bound to one, or an
    /// array-valued expression: `x[i, 1:]`, `x * 2.0`); `None` if it is
    /// not one, `Some(None)` after an error.
    pub(super) fn array_shape(&mut self, e: &ast::Expr) -> Option<Option<Vec<i64>>> {
        if let ast::ExprKind::Name(n) = &e.kind {
            if let Some(b) = self.scope.get(n) {
                let var = self.alias_of(b.var).map_or(b.var, |c| c[0]);
                return match &self.func.var(var).ty {
                    Type::Array { shape, .. } => Some(Some(shape.clone())),
                    _ => None,
                };
            }
        }
        if self.rank(e) == 0 {
            return None;
        }
        Some(self.shape_of(e, "the shape").map(|(shape, _)| shape))
    }

    fn shape_index(
        &mut self,
        name: &str,
        shape: &[i64],
        idx: &[&ast::Expr],
        span: Span,
    ) -> Option<Sub> {
        let k = match idx {
            [k] => self.lower_expr(k).and_then(|t| self.known_int(&t.e)),
            _ => None,
        };
        let n = shape.len() as i64;
        match k {
            Some(k) if k >= -n && k < n => {
                let k = if k < 0 { k + n } else { k };
                Some(Sub::Const(shape[k as usize]))
            }
            _ => {
                self.error(
                    Diagnostic::error(format!(
                        "`{name}.shape` must be indexed by one constant between {} and {}",
                        -n,
                        n - 1
                    ))
                    .at(span, "invalid shape index"),
                );
                None
            }
        }
    }
}

/// A literal zero (`0`, `0.0`, `-0`) in the source.
/// Whether subscript `e` indexes with integers only: no slice, `...` or
/// new axis.
fn integer_indices(e: &ast::Expr) -> bool {
    let (_, idx) = flatten_subscript(e);
    idx.iter().all(|i| {
        !matches!(
            i.kind,
            ast::ExprKind::Slice { .. } | ast::ExprKind::Ellipsis | ast::ExprKind::None
        )
    })
}

/// A number literal, or an operator of them (`2 ** 62 * 4`, `-1.0`):
/// Python computes it, exactly, before NumPy sees it.
pub(super) fn is_python_constant(e: &ast::Expr) -> bool {
    match &e.kind {
        ast::ExprKind::Int(_) | ast::ExprKind::Float(_) | ast::ExprKind::Bool(_) => true,
        ast::ExprKind::Unary { arg, .. } => is_python_constant(arg),
        ast::ExprKind::Binary { lhs, rhs, .. } => {
            is_python_constant(lhs) && is_python_constant(rhs)
        }
        _ => false,
    }
}

/// The value Python computes for the operators of number literals `e`
/// (`2 ** 62 * 4 // 8`, `10 ** 20 // 10 ** 18`, `2 ** 70 * 1.0`): its ints
/// exact, so an intermediate value beyond 64 bits does not wrap (`None`
/// where `ir::eval::python_binary` has no value for it).
///
/// `known` gives the value of a name known when compiling
/// (`Lowerer::known_python_number`), `|_| None` for literals alone.
fn python_number(e: &ast::Expr, known: &dyn Fn(&str) -> Option<PyNumber>) -> Option<PyNumber> {
    match &e.kind {
        ast::ExprKind::Int(v) => Some(PyNumber::Int(*v as i128)),
        ast::ExprKind::Bool(b) => Some(PyNumber::Int(*b as i128)),
        ast::ExprKind::Float(f) => Some(PyNumber::Float(*f)),
        ast::ExprKind::Name(n) => known(n),
        ast::ExprKind::Unary { op, arg } => python_unary(*op, python_number(arg, known)?).ok(),
        ast::ExprKind::Binary { op, lhs, rhs } => {
            python_binary(*op, python_number(lhs, known)?, python_number(rhs, known)?).ok()
        }
        _ => None,
    }
}

/// Some operator in `e` of numbers known when compiling makes an int past
/// 128 bits (`1 << 1000`, `2 ** 200`), which `python_number` has no value
/// for.
fn python_int_overflows(e: &ast::Expr, known: &dyn Fn(&str) -> Option<PyNumber>) -> bool {
    use crate::ir::eval::EvalError;
    match &e.kind {
        ast::ExprKind::Unary { op, arg } => {
            python_int_overflows(arg, known)
                || python_number(arg, known)
                    .is_some_and(|a| python_unary(*op, a) == Err(EvalError::Overflow))
        }
        ast::ExprKind::Binary { op, lhs, rhs } => {
            python_int_overflows(lhs, known)
                || python_int_overflows(rhs, known)
                || match (python_number(lhs, known), python_number(rhs, known)) {
                    (Some(a @ PyNumber::Int(_)), Some(b @ PyNumber::Int(_))) => {
                        python_binary(*op, a, b) == Err(EvalError::Overflow)
                    }
                    _ => false,
                }
        }
        _ => false,
    }
}

/// `t`, the lowered operator of number literals `e`, as the literal of
/// Python's value; `t` itself where that value is not known here, or is an
/// int beyond 64 bits (which `t` keeps as the bits parpy keeps: `2 ** 64 -
/// 1` into a uint64, whose value a literal could not tell).
fn python_constant_value(
    e: &ast::Expr,
    t: TExpr,
    known: &dyn Fn(&str) -> Option<PyNumber>,
) -> TExpr {
    let ty = t.e.ty.clone();
    let kind = match (python_number(e, known), ty.elem()) {
        (Some(PyNumber::Int(v)), Some(el)) if t.weak && el.is_int() => match i64::try_from(v) {
            Ok(v) if wrap_int(v, el) == v => ExprKind::Int(v),
            _ => return t,
        },
        (Some(PyNumber::Float(f)), Some(ElemTy::F64)) if t.weak => ExprKind::Float(f),
        _ => return t,
    };
    TExpr {
        e: Expr::new(kind, ty, t.e.span),
        weak: true,
    }
}

/// The names an operator of numbers `e` reads, in order.
fn ast_names(e: &ast::Expr, out: &mut Vec<String>) {
    match &e.kind {
        ast::ExprKind::Name(n) if !out.contains(n) => out.push(n.clone()),
        ast::ExprKind::Unary { arg, .. } => ast_names(arg, out),
        ast::ExprKind::Binary { lhs, rhs, .. } => {
            ast_names(lhs, out);
            ast_names(rhs, out);
        }
        _ => {}
    }
}

fn is_literal_zero(e: &ast::Expr) -> bool {
    match &e.kind {
        ast::ExprKind::Int(0) | ast::ExprKind::Bool(false) => true,
        ast::ExprKind::Float(f) => *f == 0.0,
        ast::ExprKind::Unary { op: UnOp::Neg, arg } => is_literal_zero(arg),
        _ => false,
    }
}

pub(super) fn bool_binary(op: BinOp, a: Expr, b: Expr, span: Span) -> Expr {
    Expr::new(
        ExprKind::Binary {
            op,
            lhs: Box::new(a),
            rhs: Box::new(b),
        },
        Type::Scalar(ElemTy::Bool),
        span,
    )
}

/// Is `cond` the test of a hidden index (`NAME.index == k`, no Python
/// name has a `.`): `stmt.rs` `select_chain`'s items of a tuple loop.
fn hidden_index_test(cond: &ast::Expr) -> bool {
    matches!(&cond.kind, ast::ExprKind::Compare { first, .. }
        if matches!(&first.kind, ast::ExprKind::Name(n) if n.contains('.')))
}
