//! A job as the simulator replays it: its host thread's program, closed loop.
//!
//! The host's recorded actions become a sequence of [`HostStep`]s, each after a
//! host-side delay measured from the end of the previous step:
//! - [`HostStep::Issue`] hands a GPU operation to its stream (the launch call);
//! - [`HostStep::Wait`] blocks the host until a GPU operation is done (a
//!   synchronization or a blocking copy), then resumes after the recorded
//!   wake-up latency.
//!
//! So when another job delays a kernel, the host time behind a synchronization
//! moves with it, and the gaps behind asynchronous launches shrink, as on a
//! real GPU. Replayed alone, the program reproduces the recorded timeline: each
//! operation starts at `max(issue time, previous op on its stream done)` plus its
//! recorded start offset, and runs for its recorded duration.

use std::collections::HashMap;
use std::sync::Arc;

use fikit_trace::Trace;

pub use build::{DEFAULT_BACK_TO_BACK_NS, blocks_per_sm, profiled_gaps};
pub use reshape::{fixed_arrivals, poisson_arrivals};

/// A trace becomes a job, by stage.
mod build;
/// Jobs made from jobs: repeated, serving, another host speed.
mod reshape;
#[cfg(test)]
mod tests;

/// One GPU operation of a job. Compact (56 bytes): a large input holds tens
/// of millions; a kernel's key and SM demand are read through
/// [`GpuOp::kernel_key`] and [`Job::occupancy`].
#[derive(Debug, Clone, PartialEq)]
pub struct GpuOp {
    /// Recorded duration, ns.
    pub duration_ns: i64,
    /// Time from the previous op on the stream done to this op's start, ns:
    /// the recorded one when the op was queued behind it, else the job's
    /// back-to-back gap (capped by what was recorded).
    pub start_offset_ns: i64,
    /// Time from the launch call to the op's start, ns (the launch latency):
    /// the recorded one when the op was launched to an idle stream, else the
    /// job's typical launch latency (capped by what was recorded). The op
    /// starts at `max(issue + issue_offset, previous done + start_offset)`,
    /// which alone is exactly the recorded start; when other jobs delay the
    /// stream, queued ops follow each other at the back-to-back gap, not at
    /// the launch latency.
    pub issue_offset_ns: i64,
    /// Recorded start, ns since the job's first host action (for reports).
    pub recorded_start_ns: i64,
    /// The kernel key (0 for a copy or memset).
    key: u64,
    /// The job-local stream index (0, 1, … in order of first use).
    pub stream: u32,
    /// Index of its launch shape in [`Job::shapes`] (copies of an op share it).
    pub shape: u32,
    /// Index of the kernel's occupancy in [`Job::occupancies`];
    /// [`GpuOp::NOT_A_KERNEL`] for a copy or memset.
    demand: u32,
}

/// How a kernel occupies the SMs: its blocks, how many fit on one SM, and
/// the device's SM count (from the trace's metadata).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Occupancy {
    /// Thread blocks in the grid (at least 1).
    pub blocks: u64,
    /// Blocks of this kernel that fit on one SM ([`blocks_per_sm`], at least 1).
    pub per_sm: u64,
    /// SMs of the device (at least 1).
    pub sms: u32,
    /// The fraction of the device's block room one wave takes: `blocks /
    /// (per_sm * sms)`, at most 1.
    pub demand: f64,
}

impl Occupancy {
    /// A kernel of `blocks` blocks, `per_sm` to an SM, on `sms` SMs.
    pub fn new(blocks: u64, per_sm: u64, sms: u32) -> Occupancy {
        let (blocks, per_sm, sms) = (blocks.max(1), per_sm.max(1), sms.max(1));
        let capacity = (per_sm * u64::from(sms)) as f64;
        Occupancy {
            blocks,
            per_sm,
            sms,
            demand: (blocks as f64 / capacity).min(1.0),
        }
    }

    /// Blocks of a full wave: as many as the device holds, or all of them.
    pub fn wave_blocks(&self) -> u64 {
        self.blocks.min(self.per_sm * u64::from(self.sms))
    }

    /// Waves the kernel runs alone: `ceil(blocks / wave_blocks)`.
    pub fn waves(&self) -> u64 {
        self.blocks.div_ceil(self.wave_blocks())
    }
}

/// How a recorded operation was launched: what live replay needs to launch
/// a stand-in of the same shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpShape {
    /// A kernel.
    Kernel {
        /// Grid, blocks.
        grid: [u32; 3],
        /// Block, threads.
        block: [u32; 3],
        /// Static plus dynamic shared memory per block, bytes.
        shared_bytes: u32,
    },
    /// A copy of `bytes` (`kind` `None`: a memset).
    Mem {
        /// Bytes.
        bytes: u64,
        /// Direction; `None` for a memset.
        kind: Option<fikit_trace::CopyKind>,
    },
}

