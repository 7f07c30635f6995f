//! The one error type of wpd's pipeline: one line, naming the file (and
//! symbol) concerned. It is the base crate's (`wpd_summary::error`), so
//! errors cross the crates, the LLVM wrappers included, without conversion.

pub use wpd_summary::error::{Error, ErrorKind, Result};
