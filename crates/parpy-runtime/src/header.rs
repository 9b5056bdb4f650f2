//! The machine-readable header of a generated file, which `compile_string`
//! uses to check its arguments:
//!
//! ```text
//! // parpy-entry: <symbol>                       (int32_t <symbol>(void **args))
//! // parpy-param: <name> <dtype>[<d0>,<d1>,...] [written]   (an array)
//! // parpy-param: <name> <dtype>                  (a scalar, passed at run time)
//! // parpy-param: <name> <dtype> = <value>        (a scalar the code was specialized for)
//! // parpy-bounds: <what site k checks>          (one per run-time index check)
//! ```
//!
//! With `parpy-bounds` lines the entry takes one more argument, last: a
//! pointer to an `int64_t[2]` record, zeroed by the caller, that holds
//! `[k + 1, index]` after a call where check `k` failed.
//!
//! `<dtype>` is a NumPy name (`float32`) or a short name (`f32`); a dimension
//! is a non-negative integer, or `?` for one the code accepts at any size;
//! anything else (`N`, `-1`, `4L`, a number past `i64`) is an error. The parameters are
//! listed in the entry's argument order. A scalar with `= <value>` was
//! folded into the code: `compile_string` refuses any other value for it.

use parpy_core::{ElemTy, ScalarValue};

#[derive(Clone, Debug, PartialEq)]
pub enum HeaderTy {
    Array {
        elem: ElemTy,
        shape: Vec<Option<i64>>,
        written: bool,
    },
    Scalar(ElemTy),
}

#[derive(Clone, Debug, PartialEq)]
pub struct HeaderParam {
    pub name: String,
    pub ty: HeaderTy,
    /// A scalar's `= <value>`: the value the code was specialized for.
    pub fixed: Option<ScalarValue>,
}

fn elem_by_name(s: &str) -> Option<ElemTy> {
    let s = s.trim().trim_end_matches(',');
    ElemTy::from_numpy_name(s)
        .or_else(|| parpy_core::resolve::dtype_by_short_name(s))
        .or(match s {
            "float" | "double" => Some(ElemTy::F64),
            "int" | "int64_t" => Some(ElemTy::I64),
            "int32_t" => Some(ElemTy::I32),
            _ => None,
        })
}

/// One dimension of an array's shape: a non-negative integer, or `?` for a
/// dimension the code takes at any length. Anything else is an error: the
/// wrapper checks arguments against these lengths, so a dimension it cannot
/// read must not quietly accept every length (the code would still index
/// as far as the length it was written for).
fn dimension(d: &str, name: &str, line: &str) -> Result<Option<i64>, String> {
    if d == "?" {
        return Ok(None);
    }
    match d.parse::<i64>() {
        Ok(n) if n >= 0 && d.bytes().all(|b| b.is_ascii_digit()) => Ok(Some(n)),
        _ => Err(format!(
            "`{line}`: dimension `{d}` of parameter `{name}` is not a length: write the length \
             the code was written for (a non-negative integer below 2**63), or `?` for a \
             dimension the code accepts at any length (it must then take the length from \
             another argument)"
        )),
    }
}

fn parse_param(line: &str) -> Result<HeaderParam, String> {
    let line = line.trim();
    let (name, rest) = line
        .split_once(|c: char| c.is_whitespace() || c == ':')
        .ok_or_else(|| format!("`{line}`: expected `<name> <type>`"))?;
    let name = name.trim().to_string();
    let rest = rest.trim().trim_start_matches(':').trim();
    let mut words: Vec<&str> = vec![];
    let mut fixed = None;
    let (ty_part, tail) = if let Some(open) = rest.find(['[', '(']) {
        let close_ch = if rest.as_bytes()[open] == b'[' {
            ']'
        } else {
            ')'
        };
        let close = rest[open..]
            .find(close_ch)
            .map(|c| c + open)
            .ok_or_else(|| format!("`{line}`: unclosed shape"))?;
        let before: Vec<&str> = rest[..open]
            .split_whitespace()
            .filter(|w| *w != "array")
            .collect();
        let elem_word = before.last().copied().unwrap_or("");
        let elem = elem_by_name(elem_word)
            .ok_or_else(|| format!("`{line}`: unknown element type `{elem_word}`"))?;
        let shape = rest[open + 1..close]
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| dimension(d, &name, line))
            .collect::<Result<_, _>>()?;
        words.extend(rest[close + 1..].split_whitespace());
        (
            HeaderTy::Array {
                elem,
                shape,
                written: false,
            },
            words,
        )
    } else {
        let mut it = rest
            .split(|c: char| c.is_whitespace() || c == '=')
            .filter(|w| !w.is_empty() && *w != "scalar");
        let w = it.next().unwrap_or("");
        let elem = elem_by_name(w).ok_or_else(|| format!("`{line}`: unknown type `{w}`"))?;
        if let Some((_, v)) = rest.split_once('=') {
            fixed = Some(ScalarValue::from_header_text(v, elem).ok_or_else(|| {
                format!(
                    "`{line}`: `{}` is not a value of type {}",
                    v.trim(),
                    elem.numpy_name()
                )
            })?);
        }
        (HeaderTy::Scalar(elem), vec![])
    };
    let ty = match ty_part {
        HeaderTy::Array { elem, shape, .. } => HeaderTy::Array {
            elem,
            shape,
            written: tail.iter().any(|w| {
                matches!(
                    w.trim_matches(|c: char| !c.is_alphanumeric()),
                    "written" | "write" | "writes" | "mut" | "out" | "inout" | "rw"
                )
            }),
        },
        t => t,
    };
    Ok(HeaderParam { name, ty, fixed })
}

