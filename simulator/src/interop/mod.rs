//! Interop with other tools: [`import`] reads PyTorch profiler (Kineto JSON)
//! and Nsight Systems (SQLite) captures into fikit traces; [`export`] writes
//! traces and simulated runs as Chrome trace-event JSON for Perfetto.

pub mod export;
pub mod import;
