//! Golden tests: every `tests/in/NAME.py` is compiled for the CPU backend and
//! the IR after the pipeline is compared with `tests/out/ir/NAME.ir` and the C
//! with `tests/out/c/NAME.c` (and for CUDA with `tests/out/cuda/NAME.cu`, see
//! [`golden_cuda`]); every `tests/err/NAME.py` has its rendered
//! diagnostics (errors and warnings) compared with `tests/err/NAME.txt`.
//! Every generated C file is also compiled with
//! `cc -std=c11 -fopenmp -Wall -Wextra -Werror -c`.
//!
//! `BLESS=1 cargo test -p parpy-core --test golden` rewrites the expected
//! files. Header comments of an input file give the arguments and the spec:
//!
//! ```text
//! # args: x: f32[100, 1024], y: f32[100], N: i64 = 100
//! # par: outer = threads(100)
//! # par: inner = threads(64).tpb(32).par_reduction()
//! ```
//!
//! (`= value` specializes a scalar; without it the scalar is a run-time one.)

use std::path::{Path, PathBuf};

use parpy_core::{
    compile, diag::render_all, parse_function, ArgType, Backend, CompileError, ElemTy, Options,
    ParSpec, ScalarValue, SourceFile, StaticResolver,
};

struct Case {
    name: String,
    /// Path shown in messages, relative to the crate.
    rel: String,
    args: Vec<ArgType>,
    options: Options,
    source: SourceFile,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests")
}

fn bless() -> bool {
    std::env::var("BLESS").map(|v| v == "1").unwrap_or(false)
}

/// Splits at commas that are not inside brackets or parentheses.
fn split_top(s: &str) -> Vec<String> {
    let mut out = vec![];
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

fn elem(name: &str) -> Result<ElemTy, String> {
    ElemTy::ALL
        .into_iter()
        .find(|t| t.short_name() == name)
        .ok_or_else(|| format!("unknown dtype `{name}`"))
}

fn parse_arg(s: &str) -> Result<ArgType, String> {
    let (_, rest) = s
        .split_once(':')
        .ok_or_else(|| format!("expected `name: type` in `{s}`"))?;
    let (ty, value) = match rest.split_once('=') {
        Some((t, v)) => (t.trim(), Some(v.trim())),
        None => (rest.trim(), None),
    };
    if let Some((e, dims)) = ty.split_once('[') {
        let dims = dims.trim_end_matches(']');
        let shape = dims
            .split(',')
            .map(|d| d.trim().parse::<i64>().map_err(|e| format!("{e} in `{s}`")))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(ArgType::Array {
            elem: elem(e.trim())?,
            shape,
        });
    }
    let e = elem(ty)?;
    let value = match value {
        None => None,
        Some("True") => Some(ScalarValue::Bool(true)),
        Some("False") => Some(ScalarValue::Bool(false)),
        Some(v) if e.is_float() => Some(ScalarValue::Float(
            v.parse().map_err(|e| format!("{e} in `{s}`"))?,
        )),
        Some(v) => Some(ScalarValue::Int(
            v.parse().map_err(|e| format!("{e} in `{s}`"))?,
        )),
    };
    Ok(ArgType::Scalar { elem: e, value })
}

/// `outer = threads(100).tpb(32).par_reduction()`
fn parse_par(s: &str) -> Result<(String, ParSpec), String> {
    let (label, rest) = s
        .split_once('=')
        .ok_or_else(|| format!("expected `label = threads(n)...` in `{s}`"))?;
    let mut spec = ParSpec {
        threads: 0,
        tpb: None,
        reduction: false,
    };
    for part in rest.trim().split(").") {
        let part = part.trim_end_matches(')');
        let (f, arg) = part.split_once('(').unwrap_or((part, ""));
        match f {
            "threads" => spec.threads = arg.trim().parse().map_err(|e| format!("{e} in `{s}`"))?,
            "tpb" => spec.tpb = Some(arg.trim().parse().map_err(|e| format!("{e} in `{s}`"))?),
            "par_reduction" | "reduce" => spec.reduction = true,
            other => return Err(format!("unknown `{other}` in `{s}`")),
        }
    }
    Ok((label.trim().to_string(), spec))
}

fn load(dir: &str, path: &Path) -> Result<Case, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or("bad file name")?
        .to_string();
    let rel = format!("tests/{dir}/{name}.py");
    let mut args = vec![];
    let mut options = Options {
        backend: Backend::Cpu,
        debug_print: true,
        ..Options::default()
    };
    let mut first_line = None;
    for (i, line) in text.lines().enumerate() {
        if let Some(a) = line.strip_prefix("# args:") {
            for s in split_top(a) {
                args.push(parse_arg(&s)?);
            }
        } else if let Some(p) = line.strip_prefix("# par:") {
            let (label, spec) = parse_par(p.trim())?;
            options.parallelize.insert(label, spec);
        } else if line.starts_with("def ") {
            first_line = Some(i);
            break;
        }
    }
    let first = first_line.ok_or("no `def` line")?;
    let func: String = text.lines().skip(first).map(|l| format!("{l}\n")).collect();
    let source = SourceFile::from_function_text(&rel, &func, first as u32 + 1);
    Ok(Case {
        name,
        rel,
        args,
        options,
        source,
    })
}

