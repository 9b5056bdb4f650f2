//! The spellings of a permutation of an array's axes: `x.T`, `x.mT`,
//! `np.transpose(x[, axes])`, `x.transpose(*axes)`, `np.permute_dims(x,
//! axes)`, `np.matrix_transpose(x)`, `np.swapaxes(x, a, b)`,
//! `x.swapaxes(a, b)`, `np.moveaxis(x, source, destination)`.
//!
//! parpy views an array with its axes as they are or all reversed (`x.T`,
//! which `stmt.rs` and `hoist.rs` make views of); a spelling whose
//! permutation is one of those two for the operand's rank is that view:
//! `np.swapaxes(m, 0, 1)` of a matrix is `m.T`, `np.moveaxis(v, 0, 0)` is
//! `v`. Any other permutation is a located error that says which it is
//! (`permutation_error`). The axes are Python ints known when compiling
//! (negative ones count from the end), checked as NumPy checks them.

use crate::diag::Diagnostic;
use crate::resolve::{PermuteFn, Resolved};
use crate::syntax::ast::{self, Expr, ExprKind};

use super::Lowerer;

/// What a spelling does to its operand's axes.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Axes {
    /// The axes as they are (`np.swapaxes(x, 1, 1)`).
    Same,
    /// All of them reversed (`x.T`).
    Reversed,
    /// Another order: the operand's axis at each place.
    Other(Vec<usize>),
}

/// A permutation spelled in the code: its operand and what it does, or why
/// NumPy refuses it.
pub(super) struct Permuted<'e> {
    pub(super) operand: &'e Expr,
    pub(super) axes: Result<Axes, String>,
}

