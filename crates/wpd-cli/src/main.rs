//! The `wpd` command line: wpd's pipeline one phase at a time (`wpd
//! summarize`, `wpd thin-link`, `wpd backend`, `wpd dump`, `wpd report`),
//! over the `wpd` library (`crates/wpd`).

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use wpd::backends::codegen::CodegenOptions;
use wpd::error::{Error, Result};
use wpd::native::NativeScan;
use wpd::policy::Policy;
use wpd::settings::{LinkSettings, Output};
use wpd::timing::Timings;
use wpd_summary::{Kind, ModuleSummary, Plan};

/// mimalloc serves Rust and, through its exported `malloc`, the LLVM
/// linked in: as in wpd-ld (`linker-shim/src/main.rs` says why and what it
/// measured). This is why the command is a crate of its own: the `wpd`
/// library is also linked into the gold/BFD plugin, which must not define
/// `malloc`.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "wpd", version, about = "Link-time whole-program devirtualizer for C++ (clang ThinLTO)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Summarize bitcode objects and archives into `.wpds` files.
    Summarize {
        /// Bitcode objects (`-flto=thin`) or archives of them.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Output folder (default: beside each input).
        #[arg(short = 'o', long = "output-dir")]
        out_dir: Option<PathBuf>,
        /// Worker threads (default: all cores).
        #[arg(short = 'j', long = "jobs")]
        jobs: Option<usize>,
        /// Print per-phase wall times on stderr.
        #[arg(long)]
        time: bool,
        /// Read and walk every function body, instead of taking the
        /// references of bodies without type tests from clang's summary
        /// index: slower, the same summary; to check an index suspected
        /// wrong.
        #[arg(long)]
        read_all_bodies: bool,
    },
    /// Merge summaries and decide every virtual call slot; writes a plan.
    ThinLink {
        /// Module summaries (`.wpds`), in link order.
        #[arg(required = true)]
        summaries: Vec<PathBuf>,
        /// The plan to write.
        #[arg(short = 'o', long = "output", required = true)]
        out: PathBuf,
        /// Treat public vtables as closed (the user's promise, as lld's
        /// --lto-whole-program-visibility).
        #[arg(long)]
        whole_program_visibility: bool,
        /// The output is a shared library: default-visibility vtables are exported.
        #[arg(long)]
        shared: bool,
        /// Every default-visibility symbol is exported dynamically.
        #[arg(long)]
        export_dynamic: bool,
        /// A symbol referenced from outside the bitcode (native objects,
        /// shared libraries); repeatable. Only with --refs-complete do these
        /// limit liveness.
        #[arg(long = "root", value_name = "SYMBOL")]
        roots: Vec<String>,
        /// The --root list is every outside reference; without it every
        /// externally visible symbol is assumed referenced.
        #[arg(long)]
        refs_complete: bool,
        /// A native object, archive or shared library of the link: scanned
        /// for the classes native code can see (repeatable).
        #[arg(long = "native", value_name = "FILE")]
        natives: Vec<PathBuf>,
        /// Do not look for open hierarchies: trust the visibility as LLVM does.
        #[arg(long)]
        no_validate: bool,
        /// Vtable symbols (glob) never opened by validation.
        #[arg(long = "known-safe", value_name = "GLOB")]
        known_safe: Vec<String>,
        /// Vtable symbols (glob) always treated as open.
        #[arg(long = "open", value_name = "GLOB")]
        open: Vec<String>,
        /// Guarded speculative calls for open or multi-target slots with at
        /// most this many visible targets (0: off).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(0..=2))]
        speculate: u8,
        /// Closed-set dispatch for slots whose complete set has at most
        /// this many targets: `off`, or 2 to 8.
        #[arg(long, default_value_t = wpd::DEFAULT_CLOSED_SET, value_parser = closed_set_arg)]
        closed_set: u8,
        /// Keep every vtable slot (no dead-slot elimination).
        #[arg(long)]
        no_dead_slots: bool,
        /// Worker threads for reading, merging and deciding (the plan is the same whatever the count).
        #[arg(short = 'j', long = "jobs")]
        jobs: Option<usize>,
        /// Print one remark per devirtualized call.
        #[arg(long)]
        remarks: bool,
        /// Print per-phase wall times on stderr.
        #[arg(long)]
        time: bool,
    },
    /// Apply a plan to one bitcode object and emit a native object; or
    /// (`--link-options`) run one job of a distributed link.
    Backend {
        /// The bitcode object (as summarized for the plan), or with
        /// --link-options a module (`<k>.bc`) an index-only link wrote.
        input: PathBuf,
        /// The plan from `wpd thin-link`.
        #[arg(long, required_unless_present = "link_options", conflicts_with = "link_options")]
        plan: Option<PathBuf>,
        /// A distributed link's job (`wpd-ld --wpd-index-only=DIR`; its
        /// jobs.json has the command): the link's backend options
        /// (`backend-options.json`).
        #[arg(long, value_name = "FILE", conflicts_with_all = ["opt_level", "mcpu", "verify", "split_dwarf_file"])]
        link_options: Option<PathBuf>,
        /// With --link-options: the module's task in the link (its position
        /// plus one), which names its split DWARF file.
        #[arg(long, default_value_t = 1, requires = "link_options")]
        task: u32,
        /// The native object to write.
        #[arg(short = 'o', long = "output", required = true)]
        out: PathBuf,
        /// Optimization level of the post-link pipeline (0-3).
        #[arg(short = 'O', long = "opt-level", default_value_t = 2, value_parser = clap::value_parser!(u8).range(0..=3))]
        opt_level: u8,
        /// Target CPU.
        #[arg(long, default_value = "x86-64")]
        mcpu: String,
        /// Run the LLVM verifier on the rewritten module.
        #[arg(long)]
        verify: bool,
        /// Split DWARF: write the debug information to this `.dwo` file.
        #[arg(long, value_name = "FILE")]
        split_dwarf_file: Option<PathBuf>,
        /// Print per-phase wall times on stderr.
        #[arg(long)]
        time: bool,
    },
    /// Print a `.wpds` summary or `.wpdp` plan as canonical JSON.
    Dump {
        /// The file to print.
        file: PathBuf,
    },
    /// Render a link report (`--wpd-report=FILE.json`), or compare two
    /// (`wpd report diff OLD.json NEW.json`, the CI gate).
    #[command(args_conflicts_with_subcommands = true)]
    Report {
        #[command(subcommand)]
        diff: Option<ReportCommand>,
        /// The report to render.
        file: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "text")]
        format: wpd::report::render::Format,
    },
}

