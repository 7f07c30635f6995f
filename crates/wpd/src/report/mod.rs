//! Remarks (one line per devirtualized call, in LLVM's wording; with
//! `missed`, one per call left indirect with its reason), LLVM's
//! optimization-record YAML of the same ([`yaml`]), and the JSON report for
//! CI (`wpd-report/2`, docs/report-format.md; key names are a stable
//! interface), which `wpd report` renders ([`render`]) and compares
//! ([`diff`]).
//!
//! All count what the backends did ([`BackendStats::calls`]); the plan's
//! predictions are kept beside them (`planned`) and every call site where the
//! two differ is listed (`mismatches`), which the tests require to be empty.

pub mod diff;
pub mod render;
pub mod sizes;
pub mod view;
pub mod yaml;

use crate::backends::{BackendStats, CallOutcome, Outcome};
use crate::policy::Policy;
use crate::rewrite::closed_set::Dispatched;
use crate::timing::Timings;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use wpd_summary::ids::modules;
use wpd_summary::{CallSite, ModuleIdx, ModuleSummary, Plan, SlotDecision};

/// Where a call site is, for messages: its source location, else its
/// function and module.
fn at(c: &CallSite, module: &str) -> String {
    match &c.location {
        Some(loc) => format!(" ({loc})"),
        None => format!(" (in {}, {module})", c.function),
    }
}

/// Why call `c` was left indirect.
pub fn indirect_reason(plan: &Plan, c: &CallSite) -> String {
    let Some(offset) = c.offset else { return "the type test guards no call".into() };
    let Some(d) = plan.decision(&c.type_id, offset) else { return "no decision for its slot".into() };
    if let Some(r) = &d.reason {
        return r.clone();
    }
    let args: Option<Vec<u64>> = c.const_args.as_ref().map(|a| a.iter().map(|x| x.value).collect());
    if let Some(r) = d.by_args.iter().find(|b| Some(&b.args) == args.as_ref()).and_then(|b| b.reason.clone()) {
        return r;
    }
    if c.call.is_none() {
        return "the type test guards no call".into();
    }
    format!("the slot's resolution ({}) does not apply to this call", d.resolution.remark_name())
}

/// What a remark says about call `c` with `outcome`, without where the call
/// is; `None` when it gets none (`missed`: calls left indirect get one too).
fn remark_message(
    plan: &Plan,
    c: &CallSite,
    outcome: Outcome,
    dispatch: Option<&Dispatched>,
    missed: bool,
) -> Option<String> {
    c.call.as_ref()?;
    if outcome == Outcome::Indirect {
        return missed.then(|| format!("missed: virtual call left indirect: {}", indirect_reason(plan, c)));
    }
    let d = plan.decision(&c.type_id, c.offset?)?;
    match outcome {
        Outcome::Indirect => None,
        // A wrapper's guarded dispatch names the targets it tests.
        Outcome::Speculative => Some(format!(
            "speculative: guarded direct call to {}",
            dispatch.map_or(d.speculative.join(" or "), |p| p.targets.join(" or "))
        )),
        Outcome::ClosedSet => Some(closed_set_message(d, dispatch)),
        o => {
            let callee = d.targets.first().map(String::as_str).unwrap_or("?");
            Some(format!("{}: devirtualized a call to {callee}", o.remark_name()))
        }
    }
}

/// A closed-set remark: `closed-set: dispatched over N targets[ by case
/// index][ in profile order]: T1, T2[; K cold in the profile stay
/// indirect]` (`over K of N targets` when cold ones stay indirect).
fn closed_set_message(d: &SlotDecision, dispatch: Option<&Dispatched>) -> String {
    let of = d.closed_set.len();
    let (targets, profiled, fallback): (Vec<&str>, bool, bool) = match dispatch {
        Some(p) => (p.targets.iter().map(String::as_str).collect(), p.profiled, p.fallback),
        None => (d.closed_set.iter().map(|c| c.target.as_str()).collect(), false, false),
    };
    let mut how = String::new();
    if d.dispatch_index.is_some() {
        how += " by case index";
    }
    if profiled {
        how += " in profile order";
    }
    let list = targets.join(", ");
    if fallback {
        let cold = of - targets.len();
        format!(
            "closed-set: dispatched over {} of {of} targets{how}: {list}; {cold} cold in the profile stay indirect",
            targets.len()
        )
    } else {
        format!("closed-set: dispatched over {} targets{how}: {list}", targets.len())
    }
}

