//! Symbol tables of native ELF inputs, read as lld reads them: the global
//! symbols of a relocatable object (`SHT_SYMTAB`, with the comdat group of
//! each definition's section), or the dynamic symbols of a shared library
//! (`SHT_DYNSYM`, without the hidden non-default versions) and its soname.

use super::symbols::{Comdat, Definition, Symbol, SymbolTable, Visibility};
use object::elf;
use object::read::elf::{ElfFile32, ElfFile64, FileHeader, SectionHeader, SectionTable, Sym};
use object::{Endianness, SectionIndex, SymbolIndex};
use std::collections::HashMap;
use std::ops::Range;

/// What an ELF file is to the linker.
#[derive(Debug)]
pub enum ElfInput {
    /// A relocatable object, and where the bitcode of a fat LTO object
    /// (`-ffat-lto-objects`: its `.llvm.lto` section) lies in it.
    Relocatable {
        symbols: SymbolTable,
        fat_lto: Option<std::ops::Range<usize>>,
    },
    Shared {
        soname: Option<String>,
        symbols: SymbolTable,
    },
    /// An executable or core file: not something ld links against.
    Other(&'static str),
}

/// Reads an ELF file's symbol table. Errors are static strings naming what
/// is malformed.
pub(crate) fn read(data: &[u8]) -> Result<ElfInput, String> {
    let is64 = data.get(4) == Some(&elf::ELFCLASS64); // e_ident[EI_CLASS]
    if is64 {
        let file = ElfFile64::<Endianness>::parse(data).map_err(|e| format!("malformed ELF file: {e}"))?;
        read_file(file.elf_header(), file.endian(), data)
    } else {
        let file = ElfFile32::<Endianness>::parse(data).map_err(|e| format!("malformed ELF file: {e}"))?;
        read_file(file.elf_header(), file.endian(), data)
    }
}

/// Where the bitcode of a fat LTO object lies in it (its `.llvm.lto`
/// section), without reading its symbols; `None` for anything else.
pub fn fat_lto_bitcode(data: &[u8]) -> Option<Range<usize>> {
    fn of<Elf: FileHeader<Endian = Endianness>>(header: &Elf, endian: Endianness, data: &[u8]) -> Option<Range<usize>> {
        if header.e_type(endian) != elf::ET_REL {
            return None;
        }
        llvm_lto(&header.sections(endian, data).ok()?, endian, data)
    }
    if data.get(4) == Some(&elf::ELFCLASS64) {
        let file = ElfFile64::<Endianness>::parse(data).ok()?;
        of(file.elf_header(), file.endian(), data)
    } else {
        let file = ElfFile32::<Endianness>::parse(data).ok()?;
        of(file.elf_header(), file.endian(), data)
    }
}

/// The byte range of a relocatable object's `.llvm.lto` section, when it
/// holds bitcode.
fn llvm_lto<Elf: FileHeader<Endian = Endianness>>(
    sections: &SectionTable<'_, Elf>,
    endian: Endianness,
    data: &[u8],
) -> Option<Range<usize>> {
    let (start, size) = sections.section_by_name(endian, b".llvm.lto")?.1.file_range(endian)?;
    let start = usize::try_from(start).ok()?;
    let range = start..start.checked_add(usize::try_from(size).ok()?)?;
    data.get(range.clone()).is_some_and(crate::file_kind::is_bitcode).then_some(range)
}

fn read_file<Elf: FileHeader<Endian = Endianness>>(
    header: &Elf,
    endian: Endianness,
    data: &[u8],
) -> Result<ElfInput, String> {
    let bad = |e: object::Error| format!("malformed ELF file: {e}");
    let sections = header.sections(endian, data).map_err(bad)?;
    match header.e_type(endian) {
        elf::ET_REL => {
            // Comdat groups: section index → group, first by signature.
            let symtab = sections.symbols(endian, data, elf::SHT_SYMTAB).map_err(bad)?;
            let mut comdats: Vec<Comdat> = Vec::new();
            let mut section_group: HashMap<usize, u32> = HashMap::new();
            for (index, section) in sections.enumerate() {
                let Some((flags, members)) = section.group(endian, data).map_err(bad)? else { continue };
                if flags & elf::GRP_COMDAT == 0 {
                    continue;
                }
                let signature = symtab
                    .symbol(SymbolIndex(section.sh_info(endian) as usize))
                    .and_then(|s| symtab.symbol_name(endian, s))
                    .map_err(|e| format!("malformed ELF group section {}: {e}", index.0))?;
                let id = comdats.len() as u32;
                comdats.push(Comdat { name: wpd_summary::name::from_bytes(signature).into_owned(), deduplicate: true });
                for m in members {
                    section_group.insert(m.get(endian) as usize, id);
                }
            }
            let mut symbols = Vec::with_capacity(symtab.len());
            for (index, sym) in symtab.enumerate() {
                let bind = sym.st_bind();
                if !matches!(bind, elf::STB_GLOBAL | elf::STB_WEAK | elf::STB_GNU_UNIQUE) {
                    continue;
                }
                let name = symtab.symbol_name(endian, sym).map_err(bad)?;
                if name.is_empty() {
                    continue;
                }
                let shndx = sym.st_shndx(endian);
                let (definition, comdat) = if shndx == elf::SHN_UNDEF {
                    (Definition::Undefined, None)
                } else if shndx == elf::SHN_COMMON {
                    (Definition::Common { size: sym.st_size(endian).into() }, None)
                } else {
                    let section = symtab.symbol_section(endian, sym, index).map_err(bad)?;
                    (Definition::Defined, section.and_then(|SectionIndex(s)| section_group.get(&s).copied()))
                };
                symbols.push(Symbol {
                    name: wpd_summary::name::from_bytes(name).into_owned(),
                    definition,
                    // GNU_UNIQUE resolves like weak: the first copy wins.
                    weak: bind != elf::STB_GLOBAL,
                    visibility: visibility(sym.st_visibility()),
                    function: sym.st_type() == elf::STT_FUNC,
                    tls: sym.st_type() == elf::STT_TLS,
                    may_omit: false,
                    section: None,
                    comdat,
                });
            }
            let fat_lto = llvm_lto(&sections, endian, data);
            Ok(ElfInput::Relocatable { symbols: SymbolTable { symbols, comdats }, fat_lto })
        }
        elf::ET_DYN => {
            let dynsym = sections.symbols(endian, data, elf::SHT_DYNSYM).map_err(bad)?;
            let versions = sections.versions(endian, data).map_err(bad)?;
            let mut symbols = Vec::with_capacity(dynsym.len());
            for (index, sym) in dynsym.enumerate() {
                if index.0 == 0 || sym.st_bind() == elf::STB_LOCAL {
                    continue;
                }
                let name = dynsym.symbol_name(endian, sym).map_err(bad)?;
                if name.is_empty() {
                    continue;
                }
                let undefined = sym.st_shndx(endian) == elf::SHN_UNDEF;
                // A definition of a hidden (non-default) version answers only
                // references that ask for that version.
                if !undefined && versions.as_ref().is_some_and(|v| v.version_index(endian, index).is_hidden()) {
                    continue;
                }
                symbols.push(Symbol {
                    name: wpd_summary::name::from_bytes(name).into_owned(),
                    definition: if undefined { Definition::Undefined } else { Definition::Defined },
                    weak: sym.st_bind() == elf::STB_WEAK,
                    visibility: visibility(sym.st_visibility()),
                    function: sym.st_type() == elf::STT_FUNC,
                    tls: sym.st_type() == elf::STT_TLS,
                    may_omit: false,
                    section: None,
                    comdat: None,
                });
            }
            Ok(ElfInput::Shared { soname: soname(&sections, endian, data)?, symbols: SymbolTable::new(symbols) })
        }
        elf::ET_EXEC => Ok(ElfInput::Other("an ELF executable")),
        _ => Ok(ElfInput::Other("an ELF file that is neither an object nor a shared library")),
    }
}

fn soname<Elf: FileHeader<Endian = Endianness>>(
    sections: &object::read::elf::SectionTable<'_, Elf>,
    endian: Endianness,
    data: &[u8],
) -> Result<Option<String>, String> {
    let names = dynamic_strings(sections, endian, data, elf::DT_SONAME)?;
    Ok(names.first().map(|name| String::from_utf8_lossy(name).into_owned()))
}

/// The strings of the dynamic section's `tag` entries (`DT_SONAME`,
/// `DT_NEEDED`), in order.
fn dynamic_strings<'d, Elf: FileHeader<Endian = Endianness>>(
    sections: &object::read::elf::SectionTable<'d, Elf>,
    endian: Endianness,
    data: &'d [u8],
    tag: u32,
) -> Result<Vec<&'d [u8]>, String> {
    use object::read::elf::Dyn;
    let bad = |e: object::Error| format!("malformed ELF dynamic section: {e}");
    let Some((entries, link)) = sections.dynamic(endian, data).map_err(bad)? else { return Ok(Vec::new()) };
    let strings = sections.strings(endian, data, link).map_err(bad)?;
    let mut out = Vec::new();
    for d in entries {
        if d.tag32(endian) == Some(tag) {
            out.push(d.string(endian, strings).map_err(bad)?);
        }
    }
    Ok(out)
}

/// The libraries a shared library needs (its `DT_NEEDED` names); empty for
/// anything else, or a dynamic section that cannot be read.
pub(crate) fn needed(data: &[u8]) -> Vec<&[u8]> {
    fn of<'d, Elf: FileHeader<Endian = Endianness>>(header: &Elf, endian: Endianness, data: &'d [u8]) -> Vec<&'d [u8]> {
        let Ok(sections) = header.sections(endian, data) else { return Vec::new() };
        dynamic_strings(&sections, endian, data, elf::DT_NEEDED).unwrap_or_default()
    }
    if data.get(4) == Some(&elf::ELFCLASS64) {
        ElfFile64::<Endianness>::parse(data).map(|f| of(f.elf_header(), f.endian(), data)).unwrap_or_default()
    } else {
        ElfFile32::<Endianness>::parse(data).map(|f| of(f.elf_header(), f.endian(), data)).unwrap_or_default()
    }
}

fn visibility(v: u8) -> Visibility {
    match v {
        elf::STV_PROTECTED => Visibility::Protected,
        elf::STV_HIDDEN => Visibility::Hidden,
        elf::STV_INTERNAL => Visibility::Internal,
        _ => Visibility::Default,
    }
}
