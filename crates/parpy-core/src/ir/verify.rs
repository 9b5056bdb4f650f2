//! IR verifier: structural checks that every pass must keep. A failure is a
//! bug in parpy (reported as `CompileError::Internal` with the IR dump).

use super::{Block, Expr, ExprKind, Function, Place, Program, StmtKind, Type, VarId, VarKind};

/// Checks the whole program; returns the first problem found.
pub fn verify_program(p: &Program) -> Result<(), String> {
    verify_function(p, &p.host, false).map_err(|e| format!("in `{}`: {e}", p.host.name))?;
    for k in &p.kernels {
        verify_function(p, &k.func, true)
            .map_err(|e| format!("in kernel `{}`: {e}", k.func.name))?;
    }
    for h in &p.helpers {
        verify_function(p, h, false).map_err(|e| format!("in helper `{}`: {e}", h.name))?;
    }
    Ok(())
}

fn verify_function(p: &Program, f: &Function, kernel: bool) -> Result<(), String> {
    for &id in &f.params {
        let v = f
            .vars
            .get(id.0 as usize)
            .ok_or("parameter id out of range")?;
        if v.kind != VarKind::Param {
            return Err(format!("parameter `{}` is not of kind Param", v.name));
        }
    }
    for (i, v) in f.vars.iter().enumerate() {
        if v.kind == VarKind::Param && !f.params.contains(&VarId(i as u32)) {
            return Err(format!(
                "variable `{}` is a Param but not in the params",
                v.name
            ));
        }
    }
    for v in &f.vars {
        let what = match v.kind {
            VarKind::Shared => "shared",
            VarKind::Register => "register",
            _ => continue,
        };
        if !kernel {
            return Err(format!("{what} array `{}` outside a kernel", v.name));
        }
        if !v.ty.is_array() {
            return Err(format!("{what} variable `{}` is not an array", v.name));
        }
    }
    V { p, f, kernel }.block(&f.body)
}

struct V<'a> {
    p: &'a Program,
    f: &'a Function,
    /// GPU statements and expressions are allowed only in kernels.
    kernel: bool,
}

