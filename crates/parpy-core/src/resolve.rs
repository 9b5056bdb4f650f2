//! Global name resolution. The core does not know Python objects: it asks a
//! [`Resolver`] (implemented by the binding over a function's globals and
//! closure, or by [`StaticResolver`] in tests) what a dotted name denotes.

use std::collections::HashMap;
use std::sync::Arc;

use crate::ops::{AtomicOp, BinOp, MathFn, ReduceOp, UnOp};
use crate::syntax::FunctionDef;
use crate::types::{ElemTy, ScalarValue};

/// The parpy (and Python) builtins usable inside jit code.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Builtin {
    /// `parpy.label(name)`
    Label,
    /// `parpy.gpu` (used as `with parpy.gpu:`)
    Gpu,
    /// `parpy.operators.sum` / `parpy.reduce.sum` / `parpy.sum`, ...
    Reduce(ReduceOp),
    /// `parpy.math.sqrt`, `np.sqrt`, ...
    Math(MathFn),
    /// A function of Python's `math` module (`math.sqrt`): `Math`, and
    /// Python's `ValueError` / `OverflowError` where it has no value
    /// (`math.sqrt(-1.0)`, `math.exp(1000.0)`) instead of NaN or inf.
    PyMath(MathFn),
    /// A math function whose Python result is an `int`: `math.floor`,
    /// `math.ceil`, `round(x)`.
    MathToInt(MathFn),
    /// `parpy.builtin.convert(e, ty)`
    Convert,
    /// `parpy.builtin.maximum` / `minimum` (`np.maximum` / `np.minimum`)
    Maximum,
    Minimum,
    /// `np.fmax` / `np.fmin`: NaN loses
    Fmax,
    Fmin,
    /// `parpy.builtin.inf`
    Inf,
    /// `parpy.builtin.inline(f(...))`: the helper's body in place of the call.
    Inline,
    /// `parpy.builtin.static_backend_eq(b)`: a compile-time bool.
    StaticBackendEq,
    /// `parpy.builtin.static_types_eq(a, b)`: a compile-time bool.
    StaticTypesEq,
    /// `parpy.builtin.static_fail(msg)`: a compile error when reached.
    StaticFail,
    /// `parpy.atomic.add` / `max` / `min` (a statement of its own).
    Atomic(AtomicOp),
    /// `parpy.atomic` itself, as in `with parpy.atomic:` (its `+=` updates
    /// of array elements are atomic).
    AtomicBlock,
    /// `np.where(c, a, b)` of scalars.
    Where,
    /// `np.select(condlist, choicelist, default=0)`: the value of the first
    /// condition that holds, elementwise (`sema/calls.rs` `select`).
    Select,
    /// A NumPy ufunc that parpy writes with its operators and other
    /// builtins (`np.add(a, b)` is `a + b`): see [`Ufunc`].
    Ufunc(Ufunc),
    /// `np.clip(x, lo, hi)` of scalars.
    Clip,
    /// `np.mean(s)` / `s.mean()` of a slice.
    Mean,
    /// `np.var(s)` / `np.std(s)` (and the methods) of a slice.
    Var,
    Std,
    /// `np.linalg.norm(v)` of a 1-D slice.
    Norm,
    /// `np.any(s)` / `np.all(s)` (and the methods) of a slice: whether any
    /// / every element is non-zero.
    Any,
    All,
    /// `np.count_nonzero(s)` of a slice.
    CountNonzero,
    /// `np.dot(a, b)` of two 1-D slices.
    Dot,
    /// `np.inner(a, b)` / `np.vdot(a, b)` of two 1-D operands: their dot
    /// product.
    Inner,
    /// `np.copyto(dst, src)` as a statement: `dst[...] = src`.
    CopyTo,
    /// `np.nansum` / `nanprod` / `nanmax` / `nanmin` and `np.nanmean` of a
    /// slice: NaN skipped (`sema::nan_reductions`).
    NanReduce(ReduceOp),
    NanMean,
    /// `np.nanvar` / `np.nanstd` of a slice: NaN skipped
    /// (`sema::nan_reductions`).
    NanVar,
    NanStd,
    /// `np.ptp(s)`: `max - min`.
    Ptp,
    /// `np.average(s)` without weights: `np.mean(s)`.
    Average,
    /// `np.nan_to_num(x, nan=, posinf=, neginf=)` of a number
    /// (`sema::ufuncs`).
    NanToNum,
    /// `np.isclose(a, b, rtol=, atol=, equal_nan=)` of numbers.
    IsClose,
    /// `math.isclose(a, b, rel_tol=, abs_tol=)` of numbers: CPython's.
    MathIsClose,
    /// `math.gcd(*ints)` / `math.lcm(*ints)` (`MathFn::Gcd` / `Lcm`): of
    /// Python ints (and what has `__index__`), a Python int.
    MathGcdLcm(MathFn),
    /// `math.radians(x)` (`true`) / `math.degrees(x)`: a Python float.
    MathAngle(bool),
    /// `np.isin(element, test_elements, assume_unique=, invert=)` of a
    /// number or elementwise of an array expression, against an array,
    /// a slice, a tuple or list literal (`sema::membership`).
    IsIn,
    /// `np.real(x)` of a number.
    Real,
    /// `math.ulp(x)`: CPython's, from `nextafter`.
    MathUlp,
    /// `math.prod(items, start=1)` of a tuple or list literal: `start *
    /// items[0] * ...`, as Python multiplies.
    MathProd,
    /// `math.fsum(items)` of a 1-D slice, a tuple or list literal or a
    /// generator: CPython's correctly rounded float sum (`sema::fsum`).
    MathFsum,
    /// `math.dist(p, q)` of two tuple or list literals of one length:
    /// `math.hypot` of the float64 differences, as CPython computes it.
    MathDist,
    /// Python's integer functions `math.factorial`, `math.comb`,
    /// `math.perm` and `math.isqrt` (`sema::int_math`): of Python ints, a
    /// Python int.
    MathInt(IntFn),
    /// `np.allclose(a, b, rtol, atol, equal_nan)`: `np.all` of
    /// `np.isclose`, a Python bool.
    AllClose,
    /// `np.array_equal(a1, a2, equal_nan)` (`false`) and
    /// `np.array_equiv(a1, a2)` (`true`): whether the arrays have one
    /// shape (`array_equiv`: shapes that broadcast) and equal elements, a
    /// Python bool (`sema::array_equal`).
    ArrayEqual(bool),
    /// `np.outer(a, b)` of 1-D operands: `a[:, None] * b`.
    Outer,
    /// `np.einsum(subscripts, *operands)`: a sum of products
    /// (`sema::einsum`).
    Einsum,
    /// `np.flip(x, axis)` of an array or a subscript (the axis given:
    /// `np.fliplr` is 1, `np.flipud` 0): its slices walked backwards.
    Flip(Option<i64>),
    /// `np.diff(x, n, axis)` of an array or a subscript: differences of
    /// its windows (`x[1:] - x[:-1]`, `n` times).
    Diff,
    /// `np.diagonal(x, offset, axis1, axis2)` and `np.diag(x, k)` (`true`;
    /// of a 2-D view) of an array or a subscript: the diagonal's view.
    Diagonal(bool),
    /// `np.trace(x, offset, axis1, axis2)`: the sum of the diagonal.
    Trace,
    /// `np.roll(x, shift, axis)` of an array or a subscript: its slice
    /// rolled (indices cyclic).
    Roll,
    /// `np.pad(x, pad_width, mode, ...)` of a 1-D array read by an array
    /// expression (`sema::pad`).
    Pad,
    /// `np.cross(a, b)` of 3-element vectors (the last axis): NumPy's
    /// formula, of rolled views of `a` and `b`.
    Cross,
    /// `np.median(s)` of a slice, all its elements (`sema::order_stats`).
    Median,
    /// `np.percentile(s, q)` (`true`) / `np.quantile(s, q)` of a slice, all
    /// its elements (`sema::order_stats`).
    Quantile(bool),
    /// `np.sort(s)` / `np.argsort(s)` (`true`) of a 1-D slice, assigned to a
    /// slice (`sema::sort`).
    Sort(bool),
    /// `np.searchsorted(s, v, side)` of a 1-D slice and a number
    /// (`sema::sort`).
    SearchSorted,
    /// `np.convolve(a, v, mode)` of 1-D operands, the whole value stored
    /// into a 1-D slice (`sema::convolve`).
    Convolve,
    /// `np.interp(x, xp, fp, left, right)` of a number and 1-D slices
    /// (`sema::interp`).
    Interp,
    /// `np.trapezoid(y, x, dx, axis)` (`np.trapz`): the trapezoidal rule
    /// along an axis (`sema::trapezoid`).
    Trapezoid,
    /// `np.polyval(p, x)`: Horner's rule over the coefficients
    /// (`sema::polyval`).
    Polyval,
    /// `np.cov` (false) and `np.corrcoef` (true) of one or two 1-D arrays
    /// (`sema::cov`).
    Cov(bool),
    /// `np.digitize(x, bins, right)` of a number (`sema::digitize`).
    Digitize,
    /// `np.histogram(a, bins, range, density, weights)`, stored by an
    /// assignment (`sema::histogram`).
    Histogram,
    /// `np.argmax(s)` / `np.argmin(s)` of a 1-D slice.
    ArgMax,
    ArgMin,
    /// `np.nanargmax(s)` / `np.nanargmin(s)`: the search with NaNs read as
    /// -inf / inf, NumPy's ValueError where all are NaN.
    NanArgMax,
    NanArgMin,
    /// `np.cumsum(s)` / `np.cumprod(s)` of a 1-D slice, assigned to a
    /// slice.
    Cumulative(ReduceOp),
    /// `np.<ufunc>.reduce(x, axis=0)`: the NumPy reduction that is made of
    /// the ufunc (`np.add.reduce` is `np.sum`, `np.maximum.reduce` is
    /// `np.max`, `np.fmax.reduce` is `np.nanmax`, `np.logical_or.reduce`
    /// is `np.any`), along axis 0 unless told.
    UfuncReduce(&'static Builtin),
    /// `np.<ufunc>.accumulate(x, axis=0)`: `np.cumsum` / `np.cumprod` and
    /// the running maximum / minimum (`np.maximum.accumulate`), along
    /// axis 0 unless told; assigned to a slice.
    UfuncAccumulate(ReduceOp),
    /// `np.<ufunc>.reduce(x, axis=0)` of another binary ufunc parpy has
    /// elementwise (`np.subtract.reduce`, `np.logaddexp.reduce`; its
    /// NumPy name, one of [`FOLDED_UFUNCS`]): NumPy's left fold `r =
    /// op(r, a[k])` from `a[0]`, in order (`sema::folds`).
    UfuncFold(&'static str),
    /// `np.<ufunc>.accumulate(x, axis=0)` of such a ufunc: the running
    /// fold, the whole right side of a slice assignment.
    UfuncFoldScan(&'static str),
    /// Python's `sum(s)` of a 1-D slice (added in the elements' type).
    Sum,
    /// Python builtins.
    Range,
    Min,
    Max,
    Abs,
    Float,
    Int,
    /// `bool(x)`: Python's truth of a number (NaN is true).
    Bool,
    Len,
    /// `enumerate(x[, start])` and `zip(x, y, ...)`: the iterables of
    /// `for` loops over arrays and slices.
    Enumerate,
    Zip,
    /// `reversed(range(...))` or `reversed(x)` of a 1-D array or slice.
    Reversed,
    /// `q, r = divmod(a, b)` (unpacked where it is called).
    Divmod,
    /// Python's `pow(a, b)`: `a ** b`.
    Pow,
    /// `f, w = np.modf(x)`: the fractional and integral parts, with the
    /// sign of `x`; `m, e = np.frexp(x)` (`frexp`): the mantissa and the
    /// power of two; `math.modf` / `math.frexp` (`python`): the Python
    /// numbers of `float(x)` (unpacked where it is called; `ufuncs.rs`
    /// `float_parts`).
    FloatParts {
        frexp: bool,
        python: bool,
    },
    /// `r, c = np.unravel_index(k, dims)` (unpacked where it is called)
    /// and `np.ravel_multi_index((r, c), dims)` of scalar indices
    /// (`sema::unravel`).
    UnravelIndex,
    RavelMultiIndex,
    /// Python's `sorted((a, b, c), key=f, reverse=r)` of a tuple or list
    /// literal of a few numbers (unpacked or indexed where it is called;
    /// `sema::sorted`).
    Sorted,
}

/// The NumPy ufuncs that `sema::ufuncs` lowers as the expression they
/// stand for, so that each has the semantics of that expression (one rule
/// for `np.add(a, b)` and `a + b`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Ufunc {
    /// `np.add`, `np.less`, `np.bitwise_and`, ...: the operator.
    Operator(BinOp),
    /// `np.negative(x)`: `-x`; `np.invert(x)`: `~x`.
    Unary(UnOp),
    /// `np.positive(x)`: `x`.
    Positive,
    /// `np.logical_and` / `or` / `xor` (as `BitAnd` / `BitOr` / `BitXor`
    /// of the operands' truth) and `np.logical_not`.
    Logical(BinOp),
    LogicalNot,
    /// `np.square(x)`: `x ** 2` (an integer stays an integer).
    Square,
    /// `np.rint(x)`: `np.round(x)` in the float type NumPy computes an
    /// integer in.
    Rint,
    /// `np.reciprocal(x)`: `1 / x` of a float.
    Reciprocal,
    /// `np.deg2rad(x)` / `np.radians(x)`: `x * (pi / 180)`, and back.
    Deg2Rad,
    Rad2Deg,
    /// `np.fmod(a, b)`: C's remainder (the sign of `a`): `math.fmod` of
    /// floats, of integers the remainder of the division toward zero (0
    /// for a zero divisor, as NumPy gives).
    Fmod,
    /// `np.fabs(x)`: `abs` in the float type NumPy computes an integer in.
    Fabs,
    /// `np.signbit(x)`: whether the sign bit is set (`-0.0`, `-nan`).
    SignBit,
    /// `np.heaviside(x, h0)`: 0, `h0` or 1 by the sign of `x` (NaN: NaN).
    Heaviside,
    /// `np.float_power(a, b)`: `a ** b` in float64.
    FloatPower,
    /// `np.sinc(x)`: `sin(pi x) / (pi x)` as NumPy writes it.
    Sinc,
    /// `np.logaddexp(a, b)`: `log(exp(a) + exp(b))` without overflow, as
    /// NumPy computes it; `np.logaddexp2` in base 2.
    LogAddExp,
    LogAddExp2,
    /// `np.gcd(a, b)` / `np.lcm(a, b)` of integers (`MathFn::Gcd` / `Lcm`).
    Gcd,
    Lcm,
    /// `np.isposinf(x)` / `np.isneginf(x)` (`true`): `x == inf`.
    IsSignedInf(bool),
    /// `np.conjugate(x)` / `np.conj` of a real number: itself.
    Conjugate,
    /// `np.ldexp(x, e)`, `np.nextafter(x, y)` (`MathFn::Ldexp`,
    /// `NextAfter`) and `np.spacing(x)`: `nextafter(x, copysign(inf, x)) -
    /// x`, NaN of an infinity.
    Ldexp,
    NextAfter,
    Spacing,
    /// `np.bitwise_count(x)`: the 1-bits of `|x|` of an integer (a bool
    /// counts as one bit), a uint8.
    BitwiseCount,
}

impl Builtin {
    /// Whether Python's builtin or `math` function `self`, called with
    /// `nargs` arguments, takes Python numbers only: `float(v)`, `int(v)`,
    /// `bool(v)`, `math.sqrt(v)`, `math.floor(v)`, `math.isclose(a, b)`,
    /// `max(a, b)`. Given an array of more than one element Python raises
    /// (NumPy's `round(v)`, `abs(v)` and `pow(v, 2)` are elementwise;
    /// `max(v)` of one array is its reduction).
    pub fn takes_python_numbers(self, nargs: usize) -> bool {
        match self {
            Builtin::Min | Builtin::Max => nargs >= 2,
            Builtin::PyMath(_)
            | Builtin::MathToInt(MathFn::Floor | MathFn::Ceil | MathFn::Trunc)
            | Builtin::MathIsClose
            | Builtin::MathGcdLcm(_)
            | Builtin::MathAngle(_)
            | Builtin::MathUlp
            | Builtin::MathInt(_)
            | Builtin::Float
            | Builtin::Int
            | Builtin::Bool => true,
            _ => false,
        }
    }
    /// Whether this is one of NumPy's reductions (`np.sum`, `np.mean`,
    /// `np.argmax`, `np.nanvar`, `np.linalg.norm`, ...): of an array along
    /// `axis` (all of it by default), of a number that of its 0-d array.
    pub fn numpy_reduction(self) -> bool {
        matches!(
            self,
            Builtin::Reduce(_)
                | Builtin::Mean
                | Builtin::Var
                | Builtin::Std
                | Builtin::Any
                | Builtin::All
                | Builtin::CountNonzero
                | Builtin::ArgMax
                | Builtin::ArgMin
                | Builtin::NanArgMax
                | Builtin::NanArgMin
                | Builtin::Norm
                | Builtin::NanReduce(_)
                | Builtin::NanMean
                | Builtin::NanVar
                | Builtin::NanStd
                | Builtin::Ptp
                | Builtin::Average
        )
    }

    /// Maps the canonical name that the Python package attaches to each of its
    /// builtins (`__parpy_builtin__`), or a Python builtin's name, to the
    /// builtin. Examples: `label`, `gpu`, `operators.sum`, `math.sqrt`,
    /// `builtin.convert`, `range`.
    pub fn from_name(name: &str) -> Option<Builtin> {
        let b = match name {
            // (`parpy.builtin.label` is `parpy.label`, as in ParPy)
            "label" | "builtin.label" => Builtin::Label,
            "gpu" | "builtin.gpu" => Builtin::Gpu,
            "builtin.convert" => Builtin::Convert,
            "builtin.maximum" => Builtin::Maximum,
            "builtin.minimum" => Builtin::Minimum,
            "builtin.inf" => Builtin::Inf,
            "builtin.inline" => Builtin::Inline,
            "builtin.static_backend_eq" => Builtin::StaticBackendEq,
            "builtin.static_types_eq" => Builtin::StaticTypesEq,
            "builtin.static_fail" => Builtin::StaticFail,
            "range" => Builtin::Range,
            "min" => Builtin::Min,
            "max" => Builtin::Max,
            "abs" => Builtin::Abs,
            "float" => Builtin::Float,
            "int" => Builtin::Int,
            "bool" => Builtin::Bool,
            "len" => Builtin::Len,
            "enumerate" => Builtin::Enumerate,
            "zip" => Builtin::Zip,
            "reversed" => Builtin::Reversed,
            "divmod" => Builtin::Divmod,
            "sorted" => Builtin::Sorted,
            "pow" => Builtin::Pow,
            "any" => Builtin::Any,
            "all" => Builtin::All,
            "sum" => Builtin::Sum,
            "atomic" => Builtin::AtomicBlock,
            "atomic.add" => Builtin::Atomic(AtomicOp::Add),
            "atomic.max" => Builtin::Atomic(AtomicOp::Max),
            "atomic.min" => Builtin::Atomic(AtomicOp::Min),
            "round" => Builtin::MathToInt(MathFn::Round),
            _ => {
                if let Some(op) = name
                    .strip_prefix("operators.")
                    .or_else(|| name.strip_prefix("reduce."))
                {
                    return ReduceOp::from_name(op).map(Builtin::Reduce);
                }
                if let Some(f) = name.strip_prefix("math.") {
                    return MathFn::from_name(f).map(Builtin::Math);
                }
                return None;
            }
        };
        Some(b)
    }
}

/// Which builtin a NumPy function stands for inside jit code (`np.sqrt` is
/// `parpy.math.sqrt`, `np.sum` is `parpy.sum`); `name` is the function's
/// `__name__` (`np.abs` is `absolute`).
pub fn numpy_builtin(name: &str) -> Option<Builtin> {
    let math = |f| Some(Builtin::Math(f));
    let ufunc = |u| Some(Builtin::Ufunc(u));
    let op = |o| Some(Builtin::Ufunc(Ufunc::Operator(o)));
    match name {
        "sqrt" | "exp" | "log" | "sin" | "cos" | "tan" | "tanh" | "floor" | "ceil" | "expm1"
        | "log1p" | "hypot" | "copysign" | "cbrt" | "round" | "isnan" | "isinf" | "isfinite"
        | "log10" | "log2" | "exp2" | "sinh" | "cosh" | "trunc" | "sign" => {
            MathFn::from_name(name).map(Builtin::Math)
        }
        "around" => math(MathFn::Round),
        "arcsin" => math(MathFn::Asin),
        "arccos" => math(MathFn::Acos),
        "arctan" => math(MathFn::Atan),
        "arcsinh" => math(MathFn::Asinh),
        "arccosh" => math(MathFn::Acosh),
        "arctanh" => math(MathFn::Atanh),
        "absolute" | "abs" => Some(Builtin::Abs),
        // (`np.fabs` computes in a float type: `math.fabs`)
        "fabs" => ufunc(Ufunc::Fabs),
        "arctan2" => math(MathFn::Atan2),
        // `np.power(a, b)` is `a ** b` (integers stay integers)
        "power" | "pow" => op(BinOp::Pow),
        "fmod" => ufunc(Ufunc::Fmod),
        "minimum" => Some(Builtin::Minimum),
        "maximum" => Some(Builtin::Maximum),
        "fmin" => Some(Builtin::Fmin),
        "fmax" => Some(Builtin::Fmax),
        "sum" => Some(Builtin::Reduce(ReduceOp::Sum)),
        "prod" => Some(Builtin::Reduce(ReduceOp::Prod)),
        "max" | "amax" => Some(Builtin::Reduce(ReduceOp::Max)),
        "min" | "amin" => Some(Builtin::Reduce(ReduceOp::Min)),
        "square" => ufunc(Ufunc::Square),
        "fix" => math(MathFn::Trunc),
        "add" => op(BinOp::Add),
        "subtract" => op(BinOp::Sub),
        "multiply" => op(BinOp::Mul),
        // (`np.true_divide` is `np.divide`, `np.mod` is `np.remainder`)
        "divide" => op(BinOp::Div),
        "floor_divide" => op(BinOp::FloorDiv),
        "remainder" => op(BinOp::Mod),
        "bitwise_and" => op(BinOp::BitAnd),
        "bitwise_or" => op(BinOp::BitOr),
        "bitwise_xor" => op(BinOp::BitXor),
        "left_shift" => op(BinOp::Shl),
        "right_shift" => op(BinOp::Shr),
        "equal" => op(BinOp::Eq),
        "not_equal" => op(BinOp::Ne),
        "less" => op(BinOp::Lt),
        "less_equal" => op(BinOp::Le),
        "greater" => op(BinOp::Gt),
        "greater_equal" => op(BinOp::Ge),
        "negative" => ufunc(Ufunc::Unary(UnOp::Neg)),
        "invert" => ufunc(Ufunc::Unary(UnOp::BitNot)),
        "positive" => ufunc(Ufunc::Positive),
        "logical_and" => ufunc(Ufunc::Logical(BinOp::BitAnd)),
        "logical_or" => ufunc(Ufunc::Logical(BinOp::BitOr)),
        "logical_xor" => ufunc(Ufunc::Logical(BinOp::BitXor)),
        "logical_not" => ufunc(Ufunc::LogicalNot),
        "rint" => ufunc(Ufunc::Rint),
        "reciprocal" => ufunc(Ufunc::Reciprocal),
        "deg2rad" | "radians" => ufunc(Ufunc::Deg2Rad),
        "rad2deg" | "degrees" => ufunc(Ufunc::Rad2Deg),
        "signbit" => ufunc(Ufunc::SignBit),
        "logaddexp" => ufunc(Ufunc::LogAddExp),
        "logaddexp2" => ufunc(Ufunc::LogAddExp2),
        "heaviside" => ufunc(Ufunc::Heaviside),
        "float_power" => ufunc(Ufunc::FloatPower),
        "sinc" => ufunc(Ufunc::Sinc),
        "isposinf" => ufunc(Ufunc::IsSignedInf(false)),
        "isneginf" => ufunc(Ufunc::IsSignedInf(true)),
        "conjugate" | "conj" => ufunc(Ufunc::Conjugate),
        "real" => Some(Builtin::Real),
        "ldexp" => ufunc(Ufunc::Ldexp),
        "nextafter" => ufunc(Ufunc::NextAfter),
        "spacing" => ufunc(Ufunc::Spacing),
        "bitwise_count" => ufunc(Ufunc::BitwiseCount),
        "gcd" => ufunc(Ufunc::Gcd),
        "lcm" => ufunc(Ufunc::Lcm),
        "nan_to_num" => Some(Builtin::NanToNum),
        "isclose" => Some(Builtin::IsClose),
        "allclose" => Some(Builtin::AllClose),
        "array_equal" => Some(Builtin::ArrayEqual(false)),
        "array_equiv" => Some(Builtin::ArrayEqual(true)),
        "isin" => Some(Builtin::IsIn),
        "divmod" => Some(Builtin::Divmod),
        "modf" => Some(Builtin::FloatParts {
            frexp: false,
            python: false,
        }),
        "frexp" => Some(Builtin::FloatParts {
            frexp: true,
            python: false,
        }),
        "unravel_index" => Some(Builtin::UnravelIndex),
        "ravel_multi_index" => Some(Builtin::RavelMultiIndex),
        "where" => Some(Builtin::Where),
        "select" => Some(Builtin::Select),
        "clip" => Some(Builtin::Clip),
        "mean" => Some(Builtin::Mean),
        "var" => Some(Builtin::Var),
        "any" => Some(Builtin::Any),
        "all" => Some(Builtin::All),
        "count_nonzero" => Some(Builtin::CountNonzero),
        "std" => Some(Builtin::Std),
        // `np.linalg.norm` (its `__name__`; found in `np.linalg`)
        "linalg.norm" => Some(Builtin::Norm),
        // `np.matmul` is `np.dot` for the operands parpy takes (1 or 2
        // dimensions)
        "dot" | "matmul" => Some(Builtin::Dot),
        "outer" => Some(Builtin::Outer),
        "einsum" => Some(Builtin::Einsum),
        "inner" | "vdot" => Some(Builtin::Inner),
        "flip" => Some(Builtin::Flip(None)),
        "fliplr" => Some(Builtin::Flip(Some(1))),
        "flipud" => Some(Builtin::Flip(Some(0))),
        "diff" => Some(Builtin::Diff),
        "diagonal" => Some(Builtin::Diagonal(false)),
        "diag" => Some(Builtin::Diagonal(true)),
        "trace" => Some(Builtin::Trace),
        "roll" => Some(Builtin::Roll),
        "pad" => Some(Builtin::Pad),
        "cross" => Some(Builtin::Cross),
        "median" => Some(Builtin::Median),
        "percentile" => Some(Builtin::Quantile(true)),
        "quantile" => Some(Builtin::Quantile(false)),
        "sort" => Some(Builtin::Sort(false)),
        "argsort" => Some(Builtin::Sort(true)),
        "searchsorted" => Some(Builtin::SearchSorted),
        "convolve" => Some(Builtin::Convolve),
        "interp" => Some(Builtin::Interp),
        "trapezoid" | "trapz" => Some(Builtin::Trapezoid),
        "polyval" => Some(Builtin::Polyval),
        "cov" => Some(Builtin::Cov(false)),
        "corrcoef" => Some(Builtin::Cov(true)),
        "digitize" => Some(Builtin::Digitize),
        "histogram" => Some(Builtin::Histogram),
        "nansum" => Some(Builtin::NanReduce(ReduceOp::Sum)),
        "nanprod" => Some(Builtin::NanReduce(ReduceOp::Prod)),
        "nanmax" => Some(Builtin::NanReduce(ReduceOp::Max)),
        "nanmin" => Some(Builtin::NanReduce(ReduceOp::Min)),
        "nanmean" => Some(Builtin::NanMean),
        "nanvar" => Some(Builtin::NanVar),
        "nanstd" => Some(Builtin::NanStd),
        "ptp" => Some(Builtin::Ptp),
        "average" => Some(Builtin::Average),
        "copyto" => Some(Builtin::CopyTo),
        "argmax" => Some(Builtin::ArgMax),
        "nanargmax" => Some(Builtin::NanArgMax),
        "nanargmin" => Some(Builtin::NanArgMin),
        "argmin" => Some(Builtin::ArgMin),
        "cumsum" => Some(Builtin::Cumulative(ReduceOp::Sum)),
        "cumprod" => Some(Builtin::Cumulative(ReduceOp::Prod)),
        // a ufunc's methods, named `ufunc.method`
        "add.reduce" => Some(Builtin::UfuncReduce(&Builtin::Reduce(ReduceOp::Sum))),
        "multiply.reduce" => Some(Builtin::UfuncReduce(&Builtin::Reduce(ReduceOp::Prod))),
        "maximum.reduce" => Some(Builtin::UfuncReduce(&Builtin::Reduce(ReduceOp::Max))),
        "minimum.reduce" => Some(Builtin::UfuncReduce(&Builtin::Reduce(ReduceOp::Min))),
        // (`np.nanmax` of a float array is `np.fmax.reduce`)
        "fmax.reduce" => Some(Builtin::UfuncReduce(&Builtin::NanReduce(ReduceOp::Max))),
        "fmin.reduce" => Some(Builtin::UfuncReduce(&Builtin::NanReduce(ReduceOp::Min))),
        "logical_or.reduce" => Some(Builtin::UfuncReduce(&Builtin::Any)),
        "logical_and.reduce" => Some(Builtin::UfuncReduce(&Builtin::All)),
        "add.accumulate" => Some(Builtin::UfuncAccumulate(ReduceOp::Sum)),
        "multiply.accumulate" => Some(Builtin::UfuncAccumulate(ReduceOp::Prod)),
        "maximum.accumulate" => Some(Builtin::UfuncAccumulate(ReduceOp::Max)),
        "minimum.accumulate" => Some(Builtin::UfuncAccumulate(ReduceOp::Min)),
        // the other binary ufuncs: a fold of their elementwise rule
        _ => {
            let (ufunc, method) = name.rsplit_once('.')?;
            let ufunc = FOLDED_UFUNCS.iter().find(|u| **u == ufunc)?;
            match method {
                "reduce" => Some(Builtin::UfuncFold(ufunc)),
                "accumulate" => Some(Builtin::UfuncFoldScan(ufunc)),
                _ => None,
            }
        }
    }
}

/// The binary ufuncs whose `reduce` and `accumulate` parpy computes as a
/// fold of the elementwise call ([`Builtin::UfuncFold`],
/// [`Builtin::UfuncFoldScan`]); the `reduce` of `add`, `multiply`,
/// `maximum`, `minimum`, `fmax`, `fmin`, `logical_and`, `logical_or` are
/// NumPy's reductions (`np.sum`, ...) instead, and the `accumulate` of
/// the first four its scans (`Builtin::UfuncAccumulate`).
pub const FOLDED_UFUNCS: [&str; 28] = [
    "subtract",
    "divide",
    "floor_divide",
    "remainder",
    "power",
    "float_power",
    "fmod",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "left_shift",
    "right_shift",
    "logical_xor",
    "logaddexp",
    "logaddexp2",
    "hypot",
    "arctan2",
    "copysign",
    "heaviside",
    "nextafter",
    "gcd",
    "lcm",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
];

/// Python's integer functions of the `math` module ([`Builtin::MathInt`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum IntFn {
    /// `math.factorial(n)`
    Factorial,
    /// `math.comb(n, k)`
    Comb,
    /// `math.perm(n, k=None)`
    Perm,
    /// `math.isqrt(n)`
    Isqrt,
    /// `n.bit_length()` of a Python int (a method: NumPy integers have
    /// none)
    BitLength,
    /// Python's `pow(a, b, m)` of Python ints (NumPy's integers take no
    /// modulus)
    PowMod,
}

