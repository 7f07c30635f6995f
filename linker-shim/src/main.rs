//! `wpd-ld`: the linker clang runs with `--ld-path=wpd-ld`. It scans the ld
//! command line, resolves it as the real linker will (which inputs and
//! archive members are loaded, what is referenced from outside the
//! bitcode), runs summarize → thin link → backends in-process on the loaded
//! bitcode, puts native objects (and archives of them) in place of the
//! bitcode, and runs the real linker.

mod ahead;
mod allocator;
mod distributed;
mod dtlto;
mod extraction;
mod placement;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use wpd::backends::codegen::CodegenOptions;
use wpd::error::{Error, Result};
use wpd::input::{BitcodeInput, SplitPlacement};
use wpd::link_line::args::{self, Item, LinkArgs};
use wpd::link_line::inputs;
use wpd::timing::Timings;
use wpd_link::resolve::InputKind;
use wpd_link::{Flavor, InputId, LinkModel, LoadedKind, MemberId};

/// The process's allocator: mimalloc, for Rust (this global allocator) and,
/// through its `override` feature, for C and C++ too: the executable
/// defines and exports `malloc`, `free` and the rest of glibc's allocation
/// interface, so the LLVM and lld linked in, and libstdc++'s `operator
/// new`, allocate from it. LLVM's optimizer and code generator allocate
/// and free small objects at a high rate from every backend thread: with
/// glibc's malloc 5.3% of the backends' instructions were in it (Box2D,
/// 386 M of 7,302 M). With mimalloc the same links take 3–5% less CPU and
/// wall time and produce the same bytes (docs/performance.md, "The
/// allocator"). Version 2 (`v2`), whose freed pages go back to the system
/// after 10 ms (version 3 waits a second: the generated 9-object program's
/// peak went from 81 to 95 MB), and `no_thp`: no transparent huge pages
/// asked for (with them Box2D's peak went from 76 to 110–128 MB).
/// Only binaries set this (wpd-ld, and `wpd` in crates/wpd-cli): the
/// gold/BFD plugin lives in another program's heap and must not define
/// `malloc`.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    wpd_llvm::Context::exit_on_fatal_errors("wpd-ld");
    let raw: Vec<String> = std::env::args().skip(1).collect();
    match run(raw) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("wpd-ld: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Finds an executable: a path as given, or a name searched in `PATH`.
fn which(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        let p = PathBuf::from(name);
        return p.is_file().then_some(p);
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(name)).find(|p| p.is_file())
}

/// The real linker, and whether it runs in wpd-ld's own process.
struct RealLinker {
    path: PathBuf,
    /// The linker is the lld wpd-ld links as a library (the same binary
    /// once symlinks are followed) and `--wpd-spawn-linker` is off: its
    /// driver runs in-process, which saves starting a second process that
    /// loads LLVM again (about 30 ms a link).
    in_process: bool,
}

fn real_linker(args: &LinkArgs) -> Result<RealLinker> {
    let path = match &args.wpd.linker {
        Some(l) => which(l).ok_or_else(|| Error::msg(format!("real linker {l} not found")))?,
        None => which("ld.lld-19")
            .or_else(|| which("ld.lld"))
            .ok_or_else(|| Error::msg("real linker ld.lld-19 not found (install lld-19 or pass --wpd-linker=PATH)"))?,
    };
    let in_process = !args.wpd.spawn_linker && wpd_llvm::link::is_linked_lld(&path);
    Ok(RealLinker { path, in_process })
}

