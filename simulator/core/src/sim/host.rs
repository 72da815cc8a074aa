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
            (r, Some(job.steps.len() / r.steps.len()))
        }
        _ => return None,
    };
    if target.0.is_empty() {
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
mod tests;
