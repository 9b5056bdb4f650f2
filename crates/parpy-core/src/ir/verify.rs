//! IR verifier: structural checks that every pass must keep. A failure is a
//! bug in parpy (reported as `CompileError::Internal` with the IR dump).
//! Every broken invariant is reported, each with its location.

use std::fmt;

use super::visit::sub_blocks;
use super::{Block, Expr, ExprKind, Function, Place, Program, StmtKind, Type, VarId, VarKind};
use crate::diag::Span;

/// One broken invariant and where it is.
#[derive(Clone, PartialEq, Debug)]
pub struct VerifyError {
    /// `host `f``, `kernel `k``, `helper `h``.
    pub function: String,
    /// The statement: its index in its block, after the indices of the
    /// enclosing statements and of the sub-block holding it (a loop's body
    /// is 0; an if's then-branch 0, else-branch 1). Empty: the function's
    /// variables.
    pub path: Vec<usize>,
    /// The statement's span (default when the problem is a variable's).
    pub span: Span,
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "in {}", self.function)?;
        if !self.path.is_empty() {
            let path: Vec<String> = self.path.iter().map(|i| i.to_string()).collect();
            write!(
                f,
                ", statement {} (bytes {}..{})",
                path.join("."),
                self.span.lo,
                self.span.hi
            )?;
        }
        write!(f, ": {}", self.message)
    }
}

/// All the problems, one a line.
pub fn render(errors: &[VerifyError]) -> String {
    let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    lines.join("\n")
}

