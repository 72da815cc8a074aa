//! The discrete-event engine: integer nanoseconds, events ordered by time with
//! a FIFO tie-break (the order they were scheduled in), so a run is a pure
//! function of its inputs.
//!
//! The engine replays every job's host program ([`crate::sim::job`]), keeps each
//! stream's operations in order, and asks the [`Policy`] which eligible
//! kernels may start, which running ones to pause, and when to be asked again.
//! Copies and memsets run on copy engines: they start when eligible and never
//! wait for other jobs.

use std::collections::{BinaryHeap, VecDeque};

use crate::sim::job::Job;
use crate::sim::slots::SlotPool;
pub use fill::Fill;

/// The latest simulated time a run may reach, ns: 2^62, 146 years. Every
/// time the engine computes saturates instead of overflowing, and a run that
/// would schedule anything later stops with [`RunError::TooLong`] (traces'
/// timestamps are bounded the same way: `fikit_trace::MAX_TIMESTAMP_NS`).
pub const MAX_SIM_NS: i64 = 1 << 62;

/// Whole time-slice rounds the engine skips at once, at the least (see
/// [`Policy::rotation`]): fewer are stepped through, so that ordinary runs
/// (kernels of microseconds to milliseconds) are replayed event by event.
pub const MIN_ROUNDS_TO_SKIP: u64 = 1024;

/// Decisions asked for in one instant: a policy that pauses work is asked again
/// (to start what the pause made room for); this bounds a policy that keeps pausing.
const MAX_DECISIONS_PER_INSTANT: usize = 4;

/// Identifies an operation: `(job index, op index)`.
pub type OpId = (usize, usize);

/// What an operation is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Not issued, or issued behind earlier work on its stream.
    Pending,
    /// Issued, at the head of its stream, its start offset elapsed: waiting for the policy.
    Eligible,
    /// On the GPU.
    Running,
    /// Finished.
    Done,
}

/// Run-time state of one operation (48 bytes: one per operation of every
/// job in a run).
#[derive(Debug, Clone)]
pub struct OpRt {
    /// Status.
    pub status: Status,
    /// Work left, ns at full speed.
    pub remaining: f64,
    /// When `remaining` was last brought up to date.
    pub since: i64,
    /// Bumped whenever the op's completion is rescheduled (stale events are dropped).
    pub version: u32,
    /// When it became eligible (last time).
    pub eligible_at: i64,
    /// When it last started or resumed.
    pub resumed_at: i64,
    /// When the host issued it; [`OpRt::NOT_ISSUED`] until then. (A plain
    /// `i64` rather than an `Option`: this struct exists once per operation
    /// of every job in a run, tens of millions on large inputs.)
    pub issued_at: i64,
}

impl OpRt {
    /// [`OpRt::issued_at`] of an operation the host has not issued yet.
    pub const NOT_ISSUED: i64 = i64::MIN;
}

/// What the host thread of a job is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Host {
    /// Its next step is due at an event already scheduled.
    Busy,
    /// Blocked until op finishes, then `wake_ns` more.
    Waiting {
        op: usize,
        wake_ns: i64,
        ends_iteration: bool,
    },
    /// Past its last step.
    Finished,
    /// In the launch call of kernel `op`, which the policy's gate holds
    /// ([`LaunchRule`]): the host goes on when the gate lets it. `issued`:
    /// the kernel is on its stream (a filler's waits there to be started);
    /// else the gate holds it off the GPU too (a queue at its hold).
    Launching { op: usize, issued: bool },
}