/// The remark line for call `c`: the message and where the call is.
fn remark(
    plan: &Plan,
    c: &CallSite,
    outcome: Outcome,
    dispatch: Option<&Dispatched>,
    module: &str,
    missed: bool,
) -> Option<String> {
    remark_message(plan, c, outcome, dispatch, missed).map(|m| format!("{m}{}", at(c, module)))
}

/// Which remarks to print.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Remarks {
    #[default]
    None,
    /// Calls rewritten (`--wpd-remarks`).
    Passed,
    /// Calls left indirect, with the reason (`--wpd-remarks=missed`).
    Missed,
    /// Both (`--wpd-remarks=all`).
    All,
}

impl Remarks {
    pub fn parse(v: &str) -> Option<Remarks> {
        Some(match v {
            "passed" => Remarks::Passed,
            "missed" => Remarks::Missed,
            "all" => Remarks::All,
            "none" => Remarks::None,
            _ => return None,
        })
    }
}

/// What the backends did at the program's call sites (see
/// [`Plan::in_program`]), with each call's module index, in module order.
fn program_calls<'a>(plan: &'a Plan, stats: &'a [BackendStats]) -> impl Iterator<Item = (ModuleIdx, &'a CallOutcome)> {
    modules(stats).flat_map(move |(m, st)| {
        st.calls.iter().filter(move |c| plan.in_program(m, &c.site.function)).map(move |c| (m, c))
    })
}

/// The remarks the backends' outcomes give, in module and program order.
pub fn remarks(summaries: &[ModuleSummary], plan: &Plan, stats: &[BackendStats], which: Remarks) -> Vec<String> {
    let (passed, missed) = match which {
        Remarks::None => return Vec::new(),
        Remarks::Passed => (true, false),
        Remarks::Missed => (false, true),
        Remarks::All => (true, true),
    };
    program_calls(plan, stats)
        .filter(|(_, c)| if c.outcome == Outcome::Indirect { missed } else { passed })
        .filter_map(|(m, c)| {
            remark(plan, &c.site, c.outcome, c.dispatch.as_ref(), &summaries[m.index()].module.name, missed)
        })
        .collect()
}

/// Every call's remark as LLVM optimization records (YAML).
pub fn remarks_yaml(stats: &[BackendStats], plan: &Plan) -> String {
    let mut records = Vec::new();
    for (_, c) in program_calls(plan, stats) {
        // The location goes to DebugLoc, not into the message.
        let Some(message) = remark_message(plan, &c.site, c.outcome, c.dispatch.as_ref(), true) else { continue };
        records.push(yaml::Record {
            passed: c.outcome != Outcome::Indirect,
            location: c.site.location.as_deref(),
            function: &c.site.function,
            message,
        });
    }
    yaml::write(&records)
}

/// The plan's prediction of [`remarks`] (for `wpd thin-link --remarks`,
/// where no backend has run).
pub fn planned_remarks(summaries: &[ModuleSummary], plan: &Plan, policy: &Policy) -> Vec<String> {
    let mut out = Vec::new();
    for (m, s) in modules(summaries) {
        for c in s.call_sites.iter().filter(|c| plan.in_program(m, &c.function)) {
            out.extend(remark(plan, c, Outcome::planned(plan, c, policy), None, &s.module.name, false));
        }
    }
    out
}

