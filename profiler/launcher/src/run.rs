//! Running the command under the collector and converting what it recorded.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};
use fikit_protocol::locate::{Located, locate_cupti};
use fikit_protocol::{
    API_ENV, CUDA_INJECTION_ENV, CUPTI_FOUND_ENV, CUPTI_PATH_ENV, JOB_ENV, LAUNCHER_ENV,
    METRICS_ENV, PRIORITY_ENV, SPOOL_DIR_ENV, exit_code, find_collector,
};
use fikit_trace::summary::{render_table, summarize};

use crate::convert::{
    ConvertOptions, file_stem, has_gpu_work, spool_to_trace, start_record, stopped_at_start,
};
use crate::options::Options;

fn say(msg: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "fikit-profile: {msg}");
}

/// Why nothing may be recorded, found before the command runs.
#[derive(Debug, Default)]
struct Preflight {
    collector: Option<PathBuf>,
    cupti: Option<PathBuf>,
    problems: Vec<String>,
}

fn preflight() -> Preflight {
    let mut p = Preflight::default();
    match find_collector() {
        Ok(c) => p.collector = Some(c),
        Err(e) => p.problems.push(e),
    }
    let env = |k: &str| std::env::var(k).ok();
    match locate_cupti(&env, "") {
        Located::Found(f) => p.cupti = Some(f),
        Located::NotFound(tried) => {
            let list: Vec<String> = tried.iter().map(|t| t.display().to_string()).collect();
            p.problems.push(format!(
                "libcupti was not found (set {CUPTI_PATH_ENV}); looked in: {}",
                list.join(", ")
            ));
        }
    }
    p.problems.extend(fikit_protocol::no_gpu_driver());
    p
}

/// The first line: which runs of the command `fikit-profile` makes, and why.
pub fn plan_line(opts: &Options) -> String {
    let mut parts = vec!["once traced (the trace)".to_string()];
    if opts.runs > 0 {
        parts.push(format!(
            "then {} untraced (how fast its host runs when nothing is recorded, which tracing slows; --runs N, --single-run for the traced run only)",
            times(opts.runs)
        ));
    }
    if opts.pressure {
        parts.push(
            "then once beside a victim kernel under MPS (how hard its kernels press on a neighbour; --no-pressure to skip)"
                .to_string(),
        );
    }
    if opts.metrics {
        parts.push("then once for the metrics pass (--metrics)".to_string());
    }
    let total = 1 + opts.runs + usize::from(opts.pressure) + usize::from(opts.metrics);
    if total == 1 {
        "runs the command once, traced (no untraced runs and no pressure pass: fikit-sim will simulate it as traced)"
            .to_string()
    } else {
        format!("runs the command {}: {}", times(total), parts.join(", "))
    }
}

/// `once`, `twice`, `N times`.
fn times(n: usize) -> String {
    match n {
        1 => "once".to_string(),
        2 => "twice".to_string(),
        n => format!("{n} times"),
    }
}

/// Runs the command, converts the spools, prints the summary, then the
/// untraced runs and the metrics pass; returns the exit code.
pub fn profile(opts: &Options) -> Result<i32> {
    say(&plan_line(opts));
    let (code, report) = run_command(opts, false, &Beside::default())?;
    let written = report
        .filter(|r| code == 0 && !r.written.is_empty())
        .map(|r| r.written);
    let Some(written) = written else {
        if opts.runs > 0 || opts.metrics {
            say("no further runs: the command failed or wrote no trace");
        }
        return Ok(code);
    };
    let mut code = untraced_runs(opts, &written)?;
    if opts.pressure {
        if code != 0 || crate::signals::stop_requested() {
            say(
                "the pressure pass did not run: an untraced run failed or fikit-profile was asked to stop",
            );
            return Ok(code);
        }
        code = pressure_pass(opts, &written)?;
    }
    if !opts.metrics {
        return Ok(code);
    }
    if code != 0 || crate::signals::stop_requested() {
        say(
            "the metrics pass did not run: an untraced run failed or fikit-profile was asked to stop",
        );
        return Ok(code);
    }
    metrics_pass(opts, &written)?;
    Ok(code)
}

/// The untraced runs ([`crate::untraced`]), their figures added to the
/// trace in `written` (the traced run's one trace); returns the exit code.
/// A run that fails stops them: the trace keeps the runs before it.
fn untraced_runs(opts: &Options, written: &[PathBuf]) -> Result<i32> {
    untraced_runs_with(opts, written, &mut |n| crate::untraced::run_once(opts, n))
}

