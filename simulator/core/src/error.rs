//! The one shape of a bad input file: it could not be read, or it is not
//! valid. Each names the file; the modules that read files (GPU models,
//! scenarios, sweep specs and rows, Perfetto export) use it as theirs or
//! wrap it.

use std::io;
use std::path::Path;

/// A file that could not be read or is not valid.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The file could not be read: `PATH: REASON`.
    #[error("{path}: {reason}")]
    Io {
        /// The file.
        path: String,
        /// Why (in the message, so not also the error's source: `{:#}` names it once).
        reason: io::Error,
    },
    /// The file could not be read, named by what it should hold: `cannot
    /// read the WHAT PATH`. The reason is the error's source, so `{:#}`
    /// (anyhow's chain) names it once.
    #[error("cannot read the {what} {path}")]
    Unreadable {
        /// What the file should hold ("scenario").
        what: &'static str,
        /// The file.
        path: String,
        /// Why.
        source: io::Error,
    },
    /// The file is not valid: `PATH: MESSAGE`.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

impl FileError {
    /// [`FileError::Io`] for `path`.
    pub fn io(path: &Path, source: io::Error) -> FileError {
        FileError::Io {
            path: path.display().to_string(),
            reason: source,
        }
    }

    /// [`FileError::Unreadable`]: `path`, which should hold a `what`.
    pub fn unreadable(what: &'static str, path: &Path, source: io::Error) -> FileError {
        FileError::Unreadable {
            what,
            path: path.display().to_string(),
            source,
        }
    }

    /// [`FileError::Invalid`] for `path`.
    pub fn invalid(path: &Path, message: impl Into<String>) -> FileError {
        FileError::Invalid {
            path: path.display().to_string(),
            message: message.into(),
        }
    }
}
