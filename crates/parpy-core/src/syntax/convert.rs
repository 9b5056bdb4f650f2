//! Conversion from rustpython's AST to ours. Every unsupported construct
//! produces one diagnostic naming it and pointing at it; conversion goes on
//! so that all of them are reported at once.

use rustpython_parser::ast as py;
use rustpython_parser::ast::Ranged;
use rustpython_parser::text_size::TextRange;

use super::ast::*;
use super::messages::{format_fields, printf_count, FieldName, FormatPiece};
use crate::diag::{Diagnostic, SourceId, Span};
use crate::ops::{BinOp, UnOp, RAISABLE};

pub(super) struct Converter {
    file: SourceId,
    diags: Vec<Diagnostic>,
    /// The loops around the statement being converted.
    loops: u32,
    /// The local lambdas the statement being converted may call (`f =
    /// lambda a: ...` earlier in its block or a block around it), the
    /// innermost last.
    lambdas: Vec<Lambda>,
    /// The names the generator expressions around the expression being
    /// converted bind.
    generator_names: Vec<String>,
    /// The lambdas of blocks that have ended (a call after the block is
    /// refused: Python's name may be unbound there).
    ended_lambdas: Vec<Lambda>,
    /// The walrus assignments (`(s := e)`, which reads as `s`) of the
    /// statement being converted, in the order Python makes them: each
    /// becomes the assignment `s = e` before the statement (see `block`).
    walruses: Vec<Walrus>,
    /// Inside what Python may not evaluate (the operands of `and` / `or`
    /// after the first, the branches of a conditional expression), where
    /// a walrus cannot be moved before the statement.
    conditional: u32,
}

/// `(name := value)` at `span`.
struct Walrus {
    name: String,
    value: Expr,
    span: Span,
}

/// `name = lambda params: body`, whose calls `name(args)` are its body
/// with the arguments in place of the parameters (Python's lambda reads
/// the names it does not bind when it is called: so does the body where
/// the call is).
#[derive(Clone)]
struct Lambda {
    name: String,
    params: Vec<String>,
    body: py::Expr,
    span: Span,
    /// Its body is being expanded (a call of itself inside is refused).
    open: bool,
}

/// The message of an `assert` or a `raise` (see [`StmtKind::Assert`]):
/// its text (none: Python's default), the values it names, and whether
/// the text is for Python's `%` operator rather than `str.format`.
#[derive(Default)]
struct Message {
    text: Option<String>,
    values: Vec<Expr>,
    printf: bool,
}

impl Message {
    fn plain(text: String) -> Message {
        Message {
            text: Some(text),
            ..Message::default()
        }
    }

    /// A `str.format` template naming `values` (none: its text).
    fn fields(template: String, values: Vec<Expr>) -> Message {
        if values.is_empty() {
            // `f"text"`: the text itself
            return Message::plain(template.replace("{{", "{").replace("}}", "}"));
        }
        Message {
            text: Some(template),
            values,
            printf: false,
        }
    }
}

/// What the message of an `assert` or a `raise` may be.
const MESSAGE_HELP: &str = "a string literal, an f-string of numbers (`f\"n is {n}, x is {x[i]:.3f}\"`) or `\"n is {}\".format(n)`";

/// An identifier as Python sees it: NFKC-normalized (PEP 3131), so the
/// fullwidth `ｖ` is the name `v`.
fn ident(name: &str) -> String {
    if name.is_ascii() {
        name.to_string()
    } else {
        unicode_normalization::UnicodeNormalization::nfkc(name).collect()
    }
}

/// Whether a call of `func` may write arrays (a walrus may not follow it
/// in its statement, `walrus_assignments`; a `match` subject may not make
/// it, `match_stmt`): any but [`PURE_BUILTINS`] and dotted functions of
/// modules (`np.sqrt`, `math.floor`).
fn may_write(func: &Expr) -> bool {
    !matches!(&func.kind, ExprKind::Name(f) if PURE_BUILTINS.contains(&f.as_str()))
        && func.dotted_path().is_none_or(|p| p.len() == 1)
}

/// Python's builtins a walrus may follow in its statement: they write no
/// array (see `walrus_assignments`).
const PURE_BUILTINS: &[&str] = &[
    "abs",
    "min",
    "max",
    "int",
    "float",
    "bool",
    "len",
    "range",
    "round",
    "pow",
    "divmod",
    "sum",
    "any",
    "all",
    "enumerate",
    "zip",
    "reversed",
];

/// A string literal standing as a statement (a docstring).
fn is_docstring(e: &py::Expr) -> bool {
    matches!(
        e,
        py::Expr::Constant(py::ExprConstant {
            value: py::Constant::Str(_),
            ..
        })
    )
}

fn unsupported(what: &str, plural: bool) -> String {
    format!(
        "{what} {} not supported in parpy functions",
        if plural { "are" } else { "is" }
    )
}

impl Converter {
    pub(super) fn new(file: SourceId) -> Converter {
        Converter {
            file,
            diags: vec![],
            loops: 0,
            lambdas: vec![],
            generator_names: vec![],
            ended_lambdas: vec![],
            walruses: vec![],
            conditional: 0,
        }
    }

    fn span(&self, r: TextRange) -> Span {
        Span::new(self.file, r.start().to_u32(), r.end().to_u32())
    }

    /// Reports an unsupported construct (`what` is plural: "list literals").
    fn reject(&mut self, r: TextRange, what: &str) {
        self.reject_in(r, r, what);
    }

    /// `reject` of a part `r` of the statement at `stmt`; a statement over
    /// several lines is named by them too (ParPy's messages say "lines A-B").
    fn reject_in(&mut self, r: TextRange, stmt: TextRange, what: &str) {
        let mut d = Diagnostic::error(unsupported(what, true)).at(self.span(r), "not supported");
        if let Some(f) = crate::diag::source(self.file) {
            let lo = stmt.start().to_u32();
            let (first, _) = f.line_col(lo);
            let (last, _) = f.line_col(stmt.end().to_u32().saturating_sub(1).max(lo));
            if last > first {
                d = d.note(format!("the statement covers lines {first}-{last}"));
            }
        }
        self.diags.push(d);
    }

    fn reject_with(&mut self, r: TextRange, message: &str, label: &str, help: Option<&str>) {
        let mut d = Diagnostic::error(message).at(self.span(r), label);
        if let Some(h) = help {
            d = d.help(h);
        }
        self.diags.push(d);
    }

    /// The exception class and message of `raise E` / `raise E("message")`
    /// (`E` one of [`RAISABLE`], the message a string literal); `None`
    /// after an error.
    fn raised(&mut self, raise: &py::StmtRaise) -> Option<(String, Message)> {
        const HELP: &str = "write `raise ValueError(f\"n is {n}\")`: a builtin exception class and a string literal or f-string";
        let Some(exc) = raise.exc.as_deref() else {
            self.reject_with(
                raise.range,
                "a bare `raise` re-raises the exception being handled, which parpy functions cannot have",
                "no exception",
                Some(HELP),
            );
            return None;
        };
        if let Some(cause) = raise.cause.as_deref() {
            self.reject_with(
                cause.range(),
                "`raise ... from ...` is not supported in parpy functions",
                "a cause",
                Some(HELP),
            );
            return None;
        }
        let named = match exc {
            py::Expr::Name(n) => Some((n, &[][..])),
            py::Expr::Call(c) if c.keywords.is_empty() => match c.func.as_ref() {
                py::Expr::Name(n) => Some((n, &c.args[..])),
                _ => None,
            },
            _ => None,
        };
        let Some((class, args)) = named else {
            self.reject_with(
                exc.range(),
                "parpy functions raise builtin exceptions only",
                "not a builtin exception",
                Some(HELP),
            );
            return None;
        };
        if !RAISABLE.contains(&class.id.as_str()) {
            self.reject_with(
                class.range,
                &format!("parpy functions cannot raise `{}`", class.id),
                "not one of the exceptions parpy raises",
                Some(&format!("raise one of {}", RAISABLE.join(", "))),
            );
            return None;
        }
        let msg = match args {
            [] => Message::default(),
            [m] => self.message(m, "a `raise`")?,
            [_, other, ..] => {
                self.reject_with(
                    other.range(),
                    "the exception of a `raise` takes one message in parpy functions",
                    "a second argument",
                    Some(HELP),
                );
                return None;
            }
        };
        Some((class.id.to_string(), msg))
    }

    /// The message of an `assert` or a `raise` (`of` names which): a
    /// string literal (`values` empty), or an f-string whose fields are
    /// numbers computed when it fails: then the message is a template for
    /// Python's `str.format`, field `k` (`{k!r:spec}`, the conversion and
    /// a constant format spec as written) the value `values[k]`, at most
    /// [`crate::ops::MAX_NOTED`] of them.
    fn message(&mut self, m: &py::Expr, of: &str) -> Option<Message> {
        let parts = match m {
            py::Expr::Constant(py::ExprConstant {
                value: py::Constant::Str(m),
                ..
            }) => return Some(Message::plain(m.to_string())),
            py::Expr::JoinedStr(j) => &j.values,
            py::Expr::BinOp(b) if matches!(b.op, py::Operator::Add) => {
                let mut template = String::new();
                let mut values = vec![];
                self.concatenated(m, &mut template, &mut values, of)?;
                return Some(Message::fields(template, values));
            }
            py::Expr::Call(c) => match c.func.as_ref() {
                py::Expr::Attribute(a) if a.attr.as_str() == "format" => match a.value.as_ref() {
                    py::Expr::Constant(py::ExprConstant {
                        value: py::Constant::Str(text),
                        range,
                        ..
                    }) => return self.format_call(text, *range, c, of),
                    _ => return self.not_a_message(m, of),
                },
                _ => return self.not_a_message(m, of),
            },
            py::Expr::BinOp(b) if matches!(b.op, py::Operator::Mod) => match b.left.as_ref() {
                py::Expr::Constant(py::ExprConstant {
                    value: py::Constant::Str(text),
                    range,
                    ..
                }) => return self.printf_message(text, *range, &b.right, of),
                _ => return self.not_a_message(m, of),
            },
            other => return self.not_a_message(other, of),
        };
        let mut template = String::new();
        let mut values = vec![];
        for part in parts {
            self.fstring_part(part, &mut template, &mut values, of)?;
        }
        Some(Message::fields(template, values))
    }

