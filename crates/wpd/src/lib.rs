//! wpd: a link-time whole-program devirtualizer for C++.
//!
//! The pipeline (docs/design.md); the phases that need LLVM are modules of
//! this crate, the thin link is the LLVM-free crate `wpd-link`:
//!
//! ```text
//! resolve     wpd_link::resolve: which inputs and members the linker links (wpd-ld)
//! input       bitcode objects / archives  ──► BitcodeInput (bytes + identity)
//! summarize   BitcodeInput ──► ModuleSummary (.wpds)      parallel, one LLVM context per task
//! thin link   wpd_link::{hierarchy, policy, decide, layout}: summaries ──► Plan (.wpdp)
//! backend     bitcode + Plan ──► rewrite/ (promote, single_impl, …, type_tests), and what it did to
//!             every call site; then either ThinLTO bitcode ──► thinlto (LLVM's thin link: prevailing
//!             copies, dead stripping, internalization, import; its backends) ──► ELF objects (wpd-ld),
//!             or codegen of the one module ──► ELF object (`wpd backend`)
//! report      backend outcomes + Plan ──► remarks and the JSON report
//! ```
//!
//! [`link`] is the one entry of both front ends (wpd-ld and the linker
//! plugin): settings and a link model in, objects out, through
//! [`devirtualize_and_compile`] (summarize → thin link → backend); the CLI
//! runs the phases one at a time.

pub mod backends;
pub mod demangle;
pub mod error;
pub mod final_link;
pub mod input;
pub mod link_line;
pub mod progress;
pub mod report;
pub mod rewrite;
pub mod settings;
pub mod summarize;
pub mod timing;

pub use object;
/// The thin link's modules, re-exported where the pipeline's users look for
/// them; they live in the LLVM-free crate `wpd-link`.
pub use wpd_link::{decide, hierarchy, layout, native, policy};

use backends::{cache, codegen, thinlto};
use error::{Error, ErrorKind, Result};
use input::BitcodeInput;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use timing::Timings;
use wpd_summary::{ModuleIdx, ModuleSummary, Plan};

/// A worker count as the linkers spell it (`--thinlto-jobs=`,
/// `-plugin-opt=jobs=`): a positive number, `all` for every core, or, as
/// lld and LLVMgold take them, `0` or nothing for the default (`None`: one
/// per core; clang's `-flto-jobs=0` passes `jobs=0`).
pub fn parse_jobs(v: &str) -> Result<Option<usize>> {
    match v {
        "all" => Ok(Some(std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))),
        "" | "0" => Ok(None),
        _ => v.parse::<usize>().map(Some).map_err(|_| Error::msg(format!("invalid job count '{v}'"))),
    }
}

/// The most targets of a closed-set dispatch by default: a slot whose
/// complete set has more keeps its indirect call (docs/design.md,
/// "Closed-set dispatch"). Four: Richards's `Task::run` (4 targets, 39.5 M
/// calls) runs 0.979-0.985x lld's CPU time dispatched against 0.994-0.996x
/// left indirect, although it executes 1.078x the instructions (a compare
/// chain the branch predictor follows costs less than the indirect call);
/// no bench program ran slower with 4 than with 3 (docs/performance.md,
/// "A fourth target"). The code budget and the 6-comparison cap still stop
/// the slots whose dispatch would cost more than it saves.
pub const DEFAULT_CLOSED_SET: u8 = 4;

/// The most targets of a closed-set dispatch (`--wpd-closed-set=`,
/// `-plugin-opt=wpd-closed-set=`): `off` (or 0), or 2 to 8.
pub fn parse_closed_set(v: &str) -> Option<u8> {
    match v {
        "off" | "0" => Some(0),
        _ => v.parse::<u8>().ok().filter(|n| (2..=8).contains(n)),
    }
}

/// The most targets per guarded speculative call (`--wpd-speculate=`,
/// `-plugin-opt=wpd-speculate=`): `off` (or 0), 1 or 2.
pub fn parse_speculate(v: &str) -> Option<u8> {
    match v {
        "off" | "0" => Some(0),
        "1" => Some(1),
        "2" => Some(2),
        _ => None,
    }
}

