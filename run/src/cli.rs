//! The command line: clap arguments become [`RunOptions`], then the rounds run.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use clap::{Parser, ValueEnum};
use serde::{Deserialize, Serialize};

use fikit_gate::{ProfiledOp, Table};
use fikit_sim_core::policy::PolicyKind;
use fikit_sim_core::sim::gpu::GpuModel;
use fikit_sim_core::sim::job::Job;

use crate::exec::{ExecError, ExecOptions, JobRun, Round, install_signals, run_round};
use crate::pressure::{Pressure, load_pressure};
use crate::report::{
    Predicted, Row, Spread, host_factor, host_factor_region, iteration_quantile_ms, predict,
    predict_apart, rows, table,
};
use crate::scenario::{JobSpec, RunPolicy, Scenario, ScenarioError};
use crate::set::{Set, summarize, summary_html, summary_text};

/// Runs real programs together on one GPU under exclusive, time slicing, MPS,
/// preemptive priority and FIKIT, and prints per job its region (first
/// kernel launch to last launch or blocking synchronization), its slowdown
/// against running alone (median [range] over repetitions), fikit-sim's
/// prediction for the jobs' profiles, the speedup against time slicing,
/// iteration p50/p99, how much of it other jobs overlapped, and what the gate
/// did. Needs a GPU, the collector library (libfikit_collector.so beside
/// this program, or FIKIT_COLLECTOR) and, for fikit, each job's profile (a
/// fikit trace of the same command run alone: `fikit-profile`).
#[derive(Debug, Parser)]
#[command(
    name = "fikit-run",
    version,
    after_help = "Exit codes: 0 every job exited 0 in every round; 1 a job failed or a round stopped; 2 bad input; 130 interrupted (what ran is still written)."
)]
pub struct Args {
    /// A scenario file (JSON: jobs with name, command, priority, profile,
    /// start; policies; repetitions). See run/README.md.
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
    /// Output folder: run.json (every round's measurements and the table's
    /// rows), table.txt, logs/ (each job's output per round).
    #[arg(short = 'o', long, default_value = "fikit-run-out")]
    pub out: PathBuf,
    /// Also record every job with fikit-profile into DIR/<policy>-<repetition>/
    /// (with --set: DIR/<pair>/<policy>-<repetition>/, the rounds each pair
    /// runs; a job's runs alone that an earlier pair made are not run again).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["report", "summary_only", "resimulate"])]
    pub trace: Option<PathBuf>,
    /// GPU model for the prediction: a model file, or `default`; without it
    /// the shipped calibrated model of the profiles' GPU.
    #[arg(long)]
    pub model: Option<String>,
    /// A gate that sees no job's launches or completions move for this long
    /// lets its launch go (and the table counts it), ms.
    #[arg(long, default_value_t = 10_000)]
    pub gate_timeout_ms: u64,
    /// How a job waits at the gate once its wait is older than 1 ms: sleep
    /// this long between looks, µs (0: yield the core between looks, so a
    /// gap opening is seen at once but a core stays busy the whole wait).
    #[arg(long, default_value_t = 0, value_name = "US")]
    pub gate_nap_us: u64,
    /// How the gate sees each kernel launch: `preload`, the wrappers of the
    /// preloaded shim (libfikit_shim.so beside the collector, set in
    /// LD_PRELOAD), which cost a launch an indirect call; `cupti`, CUPTI's
    /// launch callbacks (about twice the preload path's cost on an H100);
    /// `auto`, preload where the shim is beside the collector, else cupti.
    /// run.json's `launch_path` says which one each job's gate used.
    #[arg(long, value_enum, default_value_t = LaunchHook::Auto)]
    pub launch_hook: LaunchHook,
    /// A round still running after this long is stopped, s.
    #[arg(long, default_value_t = 1_800)]
    pub round_timeout_s: u64,
    /// Measure the gate's own cost on one job: inside each round its launch
    /// callbacks go off and on in alternate phases of MS ms (from one phase
    /// after its first launch), and each on phase's median iteration (the
    /// spans between blocking synchronizations) is set against its two off
    /// neighbours'. One job only; give it a run of many phases.
    #[arg(long, value_name = "MS", conflicts_with_all = ["set", "report"])]
    pub gate_ab: Option<u64>,
    /// With --gate-ab: in on phases the launch hook only counts the launch,
    /// so the A/B measures the hook's dispatch to a near-empty handler
    /// (CUPTI's callbacks or the shim's wrappers: the floor under any gate
    /// on that path), not the gate.
    #[arg(long, requires = "gate_ab")]
    pub gate_ab_floor: bool,
    /// Predict with each job's profile on the host speed of its real runs
    /// alone: its host delays scaled so that, replayed alone, it iterates at
    /// its real median iteration under exclusive (`iteration`, the default),
    /// or takes its real median region under exclusive (`=region`: what the
    /// slowdown divides by), for a profile recorded while the host ran at
    /// another speed than the runs. The factors are printed; without
    /// exclusive rounds nothing changes. With --set, for every pair.
    #[arg(
        long,
        value_enum,
        value_name = "MATCH",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "iteration"
    )]
    pub host_speed_from_alone: Option<HostSpeedMatch>,
    /// Predict MPS with each job's measured pressure on its neighbours:
    /// the weights of `fikit-sim pressure -o FILE` (a pressure pass's
    /// figures, per job name) in place of the model's full weight; jobs the
    /// file does not name keep it. With --set, for every pair.
    #[arg(long, value_name = "FILE")]
    pub pressure: Option<PathBuf>,
    /// Under MPS, each job's host at its speed in the pressure pass (the job
    /// beside the victim under MPS; --pressure's host figure, fikit-sim
    /// pressure since 2026-11-26): its host delays in the MPS rounds scaled
    /// to that host time per launch, its runs alone as they are. For a
    /// host-bound job whose host runs slower beside a busy neighbour. The
    /// factors are printed; jobs without the figure keep their host.
    #[arg(long, requires = "pressure")]
    pub host_speed_from_pressure: bool,
    /// With --pressure: the busiest job of each scenario (each pair of a
    /// set), the one with the largest one-wave SM share (`share`) in FILE,
    /// takes its weight from FILE, a second pressure pass with another
    /// victim (`KIND=gemm lab/validate/pressure.sh`: one shaped like the
    /// batch-1 jobs' own kernels); the other jobs keep --pressure's weights.
    /// A what-if, not part of the validated rule (run/README.md).
    #[arg(long, value_name = "FILE", requires = "pressure")]
    pub pressure_busiest: Option<PathBuf>,
    /// A repetition counts in the slowdown, vs-timeslice and error columns
    /// only where its rounds were co-runs: the shortest job's region at
    /// least this share overlapped by the others' (0 to 1).
    #[arg(long, default_value_t = 0.9)]
    pub min_overlap: f64,
    /// Run nothing: rebuild the table (and prediction) from the rounds of
    /// an earlier run's run.json, with this scenario's jobs and profiles.
    #[arg(long, value_name = "RUN_JSON")]
    pub report: Option<PathBuf>,
    /// Instead of a scenario: a validation set (JSON: jobs with priority,
    /// command and optional profile; pairs with their jobs and whether they
    /// are in or out of sample; policies; repetitions; see run/README.md).
    /// Profiles each job alone with fikit-profile (beside this program) into
    /// OUT/profiles/, runs each pair into OUT/<pair>/ (a pair with a complete
    /// run.json is not run again) and writes OUT/summary.{txt,json,html}:
    /// simulated against real slowdown per policy, in and out of sample.
    #[arg(long, value_name = "SET_JSON", conflicts_with_all = ["scenario", "jobs", "report"])]
    pub set: Option<PathBuf>,
    /// Run nothing: set the errors of several --set summaries together
    /// (their summary.json, e.g. one set run on several machines), per
    /// policy and sample, with each one's worst row, then every row with
    /// the summaries it comes from; printed.
    #[arg(
        long,
        value_name = "SUMMARY_JSON",
        num_args = 1..,
        conflicts_with_all = ["scenario", "jobs", "report", "set"]
    )]
    pub combine: Vec<PathBuf>,
    /// With --combine: each job once, its real and simulated slowdowns the
    /// medians over every summary's repetitions of it (one set run on
    /// several machines, each job's figure the median of all its
    /// repetitions), instead of one row per summary.
    #[arg(long, requires = "combine")]
    pub pool: bool,
    /// With --set: run nothing, rebuild the summary from OUT's pairs.
    #[arg(long, requires = "set")]
    pub summary_only: bool,
    /// With --set: run nothing; rebuild each pair's table and prediction
    /// from the rounds in its run.json (as --report does, with the profiles
    /// in OUT/profiles and this model), then the summary.
    #[arg(long, requires = "set", conflicts_with = "summary_only")]
    pub resimulate: bool,
    /// With --set: run only these pairs (repeat or comma-separate; their
    /// jobs alone are profiled); the summary still covers every pair run so
    /// far in OUT. For a set spread over several sittings of a GPU.
    #[arg(
        long = "pair",
        value_name = "PAIR",
        value_delimiter = ',',
        requires = "set"
    )]
    pub pairs: Vec<String>,
    /// With --set: profiles per job (default: the set's, else 1); each
    /// repetition is predicted with the next, and the summary shows the
    /// simulated spread over them. Profiles already in OUT are kept.
    #[arg(long, value_name = "N", requires = "set")]
    pub profiles: Option<usize>,
}

