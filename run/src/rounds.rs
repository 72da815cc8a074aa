//! One scenario's rounds: each policy's repetitions run (or read back from
//! an earlier run.json), each round predicted from the jobs' profiles, and
//! the table, run.json and table.txt written.

use std::path::PathBuf;

use anyhow::{Context, Result};

use fikit_sim_core::policy::PolicyKind;
use fikit_sim_core::sim::gpu::GpuModel;
use fikit_sim_core::sim::host::{Corners, set_untraced_host};
use fikit_sim_core::sim::job::Job;

use crate::exec::{ExecError, ExecOptions, JobRun, Round, install_signals, run_round};
use crate::profiles::{Profiles, model_for, read_profiles};
use crate::report::{Predicted, Row, rows, table, with_range};
use crate::saved::{AloneRuns, Output, RunOf, read_saved};
use crate::scenario::{RunPolicy, Scenario};
use fikit_sim_core::sim::pressure::set_measured_pressure;

/// What to run, once the command line is read.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The scenario, checked.
    pub scenario: Scenario,
    /// How rounds run.
    pub exec: ExecOptions,
    /// The prediction's model choice (`None`: the profiles' GPU).
    pub model: Option<String>,
    /// The least co-run share for a repetition to count.
    pub min_overlap: f64,
    /// Rebuild the report from this run.json instead of running.
    pub report: Option<PathBuf>,
}

/// The policies of repetition `rep`, in the scenario's order rotated by
/// `rep` (a, b, c; then b, c, a; ...): over as many repetitions as policies
/// each policy runs once in each place, so a drift of the machine over a
/// run (its host or GPU speeding up or slowing down) is not laid on one
/// policy. Deterministic.
fn rotated(policies: &[RunPolicy], rep: usize) -> Vec<RunPolicy> {
    let n = policies.len().max(1);
    policies
        .iter()
        .cycle()
        .skip(rep % n)
        .take(policies.len())
        .copied()
        .collect()
}

/// The prediction beside the rounds: the profiles as simulated jobs, per
/// profile set, and the model they run on.
struct Prediction {
    /// The simulated jobs per profile set: repetition r is predicted with
    /// set r mod their count (one set unless jobs have more profiles; none
    /// when a job has no profile).
    sets: Vec<Vec<Job>>,
    /// Per set, its jobs at the ends of their host range (`None` where no
    /// job has untraced runs).
    corners: Vec<Option<Corners>>,
    model: GpuModel,
    model_line: String,
    /// The line that names each job's MPS pressure (fikit-sim's).
    pressure_line: String,
    /// The line that names each job's host speed untraced (fikit-sim's).
    untraced_line: String,
    /// When each job's first kernel launch comes, from the scenario alone
    /// ([`first_launch_offsets`]), ns.
    first_launch_at: Vec<i64>,
}

impl Prediction {
    fn new(opts: &RunOptions, profiles: &Profiles) -> Result<Prediction> {
        let s = &opts.scenario;
        let (model, model_line) = model_for(opts.model.as_deref(), &profiles.devices)?;
        // Each job's host at its untraced speed, as fikit-sim simulates it.
        // Each job's kernels at their measured MPS pressure, as fikit-sim
        // weighs them.
        let (mut untraced, mut pressure, mut corners) = (Vec::new(), Vec::new(), Vec::new());
        let sets: Vec<Vec<Job>> = (0..profiles.sets())
            .map_while(|k| profiles.for_repetition(k))
            .map(|mut jobs| {
                pressure.push(set_measured_pressure(&mut jobs, &model, false));
                let (line, ends) = set_untraced_host(&mut jobs, &model, false);
                untraced.push(line);
                corners.push(ends);
                jobs
            })
            .collect();
        let per_set = |lines: &[String]| match lines {
            [one] => one.clone(),
            more => more
                .iter()
                .enumerate()
                .map(|(k, l)| format!("profile set {}: {l}", k + 1))
                .collect::<Vec<_>>()
                .join("; "),
        };
        let (untraced_line, pressure_line) = (per_set(&untraced), per_set(&pressure));
        if !sets.is_empty() {
            eprintln!("fikit-run: prediction: {untraced_line}");
            eprintln!("fikit-run: prediction: {pressure_line}");
        }
        if sets.len() > 1 {
            eprintln!(
                "fikit-run: prediction: {} profiles per job, repetition r predicted with profile r mod their count",
                sets.len()
            );
        }
        Ok(Prediction {
            sets,
            corners,
            model,
            model_line,
            pressure_line,
            untraced_line,
            first_launch_at: first_launch_offsets(s),
        })
    }

