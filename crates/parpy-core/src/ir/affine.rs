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
        Affine::atom_owned(unspanned(e))
    }

    /// An atom already without source spans.
    fn atom_owned(e: Expr) -> Affine {
        Affine {
            konst: 0,
            terms: vec![(e, 1)],
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
pub fn affine<'d>(e: &Expr, def: &dyn Fn(VarId) -> Option<&'d Expr>) -> Affine {
    form(e, def, 0)
}

/// Whether `e` holds sema's wrap of a negative index around an expression
/// that reads one of `vars` (`np.roll`'s `j - 1`, negative for some
/// values of the counter `j`): `affine` assumes a wrapped index is not
/// negative, which such an index is, so its form is not the element's.
pub fn wraps_any(e: &Expr, vars: &[VarId]) -> bool {
    if let ExprKind::Select { cond, then, else_ } = &e.kind {
        if let Some((a, _)) = wrap_of(cond, then, else_) {
            if vars.iter().any(|v| super::visit::uses_var(a, *v)) {
                return true;
            }
        }
    }
    e.children().any(|c| wraps_any(c, vars))
}

fn form<'d>(e: &Expr, def: &dyn Fn(VarId) -> Option<&'d Expr>, depth: u32) -> Affine {
    let is_int = |x: &Expr| x.ty.elem().is_some_and(|t| t.is_int());
    match &e.kind {
        ExprKind::Int(v) => Affine::constant(*v as i128),
        ExprKind::Var(v) if depth < 8 => match def(*v) {
            Some(d) => form(d, def, depth + 1),
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
                _ => Affine::atom_owned(substituted(e, def, depth)),
            }
        }
        ExprKind::Select { cond, then, else_ } if wrap_of(cond, then, else_).is_some() => {
            form(else_, def, depth)
        }
        _ => Affine::atom_owned(substituted(e, def, depth)),
    }
}

/// `e` with the locals `def` knows replaced by their values (so that
/// `b = x[i]; h[b]` and `h[x[i]]` have the same atom), without source
/// spans.
fn substituted<'d>(e: &Expr, def: &dyn Fn(VarId) -> Option<&'d Expr>, depth: u32) -> Expr {
    let mut c = e.clone();
    fn go<'d>(e: &mut Expr, def: &dyn Fn(VarId) -> Option<&'d Expr>, depth: u32) {
        e.span = Default::default();
        if let ExprKind::Var(v) = e.kind {
            if depth < 8 {
                if let Some(d) = def(v) {
                    *e = d.clone();
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

/// The trailing indices of an access that split one integer `a` row-major
/// over the last dimensions of `shape` (sema's flattened slice nests:
/// `a // (d1 * d2)`, `(a // d2) % d1`, `a % d2`): the position `m` where
/// they start (at least two of them) and `a`. Their row-major offset is `a`
/// itself, for every integer `a`: with Python's floor `//` and `%`,
/// `a == (a // c) * c + a % c`, applied from the innermost dimension out.
pub fn flattened_indices<'a>(indices: &'a [Expr], shape: &[i64]) -> Option<(usize, &'a Expr)> {
    let n = indices.len();
    if n < 2 || shape.len() != n {
        return None;
    }
    let lit = |e: &Expr| match e.kind {
        ExprKind::Int(v) => Some(v),
        _ => None,
    };
    let bin = |e: &'a Expr, op: BinOp| match &e.kind {
        ExprKind::Binary { op: o, lhs, rhs } if *o == op => Some((&**lhs, lit(rhs)?)),
        _ => None,
    };
    // `a // stride` (or `a` when the stride is 1)
    let quotient = |e: &'a Expr, stride: i64| {
        if stride == 1 {
            Some(e)
        } else {
            bin(e, BinOp::FloorDiv).and_then(|(a, c)| (c == stride).then_some(a))
        }
    };
    // the innermost index: `a % d`
    let (a, d) = bin(&indices[n - 1], BinOp::Mod)?;
    if d != shape[n - 1] || d <= 0 {
        return None;
    }
    let mut stride = d;
    let mut m = n - 1;
    while m > 0 {
        let k = m - 1;
        let ix = &indices[k];
        // a middle index `(a // stride) % shape[k]`, or the outermost of
        // the run `a // stride`
        let middle = bin(ix, BinOp::Mod)
            .filter(|(_, c)| *c == shape[k])
            .and_then(|(q, _)| quotient(q, stride))
            .filter(|x| same_expr(x, a));
        if middle.is_some() {
            stride = stride.checked_mul(shape[k])?;
            m = k;
            continue;
        }
        if quotient(ix, stride).is_some_and(|x| same_expr(x, a)) {
            return Some((k, a));
        }
        break;
    }
    None
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
        let def = |x: VarId| (x == VarId(1)).then_some(&half);
        let f = affine(&b(BinOp::Add, v(1), k(1)), &def);
        assert_eq!(f.coef_of(VarId(0)), 0);
        assert_eq!(f.terms.len(), 1);
        assert!(same_expr(&f.terms[0].0, &half));
        // i * j is one atom
        let g = affine(&b(BinOp::Mul, v(0), v(2)), &|_| None);
        assert_eq!((g.coef_of(VarId(0)), g.terms.len()), (0, 1));
    }

    #[test]
    fn flattened_indices_add_up_to_their_source() {
        // a // 12, (a // 4) % 3, a % 4 over shape (5, 3, 4): the offset is a
        let a = v(0);
        let idx = vec![
            b(BinOp::FloorDiv, a.clone(), k(12)),
            b(BinOp::Mod, b(BinOp::FloorDiv, a.clone(), k(4)), k(3)),
            b(BinOp::Mod, a.clone(), k(4)),
        ];
        let (m, src) = flattened_indices(&idx, &[5, 3, 4]).unwrap();
        assert_eq!(m, 0);
        assert!(same_expr(src, &a));
        // i, a // 4, a % 4: the run starts at 1
        let idx2 = vec![v(1), b(BinOp::FloorDiv, a.clone(), k(4)), idx[2].clone()];
        assert_eq!(flattened_indices(&idx2, &[5, 3, 4]).map(|r| r.0), Some(1));
        // a divisor that is not the stride, another dividend, a short run:
        // nothing
        let bad = vec![
            b(BinOp::FloorDiv, a.clone(), k(5)),
            b(BinOp::Mod, a.clone(), k(4)),
        ];
        assert!(flattened_indices(&bad, &[5, 4]).is_none());
        let other = vec![
            b(BinOp::FloorDiv, v(2), k(4)),
            b(BinOp::Mod, a.clone(), k(4)),
        ];
        assert!(flattened_indices(&other, &[5, 4]).is_none());
        assert!(flattened_indices(&[b(BinOp::Mod, a, k(4))], &[4]).is_none());
        // the identity itself, with Python's floor semantics, negatives too
        for x in -50i64..50 {
            let (q, r) = (x.div_euclid(12), x.rem_euclid(12));
            let (q2, r2) = ((x.div_euclid(4)).rem_euclid(3), x.rem_euclid(4));
            assert_eq!(q * 12 + q2 * 4 + r2, x);
            assert_eq!(q * 12 + r, x);
        }
    }
}
