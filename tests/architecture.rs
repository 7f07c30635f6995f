//! The architecture as docs/design.md draws it, checked on the source:
//! within each crate no top-level module imports a module that imports it
//! back: the phases form a line, not a knot. And no public function or
//! type of a library crate returns `Result<_, String>`: errors are
//! `wpd_summary::Error`, one line naming the input.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const CRATES: &[&str] = &[
    "summaries/src",
    "crates/wpd-link/src",
    "crates/wpd-llvm/src",
    "crates/wpd/src",
    "crates/wpd-plugin/src",
    "linker-shim/src",
];

/// The library crates, whose public functions other crates call.
const LIBRARIES: &[&str] = &["summaries/src", "crates/wpd-link/src", "crates/wpd-llvm/src", "crates/wpd/src"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace").to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The source without comments (doc links name modules without importing
/// them) and without `#[cfg(test)]` modules at the end of a file.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// The top-level module a file belongs to (`rewrite/promote.rs` → `rewrite`).
fn top_module(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?.trim_end_matches(".rs").to_string();
    (first != "lib" && first != "main").then_some(first)
}

/// `crate::x` paths in `code`, the modules named.
fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        let name: String = after.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        let before = rest[..i].chars().last();
        if !name.is_empty() && !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            out.insert(name);
        }
        rest = after;
    }
    out
}

#[test]
fn no_module_imports_a_module_that_imports_it_back() {
    let mut circles = Vec::new();
    for krate in CRATES {
        let src = root().join(krate);
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let mut imports: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for f in &files {
            let Some(top) = top_module(&src, f) else { continue };
            let text = std::fs::read_to_string(f).expect("readable source");
            let deps = crate_paths(&code(&text));
            imports.entry(top.clone()).or_default().extend(deps.into_iter().filter(|d| *d != top));
        }
        for (a, deps) in &imports {
            for b in deps {
                if a < b && imports.get(b).is_some_and(|d| d.contains(a)) {
                    circles.push(format!("{krate}: {a} <-> {b}"));
                }
            }
        }
    }
    assert!(circles.is_empty(), "modules importing each other: {circles:?}");
}

/// A public item's signature (from `pub fn`/`pub type` to its body or `;`)
/// that returns a `String` error.
fn string_error(signature: &str) -> bool {
    let flat: String = signature.split_whitespace().collect::<Vec<_>>().join(" ");
    flat.contains(", String>") && flat.contains("Result<")
}

#[test]
fn no_string_errors_in_public_library_api() {
    let mut found = Vec::new();
    for krate in LIBRARIES {
        let mut files = Vec::new();
        rust_files(&root().join(krate), &mut files);
        for f in &files {
            let text = code(&std::fs::read_to_string(f).expect("readable source"));
            let mut rest = text.as_str();
            while let Some(i) = rest.find("pub ") {
                let item = &rest[i..];
                let head = item.trim_start_matches("pub ").trim_start();
                let end = item.find(['{', ';']).unwrap_or(item.len());
                if (head.starts_with("fn ") || head.starts_with("type ")) && string_error(&item[..end]) {
                    let line = text[..text.len() - rest.len() + i].lines().count() + 1;
                    found.push(format!("{}:{line}", f.strip_prefix(root()).unwrap_or(f).display()));
                }
                rest = &item[4..];
            }
        }
    }
    assert!(found.is_empty(), "public functions returning Result<_, String>: {found:?}");
}
