//! The backends: each rewritten module ([`crate::rewrite`]) to native
//! code. wpd-ld and the plugin hand the rewritten modules, as ThinLTO
//! bitcode ([`rewrite_to_bitcode`]), to LLVM's ThinLTO ([`thinlto`]: its
//! thin link, import and backends, with [`cache`] and the placement of
//! prevailing copies in [`spread`]); a module the plan leaves alone skips
//! the rewrite ([`passthrough`]), and a split unit among them may be kept
//! in two instead of merged ([`split_apart`], [`vtables_module`]).
//! `wpd backend` optimizes and emits one module on its own ([`backend`],
//! [`codegen`]); [`distributed`] writes and runs the jobs of a link whose
//! backends a build system distributes.
//!
//! The backend reports what it did to every call site
//! ([`rewrite::CallOutcome`]): those outcomes, not the plan's predictions,
//! are what remarks and reports count, and a link where they differ from
//! the plan is a bug the tests catch (see `report::mismatches`).

pub mod cache;
pub mod clang_indexes;
pub mod codegen;
pub mod distributed;
pub mod shelf;
pub mod spread;
pub mod thinlto;

use crate::error::{Error, Result};
use crate::input::{BitcodeInput, SplitPlacement};
use crate::rewrite::{self, Applied};
use codegen::CodegenOptions;
use std::collections::BTreeSet;
use wpd_llvm::Context;
use wpd_summary::{GlobalKind, ModuleIdx, Plan};

pub use crate::rewrite::{BackendStats, CallOutcome};
pub use wpd_link::outcome::Outcome;

/// The index of `input`'s module in the plan (by content hash; among equal
/// contents, by name).
pub fn plan_module(plan: &Plan, input: &BitcodeInput, hash: &str) -> Result<ModuleIdx> {
    let same: Vec<ModuleIdx> = plan.modules.iter_enumerated().filter(|(_, m)| m.hash == hash).map(|(i, _)| i).collect();
    match same.as_slice() {
        [] => {
            Err(Error::at(&input.name, "not part of this plan (no module with its content hash); re-run the thin link"))
        }
        [one] => Ok(*one),
        many => Ok(many.iter().copied().find(|&i| plan.modules[i].name == input.name).unwrap_or(many[0])),
    }
}

/// Compiles one bitcode input under `plan` into a native object on its own
/// (no cross-module optimization): `wpd backend`, one module at a time.
pub fn backend(input: &BitcodeInput, plan: &Plan, opts: &CodegenOptions) -> Result<(Vec<u8>, BackendStats)> {
    let hash = input.content_hash();
    let index = plan_module(plan, input, &hash)?;
    let ctx = Context::new();
    let applied = rewrite::module(&ctx, input, plan, index, &hash)?;
    let object = codegen::emit(&applied.module, opts).map_err(|e| e.context(&input.name))?;
    Ok((object, applied.stats))
}

/// One input rewritten under the plan, as ThinLTO bitcode for LLVM's thin
/// link and backends (`crate::backends::thinlto`).
pub struct Rewritten {
    /// ThinLTO bitcode: one module (a split unit's parts linked), with a
    /// fresh module summary; `None`: the input's own bytes ([`passthrough`];
    /// for a split unit whose vtables go to the link's regular LTO module,
    /// both its modules, as lld's LTO takes them). A split unit kept in two
    /// ([`split_apart`]): its thin part.
    pub bitcode: Option<Vec<u8>>,
    /// A split unit kept in two: its regular part as a ThinLTO module of
    /// its own ([`vtables_module`]), which the thin part's backend compiles
    /// with it, into its object ([`crate::backends::thinlto::compile`]).
    pub vtables: Option<Vec<u8>>,
    pub stats: BackendStats,
    /// The names the rewrite gave this module's definitions (promoted
    /// locals, aliases of local vtables): the module's own.
    pub introduced: BTreeSet<String>,
}

impl Rewritten {
    /// An input that goes to ThinLTO as it is, with the stats
    /// [`passthrough`] found for it.
    pub fn unchanged(stats: BackendStats) -> Rewritten {
        Rewritten { bitcode: None, vtables: None, stats, introduced: BTreeSet::new() }
    }

    /// The bitcode LLVM's ThinLTO gets for `input` (this module's source).
    pub fn bitcode<'a>(&'a self, input: &'a BitcodeInput) -> &'a [u8] {
        self.bitcode.as_deref().unwrap_or(&input.bytes)
    }
}

/// The index in `plan` of the module `summary` describes, given that the
/// plan was made from the link's summaries in order (`k`-th summary,
/// `k`-th plan module): checked by content hash, no search.
pub fn planned_index(plan: &Plan, summary: &wpd_summary::ModuleSummary, k: ModuleIdx) -> Result<ModuleIdx> {
    match plan.modules.get(k) {
        Some(m) if m.hash == summary.module.hash => Ok(k),
        _ => Err(Error::at(&summary.module.name, "not the plan's module at its position (a wpd bug)")),
    }
}

