//! The process's allocator at run time: mimalloc (see `GLOBAL` in
//! main.rs), which serves Rust, LLVM and lld alike.
//!
//! mimalloc gives a page whose blocks are all freed back to the system
//! (`madvise(MADV_DONTNEED)`) only after its purge delay, 10 ms by default:
//! LLVM's backends free and allocate at such a rate that pages freed
//! meanwhile stay resident while new ones are touched. With a delay of 0,
//! glslang's and protoc's links peaked at about 6% less memory (211 against
//! 225 MB, 170 against 182 MB) and took 1–23% longer (docs/performance.md,
//! "Peak memory against link time: the allocator's purge delay"). The
//! default is the faster link; `--wpd-low-memory` chooses the smaller one.
//!
//! One of two `unsafe` places outside wpd's FFI crates (the other maps
//! summary files, summaries/src/container.rs), and why it is here: setting
//! a mimalloc option is a C call (`mi_option_set`; neither the `mimalloc`
//! crate nor anything else offers a safe one, and the environment variable
//! is read before `main`), and it concerns the process's allocator, which
//! only the binaries choose. `crates/wpd-llvm` is LLVM's FFI and is linked
//! into the gold/BFD plugin too, which lives in another program's heap and
//! must never touch mimalloc; so the two calls stay in the binary that
//! links mimalloc, each with its SAFETY comment. `low_memory_purges_at_once`
//! (tests/link_options.rs) fails if `PURGE_DELAY` stops naming the option.
#![allow(unsafe_code)]

use libmimalloc_sys::{mi_option_get, mi_option_set, mi_option_t};

/// mimalloc's `mi_option_purge_delay`: the 16th option of `mi_option_e` in
/// its version 2 `mimalloc.h` (after `mi_option_eager_commit_delay`, 14,
/// which libmimalloc-sys names), in milliseconds.
const PURGE_DELAY: mi_option_t = 15;

/// `--wpd-low-memory`: pages are returned as soon as they are free.
pub fn return_freed_pages_at_once() {
    // SAFETY: `mi_option_set` stores a value in mimalloc's option table;
    // PURGE_DELAY is an option of the linked mimalloc (version 2, the
    // `v2` feature in Cargo.toml), and any value is valid for it (0:
    // purge at once). mimalloc reads the option on each purge, from any
    // thread.
    unsafe { mi_option_set(PURGE_DELAY, 0) }
}

/// The purge delay mimalloc works with (the report's `allocator`), read
/// back from mimalloc itself.
pub fn purge_delay_ms() -> std::ffi::c_long {
    // SAFETY: `mi_option_get` reads mimalloc's option table (initializing
    // the entry from `MIMALLOC_PURGE_DELAY` on first use); PURGE_DELAY is
    // one of its options (above).
    unsafe { mi_option_get(PURGE_DELAY) }
}
