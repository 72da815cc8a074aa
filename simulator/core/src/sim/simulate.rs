//! Running jobs under policies and comparing them: JCT, slowdown, speedup
//! against default sharing, iteration latency percentiles, utilization.

use std::borrow::Cow;

use serde::Serialize;

use fikit_trace::gaps::nearest_rank;

use crate::policy::PolicyKind;
use crate::sim::engine::{Engine, JobOutcome, RunError, RunOptions, RunResult, Segment};
use crate::sim::gpu::GpuModel;
use crate::sim::host::first_kernel_ns;
use crate::sim::job::Job;

/// What to simulate.
#[derive(Debug, Clone)]
pub struct SimOptions {
    /// Policies to report, in order.
    pub policies: Vec<PolicyKind>,
    /// The GPU model.
    pub model: GpuModel,
    /// Keep kernel run segments (for timelines).
    pub record_segments: bool,
}

/// One job under one policy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobRow {
    /// Policy.
    pub policy: PolicyKind,
    /// Job name.
    pub job: String,
    /// Priority, 0 highest.
    pub priority: u8,
    /// JCT alone on the GPU (from the job's arrival), ns.
    pub isolated_jct_ns: i64,
    /// JCT under the policy, ns.
    pub jct_ns: i64,
    /// Its region alone: from its first kernel's launch to its end, ns
    /// (its set-up before that left out, as `fikit-run` measures a job).
    pub isolated_region_ns: i64,
    /// Its region under the policy, ns.
    pub region_ns: i64,
    /// `region / isolated_region`: the one measure of slowdown `fikit-sim`
    /// and `fikit-run` share.
    pub slowdown: f64,
    /// `region under timeslice / region under this policy`: FIKIT's
    /// headline speedup for the high-priority job, and the low-priority
    /// ratio for the others.
    pub vs_timeslice: f64,
    /// Iterations measured (spans between the host's blocking
    /// synchronizations that hold a kernel; a trace's first, its setup, left out).
    pub iterations: usize,
    /// Median iteration latency, ns (nearest rank).
    pub p50_ns: i64,
    /// 99th-percentile iteration latency, ns (nearest rank).
    pub p99_ns: i64,
    /// 99.9th-percentile iteration latency, ns (nearest rank: the slowest
    /// with fewer than 1,000 iterations).
    pub p999_ns: i64,
    /// Every iteration's latency, ns, in order (for CDF plots; not in JSON).
    #[serde(skip)]
    pub iterations_ns: Vec<i64>,
    /// The least and the greatest slowdown over the hosts' untraced range
    /// ([`with_host_range`]); `None` without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown_range: Option<[f64; 2]>,
    /// The same of the 99th-percentile iteration latency, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_range: Option<[i64; 2]>,
    /// The launch calls its gate held, under a policy that holds a job's
    /// host in them as the live gate does (FIKIT); `None` where none was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launches_held: Option<LaunchesHeld>,
    /// Under a policy that fills gaps (FIKIT): this job's kernels started
    /// into another job's idle gap, as the live gate counts its `fills`;
    /// `None` under a policy that does not fill.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fills: Option<u64>,
}

/// Launch calls a gate held: returned later than they were made, the host
/// waiting in them (the live gate's `waits` and `wait_ns`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LaunchesHeld {
    /// How many.
    pub launches: u64,
    /// Their summed time held, ns.
    pub ns: i64,
}

impl LaunchesHeld {
    /// From a run's `(launches, ns)`; `None` for none.
    pub fn of((launches, ns): (u64, i64)) -> Option<LaunchesHeld> {
        (launches > 0).then_some(LaunchesHeld { launches, ns })
    }
}

/// One policy over all jobs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PolicyRow {
    /// Policy.
    pub policy: PolicyKind,
    /// First arrival to last finish, ns (exclusive: the jobs' JCTs summed, as if run one after another).
    pub makespan_ns: i64,
    /// Time at least one kernel ran, ns.
    pub busy_ns: i64,
    /// `busy / makespan`.
    pub utilization: f64,
    /// Delay FIKIT's mispredictions caused the top job, ns (FIKIT only).
    pub misprediction_delay_ns: Option<i64>,
    /// Top-job kernels that waited for a fill (FIKIT only).
    pub mispredicted_kernels: Option<usize>,
    /// Events the engine processed.
    pub events: u64,
    /// The latency-critical job's idle GPU time (none of its kernels issued
    /// and unfinished, from its first to its last), ns; `None` for
    /// exclusive and a job alone ([`crate::sim::engine::Fill`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fill_idle_ns: Option<i64>,
    /// The share of that idle time in which other jobs' kernels ran: what
    /// FIKIT sets out to raise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fill_share: Option<f64>,
}

