//! `np.convolve(a, v, mode)` of 1-D operands, the whole value of a store
//! into a 1-D slice (`y[i, :] = np.convolve(x[i, :], w, 'same')`): a loop
//! over the result's elements, each the dot product NumPy's `correlate`
//! takes there: the elements of the longer operand (NumPy swaps them when
//! `v` is the longer) that overlap the reversed shorter one, in increasing
//! order, `acc = a[lo] * v[t - lo]`, then `acc = acc + a[j] * v[t - j]` for
//! the position `t` of the full convolution (NumPy's dot: integers wrap in
//! their type, bools or their ands, float16 adds in float32 and rounds
//! once, and a float sum starts from `0.0`, so a sum of `-0.0` is `0.0`).
//! `mode` is `'full'` (`n + m - 1` elements), `'same'` (`n`, centered as
//! NumPy centers it) or `'valid'` (`n - m + 1`); the lengths are known when
//! compiling. NumPy's float dot calls BLAS, whose order for long windows
//! may differ: the floats agree within rounding there, as `np.dot`'s.

use crate::diag::Diagnostic;
use crate::ir::BinOp;
use crate::resolve::Builtin;
use crate::syntax::ast;

use super::generators::{for_in, stmt};
use super::Lowerer;

impl Lowerer<'_, '_> {
    /// `target = np.convolve(a, v, mode)` as the loop that stores each
    /// element; `None` for other statements, `Some(None)` after an error.
    pub(super) fn convolution_store(&mut self, s: &ast::Stmt) -> Option<Option<ast::Stmt>> {
        let ast::StmtKind::Assign { targets, value } = &s.kind else {
            return None;
        };
        let ([target], ast::ExprKind::Call { func, args, .. }) = (targets.as_slice(), &value.kind)
        else {
            return None;
        };
        // (`y = np.convolve(...)` binds a new array to the name `y`, as in
        // Python: no store into what `y` held)
        if self.builtin_of(func) != Some(Builtin::Convolve)
            || !matches!(target.kind, ast::ExprKind::Subscript { .. })
        {
            return None;
        }
        let at = value.span;
        let full = ast::Expr {
            kind: ast::ExprKind::Str("full".to_string()),
            span: at,
        };
        let (a, v, mode) = match args.as_slice() {
            [a, v] => (a, v, &full),
            [a, v, mode] => (a, v, mode),
            _ => {
                self.arity_error("np.convolve", "2 or 3 arguments", args.len(), at);
                return Some(None);
            }
        };
        let mode = match &mode.kind {
            ast::ExprKind::Str(m) if ["full", "same", "valid"].contains(&m.as_str()) => m.clone(),
            ast::ExprKind::Int(k @ 0..=2) => ["valid", "same", "full"][*k as usize].to_string(),
            _ => {
                self.error(
                    Diagnostic::error("`np.convolve`: mode must be 'full', 'same' or 'valid'")
                        .at(mode.span, "this mode")
                        .note("NumPy raises ValueError for another one"),
                );
                return Some(None);
            }
        };
        let mut lengths = vec![];
        for (e, what) in [(a, "a"), (v, "v")] {
            match self.array_shape_of(e).map(|(shape, _)| shape) {
                Some(Some(shape)) if shape.len() == 1 && shape[0] > 0 => lengths.push(shape[0]),
                None => return Some(None),
                Some(Some(shape)) if shape.len() == 1 => {
                    self.error(
                        Diagnostic::error(format!("`np.convolve`: {what} cannot be empty"))
                            .at(e.span, "no elements")
                            .note("NumPy raises ValueError"),
                    );
                    return Some(None);
                }
                _ => {
                    self.error(
                        Diagnostic::error("`np.convolve` takes 1-D operands")
                            .at(e.span, "not a 1-D array")
                            .note("NumPy raises ValueError: object too deep for desired array")
                            .help("convolve a row: `np.convolve(x[i, :], w)`"),
                    );
                    return Some(None);
                }
            }
        }
        // (NumPy convolves the longer with the shorter)
        let ((a, n), (v, m)) = match lengths[..] {
            [n, m] if m > n => ((v, m), (a, n)),
            [n, m] => ((a, n), (v, m)),
            _ => return Some(None),
        };
        let (len, offset) = match mode.as_str() {
            "full" => (n + m - 1, 0),
            "same" => (n, (m - 1) / 2),
            _ => (n - m + 1, m - 1),
        };
        let shape = match self.array_shape(target) {
            Some(Some(shape)) => shape,
            Some(None) => return Some(None),
            None => vec![],
        };
        if shape != [len] {
            self.error(
                Diagnostic::error(format!(
                    "could not broadcast input array from shape ({len},) into shape {}",
                    crate::ir::shape_text(&shape)
                ))
                .at(at, format!("the {mode} convolution, {len} elements"))
                .also(target.span, "stored here")
                .note("NumPy raises ValueError"),
            );
            return Some(None);
        }
        let base = super::expr::flatten_subscript(target).0;
        if let ast::ExprKind::Name(b) = &base.kind {
            let (arrays, _) = self.names_read(value);
            if arrays.iter().any(|r| r == b) {
                self.error(
                    Diagnostic::error(format!(
                        "`np.convolve` stored into `{b}`, which it reads"
                    ))
                    .at(at, "reads the array it is stored into")
                    .help("NumPy makes the whole result before it stores it: convolve into another array first"),
                );
                return Some(None);
            }
        }
        // for k in range(len): t = k + offset, the dot product at t
        let elem = |this: &mut Self, e: &ast::Expr| this.array_shape_of(e).map(|(_, t)| t);
        let (ta, tv) = (elem(self, a)?, elem(self, v)?);
        let joined = super::types::promote_strong(ta, tv);
        let half = joined == crate::ir::ElemTy::F16;
        let (k, acc, j) = (
            self.fresh_name("k"),
            self.fresh_name("acc"),
            self.fresh_name("j"),
        );
        let name = |n: &str| ast::Expr::name(n, at);
        let int = |c: i64| ast::Expr::int(c, at);
        let bin = |op, l, r| ast::Expr::binary(op, l, r, at);
        let t = bin(BinOp::Add, name(&k), int(offset));
        let lo = Self::python_call(
            "max",
            vec![int(0), bin(BinOp::Sub, t.clone(), int(m - 1))],
            at,
        );
        let hi = Self::python_call("min", vec![int(n), bin(BinOp::Add, t.clone(), int(1))], at);
        let at_index = |e: &ast::Expr, i: ast::Expr| {
            let read = element(e, i);
            // (float16: NumPy's dot multiplies and adds in float32)
            match half {
                true => Self::numpy_call("float32", vec![read], at),
                false => read,
            }
        };
        let product = |i: ast::Expr| {
            bin(
                BinOp::Mul,
                at_index(a, i.clone()),
                at_index(v, bin(BinOp::Sub, t.clone(), i)),
            )
        };
        let assign = super::generators::assign;
        let add = bin(BinOp::Add, name(&acc), product(name(&j)));
        let from = bin(BinOp::Add, lo.clone(), int(1));
        let rest = for_in(
            &j,
            Self::range_call(vec![from, hi], at),
            vec![assign(&acc, add, at)],
            at,
        );
        let mut value = name(&acc);
        if joined.is_float() {
            value = bin(BinOp::Add, value, ast::Expr::float(0.0, at));
        }
        if half {
            value = Self::numpy_call("float16", vec![value], at);
        }
        let store = stmt(
            ast::StmtKind::Assign {
                targets: vec![ast::Expr {
                    kind: ast::ExprKind::Subscript {
                        value: Box::new(target.clone()),
                        indices: vec![name(&k)],
                    },
                    span: target.span,
                }],
                value,
            },
            s.span,
        );
        let body = vec![assign(&acc, product(lo), at), rest, store];
        let range = Self::range_call(vec![int(len)], at);
        let mut nest = for_in(&k, range, body, at);
        nest.span = s.span;
        Some(Some(nest))
    }
}

