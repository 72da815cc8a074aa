//! A validation set: pairs of real commands, each job profiled alone with
//! `fikit-profile`, each pair run under the set's policies as a scenario
//! would be (its own folder, `run.json`, `table.txt`), and a summary of the
//! simulated against the real slowdowns, in sample and out of sample.
//!
//! ```json
//! {
//!   "repetitions": 3,
//!   "policies": ["exclusive", "timeslice", "mps"],
//!   "jobs": {
//!     "infer": {"priority": 0, "command": ["python3", "infer.py"]},
//!     "train": {"priority": 9, "command": ["python3", "train.py"], "profile": "train.parquet"}
//!   },
//!   "pairs": [{"name": "infer-train", "jobs": ["infer", "train"], "sample": "out"}]
//! }
//! ```
//! `sample` is `in` (results may guide the model) or `out` (out of sample:
//! only reported). A job's `profile` (relative to the set file) skips its
//! profiling run. `"profiles": N` (default 1) profiles each other job N
//! times (`OUT/profiles/JOB.parquet`, then `OUT/profiles/2/JOB.parquet` …):
//! the first drives the gate, and each repetition is predicted with the
//! next (see the scenario's `more_profiles`). Commands run as given, in the
//! current folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::report::{Row, Spread, against};
use crate::scenario::{JobSpec, RunPolicy, Scenario};

/// Whether a pair may guide the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sample {
    /// In sample: may be used to choose or tune.
    In,
    /// Out of sample: only reported.
    Out,
}

impl Sample {
    /// `in` or `out`.
    pub fn name(self) -> &'static str {
        match self {
            Sample::In => "in",
            Sample::Out => "out",
        }
    }
}

/// One job of a set.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetJob {
    /// 0 (highest) to 9.
    pub priority: u8,
    /// The command and its arguments, run as is.
    pub command: Vec<String>,
    /// Its profile, when one exists (relative to the set file).
    #[serde(default)]
    pub profile: Option<PathBuf>,
}

/// One pair of a set.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetPair {
    /// Its name: its output folder (letters, digits, `.`, `_`, `-`).
    pub name: String,
    /// The jobs run together (names in `jobs`), 2 or more.
    pub jobs: Vec<String>,
    /// In or out of sample.
    pub sample: Sample,
}

/// A validation set.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Set {
    /// What the set is (free text).
    #[serde(default)]
    pub about: String,
    /// Repetitions of every policy per pair.
    #[serde(default = "three")]
    pub repetitions: usize,
    /// The policies (default: exclusive, timeslice, mps).
    #[serde(default)]
    pub policies: Vec<RunPolicy>,
    /// Profiles of each job run alone (default 1), for the prediction's
    /// spread over them.
    #[serde(default = "one")]
    pub profiles: usize,
    /// The jobs by name.
    pub jobs: BTreeMap<String, SetJob>,
    /// The pairs.
    pub pairs: Vec<SetPair>,
}

fn three() -> usize {
    3
}

fn one() -> usize {
    1
}

/// The most profiles per job a set may ask for.
pub const MAX_PROFILES: usize = 9;

/// Whether `name` can name a file or folder under the output folder: letters,
/// digits, `.`, `_` and `-`, not starting with `.`, and none of the set's own
/// outputs (`profiles`, `summary.*`).
fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name != "profiles"
        && !name.starts_with("summary.")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

impl Set {
    /// Reads and checks a set file: a message naming the file and field.
    pub fn load(path: &Path) -> Result<Set, String> {
        let p = path.display();
        let text = std::fs::read_to_string(path).map_err(|e| format!("{p}: {e}"))?;
        let mut s: Set = serde_json::from_str(&text).map_err(|e| format!("{p}: {e}"))?;
        s.check().map_err(|m| format!("{p}: {m}"))?;
        let base = path.parent().unwrap_or(Path::new(""));
        for j in s.jobs.values_mut() {
            if let Some(pr) = &j.profile
                && pr.is_relative()
            {
                j.profile = Some(base.join(pr));
            }
        }
        Ok(s)
    }

    /// Checks the fields; the message names the field.
    pub fn check(&mut self) -> Result<(), String> {
        if self.policies.is_empty() {
            self.policies = vec![RunPolicy::Exclusive, RunPolicy::Timeslice, RunPolicy::Mps];
        }
        if !self.policies.contains(&RunPolicy::Exclusive) {
            return Err("policies: exclusive is needed (every slowdown is against it)".into());
        }
        if self.pairs.is_empty() {
            return Err("pairs: none".into());
        }
        if !(1..=MAX_PROFILES).contains(&self.profiles) {
            return Err(format!(
                "profiles: {}; use 1 to {MAX_PROFILES}",
                self.profiles
            ));
        }
        for (name, j) in &self.jobs {
            if !plain_name(name) {
                return Err(format!(
                    "jobs.{name:?}: a job's name names its profile: letters, digits, '.', '_' and '-' only"
                ));
            }
            if j.command.is_empty() || j.command[0].is_empty() {
                return Err(format!("jobs.{name}.command: empty"));
            }
            if j.priority > 9 {
                return Err(format!(
                    "jobs.{name}.priority: {}; use 0 (highest) to 9",
                    j.priority
                ));
            }
        }
        let mut names = std::collections::HashSet::new();
        for (i, p) in self.pairs.iter().enumerate() {
            if !plain_name(&p.name) || !names.insert(p.name.as_str()) {
                return Err(format!(
                    "pairs[{i}].name: {:?} is used twice or is no folder name of letters, digits, '.', '_' and '-' (nor \"profiles\" or \"summary.*\")",
                    p.name
                ));
            }
            if p.jobs.len() < 2 {
                return Err(format!("pairs[{i}].jobs: a pair has 2 jobs or more"));
            }
            for j in &p.jobs {
                if !self.jobs.contains_key(j) {
                    return Err(format!("pairs[{i}].jobs: {j:?} is not in jobs"));
                }
            }
        }
        // Each pair must make a valid scenario (job count, repetitions);
        // every job will have a profile by then (profiled first).
        let profiled: BTreeMap<String, Vec<PathBuf>> = self
            .jobs
            .keys()
            .map(|n| (n.clone(), vec![PathBuf::from(format!("{n}.parquet"))]))
            .collect();
        for (i, p) in self.pairs.iter().enumerate() {
            let mut s = self.scenario(p, &profiled);
            s.check().map_err(|m| format!("pairs[{i}]: {m}"))?;
        }
        Ok(())
    }

    /// The jobs the pairs use, in name order.
    pub fn used_jobs(&self) -> Vec<&str> {
        Set::jobs_of(&self.pairs)
    }

    /// The jobs of `pairs`, in name order.
    pub fn jobs_of<'a>(pairs: impl IntoIterator<Item = &'a SetPair>) -> Vec<&'a str> {
        let mut v: Vec<&str> = pairs
            .into_iter()
            .flat_map(|p| p.jobs.iter().map(String::as_str))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Pair `p` as a scenario, with each job's profiles from `profiles` (by
    /// job name; the first drives the gate, the rest only the prediction).
    pub fn scenario(&self, p: &SetPair, profiles: &BTreeMap<String, Vec<PathBuf>>) -> Scenario {
        Scenario {
            jobs: p
                .jobs
                .iter()
                .map(|name| {
                    let j = &self.jobs[name];
                    JobSpec {
                        name: name.clone(),
                        command: j.command.clone(),
                        priority: j.priority,
                        profile: profiles.get(name).and_then(|v| v.first()).cloned(),
                        more_profiles: profiles
                            .get(name)
                            .map(|v| v.iter().skip(1).cloned().collect())
                            .unwrap_or_default(),
                        start: None,
                    }
                })
                .collect(),
            policies: self.policies.clone(),
            repetitions: self.repetitions,
        }
    }
}

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
struct SavedRows {
    rows: Vec<Row>,
    #[serde(default = "yes")]
    complete: bool,
    /// Profile sets the prediction cycled through (run.json files before
    /// it: one).
    #[serde(default = "one")]
    profile_sets: usize,
    #[serde(default)]
    rounds: Vec<SavedRound>,
}