fn run(raw: Vec<String>) -> Result<u8> {
    let mut timings = Timings::default();
    let start = std::time::Instant::now();
    let argv = args::expand_response_files(raw)?;
    let mut link = args::parse(&argv)?;
    if link.wpd.low_memory {
        allocator::return_freed_pages_at_once();
    }
    let linker = real_linker(&link)?;
    link.line.flavor = linker_flavor(&linker.path);
    // Before any LLVM work, on any thread.
    wpd_llvm::Context::set_llvm_options(&link.settings.llvm_options)?;
    // Bitcode the line names is summarized on the other core while the line
    // is resolved (not with a cache, whose summaries cost a read, nor when
    // the summaries were made by an earlier link).
    // (`helper` lives to the end of `run`: its drop waits for the thread.)
    let helper =
        (link.settings.cache_dir.is_none() && link.wpd.from_index.is_none()).then(|| ahead::Ahead::start(&link.line));
    let mut res = timings.phase("inputs", || inputs::resolve(&link))?;
    let (ahead, ahead_busy) = helper.as_ref().map(|a| a.take()).unwrap_or_default();
    if !ahead.is_empty() {
        timings.record("summarize-ahead", ahead_busy);
    }

    // wpd-ld's private temporary directory (native objects, rebuilt
    // archives, the real linker's response file): removed when `run`
    // returns, on errors too, unless --wpd-save-temps keeps it.
    let tmp = private_temp_dir(&res)?;

    // Distributed backends: this link stops after the thin link, or is the
    // final link on the objects of the jobs.
    if (link.wpd.index_only.is_some() || link.wpd.from_index.is_some()) && link.wpd.size_baseline {
        return Err(Error::msg("--wpd-size-baseline links twice in one process: not with distributed backends"));
    }
    let index_dir = match (&link.wpd.index_only, &link.wpd.from_index) {
        (Some(_), Some(_)) => return Err(Error::msg("--wpd-index-only and --wpd-from-index exclude each other")),
        (Some(d), None) => Some(distributed::prepare(d)?),
        _ => None,
    };
    // lld's --thinlto-index-only: index files for clang's own backends.
    link.settings.index_only.check()?;
    let clang_indexes = link.settings.index_only.enabled;
    if clang_indexes
        && (index_dir.is_some()
            || link.wpd.from_index.is_some()
            || link.wpd.dtlto.distributor.is_some()
            || link.wpd.size_baseline)
    {
        return Err(Error::msg(
            "--thinlto-index-only excludes --wpd-index-only, --wpd-from-index, --thinlto-distributor and --wpd-size-baseline",
        ));
    }
    if clang_indexes && (link.settings.remarks != wpd::report::Remarks::None || link.wpd.remarks_file.is_some()) {
        // The calls are rewritten by clang's backends, whose remarks say so.
        return Err(Error::msg(
            "--wpd-remarks and --wpd-remarks-file are not for a --thinlto-index-only link: clang's backends \
             devirtualize, and say so with -Rpass=wholeprogramdevirt (the report lists the plan)",
        ));
    }
    // Until the link step has written its job list, an error discards what
    // it wrote into the index directory.
    let pending = distributed::Pending::new(index_dir.as_deref());
    // DTLTO: the same jobs, beside the output, run by the user's distributor.
    let dtlto = dtlto_files(&link)?;

    if clang_indexes {
        let code = write_clang_indexes(&link, &linker, &mut res, &ahead, &mut timings, start)?;
        keep_temps(tmp, link.settings.save_temps);
        return Ok(code);
    }
    if !res.has_bitcode() {
        // No bitcode: nothing for wpd to do (a distributed link's only job
        // is the final link).
        if let Some(dir) = &index_dir {
            let codegen = CodegenOptions::default();
            let files = distributed::LinkFiles::of(&res)?;
            distributed::write_jobs(dir, &argv, &link, &files, &[], &[], &codegen, &serde_json::Value::Null)?;
            pending.finished();
            keep_temps(tmp, link.settings.save_temps);
            return Ok(0);
        }
        if let Some(dir) = &link.wpd.from_index {
            distributed::objects(dir, &[], &inputs::native_inputs(&res.model, &res.source)?)?;
        }
        let code = run_linker(&linker, &final_args(&link, &[]), tmp.path())?;
        keep_temps(tmp, link.settings.save_temps);
        return Ok(code);
    }
    if let Some(dir) = &link.wpd.from_index {
        let modules = bitcode_modules(&link, &mut res)?;
        let native = inputs::native_inputs(&res.model, &res.source)?;
        let (objects, report) = timings.phase("read", || distributed::objects(dir, &modules, &native))?;
        let report = (!report.is_null()).then_some(report);
        let natives = wpd::backends::thinlto::Natives { objects, ..Default::default() };
        let code = final_link(&link, &linker, &res, &natives, report, &mut timings, start, None, tmp.path())?;
        keep_temps(tmp, link.settings.save_temps);
        return Ok(code);
    }
    check_profiles(&link.settings.profile)?;

    // The bitcode modules the link loads, in load order (the linker's
    // order, and lld's ThinLTO task order).
    let modules = bitcode_modules(&link, &mut res)?;
    let model = &res.model;

    let progress = progress(&link);
    let cache = link_cache(&link)?;
    let request = wpd::LinkRequest {
        modules: &modules,
        ahead: &ahead,
        settings: &link.settings,
        model,
        native: &res.scan,
        output: link.output_kind(),
        backends: match (&index_dir, &dtlto) {
            (Some(dir), _) => wpd::Backends::IndexOnly(dir),
            (None, Some(files)) => wpd::Backends::IndexOnly(&files.dir),
            (None, None) => wpd::Backends::InProcess,
        },
        cache: cache.as_ref(),
        progress: &progress,
    };
    let wpd::Linked { out, policy, codegen, symbols } = wpd::link(&request, &mut timings)?;
    for r in wpd::report::remarks(&out.summaries, &out.plan, &out.stats, link.settings.remarks) {
        eprintln!("{r}");
    }
    if let Some(file) = &link.wpd.remarks_file {
        let yaml = wpd::report::remarks_yaml(&out.stats, &out.plan);
        wpd_summary::container::write_bytes_atomic(yaml.as_bytes(), file)?;
    }
    // The backends did something other than the plan said: a wpd bug
    // (never a miscompile: the backend's own outcomes are what it did).
    let mismatches = wpd::report::mismatches(&out.summaries, &out.plan, &policy, &out.stats);
    for m in &mismatches {
        eprintln!("wpd-ld: warning: plan and backend disagree: {m}");
    }

    // The report as far as the thin link and the backends know it; the
    // final link adds the output's sizes and its timings.
    let report = |timings: &Timings| -> Result<serde_json::Value> {
        let mut json =
            wpd::report::report(&out.summaries, &out.plan, &policy, &out.stats, &mismatches, timings, None, None);
        json["linker"] = serde_json::Value::String(linker.path.display().to_string());
        json["settings"] = serde_json::to_value(&link.settings).map_err(|e| Error::msg(e.to_string()))?;
        json["linker_in_process"] = serde_json::Value::Bool(linker.in_process);
        json["allocator"] = serde_json::json!({ "name": "mimalloc", "purge_delay_ms": allocator::purge_delay_ms() });
        json["backends"] = serde_json::to_value(&out.natives.backends).map_err(|e| Error::msg(e.to_string()))?;
        json["prevailing_copies"] =
            serde_json::to_value(&out.natives.prevailing).map_err(|e| Error::msg(e.to_string()))?;
        json["cache"] = match &cache {
            Some(c) => serde_json::to_value(c.report()).map_err(|e| Error::msg(e.to_string()))?,
            None => serde_json::Value::Null,
        };
        json["link_model"] = link_model_json(&res.model);
        Ok(json)
    };
    if let Some(dir) = &index_dir {
        timings.record("total", start.elapsed());
        let files = distributed::LinkFiles::of(&res)?;
        distributed::write_jobs(
            dir,
            &argv,
            &link,
            &files,
            &out.summaries,
            &out.job_modules,
            &codegen,
            &report(&timings)?,
        )?;
        pending.finished();
        if let Some(c) = &cache {
            c.prune(&link.settings.cache_policy)?;
        }
        keep_temps(tmp, link.settings.save_temps);
        return Ok(0);
    }
    if let Some(files) = &dtlto {
        // Every job's files, then the distributor; the objects it brought
        // back are linked as the in-process link's would be.
        let jobs = distributed::write_jobs(
            &files.dir,
            &argv,
            &link,
            &distributed::LinkFiles::default(),
            &out.summaries,
            &out.job_modules,
            &codegen,
            &serde_json::Value::Null,
        )?;
        let (wpd, wpd_args) = dtlto_wpd(&link.wpd.dtlto)?;
        timings.phase("distribute", || files.distribute(&jobs, &link.wpd.dtlto, &wpd, &wpd_args))?;
        let objects = timings.phase("read", || distributed::job_objects(&files.dir, &jobs, &modules))?;
        let natives = wpd::backends::thinlto::Natives { objects, ..Default::default() };
        let report = link.settings.report.as_ref().map(|_| report(&timings)).transpose()?;
        let code = final_link(&link, &linker, &res, &natives, report, &mut timings, start, None, tmp.path())?;
        keep_temps(tmp, link.settings.save_temps);
        return Ok(code);
    }
    let report = link.settings.report.as_ref().map(|_| report(&timings)).transpose()?;
    // The same link without devirtualization (--wpd-size-baseline): every
    // hierarchy open, no speculation. Same summaries, another policy: only
    // the plan and the backends run again.
    let baseline = || -> Result<wpd::backends::thinlto::Natives> {
        let mut plain = policy.clone();
        plain.validation.force_open = vec!["*".into()];
        plain.validation.enabled = true;
        plain.speculate = 0;
        plain.closed_set = 0;
        plain.dead_slots = false;
        let base = wpd::compile_summarized(
            &modules,
            out.summaries.clone(),
            &plain,
            &codegen,
            &symbols,
            wpd::Backends::InProcess,
            link.settings.jobs,
            None,
            &mut Timings::default(),
            &wpd::progress::Progress::off(),
        )?;
        Ok(base.natives)
    };
    let baseline: Option<&dyn Fn() -> Result<wpd::backends::thinlto::Natives>> =
        link.wpd.size_baseline.then_some(&baseline);
    let code = final_link(&link, &linker, &res, &out.natives, report, &mut timings, start, baseline, tmp.path())?;
    // As lld: the cache is pruned after a link (when its policy's interval
    // has passed since the last pruning).
    if let Some(c) = &cache
        && code == 0
    {
        c.prune(&link.settings.cache_policy)?;
    }
    keep_temps(tmp, link.settings.save_temps);
    Ok(code)
}

