//! What each input of the link is, found the way the linker finds it:
//! positional files as given, `-l` libraries through the `-L` paths
//! (`lib<name>.so` before `lib<name>.a` unless `-Bstatic`), linker scripts
//! followed through their `INPUT`/`GROUP`/`AS_NEEDED` lists.

use crate::args::{Item, LinkArgs};
use std::path::{Path, PathBuf};
use wpd::input::{FileKind, classify, is_bitcode};
use wpd::native::NativeScan;

/// The role of one command-line item in the link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// A bitcode object (with its bytes, read once): replaced by its
    /// native object.
    BitcodeObject(PathBuf, Vec<u8>),
    /// An archive with bitcode members (with its bytes): replaced by an
    /// archive of native members in the same order.
    BitcodeArchive(PathBuf, Vec<u8>),
    /// Native object, native archive, shared library, linker script, or a
    /// library wpd could not find: passed through.
    Other,
}

/// Everything wpd learned about the non-bitcode side of the link.
#[derive(Debug, Default)]
pub struct NativeSide {
    /// References, classes and typeinfos of native inputs.
    pub scan: NativeScan,
    /// The first input that could not be inspected (a library not found, a
    /// linker script with commands wpd does not read): then every
    /// externally visible bitcode symbol must be assumed referenced, and no
    /// hierarchy can be validated.
    pub unknown: Option<String>,
}

