//! The visibility policy: which vtables may be treated as closed (LLVM's
//! vcall visibility after `--lto-whole-program-visibility`), and which call
//! sites may be rewritten.

use crate::hierarchy::LinkFacts;
use wpd_summary::{CallSite, TestKind, VcallVisibility, Visibility, Vtable};

/// The policy of one link.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    /// The user promised whole-program visibility.
    pub whole_program_visibility: bool,
    pub facts: LinkFacts,
}

impl Policy {
    /// Whether the vtable's symbol is exported to the dynamic linker, where
    /// other modules may derive from it or replace it.
    pub fn dynamically_exported(&self, v: &Vtable) -> bool {
        (self.facts.shared || self.facts.export_dynamic) && !v.linkage.is_local() && v.visibility != Visibility::Hidden
    }

    /// The vtable's vcall visibility after the policy: whole-program
    /// visibility upgrades `public` to `linkage_unit`, except for vtables
    /// exported dynamically (as LLVM's `updateVCallVisibilityInModule`).
    pub fn effective_visibility(&self, v: &Vtable) -> VcallVisibility {
        if v.vcall_visibility == VcallVisibility::Public
            && self.whole_program_visibility
            && !self.dynamically_exported(v)
        {
            VcallVisibility::LinkageUnit
        } else {
            v.vcall_visibility
        }
    }

    /// Why a call site must be left alone whatever its slot's decision.
    pub fn call_site_blocker(&self, c: &CallSite) -> Option<&'static str> {
        if !c.assumed {
            return Some("the type test does not feed llvm.assume (CFI check or unsafe use)");
        }
        if c.kind == TestKind::PublicTypeTest && !self.whole_program_visibility {
            return Some("public type test without whole-program visibility (--lto-whole-program-visibility)");
        }
        None
    }
}
