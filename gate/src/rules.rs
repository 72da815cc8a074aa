//! The live policies' launch rules: when a job may hand its next kernel to
//! the GPU. Pure functions of what a control block shows, so they are tested
//! without a GPU; they follow the simulator's `Preemptive` (kernel
//! granularity) and `Fikit` policies, and FIKIT's choice of fill is the
//! simulator's own function ([`fikit_rules::fill`]). Live replay's workers
//! and the gate in the collector under `fikit-run` both decide with them.

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
    /// Under FIKIT, the predicted duration of the kernel it waits at the
    /// gate to launch, ns; 0 when it does not wait (or the gate does not
    /// say: live replay).
    pub waiting_ns: i64,
    /// When it began that wait, ns.
    pub waiting_since_ns: i64,
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

/// FIKIT: job `me`, whose next kernel is predicted to run `predicted_ns`, may
/// launch now when it is the top job (or no job is active), or when the top
/// job has no kernel in flight, no other job's kernel is in flight (one fill
/// at a time; a job no longer active holds nothing, so a job that died with a
/// kernel in flight blocks no one), and its kernel is the one the paper's
/// rule ([`fikit_rules::fill`], the simulator's too) gives the rest of the
/// gap (`gap_end - now`): of the active jobs waiting with a kernel that fits,
/// the best priority, then the one waiting longest (`me` since its view's
/// `waiting_since_ns` once its wait is posted, else from now).
pub fn fikit(me: usize, jobs: &[JobView], predicted_ns: i64, now: i64, gap_end: i64) -> bool {
    let Some(t) = top(jobs) else {
        return true;
    };
    let mine = &jobs[me];
    if t.index == mine.index {
        return true;
    }
    let others_busy = jobs
        .iter()
        .any(|j| j.active && j.index != t.index && j.in_flight > 0);
    if t.in_flight != 0 || others_busy {
        return false;
    }
    let waiting = |j: &JobView, since_ns, predicted_ns| fikit_rules::Waiting {
        priority: j.priority,
        since_ns,
        job: j.index,
        op: 0,
        predicted_ns,
    };
    // Its own wait from when it posted it, else from now.
    let since = if mine.waiting_ns > 0 {
        mine.waiting_since_ns
    } else {
        now
    };
    let others = jobs
        .iter()
        .filter(|j| j.active && j.index != t.index && j.index != mine.index && j.waiting_ns > 0)
        .map(|j| waiting(j, j.waiting_since_ns, j.waiting_ns));
    let queue = std::iter::once(waiting(mine, since, predicted_ns)).chain(others);
    fikit_rules::fill(gap_end - now, queue).is_some_and(|w| w.job == mine.index)
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
            waiting_ns: 0,
            waiting_since_ns: 0,
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
    fn fikit_gives_the_gap_to_the_best_priority_that_fits() {
        // Job 0 the top, in a gap until 1000 (now 100: 900 ns left).
        let waiting = |mut v: JobView, ns: i64, since: i64| {
            v.waiting_ns = ns;
            v.waiting_since_ns = since;
            v
        };
        let jobs = vec![
            view(0, 0, 0),
            waiting(view(1, 5, 0), 400, 50),
            waiting(view(2, 3, 0), 600, 80),
        ];
        // Job 1 (priority 5) waits with a kernel that fits, but job 2
        // (priority 3) does too: the gap is job 2's.
        assert!(!fikit(1, &jobs, 400, 100, 1000));
        assert!(fikit(2, &jobs, 600, 100, 1000));
        // With 500 ns left job 2's 600 does not fit: job 1 fills.
        assert!(fikit(1, &jobs, 400, 500, 1000));
        assert!(!fikit(2, &jobs, 600, 500, 1000));
        // Equal priorities: the one waiting longest; a job whose wait is not
        // posted yet waits from now, behind both.
        let mut equal = jobs.clone();
        equal[2].priority = 5;
        assert!(fikit(1, &equal, 400, 100, 1000), "waits since 50");
        assert!(!fikit(2, &equal, 600, 100, 1000), "waits since 80");
        equal.push(view(3, 5, 0));
        assert!(!fikit(3, &equal, 10, 100, 1000), "not posted: from now");
        // A waiting job that is not active (exited, away) takes no turn.
        equal[1].active = false;
        assert!(fikit(2, &equal, 600, 100, 1000));
    }

    #[test]
    fn fikit_fills_only_fitting_kernels_into_an_idle_gap() {
        let jobs = vec![view(0, 0, 0), view(1, 9, 0)];
        assert!(fikit(1, &jobs, 10, 100, 110), "fits exactly");
        assert!(!fikit(1, &jobs, 11, 100, 110), "does not fit");
        assert!(!fikit(1, &jobs, 1, 100, 99), "gap already over");
        let busy = vec![view(0, 0, 1), view(1, 9, 0)];
        assert!(!fikit(1, &busy, 1, 100, 1000), "top has a kernel in flight");
        let mut filling = vec![view(0, 0, 0), view(1, 9, 1), view(2, 9, 0)];
        assert!(!fikit(2, &filling, 1, 100, 1000), "one fill at a time");
        filling[1].active = false;
        assert!(
            fikit(2, &filling, 1, 100, 1000),
            "a filler that died with a kernel in flight holds nothing"
        );
        assert!(
            fikit(0, &filling, i64::MAX, 100, 0),
            "the top job always goes"
        );
        let mut alone = vec![view(0, 0, 0), view(1, 9, 0)];
        alone[0].active = false;
        assert!(fikit(1, &alone, i64::MAX, 0, 0), "no top job: run freely");
    }
}
