//! Writing traces and reading them back, and every malformed input the reader rejects.

use std::path::{Path, PathBuf};

use fikit_trace::polars::prelude::*;
use fikit_trace::{
    Problem, Trace, fixture, metadata_pairs, read_trace, schema, to_dataframe, write_dataframe,
    write_trace,
};

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn write(dir: &Path, trace: &Trace) -> PathBuf {
    let p = dir.join("job.parquet");
    write_trace(&p, trace).unwrap();
    p
}

/// Writes the trace's table after `edit` changes it and its metadata.
fn write_edited(
    dir: &Path,
    trace: &Trace,
    edit: impl FnOnce(&mut DataFrame, &mut Vec<(String, String)>),
) -> PathBuf {
    let p = dir.join("edited.parquet");
    let mut df = to_dataframe(trace).unwrap();
    let mut md = metadata_pairs(&trace.meta);
    edit(&mut df, &mut md);
    write_dataframe(&p, &mut df, md).unwrap();
    p
}

fn error_of(path: &Path) -> String {
    let e = read_trace(path).expect_err("the reader must reject this file");
    assert_eq!(e.path, path, "the error names the file");
    e.to_string()
}

#[test]
fn every_column_and_key_survives_a_round_trip() {
    let dir = tmp();
    let mut trace = fixture::every_column("roundtrip");
    trace.meta.characterization = Some(fixture::characterization(&trace.meta.device.name));
    trace.sort();
    let p = write(dir.path(), &trace);
    let back = read_trace(&p).unwrap();
    assert_eq!(back, trace);
    // Every schema column is in the file, and every metadata key.
    let md = fikit_trace::read_metadata(&p).unwrap();
    assert_eq!(md, trace.meta);
    assert_eq!(metadata_pairs(&md).len(), schema::METADATA_KEYS.len());
    let df = to_dataframe(&trace).unwrap();
    let names: Vec<&str> = df.get_column_names().iter().map(|s| s.as_str()).collect();
    let expected: Vec<&str> = schema::COLUMNS.iter().map(|c| c.name).collect();
    assert_eq!(names, expected);
}

