//! Integer index expressions as affine forms `k + c1*a1 + c2*a2 + ...`
//! over opaque atoms (variables, array reads, `i // 2`, ...), for the
//! dependence questions of the passes: does an index move with a loop
//! counter, do two indices differ by a constant?

use super::range::wrap_of;
use super::visit::{same_expr, unspanned};
use super::{BinOp, Expr, ExprKind, UnOp, VarId};

/// `konst + sum(coef * atom)`; atoms are expressions with their source
/// spans cleared, each at most once, none with a zero coefficient.
#[derive(Clone, Debug, Default)]
pub struct Affine {
    pub konst: i128,
    pub terms: Vec<(Expr, i128)>,
}

impl Affine {
    fn constant(k: i128) -> Affine {
        Affine {
            konst: k,
            terms: vec![],
        }
    }

    fn atom(e: &Expr) -> Affine {
        Affine {
            konst: 0,
            terms: vec![(unspanned(e), 1)],
        }
    }

    /// `self + f * other`.
    fn add_scaled(mut self, other: &Affine, f: i128) -> Affine {
        self.konst += f * other.konst;
        for (a, c) in &other.terms {
            match self.terms.iter_mut().find(|(b, _)| same_expr(a, b)) {
                Some(t) => t.1 += f * c,
                None => self.terms.push((a.clone(), f * c)),
            }
        }
        self.terms.retain(|(_, c)| *c != 0);
        self
    }

    /// `self - other`.
    pub fn minus(&self, other: &Affine) -> Affine {
        self.clone().add_scaled(other, -1)
    }

    /// The coefficient of variable `v` as an atom of its own.
    pub fn coef_of(&self, v: VarId) -> i128 {
        self.terms
            .iter()
            .find(|(a, _)| matches!(a.kind, ExprKind::Var(x) if x == v))
            .map_or(0, |t| t.1)
    }

    /// The form without the term of variable `v`.
    pub fn without(&self, v: VarId) -> Affine {
        let mut r = self.clone();
        r.terms
            .retain(|(a, _)| !matches!(a.kind, ExprKind::Var(x) if x == v));
        r
    }

    /// The constant when there are no atoms.
    pub fn as_const(&self) -> Option<i128> {
        self.terms.is_empty().then_some(self.konst)
    }
}

/// The affine form of integer expression `e`. `def` gives the one value a
/// local holds where that is known (it is looked through, a few levels
/// deep); conversions between integer types and sema's wrap of negative
/// indices (`a < 0 ? a + n : a`) are looked through too.
pub fn affine(e: &Expr, def: &dyn Fn(VarId) -> Option<Expr>) -> Affine {
    form(e, def, 0)
}

fn form(e: &Expr, def: &dyn Fn(VarId) -> Option<Expr>, depth: u32) -> Affine {
    let is_int = |x: &Expr| x.ty.elem().is_some_and(|t| t.is_int());
    match &e.kind {
        ExprKind::Int(v) => Affine::constant(*v as i128),
        ExprKind::Var(v) if depth < 8 => match def(*v) {
            Some(d) => form(&d, def, depth + 1),
            None => Affine::atom(e),
        },
        ExprKind::Convert { arg } if is_int(e) && is_int(arg) => form(arg, def, depth),
        ExprKind::Unary { op: UnOp::Neg, arg } => {
            Affine::default().add_scaled(&form(arg, def, depth), -1)
        }
        ExprKind::Binary {
            op: op @ (BinOp::Add | BinOp::Sub),
            lhs,
            rhs,
        } => {
            let f = if *op == BinOp::Add { 1 } else { -1 };
            form(lhs, def, depth).add_scaled(&form(rhs, def, depth), f)
        }
        ExprKind::Binary {
            op: BinOp::Mul,
            lhs,
            rhs,
        } => {
            let (l, r) = (form(lhs, def, depth), form(rhs, def, depth));
            match (l.as_const(), r.as_const()) {
                (Some(k), _) => Affine::default().add_scaled(&r, k),
                (_, Some(k)) => Affine::default().add_scaled(&l, k),
                _ => Affine::atom(&substituted(e, def, depth)),
            }
        }
        ExprKind::Select { cond, then, else_ } if wrap_of(cond, then, else_).is_some() => {
            form(else_, def, depth)
        }
        _ => Affine::atom(&substituted(e, def, depth)),
    }
}

/// `e` with the locals `def` knows replaced by their values (so that
/// `b = x[i]; h[b]` and `h[x[i]]` have the same atom).
fn substituted(e: &Expr, def: &dyn Fn(VarId) -> Option<Expr>, depth: u32) -> Expr {
    let mut c = e.clone();
    fn go(e: &mut Expr, def: &dyn Fn(VarId) -> Option<Expr>, depth: u32) {
        if let ExprKind::Var(v) = e.kind {
            if depth < 8 {
                if let Some(d) = def(v) {
                    *e = d;
                    go(e, def, depth + 1);
                }
            }
            return;
        }
        e.children_mut().into_iter().for_each(|c| go(c, def, depth));
    }
    go(&mut c, def, depth);
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Span;
    use crate::ir::Type;
    use crate::types::ElemTy;

    fn v(i: u32) -> Expr {
        Expr::var(VarId(i), Type::Scalar(ElemTy::I64), Span::default())
    }
    fn k(x: i64) -> Expr {
        Expr::int(x, ElemTy::I64, Span::default())
    }
    fn b(op: BinOp, l: Expr, r: Expr) -> Expr {
        Expr::new(
            ExprKind::Binary {
                op,
                lhs: Box::new(l),
                rhs: Box::new(r),
            },
            Type::Scalar(ElemTy::I64),
            Span::default(),
        )
    }

    #[test]
    fn sums_and_scales() {
        // 2 * (i + 3) - i  ==  i + 6
        let e = b(
            BinOp::Sub,
            b(BinOp::Mul, k(2), b(BinOp::Add, v(0), k(3))),
            v(0),
        );
        let f = affine(&e, &|_| None);
        assert_eq!(f.konst, 6);
        assert_eq!(f.coef_of(VarId(0)), 1);
        // (i - 1) - i is the constant -1
        let d = affine(&b(BinOp::Sub, v(0), k(1)), &|_| None).minus(&affine(&v(0), &|_| None));
        assert_eq!(d.as_const(), Some(-1));
    }

    #[test]
    fn locals_are_looked_through_and_opaque_parts_are_atoms() {
        // k = i // 2 ; k + 1: the atom is `i // 2`, not `k`
        let half = b(BinOp::FloorDiv, v(0), k(2));
        let def = |x: VarId| (x == VarId(1)).then(|| half.clone());
        let f = affine(&b(BinOp::Add, v(1), k(1)), &def);
        assert_eq!(f.coef_of(VarId(0)), 0);
        assert_eq!(f.terms.len(), 1);
        assert!(same_expr(&f.terms[0].0, &half));
        // i * j is one atom
        let g = affine(&b(BinOp::Mul, v(0), v(2)), &|_| None);
        assert_eq!((g.coef_of(VarId(0)), g.terms.len()), (0, 1));
    }
}
