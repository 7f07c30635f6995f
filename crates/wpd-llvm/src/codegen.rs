//! Module surgery and code generation: linking split parts, running the
//! new pass manager pipeline, emitting ELF objects.

use crate::{Module, Value, ffi};
use llvm_sys::core as c;
use llvm_sys::target as t;
use llvm_sys::target_machine as tm;
use llvm_sys::transforms::pass_builder as pb;
use std::ffi::CString;
use std::sync::Once;

static INIT: Once = Once::new();

/// Registers the native (x86-64) target once per process.
fn init_native_target() {
    INIT.call_once(|| {
        // SAFETY: LLVM's target initializers are idempotent and run once here.
        unsafe {
            t::LLVM_InitializeNativeTarget();
            t::LLVM_InitializeNativeAsmPrinter();
            t::LLVM_InitializeNativeAsmParser();
        }
    });
}

impl<'c> Module<'c> {
    /// Links `src` into this module (LLVM's IR linker); `src` is consumed.
    pub fn link_in(&mut self, src: Module<'c>) -> Result<(), String> {
        let raw = src.raw;
        std::mem::forget(src); // LLVMLinkModules2 takes ownership and frees it.
        // SAFETY: both modules belong to the same context; ownership of
        // `raw` passes to the linker.
        let failed = unsafe { llvm_sys::linker::LLVMLinkModules2(self.raw, raw) };
        if failed != 0 { Err("cannot link the two parts of the split LTO unit".into()) } else { Ok(()) }
    }

