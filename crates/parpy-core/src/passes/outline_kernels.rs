//! Outlines kernels: each top-level parallel loop nest of the host code (also
//! one inside sequential host loops, `if`s and `while`s) and each `OnDevice`
//! block becomes a [`Kernel`], replaced in the host by a `Launch`.
//!
//! - The kernel is named after the host function and the first label of the
//!   nest (`sum_rows_outer`), made unique deterministically.
//! - Its parameters are the variables it shares with the rest of the host
//!   (host parameters, variables used outside the nest or by another kernel),
//!   in `VarId` order; everything else becomes a kernel local.
//! - A shared scalar that a kernel assigns becomes a 1-element array in the
//!   host and in every kernel (a backend passes it by pointer). In a kernel,
//!   it is loaded into a local scalar at the start and stored back at the end,
//!   so the body (and a reduction into it) is unchanged.

use std::collections::{BTreeMap, BTreeSet};

use crate::diag::Span;
use crate::ir::visit::{expr_uses, stmt_uses};
use crate::ir::{
    Block, Expr, ExprKind, ForLoop, Function, Kernel, KernelId, LaunchInfo, Place, Program, Stmt,
    StmtKind, Type, Var, VarId, VarKind,
};
use crate::passes::util::{stmt_exprs_mut, sub_blocks_mut};
use crate::types::ElemTy;

pub fn run(p: &mut Program) {
    // Pass A: which variables each region uses, and which the host uses.
    let mut scan = Scan::default();
    scan.block(&p.host.body);
    // A variable read by some kernel before that kernel sets it carries a
    // value in from elsewhere: it is shared by every kernel that uses it.
    let live_in: BTreeSet<VarId> = scan
        .regions
        .iter()
        .flat_map(|r| r.live_in.iter().copied())
        .collect();
    let host = &p.host;
    // A local array is a statement's temporary (sema's overlapping slice
    // assignments): each use writes it whole before reading it, so it is
    // shared only when the host or another region uses it too; otherwise
    // it is the kernel's own (per thread, per iteration of the nest).
    let regions_using = |v: VarId| scan.regions.iter().filter(|r| r.used.contains(&v)).count();
    let shared = |v: VarId| {
        let var = host.var(v);
        if var.kind == VarKind::Local && var.ty.is_array() {
            return scan.host_used.contains(&v) || regions_using(v) > 1;
        }
        var.kind == VarKind::Param || scan.host_used.contains(&v) || live_in.contains(&v)
    };
    let mut converted: BTreeSet<VarId> = BTreeSet::new();
    for r in &scan.regions {
        for v in &r.assigned {
            let var = host.var(*v);
            if shared(*v) && var.kind != VarKind::Param && !var.ty.is_array() {
                converted.insert(*v);
            }
        }
    }
    let params_of: Vec<Vec<VarId>> = scan
        .regions
        .iter()
        .map(|r| r.used.iter().copied().filter(|v| shared(*v)).collect())
        .collect();

    // Pass B: replace the regions, building the kernels in order.
    let mut names: BTreeSet<String> = BTreeSet::new();
    names.insert(p.host.name.clone());
    names.extend(p.helpers.iter().map(|h| h.name.clone()));
    names.extend(p.kernels.iter().map(|k| k.func.name.clone()));
    let body = std::mem::take(&mut p.host.body);
    let mut b = Builder {
        host: &p.host,
        converted: &converted,
        params_of: &params_of,
        regions: &scan.regions,
        next: 0,
        first_kernel: p.kernels.len(),
        kernels: vec![],
        names,
    };
    let mut body = b.block(body);
    let new_kernels = std::mem::take(&mut b.kernels);
    p.kernels.extend(new_kernels);
    // The host now sees converted scalars as 1-element arrays.
    for v in &converted {
        let var = &mut p.host.vars[v.0 as usize];
        if let Type::Scalar(e) = var.ty {
            var.ty = one_elem(e);
        }
    }
    to_elem_block(&mut body, &converted);
    p.host.body = body;
}

fn one_elem(e: ElemTy) -> Type {
    Type::Array {
        elem: e,
        shape: vec![1],
    }
}

