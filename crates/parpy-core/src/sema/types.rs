//! Typing rules: NumPy-style promotion with weak Python scalars (NEP 50),
//! explicit `Convert` insertion, implicit store conversions and the narrowing
//! check, truthiness, and small constant folding on IR expressions.

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, ElemTy, Expr, ExprKind, ScalarValue, Type, UnOp};
use crate::options::Options;

use super::{Lowerer, TExpr};

/// The promoted type of two strong element types (NumPy rules among the
/// supported types: bool < ints; floats; int with float gives a float wide
/// enough for the int).
pub(crate) fn promote_strong(a: ElemTy, b: ElemTy) -> ElemTy {
    use ElemTy::*;
    if a == b {
        return a;
    }
    if a == Bool {
        return b;
    }
    if b == Bool {
        return a;
    }
    match (a.is_float(), b.is_float()) {
        (true, true) => {
            if a.size() >= b.size() {
                a
            } else {
                b
            }
        }
        (false, false) => {
            if a.is_signed_int() == b.is_signed_int() {
                if a.size() >= b.size() {
                    a
                } else {
                    b
                }
            } else {
                // Mixed signedness: a signed type wider than the unsigned one.
                let (s, u) = if a.is_signed_int() { (a, b) } else { (b, a) };
                if s.size() > u.size() {
                    s
                } else {
                    match u.size() {
                        1 => I16,
                        2 => I32,
                        4 => I64,
                        _ => F64,
                    }
                }
            }
        }
        (true, false) | (false, true) => {
            let (f, i) = if a.is_float() { (a, b) } else { (b, a) };
            // The float must hold the int's values: i8/i16 fit in f32.
            if f == F64 || i.size() >= 4 || (f == F16 && i.size() >= 2) {
                if f == F16 && i.size() < 4 {
                    F32
                } else {
                    F64
                }
            } else {
                f
            }
        }
    }
}

/// The type and weakness of `a op b` operands after promotion.
pub(crate) fn promote(a: (ElemTy, bool), b: (ElemTy, bool), opts: &Options) -> (ElemTy, bool) {
    match (a, b) {
        ((ta, true), (tb, true)) => {
            if ta.is_float() || tb.is_float() {
                (opts.float_type, true)
            } else if ta == ElemTy::Bool && tb == ElemTy::Bool {
                (ElemTy::Bool, true)
            } else {
                (opts.int_type, true)
            }
        }
        ((w, true), (s, false)) | ((s, false), (w, true)) => {
            if w.is_float() && !s.is_float() {
                (opts.float_type, false)
            } else if w.is_int() && s == ElemTy::Bool {
                (opts.int_type, false)
            } else {
                (s, false)
            }
        }
        ((ta, false), (tb, false)) => (promote_strong(ta, tb), false),
    }
}

/// May a strong value of type `src` be stored into `dst` implicitly?
pub(crate) fn widens(src: ElemTy, dst: ElemTy) -> bool {
    if src == dst || src == ElemTy::Bool {
        return true;
    }
    if dst == ElemTy::Bool {
        return false;
    }
    match (src.is_float(), dst.is_float()) {
        (false, true) => true,
        (true, false) => false,
        (true, true) => dst.size() >= src.size(),
        (false, false) => promote_strong(src, dst) == dst,
    }
}

/// Converts `e` to `ty`, folding literals and skipping no-op conversions.
pub(crate) fn convert(e: Expr, ty: ElemTy) -> Expr {
    use crate::ir::eval::round_float;
    if e.ty == Type::Scalar(ty) {
        return e;
    }
    let span = e.span;
    // a literal converted when compiling: rounded as the conversion rounds
    // (a float32 literal is a float32 value where it is widened)
    let round = |v: f64| {
        let from = e.ty.elem().map_or(v, |t| round_float(v, t));
        round_float(from, ty)
    };
    match e.kind {
        ExprKind::Int(v) if ty.is_float() => {
            // (a uint64 literal holds its 64 bits: `-np.uint64(3)` is
            // 2**64 - 3)
            let value = match e.ty == Type::Scalar(ElemTy::U64) {
                true => v as u64 as f64,
                false => v as f64,
            };
            let v = round_float(value, ty);
            Expr::new(ExprKind::Float(v), Type::Scalar(ty), span)
        }
        // (wrapped to the type's width, as the conversion at run time does)
        ExprKind::Int(v) if ty.is_int() => Expr::int(crate::ir::eval::wrap_int(v, ty), ty, span),
        ExprKind::Float(v) if ty.is_float() => {
            Expr::new(ExprKind::Float(round(v)), Type::Scalar(ty), span)
        }
        ExprKind::Bool(b) if ty.is_int() => Expr::int(i64::from(b), ty, span),
        // a choice among literals (a Python number of a table at a run-time
        // index, `k[a][b]`): the literals converted, so no value of the
        // wider type is left (Metal has no float64)
        ExprKind::Select { cond, then, else_ }
            if literal_choice(&then) && literal_choice(&else_) =>
        {
            Expr::select_as(
                *cond,
                convert(*then, ty),
                convert(*else_, ty),
                Type::Scalar(ty),
                span,
            )
        }
        kind => Expr::new(
            ExprKind::Convert {
                arg: Box::new(Expr::new(kind, e.ty, span)),
            },
            Type::Scalar(ty),
            span,
        ),
    }
}

/// A literal, or a choice among literals (`c ? 1.0 : (d ? 2.0 : 4.0)`).
fn literal_choice(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) => true,
        ExprKind::Select { then, else_, .. } => literal_choice(then) && literal_choice(else_),
        _ => false,
    }
}