    /// One part of an f-string message appended to `template` (its
    /// fields' values to `values`): text, or a field `{v!r:spec}`.
    fn fstring_part(
        &mut self,
        part: &py::Expr,
        template: &mut String,
        values: &mut Vec<Expr>,
        of: &str,
    ) -> Option<()> {
        match part {
            py::Expr::Constant(py::ExprConstant {
                value: py::Constant::Str(t),
                ..
            }) => template.push_str(&crate::ops::template_text(t, false)),
            py::Expr::FormattedValue(f) => {
                let spec = match f.format_spec.as_deref() {
                    None => Some(String::new()),
                    Some(py::Expr::JoinedStr(j)) => j
                        .values
                        .iter()
                        .map(|v| match v {
                            py::Expr::Constant(py::ExprConstant {
                                value: py::Constant::Str(t),
                                ..
                            }) => Some(t.to_string()),
                            _ => None,
                        })
                        .collect(),
                    Some(_) => None,
                };
                let Some(spec) = spec else {
                    let at = f.format_spec.as_deref().map_or(f.range, |s| s.range());
                    self.reject_with(
                        at,
                        "the format spec of an f-string field must be written out in parpy functions",
                        "computed format spec",
                        Some("write the spec as text (`{x:8.3f}`)"),
                    );
                    return None;
                };
                let conv = match f.conversion {
                    py::ConversionFlag::None => "",
                    py::ConversionFlag::Str => "!s",
                    py::ConversionFlag::Repr => "!r",
                    py::ConversionFlag::Ascii => "!a",
                };
                self.message_field(&f.value, conv, &spec, template, values, of)?;
            }
            other => {
                self.reject_with(
                    other.range(),
                    "this part of an f-string is not supported in parpy functions",
                    "here",
                    Some(MESSAGE_HELP),
                );
                return None;
            }
        }
        Some(())
    }

    /// The field `{k!conv:spec}` of the value `v` appended to `template`,
    /// `v` to `values` (`k` its place there).
    fn message_field(
        &mut self,
        v: &py::Expr,
        conv: &str,
        spec: &str,
        template: &mut String,
        values: &mut Vec<Expr>,
        of: &str,
    ) -> Option<()> {
        if values.len() == crate::ops::MAX_NOTED {
            self.too_many_values(v.range(), of);
            return None;
        }
        let colon = if spec.is_empty() { "" } else { ":" };
        template.push_str(&format!("{{{}{conv}{colon}{spec}}}", values.len()));
        values.push(self.expr(v));
        Some(())
    }

    /// A message joined by `+` (`"x is " + str(x[i]) + f" at {i}"`)
    /// appended to `template`: string literals, f-strings, and `str(v)`,
    /// `repr(v)`, `format(v, "spec")` of numbers, as fields.
    fn concatenated(
        &mut self,
        m: &py::Expr,
        template: &mut String,
        values: &mut Vec<Expr>,
        of: &str,
    ) -> Option<()> {
        match m {
            py::Expr::BinOp(b) if matches!(b.op, py::Operator::Add) => {
                self.concatenated(&b.left, template, values, of)?;
                self.concatenated(&b.right, template, values, of)
            }
            py::Expr::Constant(py::ExprConstant {
                value: py::Constant::Str(_),
                ..
            }) => self.fstring_part(m, template, values, of),
            py::Expr::JoinedStr(j) => j
                .values
                .iter()
                .try_for_each(|p| self.fstring_part(p, template, values, of)),
            py::Expr::Call(c) if c.keywords.is_empty() => {
                let f = match c.func.as_ref() {
                    py::Expr::Name(n) => n.id.as_str(),
                    _ => "",
                };
                match (f, &c.args[..]) {
                    ("str", [v]) => self.message_field(v, "!s", "", template, values, of),
                    ("repr", [v]) => self.message_field(v, "!r", "", template, values, of),
                    ("format", [v]) => self.message_field(v, "", "", template, values, of),
                    (
                        "format",
                        [v, py::Expr::Constant(py::ExprConstant {
                            value: py::Constant::Str(spec),
                            ..
                        })],
                    ) if !spec.contains(['{', '}']) => {
                        self.message_field(v, "", spec, template, values, of)
                    }
                    _ => self.not_concatenable(m, of),
                }
            }
            _ => self.not_concatenable(m, of),
        }
    }

    /// A term of a message joined by `+` that is not a string.
    fn not_concatenable(&mut self, m: &py::Expr, of: &str) -> Option<()> {
        self.reject_with(
            m.range(),
            &format!("a part of the message of {of} joined by `+` must be a string in parpy functions"),
            "not a string literal, an f-string, or `str(...)` of a number",
            Some("write `str(x)` (or `repr(x)`, `format(x, \".3f\")`) of a number, or use an f-string"),
        );
        None
    }

    /// A message naming more values than [`crate::ops::MAX_NOTED`]
    /// (`r`: the first one too many).
    fn too_many_values(&mut self, r: TextRange, of: &str) {
        self.reject_with(
            r,
            &format!(
                "the message of {of} may name at most {} values in parpy functions",
                crate::ops::MAX_NOTED
            ),
            "one value too many",
            Some("name fewer values, or split the check in two"),
        );
    }

    /// A message text at `at` that Python's `how` (`str.format`, `%`)
    /// cannot format, `why` in Python's words.
    fn unformattable(&mut self, at: TextRange, of: &str, why: &str, how: &str) {
        self.reject_with(
            at,
            &format!("the message of {of} cannot be formatted: {why}"),
            "this text",
            Some(&format!(
                "Python's `{how}` raises this when the check fails"
            )),
        );
    }

    /// A message that is none of those [`Self::message`] takes.
    fn not_a_message(&mut self, m: &py::Expr, of: &str) -> Option<Message> {
        self.reject_with(
            m.range(),
            &format!("the message of {of} must be a string literal, an f-string or a `str.format` of one in parpy functions"),
            "not a string",
            Some(MESSAGE_HELP),
        );
        None
    }

    /// `"text %d of %.3f" % (a, b)` (or `% a`: one value) as a message:
    /// the text for Python's `%` operator, taking the values in order.
    /// What Python would raise when formatting (too few or too many
    /// values, an unknown conversion) is an error here.
    fn printf_message(
        &mut self,
        text: &str,
        at: TextRange,
        right: &py::Expr,
        of: &str,
    ) -> Option<Message> {
        let args: Vec<&py::Expr> = match right {
            py::Expr::Tuple(t) => t.elts.iter().collect(),
            one => vec![one],
        };
        if let Some(s) = args.iter().find(|a| matches!(a, py::Expr::Starred(_))) {
            self.reject_with(
                s.range(),
                "`*args` of a message's `%` is not supported in parpy functions",
                "starred",
                Some("name each value"),
            );
            return None;
        }
        let why = match printf_count(text) {
            Ok(n) if n > args.len() => Some("not enough arguments for format string".to_string()),
            Ok(n) if n < args.len() => {
                Some("not all arguments converted during string formatting".to_string())
            }
            Ok(_) => None,
            Err(why) => Some(why),
        };
        if let Some(why) = why {
            self.unformattable(at, of, &why, "%");
            return None;
        }
        if let Some(extra) = args.get(crate::ops::MAX_NOTED) {
            self.too_many_values(extra.range(), of);
            return None;
        }
        if args.is_empty() {
            return Some(Message::plain(text.replace("%%", "%")));
        }
        Some(Message {
            text: Some(text.to_string()),
            values: args.into_iter().map(|a| self.expr(a)).collect(),
            printf: true,
        })
    }

