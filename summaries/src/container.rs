//! The file container shared by every wpd format: magic, kind, version,
//! body length and checksum, then a bincode body.
//!
//! Layout (little endian):
//! ```text
//! 0   8  magic "WPD\0" + kind tag ("SUMM" / "PLAN")
//! 8   4  format version of that kind
//! 12  4  reserved, zero
//! 16  8  body length in bytes
//! 24 16  xxh3-128 of the body
//! 40  .. bincode body (standard config, fixed-width ints off): the
//!        file's table of names, then the value ([`NameTable`])
//! ```
//! Readers read the file ([`read_file`]) and check all of the above before decoding,
//! then validate the decoded value ([`Validate`]), so a truncated, corrupted
//! or inconsistent file is an error naming the file, never a panic or a
//! silently wrong summary.

use crate::error::Error;
use crate::ids::{FileNames, Name, NameTable};
use crate::validate::Validate;
use bincode::{Decode, Encode};
use std::io::Write;
use std::path::{Path, PathBuf};

const HEADER_LEN: usize = 40;
/// Upper bound for a decoded body; protects the decoder from absurd lengths.
const DECODE_LIMIT: usize = 1 << 32;

/// Which format a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A module summary (`.wpds`).
    Summary,
    /// A thin-link plan (`.wpdp`).
    Plan,
}

impl Kind {
    fn magic(self) -> [u8; 8] {
        match self {
            Kind::Summary => *b"WPD\0SUMM",
            Kind::Plan => *b"WPD\0PLAN",
        }
    }
    /// Current format version of this kind. Bump on any change of the types.
    pub fn version(self) -> u32 {
        match self {
            Kind::Summary => crate::summary::SUMMARY_VERSION,
            Kind::Plan => crate::plan::PLAN_VERSION,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Kind::Summary => "summary",
            Kind::Plan => "plan",
        }
    }
}

/// An error reading or writing a wpd file; `Display` is one line naming the file.
#[derive(Debug, thiserror::Error)]
#[error("{}: {what}", path.display())]
pub struct FormatError {
    /// The file concerned.
    pub path: PathBuf,
    /// What was wrong with it.
    pub what: String,
}

fn err(path: &Path, what: impl Into<String>) -> FormatError {
    FormatError { path: path.to_path_buf(), what: what.into() }
}

fn config() -> impl bincode::config::Config {
    bincode::config::standard().with_limit::<DECODE_LIMIT>()
}

/// Encodes `value` as a complete file image (header + body). The error
/// names no file ([`Error::msg`]): the caller knows which.
pub fn encode<T: Encode>(kind: Kind, value: &T) -> Result<Vec<u8>, Error> {
    let parts = encode_parts(kind, value)?;
    let mut out = Vec::with_capacity(HEADER_LEN + parts.table.len() + parts.value.len());
    out.extend_from_slice(&parts.header);
    out.extend_from_slice(&parts.table);
    out.extend_from_slice(&parts.value);
    Ok(out)
}

/// A file image in the three parts it is made of: the header, then the
/// body, which is the file's names, then the value naming them by index.
/// Written part by part ([`write_file_atomic`]), a large plan is never
/// copied into one buffer.
struct Encoded {
    header: [u8; HEADER_LEN],
    table: Vec<u8>,
    value: Vec<u8>,
}

fn encode_parts<T: Encode>(kind: Kind, value: &T) -> Result<Encoded, Error> {
    let bincode_error = |e: bincode::error::EncodeError| Error::msg(e.to_string());
    let (value, names) = NameTable::writing(|| bincode::encode_to_vec(value, config()));
    let value = value.map_err(bincode_error)?;
    let names: Vec<&str> = names.iter().map(Name::as_str).collect();
    let table = bincode::encode_to_vec(&names, config()).map_err(bincode_error)?;
    // The checksum of the body, as one piece (the streaming hash gives
    // what `xxh3_128` of the concatenation gives).
    let mut sum = xxhash_rust::xxh3::Xxh3::new();
    sum.update(&table);
    sum.update(&value);
    let mut header = [0u8; HEADER_LEN];
    header[..8].copy_from_slice(&kind.magic());
    header[8..12].copy_from_slice(&kind.version().to_le_bytes());
    header[16..24].copy_from_slice(&((table.len() + value.len()) as u64).to_le_bytes());
    header[24..40].copy_from_slice(&sum.digest128().to_le_bytes());
    Ok(Encoded { header, table, value })
}

