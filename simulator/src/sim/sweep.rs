//! Sweeps: many job combinations simulated in parallel.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::policy::PolicyKind;
use crate::sim::engine::{RunError, RunResult};
use crate::sim::gpu::GpuModel;
use crate::sim::job::Job;
use crate::sim::simulate::{SimOptions, run_policy, simulate_with_isolated, slowdown_range};

/// One high-priority job beside others under one policy (in a pair, the
/// other is the one low-priority job).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairRow {
    /// The high-priority job (priority 0).
    pub high: String,
    /// The low-priority job (priority 9); several are joined by ` + `.
    pub low: String,
    /// Policy.
    pub policy: PolicyKind,
    /// High-priority region under timeslice / under the policy.
    pub high_vs_timeslice: f64,
    /// Low-priority region under timeslice / under the policy (the lowest of several).
    pub low_vs_timeslice: f64,
    /// High-priority region / region alone (the slowdown of [`crate::sim::simulate::JobRow`]).
    pub high_slowdown: f64,
    /// Low-priority region / region alone (the highest of several).
    pub low_slowdown: f64,
    /// High-priority p99 iteration latency, ns.
    pub high_p99_ns: i64,
    /// The least and the greatest high-priority slowdown over the hosts'
    /// untraced range ([`with_host_range`]); `None` without one (and in a
    /// fleet's rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high_slowdown_range: Option<[f64; 2]>,
}

/// Sets each row's range from the same pairs with every host at the
/// fastest (`low`) and the slowest (`high`) of its untraced runs: the
/// high-priority slowdown's, as [`slowdown_range`] pairs them, with
/// `alone(job)` the high-priority job's region alone at the point, the
/// fastest and the slowest host, ns ([`PairSweep::alone_region_ns`]); a row whose job
/// it does not give keeps no range. The rows must be of the same pairs and
/// policies, in the same order.
pub fn with_host_range(
    rows: &mut [PairRow],
    low: &[PairRow],
    high: &[PairRow],
    alone: impl Fn(&str) -> Option<[i64; 3]>,
) {
    // A row's region shared, from its slowdown over the region alone.
    let shared = |s: f64, a: i64| ((s * a as f64).round() as i64, a);
    for ((r, l), h) in rows.iter_mut().zip(low).zip(high) {
        debug_assert!(r.high == l.high && r.low == h.low && r.policy == l.policy);
        let Some([a, al, ah]) = alone(&r.high) else {
            continue;
        };
        r.high_slowdown_range = Some(slowdown_range(
            shared(r.high_slowdown, a),
            shared(l.high_slowdown, al),
            shared(h.high_slowdown, ah),
        ));
    }
}

/// One group of jobs on one GPU: `group[0]` at priority 0, the others at 9,
/// `isolated[i]` the run of `group[i]` alone; one row per policy of `sim`,
/// in its order.
pub fn group_rows(
    group: &[&Job],
    isolated: &[RunResult],
    sim: &SimOptions,
) -> Result<Vec<PairRow>, RunError> {
    let jobs: Vec<Job> = group
        .iter()
        .enumerate()
        .map(|(pos, &j)| {
            let mut job = j.clone();
            job.priority = if pos == 0 { 0 } else { 9 };
            job
        })
        .collect();
    // Together: first kernel launches lined up, as fikit-run lines them up.
    let arrivals = crate::sim::simulate::line_up(&jobs, &vec![0; jobs.len()]);
    let report = simulate_with_isolated(&jobs, &arrivals, sim, isolated)?;
    let low = jobs[1..]
        .iter()
        .map(|j| j.name.as_str())
        .collect::<Vec<_>>()
        .join(" + ");
    Ok(sim
        .policies
        .iter()
        .map(|&p| {
            let of = |pos: usize| {
                report
                    .jobs
                    .iter()
                    .filter(|row| row.policy == p)
                    .nth(pos)
                    .expect("one row per job and policy")
            };
            let others = 1..jobs.len();
            PairRow {
                high: jobs[0].name.clone(),
                low: low.clone(),
                policy: p,
                high_vs_timeslice: of(0).vs_timeslice,
                low_vs_timeslice: others
                    .clone()
                    .map(|o| of(o).vs_timeslice)
                    .reduce(f64::min)
                    .expect("a group has another job"),
                high_slowdown: of(0).slowdown,
                low_slowdown: others
                    .map(|o| of(o).slowdown)
                    .reduce(f64::max)
                    .expect("a group has another job"),
                high_p99_ns: of(0).p99_ns,
                high_slowdown_range: None,
            }
        })
        .collect())
}

