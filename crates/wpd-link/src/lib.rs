//! wpd-link: the link, decided without LLVM, in two phases:
//!
//! ```text
//! resolve     link line + symbol tables ──► LinkModel: inputs and members
//!             loaded (in the linker's order), prevailing definitions,
//!             symbols referenced from outside the bitcode, exports,
//!             preemptible definitions
//! thin_link   summaries + LinkModel facts ──► Plan (hierarchy, policy,
//!             decide, layout; native scan for validation)
//! lto         LinkModel ──► the symbol resolutions LLVM's ThinLTO gets
//! ```
//!
//! Bitcode symbol tables come from the caller (`wpd-llvm` reads them with
//! LLVM's irsymtab), so this crate and its tests build without LLVM; the
//! `wpd` crate (summarize, rewrite, backends) is the only LLVM user of the
//! pipeline.

pub mod error;
pub mod file_kind;
pub mod lto;
pub mod resolve;
pub mod thin_link;

/// The thin link's modules, where their users name them.
pub use thin_link::{dead_slots, decide, hierarchy, layout, native, outcome, policy};

pub use resolve::{
    Error, Flavor, InputId, InputState, Item, LinkLine, LinkModel, Loaded, LoadedKind, MemberId, MovableGroup,
    OutsideRefs, Refs, resolve,
};

/// The thin link: merge the summaries, apply the policy, decide every slot.
pub fn thin_link(summaries: &[wpd_summary::ModuleSummary], policy: &policy::Policy) -> wpd_summary::Plan {
    let link = hierarchy::Hierarchy::new(summaries, &policy.facts);
    decide::decide(&link, policy)
}
