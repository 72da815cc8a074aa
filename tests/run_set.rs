//! `fikit-run set` and `fikit-lab combine` without a GPU: a validation
//! set's pairs run, resumed and summarized, its jobs profiled (once per
//! command, each pair's just before its rounds), each repetition predicted
//! from its own profiles, measured pressure weighing MPS, and summaries
//! pooled over machines.

use fikit_e2e::run_json::{b1_beside_b128, job_run};
use fikit_e2e::{bin, cmd, stand_in_collector};
use predicates::prelude::PredicateBooleanExt;

#[test]
fn a_set_runs_each_pair_keeps_complete_ones_and_writes_its_summary() {
    let d = tempfile::tempdir().unwrap();
    // The jobs bring their profiles, so nothing is profiled.
    write_hi_and_lo(d.path());
    let set = d.path().join("set.json");
    let write_set_with = |pairs: serde_json::Value, lo2: &[&str]| {
        write_hi_lo_set(
            d.path(),
            serde_json::json!({
                "about": "two pairs of stand-ins",
                "repetitions": 1,
                "policies": ["exclusive", "timeslice"],
                "jobs": {"lo2": {"priority": 9, "command": lo2, "profile": "lo.parquet"}},
                "pairs": pairs
            }),
        );
    };
    let write_set = |pairs: serde_json::Value| write_set_with(pairs, &["true"]);
    write_set(serde_json::json!([
        {"name": "hi-lo", "jobs": ["hi", "lo"], "sample": "in"},
        {"name": "hi-lo2", "jobs": ["hi", "lo2"], "sample": "out"}
    ]));
    let out = d.path().join("out");
    // The set into `out`, as a command would run it.
    let run_set = || {
        cmd("fikit-run")
            .arg("set")
            .arg(&set)
            .arg("-o")
            .arg(&out)
            .assert()
    };
    // hi runs alone once per repetition: in hi-lo, and hi-lo2 reuses it.
    run_set()
        .code(0)
        .stderr(predicates::str::contains("pair 2/2 hi-lo2 (out sample)"))
        .stderr(
            predicates::str::is_match(r"exclusive repetition 1: [0-9.]+ s \(hi alone from hi-lo\)")
                .unwrap(),
        );
    let alone_from = |pair: &str| -> Vec<serde_json::Value> {
        let run: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join(pair).join("run.json")).unwrap())
                .unwrap();
        run["rounds"][0]["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["alone_from"].clone())
            .collect()
    };
    assert_eq!(
        alone_from("hi-lo"),
        [serde_json::Value::Null, serde_json::Value::Null]
    );
    assert_eq!(
        alone_from("hi-lo2"),
        [serde_json::json!("hi-lo"), serde_json::Value::Null]
    );
    for pair in ["hi-lo", "hi-lo2"] {
        let run: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join(pair).join("run.json")).unwrap())
                .unwrap();
        assert_eq!(run["complete"], true);
        assert_eq!(run["rounds"].as_array().unwrap().len(), 2, "{pair}");
    }
    for f in ["summary.txt", "summary.json", "summary.html"] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let rows = summary["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 8, "2 pairs x 2 policies x 2 jobs");
    assert!(
        rows.iter()
            .any(|r| r["pair"] == "hi-lo2" && r["sample"] == "out")
    );
    // Run again: both pairs are complete and kept; a third runs.
    write_set(serde_json::json!([
        {"name": "hi-lo", "jobs": ["hi", "lo"], "sample": "in"},
        {"name": "hi-lo2", "jobs": ["hi", "lo2"], "sample": "out"},
        {"name": "lo-lo2", "jobs": ["lo", "lo2"], "sample": "out"}
    ]));
    run_set()
        .code(0)
        .stderr(predicates::str::contains("pair 1/3 hi-lo: complete in"))
        .stderr(predicates::str::contains("pair 3/3 lo-lo2 (out sample)"));
    // A job's command changed: the pairs it is in run again.
    write_set_with(
        serde_json::json!([
            {"name": "hi-lo", "jobs": ["hi", "lo"], "sample": "in"},
            {"name": "hi-lo2", "jobs": ["hi", "lo2"], "sample": "out"}
        ]),
        &["true", "again"],
    );
    // Its runs alone in the earlier call's hi-lo are reused as well.
    run_set()
        .code(0)
        .stderr(predicates::str::contains("pair 1/2 hi-lo: complete in"))
        .stderr(predicates::str::contains("pair 2/2 hi-lo2 (out sample)"))
        .stderr(predicates::str::contains("(hi alone from hi-lo)"));
    // Only the pairs asked for run; an unknown one is bad input.
    write_set(serde_json::json!([
        {"name": "hi-lo", "jobs": ["hi", "lo"], "sample": "in"},
        {"name": "lo-hi", "jobs": ["lo", "hi"], "sample": "in"},
        {"name": "lo2-hi", "jobs": ["lo2", "hi"], "sample": "out"}
    ]));
    cmd("fikit-run")
        .arg("set")
        .arg(&set)
        .args(["--pair", "lo-hi", "-o"])
        .arg(&out)
        .assert()
        .code(0)
        .stderr(predicates::str::contains("pair 2/3 lo-hi (in sample)"))
        .stderr(predicates::str::contains(
            "(lo alone from hi-lo, hi alone from hi-lo)",
        ))
        .stderr(predicates::str::contains("pair 1/3").not())
        .stderr(predicates::str::contains("pair 3/3").not())
        .stdout(predicates::str::contains("not run yet: lo2-hi"));
    cmd("fikit-lab")
        .env("FIKIT_COLLECTOR", stand_in_collector())
        .args(["validate", "--real"])
        .arg(&set)
        .args(["--pair", "lo-hi,nope", "--out"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("has no such pair"));
    cmd("fikit-run")
        .arg("set")
        .arg(&set)
        .args(["--pair", "lo-hi,nope", "-o"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--pair \"nope\": "))
        .stderr(predicates::str::contains("has no such pair"));
    // The summary alone, with a pair not run: it says so.
    let hi_lo_and_later = |hi_lo: [&str; 2]| {
        write_set(serde_json::json!([
            {"name": "hi-lo", "jobs": hi_lo, "sample": "in"},
            {"name": "later", "jobs": ["hi", "lo"], "sample": "out"}
        ]))
    };
    let summary = |of: &std::path::Path| {
        cmd("fikit-run")
            .arg("summary")
            .arg(&set)
            .arg("-o")
            .arg(of)
            .assert()
    };
    hi_lo_and_later(["hi", "lo"]);
    summary(&out)
        .code(0)
        .stdout(predicates::str::contains("not run yet: later"));
    // A mistyped OUT would read as every pair not run yet.
    summary(&out.join("typo"))
        .code(2)
        .stderr(predicates::str::contains("typo: no such folder"));
    assert!(!out.join("typo").exists());
    // The set edited since: hi-lo's folder holds a run of other jobs.
    hi_lo_and_later(["lo", "hi"]);
    summary(&out).code(2).stderr(predicates::str::contains(
        "run.json: a run of hi:0, lo:9 (name:priority), not of the set's pair hi-lo (lo:9, hi:0)",
    ));
    hi_lo_and_later(["hi", "lo"]);
    // `fikit-lab validate --real` is the same run (fikit-run beside it).
    bin("fikit-run");
    cmd("fikit-lab")
        .env("FIKIT_COLLECTOR", stand_in_collector())
        .args(["validate", "--real"])
        .arg(&set)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(0)
        .stderr(predicates::str::contains("pair 1/2 hi-lo: complete in"))
        .stderr(predicates::str::contains("pair 2/2 later (out sample)"));
    assert!(out.join("later").join("run.json").is_file());
    // Bad input: a pair of an unknown job; `set` with a scenario.
    write_set(serde_json::json!([{"name": "x", "jobs": ["hi", "nope"], "sample": "in"}]));
    cmd("fikit-run")
        .arg("set")
        .arg(&set)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "set.json: pairs[0].jobs: \"nope\" is not in jobs",
        ));
    cmd("fikit-run")
        .arg("set")
        .arg(&set)
        .arg("s.json")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("unexpected argument 's.json'"));
    write_set(serde_json::json!([{"name": "x", "jobs": ["hi", "lo"], "sample": "in"}]));
    // --trace records rounds; with what runs none it is bad input, not ignored.
    for nothing_runs in [&["summary"][..], &["summary", "--resimulate"]] {
        cmd("fikit-run")
            .args(nothing_runs)
            .arg(&set)
            .args(["--trace", "tr"])
            .assert()
            .code(2)
            .stderr(predicates::str::contains("unexpected argument '--trace'"));
    }
    cmd("fikit-run")
        .arg("summary")
        .arg(&set)
        .args(["--profiles", "0"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "(with the command line's options): profiles: 0; use 1 to 9",
        ));
    write_set(serde_json::json!([{"name": "x", "jobs": ["hi", "nope"], "sample": "in"}]));
    cmd("fikit-lab")
        .env("FIKIT_COLLECTOR", stand_in_collector())
        .args(["validate", "--real"])
        .arg(&set)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("\"nope\" is not in jobs"));
    cmd("fikit-lab")
        .args(["validate", "--real"])
        .arg(&set)
        .arg("--live-from")
        .arg(&set)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("cannot be used with"));
}

