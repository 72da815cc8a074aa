//! The command line: one subcommand a task (run a scenario, rebuild its
//! report, run a validation set, rebuild its summary); clap's arguments
//! become the plain [`RunOptions`] or [`SetOptions`], then they run.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use clap::{Args, Parser, Subcommand};

use crate::exec::ExecOptions;
use crate::profiles::model_for;
use crate::rounds::{RunOptions, run};
use crate::scenario::{JobSpec, RunPolicy, Scenario, ScenarioError};
use crate::set::Set;
use crate::set_run::{SetOptions, run_set};

/// Runs real programs together on one GPU under exclusive, time slicing,
/// MPS, preemptive priority and FIKIT, and sets what they did beside
/// fikit-sim's prediction for their profiles.
#[derive(Debug, Parser)]
#[command(
    name = "fikit-run",
    version,
    long_about = "Runs real programs together on one GPU under exclusive, time slicing, MPS, \
                  preemptive priority and FIKIT, and prints per job its region (first kernel \
                  launch to last launch or blocking synchronization), its slowdown against \
                  running alone (median [range] over repetitions), fikit-sim's prediction for \
                  the jobs' profiles, the speedup against time slicing, iteration p50/p99, how \
                  much of it other jobs overlapped, and what the gate did. Needs a GPU, the \
                  collector library (libfikit_collector.so beside this program, or \
                  FIKIT_COLLECTOR) and, for fikit, each job's profile (a fikit trace of the \
                  same command run alone: `fikit-profile`).",
    after_help = "Exit codes: 0 every job exited 0 in every round; 1 a job failed or a round stopped; 2 bad input; 130 interrupted (what ran is still written)."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// `fikit-run`'s subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run jobs together under each policy (a scenario file, or --job per
    /// job), each policy's rounds repeated, beside fikit-sim's prediction.
    Scenario(ScenarioArgs),
    /// Run nothing: rebuild a scenario's table and prediction from the
    /// rounds of an earlier run's run.json.
    Report(ReportArgs),
    /// Run a validation set: profile each job alone with fikit-profile
    /// (beside this program) into OUT/profiles/, run each pair into
    /// OUT/<pair>/ (a pair with a complete run.json is not run again) and
    /// write OUT/summary.{txt,json,html}: simulated against real slowdown
    /// per policy, in and out of sample.
    Set(SetArgs),
    /// Run nothing: rebuild a set's summary from OUT's pairs; with
    /// --resimulate, each pair's table and prediction first.
    Summary(SummaryArgs),
}

/// The jobs: a scenario file or `--job`s, with the policies and repetitions.
#[derive(Debug, Args)]
pub struct JobsArgs {
    /// A scenario file (JSON: jobs with name, command, priority, profile,
    /// start and, for a server, requests; policies; repetitions). See
    /// run/README.md.
    pub scenario: Option<PathBuf>,
    /// Instead of a scenario file: NAME[:PRIORITY[:PROFILE]]=COMMAND (the
    /// command split at spaces; quote the whole argument). Repeat per job.
    #[arg(long = "job", value_name = "JOB")]
    pub jobs: Vec<String>,
    /// Policies to run (repeat or comma-separate); default: the scenario's, else all five.
    #[arg(long = "policy", value_delimiter = ',', value_parser = parse_policy)]
    pub policies: Vec<RunPolicy>,
    /// Rounds of every policy (default: the scenario's, else 3).
    #[arg(short = 'r', long)]
    pub repetitions: Option<usize>,
}

