//! `scripts/workloads/workload.py`'s open-loop arrivals against the
//! simulator's: a real serving run and a scenario with the same count, rate
//! and seed must see the same arrival times. The script's functions run
//! under `python3` with a stand-in `torch` module (they need no GPU).

use std::process::Command;

use fikit_sim_core::sim::job::{fixed_arrivals, poisson_arrivals};

/// Runs `expr` (Python, the script's module bound to `w`) and returns what
/// it printed as JSON.
fn script(expr: &str) -> serde_json::Value {
    let path = fikit_e2e::root().join("scripts/workloads/workload.py");
    let program = format!(
        "import importlib.util, json, sys, types\n\
         sys.modules['torch'] = types.ModuleType('torch')\n\
         spec = importlib.util.spec_from_file_location('w', {path:?})\n\
         w = importlib.util.module_from_spec(spec)\n\
         spec.loader.exec_module(w)\n\
         print(json.dumps({expr}))\n",
        path = path.display().to_string()
    );
    let out = Command::new("python3")
        .arg("-c")
        .arg(&program)
        .output()
        .expect("running python3");
    assert!(
        out.status.success(),
        "python3 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON from the script")
}

#[test]
fn poisson_arrivals_match_the_simulators_draw() {
    for (count, rate, seed) in [(500, 150.0, 1), (300, 50.0, 7), (200, 2000.0, 12345)] {
        let py = script(&format!("w.poisson_arrivals_ns({count}, {rate}, {seed})"));
        let rust: Vec<i64> = poisson_arrivals(count, rate, seed);
        let py: Vec<i64> = serde_json::from_value(py).expect("a list of integers");
        assert_eq!(py, rust, "count {count}, rate {rate}, seed {seed}");
    }
}

#[test]
fn fixed_arrivals_are_one_period_apart_and_ranks_are_nearest() {
    // 200 a second: every 5 ms, the first one period in.
    let py = script("w.fixed_arrivals_ns(4, 200.0)");
    assert_eq!(
        py,
        serde_json::json!([5_000_000, 10_000_000, 15_000_000, 20_000_000])
    );
    // And the simulator's, at rates whose periods are no whole nanoseconds.
    for rate in [200.0, 150.0, 333.0, 7.5] {
        let py: Vec<i64> =
            serde_json::from_value(script(&format!("w.fixed_arrivals_ns(1000, {rate})")))
                .expect("a list of integers");
        assert_eq!(py, fixed_arrivals(1000, rate), "rate {rate}");
    }
    // Nearest rank, as the simulator's percentiles: of 1..=100, p50 is 50,
    // p99 is 99; of 1..=1000, p99.9 is 999.
    let py = script(
        "[w.nearest_rank(list(range(1, 101)), 0.5), w.nearest_rank(list(range(1, 101)), 0.99), \
         w.nearest_rank(list(range(1, 1001)), 0.999), w.nearest_rank([], 0.99)]",
    );
    assert_eq!(py, serde_json::json!([50, 99, 999, null]));
}