impl IntFn {
    /// Its name in Python's `math` module.
    pub fn name(self) -> &'static str {
        match self {
            IntFn::Factorial => "factorial",
            IntFn::Comb => "comb",
            IntFn::Perm => "perm",
            IntFn::Isqrt => "isqrt",
            IntFn::BitLength => "bit_length",
            IntFn::PowMod => "pow",
        }
    }
    /// How many arguments it takes (fewest, most).
    pub fn arity(self) -> (usize, usize) {
        match self {
            IntFn::Factorial | IntFn::Isqrt | IntFn::BitLength => (1, 1),
            IntFn::Comb => (2, 2),
            IntFn::Perm => (1, 2),
            IntFn::PowMod => (3, 3),
        }
    }
}

/// Which builtin a function of Python's `math` module stands for.
pub fn math_module_builtin(name: &str) -> Option<Builtin> {
    match name {
        "sqrt" | "exp" | "log" | "sin" | "cos" | "tan" | "tanh" | "atan2" | "pow" | "erf"
        | "erfc" | "expm1" | "log1p" | "hypot" | "copysign" | "fmod" | "cbrt" | "isnan"
        | "isinf" | "isfinite" | "log10" | "log2" | "exp2" | "asin" | "acos" | "atan" | "sinh"
        | "cosh" | "asinh" | "acosh" | "atanh" => MathFn::from_name(name).map(Builtin::PyMath),
        "fabs" => Some(Builtin::PyMath(MathFn::Abs)),
        "isclose" => Some(Builtin::MathIsClose),
        "gcd" => Some(Builtin::MathGcdLcm(MathFn::Gcd)),
        "lcm" => Some(Builtin::MathGcdLcm(MathFn::Lcm)),
        "ldexp" => Some(Builtin::PyMath(MathFn::Ldexp)),
        "modf" | "frexp" => Some(Builtin::FloatParts {
            frexp: name == "frexp",
            python: true,
        }),
        "nextafter" => Some(Builtin::PyMath(MathFn::NextAfter)),
        "remainder" => Some(Builtin::PyMath(MathFn::Remainder)),
        "ulp" => Some(Builtin::MathUlp),
        "prod" => Some(Builtin::MathProd),
        "fsum" => Some(Builtin::MathFsum),
        "dist" => Some(Builtin::MathDist),
        "factorial" => Some(Builtin::MathInt(IntFn::Factorial)),
        "comb" => Some(Builtin::MathInt(IntFn::Comb)),
        "perm" => Some(Builtin::MathInt(IntFn::Perm)),
        "isqrt" => Some(Builtin::MathInt(IntFn::Isqrt)),
        "radians" => Some(Builtin::MathAngle(true)),
        "degrees" => Some(Builtin::MathAngle(false)),
        // Python's `math.trunc` gives an int, as `math.floor`
        "floor" | "ceil" | "trunc" => MathFn::from_name(name).map(Builtin::MathToInt),
        _ => None,
    }
}

