//! Live replay, the CPU side: a scenario's jobs become launch plans
//! ([`plans`]); [`run_live`] runs them on the GPU, one worker process per job
//! (the worker is `fikit-lab live-worker`, which calls
//! [`crate::worker::run`]); [`live_report`] turns the measurements into
//! the same [`Report`] a simulation gives, so the two compare row by row.

pub mod handover;

pub use crate::group::LiveOptions;
use crate::plan::{CopyDir, LivePolicy, Op, OpKind, Plan, Step, TopInfo, WorkerResult};
use fikit_trace::CopyKind;

use fikit_sim_core::policy::PolicyKind;
use fikit_sim_core::sim::job::{HostStep, Job, NO_OP, OpShape};
use fikit_sim_core::sim::scenario::Scenario;
use fikit_sim_core::sim::simulate::{JobRow, PolicyRow, Report, measured_iterations, percentiles};

/// Errors of a live run.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// A job was built without launch shapes.
    #[error("job {0}: no launch shapes (build the scenario with shapes for live replay)")]
    NoShapes(String),
    /// The replay failed.
    #[error(transparent)]
    Replay(#[from] crate::ReplayError),
    /// A worker process failed.
    #[error("worker for job {job} failed: {message}")]
    Worker {
        /// The job.
        job: String,
        /// What happened (its exit status and the end of its stderr).
        message: String,
    },
}

/// The live policy standing for a simulated one.
pub fn live_policy(kind: PolicyKind) -> LivePolicy {
    match kind {
        PolicyKind::Exclusive => LivePolicy::Exclusive,
        PolicyKind::Timeslice => LivePolicy::Timeslice,
        PolicyKind::Mps => LivePolicy::Mps,
        PolicyKind::Preemptive => LivePolicy::Preemptive,
        PolicyKind::Fikit => LivePolicy::Fikit,
    }
}

fn copy_dir(kind: CopyKind) -> CopyDir {
    match kind {
        CopyKind::HtoD => CopyDir::HtoD,
        CopyKind::DtoH => CopyDir::DtoH,
        _ => CopyDir::DtoD,
    }
}

fn top_info(index: usize, job: &Job, arrival_ns: i64) -> TopInfo {
    TopInfo {
        index,
        priority: job.priority,
        arrival_ns,
        first_kernel_ns: job
            .ops
            .iter()
            .find(|o| o.is_kernel())
            .map_or(0, |o| o.recorded_start_ns),
        gap_after_kernel_ns: job.gap_after_kernel_ns.to_vec(),
    }
}

/// The launch plan of job `index` of `jobs` (arriving at `arrivals`) under
/// `policy`: the simulator's host program, with each operation's recorded
/// launch shape and, for kernels, FIKIT's duration prediction.
pub fn plan(
    jobs: &[Job],
    arrivals: &[i64],
    index: usize,
    policy: LivePolicy,
) -> Result<Plan, LiveError> {
    let job = &jobs[index];
    if job.shapes.is_empty() && !job.ops.is_empty() {
        return Err(LiveError::NoShapes(job.name.clone()));
    }
    let ops = job
        .ops
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let kind = match job.shapes[o.shape as usize] {
                OpShape::Kernel {
                    grid,
                    block,
                    shared_bytes,
                } => {
                    let key = o.kernel_key().unwrap_or(0);
                    OpKind::Kernel {
                        grid,
                        block,
                        shared_bytes,
                        position: job.kernel_position[i],
                        predicted_ns: job
                            .mean_duration_ns
                            .get(&key)
                            .copied()
                            .unwrap_or(o.duration_ns),
                    }
                }
                OpShape::Mem { bytes, kind: None } => OpKind::Memset { bytes },
                OpShape::Mem {
                    bytes,
                    kind: Some(k),
                } => OpKind::Copy {
                    bytes,
                    dir: copy_dir(k),
                },
            };
            Op {
                stream: o.stream,
                duration_ns: o.duration_ns,
                kind,
            }
        })
        .collect();
    let steps = job
        .steps
        .iter()
        .map(|s| match *s {
            HostStep::Issue { delay_ns, op } => Step::Issue {
                delay_ns,
                op: op as usize,
            },
            HostStep::Wait {
                delay_ns,
                op,
                wake_ns,
                ends_iteration,
            } => Step::Wait {
                delay_ns,
                op: (op != NO_OP).then_some(op as usize),
                wake_ns,
                ends_iteration,
            },
            HostStep::Arrive { at_ns } => Step::Arrive { at_ns },
        })
        .collect();
    Ok(Plan {
        job: job.name.clone(),
        index,
        priority: job.priority,
        arrival_ns: arrivals[index],
        policy,
        ops,
        steps,
        tail_ns: job.tail_ns,
        jobs: jobs
            .iter()
            .zip(arrivals)
            .enumerate()
            .map(|(i, (j, &a))| top_info(i, j, a))
            .collect(),
    })
}

