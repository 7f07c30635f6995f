//! Closed-set dispatch: for calls whose slot's set of targets is complete
//! (the thin link validated that no class outside the bitcode reaches it),
//! compare the vtable pointer with the classes' address points and call
//! each target directly.
//!
//! The plan gives the targets in a static order (warm before cold, the
//! last called without a test). A call with an indirect-call value profile
//! (`-fprofile-use`, `-fprofile-instr-use`) is ordered by it
//! instead ([`order`]): the hottest target is tested first, a target the
//! profile calls cold (under 1% of the call's count) is never tested, and
//! when more than one cold target remains the indirect call stays for
//! them.
//!
//! A call inside one of its slot's own targets (a wrapper forwarding to the
//! object it wraps) is dispatched by [`apply_in_wrapper`]: every other
//! target tested and called directly, not inlined, the indirect call kept
//! for the wrapper's own class.

use serde::{Deserialize, Serialize};
use wpd_link::decide::MAX_DISPATCH_COMPARISONS;
use wpd_llvm::{
    DirectCalls, DispatchEnd, DispatchKey, DispatchTarget, Module, RewriteError, ValueProfile, VirtualCall,
};
use wpd_summary::DispatchCase;

/// A target called by less than this share (in percent) of a profiled
/// call's executions is cold: it is never tested.
pub const COLD_PERCENT: u64 = 1;

/// What a dispatch did at one call.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Dispatched {
    /// The targets in the order the call tests them; without `fallback`
    /// the last one is called without a test.
    pub targets: Vec<String>,
    /// The indirect call stays, for the targets the profile calls cold.
    pub fallback: bool,
    /// The order is the call's value profile's (else the plan's).
    pub profiled: bool,
}

/// The order a call dispatches in: indices into the plan's cases, how the
/// dispatch ends, and with a profile each listed case's count and the
/// count no listed case takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    pub cases: Vec<usize>,
    pub end: DispatchEnd,
    pub weights: Option<(Vec<u64>, u64)>,
}

/// The order for a call with `profile` over `cases` (the plan's, in its
/// static order): the plan's when the call has no profile or the profile
/// names none of the targets. `indexed`: each case is one comparison of the
/// case index, else one per address point.
pub fn order(cases: &[DispatchCase], profile: Option<&ValueProfile>, indexed: bool) -> Order {
    let plan_order = Order { cases: (0..cases.len()).collect(), end: DispatchEnd::LastUntested, weights: None };
    let Some(p) = profile else { return plan_order };
    let counts: Vec<u64> = cases
        .iter()
        .map(|c| p.targets.iter().filter(|(id, _)| c.profile_ids.binary_search(id).is_ok()).map(|(_, n)| n).sum())
        .collect();
    if counts.iter().all(|&n| n == 0) {
        return plan_order;
    }
    let cold = |i: usize| counts[i].saturating_mul(100) < p.total.saturating_mul(COLD_PERCENT);
    // Hot targets by count, most first (the plan's order on a tie), then
    // the cold ones in the plan's order.
    let mut ranked: Vec<usize> = (0..cases.len()).filter(|&i| !cold(i)).collect();
    ranked.sort_by(|&a, &b| counts[b].cmp(&counts[a]).then(a.cmp(&b)));
    ranked.extend((0..cases.len()).filter(|&i| cold(i)));

    let mut chosen = Vec::new();
    let mut comparisons = 0;
    let mut end = DispatchEnd::Fallback;
    for (k, &i) in ranked.iter().enumerate() {
        if k + 1 == ranked.len() {
            // A lone remaining target needs no test, cold or not.
            chosen.push(i);
            end = DispatchEnd::LastUntested;
            break;
        }
        let cost = if indexed { 1 } else { cases[i].vtables.len() };
        if cold(i) || comparisons + cost > MAX_DISPATCH_COMPARISONS {
            break;
        }
        comparisons += cost;
        chosen.push(i);
    }
    if chosen.is_empty() {
        return plan_order;
    }
    let weights: Vec<u64> = chosen.iter().map(|&i| counts[i]).collect();
    let rest = p.total.saturating_sub(weights.iter().sum());
    Order { cases: chosen, end, weights: Some((weights, rest)) }
}

/// Dispatches `call` over `cases` (the plan's, in its static order),
/// ordered by the call's value profile when it has one, comparing the case
/// index at `index` from the address point when the plan stored one;
/// `None` when the call does not fit and stays indirect.
pub fn apply(
    module: &Module<'_>,
    call: VirtualCall<'_>,
    cases: &[DispatchCase],
    index: Option<i64>,
) -> Result<Option<Dispatched>, RewriteError> {
    let profile = call.value_profile();
    let order = order(cases, profile.as_ref(), index.is_some());
    rewrite(module, call, cases, index, &order, DirectCalls::Inlinable)
}

/// Dispatches `call`, a call inside one of its slot's targets (a wrapper,
/// `wpd_link::outcome::Outcome::wrapper_guarded`), over every case but the
/// wrapper's own, in the plan's order, and keeps the indirect call for
/// what no test matches. The direct calls are not inlined: dispatched
/// with its own case, the wrapper would call itself, and with the other
/// targets' bodies it would grow; either way LLVM would stop inlining it
/// where it is called, and a wrapper is small so that it is. `None` when
/// no other case is left or the call does not fit (it stays indirect).
pub fn apply_in_wrapper(
    module: &Module<'_>,
    call: VirtualCall<'_>,
    cases: &[DispatchCase],
    index: Option<i64>,
) -> Result<Option<Dispatched>, RewriteError> {
    // The wrapper's case names it as the module now does (promoted, if it
    // is a local function other modules call).
    let own = call.function().name();
    let others: Vec<usize> = (0..cases.len()).filter(|&k| cases[k].target != own).collect();
    if others.is_empty() {
        return Ok(None);
    }
    let order = Order { cases: others, end: DispatchEnd::Fallback, weights: None };
    rewrite(module, call, cases, index, &order, DirectCalls::NotInlined)
}

