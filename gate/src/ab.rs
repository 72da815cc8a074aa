//! The gate's A/B inside one process (`fikit-lab gate-ab --phase-ms MS`):
//! the gate's launch callbacks are turned off and on in alternate phases of
//! a fixed length while the job runs alone, so that its iterations with the
//! gate and without it come from the same process (a batch-1 job's speed
//! differs from process to process by more than the gate costs).
//!
//! Phases start at the slot's [`crate::block::Slot::ab_start_ns`] and last
//! [`crate::block::Header::ab_period_ms`]: phase 0 off, phase 1 on, and so on.
//! Before the first phase the gate is on. While a phase is off the gate sees
//! no launch, so every blocking synchronization is stamped (an iteration's
//! end), not only those after a launch.

/// The phase `t` falls in, from 0; `None` before the first phase or with no
/// A/B (`period_ns` or `start_ns` 0).
pub fn phase_at(start_ns: i64, period_ns: i64, t: i64) -> Option<u64> {
    if start_ns == 0 || period_ns <= 0 || t < start_ns {
        return None;
    }
    Some(((t - start_ns) / period_ns) as u64)
}

/// Whether the gate's launch callbacks are on in `phase`: odd phases.
pub fn is_on(phase: u64) -> bool {
    phase % 2 == 1
}

/// Whether the gate is off at `t` (inside an even phase).
pub fn off_at(start_ns: i64, period_ns: i64, t: i64) -> bool {
    phase_at(start_ns, period_ns, t).is_some_and(|p| !is_on(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_alternate_from_the_start() {
        // Phases of 100 ns from 1,000: [1000, 1100) off, [1100, 1200) on, ...
        assert_eq!(phase_at(1_000, 100, 999), None);
        assert_eq!(phase_at(1_000, 100, 1_000), Some(0));
        assert_eq!(phase_at(1_000, 100, 1_099), Some(0));
        assert_eq!(phase_at(1_000, 100, 1_100), Some(1));
        assert_eq!(phase_at(1_000, 100, 1_250), Some(2));
        assert!(off_at(1_000, 100, 1_050));
        assert!(!off_at(1_000, 100, 1_150));
        assert!(off_at(1_000, 100, 1_250));
        assert!(!off_at(1_000, 100, 900), "on before the first phase");
        assert_eq!(phase_at(0, 100, 5_000), None, "no start: no A/B");
        assert_eq!(phase_at(1_000, 0, 5_000), None, "no period: no A/B");
    }
}
