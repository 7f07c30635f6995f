//! Bitcode symbol tables for resolution, from LLVM's irsymtab (stored in
//! every bitcode file; reading it parses no IR): each symbol's name (in
//! `wpd_summary::name`'s lossless text form), whether it is defined, weak
//! or common, its visibility and comdat, and LLVM's flags. A split LTO unit
//! has two modules in one file; the table covers the file.

use crate::ffi::{self, ShimMessage};
use std::os::raw::{c_char, c_int};
use wpd_summary::Visibility;
use wpd_summary::error::{Error, Result};

/// LLVM's `Comdat::SelectionKind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComdatKind {
    Any,
    ExactMatch,
    Largest,
    NoDeduplicate,
    SameSize,
}

impl TryFrom<c_int> for ComdatKind {
    type Error = c_int;
    fn try_from(v: c_int) -> std::result::Result<ComdatKind, c_int> {
        Ok(match v {
            0 => ComdatKind::Any,
            1 => ComdatKind::ExactMatch,
            2 => ComdatKind::Largest,
            3 => ComdatKind::NoDeduplicate,
            4 => ComdatKind::SameSize,
            other => return Err(other),
        })
    }
}

/// One symbol of a bitcode file, as lld's `lto::InputFile::Symbol` sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BitcodeSymbol {
    pub name: String,
    pub undefined: bool,
    pub weak: bool,
    /// A common symbol: `common_size` and `common_align` apply.
    pub common: bool,
    pub common_size: u64,
    pub common_align: u32,
    pub visibility: Visibility,
    /// Index into [`BitcodeSymtab::comdats`].
    pub comdat: Option<u32>,
    /// In `llvm.used`: must be kept.
    pub used: bool,
    pub tls: bool,
    /// `linkonce_odr` + `unnamed_addr`: may be left out of the output's
    /// symbol table.
    pub may_omit: bool,
    /// Not local (LLVM puts local symbols in the table too).
    pub global: bool,
    /// An LLVM-internal name (`llvm.*`) the linker never sees.
    pub format_specific: bool,
    /// A function (or an alias of one).
    pub executable: bool,
    pub unnamed_addr: bool,
    /// An `ifunc` or alias whose target is resolved at run time.
    pub indirect: bool,
    /// The section a definition is placed in, when its name is a C
    /// identifier: only such a section has `__start_`/`__stop_` symbols,
    /// whose references keep every definition placed in it.
    pub start_stop_section: Option<String>,
}

impl BitcodeSymbol {
    /// What lld's LTO puts in the link's symbol table: global and not
    /// format-specific.
    pub fn in_link(&self) -> bool {
        self.global && !self.format_specific
    }
}

/// The symbol table of one bitcode file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BitcodeSymtab {
    pub symbols: Vec<BitcodeSymbol>,
    pub comdats: Vec<(String, ComdatKind)>,
    /// Modules in the file (2 for a split LTO unit).
    pub modules: usize,
}

/// Whether a section name is a C identifier, as linkers require of a
/// section with `__start_`/`__stop_` symbols.
pub fn c_identifier(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b == b'_' || b.is_ascii_alphabetic())
        && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric())
}

/// Whether wpd links code for `triple` (a module's target triple; empty
/// when the module names none): x86-64 ELF, LP64. The error says which
/// target the module is for. Reading a symbol table checks it too.
pub fn check_target(triple: &str) -> Result<()> {
    // SAFETY: `triple` is valid for the call and only read; the shim
    // returns null or a malloc'd NUL-terminated message, owned by the
    // `ShimMessage` from here on.
    let message = unsafe { ShimMessage::from_raw(ffi::wpd_target_error(triple.as_ptr().cast(), triple.len())) };
    match message.take() {
        None => Ok(()),
        Some(m) => Err(Error::msg(m)),
    }
}

/// Reads the symbol table of a bitcode file (raw or wrapped).
pub fn read_bitcode_symtab(bytes: &[u8]) -> Result<BitcodeSymtab> {
    let mut err = ShimMessage::new();
    // SAFETY: `bytes` is valid for the call; the shim copies everything it
    // keeps, so the table does not point into `bytes`; `err` receives null
    // or a malloc'd message.
    let table = unsafe { ffi::wpd_symtab_read(bytes.as_ptr().cast(), bytes.len(), err.out()) };
    if table.is_null() {
        return Err(Error::msg(err.or("cannot read the symbol table")));
    }
    let out = read_table(table);
    // SAFETY: `table` came from wpd_symtab_read and is freed once.
    unsafe { ffi::wpd_symtab_free(table) };
    out
}

