//! Guarded speculative devirtualization: for calls left indirect whose slot
//! has one or two targets visible in the link, compare the loaded function
//! pointer with each target and call it directly on a hit; any other
//! function (a class in a shared library, a dlopen'ed plugin) still takes
//! the original indirect call.

use wpd_llvm::{Module, RewriteError, VirtualCall};

/// Guards `call` with direct calls to `targets` (in order); returns how many
/// guards were added.
pub fn apply(module: &Module<'_>, call: VirtualCall<'_>, targets: &[String]) -> Result<u32, RewriteError> {
    let bytes: Vec<std::borrow::Cow<'_, [u8]>> = targets.iter().map(|t| wpd_summary::name::to_bytes(t)).collect();
    let names: Vec<&[u8]> = bytes.iter().map(|b| b.as_ref()).collect();
    module.rewrite_speculative(call, &names)
}
