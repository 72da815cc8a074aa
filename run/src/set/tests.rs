//! The set's tests: loading and checking, the summary, combining summaries.

use super::*;
use crate::report::GateStats;

fn set(pairs: serde_json::Value) -> Result<Set, String> {
    let mut s: Set = serde_json::from_value(serde_json::json!({
        "jobs": {
            "hi": {"priority": 0, "command": ["true"]},
            "lo": {"priority": 9, "command": ["true"]}
        },
        "pairs": pairs
    }))
    .map_err(|e| e.to_string())?;
    s.check()?;
    Ok(s)
}

#[test]
fn the_real_validation_set_loads() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lab/validate/real-set.json");
    let s = Set::load(&path).unwrap();
    assert_eq!(s.pairs.len(), 12);
    assert_eq!(
        s.pairs.iter().filter(|p| p.sample == Sample::Out).count(),
        6
    );
    assert!(s.policies.contains(&RunPolicy::Mps) && s.policies.contains(&RunPolicy::Timeslice));
    // Every pair puts a latency-critical job beside a throughput job.
    for p in &s.pairs {
        let prio: Vec<u8> = p.jobs.iter().map(|j| s.jobs[j].priority).collect();
        assert_eq!(prio, [0, 9], "{}", p.name);
    }
}

#[test]
fn every_validation_set_loads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lab/validate");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "json") {
            let s = Set::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(!s.pairs.is_empty(), "{}", path.display());
            n += 1;
        }
    }
    assert!(n >= 7, "{n} sets in {}", dir.display());
}

#[test]
fn a_set_names_what_is_wrong() {
    let ok =
        set(serde_json::json!([{"name": "a", "jobs": ["hi", "lo"], "sample": "out"}])).unwrap();
    assert_eq!(
        ok.policies,
        [RunPolicy::Exclusive, RunPolicy::Timeslice, RunPolicy::Mps]
    );
    assert_eq!(ok.used_jobs(), ["hi", "lo"]);
    assert_eq!(ok.profiles, 1);
    // Profiles per job: 1 to MAX_PROFILES.
    let with_profiles = |n: usize| {
        let mut s = ok.clone();
        s.profiles = n;
        s.check()
    };
    assert!(with_profiles(3).is_ok());
    assert!(
        with_profiles(0)
            .unwrap_err()
            .contains("profiles: 0; use 1 to 9")
    );
    assert!(with_profiles(MAX_PROFILES + 1).is_err());
    let err = |p| set(p).unwrap_err();
    assert!(
        err(serde_json::json!([{"name": "a", "jobs": ["hi", "x"], "sample": "in"}]))
            .contains("pairs[0].jobs: \"x\" is not in jobs")
    );
    assert!(
        err(serde_json::json!([{"name": "a+b", "jobs": ["hi", "lo"], "sample": "in"}]))
            .contains("pairs[0].name: \"a+b\"")
    );
    assert!(
        err(serde_json::json!([
            {"name": "a", "jobs": ["hi", "lo"], "sample": "in"},
            {"name": "a", "jobs": ["lo", "hi"], "sample": "in"}
        ]))
        .contains("pairs[1].name: \"a\" is used twice")
    );
    assert!(
        err(serde_json::json!([{"name": "a", "jobs": ["hi"], "sample": "in"}]))
            .contains("pairs[0].jobs: a pair has 2 jobs or more")
    );
    assert!(
        err(serde_json::json!([{"name": "a", "jobs": ["hi", "lo"], "sample": "maybe"}]))
            .contains("unknown variant `maybe`")
    );
    assert!(err(serde_json::json!([])).contains("pairs: none"));
    assert!(
        err(serde_json::json!([{"name": "summary.json", "jobs": ["hi", "lo"], "sample": "in"}]))
            .contains("pairs[0].name: \"summary.json\"")
    );
    let mut bad_job: Set = serde_json::from_value(serde_json::json!({
        "jobs": {"../x": {"priority": 0, "command": ["true"]}, "lo": {"priority": 9, "command": ["true"]}},
        "pairs": [{"name": "a", "jobs": ["../x", "lo"], "sample": "in"}]
    }))
    .unwrap();
    assert!(
        bad_job
            .check()
            .unwrap_err()
            .contains("jobs.\"../x\": a job's name")
    );
}