fn is_region(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::For(l) => l.par.is_some(),
        StmtKind::OnDevice(_) => true,
        _ => false,
    }
}

fn contains_region(b: &Block) -> bool {
    b.iter().any(|s| {
        is_region(s)
            || match &s.kind {
                StmtKind::For(l) => contains_region(&l.body),
                StmtKind::While { body, .. } => contains_region(body),
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => contains_region(then_body) || contains_region(else_body),
                _ => false,
            }
    })
}

#[derive(Default)]
struct Region {
    used: BTreeSet<VarId>,
    assigned: BTreeSet<VarId>,
    /// Variables whose first touch (in textual order) is a read.
    live_in: BTreeSet<VarId>,
}

#[derive(Default)]
struct Scan {
    regions: Vec<Region>,
    host_used: BTreeSet<VarId>,
}

impl Scan {
    fn block(&mut self, b: &Block) {
        for s in b {
            if is_region(s) {
                let mut r = Region::default();
                stmt_uses(s, &mut r.used, &mut r.assigned);
                let mut seen = BTreeSet::new();
                first_touch(s, &mut seen, &mut r.live_in);
                self.regions.push(r);
                continue;
            }
            let mut ignore = BTreeSet::new();
            match &s.kind {
                StmtKind::For(l) if contains_region(&l.body) => {
                    self.host_used.insert(l.var);
                    expr_uses(&l.lo, &mut self.host_used);
                    expr_uses(&l.hi, &mut self.host_used);
                    if let Some(r) = &l.reduction {
                        self.host_used.insert(r.acc);
                    }
                    self.block(&l.body);
                }
                StmtKind::While { cond, body } if contains_region(body) => {
                    expr_uses(cond, &mut self.host_used);
                    self.block(body);
                }
                StmtKind::If {
                    cond,
                    then_body,
                    else_body,
                } if contains_region(then_body) || contains_region(else_body) => {
                    expr_uses(cond, &mut self.host_used);
                    self.block(then_body);
                    self.block(else_body);
                }
                _ => stmt_uses(s, &mut self.host_used, &mut ignore),
            }
        }
    }
}

fn read(e: &Expr, seen: &mut BTreeSet<VarId>, live_in: &mut BTreeSet<VarId>) {
    let mut used = BTreeSet::new();
    expr_uses(e, &mut used);
    for v in used {
        if seen.insert(v) {
            live_in.insert(v);
        }
    }
}

fn first_touch(s: &Stmt, seen: &mut BTreeSet<VarId>, live_in: &mut BTreeSet<VarId>) {
    match &s.kind {
        StmtKind::Assign { dst, value } => {
            read(value, seen, live_in);
            match dst {
                Place::Var(v) => {
                    seen.insert(*v);
                }
                Place::Index { array, indices } => {
                    indices.iter().for_each(|i| read(i, seen, live_in));
                    if seen.insert(*array) {
                        live_in.insert(*array);
                    }
                }
            }
        }
        StmtKind::For(l) => {
            read(&l.lo, seen, live_in);
            read(&l.hi, seen, live_in);
            seen.insert(l.var);
            if let Some(r) = &l.reduction {
                if seen.insert(r.acc) {
                    live_in.insert(r.acc);
                }
            }
            l.body.iter().for_each(|s| first_touch(s, seen, live_in));
        }
        StmtKind::While { cond, body } => {
            read(cond, seen, live_in);
            body.iter().for_each(|s| first_touch(s, seen, live_in));
        }
        StmtKind::If {
            cond,
            then_body,
            else_body,
        } => {
            read(cond, seen, live_in);
            then_body
                .iter()
                .chain(else_body)
                .for_each(|s| first_touch(s, seen, live_in));
        }
        StmtKind::Return(Some(e)) | StmtKind::Expr(e) => read(e, seen, live_in),
        StmtKind::Return(None) | StmtKind::Barrier | StmtKind::Break | StmtKind::Continue => {}
        StmtKind::Callback(c) => {
            c.exprs().into_iter().for_each(|e| read(e, seen, live_in));
            for a in c.arrays() {
                if seen.insert(a) {
                    live_in.insert(a);
                }
            }
        }
        StmtKind::OnDevice(b) => b.iter().for_each(|s| first_touch(s, seen, live_in)),
        StmtKind::Launch { args, .. } => {
            for a in args {
                if seen.insert(*a) {
                    live_in.insert(*a);
                }
            }
        }
    }
}

