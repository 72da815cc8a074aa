//! Live replay: runs a job's launch plan on a real GPU, one process per job,
//! so that every number `fikit-sim` simulates can be checked against hardware.
//!
//! - [`plan`]: what a worker replays (plain data, built by `fikit-sim` from a
//!   simulated job; JSON between the processes);
//! - [`gate`]: the live policies' launch rules (pure functions, the same
//!   decisions as the simulator's policies; tested without a GPU);
//! - [`control`]: the block of shared memory the workers of one run
//!   coordinate through (start time, per-job launch and completion counters),
//!   a layout on `fikit-gate`'s shared control file ([`fikit_gate::shm`]);
//! - [`gpu`]: the CUDA driver and NVRTC through cudarc's `result`/`sys`
//!   layers, re-exported from `fikit-device` (where all of the GPU side's
//!   `unsafe` lives);
//! - [`worker`]: executes a plan: host delays spun on the monotonic clock,
//!   synthetic kernels that run for the recorded duration, copies, memsets
//!   and synchronizations;
//! - [`group`]: runs plans together, one worker process each (the worker
//!   is any program that calls [`worker::run`]; `fikit-lab live-worker`),
//!   under a private MPS daemon when the plans ask for MPS;
//! - [`calibrate`]: measurements of the GPU's scheduling parameters;
//! - [`live`]: a simulator scenario's jobs as launch plans, run live and
//!   reported as a simulation is, and the context hand-over probe;
//! - [`timeline`]: reading the per-kernel timelines workers write, and the
//!   context hand-over measured from them.

pub mod calibrate;
pub mod control;
pub mod gate;
/// The GPU wrappers and kernels (the `fikit-device` crate's).
pub use fikit_device::gpu;
pub mod group;
pub mod live;
pub mod plan;
pub mod timeline;
pub mod worker;

/// Errors of live replay.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The GPU side failed: a driver call, loading libcuda or NVRTC,
    /// compiling the kernels, or starting MPS.
    #[error(transparent)]
    Device(#[from] fikit_device::DeviceError),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A plan or control file is not valid.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A worker process failed.
    #[error("worker for job {job} failed: {message}")]
    Worker {
        /// The job.
        job: String,
        /// What happened (its exit status and the end of its stderr).
        message: String,
    },
    /// The run did not start or finish in time.
    #[error("{0}")]
    Timeout(String),
}

/// Now on the monotonic clock (`CLOCK_MONOTONIC`, shared by all processes of
/// the machine), ns: the gate's clock.
pub use fikit_gate::now_ns;

/// Spins (busy-waits) until the monotonic clock reaches `t` ns; returns the
/// time it returned at. Host delays of a few microseconds need a spin: a sleep
/// wakes tens of microseconds late.
pub fn spin_until(t: i64) -> i64 {
    loop {
        let now = now_ns();
        if now >= t {
            return now;
        }
        if t - now > 2_000_000 {
            std::thread::sleep(std::time::Duration::from_nanos(
                (t - now - 1_000_000) as u64,
            ));
        } else {
            std::hint::spin_loop();
        }
    }
}