/// Of a saved round, the machine of each job's run.
#[derive(Deserialize)]
struct SavedRound {
    jobs: Vec<SavedHost>,
}

/// Of a saved job run, its machine (empty before it was kept).
#[derive(Deserialize)]
struct SavedHost {
    #[serde(default)]
    host: String,
}

fn yes() -> bool {
    true
}

/// Of `(error, inside the real range)` per row, the rows with a finite
/// error: how many, the median and worst |error|, and how many lie inside
/// the real range; `None` when there are none.
fn error_figures(
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
fn fit_of(
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
    })
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
        if !saved.complete {
            incomplete.push(p.name.clone());
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
                let of = rows
                    .iter()
                    .filter(|r| r.sample == sample && r.row.policy == policy)
                    .filter(|r| !incomplete.contains(&r.pair))
                    .filter(|r| !true_profiles || !off_pair(&r.pair))
                    .map(|r| error(&r.row));
                fits.extend(fit_of(policy, sample, of));
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
    let mut vs_timeslice = Vec::new();
    for x in rows.iter().filter(|x| !incomplete.contains(&x.pair)) {
        let gated = matches!(x.row.policy, RunPolicy::Fikit | RunPolicy::Preemptive);
        let Some(real) = x.row.vs_timeslice.filter(|_| gated) else {
            continue;
        };
        let top = rows
            .iter()
            .filter(|y| y.pair == x.pair)
            .map(|y| y.row.priority)
            .min();
        let simulated = x.row.sim_vs_timeslice.map(|s| s.median);
        vs_timeslice.push(VsTimeslice {
            pair: x.pair.clone(),
            sample: x.sample,
            policy: x.row.policy,
            job: x.row.job.clone(),
            high: top == Some(x.row.priority),
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
        vs_timeslice,
        vs_fits,
        missing,
        incomplete,
        mixed_machines,
        off_profiles,
    })
}

/// What the FIKIT paper (arXiv 2311.10359) reports against default sharing.
pub const PAPER_FIKIT: &str = "the FIKIT paper reports 1.32-16.41x for the high-priority job and 0.86-1x for the low-priority one";

fn role(high: bool) -> &'static str {
    if high { "high" } else { "low" }
}

/// A table of the summaries' style with `header`.
fn table_with<const N: usize>(header: [&str; N]) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header(header);
    t
}

fn signed_pct(e: Option<f64>, within: Option<bool>) -> String {
    e.map_or("-".into(), |e| {
        format!(
            "{:+.1}%{}",
            e * 100.0,
            if within == Some(true) {
                " (in range)"
            } else {
                ""
            }
        )
    })
}

/// The gated policies against time slicing as text (empty without any).
fn vs_timeslice_text(s: &Summary) -> String {
    if s.vs_timeslice.is_empty() {
        return String::new();
    }
    let mut f = table_with([
        "policy",
        "job",
        "sample",
        "pairs",
        "median |error|",
        "worst |error|",
        "inside the real range",
    ]);
    for v in &s.vs_fits {
        f.add_row([
            v.policy.name().to_string(),
            role(v.high).to_string(),
            v.sample.name().to_string(),
            v.rows.to_string(),
            pct(v.median_abs_error),
            pct(v.worst_abs_error),
            format!("{}/{}", v.within_spread, v.rows),
        ]);
    }
    let mut t = table_with([
        "pair",
        "sample",
        "policy",
        "job",
        "priority",
        "real vs timeslice",
        "simulated",
        "error",
    ]);
    for v in &s.vs_timeslice {
        t.add_row([
            v.pair.clone(),
            v.sample.name().to_string(),
            v.policy.name().to_string(),
            v.job.clone(),
            role(v.high).to_string(),
            spread(Some(v.real)),
            simulated_text(v),
            signed_pct(v.error, v.within_spread),
        ]);
    }
    format!(
        "against time slicing (time-slicing region over the policy's, per repetition: the high-priority job's speedup, the low-priority job's ratio; {PAPER_FIKIT}), complete pairs\n{f}\n{t}\n"
    )
}

fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

/// A simulated figure against time slicing: its median, with its spread
/// over the repetitions where they were predicted with several profiles.
fn simulated_text(v: &VsTimeslice) -> String {
    if v.profile_sets > 1 {
        spread(v.simulated_spread)
    } else {
        v.simulated.map_or("-".into(), |x| format!("{x:.2}x"))
    }
}

fn spread(s: Option<Spread>) -> String {
    s.map_or("-".into(), |s| {
        format!("{:.2}x [{:.2}-{:.2}]", s.median, s.min, s.max)
    })
}

/// The errors per policy and sample as a text table.
fn fits_table<'a>(fits: impl IntoIterator<Item = &'a Fit>) -> comfy_table::Table {
    let mut t = table_with([
        "policy",
        "sample",
        "rows",
        "median |error|",
        "worst |error|",
        "inside the real range",
    ]);
    for f in fits {
        t.add_row([
            f.policy.name().to_string(),
            f.sample.name().to_string(),
            f.rows.to_string(),
            pct(f.median_abs_error),
            pct(f.worst_abs_error),
            format!("{}/{}", f.within_spread, f.rows),
        ]);
    }
    t
}

/// An exclusive row's [`Row::profile_vs_alone`]: "1.02x", or "1.31x
/// (off)" for a profile off the real runs alone; "-" in other rows.
fn profile_vs_alone(row: &Row) -> String {
    row.profile_vs_alone().map_or("-".into(), |(r, off)| {
        format!("{r:.2}x{}", if off { " (off)" } else { "" })
    })
}

/// Several sets' summaries read together (`fikit-run --combine`): e.g. one
/// set's rounds on several machines, each machine's `--set` folder with its
/// own `summary.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct Combined {
    /// Each summary file and its rows with an error (complete pairs only).
    pub sources: Vec<(PathBuf, usize)>,
    /// Whether each job's rows were pooled ([`Combine::Pool`]).
    pub pooled: bool,
    /// Per policy (but exclusive) and sample over every source's rows,
    /// each with its row of the worst |error|.
    pub fits: Vec<(Fit, WorstRow)>,
    /// Every row with an error, in the order each first appears: one per
    /// summary, or pooled one per job.
    pub rows: Vec<CombinedRow>,
}

/// One row of [`Combined`]: a job's real and simulated slowdown under one
/// policy, from one summary or pooled over several.
#[derive(Debug, Clone, PartialEq)]
pub struct CombinedRow {
    /// The summaries it comes from, as indices into [`Combined::sources`].
    pub from: Vec<usize>,
    /// Its pair.
    pub pair: String,
    /// Its sample.
    pub sample: Sample,
    /// Its policy.
    pub policy: RunPolicy,
    /// Its job.
    pub job: String,
    /// The co-runs it counts.
    pub co_runs: usize,
    /// The real slowdown: median and range over those co-runs.
    pub real: Spread,
    /// The simulated slowdown (the median of the predictions).
    pub simulated: f64,
    /// `(simulated - real) / real` of the medians.
    pub error: f64,
    /// Whether the simulated figure is inside the real range, as the
    /// summary's row (or the pooling) says.
    pub within: bool,
}

