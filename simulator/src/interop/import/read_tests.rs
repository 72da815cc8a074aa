//! Imports of small Kineto and Nsight Systems files made here, written and
//! read back through the validating reader.

use std::io::Write;
use std::path::{Path, PathBuf};

use fikit_trace::{ApiRecording, CopyKind, HostCall, SyncKind, kernel_key, read_trace};
use serde_json::json;

use super::*;

fn opts() -> ImportOptions {
    ImportOptions {
        format: None,
        job: None,
        priority: 9,
    }
}

/// A Kineto trace of one process (pid 4242, thread 77): a copy, two kernels
/// (the second overlapping the first on its stream, and linked to its launch
/// only by a flow event), a memset, a device synchronization, a call that is
/// not recorded by default and a CPU operator.
fn kineto_sample() -> serde_json::Value {
    let rt = |name: &str, ts: &str, dur: &str, corr: Option<u32>| {
        let mut e = json!({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 4242,
            "tid": 77, "ts": 0, "dur": 0, "args": {"cbid": 1}});
        e["ts"] = serde_json::from_str(ts).unwrap();
        e["dur"] = serde_json::from_str(dur).unwrap();
        if let Some(c) = corr {
            e["args"]["correlation"] = json!(c);
        }
        e
    };
    let gpu = |cat: &str, name: &str, ts: &str, dur: &str, args: serde_json::Value| {
        let mut e = json!({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": 7,
            "ts": 0, "dur": 0, "args": args});
        e["ts"] = serde_json::from_str(ts).unwrap();
        e["dur"] = serde_json::from_str(dur).unwrap();
        e
    };
    json!({
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150754820096u64,
            "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024,
            "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536,
            "regsPerMultiprocessor": 65536, "warpSize": 32, "sharedMemPerBlock": 49152,
            "sharedMemPerMultiprocessor": 233472, "numSms": 132, "sharedMemPerBlockOptin": 232448}],
        "cuda_driver_version": 13000,
        "baseTimeNanoseconds": 1_700_000_000_000_000_000i64,
        "traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 4242, "tid": 77,
             "ts": 99.0, "dur": 50.0, "args": {"Input Dims": [[1, 3]]}},
            rt("cudaMemcpyAsync", "100.000", "5.500", Some(10)),
            gpu("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", "103.250", "2.125",
                json!({"device": 0, "context": 1, "stream": 7, "correlation": 10, "bytes": 4096})),
            rt("cudaLaunchKernel", "110.000", "4.001", Some(11)),
            {"ph": "s", "id": 11, "pid": 4242, "tid": 77, "ts": 110.000, "cat": "ac2g", "name": "ac2g"},
            gpu("kernel", "void foo<float>(float*)", "120.500", "10.333",
                json!({"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": 11,
                       "registers per thread": 32, "shared memory": 1024, "blocks per SM": 0.01,
                       "grid": [2, 1, 1], "block": [128, 1, 1], "est. achieved occupancy %": 0})),
            {"ph": "f", "id": 11, "pid": 0, "tid": 7, "ts": 120.500, "cat": "ac2g", "name": "ac2g", "bp": "e"},
            rt("cudaLaunchKernel", "115.000", "3.000", None),
            {"ph": "s", "id": 12, "pid": 4242, "tid": 77, "ts": 115.000, "cat": "ac2g", "name": "ac2g"},
            gpu("kernel", "bar", "130.000", "5.000",
                json!({"device": 0, "context": 1, "stream": 7,
                       "registers per thread": 16, "shared memory": 0,
                       "grid": [1, 1, 1], "block": [32, 1, 1]})),
            {"ph": "f", "id": 12, "pid": 0, "tid": 7, "ts": 130.000, "cat": "ac2g", "name": "ac2g", "bp": "e"},
            rt("cudaMemsetAsync", "136.000", "1.000", Some(13)),
            gpu("gpu_memset", "Memset (Device)", "137.500", "0.750",
                json!({"device": 0, "context": 1, "stream": 7, "correlation": 13, "bytes": 256})),
            rt("cudaGetDevice", "138.000", "0.100", Some(15)),
            rt("cudaDeviceSynchronize", "140.000", "20.000", Some(14)),
            {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": 170.0}
        ],
        "traceName": "x.json"
    })
}

fn write_json(dir: &Path, name: &str, v: &serde_json::Value, gz: bool) -> PathBuf {
    let path = dir.join(name);
    let text = serde_json::to_string_pretty(v).unwrap();
    if gz {
        let f = std::fs::File::create(&path).unwrap();
        let mut enc = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
        enc.write_all(text.as_bytes()).unwrap();
        enc.finish().unwrap();
    } else {
        std::fs::write(&path, text).unwrap();
    }
    path
}