    /// `"text {} {k:.3f}".format(a, k=b)` as a message: the text parsed as
    /// Python's `str.format` parses it (fields `{}` numbered in order,
    /// `{0}`, `{name}`, a conversion and a constant spec), and rewritten as
    /// the template [`Self::message`] makes, field `j` the `j`-th argument
    /// the text names. An argument the text does not name is not computed.
    /// What Python would raise when formatting (a lone `}`, a missing
    /// argument, switching between `{}` and `{0}`) is an error here.
    fn format_call(
        &mut self,
        text: &str,
        at: TextRange,
        call: &py::ExprCall,
        of: &str,
    ) -> Option<Message> {
        for a in &call.args {
            if let py::Expr::Starred(st) = a {
                self.reject_with(
                    st.range,
                    "`*args` of a message's `str.format` is not supported in parpy functions",
                    "starred",
                    Some("name each value"),
                );
                return None;
            }
        }
        if let Some(k) = call.keywords.iter().find(|k| k.arg.is_none()) {
            self.reject_with(
                k.range,
                "`**kwargs` of a message's `str.format` is not supported in parpy functions",
                "a dict of values",
                Some("name each value"),
            );
            return None;
        }
        let fields = match format_fields(text) {
            Ok(f) => f,
            Err(why) => {
                self.unformattable(at, of, &why, "str.format");
                return None;
            }
        };
        // each argument the text names, in the order first named
        let mut slots: Vec<(FieldName, &py::Expr)> = vec![];
        let mut template = String::new();
        for piece in fields {
            let (name, tail) = match piece {
                FormatPiece::Text(t) => {
                    template.push_str(&t);
                    continue;
                }
                FormatPiece::Field(name, tail) => (name, tail),
            };
            let slot = match slots.iter().position(|(n, _)| *n == name) {
                Some(k) => k,
                None => {
                    let arg = match &name {
                        FieldName::Index(k) => call.args.get(*k).ok_or_else(|| {
                            format!("Replacement index {k} out of range for positional args tuple")
                        }),
                        FieldName::Key(key) => call
                            .keywords
                            .iter()
                            .find(|kw| kw.arg.as_ref().is_some_and(|a| a.as_str() == key))
                            .map(|kw| &kw.value)
                            .ok_or_else(|| format!("no argument `{key}` (KeyError: '{key}')")),
                    };
                    let arg = match arg {
                        Ok(a) => a,
                        Err(why) => {
                            self.unformattable(at, of, &why, "str.format");
                            return None;
                        }
                    };
                    if slots.len() == crate::ops::MAX_NOTED {
                        self.too_many_values(arg.range(), of);
                        return None;
                    }
                    slots.push((name, arg));
                    slots.len() - 1
                }
            };
            template.push_str(&format!("{{{slot}{tail}}}"));
        }
        let values = slots.iter().map(|(_, e)| self.expr(e)).collect();
        Some(Message::fields(template, values))
    }

    /// The part of `r` on its first line (a rejected compound statement is
    /// pointed at by its header, not its whole body).
    fn first_line(&self, r: TextRange) -> TextRange {
        let lo = r.start().to_u32() as usize;
        let hi = r.end().to_u32() as usize;
        let end = crate::diag::source(self.file)
            .and_then(|f| {
                f.text
                    .get(lo..hi)
                    .and_then(|t| t.find('\n'))
                    .map(|k| lo + k)
            })
            .unwrap_or(hi);
        let end = u32::try_from(end).unwrap_or(r.end().to_u32());
        TextRange::new(r.start(), end.into())
    }

    /// A placeholder expression after an error (never reaches sema).
    fn bad(&self, r: TextRange) -> Expr {
        Expr {
            kind: ExprKind::Int(0),
            span: self.span(r),
        }
    }

    pub(super) fn function(
        mut self,
        f: &py::StmtFunctionDef,
    ) -> Result<FunctionDef, Vec<Diagnostic>> {
        let a = &f.args;
        let mut params = vec![];
        let positional = a.posonlyargs.len() + a.args.len();
        let all = a.posonlyargs.iter().chain(&a.args).chain(&a.kwonlyargs);
        for (i, p) in all.enumerate() {
            let default = p.default.as_ref().map(|d| {
                self.keyword(
                    &p.def.arg,
                    d,
                    TextRange::new(p.def.range.start(), d.range().end()),
                )
            });
            // A name or attribute path is checked by sema; other annotations
            // (`parpy.types.buffer(T, [N])`) are Python values the binding
            // checks, so their syntax is not parpy's concern here.
            let annotation = p
                .def
                .annotation
                .as_ref()
                .filter(|e| is_dotted(e))
                .map(|e| self.expr(e));
            params.push(Param {
                name: ident(&p.def.arg),
                annotation,
                default,
                kw_only: i >= positional,
                pos_only: i < a.posonlyargs.len(),
                span: self.span(p.def.range),
            });
        }
        if let Some(v) = &a.vararg {
            self.reject(v.range, "`*args` parameters");
        }
        if let Some(v) = &a.kwarg {
            self.reject(v.range, "`**kwargs` parameters");
        }
        let body = self.block(&f.body);
        if self.diags.is_empty() {
            Ok(FunctionDef {
                name: ident(&f.name),
                params,
                body,
                span: self.span(f.range),
                source: self.file,
            })
        } else {
            Err(self.diags)
        }
    }

    fn block(&mut self, stmts: &[py::Stmt]) -> Vec<Stmt> {
        // (a lambda defined in the block is called in the rest of it)
        let visible = self.lambdas.len();
        let mut out = vec![];
        for s in stmts {
            // (the walruses of a statement in a nested block are its own)
            let outer = std::mem::take(&mut self.walruses);
            if let Some(split) = self.split_tuple_assign(s) {
                self.walruses = outer;
                out.extend(split);
                continue;
            }
            if let py::Stmt::Match(m) = s {
                let st = self.match_stmt(m);
                self.walruses = outer;
                out.extend(st.into_iter().flatten());
                continue;
            }
            let st = self.stmt(s);
            let walruses = std::mem::replace(&mut self.walruses, outer);
            let Some(st) = st else { continue };
            match st.kind {
                StmtKind::While { cond, body, orelse } if !walruses.is_empty() => {
                    out.push(self.while_walrus(cond, body, orelse, walruses, st.span));
                }
                kind => {
                    let st = Stmt {
                        kind,
                        span: st.span,
                    };
                    out.extend(self.walrus_assignments(&st.own_exprs(), walruses));
                    out.push(st);
                }
            }
        }
        let ended = self.lambdas.split_off(visible);
        self.ended_lambdas.extend(ended);
        out
    }

    /// `match subject:` with `case` patterns of values (`case 0:`,
    /// `case -1 | 2:`, `case K.A:`), captures (`case n:`, `case 1 | 2 as
    /// k:`), the wildcard `case _:` and guards (`case n if n > 3:`): an
    /// `if`/`elif` chain comparing the subject with `==`, as Python does,
    /// the captured names assigned first in the case's body. The subject
    /// must be free of calls with effects and of walruses (it is read once
    /// per comparison). Other patterns (sequences, mappings, classes,
    /// `None`/`True`/`False`, which Python tests with `is`) are refused.
    /// Where a guard is false, the case's names stay unbound (Python binds
    /// them before the guard).
    fn match_stmt(&mut self, m: &py::StmtMatch) -> Option<Vec<Stmt>> {
        let walruses = self.walruses.len();
        let subject = self.expr(&m.subject);
        let mut effect = self.walruses.len() > walruses;
        subject.walk(&mut |x| {
            effect |= matches!(&x.kind, ExprKind::Call { func, .. } if may_write(func));
        });
        if effect {
            self.reject_with(
                m.subject.range(),
                "the subject of a `match` must not call functions or assign names in parpy functions",
                "evaluated once by Python, compared once per case by parpy",
                Some("assign it to a name first (`v = f(x)`, then `match v:`)"),
            );
            return None;
        }
        // (an irrefutable case before the last is Python's SyntaxError)
        let mut chain: Vec<(Option<Expr>, Vec<Stmt>, Span)> = vec![];
        for case in &m.cases {
            let mut names = vec![];
            let cond = self.pattern(&case.pattern, &subject, &mut names)?;
            let span = self.span(case.pattern.range());
            let guard = case.guard.as_deref().map(|g| {
                let mut g = self.expr(g);
                // (a captured name in the guard is the subject)
                g.walk_mut(&mut |x| {
                    if matches!(&x.kind, ExprKind::Name(n) if names.iter().any(|(m, _)| m == n)) {
                        *x = subject.clone();
                    }
                });
                g
            });
            let cond = match (cond, guard) {
                (Some(c), Some(g)) => Some(Expr {
                    kind: ExprKind::BoolOp {
                        op: BinOp::And,
                        values: vec![c, g],
                    },
                    span,
                }),
                (c, g) => c.or(g),
            };
            let mut body: Vec<Stmt> = names
                .into_iter()
                .map(|(n, at)| Stmt {
                    kind: StmtKind::Assign {
                        targets: vec![Expr {
                            kind: ExprKind::Name(n),
                            span: at,
                        }],
                        value: subject.clone(),
                    },
                    span: at,
                })
                .collect();
            body.extend(self.block(&case.body));
            chain.push((cond, body, span));
        }
        let mut rest: Vec<Stmt> = vec![];
        for (cond, body, at) in chain.into_iter().rev() {
            rest = match cond {
                None => body,
                Some(cond) => vec![Stmt {
                    kind: StmtKind::If {
                        cond,
                        then_body: body,
                        else_body: rest,
                    },
                    span: at,
                }],
            };
        }
        Some(rest)
    }

    /// The test that `pattern` matches `subject` (`None`: it always
    /// does), the names it captures pushed to `names`; `Err` (`None`)
    /// after an error.
    fn pattern(
        &mut self,
        pattern: &py::Pattern,
        subject: &Expr,
        names: &mut Vec<(String, Span)>,
    ) -> Option<Option<Expr>> {
        let span = self.span(pattern.range());
        match pattern {
            py::Pattern::MatchValue(v) => Some(Some(Expr::compare(
                BinOp::Eq,
                subject.clone(),
                self.expr(&v.value),
                span,
            ))),
            py::Pattern::MatchAs(a) => {
                let cond = match a.pattern.as_deref() {
                    Some(p) => self.pattern(p, subject, names)?,
                    None => None,
                };
                if let Some(n) = &a.name {
                    names.push((ident(n), span));
                }
                Some(cond)
            }
            py::Pattern::MatchOr(o) => {
                let mut values = vec![];
                for p in &o.patterns {
                    let mut inner = vec![];
                    match self.pattern(p, subject, &mut inner)? {
                        Some(c) if inner.is_empty() => values.push(c),
                        _ => {
                            self.reject_with(
                                p.range(),
                                "the alternatives of an `|` pattern must be values in parpy functions",
                                "not a value",
                                Some("capture the whole pattern instead (`case 1 | 2 as k:`)"),
                            );
                            return None;
                        }
                    }
                }
                Some(Some(Expr {
                    kind: ExprKind::BoolOp {
                        op: BinOp::Or,
                        values,
                    },
                    span,
                }))
            }
            other => {
                let what = match other {
                    py::Pattern::MatchSingleton(_) => {
                        "`None`, `True` and `False` patterns (Python tests them with `is`)"
                    }
                    py::Pattern::MatchSequence(_) | py::Pattern::MatchStar(_) => {
                        "sequence patterns"
                    }
                    py::Pattern::MatchMapping(_) => "mapping patterns",
                    _ => "class patterns",
                };
                self.reject_with(
                    other.range(),
                    &format!("{what} are not supported in `match` statements of parpy functions"),
                    "this pattern",
                    Some("match numbers by value (`case 0:`, `case 1 | 2:`), capture (`case n:`) or `case _:`"),
                );
                None
            }
        }
    }