fn parse_policy(s: &str) -> Result<RunPolicy, String> {
    RunPolicy::parse(s).ok_or_else(|| {
        let names: Vec<&str> = RunPolicy::ALL.iter().map(|p| p.name()).collect();
        format!("unknown policy {s:?}; choose from {}", names.join(", "))
    })
}

/// What to run, once the command line is read.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The scenario, checked.
    pub scenario: Scenario,
    /// How rounds run.
    pub exec: ExecOptions,
    /// The prediction's model choice (`None`: the profiles' GPU).
    pub model: Option<String>,
    /// The least co-run share for a repetition to count.
    pub min_overlap: f64,
    /// Rebuild the report from this run.json instead of running.
    pub report: Option<PathBuf>,
    /// Predict with the profiles on the host speed of the runs alone,
    /// matched on this.
    pub host_speed_from_alone: Option<HostSpeedMatch>,
    /// Measured pressure weights by job name (`--pressure`), and the file.
    pub pressure: Option<Pressure>,
    /// Under MPS, each job's host at its speed in the pressure pass.
    pub host_speed_from_pressure: bool,
}

/// What `--host-speed-from-alone` matches a profile, replayed alone, to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HostSpeedMatch {
    /// The job's median iteration in its real runs alone.
    Iteration,
    /// The job's median region in its real runs alone (first kernel launch
    /// to the end: what its slowdown divides by).
    Region,
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
    })
}

/// The shortest A/B phase `--gate-ab` takes, ms.
const MIN_AB_MS: u64 = 20;
/// The longest, ms.
const MAX_AB_MS: u64 = 60_000;

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