/// Imports, writes and reads back: what a reader of the written file sees.
fn round_trip(dir: &Path, file: &Path) -> Vec<(Trace, Vec<String>)> {
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    import_file(file, &opts())
        .unwrap()
        .into_iter()
        .map(|imp| {
            let written = write_imported(&out, &imp).unwrap();
            let back = read_trace(&written).unwrap();
            assert_eq!(back, imp.trace, "the written trace reads back unchanged");
            (back, imp.notes)
        })
        .collect()
}

#[test]
fn kineto_rows_launches_syncs_and_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_json(dir.path(), "resnet.pt.trace.json", &kineto_sample(), false);
    let mut traces = round_trip(dir.path(), &file);
    assert_eq!(traces.len(), 1);
    let (t, notes) = traces.remove(0);
    assert_eq!(t.meta.job_name, "resnet");
    assert_eq!(t.meta.pid, 4242);
    assert_eq!(t.meta.priority, 9);
    assert_eq!(t.meta.device.name, "NVIDIA H200");
    assert_eq!(t.meta.device.sm_count, 132);
    assert_eq!(t.meta.device.max_blocks_per_sm, 32);
    assert_eq!(t.meta.driver_version, "13.0");
    assert_eq!(t.meta.clock_offset_ns, 1_700_000_000_000_000_000);
    assert_eq!(t.meta.api_recording, ApiRecording::Selected);
    assert!(t.meta.producer.starts_with("fikit-sim import (kineto)"));

    assert_eq!(t.kernels.len(), 2);
    let foo = &t.kernels[0];
    assert_eq!((foo.start_ns, foo.end_ns), (120_500, 130_833));
    assert_eq!(foo.correlation_id, 11);
    assert_eq!(
        foo.launch,
        Some(HostCall {
            start_ns: 110_000,
            end_ns: 114_001,
            thread_id: 77
        })
    );
    assert_eq!(
        foo.kernel_key,
        kernel_key(
            "void foo<float>(float*)",
            [2, 1, 1],
            [128, 1, 1],
            1024,
            0,
            32
        )
    );
    assert_eq!(foo.static_shared_bytes, 1024);
    // Linked by its flow event only; its start clamped to foo's end.
    let bar = &t.kernels[1];
    assert_eq!(bar.correlation_id, 12);
    assert_eq!(bar.launch.map(|l| l.start_ns), Some(115_000));
    assert_eq!((bar.start_ns, bar.end_ns), (130_833, 135_000));
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("1 kernels started before") && n.contains("833 ns")),
        "{notes:?}"
    );

    assert_eq!(t.memops.len(), 2);
    let copy = &t.memops[0];
    assert_eq!(copy.copy_kind, Some(CopyKind::HtoD));
    assert_eq!(
        (copy.start_ns, copy.end_ns, copy.bytes),
        (103_250, 105_375, 4096)
    );
    assert_eq!(copy.launch.map(|l| l.end_ns), Some(105_500));
    let set = &t.memops[1];
    assert!(set.is_memset());
    assert_eq!(set.bytes, 256);

    let names: Vec<&str> = t.api_calls.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "cudaMemcpyAsync",
            "cudaLaunchKernel",
            "cudaLaunchKernel",
            "cudaMemsetAsync",
            "cudaDeviceSynchronize"
        ]
    );
    assert_eq!(t.syncs.len(), 1);
    let s = &t.syncs[0];
    assert_eq!(s.kind, SyncKind::ContextSynchronize);
    assert_eq!((s.start_ns, s.end_ns), (140_000, 160_000));
    assert_eq!((s.context, s.stream, s.thread_id), (1, None, Some(77)));
}

#[test]
fn gzipped_kineto_equals_plain() {
    let dir = tempfile::tempdir().unwrap();
    let plain = write_json(dir.path(), "a.json", &kineto_sample(), false);
    let gz = write_json(dir.path(), "a.json.gz", &kineto_sample(), true);
    let a = import_file(&plain, &opts()).unwrap();
    let b = import_file(&gz, &opts()).unwrap();
    assert_eq!(a[0].trace, b[0].trace);
    assert_eq!(SourceFormat::Kineto, detect_file(&gz).unwrap());
}