/// NumPy functions that create a new array (jit code cannot allocate).
pub fn numpy_allocates(name: &str) -> bool {
    matches!(
        name,
        "zeros"
            | "ones"
            | "empty"
            | "full"
            | "zeros_like"
            | "ones_like"
            | "empty_like"
            | "full_like"
            | "array"
            | "asarray"
            | "asanyarray"
            | "arange"
            | "linspace"
            | "copy"
            | "concatenate"
            | "hstack"
            | "append"
            | "stack"
            | "vstack"
            | "column_stack"
            | "eye"
            | "identity"
            | "tri"
            | "triu"
            | "tril"
            | "tile"
            | "repeat"
            | "gradient"
    )
}

/// The element type of a `parpy.types.buffer` annotation.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum AnnElem {
    Dtype(ElemTy),
    /// A `type_var()` no entry annotation binds (by identity).
    TypeVar(u64),
}

/// An item of a module-level tuple (`Resolved::ConstTuple`): a Python
/// number or a tuple of items.
#[derive(Clone, Debug, PartialEq)]
pub enum TupleItem {
    Number(ScalarValue),
    Tuple(Vec<TupleItem>),
}

/// What a global name (or a dotted path below one) denotes.
#[derive(Clone)]
pub enum Resolved {
    /// A parpy builtin (`parpy.math.sqrt`, `parpy.builtin.maximum`) or a
    /// Python one (`abs`, `min`) or a function of Python's `math`.
    Builtin(Builtin),
    /// A NumPy function (`np.sqrt`, `np.maximum`; `numpy_builtin`): the
    /// builtin it stands for, whose result is a NumPy value, Python
    /// numbers alone too (`np.maximum(1, 2)` is an int64, where
    /// `parpy.math.sqrt(2.0)` stays a Python float).
    NumPy(Builtin),
    /// A dtype object (`np.float32`, `parpy.types.F32`).
    Dtype(ElemTy),
    /// A module-level constant (int, float or bool).
    Const(ScalarValue),
    /// A NumPy scalar (`np.float64(0.1)` at module level): a value of its
    /// type, not a weak Python number.
    TypedConst(ScalarValue, ElemTy),
    /// A tuple of Python numbers (`WEIGHTS = (0.25, 0.5, 0.25)` at module
    /// level), or of such tuples (`SOBEL = ((-1, 0, 1), (-2, 0, 2))`):
    /// read as the tuple literal it equals (`sema::lists::global_tuples`).
    ConstTuple(Vec<TupleItem>),
    /// A `parpy.CompileBackend` value (`None` for `Auto` and others that
    /// name no compiled backend).
    Backend(Option<crate::options::Backend>),
    /// Another jit function, with the resolver for its own globals.
    Function {
        def: Arc<FunctionDef>,
        globals: Arc<dyn Resolver>,
    },
    /// A `parpy.callback` Python function, called from host code; `id` is
    /// the binding's handle on it.
    Callback {
        id: u64,
        name: String,
    },
    /// A `parpy.external` function: its declaration for each backend it
    /// was declared for.
    External {
        name: String,
        decls: Vec<(crate::options::Backend, crate::signature::ExtDecl)>,
    },
    /// A `parpy.types.type_var()` that the entry function's annotations do
    /// not bind (those resolve to `Dtype`), by identity: a helper's
    /// parameter annotations bind it for that helper's body.
    TypeVar(u64),
    /// A `parpy.types.buffer(T, [dims])` annotation (the path `[ANNOTATION,
    /// param]` of a parameter annotated with one): checked against the
    /// array each call passes (a helper's, as the binding checks the
    /// entry's).
    Buffer {
        elem: AnnElem,
        dims: Vec<crate::signature::ExtDim>,
    },
    /// A module or namespace: look at its attributes (`parpy`, `parpy.math`).
    Namespace,
    /// Python's `None` (`np.newaxis`): a new axis in a subscript.
    NoneValue,
    /// `np.transpose`, `np.swapaxes` and the other permutations of an
    /// array's axes (`sema::permute`): `np.transpose(x)` is `x.T`.
    Permute(PermuteFn),
    /// The name exists but denotes something jit code cannot use; the string
    /// describes it for the error message (`a list`, `function 'print'`).
    Unsupported(String),
    /// A function that allocates a new array (`np.zeros`); the string
    /// names it.
    Allocates(String),
    NotFound,
}

