//! `fikit-profile`: runs a command with the fikit collector injected into every
//! CUDA process it starts, then turns each process's spool into a fikit trace
//! (`DIR/<job>-<pid>.parquet`) and prints the per-job summary.
//!
//! The launcher talks to the collector only through environment variables
//! (`CUDA_INJECTION64_PATH`, `FIKIT_SPOOL_DIR`, `FIKIT_JOB`, `FIKIT_PRIORITY`,
//! `FIKIT_API`, `FIKIT_CUPTI_PATH`, ...), named in [`fikit_protocol`]; it
//! does not link the collector.

pub mod cli;
pub mod convert;
pub mod options;
pub mod pressure;
pub mod reaper;
pub mod run;
pub mod signals;
pub mod untraced;
