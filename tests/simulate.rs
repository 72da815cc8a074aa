//! `fikit-sim` simulation end to end: traces built here, the binary run as a user would.

use std::path::Path;

use fikit_e2e::cmd;
use fikit_trace::{fixture, write_trace};
use predicates::prelude::*;

/// The fixture pair: a latency-critical job (3 iterations of two short
/// kernels, a sync, host work) and a throughput job of back-to-back kernels.
fn setup(dir: &Path) {
    let (serving, training) = fixture::serving_and_training();
    write_trace(&dir.join("serving.parquet"), &serving).unwrap();
    write_trace(&dir.join("training.parquet"), &training).unwrap();
}

/// Runs `fikit-sim --no-plots --format csv --jobs serving,training .` and
/// `extra` in `dir`, which must succeed: its standard output and error.
fn serving_beside_training(dir: &Path, extra: &[&str]) -> (String, String) {
    let mut args = vec![
        "--no-plots",
        "--format",
        "csv",
        "--jobs",
        "serving,training",
        ".",
    ];
    args.extend_from_slice(extra);
    outputs_of(dir, &args)
}

/// Runs fikit-sim in `dir` and checks it fails as bad input (exit 2) saying `what`, without a panic.
fn rejects(dir: &Path, args: &[&str], what: &str) {
    cmd("fikit-sim")
        .current_dir(dir)
        .args(args)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(what))
        .stderr(predicate::str::contains("panicked").not());
}

/// Runs fikit-sim `args` in `dir`, checks it succeeds and returns its
/// standard output and standard error.
fn outputs_of(dir: &Path, args: &[&str]) -> (String, String) {
    let out = cmd("fikit-sim")
        .current_dir(dir)
        .args(args)
        .assert()
        .success()
        .get_output()
        .clone();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn stdout_of(dir: &Path, args: &[&str]) -> String {
    outputs_of(dir, args).0
}

#[test]
fn table_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    // The documented defaults: the hand-made traces' GPU (an H100) has a
    // calibrated model, which the next test checks is chosen.
    insta::assert_snapshot!(stdout_of(
        dir.path(),
        &["--no-plots", "--model", "default", "."]
    ));
}

#[test]
fn the_traces_gpu_chooses_its_calibrated_model() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let out = cmd("fikit-sim")
        .current_dir(dir.path())
        .args(["--no-plots", "."])
        .assert()
        .success();
    let o = out.get_output();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("calibrated (simulator/models/h100.json)"),
        "{stderr}"
    );
    assert!(
        stdout.starts_with("GPU model: NVIDIA H100 80GB HBM3 (`fikit-sim calibrate"),
        "{stdout}"
    );
    // --model default: the documented defaults, said as such.
    let out = cmd("fikit-sim")
        .current_dir(dir.path())
        .args(["--no-plots", "--model", "default", "."])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        stdout.starts_with("GPU model: default (documented defaults"),
        "{stdout}"
    );
}

#[test]
fn json_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let out = stdout_of(
        dir.path(),
        &["--no-plots", "--model", "default", "--format", "json", "."],
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    insta::assert_json_snapshot!(v);
}

#[test]
fn csv_has_a_row_per_job_and_policy() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let out = stdout_of(
        dir.path(),
        &[
            "--no-plots",
            "--format",
            "csv",
            "--policy",
            "fikit,timeslice",
            ".",
        ],
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1 + 2 * 2, "{out}");
    assert!(lines[0].starts_with("policy,job,priority,isolated_jct_ns,jct_ns"));
    assert!(lines[1].starts_with("timeslice,serving,0,"));
}

#[test]
fn writes_the_plots() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    cmd("fikit-sim")
        .current_dir(dir.path())
        .args(["--plots", "out", "."])
        .assert()
        .success()
        .stderr(predicate::str::contains("plots:"));
    for stem in ["sim-jct", "sim-latency-cdf", "sim-timeline"] {
        for ext in ["png", "svg"] {
            let p = dir.path().join("out").join(format!("{stem}.{ext}"));
            assert!(
                std::fs::metadata(&p)
                    .map(|m| m.len() > 1000)
                    .unwrap_or(false),
                "{}",
                p.display()
            );
        }
    }
}

