//! fikit trace format v1.
//!
//! A trace is one Parquet file per profiled process (one job): one table of
//! events (kernels, memory copies and sets, API calls, synchronizations) with a
//! `kind` column, and the capture's metadata as file-level key/value pairs under
//! `fikit.*`. traces/README.md documents every column, unit and key.
//!
//! - [`model`]: the in-memory [`Trace`];
//! - [`write_trace`] / [`read_trace`]: Parquet out and in, the reader validating
//!   everything ([`TraceError`] names the file, row or column and the problem);
//! - [`build`]: the one way sources' rows become a trace ([`TraceBuilder`]);
//! - [`priority`]: job priorities as commands take them;
//! - [`gaps`]: busy intervals, inter-kernel idle gaps and their causes;
//! - [`summary`]: per-job summaries and their tables.

pub use fikit_trace_api as api;
pub mod build;
pub mod error;
pub mod fixture;
pub mod gaps;
pub mod model;
pub mod name;
pub mod pressure;
pub mod priority;
pub mod read;
pub mod repair;
pub mod schema;
pub mod summary;
pub mod table;
pub mod write;

use std::path::{Path, PathBuf};

pub use build::TraceBuilder;
pub use error::{Location, Problem, TraceError};
pub use model::*;
pub use name::parse_job_name;
pub use polars;
pub use priority::{MAX_PRIORITY, PriorityError, parse_priority};
pub use read::{
    MAX_TIMESTAMP_NS, check_structure, parse_table, parse_trace, read_metadata, read_table,
    read_trace, timestamp_problem,
};
pub use write::{metadata_pairs, to_dataframe, write_dataframe, write_dataframes, write_trace};

/// The file extension of traces.
pub const EXTENSION: &str = "parquet";

/// Expands files and folders into the trace files they name: a file is taken as
/// it is; a folder is searched recursively for `*.parquet` files. The result is
/// sorted and free of duplicates, so runs are deterministic.
pub fn discover(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, TraceError> {
    let mut out = Vec::new();
    for input in inputs {
        let meta = std::fs::metadata(input).map_err(|e| TraceError::new(input, Problem::Io(e)))?;
        if meta.is_dir() {
            walk(input, &mut out)?;
        } else {
            out.push(input.clone());
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), TraceError> {
    let entries = std::fs::read_dir(dir).map_err(|e| TraceError::new(dir, Problem::Io(e)))?;
    for entry in entries {
        let entry = entry.map_err(|e| TraceError::new(dir, Problem::Io(e)))?;
        let path = entry.path();
        let ty = entry
            .file_type()
            .map_err(|e| TraceError::new(&path, Problem::Io(e)))?;
        if ty.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == EXTENSION) {
            out.push(path);
        }
    }
    Ok(())
}