/// Every job's plan, for running them together under `policy`.
pub fn plans(scenario: &Scenario, policy: LivePolicy) -> Result<Vec<Plan>, LiveError> {
    (0..scenario.jobs.len())
        .map(|i| plan(&scenario.jobs, &scenario.arrivals, i, policy))
        .collect()
}

/// Runs the scenario live under `kind`: exclusive runs each job alone, one
/// after another; the other policies run all jobs together.
pub fn run_live(
    scenario: &Scenario,
    kind: PolicyKind,
    opts: &LiveOptions,
) -> Result<Vec<WorkerResult>, LiveError> {
    let policy = live_policy(kind);
    if kind == PolicyKind::Exclusive {
        let mut out = Vec::new();
        for i in 0..scenario.jobs.len() {
            let job = std::slice::from_ref(&scenario.jobs[i]);
            let p = plan(job, &[0], 0, policy)?;
            out.extend(crate::group::run_group(
                &[p],
                opts,
                &format!("exclusive-{i}"),
            )?);
        }
        Ok(out)
    } else {
        Ok(crate::group::run_group(
            &plans(scenario, policy)?,
            opts,
            kind.as_str(),
        )?)
    }
}

/// Measured JCT of a worker, ns.
pub fn jct(r: &WorkerResult) -> i64 {
    r.finished_ns - r.arrived_ns
}

/// A [`Report`] of live runs, in the simulator's format: `runs` holds each
/// policy's measurements (exclusive and timeslice must be among them: they
/// are the isolated JCTs and the `vs_timeslice` baseline). Live replay does
/// not measure GPU busy time: `busy_ns` is the replayed kernels' recorded
/// time, and `events` 0.
pub fn live_report(
    scenario: &Scenario,
    runs: &[(PolicyKind, Vec<WorkerResult>)],
    device: &str,
) -> Report {
    let find = |k: PolicyKind| runs.iter().find(|(p, _)| *p == k).map(|(_, r)| r);
    let iso: Vec<i64> = find(PolicyKind::Exclusive)
        .map(|r| r.iter().map(jct).collect())
        .unwrap_or_else(|| vec![0; scenario.jobs.len()]);
    let base: Vec<i64> = find(PolicyKind::Timeslice)
        .map(|r| r.iter().map(jct).collect())
        .unwrap_or_else(|| iso.clone());
    let busy: i64 = scenario
        .jobs
        .iter()
        .flat_map(|j| {
            j.ops
                .iter()
                .filter(|o| o.is_kernel())
                .map(|o| o.duration_ns)
        })
        .sum();
    let ratio = |a: i64, b: i64| if b == 0 { 1.0 } else { a as f64 / b as f64 };
    let mut report = Report {
        model: format!("live replay on {device}"),
        jobs: Vec::new(),
        policies: Vec::new(),
        segments: Vec::new(),
        from_arrival: true,
    };
    for (kind, results) in runs {
        for (i, (job, r)) in scenario.jobs.iter().zip(results).enumerate() {
            let measured = measured_iterations(job, &r.iterations_ns);
            let (p50, p99, p999) = percentiles(&measured);
            report.jobs.push(JobRow {
                policy: *kind,
                job: job.name.clone(),
                priority: job.priority,
                isolated_jct_ns: iso[i],
                jct_ns: jct(r),
                // Live replay measures a job from its start.
                isolated_region_ns: iso[i],
                region_ns: jct(r),
                slowdown: ratio(jct(r), iso[i]),
                vs_timeslice: ratio(base[i], jct(r)),
                iterations: measured.len(),
                p50_ns: p50,
                p99_ns: p99,
                p999_ns: p999,
                iterations_ns: measured.to_vec(),
                slowdown_range: None,
                p99_range: None,
                launches_held: None,
                fills: None,
            });
        }
        let makespan = if *kind == PolicyKind::Exclusive {
            results.iter().map(jct).sum()
        } else {
            let first = results.iter().map(|r| r.arrived_ns).min().unwrap_or(0);
            let last = results.iter().map(|r| r.finished_ns).max().unwrap_or(0);
            // Arrivals are measured from the run's start: take the earliest job's offset off.
            last - first + scenario.arrivals.iter().min().copied().unwrap_or(0)
        };
        report.policies.push(PolicyRow {
            policy: *kind,
            makespan_ns: makespan,
            busy_ns: busy,
            utilization: ratio(busy, makespan),
            misprediction_delay_ns: None,
            mispredicted_kernels: None,
            events: 0,
            fill_idle_ns: None,
            fill_share: None,
        });
    }
    report
}

