//! Virtual constant propagation: each vtable's result for these arguments is
//! stored beside it (see `layout` and `vtable_layout`), so the call is a
//! load at a fixed offset from the object's vtable pointer.

use wpd_llvm::{Module, RewriteError, VirtualCall};
use wpd_summary::ArgDecision;

/// Replaces `call` by the load `decision` places.
pub fn apply(module: &Module<'_>, call: VirtualCall<'_>, decision: &ArgDecision) -> Result<(), RewriteError> {
    module.rewrite_virtual_const_prop(call, decision.byte_offset, decision.bit, decision.width)
}
