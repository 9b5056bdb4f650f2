//! Tests of the lowering to IR: shapes of the generated IR (through the IR
//! printer) and the user-facing errors.

use std::sync::Arc;

use crate::diag::{render_all, SourceFile};
use crate::error::CompileError;
use crate::ir::print::program_to_string;
use crate::ir::{ExprKind, Program, ReduceOp, StmtKind, Type};
use crate::options::Options;
use crate::resolve::{Resolved, StaticResolver};
use crate::signature::ArgType;
use crate::syntax::parse_function;
use crate::types::{ElemTy, ScalarValue};

fn arr(elem: ElemTy, shape: &[i64]) -> ArgType {
    ArgType::Array {
        elem,
        shape: shape.to_vec(),
    }
}

fn int(v: i64) -> ArgType {
    ArgType::Scalar {
        elem: ElemTy::I64,
        value: Some(ScalarValue::Int(v)),
        weak: true,
    }
}

fn lower_with(src: &str, args: &[ArgType], r: &StaticResolver) -> Result<Program, String> {
    let def = parse_function(SourceFile::from_function_text("t.py", src, 1))
        .map_err(|d| render_all(&d))?;
    let p = super::lower(&def, args, r, &Options::default()).map_err(|e| match e {
        CompileError::User(d) => render_all(&d),
        CompileError::Internal(m) => format!("INTERNAL: {m}"),
    })?;
    // Every program sema produces must satisfy the IR verifier.
    if let Err(m) = crate::ir::verify::verify_program(&p) {
        panic!(
            "the IR verifier rejected:\n{}\n{}",
            program_to_string(&p),
            crate::ir::verify::render(&m)
        );
    }
    Ok(p)
}

fn lower_ok(src: &str, args: &[ArgType]) -> String {
    match lower_with(src, args, &StaticResolver::new()) {
        Ok(p) => program_to_string(&p),
        Err(e) => panic!("unexpected error:\n{e}"),
    }
}

fn lower_err(src: &str, args: &[ArgType]) -> String {
    match lower_with(src, args, &StaticResolver::new()) {
        Ok(p) => panic!("expected an error, got:\n{}", program_to_string(&p)),
        Err(e) => {
            assert!(!e.starts_with("INTERNAL"), "{e}");
            e
        }
    }
}

const SUM_ROWS: &str = "\
def sum_rows(x, y, N):
    parpy.label('outer')
    for i in range(N):
        y[i] = parpy.operators.sum(x[i, :])
";

#[test]
fn sum_rows_structure() {
    let args = [
        arr(ElemTy::F32, &[100, 1024]),
        arr(ElemTy::F32, &[100]),
        int(100),
    ];
    let p = lower_with(SUM_ROWS, &args, &StaticResolver::new()).unwrap();
    assert!(p.kernels.is_empty() && p.helpers.is_empty());
    assert_eq!(p.host.name, "sum_rows");
    assert_eq!(p.host.params.len(), 3);
    assert_eq!(p.host.body.len(), 1);
    let StmtKind::For(outer) = &p.host.body[0].kind else {
        panic!("expected a loop");
    };
    assert_eq!(outer.labels, ["outer"]);
    assert!(outer.reduction.is_none());
    // N was specialized: the bound is the constant 100.
    assert_eq!(outer.hi.kind, ExprKind::Int(100));
    assert_eq!(outer.body.len(), 3);
    let StmtKind::For(inner) = &outer.body[1].kind else {
        panic!("expected the reduction loop");
    };
    let red = inner.reduction.expect("reduction loop");
    assert_eq!(red.op, ReduceOp::Sum);
    assert_eq!(inner.hi.kind, ExprKind::Int(1024));
    // an unlabelled 1-D float32 sum keeps NumPy's type and order
    assert_eq!(p.host.var(red.acc).ty, Type::Scalar(ElemTy::F32));
    assert_eq!(red.pairwise, Some(i64::MAX));
    let text = program_to_string(&p);
    let expected = "\
fn sum_rows(x: f32[100, 1024], y: f32[100], N: i64 = 100) {
  for i in 0..100 step 1 [outer] {
    acc: f32 = 0.0
    for j in 0..1024 step 1 [] reduce(sum -> acc, pairwise) {
      acc = (acc + x[i, j])
    }
    y[i] = acc
  }
}
";
    assert_eq!(text, expected);
}

#[test]
fn parpy_sum_and_labels_on_reductions() {
    let src = "\
def f(x, y, N):
    for i in range(N):
        parpy.label('red')
        y[i] = 2.0 * parpy.sum(x[i, :]) + 1.0
";
    let text = lower_ok(
        src,
        &[arr(ElemTy::F32, &[4, 8]), arr(ElemTy::F32, &[4]), int(4)],
    );
    assert!(
        text.contains("for j in 0..8 step 1 [red] reduce(sum -> acc)"),
        "{text}"
    );
    assert!(text.contains("y[i] = ((2.0 * acc) + 1.0)"), "{text}");
}

