//! `fikit-run` without a GPU: its bad-input errors, the rounds of real
//! processes (every job's exit recorded, a failing job reported while the
//! others finish), Ctrl-C stopping every job and leaving nothing behind,
//! and the prediction beside each round. Validation sets are in
//! `run_set.rs`. The gate itself is tested in fikit-gate; GPU runs are
//! scripted (lab/validate/fikit-run-pairs.sh) with their outputs under
//! reports/.

use std::time::{Duration, Instant};

use fikit_e2e::run_json::{b1_beside_b128, job_run};
use fikit_e2e::{bin, cmd, stand_in_collector};

/// Runs `bin ARGS` and checks it fails as bad input (exit 2) saying `what`.
fn rejects(bin: &str, args: &[&str], what: &str) {
    cmd(bin)
        .args(args)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(what));
}

#[test]
fn bad_input_exits_2_naming_the_file_and_field() {
    rejects(
        "fikit-run",
        &["scenario"],
        "give a scenario file or at least one --job",
    );
    rejects("fikit-run", &["scenario", "nope.json"], "nope.json");
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("s.json");
    std::fs::write(
        &s,
        r#"{"jobs": [{"name": "a", "command": ["true"], "priority": 12}], "policies": ["mps"]}"#,
    )
    .unwrap();
    rejects(
        "fikit-run",
        &["scenario", s.to_str().unwrap()],
        "s.json: jobs[0].priority: 12",
    );
    rejects(
        "fikit-run",
        &["scenario", "--job", "a=true", "--policy", "gang"],
        "unknown policy \"gang\"",
    );
    // An array is not a scenario whose fields come in order.
    std::fs::write(
        &s,
        r#"[[{"name": "a", "command": ["true"]}], ["timeslice"], 1]"#,
    )
    .unwrap();
    rejects(
        "fikit-run",
        &["scenario", s.to_str().unwrap()],
        "the top level is an array; it must be a JSON object",
    );
    // The gate's A/B is the lab's: it measures one job alone, in phases
    // long enough for iterations.
    rejects(
        "fikit-lab",
        &[
            "gate-ab",
            "--job",
            "a=true",
            "--job",
            "b=true",
            "--policy",
            "timeslice",
            "--phase-ms",
            "500",
        ],
        "gate-ab: measures one job alone; the scenario has 2 jobs",
    );
    rejects(
        "fikit-lab",
        &[
            "gate-ab",
            "--job",
            "a=true",
            "--policy",
            "timeslice",
            "--phase-ms",
            "5",
        ],
        "--phase-ms 5: phases of 20 to 60000 ms",
    );
    // The floor is a kind of A/B.
    rejects(
        "fikit-lab",
        &["gate-ab", "--job", "a=true", "--policy", "fikit", "--floor"],
        "--phase-ms <MS>",
    );
    // Limits a round's clock cannot hold (a round timeout of 10^10 s
    // wrapped to a negative limit and stopped every round at once) or that
    // stop every round (0).
    for (opt, value) in [
        ("--round-timeout-s", "10000000000"),
        ("--round-timeout-s", "0"),
        ("--gate-timeout-ms", "18446744073709551615"),
        ("--gate-nap-us", "10000000000"),
    ] {
        rejects(
            "fikit-run",
            &["scenario", "--job", "a=true", opt, value],
            opt,
        );
    }
    // An output folder that cannot be made: bad input, before any round.
    rejects(
        "fikit-run",
        &[
            "scenario",
            "--job",
            "a=true",
            "--policy",
            "timeslice",
            "-o",
            "/proc/fikit-cannot-make",
        ],
        "-o /proc/fikit-cannot-make: cannot make the folder",
    );
    // A missing profile is named by its job; a missing run.json before
    // anything that would read it.
    rejects(
        "fikit-run",
        &[
            "scenario",
            "--job",
            "a:0:/nonexistent/a.parquet=true",
            "--policy",
            "timeslice",
        ],
        "jobs[0].profile (a): /nonexistent/a.parquet",
    );
    rejects(
        "fikit-run",
        &["report", "/nonexistent/run.json", "--job", "a=x"],
        "/nonexistent/run.json: cannot read",
    );
    // The product's command line carries none of the lab's options.
    cmd("fikit-run")
        .args(["scenario", "--job", "a=true", "--gate-ab", "500"])
        .assert()
        .code(2);
}

