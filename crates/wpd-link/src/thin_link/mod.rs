//! The thin link: every summary of the link merged into one class
//! hierarchy, the visibility policy applied and checked against the native
//! side, and a decision for every vtable slot a call site uses.
//!
//! ```text
//! native      native objects and libraries ──► NativeScan (classes seen,
//!             references, native C++ code) for validation; dwarf tells
//!             C and assembly objects by their debug information
//! hierarchy   summaries ──► Hierarchy: symbols, liveness, type id → vtables,
//!             which bodies the program runs
//! policy      link facts + --whole-program-visibility ──► closed/open
//! decide      Hierarchy + Policy ──► Plan (layout: bytes beside vtables
//!             for constant propagation)
//! dead_slots  Hierarchy + Plan ──► vtable slots no code can load
//! outcome     what the plan predicts for each call site
//! ```

pub mod dead_slots;
pub mod decide;
mod dwarf;
pub mod hierarchy;
pub mod layout;
pub mod native;
pub mod outcome;
pub mod policy;
