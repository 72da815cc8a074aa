//! A job's host as it runs untraced.
//!
//! CUPTI's recording slows a program's host: every launch and
//! synchronization call does more work while traced, so a profile's host
//! gaps are longer than the program's own (1.14x to 1.63x for three batch-1
//! PyTorch jobs, the validation log, 2026-11-27). `fikit-profile` runs the
//! command again without recording (the trace's characterization,
//! [`fikit_trace::UntracedRun`]) and keeps each run's region: its first
//! kernel launch to the later of its last launch and its last blocking
//! synchronization, measured as `fikit-run` measures a job alone.
//!
//! The simulator scales the profile's host time from the first kernel's
//! launch on (every host delay after it and the tail,
//! [`Job::with_region_host_speed`]; the set-up before it, outside the
//! region, stays as traced) by the factor that makes the profile,
//! replayed alone, take the untraced runs' median region from its first
//! kernel to its end. The region's GPU time does not scale, so the factor is
//! found by fixed-point steps on the host part, kept within
//! [`FACTOR_LIMITS`]. Each run's own factor gives the range the host's
//! speed varied over ([`HostSpeed::low`], [`HostSpeed::high`]).
//!
//! A server's region holds its idle between requests, which no host speed
//! changes; where its untraced runs measured their iterations' busy parts
//! (first launch to the synchronization that ends it,
//! [`fikit_trace::UntracedRun::busy_ns`]), a serving job's factor makes
//! the median busy part of its recorded iterations replayed alone theirs
//! ([`busy_factor`]).

use rayon::prelude::*;

use crate::sim::gpu::GpuModel;
use crate::sim::job::Job;
use crate::sim::simulate::run_isolated;

/// The least and the greatest factor: a profile whose host would have to
/// run more than 5x faster or slower than traced to match its untraced runs
/// is not the same program (or the runs went wrong).
pub const FACTOR_LIMITS: (f64, f64) = (0.2, 5.0);

/// Fixed-point steps at most, and the relative error at which they stop.
const STEPS: usize = 8;
const CLOSE: f64 = 1e-4;

/// The host's speed untraced, as factors on the profile's host time
/// ([`Job::with_region_host_speed`]): below 1, the host runs faster untraced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostSpeed {
    /// The factor that matches the untraced runs' median region.
    pub factor: f64,
    /// The least and the greatest of the runs' own factors.
    pub low: f64,
    /// See `low`.
    pub high: f64,
    /// Untraced runs it comes from.
    pub runs: usize,
    /// Fitted on the runs' busy parts ([`busy_factor`], a server), not on
    /// their regions ([`region_factor`]).
    pub busy: bool,
}

/// When `job`'s first kernel started in its profile, from the job's start
/// (0 without kernels): where its region begins.
pub fn first_kernel_ns(job: &Job) -> i64 {
    job.ops
        .iter()
        .find(|o| o.is_kernel())
        .map_or(0, |o| o.recorded_start_ns)
}

/// The factor on `job`'s host time that makes it, replayed alone on
/// `model`, take `region_ns` from its first kernel to its end, starting the
/// search from `from`. The region is close to affine in the factor (its GPU
/// time fixed, its host time scaled), so after one proportional step the
/// search takes secant steps through its last two points: a few replays
/// even for a job whose host is a small part of its region, where
/// proportional steps alone crawl. `None` when the job cannot be simulated
/// alone or has no region.
pub fn region_factor(job: &Job, region_ns: f64, model: &GpuModel, from: f64) -> Option<f64> {
    let pre = first_kernel_ns(job);
    fit_factor(region_ns, from, |f| {
        let alone =
            run_isolated(std::slice::from_ref(&job.with_region_host_speed(f)), model).ok()?;
        let r = (alone[0].jobs[0].jct_ns() - pre) as f64;
        (r > 0.0).then_some(r)
    })
}

/// The factor on `job`'s host time that makes the median busy part of its
/// iterations after its set-up, replayed alone on `model`, `busy_ns`: each
/// iteration's latency less the host's delay before its first step
/// ([`Job::iteration_first_delays`]), as the gate measures a run's busy
/// parts from each iteration's first launch. For a server recorded as it
/// served, whose region holds its idle between requests: the busy parts
/// leave the idle out. `None` as [`region_factor`].
pub fn busy_factor(job: &Job, busy_ns: f64, model: &GpuModel, from: f64) -> Option<f64> {
    fit_factor(busy_ns, from, |f| {
        let busy = iteration_parts_alone(&job.with_region_host_speed(f), Measure::Busy, model)?;
        median(&busy).filter(|&b| b > 0.0)
    })
}

/// The factor, within [`FACTOR_LIMITS`], at which `measure` (a replay's
/// figure at a factor; close to affine in it, the GPU's time fixed and the
/// host's scaled) gives `target`, starting from `from`: after one
/// proportional step, secant steps through the last two points, a few
/// replays even where the host is a small part of the figure, where
/// proportional steps alone crawl. `None` when `measure` has no figure.
fn fit_factor(target: f64, from: f64, measure: impl Fn(f64) -> Option<f64>) -> Option<f64> {
    let (lo, hi) = FACTOR_LIMITS;
    let close = |r: f64| (r / target - 1.0).abs() < CLOSE;
    let mut f0 = from.clamp(lo, hi);
    let mut r0 = measure(f0)?;
    if close(r0) {
        return Some(f0);
    }
    let mut f1 = (f0 * target / r0).clamp(lo, hi);
    for _ in 0..STEPS {
        let r1 = measure(f1)?;
        if close(r1) || f1 == f0 {
            break;
        }
        let slope = (r1 - r0) / (f1 - f0);
        let next = if slope > 0.0 {
            f1 + (target - r1) / slope
        } else {
            // Not increasing here (the host hidden behind the GPU): a
            // proportional step.
            f1 * target / r1
        };
        (f0, r0) = (f1, r1);
        f1 = next.clamp(lo, hi);
    }
    Some(f1)
}

