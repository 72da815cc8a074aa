//! `fikit-sim`: replays traces of GPU jobs under GPU-sharing policies.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use fikit_sim::inspect::{self, InspectOptions};

/// Exit code for bad input (a bad trace, file or argument), as clap uses for bad arguments.
const EXIT_BAD_INPUT: u8 = 2;

#[derive(Parser)]
#[command(
    name = "fikit-sim",
    version,
    about = "Replay GPU job traces under GPU-sharing policies (FIKIT, time slicing, MPS, preemption)",
    long_about = "Replay GPU job traces under GPU-sharing policies (FIKIT, time slicing, MPS, \
                  preemption).\n\nTraces are the Parquet files fikit-profile writes, one per \
                  job; folders are searched recursively for *.parquet.\n\nExit codes: 0 success, \
                  2 bad input (a file, trace or argument), 1 anything else."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Summarize traces: kernels, GPU busy time, inter-kernel idle gaps and their causes, top kernels.
    Inspect(InspectArgs),
}

#[derive(clap::Args)]
struct InspectArgs {
    /// Trace files, or folders searched recursively for *.parquet.
    #[arg(required = true, value_name = "FILE_OR_DIR")]
    inputs: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    format: FormatArg,
    /// Kernels to list per job, by total time.
    #[arg(long, default_value_t = 10, value_name = "N")]
    top: usize,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    /// Text tables.
    Table,
    /// JSON.
    Json,
}

impl From<InspectArgs> for InspectOptions {
    fn from(a: InspectArgs) -> Self {
        InspectOptions {
            inputs: a.inputs,
            format: match a.format {
                FormatArg::Table => inspect::Format::Table,
                FormatArg::Json => inspect::Format::Json,
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

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Inspect(args) => {
            let opts = InspectOptions::from(args);
            let jobs = inspect::summaries(&opts).map_err(bad_input)?;
            let text = inspect::render(&jobs, opts.format);
            std::io::stdout()
                .lock()
                .write_all(text.as_bytes())
                .context("writing to standard output")
                .map_err(other)
        }
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
