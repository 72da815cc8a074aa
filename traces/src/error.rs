//! Errors of reading and writing traces. Every error names the file and, where
//! it applies, the row or column, and says what is wrong.

use std::fmt;
use std::path::{Path, PathBuf};

/// An error about one trace file.
#[derive(Debug, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct TraceError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong with it.
    pub problem: Problem,
}

impl TraceError {
    /// An error about `path`.
    pub fn new(path: &Path, problem: Problem) -> Self {
        TraceError {
            path: path.to_path_buf(),
            problem,
        }
    }
}

/// Where in a file a problem lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// The file as a whole.
    File,
    /// A file-level metadata key.
    Key(String),
    /// A column.
    Column(String),
    /// A row (0-based, in file order) and, where it applies, a column.
    Row {
        /// Row index, 0-based.
        row: usize,
        /// The row's `kind`, when it is known.
        kind: Option<String>,
        /// The column, when the problem is one cell.
        column: Option<String>,
    },
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::File => Ok(()),
            Location::Key(k) => write!(f, "metadata key `{k}`: "),
            Location::Column(c) => write!(f, "column `{c}`: "),
            Location::Row { row, kind, column } => {
                write!(f, "row {row}")?;
                if let Some(kind) = kind {
                    write!(f, " ({kind})")?;
                }
                if let Some(column) = column {
                    write!(f, ", column `{column}`")?;
                }
                write!(f, ": ")
            }
        }
    }
}

/// What is wrong with a trace file.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    /// The file could not be opened, read or written.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The file has no bytes.
    #[error("empty file (0 bytes): not a trace")]
    Empty,
    /// The file does not start with the Parquet magic bytes.
    #[error("not a Parquet file (it does not begin with the magic bytes `PAR1`)")]
    NotParquet,
    /// The file begins like Parquet but its footer is missing or broken.
    #[error("truncated or corrupt Parquet file ({0})")]
    Truncated(String),
    /// A Parquet file without fikit's metadata.
    #[error(
        "not a fikit trace: the Parquet file has no `fikit.format_version` metadata key (was it written by fikit-profile or fikit-sim import?)"
    )]
    NotATrace,
    /// A format version this build does not read.
    #[error("format version {found} is not supported: this build reads version {supported}")]
    Version {
        /// The version in the file.
        found: String,
        /// The version this crate reads.
        supported: u32,
    },
    /// A value that is wrong at a location.
    #[error("{location}{message}")]
    Invalid {
        /// Where.
        location: Location,
        /// What is wrong.
        message: String,
    },
    /// Polars failed while writing or reading columns.
    #[error("Parquet: {0}")]
    Parquet(String),
}

impl Problem {
    /// A problem with a metadata key.
    pub fn key(key: &str, message: impl Into<String>) -> Self {
        Problem::Invalid {
            location: Location::Key(key.to_string()),
            message: message.into(),
        }
    }

    /// A problem with a column.
    pub fn column(column: &str, message: impl Into<String>) -> Self {
        Problem::Invalid {
            location: Location::Column(column.to_string()),
            message: message.into(),
        }
    }

    /// A problem with a row, optionally one cell.
    pub fn row(
        row: usize,
        kind: Option<&str>,
        column: Option<&str>,
        message: impl Into<String>,
    ) -> Self {
        Problem::Invalid {
            location: Location::Row {
                row,
                kind: kind.map(str::to_string),
                column: column.map(str::to_string),
            },
            message: message.into(),
        }
    }
}
