//! The pressure pass's measurement: how much a latency-bound victim,
//! recorded beside a job under MPS (`fikit-profile`'s pressure pass), ran
//! slower while the job's kernels ran. Both traces share the host's clock
//! (CUPTI's timestamps). The simulator turns it into the job's pressure
//! weight (`fikit_sim_core::sim::pressure`).
//!
//! - The victim alone: the median of its runs that ended before the job's
//!   first kernel, per kernel shape (`kernel_key`): a victim may run
//!   kernels of several shapes, each set against its own runs alone. A
//!   shape with fewer than [`MIN_RUNS`] runs alone is left out.
//! - Over the job's steady part (after the first fifth of its kernels), a
//!   victim run that the union of the job's kernels overlapped for `t` of
//!   its `d` ran `d - alone = t (1 - 1/s)`, `s` the victim's slowdown while
//!   overlapped: least squares for `1 - 1/s` over every steady run. It needs
//!   the victim to find room at once, which a job of small kernels leaves
//!   it; beside a job that fills the SMs the victim waits for room and `s`
//!   comes out far above what the kernels do (or past any slowdown).
//!
//! The rule was fixed before any co-run was read with it (the lab log,
//! 2026-11-26).

use serde::{Deserialize, Serialize};

use crate::Trace;

/// Runs a figure needs: of each victim shape alone, and beside the job.
pub const MIN_RUNS: usize = 10;

/// Why the two traces give no figure.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PressureError {
    /// A trace without kernels.
    #[error("{0}: no kernels")]
    NoKernels(&'static str),
    /// Too few victim runs alone before the job's first kernel.
    #[error(
        "the victim trace has {0} runs before the job's first kernel (at least 10 needed): start the victim earlier"
    )]
    FewAlone(usize),
    /// Too few victim runs inside the job's steady part.
    #[error(
        "the victim trace has {0} runs inside the job's steady part (at least 10 needed): are the traces from one pass on one machine?"
    )]
    FewSteady(usize),
}

/// What the pressure pass measured: the victim beside the job's kernels
/// (the characterization's `pressure`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PressurePass {
    /// The victim's median run alone, ns (over every shape's runs alone).
    pub victim_alone_ns: f64,
    /// Victim runs alone (before the job's first kernel), of the shapes
    /// read.
    pub runs_alone: usize,
    /// Kernel shapes of the victim read (each with 10 runs alone or more).
    pub victim_shapes: usize,
    /// Victim runs inside the job's steady part.
    pub runs_steady: usize,
    /// The share of those runs' time the job's kernels overlapped, 0 to 1.
    pub overlapped: f64,
    /// The victim's slowdown while overlapped, fitted over every steady run
    /// (`None`: past any slowdown, `1 - 1/s >= 1`: it waited for room).
    pub slowdown: Option<f64>,
    /// Runs the job's kernels overlapped wholly (99% or more).
    pub runs_whole: usize,
    /// Their median stretch over the victim alone (`None` under 10 runs).
    pub whole_median: Option<f64>,
}

impl PressurePass {
    /// Checks the figures: the error names the field and what is wrong.
    pub fn check(&self) -> Result<(), String> {
        if !(self.victim_alone_ns.is_finite() && self.victim_alone_ns > 0.0) {
            return Err(format!(
                "victim_alone_ns: expected a positive number of ns, found {}",
                self.victim_alone_ns
            ));
        }
        if self.runs_alone < MIN_RUNS || self.runs_steady < MIN_RUNS {
            return Err(format!(
                "runs_alone, runs_steady: expected at least {MIN_RUNS} each, found {} and {}",
                self.runs_alone, self.runs_steady
            ));
        }
        if !(0.0..=1.0).contains(&self.overlapped) {
            return Err(format!(
                "overlapped: expected a share from 0 to 1, found {}",
                self.overlapped
            ));
        }
        for (field, v) in [
            ("slowdown", self.slowdown),
            ("whole_median", self.whole_median),
        ] {
            if let Some(v) = v
                && !(v.is_finite() && v >= 1.0)
            {
                return Err(format!(
                    "{field}: expected a slowdown of at least 1, found {v}"
                ));
            }
        }
        Ok(())
    }
}

