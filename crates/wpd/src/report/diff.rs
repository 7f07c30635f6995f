//! `wpd report diff OLD.json NEW.json [--fail-on GATE]...`: what changed
//! between two builds, and the CI gate. Reads schema 1 and 2 reports.

use super::render::{Format, cell};
use super::view::Report;
use crate::demangle;
use crate::error::{Error, Result};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// A condition that fails the diff (exit status 1).
#[derive(Clone, Debug, PartialEq)]
pub enum Gate {
    /// Fewer call sites devirtualized (unguarded) than before.
    FewerDevirtualized,
    /// More call sites left indirect than before.
    MoreIndirect,
    /// `.text` grew by more than this many percent.
    TextGrowth(f64),
    /// The output file grew by more than this many percent.
    SizeGrowth(f64),
}

impl Gate {
    /// Parses `fewer-devirtualized`, `more-indirect`, `text-growth=PCT`,
    /// `size-growth=PCT`.
    pub fn parse(s: &str) -> Result<Gate> {
        let pct = |v: &str| -> Result<f64> {
            let v = v.trim_end_matches('%');
            v.parse::<f64>()
                .ok()
                .filter(|p| p.is_finite() && *p >= 0.0)
                .ok_or_else(|| Error::msg(format!("invalid percentage in gate {s:?}")))
        };
        match s.split_once('=') {
            None if s == "fewer-devirtualized" => Ok(Gate::FewerDevirtualized),
            None if s == "more-indirect" => Ok(Gate::MoreIndirect),
            Some(("text-growth", v)) => Ok(Gate::TextGrowth(pct(v)?)),
            Some(("size-growth", v)) => Ok(Gate::SizeGrowth(pct(v)?)),
            _ => Err(Error::msg(format!(
                "unknown gate {s:?} (fewer-devirtualized, more-indirect, text-growth=PCT, size-growth=PCT)"
            ))),
        }
    }
}