fn row(policy: RunPolicy, job: &str, real: f64, range: (f64, f64), sim: f64) -> Row {
    Row {
        policy,
        job: job.into(),
        priority: 0,
        ok_runs: 3,
        runs: 3,
        region_ms: None,
        sim_region_ms: None,
        slowdown: Some(Spread {
            median: real,
            min: range.0,
            max: range.1,
        }),
        slowdowns: vec![range.0, real, range.1],
        vs_timeslice: None,
        sim_vs_timeslice: None,
        per_iteration: None,
        sim_per_iteration: None,
        per_iteration_error: None,
        per_iteration_within: None,
        p50_ms: None,
        p99_ms: None,
        p999_ms: None,
        sim_p50_ms: None,
        sim_p99_ms: None,
        sim_p999_ms: None,
        sim_slowdown_range: None,
        sim_p99_range_ms: None,
        sim_held_waits: None,
        sim_held_wait_ms: None,
        sim_fills: None,
        overlap: None,
        co_runs: Some(3),
        sim_slowdown: Some(Spread {
            median: sim,
            min: sim,
            max: sim,
        }),
        sim_slowdowns: vec![sim],
        error: Some((sim - real) / real),
        within_spread: Some(range.0 <= sim && sim <= range.1),
        in_sim_range: None,
        p99_in_sim_range: None,
        fill_share: None,
        sim_fill_share: None,
        busy_share: None,
        gate: GateStats::default(),
        launch_us: None,
        host_vs_alone: None,
    }
}

#[test]
fn combined_summaries_set_every_complete_rows_errors_together() {
    use RunPolicy::{Exclusive, Mps};
    let d = tempfile::tempdir().unwrap();
    let summary_row = |pair: &str, sample: Sample, row: Row| SummaryRow {
        pair: pair.into(),
        sample,
        row,
        profile_sets: 1,
    };
    // Machine a: errors -10% and +5% out of sample, +20% in sample,
    // an exclusive row (no error).
    let a = serde_json::json!({"rows": [
        summary_row("p1", Sample::Out, row(Mps, "hi", 2.0, (1.8, 2.2), 1.8)),
        summary_row("p1", Sample::Out, row(Mps, "lo", 1.0, (1.0, 1.0), 1.05)),
        summary_row("p2", Sample::In, row(Mps, "hi", 1.0, (1.0, 1.0), 1.2)),
        summary_row("p1", Sample::Out, Row {
            error: None,
            sim_slowdown: None,
            ..row(Exclusive, "hi", 1.0, (1.0, 1.0), 1.0)
        }),
    ], "incomplete": []});
    // Machine b: -40% out of sample, and an incomplete pair's +90%,
    // which does not count.
    let b = serde_json::json!({"rows": [
        summary_row("p1", Sample::Out, row(Mps, "hi", 2.0, (1.0, 3.0), 1.2)),
        summary_row("p3", Sample::Out, row(Mps, "hi", 1.0, (1.0, 1.0), 1.9)),
    ], "incomplete": ["p3"]});
    let (fa, fb) = (d.path().join("a.json"), d.path().join("b.json"));
    std::fs::write(&fa, a.to_string()).unwrap();
    std::fs::write(&fb, b.to_string()).unwrap();
    let c = combine(&[fa.clone(), fb.clone()], Combine::Rows).unwrap();
    assert_eq!(c.sources, vec![(fa.clone(), 3), (fb.clone(), 1)]);
    // Out of sample: |-10%|, |+5%|, |-40%|: median 10%, worst 40% (b's
    // p1 hi), one inside its range (b's 1.2 in 1.0-3.0) and a's lo at
    // 1.05 outside 1.0-1.0.
    let (f, w) = c
        .fits
        .iter()
        .find(|(f, _)| f.sample == Sample::Out)
        .unwrap();
    assert_eq!((f.policy, f.rows, f.within_spread), (Mps, 3, 2));
    assert!((f.median_abs_error - 0.10).abs() < 1e-9, "{f:?}");
    assert!((f.worst_abs_error - 0.40).abs() < 1e-9, "{f:?}");
    assert_eq!(
        (w.source.as_ref(), w.pair.as_str(), w.job.as_str()),
        (Some(&fb), "p1", "hi")
    );
    assert!((w.error + 0.40).abs() < 1e-9);
    let (inside, _) = c.fits.iter().find(|(f, _)| f.sample == Sample::In).unwrap();
    assert_eq!(inside.rows, 1);
    let text = combined_text(&c);
    assert!(text.contains("worst mps out: hi in p1, -40.0%"), "{text}");
    assert!(text.contains("b.json (1 rows with an error)"), "{text}");
    // Bad input names the file.
    std::fs::write(&fb, "{\"pairs\": 1}").unwrap();
    let e = combine(&[fa, fb], Combine::Rows).unwrap_err();
    assert!(
        e.contains("b.json: not a fikit-run set summary.json"),
        "{e}"
    );
}