#[test]
fn scenario_file_sets_priorities_and_requests() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    std::fs::write(
        dir.path().join("s.json"),
        r#"{"seed": 3, "jobs": [
            {"trace": "training.parquet", "name": "bg", "priority": 9},
            {"trace": "serving.parquet", "name": "api", "priority": 0,
             "requests": {"count": 30, "rate_per_s": 20000}}]}"#,
    )
    .unwrap();
    let out = stdout_of(
        dir.path(),
        &[
            "--no-plots",
            "--format",
            "json",
            "--policy",
            "fikit",
            "--scenario",
            "s.json",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let api = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["job"] == "api")
        .unwrap();
    assert_eq!(api["priority"], 0);
    assert_eq!(api["iterations"], 30);
}

#[test]
fn bad_scenarios_exit_2_naming_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let cases = [
        (r#"{"jobs": []}"#, "`jobs` is empty"),
        (
            r#"{"jobs": [{"trace": "serving.parquet", "priority": 12}]}"#,
            "jobs[0].priority: must be 0 (highest) to 9, found 12",
        ),
        (
            r#"{"jobs": [{"trace": "serving.parquet", "requests": {"count": 3, "rate_per_s": -1}}]}"#,
            "jobs[0].requests.rate_per_s: must be a positive number",
        ),
        (
            r#"{"jobs": [{"trace": "missing.parquet"}]}"#,
            "missing.parquet",
        ),
        (
            r#"{"jobs": [{"trace": "serving.parquet", "prio": 1}]}"#,
            "unknown field `prio`",
        ),
        ("not json", "s.json: expected"),
    ];
    for (text, what) in cases {
        std::fs::write(dir.path().join("s.json"), text).unwrap();
        rejects(dir.path(), &["--no-plots", "--scenario", "s.json"], what);
    }
}

#[test]
fn a_bad_model_file_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    std::fs::write(dir.path().join("m.json"), r#"{"timeslice_quantum_ns": 0}"#).unwrap();
    rejects(
        dir.path(),
        &["--no-plots", "--model", "m.json", "."],
        "m.json: timeslice_quantum_ns must be positive, found 0",
    );
    // A field the model no longer has, at a value it never takes now.
    std::fs::write(dir.path().join("m2.json"), r#"{"mps_order": "launch"}"#).unwrap();
    rejects(
        dir.path(),
        &["--no-plots", "--model", "m2.json", "."],
        "m2.json: mps_order is no longer a model field",
    );
    // An array is not a model whose fields come in order.
    std::fs::write(dir.path().join("m3.json"), r#"["x", "y", 1000]"#).unwrap();
    rejects(
        dir.path(),
        &["--no-plots", "--model", "m3.json", "."],
        "m3.json: the top level is an array; it must be a JSON object",
    );
}

#[test]
fn outputs_that_cannot_be_written_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    // /proc takes no new folder, for root too.
    let bad = "/proc/fikit-no-such/x";
    let kineto = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../traces/kineto/resnet50-bs1-eval.kineto.json.gz"
    );
    for (args, flag) in [
        (
            vec!["--plots", bad, "--jobs", "serving,training", "."],
            "--plots",
        ),
        (
            vec![
                "--no-plots",
                "--html",
                "/proc/fikit-no-such/x/r.html",
                "--jobs",
                "serving,training",
                ".",
            ],
            "--html",
        ),
        (
            vec![
                "export",
                "--perfetto",
                "-o",
                "/proc/fikit-no-such/x/e.json",
                "serving.parquet",
            ],
            "-o",
        ),
        (vec!["import", "-o", bad, kineto], "-o"),
        (
            vec![
                "sweep",
                "merge",
                "-o",
                "/proc/fikit-no-such/x/m.parquet",
                "a.parquet",
                "b.parquet",
            ],
            "-o",
        ),
    ] {
        let out = cmd("fikit-sim")
            .current_dir(dir.path())
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("{flag} /proc/fikit-no-such/x")),
            "{args:?}: {err}"
        );
        // The nearest folder that exists is the one tried: nothing is made.
        assert!(err.contains("cannot write in /proc:"), "{args:?}: {err}");
        // Refused first: no table, no result.
        assert!(
            out.stdout.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

#[test]
fn inputs_once_taken_without_a_word_are_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    // A named folder without traces, beside good ones.
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    rejects(
        dir.path(),
        &["--no-plots", "empty", "serving.parquet", "training.parquet"],
        "no trace files (*.parquet) found in empty",
    );
    // A job given two priorities; --plots beside --no-plots.
    rejects(
        dir.path(),
        &[
            "--no-plots",
            "--priority",
            "serving=0",
            "--priority",
            "serving=5",
            ".",
        ],
        "--priority \"serving=5\": job \"serving\" already has --priority \"serving=0\"",
    );
    rejects(
        dir.path(),
        &["--no-plots", "--plots", "p", "."],
        "cannot be used with",
    );
}

