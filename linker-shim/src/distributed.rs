//! wpd-ld's distributed mode (docs/cli.md "Distributed backends"):
//! `--wpd-index-only=DIR` stops after the thin link and writes the link's
//! backend jobs into DIR (`wpd::backends::distributed`); `--wpd-from-index=DIR` is
//! the final link, on the objects those jobs wrote.

use std::path::{Path, PathBuf};
use wpd::backends::distributed::{
    BackendOptions, FinalLink, JOBS_FILE, JobList, LINK_ARGS_FILE, NINJA_FILE, NativeInput, OPTIONS_FILE, REPORT_FILE,
};
use wpd::error::{Error, Result};
use wpd::input::BitcodeInput;
use wpd::link_line::args::LinkArgs;
use wpd::link_line::options::Action;
use wpd_summary::container::write_bytes_atomic;

/// The index directory of `--wpd-index-only`, made absolute and created.
/// It must be empty or hold an earlier index's jobs: their job list and
/// objects are removed first, so that a link step that fails leaves no job
/// list, and the final link never takes an object that this index's jobs
/// did not write.
pub fn prepare(dir: &Path) -> Result<PathBuf> {
    let dir = std::path::absolute(dir).map_err(|e| Error::msg(format!("{}: {e}", dir.display())))?;
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::msg(format!("{}: cannot create the index directory: {e}", dir.display())))?;
    let list = dir.join(JOBS_FILE);
    if list.exists() {
        let old = JobList::read(&dir)?;
        for job in &old.jobs {
            remove_if_there(&dir.join(&job.object))?;
        }
        remove_if_there(&list)?;
    } else if std::fs::read_dir(&dir).map_err(|e| Error::msg(format!("{}: {e}", dir.display())))?.next().is_some() {
        return Err(Error::msg(format!(
            "{}: the index directory is neither empty nor an earlier --wpd-index-only's (no {JOBS_FILE})",
            dir.display()
        )));
    }
    Ok(dir)
}

/// Removes what a failed link step wrote into `dir` (the job modules and
/// the files beside them), so that no half-written index is left.
pub fn discard(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let ours = [OPTIONS_FILE, LINK_ARGS_FILE, REPORT_FILE, NINJA_FILE, JOBS_FILE, "sample.prof", "cs.profdata"];
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let module = name.strip_suffix(".bc").is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()));
        if module || ours.contains(&name.as_str()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// A link step's index directory, [`discard`]ed when dropped unless the
/// step finished ([`Pending::finished`]): an error leaves no half-written
/// index behind.
pub struct Pending(Option<PathBuf>);

impl Pending {
    pub fn new(dir: Option<&Path>) -> Pending {
        Pending(dir.map(Path::to_path_buf))
    }

    pub fn finished(mut self) {
        self.0 = None;
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(dir) = &self.0 {
            discard(dir);
        }
    }
}

fn remove_if_there(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::msg(format!("{}: {e}", path.display()))),
        _ => Ok(()),
    }
}

/// The `wpd` executable that runs the jobs: beside wpd-ld (as installed and
/// as built), else the one in `PATH`.
pub fn wpd_executable() -> Result<PathBuf> {
    let beside = std::env::current_exe().ok().and_then(|e| e.parent().map(|d| d.join("wpd")));
    if let Some(p) = beside.filter(|p| p.is_file()) {
        return Ok(p);
    }
    crate::which("wpd").and_then(|p| std::path::absolute(p).ok()).ok_or_else(|| {
        Error::msg("the wpd executable (which runs the backend jobs) is neither beside wpd-ld nor in PATH")
    })
}

/// The files of a link a distributed link's final link depends on.
#[derive(Default)]
pub struct LinkFiles {
    /// Every file the link opened, as it opened it.
    pub opened: Vec<PathBuf>,
    /// The native units it loads, with their content hashes
    /// ([`wpd::link_line::inputs::native_inputs`]).
    pub native: Vec<(String, String)>,
}

