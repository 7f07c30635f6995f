//! Progress of a long link on a terminal: one line on stderr, rewritten in
//! place (`wpd-ld: backend 12/40`), cleared at the end. Off unless stderr
//! is a terminal; `--wpd-quiet` turns it off there too.

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The progress line of one run (cheap to tick from many threads).
pub struct Progress {
    enabled: bool,
    prefix: &'static str,
    phase: Mutex<&'static str>,
    done: AtomicUsize,
    total: AtomicUsize,
}

impl Progress {
    /// Shown when `enabled` (the caller checks stderr is a terminal).
    pub fn new(prefix: &'static str, enabled: bool) -> Progress {
        Progress { enabled, prefix, phase: Mutex::new(""), done: AtomicUsize::new(0), total: AtomicUsize::new(0) }
    }

    /// Never shown.
    pub fn off() -> Progress {
        Progress::new("", false)
    }

    /// Starts `phase` over `total` modules.
    pub fn phase(&self, phase: &'static str, total: usize) {
        if !self.enabled {
            return;
        }
        if let Ok(mut p) = self.phase.lock() {
            *p = phase;
        }
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
        self.draw(0);
    }

    /// One more module of the phase done.
    pub fn tick(&self) {
        if self.enabled {
            let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
            self.draw(done);
        }
    }

    fn draw(&self, done: usize) {
        let phase = self.phase.lock().map(|p| *p).unwrap_or("");
        let total = self.total.load(Ordering::Relaxed);
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[K{}: {phase} {done}/{total}", self.prefix);
        let _ = err.flush();
    }

    /// Clears the line.
    pub fn finish(&self) {
        if self.enabled {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
    }
}