/// Run-time state of one job, readable by policies.
#[derive(Debug, Clone)]
pub struct JobRt {
    /// Priority, 0 highest.
    pub priority: u8,
    /// When the job arrives (its first host step may run), ns.
    pub arrival_ns: i64,
    /// Eligible kernels waiting for the policy, in the order they became eligible.
    pub eligible: Vec<usize>,
    /// Kernels on the GPU.
    pub running: Vec<usize>,
    /// Per-op state.
    pub ops: Vec<OpRt>,
    /// The last finished kernel: (kernel position in issue order, end time).
    pub last_kernel_done: Option<(usize, i64)>,
    /// When the job finished, once it has.
    pub finish_ns: Option<i64>,
    /// Latency of each finished iteration, ns: from its start (the previous
    /// iteration's end, the job's arrival, or the request's arrival) to the
    /// return of the blocking wait that ends it.
    pub iterations_ns: Vec<i64>,
    /// When the current iteration started, ns.
    pub iteration_start: i64,
    /// What [`HostStep::Arrive`] times count from: when the host reached
    /// the first of them (the end of a serving job's set-up, as a server
    /// takes requests once it is up); `None` before.
    ///
    /// [`HostStep::Arrive`]: crate::sim::job::HostStep::Arrive
    requests_from: Option<i64>,
    /// The host waits for a request that has not arrived yet
    /// ([`crate::sim::job::HostStep::Arrive`]): a serving job between
    /// requests ([`JobRt::between_requests`]).
    awaiting_request: bool,
    host: Host,
    step: usize,
    host_t: i64,
    streams: Vec<VecDeque<usize>>,
    stream_last_done: Vec<i64>,
    outstanding: usize,
    queued_kernels: usize,
    /// Launch calls its gate held (returned later than they were made)
    /// and their summed time held, ns ([`JobOutcome::launches_held`]).
    held: (u64, i64),
    /// Their predicted time ([`Job::predicted_ns`]), ns: kept only under a
    /// policy that gates launches ([`Policy::gates_launches`]). Wider than
    /// a time: a few kernels' predictions of up to 2^62 ns each sum past
    /// `i64`, and the sum must come back exactly as they finish.
    queued_predicted_ns: i128,
}

impl JobRt {
    fn end_iteration(&mut self, at: i64) {
        self.iterations_ns.push(at - self.iteration_start);
        self.iteration_start = at;
    }

    /// True when the job serves requests and sits between them: its host
    /// waits for the next to arrive and none of its work is outstanding.
    pub fn between_requests(&self) -> bool {
        self.awaiting_request && self.outstanding == 0
    }

    /// True when the job has kernels eligible or running.
    pub fn has_kernel_work(&self) -> bool {
        !self.eligible.is_empty() || !self.running.is_empty()
    }

    /// True when the job has issued kernels that are not done: eligible,
    /// running, or queued on their stream (behind an earlier operation, or
    /// within their recorded start offset). To the GPU's scheduler such a
    /// context has work: its launches are in its queue.
    pub fn has_queued_kernels(&self) -> bool {
        self.queued_kernels > 0
    }

    /// The operations the host issued that are not done (running, eligible
    /// or queued on their stream), stream by stream, each stream in issue
    /// order.
    pub fn issued_not_done(&self) -> impl Iterator<Item = usize> + '_ {
        self.streams.iter().flatten().copied()
    }

    /// True once the job finished.
    pub fn finished(&self) -> bool {
        self.finish_ns.is_some()
    }
}

/// Commands a policy gives the engine.
#[derive(Debug, Default)]
pub struct Commands {
    /// Kernels to start now (must be eligible).
    pub start: Vec<OpId>,
    /// Running kernels to pause now; they become eligible again with their remaining work.
    pub pause: Vec<OpId>,
    /// Ask again at this time (the earliest one given wins).
    pub wake_at: Option<i64>,
    /// How each job's kernel launches return to its host from now on, by
    /// job index ([`LaunchRule`]); empty: the rules stay as last given
    /// (none given: every launch returns at once, as the driver's do).
    pub launch: Vec<LaunchRule>,
}

/// When a job's kernel launch returns to its host: what a policy that
/// gates launch calls (as the live gate does) holds the host for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LaunchRule {
    /// At once: the host runs ahead of its kernels.
    #[default]
    Free,
    /// Once the kernel has started: the gate lets it go when the policy
    /// does (a filler waiting for a gap).
    UntilStarted,
    /// Once the job's kernels launched before it and not done are within
    /// this many ns of predicted time ([`fikit_rules::may_queue`]): a
    /// job's queue while a job above it is away.
    Hold(i64),
}

impl Commands {
    /// Asks to be called again at `t`.
    pub fn wake(&mut self, t: i64) {
        self.wake_at = Some(self.wake_at.map_or(t, |w| w.min(t)));
    }
}

