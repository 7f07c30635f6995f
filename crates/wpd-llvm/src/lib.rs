//! wpd's only FFI crate: safe wrappers over LLVM 19 (C API through
//! `llvm-sys`, plus a small C++ shim for multi-module bitcode and a few
//! queries the C API lacks).
//!
//! Ownership: a [`Context`] owns everything LLVM allocates for it; a
//! [`Module`] borrows its context and is disposed on drop; [`Value`],
//! [`Type`] and [`Block`] are copyable handles borrowed from a module, so the
//! borrow checker keeps them from outliving it. Nothing here is `Send`: use
//! one context per thread (one per rayon task).

mod codegen;
mod ffi;
mod lazy;
pub mod link;
mod lto;
mod symtab;
mod value;
mod vcall;

pub use codegen::{Reloc, Sections, TargetMachine, VtableRebuild};
pub use lazy::{FunctionSummary, LazyModule};
pub use llvm_sys::LLVMIntPredicate as IntPredicate;
pub use lto::{
    IndexOnly, LtoInput, LtoLayout, LtoObjects, LtoOptions, LtoReloc, LtoResolution, LtoSymbol, ObjectCache,
    SlotResolution, TaskRun, ThinLto, parse_cache_policy, prune_cache, split_thin_part, thin_backend, thinlto_layout,
    write_empty_index,
};
pub use symtab::{BitcodeSymbol, BitcodeSymtab, ComdatKind, check_target, demangle, read_bitcode_symtab};
pub use value::{Block, MdOperand, Opcode, Type, TypeKind, Value};
pub use vcall::{
    DirectCalls, DispatchEnd, DispatchKey, DispatchTarget, RewriteError, TypeTest, ValueProfile, VirtualCall,
};
pub use wpd_summary::{Linkage, Visibility};

use ffi::ShimMessage;
use llvm_sys::core as c;
use llvm_sys::prelude::*;
use std::ffi::CString;
use std::marker::PhantomData;
use wpd_summary::error::{Error, Result};

/// An LLVM context. Not `Send`: create one per thread.
pub struct Context {
    raw: LLVMContextRef,
    _not_send: PhantomData<*mut ()>,
}

impl Default for Context {
    fn default() -> Self {
        Self::new()
    }
}

impl Context {
    /// A fresh context that drops the names of local values (wpd never needs
    /// them, and parsing is faster without).
    pub fn new() -> Context {
        // SAFETY: creating a context has no preconditions.
        let raw = unsafe { c::LLVMContextCreate() };
        // SAFETY: `raw` is a live context.
        unsafe { c::LLVMContextSetDiscardValueNames(raw, 1) };
        Context { raw, _not_send: PhantomData }
    }

