//! Running one round: the scenario's commands under one policy, each gated
//! by the collector through a fresh control block, measured from the block.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::atomic::{AtomicBool, AtomicI32};
use std::time::Duration;

use fikit_gate::block::{ControlFile, STAMPS, launch_path, state};
use fikit_gate::{Block, GatePolicy, Table, now_ns};
use fikit_protocol::{CUDA_INJECTION_ENV, GATE_ENV, GATE_JOB_ENV, GATE_NAP_US_ENV, GATE_TABLE_ENV};
use serde::Serialize;

use crate::scenario::{JobSpec, RunPolicy, Scenario};

/// How rounds are run (from the command line). The default runs nothing:
/// no collector, no limits (for a report rebuilt from run.json).
#[derive(Debug, Clone, Default)]
pub struct ExecOptions {
    /// The collector library (injected with `CUDA_INJECTION64_PATH`).
    pub collector: PathBuf,
    /// `fikit-profile`, to record every job (`--trace`).
    pub profiler: Option<PathBuf>,
    /// Where traces go (`--trace DIR`): `DIR/<policy>-<rep>/`.
    pub trace_dir: Option<PathBuf>,
    /// Where the jobs' output goes: `logs/<policy>-<rep>-<job>.log`.
    pub out_dir: PathBuf,
    /// A gate that sees nothing move for this long lets its launch go, ms.
    pub gate_timeout_ms: u64,
    /// A wait older than 1 ms sleeps this long between looks, µs (0: yields).
    pub gate_nap_us: u64,
    /// A round that runs longer than this is stopped, s.
    pub round_timeout_s: u64,
    /// The gate's A/B ([`crate::ab`]): its launch callbacks off and on in
    /// phases this long, ms; 0: off.
    pub gate_ab_ms: u64,
    /// The A/B's on phases run CUPTI's dispatch to a near-empty handler,
    /// not the gate ([`fikit_gate::block::Header::ab_floor`]).
    pub gate_ab_floor: bool,
    /// The shim preloaded into every job (`LD_PRELOAD`, before any the
    /// environment has), through which the gate sees launches; `None`: CUPTI.
    pub shim: Option<PathBuf>,
}

/// Serde's test for a count left out of run.json when 0.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One job's measurements in one round.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct JobRun {
    /// Job name.
    pub job: String,
    /// Its exit code (128 + signal when killed); `None` if it never started.
    pub exit_code: Option<i32>,
    /// Spawned, monotonic ns.
    pub spawn_ns: i64,
    /// Exited, monotonic ns.
    pub exit_ns: i64,
    /// First gated kernel launch, monotonic ns (`None`: it launched nothing).
    pub first_launch_ns: Option<i64>,
    /// The later of its last launch and its last blocking synchronization, ns.
    pub end_ns: Option<i64>,
    /// Spans between consecutive stamped blocking synchronizations (those
    /// with a kernel launched since the previous stamp), ns, the first span
    /// (setup) left out: its iterations.
    pub iterations_ns: Vec<i64>,
    /// Kernel launches gated.
    pub launches: u64,
    /// Launches that waited at the gate.
    pub waits: u64,
    /// Time waited at the gate, ns.
    pub wait_ns: u64,
    /// Launches that went as fills (FIKIT).
    pub fills: u64,
    /// Launches that waited while a job above was away and this job's
    /// queue on the GPU was at that job's hold (FIKIT; 0 in runs from
    /// before it was kept).
    #[serde(default)]
    pub held: u64,
    /// Launches marked for completion.
    pub marked: u64,
    /// Launches let go by the gate's timeout.
    pub timeouts: u64,
    /// Launches of kernels its profile does not know (FIKIT).
    pub unknown: u64,
    /// Time its launch calls took from the gate letting them go to their
    /// return, ns, over `launch_calls` calls: the host's speed in the round
    /// (0 in runs from before it was kept).
    #[serde(default)]
    pub launch_call_ns: u64,
    /// Launch calls timed in `launch_call_ns`.
    #[serde(default)]
    pub launch_calls: u64,
    /// The gate's own host time at launch entry, ns, over `gate_calls`
    /// launches (its work before letting a launch go, waits left out; 0 in
    /// runs from before it was kept).
    #[serde(default)]
    pub gate_ns: u64,
    /// Launches timed in `gate_ns`.
    #[serde(default)]
    pub gate_calls: u64,
    /// How its gate saw launches: `cupti` (CUPTI's callbacks) or `preload`
    /// (the preloaded shim); `None` where no gate reported (or before it
    /// was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_path: Option<String>,
    /// Through the shim: launch entry points it could not wrap, whose
    /// launches the gate never saw (0: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub shim_unwrapped: u64,
    /// In a set: the pair whose exclusive round measured this run, where a
    /// later pair reuses it (a job alone is the same run whichever pair it
    /// is in); `None` where it ran in this round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alone_from: Option<String>,
    /// The machine it ran on ([`this_machine`]); empty in runs from before
    /// it was kept. Ratios between runs of different machines compare the
    /// machines too.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
    /// Under `fikit-lab gate-ab`: its iterations with the gate against without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_ab: Option<crate::ab::GateAb>,
    /// What its host thread got from the CPU over its region ([`HostUse`]);
    /// `None` in runs from before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_use: Option<HostUse>,
    /// A serving job's requests' latency, arrival to completion, as its
    /// output's last JSON line gave it ([`request_latency`]); `None` for
    /// other jobs and where the line is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<RequestLatency>,
    /// In a traced round (`--trace`) of several jobs, for the
    /// latency-critical one: its idle GPU time and what the others used of
    /// it, from the round's traces ([`crate::fill`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<crate::fill::LiveFill>,
}

