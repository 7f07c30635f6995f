//! Rewrites of one module by the plan, one file per transformation:
//! - [`promote`]: local targets named from other modules become hidden
//!   globals, local vtables compared from other modules get hidden aliases;
//! - [`single_impl`]: calls whose slot has one target call it directly;
//! - [`uniform_ret`]: calls whose targets all return one constant become it;
//! - [`unique_ret`]: boolean calls true for one vtable become a comparison;
//! - [`virtual_const_prop`]: calls become loads of results stored beside
//!   the vtables, and [`vtable_layout`] rebuilds the vtables with them;
//! - [`closed_set`]: calls whose slot's complete set of targets is small
//!   compare the vtable pointer and call each target directly;
//! - [`speculative`]: calls left indirect get guarded direct calls;
//! - [`dead_slots`]: vtable entries no code can load become a trap stub;
//! - [`type_tests`]: every leftover type test is removed before codegen.
//!
//! Every call rewrite takes the call's [`VirtualCall`] handle by value, so
//! a call is rewritten at most once.

pub mod closed_set;
pub mod dead_slots;
pub mod promote;
pub mod single_impl;
pub mod speculative;
pub mod type_tests;
pub mod uniform_ret;
pub mod unique_ret;
pub mod virtual_const_prop;
pub mod vtable_layout;

use crate::error::{Error, ErrorKind, Result};
use crate::input::BitcodeInput;
use crate::policy::Policy;
use crate::summarize;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use wpd_link::outcome::Outcome;
use wpd_llvm::{Context, Module, RewriteError, VirtualCall};
use wpd_summary::{CallSite, Linkage, ModuleIdx, Plan};

/// One call site and what the backend did to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallOutcome {
    /// The call site as the summarizer recorded it.
    pub site: CallSite,
    pub outcome: Outcome,
    /// For a closed-set dispatch, the order it tests its targets in.
    pub dispatch: Option<closed_set::Dispatched>,
}

/// What the backend did to one module.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackendStats {
    /// Every call site, in the order of the module's summary.
    pub calls: Vec<CallOutcome>,
    /// Plan layouts (indices into `Plan::layouts`) this module rebuilt.
    pub layouts_rebuilt: Vec<u32>,
    /// Vtable entries this module replaced by the dead-slot stub (every
    /// copy it holds).
    pub dead_slots: u32,
    /// Type tests removed before codegen.
    pub type_tests_dropped: u32,
    /// The plan changed nothing here: the module went to ThinLTO as it was
    /// ([`passthrough`]).
    pub unchanged: bool,
    /// An unchanged split unit kept in two ([`split_apart`]): its thin part
    /// as clang wrote it, its vtables a module of their own.
    pub kept_in_two: bool,
    /// Of those, one whose vtables went to the link's regular LTO module
    /// ([`SplitPlacement::RegularLto`]) rather than being compiled with
    /// its thin part.
    pub vtables_in_regular_lto: bool,
}

impl BackendStats {
    /// Call sites with `outcome`.
    pub fn count(&self, outcome: Outcome) -> u32 {
        self.calls.iter().filter(|c| c.outcome == outcome).count() as u32
    }
}

/// One input with the plan applied ([`module`]).
pub struct Applied<'c> {
    /// Both parts of a split unit linked into one module.
    pub module: Module<'c>,
    pub stats: BackendStats,
    /// The names the plan gave this module's definitions (promotions,
    /// vtable aliases).
    pub introduced: BTreeSet<String>,
    /// The definitions a split unit's regular part brought, by name
    /// ([`definition_names`], taken before the parts are linked: a local
    /// vtable given its alias's name afterwards is not among them, and
    /// stays importable); none for a module that is not split.
    pub regular_part: Vec<String>,
}

