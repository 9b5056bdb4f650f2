//! Arrays joined from parts: `np.concatenate((a, b, ...))` (along axis 0),
//! `np.hstack` of 1-D parts, `np.append(a, v)` of a 1-D `a`, `np.tile(a,
//! n)` of a 1-D `a` (`n` copies, one after the other), `np.stack(parts,
//! axis)`, `np.vstack` (1-D parts stacked, others concatenated),
//! `np.column_stack` of 1-D parts (stacked along axis 1) and `np.repeat(a,
//! n)` of a 1-D `a` (each element `n` times). NumPy's new array, made by
//! the slice assignment of its parts, each into its place in the target:
//! a run (`y[i, :] = np.concatenate((s[4:], s[:4]))` is `y[i, :][0:4] =
//! s[4:]` then `y[i, :][4:8] = s[:4]`), an index along the stacking axis
//! (`y[i, :, :] = np.stack((a, b), axis=1)` is `y[i, :, :][:, 0] = a` then
//! `[:, 1] = b`), or every `n`-th element (`np.repeat(a, 2)`: `[0::2] = a`,
//! `[1::2] = a`). A part that reads the target's array is joined into a
//! local array first, then copied, as NumPy makes the whole new array
//! before it stores it. Read anywhere else, `hoist.rs` names it first (a
//! local array). Its type is NumPy's: the parts' types promoted, a list of
//! Python floats float64.

use crate::diag::{Diagnostic, Span};
use crate::ir::{ElemTy, Stmt};
use crate::resolve::Resolved;
use crate::syntax::ast::{self, Expr, ExprKind};

use super::types::promote_strong;
use super::Lowerer;

/// An array joined from parts, as its call gives it.
pub(super) struct Joined {
    /// `np.concatenate`, `np.stack`, ... (for messages)
    pub name: String,
    pub parts: Vec<Expr>,
    pub how: Join,
}

/// Where the parts of a joined array go, as the call says it.
pub(super) enum Join {
    /// One after the other along the first axis.
    Runs,
    /// Each at its index along a new axis (`None`: 0).
    Stack(Option<Expr>),
    /// The one part this many times, one after the other (`np.tile`).
    Tile(Expr),
    /// Each element of the one part this many times (`np.repeat`).
    Every(Expr),
    /// `np.hstack` or `np.column_stack` of parts of more than one
    /// dimension: along axis 1.
    Columns,
    /// `np.gradient`'s three runs along axis 0 (`gradient.rs`; the parts
    /// are the arrays it reads).
    Gradient,
}

/// Where the parts of a joined array go, known when compiling.
enum Placement {
    /// Runs along the first axis, of these parts (a tile's copies).
    Runs(Vec<Expr>),
    /// Each part at its index along this axis of the result.
    Stack(usize),
    /// Part 0's elements each this many times.
    Every(i64),
}

impl Lowerer<'_, '_> {
    /// The array `e` joins from parts (see the module doc); `None` for
    /// other values.
    pub(super) fn concatenation_of(&self, e: &Expr) -> Option<Joined> {
        let ExprKind::Call {
            func,
            args,
            keywords,
        } = &e.kind
        else {
            return None;
        };
        let path = func.dotted_path().filter(|_| !self.is_local_root(func))?;
        let Resolved::Allocates(what) = self.resolve_path(&path) else {
            return None;
        };
        let what = what.strip_prefix("numpy.")?;
        let keyword = |n: &str| {
            keywords
                .iter()
                .find(|k| k.name == n)
                .map(|k| k.value.clone())
        };
        let listed = |parts: &Expr| match (&parts.kind, parts.list_items()) {
            (ExprKind::Tuple(items), _) => Some(items.clone()),
            (_, Some(items)) => Some(items.to_vec()),
            _ => None,
        };
        let (parts, how) = match (what, args.as_slice()) {
            ("append", [a, v]) => {
                let v = match self.rank(v) {
                    0 => ast::Expr::list(vec![v.clone()], v.span),
                    _ => v.clone(),
                };
                (vec![a.clone(), v], Join::Runs)
            }
            ("concatenate", [parts, ..]) => (listed(parts)?, Join::Runs),
            // (of 2-D parts NumPy's `hstack` joins along axis 1)
            ("hstack", [parts, ..]) => {
                let parts = listed(parts)?;
                let how = match parts.iter().all(|p| self.rank(p) <= 1) {
                    true => Join::Runs,
                    false => Join::Columns,
                };
                (parts, how)
            }
            ("stack", [parts, rest @ ..]) => (
                listed(parts)?,
                Join::Stack(rest.first().cloned().or_else(|| keyword("axis"))),
            ),
            ("vstack" | "column_stack", [parts, ..]) => {
                let parts = listed(parts)?;
                let flat = parts.iter().all(|p| self.rank(p) <= 1);
                let how = match (what, flat) {
                    (_, false) if what == "vstack" => Join::Runs,
                    (_, false) => Join::Columns,
                    ("vstack", true) => Join::Stack(None),
                    _ => Join::Stack(Some(ast::Expr::int(1, e.span))),
                };
                (parts, how)
            }
            ("tile", [a, n]) => (vec![a.clone()], Join::Tile(n.clone())),
            ("repeat", [a, n, ..]) => (vec![a.clone()], Join::Every(n.clone())),
            ("gradient", [_, ..]) => (args.clone(), Join::Gradient),
            _ => return None,
        };
        let name = format!("np.{what}");
        Some(Joined { name, parts, how })
    }

