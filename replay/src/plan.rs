//! A launch plan: what one worker process replays.
//!
//! `fikit-sim` builds it from a simulated job (the same host program the
//! simulator runs: issue, wait and arrive steps, each after a host delay), plus
//! the shape of every GPU operation, so that the synthetic kernels occupy the
//! GPU as the recorded ones did.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::ReplayError;

/// How the workers of a run share the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LivePolicy {
    /// One job alone.
    Exclusive,
    /// Separate processes, the GPU's default time slicing.
    Timeslice,
    /// Separate processes as clients of the MPS server.
    Mps,
    /// A lower-priority job launches a kernel only while no higher-priority
    /// job has one in flight; high-priority jobs get high-priority streams.
    Preemptive,
    /// A job that is not the top (highest-priority unfinished) job launches a
    /// kernel only into the top job's predicted idle gap, when its predicted
    /// duration fits; one fill at a time.
    Fikit,
}

impl LivePolicy {
    /// True when launches pass through a [`crate::gate`].
    pub fn gated(self) -> bool {
        matches!(self, LivePolicy::Preemptive | LivePolicy::Fikit)
    }
}

pub use fikit_device::gpu::CopyDir;

/// What a GPU operation is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    /// A kernel, replayed by a synthetic kernel of the same shape.
    Kernel {
        /// Grid, blocks.
        grid: [u32; 3],
        /// Block, threads.
        block: [u32; 3],
        /// Static plus dynamic shared memory per block, bytes (reserved as
        /// dynamic shared memory, so as many blocks fit on an SM as recorded
        /// by this limit).
        shared_bytes: u32,
        /// Position among the job's kernels in issue order.
        position: u32,
        /// FIKIT's prediction of its duration (the profiled mean of its
        /// kernel key), ns.
        predicted_ns: i64,
    },
    /// A memory copy of `bytes`.
    Copy {
        /// Bytes.
        bytes: u64,
        /// Direction.
        dir: CopyDir,
    },
    /// A memset of `bytes`.
    Memset {
        /// Bytes.
        bytes: u64,
    },
}

/// One GPU operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Op {
    /// The job-local stream (0, 1, …).
    pub stream: u32,
    /// Recorded duration, ns (kernels run this long; copies and memsets move
    /// their bytes and take what they take).
    pub duration_ns: i64,
    /// What it is.
    pub kind: OpKind,
}

/// One step of the host program; delays are host time since the previous
/// step ended, as in the simulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// After `delay_ns`, issue op `op`.
    Issue {
        /// Host delay, ns.
        delay_ns: i64,
        /// Index into [`Plan::ops`].
        op: usize,
    },
    /// After `delay_ns`, block until `op` is done, then `wake_ns` more.
    Wait {
        /// Host delay, ns.
        delay_ns: i64,
        /// The op waited for (`None`: nothing outstanding).
        op: Option<usize>,
        /// Recorded wake-up latency, ns.
        wake_ns: i64,
        /// True when it ends an iteration.
        ends_iteration: bool,
    },
    /// Wait until `at_ns` after the host first reached an `Arrive` step
    /// (a request arrives; the simulator's [`HostStep::Arrive`]).
    ///
    /// [`HostStep::Arrive`]: fikit_sim_core::sim::job::HostStep::Arrive
    Arrive {
        /// Arrival, ns after the host first reached an `Arrive` step.
        at_ns: i64,
    },
}

/// What another job's worker needs to know about a job that may be the top
/// job under FIKIT: its priority and the profiled gap after each kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopInfo {
    /// Job index in the run.
    pub index: usize,
    /// Priority, 0 highest.
    pub priority: u8,
    /// Arrival, ns after the run's start.
    pub arrival_ns: i64,
    /// Recorded start of its first kernel, ns after its arrival.
    pub first_kernel_ns: i64,
    /// Profiled idle gap after each kernel (by position), ns.
    pub gap_after_kernel_ns: Vec<i64>,
}