#[test]
fn pooled_summaries_take_each_jobs_median_over_every_repetition() {
    use RunPolicy::Mps;
    let d = tempfile::tempdir().unwrap();
    let summary_row = |pair: &str, row: Row| SummaryRow {
        pair: pair.into(),
        sample: Sample::Out,
        row,
        profile_sets: 1,
    };
    // "hi" on machine a: 1.4, 1.5, 1.7 (median 1.5), predicted 1.0 each:
    // -33% there. On machine b: 1.0, 1.05, 1.1, predicted 1.0: -5%.
    // Pooled: 1.0, 1.05, 1.1, 1.4, 1.5, 1.7, median (1.1 + 1.4) / 2 =
    // 1.25; predicted 1.0 six times: -20%, inside 1.0-1.7 at its
    // least. "lo" only on a: 1.8 against 2.0, -10%, outside 1.9-2.1.
    // fikit-sim's range for hi: 0.9-1.3 on a (missing a's 1.5), 0.95-1.2
    // on b (holding b's 1.05); pooled 0.9-1.3, holding the pooled 1.25.
    let hi = |reps: [f64; 3], sim: f64, range: [f64; 2]| Row {
        slowdowns: reps.to_vec(),
        sim_slowdowns: vec![sim; 3],
        sim_slowdown_range: Some(range),
        in_sim_range: Some(range[0] <= reps[1] && reps[1] <= range[1]),
        ..row(Mps, "hi", reps[1], (reps[0], reps[2]), sim)
    };
    let a = serde_json::json!({"rows": [
        summary_row("p1", hi([1.4, 1.5, 1.7], 1.0, [0.9, 1.3])),
        summary_row("p1", row(Mps, "lo", 2.0, (1.9, 2.1), 1.8)),
    ], "incomplete": []});
    let b = serde_json::json!({"rows": [
        summary_row("p1", hi([1.0, 1.05, 1.1], 1.0, [0.95, 1.2])),
    ], "incomplete": []});
    let (fa, fb) = (d.path().join("a.json"), d.path().join("b.json"));
    std::fs::write(&fa, a.to_string()).unwrap();
    std::fs::write(&fb, b.to_string()).unwrap();
    let rows = combine(&[fa.clone(), fb.clone()], Combine::Rows).unwrap();
    let (f, w) = &rows.fits[0];
    assert_eq!(f.rows, 3);
    assert!(
        (f.worst_abs_error - (1.0 - 1.5) / -1.5).abs() < 1e-9,
        "{f:?}"
    );
    assert_eq!(w.source.as_ref(), Some(&fa));
    assert_eq!((f.with_sim_range, f.in_sim_range), (2, 1), "{f:?}");
    let pooled = combine(&[fa.clone(), fb.clone()], Combine::Pool).unwrap();
    let (f, w) = &pooled.fits[0];
    assert_eq!((f.rows, f.within_spread), (2, 1), "{f:?}");
    assert_eq!((f.with_sim_range, f.in_sim_range), (1, 1), "{f:?}");
    // |-20%| and |-10%|: median 15%, worst 20%, the pooled hi.
    assert!((f.worst_abs_error - 0.20).abs() < 1e-9, "{f:?}");
    assert!((f.median_abs_error - 0.15).abs() < 1e-9, "{f:?}");
    assert_eq!((w.source.as_ref(), w.job.as_str()), (None, "hi"));
    let text = combined_text(&pooled);
    assert!(text.contains("hi in p1, -20.0% (pooled)"), "{text}");
    assert!(text.contains("repetitions pooled"), "{text}");
    // Each job once, with the summaries it comes from: hi from both
    // (six co-runs, 1.25x over 1.0-1.7), lo from a alone.
    let row_of = |text: &str, job: &str| -> Vec<String> {
        let line = text
            .lines()
            .find(|l| l.split('┆').nth(3).is_some_and(|c| c.trim() == job))
            .unwrap_or_else(|| panic!("no row of {job}: {text}"));
        line.trim_matches(|c| c == '│' || c == ' ')
            .split('┆')
            .map(|c| c.trim().to_string())
            .collect()
    };
    assert_eq!(
        row_of(&text, "hi")[4..],
        [
            "[1, 2]",
            "6",
            "1.25x [1.00-1.70]",
            "1.00x",
            "-20.0% (in range)"
        ]
    );
    assert_eq!(row_of(&text, "lo")[4..6], ["[1]", "3"]);
    assert_eq!(pooled.rows.len(), 2);
    // Unpooled, hi has a row per summary.
    let text = combined_text(&rows);
    assert_eq!(rows.rows.len(), 3);
    assert!(text.contains("[2] "), "{text}");
    assert_eq!(row_of(&text, "hi")[4..7], ["[1]", "3", "1.50x [1.40-1.70]"]);
    // A summary without the repetitions' figures cannot be pooled; it
    // is named, with the way to rebuild it.
    let old = serde_json::json!({"rows": [summary_row("p1", Row {
        slowdowns: Vec::new(),
        ..row(Mps, "hi", 1.5, (1.4, 1.7), 1.0)
    })], "incomplete": []});
    std::fs::write(&fb, old.to_string()).unwrap();
    let e = combine(&[fa.clone(), fb.clone()], Combine::Pool).unwrap_err();
    assert!(
        e.contains("b.json: hi in p1 (mps) has no per-repetition"),
        "{e}"
    );
    assert!(combine(&[fa.clone(), fb.clone()], Combine::Rows).is_ok());
    // With its runs alone exited 0, b's three repetitions are read back
    // from its spreads (1.0, 1.05, 1.1; 1.0 three times), and pool as
    // the figures themselves did.
    let from_spreads = serde_json::json!({"rows": [
        summary_row("p1", Row {
            slowdowns: Vec::new(),
            sim_slowdowns: Vec::new(),
            sim_slowdown: Some(Spread { median: 1.0, min: 1.0, max: 1.0 }),
            sim_slowdown_range: Some([0.95, 1.2]),
            ..row(Mps, "hi", 1.05, (1.0, 1.1), 1.0)
        }),
        summary_row("p1", Row {
            co_runs: None,
            error: None,
            ..row(RunPolicy::Exclusive, "hi", 1.0, (1.0, 1.0), 1.0)
        }),
    ], "incomplete": []});
    std::fs::write(&fb, from_spreads.to_string()).unwrap();
    let again = combine(&[fa, fb], Combine::Pool).unwrap();
    assert_eq!(again.fits, pooled.fits);
}

