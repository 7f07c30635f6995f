//! Makes a native object that replaces a bitcode unit reference what the
//! unit referenced, as far as a linker's archive extraction can tell.
//!
//! wpd-ld hands the real linker native objects in place of bitcode, and
//! the linker resolves the line again. An archive member (or a
//! `--start-lib` object) is extracted when a strong reference meets it; it
//! then loads, and its static initializers run, in that place. The native
//! object's references are not the bitcode's:
//! - **lost**: code LLVM inlined (after importing it) or found dead no
//!   longer names what it called. A member the original link extracted
//!   for that reference alone would not load at all, and its static
//!   initializers would not run. Each such reference is appended to the
//!   object's symbol table again, as a strong undefined symbol of default
//!   visibility (no relocation uses it; it only asks for the definition).
//! - **new**: a call wpd devirtualized names its target, imported code
//!   names what it uses, a linkonce copy the thin link found non-prevailing
//!   is now a reference to the prevailing one. A member the original link
//!   extracted later (for a file further down the line) would be
//!   extracted earlier, moving its static initializers (and which of
//!   several weak definitions wins). Such a reference is made weak: a weak
//!   undefined reference extracts nothing (lld, GNU ld and gold alike) and
//!   binds to the definition once the member loads where it did.
//!
//! Both only for a symbol that a native object of the link defines as a
//! global or weak symbol (a native input, or an object LLVM compiled):
//! never one only a shared library defines (a weak reference does not keep
//! an `--as-needed` library), nor one the thin link internalized or dropped
//! (a reference wpd's rewrite removed, to a vtable say: restored, it would
//! dangle). The weakening edits the binding in
//! the symbol's own entry; the lost references are appended after every
//! symbol ([`crate::final_link::elf_symbols`]), so no symbol index moves.

use crate::error::{Error, Result};
use crate::final_link::elf_symbols::{Object, add_references};

use object::LittleEndian as LE;
use object::elf::{SHN_UNDEF, STB_GLOBAL, STB_LOCAL, STB_WEAK, Sym64};
use object::read::elf::{SectionHeader, Sym};
use std::collections::HashSet;
use wpd_link::Refs;

/// What the unit's bitcode referenced, and what the link defines.
pub struct References<'a> {
    /// The undefined symbols of the unit's bitcode (the link model's,
    /// [`wpd_link::Loaded::refs`]); the lost strong ones are appended in
    /// their (sorted) order.
    pub bitcode: &'a Refs,
    /// Whether a native object of the link (an input or one LLVM compiled)
    /// defines the symbol, global or weak.
    pub defined_in_link: &'a dyn Fn(&str) -> bool,
}

/// What [`keep_references`] changed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Edits {
    /// New references made weak.
    pub weakened: usize,
    /// Lost references appended.
    pub restored: usize,
}

/// `elf` (an x86-64 ELF relocatable object compiled from the unit) with its
/// new references weakened and its lost ones appended; `None` when nothing
/// changes. `name` names the unit in errors.
pub fn keep_references(elf: &[u8], refs: &References<'_>, name: &str) -> Result<Option<(Vec<u8>, Edits)>> {
    edit(elf, refs).map_err(|e| Error::at(name, format!("cannot edit the native object's symbols: {e}")))
}

fn edit(elf: &[u8], refs: &References<'_>) -> std::result::Result<Option<(Vec<u8>, Edits)>, String> {
    let text = |e: object::read::Error| e.to_string();
    let Object { endian, sections, symtab, .. } = Object::parse(elf)?;
    let table_at = usize::try_from(sections.section(symtab.section()).map_err(text)?.sh_offset(endian))
        .map_err(|e| e.to_string())?;
    let mut out: Option<Vec<u8>> = None;
    let mut edits = Edits::default();
    // Global and weak symbols the object has, defined or not.
    let mut present: HashSet<String> = HashSet::new();
    for (index, sym) in symtab.symbols().iter().enumerate().skip(1) {
        if sym.st_bind() == STB_LOCAL {
            continue;
        }
        let symbol = String::from_utf8_lossy(sym.name(endian, symtab.strings()).map_err(text)?).into_owned();
        let new = sym.st_shndx(endian) == SHN_UNDEF
            && sym.st_bind() == STB_GLOBAL
            && !refs.bitcode.contains(&symbol)
            && (refs.defined_in_link)(&symbol);
        if new {
            // st_info is the byte after st_name in an Elf64_Sym.
            let info_at = table_at + index * size_of::<Sym64<LE>>() + 4;
            let bytes = out.get_or_insert_with(|| elf.to_vec());
            bytes[info_at] = (STB_WEAK << 4) | (bytes[info_at] & 0xf);
            edits.weakened += 1;
        }
        present.insert(symbol);
    }
    let lost: Vec<&str> = refs
        .bitcode
        .strong
        .iter()
        .map(String::as_str)
        .filter(|s| !present.contains(*s) && (refs.defined_in_link)(s))
        .collect();
    if !lost.is_empty() {
        edits.restored = lost.len();
        out = Some(add_references(out.as_deref().unwrap_or(elf), &lost)?);
    }
    Ok(out.map(|bytes| (bytes, edits)))
}

