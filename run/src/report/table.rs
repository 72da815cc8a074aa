//! The table as text: one line per policy and job, real figures with the
//! simulated ones beside them.

use super::{Row, Spread};
use crate::scenario::RunPolicy;

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
        "p99.9 ms (sim)",
        "overlap",
        "idle filled (sim)",
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
            match (r.sim_slowdown, r.sim_slowdown_range) {
                (Some(s), Some([lo, hi])) => format!("{:.2}x [{lo:.2}-{hi:.2}]", s.median),
                (s, _) => f2(s.map(|s| s.median), "x"),
            },
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
            with_sim(r.p999_ms, r.sim_p999_ms),
            r.overlap
                .map_or("-".into(), |o| format!("{:.0}%", o * 100.0)),
            match (r.fill_share, r.sim_fill_share) {
                (None, None) => "-".into(),
                (real, sim) => format!(
                    "{}{}",
                    real.map_or("-".into(), |f| format!("{:.0}%", f * 100.0)),
                    sim.map_or(String::new(), |f| format!(" ({:.0}%)", f * 100.0))
                ),
            },
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
