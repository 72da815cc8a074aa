//! Per-job summaries: what `fikit-sim inspect` and `fikit-profile` print.

use std::collections::HashMap;

use serde::Serialize;

use crate::gaps::{GapCause, busy_intervals, busy_ns, idle_gaps, nearest_rank};
use crate::model::Trace;

/// Idle-gap statistics of one job, ns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GapStats {
    /// Number of gaps.
    pub count: usize,
    /// Median gap (nearest rank), 0 without gaps.
    pub p50_ns: i64,
    /// 99th-percentile gap (nearest rank), 0 without gaps.
    pub p99_ns: i64,
    /// Sum of all gaps.
    pub total_ns: i64,
    /// Idle time the host caused by launching late.
    pub host_ns: i64,
    /// Idle time behind host synchronizations.
    pub sync_ns: i64,
    /// Idle time with the next kernel already issued, or its launch unknown.
    pub other_ns: i64,
}

/// Time spent in one kernel (by demangled name) over the whole job.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelStat {
    /// Demangled name.
    pub name: String,
    /// Executions.
    pub count: usize,
    /// Sum of durations, ns.
    pub total_ns: i64,
    /// Mean duration, ns (integer division).
    pub mean_ns: i64,
    /// Share of all kernel time, 0..1.
    pub share: f64,
}

/// The summary of one job.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobSummary {
    /// Job name.
    pub job: String,
    /// The file it came from, as given.
    pub file: String,
    /// Priority, 0 the highest.
    pub priority: u8,
    /// GPU name.
    pub gpu: String,
    /// Kernel executions.
    pub kernels: usize,
    /// Memory copies and memsets.
    pub memops: usize,
    /// From the first GPU operation's start to the last one's end, ns.
    pub span_ns: i64,
    /// Time at least one kernel ran, ns.
    pub gpu_busy_ns: i64,
    /// `gpu_busy_ns / span_ns`, 0 for an empty trace.
    pub busy_fraction: f64,
    /// Inter-kernel idle gaps.
    pub idle: GapStats,
    /// Kernels with the most total time, most first (ties: by name).
    pub top_kernels: Vec<KernelStat>,
    /// Records CUPTI dropped.
    pub dropped_records: u64,
    /// Whether the capture ended cleanly.
    pub capture_complete: bool,
    /// Kernel keys with the metrics pass's figures, and all kernel keys;
    /// `None` for a trace without figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric_keys: Option<(usize, usize)>,
}

/// Summarizes one job, keeping the `top_n` kernels by total time.
pub fn summarize(trace: &Trace, file: &str, top_n: usize) -> JobSummary {
    let busy = busy_intervals(trace);
    let gpu_busy_ns = busy_ns(&busy);
    let gaps = idle_gaps(trace, &busy);
    let mut lengths: Vec<i64> = gaps.iter().map(|g| g.duration_ns()).collect();
    lengths.sort_unstable();
    let by_cause = |c: GapCause| -> i64 {
        gaps.iter()
            .filter(|g| g.cause == c)
            .map(|g| g.duration_ns())
            .sum()
    };
    let idle = GapStats {
        count: gaps.len(),
        p50_ns: nearest_rank(&lengths, 0.50).unwrap_or(0),
        p99_ns: nearest_rank(&lengths, 0.99).unwrap_or(0),
        total_ns: lengths.iter().sum(),
        host_ns: by_cause(GapCause::Host),
        sync_ns: by_cause(GapCause::Sync),
        other_ns: by_cause(GapCause::Other),
    };

    let mut per_name: HashMap<&str, (usize, i64)> = HashMap::new();
    for k in &trace.kernels {
        let e = per_name.entry(&k.demangled_name).or_default();
        e.0 += 1;
        // Saturating: kernels of many streams can add up past i64 (only on
        // absurd inputs; the reader bounds each timestamp, not their sums).
        e.1 = e.1.saturating_add(k.duration_ns());
    }
    let kernel_total: i64 = per_name.values().fold(0i64, |a, v| a.saturating_add(v.1));
    let mut top: Vec<KernelStat> = per_name
        .into_iter()
        .map(|(name, (count, total_ns))| KernelStat {
            name: name.to_string(),
            count,
            total_ns,
            mean_ns: total_ns / count as i64,
            share: if kernel_total > 0 {
                total_ns as f64 / kernel_total as f64
            } else {
                0.0
            },
        })
        .collect();
    top.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
    });
    top.truncate(top_n);

    let span_ns = trace.gpu_span().map_or(0, |(s, e)| e - s);
    JobSummary {
        job: trace.meta.job_name.clone(),
        file: file.to_string(),
        priority: trace.meta.priority,
        gpu: trace.meta.device.name.clone(),
        kernels: trace.kernels.len(),
        memops: trace.memops.len(),
        span_ns,
        gpu_busy_ns,
        busy_fraction: if span_ns > 0 {
            gpu_busy_ns as f64 / span_ns as f64
        } else {
            0.0
        },
        idle,
        top_kernels: top,
        dropped_records: trace.meta.dropped_records,
        capture_complete: trace.meta.capture_complete,
        metric_keys: (!trace.kernel_metrics.is_empty()).then(|| {
            let keys: std::collections::BTreeSet<u64> =
                trace.kernels.iter().map(|k| k.kernel_key).collect();
            let with = keys
                .iter()
                .filter(|k| trace.kernel_metrics.contains_key(k))
                .count();
            (with, keys.len())
        }),
    }
}

