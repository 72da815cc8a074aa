//! Any bytes given as a scenario file get a scenario or an error, never a
//! panic, against a small set of fixture traces (`a.parquet`, `b.parquet`,
//! `every.parquet` beside the scenario); a scenario that loads is replayed
//! under every policy when it is small.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use fikit_sim::sim::gpu::GpuModel;
use fikit_sim::policy::PolicyKind;
use fikit_sim::sim::scenario::Scenario;
use fikit_sim::sim::simulate::{SimOptions, simulate};
use fikit_trace::fixture;
use libfuzzer_sys::fuzz_target;

/// A folder holding the fixture traces; the scenario "file" is `scenario.json` in it.
fn scenario_path() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("fikit-fuzz-scenario-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("creating the fixture folder");
        // a: three kernels with a synchronization after each (three iterations).
        let mut a = fixture::empty("a", 0);
        for i in 0..3i64 {
            let t = 10_000 * i;
            a.kernels.push(fixture::kernel("k", 7, 2 * i as u32, Some(t), t + 1_000, t + 3_000));
            a.syncs.push(fixture::stream_sync(7, 2 * i as u32 + 1, t + 2_000, t + 4_000));
        }
        fikit_trace::write_trace(&dir.join("a.parquet"), &a).expect("writing a");
        let mut b = fixture::empty("b", 9);
        b.kernels.push(fixture::kernel("long", 3, 1, Some(0), 500, 50_000));
        fikit_trace::write_trace(&dir.join("b.parquet"), &b).expect("writing b");
        fikit_trace::write_trace(&dir.join("every.parquet"), &fixture::every_column("every"))
            .expect("writing every");
        dir.join("scenario.json")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(scenario) = Scenario::parse(text, scenario_path()) else {
        return;
    };
    let ops: usize = scenario.jobs.iter().map(|j| j.ops.len() + j.steps.len()).sum();
    if ops <= 2_000 {
        let opts = SimOptions {
            policies: PolicyKind::ALL.to_vec(),
            model: GpuModel::default(),
            record_segments: true,
        };
        let _ = simulate(&scenario.jobs, &scenario.arrivals, &opts);
    }
});
