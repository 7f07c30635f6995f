//! Remarks (one line per devirtualized call, in LLVM's wording) and the JSON
//! report for CI (`wpd-report/1`; key names are a stable interface).

use crate::policy::Policy;
use crate::timing::Timings;
use serde_json::{Value, json};
use wpd_summary::{CallSite, ModuleSummary, Plan, Resolution, SlotDecision};

/// One remark per rewritten call, in module and program order.
pub fn remarks(summaries: &[ModuleSummary], plan: &Plan, policy: &Policy) -> Vec<String> {
    let mut out = Vec::new();
    for s in summaries {
        for c in &s.call_sites {
            let Some(off) = c.offset else { continue };
            let Some(d) = plan.decision(&c.type_id, off) else { continue };
            let at = match &c.location {
                Some(loc) => format!(" ({loc})"),
                None => format!(" (in {}, {})", c.function, s.module.name),
            };
            if resolved(d, c, policy) {
                let kind = call_resolution(d, c).unwrap_or("?");
                let callee = d.targets.first().map(String::as_str).unwrap_or("?");
                out.push(format!("{kind}: devirtualized a call to {callee}{at}"));
            } else if !d.speculative.is_empty() && c.assumed {
                out.push(format!("speculative: guarded direct call to {}{at}", d.speculative.join(" or ")));
            }
        }
    }
    out
}

/// Whether call `c` of slot decision `d` is rewritten unguarded.
pub fn resolved(d: &SlotDecision, c: &CallSite, policy: &Policy) -> bool {
    policy.call_site_blocker(c).is_none() && call_resolution(d, c).is_some()
}

/// The remark word for how call `c` of slot decision `d` is resolved.
pub fn call_resolution(d: &SlotDecision, c: &CallSite) -> Option<&'static str> {
    if d.resolution == Resolution::SingleImpl {
        return Some(Resolution::SingleImpl.remark_name());
    }
    let a = d.for_args(c.const_args.as_deref())?;
    match (a.resolution, a.bit) {
        (Resolution::None, _) => None,
        (Resolution::VirtualConstProp, Some(_)) => Some("virtual-const-prop-1-bit"),
        (r, _) => Some(r.remark_name()),
    }
}

/// The JSON report of a link.
pub fn report(plan: &Plan, timings: &Timings, output_bytes: Option<u64>) -> Value {
    let s = &plan.stats;
    let decisions: Vec<Value> = plan
        .decisions
        .iter()
        .map(|d| {
            json!({
                "type_id": d.type_id,
                "offset": d.offset,
                "resolution": d.resolution,
                "targets": d.targets,
                "target": d.target,
                "vtables": d.vtables,
                "call_sites": d.call_sites,
                "devirtualized": d.devirtualized,
                "reason": d.reason,
                "by_args": d.by_args,
                "speculative": d.speculative,
                "speculated": d.speculated,
            })
        })
        .collect();
    let timings_ms: serde_json::Map<String, Value> =
        timings.phases.iter().map(|(name, d)| (name.to_string(), json!(d.as_secs_f64() * 1e3))).collect();
    json!({
        "schema": "wpd-report/1",
        "call_sites": {
            "total": s.call_sites,
            "single_impl": s.single_impl,
            "uniform_ret_val": s.uniform_ret_val,
            "unique_ret_val": s.unique_ret_val,
            "virtual_const_prop": s.virtual_const_prop,
            "speculative": s.speculative,
            "not_devirtualized": s.not_devirtualized,
        },
        "options": plan.options,
        "modules": s.modules,
        "vtables": { "total": s.vtables, "live": s.live_vtables, "bytes_added": s.vtable_bytes_added },
        "decisions": decisions,
        "open_type_ids": plan.open_type_ids,
        "size": { "output_bytes": output_bytes },
        "timings_ms": timings_ms,
    })
}