#[test]
fn the_summary_splits_errors_by_policy_and_sample() {
    let s = set(serde_json::json!([
        {"name": "p1", "jobs": ["hi", "lo"], "sample": "in"},
        {"name": "p2", "jobs": ["hi", "lo"], "sample": "out"},
        {"name": "p3", "jobs": ["hi", "lo"], "sample": "out"},
        {"name": "p4", "jobs": ["hi", "lo"], "sample": "out"}
    ]))
    .unwrap();
    let d = tempfile::tempdir().unwrap();
    let write = |pair: &str, rows: Vec<Row>| {
        std::fs::create_dir_all(d.path().join(pair)).unwrap();
        std::fs::write(
            d.path().join(pair).join("run.json"),
            serde_json::json!({ "rows": rows }).to_string(),
        )
        .unwrap();
    };
    use RunPolicy::{Mps, Timeslice};
    // In sample: timeslice hi real 2.0, sim 1.5 (-25%).
    write("p1", vec![row(Timeslice, "hi", 2.0, (1.8, 2.2), 1.5)]);
    // p1's job alone: its profile replays in 150 ms, the real job in
    // 95-105 (median 100): a slow profile.
    let mut alone = row(RunPolicy::Exclusive, "hi", 1.0, (1.0, 1.0), 1.0);
    alone.region_ms = Some(Spread {
        median: 100.0,
        min: 95.0,
        max: 105.0,
    });
    alone.sim_region_ms = Some(150.0);
    let mut p1: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path().join("p1/run.json")).unwrap()).unwrap();
    p1["rows"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::to_value(&alone).unwrap());
    std::fs::write(d.path().join("p1/run.json"), p1.to_string()).unwrap();
    // Out of sample: timeslice +10% (in range); mps -50%, but per
    // iteration -20%.
    // fikit-sim's ranges: timeslice 1.0-1.2 holds the real 1.0, mps
    // 1.2-1.8 misses the real 3.0.
    let mut mps = row(Mps, "hi", 3.0, (2.5, 3.5), 1.5);
    (mps.per_iteration_error, mps.per_iteration_within) = (Some(-0.2), Some(false));
    (mps.sim_slowdown_range, mps.in_sim_range) = (Some([1.2, 1.8]), Some(false));
    let mut ts = row(Timeslice, "hi", 1.0, (0.9, 1.2), 1.1);
    (ts.sim_slowdown_range, ts.in_sim_range) = (Some([1.0, 1.2]), Some(true));
    write("p2", vec![ts, mps]);
    // p3 has no run.json yet; p4 stopped early: shown, not counted.
    std::fs::create_dir_all(d.path().join("p4")).unwrap();
    std::fs::write(
        d.path().join("p4").join("run.json"),
        serde_json::json!({
            "rows": [row(Mps, "hi", 1.0, (1.0, 1.0), 9.0)],
            "complete": false,
            // Two machines: flagged.
            "rounds": [
                {"jobs": [{"host": "a 1"}, {"host": "a 1"}]},
                {"jobs": [{"host": "b 2"}, {}]}
            ]
        })
        .to_string(),
    )
    .unwrap();
    // p2's rounds: one machine, and runs from before machines were kept.
    let mut p2: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path().join("p2/run.json")).unwrap()).unwrap();
    p2["rounds"] = serde_json::json!([{"jobs": [{"host": "a 1"}, {}]}, {"jobs": [{}, {}]}]);
    std::fs::write(d.path().join("p2/run.json"), p2.to_string()).unwrap();
    let sum = summarize(&s, d.path()).unwrap();
    assert_eq!(sum.missing, ["p3"]);
    assert_eq!(sum.incomplete, ["p4"]);
    assert_eq!(
        sum.mixed_machines,
        [MixedMachines {
            pair: "p4".into(),
            machines: vec![("a 1".into(), 2), ("b 2".into(), 1)],
        }]
    );
    assert_eq!(sum.rows.len(), 5, "p1's two, p2's two, p4's one");
    let fit = |p: RunPolicy, sample: Sample| {
        sum.fits
            .iter()
            .find(|f| f.policy == p && f.sample == sample)
            .map(|f| {
                (
                    f.rows,
                    (f.median_abs_error * 1000.0).round() / 1000.0,
                    (f.worst_abs_error * 1000.0).round() / 1000.0,
                    f.within_spread,
                )
            })
    };
    assert_eq!(fit(Timeslice, Sample::In), Some((1, 0.25, 0.25, 0)));
    assert_eq!(fit(Timeslice, Sample::Out), Some((1, 0.1, 0.1, 1)));
    assert_eq!(fit(Mps, Sample::Out), Some((1, 0.5, 0.5, 0)));
    assert_eq!(fit(Mps, Sample::In), None);
    let ranges = |p: RunPolicy, sample: Sample| {
        sum.fits
            .iter()
            .find(|f| f.policy == p && f.sample == sample)
            .map(|f| (f.with_sim_range, f.in_sim_range))
    };
    assert_eq!(ranges(Timeslice, Sample::Out), Some((1, 1)));
    assert_eq!(ranges(Mps, Sample::Out), Some((1, 0)));
    assert_eq!(ranges(Timeslice, Sample::In), Some((0, 0)));
    // Per iteration: only the row that has it.
    assert_eq!(sum.per_iteration_fits.len(), 1);
    let f = &sum.per_iteration_fits[0];
    assert_eq!((f.policy, f.sample, f.rows), (Mps, Sample::Out, 1));
    assert!((f.worst_abs_error - 0.2).abs() < 1e-12);
    let text = summary_text(&sum);
    assert!(text.contains("the same per iteration"), "{text}");
    assert_eq!(
        sum.off_profiles,
        [OffProfile {
            pair: "p1".into(),
            job: "hi".into(),
            profile_region_ms: 150.0,
            real_region_ms: 100.0
        }]
    );
    assert!(
        text.contains("profile again): p1 hi (1.50x: 150 against 100 ms)"),
        "{text}"
    );
    assert!(text.contains("1.50x (off)"), "{text}");
    // Without p1 (its profile off), the in-sample time-slicing row goes;
    // p2's stay.
    let true_fit = |p: RunPolicy, sample: Sample| {
        sum.fits_on_true_profiles
            .iter()
            .find(|f| f.policy == p && f.sample == sample)
            .map(|f| f.rows)
    };
    assert_eq!(true_fit(Timeslice, Sample::In), None);
    assert_eq!(true_fit(Timeslice, Sample::Out), Some(1));
    assert_eq!(true_fit(Mps, Sample::Out), Some(1));
    assert!(
        text.contains("the slowdown again over the pairs with no profile off"),
        "{text}"
    );
    assert!(text.contains("not run yet: p3"), "{text}");
    assert!(
        text.contains("incomplete (rows shown, not counted above): p4"),
        "{text}"
    );
    assert!(
        text.contains("policies; run such a pair whole in one call): p4 (2 on a 1, 1 on b 2)\n"),
        "{text}"
    );
    assert!(text.contains("+10.0% (in range)"), "{text}");
    assert!(text.contains("1.10x [1.00-1.20]"), "{text}");
    let html = summary_html(&s, &sum);
    assert!(html.contains("<td>1/1</td><td>1/1</td>"), "{html}");
    assert!(html.contains("<td class=\"far\">-50.0%</td>"), "{html}");
    // A complete run with no rows (an edited or broken file) would drop its
    // pair from the summary unnamed: refused, naming the file.
    std::fs::write(
        d.path().join("p4").join("run.json"),
        serde_json::json!({"rows": [], "complete": true, "rounds": []}).to_string(),
    )
    .unwrap();
    let e = summarize(&s, d.path()).unwrap_err();
    assert!(
        e.ends_with(
            "p4/run.json: a complete run with no rows (fikit-run writes one a job and policy)"
        ),
        "{e}"
    );
}

