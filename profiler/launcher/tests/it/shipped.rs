//! The traces the project ships (traces/h200) still read and validate, and
//! hold what the profiler promises: complete captures, every GPU operation
//! joined to its launch call, device limits, clock alignment.

use std::path::PathBuf;

use fikit_trace::{ApiRecording, read_trace};

fn shipped() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../traces/h200");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    v.sort();
    v
}

#[test]
fn shipped_traces_are_valid_and_complete() {
    let files = shipped();
    assert!(files.len() >= 8, "{files:?}");
    for f in files {
        let t = read_trace(&f).unwrap_or_else(|e| panic!("{e}"));
        let m = &t.meta;
        let name = f.display();
        assert!(m.capture_complete, "{name}");
        assert_eq!(m.dropped_records, 0, "{name}");
        assert_eq!(m.api_recording, ApiRecording::Selected, "{name}");
        assert_eq!(m.device.name, "NVIDIA H200", "{name}");
        assert_eq!(m.device.sm_count, 132, "{name}");
        assert!(m.device.max_threads_per_sm > 0 && m.device.max_blocks_per_sm > 0);
        assert!(
            m.clock_offset_ns.abs() < 1_000_000_000,
            "{name}: CUPTI time is wall time here"
        );
        assert!(m.producer.starts_with("fikit-profile"), "{name}");
        assert!(
            f.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&m.job_name),
            "{name}"
        );
        assert!(t.kernels.len() > 1000, "{name}");
        assert!(t.kernels.iter().all(|k| k.launch.is_some()), "{name}");
        assert!(t.memops.iter().all(|k| k.launch.is_some()), "{name}");
        assert!(!t.syncs.is_empty(), "{name}");
        assert!(t.syncs.iter().all(|s| s.thread_id.is_some()), "{name}");
        let size = std::fs::metadata(&f).unwrap().len();
        assert!(size < 4 << 20, "{name} is {size} bytes");
    }
}
