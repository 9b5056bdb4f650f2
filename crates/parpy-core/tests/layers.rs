//! The layer order of ARCHITECTURE.md ("Layers"), checked on the sources:
//! a file may name modules of its own layer and of lower ones, never of a
//! higher one. Test code (`#[cfg(test)]` modules, `tests.rs`,
//! `testutil.rs`) is left out.

use std::fs;
use std::path::{Path, PathBuf};

/// The layers, lowest first, by top-level module of `src/`.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "base",
        &["diag", "types", "options", "ops", "signature", "error"],
    ),
    ("front", &["syntax", "resolve"]),
    ("ir", &["ir"]),
    ("sema", &["sema"]),
    ("schedule", &["schedule"]),
    ("passes", &["passes"]),
    ("back", &["back"]),
    ("driver", &["driver", "lib"]),
];

fn layer_of(top: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, mods)| mods.contains(&top))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file (`src/ir/print.rs` -> `[ir, print]`,
/// `src/ir/mod.rs` -> `[ir]`, `src/lib.rs` -> `[lib]`).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|l| l == "mod") && parts.len() > 1 {
        parts.pop();
    }
    parts
}

/// The text without comments, string literals and `#[cfg(test)]` modules.
fn code_of(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if text[i..].starts_with("//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if text[i..].starts_with("/*") {
            let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            i = end;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && i + 2 < b.len() && (b[i + 2] == b'\'' || b[i + 1] == b'\\') {
            // a char literal (`'"'`, `'\n'`); lifetimes pass through
            let end = text[i + 1..].find('\'').map_or(b.len(), |e| i + 1 + e + 1);
            i = end;
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    // drop `#[cfg(test)] mod NAME { ... }`
    let mut result = String::new();
    let mut rest = out.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        result.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let trimmed = after.trim_start();
        let is_mod = trimmed.starts_with("mod ") || trimmed.starts_with("pub(crate) mod ");
        match (is_mod, after.find(['{', ';'])) {
            (true, Some(open)) if after.as_bytes()[open] == b'{' => {
                let mut depth = 0;
                let mut end = after.len();
                for (j, c) in after[open..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = open + j + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                rest = &after[end..];
            }
            _ => rest = after,
        }
    }
    result.push_str(rest);
    result
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The top-level modules a file names through `crate::` and `super::`.
fn named_tops(code: &str, module: &[String]) -> Vec<String> {
    let mut tops = vec![];
    let idx: Vec<(usize, char)> = code.char_indices().collect();
    for (k, &(i, _)) in idx.iter().enumerate() {
        let before_ok = k == 0 || !is_ident(idx[k - 1].1) && idx[k - 1].1 != ':';
        if !before_ok {
            continue;
        }
        let s = &code[i..];
        let (mut base, mut rest): (Vec<String>, &str) = if let Some(r) = s.strip_prefix("crate::") {
            (vec![], r)
        } else if s.starts_with("super::") {
            // `super` of a file module is its parent module
            let mut base = module.to_vec();
            let mut r = s;
            while let Some(x) = r.strip_prefix("super::") {
                base.pop();
                r = x;
            }
            (base, r)
        } else {
            continue;
        };
        if base.is_empty() {
            if let Some(group) = rest.strip_prefix('{') {
                // `crate::{a, b::c}`: the first segment of each item
                let end = group.find('}').unwrap_or(group.len());
                for item in group[..end].split(',') {
                    let first: String = item.trim().chars().take_while(|&c| is_ident(c)).collect();
                    if !first.is_empty() {
                        tops.push(first);
                    }
                }
                continue;
            }
            let first: String = rest.chars().take_while(|&c| is_ident(c)).collect();
            rest = &rest[first.len()..];
            base.push(first);
            let _ = rest;
        }
        tops.push(base[0].clone());
    }
    tops
}

#[test]
fn no_file_names_a_higher_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![];
    rust_files(&src, &mut files);
    files.sort();
    let mut broken = vec![];
    let mut checked = 0;
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy();
        if name == "tests.rs" || name == "testutil.rs" {
            continue;
        }
        let module = module_path(&src, f);
        let own = layer_of(&module[0]).unwrap_or_else(|| {
            panic!(
                "{}: module `{}` has no layer in LAYERS (add it)",
                f.display(),
                module[0]
            )
        });
        let code = code_of(&fs::read_to_string(f).unwrap());
        for top in named_tops(&code, &module) {
            let Some(l) = layer_of(&top) else {
                continue; // an item of lib.rs or a prelude name
            };
            if l > own {
                broken.push(format!(
                    "{} (layer {}) names `{top}` (layer {})",
                    f.strip_prefix(&src).unwrap().display(),
                    LAYERS[own].0,
                    LAYERS[l].0
                ));
            }
        }
        checked += 1;
    }
    assert!(checked > 40, "only {checked} files checked");
    broken.sort();
    broken.dedup();
    assert!(
        broken.is_empty(),
        "files naming a higher layer (see ARCHITECTURE.md, Layers):\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_checker_sees_crate_super_and_group_paths() {
    let m = |s: &str| s.split('/').map(String::from).collect::<Vec<_>>();
    let code = code_of(
        "use crate::ir::Expr;\nuse crate::{passes, back::emit};\n// crate::sema\n\
         fn f() { super::super::driver::compile(); let s = \"crate::syntax\"; }\n\
         #[cfg(test)]\nmod tests { use crate::schedule; }\n",
    );
    let tops = named_tops(&code, &m("ir/print"));
    assert_eq!(tops, vec!["ir", "passes", "back", "driver"]);
    assert_eq!(named_tops("super::Var", &m("ir/print")), vec!["ir"]);
    assert_eq!(named_tops("super::Var", &m("ir")), vec!["Var"]);
}
