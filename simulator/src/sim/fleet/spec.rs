//! The spec: its JSON, and its resolution ([`Resolved::new`], by step):
//! sizes checked, traces found, names made unique, models loaded, model
//! variants made of the grid, groups numbered, and the hash that stamps
//! its shards.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fikit_trace::Metadata;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::policy::PolicyKind;
use crate::sim::gpu::GpuModel;

use super::FleetError;
use super::items::{Groups, MAX_LISTED_GROUPS, binomial, combinations};

/// Which groups of jobs a spec simulates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Combos {
    /// Every job as the high-priority one beside every combination of the
    /// others (for pairs: every ordered pair, as `fikit-sim sweep TRACES`).
    #[default]
    Ordered,
    /// Only the latency-critical jobs (the best priority among the traces)
    /// as the high one, beside throughput jobs (any worse priority).
    HighLow,
}

fn two() -> usize {
    2
}

fn all_policies() -> Vec<PolicyKind> {
    PolicyKind::ALL.to_vec()
}

/// A sweep spec, as its JSON file says it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    /// Trace files, or folders searched recursively, relative to the spec's folder.
    pub traces: Vec<PathBuf>,
    /// Jobs per GPU (2 to 8): the first at priority 0, the others at 9.
    #[serde(default = "two")]
    pub group: usize,
    /// Which groups.
    #[serde(default)]
    pub combos: Combos,
    /// Policies (default: all).
    #[serde(default = "all_policies")]
    pub policies: Vec<PolicyKind>,
    /// GPU model files, relative to the spec's folder (default: the shipped
    /// calibrated model of the traces' GPU, else the documented defaults).
    #[serde(default)]
    pub models: Vec<PathBuf>,
    /// GPU model fields and the values to try; every combination is a grid
    /// point, applied to every model.
    #[serde(default)]
    pub grid: BTreeMap<String, Vec<serde_json::Value>>,
    /// Take the traces as traced, ignoring their characterization
    /// (`fikit-profile`'s untraced runs and pressure pass); by default each
    /// job's host runs at its untraced runs' median speed and its kernels
    /// press under MPS as measured, on each model.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub as_profiled: bool,
}

/// One GPU model of the sweep: a model file at one grid point.
#[derive(Debug, Clone)]
pub struct Variant {
    /// The model's name.
    pub model: String,
    /// The grid point as a JSON object (`{}` without a grid).
    pub params: String,
    /// The model with the grid point applied.
    pub gpu: GpuModel,
}

/// Most model variants (models x grid points) one spec may have.
pub const MAX_VARIANTS: u128 = 100_000;

/// A spec with its traces found, its models loaded and its items numbered.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The spec.
    pub spec: SweepSpec,
    /// The trace files, sorted.
    pub files: Vec<PathBuf>,
    /// Each trace's job name in the rows (`name#2`, … where traces share
    /// one: [`fikit_sim_core::sim::scenario::unique_names`]).
    pub names: Vec<String>,
    /// Which model the spec runs where it names none: the shipped one of
    /// the traces' GPU, or the documented defaults and why.
    pub model_line: String,
    /// The model variants.
    pub variants: Vec<Variant>,
    groups: Groups,
    /// The spec's hash: the spec, each trace's name and size, each model.
    pub hash: String,
    /// The folders the spec searches for traces.
    pub trace_dirs: Vec<PathBuf>,
}

/// Every combination of the grid's values, in key order (one empty point
/// without a grid).
fn grid_points(
    grid: &BTreeMap<String, Vec<serde_json::Value>>,
) -> Vec<Vec<(String, serde_json::Value)>> {
    let mut points: Vec<Vec<(String, serde_json::Value)>> = vec![Vec::new()];
    for (key, values) in grid {
        points = points
            .into_iter()
            .flat_map(|p| {
                values.iter().map(move |v| {
                    let mut q = p.clone();
                    q.push((key.clone(), v.clone()));
                    q
                })
            })
            .collect();
    }
    points
}

