//! NVIDIA MPS: kernels of all jobs run at once and share the SMs.

use super::{FromModel, start_all_of};
use crate::sim::engine::{Commands, JobRt, Policy};
use crate::sim::gpu::GpuModel;
use crate::sim::job::Job;

/// MPS: every eligible kernel starts at once; the engine slows all running
/// kernels down by the same factor while the jobs' SM demand exceeds the device.
#[derive(Debug, Default)]
pub struct Mps {
    corun_slowdown: f64,
}

impl Mps {
    /// MPS on `model`'s GPU (its concurrent-kernel slowdown).
    pub fn new(model: &GpuModel) -> Self {
        Mps {
            corun_slowdown: model.corun_slowdown,
        }
    }
}

impl Policy for Mps {
    fn name(&self) -> &'static str {
        "mps"
    }

    fn decide(&mut self, _now: i64, _jobs: &[Job], state: &[JobRt], cmds: &mut Commands) {
        for j in 0..state.len() {
            start_all_of(j, state, cmds);
        }
    }

    fn shares_sms(&self) -> bool {
        true
    }

    fn corun_slowdown(&self) -> f64 {
        self.corun_slowdown
    }
}

impl FromModel for Mps {
    fn from_model(model: &GpuModel) -> Self {
        Mps::new(model)
    }
}