/// Progress on a terminal, unless --wpd-quiet or remarks go there.
fn progress(link: &LinkArgs) -> wpd::progress::Progress {
    wpd::progress::Progress::new("wpd-ld", std::io::IsTerminal::is_terminal(&std::io::stderr()) && !link.wpd.quiet)
}

/// The link cache, when the link names one. Its entries also depend on
/// what no key names: the -mllvm options, and the target machine flags
/// wpd-ld sets itself (`-emulated-tls`, `-stack-size-section`,
/// `-enable-tlsdesc`, `-enable-jmc-instrument`, ...), which LLVM's
/// ThinLTO cache key leaves out.
fn link_cache(link: &LinkArgs) -> Result<Option<wpd::backends::cache::Cache>> {
    let mut extra = link.settings.llvm_options.clone();
    extra.push(format!("{:?}", link.settings.machine));
    link.settings.cache_dir.as_ref().map(|dir| wpd::backends::cache::Cache::open(dir, &extra)).transpose()
}

/// lld's `--thinlto-index-only`: the thin link, then each loaded bitcode
/// file's index for clang's own backends (with wpd's decisions as LLVM's
/// resolutions), an empty index for each bitcode file the link did not
/// load, the list of objects and the regular LTO object; no final link
/// (`wpd::backends::clang_indexes`). The report, with `--wpd-report`, says
/// what of the plan the indexes carry.
fn write_clang_indexes(
    link: &LinkArgs,
    linker: &RealLinker,
    res: &mut inputs::ResolvedLink<'_>,
    ahead: &wpd::SummariesAhead,
    timings: &mut Timings,
    start: std::time::Instant,
) -> Result<u8> {
    let opts = &link.settings.index_only;
    let mut modules = if res.has_bitcode() { bitcode_modules(link, res)? } else { Vec::new() };
    // Minimized bitcode (`-fthin-link-bitcode=`) has a summary but no
    // bodies, and wpd reads the bodies of virtual calls: it reads the full
    // bitcode the index names instead, which LLVM's thin link then takes
    // too (the same summary).
    if let Some((old, _)) = &opts.object_suffix_replace {
        for m in modules.iter_mut().filter(|m| m.member.is_none() && m.path.ends_with(old.as_str())) {
            let full = opts.module_path(&m.path);
            m.bytes = std::fs::read(&full)
                .map_err(|e| {
                    Error::at(
                        &full,
                        format!("{e} (--thinlto-object-suffix-replace: wpd reads the full bitcode of {})", m.path),
                    )
                })?
                .into();
        }
    }
    let model = &res.model;
    let mut written = Vec::new();
    let mut out = None;
    let mut policy = None;
    // The cache serves the summaries (nothing is compiled here).
    let cache = link_cache(link)?;
    if !modules.is_empty() {
        check_profiles(&link.settings.profile)?;
        let progress = progress(link);
        let request = wpd::LinkRequest {
            modules: &modules,
            ahead,
            settings: &link.settings,
            model,
            native: &res.scan,
            output: link.output_kind(),
            backends: wpd::Backends::ClangIndexes(opts),
            cache: cache.as_ref(),
            progress: &progress,
        };
        let linked = wpd::link(&request, timings)?;
        written.extend(linked.out.index_files.as_ref().map(|f| f.written.clone()).unwrap_or_default());
        policy = Some(linked.policy);
        out = Some(linked.out);
    } else {
        // Nothing to compile: an empty list and object, as lld writes them.
        for file in opts.list.iter().chain(&opts.obj_path) {
            wpd_summary::container::write_bytes_atomic(b"", file)?;
            written.push(file.clone());
        }
    }
    // Bitcode files the link names but never loaded (lazy objects nothing
    // needed) get indexes that compile to empty objects.
    for (k, input) in model.inputs.iter().enumerate() {
        let loaded = model.loaded.iter().any(|l| l.input.index() == k);
        if input.kind == wpd_link::resolve::InputKind::Bitcode && !loaded {
            written.extend(wpd::backends::clang_indexes::write_empty(&input.path.display().to_string(), opts)?);
        }
    }
    timings.record("total", start.elapsed());
    if let Some(path) = &link.settings.report {
        let (plan_stats, carried, decisions) = match &out {
            Some(o) => (
                serde_json::to_value(&o.plan.stats).map_err(|e| Error::msg(e.to_string()))?,
                serde_json::to_value(o.index_files.as_ref().map(|f| &f.carried))
                    .map_err(|e| Error::msg(e.to_string()))?,
                serde_json::to_value(&o.plan.decisions).map_err(|e| Error::msg(e.to_string()))?,
            ),
            None => (serde_json::Value::Null, serde_json::Value::Null, serde_json::json!([])),
        };
        let mut json = serde_json::json!({
            "mode": "thinlto-index-only",
            "linker": linker.path.display().to_string(),
            "settings": serde_json::to_value(&link.settings).map_err(|e| Error::msg(e.to_string()))?,
            "policy_whole_program_visibility": policy.as_ref().map(|p| p.whole_program_visibility),
            "plan": plan_stats,
            "clang_indexes": carried,
            "decisions": decisions,
            "written": written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            "link_model": link_model_json(model),
        });
        timings.add_to_report(&mut json, "");
        let text = serde_json::to_string_pretty(&json).map_err(|e| Error::msg(e.to_string()))?;
        wpd_summary::container::write_bytes_atomic(text.as_bytes(), path)?;
    }
    if let Some(c) = &cache {
        c.prune(&link.settings.cache_policy)?;
    }
    Ok(0)
}