/// The kernel run segments of one policy's run.
#[derive(Debug, Clone)]
pub struct PolicySegments {
    /// Policy.
    pub policy: PolicyKind,
    /// Segments.
    pub segments: Vec<Segment>,
}

/// Everything a simulation produced.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// GPU model name and source.
    pub model: String,
    /// Per job and policy.
    pub jobs: Vec<JobRow>,
    /// Per policy.
    pub policies: Vec<PolicyRow>,
    /// Kernel run segments per policy, when recorded.
    #[serde(skip)]
    pub segments: Vec<PolicySegments>,
    /// The rows' regions are JCTs from each job's arrival (live replay
    /// measures so), not from its first kernel launch.
    #[serde(skip)]
    pub from_arrival: bool,
}

/// Runs `jobs` together under one policy (job `i` arriving at `arrivals[i]`).
pub fn run_policy(
    jobs: &[Job],
    arrivals: &[i64],
    kind: PolicyKind,
    model: &GpuModel,
    record_segments: bool,
) -> Result<RunResult, RunError> {
    let mut policy = kind.build(model);
    Engine::new(
        jobs,
        arrivals,
        RunOptions {
            record_segments,
            ..RunOptions::default()
        },
    )
    .run(policy.as_mut())
}

/// Each job alone, as the exclusive policy runs it.
pub fn run_isolated(jobs: &[Job], model: &GpuModel) -> Result<Vec<RunResult>, RunError> {
    jobs.iter()
        .map(|j| {
            run_policy(
                std::slice::from_ref(j),
                &[0],
                PolicyKind::Exclusive,
                model,
                false,
            )
        })
        .collect()
}

/// The iterations latency statistics describe: all of them, but a job's
/// setup iterations ([`Job::setup_iterations`]) when it has more than those;
/// for a job that runs its program several times ([`Job::runs`]), each
/// run's.
pub fn measured_iterations<'a>(job: &Job, iterations: &'a [i64]) -> Cow<'a, [i64]> {
    let k = job.setup_iterations;
    if k == 0 || iterations.len() <= k {
        return Cow::Borrowed(iterations);
    }
    let runs = job.runs.max(1);
    let per_run = iterations.len() / runs;
    if runs > 1 && iterations.len() % runs == 0 && per_run > k {
        return Cow::Owned(
            iterations
                .chunks(per_run)
                .flat_map(|run| &run[k..])
                .copied()
                .collect(),
        );
    }
    Cow::Borrowed(&iterations[k..])
}

/// Median, 99th and 99.9th percentile (nearest rank) of iteration
/// latencies; 0 when none. With fewer than 1,000 iterations the 99.9th is
/// the slowest.
pub fn percentiles(iterations: &[i64]) -> (i64, i64, i64) {
    let mut v = iterations.to_vec();
    v.sort_unstable();
    (
        nearest_rank(&v, 0.5).unwrap_or(0),
        nearest_rank(&v, 0.99).unwrap_or(0),
        nearest_rank(&v, 0.999).unwrap_or(0),
    )
}

/// Simulates the jobs under every requested policy. The isolated runs and
/// time slicing (the baseline of `vs_timeslice`) always run.
pub fn simulate(jobs: &[Job], arrivals: &[i64], opts: &SimOptions) -> Result<Report, RunError> {
    simulate_with_progress(jobs, arrivals, opts, &|_| {})
}

/// [`simulate`], calling `phase` with a description before each replay
/// (the isolated runs, the time-slicing baseline, each policy): for progress
/// displays on long runs.
pub fn simulate_with_progress(
    jobs: &[Job],
    arrivals: &[i64],
    opts: &SimOptions,
    phase: &dyn Fn(String),
) -> Result<Report, RunError> {
    phase(format!("replaying each of {} jobs alone", jobs.len()));
    let isolated = run_isolated(jobs, &opts.model)?;
    simulate_with_isolated_progress(jobs, arrivals, opts, &isolated, phase)
}

