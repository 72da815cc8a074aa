//! A round's fill, live: from its jobs' traces (`--trace`), how much of the
//! latency-critical job's idle GPU time other jobs' kernels ran, counted as
//! the simulator counts it (`fikit_sim_core::sim::engine::Fill`): from its
//! first kernel launched to its last done, it is idle while none of its
//! kernels is launched and unfinished, and filled while another job's
//! kernel runs.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// The latency-critical job's idle GPU time in a round and what others used
/// of it, ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveFill {
    /// Time it had no kernel launched and unfinished, from its first kernel
    /// launched to its last done.
    pub idle_ns: i64,
    /// The part of it in which another job's kernel ran.
    pub filled_ns: i64,
}

impl LiveFill {
    /// `filled / idle`; `None` when the job was never idle.
    pub fn share(&self) -> Option<f64> {
        (self.idle_ns > 0).then(|| self.filled_ns as f64 / self.idle_ns as f64)
    }
}

/// Sorted, merged copies of `spans` (`[start, end)`, ns; empty ones left
/// out).
fn merged(spans: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut v: Vec<(i64, i64)> = spans.iter().copied().filter(|(s, e)| e > s).collect();
    v.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// The fill of a job busy over `top` (each kernel from its launch to its
/// end) beside other jobs' kernels running over `others`; `None` without
/// any kernel of the job.
pub fn fill(top: &[(i64, i64)], others: &[(i64, i64)]) -> Option<LiveFill> {
    let busy = merged(top);
    let others = merged(others);
    if busy.is_empty() {
        return None;
    }
    let mut idle_ns = 0;
    let mut filled_ns = 0;
    let mut k = 0;
    for w in busy.windows(2) {
        let (from, to) = (w[0].1, w[1].0);
        idle_ns += to - from;
        // The others' spans are sorted and disjoint: skip those that end
        // before this gap, count those over it.
        while k < others.len() && others[k].1 <= from {
            k += 1;
        }
        let mut i = k;
        while i < others.len() && others[i].0 < to {
            filled_ns += others[i].1.min(to) - others[i].0.max(from);
            i += 1;
        }
    }
    Some(LiveFill { idle_ns, filled_ns })
}

/// The fill of job `top` in a traced round: its trace and the other jobs'
/// among the `.parquet` files in `dir` (by each trace's job name, `jobs`
/// the round's); `None` where a job's trace is missing or unreadable.
pub fn from_traces(dir: &Path, top: &str, jobs: &[&str]) -> Option<LiveFill> {
    let mut mine = Vec::new();
    let mut others = Vec::new();
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).ok()? {
        let path = entry.ok()?.path();
        if path.extension().is_none_or(|x| x != "parquet") {
            continue;
        }
        let t = fikit_trace::read_trace(&path).ok()?;
        let name = t.meta.job_name.as_str();
        if !jobs.contains(&name) {
            continue;
        }
        seen += 1;
        for k in &t.kernels {
            if name == top {
                let launched = k.launch.as_ref().map_or(k.start_ns, |l| l.start_ns);
                mine.push((launched.min(k.start_ns), k.end_ns));
            } else {
                others.push((k.start_ns, k.end_ns));
            }
        }
    }
    (seen >= jobs.len()).then(|| fill(&mine, &others)).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_counts_the_others_kernels_in_the_jobs_gaps() {
        // The job: kernels launched at 0 and 50 (done 20 and 60), then one
        // launched at 100 that runs [110, 130). Idle [20, 50) and [60, 100):
        // 70 ns. Others: [10, 30) fills 10, [40, 70) fills 10 + 10, [90,
        // 200) fills 10; [300, 400) lies past the job's last kernel.
        let f = fill(
            &[(0, 20), (50, 60), (100, 130)],
            &[(10, 30), (40, 70), (90, 200), (300, 400)],
        )
        .unwrap();
        assert_eq!(
            f,
            LiveFill {
                idle_ns: 70,
                filled_ns: 40
            }
        );
        assert_eq!(f.share(), Some(40.0 / 70.0));
        // Overlapping others count once; a job never idle has no share.
        let f = fill(&[(0, 20), (50, 60)], &[(25, 40), (30, 45)]).unwrap();
        assert_eq!(
            f,
            LiveFill {
                idle_ns: 30,
                filled_ns: 20
            }
        );
        assert_eq!(fill(&[(0, 10), (5, 30)], &[(0, 30)]).unwrap().share(), None);
        assert_eq!(fill(&[], &[(0, 30)]), None);
    }

    #[test]
    fn a_rounds_fill_comes_from_its_jobs_traces() {
        use fikit_trace::{fixture, write_trace};
        let d = tempfile::tempdir().unwrap();
        // srv: conv [0, 10) µs, fc [40, 45), conv [100, 110), fc [140, 145):
        // idle 30 + 55 + 30 µs. bg: 20 µs kernels back to back over [0,
        // 120) µs: fills 30 + 55 + 10. A trace of a job not in the round is
        // left out.
        write_trace(
            &d.path().join("srv-1.parquet"),
            &fixture::serving("srv", 0, 2),
        )
        .unwrap();
        write_trace(
            &d.path().join("bg-2.parquet"),
            &fixture::training("bg", 9, 6),
        )
        .unwrap();
        write_trace(
            &d.path().join("old-3.parquet"),
            &fixture::training("old", 9, 9),
        )
        .unwrap();
        let f = from_traces(d.path(), "srv", &["srv", "bg"]).unwrap();
        assert_eq!(
            f,
            LiveFill {
                idle_ns: 115_000,
                filled_ns: 95_000
            }
        );
        // A job of the round without its trace: no figure.
        assert_eq!(from_traces(d.path(), "srv", &["srv", "bg", "third"]), None);
    }
}