    /// `name = lambda params: body`: recorded for the calls after it (see
    /// [`Lambda`]); no statement of its own. `None` for another statement.
    /// A nested `def name(params): return body` (a docstring before the
    /// `return` allowed) is the same: Python's closure also reads the names
    /// it does not bind when it is called.
    fn lambda_def(&mut self, s: &py::Stmt) -> Option<()> {
        let (name, args, body, what) = match s {
            py::Stmt::Assign(a) => {
                let ([py::Expr::Name(n)], py::Expr::Lambda(l)) =
                    (a.targets.as_slice(), a.value.as_ref())
                else {
                    return None;
                };
                ((&n.id, n.range), &*l.args, &*l.body, ("a lambda", l.range))
            }
            py::Stmt::FunctionDef(f) => {
                let body = match f.body.as_slice() {
                    [py::Stmt::Expr(doc), rest @ ..] if is_docstring(&doc.value) => rest,
                    all => all,
                };
                let [py::Stmt::Return(py::StmtReturn {
                    value: Some(value), ..
                })] = body
                else {
                    let first = self.first_line(f.range);
                    self.reject_with(
                        first,
                        "a function defined inside a parpy function can only return an expression",
                        "a body of other statements",
                        Some("write it as `def f(a, b): return ...`, or define a `@parpy.jit` helper at module level and call that"),
                    );
                    return Some(());
                };
                if let Some(d) = f.decorator_list.first() {
                    self.reject_with(
                        d.range(),
                        "a function defined inside a parpy function takes no decorators",
                        "decorated",
                        Some("define a `@parpy.jit` helper at module level and call that"),
                    );
                    return Some(());
                }
                let at = self.first_line(f.range);
                ((&f.name, at), &*f.args, &**value, ("a nested function", at))
            }
            _ => return None,
        };
        if !plain_params(args) {
            self.reject_with(
                what.1,
                &format!("{} in a parpy function takes plain parameters only", what.0),
                "defaults, `*args` or keyword-only parameters",
                Some("write the values at the call, or define a `@parpy.jit` helper"),
            );
            return Some(());
        }
        let (name, at) = (ident(name.0), name.1);
        if self.lambdas.iter().any(|f| f.name == name) {
            self.reject_with(
                at,
                "the name of a lambda or a nested function cannot be bound again in a parpy function",
                "bound again here",
                Some("give the other function another name"),
            );
            return Some(());
        }
        self.lambdas.push(Lambda {
            name,
            params: args.args.iter().map(|p| ident(&p.def.arg)).collect(),
            body: body.clone(),
            span: self.span(s.range()),
            open: false,
        });
        Some(())
    }

    /// The body of local lambda `self.lambdas[k]`, converted where it is
    /// called or named (at `r`); `None` after an error.
    fn lambda_body(&mut self, k: usize, r: TextRange) -> Option<Expr> {
        let f = self.lambdas[k].clone();
        let name = &f.name;
        if f.open {
            self.reject_with(
                r,
                "a lambda cannot call itself in a parpy function",
                "called or named inside its own body",
                None,
            );
            return None;
        }
        self.lambdas[k].open = true;
        let body = self.expr(&f.body);
        self.lambdas[k].open = false;
        // a name the lambda reads that a generator around the call binds
        // would be the generator's there, the function's in Python
        let mut reads = vec![];
        body.walk(&mut |e| {
            if let ExprKind::Name(v) = &e.kind {
                reads.push(v.clone());
            }
        });
        if let Some(g) = reads
            .iter()
            .find(|v| !f.params.contains(v) && self.generator_names.contains(v))
        {
            let d = Diagnostic::error(format!(
                "the lambda `{name}` reads `{g}`, which the generator around this call binds"
            ))
            .at(self.span(r), "called here")
            .also(f.span, "the lambda")
            .note(format!(
                "Python's lambda reads the function's `{g}`, not the generator's"
            ))
            .help("pass the value as an argument of the lambda");
            self.diags.push(d);
            return None;
        }
        Some(body)
    }

    /// The `key=` of Python's `max` / `min` when it is a lambda of one
    /// parameter or names a local lambda or nested function: an
    /// [`ExprKind::Lambda`] (sema puts each item in place of the
    /// parameter). `None` for another key.
    fn key_function(&mut self, v: &py::Expr) -> Option<Expr> {
        let r = v.range();
        let (params, body) = match v {
            py::Expr::Lambda(l) => {
                let params: Vec<String> = l.args.args.iter().map(|p| ident(&p.def.arg)).collect();
                if !plain_params(&l.args) || params.len() != 1 {
                    self.reject_with(
                        r,
                        "the `key=` lambda of `max` or `min` takes one plain parameter",
                        "not one plain parameter",
                        Some("write `key=lambda j: ...`"),
                    );
                    return Some(self.bad(r));
                }
                // (a local lambda its body calls reads the function's
                // names, not this parameter: see `lambda_call`)
                let bound = self.generator_names.len();
                self.generator_names.extend(params.iter().cloned());
                let body = self.expr(&l.body);
                self.generator_names.truncate(bound);
                (params, body)
            }
            py::Expr::Name(n) => {
                let name = ident(&n.id);
                let k = self.lambdas.iter().rposition(|f| f.name == name)?;
                let f = self.lambdas[k].clone();
                if f.params.len() != 1 {
                    let d = Diagnostic::error(format!(
                        "`{name}` takes {} positional arguments but 1 was given",
                        f.params.len()
                    ))
                    .at(
                        self.span(r),
                        "the key of `max` or `min` is called with each item",
                    )
                    .also(f.span, "the lambda")
                    .type_error();
                    self.diags.push(d);
                    return Some(self.bad(r));
                }
                let Some(body) = self.lambda_body(k, r) else {
                    return Some(self.bad(r));
                };
                (f.params, body)
            }
            _ => return None,
        };
        Some(Expr {
            kind: ExprKind::Lambda {
                params,
                body: Box::new(body),
            },
            span: self.span(r),
        })
    }

    /// A call `f(args)` of a local lambda `f`: its body with the arguments
    /// in place of its parameters. `None` when `f` is not one.
    fn lambda_call(&mut self, c: &py::ExprCall) -> Option<Expr> {
        let py::Expr::Name(n) = c.func.as_ref() else {
            return None;
        };
        let name = ident(&n.id);
        let k = self.lambdas.iter().rposition(|f| f.name == name)?;
        let f = self.lambdas[k].clone();
        let r = c.range;
        if !c.keywords.is_empty() || c.args.len() != f.params.len() {
            let d = Diagnostic::error(format!(
                "`{name}` takes {} positional argument{} but {} {} given",
                f.params.len(),
                if f.params.len() == 1 { "" } else { "s" },
                c.args.len() + c.keywords.len(),
                if c.args.len() + c.keywords.len() == 1 {
                    "was"
                } else {
                    "were"
                }
            ))
            .at(self.span(r), "this call")
            .also(f.span, "the lambda")
            .type_error();
            self.diags.push(d);
            return Some(self.bad(r));
        }
        let args: Vec<Expr> = c.args.iter().map(|a| self.expr(a)).collect();
        let Some(mut body) = self.lambda_body(k, r) else {
            return Some(self.bad(r));
        };
        // a generator in the body binding a parameter, or a name an
        // argument reads, would take the argument's place there
        let mut bound: Vec<String> = vec![];
        body.walk(&mut |e| {
            if let ExprKind::Generator { clauses, .. } = &e.kind {
                for c in clauses {
                    bound.extend(c.targets().into_iter().map(str::to_string));
                }
            }
        });
        let mut arg_reads: Vec<String> = vec![];
        for a in &args {
            a.walk(&mut |e| {
                if let ExprKind::Name(v) = &e.kind {
                    arg_reads.push(v.clone());
                }
            });
        }
        if let Some(g) = bound
            .iter()
            .find(|b| f.params.contains(b) || arg_reads.contains(b))
        {
            let d = Diagnostic::error(format!(
                "parpy cannot call the lambda `{name}` here: a generator in it binds `{g}`, a parameter or a name the arguments read"
            ))
            .at(self.span(r), "called here")
            .also(f.span, "the lambda")
            .help("rename the generator's variable");
            self.diags.push(d);
            return Some(self.bad(r));
        }
        let by: Vec<(String, Expr)> = f.params.iter().cloned().zip(args).collect();
        body.walk_mut(&mut |e| {
            if let ExprKind::Name(v) = &e.kind {
                if let Some((_, a)) = by.iter().find(|(p, _)| p == v) {
                    *e = a.clone();
                }
            }
        });
        Some(body)
    }

