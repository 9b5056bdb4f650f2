//! A float sum that keeps NumPy's order ([`Reduction::pairwise`], set by
//! sema on a 1-D `np.sum` / `np.mean` with no label) and still runs
//! sequentially adds its elements exactly as NumPy's pairwise summation
//! does, so its result is NumPy's bit for bit, on every backend (a sum
//! inside a GPU thread too).
//!
//! The loop `for j in range(lo, lo + n): acc = acc + e(j)` becomes
//! `acc = acc + sum(.., lo, n)` (NumPy's float16 sum, `acc = f16(f32(acc)
//! + e(j))` with `e` in float32: `acc = f16(f32(acc) + sum(.., lo, n))`)
//! with a new recursive helper, NumPy's `pairwise_sum` with the element
//! `e` in place of a load:
//!
//! ```text
//! def sum(<the variables e reads>, lo, n):
//!     if n < 8:                                   # in order, from -0.0
//!         s = -0.0
//!         for k in range(n): s = s + e(lo + k)
//!         return s
//!     if n <= 128:                                # 8 partial sums
//!         r0, .., r7 = e(lo), .., e(lo + 7)
//!         for k in range(8, n & -8, 8): r0 = r0 + e(lo + k); ..; r7 = r7 + e(lo + k + 7)
//!         res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
//!         for k in range(n & -8, n): res = res + e(lo + k)
//!         return res
//!     n2 = (n >> 1) & -8                          # halves, a multiple of 8 first
//!     return sum(.., lo, n2) + sum(.., lo + n2, n - n2)
//! ```
//!
//! The GPUs get no recursion (Metal has none; on Cuda ptxas cannot size
//! the stack of a recursive call): there the helper ends with the block
//! of 8 partial sums (it is only called with `n <= 128`), and the call
//! splits a longer sum into its halves when compiling, an expression of
//! calls (`split_call`), for a count known when compiling of at most
//! [`MAX_SPLIT_CALLS`] blocks; a longer sum, or one whose count is known
//! only at run time (a masked read's), stays in order on the GPUs.
//!
//! The eight partial sums are independent, so the C compiler still keeps
//! them in SIMD registers. A sum in runs (NumPy's buffered float16 and
//! integer `mean`) calls the helper once per run, in order. A new helper
//! goes right before the helper it was made from in [`Program::helpers`]
//! (last when made from the host or a kernel): after the helpers it calls,
//! before the ones that call it (the C writer declares nothing ahead).

use std::collections::{BTreeMap, BTreeSet};

use crate::diag::Span;
use crate::ir::visit::{expr_uses, has_effects, sub_blocks_mut, unspanned, uses_var};
use crate::ir::{
    BinOp, Block, Expr, ExprKind, ForLoop, FuncId, Function, Place, Program, Reduction, Stmt,
    StmtKind, Type, Var, VarId, VarKind,
};
use crate::ops::ReduceOp;
use crate::options::{Backend, Options};
use crate::passes::util::{assign_var, new_var, replace_var};
use crate::types::ElemTy;

/// NumPy's `PW_BLOCKSIZE`: a run of at most this many elements is summed
/// with eight partial sums.
const BLOCK: i64 = 128;
/// NumPy's unroll factor: the partial sums of a block.
const LANES: i64 = 8;
/// On the GPUs (no recursion), a sum split into more blocks than this when
/// compiling stays in order.
const MAX_SPLIT_CALLS: i64 = 64;

/// The blocks of at most [`BLOCK`] elements NumPy's recursion splits `n`
/// elements into.
fn blocks(n: i64) -> i64 {
    if n <= BLOCK {
        1
    } else {
        let n2 = (n >> 1) & -LANES;
        blocks(n2) + blocks(n - n2)
    }
}

