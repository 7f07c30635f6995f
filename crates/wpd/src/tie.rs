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

const SHT_SYMTAB: u32 = 2;
const SHT_SYMTAB_SHNDX: u32 = 18;
const SHN_ABS: u16 = 0xfff1;
const STB_GLOBAL: u8 = 1;
const STB_WEAK: u8 = 2;
const STV_HIDDEN: u8 = 2;
const EHDR_SIZE: usize = 64;
const SHDR_SIZE: usize = 64;
const SYM_SIZE: usize = 24;

/// The marker symbols of one tied pair, named by `tag` (unique in the
/// link): `__wpd_split.<tag>.thin` and `__wpd_split.<tag>.vtables`.
fn marker(tag: &str, side: &str) -> String {
    format!("__wpd_split.{tag}.{side}")
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
struct Symbol<'a> {
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
}

fn u16_at(b: &[u8], at: usize) -> std::result::Result<u16, String> {
    b.get(at..at + 2).map(|s| u16::from_le_bytes([s[0], s[1]])).ok_or_else(|| "truncated ELF file".into())
}

fn u32_at(b: &[u8], at: usize) -> std::result::Result<u32, String> {
    b.get(at..at + 4).map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]])).ok_or_else(|| "truncated ELF file".into())
}

fn u64_at(b: &[u8], at: usize) -> std::result::Result<u64, String> {
    b.get(at..at + 8)
        .map(|s| u64::from_le_bytes(s.try_into().unwrap_or([0; 8])))
        .ok_or_else(|| "truncated ELF file".into())
}

/// A section's header: where it is and its file bytes.
struct Section {
    header_at: usize,
    kind: u32,
    offset: usize,
    size: usize,
    link: u32,
}

impl Section {
    fn bytes<'b>(&self, elf: &'b [u8]) -> std::result::Result<&'b [u8], String> {
        elf.get(self.offset..self.offset + self.size).ok_or_else(|| "a section lies outside the file".into())
    }
}

/// `elf` with `symbols` appended to its symbol table (global symbols, so
/// after every local one).
fn add_symbols(elf: &[u8], symbols: &[Symbol<'_>]) -> std::result::Result<Vec<u8>, String> {
    if elf.len() < EHDR_SIZE || &elf[..4] != b"\x7fELF" || elf[4] != 2 || elf[5] != 1 {
        return Err("not a 64-bit little-endian ELF file".into());
    }
    if u16_at(elf, 16)? != 1 {
        return Err("not a relocatable object".into());
    }
    let shoff = usize::try_from(u64_at(elf, 0x28)?).map_err(|e| e.to_string())?;
    if usize::from(u16_at(elf, 0x3a)?) != SHDR_SIZE {
        return Err("unexpected section header size".into());
    }
    let mut count = usize::from(u16_at(elf, 0x3c)?);
    if count == 0 && shoff != 0 {
        // Many sections: the count is in section 0's sh_size.
        count = usize::try_from(u64_at(elf, shoff + 32)?).map_err(|e| e.to_string())?;
    }
    let mut sections = Vec::with_capacity(count);
    for i in 0..count {
        let at = shoff + i * SHDR_SIZE;
        sections.push(Section {
            header_at: at,
            kind: u32_at(elf, at + 4)?,
            offset: usize::try_from(u64_at(elf, at + 24)?).map_err(|e| e.to_string())?,
            size: usize::try_from(u64_at(elf, at + 32)?).map_err(|e| e.to_string())?,
            link: u32_at(elf, at + 40)?,
        });
    }
    let symtab_index = match sections.iter().enumerate().filter(|(_, s)| s.kind == SHT_SYMTAB).collect::<Vec<_>>()[..] {
        [(i, _)] => i,
        _ => return Err("not exactly one symbol table".into()),
    };
    let symtab = &sections[symtab_index];
    let strtab = sections.get(symtab.link as usize).ok_or("the symbol table names no string table")?;
    let shndx = sections.iter().find(|s| s.kind == SHT_SYMTAB_SHNDX && s.link as usize == symtab_index);

    let mut strings = strtab.bytes(elf)?.to_vec();
    let mut table = symtab.bytes(elf)?.to_vec();
    if table.len() % SYM_SIZE != 0 {
        return Err("the symbol table's size is not a whole number of entries".into());
    }
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
    let mut out = elf.to_vec();
    let place = |out: &mut Vec<u8>, section: &Section, bytes: &[u8]| {
        out.resize(out.len().next_multiple_of(8), 0);
        let at = out.len() as u64;
        out.extend_from_slice(bytes);
        out[section.header_at + 24..section.header_at + 32].copy_from_slice(&at.to_le_bytes());
        out[section.header_at + 32..section.header_at + 40].copy_from_slice(&(bytes.len() as u64).to_le_bytes());
    };
    place(&mut out, strtab, &strings);
    place(&mut out, symtab, &table);
    if let Some(shndx) = shndx {
        let mut indices = shndx.bytes(elf)?.to_vec();
        indices.resize(indices.len() + 4 * symbols.len(), 0);
        place(&mut out, shndx, &indices);
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
