//! `y[i, :] = np.sort(s)` and `y[i, :] = np.argsort(s, kind='stable')` of
//! a 1-D slice `s`, as the whole right side of a slice assignment, and
//! `np.searchsorted(s, v, side)` (NumPy's binary search, at the end).
//! The method `s.sort()` sorts in place: `s[...] = np.sort(s)`.
//!
//! Jit code does not call a sort: the elements go into a local array
//! (`Lowerer::materialize`, so the destination may be the slice itself),
//! and each element is stored at its rank, the number of elements that
//! sort before it (n² comparisons: at most [`COUNTING_MAX`](super::order_stats::COUNTING_MAX) elements;
//! a branch-free count, which GPU threads run in step); on the Cpu a sort
//! of more than [`MERGE_MIN`] elements is a bottom-up merge sort of the
//! local array instead (`n log n` comparisons, the same order). The
//! order is NumPy's: NaN after every number; equal elements keep their
//! order, which is what a stable sort gives (so `argsort` needs
//! `kind='stable'`: NumPy's default sort may order equal elements either
//! way, and their indices differ; their values do not, but for `-0.0` and
//! `0.0`, which NumPy's default sort may also swap).

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, ElemTy, Expr, ExprKind, ForLoop, Place, Stmt, StmtKind, Type, VarKind};
use crate::syntax::ast;

use super::types::convert;
use super::{Lowerer, TExpr};

/// Sorts of more elements than this merge (Cpu): `n log n` comparisons
/// instead of the counting sort's `n²`.
const MERGE_MIN: i64 = 32;

/// The method that sorts in place, as `stmt.rs` rewrites `s.sort(...)`
/// into `s[...] = <s.sort()>(s, ...)`: a name no Python code can spell.
const IN_PLACE: &str = "sort()";

/// The right side of `s[...] = ...` that `s.sort(axis, kind, order,
/// stable)` is: a call of [`IN_PLACE`] with `s` and the parameters in
/// order (`None` for those not given); `None` for an unknown keyword.
pub(super) fn in_place_sort(
    s: &ast::Expr,
    args: &[ast::Expr],
    keywords: &[ast::Keyword],
    span: Span,
) -> Option<ast::Expr> {
    const PARAMS: [&str; 4] = ["axis", "kind", "order", "stable"];
    let none = ast::Expr {
        kind: ast::ExprKind::None,
        span,
    };
    let mut all = vec![s.clone()];
    all.extend(PARAMS.iter().map(|_| none.clone()));
    for (k, a) in args.iter().enumerate().take(PARAMS.len()) {
        all[k + 1] = a.clone();
    }
    for k in keywords {
        let at = PARAMS.iter().position(|p| *p == k.name)?;
        all[at + 1] = k.value.clone();
    }
    let func = ast::Expr {
        kind: ast::ExprKind::Attr {
            value: Box::new(s.clone()),
            attr: IN_PLACE.to_string(),
        },
        span,
    };
    Some(ast::Expr {
        kind: ast::ExprKind::Call {
            func: Box::new(func),
            args: all,
            keywords: vec![],
        },
        span,
    })
}

impl Lowerer<'_, '_> {
    /// `np.sort(s, ...)` / `np.argsort(s, ...)` / `s.argsort(...)`: whether
    /// it is an argsort, and its arguments in the order of its Python
    /// signature (`keywords.rs` has put them there): `a`, `axis`, `kind`,
    /// `order`, `stable`.
    pub(super) fn sort_of(&self, e: &ast::Expr) -> Option<(bool, Vec<ast::Expr>)> {
        let ast::ExprKind::Call { func, args, .. } = &e.kind else {
            return None;
        };
        match (&func.kind, self.builtin_of(func)) {
            (_, Some(crate::resolve::Builtin::Sort(arg))) => Some((arg, args.clone())),
            // the method: its array first
            (ast::ExprKind::Attr { value, attr }, None)
                if attr == "argsort" && self.is_local_value(value) =>
            {
                let mut all = vec![(**value).clone()];
                all.extend(args.iter().cloned());
                Some((true, all))
            }
            // `s.sort()`, rewritten by `stmt.rs` (its arguments in order)
            (ast::ExprKind::Attr { attr, .. }, None) if attr == IN_PLACE => {
                Some((false, args.clone()))
            }
            _ => None,
        }
    }

    /// `np.sort` / `np.argsort` where no slice assignment takes its array.
    pub(super) fn sort_outside_a_slice(&mut self, name: &str, span: Span) {
        self.error(
            Diagnostic::error(format!(
                "`{name}` gives an array: parpy computes it only as the whole right side of a slice assignment"
            ))
            .at(span, "an array here")
            .help(format!("assign it to a slice of an array argument: `y[i, :] = {name}(x[i, :])`")),
        );
    }

