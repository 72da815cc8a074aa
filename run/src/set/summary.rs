//! A set's summary: every pair's rows read from its run.json, errors per
//! policy and sample, and FIKIT against time slicing per role.

use super::*;

/// One summary row: a job of a pair under a policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryRow {
    /// The pair.
    pub pair: String,
    /// In or out of sample.
    pub sample: Sample,
    /// The row of the pair's run.
    #[serde(flatten)]
    pub row: Row,
    /// Profile sets its prediction cycled through.
    pub profile_sets: usize,
}

/// Errors of one policy over the pairs of one sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fit {
    /// The policy.
    pub policy: RunPolicy,
    /// In or out of sample.
    pub sample: Sample,
    /// Rows with both a real and a simulated slowdown.
    pub rows: usize,
    /// Median `|simulated − real| / real`.
    pub median_abs_error: f64,
    /// Largest.
    pub worst_abs_error: f64,
    /// Rows whose simulated slowdown lies inside the real range (the
    /// prediction's error is inside the run-to-run spread).
    pub within_spread: usize,
    /// Rows with fikit-sim's range (its `x [lo-hi]`) beside the point.
    #[serde(default)]
    pub with_sim_range: usize,
    /// Of those, the rows whose real median lies inside it.
    #[serde(default)]
    pub in_sim_range: usize,
}

/// A gated policy (FIKIT, preemptive) against time slicing in one pair, the
/// FIKIT paper's measure: the high-priority job's speedup, the
/// low-priority job's ratio, real and simulated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VsTimeslice {
    /// The pair.
    pub pair: String,
    /// In or out of sample.
    pub sample: Sample,
    /// The gated policy.
    pub policy: RunPolicy,
    /// The job.
    pub job: String,
    /// The pair's most urgent job (the lowest priority number in it).
    pub high: bool,
    /// The time-slicing region over this policy's, per repetition.
    pub real: Spread,
    /// The same from the simulated rounds (median).
    pub simulated: Option<f64>,
    /// Their spread over the repetitions (each predicted with the next of
    /// a job's profiles, when it has several).
    pub simulated_spread: Option<Spread>,
    /// Profile sets the pair's prediction cycled through.
    pub profile_sets: usize,
    /// `(simulated − real) / real` of the medians.
    pub error: Option<f64>,
    /// The simulated median lies inside the real range.
    pub within_spread: Option<bool>,
}

/// Errors of the [`VsTimeslice`] figures of one policy, one role (high or
/// low priority) and one sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VsFit {
    /// The gated policy.
    pub policy: RunPolicy,
    /// The high-priority jobs (else the low-priority ones).
    pub high: bool,
    /// In or out of sample.
    pub sample: Sample,
    /// Figures with both a real and a simulated value.
    pub rows: usize,
    /// Median `|simulated − real| / real`.
    pub median_abs_error: f64,
    /// Largest.
    pub worst_abs_error: f64,
    /// Figures whose simulated value lies inside the real range.
    pub within_spread: usize,
}

/// The summary: every row, and the errors per policy and sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// Rows, by pair in the set's order.
    pub rows: Vec<SummaryRow>,
    /// Per policy (but exclusive) and sample.
    pub fits: Vec<Fit>,
    /// The same for the slowdown per iteration (the set-up before the
    /// first iteration left out).
    pub per_iteration_fits: Vec<Fit>,
    /// The slowdown's errors again over the pairs none of whose profiles is
    /// off its runs alone ([`Summary::off_profiles`]): the model's error
    /// with the profiles' host speed set aside. Empty when no profile is
    /// off (the same as `fits`).
    #[serde(default)]
    pub fits_on_true_profiles: Vec<Fit>,
    /// The latency-critical job's (the pair's most urgent) 99th-percentile
    /// iteration: fikit-sim's against the real one (the median over
    /// repetitions), per policy (exclusive too: its p99 alone) and sample.
    /// `within_spread` counts none: the real p99 has no range.
    #[serde(default)]
    pub p99_fits: Vec<Fit>,
    /// The gated policies against time slicing, per complete pair and job.
    pub vs_timeslice: Vec<VsTimeslice>,
    /// Their errors per policy, role and sample.
    pub vs_fits: Vec<VsFit>,
    /// Pairs without a run.json yet.
    pub missing: Vec<String>,
    /// Pairs whose run stopped before its last round: their rows are shown
    /// but not counted in `fits` (fewer repetitions than the set asks).
    pub incomplete: Vec<String>,
    /// Pairs whose runs came from more than one machine (device calls on
    /// different machines, a job's run alone reused from another call):
    /// their ratios compare machines as well as policies.
    pub mixed_machines: Vec<MixedMachines>,
    /// Jobs whose profile is off their real runs alone
    /// ([`Row::profile_vs_alone`]): recorded while the host ran slower or
    /// faster than in the runs.
    #[serde(default)]
    pub off_profiles: Vec<OffProfile>,
}