/// How [`combine`] sets several summaries' rows together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// Each summary's rows as they are: one error per machine and job.
    Rows,
    /// Each job (pair, sample, policy and job) once: its real slowdown the
    /// median over every summary's counted repetitions, its simulated one
    /// the median over their predictions, and its error between the two;
    /// its range the least and greatest repetition. The real figure of a
    /// job is then the median of all its repetitions on every machine.
    Pool,
}

/// The row of a [`Fit`]'s worst |error| among several summaries.
#[derive(Debug, Clone, PartialEq)]
pub struct WorstRow {
    /// The summary file it is in; `None` for a row pooled over them.
    pub source: Option<PathBuf>,
    /// Its pair.
    pub pair: String,
    /// Its job.
    pub job: String,
    /// Its signed error, `(simulated - real) / real`.
    pub error: f64,
}

/// Reads each `summary.json` (what `--set` writes) and sets the errors of
/// all their rows together, per policy and sample, leaving out each file's
/// incomplete pairs as its own summary does; `how` pools each job's
/// repetitions or keeps each file's rows. Bad input: a file that cannot be
/// read or is not such a summary, and, to pool, a row with an error but
/// without its repetitions' figures (a summary from before they were kept).
pub fn combine(files: &[PathBuf], how: Combine) -> Result<Combined, String> {
    #[derive(Deserialize)]
    struct Saved {
        rows: Vec<SummaryRow>,
        #[serde(default)]
        incomplete: Vec<String>,
    }
    let mut rows: Vec<(usize, SummaryRow)> = Vec::new();
    let mut sources = Vec::new();
    for (k, f) in files.iter().enumerate() {
        let text = std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
        let saved: Saved = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a fikit-run --set summary.json: {e}", f.display()))?;
        let mut kept: Vec<SummaryRow> = saved
            .rows
            .into_iter()
            .filter(|r| !saved.incomplete.contains(&r.pair))
            .collect();
        let with_error = kept
            .iter()
            .filter(|r| r.row.error.is_some_and(f64::is_finite))
            .count();
        if how == Combine::Pool {
            if let Some(r) = fill_repetitions(&mut kept) {
                return Err(format!(
                    "{}: {} in {} ({}) has no per-repetition slowdowns to pool; rebuild the summary with --set SET --resimulate -o FOLDER",
                    f.display(),
                    r.row.job,
                    r.pair,
                    r.row.policy.name()
                ));
            }
        }
        sources.push((f.clone(), with_error));
        rows.extend(kept.into_iter().map(|r| (k, r)));
    }
    let rows: Vec<(Vec<usize>, SummaryRow)> = match how {
        Combine::Rows => rows.into_iter().map(|(k, r)| (vec![k], r)).collect(),
        Combine::Pool => pool(rows),
    };
    // Every shared-policy row with an error; the errors per policy and
    // sample and each one's worst row are read from these.
    let rows: Vec<CombinedRow> = rows
        .into_iter()
        .filter(|(_, r)| r.row.policy != RunPolicy::Exclusive)
        .filter_map(|(from, r)| {
            let error = r.row.error.filter(|e| e.is_finite())?;
            Some(CombinedRow {
                co_runs: r.row.co_runs.unwrap_or(0),
                real: r.row.slowdown?,
                simulated: r.row.sim_slowdown?.median,
                error,
                within: r.row.within_spread.unwrap_or(false),
                from,
                pair: r.pair,
                sample: r.sample,
                policy: r.row.policy,
                job: r.row.job,
            })
        })
        .collect();
    let mut fits = Vec::new();
    for policy in RunPolicy::ALL
        .into_iter()
        .filter(|&p| p != RunPolicy::Exclusive)
    {
        for sample in [Sample::In, Sample::Out] {
            let of: Vec<&CombinedRow> = rows
                .iter()
                .filter(|r| r.sample == sample && r.policy == policy)
                .collect();
            let Some(fit) = fit_of(
                policy,
                sample,
                of.iter().map(|r| (Some(r.error), Some(r.within))),
            ) else {
                continue;
            };
            let Some(w) = of
                .iter()
                .max_by(|a, b| a.error.abs().total_cmp(&b.error.abs()))
            else {
                continue;
            };
            fits.push((
                fit,
                WorstRow {
                    source: match w.from.as_slice() {
                        [k] => Some(files[*k].clone()),
                        _ => None,
                    },
                    pair: w.pair.clone(),
                    job: w.job.clone(),
                    error: w.error,
                },
            ));
        }
    }
    Ok(Combined {
        sources,
        pooled: how == Combine::Pool,
        fits,
        rows,
    })
}

/// For [`Combine::Pool`]: gives each of one summary's rows without
/// [`Row::slowdowns`] its figures from its spreads ([`from_spread`]) where
/// the job's runs alone of the same pair all exited 0; returns the first
/// row with an error still without them, which cannot be pooled.
fn fill_repetitions(rows: &mut [SummaryRow]) -> Option<&SummaryRow> {
    for i in 0..rows.len() {
        let r = &rows[i];
        if !r.row.slowdowns.is_empty() {
            continue;
        }
        let n = r.row.co_runs.unwrap_or(0);
        let alone_ok = rows.iter().any(|o| {
            o.pair == r.pair
                && o.row.job == r.row.job
                && o.row.policy == RunPolicy::Exclusive
                && o.row.ok_runs == o.row.runs
                && o.row.runs >= n
        });
        if let Some((real, sim)) = from_spread(&r.row).filter(|_| alone_ok) {
            rows[i].row.slowdowns = real;
            rows[i].row.sim_slowdowns = sim;
        }
    }
    rows.iter().find(|r| {
        r.row.error.is_some_and(f64::is_finite)
            && (r.row.slowdowns.is_empty() || r.row.sim_slowdowns.is_empty())
    })
}

/// A row's per-repetition slowdowns, real and simulated, read back from
/// its spreads where they hold them all: at most three repetitions, every
/// one a co-run that exited 0 (the least, median and greatest of three
/// figures are the figures; of two, the least and greatest). For summaries
/// from before [`Row::slowdowns`] was kept; exact when the job's runs
/// alone of the same pair exited 0 too, which the caller checks. `None`
/// otherwise.
fn from_spread(row: &Row) -> Option<(Vec<f64>, Vec<f64>)> {
    let n = row.co_runs?;
    if !(1..=3).contains(&n) || row.runs != n || row.ok_runs != n {
        return None;
    }
    let figures = |s: Spread| match n {
        1 => vec![s.median],
        2 => vec![s.min, s.max],
        _ => vec![s.min, s.median, s.max],
    };
    Some((figures(row.slowdown?), figures(row.sim_slowdown?)))
}

/// [`Combine::Pool`]: one row per pair, sample, policy and job, in the
/// order each first appears, its repetitions those of every summary's row
/// of it, with the summaries it comes from (rows without an error pass
/// through as they are, one per summary).
fn pool(rows: Vec<(usize, SummaryRow)>) -> Vec<(Vec<usize>, SummaryRow)> {
    let mut out: Vec<(Vec<usize>, SummaryRow)> = Vec::new();
    for (k, r) in rows {
        if !r.row.error.is_some_and(f64::is_finite) {
            out.push((vec![k], r));
            continue;
        }
        let same = |o: &SummaryRow| {
            o.pair == r.pair
                && o.sample == r.sample
                && o.row.policy == r.row.policy
                && o.row.job == r.row.job
                && o.row.error.is_some()
        };
        match out.iter_mut().find(|(_, o)| same(o)) {
            Some((from, o)) => {
                from.push(k);
                o.row.slowdowns.extend(&r.row.slowdowns);
                o.row.sim_slowdowns.extend(&r.row.sim_slowdowns);
                o.row.co_runs = Some(o.row.co_runs.unwrap_or(0) + r.row.co_runs.unwrap_or(0));
            }
            None => out.push((vec![k], r)),
        }
    }
    for (_, o) in &mut out {
        let (Some(real), Some(sim)) = (
            Spread::of(&o.row.slowdowns),
            Spread::of(&o.row.sim_slowdowns),
        ) else {
            continue;
        };
        o.row.slowdown = Some(real);
        o.row.sim_slowdown = Some(sim);
        (o.row.error, o.row.within_spread) = against(Some(sim), Some(real));
    }
    out
}

