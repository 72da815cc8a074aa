//! The `fikit-sim` command line: clap's argument structs, converted into the
//! plain option structs of [`simulate`], [`export`], [`import`] and [`live`]
//! before anything runs, and the exit codes.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::policy::PolicyKind;
use crate::report::Format;
use crate::report::inspect::{self, InspectOptions};
use anyhow::Context;
use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{Args, Parser, Subcommand, ValueEnum};

pub mod export;
pub mod import;
pub mod serve;
pub mod simulate;

use simulate::{ModelChoice, Source};

/// Exit code for bad input (a bad trace, file or argument), as clap uses for bad arguments.
const EXIT_BAD_INPUT: u8 = 2;

#[derive(Parser)]
#[command(
    name = "fikit-sim",
    version,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    about = "Replay GPU job traces under GPU-sharing policies (FIKIT, time slicing, MPS, preemption)",
    long_about = "Replay GPU job traces under GPU-sharing policies (FIKIT, time slicing, MPS, \
                  preemption) and compare each job's slowdown (first kernel launch to end, shared against alone), latency and utilization.\n\n\
                  With trace files or folders (searched recursively for *.parquet) that hold \
                  latency-critical jobs (the best priority among them) and throughput jobs \
                  (any worse one), each latency-critical job is simulated beside each \
                  throughput job, two per GPU, and one table answers how each policy treats \
                  it. --jobs picks jobs to share one GPU (the full table and plots), \
                  --together puts all of them on one GPU, --scenario chooses jobs, \
                  priorities, start times, repetitions and request arrivals.\n\n\
                  The GPU model is the calibrated one the project ships for the traces' GPU \
                  when there is one (named on standard error), else the documented defaults; \
                  --model chooses.\n\nExit codes: 0 success, 2 bad input (a file, trace or \
                  argument), 1 anything else."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    sim: SimArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Summarize traces: kernels, GPU busy time, inter-kernel idle gaps and their causes, top kernels.
    Inspect(InspectArgs),
    /// Simulate every ordered pair of jobs (first high priority, second low) in
    /// parallel; or a sweep spec, whole or one shard of it, and merge shards.
    Sweep(SweepArgs),
    /// Write traces, or with --policy a simulated run, as Chrome trace-event JSON for the Perfetto UI (ui.perfetto.dev).
    Export(ExportArgs),
    /// Convert PyTorch profiler (Kineto JSON) and Nsight Systems (SQLite) traces into fikit traces.
    Import(import::ImportArgs),
}

#[derive(Args)]
struct SimArgs {
    /// Trace files, or folders searched recursively for *.parquet.
    #[arg(value_name = "FILE_OR_DIR", required_unless_present = "scenario")]
    inputs: Vec<PathBuf>,
    /// A scenario file (JSON): jobs, priorities, start offsets, repetitions, request arrivals.
    #[arg(long, value_name = "FILE", conflicts_with = "inputs")]
    scenario: Option<PathBuf>,
    /// Put only these jobs (by name, comma-separated) on one GPU: the full
    /// per-job table and the plots.
    #[arg(long, value_name = "JOB,JOB", value_delimiter = ',', conflicts_with_all = ["scenario", "together"])]
    jobs: Vec<String>,
    /// Put every job of the traces on one GPU (the full per-job table and the
    /// plots) instead of the latency-critical/throughput pairs.
    #[arg(long)]
    together: bool,
    #[command(flatten)]
    common: CommonArgs,
    /// Set a job's priority (0 highest … 9 lowest), overriding its trace or
    /// scenario; repeatable, e.g. `--priority resnet50-bs1-eval=0`.
    #[arg(long = "priority", value_name = "JOB=N")]
    priorities: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    format: FormatArg,
    /// Folder for the plots (PNG and SVG).
    #[arg(long, value_name = "DIR", default_value = "reports")]
    plots: PathBuf,
    /// Write no plots.
    #[arg(long, conflicts_with = "plots")]
    no_plots: bool,
    /// Also write a self-contained HTML report (scenario, GPU model, tables,
    /// plots inline; it fetches nothing) to FILE.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Serve the latency-critical job's requests at each of these rates
    /// (requests a second, comma-separated) instead of back to back, the
    /// other jobs repeating until the last request: its p50, p99 and p99.9
    /// latency (arrival to completion, queueing included) under each
    /// policy and rate. With --jobs or --together.
    #[arg(
        long,
        value_name = "RATE,RATE",
        value_delimiter = ',',
        conflicts_with = "scenario"
    )]
    serve: Vec<f64>,
    /// Requests served at each rate (--serve).
    #[arg(long, value_name = "N", default_value_t = 1000, requires = "serve")]
    requests: usize,
    /// How requests arrive (--serve): Poisson (seeded by --seed) or one
    /// period apart.
    #[arg(long, value_enum, default_value_t = ArrivalsArg::Poisson, requires = "serve")]
    arrivals: ArrivalsArg,
    /// Seed of the Poisson arrivals (--serve): the same seed, the same
    /// arrivals (`scripts/workloads/workload.py --seed`, default 0 there too,
    /// serves them live).
    #[arg(long, default_value_t = 0, requires = "serve")]
    seed: u64,
}