/// The policies of repetition `rep`, in the scenario's order rotated by
/// `rep` (a, b, c; then b, c, a; ...): over as many repetitions as policies
/// each policy runs once in each place, so a drift of the machine over a
/// run (its host or GPU speeding up or slowing down) is not laid on one
/// policy. Deterministic.
fn rotated(policies: &[RunPolicy], rep: usize) -> Vec<RunPolicy> {
    let n = policies.len().max(1);
    policies
        .iter()
        .cycle()
        .skip(rep % n)
        .take(policies.len())
        .copied()
        .collect()
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
fn shim_for(hook: LaunchHook, collector: &Path) -> Result<Option<PathBuf>> {
    if hook == LaunchHook::Cupti {
        return Ok(None);
    }
    let shim = collector.with_file_name("libfikit_shim.so");
    if hook == LaunchHook::Auto {
        return Ok(shim.is_file().then_some(shim));
    }
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

pub(crate) fn bad(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!(BadInput(e.to_string()))
}

/// Bad input: exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct BadInput(String);

impl Args {
    /// The plain options, or bad input.
    pub fn into_options(self) -> Result<RunOptions> {
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
        check_min_overlap(self.min_overlap)?;
        if let Some(ms) = self.gate_ab {
            if scenario.jobs.len() != 1 {
                return Err(bad(format!(
                    "--gate-ab: measures one job alone; the scenario has {} jobs",
                    scenario.jobs.len()
                )));
            }
            if !(MIN_AB_MS..=MAX_AB_MS).contains(&ms) {
                return Err(bad(format!(
                    "--gate-ab {ms}: phases of {MIN_AB_MS} to {MAX_AB_MS} ms (each must hold several iterations, and a run several phases)"
                )));
            }
        }
        // Rebuilding a report runs nothing: no collector needed.
        let collector = match &self.report {
            Some(_) => PathBuf::new(),
            None => fikit_protocol::find_collector().map_err(bad)?,
        };
        let shim = match &self.report {
            Some(_) => None,
            None => shim_for(self.launch_hook, &collector)?,
        };
        let profiler = match &self.trace {
            None => None,
            Some(_) => profiler_beside(true)?,
        };
        Ok(RunOptions {
            scenario,
            exec: ExecOptions {
                collector,
                profiler,
                trace_dir: self.trace,
                out_dir: self.out,
                gate_timeout_ms: self.gate_timeout_ms,
                gate_nap_us: self.gate_nap_us,
                round_timeout_s: self.round_timeout_s,
                gate_ab_ms: self.gate_ab.unwrap_or(0),
                gate_ab_floor: self.gate_ab_floor,
                shim,
            },
            model: self.model,
            min_overlap: self.min_overlap,
            report: self.report,
            host_speed_from_alone: self.host_speed_from_alone,
            pressure: load_pressure(self.pressure.as_deref(), self.pressure_busiest.as_deref())?,
            host_speed_from_pressure: self.host_speed_from_pressure,
        })
    }
}

/// The profiles read: per job its table and its simulator job (`None` without a profile).
struct Profiles {
    /// Per job, its gate table (from its first profile).
    tables: Vec<Option<Table>>,
    /// Per job, a simulated job per profile (the first profile first).
    jobs: Vec<Vec<Job>>,
    devices: Vec<String>,
}

impl Profiles {
    /// The simulated jobs for repetition `rep`: each job's profile `rep`
    /// mod its count; `None` when a job has no profile.
    fn for_repetition(&self, rep: usize) -> Option<Vec<Job>> {
        self.jobs
            .iter()
            .map(|v| (!v.is_empty()).then(|| v[rep % v.len()].clone()))
            .collect()
    }

    /// How many profile sets the repetitions cycle through.
    fn sets(&self) -> usize {
        self.jobs.iter().map(Vec::len).max().unwrap_or(0)
    }
}

fn read_profiles(s: &Scenario) -> Result<Profiles> {
    let mut p = Profiles {
        tables: Vec::new(),
        jobs: Vec::new(),
        devices: Vec::new(),
    };
    for j in &s.jobs {
        let Some(first) = &j.profile else {
            p.tables.push(None);
            p.jobs.push(Vec::new());
            continue;
        };
        let mut jobs = Vec::new();
        for (k, path) in std::iter::once(first).chain(&j.more_profiles).enumerate() {
            let (table, job, device) = read_profile(path, j)?;
            if !p.devices.contains(&device) {
                p.devices.push(device);
            }
            if k == 0 {
                p.tables.push(Some(table));
            }
            jobs.push(job);
        }
        p.jobs.push(jobs);
    }
    Ok(p)
}

/// One profile of job `j`: its gate table, its simulated job, its GPU's name.
fn read_profile(path: &Path, j: &JobSpec) -> Result<(Table, Job, String)> {
    let t = fikit_trace::read_trace(path).map_err(bad)?;
    let mut ops: Vec<ProfiledOp> = t
        .kernels
        .iter()
        .map(|k| ProfiledOp {
            key: Some(k.kernel_key),
            start_ns: k.start_ns,
            end_ns: k.end_ns,
        })
        .collect();
    ops.extend(t.memops.iter().map(|m| ProfiledOp {
        key: None,
        start_ns: m.start_ns,
        end_ns: m.end_ns,
    }));
    let table = Table::from_ops(&ops);
    // The prediction's FIKIT predicts gaps as the gate does: by key.
    let mut job = Job::from_trace(&t).with_gaps_by_key(|k| table.gap_after(Some(k)));
    job.name = j.name.clone();
    job.priority = j.priority;
    Ok((table, job, t.meta.device.name.clone()))
}

fn model_for(choice: Option<&str>, devices: &[String]) -> Result<(GpuModel, String)> {
    match choice {
        Some("default") => Ok((
            GpuModel::default(),
            "documented defaults (--model default)".into(),
        )),
        Some(f) => Ok((GpuModel::load(Path::new(f)).map_err(bad)?, f.to_string())),
        None => {
            let (m, file) = GpuModel::for_devices(devices.iter().map(String::as_str));
            Ok((
                m,
                file.map_or(
                    "documented defaults (no shipped model for the profiles' GPU)".into(),
                    |f| format!("{f}, for the profiles' GPU"),
                ),
            ))
        }
    }
}

/// What run.json holds.
#[derive(Serialize)]
struct Output<'a> {
    #[serde(flatten)]
    what: RunOf<'a>,
    model: &'a str,
    /// Profile sets the prediction cycled through (repetition r: set r mod
    /// this); 0 without a prediction.
    profile_sets: usize,
    rounds: &'a [Round],
    rows: &'a [Row],
    complete: bool,
}

/// What a run.json says it ran: its policies, repetitions and jobs (name,
/// command, priority).
#[derive(Serialize)]
struct RunOf<'a> {
    policies: Vec<&'static str>,
    repetitions: usize,
    jobs: Vec<(&'a str, &'a [String], u8)>,
}

impl<'a> RunOf<'a> {
    fn of(s: &'a Scenario) -> RunOf<'a> {
        RunOf {
            policies: s.policies.iter().map(|p| p.name()).collect(),
            repetitions: s.repetitions,
            jobs: s
                .jobs
                .iter()
                .map(|j| (j.name.as_str(), j.command.as_slice(), j.priority))
                .collect(),
        }
    }
}

/// The part of an earlier run.json that `--report` and a set's reuse of
/// runs alone read.
#[derive(Deserialize)]
struct Saved {
    /// Name, command and priority of each job (`RunOf::jobs`).
    #[serde(default)]
    jobs: Vec<(String, Vec<String>, u8)>,
    rounds: Vec<Round>,
    complete: bool,
}

fn read_saved(path: &Path, jobs: usize) -> Result<Saved> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| bad(format!("{}: cannot read: {e}", path.display())))?;
    let saved: Saved = serde_json::from_str(&text)
        .map_err(|e| bad(format!("{}: not a fikit-run run.json: {e}", path.display())))?;
    for r in &saved.rounds {
        // Every round, exclusive too, holds every job of the scenario.
        if r.jobs.len() != jobs {
            return Err(bad(format!(
                "{}: a {} round has {} jobs, the scenario {jobs}",
                path.display(),
                r.policy.name(),
                r.jobs.len()
            )));
        }
    }
    Ok(saved)
}

/// A set's exclusive runs, each job measured alone once per repetition and
/// shared by every pair the job is in: (job, repetition) to the pair that
/// measured it and the run.
#[derive(Debug, Default)]
pub struct AloneRuns {
    runs: std::collections::BTreeMap<(String, usize), (String, JobRun)>,
}

impl AloneRuns {
    /// Job `job`'s run alone in repetition `rep`, marked as measured in the
    /// pair that ran it.
    fn get(&self, job: &str, rep: usize) -> Option<JobRun> {
        self.runs
            .get(&(job.to_string(), rep))
            .map(|(pair, r)| JobRun {
                alone_from: Some(pair.clone()),
                ..r.clone()
            })
    }

    /// Keeps `run` (a run alone that exited 0 and was measured, not reused)
    /// for the pairs after `pair`.
    fn keep(&mut self, pair: &str, rep: usize, run: &JobRun) {
        if run.ok() && run.alone_from.is_none() {
            self.runs
                .entry((run.job.clone(), rep))
                .or_insert_with(|| (pair.to_string(), run.clone()));
        }
    }