    /// Parses every module of a bitcode file (plain, wrapped, or a split LTO
    /// unit with two modules). `name` is used in LLVM's messages.
    pub fn parse_bitcode(&self, bytes: &[u8], name: &str) -> Result<Vec<Module<'_>>> {
        // SAFETY: not lazy: the shim materializes each module, so no module
        // keeps pointing into `bytes`.
        let raw = unsafe { self.parse_modules(bytes, name, false, None) }?;
        Ok(raw.into_iter().map(|raw| Module { raw, _ctx: PhantomData }).collect())
    }

    /// Module `index` of a bitcode file alone, fully read (the regular part
    /// of a split LTO unit, say, without its larger thin part).
    pub fn parse_bitcode_module(&self, bytes: &[u8], name: &str, index: usize) -> Result<Module<'_>> {
        // SAFETY: not lazy: the module is materialized, so it keeps nothing
        // of `bytes`.
        let raw = unsafe { self.parse_modules(bytes, name, false, Some(index)) }?;
        match raw.as_slice() {
            [one] => Ok(Module { raw: *one, _ctx: PhantomData }),
            _ => Err(Error::msg(format!("expected module {index} alone, the reader gave {}", raw.len()))),
        }
    }

    /// The modules of a bitcode file (every one, or module `only` alone),
    /// owned by the caller; `lazy`: without function bodies (see
    /// [`LazyModule`]).
    ///
    /// # Safety
    /// With `lazy`, the modules keep reading `bytes`: the caller keeps them
    /// alive as long as any module.
    unsafe fn parse_modules(
        &self,
        bytes: &[u8],
        name: &str,
        lazy: bool,
        only: Option<usize>,
    ) -> Result<Vec<LLVMModuleRef>> {
        let cname = CString::new(name.replace('\0', "?")).expect("no interior NUL");
        let mut mods: *mut LLVMModuleRef = std::ptr::null_mut();
        let mut count = 0usize;
        let mut err = ShimMessage::new();
        // SAFETY: the pointers are valid for the call; `err` receives null
        // or a malloc'd message; what the modules read later is the
        // caller's contract.
        let status = unsafe {
            ffi::wpd_parse_bitcode(
                self.raw,
                bytes.as_ptr().cast(),
                bytes.len(),
                cname.as_ptr(),
                i32::from(lazy),
                only.unwrap_or(usize::MAX),
                &mut mods,
                &mut count,
                err.out(),
            )
        };
        status.check(err, "unknown bitcode error")?;
        // SAFETY: on success `mods` holds `count` owned module handles.
        let out = unsafe { std::slice::from_raw_parts(mods, count) }.to_vec();
        // SAFETY: the array (not the modules) was malloc'd by the shim.
        unsafe { ffi::wpd_free(mods.cast()) };
        Ok(out)
    }

    /// Sets LLVM's process-wide options: `options` (each one LLVM knows,
    /// as `-mllvm` gives them), then wpd's own. wpd's own: the check LLVM's
    /// bitcode reader makes each time it reads a whole module, or a module
    /// the importer imports from, is off (AutoUpgrade's UpgradeDebugInfo: a
    /// full verifier run per module with debug info, a walk stripping debug
    /// locations from one without). wpd reads every module twice before
    /// ThinLTO's backend reads it; the backends make the check once, on the
    /// module they compile ([`Module::check_debug_info`], run by the LTO
    /// post-import hook and `wpd backend`). A value given in `options`
    /// (`-disable-auto-upgrade-debug-info=false`) stands.
    ///
    /// Call before any LLVM work, on any thread: LLVM reads these options
    /// without synchronization. Options are parsed once per process; a
    /// first call with none (a program's start) sets wpd's own only.
    pub fn set_llvm_options(options: &[String]) -> Result<()> {
        Self::parse_llvm_options(options)?;
        // SAFETY: no arguments; the caller runs before any LLVM work.
        unsafe { ffi::wpd_skip_debug_info_upgrade() };
        Ok(())
    }

    fn parse_llvm_options(options: &[String]) -> Result<()> {
        if options.is_empty() {
            return Ok(());
        }
        let owned: Vec<CString> = std::iter::once("wpd".to_string())
            .chain(options.iter().cloned())
            .map(|o| CString::new(o).map_err(|e| Error::msg(e.to_string())))
            .collect::<Result<_>>()?;
        let ptrs: Vec<*const std::os::raw::c_char> = owned.iter().map(|c| c.as_ptr()).collect();
        let mut err = ShimMessage::new();
        // SAFETY: `ptrs` point into `owned`, alive for the call; `err`
        // receives null or a malloc'd message.
        let status = unsafe { ffi::wpd_set_llvm_options(ptrs.len() as i32, ptrs.as_ptr(), err.out()) };
        status.check(err, "invalid LLVM option")
    }

    /// Makes LLVM's fatal errors (a module the verifier rejects, a backend
    /// that cannot go on) end the process with one line on stderr,
    /// `<prefix>: error: LLVM: <reason>`, and exit status 1, instead of a
    /// crash report and an abort. For executables, not libraries loaded
    /// into another program.
    pub fn exit_on_fatal_errors(prefix: &str) {
        let prefix = CString::new(prefix.replace('\0', "?")).expect("no interior NUL");
        // SAFETY: the shim copies the prefix; installing a handler is
        // allowed at any time before LLVM reports an error.
        unsafe { ffi::wpd_install_fatal_error_handler(prefix.as_ptr()) }
    }

    /// The metadata kind id for `name` (e.g. "type", "vcall_visibility").
    pub fn md_kind(&self, name: &str) -> u32 {
        // SAFETY: the string is passed with its length.
        unsafe { c::LLVMGetMDKindIDInContext(self.raw, name.as_ptr().cast(), name.len() as u32) }
    }

    /// Enum attribute kind id for `name` (0 when LLVM knows no such attribute).
    pub fn attr_kind(name: &str) -> u32 {
        // SAFETY: the string is passed with its length.
        unsafe { c::LLVMGetEnumAttributeKindForName(name.as_ptr().cast(), name.len()) }
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: modules borrow the context, so none is alive any more.
        unsafe { c::LLVMContextDispose(self.raw) }
    }
}

