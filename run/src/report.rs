//! From rounds to the per-job table: medians over repetitions with their
//! range, the co-run check, and fikit-sim's prediction for the same profiles
//! started when the real jobs started.

use serde::{Deserialize, Serialize};

use fikit_sim_core::policy::PolicyKind;
use fikit_sim_core::sim::gpu::GpuModel;
use fikit_sim_core::sim::job::Job;
use fikit_sim_core::sim::simulate::{
    SimOptions, percentiles, run_isolated, simulate_with_isolated,
};
use fikit_trace::gaps::nearest_rank;

use crate::exec::{JobRun, Round};
use crate::scenario::RunPolicy;

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
    /// fikit-sim's median iteration for the same round, ms (median over
    /// the counted repetitions).
    #[serde(default)]
    pub sim_p50_ms: Option<f64>,
    /// fikit-sim's 99th-percentile iteration, ms.
    #[serde(default)]
    pub sim_p99_ms: Option<f64>,
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
    /// fikit-sim's slowdown for the same profiles, started when the jobs started.
    pub sim_slowdown: Option<Spread>,
    /// [`Row::sim_slowdown`]'s figures, one per counted repetition that was
    /// predicted (empty as [`Row::slowdowns`] is).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sim_slowdowns: Vec<f64>,
    /// `(sim − real) / real` of the median slowdowns.
    pub error: Option<f64>,
    /// The simulated median lies inside the real range.
    pub within_spread: Option<bool>,
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
    /// Its mean iteration under the policy over its mean iteration alone,
    /// both counted so.
    pub per_iteration: f64,
    /// Its region under the policy (alone under exclusive: the profile's
    /// own), from its first kernel, ms.
    pub region_ms: f64,
}

/// What the simulation says of every job of one round: the profiles as
/// jobs, each arriving when its real counterpart's first kernel launch says
/// it began (less the time its profile took from its first host action to
/// its first kernel), regions measured from each job's first kernel as the
/// real ones. Under exclusive each job alone (its iterations are the
/// profile's own; its slowdown 1).
pub fn predict(
    jobs: &[Job],
    round: &[JobRun],
    policy: PolicyKind,
    model: &GpuModel,
) -> Option<Vec<Predicted>> {
    let alone_jobs = jobs;
    let shared = jobs;
    let pre_alone: Vec<i64> = alone_jobs.iter().map(first_kernel_ns).collect();
    let alone = run_isolated(alone_jobs, model).ok()?;
    let alone_its: Vec<&[i64]> = alone
        .iter()
        .map(|r| as_gated(&r.jobs[0].iterations_ns))
        .collect();
    if policy == PolicyKind::Exclusive {
        return Some(
            alone_its
                .iter()
                .zip(alone.iter().zip(&pre_alone))
                .map(|(its, (a, p))| {
                    let (p50, p99) = percentiles(its);
                    Predicted {
                        slowdown: 1.0,
                        p50_ms: ms(p50),
                        p99_ms: ms(p99),
                        per_iteration: 1.0,
                        region_ms: ms(a.jobs[0].jct_ns() - p),
                    }
                })
                .collect(),
        );
    }
    let pre: Vec<i64> = shared.iter().map(first_kernel_ns).collect();
    let starts: Vec<i64> = round
        .iter()
        .zip(&pre)
        .map(|(r, p)| Some(r.first_launch_ns? - p))
        .collect::<Option<_>>()?;
    let t0 = *starts.iter().min()?;
    let arrivals: Vec<i64> = starts.iter().map(|s| s - t0).collect();
    let report = simulate_with_isolated(
        shared,
        &arrivals,
        &SimOptions {
            policies: vec![policy],
            model: model.clone(),
            record_segments: false,
        },
        &alone,
    )
    .ok()?;
    Some(
        report
            .jobs
            .iter()
            .zip(shared)
            .zip(alone_its.iter().zip(pre.iter().zip(&pre_alone)))
            .map(|((r, j), (alone, (p, pa)))| {
                // The report's iterations are the simulator's measured ones
                // (its set-up left out): counted as the gate counts.
                let its = as_gated_measured(j, &r.iterations_ns);
                let (p50, p99) = percentiles(its);
                Predicted {
                    slowdown: (r.jct_ns - p) as f64 / (r.isolated_jct_ns - pa).max(1) as f64,
                    p50_ms: ms(p50),
                    p99_ms: ms(p99),
                    per_iteration: mean_ratio(its, alone).unwrap_or(f64::NAN),
                    region_ms: ms(r.jct_ns - p),
                }
            })
            .collect(),
    )
}

/// When `job`'s first kernel started in its profile, from the job's start
/// (0 without kernels): where its region, as the real runs measure it,
/// begins.
fn first_kernel_ns(job: &Job) -> i64 {
    job.ops
        .iter()
        .find(|o| o.is_kernel())
        .map_or(0, |o| o.recorded_start_ns)
}