/// The rewrite of one input, every pass in its order: parses the input,
/// applies the plan to both parts of a split unit, links them and drops
/// leftover type tests; the module the backends optimize. `index` is the
/// input's module in the plan, `hash` its content hash.
pub fn module<'c>(
    ctx: &'c Context,
    input: &BitcodeInput,
    plan: &Plan,
    index: ModuleIdx,
    hash: &str,
) -> Result<Applied<'c>> {
    let mut modules = ctx
        .parse_bitcode(&input.bytes, &input.name)
        .map_err(|e| Error::at(&input.name, format!("invalid bitcode: {}", e.message)))?;
    let policy = call_policy(plan);
    let mut stats = BackendStats::default();
    let planned = &plan.modules[index];
    let introduced = planned.promotions.iter().chain(&planned.vtable_aliases).map(|p| p.promoted.clone()).collect();

    promote::apply(&modules, &planned.promotions, &input.name)?;
    promote::keep(&modules, &planned.keep, &input.name)?;
    // Aliases first: a unique-return comparison in this very module names
    // the alias, and must not declare that name before it exists. Rebuilding
    // the vtable later retargets the alias (replaceAllUsesWith).
    promote::aliases(&modules, &planned.vtable_aliases, &input.name)?;
    {
        // `promote::apply` has renamed this module's promoted functions; the
        // summary (and the plan-vs-backend check, and the order below) know
        // a call site by the name of its function as clang wrote it.
        let original: HashMap<&str, &str> =
            planned.promotions.iter().map(|p| (p.promoted.as_str(), p.symbol.as_str())).collect();
        let parts: Vec<&Module<'_>> = modules.iter().collect();
        for mut c in summarize::scan(&parts, hash) {
            if let Some(name) = original.get(c.site.function.as_str()) {
                c.site.function = (*name).into();
            }
            let part = &modules[c.part];
            let (outcome, dispatch) = match c.call {
                Some(call) => apply(part, call, &c.site, plan, &policy).map_err(|e| {
                    Error::at(&input.name, format!("cannot apply the plan to a call in {}: {e}", c.site.function))
                })?,
                None => (Outcome::Indirect, None),
            };
            // The thin link took this call for one that loads no slot; left
            // loading one, it could reach a slot the plan made dead.
            let loads = outcome.loads_slot() || dispatch.as_ref().is_some_and(|d| d.fallback);
            if !plan.dead_slots.is_empty() && loads && !Outcome::may_load_slot(plan, &c.site, &policy) {
                return Err(Error::at(
                    &input.name,
                    format!(
                        "cannot apply the plan to a call in {}: it stays indirect, and the plan removed slots it may load (link with --wpd-no-dead-slots)",
                        c.site.function
                    ),
                )
                .of_kind(ErrorKind::DeadSlotStillRead));
            }
            stats.calls.push(CallOutcome { site: c.site, outcome, dispatch });
        }
    }
    // The summary's order: by function, then test, program order within.
    stats.calls.sort_by(|a, b| (&a.site.function, a.site.test_index).cmp(&(&b.site.function, b.site.test_index)));
    for part in &modules {
        stats.dead_slots += dead_slots::apply(part, plan, index);
        stats.layouts_rebuilt.extend(vtable_layout::apply(part, plan, index));
    }
    stats.layouts_rebuilt.sort_unstable();
    stats.layouts_rebuilt.dedup();

    let mut module = modules.remove(0);
    let regular_part = modules.iter().flat_map(definition_names).collect();
    for part in modules {
        module.link_in(part).map_err(|e| e.context(&input.name))?;
    }
    refuse_cfi(input, &module)?;
    stats.type_tests_dropped = type_tests::apply(&module) as u32;
    // The local vtables other modules name through a hidden alias take the
    // alias's name: with two names, code imported into another module
    // could compare two "distinct" declarations of one vtable, which LLVM
    // folds to false.
    for a in &planned.vtable_aliases {
        if !module.merge_hidden_alias(&a.symbol, &a.promoted) {
            return Err(Error::at(&input.name, format!("cannot give vtable {} the name {}", a.symbol, a.promoted)));
        }
    }
    Ok(Applied { module, stats, introduced, regular_part })
}

/// The names of the functions and variables `module` (a split unit's
/// regular part) defines, but its `available_externally` copies: the
/// definitions LLVM's importer must leave where they are
/// ([`Module::write_thinlto_bitcode`]), whether the part is a module of its
/// own or linked into its thin part. clang copies into that part the
/// virtual functions eligible for constant propagation; their real
/// definitions, in the thin part, LLVM may import as usual.
pub fn definition_names(module: &Module<'_>) -> Vec<String> {
    module
        .functions()
        .chain(module.globals())
        .filter(|v| !v.is_declaration() && v.linkage() != Linkage::AvailableExternally)
        .map(|v| v.name())
        .filter(|n| !n.is_empty())
        .collect()
}

