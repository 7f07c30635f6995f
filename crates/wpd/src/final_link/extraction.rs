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
//! never one the thin link internalized or dropped (a reference wpd's
//! rewrite removed, to a vtable say: restored, it would dangle), and never
//! a new one only a shared library defines (a weak reference does not keep
//! an `--as-needed` library).
//!
//! - **needed**: a lost reference that a shared library read under
//!   `--as-needed` answers ([`wpd_link::LinkModel::as_needed_refs`]) is
//!   restored too. The library is recorded in the output (`DT_NEEDED`, so
//!   its constructors run) only if a reference asks for it, and the lost
//!   one may have been the only one: a C library's function called only
//!   from a virtual function no call can reach, whose dead vtable entry
//!   wpd dropped. Under `--gc-sections` lld counts only references from
//!   the relocations of live sections, so these also get one from a
//!   section the linker keeps.
//!
//! - **gone**: a lost reference whose definition no object has any more.
//!   LLVM's dead stripping, or wpd's dead vtable entries, dropped the
//!   function it named: the original link extracted an archive member for
//!   `ingest()`, which only a dead vtable entry's function called. The
//!   member must still load where it did: its static initializers run
//!   there, and a linkonce copy the thin link kept in it (a template
//!   instantiation other units now reference, weakly, as above) is defined
//!   nowhere else. The unit whose bitcode kept that definition gets a
//!   **marker**, `__wpd_extract_<n>` (`n`: its place among the link's
//!   bitcode units), a hidden absolute symbol, and every unit that lost
//!   such a reference references the marker instead: the same extraction,
//!   at the same place.
//!
//! The weakening edits the binding in the symbol's own entry; the restored
//! references and the markers are appended after every symbol
//! ([`crate::final_link::elf_symbols`]), so no symbol index moves.

use crate::error::{Error, Result};
use crate::final_link::elf_symbols::{Object, add_symbols};

use object::LittleEndian as LE;
use object::elf::{SHN_UNDEF, STB_GLOBAL, STB_LOCAL, STB_WEAK, Sym64};
use object::read::elf::{SectionHeader, Sym};
use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap, HashSet};
use wpd_link::Refs;

/// One bitcode unit of the link, in load order, and the native object
/// compiled from it.
pub struct Unit<'a> {
    /// As the link model names it, for errors.
    pub name: &'a str,
    /// The native object LLVM compiled from the unit.
    pub object: &'a [u8],
    /// The undefined symbols of the unit's bitcode (the link model's,
    /// [`wpd_link::Loaded::refs`]); the lost strong ones are appended in
    /// their (sorted) order.
    pub refs: &'a Refs,
    /// The unit's definitions the link kept ([`wpd_link::Loaded::prevailing`]).
    pub prevailing: &'a BTreeSet<String>,
}

/// What [`keep_extraction`] changed in one object.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Edits {
    /// New references made weak.
    pub weakened: usize,
    /// Lost references appended.
    pub restored: usize,
    /// Markers of other units referenced, for gone references.
    pub markers_referenced: Vec<String>,
    /// This unit's marker, when another unit references it.
    pub marker: Option<String>,
}

/// One unit's object as edited, with what changed; `None` when nothing did.
pub type Edited = Option<(Vec<u8>, Edits)>;

/// The marker of the `n`th bitcode unit of the link.
pub fn marker(n: usize) -> String {
    format!("__wpd_extract_{n}")
}

