//! Fleet sweeps: a sweep spec (JSON: traces, jobs per GPU, which groups,
//! policies, model files, a grid of model parameters) expands into numbered
//! items, one group of jobs on one model variant. `--shard K/N` runs the
//! K-th of N contiguous ranges of item numbers and writes their rows as
//! Parquet stamped with the spec's hash; [`merge`] checks that every shard of
//! one spec is there exactly once and joins them. The whole spec on one
//! machine (`1/1`) gives the same rows, in the same order.
//!
//! Items are numbered variant-major: item `v * groups + g` is group `g` on
//! model variant `v`. Pairs are numbered tile by tile, never listed: the
//! pairs `(high, low)` of `n` jobs are cut into tiles of [`TILE`] x [`TILE`]
//! jobs, numbered tile after tile (row-major), so a contiguous range of
//! items (a shard) touches few tiles and reads only their jobs' traces:
//! a shard of 31,000 pairs out of 10,000 traces reads about 600 of them.
//! With at most [`TILE`] jobs there is one tile, and the order is the classic
//! sweep's: every ordered pair, high job first, in job order.

use std::path::Path;

use crate::error::FileError;
use crate::sim::engine::RunError;

pub use items::{MAX_LISTED_GROUPS, Shard, TILE, cross_pair, ordered_pair};
pub use merge::{check_shards, merge, merge_into};
pub use rows::{RowsMeta, read_rows, write_rows};
pub use run::{SweepRow, run_shard};
pub use spec::{Combos, MAX_VARIANTS, Resolved, SweepSpec, Variant};

/// Items: groups numbered tile by tile, and shards of them.
mod items;
/// The merge of a spec's shards.
mod merge;
/// Rows files (Parquet with the spec's hash).
mod rows;
/// Running a shard's items.
mod run;
/// The spec and its resolution.
mod spec;

/// Errors of a sweep spec, its shards and their merge: bad input, each
/// naming the file and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// The spec (or a model file it names, or a rows file) cannot be read
    /// or is not valid: `PATH: MESSAGE`.
    #[error(transparent)]
    File(#[from] FileError),
    /// A trace could not be read.
    #[error(transparent)]
    Trace(#[from] fikit_trace::TraceError),
    /// The shards do not make one whole sweep, or a rows file is not one.
    #[error("{0}")]
    Merge(String),
    /// A simulation failed (its message in this one's, so not also its
    /// source: `{:#}` names it once).
    #[error("simulating: {0}")]
    Run(RunError),
}

impl From<RunError> for FleetError {
    fn from(e: RunError) -> FleetError {
        FleetError::Run(e)
    }
}

impl FleetError {
    pub(super) fn invalid(path: &Path, message: impl Into<String>) -> FleetError {
        FleetError::File(FileError::invalid(path, message))
    }
}
