//! Section sizes of a linked output, for the report's `size`.

use super::view::Sizes;
use crate::error::{Error, Result};
use object::{Object, ObjectSection};
use std::path::Path;

/// The sections the report records (those the output has).
pub const SECTIONS: &[&str] = &[".text", ".rodata", ".data.rel.ro", ".eh_frame"];

/// The file size and the sizes of [`SECTIONS`] of the ELF file at `path`
/// (file size only if it is not ELF).
pub fn of_file(path: &Path) -> Result<Sizes> {
    let bytes = wpd_summary::container::MappedFile::open(path)
        .map_err(|e| Error::at(path.display().to_string(), e.to_string()))?;
    let mut sizes = Sizes { file: Some(bytes.len() as u64), ..Sizes::default() };
    if let Ok(file) = object::File::parse(&*bytes) {
        for s in file.sections() {
            if let Ok(name) = s.name()
                && SECTIONS.contains(&name)
            {
                *sizes.sections.entry(name.to_string()).or_default() += s.size();
            }
        }
    }
    Ok(sizes)
}
