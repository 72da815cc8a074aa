//! Scenarios: which jobs share the GPU, with what priority, when they start,
//! how often they repeat and, for inference jobs, when requests arrive.
//!
//! A scenario file is JSON:
//!
//! ```json
//! {
//!   "name": "resnet50 b1 serving beside training",
//!   "seed": 1,
//!   "jobs": [
//!     { "trace": "h100/resnet50-b1.parquet", "priority": 0,
//!       "requests": { "count": 200, "rate_per_s": 150 } },
//!     { "trace": "h100/resnet50-train.parquet", "priority": 9, "start_ns": 0, "repeat": 3 }
//!   ]
//! }
//! ```
//!
//! Trace paths are relative to the scenario file. `priority` (0 highest … 9)
//! and `name` default to the trace's metadata; `start_ns` to 0; `repeat` to 1.
//! `requests` makes the job a server of `count` requests arriving at
//! `rate_per_s` (see [`Job::serving`]); its iterations' latencies then
//! include queueing. `"arrivals": "poisson"` (the default) draws them from
//! the job's own seed (`"seed"` in `requests`, else the scenario's mixed
//! with the job's index), `"fixed"` spaces them evenly, the first one period
//! in: the arrivals `scripts/workloads/workload.py --rate R --arrivals A
//! --seed S` serves on a real GPU, so a real open-loop run and its scenario
//! see the same arrival times.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::FileError;
use crate::sim::job::{HostStep, Job, fixed_arrivals, poisson_arrivals};

/// A scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// A name for reports.
    #[serde(default)]
    pub name: Option<String>,
    /// Seed of every random draw (request arrivals); default 1.
    #[serde(default)]
    pub seed: Option<u64>,
    /// The jobs.
    pub jobs: Vec<JobSpec>,
}

/// One job of a scenario.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    /// The job's trace.
    pub trace: PathBuf,
    /// Name in reports (default: the trace's job name).
    #[serde(default)]
    pub name: Option<String>,
    /// Priority, 0 highest … 9 lowest (default: the trace's).
    #[serde(default)]
    pub priority: Option<u8>,
    /// When the job arrives, ns (default 0).
    #[serde(default)]
    pub start_ns: i64,
    /// How many times the whole program runs back to back (default 1).
    #[serde(default)]
    pub repeat: Option<usize>,
    /// Request arrivals, for serving jobs.
    #[serde(default)]
    pub requests: Option<Requests>,
}

impl JobSpec {
    /// Its trace file, resolved against `base` (the scenario file's folder),
    /// or why there is none there (the message for `jobs[i].trace`).
    pub fn trace_path(&self, base: &Path) -> Result<PathBuf, String> {
        let path = base.join(&self.trace);
        if self.trace.as_os_str().is_empty() || !path.is_file() {
            return Err(format!("no such trace file ({})", path.display()));
        }
        Ok(path)
    }
}

/// Request arrivals.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requests {
    /// Number of requests.
    pub count: usize,
    /// Mean arrival rate, requests per second.
    pub rate_per_s: f64,
    /// How they arrive: Poisson (the default) or evenly spaced.
    #[serde(default)]
    pub arrivals: ArrivalKind,
    /// The seed of this job's Poisson draw; default: the scenario's seed
    /// mixed with the job's index.
    #[serde(default)]
    pub seed: Option<u64>,
}

/// How a serving job's requests arrive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArrivalKind {
    /// Exponential inter-arrival times ([`poisson_arrivals`]).
    #[default]
    Poisson,
    /// One period apart, the first one period in ([`fixed_arrivals`]).
    Fixed,
}

/// Jobs ready to simulate, with their arrival times.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Name.
    pub name: String,
    /// Jobs.
    pub jobs: Vec<Job>,
    /// Arrival of each job, ns.
    pub arrivals: Vec<i64>,
}

