//! `wpd report FILE.json --format text|markdown|html|json`: one report made
//! readable. Every format has the same parts: call sites by kind, the
//! reasons calls stayed indirect (ranked by call sites), class hierarchies,
//! slots, sizes and phase timings. Names are demangled; the mangled name
//! stays beside it (markdown and text: in the slot table; HTML: on hover;
//! JSON: both fields).

use super::view::{Counts, Report, Sizes};
use crate::demangle;
use serde_json::{Value, json};
use std::fmt::Write;

/// An output format of `wpd report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Markdown,
    Html,
    Json,
}

/// How many rows the long tables keep (slots, hierarchies, reasons).
const TOP: usize = 25;

pub fn render(r: &Report, format: Format) -> String {
    match format {
        Format::Text => text(r),
        Format::Markdown => markdown(r),
        Format::Html => html(r),
        Format::Json => serde_json::to_string_pretty(&summary_json(r)).unwrap_or_default() + "\n",
    }
}

fn pct(n: u64, total: u64) -> f64 {
    if total == 0 { 0.0 } else { 100.0 * n as f64 / total as f64 }
}

fn targets(list: &[String]) -> String {
    let shown: Vec<String> = list.iter().take(3).map(|t| demangle::name(t)).collect();
    let more = list.len().saturating_sub(3);
    if more > 0 { format!("{} (+{more} more)", shown.join(", ")) } else { shown.join(", ") }
}

/// (name, bytes) rows of a size table.
type Rows = Vec<(String, u64)>;

fn size_rows(s: &Sizes) -> Rows {
    let mut rows: Vec<(String, u64)> = s.sections.iter().map(|(k, v)| (k.clone(), *v)).collect();
    if let Some(f) = s.file {
        rows.push(("file".into(), f));
    }
    rows
}

fn sizes(r: &Report) -> (Rows, Option<Rows>) {
    let mut out = size_rows(&r.size.output);
    if out.is_empty()
        && let Some(f) = r.file_size()
    {
        out.push(("file".into(), f));
    }
    (out, r.size.baseline.as_ref().map(size_rows))
}

fn text(r: &Report) -> String {
    let mut o = String::new();
    let c = &r.call_sites;
    let _ = writeln!(o, "wpd report ({})", r.schema);
    let _ = writeln!(o, "\nvirtual call sites: {}", c.total);
    for (_, label, n) in c.kinds() {
        let _ = writeln!(o, "  {label:<30} {n:>7}  {:5.1}%", pct(n, c.total));
    }
    let reasons = r.indirect_reasons();
    if !reasons.is_empty() {
        let _ = writeln!(o, "\nleft indirect, by reason (call sites):");
        for (reason, n) in reasons.iter().take(TOP) {
            let _ = writeln!(o, "  {n:>7}  {reason}");
        }
    }
    let hs = r.hierarchies();
    if !hs.is_empty() {
        let _ = writeln!(o, "\nclass hierarchies (by call sites):");
        let _ = writeln!(o, "  {:<40} {:>6} {:>6} {:>6} {:>6}  open", "class", "slots", "calls", "devirt", "spec");
        for h in hs.iter().take(TOP) {
            let _ = writeln!(
                o,
                "  {:<40} {:>6} {:>6} {:>6} {:>6}  {}",
                demangle::type_id(&h.type_id),
                h.slots,
                h.call_sites,
                h.devirtualized,
                h.speculated,
                h.open.as_deref().unwrap_or("-")
            );
        }
    }
    let slots = r.busiest_slots();
    if !slots.is_empty() {
        let _ = writeln!(o, "\nslots (by call sites):");
        for d in slots.iter().take(TOP) {
            let _ = writeln!(
                o,
                "  {}+{}: {} ({} of {} call sites) -> {}",
                demangle::type_id(&d.type_id),
                d.offset,
                d.resolution,
                d.devirtualized,
                d.call_sites,
                targets(&d.targets)
            );
            let _ = writeln!(o, "      {} +{}", d.type_id, d.offset);
        }
    }
    let (out, base) = sizes(r);
    if !out.is_empty() {
        let _ = writeln!(o, "\nsizes (bytes):");
        for (name, n) in &out {
            match base.as_ref().and_then(|b| b.iter().find(|(k, _)| k == name)) {
                Some((_, b)) => {
                    let _ = writeln!(
                        o,
                        "  {name:<14} {n:>10}  (without devirtualization {b}, {:+})",
                        *n as i64 - *b as i64
                    );
                }
                None => {
                    let _ = writeln!(o, "  {name:<14} {n:>10}");
                }
            }
        }
        let _ = writeln!(o, "  bytes beside vtables: {}", r.vtables.bytes_added);
    }
    let _ = writeln!(o, "\n{}", dead_slots_line(r));
    if !r.timings_ms.is_empty() {
        let _ = writeln!(o, "\nphases (ms):");
        for (k, v) in &r.timings_ms {
            let _ = writeln!(o, "  {k:<12} {v:>9.1}");
        }
    }
    if !r.mismatches.is_empty() {
        let _ = writeln!(o, "\nplan and backend disagree at {} call sites (a wpd bug)", r.mismatches.len());
    }
    o
}

