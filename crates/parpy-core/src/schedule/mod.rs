//! The parallel specification applied to labelled loops.
//!
//! For each `for` loop with a label that the spec maps, the loop gets
//! `par = LoopPar { threads, tpb }` and `wants_reduction` from the spec.
//! Errors: two labels of one loop mapped to different specs, a thread count
//! below one, a `break` of a loop made parallel (its iterations run at the
//! same time: none can stop the ones after it). A specification none of whose labels matches a statement is
//! a warning (a shared specification may name labels a function lacks).

use std::collections::BTreeSet;

use crate::diag::{Diagnostic, Span};
use crate::ir::{Block, ForLoop, Function, LoopPar, Program, StmtKind};
use crate::options::{Options, ParSpec};

/// The default threads per block when the spec does not give one.
pub const DEFAULT_TPB: i64 = 1024;

/// Applies the spec to every function of the program. Returns the warnings,
/// or the errors (all of them).
pub fn apply(p: &mut Program, options: &Options) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
    let mut st = State {
        options,
        seen: BTreeSet::new(),
        errors: vec![],
    };
    st.block(&mut p.host.body);
    for k in &mut p.kernels {
        st.block(&mut k.func.body);
    }
    for h in &mut p.helpers {
        st.block(&mut h.body);
    }
    for (label, spec) in &options.parallelize {
        if spec.threads < 1 {
            st.errors.push(
                Diagnostic::error(format!(
                    "the parallel specification asks for threads({}) for label `{label}`",
                    spec.threads
                ))
                .help("the number of threads must be at least 1"),
            );
        }
        if let Some(tpb) = spec.tpb {
            if tpb < 1 {
                st.errors.push(
                    Diagnostic::error(format!(
                        "the parallel specification asks for tpb({tpb}) for label `{label}`"
                    ))
                    .help("the number of threads per block must be at least 1"),
                );
            }
        }
    }
    if !st.errors.is_empty() {
        return Err(st.errors);
    }
    // One specification is often shared by several functions (ParPy's
    // programs pass one dict with `N`, `M`, `K` to all of them), so labels a
    // function lacks are expected; only a specification that matches nothing
    // in the function and its callees is a warning (one per label). A
    // function without any label whose device code is written as `with
    // parpy.gpu:` blocks is sequential by design: no specification can
    // apply to it, and one passed along with the others is no mistake.
    // A label that differs from a used one only in case or underscores is
    // a likely typo and warns too.
    let mut warnings = vec![];
    let all = labels_of_program(p);
    let sequential_by_design = all.is_empty() && has_gpu_block(p);
    let nothing_used =
        !sequential_by_design && options.parallelize.keys().all(|l| !st.seen.contains(l));
    let fold = |l: &str| l.replace('_', "").to_lowercase();
    for label in options.parallelize.keys() {
        let typo = || {
            all.iter().any(|a| {
                a != label && fold(a) == fold(label) && !options.parallelize.contains_key(a)
            })
        };
        if !st.seen.contains(label) && (nothing_used || typo()) {
            warnings.push(unused_label(label, &p.host, &all));
        }
    }
    Ok(warnings)
}

fn unused_label(label: &str, host: &Function, all: &BTreeSet<String>) -> Diagnostic {
    let mut d = Diagnostic::warning(format!(
        "label `{label}` in the parallel specification matches no statement"
    ));
    if crate::diag::source(host.span.file).is_some() && host.span.hi > host.span.lo {
        d = d.at(
            host.span.header(),
            format!("no statement of `{}` is labelled `{label}`", host.name),
        );
    }
    if all.is_empty() {
        d.help(format!(
            "`{}` has no labels; mark a loop with parpy.label('{label}') right above it",
            host.name
        ))
    } else {
        let names: Vec<String> = all.iter().map(|l| format!("`{l}`")).collect();
        d.help(format!(
            "the labels in `{}` are {}",
            host.name,
            names.join(", ")
        ))
    }
}