/// The text of the `// parpy-bounds:` lines, in order (as the writer had
/// it before `parpy_core::back::comment_escape`).
pub fn parse_bounds(code: &str) -> Vec<String> {
    code.lines()
        .filter_map(|l| l.trim_start().strip_prefix("//"))
        .filter_map(|c| c.trim_start().strip_prefix("parpy-bounds:"))
        .map(|v| parpy_core::back::comment_unescape(v.trim()))
        .collect()
}

/// The backend the code was printed for, by its first line (`// Generated
/// by parpy 0.1.0 from f (backend: CUDA C++). ...`); `None` when no line
/// says (hand-written code) or it names no backend.
pub fn parse_backend(code: &str) -> Option<parpy_core::Backend> {
    use parpy_core::Backend;
    let line = code
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("//"))
        .find(|c| c.trim_start().starts_with("Generated by parpy"))?;
    let (_, rest) = line.split_once("(backend: ")?;
    let (target, _) = rest.split_once(')')?;
    [Backend::Cpu, Backend::Cuda, Backend::Metal]
        .into_iter()
        .find(|&b| parpy_core::back::target_name(b) == target.trim())
}

/// Reads the `// parpy-entry:` and `// parpy-param:` lines.
pub fn parse_header(code: &str) -> Result<(String, Vec<HeaderParam>), String> {
    let mut entry: Option<(String, usize)> = None;
    let mut params: Vec<HeaderParam> = vec![];
    // the line of each parameter, for a name declared twice
    let mut lines: Vec<usize> = vec![];
    for (k, line) in code.lines().enumerate() {
        let t = line.trim_start();
        let Some(c) = t.strip_prefix("//") else {
            continue;
        };
        let c = c.trim_start();
        if let Some(v) = c.strip_prefix("parpy-entry:") {
            if let Some((first, at)) = &entry {
                return Err(format!(
                    "line {}: `{}`: a second `// parpy-entry` line (line {at} names `{first}`): \
                     the code has one entry symbol; keep one of the lines",
                    k + 1,
                    line.trim()
                ));
            }
            entry = Some((v.trim().to_string(), k + 1));
        } else if let Some(v) = c.strip_prefix("parpy-param:") {
            let p = parse_param(v)?;
            if let Some(j) = params.iter().position(|q| q.name == p.name) {
                return Err(format!(
                    "line {}: `{}`: parameter `{}` is declared twice (first on line {}): \
                     each parameter has one `// parpy-param` line, in the entry's argument order",
                    k + 1,
                    line.trim(),
                    p.name,
                    lines[j]
                ));
            }
            params.push(p);
            lines.push(k + 1);
        }
    }
    let entry = entry.map(|(e, _)| e);
    let entry = entry.filter(|e| !e.is_empty()).ok_or_else(|| {
        "the code has no `// parpy-entry: <symbol>` line. compile_string needs the header that \
         parpy writes at the top of generated code: one `// parpy-entry: <symbol>` line naming \
         the entry `int32_t <symbol>(void **args)`, and one `// parpy-param: <name> <dtype>[dims] \
         [written]` (array) or `// parpy-param: <name> <dtype>` (scalar) line per parameter, \
         in order; start from parpy.print_compiled(...)"
            .to_string()
    })?;
    Ok((entry, params))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_c_backend_header() {
        let code = "// Generated by parpy\n// parpy-entry: parpy_entry_f\n\
                    // parpy-param: x f32[100,1024]\n// parpy-param: y f32[100] written\n\
                    // parpy-param: N i64\nint x;\n";
        let (entry, params) = parse_header(code).unwrap();
        assert_eq!(entry, "parpy_entry_f");
        assert_eq!(
            params,
            vec![
                HeaderParam {
                    name: "x".into(),
                    ty: HeaderTy::Array {
                        elem: ElemTy::F32,
                        shape: vec![Some(100), Some(1024)],
                        written: false
                    },
                    fixed: None
                },
                HeaderParam {
                    name: "y".into(),
                    ty: HeaderTy::Array {
                        elem: ElemTy::F32,
                        shape: vec![Some(100)],
                        written: true
                    },
                    fixed: None
                },
                HeaderParam {
                    name: "N".into(),
                    ty: HeaderTy::Scalar(ElemTy::I64),
                    fixed: None
                },
            ]
        );
    }

    #[test]
    fn reads_the_backend_of_the_first_line() {
        use parpy_core::Backend;
        let line = |t: &str| {
            format!("// Generated by parpy 0.1.0 from f (backend: {t}). Do not edit the parpy- lines.\n// parpy-entry: e\n")
        };
        assert_eq!(parse_backend(&line("C with OpenMP")), Some(Backend::Cpu));
        assert_eq!(parse_backend(&line("CUDA C++")), Some(Backend::Cuda));
        assert_eq!(
            parse_backend(&line("Metal Shading Language")),
            Some(Backend::Metal)
        );
        assert_eq!(parse_backend(&line("Fortran")), None);
        assert_eq!(parse_backend("// parpy-entry: e\nint x;\n"), None);
    }

    #[test]
    fn accepts_numpy_names_open_dims_and_colons() {
        let (_, p) =
            parse_header("// parpy-entry: e\n// parpy-param: a: array float64[?, ?] mut\n// parpy-param: b bool = 1\n")
                .unwrap();
        assert_eq!(
            p[0].ty,
            HeaderTy::Array {
                elem: ElemTy::F64,
                shape: vec![None, None],
                written: true
            }
        );
        assert_eq!(p[1].ty, HeaderTy::Scalar(ElemTy::Bool));
        assert_eq!(p[1].fixed, Some(ScalarValue::Bool(true)));
    }

    #[test]
    fn reads_the_values_of_specialized_scalars() {
        let (_, p) = parse_header(
            "// parpy-entry: e\n// parpy-param: N i64 = -8\n// parpy-param: a f32 = 0.1\n\
             // parpy-param: b f64 = NaN\n// parpy-param: k u8\n",
        )
        .unwrap();
        assert_eq!(p[0].fixed, Some(ScalarValue::Int(-8)));
        assert_eq!(p[1].fixed, Some(ScalarValue::Float(0.1)));
        assert!(matches!(p[2].fixed, Some(ScalarValue::Float(f)) if f.is_nan()));
        assert_eq!(p[3].fixed, None);
        for v in [0.1, 1e300, -0.0, f64::INFINITY, 5e-324, 1.0 / 3.0] {
            let t = ScalarValue::Float(v).header_text();
            let back = ScalarValue::from_header_text(&t, ElemTy::F64).unwrap();
            assert!(back.same_as(ScalarValue::Float(v)), "{v} -> {t}");
        }
        let e = parse_header("// parpy-entry: e\n// parpy-param: N i64 = 2.5\n").unwrap_err();
        assert!(e.contains("`2.5` is not a value of type int64"), "{e}");
    }

    #[test]
    fn a_parameter_or_entry_declared_twice_is_an_error() {
        let e = parse_header(
            "// parpy-entry: f\n// parpy-param: N i64 = 8\n// parpy-param: N i64 = 8\n",
        )
        .unwrap_err();
        assert_eq!(
            e,
            "line 3: `// parpy-param: N i64 = 8`: parameter `N` is declared twice (first on \
             line 2): each parameter has one `// parpy-param` line, in the entry's argument order"
        );
        let e = parse_header("// parpy-entry: f\nint x;\n// parpy-entry: g\n").unwrap_err();
        assert_eq!(
            e,
            "line 3: `// parpy-entry: g`: a second `// parpy-entry` line (line 1 names `f`): the \
             code has one entry symbol; keep one of the lines"
        );
    }

    #[test]
    fn missing_entry_or_bad_types_are_errors() {
        let e = parse_header("int main;").unwrap_err();
        assert!(e.contains("parpy-entry"), "{e}");
        let e = parse_header("// parpy-entry: f\n// parpy-param: x c64[2]\n").unwrap_err();
        assert!(e.contains("unknown element type `c64`"), "{e}");
        let e = parse_header("// parpy-entry: f\n// parpy-param: x f32[2\n").unwrap_err();
        assert!(e.contains("unclosed"), "{e}");
        let e = parse_header("// parpy-entry: f\n// parpy-param: x\n").unwrap_err();
        assert!(e.contains("expected"), "{e}");
        for d in [
            "N",
            "-1",
            "4L",
            "+4",
            "18446744073709551615",
            "0x4",
            "4.0",
            "??",
        ] {
            let e = parse_header(&format!(
                "// parpy-entry: f\n// parpy-param: x f64[2,{d}]\n"
            ))
            .unwrap_err();
            assert!(
                e.contains(&format!("dimension `{d}` of parameter `x` is not a length")),
                "{d}: {e}"
            );
        }
    }
}
