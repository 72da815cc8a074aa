//! Scheduling policies: one type each, all behind [`Policy`].
//!
//! Kernels of one job keep the concurrency they had when recorded (they run at
//! their recorded durations). Between jobs:
//! - [`Exclusive`]: no other job exists (each job is run alone);
//! - [`TimeSlice`]: jobs (contexts) take turns in time slices; kernels of
//!   different jobs never overlap;
//! - [`Mps`]: kernels of all jobs run at once and share the SMs;
//! - [`Preemptive`]: the highest-priority job with work runs; it preempts lower
//!   ones at the configured granularity;
//! - [`Fikit`]: the highest-priority job's kernels go at once; its idle gaps
//!   are filled with lower-priority kernels whose predicted duration fits the
//!   predicted rest of the gap.

use serde::{Deserialize, Serialize};

use crate::engine::{Commands, JobRt, OpId, Policy, Rotation};
use crate::gpu::{GpuModel, Granularity};
use crate::job::Job;

/// The policies by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyKind {
    /// Every job alone.
    Exclusive,
    /// Default time slicing of separate processes (the baseline).
    Timeslice,
    /// NVIDIA MPS.
    Mps,
    /// Preemptive priority.
    Preemptive,
    /// FIKIT gap filling.
    Fikit,
}

impl PolicyKind {
    /// All policies, in report order.
    pub const ALL: [PolicyKind; 5] = [
        PolicyKind::Exclusive,
        PolicyKind::Timeslice,
        PolicyKind::Mps,
        PolicyKind::Preemptive,
        PolicyKind::Fikit,
    ];

    /// The name on the command line and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            PolicyKind::Exclusive => "exclusive",
            PolicyKind::Timeslice => "timeslice",
            PolicyKind::Mps => "mps",
            PolicyKind::Preemptive => "preemptive",
            PolicyKind::Fikit => "fikit",
        }
    }

    /// A fresh policy object for one run.
    pub fn build(self, model: &GpuModel) -> Box<dyn Policy> {
        match self {
            PolicyKind::Exclusive => Box::new(Exclusive),
            PolicyKind::Timeslice => Box::new(TimeSlice::new(model)),
            PolicyKind::Mps => Box::new(Mps::new(model)),
            PolicyKind::Preemptive => Box::new(Preemptive::new(model)),
            PolicyKind::Fikit => Box::new(Fikit::default()),
        }
    }
}