#[test]
fn literal_keeps_f32() {
    let src = "def f(x, y, N):\n    for i in range(N):\n        y[i] = x[i] * 2.0\n";
    let p = lower_with(
        src,
        &[arr(ElemTy::F32, &[8]), arr(ElemTy::F32, &[8]), int(8)],
        &StaticResolver::new(),
    )
    .unwrap();
    let StmtKind::For(l) = &p.host.body[0].kind else {
        panic!()
    };
    let StmtKind::Assign { value, .. } = &l.body[0].kind else {
        panic!()
    };
    assert_eq!(value.ty, Type::Scalar(ElemTy::F32));
    let ExprKind::Binary { rhs, .. } = &value.kind else {
        panic!()
    };
    assert_eq!(rhs.kind, ExprKind::Float(2.0));
    assert_eq!(rhs.ty, Type::Scalar(ElemTy::F32));
}

#[test]
fn promotions() {
    let src = "\
def f(a, b, c, n):
    c[0] = a[0] + b[0]
    c[1] = a[0] / 2
    c[2] = n / 3
    c[3] = n // 2 + n % 3
";
    let text = lower_ok(
        src,
        &[
            arr(ElemTy::I32, &[4]),
            arr(ElemTy::F32, &[4]),
            arr(ElemTy::F64, &[4]),
            int(7),
        ],
    );
    // i32 + f32 -> f64 (NumPy), stored into f64.
    assert!(text.contains("c[0] = (f64(a[0]) + f64(b[0]))"), "{text}");
    // int / int -> float
    assert!(text.contains("c[1] = (f64(a[0]) / 2.0)"), "{text}");
    // n is specialized: Python computes with it as with the literal 7
    assert!(text.contains("c[2] = 2.3333333333333335"), "{text}");
    assert!(text.contains("c[3] = 4.0"), "{text}");
}

#[test]
fn narrowing_store_is_an_error() {
    let src = "def f(x, y):\n    y[0] = x[0] * 2.5\n";
    let e = lower_err(src, &[arr(ElemTy::F64, &[4]), arr(ElemTy::F32, &[4])]);
    assert!(e.contains("cannot store a value of type `f64`"), "{e}");
    assert!(e.contains("t.py:2:12"), "{e}");
    assert!(
        e.contains("parpy.builtin.convert(e, parpy.types.F32)"),
        "{e}"
    );
    assert!(!e.contains("float(e)"), "float() gives f64, not f32:\n{e}");
    // float into int
    let e = lower_err(src, &[arr(ElemTy::F32, &[4]), arr(ElemTy::I32, &[4])]);
    assert!(e.contains("a float to an integer"), "{e}");
    // widening is fine
    lower_ok(src, &[arr(ElemTy::F32, &[4]), arr(ElemTy::F64, &[4])]);
}

#[test]
fn undefined_name() {
    let src = "\
def sum_rows(x, y, N):
    for i in range(N):
        out[i] = parpy.operators.sum(x[i, :])
";
    let e = lower_err(
        src,
        &[arr(ElemTy::F32, &[2, 3]), arr(ElemTy::F32, &[2]), int(2)],
    );
    assert!(e.contains("name `out` is not defined"), "{e}");
    assert!(e.contains("t.py:3:9"), "{e}");
    assert!(e.contains("the parameters are `x`, `y`, `N`"), "{e}");
    let e = lower_err(
        "def f(total, y):\n    y[0] = totl[0]\n",
        &[arr(ElemTy::F32, &[2]), arr(ElemTy::F32, &[2])],
    );
    assert!(e.contains("did you mean `total`?"), "{e}");
}

#[test]
fn errors_are_collected() {
    let src = "def f(y):\n    y[0] = a\n    y[1] = b\n";
    let e = lower_err(src, &[arr(ElemTy::F32, &[2])]);
    assert!(
        e.contains("`a` is not defined") && e.contains("`b` is not defined"),
        "{e}"
    );
}

#[test]
fn slice_assignments() {
    let src = "\
def f(a, b, y):
    parpy.label('el')
    y[:, :] = a[:, :] + b[:, :]
";
    let m = arr(ElemTy::F32, &[2, 3]);
    let text = lower_ok(src, &[m.clone(), m.clone(), m]);
    let expected = "\
fn f(a: f32[2, 3], b: f32[2, 3], y: f32[2, 3]) {
  for j in 0..2 step 1 [] {
    for j_1 in 0..3 step 1 [el] {
      y[j, j_1] = (a[j, j_1] + b[j, j_1])
    }
  }
}
";
    assert_eq!(text, expected);
}

#[test]
fn slice_with_scalar_and_offsets() {
    let src = "\
def f(x, y, s):
    for i in range(2):
        y[i, :] = x[i, :] / s
    y[0, 1:3] = x[1, 0:2]
";
    let m = arr(ElemTy::F64, &[2, 4]);
    let text = lower_ok(
        src,
        &[
            m.clone(),
            m,
            ArgType::Scalar {
                elem: ElemTy::F64,
                value: Some(ScalarValue::Float(2.0)),
                weak: true,
            },
        ],
    );
    assert!(text.contains("y[i, j] = (x[i, j] / 2.0)"), "{text}");
    assert!(text.contains("for j_1 in 0..2 step 1"), "{text}");
    assert!(text.contains("y[0, (1 + j_1)] = x[1, j_1]"), "{text}");
}

