//! Rewrites of one module by the plan, one file per transformation:
//! - [`promote`]: local targets named from other modules become hidden
//!   globals, local vtables compared from other modules get hidden aliases;
//! - [`single_impl`]: calls whose slot has one target call it directly;
//! - [`uniform_ret`]: calls whose targets all return one constant become it;
//! - [`unique_ret`]: boolean calls true for one vtable become a comparison;
//! - [`virtual_const_prop`]: calls become loads of results stored beside
//!   the vtables, and [`vtable_layout`] rebuilds the vtables with them;
//! - [`speculative`]: calls left indirect get guarded direct calls;
//! - [`type_tests`]: every leftover type test is removed before codegen.
//!
//! Every call rewrite takes the call's [`VirtualCall`] handle by value, so
//! a call is rewritten at most once.

pub mod promote;
pub mod single_impl;
pub mod speculative;
pub mod type_tests;
pub mod uniform_ret;
pub mod unique_ret;
pub mod virtual_const_prop;
pub mod vtable_layout;

use crate::policy::Policy;
use wpd_link::outcome::Outcome;
use wpd_llvm::{Module, RewriteError, VirtualCall};
use wpd_summary::{CallSite, Plan};

/// Applies the plan to one call (recorded as `site`): carries out what
/// [`Outcome::planned`] says (the one place that decides), and returns what
/// was done — `Indirect` where a guard could not be added.
pub fn apply(
    module: &Module<'_>,
    call: VirtualCall<'_>,
    site: &CallSite,
    plan: &Plan,
    policy: &Policy,
) -> Result<Outcome, RewriteError> {
    let planned = Outcome::planned(plan, site, policy);
    let Some(d) = site.offset.and_then(|off| plan.decision(&site.type_id, off)) else {
        return Ok(Outcome::Indirect);
    };
    let by_args = d.for_args(site.const_args.as_deref());
    match (planned, &d.target, by_args) {
        (Outcome::SingleImpl, Some(target), _) => single_impl::apply(module, call, target)?,
        (Outcome::UniformRetVal, _, Some(a)) => uniform_ret::apply(module, call, a.value)?,
        (Outcome::UniqueRetVal, _, Some(a)) => unique_ret::apply(module, call, a)?,
        (Outcome::VirtualConstProp | Outcome::VirtualConstProp1Bit, _, Some(a)) => {
            virtual_const_prop::apply(module, call, a)?
        }
        (Outcome::Speculative, _, _) => {
            return Ok(if speculative::apply(module, call, &d.speculative)? > 0 {
                Outcome::Speculative
            } else {
                Outcome::Indirect
            });
        }
        _ => return Ok(Outcome::Indirect),
    }
    Ok(planned)
}
