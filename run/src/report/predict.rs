//! What fikit-sim says of a round: the profiles as jobs, lined up as
//! fikit-run lines the real jobs up, simulated under the round's policy.

use fikit_sim_core::policy::PolicyKind;
use fikit_sim_core::sim::gpu::GpuModel;
use fikit_sim_core::sim::host::{Corners, GATED_SETUP_ITERATIONS, first_kernel_ns};
use fikit_sim_core::sim::job::{HostStep, Job};
use fikit_sim_core::sim::simulate::{
    LaunchesHeld, SimOptions, line_up, percentiles, run_isolated, simulate_with_isolated,
    slowdown_range,
};

use super::{mean_ratio, ms};

/// What the simulation says of one job in one round.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Predicted {
    /// Its slowdown: region under the policy over region alone.
    pub slowdown: f64,
    /// Its median and 99th-percentile iteration under the policy, ms (the
    /// simulator's iterations, counted as the gate counts the real ones).
    pub p50_ms: f64,
    /// See `p50_ms`.
    pub p99_ms: f64,
    /// Its 99.9th-percentile iteration, ms (the slowest with fewer than
    /// 1,000 iterations).
    pub p999_ms: f64,
    /// Its mean iteration under the policy over its mean iteration alone,
    /// both counted so.
    pub per_iteration: f64,
    /// Its region under the policy (alone under exclusive: the profile's
    /// own), from its first kernel, ms.
    pub region_ms: f64,
    /// Its region alone, from its first kernel, ms: what `slowdown`
    /// divides `region_ms` by.
    pub alone_region_ms: f64,
    /// The slowdown's range, fikit-sim's: from the point and the same
    /// simulation with every host at the fastest and at the slowest of its
    /// untraced runs, a shared run at one end over the run alone at the
    /// other ([`with_range`]); `None` alone (exclusive) and where no job
    /// has untraced runs.
    pub slowdown_range: Option<[f64; 2]>,
    /// The 99th-percentile iteration's range, ms: the least and the
    /// greatest of the three.
    pub p99_range_ms: Option<[f64; 2]>,
    /// The round's fill: the share of the latency-critical job's idle GPU
    /// time other jobs' kernels used (the policy's own limit); `None`
    /// alone.
    pub fill_share: Option<f64>,
    /// The launch calls the simulator's gate held (FIKIT's, as the live
    /// gate holds them: its `waits` and `wait_ms`); `None` where none was.
    pub launches_held: Option<LaunchesHeld>,
    /// The kernels the simulator's FIKIT started into another job's gap
    /// (the live gate's `fills`); `None` under a policy that does not fill.
    pub fills: Option<u64>,
}

/// [`predict`] with each job's range, as fikit-sim gives it: the point from
/// `jobs` (each host at its untraced speed), the ends from `corners` (every
/// host at the fastest, then the slowest, of its untraced runs); the
/// slowdown's range pairs a shared run at one end with the run alone at
/// the other ([`slowdown_range`]), the p99's is the least and the greatest
/// of the three. Without
/// corners, the point alone.
pub fn with_range(
    jobs: &[Job],
    corners: Option<&Corners>,
    first_launch_at: &[i64],
    policy: PolicyKind,
    model: &GpuModel,
) -> Option<Vec<Predicted>> {
    let mut point = predict(jobs, first_launch_at, policy, model)?;
    let Some(c) = corners else {
        return Some(point);
    };
    let low = predict(&c.low, first_launch_at, policy, model)?;
    let high = predict(&c.high, first_launch_at, policy, model)?;
    let span = |v: [f64; 3]| {
        [
            v.iter().copied().fold(f64::INFINITY, f64::min),
            v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        ]
    };
    // A prediction's regions shared and alone, ns.
    let regions = |x: &Predicted| {
        let ns = |v: f64| (v * 1e6).round() as i64;
        (ns(x.region_ms), ns(x.alone_region_ms))
    };
    for ((p, l), h) in point.iter_mut().zip(&low).zip(&high) {
        p.slowdown_range = (policy != PolicyKind::Exclusive)
            .then(|| slowdown_range(regions(p), regions(l), regions(h)));
        p.p99_range_ms = Some(span([p.p99_ms, l.p99_ms, h.p99_ms]));
    }
    Some(point)
}