#[test]
fn slice_shape_mismatch() {
    let src = "def f(a, y):\n    y[:] = a[0:3]\n";
    let e = lower_err(src, &[arr(ElemTy::F32, &[8]), arr(ElemTy::F32, &[4])]);
    assert!(
        e.contains("incompatible shapes: the slices (4,) and (3,) do not match"),
        "{e}"
    );
    // The header points at the statement's target, the operand is labelled.
    assert!(e.contains("t.py:2:5"), "{e}");
    assert!(e.contains("this operand has shape (3,)"), "{e}");
    let m = arr(ElemTy::F64, &[4, 5]);
    let e = lower_err(
        "def f(a, b):\n    b[:, :] = a[:, :] + 1.0\n",
        &[m, arr(ElemTy::F64, &[4, 6])],
    );
    assert!(e.contains("(4, 6) and (4, 5)"), "{e}");
}

#[test]
fn slice_outside_statement_is_an_error() {
    let e = lower_err(
        "def f(a, y):\n    y[0] = a[:]\n",
        &[arr(ElemTy::F32, &[8]), arr(ElemTy::F32, &[4])],
    );
    assert!(
        e.contains("slices can only be used in slice assignments and reductions"),
        "{e}"
    );
}

#[test]
fn label_placement_errors() {
    let a = [arr(ElemTy::F32, &[4])];
    let e = lower_err("def f(y):\n    parpy.label('a')\n    y[0] = 1.0\n", &a);
    assert!(
        e.contains("a label must be followed by a `for` loop"),
        "{e}"
    );
    assert!(e.contains("t.py:2:5"), "{e}");
    let e = lower_err("def f(y):\n    y[0] = 1.0\n    parpy.label('a')\n", &a);
    assert!(e.contains("not followed by a statement"), "{e}");
    let e = lower_err(
        "def f(y):\n    parpy.label(3)\n    for i in range(4):\n        y[i] = 0.0\n",
        &a,
    );
    assert!(e.contains("one string literal"), "{e}");
    // Stacked labels on a loop.
    let t = lower_ok(
        "def f(y):\n    parpy.label('a')\n    parpy.label('b')\n    for i in range(4):\n        y[i] = 0.0\n",
        &a,
    );
    assert!(t.contains("[a, b]"), "{t}");
}

#[test]
fn reductions_of_whole_arrays_and_ops() {
    let src = "\
def f(x, y):
    y[0] = parpy.operators.max(x)
    y[1] = parpy.reduce.min(x[1:3])
    y[2] = parpy.operators.prod(x[:])
";
    let text = lower_ok(src, &[arr(ElemTy::F32, &[4]), arr(ElemTy::F32, &[3])]);
    assert!(text.contains("acc: f32 = -inf"), "{text}");
    assert!(text.contains("reduce(max -> acc)"), "{text}");
    assert!(text.contains("reduce(min -> acc_1)"), "{text}");
    assert!(text.contains("x[(1 + j_1)]"), "{text}");
    // a float product multiplies in order in its own type, as NumPy's
    // does: a sequential loop, not a reduction the C compiler may reorder
    assert!(text.contains("acc_2: f32 = 1.0"), "{text}");
    assert!(!text.contains("reduce(prod"), "{text}");
    assert!(text.contains("y[2] = acc_2"), "{text}");
    let e = lower_err(
        "def f(y, n):\n    y[0] = parpy.operators.sum(n)\n",
        &[arr(ElemTy::F32, &[3]), int(2)],
    );
    assert!(e.contains("contains no slice"), "{e}");
}

#[test]
fn int_reduction_identity() {
    let text = lower_ok(
        "def f(x, y):\n    y[0] = parpy.operators.min(x[:])\n",
        &[arr(ElemTy::I32, &[4]), arr(ElemTy::I32, &[1])],
    );
    assert!(text.contains("acc: i32 = 2147483647"), "{text}");
}

#[test]
fn control_flow_and_builtins() {
    let src = "\
def f(x, y, n):
    t = 0.0
    k = 0
    while k < n:
        k += 1
    for i in range(1, n, 2):
        if 0 < x[i] <= 1.0 and not (x[i] == 0.5):
            y[i] = min(x[i], 0.5)
        elif x[i] > 2.0:
            y[i] = parpy.math.sqrt(x[i]) if x[i] > 3.0 else abs(x[i])
        else:
            y[i] = float(i) + t + parpy.builtin.convert(k, parpy.types.F32)
    y[0] = x.shape[0] + len(x) + x[-1]
    y[1] = parpy.builtin.maximum(x[0], -parpy.builtin.inf)
";
    let text = lower_ok(
        src,
        &[arr(ElemTy::F32, &[8]), arr(ElemTy::F32, &[8]), int(8)],
    );
    assert!(text.contains("for i in 1..8 step 2"), "{text}");
    assert!(text.contains("while"), "{text}");
    assert!(text.contains("and"), "{text}");
    assert!(text.contains("sqrt"), "{text}");
    assert!(text.contains("x[7]"), "{text}");
    assert!(text.contains("y[0] = (f32((8 + 8)) + x[7])"), "{text}");
    assert!(text.contains("y[1] = max(x[0], -inf)"), "{text}");
    assert!(
        text.contains("y[i] = (f32((f64(i) + t)) + f32(k))"),
        "{text}"
    );
}

