//! Ties the two native objects of a split unit kept in two, so that a
//! linker loads both or neither, as it loaded the one bitcode file they
//! replace. An archive member (or a `--start-lib` object) is extracted when
//! a symbol it defines is needed; the thin part's object and the vtables'
//! object define different symbols, so either could be extracted without
//! the other, losing the other's static initializers or the members its
//! references would have pulled in. Each object gets a weak hidden
//! absolute symbol of its own and an undefined reference to the other's:
//! extracting one extracts the other, from the same archive scan. The
//! symbols are hidden (never exported) and weak (two links' relocatable
//! outputs combined later cannot clash).
//!
//! The edit is made on the ELF file, not in LLVM: the thin part goes
//! through LLVM's ThinLTO untouched, and objects may come from LLVM's
//! cache. The two symbols are appended after every existing symbol, so no
//! symbol index changes (relocations, section groups and `.llvm_addrsig`
//! keep pointing where they did); the grown symbol and string tables
//! (and the extended section index table, if any) are written at the end
//! of the file and their section headers pointed there.

use crate::error::{Error, Result};

use object::LittleEndian as LE;
use object::elf::{
    ET_REL, FileHeader64, SHN_ABS, SHT_SYMTAB, STB_GLOBAL, STB_WEAK, STV_HIDDEN, SectionHeader64, Sym64,
};
use object::read::elf::{FileHeader, SectionHeader, SectionTable, SymbolTable};

/// The prefix of every marker symbol.
const MARKER_PREFIX: &str = "__wpd_split.";

/// The marker symbols of one tied pair, named by `tag` (unique in the
/// link): `__wpd_split.<tag>.thin` and `__wpd_split.<tag>.vtables`.
fn marker(tag: &str, side: &str) -> String {
    format!("{MARKER_PREFIX}{tag}.{side}")
}

/// Whether `name` is a tie's marker symbol (whose undefined reference must
/// stay strong: it is what extracts the other object).
pub fn is_marker(name: &str) -> bool {
    name.starts_with(MARKER_PREFIX)
}

/// `thin` and `vtables` (x86-64 ELF relocatable objects) tied to each
/// other under `tag`; `name` names them in errors.
pub fn tie(thin: &[u8], vtables: &[u8], tag: &str, name: &str) -> Result<(Vec<u8>, Vec<u8>)> {
    let (t, v) = (marker(tag, "thin"), marker(tag, "vtables"));
    let thin = add_symbols(thin, &[Symbol::weak_hidden_abs(&t), Symbol::undefined_hidden(&v)])
        .map_err(|e| Error::at(name, format!("cannot tie the thin part's object to its vtables': {e}")))?;
    let vtables = add_symbols(vtables, &[Symbol::weak_hidden_abs(&v), Symbol::undefined_hidden(&t)])
        .map_err(|e| Error::at(name, format!("cannot tie the vtables' object to its thin part's: {e}")))?;
    Ok((thin, vtables))
}

/// One symbol to append: its name, `st_info`, `st_other` and section index.
pub(crate) struct Symbol<'a> {
    name: &'a str,
    info: u8,
    other: u8,
    shndx: u16,
}

impl<'a> Symbol<'a> {
    fn weak_hidden_abs(name: &'a str) -> Self {
        Symbol { name, info: STB_WEAK << 4, other: STV_HIDDEN, shndx: SHN_ABS }
    }

    fn undefined_hidden(name: &'a str) -> Self {
        Symbol { name, info: STB_GLOBAL << 4, other: STV_HIDDEN, shndx: 0 }
    }

    /// A strong undefined reference of default visibility (which, unlike
    /// a hidden one, changes nothing about the symbol it binds to).
    pub(crate) fn undefined(name: &'a str) -> Self {
        Symbol { name, info: STB_GLOBAL << 4, other: 0, shndx: 0 }
    }
}

/// An x86-64 ELF relocatable object with a symbol table, as read by the
/// `object` crate: what [`add_symbols`] and [`crate::extraction`] edit.
pub(crate) struct Object<'d> {
    pub header: &'d FileHeader64<LE>,
    pub endian: LE,
    pub sections: SectionTable<'d, FileHeader64<LE>>,
    pub symtab: SymbolTable<'d, FileHeader64<LE>>,
}

impl<'d> Object<'d> {
    pub fn parse(elf: &'d [u8]) -> std::result::Result<Self, String> {
        let text = |e: object::read::Error| e.to_string();
        let header = FileHeader64::<LE>::parse(elf).map_err(text)?;
        let endian = header.endian().map_err(text)?;
        if header.e_type(endian) != ET_REL {
            return Err("not a relocatable object".into());
        }
        let sections = header.sections(endian, elf).map_err(text)?;
        let symtab = sections.symbols(endian, elf, SHT_SYMTAB).map_err(text)?;
        if symtab.section().0 == 0 {
            return Err("no symbol table".into());
        }
        Ok(Object { header, endian, sections, symtab })
    }
}