/// Copies an LLVM (pointer, length) string.
///
/// # Safety
/// `p` is null or points to `len` readable bytes.
unsafe fn lossy(p: *const std::os::raw::c_char, len: usize) -> String {
    // SAFETY: per the contract above; the bytes are copied at once.
    String::from_utf8_lossy(unsafe { raw_bytes(p, len) }).into_owned()
}

/// An LLVM (pointer, length) string as bytes, empty for a null pointer.
///
/// # Safety
/// `p` is null or points to `len` bytes that stay readable, unchanged, for
/// `'a`.
unsafe fn raw_bytes<'a>(p: *const std::os::raw::c_char, len: usize) -> &'a [u8] {
    if p.is_null() || len == 0 {
        return &[];
    }
    // SAFETY: per the contract above.
    unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }
}

/// Copies an LLVM (pointer, length) name into the lossless text form of
/// `wpd_summary::name` (non-UTF-8 bytes escaped, never replaced).
///
/// # Safety
/// `p` is null or points to `len` readable bytes.
unsafe fn name_text(p: *const std::os::raw::c_char, len: usize) -> String {
    // SAFETY: per the contract above; the bytes are copied at once.
    wpd_summary::name::from_bytes(unsafe { raw_bytes(p, len) }).into_owned()
}

/// A module owned by wpd, disposed on drop.
/// An entry of a relative vtable: `target − (base + offset)` (see
/// [`Module::relative_entry`]).
#[derive(Clone, Copy)]
pub struct RelativeEntry<'m> {
    pub target: Value<'m>,
    pub base: Value<'m>,
    pub offset: i64,
}

pub struct Module<'c> {
    raw: LLVMModuleRef,
    _ctx: PhantomData<&'c Context>,
}

impl Drop for Module<'_> {
    fn drop(&mut self) {
        // SAFETY: we own the module; values borrowed from it are gone.
        unsafe { c::LLVMDisposeModule(self.raw) }
    }
}

macro_rules! iter_list {
    ($name:ident, $first:path, $next:path) => {
        /// Iterates the module's list in order.
        pub fn $name(&self) -> impl Iterator<Item = Value<'_>> + '_ {
            // SAFETY: the module is alive for the iterator's lifetime.
            let mut cur = unsafe { $first(self.raw) };
            std::iter::from_fn(move || {
                if cur.is_null() {
                    return None;
                }
                let v = cur;
                // SAFETY: `v` is a live element of the list.
                cur = unsafe { $next(v) };
                Some(Value::new(v))
            })
        }
    };
}

impl<'c> Module<'c> {
    iter_list!(functions, c::LLVMGetFirstFunction, c::LLVMGetNextFunction);
    iter_list!(globals, c::LLVMGetFirstGlobal, c::LLVMGetNextGlobal);
    iter_list!(aliases, c::LLVMGetFirstGlobalAlias, c::LLVMGetNextGlobalAlias);
    iter_list!(ifuncs, c::LLVMGetFirstGlobalIFunc, c::LLVMGetNextGlobalIFunc);

    /// The target triple.
    pub fn triple(&self) -> String {
        // SAFETY: returns a NUL-terminated string owned by the module.
        unsafe { std::ffi::CStr::from_ptr(c::LLVMGetTarget(self.raw)) }.to_string_lossy().into_owned()
    }

    /// The data layout string.
    pub fn data_layout(&self) -> String {
        // SAFETY: returns a NUL-terminated string owned by the module.
        unsafe { std::ffi::CStr::from_ptr(c::LLVMGetDataLayoutStr(self.raw)) }.to_string_lossy().into_owned()
    }