/// How the rounds run: the gate and the time limits.
#[derive(Debug, Args)]
pub struct GateArgs {
    /// A gate that sees no job's launches or completions move for this long
    /// lets its launch go (and the table counts it), ms: 1 to 86400000 (a
    /// day).
    #[arg(long, default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub gate_timeout_ms: u64,
    /// How a job waits at the gate once its wait is older than 1 ms: sleep
    /// this long between looks, µs (0: yield the core between looks, so a
    /// gap opening is seen at once but a core stays busy the whole wait);
    /// at most 1000000 (a second).
    #[arg(long, default_value_t = 0, value_name = "US",
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub gate_nap_us: u64,
    /// How the gate sees each kernel launch: `preload`, the wrappers of the
    /// preloaded shim (libfikit_shim.so beside the collector, set in
    /// LD_PRELOAD), which cost a launch an indirect call; `cupti`, CUPTI's
    /// launch callbacks (about twice the preload path's cost on an H100);
    /// `auto`, preload where the shim is beside the collector, else cupti.
    /// run.json's `launch_path` says which one each job's gate used.
    #[arg(long, value_enum, default_value_t = LaunchHook::Auto)]
    pub launch_hook: LaunchHook,
    /// A round still running after this long is stopped, s: 1 to 1000000
    /// (about 11 days).
    #[arg(long, default_value_t = 1_800,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub round_timeout_s: u64,
}

/// The prediction set beside the real rounds, and which rounds count.
#[derive(Debug, Args)]
pub struct PredictArgs {
    /// GPU model for the prediction: a model file, or `default`; without it
    /// the shipped calibrated model of the profiles' GPU.
    #[arg(long)]
    pub model: Option<String>,
    /// A repetition counts in the slowdown, vs-timeslice and error columns
    /// only where its rounds were co-runs: the shortest job's region at
    /// least this share overlapped by the others' (0 to 1).
    #[arg(long, default_value_t = 0.9)]
    pub min_overlap: f64,
}

/// `fikit-run scenario`.
#[derive(Debug, Args)]
pub struct ScenarioArgs {
    #[command(flatten)]
    jobs: JobsArgs,
    /// Output folder: run.json (every round's measurements and the table's
    /// rows), table.txt, logs/ (each job's output per round).
    #[arg(short = 'o', long, default_value = "fikit-run-out")]
    out: PathBuf,
    /// Also record every job with fikit-profile into DIR/<policy>-<repetition>/.
    #[arg(long, value_name = "DIR")]
    trace: Option<PathBuf>,
    #[command(flatten)]
    gate: GateArgs,
    #[command(flatten)]
    predict: PredictArgs,
}

/// `fikit-run report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The earlier run's run.json (its policies unless --policy names others).
    #[arg(value_name = "RUN_JSON")]
    run_json: PathBuf,
    #[command(flatten)]
    jobs: JobsArgs,
    /// Output folder for the rebuilt run.json and table.txt.
    #[arg(short = 'o', long, default_value = "fikit-run-out")]
    out: PathBuf,
    #[command(flatten)]
    predict: PredictArgs,
}

/// `fikit-run set`.
#[derive(Debug, Args)]
pub struct SetArgs {
    /// The validation set (JSON: jobs with priority, command and optional
    /// profile, and for a server its requests and profile_command; pairs
    /// with their jobs and whether they are in or out of sample; policies;
    /// repetitions; see run/README.md).
    #[arg(value_name = "SET_JSON")]
    set: PathBuf,
    /// Output folder: profiles/, a folder per pair, summary.{txt,json,html}.
    #[arg(short = 'o', long, default_value = "fikit-run-out")]
    out: PathBuf,
    /// Run only these pairs (repeat or comma-separate; their jobs alone are
    /// profiled); the summary still covers every pair run so far in OUT.
    /// For a set spread over several sittings of a GPU.
    #[arg(long = "pair", value_name = "PAIR", value_delimiter = ',')]
    pairs: Vec<String>,
    /// Profiles per job (default: the set's, else 1); each repetition is
    /// predicted with the next, and the summary shows the simulated spread
    /// over them. Profiles already in OUT are kept.
    #[arg(long, value_name = "N")]
    profiles: Option<usize>,
    /// Policies to run (repeat or comma-separate); default: the set's.
    #[arg(long = "policy", value_delimiter = ',', value_parser = parse_policy)]
    policies: Vec<RunPolicy>,
    /// Rounds of every policy (default: the set's).
    #[arg(short = 'r', long)]
    repetitions: Option<usize>,
    /// Also record every job of every round with fikit-profile into
    /// DIR/<pair>/<policy>-<repetition>/ (a job's runs alone that an
    /// earlier pair made are not run again).
    #[arg(long, value_name = "DIR")]
    trace: Option<PathBuf>,
    #[command(flatten)]
    gate: GateArgs,
    #[command(flatten)]
    predict: PredictArgs,
}