#[test]
fn sweep_runs_every_ordered_pair() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let out = stdout_of(
        dir.path(),
        &[
            "sweep",
            "--format",
            "csv",
            "--policy",
            "fikit",
            "--threads",
            "2",
            ".",
        ],
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[1].starts_with("serving,training,fikit,"));
    assert!(lines[2].starts_with("training,serving,fikit,"));
    // Same rows with one thread.
    let one = stdout_of(
        dir.path(),
        &[
            "sweep",
            "--format",
            "csv",
            "--policy",
            "fikit",
            "--threads",
            "1",
            ".",
        ],
    );
    assert_eq!(one, out);
    rejects(
        dir.path(),
        &["sweep", "--threads", "100000", "."],
        "--threads 100000: at most 1024",
    );
}

#[test]
fn priority_flag_overrides_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let out = stdout_of(
        dir.path(),
        &[
            "--no-plots",
            "--format",
            "csv",
            "--policy",
            "fikit",
            "--priority",
            "training=0",
            "--priority",
            "serving=9",
            ".",
        ],
    );
    assert!(out.contains("\nfikit,serving,9,"), "{out}");
    assert!(out.contains("\nfikit,training,0,"), "{out}");
    for (flag, what) in [
        (
            "nobody=1",
            "no job named \"nobody\" (jobs: serving, training)",
        ),
        (
            "serving=12",
            "the priority must be 0 (highest) to 9, found \"12\"",
        ),
        ("serving", "expected JOB=N"),
    ] {
        rejects(dir.path(), &["--no-plots", "--priority", flag, "."], what);
    }
}

#[test]
fn sweep_specs_run_in_shards_that_merge_into_the_whole_and_bad_ones_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("traces")).unwrap();
    setup(&dir.path().join("traces"));
    std::fs::write(
        dir.path().join("spec.json"),
        r#"{ "traces": ["traces"], "policies": ["timeslice", "fikit"] }"#,
    )
    .unwrap();
    let whole = stdout_of(
        dir.path(),
        &["sweep", "--spec", "spec.json", "--format", "csv"],
    );
    // It says which model it runs, as the plain sweep does.
    cmd("fikit-sim")
        .current_dir(dir.path())
        .args(["sweep", "--spec", "spec.json", "--format", "csv"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "GPU model: NVIDIA H100 80GB HBM3, calibrated (simulator/models/h100.json), for the traces' GPU",
        ));
    for k in 1..=2 {
        cmd("fikit-sim")
            .current_dir(dir.path())
            .args(["sweep", "--spec", "spec.json", "--shard", &format!("{k}/2")])
            .args(["-o", &format!("s{k}.parquet")])
            .assert()
            .success();
    }
    cmd("fikit-sim")
        .current_dir(dir.path())
        .args([
            "sweep",
            "merge",
            "-o",
            "all.parquet",
            "s2.parquet",
            "s1.parquet",
        ])
        .assert()
        .success();
    let merged = stdout_of(
        dir.path(),
        &["sweep", "show", "all.parquet", "--format", "csv"],
    );
    assert_eq!(merged, whole);
    // 2 jobs: 2 ordered pairs x 2 policies, and a header.
    assert_eq!(whole.lines().count(), 5, "{whole}");
    rejects(
        dir.path(),
        &["sweep", "merge", "-o", "x.parquet", "s1.parquet"],
        "shards missing: 2/2",
    );
    // Merged onto one of its shards, the shard would be lost: refused, the
    // shard as it was.
    let shard = std::fs::read(dir.path().join("s1.parquet")).unwrap();
    rejects(
        dir.path(),
        &[
            "sweep",
            "merge",
            "-o",
            "./s1.parquet",
            "s1.parquet",
            "s2.parquet",
        ],
        "the output is one of the shards to merge (s1.parquet)",
    );
    assert_eq!(std::fs::read(dir.path().join("s1.parquet")).unwrap(), shard);
    // Traces' pairs are printed: an -o without --spec would write nothing.
    rejects(
        dir.path(),
        &["sweep", "traces", "-o", "x.parquet"],
        "it needs --spec",
    );
    // Rows written among the traces would be read as a trace by the next shard.
    rejects(
        dir.path(),
        &[
            "sweep",
            "--spec",
            "spec.json",
            "--shard",
            "1/2",
            "-o",
            "traces/s1.parquet",
        ],
        "inside a folder the spec searches for traces",
    );
    rejects(dir.path(), &["sweep", "--spec", "nope.json"], "nope.json");
    std::fs::write(
        dir.path().join("gone.json"),
        r#"{ "traces": ["traces", "gone"] }"#,
    )
    .unwrap();
    rejects(
        dir.path(),
        &["sweep", "--spec", "gone.json"],
        "gone.json: traces[1] \"gone\": no such file or folder",
    );
    rejects(
        dir.path(),
        &[
            "sweep",
            "--spec",
            "spec.json",
            "--shard",
            "3/2",
            "-o",
            "x.parquet",
        ],
        "K must be 1 to N",
    );
    std::fs::write(
        dir.path().join("bad.json"),
        r#"{ "traces": ["traces"], "group": 9 }"#,
    )
    .unwrap();
    rejects(dir.path(), &["sweep", "--spec", "bad.json"], "2 to 8");
    std::fs::write(dir.path().join("typo.json"), r#"{ "trace": ["traces"] }"#).unwrap();
    rejects(
        dir.path(),
        &["sweep", "--spec", "typo.json"],
        "unknown field",
    );
    rejects(
        dir.path(),
        &["sweep", "show", "traces/serving.parquet"],
        "not a fikit sweep rows file",
    );
}

