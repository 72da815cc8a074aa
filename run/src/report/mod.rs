//! From rounds to the per-job table: medians over repetitions with their
//! range, the co-run check, and fikit-sim's prediction for the same profiles
//! started when the real jobs started.
//!
//! By stage: [`predict()`] (what the simulation says of a round),
//! [`rows()`] (the rounds and their predictions as one row per policy and
//! job) and [`table()`] (the rows as text); here, the rows' types and the
//! figures they are made of.

use serde::{Deserialize, Serialize};

use fikit_trace::gaps::nearest_rank;

use crate::exec::JobRun;
use crate::scenario::RunPolicy;

mod predict;
mod rows;
mod table;
#[cfg(test)]
mod tests;

pub use predict::{Predicted, predict, with_range};
pub use rows::rows;
pub use table::table;

/// A median with the range it came from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Median (the mean of the two middle values for an even count).
    pub median: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
}

impl Spread {
    /// Of `v`; `None` when empty.
    pub fn of(v: &[f64]) -> Option<Spread> {
        let mut v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Some(Spread {
            median,
            min: v[0],
            max: v[n - 1],
        })
    }
}

/// One job under one policy, over the repetitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Policy.
    pub policy: RunPolicy,
    /// Job.
    pub job: String,
    /// Priority.
    pub priority: u8,
    /// Repetitions in which the job exited with 0.
    pub ok_runs: usize,
    /// Repetitions.
    pub runs: usize,
    /// First kernel launch to last launch or synchronization, ms.
    pub region_ms: Option<Spread>,
    /// fikit-sim's region for the same rounds, ms (median over the
    /// repetitions); in an exclusive row, the profile's own region alone,
    /// which [`Row::profile_vs_alone`] sets against the real runs alone.
    #[serde(default)]
    pub sim_region_ms: Option<f64>,
    /// Region against the same repetition's exclusive region.
    pub slowdown: Option<Spread>,
    /// [`Row::slowdown`]'s figures, one per counted repetition (what
    /// `--combine --pool` sets together over machines; empty in summaries
    /// from before 2026-11-26 and in exclusive rows).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slowdowns: Vec<f64>,
    /// The same repetition's time-slicing region against this one.
    pub vs_timeslice: Option<Spread>,
    /// The same, simulated: the repetition's simulated time-slicing
    /// slowdown against this policy's (run.json files before 2026-11-25
    /// lack it).
    #[serde(default)]
    pub sim_vs_timeslice: Option<Spread>,
    /// Median iteration, ms (median over repetitions).
    pub p50_ms: Option<f64>,
    /// 99th-percentile iteration, ms (median over repetitions).
    pub p99_ms: Option<f64>,
    /// 99.9th-percentile iteration, ms (median over repetitions; the
    /// slowest with fewer than 1,000 iterations; run.json files before
    /// 2026-11-28 lack it).
    #[serde(default)]
    pub p999_ms: Option<f64>,
    /// fikit-sim's median iteration for the same round, ms (median over
    /// the counted repetitions).
    #[serde(default)]
    pub sim_p50_ms: Option<f64>,
    /// fikit-sim's 99th-percentile iteration, ms.
    #[serde(default)]
    pub sim_p99_ms: Option<f64>,
    /// fikit-sim's 99.9th-percentile iteration, ms.
    #[serde(default)]
    pub sim_p999_ms: Option<f64>,
    /// fikit-sim's range for the slowdown (its `x [lo-hi]`) over the
    /// counted repetitions' predictions: the least low end and the greatest
    /// high end; `None` in exclusive rows, without untraced runs, and in
    /// run.json files before 2026-11-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim_slowdown_range: Option<[f64; 2]>,
    /// fikit-sim's range for the 99th-percentile iteration, ms, over the
    /// finished repetitions' predictions, likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim_p99_range_ms: Option<[f64; 2]>,
    /// The least share of the region that other jobs' regions overlapped, over repetitions.
    pub overlap: Option<f64>,
    /// Repetitions counted in the slowdown, vs timeslice and error columns:
    /// those whose rounds were co-runs (see [`co_run`]); `None` for
    /// exclusive rows of one job.
    pub co_runs: Option<usize>,
    /// Per counted repetition, the job's mean iteration under the policy
    /// over its mean iteration in the same repetition's exclusive round:
    /// the slowdown of its iterations, the set-up before them (model load,
    /// warm-up, which the profile's tracing makes longer) left out.
    #[serde(default)]
    pub per_iteration: Option<Spread>,
    /// The same, simulated.
    #[serde(default)]
    pub sim_per_iteration: Option<Spread>,
    /// `(sim − real) / real` of the per-iteration medians.
    #[serde(default)]
    pub per_iteration_error: Option<f64>,
    /// The simulated per-iteration median lies inside the real range.
    #[serde(default)]
    pub per_iteration_within: Option<bool>,
    /// fikit-sim's slowdown for the same profiles, lined up at their first kernel launch.
    pub sim_slowdown: Option<Spread>,
    /// [`Row::sim_slowdown`]'s figures, one per counted repetition that was
    /// predicted (empty as [`Row::slowdowns`] is).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sim_slowdowns: Vec<f64>,
    /// `(sim − real) / real` of the median slowdowns.
    pub error: Option<f64>,
    /// The simulated median lies inside the real range.
    pub within_spread: Option<bool>,
    /// The real median slowdown lies inside fikit-sim's range
    /// ([`Row::sim_slowdown_range`]); `None` without both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_sim_range: Option<bool>,
    /// For the latency-critical job, the share of its idle GPU time other
    /// jobs' kernels used, from traced rounds (`--trace`; the median over
    /// them); `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill_share: Option<f64>,
    /// The same, simulated (the policy's own limit: the median over the
    /// counted repetitions' predictions); `None` alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim_fill_share: Option<f64>,
    /// The launch calls the simulator's gate held, to set beside the live
    /// gate's ([`Row::gate`]'s `waits` and `wait_ms`): medians over the
    /// counted repetitions' predictions; `None` where none was held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim_held_waits: Option<f64>,
    /// Their time held, ms; see [`Row::sim_held_waits`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim_held_wait_ms: Option<f64>,
    /// The kernels the simulator's FIKIT started into another job's gap,
    /// to set beside the live gate's `fills` ([`Row::gate`]): the median
    /// over the counted repetitions' predictions; `None` under a policy
    /// that does not fill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim_fills: Option<f64>,
    /// A serving job's share of its requests' span spent serving one (the
    /// median over its runs, as its output gave it); `None` for others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_share: Option<f64>,
    /// The real 99th-percentile iteration lies inside fikit-sim's range
    /// ([`Row::sim_p99_range_ms`]); `None` without both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_in_sim_range: Option<bool>,
    /// Launches that waited at the gate; time waited, ms; fills; timeouts;
    /// launches of unknown kernels (medians).
    pub gate: GateStats,
    /// Mean host time of a launch call, µs, over repetitions: the host's
    /// speed in each round (a launch-bound job's changes between processes
    /// by up to 1.4x; set a job's slowdown beside its change here).
    #[serde(default)]
    pub launch_us: Option<Spread>,
    /// Per counted repetition, its mean launch call time over the same
    /// repetition's exclusive one: above 1, the host ran slower in the
    /// shared round than alone, and the slowdown holds that too.
    #[serde(default)]
    pub host_vs_alone: Option<Spread>,
}