/// `fikit-run summary`.
#[derive(Debug, Args)]
pub struct SummaryArgs {
    /// The validation set (JSON) OUT was run with.
    #[arg(value_name = "SET_JSON")]
    set: PathBuf,
    /// The set's output folder.
    #[arg(short = 'o', long, default_value = "fikit-run-out")]
    out: PathBuf,
    /// Rebuild each pair's table and prediction from the rounds in its
    /// run.json (as `report` does, with the profiles in OUT/profiles and
    /// this model) before the summary.
    #[arg(long)]
    resimulate: bool,
    /// With --resimulate: only these pairs (repeat or comma-separate).
    #[arg(
        long = "pair",
        value_name = "PAIR",
        value_delimiter = ',',
        requires = "resimulate"
    )]
    pairs: Vec<String>,
    /// Profiles per job to predict with (default: the set's).
    #[arg(long, value_name = "N")]
    profiles: Option<usize>,
    #[command(flatten)]
    predict: PredictArgs,
}

fn parse_policy(s: &str) -> Result<RunPolicy, String> {
    RunPolicy::parse(s).ok_or_else(|| {
        let names: Vec<&str> = RunPolicy::ALL.iter().map(|p| p.name()).collect();
        format!("unknown policy {s:?}; choose from {}", names.join(", "))
    })
}

/// A job from `--job NAME[:PRIORITY[:PROFILE]]=COMMAND`.
pub fn parse_job(s: &str) -> Result<JobSpec, String> {
    let (head, cmd) = s
        .split_once('=')
        .ok_or_else(|| format!("--job {s:?}: expected NAME[:PRIORITY[:PROFILE]]=COMMAND"))?;
    let mut parts = head.splitn(3, ':');
    let name = parts.next().unwrap_or_default().to_string();
    let priority = match parts.next() {
        None | Some("") => 9,
        Some(p) => p
            .parse::<u8>()
            .ok()
            .filter(|p| *p <= 9)
            .ok_or_else(|| format!("--job {s:?}: priority {p:?} is not 0 to 9"))?,
    };
    let profile = parts.next().filter(|p| !p.is_empty()).map(PathBuf::from);
    Ok(JobSpec {
        name,
        command: cmd.split_whitespace().map(String::from).collect(),
        priority,
        profile,
        more_profiles: Vec::new(),
        start: None,
        requests: None,
        profile_command: None,
    })
}

/// `--min-overlap` is a share.
fn check_min_overlap(v: f64) -> Result<()> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(bad(format!(
            "--min-overlap {v}: expected a share from 0 to 1"
        )))
    }
}

/// How the gate sees launches (`--launch-hook`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LaunchHook {
    /// The preloaded shim where it is beside the collector, else CUPTI.
    Auto,
    /// CUPTI's launch callbacks.
    Cupti,
    /// The preloaded shim's wrappers (libfikit_shim.so).
    Preload,
}

/// The shim to preload for `hook`: libfikit_shim.so beside `collector`
/// (`auto`: where it is there; `preload`: it must be).
pub fn shim_for(hook: LaunchHook, collector: &Path) -> Result<Option<PathBuf>> {
    if hook == LaunchHook::Cupti {
        return Ok(None);
    }
    if hook == LaunchHook::Auto {
        return Ok(fikit_protocol::shim_beside(collector));
    }
    let shim = collector.with_file_name(fikit_protocol::SHIM_FILE);
    if !shim.is_file() {
        return Err(bad(format!(
            "--launch-hook preload needs libfikit_shim.so beside the collector: {} is missing",
            shim.display()
        )));
    }
    Ok(Some(shim))
}