/// NumPy's functions that permute an array's axes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PermuteFn {
    Transpose,
    PermuteDims,
    SwapAxes,
    MoveAxis,
    MatrixTranspose,
}

impl PermuteFn {
    pub fn from_name(name: &str) -> Option<PermuteFn> {
        Some(match name {
            "transpose" => PermuteFn::Transpose,
            "permute_dims" => PermuteFn::PermuteDims,
            "swapaxes" => PermuteFn::SwapAxes,
            "moveaxis" => PermuteFn::MoveAxis,
            "matrix_transpose" => PermuteFn::MatrixTranspose,
            _ => return None,
        })
    }

    /// The spelling in messages.
    pub fn name(self) -> &'static str {
        match self {
            PermuteFn::Transpose => "np.transpose",
            PermuteFn::PermuteDims => "np.permute_dims",
            PermuteFn::SwapAxes => "np.swapaxes",
            PermuteFn::MoveAxis => "np.moveaxis",
            PermuteFn::MatrixTranspose => "np.matrix_transpose",
        }
    }
}

/// The root of a path no Python code can spell, which sema resolves
/// itself: `#np.isclose` is NumPy's `isclose` (`numpy_builtin`) whatever
/// the module calls NumPy, for the calls sema's own rewrites make
/// (`np.allclose(a, b)` is `#np.all(#np.isclose(a, b))`).
pub const NUMPY_ROOT: &str = "#np";