/// [`Combined`] as text: the sources (numbered), the errors per policy and
/// sample, each one's worst row, then every row with the summaries it
/// comes from.
pub fn combined_text(c: &Combined) -> String {
    let mut out = String::from(if c.pooled {
        "simulated against real slowdown over the summaries, each job's repetitions pooled (its figure the median over all of them)\n"
    } else {
        "simulated against real slowdown over the summaries\n"
    });
    for (k, (f, n)) in c.sources.iter().enumerate() {
        out.push_str(&format!(
            "  [{}] {} ({n} rows with an error)\n",
            k + 1,
            f.display()
        ));
    }
    out.push_str(&format!("{}\n", fits_table(c.fits.iter().map(|(f, _)| f))));
    for (fit, w) in &c.fits {
        out.push_str(&format!(
            "worst {} {}: {} in {}, {}{:.1}% ({})\n",
            fit.policy.name(),
            fit.sample.name(),
            w.job,
            w.pair,
            if w.error >= 0.0 { "+" } else { "" },
            100.0 * w.error,
            w.source
                .as_ref()
                .map_or("pooled".to_string(), |f| f.display().to_string())
        ));
    }
    let mut t = table_with([
        "pair",
        "sample",
        "policy",
        "job",
        "from",
        "co-runs",
        "real slowdown",
        "simulated",
        "error",
    ]);
    for r in &c.rows {
        let from: Vec<String> = r.from.iter().map(|k| (k + 1).to_string()).collect();
        t.add_row([
            r.pair.clone(),
            r.sample.name().to_string(),
            r.policy.name().to_string(),
            r.job.clone(),
            format!("[{}]", from.join(", ")),
            r.co_runs.to_string(),
            format!(
                "{:.2}x [{:.2}-{:.2}]",
                r.real.median, r.real.min, r.real.max
            ),
            format!("{:.2}x", r.simulated),
            signed_pct(Some(r.error), Some(r.within)),
        ]);
    }
    out.push_str(&format!("{t}\n"));
    out
}

/// The summary as text: the errors per policy and sample, then every row.
pub fn summary_text(s: &Summary) -> String {
    let t = fits_table(&s.fits);
    let per_iteration = if s.per_iteration_fits.is_empty() {
        String::new()
    } else {
        format!(
            "the same per iteration (mean iteration under the policy over alone, per repetition; the set-up before the first iteration left out)\n{}\n",
            fits_table(&s.per_iteration_fits)
        )
    };
    let true_profiles = if s.fits_on_true_profiles.is_empty() {
        String::new()
    } else {
        format!(
            "the slowdown again over the pairs with no profile off its runs alone (named at the end)\n{}\n",
            fits_table(&s.fits_on_true_profiles)
        )
    };
    let per_iteration = per_iteration + &true_profiles;
    let mut r = table_with([
        "pair",
        "sample",
        "policy",
        "job",
        "prio",
        "co-runs",
        "real slowdown",
        "simulated",
        "error",
        "per iteration",
        "simulated",
        "error",
        "host vs alone",
        "profile vs alone",
    ]);
    for x in &s.rows {
        let row = &x.row;
        r.add_row([
            x.pair.clone(),
            x.sample.name().to_string(),
            row.policy.name().to_string(),
            row.job.clone(),
            row.priority.to_string(),
            row.co_runs
                .map_or("-".into(), |c| format!("{c}/{}", row.ok_runs)),
            spread(row.slowdown),
            row.sim_slowdown
                .map_or("-".into(), |s| format!("{:.2}x", s.median)),
            signed_pct(row.error, row.within_spread),
            spread(row.per_iteration),
            row.sim_per_iteration
                .map_or("-".into(), |s| format!("{:.2}x", s.median)),
            signed_pct(row.per_iteration_error, row.per_iteration_within),
            spread(row.host_vs_alone),
            profile_vs_alone(row),
        ]);
    }
    let mut out = format!(
        "simulated against real slowdown, per policy and sample (error: (simulated - real) / real of the medians; in range: the simulated median inside the real range)\n{t}\n{per_iteration}{r}\n{}",
        vs_timeslice_text(s)
    );
    if !s.missing.is_empty() {
        out.push_str(&format!("not run yet: {}\n", s.missing.join(", ")));
    }
    if !s.incomplete.is_empty() {
        out.push_str(&format!(
            "incomplete (rows shown, not counted above): {}\n",
            s.incomplete.join(", ")
        ));
    }
    if !s.mixed_machines.is_empty() {
        let each: Vec<String> = s
            .mixed_machines
            .iter()
            .map(|m| {
                let runs: Vec<String> = m
                    .machines
                    .iter()
                    .map(|(h, n)| format!("{n} on {h}"))
                    .collect();
                format!("{} ({})", m.pair, runs.join(", "))
            })
            .collect();
        out.push_str(&format!(
            "runs from more than one machine (their ratios compare machines as well as policies; run such a pair whole in one call): {}\n",
            each.join("; ")
        ));
    }
    if !s.off_profiles.is_empty() {
        out.push_str(&format!("{}\n", off_profiles_line(&s.off_profiles)));
    }
    out
}

/// The summary's line naming profiles off their runs alone.
fn off_profiles_line(off: &[OffProfile]) -> String {
    let each: Vec<String> = off
        .iter()
        .map(|p| {
            format!(
                "{} {} ({:.2}x: {:.0} against {:.0} ms)",
                p.pair,
                p.job,
                p.profile_region_ms / p.real_region_ms,
                p.profile_region_ms,
                p.real_region_ms
            )
        })
        .collect();
    format!(
        "profiles off their jobs' runs alone (region replayed alone against the real ones: outside their range and more than {:.0}% from their median; recorded while the host ran slower or faster, so every prediction of the pair rests on that; profile again): {}",
        crate::report::PROFILE_TOLERANCE * 100.0,
        each.join(", ")
    )
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The HTML class of an error cell: `in` inside the real range, `far` over 25%.
fn error_class(within: Option<bool>, error: Option<f64>) -> &'static str {
    match (within, error) {
        (Some(true), _) => " class=\"in\"",
        (_, Some(e)) if e.abs() > 0.25 => " class=\"far\"",
        _ => "",
    }
}