enum Outcome {
    /// IR after the pipeline, the C code, and the warnings.
    Ok {
        ir: String,
        c: String,
        warnings: String,
    },
    Diags(String),
    Internal(String),
}

fn run(case: &Case) -> Outcome {
    let def = match parse_function(case.source.clone()) {
        Ok(d) => d,
        Err(d) => return Outcome::Diags(render_all(&d)),
    };
    let resolver = StaticResolver::new();
    match compile(&def, &case.args, &resolver, &case.options) {
        Ok(out) => {
            // The IR after the last pass is the last section of the log.
            let ir = out
                .debug_log
                .rsplit_once("=== after ")
                .and_then(|(_, rest)| rest.split_once('\n'))
                .map(|(_, ir)| ir.trim_end().to_string() + "\n")
                .unwrap_or_default();
            Outcome::Ok {
                ir,
                c: out.code,
                warnings: render_all(&out.warnings),
            }
        }
        Err(CompileError::User(d)) => Outcome::Diags(render_all(&d)),
        Err(CompileError::Internal(m)) => Outcome::Internal(m),
    }
}

/// Compares `actual` with the file (or writes it when blessing).
fn check(path: &Path, actual: &str, failures: &mut Vec<String>) {
    if bless() {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Err(e) = std::fs::write(path, actual) {
            failures.push(format!("{}: cannot write: {e}", path.display()));
        }
        return;
    }
    match std::fs::read_to_string(path) {
        Err(_) => failures.push(format!(
            "{} is missing; run `BLESS=1 cargo test -p parpy-core --test golden` to create it (and review it)",
            path.display()
        )),
        Ok(expected) if expected != actual => failures.push(format!(
            "{} differs (BLESS=1 rewrites it):\n--- expected\n{expected}\n--- actual\n{actual}",
            path.display()
        )),
        Ok(_) => {}
    }
}

