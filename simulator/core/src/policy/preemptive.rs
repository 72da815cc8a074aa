//! Preemptive priority: the highest-priority job with work owns the GPU.

use super::{ByPriority, FromModel, start_all_of};
use crate::sim::engine::{Commands, JobRt, OpId, Policy};
use crate::sim::gpu::{GpuModel, Granularity};
use crate::sim::job::Job;

/// Preemptive priority: the highest-priority job with kernels waiting gets the
/// device; a lower-priority job running then is preempted at the configured
/// granularity. Kernels of different jobs never overlap.
#[derive(Debug)]
pub struct Preemptive {
    granularity: Granularity,
    cost: i64,
    waves: i64,
    blocked_until: i64,
    planned: Vec<(OpId, i64)>,
    handover: i64,
    /// The job whose kernels ran last (the context on the device).
    on_device: Option<usize>,
    /// A hand-over in progress: to which job, done when.
    handing_to: Option<(usize, i64)>,
    by_priority: ByPriority,
}

impl Preemptive {
    /// A preemptive scheduler with the model's granularity and costs.
    pub fn new(model: &GpuModel) -> Self {
        Preemptive {
            granularity: model.preempt_granularity,
            cost: model.preempt_cost_ns,
            waves: model.block_waves,
            blocked_until: 0,
            planned: Vec::new(),
            handover: model.context_handover_ns.unwrap_or(0),
            on_device: None,
            handing_to: None,
            by_priority: ByPriority::default(),
        }
    }
}

/// The job with queued kernels (issued, not done) of highest priority (ties:
/// lowest index): a job whose next kernel is still within its launch latency
/// already has work, so lower-priority work does not slip in before it.
fn top_waiting(by_priority: &mut ByPriority, state: &[JobRt]) -> Option<usize> {
    by_priority.first(state, JobRt::has_queued_kernels)
}

impl Policy for Preemptive {
    fn name(&self) -> &'static str {
        "preemptive"
    }

    fn decide(&mut self, now: i64, jobs: &[Job], state: &[JobRt], cmds: &mut Commands) {
        if now < self.blocked_until {
            cmds.wake(self.blocked_until);
            return;
        }
        // Block-granularity pauses that are due.
        let mut i = 0;
        while i < self.planned.len() {
            let ((j, op), at) = self.planned[i];
            if !state[j].running.contains(&op) {
                self.planned.swap_remove(i);
            } else if at <= now {
                cmds.pause.push((j, op));
                self.planned.swap_remove(i);
            } else {
                cmds.wake(at);
                i += 1;
            }
        }
        let runner = (0..state.len()).find(|&j| {
            state[j]
                .running
                .iter()
                .any(|op| !cmds.pause.contains(&(j, *op)))
        });
        let top = top_waiting(&mut self.by_priority, state);
        match (runner, top) {
            (None, Some(t)) => {
                // With pauses pending, the engine asks again once they are applied.
                if !cmds.pause.is_empty() || state[t].eligible.is_empty() {
                    return;
                }
                if self.handover > 0 && self.on_device.is_some_and(|d| d != t) {
                    // Another context was on the device: t's kernels start
                    // once the hand-over, begun when the first of them could
                    // start, is done.
                    let until = match self.handing_to {
                        Some((to, until)) if to == t => until,
                        _ => {
                            let until = now + self.handover;
                            self.handing_to = Some((t, until));
                            until
                        }
                    };
                    if now < until {
                        cmds.wake(until);
                        return;
                    }
                }
                self.handing_to = None;
                self.on_device = Some(t);
                start_all_of(t, state, cmds);
            }
            (None, None) => {}
            (Some(r), t) => {
                let preempt = t.is_some_and(|t| state[t].priority < state[r].priority);
                if !preempt {
                    start_all_of(r, state, cmds);
                    return;
                }
                match self.granularity {
                    Granularity::Kernel => {} // r's kernels finish; nothing new of r starts
                    Granularity::Immediate => {
                        cmds.pause
                            .extend(state[r].running.iter().map(|&op| (r, op)));
                        self.blocked_until = now.saturating_add(self.cost);
                        cmds.wake(self.blocked_until);
                    }
                    Granularity::Block => {
                        for &op in &state[r].running {
                            if self.planned.iter().any(|(id, _)| *id == (r, op)) {
                                continue;
                            }
                            let o = &state[r].ops[op];
                            let left = (o.remaining - (now - o.since) as f64).max(0.0);
                            let wave = jobs[r].ops[op].duration_ns / self.waves.max(1);
                            let at = now.saturating_add((left.ceil() as i64).min(wave));
                            self.planned.push(((r, op), at));
                            cmds.wake(at);
                        }
                    }
                }
            }
        }
    }
}

impl FromModel for Preemptive {
    fn from_model(model: &GpuModel) -> Self {
        Preemptive::new(model)
    }
}