/// Errors building a scenario.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The scenario file could not be read (`cannot read the scenario
    /// PATH`, the reason its source) or is not valid (`PATH: MESSAGE`).
    #[error(transparent)]
    File(#[from] FileError),
    /// A trace could not be read.
    #[error(transparent)]
    Trace(#[from] fikit_trace::TraceError),
}

/// The name of a scenario made of traces ([`Scenario::from_traces`]): its
/// jobs' names, `a + b`, or their count where more than three would make a
/// long title.
pub fn traces_name(names: &[&str]) -> String {
    match names.len() {
        0 => "no jobs".to_string(),
        1..=3 => names.join(" + "),
        n => format!("{n} jobs together"),
    }
}

impl Scenario {
    /// One job per trace, as recorded: priorities from the traces, arriving
    /// so that their first kernel launches line up
    /// ([`crate::sim::simulate::line_up`]).
    pub fn from_traces(files: &[PathBuf]) -> Result<Scenario, ScenarioError> {
        Scenario::from_traces_with(files, false)
    }

    /// [`Scenario::from_traces`]; with `shapes`, the jobs keep their launch
    /// shapes (for live replay: [`Job::from_trace_with_shapes`]).
    pub fn from_traces_with(files: &[PathBuf], shapes: bool) -> Result<Scenario, ScenarioError> {
        use rayon::prelude::*;
        let read = |f: &PathBuf| Ok(job_of(&fikit_trace::read_trace(f)?, shapes));
        // Traces are independent: read and convert them in parallel, keeping
        // their order; but one at a time when they are large, so that only
        // one trace's data frame and events are in memory beside the jobs.
        let bytes: u64 = files
            .iter()
            .filter_map(|f| std::fs::metadata(f).ok())
            .map(|m| m.len())
            .sum();
        let mut jobs = if bytes > PARALLEL_READ_BYTES {
            files
                .iter()
                .map(read)
                .collect::<Result<Vec<Job>, ScenarioError>>()?
        } else {
            files
                .par_iter()
                .map(read)
                .collect::<Result<Vec<Job>, ScenarioError>>()?
        };
        dedup_names(&mut jobs);
        Ok(Scenario {
            name: traces_name(&jobs.iter().map(|j| j.name.as_str()).collect::<Vec<_>>()),
            // Together: their first kernel launches lined up, as fikit-run
            // lines real jobs up.
            arrivals: crate::sim::simulate::line_up(&jobs, &vec![0; jobs.len()]),
            jobs,
        })
    }

    /// Reads a scenario file.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        Scenario::load_with(path, false)
    }

    /// [`Scenario::load`]; with `shapes`, the jobs keep their launch shapes.
    pub fn load_with(path: &Path, shapes: bool) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| FileError::unreadable("scenario", path, e))?;
        Scenario::parse_with(&text, path, shapes)
    }

    /// Builds a scenario from `text`, the JSON of the scenario file at `path`:
    /// trace paths are relative to `path`'s folder, and errors name `path`.
    pub fn parse(text: &str, path: &Path) -> Result<Scenario, ScenarioError> {
        Scenario::parse_with(text, path, false)
    }

    /// [`Scenario::parse`]; with `shapes`, the jobs keep their launch shapes.
    pub fn parse_with(text: &str, path: &Path, shapes: bool) -> Result<Scenario, ScenarioError> {
        let invalid = |message: String| ScenarioError::from(FileError::invalid(path, message));
        let file: ScenarioFile = from_json_object(text).map_err(invalid)?;
        if file.jobs.is_empty() {
            return Err(invalid(
                "`jobs` is empty: a scenario needs at least one job".into(),
            ));
        }
        let base = path.parent().unwrap_or(Path::new("."));
        let seed = file.seed.unwrap_or(1);
        let mut jobs = Vec::with_capacity(file.jobs.len());
        let mut arrivals = Vec::with_capacity(file.jobs.len());
        for (i, spec) in file.jobs.iter().enumerate() {
            let at = |field: &str, what: String| invalid(format!("jobs[{i}].{field}: {what}"));
            if let Some(p) = spec.priority
                && p > 9
            {
                return Err(at(
                    "priority",
                    format!("must be 0 (highest) to 9, found {p}"),
                ));
            }
            if spec.start_ns < 0 {
                return Err(at(
                    "start_ns",
                    format!("must not be negative, found {}", spec.start_ns),
                ));
            }
            if spec.repeat == Some(0) {
                return Err(at("repeat", "must be at least 1".into()));
            }
            let path = spec.trace_path(base).map_err(|why| at("trace", why))?;
            let trace = fikit_trace::read_trace(&path)?;
            let mut job = job_of(&trace, shapes);
            if let Some(n) = spec.repeat
                && n > 1
            {
                let per_run = job.steps.len() + job.ops.len();
                if n.checked_mul(per_run).is_none_or(|t| t > MAX_JOB_STEPS) {
                    return Err(at(
                        "repeat",
                        format!(
                            "{n} runs of {per_run} steps and operations are more than the \
                             {MAX_JOB_STEPS} a job may have"
                        ),
                    ));
                }
                job = job.repeated(n);
            }
            if let Some(r) = &spec.requests {
                if r.count == 0 {
                    return Err(at("requests.count", "must be at least 1".into()));
                }
                let per_request = 2 * longest_iteration(&job);
                if r.count
                    .checked_mul(per_request)
                    .is_none_or(|t| t > MAX_JOB_STEPS)
                {
                    return Err(at(
                        "requests.count",
                        format!(
                            "{} requests of up to {per_request} steps and operations are more \
                             than the {MAX_JOB_STEPS} a job may have",
                            r.count
                        ),
                    ));
                }
                if !(r.rate_per_s.is_finite() && r.rate_per_s > 0.0) {
                    return Err(at(
                        "requests.rate_per_s",
                        format!("must be a positive number, found {}", r.rate_per_s),
                    ));
                }
                let arrivals = match r.arrivals {
                    // Each job draws from its own stream: its seed, else the
                    // scenario's mixed with its index.
                    ArrivalKind::Poisson => poisson_arrivals(
                        r.count,
                        r.rate_per_s,
                        r.seed
                            .unwrap_or(seed ^ (i as u64).wrapping_mul(0x9E37_79B9)),
                    ),
                    ArrivalKind::Fixed => fixed_arrivals(r.count, r.rate_per_s),
                };
                job = job.serving(&arrivals);
            }
            if let Some(name) = &spec.name {
                if name.trim().is_empty() {
                    return Err(at("name", "must not be empty".into()));
                }
                job.name = name.clone();
            }
            if let Some(p) = spec.priority {
                job.priority = p;
            }
            jobs.push(job);
            arrivals.push(spec.start_ns);
        }
        dedup_names(&mut jobs);
        Ok(Scenario {
            name: file.name.unwrap_or_else(|| path.display().to_string()),
            jobs,
            arrivals,
        })
    }
}

