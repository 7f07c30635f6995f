//! backend: one bitcode file + the plan → one native object. Parses both
//! parts of a split unit, applies the plan to each part, links them, drops
//! leftover type tests, optimizes and emits code.

use crate::codegen::{self, CodegenOptions};
use crate::error::{Error, Result};
use crate::input::BitcodeInput;
use crate::policy::Policy;
use crate::rewrite;
use crate::summarize;
use wpd_llvm::Context;
use wpd_summary::{Plan, Resolution};

/// What the backend did to one module.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BackendStats {
    /// Calls rewritten per resolution kind.
    pub single_impl: u32,
    pub uniform_ret_val: u32,
    pub unique_ret_val: u32,
    pub virtual_const_prop: u32,
    /// Calls given guarded direct calls.
    pub speculative: u32,
    /// Vtables rebuilt with bytes beside them.
    pub vtables_rebuilt: u32,
    /// Type tests removed before codegen.
    pub type_tests_dropped: u32,
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

/// Compiles one bitcode input under `plan` into a native object.
pub fn backend(input: &BitcodeInput, plan: &Plan, opts: &CodegenOptions) -> Result<(Vec<u8>, BackendStats)> {
    let hash = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&input.bytes));
    let index = plan_module(plan, input, &hash)?;
    let ctx = Context::new();
    let mut modules = ctx
        .parse_bitcode(&input.bytes, &input.name)
        .map_err(|e| Error::at(&input.name, format!("invalid bitcode: {e}")))?;
    let policy = Policy { whole_program_visibility: plan.options.whole_program_visibility, ..Policy::default() };
    let mut stats = BackendStats::default();

    rewrite::promote::apply(&modules, &plan.modules[index].promotions, &input.name)?;
    // Aliases first: a unique-return comparison in this very module names
    // the alias, and must not declare that name before it exists. Rebuilding
    // the vtable later retargets the alias (replaceAllUsesWith).
    rewrite::promote::aliases(&modules, &plan.modules[index].vtable_aliases, &input.name)?;
    {
        let scan = summarize::scan(&modules, &hash);
        for c in &scan.calls {
            let (Some(call), Some(offset)) = (c.call, c.site.offset) else { continue };
            let Some(d) = plan.decision(&c.site.type_id, offset) else { continue };
            let part = &modules[c.part];
            if apply_resolution(part, c, call, d, &policy, &mut stats).map_err(|e| Error::at(&input.name, e))? {
                continue;
            }
            if !d.speculative.is_empty()
                && c.site.assumed
                && rewrite::speculative::apply(part, call, &d.speculative) > 0
            {
                stats.speculative += 1;
            }
        }
    }
    for part in &modules {
        stats.vtables_rebuilt += rewrite::vtable_layout::apply(part, plan, index as u32) as u32;
    }

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
    let object = codegen::emit(&module, opts).map_err(|e| Error::at(&input.name, e))?;
    Ok((object, stats))
}

/// Applies the unguarded resolution of `d` to one call; false when the call
/// is left indirect.
fn apply_resolution<'m>(
    part: &'m wpd_llvm::Module<'_>,
    c: &summarize::ScannedCall<'m>,
    call: wpd_llvm::Value<'m>,
    d: &wpd_summary::SlotDecision,
    policy: &Policy,
    stats: &mut BackendStats,
) -> std::result::Result<bool, String> {
    if policy.call_site_blocker(&c.site).is_some() {
        return Ok(false);
    }
    if d.resolution == Resolution::SingleImpl {
        let Some(target) = &d.target else { return Ok(false) };
        rewrite::single_impl::apply(part, call, target);
        stats.single_impl += 1;
        return Ok(true);
    }
    let Some(a) = d.for_args(c.site.const_args.as_deref()) else { return Ok(false) };
    let (done, counter) = match a.resolution {
        Resolution::UniformRetVal => (rewrite::uniform_ret::apply(part, call, a.value), &mut stats.uniform_ret_val),
        Resolution::UniqueRetVal => (rewrite::unique_ret::apply(part, call, c.test, a), &mut stats.unique_ret_val),
        Resolution::VirtualConstProp => {
            (rewrite::virtual_const_prop::apply(part, call, c.test, a), &mut stats.virtual_const_prop)
        }
        Resolution::None | Resolution::SingleImpl => return Ok(false),
    };
    if !done {
        return Err(format!("cannot apply the plan to a call in {}", c.site.function));
    }
    *counter += 1;
    Ok(true)
}
