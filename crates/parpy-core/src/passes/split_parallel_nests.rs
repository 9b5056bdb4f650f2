//! Before `check_parallel_structure`: a top-level parallel nest whose
//! sibling parallel loops ask for different thread counts is split into one
//! nest (one kernel) per inner loop when that only distributes loops: every
//! parallel loop on the way holds nothing but parallel loops (ParPy accepts
//! this; `N { M { K1 }; M { K2 } }` becomes `N { M { K1 } }; N { M { K2 } }`).
//! The iterations of a parallel loop do not touch each other's elements
//! (the user's contract), so running every first part before every second
//! part gives the same result. A nest with other statements between its
//! loops (a local carrying a value from one loop to the next), a reduction
//! loop on the way, or bounds that read arrays stays as it is, and
//! `check_parallel_structure` reports it.

use crate::diag::{Diagnostic, Span};
use crate::ir::visit::sub_blocks_mut;
use crate::ir::{Block, Expr, ExprKind, ForLoop, Program, Stmt, StmtKind};
use crate::options::Options;
use crate::passes::check_parallel_structure::is_consistent;

pub fn run(p: &mut Program, options: &Options) -> Vec<Diagnostic> {
    split_block(&mut p.host.body, options);
    vec![]
}

fn split_block(b: &mut Block, options: &Options) {
    for mut s in std::mem::take(b) {
        match &s.kind {
            StmtKind::For(l) if l.par.is_some() => match distribute(l, s.span, options) {
                Some(parts) => b.extend(parts),
                None => b.push(s),
            },
            _ => {
                for body in sub_blocks_mut(&mut s) {
                    split_block(body, options);
                }
                b.push(s);
            }
        }
    }
}

/// A parallel loop, not a reduction, whose bounds read no array (they are
/// evaluated once per part after the split).
fn distributable(l: &ForLoop) -> bool {
    fn reads_array(e: &Expr) -> bool {
        matches!(e.kind, ExprKind::Index { .. }) || e.children().any(reads_array)
    }
    l.par.is_some()
        && l.reduction.is_none()
        && !l.wants_reduction
        && !reads_array(&l.lo)
        && !reads_array(&l.hi)
}

/// `l`, an inconsistent parallel loop holding only parallel loops, as
/// copies of `l`, each holding a run of consecutive parts of its body that
/// agree on thread counts (an inconsistent inner loop distributed the same
/// way where it can be). `None` when `l` is consistent or cannot be
/// distributed.
fn distribute(l: &ForLoop, span: Span, options: &Options) -> Option<Vec<Stmt>> {
    if is_consistent(l, options) || !distributable(l) || l.body.is_empty() {
        return None;
    }
    let mut parts = vec![];
    for s in &l.body {
        let StmtKind::For(inner) = &s.kind else {
            return None;
        };
        if !distributable(inner) {
            return None;
        }
        parts.extend(distribute(inner, s.span, options).unwrap_or_else(|| vec![s.clone()]));
    }
    let template = ForLoop {
        body: vec![],
        ..l.clone()
    };
    let mut copies: Vec<ForLoop> = vec![];
    for mut part in parts {
        if let Some(last) = copies.last_mut() {
            last.body.push(part);
            if is_consistent(last, options) {
                continue;
            }
            part = last.body.pop().expect("just pushed");
        }
        copies.push(ForLoop {
            body: vec![part],
            ..template.clone()
        });
    }
    Some(
        copies
            .into_iter()
            .map(|copy| Stmt::new(StmtKind::For(Box::new(copy)), span))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::print::program_to_string;
    use crate::ir::BinOp;
    use crate::passes::testutil::*;
    use crate::types::ElemTy;

    /// `N(10) { M(t1) { x[i, j] = 1 }; M(t2) { x[i, k] *= 2 } }`, with
    /// `carry` a local assigned between the two inner loops.
    fn nest(t1: i64, t2: i64, carry: bool) -> Program {
        let mut b = FnBuilder::new("f");
        let x = b.array("x", ElemTy::F32, &[10, 256]);
        let i = b.index_var("i");
        let j = b.index_var("j");
        let k = b.index_var("k");
        let s = b.local("s", ElemTy::F32);
        let f = &b.f;
        let one = vec![store(
            x,
            vec![var_e(f, i), var_e(f, j)],
            float(1.0, ElemTy::F32),
        )];
        let two = vec![store(
            x,
            vec![var_e(f, i), var_e(f, k)],
            bin(
                BinOp::Mul,
                idx(f, x, vec![var_e(f, i), var_e(f, k)]),
                float(2.0, ElemTy::F32),
            ),
        )];
        let mut m1 = for_loop(j, 0, 256, &["M1"], one);
        m1.par = par(t1);
        let mut m2 = for_loop(k, 0, 256, &["M2"], two);
        m2.par = par(t2);
        let mut body = vec![for_stmt(m1), for_stmt(m2)];
        if carry {
            body.insert(1, assign(s, float(0.0, ElemTy::F32)));
        }
        let mut n = for_loop(i, 0, 10, &["N"], body);
        n.par = par(10);
        b.push(for_stmt(n));
        program(b.f)
    }

    #[test]
    fn different_counts_split_into_one_nest_per_loop() {
        let mut p = nest(128, 256, false);
        assert!(run(&mut p, &Options::default()).is_empty());
        assert_eq!(p.host.body.len(), 2, "{}", program_to_string(&p));
        for (s, label) in p.host.body.iter().zip(["M1", "M2"]) {
            let StmtKind::For(n) = &s.kind else { panic!() };
            assert_eq!(n.labels, ["N"]);
            let StmtKind::For(m) = &n.body[0].kind else {
                panic!()
            };
            assert_eq!((n.body.len(), m.labels[0].as_str()), (1, label));
        }
    }

    #[test]
    fn equal_counts_and_carried_values_stay_whole() {
        for (t2, carry) in [(128, false), (256, true)] {
            let mut p = nest(128, t2, carry);
            let before = program_to_string(&p);
            run(&mut p, &Options::default());
            assert_eq!(program_to_string(&p), before);
        }
    }

    #[test]
    fn bounds_reading_an_array_stay_whole() {
        let mut p = nest(128, 256, false);
        let x = p.host.params[0];
        let read = idx(&p.host, x, vec![int(0), int(0)]);
        let StmtKind::For(n) = &mut p.host.body[0].kind else {
            panic!()
        };
        n.hi = Expr::new(
            ExprKind::Convert {
                arg: Box::new(read),
            },
            crate::ir::Type::Scalar(ElemTy::I64),
            sp(),
        );
        run(&mut p, &Options::default());
        assert_eq!(p.host.body.len(), 1);
    }
}
