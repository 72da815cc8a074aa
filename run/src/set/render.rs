//! A set's summary as text and as a self-contained HTML page.

use super::*;

/// What the FIKIT paper (arXiv 2311.10359) reports against default sharing.
pub const PAPER_FIKIT: &str = "the FIKIT paper reports 1.32-16.41x for the high-priority job and 0.86-1x for the low-priority one";

pub(super) fn role(high: bool) -> &'static str {
    if high { "high" } else { "low" }
}

/// A table of the summaries' style with `header`.
pub(super) fn table_with<const N: usize>(header: [&str; N]) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header(header);
    t
}

pub(super) fn signed_pct(e: Option<f64>, within: Option<bool>) -> String {
    e.map_or("-".into(), |e| {
        format!(
            "{:+.1}%{}",
            e * 100.0,
            if within == Some(true) {
                " (in range)"
            } else {
                ""
            }
        )
    })
}

/// The gated policies against time slicing as text (empty without any).
pub(super) fn vs_timeslice_text(s: &Summary) -> String {
    if s.vs_timeslice.is_empty() {
        return String::new();
    }
    let mut f = table_with([
        "policy",
        "job",
        "sample",
        "pairs",
        "median |error|",
        "worst |error|",
        "inside the real range",
    ]);
    for v in &s.vs_fits {
        f.add_row([
            v.policy.name().to_string(),
            role(v.high).to_string(),
            v.sample.name().to_string(),
            v.rows.to_string(),
            pct(v.median_abs_error),
            pct(v.worst_abs_error),
            format!("{}/{}", v.within_spread, v.rows),
        ]);
    }
    let mut t = table_with([
        "pair",
        "sample",
        "policy",
        "job",
        "priority",
        "real vs timeslice",
        "simulated",
        "error",
    ]);
    for v in &s.vs_timeslice {
        t.add_row([
            v.pair.clone(),
            v.sample.name().to_string(),
            v.policy.name().to_string(),
            v.job.clone(),
            role(v.high).to_string(),
            spread(Some(v.real)),
            simulated_text(v),
            signed_pct(v.error, v.within_spread),
        ]);
    }
    format!(
        "against time slicing (time-slicing region over the policy's, per repetition: the high-priority job's speedup, the low-priority job's ratio; {PAPER_FIKIT}), complete pairs\n{f}\n{t}\n"
    )
}

pub(super) fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

/// A simulated figure against time slicing: its median, with its spread
/// over the repetitions where they were predicted with several profiles.
pub(super) fn simulated_text(v: &VsTimeslice) -> String {
    if v.profile_sets > 1 {
        spread(v.simulated_spread)
    } else {
        v.simulated.map_or("-".into(), |x| format!("{x:.2}x"))
    }
}

pub(super) fn spread(s: Option<Spread>) -> String {
    s.map_or("-".into(), |s| {
        format!("{:.2}x [{:.2}-{:.2}]", s.median, s.min, s.max)
    })
}

/// The errors per policy and sample as a text table.
pub(super) fn fits_table<'a>(fits: impl IntoIterator<Item = &'a Fit>) -> comfy_table::Table {
    let mut t = table_with([
        "policy",
        "sample",
        "rows",
        "median |error|",
        "worst |error|",
        "inside the real range",
        "real inside fikit-sim's range",
    ]);
    for f in fits {
        t.add_row([
            f.policy.name().to_string(),
            f.sample.name().to_string(),
            f.rows.to_string(),
            pct(f.median_abs_error),
            pct(f.worst_abs_error),
            format!("{}/{}", f.within_spread, f.rows),
            sim_range_count(f),
        ]);
    }
    t
}

/// How many rows' real median lies inside fikit-sim's range, of those with
/// one: "5/6", or "-" without any.
pub(super) fn sim_range_count(f: &Fit) -> String {
    if f.with_sim_range == 0 {
        "-".into()
    } else {
        format!("{}/{}", f.in_sim_range, f.with_sim_range)
    }
}

/// A row's simulated slowdown with fikit-sim's range where it has one,
/// `1.32x [1.21-1.44]`, else `1.32x`; "-" without a prediction.
pub(super) fn sim_with_range(row: &Row) -> String {
    match (row.sim_slowdown, row.sim_slowdown_range) {
        (Some(s), Some([lo, hi])) => format!("{:.2}x [{lo:.2}-{hi:.2}]", s.median),
        (Some(s), None) => format!("{:.2}x", s.median),
        _ => "-".into(),
    }
}

/// An exclusive row's [`Row::profile_vs_alone`]: "1.02x", or "1.31x
/// (off)" for a profile off the real runs alone; "-" in other rows.
pub(super) fn profile_vs_alone(row: &Row) -> String {
    row.profile_vs_alone().map_or("-".into(), |(r, off)| {
        format!("{r:.2}x{}", if off { " (off)" } else { "" })
    })
}