/// Decodes a complete file image and validates the value; `path` is only
/// used in error messages.
pub fn decode<T: Decode<FileNames> + Validate>(kind: Kind, bytes: &[u8], path: &Path) -> Result<T, FormatError> {
    let value: T = decode_unchecked(kind, bytes, path)?;
    value.validate().map_err(|e| err(path, format!("inconsistent {}: {}", kind.name(), e.message)))?;
    Ok(value)
}

/// Decodes a complete file image without validating the value (for tests
/// of the container itself; readers use [`decode`]).
pub fn decode_unchecked<T: Decode<FileNames>>(kind: Kind, bytes: &[u8], path: &Path) -> Result<T, FormatError> {
    if bytes.len() < 8 || bytes[..4] != kind.magic()[..4] {
        return Err(err(path, "not a wpd file (bad magic)"));
    }
    if bytes[..8] != kind.magic() {
        return Err(err(path, format!("not a wpd {} file", kind.name())));
    }
    if bytes.len() < HEADER_LEN {
        return Err(err(path, format!("truncated {} header ({} bytes)", kind.name(), bytes.len())));
    }
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    let version = word(8);
    if version != kind.version() {
        return Err(err(
            path,
            format!("{} format version {version}, this wpd reads version {}", kind.name(), kind.version()),
        ));
    }
    let len = u64::from_le_bytes(bytes[16..24].try_into().expect("8 bytes"));
    let sum = u128::from_le_bytes(bytes[24..40].try_into().expect("16 bytes"));
    let body = &bytes[HEADER_LEN..];
    if (body.len() as u64) != len {
        return Err(err(
            path,
            format!("truncated or padded {}: body is {} bytes, header says {len}", kind.name(), body.len()),
        ));
    }
    if xxhash_rust::xxh3::xxh3_128(body) != sum {
        return Err(err(path, format!("corrupt {}: checksum mismatch", kind.name())));
    }
    let corrupt = |e: bincode::error::DecodeError| {
        let what = match e {
            bincode::error::DecodeError::OtherString(what) => what,
            bincode::error::DecodeError::Utf8 { .. } => "a string is not UTF-8".to_string(),
            e => e.to_string(),
        };
        err(path, format!("corrupt {}: {what}", kind.name()))
    };
    // The file's names, each checked for UTF-8 and allocated once, then
    // the value, whose names are indices into them ([`NameTable`]).
    let (table, used): (Vec<&str>, usize) = bincode::borrow_decode_from_slice(body, config()).map_err(corrupt)?;
    let names: Vec<Name> = table.into_iter().map(Name::from).collect();
    let body = &body[used..];
    let (value, used) = bincode::decode_from_slice_with_context(body, config(), FileNames(names)).map_err(corrupt)?;
    if used != body.len() {
        return Err(err(path, format!("corrupt {}: trailing bytes in body", kind.name())));
    }
    Ok(value)
}

/// A file's bytes, memory-mapped (an empty file has none to map). What
/// linkers do with their inputs: only the pages read are read. A file that
/// cannot be mapped (a pipe, `<(...)`) is read into memory instead.
pub struct MappedFile(Bytes);

enum Bytes {
    Empty,
    Mapped(memmap2::Mmap),
    Read(Vec<u8>),
}

impl MappedFile {
    pub fn open(path: &Path) -> std::io::Result<MappedFile> {
        let file = std::fs::File::open(path)?;
        let meta = file.metadata()?;
        if meta.is_dir() {
            return Err(std::io::Error::other("is a directory"));
        }
        if !meta.is_file() {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut &file, &mut bytes)?;
            return Ok(MappedFile(Bytes::Read(bytes)));
        }
        if meta.len() == 0 {
            return Ok(MappedFile(Bytes::Empty));
        }
        // SAFETY: a read-only map whose bytes are only read. A file changed
        // or truncated underneath by another process while the map lives
        // could show new bytes or fault: the trade-off every linker makes
        // with its inputs (wpd-ld also fails the link when an input's
        // contents changed between its reads). wpd writes its own files
        // atomically (rename), so a concurrent wpd replaces the inode rather
        // than mutating these pages. Besides crates/wpd-llvm (LLVM's FFI)
        // and crates/wpd-plugin (the linker's plugin FFI), this,
        // `SharedBytes::release` and wpd-ld's two mimalloc option calls
        // (linker-shim/src/allocator.rs) are the only `unsafe` in the
        // project (memmap2 offers no safe map).
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::Mmap::map(&file) }?;
        Ok(MappedFile(Bytes::Mapped(map)))
    }
}

