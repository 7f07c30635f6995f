//! The linker's command line, read as the linker reads it: `options.rs`
//! is the one table of ld options (names, value form, effect on
//! resolution, action), `args.rs` the scanner over that table that builds
//! the link line ([`wpd_link::LinkLine`]) and the link's settings, and
//! `inputs.rs` the resolution of that line with real symbol tables (LLVM's
//! irsymtab for bitcode, ELF for the rest) and the scan of the native
//! units it loads. wpd-ld reads its own command line with them; the
//! linker plugin reads its linker's when the linker does not show it the
//! native files (mold).

pub mod args;
pub mod inputs;
pub mod options;
