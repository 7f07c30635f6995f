//! Module surgery and code generation: linking split parts, running the
//! new pass manager pipeline, emitting ELF objects.

use crate::Module;
use crate::ffi::{self, ShimMessage};
use llvm_sys::core as c;
use llvm_sys::target_machine as tm;
use llvm_sys::transforms::pass_builder as pb;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Once;
use wpd_summary::error::{Error, Result};

static INIT: Once = Once::new();

/// Registers the x86-64 target once per process (the shim names only x86's
/// initializers, so no other target is linked into wpd's binaries).
pub(crate) fn init_native_target() {
    INIT.call_once(|| {
        // SAFETY: LLVM's target initializers are idempotent and run once here.
        unsafe { ffi::wpd_init_x86_target() };
    });
}

impl<'c> Module<'c> {
    /// Links `src` into this module (LLVM's IR linker); `src` is consumed.
    pub fn link_in(&mut self, src: Module<'c>) -> Result<()> {
        let raw = src.raw;
        std::mem::forget(src); // LLVMLinkModules2 takes ownership and frees it.
        // SAFETY: both modules belong to the same context; ownership of
        // `raw` passes to the linker.
        let failed = unsafe { llvm_sys::linker::LLVMLinkModules2(self.raw, raw) };
        if failed != 0 { Err(Error::msg("cannot link the two parts of the split LTO unit")) } else { Ok(()) }
    }

    /// Rebuilds a vtable with bytes before and after it (see the shim):
    /// this module's local vtable `name` when `local`, else its copy of the
    /// global one (a vtable of the other kind is another object).
    pub fn rewrite_vtable_layout(&self, name: &str, before: &[u8], after: &[u8], local: bool) -> VtableRebuild {
        let name = wpd_summary::name::to_bytes(name);
        // SAFETY: all buffers are passed with their lengths.
        let rc = unsafe {
            ffi::wpd_rewrite_vtable_layout(
                self.raw,
                name.as_ptr().cast(),
                name.len(),
                before.as_ptr(),
                before.len(),
                after.as_ptr(),
                after.len(),
                std::os::raw::c_int::from(local),
            )
        };
        // Not a status: one of three outcomes, none a failure.
        match rc {
            1 => VtableRebuild::Rebuilt,
            2 => VtableRebuild::Dropped,
            _ => VtableRebuild::NotDefined,
        }
    }

    /// Dead slots: replaces the entries at byte offsets `offsets` (sorted)
    /// of vtable `name`'s initializer by a stub that traps; returns how
    /// many it replaced (0 when this module has no copy of `name`; `local`
    /// as for [`Module::rewrite_vtable_layout`]).
    pub fn kill_vtable_slots(&self, name: &str, offsets: &[u64], local: bool) -> usize {
        let name = wpd_summary::name::to_bytes(name);
        // SAFETY: both buffers are passed with their lengths.
        unsafe {
            ffi::wpd_kill_vtable_slots(
                self.raw,
                name.as_ptr().cast(),
                name.len(),
                offsets.as_ptr(),
                offsets.len(),
                std::os::raw::c_int::from(local),
            )
        }
    }

    /// Adds a hidden external alias for a local global; false when the
    /// module does not define `symbol`.
    pub fn add_hidden_alias(&self, symbol: &str, alias: &str) -> bool {
        self.with_two_names(ffi::wpd_add_hidden_alias, symbol, alias)
    }

    /// Renames the local global `symbol` to its hidden alias `alias` (made by
    /// [`Module::add_hidden_alias`]) and drops the alias: one name for one
    /// object, whatever code is imported where. False when `alias` is not
    /// an alias of `symbol` here.
    pub fn merge_hidden_alias(&self, symbol: &str, alias: &str) -> bool {
        self.with_two_names(ffi::wpd_merge_hidden_alias, symbol, alias)
    }

