//! A run's scenario: the jobs (real commands), their priorities and
//! profiles, when each starts, the policies and the repetitions.
//!
//! ```json
//! {
//!   "policies": ["exclusive", "timeslice", "mps", "preemptive", "fikit"],
//!   "repetitions": 3,
//!   "jobs": [
//!     {"name": "train", "priority": 9, "profile": "profiles/train.parquet",
//!      "command": ["python3", "train.py"]},
//!     {"name": "infer", "priority": 0, "profile": "profiles/infer.parquet",
//!      "command": ["python3", "infer.py"], "start": {"after": "train", "delay_s": 2}}
//!   ]
//! }
//! ```
//! `profile` (a fikit trace of the same command run alone) is needed by
//! `fikit` (the gate's predictions) and for the simulated prediction;
//! `more_profiles` (more traces of the same command alone) only widen the
//! prediction: repetition `r` is predicted with each job's profile `r` mod
//! its count, so the simulated figures' spread over the repetitions shows
//! how much one profile's host speed moves the prediction. Relative paths
//! are relative to the scenario file. `start.after` starts the job
//! `delay_s` seconds after the named job's first kernel launch, so that a job
//! still loading its model is not taken for a co-runner.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The policies fikit-run runs.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, serde::Serialize,
)]
#[serde(rename_all = "lowercase")]
pub enum RunPolicy {
    /// Each job alone, one after another (the baseline of every slowdown).
    Exclusive,
    /// Together, the GPU's default time slicing between processes.
    Timeslice,
    /// Together under a private MPS daemon.
    Mps,
    /// Together; a job launches only while no higher-priority job has a kernel in flight.
    Preemptive,
    /// Together; the top job never waits, the others fill its predicted idle gaps.
    Fikit,
}

impl RunPolicy {
    /// Every policy, in report order.
    pub const ALL: [RunPolicy; 5] = [
        RunPolicy::Exclusive,
        RunPolicy::Timeslice,
        RunPolicy::Mps,
        RunPolicy::Preemptive,
        RunPolicy::Fikit,
    ];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            RunPolicy::Exclusive => "exclusive",
            RunPolicy::Timeslice => "timeslice",
            RunPolicy::Mps => "mps",
            RunPolicy::Preemptive => "preemptive",
            RunPolicy::Fikit => "fikit",
        }
    }

    /// Parses a name.
    pub fn parse(s: &str) -> Option<RunPolicy> {
        RunPolicy::ALL.into_iter().find(|p| p.name() == s)
    }
}

/// When a job starts.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Start {
    /// Start after this job's first kernel launch…
    pub after: String,
    /// …plus this many seconds.
    #[serde(default)]
    pub delay_s: f64,
}

/// One job.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    /// Name (unique).
    pub name: String,
    /// The command and its arguments, run as is.
    pub command: Vec<String>,
    /// 0 (highest) to 9.
    #[serde(default = "lowest")]
    pub priority: u8,
    /// The job's profile: a fikit trace of the same command run alone.
    #[serde(default)]
    pub profile: Option<PathBuf>,
    /// More profiles of the same command alone, for the prediction only
    /// (the gate uses `profile`): repetition `r` is predicted with profile
    /// `r` mod their count, `profile` first.
    #[serde(default)]
    pub more_profiles: Vec<PathBuf>,
    /// When it starts (default: at once).
    #[serde(default)]
    pub start: Option<Start>,
    /// A serving job: how its command serves requests (the command itself
    /// must serve them so, e.g. `workload.py --rate R --arrivals A --seed S
    /// --iters N`). Its profile (of `profile_command`) is then re-timed to
    /// them for the prediction, and its p50/p99/p99.9 are its requests'
    /// latencies, arrival to completion, read from the last line of its
    /// output (JSON with `latency_ms: {p50, p99, p99.9}`, as workload.py
    /// prints it).
    #[serde(default)]
    pub requests: Option<Requests>,
    /// The command `fikit-run set` profiles the job with, where it differs
    /// from `command`: a serving job's model served back to back, one
    /// profile for every rate (default: `command`).
    #[serde(default)]
    pub profile_command: Option<Vec<String>>,
}

