//! NVIDIA MPS: kernels of all jobs run at once and share the SMs.

use super::{FromModel, start_all_of};
use crate::sim::engine::{Commands, JobRt, Policy, SmShare};
use crate::sim::gpu::GpuModel;
use crate::sim::job::Job;

/// MPS: every eligible kernel goes to the GPU at once; there the kernels of
/// all jobs share the SMs block by block ([`crate::sim::slots`]), each
/// slowed by the concurrent-kernel slowdown.
#[derive(Debug)]
pub struct Mps {
    share: SmShare,
}

impl Mps {
    /// MPS on `model`'s GPU (its SM sharing and concurrent-kernel slowdown).
    pub fn new(model: &GpuModel) -> Self {
        Mps {
            share: SmShare {
                corun_slowdown: model.corun_slowdown,
                last_wave_floor: model.last_wave_floor,
            },
        }
    }
}

impl Default for Mps {
    /// MPS on the default model.
    fn default() -> Self {
        Mps::new(&GpuModel::default())
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

    fn sm_sharing(&self) -> Option<SmShare> {
        Some(self.share.clone())
    }
}

impl FromModel for Mps {
    fn from_model(model: &GpuModel) -> Self {
        Mps::new(model)
    }
}