/// `a op b` == `b flip(op) a` for comparisons.
fn flip(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::Le => BinOp::Ge,
        BinOp::Gt => BinOp::Lt,
        BinOp::Ge => BinOp::Le,
        o => o,
    }
}

/// The value of an IR expression made of literals, as Python computes it
/// (`1.0 / 3.0`, `-2 * 0.5`), if it has one.
pub(crate) fn const_scalar(e: &Expr) -> Option<ScalarValue> {
    use crate::ir::eval::{self, Mode};
    let v = match &e.kind {
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) => return e.literal_value(),
        ExprKind::Convert { arg } => {
            eval::convert(const_scalar(arg)?, e.ty.elem()?, Mode::Python).ok()
        }
        ExprKind::Unary { op, arg } => eval::unary(*op, const_scalar(arg)?, Mode::Python).ok(),
        ExprKind::Binary { op, lhs, rhs } => {
            eval::binary(*op, const_scalar(lhs)?, const_scalar(rhs)?, Mode::Python).ok()
        }
        _ => None,
    }?;
    // an integer the expression's type does not hold is wrapped at run
    // time (`-np.uint64(3)`, `np.uint8(200) + np.uint8(100)`): not Python's
    // value, so none here
    held_by(v, e)
}

/// `v` where the integer type of `e` holds it (floats and bools: `v`).
fn held_by(v: ScalarValue, e: &Expr) -> Option<ScalarValue> {
    match (v, e.ty.elem().and_then(ElemTy::int_bounds)) {
        (ScalarValue::Int(i), Some((lo, hi))) if !(lo..=hi).contains(&i128::from(i)) => None,
        _ => Some(v),
    }
}

/// The value of a condition known when compiling: made of bool literals,
/// `not`, `and`, `or` and the truth of a number literal (`truthy`'s
/// `v != 0` of a scalar argument the call is specialized on: `x if s else
/// -x` with `s = 2.5`). Python evaluates only the side of an `if` (or
/// `x if c else y`) it chooses; so does sema.
pub(super) fn const_bool(e: &Expr) -> Option<bool> {
    match &e.kind {
        ExprKind::Bool(b) => Some(*b),
        ExprKind::Unary { op: UnOp::Not, arg } => const_bool(arg).map(|b| !b),
        ExprKind::Binary { op, lhs, rhs } if matches!(op, BinOp::And | BinOp::Or) => {
            let (l, r) = (const_bool(lhs), const_bool(rhs));
            match (op, l, r) {
                (BinOp::And, Some(false), _) | (BinOp::And, _, Some(false)) => Some(false),
                (BinOp::Or, Some(true), _) | (BinOp::Or, _, Some(true)) => Some(true),
                (BinOp::And, Some(a), Some(b)) => Some(a && b),
                (_, Some(a), Some(b)) => Some(a || b),
                _ => None,
            }
        }
        ExprKind::Binary {
            op: BinOp::Ne,
            lhs,
            rhs,
        } if matches!(lhs.kind, ExprKind::Int(_) | ExprKind::Float(_))
            && const_scalar(rhs).is_some_and(|z| !crate::ir::eval::truthy(z)) =>
        {
            const_scalar(lhs).map(crate::ir::eval::truthy)
        }
        // a comparison of integers known when compiling (`x.ndim == 2`)
        ExprKind::Binary { op, lhs, rhs } => {
            crate::ir::eval::compare(*op, const_int(lhs)?, const_int(rhs)?)
        }
        _ => None,
    }
}

/// A compile-time integer value of an IR expression, if it has one.
pub(crate) fn const_int(e: &Expr) -> Option<i64> {
    let v = const_int_unchecked(e)?;
    held_by(ScalarValue::Int(v), e).map(|_| v)
}

fn const_int_unchecked(e: &Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Int(_) => match e.literal_value()? {
            ScalarValue::Int(v) => Some(v),
            _ => None,
        },
        ExprKind::Bool(b) => Some(i64::from(*b)),
        ExprKind::Convert { arg } if e.ty.elem().is_some_and(|t| t.is_int()) => const_int(arg),
        ExprKind::Unary { op: UnOp::Neg, arg } => const_int(arg)?.checked_neg(),
        ExprKind::Binary { op, lhs, rhs } => {
            let (a, b) = (const_int(lhs)?, const_int(rhs)?);
            match op {
                BinOp::Add => a.checked_add(b),
                BinOp::Sub => a.checked_sub(b),
                BinOp::Mul => a.checked_mul(b),
                BinOp::FloorDiv if b != 0 => {
                    let q = a.checked_div_euclid(b)?;
                    Some(q - i64::from(a.rem_euclid(b) != 0 && b < 0))
                }
                BinOp::Mod if b != 0 => {
                    let r = a.checked_rem_euclid(b)?;
                    Some(if b < 0 && r != 0 { r + b } else { r })
                }
                BinOp::Max | BinOp::FMax => Some(a.max(b)),
                BinOp::Min | BinOp::FMin => Some(a.min(b)),
                _ => None,
            }
        }
        _ => None,
    }
}

impl Lowerer<'_, '_> {
    /// `Some(elem)` for a scalar expression; an error for arrays and void.
    pub(super) fn scalar_elem(&mut self, t: &TExpr) -> Option<ElemTy> {
        match &t.e.ty {
            Type::Scalar(e) => Some(*e),
            Type::Array { .. } => {
                self.error(
                    Diagnostic::error("an array cannot be used as a scalar value")
                        .at(t.e.span, "this is an array")
                        .help("index it (`x[i]`) or use a slice in a slice assignment")
                        .type_error(),
                );
                None
            }
            Type::Void => {
                self.error(
                    Diagnostic::error("this call returns no value").at(t.e.span, "returns nothing"),
                );
                None
            }
        }
    }

