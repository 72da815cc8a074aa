//! `fikit-sim`: replays traces of GPU jobs under GPU-sharing policies.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand, ValueEnum};
use fikit_sim::gpu::GpuModel;
use fikit_sim::inspect::{self, InspectOptions};
use fikit_sim::policy::PolicyKind;
use fikit_sim::report::{self, Format};
use fikit_sim::scenario::Scenario;
use fikit_sim::simulate::{SimOptions, simulate_with_progress};
use fikit_sim::sweep::{self, SweepOptions};

mod import_cli;
mod live_cli;

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
                  preemption) and compare job completion times, latency and utilization.\n\n\
                  With trace files or folders (searched recursively for *.parquet), the jobs \
                  they hold share one modeled GPU, each with the priority it was profiled \
                  with. --scenario chooses jobs, priorities, start times, repetitions and \
                  request arrivals instead.\n\nExit codes: 0 success, 2 bad input (a file, \
                  trace or argument), 1 anything else."
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
    /// Simulate every ordered pair of jobs (first high priority, second low) in parallel.
    Sweep(SweepArgs),
    /// Write traces, or with --policy a simulated run, as Chrome trace-event JSON for the Perfetto UI (ui.perfetto.dev).
    Export(ExportArgs),
    /// Convert PyTorch profiler (Kineto JSON) and Nsight Systems (SQLite) traces into fikit traces.
    Import(import_cli::ImportArgs),
    /// Measure the GPU's time-slice quantum, context-switch cost, context hand-over and concurrent-kernel slowdown (needs a GPU) and write a GPU model file.
    Calibrate(live_cli::CalibrateArgs),
    /// Run scenarios both simulated and live on the GPU; print the JCT error per job and policy.
    Validate(live_cli::ValidateArgs),
    /// Replay one launch plan on the GPU (a worker process of live replay).
    #[command(hide = true)]
    LiveWorker(live_cli::WorkerArgs),
    /// Run one calibration probe (a worker process of `calibrate`).
    #[command(hide = true)]
    LiveProbe(live_cli::ProbeArgs),
}

#[derive(Args)]
struct SimArgs {
    /// Trace files, or folders searched recursively for *.parquet.
    #[arg(value_name = "FILE_OR_DIR", required_unless_present = "scenario")]
    inputs: Vec<PathBuf>,
    /// A scenario file (JSON): jobs, priorities, start offsets, repetitions, request arrivals.
    #[arg(long, value_name = "FILE", conflicts_with = "inputs")]
    scenario: Option<PathBuf>,
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
    #[arg(long)]
    no_plots: bool,
    /// Run the jobs on the real GPU instead of simulating them (live replay:
    /// one process per job, synthetic kernels of the recorded shapes and
    /// durations); the report has the simulation's format. Writes no plots.
    #[arg(long)]
    live: bool,
    /// CUDA device for --live.
    #[arg(long, default_value_t = 0, requires = "live")]
    device: i32,
    /// Also write a self-contained HTML report (scenario, GPU model, tables,
    /// plots inline; it fetches nothing) to FILE.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

#[derive(Args)]
struct CommonArgs {
    /// Policies to compare, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "all")]
    policy: Vec<PolicyArg>,
    /// GPU model file (JSON); fields it omits keep their documented defaults.
    #[arg(long, value_name = "FILE")]
    model: Option<PathBuf>,
}

#[derive(Args)]
struct SweepArgs {
    /// Trace files, or folders searched recursively for *.parquet.
    #[arg(required = true, value_name = "FILE_OR_DIR")]
    inputs: Vec<PathBuf>,
    #[command(flatten)]
    common: CommonArgs,
    /// Output format (table or csv; json prints the rows).
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    format: FormatArg,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
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

#[derive(Clone, Copy, ValueEnum)]
enum InspectFormatArg {
    /// Text tables.
    Table,
    /// JSON.
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
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

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PolicyArg {
    /// Every policy, side by side.
    All,
    /// Each job alone on the GPU.
    Exclusive,
    /// Default time slicing between processes (the baseline).
    Timeslice,
    /// NVIDIA MPS: kernels of all jobs share the SMs.
    Mps,
    /// Preemptive priority.
    Preemptive,
    /// FIKIT: fill the high-priority job's idle gaps with kernels that fit.
    Fikit,
}

impl CommonArgs {
    fn policies(&self) -> Vec<PolicyKind> {
        let mut out: Vec<PolicyKind> = Vec::new();
        for p in &self.policy {
            let add: &[PolicyKind] = match p {
                PolicyArg::All => &PolicyKind::ALL,
                PolicyArg::Exclusive => &[PolicyKind::Exclusive],
                PolicyArg::Timeslice => &[PolicyKind::Timeslice],
                PolicyArg::Mps => &[PolicyKind::Mps],
                PolicyArg::Preemptive => &[PolicyKind::Preemptive],
                PolicyArg::Fikit => &[PolicyKind::Fikit],
            };
            for k in add {
                if !out.contains(k) {
                    out.push(*k);
                }
            }
        }
        out.sort();
        out
    }

