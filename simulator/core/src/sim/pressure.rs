//! How hard a job's kernels press on a neighbour under MPS, from
//! `fikit-profile`'s pressure pass: the victim's slowdown while the job's
//! kernels overlapped it (`s`, measured in [`fikit_trace::pressure`], kept
//! in the trace's characterization) and the job's one-wave SM share `w`,
//! time-weighted over its steady kernels' time
//! ([`crate::sim::job::Occupancy::demand`]).
//!
//! The model makes a latency-bound kernel beside kernels holding a share `o`
//! of the SMs run `1 + c o` slower ([`crate::sim::gpu::corun_factor`]), so a
//! job that pressed like the model's load would give `s = 1 + c w`. The
//! job's weight is what its kernels press with instead:
//! `(s - 1) / (c w)`, clamped to 0..=1 ([`weight`]; 1 where the pass found
//! the victim past any slowdown). The rule was fixed before any co-run was
//! read with it (the lab log, 2026-11-26).

use fikit_trace::Trace;
use fikit_trace::pressure::{PressureError, PressurePass, measure, steady_from};

use crate::sim::gpu::GpuModel;
use crate::sim::job::{Job, Occupancy, blocks_per_sm};

/// The pressure pass's figures for one job, as `fikit-lab pressure`
/// prints them.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PressureFit {
    /// What the pass measured of the victim.
    #[serde(flatten)]
    pub pass: PressurePass,
    /// The job's one-wave SM share, time-weighted over its steady kernels.
    pub share: f64,
    /// The job's mean host delay before a launch in the pass, ns
    /// ([`Job::host_ns_per_launch`]): its host beside a busy neighbour
    /// under MPS, which the weight does not use. `None` without launches.
    pub host_ns_per_launch: Option<f64>,
}

impl PressureFit {
    /// The job's weight under a model whose latency-bound kernels slow
    /// `1 + c o` beside a share `o` ([`weight`]).
    pub fn weight(&self, c: f64) -> f64 {
        weight(self.pass.slowdown, c, self.share)
    }
}

/// A job's weight from the victim's slowdown `slowdown` beside it, the
/// model's `c` and the job's share `share`: `(s - 1) / (c w)`, clamped to
/// 0..=1; 1 where the victim was past any slowdown, or `c` or `w` is 0.
pub fn weight(slowdown: Option<f64>, c: f64, share: f64) -> f64 {
    match slowdown {
        Some(s) if c > 0.0 && share > 0.0 => ((s - 1.0) / (c * share)).clamp(0.0, 1.0),
        _ => 1.0,
    }
}

/// Sets each job's [`Job::pressure_weight`] from its pressure pass for
/// `model` (MPS is the policy that reads it), unless `as_profiled`; returns
/// the line that names each job's weight, or why it presses as the model
/// weighs it. The one path of every command that predicts.
pub fn set_measured_pressure(jobs: &mut [Job], model: &GpuModel, as_profiled: bool) -> String {
    if as_profiled {
        return "MPS pressure: every kernel as the model weighs it (--as-profiled)".to_string();
    }
    if jobs.iter().all(|j| j.measured_pressure.is_none()) {
        return "MPS pressure: every kernel as the model weighs it: no trace has a pressure pass (fikit-profile makes one where it can start MPS)".to_string();
    }
    let each: Vec<String> = jobs
        .iter_mut()
        .map(|j| match (j.measured_pressure, measured_weight(j, model)) {
            (Some(m), Some(w)) => {
                *j = j.with_pressure_weight(w);
                let victim = match m.slowdown {
                    Some(s) => format!("{s:.2}x"),
                    None => "past any slowdown".to_string(),
                };
                format!("{} {w:.2} (the victim {victim} beside it)", j.name)
            }
            _ => format!("{} as the model weighs it (no pressure pass)", j.name),
        })
        .collect();
    format!("MPS pressure, each job's weight: {}", each.join(", "))
}

/// `job`'s weight on `model` from its pressure pass ([`weight`]); `None`
/// without one.
pub fn measured_weight(job: &Job, model: &GpuModel) -> Option<f64> {
    job.measured_pressure
        .map(|m| weight(m.slowdown, model.corun_slowdown, m.share))
}

/// The pressure pass's figures from the job's trace and the victim's (both
/// recorded in the pass).
pub fn fit(job: &Trace, victim: &Trace) -> Result<PressureFit, PressureError> {
    Ok(PressureFit {
        pass: measure(job, victim)?,
        share: share(job),
        host_ns_per_launch: Job::from_trace(job).host_ns_per_launch(),
    })
}