/// Fails when `module` (of `input`) still holds control-flow integrity
/// checks: wpd does not lower them, and dropping them would remove them.
pub fn refuse_cfi(input: &BitcodeInput, module: &Module) -> Result<()> {
    match module.count_type_checks() {
        0 => Ok(()),
        checks => Err(Error::at(
            &input.name,
            format!(
                "{checks} control-flow integrity check(s) (-fsanitize=cfi) found; wpd does not lower CFI checks and will not drop them"
            ),
        )),
    }
}

/// Whether the closed-set dispatches of calls in `function` are to be left
/// undone, as when LLVM refuses a rewrite (its promotion utilities decline
/// calls the summaries cannot foresee): the function named by the
/// environment variable `WPD_TEST_REFUSE_DISPATCH_IN`, so that tests can
/// check what a link does then on a real program (`tests/thinlto.rs`,
/// `refused_dispatch_links_without_dead_slots`). Unset, nothing is refused.
fn refused_for_testing(function: &str) -> bool {
    static NAME: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    NAME.get_or_init(|| std::env::var("WPD_TEST_REFUSE_DISPATCH_IN").ok()).as_deref() == Some(function)
}

/// The policy a module's calls are rewritten under: the plan's visibility;
/// speculation and validation were decided by the thin link.
pub fn call_policy(plan: &Plan) -> Policy {
    Policy { whole_program_visibility: plan.options.whole_program_visibility, ..Policy::default() }
}

/// Applies the plan to one call (recorded as `site`): carries out what
/// [`Outcome::planned`] says (the one place that decides), and returns what
/// was done — `Indirect` where a guard could not be added — with the order
/// of a closed-set dispatch.
pub fn apply(
    module: &Module<'_>,
    call: VirtualCall<'_>,
    site: &CallSite,
    plan: &Plan,
    policy: &Policy,
) -> Result<(Outcome, Option<closed_set::Dispatched>), RewriteError> {
    let planned = Outcome::planned(plan, site, policy);
    let Some(d) = site.offset.and_then(|off| plan.decision(&site.type_id, off)) else {
        return Ok((Outcome::Indirect, None));
    };
    let by_args = d.for_args(site.const_args.as_deref());
    match (planned, &d.target, by_args) {
        (Outcome::SingleImpl, Some(target), _) => single_impl::apply(module, call, target)?,
        (Outcome::UniformRetVal, _, Some(a)) => uniform_ret::apply(module, call, a.value)?,
        (Outcome::UniqueRetVal, _, Some(a)) => unique_ret::apply(module, call, a)?,
        (Outcome::VirtualConstProp | Outcome::VirtualConstProp1Bit, _, Some(a)) => {
            virtual_const_prop::apply(module, call, a)?
        }
        (Outcome::ClosedSet, _, _) if refused_for_testing(&site.function) => return Ok((Outcome::Indirect, None)),
        (Outcome::ClosedSet, _, _) => {
            return Ok(match closed_set::apply(module, call, &d.closed_set, d.dispatch_index)? {
                Some(dispatched) => (Outcome::ClosedSet, Some(dispatched)),
                None => (Outcome::Indirect, None),
            });
        }
        (Outcome::Speculative, _, _) if d.speculative.is_empty() => {
            // A wrapper's guarded dispatch (`Outcome::wrapper_guarded`).
            return Ok(match closed_set::apply_in_wrapper(module, call, &d.closed_set, d.dispatch_index)? {
                Some(dispatched) => (Outcome::Speculative, Some(dispatched)),
                None => (Outcome::Indirect, None),
            });
        }
        (Outcome::Speculative, _, _) => {
            let guarded = speculative::apply(module, call, &d.speculative)? > 0;
            return Ok((if guarded { Outcome::Speculative } else { Outcome::Indirect }, None));
        }
        _ => return Ok((Outcome::Indirect, None)),
    }
    Ok((planned, None))
}
