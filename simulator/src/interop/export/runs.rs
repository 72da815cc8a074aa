//! Simulated runs' slices: per policy, one process per job, a `job`
//! track from arrival to finish and a track per stream with the kernels
//! where the policy ran them.

use std::collections::HashMap;

use fikit_trace::Trace;
use serde_json::{Map, Value, json};

use crate::policy::PolicyKind;
use crate::sim::engine::{RunError, Segment};
use crate::sim::gpu::GpuModel;
use crate::sim::job::Job;
use crate::sim::scenario::Scenario;
use crate::sim::simulate::run_policy;

use super::assemble::{JobSlices, Pending, TrackKey, assemble};
use super::{Arg, ChromeTrace, ExportOptions, key_hex, producer};

/// What a simulated kernel was in its trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpInfo {
    /// Demangled name.
    pub name: String,
    /// Mangled name.
    pub mangled: String,
    /// Grid.
    pub grid: [u32; 3],
    /// Block.
    pub block: [u32; 3],
    /// Correlation id of the recorded kernel.
    pub correlation_id: u32,
}

/// For each op of `job` (made from `trace`, possibly repeated or serving
/// requests), the recorded kernel it replays; `None` for copies and memsets.
/// Ops are matched by recorded start, duration and kernel key.
pub fn op_infos(job: &Job, trace: &Trace) -> Vec<Option<OpInfo>> {
    let base = Job::from_trace(trace);
    let gpu_first = trace
        .kernels
        .iter()
        .map(|k| k.start_ns)
        .chain(trace.memops.iter().map(|m| m.start_ns))
        .min();
    let op_first = base.ops.iter().map(|o| o.recorded_start_ns).min();
    let origin = match (gpu_first, op_first) {
        (Some(a), Some(b)) => a - b,
        _ => 0,
    };
    let mut index: HashMap<(i64, i64, u64), usize> = HashMap::with_capacity(trace.kernels.len());
    for (i, k) in trace.kernels.iter().enumerate() {
        index
            .entry((k.start_ns - origin, k.duration_ns(), k.kernel_key))
            .or_insert(i);
    }
    job.ops
        .iter()
        .map(|o| {
            let key = o.kernel_key()?;
            let k = &trace.kernels[*index.get(&(o.recorded_start_ns, o.duration_ns, key))?];
            Some(OpInfo {
                name: k.demangled_name.clone(),
                mangled: k.name.clone(),
                grid: k.grid,
                block: k.block,
                correlation_id: k.correlation_id,
            })
        })
        .collect()
}

/// One policy's simulated run, as the export shows it.
#[derive(Debug, Clone)]
pub struct PolicyRun {
    /// Policy.
    pub policy: PolicyKind,
    /// Kernel run segments.
    pub segments: Vec<Segment>,
    /// Per job: arrival and finish, ns.
    pub spans: Vec<(i64, i64)>,
}

/// Runs the scenario under `policy`, recording where each kernel ran.
/// `exclusive` runs each job alone from its arrival.
pub fn run_for_export(
    scenario: &Scenario,
    policy: PolicyKind,
    model: &GpuModel,
) -> Result<PolicyRun, RunError> {
    let mut run = PolicyRun {
        policy,
        segments: Vec::new(),
        spans: Vec::new(),
    };
    if policy == PolicyKind::Exclusive {
        for (j, (job, &at)) in scenario.jobs.iter().zip(&scenario.arrivals).enumerate() {
            let r = run_policy(std::slice::from_ref(job), &[at], policy, model, true)?;
            run.segments
                .extend(r.segments.into_iter().map(|s| Segment { job: j, ..s }));
            run.spans.push((r.jobs[0].arrival_ns, r.jobs[0].finish_ns));
        }
    } else {
        let r = run_policy(&scenario.jobs, &scenario.arrivals, policy, model, true)?;
        run.segments = r.segments;
        run.spans = r.jobs.iter().map(|o| (o.arrival_ns, o.finish_ns)).collect();
    }
    Ok(run)
}

/// Simulated runs as a Chrome trace: per policy (in the order given) one
/// process per job. `infos[j]` names job `j`'s ops ([`op_infos`]; empty when unknown).
pub fn from_runs(
    scenario: &Scenario,
    infos: &[Vec<Option<OpInfo>>],
    runs: &[PolicyRun],
    model: &GpuModel,
    opts: &ExportOptions,
) -> ChromeTrace {
    let n = scenario.jobs.len() as u32;
    let mut jobs = Vec::new();
    for (p, run) in runs.iter().enumerate() {
        let mut per_job: Vec<Vec<&Segment>> = vec![Vec::new(); scenario.jobs.len()];
        for s in &run.segments {
            if let Some(v) = per_job.get_mut(s.job) {
                v.push(s);
            }
        }
        for (j, job) in scenario.jobs.iter().enumerate() {
            let pid = p as u32 * n + j as u32 + 1;
            let info = infos.get(j).map_or(&[][..], Vec::as_slice);
            jobs.push(run_job_slices(pid, run, j, job, info, &mut per_job[j]));
        }
    }
    assemble(jobs, opts.max_events, runs_metadata(scenario, runs, model))
}

