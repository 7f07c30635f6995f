//! wpd's on-disk formats: module summaries (`.wpds`), link plans (`.wpdp`)
//! and the container they share.
//!
//! This crate has no LLVM dependency so that the thin link, dump tools and
//! fuzzers build and run without it. Every file starts with a magic and a
//! format version; the body is bincode, guarded by a length and a checksum.
//! Decoded values are validated ([`validate`]) before any consumer sees them.

pub mod container;
pub mod error;
pub mod expr;
mod fast_decode;
pub mod ids;
pub mod name;
pub mod plan;
pub mod summary;
pub mod validate;

pub use container::{FormatError, Kind, read_file, write_file_atomic};
pub use error::Error;
pub use expr::{CmpPred, Expr, ExprNode, ExprOp};
pub use ids::{ModuleIdx, Name, PerModule, TypeId, VtableIdx};
pub use plan::*;
pub use summary::*;
pub use validate::Validate;