    /// A loop's body (where `break` and `continue` are allowed).
    /// `a, b = e1, e2` of distinct names whose values read none of them:
    /// the assignments one after the other, which Python's evaluation of
    /// the whole right side first cannot tell apart (so each value may be
    /// what only an assignment of its own takes, a view `x[i, ::2]`).
    /// `None` for another statement.
    fn split_tuple_assign(&mut self, s: &py::Stmt) -> Option<Vec<Stmt>> {
        let py::Stmt::Assign(a) = s else { return None };
        let ([target], py::Expr::Tuple(values)) = (a.targets.as_slice(), a.value.as_ref()) else {
            return None;
        };
        let (py::Expr::Tuple(py::ExprTuple { elts: targets, .. })
        | py::Expr::List(py::ExprList { elts: targets, .. })) = target
        else {
            return None;
        };
        if targets.len() != values.elts.len() || targets.len() < 2 {
            return None;
        }
        let mut names = vec![];
        for t in targets {
            let py::Expr::Name(n) = t else { return None };
            let n = ident(&n.id);
            if names.iter().any(|(m, _)| *m == n) {
                return None;
            }
            names.push((n, self.span(t.range())));
        }
        // (converted once: dropped with their messages when not split)
        let (diags, walruses) = (self.diags.len(), self.walruses.len());
        let converted: Vec<Expr> = values.elts.iter().map(|v| self.expr(v)).collect();
        let mut reads_target = !self.walruses.is_empty();
        for v in &converted {
            v.walk(&mut |x| {
                if let ExprKind::Name(n) = &x.kind {
                    reads_target |= names.iter().any(|(m, _)| m == n);
                }
            });
        }
        if reads_target || self.diags.len() > diags {
            self.diags.truncate(diags);
            self.walruses.truncate(walruses);
            return None;
        }
        let span = self.span(a.range);
        Some(
            names
                .into_iter()
                .zip(converted)
                .map(|((n, at), value)| Stmt {
                    kind: StmtKind::Assign {
                        targets: vec![Expr {
                            kind: ExprKind::Name(n),
                            span: at,
                        }],
                        value,
                    },
                    span,
                })
                .collect(),
        )
    }

    /// The assignments of the walruses of a statement (its expressions
    /// `exprs`), to put before it: Python
    /// evaluates them where they stand, so each must be the first thing the
    /// statement evaluates that another part could tell apart (a read of
    /// its name or a call of a function, which may write arrays, earlier
    /// in the statement is refused).
    fn walrus_assignments(&mut self, exprs: &[&Expr], walruses: Vec<Walrus>) -> Vec<Stmt> {
        let mut earlier: Vec<(Span, Option<String>)> = vec![];
        for e in exprs {
            e.walk(&mut |x| match &x.kind {
                ExprKind::Name(v) => earlier.push((x.span, Some(v.clone()))),
                ExprKind::Call { func, .. } if may_write(func) => earlier.push((x.span, None)),
                _ => {}
            });
        }
        let mut out = vec![];
        for w in walruses {
            let before = earlier
                .iter()
                .find(|(at, name)| at.lo < w.span.lo && name.as_ref().is_none_or(|n| *n == w.name));
            if let Some((at, name)) = before {
                let what = match name {
                    Some(n) => format!("`{n}` is read here before"),
                    None => "this call runs before it in Python".to_string(),
                };
                self.diags.push(
                    Diagnostic::error(
                        "a walrus assignment (`:=`) after a part of its statement that could tell when it ran",
                    )
                    .at(w.span, "assigned here")
                    .also(*at, what)
                    .help("assign the value on a line of its own before the statement"),
                );
                continue;
            }
            let target = Expr {
                kind: ExprKind::Name(w.name),
                span: w.span,
            };
            out.push(Stmt {
                kind: StmtKind::Assign {
                    targets: vec![target],
                    value: w.value,
                },
                span: w.span,
            });
        }
        out
    }

    /// `while c:` whose condition assigns names (`while (k := f(k)) > 0:`),
    /// evaluated before every iteration: `while True:` with the assignments
    /// and `if not c: break` first.
    fn while_walrus(
        &mut self,
        cond: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
        walruses: Vec<Walrus>,
        span: Span,
    ) -> Stmt {
        if let Some(first) = orelse.first() {
            self.diags.push(
                Diagnostic::error("a `while` loop whose condition has a walrus assignment (`:=`) cannot have an `else:` in parpy functions")
                    .at(first.span, "the `else:` block")
                    .help("test the condition after the loop instead"),
            );
        }
        let at = cond.span;
        let mut new_body = self.walrus_assignments(&[&cond], walruses);
        new_body.push(Stmt {
            kind: StmtKind::If {
                cond: Expr {
                    kind: ExprKind::Unary {
                        op: UnOp::Not,
                        arg: Box::new(cond),
                    },
                    span: at,
                },
                then_body: vec![Stmt {
                    kind: StmtKind::Break,
                    span: at,
                }],
                else_body: vec![],
            },
            span: at,
        });
        new_body.extend(body);
        Stmt {
            kind: StmtKind::While {
                cond: Expr {
                    kind: ExprKind::Bool(true),
                    span: at,
                },
                body: new_body,
                orelse: vec![],
            },
            span,
        }
    }

    fn loop_body(&mut self, stmts: &[py::Stmt]) -> Vec<Stmt> {
        self.loops += 1;
        let body = self.block(stmts);
        self.loops -= 1;
        body
    }

    fn stmt(&mut self, s: &py::Stmt) -> Option<Stmt> {
        let r = s.range();
        if self.lambda_def(s).is_some() {
            return None;
        }
        let kind = match s {
            // `a, (b, c) = e1, (e2, e3)`: the names and values paired at
            // every level, one level (`a, b, c = e1, e2, e3`: Python
            // evaluates the whole right side first, then binds in order)
            py::Stmt::Assign(a)
                if a.targets.len() == 1 && nested_pairs(&a.targets[0], &a.value).is_some() =>
            {
                let (ts, vs) = nested_pairs(&a.targets[0], &a.value)?;
                let targets: Vec<Option<Expr>> = ts.iter().map(|t| self.target(t, false)).collect();
                let values = vs.iter().map(|v| self.expr(v)).collect();
                let target = Expr {
                    kind: ExprKind::Tuple(targets.into_iter().collect::<Option<Vec<_>>>()?),
                    span: self.span(a.targets[0].range()),
                };
                StmtKind::Assign {
                    targets: vec![target],
                    value: Expr {
                        kind: ExprKind::Tuple(values),
                        span: self.span(a.value.range()),
                    },
                }
            }
            py::Stmt::Assign(a) => {
                // (`a, (b, c) = f(x)`: nested targets of a helper's nested
                // tuple, which sema matches against its `return`; `p, (q,
                // r) = 7, f(x)` against the tuple's items)
                let call = matches!(&*a.value, py::Expr::Call(_) | py::Expr::Tuple(_));
                let targets: Vec<Option<Expr>> = a
                    .targets
                    .iter()
                    .map(|t| match call {
                        true => self.nested_target(t),
                        false => self.target(t, true),
                    })
                    .collect();
                let value = self.assign_value(&a.value);
                StmtKind::Assign {
                    targets: targets.into_iter().collect::<Option<Vec<_>>>()?,
                    value,
                }
            }
            py::Stmt::AnnAssign(a) => match &a.value {
                Some(v) => {
                    let target = self.target(&a.target, false)?;
                    StmtKind::Assign {
                        targets: vec![target],
                        value: self.expr(v),
                    }
                }
                None => {
                    self.reject(r, "annotations without a value");
                    return None;
                }
            },
            py::Stmt::AugAssign(a) => {
                let target = self.target(&a.target, false)?;
                let op = Self::operator(a.op);
                StmtKind::AugAssign {
                    target,
                    op,
                    value: self.expr(&a.value),
                    rebind: None,
                }
            }
            py::Stmt::For(f) => {
                let (var, var_span, unpack, group) = self.loop_target(&f.target)?;
                let iter = self.iterable(&f.iter);
                if let ExprKind::Call { func, args, .. } = &iter.kind {
                    let zero_step = matches!(&func.kind, ExprKind::Name(n) if n == "range")
                        && matches!(args.get(2).map(|a| &a.kind), Some(ExprKind::Int(0)));
                    if zero_step {
                        self.reject_with(
                            f.iter.range(),
                            "the step size must be non-zero: `range` with a step of 0 never ends",
                            "step of 0",
                            None,
                        );
                    }
                }
                StmtKind::For {
                    var,
                    var_span,
                    unpack,
                    group,
                    iter,
                    body: self.loop_body(&f.body),
                    orelse: self.block(&f.orelse),
                }
            }
            py::Stmt::While(w) => StmtKind::While {
                cond: self.expr(&w.test),
                body: self.loop_body(&w.body),
                orelse: self.block(&w.orelse),
            },
            py::Stmt::If(i) => StmtKind::If {
                cond: self.expr(&i.test),
                then_body: self.block(&i.body),
                else_body: self.block(&i.orelse),
            },
            py::Stmt::With(w) => {
                if w.items.len() != 1 {
                    self.reject(r, "`with` statements with several items");
                    return None;
                }
                let item = &w.items[0];
                // only a name or attribute path can be `parpy.gpu` (which sema
                // checks); anything else is rejected now, at decoration
                if !matches!(
                    &item.context_expr,
                    py::Expr::Name(_) | py::Expr::Attribute(_)
                ) {
                    self.reject(r, "`with` statements over anything but `parpy.gpu`");
                    return None;
                }
                if let Some(v) = &item.optional_vars {
                    self.reject_in(v.range(), r, "`with ... as` targets");
                }
                StmtKind::With {
                    ctx: self.expr(&item.context_expr),
                    body: self.block(&w.body),
                }
            }
            // `return None` is `return`
            py::Stmt::Return(ret) => StmtKind::Return(
                ret.value
                    .as_ref()
                    .filter(|v| {
                        !matches!(
                            v.as_ref(),
                            py::Expr::Constant(py::ExprConstant {
                                value: py::Constant::None,
                                ..
                            })
                        )
                    })
                    .map(|v| self.assign_value(v)),
            ),
            py::Stmt::Expr(e) => StmtKind::Expr(self.expr(&e.value)),
            py::Stmt::Assert(a) => {
                let msg = match a.msg.as_deref() {
                    None => Message::default(),
                    Some(m) => self.message(m, "an `assert`")?,
                };
                StmtKind::Assert {
                    test: self.expr(&a.test),
                    msg: msg.text,
                    values: msg.values,
                    exception: "AssertionError".to_string(),
                    printf: msg.printf,
                }
            }
            py::Stmt::Raise(raise) => {
                let (exception, msg) = self.raised(raise)?;
                StmtKind::Assert {
                    test: Expr {
                        kind: ExprKind::Bool(false),
                        span: self.span(r),
                    },
                    msg: msg.text,
                    values: msg.values,
                    exception,
                    printf: msg.printf,
                }
            }
            py::Stmt::Pass(_) => StmtKind::Pass,
            py::Stmt::Break(_) | py::Stmt::Continue(_) => {
                let word = if matches!(s, py::Stmt::Break(_)) {
                    "break"
                } else {
                    "continue"
                };
                if self.loops == 0 {
                    // what Python says when compiling the function
                    self.reject_with(
                        r,
                        &format!("`{word}` outside a loop"),
                        "not inside a `for` or `while` loop",
                        None,
                    );
                    return None;
                }
                if word == "break" {
                    StmtKind::Break
                } else {
                    StmtKind::Continue
                }
            }
            other => {
                let what = match other {
                    py::Stmt::FunctionDef(_) | py::Stmt::AsyncFunctionDef(_) => {
                        "nested function definitions"
                    }
                    py::Stmt::ClassDef(_) => "class definitions",
                    py::Stmt::Delete(_) => "`del` statements",
                    py::Stmt::TypeAlias(_) => "`type` aliases",
                    py::Stmt::AsyncFor(_) => "`async for` loops",
                    py::Stmt::AsyncWith(_) => "`async with` statements",
                    py::Stmt::Try(_) | py::Stmt::TryStar(_) => "`try` statements",
                    py::Stmt::Import(_) | py::Stmt::ImportFrom(_) => "`import` statements",
                    py::Stmt::Global(_) => "`global` declarations",
                    py::Stmt::Nonlocal(_) => "`nonlocal` declarations",
                    _ => "these statements",
                };
                // pointed at its first line, naming all of them
                let first = self.first_line(r);
                self.reject_in(first, r, what);
                return None;
            }
        };
        Some(Stmt {
            kind,
            span: self.span(r),
        })
    }

