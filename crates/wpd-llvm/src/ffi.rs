//! Declarations of the C++ shim (`shim/*.cpp`); LLVM's own C API comes
//! from `llvm-sys`. Only this crate calls either.
//!
//! Every shim function that can fail (or decline) returns a [`Status`];
//! its error message, when it has one, comes through a `char **err`
//! out-parameter, taken and freed by a [`ShimMessage`]. Functions that
//! return a genuine boolean (`c_int`, 1 or 0: `wpd_inst_may_read_memory`,
//! `wpd_inst_may_write_memory`, `wpd_md_is_distinct`,
//! `wpd_module_flag_int`, `wpd_relative_entry`, and the [`LtoLookupFn`]
//! callback), a count (`usize`), lld's exit code (`wpd_lld_link`), a
//! three-way outcome (`wpd_rewrite_vtable_layout`) or a pointer (null on failure,
//! with the message in `err`: `wpd_symtab_read`, `wpd_lto_input_open`,
//! `wpd_create_target_machine`) say so.

use llvm_sys::prelude::{LLVMContextRef, LLVMMetadataRef, LLVMModuleRef, LLVMTypeRef, LLVMValueRef};
use llvm_sys::target_machine::LLVMTargetMachineRef;
use std::os::raw::{c_char, c_int, c_void};
use wpd_summary::error::Error;

/// What a fallible shim function returns: `WpdStatus` of `shim/common.h`
/// (rustc's `LLVMRustResult` in spirit). A transparent integer, never
/// transmuted into a Rust enum: a value this side does not know is a
/// failure ([`Status::outcome`]).
#[repr(transparent)]
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status(i32);

/// What a [`Status`] says, once read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// `WPD_OK`.
    Done,
    /// `WPD_DECLINED`: not applicable, nothing changed, no error.
    Declined,
    /// `WPD_FAILED`, or a value this side does not know.
    Failed,
}

impl Status {
    /// `WPD_OK`: done.
    pub const OK: Status = Status(0);
    /// `WPD_FAILED`: an error (the message, where the function has an
    /// `err` out-parameter, is there).
    pub const FAILED: Status = Status(1);
    /// `WPD_DECLINED`: not applicable, and no error; nothing was changed or
    /// produced. Only the functions that say so return it.
    pub const DECLINED: Status = Status(2);

    /// What the status says; an unknown value is a failure.
    pub fn outcome(self) -> Outcome {
        match self {
            Status::OK => Outcome::Done,
            Status::DECLINED => Outcome::Declined,
            // WPD_FAILED, and any value this side does not know.
            Status::FAILED | Status(_) => Outcome::Failed,
        }
    }

    /// Whether the function did its work (`WPD_OK`).
    pub fn is_ok(self) -> bool {
        self.outcome() == Outcome::Done
    }

    /// For a function that never declines: `Ok` on `WPD_OK`, else the
    /// shim's message in `err` (`fallback` when it has none), naming no
    /// file ([`Error::msg`]).
    pub fn check(self, err: ShimMessage, fallback: &str) -> Result<(), Error> {
        match self.outcome() {
            Outcome::Done => Ok(()),
            Outcome::Declined | Outcome::Failed => Err(Error::msg(err.or(fallback))),
        }
    }

    /// For a function that may decline: `Ok(true)` on `WPD_OK`,
    /// `Ok(false)` on `WPD_DECLINED`, else the shim's message in `err`
    /// (`fallback` when it has none), naming no file ([`Error::msg`]).
    pub fn check_declined(self, err: ShimMessage, fallback: &str) -> Result<bool, Error> {
        match self.outcome() {
            Outcome::Done => Ok(true),
            Outcome::Declined => Ok(false),
            Outcome::Failed => Err(Error::msg(err.or(fallback))),
        }
    }
}

/// A message the shim hands back: through a `char **` out-parameter
/// ([`ShimMessage::out`]) or as a returned `char *`
/// ([`ShimMessage::from_raw`]). It holds null or a malloc'd NUL-terminated
/// string, which it owns: [`ShimMessage::take`] copies it out, and either
/// that or the drop frees it with `wpd_free`, exactly once.
pub struct ShimMessage(*mut c_char);