#[test]
fn a_job_with_untraced_runs_is_simulated_at_its_untraced_host_speed() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    // The serving job ran faster untraced: 150-170 µs from its first kernel
    // to its end, against 246 µs traced.
    let mut serving = fixture::serving("serving", 0, 3);
    let gpu = serving.meta.device.name.clone();
    let mut c = fixture::characterization(&gpu);
    c.untraced_runs = [150_000, 170_000, 160_000]
        .into_iter()
        .map(|region_ns| fikit_trace::UntracedRun {
            region_ns,
            launches: 6,
            iterations_ns: Vec::new(),
            busy_ns: Vec::new(),
        })
        .collect();
    serving.meta.characterization = Some(c);
    write_trace(&dir.path().join("serving.parquet"), &serving).unwrap();
    let run = |extra: &[&str]| serving_beside_training(dir.path(), extra);
    let (untraced, said) = run(&[]);
    let line = said
        .lines()
        .find(|l| l.starts_with("fikit-sim: host: as run untraced"))
        .unwrap_or_else(|| panic!("{said}"));
    // The serving job's factor is below 1 (its host ran faster), with its
    // range; the training job, without untraced runs, is named as traced.
    let factor: f64 = line
        .split("serving ")
        .nth(1)
        .and_then(|r| r.split('x').next())
        .and_then(|f| f.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(factor < 1.0, "{line}");
    assert!(line.contains("(3 untraced runs)"), "{line}");
    assert!(
        line.contains("training as traced (its trace has no untraced runs)"),
        "{line}"
    );
    let (traced, said) = run(&["--as-profiled"]);
    assert!(
        said.contains("fikit-sim: host: as traced (--as-profiled)"),
        "{said}"
    );
    // The serving job alone is faster at its untraced speed.
    let iso = |csv: &str| -> i64 {
        let mut lines = csv.lines();
        let head: Vec<&str> = lines.next().unwrap().split(',').collect();
        let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
        lines
            .map(|l| l.split(',').collect::<Vec<_>>())
            .find(|r| r[col("policy")] == "exclusive" && r[col("job")] == "serving")
            .map(|r| r[col("isolated_jct_ns")].parse().unwrap())
            .unwrap()
    };
    assert!(iso(&untraced) < iso(&traced), "{untraced}\n{traced}");
    // Each row's range over the hosts' untraced runs holds its point; as
    // traced there is none, and no range columns.
    let mut lines = untraced.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    for l in lines {
        let r: Vec<&str> = l.split(',').collect();
        let at = |n: &str| -> f64 { r[col(n)].parse().unwrap() };
        assert!(
            at("slowdown_low") <= at("slowdown") && at("slowdown") <= at("slowdown_high"),
            "{l}"
        );
        assert!(
            at("p99_low_ns") <= at("p99_ns") && at("p99_ns") <= at("p99_high_ns"),
            "{l}"
        );
    }
    // The serving job's hosts differ (150 to 170 µs untraced): its p99
    // alone differs too, fastest below slowest.
    let serving_alone: Vec<&str> = untraced
        .lines()
        .find(|l| l.starts_with("exclusive,serving,"))
        .unwrap()
        .split(',')
        .collect();
    let at = |n: &str| -> f64 { serving_alone[col(n)].parse().unwrap() };
    assert!(at("p99_low_ns") < at("p99_high_ns"), "{untraced}");
    assert!(
        !traced.lines().next().unwrap().contains("slowdown_low"),
        "{traced}"
    );
}

