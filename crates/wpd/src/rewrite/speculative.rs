//! Guarded speculative devirtualization: for calls left indirect whose slot
//! has one or two targets visible in the link, compare the loaded function
//! pointer with each target and call it directly on a hit; any other
//! function (a class in a shared library, a dlopen'ed plugin) still takes
//! the original indirect call.

use wpd_llvm::{Module, Value};

/// Guards `call` with direct calls to `targets` (in order); returns how many
/// guards were added.
pub fn apply<'m>(module: &'m Module<'_>, call: Value<'m>, targets: &[String]) -> u32 {
    let mut added = 0;
    for t in targets {
        let f = module.function_or_declare(t, call);
        if module.speculate(call, f) {
            added += 1;
        }
    }
    added
}
