use std::collections::BTreeMap;

use fikit_trace::{ApiCall, ApiDomain, CopyKind, MemOp, Placement, fixture};

use std::path::{Path, PathBuf};

use fikit_trace::Trace;
use fikit_trace::gaps::{busy_intervals, idle_gaps};
use indicatif::ProgressBar;
use serde_json::Value;

use super::traces::{cause_name, first_event_ns};
use super::*;
use crate::policy::PolicyKind;
use crate::sim::gpu::GpuModel;
use crate::sim::job::Job;
use crate::sim::scenario::Scenario;

fn shipped(name: &str) -> TraceInput {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../traces/h200")
        .join(name);
    TraceInput {
        trace: fikit_trace::read_trace(&path).unwrap(),
        path,
    }
}

fn input(trace: Trace) -> TraceInput {
    TraceInput {
        path: PathBuf::from(format!("{}.parquet", trace.meta.job_name)),
        trace,
    }
}

fn uint(s: &Slice, key: &str) -> u64 {
    match s.arg(key) {
        Some(Arg::UInt(n)) => *n,
        other => panic!("{key} of {s:?}: {other:?}"),
    }
}

/// Flow id → (start slices, finish slices).
fn flows(t: &ChromeTrace) -> BTreeMap<u64, (Vec<&Slice>, Vec<&Slice>)> {
    let mut m: BTreeMap<u64, (Vec<&Slice>, Vec<&Slice>)> = BTreeMap::new();
    for s in &t.slices {
        for f in &s.flows {
            let e = m.entry(f.id).or_default();
            if f.start { e.0.push(s) } else { e.1.push(s) }
        }
    }
    m
}

/// Every track's slices nest: sorted by start (longer first), each one
/// ends by the end of every slice still open when it starts.
fn assert_tracks_nest(t: &ChromeTrace) {
    let mut by_tid: BTreeMap<u32, Vec<&Slice>> = BTreeMap::new();
    for s in &t.slices {
        by_tid.entry(s.tid).or_default().push(s);
    }
    for (tid, mut v) in by_tid {
        v.sort_by_key(|s| (s.start_ns, std::cmp::Reverse(s.dur_ns)));
        let mut open: Vec<i64> = Vec::new();
        for s in v {
            while open.last().is_some_and(|&e| e <= s.start_ns) {
                open.pop();
            }
            if let Some(&e) = open.last() {
                assert!(
                    s.end_ns() <= e,
                    "track {tid}: {s:?} overlaps an open slice ending at {e}"
                );
            }
            open.push(s.end_ns());
        }
    }
}

#[test]
fn microseconds_are_exact_decimals() {
    assert_eq!(us(0), "0.000");
    assert_eq!(us(1), "0.001");
    assert_eq!(us(999), "0.999");
    assert_eq!(us(1_234_567), "1234.567");
    assert_eq!(us(-1_500), "-1.500");
    assert_eq!(us(600_000_000_001), "600000000.001");
}