#[test]
fn the_first_screen_gives_each_slowdown_its_range_over_the_untraced_hosts() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    // A second throughput job, so that the traces get the pairwise screen,
    // and the serving job with untraced runs of 150 to 170 µs.
    write_trace(
        &dir.path().join("training2.parquet"),
        &fixture::training("training2", 9, 6),
    )
    .unwrap();
    let mut serving = fixture::serving("serving", 0, 3);
    let gpu = serving.meta.device.name.clone();
    let mut c = fixture::characterization(&gpu);
    for (r, region_ns) in c.untraced_runs.iter_mut().zip([150_000, 170_000]) {
        r.region_ns = region_ns;
        r.iterations_ns.clear();
    }
    serving.meta.characterization = Some(c);
    write_trace(&dir.path().join("serving.parquet"), &serving).unwrap();
    let table = stdout_of(dir.path(), &["--model", "default", "."]);
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| l.contains('┆') && l.contains("serving"))
        .collect();
    assert_eq!(rows.len(), 2, "{table}");
    for r in &rows {
        // Every policy's cell: point [least-greatest], the point inside.
        let cells: Vec<&str> = r.split('┆').map(str::trim).collect();
        for cell in &cells[2..6] {
            let (point, range) = cell.split_once(" [").unwrap_or_else(|| panic!("{r}"));
            let (lo, hi) = range.trim_end_matches(']').split_once('-').unwrap();
            let num = |s: &str| -> f64 { s.trim_end_matches('x').parse().unwrap() };
            assert!(num(lo) <= num(point) && num(point) <= num(hi), "{r}");
        }
    }
    assert!(
        table.contains("[a-b]: over the hosts' untraced runs"),
        "{table}"
    );
    // The rows as JSON carry it too, the range the pair's own simulation
    // gives (`--jobs`); without untraced runs there is none.
    let json = stdout_of(dir.path(), &["--model", "default", "--format", "json", "."]);
    assert!(json.contains("\"high_slowdown_range\""), "{json}");
    let screen: serde_json::Value = serde_json::from_str(&json).unwrap();
    let pair = stdout_of(
        dir.path(),
        &[
            "--model",
            "default",
            "--format",
            "json",
            "--no-plots",
            "--jobs",
            "serving,training",
            ".",
        ],
    );
    let pair: serde_json::Value = serde_json::from_str(&pair).unwrap();
    let mut compared = 0;
    for row in screen.as_array().expect("the screen's rows") {
        if row["low"] != "training" {
            continue;
        }
        let own = pair["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["job"] == "serving" && j["policy"] == row["policy"])
            .unwrap_or_else(|| panic!("{pair}"));
        let range = |v: &serde_json::Value| -> Vec<f64> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        };
        let (a, b) = (
            range(&row["high_slowdown_range"]),
            range(&own["slowdown_range"]),
        );
        assert!(
            a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-6),
            "{row} against {own}"
        );
        compared += 1;
    }
    assert_eq!(compared, 5, "{json}");
    let json = stdout_of(
        dir.path(),
        &[
            "--model",
            "default",
            "--format",
            "json",
            "--as-profiled",
            ".",
        ],
    );
    assert!(!json.contains("high_slowdown_range"), "{json}");
}