/// Every unit's object with its new references weakened, its lost ones
/// appended, and the markers its gone ones need (module docs); per unit,
/// `None` when nothing changes. `defined_elsewhere` tells whether another
/// native object of the final link (an input, LLVM's regular LTO object)
/// defines a symbol, global or weak; `as_needed` which references an
/// `--as-needed` library answers, and how to restore them. The units' own
/// objects are read once, for their definitions and what they reference
/// together.
pub fn keep_extraction(
    units: &[Unit<'_>],
    defined_elsewhere: &dyn Fn(&str) -> bool,
    as_needed: &AsNeeded<'_>,
) -> Result<Vec<Edited>> {
    let reads = units
        .iter()
        .map(|u| read(u).map_err(|e| Error::at(u.name, format!("cannot read the native object's symbols: {e}"))))
        .collect::<Result<Vec<_>>>()?;
    let defined_by_units: HashSet<&str> = reads.iter().flat_map(|r| r.defined.iter().map(|d| d.as_ref())).collect();
    let defined_in_link = |name: &str| defined_by_units.contains(name) || defined_elsewhere(name);
    let scans: Vec<Scan<'_>> = units.iter().zip(&reads).map(|(u, r)| scan(u, r, &defined_in_link, as_needed)).collect();
    // The unit that kept each gone symbol's definition.
    let gone: HashSet<&str> = scans.iter().flat_map(|s| s.gone.iter().copied()).collect();
    let mut owner: HashMap<&str, usize> = HashMap::new();
    if !gone.is_empty() {
        for (n, u) in units.iter().enumerate() {
            for name in u.prevailing.iter().map(String::as_str).filter(|s| gone.contains(s)) {
                owner.entry(name).or_insert(n);
            }
        }
    }
    let mut referenced: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); units.len()];
    let mut marked = vec![false; units.len()];
    for (n, s) in scans.iter().enumerate() {
        for m in s.gone.iter().filter_map(|g| owner.get(g).copied()).filter(|&m| m != n) {
            referenced[n].insert(m);
            marked[m] = true;
        }
    }
    let mut out = Vec::with_capacity(units.len());
    for (n, ((u, r), s)) in units.iter().zip(&reads).zip(scans).enumerate() {
        let edits = Edits {
            weakened: s.weaken.len(),
            restored: s.restore.len(),
            markers_referenced: referenced[n].iter().map(|&m| marker(m)).collect(),
            marker: marked[n].then(|| marker(n)),
        };
        out.push(
            edit(u.object, r.table_at, &s, &edits)
                .map_err(|e| Error::at(u.name, format!("cannot edit the native object's symbols: {e}")))?
                .map(|bytes| (bytes, edits)),
        );
    }
    Ok(out)
}

/// Every unit's object with its lost strong references that an
/// `--as-needed` library answers appended, and nothing else changed; per
/// unit, `None` when nothing changes. For a linker that keeps its own
/// archive extraction but records `--as-needed` libraries from the
/// objects it is handed after the backends (mold, behind the plugin).
pub fn restore_as_needed(units: &[Unit<'_>], as_needed: &AsNeeded<'_>) -> Result<Vec<Edited>> {
    units
        .iter()
        .map(|u| {
            let failed =
                |what: &str, e: String| Error::at(u.name, format!("cannot {what} the native object's symbols: {e}"));
            let r = read(u).map_err(|e| failed("read", e))?;
            let restore: Vec<(&str, bool)> =
                r.lost.iter().filter(|s| (as_needed.answers)(s)).map(|&s| (s, u.refs.tls.contains(s))).collect();
            let edits = Edits { restored: restore.len(), ..Edits::default() };
            let needed = if as_needed.retained_section { (0..restore.len()).collect() } else { Vec::new() };
            let scan = Scan { weaken: Vec::new(), restore, needed, gone: Vec::new() };
            Ok(edit(u.object, r.table_at, &scan, &edits).map_err(|e| failed("edit", e))?.map(|bytes| (bytes, edits)))
        })
        .collect()
}

/// The bitcode references an `--as-needed` library answers
/// ([`wpd_link::LinkModel::as_needed_refs`]), and whether a restored one
/// also gets a relocation from a retained section: for lld, which under
/// `--gc-sections` counts only references from live sections'
/// relocations (GNU ld refuses such a relocation against a shared
/// library's symbol, and GNU ld and gold count the symbol alone).
pub struct AsNeeded<'a> {
    pub answers: &'a dyn Fn(&str) -> bool,
    pub retained_section: bool,
}

/// One unit's object as read: where its symbol table lies, its global and
/// weak definitions, its global undefined references the bitcode did not
/// make (symbol index, name), and the bitcode's strong references it lacks.
struct Read<'u> {
    table_at: usize,
    defined: Vec<Cow<'u, str>>,
    unasked: Vec<(usize, Cow<'u, str>)>,
    lost: Vec<&'u str>,
}

