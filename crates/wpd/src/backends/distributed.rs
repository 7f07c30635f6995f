//! Distributed backends (docs/cli.md "Distributed backends"): what an
//! index-only link (`wpd-ld --wpd-index-only=DIR`) leaves in `DIR` for a
//! build system, and the backend job (`wpd backend --link-options`).
//!
//! The index-only link runs everything up to code generation in the link
//! step: summarize, wpd's thin link, the rewrites (whose direct calls LLVM's
//! importer must see), then LLVM's thin link with the link model's
//! resolutions, applied to each module (prevailing copies, dead stripping,
//! internalization and promotion, cross-module imports). It leaves, per
//! bitcode module `k` of the link, `DIR/<k>.bc`: the module with its plan
//! shard and LLVM's thin link applied and its imports in it, so that its
//! job reads this one file and nothing else. A job optimizes and compiles
//! it exactly as the in-process link's backend does from that point, so the
//! objects, and the program, are the in-process link's, byte for byte.
//!
//! Beside the modules: [`OPTIONS_FILE`] (the backends' code generation
//! options), [`JOBS_FILE`] (every job with its command, inputs and outputs,
//! and the final link), [`LINK_ARGS_FILE`] (the link's own arguments),
//! [`REPORT_FILE`] (the link's report, which the final link completes) and
//! [`NINJA_FILE`]. Each job runs in `DIR` and names its files relative to it,
//! so a build system can run it on any machine that has them. `ninja -C DIR`
//! runs every job, then the final link (`wpd-ld @DIR/link.rsp
//! --wpd-from-index=DIR`), which produces what the in-process link would
//! have.

use crate::backends::codegen::{CodegenOptions, DebuggerTuning, MachineFlags, Profile};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use wpd_llvm::{LtoReloc, Sections};

/// The job list a build system reads.
pub const JOBS_FILE: &str = "jobs.json";
/// The backends' code generation options, one file all jobs read.
pub const OPTIONS_FILE: &str = "backend-options.json";
/// The Ninja file that runs every job and the final link.
pub const NINJA_FILE: &str = "build.ninja";
/// The link's own arguments, for the final link.
pub const LINK_ARGS_FILE: &str = "link.rsp";
/// The link's report as the index-only link knows it (the final link adds
/// the output's sizes).
pub const REPORT_FILE: &str = "report.json";
/// What [`JOBS_FILE`] says it is.
pub const JOBS_FORMAT: &str = "wpd-jobs-3";

/// The code generation options of a distributed link's backends: the
/// in-process link's ([`CodegenOptions`] and `-mllvm` options), so that each
/// job compiles its module as the in-process link would. Paths are absolute
/// or relative to the index directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackendOptions {
    pub opt_level: u8,
    /// Code generation's level, 0 to 3 ([`CodegenOptions::codegen_level`]).
    pub cg_opt_level: u8,
    pub cpu: String,
    /// `static`, `pic` or `module` (each module's own, `-r`).
    pub reloc: String,
    pub function_sections: bool,
    pub data_sections: bool,
    pub verify: bool,
    pub debugger_tuning: Option<String>,
    pub emulated_tls: bool,
    pub tls_descriptors: bool,
    pub stack_size_section: bool,
    pub split_machine_functions: bool,
    pub jmc_instrument: bool,
    pub sample_profile: Option<PathBuf>,
    pub cs_profile: Option<PathBuf>,
    pub cs_generate: bool,
    pub dwo_dir: Option<PathBuf>,
    /// LLVM's own options (`-mllvm`), set in each job's process.
    pub llvm_options: Vec<String>,
}

impl BackendOptions {
    pub fn new(opts: &CodegenOptions, llvm_options: &[String]) -> BackendOptions {
        let m = &opts.machine;
        BackendOptions {
            opt_level: opts.opt_level,
            cg_opt_level: opts.codegen_level(),
            cpu: opts.cpu.clone(),
            reloc: match opts.reloc {
                LtoReloc::Static => "static",
                LtoReloc::Pic => "pic",
                LtoReloc::Module => "module",
            }
            .into(),
            function_sections: opts.sections.functions,
            data_sections: opts.sections.data,
            verify: opts.lto_verify,
            debugger_tuning: m.debugger_tuning.map(|t| t.llvm_name().to_string()),
            emulated_tls: m.emulated_tls,
            tls_descriptors: m.tls_descriptors,
            stack_size_section: m.stack_size_section,
            split_machine_functions: m.split_machine_functions,
            jmc_instrument: m.jmc_instrument,
            sample_profile: opts.profile.sample.clone(),
            cs_profile: opts.profile.cs_profile.clone(),
            cs_generate: opts.profile.cs_generate,
            dwo_dir: opts.dwo_dir.clone(),
            llvm_options: llvm_options.to_vec(),
        }
    }