    /// Converts both operands to their promoted type (NumPy's OverflowError
    /// for a Python int it cannot hold: `python_int_fits`).
    pub(super) fn unify(&mut self, a: TExpr, b: TExpr) -> Option<(Expr, Expr, ElemTy, bool)> {
        let ta = self.scalar_elem(&a)?;
        let tb = self.scalar_elem(&b)?;
        let (t, weak) = promote((ta, a.weak), (tb, b.weak), self.opts);
        if !weak {
            self.python_int_fits(&a, t)?;
            self.python_int_fits(&b, t)?;
        }
        Some((self.convert_exact(a, t), self.convert_exact(b, t), t, weak))
    }

    /// The exact value of a Python int known when compiling: a literal's,
    /// or one of 2**63 .. 2**64 - 1 (`wide_constants`), whose lowered
    /// expression keeps only its 64 bits.
    pub(super) fn exact_python_int(&self, v: &TExpr) -> Option<i128> {
        if !v.weak || !v.e.ty.elem().is_some_and(|t| t.is_int()) {
            return None;
        }
        let wide = self.wide_constants.iter().find(|w| w.0 == v.e.span);
        wide.map(|w| w.1)
            .or_else(|| const_int(&v.e).map(i128::from))
    }

    /// The Python number `w` (weak, known when compiling) when the NumPy
    /// type `t` changes it more than rounding to its precision does: a
    /// float or int that overflows a float `t` or falls below its normal
    /// numbers (`1e300`, `1e-60` as a float32), an int outside an integer
    /// `t`. (A float32 of `0.1` is the float rounded, as NumPy stores it:
    /// not reported.)
    pub(super) fn python_number_changed(&self, w: &TExpr, t: ElemTy) -> Option<String> {
        if !w.weak || t == ElemTy::Bool || t == ElemTy::F64 {
            return None;
        }
        let rounds_only = |f: f64| !float_changed_by(f, t);
        if let Some(c) = self.exact_python_int(w) {
            let held = match t.int_bounds() {
                Some((lo, hi)) => (lo..=hi).contains(&c),
                None => rounds_only(c as f64),
            };
            return (!held).then(|| c.to_string());
        }
        match const_scalar(&w.e)? {
            ScalarValue::Float(f) if matches!(t, ElemTy::F16 | ElemTy::F32) => {
                (!rounds_only(f)).then(|| format!("{f:?}"))
            }
            _ => None,
        }
    }

    /// Values that come from different paths into one result (`a if c
    /// else b`, a helper's returns) whose types Python keeps apart where
    /// parpy must give the result one: values of two NumPy types (`x8[i]
    /// if c else np.int16(k)`), a Python int and a Python float, a NumPy
    /// integer beside a Python float (`x8[i] if c else 1.5`). The next
    /// operation depends on the type (int8 arithmetic wraps, the Python
    /// number's does not). Bools join as `or` joins them (the other
    /// side's type); a Python int beside a NumPy integer, or a Python
    /// number beside a NumPy float, is the NumPy type's (`x8[i] if c else
    /// 100`, a helper's `return lo` of a Python int argument beside
    /// `return v`; `python_number_changed` reports a number known when
    /// compiling that the type would change). `None` when the values
    /// join; else the two sides' words, the first's first.
    pub(super) fn path_types_differ(
        &self,
        a: (ElemTy, bool, Option<ScalarValue>),
        b: (ElemTy, bool, Option<ScalarValue>),
    ) -> Option<(String, String)> {
        let word = |(t, weak, _): (ElemTy, bool, Option<ScalarValue>)| match (weak, t.is_float()) {
            (false, _) => format!("a value of type `{}`", t.numpy_name()),
            (true, true) => "a Python float".to_string(),
            (true, false) => "a Python int".to_string(),
        };
        let differ = Some((word(a), word(b)));
        if (a.0 == b.0 && a.1 == b.1) || a.0 == ElemTy::Bool || b.0 == ElemTy::Bool {
            return None;
        }
        match (a.1, b.1) {
            (true, true) => (a.0.is_float() != b.0.is_float()).then_some(differ?),
            (false, false) => (a.0 != b.0).then_some(differ?),
            _ => {
                let (s, w) = if a.1 { (b, a) } else { (a, b) };
                let default = match w.0.is_float() {
                    true => self.opts.float_type,
                    false => self.opts.int_type,
                };
                let joins = s.0 == default || s.0.is_float() || !w.0.is_float();
                (!joins).then_some(differ?)
            }
        }
    }

    /// The error of values of other types on two paths (`what`: "this
    /// conditional expression gives"), at `a_at` and `b_at`.
    pub(super) fn path_types_error(
        &mut self,
        what: &str,
        (a, b): (String, String),
        a_at: Span,
        b_at: Span,
    ) {
        // (a Python int and a Python float: write the int as a float)
        let python_numbers = a.starts_with("a Python") && b.starts_with("a Python");
        let help = match python_numbers {
            true => "write the int as a float (`1.0 if c else 0.5`): a Python float on both paths, which is the same value wherever what follows is a float; or store the value into an array element directly (`y[i] = a if c else b` stores the value chosen as Python does)",
            false => "convert the values to one type (`np.float64(v)`, `float(v)`, `np.int16(v)`), or store the value into an array element directly (`y[i] = a if c else b` stores the value chosen as Python does)",
        };
        self.error(
            Diagnostic::error(format!("{what} {a} on one path and {b} on another"))
                .at(a_at, a.clone())
                .also(b_at, b.clone())
                .note("Python keeps the value of each path with its own type, and what follows depends on it (int8 arithmetic wraps, a Python int's does not; a Python float makes an integer a float); parpy must give the result one type when compiling")
                .help(help)
                .type_error(),
        );
    }

