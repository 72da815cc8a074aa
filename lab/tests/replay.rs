//! Issue 15's second criterion, kept by CI: the shipped GPU models still
//! predict the saved live-replay runs of the replay validation sets (issue
//! 5's) within 5% median and 15% worst
//! JCT error for every policy. `fikit-lab validate --live-from` re-simulates
//! each set's scenarios with the model and compares with what the GPU
//! measured (no GPU needed); a model change that makes any of them worse
//! fails here.

use std::path::PathBuf;

use fikit_e2e::{cmd, root};

/// Re-simulates the scenarios of `lab/scenarios/SET/` against the live
/// runs saved in `reports/validation/LIVE.json` with
/// `simulator/models/GPU.json`, and checks each policy's median and worst
/// |error| against the criterion.
fn within_criterion(gpu: &str, set: &str, live: &str) {
    let root = root();
    let out = tempfile::tempdir().unwrap();
    let mut scenarios: Vec<PathBuf> = std::fs::read_dir(root.join("lab/scenarios").join(set))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    scenarios.sort();
    assert!(!scenarios.is_empty(), "no scenarios in {set}");
    cmd("fikit-lab")
        .current_dir(&root)
        .arg("validate")
        .arg("--live-from")
        .arg(format!("reports/validation/{live}.json"))
        .arg("--model")
        .arg(format!("simulator/models/{gpu}.json"))
        .arg("-o")
        .arg(out.path())
        .args(&scenarios)
        .assert()
        .success();
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join("validation.json")).unwrap())
            .unwrap();
    let summary = report["summary"].as_array().expect("a summary per policy");
    let policies: Vec<&str> = summary
        .iter()
        .map(|p| p["policy"].as_str().unwrap())
        .collect();
    for policy in ["exclusive", "timeslice", "mps"] {
        assert!(policies.contains(&policy), "{live}: no {policy} rows");
    }
    for p in summary {
        let policy = p["policy"].as_str().unwrap();
        let rows = p["rows"].as_u64().unwrap();
        let median = p["median_abs_error"].as_f64().unwrap();
        let worst = p["max_abs_error"].as_f64().unwrap();
        assert!(rows >= 6, "{live} {policy}: {rows} rows");
        assert!(
            median <= 0.05 && worst <= 0.15,
            "{live} {policy}: median {:.1}%, worst {:.1}% (criterion 5% / 15%)",
            median * 100.0,
            worst * 100.0
        );
    }
}

#[test]
fn h200_validation_set() {
    within_criterion("h200", "validation", "h200");
}

#[test]
fn h200_holdout() {
    within_criterion("h200", "holdout", "h200-holdout");
}

#[test]
fn h200_holdout2() {
    within_criterion("h200", "holdout2", "h200-holdout2");
}

#[test]
fn h100_validation_set() {
    within_criterion("h100", "validation", "h100");
}

#[test]
fn h100_holdout() {
    within_criterion("h100", "holdout", "h100-holdout");
}

#[test]
fn h100_holdout2() {
    within_criterion("h100", "holdout2", "h100-holdout2");
}