/// Whether `input` can go to LLVM's ThinLTO without being rewritten: the
/// plan changes nothing in it (no promotions, aliases or kept copies, no
/// vtable of its laid out or with dead slots, every call site left
/// indirect and none of them a real check) and it is one ThinLTO module, or
/// a split unit that may be kept in two (`split_apart`, see
/// [`split_apart`]). Such a module is
/// parsed once, by its ThinLTO backend, as in lld's link, and keeps clang's
/// own summary; its type tests are dropped inside that backend, after
/// import and before LLVM's own devirtualization could act on them
/// (`wpd_lto_new`'s hook in the shim). `layout` is the input's
/// ([`wpd_llvm::thinlto_layout`]), `summary` its summary, `index` its
/// module's in the plan. The stats are what a rewrite would have reported:
/// every call indirect, every type test dropped.
pub fn passthrough(
    layout: wpd_llvm::LtoLayout,
    summary: &wpd_summary::ModuleSummary,
    plan: &Plan,
    index: ModuleIdx,
    split_apart: bool,
) -> Option<BackendStats> {
    let planned = &plan.modules[index];
    if layout.split_unit != summary.module.split
        || (layout.split_unit && !split_apart)
        || !planned.promotions.is_empty()
        || !planned.vtable_aliases.is_empty()
        || !planned.keep.is_empty()
    {
        return None;
    }
    // clang copies a split unit's weak (interposable) functions into its
    // regular part as `available_externally`; given both copies, LLVM 19's
    // thin link stops ("Interposable and available_externally/linkonce_odr/
    // weak_odr symbol") when the definition the link keeps is another one,
    // a native object's. The rewrite merges the two parts, the copy with
    // them.
    if layout.split_unit
        && summary.globals.iter().any(|g| g.kind == GlobalKind::Function && g.linkage.is_interposable())
    {
        return None;
    }
    let defines = |symbol: &str| summary.globals.iter().any(|g| g.name == symbol);
    if plan.layouts.iter().any(|l| l.module.is_none_or(|m| m == index) && defines(&l.symbol)) {
        return None;
    }
    if plan.dead_slots.iter().any(|d| d.module.is_none_or(|m| m == index) && defines(&d.symbol)) {
        return None;
    }
    let policy = rewrite::call_policy(plan);
    let mut stats = BackendStats { unchanged: true, ..BackendStats::default() };
    for site in &summary.call_sites {
        // A control-flow integrity check goes to the rewrite, which refuses it.
        if !site.assumed || Outcome::planned(plan, site, &policy) != Outcome::Indirect {
            return None;
        }
        stats.calls.push(CallOutcome { site: site.clone(), outcome: Outcome::Indirect, dispatch: None });
    }
    // One type test per (function, test index), however many calls it guards.
    let tests = summary.call_sites.iter().map(|c| (&c.function, c.test_index)).collect::<BTreeSet<_>>().len();
    stats.type_tests_dropped = tests as u32;
    Some(stats)
}

/// What LLVM's ThinLTO gets for an input [`passthrough`] let through
/// (`layout` its layout, `stats` what passthrough found): its own bytes, or
/// for a split unit placed [`SplitPlacement::Joined`] its thin part cut out
/// of the file and its vtables as a module of their own
/// ([`vtables_module`]). `None`: the split unit's bytes
/// cannot be cut after all, and it is rewritten instead.
pub fn unrewritten(
    input: &BitcodeInput,
    layout: wpd_llvm::LtoLayout,
    stats: BackendStats,
) -> Result<Option<Rewritten>> {
    if !layout.split_unit {
        return Ok(Some(Rewritten::unchanged(stats)));
    }
    if input.split == SplitPlacement::RegularLto {
        // The file as it is: LLVM's LTO takes its thin part as a ThinLTO
        // module and its regular part into the regular LTO module.
        let stats = BackendStats { kept_in_two: true, vtables_in_regular_lto: true, ..stats };
        return Ok(Some(Rewritten::unchanged(stats)));
    }
    let Some(thin) = wpd_llvm::split_thin_part(&input.bytes, &input.name).map_err(|e| e.context(&input.name))? else {
        return Ok(None);
    };
    let vtables = vtables_module(input)?;
    let stats = BackendStats { kept_in_two: true, ..stats };
    Ok(Some(Rewritten { bitcode: Some(thin), vtables: Some(vtables), ..Rewritten::unchanged(stats) }))
}

