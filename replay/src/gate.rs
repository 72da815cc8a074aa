//! The live policies' launch rules: when a worker may hand its next kernel to
//! the GPU. Pure functions of what the control block shows, so they are
//! tested without a GPU; they follow the simulator's `Preemptive` (kernel
//! granularity) and `Fikit` policies.

use crate::plan::TopInfo;

/// What a gate sees of one job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobView {
    /// Job index.
    pub index: usize,
    /// Priority, 0 highest.
    pub priority: u8,
    /// Arrived and not finished.
    pub active: bool,
    /// Kernels launched and not done.
    pub in_flight: u64,
    /// Kernels done.
    pub done: u64,
    /// 1 + position of the latest kernel done (0: none yet).
    pub last_done: u64,
}

/// The top job: the active job of highest priority, then lowest index (as the
/// simulator's FIKIT policy picks it).
pub fn top(jobs: &[JobView]) -> Option<&JobView> {
    jobs.iter()
        .filter(|j| j.active)
        .min_by_key(|j| (j.priority, j.index))
}

/// Preemptive priority at kernel granularity: job `me` may launch when no
/// active job of strictly higher priority has a kernel in flight. While such a
/// job is active, `me` keeps at most one kernel in flight (nothing new of a
/// lower-priority job starts behind the running one), so the higher-priority
/// job waits at most for one kernel.
pub fn preemptive(me: usize, jobs: &[JobView]) -> bool {
    let mine = &jobs[me];
    let mut higher = jobs
        .iter()
        .filter(|j| j.active && j.index != mine.index && j.priority < mine.priority);
    let Some(first) = higher.next() else {
        return true;
    };
    std::iter::once(first)
        .chain(higher)
        .all(|j| j.in_flight == 0)
        && mine.in_flight == 0
}

/// When the top job's current idle gap is predicted to end, on the monotonic
/// clock: `idle_since` (when its last kernel was seen done) plus the profiled
/// gap after that kernel; before its first kernel is done, its arrival plus
/// the recorded start of its first kernel. `start_ns` is the run's time zero.
pub fn gap_end(top: &JobView, info: &TopInfo, idle_since: i64, start_ns: i64) -> i64 {
    if top.last_done == 0 {
        start_ns + info.arrival_ns + info.first_kernel_ns
    } else {
        let pos = (top.last_done - 1) as usize;
        idle_since + info.gap_after_kernel_ns.get(pos).copied().unwrap_or(0)
    }
}

/// FIKIT: job `me`, whose next kernel is predicted to run `predicted_ns`, may
/// launch now when it is the top job (or no job is active), or when the top
/// job has no kernel in flight, no other job's kernel is in flight (one fill
/// at a time), and the prediction fits the rest of the gap (`gap_end - now`).
pub fn fikit(me: usize, jobs: &[JobView], predicted_ns: i64, now: i64, gap_end: i64) -> bool {
    let Some(t) = top(jobs) else {
        return true;
    };
    if t.index == jobs[me].index {
        return true;
    }
    let others_busy = jobs.iter().any(|j| j.index != t.index && j.in_flight > 0);
    t.in_flight == 0 && !others_busy && predicted_ns <= gap_end - now
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(index: usize, priority: u8, in_flight: u64) -> JobView {
        JobView {
            index,
            priority,
            active: true,
            in_flight,
            done: 0,
            last_done: 0,
        }
    }

    #[test]
    fn top_is_highest_priority_then_lowest_index() {
        let mut jobs = vec![view(0, 5, 0), view(1, 0, 0), view(2, 0, 0)];
        assert_eq!(top(&jobs).unwrap().index, 1);
        jobs[1].active = false;
        assert_eq!(top(&jobs).unwrap().index, 2);
        jobs[2].active = false;
        jobs[0].active = false;
        assert!(top(&jobs).is_none());
    }

    #[test]
    fn preemptive_holds_low_priority_while_high_has_kernels() {
        let jobs = vec![view(0, 0, 1), view(1, 9, 0)];
        assert!(!preemptive(1, &jobs), "high priority busy: hold");
        assert!(preemptive(0, &jobs), "the high-priority job never waits");
        let jobs = vec![view(0, 0, 0), view(1, 9, 0)];
        assert!(preemptive(1, &jobs));
        let jobs = vec![view(0, 0, 0), view(1, 9, 1)];
        assert!(
            !preemptive(1, &jobs),
            "one low-priority kernel at a time while high is active"
        );
        let mut jobs = vec![view(0, 0, 3), view(1, 9, 4)];
        jobs[0].active = false;
        assert!(
            preemptive(1, &jobs),
            "a finished high-priority job holds nothing"
        );
        let jobs = vec![view(0, 4, 2), view(1, 4, 2)];
        assert!(
            preemptive(1, &jobs) && preemptive(0, &jobs),
            "equal priorities do not preempt"
        );
    }

    #[test]
    fn fikit_fills_only_fitting_kernels_into_an_idle_gap() {
        let jobs = vec![view(0, 0, 0), view(1, 9, 0)];
        assert!(fikit(1, &jobs, 10, 100, 110), "fits exactly");
        assert!(!fikit(1, &jobs, 11, 100, 110), "does not fit");
        assert!(!fikit(1, &jobs, 1, 100, 99), "gap already over");
        let busy = vec![view(0, 0, 1), view(1, 9, 0)];
        assert!(!fikit(1, &busy, 1, 100, 1000), "top has a kernel in flight");
        let filling = vec![view(0, 0, 0), view(1, 9, 1), view(2, 9, 0)];
        assert!(!fikit(2, &filling, 1, 100, 1000), "one fill at a time");
        assert!(
            fikit(0, &filling, i64::MAX, 100, 0),
            "the top job always goes"
        );
        let mut alone = vec![view(0, 0, 0), view(1, 9, 0)];
        alone[0].active = false;
        assert!(fikit(1, &alone, i64::MAX, 0, 0), "no top job: run freely");
    }

    #[test]
    fn gap_end_uses_the_profiled_gap_after_the_last_kernel_done() {
        let info = TopInfo {
            index: 0,
            priority: 0,
            arrival_ns: 1_000,
            first_kernel_ns: 500,
            gap_after_kernel_ns: vec![10, 20, 30],
        };
        let mut v = view(0, 0, 0);
        assert_eq!(gap_end(&v, &info, 7_000, 100), 100 + 1_000 + 500);
        v.last_done = 2;
        assert_eq!(gap_end(&v, &info, 7_000, 100), 7_020);
        v.last_done = 9;
        assert_eq!(
            gap_end(&v, &info, 7_000, 100),
            7_000,
            "past the table: no gap"
        );
    }
}
