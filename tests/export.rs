//! `fikit-sim export --perfetto` end to end: a shipped trace and simulated
//! runs exported by the binary, and the JSON checked the way the Perfetto UI
//! reads it (Chrome trace-event format).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use fikit_e2e::cmd;
use fikit_trace::{Trace, fixture, write_trace};
use predicates::prelude::*;
use serde_json::Value;

fn shipped(name: &str) -> PathBuf {
    fikit_e2e::root().join("traces/h200").join(name)
}

/// What a well-formed document holds.
#[derive(Default)]
struct Checked {
    /// Slice names and categories per process: (name, cat).
    slices: BTreeMap<u64, Vec<(String, String)>>,
    /// Flows by category.
    flows: BTreeMap<String, usize>,
    /// Process names by pid.
    processes: BTreeMap<u64, String>,
    /// Track names by (pid, tid).
    tracks: BTreeMap<(u64, u64), String>,
}

fn num(e: &Value, key: &str) -> f64 {
    e[key]
        .as_f64()
        .unwrap_or_else(|| panic!("`{key}` is not a number in {e}"))
}

fn int(e: &Value, key: &str) -> u64 {
    e[key]
        .as_u64()
        .unwrap_or_else(|| panic!("`{key}` is not an unsigned integer in {e}"))
}

/// A time in µs has at most nanosecond precision.
fn assert_ns_precision(us: f64, e: &Value) {
    let ns = us * 1000.0;
    assert!((ns - ns.round()).abs() < 1e-3, "finer than 1 ns: {e}");
}

/// Checks the structure of a Chrome trace-event document: every event has a
/// known phase and the fields it needs; `B`/`E` pairs match per track; `X`
/// slices have a non-negative duration; each flow id has exactly one start
/// (`s`) and one finish (`f`, `"bp":"e"`), the start no later than the
/// finish, each inside a slice of its track; every process and track is named.
fn check(doc: &Value) -> Checked {
    let events = doc["traceEvents"]
        .as_array()
        .expect("traceEvents is an array");
    assert!(!events.is_empty());
    let mut out = Checked::default();
    let mut open: HashMap<(u64, u64), Vec<(String, f64)>> = HashMap::new();
    let mut spans: HashMap<(u64, u64), Vec<(f64, f64)>> = HashMap::new();
    // id → (start events, finish events), each (pid, tid, ts, cat)
    type End = (u64, u64, f64, String);
    let mut flows: BTreeMap<u64, (Vec<End>, Vec<End>)> = BTreeMap::new();
    for e in events {
        let ph = e["ph"].as_str().unwrap_or_else(|| panic!("no ph: {e}"));
        let (pid, tid) = (int(e, "pid"), int(e, "tid"));
        match ph {
            "M" => {
                let name = e["name"].as_str().unwrap();
                match name {
                    "process_name" => {
                        let n = e["args"]["name"].as_str().unwrap().to_string();
                        assert!(
                            out.processes.insert(pid, n).is_none(),
                            "pid {pid} named twice"
                        );
                    }
                    "thread_name" => {
                        let n = e["args"]["name"].as_str().unwrap().to_string();
                        assert!(
                            out.tracks.insert((pid, tid), n).is_none(),
                            "tid {tid} named twice"
                        );
                    }
                    "process_sort_index" | "thread_sort_index" => {
                        int(&e["args"], "sort_index");
                    }
                    other => panic!("unknown metadata event {other}"),
                }
            }
            "X" | "B" | "E" => {
                let ts = num(e, "ts");
                assert!(ts >= 0.0, "negative ts: {e}");
                assert_ns_precision(ts, e);
                let name = e["name"].as_str().unwrap_or_else(|| panic!("no name: {e}"));
                if ph == "X" {
                    let dur = num(e, "dur");
                    assert!(dur >= 0.0, "negative dur: {e}");
                    assert_ns_precision(dur, e);
                    assert!(!name.is_empty(), "unnamed slice: {e}");
                    assert!(e["args"].is_object(), "args: {e}");
                    let cat = e["cat"].as_str().unwrap().to_string();
                    out.slices
                        .entry(pid)
                        .or_default()
                        .push((name.to_string(), cat));
                    spans.entry((pid, tid)).or_default().push((ts, ts + dur));
                } else if ph == "B" {
                    open.entry((pid, tid))
                        .or_default()
                        .push((name.to_string(), ts));
                } else {
                    let (n, begin) = open
                        .get_mut(&(pid, tid))
                        .and_then(Vec::pop)
                        .unwrap_or_else(|| panic!("E without B: {e}"));
                    assert!(name.is_empty() || name == n, "E {name} closes B {n}");
                    assert!(ts >= begin, "E before its B: {e}");
                }
            }
            "s" | "f" => {
                let id = int(e, "id");
                let ts = num(e, "ts");
                let cat = e["cat"].as_str().unwrap().to_string();
                assert_eq!(e["name"].as_str(), Some(cat.as_str()));
                let entry = flows.entry(id).or_default();
                if ph == "s" {
                    entry.0.push((pid, tid, ts, cat));
                } else {
                    assert_eq!(
                        e["bp"], "e",
                        "a flow finish binds to its enclosing slice: {e}"
                    );
                    entry.1.push((pid, tid, ts, cat));
                }
            }
            other => panic!("unexpected phase {other}: {e}"),
        }
    }
    assert!(open.values().all(Vec::is_empty), "B without E");
    let inside = |pid: u64, tid: u64, ts: f64| {
        spans
            .get(&(pid, tid))
            .is_some_and(|v| v.iter().any(|&(a, b)| a <= ts && ts <= b))
    };
    for (id, (starts, finishes)) in &flows {
        assert_eq!((starts.len(), finishes.len()), (1, 1), "flow {id}");
        let (s, f) = (&starts[0], &finishes[0]);
        assert_eq!(s.3, f.3, "flow {id} changes category");
        assert!(s.2 <= f.2, "flow {id} goes back in time");
        assert!(inside(s.0, s.1, s.2), "flow {id} starts outside any slice");
        assert!(inside(f.0, f.1, f.2), "flow {id} ends outside any slice");
        *out.flows.entry(s.3.clone()).or_default() += 1;
    }
    for &(pid, tid) in spans.keys() {
        assert!(
            out.tracks.contains_key(&(pid, tid)),
            "track {pid}/{tid} has no name"
        );
        assert!(
            out.processes.contains_key(&pid),
            "process {pid} has no name"
        );
    }
    out
}

