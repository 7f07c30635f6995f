//! wpd's error type: one line, naming the file (and symbol) concerned. It is
//! the thin link's own (`wpd_link::error`), so errors cross the crates
//! without conversion.

pub use wpd_link::error::{Error, ErrorKind, Result};