fn read<'u>(u: &Unit<'u>) -> std::result::Result<Read<'u>, String> {
    let text = |e: object::read::Error| e.to_string();
    let Object { endian, sections, symtab, .. } = Object::parse(u.object)?;
    let table_at = usize::try_from(sections.section(symtab.section()).map_err(text)?.sh_offset(endian))
        .map_err(|e| e.to_string())?;
    let (mut defined, mut unasked) = (Vec::new(), Vec::new());
    // Global and weak symbols the object has, defined or not.
    let mut present: HashSet<&[u8]> = HashSet::new();
    for (index, sym) in symtab.symbols().iter().enumerate().skip(1) {
        if sym.st_bind() == STB_LOCAL {
            continue;
        }
        let name = sym.name(endian, symtab.strings()).map_err(text)?;
        if sym.st_shndx(endian) != SHN_UNDEF {
            defined.push(String::from_utf8_lossy(name));
        } else if sym.st_bind() == STB_GLOBAL {
            let symbol = String::from_utf8_lossy(name);
            if !u.refs.contains(&symbol) {
                unasked.push((index, symbol));
            }
        }
        present.insert(name);
    }
    let lost = u.refs.strong.iter().map(String::as_str).filter(|s| !present.contains(s.as_bytes())).collect();
    Ok(Read { table_at, defined, unasked, lost })
}

/// What one unit's object lacks or has anew.
struct Scan<'u> {
    /// Indices of the symbols to make weak: new global references.
    weaken: Vec<usize>,
    /// Lost strong references some object of the link defines, or an
    /// `--as-needed` library answers (name, thread-local).
    restore: Vec<(&'u str, bool)>,
    /// Those of `restore` an `--as-needed` library answers (indices): they
    /// also get a relocation from a retained section, for lld's
    /// `--gc-sections` ([`crate::final_link::elf_symbols`]).
    needed: Vec<usize>,
    /// Lost strong references no object defines any more.
    gone: Vec<&'u str>,
}

fn scan<'u>(u: &Unit<'u>, r: &Read<'u>, defined_in_link: &dyn Fn(&str) -> bool, as_needed: &AsNeeded<'_>) -> Scan<'u> {
    let weaken = r.unasked.iter().filter(|(_, name)| defined_in_link(name)).map(|&(index, _)| index).collect();
    let (mut restore, mut needed, mut gone) = (Vec::new(), Vec::new(), Vec::new());
    for &s in &r.lost {
        if defined_in_link(s) {
            restore.push((s, u.refs.tls.contains(s)));
        } else if (as_needed.answers)(s) {
            if as_needed.retained_section {
                needed.push(restore.len());
            }
            restore.push((s, u.refs.tls.contains(s)));
        } else {
            gone.push(s);
        }
    }
    Scan { weaken, restore, needed, gone }
}