#[test]
fn range_step_must_be_non_zero() {
    // a step known at run time: a loop over the count of the range's
    // values, the step checked first (`range() arg 3 must not be zero`)
    let text = lower_ok(
        "def f(y, n):\n    for i in range(0, 4, y[0]):\n        y[i] = 1\n",
        &[arr(ElemTy::I64, &[4]), int(1)],
    );
    assert!(text.contains("range() arg 3 must not be zero"), "{text}");
    let e = lower_err(
        "def f(y, n):\n    for i in range(0, 4, 0.5 * n):\n        pass\n",
        &[arr(ElemTy::I64, &[4]), int(1)],
    );
    assert!(e.contains("non-zero integer constant"), "{e}");
    let e = lower_err(
        "def f(y):\n    for i in range(0, 4, 0):\n        pass\n",
        &[arr(ElemTy::I64, &[4])],
    );
    // a literal 0 is rejected when parsing (at decoration)
    assert!(e.contains("step size must be non-zero"), "{e}");
    let e = lower_err(
        "def f(y):\n    for i in range(0, 4, 2 - 2):\n        pass\n",
        &[arr(ElemTy::I64, &[4])],
    );
    assert!(e.contains("non-zero integer constant"), "{e}");
}

#[test]
fn entry_cannot_return_value() {
    let e = lower_err("def f(y):\n    return y[0]\n", &[arr(ElemTy::I64, &[4])]);
    assert!(e.contains("cannot return a value"), "{e}");
    lower_ok("def f(y):\n    return\n", &[arr(ElemTy::I64, &[4])]);
}

#[test]
fn wrong_index_counts() {
    let m = [arr(ElemTy::F32, &[2, 2])];
    let e = lower_err("def f(y):\n    y[0] = 1.0\n    y[0, 0, 0] = 1.0\n", &m);
    assert!(e.contains("too many indices"), "{e}");
    let t = lower_ok("def f(y):\n    y[0][1] = 1.0\n", &m);
    assert!(t.contains("y[0, 1] = 1.0"), "{t}");
    let e = lower_err("def f(y):\n    y[0, 5] = 1.0\n", &m);
    assert!(e.contains("out of bounds"), "{e}");
}

#[test]
fn unsupported_param_type_and_arg_count() {
    let def = parse_function(SourceFile::from_function_text(
        "t.py",
        "def f(y):\n    pass\n",
        1,
    ))
    .unwrap();
    // float16 is taken by every backend (Cuda: `__half`)
    let opts = Options {
        backend: crate::options::Backend::Cuda,
        ..Options::default()
    };
    assert!(super::lower(
        &def,
        &[arr(ElemTy::F16, &[2])],
        &StaticResolver::new(),
        &opts
    )
    .is_ok());
    lower_ok("def f(y):\n    y[0] = y[1]\n", &[arr(ElemTy::F16, &[2])]);
    let e = lower_err("def f(y):\n    pass\n", &[]);
    assert!(e.contains("takes 1 argument"), "{e}");
}

#[test]
fn module_constants_and_unsupported_calls() {
    let r = StaticResolver::new()
        .with("K", Resolved::Const(ScalarValue::Float(0.5)))
        .with("print", Resolved::Unsupported("function 'print'".into()))
        .with(
            "np.sum",
            Resolved::Unsupported("function 'numpy.sum'".into()),
        );
    let a = [arr(ElemTy::F32, &[2])];
    let p = lower_with("def f(y):\n    y[0] = K * y[1]\n", &a, &r).unwrap();
    let t = program_to_string(&p);
    assert!(t.contains("y[0] = (0.5 * y[1])"), "{t}");
    let e = lower_with("def f(y):\n    print(y)\n", &a, &r).unwrap_err();
    assert!(e.contains("cannot call `print`"), "{e}");
    let e = lower_with("def f(y):\n    y[0] = np.sum(y)\n", &a, &r).unwrap_err();
    assert!(e.contains("cannot call `np.sum`"), "{e}");
    let e = lower_with("def f(y):\n    y[0] = parpy.operators.summ(y)\n", &a, &r).unwrap_err();
    assert!(e.contains("parpy.operators.summ"), "{e}");
}

#[test]
fn assignments_to_params_and_locals() {
    let a = [arr(ElemTy::F32, &[2]), int(3)];
    // A scalar parameter is a local variable in Python: assigning it works
    // on a copy.
    let t = lower_ok(
        "def f(y, n):\n    for i in range(2):\n        n = n - 1\n    y[0] = n\n",
        &a,
    );
    assert!(
        t.contains("n_1: i64 = 3") && t.contains("n_1 = (n_1 - 1)"),
        "{t}"
    );
    // re-bound after its last read, a parameter's name is a new local in
    // Python (`syntax::webs`)
    let t = lower_ok("def f(y, n):\n    n = n - 1\n    y[0] = n\n", &a);
    assert!(t.contains("n#r1: i64 = 2"), "{t}");
    let e = lower_err("def f(y, n):\n    y = 2\n", &a);
    assert!(e.contains("cannot assign to the parameter `y`"), "{e}");
    // (diagnostics show a renamed web as the user's name)
    let e = lower_err(
        "def f(y, n):\n    y[0] = n\n    n = 2.5\n    y[1] = n[0]\n",
        &a,
    );
    assert!(
        e.contains("`n` cannot be indexed") && !e.contains("#r"),
        "{e}"
    );
    let e = lower_err(
        "def f(y, n):\n    t = y[0]\n    if n > 0:\n        t = parpy.builtin.convert(n, parpy.types.F64)\n    y[1] = t\n",
        &a,
    );
    assert!(
        e.contains("variable `t` holds `f32` values but this assigns a `f64`")
            && e.contains("use a new name for this value"),
        "{e}"
    );
    assert!(e.contains("t.py:4:13"), "{e}");
    let t = lower_ok(
        "def f(y, n):\n    t = y[0]\n    t += 1.0\n    y[1] = t\n",
        &a,
    );
    assert!(t.contains("t: f32 = y[0]"), "{t}");
    // (the update's value is a variable of its own, `syntax::webs`)
    assert!(t.contains("t#r1: f32 = (t + 1.0)"), "{t}");
}