/// The pressure pass's figures from the job's trace and the victim's.
pub fn measure(job: &Trace, victim: &Trace) -> Result<PressurePass, PressureError> {
    if job.kernels.is_empty() {
        return Err(PressureError::NoKernels("the job trace"));
    }
    if victim.kernels.is_empty() {
        return Err(PressureError::NoKernels("the victim trace"));
    }
    let mut js: Vec<(i64, i64)> = job.kernels.iter().map(|k| (k.start_ns, k.end_ns)).collect();
    js.sort_unstable();
    let first = js[0].0;
    let last_end = js.iter().map(|&(_, e)| e).max().unwrap_or(first);
    let steady_from = fifth_start(&js);
    let union = Union::new(&js);
    // Each shape's runs alone, in a map ordered by key (deterministic).
    let mut before: std::collections::BTreeMap<u64, Vec<f64>> = Default::default();
    for k in victim.kernels.iter().filter(|k| k.end_ns < first) {
        before
            .entry(k.kernel_key)
            .or_default()
            .push(k.duration_ns() as f64);
    }
    let most = before.values().map(Vec::len).max().unwrap_or(0);
    before.retain(|_, v| v.len() >= MIN_RUNS);
    if before.is_empty() {
        return Err(PressureError::FewAlone(most));
    }
    let runs_alone: usize = before.values().map(Vec::len).sum();
    let mut all_alone: Vec<f64> = before.values().flatten().copied().collect();
    let victim_alone_ns = median(&mut all_alone);
    let alone: std::collections::BTreeMap<u64, f64> = before
        .into_iter()
        .map(|(k, mut v)| (k, median(&mut v)))
        .collect();
    let victim_shapes = alone.len();
    // (duration, alone, time the job's kernels covered) per steady run.
    let steady: Vec<(f64, f64, f64)> = victim
        .kernels
        .iter()
        .filter(|k| k.start_ns > steady_from && k.end_ns < last_end)
        .filter_map(|k| {
            let a = *alone.get(&k.kernel_key)?;
            Some((
                k.duration_ns() as f64,
                a,
                union.covered(k.start_ns, k.end_ns) as f64,
            ))
        })
        .collect();
    if steady.len() < MIN_RUNS {
        return Err(PressureError::FewSteady(steady.len()));
    }
    let (mut tt, mut et, mut busy, mut total) = (0.0, 0.0, 0.0, 0.0);
    let mut whole = Vec::new();
    for &(d, alone, t) in &steady {
        tt += t * t;
        et += (d - alone) * t;
        busy += t;
        total += d;
        if t >= 0.99 * d {
            whole.push(d / alone);
        }
    }
    let slowdown = if tt > 0.0 {
        let b = et / tt;
        (b < 1.0).then(|| (1.0 / (1.0 - b)).max(1.0))
    } else {
        Some(1.0)
    };
    let runs_whole = whole.len();
    Ok(PressurePass {
        victim_alone_ns,
        runs_alone,
        victim_shapes,
        runs_steady: steady.len(),
        overlapped: if total > 0.0 {
            (busy / total).clamp(0.0, 1.0)
        } else {
            0.0
        },
        slowdown,
        runs_whole,
        whole_median: (runs_whole >= MIN_RUNS).then(|| median(&mut whole).max(1.0)),
    })
}

/// Where a job's steady part begins: the start of the kernel a fifth of the
/// way through its kernels by start time (`i64::MIN` without kernels).
pub fn steady_from(job: &Trace) -> i64 {
    let mut spans: Vec<(i64, i64)> = job.kernels.iter().map(|k| (k.start_ns, k.end_ns)).collect();
    spans.sort_unstable();
    fifth_start(&spans)
}

/// [`steady_from`] of kernel spans sorted by start.
fn fifth_start(sorted: &[(i64, i64)]) -> i64 {
    sorted.get(sorted.len() / 5).map_or(i64::MIN, |&(s, _)| s)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The union of spans (which may overlap one another), as sorted disjoint
/// spans with their running total, for how much of any span it covers.
struct Union {
    spans: Vec<(i64, i64)>,
    /// Covered time before each span.
    before: Vec<i64>,
}

impl Union {
    /// From spans sorted by start.
    fn new(sorted: &[(i64, i64)]) -> Union {
        let mut spans: Vec<(i64, i64)> = Vec::new();
        for &(s, e) in sorted {
            match spans.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => spans.push((s, e.max(s))),
            }
        }
        let mut before = Vec::with_capacity(spans.len());
        let mut sum = 0;
        for &(s, e) in &spans {
            before.push(sum);
            sum += e - s;
        }
        Union { spans, before }
    }

    /// Covered time up to `x`.
    fn upto(&self, x: i64) -> i64 {
        let i = self.spans.partition_point(|&(s, _)| s <= x);
        if i == 0 {
            return 0;
        }
        let (s, e) = self.spans[i - 1];
        self.before[i - 1] + (x.min(e) - s)
    }

    /// Covered time within `[s, e]`.
    fn covered(&self, s: i64, e: i64) -> i64 {
        self.upto(e) - self.upto(s)
    }
}

#[cfg(test)]
mod tests;
