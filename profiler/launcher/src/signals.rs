//! Forwarding SIGINT, SIGTERM, SIGHUP and SIGQUIT to the child.
//!
//! A signal another process sends to fikit-profile (`kill`) is passed on to
//! the child. A signal the terminal sends (Ctrl-C) already reaches the child,
//! which is in the same process group, so it is not sent a second time.
//! After the command has exited, while fikit-profile waits for the processes
//! it left running ([`crate::reaper`]), a forwarded signal is kept here and
//! passed on to each of them by the waiting loop.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// The child's pid, 0 while there is none, -1 once it has exited and
/// nothing more is forwarded, [`DESCENDANTS`] while the descendants are waited for.
static CHILD: AtomicI32 = AtomicI32::new(0);
/// A signal that arrived before the child existed; sent to it once it does.
static PENDING: AtomicI32 = AtomicI32::new(0);
/// Whether any forwarded signal arrived: no further run of the command
/// starts ([`stop_requested`]).
static STOP: AtomicBool = AtomicBool::new(false);

/// [`CHILD`] while the command's remaining descendants are waited for.
const DESCENDANTS: i32 = -2;

/// The signals forwarded.
pub const FORWARDED: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

extern "C" fn forward(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    STOP.store(true, Ordering::SeqCst);
    let pid = CHILD.load(Ordering::SeqCst);
    if pid == 0 {
        PENDING.store(sig, Ordering::SeqCst);
        return;
    }
    if pid < 0 && pid != DESCENDANTS {
        return;
    }
    // si_code > 0 means the kernel generated it (e.g. the terminal's Ctrl-C),
    // and the child's process group got it too.
    // SAFETY: the kernel passes a valid siginfo_t with SA_SIGINFO.
    let from_kernel = !info.is_null() && unsafe { (*info).si_code } > 0;
    if pid == DESCENDANTS {
        if !from_kernel {
            PENDING.store(sig, Ordering::SeqCst);
        }
    } else if !from_kernel {
        // SAFETY: kill is async-signal-safe.
        unsafe { libc::kill(pid, sig) };
    }
}

/// Installs the forwarding handlers; call before starting the child, so that
/// a signal arriving in between is kept for it rather than killing fikit-profile.
///
/// A signal fikit-profile inherited as ignored (a shell starts background jobs
/// with SIGINT and SIGQUIT ignored) stays ignored, and so stays ignored for
/// the child too, as it would without fikit-profile.
pub fn install() -> std::io::Result<()> {
    for sig in FORWARDED {
        // SAFETY: a null new action only reads the current one into `old`.
        let ignored = unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_IGN
        };
        if ignored {
            continue;
        }
        // SAFETY: a zeroed sigaction is a valid starting point; the handler only
        // reads an atomic and calls kill, both async-signal-safe.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = forward as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            if libc::sigaction(sig, &sa, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

/// Forwards to `child` from now on, and sends it a signal that arrived before it started.
pub fn forward_to(child: u32) {
    CHILD.store(child as i32, Ordering::SeqCst);
    let sig = PENDING.swap(0, Ordering::SeqCst);
    if sig != 0 {
        // SAFETY: sending a signal to our own child.
        unsafe { libc::kill(child as i32, sig) };
    }
}

/// Blocks until the child has exited, without reaping it (its pid stays
/// ours until `wait` reaps it). Returns at once if waiting fails.
pub fn wait_exited(child: u32) {
    loop {
        // SAFETY: waitid writes only into `info`; WNOWAIT leaves the child waitable.
        let rc = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                child as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if rc == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
}

/// The command has exited: from now on a forwarded signal is kept for
/// [`take_pending`] (the descendants' waiting loop passes it on).
pub fn forward_to_descendants() {
    CHILD.store(DESCENDANTS, Ordering::SeqCst);
}

/// A signal kept for the descendants since the last call, if any.
pub fn take_pending() -> Option<libc::c_int> {
    match PENDING.swap(0, Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// Stops forwarding (the child and its descendants are done); the signals are ignored from now
/// on so the conversion can finish.
pub fn stop() {
    CHILD.store(-1, Ordering::SeqCst);
}

/// Whether a forwarded signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) arrived
/// since the handlers were installed: the user asked fikit-profile to stop,
/// so no further run of the command (untraced runs, metrics pass) starts.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}