fn helper_resolver(helper_src: &str) -> StaticResolver {
    let def = parse_function(SourceFile::from_function_text("h.py", helper_src, 1)).unwrap();
    StaticResolver::new().with(
        "helper",
        Resolved::Function {
            def: Arc::new(def),
            globals: Arc::new(StaticResolver::new()),
        },
    )
}

#[test]
fn helpers_are_specialized() {
    let r = helper_resolver("def helper(a, i):\n    return a[i] * 2.0\n");
    let src = "\
def f(x, z, y):
    y[0] = helper(x, 0)
    y[1] = helper(x, 1)
    y[2] = helper(z, 0)
";
    let p = lower_with(
        src,
        &[
            arr(ElemTy::F32, &[4]),
            arr(ElemTy::F64, &[4]),
            arr(ElemTy::F64, &[4]),
        ],
        &r,
    )
    .unwrap();
    assert_eq!(p.helpers.len(), 2);
    assert_eq!(p.helpers[0].name, "helper");
    assert_eq!(p.helpers[1].name, "helper_1");
    assert_eq!(p.helpers[0].ret, Type::Scalar(ElemTy::F32));
    assert_eq!(p.helpers[1].ret, Type::Scalar(ElemTy::F64));
    let text = program_to_string(&p);
    assert!(text.contains("helper"), "{text}");
}

#[test]
fn recursion_is_an_error() {
    let def = parse_function(SourceFile::from_function_text(
        "h.py",
        "def helper(a):\n    return helper(a)\n",
        1,
    ))
    .unwrap();
    let def = Arc::new(def);
    // The helper's globals resolve `helper` to itself.
    let inner = StaticResolver::new().with(
        "helper",
        Resolved::Function {
            def: def.clone(),
            globals: Arc::new(StaticResolver::new()),
        },
    );
    let r = StaticResolver::new().with(
        "helper",
        Resolved::Function {
            def,
            globals: Arc::new(inner),
        },
    );
    let e = lower_with(
        "def f(y):\n    y[0] = helper(y[1])\n",
        &[arr(ElemTy::F32, &[2])],
        &r,
    )
    .unwrap_err();
    assert!(e.contains("recursion is not supported"), "{e}");
}

#[test]
fn gpu_block() {
    let t = lower_ok(
        "def f(y):\n    with parpy.gpu:\n        y[0] = 1.0\n",
        &[arr(ElemTy::F32, &[2])],
    );
    assert!(t.contains("y[0] = 1.0"), "{t}");
    let e = lower_err(
        "def f(y):\n    with parpy.label:\n        y[0] = 1.0\n",
        &[arr(ElemTy::F32, &[2])],
    );
    assert!(e.contains("only `with parpy.gpu:`"), "{e}");
}

#[test]
fn helper_results_follow_weak_arguments() {
    let def = parse_function(SourceFile::from_function_text(
        "h.py",
        "def clip_int(v, lo, hi):\n    if v < lo:\n        return lo\n    if v > hi:\n        return hi\n    return v\n",
        1,
    ))
    .unwrap();
    let r = StaticResolver::new().with(
        "clip_int",
        Resolved::Function {
            def: Arc::new(def),
            globals: Arc::new(StaticResolver::new()),
        },
    );
    let p = lower_with(
        "def f(k):\n    for i in range(4):\n        k[i] = clip_int(k[i], -3, 3)\n",
        &[arr(ElemTy::I32, &[4])],
        &r,
    )
    .unwrap();
    assert_eq!(p.helpers.len(), 1);
    assert_eq!(p.helpers[0].ret, Type::Scalar(ElemTy::I32));
    let text = program_to_string(&p);
    assert!(
        text.contains("return i32(lo)") || text.contains("return i32("),
        "{text}"
    );
}

