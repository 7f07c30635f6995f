//! Virtual constant propagation: each vtable's result for these arguments is
//! stored beside it (see `layout` and `vtable_layout`), so the call is a
//! load at a fixed offset from the object's vtable pointer.

use wpd_llvm::{Module, Value};
use wpd_summary::ArgDecision;

/// Replaces `call` (guarded by `test`) by the load `decision` places.
pub fn apply(module: &Module<'_>, call: Value<'_>, test: Value<'_>, decision: &ArgDecision) -> bool {
    module.rewrite_vcp(call, test, decision.byte_offset, decision.bit, decision.width)
}
