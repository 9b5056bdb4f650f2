//! Parser tests: accepted subset and one rejection per unsupported construct.

use super::*;
use crate::diag::render_all;

fn parse(src: &str) -> Result<FunctionDef, Vec<Diagnostic>> {
    parse_function(SourceFile::from_function_text("t.py", src, 10))
}

fn err(src: &str) -> String {
    match parse(src) {
        Ok(_) => panic!("expected a parse error for:\n{src}"),
        Err(d) => render_all(&d),
    }
}

#[test]
fn a_tuple_inside_a_loop_target_is_a_group_of_its_names() {
    let f = parse("def f(x, w):\n    for i, (a, b) in enumerate(zip(x, w)):\n        pass\n")
        .expect("parses");
    let StmtKind::For { unpack, group, .. } = &f.body[0].kind else {
        panic!("not a loop: {:?}", f.body[0].kind);
    };
    let names: Vec<&str> = unpack.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["i", "a", "b"]);
    assert_eq!(*group, Some((1, 3)));
}

#[test]
fn parses_sum_rows() {
    let f = parse(
        "@parpy.jit\ndef sum_rows(x, y, N):\n    parpy.label('outer')\n    for i in range(N):\n        y[i] = parpy.operators.sum(x[i, :])\n",
    )
    .unwrap();
    assert_eq!(f.name, "sum_rows");
    let names: Vec<_> = f.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["x", "y", "N"]);
    assert_eq!(f.body.len(), 2);
    let StmtKind::For { var, body, .. } = &f.body[1].kind else {
        panic!("not a for loop: {:?}", f.body[1]);
    };
    assert_eq!(var, "i");
    let StmtKind::Assign { value, targets } = &body[0].kind else {
        panic!("not an assignment");
    };
    assert_eq!(targets.len(), 1);
    let ExprKind::Call { func, args, .. } = &value.kind else {
        panic!("not a call");
    };
    assert_eq!(func.dotted_path().unwrap(), ["parpy", "operators", "sum"]);
    let ExprKind::Subscript { indices, .. } = &args[0].kind else {
        panic!("not a subscript");
    };
    assert!(matches!(
        indices[1].kind,
        ExprKind::Slice {
            lo: None,
            hi: None,
            step: None
        }
    ));
}

#[test]
fn indented_function_keeps_positions() {
    let src = "    def f(x):\n        x[0] = {1, 2}\n";
    let text = err(src);
    assert!(text.contains("set literals"), "{text}");
    assert!(text.contains("t.py:11:16"), "{text}");
}

#[test]
fn syntax_error_is_a_diagnostic() {
    let text = err("def f(x):\n    x[0] = (1 +\n");
    assert!(text.contains("invalid syntax"), "{text}");
    assert!(text.contains("t.py:"), "{text}");
}

#[test]
fn elif_nests() {
    let f = parse("def f(x):\n    if x[0] > 0:\n        x[0] = 1\n    elif x[0] < 0:\n        x[0] = 2\n    else:\n        pass\n").unwrap();
    let StmtKind::If { else_body, .. } = &f.body[0].kind else {
        panic!()
    };
    assert!(matches!(else_body[0].kind, StmtKind::If { .. }));
}