/// `DIR/hi.parquet` (a server, priority 0) and `DIR/lo.parquet` (training, 9).
fn write_hi_and_lo(dir: &std::path::Path) {
    for (name, t) in [
        ("hi", fikit_trace::fixture::serving("hi", 0, 3)),
        ("lo", fikit_trace::fixture::training("lo", 9, 20)),
    ] {
        fikit_trace::write_trace(&dir.join(format!("{name}.parquet")), &t).unwrap();
    }
}

/// Writes `set` as `DIR/set.json`, with jobs `hi` and `lo` (their
/// profiles [`write_hi_and_lo`]'s) added to its `jobs`, and returns its path.
fn write_hi_lo_set(dir: &std::path::Path, mut set: serde_json::Value) -> std::path::PathBuf {
    let jobs = set
        .as_object_mut()
        .unwrap()
        .entry("jobs")
        .or_insert_with(|| serde_json::json!({}));
    for (name, priority) in [("hi", 0), ("lo", 9)] {
        jobs[name] = serde_json::json!({"priority": priority, "command": ["true"],
            "profile": format!("{name}.parquet")});
    }
    let path = dir.join("set.json");
    std::fs::write(&path, set.to_string()).unwrap();
    path
}

#[test]
fn a_set_resumes_an_unfinished_pair_keeping_its_finished_rounds() {
    let d = tempfile::tempdir().unwrap();
    write_hi_and_lo(d.path());
    let set = write_hi_lo_set(
        d.path(),
        serde_json::json!({
            "repetitions": 2,
            "policies": ["exclusive", "timeslice"],
            "pairs": [{"name": "hi-lo", "jobs": ["hi", "lo"], "sample": "in"}]
        }),
    );
    let out = d.path().join("out");
    let run_json = out.join("hi-lo").join("run.json");
    let read = || -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(&run_json).unwrap()).unwrap()
    };
    let run_set = || {
        cmd("fikit-run")
            .arg("set")
            .arg(&set)
            .arg("-o")
            .arg(&out)
            .assert()
    };
    run_set().code(0);
    // Make it a run stopped in its last round (repetition 2's timeslice),
    // with repetition 1's timeslice round failed.
    let mut v = read();
    let first = v["rounds"].as_array().unwrap().clone();
    assert_eq!(first.len(), 4);
    v["rounds"] = serde_json::json!([first[0], first[1], first[2]]);
    v["rounds"][1]["jobs"][1]["exit_code"] = serde_json::json!(1);
    v["complete"] = serde_json::json!(false);
    std::fs::write(&run_json, v.to_string()).unwrap();
    run_set()
        .code(0)
        .stderr(predicates::str::contains(
            "2 of 4 rounds kept from the unfinished run in",
        ))
        .stderr(predicates::str::contains(
            "round 3/4: timeslice repetition 1",
        ))
        .stderr(predicates::str::contains(
            "round 4/4: timeslice repetition 2",
        ))
        .stderr(predicates::str::contains("exclusive repetition").not());
    let again = read();
    assert_eq!(again["complete"], true);
    let rounds = again["rounds"].as_array().unwrap();
    let order: Vec<(String, u64)> = rounds
        .iter()
        .map(|r| {
            (
                r["policy"].as_str().unwrap().to_string(),
                r["repetition"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        order,
        [
            ("exclusive".into(), 0),
            ("timeslice".into(), 0),
            ("exclusive".into(), 1),
            ("timeslice".into(), 1)
        ]
    );
    // The finished rounds are the earlier ones, to the nanosecond; the
    // failed and the missing ones ran again.
    assert_eq!(rounds[0], first[0]);
    assert_eq!(rounds[2], first[2]);
    assert_ne!(
        rounds[1]["jobs"][0]["spawn_ns"],
        first[1]["jobs"][0]["spawn_ns"]
    );
    assert_eq!(rounds[1]["jobs"][1]["exit_code"], 0);
    // Re-simulated: the rounds stay, the rows are rebuilt from them.
    std::fs::remove_file(out.join("summary.json")).unwrap();
    cmd("fikit-run")
        .arg("summary")
        .arg(&set)
        .arg("--resimulate")
        .arg("-o")
        .arg(&out)
        .assert()
        .code(0)
        .stderr(predicates::str::contains("pair hi-lo: re-simulated from"));
    let resim = read();
    assert_eq!(resim["rounds"], again["rounds"]);
    assert_eq!(resim["rows"], again["rows"]);
    assert!(out.join("summary.json").is_file());
    // A changed set (three repetitions) keeps nothing of it.
    let text = std::fs::read_to_string(&set)
        .unwrap()
        .replace("\"repetitions\":2", "\"repetitions\":3");
    std::fs::write(&set, text).unwrap();
    run_set()
        .code(0)
        .stderr(predicates::str::contains("rounds kept").not())
        .stderr(predicates::str::contains("round 6/6"));
}

#[test]
fn each_repetition_is_predicted_with_the_next_of_a_jobs_profiles() {
    // Two profiles of bert-base batch 1 on the H200, one recorded on a fast
    // host (5.5 ms an iteration), one on a slow one (8.8 ms); the partner has
    // one. Three repetitions of the same real rounds: with both profiles, the
    // first and third are predicted as with the first profile alone and the
    // second as with the second alone.
    let d = tempfile::tempdir().unwrap();
    let traces = fikit_e2e::root().join("traces");
    let fast = traces.join("h200/bert-base-bs1-eval-1319.parquet");
    let slow = traces.join("h200-corun/bert-base-alone-445.parquet");
    let busy = traces.join("h200/resnet50-bs128-eval-839.parquet");
    let rounds: Vec<serde_json::Value> = (0..3)
        .flat_map(|rep| {
            [
                serde_json::json!({"policy": "exclusive", "repetition": rep,
                    "jobs": [job_run("b1", 1_000_000, 400_000_000), job_run("b128", 1_000_000, 900_000_000)]}),
                serde_json::json!({"policy": "timeslice", "repetition": rep,
                    "jobs": [job_run("b1", 1_000_000, 600_000_000), job_run("b128", 1_000_000, 1_000_000_000)]}),
            ]
        })
        .collect();
    let saved = d.path().join("run.json");
    std::fs::write(
        &saved,
        serde_json::json!({"complete": true, "rounds": rounds}).to_string(),
    )
    .unwrap();
    // The batch-1 job's simulated time-slicing slowdown, as min and max over
    // the two repetitions, with these profiles.
    let predicted = |name: &str, b1: serde_json::Value| {
        let scenario = d.path().join(format!("{name}.json"));
        let mut job = serde_json::json!({"name": "b1", "priority": 0, "command": ["true"]});
        job.as_object_mut()
            .unwrap()
            .extend(b1.as_object().unwrap().clone());
        let s = serde_json::json!({
            "policies": ["exclusive", "timeslice"], "repetitions": 3,
            "jobs": [job, {"name": "b128", "priority": 9, "command": ["true"], "profile": busy}]
        });
        std::fs::write(&scenario, s.to_string()).unwrap();
        let out = d.path().join(name);
        let assert = cmd("fikit-run")
            .arg("report")
            .arg(&saved)
            .arg(&scenario)
            .arg("-o")
            .arg(&out)
            .assert()
            .code(0);
        let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
        let run: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
        let row = run["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["policy"] == "timeslice" && r["job"] == "b1")
            .unwrap()
            .clone();
        let s = &row["sim_slowdown"];
        assert_eq!(run["profile_sets"], if name == "both" { 2 } else { 1 });
        (
            s["min"].as_f64().unwrap(),
            s["median"].as_f64().unwrap(),
            s["max"].as_f64().unwrap(),
            stderr,
        )
    };
    let (f_min, f, f_max, _) = predicted("fast", serde_json::json!({"profile": fast}));
    let (s_min, s, s_max, _) = predicted("slow", serde_json::json!({"profile": slow}));
    // One profile: every repetition predicted alike.
    assert_eq!((f_min, f_max), (f, f));
    assert_eq!((s_min, s_max), (s, s));
    // The slow host hides more of time slicing's waits: another prediction.
    assert!((f - s).abs() > 0.01, "fast {f}, slow {s}");
    let (b_min, b, b_max, stderr) = predicted(
        "both",
        serde_json::json!({"profile": fast, "more_profiles": [slow]}),
    );
    // Repetitions 1 and 3 with the first profile (the median), 2 with the
    // second.
    assert_eq!(b, f, "the first profile predicts repetitions 1 and 3");
    assert_eq!((b_min, b_max), (f.min(s), f.max(s)));
    assert!(
        stderr.contains("2 profiles per job, repetition r predicted with profile r mod"),
        "{stderr}"
    );
}
/// The simulated slowdown in `job`'s MPS row of a fikit-run table.
fn simulated_mps(table: &str, job: &str) -> f64 {
    let row = table
        .lines()
        .find(|l| l.contains(" mps ") && l.contains(&format!(" {job} ")))
        .unwrap_or_else(|| panic!("no mps {job} row:\n{table}"));
    row.split('┆')
        .nth(7)
        .and_then(|c| c.trim().trim_end_matches('x').parse().ok())
        .unwrap_or_else(|| panic!("{row}"))
}

#[test]
fn measured_pressure_weighs_each_job_under_mps() {
    // The profiles' pressure passes (their characterization) set each
    // job's weight under MPS: b128's victim ran 1.01x slower beside it
    // (light), or past any slowdown (full weight).
    let d = tempfile::tempdir().unwrap();
    let (saved, _) = b1_beside_b128(d.path());
    let traces = fikit_e2e::root().join("traces/h200");
    // Each profile as shipped, its characterization replaced: b1 without
    // one, b128 with only the pressure pass under test.
    let recharacterized = |name: &str, out: &str, pressure: Option<Option<f64>>| {
        let mut t = fikit_trace::read_trace(&traces.join(name)).unwrap();
        t.meta.characterization = pressure.map(|slowdown| fikit_trace::Characterization {
            gpu_name: t.meta.device.name.clone(),
            untraced_runs: Vec::new(),
            pressure: Some(fikit_trace::fixture::pressure_pass(slowdown)),
        });
        let out = d.path().join(out);
        fikit_trace::write_trace(&out, &t).unwrap();
        out
    };
    let with_pressure = |name: &str, slowdown: Option<f64>| {
        recharacterized(name, &format!("{slowdown:?}-{name}"), Some(slowdown))
    };
    let b1 = recharacterized("resnet50-bs1-eval-466.parquet", "b1.parquet", None);
    let report = |slowdown: Option<f64>, out: &str| -> String {
        let b128 = with_pressure("resnet50-bs128-eval-839.parquet", slowdown);
        let out = d.path().join(out);
        cmd("fikit-run")
            .arg("report")
            .arg(&saved)
            .arg("--job")
            .arg(format!("b1:0:{}=true", b1.display()))
            .arg("--job")
            .arg(format!("b128:9:{}=true", b128.display()))
            .args(["--policy", "exclusive,mps", "-o"])
            .arg(&out)
            .assert()
            .code(0);
        std::fs::read_to_string(out.join("table.txt")).unwrap()
    };
    let light = report(Some(1.01), "light");
    let full = report(None, "full");
    // The line under the table names each job's weight, or why it has none.
    for t in [&light, &full] {
        assert!(
            t.contains("MPS pressure, each job's weight: b1 as the model weighs it (no pressure pass), b128 "),
            "{t}"
        );
    }
    assert!(
        full.contains("b128 1.00 (the victim past any slowdown beside it)"),
        "{full}"
    );
    assert!(light.contains("(the victim 1.01x beside it)"), "{light}");
    // b128 pressing at full weight slows b1 more than lightly.
    let (b1_light, b1_full) = (simulated_mps(&light, "b1"), simulated_mps(&full, "b1"));
    assert!(b1_full > b1_light, "b1 {b1_light} -> {b1_full}");
}

#[test]
fn combine_reads_summaries_and_refuses_a_missing_one_with_exit_2() {
    let root = fikit_e2e::root();
    let summary = root.join("reports/fikit-run/h200-2026-11-26-oos-rule-a/summary.json");
    cmd("fikit-lab")
        .arg("combine")
        .arg(&summary)
        .assert()
        .code(0)
        .stdout(predicates::str::contains("(12 rows with an error)"))
        .stdout(predicates::str::contains(
            "worst mps out: mobb1 in mobb1-r50t32",
        ));
    cmd("fikit-lab")
        .arg("combine")
        .arg(&summary)
        .arg(root.join("no-such-summary.json"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no-such-summary.json"));
}

/// `fikit-lab combine --pool` on the two committed H100 rule rounds: each
/// job once, its figures the medians over both machines' repetitions (the
/// pooled worst row named as such), and refused without a summary.
#[test]
fn combine_pools_each_jobs_repetitions_over_machines() {
    let root = fikit_e2e::root();
    let round = |r: &str| {
        root.join(format!(
            "reports/fikit-run/h100-2026-11-26-oos-rule-{r}/summary.json"
        ))
    };
    let out = cmd("fikit-lab")
        .arg("combine")
        .arg(round("d"))
        .arg(round("e"))
        .arg("--pool")
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("repetitions pooled"), "{text}");
    // Twelve jobs, not 24 rows: each pair's two jobs once per policy.
    assert!(text.contains("│ mps    ┆ out    ┆ 12 "), "{text}");
    assert!(text.contains("(pooled)"), "{text}");
    // The worst row among the rows: bertb8 from both machines, six co-runs.
    let bertb8 = text
        .lines()
        .find(|l| l.contains("┆ bertb8 "))
        .unwrap_or_else(|| panic!("no bertb8 row: {text}"));
    assert!(
        bertb8.contains("[1, 2] ┆ 6       ┆ 2.53x [2.44-2.71] ┆ 2.00x     ┆ -20.8%"),
        "{bertb8}"
    );
    cmd("fikit-lab")
        .arg("combine")
        .arg("--pool")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("<SUMMARY_JSON>"));
}

#[test]
fn jobs_profiled_with_one_command_share_its_profile() {
    // A server at two rates, profiled with its model back to back: the
    // first rate's profile exists, the second takes it, nothing is run to
    // profile (no fikit-profile here).
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    std::fs::create_dir_all(out.join("profiles")).unwrap();
    let srv = fikit_trace::fixture::serving("srv", 0, 3);
    fikit_trace::write_trace(&out.join("profiles/srv40.parquet"), &srv).unwrap();
    fikit_trace::write_trace(
        &d.path().join("lo.parquet"),
        &fikit_trace::fixture::training("lo", 9, 20),
    )
    .unwrap();
    let served = |rate: u32| {
        serde_json::json!({"priority": 0, "command": ["true", rate.to_string()],
            "profile_command": ["true", "back-to-back"],
            "requests": {"count": 5, "rate_per_s": rate}})
    };
    let set = d.path().join("set.json");
    std::fs::write(
        &set,
        serde_json::json!({
            "repetitions": 1,
            "policies": ["exclusive", "timeslice"],
            "jobs": {
                "srv40": served(40),
                "srv100": served(100),
                "lo": {"priority": 9, "command": ["true"], "profile": "lo.parquet"}
            },
            "pairs": [
                {"name": "a", "jobs": ["srv40", "lo"], "sample": "out"},
                {"name": "b", "jobs": ["srv100", "lo"], "sample": "out"}
            ]
        })
        .to_string(),
    )
    .unwrap();
    cmd("fikit-run")
        .arg("set")
        .arg(&set)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(0)
        .stderr(predicates::str::contains("profile of srv100: "))
        .stderr(predicates::str::contains(
            "srv40.parquet's, the same command",
        ));
    assert_eq!(
        std::fs::read(out.join("profiles/srv100.parquet")).unwrap(),
        std::fs::read(out.join("profiles/srv40.parquet")).unwrap()
    );
    // Both pairs ran, each server predicted from the shared profile.
    for pair in ["a", "b"] {
        let run: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join(pair).join("run.json")).unwrap())
                .unwrap();
        assert_eq!(run["complete"], true, "{pair}");
        let srv = run["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["policy"] == "exclusive" && r["job"].as_str().unwrap().starts_with("srv"))
            .unwrap()
            .clone();
        assert!(srv["sim_p99_ms"].as_f64().unwrap() > 0.0, "{pair}: {srv}");
    }
}

#[test]
fn a_set_profiles_each_pairs_jobs_just_before_its_rounds() {
    // Pair a's jobs have profiles; pair b's job "new" must be profiled
    // and cannot be (its command does not exist). Pair a still runs whole
    // first: profiling every job up front would have stopped before it.
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    write_hi_and_lo(d.path());
    let set = write_hi_lo_set(
        d.path(),
        serde_json::json!({
            "repetitions": 1,
            "policies": ["exclusive", "timeslice"],
            "jobs": {"new": {"priority": 9, "command": ["/nonexistent/fikit-test-command"]}},
            "pairs": [
                {"name": "a", "jobs": ["hi", "lo"], "sample": "out"},
                {"name": "b", "jobs": ["hi", "new"], "sample": "out"}
            ]
        }),
    );
    // The log of an earlier profile of "new" (its Parquet since moved
    // away): a failed profiling leaves it as it was.
    std::fs::create_dir_all(out.join("profiles")).unwrap();
    std::fs::write(out.join("profiles/new.log"), "the earlier profile's log\n").unwrap();
    let o = cmd("fikit-run")
        .arg("set")
        .arg(&set)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(!o.status.success(), "job new cannot be profiled");
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("a/run.json")).unwrap()).unwrap();
    assert_eq!(run["complete"], true);
    assert!(!out.join("b/run.json").exists());
    assert_eq!(
        std::fs::read_to_string(out.join("profiles/new.log")).unwrap(),
        "the earlier profile's log\n"
    );
    assert!(out.join("profiles/new-failed.log").is_file());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("new-failed.log"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!out.join("profiles/new.log.partial").exists());
}