    /// `target = np.sort(args[0])` (`argsort`: the indices that sort it).
    pub(super) fn sort_assign(
        &mut self,
        target: &ast::Expr,
        argsort: bool,
        args: &[ast::Expr],
        labels: &[(String, Span)],
        span: Span,
    ) -> Option<Vec<Stmt>> {
        let name = if argsort { "np.argsort" } else { "np.sort" };
        let Some(arg) = args.first().filter(|_| args.len() <= 5) else {
            self.arity_error(name, "1 to 5 arguments", args.len(), span);
            return None;
        };
        let stable = self.sort_params(name, &args[1..])?;
        if let Some((_, at)) = labels.first() {
            self.error(
                Diagnostic::error(format!("`{name}` runs in order and takes no label"))
                    .at(*at, "this label")
                    .help("label a loop around the statement (each row sorted in parallel)"),
            );
            return None;
        }
        if argsort && !stable {
            self.error(
                Diagnostic::error("`np.argsort` needs `kind='stable'` here")
                    .at(span, "NumPy's default sort")
                    .note("NumPy's default sort may put equal elements in either order: their indices would differ from parpy's")
                    .help("write `np.argsort(s, kind='stable')` (or `stable=True`): NumPy's order of equal elements is then theirs in `s`, as parpy's"),
            );
            return None;
        }
        let from = self.pre.len();
        let (ctx, (array, indices, elem, alias), v) = self.slice_sides(target, arg)?;
        let extents = ctx.extents()?.to_vec();
        let [n] = extents[..] else {
            self.error(
                Diagnostic::error(format!(
                    "`{name}` of a {}-dimensional slice is not supported",
                    extents.len()
                ))
                .at(arg.span, "not 1-D")
                .help(format!(
                    "sort one row at a time (`y[i, :] = {name}(x[i, :])`)"
                )),
            );
            return None;
        };
        self.countable(name, n, arg.span, "sorts by counting each element's rank")?;
        let et = self.scalar_elem(&v)?;
        let mut inner = self.sink_dependent(from, ctx.vars());
        let mut e = v.e;
        let j = self.materialize((ctx.vars(), &extents), &mut inner, &mut e, et, span);
        let ExprKind::Index { array: tmp, .. } = e.kind else {
            return None;
        };
        let int_ty = self.opts.int_type;
        let (et_ty, it, bt) = (
            Type::Scalar(et),
            Type::Scalar(int_ty),
            Type::Scalar(ElemTy::Bool),
        );
        let k = self.new_var("k", it.clone(), VarKind::LoopIndex, span);
        let rank = self.new_var("rank", it.clone(), VarKind::Local, span);
        let var = |id, ty: &Type| Expr::var(id, ty.clone(), span);
        let read = |at| {
            Expr::new(
                ExprKind::Index {
                    array: tmp,
                    indices: vec![var(at, &it)],
                },
                et_ty.clone(),
                span,
            )
        };
        let bin = |op, l, r, ty: &Type| Expr::binary(op, l, r, ty.clone(), span);
        let (w, x) = (read(k), read(j));
        // w sorts before x: less, or neither less (equal; NaNs equal) and
        // earlier
        let strong = |e: Expr| TExpr { e, weak: false };
        let less = self.nan_last_less(strong(w.clone()), strong(x.clone()), span)?;
        let greater = self.nan_last_less(strong(x.clone()), strong(w), span)?;
        let not = ExprKind::Unary {
            op: crate::ir::UnOp::Not,
            arg: Box::new(greater),
        };
        let equal = Expr::new(not, bt.clone(), span);
        let earlier = bin(BinOp::Lt, var(k, &it), var(j, &it), &bt);
        let before = bin(BinOp::Or, less, bin(BinOp::And, equal, earlier, &bt), &bt);
        let count = Stmt::assign_var(
            rank,
            bin(BinOp::Add, var(rank, &it), convert(before, int_ty), &it),
            span,
        );
        let int = |c| Expr::int(c, int_ty, span);
        if self.opts.backend == crate::options::Backend::Cpu && n > MERGE_MIN {
            let (mut out, sorted) = self.merge_sort(tmp, (n, et), argsort, span)?;
            // the destination at each position, the sorted element (or its
            // index) there
            let mut at = indices;
            for ix in &mut at {
                super::slices::substitute(ix, ctx.vars()[0], &var(j, &it));
            }
            let value = match sorted {
                Some(order) => Expr::new(
                    ExprKind::Index {
                        array: order,
                        indices: vec![var(j, &it)],
                    },
                    it.clone(),
                    span,
                ),
                None => x,
            };
            let value = self.store_convert(
                TExpr {
                    e: value,
                    weak: false,
                },
                elem,
                target.span,
            )?;
            let store = match alias {
                Some(sel) => self.alias_store(sel, at, value, span),
                None => StmtKind::Assign {
                    dst: Place::Index { array, indices: at },
                    value,
                },
            };
            let stores = ForLoop::sequential(j, int(0), int(n), vec![Stmt::new(store, span)]);
            out.push(Stmt::new(StmtKind::For(Box::new(stores)), span));
            return Some(out);
        }
        let counting = ForLoop::sequential(k, int(0), int(n), vec![count]);
        // the destination at the rank: its slice's counter replaced
        let mut at = indices;
        let by = var(rank, &it);
        for ix in &mut at {
            super::slices::substitute(ix, ctx.vars()[0], &by);
        }
        let value = match argsort {
            true => TExpr {
                e: var(j, &it),
                weak: false,
            },
            false => TExpr { e: x, weak: false },
        };
        let value = self.store_convert(value, elem, target.span)?;
        let store = match alias {
            Some(sel) => self.alias_store(sel, at, value, span),
            None => StmtKind::Assign {
                dst: Place::Index { array, indices: at },
                value,
            },
        };
        let body = vec![
            Stmt::assign_var(rank, int(0), span),
            Stmt::new(StmtKind::For(Box::new(counting)), span),
            Stmt::new(store, span),
        ];
        let ranking = ForLoop::sequential(j, int(0), int(n), body);
        Some(vec![Stmt::new(StmtKind::For(Box::new(ranking)), span)])
    }

