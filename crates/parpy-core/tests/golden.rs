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
//! Other option lines: `# max_unroll_count: N`,
//! `# use_cuda_thread_block_clusters`, `# max_thread_blocks_per_cluster: N`.

#[path = "common/scratch.rs"]
mod scratch;
use scratch::Scratch;
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
    Ok(ArgType::Scalar {
        elem: e,
        value,
        weak: true,
    })
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
    let (mut force_int, mut force_float) = (None, None);
    for (i, line) in text.lines().enumerate() {
        if let Some(a) = line.strip_prefix("# args:") {
            for s in split_top(a) {
                args.push(parse_arg(&s)?);
            }
        } else if let Some(p) = line.strip_prefix("# par:") {
            let (label, spec) = parse_par(p.trim())?;
            options.parallelize.insert(label, spec);
        } else if let Some(b) = line.strip_prefix("# backend:") {
            options.backend = match b.trim() {
                "cpu" => Backend::Cpu,
                "cuda" => Backend::Cuda,
                "metal" => Backend::Metal,
                other => return Err(format!("unknown backend `{other}`")),
            };
        } else if let Some(n) = line.strip_prefix("# force_int_size:") {
            force_int = Some(n.trim().parse::<u32>().map_err(|e| e.to_string())?);
        } else if let Some(n) = line.strip_prefix("# force_float_size:") {
            force_float = Some(n.trim().parse::<u32>().map_err(|e| e.to_string())?);
        } else if let Some(n) = line.strip_prefix("# max_unroll_count:") {
            options.max_unroll_count = n.trim().parse::<i64>().map_err(|e| e.to_string())?;
        } else if let Some(n) = line.strip_prefix("# max_thread_blocks_per_cluster:") {
            options.max_thread_blocks_per_cluster =
                n.trim().parse::<i64>().map_err(|e| e.to_string())?;
        } else if line.trim() == "# use_cuda_thread_block_clusters" {
            options.use_cuda_thread_block_clusters = true;
        } else if line.starts_with("def ") {
            first_line = Some(i);
            break;
        }
    }
    set_sizes(&mut options, force_int, force_float)?;
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

