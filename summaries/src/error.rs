//! The one error type of wpd: one line, naming the file (and symbol)
//! concerned; parallel code makes backtraces useless. It lives in this
//! base crate so that every crate (the LLVM wrappers, the thin link, the
//! pipeline, the front ends) returns the same type without conversion;
//! `wpd_link::error` and `wpd::error` re-export it.

use std::fmt;

/// wpd's error: one line, naming the input (and symbol) concerned. One type
/// for the whole pipeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The file or `archive(member)` concerned.
    pub input: Option<String>,
    pub message: String,
    /// What the pipeline may still do about it.
    pub kind: ErrorKind,
}

/// The errors a caller can recover from, told apart from the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErrorKind {
    /// Nothing to do but report it.
    #[default]
    Fatal,
    /// A call the plan took for one that loads no slot (made direct or
    /// dispatched without a fallback) stays indirect in the backend, while
    /// the plan made slots dead: it may load one. The same link planned
    /// without dead slots is sound.
    DeadSlotStillRead,
}

impl Error {
    pub fn at(input: impl Into<String>, message: impl Into<String>) -> Error {
        Error { input: Some(input.into()), message: message.into(), kind: ErrorKind::Fatal }
    }

    pub fn msg(message: impl Into<String>) -> Error {
        Error { input: None, message: message.into(), kind: ErrorKind::Fatal }
    }

    /// The same error, of `kind`.
    pub fn of_kind(self, kind: ErrorKind) -> Error {
        Error { kind, ..self }
    }

    /// The same error, reached through `outer` (an archive member's file,
    /// a script's input): the message keeps the inner input.
    pub fn context(self, outer: impl Into<String>) -> Error {
        let outer = outer.into();
        match self.input {
            Some(inner) => Error { input: Some(outer), message: format!("{inner}: {}", self.message), kind: self.kind },
            None => Error { input: Some(outer), ..self },
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = self.message.replace('\n', " ");
        match &self.input {
            Some(input) => write!(f, "{input}: {message}"),
            None => f.write_str(&message),
        }
    }
}

impl std::error::Error for Error {}

impl From<crate::FormatError> for Error {
    fn from(e: crate::FormatError) -> Error {
        Error::at(e.path.display().to_string(), e.what)
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