    /// Keeps the runs alone of an earlier call's `dir/run.json` (pair
    /// `pair`) whose job has the same command in `set` now.
    fn keep_from(&mut self, pair: &str, dir: &Path, set: &Set) {
        let Some(e) = std::fs::read_to_string(dir.join("run.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<Saved>(&t).ok())
        else {
            return;
        };
        for r in e.rounds.iter().filter(|r| r.policy == RunPolicy::Exclusive) {
            for j in &r.jobs {
                let same = e.jobs.iter().any(|(n, c, _)| {
                    *n == j.job && set.jobs.get(n).is_some_and(|now| now.command == *c)
                });
                if same {
                    self.keep(pair, r.repetition, j);
                }
            }
        }
    }
}

/// Per job, the host-speed factor ([`host_factor`]) that brings its profile,
/// replayed alone, to its real median iteration alone: the median over its
/// exclusive rounds that exited 0 of each round's median iteration. `None`
/// for a job without such a round.
fn host_factors(
    jobs: &[Job],
    rounds: &[Round],
    model: &GpuModel,
    by: HostSpeedMatch,
) -> Vec<Option<f64>> {
    (0..jobs.len())
        .map(|j| {
            let alone = rounds
                .iter()
                .filter(|r| r.policy == RunPolicy::Exclusive)
                .filter_map(|r| r.jobs.get(j).filter(|x| x.ok()));
            match by {
                HostSpeedMatch::Iteration => {
                    host_factor(&jobs[j], iteration_quantile_ms(alone, 0.5)?, model)
                }
                HostSpeedMatch::Region => {
                    let regions: Vec<f64> = alone
                        .filter_map(|r| r.region_ns())
                        .map(|n| n as f64 / 1e6)
                        .collect();
                    host_factor_region(&jobs[j], Spread::of(&regions)?.median, model)
                }
            }
        })
        .collect()
}

/// Runs the rounds (or reads them, `--report`); returns the exit code.
pub fn run(opts: &RunOptions) -> Result<i32> {
    run_with(opts, None, Vec::new())
}

/// [`run`], in a set: `alone` is the pair's name and the set's runs alone,
/// which its exclusive rounds reuse and add to; `resume` the rounds an
/// earlier, unfinished run of the pair left, which are kept and not run
/// again.
fn run_with(
    opts: &RunOptions,
    mut alone: Option<(&str, &mut AloneRuns)>,
    resume: Vec<Round>,
) -> Result<i32> {
    let s = &opts.scenario;
    let profiles = read_profiles(s)?;
    let (model, model_line) = model_for(opts.model.as_deref(), &profiles.devices)?;
    // The simulated jobs per profile set: repetition r is predicted with
    // set r mod their count (one set unless jobs have more profiles; none
    // when a job has no profile).
    let sim_sets: Vec<Vec<Job>> = (0..profiles.sets())
        .map_while(|k| profiles.for_repetition(k))
        .map(|jobs| match &opts.pressure {
            Some(p) => p.apply(jobs),
            None => jobs,
        })
        .collect();
    // Under MPS with --host-speed-from-pressure the jobs run together at
    // their hosts' speed in the pressure pass; alone as they are.
    let pass_host = opts
        .pressure
        .as_ref()
        .filter(|_| opts.host_speed_from_pressure);
    // The lines under the table: the weights, the pass's host against the
    // profiles', and which jobs --host-speed-from-pressure changes.
    let pressure_line = opts.pressure.as_ref().map(|p| {
        let names: Vec<String> = s.jobs.iter().map(|j| j.name.clone()).collect();
        let first = sim_sets.first().map_or(&[][..], Vec::as_slice);
        let mut lines = vec![p.line(&names)];
        lines.extend(p.host_line(first));
        if pass_host.is_some() {
            lines.push(p.at_pass_line(first));
        }
        for line in &lines {
            eprintln!("fikit-run: {line}");
        }
        lines.join("\n")
    });
    if sim_sets.len() > 1 {
        eprintln!(
            "fikit-run: prediction: {} profiles per job, repetition r predicted with profile r mod their count",
            sim_sets.len()
        );
    }
    let predict_with = |sj: &[Job], policy: RunPolicy, jobs: &[crate::exec::JobRun]| {
        let kind = PolicyKind::from_name(policy.name())?;
        match pass_host {
            Some(p) if policy == RunPolicy::Mps => {
                predict_apart(sj, &p.host_at_pass(sj), jobs, kind, &model)
            }
            _ => predict(sj, jobs, kind, &model),
        }
    };
    let predict_round = |policy: RunPolicy, rep: usize, jobs: &[crate::exec::JobRun]| {
        let sj = sim_sets.get(rep % sim_sets.len().max(1))?;
        predict_with(sj, policy, jobs)
    };
    let saved = match &opts.report {
        Some(p) => Some(read_saved(p, s.jobs.len())?),
        None => None,
    };
    std::fs::create_dir_all(&opts.exec.out_dir)
        .with_context(|| format!("cannot make {}", opts.exec.out_dir.display()))?;
    let work = tempfile::Builder::new()
        .prefix("fikit-run-")
        .tempdir()
        .context("cannot make a work folder")?;
    install_signals();
    eprintln!("fikit-run: prediction model: {model_line}");
    let all: Vec<usize> = (0..s.jobs.len()).collect();
    let total = s.repetitions * s.policies.len();
    let mut stopped: Option<ExecError> = None;
    // With --report the saved rounds stand for the repetitions: none run.
    let (mut rounds, mut sims, incomplete, repetitions): (
        Vec<Round>,
        Vec<Option<Vec<Predicted>>>,
        bool,
        usize,
    ) = match saved {
        Some(saved) => {
            let sims = saved
                .rounds
                .iter()
                .map(|r| predict_round(r.policy, r.repetition, &r.jobs))
                .collect();
            (saved.rounds, sims, !saved.complete, 0)
        }
        None => {
            if !resume.is_empty() {
                eprintln!(
                    "fikit-run: {} of {total} rounds kept from the unfinished run in {}",
                    resume.len(),
                    opts.exec.out_dir.display()
                );
            }
            let sims = resume
                .iter()
                .map(|r| predict_round(r.policy, r.repetition, &r.jobs))
                .collect();
            (resume, sims, false, s.repetitions)
        }
    };
    'outer: for rep in 0..repetitions {
        for policy in rotated(&s.policies, rep) {
            if rounds
                .iter()
                .any(|r| r.policy == policy && r.repetition == rep)
            {
                continue;
            }
            let t = std::time::Instant::now();
            let mut reused = Vec::new();
            let result = if policy == RunPolicy::Exclusive {
                let mut jobs = Vec::new();
                let mut err = None;
                for &j in &all {
                    if let Some(r) = alone
                        .as_ref()
                        .and_then(|(_, a)| a.get(&s.jobs[j].name, rep))
                    {
                        reused.push(format!(
                            "{} alone from {}",
                            r.job,
                            r.alone_from.as_deref().unwrap_or("-")
                        ));
                        jobs.push(r);
                        continue;
                    }
                    match run_round(
                        s,
                        &[j],
                        policy,
                        rep,
                        &profiles.tables,
                        &opts.exec,
                        work.path(),
                    ) {
                        Ok(mut r) => {
                            if let Some((pair, a)) = alone.as_mut() {
                                r.iter().for_each(|run| a.keep(pair, rep, run));
                            }
                            jobs.append(&mut r)
                        }
                        Err(e) => {
                            err = Some(e);
                            break;
                        }
                    }
                }
                match err {
                    Some(e) => Err(e),
                    None => Ok(jobs),
                }
            } else {
                run_round(
                    s,
                    &all,
                    policy,
                    rep,
                    &profiles.tables,
                    &opts.exec,
                    work.path(),
                )
            };
            match result {
                Ok(jobs) => {
                    let sim = predict_round(policy, rep, &jobs);
                    let failed: Vec<String> = jobs
                        .iter()
                        .filter(|j| !j.ok())
                        .map(|j| {
                            format!(
                                "{} exited {}",
                                j.job,
                                j.exit_code.map_or("-".into(), |c| c.to_string())
                            )
                        })
                        .collect();
                    eprintln!(
                        "fikit-run: round {}/{total}: {} repetition {}: {:.1} s{}{}",
                        rounds.len() + 1,
                        policy.name(),
                        rep + 1,
                        t.elapsed().as_secs_f64(),
                        if reused.is_empty() {
                            String::new()
                        } else {
                            format!(" ({})", reused.join(", "))
                        },
                        if failed.is_empty() {
                            String::new()
                        } else {
                            format!(
                                " ({}; see {}/logs)",
                                failed.join(", "),
                                opts.exec.out_dir.display()
                            )
                        }
                    );
                    rounds.push(Round {
                        policy,
                        repetition: rep,
                        jobs,
                        gate_nap_us: opts.exec.gate_nap_us,
                    });
                    sims.push(sim);
                }
                Err(e) => {
                    eprintln!("fikit-run: {} repetition {}: {e}", policy.name(), rep + 1);
                    stopped = Some(e);
                    break 'outer;
                }
            }
        }
    }
    // Kept rounds first, then those run now: back in repetition and policy order.
    let mut both: Vec<(Round, Option<Vec<Predicted>>)> = rounds.into_iter().zip(sims).collect();
    both.sort_by_key(|(r, _)| {
        let p = s.policies.iter().position(|&p| p == r.policy);
        (r.repetition, p)
    });
    let (rounds, mut sims): (Vec<Round>, Vec<Option<Vec<Predicted>>>) = both.into_iter().unzip();
    let mut host_line = None;
    if let Some(by) = opts.host_speed_from_alone.filter(|_| !sim_sets.is_empty()) {
        let mut lines = Vec::new();
        let mut scaled_sets: Vec<Vec<Job>> = Vec::new();
        for (k, sj) in sim_sets.iter().enumerate() {
            let factors = host_factors(sj, &rounds, &model, by);
            let each: Vec<String> = s
                .jobs
                .iter()
                .zip(&factors)
                .map(|(j, f)| match f {
                    Some(f) => format!("{} {f:.2}x", j.name),
                    None => format!("{} as profiled (no run alone to compare)", j.name),
                })
                .collect();
            lines.push(if sim_sets.len() > 1 {
                format!("profile set {}: {}", k + 1, each.join(", "))
            } else {
                each.join(", ")
            });
            scaled_sets.push(
                sj.iter()
                    .zip(&factors)
                    .map(|(j, f)| j.with_host_speed(f.unwrap_or(1.0)))
                    .collect(),
            );
        }
        let line = format!(
            "prediction on the host speed of the runs alone (--host-speed-from-alone={}), the profiles' host time times: {}",
            by.to_possible_value()
                .expect("no value is skipped")
                .get_name(),
            lines.join("; ")
        );
        eprintln!("fikit-run: {line}");
        host_line = Some(line);
        sims = rounds
            .iter()
            .map(|r| {
                let sj = &scaled_sets[r.repetition % scaled_sets.len()];
                predict_with(sj, r.policy, &r.jobs)
            })
            .collect();
    }
    let names: Vec<(String, u8)> = s
        .jobs
        .iter()
        .map(|j| (j.name.clone(), j.priority))
        .collect();
    let r = rows(&names, &s.policies, &rounds, &sims, opts.min_overlap);
    let mut text = table(&r);
    for line in pressure_line.iter().chain(&host_line) {
        text.push_str(&format!("\n{line}"));
    }
    for round in &rounds {
        for j in &round.jobs {
            if let Some(ab) = &j.gate_ab {
                let own = j
                    .gate_us()
                    .map(|us| format!("; the gate's own work {us:.3} µs a launch"))
                    .unwrap_or_default();
                text.push_str(&format!(
                    "\ngate A/B, {} repetition {}, {}: {}{own}",
                    round.policy.name(),
                    round.repetition + 1,
                    j.job,
                    ab.line()
                ));
            }
        }
    }
    println!("{text}");
    let out = Output {
        what: RunOf::of(s),
        model: &model_line,
        profile_sets: sim_sets.len(),
        rounds: &rounds,
        rows: &r,
        complete: stopped.is_none() && !incomplete,
    };
    let json = opts.exec.out_dir.join("run.json");
    std::fs::write(&json, serde_json::to_string_pretty(&out)? + "\n")
        .with_context(|| format!("cannot write {}", json.display()))?;
    let tpath = opts.exec.out_dir.join("table.txt");
    std::fs::write(&tpath, format!("prediction model: {model_line}\n{text}\n"))
        .with_context(|| format!("cannot write {}", tpath.display()))?;
    let mut warned = Vec::new();
    for row in &r {
        let Some(c) = row.co_runs else { continue };
        if c < row.ok_runs && !warned.contains(&row.policy) {
            warned.push(row.policy);
            eprintln!(
                "fikit-run: warning: under {}, {} of {} repetitions were not co-runs (the shortest job's region less than {:.0}% overlapped): left out of slowdown, vs timeslice and error (start the short job later, or give its partner more work)",
                row.policy.name(),
                row.ok_runs - c,
                row.ok_runs,
                opts.min_overlap * 100.0
            );
        }
    }
    Ok(match stopped {
        Some(ExecError::Interrupted) => 130,
        Some(_) => 1,
        None if rounds.iter().all(|r| r.jobs.iter().all(|j| j.ok())) => 0,
        None => 1,
    })
}

/// What a validation-set run needs, once the command line is read.
#[derive(Debug, Clone)]
pub struct SetOptions {
    /// The set, checked (policies and repetitions as the command line says).
    pub set: Set,
    /// Its output folder.
    pub out: PathBuf,
    /// Rebuild the summary only.
    pub summary_only: bool,
    /// Rebuild the pairs' tables and predictions from their rounds, and the summary.
    pub resimulate: bool,
    /// Run only these pairs (empty: all).
    pub only: Vec<String>,
    /// The collector; `None` with `summary_only`.
    pub collector: Option<PathBuf>,
    /// fikit-profile beside this program (`None` when it is missing).
    pub profiler: Option<PathBuf>,
    /// The prediction's model choice.
    pub model: Option<String>,
    /// The gate's timeout, ms.
    pub gate_timeout_ms: u64,
    /// A long wait's sleep between looks, µs (0: yield).
    pub gate_nap_us: u64,
    /// The preloaded shim (`--launch-hook preload`).
    pub shim: Option<PathBuf>,
    /// A round's time limit, s.
    pub round_timeout_s: u64,
    /// The least co-run share for a repetition to count.
    pub min_overlap: f64,
    /// Predict with the profiles on the host speed of the runs alone,
    /// matched on this.
    pub host_speed_from_alone: Option<HostSpeedMatch>,
    /// Measured pressure weights (`--pressure`).
    pub pressure: Option<Pressure>,
    /// Under MPS, each job's host at its speed in the pressure pass.
    pub host_speed_from_pressure: bool,
    /// Record every job of every round with fikit-profile into
    /// `<trace>/<pair>/<policy>-<repetition>/` (`profiler` is then set).
    pub trace: Option<PathBuf>,
}

impl SetOptions {
    /// Job `name`'s profile `k` (from 0): its own, else
    /// `OUT/profiles/<name>.parquet` and `OUT/profiles/<k+1>/<name>.parquet`
    /// after it; `None` past a job's own (a job given a profile has one).
    fn profile_of(&self, name: &str, k: usize) -> Option<PathBuf> {
        match (&self.set.jobs[name].profile, k) {
            (Some(own), 0) => Some(own.clone()),
            (Some(_), _) => None,
            (None, 0) => Some(self.out.join("profiles").join(format!("{name}.parquet"))),
            (None, k) => Some(
                self.out
                    .join("profiles")
                    .join((k + 1).to_string())
                    .join(format!("{name}.parquet")),
            ),
        }
    }

