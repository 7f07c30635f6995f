//! Decisions: for every slot (type id, byte offset) that a call site uses,
//! find the possible targets in the live, closed vtables carrying the type id
//! and choose a resolution, or record why there is none.
//!
//! Order (LLVM's): single implementation; otherwise, per constant argument
//! tuple of the slot's calls, evaluate every target from its summary
//! expression and try a uniform return value, a unique return value (1-bit
//! results), then virtual constant propagation into bytes beside the vtables.

use crate::hierarchy::{Hierarchy, RefNode, SymKey, VtableId};
use crate::layout::{Layout, Member, Placement};
use crate::outcome::{Outcome, may_branch};
use crate::policy::Policy;
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::{BTreeMap, BTreeSet};
use wpd_summary::{
    AddressPoint, ArgDecision, Body, CallSite, DispatchCase, FunctionFacts, GlobalKind, Linkage, ModuleIdx,
    ModuleSummary, PerModule, Plan, PlanModule, PlanOptions, PlanStats, Promotion, Resolution, RetKind, Slot,
    SlotDecision, SlotKind, TypeId, VcallVisibility, Vtable, VtableLayout,
};

/// How many target names a reason lists before eliding.
const REASON_TARGETS: usize = 6;
/// Bytes one (slot, arguments) decision may always add around its
/// vtables, over all of them, however the free places fall
/// ([`vcp_budget`]); also the most a vtable's alignment may be.
const MAX_PADDING: u64 = 128;
/// Most vtable comparisons a closed-set dispatch makes before its last,
/// untested target: past that, a compare chain costs more than the
/// indirect call it replaces.
pub const MAX_DISPATCH_COMPARISONS: usize = 6;
/// A dispatched or guarded target of at most this many instructions is
/// counted as copied into every call that names it directly (LLVM imports
/// a body this small into other modules, `-import-instr-limit`, and a
/// direct call to it is then usually inlined); a larger one stays a call.
/// Guarded speculation tests only targets this small.
const INLINED_INSTRUCTIONS: u64 = 100;
/// The code closed-set dispatch and guarded speculation may add to a
/// program without a profile, together, in instructions: this share (per
/// cent) of the program's instructions, and never less than
/// [`CODE_BUDGET_FLOOR`] ([`CodeBudget`]).
const CODE_BUDGET_PERCENT: u64 = 1;
const CODE_BUDGET_FLOOR: u64 = 1000;

/// One vtable of a slot's type id and the function at the slot in it.
#[derive(Clone, Copy, Debug)]
pub struct SlotMember<'a> {
    pub vtable: VtableId,
    pub address_point: u64,
    pub function: SymKey<'a>,
}

/// The callable members of slot (`type_id`, `offset`) in the live vtables
/// carrying the type id: each vtable must be constant, pass `check`, and hold
/// a function at the slot; `__cxa_pure_virtual` and never-callable functions
/// (see [`never_callable`]) are not members.
fn slot_members<'a>(
    link: &Hierarchy<'a>,
    type_id: &TypeId,
    offset: u64,
    check: impl Fn(&Vtable) -> Result<(), String>,
) -> Result<Vec<SlotMember<'a>>, String> {
    let Some(all) = link.by_type_id.get(type_id) else {
        return Err("no vtable carries this type id".into());
    };
    let mut out = Vec::new();
    for &(vref, address_point) in all {
        let vt = link.vtable(vref);
        if !link.is_live(link.key(vref.module, &vt.symbol)) {
            continue;
        }
        if !vt.constant {
            return Err(format!("vtable {} is not constant", vt.symbol));
        }
        check(vt)?;
        if vt.slots.is_empty() {
            return Err(format!("vtable {} has no initializer in the link", vt.symbol));
        }
        // Saturating: offsets come from files (no slot lies at u64::MAX).
        let at = address_point.saturating_add(offset);
        let Some(slot) = link.slot(vref, at) else {
            return Err(format!("vtable {} has no slot at byte {at}", vt.symbol));
        };
        // A relative entry is loaded through the address point it is
        // relative to (`llvm.load.relative(vptr, offset)`); through another
        // one it would reach something else.
        if let Some(base) = slot.relative_to.filter(|&b| b != address_point) {
            return Err(format!(
                "vtable {}'s relative entry at byte {at} is relative to byte {base}, not to the address point {address_point}",
                vt.symbol
            ));
        }
        match slot.kind {
            _ if is_pure_virtual(slot, vt) => {}
            SlotKind::Function => {
                let Some(name) = slot.function.as_deref() else {
                    return Err(format!("vtable {} holds no function at byte {at}", vt.symbol));
                };
                let key = link.key(vref.module, name);
                if link.defined_nowhere(key) {
                    return Err(format!(
                        "vtable {}'s entry at byte {at} names {name}, which nothing in the link defines (a weak declaration: the entry is null)",
                        vt.symbol
                    ));
                }
                if !never_callable(link, key, vt) {
                    out.push(SlotMember { vtable: vref, address_point, function: key });
                }
            }
            _ => return Err(format!("vtable {} holds no function at byte {at}", vt.symbol)),
        }
    }
    Ok(out)
}

/// Whether the function `name` in a slot of `vt` can never be validly
/// called through it: a body of nothing but `unreachable`, or clang's
/// deleting destructor of an abstract class (a `D0` whose body only traps,
/// in a vtable with a pure virtual slot; nothing of that dynamic type is
/// ever deleted). Any other trapping body, a user's `__builtin_trap()`
/// override included, has behaviour and stays a target (LLVM 19 drops it,
/// and the program then runs another override instead of trapping).
/// The abstract class's destructor is recognized from the bitcode copy even
/// where another may run (a preemptible one): no vtable call reaches any.
fn never_callable(link: &Hierarchy<'_>, key: SymKey<'_>, vt: &Vtable) -> bool {
    if link.function_facts(key).is_some_and(|f| f.body == Body::Unreachable) {
        return true;
    }
    link.bitcode_facts(key).is_some_and(|f| f.body == Body::TrapOnly)
        && is_deleting_destructor(key.name)
        && vt.slots.iter().any(|s| is_pure_virtual(s, vt))
}

/// Why a slot whose functions are all but one never-returning ones has no
/// single implementation: a target that never returns (`noreturn`, or a
/// body that only traps) still runs when called. LLVM 19 drops one whose
/// entry block ends in `unreachable` (it traps, aborts or throws:
/// mustBeUnreachableFunction, reverted in LLVM 20) and calls the slot's
/// other function instead; the note says where LLVM devirtualizes a call
/// that wpd dispatches or leaves indirect, and why.
fn never_returns_note(link: &Hierarchy<'_>, functions: &BTreeSet<SymKey<'_>>) -> Option<String> {
    let (ending, returning): (Vec<&SymKey<'_>>, Vec<&SymKey<'_>>) =
        functions.iter().partition(|k| never_returns(link, **k));
    match (returning.as_slice(), ending.as_slice()) {
        ([other], [first, ..]) => Some(format!(
            "not a single implementation: {} never returns but runs when called (LLVM 19 would drop it and call {} instead)",
            first.name, other.name
        )),
        _ => None,
    }
}

/// Whether the bitcode body of `key` never returns: `noreturn`, or a body
/// that only traps.
fn never_returns(link: &Hierarchy<'_>, key: SymKey<'_>) -> bool {
    link.bitcode_facts(key).is_some_and(|f| f.noreturn || f.body == Body::TrapOnly)
}

/// Whether a slot of `vt` is a pure virtual function's: `__cxa_pure_virtual`,
/// or 0 in a relative vtable (where clang writes no function for it).
fn is_pure_virtual(slot: &Slot, vt: &Vtable) -> bool {
    slot.kind == SlotKind::PureVirtual
        || slot.kind == SlotKind::Null && vt.slots.iter().any(|s| s.relative_to.is_some())
}

