//! Fleet sweeps: a sweep spec (JSON: traces, jobs per GPU, which groups,
//! policies, model files, a grid of model parameters) expands into numbered
//! items, one group of jobs on one model variant. `--shard K/N` runs the
//! K-th of N contiguous ranges of item numbers and writes their rows as
//! Parquet stamped with the spec's hash; [`merge`] checks that every shard of
//! one spec is there exactly once and joins them. The whole spec on one
//! machine (`1/1`) gives the same rows, in the same order.
//!
//! Items are numbered variant-major: item `v * groups + g` is group `g` on
//! model variant `v`. Pairs are numbered tile by tile, never listed: the
//! pairs `(high, low)` of `n` jobs are cut into tiles of [`TILE`] x [`TILE`]
//! jobs, numbered tile after tile (row-major), so a contiguous range of
//! items (a shard) touches few tiles and reads only their jobs' traces:
//! a shard of 31,000 pairs out of 10,000 traces reads about 600 of them.
//! With at most [`TILE`] jobs there is one tile, and the order is the classic
//! sweep's: every ordered pair, high job first, in job order.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::FileError;
use crate::policy::PolicyKind;
use crate::sim::engine::{RunError, RunResult};
use crate::sim::gpu::GpuModel;
use crate::sim::job::Job;
use crate::sim::simulate::{SimOptions, run_policy};
use crate::sim::sweep::{PairRow, group_rows};

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
}

