//! Tests of the trace builder: small traces built by hand, their rows checked.

use super::*;
use crate::fixture::{kernel, metadata};
use crate::model::{CopyKind, Placement};

fn call(name: &str, domain: ApiDomain, corr: u32, thread_id: u64, start_ns: i64) -> ApiCall {
    ApiCall {
        domain,
        name: name.to_string(),
        start_ns,
        end_ns: start_ns + 500,
        thread_id,
        correlation_id: corr,
    }
}

fn copy(corr: u32, device: u32, start_ns: i64, end_ns: i64) -> MemOp {
    MemOp {
        start_ns,
        end_ns,
        placement: Placement {
            device,
            context: 1,
            stream: 7,
        },
        correlation_id: corr,
        copy_kind: Some(CopyKind::HtoD),
        bytes: 4096,
        launch: None,
    }
}

fn host(start_ns: i64, end_ns: i64, thread_id: u64) -> Option<HostCall> {
    Some(HostCall {
        start_ns,
        end_ns,
        thread_id,
    })
}

#[test]
fn launches_join_by_correlation_id_the_runtime_call_first() {
    let mut b = TraceBuilder::new();
    b.kernel(kernel("k", 7, 5, None, 10_000, 12_000))
        // Given launches are replaced: correlation 6 has no call.
        .kernel(kernel("orphan", 7, 6, Some(1), 20_000, 21_000))
        .memop(copy(8, 0, 3_000, 4_000))
        .api_call(call("cuLaunchKernel", ApiDomain::Driver, 5, 9, 1_000))
        .api_call(call("cudaLaunchKernel", ApiDomain::Runtime, 5, 9, 2_000))
        // Two driver calls with one correlation id: the earlier wins.
        .api_call(call("cuMemcpyHtoD_v2", ApiDomain::Driver, 8, 4, 2_600))
        .api_call(call("cuMemcpyHtoD_v2", ApiDomain::Driver, 8, 3, 2_500));
    let built = b.build(metadata("j", 3));
    let t = &built.trace;
    assert_eq!(t.kernels.len(), 2);
    assert_eq!(t.kernels[0].name, "_Z1kv");
    assert_eq!(t.kernels[0].launch, host(2_000, 2_500, 9));
    assert_eq!(t.kernels[1].launch, None);
    assert_eq!(t.memops[0].launch, host(2_500, 3_000, 3));
    // Every API call is kept by default, sorted by start.
    let starts: Vec<i64> = t.api_calls.iter().map(|a| a.start_ns).collect();
    assert_eq!(starts, [1_000, 2_000, 2_500, 2_600]);
    // Unlaunched operations are noted only when asked.
    assert!(built.notes.is_empty(), "{:?}", built.notes);
    assert_eq!(t.meta, metadata("j", 3));
}

#[test]
fn unlaunched_operations_are_counted_in_a_note() {
    let mut b = TraceBuilder::new();
    b.kernel(kernel("k", 7, 5, None, 10_000, 12_000))
        .memop(copy(8, 0, 3_000, 4_000))
        .note_unlaunched(true);
    let built = b.build(metadata("j", 0));
    assert_eq!(
        built.notes,
        [
            "2 GPU operations have no API call with their correlation id: their launch columns \
          are null (replay issues them at their recorded start)"
        ]
    );
}

#[test]
fn sync_records_take_the_thread_of_their_call() {
    let mut b = TraceBuilder::new();
    let mut s = crate::fixture::stream_sync(7, 11, 5_000, 6_000);
    s.thread_id = Some(99);
    let mut unknown = crate::fixture::stream_sync(7, 12, 7_000, 8_000);
    unknown.thread_id = Some(99);
    b.kernel(kernel("k", 7, 5, None, 1_000, 2_000))
        .sync(unknown)
        .sync(s)
        .api_call(call(
            "cudaStreamSynchronize",
            ApiDomain::Runtime,
            11,
            4,
            4_900,
        ))
        // Ignored: there are synchronization records.
        .sync_call(SyncCall {
            correlation_id: 11,
            kind: SyncKind::ContextSynchronize,
            context: 1,
            stream: None,
        });
    let t = b.build(metadata("j", 0)).trace;
    assert_eq!(t.syncs.len(), 2);
    assert_eq!(
        (t.syncs[0].correlation_id, t.syncs[0].thread_id),
        (11, Some(4))
    );
    assert_eq!(t.syncs[0].kind, SyncKind::StreamSynchronize);
    assert_eq!((t.syncs[0].start_ns, t.syncs[0].end_ns), (5_000, 6_000));
    assert_eq!(
        (t.syncs[1].correlation_id, t.syncs[1].thread_id),
        (12, None)
    );
}