impl Default for ShimMessage {
    fn default() -> Self {
        Self::new()
    }
}

impl ShimMessage {
    /// No message yet (null).
    pub fn new() -> ShimMessage {
        ShimMessage(std::ptr::null_mut())
    }

    /// Takes ownership of a string the shim returned.
    ///
    /// # Safety
    /// `p` is null or a NUL-terminated string allocated with malloc, owned
    /// by nobody else.
    pub unsafe fn from_raw(p: *mut c_char) -> ShimMessage {
        ShimMessage(p)
    }

    /// The out-parameter for a shim function, which leaves it null or sets
    /// it to a malloc'd NUL-terminated string (the contract of every shim
    /// function taking `char **err`, which the caller's `unsafe` block
    /// vouches for).
    pub fn out(&mut self) -> *mut *mut c_char {
        &mut self.0
    }

    /// The message (lossy UTF-8), if the shim set one; frees it.
    pub fn take(mut self) -> Option<String> {
        let p = std::mem::replace(&mut self.0, std::ptr::null_mut());
        if p.is_null() {
            return None;
        }
        // SAFETY: a non-null pointer here is a malloc'd NUL-terminated
        // string the shim handed over (see `out` and `from_raw`), read
        // before it is freed below.
        let text = unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned();
        // SAFETY: malloc'd by the shim, owned here, freed once (`self` now
        // holds null, so the drop frees nothing).
        unsafe { wpd_free(p.cast()) };
        Some(text)
    }

    /// The message, or `fallback` when the shim set none.
    pub fn or(self, fallback: &str) -> String {
        self.take().unwrap_or_else(|| fallback.to_string())
    }
}

impl Drop for ShimMessage {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: null or a malloc'd string owned here (see `take`);
            // freed once.
            unsafe { wpd_free(self.0.cast()) }
        }
    }
}

/// A shim function taking a module and two names (bytes, length); returns
/// `WPD_OK` or `WPD_DECLINED`.
pub type TwoNamesFn =
    unsafe extern "C" fn(module: LLVMModuleRef, a: *const c_char, alen: usize, b: *const c_char, blen: usize) -> Status;

