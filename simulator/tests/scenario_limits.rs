//! A scenario whose `repeat` or request count would need more memory than any
//! machine has is an error, not an allocation that aborts the program (both
//! aborted with "memory allocation of … bytes failed" before; found while
//! fuzzing scenario files, fuzz/README.md).

use fikit_sim::error::FileError;
use fikit_sim::sim::scenario::{MAX_JOB_STEPS, Scenario, ScenarioError};

fn load(json: &str) -> Result<Scenario, ScenarioError> {
    let dir = tempfile::tempdir().unwrap();
    fikit_trace::write_trace(
        &dir.path().join("t.parquet"),
        &fikit_trace::fixture::every_column("t"),
    )
    .unwrap();
    Scenario::parse(json, &dir.path().join("s.json"))
}

fn invalid(json: &str) -> String {
    match load(json) {
        Err(ScenarioError::File(FileError::Invalid { message, .. })) => message,
        other => panic!("expected an invalid scenario, got {other:?}"),
    }
}

#[test]
fn a_repeat_beyond_memory_is_an_error() {
    let m = invalid(r#"{"jobs": [{"trace": "t.parquet", "repeat": 1000000000000000}]}"#);
    assert!(
        m.starts_with("jobs[0].repeat: 1000000000000000 runs of"),
        "{m}"
    );
    assert!(m.contains(&MAX_JOB_STEPS.to_string()), "{m}");
    // usize::MAX overflows the product: still an error, not a panic.
    let m = invalid(&format!(
        r#"{{"jobs": [{{"trace": "t.parquet", "repeat": {}}}]}}"#,
        usize::MAX
    ));
    assert!(m.starts_with("jobs[0].repeat:"), "{m}");
}

#[test]
fn a_request_count_beyond_memory_is_an_error() {
    let m = invalid(
        r#"{"jobs": [{"trace": "t.parquet", "requests": {"count": 1000000000000000, "rate_per_s": 5}}]}"#,
    );
    assert!(
        m.starts_with("jobs[0].requests.count: 1000000000000000 requests"),
        "{m}"
    );
}

#[test]
fn plausible_counts_still_load() {
    let s = load(
        r#"{"jobs": [{"trace": "t.parquet", "repeat": 3}, {"trace": "t.parquet", "requests": {"count": 50, "rate_per_s": 100}}]}"#,
    )
    .unwrap();
    assert_eq!(s.jobs.len(), 2);
}