/// fikit-profile beside this program, `None` where it is missing; bad input
/// where it is missing and `--trace` (`traced`) needs it.
fn profiler_beside(traced: bool) -> Result<Option<PathBuf>> {
    let exe = std::env::current_exe().context("cannot find this program")?;
    let p = exe.with_file_name("fikit-profile");
    if p.is_file() {
        Ok(Some(p))
    } else if traced {
        Err(bad(format!(
            "--trace needs fikit-profile beside this program: {} is missing",
            p.display()
        )))
    } else {
        Ok(None)
    }
}

/// Bad input (exit code 2): `e` as an error [`exit_code`] recognises.
pub fn bad(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!(BadInput(e.to_string()))
}

/// Bad input: exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct BadInput(String);

/// The collector to inject: FIKIT_COLLECTOR, else libfikit_collector.so
/// beside this program; bad input where it is missing.
pub fn collector() -> Result<PathBuf> {
    fikit_protocol::find_collector().map_err(bad)
}

impl JobsArgs {
    /// The scenario, checked, with the command line's policies and repetitions.
    pub fn scenario(&self) -> Result<Scenario> {
        let mut scenario = match (&self.scenario, self.jobs.is_empty()) {
            (Some(_), false) => return Err(bad("give a scenario file or --job, not both")),
            (None, true) => {
                return Err(bad(
                    "give a scenario file or at least one --job (see --help)",
                ));
            }
            (Some(p), true) => Scenario::load(p).map_err(bad)?,
            (None, false) => Scenario {
                jobs: self
                    .jobs
                    .iter()
                    .map(|j| parse_job(j))
                    .collect::<Result<_, _>>()
                    .map_err(bad)?,
                policies: Vec::new(),
                repetitions: 3,
            },
        };
        if !self.policies.is_empty() {
            scenario.policies = self.policies.clone();
        } else if scenario.policies.is_empty() {
            scenario.policies = RunPolicy::ALL.to_vec();
        }
        if let Some(r) = self.repetitions {
            scenario.repetitions = r;
        }
        let path = self
            .scenario
            .as_ref()
            .map_or("command line".to_string(), |p| p.display().to_string());
        scenario
            .check()
            .map_err(|message| bad(ScenarioError { path, message }))?;
        Ok(scenario)
    }
}

impl GateArgs {
    /// How the rounds run, with `collector` injected, writing into `out`.
    pub fn exec(&self, collector: PathBuf, out: PathBuf) -> Result<ExecOptions> {
        let shim = shim_for(self.launch_hook, &collector)?;
        Ok(ExecOptions {
            collector,
            profiler: None,
            trace_dir: None,
            out_dir: out,
            gate_timeout_ms: self.gate_timeout_ms,
            gate_nap_us: self.gate_nap_us,
            round_timeout_s: self.round_timeout_s,
            gate_ab_ms: 0,
            gate_ab_floor: false,
            shim,
        })
    }
}

impl PredictArgs {
    /// The options of a run that predicts so: its exec options, no report.
    pub fn run_options(&self, scenario: Scenario, exec: ExecOptions) -> Result<RunOptions> {
        check_min_overlap(self.min_overlap)?;
        Ok(RunOptions {
            scenario,
            exec,
            model: self.model.clone(),
            min_overlap: self.min_overlap,
            report: None,
        })
    }
}