impl Lowerer<'_, '_> {
    /// `e` as a permutation of its operand's axes; `None` when `e` spells
    /// none, or one whose operand's rank is not known yet (a local bound
    /// later: `stmt.rs` asks again when it lowers the statement).
    pub(super) fn permutation<'e>(&self, e: &'e Expr) -> Option<Permuted<'e>> {
        // (and the spelling, for messages)
        let (f, operand, rest, name): (PermuteFn, &Expr, &[Expr], &str) = match &e.kind {
            ExprKind::Attr { value, attr } if attr == "T" => {
                (PermuteFn::Transpose, value, &[], ".T")
            }
            ExprKind::Attr { value, attr } if attr == "mT" => {
                (PermuteFn::MatrixTranspose, value, &[], ".mT")
            }
            ExprKind::Call {
                func,
                args,
                keywords,
            } if keywords.is_empty() => match (&func.kind, self.permute_fn(func)) {
                (_, Some(f)) => {
                    let (x, rest) = args.split_first()?;
                    (f, x, rest, f.name())
                }
                (ExprKind::Attr { value, attr }, None) => match attr.as_str() {
                    "transpose" => (PermuteFn::Transpose, &**value, &args[..], ".transpose"),
                    "swapaxes" => (PermuteFn::SwapAxes, &**value, &args[..], ".swapaxes"),
                    _ => return None,
                },
                _ => return None,
            },
            _ => return None,
        };
        // (no axes: all reversed, whatever the rank)
        if f == PermuteFn::Transpose && (rest.is_empty() || is_none(&rest[0]) && rest.len() == 1) {
            return Some(Permuted {
                operand,
                axes: Ok(Axes::Reversed),
            });
        }
        let rank = self.known_rank(operand)?;
        let axes = permutation_of(f, name, rest, rank).map(|p| {
            if p.iter().enumerate().all(|(k, &a)| a == k) {
                Axes::Same
            } else if p.iter().enumerate().all(|(k, &a)| a == rank - 1 - k) {
                Axes::Reversed
            } else {
                Axes::Other(p)
            }
        });
        Some(Permuted { operand, axes })
    }

    /// `func` names one of NumPy's permuting functions (not a method).
    pub(super) fn permute_fn(&self, func: &Expr) -> Option<PermuteFn> {
        let p = func.dotted_path().filter(|_| !self.is_local_root(func))?;
        match self.resolve_path(&p) {
            Resolved::Permute(f) => Some(f),
            _ => None,
        }
    }

    /// The rank of `x` where every name it reads is bound (a parameter or
    /// a local array), so `rank` knows it; 0-D values have none to permute.
    fn known_rank(&self, x: &Expr) -> Option<usize> {
        let r = self.rank(x);
        (self.all_bound(x) && r > 0).then_some(r)
    }

    /// Whether every name whose array `e` reads is bound now, or global
    /// (`np`): a local bound later is neither. (The names of indices and
    /// scalars do not change its rank.)
    fn all_bound(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Name(name) => {
                self.scope.get(name).is_some()
                    || !matches!(self.resolve_path(&[name.as_str()]), Resolved::NotFound)
            }
            ExprKind::Subscript { value, .. } => self.all_bound(value),
            ExprKind::Attr { value, .. } => self.all_bound(value),
            ExprKind::Unary { arg, .. } => self.all_bound(arg),
            ExprKind::Binary { lhs, rhs, .. } => self.all_bound(lhs) && self.all_bound(rhs),
            ExprKind::Compare { first, rest } => {
                self.all_bound(first) && rest.iter().all(|(_, r)| self.all_bound(r))
            }
            ExprKind::IfExp { then, else_, .. } => self.all_bound(then) && self.all_bound(else_),
            ExprKind::Call { func, args, .. } => {
                // (a method's array; not a global function's path)
                let global = !self.is_local_root(func)
                    && func
                        .dotted_path()
                        .is_some_and(|p| !matches!(self.resolve_path(&p), Resolved::NotFound));
                let method = match &func.kind {
                    ExprKind::Attr { value, .. } if !global => self.all_bound(value),
                    _ => true,
                };
                method && args.iter().all(|a| self.all_bound(a))
            }
            _ => true,
        }
    }

    /// Reports each permutation in the expressions of `s` itself that
    /// parpy has no view for (a nested block's are reported where it is
    /// lowered); whether there was one.
    pub(super) fn report_permutations(&mut self, s: &ast::Stmt) -> bool {
        let mut found = vec![];
        for e in s.own_exprs() {
            e.walk(&mut |x| found.extend(self.permutation_error(x)));
        }
        let any = !found.is_empty();
        for d in found {
            self.error(d);
        }
        any
    }

    /// The located error of a permutation parpy has no view for, or that
    /// NumPy refuses; `None` when `e` is no permutation or a view.
    pub(super) fn permutation_error(&self, e: &Expr) -> Option<Diagnostic> {
        let p = self.permutation(e)?;
        let what = match p.axes {
            Ok(Axes::Same | Axes::Reversed) => return None,
            Err(why) => return Some(Diagnostic::error(why).at(e.span, "these axes")),
            Ok(Axes::Other(order)) => order,
        };
        let order: Vec<String> = what.iter().map(usize::to_string).collect();
        Some(
            Diagnostic::error(format!(
                "the axes of this {}-D array in the order ({}) are not a view parpy has",
                what.len(),
                order.join(", ")
            ))
            .at(e.span, "a permutation of the axes")
            .note("parpy views an array with its axes as they are or all reversed (`x.T`)")
            .help("index the axes in the order meant where the values are read (`x[i, k, j]` for `np.swapaxes(x, 1, 2)[i, j, k]`)"),
        )
    }
}

/// `None` written out (`np.transpose(x, None)`).
fn is_none(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::None)
}

