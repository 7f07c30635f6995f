//! Virtual call sites: every `llvm.type.test`, `llvm.public.type.test` and
//! `llvm.type.checked.load`, with the calls each one guards, found by LLVM's
//! own `findDevirtualizableCallsFor*` (constant-offset loads from the tested
//! pointer, calls dominated by the test).

use super::{ScannedCall, TypeIdNamer};
use wpd_llvm::{Module, TypeKind, Value};
use wpd_summary::{CallKind, CallSite, ConstArg, RetKind, SlotRead, TestKind, TypeId};

/// Call sites of every function definition of `module` (every one with a
/// body: a lazily read module yields those of the bodies read), in program
/// order. Each call appears once (the module's scan gives a call dominated by
/// several tests to the first), so each is rewritten at most once. The
/// tested pointers' other reads of slots go to `reads`.
pub(super) fn collect<'m>(
    module: &'m Module<'_>,
    index: usize,
    ids: &mut TypeIdNamer,
    reads: &mut Vec<SlotRead>,
) -> Vec<ScannedCall<'m>> {
    let mut out = Vec::new();
    // The function of the previous test, its name (made once per function:
    // a body holds many tests) and that test's number in it.
    let mut current: Option<(Value<'m>, wpd_summary::Name, u32)> = None;
    for test in module.type_tests() {
        let (function, test_index) = match current.take() {
            Some((f, name, n)) if f == test.function => (name, n + 1),
            _ => (test.function.name().into(), 0),
        };
        current = Some((test.function, function.clone(), test_index));
        let kind = test.kind;
        let args = test.inst.call_args();
        let id_arg = if kind == TestKind::TypeCheckedLoad { 2 } else { 1 };
        let type_id = args
            .get(id_arg)
            .and_then(|a| ids.name(index, &a.md_operand()))
            .unwrap_or_else(|| TypeId::from("<non-constant type id>"));
        let assumed = match kind {
            TestKind::TypeCheckedLoad => !test.non_call_uses && !test.checked,
            _ => test.feeds_assume,
        };
        reads.extend(test.slot_reads.iter().map(|&offset| SlotRead {
            function: function.clone(),
            type_id: type_id.clone(),
            offset,
        }));
        let base = CallSite {
            function,
            test_index,
            type_id,
            offset: None,
            kind,
            assumed,
            call: None,
            const_args: None,
            ret: RetKind::Void,
            ret_width: 0,
            location: test.inst.debug_loc().map(Into::into),
            calls_sharing_test: test.calls.len() as u32,
        };
        if test.calls.is_empty() {
            // A test that guards no call is a call site only when its result
            // is also a real check (a use other than `llvm.assume`, or a
            // loaded pointer used other than by calls): one that merely
            // feeds an assumption has nothing to devirtualize (clang's own
            // optimizer already made its call direct, or it was claimed by
            // an earlier test). clang's summary index leaves such tests out
            // too, and the summarizer trusts that index to find the bodies
            // holding tests; the numbering (`test_index`) still counts them.
            let checks = match kind {
                TestKind::TypeCheckedLoad => test.non_call_uses,
                _ => test.non_assume_uses,
            };
            if checks {
                out.push(ScannedCall { site: base, call: None, part: index });
            }
            continue;
        }
        for (call, offset) in test.calls {
            let inst = call.inst();
            let (ret, ret_width) = ret_of(inst);
            let site = CallSite {
                offset: Some(offset),
                call: Some(if inst.is_invoke() {
                    CallKind::Invoke
                } else if inst.is_must_tail_call() {
                    CallKind::MustTailCall
                } else {
                    CallKind::Call
                }),
                const_args: const_args(inst).map(Vec::into_boxed_slice),
                ret,
                ret_width,
                location: inst.debug_loc().map(Into::into).or_else(|| base.location.clone()),
                ..base.clone()
            };
            out.push(ScannedCall { site, call: Some(call), part: index });
        }
    }
    out
}

/// All arguments after `this` when every one is an integer constant of at
/// most 64 bits (LLVM's condition for evaluating targets).
fn const_args(call: Value<'_>) -> Option<Vec<ConstArg>> {
    call.call_args()
        .iter()
        .skip(1)
        .map(|a| {
            let width = a.ty().int_width().filter(|w| *w <= 64)?;
            Some(ConstArg { width, value: a.as_const_int()? })
        })
        .collect()
}

/// Return kind and width of a call.
fn ret_of(call: Value<'_>) -> (RetKind, u32) {
    let ty = call.ty();
    match ty.kind() {
        TypeKind::LLVMVoidTypeKind => (RetKind::Void, 0),
        TypeKind::LLVMIntegerTypeKind => (RetKind::Int, ty.int_width().unwrap_or(0)),
        _ => (RetKind::Other, 0),
    }
}
