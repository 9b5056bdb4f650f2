//! IR printer: a readable, deterministic text form of the IR, used by
//! `debug_print`, by the pass unit tests and by the golden files.
//!
//! ```text
//! fn sum_rows(x: f32[100, 1024], y: f32[100], N: i64 = 100) {
//!   for i in 0..100 step 1 [outer] par(threads=100, tpb=1024) {
//!     acc: f32 = 0.0
//!     for j in 0..1024 step 1 [] reduce(sum -> acc) {
//!       acc = (acc + x[i, j])
//!     }
//!     y[i] = acc
//!   }
//! }
//! ```
//!
//! Variable names are made unique per function (`acc`, `acc_1`) in `VarId`
//! order; the first assignment to a local shows its type.

use std::collections::{BTreeSet, HashSet};
use std::fmt::Write;

use super::{
    Block, Expr, ExprKind, ForLoop, Function, Kernel, Place, Program, Stmt, StmtKind, Type, UnOp,
    VarId, VarKind,
};
use crate::types::ScalarValue;

/// Prints the whole program: helpers, kernels (with their launch info), then
/// the host function.
pub fn program_to_string(p: &Program) -> String {
    let ctx = Ctx::for_program(p);
    let mut out = String::new();
    for h in &p.helpers {
        out.push_str(&print_function(h, "fn", None, &ctx));
        out.push('\n');
    }
    for k in &p.kernels {
        out.push_str(&print_function(&k.func, "kernel", Some(k), &ctx));
        out.push('\n');
    }
    out.push_str(&print_function(&p.host, "fn", None, &ctx));
    out
}

/// Prints one function on its own (kernel and helper references by index).
pub fn function_to_string(f: &Function) -> String {
    print_function(f, "fn", None, &Ctx::default())
}

/// Prints one type: `f32`, `f32[100, 1024]`, `void`.
pub fn type_to_string(t: &Type) -> String {
    match t {
        Type::Scalar(e) => e.short_name().to_string(),
        Type::Array { elem, shape } => {
            let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            format!("{}[{}]", elem.short_name(), dims.join(", "))
        }
        Type::Void => "void".to_string(),
    }
}

/// Prints a scalar value the way the IR printer shows literals.
pub fn value_to_string(v: &ScalarValue) -> String {
    match v {
        ScalarValue::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        ScalarValue::Int(i) => i.to_string(),
        ScalarValue::Float(f) => float_to_string(*f),
    }
}

fn float_to_string(f: f64) -> String {
    if f.is_nan() {
        "nan".to_string()
    } else if f.is_infinite() {
        if f > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        // `{:?}` always keeps a `.0` or an exponent, so floats stay floats.
        format!("{f:?}")
    }
}

/// Names of kernels and helpers, for `launch` statements and calls.
#[derive(Default)]
struct Ctx {
    kernels: Vec<String>,
    helpers: Vec<String>,
}

impl Ctx {
    fn for_program(p: &Program) -> Ctx {
        Ctx {
            kernels: p.kernels.iter().map(|k| k.func.name.clone()).collect(),
            helpers: p.helpers.iter().map(|h| h.name.clone()).collect(),
        }
    }
}

/// Unique display names for the variables of one function.
fn unique_names(f: &Function) -> Vec<String> {
    let mut taken: HashSet<String> = HashSet::new();
    let mut names = Vec::with_capacity(f.vars.len());
    for v in &f.vars {
        let base = if v.name.is_empty() { "v" } else { &v.name };
        let mut name = base.to_string();
        let mut n = 1;
        while taken.contains(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        taken.insert(name.clone());
        names.push(name);
    }
    names
}

struct Printer<'a> {
    f: &'a Function,
    ctx: &'a Ctx,
    names: Vec<String>,
    declared: BTreeSet<VarId>,
    out: String,
}