/// The element `i` of the 1-D operand `e`: of a slice that starts at a
/// constant with step 1 (`x[r, :]`, `x[r, 2:]`), the array's own element
/// (`x[r, i]`, `x[r, 2 + i]`: a run-time index checked as any, where an
/// index of the slice would have to be proven inside it); else `e[i]`.
fn element(e: &ast::Expr, i: ast::Expr) -> ast::Expr {
    let span = e.span;
    if let ast::ExprKind::Subscript { value, indices } = &e.kind {
        let slices: Vec<usize> = (0..indices.len())
            .filter(|k| matches!(indices[*k].kind, ast::ExprKind::Slice { .. }))
            .collect();
        if let [k] = slices[..] {
            if let ast::ExprKind::Slice { lo, step: None, .. } = &indices[k].kind {
                let index = match lo.as_deref().map(|l| &l.kind) {
                    None => Some(i.clone()),
                    Some(ast::ExprKind::Int(c)) if *c >= 0 => Some(ast::Expr::binary(
                        BinOp::Add,
                        ast::Expr::int(*c, span),
                        i.clone(),
                        span,
                    )),
                    _ => None,
                };
                if let Some(index) = index {
                    let mut indices = indices.clone();
                    indices[k] = index;
                    return ast::Expr {
                        kind: ast::ExprKind::Subscript {
                            value: value.clone(),
                            indices,
                        },
                        span,
                    };
                }
            }
        }
    }
    ast::Expr {
        kind: ast::ExprKind::Subscript {
            value: Box::new(e.clone()),
            indices: vec![i],
        },
        span,
    }
}