#[test]
fn serve_gives_the_servers_latency_at_each_rate_and_bad_rates_exit_2() {
    // The shipped H200 pair: mobilenet b1 serving beside resnet50 training.
    let root = fikit_e2e::root();
    let traces = root.join("traces/h200");
    let traces = traces.to_str().unwrap();
    let jobs = "mobilenet_v3_large-bs1-eval,resnet50-bs32-train";
    let out = stdout_of(
        &root,
        &[
            traces,
            "--jobs",
            jobs,
            "--serve",
            "40,400",
            "--requests",
            "150",
            "--policy",
            "exclusive,timeslice,fikit",
            "--no-plots",
            "--format",
            "csv",
        ],
    );
    // No field of this CSV is quoted: split at commas.
    let mut lines = out.lines().map(|l| l.split(',').collect::<Vec<&str>>());
    let head = lines.next().unwrap();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.collect();
    assert_eq!(rows.len(), 6, "two rates, three policies: {out}");
    let num = |r: &Vec<&str>, c: &str| -> f64 { r[col(c)].parse().unwrap() };
    let at = |rate: &str, policy: &str| {
        rows.iter()
            .find(|r| r[col("rate_per_s")] == rate && r[col("policy")] == policy)
            .unwrap_or_else(|| panic!("no {rate} {policy} row: {out}"))
    };
    for r in &rows {
        let (p50, p99, p999) = (num(r, "p50_ns"), num(r, "p99_ns"), num(r, "p999_ns"));
        assert!(0.0 < p50 && p50 <= p99 && p99 <= p999, "{r:?}");
        assert!(
            num(r, "p99_low_ns") <= p99 && p99 <= num(r, "p99_high_ns"),
            "{r:?}"
        );
        assert_eq!(r[col("job")], "mobilenet_v3_large-bs1-eval");
    }
    // The same arrival draws ten times closer: a request waits at least as
    // long for the ones before it, alone.
    for c in ["p50_ns", "p99_ns"] {
        assert!(
            num(at("400", "exclusive"), c) >= num(at("40", "exclusive"), c),
            "{c}: {out}"
        );
    }
    // Alone the partner is not slowed; against time slicing it is 1.
    assert_eq!(num(at("40", "exclusive"), "partner_slowdown"), 1.0);
    assert_eq!(num(at("40", "timeslice"), "partner_vs_timeslice"), 1.0);
    assert_eq!(
        at("40", "exclusive")[col("partner_vs_timeslice")],
        "",
        "alone: none"
    );
    // Under FIKIT the server's requests take what they take alone; the
    // partner pays for it (its launches wait at its gate while a request is
    // in flight, and within the server's hold while it is away) but runs
    // between requests: slower than under time slicing, not stopped.
    for c in ["p50_ns", "p99_ns"] {
        assert_eq!(
            num(at("40", "fikit"), c),
            num(at("40", "exclusive"), c),
            "{c}: {out}"
        );
    }
    let partner = num(at("40", "fikit"), "partner_vs_timeslice");
    assert!(partner < 1.0 && partner > 0.5, "{out}");
    for (args, what) in [
        (
            vec!["--serve", "0"],
            "--serve: a rate must be a positive number",
        ),
        (
            vec!["--serve", "50", "--requests", "0"],
            "--requests: must be at least 1",
        ),
        // Refused before 1e11 arrivals are drawn (800 GB).
        (
            vec!["--serve", "50", "--requests", "100000000000"],
            "--requests: 100000000000 is more than the 16777216 steps",
        ),
        // The partner repeated over 1,000 s: refused before it is built.
        (
            vec!["--serve", "0.01", "--requests", "10"],
            "more than the 16777216 --serve builds a job of",
        ),
        (
            vec!["--serve", "50,100,50"],
            "--serve: the rate 50 is given twice (rate 3 and an earlier one)",
        ),
    ] {
        let mut a = vec![traces, "--jobs", jobs, "--no-plots"];
        a.extend(args);
        rejects(&root, &a, what);
    }
    rejects(
        &root,
        &[traces, "--serve", "50", "--no-plots"],
        "--serve: name the jobs that share the GPU",
    );
    // At 40/s the server is far from busy: no note. At 1000/s (a request
    // takes milliseconds alone) its queue cannot drain: a note says so.
    let notes = |rate: &str| {
        let args = [traces, "--jobs", jobs, "--serve", rate, "--requests", "50"];
        let more = ["--policy", "exclusive", "--no-plots"];
        outputs_of(&root, &[&args[..], &more[..]].concat()).1
    };
    assert!(!notes("40").contains("note:"), "{}", notes("40"));
    let busy = notes("1000");
    assert!(
        busy.contains("note: at 1000 requests/s mobilenet_v3_large-bs1-eval would be busy")
            && busy.contains("its queue grows without end"),
        "{busy}"
    );
}

