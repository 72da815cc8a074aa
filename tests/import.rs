//! `fikit-sim import` end to end: Kineto (PyTorch profiler) and Nsight Systems
//! files made here, imported by the built binary, read back by the validating
//! reader and simulated; bad inputs exit 2; and the shipped Kineto capture
//! against fikit-profile's capture of the same workload.

use std::io::Write;
use std::path::Path;

use fikit_e2e::cmd;
use fikit_trace::{Kernel, SyncKind, Trace, read_trace};
use predicates::prelude::*;
use serde_json::json;

/// A Kineto trace of pid 4242 (thread 77): `iters` iterations, each a copy,
/// two kernels, a memset and a `cudaDeviceSynchronize`.
fn kineto(iters: usize) -> serde_json::Value {
    let mut events = vec![
        json!({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 4242,
        "tid": 77, "ts": 0.5, "dur": 1.0, "args": {}}),
    ];
    let mut corr = 0u32;
    let us = |ns: u64| serde_json::Value::from(ns as f64 / 1000.0);
    for i in 0..iters as u64 {
        let base = 1_000_000 + i * 100_000;
        let mut launch =
            |name: &str, at: u64, gpu: Option<(&str, &str, serde_json::Value, u64, u64)>| {
                corr += 1;
                events.push(json!({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 4242,
                "tid": 77, "ts": us(at), "dur": us(2_001), "args": {"cbid": 211, "correlation": corr}}));
                if let Some((cat, gname, mut args, start, dur)) = gpu {
                    args["correlation"] = json!(corr);
                    events.push(
                        json!({"ph": "X", "cat": cat, "name": gname, "pid": 0, "tid": 7,
                    "ts": us(start), "dur": us(dur), "args": args}),
                    );
                    events.push(
                        json!({"ph": "s", "id": corr, "pid": 4242, "tid": 77, "ts": us(at),
                    "cat": "ac2g", "name": "ac2g"}),
                    );
                    events.push(
                        json!({"ph": "f", "id": corr, "pid": 0, "tid": 7, "ts": us(start),
                    "cat": "ac2g", "name": "ac2g", "bp": "e"}),
                    );
                }
            };
        let place = json!({"device": 0, "context": 1, "stream": 7});
        let with = |extra: serde_json::Value| {
            let mut a = place.clone();
            for (k, v) in extra.as_object().unwrap() {
                a[k] = v.clone();
            }
            a
        };
        let copy = with(json!({"bytes": 602112}));
        let conv = with(json!({"registers per thread": 128, "shared memory": 49152,
            "grid": [196, 1, 1], "block": [256, 1, 1]}));
        let relu = with(json!({"registers per thread": 16, "shared memory": 0,
            "grid": [98, 1, 1], "block": [128, 1, 1]}));
        let set = with(json!({"bytes": 4096}));
        launch(
            "cudaMemcpyAsync",
            base,
            Some((
                "gpu_memcpy",
                "Memcpy HtoD (Pageable -> Device)",
                copy,
                base + 3_000,
                40_123,
            )),
        );
        launch(
            "cudaLaunchKernel",
            base + 5_000,
            Some((
                "kernel",
                "void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)",
                conv,
                base + 43_500,
                20_457,
            )),
        );
        launch(
            "cudaLaunchKernel",
            base + 9_000,
            Some((
                "kernel",
                "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)",
                relu,
                base + 64_000,
                2_944,
            )),
        );
        launch(
            "cudaMemsetAsync",
            base + 12_000,
            Some(("gpu_memset", "Memset (Device)", set, base + 67_100, 800)),
        );
        launch("cudaGetDevice", base + 14_000, None);
        launch("cudaDeviceSynchronize", base + 15_000, None);
        // The synchronization returns after the last GPU operation.
        let last = events.len() - 1;
        events[last]["dur"] = us(53_500);
    }
    json!({
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "computeMajor": 9, "computeMinor": 0,
            "maxThreadsPerMultiprocessor": 2048, "regsPerMultiprocessor": 65536,
            "sharedMemPerMultiprocessor": 233472, "numSms": 132}],
        "baseTimeNanoseconds": 1_763_000_000_000_000_000u64,
        "traceEvents": events,
    })
}

fn write_gz(path: &Path, v: &serde_json::Value) {
    let f = std::fs::File::create(path).unwrap();
    let mut enc = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
    enc.write_all(serde_json::to_string(v).unwrap().as_bytes())
        .unwrap();
    enc.finish().unwrap();
}

