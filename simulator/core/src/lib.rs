//! fikit's model, the simulator's core: no GPU access, no plotting, no
//! SQLite, so that every command that predicts (`fikit-sim`, `fikit-run`)
//! links only this.
//!
//! - [`sim`]: traces ([`fikit_trace`]) become closed-loop [`sim::job::Job`]
//!   programs; the discrete-event [`sim::engine`] replays them together on a
//!   modeled GPU ([`sim::gpu::GpuModel`]); [`sim::simulate`] compares the
//!   policies (JCT, slowdown, speedup against time slicing, latency
//!   percentiles, utilization);
//! - [`policy`]: one file per scheduling policy, all behind
//!   [`sim::engine::Policy`], and the registry that names them;
//! - [`error`]: the one shape of a bad input file ([`error::FileError`]).

pub mod error;
pub mod policy;
pub mod sim;