/// The `EnableSplitLTOUnit` flag every module given to LLVM's ThinLTO
/// carries: the more common one among the inputs' summaries (`layouts`,
/// `None` for an input that is neither one ThinLTO module nor a split
/// unit), set on a tie. Modules wpd writes take it; a module that would
/// pass through with the other value is rewritten instead. With one value
/// everywhere, importing never meets conflicting module flags and LLVM's
/// thin link never sees a "partially split" link, which it refuses once
/// any summary records a virtual call ("inconsistent LTO Unit splitting").
pub fn link_split_flag(layouts: &[Option<wpd_llvm::LtoLayout>]) -> bool {
    let count = |v: bool| layouts.iter().flatten().filter(|l| l.split_flag == v).count();
    count(true) >= count(false)
}

/// Whether a split unit the plan leaves alone may be kept in two: its thin
/// part cut out of the file as it is ([`wpd_llvm::split_thin_part`]), its
/// regular part (the vtables) made a ThinLTO module of its own
/// ([`vtables_module`]), the two compiled into one object by the thin
/// part's backend. Or, placed [`SplitPlacement::RegularLto`], the file as
/// it is, its regular part joining the link's regular LTO module. The
/// caller must be able to place the objects so ([`BitcodeInput::split`]),
/// the backends must run in this process, and the link's modules must be
/// flagged split, as the thin part is.
pub fn split_apart(input: &BitcodeInput, in_process: bool, link_split: bool) -> bool {
    input.split != SplitPlacement::Merged && in_process && link_split
}

/// The regular part of a split unit (`input`) alone, as a ThinLTO module
/// of its own, flagged split like the thin part it was cut from: its
/// vtables and their type info. Parses this part only, never the thin
/// part. The module is compiled by its thin part's backend
/// ([`crate::backends::thinlto::compile`]).
///
/// clang puts `available_externally` copies of small virtual functions
/// beside the vtables, for LLVM's regular LTO to fold loads from them. In
/// a ThinLTO module each copy would be a second summary of its function,
/// one other modules may import and inline whatever the link says of the
/// definition in the thin part: a name `--wrap` or `--defsym` redefines,
/// whose summary LLVM makes weak so that no module imports it, would be
/// imported from the copy, and a direct call another file makes would run
/// the bitcode body instead of `__wrap_X`. The thin part defines each of
/// them, so the copies become declarations.
pub fn vtables_module(input: &BitcodeInput) -> Result<Vec<u8>> {
    let ctx = Context::new();
    let module = ctx
        .parse_bitcode_module(&input.bytes, &input.name, 1)
        .map_err(|e| Error::at(&input.name, format!("invalid bitcode: {}", e.message)))?;
    for f in module.functions() {
        if f.linkage() == wpd_summary::Linkage::AvailableExternally {
            f.delete_body();
        }
    }
    rewrite::refuse_cfi(input, &module)?;
    rewrite::type_tests::apply(&module);
    module.write_thinlto_bitcode(true, &rewrite::definition_names(&module)).map_err(|e| e.context(&input.name))
}

/// Applies the plan to one input (`summary` its summary, `index` its
/// module's in the plan) and writes it back as ThinLTO bitcode.
pub fn rewrite_to_bitcode(
    input: &BitcodeInput,
    summary: &wpd_summary::ModuleSummary,
    plan: &Plan,
    index: ModuleIdx,
    verify: bool,
    split_flag: bool,
) -> Result<Rewritten> {
    let ctx = Context::new();
    let Applied { module, stats, introduced, regular_part } =
        rewrite::module(&ctx, input, plan, index, &summary.module.hash)?;
    if verify {
        module.verify().map_err(|e| Error::at(&input.name, format!("invalid IR after rewriting: {}", e.message)))?;
    }
    let bitcode = module.write_thinlto_bitcode(split_flag, &regular_part).map_err(|e| e.context(&input.name))?;
    Ok(Rewritten { bitcode: Some(bitcode), vtables: None, stats, introduced })
}

#[cfg(test)]
mod tests {
    use super::link_split_flag;
    use wpd_llvm::LtoLayout;

    fn l(split_flag: bool) -> Option<LtoLayout> {
        Some(LtoLayout { split_unit: false, split_flag })
    }

    #[test]
    fn the_link_takes_the_more_common_split_flag() {
        assert!(!link_split_flag(&[l(false), None, l(true), l(false)]));
        assert!(link_split_flag(&[l(true), None, l(true), l(false)]));
        // A tie, or nothing to count, goes to the flag set.
        assert!(link_split_flag(&[l(false), l(true)]));
        assert!(link_split_flag(&[None, None]));
        // A split unit counts like any module.
        assert!(link_split_flag(&[Some(LtoLayout { split_unit: true, split_flag: true }), l(false), None]));
    }
}