impl Resolved {
    /// Reads the spec at `path` and resolves it.
    pub fn load(path: &Path) -> Result<Resolved, FleetError> {
        let text =
            std::fs::read_to_string(path).map_err(|e| FleetError::invalid(path, e.to_string()))?;
        let spec: SweepSpec = fikit_sim_core::sim::scenario::from_json_object(&text)
            .map_err(|e| FleetError::invalid(path, e))?;
        let base = path.parent().unwrap_or(Path::new("."));
        Resolved::new(spec, base, path)
    }

    /// Resolves `spec`, its paths relative to `base`; `origin` names it in errors.
    pub fn new(spec: SweepSpec, base: &Path, origin: &Path) -> Result<Resolved, FleetError> {
        check_sizes(&spec, origin)?;
        let inputs: Vec<PathBuf> = spec.traces.iter().map(|p| base.join(p)).collect();
        let files = find_traces(&spec, &inputs, origin)?;
        // Every trace's footer (its job name and priority, the GPU for the
        // default model); only the tail of each file is read.
        let metas = files
            .par_iter()
            .map(|f| fikit_trace::read_metadata(f))
            .collect::<Result<Vec<_>, _>>()?;
        let names =
            fikit_sim_core::sim::scenario::unique_names(metas.iter().map(|m| m.job_name.as_str()));
        let (models, model_line) = base_models(&spec, &metas, base, origin)?;
        let variants = model_variants(&spec.grid, &models, origin)?;
        let groups = groups_of(&spec, &metas, origin)?;
        let hash = spec_hash(&spec, &files, base, &models)?;
        let trace_dirs = inputs.into_iter().filter(|p| p.is_dir()).collect();
        Ok(Resolved {
            trace_dirs,
            spec,
            files,
            names,
            model_line,
            variants,
            groups,
            hash,
        })
    }

    /// True when a file written at `path` would be found as one of the
    /// spec's traces (inside a folder it searches): rows written there would
    /// change the next shard's spec.
    pub fn would_find(&self, path: &Path) -> bool {
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let Ok(dir) = dir.canonicalize() else {
            return false;
        };
        self.trace_dirs
            .iter()
            .filter_map(|d| d.canonicalize().ok())
            .any(|d| dir.starts_with(d))
    }

    /// How many items the sweep has.
    pub fn items(&self) -> u64 {
        self.variants.len() as u64 * self.groups.count()
    }

    /// Item `i`: its model variant and its jobs (the first the high one).
    pub fn item(&self, i: u64) -> (usize, Vec<usize>) {
        let per = self.groups.count();
        ((i / per) as usize, self.groups.get(i % per))
    }
}

/// The spec's group size and lists, before anything is read.
fn check_sizes(spec: &SweepSpec, origin: &Path) -> Result<(), FleetError> {
    if !(2..=8).contains(&spec.group) {
        return Err(FleetError::invalid(
            origin,
            format!(
                "group: {} jobs per GPU; a sweep puts 2 to 8 on one GPU",
                spec.group
            ),
        ));
    }
    if spec.policies.is_empty() {
        return Err(FleetError::invalid(origin, "policies: the list is empty"));
    }
    if spec.traces.is_empty() {
        return Err(FleetError::invalid(origin, "traces: the list is empty"));
    }
    Ok(())
}

/// The trace files of `inputs` (files, or folders searched), sorted, at
/// least a group's worth.
fn find_traces(
    spec: &SweepSpec,
    inputs: &[PathBuf],
    origin: &Path,
) -> Result<Vec<PathBuf>, FleetError> {
    // A path that is not there, named by its entry in the spec.
    for (i, (entry, p)) in spec.traces.iter().zip(inputs).enumerate() {
        if entry.as_os_str().is_empty() || !p.exists() {
            return Err(FleetError::invalid(
                origin,
                format!(
                    "traces[{i}] {:?}: no such file or folder ({})",
                    entry.display().to_string(),
                    p.display()
                ),
            ));
        }
    }
    let mut files = fikit_trace::discover(inputs)?;
    files.sort();
    // One file reached twice (`h200` and `h200/../h200`) is one job.
    let mut seen = std::collections::HashSet::new();
    files.retain(|f| seen.insert(f.canonicalize().unwrap_or_else(|_| f.clone())));
    if files.len() < spec.group {
        return Err(FleetError::invalid(
            origin,
            format!(
                "traces: {} trace(s) found, a group needs {}",
                files.len(),
                spec.group
            ),
        ));
    }
    Ok(files)
}

