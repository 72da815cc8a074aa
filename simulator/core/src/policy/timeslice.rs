//! Default time slicing between contexts (the baseline every report compares with).

use super::{FromModel, start_all_of};
use crate::sim::engine::{Commands, JobRt, Policy, Rotation};
use crate::sim::gpu::GpuModel;
use crate::sim::job::Job;

/// Time slicing between contexts: the owner's kernels run for a quantum; when
/// it ends and another job has kernels waiting, the device switches (nothing
/// runs for the switch cost), preempting the owner's running kernels or letting
/// them finish first. A job with no kernel work yields at once. Turns go round
/// robin in job order.
#[derive(Debug)]
pub struct TimeSlice {
    quantum: i64,
    switch_cost: i64,
    preempts: bool,
    handover_cost: Option<i64>,
    owner: Option<usize>,
    slice_end: i64,
    switching: Option<(usize, i64)>,
}

impl TimeSlice {
    /// A time-slice scheduler with the model's quantum, switch cost and preemption.
    pub fn new(model: &GpuModel) -> Self {
        TimeSlice {
            quantum: model.timeslice_quantum_ns,
            switch_cost: model.context_switch_ns,
            preempts: model.timeslice_preempts,
            handover_cost: model.context_handover_ns,
            owner: None,
            slice_end: 0,
            switching: None,
        }
    }

    fn next_after(from: usize, state: &[JobRt]) -> Option<usize> {
        let n = state.len();
        (1..n)
            .map(|d| (from + d) % n)
            .find(|&j| state[j].has_queued_kernels())
    }

    /// Begins a switch to `to`; true when it completed at once (no cost).
    fn switch(&mut self, to: usize, now: i64, cmds: &mut Commands) -> bool {
        self.switch_paying(to, now, self.switch_cost, cmds)
    }

    /// [`TimeSlice::switch`] at a given cost.
    fn switch_paying(&mut self, to: usize, now: i64, cost: i64, cmds: &mut Commands) -> bool {
        if cost == 0 {
            self.owner = Some(to);
            self.slice_end = now.saturating_add(self.quantum);
            true
        } else {
            self.owner = None;
            self.switching = Some((to, now.saturating_add(cost)));
            cmds.wake(now.saturating_add(cost));
            false
        }
    }
}

impl Policy for TimeSlice {
    fn name(&self) -> &'static str {
        "timeslice"
    }

    fn decide(&mut self, now: i64, _jobs: &[Job], state: &[JobRt], cmds: &mut Commands) {
        if let Some((to, until)) = self.switching {
            if now < until {
                cmds.wake(until);
                return;
            }
            self.switching = None;
            self.owner = Some(to);
            self.slice_end = now.saturating_add(self.quantum);
        }
        let owner = match self.owner {
            None => match (0..state.len()).find(|&j| state[j].has_queued_kernels()) {
                // The device is fresh: the first context pays no switch.
                Some(j) => {
                    self.owner = Some(j);
                    self.slice_end = now.saturating_add(self.quantum);
                    j
                }
                None => return,
            },
            Some(o) => o,
        };
        let waiting = Self::next_after(owner, state);
        if !state[owner].has_queued_kernels() {
            // Yield to a job with work, if any; otherwise stay.
            // Nothing of it runs: a kernel boundary.
            let cost = self.handover_cost.unwrap_or(self.switch_cost);
            if let Some(to) = waiting
                && !self.switch_paying(to, now, cost, cmds)
            {
                return;
            }
        } else if now >= self.slice_end {
            match waiting {
                None => self.slice_end = now.saturating_add(self.quantum),
                Some(to) => {
                    if self.preempts {
                        cmds.pause
                            .extend(state[owner].running.iter().map(|&op| (owner, op)));
                    } else if !state[owner].running.is_empty() {
                        return; // drain: the owner's running kernels finish, nothing new starts
                    }
                    if !self.switch(to, now, cmds) {
                        return;
                    }
                }
            }
        }
        let owner = self.owner.expect("set above");
        start_all_of(owner, state, cmds);
        if Self::next_after(owner, state).is_some() {
            cmds.wake(self.slice_end);
        }
    }

    /// With preemption by quantum, the jobs with kernel work take equal
    /// turns, round robin, for as long as none of their kernels finishes and
    /// nothing else happens: at the start of a slice, that rotation.
    fn rotation(&self, now: i64, state: &[JobRt]) -> Option<Rotation> {
        if !self.preempts || self.switching.is_some() {
            return None;
        }
        let owner = self.owner?;
        if self.slice_end != now.saturating_add(self.quantum) {
            return None;
        }
        let n = state.len();
        let jobs: Vec<usize> = (0..n)
            .map(|d| (owner + d) % n)
            .filter(|&j| state[j].has_kernel_work())
            .collect();
        (jobs.len() >= 2 && jobs[0] == owner).then_some(Rotation {
            jobs,
            slice_ns: self.quantum,
            switch_ns: self.switch_cost,
        })
    }

    fn skip(&mut self, by: i64) {
        self.slice_end = self.slice_end.saturating_add(by);
    }
}

impl FromModel for TimeSlice {
    fn from_model(model: &GpuModel) -> Self {
        TimeSlice::new(model)
    }
}