unsafe extern "C" {
    /// Registers LLVM's x86 target (info, target, MC, asm printer and
    /// parser). Idempotent.
    pub fn wpd_init_x86_target();
    pub fn wpd_parse_bitcode(
        ctx: LLVMContextRef,
        data: *const c_char,
        len: usize,
        name: *const c_char,
        lazy: c_int,
        only: usize,
        out_mods: *mut *mut LLVMModuleRef,
        out_count: *mut usize,
        out_err: *mut *mut c_char,
    ) -> Status;
    pub fn wpd_free(p: *mut c_void);
    pub fn wpd_materialize(f: LLVMValueRef, out_err: *mut *mut c_char) -> Status;
    #[allow(clippy::too_many_arguments)]
    pub fn wpd_function_summaries(
        data: *const c_char,
        len: usize,
        part: usize,
        module: LLVMModuleRef,
        out_funcs: *mut *mut LLVMValueRef,
        out_meta: *mut *mut u32,
        out_refs: *mut *mut LLVMValueRef,
        out_nfuncs: *mut usize,
        out_nrefs: *mut usize,
        out_err: *mut *mut c_char,
    ) -> Status;
    pub fn wpd_comdat_name(gv: LLVMValueRef, len: *mut usize) -> *const c_char;
    pub fn wpd_inst_may_read_memory(inst: LLVMValueRef) -> c_int;
    pub fn wpd_inst_may_write_memory(inst: LLVMValueRef) -> c_int;
    pub fn wpd_md_is_distinct(md: LLVMMetadataRef) -> c_int;
    pub fn wpd_delete_body(func: LLVMValueRef) -> c_int;
    pub fn wpd_domtree_new(func: LLVMValueRef) -> *mut c_void;
    pub fn wpd_domtree_free(dt: *mut c_void);
    pub fn wpd_devirt_calls(
        intrinsic_call: LLVMValueRef,
        dt: *mut c_void,
        calls: *mut *mut LLVMValueRef,
        offsets: *mut *mut u64,
        flags: *mut c_int,
    ) -> usize;
    pub fn wpd_test_slot_reads(
        intrinsic_call: LLVMValueRef,
        offsets: *mut *mut i64,
        calls: *mut *mut LLVMValueRef,
    ) -> usize;
    pub fn wpd_vtable_loads(func: LLVMValueRef, globals: *mut *mut LLVMValueRef, offsets: *mut *mut i64) -> usize;
    pub fn wpd_untested_slot_loads(func: LLVMValueRef, types: *mut *mut LLVMTypeRef) -> usize;
    pub fn wpd_set_llvm_options(argc: c_int, argv: *const *const c_char, err: *mut *mut c_char) -> Status;
    pub fn wpd_skip_debug_info_upgrade();
    pub fn wpd_check_debug_info(module: LLVMModuleRef, err: *mut *mut c_char, warning: *mut *mut c_char) -> Status;
    pub fn wpd_install_fatal_error_handler(prefix: *const c_char);
    pub fn wpd_module_flag_int(module: LLVMModuleRef, key: *const c_char, len: usize, out: *mut u64) -> c_int;
    pub fn wpd_rewrite_uniform_ret(call: LLVMValueRef, value: u64) -> Status;
    pub fn wpd_rewrite_unique_ret(
        call: LLVMValueRef,
        test: LLVMValueRef,
        member: *const c_char,
        len: usize,
        offset: u64,
        is_one: c_int,
    ) -> Status;
    pub fn wpd_rewrite_virtual_const_prop(
        call: LLVMValueRef,
        test: LLVMValueRef,
        byte_offset: i64,
        bit: c_int,
        width: u32,
    ) -> Status;
    pub fn wpd_kill_vtable_slots(
        module: LLVMModuleRef,
        name: *const c_char,
        len: usize,
        offsets: *const u64,
        n: usize,
        local: c_int,
    ) -> usize;
    pub fn wpd_rewrite_vtable_layout(
        module: LLVMModuleRef,
        name: *const c_char,
        len: usize,
        before: *const u8,
        blen: usize,
        after: *const u8,
        alen: usize,
        local: c_int,
    ) -> c_int;
    pub fn wpd_add_hidden_alias(
        module: LLVMModuleRef,
        symbol: *const c_char,
        slen: usize,
        alias: *const c_char,
        alen: usize,
    ) -> Status;
    pub fn wpd_create_target_machine(
        triple: *const c_char,
        cpu: *const c_char,
        features: *const c_char,
        opt_level: c_int,
        pic: c_int,
        function_sections: c_int,
        data_sections: c_int,
        err: *mut *mut c_char,
    ) -> LLVMTargetMachineRef;
    pub fn wpd_merge_hidden_alias(
        module: LLVMModuleRef,
        symbol: *const c_char,
        slen: usize,
        alias: *const c_char,
        alen: usize,
    ) -> Status;
    pub fn wpd_rewrite_speculative(call: LLVMValueRef, callee: LLVMValueRef) -> Status;
    pub fn wpd_rewrite_closed_set(
        call: LLVMValueRef,
        test: LLVMValueRef,
        callees: *const LLVMValueRef,
        ncases: usize,
        first: *const usize,
        names: *const *const c_char,
        name_lens: *const usize,
        offsets: *const u64,
        fallback: c_int,
        weights: *const u64,
        rest: u64,
        indexed: c_int,
        index_offset: i64,
        case_values: *const u64,
        noinline: c_int,
    ) -> Status;
    pub fn wpd_function_profile_ids(function: LLVMValueRef, out: *mut u64) -> usize;
    pub fn wpd_call_value_profile(
        call: LLVMValueRef,
        total: *mut u64,
        ids: *mut u64,
        counts: *mut u64,
        cap: usize,
    ) -> usize;
    pub fn wpd_rewrite_single_impl(call: LLVMValueRef, callee: LLVMValueRef) -> Status;
    pub fn wpd_named_global(module: LLVMModuleRef, name: *const c_char, len: usize, kind: c_int) -> LLVMValueRef;
    pub fn wpd_callee_or_declare(call: LLVMValueRef, name: *const c_char, len: usize) -> LLVMValueRef;
    pub fn wpd_count_type_checks(module: LLVMModuleRef) -> usize;
    pub fn wpd_rewrite_type_tests(module: LLVMModuleRef) -> usize;
    pub fn wpd_strip_const_offset(module: LLVMModuleRef, v: LLVMValueRef, offset: *mut i64) -> LLVMValueRef;
    pub fn wpd_relative_entry(
        module: LLVMModuleRef,
        v: LLVMValueRef,
        target: *mut LLVMValueRef,
        base: *mut LLVMValueRef,
        base_offset: *mut i64,
    ) -> c_int;
}

