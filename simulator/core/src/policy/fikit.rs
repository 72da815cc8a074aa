//! FIKIT: the top job's kernels go at once; its idle gaps are filled with
//! other jobs' kernels whose predicted duration fits.

use super::{ByPriority, FromModel};
use crate::sim::engine::{Commands, JobRt, LaunchRule, Policy, Status};
use crate::sim::gpu::{FikitGate, GpuModel};
use crate::sim::job::Job;

/// FIKIT ("Filling Inter-Kernel Idle Time"). The top job (highest priority,
/// then lowest index, among the unfinished, leaving out a serving job
/// between requests) owns the device: its kernels start
/// as soon as they are eligible and nothing else runs. While it sits in an idle
/// gap, the scheduler predicts when the gap ends (the end of its last kernel
/// plus the gap profiled after that kernel's position) and starts the waiting
/// kernel of another job, best priority first, whose predicted duration (its
/// `kernel_key`'s profiled mean) fits the predicted rest of the gap; one at a
/// time. When nothing fits, the GPU stays idle. A fill that runs past the gap
/// delays the top job's next kernel; that delay is counted.
///
/// A serving job that comes back from between requests finds what is on the
/// GPU ahead of its first kernel: every job's running kernels and, as the
/// live gate bounds it ([`fikit_rules::may_queue`]), the queue of the job
/// that was the top meanwhile, its issued kernels in issue order up to the
/// returning job's hold ([`Job::hold_ns`]) of predicted time.
///
/// With the live gate's costs ([`GpuModel::fikit_gate`]), FIKIT runs as the
/// gate does: a fill is decided once the gate has seen the last kernel end
/// (`release_ns` after it) and the top job has issued nothing meanwhile,
/// into the gap predicted from then; the fill's kernel starts `launch_ns`
/// later; and a kernel of another job than the one whose kernels last
/// started waits `switch_ns` more (the device changing context). A
/// filler's launch call returns once its kernel starts, so its host waits
/// through the launch and the switch too.
#[derive(Debug, Default)]
pub struct Fikit {
    delay_ns: i64,
    delayed: usize,
    /// The current top job and since when it is the top: a kernel that became
    /// eligible before its job was the top waited as a filler, not for a fill.
    top: Option<(usize, i64)>,
    /// Each job's predicted duration per op, ns ([`Job::predicted_ns`]), looked up
    /// the first time the op waits as a filler ([`UNKNOWN`] until then)
    /// rather than at every decision.
    predicted: Vec<Vec<i64>>,
    by_priority: ByPriority,
    /// The kernels waiting to fill (scratch of a decision).
    waiting: Vec<fikit_rules::Waiting>,
    /// Each job's hold ([`Job::hold_ns`]), computed once a run.
    holds: Vec<i64>,
    /// Jobs seen between requests since they were last the top: one that is
    /// the top again came back.
    away: Vec<bool>,
    /// The others' kernels queued on the GPU when the top job came back,
    /// not done yet: they run before the top job's.
    held: Vec<(usize, usize)>,
    /// Scratch: a job's issued kernels not done, in issue order.
    queue: Vec<(i64, usize)>,
    /// Per job, the kernels started into the top job's gap ([`Policy::fills`]).
    fills: Vec<u64>,
    /// The live gate's costs ([`GpuModel::fikit_gate`]); `None`: none.
    gate: Option<FikitGate>,
    /// The job whose kernels last started: the device's context.
    owner: Option<usize>,
    /// Kernels chosen, starting once the gate's costs have passed: (job,
    /// op, when).
    pending: Vec<(usize, usize, i64)>,
}

/// [`Fikit::predicted`] of an op not looked up yet.
const UNKNOWN: i64 = i64::MIN;