#[derive(Subcommand)]
enum ReportCommand {
    /// What changed between two builds' reports. Exit status: 0, 1 when a
    /// gate trips (each tripped gate is printed), 2 on bad input.
    Diff {
        old: PathBuf,
        new: PathBuf,
        #[arg(long, value_enum, default_value = "text")]
        format: wpd::report::render::Format,
        /// Fail (exit 1) when: fewer-devirtualized, more-indirect,
        /// text-growth=PCT, size-growth=PCT (repeatable).
        #[arg(long = "fail-on", value_name = "GATE")]
        fail_on: Vec<String>,
    },
}

/// `--closed-set`'s value: `off`, or 2 to 8 targets.
fn closed_set_arg(v: &str) -> std::result::Result<u8, String> {
    wpd::parse_closed_set(v).ok_or_else(|| format!("invalid value {v:?} (off, or 2 to 8)"))
}

/// Writes `text` to stdout. A reader that closed the pipe early (`wpd dump
/// X | head`) ends the program quietly, as `cat` does; another write error
/// is a one-line error.
fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("wpd: error: cannot write to stdout: {e}");
        std::process::exit(1);
    }
}

fn main() -> ExitCode {
    wpd_llvm::Context::exit_on_fatal_errors("wpd");
    // wpd's own LLVM options, before any LLVM work (a distributed job adds
    // the link's -mllvm options later).
    if let Err(e) = wpd_llvm::Context::set_llvm_options(&[]) {
        eprintln!("wpd: error: {e}");
        return ExitCode::FAILURE;
    }
    let cli = Cli::parse();
    if let Command::Report { diff, file, format } = cli.command {
        return report(diff, file, format);
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wpd: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Summarize { inputs, out_dir, jobs, time, read_all_bodies } => {
            let bodies = if read_all_bodies { wpd::summarize::Bodies::All } else { wpd::summarize::Bodies::Needed };
            summarize(&inputs, out_dir, jobs, time, bodies)
        }
        Command::ThinLink {
            summaries,
            out,
            whole_program_visibility,
            shared,
            export_dynamic,
            roots,
            refs_complete,
            natives,
            no_validate,
            known_safe,
            open,
            speculate,
            closed_set,
            no_dead_slots,
            jobs,
            remarks,
            time,
        } => {
            let mut scan = NativeScan::default();
            for n in &natives {
                let bytes = std::fs::read(n).map_err(|e| Error::at(n.display().to_string(), e.to_string()))?;
                scan.scan(&bytes, &n.display().to_string())?;
            }
            let settings = LinkSettings {
                whole_program_visibility,
                validate: !no_validate,
                known_safe,
                open,
                speculate,
                closed_set,
                dead_slots: !no_dead_slots,
                ..LinkSettings::default()
            };
            let mut external: std::collections::BTreeSet<String> = roots.into_iter().collect();
            external.extend(scan.refs.iter().cloned());
            let output = Output { shared, export_dynamic, ..Output::default() };
            let policy = settings.policy_without_model(&scan, refs_complete.then_some(external), &output);
            thin_link(&summaries, &out, &policy, jobs, remarks, time)
        }
        Command::Backend { input, link_options: Some(options), task, out, time, .. } => {
            let mut timings = Timings::default();
            timings.phase("backend", || wpd::backends::distributed::run_job(&input, &options, task, &out))?;
            if time {
                eprint!("{}", timings.render());
            }
            Ok(())
        }
        Command::Backend { input, plan: Some(plan), out, opt_level, mcpu, verify, split_dwarf_file, time, .. } => {
            let settings = LinkSettings { opt_level, cpu: mcpu, ..LinkSettings::default() };
            // One module on its own, position-independent (it may go into
            // any output); the verifier when asked, or in a debug build.
            let opts = CodegenOptions {
                verify: verify || CodegenOptions::default().verify,
                split_dwarf_file,
                ..settings.codegen(&Output { pic: true, ..Output::default() })
            };
            backend(&input, &plan, &out, &opts, time)
        }
        Command::Backend { .. } => Err(Error::msg("wpd backend: give --plan or --link-options")),
        Command::Dump { file } => dump(&file),
        Command::Report { .. } => unreachable!("handled in main"),
    }
}

