//! `fikit-sim inspect`: summarize traces.

use std::path::PathBuf;

use fikit_trace::summary::{JobSummary, render_table, summarize};
use fikit_trace::{TraceError, discover, read_trace};

/// How to print summaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Text tables for people.
    Table,
    /// A JSON array of job summaries.
    Json,
}

/// What `inspect` does, independent of the command line.
#[derive(Debug, Clone)]
pub struct InspectOptions {
    /// Trace files or folders to search for `*.parquet`.
    pub inputs: Vec<PathBuf>,
    /// Output format.
    pub format: Format,
    /// How many kernels to list per job.
    pub top: usize,
}

/// Errors of `inspect`: all of them are about the input.
#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    /// A trace could not be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The inputs named no trace file.
    #[error("no trace files (*.parquet) found in {0}")]
    NoTraces(String),
}

/// The trace files the inputs name (files as given, folders searched
/// recursively, sorted); an error when there are none, or when a folder
/// named holds none (a mistyped folder beside good ones is not ignored).
pub fn trace_files(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, InspectError> {
    let mut files = Vec::new();
    for input in inputs {
        let found = discover(std::slice::from_ref(input))?;
        if found.is_empty() && input.is_dir() {
            return Err(InspectError::NoTraces(input.display().to_string()));
        }
        files.extend(found);
    }
    files.sort();
    files.dedup();
    if files.is_empty() {
        let names: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
        return Err(InspectError::NoTraces(names.join(", ")));
    }
    Ok(files)
}

/// Reads every trace the inputs name and summarizes each, in path order.
pub fn summaries(opts: &InspectOptions) -> Result<Vec<JobSummary>, InspectError> {
    trace_files(&opts.inputs)?
        .iter()
        .map(|f| {
            let trace = read_trace(f)?;
            Ok(summarize(&trace, &f.display().to_string(), opts.top))
        })
        .collect()
}

/// Renders the summaries in the chosen format.
pub fn render(jobs: &[JobSummary], format: Format) -> String {
    match format {
        Format::Table => render_table(jobs),
        Format::Json => {
            let mut s =
                serde_json::to_string_pretty(jobs).expect("summaries always serialize to JSON");
            s.push('\n');
            s
        }
    }
}
