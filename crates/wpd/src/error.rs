//! wpd's error type: one line, naming the file (and symbol) concerned.

use std::fmt;

/// An error with the input it concerns. `Display` gives one line.
#[derive(Debug)]
pub struct Error {
    /// The file (or `archive.a(member.o)`) concerned, when there is one.
    pub input: Option<String>,
    pub message: String,
}

impl Error {
    /// An error about `input`.
    pub fn at(input: impl Into<String>, message: impl Into<String>) -> Error {
        Error { input: Some(input.into()), message: message.into() }
    }
    /// An error not tied to one input.
    pub fn msg(message: impl Into<String>) -> Error {
        Error { input: None, message: message.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Keep it on one line whatever LLVM or the OS said.
        let message = self.message.replace('\n', " ");
        match &self.input {
            Some(input) => write!(f, "{input}: {message}"),
            None => f.write_str(&message),
        }
    }
}

impl std::error::Error for Error {}

impl From<wpd_summary::FormatError> for Error {
    fn from(e: wpd_summary::FormatError) -> Error {
        Error::at(e.path.display().to_string(), e.what)
    }
}

impl From<wpd_link::Error> for Error {
    fn from(e: wpd_link::Error) -> Error {
        Error { input: e.input, message: e.message }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
