//! `fikit-sim --live`, `calibrate` and `validate` without a GPU (CI never
//! has one): bad input is refused before anything starts, and a missing CUDA
//! driver is a clear error, never a panic. The GPU runs themselves are
//! scripted and their outputs committed (reports/validation/).

use fikit_e2e::cmd;
use predicates::prelude::*;

fn shipped(name: &str) -> String {
    format!("{}/../traces/h200/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn live_subcommands_have_help() {
    for sub in ["calibrate", "validate", "load"] {
        cmd("fikit-sim")
            .args([sub, "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("Usage"));
    }
    cmd("fikit-sim")
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("--live"));
}

#[test]
fn validate_refuses_a_bad_scenario_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.json");
    std::fs::write(&p, r#"{"jobs": []}"#).unwrap();
    cmd("fikit-sim")
        .arg("validate")
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("`jobs` is empty"));
    cmd("fikit-sim")
        .args(["validate", "--policy", "nonsense"])
        .arg(&p)
        .assert()
        .code(2);
}

#[test]
fn live_without_a_usable_gpu_fails_cleanly() {
    let out = cmd("fikit-sim")
        .args(["--live", "--policy", "exclusive", "--format", "json"])
        .arg(shipped("resnet50-bs1-eval-659.parquet"))
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
    cmd("fikit-sim")
        .args(["--live", "/nonexistent/trace.parquet"])
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
    ] {
        cmd("fikit-sim")
            .arg("load")
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says));
    }
    cmd("fikit-sim")
        .args(["load", "--victim", "--victim-passes", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--victim-passes 0: must be at least 1",
        ));
    // Passes are the victim's: without --victim they are refused.
    cmd("fikit-sim")
        .args(["load", "--victim-passes", "3"])
        .assert()
        .code(2);
    cmd("fikit-sim")
        .args(["load", "--kind", "neither"])
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
        let mut c = cmd("fikit-sim");
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