struct Builder<'a> {
    host: &'a Function,
    converted: &'a BTreeSet<VarId>,
    params_of: &'a [Vec<VarId>],
    regions: &'a [Region],
    next: usize,
    first_kernel: usize,
    kernels: Vec<Kernel>,
    names: BTreeSet<String>,
}

impl Builder<'_> {
    fn block(&mut self, b: Block) -> Block {
        let mut out = Vec::with_capacity(b.len());
        for mut s in b {
            if is_region(&s) {
                out.push(self.outline(s));
                continue;
            }
            match &mut s.kind {
                StmtKind::For(l) if contains_region(&l.body) => {
                    l.body = self.block(std::mem::take(&mut l.body));
                }
                StmtKind::While { body, .. } if contains_region(body) => {
                    *body = self.block(std::mem::take(body));
                }
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } if contains_region(then_body) || contains_region(else_body) => {
                    *then_body = self.block(std::mem::take(then_body));
                    *else_body = self.block(std::mem::take(else_body));
                }
                _ => {}
            }
            out.push(s);
        }
        out
    }

    fn kernel_name(&mut self, s: &Stmt) -> String {
        let label = match &s.kind {
            StmtKind::For(l) => l.labels.first().cloned().unwrap_or_else(|| "kernel".into()),
            _ => "gpu".into(),
        };
        let base = format!("{}_{}", self.host.name, label);
        let mut name = base.clone();
        let mut n = 1;
        while self.names.contains(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        self.names.insert(name.clone());
        name
    }

    fn outline(&mut self, s: Stmt) -> Stmt {
        let r = self.next;
        self.next += 1;
        let region = &self.regions[r];
        let params = &self.params_of[r];
        let span = s.span;
        let name = self.kernel_name(&s);
        let mut f = Function {
            name,
            params: vec![],
            vars: vec![],
            body: vec![],
            ret: Type::Void,
            span,
        };
        let mut map: BTreeMap<VarId, VarId> = BTreeMap::new();
        // Converted scalars: (array param, local scalar).
        let mut cells: Vec<(VarId, VarId, Span)> = vec![];
        for &v in params {
            let hv = self.host.var(v);
            if self.converted.contains(&v) {
                let elem = hv.ty.elem().unwrap_or(ElemTy::F64);
                let pid = f.add_var(Var {
                    name: format!("{}_ref", hv.name),
                    ty: one_elem(elem),
                    kind: VarKind::Param,
                    value: None,
                    span: hv.span,
                });
                f.params.push(pid);
                cells.push((pid, VarId(0), hv.span));
            } else {
                let pid = f.add_var(Var {
                    kind: VarKind::Param,
                    ..hv.clone()
                });
                f.params.push(pid);
                map.insert(v, pid);
            }
        }
        let mut ci = 0;
        for &v in &region.used {
            if map.contains_key(&v) {
                continue;
            }
            let hv = self.host.var(v);
            let kind = if hv.kind == VarKind::Param {
                VarKind::Local
            } else {
                hv.kind
            };
            let id = f.add_var(Var {
                kind,
                value: None,
                ..hv.clone()
            });
            map.insert(v, id);
            if self.converted.contains(&v) && params.contains(&v) {
                cells[ci].1 = id;
                ci += 1;
            }
        }
        let mut body: Block = vec![];
        let mut loads = 0;
        for &(pid, lid, sp) in &cells {
            // A kernel loads the value unless it surely sets it first.
            let set_first = map_back(&map, lid).is_some_and(|v| written_first(&s, v));
            if set_first {
                continue;
            }
            loads += 1;
            let ty = f.var(lid).ty.clone();
            body.push(Stmt::new(
                StmtKind::Assign {
                    dst: Place::Var(lid),
                    value: elem0(pid, &ty, sp),
                },
                sp,
            ));
        }
        let levels = launch_levels(&s);
        match s.kind {
            StmtKind::OnDevice(b) => body.extend(b),
            kind => body.push(Stmt::new(kind, span)),
        }
        remap_block_from(&mut body, loads, &map);
        for &(pid, lid, sp) in &cells {
            // Only a kernel that sets the value stores it back.
            let assigned = map_back(&map, lid).is_some_and(|v| region.assigned.contains(&v));
            if !assigned {
                continue;
            }
            let ty = f.var(lid).ty.clone();
            body.push(Stmt::new(
                StmtKind::Assign {
                    dst: Place::Index {
                        array: pid,
                        indices: vec![Expr::int(0, ElemTy::I64, sp)],
                    },
                    value: Expr::var(lid, ty, sp),
                },
                sp,
            ));
        }
        f.body = body;
        let (levels, tpb) = levels;
        let id = KernelId((self.first_kernel + self.kernels.len()) as u32);
        self.kernels.push(Kernel {
            func: f,
            launch: LaunchInfo {
                levels,
                tpb,
                blocks: [1, 1, 1],
                threads: [1, 1, 1],
                ..LaunchInfo::default()
            },
        });
        Stmt::new(
            StmtKind::Launch {
                kernel: id,
                args: params.clone(),
            },
            span,
        )
    }
}