pub fn run(p: &mut Program, o: &Options) {
    // GPUs: no recursive helpers (Metal has no recursion; on Cuda ptxas
    // cannot size the stack of a recursive call), the halves split when
    // compiling
    let split = o.backend != Backend::Cpu;
    let old = p.helpers.len();
    let mut made = vec![];
    rewrite(&mut p.host, old, &mut made, split);
    for k in &mut p.kernels {
        rewrite(&mut k.func, old, &mut made, split);
    }
    // which helper each new one comes from (`None`: the host or a kernel)
    let mut origin = vec![None; made.len()];
    for (i, h) in p.helpers.iter_mut().enumerate() {
        let before = made.len();
        rewrite(h, old, &mut made, split);
        origin.resize(before, None);
        origin.resize(made.len(), Some(i));
    }
    if made.is_empty() {
        return;
    }
    // The C writer declares nothing ahead: a helper goes before its
    // callers. A new helper calls the helpers its element calls, which
    // come before the helper it was made from: it goes right before that
    // one (after all of them when made from the host or a kernel).
    let mut order = vec![];
    for i in 0..old {
        order.extend(
            (0..made.len())
                .filter(|&k| origin[k] == Some(i))
                .map(|k| old + k),
        );
        order.push(i);
    }
    order.extend(
        (0..made.len())
            .filter(|&k| origin[k].is_none())
            .map(|k| old + k),
    );
    let mut position = vec![0u32; order.len()];
    for (at, &id) in order.iter().enumerate() {
        position[id] = at as u32;
    }
    let renumber = |f: FuncId| FuncId(position[f.0 as usize]);
    let mut all: Vec<Option<Function>> = p.helpers.drain(..).chain(made).map(Some).collect();
    p.helpers = order
        .iter()
        .map(|&id| all[id].take().expect("each helper once"))
        .collect();
    renumber_calls(&mut p.host.body, &renumber);
    for k in &mut p.kernels {
        renumber_calls(&mut k.func.body, &renumber);
    }
    for h in &mut p.helpers {
        renumber_calls(&mut h.body, &renumber);
    }
}

fn renumber_calls(b: &mut Block, f: &dyn Fn(FuncId) -> FuncId) {
    fn expr(e: &mut Expr, f: &dyn Fn(FuncId) -> FuncId) {
        if let ExprKind::Call { func, .. } = &mut e.kind {
            *func = f(*func);
        }
        e.children_mut().into_iter().for_each(|c| expr(c, f));
    }
    for s in b {
        crate::ir::visit::stmt_exprs_mut(s)
            .into_iter()
            .for_each(|e| expr(e, f));
        for sb in sub_blocks_mut(s) {
            renumber_calls(sb, f);
        }
    }
}

/// Rewrites the sums of `f`; each new helper is pushed on `made` and
/// called as helper `base + its position there`. Sums of `f` with the same
/// helper (the full runs and the last one of a buffered sum) share it.
/// `split`: no recursion (GPUs), see the module documentation.
fn rewrite(f: &mut Function, base: usize, made: &mut Vec<Function>, split: bool) {
    let mut body = std::mem::take(&mut f.body);
    let mut seen = vec![];
    rewrite_block(&mut body, f, (base, made), &mut seen, split);
    f.body = body;
}

/// What makes two helpers of one function the same: the element (its
/// counter as a placeholder, spans cleared), the variables it reads and
/// the sum's types.
type HelperKey = (Expr, Vec<VarId>, Type, Option<Type>);

fn rewrite_block(
    b: &mut Block,
    f: &mut Function,
    (base, made): (usize, &mut Vec<Function>),
    seen: &mut Vec<(HelperKey, FuncId)>,
    split: bool,
) {
    let mut out = Vec::with_capacity(b.len());
    for mut s in std::mem::take(b) {
        for sb in sub_blocks_mut(&mut s) {
            rewrite_block(sb, f, (base, made), seen, split);
        }
        match pairwise_sum(&s, split) {
            Some(sum) => {
                let key = sum.key(f);
                let id = match seen.iter().find(|(k, _)| *k == key) {
                    Some((_, id)) => *id,
                    None => {
                        let id = FuncId((base + made.len()) as u32);
                        made.push(sum.helper(f, id));
                        seen.push((key, id));
                        id
                    }
                };
                out.extend(sum.calls(f, id));
            }
            None => out.push(s),
        }
    }
    *b = out;
}

