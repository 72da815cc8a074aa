//! fikit simulator library: what `fikit-sim` runs.
//!
//! The data path, one folder per part:
//! - [`sim`]: traces ([`fikit_trace`]) become closed-loop [`sim::job::Job`]
//!   programs; the discrete-event [`sim::engine`] replays them together on a
//!   modeled GPU ([`sim::gpu::GpuModel`]); [`sim::simulate`] compares the
//!   policies (JCT, slowdown, speedup against time slicing, latency
//!   percentiles, utilization) and [`sim::sweep`] runs every pair of jobs;
//! - [`policy`]: one file per scheduling policy, all behind
//!   [`sim::engine::Policy`], and the registry that names them;
//! - [`report`]: tables, plots, the HTML report, trace summaries (`inspect`);
//! - [`interop`]: other profilers' traces in (Kineto, Nsight Systems) and
//!   Perfetto out;
//! - [`live`]: the same scenarios run on a real GPU through [`fikit_replay`]
//!   (launch plans built from the job programs, measurements turned into the
//!   simulation's report) and compared with the simulation.
//!
//! The `fikit-sim` binary (`src/main.rs`, `src/cli/`) parses the command line
//! into the plain option structs of these modules.

pub mod interop;
pub mod live;
pub mod policy;
pub mod report;
pub mod sim;