/// Is the first statement of the region that touches `v` an unconditional
/// assignment `v = e` (with `e` not reading `v`)? Conservative: a loop
/// region, or a touch inside a nested block, answers no.
fn written_first(region: &Stmt, v: VarId) -> bool {
    let StmtKind::OnDevice(b) = &region.kind else {
        return false;
    };
    for s in b {
        if let StmtKind::Assign {
            dst: Place::Var(d),
            value,
        } = &s.kind
        {
            if *d == v {
                return !crate::ir::visit::uses_var(value, v);
            }
        }
        let mut used = BTreeSet::new();
        stmt_uses(s, &mut used, &mut BTreeSet::new());
        if used.contains(&v) {
            return false;
        }
    }
    false
}

/// The host variable that became kernel variable `k`.
fn map_back(map: &BTreeMap<VarId, VarId>, k: VarId) -> Option<VarId> {
    map.iter().find(|(_, v)| **v == k).map(|(h, _)| *h)
}

fn elem0(array: VarId, ty: &Type, span: Span) -> Expr {
    Expr::new(
        ExprKind::Index {
            array,
            indices: vec![Expr::int(0, ElemTy::I64, span)],
        },
        ty.clone(),
        span,
    )
}

/// Threads per parallel depth (the first loop found at each depth) and the
/// threads per block of the innermost level.
pub(crate) fn launch_levels(s: &Stmt) -> (Vec<i64>, i64) {
    fn walk(b: &[Stmt], depth: usize, levels: &mut Vec<(i64, i64)>) {
        for s in b {
            match &s.kind {
                StmtKind::For(l) => {
                    let d = if let Some(p) = &l.par {
                        if levels.len() <= depth {
                            levels.push((p.threads, p.tpb));
                        }
                        depth + 1
                    } else {
                        depth
                    };
                    walk(&l.body, d, levels);
                }
                StmtKind::While { body, .. } | StmtKind::OnDevice(body) => {
                    walk(body, depth, levels)
                }
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    walk(then_body, depth, levels);
                    walk(else_body, depth, levels);
                }
                _ => {}
            }
        }
    }
    let mut levels = vec![];
    walk(std::slice::from_ref(s), 0, &mut levels);
    let tpb = levels.last().map(|l| l.1).unwrap_or(1);
    (levels.into_iter().map(|l| l.0).collect(), tpb)
}

/// Renames variables in the statements from index `skip` on.
fn remap_block_from(b: &mut Block, skip: usize, map: &BTreeMap<VarId, VarId>) {
    for s in b.iter_mut().skip(skip) {
        remap_stmt(s, map);
    }
}

fn m(v: &mut VarId, map: &BTreeMap<VarId, VarId>) {
    if let Some(n) = map.get(v) {
        *v = *n;
    }
}