// `shim/codegen.cpp`: code generation as lld's LTO backends do it.
unsafe extern "C" {
    pub fn wpd_tm_set_debugger_tuning(tm: LLVMTargetMachineRef, tuning: c_int);
    pub fn wpd_tm_set_emulated_tls(tm: LLVMTargetMachineRef, on: c_int);
    pub fn wpd_tm_set_tls_descriptors(tm: LLVMTargetMachineRef, on: c_int);
    pub fn wpd_tm_set_stack_size_section(tm: LLVMTargetMachineRef, on: c_int);
    pub fn wpd_tm_set_split_machine_functions(tm: LLVMTargetMachineRef, on: c_int);
    pub fn wpd_tm_set_jmc_instrument(tm: LLVMTargetMachineRef, on: c_int);
    pub fn wpd_run_passes_with_profile(
        module: LLVMModuleRef,
        pipeline: *const c_char,
        tm: LLVMTargetMachineRef,
        vectorize: c_int,
        sample_profile: *const c_char,
        cs_profile: *const c_char,
        cs_generate: c_int,
        err: *mut *mut c_char,
    ) -> Status;
    pub fn wpd_emit_object(
        tm: LLVMTargetMachineRef,
        module: LLVMModuleRef,
        dwo_path: *const c_char,
        out: *mut *mut c_char,
        len: *mut usize,
        err: *mut *mut c_char,
    ) -> Status;
}

// `shim/symtab.cpp`: bitcode symbol tables (LLVM's irsymtab) for resolution.
unsafe extern "C" {
    pub fn wpd_target_error(triple: *const c_char, len: usize) -> *mut c_char;
    pub fn wpd_symtab_read(data: *const c_char, len: usize, err: *mut *mut c_char) -> *mut c_void;
    pub fn wpd_symtab_num_symbols(table: *const c_void) -> usize;
    pub fn wpd_symtab_num_comdats(table: *const c_void) -> usize;
    pub fn wpd_symtab_num_modules(table: *const c_void) -> usize;
    pub fn wpd_symtab_symbol(
        table: *const c_void,
        i: usize,
        name: *mut *const c_char,
        name_len: *mut usize,
        flags: *mut u32,
        visibility: *mut u32,
        comdat: *mut c_int,
        common_size: *mut u64,
        common_align: *mut u32,
    );
    pub fn wpd_symtab_symbol_section(table: *const c_void, i: usize, name: *mut *const c_char, name_len: *mut usize);
    pub fn wpd_symtab_comdat(
        table: *const c_void,
        i: usize,
        name: *mut *const c_char,
        name_len: *mut usize,
        kind: *mut c_int,
    );
    pub fn wpd_symtab_free(table: *mut c_void);
    pub fn wpd_demangle(name: *const c_char, len: usize) -> *mut c_char;
}

