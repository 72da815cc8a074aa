//! Spool → trace conversion, checked field by field, through Parquet and back.

use crate::common;

use fikit_profile::convert::{ConvertOptions, spool_to_trace};
use fikit_spool::{Record, parse_spool, read_spool};
use fikit_trace::{ApiDomain, ApiRecording, CopyKind, SyncKind, kernel_key, read_trace};

fn opts() -> ConvertOptions {
    ConvertOptions {
        job: Some("resnet".into()),
        priority: Some(0),
        producer: "fikit-profile test".into(),
    }
}

#[test]
fn converts_and_round_trips_through_parquet() {
    let dir = tempfile::tempdir().unwrap();
    let spool_path = dir.path().join("fikit-4242.spool");
    common::write_spool(&spool_path, &common::records(true));
    let spool = read_spool(&spool_path).unwrap();
    let conv = spool_to_trace(&spool, &opts()).unwrap();
    let t = &conv.trace;
    let t0 = common::T0 as i64;

    // Metadata.
    assert_eq!(t.meta.job_name, "resnet");
    assert_eq!(t.meta.priority, 0);
    assert_eq!(t.meta.pid, 4242);
    assert_eq!(t.meta.command_line, vec!["python3", "w.py"]);
    assert_eq!(t.meta.host, "gpu-host");
    assert_eq!(t.meta.device.name, "NVIDIA H200");
    assert_eq!(t.meta.device.sm_count, 132);
    assert_eq!(t.meta.device.max_blocks_per_sm, 32);
    assert_eq!(t.meta.driver_version, "13.0");
    // No runtime version in the spool: the driver's, and the trace says so.
    assert_eq!(t.meta.cuda_version, "13.0");
    assert_eq!(
        t.meta.cuda_version_source,
        Some(fikit_trace::VersionSource::Driver)
    );
    assert_eq!(t.meta.cupti_version, 130001);
    assert_eq!(t.meta.clock_offset_ns, 1_790_000_000_000_000_000 - t0);
    assert!(t.meta.capture_complete);
    assert_eq!(t.meta.api_recording, ApiRecording::Selected);
    assert_eq!(t.meta.producer, "fikit-profile test");

    // Kernels, sorted by start; launch joined by correlation, runtime call preferred.
    assert_eq!(t.kernels.len(), 3);
    let k0 = &t.kernels[0];
    assert_eq!(k0.start_ns, t0 + 2_000);
    assert_eq!(k0.demangled_name, "kernel(float*, int)");
    assert_eq!(k0.name, "_Z6kernelPfi");
    let l0 = k0.launch.unwrap();
    assert_eq!(
        (l0.start_ns, l0.end_ns, l0.thread_id),
        (t0 + 1_000, t0 + 1_010, 4243)
    );
    assert_eq!(
        k0.kernel_key,
        kernel_key("_Z6kernelPfi", [64, 1, 1], [256, 1, 1], 0, 1024, 32)
    );
    assert_eq!(k0.shared_config_bytes, Some(32_768));
    let k1 = &t.kernels[1];
    assert_eq!(k1.placement.stream, 13);
    assert_eq!(k1.shared_config_bytes, None);
    assert_eq!(k1.demangled_name, "triton_poi_fused_0");
    assert_eq!(k1.launch.unwrap().start_ns, t0 + 1_040); // driver-only launch
    assert_eq!(t.kernels[2].launch.unwrap().start_ns, t0 + 1_020);

    // Memory operations.
    assert_eq!(t.memops.len(), 2);
    assert!(t.memops[0].is_memset());
    assert_eq!(t.memops[0].launch, None); // its call was not recorded
    assert_eq!(t.memops[1].copy_kind, Some(CopyKind::DtoH));
    assert_eq!(t.memops[1].bytes, 4096);
    assert_eq!(t.memops[1].launch.unwrap().start_ns, t0 + 1_050);

    // API calls: names without CUPTI's version suffix.
    assert_eq!(t.api_calls.len(), 6);
    assert_eq!(t.api_calls[0].name, "cudaLaunchKernel");
    assert_eq!(t.api_calls[0].domain, ApiDomain::Runtime);
    assert_eq!(t.api_calls[1].name, "cuLaunchKernel");
    assert!(
        t.api_calls
            .iter()
            .any(|a| a.name == "cudaStreamSynchronize" && a.is_blocking())
    );

    // The synchronization comes from the recorded call.
    assert_eq!(t.syncs.len(), 1);
    let s = &t.syncs[0];
    assert_eq!(s.kind, SyncKind::StreamSynchronize);
    assert_eq!((s.start_ns, s.end_ns), (t0 + 1_070, t0 + 4_500));
    assert_eq!((s.context, s.stream, s.thread_id), (1, Some(7), Some(4243)));

    // Through Parquet and back: the same trace.
    let out = dir.path().join("resnet-4242.parquet");
    fikit_trace::write_trace(&out, t).unwrap();
    let back = read_trace(&out).unwrap();
    assert_eq!(&back, t);
}