/// An Itanium deleting destructor (`...D0Ev`), or a thunk to one.
fn is_deleting_destructor(name: &str) -> bool {
    name.starts_with("_Z") && name.ends_with("D0Ev")
}

/// Why no vtable of the link carries `type_id`: none in the bitcode, and
/// where a native input defines or sees the class (a standard library
/// class whose vtable an explicit instantiation put in `libstdc++.so`),
/// that input.
fn no_vtable(policy: &Policy, type_id: &TypeId) -> String {
    let native = type_id.as_str().strip_prefix("_ZTS").and_then(|class| policy.validation.native_classes.get(class));
    match native {
        Some(why) => format!("no vtable carries this type id in the bitcode: {why}"),
        None => "no vtable carries this type id".into(),
    }
}

/// The members of a slot for unguarded devirtualization, LLVM's rules: the
/// type id is not open, and no live vtable carrying it is public after the
/// policy (see [`slot_members`] for the rest).
fn members<'a>(
    link: &Hierarchy<'a>,
    policy: &Policy,
    open: &BTreeMap<&'a TypeId, String>,
    type_id: &TypeId,
    offset: u64,
) -> Result<Vec<SlotMember<'a>>, String> {
    if !link.by_type_id.contains_key(type_id) {
        return Err(no_vtable(policy, type_id));
    }
    if let Some(why) = open.get(type_id) {
        return Err(format!("open hierarchy: {why}"));
    }
    slot_members(link, type_id, offset, |vt| {
        if policy.effective_visibility(vt) == VcallVisibility::Public {
            let why = if policy.whole_program_visibility { " (dynamically exported)" } else { "" };
            return Err(format!("public vcall_visibility: {}{why}", vt.symbol));
        }
        Ok(())
    })
}

/// The functions of a slot, whatever the visibility, most common first,
/// and how many of them a guarded speculative call may test for: those
/// first ones whose body the program runs (a direct call to any other
/// could be inlined or folded with a body that is not the one that runs;
/// [`Hierarchy::unknown_body`]). `None` when the slot has no well-formed
/// members or a target must not be called speculatively (cold or
/// noreturn).
fn visible_targets<'a>(link: &Hierarchy<'a>, type_id: &TypeId, offset: u64) -> Option<VisibleTargets<'a>> {
    let mut count: BTreeMap<SymKey<'a>, u32> = BTreeMap::new();
    for m in slot_members(link, type_id, offset, |_| Ok(())).ok()? {
        if link.function_facts(m.function).is_some_and(|f| f.cold || f.noreturn) {
            return None;
        }
        *count.entry(m.function).or_default() += 1;
    }
    let all = count.len();
    let unknown = count.keys().find_map(|k| link.unknown_body(*k)).map(|u| u.to_string());
    let mut v: Vec<(SymKey<'a>, u32)> = count.into_iter().filter(|(k, _)| link.unknown_body(*k).is_none()).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    Some(VisibleTargets { all, known: v.into_iter().map(|(k, _)| k).collect(), unknown })
}

/// A slot's functions for guarded speculation ([`visible_targets`]).
struct VisibleTargets<'a> {
    /// How many distinct functions the slot holds.
    all: usize,
    /// Those whose body the program runs, most common first.
    known: Vec<SymKey<'a>>,
    /// Why one of the others is not, when one is not.
    unknown: Option<String>,
}

/// What guarded speculation would do for one slot ([`Decider::guard`]).
struct Guard<'a> {
    /// The functions the calls would test ([`VisibleTargets::known`], each
    /// at most [`INLINED_INSTRUCTIONS`]).
    known: Vec<SymKey<'a>>,
    /// The instructions the guard adds at one call: per tested target a
    /// comparison, a branch and its body (LLVM inlines it); the indirect
    /// call stays for the classes no test matches, so nothing is taken
    /// away.
    per_call: u64,
    /// The calls that would be guarded.
    left: u32,
    /// Why a visible target is not tested, when one is not.
    unknown: Option<String>,
    /// Why a target too large to inline is not tested, when one is not.
    too_large: Option<String>,
}

/// Name used for a local symbol once promoted to a hidden global.
fn promoted_name(name: &str, hash: &str, module: ModuleIdx, clash: bool) -> String {
    let short = hash.get(..16).unwrap_or(hash);
    if clash { format!("{name}.wpd.{short}.{module}") } else { format!("{name}.wpd.{short}") }
}

/// Why `f` cannot be evaluated for calls returning `ret_width` bits with
/// arguments of `arg_widths`, if it cannot.
fn not_evaluable(f: Option<&FunctionFacts>, name: &str, ret_width: u32, arg_widths: &[u32]) -> Option<String> {
    let Some(f) = f else { return Some(format!("{name} is not defined in the bitcode")) };
    let why = if f.ret != RetKind::Int || f.ret_width != ret_width || f.ret_width > 64 {
        "does not return the call's integer type"
    } else if f.reads_memory || f.writes_memory {
        "accesses memory"
    } else if f.uses_this {
        "uses this"
    } else if f.linkage.is_interposable() {
        "may be replaced at link time (interposable)"
    } else if f.param_widths.len() != arg_widths.len() + 1 || f.param_widths[1..] != *arg_widths {
        "has other parameter types than the call"
    } else if f.expr.is_none() {
        "is not a pure integer expression of its arguments"
    } else {
        return None;
    };
    Some(format!("{name} {why}"))
}

/// The bytes virtual constant propagation may add around the members'
/// vtables for one (slot, arguments) decision: each vtable pays at most one
/// naturally aligned `width`-bit value and the padding to its own
/// alignment, which is what any layout of a wide hierarchy adds (LLVM's
/// has no limit), and a decision over few vtables may use
/// [`MAX_PADDING`] bytes however the free places fall. Only a layout whose
/// holes cost more than that is refused.
fn vcp_budget(link: &Hierarchy<'_>, members: &[SlotMember<'_>], width: u32) -> u64 {
    let value = u64::from(width.div_ceil(8)).next_power_of_two();
    let wide: u64 = members.iter().map(|m| value + vcp_alignment(link.vtable(m.vtable))).sum();
    wide.max(MAX_PADDING)
}

/// The alignment of a vtable rebuilt with bytes beside it: its own, at
/// least 8 (a pointer's, and a 64-bit result's). The rebuild gives the new
/// global this alignment (`wpd_rewrite_vtable_layout`), so a relative vtable
/// (aligned to 4) can take 64-bit results too, as LLVM's layout does.
fn vcp_alignment(vt: &Vtable) -> u64 {
    vt.align.max(8)
}

/// The instructions a closed-set dispatch over `members` adds at one call,
/// estimated: two (compare, branch) per comparison, a load for a case
/// index, each target's body where LLVM would inline it (else a call), less
/// the load and call it replaces. `None` when the slot has fewer than 2 or
/// more than `limit` targets (no dispatch).
fn dispatch_growth(link: &Hierarchy<'_>, members: &[SlotMember<'_>], limit: usize) -> Option<u64> {
    let (by_target, comparisons) = dispatch_shape(members, limit)?;
    let bodies: u64 = by_target
        .keys()
        .map(|k| {
            let size = link.function_facts(*k).map_or(u64::MAX, |f| u64::from(f.instructions));
            if size <= INLINED_INSTRUCTIONS { size } else { 2 }
        })
        .sum();
    Some((2 * comparisons + bodies).saturating_sub(2))
}