fn start_all_of(j: usize, state: &[JobRt], cmds: &mut Commands) {
    cmds.start
        .extend(state[j].eligible.iter().map(|&op| (j, op)));
}

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
    boundary_cost: Option<i64>,
    handover_cost: Option<i64>,
    /// A waiting job the owner drains its running kernels for.
    drain_for: Option<usize>,
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
            boundary_cost: model.timeslice_boundary_switch_ns,
            handover_cost: model.context_handover_ns,
            drain_for: None,
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
        self.drain_for = None;
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
            let cost = self
                .boundary_cost
                .or(self.handover_cost)
                .unwrap_or(self.switch_cost);
            if let Some(to) = waiting
                && !self.switch_paying(to, now, cost, cmds)
            {
                return;
            }
        } else if let (Some(cost), Some(to), true) =
            (self.boundary_cost, waiting, now < self.slice_end)
        {
            // Another context waits: the owner starts nothing new, and the
            // device changes hands at its next kernel boundary. (A new owner
            // first starts what it has: it drains only for a later waiter.)
            if !state[owner].running.is_empty() {
                self.drain_for = Some(to);
                cmds.wake(self.slice_end);
                return;
            }
            if self.drain_for.take().is_some() && !self.switch_paying(to, now, cost, cmds) {
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

    /// With preemption by quantum and no hand-over at kernel boundaries,
    /// the jobs with kernel work take equal turns, round robin, for as long
    /// as none of their kernels finishes and nothing else happens: at the
    /// start of a slice, that rotation.
    fn rotation(&self, now: i64, state: &[JobRt]) -> Option<Rotation> {
        if !self.preempts || self.boundary_cost.is_some() || self.switching.is_some() {
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
        }
    }
}

/// The job with queued kernels (issued, not done) of highest priority (ties:
/// lowest index): a job whose next kernel is still within its launch latency
/// already has work, so lower-priority work does not slip in before it.
fn top_waiting(state: &[JobRt]) -> Option<usize> {
    (0..state.len())
        .filter(|&j| state[j].has_queued_kernels())
        .min_by_key(|&j| (state[j].priority, j))
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
        let top = top_waiting(state);
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
                            let left = (o.remaining - (now - o.since) as f64 * o.rate).max(0.0);
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

/// FIKIT ("Filling Inter-Kernel Idle Time"). The top job (highest priority,
/// then lowest index, among the unfinished) owns the device: its kernels start
/// as soon as they are eligible and nothing else runs. While it sits in an idle
/// gap, the scheduler predicts when the gap ends (the end of its last kernel
/// plus the gap profiled after that kernel's position) and starts the waiting
/// kernel of another job, best priority first, whose predicted duration (its
/// `kernel_key`'s profiled mean) fits the predicted rest of the gap; one at a
/// time. When nothing fits, the GPU stays idle. A fill that runs past the gap
/// delays the top job's next kernel; that delay is counted.
#[derive(Debug, Default)]
pub struct Fikit {
    delay_ns: i64,
    delayed: usize,
    /// The current top job and since when it is the top: a kernel that became
    /// eligible before its job was the top waited as a filler, not for a fill.
    top: Option<(usize, i64)>,
}

impl Policy for Fikit {
    fn name(&self) -> &'static str {
        "fikit"
    }

    fn decide(&mut self, now: i64, jobs: &[Job], state: &[JobRt], cmds: &mut Commands) {
        let top = (0..state.len())
            .filter(|&j| state[j].arrival_ns <= now && !state[j].finished())
            .min_by_key(|&j| (state[j].priority, j));
        let Some(h) = top else {
            return;
        };
        if self.top.is_none_or(|(t, _)| t != h) {
            self.top = Some((h, now));
        }
        let top_since = self.top.map_or(now, |(_, since)| since);
        let filler_running = (0..state.len()).any(|j| j != h && !state[j].running.is_empty());
        if !state[h].eligible.is_empty() {
            if !filler_running {
                for &op in &state[h].eligible {
                    let waited = now - state[h].ops[op].eligible_at.max(top_since);
                    if waited > 0 {
                        self.delay_ns = self.delay_ns.saturating_add(waited);
                        self.delayed += 1;
                    }
                    cmds.start.push((h, op));
                }
            }
            return;
        }
        if !state[h].running.is_empty() || filler_running {
            return;
        }
        // The top job is in an idle gap: predict its end.
        let job = &jobs[h];
        let gap_end = match state[h].last_kernel_done {
            Some((pos, t)) => {
                t.saturating_add(job.gap_after_kernel_ns.get(pos).copied().unwrap_or(0))
            }
            None => state[h].arrival_ns.saturating_add(
                job.ops
                    .iter()
                    .find(|o| o.is_kernel())
                    .map_or(0, |o| o.recorded_start_ns),
            ),
        };
        let left = gap_end.saturating_sub(now);
        // Best priority fit: highest priority first, then earliest eligible, job, op.
        let mut best: Option<((u8, i64, usize, usize), OpId)> = None;
        for (j, st) in state.iter().enumerate() {
            if j == h {
                continue;
            }
            for &op in &st.eligible {
                let o = &jobs[j].ops[op];
                let key = o
                    .kernel_key()
                    .expect("only kernels are eligible for the policy");
                let predicted = jobs[j]
                    .mean_duration_ns
                    .get(&key)
                    .copied()
                    .unwrap_or(o.duration_ns);
                if predicted <= left {
                    let rank = (st.priority, st.ops[op].eligible_at, j, op);
                    if best.is_none_or(|(r, _)| rank < r) {
                        best = Some((rank, (j, op)));
                    }
                }
            }
        }
        if let Some((_, id)) = best {
            cmds.start.push(id);
        }
    }

    fn misprediction(&self) -> Option<(i64, usize)> {
        Some((self.delay_ns, self.delayed))
    }
}