/// Job `j`'s slices in `run`: its arrival-to-finish slice, and its kernels'
/// segments `segs`, a kernel paused and resumed split into parts joined by
/// flows. `infos` names its ops.
fn run_job_slices(
    pid: u32,
    run: &PolicyRun,
    j: usize,
    job: &Job,
    infos: &[Option<OpInfo>],
    segs: &mut [&Segment],
) -> JobSlices {
    let mut slices = Vec::new();
    let mut flows = Vec::new();
    if let Some(&(arrival, finish)) = run.spans.get(j) {
        slices.push(Pending {
            track: TrackKey::Job,
            name: format!(
                "{} JCT {}",
                job.name,
                fikit_trace::summary::human_ns(finish - arrival)
            ),
            cat: "job",
            start: arrival,
            end: finish,
            args: vec![
                ("policy", Arg::Str(run.policy.as_str().into())),
                ("priority", Arg::UInt(job.priority.into())),
                ("arrival_ns", Arg::Int(arrival)),
                ("finish_ns", Arg::Int(finish)),
                ("jct_ns", Arg::Int(finish - arrival)),
            ],
        });
    }
    // Segments of one op in time order; parts joined by flows.
    segs.sort_by_key(|s| (s.op, s.start_ns, s.end_ns));
    let mut i = 0;
    while i < segs.len() {
        let op = segs[i].op;
        let parts = segs[i..].iter().take_while(|s| s.op == op).count();
        let gpu_op = &job.ops[op];
        let info = infos.get(op).and_then(Option::as_ref);
        let key = gpu_op.kernel_key().unwrap_or(0);
        let base_name = info.map_or_else(|| format!("kernel {key:016x}"), |k| k.name.clone());
        let mut prev: Option<usize> = None;
        for (k, s) in segs[i..i + parts].iter().enumerate() {
            let mut args = vec![
                ("op", Arg::UInt(op as u64)),
                ("kernel_key", key_hex(key)),
                ("recorded_duration_ns", Arg::Int(gpu_op.duration_ns)),
                ("stream", Arg::UInt(gpu_op.stream.into())),
                ("waited_ns", Arg::Int(s.start_ns - s.ready_ns)),
            ];
            if let Some(info) = info {
                args.push(("name", Arg::Str(info.mangled.clone())));
                args.push(("grid", Arg::Dims(info.grid)));
                args.push(("block", Arg::Dims(info.block)));
                args.push(("correlation_id", Arg::UInt(info.correlation_id.into())));
            }
            let name = if parts > 1 {
                args.push(("part", Arg::UInt(k as u64 + 1)));
                args.push(("parts", Arg::UInt(parts as u64)));
                format!("{base_name} [part {}/{parts}]", k + 1)
            } else {
                base_name.clone()
            };
            let here = slices.len();
            slices.push(Pending {
                track: TrackKey::SimStream(gpu_op.stream),
                name,
                cat: "kernel",
                start: s.start_ns,
                end: s.end_ns,
                args,
            });
            if let Some(from) = prev {
                flows.push((from, here, "preemption"));
            }
            prev = Some(here);
        }
        i += parts;
    }
    JobSlices {
        pid,
        process: format!(
            "{}: {} (priority {})",
            run.policy.as_str(),
            job.name,
            job.priority
        ),
        slices,
        flows,
    }
}

/// The `otherData` of simulated runs: the scenario, the model, the policies.
fn runs_metadata(scenario: &Scenario, runs: &[PolicyRun], model: &GpuModel) -> Map<String, Value> {
    let mut metadata = Map::new();
    metadata.insert("producer".into(), json!(producer()));
    metadata.insert("source".into(), json!("simulation"));
    metadata.insert("scenario".into(), json!(scenario.name));
    metadata.insert(
        "model".into(),
        serde_json::to_value(model).unwrap_or(Value::Null),
    );
    metadata.insert(
        "time".into(),
        json!("µs of simulated time; jobs arrive at their scenario offsets"),
    );
    metadata.insert(
        "policies".into(),
        json!(runs.iter().map(|r| r.policy.as_str()).collect::<Vec<_>>()),
    );
    if runs.iter().any(|r| r.policy == PolicyKind::Exclusive) {
        metadata.insert(
            "exclusive".into(),
            json!("each job ran alone from its arrival; their timelines overlap only in this view"),
        );
    }
    metadata.insert(
        "note".into(),
        json!("kernels only: copies and memsets run on copy engines and are not recorded by the engine"),
    );
    metadata
}