/// A scheduling policy: decides which eligible kernels run.
pub trait Policy {
    /// Short name, as on the command line.
    fn name(&self) -> &'static str;
    /// Called after every change; pushes what to do into `cmds`.
    fn decide(&mut self, now: i64, jobs: &[Job], state: &[JobRt], cmds: &mut Commands);
    /// `Some` when kernels of different jobs run at once and share the SMs
    /// (MPS): how ([`SmShare`]). A policy that shares SMs never pauses a
    /// kernel. `None` (the default): every started kernel runs at its
    /// recorded speed.
    fn sm_sharing(&self) -> Option<SmShare> {
        None
    }
    /// Whether the policy holds launch calls ([`Commands::launch`]): then
    /// a launch before its first word on a job waits for it (the gate
    /// decides from the job's first launch on). `false` (the default):
    /// every launch returns at once.
    fn gates_launches(&self) -> bool {
        false
    }
    /// Delay the high-priority job suffered from mispredictions, with the count (FIKIT only).
    fn misprediction(&self) -> Option<(i64, usize)> {
        None
    }
    /// Per job, the kernels the policy started into another job's idle gap
    /// (FIKIT's fills, as the live gate counts its `fills`); `None` (the
    /// default) for a policy that does not fill.
    fn fills(&self) -> Option<&[u64]> {
        None
    }
    /// When the policy has just begun a time slice of a rotation that
    /// repeats unchanged for as long as no kernel finishes and nothing else
    /// happens (each job of the rotation in turn runs all its kernels for
    /// `slice_ns`, then `switch_ns` pass with nothing running), the rotation,
    /// its current owner first. The engine then skips whole rounds at once
    /// ([`Policy::skip`]) instead of replaying each slice: a trace of kernels
    /// lasting years would otherwise take a quantum at a time. `None`
    /// (the default): the policy's decisions do not repeat so.
    fn rotation(&self, _now: i64, _state: &[JobRt]) -> Option<Rotation> {
        None
    }
    /// The engine skipped `by` ns of whole rounds of the rotation
    /// [`Policy::rotation`] gave: move the policy's own clock on by as much.
    fn skip(&mut self, _by: i64) {}
}

/// How kernels of different jobs share the SMs ([`Policy::sm_sharing`]):
/// block by block ([`crate::sim::slots`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SmShare {
    /// How much slower a kernel runs per unit of the SM share other jobs'
    /// kernels hold ([`GpuModel::corun_slowdown`](crate::sim::gpu::GpuModel::corun_slowdown)).
    pub corun_slowdown: f64,
    /// The share of a block time a multi-wave kernel's thin last wave takes
    /// however few blocks it holds ([`GpuModel::last_wave_floor`](crate::sim::gpu::GpuModel::last_wave_floor)).
    pub last_wave_floor: f64,
}

/// A rotation of time slices (see [`Policy::rotation`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rotation {
    /// The jobs in turn, the one whose slice has just begun first.
    pub jobs: Vec<usize>,
    /// How long each job's kernels run per turn, ns.
    pub slice_ns: i64,
    /// Nothing runs for this long after each turn, ns.
    pub switch_ns: i64,
}

#[derive(Debug, Clone, Copy)]
enum Event {
    Host(usize),
    Eligible(usize, usize),
    Done(usize, usize, u32),
    Wake,
}

/// A kernel's stay on the GPU from a start (or resume) to its end (or pause).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Job index.
    pub job: usize,
    /// Op index in the job.
    pub op: usize,
    /// When it last became able to run (ready on its stream, or paused),
    /// ns: `start_ns - ready_ns` is how long it waited for the GPU (for room
    /// beside other jobs' blocks, or for its turn).
    pub ready_ns: i64,
    /// Start, ns.
    pub start_ns: i64,
    /// End, ns.
    pub end_ns: i64,
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// Per job: arrival, finish, iteration ends.
    pub jobs: Vec<JobOutcome>,
    /// Time at least one kernel ran, ns.
    pub busy_ns: i64,
    /// From the first arrival to the last finish, ns.
    pub makespan_ns: i64,
    /// Events processed.
    pub events: u64,
    /// Kernel run segments, for timelines (when asked for).
    pub segments: Vec<Segment>,
    /// FIKIT's misprediction delay and count.
    pub misprediction: Option<(i64, usize)>,
    /// The latency-critical job's idle GPU time and what other jobs'
    /// kernels used of it; `None` for a job alone.
    pub fill: Option<Fill>,
}

/// The outcome of one job in a run.
#[derive(Debug, Clone)]
pub struct JobOutcome {
    /// Arrival, ns.
    pub arrival_ns: i64,
    /// Finish, ns.
    pub finish_ns: i64,
    /// Iteration latencies, ns: from the previous iteration's end (or the
    /// arrival) to each blocking wait's return; the whole job when it never waits.
    pub iterations_ns: Vec<i64>,
    /// Under a policy that gates launches ([`Policy::gates_launches`]):
    /// the launch calls that returned later than they were made (the host
    /// held in them, as the live gate's `waits`) and their summed time held,
    /// ns; `(0, 0)` otherwise.
    pub launches_held: (u64, i64),
    /// Under a policy that fills gaps ([`Policy::fills`]): this job's
    /// kernels it started into another job's idle gap; `None` otherwise.
    pub fills: Option<u64>,
}