    /// Sorts the local array `a` of `n` elements of type `et` in place, as
    /// the counting sort orders them (stable, NaN last), by a bottom-up
    /// merge sort: `n log n` comparisons (the Cpu, above [`MERGE_MIN`]
    /// elements). For an argsort, also the local array of the sorted
    /// elements' indices (returned). The statements, then that array.
    #[allow(clippy::type_complexity)]
    fn merge_sort(
        &mut self,
        a: crate::ir::VarId,
        (n, et): (i64, ElemTy),
        argsort: bool,
        span: Span,
    ) -> Option<(Vec<Stmt>, Option<crate::ir::VarId>)> {
        let int_ty = self.opts.int_type;
        let it = Type::Scalar(int_ty);
        let array = |elem| Type::Array {
            elem,
            shape: vec![n],
        };
        let b = self.new_var("merged", array(et), VarKind::Local, span);
        let orders = argsort.then(|| {
            (
                self.new_var("order", array(int_ty), VarKind::Local, span),
                self.new_var("merged_order", array(int_ty), VarKind::Local, span),
            )
        });
        let local = |l: &mut Self, name: &str| l.new_var(name, it.clone(), VarKind::Local, span);
        let counter =
            |l: &mut Self, name: &str| l.new_var(name, it.clone(), VarKind::LoopIndex, span);
        let (w, lo, mid, hi, i, r) = (
            local(self, "width"),
            local(self, "lo"),
            local(self, "mid"),
            local(self, "hi"),
            local(self, "left"),
            local(self, "right"),
        );
        let (pass, c, k) = (
            counter(self, "pass"),
            counter(self, "pair"),
            counter(self, "k"),
        );
        let (k_init, k_back) = (counter(self, "k"), counter(self, "k"));
        let v = |id| Expr::var(id, it.clone(), span);
        let int = |c| Expr::int(c, int_ty, span);
        let bin = |op, l, r| Expr::binary(op, l, r, it.clone(), span);
        let at = |array, ix: Expr, ty: ElemTy| {
            Expr::new(
                ExprKind::Index {
                    array,
                    indices: vec![ix],
                },
                Type::Scalar(ty),
                span,
            )
        };
        let put = |array, ix: Expr, value: Expr| {
            Stmt::new(
                StmtKind::Assign {
                    dst: Place::Index {
                        array,
                        indices: vec![ix],
                    },
                    value,
                },
                span,
            )
        };
        let set = |id, value| Stmt::assign_var(id, value, span);
        let each = |var, n: Expr, body| {
            Stmt::new(
                StmtKind::For(Box::new(ForLoop::sequential(var, int(0), n, body))),
                span,
            )
        };
        let mut out = vec![];
        if let Some((order, _)) = orders {
            out.push(each(k_init, int(n), vec![put(order, v(k_init), v(k_init))]));
        }
        // the right element goes first only when it sorts strictly before
        // the left one: equal elements keep their order
        let strong = |e| TExpr { e, weak: false };
        let right_less =
            self.nan_last_less(strong(at(a, v(r), et)), strong(at(a, v(i), et)), span)?;
        let bool_ty = Type::Scalar(ElemTy::Bool);
        let cmp = |op, l, r| Expr::binary(op, l, r, bool_ty.clone(), span);
        let not_less = Expr::new(
            ExprKind::Unary {
                op: crate::ir::UnOp::Not,
                arg: Box::new(right_less),
            },
            bool_ty.clone(),
            span,
        );
        let take_left = cmp(
            BinOp::And,
            cmp(BinOp::Lt, v(i), v(mid)),
            cmp(BinOp::Or, cmp(BinOp::Ge, v(r), v(hi)), not_less),
        );
        let take = |from: crate::ir::VarId| {
            let mut s = vec![put(b, v(k), at(a, v(from), et))];
            if let Some((order, merged)) = orders {
                s.push(put(merged, v(k), at(order, v(from), int_ty)));
            }
            s.push(set(from, bin(BinOp::Add, v(from), int(1))));
            s
        };
        let merge = Stmt::new(
            StmtKind::For(Box::new(ForLoop::sequential(
                k,
                v(lo),
                v(hi),
                vec![Stmt::new(
                    StmtKind::If {
                        cond: take_left,
                        then_body: take(i),
                        else_body: take(r),
                    },
                    span,
                )],
            ))),
            span,
        );
        let two_w = || bin(BinOp::Mul, v(w), int(2));
        let pairs = bin(
            BinOp::FloorDiv,
            bin(BinOp::Add, int(n - 1), two_w()),
            two_w(),
        );
        let pair = vec![
            set(lo, bin(BinOp::Mul, v(c), two_w())),
            set(mid, bin(BinOp::Min, bin(BinOp::Add, v(lo), v(w)), int(n))),
            set(hi, bin(BinOp::Min, bin(BinOp::Add, v(lo), two_w()), int(n))),
            set(i, v(lo)),
            set(r, v(mid)),
            merge,
        ];
        let mut back = vec![put(a, v(k_back), at(b, v(k_back), et))];
        if let Some((order, merged)) = orders {
            back.push(put(order, v(k_back), at(merged, v(k_back), int_ty)));
        }
        let mut passes = 0;
        while (1i64 << passes) < n {
            passes += 1;
        }
        out.push(set(w, int(1)));
        out.push(each(
            pass,
            int(passes),
            vec![
                each(c, pairs, pair),
                each(k_back, int(n), back),
                set(w, two_w()),
            ],
        ));
        Some((out, orders.map(|(order, _)| order)))
    }