/// What the simulation says of every job of one round: the profiles as
/// jobs, their first kernel launches `first_launch_at` apart (ns; 0 for
/// jobs started together, as fikit-run's start barrier lines them up),
/// regions measured from each job's first kernel as the real ones. Nothing
/// of the round's own measurements enters it. Under exclusive each job
/// alone (its iterations are the profile's own; its slowdown 1).
pub fn predict(
    jobs: &[Job],
    first_launch_at: &[i64],
    policy: PolicyKind,
    model: &GpuModel,
) -> Option<Vec<Predicted>> {
    let pre: Vec<i64> = jobs.iter().map(first_kernel_ns).collect();
    let alone = run_isolated(jobs, model).ok()?;
    let alone_its: Vec<&[i64]> = alone
        .iter()
        .zip(jobs)
        .map(|(r, j)| {
            let raw = &r.jobs[0].iterations_ns;
            // A server's iterations are its requests, each counted.
            if serves(j) { raw } else { as_gated(raw) }
        })
        .collect();
    if policy == PolicyKind::Exclusive {
        return Some(
            alone_its
                .iter()
                .zip(alone.iter().zip(&pre))
                .map(|(its, (a, p))| {
                    let (p50, p99, p999) = percentiles(its);
                    let region_ms = ms(a.jobs[0].jct_ns() - p);
                    Predicted {
                        slowdown: 1.0,
                        p50_ms: ms(p50),
                        p99_ms: ms(p99),
                        p999_ms: ms(p999),
                        per_iteration: 1.0,
                        region_ms,
                        alone_region_ms: region_ms,
                        slowdown_range: None,
                        p99_range_ms: None,
                        fill_share: None,
                        launches_held: None,
                        fills: None,
                    }
                })
                .collect(),
        );
    }
    // Each job arrives so that its first kernel comes at its offset.
    let arrivals = line_up(jobs, first_launch_at);
    let report = simulate_with_isolated(
        jobs,
        &arrivals,
        &SimOptions {
            policies: vec![policy],
            model: model.clone(),
            record_segments: false,
        },
        &alone,
    )
    .ok()?;
    let fill_share = report.policies.first().and_then(|p| p.fill_share);
    Some(
        report
            .jobs
            .iter()
            .zip(jobs)
            .zip(&alone_its)
            .map(|((r, j), alone)| {
                // The report's iterations are the simulator's measured ones
                // (its set-up left out): counted as the gate counts, or a
                // server's requests, every one.
                let its = if serves(j) {
                    &r.iterations_ns[..]
                } else {
                    as_gated_measured(j, &r.iterations_ns)
                };
                let (p50, p99, p999) = percentiles(its);
                Predicted {
                    // fikit-sim's one measure: region over region alone.
                    slowdown: r.slowdown,
                    p50_ms: ms(p50),
                    p99_ms: ms(p99),
                    p999_ms: ms(p999),
                    per_iteration: mean_ratio(its, alone).unwrap_or(f64::NAN),
                    region_ms: ms(r.region_ns),
                    alone_region_ms: ms(r.isolated_region_ns),
                    slowdown_range: None,
                    p99_range_ms: None,
                    fill_share,
                    launches_held: r.launches_held,
                    fills: r.fills,
                }
            })
            .collect(),
    )
}

/// Whether `job` serves requests ([`Job::serving`]): its iterations are
/// their latencies, arrival to completion.
fn serves(job: &Job) -> bool {
    job.steps
        .iter()
        .any(|s| matches!(s, HostStep::Arrive { .. }))
}

/// The gate leaves out a job's spans up to its second stamped
/// synchronization after its first kernel launch ([`fikit_gate::block::iterations`]):
/// of the simulator's iterations (the first ends at the first blocking wait
/// after a kernel), the first two. `raw` are a job's simulated iterations
/// from its start.
pub(super) fn as_gated(raw: &[i64]) -> &[i64] {
    let n = GATED_SETUP_ITERATIONS;
    if raw.len() > n { &raw[n..] } else { raw }
}

/// [`as_gated`] of iterations the simulator already measured (its
/// [`Job::setup_iterations`] left out, at most two).
pub(super) fn as_gated_measured<'a>(job: &Job, measured: &'a [i64]) -> &'a [i64] {
    let more = GATED_SETUP_ITERATIONS.saturating_sub(job.setup_iterations);
    if measured.len() > more {
        &measured[more..]
    } else {
        measured
    }
}
