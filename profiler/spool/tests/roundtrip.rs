//! Spool round trips and reading of cut or corrupt tails.

use fikit_spool::*;

fn sample_records() -> Vec<Record> {
    vec![
        Record::Start(ProcessStart {
            pid: 4242,
            ppid: 1,
            job: "resnet50-bs1".into(),
            priority: 0,
            command_line: vec!["python3".into(), "w.py".into(), "--batch=1".into()],
            host: "gpu-host".into(),
            cupti_timestamp_ns: 1_000_000,
            realtime_ns: 1_790_000_000_000_000_000,
            cupti_version: 130001,
            api_mode: ApiMode::Selected,
            collector: "fikit-collector 0.1.0".into(),
        }),
        Record::Device(Device {
            ordinal: 0,
            name: "NVIDIA H100 80GB HBM3".into(),
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
            name: "cudaLaunchKernel".into(),
        },
        Record::String {
            id: 0,
            text: "_Z6kernelPfi".into(),
        },
        Record::Api(Api {
            domain: Domain::Runtime,
            cbid: 211,
            start: 1_000_100,
            end: 1_000_105,
            thread_id: 4243,
            correlation: 7,
        }),
        Record::Kernel(Kernel {
            start: 1_000_200,
            end: 1_000_300,
            device: 0,
            context: 1,
            stream: 7,
            correlation: 7,
            grid: [64, 2, 1],
            block: [256, 1, 1],
            registers: 32,
            static_shared: 1024,
            dynamic_shared: 0,
            name_id: 0,
            shared_executed: None,
        }),
        // The driver's shared-memory split rides in its own tag.
        Record::Kernel(Kernel {
            start: 1_000_310,
            end: 1_000_390,
            device: 0,
            context: 1,
            stream: 7,
            correlation: 7,
            grid: [8, 1, 1],
            block: [128, 1, 1],
            registers: 64,
            static_shared: 0,
            dynamic_shared: 49_152,
            name_id: 0,
            shared_executed: Some(102_400),
        }),
        Record::MemOp(MemOp {
            start: 1_000_400,
            end: 1_000_500,
            device: 0,
            context: 1,
            stream: 7,
            correlation: 8,
            copy_kind: Some(2),
            bytes: 4096,
        }),
        Record::MemOp(MemOp {
            start: 1_000_600,
            end: 1_000_650,
            device: 0,
            context: 1,
            stream: 7,
            correlation: 9,
            copy_kind: None,
            bytes: 512,
        }),
        Record::Sync(Sync {
            sync_type: 3,
            start: 1_000_700,
            end: 1_000_800,
            correlation: 10,
            context: 1,
            stream: Some(7),
        }),
        Record::Sync(Sync {
            sync_type: 4,
            start: 1_000_900,
            end: 1_000_950,
            correlation: 11,
            context: 1,
            stream: None,
        }),
        Record::SyncCall {
            correlation: 12,
            sync_type: 3,
            context: 1,
            stream: Some(7),
        },
        Record::SyncCall {
            correlation: 13,
            sync_type: 4,
            context: 1,
            stream: None,
        },
        Record::Dropped { total: 3 },
        Record::CudaRuntime { version: 12080 },
        Record::KernelMetrics {
            kernel_key: 0x0123_4567_89ab_cdef,
            dram_read_bytes: 3 << 30,
            dram_write_bytes: 7,
            sm_issue_bp: Some(9_999),
            l2_bytes: Some(5 << 30),
        },
        Record::KernelMetrics {
            kernel_key: 1,
            dram_read_bytes: 0,
            dram_write_bytes: 0,
            sm_issue_bp: None,
            l2_bytes: None,
        },
        Record::Note {
            text: "a warning ünïcode".into(),
        },
        Record::End(End {
            dropped_records: 3,
            incomplete_records: 1,
        }),
    ]
}

fn encode(records: &[Record]) -> Vec<u8> {
    let mut buf = SpoolBuffer::new();
    for r in records {
        buf.push(r);
    }
    let mut w = SpoolWriter::new(Vec::new()).unwrap();
    w.write_buffer(&buf).unwrap();
    w.into_inner()
}

#[test]
fn every_record_kind_round_trips() {
    let records = sample_records();
    let bytes = encode(&records);
    let spool = parse_spool(&bytes).unwrap();
    assert_eq!(spool.records, records);
    assert_eq!(spool.tail, Tail::Clean);
    assert_eq!(spool.unknown_records, 0);
    assert!(spool.is_complete());
}

#[test]
fn round_trips_through_a_file_in_several_appends() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.spool");
    let records = sample_records();
    {
        let f = std::fs::File::create(&path).unwrap();
        let mut w = SpoolWriter::new(f).unwrap();
        for chunk in records.chunks(3) {
            let mut b = SpoolBuffer::new();
            for r in chunk {
                b.push(r);
            }
            w.write_buffer(&b).unwrap();
        }
    }
    let spool = read_spool(&path).unwrap();
    assert_eq!(spool.records, records);
}