#[test]
fn a_shipped_trace_has_every_kernel_once_and_launch_flows_that_pair_up() {
    let input = shipped("resnet50-bs1-eval-466.parquet");
    let t = &input.trace;
    let out = from_traces(std::slice::from_ref(&input), &ExportOptions::default());

    // Every kernel once, with its correlation id, name, shape and key.
    let kernels: Vec<&Slice> = out.slices.iter().filter(|s| s.cat == "kernel").collect();
    assert_eq!(kernels.len(), t.kernels.len());
    let mut want: Vec<(u32, i64)> = t
        .kernels
        .iter()
        .map(|k| (k.correlation_id, k.start_ns))
        .collect();
    let origin = first_event_ns(t);
    let mut got: Vec<(u32, i64)> = kernels
        .iter()
        .map(|s| (uint(s, "correlation_id") as u32, s.start_ns + origin))
        .collect();
    want.sort_unstable();
    got.sort_unstable();
    assert_eq!(got, want);
    let k0 = &t.kernels[0];
    let s0 = kernels
        .iter()
        .find(|s| uint(s, "correlation_id") == u64::from(k0.correlation_id))
        .unwrap();
    assert_eq!(s0.name, k0.demangled_name);
    assert_eq!(s0.arg("grid"), Some(&Arg::Dims(k0.grid)));
    assert_eq!(s0.arg("block"), Some(&Arg::Dims(k0.block)));
    assert_eq!(s0.arg("kernel_key"), Some(&key_hex(k0.kernel_key)));
    assert_eq!(s0.dur_ns, k0.duration_ns());
    let memops = out
        .slices
        .iter()
        .filter(|s| s.cat == "memcpy" || s.cat == "memset")
        .count();
    assert_eq!(memops, t.memops.len());

    // One flow per launched GPU operation, from an API call of the same
    // correlation id on a host track to the operation on a stream track.
    let f = flows(&out);
    let launched = t.kernels.iter().filter(|k| k.launch.is_some()).count()
        + t.memops.iter().filter(|m| m.launch.is_some()).count();
    assert!(launched > 0);
    assert_eq!(f.len(), launched);
    let name_of = |tid: u32| &out.tracks.iter().find(|x| x.tid == tid).unwrap().name;
    for (id, (from, to)) in &f {
        assert_eq!((from.len(), to.len()), (1, 1), "flow {id}");
        let (a, b) = (from[0], to[0]);
        assert_eq!(a.cat, "api");
        assert!(["kernel", "memcpy", "memset"].contains(&b.cat));
        assert_eq!(uint(a, "correlation_id"), uint(b, "correlation_id"));
        assert!(name_of(a.tid).starts_with("host thread"));
        assert!(name_of(b.tid).starts_with("stream"));
        assert!(
            a.start_ns <= b.start_ns,
            "launch after its operation: {a:?} {b:?}"
        );
    }
    assert_tracks_nest(&out);
    // Slices are in start order; tracks belong to their process.
    assert!(
        out.slices
            .windows(2)
            .all(|w| w[0].start_ns <= w[1].start_ns)
    );
    assert!(out.slices.iter().all(|s| s.tid / TIDS_PER_PID == s.pid));
}

#[test]
fn gap_slices_are_the_idle_gaps_by_cause() {
    let input = shipped("bert-base-bs1-eval-1319.parquet");
    let t = &input.trace;
    let out = from_traces(std::slice::from_ref(&input), &ExportOptions::default());
    let mut want: BTreeMap<&str, (usize, i64)> = BTreeMap::new();
    for g in idle_gaps(t, &busy_intervals(t)) {
        let e = want.entry(cause_name(g.cause)).or_default();
        e.0 += 1;
        e.1 += g.duration_ns();
    }
    let mut got: BTreeMap<&str, (usize, i64)> = BTreeMap::new();
    for s in out.slices.iter().filter(|s| s.cat == "gap") {
        let e = got.entry(s.name.as_str()).or_default();
        e.0 += 1;
        e.1 += s.dur_ns;
    }
    assert!(
        want.len() >= 2,
        "the trace has gaps of several causes: {want:?}"
    );
    assert_eq!(got, want);
    // All on one track named for them.
    let tids: std::collections::BTreeSet<u32> = out
        .slices
        .iter()
        .filter(|s| s.cat == "gap")
        .map(|s| s.tid)
        .collect();
    assert_eq!(tids.len(), 1);
    let track = out
        .tracks
        .iter()
        .find(|x| Some(&x.tid) == tids.first())
        .unwrap();
    assert_eq!(track.name, "GPU idle gaps");
}

/// Two kernels on stream 7 launched by calls that were not recorded, a
/// copy on stream 7 that overlaps the second kernel, a recorded launch
/// call, and a sync without a thread.
fn small() -> Trace {
    let mut t = fixture::every_column("small");
    t.kernels
        .push(fixture::kernel("late", 7, 9, Some(40_000), 50_000, 60_000));
    t.memops.push(MemOp {
        start_ns: 55_000,
        end_ns: 65_000,
        placement: Placement {
            device: 0,
            context: 1,
            stream: 7,
        },
        correlation_id: 10,
        copy_kind: Some(CopyKind::DtoH),
        bytes: 64,
        launch: None,
    });
    t.api_calls.push(ApiCall {
        domain: ApiDomain::Runtime,
        name: "cudaLaunchKernel".into(),
        start_ns: 40_000,
        end_ns: 42_000,
        thread_id: 7,
        correlation_id: 9,
    });
    t.sort();
    t
}

