//! Uniform return value: every target returns the same constant for these
//! arguments, so the call is that constant.

use wpd_llvm::{Module, RewriteError, VirtualCall};

/// Replaces `call` by `value`; fails when the call is not an integer call.
pub fn apply(module: &Module<'_>, call: VirtualCall<'_>, value: u64) -> Result<(), RewriteError> {
    module.rewrite_uniform_ret(call, value)
}
