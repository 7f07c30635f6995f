//! Virtual call sites: every `llvm.type.test`, `llvm.public.type.test` and
//! `llvm.type.checked.load`, with the calls each one guards, found by LLVM's
//! own `findDevirtualizableCallsFor*` (constant-offset loads from the tested
//! pointer, calls dominated by the test).

use super::{ScannedCall, TypeIdNamer};
use wpd_llvm::{DomTree, Module, TypeKind, Value};
use wpd_summary::{CallKind, CallSite, ConstArg, RetKind, TestKind};

/// Call sites of every function definition of `module`, in program order.
pub(super) fn collect<'m>(module: &'m Module<'_>, index: usize, ids: &mut TypeIdNamer) -> Vec<ScannedCall<'m>> {
    let mut out = Vec::new();
    for f in module.functions() {
        if f.is_declaration() {
            continue;
        }
        let mut tree: Option<DomTree<'_>> = None;
        let mut test_index = 0u32;
        let function = f.name();
        for block in f.blocks() {
            for inst in block.instructions() {
                let Some(kind) = test_kind(inst) else { continue };
                let args = inst.call_args();
                let id_arg = if kind == TestKind::TypeCheckedLoad { 2 } else { 1 };
                let type_id = args
                    .get(id_arg)
                    .and_then(|a| ids.name(index, &a.md_operand()))
                    .unwrap_or_else(|| "<non-constant type id>".to_string());
                let tree = tree.get_or_insert_with(|| DomTree::new(f).expect("a function definition"));
                let found = tree.virtual_calls(inst);
                let assumed = match kind {
                    TestKind::TypeCheckedLoad => !found.non_call_uses && !found.checked,
                    _ => found.feeds_assume,
                };
                let base = CallSite {
                    function: function.clone(),
                    test_index,
                    type_id,
                    offset: None,
                    kind,
                    assumed,
                    call: None,
                    const_args: None,
                    ret: RetKind::Void,
                    ret_width: 0,
                    location: inst.debug_loc(),
                    calls_sharing_test: found.calls.len() as u32,
                };
                if found.calls.is_empty() {
                    out.push(ScannedCall { site: base.clone(), call: None, test: inst, part: index });
                }
                for &(call, offset) in &found.calls {
                    let (ret, ret_width) = ret_of(call);
                    let site = CallSite {
                        offset: Some(offset),
                        call: Some(if call.is_invoke() { CallKind::Invoke } else { CallKind::Call }),
                        const_args: const_args(call),
                        ret,
                        ret_width,
                        location: call.debug_loc().or_else(|| base.location.clone()),
                        ..base.clone()
                    };
                    out.push(ScannedCall { site, call: Some(call), test: inst, part: index });
                }
                test_index += 1;
            }
        }
    }
    out
}

fn test_kind(inst: Value<'_>) -> Option<TestKind> {
    if !inst.is_call() {
        return None;
    }
    match inst.called_function()?.name().as_str() {
        "llvm.type.test" => Some(TestKind::TypeTest),
        "llvm.public.type.test" => Some(TestKind::PublicTypeTest),
        "llvm.type.checked.load" => Some(TestKind::TypeCheckedLoad),
        _ => None,
    }
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
