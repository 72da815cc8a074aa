//! What a run leaves in its folder and reads back: run.json (what ran, its
//! rounds and rows), the runs alone a set's pairs share, and what an
//! earlier, maybe unfinished run of a pair left.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::cli::bad;
use crate::exec::{JobRun, Round};
use crate::report::Row;
use crate::scenario::{RunPolicy, Scenario};
use crate::set::Set;

/// What run.json holds.
#[derive(Serialize)]
pub(crate) struct Output<'a> {
    #[serde(flatten)]
    pub(crate) what: RunOf<'a>,
    pub(crate) model: &'a str,
    /// Profile sets the prediction cycled through (repetition r: set r mod
    /// this); 0 without a prediction.
    pub(crate) profile_sets: usize,
    pub(crate) rounds: &'a [Round],
    pub(crate) rows: &'a [Row],
    pub(crate) complete: bool,
}

/// What a run.json says it ran: its policies, repetitions and jobs (name,
/// command, priority).
#[derive(Serialize)]
pub(crate) struct RunOf<'a> {
    policies: Vec<&'static str>,
    repetitions: usize,
    jobs: Vec<(&'a str, &'a [String], u8)>,
}

impl<'a> RunOf<'a> {
    pub(crate) fn of(s: &'a Scenario) -> RunOf<'a> {
        RunOf {
            policies: s.policies.iter().map(|p| p.name()).collect(),
            repetitions: s.repetitions,
            jobs: s
                .jobs
                .iter()
                .map(|j| (j.name.as_str(), j.command.as_slice(), j.priority))
                .collect(),
        }
    }
}

/// The part of an earlier run.json that `fikit-run report` and a set's reuse of
/// runs alone read.
#[derive(Deserialize)]
pub(crate) struct Saved {
    /// Name, command and priority of each job (`RunOf::jobs`).
    #[serde(default)]
    pub(crate) jobs: Vec<(String, Vec<String>, u8)>,
    pub(crate) rounds: Vec<Round>,
    pub(crate) complete: bool,
}

/// `path`'s rounds, for a report of `s`: the run must be of `s`'s jobs, by
/// name and priority in order (their commands, which a report does not
/// run, may differ), where the run.json names them.
pub(crate) fn read_saved(path: &Path, s: &Scenario) -> Result<Saved> {
    let jobs = s.jobs.len();
    let text = std::fs::read_to_string(path)
        .map_err(|e| bad(format!("{}: cannot read: {e}", path.display())))?;
    let saved: Saved = serde_json::from_str(&text)
        .map_err(|e| bad(format!("{}: not a fikit-run run.json: {e}", path.display())))?;
    let asked: Vec<(&str, u8)> = s
        .jobs
        .iter()
        .map(|j| (j.name.as_str(), j.priority))
        .collect();
    check_jobs(path, &saved.jobs, &asked, "the jobs named here").map_err(bad)?;
    for r in &saved.rounds {
        // Every round, exclusive too, holds every job of the scenario.
        if r.jobs.len() != jobs {
            return Err(bad(format!(
                "{}: a {} round has {} jobs, the scenario {jobs}",
                path.display(),
                r.policy.name(),
                r.jobs.len()
            )));
        }
    }
    Ok(saved)
}

/// Whether the jobs a run.json names (`ran`, with their commands; none in
/// files before them, which pass) are `asked` by name and priority, in
/// order; else the message naming both (`asked_as`: what asked for them).
pub(crate) fn check_jobs(
    path: &Path,
    ran: &[(String, Vec<String>, u8)],
    asked: &[(&str, u8)],
    asked_as: &str,
) -> std::result::Result<(), String> {
    let ran: Vec<(&str, u8)> = ran.iter().map(|(n, _, p)| (n.as_str(), *p)).collect();
    if ran.is_empty() || ran == asked {
        return Ok(());
    }
    let list = |v: &[(&str, u8)]| {
        v.iter()
            .map(|(n, p)| format!("{n}:{p}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Err(format!(
        "{}: a run of {} (name:priority), not of {asked_as} ({})",
        path.display(),
        list(&ran),
        list(asked)
    ))
}

/// A set's exclusive runs, each job measured alone once per repetition and
/// shared by every pair the job is in: (job, repetition) to the pair that
/// measured it and the run.
#[derive(Debug, Default)]
pub struct AloneRuns {
    runs: std::collections::BTreeMap<(String, usize), (String, JobRun)>,
}

impl AloneRuns {
    /// Job `job`'s run alone in repetition `rep`, marked as measured in the
    /// pair that ran it.
    pub(crate) fn get(&self, job: &str, rep: usize) -> Option<JobRun> {
        self.runs
            .get(&(job.to_string(), rep))
            .map(|(pair, r)| JobRun {
                alone_from: Some(pair.clone()),
                ..r.clone()
            })
    }

    /// Keeps `run` (a run alone that exited 0 and was measured, not reused)
    /// for the pairs after `pair`.
    pub(crate) fn keep(&mut self, pair: &str, rep: usize, run: &JobRun) {
        if run.ok() && run.alone_from.is_none() {
            self.runs
                .entry((run.job.clone(), rep))
                .or_insert_with(|| (pair.to_string(), run.clone()));
        }
    }

    /// Keeps the runs alone of an earlier call's `dir/run.json` (pair
    /// `pair`) whose job has the same command in `set` now.
    pub(crate) fn keep_from(&mut self, pair: &str, dir: &Path, set: &Set) {
        let Some(e) = std::fs::read_to_string(dir.join("run.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<Saved>(&t).ok())
        else {
            return;
        };
        for r in e.rounds.iter().filter(|r| r.policy == RunPolicy::Exclusive) {
            for j in &r.jobs {
                let same = e.jobs.iter().any(|(n, c, _)| {
                    *n == j.job && set.jobs.get(n).is_some_and(|now| now.command == *c)
                });
                if same {
                    self.keep(pair, r.repetition, j);
                }
            }
        }
    }
}

/// What an earlier run of a set's pair left in its folder.
pub(crate) enum Earlier {
    /// No `run.json` of this scenario.
    None,
    /// Every round ran and every job exited 0: kept, not run again; the
    /// profile sets its prediction used (1 in run.json files before them).
    Complete(usize),
    /// Stopped or failed: the rounds whose jobs all exited 0 are kept and
    /// the rest run (a stopped or failed round runs again).
    Unfinished(Vec<Round>),
}

/// What `dir/run.json` holds of a run of `s` (its policies, repetitions and
/// jobs, with names, commands and priorities, are the scenario's), read once.
pub(crate) fn earlier_run(dir: &Path, s: &Scenario) -> Earlier {
    let Some(v) = std::fs::read_to_string(dir.join("run.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
    else {
        return Earlier::None;
    };
    let Ok(want) = serde_json::to_value(RunOf::of(s)) else {
        return Earlier::None;
    };
    if !["policies", "repetitions", "jobs"]
        .into_iter()
        .all(|k| v[k] == want[k])
    {
        return Earlier::None;
    }
    let all_ok = v["rounds"].as_array().is_some_and(|rounds| {
        rounds.iter().all(|r| {
            r["jobs"]
                .as_array()
                .is_some_and(|js| js.iter().all(|j| j["exit_code"] == 0))
        })
    });
    if v["complete"] == true && all_ok {
        let sets = v["profile_sets"]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(1);
        return Earlier::Complete(sets);
    }
    Earlier::Unfinished(
        serde_json::from_value::<Saved>(v)
            .map(|saved| {
                saved
                    .rounds
                    .into_iter()
                    .filter(|r| r.jobs.len() == s.jobs.len() && r.jobs.iter().all(JobRun::ok))
                    .collect()
            })
            .unwrap_or_default(),
    )
}