/// A serving job's request latencies, ms (nearest rank over its requests).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct RequestLatency {
    /// Median.
    pub p50_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// 99.9th percentile.
    pub p999_ms: f64,
    /// The share of the requests' span the server was serving one (its
    /// output's `busy_share`), where it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_share: Option<f64>,
}

/// The request latencies in `output`, a serving job's output: its last line
/// that is a JSON object with `latency_ms: {"p50", "p99", "p99.9"}` (ms, as
/// `scripts/workloads/workload.py --rate` prints it); `None` without one.
pub fn request_latency(output: &str) -> Option<RequestLatency> {
    output.lines().rev().find_map(|line| {
        let v: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
        let l = v.get("latency_ms")?;
        let f = |k: &str| l.get(k)?.as_f64().filter(|x| x.is_finite() && *x >= 0.0);
        Some(RequestLatency {
            p50_ms: f("p50")?,
            p99_ms: f("p99")?,
            p999_ms: f("p99.9")?,
            busy_share: v
                .get("busy_share")
                .and_then(serde_json::Value::as_f64)
                .filter(|x| (0.0..=1.0).contains(x)),
        })
    })
}

/// What a job's main thread (the thread that launches, in a PyTorch
/// program) got from the CPU, read from `/proc` while it ran: from its first
/// kernel launch (or, for a job that launched none, its first look) to the
/// last look before it exited, every [`HOST_LOOK_NS`]. A launch-bound job's
/// host speed changes between processes and inside one (the validation
/// log, 2026-11-25): these tell a thread that waited to run (run-queue wait,
/// the machine's stolen time) from one that ran slower (on-CPU time growing
/// with the span).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct HostUse {
    /// Span between the two looks, ns.
    pub span_ns: i64,
    /// The main thread's time on a CPU (`/proc/PID/schedstat`), ns.
    pub on_cpu_ns: i64,
    /// The main thread's time runnable but waiting for a CPU, ns.
    pub run_delay_ns: i64,
    /// Every thread's user and system CPU time (`/proc/PID/stat`), ns.
    pub process_cpu_ns: i64,
    /// Time the hypervisor gave none of the machine's CPUs to it, summed
    /// over CPUs (`/proc/stat`'s steal), ns.
    pub machine_steal_ns: i64,
    /// Whether the span starts at the first kernel launch.
    pub from_first_launch: bool,
}

/// How often a running job's `/proc` is read, ns.
pub const HOST_LOOK_NS: i64 = 50_000_000;

/// One look at a process's CPU use: (on-CPU, run delay, process CPU,
/// machine steal), ns.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Look {
    pid: u32,
    at_ns: i64,
    on_cpu_ns: i64,
    run_delay_ns: i64,
    process_cpu_ns: i64,
    steal_ns: i64,
}

/// Clock ticks (`USER_HZ`) to ns.
fn ticks_ns() -> i64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    1_000_000_000 / if hz > 0 { hz as i64 } else { 100 }
}

/// `/proc/PID/schedstat`: on-CPU and run-queue wait of the main thread, ns.
fn parse_schedstat(text: &str) -> Option<(i64, i64)> {
    let mut f = text.split_whitespace().map(|w| w.parse::<i64>().ok());
    Some((f.next()??, f.next()??))
}

/// `/proc/PID/stat`: utime + stime, ticks (fields 14 and 15, counted after
/// the command name, which may hold spaces and parentheses).
fn parse_stat_cpu(text: &str) -> Option<i64> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After ')': state is field 3, so utime (14) and stime (15) are at 11 and 12.
    Some(f.get(11)?.parse::<i64>().ok()? + f.get(12)?.parse::<i64>().ok()?)
}

/// `/proc/stat`: the machine's steal time, ticks (the `cpu` line's 8th value).
fn parse_steal(text: &str) -> Option<i64> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    line.split_whitespace().nth(8)?.parse().ok()
}