/// [`untraced_runs`], each run made by `run_once(n)`.
fn untraced_runs_with(
    opts: &Options,
    written: &[PathBuf],
    run_once: &mut dyn FnMut(usize) -> Result<crate::untraced::Outcome>,
) -> Result<i32> {
    use crate::untraced::{Outcome, add_to_trace, busy_line, regions_line};
    if opts.runs == 0 {
        return Ok(0);
    }
    let [trace] = written else {
        say(&format!(
            "no untraced runs: the command ran {} CUDA processes, and an untraced run measures one; fikit-sim simulates their hosts as traced",
            written.len()
        ));
        return Ok(0);
    };
    let mut runs = Vec::new();
    let mut stopped = None;
    for n in 1..=opts.runs {
        if crate::signals::stop_requested() {
            stopped = Some((
                n,
                130,
                "not started: fikit-profile was asked to stop".to_string(),
            ));
            break;
        }
        say(&format!("untraced run {n} of {}", opts.runs));
        let outcome = run_once(n).unwrap_or_else(|e| {
            say(&format!("untraced run {n}: {e:#}"));
            Outcome::Failed(1)
        });
        match outcome {
            Outcome::Measured(r) => runs.push(r),
            Outcome::NoLaunches => {
                stopped = Some((
                    n,
                    0,
                    "exited 0, but its gate saw no kernel launch (is the collector loaded? see its notes above)".to_string(),
                ));
                break;
            }
            Outcome::Failed(code) => {
                stopped = Some((n, code, format!("exited {code}")));
                break;
            }
        }
    }
    let traced = if runs.is_empty() {
        None
    } else {
        add_to_trace(trace, runs.clone())?
    }
    .map_or(String::new(), |r| {
        format!(" (traced: {:.1} ms)", r as f64 / 1e6)
    });
    if let Some((n, code, what)) = stopped {
        say(&format!(
            "untraced run {n} of {} {what}: no more runs; {} is whole, with {} untraced run{} before it",
            opts.runs,
            trace.display(),
            runs.len(),
            if runs.len() == 1 { "" } else { "s" }
        ));
        return Ok(code);
    }
    let busy = busy_line(&runs).map_or(String::new(), |b| {
        format!("; an iteration's busy part (first launch to its end): {b}")
    });
    say(&format!(
        "untraced runs, first kernel launch to end: {}{traced}{busy}; added to {}",
        regions_line(&runs),
        trace.display()
    ));
    Ok(0)
}

/// The pressure pass ([`crate::pressure`]), its figures added to the trace
/// in `written`; returns the exit code. The trace stays whole whatever
/// happens: a failing run leaves it as it was, and says so.
fn pressure_pass(opts: &Options, written: &[PathBuf]) -> Result<i32> {
    use crate::pressure::Outcome;
    let [trace] = written else {
        say(&format!(
            "no pressure pass: the command ran {} CUDA processes, and the pass measures one; fikit-sim weighs their kernels under MPS as its model does",
            written.len()
        ));
        return Ok(0);
    };
    say(
        "pressure pass: the command once more, under a private MPS daemon beside a latency-bound victim kernel",
    );
    let dir = opts
        .out_dir
        .join(format!(".fikit-pressure-{}", std::process::id()));
    let outcome = crate::pressure::run(opts, &dir);
    if !opts.keep_spools {
        let _ = std::fs::remove_dir_all(&dir);
    }
    match outcome? {
        Outcome::Measured(p) => {
            let slowdown = p
                .slowdown
                .map_or("past any slowdown (it waited for room)".to_string(), |s| {
                    format!("{s:.2}x slower")
                });
            let line = format!(
                "pressure pass: the victim ran {slowdown} while the job's kernels ran ({} runs beside them, {:.0} us alone); added to {}",
                p.runs_steady,
                p.victim_alone_ns / 1e3,
                trace.display()
            );
            crate::untraced::add_pressure(trace, p)?;
            say(&line);
            Ok(0)
        }
        Outcome::Skipped(why) => {
            say(&format!(
                "pressure pass: no figure ({why}); fikit-sim weighs this job's kernels under MPS as its model does"
            ));
            Ok(0)
        }
        Outcome::Failed(code) => {
            say(&format!(
                "pressure pass: the command exited {code} beside the victim; {} is whole, without a pressure figure",
                trace.display()
            ));
            Ok(code)
        }
    }
}

