//! The calibration run that measures the context hand-over
//! ([`fikit_sim_core::sim::gpu::GpuModel::context_handover_ns`]): two synthetic jobs replayed
//! live under the preemptive policy with per-kernel timelines, so the device
//! passes between their processes hundreds of times.
//!
//! - `handover-high` (priority 0): [`HIGH_KERNELS`] kernels of
//!   [`HIGH_KERNEL_NS`], each launched [`HIGH_PERIOD_NS`] after the previous
//!   launch (a sparse, latency-bound job);
//! - `handover-low` (priority 9): [`LOW_KERNELS`] kernels of
//!   [`LOW_KERNEL_NS`] launched back to back (a busy job, always with work).
//!
//! The live preemptive gate holds the low job's launches while a high kernel
//! is in flight, so every high kernel waits for the low kernel that is
//! running, then takes the device, then hands it back: two hand-overs per
//! high kernel. [`crate::timeline::handovers`] measures each.

use std::path::Path;

use fikit_trace::{
    ApiRecording, DeviceInfo, FORMAT_VERSION, HostCall, Kernel, Metadata, Placement, Trace,
    kernel_key,
};

use crate::live::{LiveError, LiveOptions, run_live};
use fikit_sim_core::policy::PolicyKind;
use fikit_sim_core::sim::job::Job;
use fikit_sim_core::sim::scenario::Scenario;

/// Kernels of the high-priority job.
pub const HIGH_KERNELS: usize = 400;
/// Duration of each, ns (short, as a batch-1 job's are).
pub const HIGH_KERNEL_NS: i64 = 20_000;
/// Launch period of the high job, ns: long enough for two hand-overs of
/// about 150 µs (as measured on the H100 and H200) and the kernel.
pub const HIGH_PERIOD_NS: i64 = 500_000;
/// Kernels of the low-priority job: enough to outlast the high job.
pub const LOW_KERNELS: usize = 3_000;
/// Duration of each, ns.
pub const LOW_KERNEL_NS: i64 = 100_000;

/// Launch call length written into the synthetic traces, ns.
const LAUNCH_NS: i64 = 3_000;
/// From a launch call's start to its kernel's start on an idle device, ns.
const LAUNCH_TO_START_NS: i64 = 7_000;
/// Gap between queued kernels of one stream, ns.
const BACK_TO_BACK_NS: i64 = 1_500;

fn metadata(job: &str, priority: u8) -> Metadata {
    Metadata {
        format_version: FORMAT_VERSION,
        job_name: job.to_string(),
        priority,
        pid: 0,
        command_line: vec!["fikit-sim".into(), "calibrate".into()],
        host: String::new(),
        // Only the occupancy limits matter (the simulation's SM demand); live
        // replay asks the real GPU. These are compute capability 9.0's.
        device: DeviceInfo {
            name: "synthetic (fikit-sim calibrate)".to_string(),
            sm_count: 132,
            max_threads_per_sm: 2048,
            max_registers_per_sm: 65536,
            max_shared_memory_per_sm: 233_472,
            max_blocks_per_sm: 32,
        },
        driver_version: String::new(),
        cuda_version: String::new(),
        cuda_version_source: None,
        cupti_version: 0,
        clock_offset_ns: 0,
        dropped_records: 0,
        capture_complete: true,
        api_recording: ApiRecording::Selected,
        producer: format!("fikit-sim {} calibrate", env!("CARGO_PKG_VERSION")),
        characterization: None,
    }
}

/// A kernel of 132 blocks of 128 threads (one per SM: it leaves room beside
/// it, as a small kernel does), launched at `launch_ns`.
fn kernel(name: &str, id: u32, launch_ns: i64, start_ns: i64, duration_ns: i64) -> Kernel {
    let (grid, block) = ([132, 1, 1], [128, 1, 1]);
    let mangled = format!("_Z{}{}v", name.len(), name);
    Kernel {
        start_ns,
        end_ns: start_ns + duration_ns,
        placement: Placement {
            device: 0,
            context: 1,
            stream: 7,
        },
        correlation_id: id,
        kernel_key: kernel_key(&mangled, grid, block, 0, 0, 32),
        name: mangled,
        demangled_name: format!("{name}()"),
        grid,
        block,
        registers_per_thread: 32,
        static_shared_bytes: 0,
        dynamic_shared_bytes: 0,
        launch: Some(HostCall {
            start_ns: launch_ns,
            end_ns: launch_ns + LAUNCH_NS,
            thread_id: 1,
        }),
        shared_config_bytes: None,
    }
}

fn trace(job: &str, priority: u8, kernels: Vec<Kernel>) -> Trace {
    Trace {
        meta: metadata(job, priority),
        kernels,
        memops: vec![],
        api_calls: vec![],
        syncs: vec![],
        kernel_metrics: Default::default(),
    }
}

