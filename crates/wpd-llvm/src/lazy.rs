//! Modules read without their function bodies, for the summarizer: most of
//! a module's bytes are bodies the summary never looks into. What a body
//! references comes instead from clang's per-module summary index (in every
//! `-flto=thin` object, and in regular LTO objects for ELF), which is also
//! what LLVM's own thin link trusts for liveness.

use crate::ffi::{self, ShimMessage};
use crate::{Context, Module, Value};
use llvm_sys::prelude::LLVMValueRef;
use std::marker::PhantomData;
use std::ops::Deref;
use wpd_summary::error::Result;

/// A module of a bitcode file read lazily: globals, initializers, their
/// metadata attachments (`!type`, `!vcall_visibility`) and named metadata
/// are there; a function definition has no body (no blocks, yet not a
/// declaration) until [`LazyModule::materialize`], which also reads the
/// metadata the body uses (debug info included) and no more. The
/// module keeps reading the file's bytes, so it borrows them.
///
/// It only reads: every method of [`Module`] that consumes or writes a
/// module needs a `Module` by value, which a `LazyModule` never gives out.
pub struct LazyModule<'c> {
    module: Module<'c>,
    /// Position of the module in its file (a split LTO unit holds two).
    part: usize,
    bytes: &'c [u8],
}

/// What a module's summary index says about one function definition.
pub struct FunctionSummary<'m> {
    pub function: Value<'m>,
    /// Every global value the body references or calls directly
    /// (intrinsics excluded), its personality and prefix data included.
    pub refs: Vec<Value<'m>>,
    /// The summary records type tests or virtual calls in the body. Type
    /// tests whose type id is not a string (a class with internal linkage
    /// in a module built without split LTO units), and tests that only
    /// feed `llvm.assume` and guard no call, are not recorded.
    pub type_tests: bool,
    /// The body makes a call whose callee is not a function: an indirect
    /// call (every virtual call left indirect is one) or inline asm.
    pub indirect_calls: bool,
    /// clang's count of the body's instructions.
    pub instructions: u32,
}

impl Context {
    /// Reads every module of a bitcode file (plain, wrapped, or a split LTO
    /// unit) without function bodies. `name` is used in LLVM's messages.
    pub fn parse_bitcode_lazy<'c>(&'c self, bytes: &'c [u8], name: &str) -> Result<Vec<LazyModule<'c>>> {
        // SAFETY: the modules keep reading `bytes`; each `LazyModule`
        // borrows them for as long as it lives.
        let raw = unsafe { self.parse_modules(bytes, name, true, None) }?;
        Ok(raw
            .into_iter()
            .enumerate()
            .map(|(part, raw)| LazyModule { module: Module { raw, _ctx: PhantomData }, part, bytes })
            .collect())
    }
}

impl<'c> Deref for LazyModule<'c> {
    type Target = Module<'c>;

    fn deref(&self) -> &Module<'c> {
        &self.module
    }
}

impl LazyModule<'_> {
    /// Reads the body of function `f` of this module; nothing when it has
    /// one already or is a declaration.
    pub fn materialize(&self, f: Value<'_>) -> Result<()> {
        let mut err = ShimMessage::new();
        // SAFETY: `f` is a live value; the shim checks that it is a
        // function, and its module's reader still has `self.bytes`; `err`
        // receives null or a malloc'd message.
        let status = unsafe { ffi::wpd_materialize(f.raw(), err.out()) };
        status.check(err, "cannot read a function body")
    }

    /// The module's summary index, function by function; `None` when the
    /// module carries no summary. A definition the index does not describe
    /// exactly (no summary, or an edge to a value this module cannot name
    /// unambiguously) is left out: its body must be read.
    pub fn function_summaries(&self) -> Result<Option<Vec<FunctionSummary<'_>>>> {
        let mut funcs: *mut LLVMValueRef = std::ptr::null_mut();
        let mut meta: *mut u32 = std::ptr::null_mut();
        let mut refs: *mut LLVMValueRef = std::ptr::null_mut();
        let (mut nfuncs, mut nrefs) = (0usize, 0usize);
        let mut err = ShimMessage::new();
        // SAFETY: the pointers are valid for the call; the shim reads the
        // bytes this module was read from and only looks at the module;
        // `err` receives null or a malloc'd message.
        let status = unsafe {
            ffi::wpd_function_summaries(
                self.bytes.as_ptr().cast(),
                self.bytes.len(),
                self.part,
                self.module.raw,
                &mut funcs,
                &mut meta,
                &mut refs,
                &mut nfuncs,
                &mut nrefs,
                err.out(),
            )
        };
        // Declined: the module carries no summary.
        if !status.check_declined(err, "cannot read the summary")? {
            return Ok(None);
        }
        // SAFETY: on success the shim malloc'd `nfuncs` functions, `3 *
        // nfuncs` words (reference count, flags, instruction count per
        // function), and `nrefs` values, all of this module.
        let (f, m, r) = unsafe {
            (
                std::slice::from_raw_parts(funcs, nfuncs),
                std::slice::from_raw_parts(meta, 3 * nfuncs),
                std::slice::from_raw_parts(refs, nrefs),
            )
        };
        let mut out = Vec::with_capacity(nfuncs);
        let mut next = 0usize;
        for (i, &function) in f.iter().enumerate() {
            let n = m[3 * i] as usize;
            out.push(FunctionSummary {
                function: Value::new(function),
                refs: r[next..next + n].iter().map(|&v| Value::new(v)).collect(),
                type_tests: m[3 * i + 1] & 1 != 0,
                indirect_calls: m[3 * i + 1] & 2 != 0,
                instructions: m[3 * i + 2],
            });
            next += n;
        }
        // SAFETY: the three arrays were malloc'd by the shim.
        unsafe {
            ffi::wpd_free(funcs.cast());
            ffi::wpd_free(meta.cast());
            ffi::wpd_free(refs.cast());
        }
        Ok(Some(out))
    }
}
