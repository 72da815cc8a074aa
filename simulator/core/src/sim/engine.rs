//! The discrete-event engine: integer nanoseconds, events ordered by time with
//! a FIFO tie-break (the order they were scheduled in), so a run is a pure
//! function of its inputs.
//!
//! The engine replays every job's host program ([`crate::sim::job`]), keeps each
//! stream's operations in order, and asks the [`Policy`] which eligible
//! kernels may start, which running ones to pause, and when to be asked again.
//! Copies and memsets run on copy engines: they start when eligible and never
//! wait for other jobs.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::sim::gpu::{MpsOrder, SmSharing};
use crate::sim::job::{HostStep, Job, NO_OP};
use crate::sim::slots::{Placed, SlotPool};

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

/// Run-time state of one operation (56 bytes: one per operation of every
/// job in a run).
#[derive(Debug, Clone)]
pub struct OpRt {
    /// Status.
    pub status: Status,
    /// Work left, ns at full speed.
    pub remaining: f64,
    /// Current speed (1 = as recorded).
    pub rate: f64,
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
    host: Host,
    step: usize,
    host_t: i64,
    streams: Vec<VecDeque<usize>>,
    stream_last_done: Vec<i64>,
    outstanding: usize,
    queued_kernels: usize,
}

impl JobRt {
    fn end_iteration(&mut self, at: i64) {
        self.iterations_ns.push(at - self.iteration_start);
        self.iteration_start = at;
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
    /// Delay the high-priority job suffered from mispredictions, with the count (FIKIT only).
    fn misprediction(&self) -> Option<(i64, usize)> {
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

/// How kernels of different jobs share the SMs ([`Policy::sm_sharing`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SmShare {
    /// Block by block ([`crate::sim::slots`]) or fluid.
    pub mode: SmSharing,
    /// How much slower a kernel runs per unit of the SM share other jobs'
    /// kernels hold ([`GpuModel::corun_slowdown`](crate::sim::gpu::GpuModel::corun_slowdown)).
    pub corun_slowdown: f64,
    /// The share below which that slowdown is 0 ([`GpuModel::corun_threshold`](crate::sim::gpu::GpuModel::corun_threshold)).
    pub corun_threshold: f64,
    /// Block by block: in what order kernels take room.
    pub order: MpsOrder,
    /// Block by block: the calibration load's DRAM traffic per SM share,
    /// against which a kernel's own traffic (and its issue rate) weigh how
    /// hard it presses on the others ([`GpuModel::corun_load_traffic`](crate::sim::gpu::GpuModel::corun_load_traffic));
    /// empty: every kernel presses fully.
    pub load_traffic: std::sync::Arc<[[f64; 2]]>,
    /// Block by block, with `load_traffic`: the most a kernel weighs
    /// ([`GpuModel::corun_weight_max`](crate::sim::gpu::GpuModel::corun_weight_max));
    /// a kernel feels at most the heaviest weight among other jobs'
    /// started kernels, or 1 ([`crate::sim::slots`]).
    pub weight_max: f64,
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
    /// A wave of a kernel's blocks retired (block-by-block SM sharing).
    Wave(usize, usize, u32),
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

/// The simulation of a set of jobs under one policy.
pub struct Engine<'a> {
    jobs: &'a [Job],
    state: Vec<JobRt>,
    queue: BinaryHeap<Reverse<(i64, u64, usize)>>,
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
    /// Kernels on the GPU under block-by-block sharing.
    slots: SlotPool,
    /// Waves placed (scratch of `place_blocks`).
    placed: Vec<Placed>,
    /// Per-job SM share of running kernels (scratch of `update_rates`).
    shares: Vec<f64>,
    /// Set when something was due past [`MAX_SIM_NS`]: (now, when).
    too_long: Option<(i64, i64)>,
}

impl<'a> Engine<'a> {
    /// Prepares a run of `jobs`, job `i` arriving at `arrivals[i]`.
    pub fn new(jobs: &'a [Job], arrivals: &[i64], opts: RunOptions) -> Self {
        let state = jobs
            .iter()
            .zip(arrivals)
            .map(|(j, &arrival)| {
                let nstreams = j
                    .ops
                    .iter()
                    .map(|o| o.stream as usize + 1)
                    .max()
                    .unwrap_or(0);
                JobRt {
                    priority: j.priority,
                    arrival_ns: arrival,
                    eligible: Vec::new(),
                    running: Vec::new(),
                    ops: j
                        .ops
                        .iter()
                        .map(|o| OpRt {
                            status: Status::Pending,
                            remaining: o.duration_ns as f64,
                            rate: 1.0,
                            since: 0,
                            version: 0,
                            eligible_at: 0,
                            resumed_at: 0,
                            issued_at: OpRt::NOT_ISSUED,
                        })
                        .collect(),
                    last_kernel_done: None,
                    finish_ns: None,
                    iterations_ns: Vec::new(),
                    iteration_start: arrival,
                    host: Host::Busy,
                    step: 0,
                    host_t: arrival,
                    streams: vec![VecDeque::new(); nstreams],
                    stream_last_done: vec![i64::MIN; nstreams],
                    outstanding: 0,
                    queued_kernels: 0,
                }
            })
            .collect();
        Engine {
            jobs,
            state,
            queue: BinaryHeap::new(),
            events: Vec::new(),
            free_slots: Vec::new(),
            seq: 0,
            now: 0,
            wake_pending: None,
            running_kernels: 0,
            busy_since: 0,
            busy_ns: 0,
            processed: 0,
            segments: Vec::new(),
            opts,
            sharing: None,
            slots: SlotPool::new(jobs.len()),
            placed: Vec::new(),
            shares: Vec::new(),
            too_long: None,
        }
    }

    fn schedule(&mut self, t: i64, e: Event) {
        if t > MAX_SIM_NS {
            self.too_long.get_or_insert((self.now, t));
            return;
        }
        let slot = match self.free_slots.pop() {
            Some(s) => {
                self.events[s] = e;
                s
            }
            None => {
                self.events.push(e);
                self.events.len() - 1
            }
        };
        self.queue.push(Reverse((t, self.seq, slot)));
        self.seq += 1;
    }

    /// Runs to the end under `policy`. Fails only when the policy leaves
    /// eligible work unscheduled with nothing left to happen (a policy bug).
    pub fn run(mut self, policy: &mut dyn Policy) -> Result<RunResult, RunError> {
        self.sharing = policy.sm_sharing();
        for j in 0..self.jobs.len() {
            let arrival = self.state[j].arrival_ns;
            self.schedule(arrival, Event::Host(j));
        }
        let mut cmds = Commands::default();
        // Whether anything happened in this instant yet.
        let mut changed = false;
        while let Some(Reverse((t, _, slot))) = self.queue.pop() {
            if let Some((at_ns, due_ns)) = self.too_long {
                return Err(RunError::TooLong {
                    policy: policy.name(),
                    at_ns,
                    due_ns,
                });
            }
            let event = self.events[slot];
            self.free_slots.push(slot);
            self.now = t;
            self.processed += 1;
            match event {
                Event::Host(j) => {
                    self.host_step(j);
                    changed = true;
                }
                Event::Eligible(j, op) => {
                    self.make_eligible(j, op);
                    changed = true;
                }
                Event::Wave(j, op, wave) => {
                    // The wave's blocks free their room; the kernel ends with its last.
                    if let Some(done) = self.slots.wave_done(j, op, wave) {
                        if done {
                            self.complete(j, op);
                        }
                        changed = true;
                    }
                }
                Event::Done(j, op, version) => {
                    // A stale completion (rescheduled or paused since) changes nothing.
                    if self.state[j].ops[op].version == version
                        && self.state[j].ops[op].status == Status::Running
                    {
                        self.complete(j, op);
                        changed = true;
                    }
                }
                Event::Wake => {
                    // A wake-up the policy no longer waits for changes nothing.
                    if self.wake_pending == Some(t) {
                        self.wake_pending = None;
                        changed = true;
                    }
                }
            }
            // Same-time events first: the policy sees one consistent instant.
            if self
                .queue
                .peek()
                .is_some_and(|Reverse((nt, _, _))| *nt == t)
            {
                continue;
            }
            // An instant of stale events only is no decision point: the
            // policy is asked when something happened, so that a run does
            // not depend on when leftover events of earlier plans fall (the
            // engine skips time-slice rounds without creating them).
            if !std::mem::take(&mut changed) {
                continue;
            }
            // Ask the policy; after it paused work, ask again so it can use the freed device.
            for _ in 0..MAX_DECISIONS_PER_INSTANT {
                cmds.start.clear();
                cmds.pause.clear();
                cmds.wake_at = None;
                policy.decide(self.now, self.jobs, &self.state, &mut cmds);
                let changed = !cmds.start.is_empty() || !cmds.pause.is_empty();
                for &(j, op) in &cmds.pause {
                    self.pause(j, op);
                }
                for &(j, op) in &cmds.start {
                    self.start(j, op);
                }
                if changed && self.fluid() {
                    self.update_rates();
                }
                if let Some(w) = cmds.wake_at
                    && w > self.now
                    && self.wake_pending.is_none_or(|p| w < p)
                {
                    self.wake_pending = Some(w);
                    self.schedule(w, Event::Wake);
                }
                if cmds.pause.is_empty() {
                    break;
                }
            }
            if self.blocks() {
                self.place_blocks();
            }
            if let Some(r) = policy.rotation(self.now, &self.state) {
                let by = self.skip_rounds(&r);
                if by > 0 {
                    policy.skip(by);
                }
            }
        }
        if let Some((at_ns, due_ns)) = self.too_long {
            return Err(RunError::TooLong {
                policy: policy.name(),
                at_ns,
                due_ns,
            });
        }
        let mut jobs = Vec::with_capacity(self.state.len());
        for (j, st) in self.state.iter().enumerate() {
            let finish = st.finish_ns.ok_or_else(|| RunError::Stuck {
                policy: policy.name(),
                job: self.jobs[j].name.clone(),
                at_ns: self.now,
            })?;
            let mut iterations = st.iterations_ns.clone();
            if iterations.is_empty() {
                iterations.push(finish - st.arrival_ns);
            }
            jobs.push(JobOutcome {
                arrival_ns: st.arrival_ns,
                finish_ns: finish,
                iterations_ns: iterations,
            });
        }
        let first = jobs.iter().map(|j| j.arrival_ns).min().unwrap_or(0);
        let last = jobs.iter().map(|j| j.finish_ns).max().unwrap_or(0);
        Ok(RunResult {
            jobs,
            busy_ns: self.busy_ns,
            makespan_ns: last - first,
            events: self.processed,
            segments: self.segments,
            misprediction: policy.misprediction(),
        })
    }

    /// Runs host steps of job `j` that are due now, until one lies in the future or blocks.
    fn host_step(&mut self, j: usize) {
        let job = &self.jobs[j];
        loop {
            let st = &mut self.state[j];
            let Some(&step) = job.steps.get(st.step) else {
                st.host = Host::Finished;
                self.maybe_finish(j);
                return;
            };
            let delay = match step {
                HostStep::Issue { delay_ns, .. } | HostStep::Wait { delay_ns, .. } => delay_ns,
                HostStep::Arrive { at_ns } => st
                    .arrival_ns
                    .saturating_add(at_ns)
                    .saturating_sub(st.host_t)
                    .max(0),
            };
            let due = st.host_t.saturating_add(delay);
            if due > self.now {
                st.host = Host::Busy;
                self.schedule(due, Event::Host(j));
                return;
            }
            st.step += 1;
            st.host_t = self.now;
            match step {
                HostStep::Arrive { at_ns } => {
                    let st = &mut self.state[j];
                    st.iteration_start = st.arrival_ns.saturating_add(at_ns);
                }
                HostStep::Issue { op, .. } => self.issue(j, op as usize),
                HostStep::Wait {
                    op,
                    wake_ns,
                    ends_iteration,
                    ..
                } => {
                    let st = &mut self.state[j];
                    match (op != NO_OP).then_some(op as usize) {
                        Some(op) if st.ops[op].status != Status::Done => {
                            st.host = Host::Waiting {
                                op,
                                wake_ns,
                                ends_iteration,
                            };
                            return;
                        }
                        _ => {
                            let resume = self.now.saturating_add(wake_ns);
                            if ends_iteration {
                                st.end_iteration(resume);
                            }
                            st.host_t = resume;
                            if resume > self.now {
                                // Continue after the wake-up latency.
                                st.host = Host::Busy;
                                self.schedule(resume, Event::Host(j));
                                return;
                            }
                        }
                    }
                }
            }
        }
    }

    fn issue(&mut self, j: usize, op: usize) {
        let stream = self.jobs[j].ops[op].stream as usize;
        let st = &mut self.state[j];
        st.ops[op].issued_at = self.now;
        st.outstanding += 1;
        if self.jobs[j].ops[op].is_kernel() {
            st.queued_kernels += 1;
        }
        st.streams[stream].push_back(op);
        if st.streams[stream].len() == 1 {
            self.schedule_eligible(j, op);
        }
    }

    fn schedule_eligible(&mut self, j: usize, op: usize) {
        let o = &self.jobs[j].ops[op];
        let st = &self.state[j];
        let issued = st.ops[op].issued_at;
        debug_assert!(
            issued != OpRt::NOT_ISSUED,
            "only issued ops become eligible"
        );
        let ready = issued
            .saturating_add(o.issue_offset_ns)
            .max(st.stream_last_done[o.stream as usize].saturating_add(o.start_offset_ns));
        if ready <= self.now {
            self.make_eligible(j, op);
        } else {
            self.schedule(ready, Event::Eligible(j, op));
        }
    }

    fn make_eligible(&mut self, j: usize, op: usize) {
        let st = &mut self.state[j];
        st.ops[op].status = Status::Eligible;
        st.ops[op].eligible_at = self.now;
        if self.jobs[j].ops[op].is_kernel() {
            st.eligible.push(op);
        } else {
            self.start(j, op);
        }
    }

    fn start(&mut self, j: usize, op: usize) {
        let now = self.now;
        let is_kernel = self.jobs[j].ops[op].is_kernel();
        let by_blocks = is_kernel && self.blocks();
        let st = &mut self.state[j];
        let o = &mut st.ops[op];
        assert_eq!(
            o.status,
            Status::Eligible,
            "policy started op {op} of job {j} that is not eligible"
        );
        o.status = Status::Running;
        o.since = now;
        o.rate = 1.0;
        o.resumed_at = now;
        o.version += 1;
        let finish = now.saturating_add(o.remaining.ceil() as i64);
        let version = o.version;
        if is_kernel {
            if let Some(pos) = st.eligible.iter().position(|&x| x == op) {
                st.eligible.remove(pos);
            }
            st.running.push(op);
            if self.running_kernels == 0 {
                self.busy_since = now;
            }
            self.running_kernels += 1;
        }
        if by_blocks {
            // Its blocks take room at this instant's `place_blocks`; it ends with its last wave.
            let job = &self.jobs[j];
            let occupancy = job.occupancy(op).expect("a kernel has an occupancy");
            // Its place in line: when it became ready, or when it was launched.
            let key = match self.sharing.as_ref().map(|s| s.order) {
                Some(MpsOrder::Launch) => self.state[j].ops[op].issued_at,
                _ => now,
            };
            // How hard it presses on other jobs' kernels: the job's
            // measured pressure where it has one, else by its DRAM traffic
            // and issue rate where the model and its trace have the figures.
            let weight = job
                .pressure_weight
                .unwrap_or_else(|| match self.sharing.as_ref() {
                    Some(s) if s.corun_slowdown > 0.0 && !s.load_traffic.is_empty() => {
                        crate::sim::gpu::corun_weight(
                            &s.load_traffic,
                            occupancy.demand,
                            job.pressure(op),
                            s.weight_max,
                        )
                    }
                    _ => 1.0,
                });
            self.slots
                .admit(j, op, occupancy, job.ops[op].duration_ns, key, weight);
        } else {
            self.schedule(finish, Event::Done(j, op, version));
        }
    }

    /// How kernels share the SMs: block by block.
    fn blocks(&self) -> bool {
        self.sharing
            .as_ref()
            .is_some_and(|s| s.mode == SmSharing::Blocks)
    }

    /// How kernels share the SMs: fluid.
    fn fluid(&self) -> bool {
        self.sharing
            .as_ref()
            .is_some_and(|s| s.mode == SmSharing::Fluid)
    }

    /// The MPS share's concurrent-kernel slowdown and the share it is felt
    /// above (0 and 0 without one).
    fn corun_terms(&self) -> (f64, f64) {
        self.sharing
            .as_ref()
            .map_or((0.0, 0.0), |s| (s.corun_slowdown, s.corun_threshold))
    }

    /// Block-by-block sharing: places the blocks that fit now and schedules
    /// their waves' ends; a kernel's first block is its start on timelines.
    fn place_blocks(&mut self) {
        let (c, o_min) = self.corun_terms();
        let mut placed = std::mem::take(&mut self.placed);
        placed.clear();
        self.slots.place(self.now, c, o_min, &mut placed);
        for p in &placed {
            if p.first {
                self.state[p.job].ops[p.op].resumed_at = self.now;
            }
            self.schedule(p.end_ns, Event::Wave(p.job, p.op, p.wave));
        }
        self.placed = placed;
    }

    fn stop_running(&mut self, j: usize, op: usize) {
        let now = self.now;
        let st = &mut self.state[j];
        if let Some(pos) = st.running.iter().position(|&x| x == op) {
            st.running.remove(pos);
            self.running_kernels -= 1;
            if self.running_kernels == 0 {
                self.busy_ns += now - self.busy_since;
            }
            if self.opts.record_segments {
                self.segments.push(Segment {
                    job: j,
                    op,
                    ready_ns: st.ops[op].eligible_at.min(st.ops[op].resumed_at),
                    start_ns: st.ops[op].resumed_at,
                    end_ns: now,
                });
            }
        }
    }

    fn pause(&mut self, j: usize, op: usize) {
        let now = self.now;
        assert!(
            self.sharing.is_none(),
            "policy paused a kernel while sharing SMs (Policy::sm_sharing: such a policy never pauses)"
        );
        {
            let o = &mut self.state[j].ops[op];
            assert_eq!(
                o.status,
                Status::Running,
                "policy paused an op that is not running"
            );
            o.remaining = (o.remaining - (now - o.since) as f64 * o.rate).max(0.0);
        }
        self.stop_running(j, op);
        let st = &mut self.state[j];
        let o = &mut st.ops[op];
        o.status = Status::Eligible;
        o.eligible_at = now;
        o.version += 1;
        st.eligible.push(op);
    }

    fn complete(&mut self, j: usize, op: usize) {
        let now = self.now;
        let is_kernel = self.jobs[j].ops[op].is_kernel();
        if is_kernel {
            self.stop_running(j, op);
        }
        let stream = self.jobs[j].ops[op].stream as usize;
        let st = &mut self.state[j];
        st.ops[op].status = Status::Done;
        st.ops[op].remaining = 0.0;
        st.outstanding -= 1;
        if is_kernel {
            st.queued_kernels -= 1;
        }
        st.stream_last_done[stream] = now;
        let front = st.streams[stream].pop_front();
        debug_assert_eq!(front, Some(op));
        if is_kernel {
            let pos = self.jobs[j].kernel_position[op];
            st.last_kernel_done = Some((pos as usize, now));
        }
        if let Some(&next) = st.streams[stream].front() {
            self.schedule_eligible(j, next);
        }
        if let Host::Waiting {
            op: w,
            wake_ns,
            ends_iteration,
        } = self.state[j].host
            && w == op
        {
            let st = &mut self.state[j];
            let resume = now.saturating_add(wake_ns);
            if ends_iteration {
                st.end_iteration(resume);
            }
            st.host_t = resume;
            st.host = Host::Busy;
            if resume > now {
                self.schedule(resume, Event::Host(j));
            } else {
                self.host_step(j);
            }
        }
        if is_kernel && self.fluid() {
            self.update_rates();
        }
        self.maybe_finish(j);
    }

    fn maybe_finish(&mut self, j: usize) {
        let st = &mut self.state[j];
        if st.host == Host::Finished && st.outstanding == 0 && st.finish_ns.is_none() {
            st.finish_ns = Some(self.now.max(st.host_t).saturating_add(self.jobs[j].tail_ns));
        }
    }

    /// Skips whole rounds of rotation `r`, which has just begun at `now`
    /// (its first job's kernels all started now, every other job of it with
    /// all its kernels paused), while nothing else can happen: no host step,
    /// no operation becoming eligible or finishing, and no kernel of the
    /// rotation finishing. Leaves the state exactly as replaying the rounds
    /// slice by slice would (the same remaining work, stream order, busy
    /// time; a paused kernel's `eligible_at` and `resumed_at` those of its
    /// last turn), but for what no result shows: the events skipped are not
    /// counted, stale events are dropped, and recorded segments cover each
    /// kernel's turns of the skipped rounds with one segment. Remaining work
    /// is `f64`: exact, and so the same as stepping, below 2^53 ns (104
    /// days). Returns the time skipped, ns (0: nothing skipped).
    fn skip_rounds(&mut self, r: &Rotation) -> i64 {
        let now = self.now;
        let n = r.jobs.len() as i64;
        let (q, c) = (r.slice_ns, r.switch_ns);
        if n < 2 || q <= 0 || c < 0 || self.sharing.is_some() {
            return 0;
        }
        let Some(period) = q.checked_add(c).and_then(|t| t.checked_mul(n)) else {
            return 0;
        };
        let owner = r.jobs[0];
        // The rotation's state: the owner's kernels all just started, the
        // others' all paused; no other job has kernel work.
        let mut rounds = u64::MAX;
        for (j, st) in self.state.iter().enumerate() {
            let in_rotation = r.jobs.contains(&j);
            let shape_ok = if j == owner {
                st.eligible.is_empty() && !st.running.is_empty()
            } else if in_rotation {
                st.running.is_empty() && !st.eligible.is_empty()
            } else {
                !st.has_kernel_work()
            };
            if !shape_ok {
                return 0;
            }
            for &op in st.running.iter().chain(&st.eligible) {
                let o = &st.ops[op];
                if o.rate != 1.0 || (j == owner && o.since != now) {
                    return 0;
                }
                // A kernel survives round k's turn while its remaining work
                // before the turn exceeds the slice: rounds < remaining / q.
                // One round less, for rounding.
                let fit = (o.remaining / q as f64).ceil() - 2.0;
                if fit.is_nan() || fit < 1.0 {
                    return 0;
                }
                rounds = rounds.min(fit as u64);
            }
        }
        // Nothing else may happen before the rounds end: the earliest event
        // that is not a wake-up or a stale completion.
        let mut horizon = i64::MAX;
        for Reverse((t, _, slot)) in self.queue.iter() {
            let external = match self.events[*slot] {
                Event::Wake => false,
                Event::Done(j, op, v) => {
                    let o = &self.state[j].ops[op];
                    let live = o.version == v && o.status == Status::Running;
                    live && !(j == owner && self.state[j].running.contains(&op))
                }
                // Rounds are skipped only when kernels do not share SMs: no waves.
                Event::Host(_) | Event::Eligible(..) | Event::Wave(..) => true,
            };
            if external {
                horizon = horizon.min(*t);
            }
        }
        let before_horizon = ((horizon.min(MAX_SIM_NS) - now - 1) / period).max(0) as u64;
        let rounds = rounds.min(before_horizon);
        let min = self.opts.min_rounds_to_skip.unwrap_or(MIN_ROUNDS_TO_SKIP);
        if rounds < min.max(1) {
            return 0;
        }
        let rounds = rounds as i64;
        let by = rounds * period; // < horizon - now: no overflow
        let t1 = now + by;
        let work = (rounds * q) as f64;
        for (p, &j) in r.jobs.iter().enumerate() {
            // This job's turn in the last skipped round.
            let turn = t1 - period + p as i64 * (q + c);
            let st = &mut self.state[j];
            for &op in st.running.iter().chain(&st.eligible) {
                let o = &mut st.ops[op];
                if self.opts.record_segments {
                    let start_ns = if j == owner {
                        now
                    } else {
                        now + p as i64 * (q + c)
                    };
                    self.segments.push(Segment {
                        job: j,
                        op,
                        ready_ns: o.eligible_at.min(start_ns),
                        start_ns,
                        end_ns: turn + q,
                    });
                }
                o.remaining -= work;
                o.version += 1;
                o.eligible_at = turn + q;
                if j == owner {
                    o.since = t1;
                    o.resumed_at = t1;
                } else {
                    o.resumed_at = turn;
                }
            }
        }
        self.busy_ns += rounds * n * q;
        self.busy_since = t1;
        // Drop what the skipped rounds would have consumed (wake-ups and
        // stale completions, none later than t1), then resume the owner.
        let mut kept = Vec::with_capacity(self.queue.len());
        for e in std::mem::take(&mut self.queue).into_vec() {
            let Reverse((t, _, slot)) = e;
            if t > t1 {
                kept.push(e);
            } else {
                self.free_slots.push(slot);
            }
        }
        self.queue = BinaryHeap::from(kept);
        self.now = t1;
        let live: Vec<usize> = self.state[owner].running.clone();
        for op in live {
            let o = &self.state[owner].ops[op];
            let done = t1.saturating_add(o.remaining.ceil() as i64);
            let v = o.version;
            self.schedule(done, Event::Done(owner, op, v));
        }
        self.wake_pending = None;
        let wake = t1.saturating_add(q);
        self.wake_pending = Some(wake);
        self.schedule(wake, Event::Wake);
        by
    }

    /// MPS: when the jobs' SM demand exceeds the device, every running kernel
    /// slows down by the same factor. A job's own demand counts at most 1 (its
    /// recorded durations already include its own kernels' sharing), so a job
    /// alone always runs at its recorded speed.
    /// Under SM sharing: every running kernel's speed. When the jobs' SM
    /// demands (each job's at most 1) add up past the device, all run
    /// `1 / total` as fast; a kernel also runs `1 + c * o` times slower
    /// while other jobs' kernels hold a share `o` of the SMs (at most 1;
    /// `c`: [`SmShare::corun_slowdown`]; `o` counts above
    /// [`SmShare::corun_threshold`] only).
    fn update_rates(&mut self) {
        let now = self.now;
        let (c, o_min) = self.corun_terms();
        let mut shares = std::mem::take(&mut self.shares);
        shares.clear();
        shares.extend(self.state.iter().enumerate().map(|(j, st)| {
            st.running
                .iter()
                .map(|&op| self.jobs[j].sm_demand(op))
                .sum::<f64>()
                .min(1.0)
        }));
        let total: f64 = shares.iter().sum();
        let over = if total > 1.0 { total } else { 1.0 };
        let mut reschedule = Vec::new();
        for (j, st) in self.state.iter_mut().enumerate() {
            let rate = if c > 0.0 {
                let others = (total - shares[j]).clamp(0.0, 1.0);
                1.0 / (over * crate::sim::gpu::corun_factor(c, o_min, others))
            } else {
                1.0 / over
            };
            for &op in &st.running {
                let o = &mut st.ops[op];
                if o.rate == rate {
                    continue;
                }
                o.remaining = (o.remaining - (now - o.since) as f64 * o.rate).max(0.0);
                o.since = now;
                o.rate = rate;
                o.version += 1;
                let done = now.saturating_add((o.remaining / rate).ceil() as i64);
                reschedule.push((j, op, done, o.version));
            }
        }
        self.shares = shares;
        for (j, op, t, v) in reschedule {
            self.schedule(t, Event::Done(j, op, v));
        }
    }
}

// One per operation of every job in a run (simulator/README.md, "Large inputs").
const _: () = assert!(std::mem::size_of::<OpRt>() == 56);
