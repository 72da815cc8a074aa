//! `fikit-sim --serve RATES`: the latency-critical job as a server of
//! requests at each rate, beside the other jobs repeating until its last
//! request; its latency percentiles under each policy and rate.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, Table};
use rayon::prelude::*;
use serde::Serialize;

use crate::policy::PolicyKind;
use crate::report::Format;
use crate::sim::gpu::GpuModel;
use crate::sim::job::{HostStep, fixed_arrivals, poisson_arrivals};
use crate::sim::scenario::{MAX_JOB_STEPS, Scenario};
use crate::sim::simulate::{Report, SimOptions, simulate, with_host_range};
use fikit_trace::summary::human_ns;

use super::simulate::{Serve, characterize, say_lines};
use super::{Failure, bad_input, other, print};

/// One policy at one rate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServeRow {
    /// Requests a second.
    pub rate_per_s: f64,
    /// Policy.
    pub policy: PolicyKind,
    /// The serving job.
    pub job: String,
    /// Its requests' median latency, arrival to completion, ns.
    pub p50_ns: i64,
    /// 99th percentile, ns.
    pub p99_ns: i64,
    /// 99.9th percentile (the slowest below 1,000 requests), ns.
    pub p999_ns: i64,
    /// The p99's range over the hosts' untraced runs, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_range: Option<[i64; 2]>,
    /// The other jobs' worst slowdown (region shared / alone).
    pub partner_slowdown: f64,
    /// Their throughput against time slicing's at the same rate: time
    /// slicing's worst partner slowdown over this one (the FIKIT paper's
    /// measure for the low-priority job); `None` without a time-slicing row.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partner_vs_timeslice: Option<f64>,
    /// The share of the serving job's idle GPU time other jobs used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fill_share: Option<f64>,
}

/// The arrivals of `s` at `rate`.
fn arrivals(s: &Serve, rate: f64) -> Vec<i64> {
    if s.fixed {
        fixed_arrivals(s.requests, rate)
    } else {
        poisson_arrivals(s.requests, rate, s.seed)
    }
}

/// The most steps and operations `--serve` builds a job of: far below the
/// engine's [`MAX_JOB_STEPS`], so that a slow rate's long partner or many
/// requests are refused at once rather than built (2e7 of them, a partner
/// repeated over 1,000 s, took 3.4 GB and a minute on a 2-core machine).
pub const MAX_SERVE_STEPS: usize = 1 << 24;

/// The jobs of `scenario` with job `server` serving `arrivals` and every
/// other job repeated back to back until the last arrival at least.
fn serving_jobs(
    scenario: &Scenario,
    server: usize,
    arrivals: &[i64],
) -> anyhow::Result<Vec<crate::sim::job::Job>> {
    let last = arrivals.last().copied().unwrap_or(0);
    let mut jobs = scenario.jobs.clone();
    for (i, j) in jobs.iter_mut().enumerate() {
        // Past the last arrival, which counts from the server's set-up
        // (about one recorded span of a job): one repetition more.
        let repeats = (last / j.recorded_span_ns.max(1)) as usize + 2;
        // Refused before it is built: a request of twice the program's mean
        // iteration, or the repetitions, over the steps a job may have.
        let size = j.steps.len() + j.ops.len();
        let iterations = j
            .steps
            .iter()
            .filter(|s| {
                matches!(
                    s,
                    HostStep::Wait {
                        ends_iteration: true,
                        ..
                    }
                )
            })
            .count()
            .max(1);
        let estimate = if i == server {
            (2 * size / iterations)
                .max(1)
                .saturating_mul(arrivals.len())
        } else {
            size.saturating_mul(repeats)
        };
        if estimate > MAX_SERVE_STEPS {
            anyhow::bail!(
                "--serve: {} would take about {estimate} steps and operations, more than the \
                 {MAX_SERVE_STEPS} --serve builds a job of: fewer --requests or a higher rate",
                j.name
            );
        }
        let rebuilt = if i == server {
            j.serving(arrivals)
        } else {
            j.repeated(repeats)
        };
        let size = rebuilt.steps.len() + rebuilt.ops.len();
        if size > MAX_JOB_STEPS {
            anyhow::bail!(
                "--serve: {} would take {size} steps and operations, more than the \
                 {MAX_JOB_STEPS} a job may have: fewer --requests or a higher rate",
                j.name
            );
        }
        *j = rebuilt;
    }
    Ok(jobs)
}

