//! A trace's slices: host tracks (API calls, synchronizations), stream
//! tracks (kernels, copies, memsets) with flows from their launch calls,
//! and the GPU's idle gaps.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use fikit_trace::gaps::{GapCause, busy_intervals, idle_gaps};
use fikit_trace::{HostCall, Kernel, MemOp, Trace};
use serde_json::{Map, Value, json};

use crate::error::FileError;
use crate::sim::scenario::{ScenarioError, ScenarioFile};

use super::assemble::{JobSlices, Pending, TrackKey, assemble};
use super::{Arg, ChromeTrace, ExportOptions, key_hex, producer};

/// A trace with where it came from.
#[derive(Debug, Clone)]
pub struct TraceInput {
    /// The file (for names and metadata).
    pub path: PathBuf,
    /// The trace.
    pub trace: Trace,
}

/// Reads trace files, in parallel, keeping their order.
pub fn read_traces(files: &[PathBuf]) -> Result<Vec<TraceInput>, fikit_trace::TraceError> {
    use rayon::prelude::*;
    files
        .par_iter()
        .map(|f| {
            Ok(TraceInput {
                path: f.clone(),
                trace: fikit_trace::read_trace(f)?,
            })
        })
        .collect()
}

/// The trace files of a scenario file's jobs, in job order (resolved against its folder).
pub fn scenario_traces(path: &Path) -> Result<Vec<PathBuf>, ScenarioError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| FileError::unreadable("scenario", path, e))?;
    let file: ScenarioFile =
        crate::sim::scenario::from_json_object(&text).map_err(|e| FileError::invalid(path, e))?;
    let base = path.parent().unwrap_or(Path::new("."));
    file.jobs
        .iter()
        .enumerate()
        .map(|(i, j)| {
            j.trace_path(base)
                .map_err(|why| FileError::invalid(path, format!("jobs[{i}].trace: {why}")).into())
        })
        .collect()
}

/// The earliest time in a trace: of any row or launch call. 0 when empty.
/// Why `inputs` cannot share one Unix-clock timeline (`--wall-clock`), or
/// `None`: each job's times moved by its `clock_offset_ns` must lie within
/// 2^62 ns (a trace's range, [`fikit_trace::MAX_TIMESTAMP_NS`]) of the
/// earliest job's first event.
pub fn wall_clock_problem(inputs: &[TraceInput]) -> Option<String> {
    let on_unix =
        |i: &TraceInput, ns: i64| i128::from(ns) + i128::from(i.trace.meta.clock_offset_ns);
    let epoch0 = inputs
        .iter()
        .map(|i| on_unix(i, first_event_ns(&i.trace)))
        .min()?;
    inputs.iter().find_map(|i| {
        let last = on_unix(i, last_event_ns(&i.trace)) - epoch0;
        (last >= i128::from(fikit_trace::MAX_TIMESTAMP_NS)).then(|| {
            format!(
                "--wall-clock: {}: its last event is {last} ns after the earliest job's first \
                 on the Unix clock (its clock_offset_ns {}), more than one timeline holds \
                 (2^62 ns); export the traces without --wall-clock",
                i.path.display(),
                i.trace.meta.clock_offset_ns
            )
        })
    })
}

/// Every event of `t` as its (start, end), ns: kernels, copies and memsets
/// and their launch calls, API calls, synchronizations.
fn intervals(t: &Trace) -> impl Iterator<Item = (i64, i64)> + '_ {
    let launch = |l: &Option<HostCall>| l.map(|l| (l.start_ns, l.end_ns));
    t.kernels
        .iter()
        .flat_map(move |k| [Some((k.start_ns, k.end_ns)), launch(&k.launch)])
        .chain(
            t.memops
                .iter()
                .flat_map(move |m| [Some((m.start_ns, m.end_ns)), launch(&m.launch)]),
        )
        .flatten()
        .chain(t.api_calls.iter().map(|a| (a.start_ns, a.end_ns)))
        .chain(t.syncs.iter().map(|s| (s.start_ns, s.end_ns)))
}

/// The latest time of any of `t`'s events, ns (0 without events).
fn last_event_ns(t: &Trace) -> i64 {
    intervals(t).map(|(_, e)| e).max().unwrap_or(0)
}

/// The earliest time of any of `t`'s events, ns (0 without events).
pub(super) fn first_event_ns(t: &Trace) -> i64 {
    intervals(t).map(|(s, _)| s).min().unwrap_or(0)
}

/// A gap cause as a slice's name.
pub(super) fn cause_name(c: GapCause) -> &'static str {
    match c {
        GapCause::Host => "host",
        GapCause::Sync => "sync",
        GapCause::Other => "other",
    }
}

