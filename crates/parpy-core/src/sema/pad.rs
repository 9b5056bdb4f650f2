//! `np.pad(v, pad_width, mode, ...)` of a 1-D array read by an array
//! expression (`y[i, :] = np.pad(x[i, 1:5], 1)`, `np.pad(s, (2, 0),
//! mode='edge').sum()`): NumPy allocates the padded array; parpy reads the
//! element at each position of it where the expression reads it. The
//! widths are integers known when compiling; element `k` of the result is
//! `v[j]` with `j = k - before` mapped into `v` by the mode: `'edge'`
//! clamps it, `'wrap'` takes it modulo `n`, `'symmetric'` modulo `2n`
//! folded back (`p` or `2n - 1 - p`), `'reflect'` modulo `2n - 2` folded
//! back about the edge elements (of one element, that element). These are
//! the values NumPy's chunk-by-chunk padding gives for widths beyond the
//! array too. `'constant'` reads `v` inside it and the constant before
//! and after, each cast to `v`'s type as NumPy's store casts it.

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, ElemTy, Expr, Type};
use crate::syntax::ast;

use super::slices::IndexSlot;
use super::types::convert;
use super::{Lowerer, TExpr};

/// The modes parpy pads with.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Constant,
    Edge,
    Wrap,
    Reflect,
    Symmetric,
}

/// NumPy's modes parpy does not pad with.
const UNSUPPORTED: [&str; 6] = [
    "linear_ramp",
    "maximum",
    "mean",
    "median",
    "minimum",
    "empty",
];

const SUPPORTED: &str = "'constant', 'edge', 'wrap', 'reflect' and 'symmetric'";

/// The default `keywords.rs` gives `np.pad`'s keywords left out (no
/// Python string: `#` starts none).
pub(super) const UNSET: &str = "#unset";

/// Argument `k` of `np.pad`, unless it was left out (`None` passed is an
/// argument: NumPy reads it).
fn passed(args: &[ast::Expr], k: usize) -> Option<&ast::Expr> {
    args.get(k)
        .filter(|a| !matches!(&a.kind, ast::ExprKind::Str(s) if s == UNSET))
}

/// The positions of `np.pad`'s parameters (`keywords.rs`'s signature).
const STAT_LENGTH: usize = 3;
const CONSTANT_VALUES: usize = 4;
const END_VALUES: usize = 5;
const REFLECT_TYPE: usize = 6;
const KEYWORDS: [(usize, &str); 4] = [
    (STAT_LENGTH, "stat_length"),
    (CONSTANT_VALUES, "constant_values"),
    (END_VALUES, "end_values"),
    (REFLECT_TYPE, "reflect_type"),
];

