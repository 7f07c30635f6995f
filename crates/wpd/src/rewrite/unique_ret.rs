//! Unique return value: a boolean result is true (or false) for exactly one
//! vtable, so the call is a comparison of the object's vtable pointer with
//! that vtable's address point.

use wpd_llvm::{Module, Value};
use wpd_summary::ArgDecision;

/// Replaces `call` (guarded by `test`) by the comparison `decision` names.
pub fn apply(module: &Module<'_>, call: Value<'_>, test: Value<'_>, decision: &ArgDecision) -> bool {
    let Some(member) = &decision.member_symbol else { return false };
    module.rewrite_unique(call, test, member, decision.member_offset, decision.value == 1)
}