/// `--arrivals`.
#[derive(Clone, Copy, ValueEnum)]
enum ArrivalsArg {
    /// Exponential gaps at the mean rate.
    Poisson,
    /// One period apart.
    Fixed,
}

/// The policy names the command line takes: `all` and the registry's.
pub fn policy_names() -> PossibleValuesParser {
    let all = PossibleValue::new("all").help("Every policy, side by side.");
    PossibleValuesParser::new(
        std::iter::once(all).chain(
            PolicyKind::ALL
                .iter()
                .map(|k| PossibleValue::new(k.as_str()).help(k.help())),
        ),
    )
}

/// `--policy` values (already checked by clap) as policies, in report order.
pub fn policies(names: &[String]) -> Vec<PolicyKind> {
    let mut out: Vec<PolicyKind> = names
        .iter()
        .flat_map(|n| match PolicyKind::from_name(n) {
            Some(k) => vec![k],
            None => PolicyKind::ALL.to_vec(),
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// `--model`: a file, `default`, or (absent) the shipped model of the traces' GPU.
pub fn model_choice(arg: Option<PathBuf>) -> ModelChoice {
    match arg {
        None => ModelChoice::Auto,
        Some(p) if p.as_os_str() == "default" => ModelChoice::Default,
        Some(p) => ModelChoice::File(p),
    }
}

#[derive(Args)]
struct CommonArgs {
    /// Policies to compare, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "all", value_parser = policy_names())]
    policy: Vec<String>,
    /// GPU model file (JSON; fields it omits keep their documented defaults),
    /// or `default` for the documented defaults. Without it: the calibrated
    /// model the project ships for the traces' GPU, else the defaults.
    #[arg(long, value_name = "FILE|default")]
    model: Option<PathBuf>,
    /// Ignore the traces' characterization: each job's host as it was
    /// traced, its kernels pressing under MPS as the model weighs them. By
    /// default a job whose trace holds untraced runs (fikit-profile's
    /// characterization) has its host time scaled to how fast it ran
    /// untraced, and one with a pressure pass presses as measured.
    #[arg(long)]
    as_profiled: bool,
}

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
struct SweepArgs {
    #[command(subcommand)]
    action: Option<SweepAction>,
    /// Trace files, or folders searched recursively for *.parquet: every
    /// ordered pair, printed.
    #[arg(required_unless_present = "spec", value_name = "FILE_OR_DIR")]
    inputs: Vec<PathBuf>,
    /// A sweep spec (JSON: traces, jobs per GPU, which groups, policies,
    /// model files, a parameter grid; simulator/README.md). It names its own
    /// policies and models: --policy and --model are refused beside it.
    #[arg(long, value_name = "FILE", conflicts_with = "inputs")]
    spec: Option<PathBuf>,
    /// Run only shard K of N of the spec's items (the K-th of N contiguous
    /// ranges of item numbers); needs --spec and --output.
    #[arg(long, value_name = "K/N", requires = "spec", requires = "output")]
    shard: Option<String>,
    /// Write the spec's rows as Parquet to FILE (stamped with the spec's
    /// hash and the shard) instead of printing them.
    #[arg(short, long, value_name = "FILE", requires = "spec")]
    output: Option<PathBuf>,
    /// Policies to compare, comma-separated (a spec names its own).
    #[arg(long, value_delimiter = ',', default_value = "all", value_parser = policy_names(), conflicts_with = "spec")]
    policy: Vec<String>,
    /// GPU model file (JSON), or `default`; without it the shipped model of
    /// the traces' GPU, else the defaults (a spec names its own).
    #[arg(long, value_name = "FILE|default", conflicts_with = "spec")]
    model: Option<PathBuf>,
    /// Output format (table or csv; json prints the rows).
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    format: FormatArg,
    /// Worker threads, 1 to 1024 (default: one per core).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Ignore the traces' characterization: the host as traced, MPS
    /// pressure as the model weighs it (by default as fikit-profile
    /// measured them).
    #[arg(long, conflicts_with = "spec")]
    as_profiled: bool,
}

#[derive(Subcommand)]
enum SweepAction {
    /// Join the shards of one sweep spec into one table; checks that every
    /// shard is there exactly once and holds its items.
    Merge {
        /// The merged table (Parquet).
        #[arg(short, long, value_name = "FILE")]
        output: PathBuf,
        /// The shards' files (from `sweep --spec S --shard K/N -o FILE`).
        #[arg(required = true, value_name = "SHARD")]
        shards: Vec<PathBuf>,
    },
    /// Print a rows file (a shard or a merged table).
    Show {
        /// The rows file (Parquet).
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = FormatArg::Table)]
        format: FormatArg,
    },
}

#[derive(Args)]
struct InspectArgs {
    /// Trace files, or folders searched recursively for *.parquet.
    #[arg(required = true, value_name = "FILE_OR_DIR")]
    inputs: Vec<PathBuf>,
    /// Output format (table or json).
    #[arg(long, value_enum, default_value_t = InspectFormatArg::Table)]
    format: InspectFormatArg,
    /// Kernels to list per job, by total time.
    #[arg(long, default_value_t = 10, value_name = "N")]
    top: usize,
}

#[derive(Args)]
struct ExportArgs {
    /// Write Chrome trace-event JSON, which the Perfetto UI and chrome://tracing open (the one format so far).
    #[arg(long, required = true)]
    perfetto: bool,
    /// Output file; `-` writes to standard output.
    #[arg(
        short,
        long,
        value_name = "FILE",
        default_value = "reports/fikit.perfetto.json"
    )]
    output: PathBuf,
    /// Trace files, or folders searched recursively for *.parquet.
    #[arg(value_name = "FILE_OR_DIR", required_unless_present = "scenario")]
    inputs: Vec<PathBuf>,
    /// A scenario file (JSON) to simulate; needs --policy.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "inputs",
        requires = "policy"
    )]
    scenario: Option<PathBuf>,
    /// Simulate under these policies (comma-separated) and export where each
    /// ran the kernels; without it the traces themselves are exported.
    #[arg(long, value_delimiter = ',', value_parser = policy_names())]
    policy: Vec<String>,
    /// GPU model file (JSON) for the simulation, or `default`; without it the
    /// shipped model of the traces' GPU, else the defaults.
    #[arg(long, value_name = "FILE|default", requires = "policy")]
    model: Option<PathBuf>,
    /// Set a job's priority for the simulation (0 highest … 9 lowest); repeatable.
    #[arg(long = "priority", value_name = "JOB=N", requires = "policy")]
    priorities: Vec<String>,
    /// Keep only the first N slices (kernels, copies, calls, syncs, gaps) of
    /// each job, by start time: for traces too large for the Perfetto UI.
    #[arg(long, value_name = "N")]
    max_events: Option<usize>,
    /// Traces: put every job on the Unix clock so processes profiled together
    /// line up (default: each job starts at 0).
    #[arg(long, conflicts_with = "policy")]
    wall_clock: bool,
    /// Ignore the traces' characterization: the host as traced, MPS
    /// pressure as the model weighs it (by default as fikit-profile
    /// measured them).
    #[arg(long, requires = "policy")]
    as_profiled: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum InspectFormatArg {
    /// Text tables.
    Table,
    /// JSON.
    Json,
}