#[test]
fn the_summary_sets_fikit_against_time_slicing_per_role() {
    let s = set(serde_json::json!([
        {"name": "p1", "jobs": ["hi", "lo"], "sample": "out"},
        {"name": "p2", "jobs": ["hi", "lo"], "sample": "out"},
        {"name": "p3", "jobs": ["hi", "lo"], "sample": "out"}
    ]))
    .unwrap();
    let d = tempfile::tempdir().unwrap();
    let vs = |policy, job: &str, prio, real: (f64, f64, f64), sim: f64| {
        let mut r = row(policy, job, 1.0, (1.0, 1.0), 1.0);
        r.priority = prio;
        r.vs_timeslice = Some(Spread {
            median: real.0,
            min: real.1,
            max: real.2,
        });
        r.sim_vs_timeslice = Some(Spread {
            median: sim,
            min: sim,
            max: sim,
        });
        r
    };
    let write = |pair: &str, rows: Vec<Row>, complete: bool| {
        std::fs::create_dir_all(d.path().join(pair)).unwrap();
        std::fs::write(
            d.path().join(pair).join("run.json"),
            serde_json::json!({ "rows": rows, "complete": complete }).to_string(),
        )
        .unwrap();
    };
    use RunPolicy::{Fikit, Timeslice};
    // p1: hi 1.5x real, 1.2x simulated (-20%); lo 0.8x real, 0.84x (+5%, in range).
    write(
        "p1",
        vec![
            vs(Timeslice, "hi", 0, (1.0, 1.0, 1.0), 1.0),
            vs(Fikit, "hi", 0, (1.5, 1.4, 1.6), 1.2),
            vs(Fikit, "lo", 9, (0.8, 0.7, 0.9), 0.84),
        ],
        true,
    );
    // p2: hi 2.0x real, 2.2x (+10%); lo 1.0x, 0.9x (-10%).
    write(
        "p2",
        vec![
            vs(Fikit, "hi", 0, (2.0, 2.0, 2.0), 2.2),
            vs(Fikit, "lo", 9, (1.0, 1.0, 1.0), 0.9),
        ],
        true,
    );
    // p3 stopped early: not counted.
    write("p3", vec![vs(Fikit, "hi", 0, (9.0, 9.0, 9.0), 1.0)], false);
    let sum = summarize(&s, d.path()).unwrap();
    // No profile off: no second set of fits.
    assert!(sum.fits_on_true_profiles.is_empty());
    // Time slicing against itself is no figure; p3 is left out.
    assert_eq!(sum.vs_timeslice.len(), 4);
    assert!(sum.vs_timeslice.iter().all(|v| v.policy == Fikit));
    let hi: Vec<bool> = sum.vs_timeslice.iter().map(|v| v.high).collect();
    assert_eq!(hi, [true, false, true, false]);
    let fit = |high: bool| {
        let f = sum
            .vs_fits
            .iter()
            .find(|f| f.high == high && f.sample == Sample::Out)
            .unwrap();
        (
            f.rows,
            (f.median_abs_error * 1000.0).round() / 1000.0,
            (f.worst_abs_error * 1000.0).round() / 1000.0,
            f.within_spread,
        )
    };
    assert_eq!(fit(true), (2, 0.15, 0.2, 0));
    assert_eq!(fit(false), (2, 0.075, 0.1, 1));
    let text = summary_text(&sum);
    assert!(text.contains("1.50x [1.40-1.60]"), "{text}");
    assert!(text.contains("-20.0%"), "{text}");
    assert!(text.contains("+5.0% (in range)"), "{text}");
    assert!(summary_html(&s, &sum).contains("<h2>Against time slicing</h2>"));
    // One profile set: the simulated median alone.
    let p1_high = |text: &str| {
        text.lines()
            .find(|l| l.contains("p1") && l.contains("high"))
            .unwrap()
            .to_string()
    };
    assert!(
        p1_high(&text).contains("┆ 1.20x ") && !p1_high(&text).contains("1.20x ["),
        "{text}"
    );
    assert!(sum.vs_timeslice.iter().all(|v| v.profile_sets == 1));

    // p2 predicted with two profile sets: its simulated spread is shown.
    let mut two = vs(Fikit, "hi", 0, (2.0, 2.0, 2.0), 2.2);
    two.sim_vs_timeslice = Some(Spread {
        median: 2.2,
        min: 1.9,
        max: 2.3,
    });
    std::fs::write(
        d.path().join("p2").join("run.json"),
        serde_json::json!({ "rows": [two], "complete": true, "profile_sets": 2 }).to_string(),
    )
    .unwrap();
    let sum = summarize(&s, d.path()).unwrap();
    let p2 = sum.vs_timeslice.iter().find(|v| v.pair == "p2").unwrap();
    assert_eq!(p2.profile_sets, 2);
    let text = summary_text(&sum);
    assert!(text.contains("2.20x [1.90-2.30]"), "{text}");
    assert!(summary_html(&s, &sum).contains("2.20x [1.90-2.30]"));
    // p1 still one set: its median alone.
    assert!(
        p1_high(&text).contains("┆ 1.20x ") && !p1_high(&text).contains("1.20x ["),
        "{text}"
    );
}