impl ScenarioArgs {
    /// The plain options, or bad input.
    pub fn into_options(self) -> Result<RunOptions> {
        let scenario = self.jobs.scenario()?;
        // An earlier run's measurements are not written over.
        let earlier = self.out.join("run.json");
        if earlier.exists() {
            return Err(bad(format!(
                "-o {}: holds {}, an earlier run's measurements, which this run would replace; \
                 choose another folder, or move that one away",
                self.out.display(),
                earlier.display()
            )));
        }
        let mut exec = self.gate.exec(collector()?, self.out)?;
        if let Some(dir) = &self.trace {
            // Made now, not in the first round: a folder that cannot be
            // made is bad input, not every job's failure.
            std::fs::create_dir_all(dir).map_err(|e| {
                bad(format!(
                    "--trace {}: cannot make the folder: {e}",
                    dir.display()
                ))
            })?;
            exec.profiler = profiler_beside(true)?;
            exec.trace_dir = self.trace;
        }
        self.predict.run_options(scenario, exec)
    }
}

impl ReportArgs {
    /// The plain options, or bad input. Rebuilding a report runs nothing:
    /// no collector needed.
    pub fn into_options(self) -> Result<RunOptions> {
        // The run's file first: what every later check reads from.
        let text = std::fs::read_to_string(&self.run_json)
            .map_err(|e| bad(format!("{}: cannot read: {e}", self.run_json.display())))?;
        // Without --policy, the policies the run ran (not every policy, the
        // ones it did not run as empty rows).
        let mut jobs = self.jobs;
        if jobs.policies.is_empty()
            && let Some(ran) = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| {
                    v["policies"]
                        .as_array()?
                        .iter()
                        .map(|p| RunPolicy::parse(p.as_str()?))
                        .collect::<Option<Vec<_>>>()
                })
                .filter(|ran| !ran.is_empty())
        {
            jobs.policies = ran;
        }
        let scenario = jobs.scenario()?;
        let exec = ExecOptions {
            out_dir: self.out,
            ..ExecOptions::default()
        };
        let mut o = self.predict.run_options(scenario, exec)?;
        o.report = Some(self.run_json);
        Ok(o)
    }
}

/// A set file with the command line's policies, repetitions and profile
/// count, checked; and `pairs`, checked to be the set's.
fn load_set(
    path: &Path,
    policies: &[RunPolicy],
    repetitions: Option<usize>,
    profiles: Option<usize>,
    pairs: &[String],
) -> Result<Set> {
    let mut set = Set::load(path).map_err(bad)?;
    if !policies.is_empty() {
        set.policies = policies.to_vec();
    }
    if let Some(r) = repetitions {
        set.repetitions = r;
    }
    if let Some(n) = profiles {
        set.profiles = n;
    }
    set.check().map_err(|m| {
        bad(format!(
            "{} (with the command line's options): {m}",
            path.display()
        ))
    })?;
    for name in pairs {
        if !set.pairs.iter().any(|p| p.name == *name) {
            return Err(bad(format!(
                "--pair {name:?}: {} has no such pair",
                path.display()
            )));
        }
    }
    // What would stop the run after hours of profiling, found now.
    for (name, j) in &set.jobs {
        if let Some(p) = &j.profile
            && !p.is_file()
        {
            return Err(bad(format!(
                "{}: jobs.{name}.profile: {} is not a file",
                path.display(),
                p.display()
            )));
        }
    }
    Ok(set)
}

impl PredictArgs {
    /// The set options that run nothing (`fikit-run summary`), with `exec`
    /// of no collector.
    fn set_options(&self, set: Set, out: PathBuf, only: Vec<String>) -> Result<SetOptions> {
        check_min_overlap(self.min_overlap)?;
        model_for(self.model.as_deref(), &[])?;
        Ok(SetOptions {
            set,
            out,
            summary_only: true,
            resimulate: false,
            only,
            collector: None,
            profiler: None,
            model: self.model.clone(),
            // Nothing runs: `SetArgs` sets how the pairs' rounds run.
            gate_timeout_ms: 0,
            gate_nap_us: 0,
            shim: None,
            round_timeout_s: 0,
            min_overlap: self.min_overlap,
            trace: None,
        })
    }
}