#[test]
fn a_job_that_launches_no_kernel_is_named_and_the_prediction_line_says_none() {
    // No CUDA program here (and in CI no GPU): the rounds run, and the
    // run says which jobs have no figures and why, instead of an empty
    // table alone; with no profile there is no prediction model to name.
    let d = tempfile::tempdir().unwrap();
    cmd("fikit-run")
        .args(["scenario", "--job", "a=true", "--job", "b=true"])
        .args(["--policy", "timeslice", "-r", "1", "-o"])
        .arg(d.path().join("out"))
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "prediction model: none (no job has a profile)",
        ))
        .stderr(predicates::str::contains(
            "no job launched a kernel in any round, so none has figures",
        ))
        .stderr(predicates::prelude::PredicateBooleanExt::not(
            predicates::str::contains("not co-runs"),
        ));
}

#[test]
fn a_run_does_not_replace_an_earlier_runs_measurements() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let run = |out: &std::path::Path| {
        let mut c = cmd("fikit-run");
        c.args([
            "scenario",
            "--job",
            "a=true",
            "--policy",
            "timeslice",
            "-r",
            "1",
        ])
        .arg("-o")
        .arg(out);
        c
    };
    run(&out).assert().success();
    let before = std::fs::read(out.join("run.json")).unwrap();
    run(&out)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!(
            "-o {}: holds {}, an earlier run's measurements",
            out.display(),
            out.join("run.json").display()
        )));
    assert_eq!(std::fs::read(out.join("run.json")).unwrap(), before);
    // A trace folder that cannot be made is bad input before any round.
    let out2 = d.path().join("out2");
    run(&out2)
        .args(["--trace", "/proc/fikit-no-such/t"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--trace /proc/fikit-no-such/t: cannot make the folder",
        ));
    assert!(!out2.join("run.json").exists());
}

#[test]
fn every_round_records_each_jobs_exit_and_a_failure_does_not_stop_the_others() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    cmd("fikit-run")
        .arg("scenario")
        .args([
            "--job",
            "ok:0=true",
            "--job",
            "bad=false",
            "--policy",
            "timeslice",
            "-r",
            "2",
            "-o",
        ])
        .arg(&out)
        .assert()
        .code(1)
        // The second repetition runs the policies in the other order.
        .stderr(predicates::str::contains(
            "round 3/4: timeslice repetition 2",
        ))
        .stderr(predicates::str::contains(
            "round 4/4: exclusive repetition 2",
        ))
        .stderr(predicates::str::contains("bad exited 1"));
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(run["complete"], true);
    let rounds = run["rounds"].as_array().unwrap();
    let seen: Vec<(String, i64, i64, i64)> = rounds
        .iter()
        .flat_map(|r| {
            r["jobs"].as_array().unwrap().iter().map(move |j| {
                (
                    r["policy"].as_str().unwrap().to_string(),
                    r["repetition"].as_i64().unwrap(),
                    j["exit_code"].as_i64().unwrap(),
                    j["launches"].as_i64().unwrap(),
                )
            })
        })
        .collect();
    let want: Vec<(String, i64, i64, i64)> = [
        ("exclusive", 0),
        ("timeslice", 0),
        ("exclusive", 1),
        ("timeslice", 1),
    ]
    .iter()
    .flat_map(|&(p, r)| [(p.to_string(), r, 0, 0), (p.to_string(), r, 1, 0)])
    .collect();
    assert_eq!(seen, want);
    assert!(out.join("logs/timeslice-2-bad.log").is_file());
    let table = std::fs::read_to_string(out.join("table.txt")).unwrap();
    assert!(table.contains("0/2"), "bad failed both rounds:\n{table}");
}

