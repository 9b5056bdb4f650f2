//! GPU backends only, before `outline_kernels`: the host/device split.
//!
//! On a GPU the arrays live in device memory, so host code (statements
//! outside parallel nests and `with parpy.gpu:` blocks) may not touch them:
//!
//! - storing into an array from host code is an error with the hint of
//!   REFERENCE.md (use `with parpy.gpu:` or a reduction operator);
//! - reading an array (or passing one to a helper) from host code is an
//!   error too.
//!
//! One host statement is allowed: the store of a top-level parallel
//! reduction's result, right after its loop (the combine step `lhs = lhs OP
//! t` that `lower_reductions` puts after a `par_reduction()` loop, or
//! `out[0] = parpy.reduce.sum(x[:])` under a label). When it stores into an
//! array element, it is wrapped in an `OnDevice` block (a one-thread kernel)
//! instead of being reported.
//!
//! Nor is host code that sema hoisted out of a parallel statement (the sum
//! of `parpy.label('j'); z[:] = x - x.sum()`, computed once before the
//! loop over `j`): its span lies inside the span of a later statement of
//! the same block that holds a parallel loop, and so do the spans of the
//! statements between. A reduction loop of it that only updates its
//! accumulator becomes a parallel reduction with that loop's threads (as
//! `parpy.label('j'); s = parpy.sum(x[:])` is), other statements of it that
//! touch arrays run in an `OnDevice` block (a one-thread kernel).

use crate::diag::{Diagnostic, Span};
use crate::ir::{Block, Expr, ExprKind, LoopPar, Place, Program, Stmt, StmtKind};
use crate::options::Backend;

pub fn run(p: &mut Program, backend: Backend) -> Vec<Diagnostic> {
    let mut errors = vec![];
    let mut body = std::mem::take(&mut p.host.body);
    let mut c = Check {
        p,
        backend,
        errors: &mut errors,
        access: vec![],
    };
    c.block(&mut body);
    let access = std::mem::take(&mut c.access);
    // One error for a function with no parallel code at all (the spec or
    // the labels forgotten), not one per statement.
    match access.first() {
        Some(first) if !has_device_code(&body) => {
            errors.push(no_parallelism(&p.host.name, backend, first))
        }
        _ => errors.extend(access),
    }
    p.host.body = body;
    errors
}

/// The error of a function without device code whose host code touches
/// arrays, at the first access (`first`).
fn no_parallelism(name: &str, backend: Backend, first: &Diagnostic) -> Diagnostic {
    let mut d = Diagnostic::error(format!(
        "The function `{name}` does not contain any parallelism, so on the {} backend all of \
         it runs on the host, where the arrays (in device memory) cannot be accessed",
        backend.name()
    ));
    if let Some(l) = first.labels.first() {
        d = d.at(l.span, "this statement uses an array in host code");
    }
    d.note("Data cannot be accessed outside parallel code")
        .help(
            "label a loop or a slice statement (`parpy.label('i')`) and map the label to threads \
         in the parallel specification (`parpy.par({'i': parpy.threads(n)})`), or use \
         `with parpy.gpu:`",
        )
}

/// Whether `b` holds a parallel loop or a device block anywhere.
fn has_device_code(b: &[Stmt]) -> bool {
    let mut found = false;
    crate::ir::visit::walk_stmts(b, &mut |s| found |= on_device(s));
    found
}

struct Check<'a> {
    p: &'a Program,
    backend: Backend,
    errors: &'a mut Vec<Diagnostic>,
    /// The array accesses of host code (reported one by one, or as one
    /// error when the function has no device code at all).
    access: Vec<Diagnostic>,
}

/// Is `s` a parallel nest or a device block (code that runs on the device)?
fn on_device(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::For(l) => l.par.is_some(),
        StmtKind::OnDevice(_) => true,
        _ => false,
    }
}