/// Checks the whole program; returns every problem found.
pub fn verify_program(p: &Program) -> Result<(), Vec<VerifyError>> {
    let mut errors = vec![];
    verify_function(
        p,
        &p.host,
        false,
        format!("host `{}`", p.host.name),
        &mut errors,
    );
    for k in &p.kernels {
        let name = format!("kernel `{}`", k.func.name);
        verify_function(p, &k.func, true, name, &mut errors);
    }
    for h in &p.helpers {
        verify_function(p, h, false, format!("helper `{}`", h.name), &mut errors);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

fn verify_function(
    p: &Program,
    f: &Function,
    kernel: bool,
    function: String,
    errors: &mut Vec<VerifyError>,
) {
    let mut var_error = |message: String| {
        errors.push(VerifyError {
            function: function.clone(),
            path: vec![],
            span: Span::default(),
            message,
        })
    };
    for &id in &f.params {
        match f.vars.get(id.0 as usize) {
            None => var_error("parameter id out of range".into()),
            Some(v) if v.kind != VarKind::Param => {
                var_error(format!("parameter `{}` is not of kind Param", v.name))
            }
            Some(_) => {}
        }
    }
    for (i, v) in f.vars.iter().enumerate() {
        if v.kind == VarKind::Param && !f.params.contains(&VarId(i as u32)) {
            var_error(format!(
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
            var_error(format!("{what} array `{}` outside a kernel", v.name));
        } else if !v.ty.is_array() {
            var_error(format!("{what} variable `{}` is not an array", v.name));
        }
    }
    let v = V { p, f, kernel };
    let mut path = vec![];
    v.block(&f.body, &mut path, &function, errors, Around::NoLoop);
}

/// The loop a `break` / `continue` acts on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Around {
    /// None (in the function or an `OnDevice` block, outside loops).
    NoLoop,
    Sequential,
    /// A parallel or reduction loop: no `break`.
    Parallel,
}

/// A `break` / `continue` has a loop to act on, and a `break` does not
/// stop a parallel loop.
fn jump(kind: &StmtKind, around: Around) -> Result<(), String> {
    match (kind, around) {
        (StmtKind::Break | StmtKind::Continue, Around::NoLoop) => {
            Err("`break` / `continue` outside a loop".into())
        }
        (StmtKind::Break, Around::Parallel) => {
            Err("`break` directly in a parallel or reduction loop".into())
        }
        _ => Ok(()),
    }
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

    /// Checks every statement of `b` and of the blocks nested in it.
    fn block(
        &self,
        b: &Block,
        path: &mut Vec<usize>,
        function: &str,
        errors: &mut Vec<VerifyError>,
        around: Around,
    ) {
        for (i, s) in b.iter().enumerate() {
            path.push(i);
            if let Err(message) = self.stmt(&s.kind).and_then(|()| jump(&s.kind, around)) {
                errors.push(VerifyError {
                    function: function.to_string(),
                    path: path.clone(),
                    span: s.span,
                    message,
                });
            }
            let inner = match &s.kind {
                StmtKind::For(l) if l.par.is_some() || l.reduction.is_some() => Around::Parallel,
                StmtKind::For(_) | StmtKind::While { .. } => Around::Sequential,
                StmtKind::OnDevice(_) => Around::NoLoop,
                _ => around,
            };
            for (j, sub) in sub_blocks(s).into_iter().enumerate() {
                path.push(j);
                self.block(sub, path, function, errors, inner);
                path.pop();
            }
            path.pop();
        }
    }

    /// Checks one statement itself (not the blocks nested in it).
    fn stmt(&self, kind: &StmtKind) -> Result<(), String> {
        {
            match kind {
                StmtKind::Assign { dst, value } => {
                    match (crate::ir::atomic_of(value), dst) {
                        (Some((_, v)), Place::Index { .. }) => {
                            self.expr(v)?;
                            if v.ty != value.ty {
                                return Err("atomic update with a value of another type".into());
                            }
                        }
                        _ => self.expr(value)?,
                    }
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
                }
                StmtKind::While { cond, .. } => {
                    self.expr(cond)?;
                }
                StmtKind::If { cond, .. } => {
                    self.expr(cond)?;
                }
                StmtKind::Return(e) => {
                    if let Some(e) = e {
                        self.expr(e)?;
                    }
                }
                StmtKind::Expr(e) => self.expr(e)?,
                StmtKind::OnDevice(_) | StmtKind::Break | StmtKind::Continue => {}
                StmtKind::Barrier => {
                    if !self.kernel {
                        return Err("barrier outside a kernel".into());
                    }
                }
                StmtKind::Callback(c) => {
                    if self.kernel {
                        return Err(format!("callback `{}` inside a kernel", c.name));
                    }
                    for e in c.exprs() {
                        self.expr(e)?;
                    }
                    for a in &c.args {
                        if let crate::ir::CallArg::Array { array, prefix } = a {
                            match &self.var(*array)?.ty {
                                Type::Array { shape, .. } if prefix.len() < shape.len() => {}
                                _ => {
                                    return Err(format!(
                                        "callback `{}` passes a view of `{}` that is not an array \
                                         with more than {} dimensions",
                                        c.name,
                                        self.var(*array)?.name,
                                        prefix.len()
                                    ))
                                }
                            }
                        }
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

    /// `r` names the bounds record: an int64 array of `RECORD_LEN`.
    fn record(&self, r: &Expr) -> Result<(), String> {
        let ok = match &r.kind {
            ExprKind::Var(v) => {
                let v = self.var(*v)?;
                v.ty == r.ty && r.ty == crate::ir::record_type()
            }
            _ => false,
        };
        if !ok {
            return Err(format!(
                "a check whose record is not an i64[{}] array",
                crate::ir::RECORD_LEN
            ));
        }
        Ok(())
    }

    /// The values an assertion's message names: at most `MAX_NOTED`
    /// scalars.
    fn noted(&self, values: &[Expr]) -> Result<(), String> {
        if values.len() > crate::ir::MAX_NOTED || values.iter().any(|v| v.ty.is_array()) {
            return Err(
                "an assertion noting more values than the record holds, or an array".into(),
            );
        }
        values.iter().try_for_each(|v| self.expr(v))
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
            ExprKind::Assert { cond, values, .. } => {
                self.expr(cond)?;
                if cond.ty != Type::Scalar(crate::types::ElemTy::Bool) || cond.ty != e.ty {
                    return Err("an `assert` of something other than a bool".into());
                }
                self.noted(values)?;
            }
            ExprKind::Note { record, values, .. } => {
                self.noted(values)?;
                self.record(record)?;
                if e.ty != Type::Scalar(crate::types::ElemTy::I64) {
                    return Err("a note of a failed assertion that is not an int64".into());
                }
            }
            ExprKind::CheckIndex {
                arg, size, record, ..
            } => {
                self.expr(arg)?;
                if arg.ty != e.ty || !arg.ty.elem().is_some_and(|t| t.is_int()) || *size < 1 {
                    return Err("an index check with a wrong type or size".into());
                }
                if let Some(r) = record {
                    self.record(r)?;
                }
            }
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
                // CUDA has no `isnan` / `isinf` / `isfinite` of a `__half`
                // (sema's `calls::predicate` reads a float16 as a float32)
                if func.is_predicate()
                    && args
                        .iter()
                        .any(|a| a.ty.elem() == Some(crate::types::ElemTy::F16))
                {
                    return Err(format!("`{}` of a float16", func.name()));
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
            ExprKind::CpuThreads => {
                if e.ty != Type::Scalar(crate::types::ElemTy::I64) {
                    return Err("`cpu_threads()` is not of type i64".into());
                }
            }
            ExprKind::Atomic { .. } => {
                return Err("atomic update other than as the value of an element store".into());
            }
            ExprKind::WarpReduce { arg, .. } | ExprKind::ClusterReduce { arg, .. } => {
                let what = match e.kind {
                    ExprKind::WarpReduce { .. } => "warp",
                    _ => "cluster",
                };
                if !self.kernel {
                    return Err(format!("{what} reduction outside a kernel"));
                }
                self.expr(arg)?;
                if arg.ty != e.ty || e.ty.is_array() {
                    return Err(format!("{what} reduction with a wrong type"));
                }
            }
            ExprKind::External { ext, args } => {
                let d = self
                    .p
                    .externals
                    .get(*ext as usize)
                    .ok_or("call of an external id out of range")?;
                if d.params.len() != args.len() {
                    return Err(format!("call of `{}` with a wrong argument count", d.name));
                }
                for e in crate::ir::call_arg_exprs(args) {
                    self.expr(e)?;
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

    /// `for i in 0..4 [par] { jump }` (or the jump alone, or inside an
    /// `OnDevice` block in the loop): the verifier's messages.
    fn jump_errors(kind: StmtKind, parallel: bool, in_loop: bool, on_device: bool) -> Vec<String> {
        let mut b = FnBuilder::new("f");
        let i = b.index_var("i");
        let mut s = crate::ir::Stmt::new(kind, sp());
        if on_device {
            s = crate::ir::Stmt::new(StmtKind::OnDevice(vec![s]), sp());
        }
        if in_loop {
            let mut l = for_loop(i, 0, 4, &["i"], vec![s]);
            if parallel {
                l.par = par(4);
            }
            s = for_stmt(l);
        }
        b.push(s);
        match verify_program(&program(b.f)) {
            Ok(()) => vec![],
            Err(e) => e.into_iter().map(|e| e.message).collect(),
        }
    }

    #[test]
    fn jumps_need_a_loop_and_a_break_a_sequential_one() {
        assert!(jump_errors(StmtKind::Break, false, true, false).is_empty());
        assert!(jump_errors(StmtKind::Continue, true, true, false).is_empty());
        assert_eq!(
            jump_errors(StmtKind::Break, true, true, false),
            ["`break` directly in a parallel or reduction loop"]
        );
        let outside = ["`break` / `continue` outside a loop"];
        assert_eq!(
            jump_errors(StmtKind::Continue, false, false, false),
            outside
        );
        // a `with parpy.gpu:` block is a kernel of its own
        assert_eq!(jump_errors(StmtKind::Break, false, true, true), outside);
    }

    #[test]
    fn rejects_wrong_index_count() {
        let mut p = sum_rows_program();
        let x = VarId(0);
        let bad = store(x, vec![int(0)], float(1.0, crate::types::ElemTy::F32));
        p.host.body.push(bad);
        let e = render(&verify_program(&p).unwrap_err());
        assert!(e.contains("has 2 dimensions but is indexed with 1"), "{e}");
    }

    #[test]
    fn gpu_nodes_only_in_kernels() {
        let mut p = sum_rows_program();
        p.host
            .body
            .push(crate::ir::Stmt::new(StmtKind::Barrier, sp()));
        let e = render(&verify_program(&p).unwrap_err());
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
        let e = render(&verify_program(&p).unwrap_err());
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
        let e = render(&verify_program(&p).unwrap_err());
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

    #[test]
    fn reports_every_broken_invariant_with_its_location() {
        let mut p = sum_rows_program();
        let n = p.host.body.len();
        let x = VarId(0);
        let bad = store(x, vec![int(0)], float(1.0, crate::types::ElemTy::F32));
        p.host.body.push(bad);
        p.host
            .body
            .push(crate::ir::Stmt::new(StmtKind::Barrier, sp()));
        let e = verify_program(&p).unwrap_err();
        assert_eq!(e.len(), 2, "{}", render(&e));
        assert_eq!(e[0].path, vec![n]);
        assert_eq!(e[1].path, vec![n + 1]);
        let text = render(&e);
        assert!(
            text.contains(&format!("in host `sum_rows`, statement {n} (bytes ")),
            "{text}"
        );
        assert!(text.contains("barrier outside a kernel"), "{text}");
    }
}