/// Rewrites `call` to test `order`'s cases (of the plan's `cases`).
fn rewrite(
    module: &Module<'_>,
    call: VirtualCall<'_>,
    cases: &[DispatchCase],
    index: Option<i64>,
    order: &Order,
    direct: DirectCalls,
) -> Result<Option<Dispatched>, RewriteError> {
    let chosen: Vec<&DispatchCase> = order.cases.iter().map(|&i| &cases[i]).collect();
    let targets: Vec<std::borrow::Cow<'_, [u8]>> =
        chosen.iter().map(|c| wpd_summary::name::to_bytes(&c.target)).collect();
    let vtables: Vec<Vec<(std::borrow::Cow<'_, [u8]>, u64)>> = chosen
        .iter()
        .map(|c| c.vtables.iter().map(|v| (wpd_summary::name::to_bytes(&v.symbol), v.offset)).collect())
        .collect();
    let dispatch: Vec<DispatchTarget<'_>> = targets
        .iter()
        .zip(&vtables)
        .zip(&order.cases)
        .map(|((t, vs), &k)| DispatchTarget {
            callee: t.as_ref(),
            vtables: vs.iter().map(|(n, o)| (n.as_ref(), *o)).collect(),
            // The plan has at most 8 cases (`--wpd-closed-set`).
            case_index: u8::try_from(k).unwrap_or(u8::MAX),
        })
        .collect();
    let weights = order.weights.as_ref().map(|(w, rest)| (w.as_slice(), *rest));
    let key = index.map_or(DispatchKey::VtablePointer, |offset| DispatchKey::CaseIndex { offset });
    if !module.rewrite_closed_set(call, &dispatch, order.end, weights, key, direct)? {
        return Ok(None);
    }
    Ok(Some(Dispatched {
        targets: chosen.iter().map(|c| c.target.clone()).collect(),
        fallback: order.end == DispatchEnd::Fallback,
        profiled: order.weights.is_some(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wpd_summary::AddressPoint;

    fn case(name: &str, id: u64, vtables: usize) -> DispatchCase {
        DispatchCase {
            target: name.into(),
            vtables: (0..vtables).map(|k| AddressPoint { symbol: format!("_ZTV{name}{k}"), offset: 16 }).collect(),
            profile_ids: vec![id],
        }
    }

    fn profile(total: u64, targets: &[(u64, u64)]) -> ValueProfile {
        ValueProfile { total, targets: targets.to_vec() }
    }

    #[test]
    fn without_a_profile_the_plan_order_stands() {
        let cases = [case("a", 1, 1), case("b", 2, 1), case("c", 3, 2)];
        let o = order(&cases, None, false);
        assert_eq!(o.cases, [0, 1, 2]);
        assert_eq!(o.end, DispatchEnd::LastUntested);
        assert_eq!(o.weights, None);
        // A profile naming none of the targets changes nothing either.
        assert_eq!(order(&cases, Some(&profile(10, &[(9, 10)])), false).cases, [0, 1, 2]);
    }

    #[test]
    fn the_hottest_target_is_tested_first_and_the_coldest_left_untested() {
        let cases = [case("a", 1, 1), case("b", 2, 1), case("c", 3, 2)];
        let o = order(&cases, Some(&profile(100, &[(3, 70), (1, 10), (2, 20)])), false);
        assert_eq!(o.cases, [2, 1, 0]);
        assert_eq!(o.end, DispatchEnd::LastUntested);
        assert_eq!(o.weights, Some((vec![70, 20, 10], 0)));
    }

    #[test]
    fn cold_targets_are_never_tested() {
        let cases = [case("a", 1, 1), case("b", 2, 1), case("c", 3, 1), case("d", 4, 1)];
        // c and d are cold (under 1%): a and b are tested, the rest stays
        // indirect.
        let o = order(&cases, Some(&profile(1000, &[(2, 900), (1, 99), (3, 1)])), false);
        assert_eq!(o.cases, [1, 0]);
        assert_eq!(o.end, DispatchEnd::Fallback);
        assert_eq!(o.weights, Some((vec![900, 99], 1)));
        // One cold target is called without a test.
        let o = order(&cases[..3], Some(&profile(1000, &[(2, 900), (1, 99), (3, 1)])), false);
        assert_eq!(o.cases, [1, 0, 2]);
        assert_eq!(o.end, DispatchEnd::LastUntested);
    }

    #[test]
    fn comparisons_stay_within_the_cap() {
        // The hottest target has 6 address points, the next 2: only the
        // first is tested; the other two stay indirect.
        let cases = [case("a", 1, 6), case("b", 2, 2), case("c", 3, 1)];
        let o = order(&cases, Some(&profile(100, &[(1, 50), (2, 30), (3, 20)])), false);
        assert_eq!(o.cases, [0]);
        assert_eq!(o.end, DispatchEnd::Fallback);
        // With a case index each target is one comparison: all are tested
        // but the last.
        let o = order(&cases, Some(&profile(100, &[(1, 50), (2, 30), (3, 20)])), true);
        assert_eq!(o.cases, [0, 1, 2]);
        assert_eq!(o.end, DispatchEnd::LastUntested);
    }
}