fn remap_stmt(s: &mut Stmt, map: &BTreeMap<VarId, VarId>) {
    match &mut s.kind {
        StmtKind::Assign { dst, value } => {
            match dst {
                Place::Var(v) => m(v, map),
                Place::Index { array, indices } => {
                    m(array, map);
                    indices.iter_mut().for_each(|i| remap_expr(i, map));
                }
            }
            remap_expr(value, map);
        }
        StmtKind::For(l) => remap_loop(l, map),
        StmtKind::While { cond, body } => {
            remap_expr(cond, map);
            body.iter_mut().for_each(|s| remap_stmt(s, map));
        }
        StmtKind::If {
            cond,
            then_body,
            else_body,
        } => {
            remap_expr(cond, map);
            then_body
                .iter_mut()
                .chain(else_body.iter_mut())
                .for_each(|s| remap_stmt(s, map));
        }
        StmtKind::Return(Some(e)) | StmtKind::Expr(e) => remap_expr(e, map),
        StmtKind::Return(None) | StmtKind::Barrier | StmtKind::Break | StmtKind::Continue => {}
        StmtKind::Callback(c) => {
            for a in c.args.iter_mut() {
                match a {
                    crate::ir::CallArg::Array { array, prefix } => {
                        m(array, map);
                        prefix.iter_mut().for_each(|i| remap_expr(i, map));
                    }
                    crate::ir::CallArg::Scalar(e) => remap_expr(e, map),
                }
            }
        }
        StmtKind::OnDevice(b) => b.iter_mut().for_each(|s| remap_stmt(s, map)),
        StmtKind::Launch { args, .. } => args.iter_mut().for_each(|a| m(a, map)),
    }
}

fn remap_loop(l: &mut ForLoop, map: &BTreeMap<VarId, VarId>) {
    m(&mut l.var, map);
    remap_expr(&mut l.lo, map);
    remap_expr(&mut l.hi, map);
    if let Some(r) = &mut l.reduction {
        m(&mut r.acc, map);
    }
    l.body.iter_mut().for_each(|s| remap_stmt(s, map));
}

fn remap_expr(e: &mut Expr, map: &BTreeMap<VarId, VarId>) {
    match &mut e.kind {
        ExprKind::Var(v) | ExprKind::Index { array: v, .. } => m(v, map),
        ExprKind::External { args, .. } => {
            for a in args.iter_mut() {
                if let crate::ir::CallArg::Array { array, .. } = a {
                    m(array, map);
                }
            }
        }
        _ => {}
    }
    e.children_mut()
        .into_iter()
        .for_each(|c| remap_expr(c, map));
}

/// In the host, a converted scalar `v` is read and written as `v[0]`.
fn to_elem_block(b: &mut Block, conv: &BTreeSet<VarId>) {
    if conv.is_empty() {
        return;
    }
    for s in b.iter_mut() {
        let span = s.span;
        if let StmtKind::Assign { dst, .. } = &mut s.kind {
            if let Place::Var(v) = dst {
                if conv.contains(v) {
                    *dst = Place::Index {
                        array: *v,
                        indices: vec![Expr::int(0, ElemTy::I64, span)],
                    };
                }
            }
        }
        for e in stmt_exprs_mut(s) {
            to_elem_expr(e, conv);
        }
        for sub in sub_blocks_mut(s) {
            to_elem_block(sub, conv);
        }
    }
}