/// The metrics pass: the command again, the collector measuring each kernel
/// key's first launch (`FIKIT_METRICS=1`), its traces in a folder of their
/// own; the figures per key go into `traces` (the first run's), and the
/// pass's own traces are removed.
fn metrics_pass(opts: &Options, traces: &[PathBuf]) -> Result<()> {
    say("metrics pass: running the command again, each kernel key's first launch measured alone");
    let dir = opts
        .out_dir
        .join(format!(".fikit-metrics-{}", std::process::id()));
    let done = run_metrics_pass(opts, &dir, traces);
    if done.is_ok() && !opts.keep_spools {
        let _ = std::fs::remove_dir_all(&dir);
    }
    done
}

/// [`metrics_pass`]'s work, its traces in `dir`.
fn run_metrics_pass(opts: &Options, dir: &Path, traces: &[PathBuf]) -> Result<()> {
    let pass = Options {
        out_dir: dir.to_path_buf(),
        quiet: true,
        ..opts.clone()
    };
    let (code, report) = run_command(&pass, true, &Beside::default())?;
    let measured: Vec<PathBuf> = report.map(|r| r.written).unwrap_or_default();
    let mut metrics = std::collections::BTreeMap::new();
    // Every key the pass's own run launched, measured or not.
    let mut launched = std::collections::BTreeSet::new();
    for t in &measured {
        let trace = fikit_trace::read_trace(t)
            .with_context(|| format!("reading the metrics pass's {}", t.display()))?;
        launched.extend(trace.kernels.iter().map(|k| k.kernel_key));
        for (k, m) in trace.kernel_metrics {
            metrics.entry(k).or_insert(m);
        }
    }
    if code != 0 || metrics.is_empty() {
        say(&format!(
            "metrics pass: nothing measured (the command {}); the traces keep no metrics",
            if code != 0 {
                format!("exited {code} in the pass")
            } else {
                "ran, but no key was measured: see the collector's notes above".to_string()
            }
        ));
        return Ok(());
    }
    let mut profiled = std::collections::BTreeSet::new();
    for t in traces {
        let mut trace = fikit_trace::read_trace(t)
            .with_context(|| format!("reading {} to add its metrics", t.display()))?;
        let keys: std::collections::BTreeSet<u64> =
            trace.kernels.iter().map(|k| k.kernel_key).collect();
        profiled.extend(keys.iter().copied());
        trace.kernel_metrics = metrics
            .iter()
            .filter(|(k, _)| keys.contains(k))
            .map(|(k, m)| (*k, *m))
            .collect();
        fikit_trace::write_trace(t, &trace)
            .with_context(|| format!("writing {} with its metrics", t.display()))?;
        say(&format!(
            "{}: metrics for {} of {} kernel keys",
            t.display(),
            trace.kernel_metrics.len(),
            keys.len()
        ));
    }
    if let Some(line) = pass_gaps(&launched, &metrics, &profiled) {
        say(&line);
    }
    Ok(())
}

/// Why keys may lack figures, when any do: keys the pass's run launched but
/// did not measure (the pass skips some launches: graphs, captures,
/// cooperative kernels, NCCL's), and keys it measured that the profile's
/// traces never ran (the two runs launched different kernels).
fn pass_gaps(
    launched: &std::collections::BTreeSet<u64>,
    measured: &std::collections::BTreeMap<u64, fikit_trace::KernelMetrics>,
    profiled: &std::collections::BTreeSet<u64>,
) -> Option<String> {
    let unmeasured = launched
        .iter()
        .filter(|k| !measured.contains_key(k))
        .count();
    let foreign = measured.keys().filter(|k| !profiled.contains(k)).count();
    (unmeasured + foreign > 0).then(|| {
        format!(
            "metrics pass: {unmeasured} of the {} kernel keys its run launched were not measured (graph, captured, cooperative or NCCL launches are not); {foreign} measured keys are not in the profile's traces (the two runs launched different kernels)",
            launched.len()
        )
    })
}