/// [`simulate`] with each job's isolated run already done (`isolated[i]` is
/// job `i` alone, as [`run_isolated`] makes it): a sweep reuses them across
/// the combinations a job takes part in.
pub fn simulate_with_isolated(
    jobs: &[Job],
    arrivals: &[i64],
    opts: &SimOptions,
    isolated: &[RunResult],
) -> Result<Report, RunError> {
    simulate_with_isolated_progress(jobs, arrivals, opts, isolated, &|_| {})
}

fn simulate_with_isolated_progress(
    jobs: &[Job],
    arrivals: &[i64],
    opts: &SimOptions,
    isolated: &[RunResult],
    phase: &dyn Fn(String),
) -> Result<Report, RunError> {
    phase("replaying under timeslice (the baseline)".into());
    let iso_jct: Vec<i64> = isolated.iter().map(|r| r.jobs[0].jct_ns()).collect();
    // Each job's region starts at its first kernel's launch: the host
    // before it (set-up) runs as recorded under every policy.
    let pre: Vec<i64> = jobs.iter().map(first_kernel_ns).collect();
    let iso_region: Vec<i64> = iso_jct.iter().zip(&pre).map(|(j, p)| j - p).collect();
    let baseline = run_policy(jobs, arrivals, PolicyKind::Timeslice, &opts.model, false)?;

    let mut report = Report {
        model: format!("{} ({})", opts.model.name, opts.model.source),
        jobs: Vec::new(),
        policies: Vec::new(),
        segments: Vec::new(),
        from_arrival: false,
    };
    for &kind in &opts.policies {
        let mut fresh: Option<RunResult> = None;
        let (outcomes, row): (Vec<&JobOutcome>, PolicyRow) = if kind == PolicyKind::Exclusive {
            // Each job alone, as if run one after another.
            let makespan: i64 = iso_jct.iter().sum();
            let busy: i64 = isolated.iter().map(|r| r.busy_ns).sum();
            let row = PolicyRow {
                policy: kind,
                makespan_ns: makespan,
                busy_ns: busy,
                utilization: ratio(busy, makespan),
                misprediction_delay_ns: None,
                mispredicted_kernels: None,
                events: isolated.iter().map(|r| r.events).sum(),
                fill_idle_ns: None,
                fill_share: None,
            };
            (isolated.iter().map(|r| &r.jobs[0]).collect(), row)
        } else {
            let run = if kind == PolicyKind::Timeslice && !opts.record_segments {
                &baseline
            } else {
                phase(format!("replaying under {}", kind.as_str()));
                fresh.insert(run_policy(
                    jobs,
                    arrivals,
                    kind,
                    &opts.model,
                    opts.record_segments,
                )?)
            };
            let row = PolicyRow {
                policy: kind,
                makespan_ns: run.makespan_ns,
                busy_ns: run.busy_ns,
                utilization: ratio(run.busy_ns, run.makespan_ns),
                misprediction_delay_ns: run.misprediction.map(|m| m.0),
                mispredicted_kernels: run.misprediction.map(|m| m.1),
                events: run.events,
                fill_idle_ns: run.fill.map(|f| f.idle_ns),
                fill_share: run.fill.and_then(|f| f.share()),
            };
            (run.jobs.iter().collect(), row)
        };
        for (i, (job, o)) in jobs.iter().zip(outcomes).enumerate() {
            let measured = measured_iterations(job, &o.iterations_ns);
            let (p50, p99, p999) = percentiles(&measured);
            let region = o.jct_ns() - pre[i];
            report.jobs.push(JobRow {
                policy: kind,
                job: job.name.clone(),
                priority: job.priority,
                isolated_jct_ns: iso_jct[i],
                jct_ns: o.jct_ns(),
                isolated_region_ns: iso_region[i],
                region_ns: region,
                slowdown: ratio(region, iso_region[i]),
                vs_timeslice: ratio(baseline.jobs[i].jct_ns() - pre[i], region),
                iterations: measured.len(),
                p50_ns: p50,
                p99_ns: p99,
                p999_ns: p999,
                iterations_ns: measured.to_vec(),
                slowdown_range: None,
                p99_range: None,
                launches_held: LaunchesHeld::of(o.launches_held),
                fills: o.fills,
            });
        }
        report.policies.push(row);
        if let Some(run) = fresh
            && opts.record_segments
        {
            report.segments.push(PolicySegments {
                policy: kind,
                segments: run.segments,
            });
        }
    }
    Ok(report)
}

