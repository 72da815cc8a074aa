//! Running one round: the scenario's commands under one policy, each gated
//! by the collector through a fresh control block, measured from the block.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::atomic::{AtomicBool, AtomicI32};
use std::time::Duration;

use fikit_gate::block::{ControlFile, STAMPS, state};
use fikit_gate::{Block, GatePolicy, Table, now_ns};
use serde::Serialize;

use crate::scenario::{RunPolicy, Scenario};

/// How rounds are run (from the command line).
#[derive(Debug, Clone)]
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
    /// Launches marked for completion.
    pub marked: u64,
    /// Launches let go by the gate's timeout.
    pub timeouts: u64,
    /// Launches of kernels its profile does not know (FIKIT).
    pub unknown: u64,
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
    /// Under `--gate-ab`: its iterations with the gate against without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_ab: Option<crate::ab::GateAb>,
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
pub fn run_round(
    scenario: &Scenario,
    jobs: &[usize],
    policy: RunPolicy,
    repetition: usize,
    tables: &[Option<Table>],
    opts: &ExecOptions,
    work: &Path,
) -> Result<Vec<JobRun>, ExecError> {
    let setup = |what: &str, e: &dyn std::fmt::Display| ExecError::Setup(format!("{what}: {e}"));
    let dir = tempfile::Builder::new()
        .prefix("round-")
        .tempdir_in(work)
        .map_err(|e| setup("cannot make a round folder", &e))?;
    let gp = gate_policy(policy);
    let control = ControlFile::new(
        "fikit-run",
        &format!("{}-{}", policy.name(), repetition + 1),
        &dir.path().join("control"),
    );
    let block =
        Block::create(control.path(), jobs.len(), gp).map_err(|e| setup("control block", &e))?;
    block
        .header()
        .timeout_ms
        .store(opts.gate_timeout_ms, SeqCst);
    let specs: Vec<_> = jobs.iter().map(|&i| &scenario.jobs[i]).collect();
    // Jobs started together line up their first kernel launches (the start
    // barrier), unless the scenario staggers them on purpose.
    if specs.len() > 1 && specs.iter().all(|s| s.start.is_none()) {
        block.header().align.store(1, SeqCst);
    }
    block.header().ab_period_ms.store(opts.gate_ab_ms, SeqCst);
    for (k, s) in specs.iter().enumerate() {
        block.slot(k).priority.store(u32::from(s.priority), SeqCst);
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
    let mut table_paths = Vec::new();
    for (k, &i) in jobs.iter().enumerate() {
        let p = dir.path().join(format!("job{k}.table"));
        if let Some(t) = &tables[i] {
            std::fs::write(&p, t.to_text()).map_err(|e| setup(&p.display().to_string(), &e))?;
            table_paths.push(Some(p));
        } else {
            table_paths.push(None);
        }
    }
    let mps = if policy == RunPolicy::Mps {
        Some(fikit_replay::group::MpsDaemon::start(dir.path()).map_err(|e| setup("MPS", &e))?)
    } else {
        None
    };
    let logs = opts.out_dir.join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| setup(&logs.display().to_string(), &e))?;

    let round = format!("{}-{}", policy.name(), repetition + 1);
    let host = this_machine();
    let mut out: Vec<JobRun> = specs
        .iter()
        .map(|s| JobRun {
            job: s.name.clone(),
            host: host.clone(),
            ..JobRun::default()
        })
        .collect();
    let mut started = vec![false; specs.len()];
    let mut running: Vec<Running> = Vec::new();
    let t0 = now_ns();
    loop {
        if INTERRUPTED.load(SeqCst) {
            block.header().abort.store(1, SeqCst);
            stop_all(&mut running);
            return Err(ExecError::Interrupted);
        }
        let now = now_ns();
        if now - t0 > opts.round_timeout_s as i64 * 1_000_000_000 {
            block.header().abort.store(1, SeqCst);
            stop_all(&mut running);
            return Err(ExecError::Timeout(format!(
                "{round}: still running after {} s (--round-timeout); every job was stopped",
                opts.round_timeout_s
            )));
        }
        for k in 0..specs.len() {
            if started[k] {
                continue;
            }
            let ready = match &specs[k].start {
                None => true,
                Some(st) => match specs.iter().position(|o| o.name == st.after) {
                    // Not in this round (exclusive runs jobs alone): at once.
                    None => true,
                    Some(a) => {
                        let first = block.slot(a).first_launch_ns.load(SeqCst);
                        let gone = block.slot(a).state.load(SeqCst) == state::EXITED;
                        gone || (first != 0 && now >= first + (st.delay_s * 1e9) as i64)
                    }
                },
            };
            if !ready {
                continue;
            }
            let s = specs[k];
            let log = logs.join(format!("{round}-{}.log", s.name));
            let f =
                std::fs::File::create(&log).map_err(|e| setup(&log.display().to_string(), &e))?;
            let f2 = f
                .try_clone()
                .map_err(|e| setup(&log.display().to_string(), &e))?;
            let mut argv: Vec<String> = Vec::new();
            if let (Some(prof), Some(td)) = (&opts.profiler, &opts.trace_dir) {
                argv.push(prof.display().to_string());
                argv.extend([
                    "--name".to_string(),
                    s.name.clone(),
                    "--priority".into(),
                    s.priority.to_string(),
                    "-o".into(),
                    td.join(&round).display().to_string(),
                    "--".into(),
                ]);
            }
            argv.extend(s.command.iter().cloned());
            let mut cmd = Command::new(&argv[0]);
            cmd.args(&argv[1..])
                .stdin(Stdio::null())
                .stdout(f)
                .stderr(f2)
                .env("CUDA_INJECTION64_PATH", &opts.collector)
                .env("FIKIT_GATE", control.path())
                .env("FIKIT_GATE_JOB", k.to_string())
                .env("FIKIT_GATE_NAP_US", opts.gate_nap_us.to_string());
            if let Some(t) = &table_paths[k] {
                cmd.env("FIKIT_GATE_TABLE", t);
            }
            if let Some(m) = &mps {
                cmd.envs(m.env().iter().map(|(k, v)| (k, v)));
            }
            block.slot(k).state.store(state::RUNNING, SeqCst);
            out[k].spawn_ns = now_ns();
            match cmd.spawn() {
                Ok(child) => running.push(Running { index: k, child }),
                Err(e) => {
                    block.slot(k).state.store(state::EXITED, SeqCst);
                    stop_all(&mut running);
                    return Err(setup(
                        &format!("cannot start job {} ({})", s.name, argv[0]),
                        &e,
                    ));
                }
            }
            started[k] = true;
        }
        let mut i = 0;
        while i < running.len() {
            match running[i].child.try_wait() {
                Ok(Some(status)) => {
                    let r = running.swap_remove(i);
                    let k = r.index;
                    // It holds nothing from now on: its in-flight count no longer blocks anyone.
                    block.slot(k).state.store(state::EXITED, SeqCst);
                    out[k].exit_ns = now_ns();
                    out[k].exit_code = Some(fikit_profile::run::exit_code(status));
                }
                Ok(None) => i += 1,
                Err(e) => return Err(setup("waiting for a job", &e)),
            }
        }
        if running.is_empty() && started.iter().all(|&s| s) {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    for (k, o) in out.iter_mut().enumerate() {
        measure(&block, k, o);
    }
    drop(mps);
    Ok(out)
}

/// Reads job `k`'s counters and stamps from the block.
fn measure(block: &Block, k: usize, o: &mut JobRun) {
    let s = block.slot(k);
    let first = s.first_launch_ns.load(SeqCst);
    if first != 0 {
        o.first_launch_ns = Some(first);
        o.end_ns = Some(
            s.last_launch_ns
                .load(SeqCst)
                .max(s.last_sync_ns.load(SeqCst)),
        );
    }
    let n = (s.syncs.load(SeqCst) as usize).min(STAMPS);
    let stamps: Vec<i64> = block.stamps(k)[..n]
        .iter()
        .map(|w| w.load(SeqCst))
        .collect();
    o.iterations_ns = iterations(first, &stamps);
    let ab_period = block.header().ab_period_ms.load(SeqCst);
    let ab_start = s.ab_start_ns.load(SeqCst);
    if ab_period > 0 && ab_start != 0 {
        o.gate_ab = Some(crate::ab::figures(&stamps, ab_start, ab_period));
    }
    o.launches = s.launched.load(SeqCst);
    o.waits = s.waits.load(SeqCst);
    o.wait_ns = s.wait_ns.load(SeqCst);
    o.fills = s.fills.load(SeqCst);
    o.marked = s.marked.load(SeqCst);
    o.timeouts = s.timeouts.load(SeqCst);
    o.unknown = s.unknown.load(SeqCst);
}

/// Iterations from sync stamps: the spans between consecutive stamps after
/// the first kernel launch, the first span (setup) left out, as the
/// simulator leaves out a trace's first iteration.
pub fn iterations(first_launch: i64, stamps: &[i64]) -> Vec<i64> {
    let after: Vec<i64> = stamps
        .iter()
        .copied()
        .filter(|&t| first_launch != 0 && t >= first_launch)
        .collect();
    after.windows(2).skip(1).map(|w| w[1] - w[0]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iterations_skip_setup_and_syncs_before_the_first_launch() {
        // Syncs at 5 (before any launch), 100, 150, 170, 230.
        assert_eq!(iterations(50, &[5, 100, 150, 170, 230]), vec![20, 60]);
        assert!(iterations(0, &[1, 2, 3]).is_empty());
    }

    #[test]
    fn region_needs_a_launch() {
        let mut j = JobRun::default();
        assert_eq!(j.region_ns(), None);
        j.first_launch_ns = Some(10);
        j.end_ns = Some(110);
        assert_eq!(j.region_ns(), Some(100));
    }
}
