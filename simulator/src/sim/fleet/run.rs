//! Running a shard: its items' traces read once, each job run alone once
//! per model variant, then every group under every policy.

use std::collections::BTreeMap;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::policy::PolicyKind;
use crate::sim::engine::{RunError, RunResult};
use crate::sim::host::characterized;
use crate::sim::job::Job;
use crate::sim::simulate::{SimOptions, run_policy};
use crate::sim::sweep::{PairRow, group_rows};

use super::{FleetError, Resolved, Shard};

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
    let read = |j: usize| jobs[j].as_ref().expect("a used job was read");
    let mut needed: Vec<(usize, usize)> = plan
        .iter()
        .flat_map(|(_, v, g)| g.iter().map(move |&j| (*v, j)))
        .collect();
    needed.sort_unstable();
    needed.dedup();
    // Each job on each model as fikit-sim simulates it: its characterization
    // applied (host speed and MPS pressure depend on the model).
    let on_model: BTreeMap<(usize, usize), Job> = needed
        .par_iter()
        .map(|&(v, j)| {
            let job = if r.spec.as_profiled {
                read(j).clone()
            } else {
                characterized(read(j), &r.variants[v].gpu)
            };
            ((v, j), job)
        })
        .collect();
    let job = |v: usize, j: usize| &on_model[&(v, j)];
    let alone: BTreeMap<(usize, usize), RunResult> = needed
        .par_iter()
        .map(|&(v, j)| {
            run_policy(
                std::slice::from_ref(job(v, j)),
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
            let group: Vec<&Job> = g.iter().map(|&j| job(*v, j)).collect();
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