    /// A NumPy value of type `t` (at `strong_at`) and a Python number
    /// (`weak`, at `weak_at`) `t` does not hold, which parpy would join
    /// into one `t` where Python keeps each with its own type (`x32[i] if
    /// c else 1e300`, or assigned to one local on two paths).
    pub(super) fn python_number_join_error(
        &mut self,
        what: &str,
        t: ElemTy,
        value: &str,
        strong_at: Span,
        weak_at: Span,
    ) {
        let tn = t.numpy_name();
        let kind = if value.contains(['.', 'e', 'i', 'n']) {
            "float"
        } else {
            "int"
        };
        let wide = if t.is_float() { "float64" } else { "int64" };
        self.error(
            Diagnostic::error(format!(
                "{what} a value of type `{tn}` on one path and the Python {kind} {value} on another, which `{tn}` does not hold"
            ))
            .at(weak_at, format!("the Python {kind} {value}"))
            .also(strong_at, format!("a `{tn}` value"))
            .note(format!(
                "Python keeps each value with its own type; parpy gives the result one type, `{tn}`, where {value} would become another number (a float is only rounded to the precision of its type)"
            ))
            .help(match t.is_float() {
                true => format!(
                    "convert one side explicitly: `np.{wide}(...)` of the `{tn}` value to keep the Python {kind}, or `np.{tn}({value})` if the `{tn}` value of it is meant"
                ),
                // (NumPy's `np.uint8(-1)` raises OverflowError)
                false => format!(
                    "convert the `{tn}` value explicitly to keep the Python {kind} (`np.{wide}(...)`), or use a number `{tn}` holds"
                ),
            })
            .type_error(),
        );
    }

    /// `v` converted to `to`; a Python int of 2**63 .. 2**64 - 1 becomes
    /// the float of its value (its 64 bits read as int64 are negative).
    pub(super) fn convert_exact(&self, v: TExpr, to: ElemTy) -> Expr {
        match self.exact_python_int(&v).filter(|c| *c > i64::MAX as i128) {
            Some(c) if to.is_float() => {
                Expr::new(ExprKind::Float(c as f64), Type::Scalar(to), v.e.span)
            }
            _ => convert(v.e, to),
        }
    }

    /// The statement being lowered certainly runs when the function is
    /// called (only an earlier failure stops it): in the entry function,
    /// outside every branch, loop not known to run and conditional
    /// operand, before any statement that may leave its block.
    pub(super) fn certain(&self) -> bool {
        self.is_entry && !self.inlined && self.unsure == 0
    }

    /// Python's error `d` (raising `exception`, with `message` when it
    /// runs) that the statement being lowered certainly raises: when the
    /// statement certainly runs, an error when compiling (of Python's
    /// class too: `Diagnostic::raises`), and `false`; else a check that
    /// always fails where the statement runs, and `true` (lowering goes
    /// on: the value the statement then computes is never used).
    pub(super) fn fails_when_run(
        &mut self,
        d: Diagnostic,
        message: &str,
        exception: &'static str,
        span: Span,
    ) -> bool {
        if self.certain() {
            self.error(d.raises(exception));
            return false;
        }
        let never = Expr::new(ExprKind::Bool(false), Type::Scalar(ElemTy::Bool), span);
        self.raise_unless(vec![(never, message, exception)], span);
        true
    }

    /// NumPy's check of a Python int known when compiling (`v`, weak)
    /// that takes the NumPy integer type `to` (`k8[i] + 300`, `k8[i] =
    /// 300`, `np.uint8(-1)`): out of `to`'s bounds it raises
    /// `OverflowError`, as NumPy does, where C would wrap it. `None`
    /// after reporting. A bool holds every Python int: NumPy makes it its
    /// truth (`b[i] = 2`, `b[i] = -1` and `np.bool_(2)` are True).
    pub(super) fn python_int_fits(&mut self, v: &TExpr, to: ElemTy) -> Option<()> {
        if to == ElemTy::Bool {
            return Some(());
        }
        let is_python_int = v.weak && v.e.ty.elem().is_some_and(|t| t.is_int());
        if is_python_int {
            self.python_int_argument(&v.e, to);
            if self.exact_python_int(v).is_none() {
                self.python_int_at_run_time(&v.e, to);
            }
        }
        let (Some(c), Some((lo, hi))) = (self.exact_python_int(v), to.int_bounds()) else {
            return Some(());
        };
        if (lo..=hi).contains(&c) {
            return Some(());
        }
        let name = to.numpy_name();
        let message = format!("Python integer {c} out of bounds for {name}");
        let d = Diagnostic::error(message.clone())
                .at(v.e.span, format!("a Python int that {name} cannot hold"))
                .note(format!("NumPy raises OverflowError here: a Python int takes the NumPy value's type, {name}, and does not wrap"))
                .help(format!("widen the NumPy value first (`np.int64(v)`), or write a value {name} holds"));
        self.fails_when_run(d, &message, "OverflowError", v.e.span)
            .then_some(())
    }

    /// A Python int argument passed at run time (`e`, a scalar parameter
    /// of the called function) that takes the NumPy integer type `to`:
    /// NumPy's `OverflowError` where `to` cannot hold it is a check when
    /// the call starts (`param_checks`, made by `entry_checks`), as the
    /// same argument known when compiling is an error (`python_int_fits`).
    fn python_int_argument(&mut self, e: &Expr, to: ElemTy) {
        let ExprKind::Var(p) = e.kind else { return };
        let (Some((lo, hi)), Some(Type::Scalar(from))) =
            (to.int_bounds(), Some(&self.func.var(p).ty))
        else {
            return;
        };
        let holds = from.int_bounds().is_some_and(|(a, b)| lo <= a && b <= hi);
        let param = self.func.var(p).kind == crate::ir::VarKind::Param;
        if !self.is_entry || !param || holds {
            return;
        }
        // (a use that may not run is checked where it runs: Python raises
        // only when it does)
        if !self.certain() {
            let from = *from;
            let may = from.int_bounds().unwrap_or((lo, hi));
            let Some(cond) = within(e, from, may, (lo, hi)) else {
                return;
            };
            let message = param_message(&self.func.var(p).name, to);
            self.raise_unless(vec![(cond, &message, "OverflowError")], e.span);
            return;
        }
        if !self.param_checks.iter().any(|c| (c.0, c.1) == (p, to)) {
            self.param_checks.push((p, to, e.span));
        }
    }

