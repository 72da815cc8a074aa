//! A realistic spool, written by hand with the spool writer.

#![allow(dead_code)]

use std::path::Path;

use fikit_spool::*;

/// CUPTI timestamp of the collector's start.
pub const T0: u64 = 1_000_000_000;

/// The records of a small capture: two kernels on stream 7 (one launched by
/// the runtime, with a nested driver call sharing its correlation), one on
/// stream 13, a copy, a memset, a stream synchronization recorded as a call.
pub fn records(complete: bool) -> Vec<Record> {
    let mut v = vec![
        Record::Start(ProcessStart {
            pid: 4242,
            ppid: 1,
            job: "from-env".into(),
            priority: 3,
            command_line: vec!["python3".into(), "w.py".into()],
            host: "gpu-host".into(),
            cupti_timestamp_ns: T0,
            realtime_ns: 1_790_000_000_000_000_000,
            cupti_version: 130001,
            api_mode: ApiMode::Selected,
            collector: "fikit-collector 0.1.0".into(),
        }),
        Record::Device(Device {
            ordinal: 0,
            name: "NVIDIA H200".into(),
            sm_count: 132,
            max_threads_per_sm: 2048,
            max_registers_per_sm: 65536,
            max_shared_memory_per_sm: 233472,
            max_blocks_per_sm: 32,
            driver_version: 13000,
        }),
        Record::ApiName {
            domain: Domain::Runtime,
            cbid: 211,
            name: "cudaLaunchKernel_v7000".into(),
        },
        Record::ApiName {
            domain: Domain::Driver,
            cbid: 307,
            name: "cuLaunchKernel".into(),
        },
        Record::ApiName {
            domain: Domain::Runtime,
            cbid: 41,
            name: "cudaMemcpyAsync_v3020".into(),
        },
        Record::ApiName {
            domain: Domain::Runtime,
            cbid: 131,
            name: "cudaStreamSynchronize_v3020".into(),
        },
        Record::String {
            id: 0,
            text: "_Z6kernelPfi".into(),
        },
        Record::String {
            id: 1,
            text: "triton_poi_fused_0".into(),
        },
    ];
    // Launch calls: correlation 10 (runtime + nested driver), 11, 12 (driver only), 13 copy.
    let api = |domain, cbid, start, end, correlation| {
        Record::Api(Api {
            domain,
            cbid,
            start: T0 + start,
            end: T0 + end,
            thread_id: 4243,
            correlation,
        })
    };
    v.push(api(Domain::Runtime, 211, 1_000, 1_010, 10));
    v.push(api(Domain::Driver, 307, 1_002, 1_008, 10));
    v.push(api(Domain::Runtime, 211, 1_020, 1_030, 11));
    v.push(api(Domain::Driver, 307, 1_040, 1_045, 12));
    v.push(api(Domain::Runtime, 41, 1_050, 1_060, 13));
    let kernel = |start, end, stream, correlation, name_id, grid| {
        Record::Kernel(Kernel {
            start: T0 + start,
            end: T0 + end,
            device: 0,
            context: 1,
            stream,
            correlation,
            grid,
            block: [256, 1, 1],
            registers: 32,
            static_shared: 0,
            dynamic_shared: 1024,
            name_id,
            // The driver's split, as the collector records it since
            // 2026-11-27; the kernel on stream 13 as an older spool has it.
            shared_executed: (stream != 13).then_some(32_768),
        })
    };
    v.push(kernel(2_000, 3_000, 7, 10, 0, [64, 1, 1]));
    v.push(kernel(3_500, 4_000, 7, 11, 0, [64, 1, 1]));
    v.push(kernel(2_100, 2_600, 13, 12, 1, [8, 2, 1]));
    v.push(Record::MemOp(MemOp {
        start: T0 + 4_100,
        end: T0 + 4_400,
        device: 0,
        context: 1,
        stream: 7,
        correlation: 13,
        copy_kind: Some(2),
        bytes: 4096,
    }));
    v.push(Record::MemOp(MemOp {
        start: T0 + 1_500,
        end: T0 + 1_600,
        device: 0,
        context: 1,
        stream: 7,
        correlation: 99,
        copy_kind: None,
        bytes: 512,
    }));
    v.push(api(Domain::Runtime, 131, 1_070, 4_500, 14));
    v.push(Record::SyncCall {
        correlation: 14,
        sync_type: 3,
        context: 1,
        stream: Some(7),
    });
    if complete {
        v.push(Record::End(End {
            dropped_records: 0,
            incomplete_records: 0,
        }));
    }
    v
}

/// Writes the records as a spool file.
pub fn write_spool(path: &Path, records: &[Record]) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = SpoolWriter::new(f).unwrap();
    let mut b = SpoolBuffer::new();
    for r in records {
        b.push(r);
    }
    w.write_buffer(&b).unwrap();
}
