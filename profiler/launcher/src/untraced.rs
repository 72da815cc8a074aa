//! The untraced runs: after the traced run, the command again with no
//! recording, only the collector's gate (open: every launch goes at once)
//! seeing its launches through the preloaded launch shim, as `fikit-run`
//! runs a job alone. Each run's region (first kernel launch to the later of
//! its last launch and its last blocking synchronization) and iterations go
//! into the trace's characterization ([`fikit_trace::Characterization`]):
//! tracing slows a program's host, and the simulator sets the host's speed
//! from these (`fikit_sim_core::sim::host`).

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};
use fikit_gate::block::{ControlFile, state};
use fikit_gate::{Block, GatePolicy};
use fikit_protocol::locate::{Located, locate_cupti};
use fikit_protocol::{
    CUDA_INJECTION_ENV, CUPTI_FOUND_ENV, CUPTI_PATH_ENV, GATE_ENV, GATE_JOB_ENV, exit_code,
    find_collector,
};
use fikit_trace::{Characterization, UntracedRun};

use crate::options::Options;

/// How one untraced run ended.
#[derive(Debug)]
pub enum Outcome {
    /// It exited 0 and launched kernels: its figures.
    Measured(UntracedRun),
    /// It exited 0 but launched no kernel the gate saw.
    NoLaunches,
    /// It exited with this code (128 + signal when killed; 126 or 127 when
    /// it could not start).
    Failed(i32),
}

/// Runs the command once untraced, its gate's block in shared memory.
pub fn run_once(opts: &Options, n: usize) -> Result<Outcome> {
    let collector = find_collector().map_err(anyhow::Error::msg)?;
    let dir = tempfile::Builder::new()
        .prefix(".fikit-untraced-")
        .tempdir_in(&opts.out_dir)
        .with_context(|| format!("cannot make a folder in {}", opts.out_dir.display()))?;
    let control = ControlFile::new(
        "fikit-profile",
        &format!("untraced-{n}"),
        &dir.path().join("control"),
    );
    let block = Block::create(control.path(), 1, GatePolicy::Open)
        .map_err(|e| anyhow::anyhow!("the untraced run's control block: {}", e.message))?;
    let mut cmd = Command::new(&opts.command[0]);
    cmd.args(&opts.command[1..])
        .env(CUDA_INJECTION_ENV, &collector)
        .env(GATE_ENV, control.path())
        .env(GATE_JOB_ENV, "0");
    if let Some(shim) = fikit_protocol::shim_beside(&collector) {
        cmd.env("LD_PRELOAD", fikit_protocol::preload_first(&shim));
    }
    let env = |k: &str| std::env::var(k).ok();
    if let Located::Found(c) = locate_cupti(&env, "")
        && std::env::var_os(CUPTI_PATH_ENV).is_none()
    {
        cmd.env(CUPTI_FOUND_ENV, c);
    }
    let ordering = std::sync::atomic::Ordering::SeqCst;
    block.slot(0).state.store(state::RUNNING, ordering);
    // A signal kept from the previous run's descendants is not this run's.
    let _ = crate::signals::take_pending();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            // Like a shell: 127 when the command is missing, 126 when it cannot run.
            let code = if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            };
            return Ok(Outcome::Failed(code));
        }
    };
    crate::signals::forward_to(child.id());
    crate::signals::wait_exited(child.id());
    crate::signals::forward_to_descendants();
    let status = child.wait().context("waiting for the command")?;
    // Processes it left running are waited for (fikit-profile is their
    // subreaper), so that none still runs beside the next run.
    crate::reaper::wait_for_descendants(opts.descendant_grace, &|m: &str| {
        eprintln!("fikit-profile: untraced run {n}: {m}")
    });
    crate::signals::stop();
    block.slot(0).state.store(state::EXITED, ordering);
    let code = exit_code(status);
    if code != 0 {
        return Ok(Outcome::Failed(code));
    }
    if crate::signals::stop_requested() {
        // It may have caught the signal and exited 0 early: not a whole run.
        return Ok(Outcome::Failed(130));
    }
    Ok(outcome(&block.measured(0)))
}

