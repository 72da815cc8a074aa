//! The lab's commands over `fikit-run`'s library: `gate-ab`, the gate's own
//! cost on one job alone, and `combine`, several validation-set summaries
//! set together.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use fikit_run::cli::{GateArgs, JobsArgs, PredictArgs, bad, collector};
use fikit_run::rounds::run;
use fikit_run::set::{Combine, combine, combined_text};

/// The shortest A/B phase `gate-ab` takes, ms.
const MIN_AB_MS: u64 = 20;
/// The longest, ms.
const MAX_AB_MS: u64 = 60_000;

/// `fikit-lab gate-ab`.
#[derive(Args)]
pub struct GateAbArgs {
    #[command(flatten)]
    jobs: JobsArgs,
    /// Inside each round the job's launch callbacks go off and on in
    /// alternate phases of MS ms (from one phase after its first launch),
    /// and each on phase's median iteration (the spans between blocking
    /// synchronizations) is set against its two off neighbours'. Give the
    /// job a run of many phases.
    #[arg(long, value_name = "MS")]
    phase_ms: u64,
    /// In on phases the launch hook only counts the launch, so the A/B
    /// measures the hook's dispatch to a near-empty handler (CUPTI's
    /// callbacks or the shim's wrappers: the floor under any gate on that
    /// path), not the gate.
    #[arg(long)]
    floor: bool,
    /// Output folder (as `fikit-run scenario -o`).
    #[arg(short = 'o', long, default_value = "fikit-run-out")]
    out: PathBuf,
    #[command(flatten)]
    gate: GateArgs,
    #[command(flatten)]
    predict: PredictArgs,
}

/// Runs `fikit-lab gate-ab`; returns the exit code.
pub fn gate_ab(a: GateAbArgs) -> Result<i32> {
    let scenario = a.jobs.scenario()?;
    if scenario.jobs.len() != 1 {
        return Err(bad(format!(
            "gate-ab: measures one job alone; the scenario has {} jobs",
            scenario.jobs.len()
        )));
    }
    let ms = a.phase_ms;
    if !(MIN_AB_MS..=MAX_AB_MS).contains(&ms) {
        return Err(bad(format!(
            "--phase-ms {ms}: phases of {MIN_AB_MS} to {MAX_AB_MS} ms (each must hold several iterations, and a run several phases)"
        )));
    }
    let mut exec = a.gate.exec(collector()?, a.out)?;
    exec.gate_ab_ms = ms;
    exec.gate_ab_floor = a.floor;
    run(&a.predict.run_options(scenario, exec)?)
}

/// `fikit-lab combine`.
#[derive(Args)]
pub struct CombineArgs {
    /// The summaries (`fikit-run set`'s OUT/summary.json, e.g. one set run
    /// on several machines).
    #[arg(value_name = "SUMMARY_JSON", required = true)]
    summaries: Vec<PathBuf>,
    /// Each job once, its real and simulated slowdowns the medians over
    /// every summary's repetitions of it, instead of one row per summary.
    #[arg(long)]
    pool: bool,
}

/// Runs `fikit-lab combine`: the errors per policy and sample, with each
/// one's worst row, then every row with the summaries it comes from.
pub fn combine_summaries(a: CombineArgs) -> Result<i32> {
    let how = if a.pool { Combine::Pool } else { Combine::Rows };
    let c = combine(&a.summaries, how).map_err(bad)?;
    print!("{}", combined_text(&c));
    Ok(0)
}