/// `elf` with `symbols` appended to its symbol table (global symbols, so
/// after every local one). The file is read with the `object` crate; only
/// the symbol table, its string table and its extended section index
/// table (if any) are rewritten.
pub(crate) fn add_symbols(elf: &[u8], symbols: &[Symbol<'_>]) -> std::result::Result<Vec<u8>, String> {
    let text = |e: object::read::Error| e.to_string();
    let Object { header, endian, sections, symtab } = Object::parse(elf)?;
    let shoff = usize::try_from(header.e_shoff(endian)).map_err(|e| e.to_string())?;
    // Where section `index`'s header lies in the file, and its contents.
    let at = |index: object::SectionIndex| shoff + index.0 * size_of::<SectionHeader64<LE>>();
    let contents = |index: object::SectionIndex| -> std::result::Result<Vec<u8>, String> {
        Ok(sections.section(index).map_err(text)?.data(endian, elf).map_err(text)?.to_vec())
    };

    let mut strings = contents(symtab.string_section())?;
    let mut table = contents(symtab.section())?;
    for s in symbols {
        let name = u32::try_from(strings.len()).map_err(|e| e.to_string())?;
        strings.extend_from_slice(s.name.as_bytes());
        strings.push(0);
        table.extend_from_slice(&name.to_le_bytes());
        table.push(s.info);
        table.push(s.other);
        table.extend_from_slice(&s.shndx.to_le_bytes());
        table.extend_from_slice(&0u64.to_le_bytes());
        table.extend_from_slice(&0u64.to_le_bytes());
    }
    debug_assert_eq!(table.len() % size_of::<Sym64<LE>>(), 0);
    let mut out = elf.to_vec();
    // Each grown table goes at the end of the file, 8-byte aligned; its
    // section header (sh_offset, sh_size) is pointed there.
    let place = |out: &mut Vec<u8>, header_at: usize, bytes: &[u8]| {
        out.resize(out.len().next_multiple_of(8), 0);
        let offset = out.len() as u64;
        out.extend_from_slice(bytes);
        out[header_at + 24..header_at + 32].copy_from_slice(&offset.to_le_bytes());
        out[header_at + 32..header_at + 40].copy_from_slice(&(bytes.len() as u64).to_le_bytes());
    };
    place(&mut out, at(symtab.string_section()), &strings);
    place(&mut out, at(symtab.section()), &table);
    if symtab.shndx_section().0 != 0 {
        let mut indices = contents(symtab.shndx_section())?;
        indices.resize(indices.len() + 4 * symbols.len(), 0);
        place(&mut out, at(symtab.shndx_section()), &indices);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::process::Command;

    fn run(cmd: &mut Command) -> String {
        let out = cmd.output().expect("the tool runs");
        assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn compile(dir: &Path, name: &str, source: &str) -> Vec<u8> {
        let src = dir.join(format!("{name}.cpp"));
        std::fs::write(&src, source).expect("write source");
        let obj = dir.join(format!("{name}.o"));
        run(Command::new("clang++-19").args(["-O2", "-c"]).arg(&src).arg("-o").arg(&obj));
        std::fs::read(&obj).expect("read object")
    }

    /// Two real objects tied and put in an archive: a program that needs a
    /// symbol of one gets the other too (its static initializer runs),
    /// with lld, GNU ld and gold; untied, it does not.
    #[test]
    fn an_archive_loads_both_tied_objects_or_neither() {
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path();
        let a = compile(
            d,
            "a",
            "#include <cstdio>\nint from_a() { return 1; }\nstatic int r = (std::puts(\"a loaded\"), 0);\n",
        );
        let b = compile(
            d,
            "b",
            "#include <cstdio>\nint from_b() { return 2; }\nstatic int r = (std::puts(\"b loaded\"), 0);\n",
        );
        let (ta, tb) = tie(&a, &b, "0_test", "a.o").expect("tie");
        for (name, bytes) in [("ta.o", &ta), ("tb.o", &tb), ("ua.o", &a), ("ub.o", &b)] {
            std::fs::write(d.join(name), bytes).expect("write object");
        }
        run(Command::new("llvm-ar-19").current_dir(d).args(["rcs", "tied.a", "ta.o", "tb.o"]));
        run(Command::new("llvm-ar-19").current_dir(d).args(["rcs", "untied.a", "ua.o", "ub.o"]));
        for (needs, main) in [
            ("from_a", "int from_a();\nint main() { return from_a() - 1; }\n"),
            ("from_b", "int from_b();\nint main() { return from_b() - 2; }\n"),
        ] {
            let main_o = d.join(format!("main_{needs}.o"));
            std::fs::write(d.join("main.cpp"), main).expect("write main");
            run(Command::new("clang++-19").args(["-O2", "-c"]).arg(d.join("main.cpp")).arg("-o").arg(&main_o));
            for linker in ["lld", "bfd", "gold"] {
                for (archive, both) in [("tied.a", true), ("untied.a", false)] {
                    let prog = d.join(format!("{needs}-{linker}-{archive}"));
                    run(Command::new("clang++-19")
                        .arg(format!("-fuse-ld={linker}"))
                        .arg(&main_o)
                        .arg(d.join(archive))
                        .arg("-o")
                        .arg(&prog));
                    let printed = run(&mut Command::new(&prog));
                    let lines = printed.lines().count();
                    assert_eq!(lines, if both { 2 } else { 1 }, "{needs}, {linker}, {archive}: {printed:?}");
                    let symbols = run(Command::new("nm").arg(&prog));
                    assert_eq!(symbols.contains("__wpd_split.0_test."), both, "{needs}, {linker}, {archive}: markers");
                }
            }
        }
    }

    #[test]
    fn refuses_what_is_not_a_relocatable_elf_object() {
        assert!(
            add_symbols(b"not an object at all, but long enough to hold a header of sixty-four bytes", &[]).is_err()
        );
        assert!(tie(b"\x7fELF", b"", "t", "x.o").is_err());
    }
}