/// `elf` (its symbol table at `table_at`) with the symbols `scan` weakens
/// made weak and the references it restores, the markers `edits`
/// references and its own marker appended; `None` when nothing changes.
fn edit(elf: &[u8], table_at: usize, scan: &Scan<'_>, edits: &Edits) -> std::result::Result<Option<Vec<u8>>, String> {
    let mut out: Option<Vec<u8>> = None;
    if !scan.weaken.is_empty() {
        let mut bytes = elf.to_vec();
        for index in &scan.weaken {
            // st_info is the byte after st_name in an Elf64_Sym.
            let info_at = table_at + index * size_of::<Sym64<LE>>() + 4;
            bytes[info_at] = (STB_WEAK << 4) | (bytes[info_at] & 0xf);
        }
        out = Some(bytes);
    }
    let references: Vec<(&str, bool)> =
        scan.restore.iter().copied().chain(edits.markers_referenced.iter().map(|m| (m.as_str(), false))).collect();
    let markers: Vec<&str> = edits.marker.iter().map(String::as_str).collect();
    if !references.is_empty() || !markers.is_empty() {
        out = Some(add_symbols(out.as_deref().unwrap_or(elf), &references, &markers, &scan.needed)?);
    }
    Ok(out)
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
    use object::{Object, ObjectSection, ObjectSymbol};
    use std::process::Command;

    const NONE_NEEDED: AsNeeded<'static> = AsNeeded { answers: &|_| false, retained_section: false };

    /// A real object compiled from `source`.
    fn compile(dir: &std::path::Path, stem: &str, source: &str) -> Vec<u8> {
        let src = dir.join(format!("{stem}.cpp"));
        std::fs::write(&src, source).expect("write");
        let obj = dir.join(format!("{stem}.o"));
        let st = Command::new("clang++-19").args(["-O2", "-c"]).arg(&src).arg("-o").arg(&obj).status();
        assert!(st.expect("clang++-19 runs").success());
        std::fs::read(&obj).expect("read")
    }

    fn names(n: &[&str]) -> BTreeSet<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    /// (undefined, weak, global, hidden, absolute) of `name` in `elf`.
    fn symbol(elf: &[u8], name: &str) -> Option<(bool, bool, bool, bool, bool)> {
        let file = object::File::parse(elf).expect("still an object");
        file.symbols().find(|s| s.name() == Ok(name)).map(|s| {
            let hidden = matches!(s.flags(), object::SymbolFlags::Elf { st_other, .. } if st_other & 3 == 2);
            let absolute = s.section() == object::SymbolSection::Absolute;
            (s.is_undefined(), s.is_weak(), s.is_global(), hidden, absolute)
        })
    }

    /// A real object: `main` calls `used` and `kept`. `used` is new (the
    /// bitcode did not reference it): weak; `kept` stays strong; `lost`
    /// (referenced by the bitcode, not by the object) comes back, strong
    /// and undefined, unless only a shared library defines it, one read
    /// without `--as-needed`.
    #[test]
    fn new_references_become_weak_and_lost_ones_come_back() {
        let dir = tempfile::tempdir().expect("temp dir");
        let bytes = compile(dir.path(), "m", "int used(); int kept();\nint main() { return used() + kept(); }\n");
        let bitcode = Refs {
            strong: names(&["_Z4lostv", "_Z4keptv", "shared_only", "as_needed_only", "tls_var"]),
            tls: names(&["tls_var"]),
            ..Refs::default()
        };
        let none = BTreeSet::new();
        let unit = Unit { name: "m.o", object: &bytes, refs: &bitcode, prevailing: &none };
        let in_link = |s: &str| s != "shared_only" && s != "as_needed_only";
        let mut out = keep_extraction(
            &[unit],
            &in_link,
            &AsNeeded { answers: &|s| s == "as_needed_only", retained_section: false },
        )
        .expect("readable");
        let (edited, edits) = out.pop().flatten().expect("edited");
        assert_eq!(edits, Edits { weakened: 1, restored: 3, markers_referenced: vec![], marker: None });
        // A thread-local reference comes back typed so (GNU ld and gold
        // reject a typeless one against the TLS definition), others untyped.
        let kind = |name: &str| {
            let file = object::File::parse(&*edited).expect("still an object");
            file.symbols().find(|s| s.name() == Ok(name)).map(|s| s.kind())
        };
        assert_eq!(kind("tls_var"), Some(object::SymbolKind::Tls));
        assert_eq!(kind("_Z4lostv"), Some(object::SymbolKind::Unknown));
        assert_eq!(symbol(&edited, "_Z4usedv"), Some((true, true, true, false, false)));
        assert_eq!(symbol(&edited, "_Z4keptv"), Some((true, false, true, false, false)));
        assert_eq!(symbol(&edited, "_Z4lostv"), Some((true, false, true, false, false)));
        assert_eq!(symbol(&edited, "shared_only"), None);
        assert_eq!(symbol(&edited, "as_needed_only"), Some((true, false, true, false, false)));
        assert!(object::File::parse(&*edited).expect("object").section_by_name(".wpd.needed").is_none());
        // For lld: the as-needed reference also gets a relocation from a
        // retained one-byte section.
        let retained = AsNeeded { answers: &|s| s == "as_needed_only", retained_section: true };
        let unit = Unit { name: "m.o", object: &bytes, refs: &bitcode, prevailing: &none };
        let (edited, _) =
            keep_extraction(&[unit], &in_link, &retained).expect("readable").pop().flatten().expect("edited");
        let file = object::File::parse(&*edited).expect("still an object");
        let section = file.section_by_name(".wpd.needed").expect("the retained section");
        assert_eq!(section.size(), 1);
        assert!(
            matches!(section.flags(), object::SectionFlags::Elf { sh_flags } if sh_flags & u64::from(object::elf::SHF_GNU_RETAIN) != 0)
        );
        let targets: Vec<String> = section
            .relocations()
            .map(|(_, r)| match r.target() {
                object::RelocationTarget::Symbol(i) => {
                    file.symbol_by_index(i).expect("symbol").name().expect("name").to_string()
                }
                _ => String::new(),
            })
            .collect();
        assert_eq!(targets, ["as_needed_only"]);
        assert_eq!(symbol(&edited, "_Z4lostv"), Some((true, false, true, false, false)));
        assert_eq!(symbol(&edited, "main"), Some((false, false, true, false, false)));
        // Nothing new, nothing lost: unchanged.
        let all = Refs { strong: names(&["_Z4keptv"]), weak: names(&["_Z4usedv"]), ..Refs::default() };
        let same = Unit { name: "m.o", object: &bytes, refs: &all, prevailing: &none };
        assert_eq!(keep_extraction(&[same], &in_link, &NONE_NEEDED).expect("readable"), vec![None]);
    }

    /// Three units: `a` lost its reference to `ingest`, whose definition
    /// (kept in unit `b`, the member the reference extracted) is gone;
    /// `c` defines `ingest` too, but not the copy the link kept. `a` now
    /// references `b`'s marker, which `b` defines, hidden and absolute;
    /// `c` is left alone.
    #[test]
    fn a_gone_reference_extracts_its_member_through_a_marker() {
        let dir = tempfile::tempdir().expect("temp dir");
        let a = compile(dir.path(), "a", "int main() { return 0; }\n");
        let b = compile(dir.path(), "b", "static int r = 1; int *other() { return &r; }\n");
        let c = compile(dir.path(), "c", "int c_only() { return 2; }\n");
        let a_refs = Refs { strong: names(&["_Z6ingesti"]), ..Refs::default() };
        let no_refs = Refs::default();
        let (none, kept) = (BTreeSet::new(), names(&["_Z6ingesti", "_Z5otherv"]));
        let units = [
            Unit { name: "a.o", object: &a, refs: &a_refs, prevailing: &none },
            Unit { name: "lib.a(b.o)", object: &b, refs: &no_refs, prevailing: &kept },
            Unit { name: "lib.a(c.o)", object: &c, refs: &no_refs, prevailing: &none },
        ];
        let defined = |s: &str| s == "_Z5otherv" || s == "_Z6c_onlyv";
        let out = keep_extraction(&units, &defined, &NONE_NEEDED).expect("readable");
        let (a_out, a_edits) = out[0].clone().expect("a edited");
        assert_eq!(a_edits.markers_referenced, vec![marker(1)]);
        assert_eq!(a_edits.restored, 0);
        assert_eq!(symbol(&a_out, &marker(1)), Some((true, false, true, false, false)));
        assert_eq!(symbol(&a_out, "_Z6ingesti"), None);
        let (b_out, b_edits) = out[1].clone().expect("b edited");
        assert_eq!(b_edits.marker, Some(marker(1)));
        assert_eq!(symbol(&b_out, &marker(1)), Some((false, false, true, true, true)));
        assert_eq!(symbol(&b_out, "_Z5otherv"), Some((false, false, true, false, false)));
        assert!(out[2].is_none());
    }

    #[test]
    fn refuses_what_is_not_a_relocatable_elf_object() {
        let (none, no_refs) = (BTreeSet::new(), Refs::default());
        let unit = Unit {
            name: "x",
            object: b"not an object at all, but long enough to hold a header",
            refs: &no_refs,
            prevailing: &none,
        };
        let err = keep_extraction(&[unit], &|_| true, &NONE_NEEDED).expect_err("not an object");
        assert!(err.to_string().contains('x'), "{err}");
    }
}