/// The files of a DTLTO link (`--thinlto-distributor=`), created beside
/// the output; `None` without a distributor. The DTLTO options without a
/// distributor, or with another distributed mode, are errors.
fn dtlto_files(link: &LinkArgs) -> Result<Option<dtlto::Files>> {
    let d = &link.wpd.dtlto;
    if d.distributor.is_none() {
        if !d.distributor_args.is_empty() || d.remote_compiler.is_some() || !d.remote_compiler_args.is_empty() {
            return Err(Error::msg(
                "--thinlto-distributor-arg, --thinlto-remote-compiler and --thinlto-remote-compiler-arg need --thinlto-distributor",
            ));
        }
        return Ok(None);
    }
    if link.wpd.index_only.is_some() || link.wpd.from_index.is_some() {
        return Err(Error::msg("--thinlto-distributor excludes --wpd-index-only and --wpd-from-index"));
    }
    if link.wpd.size_baseline {
        return Err(Error::msg("--wpd-size-baseline links twice in one process: not with --thinlto-distributor"));
    }
    let output = link.output.clone().unwrap_or_else(|| "a.out".into());
    Ok(Some(dtlto::Files::new(Path::new(&output), link.settings.save_temps)?))
}

/// The `wpd` executable a DTLTO job runs: `--thinlto-remote-compiler` when
/// it names one, else the one beside wpd-ld. clang's driver names itself
/// there (`-fthinlto-distributor=`), but wpd's jobs are not clang's: a
/// remote compiler that is not wpd, and its arguments, are set aside with
/// a warning.
fn dtlto_wpd(d: &args::Dtlto) -> Result<(PathBuf, Vec<String>)> {
    match &d.remote_compiler {
        Some(p) if p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("wpd")) => {
            Ok((p.clone(), d.remote_compiler_args.clone()))
        }
        Some(p) => {
            let ours = distributed::wpd_executable()?;
            let args = if d.remote_compiler_args.is_empty() {
                ""
            } else {
                " (and its --thinlto-remote-compiler-arg options are not passed)"
            };
            eprintln!(
                "wpd-ld: warning: --thinlto-remote-compiler={}: wpd's backend jobs run {}, not a compiler{args}",
                p.display(),
                ours.display(),
            );
            Ok((ours, Vec::new()))
        }
        None => Ok((distributed::wpd_executable()?, d.remote_compiler_args.clone())),
    }
}

