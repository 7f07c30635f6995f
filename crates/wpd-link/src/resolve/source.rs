//! Where resolution gets its inputs: a [`Source`] answers whether a path is
//! a file (library search) and what a file holds, already reduced to symbol
//! tables. [`DiskSource`] reads real files and keeps their bytes for the
//! caller; tests use a map of synthetic inputs.

use super::Error;
use super::elf::{self, ElfInput};
use super::symbols::SymbolTable;
use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use wpd_summary::container::{MappedFile, SharedBytes};

/// What a file holds, as far as resolution cares.
#[derive(Clone, Debug)]
pub enum Content {
    /// A native relocatable object.
    Object(Rc<SymbolTable>),
    /// An LLVM bitcode object (every module of the file together).
    Bitcode(Rc<SymbolTable>),
    /// A shared library: its dynamic symbols.
    Shared { soname: Option<String>, symbols: Rc<SymbolTable> },
    /// An `ar` archive: its members in order.
    Archive { thin: bool, members: Vec<MemberContent> },
    /// Text that may be a linker script.
    Script(String),
    /// Something wpd cannot read symbols from (raw `--format=binary` data,
    /// an executable): what it references is unknown.
    Opaque(String),
}

/// One archive member.
#[derive(Clone, Debug)]
pub struct MemberContent {
    /// The name as the archive stores it (a path for thin archives and GNU
    /// `ar P`).
    pub name: String,
    pub kind: MemberKind,
}

#[derive(Clone, Debug)]
pub enum MemberKind {
    Object(Rc<SymbolTable>),
    Bitcode(Rc<SymbolTable>),
    /// Neither (a symbol index, a text file): linkers skip it.
    Other,
}

/// The files of a link.
pub trait Source {
    /// Whether `path` names a regular file (library search tries paths).
    fn is_file(&self, path: &Path) -> bool;
    /// Reads `path`. `binary` is the `--format=binary` state.
    fn load(&mut self, path: &Path, binary: bool) -> Result<Content, Error>;
    /// The demangled form of a C++ symbol name, for `extern "C++"`
    /// patterns of version scripts and dynamic lists.
    fn demangle(&self, _name: &str) -> Option<String> {
        None
    }
}

/// Reads bitcode symbol tables: the caller's (LLVM's irsymtab in wpd-ld).
pub type BitcodeReader<'a> = dyn FnMut(&str, &[u8]) -> Result<SymbolTable, Error> + 'a;

/// Demangles symbol names: the caller's (LLVM's demangler in wpd-ld).
pub type Demangler<'a> = dyn Fn(&str) -> Option<String> + 'a;

/// Where an archive member's bytes are.
#[derive(Clone, Debug)]
enum MemberBytes {
    Inline(Range<usize>),
    /// A thin archive's member: a file of its own.
    File(PathBuf),
}

/// How a fat LTO object (`clang -ffat-lto-objects`: native code, and
/// bitcode in an `.llvm.lto` section) is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FatLto {
    /// As the native object it also is (lld's default); each one read is
    /// remembered ([`DiskSource::fat_objects`]).
    #[default]
    Native,
    /// As its bitcode (`--fat-lto-objects`): the file, or the archive
    /// member, is a bitcode input whose bytes are the section's.
    Bitcode,
}

/// Real files, read once; their bytes stay available to the caller
/// ([`DiskSource::bytes`], [`DiskSource::member_bytes`]) for summarizing and
/// rebuilding archives.
pub struct DiskSource<'a> {
    bitcode: Box<BitcodeReader<'a>>,
    demangler: Option<Box<Demangler<'a>>>,
    files: HashMap<PathBuf, Arc<MappedFile>>,
    members: HashMap<PathBuf, Vec<MemberBytes>>,
    fat_lto: FatLto,
    /// Files read as the bitcode they embed: where it lies in them.
    embedded: HashMap<PathBuf, Range<usize>>,
    /// Fat LTO objects read as native objects, as resolution names units
    /// (`path`, or `archive(member)`).
    fat_objects: std::collections::BTreeSet<String>,
    /// What each file held when first read: a link line names the same
    /// library several times (`-lgcc_s -lgcc` twice, and again inside
    /// `libgcc_s.so`'s script), and it is parsed once.
    parsed: HashMap<(PathBuf, bool), Content>,
}

impl<'a> DiskSource<'a> {
    pub fn new(bitcode: impl FnMut(&str, &[u8]) -> Result<SymbolTable, Error> + 'a) -> DiskSource<'a> {
        DiskSource {
            bitcode: Box::new(bitcode),
            demangler: None,
            files: HashMap::new(),
            members: HashMap::new(),
            fat_lto: FatLto::Native,
            embedded: HashMap::new(),
            fat_objects: Default::default(),
            parsed: HashMap::new(),
        }
    }

    /// Sets how fat LTO objects are read.
    pub fn with_fat_lto(mut self, fat_lto: FatLto) -> DiskSource<'a> {
        self.fat_lto = fat_lto;
        self
    }

