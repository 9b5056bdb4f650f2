//! The text of an `assert`'s or a `raise`'s message that names values:
//! a `str.format` text (`"n is {}".format(n)`) and a printf-style text
//! (`"n is %d" % n`), parsed as Python parses them, so that the converter
//! can point at what Python would raise when formatting it. Pure text
//! work: no AST here.

/// What a `str.format` field names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FieldName {
    /// `{}` (numbered in order) or `{0}`: a positional argument.
    Index(usize),
    /// `{name}`: a keyword argument.
    Key(String),
}

/// A piece of a `str.format` text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FormatPiece {
    /// Literal text, its braces doubled (text of a `str.format` template).
    Text(String),
    /// A field: what it names, and its conversion and spec as written
    /// (`!r:>8`, or empty).
    Field(FieldName, String),
}

/// The pieces of `text` as Python's `str.format` reads it; `Err` says,
/// in Python's words where it has them, why formatting would raise.
/// Fields with attributes or items (`{0.real}`, `{0[1]}`) and computed
/// specs (`{:{w}}`) are refused.
pub(crate) fn format_fields(text: &str) -> Result<Vec<FormatPiece>, String> {
    let mut pieces = vec![];
    let mut lit = String::new();
    let mut chars = text.chars().peekable();
    // `Some(true)`: fields numbered by `{}`; `Some(false)`: by `{0}`
    let mut auto: Option<bool> = None;
    let mut next = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                lit.push_str("{{");
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                lit.push_str("}}");
            }
            '}' => return Err("Single '}' encountered in format string".into()),
            '{' => {
                let mut field = String::new();
                let mut depth = 1;
                loop {
                    match chars.next() {
                        None if field.is_empty() => {
                            return Err("Single '{' encountered in format string".into())
                        }
                        None => return Err("expected '}' before end of string".into()),
                        Some('{') => {
                            depth += 1;
                            field.push('{');
                        }
                        Some('}') => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                            field.push('}');
                        }
                        Some(ch) => field.push(ch),
                    }
                }
                let cut = field.find(['!', ':']).unwrap_or(field.len());
                let (name, tail) = field.split_at(cut);
                if let Some(conv) = tail.strip_prefix('!') {
                    let mut cs = conv.chars();
                    match cs.next() {
                        None => return Err("unmatched '{' in format spec".into()),
                        Some('r' | 's' | 'a') => {}
                        Some(x) => return Err(format!("Unknown conversion specifier {x}")),
                    }
                    if !matches!(cs.next(), None | Some(':')) {
                        return Err("expected ':' after conversion specifier".into());
                    }
                }
                if tail.contains(['{', '}']) {
                    return Err("a format spec computed from a field (`{:{w}}`) is not supported in parpy functions".into());
                }
                if name.contains(['.', '[']) {
                    return Err(format!(
                        "the field `{{{name}}}` reads an attribute or an item, which parpy functions cannot format"
                    ));
                }
                let named = if name.is_empty() {
                    if auto == Some(false) {
                        return Err("cannot switch from manual field specification to automatic field numbering".into());
                    }
                    auto = Some(true);
                    next += 1;
                    FieldName::Index(next - 1)
                } else if name.bytes().all(|b| b.is_ascii_digit()) {
                    if auto == Some(true) {
                        return Err("cannot switch from automatic field numbering to manual field specification".into());
                    }
                    auto = Some(false);
                    FieldName::Index(
                        name.parse()
                            .map_err(|_| "Too many decimal digits in format string".to_string())?,
                    )
                } else {
                    FieldName::Key(name.to_string())
                };
                if !lit.is_empty() {
                    pieces.push(FormatPiece::Text(std::mem::take(&mut lit)));
                }
                pieces.push(FormatPiece::Field(named, tail.to_string()));
            }
            c => lit.push(c),
        }
    }
    if !lit.is_empty() {
        pieces.push(FormatPiece::Text(lit));
    }
    Ok(pieces)
}

/// How many values the printf-style `text` takes (`"%d of %5.2f"`: 2),
/// read as Python's `%` operator reads it; `Err` says, in Python's words
/// where it has them, why formatting would raise. `%(name)s` fields and
/// `*` widths (values the text does not show) are refused.
pub(crate) fn printf_count(text: &str) -> Result<usize, String> {
    let mut count = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        if c != '%' {
            continue;
        }
        if matches!(chars.peek(), Some((_, '%'))) {
            chars.next();
            continue;
        }
        let mut written = false;
        loop {
            let Some((at, ch)) = chars.next() else {
                return Err("incomplete format".into());
            };
            match ch {
                '(' => return Err("a `%(name)s` field needs a dict of values, which parpy functions cannot format".into()),
                '*' => return Err("a `*` width or precision (a value the text does not show) is not supported in parpy functions".into()),
                '-' | '+' | ' ' | '#' | '0'..='9' | '.' | 'h' | 'l' | 'L' => written = true,
                'd' | 'i' | 'o' | 'u' | 'x' | 'X' | 'e' | 'E' | 'f' | 'F' | 'g' | 'G' | 'c'
                | 'r' | 's' | 'a' => {
                    count += 1;
                    break;
                }
                '%' if written => {
                    return Err("a `%` conversion with flags or a width is not supported in parpy functions".into())
                }
                other => {
                    return Err(format!(
                        "unsupported format character '{other}' ({:#x}) at index {}",
                        other as u32,
                        text[..at].chars().count()
                    ))
                }
            }
        }
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(k: usize, tail: &str) -> FormatPiece {
        FormatPiece::Field(FieldName::Index(k), tail.into())
    }

    #[test]
    fn fields_in_order_with_conversions_and_specs() {
        let p = format_fields("a {} b {!r:>8} {{c}} {:.3f}").unwrap();
        assert_eq!(
            p,
            vec![
                FormatPiece::Text("a ".into()),
                field(0, ""),
                FormatPiece::Text(" b ".into()),
                field(1, "!r:>8"),
                FormatPiece::Text(" {{c}} ".into()),
                field(2, ":.3f"),
            ]
        );
        let p = format_fields("{1}{0}{k:x}").unwrap();
        assert_eq!(
            p,
            vec![
                field(1, ""),
                field(0, ""),
                FormatPiece::Field(FieldName::Key("k".into()), ":x".into()),
            ]
        );
    }

    #[test]
    fn what_python_raises() {
        for (text, why) in [
            ("a } b", "Single '}'"),
            ("a {", "Single '{'"),
            ("a {0", "expected '}'"),
            ("{}{0}", "cannot switch from automatic"),
            ("{0}{}", "cannot switch from manual"),
            ("{!x}", "Unknown conversion specifier x"),
            ("{!rr}", "expected ':' after"),
            ("{:{w}}", "computed"),
            ("{0.real}", "attribute"),
            ("{0[1]}", "attribute or an item"),
        ] {
            let e = format_fields(text).unwrap_err();
            assert!(e.contains(why), "{text}: {e}");
        }
    }

    #[test]
    fn printf_values() {
        assert_eq!(printf_count("100%% of %d and %-8.3f, %r%%"), Ok(3));
        assert_eq!(printf_count("plain"), Ok(0));
        for (text, why) in [
            ("%", "incomplete format"),
            (
                "ab %y",
                "unsupported format character 'y' (0x79) at index 4",
            ),
            ("%(a)s", "dict"),
            ("%*d", "`*`"),
            ("%5%", "width"),
        ] {
            let e = printf_count(text).unwrap_err();
            assert!(e.contains(why), "{text}: {e}");
        }
    }
}