#[test]
fn sync_calls_become_syncs_over_their_api_call() {
    let mut b = TraceBuilder::new();
    b.kernel(kernel("k", 7, 5, None, 1_000, 2_000))
        .api_call(call(
            "cudaStreamSynchronize",
            ApiDomain::Runtime,
            11,
            4,
            2_100,
        ))
        .sync_call(SyncCall {
            correlation_id: 11,
            kind: SyncKind::StreamSynchronize,
            context: 3,
            stream: Some(7),
        })
        // No API call with correlation id 12: no synchronization.
        .sync_call(SyncCall {
            correlation_id: 12,
            kind: SyncKind::ContextSynchronize,
            context: 3,
            stream: None,
        });
    let t = b.build(metadata("j", 0)).trace;
    assert_eq!(
        t.syncs,
        [Sync {
            kind: SyncKind::StreamSynchronize,
            start_ns: 2_100,
            end_ns: 2_600,
            context: 3,
            stream: Some(7),
            thread_id: Some(4),
            correlation_id: 11,
        }]
    );
}

#[test]
fn without_sync_records_the_synchronizing_calls_are_the_syncs() {
    let mut k = kernel("k", 7, 5, None, 10_000, 12_000);
    k.placement.context = 6;
    let mut b = TraceBuilder::new();
    b.kernel(k)
        .api_call(call("cudaLaunchKernel", ApiDomain::Runtime, 5, 9, 2_000))
        .api_call(call("cudaGetDevice", ApiDomain::Runtime, 6, 9, 3_000))
        .api_call(call(
            "cudaDeviceSynchronize",
            ApiDomain::Runtime,
            7,
            9,
            13_000,
        ))
        .api_call(call(
            "cudaEventSynchronize",
            ApiDomain::Runtime,
            8,
            2,
            14_000,
        ));
    let t = b.build(metadata("j", 0)).trace;
    assert_eq!(
        t.syncs,
        [
            Sync {
                kind: SyncKind::ContextSynchronize,
                start_ns: 13_000,
                end_ns: 13_500,
                // The context of thread 9's latest operation.
                context: 6,
                stream: None,
                thread_id: Some(9),
                correlation_id: 7,
            },
            Sync {
                kind: SyncKind::EventSynchronize,
                start_ns: 14_000,
                end_ns: 14_500,
                // Thread 2 launched nothing: the first kernel's context.
                context: 6,
                stream: None,
                thread_id: Some(2),
                correlation_id: 8,
            },
        ]
    );
}

#[test]
fn selected_api_calls_keep_launches_copies_syncs_and_issuers() {
    let mut b = TraceBuilder::new();
    b.kernel(kernel("k", 7, 5, None, 10_000, 12_000))
        .api_call(call("cudaLaunchKernel", ApiDomain::Runtime, 5, 9, 2_000))
        .api_call(call("cudaGetDevice", ApiDomain::Runtime, 6, 9, 3_000))
        // Not a selected name, but it issued the kernel.
        .api_call(call("myLaunchWrapper", ApiDomain::Runtime, 5, 9, 1_000))
        .api_call(call(
            "cudaDeviceSynchronize",
            ApiDomain::Runtime,
            7,
            9,
            13_000,
        ))
        .keep_selected_api_calls();
    let built = b.build(metadata("j", 0));
    let names: Vec<&str> = built
        .trace
        .api_calls
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "myLaunchWrapper",
            "cudaLaunchKernel",
            "cudaDeviceSynchronize"
        ]
    );
    assert_eq!(
        built.notes,
        [
            "3 of 4 API calls kept: those that launch, copy, set memory or synchronize (what \
          fikit-profile records by default)"
        ]
    );
    // The synchronization was derived before the filter.
    assert_eq!(built.trace.syncs.len(), 1);
}

#[test]
fn overlapping_kernels_are_clamped_and_every_list_is_sorted() {
    let mut b = TraceBuilder::new();
    b.kernel(kernel("b", 7, 2, None, 900, 1_500))
        .kernel(kernel("a", 7, 1, None, 0, 1_000))
        .memop(copy(4, 0, 800, 900))
        .memop(copy(3, 0, 100, 200))
        .api_call(call("cudaMemcpyAsync", ApiDomain::Runtime, 4, 1, 50))
        .api_call(call("cudaMemcpyAsync", ApiDomain::Runtime, 3, 1, 10))
        .note_unlaunched(true);
    let built = b.build(metadata("j", 0));
    let t = &built.trace;
    let kernels: Vec<(&str, i64, i64)> = t
        .kernels
        .iter()
        .map(|k| (k.demangled_name.as_str(), k.start_ns, k.end_ns))
        .collect();
    assert_eq!(kernels, [("a()", 0, 1_000), ("b()", 1_000, 1_500)]);
    let memops: Vec<u32> = t.memops.iter().map(|m| m.correlation_id).collect();
    assert_eq!(memops, [3, 4]);
    let calls: Vec<u32> = t.api_calls.iter().map(|a| a.correlation_id).collect();
    assert_eq!(calls, [3, 4]);
    // The unlaunched note (the two kernels), then the clamp's.
    assert_eq!(built.notes.len(), 2);
    assert!(built.notes[0].starts_with("2 GPU operations"));
    assert!(
        built.notes[1].starts_with("1 kernels started before"),
        "{}",
        built.notes[1]
    );
    assert!(built.notes[1].contains("up to 100 ns"));
    assert!(built.notes[1].contains("took 100 ns"));
}