/// The summary as one self-contained HTML page.
pub fn summary_html(set: &Set, s: &Summary) -> String {
    let mut h = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>fikit-run: validation set</title>\
         <style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}\
         td,th{border:1px solid #bbb;padding:3px 8px;text-align:right}td:first-child,th{text-align:left}\
         .in{background:#e6f4e6}.far{background:#fbe3e3}</style></head><body>\n<h1>Simulated against real slowdown</h1>\n",
    );
    if !set.about.is_empty() {
        h.push_str(&format!("<p>{}</p>\n", esc(&set.about)));
    }
    let fits_html = |h: &mut String, fits: &[Fit]| {
        h.push_str("<table><tr><th>policy</th><th>sample</th><th>rows</th><th>median |error|</th><th>worst |error|</th><th>inside the real range</th></tr>\n");
        for f in fits {
            h.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}/{}</td></tr>\n",
                f.policy.name(),
                f.sample.name(),
                f.rows,
                pct(f.median_abs_error),
                pct(f.worst_abs_error),
                f.within_spread,
                f.rows
            ));
        }
        h.push_str("</table>\n");
    };
    fits_html(&mut h, &s.fits);
    if !s.per_iteration_fits.is_empty() {
        h.push_str("<p>The same per iteration (mean iteration under the policy over alone, per repetition; the set-up before the first iteration left out):</p>\n");
        fits_html(&mut h, &s.per_iteration_fits);
    }
    if !s.fits_on_true_profiles.is_empty() {
        h.push_str("<p>The slowdown again over the pairs with no profile off its runs alone (named at the end):</p>\n");
        fits_html(&mut h, &s.fits_on_true_profiles);
    }
    h.push_str("<table><tr><th>pair</th><th>sample</th><th>policy</th><th>job</th><th>prio</th><th>co-runs</th><th>real slowdown</th><th>simulated</th><th>error</th><th>per iteration</th><th>simulated</th><th>error</th><th>host vs alone</th><th>profile vs alone</th></tr>\n");
    for x in &s.rows {
        let row = &x.row;
        let class = error_class(row.within_spread, row.error);
        let iclass = error_class(row.per_iteration_within, row.per_iteration_error);
        h.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td{class}>{}</td><td>{}</td><td>{}</td><td{iclass}>{}</td><td>{}</td><td>{}</td></tr>\n",
            esc(&x.pair),
            x.sample.name(),
            row.policy.name(),
            esc(&row.job),
            row.priority,
            row.co_runs.map_or("-".into(), |c| format!("{c}/{}", row.ok_runs)),
            spread(row.slowdown),
            row.sim_slowdown.map_or("-".into(), |s| format!("{:.2}x", s.median)),
            row.error.map_or("-".into(), |e| format!("{:+.1}%", e * 100.0)),
            spread(row.per_iteration),
            row.sim_per_iteration.map_or("-".into(), |s| format!("{:.2}x", s.median)),
            row.per_iteration_error.map_or("-".into(), |e| format!("{:+.1}%", e * 100.0)),
            spread(row.host_vs_alone),
            profile_vs_alone(row),
        ));
    }
    h.push_str("</table>\n");
    if !s.vs_timeslice.is_empty() {
        h.push_str(&format!(
            "<h2>Against time slicing</h2>\n<p>The time-slicing region over the policy's, per repetition: the high-priority job's speedup, the low-priority job's ratio ({PAPER_FIKIT}); complete pairs.</p>\n<table><tr><th>policy</th><th>job</th><th>sample</th><th>pairs</th><th>median |error|</th><th>worst |error|</th><th>inside the real range</th></tr>\n"
        ));
        for v in &s.vs_fits {
            h.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}/{}</td></tr>\n",
                v.policy.name(),
                role(v.high),
                v.sample.name(),
                v.rows,
                pct(v.median_abs_error),
                pct(v.worst_abs_error),
                v.within_spread,
                v.rows
            ));
        }
        h.push_str("</table>\n<table><tr><th>pair</th><th>sample</th><th>policy</th><th>job</th><th>priority</th><th>real vs timeslice</th><th>simulated</th><th>error</th></tr>\n");
        for v in &s.vs_timeslice {
            let class = error_class(v.within_spread, v.error);
            h.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td{class}>{}</td></tr>\n",
                esc(&v.pair),
                v.sample.name(),
                v.policy.name(),
                esc(&v.job),
                role(v.high),
                spread(Some(v.real)),
                simulated_text(v),
                v.error.map_or("-".into(), |e| format!("{:+.1}%", e * 100.0)),
            ));
        }
        h.push_str("</table>\n");
    }
    if !s.missing.is_empty() {
        h.push_str(&format!(
            "<p>Not run yet: {}</p>\n",
            esc(&s.missing.join(", "))
        ));
    }
    if !s.incomplete.is_empty() {
        h.push_str(&format!(
            "<p>Incomplete (rows shown, not counted above): {}</p>\n",
            esc(&s.incomplete.join(", "))
        ));
    }
    for m in &s.mixed_machines {
        let runs: Vec<String> = m
            .machines
            .iter()
            .map(|(h, n)| format!("{n} on {}", esc(h)))
            .collect();
        h.push_str(&format!(
            "<p>Runs from more than one machine (ratios compare machines as well as policies): {} ({})</p>\n",
            esc(&m.pair),
            runs.join(", ")
        ));
    }
    if !s.off_profiles.is_empty() {
        h.push_str(&format!(
            "<p>{}</p>\n",
            esc(&off_profiles_line(&s.off_profiles))
        ));
    }
    h.push_str("</body></html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::GateStats;

    fn set(pairs: serde_json::Value) -> Result<Set, String> {
        let mut s: Set = serde_json::from_value(serde_json::json!({
            "jobs": {
                "hi": {"priority": 0, "command": ["true"]},
                "lo": {"priority": 9, "command": ["true"]}
            },
            "pairs": pairs
        }))
        .map_err(|e| e.to_string())?;
        s.check()?;
        Ok(s)
    }

    #[test]
    fn the_real_validation_set_loads() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lab/validate/real-set.json");
        let s = Set::load(&path).unwrap();
        assert_eq!(s.pairs.len(), 12);
        assert_eq!(
            s.pairs.iter().filter(|p| p.sample == Sample::Out).count(),
            6
        );
        assert!(s.policies.contains(&RunPolicy::Mps) && s.policies.contains(&RunPolicy::Timeslice));
        // Every pair puts a latency-critical job beside a throughput job.
        for p in &s.pairs {
            let prio: Vec<u8> = p.jobs.iter().map(|j| s.jobs[j].priority).collect();
            assert_eq!(prio, [0, 9], "{}", p.name);
        }
    }

    #[test]
    fn a_set_names_what_is_wrong() {
        let ok =
            set(serde_json::json!([{"name": "a", "jobs": ["hi", "lo"], "sample": "out"}])).unwrap();
        assert_eq!(
            ok.policies,
            [RunPolicy::Exclusive, RunPolicy::Timeslice, RunPolicy::Mps]
        );
        assert_eq!(ok.used_jobs(), ["hi", "lo"]);
        assert_eq!(ok.profiles, 1);
        // Profiles per job: 1 to MAX_PROFILES.
        let with_profiles = |n: usize| {
            let mut s = ok.clone();
            s.profiles = n;
            s.check()
        };
        assert!(with_profiles(3).is_ok());
        assert!(
            with_profiles(0)
                .unwrap_err()
                .contains("profiles: 0; use 1 to 9")
        );
        assert!(with_profiles(MAX_PROFILES + 1).is_err());
        let err = |p| set(p).unwrap_err();
        assert!(
            err(serde_json::json!([{"name": "a", "jobs": ["hi", "x"], "sample": "in"}]))
                .contains("pairs[0].jobs: \"x\" is not in jobs")
        );
        assert!(
            err(serde_json::json!([{"name": "a+b", "jobs": ["hi", "lo"], "sample": "in"}]))
                .contains("pairs[0].name: \"a+b\"")
        );
        assert!(
            err(serde_json::json!([
                {"name": "a", "jobs": ["hi", "lo"], "sample": "in"},
                {"name": "a", "jobs": ["lo", "hi"], "sample": "in"}
            ]))
            .contains("pairs[1].name: \"a\" is used twice")
        );
        assert!(
            err(serde_json::json!([{"name": "a", "jobs": ["hi"], "sample": "in"}]))
                .contains("pairs[0].jobs: a pair has 2 jobs or more")
        );
        assert!(
            err(serde_json::json!([{"name": "a", "jobs": ["hi", "lo"], "sample": "maybe"}]))
                .contains("unknown variant `maybe`")
        );
        assert!(err(serde_json::json!([])).contains("pairs: none"));
        assert!(
            err(
                serde_json::json!([{"name": "summary.json", "jobs": ["hi", "lo"], "sample": "in"}])
            )
            .contains("pairs[0].name: \"summary.json\"")
        );
        let mut bad_job: Set = serde_json::from_value(serde_json::json!({
            "jobs": {"../x": {"priority": 0, "command": ["true"]}, "lo": {"priority": 9, "command": ["true"]}},
            "pairs": [{"name": "a", "jobs": ["../x", "lo"], "sample": "in"}]
        }))
        .unwrap();
        assert!(
            bad_job
                .check()
                .unwrap_err()
                .contains("jobs.\"../x\": a job's name")
        );
    }

    fn row(policy: RunPolicy, job: &str, real: f64, range: (f64, f64), sim: f64) -> Row {
        Row {
            policy,
            job: job.into(),
            priority: 0,
            ok_runs: 3,
            runs: 3,
            region_ms: None,
            sim_region_ms: None,
            slowdown: Some(Spread {
                median: real,
                min: range.0,
                max: range.1,
            }),
            slowdowns: vec![range.0, real, range.1],
            vs_timeslice: None,
            sim_vs_timeslice: None,
            per_iteration: None,
            sim_per_iteration: None,
            per_iteration_error: None,
            per_iteration_within: None,
            p50_ms: None,
            p99_ms: None,
            sim_p50_ms: None,
            sim_p99_ms: None,
            overlap: None,
            co_runs: Some(3),
            sim_slowdown: Some(Spread {
                median: sim,
                min: sim,
                max: sim,
            }),
            sim_slowdowns: vec![sim],
            error: Some((sim - real) / real),
            within_spread: Some(range.0 <= sim && sim <= range.1),
            gate: GateStats::default(),
            launch_us: None,
            host_vs_alone: None,
        }
    }

    #[test]
    fn combined_summaries_set_every_complete_rows_errors_together() {
        use RunPolicy::{Exclusive, Mps};
        let d = tempfile::tempdir().unwrap();
        let summary_row = |pair: &str, sample: Sample, row: Row| SummaryRow {
            pair: pair.into(),
            sample,
            row,
            profile_sets: 1,
        };
        // Machine a: errors -10% and +5% out of sample, +20% in sample,
        // an exclusive row (no error).
        let a = serde_json::json!({"rows": [
            summary_row("p1", Sample::Out, row(Mps, "hi", 2.0, (1.8, 2.2), 1.8)),
            summary_row("p1", Sample::Out, row(Mps, "lo", 1.0, (1.0, 1.0), 1.05)),
            summary_row("p2", Sample::In, row(Mps, "hi", 1.0, (1.0, 1.0), 1.2)),
            summary_row("p1", Sample::Out, Row {
                error: None,
                sim_slowdown: None,
                ..row(Exclusive, "hi", 1.0, (1.0, 1.0), 1.0)
            }),
        ], "incomplete": []});
        // Machine b: -40% out of sample, and an incomplete pair's +90%,
        // which does not count.
        let b = serde_json::json!({"rows": [
            summary_row("p1", Sample::Out, row(Mps, "hi", 2.0, (1.0, 3.0), 1.2)),
            summary_row("p3", Sample::Out, row(Mps, "hi", 1.0, (1.0, 1.0), 1.9)),
        ], "incomplete": ["p3"]});
        let (fa, fb) = (d.path().join("a.json"), d.path().join("b.json"));
        std::fs::write(&fa, a.to_string()).unwrap();
        std::fs::write(&fb, b.to_string()).unwrap();
        let c = combine(&[fa.clone(), fb.clone()], Combine::Rows).unwrap();
        assert_eq!(c.sources, vec![(fa.clone(), 3), (fb.clone(), 1)]);
        // Out of sample: |-10%|, |+5%|, |-40%|: median 10%, worst 40% (b's
        // p1 hi), one inside its range (b's 1.2 in 1.0-3.0) and a's lo at
        // 1.05 outside 1.0-1.0.
        let (f, w) = c
            .fits
            .iter()
            .find(|(f, _)| f.sample == Sample::Out)
            .unwrap();
        assert_eq!((f.policy, f.rows, f.within_spread), (Mps, 3, 2));
        assert!((f.median_abs_error - 0.10).abs() < 1e-9, "{f:?}");
        assert!((f.worst_abs_error - 0.40).abs() < 1e-9, "{f:?}");
        assert_eq!(
            (w.source.as_ref(), w.pair.as_str(), w.job.as_str()),
            (Some(&fb), "p1", "hi")
        );
        assert!((w.error + 0.40).abs() < 1e-9);
        let (inside, _) = c.fits.iter().find(|(f, _)| f.sample == Sample::In).unwrap();
        assert_eq!(inside.rows, 1);
        let text = combined_text(&c);
        assert!(text.contains("worst mps out: hi in p1, -40.0%"), "{text}");
        assert!(text.contains("b.json (1 rows with an error)"), "{text}");
        // Bad input names the file.
        std::fs::write(&fb, "{\"pairs\": 1}").unwrap();
        let e = combine(&[fa, fb], Combine::Rows).unwrap_err();
        assert!(
            e.contains("b.json: not a fikit-run --set summary.json"),
            "{e}"
        );
    }

    #[test]
    fn pooled_summaries_take_each_jobs_median_over_every_repetition() {
        use RunPolicy::Mps;
        let d = tempfile::tempdir().unwrap();
        let summary_row = |pair: &str, row: Row| SummaryRow {
            pair: pair.into(),
            sample: Sample::Out,
            row,
            profile_sets: 1,
        };
        // "hi" on machine a: 1.4, 1.5, 1.7 (median 1.5), predicted 1.0 each:
        // -33% there. On machine b: 1.0, 1.05, 1.1, predicted 1.0: -5%.
        // Pooled: 1.0, 1.05, 1.1, 1.4, 1.5, 1.7, median (1.1 + 1.4) / 2 =
        // 1.25; predicted 1.0 six times: -20%, inside 1.0-1.7 at its
        // least. "lo" only on a: 1.8 against 2.0, -10%, outside 1.9-2.1.
        let hi = |reps: [f64; 3], sim: f64| Row {
            slowdowns: reps.to_vec(),
            sim_slowdowns: vec![sim; 3],
            ..row(Mps, "hi", reps[1], (reps[0], reps[2]), sim)
        };
        let a = serde_json::json!({"rows": [
            summary_row("p1", hi([1.4, 1.5, 1.7], 1.0)),
            summary_row("p1", row(Mps, "lo", 2.0, (1.9, 2.1), 1.8)),
        ], "incomplete": []});
        let b = serde_json::json!({"rows": [
            summary_row("p1", hi([1.0, 1.05, 1.1], 1.0)),
        ], "incomplete": []});
        let (fa, fb) = (d.path().join("a.json"), d.path().join("b.json"));
        std::fs::write(&fa, a.to_string()).unwrap();
        std::fs::write(&fb, b.to_string()).unwrap();
        let rows = combine(&[fa.clone(), fb.clone()], Combine::Rows).unwrap();
        let (f, w) = &rows.fits[0];
        assert_eq!(f.rows, 3);
        assert!(
            (f.worst_abs_error - (1.0 - 1.5) / -1.5).abs() < 1e-9,
            "{f:?}"
        );
        assert_eq!(w.source.as_ref(), Some(&fa));
        let pooled = combine(&[fa.clone(), fb.clone()], Combine::Pool).unwrap();
        let (f, w) = &pooled.fits[0];
        assert_eq!((f.rows, f.within_spread), (2, 1), "{f:?}");
        // |-20%| and |-10%|: median 15%, worst 20%, the pooled hi.
        assert!((f.worst_abs_error - 0.20).abs() < 1e-9, "{f:?}");
        assert!((f.median_abs_error - 0.15).abs() < 1e-9, "{f:?}");
        assert_eq!((w.source.as_ref(), w.job.as_str()), (None, "hi"));
        let text = combined_text(&pooled);
        assert!(text.contains("hi in p1, -20.0% (pooled)"), "{text}");
        assert!(text.contains("repetitions pooled"), "{text}");
        // Each job once, with the summaries it comes from: hi from both
        // (six co-runs, 1.25x over 1.0-1.7), lo from a alone.
        let row_of = |text: &str, job: &str| -> Vec<String> {
            let line = text
                .lines()
                .find(|l| l.split('┆').nth(3).is_some_and(|c| c.trim() == job))
                .unwrap_or_else(|| panic!("no row of {job}: {text}"));
            line.trim_matches(|c| c == '│' || c == ' ')
                .split('┆')
                .map(|c| c.trim().to_string())
                .collect()
        };
        assert_eq!(
            row_of(&text, "hi")[4..],
            [
                "[1, 2]",
                "6",
                "1.25x [1.00-1.70]",
                "1.00x",
                "-20.0% (in range)"
            ]
        );
        assert_eq!(row_of(&text, "lo")[4..6], ["[1]", "3"]);
        assert_eq!(pooled.rows.len(), 2);
        // Unpooled, hi has a row per summary.
        let text = combined_text(&rows);
        assert_eq!(rows.rows.len(), 3);
        assert!(text.contains("[2] "), "{text}");
        assert_eq!(row_of(&text, "hi")[4..7], ["[1]", "3", "1.50x [1.40-1.70]"]);
        // A summary without the repetitions' figures cannot be pooled; it
        // is named, with the way to rebuild it.
        let old = serde_json::json!({"rows": [summary_row("p1", Row {
            slowdowns: Vec::new(),
            ..row(Mps, "hi", 1.5, (1.4, 1.7), 1.0)
        })], "incomplete": []});
        std::fs::write(&fb, old.to_string()).unwrap();
        let e = combine(&[fa.clone(), fb.clone()], Combine::Pool).unwrap_err();
        assert!(
            e.contains("b.json: hi in p1 (mps) has no per-repetition"),
            "{e}"
        );
        assert!(combine(&[fa.clone(), fb.clone()], Combine::Rows).is_ok());
        // With its runs alone exited 0, b's three repetitions are read back
        // from its spreads (1.0, 1.05, 1.1; 1.0 three times), and pool as
        // the figures themselves did.
        let from_spreads = serde_json::json!({"rows": [
            summary_row("p1", Row {
                slowdowns: Vec::new(),
                sim_slowdowns: Vec::new(),
                sim_slowdown: Some(Spread { median: 1.0, min: 1.0, max: 1.0 }),
                ..row(Mps, "hi", 1.05, (1.0, 1.1), 1.0)
            }),
            summary_row("p1", Row {
                co_runs: None,
                error: None,
                ..row(RunPolicy::Exclusive, "hi", 1.0, (1.0, 1.0), 1.0)
            }),
        ], "incomplete": []});
        std::fs::write(&fb, from_spreads.to_string()).unwrap();
        let again = combine(&[fa, fb], Combine::Pool).unwrap();
        assert_eq!(again.fits, pooled.fits);
    }

    #[test]
    fn the_summary_splits_errors_by_policy_and_sample() {
        let s = set(serde_json::json!([
            {"name": "p1", "jobs": ["hi", "lo"], "sample": "in"},
            {"name": "p2", "jobs": ["hi", "lo"], "sample": "out"},
            {"name": "p3", "jobs": ["hi", "lo"], "sample": "out"},
            {"name": "p4", "jobs": ["hi", "lo"], "sample": "out"}
        ]))
        .unwrap();
        let d = tempfile::tempdir().unwrap();
        let write = |pair: &str, rows: Vec<Row>| {
            std::fs::create_dir_all(d.path().join(pair)).unwrap();
            std::fs::write(
                d.path().join(pair).join("run.json"),
                serde_json::json!({ "rows": rows }).to_string(),
            )
            .unwrap();
        };
        use RunPolicy::{Mps, Timeslice};
        // In sample: timeslice hi real 2.0, sim 1.5 (-25%).
        write("p1", vec![row(Timeslice, "hi", 2.0, (1.8, 2.2), 1.5)]);
        // p1's job alone: its profile replays in 150 ms, the real job in
        // 95-105 (median 100): a slow profile.
        let mut alone = row(RunPolicy::Exclusive, "hi", 1.0, (1.0, 1.0), 1.0);
        alone.region_ms = Some(Spread {
            median: 100.0,
            min: 95.0,
            max: 105.0,
        });
        alone.sim_region_ms = Some(150.0);
        let mut p1: serde_json::Value =
            serde_json::from_slice(&std::fs::read(d.path().join("p1/run.json")).unwrap()).unwrap();
        p1["rows"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::to_value(&alone).unwrap());
        std::fs::write(d.path().join("p1/run.json"), p1.to_string()).unwrap();
        // Out of sample: timeslice +10% (in range); mps -50%, but per
        // iteration -20%.
        let mut mps = row(Mps, "hi", 3.0, (2.5, 3.5), 1.5);
        (mps.per_iteration_error, mps.per_iteration_within) = (Some(-0.2), Some(false));
        write("p2", vec![row(Timeslice, "hi", 1.0, (0.9, 1.2), 1.1), mps]);
        // p3 has no run.json yet; p4 stopped early: shown, not counted.
        std::fs::create_dir_all(d.path().join("p4")).unwrap();
        std::fs::write(
            d.path().join("p4").join("run.json"),
            serde_json::json!({
                "rows": [row(Mps, "hi", 1.0, (1.0, 1.0), 9.0)],
                "complete": false,
                // Two machines: flagged.
                "rounds": [
                    {"jobs": [{"host": "a 1"}, {"host": "a 1"}]},
                    {"jobs": [{"host": "b 2"}, {}]}
                ]
            })
            .to_string(),
        )
        .unwrap();
        // p2's rounds: one machine, and runs from before machines were kept.
        let mut p2: serde_json::Value =
            serde_json::from_slice(&std::fs::read(d.path().join("p2/run.json")).unwrap()).unwrap();
        p2["rounds"] = serde_json::json!([{"jobs": [{"host": "a 1"}, {}]}, {"jobs": [{}, {}]}]);
        std::fs::write(d.path().join("p2/run.json"), p2.to_string()).unwrap();
        let sum = summarize(&s, d.path()).unwrap();
        assert_eq!(sum.missing, ["p3"]);
        assert_eq!(sum.incomplete, ["p4"]);
        assert_eq!(
            sum.mixed_machines,
            [MixedMachines {
                pair: "p4".into(),
                machines: vec![("a 1".into(), 2), ("b 2".into(), 1)],
            }]
        );
        assert_eq!(sum.rows.len(), 5, "p1's two, p2's two, p4's one");
        let fit = |p: RunPolicy, sample: Sample| {
            sum.fits
                .iter()
                .find(|f| f.policy == p && f.sample == sample)
                .map(|f| {
                    (
                        f.rows,
                        (f.median_abs_error * 1000.0).round() / 1000.0,
                        (f.worst_abs_error * 1000.0).round() / 1000.0,
                        f.within_spread,
                    )
                })
        };
        assert_eq!(fit(Timeslice, Sample::In), Some((1, 0.25, 0.25, 0)));
        assert_eq!(fit(Timeslice, Sample::Out), Some((1, 0.1, 0.1, 1)));
        assert_eq!(fit(Mps, Sample::Out), Some((1, 0.5, 0.5, 0)));
        assert_eq!(fit(Mps, Sample::In), None);
        // Per iteration: only the row that has it.
        assert_eq!(sum.per_iteration_fits.len(), 1);
        let f = &sum.per_iteration_fits[0];
        assert_eq!((f.policy, f.sample, f.rows), (Mps, Sample::Out, 1));
        assert!((f.worst_abs_error - 0.2).abs() < 1e-12);
        let text = summary_text(&sum);
        assert!(text.contains("the same per iteration"), "{text}");
        assert_eq!(
            sum.off_profiles,
            [OffProfile {
                pair: "p1".into(),
                job: "hi".into(),
                profile_region_ms: 150.0,
                real_region_ms: 100.0
            }]
        );
        assert!(
            text.contains("profile again): p1 hi (1.50x: 150 against 100 ms)"),
            "{text}"
        );
        assert!(text.contains("1.50x (off)"), "{text}");
        // Without p1 (its profile off), the in-sample time-slicing row goes;
        // p2's stay.
        let true_fit = |p: RunPolicy, sample: Sample| {
            sum.fits_on_true_profiles
                .iter()
                .find(|f| f.policy == p && f.sample == sample)
                .map(|f| f.rows)
        };
        assert_eq!(true_fit(Timeslice, Sample::In), None);
        assert_eq!(true_fit(Timeslice, Sample::Out), Some(1));
        assert_eq!(true_fit(Mps, Sample::Out), Some(1));
        assert!(
            text.contains("the slowdown again over the pairs with no profile off"),
            "{text}"
        );
        assert!(text.contains("not run yet: p3"), "{text}");
        assert!(
            text.contains("incomplete (rows shown, not counted above): p4"),
            "{text}"
        );
        assert!(
            text.contains(
                "policies; run such a pair whole in one call): p4 (2 on a 1, 1 on b 2)\n"
            ),
            "{text}"
        );
        assert!(text.contains("+10.0% (in range)"), "{text}");
        let html = summary_html(&s, &sum);
        assert!(html.contains("<td class=\"far\">-50.0%</td>"), "{html}");
    }

    #[test]
    fn the_summary_sets_fikit_against_time_slicing_per_role() {
        let s = set(serde_json::json!([
            {"name": "p1", "jobs": ["hi", "lo"], "sample": "out"},
            {"name": "p2", "jobs": ["hi", "lo"], "sample": "out"},
            {"name": "p3", "jobs": ["hi", "lo"], "sample": "out"}
        ]))
        .unwrap();
        let d = tempfile::tempdir().unwrap();
        let vs = |policy, job: &str, prio, real: (f64, f64, f64), sim: f64| {
            let mut r = row(policy, job, 1.0, (1.0, 1.0), 1.0);
            r.priority = prio;
            r.vs_timeslice = Some(Spread {
                median: real.0,
                min: real.1,
                max: real.2,
            });
            r.sim_vs_timeslice = Some(Spread {
                median: sim,
                min: sim,
                max: sim,
            });
            r
        };
        let write = |pair: &str, rows: Vec<Row>, complete: bool| {
            std::fs::create_dir_all(d.path().join(pair)).unwrap();
            std::fs::write(
                d.path().join(pair).join("run.json"),
                serde_json::json!({ "rows": rows, "complete": complete }).to_string(),
            )
            .unwrap();
        };
        use RunPolicy::{Fikit, Timeslice};
        // p1: hi 1.5x real, 1.2x simulated (-20%); lo 0.8x real, 0.84x (+5%, in range).
        write(
            "p1",
            vec![
                vs(Timeslice, "hi", 0, (1.0, 1.0, 1.0), 1.0),
                vs(Fikit, "hi", 0, (1.5, 1.4, 1.6), 1.2),
                vs(Fikit, "lo", 9, (0.8, 0.7, 0.9), 0.84),
            ],
            true,
        );
        // p2: hi 2.0x real, 2.2x (+10%); lo 1.0x, 0.9x (-10%).
        write(
            "p2",
            vec![
                vs(Fikit, "hi", 0, (2.0, 2.0, 2.0), 2.2),
                vs(Fikit, "lo", 9, (1.0, 1.0, 1.0), 0.9),
            ],
            true,
        );
        // p3 stopped early: not counted.
        write("p3", vec![vs(Fikit, "hi", 0, (9.0, 9.0, 9.0), 1.0)], false);
        let sum = summarize(&s, d.path()).unwrap();
        // No profile off: no second set of fits.
        assert!(sum.fits_on_true_profiles.is_empty());
        // Time slicing against itself is no figure; p3 is left out.
        assert_eq!(sum.vs_timeslice.len(), 4);
        assert!(sum.vs_timeslice.iter().all(|v| v.policy == Fikit));
        let hi: Vec<bool> = sum.vs_timeslice.iter().map(|v| v.high).collect();
        assert_eq!(hi, [true, false, true, false]);
        let fit = |high: bool| {
            let f = sum
                .vs_fits
                .iter()
                .find(|f| f.high == high && f.sample == Sample::Out)
                .unwrap();
            (
                f.rows,
                (f.median_abs_error * 1000.0).round() / 1000.0,
                (f.worst_abs_error * 1000.0).round() / 1000.0,
                f.within_spread,
            )
        };
        assert_eq!(fit(true), (2, 0.15, 0.2, 0));
        assert_eq!(fit(false), (2, 0.075, 0.1, 1));
        let text = summary_text(&sum);
        assert!(text.contains("1.50x [1.40-1.60]"), "{text}");
        assert!(text.contains("-20.0%"), "{text}");
        assert!(text.contains("+5.0% (in range)"), "{text}");
        assert!(summary_html(&s, &sum).contains("<h2>Against time slicing</h2>"));
        // One profile set: the simulated median alone.
        let p1_high = |text: &str| {
            text.lines()
                .find(|l| l.contains("p1") && l.contains("high"))
                .unwrap()
                .to_string()
        };
        assert!(
            p1_high(&text).contains("┆ 1.20x ") && !p1_high(&text).contains("1.20x ["),
            "{text}"
        );
        assert!(sum.vs_timeslice.iter().all(|v| v.profile_sets == 1));

        // p2 predicted with two profile sets: its simulated spread is shown.
        let mut two = vs(Fikit, "hi", 0, (2.0, 2.0, 2.0), 2.2);
        two.sim_vs_timeslice = Some(Spread {
            median: 2.2,
            min: 1.9,
            max: 2.3,
        });
        std::fs::write(
            d.path().join("p2").join("run.json"),
            serde_json::json!({ "rows": [two], "complete": true, "profile_sets": 2 }).to_string(),
        )
        .unwrap();
        let sum = summarize(&s, d.path()).unwrap();
        let p2 = sum.vs_timeslice.iter().find(|v| v.pair == "p2").unwrap();
        assert_eq!(p2.profile_sets, 2);
        let text = summary_text(&sum);
        assert!(text.contains("2.20x [1.90-2.30]"), "{text}");
        assert!(summary_html(&s, &sum).contains("2.20x [1.90-2.30]"));
        // p1 still one set: its median alone.
        assert!(
            p1_high(&text).contains("┆ 1.20x ") && !p1_high(&text).contains("1.20x ["),
            "{text}"
        );
    }
}
