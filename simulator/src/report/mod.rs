//! Reporting: what a run's numbers look like to a user.
//!
//! This module renders a simulation [`Report`] as a table, JSON or CSV;
//! [`sweep`] renders a pairwise sweep's rows, [`plots`] draws the PNG/SVG
//! figures, [`html`] writes the self-contained HTML report, [`inspect`]
//! summarizes traces and [`progress`] shows long runs on the terminal.

pub mod html;
pub mod inspect;
pub mod plots;
pub mod progress;
pub mod sweep;

use comfy_table::{Cell, CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
use fikit_trace::summary::human_ns;

use crate::sim::simulate::Report;

/// Output format of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Text tables.
    Table,
    /// One JSON document.
    Json,
    /// CSV: one row per job and policy.
    Csv,
}

/// A right-aligned cell (numbers).
pub(crate) fn right(s: String) -> Cell {
    Cell::new(s).set_alignment(CellAlignment::Right)
}

/// Renders the report.
pub fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Table => table(report),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(report).expect("reports serialize");
            s.push('\n');
            s
        }
        Format::Csv => csv(report),
    }
}

/// A p99 with its range where it has one: `5.99 ms [5.11 ms-6.06 ms]`.
/// A job row's slowdown, with its range over the hosts' runs where it has one.
pub(crate) fn slowdown_with_range(r: &crate::sim::simulate::JobRow) -> String {
    match r.slowdown_range {
        Some([lo, hi]) => format!("{:.3}x [{lo:.3}-{hi:.3}]", r.slowdown),
        None => format!("{:.3}x", r.slowdown),
    }
}

/// A policy row's share of the latency-critical job's idle GPU time that
/// other jobs' kernels used, of how much idle time.
pub(crate) fn idle_filled(r: &crate::sim::simulate::PolicyRow) -> String {
    match (r.fill_share, r.fill_idle_ns) {
        (Some(s), Some(idle)) => format!("{:.0}% of {}", 100.0 * s, human_ns(idle)),
        _ => "-".to_string(),
    }
}

pub(crate) fn p99_with_range(p99_ns: i64, range: Option<[i64; 2]>) -> String {
    match range {
        Some([lo, hi]) => format!("{} [{}-{}]", human_ns(p99_ns), human_ns(lo), human_ns(hi)),
        None => human_ns(p99_ns),
    }
}

fn table(report: &Report) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(vec![
        "policy",
        "job",
        "prio",
        "alone",
        "shared",
        "slowdown",
        "vs timeslice",
        "iters",
        "p50",
        "p99",
        "p99.9",
    ]);
    for r in &report.jobs {
        t.add_row(vec![
            Cell::new(r.policy.as_str()),
            Cell::new(&r.job),
            right(r.priority.to_string()),
            right(human_ns(r.isolated_region_ns)),
            right(human_ns(r.region_ns)),
            right(slowdown_with_range(r)),
            right(format!("{:.3}x", r.vs_timeslice)),
            right(r.iterations.to_string()),
            right(human_ns(r.p50_ns)),
            right(p99_with_range(r.p99_ns, r.p99_range)),
            right(human_ns(r.p999_ns)),
        ]);
    }
    let mut p = Table::new();
    p.load_preset(UTF8_FULL_CONDENSED);
    p.set_header(vec![
        "policy",
        "makespan",
        "GPU busy",
        "utilization",
        "misprediction delay",
        "idle filled",
    ]);
    for r in &report.policies {
        p.add_row(vec![
            Cell::new(r.policy.as_str()),
            right(human_ns(r.makespan_ns)),
            right(human_ns(r.busy_ns)),
            right(format!("{:.1}%", 100.0 * r.utilization)),
            right(match (r.misprediction_delay_ns, r.mispredicted_kernels) {
                (Some(d), Some(n)) => format!("{} over {n} kernels", human_ns(d)),
                _ => "-".to_string(),
            }),
            right(idle_filled(r)),
        ]);
    }
    let measure = if report.from_arrival {
        "alone, shared: the job's time from its arrival to its end (JCT)"
    } else {
        "alone, shared: the job's region, from its first kernel launch to its end (its set-up before it left out, \
         as fikit-run measures)"
    };
    format!(
        "GPU model: {}\n{t}\n{measure}; slowdown = shared / alone; vs timeslice = shared under timeslice / shared under the policy \
         (the high-priority job's speedup over default sharing; below 1 = slower){}\n\n{p}\n\
         idle filled: the share of the latency-critical job's idle GPU time (none of its kernels queued or running) \
         in which other jobs' kernels ran\n",
        report.model,
        if report.jobs.iter().any(|r| r.slowdown_range.is_some()) {
            "; [a-b]: the range over the hosts' untraced runs (the slowdown's: a shared run and a run alone each anywhere \
             between the fastest and the slowest; a p99's: one run at either)"
        } else {
            ""
        }
    )
}

fn csv(report: &Report) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let header = [
        "policy",
        "job",
        "priority",
        "isolated_jct_ns",
        "jct_ns",
        "isolated_region_ns",
        "region_ns",
        "slowdown",
        "vs_timeslice",
        "iterations",
        "p50_ns",
        "p99_ns",
        "p999_ns",
        "utilization",
        "fill_share",
    ];
    // The range's columns where some row has one (traces with untraced runs).
    let ranged = report.jobs.iter().any(|r| r.slowdown_range.is_some());
    let range_header = ["slowdown_low", "slowdown_high", "p99_low_ns", "p99_high_ns"];
    let header: Vec<&str> = header
        .into_iter()
        .chain(range_header.into_iter().filter(|_| ranged))
        .collect();
    w.write_record(&header).expect("writing to memory");
    for r in &report.jobs {
        let row = report.policies.iter().find(|p| p.policy == r.policy);
        let util = row.map_or(0.0, |p| p.utilization);
        let fill = row
            .and_then(|p| p.fill_share)
            .map_or(String::new(), |s| format!("{s:.6}"));
        w.write_record(
            [
                r.policy.as_str().to_string(),
                r.job.clone(),
                r.priority.to_string(),
                r.isolated_jct_ns.to_string(),
                r.jct_ns.to_string(),
                r.isolated_region_ns.to_string(),
                r.region_ns.to_string(),
                format!("{:.6}", r.slowdown),
                format!("{:.6}", r.vs_timeslice),
                r.iterations.to_string(),
                r.p50_ns.to_string(),
                r.p99_ns.to_string(),
                r.p999_ns.to_string(),
                format!("{util:.6}"),
                fill,
            ]
            .into_iter()
            .chain(
                [
                    r.slowdown_range.map(|x| format!("{:.6}", x[0])),
                    r.slowdown_range.map(|x| format!("{:.6}", x[1])),
                    r.p99_range.map(|x| x[0].to_string()),
                    r.p99_range.map(|x| x[1].to_string()),
                ]
                .into_iter()
                .filter(|_| ranged)
                .map(Option::unwrap_or_default),
            )
            .collect::<Vec<String>>(),
        )
        .expect("writing to memory");
    }
    String::from_utf8(w.into_inner().expect("flushing to memory")).expect("CSV of UTF-8 fields")
}