    /// The fat LTO objects read as native objects ([`FatLto::Native`]),
    /// named as resolution names units.
    pub fn fat_objects(&self) -> &std::collections::BTreeSet<String> {
        &self.fat_objects
    }

    /// Sets the demangler for `extern "C++"` patterns.
    pub fn with_demangler(mut self, demangle: impl Fn(&str) -> Option<String> + 'a) -> DiskSource<'a> {
        self.demangler = Some(Box::new(demangle));
        self
    }

    /// The bytes of a file [`Source::load`] read (of a fat LTO object read
    /// as bitcode, the bitcode).
    pub fn bytes(&self, path: &Path) -> Option<&[u8]> {
        let file = self.files.get(path)?;
        match self.embedded.get(path) {
            Some(r) => file.get(r.clone()),
            None => Some(&file[..]),
        }
    }

    /// The bytes of member `index` of an archive [`Source::load`] read.
    pub fn member_bytes(&self, archive: &Path, index: usize) -> Option<&[u8]> {
        match self.members.get(archive)?.get(index)? {
            MemberBytes::Inline(r) => self.files.get(archive)?.get(r.clone()),
            MemberBytes::File(p) => self.bytes(p),
        }
    }

    /// [`DiskSource::bytes`], kept without a copy.
    pub fn shared_bytes(&self, path: &Path) -> Option<SharedBytes> {
        let file = self.files.get(path)?;
        match self.embedded.get(path) {
            Some(r) => SharedBytes::part(file, r.clone()),
            None => Some(SharedBytes::whole(file)),
        }
    }

    /// [`DiskSource::member_bytes`], kept without a copy.
    pub fn shared_member_bytes(&self, archive: &Path, index: usize) -> Option<SharedBytes> {
        match self.members.get(archive)?.get(index)? {
            MemberBytes::Inline(r) => SharedBytes::part(self.files.get(archive)?, r.clone()),
            MemberBytes::File(p) => self.shared_bytes(p),
        }
    }

    fn read(&mut self, path: &Path) -> Result<&[u8], Error> {
        if !self.files.contains_key(path) {
            let bytes = MappedFile::open(path)
                .map_err(|e| Error::at(path.display().to_string(), format!("cannot open: {e}")))?;
            self.files.insert(path.to_path_buf(), Arc::new(bytes));
        }
        Ok(&self.files[path])
    }

    fn archive(&mut self, path: &Path) -> Result<Content, Error> {
        let shown = path.display().to_string();
        let bytes = self.read(path)?;
        let archive = object::read::archive::ArchiveFile::parse(bytes)
            .map_err(|e| Error::at(&shown, format!("malformed archive: {e}")))?;
        let thin = archive.is_thin();
        let mut places = Vec::new();
        for member in archive.members() {
            let member = member.map_err(|e| Error::at(&shown, format!("malformed archive: {e}")))?;
            let name = wpd_summary::name::from_bytes(member.name()).into_owned();
            if thin {
                // A thin archive's member names a file relative to the archive.
                let p = path.parent().unwrap_or(Path::new("")).join(String::from_utf8_lossy(member.name()).as_ref());
                places.push((name, MemberBytes::File(p)));
            } else {
                let (start, size) = member.file_range();
                places.push((name, MemberBytes::Inline(start as usize..(start + size) as usize)));
            }
        }
        // Thin members are files of their own: read them first, then look
        // at every member's bytes in place.
        for (name, place) in &places {
            if let MemberBytes::File(p) = place {
                self.read(p).map_err(|e| e.context(format!("{shown}({name})")))?;
            }
        }
        let (files, bitcode) = (&self.files, &mut self.bitcode);
        let mut members = Vec::with_capacity(places.len());
        // Members read as the bitcode they embed: where it lies in them.
        let mut embedded: Vec<(usize, Range<usize>)> = Vec::new();
        for (j, (name, place)) in places.iter().enumerate() {
            let shown_member = format!("{shown}({name})");
            let data: &[u8] = match place {
                MemberBytes::Inline(r) => {
                    files[path].get(r.clone()).ok_or_else(|| Error::at(&shown_member, "truncated archive member"))?
                }
                MemberBytes::File(p) => &files[p],
            };
            let kind = match classify(data) {
                Kind::Bitcode => {
                    MemberKind::Bitcode(Rc::new(bitcode(&shown_member, data).map_err(|e| e.context(&shown_member))?))
                }
                Kind::Elf => match elf::read(data).map_err(|e| Error::at(&shown_member, e))? {
                    ElfInput::Relocatable { fat_lto: Some(r), .. } if self.fat_lto == FatLto::Bitcode => {
                        let table = bitcode(&shown_member, &data[r.clone()]).map_err(|e| e.context(&shown_member))?;
                        embedded.push((j, r));
                        MemberKind::Bitcode(Rc::new(table))
                    }
                    ElfInput::Relocatable { symbols, fat_lto } => {
                        if fat_lto.is_some() {
                            self.fat_objects.insert(shown_member);
                        }
                        MemberKind::Object(Rc::new(symbols))
                    }
                    _ => MemberKind::Other,
                },
                _ => MemberKind::Other,
            };
            members.push(MemberContent { name: name.clone(), kind });
        }
        for (j, r) in embedded {
            match &mut places[j].1 {
                MemberBytes::Inline(whole) => *whole = whole.start + r.start..whole.start + r.end,
                MemberBytes::File(p) => {
                    self.embedded.insert(p.clone(), r);
                }
            }
        }
        self.members.insert(path.to_path_buf(), places.into_iter().map(|(_, p)| p).collect());
        Ok(Content::Archive { thin, members })
    }
}

impl Source for DiskSource<'_> {
    fn is_file(&self, path: &Path) -> bool {
        path.is_file()
    }

