//! The pair sweep's runs alone: what the pairwise screen's range divides by.

use fikit_sim::policy::PolicyKind;
use fikit_sim::sim::gpu::GpuModel;
use fikit_sim::sim::job::Job;
use fikit_sim::sim::simulate::{SimOptions, line_up, simulate};
use fikit_sim::sim::sweep::{self, SweepOptions};
use fikit_trace::fixture;

#[test]
fn a_sweep_keeps_the_regions_alone_of_its_pairs_jobs_only() {
    // Two shipped traces (their hosts set up before the first kernel, which
    // a region leaves out) and a hand-made job.
    let shipped = |name: &str| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../traces/h200/").to_string() + name;
        Job::from_trace(&fikit_trace::read_trace(std::path::Path::new(&path)).unwrap())
    };
    let jobs = vec![
        shipped("mobilenet_v3_large-bs1-eval-662.parquet"),
        shipped("resnet50-bs32-train-636.parquet"),
        Job::from_trace(&fixture::back_to_back("other", 9, 6, 50_000)),
    ];
    assert!(
        jobs[..2]
            .iter()
            .all(|j| fikit_sim::sim::host::first_kernel_ns(j) > 0)
    );
    let model = GpuModel::default();
    let opts = SweepOptions {
        policies: vec![PolicyKind::Timeslice, PolicyKind::Fikit],
        model: model.clone(),
        progress: false,
    };
    let swept = sweep::sweep_pairs(&jobs, &[(0, 1)], &opts).unwrap();
    // The rows are pairs_of's.
    assert_eq!(
        swept.rows,
        sweep::pairs_of(&jobs, &[(0, 1)], &opts).unwrap()
    );
    // "other" is in no pair: no run alone.
    assert_eq!(swept.alone_region_ns[2], None);
    // The others' regions alone are the ones a simulation of the pair
    // measures its slowdowns against (its own runs alone, made afresh).
    let mut pair = vec![jobs[0].clone(), jobs[1].clone()];
    pair[1].priority = 9;
    let report = simulate(
        &pair,
        &line_up(&pair, &[0, 0]),
        &SimOptions {
            policies: vec![PolicyKind::Timeslice],
            model,
            record_segments: false,
        },
    )
    .unwrap();
    for (i, row) in report.jobs.iter().enumerate() {
        assert!(row.isolated_region_ns > 0);
        assert_eq!(
            swept.alone_region_ns[i],
            Some(row.isolated_region_ns),
            "{}",
            row.job
        );
    }
}