fn print_function(f: &Function, keyword: &str, kernel: Option<&Kernel>, ctx: &Ctx) -> String {
    let mut p = Printer {
        f,
        ctx,
        names: unique_names(f),
        declared: BTreeSet::new(),
        out: String::new(),
    };
    let params: Vec<String> = f
        .params
        .iter()
        .map(|&id| {
            let v = p.var_of(id);
            let mut s = format!("{}: ", p.name(id));
            match v {
                Some(v) => {
                    s.push_str(&type_to_string(&v.ty));
                    if let Some(val) = &v.value {
                        s.push_str(" = ");
                        s.push_str(&value_to_string(val));
                    }
                }
                None => s.push_str("<bad var>"),
            }
            s
        })
        .collect();
    let _ = write!(p.out, "{keyword} {}({})", f.name, params.join(", "));
    if f.ret != Type::Void {
        let _ = write!(p.out, " -> {}", type_to_string(&f.ret));
    }
    if let Some(k) = kernel {
        let levels: Vec<String> = k.launch.levels.iter().map(|l| l.to_string()).collect();
        let _ = write!(
            p.out,
            " launch(levels=[{}], tpb={}, blocks={:?}, threads={:?})",
            levels.join(", "),
            k.launch.tpb,
            k.launch.blocks,
            k.launch.threads
        );
        if let Some(l) = k.launch.cluster_level {
            let _ = write!(p.out, " cluster(level={l}, dims={:?})", k.launch.cluster);
        }
    }
    p.out.push_str(" {\n");
    for &id in &f.params {
        p.declared.insert(id);
    }
    for (i, v) in f.vars.iter().enumerate() {
        let what = match v.kind {
            VarKind::Shared => "shared",
            VarKind::Register => "register",
            _ => continue,
        };
        let line = format!(
            "  {what} {}: {}\n",
            p.name(VarId(i as u32)),
            type_to_string(&v.ty)
        );
        p.out.push_str(&line);
    }
    p.block(&f.body, 1);
    p.out.push_str("}\n");
    p.out
}

