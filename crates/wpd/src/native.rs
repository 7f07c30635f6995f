//! Native inputs of a link (ELF objects, archives, shared libraries): what
//! they reference, because anything they name is reachable from outside the
//! bitcode and must be treated as a liveness root.

use crate::error::{Error, Result};
use crate::input::{FileKind, classify};
use object::{Object, ObjectSymbol};
use std::collections::BTreeSet;

/// Adds to `out` every global symbol `bytes` (an ELF object, shared library
/// or archive of objects) leaves undefined. `name` is for errors.
pub fn undefined_symbols(bytes: &[u8], name: &str, out: &mut BTreeSet<String>) -> Result<()> {
    match classify(bytes) {
        FileKind::Archive => {
            let archive = object::read::archive::ArchiveFile::parse(bytes)
                .map_err(|e| Error::at(name, format!("malformed archive: {e}")))?;
            for member in archive.members() {
                let member = member.map_err(|e| Error::at(name, format!("malformed archive: {e}")))?;
                let data = member.data(bytes).map_err(|e| Error::at(name, format!("malformed archive: {e}")))?;
                if classify(data) == FileKind::Elf {
                    let member_name = format!("{name}({})", String::from_utf8_lossy(member.name()));
                    elf_undefined(data, &member_name, out)?;
                }
            }
            Ok(())
        }
        FileKind::Elf => elf_undefined(bytes, name, out),
        _ => Err(Error::at(name, "not a native ELF file or archive")),
    }
}

fn elf_undefined(bytes: &[u8], name: &str, out: &mut BTreeSet<String>) -> Result<()> {
    let file = object::File::parse(bytes).map_err(|e| Error::at(name, format!("malformed ELF file: {e}")))?;
    let dynamic = file.kind() == object::ObjectKind::Dynamic;
    let symbols: Vec<_> = if dynamic { file.dynamic_symbols().collect() } else { file.symbols().collect() };
    for sym in symbols {
        if sym.is_undefined()
            && sym.is_global()
            && let Ok(n) = sym.name()
            && !n.is_empty()
        {
            // Versioned dynamic names ("f@GLIBC_2.2.5") refer to the bare name.
            out.insert(n.split('@').next().unwrap_or(n).to_string());
        }
    }
    Ok(())
}

/// ELF file type: shared library or not.
pub fn is_shared_library(bytes: &[u8]) -> bool {
    // e_type at offset 16, little endian on x86-64: 3 = ET_DYN.
    classify(bytes) == FileKind::Elf && bytes.len() > 18 && u16::from_le_bytes([bytes[16], bytes[17]]) == 3
}