/// The spec's model files, loaded; without any, the shipped model of the
/// traces' GPU (else the documented defaults).
fn base_models(
    spec: &SweepSpec,
    metas: &[Metadata],
    base: &Path,
    origin: &Path,
) -> Result<(Vec<GpuModel>, String), FleetError> {
    if spec.models.is_empty() {
        let (model, line) = crate::sim::model_for_traces(
            metas.iter().map(|m| m.device.name.as_str()),
            &crate::sim::ModelHints {
                calibrated: "",
                none: "the spec's `models` names model files",
                mixed: "the spec's `models` chooses",
            },
        );
        return Ok((vec![model], line));
    }
    let models = spec
        .models
        .iter()
        .map(|p| {
            GpuModel::load(&base.join(p)).map_err(|e| FleetError::invalid(origin, e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let named: Vec<String> = spec
        .models
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let line = format!("GPU models: {} (the spec's `models`)", named.join(", "));
    Ok((models, line))
}

/// Every model at every grid point, each checked.
fn model_variants(
    grid: &BTreeMap<String, Vec<serde_json::Value>>,
    models: &[GpuModel],
    origin: &Path,
) -> Result<Vec<Variant>, FleetError> {
    if let Some((k, _)) = grid.iter().find(|(_, v)| v.is_empty()) {
        return Err(FleetError::invalid(
            origin,
            format!("grid: {k:?} has no values"),
        ));
    }
    // The parameters a grid may vary: a model's fields but its name and source.
    let params: Vec<String> = match serde_json::to_value(GpuModel::default()) {
        Ok(serde_json::Value::Object(m)) => m
            .keys()
            .filter(|k| *k != "name" && *k != "source")
            .cloned()
            .collect(),
        _ => Vec::new(),
    };
    for (k, values) in grid {
        if !params.is_empty() && !params.contains(k) {
            return Err(FleetError::invalid(
                origin,
                format!(
                    "grid: {k:?} is not a model parameter (parameters: {})",
                    params.join(", ")
                ),
            ));
        }
        if let Some((i, v)) = values
            .iter()
            .enumerate()
            .find(|(i, v)| values[..*i].contains(v))
        {
            return Err(FleetError::invalid(
                origin,
                format!(
                    "grid: {k:?} lists {v} twice (values {i} and an earlier one): its rows would repeat"
                ),
            ));
        }
    }
    if let Some(i) = (1..models.len()).find(|&i| models[..i].contains(&models[i])) {
        return Err(FleetError::invalid(
            origin,
            format!("models: model {i} is the same as an earlier one: its rows would repeat"),
        ));
    }
    let points: u128 = grid.values().map(|v| v.len() as u128).product();
    if points * models.len() as u128 > MAX_VARIANTS {
        return Err(FleetError::invalid(
            origin,
            format!(
                "grid: {points} points x {} models is over {MAX_VARIANTS} model variants",
                models.len()
            ),
        ));
    }
    let mut variants = Vec::new();
    for m in models {
        for point in grid_points(grid) {
            let mut v = serde_json::to_value(m).expect("models serialize");
            let mut params = serde_json::Map::new();
            for (k, value) in &point {
                v[k.as_str()] = value.clone();
                params.insert(k.clone(), value.clone());
            }
            let gpu: GpuModel = serde_json::from_value(v)
                .map_err(|e| FleetError::invalid(origin, format!("grid: {e}")))?;
            gpu.validate().map_err(|e| {
                FleetError::invalid(
                    origin,
                    format!(
                        "grid point {}: {e}",
                        serde_json::Value::Object(params.clone())
                    ),
                )
            })?;
            variants.push(Variant {
                model: m.name.clone(),
                params: serde_json::Value::Object(params).to_string(),
                gpu,
            });
        }
    }
    Ok(variants)
}

/// The groups the spec's `combos` and `group` make of the traces, checked
/// to be some and not too many to list.
fn groups_of(spec: &SweepSpec, metas: &[Metadata], origin: &Path) -> Result<Groups, FleetError> {
    let n = metas.len();
    let all: Vec<usize> = (0..n).collect();
    let best = metas.iter().map(|m| m.priority).min().unwrap_or(0);
    let lows = metas.iter().filter(|m| m.priority != best).count();
    let listed = match spec.combos {
        Combos::Ordered => n as u128 * binomial(n as u128 - 1, spec.group as u128 - 1),
        Combos::HighLow => (n - lows) as u128 * binomial(lows as u128, spec.group as u128 - 1),
    };
    if spec.group > 2 && listed > MAX_LISTED_GROUPS {
        return Err(FleetError::invalid(
            origin,
            format!(
                "group: {listed} groups of {} jobs is over the {MAX_LISTED_GROUPS} a sweep lists; \
                 split the traces over several specs",
                spec.group
            ),
        ));
    }
    if spec.combos == Combos::HighLow && lows + 1 < spec.group {
        return Err(FleetError::invalid(
            origin,
            format!(
                "combos high-low: {lows} of the {n} traces have a priority worse than the best ({best}); \
                 a group of {} needs {} (profile the throughput jobs with --priority low)",
                spec.group,
                spec.group - 1
            ),
        ));
    }
    let groups = match (spec.combos, spec.group) {
        (Combos::Ordered, 2) => Groups::OrderedPairs(n),
        (Combos::Ordered, k) => Groups::Listed(
            (0..n)
                .flat_map(|h| {
                    let others: Vec<usize> = all.iter().copied().filter(|&o| o != h).collect();
                    combinations(&others, k - 1).into_iter().map(move |mut c| {
                        c.insert(0, h);
                        c
                    })
                })
                .collect(),
        ),
        (Combos::HighLow, k) => {
            let (high, low): (Vec<usize>, Vec<usize>) =
                all.iter().partition(|&&i| metas[i].priority == best);
            if k == 2 {
                Groups::Cross { high, low }
            } else {
                Groups::Listed(
                    high.iter()
                        .flat_map(|&h| {
                            combinations(&low, k - 1).into_iter().map(move |mut c| {
                                c.insert(0, h);
                                c
                            })
                        })
                        .collect(),
                )
            }
        }
    };
    if groups.count() == 0 {
        return Err(FleetError::invalid(
            origin,
            "the spec has no groups to simulate",
        ));
    }
    Ok(groups)
}

/// The hash that stamps a spec's shards: xxh3-64 of fikit-sim's version, the
/// spec as parsed, each trace's path relative to the spec and its size in
/// bytes (a stat, not a read), and each model variant's base model.
fn spec_hash(
    spec: &SweepSpec,
    files: &[PathBuf],
    base: &Path,
    models: &[GpuModel],
) -> Result<String, FleetError> {
    let mut traces = Vec::with_capacity(files.len());
    for f in files {
        let len = std::fs::metadata(f)
            .map_err(|e| FleetError::invalid(f, e.to_string()))?
            .len();
        let rel = f.strip_prefix(base).unwrap_or(f);
        traces.push((rel.display().to_string(), len));
    }
    let doc = serde_json::json!({
        "fikit_sim": env!("CARGO_PKG_VERSION"),
        "spec": spec,
        "traces": traces,
        "models": models,
    });
    let bytes = serde_json::to_vec(&doc).expect("the spec serializes");
    Ok(format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&bytes)))
}