/// Every call site where a backend did something else than the plan says,
/// one line each naming the call site; also a module whose backend saw other
/// call sites than its summary, and dead slots no backend replaced. (A vtable laid out for constant propagation
/// that no module rebuilt stops the link: `devirtualize_and_compile`.)
pub fn mismatches(summaries: &[ModuleSummary], plan: &Plan, policy: &Policy, stats: &[BackendStats]) -> Vec<String> {
    let mut out = Vec::new();
    for (s, st) in summaries.iter().zip(stats) {
        let module = &s.module.name;
        if s.call_sites.len() != st.calls.len() {
            out.push(format!(
                "{module}: the summary has {} call site records, the backend found {}",
                s.call_sites.len(),
                st.calls.len()
            ));
            continue;
        }
        for (c, done) in s.call_sites.iter().zip(&st.calls) {
            let planned = Outcome::planned(plan, c, policy);
            if done.site != *c {
                out.push(format!("{module}: call site{} differs between summary and backend", at(c, module)));
            } else if planned != done.outcome {
                out.push(format!(
                    "{module}: call to slot ({}, {:?}){} planned {}, backend did {}",
                    c.type_id,
                    c.offset,
                    at(c, module),
                    planned.remark_name(),
                    done.outcome.remark_name()
                ));
            }
        }
    }
    // Every dead slot is in some module's copy of its vtable.
    let replaced: u64 = stats.iter().map(|st| u64::from(st.dead_slots)).sum();
    if replaced < u64::from(plan.stats.dead_slots) {
        out.push(format!(
            "the plan has {} dead slots, the backends replaced {replaced} vtable entries",
            plan.stats.dead_slots
        ));
    }
    out
}

/// Counts of call sites (records with a call) by outcome.
fn counts<'a>(outcomes: impl Iterator<Item = (&'a CallSite, Outcome)>) -> Value {
    let mut n: BTreeMap<&str, u32> = BTreeMap::new();
    let mut total = 0;
    for (c, o) in outcomes {
        if c.call.is_none() {
            continue;
        }
        total += 1;
        let key = match o {
            Outcome::Indirect => "not_devirtualized",
            Outcome::SingleImpl => "single_impl",
            Outcome::UniformRetVal => "uniform_ret_val",
            Outcome::UniqueRetVal => "unique_ret_val",
            Outcome::VirtualConstProp | Outcome::VirtualConstProp1Bit => "virtual_const_prop",
            Outcome::Speculative => "speculative",
            Outcome::ClosedSet => "closed_set",
        };
        *n.entry(key).or_default() += 1;
    }
    let get = |k: &str| n.get(k).copied().unwrap_or(0);
    json!({
        "total": total,
        "single_impl": get("single_impl"),
        "uniform_ret_val": get("uniform_ret_val"),
        "unique_ret_val": get("unique_ret_val"),
        "virtual_const_prop": get("virtual_const_prop"),
        "closed_set": get("closed_set"),
        "speculative": get("speculative"),
        "not_devirtualized": get("not_devirtualized"),
    })
}