impl Printer<'_> {
    fn var_of(&self, id: VarId) -> Option<&super::Var> {
        self.f.vars.get(id.0 as usize)
    }

    fn name(&self, id: VarId) -> String {
        match self.names.get(id.0 as usize) {
            Some(n) => n.clone(),
            None => format!("<bad var {}>", id.0),
        }
    }

    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str("  ");
        }
    }

    fn block(&mut self, b: &Block, depth: usize) {
        for s in b {
            self.stmt(s, depth);
        }
    }

    fn stmt(&mut self, s: &Stmt, depth: usize) {
        self.indent(depth);
        match &s.kind {
            StmtKind::Assign { dst, value } => {
                let v = self.expr(value);
                let d = match dst {
                    Place::Var(id) => {
                        let first = self.declared.insert(*id);
                        let is_local = self
                            .var_of(*id)
                            .map(|v| v.kind == VarKind::Local)
                            .unwrap_or(false);
                        if first && is_local {
                            let ty = self
                                .var_of(*id)
                                .map(|v| type_to_string(&v.ty))
                                .unwrap_or_default();
                            format!("{}: {}", self.name(*id), ty)
                        } else {
                            self.name(*id)
                        }
                    }
                    Place::Index { array, indices } => self.index(*array, indices),
                };
                let _ = writeln!(self.out, "{d} = {v}");
            }
            StmtKind::For(l) => self.for_loop(l, depth),
            StmtKind::While { cond, body } => {
                let c = self.expr(cond);
                let _ = writeln!(self.out, "while {c} {{");
                self.block(body, depth + 1);
                self.close(depth);
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                let c = self.expr(cond);
                let _ = writeln!(self.out, "if {c} {{");
                self.block(then_body, depth + 1);
                if !else_body.is_empty() {
                    self.indent(depth);
                    self.out.push_str("} else {\n");
                    self.block(else_body, depth + 1);
                }
                self.close(depth);
            }
            StmtKind::Return(e) => match e {
                Some(e) => {
                    let e = self.expr(e);
                    let _ = writeln!(self.out, "return {e}");
                }
                None => self.out.push_str("return\n"),
            },
            StmtKind::Expr(e) => {
                let e = self.expr(e);
                let _ = writeln!(self.out, "{e}");
            }
            StmtKind::OnDevice(body) => {
                self.out.push_str("on_device {\n");
                self.block(body, depth + 1);
                self.close(depth);
            }
            StmtKind::Barrier => self.out.push_str("barrier\n"),
            StmtKind::Break => self.out.push_str("break\n"),
            StmtKind::Continue => self.out.push_str("continue\n"),
            StmtKind::Callback(c) => {
                let args = self.call_args(&c.args);
                let _ = writeln!(self.out, "callback#{} {}({args})", c.site, c.name);
            }
            StmtKind::Launch { kernel, args } => {
                let name = self
                    .ctx
                    .kernels
                    .get(kernel.0 as usize)
                    .cloned()
                    .unwrap_or_else(|| format!("kernel#{}", kernel.0));
                let args: Vec<String> = args.iter().map(|a| self.name(*a)).collect();
                let _ = writeln!(self.out, "launch {name}({})", args.join(", "));
            }
        }
    }

    fn close(&mut self, depth: usize) {
        self.indent(depth);
        self.out.push_str("}\n");
    }

    fn for_loop(&mut self, l: &ForLoop, depth: usize) {
        self.declared.insert(l.var);
        let lo = self.expr(&l.lo);
        let hi = self.expr(&l.hi);
        let _ = write!(
            self.out,
            "for {} in {lo}..{hi} step {} [{}]",
            self.name(l.var),
            l.step,
            l.labels.join(", ")
        );
        if let Some(p) = &l.par {
            let _ = write!(self.out, " par(threads={}, tpb={})", p.threads, p.tpb);
        }
        if let Some(r) = &l.reduction {
            let order = match r.pairwise {
                None => String::new(),
                Some(i64::MAX) => ", pairwise".into(),
                Some(run) => format!(", pairwise in runs of {run}"),
            };
            let _ = write!(
                self.out,
                " reduce({} -> {}{order})",
                r.op.name(),
                self.name(r.acc)
            );
        }
        if l.wants_reduction {
            self.out.push_str(" par_reduction");
        }
        if l.unroll {
            self.out.push_str(" unroll");
        }
        self.out.push_str(" {\n");
        self.block(&l.body, depth + 1);
        self.close(depth);
    }

    fn index(&self, array: VarId, indices: &[Expr]) -> String {
        let idx: Vec<String> = indices.iter().map(|e| self.expr(e)).collect();
        format!("{}[{}]", self.name(array), idx.join(", "))
    }

    /// Arrays by name, row views as `a[i]`, scalars.
    fn call_args(&self, args: &[crate::ir::CallArg]) -> String {
        args.iter()
            .map(|a| match a {
                crate::ir::CallArg::Array { array, prefix } if prefix.is_empty() => {
                    self.name(*array)
                }
                crate::ir::CallArg::Array { array, prefix } => self.index(*array, prefix),
                crate::ir::CallArg::Scalar(e) => self.expr(e),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn exprs(&self, es: &[Expr]) -> String {
        es.iter()
            .map(|e| self.expr(e))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn expr(&self, e: &Expr) -> String {
        match &e.kind {
            ExprKind::Bool(b) => value_to_string(&ScalarValue::Bool(*b)),
            ExprKind::Int(i) => i.to_string(),
            ExprKind::Float(f) => float_to_string(*f),
            ExprKind::Var(id) => self.name(*id),
            ExprKind::Index { array, indices } => self.index(*array, indices),
            ExprKind::Unary { op, arg } => {
                let a = self.expr(arg);
                match op {
                    UnOp::Neg => format!("(-{a})"),
                    UnOp::Not => format!("(not {a})"),
                    UnOp::BitNot => format!("(~{a})"),
                    UnOp::Pos => format!("(+{a})"),
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let l = self.expr(lhs);
                let r = self.expr(rhs);
                match op {
                    op if op.max_min().is_some() => format!("{}({l}, {r})", op.symbol()),
                    _ => format!("({l} {} {r})", op.symbol()),
                }
            }
            ExprKind::Select { cond, then, else_ } => format!(
                "({} if {} else {})",
                self.expr(then),
                self.expr(cond),
                self.expr(else_)
            ),
            ExprKind::Convert { arg } => {
                format!("{}({})", type_to_string(&e.ty), self.expr(arg))
            }
            ExprKind::Math { func, args } => format!("{}({})", func.name(), self.exprs(args)),
            ExprKind::GpuIndex(g) => g.name(),
            ExprKind::CpuThreads => "cpu_threads()".into(),
            ExprKind::Assert {
                cond,
                message,
                exception,
                values,
                ..
            } => {
                let raises = match exception.as_str() {
                    "AssertionError" => String::new(),
                    e => format!(", raises {e}"),
                };
                let noting = match values.is_empty() {
                    true => String::new(),
                    false => format!(", noting {}", self.exprs(values)),
                };
                match message {
                    Some(m) => format!("assert({}, {m:?}{noting}{raises})", self.expr(cond)),
                    None => format!("assert({}{noting}{raises})", self.expr(cond)),
                }
            }
            ExprKind::Note {
                site,
                record,
                values,
            } => format!(
                "note({site}, {}, {})",
                self.expr(record),
                self.exprs(values)
            ),
            ExprKind::WarpReduce { op, arg } => {
                format!("warp_{}({})", op.name(), self.expr(arg))
            }
            ExprKind::ClusterReduce { op, arg } => {
                format!("cluster_{}({})", op.name(), self.expr(arg))
            }
            ExprKind::Atomic { op, value } => {
                format!("atomic_{}({})", op.name(), self.expr(value))
            }
            ExprKind::CheckIndex {
                arg,
                size,
                site,
                record,
                wrap,
            } => match record {
                Some(r) => format!(
                    "check_index({}, {size}, site={site}, {}{})",
                    self.expr(arg),
                    self.expr(r),
                    if *wrap { ", wrap" } else { "" }
                ),
                None if *wrap => format!("wrap_index({}, {size})", self.expr(arg)),
                None => self.expr(arg),
            },
            ExprKind::Call { func, args } => {
                let name = self
                    .ctx
                    .helpers
                    .get(func.0 as usize)
                    .cloned()
                    .unwrap_or_else(|| format!("helper#{}", func.0));
                format!("{name}({})", self.exprs(args))
            }
            ExprKind::External { ext, args } => {
                format!("external#{ext}({})", self.call_args(args))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::testutil::*;
    use crate::types::ElemTy;

    #[test]
    fn prints_sum_rows() {
        let p = sum_rows_program();
        let text = program_to_string(&p);
        let expected = "\
fn sum_rows(x: f32[100, 1024], y: f32[100], N: i64 = 100) {
  for i in 0..100 step 1 [outer] {
    acc: f32 = 0.0
    for j in 0..1024 step 1 [] reduce(sum -> acc) {
      acc = (acc + x[i, j])
    }
    y[i] = acc
  }
}
";
        assert_eq!(text, expected);
    }

    #[test]
    fn duplicate_names_get_suffixes() {
        let mut b = FnBuilder::new("f");
        let a = b.local("acc", ElemTy::F64);
        let a2 = b.local("acc", ElemTy::F64);
        b.push(assign(a, float(1.0, ElemTy::F64)));
        b.push(assign(a2, var_e(&b.f, a)));
        b.push(assign(a, var_e(&b.f, a2)));
        let text = function_to_string(&b.f);
        assert_eq!(
            text,
            "fn f() {\n  acc: f64 = 1.0\n  acc_1: f64 = acc\n  acc = acc_1\n}\n"
        );
    }
}
