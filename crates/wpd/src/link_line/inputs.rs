//! The link's inputs, resolved as the real linker will resolve them
//! (`wpd_link::resolve`): bitcode symbol tables come from LLVM's irsymtab,
//! native ones from ELF. What the link loads is summarized (bitcode) or
//! scanned for the classes it can see (native); nothing else is.

use super::args::LinkArgs;
use crate::error::{Error, Result};
use crate::native::NativeScan;
use std::path::Path;
use wpd_link::resolve::{Comdat, Definition, DiskSource, FatLto, InputKind, Symbol, SymbolTable, Visibility};
use wpd_link::{LinkModel, LoadedKind};

/// The resolved link: the model, the files' bytes, and the native side.
pub struct ResolvedLink<'a> {
    pub model: LinkModel,
    pub source: DiskSource<'a>,
    /// References, classes and typeinfos of the native units the link
    /// loads.
    pub scan: NativeScan,
}

impl ResolvedLink<'_> {
    /// Whether any input holds bitcode (loaded or not).
    pub fn has_bitcode(&self) -> bool {
        self.model.inputs.iter().any(|i| match &i.kind {
            InputKind::Bitcode => true,
            InputKind::Archive { members, .. } => members.iter().any(|m| m.kind == LoadedKind::Bitcode),
            _ => false,
        })
    }
}

/// A bitcode symbol table in resolution's terms: the symbols lld's LTO puts
/// in the link (global, not LLVM-internal).
pub fn bitcode_table(bytes: &[u8]) -> Result<SymbolTable> {
    let t = wpd_llvm::read_bitcode_symtab(bytes)?;
    let symbols = t
        .symbols
        .into_iter()
        .filter(|s| s.in_link())
        .map(|s| Symbol {
            definition: if s.undefined {
                Definition::Undefined
            } else if s.common {
                Definition::Common { size: s.common_size }
            } else {
                Definition::Defined
            },
            weak: s.weak,
            visibility: match s.visibility {
                wpd_summary::Visibility::Default => Visibility::Default,
                wpd_summary::Visibility::Hidden => Visibility::Hidden,
                wpd_summary::Visibility::Protected => Visibility::Protected,
            },
            function: s.executable,
            tls: s.tls,
            comdat: s.comdat,
            may_omit: s.may_omit && !s.undefined,
            section: s.start_stop_section.map(String::into_boxed_str),
            name: s.name,
        })
        .collect();
    let comdats = t
        .comdats
        .into_iter()
        .map(|(name, kind)| Comdat { name, deduplicate: kind != wpd_llvm::ComdatKind::NoDeduplicate })
        .collect();
    Ok(SymbolTable { symbols, comdats })
}

/// The files of a link as resolution reads them: bitcode symbol tables
/// from irsymtab, C++ names demangled (for version scripts), fat LTO
/// objects as `fat` says.
fn disk_source(fat: FatLto) -> DiskSource<'static> {
    DiskSource::new(|_name: &str, bytes: &[u8]| bitcode_table(bytes))
        .with_demangler(wpd_llvm::demangle)
        .with_fat_lto(fat)
}

/// Resolves the link line and scans the loaded native units.
pub fn resolve(args: &LinkArgs) -> Result<ResolvedLink<'static>> {
    let fat = if args.settings.fat_lto_objects == Some(true) { FatLto::Bitcode } else { FatLto::Native };
    let mut source = disk_source(fat);
    let model = wpd_link::resolve(&args.line, &mut source)?;
    for w in &model.warnings {
        eprintln!("wpd-ld: warning: {w}");
    }
    // A fat LTO object loaded as native code, not asked for: clang does not
    // pass -ffat-lto-objects on through --ld-path, so wpd-ld cannot tell
    // which half the user meant (lld takes the native code unless told,
    // and a split unit's native code may lack its vtables).
    if args.settings.fat_lto_objects.is_none()
        && let Some(l) =
            model.loaded.iter().find(|l| l.kind == LoadedKind::Object && source.fat_objects().contains(&l.name))
    {
        return Err(Error::msg(format!(
            "{}: a fat LTO object (bitcode in .llvm.lto beside native code): pass -Wl,--fat-lto-objects to link its bitcode (as lld --fat-lto-objects), or -Wl,--no-fat-lto-objects to link its native code",
            l.name
        )));
    }
    // Bitcode named by a script is replaced by rewriting the script, which
    // only works for scripts made of the commands wpd models, named as
    // inputs (not with -T).
    for (i, input) in model.inputs.iter().enumerate() {
        let InputKind::Script { script, .. } = &input.kind else { continue };
        if !model.holds_bitcode(wpd_link::InputId(i as u32)) {
            continue;
        }
        let by_t = matches!(args.line.items.get(input.item), Some(wpd_link::Item::Script { .. })) && !input.from_script;
        if let Some(why) = script.unknown.as_deref().or(by_t.then_some("it is a -T script")) {
            return Err(Error::msg(format!(
                "{}: the linker script names LLVM bitcode, and wpd-ld cannot rewrite it ({why})",
                input.path.display()
            )));
        }
    }
    let scan = scan_native(&model, &source)?.0;
    Ok(ResolvedLink { model, source, scan })
}