/// The worker pools of [`with_jobs`], one per thread count.
type Pools = Vec<(Option<usize>, std::sync::Arc<rayon::ThreadPool>)>;
static POOLS: std::sync::Mutex<Pools> = std::sync::Mutex::new(Vec::new());

/// Runs `f` on a rayon pool of `jobs` threads (all cores when `None`).
///
/// The pool of a thread count is made once and kept until
/// [`release_pools`]: the phases of a link (summarize, thin link, rewrite)
/// each run on it, so the threads (and the memory their allocator holds for
/// them) carry over from one phase to the next instead of being started and
/// faulted in again.
pub fn with_jobs<T: Send>(jobs: Option<usize>, f: impl FnOnce() -> T + Send) -> Result<T> {
    let pool = {
        let mut pools = POOLS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match pools.iter().find(|(j, _)| *j == jobs) {
            Some((_, pool)) => pool.clone(),
            None => {
                let mut builder = rayon::ThreadPoolBuilder::new();
                if let Some(n) = jobs {
                    builder = builder.num_threads(n.max(1));
                }
                let pool = std::sync::Arc::new(
                    builder.build().map_err(|e| Error::msg(format!("cannot start worker threads: {e}")))?,
                );
                pools.push((jobs, pool.clone()));
                pool
            }
        }
    };
    Ok(pool.install(f))
}

/// Lets the threads of [`with_jobs`]'s pools end (a pool still in use ends
/// when its last user is done; the next [`with_jobs`] makes a new one).
///
/// A link calls it when its last phase on the pool is done: its backends
/// run on LLVM's own threads, and the pool's would sit idle to the end of
/// the link with their allocator's memory. wpd-ld's mimalloc gives a
/// thread's freed pages back to the system only when that thread allocates
/// or frees again, or ends: protoc's link peaked at 209–213 MB with the
/// idle threads kept and 181–183 MB before they were (docs/performance.md,
/// "The idle pool held 27–35 MB").
pub fn release_pools() {
    POOLS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clear();
}

/// Runs `f` on every input on a pool of `jobs` threads, ticking `progress`
/// through `phase`; results in input order, the first failing input (in
/// that order) is the error.
///
/// Every input is a task of its own that an idle thread can take. Rayon's
/// default splits the inputs into a few runs of neighbours (four on two
/// threads) that one thread then works through alone, and nothing can be
/// taken from a run once it started: on Box2D's 46 modules the summaries
/// of the last run (a quarter of the program, ~1 ms each) were made one
/// after the other on one core while the other had finished its share.
///
/// The inputs are taken largest first (by bytes; ties in input order), so
/// that what is left when a thread runs out of work is small: in input
/// order, libsass's largest module (a tenth of its bitcode) could be the
/// last one a thread rewrote while the other waited.
fn each_input<T: Send>(
    inputs: &[BitcodeInput],
    jobs: Option<usize>,
    progress: &progress::Progress,
    phase: &'static str,
    f: impl Fn(usize, &BitcodeInput) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    progress.phase(phase, inputs.len());
    let mut order: Vec<usize> = (0..inputs.len()).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(inputs[k].bytes.len()));
    let mut done: Vec<(usize, Result<T>)> = with_jobs(jobs, || {
        order
            .par_iter()
            .with_max_len(1)
            .map(|&k| {
                let r = f(k, &inputs[k]);
                progress.tick();
                (k, r)
            })
            .collect()
    })?;
    done.sort_unstable_by_key(|(k, _)| *k);
    done.into_iter().map(|(_, r)| r).collect()
}

/// What a front end gives the pipeline: the bitcode the link loads, in
/// load order; the link model (wpd-ld's resolution of its command line, or
/// the linker's own resolutions through the plugin) and the native side it
/// saw; what the link asks of wpd and what it makes.
pub struct LinkRequest<'a> {
    pub modules: &'a [BitcodeInput],
    /// Summaries made before the link (wpd-ld's helper thread).
    pub ahead: &'a SummariesAhead,
    pub settings: &'a settings::LinkSettings,
    pub model: &'a wpd_link::LinkModel,
    pub native: &'a native::NativeScan,
    pub output: settings::Output,
    pub backends: Backends<'a>,
    pub cache: Option<&'a cache::Cache>,
    pub progress: &'a progress::Progress,
}