#[test]
fn a_spool_without_its_end_record_is_marked_incomplete() {
    let bytes = {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.spool");
        common::write_spool(&p, &common::records(false));
        let mut b = std::fs::read(&p).unwrap();
        // And cut mid-record, as SIGKILL can leave it.
        b.extend_from_slice(&[7, 0, 0]);
        b
    };
    let spool = parse_spool(&bytes).unwrap();
    assert!(!spool.is_complete());
    let conv = spool_to_trace(&spool, &opts()).unwrap();
    assert!(!conv.trace.meta.capture_complete);
    assert_eq!(conv.trace.kernels.len(), 3);
    assert!(conv.notes.iter().any(|n| n.contains("did not end cleanly")));
    assert!(
        conv.notes
            .iter()
            .any(|n| n.starts_with("3 bytes of the spool from offset")
                && n.ends_with("skipped (cut off when the process died)")),
        "{:?}",
        conv.notes
    );
}

#[test]
fn overlapping_kernels_on_a_stream_are_clamped_and_reported() {
    let mut recs = common::records(true);
    // A third kernel on stream 7 that starts 200 ns before the previous one ends.
    let end = recs.pop().unwrap();
    recs.push(Record::Kernel(fikit_spool::Kernel {
        start: common::T0 + 3_800,
        end: common::T0 + 4_050,
        device: 0,
        context: 1,
        stream: 7,
        correlation: 50,
        grid: [1, 1, 1],
        block: [32, 1, 1],
        registers: 8,
        static_shared: 0,
        dynamic_shared: 0,
        name_id: 0,
        shared_executed: None,
    }));
    recs.push(end);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.spool");
    common::write_spool(&p, &recs);
    let conv = spool_to_trace(&read_spool(&p).unwrap(), &opts()).unwrap();
    let k = conv
        .trace
        .kernels
        .iter()
        .find(|k| k.correlation_id == 50)
        .unwrap();
    assert_eq!(k.start_ns, common::T0 as i64 + 4_000);
    assert!(conv.notes.iter().any(|n| n.contains("200 ns")));
    // [3_800, 4_050) became [4_000, 4_050): 200 ns of its duration are gone, and said so.
    assert!(
        conv.notes
            .iter()
            .any(|n| n.contains("took 200 ns off their durations in all")),
        "{:?}",
        conv.notes
    );
    // The result passes the reader's stream-order check.
    let out = dir.path().join("x.parquet");
    fikit_trace::write_trace(&out, &conv.trace).unwrap();
    read_trace(&out).unwrap();
}

#[test]
fn a_spool_without_start_is_an_error() {
    let recs: Vec<Record> = common::records(true).into_iter().skip(1).collect();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.spool");
    common::write_spool(&p, &recs);
    let err = spool_to_trace(&read_spool(&p).unwrap(), &opts()).unwrap_err();
    assert!(err.to_string().contains("no start record"));
}

#[test]
fn without_sync_records_the_synchronizing_api_calls_become_the_syncs() {
    // API calls recorded as CUPTI activity, without its synchronization
    // activity: no SyncCall and no Sync records, only the call itself.
    let recs: Vec<Record> = common::records(true)
        .into_iter()
        .filter(|r| !matches!(r, Record::SyncCall { .. }))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fikit-4242.spool");
    common::write_spool(&path, &recs);
    let spool = read_spool(&path).unwrap();
    let t = spool_to_trace(&spool, &opts()).unwrap().trace;
    let t0 = common::T0 as i64;
    assert_eq!(t.syncs.len(), 1);
    let s = &t.syncs[0];
    assert_eq!(s.kind, SyncKind::StreamSynchronize);
    assert_eq!((s.start_ns, s.end_ns), (t0 + 1_070, t0 + 4_500));
    assert_eq!(s.thread_id, Some(4243));
    assert_eq!(s.correlation_id, 14);
    // The call names no stream; the context is that of the thread's latest operation (the copy).
    assert_eq!((s.stream, s.context), (None, 1));
}

#[test]
fn the_programs_runtime_version_is_the_cuda_version() {
    let dir = tempfile::tempdir().unwrap();
    let spool_path = dir.path().join("fikit-4242.spool");
    let mut records = common::records(true);
    // The collector writes it after start-up, at the first flush.
    records.insert(2, Record::CudaRuntime { version: 12080 });
    common::write_spool(&spool_path, &records);
    let conv = spool_to_trace(&read_spool(&spool_path).unwrap(), &opts()).unwrap();
    assert_eq!(conv.trace.meta.cuda_version, "12.8");
    assert_eq!(conv.trace.meta.driver_version, "13.0");
    assert_eq!(
        conv.trace.meta.cuda_version_source,
        Some(fikit_trace::VersionSource::Runtime)
    );
    // Through Parquet and back, with the key.
    let out = dir.path().join("t.parquet");
    fikit_trace::write_trace(&out, &conv.trace).unwrap();
    let back = read_trace(&out).unwrap();
    assert_eq!(back.meta, conv.trace.meta);
}