#[test]
fn rejects_each_construct_with_location() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "    y = {v: v for v in x}\n",
            "dict comprehensions",
            "t.py:11:9",
        ),
        (
            "    y = {v for v in x}\n",
            "set comprehensions",
            "t.py:11:9",
        ),
        ("    y = {1: 2}\n", "dict literals", "t.py:11:9"),
        ("    y = {1, 2}\n", "set literals", "t.py:11:9"),
        (
            "    y = f(lambda v: v)\n",
            "lambda expressions",
            "t.py:11:11",
        ),
        (
            "    try:\n        pass\n    except E:\n        pass\n",
            "`try` statements",
            "t.py:11:5",
        ),
        ("    import numpy\n", "`import` statements", "t.py:11:5"),
        ("    global g\n", "`global` declarations", "t.py:11:5"),
        ("    del x\n", "`del` statements", "t.py:11:5"),
        (
            "    assert x, y\n",
            "the message of an `assert` must be a string literal, an f-string or a `str.format` of one",
            "t.py:11:15",
        ),
        (
            "    raise E\n",
            "parpy functions cannot raise `E`",
            "t.py:11:11",
        ),
        ("    raise\n", "a bare `raise` re-raises", "t.py:11:5"),
        (
            "    class C:\n        pass\n",
            "class definitions",
            "t.py:11:5",
        ),
        (
            "    def g():\n        pass\n",
            "a function defined inside a parpy function can only return an expression",
            "t.py:11:5",
        ),
        ("    break\n", "`break` outside a loop", "t.py:11:5"),
        (
            "    if x:\n        continue\n",
            "`continue` outside a loop",
            "t.py:12:9",
        ),
        (
            "    g(x, **kw)\n",
            "`**` arguments are not supported",
            "t.py:11:10",
        ),
        ("    y = None\n", "`None` values", "t.py:11:9"),
        ("    (a, b), c = x\n", "nested tuple targets", "t.py:11:5"),
        ("    a, b += 1, 2\n", "tuple targets", "t.py:11:5"),
        ("    a, *b = x\n", "starred assignment targets", "t.py:11:8"),
        (
            "    for i, ((j, k), m) in enumerate(x):\n        pass\n",
            "loop targets must be a name or a tuple of names",
            "t.py:11:13",
        ),
        ("    y = (yield 1)\n", "`yield` expressions", "t.py:11:10"),
        ("    y = f\"{x}\"\n", "f-strings", "t.py:11:9"),
        (
            "    if x or (n := 3) > 2:\n        pass\n",
            "a walrus assignment (`:=`) here is not supported",
            "t.py:11:14",
        ),
    ];
    for (body, what, loc) in cases {
        let src = format!("def f(x):\n{body}");
        let text = err(&src);
        assert!(text.contains(what), "expected `{what}` in:\n{text}");
        assert!(text.contains(loc), "expected `{loc}` in:\n{text}");
    }
}

#[test]
fn rejects_bad_parameters() {
    let text = err("def f(x, n=3, *args, **kw):\n    pass\n");
    assert!(!text.contains("default"), "{text}");
    assert!(text.contains("`*args` parameters"), "{text}");
    assert!(text.contains("`**kwargs` parameters"), "{text}");
}

#[test]
fn await_is_rejected() {
    let text = err("def f(x):\n    y = await x\n");
    assert!(text.contains("`await` expressions"), "{text}");
    assert!(text.contains("t.py:11:9"), "{text}");
}

#[test]
fn two_defs_are_an_error() {
    let text = err("def g():\n    pass\ndef f(x):\n    pass\n");
    assert!(text.contains("single function definition"), "{text}");
}

#[test]
fn collects_all_errors() {
    let d = parse("def f(x):\n    y = {1}\n    z = {2: 3}\n    del x\n").unwrap_err();
    assert_eq!(d.len(), 3, "{}", render_all(&d));
}

#[test]
fn compound_statements_are_pointed_at_by_their_first_line() {
    let text = err("def f(x):\n    try:\n        pass\n    except E:\n        pass\n");
    assert!(text.contains("t.py:11:5"), "{text}");
    // A single-line caret run under `try:` and no bracket over the body.
    assert!(text.contains("^^^^ not supported"), "{text}");
    assert!(!text.contains("|_"), "{text}");
}

#[test]
fn parses_tuple_and_chained_assignments() {
    let f = parse("def f(x):\n    a, b = b, a\n    c = d = 0.0\n    H, W = x.shape\n").unwrap();
    let StmtKind::Assign { targets, value } = &f.body[0].kind else {
        panic!("not an assignment");
    };
    assert!(matches!(&targets[..], [Expr { kind: ExprKind::Tuple(t), .. }] if t.len() == 2));
    assert!(matches!(&value.kind, ExprKind::Tuple(v) if v.len() == 2));
    let StmtKind::Assign { targets, .. } = &f.body[1].kind else {
        panic!("not an assignment");
    };
    assert_eq!(targets.len(), 2);
    let StmtKind::Assign { value, .. } = &f.body[2].kind else {
        panic!("not an assignment");
    };
    assert!(matches!(&value.kind, ExprKind::Attr { attr, .. } if attr == "shape"));
}