/// A link's result, with what it was decided under (for reports and a
/// second link of the same summaries).
pub struct Linked<'a> {
    pub out: LinkOutput,
    pub policy: policy::Policy,
    pub codegen: codegen::CodegenOptions,
    /// The symbol resolutions LLVM's ThinLTO got.
    pub symbols: wpd_link::lto::LtoSymbols<'a>,
}

/// The one pipeline entry of every front end (wpd-ld, the linker plugin):
/// the policy and the code generation options from the settings, LLVM's
/// symbol resolutions from the link model, then summarize, thin link,
/// rewrite and backends ([`devirtualize_and_compile`]). The front end only
/// supplies the model and places the objects that come back.
pub fn link<'a>(req: &LinkRequest<'a>, timings: &mut Timings) -> Result<Linked<'a>> {
    let mut policy = req.settings.policy(req.model, req.native, &req.output);
    if let Backends::ClangIndexes(_) = req.backends {
        // Clang's backends compile the modules as clang wrote them: what
        // needs a rewritten module is not planned, so that the report's
        // counts are what the programs get.
        policy.speculate = 0;
        policy.closed_set = 0;
        policy.dead_slots = false;
    }
    let codegen = req.settings.codegen(&req.output);
    let symbols = wpd_link::lto::LtoSymbols::new(req.model, req.output.lto());
    let out = devirtualize_and_compile(
        req.modules,
        req.ahead,
        &policy,
        &codegen,
        &symbols,
        req.backends,
        req.settings.jobs,
        req.cache,
        timings,
        req.progress,
    )?;
    Ok(Linked { out, policy, codegen, symbols })
}