impl std::ops::Deref for MappedFile {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            Bytes::Empty => &[],
            Bytes::Mapped(m) => m,
            Bytes::Read(v) => v,
        }
    }
}

/// Bytes kept past their reading without a copy: a part of a
/// [`MappedFile`] that others may share (an archive member, a whole
/// input), or bytes of their own. A link keeps every bitcode module's
/// bytes until its backends are done; as a copy, each module's bytes would
/// be in memory twice (its pages of the mapped input, read while
/// resolving, and the copy).
#[derive(Clone)]
pub struct SharedBytes {
    file: std::sync::Arc<MappedFile>,
    range: std::ops::Range<usize>,
}

impl SharedBytes {
    /// All of `file`.
    pub fn whole(file: &std::sync::Arc<MappedFile>) -> SharedBytes {
        SharedBytes { file: file.clone(), range: 0..file.len() }
    }

    /// `range` of `file`; `None` when it does not lie within the file.
    pub fn part(file: &std::sync::Arc<MappedFile>, range: std::ops::Range<usize>) -> Option<SharedBytes> {
        file.get(range.clone())?;
        Some(SharedBytes { file: file.clone(), range })
    }

    /// Tells the system that these bytes will not be read for a while: the
    /// pages of a mapped file that lie wholly within them leave the
    /// process's resident memory (they are read from the file again if
    /// they are needed after all). A link calls it on a module it has
    /// rewritten, whose own bytes its backends no longer read. Bytes of
    /// their own are left alone.
    pub fn release(&self) {
        let Bytes::Mapped(map) = &self.file.0 else { return };
        let page = page_size();
        let start = self.range.start.div_ceil(page) * page;
        let end = self.range.end / page * page;
        if end > start {
            // SAFETY: `MADV_DONTNEED` on a private, read-only file mapping
            // that was never written: the dropped pages are read from the
            // file again on the next access, with the same bytes, under
            // the precondition `MappedFile::open` states (nobody changes
            // the file while it is mapped). So every slice into the map
            // stays valid and sees what it saw. A failure only leaves the
            // pages resident.
            #[allow(unsafe_code)]
            let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start) };
        }
    }
}

/// The system's page size (the unit of `madvise`).
fn page_size() -> usize {
    rustix::param::page_size()
}

impl From<Vec<u8>> for SharedBytes {
    fn from(bytes: Vec<u8>) -> SharedBytes {
        let range = 0..bytes.len();
        SharedBytes { file: std::sync::Arc::new(MappedFile(Bytes::Read(bytes))), range }
    }
}

impl std::ops::Deref for SharedBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.file[self.range.clone()]
    }
}

impl std::fmt::Debug for SharedBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedBytes({} bytes)", self.range.len())
    }
}

/// Reads a wpd file and validates what it holds.
///
/// The file is read, not mapped: its value is decoded into owned memory
/// anyway, and a thin link reads thousands of small summaries on several
/// threads, where unmapping each one again costs every thread a TLB
/// shootdown (15% of a 10,001-summary thin link when they were mapped).
pub fn read_file<T: Decode<FileNames> + Validate>(kind: Kind, path: &Path) -> Result<T, FormatError> {
    let bytes = std::fs::read(path).map_err(|e| err(path, e.to_string()))?;
    if bytes.is_empty() {
        return Err(err(path, format!("empty file, not a wpd {}", kind.name())));
    }
    decode(kind, &bytes, path)
}

/// Writes `value` to `path` atomically: a temporary file in the same folder,
/// renamed over `path` once complete. A failure leaves nothing behind.
pub fn write_file_atomic<T: Encode>(kind: Kind, value: &T, path: &Path) -> Result<(), FormatError> {
    let parts = encode_parts(kind, value).map_err(|e| err(path, e.message))?;
    stage_parts(&[&parts.header, &parts.table, &parts.value], path)?.commit()
}

/// Writes raw bytes to `path` through a temporary file and a rename.
pub fn write_bytes_atomic(bytes: &[u8], path: &Path) -> Result<(), FormatError> {
    stage_bytes(bytes, path)?.commit()
}