// `shim/lto.cpp`: LLVM's ThinLTO (lto::LTO) driven with wpd's resolutions.
/// The options of [`wpd_lto_new`]; the layout of `WpdLtoOptions` in the shim.
#[repr(C)]
pub struct LtoOptionsRaw {
    pub opt_level: u32,
    pub cg_opt_level: u32,
    pub cpu: *const c_char,
    pub reloc: c_int,
    pub function_sections: c_int,
    pub data_sections: c_int,
    pub debugger_tuning: c_int,
    pub emulated_tls: c_int,
    pub tls_descriptors: c_int,
    pub stack_size_section: c_int,
    pub split_machine_functions: c_int,
    pub jmc_instrument: c_int,
    pub sample_profile: *const c_char,
    pub cs_profile: *const c_char,
    pub cs_generate: c_int,
    pub dwo_dir: *const c_char,
    pub threads: u32,
    pub verify: c_int,
    pub regular_parts: c_int,
}

/// One of wpd's devirtualizations as LLVM's type-id resolution; the layout
/// of `WpdSlotResolution` in the shim.
#[repr(C)]
pub struct SlotResolutionRaw {
    pub type_id: *const c_char,
    pub type_id_len: usize,
    pub offset: u64,
    /// Null: a uniform return value for `args`.
    pub single_impl: *const c_char,
    pub single_impl_len: usize,
    /// -1, or the input (from 0, in the order added) whose local function
    /// `single_impl` is.
    pub local_module: i64,
    pub args: *const u64,
    pub arg_count: usize,
    pub value: u64,
}

/// The options of [`wpd_lto_new_index_only`]; the layout of
/// `WpdIndexOnlyOptions` in the shim.
#[repr(C)]
pub struct IndexOnlyOptionsRaw {
    pub old_prefix: *const c_char,
    pub new_prefix: *const c_char,
    pub native_prefix: *const c_char,
    pub emit_imports: c_int,
    pub linked_objects: *const c_char,
    pub whole_program_visibility: c_int,
    pub resolutions: *const SlotResolutionRaw,
    pub resolution_count: usize,
    pub type_ids: *const *const c_char,
    pub type_id_lens: *const usize,
    pub type_id_count: usize,
}

pub type LtoEmitFn = unsafe extern "C" fn(
    ctx: *mut c_void,
    task: u32,
    data: *const c_char,
    len: usize,
    key: *const c_char,
    key_len: usize,
);
/// One thin backend of [`wpd_lto_backend_runs`]: task, estimated work,
/// start and duration in milliseconds.
pub type LtoBackendRunFn = unsafe extern "C" fn(ctx: *mut c_void, task: u32, work: u64, start_ms: f64, ms: f64);
pub type LtoLookupFn = unsafe extern "C" fn(ctx: *mut c_void, task: u32, key: *const c_char, len: usize) -> c_int;
pub type LtoWarnFn = unsafe extern "C" fn(ctx: *mut c_void, text: *const c_char, len: usize);
pub type LtoProgressFn = unsafe extern "C" fn(ctx: *mut c_void);