impl Policy for Fikit {
    fn name(&self) -> &'static str {
        "fikit"
    }

    fn decide(&mut self, now: i64, jobs: &[Job], state: &[JobRt], cmds: &mut Commands) {
        // A policy serves one run: room for its jobs' predictions, once.
        if self.predicted.len() != jobs.len() {
            self.predicted = jobs.iter().map(|j| vec![UNKNOWN; j.ops.len()]).collect();
            self.holds = jobs.iter().map(Job::hold_ns).collect();
            self.away = vec![false; jobs.len()];
            self.fills = vec![0; jobs.len()];
        }
        // A serving job between requests has nothing to protect: the next
        // job is the top until a request arrives (the paper's FIKIT
        // schedules a high-priority task's kernels while it runs).
        let top = self.by_priority.first(state, |st| {
            st.arrival_ns <= now && !st.finished() && !st.between_requests()
        });
        self.gate_launches(top, state, cmds);
        let Some(h) = top else {
            return;
        };
        for (j, st) in state.iter().enumerate() {
            if st.between_requests() {
                self.away[j] = true;
            }
        }
        if self.top.is_none_or(|(t, _)| t != h) {
            let before = self.top.map(|(t, _)| t);
            self.top = Some((h, now));
            if std::mem::take(&mut self.away[h]) && self.holds[h] > 0 {
                self.hold_queues(h, before, jobs, state);
            }
        }
        // The queue held on the GPU when the top job came back goes first;
        // the top job's wait behind it is the hold's, not a misprediction.
        let had = !self.held.is_empty();
        self.held
            .retain(|&(j, op)| state[j].ops[op].status != Status::Done);
        if had && self.held.is_empty() {
            self.top = Some((h, now));
        }
        let top_since = self.top.map_or(now, |(_, since)| since);
        if !self.pending.is_empty() {
            self.start_pending(now, h, state, cmds);
            return;
        }
        if !self.held.is_empty() {
            let held = std::mem::take(&mut self.held);
            for &(j, op) in &held {
                if state[j].ops[op].status == Status::Eligible {
                    self.go(now, j, op, false, cmds);
                }
            }
            self.held = held;
            return;
        }
        let filler_running = (0..state.len()).any(|j| j != h && !state[j].running.is_empty());
        if !state[h].eligible.is_empty() {
            if !filler_running {
                for &op in &state[h].eligible {
                    let waited = now - state[h].ops[op].eligible_at.max(top_since);
                    if waited > 0 {
                        self.delay_ns = self.delay_ns.saturating_add(waited);
                        self.delayed += 1;
                    }
                    self.go(now, h, op, false, cmds);
                }
            }
            return;
        }
        if !state[h].running.is_empty() || filler_running {
            return;
        }
        // The top job is in an idle gap. The live gate fills none while the
        // top job has a kernel launched and not done (on its way to the GPU
        // or queued behind a copy): its becoming eligible asks again.
        if self.gate.is_some() && state[h].has_queued_kernels() {
            return;
        }
        // The gate sees the last kernel end `release_ns` late, and the top
        // job may have issued by then.
        let release = self.gate.map_or(0, |g| g.release_ns);
        if release > 0
            && let Some(seen) = state
                .iter()
                .filter_map(|s| s.last_kernel_done.map(|(_, t)| t.saturating_add(release)))
                .max()
            && now < seen
        {
            cmds.wake(seen);
            return;
        }
        // Predict the gap's end, from when the gate saw it open.
        let job = &jobs[h];
        let gap_end = match state[h].last_kernel_done {
            Some((pos, t)) => t
                .saturating_add(release)
                .saturating_add(job.gap_after_kernel_ns.get(pos).copied().unwrap_or(0)),
            None => state[h].arrival_ns.saturating_add(
                job.ops
                    .iter()
                    .find(|o| o.is_kernel())
                    .map_or(0, |o| o.recorded_start_ns),
            ),
        };
        let left = gap_end.saturating_sub(now);
        // The paper's rule (fikit-rules, as the live gate): the best
        // priority whose predicted duration fits, then the earliest
        // eligible, job, op.
        let mut waiting = std::mem::take(&mut self.waiting);
        waiting.clear();
        for (j, st) in state.iter().enumerate() {
            if j == h {
                continue;
            }
            for &op in &st.eligible {
                let predicted = &mut self.predicted[j][op];
                if *predicted == UNKNOWN {
                    *predicted = jobs[j].predicted_ns(op);
                }
                waiting.push(fikit_rules::Waiting {
                    priority: st.priority,
                    since_ns: st.ops[op].eligible_at,
                    job: j,
                    op,
                    predicted_ns: *predicted,
                });
            }
        }
        if let Some(w) = fikit_rules::fill(left, waiting.iter().copied()) {
            self.go(now, w.job, w.op, true, cmds);
            self.fills[w.job] += 1;
        }
        self.waiting = waiting;
    }

    fn misprediction(&self) -> Option<(i64, usize)> {
        Some((self.delay_ns, self.delayed))
    }

    fn gates_launches(&self) -> bool {
        true
    }

    fn fills(&self) -> Option<&[u64]> {
        Some(&self.fills)
    }
}