#[test]
fn overlapping_slices_spill_to_an_overlap_track_and_missing_calls_are_made_from_launch_columns() {
    let out = from_traces(&[input(small())], &ExportOptions::default());
    assert_tracks_nest(&out);
    let names: Vec<&str> = out.tracks.iter().map(|t| t.name.as_str()).collect();
    assert!(
        names.contains(&"stream 7 (context 1, device 0) (overlaps 1)"),
        "{names:?}"
    );
    assert!(names.contains(&"syncs (thread not recorded)"), "{names:?}");
    // relu's launch (corr 2) has an API row; gemm has no launch; "late"
    // (corr 9) has its call recorded: three launch flows, none invented.
    let f = flows(&out);
    assert_eq!(f.len(), 2 + 1, "{f:?}"); // the HtoD copy, relu, late
    assert!(out.slices.iter().all(|s| s.name != "launch"));

    // Without API rows the launch columns make the calls.
    let mut bare = small();
    bare.api_calls.clear();
    let out = from_traces(&[input(bare)], &ExportOptions::default());
    let made: Vec<&Slice> = out.slices.iter().filter(|s| s.name == "launch").collect();
    assert_eq!(made.len(), 3);
    assert_eq!(flows(&out).len(), 3);
    assert_tracks_nest(&out);
}

#[test]
fn max_events_keeps_the_first_slices_of_each_job_and_only_whole_flows() {
    let a = shipped("resnet50-bs1-eval-466.parquet");
    let b = input(small());
    let full = from_traces(&[a.clone(), b.clone()], &ExportOptions::default());
    let n = 500;
    let cut = from_traces(
        &[a, b],
        &ExportOptions {
            max_events: Some(n),
            wall_clock: false,
        },
    );
    let count = |t: &ChromeTrace, pid| t.slices.iter().filter(|s| s.pid == pid).count();
    assert_eq!(count(&cut, 1), n);
    assert_eq!(count(&cut, 2), count(&full, 2), "the small job is whole");
    assert_eq!(cut.truncated.len(), 1);
    let tr = &cut.truncated[0];
    assert_eq!((tr.pid, tr.kept, tr.total), (1, n, count(&full, 1)));
    // The kept slices are the earliest ones.
    assert!(
        cut.slices
            .iter()
            .filter(|s| s.pid == 1)
            .all(|s| s.start_ns <= tr.cut_at_ns)
    );
    for (id, (from, to)) in flows(&cut) {
        assert_eq!((from.len(), to.len()), (1, 1), "flow {id}");
    }
    assert!(cut.metadata["truncated"]["jobs"][0]["kept_slices"] == n);
}

#[test]
fn json_output_is_deterministic_and_parses() {
    let inputs = [input(small()), input(fixture::every_column("other"))];
    let write = || {
        let t = from_traces(&inputs, &ExportOptions::default());
        let mut buf = Vec::new();
        let n = t.write_json(&mut buf, &ProgressBar::hidden()).unwrap();
        assert_eq!(n as usize, buf.len());
        (t, buf)
    };
    let (t, a) = write();
    let (_, b) = write();
    assert_eq!(a, b);
    let v: Value = serde_json::from_slice(&a).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    assert_eq!(events.len(), t.event_count());
    let xs: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert_eq!(xs.len(), t.slices.len());
    for (e, s) in xs.iter().zip(&t.slices) {
        let ts = e["ts"].as_f64().unwrap();
        assert!((ts * 1000.0 - s.start_ns as f64).abs() < 1e-3, "{e}");
        assert!(e["dur"].as_f64().unwrap() >= 0.0);
    }
    assert_eq!(v["displayTimeUnit"], "ns");
    assert_eq!(v["otherData"]["source"], "trace");
    assert!(size_warning("x", 1000, &t).is_none());
    let w = size_warning("big.json", SIZE_WARN_BYTES * 2, &t).unwrap();
    assert!(w.contains("--max-events") && w.contains("big.json"), "{w}");
}

#[test]
fn wall_clock_lines_jobs_up_on_the_unix_clock() {
    let mut a = fixture::empty("a", 0);
    a.kernels
        .push(fixture::kernel("k", 7, 1, None, 1_000, 2_000));
    a.meta.clock_offset_ns = 10_000;
    let mut b = fixture::empty("b", 0);
    b.kernels
        .push(fixture::kernel("k", 7, 1, None, 5_000, 6_000));
    b.meta.clock_offset_ns = 0;
    let inputs = [input(a), input(b)];
    let start = |t: &ChromeTrace, pid| t.slices.iter().find(|s| s.pid == pid).unwrap().start_ns;
    let own = from_traces(&inputs, &ExportOptions::default());
    assert_eq!((start(&own, 1), start(&own, 2)), (0, 0));
    let wall = from_traces(
        &inputs,
        &ExportOptions {
            max_events: None,
            wall_clock: true,
        },
    );
    // Unix times 11,000 and 5,000: b first.
    assert_eq!((start(&wall, 1), start(&wall, 2)), (6_000, 0));
}

