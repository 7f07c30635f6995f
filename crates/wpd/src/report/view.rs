//! A report read back for `wpd report` and `wpd report diff`: the JSON of
//! schema `wpd-report/2` (this wpd) or `wpd-report/1` (the previous one,
//! which has no per-call list and only the output's total size), typed.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The schemas `wpd report` reads.
pub const SCHEMAS: &[&str] = &["wpd-report/1", "wpd-report/2"];

/// Call sites by what was done to them.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct Counts {
    #[serde(default)]
    pub total: u64,
    #[serde(default)]
    pub single_impl: u64,
    #[serde(default)]
    pub uniform_ret_val: u64,
    #[serde(default)]
    pub unique_ret_val: u64,
    #[serde(default)]
    pub virtual_const_prop: u64,
    #[serde(default)]
    pub closed_set: u64,
    #[serde(default)]
    pub speculative: u64,
    #[serde(default)]
    pub not_devirtualized: u64,
}

impl Counts {
    /// Calls made direct or constant, unguarded (closed-set dispatches
    /// included: no indirect call is left).
    pub fn devirtualized(&self) -> u64 {
        self.single_impl + self.uniform_ret_val + self.unique_ret_val + self.virtual_const_prop + self.closed_set
    }

    /// (key, label, count) of every kind, in the report's order.
    pub fn kinds(&self) -> [(&'static str, &'static str, u64); 7] {
        [
            ("single_impl", "single implementation", self.single_impl),
            ("uniform_ret_val", "uniform return value", self.uniform_ret_val),
            ("unique_ret_val", "unique return value", self.unique_ret_val),
            ("virtual_const_prop", "virtual constant propagation", self.virtual_const_prop),
            ("closed_set", "closed-set dispatch", self.closed_set),
            ("speculative", "guarded speculative call", self.speculative),
            ("not_devirtualized", "left indirect", self.not_devirtualized),
        ]
    }
}

/// One slot's decision.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Decision {
    pub type_id: String,
    pub offset: u64,
    #[serde(default)]
    pub resolution: String,
    #[serde(default)]
    pub targets: Vec<String>,
    #[serde(default)]
    pub call_sites: u64,
    #[serde(default)]
    pub devirtualized: u64,
    #[serde(default)]
    pub speculated: u64,
    #[serde(default)]
    pub reason: Option<String>,
}

/// A hierarchy validation opened, and why.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct OpenTypeId {
    pub type_id: String,
    #[serde(default)]
    pub reason: String,
}

/// One call site (schema 2).
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Call {
    pub module: String,
    pub function: String,
    #[serde(default)]
    pub location: Option<String>,
    pub type_id: String,
    #[serde(default)]
    pub offset: Option<u64>,
    pub outcome: String,
    #[serde(default)]
    pub target: Option<String>,
    #[serde(default)]
    pub reason: Option<String>,
}

/// Sizes of an output, in bytes.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
pub struct Sizes {
    #[serde(default)]
    pub file: Option<u64>,
    /// `.text`, `.rodata`, `.data.rel.ro`, `.eh_frame` (those present).
    #[serde(default)]
    pub sections: BTreeMap<String, u64>,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct VtableStats {
    #[serde(default)]
    pub total: u64,
    #[serde(default)]
    pub live: u64,
    #[serde(default)]
    pub bytes_added: u64,
}

/// Dead-slot elimination: the slots whose entries became the trap stub,
/// and the functions ThinLTO's dead stripping could then drop.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct DeadSlotStats {
    #[serde(default)]
    pub slots: u64,
    #[serde(default)]
    pub vtables: u64,
    #[serde(default)]
    pub functions: u64,
    #[serde(default)]
    pub instructions: u64,
    /// Why no slot was dead, when elimination was off for the link.
    #[serde(default)]
    pub off: Option<String>,
}

/// The size part of a report.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct SizeReport {
    /// Schema 1's only size.
    #[serde(default)]
    pub output_bytes: Option<u64>,
    #[serde(default, deserialize_with = "null_default")]
    pub output: Sizes,
    /// The same link without devirtualization (`--wpd-size-baseline`).
    #[serde(default)]
    pub baseline: Option<Sizes>,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct Report {
    pub schema: String,
    pub call_sites: Counts,
    #[serde(default)]
    pub decisions: Vec<Decision>,
    #[serde(default)]
    pub open_type_ids: Vec<OpenTypeId>,
    #[serde(default)]
    pub calls: Vec<Call>,
    #[serde(default)]
    pub vtables: VtableStats,
    #[serde(default)]
    pub dead_slots: DeadSlotStats,
    #[serde(default)]
    pub size: SizeReport,
    #[serde(default)]
    pub timings_ms: BTreeMap<String, f64>,
    #[serde(default)]
    pub mismatches: Vec<String>,
}