    fn model(&self) -> Result<GpuModel, Failure> {
        match &self.model {
            Some(p) => GpuModel::load(p).map_err(bad_input),
            None => Ok(GpuModel::default()),
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
struct Failure {
    code: u8,
    error: anyhow::Error,
}

fn bad_input(e: impl Into<anyhow::Error>) -> Failure {
    Failure {
        code: EXIT_BAD_INPUT,
        error: e.into(),
    }
}

fn other(e: anyhow::Error) -> Failure {
    Failure { code: 1, error: e }
}

fn print(text: &str) -> Result<(), Failure> {
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("writing to standard output")
        .map_err(other)
}

fn traces(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, Failure> {
    inspect::trace_files(inputs).map_err(bad_input)
}

fn run_simulation(args: SimArgs) -> Result<(), Failure> {
    let model = args.common.model()?;
    let policies = args.common.policies();
    let progress = fikit_sim::progress::Phases::new(std::io::stderr().is_terminal());
    progress.phase("reading traces");
    let mut scenario = match &args.scenario {
        Some(path) => Scenario::load_with(path, args.live).map_err(bad_input)?,
        None => Scenario::from_traces_with(&traces(&args.inputs)?, args.live).map_err(bad_input)?,
    };
    for spec in &args.priorities {
        set_priority(&mut scenario, spec).map_err(bad_input)?;
    }
    if args.live {
        let report = live_cli::live_runs(&scenario, &policies, args.device)?;
        return print(&report::render(&report, args.format.into()));
    }
    let opts = SimOptions {
        policies,
        model,
        record_segments: !args.no_plots || args.html.is_some(),
    };
    let report = simulate_with_progress(&scenario.jobs, &scenario.arrivals, &opts, &|m| {
        progress.phase(m)
    })
    .map_err(|e| {
        let bad = e.is_bad_input();
        let e = anyhow::Error::from(e).context("simulating");
        if bad { bad_input(e) } else { other(e) }
    })?;
    progress.finish();
    print(&report::render(&report, args.format.into()))?;
    let mut plot_files = Vec::new();
    if !args.no_plots {
        std::fs::create_dir_all(&args.plots)
            .with_context(|| format!("creating the plot folder {}", args.plots.display()))
            .map_err(other)?;
        let written = fikit_sim::plots::write_plots(&report, &scenario.jobs, &args.plots, "sim")
            .context("writing plots")
            .map_err(other)?;
        let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
        eprintln!("fikit-sim: plots: {}", names.join(", "));
        plot_files = written;
    }
    if let Some(path) = &args.html {
        write_html_report(path, &scenario, &opts.model, &report, &plot_files)?;
    }
    Ok(())
}

/// Writes `--html FILE` with the plots inline (drawn into a temporary folder
/// when none were written).
fn write_html_report(
    path: &std::path::Path,
    scenario: &Scenario,
    model: &GpuModel,
    report: &fikit_sim::simulate::Report,
    plot_files: &[PathBuf],
) -> Result<(), Failure> {
    use fikit_sim::html;
    let figures = if plot_files.is_empty() {
        let dir = std::env::temp_dir().join(format!("fikit-sim-html-{}", std::process::id()));
        let figures = fikit_sim::plots::write_plots(report, &scenario.jobs, &dir, "sim")
            .map_err(anyhow::Error::from)
            .and_then(|written| Ok(html::read_svg_figures(&written)?));
        let _ = std::fs::remove_dir_all(&dir);
        figures
    } else {
        html::read_svg_figures(plot_files).map_err(anyhow::Error::from)
    }
    .context("drawing the plots for the HTML report")
    .map_err(other)?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let doc = html::simulation_report(&html::SimulationHtml {
        scenario,
        model,
        report,
        figures,
        command: Some(format!("command: fikit-sim {}", args.join(" "))),
    });
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating the folder {}", dir.display()))
            .map_err(other)?;
    }
    doc.write(path).map_err(|e| other(e.into()))?;
    eprintln!("fikit-sim: HTML report: {}", path.display());
    Ok(())
}

/// Applies `--priority JOB=N`.
fn set_priority(scenario: &mut Scenario, spec: &str) -> anyhow::Result<()> {
    let (name, value) = spec.rsplit_once('=').with_context(|| {
        format!("--priority {spec:?}: expected JOB=N, e.g. resnet50-bs1-eval=0")
    })?;
    let priority: u8 = value.parse().ok().filter(|p| *p <= 9).with_context(|| {
        format!("--priority {spec:?}: the priority must be 0 (highest) to 9, found {value:?}")
    })?;
    let names: Vec<String> = scenario.jobs.iter().map(|j| j.name.clone()).collect();
    let job = scenario
        .jobs
        .iter_mut()
        .find(|j| j.name == name)
        .with_context(|| {
            format!(
                "--priority {spec:?}: no job named {name:?} (jobs: {})",
                names.join(", ")
            )
        })?;
    job.priority = priority;
    Ok(())
}

fn run_sweep(args: SweepArgs) -> Result<(), Failure> {
    let model = args.common.model()?;
    let scenario = Scenario::from_traces(&traces(&args.inputs)?).map_err(bad_input)?;
    if scenario.jobs.len() < 2 {
        return Err(bad_input(anyhow::anyhow!(
            "a sweep needs at least 2 traces, found {}",
            scenario.jobs.len()
        )));
    }
    let opts = SweepOptions {
        policies: args.common.policies(),
        model,
        progress: std::io::stderr().is_terminal(),
    };
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(n) = args.threads {
        if n == 0 {
            return Err(bad_input(anyhow::anyhow!("--threads must be at least 1")));
        }
        builder = builder.num_threads(n);
    }
    let pool = builder
        .build()
        .context("starting worker threads")
        .map_err(other)?;
    let rows = pool
        .install(|| sweep::pairs(&scenario.jobs, &opts))
        .context("simulating")
        .map_err(other)?;
    print(&sweep::render(&rows, args.format.into()))
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
    #[arg(long, value_enum, value_delimiter = ',')]
    policy: Vec<PolicyArg>,
    /// GPU model file (JSON) for the simulation.
    #[arg(long, value_name = "FILE", requires = "policy")]
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
}

fn run_export(args: ExportArgs) -> Result<(), Failure> {
    use fikit_sim::export::{self, ExportOptions};
    debug_assert!(args.perfetto, "clap requires --perfetto");
    if args.max_events == Some(0) {
        return Err(bad_input(anyhow::anyhow!(
            "--max-events must be at least 1"
        )));
    }
    let opts = ExportOptions {
        max_events: args.max_events,
        wall_clock: args.wall_clock,
    };
    let chrome = if args.policy.is_empty() {
        let inputs = export::read_traces(&traces(&args.inputs)?).map_err(bad_input)?;
        export::from_traces(&inputs, &opts)
    } else {
        let common = CommonArgs {
            policy: args.policy,
            model: args.model,
        };
        let model = common.model()?;
        let (mut scenario, files) = match &args.scenario {
            Some(path) => (
                Scenario::load(path).map_err(bad_input)?,
                export::scenario_traces(path).map_err(bad_input)?,
            ),
            None => {
                let files = traces(&args.inputs)?;
                (Scenario::from_traces(&files).map_err(bad_input)?, files)
            }
        };
        for spec in &args.priorities {
            set_priority(&mut scenario, spec).map_err(bad_input)?;
        }
        let inputs = export::read_traces(&files).map_err(bad_input)?;
        let infos: Vec<_> = scenario
            .jobs
            .iter()
            .zip(&inputs)
            .map(|(job, input)| export::op_infos(job, &input.trace))
            .collect();
        let runs = common
            .policies()
            .into_iter()
            .map(|p| export::run_for_export(&scenario, p, &model))
            .collect::<Result<Vec<_>, _>>()
            .context("simulating")
            .map_err(other)?;
        export::from_runs(&scenario, &infos, &runs, &model, &opts)
    };
    let bar = if std::io::stderr().is_terminal() && chrome.slices.len() > 200_000 {
        let b = indicatif::ProgressBar::new(chrome.slices.len() as u64);
        b.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        b.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} slices written")
                .expect("a valid template"),
        );
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let to_stdout = args.output.as_os_str() == "-";
    let shown = if to_stdout {
        "standard output".to_string()
    } else {
        args.output.display().to_string()
    };
    let bytes = if to_stdout {
        chrome.write_json(std::io::stdout().lock(), &bar)
    } else {
        if let Some(dir) = args.output.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("creating the folder {}", dir.display()))
                .map_err(other)?;
        }
        std::fs::File::create(&args.output).and_then(|f| chrome.write_json(f, &bar))
    }
    .with_context(|| format!("writing {shown}"))
    .map_err(other)?;
    bar.finish_and_clear();
    eprintln!(
        "fikit-sim: wrote {} events ({:.1} MB) to {shown}; open it at https://ui.perfetto.dev",
        chrome.event_count(),
        bytes as f64 / 1e6
    );
    for t in &chrome.truncated {
        let name = chrome
            .processes
            .iter()
            .find(|p| p.pid == t.pid)
            .map_or("?", |p| p.name.as_str());
        eprintln!(
            "fikit-sim: {name}: kept the first {} of {} slices (--max-events), up to {} µs",
            t.kept,
            t.total,
            export::us(t.cut_at_ns)
        );
    }
    if let Some(w) = export::size_warning(&shown, bytes, &chrome) {
        eprintln!("fikit-sim: {w}");
    }
    Ok(())
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Some(Command::Inspect(args)) => {
            let opts = InspectOptions::from(args);
            let jobs = inspect::summaries(&opts).map_err(bad_input)?;
            print(&inspect::render(&jobs, opts.format))
        }
        Some(Command::Sweep(args)) => run_sweep(args),
        Some(Command::Export(args)) => run_export(args),
        Some(Command::Import(args)) => import_cli::run_import(args),
        Some(Command::Calibrate(args)) => live_cli::run_calibrate(args),
        Some(Command::Validate(args)) => live_cli::run_validate(args),
        Some(Command::LiveWorker(args)) => live_cli::run_worker(args),
        Some(Command::LiveProbe(args)) => live_cli::run_probe(args),
        None => run_simulation(cli.sim),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            // A closed pipe (`| head`) is not an error worth a message.
            if let Some(io) = f.error.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::BrokenPipe
            {
                return ExitCode::SUCCESS;
            }
            eprintln!("fikit-sim: error: {:#}", f.error);
            ExitCode::from(f.code)
        }
    }
}