impl V<'_> {
    fn var(&self, id: VarId) -> Result<&super::Var, String> {
        self.f
            .vars
            .get(id.0 as usize)
            .ok_or_else(|| format!("variable id {} out of range", id.0))
    }

    fn block(&self, b: &Block) -> Result<(), String> {
        for s in b {
            match &s.kind {
                StmtKind::Assign { dst, value } => {
                    self.expr(value)?;
                    match dst {
                        Place::Var(id) => {
                            if self.var(*id)?.ty.is_array() {
                                return Err(format!(
                                    "assignment to the whole array `{}`",
                                    self.var(*id)?.name
                                ));
                            }
                        }
                        Place::Index { array, indices } => self.index(*array, indices)?,
                    }
                }
                StmtKind::For(l) => {
                    if l.step == 0 {
                        return Err("loop with step 0".into());
                    }
                    if self.var(l.var)?.ty.is_array() {
                        return Err("loop variable of array type".into());
                    }
                    self.expr(&l.lo)?;
                    self.expr(&l.hi)?;
                    if let Some(par) = &l.par {
                        if par.threads < 1 || par.tpb < 1 {
                            return Err("parallel loop with fewer than one thread".into());
                        }
                    }
                    if let Some(r) = &l.reduction {
                        let acc = self.var(r.acc)?;
                        if !matches!(acc.ty, Type::Scalar(_)) {
                            return Err(format!(
                                "reduction accumulator `{}` is not a scalar",
                                acc.name
                            ));
                        }
                    }
                    self.block(&l.body)?;
                }
                StmtKind::While { cond, body } => {
                    self.expr(cond)?;
                    self.block(body)?;
                }
                StmtKind::If {
                    cond,
                    then_body,
                    else_body,
                } => {
                    self.expr(cond)?;
                    self.block(then_body)?;
                    self.block(else_body)?;
                }
                StmtKind::Return(e) => {
                    if let Some(e) = e {
                        self.expr(e)?;
                    }
                }
                StmtKind::Expr(e) => self.expr(e)?,
                StmtKind::OnDevice(b) => self.block(b)?,
                StmtKind::Barrier => {
                    if !self.kernel {
                        return Err("barrier outside a kernel".into());
                    }
                }
                StmtKind::Launch { kernel, args } => {
                    let k = self
                        .p
                        .kernels
                        .get(kernel.0 as usize)
                        .ok_or("launch of a kernel id out of range")?;
                    if k.func.params.len() != args.len() {
                        return Err(format!(
                            "launch of `{}` with {} arguments for {} parameters",
                            k.func.name,
                            args.len(),
                            k.func.params.len()
                        ));
                    }
                    for (a, p) in args.iter().zip(&k.func.params) {
                        let at = &self.var(*a)?.ty;
                        let pt = &k.func.var(*p).ty;
                        if at != pt {
                            return Err(format!(
                                "launch of `{}`: argument `{}` has another type than its parameter",
                                k.func.name,
                                self.var(*a)?.name
                            ));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn index(&self, array: VarId, indices: &[Expr]) -> Result<(), String> {
        let v = self.var(array)?;
        match &v.ty {
            Type::Array { shape, .. } => {
                if shape.len() != indices.len() {
                    return Err(format!(
                        "`{}` has {} dimensions but is indexed with {}",
                        v.name,
                        shape.len(),
                        indices.len()
                    ));
                }
            }
            _ => return Err(format!("`{}` is indexed but is not an array", v.name)),
        }
        for i in indices {
            self.expr(i)?;
            if !i.ty.elem().map(|e| e.is_int()).unwrap_or(false) || i.ty.is_array() {
                return Err(format!("an index of `{}` is not an integer", v.name));
            }
        }
        Ok(())
    }

    fn expr(&self, e: &Expr) -> Result<(), String> {
        match &e.kind {
            ExprKind::Bool(_) | ExprKind::Int(_) | ExprKind::Float(_) => {
                if e.ty.is_array() || e.ty == Type::Void {
                    return Err("literal of non-scalar type".into());
                }
            }
            ExprKind::Var(id) => {
                let v = self.var(*id)?;
                if v.ty != e.ty {
                    return Err(format!(
                        "use of `{}` with a type that differs from its declaration",
                        v.name
                    ));
                }
            }
            ExprKind::Index { array, indices } => self.index(*array, indices)?,
            ExprKind::Unary { arg, .. } | ExprKind::Convert { arg } => self.expr(arg)?,
            ExprKind::Binary { op, lhs, rhs } => {
                self.expr(lhs)?;
                self.expr(rhs)?;
                if op.is_comparison() && e.ty != Type::Scalar(crate::types::ElemTy::Bool) {
                    return Err(format!(
                        "comparison `{}` does not have type bool",
                        op.symbol()
                    ));
                }
            }
            ExprKind::Select { cond, then, else_ } => {
                self.expr(cond)?;
                self.expr(then)?;
                self.expr(else_)?;
            }
            ExprKind::Math { func, args } => {
                if args.len() != func.arity() {
                    return Err(format!("`{}` with {} arguments", func.name(), args.len()));
                }
                for a in args {
                    self.expr(a)?;
                }
            }
            ExprKind::GpuIndex(g) => {
                if !self.kernel {
                    return Err(format!("`{}` outside a kernel", g.name()));
                }
                if e.ty != Type::Scalar(crate::types::ElemTy::I64) {
                    return Err(format!("`{}` is not of type i64", g.name()));
                }
            }
            ExprKind::WarpReduce { arg, .. } => {
                if !self.kernel {
                    return Err("warp reduction outside a kernel".into());
                }
                self.expr(arg)?;
                if arg.ty != e.ty || e.ty.is_array() {
                    return Err("warp reduction with a wrong type".into());
                }
            }
            ExprKind::Call { func, args } => {
                let h = self
                    .p
                    .helpers
                    .get(func.0 as usize)
                    .ok_or("call of a helper id out of range")?;
                if h.params.len() != args.len() {
                    return Err(format!("call of `{}` with a wrong argument count", h.name));
                }
                for a in args {
                    self.expr(a)?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::testutil::*;

    #[test]
    fn accepts_sum_rows() {
        assert_eq!(verify_program(&sum_rows_program()), Ok(()));
    }

    #[test]
    fn rejects_wrong_index_count() {
        let mut p = sum_rows_program();
        let x = VarId(0);
        let bad = store(x, vec![int(0)], float(1.0, crate::types::ElemTy::F32));
        p.host.body.push(bad);
        let e = verify_program(&p).unwrap_err();
        assert!(e.contains("has 2 dimensions but is indexed with 1"), "{e}");
    }

    #[test]
    fn gpu_nodes_only_in_kernels() {
        let mut p = sum_rows_program();
        p.host
            .body
            .push(crate::ir::Stmt::new(StmtKind::Barrier, sp()));
        let e = verify_program(&p).unwrap_err();
        assert!(e.contains("barrier outside a kernel"), "{e}");

        let mut p = sum_rows_program();
        let y = VarId(1);
        let tid = crate::ir::Expr::new(
            ExprKind::GpuIndex(crate::ir::GpuIndex::Lane),
            Type::Scalar(crate::types::ElemTy::I64),
            sp(),
        );
        p.host
            .body
            .push(store(y, vec![tid], float(0.0, crate::types::ElemTy::F32)));
        let e = verify_program(&p).unwrap_err();
        assert!(e.contains("`lane` outside a kernel"), "{e}");

        let mut p = sum_rows_program();
        p.host.add_var(crate::ir::Var {
            name: "shm".into(),
            ty: Type::Array {
                elem: crate::types::ElemTy::F32,
                shape: vec![4],
            },
            kind: VarKind::Shared,
            value: None,
            span: sp(),
        });
        let e = verify_program(&p).unwrap_err();
        assert!(e.contains("shared array `shm` outside a kernel"), "{e}");
    }

    #[test]
    fn rejects_bad_launch() {
        let mut p = sum_rows_program();
        p.host.body.push(crate::ir::Stmt::new(
            StmtKind::Launch {
                kernel: crate::ir::KernelId(3),
                args: vec![],
            },
            sp(),
        ));
        assert!(verify_program(&p).is_err());
    }
}
