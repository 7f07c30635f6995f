//! backend: one bitcode file + the plan → the rewritten module. Parses both
//! parts of a split unit, applies the plan to each part, links them and
//! drops leftover type tests; then either writes it back as ThinLTO bitcode
//! for LLVM's thin link and backends ([`rewrite_to_bitcode`], wpd-ld) or
//! optimizes and emits it on its own ([`backend`], `wpd backend`).
//!
//! The backend reports what it did to every call site ([`CallOutcome`]):
//! those outcomes, not the plan's predictions, are what remarks and reports
//! count, and a link where they differ from the plan is a bug the tests
//! catch (see `report::mismatches`).

use crate::codegen::{self, CodegenOptions};
use crate::error::{Error, Result};
use crate::input::BitcodeInput;
use crate::policy::Policy;
use crate::rewrite;
use crate::summarize;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use wpd_llvm::{Context, Module};
use wpd_summary::{CallSite, Plan};

pub use wpd_link::outcome::Outcome;

/// One call site and what the backend did to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallOutcome {
    /// The call site as the summarizer recorded it.
    pub site: CallSite,
    pub outcome: Outcome,
}

/// What the backend did to one module.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackendStats {
    /// Every call site, in the order of the module's summary.
    pub calls: Vec<CallOutcome>,
    /// Plan layouts (indices into `Plan::layouts`) this module rebuilt.
    pub layouts_rebuilt: Vec<u32>,
    /// Type tests removed before codegen.
    pub type_tests_dropped: u32,
    /// The plan changed nothing here: the module went to ThinLTO as it was
    /// ([`passthrough`]).
    pub unchanged: bool,
}

impl BackendStats {
    /// Call sites with `outcome`.
    pub fn count(&self, outcome: Outcome) -> u32 {
        self.calls.iter().filter(|c| c.outcome == outcome).count() as u32
    }
}

/// The index of `input`'s module in the plan (by content hash; among equal
/// contents, by name).
pub fn plan_module(plan: &Plan, input: &BitcodeInput, hash: &str) -> Result<usize> {
    let same: Vec<usize> = plan.modules.iter().enumerate().filter(|(_, m)| m.hash == hash).map(|(i, _)| i).collect();
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
    let (module, stats, _) = rewrite(&ctx, input, plan, index, &hash)?;
    let object = codegen::emit(&module, opts).map_err(|e| Error::at(&input.name, e))?;
    Ok((object, stats))
}

/// One input rewritten under the plan, as ThinLTO bitcode for LLVM's thin
/// link and backends (`crate::thinlto`).
pub struct Rewritten {
    /// ThinLTO bitcode: one module (a split unit's parts linked), with a
    /// fresh module summary; `None`: the input's own bytes ([`passthrough`]).
    pub bitcode: Option<Vec<u8>>,
    pub stats: BackendStats,
    /// The names the rewrite gave this module's definitions (promoted
    /// locals, aliases of local vtables): the module's own.
    pub introduced: BTreeSet<String>,
}

impl Rewritten {
    /// An input that goes to ThinLTO as it is, with the stats
    /// [`passthrough`] found for it.
    pub fn unchanged(stats: BackendStats) -> Rewritten {
        Rewritten { bitcode: None, stats, introduced: BTreeSet::new() }
    }

    /// The bitcode LLVM's ThinLTO gets for `input` (this module's source).
    pub fn bitcode<'a>(&'a self, input: &'a BitcodeInput) -> &'a [u8] {
        self.bitcode.as_deref().unwrap_or(&input.bytes)
    }
}

/// The index in `plan` of the module `summary` describes, given that the
/// plan was made from the link's summaries in order (`k`-th summary,
/// `k`-th plan module): checked by content hash, no search.
pub fn planned_index(plan: &Plan, summary: &wpd_summary::ModuleSummary, k: usize) -> Result<usize> {
    match plan.modules.get(k) {
        Some(m) if m.hash == summary.module.hash => Ok(k),
        _ => Err(Error::at(&summary.module.name, "not the plan's module at its position (a wpd bug)")),
    }
}