/// The median of `v` (the mean of the middle two for an even count).
fn median(v: &[i64]) -> Option<f64> {
    let mut v = v.to_vec();
    v.sort_unstable();
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2] as f64),
        _ => Some((v[n / 2 - 1] as f64 + v[n / 2] as f64) / 2.0),
    }
}

/// `job` as it runs untraced on `model` and as it presses under MPS, from
/// its trace's characterization (its untraced runs' median, [`at_speed`],
/// no range; its pressure pass): what a fleet sweep simulates, one model
/// at a time. As it is where the trace has neither.
pub fn characterized(job: &Job, model: &GpuModel) -> Job {
    let j = match crate::sim::pressure::measured_weight(job, model) {
        Some(w) => job.with_pressure_weight(w),
        None => job.clone(),
    };
    match median_speed(&j, model) {
        Some((factor, busy)) => {
            let h = HostSpeed {
                factor,
                low: factor,
                high: factor,
                runs: 0,
                busy,
            };
            at_speed(&j, &h, Speed::Median, model)
        }
        None => j,
    }
}

/// What `job`'s host speed is fitted on: its program as recorded (the
/// untraced runs measured it, not a repeated or serving program rebuilt
/// from it), the figures (a server's runs' busy parts where they measured
/// them, its region holding the idle between requests that the host's
/// speed does not change; else the runs' regions), the fit, and whether it
/// is the busy parts'.
fn fit_on(job: &Job) -> (&Job, &[i64], FactorAt, bool) {
    let fit = job.recorded.as_deref().unwrap_or(job);
    if serves(job) && !job.untraced_busy_ns.is_empty() {
        (fit, &job.untraced_busy_ns, busy_factor, true)
    } else {
        (fit, &job.untraced_regions_ns, region_factor, false)
    }
}

/// The factor of `job`'s untraced runs' median ([`untraced`]'s, without
/// the runs' own), and whether it is of busy parts; `None` without runs.
fn median_speed(job: &Job, model: &GpuModel) -> Option<(f64, bool)> {
    let (fit, figures, factor_at, busy) = fit_on(job);
    Some((factor_at(fit, median(figures)?, model, 1.0)?, busy))
}

/// `job`'s host speed untraced on `model`, from its untraced runs
/// ([`Job::untraced_regions_ns`]); `None` without any.
pub fn untraced(job: &Job, model: &GpuModel) -> Option<HostSpeed> {
    let (fit, figures, factor_at, busy) = fit_on(job);
    let factor = factor_at(fit, median(figures)?, model, 1.0)?;
    let each: Vec<f64> = figures
        .iter()
        .map(|&r| factor_at(fit, r as f64, model, factor))
        .collect::<Option<_>>()?;
    // The median's factor lies between the runs' where the region grows
    // with the factor; where it does not quite, the range still holds it.
    Some(HostSpeed {
        factor,
        low: each.iter().copied().fold(factor, f64::min),
        high: each.iter().copied().fold(factor, f64::max),
        runs: figures.len(),
        busy,
    })
}

/// A fit of the host's factor to one figure ([`region_factor`], [`busy_factor`]).
type FactorAt = fn(&Job, f64, &GpuModel, f64) -> Option<f64>;

/// Whether `job` serves requests ([`Job::serving`]: its program waits for
/// arrivals).
fn serves(job: &Job) -> bool {
    job.steps
        .iter()
        .any(|s| matches!(s, crate::sim::job::HostStep::Arrive { .. }))
}

/// Each job on its host's untraced speed where its trace has untraced runs
/// (as profiled where not), and that speed. Deterministic: the jobs are
/// independent.
pub fn on_untraced_host(jobs: &[Job], model: &GpuModel) -> (Vec<Job>, Vec<Option<HostSpeed>>) {
    jobs.par_iter()
        .map(|j| match untraced(j, model) {
            Some(h) => (at_speed(j, &h, Speed::Median, model), Some(h)),
            None => (j.clone(), None),
        })
        .unzip()
}

/// Which of a job's untraced speeds ([`HostSpeed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speed {
    /// The factor of the runs' median.
    Median,
    /// The fastest run's.
    Low,
    /// The slowest run's.
    High,
}

/// `job` on its host's untraced speed `h` ([`untraced`]), at `which`: its
/// host time scaled by the factor from its first kernel on, and each
/// iteration then at the spread its untraced runs showed
/// ([`spread_untraced`]: at the median, every run's; at an end, that
/// run's): a server's busy parts (its runs' [`Job::untraced_busy_parts_ns`]),
/// a closed-loop job's whole iterations ([`Job::untraced_iterations_ns`]).
/// By the factor alone where the runs did not record them or that replay
/// fails.
pub fn at_speed(job: &Job, h: &HostSpeed, which: Speed, model: &GpuModel) -> Job {
    let factor = match which {
        Speed::Median => h.factor,
        Speed::Low => h.low,
        Speed::High => h.high,
    };
    // The runs the range's ends are at, by the figure the factor was fitted on.
    let (runs, by, measure) = if h.busy {
        (
            &job.untraced_busy_parts_ns,
            &job.untraced_busy_ns,
            Measure::Busy,
        )
    } else {
        (
            &job.untraced_iterations_ns,
            &job.untraced_regions_ns,
            Measure::Whole,
        )
    };
    let recorded = runs.len() == by.len() && runs.iter().all(|r| !r.is_empty());
    if recorded && !runs.is_empty() {
        let pick = |better: fn(i64, i64) -> bool| {
            (0..by.len()).fold(0, |b, k| if better(by[k], by[b]) { k } else { b })
        };
        let chosen: Vec<&[i64]> = match which {
            Speed::Median => runs.iter().map(|r| &r[..]).collect(),
            Speed::Low => vec![&runs[pick(|a, b| a < b)][..]],
            Speed::High => vec![&runs[pick(|a, b| a > b)][..]],
        };
        if let Some(j) = spread_untraced(job, factor, &Quantiles::of(&chosen), measure, model) {
            return j;
        }
    }
    job.with_region_host_speed(factor)
}

