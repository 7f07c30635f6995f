//! The link's backends through LLVM's ThinLTO (docs/design.md, "What wpd
//! owns and what it reuses"): wpd's rewritten modules go to
//! `lto::LTO` with the symbol resolutions of wpd's link model
//! (`wpd_link::lto`), and LLVM's thin link and backends do what lld's do:
//! one prevailing copy of each linkonce/weak definition, dead stripping,
//! internalization and promotion, attribute propagation, cross-module
//! import (which now sees the direct calls devirtualization made), then
//! the ThinLTO backend pipeline and code generation per module.

use crate::backends::Rewritten;
use crate::backends::codegen::CodegenOptions;
use crate::backends::distributed::JobModule;
use crate::backends::shelf::{Kept, Shelf};
use crate::backends::spread::{PrevailingCopies, Spread};
use crate::error::{Error, Result};
use crate::input::BitcodeInput;
use std::collections::HashSet;
use std::path::Path;
use wpd_link::lto::{LtoSymbols, SymbolView};
use wpd_llvm::{LtoInput, LtoOptions, LtoResolution, ThinLto};
use wpd_summary::ModuleSummary;

/// LLVM's ThinLTO options of the link (`jobs`: backend threads, `None`:
/// lld's default, one per physical core).
pub fn lto_options(opts: &CodegenOptions, jobs: Option<usize>) -> LtoOptions<'_> {
    let machine = &opts.machine;
    LtoOptions {
        opt_level: opts.opt_level,
        cg_opt_level: opts.codegen_level(),
        cpu: &opts.cpu,
        reloc: opts.reloc,
        sections: opts.sections,
        debugger_tuning: machine.debugger_tuning.map(|t| t.llvm_name()),
        emulated_tls: machine.emulated_tls,
        tls_descriptors: machine.tls_descriptors,
        stack_size_section: machine.stack_size_section,
        split_machine_functions: machine.split_machine_functions,
        jmc_instrument: machine.jmc_instrument,
        sample_profile: opts.profile.sample.as_deref(),
        cs_profile: opts.profile.cs_profile.as_deref(),
        cs_generate: opts.profile.cs_generate,
        dwo_dir: opts.dwo_dir.as_deref(),
        threads: jobs,
        verify: opts.lto_verify,
        regular_parts: false,
    }
}

/// Which input an LTO module comes from: `vtables` for the regular part
/// of a split unit kept in two ([`Rewritten::vtables`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Part {
    input: usize,
    vtables: bool,
}