/// The gate leaves out a job's spans up to its second stamped
/// synchronization after its first kernel launch ([`crate::exec::iterations`]):
/// of the simulator's iterations (the first ends at the first blocking wait
/// after a kernel), the first two. `raw` are a job's simulated iterations
/// from its start.
fn as_gated(raw: &[i64]) -> &[i64] {
    if raw.len() > 2 { &raw[2..] } else { raw }
}

/// [`as_gated`] of iterations the simulator already measured (its
/// [`Job::setup_iterations`] left out, at most two).
fn as_gated_measured<'a>(job: &Job, measured: &'a [i64]) -> &'a [i64] {
    let more = 2usize.saturating_sub(job.setup_iterations);
    if measured.len() > more {
        &measured[more..]
    } else {
        measured
    }
}

/// How much slower (above 1) or faster the host must run than in `job`'s
/// profile for the profile, replayed alone, to iterate at `real_p50_ms`
/// (its median iteration in the real runs alone): the factor
/// [`Job::with_host_speed`] takes, by a few fixed-point steps (a
/// launch-bound job's iteration is nearly all host time; the rest does not
/// scale). `None` without iterations to compare.
pub fn host_factor(job: &Job, real_p50_ms: f64, model: &GpuModel) -> Option<f64> {
    let p50_with = |f: f64| -> Option<f64> {
        let alone = run_isolated(std::slice::from_ref(&job.with_host_speed(f)), model).ok()?;
        let its = as_gated(&alone[0].jobs[0].iterations_ns);
        (!its.is_empty()).then(|| ms(percentiles(its).0))
    };
    let mut f = 1.0;
    for _ in 0..4 {
        let p = p50_with(f)?;
        if p <= 0.0 {
            return None;
        }
        f *= real_p50_ms / p;
    }
    Some(f)
}