impl LinkFiles {
    pub fn of(res: &wpd::link_line::inputs::ResolvedLink<'_>) -> Result<LinkFiles> {
        Ok(LinkFiles {
            opened: res.model.inputs.iter().map(|i| i.path.clone()).collect(),
            native: wpd::link_line::inputs::native_inputs(&res.model, &res.source)?,
        })
    }
}

/// Writes the jobs of an index-only link into `dir` (already holding the
/// job modules `job_modules`): the backends' options, the link's
/// arguments (`argv` without `--wpd-index-only`), the job list, the Ninja
/// file and the report as far as it is known. Returns the job list.
pub fn write_jobs(
    dir: &Path,
    argv: &[String],
    link: &LinkArgs,
    files: &LinkFiles,
    summaries: &[wpd_summary::ModuleSummary],
    job_modules: &[wpd::backends::distributed::JobModule],
    codegen: &wpd::backends::codegen::CodegenOptions,
    report: &serde_json::Value,
) -> Result<JobList> {
    let mut options = BackendOptions::new(codegen, &link.settings.llvm_options);
    // The profiles the backends read travel with the jobs; the split DWARF
    // directory stays the link's own (the objects name their .dwo files).
    if let Some(p) = &options.sample_profile {
        options.sample_profile = Some(copy_into(dir, p, "sample.prof")?);
    }
    if let (Some(p), false) = (&options.cs_profile, options.cs_generate) {
        options.cs_profile = Some(copy_into(dir, p, "cs.profdata")?);
    } else if let Some(p) = &options.cs_profile {
        options.cs_profile = Some(absolute(p)?);
    }
    if let Some(d) = &options.dwo_dir {
        options.dwo_dir = Some(absolute(d)?);
    }
    write(dir, OPTIONS_FILE, &json(&options))?;
    let link_args = wpd::link_line::args::without_action(argv, Action::WpdIndexOnly)?;
    write(dir, LINK_ARGS_FILE, &wpd::link_line::args::response_file_text(&link_args))?;
    let cwd = std::env::current_dir().map_err(|e| Error::msg(format!("cannot read the working directory: {e}")))?;
    let output = cwd.join(link.output.as_deref().unwrap_or("a.out"));
    let me = std::env::current_exe().map_err(|e| Error::msg(format!("cannot find wpd-ld's own path: {e}")))?;
    let final_link = FinalLink {
        cwd: cwd.display().to_string(),
        output: output.display().to_string(),
        command: vec![
            me.display().to_string(),
            format!("@{}", dir.join(LINK_ARGS_FILE).display()),
            format!("--wpd-from-index={}", dir.display()),
        ],
        inputs: files.opened.iter().map(|p| cwd.join(p).display().to_string()).collect(),
    };
    // Each input's name and content hash, as its summary already has them.
    let inputs: Vec<(String, String)> =
        summaries.iter().map(|s| (s.module.name.clone(), s.module.hash.clone())).collect();
    let native =
        files.native.iter().map(|(name, hash)| NativeInput { name: name.clone(), hash: hash.clone() }).collect();
    let jobs = JobList::new(dir, &wpd_executable()?, &inputs, job_modules, native, &options, final_link);
    write(dir, REPORT_FILE, &json(report))?;
    write(dir, NINJA_FILE, &jobs.ninja())?;
    // Last: a job list names a complete directory.
    write(dir, JOBS_FILE, &json(&jobs))?;
    Ok(jobs)
}