/// The real link: native objects (`objects`, one per loaded bitcode unit,
/// in load order) in place of the bitcode, then the real linker. On
/// success, `report` (the link's report so far) is completed with the
/// output's sizes (and `baseline`'s: the objects of the same link without
/// devirtualization) and this link's timings, and written to
/// `--wpd-report`.
#[allow(clippy::too_many_arguments)]
fn final_link(
    link: &LinkArgs,
    linker: &RealLinker,
    res: &inputs::ResolvedLink<'_>,
    natives: &wpd::backends::thinlto::Natives,
    report: Option<serde_json::Value>,
    timings: &mut Timings,
    start: std::time::Instant,
    baseline: Option<&dyn Fn() -> Result<wpd::backends::thinlto::Natives>>,
    tmp: &Path,
) -> Result<u8> {
    let replacements = timings.phase("write", || write_natives(tmp, link, res, natives))?;
    let final_argv = final_args(link, &replacements);
    let link_start = std::time::Instant::now();
    let code = run_linker(linker, &final_argv, tmp)?;
    timings.record("link", link_start.elapsed());
    timings.record("total", start.elapsed());
    let (Some(path), Some(mut json), 0) = (&link.settings.report, report, code) else { return Ok(code) };
    let output = link.output.clone().unwrap_or_else(|| "a.out".into());
    let sizes = wpd::report::sizes::of_file(Path::new(&output)).ok();
    let baseline = match baseline {
        Some(objects_of) => {
            let dir = tmp.join("baseline");
            std::fs::create_dir_all(&dir).map_err(|e| Error::msg(format!("{}: {e}", dir.display())))?;
            let replacements = write_natives(&dir, link, res, &objects_of()?)?;
            let mut argv = final_args(link, &replacements);
            let target = dir.join("output");
            // The last -o wins (lld, GNU ld and gold alike).
            argv.extend(["-o".to_string(), target.display().to_string()]);
            if run_linker(linker, &argv, &dir)? != 0 {
                return Err(Error::msg("the baseline link (--wpd-size-baseline) failed"));
            }
            Some(wpd::report::sizes::of_file(&target)?)
        }
        None => None,
    };
    json["size"] = serde_json::json!({ "output": sizes, "baseline": baseline });
    // A distributed link's report has the index-only link's phases; the
    // final link's own are added as `final-<phase>`.
    let distributed = link.wpd.from_index.is_some();
    timings.add_to_report(&mut json, if distributed { "final-" } else { "" });
    let text = serde_json::to_string_pretty(&json).map_err(|e| Error::msg(e.to_string()))?;
    wpd_summary::container::write_bytes_atomic(text.as_bytes(), path)?;
    Ok(code)
}

/// The flavor of the real linker: from its name, following a symlink such
/// as `/usr/bin/ld` → `x86_64-linux-gnu-ld.bfd` (or `ld.gold`).
fn linker_flavor(linker: &Path) -> Flavor {
    let named = Flavor::from_linker_path(linker);
    match std::fs::canonicalize(linker) {
        Ok(real) if named == Flavor::Bfd => Flavor::from_linker_path(&real),
        _ => named,
    }
}

/// The report's `link_model`: the flavor followed, every unit loaded (as
/// lld's `--trace` names it) in load order, and whether the outside
/// references are known.
fn link_model_json(model: &LinkModel) -> serde_json::Value {
    serde_json::json!({
        "flavor": model.flavor.name(),
        "loaded": model.loaded.iter().map(|l| l.name.clone()).collect::<Vec<_>>(),
        "outside_refs_known": model.outside_refs.is_known(),
    })
}

