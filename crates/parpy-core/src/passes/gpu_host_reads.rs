//! GPU backends only, after `outline_kernels`: host code reads device
//! temporaries only through plain copies.
//!
//! After outlining, a scalar that a kernel sets and host code uses lives in
//! a 1-element device array (a *device temporary*), and the host reads it as
//! `tmp[0]` wherever the scalar was used. On a GPU the host cannot
//! dereference device memory, so every such read inside a larger host
//! expression is hoisted into a copy `v = tmp[0]` (a device-to-host
//! transfer) right before the statement that needs it; a `while` condition
//! gets the copy before the loop and again at the end of its body. After the
//! pass, host statements touch device temporaries only as `v = tmp[i]` and
//! `tmp[i] = e` (with `e` free of device reads): the forms the runtime and
//! the CUDA host code implement.

use std::collections::BTreeSet;

use crate::ir::{
    Block, Expr, ExprKind, Function, Place, Program, Stmt, StmtKind, Var, VarId, VarKind,
};

pub fn run(p: &mut Program) {
    let temps: BTreeSet<VarId> = p.host.local_arrays().collect();
    if temps.is_empty() {
        return;
    }
    let body = std::mem::take(&mut p.host.body);
    let mut h = Hoist {
        f: &mut p.host,
        temps: &temps,
    };
    let body = h.block(body);
    p.host.body = body;
}

struct Hoist<'a> {
    f: &'a mut Function,
    temps: &'a BTreeSet<VarId>,
}

impl Hoist<'_> {
    fn is_temp_read(&self, e: &Expr) -> bool {
        matches!(&e.kind, ExprKind::Index { array, .. } if self.temps.contains(array))
    }

    /// Replaces the device reads inside `e` by fresh host scalars; pushes the
    /// copies into `loads`.
    fn expr(&mut self, e: &mut Expr, loads: &mut Vec<Stmt>) {
        for c in e.children_mut() {
            self.expr(c, loads);
        }
        if self.is_temp_read(e) {
            let ExprKind::Index { array, .. } = &e.kind else {
                return;
            };
            let name = format!("{}_value", self.f.var(*array).name);
            let v = self.f.add_var(Var {
                name,
                ty: e.ty.clone(),
                kind: VarKind::Local,
                value: None,
                span: e.span,
            });
            let read = std::mem::replace(e, Expr::var(v, e.ty.clone(), e.span));
            loads.push(Stmt::new(
                StmtKind::Assign {
                    dst: Place::Var(v),
                    value: read,
                },
                e.span,
            ));
        }
    }

    fn block(&mut self, b: Block) -> Block {
        let mut out = vec![];
        for mut s in b {
            let mut loads = vec![];
            match &mut s.kind {
                StmtKind::Assign {
                    dst: Place::Var(_),
                    value,
                } if self.is_temp_read(value) => {
                    if let ExprKind::Index { indices, .. } = &mut value.kind {
                        indices.iter_mut().for_each(|i| self.expr(i, &mut loads));
                    }
                }
                StmtKind::Assign { dst, value } => {
                    if let Place::Index { indices, .. } = dst {
                        indices.iter_mut().for_each(|i| self.expr(i, &mut loads));
                    }
                    self.expr(value, &mut loads);
                }
                StmtKind::For(l) => {
                    self.expr(&mut l.lo, &mut loads);
                    self.expr(&mut l.hi, &mut loads);
                    l.body = self.block(std::mem::take(&mut l.body));
                }
                StmtKind::While { cond, body } => {
                    self.expr(cond, &mut loads);
                    *body = self.block(std::mem::take(body));
                    // Re-read at the end of every iteration (and before
                    // each `continue`), into the same scalars.
                    before_continue(body, &loads);
                    body.extend(loads.iter().cloned());
                }
                StmtKind::If {
                    cond,
                    then_body,
                    else_body,
                } => {
                    self.expr(cond, &mut loads);
                    *then_body = self.block(std::mem::take(then_body));
                    *else_body = self.block(std::mem::take(else_body));
                }
                StmtKind::Return(Some(e)) | StmtKind::Expr(e) => self.expr(e, &mut loads),
                StmtKind::Callback(c) => c
                    .exprs_mut()
                    .into_iter()
                    .for_each(|e| self.expr(e, &mut loads)),
                StmtKind::OnDevice(body) => *body = self.block(std::mem::take(body)),
                StmtKind::Return(None)
                | StmtKind::Launch { .. }
                | StmtKind::Barrier
                | StmtKind::Break
                | StmtKind::Continue => {}
            }
            out.extend(loads);
            out.push(s);
        }
        out
    }
}

/// Puts `stmts` in front of every `continue` of the loop whose body is `b`.
fn before_continue(b: &mut Block, stmts: &[Stmt]) {
    if stmts.is_empty() {
        return;
    }
    for mut s in std::mem::take(b) {
        match &mut s.kind {
            StmtKind::Continue => b.extend(stmts.iter().cloned()),
            StmtKind::For(_) | StmtKind::While { .. } => {}
            _ => crate::ir::visit::sub_blocks_mut(&mut s)
                .into_iter()
                .for_each(|sb| before_continue(sb, stmts)),
        }
        b.push(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::print::program_to_string;
    use crate::ir::verify::verify_program;
    use crate::ir::{BinOp, Type};
    use crate::passes::testutil::*;
    use crate::types::ElemTy;

    #[test]
    fn reads_in_conditions_become_copies() {
        // err: f64[1] (a device temporary); while err[0] > 0.5 { err[0] = err[0] * 0.5 }
        let mut b = FnBuilder::new("conv");
        let err = b.f.add_var(Var {
            name: "err".into(),
            ty: Type::Array {
                elem: ElemTy::F64,
                shape: vec![1],
            },
            kind: VarKind::Local,
            value: None,
            span: sp(),
        });
        let f = &b.f;
        let body = vec![store(
            err,
            vec![int(0)],
            bin(
                BinOp::Mul,
                idx(f, err, vec![int(0)]),
                float(0.5, ElemTy::F64),
            ),
        )];
        let cond = bin(
            BinOp::Gt,
            idx(f, err, vec![int(0)]),
            float(0.5, ElemTy::F64),
        );
        b.push(store(err, vec![int(0)], float(4.0, ElemTy::F64)));
        b.push(Stmt::new(StmtKind::While { cond, body }, sp()));
        let mut p = program(b.f);
        run(&mut p);
        assert_eq!(verify_program(&p), Ok(()));
        assert_eq!(
            program_to_string(&p),
            "\
fn conv() {
  err[0] = 4.0
  err_value: f64 = err[0]
  while (err_value > 0.5) {
    err_value_1: f64 = err[0]
    err[0] = (err_value_1 * 0.5)
    err_value = err[0]
  }
}
"
        );
    }
}
