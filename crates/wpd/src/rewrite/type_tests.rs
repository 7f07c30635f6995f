//! Removal of leftover type tests: codegen cannot lower `llvm.type.test`
//! without a type-test resolution, and wpd has applied everything it
//! learned from them.

use wpd_llvm::Module;

/// Drops every type test, public type test and checked load; returns how many.
pub fn apply(module: &Module<'_>) -> usize {
    module.rewrite_type_tests()
}