    /// The options as the backends take them; `file` names the options file
    /// in errors.
    pub fn codegen(&self, file: &str) -> Result<CodegenOptions> {
        let reloc = match self.reloc.as_str() {
            "static" => LtoReloc::Static,
            "pic" => LtoReloc::Pic,
            "module" => LtoReloc::Module,
            other => return Err(Error::at(file, format!("unknown relocation model '{other}'"))),
        };
        let debugger_tuning = match &self.debugger_tuning {
            None => None,
            Some(t) => Some(
                DebuggerTuning::from_llvm(t)
                    .ok_or_else(|| Error::at(file, format!("unknown debugger tuning '{t}'")))?,
            ),
        };
        if self.opt_level > 3 || self.cg_opt_level > 3 {
            return Err(Error::at(
                file,
                format!("optimization levels {} and {} are not 0 to 3", self.opt_level, self.cg_opt_level),
            ));
        }
        Ok(CodegenOptions {
            opt_level: self.opt_level,
            cg_opt_level: Some(self.cg_opt_level),
            cpu: self.cpu.clone(),
            verify: false,
            lto_verify: self.verify,
            sections: Sections { functions: self.function_sections, data: self.data_sections },
            machine: MachineFlags {
                debugger_tuning,
                emulated_tls: self.emulated_tls,
                tls_descriptors: self.tls_descriptors,
                stack_size_section: self.stack_size_section,
                split_machine_functions: self.split_machine_functions,
                jmc_instrument: self.jmc_instrument,
            },
            profile: Profile {
                sample: self.sample_profile.clone(),
                cs_profile: self.cs_profile.clone(),
                cs_generate: self.cs_generate,
            },
            dwo_dir: self.dwo_dir.clone(),
            split_dwarf_file: None,
            reloc,
        })
    }

    /// Reads an options file.
    pub fn read(file: &Path) -> Result<BackendOptions> {
        let shown = file.display().to_string();
        let text = std::fs::read_to_string(file).map_err(|e| Error::at(&shown, e.to_string()))?;
        serde_json::from_str(&text).map_err(|e| Error::at(&shown, format!("not wpd backend options: {e}")))
    }
}

/// A module an index-only link wrote for a job: its file in the index
/// directory (`<k>.bc`) and its content hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobModule {
    pub file: String,
    pub hash: String,
}

/// One backend job: compile `module` into `object`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// The bitcode the module came from, as the link names it
    /// (`lib.a(member.o)`).
    pub input: String,
    /// xxh3-128 of that bitcode: the final link checks it is still the
    /// input the index was made from.
    pub input_hash: String,
    /// The module's task in the in-process link (its position plus one).
    pub task: u32,
    /// The module it compiles (`<k>.bc`).
    pub module: String,
    /// xxh3-128 of that module: the job names it in its object, and the
    /// final link takes no object compiled from another version of it.
    pub module_hash: String,
    /// The native object it writes.
    pub object: String,
    /// Every file the job reads, relative to the index directory (or
    /// absolute): the module, the options, the profiles.
    pub inputs: Vec<String>,
    /// Every file it writes (the object; with split DWARF its `.dwo`).
    pub outputs: Vec<String>,
    /// Its command line, run in the index directory.
    pub command: Vec<String>,
}

/// The final link: the real linker on the jobs' objects.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FinalLink {
    /// The directory it runs in (the link's own).
    pub cwd: String,
    /// Its output (absolute).
    pub output: String,
    pub command: Vec<String>,
    /// Every file the link opened (objects, archives, shared libraries,
    /// scripts; absolute): when one changes, the final link runs again (and
    /// refuses, naming it, until the index-only link has).
    pub inputs: Vec<String>,
}

/// Everything a build system needs to run a distributed link's backends
/// and its final link ([`JOBS_FILE`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobList {
    /// [`JOBS_FORMAT`].
    pub format: String,
    /// The index directory (absolute): every relative path here is relative
    /// to it.
    pub dir: String,
    pub jobs: Vec<Job>,
    /// The native files the index-only link loaded (objects, archive
    /// members, shared libraries), each with the xxh3-128 of its bytes, in
    /// load order: the plan was validated against them, so the final link
    /// checks they are still the same.
    pub native: Vec<NativeInput>,
    pub link: FinalLink,
}

/// One native file of a distributed link ([`JobList::native`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NativeInput {
    /// As the link names it (`lib.a(member.o)`).
    pub name: String,
    pub hash: String,
}