/// How far a profile's region alone may lie from the real runs' median
/// before [`Row::profile_vs_alone`] calls it off, outside their range: 5%,
/// the profiler's overhead budget, so a kernel-bound job's runs alone,
/// which agree to about 1%, do not flag the tracing's own cost.
pub const PROFILE_TOLERANCE: f64 = 0.05;

impl Row {
    /// In an exclusive row: the profile's region alone over the median of
    /// the job's real regions alone, and whether it is off: outside their
    /// range and more than [`PROFILE_TOLERANCE`] from their median. A
    /// profile taken while the host ran slower or faster than in the runs
    /// (a launch-bound job's host speed moves by up to 1.4x between
    /// processes) moves every prediction made from it; `None` in other rows
    /// or without both figures.
    pub fn profile_vs_alone(&self) -> Option<(f64, bool)> {
        if self.policy != RunPolicy::Exclusive {
            return None;
        }
        let (sim, real) = (self.sim_region_ms?, self.region_ms?);
        (real.median > 0.0).then(|| {
            let r = sim / real.median;
            let outside = sim < real.min || sim > real.max;
            (r, outside && (r - 1.0).abs() > PROFILE_TOLERANCE)
        })
    }
}

/// Gate counters, medians over repetitions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct GateStats {
    /// Kernel launches.
    pub launches: f64,
    /// Launches that waited.
    pub waits: f64,
    /// Time waited, ms.
    pub wait_ms: f64,
    /// Fills.
    pub fills: f64,
    /// Timeouts.
    pub timeouts: f64,
    /// Unknown kernels.
    pub unknown: f64,
}