impl Lowerer<'_, '_> {
    /// `np.pad(args)` read inside an array expression (see the module
    /// doc); `None` after an error.
    pub(super) fn pad(&mut self, name: &str, args: &[ast::Expr], span: Span) -> Option<TExpr> {
        let (Some(v), Some(width)) = (args.first(), args.get(1)) else {
            self.arity_error(name, "an array and `pad_width`", args.len(), span);
            return None;
        };
        let mode = self.pad_mode(name, args.get(2), span)?;
        // NumPy's ValueError for a keyword the mode does not read
        let reads = |k: usize| match mode {
            Mode::Constant => k == CONSTANT_VALUES,
            Mode::Reflect | Mode::Symmetric => k == REFLECT_TYPE,
            Mode::Edge | Mode::Wrap => false,
        };
        for (k, kw) in KEYWORDS {
            if let Some(a) = passed(args, k).filter(|_| !reads(k)) {
                let mode_name = args
                    .get(2)
                    .map_or("constant".to_string(), |m| match &m.kind {
                        ast::ExprKind::Str(s) => s.clone(),
                        _ => "constant".to_string(),
                    });
                self.error(
                    Diagnostic::error(format!(
                        "unsupported keyword arguments for mode '{mode_name}': {{'{kw}'}}"
                    ))
                    .at(a.span, format!("mode '{mode_name}' does not read `{kw}`"))
                    .raises("ValueError"),
                );
                return None;
            }
        }
        if let Some(t) = passed(args, REFLECT_TYPE) {
            let even = matches!(&t.kind, ast::ExprKind::Str(s) if s == "even");
            if !even {
                self.error(
                    Diagnostic::error(format!("`{name}` supports `reflect_type='even'` only"))
                        .at(t.span, "not 'even'")
                        .note("NumPy's 'odd' reflection extrapolates from the edge element chunk by chunk; parpy pads by mapping each position into the array"),
                );
                return None;
            }
        }
        let (before, after) = self.pad_widths(name, width)?;
        let (shape, elem) = self.array_shape_of(v)?;
        let n = match shape.as_deref() {
            Some([n]) => *n,
            Some(dims) => {
                self.error(
                    Diagnostic::error(format!(
                        "`{name}` of an array of {} dimensions is not supported",
                        dims.len()
                    ))
                    .at(v.span, "not 1-D")
                    .help("pad each row: `y[i, :] = np.pad(x[i, :], w)` in a loop over `i`"),
                );
                return None;
            }
            None => {
                self.error(
                    Diagnostic::error(format!("`{name}` of a number is not supported"))
                        .at(v.span, "a number, not a 1-D array")
                        .note("NumPy pads a 0-D array to itself"),
                );
                return None;
            }
        };
        if n == 0 && mode != Mode::Constant && before + after > 0 {
            self.error(
                Diagnostic::error(
                    "can't extend empty axis 0 using modes other than 'constant' or 'empty'",
                )
                .at(v.span, "an empty array")
                .raises("ValueError"),
            );
            return None;
        }
        let constants = match mode {
            Mode::Constant => {
                Some(self.pad_constants(name, passed(args, CONSTANT_VALUES), elem, span)?)
            }
            _ => None,
        };
        let it = self.opts.int_type;
        let int = |c: i64| Expr::int(c, it, span);
        let slot = IndexSlot::Slice {
            lo: int(0),
            extent: n + before + after,
            step: 1,
            rot: 0,
        };
        let k = self.map_slices(vec![slot], false, span)?.pop()?;
        let bin = |op: BinOp, a: Expr, b: Expr| Expr::binary(op, a, b, Type::Scalar(it), span);
        if n == 0 {
            // (only constants, or no element at all: no element of `v`
            // is read)
            let e = match constants {
                Some((lo, hi)) => {
                    Expr::select(Expr::compare(BinOp::Lt, k, int(before), span), lo, hi)
                }
                None => convert(int(0), elem),
            };
            return Some(TExpr { e, weak: false });
        }
        // `j mod period` of `j = k - before`, on `k + shift >= 0` so C's
        // remainder is Python's
        let modulo = |period: i64| {
            let shift = (period - before % period) % period;
            bin(
                BinOp::Mod,
                bin(BinOp::Add, k.clone(), int(shift)),
                int(period),
            )
        };
        let clamp = |e: Expr| bin(BinOp::Min, bin(BinOp::Max, e, int(0)), int(n - 1));
        let j = match mode {
            Mode::Constant | Mode::Edge => clamp(bin(BinOp::Sub, k.clone(), int(before))),
            Mode::Wrap => modulo(n),
            Mode::Reflect if n == 1 => int(0),
            // the fold back, `min(p, period - p)`, kept inside `v` (the
            // last `min`) where `ir::range` sees it
            Mode::Reflect | Mode::Symmetric => {
                let period = match mode {
                    Mode::Reflect => 2 * n - 2,
                    _ => 2 * n,
                };
                let last = period - if mode == Mode::Reflect { 0 } else { 1 };
                let p = modulo(period);
                let back = bin(BinOp::Sub, int(last), p.clone());
                bin(BinOp::Min, bin(BinOp::Min, p, back), int(n - 1))
            }
        };
        let at = self.element_at(v, vec![(j, span)], span)?;
        let e = match constants {
            None => at.e,
            Some((lo, hi)) => {
                let inside = Expr::compare(BinOp::Lt, k.clone(), int(before + n), span);
                let first = Expr::compare(BinOp::Lt, k, int(before), span);
                Expr::select(first, lo, Expr::select(inside, convert(at.e, elem), hi))
            }
        };
        Some(TExpr {
            e: convert(e, elem),
            weak: false,
        })
    }

    /// The mode of `np.pad`: a string literal naming one parpy pads with.
    fn pad_mode(&mut self, name: &str, mode: Option<&ast::Expr>, span: Span) -> Option<Mode> {
        let Some(mode) = mode else {
            return Some(Mode::Constant);
        };
        if matches!(mode.kind, ast::ExprKind::None) {
            self.error(
                Diagnostic::error("mode 'None' is not supported")
                    .at(mode.span, "no mode of NumPy's")
                    .note(format!("parpy pads with the modes {SUPPORTED}"))
                    .raises("ValueError"),
            );
            return None;
        }
        let ast::ExprKind::Str(s) = &mode.kind else {
            self.error(
                Diagnostic::error(format!("the `mode` of `{name}` must be a string literal"))
                    .at(mode.span, "not a string")
                    .note(format!(
                        "parpy pads with the modes {SUPPORTED}; a callable mode is not supported"
                    )),
            );
            return None;
        };
        Some(match s.as_str() {
            "constant" => Mode::Constant,
            "edge" => Mode::Edge,
            "wrap" => Mode::Wrap,
            "reflect" => Mode::Reflect,
            "symmetric" => Mode::Symmetric,
            other => {
                let d = if UNSUPPORTED.contains(&other) {
                    Diagnostic::error(format!("`{name}` with mode '{other}' is not supported"))
                        .at(mode.span, "a NumPy mode parpy does not pad with")
                } else {
                    Diagnostic::error(format!("mode '{other}' is not supported"))
                        .at(mode.span, "no mode of NumPy's")
                        .raises("ValueError")
                };
                self.error(
                    d.also(span, "padded here")
                        .note(format!("parpy pads with the modes {SUPPORTED}")),
                );
                return None;
            }
        })
    }

