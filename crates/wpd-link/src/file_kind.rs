//! What a file is, from its first bytes: bitcode (plain or wrapped), `ar`
//! archives (thin too), ELF.

/// What a file's first bytes say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// Raw LLVM bitcode (`BC\xC0\xDE`).
    Bitcode,
    /// Bitcode behind the 20-byte wrapper header (`0x0B17C0DE`).
    WrappedBitcode,
    /// A System V / GNU `ar` archive.
    Archive,
    /// A thin archive (members live in other files).
    ThinArchive,
    /// An ELF file (object, shared library or executable).
    Elf,
    /// Empty file.
    Empty,
    /// Anything else.
    Unknown,
}

/// Classifies a file by its magic bytes.
pub fn classify(bytes: &[u8]) -> FileKind {
    if bytes.is_empty() {
        FileKind::Empty
    } else if bytes.starts_with(b"BC\xC0\xDE") {
        FileKind::Bitcode
    } else if bytes.starts_with(&0x0B17_C0DEu32.to_le_bytes()) {
        FileKind::WrappedBitcode
    } else if bytes.starts_with(b"!<arch>\n") {
        FileKind::Archive
    } else if bytes.starts_with(b"!<thin>\n") {
        FileKind::ThinArchive
    } else if bytes.starts_with(b"\x7fELF") {
        FileKind::Elf
    } else {
        FileKind::Unknown
    }
}

/// Whether the bytes are bitcode (plain or wrapped).
pub fn is_bitcode(bytes: &[u8]) -> bool {
    matches!(classify(bytes), FileKind::Bitcode | FileKind::WrappedBitcode)
}