/// A file written in full beside its destination, not yet in place:
/// [`Staged::commit`] renames it over the destination; dropped instead,
/// it is removed. So a run that writes many files can put them all in
/// place only once every one has been made.
pub struct Staged {
    tmp: tempfile::TempPath,
    dest: PathBuf,
}

impl Staged {
    /// The file's destination.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Renames the file over its destination.
    pub fn commit(self) -> Result<(), FormatError> {
        let dest = self.dest;
        self.tmp.persist(&dest).map_err(|e| err(&dest, e.error.to_string()))?;
        Ok(())
    }
}

/// Writes `bytes` to a temporary file in `path`'s folder, to be renamed
/// over `path` by [`Staged::commit`].
pub fn stage_bytes(bytes: &[u8], path: &Path) -> Result<Staged, FormatError> {
    stage_parts(&[bytes], path)
}

/// [`stage_bytes`] of the concatenation of `parts`.
fn stage_parts(parts: &[&[u8]], path: &Path) -> Result<Staged, FormatError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".wpd-tmp-")
        .tempfile_in(dir)
        .map_err(|e| err(path, format!("cannot create a temporary file: {e}")))?;
    for bytes in parts {
        tmp.write_all(bytes).map_err(|e| err(path, e.to_string()))?;
    }
    // Temporary files are created 0600; outputs get the usual 0644.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file().set_permissions(std::fs::Permissions::from_mode(0o644)).map_err(|e| err(path, e.to_string()))?;
    }
    Ok(Staged { tmp: tmp.into_temp_path(), dest: path.to_path_buf() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        encode(Kind::Summary, &("hello".to_string(), 42u64)).unwrap()
    }

    #[test]
    fn shared_parts_read_the_same_bytes_after_release() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("members");
        // Three pages and a bit, each byte its own value mod 251.
        let bytes: Vec<u8> = (0..3 * 4096 + 100).map(|k| (k % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let file = std::sync::Arc::new(MappedFile::open(&path).unwrap());
        let part = SharedBytes::part(&file, 10..2 * 4096 + 50).unwrap();
        assert_eq!(&part[..], &bytes[10..2 * 4096 + 50]);
        part.release();
        // Read again from the file, through the same map and another part.
        assert_eq!(&part[..], &bytes[10..2 * 4096 + 50]);
        assert_eq!(&file[..], &bytes[..]);
        assert!(SharedBytes::part(&file, 0..bytes.len() + 1).is_none());
        let own = SharedBytes::from(bytes.clone());
        own.release();
        assert_eq!(&own[..], &bytes[..]);
    }

    #[test]
    fn round_trip() {
        let bytes = sample();
        let v: (String, u64) = decode_unchecked(Kind::Summary, &bytes, Path::new("x")).unwrap();
        assert_eq!(v, ("hello".to_string(), 42));
    }

    #[test]
    fn every_truncation_is_an_error() {
        let bytes = sample();
        for cut in 0..bytes.len() {
            let e = decode_unchecked::<(String, u64)>(Kind::Summary, &bytes[..cut], Path::new("t.wpds")).unwrap_err();
            assert!(e.to_string().starts_with("t.wpds: "), "{e}");
        }
    }

    #[test]
    fn every_single_bit_flip_is_an_error() {
        let bytes = sample();
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut b = bytes.clone();
                b[i] ^= 1 << bit;
                if (12..16).contains(&i) {
                    continue; // reserved word is not checked
                }
                assert!(
                    decode_unchecked::<(String, u64)>(Kind::Summary, &b, Path::new("f")).is_err(),
                    "byte {i} bit {bit}"
                );
            }
        }
    }

    #[test]
    fn version_and_kind_are_checked() {
        let mut b = sample();
        b[8] = b[8].wrapping_add(1);
        let e = decode_unchecked::<(String, u64)>(Kind::Summary, &b, Path::new("v.wpds")).unwrap_err();
        assert!(e.to_string().contains("format version"), "{e}");
        let e = decode_unchecked::<(String, u64)>(Kind::Plan, &sample(), Path::new("p")).unwrap_err();
        assert!(e.to_string().contains("not a wpd plan file"), "{e}");
    }

    #[test]
    fn a_file_shares_each_distinct_name_once() {
        use crate::Name;
        let names: Vec<Name> = ["_ZTS4Base", "_Z3usev", "_ZTS4Base", "_Z3usev"].map(Name::from).to_vec();
        let bytes = encode(Kind::Summary, &names).unwrap();
        let back: Vec<Name> = decode_unchecked(Kind::Summary, &bytes, Path::new("n")).unwrap();
        assert_eq!(back, names);
        assert_eq!(back[0].as_ptr(), back[2].as_ptr(), "one allocation per distinct name");
        assert_eq!(back[1].as_ptr(), back[3].as_ptr());
        assert_ne!(back[0].as_ptr(), back[1].as_ptr());
        // Another file's names are its own: nothing outlives a decode.
        let again: Vec<Name> = decode_unchecked(Kind::Summary, &bytes, Path::new("n")).unwrap();
        assert_ne!(again[0].as_ptr(), back[0].as_ptr());
        // The file holds each distinct name once.
        let count = |text: &[u8]| bytes.windows(text.len()).filter(|w| *w == text).count();
        assert_eq!((count(b"_ZTS4Base"), count(b"_Z3usev")), (1, 1));
        // Outside a file, a name is its text, like the `String` it replaced.
        let raw = |v: &dyn Fn() -> Vec<u8>| v();
        assert_eq!(
            raw(&|| bincode::encode_to_vec(&names[0], config()).unwrap()),
            raw(&|| bincode::encode_to_vec("_ZTS4Base", config()).unwrap())
        );
    }

    #[test]
    fn a_name_outside_the_table_is_an_error() {
        // A body whose value names index 5 of an empty table.
        let bytes = encode(Kind::Summary, &vec![5u32]).unwrap();
        let e = decode_unchecked::<Vec<crate::Name>>(Kind::Summary, &bytes, Path::new("i.wpds")).unwrap_err();
        assert_eq!(e.to_string(), "i.wpds: corrupt summary: name 5 is not in the file's table of 0 names");
    }

    #[test]
    fn a_name_that_is_not_utf8_is_an_error() {
        // A table (a list of strings) whose second entry is not UTF-8: bytes
        // encode as a string's bytes do, their length, then them; the value
        // after it is the empty list.
        let table = bincode::encode_to_vec(vec![b"ok".to_vec(), vec![0xff, 0xfe]], config()).unwrap();
        let value = bincode::encode_to_vec(Vec::<u32>::new(), config()).unwrap();
        let body = [table, value].concat();
        let mut bad = Vec::new();
        bad.extend_from_slice(&Kind::Summary.magic());
        bad.extend_from_slice(&Kind::Summary.version().to_le_bytes());
        bad.extend_from_slice(&0u32.to_le_bytes());
        bad.extend_from_slice(&(body.len() as u64).to_le_bytes());
        bad.extend_from_slice(&xxhash_rust::xxh3::xxh3_128(&body).to_le_bytes());
        bad.extend_from_slice(&body);
        let e = decode_unchecked::<Vec<crate::Name>>(Kind::Summary, &bad, Path::new("u.wpds")).unwrap_err();
        assert_eq!(e.to_string(), "u.wpds: corrupt summary: a string is not UTF-8");
    }

    /// A value that validates when its first field is not zero.
    #[derive(bincode::Encode, bincode::Decode, Debug, PartialEq)]
    struct Pair(u8, u8);
    impl Validate for Pair {
        fn validate(&self) -> Result<(), Error> {
            if self.0 == 0 { Err(Error::msg("first is zero")) } else { Ok(()) }
        }
    }

    #[test]
    fn atomic_write_leaves_only_the_result() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.wpds");
        write_file_atomic(Kind::Summary, &Pair(1, 2), &p).unwrap();
        let v: Pair = read_file(Kind::Summary, &p).unwrap();
        assert_eq!(v, Pair(1, 2));
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.wpds")]);
    }

    #[test]
    fn inconsistent_values_are_one_line_errors() {
        let bytes = encode(Kind::Plan, &Pair(0, 2)).unwrap();
        let e = decode::<Pair>(Kind::Plan, &bytes, Path::new("p.wpdp")).unwrap_err();
        assert_eq!(e.to_string(), "p.wpdp: inconsistent plan: first is zero");
        assert!(decode_unchecked::<Pair>(Kind::Plan, &bytes, Path::new("p.wpdp")).is_ok());
    }
}
