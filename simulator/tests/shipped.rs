//! The shipped traces (traces/<gpu>/*.parquet): replayed alone, each reproduces
//! its recorded span, and every policy runs them to the end.

use std::path::Path;

use fikit_sim::policy::PolicyKind;
use fikit_sim::sim::gpu::GpuModel;
use fikit_sim::sim::job::Job;
use fikit_sim::sim::simulate::run_policy;

fn shipped() -> Vec<Job> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces");
    let files = fikit_trace::discover(&[root]).unwrap();
    assert!(
        files.len() >= 8,
        "the project ships at least 8 traces, found {}",
        files.len()
    );
    files
        .iter()
        .map(|f| Job::from_trace(&fikit_trace::read_trace(f).unwrap()))
        .collect()
}

#[test]
fn each_shipped_trace_replayed_alone_reproduces_its_recorded_span() {
    for job in shipped() {
        let r = run_policy(
            std::slice::from_ref(&job),
            &[0],
            PolicyKind::Exclusive,
            &GpuModel::default(),
            false,
        )
        .unwrap();
        let (got, want) = (r.jobs[0].jct_ns(), job.recorded_span_ns);
        let err = (got - want).abs() as f64 / want as f64;
        assert!(
            err <= 0.01,
            "{}: replayed {got} ns, recorded {want} ns ({:.3}%)",
            job.name,
            100.0 * err
        );
        // The replay is exact: the start offsets and wake-ups are taken from the trace.
        assert_eq!(got, want, "{}", job.name);
    }
}

#[test]
fn every_policy_finishes_a_high_and_a_low_shipped_job() {
    let jobs = shipped();
    let high = jobs.iter().find(|j| j.priority == 0).unwrap().clone();
    let low = jobs.iter().find(|j| j.priority == 9).unwrap().clone();
    let pair = [high, low];
    for kind in PolicyKind::ALL {
        let r = run_policy(&pair, &[0, 0], kind, &GpuModel::default(), false).unwrap();
        for (o, j) in r.jobs.iter().zip(&pair) {
            assert!(o.jct_ns() >= j.recorded_span_ns, "{kind:?} {}", j.name);
        }
    }
}