/// Adds every rewritten module (in link order, `inputs[k]` the source of
/// `rewritten[k]`, `summaries[k]` its summary) to `lto` under `names[k]`
/// (a split unit kept in two: its thin part so, its vtables under
/// `names[k]` with `#vtables`), with the resolutions of the link model,
/// movable comdat groups placed where the backends have least to do
/// ([`crate::backends::spread`]). Returns the input each added module, in task
/// order, comes from, and the placement.
fn add_modules<'b>(
    lto: &mut ThinLto<'b>,
    inputs: &'b [BitcodeInput],
    rewritten: &'b [Rewritten],
    summaries: &[ModuleSummary],
    names: &[String],
    symbols: &LtoSymbols<'_>,
) -> Result<(Vec<Part>, Spread)> {
    if symbols.module_count() != rewritten.len() {
        return Err(Error::msg(format!(
            "the link model has {} bitcode modules, the backends {}",
            symbols.module_count(),
            rewritten.len()
        )));
    }
    let mut opened = Vec::with_capacity(rewritten.len());
    for (k, (input, module)) in inputs.iter().zip(rewritten).enumerate() {
        let vtables_name = format!("{}#vtables", names[k]);
        let modules = std::iter::once((module.bitcode(input), &names[k], false))
            .chain(module.vtables.as_deref().map(|v| (v, &vtables_name, true)));
        for (bitcode, name, vtables) in modules {
            let lto_input = LtoInput::open(bitcode, name)
                .map_err(|e| Error::at(&input.name, format!("cannot read the rewritten module: {}", e.message)))?;
            opened.push((Part { input: k, vtables }, lto_input));
        }
    }
    // A copy in a named section (whose order `__start_`/`__stop_` users
    // may read), kept in `llvm.used`, or defined by a split unit's regular
    // part as well stays where the linker puts it.
    let mut spread = Spread::default();
    if !symbols.movable().is_empty() {
        let unfit: HashSet<&str> = opened
            .iter()
            .flat_map(|(part, i)| {
                i.symbols()
                    .iter()
                    .filter(move |s| !s.undefined && (part.vtables || !s.section.is_empty() || s.used))
                    .map(|s| s.name.as_str())
            })
            .collect();
        spread = crate::backends::spread::spread(symbols.movable(), summaries, symbols, &|n| unfit.contains(n));
    }
    let symbols = symbols.with_moves(std::mem::take(&mut spread.moves));
    let mut parts = Vec::with_capacity(opened.len());
    for (part, lto_input) in opened {
        let (k, input, module) = (part.input, &inputs[part.input], &rewritten[part.input]);
        // Both parts of a split unit are the one unit of the link model.
        let resolutions: Vec<LtoResolution> = lto_input
            .symbols()
            .iter()
            .map(|s| resolution(&symbols, k, s, module.introduced.contains(&s.name), &summaries[k]))
            .collect();
        lto.add(lto_input, &resolutions).map_err(|e| e.context(&input.name))?;
        // As in LLVM's own link, where it is part of the regular LTO
        // module: no function of a ThinLTO module is inlined into it.
        if summaries[k].module.thin_fallback && !part.vtables {
            lto.import_variables_only(parts.len()).map_err(|e| e.context(&input.name))?;
        }
        parts.push(part);
    }
    Ok((parts, spread))
}

/// LLVM's resolution of symbol `s` of the `k`-th bitcode module of the
/// link, from the link model (`introduced`: a name wpd's rewrite made;
/// `summary`: the module's, for its definitions' linkage).
pub(crate) fn resolution(
    symbols: &LtoSymbols<'_>,
    k: usize,
    s: &wpd_llvm::LtoSymbol,
    introduced: bool,
    summary: &ModuleSummary,
) -> LtoResolution {
    // A weak definition whose linkage the summary does not give counts as
    // an ODR copy, as LLVM treats every non-prevailing weak copy.
    let odr_copy = s.weak
        && !s.undefined
        && summary
            .globals
            .binary_search_by(|g| g.name.as_str().cmp(&s.name))
            .map_or(true, |i| !summary.globals[i].linkage.is_interposable());
    let r = symbols.resolve(
        k,
        &SymbolView {
            name: &s.name,
            section: &s.section,
            undefined: s.undefined,
            odr_copy,
            common: s.common,
            non_default_visibility: s.visibility != wpd_llvm::Visibility::Default,
            hidden: s.visibility == wpd_llvm::Visibility::Hidden,
            introduced,
        },
    );
    LtoResolution {
        prevailing: r.prevailing,
        final_definition: r.final_definition,
        visible_to_regular_obj: r.visible_to_regular_obj,
        export_dynamic: r.export_dynamic,
        linker_redefined: r.linker_redefined,
    }
}

/// The native objects of one link's inputs, in input order.
#[derive(Debug, Default)]
pub struct Natives {
    /// One per input (a split unit kept in two, [`Rewritten::vtables`]:
    /// both its parts' code).
    pub objects: Vec<Vec<u8>>,
    /// The object of LLVM's regular LTO module, when split units' vtables
    /// went there ([`crate::input::SplitPlacement::RegularLto`]).
    pub regular: Option<RegularObject>,
    /// LLVM's ThinLTO backends, in the order they started (the most
    /// estimated work first): the report's `backends`.
    pub backends: Vec<BackendRun>,
    /// Where the thin link took movable comdat groups from.
    pub prevailing: PrevailingCopies,
}