impl Fikit {
    /// Starts kernel `op` of job `j` now, or, with the gate's costs, once
    /// its launch (a fill's) and the device's switch to `j` (when another
    /// job's kernels last started) have passed.
    fn go(&mut self, now: i64, j: usize, op: usize, fill: bool, cmds: &mut Commands) {
        let at = self.gate.map_or(now, |g| {
            let launch = if fill { g.launch_ns } else { 0 };
            let switch = if self.owner.is_some_and(|o| o != j) {
                g.switch_ns
            } else {
                0
            };
            now.saturating_add(launch).saturating_add(switch)
        });
        if at <= now {
            cmds.start.push((j, op));
            self.owner = Some(j);
        } else {
            self.pending.push((j, op, at));
            cmds.wake(at);
        }
    }

    /// The kernels chosen earlier whose gate costs have passed start; the
    /// rest wait. Nothing else starts meanwhile: the device is passing to
    /// them. Once the top job `h`'s own start, its other kernels eligible
    /// by then go with it.
    fn start_pending(&mut self, now: i64, h: usize, state: &[JobRt], cmds: &mut Commands) {
        let mut top_started = false;
        self.pending.retain(|&(j, op, at)| {
            if at > now {
                return true;
            }
            cmds.start.push((j, op));
            self.owner = Some(j);
            top_started |= j == h;
            false
        });
        if let Some(at) = self.pending.iter().map(|p| p.2).min() {
            cmds.wake(at);
        } else if top_started {
            for &op in &state[h].eligible {
                if !cmds.start.contains(&(h, op)) {
                    cmds.start.push((h, op));
                }
            }
        }
    }

    /// How each job's launch calls return, as the live gate holds them
    /// ([`crate::sim::engine::LaunchRule`]): the top job's at once, but
    /// within the hold of a job above it that is away (between requests);
    /// a job below the top's once its kernel starts (it waits at its gate
    /// for a gap its kernel fits); a job above the top (away) at once;
    /// without a top (every job away or done), all at once.
    fn gate_launches(&self, top: Option<usize>, state: &[JobRt], cmds: &mut Commands) {
        let Some(h) = top else {
            cmds.launch.resize(state.len(), LaunchRule::Free);
            return;
        };
        let rank = |j: usize| (state[j].priority, j);
        cmds.launch.extend((0..state.len()).map(|j| {
            if j == h {
                (0..state.len())
                    .filter(|&a| rank(a) < rank(h) && state[a].between_requests())
                    .map(|a| self.holds.get(a).copied().unwrap_or(0))
                    .filter(|&hold| hold > 0)
                    .min()
                    .map_or(LaunchRule::Free, LaunchRule::Hold)
            } else if rank(j) > rank(h) {
                LaunchRule::UntilStarted
            } else {
                LaunchRule::Free
            }
        }));
    }

    /// The top job `h` came back from between requests; `before` was the
    /// top while it was away. What is on the GPU is held: it runs before
    /// `h`'s kernels. That is every job's running kernels, and of `before`,
    /// which launched freely as the top, its issued kernels in issue order
    /// as far as the gate's bound let it queue them ([`fikit_rules::may_queue`]
    /// with `h`'s hold). Other jobs' kernels waited at their gates: they
    /// are not on the GPU.
    fn hold_queues(&mut self, h: usize, before: Option<usize>, jobs: &[Job], state: &[JobRt]) {
        self.held.clear();
        for (j, st) in state.iter().enumerate() {
            if j == h {
                continue;
            }
            let mut queue = std::mem::take(&mut self.queue);
            queue.clear();
            queue.extend(
                st.issued_not_done()
                    .filter(|&op| jobs[j].ops[op].is_kernel())
                    .filter(|&op| Some(j) == before || st.ops[op].status == Status::Running)
                    .map(|op| {
                        let o = &st.ops[op];
                        // Running first, then by issue.
                        let at = if o.status == Status::Running {
                            i64::MIN
                        } else {
                            o.issued_at
                        };
                        (at, op)
                    }),
            );
            queue.sort_unstable();
            let (mut n, mut ns) = (0u64, 0i64);
            for &(_, op) in &queue {
                let predicted = &mut self.predicted[j][op];
                if *predicted == UNKNOWN {
                    *predicted = jobs[j].predicted_ns(op);
                }
                let running = st.ops[op].status == Status::Running;
                if !running && !fikit_rules::may_queue(n, ns, *predicted, self.holds[h]) {
                    break;
                }
                n += 1;
                ns = ns.saturating_add(*predicted);
                self.held.push((j, op));
            }
            self.queue = queue;
        }
    }
}

impl FromModel for Fikit {
    fn from_model(model: &GpuModel) -> Self {
        Fikit {
            gate: model.fikit_gate,
            ..Fikit::default()
        }
    }
}
