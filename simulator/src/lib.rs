//! fikit simulator library: what `fikit-sim` runs.
//!
//! The data path: traces ([`fikit_trace`]) become closed-loop [`job::Job`]
//! programs; the discrete-event [`engine`] replays them together on a modeled
//! GPU ([`gpu::GpuModel`]) under a [`policy`]; [`simulate`] compares the
//! policies (JCT, slowdown, speedup against time slicing, latency percentiles,
//! utilization); [`report`] renders the comparison. [`inspect`] summarizes traces.

pub mod engine;
pub mod export;
pub mod gpu;
pub mod handover;
pub mod html;
pub mod import;
pub mod inspect;
pub mod job;
pub mod live;
pub mod plots;
pub mod policy;
pub mod progress;
pub mod report;
pub mod scenario;
pub mod simulate;
pub mod sweep;