#[test]
fn the_summary_sets_the_latency_critical_jobs_p99_against_the_real_one() {
    let s = set(serde_json::json!([
        {"name": "p1", "jobs": ["hi", "lo"], "sample": "out"},
        {"name": "p2", "jobs": ["hi", "lo"], "sample": "out"}
    ]))
    .unwrap();
    let d = tempfile::tempdir().unwrap();
    // (policy, job, priority, real p99 ms, simulated p99 ms)
    let p99 = |policy, job: &str, priority, real: f64, sim: f64| {
        let mut r = row(policy, job, 1.0, (1.0, 1.0), 1.0);
        (r.priority, r.p99_ms, r.sim_p99_ms) = (priority, Some(real), Some(sim));
        r
    };
    use RunPolicy::{Exclusive, Timeslice};
    for (pair, rows) in [
        (
            "p1",
            vec![
                p99(Exclusive, "hi", 0, 4.0, 4.4),
                p99(Timeslice, "hi", 0, 8.0, 6.0),
                // The partner's p99 is not the latency-critical job's.
                p99(Timeslice, "lo", 9, 10.0, 90.0),
            ],
        ),
        (
            "p2",
            vec![
                p99(Exclusive, "hi", 0, 5.0, 5.0),
                p99(Timeslice, "hi", 0, 10.0, 11.0),
            ],
        ),
    ] {
        std::fs::create_dir_all(d.path().join(pair)).unwrap();
        std::fs::write(
            d.path().join(pair).join("run.json"),
            serde_json::json!({ "rows": rows }).to_string(),
        )
        .unwrap();
    }
    let sum = summarize(&s, d.path()).unwrap();
    let fit = |policy| {
        sum.p99_fits
            .iter()
            .find(|f| f.policy == policy && f.sample == Sample::Out)
            .unwrap_or_else(|| panic!("{:?}", sum.p99_fits))
    };
    // Alone: +10% and 0%; time slicing: -25% and +10%.
    let e = fit(Exclusive);
    assert_eq!(e.rows, 2);
    assert!((e.median_abs_error - 0.05).abs() < 1e-12 && (e.worst_abs_error - 0.1).abs() < 1e-12);
    let t = fit(Timeslice);
    assert_eq!((t.rows, t.within_spread), (2, 0));
    assert!((t.worst_abs_error - 0.25).abs() < 1e-12, "{t:?}");
    assert!(summary_text(&sum).contains("the latency-critical job's p99 iteration"));
}
