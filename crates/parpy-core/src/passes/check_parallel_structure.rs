//! Checks that every top-level parallel loop nest (a loop with `par`, not
//! inside another parallel loop) has a consistent parallel structure: all
//! parallel loops at the same parallel depth of one nest ask for the same
//! number of threads. Each such nest becomes one kernel. Also: callbacks
//! (Python code) run in host code only, never inside a nest or a
//! `with parpy.gpu:` block.

use crate::diag::{Diagnostic, Span};
use crate::ir::{Block, ExprKind, ForLoop, Program, StmtKind};
use crate::options::Options;
use crate::passes::util::{host_external_in, sub_blocks};
use crate::signature::ExtTarget;

/// Returns all inconsistencies found, as errors.
pub fn run(p: &Program, options: &Options) -> Vec<Diagnostic> {
    let mut errors = vec![];
    find_nests(p, &p.host.body, options, &mut errors);
    for k in &p.kernels {
        find_nests(p, &k.func.body, options, &mut errors);
    }
    errors
}

fn find_nests(p: &Program, b: &Block, options: &Options, errors: &mut Vec<Diagnostic>) {
    for s in b {
        match &s.kind {
            StmtKind::For(l) if l.par.is_some() => {
                check_nest(l, s.span, options, errors);
                host_calls_inside(p, &l.body, s.span, "parallel loop", errors);
            }
            StmtKind::OnDevice(body) => {
                host_calls_inside(p, body, s.span, "`with parpy.gpu:` block", errors);
            }
            _ => {
                for body in sub_blocks(s) {
                    find_nests(p, body, options, errors);
                }
            }
        }
    }
}

/// Reports each call in `b` of what runs in host code only: callbacks and
/// `Target.Host` externals, also those a called helper reaches.
fn host_calls_inside(
    p: &Program,
    b: &Block,
    outer: Span,
    what: &str,
    errors: &mut Vec<Diagnostic>,
) {
    let outer_label = |d: Diagnostic| {
        d.also(
            outer.header(),
            format!("this {what} runs on the device (or in parallel)"),
        )
        .help("call it outside the parallel code, between the loops")
    };
    crate::ir::visit::walk_stmts(b, &mut |s| {
        if let StmtKind::Callback(c) = &s.kind {
            errors.push(outer_label(
                Diagnostic::error(format!(
                    "the callback `{}` is called inside a {what}, but it runs in host code",
                    c.name
                ))
                .at(s.span, "called here"),
            ));
        }
    });
    crate::ir::visit::walk_exprs(b, &mut |e| {
        let (decl, through) = match &e.kind {
            ExprKind::External { ext, .. } => match p.externals.get(*ext as usize) {
                Some(d) if d.target == ExtTarget::Host => (d, None),
                _ => return true,
            },
            ExprKind::Call { func, .. } => {
                let mut seen = vec![false; p.helpers.len()];
                match host_external_in(p, func.0 as usize, &mut seen) {
                    Some((d, at)) => (d, Some((&p.helpers[func.0 as usize].name, at))),
                    None => return true,
                }
            }
            _ => return true,
        };
        let name = &decl.name;
        let mut d = match through {
            None => Diagnostic::error(format!(
                "the host external function `{name}` is called inside a {what}, but it \
                 runs in host code"
            ))
            .at(e.span, "called here"),
            Some((helper, at)) => Diagnostic::error(format!(
                "the host external function `{name}` is called inside a {what} (through \
                 `{helper}`), but it runs in host code"
            ))
            .at(e.span, format!("`{helper}` calls `{name}`"))
            .also(at, "the host function is called here"),
        };
        // ParPy's words for the same rule (it allows only host functions
        // that return nothing in parallel code; parpy none)
        if decl.ret.is_some() {
            d = d.note(
                "Host function returning a non-void value cannot be called from parallel code",
            );
        }
        errors.push(outer_label(d));
        true
    });
}

/// One parallel loop of a nest, as the check sees it.
struct ParLoop {
    label: String,
    threads: i64,
    span: Span,
}

/// The label a diagnostic names a loop by: the one the spec maps, else
/// its first label.
pub fn loop_name(l: &ForLoop, options: &Options) -> String {
    crate::schedule::spec_label(&l.labels, options)
        .map(|(n, _)| n.to_string())
        .or_else(|| l.labels.first().cloned())
        .unwrap_or_else(|| "<unlabelled>".to_string())
}

/// levels[d] = the parallel loops at parallel depth d + 1 below `top`.
fn levels(top: &ForLoop, options: &Options) -> Vec<Vec<ParLoop>> {
    let mut levels: Vec<Vec<ParLoop>> = vec![];
    collect(&top.body, 0, options, &mut levels);
    levels
}

/// Do all parallel loops at each depth below `top` ask for the same number
/// of threads? (`split_parallel_nests` splits the nests where they don't.)
pub fn is_consistent(top: &ForLoop, options: &Options) -> bool {
    levels(top, options)
        .iter()
        .all(|l| l.iter().all(|p| p.threads == l[0].threads))
}

