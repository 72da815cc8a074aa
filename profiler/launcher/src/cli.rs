//! The command line of `fikit-profile` ([`main`]).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::options::{Options, default_job, parse_priority};
use clap::Parser;

/// The most untraced runs `--runs` takes.
const MAX_RUNS: i64 = 100;

/// Untraced runs of a job of priority 0 (high) without `--runs`: a
/// latency-critical job's p99 is read from them, and one run's p99 spreads
/// by about a tenth (median) on the validation rounds' H200s and H100s.
/// Read from 3 runs, a prediction that is otherwise right passes the
/// validation's p99 bounds (10% / 25% over 6 rows, 9 repetitions) in
/// 55-66% of trials on the H200, from 9 runs in 90-99%
/// (reports/validation/rule-noise-2026-11-29/, `p99.txt`; a server's p99
/// likewise: reports/validation/serve-noise-2026-11-29/).
const LATENCY_CRITICAL_RUNS: u32 = 9;

/// Untraced runs of any other job without `--runs`: its slowdown compares
/// a shared run with a run alone at the same host speed, which cancels most
/// of the runs' spread; 3 give their median and range.
const OTHER_RUNS: u32 = 3;

/// The longest `--wait-descendants`, s: past it a deadline would not be a
/// time the clock can hold.
const MAX_WAIT_SECS: u64 = 1_000_000;

/// Run a command under the fikit CUPTI collector and write one fikit trace
/// (format v1, Parquet) per CUDA process it starts.
///
/// The collector is injected with CUDA_INJECTION64_PATH, so the program is
/// neither modified nor relinked. fikit-profile exits with the command's
/// status (128+signal when it was killed; 1 when the command exited 0 and
/// nothing could be recorded or a trace not written) and forwards SIGINT, SIGTERM, SIGHUP
/// and SIGQUIT to it. Processes the command leaves running (daemons, workers
/// that outlive it) are waited for, up to --wait-descendants seconds, and get
/// the forwarded signals too. Traces are named DIR/<job>-<pid>.parquet; a summary of
/// each is printed at the end.
///
/// Environment: FIKIT_COLLECTOR (the collector library; default
/// libfikit_collector.so beside this program), FIKIT_CUPTI_PATH (libcupti or
/// its folder), FIKIT_API (activity | callback | all | none | latency: how API
/// calls are recorded, for experiments).
#[derive(Debug, Parser)]
#[command(name = "fikit-profile", version, about, long_about)]
struct Cli {
    /// Job name, used in the trace and its file name [default: the command's file name].
    #[arg(long, short = 'n', value_name = "JOB", value_parser = fikit_trace::parse_job_name)]
    name: Option<String>,

    /// Scheduling priority of the job: high (= 0), low (= 9) or 0 (highest) to 9 (lowest).
    #[arg(long, short = 'p', value_name = "high|low|N", default_value = "low", value_parser = parse_priority)]
    priority: u8,

    /// Folder for the traces.
    #[arg(long, short = 'o', value_name = "DIR", default_value = "traces")]
    output: PathBuf,

    /// Record every CUDA runtime and driver API call (slower: adds 40-90% to
    /// launch-bound programs); by default only the calls that launch GPU work,
    /// copy, set memory or synchronize are recorded.
    #[arg(long)]
    all_api: bool,

    /// Keep the raw spool files (DIR/.fikit-spool-<pid>/) after conversion.
    #[arg(long)]
    keep_spools: bool,

    /// Do not print the summary table.
    #[arg(long, short = 'q')]
    quiet: bool,

    /// Then run the command a second time, the metrics pass: CUPTI's range
    /// profiler measures the first launch of each kernel key alone (DRAM
    /// bytes read and written, SM issue rate), and the figures go into the
    /// first run's traces as the optional metric_* columns (traces/README.md).
    /// The pass's own timings are not kept (its measured launches run
    /// serialized). Needs a GPU whose counters are free (no other profiler,
    /// not under MPS).
    #[arg(long)]
    metrics: bool,