/// Does the program (entry or helper) hold a `with parpy.gpu:` block?
fn has_gpu_block(p: &Program) -> bool {
    let mut found = false;
    let mut look = |s: &crate::ir::Stmt| found |= matches!(s.kind, StmtKind::OnDevice(_));
    crate::ir::visit::walk_stmts(&p.host.body, &mut look);
    for h in &p.helpers {
        crate::ir::visit::walk_stmts(&h.body, &mut look);
    }
    found
}

/// Every label attached to a loop anywhere in the program (sorted).
pub fn labels_of_program(p: &Program) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    labels_of_block(&p.host.body, &mut out);
    for k in &p.kernels {
        labels_of_block(&k.func.body, &mut out);
    }
    for h in &p.helpers {
        labels_of_block(&h.body, &mut out);
    }
    out
}

fn labels_of_block(b: &Block, out: &mut BTreeSet<String>) {
    for s in b {
        match &s.kind {
            StmtKind::For(l) => {
                out.extend(l.labels.iter().cloned());
                labels_of_block(&l.body, out);
            }
            StmtKind::While { body, .. } | StmtKind::OnDevice(body) => labels_of_block(body, out),
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                labels_of_block(then_body, out);
                labels_of_block(else_body, out);
            }
            _ => {}
        }
    }
}

/// The first label of `labels` that the spec maps, with its spec.
pub fn spec_label<'a>(labels: &'a [String], options: &'a Options) -> Option<(&'a str, ParSpec)> {
    labels
        .iter()
        .find_map(|l| options.parallelize.get(l).map(|s| (l.as_str(), *s)))
}

/// One error per `break` of the loop `l` made parallel under `name`
/// (Python's `break` stops the iterations after it), and per `return`
/// anywhere inside it.
fn parallel_breaks(l: &ForLoop, name: &str, span: Span) -> Vec<Diagnostic> {
    let what = if l.wants_reduction {
        "parallel reduction loop"
    } else {
        "parallel loop"
    };
    let returns = crate::ir::visit::returns(&l.body).into_iter().map(|s| {
        Diagnostic::error(format!("`return` cannot stop the {what} `{name}`"))
            .at(s.span, "returns here")
            .also(span.header(), format!("{what} `{name}`"))
            .note(
                "the iterations of a parallel loop run at the same time, so one of them \
                 cannot stop the others and the rest of the function as Python's `return` does",
            )
            .help(format!(
                "run `{name}` sequentially (leave it out of the parallel spec), or test the \
                 condition before the loop and return there"
            ))
    });
    crate::ir::visit::loop_exits(&l.body)
        .into_iter()
        .filter(|s| matches!(s.kind, StmtKind::Break))
        .map(|s| {
            Diagnostic::error(format!("`break` cannot stop the {what} `{name}`"))
                .at(s.span, "stops the loop here")
                .also(span.header(), format!("{what} `{name}`"))
                .note(
                    "the iterations of a parallel loop run at the same time, so one of them \
                     cannot stop the iterations after it as Python's `break` does",
                )
                .help(format!(
                    "run `{name}` sequentially (leave it out of the parallel spec), or use \
                     `continue` to skip the rest of one iteration"
                ))
        })
        .chain(returns)
        .collect()
}

struct State<'a> {
    options: &'a Options,
    seen: BTreeSet<String>,
    errors: Vec<Diagnostic>,
}