    /// Where `joined`'s parts go (`None` after an error): its counts and
    /// axis known when compiling, its parts of one dimension where it
    /// needs them.
    fn placement(&mut self, value: &Expr, joined: &Joined) -> Option<Placement> {
        if let Join::Gradient = joined.how {
            return Some(Placement::Runs(self.gradient_parts(value)?));
        }
        self.concatenation_args(value, joined)?;
        let one_dim = |this: &mut Self, p: &Expr| -> Option<()> {
            if this.rank(p) == 1 {
                return Some(());
            }
            this.error(
                Diagnostic::error(format!(
                    "`{}` takes an array of one dimension in parpy functions",
                    joined.name
                ))
                .at(p.span, "not 1-D")
                .help("join the rows one at a time (`y[i, :] = ...` in a loop over `i`)"),
            );
            None
        };
        match &joined.how {
            Join::Runs => Some(Placement::Runs(joined.parts.clone())),
            Join::Stack(axis) => {
                let nd = self.shape_of(joined.parts.first()?, &joined.name)?.0.len() as i64;
                let axis = match axis {
                    Some(a) => self.known_count_of(&joined.name, "`axis`", a, -(nd + 1))?,
                    None => 0,
                };
                if axis > nd {
                    self.error(
                        Diagnostic::error(format!(
                            "axis {axis} is out of bounds for array of dimension {}",
                            nd + 1
                        ))
                        .at(value.span, "this axis")
                        .note("NumPy raises AxisError")
                        .type_error(),
                    );
                    return None;
                }
                Some(Placement::Stack(axis.rem_euclid(nd + 1) as usize))
            }
            Join::Tile(n) => {
                let a = joined.parts.first()?;
                one_dim(self, a)?;
                let n = self.known_count_of(&joined.name, "`reps`", n, 1)?;
                Some(Placement::Runs(vec![a.clone(); n as usize]))
            }
            Join::Every(n) => {
                one_dim(self, joined.parts.first()?)?;
                Some(Placement::Every(self.known_count_of(
                    &joined.name,
                    "`repeats`",
                    n,
                    1,
                )?))
            }
            Join::Gradient => None,
            Join::Columns => {
                self.error(
                    Diagnostic::error(format!(
                        "`{}` of arrays of more than one dimension is not supported",
                        joined.name
                    ))
                    .at(value.span, "parts of 2 or more dimensions")
                    .note("NumPy joins them along axis 1")
                    .help("write each part into its columns of the target (`y[:, 0:2] = a`)"),
                );
                None
            }
        }
    }

    /// The shape and NumPy's element type of the array `joined` makes;
    /// `None` after an error.
    pub(super) fn concatenation_type(
        &mut self,
        value: &Expr,
        joined: &Joined,
    ) -> Option<(Vec<i64>, ElemTy)> {
        let placement = self.placement(value, joined)?;
        self.placed_type(&joined.name, &joined.parts, &placement)
    }

    fn placed_type(
        &mut self,
        name: &str,
        parts: &[Expr],
        placement: &Placement,
    ) -> Option<(Vec<i64>, ElemTy)> {
        let parts = match placement {
            Placement::Runs(copies) => copies.as_slice(),
            _ => parts,
        };
        let mut shape: Option<Vec<i64>> = None;
        let mut elem: Option<ElemTy> = None;
        for p in parts {
            let (s, e) = self.shape_of(p, &format!("a part of `{name}`"))?;
            elem = Some(elem.map_or(e, |t| promote_strong(t, e)));
            let fits = |all: &[i64]| match placement {
                Placement::Runs(_) => all.len() == s.len() && all[1..] == s[1..],
                _ => *all == s[..],
            };
            shape = match shape {
                None => Some(s),
                Some(mut all) if fits(&all) => {
                    if let Placement::Runs(_) = placement {
                        all[0] += s[0];
                    }
                    Some(all)
                }
                Some(all) => {
                    let rule = match placement {
                        Placement::Runs(_) => "all dimensions but the first must match",
                        _ => "all input arrays must have the same shape",
                    };
                    self.error(
                        Diagnostic::error(format!("the parts of `{name}` do not fit together"))
                            .at(
                                p.span,
                                format!("shape {}", super::local_arrays::shape_text(&s)),
                            )
                            .note(format!(
                                "the parts before have the shape {}",
                                super::local_arrays::shape_text(&all)
                            ))
                            .note(format!("NumPy raises ValueError: {rule}"))
                            .type_error(),
                    );
                    return None;
                }
            };
        }
        let mut shape = shape?;
        match placement {
            Placement::Runs(_) => {}
            Placement::Stack(axis) => shape.insert(*axis, parts.len() as i64),
            Placement::Every(n) => shape[0] *= n,
        }
        Some((shape, elem?))
    }

