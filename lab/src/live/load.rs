//! `fikit-lab load`: one of calibrate's probe kernels held on the GPU.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use fikit_sim::cli::{Failure, bad_input, other};

/// `fikit-lab load`.
#[derive(Args)]
pub struct LoadArgs {
    /// Share of the device's resident-block slots the load holds, in (0, 1]
    /// (calibrate's corun probe measured its victims beside 0.25, 0.5 and
    /// 0.75).
    #[arg(long, default_value_t = 0.5)]
    share: f64,
    /// Stop after this many seconds.
    #[arg(long, default_value_t = 600.0)]
    seconds: f64,
    /// Stop as soon as this file exists (checked once a load kernel).
    #[arg(long, value_name = "FILE")]
    stop_file: Option<PathBuf>,
    /// Length of each load kernel, ms (launched back to back; the stop is
    /// seen within two of them).
    #[arg(long, default_value_t = 20)]
    kernel_ms: u64,
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    device: i32,
    /// Write what was held (blocks, share, kernels) here as JSON.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Run calibrate's latency-bound victim (a pointer chase, a quarter as
    /// many blocks as SMs) back to back instead of the load: profiled
    /// beside a job, its runs' stretch is how hard the job's kernels press
    /// on a latency-bound neighbour (the pressure pass). --share is then
    /// not used.
    #[arg(long)]
    victim: bool,
    /// What the load (or the victim) does: `memory` (the load streams
    /// memory; the victim chases pointers, bound by memory latency) or
    /// `compute` (dependent FMAs in registers, bound by issue slots).
    #[arg(long, value_enum, default_value = "memory")]
    kind: ProbeKindArg,
    /// With --victim: passes per victim run (default calibrate's: 12 for the
    /// pointer chase, 200 for the compute victim, about 0.45 ms a run on
    /// Hopper). One chase pass runs about 40 µs, short enough to lie inside
    /// a batch-1 job's longer kernels.
    #[arg(long, value_name = "N", requires = "victim")]
    victim_passes: Option<u32>,
    /// The load kernel's preferred split of each SM's L1 and shared memory,
    /// percent of the most shared memory (0: the most L1; 100: the most
    /// shared memory; the driver's default without it). The load itself
    /// needs 12 bytes of shared memory: this sets what other processes'
    /// kernels find on the SMs it holds.
    #[arg(long, value_name = "PERCENT", conflicts_with = "victim")]
    carveout: Option<i32>,
}

/// What `fikit-lab load`'s kernels do.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProbeKindArg {
    /// Memory: the streaming load, or the pointer-chasing victim.
    Memory,
    /// Dependent FMAs in registers.
    Compute,
}

/// What `fikit-lab load` is asked to do, checked.
pub struct LoadOptions {
    share: f64,
    run_ns: i64,
    stop_file: Option<PathBuf>,
    kernel_ns: u64,
    device: i32,
    report: Option<PathBuf>,
    victim: bool,
    compute: bool,
    victim_passes: Option<u32>,
    carveout: Option<i32>,
}

impl TryFrom<LoadArgs> for LoadOptions {
    type Error = Failure;
    fn try_from(a: LoadArgs) -> Result<Self, Failure> {
        if !(a.share > 0.0 && a.share <= 1.0) {
            return Err(bad_input(anyhow::anyhow!(
                "--share {}: must be a share of the block slots in (0, 1]",
                a.share
            )));
        }
        if !(a.seconds > 0.0 && a.seconds <= 86_400.0) {
            return Err(bad_input(anyhow::anyhow!(
                "--seconds {}: must be a positive number, at most a day (86400)",
                a.seconds
            )));
        }
        if a.kernel_ms > 60_000 {
            return Err(bad_input(anyhow::anyhow!(
                "--kernel-ms {}: at most 60000 (a minute)",
                a.kernel_ms
            )));
        }
        if a.victim_passes == Some(0) {
            return Err(bad_input(anyhow::anyhow!(
                "--victim-passes 0: must be at least 1"
            )));
        }
        if a.kernel_ms == 0 {
            return Err(bad_input(anyhow::anyhow!(
                "--kernel-ms 0: must be at least 1"
            )));
        }
        if let Some(c) = a.carveout.filter(|c| !(0..=100).contains(c)) {
            return Err(bad_input(anyhow::anyhow!(
                "--carveout {c}: must be a percentage, 0 to 100"
            )));
        }
        Ok(LoadOptions {
            share: a.share,
            run_ns: (a.seconds * 1e9) as i64,
            stop_file: a.stop_file,
            kernel_ns: a.kernel_ms * 1_000_000,
            device: a.device,
            report: a.report,
            victim: a.victim,
            compute: a.kind == ProbeKindArg::Compute,
            victim_passes: a.victim_passes,
            carveout: a.carveout,
        })
    }
}

/// `fikit-lab load`: holds the load until the time is up or the stop file
/// appears; prints (and with --report writes) what it held.
pub fn run_load(o: LoadOptions) -> Result<(), Failure> {
    let gpu = fikit_replay::gpu::Gpu::open(o.device)
        .context("opening the GPU")
        .map_err(other)?;
    let end = fikit_replay::now_ns() + o.run_ns;
    let stop = || fikit_replay::now_ns() >= end || o.stop_file.as_ref().is_some_and(|f| f.exists());
    let report = if o.victim {
        let runs = fikit_device::victim::hold_victim(&gpu, o.compute, o.victim_passes, &stop)
            .context("running the victim")
            .map_err(other)?;
        eprintln!(
            "fikit-lab load: {runs} runs of the {} victim on {}",
            if o.compute {
                "compute-bound"
            } else {
                "latency-bound"
            },
            gpu.name
        );
        serde_json::json!({ "gpu": gpu.name, "sm_count": gpu.sm_count, "victim_runs": runs })
    } else {
        let held = fikit_replay::calibrate::hold_load(
            &gpu,
            o.compute,
            o.share,
            o.kernel_ns,
            o.carveout,
            &stop,
        )
        .context("holding the load")
        .map_err(other)?;
        eprintln!(
            "fikit-lab load: {} blocks ({:.3} of the block slots) on {}, {} kernels of {} ms",
            held.blocks,
            held.demand,
            gpu.name,
            held.kernels,
            o.kernel_ns / 1_000_000
        );
        serde_json::json!({ "gpu": gpu.name, "sm_count": gpu.sm_count, "load": held, "carveout": o.carveout })
    };
    if let Some(path) = &o.report {
        std::fs::write(path, report.to_string())
            .with_context(|| format!("writing {}", path.display()))
            .map_err(other)?;
    }
    Ok(())
}