    /// The prediction of one round of `policy` in repetition `rep`, from
    /// the profiles and the scenario alone (nothing of the rounds enters
    /// it); `None` without profiles or for a policy fikit-sim does not model.
    fn round(&self, policy: RunPolicy, rep: usize) -> Option<Vec<Predicted>> {
        let k = rep % self.sets.len().max(1);
        with_range(
            self.sets.get(k)?,
            self.corners.get(k)?.as_ref(),
            &self.first_launch_at,
            PolicyKind::from_name(policy.name())?,
            &self.model,
        )
    }
}

/// When each job of `s` first launches a kernel, ns from the first job's
/// first launch, as fikit-run lines them up: jobs started together at
/// their first launch (the start barrier, 0); a job with `start.after`
/// `delay_s` after the named job's (its own start-up before its first
/// launch, which its profile does not hold, left out).
pub fn first_launch_offsets(s: &Scenario) -> Vec<i64> {
    let mut at: Vec<Option<i64>> = s
        .jobs
        .iter()
        .map(|j| j.start.is_none().then_some(0))
        .collect();
    // Each pass settles the jobs whose partner is settled (the scenario's
    // check refuses cycles; a chain is at most as long as the jobs).
    for _ in 0..s.jobs.len() {
        for (k, j) in s.jobs.iter().enumerate() {
            if let (None, Some(st)) = (at[k], &j.start) {
                let after = s.jobs.iter().position(|o| o.name == st.after);
                at[k] = match after {
                    Some(a) => at[a].map(|t| t + (st.delay_s * 1e9).round() as i64),
                    None => Some(0),
                };
            }
        }
    }
    at.into_iter().map(|t| t.unwrap_or(0)).collect()
}

/// Runs the rounds (or reads them, `report`); returns the exit code.
pub fn run(opts: &RunOptions) -> Result<i32> {
    run_with(opts, None, Vec::new())
}

/// The rounds of a run so far, each with its prediction.
struct Progress {
    rounds: Vec<Round>,
    sims: Vec<Option<Vec<Predicted>>>,
    /// What stopped the run, if anything did.
    stopped: Option<ExecError>,
}

/// [`run`], in a set: `alone` is the pair's name and the set's runs alone,
/// which its exclusive rounds reuse and add to; `resume` the rounds an
/// earlier, unfinished run of the pair left, which are kept and not run
/// again.
pub(crate) fn run_with(
    opts: &RunOptions,
    alone: Option<(&str, &mut AloneRuns)>,
    resume: Vec<Round>,
) -> Result<i32> {
    let s = &opts.scenario;
    let profiles = read_profiles(s)?;
    let prediction = Prediction::new(opts, &profiles)?;
    let saved = match &opts.report {
        Some(p) => Some(read_saved(p, s)?),
        None => None,
    };
    std::fs::create_dir_all(&opts.exec.out_dir).map_err(|e| {
        crate::cli::bad(format!(
            "-o {}: cannot make the folder: {e}",
            opts.exec.out_dir.display()
        ))
    })?;
    let work = tempfile::Builder::new()
        .prefix("fikit-run-")
        .tempdir()
        .context("cannot make a work folder")?;
    install_signals();
    eprintln!("fikit-run: prediction model: {}", prediction.model_line);
    let total = s.repetitions * s.policies.len();
    // With a report the saved rounds stand for the repetitions: none run.
    let (mut progress, incomplete, repetitions) = match saved {
        Some(saved) => {
            let sims = saved
                .rounds
                .iter()
                .map(|r| prediction.round(r.policy, r.repetition))
                .collect();
            let p = Progress {
                rounds: saved.rounds,
                sims,
                stopped: None,
            };
            (p, !saved.complete, 0)
        }
        None => {
            if !resume.is_empty() {
                eprintln!(
                    "fikit-run: {} of {total} rounds kept from the unfinished run in {}",
                    resume.len(),
                    opts.exec.out_dir.display()
                );
            }
            let sims = resume
                .iter()
                .map(|r| prediction.round(r.policy, r.repetition))
                .collect();
            let p = Progress {
                rounds: resume,
                sims,
                stopped: None,
            };
            (p, false, s.repetitions)
        }
    };
    let round_run = RoundRun {
        opts,
        profiles: &profiles,
        work: work.path(),
        total,
    };
    round_run.run_all(repetitions, &prediction, alone, &mut progress);
    finish(opts, &prediction, progress, incomplete)
}