/// The difference of two reports.
pub struct Diff {
    pub counts: Vec<(&'static str, u64, u64)>,
    /// (type id, offset, old resolution, new resolution, new reason).
    pub slots: Vec<(String, u64, String, String, Option<String>)>,
    /// Hierarchies open in the new build, not in the old, with the reason.
    pub newly_open: Vec<(String, String)>,
    /// Hierarchies open before and closed now.
    pub newly_closed: Vec<String>,
    /// (section, old, new) for every section either has, then `file`.
    pub sizes: Vec<(String, Option<u64>, Option<u64>)>,
    pub link_ms: (Option<f64>, Option<f64>),
    /// The gates that tripped, with why.
    pub tripped: Vec<String>,
}

fn growth(old: Option<u64>, new: Option<u64>) -> Option<f64> {
    match (old, new) {
        (Some(o), Some(n)) if o > 0 => Some(100.0 * (n as f64 - o as f64) / o as f64),
        _ => None,
    }
}

pub fn diff(old: &Report, new: &Report, gates: &[Gate]) -> Diff {
    let (oc, nc) = (&old.call_sites, &new.call_sites);
    let mut counts: Vec<(&'static str, u64, u64)> =
        oc.kinds().iter().zip(nc.kinds()).map(|((k, _, o), (_, _, n))| (*k, *o, n)).collect();
    counts.insert(0, ("total", oc.total, nc.total));
    counts.push(("devirtualized", oc.devirtualized(), nc.devirtualized()));

    let key = |r: &Report| -> BTreeMap<(String, u64), (String, Option<String>)> {
        r.decisions.iter().map(|d| ((d.type_id.clone(), d.offset), (d.resolution.clone(), d.reason.clone()))).collect()
    };
    let (od, nd) = (key(old), key(new));
    let mut slots = Vec::new();
    for (k, (res, reason)) in &nd {
        let before = od.get(k).map(|v| v.0.clone()).unwrap_or_else(|| "(absent)".into());
        if before != *res {
            slots.push((k.0.clone(), k.1, before, res.clone(), reason.clone()));
        }
    }
    for (k, (res, _)) in &od {
        if !nd.contains_key(k) {
            slots.push((k.0.clone(), k.1, res.clone(), "(absent)".into(), None));
        }
    }
    let oo: BTreeSet<&str> = old.open_type_ids.iter().map(|o| o.type_id.as_str()).collect();
    let no: BTreeSet<&str> = new.open_type_ids.iter().map(|o| o.type_id.as_str()).collect();
    let newly_open = new
        .open_type_ids
        .iter()
        .filter(|o| !oo.contains(o.type_id.as_str()))
        .map(|o| (o.type_id.clone(), o.reason.clone()))
        .collect();
    let newly_closed = oo.difference(&no).map(|s| s.to_string()).collect();

    let mut names: BTreeSet<String> = old.size.output.sections.keys().cloned().collect();
    names.extend(new.size.output.sections.keys().cloned());
    let mut sizes: Vec<(String, Option<u64>, Option<u64>)> = names
        .into_iter()
        .map(|n| (n.clone(), old.size.output.sections.get(&n).copied(), new.size.output.sections.get(&n).copied()))
        .collect();
    sizes.push(("file".into(), old.file_size(), new.file_size()));

    let mut tripped = Vec::new();
    for g in gates {
        match g {
            Gate::FewerDevirtualized if nc.devirtualized() < oc.devirtualized() => tripped.push(format!(
                "fewer-devirtualized: {} call sites devirtualized, {} before",
                nc.devirtualized(),
                oc.devirtualized()
            )),
            Gate::MoreIndirect if nc.not_devirtualized > oc.not_devirtualized => tripped.push(format!(
                "more-indirect: {} call sites left indirect, {} before",
                nc.not_devirtualized, oc.not_devirtualized
            )),
            Gate::TextGrowth(limit) => {
                let (o, n) =
                    (old.size.output.sections.get(".text").copied(), new.size.output.sections.get(".text").copied());
                match growth(o, n) {
                    Some(g) if g > *limit => tripped.push(format!(
                        "text-growth={limit}: .text grew {g:.2}% ({} -> {} bytes)",
                        o.unwrap_or(0),
                        n.unwrap_or(0)
                    )),
                    None => tripped.push(format!("text-growth={limit}: a report has no .text size (schema 1?)")),
                    _ => {}
                }
            }
            Gate::SizeGrowth(limit) => match growth(old.file_size(), new.file_size()) {
                Some(g) if g > *limit => tripped.push(format!(
                    "size-growth={limit}: the output grew {g:.2}% ({} -> {} bytes)",
                    old.file_size().unwrap_or(0),
                    new.file_size().unwrap_or(0)
                )),
                None => tripped.push(format!("size-growth={limit}: a report has no output size")),
                _ => {}
            },
            _ => {}
        }
    }
    Diff { counts, slots, newly_open, newly_closed, sizes, link_ms: (old.total_ms(), new.total_ms()), tripped }
}

fn opt(v: Option<u64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "-".into())
}

fn delta(o: Option<u64>, n: Option<u64>) -> String {
    match (o, n) {
        (Some(o), Some(n)) => match growth(Some(o), Some(n)) {
            Some(g) => format!("{:+} ({g:+.2}%)", n as i64 - o as i64),
            None => format!("{:+}", n as i64 - o as i64),
        },
        _ => "-".into(),
    }
}

pub fn render(d: &Diff, format: Format) -> String {
    match format {
        Format::Json => serde_json::to_string_pretty(&to_json(d)).unwrap_or_default() + "\n",
        Format::Markdown => markdown(d),
        Format::Html => format!(
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>wpd report diff</title></head><body><pre>{}</pre></body></html>\n",
            text(d).replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
        ),
        Format::Text => text(d),
    }
}

fn text(d: &Diff) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "call sites        old      new    delta");
    for (k, a, b) in &d.counts {
        let _ = writeln!(o, "  {k:<20} {a:>7} {b:>8} {:>+8}", *b as i64 - *a as i64);
    }
    if !d.slots.is_empty() {
        let _ = writeln!(o, "\nslots whose resolution changed:");
        for (t, off, a, b, why) in &d.slots {
            let why = why.as_deref().map(|w| format!(" ({w})")).unwrap_or_default();
            let _ = writeln!(o, "  {}+{off}: {a} -> {b}{why}", demangle::type_id(t));
        }
    }
    for (t, why) in &d.newly_open {
        let _ = writeln!(o, "newly open: {} ({why})", demangle::type_id(t));
    }
    for t in &d.newly_closed {
        let _ = writeln!(o, "no longer open: {}", demangle::type_id(t));
    }
    let _ = writeln!(o, "\nsizes (bytes)     old        new      delta");
    for (k, a, b) in &d.sizes {
        let _ = writeln!(o, "  {k:<14} {:>10} {:>10}  {}", opt(*a), opt(*b), delta(*a, *b));
    }
    if let (Some(a), Some(b)) = d.link_ms {
        let _ = writeln!(o, "\nlink time: {a:.0} ms -> {b:.0} ms");
    }
    for t in &d.tripped {
        let _ = writeln!(o, "GATE TRIPPED: {t}");
    }
    o
}

