//! fikit simulator library: what `fikit-sim` runs.
//!
//! - [`inspect`]: per-job summaries of traces (kernel counts, GPU busy time,
//!   inter-kernel idle gaps and their causes, top kernels).

pub mod inspect;