    /// Calls a shim function taking this module and two names (as bytes
    /// with lengths); true when it did its work (`WPD_OK`), false when it
    /// declined.
    fn with_two_names(&self, f: ffi::TwoNamesFn, a: &str, b: &str) -> bool {
        let (a, b) = (wpd_summary::name::to_bytes(a), wpd_summary::name::to_bytes(b));
        // SAFETY: a live module; both names passed with their lengths.
        unsafe { f(self.raw, a.as_ptr().cast(), a.len(), b.as_ptr().cast(), b.len()) }.is_ok()
    }

    /// Type tests and checked loads used as real checks (CFI), which
    /// [`Module::rewrite_type_tests`] would turn into no-ops.
    pub fn count_type_checks(&self) -> usize {
        // SAFETY: a live module.
        unsafe { ffi::wpd_count_type_checks(self.raw) }
    }

    /// Removes every type test / checked load (see the shim); returns how
    /// many were removed.
    pub fn rewrite_type_tests(&self) -> usize {
        // SAFETY: a live module.
        unsafe { ffi::wpd_rewrite_type_tests(self.raw) }
    }

    /// Runs LLVM's verifier.
    pub fn verify(&self) -> Result<()> {
        let mut msg = std::ptr::null_mut();
        // SAFETY: a live module; the message is freed by take_message.
        let broken = unsafe {
            llvm_sys::analysis::LLVMVerifyModule(
                self.raw,
                llvm_sys::analysis::LLVMVerifierFailureAction::LLVMReturnStatusAction,
                &mut msg,
            )
        };
        let text = take_message(msg);
        if broken != 0 { Err(Error::msg(text)) } else { Ok(()) }
    }

    /// What LLVM's reader checks when it reads a whole module, for a module
    /// read with that check off ([`Context::set_llvm_options`]):
    /// invalid IR is an error (the verifier's first message); invalid debug
    /// info, or debug info of another version, is stripped, as LLVM strips
    /// it, and the warning returned says so.
    ///
    /// [`Context::set_llvm_options`]: crate::Context::set_llvm_options
    pub fn check_debug_info(&self) -> Result<Option<String>> {
        let (mut err, mut warning) = (ShimMessage::new(), ShimMessage::new());
        // SAFETY: a live module; both out-pointers are valid and get null or
        // a malloc'd string.
        let status = unsafe { ffi::wpd_check_debug_info(self.raw, err.out(), warning.out()) };
        let warning = warning.take();
        status.check(err, "invalid module")?;
        Ok(warning)
    }

    /// Runs a new-pass-manager pipeline (e.g. `thinlto<O2>`), with the
    /// machine's profile when it has one ([`TargetMachine::set_profile`]).
    pub fn run_passes(&self, pipeline: &str, machine: &TargetMachine, vectorize: bool) -> Result<()> {
        let cpipe = CString::new(pipeline).map_err(|e| Error::msg(e.to_string()))?;
        if let Some(profile) = &machine.profile {
            let mut err = ShimMessage::new();
            // SAFETY: live module and machine; NUL-terminated strings alive
            // for the call; `err` receives null or a malloc'd message.
            let status = unsafe {
                ffi::wpd_run_passes_with_profile(
                    self.raw,
                    cpipe.as_ptr(),
                    machine.raw,
                    vectorize as i32,
                    profile.sample.as_ptr(),
                    profile.cs_profile.as_ptr(),
                    profile.cs_generate as i32,
                    err.out(),
                )
            };
            // (The fallback has no trailing space to trim.)
            return status.check(err, "optimization failed").map_err(|e| Error::msg(e.message.trim_end()));
        }
        // SAFETY: options are created and disposed here; module and machine
        // are live.
        unsafe {
            let opts = pb::LLVMCreatePassBuilderOptions();
            pb::LLVMPassBuilderOptionsSetLoopVectorization(opts, vectorize as i32);
            pb::LLVMPassBuilderOptionsSetSLPVectorization(opts, vectorize as i32);
            pb::LLVMPassBuilderOptionsSetLoopUnrolling(opts, 1);
            let err = pb::LLVMRunPasses(self.raw, cpipe.as_ptr(), machine.raw, opts);
            pb::LLVMDisposePassBuilderOptions(opts);
            if err.is_null() {
                Ok(())
            } else {
                let m = llvm_sys::error::LLVMGetErrorMessage(err);
                let text = take_c_string_llvm(m);
                Err(Error::msg(text))
            }
        }
    }
}