/// The loaded bitcode modules in load order. A member name repeated in one
/// archive gets `@<n>` in the module's name, so every module is distinct.
fn bitcode_modules(link: &LinkArgs, res: &mut inputs::ResolvedLink<'_>) -> Result<Vec<BitcodeInput>> {
    let model = &res.model;
    let regular = placement::regular_lto_inputs(&link.line, model);
    let mut modules = Vec::new();
    for l in model.bitcode() {
        let input = model.input(l.input);
        let path = input.path.display().to_string();
        let (member, bytes) = match (l.member, &input.kind) {
            (Some(m), InputKind::Archive { members, .. }) => {
                let name = &members[m.index()].name;
                let same = members[..m.index()].iter().filter(|o| o.name == *name).count();
                let shown = if same == 0 { name.clone() } else { format!("{name}@{}", same + 1) };
                (Some(shown), res.source.shared_member_bytes(&input.path, m.index()))
            }
            _ => (None, res.source.shared_bytes(&input.path)),
        };
        let bytes = bytes.ok_or_else(|| Error::at(&l.name, "input changed while linking"))?;
        let name = match &member {
            Some(m) => format!("{path}({m})"),
            None => path.clone(),
        };
        // A split unit kept in two is one object where it stood (a file,
        // lazy or not, an archive member, an entry of a linker script:
        // `write_natives`); or its vtables may go to the link's regular LTO
        // object (`placement`).
        let split = if l.member.is_none() && regular.contains(&l.input) {
            SplitPlacement::RegularLto
        } else {
            SplitPlacement::Joined
        };
        modules.push(BitcodeInput { name, path, member, bytes, split });
    }
    Ok(modules)
}

/// Writes native objects (and rebuilt archives and scripts) into `dir`;
/// returns, per command-line item, what replaces it: `Some(paths)` puts
/// `paths` in its place (none: the item is dropped, a `--start-lib`
/// bitcode object the link does not load; two: a split unit's objects,
/// side by side).
fn write_natives(
    dir: &Path,
    link: &LinkArgs,
    res: &inputs::ResolvedLink<'_>,
    natives: &wpd::backends::thinlto::Natives,
) -> Result<Vec<Option<Vec<PathBuf>>>> {
    let model = &res.model;
    // The native objects must make the linker extract what the bitcode
    // made it extract, where it did (`extraction`).
    let kept = extraction::keep_extraction(model, natives)?;
    let mut w = Writer { dir, res, native: HashMap::new(), regular: None, next: 0 };
    for (k, (l, obj)) in model.bitcode().zip(&natives.objects).enumerate() {
        let obj = kept[k].as_deref().unwrap_or(obj);
        w.native.insert((l.input, l.member), obj);
        if let Some(r) = natives.regular.as_ref().filter(|r| r.before == k) {
            if l.member.is_some() {
                return Err(Error::msg(format!(
                    "{}: the regular LTO object cannot go before an archive member (a wpd bug)",
                    l.name
                )));
            }
            w.regular = Some((l.input, r.object.as_slice()));
        }
    }
    let opened = model.inputs_by_item();
    let mut out = vec![None; link.items.len()];
    for (i, item) in link.items.iter().enumerate() {
        let line = match item {
            Item::Input { line, .. } | Item::Library { line, .. } => *line,
            Item::Pass(_) => continue,
        };
        if let Some(&id) = opened.get(&line) {
            out[i] = w.replacement(id)?;
        }
    }
    Ok(out)
}

/// Per loaded bitcode unit, by (input, member): its native object.
type NativeObjects<'a> = HashMap<(InputId, Option<MemberId>), &'a [u8]>;

/// Writes what replaces each bitcode-holding input, in its own numbered
/// folder of the temporary directory.
struct Writer<'a> {
    dir: &'a Path,
    res: &'a inputs::ResolvedLink<'a>,
    native: NativeObjects<'a>,
    /// The link's regular LTO object and the bitcode file it goes right
    /// before (`placement`).
    regular: Option<(InputId, &'a [u8])>,
    next: usize,
}

impl Writer<'_> {
    fn folder(&mut self) -> Result<PathBuf> {
        let sub = self.dir.join(format!("{}", self.next));
        self.next += 1;
        std::fs::create_dir_all(&sub).map_err(|e| Error::msg(format!("{}: {e}", sub.display())))?;
        Ok(sub)
    }

    /// `None`: keep the input; `Some(paths)`: `paths` replace it (none:
    /// drop it).
    fn replacement(&mut self, id: InputId) -> Result<Option<Vec<PathBuf>>> {
        let model = &self.res.model;
        if !model.holds_bitcode(id) {
            return Ok(None);
        }
        let input = model.input(id);
        let base = input.path.file_name().map(|n| n.to_string_lossy().into_owned());
        match &input.kind {
            InputKind::Bitcode => match self.native.get(&(id, None)).copied() {
                Some(obj) => {
                    let folder = self.folder()?;
                    let mut paths = Vec::new();
                    if let Some((_, regular)) = self.regular.filter(|r| r.0 == id) {
                        let path = folder.join("wpd-regular-lto.o");
                        std::fs::write(&path, regular).map_err(|e| Error::msg(format!("{}: {e}", path.display())))?;
                        paths.push(path);
                    }
                    let name = base.unwrap_or_else(|| "input.o".into());
                    let path = folder.join(&name);
                    std::fs::write(&path, obj).map_err(|e| Error::msg(format!("{}: {e}", path.display())))?;
                    paths.push(path);
                    Ok(Some(paths))
                }
                None => Ok(Some(Vec::new())),
            },
            InputKind::Archive { .. } => {
                let work = self.folder()?;
                Ok(Some(vec![rebuild_archive(&work, self.res, id, &self.native)?]))
            }
            InputKind::Script { script, opened } => {
                if let Some(unknown) = &script.unknown {
                    return Err(Error::msg(format!(
                        "{}: the linker script names LLVM bitcode and has commands wpd-ld cannot rewrite: {unknown}",
                        input.path.display()
                    )));
                }
                // Every entry the script opened is spelled as an absolute
                // path (the new script lives elsewhere); bitcode is replaced.
                let mut spelled: Vec<Option<Vec<String>>> = Vec::with_capacity(opened.len());
                for o in opened {
                    spelled.push(match o {
                        None => None,
                        Some(i) => match self.replacement(*i)? {
                            Some(paths) => Some(paths.iter().map(|p| p.display().to_string()).collect()),
                            None => Some(vec![absolute(&model.input(*i).path)]),
                        },
                    });
                }
                let text = wpd_link::resolve::script::write(script, |n, _| spelled.get(n).cloned().flatten());
                let path = self.folder()?.join(base.unwrap_or_else(|| "script.ld".into()));
                std::fs::write(&path, text).map_err(|e| Error::msg(format!("{}: {e}", path.display())))?;
                Ok(Some(vec![path]))
            }
            _ => Ok(None),
        }
    }
}