impl SetArgs {
    /// The plain options of a set's run, or bad input.
    pub fn into_options(self) -> Result<SetOptions> {
        let set = load_set(
            &self.set,
            &self.policies,
            self.repetitions,
            self.profiles,
            &self.pairs,
        )?;
        let mut o = self.predict.set_options(set, self.out, self.pairs)?;
        let collector = collector()?;
        o.shim = shim_for(self.gate.launch_hook, &collector)?;
        o.collector = Some(collector);
        o.profiler = profiler_beside(self.trace.is_some())?;
        o.summary_only = false;
        o.gate_timeout_ms = self.gate.gate_timeout_ms;
        o.gate_nap_us = self.gate.gate_nap_us;
        o.round_timeout_s = self.gate.round_timeout_s;
        o.trace = self.trace;
        Ok(o)
    }
}

impl SummaryArgs {
    /// The plain options of a summary's rebuild, or bad input.
    pub fn into_options(self) -> Result<SetOptions> {
        let set = load_set(&self.set, &[], None, self.profiles, &self.pairs)?;
        // A summary reads what `fikit-run set -o OUT` wrote: a mistyped OUT
        // would summarize nothing as every pair not run yet.
        if !self.out.is_dir() {
            return Err(bad(format!(
                "-o {}: no such folder (the one `fikit-run set` wrote its pairs into)",
                self.out.display()
            )));
        }
        let mut o = self.predict.set_options(set, self.out, self.pairs)?;
        o.profiler = profiler_beside(false)?;
        if self.resimulate {
            o.summary_only = false;
            o.resimulate = true;
        }
        Ok(o)
    }
}

/// The exit code of a command's error: 2 for bad input, else 1; the error
/// printed first, after `program`'s name.
pub fn exit_code(program: &str, e: &anyhow::Error) -> i32 {
    eprintln!("{program}: {e:#}");
    if e.downcast_ref::<BadInput>().is_some() {
        2
    } else {
        1
    }
}

/// `fikit-run`'s main: exit code 2 for bad input, 1 for failures.
pub fn main() -> i32 {
    let result = match Cli::parse().command {
        Command::Scenario(a) => a.into_options().and_then(|o| run(&o)),
        Command::Report(a) => a.into_options().and_then(|o| run(&o)),
        Command::Set(a) => a.into_options().and_then(|o| run_set(&o)),
        Command::Summary(a) => a.into_options().and_then(|o| run_set(&o)),
    };
    result.unwrap_or_else(|e| exit_code("fikit-run", &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_form_jobs() {
        let j = parse_job("infer:0:p/i.parquet=python3 i.py --iters 5").unwrap();
        assert_eq!((j.name.as_str(), j.priority), ("infer", 0));
        assert_eq!(j.profile.as_deref(), Some(Path::new("p/i.parquet")));
        assert_eq!(j.command, ["python3", "i.py", "--iters", "5"]);
        let j = parse_job("train=python3 t.py").unwrap();
        assert_eq!((j.priority, j.profile.is_none()), (9, true));
        assert!(parse_job("x:11=y").unwrap_err().contains("priority"));
        assert!(parse_job("nocommand").unwrap_err().contains("NAME"));
    }

    #[test]
    fn the_preload_hook_needs_the_shim_beside_the_collector() {
        let d = tempfile::tempdir().unwrap();
        let collector = d.path().join("libfikit_collector.so");
        assert_eq!(shim_for(LaunchHook::Cupti, &collector).unwrap(), None);
        assert_eq!(shim_for(LaunchHook::Auto, &collector).unwrap(), None);
        let e = shim_for(LaunchHook::Preload, &collector).unwrap_err();
        assert!(
            format!("{e:#}").contains("needs libfikit_shim.so beside the collector"),
            "{e:#}"
        );
        let shim = d.path().join("libfikit_shim.so");
        std::fs::write(&shim, b"").unwrap();
        assert_eq!(
            shim_for(LaunchHook::Preload, &collector).unwrap(),
            Some(shim.clone())
        );
        assert_eq!(shim_for(LaunchHook::Auto, &collector).unwrap(), Some(shim));
        assert_eq!(shim_for(LaunchHook::Cupti, &collector).unwrap(), None);
    }
}