fn take_message(msg: *mut std::os::raw::c_char) -> String {
    if msg.is_null() {
        return String::new();
    }
    // SAFETY: an LLVM-allocated message, freed with LLVMDisposeMessage.
    unsafe {
        let s = std::ffi::CStr::from_ptr(msg).to_string_lossy().into_owned();
        c::LLVMDisposeMessage(msg);
        s
    }
}

/// # Safety
/// `m` comes from LLVMGetErrorMessage.
unsafe fn take_c_string_llvm(m: *mut std::os::raw::c_char) -> String {
    // SAFETY: per the contract.
    unsafe {
        let s = std::ffi::CStr::from_ptr(m).to_string_lossy().into_owned();
        llvm_sys::error::LLVMDisposeErrorMessage(m);
        s
    }
}

/// What [`Module::rewrite_vtable_layout`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VtableRebuild {
    /// Rebuilt with the extra bytes.
    Rebuilt,
    /// An available_externally copy, turned into a declaration.
    Dropped,
    /// The module has no definition of it.
    NotDefined,
}

/// Relocation model of emitted code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reloc {
    Static,
    Pic,
}

/// Section-per-symbol settings of code generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sections {
    pub functions: bool,
    pub data: bool,
}

impl Default for Sections {
    /// lld's LTO defaults: both on.
    fn default() -> Self {
        Sections { functions: true, data: true }
    }
}

/// An LLVM target machine for one thread, with what lld keeps beside its
/// machine for one backend task: the profile and the split DWARF file.
pub struct TargetMachine {
    raw: tm::LLVMTargetMachineRef,
    profile: Option<Profile>,
    /// Where the `.dwo` of the next emitted object goes (empty: no split
    /// DWARF).
    split_dwarf_file: CString,
}

/// The profile of a backend, as lld's LTO `Config` holds it (empty strings
/// mean absent).
struct Profile {
    sample: CString,
    cs_profile: CString,
    cs_generate: bool,
}

impl Drop for TargetMachine {
    fn drop(&mut self) {
        // SAFETY: owned.
        unsafe { tm::LLVMDisposeTargetMachine(self.raw) }
    }
}

impl TargetMachine {
    /// A machine for `triple` and `cpu` at optimization level `opt` (0-3),
    /// configured as lld configures LTO code generation (see the shim).
    pub fn new(
        triple: &str,
        cpu: &str,
        features: &str,
        opt: u8,
        reloc: Reloc,
        sections: Sections,
    ) -> Result<TargetMachine> {
        init_native_target();
        let nul = |e: std::ffi::NulError| Error::msg(e.to_string());
        let ctriple = CString::new(triple).map_err(nul)?;
        let ccpu = CString::new(cpu).map_err(nul)?;
        let cfeat = CString::new(features).map_err(nul)?;
        let mut err = ShimMessage::new();
        // SAFETY: valid strings; `err` receives null or a malloc'd message.
        let raw = unsafe {
            ffi::wpd_create_target_machine(
                ctriple.as_ptr(),
                ccpu.as_ptr(),
                cfeat.as_ptr(),
                i32::from(opt),
                (reloc == Reloc::Pic) as i32,
                sections.functions as i32,
                sections.data as i32,
                err.out(),
            )
        };
        if raw.is_null() {
            let why = err.take().unwrap_or_default();
            return Err(Error::msg(format!("no LLVM target for {triple} ({cpu}): {why}")));
        }
        Ok(TargetMachine { raw, profile: None, split_dwarf_file: CString::default() })
    }

    /// `-debugger-tune=`: `gdb`, `lldb`, `sce` or `dbx` (LLVM's spellings).
    pub fn set_debugger_tuning(&mut self, tuning: &str) -> Result<()> {
        let kind = match tuning {
            "gdb" => 1,
            "lldb" => 2,
            "sce" => 3,
            "dbx" => 4,
            _ => return Err(Error::msg(format!("unknown debugger tuning '{tuning}' (gdb, lldb, sce or dbx)"))),
        };
        // SAFETY: a live machine.
        unsafe { ffi::wpd_tm_set_debugger_tuning(self.raw, kind) };
        Ok(())
    }

