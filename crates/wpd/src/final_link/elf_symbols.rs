//! Appends symbols to an x86-64 ELF relocatable object's symbol table, for
//! [`crate::final_link::extraction`], which gives a native object the
//! references its bitcode made and LLVM's code no longer does:
//! - a **reference**: global, of default visibility (which, unlike a
//!   hidden one, changes nothing about the symbol it binds to), undefined,
//!   of type `STT_TLS` for a thread-local symbol (GNU ld and gold reject a
//!   typeless reference to a TLS definition) and no type otherwise;
//! - a **marker**: global, hidden, absolute (value 0, no section), so
//!   that a reference to it extracts the archive member that defines it
//!   and binds to nothing else.
//!
//! References that must keep an `--as-needed` library needed under
//! `--gc-sections` also get a relocation (`R_X86_64_NONE`, which patches
//! nothing) from a new one-byte section the linker must keep
//! (`.wpd.needed`, `SHF_ALLOC | SHF_GNU_RETAIN`): lld counts a shared
//! library needed only for references it meets in live sections' relocations
//! once garbage collection runs.
//!
//! The edit is made on the ELF file, not in LLVM: objects may come from
//! LLVM's cache. The symbols are appended after every existing symbol, so
//! no symbol index changes (relocations, section groups and
//! `.llvm_addrsig` keep pointing where they did); the grown symbol and
//! string tables (and the extended section index table, if any) are
//! written at the end of the file and their section headers pointed
//! there.

use object::LittleEndian as LE;
use object::elf::{
    ET_REL, FileHeader64, SHF_ALLOC, SHF_EXCLUDE, SHF_GNU_RETAIN, SHF_INFO_LINK, SHN_ABS, SHN_LORESERVE, SHN_UNDEF,
    SHT_PROGBITS, SHT_RELA, SHT_SYMTAB, STB_GLOBAL, STT_NOTYPE, STT_TLS, STV_HIDDEN, SectionHeader64, Sym64,
};
use object::read::elf::{FileHeader, SectionHeader, SectionTable, SymbolTable};

/// An x86-64 ELF relocatable object with a symbol table, as read by the
/// `object` crate: what [`add_symbols`] and [`crate::final_link::extraction`] edit.
pub(crate) struct Object<'d> {
    pub header: &'d FileHeader64<LE>,
    pub endian: LE,
    pub sections: SectionTable<'d, FileHeader64<LE>>,
    pub symtab: SymbolTable<'d, FileHeader64<LE>>,
}

