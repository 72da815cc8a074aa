//! Sweeps: many job combinations simulated in parallel.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use serde::Serialize;

use crate::engine::{RunError, RunResult};
use crate::gpu::GpuModel;
use crate::job::Job;
use crate::policy::PolicyKind;
use crate::simulate::{SimOptions, run_policy, simulate_with_isolated};

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
    let isolated: Vec<RunResult> = jobs
        .par_iter()
        .map(|j| {
            run_policy(
                std::slice::from_ref(j),
                &[0],
                PolicyKind::Exclusive,
                &opts.model,
                false,
            )
        })
        .collect::<Result<_, RunError>>()?;
    let results: Result<Vec<Vec<PairRow>>, RunError> = pairs
        .par_iter()
        .map(|&(h, l)| {
            let mut high = jobs[h].clone();
            let mut low = jobs[l].clone();
            high.priority = 0;
            low.priority = 9;
            let iso = [isolated[h].clone(), isolated[l].clone()];
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

/// Renders sweep rows as a table, JSON or CSV.
pub fn render(rows: &[PairRow], format: crate::report::Format) -> String {
    use crate::report::Format;
    match format {
        Format::Json => {
            let mut s = serde_json::to_string_pretty(rows).expect("rows serialize");
            s.push('\n');
            s
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(Vec::new());
            w.write_record([
                "high",
                "low",
                "policy",
                "high_vs_timeslice",
                "low_vs_timeslice",
                "high_slowdown",
                "low_slowdown",
                "high_p99_ns",
            ])
            .expect("writing to memory");
            for r in rows {
                w.write_record([
                    r.high.clone(),
                    r.low.clone(),
                    r.policy.as_str().to_string(),
                    format!("{:.6}", r.high_vs_timeslice),
                    format!("{:.6}", r.low_vs_timeslice),
                    format!("{:.6}", r.high_slowdown),
                    format!("{:.6}", r.low_slowdown),
                    r.high_p99_ns.to_string(),
                ])
                .expect("writing to memory");
            }
            String::from_utf8(w.into_inner().expect("flushing to memory")).expect("UTF-8")
        }
        Format::Table => {
            use crate::report::right;
            use comfy_table::{Cell, Table, presets::UTF8_FULL_CONDENSED};
            let mut t = Table::new();
            t.load_preset(UTF8_FULL_CONDENSED);
            t.set_header(vec![
                "high (prio 0)",
                "low (prio 9)",
                "policy",
                "high vs timeslice",
                "low vs timeslice",
                "high slowdown",
                "low slowdown",
                "high p99",
            ]);
            for r in rows {
                t.add_row(vec![
                    Cell::new(&r.high),
                    Cell::new(&r.low),
                    Cell::new(r.policy.as_str()),
                    right(format!("{:.3}x", r.high_vs_timeslice)),
                    right(format!("{:.3}x", r.low_vs_timeslice)),
                    right(format!("{:.3}x", r.high_slowdown)),
                    right(format!("{:.3}x", r.low_slowdown)),
                    right(fikit_trace::summary::human_ns(r.high_p99_ns)),
                ]);
            }
            format!("{t}\n")
        }
    }
}
