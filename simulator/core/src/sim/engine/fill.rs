//! How much of the latency-critical job's idle GPU time other jobs' kernels
//! used: FIKIT's purpose, measured under every policy.
//!
//! The latency-critical job is the one of best priority, then lowest index
//! (as FIKIT and preemption pick it). From its first kernel issued to its
//! last kernel done, it is *idle* while none of its kernels is issued and
//! unfinished (its host between launches, its waits), and the idle time is
//! *filled* while another job's kernel runs. Counted at every change of
//! either (a kernel of it issued or done, any kernel started or stopped), so
//! it costs a few integer operations per event.

use super::Engine;

/// The latency-critical job's idle GPU time in a run, and what others used
/// of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fill {
    /// The job (index in the run).
    pub job: usize,
    /// Time it had no kernel issued and unfinished, from its first kernel
    /// issued to its last done, ns.
    pub idle_ns: i64,
    /// The part of `idle_ns` in which another job's kernel ran, ns.
    pub filled_ns: i64,
}

impl Fill {
    /// `filled / idle`; `None` when the job was never idle.
    pub fn share(&self) -> Option<f64> {
        (self.idle_ns > 0).then(|| self.filled_ns as f64 / self.idle_ns as f64)
    }
}

/// The running count behind [`Fill`].
#[derive(Debug, Clone, Default)]
pub(super) struct FillCount {
    /// The latency-critical job; `None` with fewer than two jobs.
    top: Option<usize>,
    /// Counted up to here; `None` before its first kernel is issued.
    since: Option<i64>,
    idle_ns: i64,
    filled_ns: i64,
    /// The counts at its latest kernel done.
    at_done: (i64, i64),
}

impl FillCount {
    /// For a run whose jobs have these priorities.
    pub(super) fn new(priorities: impl Iterator<Item = u8>) -> FillCount {
        let p: Vec<u8> = priorities.collect();
        let top = (p.len() >= 2)
            .then(|| (0..p.len()).min_by_key(|&j| (p[j], j)))
            .flatten();
        FillCount {
            top,
            ..FillCount::default()
        }
    }

    /// The result: up to the job's last kernel done.
    pub(super) fn result(&self) -> Option<Fill> {
        self.top.map(|job| Fill {
            job,
            idle_ns: self.at_done.0,
            filled_ns: self.at_done.1,
        })
    }
}

impl Engine<'_> {
    /// Counts the time since the last change with the state before this
    /// one; call before the top job's queued kernels or any running count
    /// changes.
    pub(super) fn count_fill(&mut self) {
        let Some(top) = self.fill.top else { return };
        let Some(since) = self.fill.since else { return };
        let dt = self.now - since;
        if dt > 0 && self.state[top].queued_kernels == 0 {
            self.fill.idle_ns += dt;
            if self.running_kernels > 0 {
                self.fill.filled_ns += dt;
            }
        }
        self.fill.since = Some(self.now);
    }

    /// The top job issued a kernel: counting starts with its first.
    pub(super) fn fill_issued(&mut self, j: usize) {
        if self.fill.top == Some(j) {
            self.count_fill();
            self.fill.since.get_or_insert(self.now);
        }
    }

    /// After a kernel of job `j` is done (its queued count lowered).
    pub(super) fn fill_done(&mut self, j: usize) {
        if self.fill.top == Some(j) {
            self.fill.at_done = (self.fill.idle_ns, self.fill.filled_ns);
        }
    }
}