#[test]
fn rows_are_stored_in_start_order_with_kind_tie_break() {
    let trace = fixture::every_column("order");
    let df = to_dataframe(&trace).unwrap();
    let kinds: Vec<&str> = df
        .column("kind")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .map(|k| k.unwrap())
        .collect();
    let starts: Vec<i64> = df
        .column("start_ns")
        .unwrap()
        .i64()
        .unwrap()
        .iter()
        .map(|k| k.unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["api", "memcpy", "api", "kernel", "kernel", "memset", "sync"]
    );
    assert!(starts.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn an_empty_trace_round_trips() {
    let dir = tmp();
    let trace = fixture::empty("idle", 0);
    let p = write(dir.path(), &trace);
    assert_eq!(read_trace(&p).unwrap(), trace);
}

#[test]
fn kernel_key_is_stable_and_sensitive_to_each_input() {
    let base = fikit_trace::kernel_key("k", [1, 2, 3], [4, 5, 6], 7, 8, 9);
    // A fixed value: the key must not change between builds or machines.
    assert_eq!(
        base,
        fikit_trace::kernel_key("k", [1, 2, 3], [4, 5, 6], 7, 8, 9)
    );
    let variants = [
        fikit_trace::kernel_key("k2", [1, 2, 3], [4, 5, 6], 7, 8, 9),
        fikit_trace::kernel_key("k", [1, 2, 4], [4, 5, 6], 7, 8, 9),
        fikit_trace::kernel_key("k", [1, 2, 3], [4, 5, 7], 7, 8, 9),
        fikit_trace::kernel_key("k", [1, 2, 3], [4, 5, 6], 8, 8, 9),
        fikit_trace::kernel_key("k", [1, 2, 3], [4, 5, 6], 7, 9, 9),
        fikit_trace::kernel_key("k", [1, 2, 3], [4, 5, 6], 7, 8, 10),
    ];
    for v in variants {
        assert_ne!(v, base);
    }
}

#[test]
fn kernel_key_matches_its_documented_definition() {
    // xxh3-64 of: name, 0, then eleven little-endian u32s.
    let mut bytes = b"abc\0".to_vec();
    for v in [1u32, 1, 1, 32, 1, 1, 0, 0, 16] {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    assert_eq!(
        fikit_trace::kernel_key("abc", [1, 1, 1], [32, 1, 1], 0, 0, 16),
        xxhash_rust::xxh3::xxh3_64(&bytes)
    );
}

#[test]
fn rejects_an_empty_file() {
    let dir = tmp();
    let p = dir.path().join("empty.parquet");
    std::fs::write(&p, b"").unwrap();
    let msg = error_of(&p);
    assert!(msg.contains("empty.parquet: empty file (0 bytes)"), "{msg}");
}

#[test]
fn rejects_a_file_that_is_not_parquet() {
    let dir = tmp();
    let p = dir.path().join("notes.parquet");
    std::fs::write(&p, "kind,start_ns\nkernel,1\n").unwrap();
    let msg = error_of(&p);
    assert!(msg.contains("not a Parquet file"), "{msg}");
}

#[test]
fn rejects_a_truncated_file() {
    let dir = tmp();
    let p = write(dir.path(), &fixture::every_column("cut"));
    let bytes = std::fs::read(&p).unwrap();
    for keep in [4, bytes.len() / 2, bytes.len() - 1] {
        std::fs::write(&p, &bytes[..keep]).unwrap();
        let msg = error_of(&p);
        assert!(
            msg.contains("truncated or corrupt Parquet file"),
            "{keep}: {msg}"
        );
    }
}

#[test]
fn rejects_a_corrupt_footer() {
    let dir = tmp();
    let p = write(dir.path(), &fixture::every_column("corrupt"));
    let mut bytes = std::fs::read(&p).unwrap();
    let n = bytes.len();
    // Overwrite the footer length with nonsense, keep the magic.
    bytes[n - 8..n - 4].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&p, &bytes).unwrap();
    let msg = error_of(&p);
    assert!(msg.contains("truncated or corrupt Parquet file"), "{msg}");
}

#[test]
fn rejects_parquet_without_fikit_metadata() {
    let dir = tmp();
    let p = write_edited(dir.path(), &fixture::every_column("plain"), |_, md| {
        md.clear()
    });
    assert!(error_of(&p).contains("not a fikit trace"));
}

#[test]
fn rejects_a_wrong_format_version() {
    let dir = tmp();
    let p = write_edited(dir.path(), &fixture::every_column("v2"), |_, md| {
        md[0].1 = "2".into();
    });
    let msg = error_of(&p);
    assert!(
        msg.ends_with("format version 2 is not supported: this build reads version 1"),
        "{msg}"
    );
}

#[test]
fn rejects_a_missing_or_mistyped_metadata_key() {
    let dir = tmp();
    let p = write_edited(dir.path(), &fixture::every_column("k"), |_, md| {
        md.retain(|(k, _)| k != "fikit.sm_count");
    });
    assert!(error_of(&p).ends_with("metadata key `fikit.sm_count`: missing"));
    let p = write_edited(dir.path(), &fixture::every_column("k"), |_, md| {
        md.iter_mut().find(|(k, _)| k == "fikit.pid").unwrap().1 = "12x".into();
    });
    assert!(
        error_of(&p).ends_with(
            "metadata key `fikit.pid`: expected an unsigned 32-bit integer, found \"12x\""
        )
    );
    let p = write_edited(dir.path(), &fixture::every_column("k"), |_, md| {
        md.iter_mut()
            .find(|(k, _)| k == "fikit.priority")
            .unwrap()
            .1 = "12".into();
    });
    assert!(error_of(&p).ends_with("expected an integer from 0 to 9, found 12"));
    let p = write_edited(dir.path(), &fixture::every_column("k"), |_, md| {
        md.iter_mut()
            .find(|(k, _)| k == "fikit.sm_count")
            .unwrap()
            .1 = "4294967295".into();
    });
    assert!(
        error_of(&p).ends_with(
            "metadata key `fikit.sm_count`: expected 0 (unknown) to 1024, found 4294967295"
        ),
        "{}",
        error_of(&p)
    );
}

#[test]
fn cuda_version_source_is_optional_but_checked() {
    let dir = tmp();
    // A trace written before the key existed: still read, source unknown.
    let p = write_edited(dir.path(), &fixture::every_column("old"), |_, md| {
        md.retain(|(k, _)| k != "fikit.cuda_version_source");
    });
    let t = read_trace(&p).unwrap();
    assert_eq!(t.meta.cuda_version_source, None);
    assert_eq!(t.meta.cuda_version, "13.0");
    // Written without a source: the key is left out, and read back as None.
    let mut trace = fixture::every_column("none");
    trace.meta.cuda_version_source = None;
    assert!(
        !metadata_pairs(&trace.meta)
            .iter()
            .any(|(k, _)| k == "fikit.cuda_version_source")
    );
    let back = read_trace(&write(dir.path(), &trace)).unwrap();
    assert_eq!(back.meta.cuda_version_source, None);
    // Any other value is an error.
    let p = write_edited(dir.path(), &fixture::every_column("bad"), |_, md| {
        md.iter_mut()
            .find(|(k, _)| k == "fikit.cuda_version_source")
            .unwrap()
            .1 = "toolkit".into();
    });
    assert!(
        error_of(&p).ends_with(
            "metadata key `fikit.cuda_version_source`: expected runtime or driver, found \"toolkit\""
        ),
        "{}",
        error_of(&p)
    );
}

/// An edit of a characterization's JSON.
type Edit = dyn Fn(&mut serde_json::Value);

#[test]
fn a_characterization_is_optional_but_checked() {
    let dir = tmp();
    // Without one (as every trace before it existed): read as None.
    let t = read_trace(&write(dir.path(), &fixture::every_column("plain"))).unwrap();
    assert_eq!(t.meta.characterization, None);
    let mut trace = fixture::every_column("c");
    let gpu = trace.meta.device.name.clone();
    trace.meta.characterization = Some(fixture::characterization(&gpu));
    let edited = |edit: &Edit| {
        write_edited(dir.path(), &trace, |_, md| {
            let (_, v) = md
                .iter_mut()
                .find(|(k, _)| k == "fikit.characterization")
                .unwrap();
            let mut j: serde_json::Value = serde_json::from_str(v).unwrap();
            edit(&mut j);
            *v = j.to_string();
        })
    };
    let cases: [(&Edit, String); 6] = [
        (
            &|j| j["gpu_name"] = "NVIDIA H200".into(),
            format!(
                "gpu_name: recorded on \"NVIDIA H200\", but the trace is of {gpu:?}: a characterization is of its trace's GPU"
            ),
        ),
        (
            &|j| j["untraced_runs"][1]["region_ns"] = 0.into(),
            "untraced_runs[1].region_ns: expected a positive number of ns, found 0".into(),
        ),
        (
            &|j| j["untraced_runs"][0]["iterations_ns"][1] = (-3).into(),
            "untraced_runs[0].iterations_ns[1]: expected a positive number of ns, found -3".into(),
        ),
        (
            &|j| j["untraced_runs"][0]["busy_ns"][0] = i64::MAX.into(),
            format!(
                "untraced_runs[0].busy_ns: a busy part of {} ns is longer than the run's region (9000 ns)",
                i64::MAX
            ),
        ),
        (
            &|j| j["untraced_runs"][0]["launches"] = 0.into(),
            "untraced_runs[0].launches: expected at least 1".into(),
        ),
        (
            &|j| j["runs"] = 3.into(),
            "expected fikit-profile's characterization JSON: unknown field `runs`".into(),
        ),
    ];
    for (edit, message) in cases {
        let e = error_of(&edited(edit));
        assert!(
            e.contains(&format!("metadata key `fikit.characterization`: {message}")),
            "{e}"
        );
    }
}

#[test]
fn rejects_a_missing_column() {
    let dir = tmp();
    let p = write_edited(dir.path(), &fixture::every_column("m"), |df, _| {
        *df = df.drop("grid_y").unwrap();
    });
    assert!(error_of(&p).ends_with("column `grid_y`: missing"));
}

#[test]
fn rejects_a_mistyped_column() {
    let dir = tmp();
    let p = write_edited(dir.path(), &fixture::every_column("t"), |df, _| {
        let s = df
            .column("start_ns")
            .unwrap()
            .cast(&DataType::String)
            .unwrap();
        df.with_column(s).unwrap();
    });
    let msg = error_of(&p);
    assert!(
        msg.ends_with("column `start_ns`: expected type i64, found str"),
        "{msg}"
    );
}

fn set_i64(df: &mut DataFrame, name: &str, row: usize, value: Option<i64>) {
    let mut v: Vec<Option<i64>> = df.column(name).unwrap().i64().unwrap().iter().collect();
    v[row] = value;
    df.with_column(Series::new(name.into(), v).into_column())
        .unwrap();
}

#[test]
fn rejects_end_before_start_naming_the_row() {
    let dir = tmp();
    // Row 3 is the first kernel (relu, 10_000..11_000).
    let p = write_edited(dir.path(), &fixture::every_column("neg"), |df, _| {
        set_i64(df, "end_ns", 3, Some(9_000));
    });
    let msg = error_of(&p);
    assert!(
        msg.ends_with(
            "row 3 (kernel): end_ns 9000 is before start_ns 10000 (negative duration -1000 ns)"
        ),
        "{msg}"
    );
}

#[test]
fn rejects_a_null_cell_the_kind_needs() {
    let dir = tmp();
    let p = write_edited(dir.path(), &fixture::every_column("null"), |df, _| {
        let mut v: Vec<Option<u32>> = df.column("grid_x").unwrap().u32().unwrap().iter().collect();
        v[4] = None;
        df.with_column(Series::new("grid_x".into(), v).into_column())
            .unwrap();
    });
    let msg = error_of(&p);
    assert!(
        msg.ends_with("row 4 (kernel), column `grid_x`: null, but a kernel row needs it"),
        "{msg}"
    );
}

#[test]
fn says_an_api_row_with_the_article_english_takes() {
    let dir = tmp();
    let mut api_row = 0;
    let p = write_edited(dir.path(), &fixture::every_column("null"), |df, _| {
        let kinds: Vec<Option<&str>> = df.column("kind").unwrap().str().unwrap().iter().collect();
        api_row = kinds.iter().position(|k| *k == Some("api")).unwrap();
        let mut v: Vec<Option<u64>> = df
            .column("thread_id")
            .unwrap()
            .u64()
            .unwrap()
            .iter()
            .collect();
        v[api_row] = None;
        df.with_column(Series::new("thread_id".into(), v).into_column())
            .unwrap();
    });
    let msg = error_of(&p);
    assert!(
        msg.ends_with(&format!(
            "row {api_row} (api), column `thread_id`: null, but an api row needs it"
        )),
        "{msg}"
    );
}

#[test]
fn rejects_an_unknown_kind() {
    let dir = tmp();
    let p = write_edited(dir.path(), &fixture::every_column("kind"), |df, _| {
        let mut v: Vec<Option<String>> = df
            .column("kind")
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .map(|s| s.map(str::to_string))
            .collect();
        v[1] = Some("marker".into());
        df.with_column(Series::new("kind".into(), v).into_column())
            .unwrap();
    });
    let msg = error_of(&p);
    assert!(
        msg.contains("row 1, column `kind`: unknown kind \"marker\""),
        "{msg}"
    );
}

#[test]
fn rejects_a_kernel_that_starts_before_the_previous_one_on_its_stream_ends() {
    let dir = tmp();
    let mut trace = fixture::empty("overlap", 0);
    trace.kernels = vec![
        fixture::kernel("a", 7, 1, None, 100, 500),
        fixture::kernel("b", 8, 2, None, 200, 900), // other stream: may overlap
        fixture::kernel("c", 7, 3, None, 450, 600), // same stream as a: must not
    ];
    let p = write(dir.path(), &trace);
    let msg = error_of(&p);
    assert!(
        msg.ends_with(
            "row 2 (kernel), column `start_ns`: starts at 450 ns, before the previous kernel on device 0 context 1 stream 7 (row 0) ends at 500 ns"
        ),
        "{msg}"
    );
    // Back to back on one stream is fine.
    trace.kernels[2] = fixture::kernel("c", 7, 3, None, 500, 600);
    let p = write(dir.path(), &trace);
    assert_eq!(read_trace(&p).unwrap().kernels.len(), 3);
}

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let p = PathBuf::from("/nonexistent/fikit/job.parquet");
    let e = read_trace(&p).unwrap_err();
    assert!(matches!(e.problem, Problem::Io(_)));
    assert!(
        e.to_string()
            .starts_with("/nonexistent/fikit/job.parquet: ")
    );
}

#[test]
fn metadata_from_the_footer_alone_equals_the_full_read_for_every_shipped_trace() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = fikit_trace::discover(&[root.join("h200"), root.join("h100")]).unwrap();
    assert!(files.len() >= 18, "{}", files.len());
    for f in files {
        let full = fikit_trace::read_trace(&f).unwrap().meta;
        assert_eq!(
            fikit_trace::read_metadata(&f).unwrap(),
            full,
            "{}",
            f.display()
        );
    }
    // A file cut short still gets the full read's error.
    let dir = tmp();
    let p = dir.path().join("cut.parquet");
    let bytes = std::fs::read(root.join("h200/vit_b_16-bs1-eval-1050.parquet")).unwrap();
    std::fs::write(&p, &bytes[..bytes.len() - 100]).unwrap();
    let e = fikit_trace::read_metadata(&p).unwrap_err().to_string();
    assert!(e.contains("cut short") || e.contains("corrupt"), "{e}");
}