impl JobList {
    /// The job list of the modules `modules` (in the index directory `dir`,
    /// in link order, `inputs[k]` the name and content hash of module k's
    /// bitcode), run by the `wpd` executable `wpd`, for a link whose native
    /// files are `native`.
    pub fn new(
        dir: &Path,
        wpd: &Path,
        inputs: &[(String, String)],
        modules: &[JobModule],
        native: Vec<NativeInput>,
        options: &BackendOptions,
        link: FinalLink,
    ) -> JobList {
        // Files every job reads: the options and the profiles it uses (a
        // context-sensitive profile being generated is written, not read).
        let read_profile = options.cs_profile.as_ref().filter(|_| !options.cs_generate);
        let shared: Vec<String> = std::iter::once(OPTIONS_FILE.to_string())
            .chain(
                [options.sample_profile.as_ref(), read_profile].into_iter().flatten().map(|p| p.display().to_string()),
            )
            .collect();
        let jobs = modules
            .iter()
            .zip(inputs)
            .enumerate()
            .map(|(k, (module, (input, hash)))| {
                let task = k as u32 + 1;
                let object = format!("{k}.o");
                let mut files = vec![module.file.clone()];
                files.extend(shared.iter().cloned());
                let mut outputs = vec![object.clone()];
                if let Some(dwo) = &options.dwo_dir {
                    // lld's (and the in-process link's) name: the task.
                    outputs.push(dwo.join(format!("{task}.dwo")).display().to_string());
                }
                let command = vec![
                    wpd.display().to_string(),
                    "backend".into(),
                    "--link-options".into(),
                    OPTIONS_FILE.into(),
                    "--task".into(),
                    task.to_string(),
                    "-o".into(),
                    object.clone(),
                    module.file.clone(),
                ];
                Job {
                    input: input.clone(),
                    input_hash: hash.clone(),
                    task,
                    module: module.file.clone(),
                    module_hash: module.hash.clone(),
                    object,
                    inputs: files,
                    outputs,
                    command,
                }
            })
            .collect();
        JobList { format: JOBS_FORMAT.into(), dir: dir.display().to_string(), jobs, native, link }
    }

    /// Reads `dir`'s job list.
    pub fn read(dir: &Path) -> Result<JobList> {
        let file = dir.join(JOBS_FILE);
        let shown = file.display().to_string();
        let text = std::fs::read_to_string(&file).map_err(|e| Error::at(&shown, e.to_string()))?;
        let list: JobList =
            serde_json::from_str(&text).map_err(|e| Error::at(&shown, format!("not a wpd job list: {e}")))?;
        if list.format != JOBS_FORMAT {
            return Err(Error::at(
                &shown,
                format!("job list format '{}', this wpd reads '{JOBS_FORMAT}'", list.format),
            ));
        }
        Ok(list)
    }

    /// The Ninja file that runs every job in the index directory (`ninja -C
    /// DIR`), then the final link.
    pub fn ninja(&self) -> String {
        let mut out = String::from(
            "# Written by wpd-ld --wpd-index-only: the link's ThinLTO backends and its final link.\n\
             # Run with `ninja -C <this directory>`; jobs.json lists the same jobs for other build systems.\n\
             ninja_required_version = 1.3\n\n\
             rule wpd_backend\n  command = $cmd\n  description = wpd backend $out\n\n\
             rule wpd_link\n  command = $cmd\n  description = wpd-ld final link $out\n  pool = console\n\n",
        );
        let mut objects = Vec::new();
        for job in &self.jobs {
            let outputs: Vec<String> = job.outputs.iter().map(|o| ninja_path(o)).collect();
            let (first, rest) = outputs.split_first().expect("a job writes its object");
            let implicit_out = if rest.is_empty() { String::new() } else { format!(" | {}", rest.join(" ")) };
            let deps: Vec<String> = job.inputs.iter().skip(1).map(|i| ninja_path(i)).collect();
            out.push_str(&format!(
                "build {first}{implicit_out}: wpd_backend {} | {}\n  cmd = {}\n",
                ninja_path(&job.module),
                deps.join(" "),
                ninja_command(&job.command)
            ));
            objects.push(first.clone());
        }
        let link = format!("cd {} && {}", shell_word(&self.link.cwd), shell_command(&self.link.command));
        let inputs: Vec<String> = self.link.inputs.iter().map(|i| ninja_path(i)).collect();
        out.push_str(&format!(
            "\nbuild {}: wpd_link {} | {} {} {}{}\n  cmd = {}\n\ndefault {}\n",
            ninja_path(&self.link.output),
            objects.join(" "),
            LINK_ARGS_FILE,
            JOBS_FILE,
            REPORT_FILE,
            inputs.iter().map(|i| format!(" {i}")).collect::<String>(),
            link.replace('$', "$$"),
            ninja_path(&self.link.output),
        ));
        out
    }
}