fn markdown(d: &Diff) -> String {
    let mut o = String::from("## wpd report diff\n\n| call sites | old | new | delta |\n|---|---:|---:|---:|\n");
    for (k, a, b) in &d.counts {
        let _ = writeln!(o, "| {k} | {a} | {b} | {:+} |", *b as i64 - *a as i64);
    }
    if !d.slots.is_empty() {
        o.push_str("\n| slot | old | new | why |\n|---|---|---|---|\n");
        for (t, off, a, b, why) in &d.slots {
            let _ = writeln!(
                o,
                "| `{}`+{off} | {a} | {b} | {} |",
                demangle::type_id(t),
                cell(why.as_deref().unwrap_or(""))
            );
        }
    }
    for (t, why) in &d.newly_open {
        let _ = writeln!(o, "\n- newly open: `{}` ({})", demangle::type_id(t), cell(why));
    }
    o.push_str("\n| size | old | new | delta |\n|---|---:|---:|---:|\n");
    for (k, a, b) in &d.sizes {
        let _ = writeln!(o, "| `{k}` | {} | {} | {} |", opt(*a), opt(*b), delta(*a, *b));
    }
    if let (Some(a), Some(b)) = d.link_ms {
        let _ = writeln!(o, "\nLink time: {a:.0} ms → {b:.0} ms.");
    }
    for t in &d.tripped {
        let _ = writeln!(o, "\n**Gate tripped:** {t}");
    }
    o
}

fn to_json(d: &Diff) -> Value {
    json!({
        "counts": d.counts.iter().map(|(k, a, b)| json!({"kind": k, "old": a, "new": b})).collect::<Vec<_>>(),
        "slots": d.slots.iter().map(|(t, off, a, b, why)| json!({"type_id": t, "offset": off, "old": a, "new": b, "reason": why})).collect::<Vec<_>>(),
        "newly_open": d.newly_open.iter().map(|(t, why)| json!({"type_id": t, "reason": why})).collect::<Vec<_>>(),
        "newly_closed": d.newly_closed,
        "sizes": d.sizes.iter().map(|(k, a, b)| json!({"section": k, "old": a, "new": b})).collect::<Vec<_>>(),
        "link_ms": {"old": d.link_ms.0, "new": d.link_ms.1},
        "tripped": d.tripped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gates_parse() {
        assert_eq!(Gate::parse("fewer-devirtualized"), Ok(Gate::FewerDevirtualized));
        assert_eq!(Gate::parse("text-growth=2.5"), Ok(Gate::TextGrowth(2.5)));
        assert_eq!(Gate::parse("size-growth=3%"), Ok(Gate::SizeGrowth(3.0)));
        assert!(Gate::parse("text-growth=-1").is_err());
        assert!(Gate::parse("faster").is_err());
    }
}
