//! Reading the per-kernel timelines live-replay workers write (with
//! [`crate::worker::TIMELINE_ENV`] set), and the one number the GPU model
//! takes from them: the context hand-over.
//!
//! A hand-over is the moment the device passes from one job's kernels to
//! another's. Its cost is how long after it *could* have started the new
//! job's kernel started: it could start once it was handed to the driver,
//! its stream predecessor had ended, and the other job's last kernel had
//! ended. All times are the GPU's global timer, which every process shares
//! (host times were aligned to it by the worker). This is the Rust form of
//! `lab/analysis/timelines.py`.

use std::path::Path;

/// One kernel of a timeline that ran (has GPU stamps).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimelineKernel {
    /// The job's stream index.
    pub stream: u32,
    /// When the worker handed the launch to the driver, ns.
    pub submitted_ns: i64,
    /// First block's start, ns.
    pub start_ns: i64,
    /// Last block's end, ns.
    pub end_ns: i64,
}

/// One job's timeline of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeline {
    /// Job name.
    pub job: String,
    /// The job's index in the run.
    pub index: usize,
    /// The live policy, as the worker wrote it (`Exclusive`, `Preemptive`, …).
    pub policy: String,
    /// Its kernels that ran, by start time.
    pub kernels: Vec<TimelineKernel>,
}

/// Parses a timeline file's text (`path` names it in errors).
pub fn parse(text: &str, path: &str) -> Result<Timeline, String> {
    let mut lines = text.lines();
    let head = lines
        .next()
        .and_then(|l| l.strip_prefix("# "))
        .ok_or_else(|| format!("{path}: not a timeline (no `# job=…` header line)"))?;
    let field = |k: &str| {
        head.split_whitespace()
            .find_map(|kv| kv.strip_prefix(k)?.strip_prefix('='))
            .ok_or_else(|| format!("{path}: header has no `{k}`"))
    };
    let job = field("job")?.to_string();
    let index = field("index")?
        .parse()
        .map_err(|_| format!("{path}: header `index` is not a number"))?;
    let policy = field("policy")?.to_string();
    let columns = lines.next().unwrap_or_default();
    let col = |name: &str| {
        columns
            .split(',')
            .position(|c| c == name)
            .ok_or_else(|| format!("{path}: no column `{name}`"))
    };
    let (kind, stream, submitted, start, end) = (
        col("kind")?,
        col("stream")?,
        col("submitted_ns")?,
        col("start_ns")?,
        col("end_ns")?,
    );
    let mut kernels = Vec::new();
    for (n, line) in lines.enumerate() {
        let f: Vec<&str> = line.split(',').collect();
        let get = |i: usize| f.get(i).copied().unwrap_or("");
        if get(kind) != "kernel" || get(start).is_empty() {
            continue;
        }
        let num = |i: usize| {
            get(i)
                .parse::<i64>()
                .map_err(|_| format!("{path}: line {}: `{}` is not a number", n + 3, get(i)))
        };
        kernels.push(TimelineKernel {
            stream: num(stream)? as u32,
            submitted_ns: num(submitted)?,
            start_ns: num(start)?,
            end_ns: num(end)?,
        });
    }
    kernels.sort_by_key(|k| (k.start_ns, k.end_ns));
    Ok(Timeline {
        job,
        index,
        policy,
        kernels,
    })
}

/// Reads every timeline (`*.csv`) in `dir` but the exclusive baselines, by job index.
pub fn read_dir(dir: &Path) -> Result<Vec<Timeline>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    let mut out = Vec::new();
    for e in entries {
        let p = e
            .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
            .path();
        if p.extension().is_none_or(|x| x != "csv") {
            continue;
        }
        let text =
            std::fs::read_to_string(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
        let t = parse(&text, &p.display().to_string())?;
        if t.policy != "Exclusive" {
            out.push(t);
        }
    }
    out.sort_by_key(|t| t.index);
    Ok(out)
}

/// The hand-overs between the jobs of one run, ns: one per kernel that was
/// the first of its job after another job's kernel had ended (in either
/// direction). Negative values (the kernel started before the other's
/// recorded end, within the timers' resolution) are kept.
pub fn handovers(jobs: &[Timeline]) -> Vec<i64> {
    // Every kernel end, with its job, in time order.
    let mut ends: Vec<(i64, usize)> = jobs
        .iter()
        .enumerate()
        .flat_map(|(j, t)| t.kernels.iter().map(move |k| (k.end_ns, j)))
        .collect();
    ends.sort_unstable();
    let mut out = Vec::new();
    for (j, t) in jobs.iter().enumerate() {
        let mut prev_end = std::collections::HashMap::new();
        for k in &t.kernels {
            let ready = k
                .submitted_ns
                .max(prev_end.get(&k.stream).copied().unwrap_or(0));
            prev_end.insert(k.stream, k.end_ns);
            // The last kernel of any job to end before this one started.
            let i = ends.partition_point(|&(e, _)| e < k.start_ns);
            if i == 0 {
                continue;
            }
            let (other_end, owner) = ends[i - 1];
            if owner != j {
                out.push(k.start_ns - ready.max(other_end));
            }
        }
    }
    out
}