/// Runs `--serve` on the jobs of `scenario` (already picked).
pub fn run_serving(
    s: &Serve,
    scenario: &Scenario,
    policies: &[PolicyKind],
    model: GpuModel,
    model_line: &str,
    as_profiled: bool,
    format: Format,
) -> Result<(), Failure> {
    if let Some(r) = s.rates.iter().find(|r| !(r.is_finite() && **r > 0.0)) {
        return Err(bad_input(anyhow::anyhow!(
            "--serve: a rate must be a positive number of requests a second, found {r}"
        )));
    }
    if let Some((i, r)) = s
        .rates
        .iter()
        .enumerate()
        .find(|(i, r)| s.rates[..*i].contains(r))
    {
        return Err(bad_input(anyhow::anyhow!(
            "--serve: the rate {r} is given twice (rate {} and an earlier one)",
            i + 1
        )));
    }
    if s.requests == 0 {
        return Err(bad_input(anyhow::anyhow!("--requests: must be at least 1")));
    }
    // Every request is a step at least: refused before its arrivals are
    // drawn (1e11 of them would ask for 800 GB).
    if s.requests > MAX_SERVE_STEPS {
        return Err(bad_input(anyhow::anyhow!(
            "--requests: {} is more than the {MAX_SERVE_STEPS} steps --serve builds a job of",
            s.requests
        )));
    }
    if scenario.jobs.len() < 2 {
        return Err(bad_input(anyhow::anyhow!(
            "--serve: name the serving job and at least one job beside it (--jobs SERVER,PARTNER)"
        )));
    }
    // The latency-critical job: best priority, then first.
    let server = (0..scenario.jobs.len())
        .min_by_key(|&i| (scenario.jobs[i].priority, i))
        .expect("two jobs");
    let name = scenario.jobs[server].name.clone();
    let opts = SimOptions {
        policies: policies.to_vec(),
        model: model.clone(),
        record_segments: false,
    };
    // Each rate is its own simulation (three with a host range): in
    // parallel, the rows in the rates' order.
    let per_rate = s
        .rates
        .par_iter()
        .map(|&rate| -> Result<(Vec<String>, Vec<ServeRow>), Failure> {
            let mut jobs = serving_jobs(scenario, server, &arrivals(s, rate)).map_err(bad_input)?;
            let (lines, corners) = characterize(&mut jobs, &model, as_profiled);
            let run = |jobs: &[crate::sim::job::Job]| {
                simulate(jobs, &scenario.arrivals, &opts).map_err(|e| {
                    super::simulate::simulating_of(e, &format!("at {rate} requests/s"))
                })
            };
            let (report, ends) = rayon::join(
                || run(&jobs),
                || {
                    corners
                        .as_ref()
                        .map(|c| rayon::join(|| run(&c.low), || run(&c.high)))
                },
            );
            let mut report = report?;
            if let Some((low, high)) = ends {
                with_host_range(&mut report, &low?, &high?);
            }
            Ok((lines, rows_of(&report, rate, &name)))
        })
        .collect::<Result<Vec<_>, Failure>>()?;
    let lines = per_rate.first().map(|(l, _)| l.clone()).unwrap_or_default();
    let rows: Vec<ServeRow> = per_rate.into_iter().flat_map(|(_, r)| r).collect();
    eprintln!("fikit-sim: {model_line}");
    say_lines(&lines);
    say_lines(&server_notes(
        s,
        &scenario.jobs[server],
        &model,
        as_profiled,
    ));
    let partners: Vec<&str> = scenario
        .jobs
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != server)
        .map(|(_, j)| j.name.as_str())
        .collect();
    let text = match format {
        Format::Json => serde_json::to_string_pretty(&rows).map_err(|e| other(e.into()))? + "\n",
        Format::Csv => csv(&rows),
        Format::Table => table(&rows, s, &name, &partners),
    };
    print(&text)
}

/// Requests served back to back alone to time one ([`server_notes`]).
const BACK_TO_BACK: usize = 100;

/// Notes on what the server's figures mean: a program with no step past its
/// set-up (each request replays all of it), and each rate at which the
/// server alone would be busy all the time (its queue then grows without
/// end, and its p99 with `--requests`): the rate times one request's time
/// served back to back alone.
fn server_notes(
    s: &Serve,
    server: &crate::sim::job::Job,
    model: &GpuModel,
    as_profiled: bool,
) -> Vec<String> {
    let mut notes = Vec::new();
    let whole = server.serves_whole_program();
    if whole {
        notes.push(format!(
            "note: {} has no iteration past its set-up to serve with: each request replays its whole \
             program, set-up included (profile it for more iterations)",
            server.name
        ));
    }
    let mut alone = vec![server.serving(&vec![0; BACK_TO_BACK])];
    let _ = characterize(&mut alone, model, as_profiled);
    // One request's time: the spacing of their completions, all arriving at
    // once (the set-up runs once before the first); a whole-program request
    // (several iterations each), the run's time over the requests.
    let Some(per_request) = crate::sim::simulate::run_isolated(&alone, model)
        .ok()
        .and_then(|r| {
            let o = r.first()?.jobs.first()?;
            let lat = &o.iterations_ns;
            if whole {
                Some(o.jct_ns() as f64 / BACK_TO_BACK as f64)
            } else {
                (lat.len() >= 2)
                    .then(|| (lat[lat.len() - 1] - lat[0]) as f64 / (lat.len() - 1) as f64)
            }
        })
        .filter(|ns| *ns > 0.0)
    else {
        return notes;
    };
    for rate in &s.rates {
        let busy = rate * per_request / 1e9;
        if busy >= 1.0 {
            notes.push(format!(
                "note: at {rate} requests/s {} would be busy {:.0}% of the time alone (a request takes \
                 {} back to back): its queue grows without end, and its latencies with --requests",
                server.name,
                100.0 * busy,
                human_ns(per_request as i64)
            ));
        }
    }
    notes
}