/// The slices of one trace, `shift` added to every time: its API calls and
/// synchronizations on host tracks, its kernels and memory operations on
/// stream tracks (each with a flow from its launch call) and its idle gaps.
fn trace_slices(pid: u32, input: &TraceInput, shift: i64) -> JobSlices {
    let t = &input.trace;
    let mut slices: Vec<Pending> = Vec::with_capacity(
        2 * (t.kernels.len() + t.memops.len()) + t.api_calls.len() + t.syncs.len(),
    );
    let mut flows = Vec::new();
    // API calls first, indexed by correlation id for the launch flows.
    let mut launches = Launches {
        by_corr: api_slices(t, shift, &mut slices),
        shift,
    };
    sync_slices(t, shift, &mut slices);
    for k in &t.kernels {
        let here = slices.len();
        slices.push(kernel_slice(k, shift));
        if let Some(l) = k.launch {
            let from = launches.call(&mut slices, k.correlation_id, l);
            flows.push((from, here, "launch"));
        }
    }
    for m in &t.memops {
        let here = slices.len();
        slices.push(memop_slice(m, shift));
        if let Some(l) = m.launch {
            let from = launches.call(&mut slices, m.correlation_id, l);
            flows.push((from, here, "launch"));
        }
    }
    gap_slices(t, shift, &mut slices);
    JobSlices {
        pid,
        process: format!(
            "{} (priority {}) {}",
            t.meta.job_name,
            t.meta.priority,
            input.path.display()
        ),
        slices,
        flows,
    }
}

/// Pushes the API calls' slices; returns them by correlation id.
fn api_slices(t: &Trace, shift: i64, slices: &mut Vec<Pending>) -> HashMap<u32, Vec<usize>> {
    let mut by_corr: HashMap<u32, Vec<usize>> = HashMap::new();
    for a in &t.api_calls {
        by_corr
            .entry(a.correlation_id)
            .or_default()
            .push(slices.len());
        slices.push(Pending {
            track: TrackKey::Host(a.thread_id),
            name: a.name.clone(),
            cat: "api",
            start: a.start_ns + shift,
            end: a.end_ns + shift,
            args: vec![
                ("correlation_id", Arg::UInt(a.correlation_id.into())),
                ("domain", Arg::Str(a.domain.as_str().into())),
                ("thread_id", Arg::UInt(a.thread_id)),
            ],
        });
    }
    by_corr
}

/// Pushes the synchronizations' slices.
fn sync_slices(t: &Trace, shift: i64, slices: &mut Vec<Pending>) {
    for s in &t.syncs {
        let mut args = vec![
            ("kind", Arg::Str(s.kind.as_str().into())),
            ("correlation_id", Arg::UInt(s.correlation_id.into())),
            ("context", Arg::UInt(s.context.into())),
        ];
        if let Some(st) = s.stream {
            args.push(("stream", Arg::UInt(st.into())));
        }
        slices.push(Pending {
            track: s.thread_id.map_or(TrackKey::HostUnknown, TrackKey::Host),
            name: format!("sync: {}", s.kind.as_str()),
            cat: "sync",
            start: s.start_ns + shift,
            end: s.end_ns + shift,
            args,
        });
    }
}

/// The launch calls of GPU operations, found among the API calls' slices.
struct Launches {
    /// API call slices by correlation id.
    by_corr: HashMap<u32, Vec<usize>>,
    shift: i64,
}

impl Launches {
    /// The launch call of a GPU operation: the API call with its correlation
    /// id on the launching thread that holds the launch's start (the
    /// outermost one), or a slice made from the launch columns when no call
    /// was recorded.
    fn call(&mut self, slices: &mut Vec<Pending>, corr: u32, l: HostCall) -> usize {
        let (a, b) = (l.start_ns + self.shift, l.end_ns + self.shift);
        let found = self.by_corr.get(&corr).and_then(|c| {
            c.iter()
                .copied()
                .filter(|&i| {
                    let s = &slices[i];
                    s.track == TrackKey::Host(l.thread_id) && s.start <= a && a <= s.end
                })
                .min_by_key(|&i| (slices[i].start, std::cmp::Reverse(slices[i].end), i))
        });
        found.unwrap_or_else(|| {
            self.by_corr.entry(corr).or_default().push(slices.len());
            slices.push(Pending {
                track: TrackKey::Host(l.thread_id),
                name: "launch".to_string(),
                cat: "api",
                start: a,
                end: b,
                args: vec![
                    ("correlation_id", Arg::UInt(corr.into())),
                    ("thread_id", Arg::UInt(l.thread_id)),
                    (
                        "note",
                        Arg::Str("from the launch_* columns (call not recorded)".into()),
                    ),
                ],
            });
            slices.len() - 1
        })
    }
}