/// Programs of the Python test suite (tests/test_programs.py), lowered with
/// representative arguments: they must all lower and verify.
#[test]
fn python_suite_programs_lower() {
    use ElemTy::{Bool, F32, F64, I32, I64};
    let f64s = |n: i64| arr(F64, &[n]);
    let cases: Vec<(&str, Vec<ArgType>)> = vec![
        (
            "def collatz(x, steps, N):\n    parpy.label('N')\n    for i in range(N):\n        n = x[i]\n        k = 0\n        while n != 1:\n            if n % 2 == 0:\n                n = n // 2\n            else:\n                n = 3 * n + 1\n            k += 1\n        steps[i] = k\n",
            vec![arr(I64, &[7]), arr(I64, &[7]), int(7)],
        ),
        (
            "def chained(x, y, lo, hi, N):\n    parpy.label('N')\n    for i in range(N):\n        y[i] = 1 if lo <= x[i] < hi else (2 if x[i] < lo < hi else 0)\n",
            vec![
                f64s(8),
                arr(I64, &[8]),
                ArgType::Scalar { elem: F64, value: Some(ScalarValue::Float(-0.5)), weak: true },
                ArgType::Scalar { elem: F64, value: None, weak: true },
                int(8),
            ],
        ),
        (
            "def bool_ops(x, m, out, both, N):\n    parpy.label('N')\n    for i in range(N):\n        out[i] = x[i] > 0.0\n        both[i] = (x[i] > 0.0 and m[i]) or (not m[i] and x[i] < -1.0)\n        if m[i]:\n            x[i] = x[i] + 1.0\n",
            vec![f64s(4), arr(Bool, &[4]), arr(Bool, &[4]), arr(Bool, &[4]), int(4)],
        ),
        (
            "def math_fns(x, y, N):\n    parpy.label('N')\n    for i in range(N):\n        y[i] = parpy.math.sqrt(x[i]) + parpy.math.exp(-x[i]) + parpy.math.tanh(x[i] - 1.0)\n",
            vec![arr(F32, &[4]), arr(F32, &[4]), int(4)],
        ),
        (
            "def prefix_then_scale(x, y, N):\n    with parpy.gpu:\n        y[0] = x[0]\n        for i in range(1, N):\n            y[i] = y[i - 1] + x[i]\n    parpy.label('N')\n    for i in range(N):\n        y[i] = y[i] * 2\n",
            vec![arr(I32, &[5]), arr(I32, &[5]), int(5)],
        ),
        (
            "def reverse_copy(x, y, N):\n    parpy.label('N')\n    for i in range(N - 1, -1, -1):\n        y[N - 1 - i] = x[i]\n",
            vec![f64s(6), f64s(6), int(6)],
        ),
        (
            "def stencil_2d(a, b, N):\n    for i in range(1, N - 1):\n        for j in range(1, N - 1):\n            b[i][j] = 0.2 * (a[i][j] + a[i - 1][j] + a[i + 1][j] + a[i][j - 1] + a[i][j + 1])\n",
            vec![arr(F32, &[6, 6]), arr(F32, &[6, 6]), int(6)],
        ),
        (
            "def softmax_seq(x, y, N, M):\n    parpy.label('N')\n    for i in range(N):\n        m = parpy.operators.max(x[i, :])\n        for j in range(M):\n            y[i, j] = parpy.math.exp(x[i, j] - m)\n        s = parpy.operators.sum(y[i, :])\n        for j in range(M):\n            y[i, j] = y[i, j] / s\n",
            vec![arr(F32, &[3, 5]), arr(F32, &[3, 5]), int(3), int(5)],
        ),
        (
            "def softmax_par(x, y, N):\n    parpy.label('N')\n    for i in range(N):\n        parpy.label('M')\n        m = parpy.operators.max(x[i, :])\n        parpy.label('M')\n        y[i, :] = parpy.math.exp(x[i, :] - m)\n        parpy.label('M')\n        s = parpy.operators.sum(y[i, :])\n        parpy.label('M')\n        y[i, :] = y[i, :] / s\n",
            vec![arr(F64, &[3, 5]), arr(F64, &[3, 5]), int(3)],
        ),
        (
            "def matvec_loop(A, x, y, N, M):\n    parpy.label('N')\n    for i in range(N):\n        acc = 0.0\n        for j in range(M):\n            acc += A[i, j] * x[j]\n        y[i] = acc\n",
            vec![arr(F32, &[3, 5]), arr(F32, &[5]), arr(F32, &[3]), int(3), int(5)],
        ),
        (
            "def matvec_sum(A, x, y, N):\n    parpy.label('N')\n    for i in range(N):\n        parpy.label('M')\n        y[i] = parpy.operators.sum(A[i, :] * x[:])\n",
            vec![arr(F32, &[3, 5]), arr(F32, &[5]), arr(F32, &[3]), int(3)],
        ),
        (
            "def axpy(a, x, y, N):\n    parpy.label('N')\n    for i in range(N):\n        y[i] = a * x[i] + y[i]\n",
            vec![ArgType::Scalar { elem: I64, value: None, weak: true }, arr(I64, &[4]), arr(I64, &[4]), int(4)],
        ),
        (
            "def slice_bounds(a, b, y):\n    y[2:10] = a[0:8] * b[3:11]\n    y[0] = a[0]\n",
            vec![arr(I32, &[12]), arr(I32, &[12]), arr(I32, &[12])],
        ),
        (
            "def divmod_literals(a, q, r, N):\n    parpy.label('N')\n    for i in range(N):\n        q[i] = a[i] // 3 + a[i] // -4\n        r[i] = a[i] % 3 + a[i] % -4\n",
            vec![arr(I32, &[4]), arr(I32, &[4]), arr(I32, &[4]), int(4)],
        ),
        (
            "def jacobi_1d(A, B, N, T):\n    for t in range(T):\n        parpy.label('N')\n        for i in range(1, N - 1):\n            B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1])\n        parpy.label('N')\n        for i in range(1, N - 1):\n            A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1])\n",
            vec![f64s(8), f64s(8), int(8), int(3)],
        ),
        (
            "def manual_max(x, acc, N):\n    parpy.label('N')\n    for i in range(N):\n        acc[0] = max(acc[0], x[i])\n",
            vec![f64s(8), f64s(1), int(8)],
        ),
    ];
    for (src, args) in cases {
        if let Err(e) = lower_with(src, &args, &StaticResolver::new()) {
            panic!("{src}\n{e}");
        }
    }
}