/// `wpd report`: 0 on success, 1 when a diff gate trips, 2 on bad input.
fn report(diff: Option<ReportCommand>, file: Option<PathBuf>, format: wpd::report::render::Format) -> ExitCode {
    use wpd::report::{diff as d, render, view::Report};
    let bad = |e: Error| {
        eprintln!("wpd: error: {e}");
        ExitCode::from(2)
    };
    match diff {
        Some(ReportCommand::Diff { old, new, format, fail_on }) => {
            let gates: Result<Vec<d::Gate>> = fail_on.iter().map(|g| d::Gate::parse(g)).collect();
            let gates = match gates {
                Ok(g) => g,
                Err(e) => return bad(e),
            };
            let (old, new) = match (Report::read(&old), Report::read(&new)) {
                (Ok(o), Ok(n)) => (o, n),
                (Err(e), _) | (_, Err(e)) => return bad(e),
            };
            let result = d::diff(&old, &new, &gates);
            emit(&d::render(&result, format));
            for t in &result.tripped {
                eprintln!("wpd: gate tripped: {t}");
            }
            if result.tripped.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) }
        }
        None => {
            let Some(file) = file else { return bad(Error::msg("wpd report: give a report file, or `diff OLD NEW`")) };
            match Report::read(&file) {
                Ok(r) => {
                    emit(&render::render(&r, format));
                    ExitCode::SUCCESS
                }
                Err(e) => bad(e),
            }
        }
    }
}