/// Options of a pair sweep.
#[derive(Debug, Clone)]
pub struct SweepOptions {
    /// Policies.
    pub policies: Vec<PolicyKind>,
    /// GPU model.
    pub model: GpuModel,
    /// Show a progress bar (on a terminal).
    pub progress: bool,
}

/// Every ordered pair of distinct jobs, the first as high priority (0) and the
/// second as low (9), simulated in parallel; rows in pair order, then policy order.
pub fn pairs(jobs: &[Job], opts: &SweepOptions) -> Result<Vec<PairRow>, RunError> {
    let pairs: Vec<(usize, usize)> = (0..jobs.len())
        .flat_map(|h| {
            (0..jobs.len())
                .filter(move |&l| l != h)
                .map(move |l| (h, l))
        })
        .collect();
    pairs_of(jobs, &pairs, opts)
}

/// The pairs a user asks about first: each latency-critical job (the best
/// priority among `jobs`) beside each throughput job (any worse priority), in
/// job order. Empty when all jobs share one priority.
pub fn high_low_pairs(jobs: &[Job]) -> Vec<(usize, usize)> {
    let Some(best) = jobs.iter().map(|j| j.priority).min() else {
        return Vec::new();
    };
    let (high, low): (Vec<usize>, Vec<usize>) =
        (0..jobs.len()).partition(|&i| jobs[i].priority == best);
    high.iter()
        .flat_map(|&h| low.iter().map(move |&l| (h, l)))
        .collect()
}

/// The given `(high, low)` pairs of `jobs`, the first of each as high
/// priority (0) and the second as low (9), simulated in parallel; rows in
/// pair order, then policy order.
pub fn pairs_of(
    jobs: &[Job],
    pairs: &[(usize, usize)],
    opts: &SweepOptions,
) -> Result<Vec<PairRow>, RunError> {
    Ok(sweep_pairs(jobs, pairs, opts)?.rows)
}

/// The rows of a pair sweep and the runs alone they were measured against.
#[derive(Debug, Clone)]
pub struct PairSweep {
    /// As [`pairs_of`] gives them.
    pub rows: Vec<PairRow>,
    /// Each job's region alone, from its first kernel, ns (as
    /// [`crate::sim::simulate::JobRow::isolated_region_ns`]); `None` for a
    /// job in none of the pairs.
    pub alone_region_ns: Vec<Option<i64>>,
}

/// [`pairs_of`], keeping each job's region alone.
pub fn sweep_pairs(
    jobs: &[Job],
    pairs: &[(usize, usize)],
    opts: &SweepOptions,
) -> Result<PairSweep, RunError> {
    let bar = if opts.progress {
        let b = ProgressBar::new(pairs.len() as u64);
        b.set_draw_target(ProgressDrawTarget::stderr());
        b.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} pairs {elapsed_precise} ETA {eta}")
                .expect("a valid template"),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    let sim = SimOptions {
        policies: opts.policies.clone(),
        model: opts.model.clone(),
        record_segments: false,
    };
    // Each job alone once (priorities do not matter alone), shared by its pairs.
    let mut used = vec![false; jobs.len()];
    for &(h, l) in pairs {
        used[h] = true;
        used[l] = true;
    }
    let isolated: Vec<Option<RunResult>> = jobs
        .par_iter()
        .zip(&used)
        .map(|(j, &used)| {
            if !used {
                return Ok(None);
            }
            run_policy(
                std::slice::from_ref(j),
                &[0],
                PolicyKind::Exclusive,
                &opts.model,
                false,
            )
            .map(Some)
        })
        .collect::<Result<_, RunError>>()?;
    let results: Result<Vec<Vec<PairRow>>, RunError> = pairs
        .par_iter()
        .map(|&(h, l)| {
            let alone = |i: usize| isolated[i].clone().expect("every job of a pair ran alone");
            let rows = group_rows(&[&jobs[h], &jobs[l]], &[alone(h), alone(l)], &sim)?;
            bar.inc(1);
            Ok(rows)
        })
        .collect();
    bar.finish_and_clear();
    let alone_region_ns = isolated
        .iter()
        .zip(jobs)
        .map(|(r, j)| {
            r.as_ref()
                .map(|r| r.jobs[0].jct_ns() - crate::sim::host::first_kernel_ns(j))
        })
        .collect();
    Ok(PairSweep {
        rows: results?.into_iter().flatten().collect(),
        alone_region_ns,
    })
}
