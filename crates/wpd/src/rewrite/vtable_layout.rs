//! Rebuilds every vtable this module defines that the plan lays out, as
//! `{ [before], original, [after] }` with the original symbol an alias to the
//! middle. Every module with a copy (comdat, linkonce_odr) rebuilds it from
//! the same plan bytes, so the copies stay identical; available_externally
//! copies become declarations.

use wpd_llvm::{Module, VtableRebuild};
use wpd_summary::{ModuleIdx, Plan};

/// Applies the plan's layouts to the vtables of `module` (part of plan
/// module `index`); returns the indices (in `plan.layouts`) of the layouts
/// it rebuilt.
pub fn apply(module: &Module<'_>, plan: &Plan, index: ModuleIdx) -> Vec<u32> {
    plan.layouts
        .iter()
        .enumerate()
        .filter(|(_, l)| l.module.is_none_or(|m| m == index))
        .filter(|(_, l)| {
            module.rewrite_vtable_layout(&l.symbol, &l.before, &l.after, l.module.is_some()) == VtableRebuild::Rebuilt
        })
        .map(|(i, _)| i as u32)
        .collect()
}