/// The int and float types of Python scalars, as the binding derives them
/// from `force_int_size` / `force_float_size` and the backend (32-bit by
/// default on Metal, 64-bit elsewhere).
fn set_sizes(o: &mut Options, int: Option<u32>, float: Option<u32>) -> Result<(), String> {
    let metal = o.backend == Backend::Metal;
    o.int_type = match int {
        None if metal => ElemTy::I32,
        None | Some(64) => ElemTy::I64,
        Some(32) => ElemTy::I32,
        Some(n) => return Err(format!("force_int_size {n} is not used by the tests")),
    };
    o.float_type = match float {
        None if metal => ElemTy::F32,
        None | Some(64) => ElemTy::F64,
        Some(32) => ElemTy::F32,
        Some(n) => return Err(format!("force_float_size {n} is not used by the tests")),
    };
    Ok(())
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
    let scratch = Scratch::new("golden");
    let dir = &scratch.0;
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

/// The clang command that syntax-checks a Metal file as C++17 against the
/// stub of `metal_stdlib` in `tests/metal_stub` (unknown attributes such as
/// `[[kernel]]` are ignored; every other warning is an error).
fn metal_check_cmd(clang: &str, src: &Path) -> std::process::Command {
    let stub = root().join("metal_stub");
    let mut c = std::process::Command::new(clang);
    c.args(["-x", "c++", "-std=c++17", "-fsyntax-only"])
        .args(["-Wall", "-Wextra", "-Wno-unknown-attributes", "-Werror"])
        .arg("-I")
        .arg(&stub)
        .arg("-include")
        .arg(stub.join("metal_stub.h"))
        .arg(src);
    c
}

/// Syntax-checks Metal text with Debian's `clang-19` (or `$PARPY_CLANG`).
/// `None` when it is not installed, which fails under `CI=true`.
fn metal_check(name: &str, text: &str) -> Option<Result<(), String>> {
    let scratch = Scratch::new("golden-metal");
    let dir = &scratch.0;
    let src = dir.join(format!("{name}.metal"));
    std::fs::write(&src, text).ok()?;
    let clang = std::env::var("PARPY_CLANG").unwrap_or_else(|_| "clang-19".into());
    match metal_check_cmd(&clang, &src).output() {
        Ok(o) if o.status.success() => Some(Ok(())),
        Ok(o) => Some(Err(String::from_utf8_lossy(&o.stderr).into_owned())),
        Err(e) => {
            assert!(
                std::env::var("CI").map(|v| v != "true").unwrap_or(true),
                "CI=true but `{clang}` cannot run ({e}): the Metal syntax check needs \
                 Debian's clang-19 (apt-get install clang-19)"
            );
            None
        }
    }
}

/// The arguments with every float64 replaced by float32 (what a Metal user
/// passes), or `None` when there is no float64 argument.
fn f32_args(args: &[ArgType]) -> Option<Vec<ArgType>> {
    let mut changed = false;
    let out = args
        .iter()
        .map(|a| match a {
            ArgType::Array {
                elem: ElemTy::F64,
                shape,
            } => {
                changed = true;
                ArgType::Array {
                    elem: ElemTy::F32,
                    shape: shape.clone(),
                }
            }
            other => other.clone(),
        })
        .collect();
    changed.then_some(out)
}

/// Every `tests/in` program is also compiled for Metal (with Metal's 32-bit
/// default int and float): the code goes to `tests/out/metal/NAME.metal`
/// and is syntax-checked by clang against the stub header. A program with
/// float64 arrays, which Metal cannot hold, has the rendered error in
/// `tests/out/metal/NAME.txt`, and its code for float32 arrays in
/// `tests/out/metal/NAME.f32.metal`. A program the GPU passes reject (as
/// for CUDA) has its rendered diagnostics in `NAME.txt` instead.
#[test]
fn golden_metal() {
    let files = inputs("in");
    let mut failures = vec![];
    let mut no_clang = false;
    let out = root().join("out/metal");
    let mut emitted = 0;
    for path in &files {
        let mut case = match load("in", path) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("{}: bad header: {e}", path.display()));
                continue;
            }
        };
        case.options.backend = Backend::Metal;
        case.options.debug_print = false;
        if let Err(e) = set_sizes(&mut case.options, None, None) {
            failures.push(format!("{}: {e}", case.rel));
            continue;
        }
        let def = match parse_function(case.source.clone()) {
            Ok(d) => d,
            Err(d) => {
                failures.push(format!("{}: parse failed:\n{}", case.rel, render_all(&d)));
                continue;
            }
        };
        let resolver = StaticResolver::new();
        let mut variants = vec![(case.name.clone(), case.args.clone(), true)];
        if let Some(a) = f32_args(&case.args) {
            variants[0].2 = false;
            variants.push((format!("{}.f32", case.name), a, true));
        }
        for (name, args, may_compile) in variants {
            let (metal, txt) = (
                out.join(format!("{name}.metal")),
                out.join(format!("{name}.txt")),
            );
            match compile(&def, &args, &resolver, &case.options) {
                Ok(_) if !may_compile => failures.push(format!(
                    "{}: compiled for Metal with float64 arrays (expected the float64 error)",
                    case.rel
                )),
                Ok(o) => {
                    emitted += 1;
                    check(&metal, &o.code, &mut failures);
                    match &o.device_code {
                        Some(dev) if o.code.contains(dev.as_str()) && !dev.contains("#if 0") => {}
                        _ => failures.push(format!(
                            "{}: the Metal device code is missing or not part of the file",
                            case.rel
                        )),
                    }
                    if !bless() && txt.exists() {
                        failures.push(format!("{} is stale (the program compiles)", txt.display()));
                    }
                    match metal_check(&name, &o.code) {
                        None => no_clang = true,
                        Some(Ok(())) => {}
                        Some(Err(e)) => failures.push(format!(
                            "{}: the Metal code for `{name}` fails the clang check:\n{e}",
                            case.rel
                        )),
                    }
                }
                Err(CompileError::User(d)) => {
                    let text = render_all(&d);
                    if !may_compile
                        && !text.contains(
                            "Metal does not support double-precision floating-point numbers",
                        )
                    {
                        failures.push(format!("{}: expected the float64 error:\n{text}", case.rel));
                    }
                    check(&txt, &(text + "\n"), &mut failures);
                    if !bless() && metal.exists() {
                        failures.push(format!("{} is stale (the program fails)", metal.display()));
                    }
                }
                Err(CompileError::Internal(m)) => {
                    failures.push(format!("{}: internal error: {m}", case.rel))
                }
            }
        }
    }
    assert!(emitted > 0, "no Metal file was emitted");
    if no_clang {
        eprintln!("note: clang-19 not found; the Metal syntax check was skipped (CI=true fails)");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The clang check is not vacuous: a golden Metal file with an undeclared
/// identifier, a type error or a float64 value in a kernel must fail it.
#[test]
fn metal_check_rejects_broken_kernels() {
    let path = root().join("out/metal/sum_rows.metal");
    let good = std::fs::read_to_string(&path).expect("tests/out/metal/sum_rows.metal");
    match metal_check("sum_rows_good", &good) {
        None => return,
        Some(r) => r.expect("the golden sum_rows.metal passes the check"),
    }
    let kernel_end = good.find("#if 0").expect("the host part");
    let (device, host) = good.split_at(kernel_end);
    let body_end = device.rfind('}').expect("a kernel body");
    let broken = [
        ("undeclared", "  parpy_undeclared_name += 1;\n"),
        ("type_error", "  float *parpy_p = 1.5f;\n  (void)parpy_p;\n"),
        ("float64", "  double parpy_d = 0.0;\n  (void)parpy_d;\n"),
        ("unknown_function", "  simd_reduce(1.0f);\n"),
    ];
    for (name, line) in broken {
        let text = format!("{}{line}{}{host}", &device[..body_end], &device[body_end..]);
        match metal_check(&format!("sum_rows_{name}"), &text) {
            Some(Err(_)) | None => {}
            Some(Ok(())) => panic!("the clang check accepted a broken kernel ({name}):\n{text}"),
        }
    }
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
            value: Some(ScalarValue::Int(100)),
            weak: true,
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