/// A slowdown's range over the hosts' untraced runs, from the simulation at
/// the point and with every host at the fastest (`low`) and at the slowest
/// (`high`) of its runs, each as (region shared, region alone), ns. A
/// slowdown is a ratio of two runs, the job's shared and its own alone,
/// and each of them may have its host anywhere in the runs' range: the
/// ends pair the shared run at one end with the run alone at the other
/// (the fastest shared over the slowest alone, the slowest shared over the
/// fastest alone), the point inside. Moving both ends together would cancel
/// the host's spread out of the ratio, which two runs do not share.
pub fn slowdown_range(point: (i64, i64), low: (i64, i64), high: (i64, i64)) -> [f64; 2] {
    let s = [
        ratio(point.0, point.1),
        ratio(low.0, high.1),
        ratio(high.0, low.1),
        ratio(low.0, low.1),
        ratio(high.0, high.1),
    ];
    [
        s.iter().copied().fold(f64::INFINITY, f64::min),
        s.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    ]
}

/// Sets each row's range from the same simulation with every job's host at
/// the fastest (`low`) and the slowest (`high`) of its untraced runs
/// ([`crate::sim::host::HostSpeed`]): the slowdown's as [`slowdown_range`]
/// pairs them; the p99's, of one run, the least and the greatest of the
/// three. The reports must be of the same jobs and policies.
pub fn with_host_range(report: &mut Report, low: &Report, high: &Report) {
    for ((r, l), h) in report.jobs.iter_mut().zip(&low.jobs).zip(&high.jobs) {
        debug_assert!(r.job == l.job && r.policy == l.policy && r.job == h.job);
        r.slowdown_range = Some(slowdown_range(
            (r.region_ns, r.isolated_region_ns),
            (l.region_ns, l.isolated_region_ns),
            (h.region_ns, h.isolated_region_ns),
        ));
        let p = [r.p99_ns, l.p99_ns, h.p99_ns];
        r.p99_range = Some([
            *p.iter().min().expect("three"),
            *p.iter().max().expect("three"),
        ]);
    }
}

/// Arrivals that put each job's first kernel launch `first_launch_at[i]`
/// after the earliest (0 for all: together), as `fikit-run` lines real jobs
/// up at their first launch; the earliest arrival is 0.
pub fn line_up(jobs: &[Job], first_launch_at: &[i64]) -> Vec<i64> {
    assert_eq!(jobs.len(), first_launch_at.len(), "one offset per job");
    let pre: Vec<i64> = jobs.iter().map(first_kernel_ns).collect();
    let base = pre
        .iter()
        .zip(first_launch_at)
        .map(|(p, at)| p - at)
        .max()
        .unwrap_or(0);
    pre.iter()
        .zip(first_launch_at)
        .map(|(p, at)| base + at - p)
        .collect()
}