#[test]
fn kineto_cuda_sync_records_win_over_sync_calls() {
    let mut v = kineto_sample();
    v["traceEvents"].as_array_mut().unwrap().push(json!({
        "ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7,
        "ts": 141.0, "dur": 18.5,
        "args": {"cuda_sync_kind": "Stream Sync", "stream": 7, "correlation": 14,
                 "device": 0, "context": 1}}));
    let dir = tempfile::tempdir().unwrap();
    let file = write_json(dir.path(), "s.json", &v, false);
    let (t, _) = round_trip(dir.path(), &file).remove(0);
    assert_eq!(t.syncs.len(), 1);
    let s = &t.syncs[0];
    assert_eq!(s.kind, SyncKind::StreamSynchronize);
    assert_eq!(
        (s.start_ns, s.end_ns, s.stream),
        (141_000, 159_500, Some(7))
    );
    assert_eq!(s.thread_id, Some(77));
}

fn kineto_error(v: &serde_json::Value) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = write_json(dir.path(), "bad.json", v, false);
    let e = import_file(&file, &opts()).unwrap_err().to_string();
    assert!(e.starts_with(&file.display().to_string()), "{e}");
    e
}

#[test]
fn kineto_bad_input_names_the_event() {
    let mut v = kineto_sample();
    v["traceEvents"][5]["args"]
        .as_object_mut()
        .unwrap()
        .remove("grid");
    let e = kineto_error(&v);
    assert!(
        e.contains("traceEvents[5] (kernel \"void foo<float>(float*)\"): `args.grid` is missing"),
        "{e}"
    );

    let mut v = kineto_sample();
    v["traceEvents"][2]["ts"] = json!("soon");
    let e = kineto_error(&v);
    assert!(
        e.contains("traceEvents[2] (gpu_memcpy") && e.contains("`ts` is not a number"),
        "{e}"
    );

    let mut v = kineto_sample();
    v["traceEvents"][5]["args"]["stream"] = json!(-3);
    assert!(kineto_error(&v).contains("`args.stream` is -3"));

    let mut v = kineto_sample();
    v["traceEvents"][9]["cat"] = json!("kernel");
    v["traceEvents"][10]["cat"] = json!("other");
    assert!(kineto_error(&v).contains("`args.correlation` is missing and no ac2g flow"));

    let v = json!({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "x", "ts": 1, "dur": 1}]});
    assert!(kineto_error(&v).contains("no GPU events"));
    assert!(kineto_error(&json!({"schemaVersion": 1})).contains("no `traceEvents` list"));
    assert!(kineto_error(&json!({"traceEvents": 3})).contains("not a Kineto JSON trace"));
}

#[test]
fn not_json_and_empty_files_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("x.json");
    std::fs::write(&junk, "{\"traceEvents\": [").unwrap();
    let e = import_file(&junk, &opts()).unwrap_err().to_string();
    assert!(
        e.contains("not a Kineto JSON trace") && e.contains("line 1"),
        "{e}"
    );
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "hello").unwrap();
    let e = import_file(&text, &opts()).unwrap_err().to_string();
    assert!(e.contains("choose one with --format"), "{e}");
    let empty = dir.path().join("e.json");
    std::fs::write(&empty, "").unwrap();
    assert!(
        import_file(&empty, &opts())
            .unwrap_err()
            .to_string()
            .contains("empty file")
    );
    let gz = dir.path().join("cut.json.gz");
    std::fs::write(&gz, [0x1f, 0x8b, 8, 0, 0]).unwrap();
    assert!(
        import_file(&gz, &opts())
            .unwrap_err()
            .to_string()
            .contains("gzip")
    );
}

/// Column lists of the Nsight Systems tables, as the schema reference gives them (abridged).
const NSYS_SCHEMA: &str = "
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
  shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER,
  registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL,
  gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
  staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
  localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
  sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,
  deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER,
  srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER,
  graphNodeId INTEGER, virtualAddress INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL,
  graphNodeId INTEGER, memKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
  eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
  returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, syncType INTEGER NOT NULL, eventId INTEGER NOT NULL);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT,
  busLocation TEXT, isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER,
  memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER, pwGpuId INTEGER, uuid TEXT,
  luid INTEGER, chipName TEXT, cuDevice INTEGER, maxRegistersPerBlock INTEGER,
  maxShmemPerBlock INTEGER, maxShmemPerSm INTEGER, maxRegistersPerSm INTEGER,
  threadsPerWarp INTEGER, maxWarpsPerSm INTEGER, maxBlocksPerSm INTEGER,
  computeMajor INTEGER, computeMinor INTEGER);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
";

fn gtid(pid: i64, tid: i64) -> i64 {
    (1 << 56) | (pid << 24) | tid
}

