//! Dead slots ([`wpd_summary::Plan::dead_slots`]): every copy of a vtable
//! this module defines gets a trap stub in place of each entry no code of
//! the program can load, so the functions only those entries named are
//! referenced by nothing and ThinLTO's dead stripping drops them. Runs
//! before [`super::vtable_layout`], which rebuilds a vtable around its
//! (stubbed) initializer.

use wpd_llvm::Module;
use wpd_summary::{ModuleIdx, Plan};

/// Applies the plan's dead slots to the vtables of `module` (part of plan
/// module `index`); returns how many entries it replaced.
pub fn apply(module: &Module<'_>, plan: &Plan, index: ModuleIdx) -> u32 {
    plan.dead_slots
        .iter()
        .filter(|d| d.module.is_none_or(|m| m == index))
        .map(|d| module.kill_vtable_slots(&d.symbol, &d.offsets, d.module.is_some()) as u32)
        .sum()
}