    /// NumPy's arguments of the joining call other than its parts, as far
    /// as parpy supports them (concatenations along axis 0, no `dtype` or
    /// `out`): `None` after an error.
    fn concatenation_args(&mut self, value: &Expr, joined: &Joined) -> Option<()> {
        let ExprKind::Call { args, keywords, .. } = &value.kind else {
            return Some(());
        };
        let name = &joined.name;
        let axis_zero = |e: &Expr| matches!(e.kind, ExprKind::Int(0) | ExprKind::None);
        let (extra_ok, allowed): (bool, &[&str]) = match name.as_str() {
            "np.append" | "np.tile" => (true, &[]),
            "np.concatenate" | "np.hstack" => (args.iter().skip(1).all(axis_zero), &["axis"]),
            "np.stack" => (args.len() <= 2, &["axis"]),
            "np.repeat" => (args.iter().skip(2).all(axis_zero), &["axis"]),
            _ => (args.len() == 1, &[]),
        };
        let kw_ok = keywords.iter().all(|k| {
            allowed.contains(&k.name.as_str()) && (name == "np.stack" || axis_zero(&k.value))
        });
        if extra_ok && kw_ok {
            return Some(());
        }
        let along = match name.as_str() {
            "np.stack" => "takes its parts and an axis only",
            _ => "joins along the first axis only",
        };
        self.error(
            Diagnostic::error(format!("`{name}` {along} in parpy functions"))
                .at(value.span, "another axis or a keyword")
                .help(
                    "join rows of one dimension, or write each part into its slice of the target",
                ),
        );
        None
    }

    /// `target[...] = <the array joined>` (see the module doc).
    pub(super) fn concatenate_assign(
        &mut self,
        target: &Expr,
        value: &Expr,
        joined: &Joined,
        labels: &[(String, Span)],
        span: Span,
    ) -> Option<Vec<Stmt>> {
        let placement = self.placement(value, joined)?;
        let (shape, elem) = self.placed_type(&joined.name, &joined.parts, &placement)?;
        let base = super::expr::flatten_subscript(target).0;
        let reads_target = match &base.kind {
            ExprKind::Name(b) => joined
                .parts
                .iter()
                .any(|p| self.names_read(p).0.iter().any(|n| n == b)),
            _ => true,
        };
        if !reads_target {
            return self.parts_into(target, &joined.parts, &placement, labels, span);
        }
        // into a local array first, then copied
        let hidden = format!("concatenated@{}", value.span.lo);
        let what = format!("`{}`", joined.name);
        self.declare_local(&hidden, (&shape, elem), &what, value.span, span)?;
        let whole = ast::Expr {
            kind: ExprKind::Subscript {
                value: Box::new(ast::Expr::name(&hidden, value.span)),
                indices: vec![ast::Expr::full_slice(value.span); shape.len()],
            },
            span: value.span,
        };
        let mut out = self.parts_into(&whole, &joined.parts, &placement, &[], span)?;
        out.extend(self.slice_assign(
            target,
            &ast::Expr::name(&hidden, value.span),
            labels,
            span,
        )?);
        Some(out)
    }

    /// Each part stored into its place in `target` (see the module doc).
    fn parts_into(
        &mut self,
        target: &Expr,
        parts: &[Expr],
        placement: &Placement,
        labels: &[(String, Span)],
        span: Span,
    ) -> Option<Vec<Stmt>> {
        let slice = |lo: Option<i64>, hi: Option<i64>, step: Option<i64>, at: Span| ast::Expr {
            kind: ExprKind::Slice {
                lo: lo.map(|v| Box::new(ast::Expr::int(v, at))),
                hi: hi.map(|v| Box::new(ast::Expr::int(v, at))),
                step: step.map(|v| Box::new(ast::Expr::int(v, at))),
            },
            span: at,
        };
        let into = |indices: Vec<Expr>| ast::Expr {
            kind: ExprKind::Subscript {
                value: Box::new(target.clone()),
                indices,
            },
            span: target.span,
        };
        let mut out = vec![];
        match placement {
            Placement::Runs(copies) => {
                let mut at = 0;
                for p in copies {
                    let (s, _) = self.shape_of(p, "a part of `np.concatenate`")?;
                    let run = slice(Some(at), Some(at + s[0]), None, p.span);
                    out.extend(self.slice_assign(&into(vec![run]), p, labels, span)?);
                    at += s[0];
                }
            }
            Placement::Stack(axis) => {
                for (k, p) in parts.iter().enumerate() {
                    let mut indices = vec![slice(None, None, None, p.span); *axis];
                    indices.push(ast::Expr::int(k as i64, p.span));
                    out.extend(self.slice_assign(&into(indices), p, labels, span)?);
                }
            }
            Placement::Every(n) => {
                let a = parts.first()?;
                for j in 0..*n {
                    let every = slice(Some(j), None, Some(*n), a.span);
                    out.extend(self.slice_assign(&into(vec![every]), a, labels, span)?);
                }
            }
        }
        Some(out)
    }
}