/// The first element of the path `[PYTHON_ROOT, name]`: Python's builtin
/// `name` itself (`#py.range`), for the loops sema's own rewrites make
/// (`for v in x` is a loop over `#py.range(n)`), which a local named
/// `range` must not change.
pub const PYTHON_ROOT: &str = "#py";

/// The first element of the path `[ANNOTATION, param]`: the object a
/// parameter is annotated with, when the resolver knows it (a type variable,
/// shape symbol or buffer annotation), else `NotFound` and the annotation's
/// own path decides.
pub const ANNOTATION: &str = "#annotation";

impl Resolved {
    /// The builtin a parpy, Python or NumPy function stands for.
    pub fn builtin(&self) -> Option<Builtin> {
        match self {
            Resolved::Builtin(b) | Resolved::NumPy(b) => Some(*b),
            _ => None,
        }
    }
}

/// Resolves dotted global paths (`["parpy", "operators", "sum"]`, `["N"]`).
pub trait Resolver: Send + Sync {
    fn resolve(&self, path: &[&str]) -> Resolved;
}

/// A resolver over a fixed table, for tests and for the Rust-only tools.
/// Knows `parpy` (and the alias given) with all its builtins, `np`/`numpy`
/// dtypes and the Python builtins, plus any entries added.
#[derive(Clone, Default)]
pub struct StaticResolver {
    pub entries: HashMap<String, Resolved>,
}