#[test]
fn the_gate_nap_reaches_each_job_and_is_kept_per_round() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let scenario = d.path().join("s.json");
    // The job exits 0 only when the collector's setting reached it.
    std::fs::write(
        &scenario,
        r#"{"policies": ["timeslice"], "repetitions": 1, "jobs": [
            {"name": "a", "command": ["sh", "-c", "test \"$FIKIT_GATE_NAP_US\" = 250"]}]}"#,
    )
    .unwrap();
    cmd("fikit-run")
        .arg("scenario")
        .arg(&scenario)
        .args(["--gate-nap-us", "250", "-o"])
        .arg(&out)
        .assert()
        .success();
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
    let naps: Vec<(i64, i64)> = run["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["gate_nap_us"].as_i64().unwrap(),
                r["jobs"][0]["exit_code"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(naps, [(250, 0), (250, 0)]);
    // Without the option the job sees 0 (the yielding wait).
    cmd("fikit-run")
        .arg("scenario")
        .arg(&scenario)
        .args(["-o"])
        .arg(d.path().join("out2"))
        .assert()
        .code(1);
}

#[test]
fn each_job_keeps_what_its_main_thread_got_from_the_cpu() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    // A job busy on the CPU for about half a second, one sleeping as long.
    let busy = r#"i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"#;
    let scenario = d.path().join("s.json");
    std::fs::write(
        &scenario,
        serde_json::json!({"policies": ["timeslice"], "repetitions": 1, "jobs": [
            {"name": "busy", "command": ["sh", "-c", busy]},
            {"name": "idle", "command": ["sleep", "0.5"]}]})
        .to_string(),
    )
    .unwrap();
    cmd("fikit-run")
        .arg("scenario")
        .arg(&scenario)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
    let jobs = &run["rounds"][0]["jobs"];
    let host = |j: usize, f: &str| jobs[j]["host_use"][f].as_i64().unwrap();
    for j in 0..2 {
        // No CUDA: counted from the first look, not a first launch.
        assert_eq!(jobs[j]["host_use"]["from_first_launch"], false);
        assert!(host(j, "span_ns") > 0, "{}", jobs[j]);
    }
    // The busy job's thread was on a CPU for much of its span (other tests
    // share the CPUs), the sleeping one hardly.
    assert!(host(0, "on_cpu_ns") > host(0, "span_ns") / 4, "{}", jobs[0]);
    assert!(
        host(1, "on_cpu_ns") < host(1, "span_ns") / 10,
        "{}",
        jobs[1]
    );
    assert!(host(0, "process_cpu_ns") > 0);
}

#[test]
fn interrupt_stops_every_job_and_leaves_no_files() {
    let d = tempfile::tempdir().unwrap();
    let tmp = d.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let pidfile = d.path().join("pid");
    let s = d.path().join("s.json");
    let script = format!("echo $$ > {}; exec sleep 60", pidfile.display());
    std::fs::write(
        &s,
        serde_json::json!({
            "policies": ["timeslice"],
            "jobs": [{"name": "long", "command": ["sh", "-c", script]}]
        })
        .to_string(),
    )
    .unwrap();
    let mut child = std::process::Command::new(bin("fikit-run"))
        .env("FIKIT_COLLECTOR", stand_in_collector())
        .arg("scenario")
        .arg(&s)
        .arg("-o")
        .arg(d.path().join("out"))
        .env("TMPDIR", &tmp)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !pidfile.exists() || std::fs::read_to_string(&pidfile).unwrap().trim().is_empty() {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the job never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let job: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: a signal to the child we started.
    unsafe { libc_kill(child.id() as i32, 2) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(t.elapsed() < Duration::from_secs(20));
    assert!(
        !std::path::Path::new(&format!("/proc/{job}")).exists(),
        "the job was left running"
    );
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "work files left behind"
    );
    // The control block lives in /dev/shm where there is one.
    let ours = format!("fikit-run-{}-", child.id());
    if let Ok(shm) = std::fs::read_dir("/dev/shm") {
        let left: Vec<_> = shm
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with(&ours))
            .collect();
        assert!(left.is_empty(), "control blocks left in /dev/shm: {left:?}");
    }
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path().join("out/run.json")).unwrap()).unwrap();
    assert_eq!(run["complete"], false);
}