/// [`host_factor`] matched on the region instead: how much slower or
/// faster the host must run than in `job`'s profile for the profile,
/// replayed alone, to take `real_region_ms` from its first kernel to its
/// end (its median region in the real runs alone, what its slowdown divides
/// by). The region's GPU time does not scale, so the factor is found by
/// fixed-point steps on its host part; kept within 0.2..5. `None` when the
/// job cannot be simulated alone.
pub fn host_factor_region(job: &Job, real_region_ms: f64, model: &GpuModel) -> Option<f64> {
    let pre = first_kernel_ns(job);
    let region_with = |f: f64| -> Option<f64> {
        let alone = run_isolated(std::slice::from_ref(&job.with_host_speed(f)), model).ok()?;
        Some(ms(alone[0].jobs[0].jct_ns() - pre))
    };
    let mut f: f64 = 1.0;
    for _ in 0..8 {
        let r = region_with(f)?;
        if r <= 0.0 {
            return None;
        }
        f = (f * real_region_ms / r).clamp(0.2, 5.0);
    }
    Some(f)
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

/// The table rows: for each policy and job, the medians over `rounds`.
/// `sims[r]` is the prediction for `rounds[r]` (`None` without one). A
/// repetition enters the slowdown, vs-timeslice and error columns of a
/// sharing policy only where its round (and, for vs timeslice, that
/// repetition's time-slicing round) was a co-run: [`co_run`] at least
/// `min_overlap`.
pub fn rows(
    names: &[(String, u8)],
    policies: &[RunPolicy],
    rounds: &[Round],
    sims: &[Option<Vec<Predicted>>],
    min_overlap: f64,
) -> Vec<Row> {
    let find = |p: RunPolicy, rep: usize| {
        rounds
            .iter()
            .position(|r| r.policy == p && r.repetition == rep)
    };
    // Exclusive rounds run each job alone: nothing to overlap.
    let counts = |r: usize| {
        names.len() < 2
            || rounds[r].policy == RunPolicy::Exclusive
            || co_run(&rounds[r].jobs).is_some_and(|c| c >= min_overlap)
    };
    let mut out = Vec::new();
    for &p in policies {
        for (j, (name, prio)) in names.iter().enumerate() {
            let mine: Vec<usize> = (0..rounds.len())
                .filter(|&r| rounds[r].policy == p)
                .collect();
            let runs: Vec<&JobRun> = mine.iter().map(|&r| &rounds[r].jobs[j]).collect();
            let ok: Vec<(usize, &JobRun)> = mine
                .iter()
                .map(|&r| (r, &rounds[r].jobs[j]))
                .filter(|(_, x)| x.ok())
                .collect();
            let region = |r: usize| {
                rounds[r].jobs[j]
                    .ok()
                    .then(|| rounds[r].jobs[j].region_ns())
                    .flatten()
            };
            let shared: Vec<(usize, &JobRun)> =
                ok.iter().copied().filter(|&(r, _)| counts(r)).collect();
            // Per counted repetition, `f(base round, this round)` where that
            // repetition's `base` round was a co-run too.
            let per_rep = |base: RunPolicy, f: &dyn Fn(usize, usize) -> Option<f64>| {
                shared
                    .iter()
                    .filter_map(|&(r, _)| {
                        let b = find(base, rounds[r].repetition).filter(|&b| counts(b))?;
                        f(b, r)
                    })
                    .collect::<Vec<f64>>()
            };
            let ratio = |a: usize, b: usize| Some(region(a)? as f64 / region(b)? as f64);
            let launch = |r: usize| {
                let x = &rounds[r].jobs[j];
                x.ok().then(|| x.launch_call_us()).flatten()
            };
            let host_vs_alone = Spread::of(&per_rep(RunPolicy::Exclusive, &|b, r| {
                Some(launch(r)? / launch(b)?)
            }));
            let slowdowns = per_rep(RunPolicy::Exclusive, &|b, r| ratio(r, b));
            let slowdown = Spread::of(&slowdowns);
            let vs_ts = Spread::of(&per_rep(RunPolicy::Timeslice, &|b, r| ratio(b, r)));
            let pct = |q: f64| iteration_quantile_ms(ok.iter().map(|&(_, x)| x), q);
            let overlap = (p != RunPolicy::Exclusive && names.len() > 1)
                .then(|| {
                    ok.iter()
                        .filter_map(|&(r, _)| overlap(&rounds[r].jobs, j))
                        .min_by(f64::total_cmp)
                })
                .flatten();
            let predicted = |r: usize| sims.get(r)?.as_ref()?.get(j).copied();
            // Alone, only the simulated iterations say something (the
            // profile's own speed against the real run's alone).
            let shared_policy = p != RunPolicy::Exclusive;
            let sim_of = |r: usize| predicted(r).filter(|_| shared_policy).map(|p| p.slowdown);
            let sim_slowdowns: Vec<f64> = shared.iter().filter_map(|&(r, _)| sim_of(r)).collect();
            let sim = Spread::of(&sim_slowdowns);
            let sim_pct = |f: fn(Predicted) -> f64| {
                Spread::of(
                    &ok.iter()
                        .filter_map(|&(r, _)| predicted(r).map(f))
                        .collect::<Vec<_>>(),
                )
                .map(|s| s.median)
            };
            // As vs timeslice: the prediction of the repetition's
            // time-slicing round against the prediction of this one.
            let sim_vs_ts = Spread::of(&per_rep(RunPolicy::Timeslice, &|b, r| {
                Some(sim_of(b)? / sim_of(r)?)
            }));
            let (error, within) = against(sim, slowdown);
            let iterations = |r: usize| {
                let x = &rounds[r].jobs[j];
                x.ok().then_some(x.iterations_ns.as_slice())
            };
            let per_iteration = Spread::of(&per_rep(RunPolicy::Exclusive, &|b, r| {
                mean_ratio(iterations(r)?, iterations(b)?)
            }));
            let sim_per_iteration = Spread::of(
                &shared
                    .iter()
                    .filter_map(|&(r, _)| {
                        predicted(r)
                            .filter(|_| shared_policy)
                            .map(|p| p.per_iteration)
                    })
                    .collect::<Vec<_>>(),
            );
            let (per_iteration_error, per_iteration_within) =
                against(sim_per_iteration, per_iteration);
            let med = |f: &dyn Fn(&JobRun) -> f64| {
                Spread::of(&ok.iter().map(|(_, x)| f(x)).collect::<Vec<_>>())
                    .map_or(0.0, |s| s.median)
            };
            out.push(Row {
                policy: p,
                job: name.clone(),
                priority: *prio,
                ok_runs: ok.len(),
                runs: runs.len(),
                region_ms: Spread::of(
                    &ok.iter()
                        .filter_map(|(_, x)| x.region_ns().map(ms))
                        .collect::<Vec<_>>(),
                ),
                slowdown,
                slowdowns: if shared_policy { slowdowns } else { Vec::new() },
                vs_timeslice: vs_ts,
                sim_vs_timeslice: sim_vs_ts,
                p50_ms: pct(0.5),
                p99_ms: pct(0.99),
                sim_region_ms: sim_pct(|p| p.region_ms),
                sim_p50_ms: sim_pct(|p| p.p50_ms),
                sim_p99_ms: sim_pct(|p| p.p99_ms),
                overlap,
                co_runs: (p != RunPolicy::Exclusive && names.len() > 1).then_some(shared.len()),
                per_iteration,
                sim_per_iteration,
                per_iteration_error,
                per_iteration_within,
                sim_slowdown: sim,
                sim_slowdowns,
                error,
                within_spread: within,
                gate: GateStats {
                    launches: med(&|x| x.launches as f64),
                    waits: med(&|x| x.waits as f64),
                    wait_ms: med(&|x| x.wait_ns as f64 / 1e6),
                    fills: med(&|x| x.fills as f64),
                    timeouts: med(&|x| x.timeouts as f64),
                    unknown: med(&|x| x.unknown as f64),
                },
                launch_us: Spread::of(
                    &ok.iter()
                        .filter_map(|(_, x)| x.launch_call_us())
                        .collect::<Vec<_>>(),
                ),
                host_vs_alone,
            });
        }
    }
    out
}

/// The table as text.
pub fn table(rows: &[Row]) -> String {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header([
        "policy",
        "job",
        "prio",
        "ok",
        "co-runs",
        "region ms (sim)",
        "slowdown",
        "simulated",
        "error",
        "vs timeslice",
        "per iteration (sim)",
        "p50 ms (sim)",
        "p99 ms (sim)",
        "overlap",
        "µs/launch",
        "gate waits / ms / fills",
    ]);
    let f2 = |v: Option<f64>, unit: &str| v.map_or("-".to_string(), |v| format!("{v:.2}{unit}"));
    let with_sim = |real: Option<f64>, sim: Option<f64>| match sim {
        None => f2(real, ""),
        Some(x) => format!("{} ({x:.2})", f2(real, "")),
    };
    let spread = |s: Option<Spread>, unit: &str| {
        s.map_or("-".to_string(), |s| {
            if s.min == s.max {
                format!("{:.2}{unit}", s.median)
            } else {
                format!("{:.2}{unit} [{:.2}-{:.2}]", s.median, s.min, s.max)
            }
        })
    };
    // A real spread and, when there is one, the simulated figure after it.
    let spread_sim = |real: Option<Spread>, unit: &str, sim: Option<f64>| match sim {
        None => spread(real, unit),
        Some(x) => format!("{} ({x:.2}{unit})", spread(real, unit)),
    };
    for r in rows {
        t.add_row([
            r.policy.name().to_string(),
            r.job.clone(),
            r.priority.to_string(),
            format!("{}/{}", r.ok_runs, r.runs),
            r.co_runs
                .map_or("-".into(), |c| format!("{c}/{}", r.ok_runs)),
            spread_sim(r.region_ms, "", r.sim_region_ms),
            spread(r.slowdown, "x"),
            f2(r.sim_slowdown.map(|s| s.median), "x"),
            r.error.map_or("-".into(), |e| {
                format!(
                    "{:+.1}%{}",
                    e * 100.0,
                    if r.within_spread == Some(true) {
                        " (in range)"
                    } else {
                        ""
                    }
                )
            }),
            spread(r.vs_timeslice, "x"),
            spread_sim(r.per_iteration, "x", r.sim_per_iteration.map(|s| s.median)),
            with_sim(r.p50_ms, r.sim_p50_ms),
            with_sim(r.p99_ms, r.sim_p99_ms),
            r.overlap
                .map_or("-".into(), |o| format!("{:.0}%", o * 100.0)),
            spread(r.launch_us, ""),
            if r.policy == RunPolicy::Preemptive || r.policy == RunPolicy::Fikit {
                format!(
                    "{:.0} / {:.1} / {:.0}",
                    r.gate.waits, r.gate.wait_ms, r.gate.fills
                )
            } else {
                "-".into()
            },
        ]);
    }
    t.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(job: &str, first: i64, end: i64) -> JobRun {
        JobRun {
            job: job.into(),
            exit_code: Some(0),
            first_launch_ns: Some(first),
            end_ns: Some(end),
            iterations_ns: vec![1_000_000, 2_000_000, 3_000_000],
            ..JobRun::default()
        }
    }

    #[test]
    fn spread_is_median_and_range() {
        let s = Spread::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
        assert_eq!(Spread::of(&[1.0, 2.0]).unwrap().median, 1.5);
        assert!(Spread::of(&[]).is_none());
    }

    #[test]
    fn overlap_is_the_covered_share() {
        // a: 0-100; b: 50-80 and c: 70-120 cover 50-100 of it.
        let jobs = vec![run("a", 0, 100), run("b", 50, 80), run("c", 70, 120)];
        assert_eq!(overlap(&jobs, 0), Some(0.5));
        // b is inside a: wholly covered.
        assert_eq!(overlap(&jobs, 1), Some(1.0));
        // Two jobs one after the other: no co-run at all.
        let apart = vec![run("a", 0, 100), run("b", 100, 200)];
        assert_eq!(overlap(&apart, 1), Some(0.0));
    }

    /// The two jobs of the row tests: "hi" (priority 0) and "lo" (9).
    /// A round's prediction: these slowdowns, and iterations of 1 ms median
    /// and 2 ms p99 scaled by them.
    fn sim(slowdowns: &[f64]) -> Option<Vec<Predicted>> {
        Some(
            slowdowns
                .iter()
                .map(|&s| Predicted {
                    slowdown: s,
                    p50_ms: s,
                    p99_ms: 2.0 * s,
                    per_iteration: s + 0.5,
                    region_ms: 100.0 * s,
                })
                .collect(),
        )
    }

    fn hi_lo() -> Vec<(String, u8)> {
        vec![("hi".to_string(), 0u8), ("lo".to_string(), 9u8)]
    }

    /// A round of "hi" and "lo" with their regions.
    fn mk(p: RunPolicy, rep: usize, hi: (i64, i64), lo: (i64, i64)) -> Round {
        Round {
            policy: p,
            repetition: rep,
            jobs: vec![run("hi", hi.0, hi.1), run("lo", lo.0, lo.1)],
            gate_nap_us: 0,
        }
    }

    #[test]
    fn rows_take_per_repetition_ratios() {
        let names = hi_lo();
        let rounds = vec![
            mk(RunPolicy::Exclusive, 0, (0, 100), (0, 1000)),
            mk(RunPolicy::Timeslice, 0, (0, 200), (0, 1100)),
            mk(RunPolicy::Fikit, 0, (0, 110), (0, 1300)),
            mk(RunPolicy::Exclusive, 1, (0, 50), (0, 1000)),
            mk(RunPolicy::Timeslice, 1, (0, 150), (0, 1100)),
            mk(RunPolicy::Fikit, 1, (0, 60), (0, 1200)),
        ];
        let sims = vec![
            sim(&[1.0, 0.9]),
            sim(&[1.8, 1.05]),
            sim(&[1.2, 1.1]),
            sim(&[1.0, 0.7]),
            sim(&[2.4, 1.04]),
            sim(&[1.0, 1.3]),
        ];
        let policies = [RunPolicy::Exclusive, RunPolicy::Timeslice, RunPolicy::Fikit];
        let r = rows(&names, &policies, &rounds, &sims, 0.9);
        let hi_fikit = r
            .iter()
            .find(|x| x.policy == RunPolicy::Fikit && x.job == "hi")
            .unwrap();
        // Slowdowns 110/100 = 1.1 and 60/50 = 1.2 (per repetition, not of medians).
        let s = hi_fikit.slowdown.unwrap();
        assert!((s.median - 1.15).abs() < 1e-9 && s.min == 1.1 && (s.max - 1.2).abs() < 1e-9);
        // vs timeslice 200/110 and 150/60.
        let v = hi_fikit.vs_timeslice.unwrap();
        assert!((v.median - (200.0 / 110.0 + 2.5) / 2.0).abs() < 1e-9);
        // Simulated 1.2 and 1.0: median 1.1; error (1.1 - 1.15) / 1.15.
        assert!((hi_fikit.error.unwrap() - (1.1 - 1.15) / 1.15).abs() < 1e-9);
        assert_eq!(hi_fikit.within_spread, Some(true));
        // Simulated vs timeslice, per repetition: 1.8 / 1.2 and 2.4 / 1.0.
        let sv = hi_fikit.sim_vs_timeslice.unwrap();
        assert!((sv.median - 1.95).abs() < 1e-9 && (sv.min - 1.5).abs() < 1e-9);
        let lo_fikit = r
            .iter()
            .find(|x| x.policy == RunPolicy::Fikit && x.job == "lo")
            .unwrap();
        let lv = lo_fikit.sim_vs_timeslice.unwrap();
        assert!((lv.median - (1.05 / 1.1 + 1.04 / 1.3) / 2.0).abs() < 1e-9);
        assert_eq!(hi_fikit.p50_ms, Some(2.0));
        // Simulated iterations, median over the repetitions: p50 1.2 and 1.0 ms.
        assert_eq!(hi_fikit.sim_p50_ms, Some(1.1));
        assert_eq!(hi_fikit.sim_p99_ms, Some(2.2));
        // Real iterations are the same in every round (1, 2, 3 ms): per
        // iteration 1.0x; simulated 1.7 and 1.5: median 1.6, error +60%.
        let pi = hi_fikit.per_iteration.unwrap();
        assert_eq!((pi.median, pi.min, pi.max), (1.0, 1.0, 1.0));
        assert!((hi_fikit.sim_per_iteration.unwrap().median - 1.6).abs() < 1e-9);
        assert!((hi_fikit.per_iteration_error.unwrap() - 0.6).abs() < 1e-9);
        assert_eq!(hi_fikit.per_iteration_within, Some(false));
        assert_eq!(hi_fikit.overlap, Some(1.0));
        assert_eq!(hi_fikit.co_runs, Some(2));
        let excl = r
            .iter()
            .find(|x| x.policy == RunPolicy::Exclusive && x.job == "lo")
            .unwrap();
        assert_eq!(excl.slowdown.unwrap().median, 1.0);
        assert_eq!(excl.overlap, None);
        // Alone, the simulated iterations (0.9 and 0.7 ms) but no simulated slowdown.
        assert_eq!(excl.sim_p50_ms, Some(0.8));
        assert_eq!(
            (excl.sim_slowdown, excl.error, excl.sim_per_iteration),
            (None, None, None)
        );
        assert_eq!(hi_fikit.launch_us, None, "no launch call timed");
        let text = table(&r);
        assert!(text.contains("1.15x [1.10-1.20]"), "{text}");
        assert!(
            text.contains("2.00 (1.10)"),
            "real p50 beside simulated: {text}"
        );
    }

    /// A clock standing at one time.
    struct At(i64);

    impl fikit_gate::Clock for At {
        fn now(&mut self) -> i64 {
            self.0
        }
        fn pause(&mut self, _: i64) {
            panic!("the gate waited")
        }
    }

    /// A program alone as a trace and as the gate sees it: `kernels` as
    /// (launch call, start, end), every wait a stream synchronization
    /// (start, end). Returns the job and the iterations the gate measures.
    fn traced_and_gated(kernels: &[(i64, i64, i64)], syncs: &[(i64, i64)]) -> (Job, Vec<i64>) {
        use fikit_trace::fixture as fx;
        use std::sync::atomic::Ordering::SeqCst;
        let mut t = fx::empty("job", 0);
        for (i, &(launch, start, end)) in kernels.iter().enumerate() {
            let id = i as u32 + 1;
            t.kernels.push(fx::kernel(
                &format!("k{i}"),
                1,
                id,
                Some(launch),
                start,
                end,
            ));
        }
        for (i, &(start, end)) in syncs.iter().enumerate() {
            t.syncs.push(fx::stream_sync(1, 100 + i as u32, start, end));
        }
        let dir = tempfile::tempdir().unwrap();
        let b = fikit_gate::Block::create(&dir.path().join("c"), 1, fikit_gate::GatePolicy::Open)
            .unwrap();
        let g = fikit_gate::Gate::new(&b, 0, fikit_gate::Table::default());
        let mut events: Vec<(i64, bool)> = kernels.iter().map(|k| (k.0, true)).collect();
        events.extend(syncs.iter().map(|s| (s.1, false)));
        events.sort_unstable();
        // Launches at their calls' entry, stamps as waits return (on the
        // monotonic clock, which is never 0).
        for (at, launch) in events.into_iter().map(|(t, l)| (t + 1_000_000, l)) {
            if launch {
                g.before_launch(None, &mut At(at));
            } else {
                g.synced(at);
            }
        }
        let slot = b.slot(0);
        let n = slot.syncs.load(SeqCst) as usize;
        let stamps: Vec<i64> = b.stamps(0)[..n].iter().map(|w| w.load(SeqCst)).collect();
        let real = crate::exec::iterations(slot.first_launch_ns.load(SeqCst), &stamps);
        (Job::from_trace(&t), real)
    }

    #[test]
    fn simulated_iterations_count_as_the_gates() {
        // Two weights copied and waited for (no kernel since: no iteration
        // ends), a warm-up step and three steps; launch calls take 2 µs.
        let steps = [
            (40_000, 42_500, 50_000),
            (60_000, 62_500, 65_000),
            (70_000, 72_500, 76_000),
            (80_000, 82_500, 84_000),
        ];
        let syncs = [
            (10_000, 10_100),
            (20_000, 20_100),
            (30_000, 30_100),
            (43_000, 50_100),
            (63_000, 65_100),
            (73_000, 76_100),
            (83_000, 84_100),
        ];
        let model = GpuModel::default();
        // A PyTorch program makes its input on the GPU first: the gate's
        // stamps begin at the first weight's wait.
        let input_first: Vec<_> = std::iter::once((0, 2_500, 3_000)).chain(steps).collect();
        let (job, real) = traced_and_gated(&input_first, &syncs);
        assert_eq!(real, [15_000, 11_000, 8_000]);
        assert_eq!(job.setup_iterations, 2);
        // The simulator's iterations, from the job's start: the first ends
        // at the first weight's wait, the second holds the upload and the
        // warm-up.
        let alone = run_isolated(std::slice::from_ref(&job), &model).unwrap();
        let raw = &alone[0].jobs[0].iterations_ns;
        assert_eq!(raw, &[10_100, 40_000, 15_000, 11_000, 8_000]);
        assert_eq!(as_gated(raw), real.as_slice());
        let measured = fikit_sim_core::sim::simulate::measured_iterations(&job, raw);
        assert_eq!(as_gated_measured(&job, measured), real.as_slice());
        let p = predict(
            std::slice::from_ref(&job),
            &[JobRun::default()],
            PolicyKind::Exclusive,
            &model,
        )
        .unwrap();
        assert_eq!(p[0].p50_ms, 0.011);
        // Weights first: the first launch is the warm-up's, whose wait the
        // gate stamps first, and it leaves the warm-up out.
        let (job, real) = traced_and_gated(&steps, &syncs);
        assert_eq!(real, [11_000, 8_000]);
        assert_eq!(job.setup_iterations, 1);
        let alone = run_isolated(std::slice::from_ref(&job), &model).unwrap();
        let raw = &alone[0].jobs[0].iterations_ns;
        assert_eq!(as_gated(raw), real.as_slice());
        let measured = fikit_sim_core::sim::simulate::measured_iterations(&job, raw);
        assert_eq!(as_gated_measured(&job, measured), real.as_slice());
    }

    #[test]
    fn host_factor_brings_the_profile_to_the_real_speed_alone() {
        // A launch-bound serving job of the fixtures: asked for 0.8 of its
        // own median iteration alone, the factor speeds its host up so
        // that its replay alone gives that.
        let job = Job::from_trace(&fikit_trace::fixture::serving("j", 0, 40));
        let model = GpuModel::default();
        let p50 = |j: &Job| {
            let alone = run_isolated(std::slice::from_ref(j), &model).unwrap();
            ms(percentiles(as_gated(&alone[0].jobs[0].iterations_ns)).0)
        };
        let base = p50(&job);
        assert!(base > 0.0);
        assert!((host_factor(&job, base, &model).unwrap() - 1.0).abs() < 1e-9);
        let f = host_factor(&job, 0.8 * base, &model).unwrap();
        assert!(f < 1.0, "{f}");
        let got = p50(&job.with_host_speed(f));
        assert!(
            (got - 0.8 * base).abs() / base < 0.02,
            "{got} against {}",
            0.8 * base
        );
    }

    #[test]
    fn a_profile_off_its_runs_alone_is_called_off() {
        let names = hi_lo();
        // Alone, hi took 100, 110 and 120 ms, lo 1,000 ms each time.
        let rounds: Vec<Round> = [100, 110, 120]
            .iter()
            .enumerate()
            .map(|(rep, &hi)| {
                mk(
                    RunPolicy::Exclusive,
                    rep,
                    (0, hi * 1_000_000),
                    (0, 1_000_000_000),
                )
            })
            .collect();
        let alone = |hi: f64, lo: f64| {
            let p = |region_ms| Predicted {
                slowdown: 1.0,
                p50_ms: 1.0,
                p99_ms: 1.0,
                per_iteration: 1.0,
                region_ms,
            };
            Some(vec![p(hi), p(lo)])
        };
        let check = |hi: f64, lo: f64| {
            let sims = vec![alone(hi, lo); 3];
            let r = rows(&names, &[RunPolicy::Exclusive], &rounds, &sims, 0.9);
            assert_eq!(r[0].sim_region_ms, Some(hi));
            (
                r[0].profile_vs_alone().unwrap(),
                r[1].profile_vs_alone().unwrap(),
                table(&r),
            )
        };
        // hi's profile 115 ms: 115 / 110, inside 100-120. lo's 1,030 ms:
        // outside its runs' range, but within 5% of them.
        let ((h, h_off), (l, l_off), t) = check(115.0, 1030.0);
        assert!((h - 115.0 / 110.0).abs() < 1e-12 && !h_off);
        assert!((l - 1.03).abs() < 1e-12 && !l_off);
        assert!(t.contains("110.00 [100.00-120.00] (115.00)"), "{t}");
        // hi's 130 ms: outside the range and 18% over the median; lo's 940
        // ms: 6% under.
        let ((h, h_off), (l, l_off), _) = check(130.0, 940.0);
        assert!((h - 130.0 / 110.0).abs() < 1e-12 && h_off);
        assert!((l - 0.94).abs() < 1e-12 && l_off);
        // Only exclusive rows say it.
        let shared = vec![mk(RunPolicy::Timeslice, 0, (0, 200), (0, 1100))];
        let r = rows(
            &names,
            &[RunPolicy::Timeslice],
            &shared,
            &[sim(&[2.0, 1.1])],
            0.9,
        );
        assert_eq!(r[0].sim_region_ms, Some(200.0));
        assert_eq!(r[0].profile_vs_alone(), None);
    }

    #[test]
    fn mean_ratio_of_iterations() {
        assert_eq!(mean_ratio(&[6, 6, 9], &[3, 4, 5]), Some(1.75));
        assert_eq!(mean_ratio(&[], &[3]), None);
        assert_eq!(mean_ratio(&[3], &[]), None);
        assert_eq!(mean_ratio(&[3], &[0]), None);
    }

    #[test]
    fn launch_call_time_per_repetition() {
        let names = hi_lo();
        let mut rounds = vec![
            mk(RunPolicy::Timeslice, 0, (0, 200), (0, 1100)),
            mk(RunPolicy::Timeslice, 1, (0, 150), (0, 1100)),
        ];
        // hi: 3,000 calls of 6 µs, then 2,000 of 8.5 µs.
        (
            rounds[0].jobs[0].launch_call_ns,
            rounds[0].jobs[0].launch_calls,
        ) = (18_000_000, 3_000);
        (
            rounds[1].jobs[0].launch_call_ns,
            rounds[1].jobs[0].launch_calls,
        ) = (17_000_000, 2_000);
        let r = rows(&names, &[RunPolicy::Timeslice], &rounds, &[None, None], 0.9);
        let l = r[0].launch_us.unwrap();
        assert_eq!((l.min, l.max), (6.0, 8.5));
        assert!((l.median - 7.25).abs() < 1e-9);
        assert_eq!(r[1].launch_us, None);
        assert!(table(&r).contains("7.25 [6.00-8.50]"));
        assert_eq!(r[0].host_vs_alone, None, "no exclusive round");
        // Alone, 6 µs in both repetitions: the host ran at its alone speed
        // in the first shared round and 8.5 / 6 slower in the second.
        rounds.push(mk(RunPolicy::Exclusive, 0, (0, 100), (0, 1000)));
        rounds.push(mk(RunPolicy::Exclusive, 1, (0, 100), (0, 1000)));
        for k in [2, 3] {
            (
                rounds[k].jobs[0].launch_call_ns,
                rounds[k].jobs[0].launch_calls,
            ) = (6_000_000, 1_000);
        }
        let policies = [RunPolicy::Exclusive, RunPolicy::Timeslice];
        let r = rows(&names, &policies, &rounds, &[None, None, None, None], 0.9);
        let h = r[2].host_vs_alone.unwrap();
        assert_eq!(
            (r[2].policy, r[2].job.as_str()),
            (RunPolicy::Timeslice, "hi")
        );
        assert_eq!(h.min, 1.0);
        assert!((h.max - 8.5 / 6.0).abs() < 1e-9);
    }

    #[test]
    fn co_run_is_the_shortest_regions_covered_share() {
        // The short job (10-30) inside the long one: a full co-run, though
        // the long job is only a fifth covered.
        assert_eq!(co_run(&[run("l", 0, 100), run("s", 10, 30)]), Some(1.0));
        // The short job half before the long one began.
        assert_eq!(co_run(&[run("l", 20, 120), run("s", 0, 40)]), Some(0.5));
        // One job: nothing to share.
        assert_eq!(co_run(&[run("l", 0, 100)]), None);
    }

    #[test]
    fn repetitions_that_were_not_co_runs_leave_the_ratios() {
        let names = hi_lo();
        let rounds = vec![
            mk(RunPolicy::Exclusive, 0, (0, 100), (0, 1000)),
            mk(RunPolicy::Timeslice, 0, (0, 200), (0, 1100)),
            mk(RunPolicy::Fikit, 0, (0, 110), (0, 1300)),
            mk(RunPolicy::Exclusive, 1, (0, 100), (0, 1000)),
            // hi ran before lo began loading its model: one after the other.
            mk(RunPolicy::Timeslice, 1, (0, 100), (100, 1100)),
            mk(RunPolicy::Fikit, 1, (0, 400), (0, 1000)),
        ];
        let sims = vec![
            None,
            sim(&[1.5, 1.0]),
            sim(&[1.2, 1.1]),
            None,
            sim(&[1.0, 1.0]),
            sim(&[3.0, 1.0]),
        ];
        let policies = [RunPolicy::Exclusive, RunPolicy::Timeslice, RunPolicy::Fikit];
        let r = rows(&names, &policies, &rounds, &sims, 0.9);
        let get = |p, j: &str| r.iter().find(|x| x.policy == p && x.job == j).unwrap();
        let ts = get(RunPolicy::Timeslice, "hi");
        // Only repetition 1's 2.0x counts; its simulated 1.5x against it.
        assert_eq!(ts.co_runs, Some(1));
        assert_eq!(ts.slowdown.unwrap().median, 2.0);
        assert!((ts.error.unwrap() - (1.5 - 2.0) / 2.0).abs() < 1e-9);
        assert_eq!(ts.overlap, Some(0.0));
        // FIKIT's rounds both count (4.0x and 1.1x), but vs timeslice only
        // where the timeslice round was a co-run: 200/110.
        let fk = get(RunPolicy::Fikit, "hi");
        assert_eq!(fk.co_runs, Some(2));
        assert!((fk.slowdown.unwrap().median - 2.55).abs() < 1e-9);
        let v = fk.vs_timeslice.unwrap();
        assert!((v.median - 200.0 / 110.0).abs() < 1e-9 && v.min == v.max);
        // With no threshold every repetition counts again.
        let all = rows(&names, &policies, &rounds, &sims, 0.0);
        let ts = all
            .iter()
            .find(|x| x.policy == RunPolicy::Timeslice && x.job == "hi")
            .unwrap();
        assert_eq!((ts.co_runs, ts.slowdown.unwrap().median), (Some(2), 1.5));
        let text = table(&r);
        let line = text
            .lines()
            .find(|l| l.contains("timeslice") && l.contains(" hi "))
            .unwrap();
        assert!(line.contains("1/2"), "{line}");
    }

    #[test]
    fn a_failed_repetition_is_left_out_and_counted() {
        let names = vec![("a".to_string(), 0u8)];
        let mut bad = run("a", 0, 100);
        bad.exit_code = Some(1);
        let rounds = vec![
            Round {
                policy: RunPolicy::Exclusive,
                repetition: 0,
                jobs: vec![run("a", 0, 100)],
                gate_nap_us: 0,
            },
            Round {
                policy: RunPolicy::Exclusive,
                repetition: 1,
                jobs: vec![bad],
                gate_nap_us: 0,
            },
        ];
        let r = rows(&names, &[RunPolicy::Exclusive], &rounds, &[None, None], 0.9);
        assert_eq!((r[0].ok_runs, r[0].runs), (1, 2));
    }
}