/// A loop this pass rewrites: `for j in range(lo, lo + n): acc = acc + e`.
struct Sum<'a> {
    l: &'a ForLoop,
    acc: VarId,
    e: &'a Expr,
    /// The accumulator's type where it is narrower than the sum's (float16
    /// with float32 runs): each run's sum is added in the sum's type and
    /// rounded to it.
    narrow: Option<Type>,
    lo: i64,
    n: Count<'a>,
    run: i64,
    /// No recursion (GPUs): the helper adds one block, the calls split
    /// the halves.
    split: bool,
    span: Span,
}

/// How many elements a sum adds: known when compiling, or the loop's end
/// known at run time (a masked read's count: one run, `hi - lo` of them).
enum Count<'a> {
    Known(i64),
    End(&'a Expr),
}

fn pairwise_sum(s: &Stmt, split: bool) -> Option<Sum<'_>> {
    let StmtKind::For(l) = &s.kind else {
        return None;
    };
    let Some(Reduction {
        op: ReduceOp::Sum,
        acc,
        pairwise: Some(run),
        ..
    }) = l.reduction
    else {
        return None;
    };
    let ExprKind::Int(lo) = &l.lo.kind else {
        return None;
    };
    let n = match &l.hi.kind {
        ExprKind::Int(hi) => Count::Known(hi.checked_sub(*lo)?),
        _ if run == i64::MAX && !has_effects(&l.hi) && !uses_var(&l.hi, acc) => Count::End(&l.hi),
        _ => return None,
    };
    if l.par.is_some() || l.step != 1 || matches!(n, Count::Known(n) if n <= 0) || run <= 0 {
        return None;
    }
    // without recursion, the blocks of each run are calls written here
    if split {
        let Count::Known(n) = n else {
            return None;
        };
        if blocks(n.min(run)) > MAX_SPLIT_CALLS {
            return None;
        }
    }
    let [Stmt {
        kind: StmtKind::Assign {
            dst: Place::Var(dst),
            value,
        },
        ..
    }] = l.body.as_slice()
    else {
        return None;
    };
    // `acc = acc + e`, or NumPy's float16 sum: `acc = f16(f32(acc) + e)`
    // with `e` in float32
    let (sum, narrow) = match &value.kind {
        ExprKind::Convert { arg } => (&**arg, true),
        _ => (value, false),
    };
    let ExprKind::Binary {
        op: BinOp::Add,
        lhs,
        rhs: e,
    } = &sum.kind
    else {
        return None;
    };
    let lhs = match &lhs.kind {
        ExprKind::Convert { arg } if narrow => &**arg,
        _ if narrow => return None,
        _ => &**lhs,
    };
    let float = sum.ty.elem().is_some_and(|t| t.is_float());
    if *dst != acc || lhs.kind != ExprKind::Var(acc) || !float || uses_var(e, acc) || has_effects(e)
    {
        return None;
    }
    Some(Sum {
        l,
        acc,
        e,
        narrow: narrow.then(|| value.ty.clone()),
        lo: *lo,
        n,
        run,
        split,
        span: s.span,
    })
}