/// A job whose profile's region alone is off its real regions alone
/// ([`Row::profile_vs_alone`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OffProfile {
    /// The pair whose rounds measured it.
    pub pair: String,
    /// The job.
    pub job: String,
    /// Its profile's region, replayed alone, ms.
    pub profile_region_ms: f64,
    /// Its real regions alone, median, ms.
    pub real_region_ms: f64,
}

/// A pair whose runs came from more than one machine.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MixedMachines {
    /// The pair.
    pub pair: String,
    /// Per machine, the runs (job rounds) it ran, by machine name.
    pub machines: Vec<(String, usize)>,
}

/// The part of a pair's run.json the summary reads.
#[derive(Deserialize)]
pub(super) struct SavedRows {
    rows: Vec<Row>,
    #[serde(default = "yes")]
    complete: bool,
    /// Profile sets the prediction cycled through (run.json files before
    /// it: one).
    #[serde(default = "one")]
    profile_sets: usize,
    #[serde(default)]
    rounds: Vec<SavedRound>,
    /// Name, command and priority of each job (run.json files before them:
    /// none).
    #[serde(default)]
    jobs: Vec<(String, Vec<String>, u8)>,
}

/// Of a saved round, the machine of each job's run.
#[derive(Deserialize)]
pub(super) struct SavedRound {
    jobs: Vec<SavedHost>,
}

/// Of a saved job run, its machine (empty before it was kept).
#[derive(Deserialize)]
pub(super) struct SavedHost {
    #[serde(default)]
    host: String,
}

pub(super) fn yes() -> bool {
    true
}

/// Of `(error, inside the real range)` per row, the rows with a finite
/// error: how many, the median and worst |error|, and how many lie inside
/// the real range; `None` when there are none.
pub(super) fn error_figures(
    of: impl Iterator<Item = (Option<f64>, Option<bool>)>,
) -> Option<(usize, f64, f64, usize)> {
    let of: Vec<(f64, bool)> = of
        .filter_map(|(e, w)| {
            e.filter(|e| e.is_finite())
                .map(|e| (e.abs(), w == Some(true)))
        })
        .collect();
    let errors: Vec<f64> = of.iter().map(|&(e, _)| e).collect();
    let s = Spread::of(&errors)?;
    Some((
        errors.len(),
        s.median,
        s.max,
        of.iter().filter(|&&(_, w)| w).count(),
    ))
}

/// [`error_figures`] of one policy and sample as a [`Fit`].
pub(super) fn fit_of(
    policy: RunPolicy,
    sample: Sample,
    of: impl Iterator<Item = (Option<f64>, Option<bool>)>,
) -> Option<Fit> {
    let (rows, median_abs_error, worst_abs_error, within_spread) = error_figures(of)?;
    Some(Fit {
        policy,
        sample,
        rows,
        median_abs_error,
        worst_abs_error,
        within_spread,
        with_sim_range: 0,
        in_sim_range: 0,
    })
}

/// `fit` with the count of `ranges` (per row, whether its real median lies
/// inside fikit-sim's range; `None` without a range).
pub(super) fn with_ranges(mut fit: Fit, ranges: impl Iterator<Item = Option<bool>>) -> Fit {
    for inside in ranges.flatten() {
        fit.with_sim_range += 1;
        fit.in_sim_range += usize::from(inside);
    }
    fit
}