/// [`nsys`]'s export with `sql` run on it afterwards.
fn nsys_altered(path: &Path, sql: &str) {
    nsys(path);
    rusqlite::Connection::open(path)
        .unwrap()
        .execute_batch(sql)
        .unwrap();
}

/// An Nsight Systems export with two processes (pids 100 and 200), each
/// launching one kernel per iteration and synchronizing.
fn nsys(path: &Path) {
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute_batch(
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
         CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
           deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
           correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
           shortName INTEGER NOT NULL, mangledName INTEGER, registersPerThread INTEGER NOT NULL,
           gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
           blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
           staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL);
         CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
           eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,
           nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL);
         CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL,
           deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
           correlationId INTEGER, globalPid INTEGER, syncType INTEGER NOT NULL, eventId INTEGER NOT NULL);
         CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT,
           smCount INTEGER, maxShmemPerSm INTEGER, maxRegistersPerSm INTEGER,
           threadsPerWarp INTEGER, maxWarpsPerSm INTEGER, maxBlocksPerSm INTEGER);
         INSERT INTO StringIds VALUES (1, 'gemm(float*)'), (2, 'gemm'), (3, '_Z4gemmPf'),
           (4, 'cudaLaunchKernel_v7000'), (5, 'cudaStreamSynchronize_v3020');
         INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA H100 80GB HBM3', 132, 233472, 65536, 32, 64, 32);",
    )
    .unwrap();
    for (pid, stream) in [(100i64, 7), (200, 13)] {
        let gp = (1i64 << 56) | (pid << 24);
        let gt = gp | 11;
        for i in 0..5i64 {
            let b = 1_000_000 + i * 50_000 + pid;
            let (k, s) = (i * 2 + 1, i * 2 + 2);
            c.execute_batch(&format!(
                "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
                   ({b}, {}, 1, {gt}, {k}, 4, 0), ({}, {}, 1, {gt}, {s}, 5, 0);
                 INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({}, {}, 0, 1, {stream}, {k}, {gp},
                   1, 2, 3, 64, 132, 1, 1, 256, 1, 1, 0, 32768);
                 INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES ({}, {}, 0, 1, {stream}, {s}, {gp}, 3, -1);",
                b + 3_000,
                b + 4_000,
                b + 30_000,
                b + 8_000,
                b + 28_000,
                b + 4_100,
                b + 29_900,
            ))
            .unwrap();
        }
    }
}