/// `path` made absolute against the working directory.
fn absolute(path: &Path) -> String {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()).display().to_string()
}

/// An archive like the original with the native object of every loaded
/// bitcode member in its place, the bitcode members the link does not load
/// left out, and every other member kept, in the same order (so the real
/// linker extracts the same members), with a symbol index.
fn rebuild_archive(
    work: &Path,
    res: &inputs::ResolvedLink<'_>,
    id: InputId,
    native: &NativeObjects<'_>,
) -> Result<PathBuf> {
    let input = res.model.input(id);
    let shown = input.path.display().to_string();
    let InputKind::Archive { members: infos, .. } = &input.kind else {
        return Err(Error::msg(format!("{shown}: not an archive")));
    };
    let mut members: Vec<(String, &[u8])> = Vec::new();
    for (j, m) in infos.iter().enumerate() {
        let member = MemberId(j as u32);
        let content: &[u8] = if m.kind == LoadedKind::Bitcode {
            match native.get(&(id, Some(member))) {
                Some(obj) => obj,
                // Not loaded: the real linker must not find it either.
                None => continue,
            }
        } else {
            res.source.member_bytes(&input.path, j).ok_or_else(|| Error::at(&shown, "archive changed while linking"))?
        };
        members.push((member_file_name(&m.name, j), content));
    }
    let base = input.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "lib.a".into());
    // In order (duplicate member names kept), with a symbol index and
    // deterministic headers: what `llvm-ar qcsD` writes, without running it.
    wpd_llvm::link::write_archive(&work.join(base), &members)
}

/// The file name a member is written under inside its own directory of the
/// temporary directory: the member name's last path component, which the
/// archiver stores as the rebuilt member's name. A member name is never a
/// path (GNU `ar P` stores `/abs/x.o`, a crafted one `../../x.o`): a name
/// with nothing usable left becomes `member<j>.o`.
fn member_file_name(name: &str, j: usize) -> String {
    let base = name.rsplit('/').next().unwrap_or("");
    if base.is_empty() || base == "." || base == ".." || base.contains('\0') || base.len() > 255 {
        format!("member{j}.o")
    } else {
        base.to_string()
    }
}

/// The real linker's command line: every item in place, bitcode replaced
/// (or dropped, see [`write_natives`]).
fn final_args(link: &LinkArgs, replacements: &[Option<Vec<PathBuf>>]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, item) in link.items.iter().enumerate() {
        match replacements.get(i) {
            Some(Some(paths)) => out.extend(paths.iter().map(|p| p.display().to_string())),
            _ => match item {
                Item::Input { path, .. } => out.push(path.clone()),
                Item::Library { raw, .. } | Item::Pass(raw) => out.extend(raw.iter().cloned()),
            },
        }
    }
    out
}

/// Above this many bytes of arguments the real linker gets them through a
/// response file: well below Linux's smallest `ARG_MAX` (128 KiB), which the
/// environment shares, and below its 128 KiB limit on one argument.
const INLINE_ARGS_MAX: usize = 64 * 1024;

/// Runs the real linker with `argv` and returns its exit status. A long
/// command line (an expanded `@file` of thousands of `-L`, say) goes in a
/// response file in `tmp`, as clang does it, so `exec` cannot fail with
/// E2BIG.
fn run_linker(linker: &RealLinker, argv: &[String], tmp: &Path) -> Result<u8> {
    if linker.in_process {
        let program = linker.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or("ld.lld".into());
        let code = wpd_llvm::link::lld_link(&program, argv)?;
        return Ok(code.clamp(0, 255) as u8);
    }
    spawn_linker(&linker.path, argv, tmp)
}