/// Runs one backend job: `module` compiled under the options file
/// `options`, as task `task`, into `out` (written atomically).
pub fn run_job(module: &Path, options: &Path, task: u32, out: &Path) -> Result<()> {
    let mut opts = BackendOptions::read(options)?;
    // The profiles travel beside the options file (`sample.prof`,
    // `cs.profdata`): relative names are relative to it, wherever the job
    // runs (in the index directory for Ninja, anywhere for a distributor).
    let beside = options.parent().unwrap_or(Path::new(""));
    for p in [&mut opts.sample_profile, &mut opts.cs_profile].into_iter().flatten() {
        if p.is_relative() {
            *p = beside.join(&*p);
        }
    }
    wpd_llvm::Context::set_llvm_options(&opts.llvm_options).map_err(|e| e.context(options.display().to_string()))?;
    let codegen = opts.codegen(&options.display().to_string())?;
    if let Some(dir) = &codegen.dwo_dir {
        std::fs::create_dir_all(dir).map_err(|e| {
            Error::at(dir.display().to_string(), format!("cannot create the split DWARF directory: {e}"))
        })?;
    }
    let shown = module.display().to_string();
    let bytes = std::fs::read(module).map_err(|e| Error::at(&shown, e.to_string()))?;
    let object = crate::backends::thinlto::backend_job(&bytes, &shown, &codegen, task)?;
    if object.is_empty() {
        return Err(Error::at(&shown, "LLVM's ThinLTO produced no object for this module"));
    }
    // The object names the module it was compiled from, for the final link.
    let hash = crate::input::content_hash(&bytes);
    let object = crate::final_link::mark_job_object(&object, &hash, &out.display().to_string())?;
    wpd_summary::container::write_bytes_atomic(&object, out)?;
    Ok(())
}

/// A path in a Ninja `build` line.
fn ninja_path(p: &str) -> String {
    let mut s = String::with_capacity(p.len());
    for c in p.chars() {
        match c {
            '$' | ' ' | ':' => {
                s.push('$');
                s.push(c);
            }
            '\n' => s.push_str("$\n"),
            _ => s.push(c),
        }
    }
    s
}

/// A word for `/bin/sh`, quoted when it needs to be.
fn shell_word(w: &str) -> String {
    if !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=+,@%:".contains(c)) {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

fn shell_command(argv: &[String]) -> String {
    argv.iter().map(|a| shell_word(a)).collect::<Vec<_>>().join(" ")
}

/// A command line as a Ninja variable's value (run by `/bin/sh`).
fn ninja_command(argv: &[String]) -> String {
    shell_command(argv).replace('$', "$$")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ninja_and_shell_escaping() {
        assert_eq!(ninja_path("a b:c$d"), "a$ b$:c$$d");
        assert_eq!(shell_word("plain/path.o"), "plain/path.o");
        assert_eq!(shell_word("it's here"), r"'it'\''s here'");
        assert_eq!(shell_word(""), "''");
        assert_eq!(ninja_command(&["echo".into(), "$HOME".into()]), "echo '$$HOME'");
    }

    #[test]
    fn options_round_trip() {
        let mut opts = CodegenOptions { reloc: LtoReloc::Static, opt_level: 3, ..CodegenOptions::default() };
        opts.machine.debugger_tuning = Some(DebuggerTuning::Lldb);
        opts.profile.sample = Some("/p/sample.prof".into());
        opts.dwo_dir = Some("/d".into());
        let cgo0 = BackendOptions::new(&CodegenOptions { cg_opt_level: Some(0), ..opts.clone() }, &[]);
        assert_eq!(cgo0.codegen("f").unwrap().codegen_level(), 0);
        let b = BackendOptions::new(&opts, &["-x86-asm-syntax=intel".into()]);
        let text = serde_json::to_string(&b).unwrap();
        let back: BackendOptions = serde_json::from_str(&text).unwrap();
        assert_eq!(back, b);
        let c = back.codegen("f").unwrap();
        assert_eq!(
            (c.opt_level, c.codegen_level(), c.reloc, c.machine, c.profile, c.dwo_dir),
            (3, 3, LtoReloc::Static, opts.machine, opts.profile, opts.dwo_dir)
        );

        let bad = BackendOptions { reloc: "ropi".into(), ..b.clone() };
        assert!(bad.codegen("f").unwrap_err().to_string().contains("ropi"));
        let bad = BackendOptions { opt_level: 9, ..b.clone() };
        assert!(bad.codegen("f").is_err());
        let bad = BackendOptions { cg_opt_level: 4, ..b };
        assert!(bad.codegen("f").is_err());
    }
}