impl GpuOp {
    /// [`GpuOp::demand`] of a copy or memset (which occupy a copy engine, not
    /// the SMs: they never wait for other jobs).
    const NOT_A_KERNEL: u32 = u32::MAX;

    /// True when the op runs on the SMs (a kernel).
    pub fn is_kernel(&self) -> bool {
        self.demand != Self::NOT_A_KERNEL
    }

    /// `Some(kernel_key)` for a kernel, `None` for a copy or memset.
    pub fn kernel_key(&self) -> Option<u64> {
        self.is_kernel().then_some(self.key)
    }
}

/// Index of "no operation" in [`HostStep::Wait::op`].
pub const NO_OP: u32 = u32::MAX;

/// One step of the host program (24 bytes: one per operation at least).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostStep {
    /// After `delay_ns` of host time, issue GPU operation `op`.
    Issue {
        /// Host time since the previous step ended, ns.
        delay_ns: i64,
        /// Index into [`Job::ops`].
        op: u32,
    },
    /// After `delay_ns`, block until operation `op` is done, then `wake_ns` more.
    Wait {
        /// Host time since the previous step ended, ns.
        delay_ns: i64,
        /// The operation waited for (index into [`Job::ops`]); [`NO_OP`] when
        /// nothing was outstanding.
        op: u32,
        /// Recorded time from the op's end (or the wait's start, if later) to the wait's return, ns.
        wake_ns: i64,
        /// True when the wait ends an iteration (a blocking host synchronization).
        ends_iteration: bool,
    },
    /// Wait until `at_ns` after the host first reached an `Arrive` step (a
    /// serving job's set-up done; the job's arrival when it has none): a
    /// request arrives; the iteration that follows is measured from this
    /// time (queueing included).
    Arrive {
        /// Arrival time relative to the host's first `Arrive` step, ns.
        at_ns: i64,
    },
}

/// A job ready to replay.
#[derive(Debug, Clone)]
pub struct Job {
    /// Name.
    pub name: String,
    /// Priority: 0 is the highest.
    pub priority: u8,
    /// GPU operations, in issue order.
    pub ops: Arc<[GpuOp]>,
    /// The host program.
    pub steps: Arc<[HostStep]>,
    /// Host time after the last step until the job ends, ns (0: it ends with its last step or op).
    pub tail_ns: i64,
    /// Recorded span: first host action to the later of last op end and last host action end, ns.
    pub recorded_span_ns: i64,
    /// Recorded idle gap after each kernel, by kernel position (issue order of
    /// kernels): the profiled gap FIKIT predicts with. 0 when the next kernel
    /// followed at once or overlapped; the last kernel's is 0.
    pub gap_after_kernel_ns: Arc<[i64]>,
    /// Profiled mean duration per kernel key, ns: FIKIT's duration prediction.
    pub mean_duration_ns: Arc<HashMap<u64, i64>>,
    /// For each op, its position among the job's kernels in issue order
    /// (`u32::MAX` for copies and memsets).
    pub kernel_position: Arc<[u32]>,
    /// The distinct occupancies of the job's kernels: blocks, blocks per SM
    /// from the grid, block, registers and shared memory against the per-SM
    /// limits, and the SM demand ([`Job::occupancy`]).
    pub occupancies: Arc<[Occupancy]>,
    /// How many of the first iterations are the process's setup (weight
    /// upload, warm-up, autotuning) rather than work to measure: latency
    /// statistics leave them out. For a job made from a trace, the first
    /// ([`setup_iterations`]); 0 for a serving job, whose setup is no iteration.
    pub setup_iterations: usize,
    /// How many times the recorded program runs back to back ([`Job::repeated`]),
    /// each run with its own set-up iterations; 1 for a job as recorded.
    pub runs: usize,
    /// Launch shapes of the recorded operations ([`GpuOp::shape`] indexes
    /// it); empty unless the job was built with [`Job::from_trace_with_shapes`].
    pub shapes: Arc<[OpShape]>,
    /// Under MPS, how hard every kernel of the job presses on other jobs'
    /// kernels, 0 to 1, where measured ([`crate::sim::pressure`]: the job
    /// beside a latency-bound victim). `None`: every kernel presses fully
    /// (weight 1).
    pub pressure_weight: Option<f64>,
    /// The regions of the job's untraced runs, ns: each from its first
    /// kernel launch to the later of its last launch and its last blocking
    /// synchronization, as `fikit-profile` measured them beside the traced
    /// run (the trace's characterization; empty without one). What
    /// [`crate::sim::host`] sets the host's speed by.
    pub untraced_regions_ns: Arc<[i64]>,
    /// Each untraced run's median busy part of an iteration, ns (its first
    /// kernel launch to the blocking synchronization that ends it, the
    /// host's idle before it left out), for the runs that measured them
    /// (empty in traces from before [`fikit_trace::UntracedRun::busy_ns`]):
    /// what [`crate::sim::host`] sets a server's host speed by, as its
    /// region holds its idle between requests.
    pub untraced_busy_ns: Arc<[i64]>,
    /// Each of those runs' busy parts, every iteration's, in the order of
    /// [`Job::untraced_busy_ns`]: how a server's requests spread about
    /// the median ([`crate::sim::host`] gives the replay that spread).
    pub untraced_busy_parts_ns: Arc<[Arc<[i64]>]>,
    /// Each untraced run's iterations, sync to sync, set-up left out
    /// ([`fikit_trace::UntracedRun::iterations_ns`]), in the order of
    /// [`Job::untraced_regions_ns`] (a run that recorded none, empty): how
    /// a closed-loop job's iterations spread as it ran untraced
    /// ([`crate::sim::host`] gives the replay that spread).
    pub untraced_iterations_ns: Arc<[Arc<[i64]>]>,
    /// What the trace's pressure pass measured, with the job's SM share:
    /// what [`Job::pressure_weight`] is set from for a model
    /// ([`crate::sim::pressure::set_measured_pressure`]). `None` without a pressure pass.
    pub measured_pressure: Option<MeasuredPressure>,
    /// The program as recorded when this one was rebuilt from it (repeated,
    /// or serving requests: [`Job::repeated`], [`Job::serving`]); `None`
    /// for a job as its trace has it. Its untraced runs measured that
    /// program, so [`crate::sim::host`] fits the host's speed on it.
    pub recorded: Option<Arc<Job>>,
}

