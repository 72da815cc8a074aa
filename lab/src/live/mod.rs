//! `fikit-lab live`, `calibrate`, `load`, `validate` and the hidden worker
//! subcommands that live replay runs in its own processes: live runs and
//! the replay worker here; one module per other command.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use fikit_replay::control::Control;
use fikit_replay::live::{self, LiveOptions};
use fikit_sim::cli::{Failure, bad_input, other};
use fikit_sim::policy::PolicyKind;
use fikit_sim::sim::scenario::Scenario;
use fikit_sim::sim::simulate::Report;

mod calibrate;
mod load;
mod validate;

pub use calibrate::{CalibrateArgs, ProbeArgs, run_calibrate, run_probe};
pub use load::{LoadArgs, run_load};
pub use validate::{ValidateArgs, run_validate};

/// `fikit-lab live-worker` (hidden): replays one plan.
#[derive(Args)]
pub struct WorkerArgs {
    /// The plan (JSON).
    #[arg(long)]
    plan: PathBuf,
    /// The run's control file.
    #[arg(long)]
    control: PathBuf,
    /// Where to write the measurements (JSON).
    #[arg(long)]
    result: PathBuf,
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    device: i32,
}

fn worker_options(device: i32, tag: &str) -> Result<(LiveOptions, tempfile::TempDir), Failure> {
    let exe = std::env::current_exe()
        .context("finding this program (the live-replay worker)")
        .map_err(other)?;
    let dir = tempfile::Builder::new()
        .prefix(&format!("fikit-live-{tag}-"))
        .tempdir()
        .context("creating a work folder")
        .map_err(other)?;
    Ok((
        LiveOptions {
            worker_exe: exe,
            device,
            work_dir: dir.path().to_path_buf(),
            timeline_dir: None,
        },
        dir,
    ))
}

fn gpu_name(device: i32) -> String {
    std::process::Command::new("nvidia-smi")
        .args([
            "--query-gpu=name,driver_version",
            "--format=csv,noheader",
            &format!("--id={device}"),
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .trim()
                .replace(", ", ", driver ")
        })
        .unwrap_or_else(|| format!("CUDA device {device}"))
}

/// Runs every policy of `kinds` (plus exclusive and timeslice, the report's
/// baselines) live; returns the report and each policy's measurements.
pub fn live_runs(
    scenario: &Scenario,
    kinds: &[PolicyKind],
    device: i32,
) -> Result<Report, Failure> {
    let (opts, _dir) = worker_options(device, "run")?;
    // Exclusive gives the isolated JCTs; timeslice the `vs_timeslice`
    // baseline, needed once another policy shares the GPU.
    let mut all = vec![PolicyKind::Exclusive];
    if kinds.iter().any(|k| *k != PolicyKind::Exclusive) {
        all.push(PolicyKind::Timeslice);
    }
    for k in kinds {
        if !all.contains(k) {
            all.push(*k);
        }
    }
    let mut runs = Vec::new();
    for k in all {
        eprintln!(
            "fikit-lab: live {} ({} jobs)",
            k.as_str(),
            scenario.jobs.len()
        );
        let r = live::run_live(scenario, k, &opts)
            .with_context(|| format!("live replay under {}", k.as_str()))
            .map_err(other)?;
        for w in &r {
            if w.late_steps > 0 {
                eprintln!(
                    "fikit-lab: note: {} under {}: {} host steps ran over 50 µs late",
                    w.job,
                    k.as_str(),
                    w.late_steps
                );
            }
        }
        runs.push((k, r));
    }
    let mut report = live::live_report(scenario, &runs, &gpu_name(device));
    // Only what was asked for, in the order asked.
    report.jobs.retain(|r| kinds.contains(&r.policy));
    report.policies.retain(|r| kinds.contains(&r.policy));
    Ok(report)
}

/// `fikit-lab live-worker`.
pub fn run_worker(a: WorkerArgs) -> Result<(), Failure> {
    let plan = fikit_replay::plan::Plan::load(&a.plan).map_err(bad_input)?;
    let control = Arc::new(Control::open(&a.control).map_err(bad_input)?);
    let r = fikit_replay::worker::run(&plan, control, a.device)
        .with_context(|| format!("replaying {}", plan.job))
        .map_err(other)?;
    let text = serde_json::to_vec(&r).context("encoding").map_err(other)?;
    std::fs::write(&a.result, text)
        .with_context(|| format!("writing {}", a.result.display()))
        .map_err(other)
}
