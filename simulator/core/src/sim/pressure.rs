//! How hard a job's kernels press on a neighbour under MPS, measured: the
//! job's trace and the trace of a victim recorded beside it under MPS
//! (`lab/validate/pressure.sh`): calibrate's latency-bound pointer chase
//! run back to back (`fikit-lab load --victim`), or, with `KIND=gemm`, the
//! matrix products of one transformer layer at batch 1, shaped like the
//! batch-1 jobs' own kernels (`lab/validate/gemm-victim.py`). Both traces share the host's
//! clock (CUPTI's timestamps).
//!
//! - The victim alone: the median of its runs that ended before the job's
//!   first kernel, per kernel shape (`kernel_key`): a victim may run
//!   kernels of several shapes (`lab/validate/gemm-victim.py`, the
//!   matrix products of one transformer layer), each set against its own
//!   runs alone. A shape with fewer than 10 runs alone is left out.
//! - Over the job's steady part (after the first fifth of its kernels), a
//!   victim run that the union of the job's kernels overlapped for `t` of
//!   its `d` ran `d - alone = t (1 - 1/s)`, `s` the victim's slowdown while
//!   overlapped: least squares for `1 - 1/s` over every steady run. It needs
//!   the victim to find room at once, which a job of small kernels leaves
//!   it; beside a job that fills the SMs the victim waits for room and `s`
//!   comes out far above what the kernels do (or past any slowdown).
//! - The job's one-wave SM share `w`, time-weighted over its steady
//!   kernels' time ([`crate::sim::job::Occupancy::demand`]).
//! - The job's mean host delay before a launch
//!   ([`Job::host_ns_per_launch`]): its host beside a busy neighbour under
//!   MPS, which the weight does not use.
//!
//! The model makes a latency-bound kernel beside kernels holding a share `o`
//! of the SMs run `1 + c o` slower ([`crate::sim::gpu::corun_factor`]), so a
//! job that pressed like the model's load would give `s = 1 + c w`. The
//! job's weight is what its kernels press with instead:
//! `(s - 1) / (c w)`, clamped to 0..=1 ([`PressureFit::weight`]; 1 where the
//! fit is past any slowdown). The rule was fixed before any co-run was read
//! with it (the validation log, 2026-11-26).

use fikit_trace::Trace;

use crate::sim::job::{Job, Occupancy, blocks_per_sm};

/// Why the two traces give no figure.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PressureError {
    /// A trace without kernels.
    #[error("{0}: no kernels")]
    NoKernels(&'static str),
    /// Too few victim runs alone before the job's first kernel.
    #[error(
        "the victim trace has {0} runs before the job's first kernel (at least 10 needed): start the victim earlier"
    )]
    FewAlone(usize),
    /// Too few victim runs inside the job's steady part.
    #[error(
        "the victim trace has {0} runs inside the job's steady part (at least 10 needed): are the traces from one pass on one machine?"
    )]
    FewSteady(usize),
}

/// The pressure pass's figures for one job.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PressureFit {
    /// The victim's median run alone, ns (over every shape's runs alone).
    pub victim_alone_ns: f64,
    /// Victim runs alone (before the job's first kernel), of the shapes
    /// read.
    pub runs_alone: usize,
    /// Kernel shapes of the victim read (each with 10 runs alone or more).
    pub victim_shapes: usize,
    /// Victim runs inside the job's steady part.
    pub runs_steady: usize,
    /// The share of those runs' time the job's kernels overlapped.
    pub overlapped: f64,
    /// The victim's slowdown while overlapped, fitted over every steady run
    /// (`None`: past any slowdown, `1 - 1/s >= 1`).
    pub slowdown: Option<f64>,
    /// Runs the job's kernels overlapped wholly (99% or more).
    pub runs_whole: usize,
    /// Their median stretch over the victim alone (`None` under 10 runs).
    pub whole_median: Option<f64>,
    /// The job's one-wave SM share, time-weighted over its steady kernels.
    pub share: f64,
    /// The job's mean host delay before a launch in the pass, ns
    /// ([`Job::host_ns_per_launch`]): its host's speed beside a busy
    /// neighbour under MPS, to set beside the same figure of its profile
    /// alone (`fikit-run scenario --pressure` prints the ratio). `None` without
    /// launches.
    pub host_ns_per_launch: Option<f64>,
}