/// What every round of one run shares.
struct RoundRun<'a> {
    opts: &'a RunOptions,
    profiles: &'a Profiles,
    work: &'a std::path::Path,
    total: usize,
}

impl RoundRun<'_> {
    /// Runs the rounds of `repetitions` not in `progress` yet, each
    /// policy's in the rotated order, until one stops.
    fn run_all(
        &self,
        repetitions: usize,
        prediction: &Prediction,
        mut alone: Option<(&str, &mut AloneRuns)>,
        progress: &mut Progress,
    ) {
        let s = &self.opts.scenario;
        for rep in 0..repetitions {
            for policy in rotated(&s.policies, rep) {
                if progress
                    .rounds
                    .iter()
                    .any(|r| r.policy == policy && r.repetition == rep)
                {
                    continue;
                }
                let t = std::time::Instant::now();
                let mut reused = Vec::new();
                let result = if policy == RunPolicy::Exclusive {
                    self.exclusive(
                        rep,
                        alone.as_mut().map(|(p, a)| (*p, &mut **a)),
                        &mut reused,
                    )
                } else {
                    let all: Vec<usize> = (0..s.jobs.len()).collect();
                    self.one(&all, policy, rep)
                };
                match result {
                    Ok(jobs) => {
                        self.say_round(progress.rounds.len() + 1, policy, rep, t, &reused, &jobs);
                        progress.sims.push(prediction.round(policy, rep));
                        progress.rounds.push(Round {
                            policy,
                            repetition: rep,
                            jobs,
                            gate_nap_us: self.opts.exec.gate_nap_us,
                        });
                    }
                    Err(e) => {
                        eprintln!("fikit-run: {} repetition {}: {e}", policy.name(), rep + 1);
                        progress.stopped = Some(e);
                        return;
                    }
                }
            }
        }
    }

    /// One round of `policy` with the jobs `which` together.
    fn one(
        &self,
        which: &[usize],
        policy: RunPolicy,
        rep: usize,
    ) -> Result<Vec<JobRun>, ExecError> {
        run_round(
            &self.opts.scenario,
            which,
            policy,
            rep,
            &self.profiles.tables,
            &self.opts.exec,
            self.work,
        )
    }

    /// The exclusive round of repetition `rep`: each job alone, or its run
    /// alone from an earlier pair of the set (named in `reused`).
    fn exclusive(
        &self,
        rep: usize,
        mut alone: Option<(&str, &mut AloneRuns)>,
        reused: &mut Vec<String>,
    ) -> Result<Vec<JobRun>, ExecError> {
        let s = &self.opts.scenario;
        let mut jobs = Vec::new();
        for j in 0..s.jobs.len() {
            if let Some(r) = alone
                .as_ref()
                .and_then(|(_, a)| a.get(&s.jobs[j].name, rep))
            {
                reused.push(format!(
                    "{} alone from {}",
                    r.job,
                    r.alone_from.as_deref().unwrap_or("-")
                ));
                jobs.push(r);
                continue;
            }
            let mut r = self.one(&[j], RunPolicy::Exclusive, rep)?;
            if let Some((pair, a)) = alone.as_mut() {
                r.iter().for_each(|run| a.keep(pair, rep, run));
            }
            jobs.append(&mut r);
        }
        Ok(jobs)
    }

    /// The line a finished round prints.
    fn say_round(
        &self,
        n: usize,
        policy: RunPolicy,
        rep: usize,
        t: std::time::Instant,
        reused: &[String],
        jobs: &[JobRun],
    ) {
        let failed: Vec<String> = jobs
            .iter()
            .filter(|j| !j.ok())
            .map(|j| {
                format!(
                    "{} exited {}",
                    j.job,
                    j.exit_code.map_or("-".into(), |c| c.to_string())
                )
            })
            .collect();
        eprintln!(
            "fikit-run: round {n}/{}: {} repetition {}: {:.1} s{}{}",
            self.total,
            policy.name(),
            rep + 1,
            t.elapsed().as_secs_f64(),
            if reused.is_empty() {
                String::new()
            } else {
                format!(" ({})", reused.join(", "))
            },
            if failed.is_empty() {
                String::new()
            } else {
                format!(
                    " ({}; see {}/logs)",
                    failed.join(", "),
                    self.opts.exec.out_dir.display()
                )
            }
        );
    }
}

