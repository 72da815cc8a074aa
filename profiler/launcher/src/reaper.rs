//! Waiting for the command's descendants, not only the command.
//!
//! A daemonized process or a data-loader worker that outlives its parent may
//! still write its spool after the command (the direct child) has exited.
//! fikit-profile makes itself a *child subreaper*
//! (`prctl(PR_SET_CHILD_SUBREAPER)`), so such orphans become its children
//! instead of init's. After the command exits it reaps them as they end and
//! waits, up to a grace period, until it has no children left; those still
//! running then are named, and their spools are converted as they are (a spool
//! without its end record gives a trace marked incomplete).

use std::time::{Duration, Instant};

/// Default grace period, in seconds, for descendants still running when the command exits.
pub const DEFAULT_GRACE_SECS: u64 = 10;

/// Makes this process the subreaper of its descendants (Linux ≥ 3.4).
pub fn become_subreaper() -> std::io::Result<()> {
    // SAFETY: PR_SET_CHILD_SUBREAPER takes one integer argument and touches no memory.
    let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// A process, as `/proc/<pid>/stat` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStat {
    /// Process id.
    pub pid: u32,
    /// The command name (`comm`), at most 15 bytes.
    pub comm: String,
    /// The state letter (`R`, `S`, `Z`, …).
    pub state: char,
    /// The parent's pid.
    pub ppid: u32,
}

/// Parses the text of `/proc/<pid>/stat`. The name is between the first `(`
/// and the *last* `)`, since it may itself hold spaces and parentheses.
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    if close < open {
        return None;
    }
    let pid = text[..open].trim().parse().ok()?;
    let comm = text[open + 1..close].to_string();
    let mut rest = text[close + 1..].split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    Some(ProcStat {
        pid,
        comm,
        state,
        ppid,
    })
}

/// The live (not zombie) children of `parent` among `procs`, by pid.
pub fn live_children(procs: &[ProcStat], parent: u32) -> Vec<ProcStat> {
    let mut v: Vec<ProcStat> = procs
        .iter()
        .filter(|p| p.ppid == parent && p.state != 'Z' && p.state != 'X')
        .cloned()
        .collect();
    v.sort_by_key(|p| p.pid);
    v
}

/// Every process in `/proc` (those that vanish while it is read are skipped).
fn all_processes() -> Vec<ProcStat> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter_map(|t| parse_stat(&t))
        .collect()
}

/// `pid 123 (python3), pid 456 (sleep)`.
pub fn describe(procs: &[ProcStat]) -> String {
    procs
        .iter()
        .map(|p| format!("pid {} ({})", p.pid, p.comm))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reaps every child that has exited; true while children remain.
fn reap_exited() -> bool {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes only `status`; WNOHANG never blocks.
        let rc = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        match rc {
            0 => return true,
            r if r > 0 => continue,
            _ => {
                return std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted;
            }
        }
    }
}

/// After the command has exited and been reaped: waits until this process has
/// no children left, or `grace` has passed. Signals that arrive meanwhile
/// (see [`crate::signals::forward_to_descendants`]) are passed on to every
/// child. Returns the children still running at the end.
pub fn wait_for_descendants(grace: Duration, say: &dyn Fn(&str)) -> Vec<ProcStat> {
    wait_for_descendants_but(grace, say, &[])
}

/// This process's children that run now (pids).
pub fn children_now() -> Vec<u32> {
    live_children(&all_processes(), std::process::id())
        .iter()
        .map(|k| k.pid)
        .collect()
}

/// [`wait_for_descendants`], not counting the children `others` (started
/// beside the command, not by it: the pressure pass's victim).
pub fn wait_for_descendants_but(
    grace: Duration,
    say: &dyn Fn(&str),
    others: &[u32],
) -> Vec<ProcStat> {
    let me = std::process::id();
    // No deadline the clock can hold: wait as long as they run.
    let deadline = Instant::now().checked_add(grace);
    let mut announced = false;
    loop {
        if !reap_exited() {
            return Vec::new();
        }
        let mut kids = live_children(&all_processes(), me);
        kids.retain(|k| !others.contains(&k.pid));
        if let Some(sig) = crate::signals::take_pending() {
            for k in &kids {
                // SAFETY: `k` is our child (not reaped yet, so its pid is not reused).
                unsafe { libc::kill(k.pid as libc::pid_t, sig) };
            }
        }
        if kids.is_empty() {
            if !others.is_empty() {
                // The children left run beside the command: it is done.
                return Vec::new();
            }
            // Children exist but all have exited: reap them on the next turn.
            std::thread::sleep(Duration::from_millis(10));
            continue;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            say(&format!(
                "{} process(es) the command started still run after {} s: {}; converting what \
                 they recorded so far (their traces are marked incomplete)",
                kids.len(),
                grace.as_secs_f64(),
                describe(&kids)
            ));
            return kids;
        }
        if !announced {
            say(&format!(
                "the command exited; waiting up to {} s for {} process(es) it started: {}",
                grace.as_secs_f64(),
                kids.len(),
                describe(&kids)
            ));
            announced = true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_names() {
        let s = parse_stat("4242 (python3) S 17 4242 17 0 -1 4194560 1 0 0 0").unwrap();
        assert_eq!(
            s,
            ProcStat {
                pid: 4242,
                comm: "python3".into(),
                state: 'S',
                ppid: 17
            }
        );
        // A name with spaces and a closing parenthesis.
        let s = parse_stat("7 (a b) c)) Z 1 7 7 0").unwrap();
        assert_eq!(s.comm, "a b) c)");
        assert_eq!(s.state, 'Z');
        assert_eq!(s.ppid, 1);
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_stat("x (y) S notanumber"), None);
    }

    #[test]
    fn only_live_children_of_the_parent() {
        let p = |pid, state, ppid| ProcStat {
            pid,
            comm: format!("p{pid}"),
            state,
            ppid,
        };
        let procs = [
            p(30, 'S', 10),
            p(20, 'R', 10),
            p(21, 'Z', 10),
            p(40, 'S', 30),
        ];
        let kids = live_children(&procs, 10);
        assert_eq!(kids.iter().map(|k| k.pid).collect::<Vec<_>>(), [20, 30]);
        assert_eq!(describe(&kids), "pid 20 (p20), pid 30 (p30)");
    }

    #[test]
    fn this_process_is_in_proc() {
        let me = std::process::id();
        let all = all_processes();
        assert!(
            all.iter().any(|p| p.pid == me),
            "{} processes read",
            all.len()
        );
    }
}
