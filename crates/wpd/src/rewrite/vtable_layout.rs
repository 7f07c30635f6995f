//! Rebuilds every vtable this module defines that the plan lays out, as
//! `{ [before], original, [after] }` with the original symbol an alias to the
//! middle. Every module with a copy (comdat, linkonce_odr) rebuilds it from
//! the same plan bytes, so the copies stay identical; available_externally
//! copies become declarations.

use wpd_llvm::{Module, VtableRebuild};
use wpd_summary::Plan;

/// Applies the plan's layouts to the vtables of `module` (part of plan
/// module `index`); returns how many were rebuilt.
pub fn apply(module: &Module<'_>, plan: &Plan, index: u32) -> usize {
    plan.layouts
        .iter()
        .filter(|l| l.module.is_none_or(|m| m == index))
        .filter(|l| module.rebuild_vtable(&l.symbol, &l.before, &l.after) == VtableRebuild::Rebuilt)
        .count()
}
