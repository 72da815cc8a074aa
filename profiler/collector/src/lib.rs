//! `fikit-collector`: the library the CUDA driver loads into an unmodified
//! program when `CUDA_INJECTION64_PATH` names it.
//!
//! The driver calls the exported [`InitializeInjection`] during `cuInit`. The
//! collector then finds libcupti (see [`fikit_protocol::locate`]), turns on CUPTI's
//! concurrent-kernel, memcpy, memset and synchronization activity and, by
//! default, the API records of only the calls that launch, copy, set memory or
//! synchronize, and streams what CUPTI delivers into `fikit-<pid>.spool` in
//! `FIKIT_SPOOL_DIR`. A background thread flushes every 100 ms; an `atexit`
//! handler does a forced flush and writes the final record.
//!
//! Nothing here may stop or crash the program: every entry point from C is
//! wrapped in `catch_unwind`, and a failure prints one `fikit:` line on stderr.
//! A fork child (fork without exec) inherits the collector's state but not its
//! thread; it recognises itself by its pid and does nothing.
//!
//! Under `fikit-run` (`FIKIT_GATE` set) the [`gate`] holds each kernel launch
//! as the run's policy says; it records only when `FIKIT_SPOOL_DIR` is set too.
//!
//! Settings, all read from the environment: `FIKIT_SPOOL_DIR`, `FIKIT_JOB`,
//! `FIKIT_PRIORITY`, `FIKIT_API` (`activity` (default), `callback`, `all`, `none`, `latency`), `FIKIT_SYNC_ACTIVITY`,
//! `FIKIT_FLUSH_MS`, `FIKIT_CUPTI_PATH`, and from `fikit-profile`
//! `FIKIT_CUPTI_FOUND` and `FIKIT_LAUNCHER`. Every name, with who sets it
//! and what its values mean, is in [`fikit_protocol`], the contract the
//! launchers and the collector share.

pub mod activity;
pub mod collector;
pub mod cupti;
pub mod gate;
pub mod layout;
pub mod metrics;
pub mod runtime;
pub mod switch;

use std::sync::atomic::{AtomicBool, Ordering};

use fikit_protocol::{CUPTI_PATH_ENV, GATE_ENV, LAUNCHER_ENV, SPOOL_DIR_ENV, locate};

/// Prints one line, prefixed `fikit:`, on stderr; never fails.
pub(crate) fn warn(msg: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "fikit: {msg}");
}

/// An environment variable as UTF-8, if set.
pub(crate) fn env_var(k: &str) -> Option<String> {
    std::env::var(k).ok()
}

static STARTED: AtomicBool = AtomicBool::new(false);

/// Opens the one libcupti the collector uses ([`locate::choose_cupti`]: the
/// program's own copy when it has one) and binds every CUPTI function to it;
/// cudarc's loader, which searches by name and could map a second copy, is
/// never used. Returns what the trace should say about the choice.
fn load_cupti() -> Result<Vec<String>, String> {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let chosen = match locate::choose_cupti(&env_var, &maps, &locate::same_file) {
        Ok(c) => c,
        Err(tried) => {
            let list: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
            return Err(format!(
                "libcupti not found; set {CUPTI_PATH_ENV}. Looked in: {}",
                list.join(", ")
            ));
        }
    };
    let path = &chosen.path;
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("bad libcupti path {}", path.display()))?;
    // The program's copy is only looked up (RTLD_NOLOAD maps nothing new).
    let flags = if chosen.already_loaded {
        libc::RTLD_NOW | libc::RTLD_NOLOAD
    } else {
        libc::RTLD_NOW | libc::RTLD_GLOBAL
    };
    // SAFETY: dlopen with a valid C string; the handle is kept for the process's life.
    let h = unsafe { libc::dlopen(c.as_ptr(), flags) };
    if h.is_null() {
        return Err(format!(
            "cannot load {}: {}",
            path.display(),
            cupti::dl_error("unknown error")
        ));
    }
    // SAFETY: a live handle of libcupti, never closed.
    unsafe { cupti::bind(h) }.map_err(|e| format!("{}: {e}", path.display()))?;
    // Under fikit-profile the notes reach the user once, from the trace.
    if env_var(LAUNCHER_ENV).is_none() {
        for n in &chosen.notes {
            warn(n);
        }
    }
    let mut notes = chosen.notes;
    notes.push(format!(
        "libcupti: {}{}",
        path.display(),
        if chosen.already_loaded {
            " (the program's own copy)"
        } else {
            ""
        }
    ));
    Ok(notes)
}

fn initialize() -> Result<(), String> {
    let mut notes = load_cupti()?;
    // Under fikit-run the gate comes first: it owns CUPTI's one subscription,
    // and the recording collector runs too only when a spool folder is named.
    let gate =
        gate::start(&mut notes).inspect_err(|e| warn(&format!("{e}; this process is not gated")));
    let gated = env_var(GATE_ENV).is_some();
    // The metrics pass (`fikit-profile --metrics`) likewise owns the
    // subscription, outside fikit-run only.
    let gate = match gate {
        Ok(None) if !gated => match metrics::start(&mut notes) {
            Ok(h) => Ok(h),
            Err(e) => {
                let n = format!("{e}; no metrics are measured");
                warn(&n);
                notes.push(n);
                Ok(None)
            }
        },
        other => other,
    };
    if gated && env_var(SPOOL_DIR_ENV).is_none() {
        return Ok(());
    }
    let kept = notes.clone();
    collector::start(notes, gate.ok().flatten()).inspect_err(|_| {
        // No spool carries the notes to the launcher: say them here.
        if env_var(LAUNCHER_ENV).is_some() {
            for n in &kept {
                warn(n);
            }
        }
    })
}

/// The entry point the CUDA driver calls when this library is named by
/// `CUDA_INJECTION64_PATH`. Returns 1 (success) in every case, so the program
/// runs on even when nothing can be recorded.
#[unsafe(no_mangle)]
pub extern "C" fn InitializeInjection() -> std::ffi::c_int {
    if STARTED.swap(true, Ordering::SeqCst) {
        return 1;
    }
    // Our copy of std has its own panic hook: keep panics to one line.
    std::panic::set_hook(Box::new(|info| {
        warn(&format!("internal error: {info}; recording stops"));
    }));
    match std::panic::catch_unwind(initialize) {
        Ok(Ok(())) => {}
        Ok(Err(msg)) => warn(&format!("nothing will be recorded: {msg}")),
        Err(_) => warn("nothing will be recorded: internal error during start-up"),
    }
    1
}

/// Flushes and closes the spool now instead of at exit (for programs that end
/// with `_exit`). Safe to call more than once and from any thread.
#[unsafe(no_mangle)]
pub extern "C" fn fikit_collector_finish() {
    let _ = std::panic::catch_unwind(collector::finish);
}