/// `every_column` with metrics for its first kernel's key only.
fn with_metrics() -> Trace {
    let mut trace = fixture::every_column("metrics");
    trace.sort();
    let key = trace.kernels[0].kernel_key;
    trace.kernel_metrics.insert(
        key,
        fikit_trace::KernelMetrics {
            dram_read_bytes: 4 << 20,
            dram_write_bytes: 1 << 20,
            sm_issue_bp: Some(4_250),
            l2_bytes: Some(9 << 20),
        },
    );
    trace
}

fn set_u32(df: &mut DataFrame, name: &str, row: usize, value: Option<u32>) {
    let mut v: Vec<Option<u32>> = df.column(name).unwrap().u32().unwrap().iter().collect();
    v[row] = value;
    df.with_column(Series::new(name.into(), v).into_column())
        .unwrap();
}

fn set_u64(df: &mut DataFrame, name: &str, row: usize, value: Option<u64>) {
    let mut v: Vec<Option<u64>> = df.column(name).unwrap().u64().unwrap().iter().collect();
    v[row] = value;
    df.with_column(Series::new(name.into(), v).into_column())
        .unwrap();
}

/// The row index of the first kernel of `key` in the written table.
fn key_row(df: &DataFrame, key: u64) -> usize {
    df.column("kernel_key")
        .unwrap()
        .u64()
        .unwrap()
        .iter()
        .position(|k| k == Some(key))
        .unwrap()
}

