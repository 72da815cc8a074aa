//! The event loop: an [`Engine`] prepared from jobs and arrivals, its
//! queue (time, then FIFO), and [`Engine::run`], which pops events and asks
//! the policy at each instant.

use std::collections::BinaryHeap;

use crate::sim::job::Job;
use crate::sim::slots::SlotPool;

use super::fill::FillCount;
use super::{
    Commands, Engine, Event, Host, JobOutcome, JobRt, MAX_DECISIONS_PER_INSTANT, MAX_SIM_NS, OpRt,
    Policy, Queued, RunError, RunOptions, RunResult, Status,
};

impl<'a> Engine<'a> {
    /// Prepares a run of `jobs`, job `i` arriving at `arrivals[i]`.
    pub fn new(jobs: &'a [Job], arrivals: &[i64], opts: RunOptions) -> Self {
        let state = jobs
            .iter()
            .zip(arrivals)
            .map(|(j, &arrival)| {
                JobRt {
                    priority: j.priority,
                    arrival_ns: arrival,
                    eligible: Vec::new(),
                    running: Vec::new(),
                    ops: j
                        .ops
                        .iter()
                        .map(|o| OpRt {
                            status: Status::Pending,
                            remaining: o.duration_ns as f64,
                            since: 0,
                            version: 0,
                            eligible_at: 0,
                            resumed_at: 0,
                            issued_at: OpRt::NOT_ISSUED,
                        })
                        .collect(),
                    last_kernel_done: None,
                    finish_ns: None,
                    iterations_ns: Vec::new(),
                    iteration_start: arrival,
                    requests_from: None,
                    awaiting_request: false,
                    host: Host::Busy,
                    step: 0,
                    host_t: arrival,
                    // Grown as the host issues to each stream (a pass
                    // over every op here cost as much as the run's events).
                    streams: Vec::new(),
                    stream_last_done: Vec::new(),
                    outstanding: 0,
                    queued_kernels: 0,
                    held: (0, 0),
                    queued_predicted_ns: 0,
                }
            })
            .collect();
        Engine {
            jobs,
            state,
            queue: BinaryHeap::new(),
            events: Vec::new(),
            free_slots: Vec::new(),
            seq: 0,
            now: 0,
            wake_pending: None,
            running_kernels: 0,
            busy_since: 0,
            busy_ns: 0,
            processed: 0,
            segments: Vec::new(),
            opts,
            launch: Vec::new(),
            gates: false,
            sharing: None,
            slots: SlotPool::new(jobs.len()),
            first: Vec::new(),
            too_long: None,
            fill: FillCount::new(jobs.iter().map(|j| j.priority)),
        }
    }

    pub(super) fn schedule(&mut self, t: i64, e: Event) {
        if t > MAX_SIM_NS {
            self.too_long.get_or_insert((self.now, t));
            return;
        }
        let slot = match self.free_slots.pop() {
            Some(s) => {
                self.events[s] = e;
                s
            }
            None => {
                self.events.push(e);
                self.events.len() - 1
            }
        };
        self.queue.push(Queued::new(t, self.seq, slot));
        self.seq += 1;
    }

    /// The time of the next event, from the queue or the SM slots' wave ends.
    fn next_time(&mut self) -> Option<i64> {
        let queued = self.queue.peek().map(Queued::time);
        match (queued, self.slots.next_wave()) {
            (Some(q), Some((w, _))) => Some(q.min(w)),
            (q, w) => q.or(w.map(|(t, _)| t)),
        }
    }

    /// Takes the next event (time, then sequence number) and makes its time
    /// `now`: `Some(Some(event))` from the queue, `Some(None)` for the wave
    /// end the SM slots hold next, `None` when nothing is left.
    fn pop_next(&mut self) -> Option<Option<Event>> {
        let queued = self.queue.peek().map(|q| (q.time(), q.seq()));
        let wave = self.slots.next_wave();
        match (queued, wave) {
            (None, None) => None,
            (q, Some(w)) if q.is_none_or(|q| w < q) => {
                self.now = w.0;
                Some(None)
            }
            _ => {
                let q = self.queue.pop()?;
                self.free_slots.push(q.slot);
                self.now = q.time();
                Some(Some(self.events[q.slot]))
            }
        }
    }

    /// Runs to the end under `policy`. Fails only when the policy leaves
    /// eligible work unscheduled with nothing left to happen (a policy bug).
    pub fn run(mut self, policy: &mut dyn Policy) -> Result<RunResult, RunError> {
        self.sharing = policy.sm_sharing();
        if let Some(share) = &self.sharing {
            self.slots.set_last_wave_floor(share.last_wave_floor);
        }
        self.gates = policy.gates_launches();
        for j in 0..self.jobs.len() {
            let arrival = self.state[j].arrival_ns;
            self.schedule(arrival, Event::Host(j));
        }
        let mut cmds = Commands::default();
        // Whether anything happened in this instant yet.
        let mut changed = false;
        while let Some(event) = self.pop_next() {
            if let Some((at_ns, due_ns)) = self.too_long {
                return Err(RunError::TooLong {
                    policy: policy.name(),
                    at_ns,
                    due_ns,
                });
            }
            let t = self.now;
            self.processed += 1;
            changed |= self.handle(event);
            // Same-time events first: the policy sees one consistent instant.
            if self.next_time() == Some(t) {
                continue;
            }
            // An instant of stale events only is no decision point: the
            // policy is asked when something happened, so that a run does
            // not depend on when leftover events of earlier plans fall (the
            // engine skips time-slice rounds without creating them).
            if !std::mem::take(&mut changed) {
                continue;
            }
            self.decide(policy, &mut cmds);
        }
        self.finish(policy)
    }