fn job_of(trace: &fikit_trace::Trace, shapes: bool) -> Job {
    if shapes {
        Job::from_trace_with_shapes(trace)
    } else {
        Job::from_trace(trace)
    }
}

/// Trace files of more bytes than this in all are read one at a time
/// (256 MiB: about 1.5 million kernels of zstd Parquet, whose events take
/// about 1.3 GB while a trace is read).
pub const PARALLEL_READ_BYTES: u64 = 256 << 20;

/// The most host steps plus GPU operations one job of a scenario may have
/// after `repeat` and `requests` (2^30, about 100 GB in memory): a bound on
/// what is plausible, so a mistyped count is an error rather than an
/// allocation that aborts the program.
pub const MAX_JOB_STEPS: usize = 1 << 30;

/// The most host steps in one iteration of `job` (an iteration ends with a
/// blocking wait that ends one; the steps after the last one count too).
fn longest_iteration(job: &Job) -> usize {
    let (mut longest, mut current) = (0, 0);
    for step in job.steps.iter() {
        current += 1;
        if let HostStep::Wait {
            ends_iteration: true,
            ..
        } = step
        {
            longest = longest.max(current);
            current = 0;
        }
    }
    longest.max(current).max(1)
}

/// `text`, a JSON object, as a `T`: a byte-order mark before it is skipped,
/// and a top level that is no object is named as such (serde would read an
/// array as a struct's fields in order and complain about the first).
pub fn from_json_object<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let t = text.trim_start();
    let kind = match t.chars().next() {
        None => return Err("empty: the file holds no JSON".into()),
        Some('[') => Some("an array"),
        Some('"') => Some("a string"),
        Some(c) if c == '-' || c.is_ascii_digit() => Some("a number"),
        // Keywords only whole (`not json` is no JSON at all: serde says so).
        _ if t.starts_with("true") || t.starts_with("false") => Some("a boolean"),
        _ if t.starts_with("null") => Some("null"),
        _ => None,
    };
    if let Some(kind) = kind {
        return Err(format!(
            "the top level is {kind}; it must be a JSON object ({{ ... }})"
        ));
    }
    serde_json::from_str(text).map_err(|e| e.to_string())
}

