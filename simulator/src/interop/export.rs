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

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use indicatif::ProgressBar;
use serde_json::{Map, Value, json};

use fikit_trace::gaps::{GapCause, busy_intervals, idle_gaps};
use fikit_trace::{HostCall, Trace};

use crate::error::FileError;
use crate::policy::PolicyKind;
use crate::sim::engine::{RunError, Segment};
use crate::sim::gpu::GpuModel;
use crate::sim::job::Job;
use crate::sim::scenario::{Scenario, ScenarioError, ScenarioFile};
use crate::sim::simulate::run_policy;

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

    /// Writes the JSON document; returns the bytes written. `progress` is
    /// advanced once per slice.
    pub fn write_json<W: Write>(&self, out: W, progress: &ProgressBar) -> io::Result<u64> {
        let mut w = Counting {
            inner: io::BufWriter::with_capacity(1 << 20, out),
            bytes: 0,
        };
        w.write_all(b"{\"traceEvents\":[\n")?;
        let mut first = true;
        let mut sep = |w: &mut Counting<_>| -> io::Result<()> {
            if first {
                first = false;
                Ok(())
            } else {
                w.write_all(b",\n")
            }
        };
        for p in &self.processes {
            sep(&mut w)?;
            write_meta(&mut w, "process_name", p.pid, 0, &p.name)?;
            sep(&mut w)?;
            write!(
                w,
                "{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{},\"tid\":0,\"ts\":0,\"args\":{{\"sort_index\":{}}}}}",
                p.pid, p.pid
            )?;
        }
        for t in &self.tracks {
            sep(&mut w)?;
            write_meta(&mut w, "thread_name", t.pid, t.tid, &t.name)?;
            sep(&mut w)?;
            write!(
                w,
                "{{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":{},\"tid\":{},\"ts\":0,\"args\":{{\"sort_index\":{}}}}}",
                t.pid, t.tid, t.tid
            )?;
        }
        for (i, s) in self.slices.iter().enumerate() {
            sep(&mut w)?;
            write_slice(&mut w, s)?;
            for f in &s.flows {
                sep(&mut w)?;
                write!(
                    w,
                    "{{\"ph\":\"{}\",{}\"id\":{},\"cat\":\"{}\",\"name\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{}}}",
                    if f.start { 's' } else { 'f' },
                    if f.start { "" } else { "\"bp\":\"e\"," },
                    f.id,
                    f.cat,
                    f.cat,
                    s.pid,
                    s.tid,
                    us(s.start_ns)
                )?;
            }
            if i % 4096 == 4095 {
                progress.inc(4096);
            }
        }
        progress.set_position(self.slices.len() as u64);
        w.write_all(b"\n],\"displayTimeUnit\":\"ns\",\"otherData\":")?;
        serde_json::to_writer(&mut w, &self.metadata).map_err(io::Error::other)?;
        w.write_all(b"}\n")?;
        w.flush()?;
        Ok(w.bytes)
    }
}

/// A writer that counts the bytes through it.
struct Counting<W: Write> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Nanoseconds as exact decimal microseconds: `1234567` → `1234.567`.
pub fn us(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

fn write_str<W: Write>(w: &mut W, s: &str) -> io::Result<()> {
    serde_json::to_writer(w, s).map_err(io::Error::other)
}

fn write_meta<W: Write>(w: &mut W, what: &str, pid: u32, tid: u32, name: &str) -> io::Result<()> {
    write!(
        w,
        "{{\"ph\":\"M\",\"name\":\"{what}\",\"pid\":{pid},\"tid\":{tid},\"ts\":0,\"args\":{{\"name\":"
    )?;
    write_str(w, name)?;
    w.write_all(b"}}")
}

fn write_slice<W: Write>(w: &mut W, s: &Slice) -> io::Result<()> {
    w.write_all(b"{\"ph\":\"X\",\"name\":")?;
    write_str(w, &s.name)?;
    write!(
        w,
        ",\"cat\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{",
        s.cat,
        s.pid,
        s.tid,
        us(s.start_ns),
        us(s.dur_ns)
    )?;
    for (i, (k, v)) in s.args.iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        write!(w, "\"{k}\":")?;
        match v {
            Arg::Str(s) => write_str(w, s)?,
            Arg::Int(n) => write!(w, "{n}")?,
            Arg::UInt(n) => write!(w, "{n}")?,
            Arg::Dims([x, y, z]) => write!(w, "[{x},{y},{z}]")?,
        }
    }
    w.write_all(b"}}")
}

/// The warning to print when a written export is large: its size and event
/// count, and a `--max-events` that would bring it under [`SIZE_WARN_BYTES`].
pub fn size_warning(path: &str, bytes: u64, trace: &ChromeTrace) -> Option<String> {
    if bytes <= SIZE_WARN_BYTES {
        return None;
    }
    let per_job = trace.max_slices_per_process().max(1);
    let suggest = ((per_job as f64) * (SIZE_WARN_BYTES as f64 / bytes as f64) * 0.9) as usize;
    Some(format!(
        "warning: {path} is {:.0} MB ({} events): the Perfetto UI may fail to open JSON \
         traces of more than a few hundred MB; export fewer events with --max-events N \
         (keeps the first N slices of each job; e.g. --max-events {})",
        bytes as f64 / 1e6,
        trace.event_count(),
        suggest.max(1000)
    ))
}

