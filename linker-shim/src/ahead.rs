//! Summaries made ahead of time. Resolving the link line keeps one core
//! busy (15–25 ms on a C++ link, most of it reading the system libraries);
//! meanwhile a helper thread summarizes, on the other core, the bitcode the
//! line names directly: its files, then the bitcode members of its
//! archives. A summary is keyed by the module's bytes
//! ([`wpd::SummariesAhead`]), so one made for a member the link turns out
//! not to load is never used, and a file changed in between is summarized
//! again from what the link reads.
//!
//! When resolution ends the helper is told to stop: what it finished is
//! used, the module it was summarizing is summarized again by the
//! summarize phase (the helper's copy is dropped), and nothing it did can
//! fail the link: an unreadable or malformed input is left to the phases
//! that report it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use wpd::SummariesAhead;
use wpd::input::BitcodeInput;
use wpd_link::{Item, LinkLine};

/// The helper thread. Dropping it waits for the helper to finish the
/// module it is on: LLVM must not be running on another thread when the
/// process exits and LLVM's global destructors run.
pub struct Ahead {
    stop: Arc<AtomicBool>,
    done: Arc<Mutex<Done>>,
    helper: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct Done {
    summaries: SummariesAhead,
    /// The helper's busy time up to now.
    busy: Duration,
}

impl Ahead {
    /// Starts summarizing the bitcode `line` names. `-mllvm` options must
    /// already be set: LLVM's option parser must not run beside LLVM.
    pub fn start(line: &LinkLine) -> Ahead {
        let files = candidates(line);
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(Mutex::new(Done::default()));
        let helper = (!files.is_empty())
            .then(|| {
                let (stop, done) = (Arc::clone(&stop), Arc::clone(&done));
                std::thread::Builder::new()
                    .name("wpd-summarize-ahead".into())
                    .spawn(move || summarize_files(&files, &stop, &done))
                    .ok()
            })
            .flatten();
        Ahead { stop, done, helper }
    }

    /// Stops the helper and takes the summaries it finished, and how long
    /// it worked.
    pub fn take(&self) -> (SummariesAhead, Duration) {
        self.stop.store(true, Ordering::Relaxed);
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        (std::mem::take(&mut done.summaries), done.busy)
    }
}

impl Drop for Ahead {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.helper.take() {
            let _ = h.join();
        }
    }
}

/// The files the line names as positional inputs, in order, once each.
/// Libraries (`-l`) are left out: they are nearly always system libraries
/// without bitcode.
fn candidates(line: &LinkLine) -> Vec<PathBuf> {
    let mut seen = std::collections::HashSet::new();
    line.items
        .iter()
        .filter_map(|item| match item {
            Item::File { path, state } if !state.binary => Some(PathBuf::from(path)),
            _ => None,
        })
        .filter(|p| seen.insert(p.clone()))
        .collect()
}

fn summarize_files(files: &[PathBuf], stop: &AtomicBool, done: &Mutex<Done>) {
    let started = Instant::now();
    // Files first (the link always loads them), then archive members.
    let mut archives = Vec::new();
    for path in files {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        // Pipes and other special files can be read only once, and the
        // link reads them.
        if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let Ok(file) = wpd_summary::container::MappedFile::open(path) else { continue };
        let shown = path.display().to_string();
        match wpd::input::bitcode_inputs(&shown, &Arc::new(file)) {
            Ok(inputs) if inputs.len() == 1 && inputs[0].member.is_none() => {
                summarize_into(&inputs[0], stop, done, started)
            }
            Ok(members) => archives.push(members),
            Err(_) => {}
        }
    }
    for input in archives.iter().flatten() {
        summarize_into(input, stop, done, started);
    }
}

fn summarize_into(input: &BitcodeInput, stop: &AtomicBool, done: &Mutex<Done>, started: Instant) {
    if stop.load(Ordering::Relaxed) {
        return;
    }
    let Ok(summary) = wpd::summarize::summarize(input) else { return };
    // Finished after the link took the summaries: nobody will use it.
    if stop.load(Ordering::Relaxed) {
        return;
    }
    let mut done = done.lock().unwrap_or_else(|e| e.into_inner());
    done.summaries.insert(summary);
    done.busy = started.elapsed();
}