fn look(pid: u32, at_ns: i64) -> Option<Look> {
    let read = |p: String| std::fs::read_to_string(p).ok();
    let (on_cpu_ns, run_delay_ns) = parse_schedstat(&read(format!("/proc/{pid}/schedstat"))?)?;
    let t = ticks_ns();
    Some(Look {
        pid,
        at_ns,
        on_cpu_ns,
        run_delay_ns,
        process_cpu_ns: parse_stat_cpu(&read(format!("/proc/{pid}/stat"))?)? * t,
        steal_ns: read("/proc/stat".into())
            .and_then(|s| parse_steal(&s))
            .unwrap_or(0)
            * t,
    })
}

impl HostUse {
    fn between(a: &Look, b: &Look, from_first_launch: bool) -> HostUse {
        HostUse {
            span_ns: b.at_ns - a.at_ns,
            on_cpu_ns: b.on_cpu_ns - a.on_cpu_ns,
            run_delay_ns: b.run_delay_ns - a.run_delay_ns,
            process_cpu_ns: b.process_cpu_ns - a.process_cpu_ns,
            machine_steal_ns: b.steal_ns - a.steal_ns,
            from_first_launch,
        }
    }
}

/// A running job's first and latest looks.
#[derive(Debug, Default)]
struct Looks {
    first: Option<(Look, bool)>,
    last: Option<Look>,
}

impl Looks {
    /// Takes a look at `pid`; the first counts from the first launch once
    /// there was one (`launched`), replacing an earlier look from before it
    /// or of another process (the job's wrapper before its CUDA process).
    fn take(&mut self, pid: u32, now: i64, launched: bool) {
        let Some(l) = look(pid, now) else { return };
        match self.first {
            Some((f, from)) if f.pid == pid && (from || !launched) => {}
            _ => self.first = Some((l, launched)),
        }
        self.last = Some(l);
    }

    fn host_use(&self) -> Option<HostUse> {
        let ((a, from), b) = (self.first?, self.last?);
        (b.at_ns > a.at_ns).then(|| HostUse::between(&a, &b, from))
    }
}

/// This machine as a run records it: its host name and the first 8
/// characters of its boot id (so a machine started again, or another of the
/// same name, differs).
pub fn this_machine() -> String {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let name = read("/proc/sys/kernel/hostname");
    let boot = read("/proc/sys/kernel/random/boot_id");
    format!("{name} {}", boot.get(..8).unwrap_or(&boot))
}

impl JobRun {
    /// From the first kernel launch to the last launch or synchronization, ns.
    pub fn region_ns(&self) -> Option<i64> {
        Some(self.end_ns? - self.first_launch_ns?)
    }

    /// True when it exited with 0.
    pub fn ok(&self) -> bool {
        self.exit_code == Some(0)
    }

    /// Mean own time of the gate at a launch, µs; `None` with none timed.
    pub fn gate_us(&self) -> Option<f64> {
        (self.gate_calls > 0).then(|| self.gate_ns as f64 / self.gate_calls as f64 / 1e3)
    }

    /// Mean host time of a launch call, µs; `None` with none timed.
    pub fn launch_call_us(&self) -> Option<f64> {
        (self.launch_calls > 0).then(|| self.launch_call_ns as f64 / self.launch_calls as f64 / 1e3)
    }
}

/// One policy's round.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Round {
    /// Policy.
    pub policy: RunPolicy,
    /// Repetition, from 0.
    pub repetition: usize,
    /// Per job, in scenario order.
    pub jobs: Vec<JobRun>,
    /// How a wait older than 1 ms paused between looks at the gate: a sleep
    /// this long, µs (0: a yield; and in rounds of runs before it was kept).
    #[serde(default)]
    pub gate_nap_us: u64,
}

/// Why a round did not finish.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// Stopped by SIGINT or SIGTERM: every job was stopped.
    #[error("interrupted: every job was stopped")]
    Interrupted,
    /// A round ran past its time limit: every job was stopped.
    #[error("{0}")]
    Timeout(String),
    /// A file or process could not be made.
    #[error("{0}")]
    Setup(String),
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    SIGNAL.store(sig, SeqCst);
    INTERRUPTED.store(true, SeqCst);
}

/// Makes SIGINT and SIGTERM stop the run cleanly (jobs stopped, MPS daemon
/// and control files removed) instead of killing fikit-run.
pub fn install_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to atomics (async-signal-safe).
        unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
    }
}

/// The gate policy a run policy uses.
pub fn gate_policy(p: RunPolicy) -> GatePolicy {
    match p {
        RunPolicy::Preemptive => GatePolicy::Preemptive,
        RunPolicy::Fikit => GatePolicy::Fikit,
        _ => GatePolicy::Open,
    }
}

struct Running {
    index: usize,
    child: Child,
    looks: Looks,
}

