//! A phase timer for `--time`: you cannot speed up what you do not see.

use std::time::{Duration, Instant};

/// Wall time per named phase, in the order phases ran.
#[derive(Default, Debug, Clone)]
pub struct Timings {
    pub phases: Vec<(&'static str, Duration)>,
}

impl Timings {
    /// Runs `f` and records its wall time under `name`.
    pub fn phase<T>(&mut self, name: &'static str, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = f();
        self.phases.push((name, start.elapsed()));
        out
    }

    /// One line per phase, for stderr.
    pub fn render(&self) -> String {
        let total: Duration = self.phases.iter().map(|(_, d)| *d).sum();
        let mut s = String::new();
        for (name, d) in &self.phases {
            s.push_str(&format!("wpd: time: {name:<12} {:>10.3} ms\n", d.as_secs_f64() * 1e3));
        }
        s.push_str(&format!("wpd: time: {:<12} {:>10.3} ms\n", "total", total.as_secs_f64() * 1e3));
        s
    }
}
