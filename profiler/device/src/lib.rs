//! The GPU side that fikit-profile's pressure pass, live replay and
//! calibration share: thin wrappers of the CUDA driver API and NVRTC
//! ([`gpu`], loaded at run time: nothing CUDA to build), the synthetic,
//! probe and load kernels (`spin.cu`), the latency-bound victim
//! ([`victim`]) and a private MPS daemon ([`mps`]).
//!
//! It sits below the live side (`fikit-replay`, `fikit-run`) and beside the
//! profiler, so that `fikit-profile` can run the victim without depending on
//! anything downstream of the trace.

pub mod gpu;
pub mod mps;
pub mod victim;

/// What can fail on the GPU side.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// A CUDA driver call failed.
    #[error("CUDA driver: {call} failed: {message}")]
    Driver {
        /// The call.
        call: &'static str,
        /// The driver's error.
        message: String,
    },
    /// The CUDA driver or NVRTC library could not be loaded.
    #[error("cannot load {library}: {message}")]
    Library {
        /// Which library.
        library: &'static str,
        /// Why.
        message: String,
    },
    /// NVRTC could not compile the kernels.
    #[error("NVRTC: {0}")]
    Nvrtc(String),
    /// MPS could not be started.
    #[error(
        "cannot run under MPS: {0} (start it yourself with `nvidia-cuda-mps-control -d`, or leave mps out)"
    )]
    Mps(String),
    /// A folder could not be made.
    #[error("{path}: {source}")]
    Io {
        /// The folder.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}