/// Escapes `|` and newlines for a markdown table cell.
pub(super) fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn markdown(r: &Report) -> String {
    let mut o = String::new();
    let c = &r.call_sites;
    let _ = writeln!(o, "## wpd devirtualization report\n");
    let _ = writeln!(
        o,
        "**{}** virtual call sites, **{}** devirtualized ({:.1}%), **{}** speculated, **{}** left indirect.\n",
        c.total,
        c.devirtualized(),
        pct(c.devirtualized(), c.total),
        c.speculative,
        c.not_devirtualized
    );
    let _ = writeln!(o, "| kind | call sites | share |\n|---|---:|---:|");
    for (_, label, n) in c.kinds() {
        let _ = writeln!(o, "| {label} | {n} | {:.1}% |", pct(n, c.total));
    }
    let reasons = r.indirect_reasons();
    if !reasons.is_empty() {
        let _ = writeln!(o, "\n### Why calls stayed indirect\n\n| call sites | reason |\n|---:|---|");
        for (reason, n) in reasons.iter().take(TOP) {
            let _ = writeln!(o, "| {n} | {} |", cell(reason));
        }
    }
    let hs = r.hierarchies();
    if !hs.is_empty() {
        let _ = writeln!(
            o,
            "\n### Class hierarchies\n\n| class | slots | call sites | devirtualized | speculated | open |\n|---|---:|---:|---:|---:|---|"
        );
        for h in hs.iter().take(TOP) {
            let _ = writeln!(
                o,
                "| `{}` | {} | {} | {} | {} | {} |",
                cell(&demangle::type_id(&h.type_id)),
                h.slots,
                h.call_sites,
                h.devirtualized,
                h.speculated,
                cell(h.open.as_deref().unwrap_or(""))
            );
        }
    }
    let slots = r.busiest_slots();
    if !slots.is_empty() {
        let _ = writeln!(
            o,
            "\n### Slots\n\n| class | offset | resolution | devirtualized | targets | type id |\n|---|---:|---|---:|---|---|"
        );
        for d in slots.iter().take(TOP) {
            let _ = writeln!(
                o,
                "| `{}` | {} | {} | {}/{} | {} | `{}` |",
                cell(&demangle::type_id(&d.type_id)),
                d.offset,
                d.resolution,
                d.devirtualized,
                d.call_sites,
                cell(&targets(&d.targets)),
                cell(&d.type_id)
            );
        }
    }
    let (out, base) = sizes(r);
    if !out.is_empty() {
        let _ = writeln!(o, "\n### Sizes (bytes)\n\n| section | size | without devirtualization |\n|---|---:|---:|");
        for (name, n) in &out {
            let b = base
                .as_ref()
                .and_then(|b| b.iter().find(|(k, _)| k == name))
                .map(|(_, b)| b.to_string())
                .unwrap_or_default();
            let _ = writeln!(o, "| `{name}` | {n} | {b} |");
        }
        let _ = writeln!(o, "\nwpd added {} bytes beside vtables.", r.vtables.bytes_added);
    }
    let _ = writeln!(o, "\n{}", dead_slots_line(r));
    if !r.timings_ms.is_empty() {
        let _ = writeln!(o, "\n### Phases\n\n| phase | ms |\n|---|---:|");
        for (k, v) in &r.timings_ms {
            let _ = writeln!(o, "| {k} | {v:.1} |");
        }
    }
    o
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A horizontal bar chart as inline SVG: one bar per (label, value).
fn bars(rows: &[(String, u64)], color: &str) -> String {
    let max = rows.iter().map(|r| r.1).max().unwrap_or(0).max(1);
    let height = 26 * rows.len() + 6;
    let mut s = format!(r#"<svg class="chart" viewBox="0 0 720 {height}" width="720" height="{height}" role="img">"#);
    for (i, (label, v)) in rows.iter().enumerate() {
        let y = 4 + 26 * i;
        let w = (420.0 * *v as f64 / max as f64).round().max(if *v > 0 { 2.0 } else { 0.0 });
        let _ = write!(
            s,
            r#"<text x="0" y="{}" class="l">{}</text><rect x="230" y="{y}" width="{w}" height="20" rx="3" fill="{color}"/><text x="{}" y="{}" class="v">{v}</text>"#,
            y + 15,
            esc(label),
            236.0 + w,
            y + 15
        );
    }
    s.push_str("</svg>");
    s
}

fn html(r: &Report) -> String {
    let c = &r.call_sites;
    let kinds: Vec<(String, u64)> = c.kinds().iter().map(|(_, l, n)| (l.to_string(), *n)).collect();
    let reasons: Vec<(String, u64)> = r
        .indirect_reasons()
        .into_iter()
        .take(10)
        .map(|(reason, n)| {
            (
                if reason.chars().count() > 34 {
                    format!("{}…", reason.chars().take(33).collect::<String>())
                } else {
                    reason
                },
                n,
            )
        })
        .collect();
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>wpd report</title>
<style>
body{{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:980px;color:#1f2933;background:#f7f9fb}}
h1{{font-size:1.6rem;margin:0 0 .3rem}} h2{{font-size:1.15rem;margin:2rem 0 .6rem;border-bottom:1px solid #d9e2ec;padding-bottom:.3rem}}
.cards{{display:flex;gap:1rem;flex-wrap:wrap}} .card{{background:#fff;border-radius:10px;padding:1rem 1.3rem;box-shadow:0 1px 3px #0002;min-width:150px}}
.card b{{display:block;font-size:1.7rem;color:#0b6e4f}} .card.warn b{{color:#b44d12}}
table{{border-collapse:collapse;width:100%;background:#fff;border-radius:8px;overflow:hidden;box-shadow:0 1px 3px #0002}}
th,td{{padding:.4rem .7rem;text-align:left;border-bottom:1px solid #eef2f6;vertical-align:top}} th{{background:#eef2f6}}
td.n{{text-align:right;font-variant-numeric:tabular-nums}} code{{font-size:.85em}}
.chart text{{font-size:13px;fill:#1f2933}} .chart .v{{fill:#52606d}} .muted{{color:#7b8794}}
</style></head><body>
<h1>wpd devirtualization report</h1><div class="muted">{schema}</div>
<div class="cards"><div class="card"><b>{total}</b>virtual call sites</div><div class="card"><b>{dv}</b>devirtualized ({dvp:.1}%)</div><div class="card"><b>{sp}</b>speculated</div><div class="card warn"><b>{nd}</b>left indirect</div></div>
<h2>Call sites by kind</h2>{kchart}
"#,
        schema = esc(&r.schema),
        total = c.total,
        dv = c.devirtualized(),
        dvp = pct(c.devirtualized(), c.total),
        sp = c.speculative,
        nd = c.not_devirtualized,
        kchart = bars(&kinds, "#2f80ed"),
    );
    if !reasons.is_empty() {
        let _ = write!(o, "<h2>Why calls stayed indirect</h2>{}", bars(&reasons, "#e07a2f"));
    }
    let hs = r.hierarchies();
    if !hs.is_empty() {
        o.push_str("<h2>Class hierarchies</h2><table><tr><th>class</th><th>slots</th><th>call sites</th><th>devirtualized</th><th>speculated</th><th>open</th></tr>");
        for h in hs.iter().take(TOP) {
            let _ = write!(
                o,
                r#"<tr><td title="{}">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td>{}</td></tr>"#,
                esc(&h.type_id),
                esc(&demangle::type_id(&h.type_id)),
                h.slots,
                h.call_sites,
                h.devirtualized,
                h.speculated,
                esc(h.open.as_deref().unwrap_or(""))
            );
        }
        o.push_str("</table>");
    }
    let slots = r.busiest_slots();
    if !slots.is_empty() {
        o.push_str("<h2>Slots</h2><table><tr><th>class</th><th>offset</th><th>resolution</th><th>devirtualized</th><th>targets</th></tr>");
        for d in slots.iter().take(TOP) {
            let _ = write!(
                o,
                r#"<tr><td title="{}">{}</td><td class="n">{}</td><td>{}</td><td class="n">{}/{}</td><td title="{}">{}</td></tr>"#,
                esc(&d.type_id),
                esc(&demangle::type_id(&d.type_id)),
                d.offset,
                esc(&d.resolution),
                d.devirtualized,
                d.call_sites,
                esc(&d.targets.join(" ")),
                esc(&targets(&d.targets))
            );
        }
        o.push_str("</table>");
    }
    let (out, base) = sizes(r);
    if !out.is_empty() {
        let _ = write!(o, "<h2>Sizes</h2>{}", bars(&out, "#0b6e4f"));
        if let Some(b) = base {
            let _ = write!(o, "<p class=\"muted\">without devirtualization:</p>{}", bars(&b, "#9aa5b1"));
        }
        let _ = write!(o, "<p>wpd added {} bytes beside vtables.</p>", r.vtables.bytes_added);
    }
    let _ = write!(o, "<p>{}</p>", esc(&dead_slots_line(r)));
    if !r.timings_ms.is_empty() {
        let t: Vec<(String, u64)> = r.timings_ms.iter().map(|(k, v)| (k.clone(), v.round() as u64)).collect();
        let _ = write!(o, "<h2>Phases (ms)</h2>{}", bars(&t, "#7b61ff"));
    }
    o.push_str("</body></html>\n");
    o
}

/// One sentence on dead-slot elimination.
fn dead_slots_line(r: &Report) -> String {
    let d = &r.dead_slots;
    match (&d.off, d.slots) {
        (Some(why), 0) => format!("dead slots: none ({why})"),
        _ => format!(
            "dead slots: {} in {} vtables now trap; {} functions ({} instructions) only they named are dropped",
            d.slots, d.vtables, d.functions, d.instructions
        ),
    }
}

/// The report's tables as JSON (what the other formats show).
fn summary_json(r: &Report) -> Value {
    let c: &Counts = &r.call_sites;
    json!({
        "schema": r.schema,
        "call_sites": c.kinds().iter().map(|(k, _, n)| (k.to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
        "total": c.total,
        "indirect_reasons": r.indirect_reasons().iter().map(|(reason, n)| json!({"reason": reason, "call_sites": n})).collect::<Vec<_>>(),
        "hierarchies": r.hierarchies().iter().map(|h| json!({
            "type_id": h.type_id, "class": demangle::type_id(&h.type_id), "slots": h.slots, "call_sites": h.call_sites,
            "devirtualized": h.devirtualized, "speculated": h.speculated, "open": h.open,
        })).collect::<Vec<_>>(),
        "slots": r.decisions.iter().map(|d| json!({
            "type_id": d.type_id, "class": demangle::type_id(&d.type_id), "offset": d.offset, "resolution": d.resolution,
            "call_sites": d.call_sites, "devirtualized": d.devirtualized,
            "targets": d.targets.iter().map(|t| json!({"mangled": t, "name": demangle::name(t)})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "sizes": { "output": r.size.output.sections, "file": r.file_size(), "baseline": r.size.baseline, "vtable_bytes_added": r.vtables.bytes_added },
        "dead_slots": { "slots": r.dead_slots.slots, "vtables": r.dead_slots.vtables, "functions": r.dead_slots.functions, "instructions": r.dead_slots.instructions, "off": r.dead_slots.off },
        "timings_ms": r.timings_ms,
    })
}
