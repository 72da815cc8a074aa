//! The pressure pass: the command once more, under a private MPS daemon,
//! beside a latency-bound victim (calibrate's pointer chase,
//! [`fikit_device::victim`]), both recorded; how much slower the victim ran
//! while the job's kernels ran ([`fikit_trace::pressure::measure`]) goes
//! into the trace's characterization, from which fikit-sim weighs the job's
//! kernels under MPS.
//!
//! The victim is this program again: a nested `fikit-profile --single-run`
//! (its own collector, spool and trace) of `fikit-profile __victim STOP
//! READY`, which runs the victim until the file STOP exists and creates
//! READY once it has run alone a while. The launcher and the victim talk
//! only through those two files.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use fikit_device::mps::MpsDaemon;
use fikit_trace::pressure::{PressurePass, measure};

use crate::options::Options;

/// The first argument that makes `fikit-profile` the victim.
pub const VICTIM_ARG: &str = "__victim";

/// Victim runs before it says it is ready: its runs alone, before the job
/// starts (about 0.45 ms each on Hopper; the measurement needs 10).
const RUNS_BEFORE_READY: u64 = 200;

/// How long the victim may take to start (NVRTC compiles its kernel).
const READY_WITHIN: Duration = Duration::from_secs(60);

/// What the pass gave.
#[derive(Debug)]
pub enum Outcome {
    /// The figures.
    Measured(PressurePass),
    /// No figures, and why (the trace keeps none; the exit code stays 0).
    Skipped(String),
    /// The command failed beside the victim, with this exit code.
    Failed(i32),
}