/// A slice before it is placed on a track.
struct Pending {
    track: TrackKey,
    name: String,
    cat: &'static str,
    start: i64,
    end: i64,
    args: Vec<(&'static str, Arg)>,
}

/// A logical track of a job; overlapping slices spill onto extra lanes.
/// The order of the variants is the order of the tracks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum TrackKey {
    /// A simulated job's arrival-to-finish slice.
    Job,
    /// A host thread, by OS thread id.
    Host(u64),
    /// Synchronizations whose thread was not recorded.
    HostUnknown,
    /// A CUDA stream: device, context, stream.
    Stream(u32, u32, u32),
    /// A simulated job's stream, by its job-local index.
    SimStream(u32),
    /// Idle gaps.
    Gaps,
}

impl TrackKey {
    fn name(self) -> String {
        match self {
            TrackKey::Job => "job".to_string(),
            TrackKey::Host(t) => format!("host thread {t}"),
            TrackKey::HostUnknown => "syncs (thread not recorded)".to_string(),
            TrackKey::Stream(d, c, s) => format!("stream {s} (context {c}, device {d})"),
            TrackKey::SimStream(s) => format!("stream {s}"),
            TrackKey::Gaps => "GPU idle gaps".to_string(),
        }
    }
}

/// One job's slices and flows before placement.
struct JobSlices {
    pid: u32,
    process: String,
    slices: Vec<Pending>,
    /// (from slice, to slice, category).
    flows: Vec<(usize, usize, &'static str)>,
}

/// Places the jobs' slices on tracks, cuts each job to `max_events` and
/// numbers the flows.
fn assemble(
    jobs: Vec<JobSlices>,
    max_events: Option<usize>,
    metadata: Map<String, Value>,
) -> ChromeTrace {
    let mut out = ChromeTrace {
        metadata,
        ..ChromeTrace::default()
    };
    let mut next_flow = 1u64;
    for job in jobs {
        let JobSlices {
            pid,
            process,
            slices,
            flows,
        } = job;
        out.processes.push(Process { pid, name: process });
        let total = slices.len();
        // The first `max_events` slices by start (ties: the order they were made in).
        let mut keep = vec![true; total];
        if let Some(n) = max_events
            && total > n
        {
            let mut order: Vec<usize> = (0..total).collect();
            order.sort_by_key(|&i| (slices[i].start, i));
            for &i in &order[n..] {
                keep[i] = false;
            }
            out.truncated.push(Truncation {
                pid,
                kept: n,
                total,
                cut_at_ns: slices[order[n]].start,
            });
        }
        // Lanes per logical track: a slice goes on the first lane where it
        // nests in, or follows, what is there.
        let mut by_track: BTreeMap<TrackKey, Vec<usize>> = BTreeMap::new();
        for (i, s) in slices.iter().enumerate() {
            if keep[i] {
                by_track.entry(s.track).or_default().push(i);
            }
        }
        let mut tid_of = vec![0u32; total];
        let mut local = 0u32;
        for (key, mut idx) in by_track {
            idx.sort_by_key(|&i| (slices[i].start, std::cmp::Reverse(slices[i].end), i));
            let mut lanes: Vec<(u32, Vec<i64>)> = Vec::new();
            for i in idx {
                let (a, b) = (slices[i].start, slices[i].end);
                let lane = lanes.iter_mut().position(|(_, open)| {
                    while open.last().is_some_and(|&e| e <= a) {
                        open.pop();
                    }
                    open.last().is_none_or(|&e| b <= e)
                });
                let lane = match lane {
                    Some(l) => l,
                    None => {
                        local += 1;
                        assert!(
                            local < TIDS_PER_PID,
                            "more than {TIDS_PER_PID} tracks in one job"
                        );
                        let tid = pid * TIDS_PER_PID + local;
                        let name = if lanes.is_empty() {
                            key.name()
                        } else {
                            format!("{} (overlaps {})", key.name(), lanes.len())
                        };
                        out.tracks.push(Track { pid, tid, name });
                        lanes.push((tid, Vec::new()));
                        lanes.len() - 1
                    }
                };
                lanes[lane].1.push(b);
                tid_of[i] = lanes[lane].0;
            }
        }
        let mut flow_ends: Vec<Vec<FlowEnd>> = vec![Vec::new(); total];
        for (from, to, cat) in flows {
            if keep[from] && keep[to] {
                flow_ends[from].push(FlowEnd {
                    id: next_flow,
                    start: true,
                    cat,
                });
                flow_ends[to].push(FlowEnd {
                    id: next_flow,
                    start: false,
                    cat,
                });
                next_flow += 1;
            }
        }
        for (i, (s, flows)) in slices.into_iter().zip(flow_ends).enumerate() {
            if keep[i] {
                out.slices.push(Slice {
                    name: s.name,
                    cat: s.cat,
                    pid,
                    tid: tid_of[i],
                    start_ns: s.start,
                    dur_ns: s.end - s.start,
                    args: s.args,
                    flows,
                });
            }
        }
    }
    out.slices
        .sort_by_key(|s| (s.start_ns, s.pid, s.tid, std::cmp::Reverse(s.dur_ns)));
    if !out.truncated.is_empty() {
        let notes: Vec<Value> = out
            .truncated
            .iter()
            .map(|t| {
                json!({
                    "pid": t.pid,
                    "kept_slices": t.kept,
                    "total_slices": t.total,
                    "cut_at_us": us(t.cut_at_ns),
                })
            })
            .collect();
        out.metadata.insert(
            "truncated".into(),
            json!({
                "max_events": max_events,
                "note": "only the first max_events slices of each job (by start time) are here; flows to slices left out are dropped",
                "jobs": notes,
            }),
        );
    }
    out
}

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
        serde_json::from_str(&text).map_err(|e| FileError::invalid(path, e.to_string()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    Ok(file.jobs.iter().map(|j| base.join(&j.trace)).collect())
}

/// The earliest time in a trace: of any row or launch call. 0 when empty.
fn first_event_ns(t: &Trace) -> i64 {
    let launches = |l: &Option<HostCall>| l.map(|l| l.start_ns);
    t.kernels
        .iter()
        .flat_map(|k| [Some(k.start_ns), launches(&k.launch)])
        .chain(
            t.memops
                .iter()
                .flat_map(|m| [Some(m.start_ns), launches(&m.launch)]),
        )
        .flatten()
        .chain(t.api_calls.iter().map(|a| a.start_ns))
        .chain(t.syncs.iter().map(|s| s.start_ns))
        .min()
        .unwrap_or(0)
}

fn cause_name(c: GapCause) -> &'static str {
    match c {
        GapCause::Host => "host",
        GapCause::Sync => "sync",
        GapCause::Other => "other",
    }
}

fn key_hex(key: u64) -> Arg {
    Arg::Str(format!("0x{key:016x}"))
}

/// The slices of one trace, `shift` added to every time.
fn trace_slices(pid: u32, input: &TraceInput, shift: i64) -> JobSlices {
    let t = &input.trace;
    let mut slices: Vec<Pending> = Vec::with_capacity(
        2 * (t.kernels.len() + t.memops.len()) + t.api_calls.len() + t.syncs.len(),
    );
    let mut flows = Vec::new();

    // API calls first, indexed by correlation id for the launch flows.
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
    // The launch call of a GPU operation: the API call with its correlation
    // id on the launching thread that holds the launch's start (the outermost
    // one), or a slice made from the launch columns when no call was recorded.
    let mut launch_of = |slices: &mut Vec<Pending>, corr: u32, l: HostCall| -> usize {
        let (a, b) = (l.start_ns + shift, l.end_ns + shift);
        let found = by_corr.get(&corr).and_then(|c| {
            c.iter()
                .copied()
                .filter(|&i| {
                    let s = &slices[i];
                    s.track == TrackKey::Host(l.thread_id) && s.start <= a && a <= s.end
                })
                .min_by_key(|&i| (slices[i].start, std::cmp::Reverse(slices[i].end), i))
        });
        found.unwrap_or_else(|| {
            by_corr.entry(corr).or_default().push(slices.len());
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
    };
    for k in &t.kernels {
        let p = k.placement;
        let here = slices.len();
        slices.push(Pending {
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
        });
        if let Some(l) = k.launch {
            let from = launch_of(&mut slices, k.correlation_id, l);
            flows.push((from, here, "launch"));
        }
    }
    for m in &t.memops {
        let p = m.placement;
        let here = slices.len();
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
        slices.push(Pending {
            track: TrackKey::Stream(p.device, p.context, p.stream),
            name,
            cat,
            start: m.start_ns + shift,
            end: m.end_ns + shift,
            args,
        });
        if let Some(l) = m.launch {
            let from = launch_of(&mut slices, m.correlation_id, l);
            flows.push((from, here, "launch"));
        }
    }
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

fn producer() -> String {
    format!("fikit-sim {}", env!("CARGO_PKG_VERSION"))
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

/// What a simulated kernel was in its trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpInfo {
    /// Demangled name.
    pub name: String,
    /// Mangled name.
    pub mangled: String,
    /// Grid.
    pub grid: [u32; 3],
    /// Block.
    pub block: [u32; 3],
    /// Correlation id of the recorded kernel.
    pub correlation_id: u32,
}

/// For each op of `job` (made from `trace`, possibly repeated or serving
/// requests), the recorded kernel it replays; `None` for copies and memsets.
/// Ops are matched by recorded start, duration and kernel key.
pub fn op_infos(job: &Job, trace: &Trace) -> Vec<Option<OpInfo>> {
    let base = Job::from_trace(trace);
    let gpu_first = trace
        .kernels
        .iter()
        .map(|k| k.start_ns)
        .chain(trace.memops.iter().map(|m| m.start_ns))
        .min();
    let op_first = base.ops.iter().map(|o| o.recorded_start_ns).min();
    let origin = match (gpu_first, op_first) {
        (Some(a), Some(b)) => a - b,
        _ => 0,
    };
    let mut index: HashMap<(i64, i64, u64), usize> = HashMap::with_capacity(trace.kernels.len());
    for (i, k) in trace.kernels.iter().enumerate() {
        index
            .entry((k.start_ns - origin, k.duration_ns(), k.kernel_key))
            .or_insert(i);
    }
    job.ops
        .iter()
        .map(|o| {
            let key = o.kernel_key()?;
            let k = &trace.kernels[*index.get(&(o.recorded_start_ns, o.duration_ns, key))?];
            Some(OpInfo {
                name: k.demangled_name.clone(),
                mangled: k.name.clone(),
                grid: k.grid,
                block: k.block,
                correlation_id: k.correlation_id,
            })
        })
        .collect()
}

/// One policy's simulated run, as the export shows it.
#[derive(Debug, Clone)]
pub struct PolicyRun {
    /// Policy.
    pub policy: PolicyKind,
    /// Kernel run segments.
    pub segments: Vec<Segment>,
    /// Per job: arrival and finish, ns.
    pub spans: Vec<(i64, i64)>,
}

/// Runs the scenario under `policy`, recording where each kernel ran.
/// `exclusive` runs each job alone from its arrival.
pub fn run_for_export(
    scenario: &Scenario,
    policy: PolicyKind,
    model: &GpuModel,
) -> Result<PolicyRun, RunError> {
    let mut run = PolicyRun {
        policy,
        segments: Vec::new(),
        spans: Vec::new(),
    };
    if policy == PolicyKind::Exclusive {
        for (j, (job, &at)) in scenario.jobs.iter().zip(&scenario.arrivals).enumerate() {
            let r = run_policy(std::slice::from_ref(job), &[at], policy, model, true)?;
            run.segments
                .extend(r.segments.into_iter().map(|s| Segment { job: j, ..s }));
            run.spans.push((r.jobs[0].arrival_ns, r.jobs[0].finish_ns));
        }
    } else {
        let r = run_policy(&scenario.jobs, &scenario.arrivals, policy, model, true)?;
        run.segments = r.segments;
        run.spans = r.jobs.iter().map(|o| (o.arrival_ns, o.finish_ns)).collect();
    }
    Ok(run)
}

/// Simulated runs as a Chrome trace: per policy (in the order given) one
/// process per job. `infos[j]` names job `j`'s ops ([`op_infos`]; empty when unknown).
pub fn from_runs(
    scenario: &Scenario,
    infos: &[Vec<Option<OpInfo>>],
    runs: &[PolicyRun],
    model: &GpuModel,
    opts: &ExportOptions,
) -> ChromeTrace {
    let n = scenario.jobs.len() as u32;
    let mut jobs = Vec::new();
    for (p, run) in runs.iter().enumerate() {
        let mut per_job: Vec<Vec<&Segment>> = vec![Vec::new(); scenario.jobs.len()];
        for s in &run.segments {
            if let Some(v) = per_job.get_mut(s.job) {
                v.push(s);
            }
        }
        for (j, job) in scenario.jobs.iter().enumerate() {
            let pid = p as u32 * n + j as u32 + 1;
            let mut slices = Vec::new();
            let mut flows = Vec::new();
            if let Some(&(arrival, finish)) = run.spans.get(j) {
                slices.push(Pending {
                    track: TrackKey::Job,
                    name: format!(
                        "{} JCT {}",
                        job.name,
                        fikit_trace::summary::human_ns(finish - arrival)
                    ),
                    cat: "job",
                    start: arrival,
                    end: finish,
                    args: vec![
                        ("policy", Arg::Str(run.policy.as_str().into())),
                        ("priority", Arg::UInt(job.priority.into())),
                        ("arrival_ns", Arg::Int(arrival)),
                        ("finish_ns", Arg::Int(finish)),
                        ("jct_ns", Arg::Int(finish - arrival)),
                    ],
                });
            }
            // Segments of one op in time order; parts joined by flows.
            let segs = &mut per_job[j];
            segs.sort_by_key(|s| (s.op, s.start_ns, s.end_ns));
            let mut i = 0;
            while i < segs.len() {
                let op = segs[i].op;
                let parts = segs[i..].iter().take_while(|s| s.op == op).count();
                let gpu_op = &job.ops[op];
                let info = infos
                    .get(j)
                    .and_then(|v| v.get(op))
                    .and_then(Option::as_ref);
                let key = gpu_op.kernel_key().unwrap_or(0);
                let base_name =
                    info.map_or_else(|| format!("kernel {key:016x}"), |k| k.name.clone());
                let mut prev: Option<usize> = None;
                for (k, s) in segs[i..i + parts].iter().enumerate() {
                    let mut args = vec![
                        ("op", Arg::UInt(op as u64)),
                        ("kernel_key", key_hex(key)),
                        ("recorded_duration_ns", Arg::Int(gpu_op.duration_ns)),
                        ("stream", Arg::UInt(gpu_op.stream.into())),
                        ("waited_ns", Arg::Int(s.start_ns - s.ready_ns)),
                    ];
                    if let Some(info) = info {
                        args.push(("name", Arg::Str(info.mangled.clone())));
                        args.push(("grid", Arg::Dims(info.grid)));
                        args.push(("block", Arg::Dims(info.block)));
                        args.push(("correlation_id", Arg::UInt(info.correlation_id.into())));
                    }
                    let name = if parts > 1 {
                        args.push(("part", Arg::UInt(k as u64 + 1)));
                        args.push(("parts", Arg::UInt(parts as u64)));
                        format!("{base_name} [part {}/{parts}]", k + 1)
                    } else {
                        base_name.clone()
                    };
                    let here = slices.len();
                    slices.push(Pending {
                        track: TrackKey::SimStream(gpu_op.stream),
                        name,
                        cat: "kernel",
                        start: s.start_ns,
                        end: s.end_ns,
                        args,
                    });
                    if let Some(from) = prev {
                        flows.push((from, here, "preemption"));
                    }
                    prev = Some(here);
                }
                i += parts;
            }
            jobs.push(JobSlices {
                pid,
                process: format!(
                    "{}: {} (priority {})",
                    run.policy.as_str(),
                    job.name,
                    job.priority
                ),
                slices,
                flows,
            });
        }
    }
    let mut metadata = Map::new();
    metadata.insert("producer".into(), json!(producer()));
    metadata.insert("source".into(), json!("simulation"));
    metadata.insert("scenario".into(), json!(scenario.name));
    metadata.insert(
        "model".into(),
        serde_json::to_value(model).unwrap_or(Value::Null),
    );
    metadata.insert(
        "time".into(),
        json!("µs of simulated time; jobs arrive at their scenario offsets"),
    );
    metadata.insert(
        "policies".into(),
        json!(runs.iter().map(|r| r.policy.as_str()).collect::<Vec<_>>()),
    );
    if runs.iter().any(|r| r.policy == PolicyKind::Exclusive) {
        metadata.insert(
            "exclusive".into(),
            json!("each job ran alone from its arrival; their timelines overlap only in this view"),
        );
    }
    metadata.insert(
        "note".into(),
        json!("kernels only: copies and memsets run on copy engines and are not recorded by the engine"),
    );
    assemble(jobs, opts.max_events, metadata)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use fikit_trace::{ApiCall, ApiDomain, CopyKind, MemOp, Placement, fixture};

    use super::*;
    use crate::sim::scenario::Scenario;

    fn shipped(name: &str) -> TraceInput {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../traces/h200")
            .join(name);
        TraceInput {
            trace: fikit_trace::read_trace(&path).unwrap(),
            path,
        }
    }

    fn input(trace: Trace) -> TraceInput {
        TraceInput {
            path: PathBuf::from(format!("{}.parquet", trace.meta.job_name)),
            trace,
        }
    }

    fn uint(s: &Slice, key: &str) -> u64 {
        match s.arg(key) {
            Some(Arg::UInt(n)) => *n,
            other => panic!("{key} of {s:?}: {other:?}"),
        }
    }

    /// Flow id → (start slices, finish slices).
    fn flows(t: &ChromeTrace) -> BTreeMap<u64, (Vec<&Slice>, Vec<&Slice>)> {
        let mut m: BTreeMap<u64, (Vec<&Slice>, Vec<&Slice>)> = BTreeMap::new();
        for s in &t.slices {
            for f in &s.flows {
                let e = m.entry(f.id).or_default();
                if f.start { e.0.push(s) } else { e.1.push(s) }
            }
        }
        m
    }

    /// Every track's slices nest: sorted by start (longer first), each one
    /// ends by the end of every slice still open when it starts.
    fn assert_tracks_nest(t: &ChromeTrace) {
        let mut by_tid: BTreeMap<u32, Vec<&Slice>> = BTreeMap::new();
        for s in &t.slices {
            by_tid.entry(s.tid).or_default().push(s);
        }
        for (tid, mut v) in by_tid {
            v.sort_by_key(|s| (s.start_ns, std::cmp::Reverse(s.dur_ns)));
            let mut open: Vec<i64> = Vec::new();
            for s in v {
                while open.last().is_some_and(|&e| e <= s.start_ns) {
                    open.pop();
                }
                if let Some(&e) = open.last() {
                    assert!(
                        s.end_ns() <= e,
                        "track {tid}: {s:?} overlaps an open slice ending at {e}"
                    );
                }
                open.push(s.end_ns());
            }
        }
    }

    #[test]
    fn microseconds_are_exact_decimals() {
        assert_eq!(us(0), "0.000");
        assert_eq!(us(1), "0.001");
        assert_eq!(us(999), "0.999");
        assert_eq!(us(1_234_567), "1234.567");
        assert_eq!(us(-1_500), "-1.500");
        assert_eq!(us(600_000_000_001), "600000000.001");
    }

    #[test]
    fn a_shipped_trace_has_every_kernel_once_and_launch_flows_that_pair_up() {
        let input = shipped("resnet50-bs1-eval-659.parquet");
        let t = &input.trace;
        let out = from_traces(std::slice::from_ref(&input), &ExportOptions::default());

        // Every kernel once, with its correlation id, name, shape and key.
        let kernels: Vec<&Slice> = out.slices.iter().filter(|s| s.cat == "kernel").collect();
        assert_eq!(kernels.len(), t.kernels.len());
        let mut want: Vec<(u32, i64)> = t
            .kernels
            .iter()
            .map(|k| (k.correlation_id, k.start_ns))
            .collect();
        let origin = first_event_ns(t);
        let mut got: Vec<(u32, i64)> = kernels
            .iter()
            .map(|s| (uint(s, "correlation_id") as u32, s.start_ns + origin))
            .collect();
        want.sort_unstable();
        got.sort_unstable();
        assert_eq!(got, want);
        let k0 = &t.kernels[0];
        let s0 = kernels
            .iter()
            .find(|s| uint(s, "correlation_id") == u64::from(k0.correlation_id))
            .unwrap();
        assert_eq!(s0.name, k0.demangled_name);
        assert_eq!(s0.arg("grid"), Some(&Arg::Dims(k0.grid)));
        assert_eq!(s0.arg("block"), Some(&Arg::Dims(k0.block)));
        assert_eq!(s0.arg("kernel_key"), Some(&key_hex(k0.kernel_key)));
        assert_eq!(s0.dur_ns, k0.duration_ns());
        let memops = out
            .slices
            .iter()
            .filter(|s| s.cat == "memcpy" || s.cat == "memset")
            .count();
        assert_eq!(memops, t.memops.len());

        // One flow per launched GPU operation, from an API call of the same
        // correlation id on a host track to the operation on a stream track.
        let f = flows(&out);
        let launched = t.kernels.iter().filter(|k| k.launch.is_some()).count()
            + t.memops.iter().filter(|m| m.launch.is_some()).count();
        assert!(launched > 0);
        assert_eq!(f.len(), launched);
        let name_of = |tid: u32| &out.tracks.iter().find(|x| x.tid == tid).unwrap().name;
        for (id, (from, to)) in &f {
            assert_eq!((from.len(), to.len()), (1, 1), "flow {id}");
            let (a, b) = (from[0], to[0]);
            assert_eq!(a.cat, "api");
            assert!(["kernel", "memcpy", "memset"].contains(&b.cat));
            assert_eq!(uint(a, "correlation_id"), uint(b, "correlation_id"));
            assert!(name_of(a.tid).starts_with("host thread"));
            assert!(name_of(b.tid).starts_with("stream"));
            assert!(
                a.start_ns <= b.start_ns,
                "launch after its operation: {a:?} {b:?}"
            );
        }
        assert_tracks_nest(&out);
        // Slices are in start order; tracks belong to their process.
        assert!(
            out.slices
                .windows(2)
                .all(|w| w[0].start_ns <= w[1].start_ns)
        );
        assert!(out.slices.iter().all(|s| s.tid / TIDS_PER_PID == s.pid));
    }

    #[test]
    fn gap_slices_are_the_idle_gaps_by_cause() {
        let input = shipped("bert-base-bs1-eval-854.parquet");
        let t = &input.trace;
        let out = from_traces(std::slice::from_ref(&input), &ExportOptions::default());
        let mut want: BTreeMap<&str, (usize, i64)> = BTreeMap::new();
        for g in idle_gaps(t, &busy_intervals(t)) {
            let e = want.entry(cause_name(g.cause)).or_default();
            e.0 += 1;
            e.1 += g.duration_ns();
        }
        let mut got: BTreeMap<&str, (usize, i64)> = BTreeMap::new();
        for s in out.slices.iter().filter(|s| s.cat == "gap") {
            let e = got.entry(s.name.as_str()).or_default();
            e.0 += 1;
            e.1 += s.dur_ns;
        }
        assert!(
            want.len() >= 2,
            "the trace has gaps of several causes: {want:?}"
        );
        assert_eq!(got, want);
        // All on one track named for them.
        let tids: std::collections::BTreeSet<u32> = out
            .slices
            .iter()
            .filter(|s| s.cat == "gap")
            .map(|s| s.tid)
            .collect();
        assert_eq!(tids.len(), 1);
        let track = out
            .tracks
            .iter()
            .find(|x| Some(&x.tid) == tids.first())
            .unwrap();
        assert_eq!(track.name, "GPU idle gaps");
    }

    /// Two kernels on stream 7 launched by calls that were not recorded, a
    /// copy on stream 7 that overlaps the second kernel, a recorded launch
    /// call, and a sync without a thread.
    fn small() -> Trace {
        let mut t = fixture::every_column("small");
        t.kernels
            .push(fixture::kernel("late", 7, 9, Some(40_000), 50_000, 60_000));
        t.memops.push(MemOp {
            start_ns: 55_000,
            end_ns: 65_000,
            placement: Placement {
                device: 0,
                context: 1,
                stream: 7,
            },
            correlation_id: 10,
            copy_kind: Some(CopyKind::DtoH),
            bytes: 64,
            launch: None,
        });
        t.api_calls.push(ApiCall {
            domain: ApiDomain::Runtime,
            name: "cudaLaunchKernel".into(),
            start_ns: 40_000,
            end_ns: 42_000,
            thread_id: 7,
            correlation_id: 9,
        });
        t.sort();
        t
    }

    #[test]
    fn overlapping_slices_spill_to_an_overlap_track_and_missing_calls_are_made_from_launch_columns()
    {
        let out = from_traces(&[input(small())], &ExportOptions::default());
        assert_tracks_nest(&out);
        let names: Vec<&str> = out.tracks.iter().map(|t| t.name.as_str()).collect();
        assert!(
            names.contains(&"stream 7 (context 1, device 0) (overlaps 1)"),
            "{names:?}"
        );
        assert!(names.contains(&"syncs (thread not recorded)"), "{names:?}");
        // relu's launch (corr 2) has an API row; gemm has no launch; "late"
        // (corr 9) has its call recorded: three launch flows, none invented.
        let f = flows(&out);
        assert_eq!(f.len(), 2 + 1, "{f:?}"); // the HtoD copy, relu, late
        assert!(out.slices.iter().all(|s| s.name != "launch"));

        // Without API rows the launch columns make the calls.
        let mut bare = small();
        bare.api_calls.clear();
        let out = from_traces(&[input(bare)], &ExportOptions::default());
        let made: Vec<&Slice> = out.slices.iter().filter(|s| s.name == "launch").collect();
        assert_eq!(made.len(), 3);
        assert_eq!(flows(&out).len(), 3);
        assert_tracks_nest(&out);
    }

    #[test]
    fn max_events_keeps_the_first_slices_of_each_job_and_only_whole_flows() {
        let a = shipped("resnet50-bs1-eval-659.parquet");
        let b = input(small());
        let full = from_traces(&[a.clone(), b.clone()], &ExportOptions::default());
        let n = 500;
        let cut = from_traces(
            &[a, b],
            &ExportOptions {
                max_events: Some(n),
                wall_clock: false,
            },
        );
        let count = |t: &ChromeTrace, pid| t.slices.iter().filter(|s| s.pid == pid).count();
        assert_eq!(count(&cut, 1), n);
        assert_eq!(count(&cut, 2), count(&full, 2), "the small job is whole");
        assert_eq!(cut.truncated.len(), 1);
        let tr = &cut.truncated[0];
        assert_eq!((tr.pid, tr.kept, tr.total), (1, n, count(&full, 1)));
        // The kept slices are the earliest ones.
        assert!(
            cut.slices
                .iter()
                .filter(|s| s.pid == 1)
                .all(|s| s.start_ns <= tr.cut_at_ns)
        );
        for (id, (from, to)) in flows(&cut) {
            assert_eq!((from.len(), to.len()), (1, 1), "flow {id}");
        }
        assert!(cut.metadata["truncated"]["jobs"][0]["kept_slices"] == n);
    }

    #[test]
    fn json_output_is_deterministic_and_parses() {
        let inputs = [input(small()), input(fixture::every_column("other"))];
        let write = || {
            let t = from_traces(&inputs, &ExportOptions::default());
            let mut buf = Vec::new();
            let n = t.write_json(&mut buf, &ProgressBar::hidden()).unwrap();
            assert_eq!(n as usize, buf.len());
            (t, buf)
        };
        let (t, a) = write();
        let (_, b) = write();
        assert_eq!(a, b);
        let v: Value = serde_json::from_slice(&a).unwrap();
        let events = v["traceEvents"].as_array().unwrap();
        assert_eq!(events.len(), t.event_count());
        let xs: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(xs.len(), t.slices.len());
        for (e, s) in xs.iter().zip(&t.slices) {
            let ts = e["ts"].as_f64().unwrap();
            assert!((ts * 1000.0 - s.start_ns as f64).abs() < 1e-3, "{e}");
            assert!(e["dur"].as_f64().unwrap() >= 0.0);
        }
        assert_eq!(v["displayTimeUnit"], "ns");
        assert_eq!(v["otherData"]["source"], "trace");
        assert!(size_warning("x", 1000, &t).is_none());
        let w = size_warning("big.json", SIZE_WARN_BYTES * 2, &t).unwrap();
        assert!(w.contains("--max-events") && w.contains("big.json"), "{w}");
    }

    #[test]
    fn wall_clock_lines_jobs_up_on_the_unix_clock() {
        let mut a = fixture::empty("a", 0);
        a.kernels
            .push(fixture::kernel("k", 7, 1, None, 1_000, 2_000));
        a.meta.clock_offset_ns = 10_000;
        let mut b = fixture::empty("b", 0);
        b.kernels
            .push(fixture::kernel("k", 7, 1, None, 5_000, 6_000));
        b.meta.clock_offset_ns = 0;
        let inputs = [input(a), input(b)];
        let start = |t: &ChromeTrace, pid| t.slices.iter().find(|s| s.pid == pid).unwrap().start_ns;
        let own = from_traces(&inputs, &ExportOptions::default());
        assert_eq!((start(&own, 1), start(&own, 2)), (0, 0));
        let wall = from_traces(
            &inputs,
            &ExportOptions {
                max_events: None,
                wall_clock: true,
            },
        );
        // Unix times 11,000 and 5,000: b first.
        assert_eq!((start(&wall, 1), start(&wall, 2)), (6_000, 0));
    }

    /// A high-priority job of short kernels with host gaps and syncs, and a
    /// low-priority job of long kernels (the plots tests' pair).
    fn pair() -> Vec<Trace> {
        vec![
            fixture::short_iterations("infer", 0, 3),
            fixture::back_to_back("train", 5, 6, 500),
        ]
    }

    fn scenario(traces: &[Trace]) -> Scenario {
        Scenario {
            name: "pair".into(),
            jobs: traces.iter().map(Job::from_trace).collect(),
            arrivals: vec![0; traces.len()],
        }
    }

    #[test]
    fn op_infos_name_every_kernel_also_of_repeated_and_serving_jobs() {
        let t = shipped("vit_b_16-bs1-eval-794.parquet").trace;
        let job = Job::from_trace(&t);
        for j in [
            job.clone(),
            job.repeated(2),
            job.serving(&[0, 1_000_000, 2_000_000]),
        ] {
            let infos = op_infos(&j, &t);
            assert_eq!(infos.len(), j.ops.len());
            for (op, info) in j.ops.iter().zip(&infos) {
                match (op.kernel_key(), info) {
                    (Some(key), Some(i)) => {
                        let k = t
                            .kernels
                            .iter()
                            .find(|k| k.correlation_id == i.correlation_id && k.name == i.mangled)
                            .unwrap();
                        assert_eq!(k.kernel_key, key);
                        assert_eq!(k.duration_ns(), op.duration_ns);
                    }
                    (None, None) => {}
                    other => panic!("op {op:?}: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn a_simulated_run_places_every_kernel_and_joins_preempted_parts() {
        let traces = pair();
        let sc = scenario(&traces);
        let model = GpuModel {
            timeslice_quantum_ns: 150,
            context_switch_ns: 10,
            timeslice_preempts: true,
            ..GpuModel::default()
        };
        let infos: Vec<_> = sc
            .jobs
            .iter()
            .zip(&traces)
            .map(|(j, t)| op_infos(j, t))
            .collect();
        let policies = [
            PolicyKind::Exclusive,
            PolicyKind::Timeslice,
            PolicyKind::Fikit,
        ];
        let runs: Vec<PolicyRun> = policies
            .iter()
            .map(|&p| run_for_export(&sc, p, &model).unwrap())
            .collect();
        let out = from_runs(&sc, &infos, &runs, &model, &ExportOptions::default());
        assert_eq!(out.processes.len(), policies.len() * 2);
        assert_tracks_nest(&out);
        let mut split = 0;
        for (p, run) in runs.iter().enumerate() {
            for (j, job) in sc.jobs.iter().enumerate() {
                let pid = (p * 2 + j + 1) as u32;
                let mine: Vec<&Slice> = out
                    .slices
                    .iter()
                    .filter(|s| s.pid == pid && s.cat == "kernel")
                    .collect();
                // Each kernel op's parts add up to its recorded duration (no
                // slowdown without MPS), and it is named from its trace.
                let mut per_op: BTreeMap<u64, (i64, u64)> = BTreeMap::new();
                for s in &mine {
                    let e = per_op.entry(uint(s, "op")).or_default();
                    e.0 += s.dur_ns;
                    e.1 += 1;
                    assert!(
                        s.name
                            .starts_with(&infos[j][uint(s, "op") as usize].as_ref().unwrap().name)
                    );
                }
                assert_eq!(per_op.len(), job.kernel_count(), "{:?} job {j}", run.policy);
                for (op, (dur, parts)) in per_op {
                    assert_eq!(dur, job.ops[op as usize].duration_ns);
                    split += usize::from(parts > 1);
                }
                let jct: Vec<&Slice> = out
                    .slices
                    .iter()
                    .filter(|s| s.pid == pid && s.cat == "job")
                    .collect();
                assert_eq!(jct.len(), 1);
                assert_eq!(jct[0].dur_ns, run.spans[j].1 - run.spans[j].0);
            }
        }
        assert!(split > 0, "time slices of 150 ns split the 500 ns kernels");
        // Parts of one kernel, in time order, are joined by flows.
        let f = flows(&out);
        assert!(!f.is_empty());
        for (id, (from, to)) in f {
            assert_eq!((from.len(), to.len()), (1, 1), "flow {id}");
            let (a, b) = (from[0], to[0]);
            assert_eq!((a.pid, uint(a, "op")), (b.pid, uint(b, "op")));
            assert_eq!(uint(a, "part") + 1, uint(b, "part"));
            assert!(a.end_ns() <= b.start_ns);
        }
    }
}