/// Whether `input` can go to LLVM's ThinLTO without being rewritten: the
/// plan changes nothing in it (no promotions, aliases or kept copies, no
/// vtable of its laid out, every call site left indirect and none of them a
/// real check), it is not a split unit, and it is one ThinLTO module. Such
/// a module is parsed once, by its ThinLTO backend, as in lld's link, and
/// keeps clang's own summary; its type tests are dropped inside that
/// backend, after import and before LLVM's own devirtualization could act
/// on them (`wpd_lto_new`'s hook in the shim). `summary` is the input's,
/// `index` its module's in the plan. The stats are what a rewrite would
/// have reported: every call indirect, every type test dropped.
pub fn passthrough(
    input: &BitcodeInput,
    summary: &wpd_summary::ModuleSummary,
    plan: &Plan,
    index: usize,
) -> Result<Option<(wpd_llvm::Passthrough, BackendStats)>> {
    let planned = &plan.modules[index];
    if summary.module.split
        || !planned.promotions.is_empty()
        || !planned.vtable_aliases.is_empty()
        || !planned.keep.is_empty()
    {
        return Ok(None);
    }
    let defines = |symbol: &str| summary.globals.iter().any(|g| g.name == symbol);
    if plan.layouts.iter().any(|l| l.module.is_none_or(|m| m as usize == index) && defines(&l.symbol)) {
        return Ok(None);
    }
    let policy = call_policy(plan);
    let mut stats = BackendStats { unchanged: true, ..BackendStats::default() };
    for site in &summary.call_sites {
        // A control-flow integrity check goes to the rewrite, which refuses it.
        if !site.assumed || Outcome::planned(plan, site, &policy) != Outcome::Indirect {
            return Ok(None);
        }
        stats.calls.push(CallOutcome { site: site.clone(), outcome: Outcome::Indirect });
    }
    // One type test per (function, test index), however many calls it guards.
    let tests = summary.call_sites.iter().map(|c| (&c.function, c.test_index)).collect::<BTreeSet<_>>().len();
    stats.type_tests_dropped = tests as u32;
    let found = wpd_llvm::thinlto_passthrough(&input.bytes, &input.name)
        .map_err(|e| Error::at(&input.name, format!("invalid bitcode: {e}")))?;
    Ok(found.map(|p| (p, stats)))
}

/// The policy a module's calls are rewritten under: the plan's visibility;
/// speculation and validation were decided by the thin link.
fn call_policy(plan: &Plan) -> Policy {
    Policy { whole_program_visibility: plan.options.whole_program_visibility, ..Policy::default() }
}

/// Which modules of `candidates` ([`passthrough`]) actually pass through:
/// those sharing one `EnableSplitLTOUnit` summary flag (the more common
/// value; on a tie, set), since importing between two modules whose flags
/// disagree fails. Every module wpd rewrites drops the flag, so when the
/// chosen value is "set" and some module is rewritten, LLVM's combined
/// index is partially split, and LLVM refuses such a link if any summary
/// records a virtual call ("inconsistent LTO Unit splitting"): then only
/// modules without type tests pass through.
pub fn passthrough_chosen(candidates: &[Option<(wpd_llvm::Passthrough, BackendStats)>]) -> Vec<bool> {
    let count = |v: bool| candidates.iter().flatten().filter(|(p, _)| p.split_flag == v).count();
    let split = count(true) >= count(false);
    let chosen: Vec<bool> = candidates.iter().map(|c| c.as_ref().is_some_and(|(p, _)| p.split_flag == split)).collect();
    let partially_split = split && chosen.iter().any(|c| !c);
    candidates
        .iter()
        .zip(chosen)
        .map(|(c, chosen)| chosen && !(partially_split && c.as_ref().is_some_and(|(_, s)| s.type_tests_dropped > 0)))
        .collect()
}

/// Applies the plan to one input (`summary` its summary, `index` its
/// module's in the plan) and writes it back as ThinLTO bitcode.
pub fn rewrite_to_bitcode(
    input: &BitcodeInput,
    summary: &wpd_summary::ModuleSummary,
    plan: &Plan,
    index: usize,
    verify: bool,
) -> Result<Rewritten> {
    let ctx = Context::new();
    let (module, stats, introduced) = rewrite(&ctx, input, plan, index, &summary.module.hash)?;
    if verify {
        module.verify().map_err(|e| Error::at(&input.name, format!("invalid IR after rewriting: {e}")))?;
    }
    let bitcode = module.write_thinlto_bitcode().map_err(|e| Error::at(&input.name, e))?;
    Ok(Rewritten { bitcode: Some(bitcode), stats, introduced })
}