/// How a serving job's requests arrive ([`JobSpec::requests`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requests {
    /// How many.
    pub count: usize,
    /// Requests a second.
    pub rate_per_s: f64,
    /// Poisson (default) or one period apart.
    #[serde(default)]
    pub arrivals: Arrivals,
    /// The Poisson draw's seed (default 0, as workload.py's `--seed`).
    #[serde(default)]
    pub seed: u64,
}

/// [`Requests::arrivals`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    /// Exponential gaps at the mean rate, from the seed.
    #[default]
    Poisson,
    /// One period apart.
    Fixed,
}

impl Requests {
    /// The arrival times, ns from the end of the server's set-up (the
    /// simulator's draws, which workload.py's match).
    pub fn arrivals_ns(&self) -> Vec<i64> {
        use fikit_sim_core::sim::job::{fixed_arrivals, poisson_arrivals};
        match self.arrivals {
            Arrivals::Poisson => poisson_arrivals(self.count, self.rate_per_s, self.seed),
            Arrivals::Fixed => fixed_arrivals(self.count, self.rate_per_s),
        }
    }
}

/// The most requests a serving job may declare.
pub const MAX_REQUESTS: usize = 1_000_000;

fn lowest() -> u8 {
    9
}

/// A scenario.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// The jobs, 1 to [`fikit_gate::block::MAX_JOBS`].
    pub jobs: Vec<JobSpec>,
    /// The policies (default: all five).
    #[serde(default)]
    pub policies: Vec<RunPolicy>,
    /// Rounds of every policy (default 3).
    #[serde(default = "three")]
    pub repetitions: usize,
}

fn three() -> usize {
    3
}

/// A scenario that cannot be used: the file and what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ScenarioError {
    /// The scenario file (or `command line`).
    pub path: String,
    /// What is wrong, naming the field.
    pub message: String,
}