/// The row index of the first row of `kind` in the written table.
fn first_row(df: &DataFrame, kind: &str) -> usize {
    df.column("kind")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .position(|k| k == Some(kind))
        .unwrap()
}

#[test]
fn metrics_round_trip_as_optional_columns() {
    let dir = tmp();
    let trace = with_metrics();
    let p = write(dir.path(), &trace);
    let back = read_trace(&p).unwrap();
    assert_eq!(back.kernel_metrics, trace.kernel_metrics);
    assert_eq!(back, trace);
    let df = to_dataframe(&trace).unwrap();
    let names: Vec<&str> = df.get_column_names().iter().map(|s| s.as_str()).collect();
    let expected: Vec<&str> = schema::COLUMNS
        .iter()
        .chain(schema::METRIC_COLUMNS)
        .chain([&schema::METRIC_L2_COLUMN])
        .map(|c| c.name)
        .collect();
    assert_eq!(names, expected);
    // Every written column is one the schema names.
    for n in &names {
        assert_eq!(schema::column(n).map(|c| c.name), Some(*n));
    }
    // Set on every row of the measured key, null on the other kernels' and
    // on every other kind's.
    let key = trace.kernels[0].kernel_key;
    let keys: Vec<Option<u64>> = df
        .column("kernel_key")
        .unwrap()
        .u64()
        .unwrap()
        .iter()
        .collect();
    let sm: Vec<Option<u32>> = df
        .column("metric_sm_issue_bp")
        .unwrap()
        .u32()
        .unwrap()
        .iter()
        .collect();
    for (k, s) in keys.iter().zip(&sm) {
        assert_eq!(s.is_some(), *k == Some(key), "key {k:?}: {s:?}");
    }
    // A trace without metrics has no metrics columns (files as before).
    let plain = fixture::every_column("plain");
    assert_eq!(to_dataframe(&plain).unwrap().width(), schema::COLUMNS.len());
}