impl Sum<'_> {
    /// The variables the element reads, other than the loop's counter:
    /// the helper's first parameters, in this order.
    fn free(&self) -> Vec<VarId> {
        let mut used = BTreeSet::new();
        expr_uses(self.e, &mut used);
        used.remove(&self.l.var);
        used.into_iter().collect()
    }

    fn acc_ty(&self) -> Type {
        self.e.ty.clone()
    }

    fn key(&self, f: &Function) -> HelperKey {
        let mut e = unspanned(self.e);
        let it = f.var(self.l.var).ty.clone();
        let placeholder = Expr::new(ExprKind::Int(i64::MIN), it, Span::default());
        replace_var(&mut e, self.l.var, &placeholder);
        (e, self.free(), self.acc_ty(), self.narrow.clone())
    }

    /// The statements that replace the loop in `f`: one call per run.
    fn calls(&self, f: &mut Function, id: FuncId) -> Vec<Stmt> {
        let it = f.var(self.l.var).ty.clone();
        let span = self.span;
        let int = |v: i64| Expr::new(ExprKind::Int(v), it.clone(), span);
        let args: Vec<Expr> = self
            .free()
            .into_iter()
            .map(|v| Expr::var(v, f.var(v).ty.clone(), span))
            .collect();
        let acc = Expr::var(self.acc, f.var(self.acc).ty.clone(), span);
        let call = |lo: Expr, n: Expr| {
            let mut a = args.clone();
            a.extend([lo, n]);
            Expr::new(ExprKind::Call { func: id, args: a }, self.acc_ty(), span)
        };
        let add = |lo: Expr, n: Expr| {
            let call = match (self.split, &n.kind) {
                (true, ExprKind::Int(c)) => self.split_call(&call, lo, *c, &it),
                _ => call(lo, n),
            };
            let value = match &self.narrow {
                None => Expr::binary(BinOp::Add, acc.clone(), call, self.acc_ty(), span),
                Some(ty) => {
                    let wide = Expr::new(
                        ExprKind::Convert {
                            arg: Box::new(acc.clone()),
                        },
                        self.acc_ty(),
                        span,
                    );
                    let sum = Expr::binary(BinOp::Add, wide, call, self.acc_ty(), span);
                    Expr::new(ExprKind::Convert { arg: Box::new(sum) }, ty.clone(), span)
                }
            };
            assign_var(self.acc, value, span)
        };
        let n = match self.n {
            Count::Known(n) => n,
            Count::End(hi) => {
                // one run of all the elements
                let count = match self.lo {
                    0 => hi.clone(),
                    lo => Expr::binary(BinOp::Sub, hi.clone(), int(lo), it.clone(), span),
                };
                return vec![add(int(self.lo), count)];
            }
        };
        let (full, rest) = if n <= self.run {
            (0, n)
        } else {
            (n / self.run, n % self.run)
        };
        let mut out = vec![];
        if full > 0 {
            // for c in range(full): acc = acc + sum(.., lo + c * run, run)
            let c = new_var(f, "run", it.clone(), VarKind::LoopIndex, span);
            let at = Expr::binary(
                BinOp::Add,
                int(self.lo),
                Expr::binary(
                    BinOp::Mul,
                    Expr::var(c, it.clone(), span),
                    int(self.run),
                    it.clone(),
                    span,
                ),
                it.clone(),
                span,
            );
            let body = vec![add(at, int(self.run))];
            out.push(Stmt::new(
                StmtKind::For(Box::new(ForLoop::sequential(c, int(0), int(full), body))),
                span,
            ));
        }
        if rest > 0 {
            out.push(add(int(self.lo + full * self.run), int(rest)));
        }
        out
    }

    /// The sum of the `n` elements from `lo` on as NumPy's recursion adds
    /// them, its halves split here: `call(lo, n)` of each block.
    fn split_call(&self, call: &dyn Fn(Expr, Expr) -> Expr, lo: Expr, n: i64, it: &Type) -> Expr {
        let int = |v: i64| Expr::new(ExprKind::Int(v), it.clone(), self.span);
        if n <= BLOCK {
            return call(lo, int(n));
        }
        let n2 = (n >> 1) & -LANES;
        let hi = match lo.kind {
            ExprKind::Int(lo) => int(lo + n2),
            _ => Expr::binary(BinOp::Add, lo.clone(), int(n2), it.clone(), self.span),
        };
        Expr::binary(
            BinOp::Add,
            self.split_call(call, lo, n2, it),
            self.split_call(call, hi, n - n2, it),
            self.acc_ty(),
            self.span,
        )
    }

    /// The recursive helper (see the module documentation), helper `id`;
    /// with `split`, the one that adds a block of at most 128 elements.
    fn helper(&self, f: &Function, id: FuncId) -> Function {
        let span = self.span;
        let it = f.var(self.l.var).ty.clone();
        let ty = self.acc_ty();
        let mut h = Function {
            name: "pairwise_sum".into(),
            params: vec![],
            vars: vec![],
            body: vec![],
            ret: ty.clone(),
            span,
        };
        // the loop's counter becomes `j` of the helper, replaced by each
        // element's index
        let j = new_var(&mut h, "j", it.clone(), VarKind::Local, span);
        let mut rename = BTreeMap::from([(self.l.var, j)]);
        for v in self.free() {
            let p = h.add_var(Var {
                kind: VarKind::Param,
                ..f.var(v).clone()
            });
            h.params.push(p);
            rename.insert(v, p);
        }
        let lo = new_var(&mut h, "lo", it.clone(), VarKind::Param, span);
        let n = new_var(&mut h, "n", it.clone(), VarKind::Param, span);
        h.params.extend([lo, n]);
        let mut element = self.e.clone();
        rename_vars(&mut element, &rename);
        let mut b = Build {
            h,
            it,
            ty,
            element,
            j,
            span,
        };
        let (lo, n) = (b.var(lo), b.var(n));
        // (declared first, as the helper with recursion has always had it)
        let n2v = (!self.split).then(|| b.local("n2", false));

        // n < 8: in order, from -0.0
        let s = b.local("s", true);
        let mut small = vec![assign_var(s, b.float(-0.0), span)];
        small.push(b.in_order(s, lo.clone(), b.int(0), n.clone()));
        small.push(b.ret(b.var(s)));

        // n <= 128: eight partial sums, then the rest in order
        let mut block = vec![];
        let r = b.lanes(&mut block, lo.clone(), b.and8(n.clone()));
        let res = b.local("res", true);
        block.push(assign_var(res, b.tree(&r), span));
        block.push(b.in_order(res, lo.clone(), b.and8(n.clone()), n.clone()));
        block.push(b.ret(b.var(res)));

        b.h.body = vec![b.if_(b.cmp(BinOp::Lt, n.clone(), b.int(LANES)), small)];
        let Some(n2v) = n2v else {
            // (split: only called with n <= 128)
            b.h.body.extend(block);
            return b.h;
        };
        // otherwise: the two halves, each by a call (two blocks walked
        // side by side in one loop were twice as slow: GCC no longer
        // vectorized the partial sums)
        let n2 = b.var(n2v);
        let rest = Expr::binary(BinOp::Sub, n.clone(), n2.clone(), b.it.clone(), span);
        let halves = b.fadd(
            b.call(id, lo.clone(), n2.clone()),
            b.call(id, b.add(lo, n2), rest),
        );
        let half = Expr::binary(
            BinOp::BitAnd,
            Expr::binary(BinOp::Shr, n.clone(), b.int(1), b.it.clone(), span),
            b.int(-LANES),
            b.it.clone(),
            span,
        );
        b.h.body.extend([
            b.if_(b.cmp(BinOp::Le, n, b.int(BLOCK)), block),
            assign_var(n2v, half, span),
            b.ret(halves),
        ]);
        b.h
    }
}

