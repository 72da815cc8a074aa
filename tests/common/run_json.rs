//! run.json fixtures for the `fikit-run` tests: a job's measurements and
//! a pair of the shipped H200 profiles.

/// A job's measurements as run.json holds them: exited 0, region `first..end` ns.
pub fn job_run(job: &str, first: i64, end: i64) -> serde_json::Value {
    serde_json::json!({
        "job": job, "exit_code": 0, "spawn_ns": 0, "exit_ns": end,
        "first_launch_ns": first, "end_ns": end, "iterations_ns": [],
        "launches": 10, "waits": 0, "wait_ns": 0, "fills": 0, "marked": 0,
        "timeouts": 0, "unknown": 0
    })
}

/// resnet50 batch 1 (launch-bound, `b1`) beside batch 128 (`b128`) under
/// MPS, the shipped H200 profiles: alone 300 and 1,800 ms, together 600 and
/// 1,900 ms. Writes the run.json into `dir`; returns it and the `--job`
/// arguments.
pub fn b1_beside_b128(dir: &std::path::Path) -> (std::path::PathBuf, [String; 4]) {
    let traces = crate::root().join("traces/h200");
    let run = serde_json::json!({
        "complete": true,
        "rounds": [
            {"policy": "exclusive", "repetition": 0,
             "jobs": [job_run("b1", 1_000_000, 301_000_000), job_run("b128", 1_000_000, 1_801_000_000)]},
            {"policy": "mps", "repetition": 0,
             "jobs": [job_run("b1", 1_000_000, 601_000_000), job_run("b128", 1_000_000, 1_901_000_000)]}
        ]
    });
    let saved = dir.join("run.json");
    std::fs::write(&saved, run.to_string()).unwrap();
    let jobs = [
        "--job".to_string(),
        format!(
            "b1:0:{}=true",
            traces.join("resnet50-bs1-eval-466.parquet").display()
        ),
        "--job".to_string(),
        format!(
            "b128:9:{}=true",
            traces.join("resnet50-bs128-eval-839.parquet").display()
        ),
    ];
    (saved, jobs)
}
