//! The gate's own cost from one process (`fikit-lab gate-ab --phase-ms MS`):
//! the collector turns the gate's launch callbacks off and on in alternate
//! phases ([`fikit_gate::ab`]), and the job's iterations (the spans between
//! its stamped synchronizations) are compared phase against phase. A batch-1
//! job's host speed changes from process to process and inside one (its
//! kernels' times stay the same), by more than the gate costs, so the
//! comparison is made between neighbouring phases of one process: each on
//! phase's median iteration over the mean of its two off neighbours' (a slow
//! drift cancels).

use serde::{Deserialize, Serialize};

use crate::report::Spread;

/// Iterations closer than this to a phase's start or end are left out (the
/// flip's own lateness, a thread waking, is well under it; a run whose
/// latest flip came later says so).
pub const MARGIN_NS: i64 = 1_000_000;
/// A phase counts with at least this many iterations.
pub const MIN_ITERATIONS: usize = 3;
/// Off and on phases whose median iterations differ by more than this
/// factor are flagged: more likely a program that synchronizes more than
/// once an iteration (every synchronization is an iteration's end in an off
/// phase, only one after a launch in an on phase) than the gate's cost.
pub const SUSPECT_FACTOR: f64 = 1.5;
/// An on phase whose median iteration is more than this factor off its
/// neighbours' (either way) is flagged: no gate cost is that large, but a
/// program that synchronizes several times an iteration has spans of mixed
/// lengths in both kinds of phase, and their medians jump between them.
pub const WILD_FACTOR: f64 = 2.0;

/// One round's A/B figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateAb {
    /// Phase length, ms.
    pub period_ms: u64,
    /// Per on phase with both off neighbours counted: (its phase index,
    /// the median iteration on, the mean of the neighbours' median
    /// iterations off), ns.
    pub phases: Vec<(u64, f64, f64)>,
    /// Iterations counted in off and in on phases.
    pub iterations: (usize, usize),
    /// Median iteration over every counted off and on iteration, ns.
    pub median_ns: (f64, f64),
    /// The longest any flip took to be done after its phase's scheduled
    /// start, ns (runs before the flip log: the latest a flip began).
    #[serde(default)]
    pub late_ns: i64,
    /// Phases up to the last iteration whose flip was never done (CUPTI's
    /// enable call did not return in the phase): left out, with every
    /// later one.
    #[serde(default)]
    pub unflipped: usize,
    /// On phases ran CUPTI's dispatch to a near-empty handler, not the gate
    /// (`fikit-lab gate-ab --floor`).
    #[serde(default)]
    pub floor: bool,
}

impl GateAb {
    /// Each on phase's ratio, with the gate over without.
    pub fn ratios(&self) -> Vec<f64> {
        self.phases.iter().map(|&(_, on, off)| on / off).collect()
    }

    /// The median ratio and its range; `None` with no phase counted.
    pub fn ratio(&self) -> Option<Spread> {
        Spread::of(&self.ratios())
    }

    /// One line for the job's round.
    pub fn line(&self) -> String {
        let (off, on) = self.iterations;
        let with = if self.floor {
            "CUPTI's launch callbacks to a near-empty handler (the floor, not the gate)"
        } else {
            "the gate"
        };
        let mut line = match self.ratio() {
            None => format!(
                "no on phase with two counted off neighbours ({off} iterations off, {on} on, phases of {} ms): run the job longer",
                self.period_ms
            ),
            Some(r) => format!(
                "with {with} over without, {:.3}x [{:.3}-{:.3}] over {} on phases of {} ms, each against its two off neighbours; {off} iterations off, {on} on, medians {:.3} / {:.3} ms",
                r.median,
                r.min,
                r.max,
                self.phases.len(),
                self.period_ms,
                self.median_ns.0 / 1e6,
                self.median_ns.1 / 1e6
            ),
        };
        let (a, b) = self.median_ns;
        if a > 0.0 && b > 0.0 && (a / b).max(b / a) > SUSPECT_FACTOR {
            line.push_str(&format!(
                " (suspect: off and on iterations differ by over {SUSPECT_FACTOR}x; does the program synchronize more than once an iteration?)"
            ));
        }
        let wild = self
            .ratios()
            .iter()
            .filter(|&&r| !(1.0 / WILD_FACTOR..=WILD_FACTOR).contains(&r))
            .count();
        if wild > 0 {
            line.push_str(&format!(
                " (suspect: {wild} on phase(s) more than {WILD_FACTOR}x off their neighbours; spans of mixed lengths: does the program synchronize more than once an iteration?)"
            ));
        }
        if self.late_ns > MARGIN_NS {
            line.push_str(&format!(
                "; flips done up to {:.1} ms into their phase (each phase counted from its flip)",
                self.late_ns as f64 / 1e6
            ));
        }
        if self.unflipped > 0 {
            line.push_str(&format!(
                "; {} phase(s) left out from the first whose flip was never done",
                self.unflipped
            ));
        }
        line
    }
}

fn median_of(v: &[f64]) -> f64 {
    Spread::of(v).map_or(0.0, |s| s.median)
}