/// The names of `elf`'s defined global and weak symbols. `name` names the
/// object in errors.
pub fn global_definitions(elf: &[u8], name: &str) -> Result<Vec<String>> {
    let read = || -> std::result::Result<Vec<String>, String> {
        let text = |e: object::read::Error| e.to_string();
        let Object { endian, symtab, .. } = Object::parse(elf)?;
        let mut names = Vec::new();
        for sym in symtab.symbols().iter().skip(1) {
            if sym.st_bind() != STB_LOCAL && sym.st_shndx(endian) != SHN_UNDEF {
                names.push(String::from_utf8_lossy(sym.name(endian, symtab.strings()).map_err(text)?).into_owned());
            }
        }
        Ok(names)
    };
    read().map_err(|e| Error::at(name, format!("cannot read the native object's symbols: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::{Object, ObjectSymbol};
    use std::process::Command;

    /// A real object: `main` calls `used` and `kept`. `used` is new (the
    /// bitcode did not reference it): weak; `kept` stays strong; `gone`
    /// (referenced by the bitcode, not by the object) comes back, strong
    /// and undefined, unless only a shared library defines it.
    #[test]
    fn new_references_become_weak_and_lost_ones_come_back() {
        let dir = tempfile::tempdir().expect("temp dir");
        let src = dir.path().join("m.cpp");
        std::fs::write(&src, "int used(); int kept();\nint main() { return used() + kept(); }\n").expect("write");
        let obj = dir.path().join("m.o");
        let st = Command::new("clang++-19").args(["-O2", "-c"]).arg(&src).arg("-o").arg(&obj).status();
        assert!(st.expect("clang++-19 runs").success());
        let bytes = std::fs::read(&obj).expect("read");
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect();
        let bitcode = Refs { strong: names(&["_Z4gonev", "_Z4keptv", "shared_only"]), weak: names(&[]) };
        let in_link = |s: &str| s != "shared_only";
        let refs = References { bitcode: &bitcode, defined_in_link: &in_link };
        let (edited, edits) = keep_references(&bytes, &refs, "m.o").expect("readable").expect("edited");
        assert_eq!(edits, Edits { weakened: 1, restored: 1 });
        let file = object::File::parse(&*edited).expect("still an object");
        let symbol = |name: &str| {
            file.symbols().find(|s| s.name() == Ok(name)).map(|s| (s.is_undefined(), s.is_weak(), s.is_global()))
        };
        assert_eq!(symbol("_Z4usedv"), Some((true, true, true)));
        assert_eq!(symbol("_Z4keptv"), Some((true, false, true)));
        assert_eq!(symbol("_Z4gonev"), Some((true, false, true)));
        assert_eq!(symbol("shared_only"), None);
        assert_eq!(symbol("main"), Some((false, false, true)));
        // Nothing new, nothing lost: unchanged.
        let all = Refs { strong: names(&["_Z4keptv"]), weak: names(&["_Z4usedv"]) };
        let same = References { bitcode: &all, defined_in_link: &in_link };
        assert!(keep_references(&bytes, &same, "m.o").expect("readable").is_none());
    }

    #[test]
    fn refuses_what_is_not_a_relocatable_elf_object() {
        let none = Refs::default();
        let refs = References { bitcode: &none, defined_in_link: &|_| true };
        assert!(keep_references(b"not an object at all, but long enough to hold a header", &refs, "x").is_err());
    }
}
