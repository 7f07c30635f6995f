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

    /// Records `elapsed` under `name`, with the peak memory so far.
    pub fn record(&mut self, name: &'static str, elapsed: Duration) {
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
    /// phase) and `peak_mib` (the peak when each ended), under
    /// `prefix<phase>`, beside the phases the report already has.
    pub fn add_to_report(&self, json: &mut serde_json::Value, prefix: &str) {
        for field in ["timings_ms", "peak_mib"] {
            if !json[field].is_object() {
                json[field] = serde_json::json!({});
            }
        }
        for (k, (name, d)) in self.phases.iter().enumerate() {
            let key = format!("{prefix}{name}");
            json["timings_ms"][&key] = serde_json::json!(d.as_secs_f64() * 1e3);
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