impl JobOutcome {
    /// Job completion time: finish − arrival.
    pub fn jct_ns(&self) -> i64 {
        self.finish_ns - self.arrival_ns
    }
}

/// A run that could not finish.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RunError {
    /// The policy left work unscheduled.
    #[error(
        "policy {policy} left job {job} unfinished at {at_ns} ns with nothing left to happen (a policy bug)"
    )]
    Stuck {
        /// The policy.
        policy: &'static str,
        /// The job that never finished.
        job: String,
        /// When the run stopped.
        at_ns: i64,
    },
    /// The run would pass [`MAX_SIM_NS`]: the inputs' durations, gaps or
    /// arrivals (or the GPU model's times) are implausibly long.
    #[error(
        "under policy {policy}, the replay would run past {MAX_SIM_NS} ns (2^62 ns, 146 years) of \
         simulated time (at {at_ns} ns, something was due at {due_ns} ns): the inputs' \
         durations, gaps or arrivals are implausibly long"
    )]
    TooLong {
        /// The policy.
        policy: &'static str,
        /// When the run stopped.
        at_ns: i64,
        /// What was due beyond the limit.
        due_ns: i64,
    },
}

impl RunError {
    /// True when the inputs, not the program, are at fault ([`RunError::TooLong`]).
    pub fn is_bad_input(&self) -> bool {
        matches!(self, RunError::TooLong { .. })
    }
}

/// Options of one run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Record kernel run segments (for timelines).
    pub record_segments: bool,
    /// Skip whole time-slice rounds from this many on ([`Policy::rotation`]);
    /// `None`: from [`MIN_ROUNDS_TO_SKIP`]; `Some(u64::MAX)`: never (every
    /// slice replayed, as tests compare).
    pub min_rounds_to_skip: Option<u64>,
}

/// An event in the queue: its time and FIFO sequence number in one key
/// (time, then number; one integer compare), and its slot in the engine's
/// events. The queue's head is the least key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Queued {
    key: u128,
    slot: usize,
}

impl Queued {
    fn new(t: i64, seq: u64, slot: usize) -> Queued {
        // Flipping the sign bit orders i64 as u64 does.
        let t = (t as u64) ^ (1 << 63);
        Queued {
            key: (u128::from(t) << 64) | u128::from(seq),
            slot,
        }
    }

    /// Its time, ns.
    fn time(&self) -> i64 {
        (((self.key >> 64) as u64) ^ (1 << 63)) as i64
    }

    /// Its sequence number.
    fn seq(&self) -> u64 {
        self.key as u64
    }
}

impl Ord for Queued {
    /// Reversed, so that the max-heap's head is the least key.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.key.cmp(&self.key)
    }
}

impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The simulation of a set of jobs under one policy.
pub struct Engine<'a> {
    jobs: &'a [Job],
    state: Vec<JobRt>,
    queue: BinaryHeap<Queued>,
    events: Vec<Event>,
    free_slots: Vec<usize>,
    seq: u64,
    now: i64,
    wake_pending: Option<i64>,
    running_kernels: usize,
    busy_since: i64,
    busy_ns: i64,
    processed: u64,
    segments: Vec<Segment>,
    opts: RunOptions,
    /// How kernels of different jobs share the SMs (the policy's).
    sharing: Option<SmShare>,
    /// Kernels on the GPU under block-by-block sharing, with their waves'
    /// ends: events beside `queue` (the next event is the earlier of the two).
    slots: SlotPool,
    /// Kernels whose first blocks were placed (scratch of `place_blocks`).
    first: Vec<(usize, usize)>,
    /// Set when something was due past [`MAX_SIM_NS`]: (now, when).
    too_long: Option<(i64, i64)>,
    /// The latency-critical job's idle time and what others filled of it.
    fill: fill::FillCount,
    /// How each job's launches return ([`Commands::launch`]), as the
    /// policy last said; empty: all at once.
    launch: Vec<LaunchRule>,
    /// Whether the policy gates launches ([`Policy::gates_launches`]).
    gates: bool,
}

/// The latency-critical job's idle GPU time that others filled.
mod fill;
/// An operation's life: issued, eligible, started, paused, completed.
mod ops;
/// Whole time-slice rounds skipped at once.
mod rounds;
/// The event loop: the engine prepared, its queue, and the run.
mod run;
/// Kernels of different jobs sharing the SMs.
mod sharing;

// One per operation of every job in a run (simulator/README.md, "Large inputs").
const _: () = assert!(std::mem::size_of::<OpRt>() == 48);