fn stop_all(running: &mut [Running]) {
    for r in running.iter() {
        // SAFETY: kill with a pid of our own child.
        unsafe { libc::kill(r.child.id() as i32, libc::SIGTERM) };
    }
    let deadline = now_ns() + 3_000_000_000;
    for r in running.iter_mut() {
        while now_ns() < deadline {
            if let Ok(Some(_)) = r.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = r.child.kill();
        let _ = r.child.wait();
    }
}

/// Runs `jobs` (indices into the scenario) together under `policy`, with
/// `tables` (per scenario job; `None` without a profile), in a fresh folder
/// under `work`. Returns the measurements of those jobs.
///
/// By stage: the round's control block (`control_block`) and the jobs'
/// tables and logs; the jobs started, waited for and reaped (`Launch`);
/// then each job's measurements read from the block (`measure`).
pub fn run_round(
    scenario: &Scenario,
    jobs: &[usize],
    policy: RunPolicy,
    repetition: usize,
    tables: &[Option<Table>],
    opts: &ExecOptions,
    work: &Path,
) -> Result<Vec<JobRun>, ExecError> {
    let dir = tempfile::Builder::new()
        .prefix("round-")
        .tempdir_in(work)
        .map_err(|e| setup("cannot make a round folder", &e))?;
    let round = format!("{}-{}", policy.name(), repetition + 1);
    let control = ControlFile::new("fikit-run", &round, &dir.path().join("control"));
    let specs: Vec<&JobSpec> = jobs.iter().map(|&i| &scenario.jobs[i]).collect();
    let block = control_block(&control, &specs, jobs, tables, policy, opts)?;
    let table_paths = write_tables(dir.path(), jobs, tables)?;
    let mps = if policy == RunPolicy::Mps {
        Some(fikit_replay::group::MpsDaemon::start(dir.path()).map_err(|e| setup("MPS", &e))?)
    } else {
        None
    };
    let logs = opts.out_dir.join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| setup(&logs.display().to_string(), &e))?;
    if let (Some(_), Some(td)) = (&opts.profiler, &opts.trace_dir) {
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        let all: Vec<&str> = scenario.jobs.iter().map(|s| s.name.as_str()).collect();
        for (path, job) in clear_round_traces(&td.join(&round), &names, &all)? {
            eprintln!(
                "fikit-run: removed {}: an earlier run's trace of {job} in this round's folder",
                path.display()
            );
        }
    }

    let launch = Launch {
        specs: &specs,
        opts,
        control: control.path(),
        logs: &logs,
        round: &round,
        table_paths: &table_paths,
        mps: mps.as_ref(),
    };
    let mut out = launch.run(&block)?;
    // Traced, the latency-critical job's fill from the round's traces.
    if let (Some(_), Some(td), true) = (&opts.profiler, &opts.trace_dir, specs.len() > 1) {
        let top = (0..specs.len())
            .min_by_key(|&k| (specs[k].priority, k))
            .expect("jobs");
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        out[top].fill = crate::fill::from_traces(&td.join(&round), names[top], &names);
    }
    for (k, o) in out.iter_mut().enumerate() {
        measure(&block, k, o);
        if specs[k].requests.is_some() {
            let log = logs.join(format!("{round}-{}.log", specs[k].name));
            o.requests = std::fs::read_to_string(&log)
                .ok()
                .and_then(|t| request_latency(&t));
        }
    }
    drop(mps);
    Ok(out)
}

/// Removes the traces an earlier run of this round left in its trace folder
/// (a set resumed after an interrupted pair, or an earlier `fikit-run` into
/// the same `--trace` folder): the Parquet files whose job is one of
/// `round_jobs`, so that the round's figures and a reader of the folder see
/// this run's traces only; returns them. A trace's job is the one its
/// metadata names; for a file whose metadata cannot be read (a run cut while
/// writing), the job among `all_jobs` whose file stem
/// ([`fikit_trace::build::file_stem`]) names it, `STEM-PID[-N]`, the longest
/// such stem where several do.
fn clear_round_traces(
    dir: &Path,
    round_jobs: &[&str],
    all_jobs: &[&str],
) -> Result<Vec<(PathBuf, String)>, ExecError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut removed = Vec::new();
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    paths.sort();
    for path in paths {
        let owner = match fikit_trace::read_metadata(&path) {
            Ok(md) => Some(md.job_name),
            Err(_) => job_of_file_name(&path, all_jobs).map(str::to_string),
        };
        if let Some(job) = owner.filter(|j| round_jobs.contains(&j.as_str())) {
            std::fs::remove_file(&path).map_err(|e| setup(&path.display().to_string(), &e))?;
            removed.push((path, job));
        }
    }
    Ok(removed)
}