fn inputs(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().map(|x| x == "py").unwrap_or(false))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Compiles C text with the system compiler; `None` when there is no `cc`.
fn cc(name: &str, text: &str) -> Option<Result<(), String>> {
    let dir = std::env::temp_dir().join(format!("parpy-golden-{}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, text).ok()?;
    let out = std::process::Command::new("cc")
        .args(["-std=c11", "-fopenmp", "-Wall", "-Wextra", "-Werror", "-c"])
        .arg(&src)
        .arg("-o")
        .arg(dir.join(format!("{name}.o")))
        .output()
        .ok()?;
    Some(if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    })
}

#[test]
fn golden_programs() {
    let files = inputs("in");
    assert!(!files.is_empty(), "no inputs in tests/in");
    let mut failures = vec![];
    let mut no_cc = false;
    for path in &files {
        let case = match load("in", path) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("{}: bad header: {e}", path.display()));
                continue;
            }
        };
        match run(&case) {
            Outcome::Ok { ir, c, warnings } => {
                if !warnings.is_empty() {
                    failures.push(format!("{}: unexpected warnings:\n{warnings}", case.rel));
                }
                check(
                    &root().join("out/ir").join(format!("{}.ir", case.name)),
                    &ir,
                    &mut failures,
                );
                check(
                    &root().join("out/c").join(format!("{}.c", case.name)),
                    &c,
                    &mut failures,
                );
                match cc(&case.name, &c) {
                    None => no_cc = true,
                    Some(Ok(())) => {}
                    Some(Err(e)) => failures.push(format!(
                        "{}: the generated C does not compile warning-free:\n{e}",
                        case.rel
                    )),
                }
            }
            Outcome::Diags(d) => failures.push(format!("{}: compile failed:\n{d}", case.rel)),
            Outcome::Internal(m) => failures.push(format!("{}: internal error: {m}", case.rel)),
        }
    }
    if no_cc {
        eprintln!("note: no `cc` found; the C compile check of the golden files was skipped");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every `tests/in` program is also compiled for CUDA: the code goes to
/// `tests/out/cuda/NAME.cu`, the device-only translation unit is checked to
/// be a part of it, and a program the CUDA backend rejects has its rendered
/// diagnostics in `tests/out/cuda/NAME.txt` instead. (NVRTC and nvcc compile
/// the `.cu` files in `tests/test_cuda_codegen.py`.)
#[test]
fn golden_cuda() {
    let files = inputs("in");
    let mut failures = vec![];
    let out = root().join("out/cuda");
    for path in &files {
        let mut case = match load("in", path) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("{}: bad header: {e}", path.display()));
                continue;
            }
        };
        case.options.backend = Backend::Cuda;
        case.options.debug_print = false;
        let def = match parse_function(case.source.clone()) {
            Ok(d) => d,
            Err(d) => {
                failures.push(format!("{}: parse failed:\n{}", case.rel, render_all(&d)));
                continue;
            }
        };
        let resolver = StaticResolver::new();
        let (cu, txt) = (
            out.join(format!("{}.cu", case.name)),
            out.join(format!("{}.txt", case.name)),
        );
        match compile(&def, &case.args, &resolver, &case.options) {
            Ok(o) => {
                check(&cu, &o.code, &mut failures);
                match &o.device_code {
                    Some(dev) if o.code.contains(dev.as_str()) && !dev.contains("<<<") => {}
                    _ => failures.push(format!(
                        "{}: the device code is missing or not part of the file",
                        case.rel
                    )),
                }
                if o.kernel_names.len() != o.program.kernels.len() {
                    failures.push(format!("{}: kernel names do not match kernels", case.rel));
                }
                if !bless() && txt.exists() {
                    failures.push(format!("{} is stale (the program compiles)", txt.display()));
                }
            }
            Err(CompileError::User(d)) => {
                check(&txt, &(render_all(&d) + "\n"), &mut failures);
                if !bless() && cu.exists() {
                    failures.push(format!("{} is stale (the program fails)", cu.display()));
                }
            }
            Err(CompileError::Internal(m)) => {
                failures.push(format!("{}: internal error: {m}", case.rel))
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn golden_diagnostics() {
    let files = inputs("err");
    assert!(!files.is_empty(), "no inputs in tests/err");
    let mut failures = vec![];
    for path in &files {
        let case = match load("err", path) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("{}: bad header: {e}", path.display()));
                continue;
            }
        };
        let text = match run(&case) {
            Outcome::Ok { warnings, .. } if !warnings.is_empty() => warnings,
            Outcome::Ok { .. } => {
                failures.push(format!("{}: compiled without any diagnostic", case.rel));
                continue;
            }
            Outcome::Diags(d) => d,
            Outcome::Internal(m) => {
                failures.push(format!("{}: internal error: {m}", case.rel));
                continue;
            }
        };
        check(
            &root().join("err").join(format!("{}.txt", case.name)),
            &(text + "\n"),
            &mut failures,
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn header_parsing() {
    assert_eq!(
        split_top("x: f32[100, 1024], y: f32[100], N: i64 = 100"),
        vec!["x: f32[100, 1024]", "y: f32[100]", "N: i64 = 100"]
    );
    assert_eq!(
        parse_arg("x: f32[100, 1024]"),
        Ok(ArgType::Array {
            elem: ElemTy::F32,
            shape: vec![100, 1024]
        })
    );
    assert_eq!(
        parse_arg("N: i64 = 100"),
        Ok(ArgType::Scalar {
            elem: ElemTy::I64,
            value: Some(ScalarValue::Int(100))
        })
    );
    let (l, s) = parse_par("inner = threads(64).tpb(32).par_reduction()").unwrap();
    assert_eq!(l, "inner");
    assert_eq!(
        s,
        ParSpec {
            threads: 64,
            tpb: Some(32),
            reduction: true
        }
    );
}