/// A dispatch over `members`: how many classes reach each target, and the
/// comparisons a call makes (one per tested class, or one per target with
/// a case index; the target with the most classes is the untested one).
/// `None` when the slot has fewer than 2 or more than `limit` targets.
fn dispatch_shape<'a>(members: &[SlotMember<'a>], limit: usize) -> Option<(BTreeMap<SymKey<'a>, usize>, u64)> {
    let mut by_target: BTreeMap<SymKey<'a>, usize> = BTreeMap::new();
    for m in members {
        *by_target.entry(m.function).or_default() += 1;
    }
    let targets = by_target.len();
    if targets < 2 || targets > limit {
        return None;
    }
    let most = by_target.values().copied().max().unwrap_or(0);
    let tested = members.len() - most;
    let comparisons = if wants_case_index(tested, targets) { targets } else { tested };
    Some((by_target, comparisons as u64))
}

/// The code the thin link's guarded rewrites may add to a program without
/// a profile: a dispatch or a guard copies comparisons and (small) target
/// bodies to every call it takes, and nothing says which calls are hot, so
/// the code they add together is bounded by [`CODE_BUDGET_PERCENT`] of the
/// program's instructions (at least [`CODE_BUDGET_FLOOR`]). Closed-set
/// dispatch is admitted first, then speculation from what is left; each
/// admits its slots cheapest per call first, in slot order on a tie.
struct CodeBudget {
    /// The program's instructions (every function in it, by the summaries).
    program: u64,
    budget: u64,
    spent: u64,
}

impl CodeBudget {
    fn of(link: &Hierarchy<'_>, policy: &Policy) -> CodeBudget {
        if policy.closed_set < 2 && policy.speculate == 0 {
            // Nothing asks it.
            return CodeBudget { program: 0, budget: 0, spent: 0 };
        }
        // Module by module on the pool's threads (a sum: the same whatever
        // the threads).
        let program: u64 = link
            .summaries
            .par_iter()
            .enumerate()
            .map(|(m, s)| {
                let mut node = link.program_nodes(ModuleIdx::new(m));
                s.globals
                    .iter()
                    .filter(|g| g.kind == GlobalKind::Function && node(&g.name).is_some())
                    .map(|g| u64::from(g.instructions))
                    .sum::<u64>()
            })
            .sum();
        CodeBudget { program, budget: (program * CODE_BUDGET_PERCENT / 100).max(CODE_BUDGET_FLOOR), spent: 0 }
    }

    /// Admits `costs` (cost per call, slot, cost over all its calls),
    /// cheapest per call first, while the budget lasts; the slots refused,
    /// each with why (`refusal` starts the sentence, `code` names what
    /// would be added).
    fn admit<K: Ord + Copy>(
        &mut self,
        mut costs: Vec<(u64, K, u64)>,
        refusal: &str,
        code: &str,
    ) -> BTreeMap<K, String> {
        costs.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut over = BTreeMap::new();
        for (per_call, key, total) in costs {
            if self.spent + total <= self.budget {
                self.spent += total;
            } else {
                let (budget, program, spent) = (self.budget, self.program, self.spent);
                over.insert(
                    key,
                    format!(
                        "{refusal}: about {total} instructions of {code} ({per_call} per call) would exceed what the program allows, {budget} ({CODE_BUDGET_PERCENT}% of its {program} instructions; {spent} taken by cheaper slots)"
                    ),
                );
            }
        }
        over
    }
}