/// `--format`: how a report is printed.
#[derive(Clone, Copy, ValueEnum)]
pub enum FormatArg {
    /// Text tables.
    Table,
    /// JSON.
    Json,
    /// CSV.
    Csv,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Table => Format::Table,
            FormatArg::Json => Format::Json,
            FormatArg::Csv => Format::Csv,
        }
    }
}

impl From<SimArgs> for simulate::SimulateOptions {
    fn from(a: SimArgs) -> Self {
        let source = Source::of(a.scenario, a.inputs);
        simulate::SimulateOptions {
            source,
            jobs: a.jobs,
            together: a.together,
            policies: policies(&a.common.policy),
            model: model_choice(a.common.model),
            priorities: a.priorities,
            format: a.format.into(),
            plots: (!a.no_plots).then_some(a.plots),
            html: a.html,
            as_profiled: a.common.as_profiled,
            serve: (!a.serve.is_empty()).then_some(simulate::Serve {
                rates: a.serve,
                requests: a.requests,
                fixed: matches!(a.arrivals, ArrivalsArg::Fixed),
                seed: a.seed,
            }),
        }
    }
}

impl TryFrom<SweepArgs> for simulate::SweepRun {
    type Error = Failure;

    fn try_from(a: SweepArgs) -> Result<Self, Failure> {
        // clap lets -o through without --spec (beside the subcommands): checked here.
        if a.action.is_none() && a.spec.is_none() && a.output.is_some() {
            return Err(bad_input(anyhow::anyhow!(
                "-o/--output writes a spec's rows: it needs --spec (traces' pairs are printed)"
            )));
        }
        let what = match (a.action, a.spec) {
            (Some(SweepAction::Merge { output, shards }), _) => {
                simulate::SweepWhat::Merge { output, shards }
            }
            (Some(SweepAction::Show { file, format }), _) => simulate::SweepWhat::Show {
                file,
                format: format.into(),
            },
            (None, Some(spec)) => simulate::SweepWhat::Spec {
                spec,
                shard: a
                    .shard
                    .as_deref()
                    .map(crate::sim::fleet::Shard::parse)
                    .transpose()
                    .map_err(|e| bad_input(anyhow::anyhow!(e)))?,
                output: a.output,
            },
            (None, None) => simulate::SweepWhat::Traces(a.inputs),
        };
        Ok(simulate::SweepRun {
            what,
            policies: policies(&a.policy),
            model: model_choice(a.model),
            format: a.format.into(),
            threads: a.threads,
            as_profiled: a.as_profiled,
        })
    }
}