    /// A Python int computed at run time (`e`: a loop counter, `i + 1`, a
    /// local holding one) that takes the NumPy integer type `to` (`k8[i] +
    /// i`): NumPy's `OverflowError` where `to` cannot hold the value, a
    /// check before the statement where the loops around do not keep `e`
    /// inside `to`'s bounds (parameters: `python_int_argument`).
    fn python_int_at_run_time(&mut self, e: &Expr, to: ElemTy) {
        let Some((lo, hi)) = to.int_bounds() else {
            return;
        };
        let is_param = matches!(e.kind, ExprKind::Var(p) if self.func.var(p).kind == crate::ir::VarKind::Param);
        if const_int(e).is_some() || is_param || !crate::ir::visit::pure(e) {
            return;
        }
        let Some(from) = e.ty.elem().filter(|t| t.is_int()) else {
            return;
        };
        // the values `e` may take: the loops' ranges, else its type's
        let Some(may) = self.range(e).map(|r| (r.lo, r.hi)).or(from.int_bounds()) else {
            return;
        };
        let Some(cond) = within(e, from, may, (lo, hi)) else {
            return;
        };
        let message = format!("Python integer out of bounds for {}", to.numpy_name());
        self.raise_unless(vec![(cond, &message, "OverflowError")], e.span);
    }

    /// The checks `python_int_argument` asked for, first in the body.
    pub(super) fn entry_checks(&mut self) -> Vec<crate::ir::Stmt> {
        let mut out = vec![];
        for (p, to, span) in std::mem::take(&mut self.param_checks) {
            let var = self.func.var(p);
            let (Type::Scalar(from), Some((lo, hi))) = (&var.ty, to.int_bounds()) else {
                continue;
            };
            let (from, name) = (*from, var.name.clone());
            let may = from.int_bounds().unwrap_or((lo, hi));
            let v = Expr::var(p, Type::Scalar(from), span);
            let Some(cond) = within(&v, from, may, (lo, hi)) else {
                continue;
            };
            let message = param_message(&name, to);
            let check = Expr::assert(cond, Some(message), "OverflowError", span);
            out.push(crate::ir::Stmt::new(crate::ir::StmtKind::Expr(check), span));
        }
        out
    }

    /// A Python float known when compiling converted to the integer type
    /// `to` goes through Python's `int()` first: of NaN or an infinity
    /// Python's error; a NumPy dtype constructor (`numpy`: `np.int8(300.5)`)
    /// then takes that Python int, which must fit `to`, and parpy's `int()`
    /// one that fits its 64 bits (NumPy values convert as NumPy casts).
    pub(super) fn python_float_fits(&mut self, v: &TExpr, to: ElemTy, numpy: bool) -> Option<()> {
        let is_python_float = v.weak && v.e.ty.elem().is_some_and(|t| t.is_float());
        let Some(ScalarValue::Float(f)) = const_scalar(&v.e).filter(|_| is_python_float) else {
            return Some(());
        };
        if !to.is_int() {
            return Some(());
        }
        let (message, python) = if f.is_nan() {
            (
                "cannot convert float NaN to integer".to_string(),
                "ValueError",
            )
        } else if f.is_infinite() {
            (
                "cannot convert float infinity to integer".to_string(),
                "OverflowError",
            )
        } else {
            let t = f.trunc();
            let (lo, hi) = match numpy {
                true => to
                    .int_bounds()
                    .unwrap_or((i64::MIN as i128, i64::MAX as i128)),
                false => (i64::MIN as i128, i64::MAX as i128),
            };
            // (`t` is an integer: `{:.0}` writes its digits exactly)
            if t >= lo as f64 && t <= hi as f64 && t < 2f64.powi(63) {
                return Some(());
            }
            let message = match numpy {
                // (Python's words for an int past every C integer)
                true if t.abs() >= 2f64.powi(64) => {
                    "Python int too large to convert to C long".to_string()
                }
                true => format!(
                    "Python integer {t:.0} out of bounds for {}",
                    to.numpy_name()
                ),
                false => format!("`int()` of {t:.0} does not fit parpy's 64-bit int"),
            };
            (message, "OverflowError")
        };
        let note = match numpy {
            true => {
                format!("NumPy makes the Python int `int({f:?})` first and raises {python} here")
            }
            false => format!("Python raises {python} here, or makes an int wider than 64 bits"),
        };
        let d = Diagnostic::error(message.clone())
            .at(v.e.span, "a Python float converted to an integer")
            .note(note);
        self.fails_when_run(d, &message, python, v.e.span)
            .then_some(())
    }