fn read_table(table: *mut std::os::raw::c_void) -> Result<BitcodeSymtab> {
    const UNDEFINED: u32 = 1 << 0;
    const WEAK: u32 = 1 << 1;
    const COMMON: u32 = 1 << 2;
    const USED: u32 = 1 << 3;
    const TLS: u32 = 1 << 4;
    const MAY_OMIT: u32 = 1 << 5;
    const GLOBAL: u32 = 1 << 6;
    const FORMAT_SPECIFIC: u32 = 1 << 7;
    const EXECUTABLE: u32 = 1 << 8;
    const UNNAMED_ADDR: u32 = 1 << 9;
    const INDIRECT: u32 = 1 << 10;
    // SAFETY (all calls below): `table` is a live table from
    // wpd_symtab_read; indices are below the counts it reports; returned
    // name pointers stay valid until the table is freed, and are copied
    // before that.
    let (n, c, modules) = unsafe {
        (ffi::wpd_symtab_num_symbols(table), ffi::wpd_symtab_num_comdats(table), ffi::wpd_symtab_num_modules(table))
    };
    let bytes = |p: *const c_char, len: usize| -> String {
        // SAFETY: the shim returns (pointer, length) of a string it owns.
        let b = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) };
        wpd_summary::name::from_bytes(b).into_owned()
    };
    let mut comdats = Vec::with_capacity(c);
    for i in 0..c {
        let (mut name, mut len, mut kind) = (std::ptr::null(), 0usize, 0 as c_int);
        // SAFETY: see above.
        unsafe { ffi::wpd_symtab_comdat(table, i, &mut name, &mut len, &mut kind) };
        let kind = ComdatKind::try_from(kind).map_err(|k| Error::msg(format!("unknown comdat selection kind {k}")))?;
        comdats.push((bytes(name, len), kind));
    }
    let mut symbols = Vec::with_capacity(n);
    for i in 0..n {
        let (mut name, mut len, mut flags, mut vis, mut comdat, mut size, mut align) =
            (std::ptr::null(), 0usize, 0u32, 0u32, -1 as c_int, 0u64, 0u32);
        // SAFETY: see above.
        unsafe {
            ffi::wpd_symtab_symbol(
                table,
                i,
                &mut name,
                &mut len,
                &mut flags,
                &mut vis,
                &mut comdat,
                &mut size,
                &mut align,
            )
        };
        let visibility = match vis {
            0 => Visibility::Default,
            1 => Visibility::Hidden,
            2 => Visibility::Protected,
            v => return Err(Error::msg(format!("unknown symbol visibility {v}"))),
        };
        let comdat = u32::try_from(comdat).ok().filter(|&k| (k as usize) < c);
        let (mut section, mut section_len) = (std::ptr::null(), 0usize);
        // SAFETY: see above.
        unsafe { ffi::wpd_symtab_symbol_section(table, i, &mut section, &mut section_len) };
        let section = bytes(section, section_len);
        let has = |bit: u32| flags & bit != 0;
        symbols.push(BitcodeSymbol {
            name: bytes(name, len),
            undefined: has(UNDEFINED),
            weak: has(WEAK),
            common: has(COMMON),
            common_size: size,
            common_align: align,
            visibility,
            comdat,
            used: has(USED),
            tls: has(TLS),
            may_omit: has(MAY_OMIT),
            global: has(GLOBAL),
            format_specific: has(FORMAT_SPECIFIC),
            executable: has(EXECUTABLE),
            unnamed_addr: has(UNNAMED_ADDR),
            indirect: has(INDIRECT),
            start_stop_section: c_identifier(&section).then_some(section),
        });
    }
    Ok(BitcodeSymtab { symbols, comdats, modules })
}

/// The demangled form of a mangled symbol name (as lld demangles for
/// `extern "C++"` version-script patterns); `None` when it is not mangled.
pub fn demangle(name: &str) -> Option<String> {
    let bytes = wpd_summary::name::to_bytes(name);
    // SAFETY: the pointer and length describe `bytes` for the call; the
    // result is a malloc'd NUL-terminated string or null, owned here.
    unsafe { ShimMessage::from_raw(ffi::wpd_demangle(bytes.as_ptr().cast(), bytes.len())) }.take()
}
