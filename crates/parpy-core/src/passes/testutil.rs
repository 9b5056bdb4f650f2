//! A small IR builder for the unit tests of the printer, the verifier, the
//! passes and the backends (the front end is tested on its own).

use crate::diag::Span;
use crate::ir::{
    BinOp, Expr, ExprKind, ForLoop, Function, LoopPar, Place, Program, ReduceOp, Reduction, Stmt,
    StmtKind, Type, Var, VarId, VarKind,
};
use crate::types::{ElemTy, ScalarValue};

pub struct FnBuilder {
    pub f: Function,
}

impl FnBuilder {
    pub fn new(name: &str) -> FnBuilder {
        FnBuilder {
            f: Function {
                name: name.to_string(),
                params: vec![],
                vars: vec![],
                body: vec![],
                ret: Type::Void,
                span: Span::default(),
            },
        }
    }
    fn add(&mut self, name: &str, ty: Type, kind: VarKind, value: Option<ScalarValue>) -> VarId {
        self.f.add_var(Var {
            name: name.to_string(),
            ty,
            kind,
            value,
            span: Span::default(),
        })
    }
    pub fn array(&mut self, name: &str, elem: ElemTy, shape: &[i64]) -> VarId {
        let id = self.add(
            name,
            Type::Array {
                elem,
                shape: shape.to_vec(),
            },
            VarKind::Param,
            None,
        );
        self.f.params.push(id);
        id
    }
    pub fn scalar(&mut self, name: &str, elem: ElemTy, value: Option<ScalarValue>) -> VarId {
        let id = self.add(name, Type::Scalar(elem), VarKind::Param, value);
        self.f.params.push(id);
        id
    }
    pub fn local(&mut self, name: &str, elem: ElemTy) -> VarId {
        self.add(name, Type::Scalar(elem), VarKind::Local, None)
    }
    pub fn index_var(&mut self, name: &str) -> VarId {
        self.add(name, Type::Scalar(ElemTy::I64), VarKind::LoopIndex, None)
    }
    pub fn push(&mut self, s: Stmt) {
        self.f.body.push(s);
    }
}

pub fn sp() -> Span {
    Span::default()
}

pub fn int(v: i64) -> Expr {
    Expr::int(v, ElemTy::I64, sp())
}

pub fn float(v: f64, ty: ElemTy) -> Expr {
    Expr::new(ExprKind::Float(v), Type::Scalar(ty), sp())
}

pub fn var_e(f: &Function, id: VarId) -> Expr {
    Expr::var(id, f.var(id).ty.clone(), sp())
}

pub fn idx(f: &Function, array: VarId, indices: Vec<Expr>) -> Expr {
    let elem = f.var(array).ty.elem().unwrap_or(ElemTy::F64);
    Expr::new(ExprKind::Index { array, indices }, Type::Scalar(elem), sp())
}

pub fn bin(op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
    crate::passes::util::bin(op, lhs, rhs)
}

/// A loop's parallel spec: `threads` threads, 1024 a block.
pub fn par(threads: i64) -> Option<LoopPar> {
    Some(LoopPar { threads, tpb: 1024 })
}

pub fn assign(dst: VarId, value: Expr) -> Stmt {
    Stmt::new(
        StmtKind::Assign {
            dst: Place::Var(dst),
            value,
        },
        sp(),
    )
}

pub fn store(array: VarId, indices: Vec<Expr>, value: Expr) -> Stmt {
    Stmt::new(
        StmtKind::Assign {
            dst: Place::Index { array, indices },
            value,
        },
        sp(),
    )
}

pub fn for_loop(var: VarId, lo: i64, hi: i64, labels: &[&str], body: Vec<Stmt>) -> ForLoop {
    ForLoop {
        var,
        lo: int(lo),
        hi: int(hi),
        step: 1,
        body,
        labels: labels.iter().map(|s| s.to_string()).collect(),
        par: None,
        reduction: None,
        wants_reduction: false,
        unroll: false,
    }
}

pub fn for_stmt(l: ForLoop) -> Stmt {
    Stmt::new(StmtKind::For(Box::new(l)), sp())
}

pub fn program(host: Function) -> Program {
    Program {
        host,
        kernels: vec![],
        helpers: vec![],
        bounds: None,
        externals: vec![],
    }
}

/// The tutorial's `sum_rows` as sema hands it over (N specialized to 100).
pub fn sum_rows_program() -> Program {
    let mut b = FnBuilder::new("sum_rows");
    let x = b.array("x", ElemTy::F32, &[100, 1024]);
    let y = b.array("y", ElemTy::F32, &[100]);
    b.scalar("N", ElemTy::I64, Some(ScalarValue::Int(100)));
    let i = b.index_var("i");
    let acc = b.local("acc", ElemTy::F32);
    let j = b.index_var("j");
    let f = &b.f;
    let inner_body = vec![assign(
        acc,
        bin(
            BinOp::Add,
            var_e(f, acc),
            idx(f, x, vec![var_e(f, i), var_e(f, j)]),
        ),
    )];
    let mut inner = for_loop(j, 0, 1024, &[], inner_body);
    inner.reduction = Some(Reduction::new(ReduceOp::Sum, acc));
    let outer_body = vec![
        assign(acc, float(0.0, ElemTy::F32)),
        for_stmt(inner),
        store(y, vec![var_e(f, i)], var_e(f, acc)),
    ];
    let outer = for_loop(i, 0, 100, &["outer"], outer_body);
    b.push(for_stmt(outer));
    program(b.f)
}

#[path = "../../tests/common/scratch.rs"]
mod scratch;
pub(crate) use scratch::Scratch;