/// A run that exited 0, from what its gate measured: its figures, as the
/// trace's reader accepts them (iterations positive and within the region:
/// a stamp racing the last synchronization's is left out).
fn outcome(m: &fikit_gate::block::Measured) -> Outcome {
    match m.region_ns() {
        Some(region_ns) if region_ns > 0 && m.launches > 0 => Outcome::Measured(UntracedRun {
            region_ns,
            launches: m.launches,
            iterations_ns: m
                .iterations_ns
                .iter()
                .copied()
                .filter(|&d| d > 0 && d <= region_ns)
                .collect(),
            busy_ns: m
                .busy_ns
                .iter()
                .copied()
                .filter(|&d| d > 0 && d <= region_ns)
                .collect(),
        }),
        _ => Outcome::NoLaunches,
    }
}

/// Adds `runs` (on the trace's own GPU) to the trace at `path` as its
/// characterization, written in place (atomically), after the reader's own
/// check; returns the traced run's region ([`traced_region_ns`]).
pub fn add_to_trace(path: &Path, runs: Vec<UntracedRun>) -> Result<Option<i64>> {
    let trace = update_characterization(
        path,
        ("its untraced runs", "the untraced runs' figures"),
        |c| c.untraced_runs = runs,
    )?;
    Ok(traced_region_ns(&trace))
}

/// Adds the pressure pass's figures to the trace at `path` (keeping its
/// untraced runs), written in place, after the reader's own check.
pub fn add_pressure(path: &Path, pass: fikit_trace::pressure::PressurePass) -> Result<()> {
    update_characterization(
        path,
        ("its pressure pass", "the pressure pass's figures"),
        |c| c.pressure = Some(pass),
    )?;
    Ok(())
}

/// Reads the trace at `path`, changes its characterization with `change`
/// (a new one, of the trace's GPU, where it has none; what it holds
/// otherwise is kept), checks it as a reader would and writes the trace in
/// place (atomically); `(what, figures)` name the change and its figures in
/// messages. The trace.
fn update_characterization(
    path: &Path,
    (what, figures): (&str, &str),
    change: impl FnOnce(&mut Characterization),
) -> Result<fikit_trace::Trace> {
    let mut trace = fikit_trace::read_trace(path)
        .with_context(|| format!("reading {} to add {what}", path.display()))?;
    let gpu = trace.meta.device.name.clone();
    let mut c = trace
        .meta
        .characterization
        .take()
        .unwrap_or_else(|| Characterization {
            gpu_name: gpu.clone(),
            ..Default::default()
        });
    change(&mut c);
    c.check(&gpu)
        .map_err(|e| anyhow::anyhow!("{figures}: {e}"))?;
    trace.meta.characterization = Some(c);
    fikit_trace::write_trace(path, &trace)
        .with_context(|| format!("writing {} with {what}", path.display()))?;
    Ok(trace)
}

/// The traced run's region as the gate would measure it, from the trace:
/// its first kernel launch call to the later of its last launch call's
/// return and its last blocking synchronization's end, ns.
pub fn traced_region_ns(trace: &fikit_trace::Trace) -> Option<i64> {
    let launches = trace.kernels.iter().filter_map(|k| k.launch);
    let first = launches.clone().map(|l| l.start_ns).min()?;
    let end = launches
        .map(|l| l.end_ns)
        .chain(trace.syncs.iter().map(|s| s.end_ns))
        .max()?;
    (end > first).then_some(end - first)
}

/// The median of the runs' regions and their range, ms, for the line that
/// reports them.
pub fn regions_line(runs: &[UntracedRun]) -> String {
    let mut r: Vec<f64> = runs.iter().map(|r| r.region_ns as f64 / 1e6).collect();
    r.sort_by(f64::total_cmp);
    match r.as_slice() {
        [] => "none".to_string(),
        [one] => format!("{one:.1} ms"),
        _ => format!(
            "median {:.1} ms [{:.1}-{:.1}]",
            r[r.len() / 2],
            r[0],
            r[r.len() - 1]
        ),
    }
}