/// Runs the command once under the collector (`metrics`: in the metrics
/// pass) and converts its spools into traces in `opts.out_dir`: the exit
/// code `fikit-profile` gives, and what was written (`None` when the command
/// could not start or nothing could be converted).
fn run_command(
    opts: &Options,
    metrics: bool,
    beside: &Beside,
) -> Result<(i32, Option<ConvertReport>)> {
    std::fs::create_dir_all(&opts.out_dir)
        .with_context(|| format!("cannot create the output folder {}", opts.out_dir.display()))?;
    let spool_dir = opts
        .out_dir
        .join(format!(".fikit-spool-{}", std::process::id()));
    std::fs::create_dir_all(&spool_dir)
        .with_context(|| format!("cannot create {}", spool_dir.display()))?;
    // Absolute, so a command that changes its working folder before it
    // initializes CUDA still finds the spool folder.
    let spool_dir = spool_dir
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", spool_dir.display()))?;

    let pre = preflight();
    let mut cmd = Command::new(&opts.command[0]);
    cmd.args(&opts.command[1..]);
    if let Some(c) = &pre.collector {
        if std::env::var_os(CUDA_INJECTION_ENV).is_some_and(|v| !v.is_empty()) {
            say(&format!(
                "{CUDA_INJECTION_ENV} was set; it is replaced by the fikit collector"
            ));
        }
        cmd.env(CUDA_INJECTION_ENV, c);
    }
    cmd.env(SPOOL_DIR_ENV, &spool_dir)
        .env(JOB_ENV, &opts.job)
        .env(PRIORITY_ENV, opts.priority.to_string());
    if opts.all_api {
        cmd.env(API_ENV, "all");
    }
    if metrics {
        cmd.env(METRICS_ENV, "1");
    }
    if let Some(c) = &pre.cupti
        && std::env::var_os(CUPTI_PATH_ENV).is_none()
    {
        // The launcher's own find, not the user's choice: a program's own
        // libcupti overrules it without a note.
        cmd.env(CUPTI_FOUND_ENV, c);
    }
    cmd.env(LAUNCHER_ENV, "1");
    cmd.envs(beside.env.iter().map(|(k, v)| (k, v)));

    if let Err(e) = crate::signals::install() {
        say(&format!("signals will not be forwarded: {e}"));
    }
    // Orphaned descendants (daemons, workers that outlive the command) become
    // our children, so they can be waited for before their spools are read.
    let subreaper = crate::reaper::become_subreaper();
    if let Err(e) = &subreaper {
        say(&format!(
            "processes the command leaves running will not be waited for: \
             prctl(PR_SET_CHILD_SUBREAPER) failed: {e}"
        ));
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&spool_dir);
            let prog = PathBuf::from(&opts.command[0]);
            // Like a shell: 127 when the command is missing, 126 when it cannot run.
            let code = if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            };
            say(&format!("cannot run {}: {e}", prog.display()));
            return Ok((code, None));
        }
    };
    crate::signals::forward_to(child.id());
    // Wait for the exit without reaping, stop forwarding to it, then reap: a
    // signal arriving in between can never reach another process that reused
    // the pid. Signals from then on go to the descendants still running.
    crate::signals::wait_exited(child.id());
    crate::signals::forward_to_descendants();
    let status = child.wait().context("waiting for the command")?;
    let code = exit_code(status);
    if subreaper.is_ok() {
        crate::reaper::wait_for_descendants_but(opts.descendant_grace, &say, beside.children);
    }
    crate::signals::stop();

    let converted = convert_dir(&spool_dir, opts, &pre);
    if !opts.keep_spools && converted.as_ref().is_ok_and(|c| c.failures == 0) {
        let _ = std::fs::remove_dir_all(&spool_dir);
    }
    match converted {
        // The command succeeded and the capture failed: not a success.
        Ok(c) if (c.failures > 0 || c.not_recording) && code == 0 => Ok((1, Some(c))),
        Ok(c) => Ok((code, Some(c))),
        Err(e) => {
            say(&format!("{e:#}"));
            Ok((if code == 0 { 1 } else { code }, None))
        }
    }
}

/// What runs beside the command: the environment it gets on top of
/// fikit-profile's, and the children of fikit-profile that are not its
/// (not waited for after it exits).
#[derive(Debug, Default)]
pub struct Beside<'a> {
    /// Added to the command's environment (the MPS daemon's).
    pub env: &'a [(String, PathBuf)],
    /// fikit-profile's own children beside the command (the victim).
    pub children: &'a [u32],
}