/// What of each iteration [`spread_untraced`] matches to the untraced runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Measure {
    /// A server's busy parts: its first launch to the wait that ends it,
    /// the idle before it (its wait for a request) left out and unscaled.
    Busy,
    /// A closed-loop job's whole iterations, sync to sync: the host's work
    /// before its first launch scaled with the rest.
    Whole,
}

/// The iterations a gate leaves out of a run's (the spans up to its second
/// blocking synchronization after its first kernel launch, as
/// [`fikit_trace::UntracedRun::iterations_ns`] holds them): the
/// simulator's first two iterations, whose first ends at the first wait
/// after a kernel.
pub const GATED_SETUP_ITERATIONS: usize = 2;

impl Measure {
    /// The first of `job`'s iterations this measure counts: a server's
    /// after its set-up; a closed-loop job's as its gate counts them.
    fn from(self, job: &Job) -> usize {
        match self {
            Measure::Busy => job.setup_iterations,
            Measure::Whole => job.setup_iterations.max(GATED_SETUP_ITERATIONS),
        }
    }
}

/// Each of `job`'s iterations from [`Measure::from`] on, replayed alone on
/// `model`, as `measure` counts it.
fn iteration_parts_alone(job: &Job, measure: Measure, model: &GpuModel) -> Option<Vec<i64>> {
    let alone = run_isolated(std::slice::from_ref(job), model).ok()?;
    let latencies = &alone[0].jobs[0].iterations_ns;
    let from = measure.from(job);
    if measure == Measure::Whole {
        return Some(latencies.iter().skip(from).copied().collect());
    }
    // One more first delay than iterations where steps follow the last
    // iteration's wait (the program's end).
    let firsts = job.iteration_first_delays();
    if firsts.len() < latencies.len() {
        return None;
    }
    Some(
        latencies
            .iter()
            .zip(&firsts)
            .skip(from)
            .map(|(l, d)| l - d)
            .collect(),
    )
}

/// The untraced runs' iterations as a distribution to replay: at each
/// quantile, the median over the runs of each run's value there. What a
/// run's percentile is predicted by: its median over runs, as repetitions
/// are read, which one run's stalls do not pull as they pull the pooled
/// iterations' tail. One run: that run's iterations.
#[derive(Debug, Clone)]
struct Quantiles(Vec<Vec<i64>>);

impl Quantiles {
    /// Of `runs`, each sorted; runs without iterations left out.
    fn of(runs: &[&[i64]]) -> Quantiles {
        Quantiles(
            runs.iter()
                .filter(|r| !r.is_empty())
                .map(|r| {
                    let mut v = r.to_vec();
                    v.sort_unstable();
                    v
                })
                .collect(),
        )
    }

    /// The value at quantile `q` (0 to 1): each run's at the nearest rank,
    /// their median (the mean of the middle two for an even count).
    fn at(&self, q: f64) -> i64 {
        let mut v: Vec<i64> = self
            .0
            .iter()
            .map(|r| r[(q * (r.len() - 1) as f64).round() as usize])
            .collect();
        v.sort_unstable();
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2
        }
    }
}

/// `job` with its recorded program's host at `factor` and each iteration
/// from [`Measure::from`] on taking, as `measure` counts it, the value at
/// its rank's quantile of `target` (the recording's slowest iteration the
/// runs' slowest, its median their median): the runs' spread of iteration
/// times, which a single factor on the recording's own spread does not
/// give (a traced run's tail is its own: tracing's stalls, not the job's).
/// Each iteration's host delays are scaled to that ([`fit_iterations`]:
/// replays find the GPU's part, which does not scale); a server then
/// serves `job`'s arrivals again, a repeated job is repeated again. `None`
/// without runs, where a server was not rebuilt from a recording, or where
/// the job cannot be replayed alone.
fn spread_untraced(
    job: &Job,
    factor: f64,
    target: &Quantiles,
    measure: Measure,
    model: &GpuModel,
) -> Option<Job> {
    use crate::sim::job::HostStep;
    let arrivals: Vec<i64> = job
        .steps
        .iter()
        .filter_map(|s| match *s {
            HostStep::Arrive { at_ns } => Some(at_ns),
            _ => None,
        })
        .collect();
    // The program to scale, and how `job` was rebuilt from it: a server
    // from its recording; a closed-loop job as it is, or from its
    // recording repeated (its iterations' spread is the recording's).
    let (recorded, repeats) = match (measure, job.recorded.as_deref()) {
        (Measure::Busy, Some(r)) if !arrivals.is_empty() => (r, None),
        (Measure::Whole, None) if arrivals.is_empty() => (job, None),
        (Measure::Whole, Some(r)) if arrivals.is_empty() && !r.steps.is_empty() => {
            let times = job.steps.len() / r.steps.len();
            (r, Some(times).filter(|&t| t > 0))
        }
        _ => return None,
    };
    if target.0.is_empty() || repeats == Some(0) {
        return None;
    }
    let base = recorded.with_region_host_speed(factor);
    let from = measure.from(&base);
    let whole = measure == Measure::Whole;
    let scale = fit_iterations(target, |scale| {
        iteration_parts_alone(
            &base.with_iteration_host_scale(from, scale, whole),
            measure,
            model,
        )
    })?;
    let scaled = base.with_iteration_host_scale(from, &scale, whole);
    let mut rebuilt = match repeats {
        None if whole => return Some(scaled),
        None => scaled.serving(&arrivals),
        Some(times) => {
            let r = scaled.repeated(times);
            if r.steps.len() != job.steps.len() {
                return None;
            }
            r
        }
    };
    rebuilt.name = job.name.clone();
    rebuilt.priority = job.priority;
    rebuilt.pressure_weight = job.pressure_weight;
    rebuilt.measured_pressure = job.measured_pressure;
    rebuilt.recorded = job.recorded.clone();
    Some(rebuilt)
}