fn ms(ns: i64) -> f64 {
    ns as f64 / 1e6
}

/// The share of job `j`'s region that the union of the others' regions covers.
pub fn overlap(jobs: &[JobRun], j: usize) -> Option<f64> {
    let (a, b) = (jobs[j].first_launch_ns?, jobs[j].end_ns?);
    if b <= a {
        return None;
    }
    let mut others: Vec<(i64, i64)> = jobs
        .iter()
        .enumerate()
        .filter(|&(k, _)| k != j)
        .filter_map(|(_, o)| Some((o.first_launch_ns?.max(a), o.end_ns?.min(b))))
        .filter(|(s, e)| e > s)
        .collect();
    others.sort_unstable();
    let (mut covered, mut reach) = (0i64, a);
    for (s, e) in others {
        let s = s.max(reach);
        if e > s {
            covered += e - s;
            reach = e;
        }
    }
    Some(covered as f64 / (b - a) as f64)
}

/// How much one round was a co-run: the share of the shortest job's region
/// (first kernel launch to end) that the others' regions overlapped. Jobs
/// started together but still loading their models run one after the
/// other, and such a round measures nothing about sharing; `None` for a
/// round with fewer than two regions.
pub fn co_run(jobs: &[JobRun]) -> Option<f64> {
    let with: Vec<usize> = (0..jobs.len())
        .filter(|&j| jobs[j].region_ns().is_some_and(|r| r > 0))
        .collect();
    if with.len() < 2 {
        return None;
    }
    let shortest = *with.iter().min_by_key(|&&j| (jobs[j].region_ns(), j))?;
    overlap(jobs, shortest)
}

/// The mean of `a` over the mean of `b`; `None` when either is empty.
pub fn mean_ratio(a: &[i64], b: &[i64]) -> Option<f64> {
    let mean = |v: &[i64]| (!v.is_empty()).then(|| v.iter().sum::<i64>() as f64 / v.len() as f64);
    let (x, y) = (mean(a)?, mean(b)?);
    (y > 0.0).then(|| x / y)
}

/// Over `runs`, the median of each run's `q`-quantile iteration (nearest
/// rank), ms; `None` without iterations.
pub fn iteration_quantile_ms<'a>(
    runs: impl IntoIterator<Item = &'a JobRun>,
    q: f64,
) -> Option<f64> {
    let v: Vec<f64> = runs
        .into_iter()
        .filter_map(|x| {
            let mut it = x.iterations_ns.clone();
            it.sort_unstable();
            nearest_rank(&it, q).map(ms)
        })
        .collect();
    Spread::of(&v).map(|s| s.median)
}

/// A prediction against the real spread: `(sim − real) / real` of the
/// medians, and whether the simulated median lies inside the real range.
pub(crate) fn against(sim: Option<Spread>, real: Option<Spread>) -> (Option<f64>, Option<bool>) {
    match (sim, real) {
        (Some(s), Some(r)) => (
            Some((s.median - r.median) / r.median),
            Some(s.median >= r.min && s.median <= r.max),
        ),
        _ => (None, None),
    }
}