fn import(dir: &Path, args: &[&str]) -> String {
    let out = cmd("fikit-sim")
        .current_dir(dir)
        .arg("import")
        .args(args)
        .assert()
        .success()
        .stderr(predicate::str::contains("panicked").not())
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

#[test]
fn kineto_gz_imports_validates_and_simulates() {
    let dir = tempfile::tempdir().unwrap();
    write_gz(&dir.path().join("serve.pt.trace.json.gz"), &kineto(3));
    let out = import(
        dir.path(),
        &["-o", "out", "--priority", "high", "serve.pt.trace.json.gz"],
    );
    assert!(
        out.starts_with("out/serve-4242.parquet: 6 kernels, 3 copies, 3 memsets, 15 API calls, 3 syncs (job serve, pid 4242, NVIDIA H200;"),
        "{out}"
    );
    let t = read_trace(&dir.path().join("out/serve-4242.parquet")).unwrap();
    assert_eq!(t.meta.priority, 0);
    assert_eq!(t.meta.job_name, "serve");
    assert!(t.kernels.iter().all(|k| k.launch.is_some()));
    assert!(
        t.syncs
            .iter()
            .all(|s| s.kind == SyncKind::ContextSynchronize)
    );
    // Nanoseconds from the microsecond decimals: 20.457 µs.
    assert_eq!(t.kernels[0].end_ns - t.kernels[0].start_ns, 20_457);

    // A second import never replaces the first.
    let before = std::fs::read(dir.path().join("out/serve-4242.parquet")).unwrap();
    let out = import(
        dir.path(),
        &["-o", "out", "--name", "serve", "serve.pt.trace.json.gz"],
    );
    assert!(out.starts_with("out/serve-4242-2.parquet:"), "{out}");
    assert_eq!(
        std::fs::read(dir.path().join("out/serve-4242.parquet")).unwrap(),
        before
    );

    // The imported job replays: alone it reproduces its span, and it shares a GPU.
    let sim = cmd("fikit-sim")
        .current_dir(dir.path())
        .args([
            "--no-plots",
            "--format",
            "json",
            "--policy",
            "exclusive,fikit",
            "out/serve-4242.parquet",
            "out/serve-4242-2.parquet",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&sim).unwrap();
    let span = t.gpu_span().unwrap();
    let first = t.api_calls.first().unwrap().start_ns.min(span.0);
    let last = t.syncs.last().unwrap().end_ns.max(span.1);
    let jobs = v["jobs"].as_array().unwrap();
    let alone = jobs
        .iter()
        .find(|j| j["policy"] == "exclusive")
        .expect("an exclusive row");
    assert_eq!(alone["jct_ns"].as_i64().unwrap(), last - first, "{alone}");
    cmd("fikit-sim")
        .current_dir(dir.path())
        .args(["inspect", "out"])
        .assert()
        .success()
        .stdout(predicate::str::contains("serve"));
}

#[test]
fn nsys_export_gives_one_trace_per_process() {
    let dir = tempfile::tempdir().unwrap();
    nsys(&dir.path().join("report3.sqlite"));
    let out = import(dir.path(), &["-o", "t", "report3.sqlite"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with(
            "t/report3-100.parquet: 5 kernels, 0 copies, 0 memsets, 10 API calls, 5 syncs"
        ),
        "{out}"
    );
    assert!(
        lines[1].starts_with("t/report3-200.parquet: 5 kernels"),
        "{out}"
    );
    for pid in [100, 200] {
        let t = read_trace(&dir.path().join(format!("t/report3-{pid}.parquet"))).unwrap();
        assert_eq!(t.meta.pid, pid);
        assert_eq!(t.meta.device.sm_count, 132);
        assert_eq!(t.kernels[0].name, "_Z4gemmPf");
        assert_eq!(t.kernels[0].dynamic_shared_bytes, 32768);
        assert!(
            t.syncs
                .iter()
                .all(|s| s.thread_id == Some(11) && s.stream.is_some())
        );
    }
}

/// Runs `fikit-sim import` and checks it fails as bad input (exit 2) saying
/// each of `what`, without a panic, writing nothing.
fn rejects(dir: &Path, args: &[&str], what: &[&str]) {
    let mut a = cmd("fikit-sim");
    a.current_dir(dir)
        .args(["import", "-o", "never"])
        .args(args);
    let mut assert = a
        .assert()
        .code(2)
        .stderr(predicate::str::contains("panicked").not());
    for w in what {
        assert = assert.stderr(predicate::str::contains(*w));
    }
    assert!(
        !dir.join("never").exists(),
        "nothing is written on bad input"
    );
}

#[test]
fn bad_input_exits_2_naming_file_event_and_problem() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("junk.json"), "{\"traceEvents\": [{\"ph\": ").unwrap();
    rejects(
        d,
        &["junk.json"],
        &["junk.json: not a Kineto JSON trace", "line 1"],
    );

    let mut v = kineto(1);
    v["traceEvents"][2]["args"]
        .as_object_mut()
        .unwrap()
        .remove("bytes");
    std::fs::write(d.join("nobytes.json"), v.to_string()).unwrap();
    rejects(
        d,
        &["nobytes.json"],
        &[
            "nobytes.json: traceEvents[2] (gpu_memcpy \"Memcpy HtoD",
            "`args.bytes` is missing",
        ],
    );

    let cpu_only =
        json!({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "x", "ts": 1, "dur": 1}]});
    std::fs::write(d.join("cpu.json"), cpu_only.to_string()).unwrap();
    rejects(d, &["cpu.json"], &["cpu.json: no GPU events"]);

    write_gz(&d.join("ok.json.gz"), &kineto(1));
    rejects(
        d,
        &["--format", "nsys", "ok.json.gz"],
        &["ok.json.gz: not an Nsight Systems SQLite export"],
    );
    // One bad file among good ones: nothing is written.
    rejects(d, &["ok.json.gz", "junk.json"], &["junk.json"]);
    rejects(d, &["missing.json"], &["missing.json"]);
    std::fs::write(d.join("t.txt"), "plain text").unwrap();
    rejects(d, &["t.txt"], &["t.txt: not a format import reads"]);
    // A device limit that is no count: refused, not read as "not given".
    let mut v = kineto(1);
    v["deviceProperties"][0]["numSms"] = json!(-3);
    std::fs::write(d.join("negsms.json"), v.to_string()).unwrap();
    rejects(
        d,
        &["negsms.json"],
        &["negsms.json: deviceProperties[0]: `numSms` is -3: not an unsigned 32-bit count"],
    );
    nsys_altered(
        &d.join("negsms.sqlite"),
        "UPDATE TARGET_INFO_GPU SET smCount = -1",
    );
    rejects(
        d,
        &["negsms.sqlite"],
        &["negsms.sqlite: table TARGET_INFO_GPU, row 1: smCount is -1"],
    );
    // A fikit trace given to import: it needs none (the message offered
    // --format, which cannot help).
    let shipped = fikit_e2e::root().join("traces/h200/resnet50-bs1-eval-466.parquet");
    rejects(
        d,
        &[shipped.to_str().unwrap()],
        &["a Parquet file, not a profiler's trace: a fikit trace needs no import"],
    );
    rejects(
        d,
        &["--priority", "11", "ok.json.gz"],
        &["invalid priority"],
    );
    // Times a trace cannot hold (past 2^62 ns): refused at the event, where
    // the import wrote a trace it could not read back and exited 1.
    let mut v = kineto(1);
    v["traceEvents"][1]["ts"] = json!(4.7e15);
    std::fs::write(d.join("late.json"), v.to_string()).unwrap();
    rejects(
        d,
        &["late.json"],
        &[
            "late.json: traceEvents[1]",
            "`ts`: ",
            "outside -2^62 to 2^62 ns",
        ],
    );
    nsys_altered(
        &d.join("late.sqlite"),
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = start + 4700000000000000000, end = end + 4700000000000000000",
    );
    rejects(
        d,
        &["late.sqlite"],
        &[
            "late.sqlite: table CUPTI_ACTIVITY_KIND_KERNEL",
            "start: ",
            "outside -2^62",
        ],
    );
}

