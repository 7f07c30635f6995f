//! lld's integrated distributed ThinLTO (DTLTO, docs/cli.md "DTLTO"):
//! with `--thinlto-distributor=PATH` the link writes its backend jobs (the
//! jobs of `--wpd-index-only`, [`crate::distributed`]) beside the output,
//! describes them in LLVM's DTLTO job description format, runs the
//! distributor on that description, checks that every job wrote its
//! object, and links them as the in-process link would. Its temporary
//! files are removed afterwards, unless `--wpd-save-temps`.
//!
//! The description (LLVM's `llvm/docs/DTLTO.rst`): `common.args` is the
//! command every job starts with (`wpd backend --link-options <options>`),
//! `common.inputs` the files every job reads; each job adds its own
//! arguments (`--task N -o <object> <module>`), inputs (the module first,
//! then the options file where LLVM's jobs have their index) and outputs
//! (the object first). Every path is absolute. The distributor is run as
//! `PATH <distributor-args>... <description.json>` and must exit 0 once
//! every job has run.

use std::path::{Path, PathBuf};
use std::process::Command;
use wpd::backends::distributed::{JobList, OPTIONS_FILE};
use wpd::error::{Error, Result};
use wpd::link_line::args::Dtlto;
use wpd_summary::container::write_bytes_atomic;

/// A DTLTO link's files: the jobs' directory and the job description,
/// both beside the output (`<output>.<pid>.dtlto/` and
/// `<output>.<pid>.dist-file.json`, as lld names its own), removed when
/// dropped unless kept.
pub struct Files {
    pub dir: PathBuf,
    json: PathBuf,
    /// The link's output, absolute.
    output: PathBuf,
    keep: bool,
}

impl Files {
    /// Creates the jobs' directory beside `output`.
    pub fn new(output: &Path, keep: bool) -> Result<Files> {
        let output = std::path::absolute(output).map_err(|e| Error::msg(format!("{}: {e}", output.display())))?;
        let pid = std::process::id();
        let with = |suffix: &str| {
            let mut name = output.file_name().unwrap_or_default().to_os_string();
            name.push(format!(".{pid}.{suffix}"));
            output.with_file_name(name)
        };
        let (dir, json) = (with("dtlto"), with("dist-file.json"));
        // Named after this process: anything there is left from a link of
        // an earlier process with the same id, whose objects must not be
        // taken for this link's.
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| {
                Error::msg(format!("{}: cannot remove a stale DTLTO job directory: {e}", dir.display()))
            })?;
        }
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::msg(format!("{}: cannot create the DTLTO job directory: {e}", dir.display())))?;
        Ok(Files { dir, json, output, keep })
    }

    /// Writes the job description of `jobs` (in the jobs' directory, where
    /// `--wpd-index-only`'s writer put them), runs the distributor, and
    /// checks that every job wrote its outputs. `wpd` and `wpd_args` start
    /// every job's command.
    pub fn distribute(&self, jobs: &JobList, options: &Dtlto, wpd: &Path, wpd_args: &[String]) -> Result<()> {
        let Some(distributor) = &options.distributor else {
            return Err(Error::msg("DTLTO without --thinlto-distributor"));
        };
        let text = description(jobs, &self.dir, &self.output, wpd, wpd_args);
        write_bytes_atomic(text.as_bytes(), &self.json)?;
        let status =
            Command::new(distributor).args(&options.distributor_args).arg(&self.json).status().map_err(|e| {
                Error::msg(format!("cannot run the ThinLTO distributor {}: {e}", distributor.display()))
            })?;
        if !status.success() {
            return Err(Error::msg(format!(
                "the ThinLTO distributor {} failed ({status}) on {}",
                distributor.display(),
                self.json.display()
            )));
        }
        for job in &jobs.jobs {
            for out in &job.outputs {
                let path = self.dir.join(out);
                if !path.is_file() {
                    return Err(Error::msg(format!(
                        "DTLTO job {} ({}) did not write {}: the distributor {} exited 0 without running it",
                        job.task,
                        job.input,
                        path.display(),
                        distributor.display()
                    )));
                }
            }
        }
        Ok(())
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        if self.keep {
            eprintln!("wpd-ld: DTLTO files kept: {} and {}", self.json.display(), self.dir.display());
            return;
        }
        let _ = std::fs::remove_file(&self.json);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The job description of `jobs` (in `dir`) in LLVM's DTLTO format.
fn description(jobs: &JobList, dir: &Path, output: &Path, wpd: &Path, wpd_args: &[String]) -> String {
    let abs = |p: &str| dir.join(p).display().to_string();
    let options = abs(OPTIONS_FILE);
    let mut common_args = vec![wpd.display().to_string()];
    common_args.extend(wpd_args.iter().cloned());
    common_args.extend(["backend".to_string(), "--link-options".to_string(), options.clone()]);
    // Files every job reads: the options and the profiles beside them.
    let common_inputs: Vec<String> = jobs
        .jobs
        .first()
        .map(|j| j.inputs.iter().skip(1).map(|p| abs(p)).collect())
        .unwrap_or_else(|| vec![options.clone()]);
    let list: Vec<serde_json::Value> = jobs
        .jobs
        .iter()
        .map(|j| {
            let (module, object) = (abs(&j.module), abs(&j.object));
            serde_json::json!({
                "args": ["--task", j.task.to_string(), "-o", object, module],
                "inputs": [module, options],
                "outputs": j.outputs.iter().map(|o| abs(o)).collect::<Vec<_>>(),
            })
        })
        .collect();
    let doc = serde_json::json!({
        "common": {
            "linker_output": output.display().to_string(),
            "args": common_args,
            "inputs": common_inputs,
        },
        "jobs": list,
    });
    let mut text = serde_json::to_string_pretty(&doc).expect("plain data serializes");
    text.push('\n');
    text
}