/// The native units (objects, archive members, shared libraries) the
/// resolved link loads, in load order, each with the xxh3-128 of its
/// bytes (lower-case hex): what a distributed link's final link checks
/// against its index-only link.
pub fn native_inputs(model: &LinkModel, source: &DiskSource<'_>) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for l in model.loaded.iter().filter(|l| matches!(l.kind, LoadedKind::Object | LoadedKind::Shared)) {
        let path: &Path = &model.input(l.input).path;
        let bytes = match l.member {
            Some(m) => source.member_bytes(path, m.index()),
            None => source.bytes(path),
        };
        let bytes = bytes.ok_or_else(|| Error::at(&l.name, "input changed while linking"))?;
        out.push((l.name.clone(), crate::input::content_hash(bytes)));
    }
    Ok(out)
}

/// Scans the native units (objects, archive members, shared libraries) the
/// resolved link loads, for the classes native code sees; with how many
/// units were scanned.
pub fn scan_native(model: &LinkModel, source: &DiskSource<'_>) -> Result<(NativeScan, usize)> {
    let mut scan = NativeScan::default();
    let mut count = 0;
    for l in &model.loaded {
        if !matches!(l.kind, LoadedKind::Object | LoadedKind::Shared) {
            continue;
        }
        let path: &Path = &model.input(l.input).path;
        let bytes = match l.member {
            Some(m) => source.member_bytes(path, m.index()),
            None => source.bytes(path),
        };
        let bytes = bytes.ok_or_else(|| Error::at(&l.name, "input changed while linking"))?;
        scan.scan(bytes, &l.name)?;
        count += 1;
    }
    scan.see_unresolved(&model.unresolved);
    Ok((scan, count))
}

/// The native side of a link from its linker's command line (`argv`
/// without the program's name), for a linker plugin the linker does not
/// show its native files (mold offers it bitcode only): the line is read
/// as wpd-ld reads its own, an option the table does not know passes (it
/// may only change what this function need not know: outside
/// references), the line is resolved as `flavor` resolves it, and the
/// native units it loads are scanned, and so is every other native
/// member of its archives: the linker may load members `flavor`'s
/// resolution would not (mold 1.10 does, docs/cli.md), and a member
/// scanned that the link leaves out only keeps classes open.
pub fn native_side(argv: &[String], flavor: wpd_link::Flavor, fat: FatLto) -> Result<NativeSide> {
    let argv = super::args::expand_response_files(argv.to_vec())?;
    let mut args = super::args::parse_with(&argv, super::args::UnknownOptions::UnknownRefs)?;
    args.line.flavor = flavor;
    let mut source = disk_source(fat);
    let model = wpd_link::resolve(&args.line, &mut source)?;
    let (mut scan, mut count) = scan_native(&model, &source)?;
    for input in &model.inputs {
        let InputKind::Archive { members, .. } = &input.kind else { continue };
        for (index, m) in members.iter().enumerate() {
            if m.loaded || m.kind != LoadedKind::Object {
                continue;
            }
            let name = format!("{}({})", input.path.display(), m.name);
            let bytes = source
                .member_bytes(&input.path, index)
                .ok_or_else(|| Error::at(&name, "input changed while linking"))?;
            scan.scan(bytes, &name)?;
            count += 1;
        }
    }
    Ok(NativeSide { scan, count, as_needed_refs: model.as_needed_refs })
}

/// The native side of a link, read from its linker's command line
/// ([`native_side`]).
#[derive(Debug)]
pub struct NativeSide {
    pub scan: NativeScan,
    /// How many native units were scanned.
    pub count: usize,
    /// The bitcode's strong references an `--as-needed` library answers
    /// ([`wpd_link::LinkModel::as_needed_refs`]).
    pub as_needed_refs: std::collections::BTreeSet<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line the plugin cannot resolve is an error naming what failed
    /// (the plugin then takes the native side as unknown); a line of no
    /// file scans nothing.
    #[test]
    fn native_side_of_a_line() {
        let missing = "/nonexistent/wpd-native-side/x.o".to_string();
        let err = native_side(&["-o".into(), "out".into(), missing.clone()], wpd_link::Flavor::Lld, FatLto::Native)
            .unwrap_err();
        assert!(err.to_string().contains(&missing), "{err}");
        let side =
            native_side(&["-o".into(), "out".into(), "--as-needed".into()], wpd_link::Flavor::Lld, FatLto::Native)
                .unwrap();
        assert_eq!(side.count, 0);
        assert!(side.scan.classes.is_empty() && side.scan.cxx_code.is_none() && side.as_needed_refs.is_empty());
    }
}