/// The helper under construction and the pieces its code is made of.
struct Build {
    h: Function,
    /// The index type.
    it: Type,
    /// The sum's type.
    ty: Type,
    /// The element, at index `j`.
    element: Expr,
    j: VarId,
    span: Span,
}

impl Build {
    fn var(&self, v: VarId) -> Expr {
        Expr::var(v, self.h.var(v).ty.clone(), self.span)
    }

    fn int(&self, v: i64) -> Expr {
        Expr::new(ExprKind::Int(v), self.it.clone(), self.span)
    }

    fn float(&self, v: f64) -> Expr {
        Expr::new(ExprKind::Float(v), self.ty.clone(), self.span)
    }

    /// A new local: of the sum's type (`true`) or the index type.
    fn local(&mut self, name: &str, sum: bool) -> VarId {
        let ty = if sum { &self.ty } else { &self.it }.clone();
        new_var(&mut self.h, name, ty, VarKind::Local, self.span)
    }

    fn counter(&mut self) -> VarId {
        let it = self.it.clone();
        new_var(&mut self.h, "k", it, VarKind::LoopIndex, self.span)
    }

    fn add(&self, a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Add, a, b, self.it.clone(), self.span)
    }

    /// `at + t` (`at` itself for 0).
    fn offset(&self, at: Expr, t: i64) -> Expr {
        if t == 0 {
            at
        } else {
            self.add(at, self.int(t))
        }
    }

    /// `n & -8`: `n` rounded down to a multiple of eight.
    fn and8(&self, n: Expr) -> Expr {
        Expr::binary(
            BinOp::BitAnd,
            n,
            self.int(-LANES),
            self.it.clone(),
            self.span,
        )
    }

    fn fadd(&self, a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Add, a, b, self.ty.clone(), self.span)
    }

    fn cmp(&self, op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::binary(op, a, b, Type::Scalar(ElemTy::Bool), self.span)
    }

    /// The element at index `at`.
    fn elem(&self, at: Expr) -> Expr {
        let mut e = self.element.clone();
        replace_var(&mut e, self.j, &at);
        e
    }

    fn seq(&self, k: VarId, lo: Expr, hi: Expr, step: i64, body: Block) -> Stmt {
        let mut l = ForLoop::sequential(k, lo, hi, body);
        l.step = step;
        Stmt::new(StmtKind::For(Box::new(l)), self.span)
    }

    fn if_(&self, cond: Expr, then_body: Block) -> Stmt {
        let else_body = vec![];
        let kind = StmtKind::If {
            cond,
            then_body,
            else_body,
        };
        Stmt::new(kind, self.span)
    }

    fn ret(&self, e: Expr) -> Stmt {
        Stmt::new(StmtKind::Return(Some(e)), self.span)
    }

    fn call(&self, id: FuncId, lo: Expr, n: Expr) -> Expr {
        let params = &self.h.params[..self.h.params.len() - 2];
        let mut args: Vec<Expr> = params.iter().map(|&p| self.var(p)).collect();
        args.extend([lo, n]);
        Expr::new(
            ExprKind::Call { func: id, args },
            self.ty.clone(),
            self.span,
        )
    }

    /// `for k in range(from, to): acc = acc + e(base + k)`.
    fn in_order(&mut self, acc: VarId, base: Expr, from: Expr, to: Expr) -> Stmt {
        let k = self.counter();
        let at = self.add(base, self.var(k));
        let step = assign_var(acc, self.fadd(self.var(acc), self.elem(at)), self.span);
        self.seq(k, from, to, 1, vec![step])
    }

    /// Eight partial sums of the elements from `base` on: `r[t]` starts as
    /// `e(base + t)` and adds `e(base + k + t)` for `k` in
    /// `range(8, to, 8)`. Appends the statements to `out` and returns the
    /// partial sums.
    fn lanes(&mut self, out: &mut Block, base: Expr, to: Expr) -> Vec<VarId> {
        let r: Vec<VarId> = (0..LANES)
            .map(|t| self.local(&format!("r{t}"), true))
            .collect();
        let k = self.counter();
        let mut steps = vec![];
        for (t, &v) in r.iter().enumerate() {
            let first = self.offset(base.clone(), t as i64);
            out.push(assign_var(v, self.elem(first), self.span));
            let at = self.offset(self.add(base.clone(), self.var(k)), t as i64);
            steps.push(assign_var(
                v,
                self.fadd(self.var(v), self.elem(at)),
                self.span,
            ));
        }
        out.push(self.seq(k, self.int(LANES), to, LANES, steps));
        r
    }

    /// NumPy's combination of the partial sums:
    /// `((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))`.
    fn tree(&self, r: &[VarId]) -> Expr {
        let pair = |a: usize| self.fadd(self.var(r[a]), self.var(r[a + 1]));
        self.fadd(self.fadd(pair(0), pair(2)), self.fadd(pair(4), pair(6)))
    }
}

/// Renames the variables of `e` (reads and arrays indexed) by `map`.
fn rename_vars(e: &mut Expr, map: &BTreeMap<VarId, VarId>) {
    match &mut e.kind {
        ExprKind::Var(v) | ExprKind::Index { array: v, .. } => {
            if let Some(n) = map.get(v) {
                *v = *n;
            }
        }
        _ => {}
    }
    e.children_mut()
        .into_iter()
        .for_each(|c| rename_vars(c, map));
}