/// The combine step after a top-level parallel reduction loop (a
/// `par_reduction()` loop or a labelled `parpy.reduce.*` statement):
/// `a[..] = ...` reading the loop's accumulator.
fn is_combine(prev: Option<&Stmt>, s: &Stmt) -> bool {
    let Some(Stmt {
        kind: StmtKind::For(l),
        ..
    }) = prev
    else {
        return false;
    };
    let (Some(r), true) = (l.reduction, l.par.is_some()) else {
        return false;
    };
    matches!(&s.kind, StmtKind::Assign { dst: Place::Index { .. }, value }
        if crate::ir::visit::uses_var(value, r.acc))
}

/// The note of both errors (also the words ParPy's message uses).
const NO_PARALLELISM: &str = "Data cannot be accessed outside parallel code, and this statement \
     does not contain any parallelism (no label of the parallel specification maps it to threads)";

/// The parallelism of the first parallel loop in `s`.
fn first_par(s: &Stmt) -> Option<LoopPar> {
    let mut found = None;
    crate::ir::visit::walk_stmts(std::slice::from_ref(s), &mut |t| {
        if let (None, StmtKind::For(l)) = (found, &t.kind) {
            found = l.par;
        }
    });
    found
}

/// Is `inner` a part of the source text of `outer`?
fn within(inner: crate::diag::Span, outer: crate::diag::Span) -> bool {
    inner.file == outer.file && outer.lo <= inner.lo && inner.hi <= outer.hi && outer.lo < outer.hi
}

/// For each statement of `b`: the parallelism of the later statement of
/// `b` that sema hoisted it out of (see the module comment), if any.
fn hoisted_from(b: &[Stmt]) -> Vec<Option<LoopPar>> {
    (0..b.len())
        .map(|k| {
            let (j, par) = b
                .iter()
                .enumerate()
                .skip(k + 1)
                .find_map(|(j, t)| first_par(t).map(|p| (j, p)))?;
            let outer = b[j].span;
            b[k..j].iter().all(|t| within(t.span, outer)).then_some(par)
        })
        .collect()
}

/// Makes the hoisted reduction loop `s` parallel with `par`, when it is a
/// sequential reduction whose body only updates its accumulator.
fn parallel_reduction(s: &mut Stmt, par: LoopPar) -> bool {
    let StmtKind::For(l) = &mut s.kind else {
        return false;
    };
    let Some(r) = l.reduction else {
        return false;
    };
    let only_acc = l
        .body
        .iter()
        .all(|t| matches!(&t.kind, StmtKind::Assign { dst: Place::Var(v), .. } if *v == r.acc));
    if l.par.is_some() || l.wants_reduction || l.body.is_empty() || !only_acc {
        return false;
    }
    l.par = Some(par);
    true
}