/// The shipped pair made by `scripts/capture/capture-kineto.sh` (paths from the
/// repository root): resnet50 batch-1 inference, 10 warm-up and 30 timed
/// iterations, run twice on one GPU: under torch.profiler, which records the
/// timed loop only (Kineto JSON, gzipped), and under fikit-profile, which
/// records the whole process.
const SHIPPED_PAIR: (&str, &str) = (
    "traces/kineto/resnet50-bs1-eval.kineto.json.gz",
    "traces/kineto/resnet50-bs1-eval.fikit.parquet",
);

/// The iterations of a trace: its kernels grouped by the host synchronization
/// that ended them (each iteration of the workload ends with
/// `torch.cuda.synchronize()`); a kernel belongs to the first blocking
/// synchronization that began after its launch. Iterations without kernels
/// are dropped.
fn iterations(t: &Trace) -> Vec<Vec<&Kernel>> {
    let mut ends: Vec<i64> = t
        .syncs
        .iter()
        .filter(|s| s.kind.blocks_host())
        .map(|s| s.start_ns)
        .collect();
    ends.sort_unstable();
    let mut groups: Vec<Vec<&Kernel>> = vec![Vec::new(); ends.len() + 1];
    for k in &t.kernels {
        let issued = k.launch.map_or(k.start_ns, |l| l.start_ns);
        groups[ends.partition_point(|&e| e <= issued)].push(k);
    }
    groups.retain(|g| !g.is_empty());
    groups
}

