//! The thin-link plan (`.wpdp`): every devirtualization decision of one
//! link, read by every backend. One entry per vtable slot (type id, byte
//! offset) that some call site uses, with the resolution or the reason there
//! is none, plus the local symbols that backends must promote.

use serde::{Deserialize, Serialize};

/// Version of the plan types; bump on any change below.
pub const PLAN_VERSION: u32 = 1;

/// The decisions of one link.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan {
    /// The link facts the decisions were made under.
    pub options: PlanOptions,
    /// The modules of the link, in input order.
    pub modules: Vec<PlanModule>,
    /// One decision per (type id, offset) used by a call site, sorted.
    pub decisions: Vec<SlotDecision>,
    /// Totals for reports.
    pub stats: PlanStats,
}

/// What the thin link was told about the link.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, Default)]
pub struct PlanOptions {
    /// `--lto-whole-program-visibility` or gold's `whole-program-visibility`.
    pub whole_program_visibility: bool,
    /// Output is a shared library (`-shared`).
    pub shared: bool,
    /// `--export-dynamic` (`-E`).
    pub export_dynamic: bool,
    /// Whether every reference from outside the bitcode was known; when not,
    /// every externally visible symbol was treated as a liveness root.
    pub external_refs_known: bool,
}

/// A module of the link.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct PlanModule {
    /// Display name (`a.o`, `lib.a(m.o)`).
    pub name: String,
    /// Content hash of the bitcode, as in its summary: backends find their
    /// module by it.
    pub hash: String,
    /// Local symbols this module must turn into hidden globals, because a
    /// call in another module now names them.
    pub promotions: Vec<Promotion>,
}

/// A local symbol renamed to a unique hidden global.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Promotion {
    pub symbol: String,
    pub promoted: String,
}

/// How a slot's calls are resolved.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// Left alone; see the reason.
    None,
    /// Every target is one function: direct call.
    SingleImpl,
}

impl Resolution {
    /// The word LLVM's remarks use.
    pub fn remark_name(self) -> &'static str {
        match self {
            Resolution::None => "none",
            Resolution::SingleImpl => "single-impl",
        }
    }
}

/// The decision for one slot.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct SlotDecision {
    pub type_id: String,
    /// Byte offset from the address point.
    pub offset: u64,
    pub resolution: Resolution,
    /// The possible callees found (display names), sorted.
    pub targets: Vec<String>,
    /// For `single_impl`: the symbol every call now names (after promotion).
    pub target: Option<String>,
    /// Live vtables carrying the type id.
    pub vtables: u32,
    /// Call sites using the slot.
    pub call_sites: u32,
    /// Call sites the backend rewrites.
    pub devirtualized: u32,
    /// Why the slot (or some of its call sites) was left alone.
    pub reason: Option<String>,
}

/// Totals.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, Default)]
pub struct PlanStats {
    pub modules: u32,
    pub vtables: u32,
    pub live_vtables: u32,
    pub call_sites: u32,
    pub single_impl: u32,
    pub not_devirtualized: u32,
}

impl Plan {
    /// The decision for a slot.
    pub fn decision(&self, type_id: &str, offset: u64) -> Option<&SlotDecision> {
        self.decisions
            .binary_search_by(|d| (d.type_id.as_str(), d.offset).cmp(&(type_id, offset)))
            .ok()
            .map(|i| &self.decisions[i])
    }

    /// Canonical JSON for `wpd dump`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("plan types serialize to JSON")
    }
}