/// Runs the command once under the collector with `beside`, its traces in
/// `opts.out_dir`: the exit code and the traces written.
pub fn run_traced(opts: &Options, beside: &Beside) -> Result<(i32, Vec<PathBuf>)> {
    let (code, report) = run_command(opts, false, beside)?;
    Ok((code, report.map(|r| r.written).unwrap_or_default()))
}

/// What the conversion of a spool folder produced.
#[derive(Debug, Default)]
pub struct ConvertReport {
    /// Traces written.
    pub written: Vec<PathBuf>,
    /// Spools that could not be converted.
    pub failures: usize,
    /// Nothing was recorded because recording could not work (no
    /// collector, libcupti or driver found, or the collector stopped at
    /// start-up), not because the command used no GPU.
    pub not_recording: bool,
}

fn spool_files(dir: &Path) -> Result<Vec<PathBuf>> {
    files_with_extension(dir, "spool").with_context(|| format!("cannot list {}", dir.display()))
}

/// The files in `dir` whose extension is `ext`, sorted.
pub(crate) fn files_with_extension(dir: &Path, ext: &str) -> std::io::Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    Ok(v)
}

fn convert_dir(spool_dir: &Path, opts: &Options, pre: &Preflight) -> Result<ConvertReport> {
    let mut report = ConvertReport::default();
    let spools = spool_files(spool_dir)?;
    let mut summaries = Vec::new();
    let mut said = std::collections::HashSet::new();
    let mut stopped_processes = 0;
    for path in &spools {
        let spool = match fikit_spool::read_spool(path) {
            Ok(s) => s,
            Err(e) => {
                say(&format!("{}: {e}", path.display()));
                report.failures += 1;
                continue;
            }
        };
        if !has_gpu_work(&spool) {
            let pid = start_record(&spool)
                .map(|s| s.pid.to_string())
                .unwrap_or_else(|| "?".into());
            if stopped_at_start(&spool).is_some() {
                stopped_processes += 1;
                say(&format!(
                    "process {pid}: the collector stopped at start-up and recorded nothing \
                     (why below); the process ran untraced; no trace written"
                ));
            } else {
                say(&format!(
                    "process {pid} initialized CUDA but ran no GPU work; no trace written"
                ));
            }
            for r in &spool.records {
                if let fikit_spool::Record::Note { text } = r {
                    let n = format!("collector: {text}");
                    if said.insert(n.clone()) {
                        say(&n);
                    }
                }
            }
            continue;
        }
        let copts = ConvertOptions {
            job: Some(opts.job.clone()),
            priority: Some(opts.priority),
            producer: format!("fikit-profile {}", env!("CARGO_PKG_VERSION")),
        };
        let converted = match spool_to_trace(&spool, &copts) {
            Ok(c) => c,
            Err(e) => {
                say(&format!("{}: {e}", path.display()));
                report.failures += 1;
                continue;
            }
        };
        let out = unused_path(
            &opts.out_dir,
            &format!("{}-{}", file_stem(&opts.job), converted.trace.meta.pid),
        );
        for n in &converted.notes {
            // The collector's notes (which libcupti, say) are the same for
            // every process of one command: said once, for the first.
            if n.starts_with("collector: ") && !said.insert(n.clone()) {
                continue;
            }
            say(&format!("{}: {n}", out.display()));
        }
        if let Err(e) = fikit_trace::write_trace(&out, &converted.trace) {
            say(&format!("cannot write {}: {e}", out.display()));
            report.failures += 1;
            continue;
        }
        summaries.push(summarize(&converted.trace, &out.display().to_string(), 10));
        report.written.push(out);
    }
    if spools.is_empty() || (report.written.is_empty() && report.failures == 0) {
        if spools.is_empty() && !pre.problems.is_empty() {
            report.not_recording = true;
            say("nothing was recorded:");
            for p in &pre.problems {
                say(&format!("  {p}"));
            }
        } else if stopped_processes > 0 {
            report.not_recording = true;
            say(&format!(
                "nothing was recorded: the collector stopped at start-up in {stopped_processes} \
                 process(es) (see above), so whether the command used the GPU is unknown"
            ));
        } else {
            say("no CUDA activity: the command ran no GPU work; no trace written");
        }
        return Ok(report);
    }
    if !opts.quiet && !summaries.is_empty() {
        // A closed stdout (`| head`) must not turn a finished capture into a panic.
        use std::io::Write;
        let _ = writeln!(std::io::stdout(), "{}", render_table(&summaries));
    }
    for w in &report.written {
        say(&format!("wrote {}", w.display()));
    }
    Ok(report)
}