    /// A Python float computed at run time that becomes the NumPy integer
    /// `to` (a store `k8[i] = v`): NumPy makes `int(v)` first, so NaN
    /// raises `ValueError`, an infinity or an int out of `to`'s bounds
    /// `OverflowError`, where C's conversion would give any value. (One
    /// known when compiling is `python_float_fits`'.)
    pub(super) fn python_float_checked(&mut self, e: Expr, to: ElemTy) -> Expr {
        let (Some(fty), Some((lo, hi))) = (e.ty.elem(), to.int_bounds()) else {
            return e;
        };
        // (a local typed as a Python float may hold NumPy's float64 by
        // now, `acc = 0.0` then `acc += x[k] * y[k]`: NumPy's element
        // store makes `int(v)` of a NumPy float too, so it is checked alike)
        if const_scalar(&e).is_some() || !fty.is_float() {
            return e;
        }
        let span = e.span;
        let value = self.stash(e, span);
        use crate::ops::MathFn;
        let float = |f: f64| Expr::new(ExprKind::Float(f), Type::Scalar(fty), span);
        // `int(v)` in lo ..= hi: lo and hi + 1 are 0 or powers of two,
        // floats of every width hold them exactly (or float16 overflows
        // to an infinity, which the comparisons get right too)
        let int = Expr::math(MathFn::Trunc, vec![value.clone()], fty, span);
        let above = Expr::compare(BinOp::Ge, int.clone(), float(lo as f64), span);
        let below = Expr::compare(BinOp::Lt, int, float(hi as f64 + 1.0), span);
        let message = format!(
            "Python integer out of bounds for {} (NumPy stores the Python float as `int(v)`)",
            to.numpy_name()
        );
        let mut checks = super::calls::nan_and_infinity_checks(&value, span);
        checks.push((above, &message, "OverflowError"));
        checks.push((below, &message, "OverflowError"));
        self.raise_unless(checks, span);
        value
    }

    /// The bound `b` of NumPy's clip of `x` (`upper` for the upper one),
    /// `None` where it clips nothing: a Python int beyond the range of
    /// `x`'s integer type on the bound's own side clips nothing, and NumPy
    /// drops it (`np.clip(k8, 0, 300)`) where it raises for any other
    /// Python int the type cannot hold (`np.clip(k8, 300, 400)`). A Python
    /// int known only at run time is clamped to the type's range on its
    /// own side (`max(lo, -128)`: the same clip), so only a value beyond
    /// the other side is NumPy's `OverflowError` (`python_int_fits`).
    pub(super) fn clip_bound(x: &TExpr, b: TExpr, upper: bool) -> Option<TExpr> {
        let (Some(tx), Some(tb)) = (x.e.ty.elem(), b.e.ty.elem()) else {
            return Some(b);
        };
        let python_int = b.weak && !x.weak && tb.is_int() && tb != ElemTy::Bool;
        let (Some((xlo, xhi)), Some((blo, bhi)), true) =
            (tx.int_bounds(), tb.int_bounds(), python_int)
        else {
            return Some(b);
        };
        match const_int(&b.e) {
            Some(c) if upper => ((c as i128) <= xhi).then_some(b),
            Some(c) => ((c as i128) >= xlo).then_some(b),
            None => {
                let (op, edge, beyond) = match upper {
                    true => (BinOp::Min, xhi, bhi > xhi),
                    false => (BinOp::Max, xlo, blo < xlo),
                };
                if !beyond {
                    return Some(b);
                }
                let span = b.e.span;
                let edge = Expr::int(edge as i64, tb, span);
                let e = Expr::binary(op, b.e, edge, Type::Scalar(tb), span);
                Some(TExpr { e, weak: true })
            }
        }
    }

    /// A comparison of a strong integer with a weak (Python) integer, done
    /// on the mathematical values as NumPy does (`u32 < -2` is false,
    /// `i8 == 300` false), not in the strong type where the weak value
    /// would wrap. `None` when the rule does not apply.
    pub(super) fn int_comparison(
        &mut self,
        op: BinOp,
        a: &TExpr,
        b: &TExpr,
        span: Span,
    ) -> Option<Option<TExpr>> {
        let (ta, tb) = (a.e.ty.elem()?, b.e.ty.elem()?);
        if !ta.is_int() || !tb.is_int() {
            return None;
        }
        if !a.weak && !b.weak {
            return signed_unsigned_comparison(op, a, b, span).map(Some);
        }
        if a.weak == b.weak {
            // two Python ints: one past int64 (`i < 2**63`) compares as
            // Python's exact ints do, with every value of the other
            let big = |v: &TExpr| self.exact_python_int(v).filter(|c| *c > i64::MAX as i128);
            let answer = match (big(a), big(b)) {
                (None, Some(_)) => beyond(op, false),
                (Some(_), None) => beyond(flip(op), false),
                _ => return None,
            };
            let e = Expr::new(ExprKind::Bool(answer), Type::Scalar(ElemTy::Bool), span);
            return Some(Some(TExpr { e, weak: false }));
        }
        // the strong operand `s`, the weak `w`, and `s sop w` == `a op b`
        let (s, w, ts, tw, sop) = if b.weak {
            (a, b, ta, tb, op)
        } else {
            (b, a, tb, ta, flip(op))
        };
        let (lo, hi) = ts.int_bounds()?;
        // the answer for every `s` when `w` lies below (above) its range
        let outside = |below: bool| beyond(sop, below);
        let bool_lit = |v: bool| Expr::new(ExprKind::Bool(v), Type::Scalar(ElemTy::Bool), span);
        // `a op b` with `s` and `w` converted
        let cmp = |s: Expr, w: Expr| {
            let (l, r) = if b.weak { (s, w) } else { (w, s) };
            Expr::binary(op, l, r, Type::Scalar(ElemTy::Bool), span)
        };
        let strong = |e: Expr| Some(Some(TExpr { e, weak: false }));
        if let Some(c) = self.exact_python_int(w) {
            if (lo..=hi).contains(&c) {
                return None;
            }
            return strong(bool_lit(outside(c < lo)));
        }
        if ts.size() < 8 || ts.is_signed_int() {
            // a type holding both
            let t = promote_strong(ts, tw);
            return strong(cmp(convert(s.e.clone(), t), convert(w.e.clone(), t)));
        }
        // uint64 against a runtime Python int: `w < 0 ? outside : s op (u64)w`
        let neg = Expr::new(
            ExprKind::Binary {
                op: BinOp::Lt,
                lhs: Box::new(w.e.clone()),
                rhs: Box::new(Expr::int(0, tw, span)),
            },
            Type::Scalar(ElemTy::Bool),
            span,
        );
        strong(Expr::select_as(
            neg,
            bool_lit(outside(true)),
            cmp(s.e.clone(), convert(w.e.clone(), ts)),
            Type::Scalar(ElemTy::Bool),
            span,
        ))
    }

