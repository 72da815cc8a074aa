//! Any bytes given to the trace reader get a trace or an error, never a panic;
//! a trace it accepts can be summarized, turned into a job and replayed.
#![no_main]

use fikit_sim::sim::gpu::GpuModel;
use fikit_sim::sim::job::Job;
use fikit_sim::policy::PolicyKind;
use fikit_sim::sim::simulate::{SimOptions, simulate};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(trace) = fikit_trace::parse_trace(data) else {
        return;
    };
    let _ = fikit_trace::summary::summarize(&trace, "fuzz.parquet", 5);
    let job = Job::from_trace(&trace);
    // Replaying is linear in the operations; keep each input fast.
    if job.ops.len() <= 1_000 {
        let opts = SimOptions {
            policies: PolicyKind::ALL.to_vec(),
            model: GpuModel::default(),
            record_segments: true,
        };
        let _ = simulate(&[job.clone(), job], &[0, 0], &opts);
    }
});