#[test]
fn a_cut_at_every_byte_keeps_the_whole_records_before_it() {
    let records = sample_records();
    let bytes = encode(&records);
    // Offsets at which each record ends.
    let mut ends = Vec::new();
    let mut pos = HEADER_LEN;
    for r in &records {
        let mut b = SpoolBuffer::new();
        b.push(r);
        pos += b.as_bytes().len();
        ends.push(pos);
    }
    assert_eq!(pos, bytes.len());
    for cut in HEADER_LEN..bytes.len() {
        let spool = parse_spool(&bytes[..cut]).unwrap();
        let whole = ends.iter().filter(|&&e| e <= cut).count();
        assert_eq!(spool.records, records[..whole], "cut at {cut}");
        let last_end = if whole == 0 {
            HEADER_LEN
        } else {
            ends[whole - 1]
        };
        if last_end == cut {
            assert_eq!(spool.tail, Tail::Clean);
        } else {
            assert_eq!(
                spool.tail,
                Tail::Truncated {
                    offset: last_end as u64,
                    bytes: (cut - last_end) as u64
                }
            );
        }
        // The End record is the last one: only the whole file is complete.
        assert_eq!(spool.is_complete(), whole == records.len());
    }
}

#[test]
fn a_flipped_byte_ends_reading_at_that_record() {
    let records = sample_records();
    let mut bytes = encode(&records);
    // Corrupt the payload of the third record.
    let mut pos = HEADER_LEN;
    for r in &records[..2] {
        let mut b = SpoolBuffer::new();
        b.push(r);
        pos += b.as_bytes().len();
    }
    bytes[pos + 7] ^= 0x55;
    let spool = parse_spool(&bytes).unwrap();
    assert_eq!(spool.records, records[..2]);
    assert!(matches!(spool.tail, Tail::Truncated { offset, .. } if offset == pos as u64));
}

#[test]
fn unknown_tags_are_skipped() {
    let records = sample_records();
    let mut bytes = header_bytes().to_vec();
    // A record with tag 200 and a 3-byte payload, framed by hand.
    let payload = [1u8, 2, 3];
    bytes.extend_from_slice(&3u32.to_le_bytes());
    bytes.push(200);
    bytes.extend_from_slice(&payload);
    let mut h: u32 = 0x811c_9dc5;
    for &b in [200u8].iter().chain(&payload) {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    bytes.extend_from_slice(&h.to_le_bytes());
    bytes.extend_from_slice(&encode(&records)[HEADER_LEN..]);
    let spool = parse_spool(&bytes).unwrap();
    assert_eq!(spool.unknown_records, 1);
    assert_eq!(spool.records, records);
}

#[test]
fn not_a_spool() {
    assert!(matches!(parse_spool(b""), Err(SpoolError::NotASpool)));
    assert!(matches!(
        parse_spool(b"PAR1\0\0\0\0\0\0\0\0\0"),
        Err(SpoolError::NotASpool)
    ));
    let mut h = header_bytes();
    h[8] = 9;
    let err = parse_spool(&h).unwrap_err();
    assert!(matches!(err, SpoolError::UnsupportedVersion(9)));
    assert!(err.to_string().contains("version 9"));
    // A header alone is an empty, incomplete spool.
    let s = parse_spool(&header_bytes()).unwrap();
    assert!(s.records.is_empty());
    assert!(!s.is_complete());
}