impl Report {
    /// Reads and checks a report; errors are one line naming the file.
    pub fn read(path: &Path) -> Result<Report> {
        let shown = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| Error::at(&shown, format!("cannot read: {e}")))?;
        let value: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| Error::at(&shown, format!("not JSON: {e}")))?;
        let schema = value.get("schema").and_then(|s| s.as_str()).unwrap_or("").to_string();
        if !SCHEMAS.contains(&schema.as_str()) {
            return Err(Error::at(
                &shown,
                format!("not a wpd report (schema {:?}; this wpd reads {})", schema, SCHEMAS.join(", ")),
            ));
        }
        serde_json::from_value(value).map_err(|e| Error::at(&shown, format!("malformed {schema} report: {e}")))
    }

    /// The output's size (either schema).
    pub fn file_size(&self) -> Option<u64> {
        self.size.output.file.or(self.size.output_bytes)
    }

    /// The whole link's wall time, if recorded.
    pub fn total_ms(&self) -> Option<f64> {
        self.timings_ms.get("total").copied()
    }

    /// Call sites left indirect, by reason, most first (from the slots'
    /// decisions; a slot with no reason counts as "undecided").
    pub fn indirect_reasons(&self) -> Vec<(String, u64)> {
        let mut by: BTreeMap<String, u64> = BTreeMap::new();
        for d in &self.decisions {
            let left = d.call_sites.saturating_sub(d.devirtualized + d.speculated);
            if left == 0 {
                continue;
            }
            let reason = d.reason.clone().unwrap_or_else(|| format!("resolution {}", d.resolution));
            *by.entry(general_reason(&reason)).or_default() += left;
        }
        let mut v: Vec<(String, u64)> = by.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }

    /// The slots with call sites, most call sites first.
    pub fn busiest_slots(&self) -> Vec<&Decision> {
        let mut slots: Vec<&Decision> = self.decisions.iter().filter(|d| d.call_sites > 0).collect();
        slots.sort_by(|a, b| b.call_sites.cmp(&a.call_sites).then((&a.type_id, a.offset).cmp(&(&b.type_id, b.offset))));
        slots
    }

    /// Per hierarchy (type id): call sites, devirtualized, speculated, and
    /// whether validation opened it.
    pub fn hierarchies(&self) -> Vec<Hierarchy> {
        let mut by: BTreeMap<&str, Hierarchy> = BTreeMap::new();
        for d in &self.decisions {
            let h =
                by.entry(&d.type_id).or_insert_with(|| Hierarchy { type_id: d.type_id.clone(), ..Default::default() });
            h.slots += 1;
            h.call_sites += d.call_sites;
            h.devirtualized += d.devirtualized;
            h.speculated += d.speculated;
        }
        for o in &self.open_type_ids {
            by.entry(&o.type_id)
                .or_insert_with(|| Hierarchy { type_id: o.type_id.clone(), ..Default::default() })
                .open = Some(o.reason.clone());
        }
        let mut v: Vec<Hierarchy> = by.into_values().collect();
        v.sort_by(|a, b| b.call_sites.cmp(&a.call_sites).then(a.type_id.cmp(&b.type_id)));
        v
    }
}

/// `null` read as the default (a schema-2 report of a failed size read).
fn null_default<'de, D: serde::Deserializer<'de>, T: Default + Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// One class hierarchy's totals.
#[derive(Clone, Debug, Default)]
pub struct Hierarchy {
    pub type_id: String,
    pub slots: u64,
    pub call_sites: u64,
    pub devirtualized: u64,
    pub speculated: u64,
    pub open: Option<String>,
}

/// A reason with its per-slot details (target lists) cut off, so equal
/// reasons of different slots add up: "5 targets: A, B, …; …" → "5 targets".
fn general_reason(reason: &str) -> String {
    let head = reason.split(';').next().unwrap_or(reason).trim();
    match head.split_once(':') {
        Some((kind, _)) if kind.ends_with("targets") => kind.to_string(),
        _ => head.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_lose_their_target_lists() {
        assert_eq!(general_reason("5 targets: _ZN1A1fEv, _ZN1B1fEv; 1 call site(s) without constants"), "5 targets");
        assert_eq!(general_reason("type id open: _ZTV4Xtra is native"), "type id open: _ZTV4Xtra is native");
    }
}