/// The A/B figures from a job's sync stamps (monotonic ns, in order), its
/// first phase's start, the phase length and the flip log
/// ([`fikit_gate::Block::flips`]: when each phase's flip was done, 0 where
/// it was not). An iteration counts in a phase when it lies wholly inside
/// it, [`MARGIN_NS`] clear of the phase's end and of its start or, later,
/// its flip being done; from the first phase whose flip was never done, none.
pub fn figures(stamps: &[i64], start_ns: i64, period_ms: u64, flips: &[i64]) -> GateAb {
    let period = period_ms as i64 * 1_000_000;
    let flip = |k: u64| flips.get(k as usize).copied().unwrap_or(0);
    let first_undone = (0u64..).find(|&k| flip(k) == 0).unwrap_or(u64::MAX);
    let late_ns = (0..first_undone)
        .map(|k| flip(k) - (start_ns + k as i64 * period))
        .max()
        .unwrap_or(0)
        .max(0);
    let last_phase = stamps
        .last()
        .and_then(|&t| fikit_gate::ab::phase_at(start_ns, period, t));
    let unflipped = last_phase.map_or(0, |l| (l + 1).saturating_sub(first_undone) as usize);
    let mut by_phase: std::collections::BTreeMap<u64, Vec<f64>> = Default::default();
    for w in stamps.windows(2) {
        let (a, b) = (w[0], w[1]);
        let Some(k) = fikit_gate::ab::phase_at(start_ns, period, a) else {
            continue;
        };
        if k >= first_undone {
            continue;
        }
        let lo = start_ns + k as i64 * period;
        if a >= lo.max(flip(k)) + MARGIN_NS && b <= lo + period - MARGIN_NS {
            by_phase.entry(k).or_default().push((b - a) as f64);
        }
    }
    by_phase.retain(|_, v| v.len() >= MIN_ITERATIONS);
    let (mut off, mut on) = (Vec::new(), Vec::new());
    for (&k, v) in &by_phase {
        if fikit_gate::ab::is_on(k) {
            on.extend_from_slice(v);
        } else {
            off.extend_from_slice(v);
        }
    }
    let med = |k: u64| by_phase.get(&k).map(|v| median_of(v));
    let phases = by_phase
        .keys()
        .filter(|&&k| fikit_gate::ab::is_on(k))
        .filter_map(|&k| {
            let on = med(k)?;
            let off = (med(k - 1)? + med(k + 1)?) / 2.0;
            Some((k, on, off))
        })
        .collect();
    GateAb {
        period_ms,
        phases,
        iterations: (off.len(), on.len()),
        median_ns: (median_of(&off), median_of(&on)),
        late_ns,
        unflipped,
        floor: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stamps every `iter` ns from `from` to `to` (exclusive).
    fn every(from: i64, to: i64, iter: i64) -> Vec<i64> {
        (0..)
            .map(|i| from + i * iter)
            .take_while(|&t| t < to)
            .collect()
    }

    #[test]
    fn each_on_phase_against_its_two_off_neighbours() {
        // Phases of 100 ms from 1 s: off [1.0, 1.1), on [1.1, 1.2), off
        // [1.2, 1.3), on [1.3, 1.4), off [1.4, 1.5). Iterations of 4 ms off,
        // 5 ms on in the first on phase, then the host slows: 6 ms in the
        // second off phase, 6.6 ms on, 6 ms off.
        let ms = 1_000_000;
        let mut s = every(1_000 * ms, 1_100 * ms, 4 * ms);
        s.extend(every(1_100 * ms, 1_200 * ms, 5 * ms));
        s.extend(every(1_200 * ms, 1_300 * ms, 6 * ms));
        s.extend(every(1_300 * ms, 1_400 * ms, 6_600_000));
        s.extend(every(1_400 * ms, 1_500 * ms, 6 * ms));
        let ab = figures(
            &s,
            1_000 * ms,
            100,
            &flips(1_000 * ms, 100 * ms, 5, 200_000),
        );
        // On phase 1: 5 against (4 + 6) / 2 = 5: 1.0; on phase 3: 6.6 / 6 = 1.1.
        assert_eq!(ab.phases.len(), 2);
        assert_eq!(ab.phases[0], (1, 5e6, 5e6));
        assert_eq!(ab.phases[1].0, 3);
        let r = ab.ratios();
        assert!(
            (r[0] - 1.0).abs() < 1e-12 && (r[1] - 1.1).abs() < 1e-12,
            "{r:?}"
        );
        let r = ab.ratio().unwrap();
        assert!((r.median - 1.05).abs() < 1e-12 && r.min == 1.0 && (r.max - 1.1).abs() < 1e-12);
        // Counted: spans wholly inside a phase, 1 ms clear of its ends. The
        // first off phase has stamps at 1000, 1004, ..., 1096 ms: its spans
        // from 1004-1008 to 1092-1096 count (23; 1000-1004 starts on the
        // boundary, 1096-1100 ends on it). The 6 ms off phases: 1206-1212 to
        // 1290-1296, and 1406-1412 to 1490-1496 (15 each).
        assert_eq!(ab.iterations.0, 23 + 15 + 15);
        assert!(!ab.line().contains("suspect"), "{}", ab.line());
        assert!(!ab.line().contains("flips done"), "{}", ab.line());
        assert_eq!((ab.late_ns, ab.unflipped), (200_000, 0));
    }

    /// A flip log: `n` phases of `period` from `start`, each flip done `late` ns in.
    fn flips(start: i64, period: i64, n: i64, late: i64) -> Vec<i64> {
        (0..n).map(|k| start + k * period + late).collect()
    }

    #[test]
    fn a_phase_counts_from_its_flip_and_not_after_a_flip_never_done() {
        let ms = 1_000_000;
        // Iterations of 4 ms from 1 s through 1.5 s; phases of 100 ms. Phase
        // 1's flip was done 30 ms in, phase 3's never.
        let s = every(1_000 * ms, 1_500 * ms, 4 * ms);
        let mut f = flips(1_000 * ms, 100 * ms, 5, 100_000);
        f[1] = 1_130 * ms;
        f[3] = 0;
        let ab = figures(&s, 1_000 * ms, 100, &f);
        // Phase 0: spans 1004-1008 to 1092-1096 (23). Phase 1 from its flip:
        // 1132-1136 to 1192-1196 (16). Phase 2: 1204-1208 to 1292-1296 (23).
        // Phases 3 and 4 not at all.
        assert_eq!(ab.iterations, (23 + 23, 16));
        assert_eq!(ab.phases.len(), 1);
        assert_eq!((ab.late_ns, ab.unflipped), (30 * ms, 2));
        let line = ab.line();
        assert!(line.contains("flips done up to 30.0 ms"), "{line}");
        assert!(line.contains("2 phase(s) left out"), "{line}");
    }

    #[test]
    fn a_late_flip_and_unlike_phases_are_flagged() {
        let ms = 1_000_000;
        // Off phases of 2 ms iterations around an on phase of 4 ms ones (a
        // program that synchronizes twice an iteration looks so), and a
        // flip 1.5 ms late.
        let mut s = every(1_000 * ms, 1_100 * ms, 2 * ms);
        s.extend(every(1_100 * ms, 1_200 * ms, 4 * ms));
        s.extend(every(1_200 * ms, 1_300 * ms, 2 * ms));
        let ab = figures(
            &s,
            1_000 * ms,
            100,
            &flips(1_000 * ms, 100 * ms, 3, 1_500_000),
        );
        assert_eq!(ab.ratios(), vec![2.0]);
        let line = ab.line();
        assert!(line.contains("differ by over 1.5x"), "{line}");
        assert!(!line.contains("more than 2x off"), "{line}");
        assert!(line.contains("flips done up to 1.5 ms"), "{line}");
    }

    #[test]
    fn phases_far_off_their_neighbours_are_flagged() {
        let ms = 1_000_000;
        // Off phases of 4 ms spans, an on phase of 1 ms ones and one of 4:
        // medians 4x apart (bert-base's inner synchronizations looked so).
        let mut s = every(1_000 * ms, 1_100 * ms, 4 * ms);
        s.extend(every(1_100 * ms, 1_200 * ms, ms));
        s.extend(every(1_200 * ms, 1_300 * ms, 4 * ms));
        s.extend(every(1_300 * ms, 1_400 * ms, 4 * ms));
        s.extend(every(1_400 * ms, 1_500 * ms, 4 * ms));
        let ab = figures(&s, 1_000 * ms, 100, &flips(1_000 * ms, 100 * ms, 5, 0));
        assert_eq!(ab.ratios(), vec![0.25, 1.0]);
        let line = ab.line();
        assert!(
            line.contains("suspect: 1 on phase(s) more than 2x off"),
            "{line}"
        );
    }

    #[test]
    fn the_floor_says_what_its_on_phases_ran() {
        let ms = 1_000_000;
        let s = every(1_000 * ms, 1_300 * ms, 4 * ms);
        let mut ab = figures(&s, 1_000 * ms, 100, &flips(1_000 * ms, 100 * ms, 3, 0));
        assert!(ab.line().starts_with("with the gate over without, 1.000x"));
        ab.floor = true;
        assert!(
            ab.line()
                .starts_with("with CUPTI's launch callbacks to a near-empty handler (the floor, not the gate) over without, 1.000x"),
            "{}",
            ab.line()
        );
    }

    #[test]
    fn before_the_first_phase_and_thin_phases_do_not_count() {
        let ms = 1_000_000;
        // Iterations before the A/B began, then an off phase with only two
        // iterations (50 ms each), then an on phase.
        let mut s = every(500 * ms, 1_000 * ms, 4 * ms);
        s.extend([1_010 * ms, 1_060 * ms, 1_095 * ms]);
        s.extend(every(1_100 * ms, 1_200 * ms, 4 * ms));
        let ab = figures(&s, 1_000 * ms, 100, &flips(1_000 * ms, 100 * ms, 2, 0));
        assert!(ab.phases.is_empty());
        assert_eq!(ab.iterations.0, 0, "two iterations are too few for a phase");
        assert!(ab.ratio().is_none());
        assert!(ab.line().contains("run the job longer"));
    }
}