impl Check<'_> {
    fn block(&mut self, b: &mut Block) {
        let old = std::mem::take(b);
        let hoisted = hoisted_from(&old);
        for (s, hoisted) in old.into_iter().zip(hoisted) {
            if on_device(&s) {
                b.push(s);
                continue;
            }
            if is_combine(b.last(), &s) {
                let span = s.span;
                b.push(Stmt::new(StmtKind::OnDevice(vec![s]), span));
                continue;
            }
            let mut s = s;
            if let Some(par) = hoisted {
                if parallel_reduction(&mut s, par) {
                    b.push(s);
                    continue;
                }
                let from = self.access.len();
                self.stmt(&mut s);
                if self.access.len() > from {
                    // it touches arrays: it runs on the device
                    self.access.truncate(from);
                    let span = s.span;
                    s = Stmt::new(StmtKind::OnDevice(vec![s]), span);
                }
                b.push(s);
                continue;
            }
            self.stmt(&mut s);
            b.push(s);
        }
    }

    fn store_error(&mut self, span: Span) {
        self.access.push(
            Diagnostic::error(format!(
                "assigning to device data from host code (backend {})",
                self.backend.name()
            ))
            .at(
                span,
                "this statement runs on the host, but the array lives on the device",
            )
            .note(NO_PARALLELISM)
            .help("use `with parpy.gpu:` or a reduction operator"),
        );
    }

    fn stmt(&mut self, s: &mut Stmt) {
        let span = s.span;
        match &mut s.kind {
            StmtKind::Assign { dst, value } => {
                if let Place::Index { indices, .. } = dst {
                    self.store_error(span);
                    indices.iter().for_each(|i| self.expr(i));
                }
                self.expr(value);
            }
            StmtKind::For(l) => {
                self.expr(&l.lo);
                self.expr(&l.hi);
                self.block(&mut l.body);
            }
            StmtKind::While { cond, body } => {
                self.expr(cond);
                self.block(body);
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                self.expr(cond);
                self.block(then_body);
                self.block(else_body);
            }
            StmtKind::Return(Some(e)) | StmtKind::Expr(e) => self.expr(e),
            // the runtime copies the arrays around the call
            StmtKind::Callback(c) => c.exprs_mut().into_iter().for_each(|e| self.expr(e)),
            StmtKind::Return(None)
            | StmtKind::OnDevice(_)
            | StmtKind::Launch { .. }
            | StmtKind::Barrier
            | StmtKind::Break
            | StmtKind::Continue => {}
        }
    }

    fn read_error(&mut self, e: &Expr) {
        self.access.push(
            Diagnostic::error(format!(
                "reading device data from host code (backend {})",
                self.backend.name()
            ))
            .at(
                e.span,
                "this array lives on the device; host code cannot read it",
            )
            .note(NO_PARALLELISM)
            .help("move this code into the parallel loop nest, or into a `with parpy.gpu:` block"),
        );
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            // an atomic update reads its element too
            ExprKind::Index { .. } | ExprKind::Atomic { .. } => self.read_error(e),
            ExprKind::Var(_) if e.ty.is_array() => self.read_error(e),
            ExprKind::Bool(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Var(_)
            | ExprKind::GpuIndex(_)
            | ExprKind::CpuThreads => {}
            ExprKind::Unary { arg, .. }
            | ExprKind::Convert { arg }
            | ExprKind::WarpReduce { arg, .. }
            | ExprKind::ClusterReduce { arg, .. }
            | ExprKind::CheckIndex { arg, .. } => self.expr(arg),
            ExprKind::Assert { cond, values, .. } => {
                self.expr(cond);
                values.iter().for_each(|v| self.expr(v));
            }
            // (the record is the call's own)
            ExprKind::Note { values, .. } => values.iter().for_each(|v| self.expr(v)),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.expr(lhs);
                self.expr(rhs);
            }
            ExprKind::Select { cond, then, else_ } => {
                self.expr(cond);
                self.expr(then);
                self.expr(else_);
            }
            ExprKind::Math { args, .. } => args.iter().for_each(|a| self.expr(a)),
            ExprKind::External { ext, args } => {
                let d = &self.p.externals[*ext as usize];
                let msg = match d.target {
                    crate::signature::ExtTarget::Device => format!(
                        "the external function `{}` runs on the device, but this call is in host code",
                        d.name
                    ),
                    // Cuda: the host code's interpreter calls it (a library
                    // nvcc builds), with scalars; arrays are in device memory
                    crate::signature::ExtTarget::Host if self.backend == Backend::Cuda => {
                        if !args.iter().any(|a| matches!(a, crate::ir::CallArg::Array { .. })) {
                            for e in crate::ir::call_arg_exprs(args) {
                                self.expr(e);
                            }
                            return;
                        }
                        format!(
                            "the host external function `{}` takes an array, and on the Cuda \
                             backend the arrays are in device memory: host external functions \
                             take scalars only there",
                            d.name
                        )
                    }
                    crate::signature::ExtTarget::Host => format!(
                        "host external functions (`{}`) run on the Cpu and Cuda backends only",
                        d.name
                    ),
                };
                self.errors.push(
                    Diagnostic::error(msg)
                        .at(e.span, "called from host code")
                        .help("call a device external inside a parallel loop or a `with parpy.gpu:` block"),
                );
            }
            ExprKind::Call { args, .. } => {
                // Only the first offending argument is reported.
                let _ = self.p;
                if let Some(a) = args.iter().find(|a| a.ty.is_array()) {
                    self.read_error(a);
                } else {
                    args.iter().for_each(|a| self.expr(a));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::print::program_to_string;
    use crate::ir::{BinOp, LoopPar, ReduceOp, Reduction};
    use crate::passes::testutil::*;
    use crate::types::ElemTy;

    /// `y[0] = x[1]` on the host, after a device block (`device`) or alone.
    fn host_store(device: bool) -> Program {
        let mut b = FnBuilder::new("f");
        let x = b.array("x", ElemTy::F32, &[4]);
        let y = b.array("y", ElemTy::F32, &[4]);
        let f = &b.f;
        let s = store(y, vec![int(0)], idx(f, x, vec![int(1)]));
        if device {
            b.push(Stmt::new(StmtKind::OnDevice(vec![]), Span::default()));
        }
        b.push(s);
        program(b.f)
    }

    #[test]
    fn a_function_without_device_code_gets_one_error() {
        let errs = run(&mut host_store(false), Backend::Cuda);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0]
                .message
                .starts_with("The function `f` does not contain any parallelism"),
            "{errs:?}"
        );
    }

    #[test]
    fn host_store_and_read_are_errors() {
        let mut p = host_store(true);
        let errs = run(&mut p, Backend::Cuda);
        assert_eq!(errs.len(), 2, "{errs:?}");
        let text = crate::diag::render_all(&errs);
        assert!(
            text.contains("assigning to device data from host code"),
            "{text}"
        );
        assert!(
            text.contains("use `with parpy.gpu:` or a reduction operator"),
            "{text}"
        );
        assert!(
            text.contains("reading device data from host code"),
            "{text}"
        );
    }

    #[test]
    fn parallel_and_device_code_is_accepted() {
        let mut p = sum_rows_program();
        if let StmtKind::For(l) = &mut p.host.body[0].kind {
            l.par = Some(LoopPar {
                threads: 100,
                tpb: 1024,
            });
        }
        assert!(run(&mut p, Backend::Cuda).is_empty());
    }

    #[test]
    fn par_reduction_combine_goes_to_the_device() {
        // t = 0; for i par reduce(sum -> t) par_reduction { t = t + x[i] }; s[0] = s[0] + t
        let mut b = FnBuilder::new("psum");
        let x = b.array("x", ElemTy::F64, &[64]);
        let s_arr = b.array("s", ElemTy::F64, &[1]);
        let i = b.index_var("i");
        let t = b.local("t", ElemTy::F64);
        let f = &b.f;
        let mut l = for_loop(
            i,
            0,
            64,
            &["red"],
            vec![assign(
                t,
                bin(BinOp::Add, var_e(f, t), idx(f, x, vec![var_e(f, i)])),
            )],
        );
        l.par = Some(LoopPar {
            threads: 64,
            tpb: 1024,
        });
        l.reduction = Some(Reduction::new(ReduceOp::Sum, t));
        l.wants_reduction = true;
        let comb = store(
            s_arr,
            vec![int(0)],
            bin(BinOp::Add, idx(f, s_arr, vec![int(0)]), var_e(f, t)),
        );
        b.push(assign(t, float(0.0, ElemTy::F64)));
        b.push(for_stmt(l));
        b.push(comb);
        let mut p = program(b.f);
        assert!(run(&mut p, Backend::Cuda).is_empty());
        let text = program_to_string(&p);
        assert!(
            text.ends_with("  on_device {\n    s[0] = (s[0] + t)\n  }\n}\n"),
            "{text}"
        );
    }
}