fn ratio(a: i64, b: i64) -> f64 {
    if b == 0 { 1.0 } else { a as f64 / b as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        // 2,000 latencies 1..=2000 in reverse: ranks 1000, 1980, 1998.
        let v: Vec<i64> = (1..=2000).rev().collect();
        assert_eq!(percentiles(&v), (1000, 1980, 1998));
        // Below 1,000 the 99.9th is the slowest.
        assert_eq!(percentiles(&[5, 1, 9]), (5, 9, 9));
        assert_eq!(percentiles(&[]), (0, 0, 0));
    }

    #[test]
    fn each_run_of_a_repeated_program_leaves_its_set_up_out() {
        use fikit_trace::fixture::{empty, launched_at_start, stream_sync};
        // Four iterations, each a kernel and its synchronization; the first
        // counted as set-up, as a weight upload would make it.
        let mut t = empty("j", 0);
        for i in 0..4u32 {
            let at = i64::from(i) * 1_000;
            t.kernels
                .push(launched_at_start("k", 2 * i + 1, at, at + 500));
            t.syncs.push(stream_sync(7, 2 * i + 2, at, at + 500));
        }
        let mut job = Job::from_trace(&t);
        job.setup_iterations = 1;
        assert_eq!(job.runs, 1);
        let once = [900, 10, 11, 12];
        assert_eq!(&*measured_iterations(&job, &once), &[10, 11, 12]);
        // Three runs back to back: each starts with its set-up (900 ns),
        // which latency statistics leave out, not only the first's.
        let thrice = job.repeated(3);
        assert_eq!(thrice.runs, 3);
        let its = [900, 10, 11, 12, 901, 13, 14, 15, 902, 16, 17, 18];
        assert_eq!(
            &*measured_iterations(&thrice, &its),
            &[10, 11, 12, 13, 14, 15, 16, 17, 18]
        );
        assert_eq!(percentiles(&measured_iterations(&thrice, &its)).1, 18);
        // Repeated again, the runs multiply.
        assert_eq!(thrice.repeated(2).runs, 6);
        // Iterations that do not split into the runs (a run stopped early):
        // only the first set-up is known.
        assert_eq!(&*measured_iterations(&thrice, &its[..7]), &its[1..7]);
        // A server has no set-up iteration and one run.
        assert_eq!(thrice.serving(&[0, 10]).runs, 1);
    }

    /// A time-slicing row of `job`: its region `shared` ns, `alone` ns alone.
    fn row(job: &str, shared: i64, alone: i64, p99_ns: i64) -> JobRow {
        JobRow {
            policy: PolicyKind::Timeslice,
            job: job.into(),
            priority: 0,
            isolated_jct_ns: alone,
            jct_ns: shared,
            isolated_region_ns: alone,
            region_ns: shared,
            slowdown: ratio(shared, alone),
            vs_timeslice: 1.0,
            iterations: 0,
            p50_ns: 0,
            p99_ns,
            p999_ns: p99_ns,
            iterations_ns: Vec::new(),
            slowdown_range: None,
            p99_range: None,
            launches_held: None,
            fills: None,
        }
    }

    fn report(rows: Vec<JobRow>) -> Report {
        Report {
            model: String::new(),
            jobs: rows,
            policies: Vec::new(),
            segments: Vec::new(),
            from_arrival: false,
        }
    }

    #[test]
    fn a_slowdowns_range_pairs_each_end_shared_with_the_other_alone() {
        // Job a: at the point 130 ns shared, 100 alone (1.3x); its hosts
        // at their fastest 100 and 90 (1.11x), at their slowest 150 and
        // 110 (1.36x). A shared run at the fastest over a run alone at the
        // slowest: 100 / 110; the other way: 150 / 90. Job b alone the
        // same at both ends: its range is its three slowdowns', 0.9-1.2.
        // The p99 (one run's) spans the three: 40-60 and 70-90.
        let mut r = report(vec![row("a", 130, 100, 50), row("b", 100, 100, 90)]);
        let low = report(vec![row("a", 100, 90, 40), row("b", 120, 100, 70)]);
        let high = report(vec![row("a", 150, 110, 60), row("b", 90, 100, 80)]);
        with_host_range(&mut r, &low, &high);
        assert_eq!(
            (r.jobs[0].slowdown_range, r.jobs[0].p99_range),
            (Some([100.0 / 110.0, 150.0 / 90.0]), Some([40, 60]))
        );
        assert_eq!(
            (r.jobs[1].slowdown_range, r.jobs[1].p99_range),
            (Some([0.9, 1.2]), Some([70, 90]))
        );
        // The point itself is unchanged.
        assert_eq!((r.jobs[0].slowdown, r.jobs[1].p99_ns), (1.3, 90));
        // The point stays inside where the ends' own ratios would not hold
        // it: alone at both ends as at the point, shared lower at both.
        assert_eq!(
            slowdown_range((130, 100), (120, 100), (110, 100)),
            [1.1, 1.3]
        );
    }
}