    /// A function by name.
    pub fn function(&self, name: &str) -> Option<Value<'_>> {
        let cname = CString::new(name).ok()?;
        // SAFETY: valid module and NUL-terminated name.
        let v = unsafe { c::LLVMGetNamedFunction(self.raw, cname.as_ptr()) };
        (!v.is_null()).then(|| Value::new(v))
    }

    /// The function `name`, declared with the callee type of `call` when the
    /// module does not have it yet.
    pub fn function_or_declare<'m>(&'m self, name: &str, call: Value<'m>) -> Value<'m> {
        if let Some(f) = self.function(name) {
            return f;
        }
        let cname = CString::new(name).expect("symbol names have no NUL");
        // SAFETY: `call` is a call base of this module; its function type
        // lives in the module's context.
        let v = unsafe { c::LLVMAddFunction(self.raw, cname.as_ptr(), c::LLVMGetCalledFunctionType(call.raw())) };
        Value::new(v)
    }

    /// Guarded speculative call: `if (fp == callee) callee() else fp()`.
    /// False when not legal (prototype mismatch) or not an indirect call.
    pub fn speculate(&self, call: Value<'_>, callee: Value<'_>) -> bool {
        // SAFETY: the shim checks both kinds; both belong to this module.
        unsafe { ffi::wpd_speculate(call.raw(), callee.raw()) != 0 }
    }

    /// Uniform return value: `call` becomes the constant `value`.
    pub fn rewrite_uniform(&self, call: Value<'_>, value: u64) -> bool {
        // SAFETY: the shim checks that `call` is a call base of integer type.
        unsafe { ffi::wpd_rewrite_uniform(call.raw(), value) != 0 }
    }

    /// Unique return value: `call` becomes a comparison of the pointer that
    /// `test` tested with `member + offset`.
    pub fn rewrite_unique(&self, call: Value<'_>, test: Value<'_>, member: &str, offset: u64, is_one: bool) -> bool {
        // SAFETY: the shim checks kinds; strings passed with their lengths.
        unsafe {
            ffi::wpd_rewrite_unique(call.raw(), test.raw(), member.as_ptr().cast(), member.len(), offset, is_one as i32)
                != 0
        }
    }

    /// Virtual constant propagation: `call` becomes a load at
    /// `tested pointer + byte_offset` (one bit of it for 1-bit results).
    pub fn rewrite_vcp(&self, call: Value<'_>, test: Value<'_>, byte_offset: i64, bit: Option<u8>, width: u32) -> bool {
        let bit = bit.map_or(-1, i32::from);
        // SAFETY: the shim checks kinds and the call's width.
        unsafe { ffi::wpd_rewrite_vcp(call.raw(), test.raw(), byte_offset, bit, width) != 0 }
    }

    /// Rebuilds a vtable with bytes before and after it (see the shim).
    pub fn rebuild_vtable(&self, name: &str, before: &[u8], after: &[u8]) -> VtableRebuild {
        // SAFETY: all buffers are passed with their lengths.
        let rc = unsafe {
            ffi::wpd_rebuild_vtable(
                self.raw,
                name.as_ptr().cast(),
                name.len(),
                before.as_ptr(),
                before.len(),
                after.as_ptr(),
                after.len(),
            )
        };
        match rc {
            1 => VtableRebuild::Rebuilt,
            2 => VtableRebuild::Dropped,
            _ => VtableRebuild::NotDefined,
        }
    }

    /// Adds a hidden external alias for a local global; false when the
    /// module does not define `symbol`.
    pub fn add_hidden_alias(&self, symbol: &str, alias: &str) -> bool {
        // SAFETY: strings passed with their lengths.
        unsafe {
            ffi::wpd_add_hidden_alias(
                self.raw,
                symbol.as_ptr().cast(),
                symbol.len(),
                alias.as_ptr().cast(),
                alias.len(),
            ) != 0
        }
    }

    /// Type tests and checked loads used as real checks (CFI), which
    /// [`Module::drop_type_tests`] would turn into no-ops.
    pub fn count_type_checks(&self) -> usize {
        // SAFETY: a live module.
        unsafe { ffi::wpd_count_type_checks(self.raw) }
    }

    /// Removes every type test / checked load (see the shim); returns how
    /// many were removed.
    pub fn drop_type_tests(&self) -> usize {
        // SAFETY: a live module.
        unsafe { ffi::wpd_drop_type_tests(self.raw) }
    }

    /// Runs LLVM's verifier.
    pub fn verify(&self) -> Result<(), String> {
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
        if broken != 0 { Err(text) } else { Ok(()) }
    }

    /// Runs a new-pass-manager pipeline (e.g. `thinlto<O2>`).
    pub fn run_passes(&self, pipeline: &str, machine: &TargetMachine, vectorize: bool) -> Result<(), String> {
        let cpipe = CString::new(pipeline).map_err(|e| e.to_string())?;
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
                Err(text)
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

/// What [`Module::rebuild_vtable`] did.
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

/// An LLVM target machine for one thread.
pub struct TargetMachine {
    raw: tm::LLVMTargetMachineRef,
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
    ) -> Result<TargetMachine, String> {
        init_native_target();
        let ctriple = CString::new(triple).map_err(|e| e.to_string())?;
        let ccpu = CString::new(cpu).map_err(|e| e.to_string())?;
        let cfeat = CString::new(features).map_err(|e| e.to_string())?;
        let mut err = std::ptr::null_mut();
        // SAFETY: valid strings; the error is malloc'd by the shim.
        let raw = unsafe {
            ffi::wpd_create_target_machine(
                ctriple.as_ptr(),
                ccpu.as_ptr(),
                cfeat.as_ptr(),
                i32::from(opt),
                (reloc == Reloc::Pic) as i32,
                sections.functions as i32,
                sections.data as i32,
                &mut err,
            )
        };
        if raw.is_null() {
            // SAFETY: malloc'd by the shim (or null).
            let why = unsafe { crate::take_c_string(err) }.unwrap_or_default();
            return Err(format!("no LLVM target for {triple} ({cpu}): {why}"));
        }
        Ok(TargetMachine { raw })
    }

    /// Emits `module` as a relocatable object file.
    pub fn emit_object(&self, module: &Module<'_>) -> Result<Vec<u8>, String> {
        let mut err = std::ptr::null_mut();
        let mut buf = std::ptr::null_mut();
        // SAFETY: live machine and module; the buffer is disposed below.
        let failed = unsafe {
            tm::LLVMTargetMachineEmitToMemoryBuffer(
                self.raw,
                module.raw,
                tm::LLVMCodeGenFileType::LLVMObjectFile,
                &mut err,
                &mut buf,
            )
        };
        if failed != 0 {
            return Err(format!("code generation failed: {}", take_message(err)));
        }
        // SAFETY: a live memory buffer, copied then disposed.
        unsafe {
            let start = c::LLVMGetBufferStart(buf);
            let len = c::LLVMGetBufferSize(buf);
            let bytes = std::slice::from_raw_parts(start.cast::<u8>(), len).to_vec();
            c::LLVMDisposeMemoryBuffer(buf);
            Ok(bytes)
        }
    }
}