/// The JSON report of a link: counts from the backends' outcomes, the
/// plan's predictions beside them, and the mismatches between the two.
pub fn report(
    summaries: &[ModuleSummary],
    plan: &Plan,
    policy: &Policy,
    stats: &[BackendStats],
    mismatches: &[String],
    timings: &Timings,
    sizes: Option<&view::Sizes>,
    baseline: Option<&view::Sizes>,
) -> Value {
    let s = &plan.stats;
    // Per slot, what the backends did.
    let mut done: BTreeMap<(&str, u64), (u32, u32)> = BTreeMap::new();
    for (_, c) in program_calls(plan, stats) {
        let Some(off) = c.site.offset else { continue };
        let e = done.entry((c.site.type_id.as_str(), off)).or_default();
        e.0 += u32::from(c.outcome.is_devirtualized());
        e.1 += u32::from(c.outcome == Outcome::Speculative);
    }
    let decisions: Vec<Value> = plan
        .decisions
        .iter()
        .map(|d| {
            let (devirtualized, speculated) = done.get(&(d.type_id.as_str(), d.offset)).copied().unwrap_or_default();
            json!({
                "type_id": d.type_id,
                "offset": d.offset,
                "resolution": d.resolution,
                "targets": d.targets,
                "target": d.target,
                "vtables": d.vtables,
                "call_sites": d.call_sites,
                "devirtualized": devirtualized,
                "reason": d.reason,
                "by_args": d.by_args,
                "speculative": d.speculative,
                "speculated": speculated,
                "closed_set": d.closed_set,
            })
        })
        .collect();
    let done = counts(program_calls(plan, stats).map(|(_, c)| (&c.site, c.outcome)));
    let all_calls: usize = stats.iter().map(|st| st.calls.iter().filter(|c| c.site.call.is_some()).count()).sum();
    // Every call of the program, where it is and what happened to it.
    let mut calls = Vec::new();
    for (m, c) in program_calls(plan, stats).filter(|(_, c)| c.site.call.is_some()) {
        let d = c.site.offset.and_then(|o| plan.decision(&c.site.type_id, o));
        calls.push(json!({
            "module": summaries[m.index()].module.name,
            "function": c.site.function,
            "location": c.site.location,
            "type_id": c.site.type_id,
            "offset": c.site.offset,
            "outcome": c.outcome.remark_name(),
            "target": match c.outcome {
                Outcome::SingleImpl => d.and_then(|d| d.targets.first().cloned()),
                _ => None,
            },
            // An indirect call: why it stayed so; a closed-set one: why its
            // slot has no single target or return value.
            "reason": match c.outcome {
                Outcome::Indirect => Some(indirect_reason(plan, &c.site)),
                Outcome::ClosedSet => d.and_then(|d| d.reason.clone()),
                _ => None,
            },
        }));
    }
    let outside_program = all_calls - calls.len();
    let planned = counts(modules(summaries).flat_map(|(m, s)| {
        s.call_sites
            .iter()
            .filter(move |c| plan.in_program(m, &c.function))
            .map(|c| (c, Outcome::planned(plan, c, policy)))
    }));
    let mut report = json!({
        "schema": "wpd-report/2",
        "call_sites": done,
        "outside_program_call_sites": outside_program,
        "planned": planned,
        "mismatches": mismatches,
        "options": plan.options,
        "modules": s.modules,
        "modules_unchanged": stats.iter().filter(|st| st.unchanged).count(),
        "split_units_kept_in_two": stats.iter().filter(|st| st.kept_in_two).count(),
        "split_units_vtables_in_regular_lto": stats.iter().filter(|st| st.vtables_in_regular_lto).count(),
        "vtables": {
            "total": s.vtables,
            "live": s.live_vtables,
            "bytes_added": s.vtable_bytes_added,
            "rebuilt": stats.iter().map(|st| st.layouts_rebuilt.len()).sum::<usize>(),
        },
        "dead_slots": {
            "slots": s.dead_slots,
            "vtables": plan.dead_slots.len(),
            "replaced": stats.iter().map(|st| u64::from(st.dead_slots)).sum::<u64>(),
            "functions": s.dead_functions,
            "instructions": s.dead_instructions,
            "off": plan.dead_slots_off,
            "entries": plan.dead_slots.iter().map(|d| json!({
                "vtable": d.symbol,
                "module": d.module.map(|m| summaries[m.index()].module.name.clone()),
                "offsets": d.offsets,
            })).collect::<Vec<_>>(),
        },
        "type_tests_dropped": stats.iter().map(|st| u64::from(st.type_tests_dropped)).sum::<u64>(),
        "decisions": decisions,
        "open_type_ids": plan.open_type_ids,
        "calls": calls,
        "size": { "output": sizes, "baseline": baseline },
    });
    timings.add_to_report(&mut report, "");
    report
}
