//! Single-implementation devirtualization: the indirect call becomes a
//! direct call of the slot's only target. The type test, assume and slot
//! load become dead and are removed by `type_tests` and the pipeline.

use wpd_llvm::{Module, Value};

/// Points `call` at `target`, declaring it in `module` when needed.
pub fn apply<'m>(module: &'m Module<'_>, call: Value<'m>, target: &str) {
    let callee = module.function_or_declare(target, call);
    call.set_called_function(callee);
}