/// Builds the summary from `out/<pair>/run.json` of every pair of `set`.
pub fn summarize(set: &Set, out: &Path) -> Result<Summary, String> {
    let mut rows = Vec::new();
    let mut missing = Vec::new();
    let mut incomplete = Vec::new();
    let mut mixed_machines = Vec::new();
    for p in &set.pairs {
        let path = out.join(&p.name).join("run.json");
        if !path.is_file() {
            missing.push(p.name.clone());
            continue;
        }
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let saved: SavedRows = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a fikit-run run.json: {e}", path.display()))?;
        // A run of other jobs (the set edited since, or the wrong folder)
        // would be summarized as the pair's.
        let asked: Vec<(&str, u8)> = p
            .jobs
            .iter()
            .map(|n| (n.as_str(), set.jobs.get(n).map_or(u8::MAX, |j| j.priority)))
            .collect();
        crate::saved::check_jobs(
            &path,
            &saved.jobs,
            &asked,
            &format!("the set's pair {}", p.name),
        )?;
        if !saved.complete {
            incomplete.push(p.name.clone());
        } else if saved.rows.is_empty() {
            // Every complete run has a row a job and policy: the pair would
            // drop out of the summary unnamed.
            return Err(format!(
                "{}: a complete run with no rows (fikit-run writes one a job and policy)",
                path.display()
            ));
        }
        let mut machines = std::collections::BTreeMap::<String, usize>::new();
        for j in saved.rounds.iter().flat_map(|r| &r.jobs) {
            if !j.host.is_empty() {
                *machines.entry(j.host.clone()).or_default() += 1;
            }
        }
        if machines.len() > 1 {
            mixed_machines.push(MixedMachines {
                pair: p.name.clone(),
                machines: machines.into_iter().collect(),
            });
        }
        rows.extend(saved.rows.into_iter().map(|row| SummaryRow {
            pair: p.name.clone(),
            sample: p.sample,
            row,
            profile_sets: saved.profile_sets,
        }));
    }
    let mut off_profiles: Vec<OffProfile> = Vec::new();
    for x in &rows {
        if let (Some((_, true)), Some(sim), Some(real)) = (
            x.row.profile_vs_alone(),
            x.row.sim_region_ms,
            x.row.region_ms,
        ) {
            off_profiles.push(OffProfile {
                pair: x.pair.clone(),
                job: x.row.job.clone(),
                profile_region_ms: sim,
                real_region_ms: real.median,
            });
        }
    }
    let off_pair = |pair: &str| off_profiles.iter().any(|p| p.pair == pair);
    let fits_of = |error: fn(&Row) -> (Option<f64>, Option<bool>), true_profiles: bool| {
        let mut fits = Vec::new();
        for &policy in set.policies.iter().filter(|&&p| p != RunPolicy::Exclusive) {
            for sample in [Sample::In, Sample::Out] {
                let of = || {
                    rows.iter()
                        .filter(move |r| r.sample == sample && r.row.policy == policy)
                        .filter(|r| !incomplete.contains(&r.pair))
                        .filter(move |r| !true_profiles || !off_pair(&r.pair))
                };
                let fit = fit_of(policy, sample, of().map(|r| error(&r.row)));
                fits.extend(fit.map(|f| with_ranges(f, of().map(|r| r.row.in_sim_range))));
            }
        }
        fits
    };
    let fits = fits_of(|r| (r.error, r.within_spread), false);
    let per_iteration_fits = fits_of(|r| (r.per_iteration_error, r.per_iteration_within), false);
    let fits_on_true_profiles = if off_profiles.is_empty() {
        Vec::new()
    } else {
        fits_of(|r| (r.error, r.within_spread), true)
    };
    let urgent = |x: &SummaryRow| {
        rows.iter()
            .filter(|y| y.pair == x.pair)
            .map(|y| y.row.priority)
            .min()
            == Some(x.row.priority)
    };
    let mut p99_fits = Vec::new();
    for &policy in &set.policies {
        for sample in [Sample::In, Sample::Out] {
            let of = || {
                rows.iter()
                    .filter(move |r| r.sample == sample && r.row.policy == policy)
                    .filter(|r| !incomplete.contains(&r.pair) && urgent(r))
            };
            let errors = of().map(|r| {
                let e = match (r.row.sim_p99_ms, r.row.p99_ms) {
                    (Some(s), Some(real)) if real > 0.0 => Some((s - real) / real),
                    _ => None,
                };
                (e, None)
            });
            let fit = fit_of(policy, sample, errors);
            p99_fits.extend(fit.map(|f| with_ranges(f, of().map(|r| r.row.p99_in_sim_range))));
        }
    }
    let mut vs_timeslice = Vec::new();
    for x in rows.iter().filter(|x| !incomplete.contains(&x.pair)) {
        let gated = matches!(x.row.policy, RunPolicy::Fikit | RunPolicy::Preemptive);
        let Some(real) = x.row.vs_timeslice.filter(|_| gated) else {
            continue;
        };
        let simulated = x.row.sim_vs_timeslice.map(|s| s.median);
        vs_timeslice.push(VsTimeslice {
            pair: x.pair.clone(),
            sample: x.sample,
            policy: x.row.policy,
            job: x.row.job.clone(),
            high: urgent(x),
            real,
            simulated,
            simulated_spread: x.row.sim_vs_timeslice,
            profile_sets: x.profile_sets,
            error: simulated.map(|s| (s - real.median) / real.median),
            within_spread: simulated.map(|s| real.min <= s && s <= real.max),
        });
    }
    let mut vs_fits = Vec::new();
    for policy in [RunPolicy::Fikit, RunPolicy::Preemptive] {
        for high in [true, false] {
            for sample in [Sample::In, Sample::Out] {
                let of = vs_timeslice
                    .iter()
                    .filter(|v| v.policy == policy && v.high == high && v.sample == sample)
                    .map(|v| (v.error, v.within_spread));
                let Some((n, median, worst, within)) = error_figures(of) else {
                    continue;
                };
                vs_fits.push(VsFit {
                    policy,
                    high,
                    sample,
                    rows: n,
                    median_abs_error: median,
                    worst_abs_error: worst,
                    within_spread: within,
                });
            }
        }
    }
    Ok(Summary {
        rows,
        fits,
        per_iteration_fits,
        fits_on_true_profiles,
        p99_fits,
        vs_timeslice,
        vs_fits,
        missing,
        incomplete,
        mixed_machines,
        off_profiles,
    })
}
