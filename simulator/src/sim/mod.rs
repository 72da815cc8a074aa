//! The model ([`fikit_sim_core::sim`], re-exported here) and the runs built
//! on it that the command line needs:
//!
//! - [`sweep`]: every ordered pair of jobs under every policy, in parallel;
//! - [`fleet`]: sweeps as data (a spec), in shards for many machines, and
//!   their merge.

pub use fikit_sim_core::sim::*;

pub mod fleet;
pub mod sweep;