impl PressureFit {
    /// The job's weight under a model whose latency-bound kernels slow
    /// `1 + c o` beside a share `o`: `(s - 1) / (c w)`, clamped to 0..=1; 1
    /// where the fit is past any slowdown, or `c` or `w` is 0.
    pub fn weight(&self, c: f64) -> f64 {
        match self.slowdown {
            Some(s) if c > 0.0 && self.share > 0.0 => {
                ((s - 1.0) / (c * self.share)).clamp(0.0, 1.0)
            }
            _ => 1.0,
        }
    }
}

/// The pressure pass's figures from the job's trace and the victim's.
pub fn fit(job: &Trace, victim: &Trace) -> Result<PressureFit, PressureError> {
    if job.kernels.is_empty() {
        return Err(PressureError::NoKernels("the job trace"));
    }
    if victim.kernels.is_empty() {
        return Err(PressureError::NoKernels("the victim trace"));
    }
    let mut js: Vec<(i64, i64)> = job.kernels.iter().map(|k| (k.start_ns, k.end_ns)).collect();
    js.sort_unstable();
    let first = js[0].0;
    let last_end = js.iter().map(|&(_, e)| e).max().unwrap_or(first);
    let steady_from = js[js.len() / 5].0;
    let union = Union::new(&js);
    // Each shape's runs alone, in a map ordered by key (deterministic).
    let mut before: std::collections::BTreeMap<u64, Vec<f64>> = Default::default();
    for k in victim.kernels.iter().filter(|k| k.end_ns < first) {
        before
            .entry(k.kernel_key)
            .or_default()
            .push(k.duration_ns() as f64);
    }
    let most = before.values().map(Vec::len).max().unwrap_or(0);
    before.retain(|_, v| v.len() >= 10);
    if before.is_empty() {
        return Err(PressureError::FewAlone(most));
    }
    let runs_alone: usize = before.values().map(Vec::len).sum();
    let mut all_alone: Vec<f64> = before.values().flatten().copied().collect();
    let victim_alone_ns = median(&mut all_alone);
    let alone: std::collections::BTreeMap<u64, f64> = before
        .into_iter()
        .map(|(k, mut v)| (k, median(&mut v)))
        .collect();
    let victim_shapes = alone.len();
    // (duration, alone, time the job's kernels covered) per steady run.
    let steady: Vec<(f64, f64, f64)> = victim
        .kernels
        .iter()
        .filter(|k| k.start_ns > steady_from && k.end_ns < last_end)
        .filter_map(|k| {
            let a = *alone.get(&k.kernel_key)?;
            Some((
                k.duration_ns() as f64,
                a,
                union.covered(k.start_ns, k.end_ns) as f64,
            ))
        })
        .collect();
    if steady.len() < 10 {
        return Err(PressureError::FewSteady(steady.len()));
    }
    let (mut tt, mut et, mut busy, mut total) = (0.0, 0.0, 0.0, 0.0);
    let mut whole = Vec::new();
    for &(d, alone, t) in &steady {
        tt += t * t;
        et += (d - alone) * t;
        busy += t;
        total += d;
        if t >= 0.99 * d {
            whole.push(d / alone);
        }
    }
    let slowdown = if tt > 0.0 {
        let b = et / tt;
        (b < 1.0).then(|| 1.0 / (1.0 - b))
    } else {
        Some(1.0)
    };
    let d = &job.meta.device;
    let (mut weighted, mut time) = (0.0, 0.0);
    for k in job.kernels.iter().filter(|k| k.start_ns > steady_from) {
        let per_sm = blocks_per_sm(
            d,
            k.threads_per_block(),
            k.registers_per_thread,
            u64::from(k.static_shared_bytes) + u64::from(k.dynamic_shared_bytes),
        );
        let blocks = k.grid.iter().map(|&g| u64::from(g.max(1))).product();
        let dur = k.duration_ns().max(0) as f64;
        weighted += Occupancy::new(blocks, per_sm, d.sm_count).demand * dur;
        time += dur;
    }
    let runs_whole = whole.len();
    Ok(PressureFit {
        victim_alone_ns,
        runs_alone,
        victim_shapes,
        runs_steady: steady.len(),
        overlapped: if total > 0.0 { busy / total } else { 0.0 },
        slowdown,
        runs_whole,
        whole_median: (runs_whole >= 10).then(|| median(&mut whole)),
        share: if time > 0.0 { weighted / time } else { 0.0 },
        host_ns_per_launch: Job::from_trace(job).host_ns_per_launch(),
    })
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The union of spans (which may overlap one another), as sorted disjoint
/// spans with their running total, for how much of any span it covers.
struct Union {
    spans: Vec<(i64, i64)>,
    /// Covered time before each span.
    before: Vec<i64>,
}

impl Union {
    /// From spans sorted by start.
    fn new(sorted: &[(i64, i64)]) -> Union {
        let mut spans: Vec<(i64, i64)> = Vec::new();
        for &(s, e) in sorted {
            match spans.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => spans.push((s, e.max(s))),
            }
        }
        let mut before = Vec::with_capacity(spans.len());
        let mut sum = 0;
        for &(s, e) in &spans {
            before.push(sum);
            sum += e - s;
        }
        Union { spans, before }
    }

    /// Covered time up to `x`.
    fn upto(&self, x: i64) -> i64 {
        let i = self.spans.partition_point(|&(s, _)| s <= x);
        if i == 0 {
            return 0;
        }
        let (s, e) = self.spans[i - 1];
        self.before[i - 1] + (x.min(e) - s)
    }

    /// Covered time within `[s, e]`.
    fn covered(&self, s: i64, e: i64) -> i64 {
        self.upto(e) - self.upto(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fikit_trace::fixture;

    /// A trace of kernels `(start, end)` on a device of 10 SMs, each kernel
    /// `grid` blocks of 1,024 threads (two fit on an SM).
    fn trace(spans: &[(i64, i64)], grid: u32) -> Trace {
        fixture::kernel_spans("job", 10, spans, grid)
    }

    #[test]
    fn union_counts_overlapping_spans_once() {
        let u = Union::new(&[(0, 10), (5, 20), (30, 40)]);
        assert_eq!(u.covered(0, 40), 30);
        assert_eq!(u.covered(15, 35), 10);
        assert_eq!(u.covered(20, 30), 0);
        assert_eq!(u.covered(-5, 2), 2);
    }

    /// The victim runs 100 ns alone, ten times before the job; then the job
    /// keeps one kernel of 4 blocks (a fifth of the 20 slots) running from
    /// 2,000 to 10,000 ns, and the victim's runs beside it take 150 ns
    /// (wholly overlapped: `s` = 1.5) and, where the job's kernels cover
    /// half a run, 125 ns.
    fn pass(beside: i64) -> (Trace, Trace) {
        let job: Vec<(i64, i64)> = (0..80)
            .map(|i| (2_000 + i * 100, 2_100 + i * 100))
            .collect();
        let mut victim: Vec<(i64, i64)> = (0..10).map(|i| (i * 150, i * 150 + 100)).collect();
        victim.extend((0..20).map(|i| (4_000 + i * 200, 4_000 + i * 200 + beside)));
        (trace(&job, 4), trace(&victim, 1))
    }

    #[test]
    fn a_wholly_overlapped_victim_gives_its_stretch_and_the_weight_follows() {
        let (job, victim) = pass(150);
        let f = fit(&job, &victim).unwrap();
        assert_eq!(f.victim_alone_ns, 100.0);
        assert_eq!((f.runs_alone, f.runs_steady, f.runs_whole), (10, 20, 20));
        assert!((f.slowdown.unwrap() - 1.5).abs() < 1e-9, "{f:?}");
        assert_eq!(f.whole_median, Some(1.5));
        assert!((f.share - 0.2).abs() < 1e-12);
        assert!((f.overlapped - 1.0).abs() < 1e-12);
        assert_eq!(
            f.host_ns_per_launch,
            Job::from_trace(&job).host_ns_per_launch(),
            "the job's own host figure, from its trace in the pass"
        );
        assert!(f.host_ns_per_launch.is_some());
        // s - 1 = 0.5 = c w x weight, w = 0.2: with c = 2.5 the model's
        // full pressure (weight 1); with c = 5 half of it; with c = 1 past
        // it (2.5, clamped to 1).
        assert!((f.weight(2.5) - 1.0).abs() < 1e-9);
        assert!((f.weight(5.0) - 0.5).abs() < 1e-9);
        assert_eq!(f.weight(1.0), 1.0);
    }

    #[test]
    fn a_victim_that_never_slows_gives_weight_zero() {
        let (job, victim) = pass(100);
        let f = fit(&job, &victim).unwrap();
        assert_eq!(f.slowdown, Some(1.0));
        assert_eq!(f.weight(2.67), 0.0);
    }

    #[test]
    fn a_victim_waiting_for_room_is_past_any_slowdown_and_weighs_one() {
        // Wholly overlapped runs of 300 ns: d - alone = 200 = t (1 - 1/s)
        // with t = 300, so 1 - 1/s = 2/3 and s = 3.
        let (job, victim) = pass(300);
        assert!((fit(&job, &victim).unwrap().slowdown.unwrap() - 3.0).abs() < 1e-9);
        // The job's kernels cover half of the time (100 ns of every 200)
        // and the victim's runs take 400 ns: t = 200 and d - alone = 300,
        // more than t, past any slowdown (it waited for room).
        let half: Vec<(i64, i64)> = (0..40)
            .map(|i| (2_000 + i * 200, 2_100 + i * 200))
            .collect();
        let mut runs: Vec<(i64, i64)> = (0..10).map(|i| (i * 150, i * 150 + 100)).collect();
        runs.extend((0..12).map(|i| (4_000 + i * 400, 4_400 + i * 400)));
        let f = fit(&trace(&half, 4), &trace(&runs, 1)).unwrap();
        assert_eq!(f.slowdown, None, "{f:?}");
        assert!((f.overlapped - 0.5).abs() < 1e-12);
        assert_eq!(f.weight(2.67), 1.0);
    }

    #[test]
    fn a_victim_of_two_shapes_sets_each_against_its_own_runs_alone() {
        // The pass above, with every second victim kernel of another shape
        // (grid 2): alone 300 ns, wholly overlapped 450 ns (also 1.5x). Set
        // against one median alone for both, the stretch would not come out.
        let job: Vec<(i64, i64)> = (0..80)
            .map(|i| (2_000 + i * 100, 2_100 + i * 100))
            .collect();
        let mut a = trace(
            &(0..10)
                .map(|i| (i * 150, i * 150 + 100))
                .collect::<Vec<_>>(),
            1,
        );
        let b = trace(
            &(0..10)
                .map(|i| (i * 150 + 100, i * 150 + 400))
                .collect::<Vec<_>>(),
            2,
        );
        let beside_a = trace(
            &(0..10)
                .map(|i| (3_700 + i * 620, 3_850 + i * 620))
                .collect::<Vec<_>>(),
            1,
        );
        let beside_b = trace(
            &(0..10)
                .map(|i| (3_860 + i * 620, 4_310 + i * 620))
                .collect::<Vec<_>>(),
            2,
        );
        a.kernels.extend(b.kernels);
        a.kernels.extend(beside_a.kernels);
        a.kernels.extend(beside_b.kernels);
        let f = fit(&trace(&job, 4), &a).unwrap();
        assert_eq!((f.victim_shapes, f.runs_alone, f.runs_steady), (2, 20, 20));
        assert!((f.slowdown.unwrap() - 1.5).abs() < 1e-9, "{f:?}");
        assert_eq!(f.whole_median, Some(1.5));
        // The median over both shapes' 20 runs alone: (100 + 300) / 2.
        assert_eq!(f.victim_alone_ns, 200.0);
        // A shape with fewer than 10 runs alone is left out, its runs beside
        // the job with it: 3 runs alone of grid 2 only, 10 of grid 1.
        a.kernels
            .retain(|k| k.grid[0] == 1 || k.start_ns >= 3_700 || k.start_ns < 450);
        let f = fit(&trace(&job, 4), &a).unwrap();
        assert_eq!((f.victim_shapes, f.runs_alone, f.runs_steady), (1, 10, 10));
        assert!((f.slowdown.unwrap() - 1.5).abs() < 1e-9, "{f:?}");
    }

    #[test]
    fn too_few_runs_alone_or_beside_are_errors() {
        let (job, victim) = pass(150);
        let mut few = victim.clone();
        few.kernels.drain(0..2);
        assert_eq!(fit(&job, &few), Err(PressureError::FewAlone(8)));
        let mut none = victim.clone();
        none.kernels.truncate(15);
        assert_eq!(fit(&job, &none), Err(PressureError::FewSteady(5)));
        assert_eq!(
            fit(&trace(&[], 1), &victim),
            Err(PressureError::NoKernels("the job trace"))
        );
    }
}
