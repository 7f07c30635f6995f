//! Virtual calls and their rewrites.
//!
//! [`Module::type_tests`] scans a module once and hands out one
//! [`VirtualCall`] per call instruction, however many type tests dominate it
//! (LLVM's WholeProgramDevirt keeps an `OptimizedCalls` set for the same
//! reason). A `VirtualCall` is neither `Clone` nor `Copy`, and every rewrite
//! takes it by value: a rewrite that erases the call consumes the only
//! handle to it, so an erased instruction cannot be touched again.

use crate::{Module, Type, Value, ffi};
use llvm_sys::prelude::LLVMValueRef;
use std::collections::HashSet;
use std::marker::PhantomData;
use std::os::raw::c_int;
use wpd_summary::TestKind;

/// One `llvm.type.test`, `llvm.public.type.test` or `llvm.type.checked.load`
/// and the virtual calls it guards that no earlier test of the module
/// already claimed.
pub struct TypeTest<'m> {
    /// The intrinsic call.
    pub inst: Value<'m>,
    /// The function holding it (and its calls).
    pub function: Value<'m>,
    pub kind: TestKind,
    /// (call, byte offset of the slot from the address point), in LLVM's
    /// order; only calls of `function`.
    pub calls: Vec<(VirtualCall<'m>, u64)>,
    /// A type test whose result feeds `llvm.assume` directly.
    pub feeds_assume: bool,
    /// A type test whose result has a use other than `llvm.assume` (a
    /// real check).
    pub non_assume_uses: bool,
    /// A checked load with uses other than calls (blocks rewriting).
    pub non_call_uses: bool,
    /// A checked load whose check bit guards something (CFI).
    pub checked: bool,
    /// Slots the tested pointer is read at besides the calls of the
    /// module's tests (by byte offset from the address point; `None`: any
    /// slot), for dead-slot elimination ([`Module::type_tests`]).
    pub slot_reads: Vec<Option<u64>>,
}

/// A virtual call found by [`Module::type_tests`]: the only handle to that
/// call instruction. Rewrites consume it.
pub struct VirtualCall<'m> {
    call: Value<'m>,
    /// The vtable pointer the guarding test tested.
    vptr: Value<'m>,
    _unique: PhantomData<*mut ()>,
}

/// One target of a closed-set dispatch
/// ([`Module::rewrite_closed_set`]): the function the direct call names and
/// the (vtable symbol, address point) of every class that reaches it.
#[derive(Debug, Clone)]
pub struct DispatchTarget<'n> {
    pub callee: &'n [u8],
    pub vtables: Vec<(&'n [u8], u64)>,
    /// The case index its classes hold ([`DispatchKey::CaseIndex`]).
    pub case_index: u8,
}

/// What a closed-set dispatch compares ([`Module::rewrite_closed_set`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DispatchKey {
    /// The vtable pointer, with each target's classes' address points.
    VtablePointer,
    /// The one-byte case index stored at this offset from every class's
    /// address point, with each target's `case_index`.
    CaseIndex { offset: i64 },
}

/// Why a rewrite did not apply; the call is unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RewriteError {
    /// The call's type does not fit the rewrite (e.g. not an integer of the
    /// planned width).
    CallType,
    /// The target name belongs to a variable, an ifunc or an alias of
    /// something other than a function.
    NotAFunction(String),
    /// The target's prototype differs from the call's (speculation only).
    Prototype(String),
}

impl std::fmt::Display for RewriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RewriteError::CallType => write!(f, "the call's type does not fit the planned rewrite"),
            RewriteError::NotAFunction(n) => write!(f, "{n} is not a function in this module"),
            RewriteError::Prototype(n) => write!(f, "{n} has another prototype than the call"),
        }
    }
}

impl<'m> VirtualCall<'m> {
    /// The call instruction, for read-only queries (arguments, type,
    /// location). Rewrites go through the consuming methods of [`Module`].
    pub fn inst(&self) -> Value<'m> {
        self.call
    }

    /// The function the call is in.
    pub fn function(&self) -> Value<'m> {
        // SAFETY: the handle guarantees a live instruction, which is in a
        // block of a function (the scan only finds calls in bodies).
        Value::new(unsafe {
            llvm_sys::core::LLVMGetBasicBlockParent(llvm_sys::core::LLVMGetInstructionParent(self.call.raw()))
        })
    }

    /// The call's indirect-call value profile, when the build attached one
    /// (`-fprofile-use`, `-fprofile-instr-use`): `None` without one.
    pub fn value_profile(&self) -> Option<ValueProfile> {
        const MOST: usize = 64;
        let (mut total, mut ids, mut counts) = (0u64, [0u64; MOST], [0u64; MOST]);
        // SAFETY: the handle guarantees a live instruction; the arrays hold
        // the `MOST` entries the shim may write, and it returns how many it
        // wrote.
        let n = unsafe {
            ffi::wpd_call_value_profile(self.call.raw(), &mut total, ids.as_mut_ptr(), counts.as_mut_ptr(), MOST)
        };
        (total > 0).then(|| ValueProfile {
            total,
            targets: ids[..n].iter().copied().zip(counts[..n].iter().copied()).collect(),
        })
    }
}