/// A kernel's function name without template arguments, parameters and return
/// type: the part two demanglers agree on.
fn base_name(name: &str) -> String {
    let n = name.strip_prefix("void ").unwrap_or(name);
    let end = n.find(['<', '(']).unwrap_or(n.len());
    n[..end].trim().to_string()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// What is compared, precisely. The two captures are different processes, so
/// kernels are matched by position, not by correlation id or time:
///
/// 1. the window: the Kineto trace holds only the timed loop; its iterations
///    (kernels up to each `torch.cuda.synchronize()`) are matched with the
///    *last* as many iterations of the fikit-profile trace (whose earlier ones
///    are model set-up and warm-up);
/// 2. kernel count: every matched iteration holds the same number of kernels
///    in both (so the window's totals are equal);
/// 3. identity: kernels at the same position of matched iterations have the
///    same grid, block, registers and total shared memory and the same base
///    function name, for at least 99% of positions;
/// 4. durations: the sum of kernel durations over the window differs by at
///    most 1%, and for each position in the iteration, the median duration
///    over the iterations of one capture is within 1% of the other's in the
///    median over positions (medians take out run-to-run jitter of single
///    kernels, which is larger than 1% for 2-µs kernels).
#[test]
fn shipped_kineto_capture_matches_fikit_profile() {
    let root = fikit_e2e::root();
    let (kineto_file, fikit_file) = (root.join(SHIPPED_PAIR.0), root.join(SHIPPED_PAIR.1));
    if !kineto_file.exists() || !fikit_file.exists() {
        eprintln!(
            "SKIPPED shipped_kineto_capture_matches_fikit_profile: {} or {} is not shipped yet \
             (made on a GPU machine by scripts/capture/capture-kineto.sh)",
            SHIPPED_PAIR.0, SHIPPED_PAIR.1
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = import(
        dir.path(),
        &["-o", "k", "--name", "kineto", kineto_file.to_str().unwrap()],
    );
    let path = out.split(':').next().unwrap();
    let kin = read_trace(&dir.path().join(path)).unwrap();
    let fik = read_trace(&fikit_file).unwrap();

    let ki = iterations(&kin);
    let fi = iterations(&fik);
    assert!(
        ki.len() >= 10 && fi.len() >= ki.len(),
        "{} Kineto iterations, {} fikit-profile iterations",
        ki.len(),
        fi.len()
    );
    let fi = &fi[fi.len() - ki.len()..];
    for (n, (a, b)) in ki.iter().zip(fi).enumerate() {
        assert_eq!(
            a.len(),
            b.len(),
            "timed iteration {n}: kernel counts differ"
        );
    }
    let per_iter = ki[0].len();
    assert!(
        ki.iter().all(|it| it.len() == per_iter),
        "every iteration runs the same kernels"
    );

    let pairs: Vec<(&Kernel, &Kernel)> = ki
        .iter()
        .zip(fi)
        .flat_map(|(a, b)| a.iter().copied().zip(b.iter().copied()))
        .collect();
    let shape = |k: &Kernel| {
        (
            k.grid,
            k.block,
            k.registers_per_thread,
            k.static_shared_bytes + k.dynamic_shared_bytes,
        )
    };
    let same_shape = pairs.iter().filter(|(a, b)| shape(a) == shape(b)).count();
    let same_name = pairs
        .iter()
        .filter(|(a, b)| base_name(&a.demangled_name) == base_name(&b.demangled_name))
        .count();
    let differ: Vec<String> = pairs
        .iter()
        .filter(|(a, b)| base_name(&a.demangled_name) != base_name(&b.demangled_name))
        .take(3)
        .map(|(a, b)| format!("{:?} vs {:?}", a.demangled_name, b.demangled_name))
        .collect();
    let n = pairs.len() as f64;
    let sum = |v: Vec<&Kernel>| v.iter().map(|k| k.duration_ns()).sum::<i64>() as f64;
    let sum_k = sum(pairs.iter().map(|p| p.0).collect());
    let sum_f = sum(pairs.iter().map(|p| p.1).collect());
    let per_position: Vec<f64> = (0..per_iter)
        .map(|p| {
            let m = |its: &[Vec<&Kernel>]| {
                median(its.iter().map(|it| it[p].duration_ns() as f64).collect())
            };
            let (a, b) = (m(&ki), m(fi));
            (a - b).abs() / b.max(1.0)
        })
        .collect();
    let raw_pairs = median(
        pairs
            .iter()
            .map(|(a, b)| {
                (a.duration_ns() - b.duration_ns()).abs() as f64 / b.duration_ns().max(1) as f64
            })
            .collect(),
    );
    let report = format!(
        "{} iterations x {per_iter} kernels; same shape {same_shape}/{}, same name {same_name}/{}; \
         kernel time {:.0} ns (Kineto) vs {:.0} ns (fikit-profile), {:+.3}%; median relative \
         difference of per-position median durations {:.3}%; of single pairs {:.3}%; name \
         differences: {differ:?}",
        ki.len(),
        pairs.len(),
        pairs.len(),
        sum_k,
        sum_f,
        100.0 * (sum_k - sum_f) / sum_f,
        100.0 * median(per_position.clone()),
        100.0 * raw_pairs,
    );
    eprintln!("{report}");
    assert!(same_shape as f64 >= 0.99 * n, "{report}");
    assert!(same_name as f64 >= 0.99 * n, "{report}");
    assert!((sum_k - sum_f).abs() <= 0.01 * sum_f, "{report}");
    assert!(median(per_position) <= 0.01, "{report}");
}