    /// A `for` loop's target: a name, or a tuple of names (`for i, v in
    /// enumerate(x):`), whose loop variable is then `(i, v)`; one tuple of
    /// names may stand inside it (`for i, (a, b) in ...`: the range of
    /// its names in the flat list).
    fn loop_target(&mut self, t: &py::Expr) -> Option<(String, Span, Vec<Named>, Group)> {
        let not_a_name = |this: &mut Self, r: TextRange| {
            this.reject_with(
                r,
                "loop targets must be a name or a tuple of names",
                "not a name",
                Some(
                    "loop over an index with `for i in range(n):` and write to the array \
                     inside the loop (`x[i] = ...`)",
                ),
            );
        };
        let tuple = |e: &py::Expr| match e {
            py::Expr::Tuple(py::ExprTuple { elts, .. })
            | py::Expr::List(py::ExprList { elts, .. })
                if !elts.is_empty() =>
            {
                Some(elts.clone())
            }
            _ => None,
        };
        match t {
            py::Expr::Name(n) => Some((ident(&n.id), self.span(n.range), vec![], None)),
            _ if tuple(t).is_some() => {
                let elts = tuple(t).unwrap_or_default();
                let mut names = vec![];
                let mut group = None;
                let mut ok = true;
                for e in &elts {
                    match (e, tuple(e)) {
                        (py::Expr::Name(n), _) => names.push((ident(&n.id), self.span(n.range))),
                        (_, Some(inner)) if group.is_none() => {
                            let lo = names.len();
                            for i in &inner {
                                match i {
                                    py::Expr::Name(n) => {
                                        names.push((ident(&n.id), self.span(n.range)))
                                    }
                                    _ => {
                                        not_a_name(self, i.range());
                                        ok = false;
                                    }
                                }
                            }
                            group = Some((lo, names.len()));
                        }
                        _ => {
                            not_a_name(self, e.range());
                            ok = false;
                        }
                    }
                }
                if !ok {
                    return None;
                }
                let var = format!(
                    "({})",
                    names
                        .iter()
                        .map(|(n, _)| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                Some((var, self.span(t.range()), names, group))
            }
            _ => {
                not_a_name(self, t.range());
                None
            }
        }
    }

    /// An assignment target of a call's value: [`Self::target`], with
    /// tuples nested to any depth.
    fn nested_target(&mut self, t: &py::Expr) -> Option<Expr> {
        match t {
            py::Expr::Tuple(py::ExprTuple { elts, .. })
            | py::Expr::List(py::ExprList { elts, .. }) => {
                let items: Vec<Option<Expr>> = elts
                    .iter()
                    .map(|e| match e {
                        py::Expr::Tuple(_) | py::Expr::List(_) => self.nested_target(e),
                        _ => self.target(e, false),
                    })
                    .collect();
                Some(Expr {
                    kind: ExprKind::Tuple(items.into_iter().collect::<Option<Vec<_>>>()?),
                    span: self.span(t.range()),
                })
            }
            _ => self.target(t, true),
        }
    }

    /// An assignment target: a name, a subscript or (when `tuple_ok`) a
    /// tuple of those.
    fn target(&mut self, t: &py::Expr, tuple_ok: bool) -> Option<Expr> {
        match t {
            py::Expr::Name(_) | py::Expr::Subscript(_) => Some(self.expr(t)),
            py::Expr::Tuple(py::ExprTuple { elts, .. })
            | py::Expr::List(py::ExprList { elts, .. })
                if tuple_ok =>
            {
                let mut items: Vec<Option<Expr>> = vec![];
                for e in elts {
                    if matches!(e, py::Expr::Tuple(_) | py::Expr::List(_)) {
                        self.reject_with(
                            e.range(),
                            "nested tuple targets are not supported in parpy functions",
                            "nested tuple",
                            Some(
                                "unpack one level at a time: `a, b = ...` with names or subscripts",
                            ),
                        );
                        items.push(None);
                    } else {
                        items.push(self.target(e, false));
                    }
                }
                Some(Expr {
                    kind: ExprKind::Tuple(items.into_iter().collect::<Option<Vec<_>>>()?),
                    span: self.span(t.range()),
                })
            }
            py::Expr::Tuple(_) | py::Expr::List(_) => {
                self.reject_with(
                    t.range(),
                    "tuple targets are not supported in this statement",
                    "not supported",
                    Some(
                        "use a plain assignment: `a, b = b, a` is supported, `a, b += ...` is not",
                    ),
                );
                None
            }
            py::Expr::Starred(_) => {
                self.reject(t.range(), "starred assignment targets (`*rest`)");
                None
            }
            py::Expr::Attribute(_) => {
                self.reject(t.range(), "assignments to attributes");
                None
            }
            _ => {
                self.reject_with(
                    t.range(),
                    "cannot assign to this expression",
                    "not a name or a subscript",
                    None,
                );
                None
            }
        }
    }

    /// What a `for` loop or a generator iterates: a tuple or list literal
    /// (`for d in (-1, 0, 1):`, its elements maybe tuples themselves:
    /// `for dx, dy in ((0, 1), (1, 0)):`; sema checks the elements) or an
    /// ordinary expression.
    fn iterable(&mut self, e: &py::Expr) -> Expr {
        match e {
            py::Expr::Tuple(py::ExprTuple { elts, range, .. })
            | py::Expr::List(py::ExprList { elts, range, .. }) => Expr {
                kind: ExprKind::Tuple(
                    elts.iter()
                        .map(|x| match x {
                            py::Expr::Tuple(_) | py::Expr::List(_) => self.iterable(x),
                            _ => self.expr(x),
                        })
                        .collect(),
                ),
                span: self.span(*range),
            },
            other => self.expr(other),
        }
    }

    /// The value of an `=` assignment or a call's argument: a tuple
    /// (`a, b = b, a`; the index of `parpy.atomic.add(a, (i, j), v)`) or an
    /// ordinary expression.
    fn assign_value(&mut self, v: &py::Expr) -> Expr {
        match v {
            // (a tuple of tuples, `offsets = ((0, 1), (1, 0))`: sema reads
            // a name bound once to one of numbers as the literal)
            py::Expr::Tuple(t) => Expr {
                kind: ExprKind::Tuple(
                    t.elts
                        .iter()
                        .map(|e| match e {
                            py::Expr::Tuple(_) => self.iterable(e),
                            _ => self.expr(e),
                        })
                        .collect(),
                ),
                span: self.span(t.range),
            },
            other => self.expr(other),
        }
    }

    fn operator(op: py::Operator) -> BinOp {
        match op {
            py::Operator::Add => BinOp::Add,
            py::Operator::Sub => BinOp::Sub,
            py::Operator::Mult => BinOp::Mul,
            py::Operator::Div => BinOp::Div,
            py::Operator::FloorDiv => BinOp::FloorDiv,
            py::Operator::Mod => BinOp::Mod,
            py::Operator::Pow => BinOp::Pow,
            py::Operator::LShift => BinOp::Shl,
            py::Operator::RShift => BinOp::Shr,
            py::Operator::BitOr => BinOp::BitOr,
            py::Operator::BitXor => BinOp::BitXor,
            py::Operator::BitAnd => BinOp::BitAnd,
            py::Operator::MatMult => BinOp::MatMul,
        }
    }

    fn boxed(&mut self, e: &py::Expr) -> Box<Expr> {
        Box::new(self.expr(e))
    }

    fn expr(&mut self, e: &py::Expr) -> Expr {
        let r = e.range();
        let kind = match e {
            // a list is an array where NumPy reads it (`y[i, :3] = [a, b,
            // c]`, `np.array([a, b])`): `Expr::list`
            py::Expr::List(l) => {
                let items = l.elts.iter().map(|x| self.expr(x)).collect();
                return Expr::list(items, self.span(r));
            }
            py::Expr::Constant(c) => match &c.value {
                py::Constant::Bool(b) => ExprKind::Bool(*b),
                py::Constant::Int(i) => match (i64::try_from(i), u64::try_from(i)) {
                    (Ok(v), _) => ExprKind::Int(v),
                    // 2**63 .. 2**64 - 1 (`0x8000000000000000`): the
                    // operators of int64s it equals (`Expr::int_literal`)
                    (Err(_), Ok(u)) => return Expr::int_literal(u, self.span(r)),
                    (Err(_), Err(_)) => {
                        self.reject_with(
                            r,
                            "integer literal does not fit in 64 bits",
                            "too large",
                            None,
                        );
                        return self.bad(r);
                    }
                },
                py::Constant::Float(f) => ExprKind::Float(*f),
                py::Constant::Str(s) => ExprKind::Str(s.clone()),
                py::Constant::None => {
                    self.reject(r, "`None` values");
                    return self.bad(r);
                }
                py::Constant::Bytes(_) => {
                    self.reject(r, "bytes literals");
                    return self.bad(r);
                }
                py::Constant::Complex { .. } => {
                    self.reject(r, "complex literals");
                    return self.bad(r);
                }
                py::Constant::Ellipsis => {
                    self.reject(r, "`...` (Ellipsis)");
                    return self.bad(r);
                }
                py::Constant::Tuple(_) => {
                    self.reject(r, "tuple literals");
                    return self.bad(r);
                }
            },
            py::Expr::Name(n) => {
                let name = ident(&n.id);
                if let Some(f) = self.lambdas.iter().find(|f| f.name == name) {
                    let d = Diagnostic::error(format!(
                        "`{name}` names a lambda, which parpy functions can only call"
                    ))
                    .at(self.span(r), "not a call")
                    .also(f.span, "the lambda")
                    .help(format!(
                        "call it (`{name}(...)`), or give another value another name"
                    ));
                    self.diags.push(d);
                    return self.bad(r);
                }
                ExprKind::Name(name)
            }
            py::Expr::Attribute(a) => ExprKind::Attr {
                value: self.boxed(&a.value),
                attr: ident(&a.attr),
            },
            py::Expr::Subscript(s) => {
                let indices = match s.slice.as_ref() {
                    py::Expr::Tuple(t) => t.elts.iter().map(|i| self.index(i)).collect(),
                    other => vec![self.index(other)],
                };
                ExprKind::Subscript {
                    value: self.boxed(&s.value),
                    indices,
                }
            }
            py::Expr::Slice(_) => {
                // Only valid inside a subscript (handled by `index`).
                self.reject(r, "slices outside a subscript");
                return self.bad(r);
            }
            py::Expr::UnaryOp(u) => {
                let arg = self.boxed(&u.operand);
                let op = match u.op {
                    py::UnaryOp::USub => UnOp::Neg,
                    py::UnaryOp::Not => UnOp::Not,
                    py::UnaryOp::Invert => UnOp::BitNot,
                    py::UnaryOp::UAdd => UnOp::Pos,
                };
                ExprKind::Unary { op, arg }
            }
            py::Expr::BinOp(b) => {
                let lhs = self.boxed(&b.left);
                let rhs = self.boxed(&b.right);
                ExprKind::Binary {
                    op: Self::operator(b.op),
                    lhs,
                    rhs,
                }
            }
            // `a in b`, `a not in b` (one test: a chain with `in` is
            // refused below)
            py::Expr::Compare(c)
                if c.ops.len() == 1 && matches!(c.ops[0], py::CmpOp::In | py::CmpOp::NotIn) =>
            {
                let span = self.span(r);
                // (a tuple holds its items as a list does)
                let within = match &c.comparators[0] {
                    py::Expr::Tuple(t) => Expr::list(
                        t.elts.iter().map(|e| self.expr(e)).collect(),
                        self.span(t.range),
                    ),
                    b => self.expr(b),
                };
                let test = Expr::call(
                    Expr::name(crate::syntax::ast::CONTAINS, span),
                    vec![self.expr(&c.left), within],
                    span,
                );
                match c.ops[0] {
                    py::CmpOp::NotIn => ExprKind::Unary {
                        op: crate::ops::UnOp::Not,
                        arg: Box::new(test),
                    },
                    _ => return test,
                }
            }
            // `a is None` is `#is_none(a)`, `a is not None` is `not
            // #is_none(a)` (`sema::none_args`); other `is` tests are refused
            py::Expr::Compare(c)
                if c.ops.len() == 1 && matches!(c.ops[0], py::CmpOp::Is | py::CmpOp::IsNot) =>
            {
                let none = |e: &py::Expr| matches!(e, py::Expr::Constant(k) if matches!(k.value, py::Constant::None));
                let value = match (none(&c.left), none(&c.comparators[0])) {
                    (false, true) => &c.left,
                    (true, false) => &c.comparators[0],
                    _ => {
                        self.reject(r, "`is` comparisons other than `is None`");
                        return self.bad(r);
                    }
                };
                let span = self.span(r);
                let test = Expr::call(
                    Expr::name(crate::syntax::ast::IS_NONE, span),
                    vec![self.expr(value)],
                    span,
                );
                match c.ops[0] {
                    py::CmpOp::IsNot => ExprKind::Unary {
                        op: crate::ops::UnOp::Not,
                        arg: Box::new(test),
                    },
                    _ => return test,
                }
            }
            py::Expr::Compare(c) => {
                let first = self.boxed(&c.left);
                let mut rest = vec![];
                for (op, rhs) in c.ops.iter().zip(c.comparators.iter()) {
                    let op = match op {
                        py::CmpOp::Eq => BinOp::Eq,
                        py::CmpOp::NotEq => BinOp::Ne,
                        py::CmpOp::Lt => BinOp::Lt,
                        py::CmpOp::LtE => BinOp::Le,
                        py::CmpOp::Gt => BinOp::Gt,
                        py::CmpOp::GtE => BinOp::Ge,
                        py::CmpOp::Is | py::CmpOp::IsNot => {
                            self.reject(r, "`is` tests chained with comparisons");
                            return self.bad(r);
                        }
                        py::CmpOp::In | py::CmpOp::NotIn => {
                            self.reject(r, "`in` tests chained with comparisons");
                            return self.bad(r);
                        }
                    };
                    rest.push((op, self.expr(rhs)));
                }
                ExprKind::Compare { first, rest }
            }
            py::Expr::BoolOp(b) => {
                let mut values = vec![];
                for (k, v) in b.values.iter().enumerate() {
                    // (Python evaluates the operands after the first only
                    // where the ones before do not decide)
                    self.conditional += u32::from(k == 1);
                    values.push(self.expr(v));
                }
                self.conditional -= u32::from(b.values.len() > 1);
                ExprKind::BoolOp {
                    op: match b.op {
                        py::BoolOp::And => BinOp::And,
                        py::BoolOp::Or => BinOp::Or,
                    },
                    values,
                }
            }
            py::Expr::IfExp(i) => {
                let cond = self.boxed(&i.test);
                self.conditional += 1;
                let (then, else_) = (self.boxed(&i.body), self.boxed(&i.orelse));
                self.conditional -= 1;
                ExprKind::IfExp { cond, then, else_ }
            }
            py::Expr::NamedExpr(n) => {
                let py::Expr::Name(target) = n.target.as_ref() else {
                    self.reject(r, "walrus assignments to anything but a name");
                    return self.bad(r);
                };
                let inside = if self.conditional > 0 {
                    Some("inside `and` / `or` or a conditional expression, which may not evaluate it")
                } else if !self.generator_names.is_empty() {
                    Some("inside a generator or a comprehension")
                } else if self.lambdas.iter().any(|f| f.open) {
                    Some("inside the body of a lambda or a nested function")
                } else {
                    None
                };
                if let Some(inside) = inside {
                    self.reject_with(
                        r,
                        "a walrus assignment (`:=`) here is not supported in parpy functions",
                        inside,
                        Some("assign the value on a line of its own before the statement"),
                    );
                    return self.bad(r);
                }
                let value = self.expr(&n.value);
                let name = ident(&target.id);
                self.walruses.push(Walrus {
                    name: name.clone(),
                    value,
                    span: self.span(r),
                });
                ExprKind::Name(name)
            }
            py::Expr::Call(c)
                if self.lambdas.iter().any(
                    |f| matches!(c.func.as_ref(), py::Expr::Name(n) if ident(&n.id) == f.name),
                ) =>
            {
                return self.lambda_call(c).unwrap_or_else(|| self.bad(r));
            }
            py::Expr::Call(c)
                if self.ended_lambdas.iter().any(
                    |f| matches!(c.func.as_ref(), py::Expr::Name(n) if ident(&n.id) == f.name),
                ) =>
            {
                let py::Expr::Name(n) = c.func.as_ref() else {
                    return self.bad(r);
                };
                let name = ident(&n.id);
                let at = self
                    .ended_lambdas
                    .iter()
                    .rev()
                    .find(|f| f.name == name)
                    .map(|f| f.span);
                let mut d = Diagnostic::error(format!(
                    "the lambda `{name}` is defined in a block this call is outside of"
                ))
                .at(self.span(r), "called here");
                if let Some(at) = at {
                    d = d.also(at, "defined here");
                }
                self.diags.push(d.help(format!(
                    "define `{name}` once, before the blocks that call it (Python's name may be unbound here, or bound to another lambda)"
                )));
                return self.bad(r);
            }
            py::Expr::Call(c) => {
                let mut keywords = vec![];
                // (Python's `max` / `min`, unless a local lambda hides it)
                let extreme = matches!(c.func.as_ref(), py::Expr::Name(n)
                    if matches!(n.id.as_str(), "max" | "min")
                        && !self.lambdas.iter().any(|f| f.name == n.id.as_str()));
                for k in &c.keywords {
                    let key = match &k.arg {
                        Some(name) if extreme && name.as_str() == "key" => {
                            self.key_function(&k.value)
                        }
                        _ => None,
                    };
                    if let Some(value) = key {
                        keywords.push(Keyword {
                            name: "key".to_string(),
                            value,
                            span: self.span(k.range),
                        });
                        continue;
                    }
                    match &k.arg {
                        Some(name) => keywords.push(self.keyword(name, &k.value, k.range)),
                        None => self.reject_with(
                            k.range,
                            "`**` arguments are not supported in parpy functions",
                            "`**` argument",
                            Some("pass the arguments by position or by name"),
                        ),
                    }
                }
                let func = self.boxed(&c.func);
                // (a message `print` shows, an f-string or a `%` of a text,
                // is a text for now: sema tells that compiled code does not
                // print, and where it can; Python mode prints it)
                let print =
                    matches!(c.func.as_ref(), py::Expr::Name(n) if n.id.as_str() == "print");
                let message = |a: &py::Expr| match a {
                    py::Expr::JoinedStr(_) => true,
                    py::Expr::BinOp(b) => {
                        matches!(b.op, py::Operator::Mod)
                            && matches!(
                                b.left.as_ref(),
                                py::Expr::Constant(py::ExprConstant {
                                    value: py::Constant::Str(_),
                                    ..
                                })
                            )
                    }
                    _ => false,
                };
                // `None` is a value only as an argument (`np.clip(x, None, 1)`)
                let args = c
                    .args
                    .iter()
                    .map(|a| match a {
                        a if print && message(a) => Expr {
                            kind: ExprKind::Str(String::new()),
                            span: self.span(a.range()),
                        },
                        py::Expr::Constant(k) if matches!(k.value, py::Constant::None) => Expr {
                            kind: ExprKind::None,
                            span: self.span(k.range),
                        },
                        // (`f(*v)`: spread by sema)
                        py::Expr::Starred(st) => Expr {
                            kind: ExprKind::Starred(Box::new(self.assign_value(&st.value))),
                            span: self.span(st.range),
                        },
                        a => self.assign_value(a),
                    })
                    .collect();
                ExprKind::Call {
                    func,
                    args,
                    keywords,
                }
            }
            py::Expr::GeneratorExp(py::ExprGeneratorExp {
                elt, generators, ..
            })
            | py::Expr::ListComp(py::ExprListComp {
                elt, generators, ..
            }) => {
                let mut clauses = vec![];
                let bound = self.generator_names.len();
                for c in generators {
                    if c.is_async {
                        self.reject(c.target.range(), "`async for` clauses");
                        self.generator_names.truncate(bound);
                        return self.bad(r);
                    }
                    let Some((var, var_span, unpack, group)) = self.loop_target(&c.target) else {
                        self.generator_names.truncate(bound);
                        return self.bad(r);
                    };
                    if group.is_some() {
                        self.reject_with(
                            c.target.range(),
                            "a nested tuple target is not supported in a generator",
                            "nested tuple",
                            Some("unpack one level: `for a, b in zip(x, y)`"),
                        );
                        self.generator_names.truncate(bound);
                        return self.bad(r);
                    }
                    self.generator_names.push(var.clone());
                    self.generator_names
                        .extend(unpack.iter().map(|(n, _)| n.clone()));
                    clauses.push(Clause {
                        var,
                        var_span,
                        unpack,
                        iter: self.iterable(&c.iter),
                        ifs: c.ifs.iter().map(|e| self.expr(e)).collect(),
                    });
                }
                let elt = self.boxed(elt);
                self.generator_names.truncate(bound);
                ExprKind::Generator {
                    elt,
                    clauses,
                    list: matches!(e, py::Expr::ListComp(_)),
                }
            }
            other => {
                let what = match other {
                    py::Expr::SetComp(_) => "set comprehensions",
                    py::Expr::DictComp(_) => "dict comprehensions",

                    py::Expr::Dict(_) => "dict literals",
                    py::Expr::Set(_) => "set literals",
                    py::Expr::Tuple(_) => "tuple expressions",
                    py::Expr::Lambda(_) => "lambda expressions",
                    py::Expr::Yield(_) | py::Expr::YieldFrom(_) => "`yield` expressions",
                    py::Expr::Await(_) => "`await` expressions",
                    py::Expr::JoinedStr(_) | py::Expr::FormattedValue(_) => "f-strings",
                    py::Expr::Starred(_) => "starred arguments (`*args`)",
                    _ => "these expressions",
                };
                self.reject(r, what);
                return self.bad(r);
            }
        };
        Expr {
            kind,
            span: self.span(r),
        }
    }

    /// `name=value` (a keyword argument or a parameter's default): the only
    /// place where Python's `None` is a value.
    fn keyword(&mut self, name: &py::Identifier, value: &py::Expr, r: TextRange) -> Keyword {
        let value = match value {
            py::Expr::Constant(c) if matches!(c.value, py::Constant::None) => Expr {
                kind: ExprKind::None,
                span: self.span(c.range),
            },
            // `axis=(0, 2)`: a tuple, as a positional argument may be
            v => self.assign_value(v),
        };
        Keyword {
            name: ident(name),
            value,
            span: self.span(r),
        }
    }

    /// One index of a subscript: an expression, a `lo:hi:step` slice,
    /// `None` or `...`.
    fn index(&mut self, e: &py::Expr) -> Expr {
        match e {
            py::Expr::Slice(s) => {
                let lo = s.lower.as_ref().map(|x| self.boxed(x));
                let hi = s.upper.as_ref().map(|x| self.boxed(x));
                let step = s.step.as_ref().map(|x| self.boxed(x));
                Expr {
                    kind: ExprKind::Slice { lo, hi, step },
                    span: self.span(s.range),
                }
            }
            // `x[:, None]`: a new axis
            py::Expr::Constant(c) if matches!(c.value, py::Constant::None) => Expr {
                kind: ExprKind::None,
                span: self.span(c.range),
            },
            // `x[..., 0]`
            py::Expr::Constant(c) if matches!(c.value, py::Constant::Ellipsis) => Expr {
                kind: ExprKind::Ellipsis,
                span: self.span(c.range),
            },
            other => self.expr(other),
        }
    }
}

/// Whether `e` is a name or an attribute path (`parpy.types.F32`).
fn is_dotted(e: &py::Expr) -> bool {
    match e {
        py::Expr::Name(_) => true,
        py::Expr::Attribute(a) => is_dotted(&a.value),
        _ => false,
    }
}

/// The targets and values of `target = value` paired at every level when
/// a tuple target nests another (`a, (b, c) = e1, (e2, e3)`) and the value
/// is a tuple of the same shape; `None` otherwise.
#[allow(clippy::type_complexity)]
fn nested_pairs<'a>(
    target: &'a py::Expr,
    value: &'a py::Expr,
) -> Option<(Vec<&'a py::Expr>, Vec<&'a py::Expr>)> {
    fn items(e: &py::Expr) -> Option<&[py::Expr]> {
        match e {
            py::Expr::Tuple(t) => Some(&t.elts),
            py::Expr::List(l) => Some(&l.elts),
            _ => None,
        }
    }
    fn pair<'a>(
        t: &'a py::Expr,
        v: &'a py::Expr,
        out: &mut (Vec<&'a py::Expr>, Vec<&'a py::Expr>),
    ) -> bool {
        match (items(t), v) {
            (Some(ts), py::Expr::Tuple(vs)) if ts.len() == vs.elts.len() => {
                ts.iter().zip(&vs.elts).all(|(t, v)| pair(t, v, out))
            }
            (Some(_), _) => false,
            (None, _) => {
                out.0.push(t);
                out.1.push(v);
                true
            }
        }
    }
    let nested = items(target)?.iter().any(|t| items(t).is_some());
    let mut out = (vec![], vec![]);
    (nested && pair(target, value, &mut out)).then_some(out)
}

/// Whether a lambda's or nested function's parameters are plain
/// positional ones (no defaults, `*args`, keyword-only or `**`).
fn plain_params(args: &py::Arguments) -> bool {
    args.posonlyargs.is_empty()
        && args.vararg.is_none()
        && args.kwonlyargs.is_empty()
        && args.kwarg.is_none()
        && args.args.iter().all(|p| p.default.is_none())
}
