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
        characterization: None,
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
        kernel_metrics: Default::default(),
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
        shared_config_bytes: None,
    }
}

/// [`empty`] on a device of `sm_count` SMs (the limits otherwise
/// [`metadata`]'s), with one [`kernel`] per span `(start_ns, end_ns)`, each
/// a grid of `grid` blocks of 1,024 threads (with 32 registers a thread,
/// two fit on an SM).
pub fn kernel_spans(job: &str, sm_count: u32, spans: &[(i64, i64)], grid: u32) -> Trace {
    let mut t = empty(job, 0);
    t.meta.device.sm_count = sm_count;
    t.kernels = spans
        .iter()
        .enumerate()
        .map(|(i, &(s, e))| {
            let mut k = kernel("k", 7, i as u32, None, s, e);
            k.grid = [grid, 1, 1];
            k.block = [1024, 1, 1];
            k.kernel_key = kernel_key(&k.name, k.grid, k.block, 0, 0, 32);
            k
        })
        .collect();
    t
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
        kernel_metrics: Default::default(),
    }
}

/// A kernel on stream 7 whose launch call ends at `start_ns`: it starts as
/// soon as it is issued, so a replay of it alone reproduces `[start, end)`.
pub fn launched_at_start(name: &str, correlation_id: u32, start_ns: i64, end_ns: i64) -> Kernel {
    let mut k = kernel(name, 7, correlation_id, Some(start_ns), start_ns, end_ns);
    k.launch
        .as_mut()
        .expect("fixture kernels have a launch")
        .end_ns = start_ns;
    k
}

/// A latency-critical job of `iterations` iterations, 100 µs apart: kernel
/// `conv` [0, 10) µs, host work, kernel `fc` [40, 45) µs and a stream
/// synchronization [41, 46) µs that waits for it.
pub fn serving(name: &str, priority: u8, iterations: u32) -> Trace {
    let starts: Vec<i64> = (0..i64::from(iterations)).map(|i| i * 100_000).collect();
    serving_at(name, priority, &starts)
}

/// A latency-critical job whose iterations, those of [`serving`], start
/// at `starts_ns` (a server recorded as it served: idle where one starts
/// later than 100 µs after the one before).
pub fn serving_at(name: &str, priority: u8, starts_ns: &[i64]) -> Trace {
    let mut t = empty(name, priority);
    for (i, &at) in starts_ns.iter().enumerate() {
        push_serving_iteration(&mut t, i as u32 * 3 + 1, at);
    }
    t
}

/// Appends one iteration of [`serving`] starting at `at_ns` to `t`, its
/// correlation ids `correlation_id` to `correlation_id + 2`.
pub fn push_serving_iteration(t: &mut Trace, correlation_id: u32, at_ns: i64) {
    let c = correlation_id;
    t.kernels
        .push(launched_at_start("conv", c, at_ns, at_ns + 10_000));
    t.kernels.push(launched_at_start(
        "fc",
        c + 1,
        at_ns + 40_000,
        at_ns + 45_000,
    ));
    t.syncs
        .push(stream_sync(7, c + 2, at_ns + 41_000, at_ns + 46_000));
}

/// A throughput job of `kernels` back-to-back 20 µs `gemm` kernels.
pub fn training(name: &str, priority: u8, kernels: u32) -> Trace {
    back_to_back(name, priority, kernels, 20_000)
}

/// A job of `kernels` back-to-back `gemm` kernels of `len_ns` each.
pub fn back_to_back(name: &str, priority: u8, kernels: u32, len_ns: i64) -> Trace {
    let mut t = empty(name, priority);
    for i in 0..kernels {
        let start = i64::from(i) * len_ns;
        t.kernels
            .push(launched_at_start("gemm", i + 1, start, start + len_ns));
    }
    t
}

/// A job of `iterations` short iterations 1 µs apart: kernel `conv` [0, 200)
/// ns, a host gap, kernel `fc` [600, 700) ns and a stream synchronization
/// [650, 720) ns.
pub fn short_iterations(name: &str, priority: u8, iterations: u32) -> Trace {
    let mut t = empty(name, priority);
    for i in 0..iterations {
        let (t0, c) = (i64::from(i) * 1_000, i * 3 + 1);
        t.kernels.push(launched_at_start("conv", c, t0, t0 + 200));
        t.kernels
            .push(launched_at_start("fc", c + 1, t0 + 600, t0 + 700));
        t.syncs.push(stream_sync(7, c + 2, t0 + 650, t0 + 720));
    }
    t
}

/// The two-job pair of the end-to-end tests: `serving` (priority 0, 3
/// iterations) and `training` (priority 9, 12 kernels).
pub fn serving_and_training() -> (Trace, Trace) {
    (serving("serving", 0, 3), training("training", 9, 12))
}

/// A characterization of two untraced runs on `gpu_name` (for the trace
/// whose `fikit.gpu_name` it is).
pub fn characterization(gpu_name: &str) -> Characterization {
    Characterization {
        gpu_name: gpu_name.to_string(),
        untraced_runs: vec![
            UntracedRun {
                region_ns: 9_000,
                launches: 2,
                iterations_ns: vec![4_000, 4_500],
                busy_ns: vec![3_800, 4_100],
            },
            UntracedRun {
                region_ns: 8_000,
                launches: 2,
                iterations_ns: vec![3_900],
                busy_ns: Vec::new(),
            },
        ],
        pressure: None,
    }
}

/// A pressure pass's record: a victim of 450 us alone that ran `slowdown`
/// times slower while the job's kernels overlapped it (`None`: past any
/// slowdown).
pub fn pressure_pass(slowdown: Option<f64>) -> crate::pressure::PressurePass {
    crate::pressure::PressurePass {
        victim_alone_ns: 450_000.0,
        runs_alone: 40,
        victim_shapes: 1,
        runs_steady: 200,
        overlapped: 0.6,
        slowdown,
        runs_whole: 0,
        whole_median: None,
    }
}