#[test]
fn rejects_malformed_metrics_columns() {
    let dir = tmp();
    let trace = with_metrics();
    let p = write_edited(dir.path(), &trace, |df, _| {
        df.drop_in_place("metric_dram_write_bytes").unwrap();
    });
    let e = error_of(&p);
    assert!(
        e.contains("metric_dram_write_bytes") && e.contains("all three"),
        "{e}"
    );

    let p = write_edited(dir.path(), &trace, |df, _| {
        let row = first_row(df, "api");
        set_u32(df, "metric_sm_issue_bp", row, Some(10));
        set_u64(df, "metric_dram_read_bytes", row, Some(1));
        set_u64(df, "metric_dram_write_bytes", row, Some(1));
    });
    let e = error_of(&p);
    assert!(e.contains("no kernel"), "{e}");

    let key = trace.kernels[0].kernel_key;
    let p = write_edited(dir.path(), &trace, |df, _| {
        let row = key_row(df, key);
        set_u32(df, "metric_sm_issue_bp", row, Some(10_001));
    });
    let e = error_of(&p);
    assert!(e.contains("over 10000"), "{e}");

    // The L2 figure without the DRAM bytes.
    let p = write_edited(dir.path(), &trace, |df, _| {
        let row = first_row(df, "kernel");
        let row = if key_row(df, key) == row {
            row + 1
        } else {
            row
        };
        set_u64(df, "metric_l2_bytes", row, Some(5));
    });
    let e = error_of(&p);
    assert!(e.contains("SM and L2 figures set only beside them"), "{e}");

    let p = write_edited(dir.path(), &trace, |df, _| {
        let row = key_row(df, key);
        set_u64(df, "metric_dram_write_bytes", row, None);
    });
    let e = error_of(&p);
    assert!(e.contains("both set or both null"), "{e}");

    // The SM figure alone, without the DRAM bytes.
    let p = write_edited(dir.path(), &trace, |df, _| {
        let row = key_row(df, key);
        set_u64(df, "metric_dram_read_bytes", row, None);
        set_u64(df, "metric_dram_write_bytes", row, None);
    });
    let e = error_of(&p);
    assert!(e.contains("both set or both null"), "{e}");

    // One row of a key without the SM figure its other rows have: the key
    // launched a second time, after everything else.
    let mut twice = trace.clone();
    let mut again = twice.kernels[0].clone();
    let last = twice.kernels.iter().map(|k| k.end_ns).max().unwrap();
    let (start, len) = (last + 1_000, again.duration_ns());
    again.start_ns = start;
    again.end_ns = start + len;
    again.correlation_id = 1_000;
    again.launch = None;
    twice.kernels.push(again);
    twice.sort();
    assert_eq!(read_trace(&write(dir.path(), &twice)).unwrap(), twice);
    let p = write_edited(dir.path(), &twice, |df, _| {
        let row = key_row(df, key);
        set_u32(df, "metric_sm_issue_bp", row, None);
    });
    let e = error_of(&p);
    assert!(e.contains("other metrics here"), "{e}");
}

