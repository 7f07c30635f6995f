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

    /// One line per phase, for stderr.
    pub fn render(&self) -> String {
        let total: Duration = self.phases.iter().map(|(_, d)| *d).sum();
        let mut s = String::new();
        for (i, (name, d)) in self.phases.iter().enumerate() {
            let ms = d.as_secs_f64() * 1e3;
            match self.peaks.get(i).copied().flatten() {
                Some(peak) => s.push_str(&format!(
                    "wpd: time: {name:<12} {ms:>10.3} ms  peak {:>8.1} MiB\n",
                    peak as f64 / (1024.0 * 1024.0)
                )),
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
