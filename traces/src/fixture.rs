//! Small hand-made traces for tests, examples and documentation. Nothing here
//! is used on real data.

use crate::model::*;

/// Metadata of a made-up job on an H100 (SXM) with the limits of compute capability 9.0.
pub fn metadata(job: &str, priority: u8) -> Metadata {
    Metadata {
        format_version: FORMAT_VERSION,
        job_name: job.to_string(),
        priority,
        pid: 4242,
        command_line: vec!["python3".into(), format!("{job}.py"), "--batch=1".into()],
        host: "testhost".to_string(),
        device: DeviceInfo {
            name: "NVIDIA H100 80GB HBM3".to_string(),
            sm_count: 132,
            max_threads_per_sm: 2048,
            max_registers_per_sm: 65536,
            max_shared_memory_per_sm: 233472,
            max_blocks_per_sm: 32,
        },
        driver_version: "13.0".to_string(),
        cuda_version: "13.0".to_string(),
        cuda_version_source: Some(VersionSource::Runtime),
        cupti_version: 26,
        clock_offset_ns: 1_700_000_000_000_000_000,
        dropped_records: 0,
        capture_complete: true,
        api_recording: ApiRecording::Selected,
        producer: "fikit-trace fixture".to_string(),
    }
}

/// An empty trace with [`metadata`].
pub fn empty(job: &str, priority: u8) -> Trace {
    Trace {
        meta: metadata(job, priority),
        kernels: vec![],
        memops: vec![],
        api_calls: vec![],
        syncs: vec![],
    }
}

/// A kernel on device 0, context 1, `stream`, launched by thread 7 over
/// `[launch_ns, launch_ns + 2000)` (when given), running `[start_ns, end_ns)`,
/// with a 2×1×1 grid of 128×1×1 blocks, 32 registers and no shared memory.
pub fn kernel(
    name: &str,
    stream: u32,
    correlation_id: u32,
    launch_ns: Option<i64>,
    start_ns: i64,
    end_ns: i64,
) -> Kernel {
    let grid = [2, 1, 1];
    let block = [128, 1, 1];
    Kernel {
        start_ns,
        end_ns,
        placement: Placement {
            device: 0,
            context: 1,
            stream,
        },
        correlation_id,
        name: format!("_Z{}{}v", name.len(), name),
        demangled_name: format!("{name}()"),
        grid,
        block,
        registers_per_thread: 32,
        static_shared_bytes: 0,
        dynamic_shared_bytes: 0,
        launch: launch_ns.map(|l| HostCall {
            start_ns: l,
            end_ns: l + 2000,
            thread_id: 7,
        }),
        kernel_key: kernel_key(&format!("_Z{}{}v", name.len(), name), grid, block, 0, 0, 32),
    }
}

/// A blocking `cudaStreamSynchronize` on `stream` by thread 7 over `[start_ns, end_ns)`.
pub fn stream_sync(stream: u32, correlation_id: u32, start_ns: i64, end_ns: i64) -> Sync {
    Sync {
        kind: SyncKind::StreamSynchronize,
        start_ns,
        end_ns,
        context: 1,
        stream: Some(stream),
        thread_id: Some(7),
        correlation_id,
    }
}

/// A trace that uses every column and kind: two kernels on two streams, a copy,
/// a memset, a context-wide synchronization and API calls of both domains,
/// one kernel without a recorded launch.
pub fn every_column(job: &str) -> Trace {
    let mut k2 = kernel("gemm", 14, 3, None, 12_000, 30_000);
    k2.grid = [64, 2, 3];
    k2.block = [256, 2, 1];
    k2.registers_per_thread = 168;
    k2.static_shared_bytes = 1024;
    k2.dynamic_shared_bytes = 49152;
    k2.kernel_key = kernel_key(&k2.name, k2.grid, k2.block, 1024, 49152, 168);
    Trace {
        meta: Metadata {
            dropped_records: 3,
            capture_complete: false,
            api_recording: ApiRecording::All,
            clock_offset_ns: -5,
            ..metadata(job, 9)
        },
        kernels: vec![kernel("relu", 7, 2, Some(4_000), 10_000, 11_000), k2],
        memops: vec![
            MemOp {
                start_ns: 2_000,
                end_ns: 3_500,
                placement: Placement {
                    device: 0,
                    context: 1,
                    stream: 7,
                },
                correlation_id: 1,
                copy_kind: Some(CopyKind::HtoD),
                bytes: 1 << 20,
                launch: Some(HostCall {
                    start_ns: 1_000,
                    end_ns: 1_800,
                    thread_id: 7,
                }),
            },
            MemOp {
                start_ns: 31_000,
                end_ns: 31_400,
                placement: Placement {
                    device: 0,
                    context: 1,
                    stream: 14,
                },
                correlation_id: 4,
                copy_kind: None,
                bytes: 4096,
                launch: None,
            },
        ],
        api_calls: vec![
            ApiCall {
                domain: ApiDomain::Runtime,
                name: "cudaMemcpyAsync".into(),
                start_ns: 1_000,
                end_ns: 1_800,
                thread_id: 7,
                correlation_id: 1,
            },
            ApiCall {
                domain: ApiDomain::Driver,
                name: "cuLaunchKernel".into(),
                start_ns: 4_000,
                end_ns: 6_000,
                thread_id: 7,
                correlation_id: 2,
            },
        ],
        syncs: vec![Sync {
            kind: SyncKind::ContextSynchronize,
            start_ns: 32_000,
            end_ns: 33_000,
            context: 1,
            stream: None,
            thread_id: None,
            correlation_id: 5,
        }],
    }
}
