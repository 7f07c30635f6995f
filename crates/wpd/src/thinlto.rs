//! The link's backends through LLVM's ThinLTO (DESIGN.md §7, docs/design.md
//! "What wpd owns and what it reuses"): wpd's rewritten modules go to
//! `lto::LTO` with the symbol resolutions of wpd's link model
//! (`wpd_link::lto`), and LLVM's thin link and backends do what lld's do:
//! one prevailing copy of each linkonce/weak definition, dead stripping,
//! internalization and promotion, attribute propagation, cross-module
//! import (which now sees the direct calls devirtualization made), then
//! the ThinLTO backend pipeline and code generation per module.

use crate::backend::Rewritten;
use crate::codegen::CodegenOptions;
use crate::error::{Error, Result};
use crate::input::BitcodeInput;
use std::collections::HashSet;
use wpd_link::lto::{LtoSymbols, SymbolView};
use wpd_llvm::{LtoInput, LtoOptions, Resolution, ThinLto};

/// Compiles the rewritten modules (in link order, `inputs[k]` the source of
/// `rewritten[k]`) with LLVM's ThinLTO; returns one native object per
/// module, in the same order. `jobs`: backend threads (`None`: lld's
/// default, one per physical core).
pub fn compile(
    inputs: &[BitcodeInput],
    rewritten: &[Rewritten],
    symbols: &LtoSymbols<'_>,
    opts: &CodegenOptions,
    jobs: Option<usize>,
    cache: Option<&crate::cache::Cache>,
    progress: &crate::progress::Progress,
) -> Result<Vec<Vec<u8>>> {
    if symbols.module_count() != rewritten.len() {
        return Err(Error::msg(format!(
            "the link model has {} bitcode modules, the backends {}",
            symbols.module_count(),
            rewritten.len()
        )));
    }
    let machine = &opts.machine;
    let lto_opts = LtoOptions {
        opt_level: opts.opt_level,
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
    };
    let mut lto = ThinLto::new(&lto_opts).map_err(Error::msg)?;
    // Module names are LLVM's keys: unique, whatever the command line repeats.
    let mut seen = HashSet::new();
    for (k, (input, module)) in inputs.iter().zip(rewritten).enumerate() {
        let mut name = input.name.clone();
        if !seen.insert(name.clone()) {
            name = format!("{}#{k}", input.name);
            seen.insert(name.clone());
        }
        let lto_input = LtoInput::open(module.bitcode(input), &name)
            .map_err(|e| Error::at(&input.name, format!("cannot read the rewritten module: {e}")))?;
        let resolutions: Vec<Resolution> = lto_input
            .symbols()
            .iter()
            .map(|s| {
                let r = symbols.resolve(
                    k,
                    &SymbolView {
                        name: &s.name,
                        section: &s.section,
                        undefined: s.undefined,
                        non_default_visibility: s.visibility != wpd_llvm::Visibility::Default,
                        hidden: s.visibility == wpd_llvm::Visibility::Hidden,
                        introduced: module.introduced.contains(&s.name),
                    },
                );
                Resolution {
                    prevailing: r.prevailing,
                    final_definition: r.final_definition,
                    visible_to_regular_obj: r.visible_to_regular_obj,
                    export_dynamic: r.export_dynamic,
                    linker_redefined: r.linker_redefined,
                }
            })
            .collect();
        lto.add(lto_input, &resolutions).map_err(|e| Error::at(&input.name, e))?;
    }
    progress.phase("backend", rewritten.len());
    // Split DWARF files are written beside the objects, not cached with
    // them: a link that writes them compiles every module.
    let object_cache: Option<&dyn wpd_llvm::ObjectCache> = match cache {
        Some(c) if opts.dwo_dir.is_none() => Some(c),
        _ => None,
    };
    let objects = lto
        .run(&mut |w| eprintln!("wpd: warning: {}", w.replace('\n', " ")), &|| progress.tick(), object_cache)
        .map_err(|e| Error::msg(format!("ThinLTO backend: {e}")))?;
    if let Some(k) = objects.iter().position(|o| o.is_empty()) {
        return Err(Error::at(&inputs[k].name, "LLVM's ThinLTO produced no object for this module"));
    }
    Ok(objects)
}