#[test]
fn tuples_outside_assignments_are_rejected() {
    // (a call's argument may be a tuple: `parpy.atomic.add(a, (i, j), v)`;
    // sema rejects it elsewhere)
    let text = err("def f(x):\n    g((1, 2) + 3)\n");
    assert!(text.contains("tuple expressions"), "{text}");
}

#[test]
fn identifiers_are_nfkc_normalized_as_python_does() {
    // `ｖ` (fullwidth) is `v`, `ﬁ` is `fi`, `ｐarpy.ｌabel` is `parpy.label`
    let f = parse(
        "def ｆ(ｖ, y):\n    ｐarpy.ｌabel('i')\n    for ｉ in range(2):\n        y[i] = v[ｉ] + ﬁ\n",
    )
    .unwrap();
    assert_eq!(f.name, "f");
    let names: Vec<_> = f.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["v", "y"]);
    let StmtKind::Expr(call) = &f.body[0].kind else {
        panic!("not an expression statement: {:?}", f.body[0]);
    };
    let ExprKind::Call { func, .. } = &call.kind else {
        panic!("not a call");
    };
    assert_eq!(func.dotted_path().unwrap(), ["parpy", "label"]);
    let StmtKind::For { var, body, .. } = &f.body[1].kind else {
        panic!("not a for loop: {:?}", f.body[1]);
    };
    assert_eq!(var, "i");
    let text = format!("{:?}", body[0]);
    assert!(
        text.contains("Name(\"fi\")") && !text.contains('ｉ'),
        "{text}"
    );
}

#[test]
fn global_reads_are_the_names_neither_parameters_nor_assigned() {
    let f = parse(
        "def f(x, n):\n    t = K\n    a, b = n, M\n    for i in range(N):\n        x[i, J] = t + i + a + b\n    with parpy.gpu:\n        s = 0\n        s += L\n    return helper(x)\n",
    )
    .unwrap();
    let names: Vec<&str> = f.global_reads().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["K", "M", "range", "N", "J", "parpy", "L", "helper"]);
}

#[test]
fn break_and_continue_act_on_loops() {
    let f = parse(
        "def f(x):\n    while x[0] > 0:\n        for i in range(3):\n            if i == 1:\n                continue\n            break\n        break\n",
    )
    .unwrap();
    let StmtKind::While { body, .. } = &f.body[0].kind else {
        panic!()
    };
    let StmtKind::For { body: inner, .. } = &body[0].kind else {
        panic!()
    };
    assert!(matches!(inner[1].kind, StmtKind::Break));
    let StmtKind::If { then_body, .. } = &inner[0].kind else {
        panic!()
    };
    assert!(matches!(then_body[0].kind, StmtKind::Continue));
    assert!(matches!(body[1].kind, StmtKind::Break));
}

#[test]
fn keeps_keywords_and_defaults() {
    let f = parse("def f(x, n=-3, m=None):\n    g(x, axis=None, k=n)\n").expect("parses");
    let d: Vec<_> = f
        .params
        .iter()
        .map(|p| p.default.as_ref().map(|k| &k.value.kind))
        .collect();
    assert!(d[0].is_none());
    assert!(matches!(d[1], Some(ExprKind::Unary { .. })));
    assert!(matches!(d[2], Some(ExprKind::None)));
    let StmtKind::Expr(call) = &f.body[0].kind else {
        panic!("expected an expression statement");
    };
    let ExprKind::Call { args, keywords, .. } = &call.kind else {
        panic!("expected a call");
    };
    assert_eq!(args.len(), 1);
    let names: Vec<&str> = keywords.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["axis", "k"]);
    assert!(matches!(keywords[0].value.kind, ExprKind::None));
    assert!(matches!(&keywords[1].value.kind, ExprKind::Name(n) if n == "n"));
}