impl StaticResolver {
    pub fn new() -> StaticResolver {
        StaticResolver::default()
    }
    pub fn with(mut self, name: &str, value: Resolved) -> StaticResolver {
        self.entries.insert(name.to_string(), value);
        self
    }
}

impl Resolver for StaticResolver {
    fn resolve(&self, path: &[&str]) -> Resolved {
        let joined = path.join(".");
        if let Some(r) = self.entries.get(&joined) {
            return r.clone();
        }
        match path {
            [] => Resolved::NotFound,
            ["parpy" | "numpy" | "np"] => Resolved::Namespace,
            ["parpy", rest @ ..] => {
                let name = rest.join(".");
                if let Some(b) = Builtin::from_name(&name) {
                    return Resolved::Builtin(b);
                }
                if let Some(op) = ReduceOp::from_name(&name) {
                    return Resolved::Builtin(Builtin::Reduce(op));
                }
                match rest {
                    ["operators" | "reduce" | "math" | "builtin" | "types"] => Resolved::Namespace,
                    ["types", t] => dtype_by_short_name(t)
                        .map(Resolved::Dtype)
                        .unwrap_or(Resolved::NotFound),
                    _ => Resolved::NotFound,
                }
            }
            ["numpy" | "np", u, m] => numpy_builtin(&format!("{u}.{m}"))
                .map(Resolved::NumPy)
                .unwrap_or(Resolved::NotFound),
            ["numpy" | "np", t] => {
                if let Some(d) = ElemTy::from_numpy_name(t) {
                    Resolved::Dtype(d)
                } else if let Some(b) = numpy_builtin(t) {
                    Resolved::NumPy(b)
                } else if numpy_allocates(t) {
                    Resolved::Allocates(format!("numpy.{t}"))
                } else {
                    match *t {
                        "pi" => Resolved::Const(ScalarValue::Float(std::f64::consts::PI)),
                        "inf" => Resolved::Const(ScalarValue::Float(f64::INFINITY)),
                        "newaxis" => Resolved::NoneValue,
                        f => PermuteFn::from_name(f).map_or(Resolved::NotFound, Resolved::Permute),
                    }
                }
            }
            ["math"] => Resolved::Namespace,
            ["math", f] => math_module_builtin(f)
                .map(Resolved::Builtin)
                .unwrap_or(Resolved::NotFound),
            [name] => Builtin::from_name(name)
                .filter(|b| {
                    matches!(
                        b,
                        Builtin::Range
                            | Builtin::Min
                            | Builtin::Max
                            | Builtin::Abs
                            | Builtin::Float
                            | Builtin::Int
                            | Builtin::Bool
                            | Builtin::Len
                            | Builtin::MathToInt(MathFn::Round)
                    )
                })
                .map(Resolved::Builtin)
                .unwrap_or(Resolved::NotFound),
            _ => Resolved::NotFound,
        }
    }
}

/// `F32` -> `ElemTy::F32` (the names of `parpy.types`).
pub fn dtype_by_short_name(name: &str) -> Option<ElemTy> {
    ElemTy::ALL
        .into_iter()
        .find(|t| t.short_name().eq_ignore_ascii_case(name))
}