/// A high-priority job of short kernels with host gaps and syncs, and a
/// low-priority job of long kernels (the plots tests' pair).
fn pair() -> Vec<Trace> {
    vec![
        fixture::short_iterations("infer", 0, 3),
        fixture::back_to_back("train", 5, 6, 500),
    ]
}

fn scenario(traces: &[Trace]) -> Scenario {
    Scenario {
        name: "pair".into(),
        jobs: traces.iter().map(Job::from_trace).collect(),
        arrivals: vec![0; traces.len()],
    }
}

#[test]
fn op_infos_name_every_kernel_also_of_repeated_and_serving_jobs() {
    let t = shipped("vit_b_16-bs1-eval-1050.parquet").trace;
    let job = Job::from_trace(&t);
    for j in [
        job.clone(),
        job.repeated(2),
        job.serving(&[0, 1_000_000, 2_000_000]),
    ] {
        let infos = op_infos(&j, &t);
        assert_eq!(infos.len(), j.ops.len());
        for (op, info) in j.ops.iter().zip(&infos) {
            match (op.kernel_key(), info) {
                (Some(key), Some(i)) => {
                    let k = t
                        .kernels
                        .iter()
                        .find(|k| k.correlation_id == i.correlation_id && k.name == i.mangled)
                        .unwrap();
                    assert_eq!(k.kernel_key, key);
                    assert_eq!(k.duration_ns(), op.duration_ns);
                }
                (None, None) => {}
                other => panic!("op {op:?}: {other:?}"),
            }
        }
    }
}

#[test]
fn a_simulated_run_places_every_kernel_and_joins_preempted_parts() {
    let traces = pair();
    let sc = scenario(&traces);
    let model = GpuModel {
        timeslice_quantum_ns: 150,
        context_switch_ns: 10,
        timeslice_preempts: true,
        ..GpuModel::default()
    };
    let infos: Vec<_> = sc
        .jobs
        .iter()
        .zip(&traces)
        .map(|(j, t)| op_infos(j, t))
        .collect();
    let policies = [
        PolicyKind::Exclusive,
        PolicyKind::Timeslice,
        PolicyKind::Fikit,
    ];
    let runs: Vec<PolicyRun> = policies
        .iter()
        .map(|&p| run_for_export(&sc, p, &model).unwrap())
        .collect();
    let out = from_runs(&sc, &infos, &runs, &model, &ExportOptions::default());
    assert_eq!(out.processes.len(), policies.len() * 2);
    assert_tracks_nest(&out);
    let mut split = 0;
    for (p, run) in runs.iter().enumerate() {
        for (j, job) in sc.jobs.iter().enumerate() {
            let pid = (p * 2 + j + 1) as u32;
            let mine: Vec<&Slice> = out
                .slices
                .iter()
                .filter(|s| s.pid == pid && s.cat == "kernel")
                .collect();
            // Each kernel op's parts add up to its recorded duration (no
            // slowdown without MPS), and it is named from its trace.
            let mut per_op: BTreeMap<u64, (i64, u64)> = BTreeMap::new();
            for s in &mine {
                let e = per_op.entry(uint(s, "op")).or_default();
                e.0 += s.dur_ns;
                e.1 += 1;
                assert!(
                    s.name
                        .starts_with(&infos[j][uint(s, "op") as usize].as_ref().unwrap().name)
                );
            }
            assert_eq!(per_op.len(), job.kernel_count(), "{:?} job {j}", run.policy);
            for (op, (dur, parts)) in per_op {
                assert_eq!(dur, job.ops[op as usize].duration_ns);
                split += usize::from(parts > 1);
            }
            let jct: Vec<&Slice> = out
                .slices
                .iter()
                .filter(|s| s.pid == pid && s.cat == "job")
                .collect();
            assert_eq!(jct.len(), 1);
            assert_eq!(jct[0].dur_ns, run.spans[j].1 - run.spans[j].0);
        }
    }
    assert!(split > 0, "time slices of 150 ns split the 500 ns kernels");
    // Parts of one kernel, in time order, are joined by flows.
    let f = flows(&out);
    assert!(!f.is_empty());
    for (id, (from, to)) in f {
        assert_eq!((from.len(), to.len()), (1, 1), "flow {id}");
        let (a, b) = (from[0], to[0]);
        assert_eq!((a.pid, uint(a, "op")), (b.pid, uint(b, "op")));
        assert_eq!(uint(a, "part") + 1, uint(b, "part"));
        assert!(a.end_ns() <= b.start_ns);
    }
}