/// The job among `jobs` whose trace `path` is by its name alone,
/// `STEM-PID.parquet` or `STEM-PID-N.parquet`: the longest matching stem.
fn job_of_file_name<'a>(path: &Path, jobs: &[&'a str]) -> Option<&'a str> {
    let stem = path.file_name()?.to_str()?.strip_suffix(".parquet")?;
    let numeric = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    jobs.iter()
        .map(|&job| (job, fikit_trace::build::file_stem(job)))
        .filter(|(_, fs)| {
            stem.strip_prefix(fs.as_str())
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|rest| {
                    let mut parts = rest.split('-');
                    parts.next().is_some_and(numeric)
                        && parts.next().is_none_or(numeric)
                        && parts.next().is_none()
                })
        })
        .max_by_key(|(_, fs)| fs.len())
        .map(|(job, _)| job)
}

/// A round that could not be set up: `what`, and why.
fn setup(what: &str, e: &dyn std::fmt::Display) -> ExecError {
    ExecError::Setup(format!("{what}: {e}"))
}

/// The round's control block at `control`, one slot per job of `specs`
/// (`jobs`' scenario indices), set for `policy`: the gate's timeout, the
/// start barrier, the A/B, each job's priority and, under FIKIT, the
/// shortest kernel a filler has (from `tables`).
fn control_block(
    control: &ControlFile,
    specs: &[&JobSpec],
    jobs: &[usize],
    tables: &[Option<Table>],
    policy: RunPolicy,
    opts: &ExecOptions,
) -> Result<Block, ExecError> {
    let gp = gate_policy(policy);
    let block =
        Block::create(control.path(), jobs.len(), gp).map_err(|e| setup("control block", &e))?;
    block
        .header()
        .timeout_ms
        .store(opts.gate_timeout_ms, SeqCst);
    // Jobs started together line up their first kernel launches (the start
    // barrier), unless the scenario staggers them on purpose.
    if specs.len() > 1 && specs.iter().all(|s| s.start.is_none()) {
        block.header().align.store(1, SeqCst);
    }
    block.header().ab_period_ms.store(opts.gate_ab_ms, SeqCst);
    block
        .header()
        .ab_floor
        .store(u32::from(opts.gate_ab_floor), SeqCst);
    for (k, s) in specs.iter().enumerate() {
        block.slot(k).priority.store(u32::from(s.priority), SeqCst);
        block
            .slot(k)
            .serving
            .store(u32::from(s.requests.is_some()), SeqCst);
    }
    if gp == GatePolicy::Fikit {
        // Under FIKIT the top job marks a launch only where some filler's shortest kernel fits.
        let top = (0..specs.len())
            .min_by_key(|&k| (specs[k].priority, k))
            .unwrap_or(0);
        let min_fill = (0..specs.len())
            .filter(|&k| k != top)
            .filter_map(|k| tables[jobs[k]].as_ref().map(Table::shortest_ns))
            .min()
            .unwrap_or(i64::MAX);
        block.header().min_fill_ns.store(min_fill, SeqCst);
    }
    Ok(block)
}

/// Writes each of `jobs`' tables (from `tables`, by scenario index) into
/// `dir` as `job<k>.table`; per job, its file (`None` without a profile).
fn write_tables(
    dir: &Path,
    jobs: &[usize],
    tables: &[Option<Table>],
) -> Result<Vec<Option<PathBuf>>, ExecError> {
    let mut table_paths = Vec::new();
    for (k, &i) in jobs.iter().enumerate() {
        let p = dir.join(format!("job{k}.table"));
        if let Some(t) = &tables[i] {
            std::fs::write(&p, t.to_text()).map_err(|e| setup(&p.display().to_string(), &e))?;
            table_paths.push(Some(p));
        } else {
            table_paths.push(None);
        }
    }
    Ok(table_paths)
}

/// What starting the round's jobs needs.
struct Launch<'a> {
    /// The jobs, in slot order.
    specs: &'a [&'a JobSpec],
    /// How rounds are run.
    opts: &'a ExecOptions,
    /// The control block's file.
    control: &'a Path,
    /// Where the jobs' output goes.
    logs: &'a Path,
    /// The round's name, `<policy>-<rep>`.
    round: &'a str,
    /// Per job, its table's file.
    table_paths: &'a [Option<PathBuf>],
    /// The round's MPS daemon (under `mps`).
    mps: Option<&'a fikit_replay::group::MpsDaemon>,
}

