//! `fikit-protocol`: the contract between the fikit launchers and the
//! collector they inject into CUDA programs.
//!
//! The launchers (`fikit-profile` in `profiler/launcher`, `fikit-run` in
//! `run/`) never call the collector (`libfikit_collector.so`, in
//! `profiler/collector`): they start the program with
//! [`CUDA_INJECTION_ENV`] naming the collector, so the CUDA driver loads it
//! into every CUDA process, and say everything else in `FIKIT_*` environment
//! variables, which the collector reads when the driver initializes it. (The
//! shim `fikit-run` preloads, `profiler/shim`, reads none: the collector's
//! gate finds it by its exported `fikit_shim_set_hooks`.) This is the same
//! split as samply's launcher and its injected library: the environment is
//! the only channel, so both sides must agree on its names, and they are all
//! here, each with who sets it, who reads it and what its values mean.
//!
//! Also shared by both sides:
//!
//! - [`locate`]: the libcupti search. The collector chooses its libcupti with
//!   it; `fikit-profile` runs it before the command to say where it looked
//!   and to pass its find on in [`CUPTI_FOUND_ENV`];
//! - [`COLLECTOR_FILE`], [`find_collector`]: where a launcher finds the
//!   collector library it injects ([`COLLECTOR_ENV`], else beside itself);
//! - [`exit_code`]: how a launcher reports its child's exit status.
//!
//! Only std: the collector links this crate, and it runs inside the profiled
//! program.

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;

pub mod locate;

/// `CUDA_INJECTION64_PATH`: the library the CUDA driver loads into the
/// process during `cuInit` and whose `InitializeInjection` it calls. Set by
/// `fikit-profile` and `fikit-run` to the collector ([`find_collector`]);
/// `fikit-profile` replaces a value already set, with a warning. Read by the
/// CUDA driver.
pub const CUDA_INJECTION_ENV: &str = "CUDA_INJECTION64_PATH";

/// `FIKIT_COLLECTOR`: the collector library to inject. Set by the user;
/// read by `fikit-profile` and `fikit-run` ([`find_collector`]). Unset or
/// empty: [`COLLECTOR_FILE`] beside the launcher's own binary; set, it must
/// name a file.
pub const COLLECTOR_ENV: &str = "FIKIT_COLLECTOR";

/// `FIKIT_LAUNCHER`: set (to `1`) by `fikit-profile`, which prints the
/// collector's notes from the trace. Read by the collector: when set, it
/// does not print its libcupti notes itself (only where no spool could
/// carry them). Only whether it is set matters.
pub const LAUNCHER_ENV: &str = "FIKIT_LAUNCHER";

/// `FIKIT_CUPTI_PATH`: libcupti (a file) or a folder holding it. Set by the
/// user. Read by the collector ([`locate`]: searched first, but a libcupti
/// the program already loaded overrules it, with a note) and by
/// `fikit-profile` (its own search before the command; when set, the
/// launcher passes no [`CUPTI_FOUND_ENV`]).
pub const CUPTI_PATH_ENV: &str = "FIKIT_CUPTI_PATH";

/// `FIKIT_CUPTI_FOUND`: the libcupti `fikit-profile` found itself, set by it
/// only when the user set no [`CUPTI_PATH_ENV`]. Read by the collector:
/// searched right after [`CUPTI_PATH_ENV`], and overruled by a program's own
/// copy without a note (the user chose nothing).
pub const CUPTI_FOUND_ENV: &str = "FIKIT_CUPTI_FOUND";

/// `FIKIT_CUPTI_UNCHECKED`: `1` records even with a libcupti whose record
/// layouts were not checked (a CUDA release newer or older than the checked
/// headers), with a note; anything else refuses such a libcupti (nothing is
/// recorded, the program runs untraced). Set by the user, for trying a new
/// CUDA release; read by the collector.
pub const CUPTI_UNCHECKED_ENV: &str = "FIKIT_CUPTI_UNCHECKED";

/// `FIKIT_SPOOL_DIR`: the folder the collector writes its spool
/// (`fikit-<pid>.spool`) into. Set by `fikit-profile` (an absolute
/// `.fikit-spool-<pid>` folder in its output folder); read by the collector.
/// Unset: the current folder, except under `fikit-run`'s gate
/// ([`GATE_ENV`] set), where the collector records only when it is set.
pub const SPOOL_DIR_ENV: &str = "FIKIT_SPOOL_DIR";

/// `FIKIT_JOB`: the job name the spool's start record carries. Set by
/// `fikit-profile` (`--name`); read by the collector; empty when unset.
pub const JOB_ENV: &str = "FIKIT_JOB";

/// `FIKIT_PRIORITY`: the job's priority, `0` (highest) to `9` (lowest). Set
/// by `fikit-profile` (`--priority`); read by the collector; unset or not
/// one of those: `9`.
pub const PRIORITY_ENV: &str = "FIKIT_PRIORITY";

/// `FIKIT_API`: which API calls the collector records, and how. Set by
/// `fikit-profile` to `all` under `--all-api`, else by the user; read by the
/// collector. `activity` or `selected` (and anything unknown, or unset): API
/// activity records of only the launch, copy, memset and synchronize calls;
/// `runtime` / `driver`: the same, of one API only; `callback`: those calls
/// through CUPTI callbacks (not under `fikit-run`'s gate, where it means
/// `activity`); `all`: every runtime and driver call; `none`: no API calls;
/// `latency`: none, and kernels' queued/submitted timestamps on.
pub const API_ENV: &str = "FIKIT_API";

/// `FIKIT_SYNC_ACTIVITY`: `1` turns CUPTI's synchronization activity on,
/// `0` off; otherwise on only for `FIKIT_API=all` ([`API_ENV`]; otherwise the
/// synchronizations come from the recorded API calls, the cheaper way). Set
/// by the user; read by the collector.
pub const SYNC_ACTIVITY_ENV: &str = "FIKIT_SYNC_ACTIVITY";