/// Runs the pass in `dir` (made here; the caller removes it).
pub fn run(opts: &Options, dir: &Path) -> Result<Outcome> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let dir = dir
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", dir.display()))?;
    let daemon = match MpsDaemon::start(&dir.join("mps")) {
        Ok(d) => d,
        Err(e) => return Ok(Outcome::Skipped(format!("{e}"))),
    };
    let me = std::env::current_exe().context("finding fikit-profile itself")?;
    let (stop, ready) = (dir.join("victim.stop"), dir.join("victim.ready"));
    let victim_log = dir.join("victim.log");
    let mut victim = Command::new(&me)
        .args(["--single-run", "-q", "--name", "victim", "-o"])
        .arg(dir.join("victim"))
        .arg("--")
        .arg(&me)
        .arg(VICTIM_ARG)
        .arg(&stop)
        .arg(&ready)
        .envs(daemon.env().iter().map(|(k, v)| (k, v)))
        .env(
            "LD_LIBRARY_PATH",
            nvrtc_path(std::env::var_os("LD_LIBRARY_PATH")),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&victim_log).context("the victim's log")?)
        .spawn()
        .context("starting the victim")?;
    let t0 = Instant::now();
    while !ready.exists() {
        if let Some(status) = victim.try_wait().context("waiting for the victim")? {
            return Ok(Outcome::Skipped(format!(
                "the victim exited ({status}) before it ran: {}",
                last_line(&victim_log)
            )));
        }
        if t0.elapsed() > READY_WITHIN || crate::signals::stop_requested() {
            let _ = std::fs::write(&stop, b"");
            let _ = victim.kill();
            let _ = victim.wait();
            return Ok(Outcome::Skipped(format!(
                "the victim did not start within {} s: {}",
                READY_WITHIN.as_secs(),
                last_line(&victim_log)
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let pass = Options {
        out_dir: dir.join("job"),
        quiet: true,
        ..opts.clone()
    };
    // Not the command's: the victim's launcher, and the MPS daemon and
    // server (daemons: with fikit-profile a subreaper, they are its
    // children).
    let beside = crate::reaper::children_now();
    let job = crate::run::run_traced(
        &pass,
        &crate::run::Beside {
            env: daemon.env(),
            children: &beside,
        },
    );
    let _ = std::fs::write(&stop, b"");
    // An error here: the victim's launcher was reaped as one of the
    // command's exited processes (it failed early).
    let victim_ok = victim.wait().is_ok_and(|s| s.success());
    drop(daemon);
    let (code, written) = job?;
    if code != 0 {
        return Ok(Outcome::Failed(code));
    }
    let [job_trace] = written.as_slice() else {
        return Ok(Outcome::Skipped(format!(
            "the command ran {} CUDA processes beside the victim; the pass measures one",
            written.len()
        )));
    };
    let victim_dir = dir.join("victim");
    let victim_traces = match crate::run::files_with_extension(&victim_dir, "parquet") {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        r => r.with_context(|| format!("listing {}", victim_dir.display()))?,
    };
    let victim_trace = match (victim_ok, victim_traces) {
        (true, v) if v.len() == 1 => v.into_iter().next().expect("one trace"),
        (ok, v) => {
            return Ok(Outcome::Skipped(format!(
                "the victim {} and left {} traces: {}",
                if ok { "exited 0" } else { "failed" },
                v.len(),
                last_line(&victim_log)
            )));
        }
    };
    let read =
        |p: &Path| fikit_trace::read_trace(p).with_context(|| format!("reading {}", p.display()));
    Ok(match measure(&read(job_trace)?, &read(&victim_trace)?) {
        Ok(p) => Outcome::Measured(p),
        Err(e) => Outcome::Skipped(e.to_string()),
    })
}

/// The last non-empty line of a log, or a note that it has none.
fn last_line(path: &Path) -> String {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| {
            s.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(str::to_string)
        })
        .unwrap_or_else(|| "it printed nothing".to_string())
}

/// `LD_LIBRARY_PATH` for the victim: NVRTC (which compiles its kernel) is
/// looked for beside the libcupti the launcher found, where CUDA toolkits
/// and NVIDIA's Python wheels keep it (`extras/CUPTI/lib64` beside
/// `lib64`; `nvidia/cuda_cupti/lib` beside `nvidia/cuda_nvrtc/lib`), after
/// the user's own path.
fn nvrtc_path(user: Option<OsString>) -> OsString {
    let env = |k: &str| std::env::var(k).ok();
    let mut dirs: Vec<PathBuf> = user.iter().flat_map(std::env::split_paths).collect();
    if let fikit_protocol::locate::Located::Found(cupti) =
        fikit_protocol::locate::locate_cupti(&env, "")
        && let Some(lib) = cupti.parent()
    {
        dirs.extend(nvrtc_dirs_beside(lib));
    }
    std::env::join_paths(dirs).unwrap_or_default()
}

/// Where NVRTC may be, given the folder of libcupti.
fn nvrtc_dirs_beside(cupti_dir: &Path) -> Vec<PathBuf> {
    let up2 = cupti_dir.parent().and_then(Path::parent);
    let mut v = vec![cupti_dir.to_path_buf()];
    if let Some(up2) = up2 {
        v.push(up2.join("cuda_nvrtc").join("lib"));
        if let Some(up3) = up2.parent() {
            v.push(up3.join("lib64"));
        }
    }
    v
}

/// `fikit-profile __victim STOP READY`: runs the victim until STOP exists,
/// creating READY after its first runs; the exit code.
pub fn victim_main(args: &[OsString]) -> i32 {
    let [stop, ready] = args else {
        eprintln!("fikit-profile: {VICTIM_ARG} needs STOP and READY files");
        return 2;
    };
    let (stop, ready) = (Path::new(stop), Path::new(ready));
    let gpu = match fikit_device::gpu::Gpu::open(0) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("fikit-profile: the victim: {e}");
            return 1;
        }
    };
    let runs = std::cell::Cell::new(0u64);
    let done = || {
        runs.set(runs.get() + 1);
        if runs.get() == RUNS_BEFORE_READY {
            let _ = std::fs::write(ready, b"");
        }
        stop.exists()
    };
    match fikit_device::victim::hold_victim(&gpu, false, None, &done) {
        Ok(_) => 0,
        Err(e) => {
            eprintln!("fikit-profile: the victim: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvrtc_is_looked_for_where_toolkits_and_wheels_keep_it() {
        assert_eq!(
            nvrtc_dirs_beside(Path::new("/usr/local/cuda/extras/CUPTI/lib64")),
            [
                "/usr/local/cuda/extras/CUPTI/lib64",
                "/usr/local/cuda/extras/cuda_nvrtc/lib",
                "/usr/local/cuda/lib64"
            ]
            .map(PathBuf::from)
        );
        let wheel = Path::new("/venv/site-packages/nvidia/cuda_cupti/lib");
        assert!(
            nvrtc_dirs_beside(wheel)
                .contains(&PathBuf::from("/venv/site-packages/nvidia/cuda_nvrtc/lib"))
        );
        // The user's path comes first.
        let p = nvrtc_path(Some(OsString::from("/mine")));
        assert!(p.to_string_lossy().starts_with("/mine"), "{p:?}");
    }

    #[test]
    fn the_victim_needs_its_two_files() {
        assert_eq!(victim_main(&[OsString::from("stop")]), 2);
    }
}