impl<'d> Object<'d> {
    pub(crate) fn parse(elf: &'d [u8]) -> std::result::Result<Self, String> {
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

/// `elf` with a strong undefined reference to each of `references` (name,
/// thread-local) and a definition of each of `markers` appended to its symbol table (global
/// symbols, so after every local one), and, when `retained` (indices into
/// `references`) is not empty, a relocation to each of those references
/// from a new retained section (module docs). The file is read with the
/// `object` crate; only the symbol table, its string table and its
/// extended section index table (if any) are rewritten, and for the new
/// section the section header table and the section names' table.
pub(crate) fn add_symbols(
    elf: &[u8],
    references: &[(&str, bool)],
    markers: &[&str],
    retained: &[usize],
) -> std::result::Result<Vec<u8>, String> {
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
    let first_added = table.len() / size_of::<Sym64<LE>>();
    let appended = references.iter().map(|&(n, tls)| (n, tls, false)).chain(markers.iter().map(|&n| (n, false, true)));
    for (name, tls, marker) in appended {
        let offset = u32::try_from(strings.len()).map_err(|e| e.to_string())?;
        strings.extend_from_slice(name.as_bytes());
        strings.push(0);
        table.extend_from_slice(&offset.to_le_bytes());
        // st_info: global, TLS or no type.
        table.push((STB_GLOBAL << 4) | if tls { STT_TLS } else { STT_NOTYPE });
        // st_other: a marker is hidden (never exported from a shared
        // library), a reference of default visibility.
        table.push(if marker { STV_HIDDEN } else { 0 });
        // st_shndx: a marker is absolute, a reference undefined.
        table.extend_from_slice(&(if marker { SHN_ABS } else { SHN_UNDEF }).to_le_bytes());
        table.extend_from_slice(&0u64.to_le_bytes()); // st_value
        table.extend_from_slice(&0u64.to_le_bytes()); // st_size
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
        indices.resize(indices.len() + 4 * (references.len() + markers.len()), 0);
        place(&mut out, at(symtab.shndx_section()), &indices);
    }
    if !retained.is_empty() {
        let symbols: Vec<usize> = retained.iter().map(|&i| first_added + i).collect();
        add_retained_section(&mut out, header, endian, &sections, symtab.section().0, &symbols)?;
    }
    Ok(out)
}

/// Appends to `out` (the object `header` and `sections` describe, its
/// symbol table section `symtab`) a one-byte section `.wpd.needed`
/// (`SHF_ALLOC | SHF_GNU_RETAIN`) and `.rela.wpd.needed`, one
/// `R_X86_64_NONE` relocation to each of `symbols` (symbol indices).
fn add_retained_section(
    out: &mut Vec<u8>,
    header: &FileHeader64<LE>,
    endian: LE,
    sections: &SectionTable<'_, FileHeader64<LE>>,
    symtab: usize,
    symbols: &[usize],
) -> std::result::Result<(), String> {
    if header_names_index(header, endian, sections) == 0 {
        // No section names to add to: the symbols alone still ask for the
        // library, which GNU ld and gold, and lld without `--gc-sections`,
        // count.
        return Ok(());
    }
    let link = u32::try_from(symtab).map_err(|e| e.to_string())?;
    let mut relocations = Vec::with_capacity(symbols.len() * 24);
    for &symbol in symbols {
        relocations.extend_from_slice(&0u64.to_le_bytes()); // r_offset
        relocations.extend_from_slice(&((symbol as u64) << 32).to_le_bytes()); // r_info: symbol, R_X86_64_NONE
        relocations.extend_from_slice(&0i64.to_le_bytes()); // r_addend
    }
    // The section's one byte: gold refuses a relocation at the end of an
    // empty section.
    let needed = NewSection {
        name: ".wpd.needed",
        kind: SHT_PROGBITS,
        flags: u64::from(SHF_ALLOC) | u64::from(SHF_GNU_RETAIN),
        data: &[0],
        link: 0,
        info: 0,
        align: 1,
        entsize: 0,
    };
    append_sections(out, header, endian, sections, |first| {
        let rela = NewSection {
            name: ".rela.wpd.needed",
            kind: SHT_RELA,
            flags: u64::from(SHF_INFO_LINK),
            data: &relocations,
            link,
            info: first,
            align: 8,
            entsize: 24,
        };
        vec![needed, rela]
    })
}

/// `elf` with one more section, `name`: `data`, excluded from the output
/// of every link but a relocatable one (`SHF_EXCLUDE`, which lld, GNU ld,
/// gold and mold honour), so that it can say something about the object
/// to whoever reads it before the link.
pub(crate) fn add_excluded_section(elf: &[u8], name: &str, data: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let Object { header, endian, sections, .. } = Object::parse(elf)?;
    let mut out = elf.to_vec();
    let flags = u64::from(SHF_EXCLUDE);
    let section = NewSection { name, kind: SHT_PROGBITS, flags, data, link: 0, info: 0, align: 1, entsize: 0 };
    append_sections(&mut out, header, endian, &sections, |_| vec![section])?;
    Ok(out)
}

/// The contents of the section `name` of the object `object` (`elf`), if
/// it has one.
pub(crate) fn section_data<'d>(object: &Object<'d>, elf: &'d [u8], name: &str) -> Option<&'d [u8]> {
    let (_, section) = object.sections.section_by_name(object.endian, name.as_bytes())?;
    section.data(object.endian, elf).ok()
}

/// A section [`append_sections`] adds: its header's fields and contents.
struct NewSection<'a> {
    name: &'a str,
    kind: u32,
    flags: u64,
    data: &'a [u8],
    link: u32,
    info: u32,
    align: u64,
    entsize: u64,
}

/// Appends to `out` (the object `header` and `sections` describe, as read
/// before `out` was edited) the sections `make` returns, given the index
/// the first of them gets. Their contents go at the end of the file, the
/// section names' table is rewritten there with their names, and the
/// section header table moves there with their headers (the headers
/// already in `out` are copied as `out` has them: an earlier edit may have
/// moved a table). A count past `SHN_LORESERVE` is kept in section 0, as
/// ELF's extended numbering does.
fn append_sections<'a>(
    out: &mut Vec<u8>,
    header: &FileHeader64<LE>,
    endian: LE,
    sections: &SectionTable<'_, FileHeader64<LE>>,
    make: impl FnOnce(u32) -> Vec<NewSection<'a>>,
) -> std::result::Result<(), String> {
    let count = sections.len();
    let names_index = header_names_index(header, endian, sections);
    if count == 0 || names_index == 0 {
        return Err("no section header table or no section names".into());
    }
    let first = u32::try_from(count).map_err(|e| e.to_string())?;
    let new = make(first);
    let shoff = usize::try_from(header.e_shoff(endian)).map_err(|e| e.to_string())?;
    let header_size = size_of::<SectionHeader64<LE>>();
    let header_at = |index: usize| shoff + index * header_size;
    let word = |out: &[u8], at: usize| u64::from_le_bytes(out[at..at + 8].try_into().expect("8 bytes"));
    // The section names' table as `out` has it (the symbol string table
    // may be it, already moved to the end).
    let names_header = header_at(names_index);
    let (names_offset, names_size) = (word(out, names_header + 24) as usize, word(out, names_header + 32) as usize);
    let names_end = names_offset.checked_add(names_size).ok_or("section names out of the file")?;
    let mut names = out.get(names_offset..names_end).ok_or("section names out of the file")?.to_vec();
    let mut name_offsets = Vec::with_capacity(new.len());
    for s in &new {
        name_offsets.push(u32::try_from(names.len()).map_err(|e| e.to_string())?);
        names.extend_from_slice(s.name.as_bytes());
        names.push(0);
    }
    let align = |out: &mut Vec<u8>, to: u64| out.resize(out.len().next_multiple_of(to.max(1) as usize), 0);
    align(out, 8);
    let new_names_offset = out.len() as u64;
    out.extend_from_slice(&names);
    let mut offsets = Vec::with_capacity(new.len());
    for s in &new {
        align(out, s.align);
        offsets.push(out.len() as u64);
        out.extend_from_slice(s.data);
    }
    // The section header table, moved to the end with the new headers.
    let mut headers = out[shoff..shoff + count * header_size].to_vec();
    let names_header = names_index * header_size;
    headers[names_header + 24..names_header + 32].copy_from_slice(&new_names_offset.to_le_bytes());
    headers[names_header + 32..names_header + 40].copy_from_slice(&(names.len() as u64).to_le_bytes());
    for ((s, name), offset) in new.iter().zip(name_offsets).zip(offsets) {
        headers.extend_from_slice(&name.to_le_bytes());
        headers.extend_from_slice(&s.kind.to_le_bytes());
        headers.extend_from_slice(&s.flags.to_le_bytes());
        headers.extend_from_slice(&0u64.to_le_bytes()); // sh_addr
        headers.extend_from_slice(&offset.to_le_bytes());
        headers.extend_from_slice(&(s.data.len() as u64).to_le_bytes());
        headers.extend_from_slice(&s.link.to_le_bytes());
        headers.extend_from_slice(&s.info.to_le_bytes());
        headers.extend_from_slice(&s.align.to_le_bytes());
        headers.extend_from_slice(&s.entsize.to_le_bytes());
    }
    let total = count + new.len();
    let extended = total >= usize::from(SHN_LORESERVE) || header.e_shnum(endian) == 0;
    if extended {
        // Extended numbering: e_shnum 0, the count in section 0's sh_size.
        headers[32..40].copy_from_slice(&(total as u64).to_le_bytes());
    }
    let shnum = if extended { 0 } else { total as u16 };
    align(out, 8);
    let new_shoff = out.len() as u64;
    out.extend_from_slice(&headers);
    // e_shoff (offset 40) and e_shnum (offset 60) of the ELF header.
    out[40..48].copy_from_slice(&new_shoff.to_le_bytes());
    out[60..62].copy_from_slice(&shnum.to_le_bytes());
    Ok(())
}

/// The index of the section names' table, extended numbering included.
fn header_names_index(header: &FileHeader64<LE>, endian: LE, sections: &SectionTable<'_, FileHeader64<LE>>) -> usize {
    let index = header.e_shstrndx(endian);
    if index == object::elf::SHN_XINDEX {
        sections.section(object::SectionIndex(0)).map_or(0, |s| s.sh_link(endian) as usize)
    } else {
        usize::from(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_is_not_a_relocatable_elf_object() {
        assert!(
            add_symbols(b"not an object at all, but long enough to hold a header of sixty-four bytes", &[], &[], &[])
                .is_err()
        );
        assert!(add_symbols(b"\x7fELF", &[("x", false)], &[], &[]).is_err());
    }
}