unsafe extern "C" {
    pub fn wpd_thinlto_layout(
        data: *const c_char,
        len: usize,
        name: *const c_char,
        split_unit: *mut c_int,
        split_flag: *mut c_int,
        err: *mut *mut c_char,
    ) -> Status;
    pub fn wpd_split_thin_part(
        data: *const c_char,
        len: usize,
        name: *const c_char,
        out: *mut *mut c_char,
        out_len: *mut usize,
        err: *mut *mut c_char,
    ) -> Status;
    pub fn wpd_write_thinlto_bitcode(
        module: LLVMModuleRef,
        split_flag: c_int,
        kept_names: *const *const c_char,
        kept_count: usize,
        out: *mut *mut c_char,
        len: *mut usize,
        err: *mut *mut c_char,
    ) -> Status;
    pub fn wpd_lto_new(options: *const LtoOptionsRaw, post_import_only: c_int) -> *mut c_void;
    pub fn wpd_lto_free(lto: *mut c_void);
    pub fn wpd_lto_new_index_only(
        options: *const LtoOptionsRaw,
        index_only: *const IndexOnlyOptionsRaw,
        err: *mut *mut c_char,
    ) -> *mut c_void;
    pub fn wpd_write_empty_index(path: *const c_char, err: *mut *mut c_char) -> Status;
    pub fn wpd_lto_input_open(
        data: *const c_char,
        len: usize,
        name: *const c_char,
        err: *mut *mut c_char,
    ) -> *mut c_void;
    pub fn wpd_lto_input_free(input: *mut c_void);
    pub fn wpd_lto_input_symbol_count(input: *mut c_void) -> usize;
    pub fn wpd_lto_input_symbol(
        input: *mut c_void,
        i: usize,
        name: *mut *const c_char,
        name_len: *mut usize,
        section: *mut *const c_char,
        section_len: *mut usize,
        flags: *mut u32,
    );
    pub fn wpd_lto_add(lto: *mut c_void, input: *mut c_void, res: *const u8, n: usize, err: *mut *mut c_char)
    -> Status;
    pub fn wpd_lto_join(lto: *mut c_void, joined: usize, host: usize, err: *mut *mut c_char) -> Status;
    pub fn wpd_lto_import_variables_only(lto: *mut c_void, module: usize, err: *mut *mut c_char) -> Status;
    pub fn wpd_lto_run(
        lto: *mut c_void,
        emit: LtoEmitFn,
        ctx: *mut c_void,
        warn: LtoWarnFn,
        progress: LtoProgressFn,
        progress_ctx: *mut c_void,
        lookup: Option<LtoLookupFn>,
        lookup_ctx: *mut c_void,
        err: *mut *mut c_char,
    ) -> Status;
    pub fn wpd_lto_backend_runs(lto: *mut c_void, each: LtoBackendRunFn, ctx: *mut c_void);
    pub fn wpd_thin_backend(
        options: *const LtoOptionsRaw,
        data: *const c_char,
        len: usize,
        name: *const c_char,
        task: u32,
        out: *mut *mut c_char,
        out_len: *mut usize,
        warn: LtoWarnFn,
        ctx: *mut c_void,
        err: *mut *mut c_char,
    ) -> Status;
    pub fn wpd_cache_policy_check(policy: *const c_char, err: *mut *mut c_char) -> Status;
    pub fn wpd_cache_prune(dir: *const c_char, policy: *const c_char, err: *mut *mut c_char) -> Status;
}

// `shim/link.cpp`: lld's ELF driver in-process, LLVM's archive writer.
unsafe extern "C" {
    pub fn wpd_lld_link(argv: *const *const c_char, argc: usize, can_run_again: *mut c_int) -> c_int;
    pub fn wpd_write_archive(
        path: *const c_char,
        names: *const *const c_char,
        data: *const *const c_char,
        lens: *const usize,
        count: usize,
        err: *mut *mut c_char,
    ) -> Status;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_statuses_are_failures() {
        assert_eq!(Status::OK.outcome(), Outcome::Done);
        assert_eq!(Status::DECLINED.outcome(), Outcome::Declined);
        assert_eq!(Status::FAILED.outcome(), Outcome::Failed);
        for v in [-1, 3, 42, i32::MIN, i32::MAX] {
            assert_eq!(Status(v).outcome(), Outcome::Failed, "{v}");
            assert!(!Status(v).is_ok());
        }
        assert_eq!(Status(7).check(ShimMessage::new(), "it failed"), Err(Error::msg("it failed")));
        assert_eq!(Status::DECLINED.check_declined(ShimMessage::new(), "x"), Ok(false));
        assert_eq!(Status::OK.check_declined(ShimMessage::new(), "x"), Ok(true));
    }

    #[test]
    fn a_message_is_taken_once_and_freed() {
        // SAFETY: the name is passed with its length; the result is a
        // malloc'd string (the name is mangled), owned by nobody else.
        let m = unsafe { ShimMessage::from_raw(wpd_demangle(b"_Z1fv".as_ptr().cast(), 5)) };
        assert_eq!(m.take().as_deref(), Some("f()"));
        // Dropped without being taken: the drop frees it.
        // SAFETY: as above.
        drop(unsafe { ShimMessage::from_raw(wpd_demangle(b"_Z1gv".as_ptr().cast(), 5)) });
        assert_eq!(ShimMessage::new().take(), None);
        assert_eq!(ShimMessage::new().or("fallback"), "fallback");
    }
}