unsafe extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

#[test]
fn report_rebuilds_the_table_from_a_run_json_counting_co_runs_only() {
    let d = tempfile::tempdir().unwrap();
    let round = |policy: &str, rep: i64, hi: (i64, i64), lo: (i64, i64)| {
        serde_json::json!({"policy": policy, "repetition": rep,
            "jobs": [job_run("hi", hi.0, hi.1), job_run("lo", lo.0, lo.1)]})
    };
    // Repetition 1's time-slicing round ran hi before lo began: no co-run.
    let run = serde_json::json!({
        "complete": true,
        "rounds": [
            round("exclusive", 0, (0, 100), (0, 1000)),
            round("timeslice", 0, (0, 200), (0, 1100)),
            round("exclusive", 1, (0, 100), (0, 1000)),
            round("timeslice", 1, (0, 100), (100, 1100)),
        ]
    });
    let saved = d.path().join("run.json");
    std::fs::write(&saved, run.to_string()).unwrap();
    let out = d.path().join("out");
    let jobs = ["--job", "hi:0=true", "--job", "lo:9=true"];
    cmd("fikit-run")
        .arg("report")
        .arg(&saved)
        .args(jobs)
        .args(["--policy", "exclusive,timeslice", "-r", "2"])
        .arg("-o")
        .arg(&out)
        .assert()
        .code(0)
        .stderr(predicates::str::contains(
            "under timeslice, 1 of 2 repetitions were not co-runs",
        ));
    let table = std::fs::read_to_string(out.join("table.txt")).unwrap();
    let line = |policy: &str, job: &str| {
        table
            .lines()
            .find(|l| l.contains(policy) && l.contains(&format!(" {job} ")))
            .unwrap_or_else(|| panic!("no {policy} {job} row:\n{table}"))
            .to_string()
    };
    // Only repetition 1 counts: 200 / 100.
    let hi = line("timeslice", "hi");
    assert!(hi.contains("1/2") && hi.contains("2.00x"), "{hi}");
    assert!(line("timeslice", "lo").contains("1.10x"), "{table}");
    // Every repetition with --min-overlap 0: 2.0x and 1.0x, median 1.5x.
    cmd("fikit-run")
        .arg("report")
        .arg(&saved)
        .args(jobs)
        .args(["--policy", "exclusive,timeslice", "--min-overlap", "0"])
        .arg("-o")
        .arg(&out)
        .assert()
        .code(0);
    let table = std::fs::read_to_string(out.join("table.txt")).unwrap();
    assert!(table.contains("1.50x [1.00-2.00]"), "{table}");
    // Bad input: a share outside 0..1; a run.json of other jobs.
    cmd("fikit-run")
        .arg("scenario")
        .args([
            "--job",
            "a=true",
            "--policy",
            "timeslice",
            "--min-overlap",
            "1.5",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--min-overlap 1.5"));
    cmd("fikit-run")
        .arg("report")
        .arg(&saved)
        .args(["--job", "a=true", "--policy", "timeslice"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "run.json: a exclusive round has 2 jobs, the scenario 1",
        ));
    // A run.json that names its jobs: the same count under other names or
    // priorities is another run, not relabelled.
    let mut named = run.clone();
    named["jobs"] = serde_json::json!([["hi", ["true"], 0], ["lo", ["true"], 9]]);
    named["policies"] = serde_json::json!(["exclusive", "timeslice"]);
    std::fs::write(&saved, named.to_string()).unwrap();
    for (jobs, asked) in [
        (["x:0=true", "y:9=true"], "(x:0, y:9)"),
        (["hi:9=true", "lo:0=true"], "(hi:9, lo:0)"),
    ] {
        cmd("fikit-run")
            .arg("report")
            .arg(&saved)
            .args(["--job", jobs[0], "--job", jobs[1]])
            .args(["--policy", "exclusive,timeslice", "-o"])
            .arg(&out)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(format!(
                "run.json: a run of hi:0, lo:9 (name:priority), not of the jobs named here {asked}"
            )));
    }
    // Its own jobs, under other commands (a report runs none): rebuilt,
    // without --policy under the policies it ran, not every policy.
    cmd("fikit-run")
        .arg("report")
        .arg(&saved)
        .args([
            "--job",
            "hi:0=other",
            "--job",
            "lo:9=other",
            "-r",
            "2",
            "-o",
        ])
        .arg(&out)
        .assert()
        .code(0);
    let rebuilt: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(
        rebuilt["policies"],
        serde_json::json!(["exclusive", "timeslice"])
    );
    let table = std::fs::read_to_string(out.join("table.txt")).unwrap();
    assert!(!table.contains("preemptive"), "{table}");
}

#[test]
fn the_prediction_comes_from_the_profiles_alone_not_the_rounds() {
    let d = tempfile::tempdir().unwrap();
    let traces = fikit_e2e::root().join("traces/h200");
    // Two run.json of the same pair whose rounds differ in everything the
    // gate measured: regions, first launches (staggered by 200 ms in one),
    // iterations.
    let alone = |job: &str, first: i64, it: i64| {
        let mut r = job_run(job, first, first + 100 * it);
        r["iterations_ns"] = serde_json::json!(vec![it; 100]);
        r
    };
    let run_json = |name: &str, it: i64, lag: i64, end: i64| {
        let run = serde_json::json!({
            "complete": true,
            "rounds": [
                {"policy": "exclusive", "repetition": 0,
                 "jobs": [alone("b1", 1_000_000, it), alone("b128", 1_000_000, 6 * it)]},
                {"policy": "timeslice", "repetition": 0,
                 "jobs": [job_run("b1", 1_000_000 + lag, end), job_run("b128", 1_000_000, end + 300_000_000)]},
                {"policy": "mps", "repetition": 0,
                 "jobs": [job_run("b1", 1_000_000 + lag, end), job_run("b128", 1_000_000, end + 300_000_000)]}
            ]
        });
        let p = d.path().join(name);
        std::fs::write(&p, run.to_string()).unwrap();
        p
    };
    let a = run_json("a.json", 3_000_000, 0, 600_000_000);
    let b = run_json("b.json", 5_000_000, 200_000_000, 900_000_000);
    let profile = |name: &str, file: &str| {
        format!(
            "{name}:{}:{}=true",
            if name == "b1" { 0 } else { 9 },
            traces.join(file).display()
        )
    };
    let jobs = [
        "--job".to_string(),
        profile("b1", "resnet50-bs1-eval-466.parquet"),
        "--job".to_string(),
        profile("b128", "resnet50-bs128-eval-839.parquet"),
    ];
    // The simulated column and the bracketed simulated figures, per row.
    let simulated = |saved: &std::path::Path, out: &str| -> Vec<String> {
        let out = d.path().join(out);
        cmd("fikit-run")
            .arg("report")
            .arg(saved)
            .args(&jobs)
            .args(["--policy", "exclusive,timeslice,mps", "--min-overlap", "0"])
            .arg("-o")
            .arg(&out)
            .assert()
            .code(0);
        let table = std::fs::read_to_string(out.join("table.txt")).unwrap();
        table
            .lines()
            .filter(|l| l.contains('┆') && (l.contains(" b1 ") || l.contains(" b128 ")))
            .map(|l| {
                let cells: Vec<&str> = l.split('┆').map(str::trim).collect();
                // policy, job, simulated, and every "(sim)" figure.
                let sims: Vec<&str> = cells
                    .iter()
                    .filter_map(|c| c.rsplit_once('(').map(|(_, s)| s))
                    .filter(|s| !s.starts_with("in range"))
                    .collect();
                format!("{} {} {} {sims:?}", cells[0], cells[1], cells[7])
            })
            .collect()
    };
    let (from_a, from_b) = (simulated(&a, "a"), simulated(&b, "b"));
    assert_eq!(from_a.len(), 6, "{from_a:?}");
    assert_eq!(from_a, from_b);
    // The rounds did differ: the real columns are not the same.
    let real = |out: &str| std::fs::read_to_string(d.path().join(out).join("table.txt")).unwrap();
    assert_ne!(real("a"), real("b"));
    // The option that took the runs alone into the prediction is gone.
    cmd("fikit-run")
        .arg("report")
        .arg(&a)
        .args(&jobs)
        .arg("--host-speed-from-alone")
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "unexpected argument '--host-speed-from-alone'",
        ));
}