impl From<ExportArgs> for export::ExportRun {
    fn from(a: ExportArgs) -> Self {
        debug_assert!(a.perfetto, "clap requires --perfetto");
        let source = Source::of(a.scenario, a.inputs);
        export::ExportRun {
            output: a.output,
            source,
            policies: policies(&a.policy),
            model: model_choice(a.model),
            priorities: a.priorities,
            max_events: a.max_events,
            wall_clock: a.wall_clock,
            as_profiled: a.as_profiled,
        }
    }
}

impl From<InspectArgs> for InspectOptions {
    fn from(a: InspectArgs) -> Self {
        InspectOptions {
            inputs: a.inputs,
            format: match a.format {
                InspectFormatArg::Table => inspect::Format::Table,
                InspectFormatArg::Json => inspect::Format::Json,
            },
            top: a.top,
        }
    }
}

/// An error and the exit code it gets.
pub struct Failure {
    code: u8,
    error: anyhow::Error,
}

impl Failure {
    /// A failure with its own exit code.
    pub fn with_code(code: u8, error: anyhow::Error) -> Failure {
        Failure { code, error }
    }
}

/// A failure of bad input (exit code 2).
pub fn bad_input(e: impl Into<anyhow::Error>) -> Failure {
    Failure {
        code: EXIT_BAD_INPUT,
        error: e.into(),
    }
}

/// Any other failure (exit code 1).
pub fn other(e: anyhow::Error) -> Failure {
    Failure { code: 1, error: e }
}

/// Writes `text` to standard output.
pub fn print(text: &str) -> Result<(), Failure> {
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("writing to standard output")
        .map_err(other)
}

/// The trace files of `inputs` (files, or folders searched recursively).
pub fn traces(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, Failure> {
    inspect::trace_files(inputs).map_err(bad_input)
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Some(Command::Inspect(args)) => {
            let opts = InspectOptions::from(args);
            let jobs = inspect::summaries(&opts).map_err(bad_input)?;
            print(&inspect::render(&jobs, opts.format))
        }
        Some(Command::Sweep(args)) => simulate::run_sweep(args.try_into()?),
        Some(Command::Export(args)) => export::run_export(args.into()),
        Some(Command::Import(args)) => import::run_import(args),
        None => simulate::run_simulation(cli.sim.into()),
    }
}

/// Parses the command line, runs it, and turns a failure into its message
/// and exit code.
pub fn main() -> ExitCode {
    finish("fikit-sim", run(Cli::parse()))
}

/// The exit code of a command's result, with its error printed as
/// `PROGRAM: error: ...` (a closed pipe, as under `| head`, is no error).
pub fn finish(program: &str, result: Result<(), Failure>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            // A closed pipe (`| head`) is not an error worth a message.
            if let Some(io) = f.error.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::BrokenPipe
            {
                return ExitCode::SUCCESS;
            }
            eprintln!("{program}: error: {:#}", f.error);
            ExitCode::from(f.code)
        }
    }
}