    /// Handles one event (`None`: the wave end the SM slots hold next);
    /// false when it changed nothing (a stale one).
    fn handle(&mut self, event: Option<Event>) -> bool {
        match event {
            None => {
                // A wave's blocks free their room; the kernel ends with its last.
                let (j, op, done) = self.slots.retire_next();
                if done {
                    self.complete(j, op);
                }
                true
            }
            Some(Event::Host(j)) => {
                self.host_step(j);
                true
            }
            Some(Event::Eligible(j, op)) => {
                self.make_eligible(j, op);
                true
            }
            Some(Event::Done(j, op, version)) => {
                // A stale completion (rescheduled or paused since) changes nothing.
                let o = &self.state[j].ops[op];
                let live = o.version == version && o.status == Status::Running;
                if live {
                    self.complete(j, op);
                }
                live
            }
            Some(Event::Wake) => {
                // A wake-up the policy no longer waits for changes nothing.
                let live = self.wake_pending == Some(self.now);
                if live {
                    self.wake_pending = None;
                }
                live
            }
        }
    }

    /// The end of an instant in which something happened: asks the policy,
    /// carries out its commands, places blocks, skips time-slice rounds.
    fn decide(&mut self, policy: &mut dyn Policy, cmds: &mut Commands) {
        // Ask the policy; after it paused work, ask again so it can use the
        // freed device; let go the launch calls its gate now lets return.
        for _ in 0..MAX_DECISIONS_PER_INSTANT {
            cmds.start.clear();
            cmds.pause.clear();
            cmds.wake_at = None;
            cmds.launch.clear();
            policy.decide(self.now, self.jobs, &self.state, cmds);
            if !cmds.launch.is_empty() {
                std::mem::swap(&mut self.launch, &mut cmds.launch);
            }
            for &(j, op) in &cmds.pause {
                self.pause(j, op);
            }
            for &(j, op) in &cmds.start {
                self.start(j, op);
            }
            if let Some(w) = cmds.wake_at
                && w > self.now
                && self.wake_pending.is_none_or(|p| w < p)
            {
                self.wake_pending = Some(w);
                self.schedule(w, Event::Wake);
            }
            // Ask again after it paused work, or after a held launch went
            // onto its stream (a kernel the policy may start now); the
            // launches are let go in every pass, one that paused too.
            let released = self.release_launches();
            if cmds.pause.is_empty() && !released {
                break;
            }
        }
        if self.blocks() {
            self.place_blocks();
        }
        if let Some(r) = policy.rotation(self.now, &self.state) {
            let by = self.skip_rounds(&r);
            if by > 0 {
                policy.skip(by);
            }
        }
    }

    /// The run's result once no event is left.
    fn finish(mut self, policy: &mut dyn Policy) -> Result<RunResult, RunError> {
        // Replaced wave ends count as the stale events they stand for, and
        // the run ends at the latest of those too.
        let (superseded, until) = self.slots.superseded();
        self.processed += superseded;
        self.now = self.now.max(until);
        if let Some((at_ns, due_ns)) = self.too_long {
            return Err(RunError::TooLong {
                policy: policy.name(),
                at_ns,
                due_ns,
            });
        }
        let mut jobs = Vec::with_capacity(self.state.len());
        for (j, st) in self.state.iter().enumerate() {
            let finish = st.finish_ns.ok_or_else(|| RunError::Stuck {
                policy: policy.name(),
                job: self.jobs[j].name.clone(),
                at_ns: self.now,
            })?;
            let mut iterations = st.iterations_ns.clone();
            if iterations.is_empty() {
                iterations.push(finish - st.arrival_ns);
            }
            jobs.push(JobOutcome {
                arrival_ns: st.arrival_ns,
                finish_ns: finish,
                iterations_ns: iterations,
                launches_held: st.held,
                fills: policy.fills().map(|f| f.get(j).copied().unwrap_or(0)),
            });
        }
        let first = jobs.iter().map(|j| j.arrival_ns).min().unwrap_or(0);
        let last = jobs.iter().map(|j| j.finish_ns).max().unwrap_or(0);
        Ok(RunResult {
            jobs,
            busy_ns: self.busy_ns,
            makespan_ns: last - first,
            events: self.processed,
            segments: self.segments,
            misprediction: policy.misprediction(),
            fill: self.fill.result(),
        })
    }
}