/// Converts the spools in `spool_dir` as `fikit-profile` does after a run
/// (for spools kept with `--keep-spools`, or written by a collector injected by hand).
pub fn convert_spools(spool_dir: &Path, opts: &Options) -> Result<ConvertReport> {
    let pre = Preflight::default();
    convert_dir(spool_dir, opts, &pre)
}

/// The command line as one string, for messages.
pub fn display_command(cmd: &[OsString]) -> String {
    cmd.iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `DIR/BASE.parquet`, or `DIR/BASE-2.parquet`, `-3`, … when that exists: a
/// trace never replaces another (a process that execs keeps its pid; pids are
/// reused across runs that share an output folder).
fn unused_path(dir: &Path, base: &str) -> PathBuf {
    (1u32..)
        .map(|n| match n {
            1 => dir.join(format!("{base}.parquet")),
            n => dir.join(format!("{base}-{n}.parquet")),
        })
        .find(|p| !p.exists())
        .expect("some numbered name is free")
}

#[cfg(test)]
mod naming {
    use super::unused_path;

    #[test]
    fn a_trace_never_replaces_another() {
        let dir = tempfile::tempdir().unwrap();
        let first = unused_path(dir.path(), "job-42");
        assert_eq!(first, dir.path().join("job-42.parquet"));
        std::fs::write(&first, b"x").unwrap();
        let second = unused_path(dir.path(), "job-42");
        assert_eq!(second, dir.path().join("job-42-2.parquet"));
        std::fs::write(&second, b"x").unwrap();
        assert_eq!(
            unused_path(dir.path(), "job-42"),
            dir.path().join("job-42-3.parquet")
        );
    }
}

#[cfg(test)]
mod untraced {
    use super::*;
    use crate::untraced::Outcome;
    use fikit_trace::UntracedRun;

    fn opts(runs: usize) -> Options {
        Options {
            job: "job".into(),
            priority: 9,
            out_dir: PathBuf::from("."),
            all_api: false,
            keep_spools: false,
            quiet: true,
            metrics: false,
            runs,
            pressure: false,
            descendant_grace: std::time::Duration::ZERO,
            command: vec!["true".into()],
        }
    }

    fn run(ms: i64) -> UntracedRun {
        UntracedRun {
            region_ns: ms * 1_000_000,
            launches: 10,
            iterations_ns: vec![1_000_000],
            busy_ns: Vec::new(),
        }
    }

    #[test]
    fn a_failing_later_run_keeps_the_trace_and_the_runs_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("job-1.parquet");
        let trace = fikit_trace::fixture::every_column("job");
        fikit_trace::write_trace(&p, &trace).unwrap();
        // Runs 1 and 2 measured, run 3 exits 3: two runs kept, exit 3, run 4 never made.
        let mut made = Vec::new();
        let code = untraced_runs_with(&opts(4), std::slice::from_ref(&p), &mut |n| {
            made.push(n);
            Ok(match n {
                1 => Outcome::Measured(run(12)),
                2 => Outcome::Measured(run(10)),
                _ => Outcome::Failed(3),
            })
        })
        .unwrap();
        assert_eq!((code, made), (3, vec![1, 2, 3]));
        let back = fikit_trace::read_trace(&p).unwrap();
        assert_eq!(back.kernels.len(), trace.kernels.len());
        let c = back.meta.characterization.unwrap();
        assert_eq!(c.untraced_runs, vec![run(12), run(10)]);
        // The first run failing: the trace stays as it was, without a characterization.
        let q = dir.path().join("job-2.parquet");
        fikit_trace::write_trace(&q, &trace).unwrap();
        let code = untraced_runs_with(&opts(3), std::slice::from_ref(&q), &mut |_| {
            Ok(Outcome::Failed(130))
        })
        .unwrap();
        assert_eq!(code, 130);
        assert_eq!(
            fikit_trace::read_trace(&q).unwrap().meta.characterization,
            None
        );
        // All runs measured: all kept, exit 0.
        let code = untraced_runs_with(&opts(3), std::slice::from_ref(&q), &mut |n| {
            Ok(Outcome::Measured(run(10 + n as i64)))
        })
        .unwrap();
        assert_eq!(code, 0);
        let c = fikit_trace::read_trace(&q)
            .unwrap()
            .meta
            .characterization
            .unwrap();
        assert_eq!(c.untraced_runs, vec![run(11), run(12), run(13)]);
    }

    #[test]
    fn a_run_that_launched_nothing_stops_the_runs_with_exit_0() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("job-1.parquet");
        fikit_trace::write_trace(&p, &fikit_trace::fixture::every_column("job")).unwrap();
        let code = untraced_runs_with(&opts(3), std::slice::from_ref(&p), &mut |n| {
            Ok(if n == 1 {
                Outcome::Measured(run(12))
            } else {
                Outcome::NoLaunches
            })
        })
        .unwrap();
        assert_eq!(code, 0);
        let c = fikit_trace::read_trace(&p)
            .unwrap()
            .meta
            .characterization
            .unwrap();
        assert_eq!(c.untraced_runs, vec![run(12)]);
        // A run that could not be made (an error) counts as failed: the runs before it are kept.
        let code = untraced_runs_with(&opts(3), std::slice::from_ref(&p), &mut |n| {
            if n == 1 {
                Ok(Outcome::Measured(run(11)))
            } else {
                Err(anyhow::anyhow!("no control block"))
            }
        })
        .unwrap();
        assert_eq!(code, 1);
        let c = fikit_trace::read_trace(&p)
            .unwrap()
            .meta
            .characterization
            .unwrap();
        assert_eq!(c.untraced_runs, vec![run(11)]);
    }

    #[test]
    fn no_untraced_runs_for_several_processes_or_none_asked() {
        let mut never = |_: usize| -> Result<Outcome> { panic!("no run is made") };
        let two = [PathBuf::from("a.parquet"), PathBuf::from("b.parquet")];
        assert_eq!(untraced_runs_with(&opts(3), &two, &mut never).unwrap(), 0);
        assert_eq!(
            untraced_runs_with(&opts(0), &two[..1], &mut never).unwrap(),
            0
        );
    }

    #[test]
    fn the_first_line_says_which_runs_and_why() {
        assert!(plan_line(&opts(3)).starts_with(
            "runs the command 4 times: once traced (the trace), then 3 times untraced (how fast its host runs"
        ));
        assert_eq!(
            plan_line(&opts(0)),
            "runs the command once, traced (no untraced runs and no pressure pass: fikit-sim will simulate it as traced)"
        );
        let metrics = Options {
            metrics: true,
            ..opts(1)
        };
        assert!(
            plan_line(&metrics).starts_with(
                "runs the command 3 times: once traced (the trace), then once untraced"
            )
        );
        assert!(plan_line(&metrics).ends_with(", then once for the metrics pass (--metrics)"));
        let all = Options {
            pressure: true,
            ..opts(3)
        };
        assert!(plan_line(&all).starts_with("runs the command 5 times: once traced"));
        assert!(
            plan_line(&all).contains(
                "then once beside a victim kernel under MPS (how hard its kernels press on a neighbour; --no-pressure to skip)"
            ),
            "{}",
            plan_line(&all)
        );
    }
}

#[cfg(test)]
mod pass_gaps {
    use super::pass_gaps;

    #[test]
    fn the_pass_says_which_keys_lack_figures_and_why() {
        let m = fikit_trace::KernelMetrics {
            dram_read_bytes: 1,
            dram_write_bytes: 1,
            sm_issue_bp: None,
            l2_bytes: None,
        };
        let launched = [1u64, 2, 3].into_iter().collect();
        let profiled = [1u64, 2, 3].into_iter().collect();
        // Every key measured, all of them the profile's: nothing to say.
        let all = [(1u64, m), (2, m), (3, m)].into_iter().collect();
        assert_eq!(pass_gaps(&launched, &all, &profiled), None);
        // Keys 2 and 3 launched but not measured; key 1 measured, but the
        // profile ran 2, 3 and 4 only.
        let one = [(1u64, m)].into_iter().collect();
        let profiled = [2u64, 3, 4].into_iter().collect();
        let line = pass_gaps(&launched, &one, &profiled).unwrap();
        assert!(
            line.starts_with(
                "metrics pass: 2 of the 3 kernel keys its run launched were not measured"
            ) && line.contains("; 1 measured keys are not in the profile's traces"),
            "{line}"
        );
    }
}