/// An indirect call's value profile: how often the call ran, and how often
/// it called each profiled target (by the target's profile id, see
/// [`Value::profile_ids`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueProfile {
    pub total: u64,
    pub targets: Vec<(u64, u64)>,
}

/// Whether LLVM may inline the direct calls a closed-set dispatch makes
/// ([`Module::rewrite_closed_set`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirectCalls {
    /// As any direct call: the inliner decides.
    Inlinable,
    /// Each marked `noinline` at the call, and the dispatching function
    /// given an inline hint: it grows only by the comparisons and calls,
    /// and is still inlined where it was.
    NotInlined,
}

/// How a closed-set dispatch ends ([`Module::rewrite_closed_set`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DispatchEnd {
    /// The last target is called without a test; no indirect call is left.
    LastUntested,
    /// Every target is tested and the indirect call stays for the rest.
    Fallback,
}

impl<'c> Module<'c> {
    /// Every type test and checked load of every function definition, in
    /// program order, with the calls each guards. A call dominated by
    /// several tests belongs to the first of them only.
    pub fn type_tests(&self) -> Vec<TypeTest<'_>> {
        let mut out = Vec::new();
        let mut claimed: HashSet<usize> = HashSet::new();
        // Per test, the shim's raw reads: (offset, the calling instruction).
        let mut raw_reads: Vec<Vec<(i64, Option<usize>)>> = Vec::new();
        for f in self.functions() {
            if f.is_declaration() {
                continue;
            }
            let mut tree: Option<DomTree<'_>> = None;
            for block in f.blocks() {
                for inst in block.instructions() {
                    let Some(kind) = test_kind(inst) else { continue };
                    let tree = match &tree {
                        Some(t) => t,
                        None => tree.insert(DomTree::new(f)),
                    };
                    let found = tree.virtual_calls(inst);
                    let vptr = inst.call_args().first().copied().unwrap_or(inst);
                    let calls = found
                        .calls
                        .into_iter()
                        .filter(|(call, _)| claimed.insert(call.id()))
                        .map(|(call, offset)| (VirtualCall { call, vptr, _unique: PhantomData }, offset))
                        .collect();
                    raw_reads.push(test_slot_reads(inst));
                    out.push(TypeTest {
                        inst,
                        function: f,
                        kind,
                        calls,
                        feeds_assume: found.feeds_assume,
                        non_assume_uses: found.non_assume_uses,
                        non_call_uses: found.non_call_uses,
                        checked: found.checked,
                        slot_reads: Vec::new(),
                    });
                }
            }
        }
        // A load whose every user is a call some test of the module
        // guards is read only by those calls' records; every other load
        // (or use) is a read of its own.
        for (test, raw) in out.iter_mut().zip(raw_reads) {
            let mut reads: Vec<Option<u64>> = raw
                .into_iter()
                .filter(|(_, call)| call.is_none_or(|c| !claimed.contains(&c)))
                .map(|(offset, _)| u64::try_from(offset).ok())
                .collect();
            reads.sort_unstable();
            reads.dedup();
            test.slot_reads = reads;
        }
        out
    }

    /// The loads of `func` straight from a vtable global (a global with
    /// `!type` metadata) at a constant address: the global and the byte
    /// offset from its start (`None`: not constant). `None` overall: the
    /// shim could not allocate, so anything may be read.
    pub fn vtable_loads(&self, func: Value<'_>) -> Option<Vec<(Value<'c>, Option<u64>)>> {
        let mut globals: *mut LLVMValueRef = std::ptr::null_mut();
        let mut offsets: *mut i64 = std::ptr::null_mut();
        // SAFETY: the shim checks that `func` is a function definition; it
        // returns malloc'd arrays of the returned length, or usize::MAX
        // (nothing allocated) when it could not allocate.
        let n = unsafe { ffi::wpd_vtable_loads(func.raw(), &mut globals, &mut offsets) };
        // SAFETY: as the shim promised above.
        let (gs, os) = unsafe { take_arrays(n, globals, offsets) }?;
        Some(gs.into_iter().zip(os).map(|(g, o)| (Value::new(g), u64::try_from(o).ok())).collect())
    }

    /// The loads of `func` that read a vtable slot without a type test
    /// (calls through pointers to virtual member functions): for each
    /// call of a loaded pointer, the function type it is called with;
    /// `None` where a loaded pointer is used otherwise.
    pub fn untested_slot_loads(&self, func: Value<'_>) -> Vec<Option<Type<'c>>> {
        let mut types: *mut llvm_sys::prelude::LLVMTypeRef = std::ptr::null_mut();
        // SAFETY: the shim checks that `func` is a function definition; it
        // returns a malloc'd array of the returned length, or usize::MAX
        // (nothing allocated) when it could not allocate.
        let n = unsafe { ffi::wpd_untested_slot_loads(func.raw(), &mut types) };
        // SAFETY: as the shim promised above; `types` is the only array.
        match unsafe { take_arrays(n, types, std::ptr::null_mut::<u8>()) } {
            None => vec![None],
            Some((ts, _)) => ts.into_iter().map(|t| (!t.is_null()).then(|| Type::new(t))).collect(),
        }
    }

    /// The call targets `name` directly (single implementation). `name` is
    /// looked up as any global value, so a constructor or destructor alias
    /// is called as the alias; it is declared with the call's type when
    /// absent.
    pub fn rewrite_single_impl(&self, call: VirtualCall<'_>, name: &[u8]) -> Result<(), RewriteError> {
        let callee = callee_or_declare(call.call, name)?;
        // SAFETY: both belong to this module; the shim checks their kinds.
        let status = unsafe { ffi::wpd_rewrite_single_impl(call.call.raw(), callee) };
        if status.is_ok() {
            Ok(())
        } else {
            Err(RewriteError::NotAFunction(wpd_summary::name::from_bytes(name).into_owned()))
        }
    }

    /// Guards the call with `if (fp == target) target(...)` for each of
    /// `targets` in order (guarded speculative devirtualization); returns how
    /// many guards were added. The original indirect call stays on the
    /// fallback path.
    pub fn rewrite_speculative(&self, call: VirtualCall<'_>, targets: &[&[u8]]) -> Result<u32, RewriteError> {
        let mut added = 0;
        for name in targets {
            let callee = callee_or_declare(call.call, name)?;
            // SAFETY: the call is live (this handle is its only one and
            // versioning keeps the original instruction); the shim checks
            // kinds and prototypes (WPD_DECLINED when they do not fit).
            if unsafe { ffi::wpd_rewrite_speculative(call.call.raw(), callee) }.is_ok() {
                added += 1;
            }
        }
        Ok(added)
    }

    /// Closed-set dispatch: `cases` are targets of the call's slot, each
    /// with the (vtable symbol, address point) pairs of the classes that
    /// reach it and their case index. The call becomes comparisons of
    /// `key` (the tested vtable pointer with each case's address points, or
    /// the case index loaded beside the vtable with each case's index),
    /// each calling its target directly, and at the `end` a direct call of
    /// the last target without a test or the indirect call left for the
    /// rest; `direct` says whether LLVM may inline the direct calls.
    /// `Ok(false)`: the call does not fit (unchanged).
    pub fn rewrite_closed_set(
        &self,
        call: VirtualCall<'_>,
        cases: &[DispatchTarget<'_>],
        end: DispatchEnd,
        weights: Option<(&[u64], u64)>,
        key: DispatchKey,
        direct: DirectCalls,
    ) -> Result<bool, RewriteError> {
        if weights.is_some_and(|(w, _)| w.len() != cases.len()) {
            return Ok(false);
        }
        let callees: Vec<LLVMValueRef> =
            cases.iter().map(|c| callee_or_declare(call.call, c.callee)).collect::<Result<_, _>>()?;
        let mut first = Vec::with_capacity(cases.len());
        let (mut names, mut lens, mut offsets) = (Vec::new(), Vec::new(), Vec::new());
        for case in cases {
            first.push(names.len());
            for (name, offset) in &case.vtables {
                names.push(name.as_ptr().cast::<std::os::raw::c_char>());
                lens.push(name.len());
                offsets.push(*offset);
            }
        }
        // The end of the last case's address points: a fallback tests it.
        first.push(names.len());
        let case_values: Vec<u64> = cases.iter().map(|c| u64::from(c.case_index)).collect();
        let (indexed, index_offset) = match key {
            DispatchKey::VtablePointer => (0, 0),
            DispatchKey::CaseIndex { offset } => (1, offset),
        };
        // SAFETY: the handle guarantees a live call and its tested pointer;
        // every array is as long as the shim reads it (`callees` and the
        // weights, checked above, and the case values one entry per case,
        // `first` one more; the names, lengths and offsets one per address
        // point, `first` within them), and the names outlive the call. The
        // shim checks kinds and prototypes before changing anything.
        let status = unsafe {
            ffi::wpd_rewrite_closed_set(
                call.call.raw(),
                call.vptr.raw(),
                callees.as_ptr(),
                cases.len(),
                first.as_ptr(),
                names.as_ptr(),
                lens.as_ptr(),
                offsets.as_ptr(),
                c_int::from(end == DispatchEnd::Fallback),
                weights.map_or(std::ptr::null(), |(w, _)| w.as_ptr()),
                weights.map_or(0, |(_, rest)| rest),
                indexed,
                index_offset,
                case_values.as_ptr(),
                c_int::from(direct == DirectCalls::NotInlined),
            )
        };
        Ok(status.is_ok())
    }

    /// Uniform return value: the call becomes the constant `value`.
    pub fn rewrite_uniform_ret(&self, call: VirtualCall<'_>, value: u64) -> Result<(), RewriteError> {
        // SAFETY: the handle guarantees a live call; the shim checks that it
        // is a call base of integer type and erases it.
        let status = unsafe { ffi::wpd_rewrite_uniform_ret(call.call.raw(), value) };
        if status.is_ok() { Ok(()) } else { Err(RewriteError::CallType) }
    }

    /// Unique return value: the call becomes a comparison of the tested
    /// vtable pointer with `member + offset` (`==` when `is_one`, else `!=`).
    pub fn rewrite_unique_ret(
        &self,
        call: VirtualCall<'_>,
        member: &[u8],
        offset: u64,
        is_one: bool,
    ) -> Result<(), RewriteError> {
        // SAFETY: a live call (see above); the member name is passed with its
        // length.
        let status = unsafe {
            ffi::wpd_rewrite_unique_ret(
                call.call.raw(),
                call.vptr.raw(),
                member.as_ptr().cast(),
                member.len(),
                offset,
                is_one as i32,
            )
        };
        if status.is_ok() { Ok(()) } else { Err(RewriteError::CallType) }
    }

    /// Virtual constant propagation: the call becomes a load at `tested
    /// pointer + byte_offset` (one bit of it for 1-bit results).
    pub fn rewrite_virtual_const_prop(
        &self,
        call: VirtualCall<'_>,
        byte_offset: i64,
        bit: Option<u8>,
        width: u32,
    ) -> Result<(), RewriteError> {
        let bit = bit.map_or(-1, i32::from);
        // SAFETY: a live call (see above); the shim checks its width.
        let status =
            unsafe { ffi::wpd_rewrite_virtual_const_prop(call.call.raw(), call.vptr.raw(), byte_offset, bit, width) };
        if status.is_ok() { Ok(()) } else { Err(RewriteError::CallType) }
    }
}

/// The function or alias `name` in the call's module, declared when absent.
fn callee_or_declare(call: Value<'_>, name: &[u8]) -> Result<LLVMValueRef, RewriteError> {
    // SAFETY: `call` is a live call base; the name is passed with its length.
    let v = unsafe { ffi::wpd_callee_or_declare(call.raw(), name.as_ptr().cast(), name.len()) };
    if v.is_null() { Err(RewriteError::NotAFunction(wpd_summary::name::from_bytes(name).into_owned())) } else { Ok(v) }
}

fn test_kind(inst: Value<'_>) -> Option<TestKind> {
    if !inst.is_call() {
        return None;
    }
    match inst.called_function()?.name_bytes() {
        b"llvm.type.test" => Some(TestKind::TypeTest),
        b"llvm.public.type.test" => Some(TestKind::PublicTypeTest),
        b"llvm.type.checked.load" => Some(TestKind::TypeCheckedLoad),
        _ => None,
    }
}

/// The shim's reads of a tested pointer ([`TypeTest::slot_reads`] before
/// the calls of the module's tests are taken out): (byte offset, -1 for
/// any; the call using the loaded pointer, if one does).
fn test_slot_reads(intrinsic_call: Value<'_>) -> Vec<(i64, Option<usize>)> {
    let mut offsets: *mut i64 = std::ptr::null_mut();
    let mut calls: *mut LLVMValueRef = std::ptr::null_mut();
    // SAFETY: `intrinsic_call` is a live call instruction (the shim checks
    // its kind); it returns malloc'd arrays of the returned length, or
    // usize::MAX (nothing allocated) when it could not allocate.
    let n = unsafe { ffi::wpd_test_slot_reads(intrinsic_call.raw(), &mut offsets, &mut calls) };
    // SAFETY: as the shim promised above.
    match unsafe { take_arrays(n, offsets, calls) } {
        None => vec![(-1, None)],
        Some((os, cs)) => {
            os.into_iter().zip(cs).map(|(o, c)| (o, (!c.is_null()).then(|| Value::new(c).id()))).collect()
        }
    }
}

/// The arrays of one scan the shim returned (`wpd_shim::two_arrays`),
/// copied out and freed: `None` for `usize::MAX` (it could not allocate,
/// so the caller takes anything as read). `b` may be null for a scan with
/// one result (then the second vector is empty).
///
/// # Safety
/// `n` is what the shim returned with `a` and `b`: `usize::MAX` or 0 with
/// nothing allocated, or otherwise `a` (and `b` unless null) malloc'd
/// arrays of `n` initialized elements that the caller owns; both are freed
/// here and must not be used again.
unsafe fn take_arrays<A: Copy, B: Copy>(n: usize, a: *mut A, b: *mut B) -> Option<(Vec<A>, Vec<B>)> {
    if n == usize::MAX {
        return None;
    }
    if n == 0 {
        return Some((Vec::new(), Vec::new()));
    }
    // SAFETY: the caller's promise: `n` initialized elements each.
    unsafe {
        let va = std::slice::from_raw_parts(a, n).to_vec();
        let vb = if b.is_null() { Vec::new() } else { std::slice::from_raw_parts(b, n).to_vec() };
        ffi::wpd_free(a.cast());
        if !b.is_null() {
            ffi::wpd_free(b.cast());
        }
        Some((va, vb))
    }
}

/// A dominator tree of one function definition, freed on drop.
struct DomTree<'m> {
    raw: *mut std::ffi::c_void,
    _m: PhantomData<&'m ()>,
}

