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
//! The edit is made on the ELF file, not in LLVM: objects may come from
//! LLVM's cache. The symbols are appended after every existing symbol, so
//! no symbol index changes (relocations, section groups and
//! `.llvm_addrsig` keep pointing where they did); the grown symbol and
//! string tables (and the extended section index table, if any) are
//! written at the end of the file and their section headers pointed
//! there.

use object::LittleEndian as LE;
use object::elf::{
    ET_REL, FileHeader64, SHN_ABS, SHN_UNDEF, SHT_SYMTAB, STB_GLOBAL, STT_NOTYPE, STT_TLS, STV_HIDDEN, SectionHeader64,
    Sym64,
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
/// symbols, so after every local one). The file is read with the `object`
/// crate; only the symbol table, its string table and its extended section
/// index table (if any) are rewritten.
pub(crate) fn add_symbols(
    elf: &[u8],
    references: &[(&str, bool)],
    markers: &[&str],
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
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_is_not_a_relocatable_elf_object() {
        assert!(
            add_symbols(b"not an object at all, but long enough to hold a header of sixty-four bytes", &[], &[])
                .is_err()
        );
        assert!(add_symbols(b"\x7fELF", &[("x", false)], &[]).is_err());
    }
}