/// The table under the rounds: the rows, the prediction's notes and the
/// gate's A/B lines.
fn table_text(r: &[Row], notes: &[&String], rounds: &[Round]) -> String {
    let mut text = table(r);
    for line in notes {
        text.push_str(&format!("\n{line}"));
    }
    for round in rounds {
        for j in &round.jobs {
            if let Some(ab) = &j.gate_ab {
                let own = j
                    .gate_us()
                    .map(|us| format!("; the gate's own work {us:.3} µs a launch"))
                    .unwrap_or_default();
                text.push_str(&format!(
                    "\ngate A/B, {} repetition {}, {}: {}{own}",
                    round.policy.name(),
                    round.repetition + 1,
                    j.job,
                    ab.line()
                ));
            }
        }
    }
    text
}

/// Orders the rounds, predicts them again on the host of the runs alone
/// where asked, prints the table and writes run.json and table.txt;
/// returns the exit code.
fn finish(
    opts: &RunOptions,
    prediction: &Prediction,
    progress: Progress,
    incomplete: bool,
) -> Result<i32> {
    let s = &opts.scenario;
    // Kept rounds first, then those run now: back in repetition and policy order.
    let mut both: Vec<(Round, Option<Vec<Predicted>>)> =
        progress.rounds.into_iter().zip(progress.sims).collect();
    both.sort_by_key(|(r, _)| {
        let p = s.policies.iter().position(|&p| p == r.policy);
        (r.repetition, p)
    });
    let (rounds, sims): (Vec<Round>, Vec<Option<Vec<Predicted>>>) = both.into_iter().unzip();
    let names: Vec<(String, u8)> = s
        .jobs
        .iter()
        .map(|j| (j.name.clone(), j.priority))
        .collect();
    let r = rows(&names, &s.policies, &rounds, &sims, opts.min_overlap);
    let untraced_line = format!("prediction {}", prediction.untraced_line);
    let pressure_line = format!("prediction {}", prediction.pressure_line);
    let notes: Vec<&String> = [&untraced_line, &pressure_line]
        .into_iter()
        .filter(|_| !prediction.sets.is_empty())
        .collect();
    let text = table_text(&r, &notes, &rounds);
    println!("{text}");
    let out = Output {
        what: RunOf::of(s),
        model: &prediction.model_line,
        profile_sets: prediction.sets.len(),
        rounds: &rounds,
        rows: &r,
        complete: progress.stopped.is_none() && !incomplete,
    };
    let json = opts.exec.out_dir.join("run.json");
    std::fs::write(&json, serde_json::to_string_pretty(&out)? + "\n")
        .with_context(|| format!("cannot write {}", json.display()))?;
    let tpath = opts.exec.out_dir.join("table.txt");
    std::fs::write(
        &tpath,
        format!("prediction model: {}\n{text}\n", prediction.model_line),
    )
    .with_context(|| format!("cannot write {}", tpath.display()))?;
    let idle = launched_nothing(&rounds);
    if idle.len() < s.jobs.len() {
        warn_not_co_runs(&r, opts.min_overlap);
    }
    if !idle.is_empty() {
        eprintln!("fikit-run: {}", launched_nothing_note(&idle, s.jobs.len()));
    }
    Ok(match progress.stopped {
        Some(ExecError::Interrupted) => 130,
        Some(_) => 1,
        None if rounds.iter().all(|r| r.jobs.iter().all(|j| j.ok())) => 0,
        None => 1,
    })
}