impl<'m> DomTree<'m> {
    /// Builds the tree of a function definition (callers check).
    fn new(func: Value<'m>) -> DomTree<'m> {
        // SAFETY: the shim checks for a function definition (null
        // otherwise, which `virtual_calls` treats as "no calls").
        let raw = unsafe { ffi::wpd_domtree_new(func.raw()) };
        DomTree { raw, _m: PhantomData }
    }

    /// The virtual calls guarded by a type test or checked load, found the
    /// way LLVM's WholeProgramDevirt finds them, limited to the test's own
    /// function.
    fn virtual_calls(&self, intrinsic_call: Value<'m>) -> Found<'m> {
        let mut calls: *mut LLVMValueRef = std::ptr::null_mut();
        let mut offsets: *mut u64 = std::ptr::null_mut();
        let mut flags = 0;
        // SAFETY: `intrinsic_call` is an instruction of the function the tree
        // was built for (the scan passes calls from that function); the
        // shim returns 0 for a null tree.
        let n = unsafe { ffi::wpd_devirt_calls(intrinsic_call.raw(), self.raw, &mut calls, &mut offsets, &mut flags) };
        let mut out = Found {
            calls: Vec::with_capacity(n),
            feeds_assume: flags & 1 != 0,
            non_assume_uses: flags & 8 != 0,
            non_call_uses: flags & 2 != 0,
            checked: flags & 4 != 0,
        };
        if n > 0 {
            // SAFETY: the shim returned two malloc'd arrays of `n` elements.
            unsafe {
                let cs = std::slice::from_raw_parts(calls, n);
                let os = std::slice::from_raw_parts(offsets, n);
                out.calls.extend(cs.iter().zip(os).map(|(&c, &o)| (Value::new(c), o)));
                ffi::wpd_free(calls.cast());
                ffi::wpd_free(offsets.cast());
            }
        }
        out
    }
}

impl Drop for DomTree<'_> {
    fn drop(&mut self) {
        // SAFETY: allocated by wpd_domtree_new (deleting null is a no-op).
        unsafe { ffi::wpd_domtree_free(self.raw) }
    }
}

/// What the shim found for one test.
struct Found<'m> {
    calls: Vec<(Value<'m>, u64)>,
    feeds_assume: bool,
    non_assume_uses: bool,
    non_call_uses: bool,
    checked: bool,
}