/// The serving job's row and its partners' worst slowdown, per policy.
fn rows_of(report: &Report, rate: f64, server: &str) -> Vec<ServeRow> {
    let mut rows: Vec<ServeRow> = report
        .policies
        .iter()
        .filter_map(|p| {
            let of = |j: &&crate::sim::simulate::JobRow| j.policy == p.policy;
            let me = report.jobs.iter().filter(of).find(|j| j.job == server)?;
            let partner = report
                .jobs
                .iter()
                .filter(of)
                .filter(|j| j.job != server)
                .map(|j| j.slowdown)
                .fold(f64::NEG_INFINITY, f64::max);
            Some(ServeRow {
                rate_per_s: rate,
                policy: p.policy,
                job: server.to_string(),
                p50_ns: me.p50_ns,
                p99_ns: me.p99_ns,
                p999_ns: me.p999_ns,
                p99_range: me.p99_range,
                partner_slowdown: partner,
                partner_vs_timeslice: None,
                fill_share: p.fill_share,
            })
        })
        .collect();
    let timeslice = rows
        .iter()
        .find(|r| r.policy == PolicyKind::Timeslice)
        .map(|r| r.partner_slowdown);
    for r in rows
        .iter_mut()
        .filter(|r| r.policy != PolicyKind::Exclusive)
    {
        r.partner_vs_timeslice = timeslice.map(|t| t / r.partner_slowdown);
    }
    rows
}

fn table(rows: &[ServeRow], s: &Serve, server: &str, partners: &[&str]) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header([
        "requests/s",
        "policy",
        "p50",
        "p99",
        "p99.9",
        "partner slowdown",
        "vs timeslice",
        "idle filled",
    ]);
    let right = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
    for r in rows {
        t.add_row([
            right(format!("{}", r.rate_per_s)),
            Cell::new(r.policy.as_str()),
            right(human_ns(r.p50_ns)),
            right(crate::report::p99_with_range(r.p99_ns, r.p99_range)),
            right(human_ns(r.p999_ns)),
            right(format!("{:.2}x", r.partner_slowdown)),
            right(
                r.partner_vs_timeslice
                    .map_or("-".into(), |v| format!("{v:.2}x")),
            ),
            right(
                r.fill_share
                    .map_or("-".into(), |f| format!("{:.0}%", 100.0 * f)),
            ),
        ]);
    }
    format!(
        "{server} serving {} request{} ({}) beside {}, which repeat until the last arrives: its latency from \
         arrival to completion, queueing included; exclusive: alone\n{t}\npartner slowdown: the worst of the \
         other jobs' regions shared / alone; vs timeslice: their throughput against time slicing's (its \
         partner slowdown over this one); idle filled: the share of {server}'s idle GPU time other jobs' \
         kernels used\n",
        s.requests,
        if s.requests == 1 { "" } else { "s" },
        if s.fixed {
            "one period apart".to_string()
        } else {
            format!("Poisson, seed {}", s.seed)
        },
        partners.join(", ")
    )
}

fn csv(rows: &[ServeRow]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "rate_per_s",
        "policy",
        "job",
        "p50_ns",
        "p99_ns",
        "p999_ns",
        "p99_low_ns",
        "p99_high_ns",
        "partner_slowdown",
        "partner_vs_timeslice",
        "fill_share",
    ])
    .expect("writing to memory");
    for r in rows {
        w.write_record([
            format!("{}", r.rate_per_s),
            r.policy.as_str().to_string(),
            r.job.clone(),
            r.p50_ns.to_string(),
            r.p99_ns.to_string(),
            r.p999_ns.to_string(),
            r.p99_range.map_or(String::new(), |x| x[0].to_string()),
            r.p99_range.map_or(String::new(), |x| x[1].to_string()),
            format!("{:.6}", r.partner_slowdown),
            r.partner_vs_timeslice
                .map_or(String::new(), |v| format!("{v:.6}")),
            r.fill_share.map_or(String::new(), |f| format!("{f:.6}")),
        ])
        .expect("writing to memory");
    }
    String::from_utf8(w.into_inner().expect("in memory")).expect("UTF-8")
}