/// One job under one policy, simulated and live.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ValidationRow {
    /// Scenario name.
    pub scenario: String,
    /// Policy.
    pub policy: PolicyKind,
    /// Job.
    pub job: String,
    /// Priority.
    pub priority: u8,
    /// Simulated JCT, ns.
    pub sim_jct_ns: i64,
    /// Live JCT, ns.
    pub live_jct_ns: i64,
    /// `(sim - live) / live`.
    pub error: f64,
    /// The job's recorded span, ns (what exclusive live replay should reproduce).
    pub recorded_span_ns: i64,
    /// Live `vs_timeslice` (JCT under timeslice / JCT under the policy).
    pub live_vs_timeslice: f64,
    /// Simulated `vs_timeslice`.
    pub sim_vs_timeslice: f64,
}

/// One job's measured JCT under one policy, as validation compares it: from
/// a live report, or saved in an earlier validation's JSON (its `rows`).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct LiveJct {
    /// Policy.
    pub policy: PolicyKind,
    /// Job.
    pub job: String,
    /// Priority.
    pub priority: u8,
    /// Live JCT, ns.
    #[serde(rename = "live_jct_ns")]
    pub jct_ns: i64,
    /// Live JCT under timeslice / JCT under the policy.
    #[serde(rename = "live_vs_timeslice")]
    pub vs_timeslice: f64,
}

impl LiveJct {
    /// The jobs of a live report.
    pub fn from_report(live: &Report) -> Vec<LiveJct> {
        live.jobs
            .iter()
            .map(|l| LiveJct {
                policy: l.policy,
                job: l.job.clone(),
                priority: l.priority,
                jct_ns: l.jct_ns,
                vs_timeslice: l.vs_timeslice,
            })
            .collect()
    }
}

/// A row of a saved validation JSON: the scenario it belongs to and the live result.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct SavedLive {
    /// Scenario name.
    pub scenario: String,
    /// The live result.
    #[serde(flatten)]
    pub live: LiveJct,
}

/// A saved validation report (`validation.json`): its device and rows.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct SavedValidation {
    /// The device the live runs ran on.
    pub device: String,
    /// One row per job and policy.
    pub rows: Vec<SavedLive>,
}