/// Two processes: pid 100 (thread 5) copies, launches two kernels, sets
/// memory and synchronizes its context; pid 200 launches one kernel.
fn nsys_sample(path: &Path) -> rusqlite::Connection {
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute_batch(NSYS_SCHEMA).unwrap();
    c.execute_batch(
        "INSERT INTO StringIds VALUES (1, 'foo(float*)'), (2, 'foo'), (3, '_Z3fooPf'),
           (4, 'cudaLaunchKernel_v7000'), (5, 'cudaMemcpyAsync_v3020'),
           (6, 'cudaDeviceSynchronize_v3020'), (7, 'cudaGetDevice_v3020'), (8, 'cudaMemsetAsync_v3020'),
           (9, 'gemm');
         INSERT INTO TARGET_INFO_GPU (vmId, id, name, smCount, cuDevice, maxShmemPerSm,
           maxRegistersPerSm, threadsPerWarp, maxWarpsPerSm, maxBlocksPerSm)
           VALUES (0, 0, 'NVIDIA H100 80GB HBM3', 132, 0, 233472, 65536, 32, 64, 32);
         INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, '', '');",
    )
    .unwrap();
    let p100 = gtid(100, 0);
    let p200 = gtid(200, 0);
    let t5 = gtid(100, 5);
    let t9 = gtid(200, 9);
    c.execute_batch(&format!(
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue) VALUES
           (1000, 1800, 1, {t5}, 1, 5, 0),
           (4000, 6000, 1, {t5}, 2, 4, 0),
           (6500, 7000, 1, {t5}, 3, 4, 0),
           (7100, 7200, 1, {t5}, 4, 7, 0),
           (7300, 7600, 1, {t5}, 5, 8, 0),
           (32000, 40000, 1, {t5}, 6, 6, 0),
           (500, 900, 1, {t9}, 1, 4, 0);
         INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind) VALUES
           (2000, 3500, 0, 1, 7, 1, {p100}, 1048576, 1);
         INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,
             demangledName, shortName, mangledName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,
             staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId,
             sharedMemoryExecuted) VALUES
           (10000, 20000, 0, 1, 7, 2, {p100}, 1, 2, 3, 40, 64, 2, 1, 256, 1, 1, 1024, 49152, 0, 0, 1, 102400),
           (19500, 30000, 0, 1, 7, 3, {p100}, 9, 9, NULL, 16, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 2, NULL),
           (1000, 1500, 0, 1, 13, 1, {p200}, 9, 9, NULL, 16, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 3, 32768);
         INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, globalPid, value, bytes) VALUES
           (31000, 31400, 0, 1, 7, 5, {p100}, 0, 4096);
         INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId, correlationId, globalPid, syncType, eventId) VALUES
           (32100, 39900, 0, 1, 4294967295, 6, {p100}, 4, 4294967295);"
    ))
    .unwrap();
    c
}

#[test]
fn nsys_one_trace_per_process() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report1.sqlite");
    drop(nsys_sample(&file));
    assert_eq!(detect_file(&file).unwrap(), SourceFormat::Nsys);
    let traces = round_trip(dir.path(), &file);
    assert_eq!(traces.len(), 2);
    let (t, notes) = &traces[0];
    assert_eq!(t.meta.pid, 100);
    assert_eq!(t.meta.job_name, "report1");
    assert_eq!(t.meta.device.name, "NVIDIA H100 80GB HBM3");
    assert_eq!(t.meta.device.max_threads_per_sm, 2048);
    assert_eq!(t.meta.device.max_blocks_per_sm, 32);
    assert_eq!(t.meta.clock_offset_ns, 1_700_000_000_000_000_000);
    assert!(t.meta.producer.starts_with("fikit-sim import (nsys)"));

    assert_eq!(t.kernels.len(), 2);
    let foo = &t.kernels[0];
    assert_eq!(foo.name, "_Z3fooPf");
    assert_eq!(foo.demangled_name, "foo(float*)");
    assert_eq!(
        foo.kernel_key,
        kernel_key("_Z3fooPf", [64, 2, 1], [256, 1, 1], 1024, 49152, 40)
    );
    // The driver's shared-memory split where the export has it.
    assert_eq!(foo.shared_config_bytes, Some(102_400));
    assert_eq!(t.kernels[1].shared_config_bytes, None);
    assert_eq!(
        foo.launch,
        Some(HostCall {
            start_ns: 4000,
            end_ns: 6000,
            thread_id: 5
        })
    );
    // No mangled name: the demangled one stands in; clamped to foo's end.
    let gemm = &t.kernels[1];
    assert_eq!(gemm.name, "gemm");
    assert_eq!((gemm.start_ns, gemm.end_ns), (20000, 30000));
    assert!(
        notes.iter().any(|n| n.contains("by up to 500 ns")),
        "{notes:?}"
    );

    assert_eq!(t.memops[0].copy_kind, Some(CopyKind::HtoD));
    assert_eq!(t.memops[0].launch.map(|l| l.start_ns), Some(1000));
    assert!(t.memops[1].is_memset());
    assert_eq!(t.api_calls.len(), 5, "cudaGetDevice is left out");
    assert!(t.api_calls.iter().all(|a| !a.name.contains("_v")));
    assert_eq!(t.syncs.len(), 1);
    let s = &t.syncs[0];
    assert_eq!(s.kind, SyncKind::ContextSynchronize);
    assert_eq!((s.start_ns, s.stream, s.thread_id), (32100, None, Some(5)));

    let (t2, _) = &traces[1];
    assert_eq!(t2.meta.pid, 200);
    assert_eq!(t2.kernels.len(), 1);
    assert_eq!(t2.kernels[0].launch.map(|l| l.thread_id), Some(9));
    assert!(t2.syncs.is_empty());
}

