//! Unique return value: a boolean result is true (or false) for exactly one
//! vtable, so the call is a comparison of the object's vtable pointer with
//! that vtable's address point.

use wpd_llvm::{Module, RewriteError, VirtualCall};
use wpd_summary::ArgDecision;

/// Replaces `call` by the comparison `decision` names (the caller checks
/// that it names a member).
pub fn apply(module: &Module<'_>, call: VirtualCall<'_>, decision: &ArgDecision) -> Result<(), RewriteError> {
    let member = decision.member_symbol.as_deref().unwrap_or_default();
    module.rewrite_unique_ret(call, &wpd_summary::name::to_bytes(member), decision.member_offset, decision.value == 1)
}
