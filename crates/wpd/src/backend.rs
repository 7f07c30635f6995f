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
use serde::Serialize;
use std::collections::BTreeSet;
use wpd_llvm::{Context, Module};
use wpd_summary::{CallSite, Plan};

pub use wpd_link::outcome::Outcome;

/// One call site and what the backend did to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallOutcome {
    /// The call site as the summarizer recorded it.
    pub site: CallSite,
    pub outcome: Outcome,
}

/// What the backend did to one module.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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
    let hash = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&input.bytes));
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
    bitcode: Option<Vec<u8>>,
    pub stats: BackendStats,
    /// The names the rewrite gave this module's definitions (promoted
    /// locals, aliases of local vtables): the module's own.
    pub introduced: BTreeSet<String>,
}

impl Rewritten {
    /// An input that goes to ThinLTO as it is ([`passthrough`]).
    pub fn unchanged() -> Rewritten {
        let stats = BackendStats { unchanged: true, ..BackendStats::default() };
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
/// call site, no vtable of its laid out), it is not a split unit, and it is
/// one ThinLTO module that declares no type intrinsic (nothing to drop).
/// Such a module is parsed once, by its ThinLTO backend, as in lld's link,
/// and keeps clang's own summary. `summary` is the input's, `index` its
/// module's in the plan.
pub fn passthrough(
    input: &BitcodeInput,
    summary: &wpd_summary::ModuleSummary,
    plan: &Plan,
    index: usize,
) -> Result<Option<wpd_llvm::Passthrough>> {
    let planned = &plan.modules[index];
    if summary.module.split
        || !summary.call_sites.is_empty()
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
    wpd_llvm::thinlto_passthrough(&input.bytes, &input.name)
        .map_err(|e| Error::at(&input.name, format!("invalid bitcode: {e}")))
}

/// Which modules of `candidates` ([`passthrough`]) actually pass through:
/// those sharing one `EnableSplitLTOUnit` flag value (the most common; on a
/// tie, the flag set), since importing between two modules whose flags
/// disagree fails. Every module wpd rewrites drops the flag.
pub fn passthrough_chosen(candidates: &[Option<wpd_llvm::Passthrough>]) -> Vec<bool> {
    let count = |v: Option<bool>| candidates.iter().flatten().filter(|p| p.split_flag == v).count();
    let values = [Some(true), Some(false), None];
    let best = values.into_iter().max_by_key(|&v| (count(v), v == Some(true), v.is_some())).unwrap_or(None);
    candidates.iter().map(|c| c.is_some_and(|p| p.split_flag == best)).collect()
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
    let policy = Policy { whole_program_visibility: plan.options.whole_program_visibility, ..Policy::default() };
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
        let scan = summarize::scan(&modules, hash);
        for c in scan.calls {
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
    use super::passthrough_chosen;
    use wpd_llvm::Passthrough;

    fn p(split_flag: Option<bool>) -> Option<Passthrough> {
        Some(Passthrough { split_flag })
    }

    #[test]
    fn passthrough_modules_share_one_split_flag() {
        // The most common flag value wins; the others are rewritten.
        assert_eq!(
            passthrough_chosen(&[p(Some(false)), None, p(Some(true)), p(Some(false))]),
            [true, false, false, true]
        );
        // A tie goes to the flag set, then to a set flag over an absent one.
        assert_eq!(passthrough_chosen(&[p(Some(false)), p(Some(true))]), [false, true]);
        assert_eq!(passthrough_chosen(&[p(None), p(Some(false))]), [false, true]);
        assert_eq!(passthrough_chosen(&[None, None]), [false, false]);
    }
}