/// The summary as text: the errors per policy and sample, then every row.
pub fn summary_text(s: &Summary) -> String {
    let t = fits_table(&s.fits);
    // A titled table of more fits, where there are any.
    let section = |title: &str, fits: &[Fit]| {
        if fits.is_empty() {
            String::new()
        } else {
            format!("{title}\n{}\n", fits_table(fits))
        }
    };
    let per_iteration = section(
        "the same per iteration (mean iteration under the policy over alone, per repetition; the set-up before the first iteration left out)",
        &s.per_iteration_fits,
    ) + &section(
        "the slowdown again over the pairs with no profile off its runs alone (named at the end)",
        &s.fits_on_true_profiles,
    ) + &section(
        "the latency-critical job's p99 iteration, simulated against real (the median over repetitions; no real range)",
        &s.p99_fits,
    );
    let mut r = table_with([
        "pair",
        "sample",
        "policy",
        "job",
        "prio",
        "co-runs",
        "real slowdown",
        "simulated",
        "error",
        "per iteration",
        "simulated",
        "error",
        "host vs alone",
        "profile vs alone",
    ]);
    for x in &s.rows {
        let row = &x.row;
        r.add_row([
            x.pair.clone(),
            x.sample.name().to_string(),
            row.policy.name().to_string(),
            row.job.clone(),
            row.priority.to_string(),
            row.co_runs
                .map_or("-".into(), |c| format!("{c}/{}", row.ok_runs)),
            spread(row.slowdown),
            sim_with_range(row),
            signed_pct(row.error, row.within_spread),
            spread(row.per_iteration),
            row.sim_per_iteration
                .map_or("-".into(), |s| format!("{:.2}x", s.median)),
            signed_pct(row.per_iteration_error, row.per_iteration_within),
            spread(row.host_vs_alone),
            profile_vs_alone(row),
        ]);
    }
    let mut out = format!(
        "simulated against real slowdown, per policy and sample (error: (simulated - real) / real of the medians; in range: the simulated median inside the real range)\n{t}\n{per_iteration}{r}\n{}",
        vs_timeslice_text(s)
    );
    if !s.missing.is_empty() {
        out.push_str(&format!("not run yet: {}\n", s.missing.join(", ")));
    }
    if !s.incomplete.is_empty() {
        out.push_str(&format!(
            "incomplete (rows shown, not counted above): {}\n",
            s.incomplete.join(", ")
        ));
    }
    if !s.mixed_machines.is_empty() {
        let each: Vec<String> = s
            .mixed_machines
            .iter()
            .map(|m| {
                let runs: Vec<String> = m
                    .machines
                    .iter()
                    .map(|(h, n)| format!("{n} on {h}"))
                    .collect();
                format!("{} ({})", m.pair, runs.join(", "))
            })
            .collect();
        out.push_str(&format!(
            "runs from more than one machine (their ratios compare machines as well as policies; run such a pair whole in one call): {}\n",
            each.join("; ")
        ));
    }
    if !s.off_profiles.is_empty() {
        out.push_str(&format!("{}\n", off_profiles_line(&s.off_profiles)));
    }
    out
}

/// The summary's line naming profiles off their runs alone.
pub(super) fn off_profiles_line(off: &[OffProfile]) -> String {
    let each: Vec<String> = off
        .iter()
        .map(|p| {
            format!(
                "{} {} ({:.2}x: {:.0} against {:.0} ms)",
                p.pair,
                p.job,
                p.profile_region_ms / p.real_region_ms,
                p.profile_region_ms,
                p.real_region_ms
            )
        })
        .collect();
    format!(
        "profiles off their jobs' runs alone (region replayed alone against the real ones: outside their range and more than {:.0}% from their median; recorded while the host ran slower or faster, so every prediction of the pair rests on that; profile again): {}",
        crate::report::PROFILE_TOLERANCE * 100.0,
        each.join(", ")
    )
}

pub(super) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The HTML class of an error cell: `in` inside the real range, `far` over 25%.
pub(super) fn error_class(within: Option<bool>, error: Option<f64>) -> &'static str {
    match (within, error) {
        (Some(true), _) => " class=\"in\"",
        (_, Some(e)) if e.abs() > 0.25 => " class=\"far\"",
        _ => "",
    }
}