/// A job's pressure pass, for its weight under a model
/// ([`crate::sim::pressure::weight`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeasuredPressure {
    /// The victim's slowdown while the job's kernels overlapped it (`None`:
    /// past any slowdown).
    pub slowdown: Option<f64>,
    /// The job's one-wave SM share over its steady kernels
    /// ([`crate::sim::pressure::share`]).
    pub share: f64,
}

/// How many of a traced program's first iterations are its setup: the
/// first, and the second too when it holds a blocking wait ending no
/// iteration (a synchronous copy with no kernel since the previous wait: a
/// model's weights, uploaded one parameter at a time). A PyTorch program
/// that makes its input on the GPU before uploading its weights ends its
/// first iteration at the first weight's copy, and its second holds the
/// whole upload. At most two: a program that waits for a copy in every
/// iteration keeps the rest measured.
pub fn setup_iterations(steps: &[HostStep]) -> usize {
    let mut copy_waits = vec![0usize];
    for s in steps {
        if let HostStep::Wait { ends_iteration, .. } = *s {
            if ends_iteration {
                copy_waits.push(0);
            } else if let Some(last) = copy_waits.last_mut() {
                *last += 1;
            }
        }
    }
    if copy_waits.get(1).is_some_and(|&c| c > 0) {
        2
    } else {
        1
    }
}

impl Job {
    /// Kernel `op`'s predicted duration, ns, as a gate predicts it: its
    /// kernel key's profiled mean, else its own duration (0 for an op that
    /// is no kernel).
    pub fn predicted_ns(&self, op: usize) -> i64 {
        let o = &self.ops[op];
        o.kernel_key().map_or(0, |key| {
            self.mean_duration_ns
                .get(&key)
                .copied()
                .unwrap_or(o.duration_ns)
        })
    }

    /// How kernel `op` occupies the SMs (`None` for a copy or memset).
    pub fn occupancy(&self, op: usize) -> Option<&Occupancy> {
        let d = self.ops[op].demand;
        (d != GpuOp::NOT_A_KERNEL).then(|| &self.occupancies[d as usize])
    }

    /// Builds the replayable program of a trace.
    ///
    /// GPU operations without a recorded launch are issued at their recorded
    /// start. Blocking waits are the `sync` rows that block the host and the
    /// blocking API calls (`cudaMemcpy`, `cudaStreamSynchronize`, …); each waits
    /// for the operation, issued before it (on its stream, when it names one),
    /// that ended last before the wait returned.
    pub fn from_trace(trace: &Trace) -> Job {
        Job::build(trace, false)
    }

    /// [`Job::from_trace`] keeping every operation's launch shape
    /// ([`Job::shapes`]), which live replay needs; simulation does not (and
    /// saves their memory on large traces).
    pub fn from_trace_with_shapes(trace: &Trace) -> Job {
        Job::build(trace, true)
    }
}

// The sizes the large-input figures (simulator/README.md, "Large inputs")
// depend on: one of each per operation.
const _: () = assert!(std::mem::size_of::<GpuOp>() == 56);
const _: () = assert!(std::mem::size_of::<HostStep>() == 24);