/// Everything one worker replays.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Job name.
    pub job: String,
    /// Index of this job among the run's jobs (its slot in the control block).
    pub index: usize,
    /// Priority, 0 highest.
    pub priority: u8,
    /// Arrival, ns after the run's start.
    pub arrival_ns: i64,
    /// The policy of the run.
    pub policy: LivePolicy,
    /// GPU operations in issue order.
    pub ops: Vec<Op>,
    /// The host program.
    pub steps: Vec<Step>,
    /// Host time after the last step, ns.
    pub tail_ns: i64,
    /// Every job of the run (this one included), for the gates.
    pub jobs: Vec<TopInfo>,
}

impl Plan {
    /// Number of job-local streams.
    pub fn streams(&self) -> u32 {
        self.ops.iter().map(|o| o.stream + 1).max().unwrap_or(1)
    }

    /// Checks what the worker relies on: step indices in range, waits on
    /// issued ops, shapes non-zero, this job among `jobs`.
    pub fn validate(&self) -> Result<(), String> {
        let mut issued = vec![false; self.ops.len()];
        for (i, s) in self.steps.iter().enumerate() {
            match *s {
                Step::Issue { op, delay_ns } => {
                    if op >= self.ops.len() {
                        return Err(format!("step {i}: op {op} out of range"));
                    }
                    if issued[op] {
                        return Err(format!("step {i}: op {op} issued twice"));
                    }
                    if delay_ns < 0 {
                        return Err(format!("step {i}: negative delay"));
                    }
                    issued[op] = true;
                }
                Step::Wait { op: Some(op), .. } if op >= self.ops.len() || !issued[op] => {
                    return Err(format!("step {i}: waits for op {op}, not issued before"));
                }
                _ => {}
            }
        }
        for (i, o) in self.ops.iter().enumerate() {
            if let OpKind::Kernel { grid, block, .. } = o.kind
                && (grid.contains(&0) || block.contains(&0))
            {
                return Err(format!("op {i}: a kernel with an empty grid or block"));
            }
            if o.duration_ns < 0 {
                return Err(format!("op {i}: negative duration"));
            }
        }
        if !self.jobs.iter().any(|j| j.index == self.index) {
            return Err("the job itself is not among `jobs`".into());
        }
        Ok(())
    }

    /// Writes the plan as JSON.
    pub fn save(&self, path: &Path) -> Result<(), ReplayError> {
        let text = serde_json::to_vec(self).map_err(|e| ReplayError::Invalid {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        std::fs::write(path, text).map_err(|source| ReplayError::Io {
            path: path.display().to_string(),
            source,
        })
    }

    /// Reads and validates a plan.
    pub fn load(path: &Path) -> Result<Plan, ReplayError> {
        let invalid = |message: String| ReplayError::Invalid {
            path: path.display().to_string(),
            message,
        };
        let text = std::fs::read(path).map_err(|source| ReplayError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let plan: Plan = serde_json::from_slice(&text).map_err(|e| invalid(e.to_string()))?;
        plan.validate().map_err(invalid)?;
        Ok(plan)
    }
}

/// What a worker measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerResult {
    /// Job name.
    pub job: String,
    /// When the job arrived (its first step could run), monotonic ns.
    pub arrived_ns: i64,
    /// When it finished (last step, wait and tail done), monotonic ns.
    pub finished_ns: i64,
    /// Latency of each iteration, ns (as the simulator measures them).
    pub iterations_ns: Vec<i64>,
    /// Kernels launched.
    pub kernels: usize,
    /// GPU time of a synthetic kernel asked to spin 0 ns (launch and block
    /// scheduling), measured at start-up and taken off every kernel's spin, ns.
    pub kernel_floor_ns: i64,
    /// Total time launches were held by the policy gate, ns.
    pub gate_wait_ns: i64,
    /// Host steps that started later than planned by more than 50 µs (the
    /// replay could not keep up).
    pub late_steps: usize,
}