#[test]
fn nsys_without_optional_tables() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("min.sqlite");
    let c = nsys_sample(&file);
    c.execute_batch(
        "DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME; DROP TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
         DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY; DROP TABLE CUPTI_ACTIVITY_KIND_MEMSET;
         DROP TABLE TARGET_INFO_GPU; DROP TABLE TARGET_INFO_SESSION_START_TIME;",
    )
    .unwrap();
    drop(c);
    let traces = round_trip(dir.path(), &file);
    assert_eq!(traces.len(), 2);
    let (t, notes) = &traces[0];
    assert_eq!(t.kernels.len(), 2);
    assert!(t.kernels.iter().all(|k| k.launch.is_none()));
    assert!(t.syncs.is_empty() && t.api_calls.is_empty());
    assert_eq!(t.meta.api_recording, ApiRecording::None);
    assert_eq!(t.meta.device.name, "unknown");
    assert!(
        notes
            .iter()
            .any(|n| n.contains("no CUPTI_ACTIVITY_KIND_RUNTIME"))
    );
}

fn nsys_error(edit: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.sqlite");
    nsys_sample(&file).execute_batch(edit).unwrap();
    let e = import_file(&file, &opts()).unwrap_err().to_string();
    assert!(e.starts_with(&file.display().to_string()), "{e}");
    e
}

#[test]
fn nsys_bad_input_names_the_row() {
    let e = nsys_error("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = 5 WHERE rowid = 2;");
    assert!(
        e.contains("table CUPTI_ACTIVITY_KIND_KERNEL, row 2: end 5 is before start 19500"),
        "{e}"
    );
    let e = nsys_error("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = 99 WHERE rowid = 3;");
    assert!(
        e.contains("row 3: column `demangledName` refers to string id 99"),
        "{e}"
    );
    let e = nsys_error("UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET streamId = -2;");
    assert!(e.contains("column `streamId` is -2"), "{e}");
    let e = nsys_error("ALTER TABLE CUPTI_ACTIVITY_KIND_MEMSET DROP COLUMN bytes;");
    assert!(
        e.contains("table CUPTI_ACTIVITY_KIND_MEMSET: column `bytes` is missing"),
        "{e}"
    );
    let e = nsys_error(
        "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL; DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY;
         DELETE FROM CUPTI_ACTIVITY_KIND_MEMSET;",
    );
    assert!(e.contains("no GPU events"), "{e}");
}

#[test]
fn sqlite_that_is_not_nsys() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("other.db");
    let c = rusqlite::Connection::open(&file).unwrap();
    c.execute_batch("CREATE TABLE users (id INTEGER); INSERT INTO users VALUES (1);")
        .unwrap();
    drop(c);
    let e = import_file(&file, &opts()).unwrap_err().to_string();
    assert!(
        e.contains("not an Nsight Systems export") && e.contains("users"),
        "{e}"
    );
    // Forced as nsys, a JSON file is not SQLite.
    let json = write_json(dir.path(), "k.json", &kineto_sample(), false);
    let forced = ImportOptions {
        format: Some(SourceFormat::Nsys),
        ..opts()
    };
    let e = import_file(&json, &forced).unwrap_err().to_string();
    assert!(e.contains("not an SQLite database"), "{e}");
}
