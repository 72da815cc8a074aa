//! An operation's life: the host issues it, it becomes eligible at the
//! head of its stream, starts, may pause, and completes; a job finishes
//! when its host and every operation have.

use std::collections::VecDeque;

use crate::sim::job::{HostStep, NO_OP};

use super::{Engine, Event, Host, LaunchRule, OpRt, Segment, Status};

impl Engine<'_> {
    /// Runs host steps of job `j` that are due now, until one lies in the future or blocks.
    pub(super) fn host_step(&mut self, j: usize) {
        let job = &self.jobs[j];
        loop {
            let st = &mut self.state[j];
            let Some(&step) = job.steps.get(st.step) else {
                st.host = Host::Finished;
                self.maybe_finish(j);
                return;
            };
            let delay = match step {
                HostStep::Issue { delay_ns, .. } | HostStep::Wait { delay_ns, .. } => delay_ns,
                HostStep::Arrive { at_ns } => {
                    // Requests count from when the host reached the first
                    // (re-entered at the same host time while it waits).
                    let from = *st.requests_from.get_or_insert(st.host_t);
                    from.saturating_add(at_ns).saturating_sub(st.host_t).max(0)
                }
            };
            let due = st.host_t.saturating_add(delay);
            if due > self.now {
                st.host = Host::Busy;
                st.awaiting_request = matches!(step, HostStep::Arrive { .. });
                self.schedule(due, Event::Host(j));
                return;
            }
            st.awaiting_request = false;
            st.step += 1;
            st.host_t = self.now;
            match step {
                HostStep::Arrive { at_ns } => {
                    let st = &mut self.state[j];
                    let from = st.requests_from.unwrap_or(st.arrival_ns);
                    st.iteration_start = from.saturating_add(at_ns);
                }
                HostStep::Issue { op, .. } => {
                    let op = op as usize;
                    if self.jobs[j].ops[op].is_kernel() && self.gates {
                        if let Some(held) = self.advance_launch(j, op, false) {
                            self.state[j].host = held;
                            return;
                        }
                    } else {
                        self.issue(j, op);
                    }
                }
                HostStep::Wait {
                    op,
                    wake_ns,
                    ends_iteration,
                    ..
                } => {
                    let st = &mut self.state[j];
                    match (op != NO_OP).then_some(op as usize) {
                        Some(op) if st.ops[op].status != Status::Done => {
                            st.host = Host::Waiting {
                                op,
                                wake_ns,
                                ends_iteration,
                            };
                            return;
                        }
                        _ => {
                            let resume = self.now.saturating_add(wake_ns);
                            if ends_iteration {
                                st.end_iteration(resume);
                            }
                            st.host_t = resume;
                            if resume > self.now {
                                // Continue after the wake-up latency.
                                st.host = Host::Busy;
                                self.schedule(resume, Event::Host(j));
                                return;
                            }
                        }
                    }
                }
            }
        }
    }

    /// The policy's rule for job `j`'s launches; `None` before its first
    /// word on the job (a gating policy's launches wait for it).
    fn launch_rule(&self, j: usize) -> Option<LaunchRule> {
        match self.launch.get(j) {
            Some(&r) => Some(r),
            None if self.gates => None,
            None => Some(LaunchRule::Free),
        }
    }

    /// Whether job `j`'s kernel `op` may go onto the GPU by its hold: its
    /// kernels queued (issued, not done; `op` left out) within the hold
    /// ([`fikit_rules::may_queue`]), or no hold. `false` before the
    /// policy's first word on the job.
    fn may_queue(&self, j: usize, op: usize) -> bool {
        let Some(rule) = self.launch_rule(j) else {
            return false;
        };
        let LaunchRule::Hold(hold) = rule else {
            return true;
        };
        let st = &self.state[j];
        let p = self.jobs[j].predicted_ns(op);
        let on = st.ops[op].issued_at != OpRt::NOT_ISSUED && st.ops[op].status != Status::Done;
        let (n, ns) = if on {
            (
                st.queued_kernels as u64 - 1,
                st.queued_predicted_ns - i128::from(p),
            )
        } else {
            (st.queued_kernels as u64, st.queued_predicted_ns)
        };
        // Past i64, the queue is past any hold either way.
        let ns = i64::try_from(ns).unwrap_or(i64::MAX);
        fikit_rules::may_queue(n, ns, p, hold)
    }

    /// Whether job `j`'s launch of kernel `op` (issued) returns to its host
    /// now, by the policy's [`LaunchRule`] for the job.
    fn launch_returns(&self, j: usize, op: usize) -> bool {
        match self.launch_rule(j) {
            None => false,
            Some(LaunchRule::Free) => true,
            Some(LaunchRule::UntilStarted) => {
                matches!(self.state[j].ops[op].status, Status::Running | Status::Done)
            }
            Some(LaunchRule::Hold(_)) => self.may_queue(j, op),
        }
    }

    /// Carries job `j`'s launch call of kernel `op` as far as its gate lets
    /// it now (`issued`: the kernel is on its stream already): onto its
    /// stream once the hold allows (off the GPU while the gate holds a
    /// queue; on it while a filler waits for a gap, the policy starts it
    /// there), then back to the host once the rule allows. The host state
    /// the call holds the job in; `None` once it returned.
    fn advance_launch(&mut self, j: usize, op: usize, issued: bool) -> Option<Host> {
        if !issued {
            if !self.may_queue(j, op) {
                return Some(Host::Launching { op, issued: false });
            }
            self.issue(j, op);
        }
        (!self.launch_returns(j, op)).then_some(Host::Launching { op, issued: true })
    }

    /// Lets go every host whose launch call its gate now lets return: its
    /// next step runs in this instant. True when a held kernel went onto
    /// its stream (the policy may start it now).
    pub(super) fn release_launches(&mut self) -> bool {
        // Only a gating policy holds a host in a launch call.
        if !self.gates {
            return false;
        }
        let mut issued_any = false;
        for j in 0..self.state.len() {
            let Host::Launching { op, issued } = self.state[j].host else {
                continue;
            };
            let held = self.advance_launch(j, op, issued);
            issued_any |= !issued && !matches!(held, Some(Host::Launching { issued: false, .. }));
            let st = &mut self.state[j];
            match held {
                Some(h) => st.host = h,
                None => {
                    // The call was made at `host_t` (its host step's time).
                    if self.now > st.host_t {
                        st.held.0 += 1;
                        st.held.1 += self.now - st.host_t;
                    }
                    st.host = Host::Busy;
                    st.host_t = self.now;
                    self.schedule(self.now, Event::Host(j));
                }
            }
        }
        issued_any
    }

    pub(super) fn issue(&mut self, j: usize, op: usize) {
        let stream = self.jobs[j].ops[op].stream as usize;
        if self.jobs[j].ops[op].is_kernel() {
            self.fill_issued(j);
            self.state[j].queued_kernels += 1;
            if self.gates {
                self.state[j].queued_predicted_ns += i128::from(self.jobs[j].predicted_ns(op));
            }
        }
        let st = &mut self.state[j];
        st.ops[op].issued_at = self.now;
        st.outstanding += 1;
        if stream >= st.streams.len() {
            st.streams.resize_with(stream + 1, VecDeque::new);
            st.stream_last_done.resize(stream + 1, i64::MIN);
        }
        st.streams[stream].push_back(op);
        if st.streams[stream].len() == 1 {
            self.schedule_eligible(j, op);
        }
    }

    pub(super) fn schedule_eligible(&mut self, j: usize, op: usize) {
        let o = &self.jobs[j].ops[op];
        let st = &self.state[j];
        let issued = st.ops[op].issued_at;
        debug_assert!(
            issued != OpRt::NOT_ISSUED,
            "only issued ops become eligible"
        );
        let ready = issued
            .saturating_add(o.issue_offset_ns)
            .max(st.stream_last_done[o.stream as usize].saturating_add(o.start_offset_ns));
        if ready <= self.now {
            self.make_eligible(j, op);
        } else {
            self.schedule(ready, Event::Eligible(j, op));
        }
    }

    pub(super) fn make_eligible(&mut self, j: usize, op: usize) {
        let st = &mut self.state[j];
        st.ops[op].status = Status::Eligible;
        st.ops[op].eligible_at = self.now;
        if self.jobs[j].ops[op].is_kernel() {
            st.eligible.push(op);
        } else {
            self.start(j, op);
        }
    }

    pub(super) fn start(&mut self, j: usize, op: usize) {
        let now = self.now;
        let is_kernel = self.jobs[j].ops[op].is_kernel();
        let by_blocks = is_kernel && self.blocks();
        if is_kernel {
            self.count_fill();
        }
        let st = &mut self.state[j];
        let o = &mut st.ops[op];
        assert_eq!(
            o.status,
            Status::Eligible,
            "policy started op {op} of job {j} that is not eligible"
        );
        o.status = Status::Running;
        o.since = now;
        o.resumed_at = now;
        o.version += 1;
        let finish = now.saturating_add(o.remaining.ceil() as i64);
        let version = o.version;
        if is_kernel {
            if let Some(pos) = st.eligible.iter().position(|&x| x == op) {
                st.eligible.remove(pos);
            }
            st.running.push(op);
            if self.running_kernels == 0 {
                self.busy_since = now;
            }
            self.running_kernels += 1;
        }
        if by_blocks {
            // Its blocks take room at this instant's `place_blocks`; it ends with its last wave.
            let job = &self.jobs[j];
            let occupancy = job.occupancy(op).expect("a kernel has an occupancy");
            // How hard it presses on other jobs' kernels: the job's
            // measured pressure where it has one, else fully.
            let weight = job.pressure_weight.unwrap_or(1.0);
            self.slots
                .admit(j, op, occupancy, job.ops[op].duration_ns, weight);
        } else {
            self.schedule(finish, Event::Done(j, op, version));
        }
    }

    pub(super) fn stop_running(&mut self, j: usize, op: usize) {
        let now = self.now;
        self.count_fill();
        let st = &mut self.state[j];
        if let Some(pos) = st.running.iter().position(|&x| x == op) {
            st.running.remove(pos);
            self.running_kernels -= 1;
            if self.running_kernels == 0 {
                self.busy_ns += now - self.busy_since;
            }
            if self.opts.record_segments {
                self.segments.push(Segment {
                    job: j,
                    op,
                    ready_ns: st.ops[op].eligible_at.min(st.ops[op].resumed_at),
                    start_ns: st.ops[op].resumed_at,
                    end_ns: now,
                });
            }
        }
    }

    pub(super) fn pause(&mut self, j: usize, op: usize) {
        let now = self.now;
        assert!(
            self.sharing.is_none(),
            "policy paused a kernel while sharing SMs (Policy::sm_sharing: such a policy never pauses)"
        );
        {
            let o = &mut self.state[j].ops[op];
            assert_eq!(
                o.status,
                Status::Running,
                "policy paused an op that is not running"
            );
            o.remaining = (o.remaining - (now - o.since) as f64).max(0.0);
        }
        self.stop_running(j, op);
        let st = &mut self.state[j];
        let o = &mut st.ops[op];
        o.status = Status::Eligible;
        o.eligible_at = now;
        o.version += 1;
        st.eligible.push(op);
    }

    pub(super) fn complete(&mut self, j: usize, op: usize) {
        let now = self.now;
        let is_kernel = self.jobs[j].ops[op].is_kernel();
        if is_kernel {
            self.stop_running(j, op);
        }
        let stream = self.jobs[j].ops[op].stream as usize;
        let st = &mut self.state[j];
        st.ops[op].status = Status::Done;
        st.ops[op].remaining = 0.0;
        st.outstanding -= 1;
        if is_kernel {
            st.queued_kernels -= 1;
            if self.gates {
                st.queued_predicted_ns -= i128::from(self.jobs[j].predicted_ns(op));
            }
        }
        st.stream_last_done[stream] = now;
        let front = st.streams[stream].pop_front();
        debug_assert_eq!(front, Some(op));
        if is_kernel {
            let pos = self.jobs[j].kernel_position[op];
            st.last_kernel_done = Some((pos as usize, now));
        }
        if let Some(&next) = st.streams[stream].front() {
            self.schedule_eligible(j, next);
        }
        if is_kernel {
            self.fill_done(j);
        }
        if let Host::Waiting {
            op: w,
            wake_ns,
            ends_iteration,
        } = self.state[j].host
            && w == op
        {
            let st = &mut self.state[j];
            let resume = now.saturating_add(wake_ns);
            if ends_iteration {
                st.end_iteration(resume);
            }
            st.host_t = resume;
            st.host = Host::Busy;
            if resume > now {
                self.schedule(resume, Event::Host(j));
            } else {
                self.host_step(j);
            }
        }
        self.maybe_finish(j);
    }

    pub(super) fn maybe_finish(&mut self, j: usize) {
        let st = &mut self.state[j];
        if st.host == Host::Finished && st.outstanding == 0 && st.finish_ns.is_none() {
            st.finish_ns = Some(self.now.max(st.host_t).saturating_add(self.jobs[j].tail_ns));
        }
    }
}