#[test]
fn alias_and_module_constants() {
    let r = StaticResolver::new()
        .with("pp", Resolved::Namespace)
        .with(
            "pp.label",
            Resolved::Builtin(crate::resolve::Builtin::Label),
        )
        .with(
            "pp.sum",
            Resolved::Builtin(crate::resolve::Builtin::Reduce(ReduceOp::Sum)),
        )
        .with("SCALE", Resolved::Const(ScalarValue::Float(3.0)))
        .with("OFFSET", Resolved::Const(ScalarValue::Int(2)))
        .with("USE_SCALE", Resolved::Const(ScalarValue::Bool(true)));
    let src = "\
def scale_offset(x, y, N):
    pp.label('N')
    for i in range(N):
        if USE_SCALE:
            y[i] = x[i] * SCALE + OFFSET
        else:
            y[i] = pp.sum(x[:]) + OFFSET
";
    let p = lower_with(
        src,
        &[arr(ElemTy::F32, &[4]), arr(ElemTy::F32, &[4]), int(4)],
        &r,
    )
    .unwrap();
    let text = program_to_string(&p);
    assert!(text.contains("[N]"), "{text}");
    assert!(text.contains("if True"), "{text}");
    assert!(text.contains("y[i] = ((x[i] * 3.0) + 2.0)"), "{text}");
}

#[test]
fn builtin_module_label_and_gpu() {
    // ParPy's `parpy.builtin.label` / `parpy.builtin.gpu` (the objects
    // `parpy.label` / `parpy.gpu` are)
    let src = "\
def f(x, N):
    parpy.builtin.label('N')
    for i in range(N):
        x[i] = 1.0
    with parpy.builtin.gpu:
        x[0] = 2.0
";
    let p = lower_with(
        src,
        &[arr(ElemTy::F64, &[4]), int(4)],
        &StaticResolver::new(),
    )
    .unwrap();
    let text = program_to_string(&p);
    assert!(text.contains("[N]"), "{text}");
    assert!(text.contains("on_device {"), "{text}");
}

#[test]
fn annotations_are_checked() {
    let a = [arr(ElemTy::F32, &[4]), int(4)];
    lower_ok("def f(x, n: int):\n    x[0] = 1.0\n", &a);
    let f32_scalar = ArgType::Scalar {
        elem: ElemTy::F32,
        value: Some(ScalarValue::Float(0.5)),
        weak: false,
    };
    let s = [arr(ElemTy::F32, &[4]), f32_scalar];
    lower_ok("def f(x, v: parpy.types.F32):\n    x[0] = v\n", &s);
    lower_ok("def f(x, v: np.float32):\n    x[0] = v\n", &s);
    // an element type annotates a scalar: not an array, even of that type
    for ann in ["parpy.types.F32", "np.float32"] {
        let e = lower_err(&format!("def f(x: {ann}, n):\n    x[0] = 1.0\n"), &a);
        assert!(
            e.contains(&format!(
                "Parameter x was annotated with type {ann} which is incompatible with \
                 argument type float32[4] (an array)"
            )),
            "{e}"
        );
        assert!(e.contains("(parpy.types.buffer)"), "{e}");
    }
    let e = lower_err("def f(x: parpy.types.F64, n):\n    x[0] = 1.0\n", &a);
    assert!(
        e.contains(
            "Parameter x was annotated with type parpy.types.F64 which is incompatible with \
             argument type float32[4] (an array)"
        ),
        "{e}"
    );
    assert!(e.contains("t.py:1:10"), "{e}");
    let e = lower_err(
        "def f(x, n: float):\n    x[0] = 1.0\n",
        &[arr(ElemTy::F32, &[4]), arr(ElemTy::F32, &[4])],
    );
    assert!(
        e.contains("annotated with type float which is incompatible"),
        "{e}"
    );
}

#[test]
fn float_into_int_local_is_an_error() {
    let e = lower_err(
        "def f(y):\n    t = 0\n    for i in range(2):\n        t += 0.5\n    y[0] = t\n",
        &[arr(ElemTy::F64, &[2])],
    );
    assert!(
        e.contains("variable `t` holds `i64` values but this assigns a `f64`"),
        "{e}"
    );
    assert!(e.contains("t.py:4:9"), "{e}");
    assert!(e.contains("`t = 0.0`"), "{e}");
}

#[test]
fn one_error_per_root_cause() {
    let a = [arr(ElemTy::F32, &[4]), int(4)];
    // `p` fails to be defined: its uses below report nothing more.
    let e = lower_err(
        "def f(y, n):\n    p = undefined_thing + 1.0\n    q = p * 2.0\n    for i in range(n):\n        y[i] = p + q\n",
        &a,
    );
    assert_eq!(e.matches("error:").count(), 1, "{e}");
    assert!(e.contains("`undefined_thing` is not defined"), "{e}");
    // Repeats of one message are capped.
    let body: String = (0..6)
        .map(|k| format!("    y[{}] = zz{k}\n", k % 4))
        .collect();
    let e = lower_err(&format!("def f(y, n):\n{body}"), &a);
    assert_eq!(e.matches("error:").count(), 6, "{e}");
    let body: String = (0..6).map(|_| "    y[0] = 1.0 + y\n".to_string()).collect();
    let e = lower_err(&format!("def f(y, n):\n{body}"), &a);
    assert_eq!(e.matches("error:").count(), 3, "{e}");
    assert!(
        e.contains("3 more errors with this message are not shown"),
        "{e}"
    );
}

