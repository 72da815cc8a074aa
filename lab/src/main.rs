//! `fikit-lab`: the research and validation commands behind fikit's
//! accuracy figures, apart from the product's (`fikit-profile`,
//! `fikit-sim`, `fikit-run`): live replay of traces as synthetic kernels,
//! GPU calibration probes, pressure passes and validation against
//! hardware. lab/README.md says what each is for.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use fikit_sim::cli::simulate::{Source, load_scenario, pick_jobs, source_files};
use fikit_sim::cli::{Failure, FormatArg, finish, policies, policy_names, print};
use fikit_sim::report;

mod live;
mod pressure;
mod runs;

#[derive(Parser)]
#[command(
    name = "fikit-lab",
    version,
    about = "fikit's lab: live replay, calibration probes, pressure passes, validation against hardware",
    after_help = "Exit codes: 0 success, 2 bad input (a file, trace or argument), 1 anything else."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run traces or a scenario on the real GPU (live replay: one process
    /// per job, synthetic kernels of the recorded shapes and durations) and
    /// print the report a simulation prints (needs a GPU).
    Live(LiveArgs),
    /// Measure the GPU's time-slice quantum, context-switch cost, context
    /// hand-over and concurrent-kernel slowdown (needs a GPU) and write a
    /// GPU model file.
    Calibrate(live::CalibrateArgs),
    /// Hold one of calibrate's probe kernels on the GPU (needs a GPU) while
    /// another process runs beside it: a load (memory-streaming or compute)
    /// on a share of the block slots, beside which a profiled job shows how
    /// its own kernels slow (lab/validate/sensitivity.sh), or with --victim
    /// a victim run back to back, which shows how hard a job's kernels
    /// press on a neighbour (lab/validate/pressure.sh).
    Load(live::LoadArgs),
    /// How hard each job's kernels press on a neighbour under MPS, from a
    /// pressure pass's traces (lab/validate/pressure.sh: the job beside a
    /// latency-bound victim), and the weight the MPS model gives the job
    /// for it. No GPU needed. fikit-profile makes this pass itself.
    Pressure(pressure::PressureArgs),
    /// Run scenarios both simulated and live on the GPU; print the JCT
    /// error per job and policy.
    Validate(live::ValidateArgs),
    /// Measure the gate's own cost on one real job alone (needs a GPU): its
    /// launch hook off and on in alternate phases inside each round, each
    /// on phase's median iteration set against its off neighbours'.
    GateAb(runs::GateAbArgs),
    /// Set the errors of several `fikit-run set` summaries together (one
    /// set run on several machines, say), per policy and sample, with each
    /// one's worst row, then every row with the summaries it comes from.
    Combine(runs::CombineArgs),
    /// Replay one launch plan on the GPU (a worker process of live replay).
    #[command(hide = true)]
    LiveWorker(live::WorkerArgs),
    /// Run one calibration probe (a worker process of `calibrate`).
    #[command(hide = true)]
    LiveProbe(live::ProbeArgs),
}

/// `fikit-lab live`.
#[derive(Args)]
struct LiveArgs {
    /// Trace files, or folders searched recursively for *.parquet.
    #[arg(value_name = "FILE_OR_DIR", required_unless_present = "scenario")]
    inputs: Vec<PathBuf>,
    /// A scenario file (JSON).
    #[arg(long, value_name = "FILE", conflicts_with = "inputs")]
    scenario: Option<PathBuf>,
    /// Run only these jobs (by name, comma-separated) together.
    #[arg(
        long,
        value_name = "JOB,JOB",
        value_delimiter = ',',
        conflicts_with = "scenario"
    )]
    jobs: Vec<String>,
    /// Set a job's priority (0 highest … 9 lowest); repeatable.
    #[arg(long = "priority", value_name = "JOB=N")]
    priorities: Vec<String>,
    /// Policies to run, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "all", value_parser = policy_names())]
    policy: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    format: FormatArg,
    /// CUDA device.
    #[arg(long, default_value_t = 0)]
    device: i32,
}

fn run_live(a: LiveArgs) -> Result<(), Failure> {
    let source = Source::of(a.scenario, a.inputs);
    let files = source_files(&source)?;
    let mut scenario = load_scenario(&source, &files, true)?;
    pick_jobs(&mut scenario, &a.priorities, &a.jobs)?;
    let report = live::live_runs(&scenario, &policies(&a.policy), a.device)?;
    print(&report::render(&report, a.format.into()))
}

fn main() -> ExitCode {
    let lab = |r: Result<(), Failure>| finish("fikit-lab", r);
    // fikit-run's library reports as fikit-run does: 2 for bad input, 1 for
    // failures, 130 when interrupted.
    let run_lib = |r: anyhow::Result<i32>| {
        let code = r.unwrap_or_else(|e| fikit_run::cli::exit_code("fikit-lab", &e));
        ExitCode::from(u8::try_from(code).unwrap_or(1))
    };
    match Cli::parse().command {
        Command::Live(args) => lab(run_live(args)),
        Command::Calibrate(args) => lab(live::run_calibrate(args)),
        Command::Load(args) => lab(args.try_into().and_then(live::run_load)),
        Command::Pressure(args) => lab(pressure::run_pressure(args.into())),
        Command::Validate(args) => lab(live::run_validate(args)),
        Command::LiveWorker(args) => lab(live::run_worker(args)),
        Command::LiveProbe(args) => lab(live::run_probe(args)),
        Command::GateAb(args) => run_lib(runs::gate_ab(args)),
        Command::Combine(args) => run_lib(runs::combine_summaries(args)),
    }
}
