//! Input files: recognise bitcode (plain or with the wrapper header), `ar`
//! archives of bitcode, and refuse everything else with a clear reason.

use crate::error::{Error, Result};
use std::path::Path;
use std::sync::Arc;
use wpd_summary::container::{MappedFile, SharedBytes};

pub use wpd_link::file_kind::{FileKind, classify, is_bitcode};

/// One bitcode module source: a file or an archive member.
#[derive(Debug, Clone)]
pub struct BitcodeInput {
    /// `path` or `path(member)`.
    pub name: String,
    pub path: String,
    pub member: Option<String>,
    /// The module's bytes: shared with the link's mapped input where the
    /// front end has one, so that they are not in memory twice.
    pub bytes: SharedBytes,
    /// Where the caller can put the native code of this input when it is a
    /// split LTO unit the plan leaves alone ([`crate::backends::split_apart`]).
    pub split: SplitPlacement,
}

/// How the native code of a split LTO unit may stand in the link, as the
/// caller can place it. Whatever the answer, a unit the plan rewrites, or
/// one that cannot be taken apart, becomes one object where it stood.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitPlacement {
    /// One object only: the unit's two parts are merged.
    Merged,
    /// One object where it stood, from two modules: its thin part as
    /// clang wrote it and its vtables, two modules for LLVM's thin link
    /// that the thin part's backend compiles as one
    /// ([`crate::backends::thinlto::compile`], which needs in-process backends).
    Joined,
    /// Its thin part as one object where it stood, its vtables in the
    /// link's one regular LTO object (LLVM's regular LTO links the regular
    /// parts of all such units, as lld's does), which the caller places
    /// right before the first such input ([`crate::backends::thinlto::Natives`]). For
    /// inputs that the linker loads at their place whatever comes before
    /// them: wpd-ld gives it to plain bitcode files standing together on the
    /// command line.
    RegularLto,
}

/// A file's content hash as summaries, plans and distributed job lists
/// record it: xxh3-128, 32 lower-case hex digits ([`hash_text`]).
pub fn content_hash(bytes: &[u8]) -> String {
    hash_text(xxhash_rust::xxh3::xxh3_128(bytes))
}

/// An xxh3-128 as [`content_hash`] writes it.
pub fn hash_text(hash: u128) -> String {
    format!("{hash:032x}")
}

impl BitcodeInput {
    /// The bytes' content hash ([`content_hash`]): the module's identity in
    /// summaries, plans and distributed job lists.
    pub fn content_hash(&self) -> String {
        content_hash(&self.bytes)
    }

    /// A summary of these bytes made under another name (a cached one, or
    /// one made ahead), named as this input: a summary depends on the
    /// module's bytes only, except for the input's identity it records.
    pub fn rename(&self, mut summary: wpd_summary::ModuleSummary) -> wpd_summary::ModuleSummary {
        summary.module.name = self.name.clone();
        summary.module.path = self.path.clone();
        summary.module.member = self.member.clone();
        summary
    }
}

/// Reads `path` and returns its bitcode modules: the file itself, or every
/// bitcode member of an archive (non-bitcode members are left to the
/// linker). Anything else is an error naming the file.
pub fn read_bitcode_inputs(path: &Path) -> Result<Vec<BitcodeInput>> {
    let shown = path.display().to_string();
    let file = MappedFile::open(path).map_err(|e| Error::at(&shown, e.to_string()))?;
    bitcode_inputs(&shown, &Arc::new(file))
}

/// [`read_bitcode_inputs`] for a file already opened, `shown`; the inputs
/// share its bytes.
pub fn bitcode_inputs(shown: &str, file: &Arc<MappedFile>) -> Result<Vec<BitcodeInput>> {
    let shown = shown.to_string();
    match classify(file) {
        FileKind::Bitcode | FileKind::WrappedBitcode => Ok(vec![BitcodeInput {
            name: shown.clone(),
            path: shown,
            member: None,
            bytes: SharedBytes::whole(file),
            split: SplitPlacement::Merged,
        }]),
        FileKind::Archive => archive_members(&shown, file),
        FileKind::ThinArchive => Err(Error::at(shown, "thin archives are not supported; use a regular archive")),
        FileKind::Elf => Err(Error::at(shown, "not LLVM bitcode (a native ELF file; compile with -flto=thin)")),
        FileKind::Empty => Err(Error::at(shown, "empty file, not LLVM bitcode")),
        FileKind::Unknown => Err(Error::at(shown, "not LLVM bitcode (unrecognised file format)")),
    }
}

/// The bitcode members of an archive (read from `shown`), in order; native
/// members are left to the linker.
pub fn archive_members(shown: &str, file: &Arc<MappedFile>) -> Result<Vec<BitcodeInput>> {
    let bytes: &[u8] = file;
    let archive = object::read::archive::ArchiveFile::parse(bytes)
        .map_err(|e| Error::at(shown, format!("malformed archive: {e}")))?;
    let mut out: Vec<BitcodeInput> = Vec::new();
    let mut seen = std::collections::HashMap::<String, usize>::new();
    for member in archive.members() {
        let member = member.map_err(|e| Error::at(shown, format!("malformed archive: {e}")))?;
        let raw_name = String::from_utf8_lossy(member.name()).into_owned();
        let data = member
            .data(bytes)
            .map_err(|e| Error::at(format!("{shown}({raw_name})"), format!("malformed archive member: {e}")))?;
        if !is_bitcode(data) {
            continue;
        }
        let (start, size) = member.file_range();
        let bytes = usize::try_from(start)
            .ok()
            .zip(usize::try_from(size).ok())
            .and_then(|(start, size)| SharedBytes::part(file, start..start.checked_add(size)?))
            .ok_or_else(|| Error::at(format!("{shown}({raw_name})"), "malformed archive member: beyond the archive"))?;
        // ar allows repeated member names; keep summary names unique.
        let count = seen.entry(raw_name.clone()).or_insert(0);
        *count += 1;
        let member_name = if *count == 1 { raw_name } else { format!("{raw_name}@{count}") };
        out.push(BitcodeInput {
            name: format!("{shown}({member_name})"),
            path: shown.to_string(),
            member: Some(member_name),
            bytes,
            split: SplitPlacement::Merged,
        });
    }
    if out.is_empty() {
        return Err(Error::at(shown, "archive holds no LLVM bitcode member"));
    }
    Ok(out)
}