    /// `-emulated-tls`: thread-local variables through `__emutls_get_address`.
    pub fn set_emulated_tls(&mut self, on: bool) {
        // SAFETY: a live machine.
        unsafe { ffi::wpd_tm_set_emulated_tls(self.raw, on as i32) };
    }

    /// `-enable-tlsdesc`: TLS descriptors (`-mtls-dialect=gnu2`).
    pub fn set_tls_descriptors(&mut self, on: bool) {
        // SAFETY: a live machine.
        unsafe { ffi::wpd_tm_set_tls_descriptors(self.raw, on as i32) };
    }

    /// `-stack-size-section`: a `.stack_sizes` section per function.
    pub fn set_stack_size_section(&mut self, on: bool) {
        // SAFETY: a live machine.
        unsafe { ffi::wpd_tm_set_stack_size_section(self.raw, on as i32) };
    }

    /// `-split-machine-functions`: blocks the profile calls cold move to
    /// `.text.split.` sections.
    pub fn set_split_machine_functions(&mut self, on: bool) {
        // SAFETY: a live machine.
        unsafe { ffi::wpd_tm_set_split_machine_functions(self.raw, on as i32) };
    }

    /// `-enable-jmc-instrument`: Just My Code checks (`-fjmc`).
    pub fn set_jmc_instrument(&mut self, on: bool) {
        // SAFETY: a live machine.
        unsafe { ffi::wpd_tm_set_jmc_instrument(self.raw, on as i32) };
    }

    /// The profile [`Module::run_passes`] optimizes with, chosen as lld
    /// chooses it: the sample profile, else context-sensitive
    /// instrumentation writing to `cs_profile` (`cs_generate`), else the
    /// context-sensitive profile `cs_profile` to use.
    pub fn set_profile(&mut self, sample: Option<&Path>, cs_profile: Option<&Path>, cs_generate: bool) -> Result<()> {
        if sample.is_none() && cs_profile.is_none() && !cs_generate {
            self.profile = None;
            return Ok(());
        }
        self.profile =
            Some(Profile { sample: path_c_string(sample)?, cs_profile: path_c_string(cs_profile)?, cs_generate });
        Ok(())
    }

    /// Split DWARF for the next [`TargetMachine::emit_object`]: the object
    /// keeps a skeleton naming `dwo`, the rest of the DWARF is written there.
    pub fn set_split_dwarf_file(&mut self, dwo: Option<&Path>) -> Result<()> {
        self.split_dwarf_file = path_c_string(dwo)?;
        Ok(())
    }

    /// Emits `module` as a relocatable object file (and its `.dwo`, see
    /// [`TargetMachine::set_split_dwarf_file`]).
    pub fn emit_object(&self, module: &Module<'_>) -> Result<Vec<u8>> {
        let mut err = ShimMessage::new();
        let mut buf = std::ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: live machine and module; the buffer and the error are
        // malloc'd by the shim and freed below.
        let status = unsafe {
            ffi::wpd_emit_object(self.raw, module.raw, self.split_dwarf_file.as_ptr(), &mut buf, &mut len, err.out())
        };
        if let Err(why) = status.check(err, "") {
            return Err(Error::msg(format!("code generation failed: {}", why.message.trim_end())));
        }
        // SAFETY: `buf` holds `len` bytes, malloc'd by the shim.
        unsafe {
            let bytes = std::slice::from_raw_parts(buf.cast::<u8>(), len).to_vec();
            ffi::wpd_free(buf.cast());
            Ok(bytes)
        }
    }
}

/// A path for the shim; `None` is the empty string.
fn path_c_string(path: Option<&Path>) -> Result<CString> {
    let Some(p) = path else { return Ok(CString::default()) };
    CString::new(p.as_os_str().as_bytes()).map_err(|_| Error::at(p.display().to_string(), "a path with a NUL byte"))
}