/// The summary as one self-contained HTML page.
pub fn summary_html(set: &Set, s: &Summary) -> String {
    let mut h = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>fikit-run: validation set</title>\
         <style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}\
         td,th{border:1px solid #bbb;padding:3px 8px;text-align:right}td:first-child,th{text-align:left}\
         .in{background:#e6f4e6}.far{background:#fbe3e3}</style></head><body>\n<h1>Simulated against real slowdown</h1>\n",
    );
    if !set.about.is_empty() {
        h.push_str(&format!("<p>{}</p>\n", esc(&set.about)));
    }
    let fits_html = |h: &mut String, fits: &[Fit]| {
        h.push_str("<table><tr><th>policy</th><th>sample</th><th>rows</th><th>median |error|</th><th>worst |error|</th><th>inside the real range</th><th>real inside fikit-sim's range</th></tr>\n");
        for f in fits {
            h.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}/{}</td><td>{}</td></tr>\n",
                f.policy.name(),
                f.sample.name(),
                f.rows,
                pct(f.median_abs_error),
                pct(f.worst_abs_error),
                f.within_spread,
                f.rows,
                sim_range_count(f)
            ));
        }
        h.push_str("</table>\n");
    };
    fits_html(&mut h, &s.fits);
    if !s.per_iteration_fits.is_empty() {
        h.push_str("<p>The same per iteration (mean iteration under the policy over alone, per repetition; the set-up before the first iteration left out):</p>\n");
        fits_html(&mut h, &s.per_iteration_fits);
    }
    if !s.fits_on_true_profiles.is_empty() {
        h.push_str("<p>The slowdown again over the pairs with no profile off its runs alone (named at the end):</p>\n");
        fits_html(&mut h, &s.fits_on_true_profiles);
    }
    if !s.p99_fits.is_empty() {
        h.push_str("<p>The latency-critical job's p99 iteration, simulated against real (the median over repetitions; no real range):</p>\n");
        fits_html(&mut h, &s.p99_fits);
    }
    h.push_str("<table><tr><th>pair</th><th>sample</th><th>policy</th><th>job</th><th>prio</th><th>co-runs</th><th>real slowdown</th><th>simulated</th><th>error</th><th>per iteration</th><th>simulated</th><th>error</th><th>host vs alone</th><th>profile vs alone</th></tr>\n");
    for x in &s.rows {
        let row = &x.row;
        let class = error_class(row.within_spread, row.error);
        let iclass = error_class(row.per_iteration_within, row.per_iteration_error);
        h.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td{class}>{}</td><td>{}</td><td>{}</td><td{iclass}>{}</td><td>{}</td><td>{}</td></tr>\n",
            esc(&x.pair),
            x.sample.name(),
            row.policy.name(),
            esc(&row.job),
            row.priority,
            row.co_runs.map_or("-".into(), |c| format!("{c}/{}", row.ok_runs)),
            spread(row.slowdown),
            row.sim_slowdown.map_or("-".into(), |s| format!("{:.2}x", s.median)),
            row.error.map_or("-".into(), |e| format!("{:+.1}%", e * 100.0)),
            spread(row.per_iteration),
            row.sim_per_iteration.map_or("-".into(), |s| format!("{:.2}x", s.median)),
            row.per_iteration_error.map_or("-".into(), |e| format!("{:+.1}%", e * 100.0)),
            spread(row.host_vs_alone),
            profile_vs_alone(row),
        ));
    }
    h.push_str("</table>\n");
    if !s.vs_timeslice.is_empty() {
        h.push_str(&format!(
            "<h2>Against time slicing</h2>\n<p>The time-slicing region over the policy's, per repetition: the high-priority job's speedup, the low-priority job's ratio ({PAPER_FIKIT}); complete pairs.</p>\n<table><tr><th>policy</th><th>job</th><th>sample</th><th>pairs</th><th>median |error|</th><th>worst |error|</th><th>inside the real range</th></tr>\n"
        ));
        for v in &s.vs_fits {
            h.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}/{}</td></tr>\n",
                v.policy.name(),
                role(v.high),
                v.sample.name(),
                v.rows,
                pct(v.median_abs_error),
                pct(v.worst_abs_error),
                v.within_spread,
                v.rows
            ));
        }
        h.push_str("</table>\n<table><tr><th>pair</th><th>sample</th><th>policy</th><th>job</th><th>priority</th><th>real vs timeslice</th><th>simulated</th><th>error</th></tr>\n");
        for v in &s.vs_timeslice {
            let class = error_class(v.within_spread, v.error);
            h.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td{class}>{}</td></tr>\n",
                esc(&v.pair),
                v.sample.name(),
                v.policy.name(),
                esc(&v.job),
                role(v.high),
                spread(Some(v.real)),
                simulated_text(v),
                v.error.map_or("-".into(), |e| format!("{:+.1}%", e * 100.0)),
            ));
        }
        h.push_str("</table>\n");
    }
    if !s.missing.is_empty() {
        h.push_str(&format!(
            "<p>Not run yet: {}</p>\n",
            esc(&s.missing.join(", "))
        ));
    }
    if !s.incomplete.is_empty() {
        h.push_str(&format!(
            "<p>Incomplete (rows shown, not counted above): {}</p>\n",
            esc(&s.incomplete.join(", "))
        ));
    }
    for m in &s.mixed_machines {
        let runs: Vec<String> = m
            .machines
            .iter()
            .map(|(h, n)| format!("{n} on {}", esc(h)))
            .collect();
        h.push_str(&format!(
            "<p>Runs from more than one machine (ratios compare machines as well as policies): {} ({})</p>\n",
            esc(&m.pair),
            runs.join(", ")
        ));
    }
    if !s.off_profiles.is_empty() {
        h.push_str(&format!(
            "<p>{}</p>\n",
            esc(&off_profiles_line(&s.off_profiles))
        ));
    }
    h.push_str("</body></html>\n");
    h
}