/// `FIKIT_FLUSH_MS`: the collector's flush period in milliseconds, a whole
/// number above 0; otherwise 100. Set by the user; read by the collector.
pub const FLUSH_MS_ENV: &str = "FIKIT_FLUSH_MS";

/// `FIKIT_FLUSH_MODE`: how completed CUPTI buffers are collected every
/// period: `period` (CUPTI's own worker delivers them,
/// `cuptiActivityFlushPeriod`; the flushing thread only writes), anything
/// else or unset `flushall` (the flushing thread calls
/// `cuptiActivityFlushAll(0)`). Set by the user; read by the collector.
pub const FLUSH_MODE_ENV: &str = "FIKIT_FLUSH_MODE";

/// `FIKIT_METRICS`: `1` runs the metrics pass (each kernel key's first
/// launch measured alone with CUPTI's range profiler); anything else, or
/// unset, does not. Set by `fikit-profile --metrics` for its second run of
/// the command; read by the collector, outside `fikit-run`'s gate only.
pub const METRICS_ENV: &str = "FIKIT_METRICS";

/// `FIKIT_GATE`: the run's control file (the shared control block). Set by
/// `fikit-run` for every job; read by the collector, which gates the
/// process's kernel launches when it is set.
pub const GATE_ENV: &str = "FIKIT_GATE";

/// `FIKIT_GATE_JOB`: this job's index in the control block, a whole number
/// below the block's job count (else the process is not gated). Set by
/// `fikit-run`; read by the collector's gate.
pub const GATE_JOB_ENV: &str = "FIKIT_GATE_JOB";

/// `FIKIT_GATE_TABLE`: this job's prediction table (a file). Set by
/// `fikit-run` when the job has one; read by the collector's gate. Unset:
/// every kernel is unknown to the gate.
pub const GATE_TABLE_ENV: &str = "FIKIT_GATE_TABLE";

/// `FIKIT_GATE_NAP_US`: how long a wait older than 1 ms sleeps between
/// looks, in µs (a whole number); unset or `0`: it yields the core instead.
/// Set by `fikit-run` (`--gate-nap-us`); read by the collector's gate.
pub const GATE_NAP_US_ENV: &str = "FIKIT_GATE_NAP_US";

/// `FIKIT_TEST_FAIL_START`: `1` makes the collector add, after the real
/// ones, a required activity kind that fails, so start-up fails halfway and
/// everything switched on is switched off again. Set by tests checking that
/// undo on a GPU; read by the collector.
pub const TEST_FAIL_START_ENV: &str = "FIKIT_TEST_FAIL_START";

/// File name of the collector library.
pub const COLLECTOR_FILE: &str = "libfikit_collector.so";

/// The NVIDIA driver's control device: a machine without it has no GPU
/// driver loaded.
pub const NVIDIA_CTL: &str = "/dev/nvidiactl";

/// Why no CUDA program can run on this machine, or `None`: no NVIDIA GPU
/// driver ([`NVIDIA_CTL`] is missing).
pub fn no_gpu_driver() -> Option<String> {
    (!std::path::Path::new(NVIDIA_CTL).exists())
        .then(|| format!("no NVIDIA GPU driver on this machine ({NVIDIA_CTL} is missing)"))
}

/// Where the collector library is: `FIKIT_COLLECTOR`, else beside this binary.
pub fn find_collector() -> std::result::Result<PathBuf, String> {
    if let Some(p) = std::env::var_os(COLLECTOR_ENV).filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("{COLLECTOR_ENV}={} is not a file", p.display()))
        };
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let beside = exe
        .parent()
        .map(|d| d.join(COLLECTOR_FILE))
        .unwrap_or_else(|| PathBuf::from(COLLECTOR_FILE));
    if beside.is_file() {
        Ok(beside)
    } else {
        Err(format!(
            "the collector library {} is missing (build it with `cargo build -p fikit-collector`, or set {COLLECTOR_ENV})",
            beside.display()
        ))
    }
}

/// File name of the launch shim, which lives beside the collector.
pub const SHIM_FILE: &str = "libfikit_shim.so";

/// The launch shim beside the collector `collector`, where it is.
pub fn shim_beside(collector: &std::path::Path) -> Option<PathBuf> {
    let shim = collector.with_file_name(SHIM_FILE);
    shim.is_file().then_some(shim)
}

/// `LD_PRELOAD` with `shim` first, before what the environment has: how
/// the launch shim goes into a job (fikit-profile's untraced runs,
/// fikit-run's rounds).
pub fn preload_first(shim: &std::path::Path) -> std::ffi::OsString {
    let mut p = shim.as_os_str().to_owned();
    if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|o| !o.is_empty()) {
        p.push(":");
        p.push(old);
    }
    p
}

/// The exit code that reports a child's status: its code, or 128 + the signal that killed it.
pub fn exit_code(status: std::process::ExitStatus) -> i32 {
    match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(s)) => 128 + s,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shim_is_found_beside_the_collector_only() {
        let d = tempfile::tempdir().unwrap();
        let collector = d.path().join(COLLECTOR_FILE);
        assert_eq!(shim_beside(&collector), None);
        std::fs::write(d.path().join(SHIM_FILE), b"").unwrap();
        assert_eq!(shim_beside(&collector), Some(d.path().join(SHIM_FILE)));
        // What the environment preloads stays, after the shim.
        let p = preload_first(&d.path().join(SHIM_FILE));
        assert!(
            p.to_string_lossy()
                .starts_with(&*d.path().join(SHIM_FILE).to_string_lossy())
        );
    }
}