    /// Checks the parameters after the array of a sort of a 1-D slice
    /// (`axis` -1, 0 or `None`, `order=None`); whether `kind` / `stable`
    /// ask for a stable sort. `None` after an error.
    fn sort_params(&mut self, name: &str, params: &[ast::Expr]) -> Option<bool> {
        let mut stable = false;
        for (param, v) in ["axis", "kind", "order", "stable"].into_iter().zip(params) {
            let ok = match (param, &v.kind) {
                (_, ast::ExprKind::None) => true,
                ("axis", _) => matches!(
                    self.lower_expr(v).and_then(|t| self.known_int(&t.e)),
                    Some(-1 | 0)
                ),
                ("kind", ast::ExprKind::Str(s)) => {
                    stable |= s == "stable" || s == "mergesort";
                    true
                }
                ("stable", ast::ExprKind::Bool(b)) => {
                    stable |= *b;
                    true
                }
                _ => false,
            };
            if !ok {
                self.error(
                    Diagnostic::error(format!("`{param}` of `{name}` is not supported here"))
                        .at(v.span, "not supported")
                        .note("parpy sorts a 1-D slice: `axis` -1, 0 or None, `kind` a string, `stable` a bool, no `order`"),
                );
                return None;
            }
        }
        Some(stable)
    }
}

impl Lowerer<'_, '_> {
    /// NumPy's `less` of its sorts and searches, `a < b` in the common
    /// type with a NaN after every number.
    fn nan_last_less(&mut self, a: TExpr, b: TExpr, span: Span) -> Option<Expr> {
        let floats = [&a, &b]
            .iter()
            .any(|t| t.e.ty.elem().is_some_and(|e| e.is_float()));
        let lt = self.binary(BinOp::Lt, a.clone(), b.clone(), span)?;
        if !floats {
            return Some(lt.e);
        }
        let b_nan = self.binary(BinOp::Ne, b.clone(), b, span)?;
        let a_num = self.binary(BinOp::Eq, a.clone(), a, span)?;
        let both = self.binary(BinOp::And, b_nan, a_num, span)?;
        Some(self.binary(BinOp::Or, lt, both, span)?.e)
    }