impl Scenario {
    /// Reads and checks a scenario file; relative profile paths become
    /// relative to its folder.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        let mut s = Scenario::parse(&text, &path.display().to_string())?;
        let base = path.parent().unwrap_or(Path::new(""));
        for j in &mut s.jobs {
            if let Some(p) = &j.profile
                && p.is_relative()
            {
                j.profile = Some(base.join(p));
            }
            for p in &mut j.more_profiles {
                if p.is_relative() {
                    *p = base.join(&*p);
                }
            }
        }
        Ok(s)
    }

    /// Parses and checks scenario JSON (`path` names it in errors).
    pub fn parse(text: &str, path: &str) -> Result<Scenario, ScenarioError> {
        let bad = |message: String| ScenarioError {
            path: path.to_string(),
            message,
        };
        let mut s: Scenario = fikit_sim_core::sim::scenario::from_json_object(text).map_err(bad)?;
        if s.policies.is_empty() {
            s.policies = RunPolicy::ALL.to_vec();
        }
        s.check().map_err(bad)?;
        Ok(s)
    }

    /// Checks the fields; the message names the field.
    pub fn check(&mut self) -> Result<(), String> {
        let max = fikit_gate::block::MAX_JOBS;
        if self.jobs.is_empty() || self.jobs.len() > max {
            return Err(format!(
                "jobs: {} jobs; a run has 1 to {max}",
                self.jobs.len()
            ));
        }
        if self.repetitions == 0 || self.repetitions > 100 {
            return Err(format!("repetitions: {}; use 1 to 100", self.repetitions));
        }
        let mut seen = std::collections::HashSet::new();
        for (i, j) in self.jobs.iter().enumerate() {
            let at = format!("jobs[{i}]");
            if j.name.is_empty() || !seen.insert(j.name.as_str()) {
                return Err(format!("{at}.name: empty or used twice ({:?})", j.name));
            }
            if j.command.is_empty() || j.command[0].is_empty() {
                return Err(format!("{at}.command: empty"));
            }
            if j.priority > 9 {
                return Err(format!(
                    "{at}.priority: {}; use 0 (highest) to 9",
                    j.priority
                ));
            }
            if let Some(st) = &j.start {
                if st.after == j.name || !self.jobs.iter().any(|o| o.name == st.after) {
                    return Err(format!(
                        "{at}.start.after: {:?} is not another job",
                        st.after
                    ));
                }
                if !(st.delay_s.is_finite() && (0.0..=3600.0).contains(&st.delay_s)) {
                    return Err(format!("{at}.start.delay_s: {}; use 0 to 3600", st.delay_s));
                }
            }
            if let Some(r) = &j.requests {
                if r.count == 0 || r.count > MAX_REQUESTS {
                    return Err(format!(
                        "{at}.requests.count: {}; use 1 to {MAX_REQUESTS}",
                        r.count
                    ));
                }
                if !(r.rate_per_s.is_finite() && r.rate_per_s > 0.0) {
                    return Err(format!(
                        "{at}.requests.rate_per_s: {}; must be a positive number of requests a second",
                        r.rate_per_s
                    ));
                }
            }
            if j.profile_command
                .as_ref()
                .is_some_and(|c| c.is_empty() || c[0].is_empty())
            {
                return Err(format!("{at}.profile_command: empty"));
            }
            if self.policies.contains(&RunPolicy::Fikit) && j.profile.is_none() {
                return Err(format!("{at}.profile: fikit needs each job's profile"));
            }
            if !j.more_profiles.is_empty() && j.profile.is_none() {
                return Err(format!(
                    "{at}.more_profiles: set beside a profile, which comes first"
                ));
            }
        }
        // Starts must not wait on each other in a circle.
        for (i, j) in self.jobs.iter().enumerate() {
            let mut cur = j;
            for _ in 0..=self.jobs.len() {
                match &cur.start {
                    Some(st) => cur = self.jobs.iter().find(|o| o.name == st.after).unwrap_or(cur),
                    None => break,
                }
                if cur.name == j.name {
                    return Err(format!(
                        "jobs[{i}].start.after: the starts wait on each other in a circle"
                    ));
                }
            }
        }
        let mut p = self.policies.clone();
        p.sort();
        p.dedup();
        if p.len() != self.policies.len() {
            return Err("policies: a policy is listed twice".into());
        }
        if p.iter().any(|&x| x != RunPolicy::Exclusive) && !p.contains(&RunPolicy::Exclusive) {
            // Slowdowns are against each job alone.
            self.policies.insert(0, RunPolicy::Exclusive);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAIR: &str = r#"{"repetitions": 2, "jobs": [
        {"name": "train", "command": ["python3", "t.py"], "profile": "t.parquet"},
        {"name": "infer", "priority": 0, "command": ["python3", "i.py"], "profile": "i.parquet",
         "start": {"after": "train", "delay_s": 1.5}}]}"#;

    #[test]
    fn a_pair_parses_with_defaults() {
        let s = Scenario::parse(PAIR, "s.json").unwrap();
        assert_eq!(s.policies, RunPolicy::ALL.to_vec());
        assert_eq!(s.repetitions, 2);
        assert_eq!(s.jobs[0].priority, 9);
        assert_eq!(s.jobs[1].start.as_ref().unwrap().delay_s, 1.5);
    }

    #[test]
    fn profiles_are_relative_to_the_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.json");
        std::fs::write(&p, PAIR).unwrap();
        let s = Scenario::load(&p).unwrap();
        assert_eq!(
            s.jobs[0].profile.as_deref(),
            Some(d.path().join("t.parquet").as_path())
        );
        let more = PAIR.replace(
            r#""profile": "t.parquet""#,
            r#""profile": "t.parquet", "more_profiles": ["t2.parquet", "/abs/t3.parquet"]"#,
        );
        std::fs::write(&p, more).unwrap();
        let s = Scenario::load(&p).unwrap();
        assert_eq!(
            s.jobs[0].more_profiles,
            vec![
                d.path().join("t2.parquet"),
                PathBuf::from("/abs/t3.parquet")
            ]
        );
        assert!(s.jobs[1].more_profiles.is_empty());
    }

    #[test]
    fn a_serving_jobs_arrivals_are_the_simulators() {
        let s = Scenario::parse(
            r#"{"policies": ["mps"], "jobs": [{"name": "a", "command": ["x"],
                "requests": {"count": 3, "rate_per_s": 100, "arrivals": "fixed"}}]}"#,
            "s",
        )
        .unwrap();
        let r = s.jobs[0].requests.as_ref().unwrap();
        assert_eq!(r.arrivals_ns(), [10_000_000, 20_000_000, 30_000_000]);
        // Poisson from seed 0 by default, as workload.py draws them.
        let p = Requests {
            arrivals: Arrivals::Poisson,
            ..r.clone()
        };
        assert_eq!(
            p.arrivals_ns(),
            fikit_sim_core::sim::job::poisson_arrivals(3, 100.0, 0)
        );
    }

    #[test]
    fn exclusive_is_added_for_slowdowns() {
        let s = Scenario::parse(
            r#"{"policies": ["fikit"], "jobs": [{"name": "a", "command": ["x"], "profile": "p"}]}"#,
            "s",
        )
        .unwrap();
        assert_eq!(s.policies, vec![RunPolicy::Exclusive, RunPolicy::Fikit]);
    }

    #[test]
    fn bad_scenarios_name_the_field() {
        let cases = [
            (r#"{"jobs": []}"#, "jobs: 0 jobs"),
            (
                r#"{"jobs": [{"name": "a", "command": []}], "policies": ["mps"]}"#,
                "jobs[0].command",
            ),
            (
                r#"{"jobs": [{"name": "a", "command": ["x"]}, {"name": "a", "command": ["y"]}], "policies": ["mps"]}"#,
                "jobs[1].name",
            ),
            (
                r#"{"jobs": [{"name": "a", "command": ["x"], "priority": 12}], "policies": ["mps"]}"#,
                "jobs[0].priority",
            ),
            (
                r#"{"jobs": [{"name": "a", "command": ["x"]}]}"#,
                "jobs[0].profile: fikit needs",
            ),
            (
                r#"{"jobs": [{"name": "a", "command": ["x"], "start": {"after": "b"}}], "policies": ["mps"]}"#,
                "jobs[0].start.after",
            ),
            (
                r#"{"jobs": [{"name": "a", "command": ["x"], "start": {"after": "b"}}, {"name": "b", "command": ["x"], "start": {"after": "a"}}], "policies": ["mps"]}"#,
                "circle",
            ),
            (
                r#"{"jobs": [{"name": "a", "command": ["x"]}], "policies": ["mps", "mps"]}"#,
                "twice",
            ),
            (
                r#"{"jobs": [{"name": "a", "command": ["x"], "requests": {"count": 0, "rate_per_s": 5}}], "policies": ["mps"]}"#,
                "jobs[0].requests.count: 0",
            ),
            (
                r#"{"jobs": [{"name": "a", "command": ["x"], "requests": {"count": 9, "rate_per_s": -5}}], "policies": ["mps"]}"#,
                "jobs[0].requests.rate_per_s: -5",
            ),
            (
                r#"{"jobs": [{"name": "a", "command": ["x"], "profile_command": []}], "policies": ["mps"]}"#,
                "jobs[0].profile_command: empty",
            ),
            (
                r#"{"jobs": [{"name": "a", "command": ["x"], "more_profiles": ["p2"]}], "policies": ["mps"]}"#,
                "jobs[0].more_profiles: set beside a profile",
            ),
            (
                r#"{"jobs": [{"name": "a", "command": ["x"]}], "policies": ["gang"]}"#,
                "unknown variant",
            ),
            (
                r#"{"jobs": [{"name": "a", "command": ["x"], "nice": 1}], "policies": ["mps"]}"#,
                "unknown field",
            ),
            (
                r#"{"jobs": [{"name": "a", "command": ["x"]}], "policies": ["mps"], "repetitions": 0}"#,
                "repetitions",
            ),
        ];
        for (text, want) in cases {
            let e = Scenario::parse(text, "s.json").unwrap_err().to_string();
            assert!(e.starts_with("s.json: ") && e.contains(want), "{text}: {e}");
        }
    }
}