#[test]
fn metrics_files_from_before_the_l2_column_still_read() {
    let dir = tmp();
    let trace = with_metrics();
    let p = write_edited(dir.path(), &trace, |df, _| {
        df.drop_in_place("metric_l2_bytes").unwrap();
    });
    let back = read_trace(&p).unwrap();
    let key = trace.kernels[0].kernel_key;
    assert_eq!(back.kernel_metrics[&key].l2_bytes, None);
    assert_eq!(
        back.kernel_metrics[&key].dram_read_bytes,
        trace.kernel_metrics[&key].dram_read_bytes
    );
}

#[test]
fn metrics_without_the_sm_figure_round_trip() {
    // A GPU that counts the DRAM bytes but not SM issue rate in one pass.
    let dir = tmp();
    let mut trace = with_metrics();
    for m in trace.kernel_metrics.values_mut() {
        m.sm_issue_bp = None;
    }
    let p = write(dir.path(), &trace);
    let back = read_trace(&p).unwrap();
    assert_eq!(back.kernel_metrics, trace.kernel_metrics);
    assert_eq!(back.kernel_metrics.len(), 1);
}

#[test]
fn the_summary_counts_the_keys_with_metrics() {
    let trace = with_metrics();
    let keys: std::collections::BTreeSet<u64> =
        trace.kernels.iter().map(|k| k.kernel_key).collect();
    let s = fikit_trace::summary::summarize(&trace, "m.parquet", 5);
    assert_eq!(s.metric_keys, Some((1, keys.len())));
    let table = fikit_trace::summary::render_table(&[s]);
    assert!(
        table.contains(&format!(
            "metrics (DRAM bytes, SM issue rate, L2 bytes) for 1 of {} kernel keys",
            keys.len()
        )),
        "{table}"
    );
    // Without figures: no count, no line, nothing new in the JSON form.
    let plain = fikit_trace::summary::summarize(&fixture::every_column("plain"), "p", 5);
    assert_eq!(plain.metric_keys, None);
    assert!(
        !serde_json::to_string(&plain)
            .unwrap()
            .contains("metric_keys")
    );
    assert!(!fikit_trace::summary::render_table(&[plain]).contains("metrics ("));
}

