//! Decisions: for every slot (type id, byte offset) that a call site uses,
//! find the possible targets in the live, closed vtables carrying the type id
//! and choose a resolution, or record why there is none.

use crate::hierarchy::{Link, SymKey};
use crate::policy::Policy;
use std::collections::{BTreeMap, BTreeSet};
use wpd_summary::{
    Plan, PlanModule, PlanOptions, PlanStats, Promotion, Resolution, SlotDecision, SlotKind, VcallVisibility,
};

/// How many target names a reason lists before eliding.
const REASON_TARGETS: usize = 6;

/// One possible callee of a slot.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct Target<'a> {
    pub key: SymKey<'a>,
}

/// The possible targets of slot (`type_id`, `offset`), LLVM's rules: every
/// live vtable carrying the type id must be constant and closed (not public
/// after the policy) and hold a function at the slot; `__cxa_pure_virtual`
/// and functions whose entry is `unreachable` are not targets.
pub fn targets<'a>(link: &Link<'a>, policy: &Policy, type_id: &str, offset: u64) -> Result<Vec<Target<'a>>, String> {
    let Some(members) = link.by_type_id.get(type_id) else {
        return Err("no vtable carries this type id".into());
    };
    let mut out = BTreeSet::new();
    for &(vref, address_point) in members {
        let (vkey, vt) = (link.key(vref.module, &link.vtable(vref).symbol), link.vtable(vref));
        if !link.is_live(vkey) {
            continue;
        }
        if !vt.constant {
            return Err(format!("vtable {} is not constant", vt.symbol));
        }
        if policy.effective_visibility(vt) == VcallVisibility::Public {
            let why = if policy.whole_program_visibility { " (dynamically exported)" } else { "" };
            return Err(format!("public vcall_visibility: {}{why}", vt.symbol));
        }
        if vt.slots.is_empty() {
            return Err(format!("vtable {} has no initializer in the link", vt.symbol));
        }
        let at = address_point + offset;
        let Some(slot) = link.slot(vref, at) else {
            return Err(format!("vtable {} has no slot at byte {at}", vt.symbol));
        };
        match slot.kind {
            SlotKind::PureVirtual => {}
            SlotKind::Function => {
                let name = slot.function.as_deref().expect("function slots name their function");
                let key = link.key(vref.module, name);
                let unreachable = link.function_facts(key).is_some_and(|f| f.entry_unreachable);
                if !unreachable {
                    out.insert(Target { key });
                }
            }
            _ => {
                return Err(format!("vtable {} holds no function at byte {at}", vt.symbol));
            }
        }
    }
    Ok(out.into_iter().collect())
}

/// Name used for a local symbol once promoted to a hidden global.
fn promoted_name(name: &str, hash: &str, module: u32, clash: bool) -> String {
    let short = &hash[..hash.len().min(16)];
    if clash { format!("{name}.wpd.{short}.{module}") } else { format!("{name}.wpd.{short}") }
}

/// Makes the plan of one link.
pub fn decide(link: &Link<'_>, policy: &Policy) -> Plan {
    let summaries = link.summaries;
    // Slots used by call sites, with their sites.
    let mut slots: BTreeMap<(&str, u64), Vec<(u32, usize)>> = BTreeMap::new();
    for (m, s) in summaries.iter().enumerate() {
        for (i, c) in s.call_sites.iter().enumerate() {
            if let Some(off) = c.offset {
                slots.entry((c.type_id.as_str(), off)).or_default().push((m as u32, i));
            }
        }
    }
    let mut hash_count: BTreeMap<&str, u32> = BTreeMap::new();
    for s in summaries {
        *hash_count.entry(s.module.hash.as_str()).or_default() += 1;
    }
    let mut promotions: Vec<BTreeSet<Promotion>> = vec![BTreeSet::new(); summaries.len()];
    let mut stats = PlanStats {
        modules: summaries.len() as u32,
        vtables: link.vtables.len() as u32,
        live_vtables: link.vtables.iter().filter(|(k, _)| link.is_live(*k)).count() as u32,
        ..PlanStats::default()
    };
    let mut decisions = Vec::with_capacity(slots.len());
    for ((type_id, offset), sites) in slots {
        let found = targets(link, policy, type_id, offset);
        let vtables = link
            .by_type_id
            .get(type_id)
            .map(|m| m.iter().filter(|(r, _)| link.is_live(link.key(r.module, &link.vtable(*r).symbol))).count())
            .unwrap_or(0) as u32;
        let mut d = SlotDecision {
            type_id: type_id.to_string(),
            offset,
            resolution: Resolution::None,
            targets: Vec::new(),
            target: None,
            vtables,
            call_sites: sites.len() as u32,
            devirtualized: 0,
            reason: None,
        };
        match found {
            Err(reason) => d.reason = Some(reason),
            Ok(ts) => {
                d.targets = ts.iter().map(|t| t.key.name.to_string()).collect();
                match ts.as_slice() {
                    [] => d.reason = Some("no callable target (only pure virtual or unreachable functions)".into()),
                    [only] => {
                        let eligible = sites
                            .iter()
                            .filter(|&&(m, i)| policy.call_site_blocker(&summaries[m as usize].call_sites[i]).is_none())
                            .count() as u32;
                        let blocked = sites
                            .iter()
                            .find_map(|&(m, i)| policy.call_site_blocker(&summaries[m as usize].call_sites[i]));
                        if eligible > 0 {
                            d.resolution = Resolution::SingleImpl;
                            d.devirtualized = eligible;
                            d.target = Some(match only.key.module {
                                None => only.key.name.to_string(),
                                Some(m) => {
                                    let hash = summaries[m as usize].module.hash.as_str();
                                    let p = promoted_name(only.key.name, hash, m, hash_count[hash] > 1);
                                    promotions[m as usize]
                                        .insert(Promotion { symbol: only.key.name.to_string(), promoted: p.clone() });
                                    p
                                }
                            });
                        }
                        if let Some(b) = blocked {
                            let left = d.call_sites - eligible;
                            d.reason = Some(format!("{left} call site(s) left: {b}"));
                        }
                    }
                    many => {
                        let mut names: Vec<&str> = many.iter().take(REASON_TARGETS).map(|t| t.key.name).collect();
                        if many.len() > REASON_TARGETS {
                            names.push("...");
                        }
                        d.reason = Some(format!("{} targets: {}", many.len(), names.join(", ")));
                    }
                }
            }
        }
        stats.call_sites += d.call_sites;
        stats.single_impl += d.devirtualized;
        stats.not_devirtualized += d.call_sites - d.devirtualized;
        decisions.push(d);
    }
    Plan {
        options: PlanOptions {
            whole_program_visibility: policy.whole_program_visibility,
            shared: policy.facts.shared,
            export_dynamic: policy.facts.export_dynamic,
            external_refs_known: policy.facts.external_refs.is_some(),
        },
        modules: summaries
            .iter()
            .zip(promotions)
            .map(|(s, p)| PlanModule {
                name: s.module.name.clone(),
                hash: s.module.hash.clone(),
                promotions: p.into_iter().collect(),
            })
            .collect(),
        decisions,
        stats,
    }
}
