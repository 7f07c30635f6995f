//! A phase timer for `--time`: you cannot speed up what you do not see.
//! Each phase also records the process's peak memory when it ended, so a
//! run shows which phase raised it.

use std::time::{Duration, Instant};

/// Wall time per named phase, in the order phases ran.
#[derive(Default, Debug, Clone)]
pub struct Timings {
    pub phases: Vec<(&'static str, Duration)>,
    /// The process's peak resident memory in bytes when each phase of
    /// `phases` ended (`None` where the system does not say).
    pub peaks: Vec<Option<u64>>,
}

impl Timings {
    /// Runs `f` and records its wall time under `name`.
    pub fn phase<T>(&mut self, name: &'static str, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = f();
        self.record(name, start.elapsed());
        out
    }

    /// Records `elapsed` under `name`, with the peak memory so far; a phase
    /// that goes on the one just recorded (the rewrite after reading the
    /// inputs' layouts) adds to it.
    pub fn record(&mut self, name: &'static str, elapsed: Duration) {
        if let (Some((last, spent)), Some(peak)) = (self.phases.last_mut(), self.peaks.last_mut())
            && *last == name
        {
            *spent += elapsed;
            *peak = peak_rss();
            return;
        }
        self.phases.push((name, elapsed));
        self.peaks.push(peak_rss());
    }

    /// The peak resident memory in MiB (one decimal) when phase `k` of
    /// `phases` ended.
    pub fn peak_mib(&self, k: usize) -> Option<f64> {
        let peak = self.peaks.get(k).copied().flatten()?;
        Some((peak as f64 / (1024.0 * 1024.0) * 10.0).round() / 10.0)
    }

    /// Writes the phases into a report: `timings_ms` (wall time per
    /// phase; a phase run twice, as the thin link and the rewrite of a link
    /// planned again without dead slots, counts both runs) and `peak_mib`
    /// (the peak when it last ended), under `prefix<phase>`, beside the
    /// phases the report already has.
    pub fn add_to_report(&self, json: &mut serde_json::Value, prefix: &str) {
        for field in ["timings_ms", "peak_mib"] {
            if !json[field].is_object() {
                json[field] = serde_json::json!({});
            }
        }
        let mut spent: std::collections::BTreeMap<&str, Duration> = std::collections::BTreeMap::new();
        for (name, d) in &self.phases {
            *spent.entry(name).or_default() += *d;
        }
        for (k, (name, _)) in self.phases.iter().enumerate() {
            let key = format!("{prefix}{name}");
            json["timings_ms"][&key] = serde_json::json!(spent[name].as_secs_f64() * 1e3);
            if let Some(mib) = self.peak_mib(k) {
                json["peak_mib"][&key] = serde_json::json!(mib);
            }
        }
    }

    /// One line per phase, for stderr.
    pub fn render(&self) -> String {
        let total: Duration = self.phases.iter().map(|(_, d)| *d).sum();
        let mut s = String::new();
        for (i, (name, d)) in self.phases.iter().enumerate() {
            let ms = d.as_secs_f64() * 1e3;
            match self.peak_mib(i) {
                Some(mib) => s.push_str(&format!("wpd: time: {name:<12} {ms:>10.3} ms  peak {mib:>8.1} MiB\n")),
                None => s.push_str(&format!("wpd: time: {name:<12} {ms:>10.3} ms\n")),
            }
        }
        s.push_str(&format!("wpd: time: {:<12} {:>10.3} ms\n", "total", total.as_secs_f64() * 1e3));
        s
    }
}

/// The peak resident set of this process so far (Linux's `VmHWM`), in
/// bytes; `None` where `/proc` does not give it.
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.trim_start_matches("VmHWM:").trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Consecutive records of one phase are one phase.
    #[test]
    fn a_phase_that_goes_on_adds_to_itself() {
        let mut t = Timings::default();
        t.record("rewrite", Duration::from_millis(4));
        t.record("rewrite", Duration::from_millis(6));
        assert_eq!(t.phases, vec![("rewrite", Duration::from_millis(10))]);
        assert_eq!(t.peaks.len(), 1);
    }

    /// A link planned again without dead slots runs the thin link and the
    /// rewrite twice: the report counts both runs, and phases already in
    /// the report stay as they were.
    #[test]
    fn a_phase_run_twice_counts_both_runs() {
        let mut t = Timings::default();
        t.record("thin-link", Duration::from_millis(10));
        t.record("rewrite", Duration::from_millis(5));
        t.record("thin-link", Duration::from_millis(7));
        let mut json = serde_json::json!({ "timings_ms": { "final-link": 3.0 } });
        t.add_to_report(&mut json, "");
        assert_eq!(json["timings_ms"]["thin-link"], serde_json::json!(17.0));
        assert_eq!(json["timings_ms"]["rewrite"], serde_json::json!(5.0));
        assert_eq!(json["timings_ms"]["final-link"], serde_json::json!(3.0));
    }
}