#[test]
fn tuple_assignment_evaluates_the_right_side_first() {
    let a = [arr(ElemTy::F64, &[2]), int(4)];
    let t = lower_ok(
        "def f(y, n):\n    a = y[0]\n    b = y[1]\n    a, b = b, a + b\n    y[0] = a\n    y[1] = b\n",
        &a,
    );
    // `a + b` is kept before `a` changes; `b` goes straight into `a`.
    assert!(t.contains("b_new: f64 = (a + b)"), "{t}");
    assert!(t.contains("a = b\n"), "{t}");
    assert!(t.contains("b = b_new"), "{t}");
}

#[test]
fn accumulators_are_typed_by_use() {
    let a = [
        arr(ElemTy::F32, &[8]),
        arr(ElemTy::F32, &[8]),
        arr(ElemTy::I32, &[8]),
    ];
    let src = "def f(x, y, k):\n    acc = 0.0\n    mixed = 0.0\n    far = 0.1\n    s = 0\n    n = 0\n    for i in range(8):\n        acc += x[i] * y[i]\n        mixed += x[i]\n        mixed += 1.0\n        far += x[i]\n        s += k[i]\n        n += 1\n    y[0] = acc + mixed + far\n    k[0] = s + n\n";
    let t = lower_ok(src, &a);
    // float32 stores into a literal that float32 holds exactly
    assert!(t.contains("acc: f32 = 0.0"), "{t}");
    assert!(t.contains("acc = (acc + (x[i] * y[i]))"), "{t}");
    // 0.1 is rounded to a float32, as the first update (NEP 50's
    // float32(0.1) + x[i]) rounds it: a float32 from the start
    assert!(t.contains("far: f32"), "{t}");
    assert!(t.contains("far = (far + x[i])"), "{t}");
    // `mixed += 1.0` after `mixed += x[i]` adds to a float32, as NumPy does
    assert!(t.contains("mixed: f32"), "{t}");
    // int32 stores into `s = 0`; `n` only gets weak values
    assert!(t.contains("s: i32 = 0"), "{t}");
    assert!(t.contains("n: i64 = 0"), "{t}");
}

fn dict(entries: &[(&str, ArgType)]) -> ArgType {
    ArgType::Dict(
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    )
}

#[test]
fn dict_entries_become_parameters_of_their_own() {
    let src = "def f(A, y):\n    for i in range(A['m']['n']):\n        y[i] = A['v'][i] * 2.0\n";
    let a = dict(&[("v", arr(ElemTy::F32, &[4])), ("m", dict(&[("n", int(4))]))]);
    let p = lower_with(src, &[a, arr(ElemTy::F32, &[4])], &StaticResolver::new()).unwrap();
    let names: Vec<&str> = p
        .host
        .params
        .iter()
        .map(|v| p.host.var(*v).name.as_str())
        .collect();
    assert_eq!(names, ["A['v']", "A['m']['n']", "y"]);
}

#[test]
fn dict_misuse_is_reported_at_the_source() {
    let a = dict(&[("v", arr(ElemTy::F32, &[4]))]);
    let y = arr(ElemTy::F32, &[4]);
    let e = lower_err(
        "def f(A, y):\n    y[0] = A['w'][0]\n",
        &[a.clone(), y.clone()],
    );
    assert!(
        e.contains("the dict `A` has no key 'w'") && e.contains("t.py:2"),
        "{e}"
    );
    let e = lower_err(
        "def f(A, y):\n    k = 0\n    y[0] = A[k][0]\n",
        &[a.clone(), y.clone()],
    );
    assert!(e.contains("constant string key"), "{e}");
    let e = lower_err("def f(A, y):\n    A['v'] = y\n", &[a.clone(), y.clone()]);
    assert!(e.contains("cannot assign to `A['v']`"), "{e}");
    let e = lower_err("def f(A, y):\n    y[0] = A\n", &[a, y]);
    assert!(e.contains("`A` is a dict, not a value"), "{e}");
}

#[test]
fn entry_names_escape_what_would_break_the_header() {
    assert_eq!(
        crate::signature::entry_name("A", "a b'"),
        "A['a\\u{20}b\\u{27}']"
    );
    // (no trigraph, no end of a block comment in the `// parpy-param` line)
    assert_eq!(
        crate::signature::entry_name("A", "???/*/"),
        "A['?\\u{3f}\\u{3f}/*\\u{2f}']"
    );
    let t = dict(&[("x", int(1)), ("d", dict(&[("y", int(2))]))]);
    let leaves: Vec<String> = t.leaves("P").into_iter().map(|(n, _)| n).collect();
    assert_eq!(leaves, ["P['x']", "P['d']['y']"]);
    for (base, keys) in [
        ("A", vec!["a b'\\c"]),
        ("P", vec!["d", "y"]),
        ("B", vec!["]['"]),
        ("C", vec!["a??/", "*/"]),
    ] {
        let mut name = base.to_string();
        for k in &keys {
            name = crate::signature::entry_name(&name, k);
        }
        let (b, k) = crate::signature::split_entry_name(&name).unwrap();
        assert_eq!(
            (b, k),
            (base, keys.iter().map(|k| k.to_string()).collect()),
            "{name}"
        );
    }
    assert_eq!(crate::signature::split_entry_name("x"), None);
}