fn parse(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).expect("the export is JSON")
}

#[test]
fn a_shipped_trace_exports_well_formed_json_with_every_kernel_and_launch_flow() {
    let trace_path = shipped("resnet50-bs1-eval-466.parquet");
    let trace = fikit_trace::read_trace(&trace_path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sub/resnet.json");
    cmd("fikit-sim")
        .args(["export", "--perfetto", "-o"])
        .arg(&out)
        .arg(&trace_path)
        .assert()
        .success()
        .stderr(predicate::str::contains("ui.perfetto.dev"))
        .stderr(predicate::str::contains("warning").not());
    let doc = parse(&std::fs::read(&out).unwrap());
    let c = check(&doc);
    assert_eq!(c.processes.len(), 1);
    let slices = &c.slices[&1];
    let count = |cat: &str| slices.iter().filter(|(_, c)| c == cat).count();
    assert_eq!(count("kernel"), trace.kernels.len());
    assert_eq!(count("memcpy") + count("memset"), trace.memops.len());
    assert_eq!(count("api"), trace.api_calls.len());
    assert_eq!(count("sync"), trace.syncs.len());
    assert!(count("gap") > 0);
    let launched = trace.kernels.iter().filter(|k| k.launch.is_some()).count()
        + trace.memops.iter().filter(|m| m.launch.is_some()).count();
    assert_eq!(c.flows.get("launch"), Some(&launched));
    let tracks: BTreeSet<&str> = c.tracks.values().map(String::as_str).collect();
    assert!(tracks.contains("GPU idle gaps"), "{tracks:?}");
    assert!(
        tracks.iter().any(|t| t.starts_with("stream ")),
        "{tracks:?}"
    );
    assert!(
        tracks.iter().any(|t| t.starts_with("host thread ")),
        "{tracks:?}"
    );
    assert_eq!(doc["otherData"]["source"], "trace");
    assert_eq!(doc["otherData"]["jobs"][0]["job"], "resnet50-bs1-eval");
}

#[test]
fn max_events_cuts_each_job_and_notes_it() {
    let a = shipped("resnet50-bs1-eval-466.parquet");
    let b = shipped("vit_b_16-bs1-eval-1050.parquet");
    let out = cmd("fikit-sim")
        .args(["export", "--perfetto", "--max-events", "700", "-o", "-"])
        .arg(&a)
        .arg(&b)
        .assert()
        .success()
        .stderr(predicate::str::contains("kept the first 700"))
        .get_output()
        .stdout
        .clone();
    let doc = parse(&out);
    let c = check(&doc);
    assert_eq!(c.processes.len(), 2);
    for (pid, v) in &c.slices {
        assert_eq!(v.len(), 700, "process {pid}");
    }
    assert_eq!(doc["otherData"]["truncated"]["max_events"], 700);
    assert_eq!(
        doc["otherData"]["truncated"]["jobs"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

/// The fixture pair (a latency-critical job with host gaps and syncs, a
/// training job of back-to-back 20 µs kernels), written into `dir`.
fn pair(dir: &Path) -> (Trace, Trace) {
    let (serving, training) = fixture::serving_and_training();
    write_trace(&dir.join("serving.parquet"), &serving).unwrap();
    write_trace(&dir.join("training.parquet"), &training).unwrap();
    (serving, training)
}

#[test]
fn a_simulated_run_shows_each_policy_s_kernels_and_preempted_parts() {
    let dir = tempfile::tempdir().unwrap();
    let (serving, training) = pair(dir.path());
    // Time slices of 5 µs split the 20 µs training kernels.
    std::fs::write(
        dir.path().join("model.json"),
        r#"{"timeslice_quantum_ns": 5000, "context_switch_ns": 100, "timeslice_preempts": true}"#,
    )
    .unwrap();
    let out = cmd("fikit-sim")
        .current_dir(dir.path())
        .args([
            "export",
            "--perfetto",
            "--policy",
            "timeslice,fikit",
            "--model",
            "model.json",
            "-o",
            "-",
            "serving.parquet",
            "training.parquet",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let doc = parse(&out);
    let c = check(&doc);
    let names: Vec<&str> = c.processes.values().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "timeslice: serving (priority 0)",
            "timeslice: training (priority 9)",
            "fikit: serving (priority 0)",
            "fikit: training (priority 9)"
        ]
    );
    for (pid, want) in [(1, &serving), (2, &training), (3, &serving), (4, &training)] {
        let kernels: Vec<&String> = c.slices[&pid]
            .iter()
            .filter(|(_, cat)| cat == "kernel")
            .map(|(n, _)| n)
            .collect();
        let whole = kernels.iter().filter(|n| !n.contains("[part ")).count();
        let firsts = kernels.iter().filter(|n| n.contains("[part 1/")).count();
        assert_eq!(whole + firsts, want.kernels.len(), "process {pid}");
        // Named from their traces (demangled), not by key.
        assert!(
            kernels
                .iter()
                .all(|n| n.ends_with("()") || n.contains("() [part ")),
            "{kernels:?}"
        );
        assert_eq!(
            c.slices[&pid]
                .iter()
                .filter(|(_, cat)| cat == "job")
                .count(),
            1,
            "one JCT slice"
        );
    }
    let parts = c.slices[&2]
        .iter()
        .filter(|(n, _)| n.contains("[part "))
        .count();
    let firsts = c.slices[&2]
        .iter()
        .filter(|(n, _)| n.contains("[part 1/"))
        .count();
    assert!(parts > firsts, "time slicing split training kernels");
    // One flow joins each part to the next.
    let joined: usize = c
        .slices
        .values()
        .flatten()
        .filter(|(n, _)| n.contains("[part ") && !n.contains("[part 1/"))
        .count();
    assert_eq!(c.flows.get("preemption"), Some(&joined));
    assert_eq!(doc["otherData"]["source"], "simulation");
}

/// Runs fikit-sim in `dir` and checks it fails as bad input (exit 2) saying `what`, without a panic.
fn rejects(dir: &Path, args: &[&str], what: &str) {
    cmd("fikit-sim")
        .current_dir(dir)
        .args(args)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(what))
        .stderr(predicate::str::contains("panicked").not());
}

#[test]
fn bad_inputs_exit_2_naming_the_file_or_argument() {
    let dir = tempfile::tempdir().unwrap();
    pair(dir.path());
    std::fs::write(dir.path().join("junk.parquet"), b"not parquet").unwrap();
    std::fs::write(dir.path().join("s.json"), "{ nope").unwrap();
    let d = dir.path();
    rejects(
        d,
        &["export", "--perfetto", "missing.parquet"],
        "missing.parquet",
    );
    rejects(d, &["export", "--perfetto", "junk.parquet"], "junk.parquet");
    rejects(
        d,
        &["export", "--perfetto", "--policy", "fikit", "junk.parquet"],
        "junk.parquet",
    );
    rejects(d, &["export", "serving.parquet"], "--perfetto");
    rejects(
        d,
        &[
            "export",
            "--perfetto",
            "--max-events",
            "0",
            "serving.parquet",
        ],
        "--max-events",
    );
    rejects(
        d,
        &["export", "--perfetto", "--scenario", "s.json"],
        "--policy",
    );
    rejects(
        d,
        &[
            "export",
            "--perfetto",
            "--policy",
            "fikit",
            "--scenario",
            "s.json",
        ],
        "s.json",
    );
    rejects(
        d,
        &[
            "export",
            "--perfetto",
            "--policy",
            "fikit",
            "--priority",
            "nobody=1",
            "serving.parquet",
        ],
        "nobody",
    );
    // A replay that would run implausibly long is the inputs' fault, as in
    // a simulation: two jobs of one 2^61 ns kernel under time slicing.
    let mut long = fixture::empty("long", 0);
    long.kernels = vec![fixture::kernel("k", 7, 1, Some(0), 0, 1 << 61)];
    write_trace(&d.join("long.parquet"), &long).unwrap();
    let job = r#"{"trace": "long.parquet"}"#;
    std::fs::write(
        d.join("long.json"),
        format!(r#"{{"jobs": [{job}, {job}]}}"#),
    )
    .unwrap();
    rejects(
        d,
        &[
            "export",
            "--perfetto",
            "--policy",
            "timeslice",
            "--scenario",
            "long.json",
        ],
        "implausibly long",
    );
    assert!(!d.join("reports").exists(), "nothing written on bad input");
}

#[test]
fn wall_clock_refuses_clocks_no_timeline_holds() {
    // Two captures whose clocks lie 1.8e19 ns apart (clock_offset_ns -9e18
    // and +9e18, each within the format's range): the second job's times
    // wrapped to -4.5e14 µs and the export exited 0. Now exit 2 naming it.
    let d = tempfile::tempdir().unwrap();
    for (name, offset) in [
        ("neg", -9_000_000_000_000_000_000i64),
        ("pos", 9_000_000_000_000_000_000),
    ] {
        let mut t: Trace = fixture::short_iterations(name, 0, 2);
        t.meta.clock_offset_ns = offset;
        write_trace(&d.path().join(format!("{name}.parquet")), &t).unwrap();
    }
    cmd("fikit-sim")
        .current_dir(d.path())
        .args(["export", "--perfetto", "--wall-clock", "-o", "wc.json"])
        .args(["neg.parquet", "pos.parquet"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--wall-clock: pos.parquet: its last event is",
        ))
        .stderr(predicate::str::contains("without --wall-clock"));
    assert!(!d.path().join("wc.json").exists());
    // An output path that is a folder, or under a file: exit 2 before the
    // export is built (it exited 1 after).
    std::fs::write(d.path().join("plain"), "x").unwrap();
    for (o, says) in [
        (".", "-o .: a folder"),
        ("plain/x.json", "plain is a file, not a folder"),
    ] {
        cmd("fikit-sim")
            .current_dir(d.path())
            .args(["export", "--perfetto", "-o", o, "neg.parquet"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says));
    }
    // Without --wall-clock each job has its own zero: it exports.
    cmd("fikit-sim")
        .current_dir(d.path())
        .args([
            "export",
            "--perfetto",
            "-o",
            "own.json",
            "neg.parquet",
            "pos.parquet",
        ])
        .assert()
        .success();
}