/// Formats nanoseconds for people: `850 ns`, `12.3 µs`, `4.56 ms`, `1.234 s`.
pub fn human_ns(ns: i64) -> String {
    let a = ns.unsigned_abs();
    if a < 1_000 {
        format!("{ns} ns")
    } else if a < 1_000_000 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else if a < 1_000_000_000 {
        format!("{:.2} ms", ns as f64 / 1e6)
    } else {
        format!("{:.3} s", ns as f64 / 1e9)
    }
}

fn share(part: i64, whole: i64) -> String {
    if whole > 0 {
        format!("{:.0}%", 100.0 * part as f64 / whole as f64)
    } else {
        "-".to_string()
    }
}

fn shorten(name: &str, max: usize) -> String {
    if name.chars().count() <= max {
        name.to_string()
    } else {
        let mut s: String = name.chars().take(max - 1).collect();
        s.push('…');
        s
    }
}

/// Renders summaries as text tables: one overview row per job, then each job's top kernels.
pub fn render_table(jobs: &[JobSummary]) -> String {
    use comfy_table::{Cell, CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
    let right = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(vec![
        "job",
        "prio",
        "kernels",
        "span",
        "GPU busy",
        "gaps",
        "gap p50",
        "gap p99",
        "idle total",
        "host",
        "sync",
        "other",
    ]);
    for j in jobs {
        let mut job = j.job.clone();
        if !j.capture_complete {
            job.push_str(" (incomplete)");
        }
        t.add_row(vec![
            Cell::new(job),
            right(j.priority.to_string()),
            right(j.kernels.to_string()),
            right(human_ns(j.span_ns)),
            right(format!(
                "{} ({})",
                human_ns(j.gpu_busy_ns),
                share(j.gpu_busy_ns, j.span_ns)
            )),
            right(j.idle.count.to_string()),
            right(human_ns(j.idle.p50_ns)),
            right(human_ns(j.idle.p99_ns)),
            right(human_ns(j.idle.total_ns)),
            right(share(j.idle.host_ns, j.idle.total_ns)),
            right(share(j.idle.sync_ns, j.idle.total_ns)),
            right(share(j.idle.other_ns, j.idle.total_ns)),
        ]);
    }
    let mut out = t.to_string();
    out.push('\n');
    out.push_str(
        "gaps: the GPU's idle spans between kernels (idle total: their sum)\n\
         host / sync / other: the share of the idle total the host caused by launching late, \
         a synchronization it waited in caused, or neither (work already issued, or a launch \
         not recorded)\n",
    );
    for j in jobs {
        if let Some((with, all)) = j.metric_keys {
            out.push_str(&format!(
                "{}: metrics (DRAM bytes, SM issue rate, L2 bytes) for {with} of {all} kernel keys\n",
                j.job
            ));
        }
    }
    for j in jobs {
        if j.top_kernels.is_empty() {
            continue;
        }
        out.push_str(&format!("\ntop kernels of {} ({})\n", j.job, j.file));
        let mut k = Table::new();
        k.load_preset(UTF8_FULL_CONDENSED);
        k.set_header(vec!["kernel", "count", "total", "mean", "share"]);
        for s in &j.top_kernels {
            k.add_row(vec![
                Cell::new(shorten(&s.name, 80)),
                right(s.count.to_string()),
                right(human_ns(s.total_ns)),
                right(human_ns(s.mean_ns)),
                right(format!("{:.1}%", 100.0 * s.share)),
            ]);
        }
        out.push_str(&k.to_string());
        out.push('\n');
    }
    out
}
