//! Single-implementation devirtualization: the indirect call becomes a
//! direct call of the slot's only target. The type test, assume and slot
//! load become dead and are removed by `type_tests` and the pipeline.

use wpd_llvm::{Module, RewriteError, VirtualCall};

/// Points `call` at `target` (a function or an alias of one, declared in
/// `module` when absent).
pub fn apply(module: &Module<'_>, call: VirtualCall<'_>, target: &str) -> Result<(), RewriteError> {
    module.rewrite_single_impl(call, &wpd_summary::name::to_bytes(target))
}