/// The operand's axis at each place of the result of `f` with arguments
/// `rest` after the operand (spelled `name`), for an operand of `rank`
/// dimensions; why NumPy refuses them otherwise.
fn permutation_of(
    f: PermuteFn,
    name: &str,
    rest: &[Expr],
    rank: usize,
) -> Result<Vec<usize>, String> {
    let arity = |n: usize| match rest.len() == n {
        true => Ok(()),
        false => Err(format!(
            "`{name}` takes {} argument{} after the array, {} given",
            n,
            if n == 1 { "" } else { "s" },
            rest.len()
        )),
    };
    let identity: Vec<usize> = (0..rank).collect();
    match f {
        PermuteFn::Transpose | PermuteFn::PermuteDims => {
            // (`x.transpose(1, 0)`, `x.transpose((1, 0))`, `np.transpose(x, (1, 0))`)
            let list: Vec<&Expr> = match rest {
                [one] => match items_of(one) {
                    Some(items) => items.iter().collect(),
                    None => vec![one],
                },
                many => many.iter().collect(),
            };
            let axes = list
                .iter()
                .map(|a| axis_of(name, a, rank))
                .collect::<Result<Vec<_>, _>>()?;
            if axes.len() != rank {
                return Err(format!(
                    "`{name}`: {} axes given for an array of {rank} dimensions",
                    axes.len()
                ));
            }
            distinct(name, &axes)?;
            Ok(axes)
        }
        PermuteFn::SwapAxes => {
            arity(2)?;
            let (a, b) = (
                axis_of(name, &rest[0], rank)?,
                axis_of(name, &rest[1], rank)?,
            );
            let mut p = identity;
            p.swap(a, b);
            Ok(p)
        }
        PermuteFn::MatrixTranspose => {
            arity(0)?;
            if rank < 2 {
                return Err(format!(
                    "`{name}` needs an array of at least 2 dimensions, not {rank}"
                ));
            }
            let mut p = identity;
            p.swap(rank - 2, rank - 1);
            Ok(p)
        }
        PermuteFn::MoveAxis => {
            arity(2)?;
            let axes = |e: &Expr| -> Result<Vec<usize>, String> {
                let v = match items_of(e) {
                    Some(items) => items
                        .iter()
                        .map(|a| axis_of(name, a, rank))
                        .collect::<Result<Vec<_>, _>>()?,
                    None => vec![axis_of(name, e, rank)?],
                };
                distinct(name, &v)?;
                Ok(v)
            };
            let (source, destination) = (axes(&rest[0])?, axes(&rest[1])?);
            if source.len() != destination.len() {
                return Err(format!(
                    "`{name}`: `source` and `destination` must have the same number of elements"
                ));
            }
            // NumPy's order: the axes not moved, then each moved one
            // inserted at its destination, in the destinations' order
            let mut order: Vec<usize> = identity
                .into_iter()
                .filter(|a| !source.contains(a))
                .collect();
            let mut moves: Vec<(usize, usize)> = destination.into_iter().zip(source).collect();
            moves.sort_unstable();
            for (dest, src) in moves {
                order.insert(dest, src);
            }
            Ok(order)
        }
    }
}

/// The items of a tuple or list literal.
fn items_of(e: &Expr) -> Option<&[Expr]> {
    match &e.kind {
        ExprKind::Tuple(items) => Some(items),
        _ => e.list_items(),
    }
}

/// An axis, a Python int known when compiling, in `0..rank` (negative:
/// from the end).
fn axis_of(name: &str, e: &Expr, rank: usize) -> Result<usize, String> {
    let v = match &e.kind {
        ExprKind::Int(v) => Some(*v),
        ExprKind::Unary {
            op: crate::ops::UnOp::Neg,
            arg,
        } => match arg.kind {
            ExprKind::Int(v) => Some(-v),
            _ => None,
        },
        _ => None,
    };
    let Some(v) = v else {
        return Err(format!(
            "the axes of `{name}` must be integers written in the code"
        ));
    };
    let r = rank as i64;
    match v {
        v if (0..r).contains(&v) => Ok(v as usize),
        v if (-r..0).contains(&v) => Ok((v + r) as usize),
        v => Err(format!(
            "`{name}`: axis {v} is out of bounds for array of dimension {rank}"
        )),
    }
}

fn distinct(name: &str, axes: &[usize]) -> Result<(), String> {
    for (k, a) in axes.iter().enumerate() {
        if axes[..k].contains(a) {
            return Err(format!("`{name}`: repeated axis {a}"));
        }
    }
    Ok(())
}
