//! `fikit-sim export --perfetto`: traces, and simulated runs, as Chrome
//! trace-event JSON, the format the Perfetto UI (ui.perfetto.dev) and
//! `chrome://tracing` open.
//!
//! A **trace** becomes one process per job with one thread track per host
//! thread (its API calls and synchronizations), one per CUDA stream (kernels,
//! copies, memsets) and a `GPU idle gaps` track whose slices are the job's
//! inter-kernel idle gaps ([`fikit_trace::gaps`]), named by cause (`host`,
//! `sync`, `other`). A flow arrow (`"ph":"s"` / `"ph":"f"` with `"bp":"e"`,
//! as Kineto writes them) runs from each launch call to the GPU operation it
//! issued (they share the correlation id; the call is found from the
//! operation's `launch_*` columns). Times are µs since the job's first event
//! (or, with `wall_clock`, since the earliest event of all jobs on the Unix
//! clock), written as exact decimals with nanosecond precision.
//!
//! A **simulated run** becomes one process per policy and job with a `job`
//! track (arrival to finish: the JCT) and one track per stream with the
//! kernels where the policy ran them; a kernel the policy paused and resumed
//! is split into parts (`[part k/n]`) joined by flow arrows.
//!
//! Slices of one track that overlap without nesting (clock granularity,
//! programmatic dependent launch) go to an extra `(overlaps)` track, so every
//! track nests properly. The output is deterministic: the same input gives
//! the same bytes.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

pub use json::{size_warning, us};
pub use runs::{OpInfo, PolicyRun, from_runs, op_infos, run_for_export};
pub use traces::{TraceInput, from_traces, read_traces, scenario_traces, wall_clock_problem};

/// Slices placed on tracks, cut to `max_events`, flows numbered.
mod assemble;
/// The JSON writer.
mod json;
/// Simulated runs' slices.
mod runs;
#[cfg(test)]
mod tests;
/// Traces' slices.
mod traces;

/// Above this size the writer's caller should warn: the Perfetto UI loads a
/// JSON trace into browser memory, and fails on files of a few hundred MB.
pub const SIZE_WARN_BYTES: u64 = 256 * 1024 * 1024;

/// Tracks per job at most: track ids are `pid * TIDS_PER_PID + n`.
const TIDS_PER_PID: u32 = 10_000;

/// How to export.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportOptions {
    /// Keep only the first N slices of each job (by start time; flows whose
    /// ends were cut are dropped); `None` keeps everything.
    pub max_events: Option<usize>,
    /// Traces only: put every job on the Unix clock (`fikit.clock_offset_ns`),
    /// so processes profiled at the same time line up; otherwise each job
    /// starts at 0.
    pub wall_clock: bool,
}

/// A value in a slice's `args`.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// A string.
    Str(String),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// Grid or block dimensions, written as `[x, y, z]`.
    Dims([u32; 3]),
}

/// One end of a flow arrow, bound to a slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowEnd {
    /// The flow id, unique in the export.
    pub id: u64,
    /// True for the start (`"ph":"s"`), false for the finish (`"ph":"f"`, `"bp":"e"`).
    pub start: bool,
    /// Category and name of the flow (`launch`, `preemption`).
    pub cat: &'static str,
}

/// One slice: a complete (`"ph":"X"`) event.
#[derive(Debug, Clone, PartialEq)]
pub struct Slice {
    /// Name shown on the slice.
    pub name: String,
    /// Category: `kernel`, `memcpy`, `memset`, `api`, `sync`, `gap`, `job`.
    pub cat: &'static str,
    /// Process.
    pub pid: u32,
    /// Thread (track).
    pub tid: u32,
    /// Start, ns on the export's time base.
    pub start_ns: i64,
    /// Duration, ns.
    pub dur_ns: i64,
    /// Arguments shown in the details panel, in order.
    pub args: Vec<(&'static str, Arg)>,
    /// Flow ends bound to this slice, written right after it.
    pub flows: Vec<FlowEnd>,
}

impl Slice {
    /// End, ns.
    pub fn end_ns(&self) -> i64 {
        self.start_ns + self.dur_ns
    }

    /// The argument named `key`.
    pub fn arg(&self, key: &str) -> Option<&Arg> {
        self.args.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
}

/// A process (`process_name` metadata event).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process {
    /// Process id.
    pub pid: u32,
    /// Name.
    pub name: String,
}

/// A thread track (`thread_name` metadata event).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Track {
    /// Process.
    pub pid: u32,
    /// Thread id, unique across processes.
    pub tid: u32,
    /// Name.
    pub name: String,
}

/// What a job's slices were cut to by [`ExportOptions::max_events`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncation {
    /// Process (job) cut.
    pub pid: u32,
    /// Slices kept.
    pub kept: usize,
    /// Slices the job had.
    pub total: usize,
    /// The first slice left out starts here, ns on the export's time base.
    pub cut_at_ns: i64,
}

/// A Chrome trace-event document.
#[derive(Debug, Clone, Default)]
pub struct ChromeTrace {
    /// Processes, in pid order.
    pub processes: Vec<Process>,
    /// Tracks, in tid order.
    pub tracks: Vec<Track>,
    /// Slices in write order: by start, then process, track, longer first.
    pub slices: Vec<Slice>,
    /// Jobs cut by `max_events`.
    pub truncated: Vec<Truncation>,
    /// Written as the document's `otherData`.
    pub metadata: Map<String, Value>,
}

impl ChromeTrace {
    /// Events the JSON holds: metadata events, slices and flow ends.
    pub fn event_count(&self) -> usize {
        2 * (self.processes.len() + self.tracks.len())
            + self.slices.len()
            + self.slices.iter().map(|s| s.flows.len()).sum::<usize>()
    }

    /// The most slices any job has (for suggesting a `--max-events`).
    pub fn max_slices_per_process(&self) -> usize {
        let mut per: BTreeMap<u32, usize> = BTreeMap::new();
        for s in &self.slices {
            *per.entry(s.pid).or_default() += 1;
        }
        per.into_values().max().unwrap_or(0)
    }
}

/// The `producer` of the document's `otherData`: fikit-sim and its version.
fn producer() -> String {
    format!("fikit-sim {}", env!("CARGO_PKG_VERSION"))
}

/// A kernel key as a slice argument: `0x` and 16 hex digits.
fn key_hex(key: u64) -> Arg {
    Arg::Str(format!("0x{key:016x}"))
}
