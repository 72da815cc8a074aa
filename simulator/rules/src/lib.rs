//! FIKIT's fill rule, the one decision the simulator's `Fikit` policy
//! (`fikit-sim-core`) and the live gate (`fikit-gate`) must make alike:
//! while the top job sits in an idle gap, which waiting kernel of another
//! job fills it.
//!
//! As the paper designs it (arXiv 2311.10359): the other jobs wait in
//! priority queues, and the gap goes to the kernel of best priority whose
//! predicted duration fits the predicted rest of the gap; one fill at a
//! time, and nothing when nothing fits. Within a priority, a queue: the one
//! waiting longest goes first, then the lowest job index and op, so the
//! choice is deterministic.
//!
//! And what the paper leaves open for a job that leaves the GPU for a while
//! (a server between requests): while it is away the next job runs as the
//! top, but the kernels that job queues on the GPU meanwhile are still there
//! when the away job comes back, and its first kernel waits behind them.
//! [`may_queue`] bounds that queue by the away job's [`hold_ns`].
//!
//! No dependencies: the collector injected into profiled programs runs the
//! gate, and with it this crate.

/// A kernel waiting to fill a gap: its place in line and its predicted
/// duration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waiting {
    /// Its job's priority, 0 highest.
    pub priority: u8,
    /// When it began waiting, ns (the simulator: when it became eligible;
    /// the gate: when its launch reached the gate).
    pub since_ns: i64,
    /// Its job's index.
    pub job: usize,
    /// Its op index in the job (the gate: 0, one launch waits per job).
    pub op: usize,
    /// Its predicted duration, ns (the profiled mean of its kernel).
    pub predicted_ns: i64,
}

impl Waiting {
    /// Its place in line: priority, then waiting longest, then job and op.
    fn rank(&self) -> (u8, i64, usize, usize) {
        (self.priority, self.since_ns, self.job, self.op)
    }
}

/// The waiting kernel that fills a gap with `left_ns` predicted to go: of
/// those whose prediction fits (`predicted_ns <= left_ns`), the first in
/// line; `None` when none fits.
pub fn fill(left_ns: i64, waiting: impl IntoIterator<Item = Waiting>) -> Option<Waiting> {
    waiting
        .into_iter()
        .filter(|w| w.predicted_ns <= left_ns)
        .min_by_key(Waiting::rank)
}

/// A job's hold, as a share of its request's GPU work: 1/20. The issue's
/// target keeps a server's p99 within 10% of its p99 alone; half of that is
/// left to the wait behind the held queue (at most a hold a request), half to
/// the gate's own cost (3.8% measured, lab log 2026-11-25).
pub const HOLD_SHARE: (i64, i64) = (1, 20);

/// The most predicted kernel time other jobs may keep queued on the GPU
/// while a job of higher priority is away, ns: [`HOLD_SHARE`] of that job's
/// GPU work in one of its iterations (a server's request), `iteration_gpu_ns`
/// (the median over its profile). 0 (no bound) when that is unknown (0).
pub fn hold_ns(iteration_gpu_ns: i64) -> i64 {
    iteration_gpu_ns.max(0) / HOLD_SHARE.1 * HOLD_SHARE.0
}

/// Whether a job with `in_flight` kernels queued or running on the GPU,
/// predicted to take `in_flight_ns` in all, may queue one more predicted to
/// run `predicted_ns` while a job of higher priority whose hold is `hold_ns`
/// is away: always when nothing of it is in flight (a kernel longer than the
/// hold runs alone, as under preemption at kernel granularity) or when the
/// away job sets no bound (`hold_ns` 0); else while the queue stays within
/// the hold.
pub fn may_queue(in_flight: u64, in_flight_ns: i64, predicted_ns: i64, hold_ns: i64) -> bool {
    hold_ns <= 0 || in_flight == 0 || in_flight_ns.saturating_add(predicted_ns) <= hold_ns
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(priority: u8, since_ns: i64, job: usize, predicted_ns: i64) -> Waiting {
        Waiting {
            priority,
            since_ns,
            job,
            op: 0,
            predicted_ns,
        }
    }

    #[test]
    fn the_best_priority_that_fits_fills() {
        let queue = [w(5, 0, 1, 50), w(3, 10, 2, 80), w(3, 5, 3, 200)];
        // 100 ns left: job 3 (priority 3) does not fit, job 2 does.
        assert_eq!(fill(100, queue).map(|x| x.job), Some(2));
        // 300 ns: both priority-3 kernels fit; job 3 has waited longer.
        assert_eq!(fill(300, queue).map(|x| x.job), Some(3));
        // 60 ns: only the priority-5 kernel fits.
        assert_eq!(fill(60, queue).map(|x| x.job), Some(1));
        // Exactly the rest of the gap fits; nothing fits 49 ns.
        assert_eq!(fill(50, queue).map(|x| x.job), Some(1));
        assert_eq!(fill(49, queue), None);
    }

    #[test]
    fn ties_go_to_the_lowest_job_then_op() {
        let mut a = w(1, 7, 4, 10);
        let b = w(1, 7, 2, 10);
        assert_eq!(fill(10, [a, b]).map(|x| x.job), Some(2));
        a.job = 2;
        a.op = 9;
        let c = Waiting { op: 3, ..b };
        assert_eq!(fill(10, [a, c]).map(|x| x.op), Some(3));
    }

    #[test]
    fn the_hold_is_a_twentieth_of_a_request() {
        assert_eq!(hold_ns(4_000_000), 200_000);
        assert_eq!(hold_ns(19), 0);
        assert_eq!(hold_ns(-5), 0);
    }

    #[test]
    fn a_queue_stays_within_the_hold() {
        // Nothing in flight: any kernel, even longer than the hold.
        assert!(may_queue(0, 0, 1_000, 100));
        // 60 in flight: 40 more fits a hold of 100, 41 does not.
        assert!(may_queue(2, 60, 40, 100));
        assert!(!may_queue(2, 60, 41, 100));
        // No hold: no bound.
        assert!(may_queue(500, i64::MAX, i64::MAX, 0));
    }
}