/// Replays at most, and the relative error of every iteration at which
/// they stop, in [`fit_iterations`]: each replay is the whole job alone.
const SPREAD_STEPS: usize = 4;
const SPREAD_CLOSE: f64 = 1e-3;

/// The per-iteration host scales at which `replay` (the iterations' parts
/// at the scales, one per iteration, or `None`) gives each iteration,
/// by its rank among the parts at scale 1, the value at that rank's
/// quantile of `target`. An iteration is close to affine in its host's
/// scale: after one proportional step, secant steps through each
/// iteration's last two points where they rise with the scale, else
/// proportional steps (the host hidden behind the GPU), within
/// [`FACTOR_LIMITS`]. `None` where a replay has no parts or another count.
fn fit_iterations(
    target: &Quantiles,
    replay: impl Fn(&[f64]) -> Option<Vec<i64>>,
) -> Option<Vec<f64>> {
    // No scales: every iteration as it is.
    let b = replay(&[])?;
    let n = b.len();
    if n == 0 {
        return None;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&k| (b[k], k));
    let mut t = vec![0i64; n];
    for (r, &k) in order.iter().enumerate() {
        let q = if n == 1 {
            0.5
        } else {
            r as f64 / (n - 1) as f64
        };
        t[k] = target.at(q);
    }
    let (lo, hi) = FACTOR_LIMITS;
    let close = |k: usize, got: i64| (got as f64 / t[k] as f64 - 1.0).abs() <= SPREAD_CLOSE;
    let (mut scale, mut got) = (vec![1.0; n], b);
    let mut last: Vec<Option<(f64, i64)>> = vec![None; n];
    for _ in 0..SPREAD_STEPS {
        if (0..n).all(|k| close(k, got[k])) {
            break;
        }
        let next: Vec<f64> = (0..n)
            .map(|k| {
                let (s, g, want) = (scale[k], got[k], t[k]);
                if close(k, g) {
                    return s;
                }
                let secant = last[k].and_then(|(ps, pg)| {
                    let (ds, dg) = (s - ps, (g - pg) as f64);
                    (ds * dg > 0.0).then(|| s + (want - g) as f64 * ds / dg)
                });
                match secant {
                    Some(x) => x,
                    None if g > 0 && want > 0 => s * want as f64 / g as f64,
                    None => s,
                }
                .clamp(lo, hi)
            })
            .collect();
        for k in 0..n {
            last[k] = Some((scale[k], got[k]));
        }
        scale = next;
        got = replay(&scale)?;
        if got.len() != n {
            return None;
        }
    }
    Some(scale)
}

/// The jobs with every host at the fastest and at the slowest of its
/// untraced runs ([`HostSpeed::low`], [`HostSpeed::high`]), for the range
/// of a prediction; jobs without untraced runs as they are.
#[derive(Debug, Clone)]
pub struct Corners {
    /// Every host at its fastest untraced run.
    pub low: Vec<Job>,
    /// Every host at its slowest.
    pub high: Vec<Job>,
}

/// Puts each of `jobs` on its host's untraced speed ([`on_untraced_host`]),
/// unless `as_profiled`; returns the line that says so, naming each job's
/// factor and the jobs simulated as traced, and the jobs at the ends of
/// their range ([`Corners`]; `None` when no job has untraced runs). The one
/// path of every command that predicts (`fikit-sim`, `fikit-run`).
pub fn set_untraced_host(
    jobs: &mut Vec<Job>,
    model: &GpuModel,
    as_profiled: bool,
) -> (String, Option<Corners>) {
    if as_profiled {
        return ("host: as traced (--as-profiled)".to_string(), None);
    }
    if jobs.iter().all(|j| j.untraced_regions_ns.is_empty()) {
        return (
            "host: as traced: no trace has untraced runs (fikit-profile measures them unless --single-run)".to_string(),
            None,
        );
    }
    let (on_host, speeds) = on_untraced_host(jobs, model);
    let each: Vec<String> = jobs
        .iter()
        .zip(&speeds)
        .map(|(j, h)| describe(j, h.as_ref()))
        .collect();
    let at = |which: Speed| -> Vec<Job> {
        jobs.par_iter()
            .zip(&speeds)
            .map(|(j, h)| match h {
                Some(h) => at_speed(j, h, which, model),
                None => j.clone(),
            })
            .collect()
    };
    let corners = Corners {
        low: at(Speed::Low),
        high: at(Speed::High),
    };
    *jobs = on_host;
    (
        format!(
            "host: as run untraced, the profile's host time times: {}",
            each.join(", ")
        ),
        Some(corners),
    )
}

