//! The linker plugin interface (binutils' `plugin-api.h`, the one
//! `LLVMgold.so` implements; GNU ld, gold and mold load plugins through
//! it), as far as wpd uses it: the transfer vector `onload` receives, the
//! hooks it registers, and the calls it makes back into the linker.
//!
//! Declarations only: the `unsafe extern "C" fn` types are the C ABI of
//! the linker's callbacks and of wpd's hooks. No code here runs them; each
//! call through one is in `lib.rs`, with a SAFETY comment.

use std::os::raw::{c_char, c_int, c_void};

pub type Status = c_int;
pub const LDPS_OK: Status = 0;
pub const LDPS_NO_SYMS: Status = 1;
pub const LDPS_ERR: Status = 3;

/// Transfer vector tags (`enum ld_plugin_tag`).
pub mod tag {
    pub const NULL: i32 = 0;
    /// Present only when the linker is gold.
    pub const GOLD_VERSION: i32 = 2;
    pub const LINKER_OUTPUT: i32 = 3;
    pub const OPTION: i32 = 4;
    pub const REGISTER_CLAIM_FILE_HOOK: i32 = 5;
    pub const REGISTER_ALL_SYMBOLS_READ_HOOK: i32 = 6;
    pub const REGISTER_CLEANUP_HOOK: i32 = 7;
    pub const ADD_SYMBOLS: i32 = 8;
    pub const GET_SYMBOLS: i32 = 9;
    pub const ADD_INPUT_FILE: i32 = 10;
    pub const MESSAGE: i32 = 11;
    pub const OUTPUT_NAME: i32 = 15;
    pub const GET_SYMBOLS_V2: i32 = 25;
    pub const GET_SYMBOLS_V3: i32 = 28;
    pub const GET_WRAP_SYMBOLS: i32 = 32;
}

/// `enum ld_plugin_output_file_type`.
pub mod output {
    pub const REL: i32 = 0;
    pub const EXEC: i32 = 1;
    pub const DYN: i32 = 2;
    pub const PIE: i32 = 3;
}

/// `enum ld_plugin_symbol_kind`.
pub mod kind {
    pub const DEF: u8 = 0;
    pub const WEAKDEF: u8 = 1;
    pub const UNDEF: u8 = 2;
    pub const WEAKUNDEF: u8 = 3;
    pub const COMMON: u8 = 4;
}

/// `enum ld_plugin_symbol_visibility`.
pub mod visibility {
    pub const DEFAULT: i32 = 0;
    pub const PROTECTED: i32 = 1;
    pub const HIDDEN: i32 = 3;
}

/// `enum ld_plugin_symbol_resolution`: how the linker resolved a symbol.
pub mod resolution {
    pub const UNKNOWN: i32 = 0;
    pub const UNDEF: i32 = 1;
    /// This file's definition prevails; regular objects reference it.
    pub const PREVAILING_DEF: i32 = 2;
    /// This file's definition prevails; only IR references it.
    pub const PREVAILING_DEF_IRONLY: i32 = 3;
    /// A regular object's definition prevails over this file's.
    pub const PREEMPTED_REG: i32 = 4;
    /// Another IR file's definition prevails.
    pub const PREEMPTED_IR: i32 = 5;
    /// A reference resolved to an IR definition.
    pub const RESOLVED_IR: i32 = 6;
    /// A reference resolved to a regular object of the output.
    pub const RESOLVED_EXEC: i32 = 7;
    /// A reference resolved to a shared library.
    pub const RESOLVED_DYN: i32 = 8;
    /// This file's definition prevails; only IR references it, but it is
    /// exported (dynamic symbol table).
    pub const PREVAILING_DEF_IRONLY_EXP: i32 = 9;
}

/// `enum ld_plugin_level`.
pub mod level {
    pub const INFO: i32 = 0;
    pub const WARNING: i32 = 1;
    pub const ERROR: i32 = 2;
    pub const FATAL: i32 = 3;
}

/// `struct ld_plugin_input_file`.
#[repr(C)]
pub struct InputFile {
    pub name: *const c_char,
    pub fd: c_int,
    pub offset: i64,
    pub filesize: i64,
    pub handle: *mut c_void,
}

/// `struct ld_plugin_symbol` (little-endian layout of its kind bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Symbol {
    pub name: *mut c_char,
    pub version: *mut c_char,
    pub def: u8,
    pub symbol_type: u8,
    pub section_kind: u8,
    pub unused: u8,
    pub visibility: c_int,
    pub size: u64,
    pub comdat_key: *mut c_char,
    pub resolution: c_int,
}

pub type ClaimFileHandler = unsafe extern "C" fn(file: *const InputFile, claimed: *mut c_int) -> Status;
pub type AllSymbolsReadHandler = unsafe extern "C" fn() -> Status;
pub type CleanupHandler = unsafe extern "C" fn() -> Status;
pub type RegisterClaimFile = unsafe extern "C" fn(ClaimFileHandler) -> Status;
pub type RegisterAllSymbolsRead = unsafe extern "C" fn(AllSymbolsReadHandler) -> Status;
pub type RegisterCleanup = unsafe extern "C" fn(CleanupHandler) -> Status;
pub type AddSymbols = unsafe extern "C" fn(handle: *mut c_void, n: c_int, syms: *const Symbol) -> Status;
pub type GetSymbols = unsafe extern "C" fn(handle: *const c_void, n: c_int, syms: *mut Symbol) -> Status;
pub type AddInputFile = unsafe extern "C" fn(path: *const c_char) -> Status;
/// Variadic in C (`printf`-style); wpd always passes `"%s"` and one string.
pub type Message = unsafe extern "C" fn(level: c_int, format: *const c_char, ...) -> Status;
pub type GetWrapSymbols = unsafe extern "C" fn(n: *mut u64, list: *mut *mut *const c_char) -> Status;

/// `struct ld_plugin_tv`: a tag and a value whose type the tag names.
#[repr(C)]
pub struct Tv {
    pub tag: c_int,
    pub value: TvValue,
}

#[repr(C)]
pub union TvValue {
    pub int: c_int,
    pub string: *const c_char,
    pub ptr: *const c_void,
}