/// Median and quartiles of `v` (sorted in place), or `None` when empty.
pub fn quartiles(v: &mut [i64]) -> Option<[i64; 3]> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let at = |q: usize| v[(q * (v.len() - 1)) / 4];
    Some([at(1), at(2), at(3)])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(start: i64, end: i64, submitted: i64) -> TimelineKernel {
        TimelineKernel {
            stream: 0,
            submitted_ns: submitted,
            start_ns: start,
            end_ns: end,
        }
    }

    fn job(index: usize, kernels: Vec<TimelineKernel>) -> Timeline {
        Timeline {
            job: format!("j{index}"),
            index,
            policy: "Preemptive".into(),
            kernels,
        }
    }

    #[test]
    fn parses_what_the_worker_writes() {
        let text = "# job=resnet50-bs1 index=1 priority=0 policy=Preemptive clock_offset_ns=5 uncertainty_ns=40\n\
                    op,kind,stream,duration_ns,issued_ns,submitted_ns,start_ns,end_ns,switched_ns,jumps\n\
                    0,copy,0,3000,100,,,,,\n\
                    1,kernel,2,5000,200,250,900,6000,0,0\n\
                    2,kernel,0,5000,300,350,,,,\n\
                    3,kernel,0,4000,400,450,700,4800,0,0\n";
        let t = parse(text, "t.csv").unwrap();
        assert_eq!(t.job, "resnet50-bs1");
        assert_eq!(t.index, 1);
        assert_eq!(t.policy, "Preemptive");
        // The copy and the kernel that never ran are left out; sorted by start.
        assert_eq!(
            t.kernels,
            [
                TimelineKernel {
                    stream: 0,
                    submitted_ns: 450,
                    start_ns: 700,
                    end_ns: 4800
                },
                TimelineKernel {
                    stream: 2,
                    submitted_ns: 250,
                    start_ns: 900,
                    end_ns: 6000
                },
            ]
        );
        let e = parse("op,kind\n", "x.csv").unwrap_err();
        assert!(e.contains("x.csv") && e.contains("header"), "{e}");
        let bad = "# job=a index=0 policy=Timeslice\nkind,stream,submitted_ns,start_ns,end_ns\nkernel,0,1,x,3\n";
        let e = parse(bad, "b.csv").unwrap_err();
        assert!(e.contains("line 3") && e.contains("`x`"), "{e}");
    }

    #[test]
    fn a_handover_runs_from_when_the_kernel_could_start() {
        // Job 0 (low): kernels [0,100), [300,400). Job 1 (high): submitted at
        // 50, starts at 240 after job 0's kernel ended at 100: hand-over 140.
        // Job 0's second kernel, queued since 20 behind its first (ready at
        // 100), starts at 300 after job 1's kernel ended at 260: 40. Job 1's
        // second kernel, submitted at 650, starts at 700 after job 0's
        // ended at 400: 50.
        let low = job(0, vec![k(0, 100, 0), k(300, 400, 20)]);
        let high = job(1, vec![k(240, 260, 50), k(700, 720, 650)]);
        let mut h = handovers(&[low, high]);
        h.sort_unstable();
        assert_eq!(h, [40, 50, 140]);
    }

    #[test]
    fn no_handover_within_one_job_or_on_a_stream_still_busy() {
        // One job alone: none.
        assert!(handovers(&[job(0, vec![k(0, 10, 0), k(20, 30, 0)])]).is_empty());
        // The second job's kernel waits for its own stream predecessor, which
        // ends after the other job's kernel: measured from its predecessor.
        let a = job(0, vec![k(0, 100, 0)]);
        let b = Timeline {
            kernels: vec![
                TimelineKernel {
                    stream: 3,
                    submitted_ns: 0,
                    start_ns: 110,
                    end_ns: 150,
                },
                TimelineKernel {
                    stream: 3,
                    submitted_ns: 0,
                    start_ns: 160,
                    end_ns: 170,
                },
            ],
            ..job(1, vec![])
        };
        // b's first kernel: after a's end 100, ready 0: 10. b's second: the
        // last end before 160 is b's own (150): not a hand-over.
        assert_eq!(handovers(&[a, b]), [10]);
    }

    #[test]
    fn quartiles_of_samples() {
        assert_eq!(quartiles(&mut []), None);
        assert_eq!(quartiles(&mut [7]), Some([7, 7, 7]));
        let mut v = [5, 1, 4, 2, 3];
        assert_eq!(quartiles(&mut v), Some([2, 3, 4]));
    }
}
