//! Exclusive use: each job alone on the GPU, the isolated reference.

use super::{FromModel, start_all_of};
use crate::sim::engine::{Commands, JobRt, Policy};
use crate::sim::gpu::GpuModel;
use crate::sim::job::Job;

/// Every eligible kernel starts at once. Run with one job, it is that job alone
/// on the GPU: the isolated reference every other policy is compared with.
#[derive(Debug, Default)]
pub struct Exclusive;

impl Policy for Exclusive {
    fn name(&self) -> &'static str {
        "exclusive"
    }

    fn decide(&mut self, _now: i64, _jobs: &[Job], state: &[JobRt], cmds: &mut Commands) {
        for j in 0..state.len() {
            start_all_of(j, state, cmds);
        }
    }
}

impl FromModel for Exclusive {
    fn from_model(_model: &GpuModel) -> Self {
        Exclusive
    }
}