/// The slots whose closed-set code does not fit what is left of the
/// program's code budget, with why ([`CodeBudget`]): `cost` gives a slot's
/// instructions per call and its calls, `None` when it has nothing to
/// admit (`refusal` and `code` word the reason).
fn over_budget<'a>(
    slots: &[SlotWork<'_, 'a>],
    resolved: &[SlotDecision],
    dispatch: &[Option<DispatchCalls<'_>>],
    budget: &mut CodeBudget,
    cost: impl Fn(&[SlotMember<'a>], &DispatchCalls<'_>) -> Option<(u64, u32)> + Sync,
    (refusal, code): (&str, &str),
) -> BTreeMap<(&'a TypeId, u64), String> {
    // Slot by slot on the pool's threads (a list in slot order).
    let costs: Vec<(u64, (&'a TypeId, u64), u64)> = slots
        .par_iter()
        .zip(resolved)
        .zip(dispatch)
        .filter_map(|((s, d), calls)| {
            let m = s.members.as_ref().ok().filter(|_| d.resolution != Resolution::SingleImpl)?;
            let (per_call, calls) = cost(m, calls.as_ref()?)?;
            (calls > 0).then_some((per_call, s.slot, per_call * u64::from(calls)))
        })
        .collect();
    budget.admit(costs, refusal, code)
}

/// What a wrapper's guarded dispatch over `members` adds at one call,
/// estimated as [`dispatch_growth`] counts the comparisons: a comparison
/// and a branch each, and a direct call per target other than the
/// wrapper's own, none of them inlined. `None` as for [`dispatch_growth`].
fn wrapper_guard_growth(members: &[SlotMember<'_>], limit: usize) -> Option<u64> {
    let (by_target, comparisons) = dispatch_shape(members, limit)?;
    Some(2 * comparisons + by_target.len() as u64 - 1)
}

/// Whether a dispatch over `targets` targets whose tested classes have
/// `tested` address points compares a case index stored beside the
/// vtables: classes share targets enough to pay for its load, or the
/// address comparisons would be too many.
fn wants_case_index(tested: usize, targets: usize) -> bool {
    tested > targets || tested > MAX_DISPATCH_COMPARISONS
}

/// The calls of `d` (resolved) a closed-set dispatch would take, and the
/// functions whose calls it leaves indirect: a target that calls its own
/// slot (a wrapper forwarding to the object it wraps) keeps that call
/// indirect, as, dispatched, the call would name the wrapper itself, and
/// LLVM never inlines a directly recursive function, so the wrapper would
/// no longer be inlined where it is called.
fn dispatch_calls<'s>(
    d: &SlotDecision,
    members: &[SlotMember<'_>],
    sites: &[&'s CallSite],
    policy: &Policy,
) -> DispatchCalls<'s> {
    let targets: FxHashSet<&str> = members.iter().map(|m| m.function.name).collect();
    let (mut wrappers, mut calls, mut in_wrappers) = (BTreeSet::new(), 0usize, 0usize);
    // A function's calls are consecutive: each function is asked once.
    let mut last: Option<(&str, bool)> = None;
    for c in sites.iter().filter(|c| Outcome::dispatchable(d, c, policy)) {
        let f = c.function.as_str();
        let wrapper = match last {
            Some((l, w)) if std::ptr::eq(l, f) || l == f => w,
            _ => targets.contains(f),
        };
        last = Some((f, wrapper));
        if wrapper {
            wrappers.insert(f);
            in_wrappers += 1;
        } else {
            calls += 1;
        }
    }
    DispatchCalls { wrappers, calls: count(calls), in_wrappers: count(in_wrappers) }
}

/// The calls of a slot a closed set would serve ([`dispatch_calls`]).
#[derive(Clone)]
struct DispatchCalls<'s> {
    /// The slot's targets that call it (wrappers), by summary name.
    wrappers: BTreeSet<&'s str>,
    /// The calls a dispatch would take.
    calls: u32,
    /// The calls inside `wrappers`: each may test the other targets.
    in_wrappers: u32,
}

/// [`dispatch_calls`] of each slot that may be dispatched (its members
/// complete, no single implementation), found once for the budget and the
/// dispatch, on the pool's threads, in slot order.
fn all_dispatch_calls<'s>(
    policy: &Policy,
    slots: &[SlotWork<'s, '_>],
    resolved: &[SlotDecision],
) -> Vec<Option<DispatchCalls<'s>>> {
    if policy.closed_set < 2 {
        return vec![None; slots.len()];
    }
    slots
        .par_iter()
        .zip(resolved)
        .map(|(w, d)| match &w.members {
            Ok(m) if d.resolution != Resolution::SingleImpl => Some(dispatch_calls(d, m, w.sites, policy)),
            _ => None,
        })
        .collect()
}

/// One slot to decide: its calls and its members for unguarded rewrites
/// ([`members`]), found once for every rule and the dispatch budget.
struct SlotWork<'s, 'a> {
    slot: (&'a TypeId, u64),
    sites: &'s [&'a CallSite],
    members: Result<Vec<SlotMember<'a>>, String>,
    /// What the unguarded rules ask of each call, asked once.
    calls: SiteFacts,
    /// How many live vtables carry the type id.
    live_vtables: usize,
}

/// A slot's calls as the unguarded rules see them ([`Decider::resolve`]),
/// found with its members (on the pool's threads: each call's summary is
/// read here, not again on the thread that decides the slots in order).
struct SiteFacts {
    /// How many calls no policy rule blocks.
    open: usize,
    /// Why one call is blocked, if one is.
    blocked: Option<&'static str>,
    /// The open calls with all-constant integer arguments and an integer
    /// result, by argument values: (argument widths, result width, calls).
    by_args: BTreeMap<Vec<u64>, (Vec<u32>, u32, u32)>,
    /// The open calls of any other shape.
    shapeless: u32,
}

impl SiteFacts {
    fn of(sites: &[&CallSite], policy: &Policy) -> SiteFacts {
        let mut facts = SiteFacts { open: 0, blocked: None, by_args: BTreeMap::new(), shapeless: 0 };
        for &c in sites {
            if let Some(why) = policy.call_site_blocker(c) {
                facts.blocked.get_or_insert(why);
                continue;
            }
            facts.open += 1;
            match (&c.const_args, c.ret) {
                (Some(args), RetKind::Int) if c.ret_width <= 64 => {
                    let key: Vec<u64> = args.iter().map(|a| a.value).collect();
                    let widths: Vec<u32> = args.iter().map(|a| a.width).collect();
                    facts.by_args.entry(key).or_insert((widths, c.ret_width, 0)).2 += 1;
                }
                _ => facts.shapeless += 1,
            }
        }
        facts
    }
}

/// Whether call `c` of `d`'s slot is left to a guard or dispatch: its test
/// feeds an assumption and no unguarded rewrite resolves it.
fn left_unguarded(d: &SlotDecision, c: &CallSite, policy: &Policy) -> bool {
    c.assumed && Outcome::unguarded(d, c, policy).is_none()
}

/// Adds `note` to why some of `d`'s calls stay indirect.
fn add_reason(d: &mut SlotDecision, note: String) {
    d.reason = Some(match d.reason.take() {
        Some(r) => format!("{r}; {note}"),
        None => note,
    });
}

/// State shared by every slot of one decision run.
struct Decider<'l, 'a> {
    link: &'l Hierarchy<'a>,
    policy: &'l Policy,
    layout: Layout,
    promotions: PerModule<BTreeSet<Promotion>>,
    aliases: PerModule<BTreeSet<Promotion>>,
    /// Per module, discardable definitions it must keep (see `keep_defined`).
    keep: PerModule<BTreeSet<String>>,
    hash_count: BTreeMap<&'a str, u32>,
    open: BTreeMap<&'a TypeId, String>,
    /// Slots whose dispatch the program's code budget refuses, with why.
    over_budget: BTreeMap<(&'a TypeId, u64), String>,
    /// Slots whose wrappers' guarded dispatches it refuses, with why.
    wrappers_over_budget: BTreeMap<(&'a TypeId, u64), String>,
    stats: PlanStats,
}

impl<'a> Decider<'_, 'a> {
    /// The name other modules use for local symbol `key` (promoting it).
    fn export_local(&mut self, key: SymKey<'a>, vtable: bool) -> String {
        let Some(m) = key.module else {
            self.keep_defined(key.name);
            return key.name.to_string();
        };
        let hash = self.link.summary(m).module.hash.as_str();
        let p = promoted_name(key.name, hash, m, self.hash_count[hash] > 1);
        let set = if vtable { &mut self.aliases[m] } else { &mut self.promotions[m] };
        set.insert(Promotion { symbol: key.name.to_string(), promoted: p.clone() });
        p
    }

    /// A rewritten call now names the external symbol `name`: when every
    /// bitcode definition of it is discardable (`linkonce`), the first one in
    /// link order must be kept, or its module's optimizer may drop it as
    /// unreferenced there (ThinLTO makes exported linkonce_odr copies
    /// weak_odr for the same reason).
    fn keep_defined(&mut self, name: &'a str) {
        if let Some((m, Linkage::LinkonceAny | Linkage::LinkonceOdr)) = self.link.kept_copy(name) {
            self.keep[m].insert(name.to_string());
        }
    }

    /// The slot's decision after the unguarded rules ([`Self::resolve`]);
    /// dispatch and speculation come after every slot has been resolved
    /// ([`decide`]).
    fn resolved(&mut self, work: &SlotWork<'_, 'a>) -> SlotDecision {
        let ((type_id, offset), sites) = (work.slot, work.sites);
        let vtables = work.live_vtables;
        let mut d = SlotDecision {
            type_id: type_id.clone(),
            offset,
            resolution: Resolution::None,
            targets: Vec::new(),
            target: None,
            vtables: count(vtables),
            call_sites: count(sites.len()),
            devirtualized: 0,
            reason: None,
            by_args: Vec::new(),
            speculative: Vec::new(),
            speculated: 0,
            closed_set: Vec::new(),
            dispatched: 0,
            dispatch_index: None,
            not_dispatched_in: Vec::new(),
            wrappers_guarded: false,
        };
        match &work.members {
            Ok(members) => self.resolve(&mut d, members, sites, &work.calls),
            Err(reason) => d.reason = Some(reason.clone()),
        }
        d
    }

    /// Closed-set dispatch for the calls of `d` no other rewrite resolves:
    /// the slot's members are complete ([`members`]: the type id is not
    /// open, no vtable carrying it is public), it has from 2 to
    /// `policy.closed_set` targets, and every target's body is the one the
    /// program runs. Warm targets are tested before cold ones (`cold`,
    /// `noreturn`, a body that only traps), most vtables first; the first
    /// cold target, else the one held by the most vtables, goes last and is
    /// called without a test. A call with a value profile is ordered by it
    /// in the backend (`wpd::rewrite::closed_set`). The calls compare the
    /// vtable pointer with the classes' address points, or, where classes
    /// share targets, a case index stored beside the vtables
    /// ([`Self::place_index`]).
    fn dispatch(
        &mut self,
        d: &mut SlotDecision,
        work: &SlotWork<'_, 'a>,
        members: &[SlotMember<'a>],
        calls: &DispatchCalls<'_>,
    ) {
        // (Only for a slot `all_dispatch_calls` counted: closed sets on, no
        // single implementation.)
        let limit = usize::from(self.policy.closed_set);
        let (wrappers, left) = (&calls.wrappers, calls.calls);
        // The calls outside wrappers are dispatched unless the code budget
        // refused them; the calls inside wrappers are guarded
        // (`Outcome::wrapper_guarded`) unless it refused those.
        let calls_refused = if left == 0 { None } else { self.over_budget.get(&work.slot).cloned() };
        let dispatch_calls = left > 0 && calls_refused.is_none();
        let wrappers_refused = self.wrappers_over_budget.get(&work.slot).cloned();
        let guard_wrappers = calls.in_wrappers > 0 && wrappers_refused.is_none();
        // Why the wrappers' calls are not dispatched, and (`guarded`) what
        // they do instead.
        let wrapper_note = |guarded: bool| {
            if wrappers.is_empty() {
                return None;
            }
            let mut names: Vec<&str> = wrappers.iter().copied().take(REASON_TARGETS).collect();
            if wrappers.len() > REASON_TARGETS {
                names.push("...");
            }
            let mut note = format!(
                "no closed-set dispatch in {}: a target of this slot, the call would become recursive and stop its inlining",
                names.join(", ")
            );
            match &wrappers_refused {
                Some(why) => note = format!("{note}; {why}"),
                None if guarded => {
                    note += "; there the other targets are tested and called without inlining, the indirect call kept for its own class"
                }
                None => {}
            }
            Some(note)
        };
        if let Some(note) = calls_refused {
            add_reason(d, note);
        }
        if !dispatch_calls && !guard_wrappers {
            if let Some(note) = wrapper_note(false) {
                add_reason(d, note);
            }
            return;
        }
        let link = self.link;
        let mut by_target: BTreeMap<SymKey<'a>, Vec<&SlotMember<'a>>> = BTreeMap::new();
        for m in members {
            by_target.entry(m.function).or_default().push(m);
        }
        let cold = |k: SymKey<'a>| {
            link.unknown_body(k).is_none() && (link.bitcode_facts(k).is_some_and(|f| f.cold) || never_returns(link, k))
        };
        if by_target.len() < 2 {
            return;
        }
        if by_target.len() > limit {
            add_reason(d, format!("closed set of {} targets, more than {limit}", by_target.len()));
            return;
        }
        let mut cases: Vec<(SymKey<'a>, Vec<&SlotMember<'a>>)> = by_target.into_iter().collect();
        cases.sort_by_cached_key(|(k, v)| (cold(*k), std::cmp::Reverse(v.len()), *k));
        // The target called without a test: the first cold one (a cold
        // target is never tested before a warm one), else the one with the
        // most vtables (the fewest comparisons).
        let last = cases.iter().position(|c| cold(c.0)).unwrap_or(0);
        let untested = cases.remove(last);
        cases.push(untested);
        let mut index = None;
        let note = if let Some(why) = cases.iter().find_map(|(k, _)| link.unknown_body(*k)) {
            Some(format!("no closed-set dispatch: the body of a target is not known: {why}"))
        } else {
            // Comparing the vtable pointer costs one comparison per tested
            // class; a case index beside the vtables costs a one-byte load
            // and one comparison per tested target. The index is taken when
            // classes share targets enough to pay for the load, or when the
            // comparisons would be too many.
            let tested: usize = cases[..cases.len() - 1].iter().map(|(_, v)| v.len()).sum();
            let mut why_not = None;
            if wants_case_index(tested, cases.len()) {
                match self.place_index(members, &cases) {
                    Ok(offset) => index = Some(offset),
                    Err(why) => why_not = Some(why),
                }
            }
            (index.is_none() && tested > MAX_DISPATCH_COMPARISONS).then(|| {
                let mut note =
                    format!("closed set needs {tested} vtable comparisons, more than {MAX_DISPATCH_COMPARISONS}");
                if let Some(why) = why_not {
                    note += &format!(", and no case index beside its vtables: {why}");
                }
                note
            })
        };
        if let Some(note) = note {
            add_reason(d, note);
            return;
        }
        d.closed_set = cases
            .into_iter()
            .map(|(key, vtables)| {
                let target = self.export_local(key, false);
                let profile_ids = link.function_facts(key).map(|f| f.profile_ids.clone()).unwrap_or_default();
                let mut vtables: Vec<AddressPoint> = vtables
                    .into_iter()
                    .map(|m| {
                        let key = link.key(m.vtable.module, &link.vtable(m.vtable).symbol);
                        AddressPoint { symbol: self.export_local(key, true), offset: m.address_point }
                    })
                    .collect();
                vtables.sort();
                vtables.dedup();
                DispatchCase { target, vtables, profile_ids }
            })
            .collect();
        d.dispatch_index = index;
        d.not_dispatched_in = wrappers.iter().map(|f| f.to_string()).collect();
        d.wrappers_guarded = guard_wrappers;
        let wrapper_note = wrapper_note(true);
        if !dispatch_calls {
            if let Some(note) = wrapper_note {
                add_reason(d, note);
            }
            return;
        }
        d.dispatched = left;
        d.devirtualized += left;
        self.stats.closed_set += left;
        let by_args: u32 = d.by_args.iter().filter(|a| a.resolution == d.resolution).map(|a| a.call_sites).sum();
        if d.resolution == Resolution::None || left > by_args {
            d.resolution = Resolution::ClosedSet;
        }
        if d.devirtualized == d.call_sites {
            // Nothing is left indirect; what is still worth saying is why
            // the slot has no single target, where LLVM sees one.
            let functions: BTreeSet<SymKey<'a>> = members.iter().map(|m| m.function).collect();
            d.reason = never_returns_note(link, &functions);
        }
        if let Some(note) = wrapper_note {
            add_reason(d, note);
        }
    }

    /// Stores a one-byte case index beside every vtable of `members`: the
    /// position in `cases` of the member's target ([`Self::store_beside`]).
    /// Its byte offset from the address point, or why it cannot be stored.
    fn place_index(
        &mut self,
        members: &[SlotMember<'a>],
        cases: &[(SymKey<'a>, Vec<&SlotMember<'a>>)],
    ) -> Result<i64, String> {
        let values: Vec<u64> =
            members.iter().map(|m| cases.iter().position(|(k, _)| *k == m.function).unwrap_or(0) as u64).collect();
        Ok(self.store_beside(members, 8, &values)?.byte_offset)
    }

    /// What guarded speculation would do for the calls of `d` (resolved
    /// and dispatched) left indirect, before the code budget is asked
    /// ([`Self::speculate`]): `None` when nothing is guarded.
    fn guard(&self, d: &SlotDecision, work: &SlotWork<'_, 'a>) -> Option<Guard<'a>> {
        let ((type_id, offset), sites) = (work.slot, work.sites);
        let limit = usize::from(self.policy.speculate);
        if limit == 0 || d.resolution == Resolution::SingleImpl && d.devirtualized == d.call_sites {
            return None;
        }
        // Complete members are the slot's functions whatever the
        // visibility ([`visible_targets`]), and `d.targets` names each
        // once: too many of them, and nothing is guarded.
        if work.members.is_ok() && d.targets.len() > limit {
            return None;
        }
        let left = count(
            sites
                .iter()
                .filter(|c| may_branch(c) && left_unguarded(d, c, self.policy))
                .filter(|c| d.closed_set.is_empty() || !Outcome::dispatchable(d, c, self.policy))
                .count(),
        );
        if left == 0 {
            return None;
        }
        let t = visible_targets(self.link, type_id, offset)?;
        if t.all > limit {
            return None;
        }
        // A guard pays only where LLVM inlines the target behind it: a
        // guarded call it does not inline adds the comparison to every
        // call and removes nothing (the loaded pointer is still loaded).
        let size = |k: &SymKey<'a>| self.link.function_facts(*k).map(|f| u64::from(f.instructions));
        let (known, large): (Vec<SymKey<'a>>, Vec<SymKey<'a>>) =
            t.known.into_iter().partition(|k| size(k).is_some_and(|n| n <= INLINED_INSTRUCTIONS));
        let per_call = known.iter().map(|k| 2 + size(k).unwrap_or(0)).sum();
        let too_large = large.first().map(|k| match size(k) {
            Some(n) => format!(
                "not guarded for {}: its body ({n} instructions) is too large to be inlined behind a guard, which would only add a comparison to the call",
                k.name
            ),
            None => format!(
                "not guarded for {}: its body is not in the bitcode, so a guard would only add a comparison to the call",
                k.name
            ),
        });
        Some(Guard { known, per_call, left, unknown: t.unknown, too_large })
    }

    /// Guarded speculation for the calls of `d` left indirect ([`Self::guard`]),
    /// unless the code budget refused it (`refused`, why).
    fn speculate(&mut self, d: &mut SlotDecision, guard: Guard<'a>, refused: Option<&String>) {
        if let Some(why) = &guard.unknown {
            // The report says why a call that could have been guarded was
            // not (or was guarded for fewer targets).
            add_reason(d, format!("not guarded for a target whose body is not known: {why}"));
        }
        if let Some(why) = guard.too_large {
            add_reason(d, why);
        }
        if guard.known.is_empty() {
            return;
        }
        if let Some(why) = refused {
            add_reason(d, why.clone());
            return;
        }
        d.speculative = guard.known.into_iter().map(|k| self.export_local(k, false)).collect();
        d.speculated = guard.left;
        self.stats.speculative += guard.left;
    }

    /// The unguarded rules for a slot whose members are `members`.
    fn resolve(&mut self, d: &mut SlotDecision, members: &[SlotMember<'a>], sites: &[&CallSite], calls: &SiteFacts) {
        let link = self.link;
        let functions: BTreeSet<SymKey<'a>> = members.iter().map(|m| m.function).collect();
        d.targets = functions.iter().map(|k| k.name.to_string()).collect();
        let (open, blocked) = (calls.open, calls.blocked);
        if functions.is_empty() {
            d.reason = Some("no callable target (only pure virtual or unreachable functions)".into());
            return;
        }
        if functions.len() == 1 {
            let only = *functions.iter().next().expect("one function");
            if let Some(why) = link.unknown_body(only) {
                d.reason = Some(format!("its only target's body is not known: {why}"));
                return;
            }
            if open > 0 {
                d.resolution = Resolution::SingleImpl;
                d.devirtualized = count(open);
                d.target = Some(self.export_local(only, false));
                self.stats.single_impl += d.devirtualized;
            }
            if let Some(b) = blocked {
                d.reason = Some(format!("{} call site(s) left: {b}", d.call_sites - d.devirtualized));
            }
            return;
        }
        let mut names: Vec<&str> = functions.iter().take(REASON_TARGETS).map(|t| t.name).collect();
        if functions.len() > REASON_TARGETS {
            names.push("...");
        }
        let mut reasons = vec![format!("{} targets: {}", functions.len(), names.join(", "))];
        reasons.extend(never_returns_note(link, &functions));
        if let Some(b) = blocked {
            reasons.push(format!("{} call site(s): {b}", sites.len() - open));
        }
        self.by_args(d, members, calls, &mut reasons);
        let mut per_resolution: BTreeMap<Resolution, u32> = BTreeMap::new();
        for a in &d.by_args {
            if a.resolution != Resolution::None {
                *per_resolution.entry(a.resolution).or_default() += a.call_sites;
            }
        }
        d.devirtualized = per_resolution.values().sum();
        if let Some((&r, _)) = per_resolution.iter().max_by_key(|(r, n)| (**n, std::cmp::Reverse(**r))) {
            d.resolution = r;
        }
        if d.devirtualized < d.call_sites {
            d.reason = Some(reasons.join("; "));
        }
    }

    /// Return-value optimizations for the calls of a multi-target slot.
    fn by_args(
        &mut self,
        d: &mut SlotDecision,
        members: &[SlotMember<'a>],
        calls: &SiteFacts,
        reasons: &mut Vec<String>,
    ) {
        let link = self.link;
        // Calls eligible by their own shape, grouped by argument values.
        let shapeless = calls.shapeless;
        if shapeless > 0 {
            reasons
                .push(format!("{shapeless} call site(s) without all-constant integer arguments and an integer result"));
        }
        let facts: Vec<Option<&FunctionFacts>> = members.iter().map(|m| link.function_facts(m.function)).collect();
        for (args, &(ref widths, ret_width, count)) in &calls.by_args {
            let mut a = ArgDecision {
                args: args.clone(),
                resolution: Resolution::None,
                width: ret_width,
                value: 0,
                member_symbol: None,
                member_offset: 0,
                byte_offset: 0,
                bit: None,
                call_sites: count,
                reason: None,
            };
            if let Some(why) = members.iter().zip(&facts).find_map(|(m, f)| match link.unknown_body(m.function) {
                Some(unknown) => Some(format!("the body of a target is not known: {unknown}")),
                None => not_evaluable(*f, m.function.name, ret_width, widths),
            }) {
                a.reason = Some(why);
                reasons.push(format!("arguments {args:?}: {}", a.reason.as_deref().unwrap_or_default()));
                d.by_args.push(a);
                continue;
            }
            let mut eval_args: Vec<Option<u64>> = vec![None];
            eval_args.extend(args.iter().map(|v| Some(*v)));
            let values: Option<Vec<u64>> =
                facts.iter().map(|f| f.and_then(|f| f.expr.as_ref()).and_then(|e| e.eval(&eval_args))).collect();
            let Some(values) = values else {
                a.reason = Some("a target cannot be evaluated for these arguments (poison)".into());
                reasons.push(format!("arguments {args:?}: {}", a.reason.as_deref().unwrap_or_default()));
                d.by_args.push(a);
                continue;
            };
            self.resolve_values(&mut a, members, &values);
            if a.resolution == Resolution::None {
                reasons.push(format!("arguments {args:?}: {}", a.reason.as_deref().unwrap_or_default()));
            }
            d.by_args.push(a);
        }
    }

    /// Uniform, unique, or virtual constant propagation for one tuple.
    fn resolve_values(&mut self, a: &mut ArgDecision, members: &[SlotMember<'a>], values: &[u64]) {
        let link = self.link;
        if values.windows(2).all(|w| w[0] == w[1]) {
            a.resolution = Resolution::UniformRetVal;
            a.value = values[0];
            self.stats.uniform_ret_val += a.call_sites;
            return;
        }
        if a.width == 1 {
            for is_one in [1u64, 0] {
                let hits: Vec<usize> = (0..values.len()).filter(|&k| values[k] == is_one).collect();
                if let [k] = hits.as_slice() {
                    let m = members[*k];
                    let vt = link.vtable(m.vtable);
                    let key = link.key(m.vtable.module, &vt.symbol);
                    a.resolution = Resolution::UniqueRetVal;
                    a.value = is_one;
                    a.member_symbol = Some(self.export_local(key, true));
                    a.member_offset = m.address_point;
                    self.stats.unique_ret_val += a.call_sites;
                    return;
                }
            }
        }
        match self.store_beside(members, a.width, values) {
            Err(why) => a.reason = Some(why),
            Ok(p) => {
                a.resolution = Resolution::VirtualConstProp;
                a.byte_offset = p.byte_offset;
                a.bit = p.bit;
                self.stats.virtual_const_prop += a.call_sites;
            }
        }
    }

    /// Stores `values` (one per member, `width` bits each) beside the
    /// members' vtables at one offset from every address point, as virtual
    /// constant propagation lays out its results; the placement, or why
    /// the values cannot be stored. Every vtable must keep the field
    /// naturally aligned (LLVM: alignment at least the value's size), and
    /// bytes before a vtable are padded to its alignment, so a vtable
    /// aligned beyond the padding limit cannot take them.
    fn store_beside(&mut self, members: &[SlotMember<'a>], width: u32, values: &[u64]) -> Result<Placement, String> {
        let link = self.link;
        for m in members {
            let vt = link.vtable(m.vtable);
            let align = vcp_alignment(vt);
            if align.saturating_mul(8) < u64::from(width) || m.address_point % 8 != 0 {
                return Err(format!("vtable {} is too little aligned for a {width}-bit value", vt.symbol));
            }
            if align > MAX_PADDING {
                return Err(format!(
                    "vtable {} is aligned to {align} bytes: padding it would add more than {MAX_PADDING} bytes",
                    vt.symbol
                ));
            }
        }
        let lay: Vec<Member> = members
            .iter()
            .map(|m| Member { vtable: m.vtable, address_point: m.address_point, size: link.vtable(m.vtable).size })
            .collect();
        let budget = vcp_budget(link, members, width);
        let p = self
            .layout
            .place(&lay, width, budget)
            .ok_or_else(|| format!("storing the results would add more than {budget} bytes"))?;
        self.layout.store(&lay, width, p, values);
        Ok(p)
    }
}

/// The program's call sites, gathered once: by slot for the decisions,
/// each with the function holding it for the dead-slot analysis. A call
/// site in code the link discards (dead, or a copy another module's copy
/// replaces) is still rewritten when its slot has a decision, but it is
/// neither counted nor allowed to shape a decision, and it reads nothing.
pub struct ProgramCalls<'a> {
    /// Every slot the program's calls load, in (type id, offset) order:
    /// the order of the plan's decisions, one per slot.
    pub slots: Vec<SlotCalls<'a>>,
    /// The program's type tests that guard no call, with the function
    /// holding each: code may read any slot of the type id.
    pub untargeted: Vec<(RefNode, &'a TypeId)>,
    /// Per module, the functions holding call sites that are not code of
    /// the program.
    pub outside_program: PerModule<BTreeSet<&'a str>>,
}

/// The program's calls of one slot.
pub struct SlotCalls<'a> {
    pub type_id: &'a TypeId,
    pub offset: u64,
    /// In module order, then in each module's order.
    pub sites: Vec<&'a CallSite>,
    /// The reference-graph node of the function holding each of `sites`.
    pub holders: Vec<RefNode>,
}

/// A slot: a type id and a byte offset from its address points.
type SlotKey<'a> = (&'a TypeId, u64);

/// One module's share of [`ProgramCalls`], gathered on its own.
struct ModuleCalls<'a> {
    /// The module's slots in the order its calls first load them, each
    /// with the range of `calls` that loads it.
    slots: Vec<(SlotKey<'a>, std::ops::Range<usize>)>,
    /// The module's calls of slots with their holders, by slot (its
    /// number in `slots`), each slot's in the module's order.
    calls: Vec<(u32, RefNode, &'a CallSite)>,
    untargeted: Vec<(RefNode, &'a TypeId)>,
    outside_program: BTreeSet<&'a str>,
}

impl<'a> ModuleCalls<'a> {
    fn gather(link: &Hierarchy<'a>, m: ModuleIdx, s: &'a ModuleSummary) -> ModuleCalls<'a> {
        let mut keys: Vec<SlotKey<'a>> = Vec::new();
        let mut untargeted = Vec::new();
        let mut outside_program = BTreeSet::new();
        // Each call of a slot with the number of its slot among `keys`.
        let mut calls: Vec<(u32, RefNode, &'a CallSite)> = Vec::with_capacity(s.call_sites.len());
        let mut program_node = link.program_nodes(m);
        // By the address of the type id's text: a summary read from a file
        // shares one allocation per distinct name, so a call's text is
        // hashed only when its allocation is new (one summary made in
        // process may hold one text twice: still one slot of the module).
        let mut index: FxHashMap<(usize, u64), usize> = FxHashMap::default();
        let mut by_text: FxHashMap<SlotKey<'a>, usize> = FxHashMap::default();
        for c in &s.call_sites {
            match (program_node(&c.function), c.offset) {
                (None, _) => {
                    outside_program.insert(c.function.as_str());
                }
                (Some(h), Some(offset)) => {
                    let at = c.type_id.as_str().as_ptr() as usize;
                    let k = *index.entry((at, offset)).or_insert_with(|| {
                        *by_text.entry((&c.type_id, offset)).or_insert_with(|| {
                            keys.push((&c.type_id, offset));
                            keys.len() - 1
                        })
                    });
                    calls.push((u32::try_from(k).expect("fewer than 2^32 slots"), h, c));
                }
                (Some(h), None) => untargeted.push((h, &c.type_id)),
            }
        }
        // In slot order, each slot's calls in the module's order: a
        // counting sort, slot numbers being dense (0..keys.len()).
        let mut starts = vec![0usize; keys.len() + 1];
        for &(k, _, _) in &calls {
            starts[k as usize + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut next = starts.clone();
        // (Copied only to have a buffer of the right length to write into.)
        let mut in_order = calls.clone();
        for e in calls {
            let at = &mut next[e.0 as usize];
            in_order[*at] = e;
            *at += 1;
        }
        let slots = keys.into_iter().enumerate().map(|(k, key)| (key, starts[k]..starts[k + 1])).collect();
        ModuleCalls { slots, calls: in_order, untargeted, outside_program }
    }
}

impl<'a> ProgramCalls<'a> {
    fn gather(link: &Hierarchy<'a>) -> ProgramCalls<'a> {
        // Each module's calls on their own (in parallel: finding the
        // function holding each call is a few hash lookups, a million
        // times in a large link), then merged in module order, so the
        // result is the one a single thread makes.
        let mut per_module: Vec<ModuleCalls<'a>> = link
            .summaries
            .par_iter()
            .enumerate()
            .map(|(m, s)| ModuleCalls::gather(link, ModuleIdx::new(m), s))
            .collect();
        // Which slot of the program each module's slot is (in the order
        // the program's calls first load them), then each slot's calls put
        // together from its modules', in module order, slot by slot:
        // (slot, [(module, its slot number)]), in the order found.
        let mut parts: Vec<(SlotKey<'a>, Vec<(usize, usize)>)> = Vec::new();
        let mut by_slot: FxHashMap<SlotKey<'a>, usize> = FxHashMap::default();
        let mut untargeted = Vec::new();
        let mut outside_program = PerModule::default();
        for (m, module) in per_module.iter_mut().enumerate() {
            for (l, &(key, _)) in module.slots.iter().enumerate() {
                let k = *by_slot.entry(key).or_insert_with(|| {
                    parts.push((key, Vec::new()));
                    parts.len() - 1
                });
                parts[k].1.push((m, l));
            }
            untargeted.append(&mut module.untargeted);
            outside_program.push(std::mem::take(&mut module.outside_program));
        }
        let mut slots: Vec<SlotCalls<'a>> = parts
            .into_par_iter()
            .map(|((type_id, offset), from)| {
                let range = |&(m, l): &(usize, usize)| &per_module[m].calls[per_module[m].slots[l].1.clone()];
                let len = from.iter().map(|p| range(p).len()).sum();
                let (mut sites, mut holders) = (Vec::with_capacity(len), Vec::with_capacity(len));
                for p in &from {
                    for &(_, h, c) in range(p) {
                        sites.push(c);
                        holders.push(h);
                    }
                }
                SlotCalls { type_id, offset, sites, holders }
            })
            .collect();
        slots.sort_unstable_by(|a, b| (a.type_id, a.offset).cmp(&(b.type_id, b.offset)));
        ProgramCalls { slots, untargeted, outside_program }
    }
}

/// A count for the plan's statistics (the formats store 32-bit counts).
fn count(n: usize) -> u32 {
    u32::try_from(n).expect("count fits in 32 bits")
}

/// Makes the plan of one link.
pub fn decide(link: &Hierarchy<'_>, policy: &Policy) -> Plan {
    let summaries = link.summaries;
    let mut calls = ProgramCalls::gather(link);
    let mut hash_count: BTreeMap<&str, u32> = BTreeMap::new();
    for s in summaries {
        *hash_count.entry(s.module.hash.as_str()).or_default() += 1;
    }
    let mut decider = Decider {
        link,
        policy,
        layout: Layout::default(),
        promotions: PerModule::with_len(summaries.len(), |_| BTreeSet::new()),
        aliases: PerModule::with_len(summaries.len(), |_| BTreeSet::new()),
        keep: PerModule::with_len(summaries.len(), |_| BTreeSet::new()),
        hash_count,
        open: policy.open_type_ids(link),
        over_budget: BTreeMap::new(),
        wrappers_over_budget: BTreeMap::new(),
        stats: PlanStats {
            modules: count(summaries.len()),
            vtables: count(link.vtables.len()),
            live_vtables: count(link.vtables.iter().filter(|(k, _)| link.is_live(*k)).count()),
            ..PlanStats::default()
        },
    };
    // Each slot's members on their own (in parallel; in slot order).
    let work: Vec<SlotWork<'_, '_>> = calls
        .slots
        .par_iter()
        .map(|slot| SlotWork {
            slot: (slot.type_id, slot.offset),
            sites: &slot.sites,
            members: members(link, policy, &decider.open, slot.type_id, slot.offset),
            calls: SiteFacts::of(&slot.sites, policy),
            live_vtables: link.by_type_id.get(slot.type_id).map_or(0, |m| {
                m.iter().filter(|(r, _)| link.is_live(link.key(r.module, &link.vtable(*r).symbol))).count()
            }),
        })
        .collect();
    // Every slot's unguarded rules first: the dispatch budget counts only
    // the calls they leave.
    let mut decisions: Vec<SlotDecision> = work.iter().map(|w| decider.resolved(w)).collect();
    let dispatch = all_dispatch_calls(policy, &work, &decisions);
    let mut budget = CodeBudget::of(link, policy);
    // The dispatches first, then the wrappers' guards (and the guarded
    // speculation below) from what they leave.
    let limit = usize::from(policy.closed_set);
    decider.over_budget = over_budget(
        &work,
        &decisions,
        &dispatch,
        &mut budget,
        |m, calls| Some((dispatch_growth(link, m, limit)?, calls.calls)),
        ("no closed-set dispatch", "dispatch code"),
    );
    decider.wrappers_over_budget = over_budget(
        &work,
        &decisions,
        &dispatch,
        &mut budget,
        |m, calls| Some((wrapper_guard_growth(m, limit)?, calls.in_wrappers)),
        ("no guarded dispatch in the wrappers", "guard code"),
    );
    // Closed-set dispatch in slot order (it places case indices beside
    // vtables).
    for ((w, d), calls) in work.iter().zip(&mut decisions).zip(&dispatch) {
        if let (Ok(members), Some(calls)) = (&w.members, calls) {
            decider.dispatch(d, w, members, calls);
        }
    }
    // Guarded speculation after every dispatch, from the budget the
    // dispatches left.
    let guards: Vec<Option<Guard<'_>>> = work.iter().zip(&decisions).map(|(w, d)| decider.guard(d, w)).collect();
    let costs: Vec<(u64, usize, u64)> = guards
        .iter()
        .enumerate()
        .filter_map(|(i, g)| {
            let g = g.as_ref().filter(|g| !g.known.is_empty())?;
            Some((g.per_call, i, g.per_call * u64::from(g.left)))
        })
        .collect();
    let refused = budget.admit(costs, "not guarded", "guard code");
    for (i, ((d, g), calls)) in decisions.iter_mut().zip(guards).zip(&dispatch).enumerate() {
        if let Some(g) = g {
            decider.speculate(d, g, refused.get(&i));
        }
        if d.wrappers_guarded && d.speculative.is_empty() {
            // The wrappers' calls (`Outcome::wrapper_guarded`), unless a
            // guard above took them.
            let guarded = calls.as_ref().map_or(0, |c| c.in_wrappers);
            d.speculated += guarded;
            decider.stats.speculative += guarded;
        }
        // Calls a dispatch or guard would have taken but for `musttail`.
        let must_tail = || work[i].sites.iter().filter(|c| !may_branch(c) && left_unguarded(d, c, policy)).count();
        if (!d.closed_set.is_empty() || !d.speculative.is_empty())
            && let must_tail = must_tail()
            && must_tail > 0
        {
            add_reason(
                d,
                format!(
                    "{must_tail} musttail call(s) not dispatched or guarded: each must stay the one call before its return"
                ),
            );
        }
        decider.stats.call_sites += d.call_sites;
        decider.stats.not_devirtualized += d.call_sites - d.devirtualized - d.speculated;
    }
    let mut layouts: Vec<VtableLayout> = decider
        .layout
        .vtables
        .iter()
        .map(|(&r, beside)| {
            let vt = link.vtable(r);
            let key = link.key(r.module, &vt.symbol);
            VtableLayout {
                symbol: key.name.to_string(),
                module: key.module,
                before: beside.before_bytes(vcp_alignment(vt)),
                after: beside.after.clone(),
            }
        })
        .collect();
    layouts.sort_by(|a, b| (a.symbol.as_str(), a.module).cmp(&(b.symbol.as_str(), b.module)));
    decider.stats.vtable_bytes_added = layouts.iter().map(|l| (l.before.len() + l.after.len()) as u64).sum();
    let mut plan = Plan {
        options: PlanOptions {
            whole_program_visibility: policy.whole_program_visibility,
            shared: policy.facts.shared,
            export_dynamic: policy.facts.export_dynamic || policy.facts.partial_export,
            external_refs_known: policy.facts.external_refs.is_some(),
            validated: policy.validation.enabled,
            speculate: policy.speculate,
            closed_set: policy.closed_set,
        },
        modules: summaries
            .iter()
            .zip(decider.promotions)
            .zip(decider.aliases)
            .zip(decider.keep)
            .zip(std::mem::take(&mut calls.outside_program))
            .map(|((((s, p), a), k), o)| PlanModule {
                name: s.module.name.clone(),
                hash: s.module.hash.clone(),
                promotions: p.into_iter().collect(),
                vtable_aliases: a.into_iter().collect(),
                keep: k.into_iter().collect(),
                outside_program: o.into_iter().map(str::to_string).collect(),
            })
            .collect(),
        decisions,
        layouts,
        open_type_ids: decider
            .open
            .iter()
            .map(|(&t, r)| wpd_summary::OpenTypeId { type_id: t.clone(), reason: r.clone() })
            .collect(),
        dead_slots: Vec::new(),
        dead_slots_off: None,
        stats: decider.stats,
    };
    // Which slots nothing loads depends on every decision above.
    let dead = crate::dead_slots::analyze(link, policy, &plan, &calls);
    plan.dead_slots = dead.dead;
    plan.dead_slots_off = dead.off;
    plan.stats.dead_slots = dead.slots;
    plan.stats.dead_functions = dead.functions;
    plan.stats.dead_instructions = dead.instructions;
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_code_budget_admits_the_cheapest_per_call_first_and_is_shared() {
        let mut budget = CodeBudget { program: 100_000, budget: 1000, spent: 0 };
        // (cost per call, slot, cost over its calls): taken in the order
        // slot 0, 1 (a tie on cost per call: slot order), 2, 3.
        let refused = budget.admit(vec![(7, 2usize, 700), (3, 1, 600), (3, 0, 300), (9, 3, 90)], "no dispatch", "code");
        // 0 and 1 take 900; 2 would exceed the 1000; 3, more costly per
        // call but small, still fits.
        assert_eq!(refused.keys().copied().collect::<Vec<_>>(), [2]);
        assert_eq!(
            refused[&2],
            "no dispatch: about 700 instructions of code (7 per call) would exceed what the program allows, 1000 (1% of its 100000 instructions; 900 taken by cheaper slots)"
        );
        assert_eq!(budget.spent, 990);
        // A later rule gets what is left.
        let refused = budget.admit(vec![(1, 0usize, 20), (1, 1, 10)], "not guarded", "guard code");
        assert_eq!(refused.keys().copied().collect::<Vec<_>>(), [0]);
        assert_eq!(budget.spent, 1000);
    }
}