/// Pairs the rows of a simulated report and live results of the same scenario.
pub fn compare(scenario: &Scenario, sim: &Report, live: &[LiveJct]) -> Vec<ValidationRow> {
    let mut out = Vec::new();
    for l in live {
        let Some(s) = sim
            .jobs
            .iter()
            .find(|s| s.policy == l.policy && s.job == l.job)
        else {
            continue;
        };
        let span = scenario
            .jobs
            .iter()
            .find(|j| j.name == l.job)
            .map_or(0, |j| j.recorded_span_ns);
        out.push(ValidationRow {
            scenario: scenario.name.clone(),
            policy: l.policy,
            job: l.job.clone(),
            priority: l.priority,
            sim_jct_ns: s.jct_ns,
            live_jct_ns: l.jct_ns,
            error: if l.jct_ns == 0 {
                0.0
            } else {
                (s.jct_ns - l.jct_ns) as f64 / l.jct_ns as f64
            },
            recorded_span_ns: span,
            live_vs_timeslice: l.vs_timeslice,
            // From JCTs, as live replay measures (the report's own
            // vs_timeslice is of regions, from the first kernel launch).
            sim_vs_timeslice: sim
                .jobs
                .iter()
                .find(|t| t.policy == PolicyKind::Timeslice && t.job == l.job)
                .map_or(s.vs_timeslice, |t| {
                    if s.jct_ns == 0 {
                        1.0
                    } else {
                        t.jct_ns as f64 / s.jct_ns as f64
                    }
                }),
        });
    }
    out
}

/// Error statistics of one policy over validation rows.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ErrorSummary {
    /// Policy.
    pub policy: PolicyKind,
    /// Rows.
    pub rows: usize,
    /// Median |error| (nearest rank).
    pub median_abs_error: f64,
    /// Largest |error|.
    pub max_abs_error: f64,
}

