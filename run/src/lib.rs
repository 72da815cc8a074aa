//! `fikit-run`: real, unmodified programs together on one GPU under a
//! sharing policy, measured, and set beside fikit-sim's prediction for their
//! profiles.
//!
//! Each job's command runs with the fikit collector injected
//! (`CUDA_INJECTION64_PATH`) in gate mode ([`fikit_gate`]): under
//! `preemptive` and `fikit` its kernel launches wait as the policy says;
//! under every policy the gate stamps the first launch and each blocking
//! synchronization, so every job's region (first kernel launch to last launch
//! or synchronization) and iterations are measured the same way under every
//! policy. `exclusive` runs each job alone; `mps` starts a private MPS daemon
//! for the round and stops it after.
//!
//! - [`scenario`]: the scenario file;
//! - [`exec`]: running one round and measuring it;
//! - [`profiles`]: the jobs' profiles, read once, and the prediction's model;
//! - [`rounds`]: a scenario's rounds, each predicted, and what they write;
//! - [`saved`]: run.json, read back to rebuild a report or resume a pair;
//! - [`report`]: medians, ranges, the co-run check and the prediction;
//! - [`set`]: a validation set of pairs, and its summary of simulated
//!   against real slowdowns in and out of sample;
//! - [`set_run`]: running a set's pairs;
//! - [`ab`]: the gate's own cost, its iterations off and on in one process
//!   (`fikit-lab gate-ab`);
//! - [`cli`]: the command line, one subcommand a task.

pub mod ab;
pub mod cli;
pub mod exec;
pub mod fill;
pub mod profiles;
pub mod report;
pub mod rounds;
pub mod saved;
pub mod scenario;
pub mod set;
pub mod set_run;
