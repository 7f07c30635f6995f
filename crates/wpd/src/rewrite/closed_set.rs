//! Closed-set dispatch: for calls whose slot's set of targets is complete
//! (the thin link validated that no class outside the bitcode reaches it),
//! compare the vtable pointer with the classes' address points and call
//! each target directly; the last target is called without a test, and no
//! indirect call is left.

use wpd_llvm::{DispatchTarget, Module, RewriteError, VirtualCall};
use wpd_summary::DispatchCase;

/// Dispatches `call` over `cases` (in order); `Ok(false)` when the call
/// does not fit and stays indirect.
pub fn apply(module: &Module<'_>, call: VirtualCall<'_>, cases: &[DispatchCase]) -> Result<bool, RewriteError> {
    let targets: Vec<std::borrow::Cow<'_, [u8]>> =
        cases.iter().map(|c| wpd_summary::name::to_bytes(&c.target)).collect();
    let vtables: Vec<Vec<(std::borrow::Cow<'_, [u8]>, u64)>> = cases
        .iter()
        .map(|c| c.vtables.iter().map(|v| (wpd_summary::name::to_bytes(&v.symbol), v.offset)).collect())
        .collect();
    let cases: Vec<DispatchTarget<'_>> = targets
        .iter()
        .zip(&vtables)
        .map(|(t, vs)| DispatchTarget {
            callee: t.as_ref(),
            vtables: vs.iter().map(|(n, o)| (n.as_ref(), *o)).collect(),
        })
        .collect();
    module.rewrite_closed_set(call, &cases)
}