/// One ThinLTO backend of the link, as it ran (serialized as one entry of
/// the report's `backends`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BackendRun {
    /// The input whose module it compiled (a split unit kept in two: both
    /// its modules).
    pub module: String,
    /// The work expected of it, in instructions (what it compiles and
    /// imports, from clang's summaries), which ordered the backends.
    pub estimated_work: u64,
    /// Its start, in milliseconds after the first backend's.
    pub start_ms: f64,
    /// Its wall time in milliseconds.
    pub ms: f64,
}

/// The object of the link's regular LTO module: the vtables of every split
/// unit placed [`crate::input::SplitPlacement::RegularLto`], linked into one module by
/// LLVM's regular LTO as lld's links them.
#[derive(Debug)]
pub struct RegularObject {
    /// The first of those inputs: the object goes right before its own.
    pub before: usize,
    pub object: Vec<u8>,
}

/// Compiles the rewritten modules (in link order, `inputs[k]` the source of
/// `rewritten[k]`) with LLVM's ThinLTO; returns one native object per
/// input (a split unit kept in two: its two modules compiled as one), in
/// the same order, and `kept` back: `kept.summaries[k]` is `rewritten[k]`'s
/// summary, read to place prevailing copies; while LLVM's backends run,
/// `kept` is held encoded ([`Shelf`]). `jobs`: backend threads (`None`:
/// lld's default, one per physical core).
#[allow(clippy::too_many_arguments)]
pub fn compile(
    inputs: &[BitcodeInput],
    rewritten: &[Rewritten],
    kept: Kept,
    symbols: &LtoSymbols<'_>,
    opts: &CodegenOptions,
    jobs: Option<usize>,
    cache: Option<&crate::backends::cache::Cache>,
    progress: &crate::progress::Progress,
) -> Result<(Natives, Kept)> {
    // Split units whose vtables go to LLVM's regular LTO module, the first
    // of which places its object.
    let regular_first = rewritten.iter().position(|r| r.stats.vtables_in_regular_lto);
    let options = LtoOptions { regular_parts: regular_first.is_some(), ..lto_options(opts, jobs) };
    let mut lto = ThinLto::new(&options)?;
    // Module names are LLVM's keys: unique, whatever the command line repeats.
    let mut seen = HashSet::new();
    let names: Vec<String> = inputs
        .iter()
        .enumerate()
        .map(|(k, input)| {
            let mut name = input.name.clone();
            if !seen.insert(name.clone()) {
                name = format!("{}#{k}", input.name);
                seen.insert(name.clone());
            }
            name
        })
        .collect();
    let (parts, spread) = add_modules(&mut lto, inputs, rewritten, &kept.summaries, &names, symbols)?;
    // Nothing reads them again until the backends are done.
    let shelf = Shelf::put(kept)?;
    // A split unit kept in two is compiled into one object: its regular
    // part by its thin part's backend, after LLVM's thin link decided for
    // each part as the module it is (docs/performance.md, "A split unit kept
    // in two, compiled as one"). No other module imports from that part.
    // (add_modules adds a regular part right after its thin part.)
    for (j, part) in parts.iter().enumerate().filter(|(_, p)| p.vtables) {
        lto.join(j, j - 1).map_err(|e| e.context(&inputs[part.input].name))?;
    }
    let compiled = parts.iter().filter(|p| !p.vtables).count();
    progress.phase("backend", compiled);
    // Split DWARF files are written beside the objects, not cached with
    // them: a link that writes them compiles every module.
    let object_cache: Option<&dyn wpd_llvm::ObjectCache> = match cache {
        Some(c) if opts.dwo_dir.is_none() => Some(c),
        _ => None,
    };
    let wpd_llvm::LtoObjects { thin: objects, regular, backends } = lto
        .run(&mut |w| eprintln!("wpd: warning: {}", w.replace('\n', " ")), &|| progress.tick(), object_cache)
        .map_err(|e| Error::msg(format!("ThinLTO backend: {}", e.message)))?;
    let kept = shelf.take()?;
    if let Some(k) = parts.iter().zip(&objects).position(|(p, o)| !p.vtables && o.is_empty()) {
        return Err(Error::at(&inputs[parts[k].input].name, "LLVM's ThinLTO produced no object for this module"));
    }
    let regular = match regular_first {
        Some(_) if regular.is_empty() => {
            return Err(Error::msg("LLVM's LTO produced no object for the regular LTO module (split units' vtables)"));
        }
        Some(before) => Some(RegularObject { before, object: regular }),
        None => None,
    };
    // Task k is the k-th module added (task 0, the regular LTO module, is
    // not a thin backend).
    let backends = backends
        .into_iter()
        .filter_map(|run| {
            let part = parts.get((run.task as usize).checked_sub(1)?)?;
            let name = &inputs[part.input].name;
            Some(BackendRun {
                module: name.clone(),
                estimated_work: run.estimated_work,
                start_ms: run.start_ms,
                ms: run.ms,
            })
        })
        .collect();
    let prevailing = spread.copies;
    let mut natives = Natives { objects: Vec::with_capacity(inputs.len()), regular, backends, prevailing };
    // A joined regular part's code is in its thin part's object.
    for (part, object) in parts.into_iter().zip(objects) {
        if !part.vtables {
            natives.objects.push(object);
        }
    }
    Ok((natives, kept))
}