#[test]
fn kernel_metrics_keep_the_first_figures_of_a_key() {
    let m = |dram_read_bytes| KernelMetrics {
        dram_read_bytes,
        dram_write_bytes: 2,
        sm_issue_bp: None,
        l2_bytes: None,
    };
    let mut b = TraceBuilder::new();
    b.kernel_metrics(1, m(10))
        .kernel_metrics(1, m(20))
        .kernel_metrics(2, m(30));
    let t = b.build(metadata("j", 0)).trace;
    let reads: Vec<(u64, u64)> = t
        .kernel_metrics
        .iter()
        .map(|(k, v)| (*k, v.dram_read_bytes))
        .collect();
    assert_eq!(reads, [(1, 10), (2, 30)]);
}

#[test]
fn devices_count_kernels_and_the_main_device_ran_the_most() {
    let on = |device, corr| {
        let mut k = kernel("k", 7, corr, None, 0, 1);
        k.placement.device = device;
        k
    };
    let mut b = TraceBuilder::new();
    assert!(!b.has_gpu_work());
    assert_eq!(b.main_device(), None);
    b.memop(copy(1, 5, 0, 1));
    assert!(b.has_gpu_work());
    assert_eq!(b.devices(), BTreeMap::from([(5, 0)]));
    // Copies alone make no main device.
    assert_eq!(b.main_device(), None);
    b.kernel(on(3, 2)).kernel(on(2, 3)).kernel(on(3, 4));
    assert_eq!(b.devices(), BTreeMap::from([(2, 1), (3, 2), (5, 0)]));
    assert_eq!(b.main_device(), Some(3));
    // A tie: the lower ordinal.
    b.kernel(on(2, 5));
    assert_eq!(b.main_device(), Some(2));
}

#[test]
fn names_versions_and_stems() {
    assert_eq!(
        strip_api_version("cudaLaunchKernel_v7000"),
        "cudaLaunchKernel"
    );
    assert_eq!(
        strip_api_version("cudaLaunchKernelExC_v11060"),
        "cudaLaunchKernelExC"
    );
    assert_eq!(
        strip_api_version("cudaMemcpyAsync_ptsz_v7000"),
        "cudaMemcpyAsync_ptsz"
    );
    assert_eq!(strip_api_version("cuMemcpyHtoD_v2"), "cuMemcpyHtoD_v2");
    assert_eq!(strip_api_version("cudaMemcpy_v2x"), "cudaMemcpy_v2x");
    assert_eq!(
        sync_kind_of_api("cudaDeviceSynchronize"),
        Some(SyncKind::ContextSynchronize)
    );
    assert_eq!(
        sync_kind_of_api("cuStreamSynchronize_ptsz"),
        Some(SyncKind::StreamSynchronize)
    );
    assert_eq!(sync_kind_of_api("cudaLaunchKernel"), None);
    assert_eq!(cuda_version_string(13000), "13.0");
    assert_eq!(cuda_version_string(12080), "12.8");
    assert_eq!(
        cuda_version_of(Some("12.8".into()), Some("13.0".into())),
        ("12.8".to_string(), Some(VersionSource::Runtime))
    );
    assert_eq!(
        cuda_version_of(None, Some("13.0".into())),
        ("13.0".to_string(), Some(VersionSource::Driver))
    );
    assert_eq!(cuda_version_of(None, None), ("unknown".to_string(), None));
    assert_eq!(DeviceInfo::unknown().name, "unknown");
    assert_eq!(DeviceInfo::unknown().sm_count, 0);
    assert_eq!(file_stem("resnet50 bs1/eval"), "resnet50_bs1_eval");
    assert_eq!(file_stem(""), "job");
    assert_eq!(file_stem(".."), "job..");
    assert_eq!(file_stem(".x"), "job.x");
    assert_eq!(CopyKind::from_cupti(1), CopyKind::HtoD);
    assert_eq!(CopyKind::from_cupti(10), CopyKind::PtoP);
    assert_eq!(CopyKind::from_cupti(3), CopyKind::Other);
}