    fn demangle(&self, name: &str) -> Option<String> {
        self.demangler.as_ref().and_then(|d| d(name))
    }

    fn load(&mut self, path: &Path, binary: bool) -> Result<Content, Error> {
        let key = (path.to_path_buf(), binary);
        if let Some(c) = self.parsed.get(&key) {
            return Ok(c.clone());
        }
        let content = self.parse(path, binary)?;
        self.parsed.insert(key, content.clone());
        Ok(content)
    }
}

impl DiskSource<'_> {
    fn parse(&mut self, path: &Path, binary: bool) -> Result<Content, Error> {
        let shown = path.display().to_string();
        let bytes = self.read(path)?;
        if binary {
            return Ok(Content::Opaque("raw data (--format=binary)".into()));
        }
        match classify(bytes) {
            Kind::Bitcode => {
                let bytes = &self.files[path];
                Ok(Content::Bitcode(Rc::new((self.bitcode)(&shown, bytes).map_err(|e| e.context(&shown))?)))
            }
            Kind::Archive | Kind::ThinArchive => self.archive(path),
            Kind::Elf => self.elf(path),
            Kind::Empty => Err(Error::at(shown, "empty input file")),
            Kind::Other => match std::str::from_utf8(bytes) {
                Ok(text) => Ok(Content::Script(text.to_string())),
                Err(_) => Ok(Content::Opaque("an unrecognised file format".into())),
            },
        }
    }
}

impl DiskSource<'_> {
    /// An ELF file: a native object or shared library, or (a fat LTO object
    /// with [`FatLto::Bitcode`]) the bitcode it embeds. A fat object read
    /// as native code is remembered ([`DiskSource::fat_objects`]).
    fn elf(&mut self, path: &Path) -> Result<Content, Error> {
        let shown = path.display().to_string();
        match elf::read(&self.files[path]).map_err(|e| Error::at(&shown, e))? {
            ElfInput::Relocatable { fat_lto: Some(r), .. } if self.fat_lto == FatLto::Bitcode => {
                let table = (self.bitcode)(&shown, &self.files[path][r.clone()]).map_err(|e| e.context(&shown))?;
                self.embedded.insert(path.to_path_buf(), r);
                Ok(Content::Bitcode(Rc::new(table)))
            }
            ElfInput::Relocatable { symbols, fat_lto } => {
                if fat_lto.is_some() {
                    self.fat_objects.insert(shown);
                }
                Ok(Content::Object(Rc::new(symbols)))
            }
            ElfInput::Shared { soname, symbols } => Ok(Content::Shared { soname, symbols: Rc::new(symbols) }),
            ElfInput::Other(what) => Ok(Content::Opaque(what.to_string())),
        }
    }
}

/// What the resolver distinguishes of [`crate::file_kind::FileKind`]:
/// plain and wrapped bitcode alike, anything unrecognised as `Other`.
#[derive(PartialEq, Eq)]
enum Kind {
    Bitcode,
    Archive,
    ThinArchive,
    Elf,
    Empty,
    Other,
}

fn classify(bytes: &[u8]) -> Kind {
    use crate::file_kind::{FileKind, classify};
    match classify(bytes) {
        FileKind::Bitcode | FileKind::WrappedBitcode => Kind::Bitcode,
        FileKind::Archive => Kind::Archive,
        FileKind::ThinArchive => Kind::ThinArchive,
        FileKind::Elf => Kind::Elf,
        FileKind::Empty => Kind::Empty,
        FileKind::Unknown => Kind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn a_file_named_twice_is_parsed_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.o");
        std::fs::write(&path, b"BC\xc0\xde\x35\x14\x00\x00").unwrap();
        let parses = Cell::new(0);
        let mut source = DiskSource::new(|_, _| {
            parses.set(parses.get() + 1);
            Ok(SymbolTable::new(vec![super::super::symbols::Symbol::defined("f")]))
        });
        let (Content::Bitcode(first), Content::Bitcode(second)) =
            (source.load(&path, false).unwrap(), source.load(&path, false).unwrap())
        else {
            panic!("not bitcode");
        };
        assert_eq!(parses.get(), 1);
        assert!(Rc::ptr_eq(&first, &second));
        // Read as raw data (`--format=binary`) it is another input.
        assert!(matches!(source.load(&path, true).unwrap(), Content::Opaque(_)));
    }
}
