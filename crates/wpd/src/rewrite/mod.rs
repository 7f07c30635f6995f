//! Rewrites of one module by the plan, one file per transformation:
//! - [`promote`]: local targets named from other modules become hidden globals;
//! - [`single_impl`]: calls whose slot has one target call it directly;
//! - [`type_tests`]: every leftover type test is removed before codegen.

pub mod promote;
pub mod single_impl;
pub mod type_tests;