/// The file module `k` of a distributed link is written to, in the index
/// directory.
pub fn job_module_name(k: usize) -> String {
    format!("{k}.bc")
}

/// A distributed link's thin link: LLVM's thin link applied to every
/// rewritten module with the link model's resolutions (prevailing copies,
/// dead stripping, internalization and promotion, imports), each module
/// then written to `dir/<k>.bc` ([`job_module_name`]) instead of being
/// compiled. [`backend_job`] compiles one, anywhere, into the object the
/// in-process link ([`compile`]) would have made. Returns the file names,
/// and content hashes, in link order, and where movable comdat groups were
/// taken from.
#[allow(clippy::too_many_arguments)]
pub fn write_job_modules(
    inputs: &[BitcodeInput],
    rewritten: &[Rewritten],
    summaries: &[ModuleSummary],
    symbols: &LtoSymbols<'_>,
    opts: &CodegenOptions,
    jobs: Option<usize>,
    dir: &Path,
    progress: &crate::progress::Progress,
) -> Result<(Vec<JobModule>, PrevailingCopies)> {
    let names: Vec<String> = (0..inputs.len()).map(job_module_name).collect();
    let mut lto = ThinLto::post_import(&lto_options(opts, jobs))?;
    // A distributed job compiles one module per input: no unit is kept in two.
    let (parts, spread) = add_modules(&mut lto, inputs, rewritten, summaries, &names, symbols)?;
    if parts.len() != inputs.len() {
        return Err(Error::msg("a split unit was kept in two for distributed backends (a wpd bug)"));
    }
    progress.phase("thin link", rewritten.len());
    let modules = lto
        .run(&mut |w| eprintln!("wpd: warning: {}", w.replace('\n', " ")), &|| progress.tick(), None)
        .map_err(|e| Error::msg(format!("ThinLTO thin link: {}", e.message)))?
        .thin;
    for (k, module) in modules.iter().enumerate() {
        if module.is_empty() {
            return Err(Error::at(&inputs[k].name, "LLVM's ThinLTO produced no module for this input"));
        }
        let path = dir.join(&names[k]);
        std::fs::write(&path, module).map_err(|e| Error::at(path.display().to_string(), e.to_string()))?;
    }
    let modules = names
        .into_iter()
        .zip(&modules)
        .map(|(file, module)| JobModule { file, hash: crate::input::content_hash(module) })
        .collect();
    Ok((modules, spread.copies))
}

/// One job of a distributed link: `bytes` (a `<k>.bc` that
/// [`write_job_modules`] wrote, the file `shown`) optimized and compiled as
/// the in-process link would have compiled it as task `task`.
pub fn backend_job(bytes: &[u8], shown: &str, opts: &CodegenOptions, task: u32) -> Result<Vec<u8>> {
    wpd_llvm::thin_backend(&lto_options(opts, None), bytes, shown, task, &mut |w| {
        eprintln!("wpd: warning: {}", w.replace('\n', " "))
    })
}