/// Errors of a sweep spec, its shards and their merge: bad input, each
/// naming the file and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// The spec (or a model file it names, or a rows file) cannot be read
    /// or is not valid: `PATH: MESSAGE`.
    #[error(transparent)]
    File(#[from] FileError),
    /// A trace could not be read.
    #[error(transparent)]
    Trace(#[from] fikit_trace::TraceError),
    /// The shards do not make one whole sweep, or a rows file is not one.
    #[error("{0}")]
    Merge(String),
    /// A simulation failed.
    #[error("simulating: {0}")]
    Run(#[from] RunError),
}

impl FleetError {
    fn invalid(path: &Path, message: impl Into<String>) -> FleetError {
        FleetError::File(FileError::invalid(path, message))
    }
}

/// One shard of a sweep: `k` of `n`, counted from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which, 1..=n.
    pub k: u64,
    /// How many.
    pub n: u64,
}

impl Shard {
    /// The whole sweep as one shard.
    pub const ALL: Shard = Shard { k: 1, n: 1 };

    /// Parses `K/N` (1 <= K <= N).
    pub fn parse(s: &str) -> Result<Shard, String> {
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| format!("--shard {s:?}: expected K/N, e.g. 3/16"))?;
        let k: u64 = k
            .trim()
            .parse()
            .map_err(|_| format!("--shard {s:?}: K is not a number"))?;
        let n: u64 = n
            .trim()
            .parse()
            .map_err(|_| format!("--shard {s:?}: N is not a number"))?;
        if n == 0 || k == 0 || k > n {
            return Err(format!("--shard {s:?}: K must be 1 to N, and N at least 1"));
        }
        Ok(Shard { k, n })
    }

    /// The items of this shard out of `items`: the K-th of N contiguous
    /// ranges, as even as whole items allow.
    pub fn range(self, items: u64) -> std::ops::Range<u64> {
        let at = |k: u64| ((u128::from(items) * u128::from(k)) / u128::from(self.n)) as u64;
        at(self.k - 1)..at(self.k)
    }

    /// The shard of `n` that item `i` of `items` falls in.
    pub fn of(i: u64, items: u64, n: u64) -> u64 {
        (1..=n)
            .find(|&k| Shard { k, n }.range(items).contains(&i))
            .unwrap_or(n)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
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

/// Jobs per side of a tile of pairs (see the module's documentation).
pub const TILE: u64 = 64;

/// The `g`-th ordered pair `(h, l)`, `h != l`, of `n` jobs in tile-major
/// order: tiles of [`TILE`] x [`TILE`] over (high, low), row-major; inside a
/// tile, row-major; the diagonal tiles leave out `h == l`.
pub fn ordered_pair(g: u64, n: u64) -> (u64, u64) {
    let t = TILE;
    let side = |x: u64| t.min(n - x * t);
    let th = g / (t * (n - 1));
    let hs = side(th);
    let r = g - th * t * (n - 1);
    let before = th * hs * t;
    if r < before {
        // A full tile left of the diagonal.
        let (tl, o) = (r / (hs * t), r % (hs * t));
        return (th * t + o / t, tl * t + o % t);
    }
    let r = r - before;
    let diagonal = hs * (hs - 1);
    if r < diagonal {
        let (a, b) = (r / (hs - 1), r % (hs - 1));
        return (th * t + a, th * t + if b >= a { b + 1 } else { b });
    }
    let r = r - diagonal;
    let tl = th + 1 + r / (hs * t);
    let o = r % (hs * t);
    let w = side(tl);
    (th * t + o / w, tl * t + o % w)
}

/// The `g`-th pair of `high` x `low` (sizes), in tile-major order.
pub fn cross_pair(g: u64, high: u64, low: u64) -> (u64, u64) {
    let t = TILE;
    let th = g / (t * low);
    let hs = t.min(high - th * t);
    let r = g - th * t * low;
    let tl = r / (hs * t);
    let o = r % (hs * t);
    let w = t.min(low - tl * t);
    (th * t + o / w, tl * t + o % w)
}

/// The groups of a sweep, numbered without materializing pairs.
#[derive(Debug, Clone)]
enum Groups {
    /// Every ordered pair of `n` jobs.
    OrderedPairs(usize),
    /// Each of `high` beside each of `low`.
    Cross { high: Vec<usize>, low: Vec<usize> },
    /// Listed groups (more than two jobs per GPU).
    Listed(Vec<Vec<usize>>),
}

impl Groups {
    fn count(&self) -> u64 {
        match self {
            Groups::OrderedPairs(n) => (*n as u64) * (n.saturating_sub(1) as u64),
            Groups::Cross { high, low } => (high.len() * low.len()) as u64,
            Groups::Listed(v) => v.len() as u64,
        }
    }

    fn get(&self, g: u64) -> Vec<usize> {
        match self {
            Groups::OrderedPairs(n) => {
                let (h, l) = ordered_pair(g, *n as u64);
                vec![h as usize, l as usize]
            }
            Groups::Cross { high, low } => {
                let (h, l) = cross_pair(g, high.len() as u64, low.len() as u64);
                vec![high[h as usize], low[l as usize]]
            }
            Groups::Listed(v) => v[g as usize].clone(),
        }
    }
}

/// Most model variants (models x grid points) one spec may have.
pub const MAX_VARIANTS: u128 = 100_000;

/// Most groups of more than two jobs one spec may list (they are kept in
/// memory; pairs are numbered instead and have no such limit).
pub const MAX_LISTED_GROUPS: u128 = 10_000_000;

/// `n` choose `k`, saturating.
fn binomial(n: u128, k: u128) -> u128 {
    if k > n {
        return 0;
    }
    (0..k).fold(1u128, |acc, i| acc.saturating_mul(n - i) / (i + 1))
}

/// Every combination of `k` of `from`, in lexicographic order.
fn combinations(from: &[usize], k: usize) -> Vec<Vec<usize>> {
    if k == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for i in 0..from.len() {
        for mut rest in combinations(&from[i + 1..], k - 1) {
            rest.insert(0, from[i]);
            out.push(rest);
        }
    }
    out
}

/// A spec with its traces found, its models loaded and its items numbered.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The spec.
    pub spec: SweepSpec,
    /// The trace files, sorted.
    pub files: Vec<PathBuf>,
    /// Each trace's job name in the rows (its file name without `.parquet`
    /// where two traces have one job name).
    pub names: Vec<String>,
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
        let spec: SweepSpec =
            serde_json::from_str(&text).map_err(|e| FleetError::invalid(path, e.to_string()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        Resolved::new(spec, base, path)
    }

    /// Resolves `spec`, its paths relative to `base`; `origin` names it in errors.
    pub fn new(spec: SweepSpec, base: &Path, origin: &Path) -> Result<Resolved, FleetError> {
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
        let inputs: Vec<PathBuf> = spec.traces.iter().map(|p| base.join(p)).collect();
        let mut files = fikit_trace::discover(&inputs)?;
        files.sort();
        files.dedup();
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
        // Every trace's footer (its job name and priority, the GPU for the
        // default model); only the tail of each file is read.
        let metas = files
            .par_iter()
            .map(|f| fikit_trace::read_metadata(f))
            .collect::<Result<Vec<_>, _>>()?;
        // Job names, made unique as `fikit-sim sweep TRACES` does (`name#2`).
        let mut names: Vec<String> = Vec::with_capacity(files.len());
        for m in &metas {
            let mut name = m.job_name.clone();
            let mut k = 2;
            while names.contains(&name) {
                name = format!("{}#{k}", m.job_name);
                k += 1;
            }
            names.push(name);
        }
        let models: Vec<GpuModel> = if spec.models.is_empty() {
            vec![GpuModel::for_devices(metas.iter().map(|m| m.device.name.as_str())).0]
        } else {
            spec.models
                .iter()
                .map(|p| {
                    GpuModel::load(&base.join(p))
                        .map_err(|e| FleetError::invalid(origin, e.to_string()))
                })
                .collect::<Result<_, _>>()?
        };
        if let Some((k, _)) = spec.grid.iter().find(|(_, v)| v.is_empty()) {
            return Err(FleetError::invalid(
                origin,
                format!("grid: {k:?} has no values"),
            ));
        }
        let points: u128 = spec.grid.values().map(|v| v.len() as u128).product();
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
        for m in &models {
            for point in grid_points(&spec.grid) {
                let mut v = serde_json::to_value(m).expect("models serialize");
                let mut params = serde_json::Map::new();
                for (k, value) in &point {
                    if k == "name" || k == "source" {
                        return Err(FleetError::invalid(
                            origin,
                            format!("grid: {k:?} is not a model parameter"),
                        ));
                    }
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
        let n = files.len();
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
        let hash = spec_hash(&spec, &files, base, &models)?;
        let trace_dirs = inputs.into_iter().filter(|p| p.is_dir()).collect();
        Ok(Resolved {
            trace_dirs,
            spec,
            files,
            names,
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

/// One row of a fleet sweep: one group under one policy, on one model variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepRow {
    /// The item's number in the spec.
    pub item: u64,
    /// The GPU model's name.
    pub model: String,
    /// The grid point (a JSON object; `{}` without a grid).
    pub params: String,
    /// The group's row, as the pair sweep gives it (the `low_*` columns the
    /// worst of the others).
    #[serde(flatten)]
    pub row: PairRow,
}

/// Runs the items of `shard`; `progress` is called once per item done.
/// Reads only the traces its items use, each once; runs each job alone once
/// per model variant.
pub fn run_shard(
    r: &Resolved,
    shard: Shard,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<SweepRow>, FleetError> {
    let items: Vec<u64> = shard.range(r.items()).collect();
    let plan: Vec<(u64, usize, Vec<usize>)> = items
        .iter()
        .map(|&i| {
            let (v, g) = r.item(i);
            (i, v, g)
        })
        .collect();
    let mut used = vec![false; r.files.len()];
    for (_, _, g) in &plan {
        for &j in g {
            used[j] = true;
        }
    }
    // Each job under its row name (names are unique; job names may not be).
    let jobs: Vec<Option<Job>> = r
        .files
        .par_iter()
        .zip(&r.names)
        .zip(&used)
        .map(|((f, name), &u)| {
            u.then(|| {
                fikit_trace::read_trace(f).map(|t| {
                    let mut job = Job::from_trace(&t);
                    job.name = name.clone();
                    job
                })
            })
            .transpose()
        })
        .collect::<Result<_, _>>()?;
    let job = |j: usize| jobs[j].as_ref().expect("a used job was read");
    let mut needed: Vec<(usize, usize)> = plan
        .iter()
        .flat_map(|(_, v, g)| g.iter().map(move |&j| (*v, j)))
        .collect();
    needed.sort_unstable();
    needed.dedup();
    let alone: BTreeMap<(usize, usize), RunResult> = needed
        .par_iter()
        .map(|&(v, j)| {
            run_policy(
                std::slice::from_ref(job(j)),
                &[0],
                PolicyKind::Exclusive,
                &r.variants[v].gpu,
                false,
            )
            .map(|res| ((v, j), res))
        })
        .collect::<Result<_, RunError>>()?;
    let mut policies = r.spec.policies.clone();
    policies.sort();
    policies.dedup();
    let sims: Vec<SimOptions> = r
        .variants
        .iter()
        .map(|v| SimOptions {
            policies: policies.clone(),
            model: v.gpu.clone(),
            record_segments: false,
        })
        .collect();
    let rows: Vec<Vec<SweepRow>> = plan
        .par_iter()
        .map(|(i, v, g)| {
            let group: Vec<&Job> = g.iter().map(|&j| job(j)).collect();
            let iso: Vec<RunResult> = g.iter().map(|&j| alone[&(*v, j)].clone()).collect();
            let rows = group_rows(&group, &iso, &sims[*v])?;
            progress();
            let variant = &r.variants[*v];
            Ok(rows
                .into_iter()
                .map(|row| SweepRow {
                    item: *i,
                    model: variant.model.clone(),
                    params: variant.params.clone(),
                    row,
                })
                .collect())
        })
        .collect::<Result<_, RunError>>()?;
    Ok(rows.into_iter().flatten().collect())
}

/// What a rows file says about itself (Parquet key/value metadata `fikit.sweep.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowsMeta {
    /// The spec's hash.
    pub spec_hash: String,
    /// Items in the whole spec.
    pub items: u64,
    /// The shard the rows are; `None` for a merged table.
    pub shard: Option<Shard>,
}

const KEY: &str = "fikit.sweep.";

/// Writes sweep rows as Parquet (zstd), with `meta` as key/value metadata.
pub fn write_rows(path: &Path, rows: &[SweepRow], meta: &RowsMeta) -> Result<(), FleetError> {
    use fikit_trace::polars::prelude::*;
    let col = |name: &str, s: Series| s.with_name(name.into()).into_column();
    let strs = |f: fn(&SweepRow) -> &str| rows.iter().map(f).collect::<Vec<&str>>();
    let columns = vec![
        col(
            "item",
            Series::new("".into(), rows.iter().map(|r| r.item).collect::<Vec<u64>>()),
        ),
        col("model", Series::new("".into(), strs(|r| &r.model))),
        col("params", Series::new("".into(), strs(|r| &r.params))),
        col("high", Series::new("".into(), strs(|r| &r.row.high))),
        col("low", Series::new("".into(), strs(|r| &r.row.low))),
        col(
            "policy",
            Series::new("".into(), strs(|r| r.row.policy.as_str())),
        ),
        col(
            "high_vs_timeslice",
            Series::new(
                "".into(),
                rows.iter()
                    .map(|r| r.row.high_vs_timeslice)
                    .collect::<Vec<f64>>(),
            ),
        ),
        col(
            "low_vs_timeslice",
            Series::new(
                "".into(),
                rows.iter()
                    .map(|r| r.row.low_vs_timeslice)
                    .collect::<Vec<f64>>(),
            ),
        ),
        col(
            "high_slowdown",
            Series::new(
                "".into(),
                rows.iter()
                    .map(|r| r.row.high_slowdown)
                    .collect::<Vec<f64>>(),
            ),
        ),
        col(
            "low_slowdown",
            Series::new(
                "".into(),
                rows.iter()
                    .map(|r| r.row.low_slowdown)
                    .collect::<Vec<f64>>(),
            ),
        ),
        col(
            "high_p99_ns",
            Series::new(
                "".into(),
                rows.iter().map(|r| r.row.high_p99_ns).collect::<Vec<i64>>(),
            ),
        ),
    ];
    let mut df = DataFrame::new(rows.len(), columns)
        .map_err(|e| FleetError::invalid(path, e.to_string()))?;
    fikit_trace::write_dataframe(path, &mut df, rows_metadata(meta))?;
    Ok(())
}

/// A rows file's key/value metadata.
fn rows_metadata(meta: &RowsMeta) -> Vec<(String, String)> {
    vec![
        (format!("{KEY}spec_hash"), meta.spec_hash.clone()),
        (format!("{KEY}items"), meta.items.to_string()),
        (
            format!("{KEY}shard"),
            meta.shard.map_or("merged".to_string(), |s| s.to_string()),
        ),
        (
            format!("{KEY}producer"),
            format!("fikit-sim {}", env!("CARGO_PKG_VERSION")),
        ),
    ]
}

/// Reads a rows file [`write_rows`] wrote, checking its metadata and columns.
pub fn read_rows(path: &Path) -> Result<(Vec<SweepRow>, RowsMeta), FleetError> {
    let (df, kv) = fikit_trace::read_table(path)?;
    let bad = |m: String| FleetError::invalid(path, m);
    let get = |k: &str| {
        kv.iter()
            .find(|(key, _)| key.strip_prefix(KEY) == Some(k))
            .map(|(_, v)| v.clone())
            .ok_or_else(|| {
                bad(format!(
                    "not a fikit sweep rows file: no `{KEY}{k}` metadata"
                ))
            })
    };
    let spec_hash = get("spec_hash")?;
    let items: u64 = get("items")?
        .parse()
        .map_err(|_| bad(format!("`{KEY}items` is not a number")))?;
    let shard = match get("shard")?.as_str() {
        "merged" => None,
        s => Some(Shard::parse(s).map_err(|e| bad(format!("`{KEY}shard`: {e}")))?),
    };
    let column = |name: &str| {
        df.column(name)
            .map_err(|_| bad(format!("column `{name}` is missing")))
    };
    let typed = |name: &str, what: &str| bad(format!("column `{name}` is not {what}"));
    let strs = |name: &str| -> Result<Vec<String>, FleetError> {
        let c = column(name)?.str().map_err(|_| typed(name, "text"))?;
        c.iter()
            .map(|v| {
                v.map(String::from)
                    .ok_or_else(|| bad(format!("column `{name}` has a null")))
            })
            .collect()
    };
    let f64s = |name: &str| -> Result<Vec<f64>, FleetError> {
        let c = column(name)?.f64().map_err(|_| typed(name, "f64"))?;
        c.iter()
            .map(|v| v.ok_or_else(|| bad(format!("column `{name}` has a null"))))
            .collect()
    };
    let item: Vec<u64> = column("item")?
        .u64()
        .map_err(|_| typed("item", "u64"))?
        .iter()
        .map(|v| v.ok_or_else(|| bad("column `item` has a null".into())))
        .collect::<Result<_, _>>()?;
    let p99: Vec<i64> = column("high_p99_ns")?
        .i64()
        .map_err(|_| typed("high_p99_ns", "i64"))?
        .iter()
        .map(|v| v.ok_or_else(|| bad("column `high_p99_ns` has a null".into())))
        .collect::<Result<_, _>>()?;
    let (model, params, high, low, policy) = (
        strs("model")?,
        strs("params")?,
        strs("high")?,
        strs("low")?,
        strs("policy")?,
    );
    let (hv, lv, hs, ls) = (
        f64s("high_vs_timeslice")?,
        f64s("low_vs_timeslice")?,
        f64s("high_slowdown")?,
        f64s("low_slowdown")?,
    );
    let mut rows = Vec::with_capacity(df.height());
    for i in 0..df.height() {
        let policy = PolicyKind::from_name(&policy[i])
            .ok_or_else(|| bad(format!("row {i}: unknown policy {:?}", policy[i])))?;
        if item[i] >= items {
            return Err(bad(format!(
                "row {i}: item {} of a sweep of {items}",
                item[i]
            )));
        }
        rows.push(SweepRow {
            item: item[i],
            model: model[i].clone(),
            params: params[i].clone(),
            row: PairRow {
                high: high[i].clone(),
                low: low[i].clone(),
                policy,
                high_vs_timeslice: hv[i],
                low_vs_timeslice: lv[i],
                high_slowdown: hs[i],
                low_slowdown: ls[i],
                high_p99_ns: p99[i],
            },
        });
    }
    Ok((
        rows,
        RowsMeta {
            spec_hash,
            items,
            shard,
        },
    ))
}

/// Checks that `files` are the shards of one sweep: one spec hash and shard
/// count, each shard exactly once, each holding exactly its items, every
/// item with the same policies' rows. Reads one shard at a time. Returns the
/// merged table's metadata and the files in shard order (which is item
/// order: shards are contiguous item ranges).
pub fn check_shards(files: &[PathBuf]) -> Result<(RowsMeta, Vec<PathBuf>), FleetError> {
    let first = files
        .first()
        .ok_or_else(|| FleetError::Merge("no shard files given".into()))?;
    let mut m0: Option<RowsMeta> = None;
    let mut want: Option<Vec<PolicyKind>> = None;
    let mut seen: BTreeMap<u64, PathBuf> = BTreeMap::new();
    for path in files {
        let (rows, m) = read_rows(path)?;
        let s = m.shard.ok_or_else(|| {
            FleetError::Merge(format!("{}: a merged table, not a shard", path.display()))
        })?;
        let m0 = m0.get_or_insert_with(|| m.clone());
        let n = m0.shard.map_or(s.n, |s0| s0.n);
        if m.spec_hash != m0.spec_hash || m.items != m0.items {
            return Err(FleetError::Merge(format!(
                "{} is of another sweep (spec hash {}, {} items) than {} (spec hash {}, {} items)",
                path.display(),
                m.spec_hash,
                m.items,
                first.display(),
                m0.spec_hash,
                m0.items
            )));
        }
        if s.n != n {
            return Err(FleetError::Merge(format!(
                "{} is shard {s} but {} is of {n} shards",
                path.display(),
                first.display()
            )));
        }
        if let Some(other) = seen.insert(s.k, path.clone()) {
            return Err(FleetError::Merge(format!(
                "shard {s} is there twice: {} and {}",
                other.display(),
                path.display()
            )));
        }
        let range = s.range(m.items);
        if let Some(r) = rows.iter().find(|r| !range.contains(&r.item)) {
            return Err(FleetError::Merge(format!(
                "{}: shard {s} holds item {}, which belongs to shard {}/{n}",
                path.display(),
                r.item,
                Shard::of(r.item, m.items, n)
            )));
        }
        let mut per_item: BTreeMap<u64, Vec<PolicyKind>> = BTreeMap::new();
        for r in &rows {
            per_item.entry(r.item).or_default().push(r.row.policy);
        }
        if want.is_none() {
            want = per_item.values().next().cloned();
        }
        if let Some(want) = &want
            && let Some((item, got)) = per_item.iter().find(|(_, got)| *got != want)
        {
            return Err(FleetError::Merge(format!(
                "{}: item {item} has rows for {:?}, the sweep's items for {:?}",
                path.display(),
                got.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
                want.iter().map(|p| p.as_str()).collect::<Vec<_>>()
            )));
        }
        let expected = range.end - range.start;
        if per_item.len() as u64 != expected {
            return Err(FleetError::Merge(format!(
                "{}: shard {s} holds {} of its {expected} items",
                path.display(),
                per_item.len()
            )));
        }
    }
    let m0 = m0.expect("at least one file was read");
    let n = m0.shard.map_or(1, |s| s.n);
    let missing: Vec<String> = (1..=n)
        .filter(|k| !seen.contains_key(k))
        .map(|k| format!("{k}/{n}"))
        .collect();
    if !missing.is_empty() {
        return Err(FleetError::Merge(format!(
            "shards missing: {} (of {n}; given {})",
            missing.join(", "),
            files.len()
        )));
    }
    let meta = RowsMeta {
        spec_hash: m0.spec_hash,
        items: m0.items,
        shard: None,
    };
    Ok((meta, seen.into_values().collect()))
}

/// Joins the shards of one sweep ([`check_shards`]) in memory: the rows in
/// item order, as the whole sweep run on one machine gives them.
pub fn merge(files: &[PathBuf]) -> Result<(Vec<SweepRow>, RowsMeta), FleetError> {
    let (meta, ordered) = check_shards(files)?;
    let mut rows = Vec::new();
    for f in &ordered {
        rows.extend(read_rows(f)?.0);
    }
    Ok((rows, meta))
}

/// Joins the shards of one sweep ([`check_shards`]) into the rows file
/// `output`, one shard in memory at a time; returns the rows written.
pub fn merge_into(files: &[PathBuf], output: &Path) -> Result<(u64, RowsMeta), FleetError> {
    let (meta, ordered) = check_shards(files)?;
    let (first, _) = fikit_trace::read_table(&ordered[0])?;
    let schema = first.schema().as_ref().clone();
    drop(first);
    let frames = ordered
        .iter()
        .map(|f| fikit_trace::read_table(f).map(|(df, _)| df));
    let rows = fikit_trace::write_dataframes(output, &schema, frames, rows_metadata(&meta))?;
    Ok((rows, meta))
}