impl State<'_> {
    fn block(&mut self, b: &mut Block) {
        for s in b.iter_mut() {
            let span = s.span;
            match &mut s.kind {
                StmtKind::For(l) => {
                    let mut chosen: Option<(&str, ParSpec)> = None;
                    for label in &l.labels {
                        let Some(spec) = self.options.parallelize.get(label) else {
                            continue;
                        };
                        self.seen.insert(label.clone());
                        match chosen {
                            None => chosen = Some((label, *spec)),
                            Some((first, fs)) if fs != *spec => self.errors.push(
                                Diagnostic::error(format!(
                                    "the labels `{first}` and `{label}` of one loop are mapped to different parallel specifications"
                                ))
                                .at(span, "this loop has both labels")
                                .help(format!(
                                    "give `{first}` and `{label}` the same specification, or remove one of them from the spec"
                                )),
                            ),
                            Some(_) => {}
                        }
                    }
                    if let Some((label, spec)) = chosen {
                        let name = label.to_string();
                        l.par = Some(LoopPar {
                            threads: spec.threads,
                            tpb: spec.tpb.unwrap_or(DEFAULT_TPB),
                        });
                        l.wants_reduction = spec.reduction;
                        self.errors.extend(parallel_breaks(l, &name, span));
                    }
                    self.block(&mut l.body);
                }
                StmtKind::While { body, .. } | StmtKind::OnDevice(body) => self.block(body),
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    self.block(then_body);
                    self.block(else_body);
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::print::program_to_string;
    use crate::passes::testutil::*;

    fn spec(threads: i64) -> ParSpec {
        ParSpec {
            threads,
            tpb: None,
            reduction: false,
        }
    }

    #[test]
    fn marks_labelled_loop() {
        let mut p = sum_rows_program();
        let mut o = Options::default();
        o.parallelize.insert("outer".into(), spec(100));
        let w = apply(&mut p, &o).unwrap();
        assert!(w.is_empty());
        let text = program_to_string(&p);
        assert!(
            text.contains("for i in 0..100 step 1 [outer] par(threads=100, tpb=1024) {"),
            "{text}"
        );
    }

    #[test]
    fn unused_label_warns_with_the_labels() {
        let mut p = sum_rows_program();
        let mut o = Options::default();
        o.parallelize.insert("outre".into(), spec(100));
        let w = apply(&mut p, &o).unwrap();
        assert_eq!(w.len(), 1);
        assert!(!w[0].is_error());
        assert_eq!(
            w[0].message,
            "label `outre` in the parallel specification matches no statement"
        );
        assert_eq!(
            w[0].help,
            vec!["the labels in `sum_rows` are `outer`".to_string()]
        );
    }

    #[test]
    fn spec_is_quiet_for_a_function_of_gpu_blocks_without_labels() {
        // `with parpy.gpu:` code and no label: sequential by design
        let mut p = sum_rows_program();
        let body = std::mem::take(&mut p.host.body);
        let span = p.host.span;
        p.host.body = vec![crate::ir::Stmt::new(StmtKind::OnDevice(body), span)];
        if let StmtKind::OnDevice(b) = &mut p.host.body[0].kind {
            if let StmtKind::For(l) = &mut b[0].kind {
                l.labels.clear();
            }
        }
        let mut o = Options::default();
        o.parallelize.insert("N".into(), spec(100));
        assert!(apply(&mut p, &o).unwrap().is_empty());
        // the same loop without labels and outside a gpu block warns
        let mut p = sum_rows_program();
        if let StmtKind::For(l) = &mut p.host.body[0].kind {
            l.labels.clear();
        }
        assert_eq!(apply(&mut p, &o).unwrap().len(), 1);
    }

    #[test]
    fn zero_threads_is_an_error() {
        let mut p = sum_rows_program();
        let mut o = Options::default();
        o.parallelize.insert("outer".into(), spec(0));
        let e = apply(&mut p, &o).unwrap_err();
        assert!(e[0].message.contains("threads(0)"));
    }

    #[test]
    fn two_labels_with_different_specs() {
        let mut p = sum_rows_program();
        if let StmtKind::For(l) = &mut p.host.body[0].kind {
            l.labels.push("other".into());
        }
        let mut o = Options::default();
        o.parallelize.insert("outer".into(), spec(100));
        o.parallelize.insert("other".into(), spec(64));
        let e = apply(&mut p, &o).unwrap_err();
        assert!(
            e[0].message.contains("`outer` and `other`"),
            "{}",
            e[0].message
        );
    }
}