    /// Job `name`'s profiles that exist, in order, up to the set's count,
    /// stopping at the first missing one (so that profile k still predicts
    /// repetitions k, k + n, …).
    fn existing_profiles(&self, name: &str) -> Vec<PathBuf> {
        (0..self.set.profiles)
            .map_while(|k| self.profile_of(name, k).filter(|p| p.is_file()))
            .collect()
    }

    /// The options of pair `pair`'s run of `scenario` in `dir` (`report`:
    /// rebuilt from that run.json instead; nothing is then traced).
    fn pair_run(
        &self,
        pair: &str,
        scenario: Scenario,
        dir: PathBuf,
        report: Option<PathBuf>,
    ) -> RunOptions {
        let trace_dir = match &report {
            Some(_) => None,
            None => self.trace.as_ref().map(|t| t.join(pair)),
        };
        RunOptions {
            scenario,
            exec: ExecOptions {
                collector: self.collector.clone().unwrap_or_default(),
                profiler: trace_dir.as_ref().and(self.profiler.clone()),
                trace_dir,
                out_dir: dir,
                gate_timeout_ms: self.gate_timeout_ms,
                gate_nap_us: self.gate_nap_us,
                round_timeout_s: self.round_timeout_s,
                gate_ab_ms: 0,
                gate_ab_floor: false,
                shim: self.shim.clone(),
            },
            model: self.model.clone(),
            min_overlap: self.min_overlap,
            report,
            host_speed_from_alone: self.host_speed_from_alone,
            pressure: self.pressure.clone(),
            host_speed_from_pressure: self.host_speed_from_pressure,
        }
    }
}

impl Args {
    /// The plain options of `--set`, or bad input.
    pub fn into_set_options(self) -> Result<SetOptions> {
        let path = self.set.clone().expect("called with --set");
        let mut set = Set::load(&path).map_err(bad)?;
        if !self.policies.is_empty() {
            set.policies = self.policies.clone();
        }
        if let Some(r) = self.repetitions {
            set.repetitions = r;
        }
        if let Some(n) = self.profiles {
            set.profiles = n;
        }
        set.check().map_err(|m| {
            bad(format!(
                "{} (with the command line's options): {m}",
                path.display()
            ))
        })?;
        check_min_overlap(self.min_overlap)?;
        for name in &self.pairs {
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
        model_for(self.model.as_deref(), &[])?;
        let collector = if self.summary_only || self.resimulate {
            None
        } else {
            Some(fikit_protocol::find_collector().map_err(bad)?)
        };
        let profiler = profiler_beside(self.trace.is_some())?;
        let shim = match &collector {
            Some(c) => shim_for(self.launch_hook, c)?,
            None => None,
        };
        Ok(SetOptions {
            set,
            out: self.out,
            summary_only: self.summary_only,
            resimulate: self.resimulate,
            only: self.pairs,
            collector,
            profiler,
            model: self.model,
            gate_timeout_ms: self.gate_timeout_ms,
            gate_nap_us: self.gate_nap_us,
            shim,
            round_timeout_s: self.round_timeout_s,
            min_overlap: self.min_overlap,
            host_speed_from_alone: self.host_speed_from_alone,
            pressure: load_pressure(self.pressure.as_deref(), self.pressure_busiest.as_deref())?,
            host_speed_from_pressure: self.host_speed_from_pressure,
            trace: self.trace,
        })
    }
}

/// Job `name`'s profiles: its own, or the set's count of them, each made
/// alone by [`profile_once`] unless its file exists.
fn profile_job(o: &SetOptions, name: &str) -> Result<Vec<PathBuf>> {
    (0..o.set.profiles)
        .map_while(|k| o.profile_of(name, k).map(|dest| (k, dest)))
        .map(|(k, dest)| {
            if o.set.jobs[name].profile.is_some() {
                Ok(dest)
            } else {
                profile_once(o, name, k, dest)
            }
        })
        .collect()
}

/// Profiles job `name` alone into `dest`, its profile `k` (unless that file
/// exists); returns the profile's path.
fn profile_once(o: &SetOptions, name: &str, k: usize, dest: PathBuf) -> Result<PathBuf> {
    let j = &o.set.jobs[name];
    let dir = dest
        .parent()
        .map_or_else(|| o.out.join("profiles"), Path::to_path_buf);
    if dest.is_file() {
        eprintln!("fikit-run: profile of {name}: {} (kept)", dest.display());
        return Ok(dest);
    }
    let profiler = o.profiler.as_ref().ok_or_else(|| {
        bad(format!(
            "job {name} has no profile and fikit-profile is not beside this program"
        ))
    })?;
    let work = dir.join(format!("{name}.d"));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).with_context(|| format!("cannot make {}", work.display()))?;
    let log = dir.join(format!("{name}.log"));
    let log_file =
        std::fs::File::create(&log).with_context(|| format!("cannot write {}", log.display()))?;
    eprintln!(
        "fikit-run: profiling {name} alone{} ({})",
        if o.set.profiles > 1 {
            format!(", profile {} of {}", k + 1, o.set.profiles)
        } else {
            String::new()
        },
        j.command.join(" ")
    );
    let status = std::process::Command::new(profiler)
        .arg("--name")
        .arg(name)
        .arg("--priority")
        .arg(j.priority.to_string())
        .arg("-o")
        .arg(&work)
        .arg("--")
        .args(&j.command)
        .stdout(log_file.try_clone()?)
        .stderr(log_file)
        .status()
        .with_context(|| format!("cannot run {}", profiler.display()))?;
    if !status.success() {
        anyhow::bail!(
            "profiling {name} failed ({status}); its output: {}",
            log.display()
        );
    }
    let traces: Vec<PathBuf> = std::fs::read_dir(&work)
        .with_context(|| format!("cannot read {}", work.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    match traces.as_slice() {
        [one] => {
            std::fs::rename(one, &dest)
                .with_context(|| format!("cannot move {} to {}", one.display(), dest.display()))?;
            let _ = std::fs::remove_dir_all(&work);
            Ok(dest)
        }
        [] => anyhow::bail!(
            "profiling {name}: no CUDA process was traced (its output: {})",
            log.display()
        ),
        _ => Err(bad(format!(
            "profiling {name}: {} CUDA processes were traced (in {}); give the job the one to use as its profile",
            traces.len(),
            work.display()
        ))),
    }
}

/// What an earlier run of a set's pair left in its folder.
enum Earlier {
    /// No `run.json` of this scenario.
    None,
    /// Every round ran and every job exited 0: kept, not run again; the
    /// profile sets its prediction used (1 in run.json files before them).
    Complete(usize),
    /// Stopped or failed: the rounds whose jobs all exited 0 are kept and
    /// the rest run (a stopped or failed round runs again).
    Unfinished(Vec<Round>),
}

/// What `dir/run.json` holds of a run of `s` (its policies, repetitions and
/// jobs, with names, commands and priorities, are the scenario's), read once.
fn earlier_run(dir: &Path, s: &Scenario) -> Earlier {
    let Some(v) = std::fs::read_to_string(dir.join("run.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
    else {
        return Earlier::None;
    };
    let Ok(want) = serde_json::to_value(RunOf::of(s)) else {
        return Earlier::None;
    };
    if !["policies", "repetitions", "jobs"]
        .into_iter()
        .all(|k| v[k] == want[k])
    {
        return Earlier::None;
    }
    let all_ok = v["rounds"].as_array().is_some_and(|rounds| {
        rounds.iter().all(|r| {
            r["jobs"]
                .as_array()
                .is_some_and(|js| js.iter().all(|j| j["exit_code"] == 0))
        })
    });
    if v["complete"] == true && all_ok {
        let sets = v["profile_sets"]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(1);
        return Earlier::Complete(sets);
    }
    Earlier::Unfinished(
        serde_json::from_value::<Saved>(v)
            .map(|saved| {
                saved
                    .rounds
                    .into_iter()
                    .filter(|r| r.jobs.len() == s.jobs.len() && r.jobs.iter().all(JobRun::ok))
                    .collect()
            })
            .unwrap_or_default(),
    )
}

/// Runs a validation set (or rebuilds its summary); returns the exit code.
pub fn run_set(o: &SetOptions) -> Result<i32> {
    std::fs::create_dir_all(&o.out).with_context(|| format!("cannot make {}", o.out.display()))?;
    let mut code = 0;
    let run_it = |p: &crate::set::SetPair| o.only.is_empty() || o.only.contains(&p.name);
    if o.resimulate {
        for p in o.set.pairs.iter().filter(|p| run_it(p)) {
            let dir = o.out.join(&p.name);
            let saved = dir.join("run.json");
            if !saved.is_file() {
                continue;
            }
            let mut profiles = std::collections::BTreeMap::new();
            for name in &p.jobs {
                let found = o.existing_profiles(name);
                let first = o.profile_of(name, 0).unwrap_or_default();
                if found.first() != Some(&first) {
                    return Err(bad(format!(
                        "pair {}: job {name} has no profile to re-simulate with ({} is not a file)",
                        p.name,
                        first.display()
                    )));
                }
                let own = o.set.jobs[name].profile.is_some();
                if !own && found.len() < o.set.profiles {
                    eprintln!(
                        "fikit-run: pair {}: job {name} has {} of {} profiles; predicting with those (run the set to make the rest)",
                        p.name,
                        found.len(),
                        o.set.profiles
                    );
                }
                profiles.insert(name.clone(), found);
            }
            eprintln!(
                "fikit-run: pair {}: re-simulated from {}",
                p.name,
                saved.display()
            );
            let opts = o.pair_run(&p.name, o.set.scenario(p, &profiles), dir, Some(saved));
            if let Err(e) = run_with(&opts, None, Vec::new()) {
                eprintln!("fikit-run: pair {}: {e:#}", p.name);
                code = 1;
            }
        }
    } else if !o.summary_only {
        let mut profiles = std::collections::BTreeMap::new();
        for name in Set::jobs_of(o.set.pairs.iter().filter(|p| run_it(p))) {
            profiles.insert(name.to_string(), profile_job(o, name)?);
        }
        // Each job runs alone once per repetition, in the first pair it is
        // in, and later pairs reuse that run (earlier calls' pairs too).
        let mut alone = AloneRuns::default();
        for p in &o.set.pairs {
            alone.keep_from(&p.name, &o.out.join(&p.name), &o.set);
        }
        let n = o.set.pairs.len();
        for (i, p) in o.set.pairs.iter().enumerate() {
            if !run_it(p) {
                continue;
            }
            let dir = o.out.join(&p.name);
            let scenario = o.set.scenario(p, &profiles);
            let resume = match earlier_run(&dir, &scenario) {
                Earlier::Complete(sets) => {
                    let now = scenario
                        .jobs
                        .iter()
                        .map(|j| j.profile.is_some() as usize + j.more_profiles.len())
                        .max()
                        .unwrap_or(0);
                    let note = if sets != now && now > 0 {
                        format!(
                            "; predicted with {sets} profile set(s), --resimulate predicts it with {now}"
                        )
                    } else {
                        String::new()
                    };
                    eprintln!(
                        "fikit-run: pair {}/{n} {}: complete in {} (kept{note})",
                        i + 1,
                        p.name,
                        dir.display()
                    );
                    continue;
                }
                Earlier::Unfinished(rounds) => rounds,
                Earlier::None => Vec::new(),
            };
            eprintln!(
                "fikit-run: pair {}/{n} {} ({} sample)",
                i + 1,
                p.name,
                p.sample.name()
            );
            let opts = o.pair_run(&p.name, scenario, dir, None);
            // A pair that cannot run (a bad profile, say) is reported and the
            // others still run.
            match run_with(&opts, Some((&p.name, &mut alone)), resume) {
                Ok(130) => {
                    code = 130;
                    break;
                }
                Ok(0) => {}
                Ok(c) => code = code.max(c),
                Err(e) => {
                    eprintln!("fikit-run: pair {}: {e:#}", p.name);
                    code = code.max(1);
                }
            }
        }
    }
    let summary = summarize(&o.set, &o.out).map_err(bad)?;
    let text = summary_text(&summary);
    println!("{text}");
    for (file, body) in [
        ("summary.txt", text),
        (
            "summary.json",
            serde_json::to_string_pretty(&summary)? + "\n",
        ),
        ("summary.html", summary_html(&o.set, &summary)),
    ] {
        let p = o.out.join(file);
        std::fs::write(&p, body).with_context(|| format!("cannot write {}", p.display()))?;
    }
    Ok(code)
}

/// `fikit-run`'s main: exit code 2 for bad input, 1 for failures.
pub fn main() -> i32 {
    let args = Args::parse();
    let result = if !args.combine.is_empty() {
        let how = if args.pool {
            crate::set::Combine::Pool
        } else {
            crate::set::Combine::Rows
        };
        crate::set::combine(&args.combine, how)
            .map_err(bad)
            .map(|c| {
                print!("{}", crate::set::combined_text(&c));
                0
            })
    } else if args.set.is_some() {
        args.into_set_options().and_then(|o| run_set(&o))
    } else {
        args.into_options().and_then(|o| run(&o))
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("fikit-run: {e:#}");
            if e.downcast_ref::<BadInput>().is_some() {
                2
            } else {
                1
            }
        }
    }
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
    fn each_repetition_rotates_the_policies() {
        use RunPolicy::*;
        let p = [Exclusive, Timeslice, Fikit];
        assert_eq!(rotated(&p, 0), [Exclusive, Timeslice, Fikit]);
        assert_eq!(rotated(&p, 1), [Timeslice, Fikit, Exclusive]);
        assert_eq!(rotated(&p, 2), [Fikit, Exclusive, Timeslice]);
        assert_eq!(rotated(&p, 3), rotated(&p, 0));
        // Over three repetitions each policy takes each place once.
        for place in 0..3 {
            let mut at: Vec<RunPolicy> = (0..3).map(|r| rotated(&p, r)[place]).collect();
            at.sort_by_key(|x| x.name());
            let mut all = p.to_vec();
            all.sort_by_key(|x| x.name());
            assert_eq!(at, all);
        }
        assert!(rotated(&[], 5).is_empty());
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

#[cfg(test)]
mod set_profiles {
    use super::*;

    fn options(set: serde_json::Value) -> SetOptions {
        let mut set: Set = serde_json::from_value(set).unwrap();
        set.check().unwrap();
        SetOptions {
            set,
            out: PathBuf::from("/out"),
            summary_only: false,
            resimulate: false,
            only: Vec::new(),
            collector: None,
            profiler: None,
            model: None,
            gate_timeout_ms: 1,
            gate_nap_us: 0,
            shim: None,
            round_timeout_s: 1,
            min_overlap: 0.5,
            host_speed_from_alone: None,
            pressure: None,
            host_speed_from_pressure: false,
            trace: None,
        }
    }

    #[test]
    fn a_jobs_profiles_go_to_numbered_folders_after_the_first() {
        let o = options(serde_json::json!({
            "profiles": 3,
            "jobs": {
                "hi": {"priority": 0, "command": ["true"]},
                "lo": {"priority": 9, "command": ["true"], "profile": "/p/lo.parquet"}
            },
            "pairs": [{"name": "a", "jobs": ["hi", "lo"], "sample": "out"}]
        }));
        let of =
            |name: &str| -> Vec<PathBuf> { (0..4).filter_map(|k| o.profile_of(name, k)).collect() };
        assert_eq!(
            of("hi"),
            [
                "/out/profiles/hi.parquet",
                "/out/profiles/2/hi.parquet",
                "/out/profiles/3/hi.parquet",
                "/out/profiles/4/hi.parquet"
            ]
            .map(PathBuf::from)
        );
        // A job given its profile has that one only.
        assert_eq!(of("lo"), [PathBuf::from("/p/lo.parquet")]);
        // None of them exists here: nothing to re-simulate with.
        assert!(o.existing_profiles("hi").is_empty());
        // The scenario takes the first for the gate, the rest as more.
        let profiles: std::collections::BTreeMap<String, Vec<PathBuf>> = [
            ("hi".to_string(), of("hi")[..3].to_vec()),
            ("lo".to_string(), of("lo")),
        ]
        .into_iter()
        .collect();
        let s = o.set.scenario(&o.set.pairs[0], &profiles);
        assert_eq!(
            s.jobs[0].profile,
            Some(PathBuf::from("/out/profiles/hi.parquet"))
        );
        assert_eq!(s.jobs[0].more_profiles.len(), 2);
        assert_eq!(s.jobs[1].profile, Some(PathBuf::from("/p/lo.parquet")));
        assert!(s.jobs[1].more_profiles.is_empty());
    }

    #[test]
    fn a_traced_set_records_each_pair_in_its_own_folder_and_a_rebuild_records_nothing() {
        let mut o = options(serde_json::json!({
            "jobs": {
                "hi": {"priority": 0, "command": ["true"]},
                "lo": {"priority": 9, "command": ["true"]}
            },
            "pairs": [{"name": "hi-lo", "jobs": ["hi", "lo"], "sample": "in"}]
        }));
        let scenario = || o.set.scenario(&o.set.pairs[0], &Default::default());
        // Untraced: no profiler around the jobs.
        let run = o.pair_run("hi-lo", scenario(), PathBuf::from("/out/hi-lo"), None);
        assert_eq!((run.exec.profiler, run.exec.trace_dir), (None, None));
        o.trace = Some(PathBuf::from("/t"));
        o.profiler = Some(PathBuf::from("/bin/fikit-profile"));
        let scenario = || o.set.scenario(&o.set.pairs[0], &Default::default());
        let run = o.pair_run("hi-lo", scenario(), PathBuf::from("/out/hi-lo"), None);
        assert_eq!(run.exec.trace_dir, Some(PathBuf::from("/t/hi-lo")));
        assert_eq!(run.exec.profiler, Some(PathBuf::from("/bin/fikit-profile")));
        assert_eq!(run.exec.out_dir, PathBuf::from("/out/hi-lo"));
        // Rebuilding from a run.json runs nothing, so traces nothing.
        let saved = Some(PathBuf::from("/out/hi-lo/run.json"));
        let run = o.pair_run("hi-lo", scenario(), PathBuf::from("/out/hi-lo"), saved);
        assert_eq!((run.exec.profiler, run.exec.trace_dir), (None, None));
    }
}