/// Where the link's backends run.
#[derive(Clone, Copy, Debug)]
pub enum Backends<'a> {
    /// In this process: [`LinkOutput::objects`] holds the native objects.
    InProcess,
    /// Distributed ThinLTO: the thin link writes every module, ready for
    /// optimization and code generation, into this directory
    /// ([`thinlto::write_job_modules`], named by [`LinkOutput::job_modules`])
    /// and nothing is compiled.
    IndexOnly(&'a Path),
    /// lld's `--thinlto-index-only`: the thin link writes each input's
    /// index file for clang's own backends
    /// ([`backends::clang_indexes`]; [`LinkOutput::index_files`]), and
    /// nothing is rewritten or compiled but LLVM's regular LTO module.
    ClangIndexes(&'a backends::clang_indexes::ClangIndexes),
}

/// The whole link-time job on bitcode already read: summarize every module,
/// thin-link, apply the plan to every module, and compile them through
/// LLVM's ThinLTO with the link's symbol resolutions (`symbols`), here or
/// (`backends`) as distributed jobs. Objects come back in input order,
/// byte-identical whatever `jobs` is. (`wpd backend --plan` compiles one
/// module on its own: [`backends::backend`].)
#[allow(clippy::too_many_arguments)]
pub fn devirtualize_and_compile(
    inputs: &[BitcodeInput],
    ahead: &SummariesAhead,
    policy: &policy::Policy,
    codegen: &codegen::CodegenOptions,
    symbols: &wpd_link::lto::LtoSymbols<'_>,
    backends: Backends<'_>,
    jobs: Option<usize>,
    cache: Option<&cache::Cache>,
    timings: &mut Timings,
    progress: &progress::Progress,
) -> Result<LinkOutput> {
    let summaries = timings.phase("summarize", || {
        each_input(inputs, jobs, progress, "summarize", |_, i| match (ahead.take_for(i), cache) {
            (Some(s), _) => Ok(s),
            (None, Some(c)) => c.summary(i, || summarize::summarize(i)),
            (None, None) => summarize::summarize(i),
        })
    })?;
    compile_summarized(inputs, summaries, policy, codegen, symbols, backends, jobs, cache, timings, progress)
}

/// Summaries made before [`devirtualize_and_compile`] runs (wpd-ld makes
/// them on an idle core while it resolves the link line), by the content
/// hash of the module they summarize (the one the summary records). A
/// summary depends on the module's bytes only, not on its name (the cache
/// relies on this too): one made from the same bytes serves, with the
/// input's identity put in. Each is handed over once ([`SummariesAhead::take_for`]),
/// so that the link's summaries are not held twice through its backends.
#[derive(Debug, Default)]
pub struct SummariesAhead(std::sync::Mutex<std::collections::HashMap<String, ModuleSummary>>);

impl SummariesAhead {
    fn summaries(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, ModuleSummary>> {
        // A summarizing thread that panicked left the map as it was.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn insert(&mut self, summary: ModuleSummary) {
        let summaries = self.0.get_mut().unwrap_or_else(|e| e.into_inner());
        summaries.insert(summary.module.hash.clone(), summary);
    }

    pub fn is_empty(&self) -> bool {
        self.summaries().is_empty()
    }

    /// The summary of `input`'s bytes, named as `input`, taken out: a
    /// second input of the same bytes (the same object twice on a line) is
    /// summarized again.
    pub fn take_for(&self, input: &BitcodeInput) -> Option<ModuleSummary> {
        if self.is_empty() {
            return None;
        }
        // Hashed outside the lock: the summarize phase's threads all ask.
        let hash = input.content_hash();
        self.summaries().remove(&hash).map(|s| input.rename(s))
    }
}

/// [`devirtualize_and_compile`] from the summaries on: thin-link under
/// `policy`, apply the plan and compile. (The same summaries serve another
/// policy, e.g. the link without devirtualization of a size baseline.)
#[allow(clippy::too_many_arguments)]
pub fn compile_summarized(
    inputs: &[BitcodeInput],
    summaries: Vec<ModuleSummary>,
    policy: &policy::Policy,
    codegen: &codegen::CodegenOptions,
    symbols: &wpd_link::lto::LtoSymbols<'_>,
    backends: Backends<'_>,
    jobs: Option<usize>,
    cache: Option<&cache::Cache>,
    timings: &mut Timings,
    progress: &progress::Progress,
) -> Result<LinkOutput> {
    let mut plan = timings.phase("thin-link", || with_jobs(jobs, || thin_link(&summaries, policy)))?;
    if let Some(dir) = &codegen.dwo_dir {
        std::fs::create_dir_all(dir).map_err(|e| {
            Error::at(dir.display().to_string(), format!("cannot create the split DWARF directory: {e}"))
        })?;
    }
    let job_dir = match backends {
        Backends::InProcess => None,
        Backends::IndexOnly(dir) => Some(dir),
        Backends::ClangIndexes(opts) => {
            return write_clang_indexes(inputs, summaries, plan, codegen, symbols, opts, jobs, timings, progress);
        }
    };
    let in_process = job_dir.is_none();
    // What each input's bitcode holds does not depend on the plan: read
    // once, whether the plan is made once or twice (below).
    let layouts = timings.phase("rewrite", || {
        each_input(inputs, jobs, progress, "rewrite", |_, i| {
            wpd_llvm::thinlto_layout(&i.bytes, &i.name)
                .map_err(|e| Error::at(&i.name, format!("invalid bitcode: {}", e.message)))
        })
    })?;
    let split_flag = backends::link_split_flag(&layouts);
    let rewrite = |plan: &Plan| -> Result<Vec<backends::Rewritten>> {
        let plan_hash = match cache {
            Some(_) => Some(cache::plan_hash(plan)?),
            None => None,
        };
        each_input(inputs, jobs, progress, "rewrite", |k, i| {
            let index = backends::planned_index(plan, &summaries[k], ModuleIdx::new(k))?;
            // Modules the plan leaves alone go to ThinLTO as they are.
            let apart = backends::split_apart(i, in_process, split_flag);
            if let Some(layout) = layouts[k].filter(|l| l.split_flag == split_flag)
                && let Some(stats) = backends::passthrough(layout, &summaries[k], plan, index, apart)
                && let Some(as_is) = backends::unrewritten(i, layout, stats)?
            {
                return Ok(as_is);
            }
            let make = || backends::rewrite_to_bitcode(i, &summaries[k], plan, index, codegen.verify, split_flag);
            match (cache, plan_hash) {
                (Some(c), Some(h)) => c.rewrite(i, &summaries[k], h, index, codegen.verify, split_flag, make),
                _ => make(),
            }
        })
    };
    let mut rewritten = match timings.phase("rewrite", || rewrite(&plan)) {
        // A call the thin link took for one that loads no slot stayed
        // indirect (a rewrite LLVM refused: the check in `rewrite::module`),
        // so a slot the plan made dead may still be read. Dead slots are
        // the only decisions that depend on every call being rewritten as
        // planned: the link planned again without them is sound, and the
        // call is counted among the plan's mismatches.
        Err(e) if e.kind == ErrorKind::DeadSlotStillRead && !plan.dead_slots.is_empty() => {
            eprintln!("wpd: warning: {e}; linking without dead slots instead");
            let without = policy::Policy { dead_slots: false, ..policy.clone() };
            plan = timings.phase("thin-link", || with_jobs(jobs, || thin_link(&summaries, &without)))?;
            plan.dead_slots_off = Some(format!("a call planned to load no slot stayed indirect: {e}"));
            timings.phase("rewrite", || rewrite(&plan))?
        }
        r => r?,
    };
    // The backends run on LLVM's threads: the pool's threads end, and the
    // memory their allocator holds for them goes with them.
    release_pools();
    // The backends read a rewritten module's new bitcode, not its input's:
    // those pages of the mapped inputs can leave memory.
    for (input, r) in inputs.iter().zip(&rewritten) {
        if r.bitcode.is_some() {
            input.bytes.release();
        }
    }
    let (natives, job_modules, summaries) = match job_dir {
        None => {
            // What the rewrite did to each call site is read again only
            // once the backends are done: it waits encoded with the
            // summaries (`backends::shelf`).
            let calls = rewritten.iter_mut().map(|r| std::mem::take(&mut r.stats.calls)).collect();
            let kept = backends::shelf::Kept { summaries, calls };
            let (natives, kept) = timings.phase("backend", || {
                thinlto::compile(inputs, &rewritten, kept, symbols, codegen, jobs, cache, progress)
            })?;
            for (r, calls) in rewritten.iter_mut().zip(kept.calls) {
                r.stats.calls = calls;
            }
            (natives, Vec::new(), kept.summaries)
        }
        Some(dir) => {
            let (modules, prevailing) = timings.phase("lto-thin-link", || {
                thinlto::write_job_modules(inputs, &rewritten, &summaries, symbols, codegen, jobs, dir, progress)
            })?;
            (thinlto::Natives { prevailing, ..thinlto::Natives::default() }, modules, summaries)
        }
    };
    let stats: Vec<backends::BackendStats> = rewritten.into_iter().map(|r| r.stats).collect();
    progress.finish();
    // Calls were rewritten to load bytes beside this vtable: a layout that
    // no module applied would make them read whatever lies there.
    let rebuilt: std::collections::BTreeSet<u32> =
        stats.iter().flat_map(|s| s.layouts_rebuilt.iter().copied()).collect();
    if let Some((_, l)) = plan.layouts.iter().enumerate().find(|(i, _)| !rebuilt.contains(&(*i as u32))) {
        return Err(Error::msg(format!(
            "vtable {} was laid out for virtual constant propagation, but no module of the link defines it",
            l.symbol
        )));
    }
    Ok(LinkOutput { summaries, plan, natives, job_modules, stats, index_files: None })
}

/// [`Backends::ClangIndexes`]: after the thin link, the index files for
/// clang's backends instead of rewritten modules.
#[allow(clippy::too_many_arguments)]
fn write_clang_indexes(
    inputs: &[BitcodeInput],
    summaries: Vec<ModuleSummary>,
    plan: Plan,
    codegen: &codegen::CodegenOptions,
    symbols: &wpd_link::lto::LtoSymbols<'_>,
    opts: &backends::clang_indexes::ClangIndexes,
    jobs: Option<usize>,
    timings: &mut Timings,
    progress: &progress::Progress,
) -> Result<LinkOutput> {
    let files = timings.phase("lto-thin-link", || {
        backends::clang_indexes::write(inputs, &summaries, &plan, symbols, codegen, opts, jobs)
    })?;
    progress.finish();
    Ok(LinkOutput {
        summaries,
        plan,
        natives: thinlto::Natives::default(),
        job_modules: Vec::new(),
        stats: Vec::new(),
        index_files: Some(files),
    })
}

/// What [`devirtualize_and_compile`] produces.
pub struct LinkOutput {
    pub summaries: Vec<ModuleSummary>,
    pub plan: Plan,
    /// The native objects, one per input in input order and one more
    /// beside each split unit kept in two (none when the backends are
    /// distributed).
    pub natives: thinlto::Natives,
    /// Distributed backends: the file in the index directory that each
    /// input's job compiles, in input order.
    pub job_modules: Vec<backends::distributed::JobModule>,
    pub stats: Vec<backends::BackendStats>,
    /// [`Backends::ClangIndexes`]: what was written, and what of the plan
    /// it carries (`stats` is empty: no module was rewritten).
    pub index_files: Option<backends::clang_indexes::IndexFiles>,
}

/// `wpd summarize`: every input (a bitcode file, or each bitcode member of
/// an archive) read, summarized and encoded in turn, on a pool of `jobs`
/// threads, its summary written to a temporary file beside where
/// [`summary_path`] puts it; so memory holds one input per thread, however
/// many there are. Only once every input has been summarized are the files
/// renamed into place; a failure (the first failing input in input order)
/// removes them all, so it leaves no summary behind. Returns how many
/// summaries were written.
pub fn summarize_to_files(
    paths: &[PathBuf],
    out_dir: Option<&Path>,
    jobs: Option<usize>,
    bodies: summarize::Bodies,
) -> Result<usize> {
    let one = |path: &PathBuf| -> Result<Vec<(String, wpd_summary::container::Staged)>> {
        let mut out = Vec::new();
        for input in input::read_bitcode_inputs(path)? {
            let summary = summarize::summarize_reading(&input, bodies)?;
            let dest = summary_path(&summary, out_dir);
            let bytes = wpd_summary::container::encode(wpd_summary::Kind::Summary, &summary)
                .map_err(|e| Error::at(dest.display().to_string(), e.message))?;
            out.push((input.name, wpd_summary::container::stage_bytes(&bytes, &dest)?));
        }
        Ok(out)
    };
    let per_path: Vec<Result<Vec<_>>> = with_jobs(jobs, || paths.par_iter().with_max_len(1).map(one).collect())?;
    let mut staged = Vec::new();
    for r in per_path {
        staged.extend(r?);
    }
    let mut seen = std::collections::HashSet::new();
    for (name, s) in &staged {
        if !seen.insert(s.dest().to_path_buf()) {
            return Err(Error::at(
                name,
                format!("another input also maps to {}; use separate -o folders", s.dest().display()),
            ));
        }
    }
    let written = staged.len();
    for (_, s) in staged {
        s.commit()?;
    }
    Ok(written)
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

/// The thin link: merge the summaries, apply the policy, decide every slot.
pub fn thin_link(summaries: &[ModuleSummary], policy: &policy::Policy) -> Plan {
    wpd_link::thin_link(summaries, policy)
}

/// Reads summaries (memory-mapped, in parallel), in the order given. Two
/// summaries of one module (the same input named twice, as a link line
/// cannot name one object twice without its symbols clashing) are an error
/// naming both files.
pub fn read_summaries(paths: &[PathBuf], jobs: Option<usize>) -> Result<Vec<ModuleSummary>> {
    let results: Vec<Result<ModuleSummary>> = with_jobs(jobs, || {
        paths.par_iter().map(|p| Ok(wpd_summary::read_file(wpd_summary::Kind::Summary, p)?)).collect()
    })?;
    let summaries: Vec<ModuleSummary> = results.into_iter().collect::<Result<_>>()?;
    let mut seen: HashMap<(&str, &str), &Path> = HashMap::with_capacity(summaries.len());
    for (summary, path) in summaries.iter().zip(paths) {
        let module = &summary.module;
        if let Some(first) = seen.insert((&module.name, &module.hash), path) {
            return Err(Error::at(
                path.display().to_string(),
                format!("summarizes {}, as {} does: a module given twice", module.name, first.display()),
            ));
        }
    }
    Ok(summaries)
}

/// Real modules for the crate's unit tests.
#[cfg(test)]
pub(crate) mod test_support {
    use crate::input::{BitcodeInput, SplitPlacement};
    use std::path::Path;

    /// `source` compiled by clang++-19 as the bench compiles C++
    /// (`-O2 -flto=thin -fwhole-program-vtables`) in `dir`; its bytes, and
    /// the input of a file named `name` holding them.
    pub fn thin_module(dir: &Path, name: &str, source: &str) -> (Vec<u8>, BitcodeInput) {
        let src = dir.join(format!("{name}.cpp"));
        std::fs::write(&src, source).unwrap();
        let obj = dir.join(name);
        let status = std::process::Command::new("clang++-19")
            .args(["-O2", "-flto=thin", "-fwhole-program-vtables", "-c"])
            .arg(&src)
            .arg("-o")
            .arg(&obj)
            .status()
            .expect("clang++-19 runs");
        assert!(status.success());
        let bytes = std::fs::read(&obj).unwrap();
        let input = BitcodeInput {
            name: name.into(),
            path: name.into(),
            member: None,
            bytes: bytes.clone().into(),
            split: SplitPlacement::Merged,
        };
        (bytes, input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wpd_summary::container::{Kind, encode};

    /// The threads of a pool: the ids of the threads a broadcast reaches.
    fn pool_threads(jobs: usize) -> std::collections::BTreeSet<String> {
        with_jobs(Some(jobs), || rayon::broadcast(|_| format!("{:?}", std::thread::current().id())))
            .unwrap()
            .into_iter()
            .collect()
    }

    /// Phases reuse a pool's threads; after `release_pools` (a link's
    /// backends) the next phase runs on new threads, as many as asked.
    #[test]
    fn released_pools_end_and_the_next_phase_starts_new_threads() {
        let first = pool_threads(3);
        assert_eq!(first.len(), 3);
        assert_eq!(pool_threads(3), first, "a second phase reuses the pool's threads");
        release_pools();
        let after = pool_threads(3);
        assert_eq!(after.len(), 3);
        assert!(after.is_disjoint(&first), "the released pool's threads ran again: {first:?} {after:?}");
    }

    /// What both the cache and wpd-ld's summaries made ahead rely on: a
    /// summary depends on the module's bytes, not on its name.
    #[test]
    fn a_summary_made_ahead_serves_the_same_bytes_under_another_name() {
        let dir = tempfile::tempdir().unwrap();
        let (bytes, file) = test_support::thin_module(
            dir.path(),
            "shape.o",
            "struct Shape { virtual int sides() const; virtual ~Shape(); };\n\
             int Shape::sides() const { return 0; }\nShape::~Shape() {}\n\
             int count(const Shape &s) { return s.sides(); }\n",
        );
        let member = BitcodeInput {
            name: "lib/libshapes.a(shape.o)".into(),
            path: "lib/libshapes.a".into(),
            member: Some("shape.o".into()),
            bytes: bytes.clone().into(),
            split: crate::input::SplitPlacement::Merged,
        };
        let mut ahead = SummariesAhead::default();
        ahead.insert(summarize::summarize(&file).unwrap());
        let got = ahead.take_for(&member).expect("same bytes");
        assert!(ahead.take_for(&member).is_none(), "a summary made ahead is handed over once");
        let want = summarize::summarize(&member).unwrap();
        assert!(!want.call_sites.is_empty(), "the module has a virtual call to summarize");
        assert_eq!(encode(Kind::Summary, &got).unwrap(), encode(Kind::Summary, &want).unwrap());
        let mut changed = member.clone();
        changed.bytes = [&bytes[..], &[0]].concat().into();
        ahead.insert(summarize::summarize(&file).unwrap());
        assert!(ahead.take_for(&changed).is_none());
    }
}