impl Launch<'_> {
    /// Starts each job when it is due, looks at the running ones' host use
    /// and reaps those that exit, until every job has run; stops them all
    /// on SIGINT, SIGTERM or the round's time limit. Returns each job's
    /// spawn, exit and host use.
    fn run(&self, block: &Block) -> Result<Vec<JobRun>, ExecError> {
        let host = this_machine();
        let mut out: Vec<JobRun> = self
            .specs
            .iter()
            .map(|s| JobRun {
                job: s.name.clone(),
                host: host.clone(),
                ..JobRun::default()
            })
            .collect();
        let mut started = vec![false; self.specs.len()];
        let mut running: Vec<Running> = Vec::new();
        let t0 = now_ns();
        let mut last_look = t0 - HOST_LOOK_NS;
        loop {
            let now = self.go_on(block, &mut running, t0)?;
            for k in 0..self.specs.len() {
                if started[k] || !self.ready(block, k, now) {
                    continue;
                }
                self.spawn(block, k, &mut out[k], &mut running)?;
                started[k] = true;
            }
            if now - last_look >= HOST_LOOK_NS {
                last_look = now;
                look_at_hosts(block, &mut running, now);
            }
            reap(block, &mut running, &mut out)?;
            if running.is_empty() && started.iter().all(|&s| s) {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(out)
    }

    /// Whether the round goes on: on SIGINT or SIGTERM, or past the
    /// round's time limit (from `t0`), aborts the block and stops every
    /// job. Returns the time now.
    fn go_on(&self, block: &Block, running: &mut [Running], t0: i64) -> Result<i64, ExecError> {
        if INTERRUPTED.load(SeqCst) {
            block.header().abort.store(1, SeqCst);
            stop_all(running);
            return Err(ExecError::Interrupted);
        }
        let now = now_ns();
        let limit_ns = i64::try_from(self.opts.round_timeout_s)
            .unwrap_or(i64::MAX)
            .saturating_mul(1_000_000_000);
        if now - t0 > limit_ns {
            block.header().abort.store(1, SeqCst);
            stop_all(running);
            return Err(ExecError::Timeout(format!(
                "{}: still running after {} s (--round-timeout); every job was stopped",
                self.round, self.opts.round_timeout_s
            )));
        }
        Ok(now)
    }

    /// Whether job `k` is due at `now`: at once, or its `start.delay_s`
    /// after the job it starts after first launched (at once if that one
    /// exited or is not in this round).
    fn ready(&self, block: &Block, k: usize, now: i64) -> bool {
        match &self.specs[k].start {
            None => true,
            Some(st) => match self.specs.iter().position(|o| o.name == st.after) {
                // Not in this round (exclusive runs jobs alone): at once.
                None => true,
                Some(a) => {
                    let first = block.slot(a).first_launch_ns.load(SeqCst);
                    let gone = block.slot(a).state.load(SeqCst) == state::EXITED;
                    gone || (first != 0 && now >= first + (st.delay_s * 1e9) as i64)
                }
            },
        }
    }

    /// Starts job `k`, its slot running and its spawn time in `out`; on
    /// failure, its slot exited and every running job stopped.
    fn spawn(
        &self,
        block: &Block,
        k: usize,
        out: &mut JobRun,
        running: &mut Vec<Running>,
    ) -> Result<(), ExecError> {
        let (mut cmd, program) = self.command(k)?;
        block.slot(k).state.store(state::RUNNING, SeqCst);
        out.spawn_ns = now_ns();
        match cmd.spawn() {
            Ok(child) => running.push(Running {
                index: k,
                child,
                looks: Looks::default(),
            }),
            Err(e) => {
                block.slot(k).state.store(state::EXITED, SeqCst);
                stop_all(running);
                return Err(setup(
                    &format!("cannot start job {} ({program})", self.specs[k].name),
                    &e,
                ));
            }
        }
        Ok(())
    }

    /// Job `k`'s command (under `--trace`, through fikit-profile), its
    /// output into its log, the collector injected and its gate slot
    /// named; and the program it runs.
    fn command(&self, k: usize) -> Result<(Command, String), ExecError> {
        let s = self.specs[k];
        let log = self.logs.join(format!("{}-{}.log", self.round, s.name));
        let f = std::fs::File::create(&log).map_err(|e| setup(&log.display().to_string(), &e))?;
        let f2 = f
            .try_clone()
            .map_err(|e| setup(&log.display().to_string(), &e))?;
        let opts = self.opts;
        let mut argv: Vec<String> = Vec::new();
        if let (Some(prof), Some(td)) = (&opts.profiler, &opts.trace_dir) {
            argv.push(prof.display().to_string());
            argv.extend([
                "--name".to_string(),
                s.name.clone(),
                "--priority".into(),
                s.priority.to_string(),
                "-o".into(),
                td.join(self.round).display().to_string(),
                // The round's one run: no untraced runs after it.
                "--single-run".into(),
                "--".into(),
            ]);
        }
        argv.extend(s.command.iter().cloned());
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(f)
            .stderr(f2)
            .env(CUDA_INJECTION_ENV, &opts.collector)
            .env(GATE_ENV, self.control)
            .env(GATE_JOB_ENV, k.to_string())
            .env(GATE_NAP_US_ENV, opts.gate_nap_us.to_string());
        if let Some(shim) = &opts.shim {
            cmd.env("LD_PRELOAD", fikit_protocol::preload_first(shim));
        }
        if let Some(t) = &self.table_paths[k] {
            cmd.env(GATE_TABLE_ENV, t);
        }
        if let Some(m) = self.mps {
            cmd.envs(m.env().iter().map(|(k, v)| (k, v)));
        }
        let program = argv[0].clone();
        Ok((cmd, program))
    }
}

/// Takes a look at each running job's host use at `now`.
fn look_at_hosts(block: &Block, running: &mut [Running], now: i64) {
    for r in running.iter_mut() {
        // The job's CUDA process (under --trace, fikit-profile's child), else its own.
        let slot = block.slot(r.index);
        let pid = match slot.pid.load(SeqCst) {
            0 => r.child.id(),
            p => p,
        };
        r.looks
            .take(pid, now, slot.first_launch_ns.load(SeqCst) != 0);
    }
}

/// Reaps the running jobs that exited: each one's slot exited, and its
/// exit time, code and host use into `out`.
fn reap(block: &Block, running: &mut Vec<Running>, out: &mut [JobRun]) -> Result<(), ExecError> {
    let mut i = 0;
    while i < running.len() {
        match running[i].child.try_wait() {
            Ok(Some(status)) => {
                let r = running.swap_remove(i);
                let k = r.index;
                // It holds nothing from now on: its in-flight count no longer blocks anyone.
                block.slot(k).state.store(state::EXITED, SeqCst);
                out[k].exit_ns = now_ns();
                out[k].exit_code = Some(fikit_protocol::exit_code(status));
                out[k].host_use = r.looks.host_use();
            }
            Ok(None) => i += 1,
            Err(e) => return Err(setup("waiting for a job", &e)),
        }
    }
    Ok(())
}

/// Reads job `k`'s counters and stamps from the block.
fn measure(block: &Block, k: usize, o: &mut JobRun) {
    let s = block.slot(k);
    let m = block.measured(k);
    o.first_launch_ns = m.first_launch_ns;
    o.end_ns = m.end_ns;
    o.iterations_ns = m.iterations_ns;
    let n = (s.syncs.load(SeqCst) as usize).min(STAMPS);
    let stamps: Vec<i64> = block.stamps(k)[..n]
        .iter()
        .map(|w| w.load(SeqCst))
        .collect();
    let ab_period = block.header().ab_period_ms.load(SeqCst);
    let ab_start = s.ab_start_ns.load(SeqCst);
    if ab_period > 0 && ab_start != 0 {
        let flips: Vec<i64> = block.flips().iter().map(|w| w.load(SeqCst)).collect();
        let mut ab = crate::ab::figures(&stamps, ab_start, ab_period, &flips);
        ab.floor = block.header().ab_floor.load(SeqCst) != 0;
        o.gate_ab = Some(ab);
    }
    o.launches = s.launched.load(SeqCst);
    o.waits = s.waits.load(SeqCst);
    o.wait_ns = s.wait_ns.load(SeqCst);
    o.fills = s.fills.load(SeqCst);
    o.held = s.held.load(SeqCst);
    o.marked = s.marked.load(SeqCst);
    o.timeouts = s.timeouts.load(SeqCst);
    o.unknown = s.unknown.load(SeqCst);
    o.launch_call_ns = s.launch_call_ns.load(SeqCst);
    o.launch_calls = s.launch_calls.load(SeqCst);
    o.launch_path = match s.launch_path.load(SeqCst) {
        launch_path::CUPTI => Some("cupti".into()),
        launch_path::SHIM => Some("preload".into()),
        _ => None,
    };
    o.shim_unwrapped = s.shim_unwrapped.load(SeqCst);
    o.gate_ns = s.gate_ns.load(SeqCst);
    o.gate_calls = s.gate_calls.load(SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_latency_is_the_last_json_line_that_has_it() {
        let out = "loading\n{\"latency_ms\": {\"p50\": 1.0, \"p99\": 2.0, \"p99.9\": 3.0}}\n\
                   {\"model\": \"m\", \"latency_ms\": {\"p50\": 4.5, \"p99\": 9.0, \"p99.9\": 12.0}, \"busy_share\": 0.25}\n\
                   bye\n";
        assert_eq!(
            request_latency(out),
            Some(RequestLatency {
                p50_ms: 4.5,
                p99_ms: 9.0,
                p999_ms: 12.0,
                busy_share: Some(0.25),
            })
        );
        assert_eq!(
            request_latency("{\"latency_ms\": {\"p50\": 1, \"p99\": 2, \"p99.9\": 3}}")
                .and_then(|r| r.busy_share),
            None
        );
        // Closed loop (latency_ms null), a missing percentile, none at all.
        assert_eq!(request_latency("{\"latency_ms\": null}\n"), None);
        assert_eq!(
            request_latency("{\"latency_ms\": {\"p50\": 1, \"p99\": 2}}"),
            None
        );
        assert_eq!(
            request_latency("Traceback (most recent call last):\n"),
            None
        );
    }

    #[test]
    fn proc_files_parse() {
        assert_eq!(parse_schedstat("812345 2000 17\n"), Some((812_345, 2_000)));
        assert_eq!(parse_schedstat("oops"), None);
        // A command name with a space and a parenthesis; utime 250, stime 31.
        let stat = "4242 (python3 (x) y) S 1 4242 4242 0 -1 4194304 9 0 0 0 250 31 0 0 20 0 3";
        assert_eq!(parse_stat_cpu(stat), Some(281));
        assert_eq!(parse_stat_cpu("4242 (short) S 1"), None);
        let machine = "cpu  55151 0 12722 78205 745 0 53 52 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n";
        assert_eq!(parse_steal(machine), Some(52));
    }

    #[test]
    fn host_use_counts_from_the_first_launch_once_there_is_one() {
        let at = |at_ns, on_cpu_ns| Look {
            pid: 1,
            at_ns,
            on_cpu_ns,
            run_delay_ns: at_ns / 10,
            process_cpu_ns: 2 * on_cpu_ns,
            steal_ns: 7,
        };
        let mut l = Looks::default();
        assert_eq!(l.host_use(), None);
        l.first = Some((at(100, 10), false));
        l.last = Some(at(100, 10));
        assert_eq!(l.host_use(), None, "one look spans nothing");
        l.last = Some(at(600, 410));
        assert_eq!(
            l.host_use(),
            Some(HostUse {
                span_ns: 500,
                on_cpu_ns: 400,
                run_delay_ns: 50,
                process_cpu_ns: 800,
                machine_steal_ns: 0,
                from_first_launch: false,
            })
        );
        // Looks taken of this very process: the first from before a launch
        // is replaced by the first after one, which then stays.
        let me = std::process::id();
        let mut l = Looks::default();
        l.take(me, 1_000, false);
        assert_eq!(l.first.map(|f| f.1), Some(false));
        l.take(me, 2_000, true);
        assert_eq!(l.first.map(|f| (f.0.at_ns, f.1)), Some((2_000, true)));
        l.take(me, 3_000, true);
        assert_eq!(l.first.map(|f| f.0.at_ns), Some(2_000));
        // A look of another process (here the parent) starts over from it.
        let parent = std::os::unix::process::parent_id();
        let mut o = Looks::default();
        o.take(me, 1_000, false);
        o.take(parent, 2_000, false);
        assert_eq!(o.first.map(|f| (f.0.pid, f.0.at_ns)), Some((parent, 2_000)));
        let u = l.host_use().unwrap();
        assert_eq!((u.span_ns, u.from_first_launch), (1_000, true));
        assert!(u.on_cpu_ns >= 0 && u.run_delay_ns >= 0 && u.process_cpu_ns >= 0);
    }

    #[test]
    fn region_needs_a_launch() {
        let mut j = JobRun::default();
        assert_eq!(j.region_ns(), None);
        j.first_launch_ns = Some(10);
        j.end_ns = Some(110);
        assert_eq!(j.region_ns(), Some(100));
    }

    #[test]
    fn a_rerun_round_clears_only_its_jobs_earlier_traces() {
        use fikit_trace::{fixture, write_trace};
        let d = tempfile::tempdir().unwrap();
        let all = ["a", "a-2", "c d", "other"];
        // Written traces name their job in their metadata, whatever the file
        // is called: a-2's trace is not a's (pid 2, number 1234) and c d's
        // file stem is c_d.
        let traced = [
            ("a-41.parquet", "a"),
            ("a-2-1234.parquet", "a-2"),
            ("c_d-7-2.parquet", "c d"),
            ("other-9.parquet", "other"),
        ];
        for (f, job) in traced {
            write_trace(&d.path().join(f), &fixture::serving(job, 0, 1)).unwrap();
        }
        // Unreadable ones (a run cut while writing) go by their file name,
        // the longest job stem that names them.
        let cut = [
            "a-12.parquet",
            "a-2-99.parquet",
            "a-x.parquet",
            "a-1-2-3.parquet",
        ];
        for f in cut.iter().chain(&["a-12.log", "notes.txt"]) {
            std::fs::write(d.path().join(f), b"x").unwrap();
        }
        let removed = clear_round_traces(d.path(), &["a", "c d"], &all).unwrap();
        let names: Vec<(String, &str)> = removed
            .iter()
            .map(|(p, j)| {
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    j.as_str(),
                )
            })
            .collect();
        assert_eq!(
            names,
            [
                ("a-12.parquet".to_string(), "a"),
                ("a-41.parquet".to_string(), "a"),
                ("c_d-7-2.parquet".to_string(), "c d"),
            ]
        );
        for f in [
            "a-2-1234.parquet",
            "other-9.parquet",
            "a-2-99.parquet",
            "a-x.parquet",
            "a-1-2-3.parquet",
            "a-12.log",
            "notes.txt",
        ] {
            assert!(d.path().join(f).exists(), "{f} removed");
        }
        // A round's first run: no folder yet.
        assert!(
            clear_round_traces(&d.path().join("none"), &["a"], &all)
                .unwrap()
                .is_empty()
        );
    }
}