/// Median and worst |error| per policy, in `PolicyKind` order.
pub fn summarize(rows: &[ValidationRow]) -> Vec<ErrorSummary> {
    let mut kinds: Vec<PolicyKind> = rows.iter().map(|r| r.policy).collect();
    kinds.sort();
    kinds.dedup();
    kinds
        .into_iter()
        .map(|k| {
            let mut e: Vec<f64> = rows
                .iter()
                .filter(|r| r.policy == k)
                .map(|r| r.error.abs())
                .collect();
            e.sort_by(f64::total_cmp);
            let n = e.len();
            let rank = ((0.5 * n as f64).ceil() as usize).clamp(1, n.max(1));
            ErrorSummary {
                policy: k,
                rows: n,
                median_abs_error: e.get(rank - 1).copied().unwrap_or(0.0),
                max_abs_error: e.last().copied().unwrap_or(0.0),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fikit_trace::fixture;

    fn scenario() -> Scenario {
        let t = fixture::every_column("x");
        let mut a = Job::from_trace_with_shapes(&t);
        a.name = "a".into();
        a.priority = 0;
        let mut b = Job::from_trace_with_shapes(&t).repeated(2);
        b.name = "b".into();
        b.priority = 9;
        Scenario {
            name: "s".into(),
            jobs: vec![a, b],
            arrivals: vec![0, 1_000],
        }
    }

    #[test]
    fn plans_follow_the_simulated_program() {
        let s = scenario();
        let ps = plans(&s, LivePolicy::Fikit).unwrap();
        assert_eq!(ps.len(), 2);
        for (p, j) in ps.iter().zip(&s.jobs) {
            p.validate().unwrap();
            assert_eq!(p.ops.len(), j.ops.len());
            assert_eq!(p.steps.len(), j.steps.len());
            assert_eq!(p.jobs.len(), 2);
            let kernels = p
                .ops
                .iter()
                .filter(|o| matches!(o.kind, OpKind::Kernel { .. }))
                .count();
            assert_eq!(kernels, j.kernel_count());
            // Kernel positions are unique and follow issue order.
            let pos: Vec<u32> = p
                .ops
                .iter()
                .filter_map(|o| match o.kind {
                    OpKind::Kernel { position, .. } => Some(position),
                    _ => None,
                })
                .collect();
            assert!(pos.windows(2).all(|w| w[0] < w[1]), "{pos:?}");
            // Every op keeps its duration, stream and (for kernels) its recorded shape.
            for (o, g) in p.ops.iter().zip(j.ops.iter()) {
                assert_eq!(o.duration_ns, g.duration_ns);
                assert_eq!(o.stream, g.stream);
                assert_eq!(
                    matches!(o.kind, OpKind::Kernel { .. }),
                    g.is_kernel(),
                    "kind"
                );
            }
        }
        assert_eq!(ps[1].arrival_ns, 1_000);
        assert_eq!(
            ps[1].jobs[0].gap_after_kernel_ns,
            s.jobs[0].gap_after_kernel_ns.to_vec()
        );
        // The repeated job's second copy keeps its shapes.
        assert_eq!(ps[1].ops.len(), 2 * ps[0].ops.len());
        assert_eq!(
            ps[1].ops[..ps[0].ops.len()],
            ps[1].ops[ps[0].ops.len()..]
                .iter()
                .map(|o| {
                    let mut o = o.clone();
                    if let OpKind::Kernel { position, .. } = &mut o.kind {
                        *position -= ps[0]
                            .ops
                            .iter()
                            .filter(|o| matches!(o.kind, OpKind::Kernel { .. }))
                            .count() as u32;
                    }
                    o
                })
                .collect::<Vec<_>>()[..]
        );
    }

    #[test]
    fn a_job_without_shapes_is_refused() {
        let t = fikit_trace::fixture::every_column("x");
        let j = Job::from_trace(&t);
        let e = plan(&[j], &[0], 0, LivePolicy::Exclusive).unwrap_err();
        assert!(e.to_string().contains("no launch shapes"), "{e}");
    }

    #[test]
    fn errors_are_paired_and_summarized() {
        let s = scenario();
        let row = |policy, job: &str, jct| JobRow {
            policy,
            job: job.into(),
            priority: 0,
            isolated_jct_ns: 1,
            jct_ns: jct,
            isolated_region_ns: 1,
            region_ns: jct,
            slowdown: 1.0,
            vs_timeslice: 1.0,
            iterations: 0,
            p50_ns: 0,
            p99_ns: 0,
            p999_ns: 0,
            iterations_ns: vec![],
            slowdown_range: None,
            p99_range: None,
            launches_held: None,
            fills: None,
        };
        let rep = |jobs| Report {
            model: String::new(),
            jobs,
            policies: vec![],
            segments: vec![],
            from_arrival: false,
        };
        let sim = rep(vec![
            row(PolicyKind::Fikit, "a", 110),
            row(PolicyKind::Fikit, "b", 90),
            row(PolicyKind::Mps, "a", 100),
        ]);
        let live = rep(vec![
            row(PolicyKind::Fikit, "a", 100),
            row(PolicyKind::Fikit, "b", 100),
            row(PolicyKind::Mps, "a", 200),
        ]);
        let rows = compare(&s, &sim, &LiveJct::from_report(&live));
        assert_eq!(rows.len(), 3);
        assert!((rows[0].error - 0.1).abs() < 1e-12);
        assert!((rows[1].error + 0.1).abs() < 1e-12);
        assert!((rows[2].error + 0.5).abs() < 1e-12);
        let sum = summarize(&rows);
        assert_eq!(sum.len(), 2);
        let f = sum.iter().find(|x| x.policy == PolicyKind::Fikit).unwrap();
        assert_eq!(f.rows, 2);
        assert!((f.median_abs_error - 0.1).abs() < 1e-12);
        assert!((f.max_abs_error - 0.1).abs() < 1e-12);
        let m = sum.iter().find(|x| x.policy == PolicyKind::Mps).unwrap();
        assert!((m.max_abs_error - 0.5).abs() < 1e-12);

        // The same live results, saved in a validation report and read back.
        let saved = serde_json::json!({ "device": "GPU", "rows": rows });
        let back: SavedValidation = serde_json::from_value(saved).unwrap();
        let again: Vec<LiveJct> = back.rows.into_iter().map(|r| r.live).collect();
        assert_eq!(compare(&s, &sim, &again), rows);
    }
}
