//! fikit simulator: what `fikit-sim` runs, above the model.
//!
//! The data path, one folder per part:
//! - [`sim`]: the model of [`fikit_sim_core`] (job programs, the
//!   discrete-event engine, the GPU model, the policies' comparison),
//!   re-exported, with [`sim::sweep`] (every pair of jobs) and
//!   [`sim::fleet`] (sweeps as data, in shards);
//! - [`policy`]: one file per scheduling policy ([`fikit_sim_core::policy`]);
//! - [`report`]: tables, plots, the HTML report, trace summaries (`inspect`);
//! - [`interop`]: other profilers' traces in (Kineto, Nsight Systems) and
//!   Perfetto out;
//! - [`error`]: the one shape of a bad input file ([`fikit_sim_core::error`]);
//! - [`cli`]: the `fikit-sim` command line, which parses into the plain
//!   option structs of these modules.
//!
//! Nothing here touches a GPU: live replay is `fikit-replay`'s, and the
//! commands that run it are `fikit-run`'s and the lab's.

pub mod cli;
pub use fikit_sim_core::error;
pub mod interop;
pub use fikit_sim_core::policy;
pub mod report;
pub mod sim;