/// The objects of a distributed link's jobs in `dir`, one per module of
/// this link (`modules`, in link order), and the report the index-only link
/// wrote. The modules must be the ones the index was made from, and so
/// must this link's native files (`native`: name and content hash, in load
/// order), which the plan was validated against.
pub fn objects(
    dir: &Path,
    modules: &[BitcodeInput],
    native: &[(String, String)],
) -> Result<(Vec<Vec<u8>>, serde_json::Value)> {
    let jobs = JobList::read(dir)?;
    same_native_inputs(dir, &jobs, native)?;
    let objects = job_objects(dir, &jobs, modules)?;
    let report = dir.join(REPORT_FILE);
    let text = std::fs::read_to_string(&report).map_err(|e| Error::at(report.display().to_string(), e.to_string()))?;
    let report = serde_json::from_str(&text)
        .map_err(|e| Error::at(report.display().to_string(), format!("not a wpd report: {e}")))?;
    Ok((objects, report))
}

/// Whether this link's native files (`native`) are the index-only link's:
/// an error naming the first that differs.
fn same_native_inputs(dir: &Path, jobs: &JobList, native: &[(String, String)]) -> Result<()> {
    let list = dir.join(JOBS_FILE);
    let index: Vec<(&str, &str)> = jobs.native.iter().map(|n| (n.name.as_str(), n.hash.as_str())).collect();
    let now: Vec<(&str, &str)> = native.iter().map(|(n, h)| (n.as_str(), h.as_str())).collect();
    if index == now {
        return Ok(());
    }
    let what = match index.iter().zip(&now).find(|(a, b)| a != b) {
        Some(((a, _), (b, _))) if a == b => format!("{a} changed since the index-only link"),
        Some(((a, _), (b, _))) => format!("the link loads {b} where the index-only link loaded {a}"),
        None if now.len() > index.len() => format!("the link loads {} as well", now[index.len()].0),
        None => format!("the link no longer loads {}", index[now.len()].0),
    };
    Err(Error::msg(format!("{}: {what}; run it again", list.display())))
}

/// The objects the jobs `jobs` of `dir` wrote, one per module of this link
/// (`modules`, in link order), which must be the ones the jobs were made
/// from.
pub fn job_objects(dir: &Path, jobs: &JobList, modules: &[BitcodeInput]) -> Result<Vec<Vec<u8>>> {
    let list = dir.join(JOBS_FILE);
    if jobs.jobs.len() != modules.len() {
        return Err(Error::msg(format!(
            "{}: written for a link of {} bitcode modules, this one has {}; run the index-only link again",
            list.display(),
            jobs.jobs.len(),
            modules.len()
        )));
    }
    let mut objects = Vec::with_capacity(modules.len());
    for (job, module) in jobs.jobs.iter().zip(modules) {
        if job.input != module.name || job.input_hash != module.content_hash() {
            return Err(Error::msg(format!(
                "{}: {} changed since the index-only link; run it again",
                list.display(),
                module.name
            )));
        }
        let path = dir.join(&job.object);
        let object = std::fs::read(&path).map_err(|e| {
            Error::at(
                path.display().to_string(),
                format!("{e} (the backend job of {} has not run: ninja -C {})", module.name, dir.display()),
            )
        })?;
        let of = format!("the backend job of {}", module.name);
        wpd::final_link::check_job_object(&object, &path.display().to_string(), &of, &job.module_hash)?;
        objects.push(object);
    }
    Ok(objects)
}

fn write(dir: &Path, name: &str, text: &str) -> Result<()> {
    Ok(write_bytes_atomic(text.as_bytes(), &dir.join(name))?)
}

fn absolute(p: &Path) -> Result<PathBuf> {
    std::path::absolute(p).map_err(|e| Error::msg(format!("{}: {e}", p.display())))
}

/// Copies the input `from` into `dir` as `name`; returns `name`.
fn copy_into(dir: &Path, from: &Path, name: &str) -> Result<PathBuf> {
    std::fs::copy(from, dir.join(name))
        .map_err(|e| Error::msg(format!("{}: cannot copy into {}: {e}", from.display(), dir.display())))?;
    Ok(PathBuf::from(name))
}

/// Pretty JSON, for the files above.
fn json<T: serde::Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string_pretty(value).expect("plain data serializes");
    s.push('\n');
    s
}