/// Runs the real linker as its own process; a long command line goes
/// through a response file in `tmp`.
fn spawn_linker(linker: &Path, argv: &[String], tmp: &Path) -> Result<u8> {
    let bytes: usize = argv.iter().map(|a| a.len() + 1).sum();
    let mut cmd = Command::new(linker);
    if bytes > INLINE_ARGS_MAX && argv.iter().all(|a| !a.is_empty()) {
        let rsp = tmp.join("linker.rsp");
        std::fs::write(&rsp, args::response_file_text(argv))
            .map_err(|e| Error::msg(format!("{}: {e}", rsp.display())))?;
        let mut at = std::ffi::OsString::from("@");
        at.push(&rsp);
        cmd.arg(at);
    } else {
        cmd.args(argv);
    }
    let status =
        cmd.status().map_err(|e| Error::msg(format!("cannot run the real linker {}: {e}", linker.display())))?;
    Ok(status.code().unwrap_or(1).clamp(0, 255) as u8)
}

/// wpd-ld's private temporary directory, `wpd-ld-*`: in `$TMPDIR` when it
/// is set; else in `/dev/shm` when that is a tmpfs with room to spare, else
/// in `/tmp`. The objects live there from the end of the backends to the
/// end of the final link, and on tmpfs writing, reading and removing them
/// costs no file system journal: on the parity benchmark's 17-object
/// program, 1.5 ms instead of 4–5 ms. Room to spare: four times the bytes
/// of the bitcode the link loads, plus 256 MiB (a container's default
/// 64 MiB /dev/shm never qualifies).
fn private_temp_dir(res: &inputs::ResolvedLink<'_>) -> Result<tempfile::TempDir> {
    let mut builder = tempfile::Builder::new();
    builder.prefix("wpd-ld-");
    let shm = Path::new("/dev/shm");
    let dir = if std::env::var_os("TMPDIR").is_none() && tmpfs_has_room(shm, res) {
        builder.tempdir_in(shm).ok()
    } else {
        None
    };
    match dir {
        Some(d) => Ok(d),
        None => builder.tempdir().map_err(|e| Error::msg(format!("cannot create a temporary directory: {e}"))),
    }
}

/// `dir` is a tmpfs whose free space can take the link's objects (see
/// [`private_temp_dir`]). The bitcode's size is that of the bytes the
/// resolver read.
fn tmpfs_has_room(dir: &Path, res: &inputs::ResolvedLink<'_>) -> bool {
    const TMPFS_MAGIC: u64 = 0x0102_1994;
    let Ok(fs) = rustix::fs::statfs(dir) else { return false };
    if u64::try_from(fs.f_type).ok() != Some(TMPFS_MAGIC) {
        return false;
    }
    let free = fs.f_bavail.saturating_mul(u64::try_from(fs.f_bsize).unwrap_or(0));
    let model = &res.model;
    let bitcode: u64 = model
        .bitcode()
        .filter_map(|l| {
            let path = &model.input(l.input).path;
            match l.member {
                Some(m) => res.source.member_bytes(path, m.index()),
                None => res.source.bytes(path),
            }
        })
        .map(|b| b.len() as u64)
        .sum();
    free >= bitcode.saturating_mul(4).saturating_add(256 << 20)
}

/// Keeps the temporary directory for --wpd-save-temps (else dropping it
/// removes it).
fn keep_temps(tmp: tempfile::TempDir, save: bool) {
    if save {
        let kept = tmp.keep();
        eprintln!("wpd-ld: temporary files kept in {}", kept.display());
    }
}

/// Profiles the backends read must be readable: a one-line error naming the
/// option now, not LLVM's diagnostic from a backend later.
fn check_profiles(profile: &wpd::backends::codegen::Profile) -> Result<()> {
    let inputs = [
        (profile.sample.as_ref(), "sample-profile"),
        (profile.cs_profile.as_ref().filter(|_| !profile.cs_generate), "cs-profile-path"),
    ];
    for (path, option) in inputs {
        if let Some(p) = path {
            std::fs::File::open(p).map_err(|e| {
                Error::msg(format!("cannot read the profile {} (-plugin-opt={option}=): {e}", p.display()))
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_names_are_never_paths() {
        assert_eq!(member_file_name("answer.o", 0), "answer.o");
        assert_eq!(member_file_name("/tmp/victim/answer.o", 1), "answer.o");
        assert_eq!(member_file_name("../../etc/x.o", 2), "x.o");
        for bad in ["", "/", "..", "a/..", ".", "dir/", "nul\0.o"] {
            assert_eq!(member_file_name(bad, 7), "member7.o", "{bad:?}");
        }
        assert_eq!(member_file_name(&"x".repeat(300), 3), "member3.o");
    }

    #[test]
    fn long_command_lines_go_through_a_response_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("args");
        // A stand-in linker that saves the arguments it gets.
        let script = dir.path().join("linker");
        std::fs::write(&script, format!("#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\n", out.display())).unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let short = vec!["a.o".to_string(), "-o".into(), "x y".into()];
        assert_eq!(spawn_linker(&script, &short, dir.path()).unwrap(), 0);
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "a.o\n-o\nx y\n");
        let long: Vec<String> = (0..20_000).map(|i| format!("-L/some dir/{i}")).collect();
        assert_eq!(spawn_linker(&script, &long, dir.path()).unwrap(), 0);
        let rsp = dir.path().join("linker.rsp");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), format!("@{}\n", rsp.display()));
        assert_eq!(args::split_response(&std::fs::read_to_string(&rsp).unwrap()), long);
    }
}
