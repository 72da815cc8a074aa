//! Sweeps: many job combinations simulated in parallel.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use serde::Serialize;

use crate::policy::PolicyKind;
use crate::sim::engine::{RunError, RunResult};
use crate::sim::gpu::GpuModel;
use crate::sim::job::Job;
use crate::sim::simulate::{SimOptions, run_policy, simulate_with_isolated};

/// One high/low pair under one policy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairRow {
    /// The high-priority job (priority 0).
    pub high: String,
    /// The low-priority job (priority 9).
    pub low: String,
    /// Policy.
    pub policy: PolicyKind,
    /// High-priority JCT under timeslice / under the policy.
    pub high_vs_timeslice: f64,
    /// Low-priority JCT under timeslice / under the policy.
    pub low_vs_timeslice: f64,
    /// High-priority JCT / isolated.
    pub high_slowdown: f64,
    /// Low-priority JCT / isolated.
    pub low_slowdown: f64,
    /// High-priority p99 iteration latency, ns.
    pub high_p99_ns: i64,
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
            let mut high = jobs[h].clone();
            let mut low = jobs[l].clone();
            high.priority = 0;
            low.priority = 9;
            let alone = |i: usize| isolated[i].clone().expect("every job of a pair ran alone");
            let iso = [alone(h), alone(l)];
            let report = simulate_with_isolated(&[high, low], &[0, 0], &sim, &iso)?;
            bar.inc(1);
            Ok(opts
                .policies
                .iter()
                .map(|&p| {
                    let row = |i: usize| {
                        report
                            .jobs
                            .iter()
                            .filter(|r| r.policy == p)
                            .nth(i)
                            .expect("one row per job and policy")
                    };
                    let (hr, lr) = (row(0), row(1));
                    PairRow {
                        high: jobs[h].name.clone(),
                        low: jobs[l].name.clone(),
                        policy: p,
                        high_vs_timeslice: hr.vs_timeslice,
                        low_vs_timeslice: lr.vs_timeslice,
                        high_slowdown: hr.slowdown,
                        low_slowdown: lr.slowdown,
                        high_p99_ns: hr.p99_ns,
                    }
                })
                .collect())
        })
        .collect();
    bar.finish_and_clear();
    Ok(results?.into_iter().flatten().collect())
}
