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

use crate::backend::Outcome;
use crate::policy::Policy;
use wpd_llvm::{Module, RewriteError, VirtualCall};
use wpd_summary::{CallSite, Plan, Resolution};

/// Applies the plan to one call (recorded as `site`): the unguarded
/// resolution when the slot and the call allow it, else guarded speculation
/// when planned; returns what was done.
pub fn apply(
    module: &Module<'_>,
    call: VirtualCall<'_>,
    site: &CallSite,
    plan: &Plan,
    policy: &Policy,
) -> Result<Outcome, RewriteError> {
    let Some(d) = site.offset.and_then(|off| plan.decision(&site.type_id, off)) else {
        return Ok(Outcome::Indirect);
    };
    if policy.call_site_blocker(site).is_none() {
        if d.resolution == Resolution::SingleImpl
            && let Some(target) = &d.target
        {
            single_impl::apply(module, call, target)?;
            return Ok(Outcome::SingleImpl);
        }
        if let Some(a) = d.for_args(site.const_args.as_deref()) {
            match a.resolution {
                Resolution::UniformRetVal => {
                    uniform_ret::apply(module, call, a.value)?;
                    return Ok(Outcome::UniformRetVal);
                }
                Resolution::UniqueRetVal if a.member_symbol.is_some() => {
                    unique_ret::apply(module, call, a)?;
                    return Ok(Outcome::UniqueRetVal);
                }
                Resolution::VirtualConstProp => {
                    virtual_const_prop::apply(module, call, a)?;
                    let one_bit = a.bit.is_some();
                    return Ok(if one_bit { Outcome::VirtualConstProp1Bit } else { Outcome::VirtualConstProp });
                }
                _ => {}
            }
        }
    }
    if !d.speculative.is_empty() && site.assumed && speculative::apply(module, call, &d.speculative)? > 0 {
        return Ok(Outcome::Speculative);
    }
    Ok(Outcome::Indirect)
}