#[test]
fn the_simulated_column_and_its_range_are_fikit_sims_answer() {
    // The shipped H200 profiles carry untraced runs and pressure passes:
    // fikit-run's prediction of a pair (slowdown, its range, p99 and its
    // range) is what `fikit-sim --jobs` says of the same pair.
    let d = tempfile::tempdir().unwrap();
    let (saved, jobs) = b1_beside_b128(d.path());
    let mut run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    let mps = run["rounds"][1].clone();
    let mut ts = mps.clone();
    ts["policy"] = "timeslice".into();
    run["rounds"].as_array_mut().unwrap().push(ts);
    std::fs::write(&saved, run.to_string()).unwrap();
    let out = d.path().join("out");
    cmd("fikit-run")
        .arg("report")
        .arg(&saved)
        .args(&jobs)
        .args([
            "--policy",
            "exclusive,timeslice,mps",
            "--min-overlap",
            "0",
            "-o",
        ])
        .arg(&out)
        .assert()
        .code(0);
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
    let sim = sim_json_h200(&[
        "--jobs",
        "resnet50-bs1-eval,resnet50-bs128-eval",
        "--policy",
        "timeslice,mps",
    ]);
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    let mut compared = 0;
    for policy in ["timeslice", "mps"] {
        for (job, name) in [("b1", "resnet50-bs1-eval"), ("b128", "resnet50-bs128-eval")] {
            let row = run["rows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["policy"] == policy && r["job"] == job)
                .unwrap();
            let want = sim["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["policy"] == policy && r["job"] == name)
                .unwrap();
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
            let ctx = format!("{policy} {job}: {row} against {want}");
            assert!(
                close(f(&row["sim_slowdown"]["median"]), f(&want["slowdown"])),
                "{ctx}"
            );
            for k in 0..2 {
                assert!(
                    close(
                        f(&row["sim_slowdown_range"][k]),
                        f(&want["slowdown_range"][k])
                    ),
                    "{ctx}"
                );
                assert!(
                    close(
                        f(&row["sim_p99_range_ms"][k]) * 1e6,
                        f(&want["p99_range"][k])
                    ),
                    "{ctx}"
                );
            }
            assert!(
                close(f(&row["sim_p99_ms"]) * 1e6, f(&want["p99_ns"])),
                "{ctx}"
            );
            // A real range: the ends differ from each other.
            assert!(
                f(&row["sim_slowdown_range"][1]) > f(&row["sim_slowdown_range"][0]),
                "{ctx}"
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 4);
}

#[test]
fn a_serving_jobs_latency_is_its_requests_real_and_simulated() {
    // mobilenet b1 serving 200 Poisson requests at 100 a second beside
    // resnet50 training, the shipped H200 profiles (closed loop, re-timed).
    let d = tempfile::tempdir().unwrap();
    let traces = fikit_e2e::root().join("traces/h200");
    let scenario = serde_json::json!({
        "policies": ["exclusive", "timeslice"],
        "repetitions": 3,
        "jobs": [
            {"name": "srv", "priority": 0, "command": ["python3", "w.py", "--rate", "100"],
             "profile": traces.join("mobilenet_v3_large-bs1-eval-662.parquet"),
             "requests": {"count": 200, "rate_per_s": 100}},
            {"name": "train", "priority": 9, "command": ["python3", "t.py"],
             "profile": traces.join("resnet50-bs32-train-636.parquet")}
        ]
    });
    let scenario_file = d.path().join("s.json");
    std::fs::write(&scenario_file, scenario.to_string()).unwrap();
    // Three repetitions; the server's output gave p99s of 9, 12 and 30 ms
    // alone and 11, 14, 15 shared.
    let served = |job: &str, p99: f64| {
        let mut r = job_run(job, 1_000_000, 2_001_000_000);
        r["requests"] =
            serde_json::json!({"p50_ms": 4.0, "p99_ms": p99, "p999_ms": 40.0, "busy_share": 0.3});
        r
    };
    let mut rounds = Vec::new();
    for (rep, (alone, shared)) in [(9.0, 11.0), (12.0, 14.0), (30.0, 15.0)]
        .into_iter()
        .enumerate()
    {
        rounds.push(serde_json::json!({"policy": "exclusive", "repetition": rep,
            "jobs": [served("srv", alone), job_run("train", 1_000_000, 3_001_000_000)]}));
        rounds.push(serde_json::json!({"policy": "timeslice", "repetition": rep,
            "jobs": [served("srv", shared), job_run("train", 1_000_000, 3_101_000_000)]}));
    }
    let saved = d.path().join("run.json");
    std::fs::write(
        &saved,
        serde_json::json!({"complete": true, "rounds": rounds}).to_string(),
    )
    .unwrap();
    let out = d.path().join("out");
    cmd("fikit-run")
        .arg("report")
        .arg(&saved)
        .arg(&scenario_file)
        .args(["--min-overlap", "0", "-o"])
        .arg(&out)
        .assert()
        .code(0);
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
    let row = |policy: &str| {
        run["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["policy"] == policy && r["job"] == "srv")
            .unwrap()
            .clone()
    };
    // Real: the median over the repetitions of the requests' p99.
    assert_eq!(row("exclusive")["p99_ms"], 12.0);
    assert_eq!(row("exclusive")["busy_share"], 0.3);
    assert_eq!(row("timeslice")["p99_ms"], 14.0);
    // Simulated: the requests of fikit-sim --serve at the same rate, count
    // and seed (0, workload.py's), alone and under time slicing.
    let sim = sim_json_h200(&[
        "--jobs",
        "mobilenet_v3_large-bs1-eval,resnet50-bs32-train",
        "--serve",
        "100",
        "--requests",
        "200",
        "--policy",
        "exclusive,timeslice",
    ]);
    let at = |policy: &str| {
        sim.as_array()
            .unwrap()
            .iter()
            .find(|r| r["policy"] == policy)
            .unwrap()
            .clone()
    };
    let ms = |v: &serde_json::Value| v.as_f64().unwrap();
    let alone = ms(&at("exclusive")["p99_ns"]) / 1e6;
    assert!(
        (ms(&row("exclusive")["sim_p99_ms"]) - alone).abs() < 1e-6,
        "{alone}"
    );
    assert!(
        (ms(&row("exclusive")["sim_p50_ms"]) - ms(&at("exclusive")["p50_ns"]) / 1e6).abs() < 1e-6
    );
    // Shared, the partner repeats in --serve and not in fikit-run: the
    // server's requests still wait for time slices, later than alone.
    assert!(ms(&row("timeslice")["sim_p99_ms"]) > alone);
}

/// `fikit-sim ARGS --no-plots --format json` on the shipped H200 traces,
/// parsed.
fn sim_json_h200(args: &[&str]) -> serde_json::Value {
    let out = cmd("fikit-sim")
        .arg(fikit_e2e::root().join("traces/h200"))
        .args(args)
        .args(["--no-plots", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