#[test]
fn a_server_recorded_as_it_served_predicts_as_one_recorded_back_to_back() {
    // Twelve requests of `conv` [0, 10) us and `fc` [40, 45) us, waited for
    // until 46 us, 54 us of host before each: once back to back, once as
    // served (a millisecond of idle before four of them). Each untraced run
    // measured their busy parts; the regions differ by the idle.
    let recording = |idle_before: &[usize]| {
        let mut starts = Vec::new();
        let mut at = 0i64;
        for i in 0..12usize {
            if idle_before.contains(&i) {
                at += 1_000_000;
            }
            starts.push(at);
            at += 100_000;
        }
        let mut t = fixture::serving_at("serving", 0, &starts);
        let gpu = t.meta.device.name.clone();
        let mut c = fixture::characterization(&gpu);
        c.untraced_runs = [24_000, 26_000, 28_000]
            .into_iter()
            .map(|busy| fikit_trace::UntracedRun {
                region_ns: at,
                launches: 24,
                iterations_ns: Vec::new(),
                busy_ns: vec![busy; 10],
            })
            .collect();
        t.meta.characterization = Some(c);
        t
    };
    let predict = |t: &fikit_trace::Trace| {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path());
        write_trace(&dir.path().join("serving.parquet"), t).unwrap();
        serving_beside_training(
            dir.path(),
            &[
                "--serve",
                "200",
                "--requests",
                "20",
                "--policy",
                "exclusive,timeslice",
            ],
        )
    };
    let (closed, said) = predict(&recording(&[]));
    let (served, said_served) = predict(&recording(&[3, 5, 8, 10]));
    // Both fitted on the busy parts, to the same speed.
    for s in [&said, &said_served] {
        let line = s
            .lines()
            .find(|l| l.starts_with("fikit-sim: host: as run untraced"))
            .unwrap_or_else(|| panic!("{s}"));
        assert!(line.contains("(3 untraced runs, busy parts)"), "{line}");
    }
    assert_eq!(said, said_served);
    // The recording's idle is gone: the same latencies at every policy.
    assert!(closed.lines().count() >= 3, "{closed}");
    assert_eq!(closed, served);
}

#[test]
fn a_replay_that_would_run_implausibly_long_exits_2_in_every_mode_saying_so_once() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    // A time slice of 2^63 - 1 ns: the first switch is past the engine's end.
    std::fs::write(
        dir.path().join("model-big.json"),
        r#"{"timeslice_quantum_ns": 9223372036854775807}"#,
    )
    .unwrap();
    let common = ["--model", "model-big.json", "--policy", "timeslice"];
    for mode in [
        vec![".", "--no-plots"],
        vec![".", "--no-plots", "--jobs", "serving,training"],
        vec!["sweep", "."],
    ] {
        let mut args = mode.clone();
        args.extend(common);
        fails_saying_once(dir.path(), &args, 2, "the replay would run past");
    }
}

/// Runs fikit-sim in `dir`, which must exit `code` with `what` once in its
/// standard error.
fn fails_saying_once(dir: &Path, args: &[&str], code: i32, what: &str) {
    let out = cmd("fikit-sim")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert_eq!(err.matches(what).count(), 1, "{args:?}: {err}");
}

#[test]
fn a_missing_model_file_names_the_reason_once_and_unwritable_outputs_stop_before_work() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    fails_saying_once(
        dir.path(),
        &[".", "--no-plots", "--model", "nope.json"],
        2,
        "(os error",
    );
    std::fs::create_dir(dir.path().join("folder.html")).unwrap();
    std::fs::write(dir.path().join("a-file"), "").unwrap();
    for (args, what) in [
        (
            vec![".", "--no-plots", "--html", "folder.html"],
            "--html folder.html: a folder",
        ),
        (
            vec![".", "--no-plots", "--html", "a-file/r.html"],
            "--html a-file/r.html: a-file is a file, not a folder",
        ),
        (vec![".", "--plots", "a-file"], "--plots a-file: a file"),
    ] {
        // Refused before the simulation: nothing printed.
        let out = cmd("fikit-sim")
            .current_dir(dir.path())
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(what), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn a_model_file_without_a_name_or_source_is_named_by_the_file_in_the_results() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    std::fs::write(
        dir.path().join("slices.json"),
        r#"{"timeslice_quantum_ns": 1000000}"#,
    )
    .unwrap();
    let out = stdout_of(
        dir.path(),
        &[
            ".",
            "--no-plots",
            "--jobs",
            "serving,training",
            "--model",
            "slices.json",
        ],
    );
    assert!(
        out.contains("GPU model: slices (slices.json, its other fields the documented defaults"),
        "{out}"
    );
    assert!(!out.contains("GPU model: default"), "{out}");
}