    /// Converts a value for a store into `dst`: implicit when the value is
    /// weak, or widens; a narrowing store is an error with a hint.
    pub(super) fn store_convert(&mut self, v: TExpr, dst: ElemTy, dst_span: Span) -> Option<Expr> {
        let src = self.scalar_elem(&v)?;
        self.python_int_fits(&v, dst)?;
        if v.weak && src.is_float() && dst.is_int() {
            // NumPy stores a Python float into an integer array as the
            // Python int `int(v)`, which must fit
            self.python_float_fits(&v, dst, true)?;
            return Some(convert(self.python_float_checked(v.e, dst), dst));
        }
        if v.weak || widens(src, dst) {
            // (a Python int of 2**63 or more keeps its value in a float)
            return Some(self.convert_exact(v, dst));
        }
        let what = if src.is_float() && !dst.is_float() {
            "a float to an integer"
        } else if dst == ElemTy::Bool {
            "a number to a bool"
        } else {
            "a wider type to a narrower one"
        };
        let mut d = Diagnostic::error(format!(
            "cannot store a value of type `{src}` into a destination of type `{dst}` implicitly"
        ))
        .at(v.e.span, format!("this value has type `{src}`"))
        .also(dst_span, format!("the destination has type `{dst}`"))
        .note(format!(
            "storing would convert {what} and may lose information"
        ))
        .help(format!(
            "convert explicitly: `parpy.builtin.convert(e, parpy.types.{})`",
            dst.short_name().to_uppercase()
        ))
        .type_error();
        // `float()` / `int()` convert to the default types only.
        if dst == self.opts.float_type {
            d = d.help("or use `float(e)`");
        } else if dst == self.opts.int_type {
            d = d.help("or use `int(e)`");
        }
        self.error(d);
        None
    }

    /// A bool expression from any scalar (`x != 0` for numbers).
    pub(super) fn truthy(&mut self, t: TExpr) -> Option<Expr> {
        let ty = self.scalar_elem(&t)?;
        if ty == ElemTy::Bool {
            return Some(t.e);
        }
        let span = t.e.span;
        let zero = if ty.is_float() {
            Expr::new(ExprKind::Float(0.0), Type::Scalar(ty), span)
        } else {
            Expr::int(0, ty, span)
        };
        Some(Expr::new(
            ExprKind::Binary {
                op: BinOp::Ne,
                lhs: Box::new(t.e),
                rhs: Box::new(zero),
            },
            Type::Scalar(ElemTy::Bool),
            span,
        ))
    }

    /// An integer expression of `options.int_type` (indices, range bounds).
    /// `t` as the index of an array's element: an integer, as
    /// `index_value`; a boolean is NumPy's mask, which selects elements
    /// (a masked store is `sema::masks`'), refused here.
    pub(super) fn element_index(&mut self, t: TExpr, what: &str) -> Option<Expr> {
        if self.scalar_elem(&t)? == ElemTy::Bool {
            self.mask_read_error(t.e.span);
            return None;
        }
        self.index_value(t, what)
    }

    /// A boolean index (a mask) read where parpy makes no array of the
    /// elements it selects.
    pub(super) fn mask_read_error(&mut self, span: crate::diag::Span) {
        self.error(
            Diagnostic::error("a boolean index selects elements (a mask), which parpy supports in a store or as what a reduction reads")
                .at(span, "a boolean index")
                .note("NumPy's `s[m]` is a new array of the elements where `m` is true; parpy makes one only for a reduction of it (`np.sum(s[m])`, `s[m].max()`, `np.mean(s[m])`, `len(s[m])`)")
                .help("reduce the masked read itself, use `np.where` (`np.sum(np.where(m, s * 2.0, 0.0))`), or store through the mask (`t[m] = v`)")
                .type_error(),
        );
    }

    pub(super) fn index_value(&mut self, t: TExpr, what: &str) -> Option<Expr> {
        let ty = self.scalar_elem(&t)?;
        if ty.is_float() {
            self.error(
                Diagnostic::error(format!("{what} must be an integer, found `{ty}`"))
                    .at(t.e.span, format!("this has type `{ty}`"))
                    .help("convert it with `int(...)`")
                    .type_error(),
            );
            return None;
        }
        let it = self.opts.int_type;
        let (Some((_, hi)), Some((_, ihi))) = (ty.int_bounds(), it.int_bounds()) else {
            return Some(convert(t.e, it));
        };
        if hi <= ihi || ty.is_signed_int() {
            return Some(convert(t.e, it));
        }
        // an unsigned index above the index type's range (`2**64 - 1` of a
        // uint64) is out of bounds, not negative: saturated, so the bounds
        // check sees it past the end
        let span = t.e.span;
        let limit = Expr::int(ihi as i64, ty, span);
        let above = Expr::compare(BinOp::Gt, t.e.clone(), limit, span);
        Some(Expr::select_as(
            above,
            Expr::int(ihi as i64, it, span),
            convert(t.e, it),
            Type::Scalar(it),
            span,
        ))
    }
}