/// One job's part of the line that names the host speeds (`job`'s
/// [`untraced`] speed, `speed`): `NAME 0.81x [0.78-0.84] (3 untraced
/// runs)`, marked where the factor stopped at one of [`FACTOR_LIMITS`], or
/// why it is simulated as traced.
pub fn describe(job: &Job, speed: Option<&HostSpeed>) -> String {
    let name = &job.name;
    match speed {
        Some(h) => format!(
            "{name} {:.2}x [{:.2}-{:.2}] ({} untraced run{}{}{})",
            h.factor,
            h.low,
            h.high,
            h.runs,
            if h.runs == 1 { "" } else { "s" },
            if h.busy { ", busy parts" } else { "" },
            if h.factor <= FACTOR_LIMITS.0 || h.factor >= FACTOR_LIMITS.1 {
                "; at the factor's limit: the untraced runs do not look like this profile"
            } else {
                ""
            }
        ),
        None if job.untraced_regions_ns.is_empty() => {
            format!("{name} as traced (its trace has no untraced runs)")
        }
        None => format!(
            "{name} as traced (its profile could not be replayed alone to match its untraced runs)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A job of 10 iterations: a kernel of `kernel_ns` launched as it
    /// starts, waited for by a stream synchronization, then `host_ns` of
    /// host before the next launch; with `setup_ns`, a synchronization at 0
    /// and that much host before the first launch. Its region from its first
    /// kernel is 10 `kernel_ns` + 9 `host_ns`.
    fn iterations(kernel_ns: i64, host_ns: i64, setup_ns: i64) -> Job {
        use fikit_trace::fixture::{empty, launched_at_start, stream_sync};
        let mut t = empty("serial", 0);
        if setup_ns > 0 {
            t.syncs.push(stream_sync(7, 100, 0, 500));
        }
        let first = if setup_ns > 0 { 500 + setup_ns } else { 0 };
        for i in 0..10u32 {
            let base = first + i64::from(i) * (kernel_ns + host_ns);
            t.kernels
                .push(launched_at_start("k", i * 2 + 1, base, base + kernel_ns));
            t.syncs
                .push(stream_sync(7, i * 2 + 2, base, base + kernel_ns));
        }
        Job::from_trace(&t)
    }

    /// The default model without a context switch, so regions are the
    /// programs' own arithmetic.
    fn no_switch() -> GpuModel {
        GpuModel {
            context_switch_ns: 0,
            ..GpuModel::default()
        }
    }

    /// 10 kernels of 1000 ns, 2000 ns of host before each but the first:
    /// region 28 000 ns, its host part 18 000 ns.
    fn serial() -> Job {
        iterations(1_000, 2_000, 0)
    }

    #[test]
    fn the_factor_brings_the_region_to_the_untraced_median() {
        let model = no_switch();
        // 10 kernels of 1000 ns, 2000 ns of host before each: from the first
        // kernel 10 x 1000 + 9 x 2000 = 28 000 ns. Untraced runs of 19 000,
        // 23 500 and 28 000 ns: the median needs 9 x 2000 f = 13 500, f =
        // 0.75; the runs 0.5, 0.75 and 1.
        let mut job = serial();
        let alone = run_isolated(std::slice::from_ref(&job), &model).unwrap();
        assert_eq!(alone[0].jobs[0].jct_ns() - first_kernel_ns(&job), 28_000);
        job.untraced_regions_ns = Arc::from(vec![23_500, 19_000, 28_000]);
        let h = untraced(&job, &model).unwrap();
        assert!((h.factor - 0.75).abs() < 1e-3, "{h:?}");
        assert!((h.low - 0.5).abs() < 1e-3, "{h:?}");
        assert!((h.high - 1.0).abs() < 1e-3, "{h:?}");
        assert_eq!(h.runs, 3);
        assert_eq!(
            describe(&job, Some(&h)),
            "serial 0.75x [0.50-1.00] (3 untraced runs)"
        );
        // Replayed alone at that factor, it takes the median region.
        let (jobs, speeds) = on_untraced_host(std::slice::from_ref(&job), &model);
        assert_eq!(speeds[0], Some(h));
        let alone = run_isolated(&jobs, &model).unwrap();
        let region = alone[0].jobs[0].jct_ns() - first_kernel_ns(&jobs[0]);
        assert!((region - 23_500).abs() <= 10, "{region}");
        // Without untraced runs: as profiled, and said so.
        job.untraced_regions_ns = Arc::from(Vec::new());
        assert_eq!(untraced(&job, &model), None);
        let (jobs, speeds) = on_untraced_host(std::slice::from_ref(&job), &model);
        assert_eq!((jobs[0].steps.len(), speeds[0]), (job.steps.len(), None));
        assert_eq!(
            describe(&job, None),
            "serial as traced (its trace has no untraced runs)"
        );
    }

    #[test]
    fn a_rebuilt_program_keeps_the_speed_its_recorded_one_ran_untraced() {
        let model = no_switch();
        // The job above (0.75x for a median run of 23 500 ns) repeated 3
        // times: its runs measured one run, so the factor is the same, not
        // the one that would squeeze three runs into 23 500 ns.
        let mut job = serial();
        job.untraced_regions_ns = Arc::from(vec![23_500, 19_000, 28_000]);
        let once = untraced(&job, &model).unwrap();
        let thrice = job.repeated(3);
        assert!(thrice.recorded.is_some());
        assert_eq!(untraced(&thrice, &model), Some(once));
        // Rebuilt again (a repeated program serving requests), it still
        // fits on the program as recorded.
        let served = thrice.serving(&[0, 50_000]);
        assert!(Arc::ptr_eq(
            served.recorded.as_ref().unwrap(),
            thrice.recorded.as_ref().unwrap()
        ));
        assert_eq!(untraced(&served, &model), Some(once));
    }

    #[test]
    fn the_set_up_before_the_first_kernel_stays_as_traced() {
        let model = no_switch();
        // A synchronization at 0 (the set-up), then 10 000 ns of host
        // before the first of 10 kernels as in `serial`: the region from the
        // first kernel is 28 000 ns, its host part 18 000 ns.
        let mut job = iterations(1_000, 2_000, 10_000);
        let pre = first_kernel_ns(&job);
        assert!(pre >= 10_000, "{pre}");
        job.untraced_regions_ns = Arc::from(vec![23_500]);
        let h = untraced(&job, &model).unwrap();
        assert!((h.factor - 0.75).abs() < 1e-3, "{h:?}");
        // At that factor the first kernel starts where it did, and the
        // region is the untraced one.
        let fast = job.with_region_host_speed(h.factor);
        let alone = run_isolated(std::slice::from_ref(&fast), &model).unwrap();
        assert_eq!(first_kernel_ns(&fast), pre);
        let region = alone[0].jobs[0].jct_ns() - pre;
        assert!((region - 23_500).abs() <= 10, "{region}");
    }

    #[test]
    fn a_host_that_is_a_small_part_of_the_region_is_still_matched() {
        let model = no_switch();
        // 10 kernels of 10 000 ns, 200 ns of host between them: region
        // 100 000 + 9 x 200 = 101 800 ns. At half the host's time: 100 900
        // ns. Proportional steps move 1.8% a step here (eight of them end
        // near 0.93); the secant stops within the region's tolerance (10 ns
        // of host here, 0.6% of the factor).
        let mut job = iterations(10_000, 200, 0);
        let alone = run_isolated(std::slice::from_ref(&job), &model).unwrap();
        assert_eq!(alone[0].jobs[0].jct_ns() - first_kernel_ns(&job), 101_800);
        let f = region_factor(&job, 100_900.0, &model, 1.0).unwrap();
        assert!((f - 0.5).abs() < 0.01, "{f}");
        // The median's factor between the runs' (100 450, 100 900, 101 350 ns:
        // 0.25, 0.5, 0.75).
        job.untraced_regions_ns = Arc::from(vec![101_350, 100_450, 100_900]);
        let h = untraced(&job, &model).unwrap();
        assert!(h.low <= h.factor && h.factor <= h.high, "{h:?}");
        assert!(
            (h.low - 0.25).abs() < 0.01 && (h.high - 0.75).abs() < 0.01,
            "{h:?}"
        );
    }

    #[test]
    fn a_factor_stays_within_its_limits() {
        let model = GpuModel::default();
        let mut job = serial();
        // Far shorter than the GPU time alone: no host speed reaches it.
        job.untraced_regions_ns = Arc::from(vec![10]);
        let h = untraced(&job, &model).unwrap();
        assert_eq!(h.factor, FACTOR_LIMITS.0);
        assert!(describe(&job, Some(&h)).ends_with(
            "; at the factor's limit: the untraced runs do not look like this profile)"
        ));
        job.untraced_regions_ns = Arc::from(vec![1_000_000_000]);
        assert_eq!(untraced(&job, &model).unwrap().factor, FACTOR_LIMITS.1);
    }

    /// A server recorded as it served: the iterations of
    /// [`fikit_trace::fixture::serving`] (kernel `conv` [0, 10) us, `fc`
    /// [40, 45) us, a stream synchronization [41, 46) us that waits for it),
    /// starting at `starts_us`, so 54 us of host before each iteration that
    /// follows the one before at once, and idle added before the others.
    fn served_recording(starts_us: &[i64]) -> Job {
        use fikit_trace::fixture::{launched_at_start, serving_at};
        let starts: Vec<i64> = starts_us.iter().map(|s| s * 1_000).collect();
        let mut t = serving_at("server", 0, &starts);
        // A last kernel after the last wait (the program's end: no iteration).
        let end = starts_us.last().map_or(0, |s| s * 1_000 + 60_000);
        let c = starts_us.len() as u32 * 3 + 1;
        t.kernels
            .push(launched_at_start("free", c, end, end + 1_000));
        Job::from_trace(&t)
    }

    /// Eight iterations; a millisecond of idle before the fourth and two
    /// before the sixth (a request that waited to arrive).
    const SERVED_US: [i64; 8] = [0, 100, 200, 1_300, 1_400, 3_500, 3_600, 3_700];

    #[test]
    fn a_server_recorded_as_it_served_waits_only_for_its_new_arrivals() {
        let model = no_switch();
        let job = served_recording(&SERVED_US);
        assert_eq!(
            job.iteration_first_delays()[1..],
            [
                54_000, 54_000, 1_054_000, 54_000, 2_054_000, 54_000, 54_000, 14_000
            ]
        );
        // Requests 1 ms apart, each alone on the GPU: arrival, 54 us of
        // host, `conv`, `fc` launched 40 us after it, the wait back 6 us
        // later: 100 us each, the recording's idle gone.
        let served = job.serving(&[1_000_000, 2_000_000, 3_000_000, 4_000_000]);
        let alone = run_isolated(std::slice::from_ref(&served), &model).unwrap();
        assert_eq!(
            alone[0].jobs[0].iterations_ns,
            [100_000, 100_000, 100_000, 100_000]
        );
    }

    #[test]
    fn a_servers_idle_goes_wherever_its_recorded_steps_are_cut() {
        use fikit_trace::fixture::{empty, launched_at_start, push_serving_iteration, stream_sync};
        let model = no_switch();
        // A request of two iterations: `pre` ([0, 5) us, its wait back at
        // 6), then `conv` and `fc` as in `served_recording` (back at 46),
        // 54 us of host before each. The recording's set-up is its first
        // `pre`, so its steps are cut `conv`-`pre`: the idle before each
        // request (a millisecond, before the 3rd, 4th and 5th `pre`) falls
        // inside a step.
        let mut t = empty("server", 0);
        let (mut at, mut c) = (0i64, 1u32);
        for i in 0..12 {
            if i % 2 == 0 {
                if (6..=10).contains(&i) {
                    at += 1_000_000;
                }
                t.kernels.push(launched_at_start("pre", c, at, at + 5_000));
                t.syncs.push(stream_sync(7, c + 1, at + 1_000, at + 6_000));
                (at, c) = (at + 60_000, c + 2);
            } else {
                push_serving_iteration(&mut t, c, at);
                (at, c) = (at + 100_000, c + 3);
            }
        }
        let job = Job::from_trace(&t);
        // Each request alone: 54 + 46 + 54 + 6 us, none of the idle.
        let served = job.serving(&[5_000_000, 6_000_000, 7_000_000]);
        let alone = run_isolated(std::slice::from_ref(&served), &model).unwrap();
        assert_eq!(alone[0].jobs[0].iterations_ns, [160_000, 160_000, 160_000]);
    }

    #[test]
    fn a_server_is_fitted_on_its_busy_parts() {
        let model = no_switch();
        let recorded = served_recording(&SERVED_US);
        // An iteration's busy part, its first launch to its wait's return:
        // `fc` issued at 40 us, done at 45, the wait issued at 41 and back
        // at 46. At half the host's time: `fc` at 20, done at 25, back at
        // 26 us.
        let f = busy_factor(&recorded, 26_000.0, &model, 1.0).unwrap();
        assert!((f - 0.5).abs() < 1e-3, "{f}");
        // As a server with its untraced runs' busy parts (26, 24 and 28 us:
        // 0.5, 0.45 and 0.55) it is fitted on them, not on its regions,
        // which hold the recording's idle.
        let mut served = recorded.serving(&[1_000_000, 2_000_000]);
        served.untraced_regions_ns = Arc::from(vec![3_000_000]);
        served.untraced_busy_ns = Arc::from(vec![26_000, 24_000, 28_000]);
        let h = untraced(&served, &model).unwrap();
        assert!(h.busy && (h.factor - 0.5).abs() < 1e-3, "{h:?}");
        assert!(
            (h.low - 0.45).abs() < 1e-3 && (h.high - 0.55).abs() < 1e-3,
            "{h:?}"
        );
        assert_eq!(
            describe(&served, Some(&h)),
            "server 0.50x [0.45-0.55] (3 untraced runs, busy parts)"
        );
        // Not serving, the same recording is fitted on its region.
        let mut plain = recorded.clone();
        plain.untraced_regions_ns = Arc::from(vec![3_000_000]);
        plain.untraced_busy_ns = Arc::from(vec![26_000]);
        assert!(!untraced(&plain, &model).unwrap().busy);
    }

    #[test]
    fn a_servers_requests_spread_as_its_untraced_runs_did() {
        let model = no_switch();
        // Seven requests after the set-up, each busy 46 us as recorded
        // (`fc` issued at 40 us, its wait back at 46: 40 c + 6 at a host
        // factor c). Three untraced runs busy 20/30/40, 26/46/66 and
        // 30/50/90 us: medians 30, 46 and 50, so the median's factor is 1
        // and the fastest run's 0.6.
        let mut served = served_recording(&SERVED_US)
            .serving(&(1..=7).map(|k| k * 1_000_000).collect::<Vec<_>>());
        served.untraced_regions_ns = Arc::from(vec![3_000_000; 3]);
        served.untraced_busy_ns = Arc::from(vec![30_000, 46_000, 50_000]);
        served.untraced_busy_parts_ns = Arc::from(vec![
            Arc::from(vec![40_000, 20_000, 30_000]),
            Arc::from(vec![26_000, 46_000, 66_000]),
            Arc::from(vec![90_000, 30_000, 50_000]),
        ]);
        let h = untraced(&served, &model).unwrap();
        assert!((h.factor - 1.0).abs() < 1e-3 && h.busy, "{h:?}");
        assert!((h.low - 0.6).abs() < 1e-3, "{h:?}");
        let latencies = |j: &Job| {
            run_isolated(std::slice::from_ref(j), &model).unwrap()[0].jobs[0]
                .iterations_ns
                .clone()
        };
        // At the median, the requests take by rank (equal as recorded, so
        // in order) the runs' median at each quantile: the least parts'
        // median 26, the middle ones' 46, the greatest ones' 66 us (not the
        // pooled 20 and 90): 26, 26, 46, 46, 46, 66, 66 us, after 54 us of
        // host each, within 0.1 us (the factor's tolerance; the replays
        // find the GPU's 6 us, which does not scale).
        let at = latencies(&at_speed(&served, &h, Speed::Median, &model));
        let want = [26, 26, 46, 46, 46, 66, 66].map(|b| (54 + b) * 1_000);
        assert_eq!(at.len(), want.len(), "{at:?}");
        for (a, w) in at.iter().zip(want) {
            assert!((a - w).abs() <= 100, "{at:?} against {want:?}");
        }
        // At the fastest run, its factor and its parts alone: 32.4 us of
        // host, then 20, 20, 30, 30, 30, 40, 40 us busy.
        let low = latencies(&at_speed(&served, &h, Speed::Low, &model));
        let want = [20, 20, 30, 30, 30, 40, 40].map(|b| 32_400 + b * 1_000);
        for (a, w) in low.iter().zip(want) {
            assert!((a - w).abs() <= 1_000, "{low:?} against {want:?}");
        }
        // Without the runs' parts, the factor alone: every request alike.
        served.untraced_busy_parts_ns = Arc::from(Vec::new());
        let flat = latencies(&at_speed(&served, &h, Speed::Median, &model));
        assert!(flat.iter().all(|&a| a == flat[0]), "{flat:?}");
    }

    #[test]
    fn a_closed_loop_jobs_iterations_spread_as_its_untraced_runs_did() {
        let model = no_switch();
        // `serial`'s iterations: the first ends with its kernel (1 us), each
        // later one is 2 us of host and a 1 us kernel. A gate counts from
        // the third: eight of 3 us. Three untraced runs of the region as
        // recorded (factor 1), iterations 2/3/5, 2.5/3/6 and 2.2/3.5/9 us:
        // the runs' median at the least 2.2, the middle 3, the greatest
        // 6 us.
        let mut job = serial();
        job.untraced_regions_ns = Arc::from(vec![28_000, 28_000, 28_000]);
        job.untraced_iterations_ns = Arc::from(vec![
            Arc::from(vec![2_000, 3_000, 5_000]),
            Arc::from(vec![6_000, 2_500, 3_000]),
            Arc::from(vec![2_200, 3_500, 9_000]),
        ]);
        let h = untraced(&job, &model).unwrap();
        assert!((h.factor - 1.0).abs() < 1e-3 && !h.busy, "{h:?}");
        let at = run_isolated(&[at_speed(&job, &h, Speed::Median, &model)], &model).unwrap()[0]
            .jobs[0]
            .iterations_ns
            .clone();
        // The two the gate leaves out as recorded; the eight by rank (equal,
        // so in order) at quantiles 0, 1/7, ..., 1 of three values each:
        // the host before each kernel scaled with the rest (2.2 us is 1.2 us
        // of host and the kernel).
        let want = [
            1_000, 3_000, 2_200, 2_200, 3_000, 3_000, 3_000, 3_000, 6_000, 6_000,
        ];
        assert_eq!(at.len(), want.len(), "{at:?}");
        for (a, w) in at.iter().zip(want) {
            assert!((a - w).abs() <= 20, "{at:?} against {want:?}");
        }
        // A run without iterations recorded (a trace from before them):
        // the factor alone, every iteration alike.
        job.untraced_iterations_ns = Arc::from(vec![
            Arc::from(vec![2_000, 3_000, 5_000]),
            Arc::from(Vec::new()),
            Arc::from(vec![2_200, 3_500, 9_000]),
        ]);
        let flat = run_isolated(&[at_speed(&job, &h, Speed::Median, &model)], &model).unwrap()[0]
            .jobs[0]
            .iterations_ns
            .clone();
        assert!(flat[1..].iter().all(|&a| a == 3_000), "{flat:?}");
    }

    /// 10 iterations 13 us apart: kernel `a` [0, 10) us launched as it
    /// starts, kernel `b` launched at 8 us (queued behind `a`, so [10, 11)),
    /// a synchronization back at 11 us, 2 us of host before the next. An
    /// iteration at host scale `s` takes 2 s + max(10 s, 2 s + 10) + 1 us:
    /// below 1.25 the host hides behind `a`.
    fn partly_hidden() -> Job {
        use fikit_trace::fixture::{empty, kernel, launched_at_start, stream_sync};
        let mut t = empty("hidden", 0);
        for i in 0..10u32 {
            let (base, c) = (i64::from(i) * 13_000, i * 3 + 1);
            t.kernels
                .push(launched_at_start("a", c, base, base + 10_000));
            let mut b = kernel(
                "b",
                7,
                c + 1,
                Some(base + 6_000),
                base + 10_000,
                base + 11_000,
            );
            b.launch.as_mut().unwrap().end_ns = base + 8_000;
            t.kernels.push(b);
            t.syncs
                .push(stream_sync(7, c + 2, base + 8_500, base + 11_000));
        }
        Job::from_trace(&t)
    }

    #[test]
    fn iterations_reach_their_spread_where_the_host_is_partly_hidden() {
        let model = no_switch();
        let mut job = partly_hidden();
        // Untraced runs of the region as recorded (factor 1), each with
        // iterations of 12, 20 and 30 us: scales 0.5 (hidden), 1.9 and 2.9.
        let region = run_isolated(std::slice::from_ref(&job), &model).unwrap()[0].jobs[0].jct_ns()
            - first_kernel_ns(&job);
        job.untraced_regions_ns = Arc::from(vec![region; 3]);
        let its: Arc<[i64]> = Arc::from(vec![12_000, 20_000, 30_000]);
        job.untraced_iterations_ns = Arc::from(vec![its.clone(), its.clone(), its]);
        let h = untraced(&job, &model).unwrap();
        assert!((h.factor - 1.0).abs() < 1e-3, "{h:?}");
        let latencies = |j: &Job| {
            run_isolated(std::slice::from_ref(j), &model).unwrap()[0].jobs[0]
                .iterations_ns
                .clone()
        };
        let at = latencies(&at_speed(&job, &h, Speed::Median, &model));
        // The eight a gate counts, equal as recorded, in order at
        // quantiles 0, 1/7, ..., 1 of the three values, each within 0.1%
        // (a proportional step alone would leave 30 us at 24.1, and one
        // secant after it at 31.1).
        let want = [12, 12, 20, 20, 20, 20, 30, 30].map(|u| u * 1_000);
        assert_eq!(at.len(), 10, "{at:?}");
        for (a, w) in at[2..].iter().zip(want) {
            assert!((a - w).abs() <= w / 1_000, "{at:?} against {want:?}");
        }
        // Repeated (a scenario's `repeat`), each pass spreads alike.
        let twice = latencies(&at_speed(&job.repeated(2), &h, Speed::Median, &model));
        assert_eq!(twice.len(), 20, "{twice:?}");
        for (a, w) in twice[12..].iter().zip(want) {
            assert!((a - w).abs() <= w / 1_000, "{twice:?} against {want:?}");
        }
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3, 1, 2]), Some(2.0));
        assert_eq!(median(&[4, 1, 2, 3]), Some(2.5));
    }
}