    /// The global value of kind `kind` (0 any, 1 function, 2 variable)
    /// named `name` (text form of `wpd_summary::name`), internal ones too.
    fn named(&self, name: &str, kind: i32) -> Option<Value<'_>> {
        let bytes = wpd_summary::name::to_bytes(name);
        // SAFETY: valid module; the name is passed with its length.
        let v = unsafe { ffi::wpd_named_global(self.raw, bytes.as_ptr().cast(), bytes.len(), kind) };
        (!v.is_null()).then(|| Value::new(v))
    }

    /// A global variable by name.
    pub fn global(&self, name: &str) -> Option<Value<'_>> {
        self.named(name, 2)
    }

    /// A function by name.
    pub fn function(&self, name: &str) -> Option<Value<'_>> {
        self.named(name, 1)
    }

    /// Integer value of a module flag, when present and an integer.
    pub fn flag_int(&self, key: &str) -> Option<u64> {
        let mut out = 0u64;
        // SAFETY: key passed with its length; `out` is valid.
        let found = unsafe { ffi::wpd_module_flag_int(self.raw, key.as_ptr().cast(), key.len(), &mut out) };
        (found != 0).then_some(out)
    }

    /// ABI size in bytes of `ty` under this module's data layout.
    pub fn abi_size(&self, ty: Type<'_>) -> u64 {
        // SAFETY: the layout belongs to the live module; `ty` is sized (the
        // callers pass initializer types of globals).
        unsafe { llvm_sys::target::LLVMABISizeOfType(llvm_sys::target::LLVMGetModuleDataLayout(self.raw), ty.raw) }
    }

    /// Byte offset of element `i` of struct type `ty`.
    pub fn struct_offset(&self, ty: Type<'_>, i: u32) -> u64 {
        // SAFETY: as above; callers pass an in-range element index.
        unsafe { llvm_sys::target::LLVMOffsetOfElement(llvm_sys::target::LLVMGetModuleDataLayout(self.raw), ty.raw, i) }
    }

    /// Pointer size in bytes for address space 0.
    pub fn pointer_size(&self) -> u64 {
        // SAFETY: the layout belongs to the live module.
        u64::from(unsafe { llvm_sys::target::LLVMPointerSize(llvm_sys::target::LLVMGetModuleDataLayout(self.raw)) })
    }

    /// The context id of metadata kind `name`.
    pub fn md_kind(&self, name: &str) -> u32 {
        // SAFETY: the module's context is live; string passed with length.
        unsafe {
            c::LLVMGetMDKindIDInContext(c::LLVMGetModuleContext(self.raw), name.as_ptr().cast(), name.len() as u32)
        }
    }

    /// Strips casts and constant-offset GEPs from a constant pointer:
    /// returns the base and the byte offset.
    pub fn strip_const_offset<'m>(&'m self, v: Value<'m>) -> (Value<'m>, i64) {
        let mut off = 0i64;
        // SAFETY: `v` belongs to this module (same lifetime); the shim only
        // reads it.
        let base = unsafe { ffi::wpd_strip_const_offset(self.raw, v.raw(), &mut off) };
        (Value::new(base), off)
    }

    /// An entry of a relative vtable (`-fexperimental-relative-c++-abi-vtables`):
    /// a 32-bit `target − (base + offset)`, with `dso_local_equivalent`
    /// looked through. Returns the target global, the base global and the
    /// offset; `None` for any other constant.
    pub fn relative_entry<'m>(&'m self, v: Value<'m>) -> Option<RelativeEntry<'m>> {
        let (mut target, mut base, mut offset) = (std::ptr::null_mut(), std::ptr::null_mut(), 0i64);
        // SAFETY: `v` belongs to this module (same lifetime); the shim only
        // reads it and writes the three out-pointers only when it returns 1.
        let found = unsafe { ffi::wpd_relative_entry(self.raw, v.raw(), &mut target, &mut base, &mut offset) };
        (found == 1).then(|| RelativeEntry { target: Value::new(target), base: Value::new(base), offset })
    }
}