/// The jobs that exited 0 in every round they ran in without launching a
/// kernel the gate saw: fikit-run measures a job from its first kernel
/// launch, so they have no figures.
fn launched_nothing(rounds: &[Round]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for j in rounds.iter().flat_map(|r| &r.jobs) {
        if !names.contains(&j.job) {
            names.push(j.job.clone());
        }
    }
    names.retain(|n| {
        let mut runs = rounds.iter().flat_map(|r| &r.jobs).filter(|j| &j.job == n);
        runs.all(|j| j.ok() && j.first_launch_ns.is_none())
    });
    names
}

/// What [`launched_nothing`] found, said for the user: which jobs, and what
/// to check (a GPU on this machine, a CUDA program).
fn launched_nothing_note(idle: &[String], jobs: usize) -> String {
    let who = if idle.len() == jobs {
        "no job launched a kernel in any round, so none has figures".to_string()
    } else {
        format!(
            "{} launched no kernel in any round, so {} no figures",
            idle.join(", "),
            if idle.len() == 1 {
                "it has"
            } else {
                "they have"
            }
        )
    };
    let gpu = fikit_protocol::no_gpu_driver().map_or(String::new(), |w| format!(" Here: {w}."));
    format!(
        "{who}: fikit-run measures a job from its first kernel launch; is it a CUDA \
         program, and does it run on this machine's GPU?{gpu}"
    )
}

/// A warning per policy whose repetitions were not all co-runs.
fn warn_not_co_runs(r: &[Row], min_overlap: f64) {
    let mut warned = Vec::new();
    for row in r {
        let Some(c) = row.co_runs else { continue };
        if c < row.ok_runs && !warned.contains(&row.policy) {
            warned.push(row.policy);
            eprintln!(
                "fikit-run: warning: under {}, {} of {} repetitions were not co-runs (the shortest job's region less than {:.0}% overlapped): left out of slowdown, vs timeslice and error (start the short job later, or give its partner more work)",
                row.policy.name(),
                row.ok_runs - c,
                row.ok_runs,
                min_overlap * 100.0
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_repetition_rotates_the_policies() {
        use RunPolicy::*;
        let p = [Exclusive, Timeslice, Fikit];
        assert_eq!(rotated(&p, 0), [Exclusive, Timeslice, Fikit]);
        assert_eq!(rotated(&p, 1), [Timeslice, Fikit, Exclusive]);
        assert_eq!(rotated(&p, 2), [Fikit, Exclusive, Timeslice]);
        assert_eq!(rotated(&p, 3), rotated(&p, 0));
        // Over three repetitions each policy takes each place once.
        for place in 0..3 {
            let mut at: Vec<RunPolicy> = (0..3).map(|r| rotated(&p, r)[place]).collect();
            at.sort_by_key(|x| x.name());
            let mut all = p.to_vec();
            all.sort_by_key(|x| x.name());
            assert_eq!(at, all);
        }
        assert!(rotated(&[], 5).is_empty());
    }
}