fn summarize(
    inputs: &[PathBuf],
    out_dir: Option<PathBuf>,
    jobs: Option<usize>,
    time: bool,
    bodies: wpd::summarize::Bodies,
) -> Result<()> {
    let mut timings = Timings::default();
    if let Some(dir) = &out_dir {
        std::fs::create_dir_all(dir).map_err(|e| Error::at(dir.display().to_string(), e.to_string()))?;
    }
    // Read, summarized and written input by input (one phase): see
    // `summarize_to_files` for why nothing is in place until all are done.
    timings.phase("summarize", || wpd::summarize_to_files(inputs, out_dir.as_deref(), jobs, bodies))?;
    if time {
        eprint!("{}", timings.render());
    }
    Ok(())
}

fn thin_link(
    paths: &[PathBuf],
    out: &std::path::Path,
    policy: &Policy,
    jobs: Option<usize>,
    remarks: bool,
    time: bool,
) -> Result<()> {
    let mut timings = Timings::default();
    let summaries = timings.phase("read", || wpd::read_summaries(paths, jobs))?;
    // The thin link in its two steps, timed apart for --time: merging the
    // summaries (symbols, liveness, type id index), then deciding.
    // (Both split their work over `jobs` threads.)
    let link = timings
        .phase("hierarchy", || wpd::with_jobs(jobs, || wpd::hierarchy::Hierarchy::new(&summaries, &policy.facts)))?;
    let plan = timings.phase("decide", || wpd::with_jobs(jobs, || wpd::decide::decide(&link, policy)))?;
    timings.phase("write", || wpd_summary::write_file_atomic(Kind::Plan, &plan, out))?;
    if remarks {
        for r in wpd::report::planned_remarks(&summaries, &plan, policy) {
            emit(&format!("{r}\n"));
        }
    }
    if time {
        eprint!("{}", timings.render());
    }
    // The summaries, the merged hierarchy and the plan are millions of
    // small allocations on a large link; freeing them one by one just
    // before the process ends took longer than the plan's write. The
    // process's exit returns the memory at once (lld exits the same way).
    std::mem::forget(plan);
    std::mem::forget(link);
    std::mem::forget(summaries);
    Ok(())
}

fn backend(
    input: &std::path::Path,
    plan: &std::path::Path,
    out: &std::path::Path,
    opts: &CodegenOptions,
    time: bool,
) -> Result<()> {
    let mut timings = Timings::default();
    let plan: Plan = timings.phase("read", || wpd_summary::read_file(Kind::Plan, plan))?;
    let inputs = wpd::input::read_bitcode_inputs(input)?;
    let (Some(input), None) = (inputs.first().filter(|i| i.member.is_none()), inputs.get(1)) else {
        return Err(Error::at(input.display().to_string(), "wpd backend takes one bitcode object, not an archive"));
    };
    let (object, _) = timings.phase("backend", || wpd::backends::backend(input, &plan, opts))?;
    timings.phase("write", || wpd_summary::container::write_bytes_atomic(&object, out))?;
    if time {
        eprint!("{}", timings.render());
    }
    Ok(())
}

/// Dumps a summary or a plan, whichever the file holds.
fn dump(file: &std::path::Path) -> Result<()> {
    use wpd_summary::container::{MappedFile, decode};
    // Opened once: a FIFO (`<(...)`) can be read only once.
    let bytes = MappedFile::open(file).map_err(|e| Error::at(file.display().to_string(), e.to_string()))?;
    let json = if bytes.get(..8).is_some_and(|h| h.ends_with(b"PLAN")) {
        decode::<Plan>(Kind::Plan, &bytes, file)?.to_json()
    } else if bytes.is_empty() {
        return Err(Error::at(file.display().to_string(), "empty file, not a wpd summary or plan"));
    } else {
        decode::<ModuleSummary>(Kind::Summary, &bytes, file)?.to_json()
    };
    let text = serde_json::to_string_pretty(&json).map_err(|e| Error::msg(e.to_string()))?;
    emit(&format!("{text}\n"));
    Ok(())
}
