//! wpd-link: the link, decided without LLVM — what the linker links
//! ([`resolve`]) and the thin link over the summaries of what it links.
//!
//! ```text
//! resolve     link line + symbol tables ──► LinkModel: inputs and members
//!             loaded (in the linker's order), prevailing definitions,
//!             symbols referenced from outside the bitcode
//! native      native objects and libraries ──► NativeScan (classes seen,
//!             references) for validation
//! hierarchy   summaries ──► Link: symbols, liveness, type id → vtables
//! policy      link facts + --whole-program-visibility ──► closed/open
//! decide      Link + Policy ──► Plan (uses layout for constant propagation)
//! outcome     what the plan predicts for each call site
//! ```
//!
//! Bitcode symbol tables come from the caller (`wpd-llvm` reads them with
//! LLVM's irsymtab), so this crate and its tests build without LLVM; the
//! `wpd` crate (summarize, backend) is the only LLVM user of the pipeline.

pub mod decide;
pub mod error;
pub mod file_kind;
pub mod hierarchy;
pub mod layout;
pub mod lto;
pub mod native;
pub mod outcome;
pub mod policy;
pub mod resolve;

pub use resolve::{
    Error, Flavor, InputId, InputState, Item, LinkLine, LinkModel, Loaded, LoadedKind, MemberId, MovableGroup,
    OutsideRefs, Refs, resolve,
};

/// The thin link: merge the summaries, apply the policy, decide every slot.
pub fn thin_link(summaries: &[wpd_summary::ModuleSummary], policy: &policy::Policy) -> wpd_summary::Plan {
    let link = hierarchy::Hierarchy::new(summaries, &policy.facts);
    decide::decide(&link, policy)
}