    /// `np.searchsorted(a, v, side)` of a 1-D slice `a` and a number `v`:
    /// NumPy's binary search (the same steps, so an unsorted `a` gives
    /// NumPy's index too), comparing in the common type of `a` and `v`
    /// with NaN after every number; an index of the default integer type.
    pub(super) fn searchsorted(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<TExpr> {
        let (arg, key, side) = match args {
            [a, v] => (a, v, None),
            [a, v, s] => (a, v, Some(s)),
            _ => {
                self.arity_error(name, "2 or 3 arguments", args.len(), span);
                return None;
            }
        };
        let right = match side.map(|s| &s.kind) {
            None => false,
            Some(ast::ExprKind::Str(s)) if s == "left" => false,
            Some(ast::ExprKind::Str(s)) if s == "right" => true,
            Some(_) => {
                self.error(
                    Diagnostic::error(format!("the `side` of `{name}` is 'left' or 'right'"))
                        .at(side.map_or(span, |s| s.span), "not 'left' or 'right'")
                        .note("NumPy raises a ValueError"),
                );
                return None;
            }
        };
        self.sequential_only(name)?;
        let key = self.lower_expr(key)?;
        let not_1d = Diagnostic::error(format!("`{name}` searches a 1-D slice"))
            .at(arg.span, "not a 1-D slice")
            .help(format!("search one row at a time (`{name}(x[i, :], v)`)"));
        let row = self.indexed(arg, not_1d, span)?;
        let (et, n, j, mut e) = (row.et, row.n, row.var, row.elem);
        let int_ty = self.opts.int_type;
        let it = Type::Scalar(int_ty);
        let (lo, hi, mid) = (
            self.new_var("lo", it.clone(), VarKind::Local, span),
            self.new_var("hi", it.clone(), VarKind::Local, span),
            self.new_var("mid", it.clone(), VarKind::Local, span),
        );
        let var = |id| Expr::var(id, it.clone(), span);
        let int = |c| Expr::int(c, int_ty, span);
        let bin = |op, l, r| Expr::binary(op, l, r, it.clone(), span);
        // the element at `mid` and the key, each read once a step
        super::slices::substitute(&mut e, j, &var(mid));
        let kt = self.scalar_elem(&key)?;
        let k = self.new_var("key", Type::Scalar(kt), VarKind::Local, span);
        self.pre.push(Stmt::assign_var(k, key.e, span));
        let key = TExpr {
            e: Expr::var(k, Type::Scalar(kt), span),
            weak: key.weak,
        };
        let mv = self.new_var("mid_value", Type::Scalar(et), VarKind::Local, span);
        let mid_val = TExpr {
            e: Expr::var(mv, Type::Scalar(et), span),
            weak: false,
        };
        // side='right' goes on while not less(key, mid)
        let go_right = match right {
            false => self.nan_last_less(mid_val, key, span)?,
            true => {
                let l = self.nan_last_less(key, mid_val, span)?;
                let not = ExprKind::Unary {
                    op: crate::ir::UnOp::Not,
                    arg: Box::new(l),
                };
                Expr::new(not, Type::Scalar(ElemTy::Bool), span)
            }
        };
        let half = bin(BinOp::Shr, bin(BinOp::Sub, var(hi), var(lo)), int(1));
        let mut body = vec![Stmt::assign_var(mid, bin(BinOp::Add, var(lo), half), span)];
        body.push(Stmt::assign_var(mv, e, span));
        body.push(Stmt::new(
            StmtKind::If {
                cond: go_right,
                then_body: vec![Stmt::assign_var(
                    lo,
                    bin(BinOp::Add, var(mid), int(1)),
                    span,
                )],
                else_body: vec![Stmt::assign_var(hi, var(mid), span)],
            },
            span,
        ));
        let cond = Expr::binary(
            BinOp::Lt,
            var(lo),
            var(hi),
            Type::Scalar(ElemTy::Bool),
            span,
        );
        self.pre.extend([
            Stmt::assign_var(lo, int(0), span),
            Stmt::assign_var(hi, int(n), span),
            Stmt::new(StmtKind::While { cond, body }, span),
        ]);
        Some(TExpr {
            e: var(lo),
            weak: false,
        })
    }
}