    /// After the traced run, run the command N times more untraced (nothing
    /// recorded; only the gate fikit-run measures jobs with, seeing the
    /// launches through the launch shim): tracing slows a program's host,
    /// and each run's time from its first kernel launch to its end goes into
    /// the trace (traces/README.md, `fikit.characterization`), from which
    /// fikit-sim sets the host's speed. Their spread is the range fikit-sim
    /// gives. Only for a command of one CUDA process. At most 100.
    /// [default: 9 for a job of priority 0 (high), whose p99 is read from
    /// these runs; 3 for any other]
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u32).range(0..=MAX_RUNS))]
    runs: Option<u32>,

    /// Skip the pressure pass. By default, after the untraced runs, the
    /// command runs once more under a private MPS daemon beside a
    /// latency-bound victim kernel, both recorded: how much its kernels slow
    /// the victim goes into the trace, from which fikit-sim weighs them
    /// under MPS (where MPS cannot be started the pass is skipped, with a
    /// note). Only for a command of one CUDA process.
    #[arg(long)]
    no_pressure: bool,

    /// Run the command once, traced, and no more (for a command that must
    /// not run twice): its trace has no untraced runs and no pressure pass,
    /// and fikit-sim simulates it as traced.
    #[arg(long, conflicts_with_all = ["runs", "metrics", "no_pressure"])]
    single_run: bool,

    /// After the command exits, wait up to SECS seconds for the processes it
    /// started that still run (their spools may still grow); the ones still
    /// running then are named and their traces marked incomplete. At most
    /// 1000000 (about 11 days).
    #[arg(long, value_name = "SECS", default_value_t = crate::reaper::DEFAULT_GRACE_SECS,
          value_parser = clap::value_parser!(u64).range(0..=MAX_WAIT_SECS))]
    wait_descendants: u64,

    /// The command to run, after `--`.
    #[arg(required = true, last = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

impl From<Cli> for Options {
    fn from(c: Cli) -> Self {
        let job = c
            .name
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| default_job(&c.command));
        Options {
            job,
            priority: c.priority,
            out_dir: c.output,
            all_api: c.all_api,
            keep_spools: c.keep_spools,
            quiet: c.quiet,
            metrics: c.metrics,
            runs: if c.single_run {
                0
            } else {
                c.runs.unwrap_or(default_runs(c.priority)) as usize
            },
            pressure: !(c.single_run || c.no_pressure),
            descendant_grace: std::time::Duration::from_secs(c.wait_descendants),
            command: c.command,
        }
    }
}

/// Untraced runs without `--runs`: [`LATENCY_CRITICAL_RUNS`] for priority
/// 0, [`OTHER_RUNS`] otherwise.
fn default_runs(priority: u8) -> u32 {
    if priority == 0 {
        LATENCY_CRITICAL_RUNS
    } else {
        OTHER_RUNS
    }
}

/// `fikit-profile`'s `main`: parses the command line, profiles, and gives
/// the exit code.
pub fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    if args
        .get(1)
        .is_some_and(|a| a == crate::pressure::VICTIM_ARG)
    {
        let code = crate::pressure::victim_main(&args[2..]);
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    let opts: Options = Cli::parse().into();
    match crate::run::profile(&opts) {
        Ok(code) => ExitCode::from(u8::try_from(code.clamp(0, 255)).unwrap_or(1)),
        Err(e) => {
            eprintln!("fikit-profile: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs_of(args: &[&str]) -> usize {
        let mut all = vec!["fikit-profile"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--", "python3", "job.py"]);
        Options::from(Cli::try_parse_from(all).unwrap()).runs
    }

    #[test]
    fn a_latency_critical_job_gets_more_untraced_runs_by_default() {
        assert_eq!(runs_of(&["--priority", "high"]), 9);
        assert_eq!(runs_of(&["--priority", "0"]), 9);
        assert_eq!(runs_of(&["--priority", "1"]), 3);
        assert_eq!(runs_of(&[]), 3, "the default priority is low");
    }

    #[test]
    fn runs_asked_for_or_a_single_run_override_the_default() {
        assert_eq!(runs_of(&["--priority", "high", "--runs", "2"]), 2);
        assert_eq!(runs_of(&["--priority", "low", "--runs", "12"]), 12);
        assert_eq!(runs_of(&["--priority", "high", "--single-run"]), 0);
        assert!(
            Cli::try_parse_from(["fikit-profile", "--runs", "3", "--single-run", "--", "x"])
                .is_err()
        );
    }
}
