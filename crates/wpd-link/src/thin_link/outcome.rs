//! What happens to one virtual call site: the plan's prediction
//! ([`Outcome::planned`]) and, in the backend, what was actually done. The
//! two are compared for every call of a link (`wpd::report::mismatches`).

use crate::policy::Policy;
use serde::{Deserialize, Serialize};
use wpd_summary::{CallKind, CallSite, Plan, Resolution, SlotDecision};

/// What happened to one call site (one summary record, same order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Left indirect (or a type test that guards no call).
    Indirect,
    SingleImpl,
    UniformRetVal,
    UniqueRetVal,
    VirtualConstProp,
    /// Virtual constant propagation of a 1-bit result.
    VirtualConstProp1Bit,
    /// Guarded direct calls added; the indirect call stays as the fallback.
    Speculative,
    /// Closed-set dispatch: vtable comparisons and direct calls, no
    /// indirect call left.
    ClosedSet,
}

impl Outcome {
    /// The word of LLVM's remarks (`speculative` and `indirect` are wpd's).
    pub fn remark_name(self) -> &'static str {
        match self {
            Outcome::Indirect => "indirect",
            Outcome::SingleImpl => "single-impl",
            Outcome::UniformRetVal => "uniform-ret-val",
            Outcome::UniqueRetVal => "unique-ret-val",
            Outcome::VirtualConstProp => "virtual-const-prop",
            Outcome::VirtualConstProp1Bit => "virtual-const-prop-1-bit",
            Outcome::Speculative => "speculative",
            Outcome::ClosedSet => "closed-set",
        }
    }

    /// Still loads its slot from the vtable: the indirect call, or a
    /// speculative call's fallback (what dead-slot elimination counts).
    pub fn loads_slot(self) -> bool {
        matches!(self, Outcome::Indirect | Outcome::Speculative)
    }

    /// Whether call site `c` may still load its slot once the plan is
    /// applied: its planned outcome loads it, or it is dispatched over a
    /// closed set whose targets have profile ids (a call with a value
    /// profile never tests the targets it calls cold, and keeps the
    /// indirect call for them).
    pub fn may_load_slot(plan: &Plan, c: &CallSite, policy: &Policy) -> bool {
        Outcome::may_load_slot_under(c.offset.and_then(|o| plan.decision(&c.type_id, o)), c, policy)
    }

    /// [`Outcome::may_load_slot`] with the decision for `c`'s slot already
    /// found (`None`: the plan has none).
    pub fn may_load_slot_under(d: Option<&SlotDecision>, c: &CallSite, policy: &Policy) -> bool {
        match Outcome::planned_under(d, c, policy) {
            Outcome::ClosedSet => d.is_some_and(|d| d.closed_set.iter().any(|k| !k.profile_ids.is_empty())),
            planned => planned.loads_slot(),
        }
    }

    /// Rewritten without a guard.
    pub fn is_devirtualized(self) -> bool {
        !matches!(self, Outcome::Indirect | Outcome::Speculative)
    }

    /// What the plan says should happen to call site `c` (the prediction
    /// the backend's outcome is checked against).
    pub fn planned(plan: &Plan, c: &CallSite, policy: &Policy) -> Outcome {
        Outcome::planned_under(c.offset.and_then(|o| plan.decision(&c.type_id, o)), c, policy)
    }

    /// [`Outcome::planned`] with the decision for `c`'s slot already found
    /// (`None`: the plan has none).
    pub fn planned_under(d: Option<&SlotDecision>, c: &CallSite, policy: &Policy) -> Outcome {
        let (Some(_), Some(_)) = (c.offset, c.call) else { return Outcome::Indirect };
        let Some(d) = d else { return Outcome::Indirect };
        if let Some(o) = Outcome::unguarded(d, c, policy) {
            return o;
        }
        if !d.closed_set.is_empty() && Outcome::dispatchable(d, c, policy) {
            return Outcome::ClosedSet;
        }
        if !d.speculative.is_empty() && c.assumed && may_branch(c) || Outcome::wrapper_guarded(d, c, policy) {
            Outcome::Speculative
        } else {
            Outcome::Indirect
        }
    }
}

impl Outcome {
    /// Whether call `c` takes its slot's closed-set dispatch when `d` has
    /// one: nothing blocks rewriting it unguarded, and no other unguarded
    /// rewrite resolves it, and its function is not one the dispatch would
    /// make recursive ([`SlotDecision::not_dispatched_in`]); and a closed
    /// set of `d` serves more than those functions' calls (`dispatched`).
    pub fn dispatchable(d: &SlotDecision, c: &CallSite, policy: &Policy) -> bool {
        (d.closed_set.is_empty() || d.dispatched > 0)
            && may_branch(c)
            && Outcome::left_to_dispatch(d, c, policy)
            && !in_wrapper(d, c)
    }

    /// Whether call `c` gets a wrapper's guarded dispatch: it is a call of a
    /// slot with a closed-set dispatch inside one of the slot's own targets
    /// ([`SlotDecision::not_dispatched_in`]), where the dispatch tests every
    /// other target, calls each directly without letting LLVM inline it,
    /// and keeps the indirect call for the function's own class: the
    /// function does not become recursive, and stays as small as it was.
    pub fn wrapper_guarded(d: &SlotDecision, c: &CallSite, policy: &Policy) -> bool {
        d.wrappers_guarded
            && d.closed_set.len() > 1
            && may_branch(c)
            && Outcome::left_to_dispatch(d, c, policy)
            && in_wrapper(d, c)
    }

    /// Nothing blocks rewriting call `c` unguarded, and no unguarded
    /// rewrite of `d` resolves it.
    fn left_to_dispatch(d: &SlotDecision, c: &CallSite, policy: &Policy) -> bool {
        policy.call_site_blocker(c).is_none() && Outcome::unguarded(d, c, policy).is_none()
    }

    /// The unguarded rewrite decision `d` gives call `c`, if the call
    /// allows one.
    pub fn unguarded(d: &SlotDecision, c: &CallSite, policy: &Policy) -> Option<Outcome> {
        policy.call_site_blocker(c).is_none().then_some(())?;
        if d.resolution == Resolution::SingleImpl {
            return d.target.as_ref().map(|_| Outcome::SingleImpl);
        }
        let a = d.for_args(c.const_args.as_deref())?;
        match (a.resolution, a.bit) {
            (Resolution::UniformRetVal, _) => Some(Outcome::UniformRetVal),
            (Resolution::UniqueRetVal, _) if a.member_symbol.is_some() => Some(Outcome::UniqueRetVal),
            (Resolution::VirtualConstProp, Some(_)) => Some(Outcome::VirtualConstProp1Bit),
            (Resolution::VirtualConstProp, None) => Some(Outcome::VirtualConstProp),
            _ => None,
        }
    }
}

/// Whether call `c` is in one of the functions `d`'s dispatch leaves out
/// ([`SlotDecision::not_dispatched_in`]).
fn in_wrapper(d: &SlotDecision, c: &CallSite) -> bool {
    d.not_dispatched_in.binary_search_by(|n| n.as_str().cmp(&c.function)).is_ok()
}

/// Whether call `c` may become several calls behind comparisons (a
/// dispatch, a guard): not a `musttail` call ([`CallKind::may_branch`]).
pub fn may_branch(c: &CallSite) -> bool {
    c.call.is_some_and(CallKind::may_branch)
}
