//! The model: job programs built from traces, the discrete-event engine that
//! replays them on a modeled GPU, and the runs that compare policies.
//!
//! - [`job`]: a trace becomes a closed-loop host program of launches, copies
//!   and synchronizations;
//! - [`scenario`]: which jobs share the GPU, with priorities, offsets and
//!   request arrivals;
//! - [`gpu`]: the GPU model (quantum, switch costs, SMs, calibrated files);
//! - [`engine`]: integer-nanosecond events, FIFO ties, the [`engine::Policy`]
//!   trait the policies implement;
//! - [`host`]: a job's host as it runs untraced, from its untraced runs;
//! - [`slots`]: kernels of different jobs sharing the SMs block by block (MPS);
//! - [`pressure`]: how hard a job's kernels press on a neighbour under MPS;
//! - [`simulate`]: runs a scenario under each policy and builds the report.

pub mod engine;
pub mod gpu;
pub mod host;
pub mod job;
pub mod pressure;
pub mod scenario;
pub mod simulate;
pub mod slots;