/// `s op w` for every value `s` of an integer type when `w` lies outside
/// its range: below it (`below`) or above it. The one rule of comparisons
/// that NumPy and Python make exactly (`u32 < -2` is false, `i < 2**63`
/// true).
fn beyond(op: BinOp, below: bool) -> bool {
    match op {
        BinOp::Lt | BinOp::Le => !below,
        BinOp::Gt | BinOp::Ge => below,
        BinOp::Eq => false,
        _ => true,
    }
}

/// `a op b` of a signed integer and a uint64 (NumPy 2 compares them
/// exactly, where their promoted type, float64, rounds both): `s < 0 ?
/// (the answer for a negative s) : (u64)s op u`. `None` for other pairs.
fn signed_unsigned_comparison(op: BinOp, a: &TExpr, b: &TExpr, span: Span) -> Option<TExpr> {
    let (ta, tb) = (a.e.ty.elem()?, b.e.ty.elem()?);
    // the signed operand, and `op` as seen from it (`s sop u`)
    let (s, u, ts, sop) = match (ta, tb) {
        (t, ElemTy::U64) if t.is_signed_int() => (a, b, t, op),
        (ElemTy::U64, t) if t.is_signed_int() => (b, a, t, flip(op)),
        _ => return None,
    };
    if !sop.is_comparison() {
        return None;
    }
    // (a negative `s` lies below every uint64)
    let negative = beyond(sop, false);
    let bool_ty = Type::Scalar(ElemTy::Bool);
    let below = Expr::binary(
        BinOp::Lt,
        s.e.clone(),
        Expr::int(0, ts, span),
        bool_ty.clone(),
        span,
    );
    let unsigned = Expr::binary(
        sop,
        convert(s.e.clone(), ElemTy::U64),
        u.e.clone(),
        bool_ty.clone(),
        span,
    );
    let e = Expr::select_as(
        below,
        Expr::new(ExprKind::Bool(negative), bool_ty.clone(), span),
        unsigned,
        bool_ty,
        span,
    );
    Some(TExpr { e, weak: false })
}

/// The test that `e` (of integer type `from`, whose values lie in `may`)
/// lies in `lo..=hi`: `e >= lo` where `may` reaches below, `e <= hi` where
/// above; `None` when `may` lies inside.
fn within(e: &Expr, from: ElemTy, may: (i128, i128), (lo, hi): (i128, i128)) -> Option<Expr> {
    let span = e.span;
    let side =
        |op, bound: i128| Expr::compare(op, e.clone(), Expr::int(bound as i64, from, span), span);
    [
        (may.0 < lo).then(|| side(BinOp::Ge, lo)),
        (hi < may.1).then(|| side(BinOp::Le, hi)),
    ]
    .into_iter()
    .flatten()
    .reduce(|x, y| Expr::binary(BinOp::And, x, y, Type::Scalar(ElemTy::Bool), span))
}

/// Whether the float type `t` (float16 or float32) turns the finite
/// number `f` into another number, not only rounds it to its precision:
/// an overflow to an infinity, a number below `t`'s normal numbers that
/// loses more (`1e300`, `1e-60` as a float32). The one rule of a Python
/// number joined with a NumPy float value (a local assigned both, a
/// conditional expression, a helper's returns).
pub(super) fn float_changed_by(f: f64, t: ElemTy) -> bool {
    if !f.is_finite() || !matches!(t, ElemTy::F16 | ElemTy::F32) {
        return false;
    }
    let r = crate::ir::eval::round_float(f, t);
    // (within half a unit in the last place of a normal number)
    let eps = if t == ElemTy::F16 {
        2f64.powi(-11)
    } else {
        2f64.powi(-24)
    };
    // (an overflow to an infinity: an infinite error)
    (r - f).abs() > f.abs() * eps
}

/// The message of NumPy's `OverflowError` for the Python int parameter
/// `name` that the NumPy integer `to` cannot hold.
fn param_message(name: &str, to: ElemTy) -> String {
    format!(
        "Python integer `{name}` out of bounds for {} (NumPy raises: a Python int takes the NumPy value's type and does not wrap)",
        to.numpy_name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ElemTy::*;

    #[test]
    fn numpy_promotion() {
        assert_eq!(promote_strong(I32, I64), I64);
        assert_eq!(promote_strong(I32, F32), F64);
        assert_eq!(promote_strong(I64, F32), F64);
        assert_eq!(promote_strong(Bool, F32), F32);
        assert_eq!(promote_strong(F32, F64), F64);
    }

    #[test]
    fn weak_literals() {
        let o = Options::default();
        assert_eq!(promote((F32, false), (F64, true), &o), (F32, false));
        assert_eq!(promote((I32, false), (I64, true), &o), (I32, false));
        assert_eq!(promote((I32, false), (F64, true), &o), (F64, false));
        assert_eq!(promote((I64, true), (F64, true), &o), (F64, true));
        assert_eq!(promote((I64, true), (I64, true), &o), (I64, true));
    }

    #[test]
    fn store_rules() {
        assert!(widens(F32, F64));
        assert!(widens(I32, F32));
        assert!(widens(I32, I64));
        assert!(!widens(F64, F32));
        assert!(!widens(F32, I32));
        assert!(!widens(I64, I32));
    }

    #[test]
    fn folds_constants() {
        let s = Span::default();
        let e = Expr::new(
            ExprKind::Binary {
                op: BinOp::FloorDiv,
                lhs: Box::new(Expr::int(-7, I64, s)),
                rhs: Box::new(Expr::int(2, I64, s)),
            },
            Type::Scalar(I64),
            s,
        );
        assert_eq!(const_int(&e), Some(-4));
    }
}