/// The job's one-wave SM share, time-weighted over the kernels of its
/// steady part (after the first fifth of its kernels).
pub fn share(job: &Trace) -> f64 {
    let d = &job.meta.device;
    let from = steady_from(job);
    let (mut weighted, mut time) = (0.0, 0.0);
    for k in job.kernels.iter().filter(|k| k.start_ns > from) {
        let per_sm = blocks_per_sm(
            d,
            k.threads_per_block(),
            k.registers_per_thread,
            u64::from(k.static_shared_bytes) + u64::from(k.dynamic_shared_bytes),
        );
        let blocks = k.grid.iter().map(|&g| u64::from(g.max(1))).product();
        let dur = k.duration_ns().max(0) as f64;
        weighted += Occupancy::new(blocks, per_sm, d.sm_count).demand * dur;
        time += dur;
    }
    if time > 0.0 { weighted / time } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fikit_trace::fixture;

    /// A trace of kernels `(start, end)` on a device of 10 SMs, each kernel
    /// `grid` blocks of 1,024 threads (two fit on an SM).
    fn trace(spans: &[(i64, i64)], grid: u32) -> Trace {
        fixture::kernel_spans("job", 10, spans, grid)
    }

    /// The job keeps one kernel of 4 blocks (a fifth of the 20 slots)
    /// running from 2,000 to 10,000 ns; the victim runs 100 ns alone and
    /// 150 ns beside it (`s` = 1.5).
    fn pass() -> (Trace, Trace) {
        let job: Vec<(i64, i64)> = (0..80)
            .map(|i| (2_000 + i * 100, 2_100 + i * 100))
            .collect();
        let mut victim: Vec<(i64, i64)> = (0..10).map(|i| (i * 150, i * 150 + 100)).collect();
        victim.extend((0..20).map(|i| (4_000 + i * 200, 4_150 + i * 200)));
        (trace(&job, 4), trace(&victim, 1))
    }

    #[test]
    fn the_weight_is_the_stretch_over_what_the_model_would_press() {
        let (job, victim) = pass();
        let f = fit(&job, &victim).unwrap();
        assert!((f.share - 0.2).abs() < 1e-12);
        assert!((f.pass.slowdown.unwrap() - 1.5).abs() < 1e-9);
        assert_eq!(
            f.host_ns_per_launch,
            Job::from_trace(&job).host_ns_per_launch(),
            "the job's own host figure, from its trace in the pass"
        );
        // s - 1 = 0.5 = c w x weight, w = 0.2: with c = 2.5 the model's
        // full pressure (weight 1); with c = 5 half of it; with c = 1 past
        // it (2.5, clamped to 1).
        assert!((f.weight(2.5) - 1.0).abs() < 1e-9);
        assert!((f.weight(5.0) - 0.5).abs() < 1e-9);
        assert_eq!(f.weight(1.0), 1.0);
    }

    #[test]
    fn no_slowdown_weighs_nothing_and_past_any_weighs_one() {
        assert_eq!(weight(Some(1.0), 2.67, 0.3), 0.0);
        assert_eq!(weight(None, 2.67, 0.3), 1.0);
        assert_eq!(weight(Some(1.2), 0.0, 0.3), 1.0, "a model without c");
        assert_eq!(weight(Some(1.2), 2.0, 0.0), 1.0, "a job without share");
        assert!((weight(Some(1.3), 2.0, 0.3) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn jobs_with_a_pass_get_their_weight_the_others_none() {
        use crate::sim::job::MeasuredPressure;
        let model = GpuModel {
            corun_slowdown: 2.0,
            ..Default::default()
        };
        let (job, _) = pass();
        let mut a = Job::from_trace(&job);
        a.name = "a".into();
        a.measured_pressure = Some(MeasuredPressure {
            slowdown: Some(1.3),
            share: 0.3,
        });
        let mut b = a.clone();
        b.name = "b".into();
        b.measured_pressure = None;
        let mut jobs = vec![a, b];
        let line = set_measured_pressure(&mut jobs.clone(), &model, true);
        assert!(line.contains("--as-profiled"), "{line}");
        let line = set_measured_pressure(&mut jobs, &model, false);
        // (1.3 - 1) / (2 x 0.3) = 0.5.
        assert!((jobs[0].pressure_weight.unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(jobs[1].pressure_weight, None);
        assert_eq!(
            line,
            "MPS pressure, each job's weight: a 0.50 (the victim 1.30x beside it), b as the model weighs it (no pressure pass)"
        );
        let mut none = vec![jobs[1].clone()];
        assert!(
            set_measured_pressure(&mut none, &model, false)
                .contains("no trace has a pressure pass")
        );
    }
}