/// Finds `-l<spec>` in the search paths.
pub fn find_library(args: &LinkArgs, spec: &str, static_only: bool) -> Option<PathBuf> {
    let names: Vec<String> = match spec.strip_prefix(':') {
        Some(exact) => vec![exact.to_string()],
        None if static_only => vec![format!("lib{spec}.a")],
        None => vec![format!("lib{spec}.so"), format!("lib{spec}.a")],
    };
    for dir in &args.lib_paths {
        let dir = sysroot_path(args, dir);
        for n in &names {
            let p = dir.join(n);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// `=dir` and `$SYSROOT/dir` in search paths are relative to the sysroot.
fn sysroot_path(args: &LinkArgs, dir: &str) -> PathBuf {
    let rest = dir.strip_prefix('=').or_else(|| dir.strip_prefix("$SYSROOT"));
    match (rest, &args.sysroot) {
        (Some(r), Some(root)) => Path::new(root).join(r.trim_start_matches('/')),
        (Some(r), None) => PathBuf::from(r),
        (None, _) => PathBuf::from(dir),
    }
}

/// Classifies every item and scans the native side. Errors name the file.
pub fn resolve(args: &LinkArgs) -> Result<(Vec<Resolved>, NativeSide), String> {
    let mut native = NativeSide::default();
    if args.has_script {
        native.unknown = Some("a -T linker script".into());
    }
    let mut out = Vec::with_capacity(args.items.len());
    for item in &args.items {
        let r = match item {
            Item::Input(path) => {
                let p = PathBuf::from(path);
                let bytes = std::fs::read(&p).map_err(|e| format!("cannot open {path}: {e}"))?;
                with_bytes(inspect(args, &p, &bytes, &mut native, 0)?, bytes)
            }
            Item::Library { spec, static_only, .. } => match find_library(args, spec, *static_only) {
                Some(p) => {
                    let bytes = std::fs::read(&p).map_err(|e| format!("cannot open {}: {e}", p.display()))?;
                    with_bytes(inspect(args, &p, &bytes, &mut native, 0)?, bytes)
                }
                None => {
                    // The real linker will report it (or find it in its
                    // built-in paths); its references are unknown to wpd.
                    native.unknown.get_or_insert_with(|| format!("-l{spec} (not found in the -L paths)"));
                    Resolved::Other
                }
            },
            Item::Pass(_) => Resolved::Other,
        };
        out.push(r);
    }
    Ok((out, native))
}

/// Keeps the bytes of a bitcode input so nothing reads the file again.
fn with_bytes(r: Resolved, bytes: Vec<u8>) -> Resolved {
    match r {
        Resolved::BitcodeObject(p, _) => Resolved::BitcodeObject(p, bytes),
        Resolved::BitcodeArchive(p, _) => Resolved::BitcodeArchive(p, bytes),
        Resolved::Other => Resolved::Other,
    }
}

fn inspect(
    args: &LinkArgs,
    path: &Path,
    bytes: &[u8],
    native: &mut NativeSide,
    depth: u32,
) -> Result<Resolved, String> {
    let shown = path.display().to_string();
    match classify(bytes) {
        FileKind::Bitcode | FileKind::WrappedBitcode => Ok(Resolved::BitcodeObject(path.to_path_buf(), Vec::new())),
        FileKind::Archive => {
            if archive_has_bitcode(bytes, &shown)? {
                // Native members of a mixed archive still reference things.
                native.scan.scan(bytes, &shown).map_err(|e| e.to_string())?;
                Ok(Resolved::BitcodeArchive(path.to_path_buf(), Vec::new()))
            } else {
                native.scan.scan(bytes, &shown).map_err(|e| e.to_string())?;
                Ok(Resolved::Other)
            }
        }
        FileKind::Elf => {
            native.scan.scan(bytes, &shown).map_err(|e| e.to_string())?;
            Ok(Resolved::Other)
        }
        FileKind::ThinArchive => {
            native.unknown.get_or_insert_with(|| format!("thin archive {shown}"));
            Ok(Resolved::Other)
        }
        FileKind::Empty => Err(format!("{shown}: empty input file")),
        FileKind::Unknown => {
            // A linker script (libc.so is one); anything else is the real
            // linker's to judge.
            match std::str::from_utf8(bytes) {
                Ok(text) if depth < 8 => {
                    script_inputs(args, path, text, native, depth)?;
                    Ok(Resolved::Other)
                }
                _ => {
                    native.unknown.get_or_insert_with(|| format!("{shown} (unrecognised input)"));
                    Ok(Resolved::Other)
                }
            }
        }
    }
}

fn archive_has_bitcode(bytes: &[u8], shown: &str) -> Result<bool, String> {
    let archive = wpd_archive(bytes, shown)?;
    for member in archive.members() {
        let member = member.map_err(|e| format!("{shown}: malformed archive: {e}"))?;
        let data = member.data(bytes).map_err(|e| format!("{shown}: malformed archive: {e}"))?;
        if is_bitcode(data) {
            return Ok(true);
        }
    }
    Ok(false)
}

fn wpd_archive<'d>(bytes: &'d [u8], shown: &str) -> Result<wpd::object::read::archive::ArchiveFile<'d>, String> {
    wpd::object::read::archive::ArchiveFile::parse(bytes).map_err(|e| format!("{shown}: malformed archive: {e}"))
}

/// Follows the files a linker script names. Only scripts made of
/// `INPUT`/`GROUP`/`AS_NEEDED`/`OUTPUT_FORMAT`/`SEARCH_DIR` lists are
/// understood; anything else makes the native side incomplete.
fn script_inputs(args: &LinkArgs, path: &Path, text: &str, native: &mut NativeSide, depth: u32) -> Result<(), String> {
    let mut clean = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        clean.push_str(&rest[..start]);
        rest = rest[start + 2..].split_once("*/").map(|(_, r)| r).unwrap_or("");
    }
    clean.push_str(rest);
    let tokens: Vec<&str> = clean
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',')
        .filter(|t| !t.is_empty())
        .collect();
    const KEYWORDS: &[&str] = &["INPUT", "GROUP", "AS_NEEDED", "OUTPUT_FORMAT", "SEARCH_DIR"];
    let mut skip_next_format = false;
    for t in tokens {
        if KEYWORDS.contains(&t) {
            skip_next_format = t == "OUTPUT_FORMAT";
            continue;
        }
        if skip_next_format && t.starts_with("elf") {
            continue;
        }
        if t.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
            native.unknown.get_or_insert_with(|| format!("linker script {} ({t})", path.display()));
            continue;
        }
        let file = match t.strip_prefix("-l") {
            Some(spec) => find_library(args, spec, false),
            None => {
                let p = PathBuf::from(t);
                if p.is_absolute() {
                    Some(sysroot_path(args, &format!("={t}"))).filter(|p| p.is_file()).or(Some(p))
                } else {
                    let beside = path.parent().unwrap_or(Path::new(".")).join(t);
                    if beside.is_file() { Some(beside) } else { find_library(args, &format!(":{t}"), false) }
                }
            }
        };
        match file.and_then(|f| std::fs::read(&f).ok().map(|b| (f, b))) {
            Some((f, bytes)) => match inspect(args, &f, &bytes, native, depth + 1)? {
                Resolved::Other => {}
                _ => {
                    return Err(format!(
                        "{}: linker script {} names LLVM bitcode; wpd-ld cannot replace inputs inside scripts",
                        f.display(),
                        path.display()
                    ));
                }
            },
            None => {
                native.unknown.get_or_insert_with(|| format!("{t} named by linker script {}", path.display()));
            }
        }
    }
    Ok(())
}