    /// `(before, after)` of `pad_width`: an int, `(w,)`, `(before,
    /// after)` or `((before, after),)` (lists alike), integers known when
    /// compiling, none negative.
    fn pad_widths(&mut self, name: &str, width: &ast::Expr) -> Option<(i64, i64)> {
        let items = |e: &ast::Expr| -> Option<Vec<ast::Expr>> {
            match &e.kind {
                ast::ExprKind::Tuple(items) => Some(items.clone()),
                _ => e.list_items().map(<[ast::Expr]>::to_vec),
            }
        };
        let shape_error = |l: &mut Self, at: Span| {
            l.error(
                Diagnostic::error(format!(
                    "`pad_width` of `{name}` of a 1-D array is an int, `(before, after)` or `((before, after),)`"
                ))
                .at(at, "not a width for one axis")
                .note("NumPy raises ValueError: it cannot broadcast these widths to the shape (1, 2)")
                .raises("ValueError"),
            );
        };
        let widths = match items(width) {
            None => vec![width.clone()],
            Some(outer) => match outer.as_slice() {
                [one] => match items(one) {
                    Some(inner) if (1..=2).contains(&inner.len()) => inner,
                    Some(_) => {
                        shape_error(self, width.span);
                        return None;
                    }
                    None => outer,
                },
                [_, _] if outer.iter().all(|w| items(w).is_none()) => outer,
                _ => {
                    shape_error(self, width.span);
                    return None;
                }
            },
        };
        let mut values = vec![];
        for w in &widths {
            let t = self.lower_expr(w)?;
            if !t
                .e
                .ty
                .elem()
                .is_some_and(|e| e.is_int() || e == ElemTy::Bool)
            {
                self.error(
                    Diagnostic::error("`pad_width` must be of integral type.")
                        .at(w.span, "not an integer")
                        .type_error(),
                );
                return None;
            }
            let Some(c) = self.known_int(&t.e) else {
                self.error(
                    Diagnostic::error(format!(
                        "the widths of `{name}` must be integers known when compiling"
                    ))
                    .at(w.span, "known only at run time")
                    .note("the length of every array must be known when compiling")
                    .help("pass the width as a constant, or as a scalar argument parpy specializes on"),
                );
                return None;
            };
            if c < 0 {
                self.error(
                    Diagnostic::error("index can't contain negative values")
                        .at(w.span, "a negative width")
                        .raises("ValueError"),
                );
                return None;
            }
            values.push(c);
        }
        match values.as_slice() {
            [w] => Some((*w, *w)),
            [b, a] => Some((*b, *a)),
            _ => None,
        }
    }

    /// The constants before and after of `constant_values` (a number or a
    /// pair; 0 when left out), in `elem`, NumPy's cast of its store: a
    /// Python int `elem` cannot hold is NumPy's `OverflowError`, a float
    /// into an integer `int()` of it (NaN a `ValueError`).
    fn pad_constants(
        &mut self,
        name: &str,
        values: Option<&ast::Expr>,
        elem: ElemTy,
        span: Span,
    ) -> Option<(Expr, Expr)> {
        let Some(values) = values else {
            let zero = Expr::int(0, self.opts.int_type, span);
            return Some((convert(zero.clone(), elem), convert(zero, elem)));
        };
        let items = match &values.kind {
            ast::ExprKind::None => {
                self.error(
                    Diagnostic::error(format!("`{name}` with `constant_values=None` is not supported"))
                        .at(values.span, "None")
                        .note("NumPy pads with its object array of None: NaN into a float array, an error into others")
                        .help("write the constant: `constant_values=np.nan`"),
                );
                return None;
            }
            ast::ExprKind::Tuple(items) => items.clone(),
            _ => match values.list_items() {
                Some(items) => items.to_vec(),
                None => vec![values.clone()],
            },
        };
        let pair = match items.as_slice() {
            [one] => vec![one.clone(), one.clone()],
            [b, a] => vec![b.clone(), a.clone()],
            _ => {
                self.error(
                    Diagnostic::error(format!(
                        "`constant_values` of `{name}` of a 1-D array is a number or a pair `(before, after)`"
                    ))
                    .at(values.span, "not a number or a pair")
                    .raises("ValueError"),
                );
                return None;
            }
        };
        let mut out = vec![];
        for c in &pair {
            let t = self.lower_expr(c)?;
            if !matches!(t.e.ty, Type::Scalar(_)) {
                self.error(
                    Diagnostic::error(format!("`constant_values` of `{name}` must be numbers"))
                        .at(c.span, "not a number"),
                );
                return None;
            }
            // NumPy stores each (a NumPy scalar of `np.array(values)`) as
            // its element store does a Python number: a float through
            // `int()`, an int that must fit
            out.push(match t.weak {
                true => self.store_convert(t, elem, c.span)?,
                false if elem.is_int() && t.e.ty.elem().is_some_and(ElemTy::is_float) => {
                    convert(self.python_float_checked(t.e, elem), elem)
                }
                false => convert(t.e, elem),
            });
        }
        let hi = out.pop()?;
        Some((out.pop()?, hi))
    }
}
