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

pub mod promote;
pub mod single_impl;
pub mod speculative;
pub mod type_tests;
pub mod uniform_ret;
pub mod unique_ret;
pub mod virtual_const_prop;
pub mod vtable_layout;