/// The runs' busy part of an iteration (each run's median, then their
/// median and range, ms), for the same line: what a server's requests take
/// untraced, its idle left out; `None` where no run measured busy parts.
pub fn busy_line(runs: &[UntracedRun]) -> Option<String> {
    let mut m: Vec<f64> = runs
        .iter()
        .filter(|r| !r.busy_ns.is_empty())
        .map(|r| {
            let mut b = r.busy_ns.clone();
            b.sort_unstable();
            b[b.len() / 2] as f64 / 1e6
        })
        .collect();
    m.sort_by(f64::total_cmp);
    match m.as_slice() {
        [] => None,
        [one] => Some(format!("{one:.2} ms")),
        _ => Some(format!(
            "median {:.2} ms [{:.2}-{:.2}]",
            m[m.len() / 2],
            m[0],
            m[m.len() - 1]
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_without_launches_or_region_is_no_measurement() {
        use fikit_gate::block::Measured;
        assert!(matches!(outcome(&Measured::default()), Outcome::NoLaunches));
        let m = Measured {
            first_launch_ns: Some(100),
            end_ns: Some(1_100),
            // A stamp past the region (a racing synchronization) and a
            // zero span are left out.
            iterations_ns: vec![300, 0, 2_000, 400],
            busy_ns: vec![250, 1_500, 0],
            launches: 7,
        };
        let Outcome::Measured(r) = outcome(&m) else {
            panic!("a measured run")
        };
        assert_eq!(
            (r.region_ns, r.launches, r.iterations_ns, r.busy_ns),
            (1_000, 7, vec![300, 400], vec![250])
        );
        let none = Measured { launches: 0, ..m };
        assert!(matches!(outcome(&none), Outcome::NoLaunches));
    }

    #[test]
    fn regions_are_reported_as_median_and_range() {
        let run = |ms: i64| UntracedRun {
            region_ns: ms * 1_000_000,
            launches: 1,
            iterations_ns: Vec::new(),
            busy_ns: Vec::new(),
        };
        assert_eq!(regions_line(&[]), "none");
        assert_eq!(regions_line(&[run(12)]), "12.0 ms");
        assert_eq!(
            regions_line(&[run(12), run(10), run(15)]),
            "median 12.0 ms [10.0-15.0]"
        );
        // Busy parts: each run's median (2.5, 4 and 3 ms), then theirs.
        assert_eq!(busy_line(&[run(12)]), None);
        let busy = |parts: &[i64]| UntracedRun {
            busy_ns: parts.iter().map(|us| us * 1_000).collect(),
            ..run(12)
        };
        assert_eq!(
            busy_line(&[
                busy(&[2_000, 2_500, 9_000]),
                busy(&[4_000]),
                busy(&[3_000, 3_000])
            ]),
            Some("median 3.00 ms [2.50-4.00]".into())
        );
    }

    #[test]
    fn untraced_runs_are_added_to_the_trace_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("job-1.parquet");
        let trace = fikit_trace::fixture::every_column("job");
        fikit_trace::write_trace(&p, &trace).unwrap();
        let runs = fikit_trace::fixture::characterization("x").untraced_runs;
        add_to_trace(&p, runs.clone()).unwrap();
        // Figures the reader would refuse are not written: the trace stays as it was.
        let bad = vec![UntracedRun {
            region_ns: 10,
            launches: 0,
            iterations_ns: Vec::new(),
            busy_ns: Vec::new(),
        }];
        let e = add_to_trace(&p, bad).unwrap_err();
        assert!(
            format!("{e:#}").contains("untraced_runs[0].launches"),
            "{e:#}"
        );
        let back = fikit_trace::read_trace(&p).unwrap();
        let c = back.meta.characterization.clone().unwrap();
        assert_eq!(
            (c.gpu_name, c.untraced_runs),
            (trace.meta.device.name.clone(), runs)
        );
        // Everything else is as it was.
        assert_eq!(
            fikit_trace::Trace {
                meta: fikit_trace::Metadata {
                    characterization: None,
                    ..back.meta
                },
                ..back
            },
            {
                let mut t = trace;
                t.sort();
                t
            }
        );
    }
}