fn check_nest(top: &ForLoop, top_span: Span, options: &Options, errors: &mut Vec<Diagnostic>) {
    for level in &levels(top, options) {
        let Some(first) = level.first() else { continue };
        let mut reported: Vec<i64> = vec![];
        for other in &level[1..] {
            if other.threads == first.threads || reported.contains(&other.threads) {
                continue;
            }
            reported.push(other.threads);
            let (a, b) = (first, other);
            errors.push(
                Diagnostic::error(format!(
                    "inconsistent parallel structure: the parallel loops labelled `{}` (threads({})) and `{}` (threads({})) are at the same level of one parallel nest but ask for different numbers of threads",
                    a.label, a.threads, b.label, b.threads
                ))
                .at(b.span, format!("`{}` asks for threads({})", b.label, b.threads))
                .also(a.span, format!("`{}` asks for threads({})", a.label, a.threads))
                .also(top_span.header(), "in this parallel nest")
                .help(format!(
                    "make the thread counts equal, e.g. '{}': parpy.threads({}) and '{}': parpy.threads({})",
                    a.label, b.threads, b.label, b.threads
                ))
                .help("or split the code into two loop nests (two `for` loops over the outer range), so each becomes its own kernel"),
            );
        }
    }
}

fn collect(b: &Block, depth: usize, options: &Options, levels: &mut Vec<Vec<ParLoop>>) {
    for s in b {
        match &s.kind {
            StmtKind::For(l) => {
                if let Some(par) = &l.par {
                    if levels.len() <= depth {
                        levels.resize_with(depth + 1, Vec::new);
                    }
                    levels[depth].push(ParLoop {
                        label: loop_name(l, options),
                        threads: par.threads,
                        span: s.span,
                    });
                    collect(&l.body, depth + 1, options, levels);
                } else {
                    collect(&l.body, depth, options, levels);
                }
            }
            _ => {
                for body in sub_blocks(s) {
                    collect(body, depth, options, levels);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{BinOp, LoopPar};
    use crate::passes::testutil::*;
    use crate::types::ElemTy;

    /// normalize rows with two sibling inner loops `M1` and `M2`.
    fn two_inner(t1: i64, t2: i64) -> (Program, Options) {
        let mut b = FnBuilder::new("normalize_rows");
        let x = b.array("x", ElemTy::F32, &[10, 256]);
        let i = b.index_var("i");
        let j = b.index_var("j");
        let k = b.index_var("k");
        let f = &b.f;
        let body1 = vec![store(
            x,
            vec![var_e(f, i), var_e(f, j)],
            float(1.0, ElemTy::F32),
        )];
        let body2 = vec![store(
            x,
            vec![var_e(f, i), var_e(f, k)],
            bin(
                BinOp::Mul,
                idx(f, x, vec![var_e(f, i), var_e(f, k)]),
                float(2.0, ElemTy::F32),
            ),
        )];
        let par = |t| {
            Some(LoopPar {
                threads: t,
                tpb: 1024,
            })
        };
        let mut m1 = for_loop(j, 0, 256, &["M1"], body1);
        m1.par = par(t1);
        let mut m2 = for_loop(k, 0, 256, &["M2"], body2);
        m2.par = par(t2);
        let mut n = for_loop(i, 0, 10, &["N"], vec![for_stmt(m1), for_stmt(m2)]);
        n.par = par(10);
        b.push(for_stmt(n));
        (program(b.f), Options::default())
    }

    #[test]
    fn consistent_nest_passes() {
        let (p, o) = two_inner(256, 256);
        assert!(run(&p, &o).is_empty());
    }

    #[test]
    fn inconsistent_nest_is_reported() {
        let (p, o) = two_inner(128, 256);
        let e = run(&p, &o);
        assert_eq!(e.len(), 1);
        assert_eq!(
            e[0].message,
            "inconsistent parallel structure: the parallel loops labelled `M1` (threads(128)) and `M2` (threads(256)) are at the same level of one parallel nest but ask for different numbers of threads"
        );
        assert_eq!(e[0].labels.len(), 3);
        assert!(e[0].labels[0].primary);
        assert_eq!(
            e[0].help[0],
            "make the thread counts equal, e.g. 'M1': parpy.threads(256) and 'M2': parpy.threads(256)"
        );
    }

    #[test]
    fn levels_are_counted_through_sequential_loops() {
        // N { seq t { M1 } ; M2 } : M1 and M2 are both at depth 1.
        let (mut p, o) = two_inner(64, 32);
        if let StmtKind::For(n) = &mut p.host.body[0].kind {
            let first = n.body.remove(0);
            let t = p.host.vars.len() as u32;
            p.host.vars.push(p.host.vars[1].clone());
            let seq = for_loop(crate::ir::VarId(t), 0, 4, &[], vec![first]);
            n.body.insert(0, for_stmt(seq));
        }
        let e = run(&p, &o);
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0]
            .message
            .contains("`M1` (threads(64)) and `M2` (threads(32))"));
    }

    #[test]
    fn separate_nests_may_differ() {
        let (mut p, o) = two_inner(64, 64);
        let copy = p.host.body[0].clone();
        p.host.body.push(copy);
        if let StmtKind::For(n) = &mut p.host.body[1].kind {
            for s in &mut n.body {
                if let StmtKind::For(l) = &mut s.kind {
                    l.par = Some(LoopPar {
                        threads: 128,
                        tpb: 1024,
                    });
                }
            }
        }
        assert!(run(&p, &o).is_empty());
    }
}