/// Parses one input, applies the plan to both parts of a split unit, links
/// them and drops leftover type tests: the module the backends optimize.
/// `index` is the input's module in the plan, `hash` its content hash.
fn rewrite<'c>(
    ctx: &'c Context,
    input: &BitcodeInput,
    plan: &Plan,
    index: usize,
    hash: &str,
) -> Result<(Module<'c>, BackendStats, BTreeSet<String>)> {
    let mut modules = ctx
        .parse_bitcode(&input.bytes, &input.name)
        .map_err(|e| Error::at(&input.name, format!("invalid bitcode: {e}")))?;
    let policy = call_policy(plan);
    let mut stats = BackendStats::default();
    let planned = &plan.modules[index];
    let introduced = planned.promotions.iter().chain(&planned.vtable_aliases).map(|p| p.promoted.clone()).collect();

    rewrite::promote::apply(&modules, &planned.promotions, &input.name)?;
    rewrite::promote::keep(&modules, &planned.keep, &input.name)?;
    // Aliases first: a unique-return comparison in this very module names
    // the alias, and must not declare that name before it exists. Rebuilding
    // the vtable later retargets the alias (replaceAllUsesWith).
    rewrite::promote::aliases(&modules, &planned.vtable_aliases, &input.name)?;
    {
        let parts: Vec<&Module<'_>> = modules.iter().collect();
        for c in summarize::scan(&parts, hash) {
            let part = &modules[c.part];
            let outcome = match c.call {
                Some(call) => rewrite::apply(part, call, &c.site, plan, &policy).map_err(|e| {
                    Error::at(&input.name, format!("cannot apply the plan to a call in {}: {e}", c.site.function))
                })?,
                None => Outcome::Indirect,
            };
            stats.calls.push(CallOutcome { site: c.site, outcome });
        }
    }
    // The summary's order: by function, then test, program order within.
    stats.calls.sort_by(|a, b| (&a.site.function, a.site.test_index).cmp(&(&b.site.function, b.site.test_index)));
    for part in &modules {
        stats.layouts_rebuilt.extend(rewrite::vtable_layout::apply(part, plan, index as u32));
    }
    stats.layouts_rebuilt.sort_unstable();
    stats.layouts_rebuilt.dedup();

    let mut module = modules.remove(0);
    for part in modules {
        module.link_in(part).map_err(|e| Error::at(&input.name, e))?;
    }
    let checks = module.count_type_checks();
    if checks > 0 {
        return Err(Error::at(
            &input.name,
            format!(
                "{checks} control-flow integrity check(s) (-fsanitize=cfi) found; wpd does not lower CFI checks and will not drop them"
            ),
        ));
    }
    stats.type_tests_dropped = rewrite::type_tests::apply(&module) as u32;
    // The local vtables other modules name through a hidden alias take the
    // alias's name: with two names, code imported into another module
    // could compare two "distinct" declarations of one vtable, which LLVM
    // folds to false.
    for a in &planned.vtable_aliases {
        if !module.merge_hidden_alias(&a.symbol, &a.promoted) {
            return Err(Error::at(&input.name, format!("cannot give vtable {} the name {}", a.symbol, a.promoted)));
        }
    }
    Ok((module, stats, introduced))
}

#[cfg(test)]
mod tests {
    use super::{BackendStats, passthrough_chosen};
    use wpd_llvm::Passthrough;

    fn p(split_flag: bool) -> Option<(Passthrough, BackendStats)> {
        Some((Passthrough { split_flag }, BackendStats { unchanged: true, ..BackendStats::default() }))
    }

    fn with_tests(split_flag: bool) -> Option<(Passthrough, BackendStats)> {
        let stats = BackendStats { unchanged: true, type_tests_dropped: 1, ..BackendStats::default() };
        Some((Passthrough { split_flag }, stats))
    }

    #[test]
    fn passthrough_modules_share_one_split_flag() {
        // The more common flag value wins; the others are rewritten.
        assert_eq!(passthrough_chosen(&[p(false), None, p(true), p(false)]), [true, false, false, true]);
        // A tie goes to the flag set.
        assert_eq!(passthrough_chosen(&[p(false), p(true)]), [false, true]);
        assert_eq!(passthrough_chosen(&[None, None]), [false, false]);
    }

    #[test]
    fn partially_split_index_keeps_type_tests_out() {
        // Split-flagged modules with type tests pass through only when no
        // module is rewritten (no summary says "not split" then).
        assert_eq!(passthrough_chosen(&[with_tests(true), p(true)]), [true, true]);
        assert_eq!(passthrough_chosen(&[with_tests(true), p(true), None]), [false, true, false]);
        assert_eq!(passthrough_chosen(&[with_tests(true), with_tests(false)]), [false, false]);
        // Without the flag no summary is split: type tests or not.
        assert_eq!(
            passthrough_chosen(&[with_tests(false), with_tests(false), p(true), None]),
            [true, true, false, false]
        );
    }
}
