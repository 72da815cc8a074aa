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

mod combine;
mod render;
mod summary;
#[cfg(test)]
mod tests;

pub use combine::*;
pub use render::*;
pub use summary::*;

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
    /// A serving job's requests ([`JobSpec::requests`]).
    #[serde(default)]
    pub requests: Option<crate::scenario::Requests>,
    /// The command to profile it with, where not `command`
    /// ([`JobSpec::profile_command`]).
    #[serde(default)]
    pub profile_command: Option<Vec<String>>,
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
        let mut s: Set = fikit_sim_core::sim::scenario::from_json_object(&text)
            .map_err(|e| format!("{p}: {e}"))?;
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
                        requests: j.requests.clone(),
                        profile_command: j.profile_command.clone(),
                    }
                })
                .collect(),
            policies: self.policies.clone(),
            repetitions: self.repetitions,
        }
    }
}