/// Makes job names unique by suffixing `#2`, `#3`, … to repeats.
fn dedup_names(jobs: &mut [Job]) {
    let names = unique_names(jobs.iter().map(|j| j.name.as_str()));
    for (j, n) in jobs.iter_mut().zip(names) {
        j.name = n;
    }
}

/// `names` made unique, in order: each name's first use keeps it; a repeat
/// becomes `name#k`, the least `k` from 2 that is neither given to an
/// earlier job nor any job's own name (so `a, a, a#2` is `a, a#3, a#2`:
/// options that name a job, `--priority a#2=0`, mean the one so named).
pub fn unique_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let names: Vec<&str> = names.into_iter().collect();
    let own: std::collections::HashSet<&str> = names.iter().copied().collect();
    let mut taken: std::collections::HashSet<String> = std::collections::HashSet::new();
    names
        .iter()
        .map(|&n| {
            let name = if taken.contains(n) {
                (2u64..)
                    .map(|k| format!("{n}#{k}"))
                    .find(|c| !taken.contains(c) && !own.contains(c.as_str()))
                    .expect("some suffix is free")
            } else {
                n.to_string()
            };
            taken.insert(name.clone());
            name
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{from_json_object, traces_name, unique_names};

    #[test]
    fn a_json_file_must_be_an_object_and_may_start_with_a_byte_order_mark() {
        let v: serde_json::Value = from_json_object("\u{feff} {\"jobs\": []}").unwrap();
        assert_eq!(v["jobs"], serde_json::json!([]));
        for (text, kind) in [
            ("[{}]", "an array"),
            (" \"x\"", "a string"),
            ("42", "a number"),
            ("-1", "a number"),
            ("null", "null"),
            ("true", "a boolean"),
        ] {
            let e = from_json_object::<serde_json::Value>(text).unwrap_err();
            assert_eq!(
                e,
                format!("the top level is {kind}; it must be a JSON object ({{ ... }})"),
                "{text}"
            );
        }
        assert_eq!(
            from_json_object::<serde_json::Value>("\n ").unwrap_err(),
            "empty: the file holds no JSON"
        );
        // A word that only starts like a keyword is no JSON: serde says so.
        assert!(
            from_json_object::<serde_json::Value>("not json")
                .unwrap_err()
                .starts_with("expected")
        );
        // Anything else is serde's to judge, with its line and column.
        assert!(
            from_json_object::<serde_json::Value>("{\"a\": }")
                .unwrap_err()
                .contains("line 1 column")
        );
    }

    #[test]
    fn traces_are_named_by_their_jobs_or_their_count() {
        assert_eq!(traces_name(&["bert", "r50"]), "bert + r50");
        assert_eq!(traces_name(&["a", "b", "c"]), "a + b + c");
        assert_eq!(traces_name(&["a", "b", "c", "d"]), "4 jobs together");
        assert_eq!(traces_name(&[]), "no jobs");
    }

    #[test]
    fn repeated_names_take_the_first_free_suffix_and_never_a_jobs_own() {
        assert_eq!(unique_names(["a", "b", "a", "a"]), ["a", "b", "a#2", "a#3"]);
        // A job named a#2 keeps its name: the repeat of a takes a#3, so the
        // names stay unique and an option naming a#2 means that job.
        assert_eq!(unique_names(["a", "a", "a#2"]), ["a", "a#3", "a#2"]);
        assert_eq!(unique_names(["a#2", "a", "a"]), ["a#2", "a", "a#3"]);
        // A repeat of a suffixed name is suffixed in turn.
        assert_eq!(
            unique_names(["a", "a", "a#2", "a#2"]),
            ["a", "a#3", "a#2", "a#2#2"]
        );
    }
}