/// The two synthetic traces: the high job's and the low job's.
pub fn traces() -> [Trace; 2] {
    let high = (0..HIGH_KERNELS)
        .map(|i| {
            let launch = i as i64 * HIGH_PERIOD_NS;
            kernel(
                "handover_high",
                i as u32 + 1,
                launch,
                launch + LAUNCH_TO_START_NS,
                HIGH_KERNEL_NS,
            )
        })
        .collect();
    // Launched back to back (one launch call after another), so each kernel
    // waits in the queue and starts at its predecessor's end.
    let mut start = LAUNCH_TO_START_NS;
    let low = (0..LOW_KERNELS)
        .map(|i| {
            let k = kernel(
                "handover_low",
                i as u32 + 1,
                i as i64 * LAUNCH_NS,
                start,
                LOW_KERNEL_NS,
            );
            start = k.end_ns + BACK_TO_BACK_NS;
            k
        })
        .collect();
    [
        trace("handover-high", 0, high),
        trace("handover-low", 9, low),
    ]
}

/// The scenario of [`traces`], both jobs arriving at once, with launch
/// shapes for live replay.
pub fn scenario() -> Scenario {
    Scenario {
        name: "context hand-over (fikit-sim calibrate)".to_string(),
        jobs: traces().iter().map(Job::from_trace_with_shapes).collect(),
        arrivals: vec![0, 0],
    }
}

/// What [`measure`] found.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HandoverEstimate {
    /// Hand-overs measured.
    pub samples: usize,
    /// Their quartiles, ns: the median is the model's `context_handover_ns`.
    pub quartiles_ns: [i64; 3],
}

/// Runs [`scenario`] live under the preemptive policy with timelines in
/// `opts.work_dir/handover-timelines` and measures the hand-overs.
pub fn measure(opts: &LiveOptions) -> Result<HandoverEstimate, LiveError> {
    let dir = opts.work_dir.join("handover-timelines");
    let opts = LiveOptions {
        timeline_dir: Some(dir.clone()),
        ..opts.clone()
    };
    run_live(&scenario(), PolicyKind::Preemptive, &opts)?;
    estimate(&dir)
}

/// The hand-overs in the timelines of one run in `dir`.
pub fn estimate(dir: &Path) -> Result<HandoverEstimate, LiveError> {
    let timelines = crate::timeline::read_dir(dir).map_err(|message| LiveError::Worker {
        job: "handover".into(),
        message,
    })?;
    let mut h = crate::timeline::handovers(&timelines);
    let samples = h.len();
    match crate::timeline::quartiles(&mut h) {
        Some(quartiles_ns) => Ok(HandoverEstimate {
            samples,
            quartiles_ns,
        }),
        None => Err(LiveError::Worker {
            job: "handover".into(),
            message: format!(
                "the timelines in {} show no hand-over between the two jobs",
                dir.display()
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fikit_sim_core::sim::gpu::GpuModel;
    use fikit_sim_core::sim::simulate::run_policy;

    #[test]
    fn the_low_job_outlasts_the_high_one() {
        let [high, low] = traces();
        let h = Job::from_trace(&high);
        let l = Job::from_trace(&low);
        let span =
            |t: &Trace| t.kernels.last().unwrap().end_ns - t.kernels[0].launch.unwrap().start_ns;
        assert_eq!(h.ops.len(), HIGH_KERNELS);
        assert_eq!(l.ops.len(), LOW_KERNELS);
        // The low job outlasts the high one, so every high kernel meets it.
        assert!(span(&low) > span(&high) + HIGH_PERIOD_NS);
    }

    #[test]
    fn under_preemption_every_high_kernel_costs_two_handovers() {
        // Simulated with a hand-over cost, the high job's kernels each wait
        // for the low kernel running when they arrive, then for one
        // hand-over; the low job pays the hand-over back each time.
        let s = scenario();
        let run = |handover: Option<i64>| {
            let model = GpuModel {
                context_handover_ns: handover,
                ..GpuModel::default()
            };
            let r =
                run_policy(&s.jobs, &s.arrivals, PolicyKind::Preemptive, &model, false).unwrap();
            (r.jobs[0].jct_ns(), r.jobs[1].jct_ns())
        };
        let (high_free, low_free) = run(None);
        let (high_paid, low_paid) = run(Some(150_000));
        // The high job's kernels each wait one hand-over more, which the
        // launch period absorbs but for the last kernel's.
        assert!(high_paid > high_free, "{high_paid} {high_free}");
        // The low job pays about two hand-overs per high kernel.
        let extra = low_paid - low_free;
        let per = extra as f64 / HIGH_KERNELS as f64;
        assert!(
            (250_000.0..=350_000.0).contains(&per),
            "{per} ns per high kernel"
        );
    }
}