fn to_elem_expr(e: &mut Expr, conv: &BTreeSet<VarId>) {
    match &e.kind {
        ExprKind::Var(v) if conv.contains(v) => *e = elem0(*v, &e.ty, e.span),
        _ => e
            .children_mut()
            .into_iter()
            .for_each(|c| to_elem_expr(c, conv)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::print::program_to_string;
    use crate::ir::verify::verify_program;
    use crate::ir::{BinOp, LoopPar, ReduceOp, Reduction};
    use crate::passes::testutil::*;

    fn par(threads: i64) -> Option<LoopPar> {
        Some(LoopPar { threads, tpb: 32 })
    }

    #[test]
    fn top_level_reduction_result_becomes_one_element_array() {
        // acc = 0; for i par reduce(sum -> acc) { acc = acc + x[i] }; y[0] = acc * 2
        let mut b = FnBuilder::new("total");
        let x = b.array("x", ElemTy::F64, &[50]);
        let y = b.array("y", ElemTy::F64, &[1]);
        let i = b.index_var("i");
        let acc = b.local("acc", ElemTy::F64);
        let f = &b.f;
        let body = vec![assign(
            acc,
            bin(BinOp::Add, var_e(f, acc), idx(f, x, vec![var_e(f, i)])),
        )];
        let mut l = for_loop(i, 0, 50, &["red"], body);
        l.par = par(16);
        l.reduction = Some(Reduction::new(ReduceOp::Sum, acc));
        let fin = store(
            y,
            vec![int(0)],
            bin(BinOp::Mul, var_e(f, acc), float(2.0, ElemTy::F64)),
        );
        b.push(assign(acc, float(0.0, ElemTy::F64)));
        b.push(for_stmt(l));
        b.push(fin);
        let mut p = program(b.f);
        run(&mut p);
        assert_eq!(verify_program(&p), Ok(()));
        assert_eq!(
            program_to_string(&p),
            "\
kernel total_red(x: f64[50], acc_ref: f64[1]) launch(levels=[16], tpb=32, blocks=[1, 1, 1], threads=[1, 1, 1]) {
  acc: f64 = acc_ref[0]
  for i in 0..50 step 1 [red] par(threads=16, tpb=32) reduce(sum -> acc) {
    acc = (acc + x[i])
  }
  acc_ref[0] = acc
}

fn total(x: f64[50], y: f64[1]) {
  acc[0] = 0.0
  launch total_red(x, acc)
  y[0] = (acc[0] * 2.0)
}
"
        );
    }

    #[test]
    fn time_loop_around_two_nests_and_on_device() {
        // for t in 0..10 { nest A [a]; nest B [a] }; on_device { s = x[0] }; y[0] = s
        let mut b = FnBuilder::new("step");
        let x = b.array("x", ElemTy::F32, &[64]);
        let y = b.array("y", ElemTy::F32, &[64]);
        let t = b.index_var("t");
        let i = b.index_var("i");
        let s = b.local("s", ElemTy::F32);
        let f = &b.f;
        let mut a = for_loop(
            i,
            0,
            64,
            &["a"],
            vec![store(y, vec![var_e(f, i)], idx(f, x, vec![var_e(f, i)]))],
        );
        a.par = par(64);
        let mut c = for_loop(
            i,
            0,
            64,
            &["a"],
            vec![store(
                x,
                vec![var_e(f, i)],
                bin(
                    BinOp::Add,
                    idx(f, y, vec![var_e(f, i)]),
                    crate::ir::Expr::new(
                        ExprKind::Convert {
                            arg: Box::new(var_e(f, t)),
                        },
                        Type::Scalar(ElemTy::F32),
                        sp(),
                    ),
                ),
            )],
        );
        c.par = par(64);
        let time = for_loop(t, 0, 10, &[], vec![for_stmt(a), for_stmt(c)]);
        let dev = Stmt::new(
            StmtKind::OnDevice(vec![assign(s, idx(f, x, vec![int(0)]))]),
            sp(),
        );
        let fin = store(y, vec![int(0)], var_e(f, s));
        b.push(for_stmt(time));
        b.push(dev);
        b.push(fin);
        let mut p = program(b.f);
        run(&mut p);
        assert_eq!(verify_program(&p), Ok(()));
        let text = program_to_string(&p);
        assert!(
            text.contains("kernel step_a(x: f32[64], y: f32[64])"),
            "{text}"
        );
        assert!(
            text.contains("kernel step_a_1(x: f32[64], y: f32[64], t: i64)"),
            "{text}"
        );
        assert!(
            text.contains("kernel step_gpu(x: f32[64], s_ref: f32[1]) launch(levels=[], tpb=1"),
            "{text}"
        );
        assert!(
            text.ends_with(
                "\
fn step(x: f32[64], y: f32[64]) {
  for t in 0..10 step 1 [] {
    launch step_a(x, y)
    launch step_a_1(x, y, t)
  }
  launch step_gpu(x, s)
  y[0] = s[0]
}
"
            ),
            "{text}"
        );
    }
}
