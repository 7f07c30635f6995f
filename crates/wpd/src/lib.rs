//! wpd: a link-time whole-program devirtualizer for C++.
//!
//! The pipeline (DESIGN.md §1), one phase per module:
//!
//! ```text
//! input       bitcode objects / archives  ──► BitcodeInput (bytes + identity)
//! summarize   BitcodeInput ──► ModuleSummary (.wpds)      parallel, one LLVM context per task
//! ```
//!
//! [`summarize_inputs`] is the whole summarize phase as the CLI and the
//! linker shim run it.

pub mod error;
pub mod input;
pub mod summarize;
pub mod timing;

use error::{Error, Result};
use input::BitcodeInput;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use timing::Timings;
use wpd_summary::ModuleSummary;

/// Runs `f` on a rayon pool of `jobs` threads (all cores when `None`).
pub fn with_jobs<T: Send>(jobs: Option<usize>, f: impl FnOnce() -> T + Send) -> Result<T> {
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(n) = jobs {
        builder = builder.num_threads(n.max(1));
    }
    let pool = builder.build().map_err(|e| Error::msg(format!("cannot start worker threads: {e}")))?;
    Ok(pool.install(f))
}

/// Reads every input file (archives expand to their bitcode members) and
/// summarizes each module in parallel. Results come back in input order; the
/// first failing input (in that order) is the error.
pub fn summarize_inputs(paths: &[PathBuf], jobs: Option<usize>, timings: &mut Timings) -> Result<Vec<ModuleSummary>> {
    let inputs: Vec<BitcodeInput> = timings.phase("read", || -> Result<Vec<BitcodeInput>> {
        let per_file: Vec<Result<Vec<BitcodeInput>>> =
            with_jobs(jobs, || paths.par_iter().map(|p| input::read_bitcode_inputs(p)).collect())?;
        let mut all = Vec::new();
        for r in per_file {
            all.extend(r?);
        }
        Ok(all)
    })?;
    timings.phase("summarize", || {
        let results: Vec<Result<ModuleSummary>> =
            with_jobs(jobs, || inputs.par_iter().map(summarize::summarize).collect())?;
        results.into_iter().collect()
    })
}

/// Where `wpd summarize` writes the summary of `summary`: `<file name>.wpds`
/// (archive members: `<archive>(<member>).wpds`) in `out_dir`, or beside the
/// input.
pub fn summary_path(summary: &ModuleSummary, out_dir: Option<&Path>) -> PathBuf {
    let input = Path::new(&summary.module.path);
    let mut file = input.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_else(|| "input".into());
    if let Some(member) = &summary.module.member {
        file = format!("{file}({})", member.replace('/', "_"));
    }
    file.push_str(".wpds");
    match out_dir {
        Some(d) => d.join(file),
        None => input.parent().unwrap_or(Path::new("")).join(file),
    }
}