#[test]
fn a_repeated_jobs_later_set_ups_are_not_iterations() {
    // A shipped job whose first iteration is its set-up (the weights'
    // upload): repeated three times, it has three times the iterations and
    // the same percentiles. Before, each later run's set-up counted, and
    // its p99 was 83 times the job's own.
    let d = tempfile::tempdir().unwrap();
    let trace = fikit_e2e::root().join("traces/h200/resnet50-bs1-eval-466.parquet");
    let row = |repeat: u32| {
        let s = d.path().join(format!("rep{repeat}.json"));
        std::fs::write(
            &s,
            format!(
                r#"{{"jobs": [{{"trace": {:?}, "priority": 0, "repeat": {repeat}}}]}}"#,
                trace.display().to_string()
            ),
        )
        .unwrap();
        let s = s.to_str().unwrap();
        let csv = stdout_of(
            d.path(),
            &[
                "--no-plots",
                "--format",
                "csv",
                "--policy",
                "timeslice",
                "--scenario",
                s,
            ],
        );
        let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let line = csv
            .lines()
            .find(|l| l.starts_with("timeslice,"))
            .unwrap()
            .to_string();
        let field = |name: &str| -> i64 {
            let i = head.iter().position(|h| *h == name).unwrap();
            line.split(',').nth(i).unwrap().parse().unwrap()
        };
        (field("iterations"), field("p99_ns"), field("p999_ns"))
    };
    let (once, thrice) = (row(1), row(3));
    assert_eq!(thrice.0, 3 * once.0);
    assert_eq!((thrice.1, thrice.2), (once.1, once.2));
}

#[test]
fn traces_whose_figures_may_mislead_get_a_note() {
    let d = tempfile::tempdir().unwrap();
    // A capture the collector did not finish, with dropped records (the
    // fixture with every column), and a job with no kernel at all.
    write_trace(&d.path().join("cut.parquet"), &fixture::every_column("cut")).unwrap();
    write_trace(&d.path().join("cpu.parquet"), &fixture::empty("cpu", 9)).unwrap();
    let (stdout, stderr) = outputs_of(
        d.path(),
        &["--no-plots", "--format", "csv", "--together", "."],
    );
    for want in [
        "note: ./cut.parquet: capture incomplete (capture_complete false",
        "note: ./cut.parquet: CUPTI dropped 3 records",
        "note: cpu has no kernel: nothing of it runs on the GPU",
    ] {
        assert!(stderr.contains(want), "no {want:?} in:\n{stderr}\n{stdout}");
    }
    // A complete capture with kernels gets none.
    setup(d.path());
    let (_, stderr) = serving_beside_training(d.path(), &[]);
    assert!(!stderr.contains("note:"), "{stderr}");
}

#[test]
fn ties_at_the_best_priority_and_one_priority_for_all_are_said() {
    // Two throughput jobs of one priority: the first listed is FIKIT's top
    // job, which the user is told, with how to choose.
    let root = fikit_e2e::root();
    let h200 = root.join("traces/h200");
    let (_, stderr) = outputs_of(
        &root,
        &[
            h200.to_str().unwrap(),
            "--jobs",
            "resnet50-bs128-eval,resnet50-bs32-train",
            "--policy",
            "fikit",
            "--no-plots",
            "--format",
            "csv",
        ],
    );
    assert!(
        stderr.contains(
            "note: resnet50-bs128-eval, resnet50-bs32-train share the best priority (9): under fikit \
             the first listed, resnet50-bs128-eval, takes the top place"
        ),
        "{stderr}"
    );
    // Under time slicing nothing ranks them: no note.
    cmd("fikit-sim")
        .current_dir(&root)
        .arg(&h200)
        .args(["--jobs", "resnet50-bs128-eval,resnet50-bs32-train"])
        .args(["--policy", "timeslice", "--no-plots", "--format", "csv"])
        .assert()
        .success()
        .stderr(predicate::str::contains("share the best priority").not());
    // A folder of one priority: no pairs to screen; said so.
    let d = tempfile::tempdir().unwrap();
    for f in [
        "resnet50-bs128-eval-839.parquet",
        "resnet50-bs32-train-636.parquet",
        "bert-base-bs32-train-1033.parquet",
    ] {
        std::fs::copy(h200.join(f), d.path().join(f)).unwrap();
    }
    cmd("fikit-sim")
        .current_dir(d.path())
        .args([
            ".",
            "--policy",
            "timeslice",
            "--no-plots",
            "--format",
            "csv",
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "note: all 3 jobs share one priority, so no pair is latency-critical beside throughput",
        ));
}