#[test]
fn the_shared_memory_split_round_trips_as_an_optional_column() {
    let dir = tmp();
    let mut trace = fixture::every_column("split");
    trace.sort();
    // Without a figure the column is not written (the format as before).
    let df = to_dataframe(&trace).unwrap();
    assert!(df.column(schema::SHARED_CONFIG_COLUMN.name).is_err());
    // One kernel with the driver's split, the others without.
    trace.kernels[0].shared_config_bytes = Some(102_400);
    let p = write(dir.path(), &trace);
    let back = read_trace(&p).unwrap();
    assert_eq!(back, trace);
    assert_eq!(back.kernels[0].shared_config_bytes, Some(102_400));
    assert!(
        back.kernels[1..]
            .iter()
            .all(|k| k.shared_config_bytes.is_none())
    );
    let df = to_dataframe(&trace).unwrap();
    let names: Vec<&str> = df.get_column_names().iter().map(|s| s.as_str()).collect();
    assert_eq!(names.last(), Some(&schema::SHARED_CONFIG_COLUMN.name));
    assert!(schema::column(schema::SHARED_CONFIG_COLUMN.name).is_some());
}

#[test]
fn a_shared_memory_split_on_a_row_that_is_no_kernel_or_of_another_type_is_refused() {
    let dir = tmp();
    let mut trace = fixture::every_column("split");
    trace.sort();
    trace.kernels[0].shared_config_bytes = Some(0);
    // Set on every row, the memcpy's and API calls' too.
    let p = write_edited(dir.path(), &trace, |df, _| {
        let n = df.height();
        df.with_column(Column::new(
            schema::SHARED_CONFIG_COLUMN.name.into(),
            vec![Some(8192u32); n],
        ))
        .unwrap();
    });
    let e = error_of(&p);
    assert!(e.contains("shared_config_bytes"), "{e}");
    assert!(e.contains("only kernel rows"), "{e}");
    // Of the wrong type.
    let p = write_edited(dir.path(), &trace, |df, _| {
        let n = df.height();
        df.with_column(Column::new(
            schema::SHARED_CONFIG_COLUMN.name.into(),
            vec![Some(8192i64); n],
        ))
        .unwrap();
    });
    let e = error_of(&p);
    assert!(e.contains("shared_config_bytes"), "{e}");
    assert!(e.contains("expected type"), "{e}");
}