/// A kernel's slice on its stream's track.
fn kernel_slice(k: &Kernel, shift: i64) -> Pending {
    let p = k.placement;
    Pending {
        track: TrackKey::Stream(p.device, p.context, p.stream),
        name: k.demangled_name.clone(),
        cat: "kernel",
        start: k.start_ns + shift,
        end: k.end_ns + shift,
        args: vec![
            ("name", Arg::Str(k.name.clone())),
            ("correlation_id", Arg::UInt(k.correlation_id.into())),
            ("grid", Arg::Dims(k.grid)),
            ("block", Arg::Dims(k.block)),
            ("kernel_key", key_hex(k.kernel_key)),
            (
                "registers_per_thread",
                Arg::UInt(k.registers_per_thread.into()),
            ),
            (
                "static_shared_bytes",
                Arg::UInt(k.static_shared_bytes.into()),
            ),
            (
                "dynamic_shared_bytes",
                Arg::UInt(k.dynamic_shared_bytes.into()),
            ),
            ("stream", Arg::UInt(p.stream.into())),
        ],
    }
}

/// A copy's or memset's slice on its stream's track.
fn memop_slice(m: &MemOp, shift: i64) -> Pending {
    let p = m.placement;
    let (name, cat) = match m.copy_kind {
        Some(c) => (format!("memcpy {}", c.as_str()), "memcpy"),
        None => ("memset".to_string(), "memset"),
    };
    let mut args = vec![
        ("correlation_id", Arg::UInt(m.correlation_id.into())),
        ("bytes", Arg::UInt(m.bytes)),
        ("stream", Arg::UInt(p.stream.into())),
    ];
    if let Some(c) = m.copy_kind {
        args.push(("copy_kind", Arg::Str(c.as_str().into())));
    }
    Pending {
        track: TrackKey::Stream(p.device, p.context, p.stream),
        name,
        cat,
        start: m.start_ns + shift,
        end: m.end_ns + shift,
        args,
    }
}

/// Pushes the idle gaps' slices, named by cause.
fn gap_slices(t: &Trace, shift: i64, slices: &mut Vec<Pending>) {
    for g in idle_gaps(t, &busy_intervals(t)) {
        let next = &t.kernels[g.next_kernel];
        slices.push(Pending {
            track: TrackKey::Gaps,
            name: cause_name(g.cause).to_string(),
            cat: "gap",
            start: g.start_ns + shift,
            end: g.end_ns + shift,
            args: vec![
                ("cause", Arg::Str(cause_name(g.cause).into())),
                ("duration_ns", Arg::Int(g.duration_ns())),
                ("next_kernel", Arg::Str(next.demangled_name.clone())),
                ("next_correlation_id", Arg::UInt(next.correlation_id.into())),
            ],
        });
    }
}

/// The traces as a Chrome trace: process `i + 1` is trace `i`.
pub fn from_traces(inputs: &[TraceInput], opts: &ExportOptions) -> ChromeTrace {
    let firsts: Vec<i64> = inputs.iter().map(|i| first_event_ns(&i.trace)).collect();
    // On the Unix clock: the earliest event of all jobs is 0.
    let epoch0 = inputs
        .iter()
        .zip(&firsts)
        .map(|(i, f)| f.saturating_add(i.trace.meta.clock_offset_ns))
        .min()
        .unwrap_or(0);
    let shifts: Vec<i64> = inputs
        .iter()
        .zip(&firsts)
        .map(|(i, &f)| {
            if opts.wall_clock {
                i.trace.meta.clock_offset_ns - epoch0
            } else {
                -f
            }
        })
        .collect();
    let jobs_meta: Vec<Value> = inputs
        .iter()
        .zip(&shifts)
        .enumerate()
        .map(|(i, (input, &shift))| {
            json!({
                "pid": i + 1,
                "job": input.trace.meta.job_name,
                "priority": input.trace.meta.priority,
                "file": input.path.display().to_string(),
                "gpu": input.trace.meta.device.name,
                "time_zero_ns": (-shift).to_string(),
                "clock_offset_ns": input.trace.meta.clock_offset_ns.to_string(),
            })
        })
        .collect();
    let mut metadata = Map::new();
    metadata.insert("producer".into(), json!(producer()));
    metadata.insert("source".into(), json!("trace"));
    metadata.insert(
        "time".into(),
        json!(if opts.wall_clock {
            format!("µs since the earliest event of all jobs, on the Unix clock (Unix ns {epoch0})")
        } else {
            "µs since each job's first event (time_zero_ns on the capture's clock)".to_string()
        }),
    );
    metadata.insert("jobs".into(), Value::Array(jobs_meta));
    let jobs = inputs
        .iter()
        .zip(shifts)
        .enumerate()
        .map(|(i, (input, shift))| trace_slices(i as u32 + 1, input, shift))
        .collect();
    assemble(jobs, opts.max_events, metadata)
}
