//! Live replay's use of the launch rules ([`fikit_gate::rules`], shared with
//! `fikit-run`): the rules themselves, and where replay predicts the top
//! job's idle gap to end (from its launch plan).

pub use fikit_gate::rules::{JobView, fikit, preemptive, top};

use crate::plan::TopInfo;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gap_end_uses_the_profiled_gap_after_the_last_kernel_done() {
        let info = TopInfo {
            index: 0,
            priority: 0,
            arrival_ns: 1_000,
            first_kernel_ns: 500,
            gap_after_kernel_ns: vec![10, 20, 30],
        };
        let mut v = JobView {
            index: 0,
            priority: 0,
            active: true,
            in_flight: 0,
            done: 0,
            last_done: 0,
            waiting_ns: 0,
            waiting_since_ns: 0,
        };
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
