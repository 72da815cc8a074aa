//! Scenario files: limits and request arrivals.
//!
//! A scenario whose `repeat` or request count would need more memory than any
//! machine has is an error, not an allocation that aborts the program (both
//! aborted with "memory allocation of … bytes failed" before; found while
//! fuzzing scenario files, fuzz/README.md).
//!
//! A serving job's request arrivals: Poisson from the job's own seed or the
//! scenario's, or evenly spaced (the arrivals
//! `scripts/workloads/workload.py --rate` serves on a real GPU).

use fikit_sim::error::FileError;
use fikit_sim::sim::job::{HostStep, Job, poisson_arrivals};
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

/// The request arrivals of a serving job, ns from its start.
fn arrivals(job: &Job) -> Vec<i64> {
    job.steps
        .iter()
        .filter_map(|s| match s {
            HostStep::Arrive { at_ns } => Some(*at_ns),
            _ => None,
        })
        .collect()
}

#[test]
fn fixed_arrivals_are_one_period_apart() {
    let s = load(
        r#"{"jobs": [{"trace": "t.parquet", "requests": {"count": 4, "rate_per_s": 200, "arrivals": "fixed"}}]}"#,
    )
    .unwrap();
    assert_eq!(
        arrivals(&s.jobs[0]),
        [5_000_000, 10_000_000, 15_000_000, 20_000_000]
    );
}

#[test]
fn a_jobs_own_seed_replaces_the_scenarios() {
    // The second job: without its own seed it draws from the scenario's
    // seed (7) mixed with its index; with one, from that seed alone.
    let json = |seed: &str| {
        format!(
            r#"{{"seed": 7, "jobs": [{{"trace": "t.parquet"}}, {{"trace": "t.parquet", "requests": {{"count": 5, "rate_per_s": 150{seed}}}}}]}}"#
        )
    };
    let own = load(&json(r#", "seed": 42"#)).unwrap();
    assert_eq!(arrivals(&own.jobs[1]), poisson_arrivals(5, 150.0, 42));
    let mixed = load(&json("")).unwrap();
    assert_eq!(
        arrivals(&mixed.jobs[1]),
        poisson_arrivals(5, 150.0, 7 ^ 0x9E37_79B9)
    );
}

#[test]
fn an_unknown_arrival_kind_is_an_error_naming_it() {
    let m = invalid(
        r#"{"jobs": [{"trace": "t.parquet", "requests": {"count": 4, "rate_per_s": 200, "arrivals": "bursty"}}]}"#,
    );
    assert!(m.contains("bursty"), "{m}");
}
