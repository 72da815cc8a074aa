//! `fikit-lab live`, `calibrate`, `validate`, `load` and `pressure` without a GPU (CI never
//! has one): bad input is refused before anything starts, and a missing CUDA
//! driver is a clear error, never a panic. The GPU runs themselves are
//! scripted and their outputs committed (reports/validation/).

use fikit_e2e::cmd;
use predicates::prelude::*;

fn shipped(name: &str) -> String {
    fikit_e2e::root()
        .join("traces/h200")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn live_subcommands_have_help() {
    for sub in ["live", "calibrate", "validate", "load", "pressure"] {
        cmd("fikit-lab")
            .args([sub, "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("Usage"));
    }
    // The product's commands no longer carry the lab's.
    cmd("fikit-sim")
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("--live").not())
        .stdout(predicate::str::contains("\n  calibrate ").not());
}

#[test]
fn validate_refuses_a_bad_scenario_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.json");
    std::fs::write(&p, r#"{"jobs": []}"#).unwrap();
    cmd("fikit-lab")
        .arg("validate")
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("`jobs` is empty"));
    cmd("fikit-lab")
        .args(["validate", "--policy", "nonsense"])
        .arg(&p)
        .assert()
        .code(2);
}

#[test]
fn live_without_a_usable_gpu_fails_cleanly() {
    let out = cmd("fikit-lab")
        .args(["live", "--policy", "exclusive", "--format", "json"])
        .arg(shipped("resnet50-bs1-eval-466.parquet"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    if out.status.success() {
        // A machine with a GPU: the replay ran and reported the job.
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["jobs"][0]["job"], "resnet50-bs1-eval");
    } else {
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains("cannot load libcuda") || err.contains("CUDA driver"),
            "{err}"
        );
    }
}

#[test]
fn live_refuses_a_missing_trace_with_exit_2() {
    cmd("fikit-lab")
        .args(["live", "/nonexistent/trace.parquet"])
        .assert()
        .code(2);
}

#[test]
fn load_refuses_bad_options_with_exit_2_before_touching_a_gpu() {
    for (args, says) in [
        (
            &["--share", "0"][..],
            "--share 0: must be a share of the block slots in (0, 1]",
        ),
        (&["--share", "1.5"], "--share 1.5: must be a share"),
        (&["--share", "NaN"], "--share NaN: must be a share"),
        (&["--seconds=-1"], "--seconds -1: must be a positive number"),
        (&["--kernel-ms", "0"], "--kernel-ms 0: must be at least 1"),
        (
            &["--kernel-ms", "60001"],
            "--kernel-ms 60001: at most 60000",
        ),
        (
            &["--seconds", "1e12"],
            "--seconds 1000000000000: must be a positive number",
        ),
        (
            &["--carveout", "101"],
            "--carveout 101: must be a percentage, 0 to 100",
        ),
        (
            &["--carveout=-1"],
            "--carveout -1: must be a percentage, 0 to 100",
        ),
    ] {
        cmd("fikit-lab")
            .arg("load")
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says));
    }
    cmd("fikit-lab")
        .args(["load", "--victim", "--victim-passes", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--victim-passes 0: must be at least 1",
        ));
    // Passes are the victim's: without --victim they are refused.
    cmd("fikit-lab")
        .args(["load", "--victim-passes", "3"])
        .assert()
        .code(2);
    cmd("fikit-lab")
        .args(["load", "--kind", "neither"])
        .assert()
        .code(2);
    // The carveout is the load kernel's: the victim refuses it.
    cmd("fikit-lab")
        .args(["load", "--victim", "--carveout", "100"])
        .assert()
        .code(2);
}

#[test]
fn load_without_a_usable_gpu_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let stop = dir.path().join("stop");
    // Stops at once on a GPU machine: the stop file is already there.
    std::fs::write(&stop, "").unwrap();
    for victim in [false, true] {
        let mut c = cmd("fikit-lab");
        c.args(["load", "--seconds", "5", "--stop-file"]).arg(&stop);
        if victim {
            c.arg("--victim");
        }
        let out = c.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{err}");
        if !out.status.success() {
            assert_eq!(out.status.code(), Some(1), "{err}");
            assert!(
                err.contains("cannot load libcuda") || err.contains("CUDA driver"),
                "{err}"
            );
        }
    }
}

/// A pressure pass's folder: the job keeps one kernel of 4 blocks of 1,024
/// threads running from 2,000 to 10,000 ns on a device of 10 SMs (a share
/// of 0.2), and the victim, 100 ns a run alone ten times before it, takes
/// 150 ns a run beside it: a slowdown of 1.5.
fn pressure_pass(dir: &std::path::Path) {
    let trace = fikit_trace::fixture::kernel_spans;
    let job: Vec<(i64, i64)> = (0..80)
        .map(|i| (2_000 + i * 100, 2_100 + i * 100))
        .collect();
    let mut runs: Vec<(i64, i64)> = (0..10).map(|i| (i * 150, i * 150 + 100)).collect();
    runs.extend((0..20).map(|i| (4_000 + i * 200, 4_150 + i * 200)));
    std::fs::create_dir_all(dir).unwrap();
    fikit_trace::write_trace(&dir.join("small-1.parquet"), &trace("small", 10, &job, 4)).unwrap();
    fikit_trace::write_trace(
        &dir.join("victim-2.parquet"),
        &trace("victim", 10, &runs, 1),
    )
    .unwrap();
}

#[test]
fn pressure_reads_a_pass_and_writes_the_weight_fikit_run_reads() {
    let dir = tempfile::tempdir().unwrap();
    pressure_pass(&dir.path().join("small"));
    // c = 5: the victim's 1.5x is 1 + 5 x 0.2 x 0.5, a weight of 0.5.
    let model = dir.path().join("model.json");
    std::fs::write(&model, r#"{"name": "test", "corun_slowdown": 5.0}"#).unwrap();
    let out = dir.path().join("pressure.json");
    cmd("fikit-lab")
        .arg("pressure")
        .arg(dir.path().join("small"))
        .arg("--model")
        .arg(&model)
        .arg("-o")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("1.50x"))
        .stdout(predicate::str::contains("host us"));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let w = v["jobs"]["small"]["weight"].as_f64().unwrap();
    assert!(
        v["jobs"]["small"]["host_ns_per_launch"].as_f64().is_some(),
        "the job's host figure in the pass: {v}"
    );
    assert!((w - 0.5).abs() < 1e-9, "{v}");
    assert_eq!(v["corun_slowdown"], 5.0);
    assert_eq!(v["jobs"]["small"]["runs_whole"], 20);
}

#[test]
fn pressure_refuses_a_folder_without_a_victim_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    pressure_pass(&dir.path().join("small"));
    std::fs::remove_file(dir.path().join("small/victim-2.parquet")).unwrap();
    cmd("fikit-lab")
        .args(["pressure", "--model", "default"])
        .arg(dir.path().join("small"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "one job trace and one victim trace",
        ));
    cmd("fikit-lab")
        .args(["pressure", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("victim"));
}
