//! `fikit-sim inspect` end to end: traces built here, the binary run as a user would.

use std::path::{Path, PathBuf};

use fikit_e2e::cmd;
use fikit_trace::polars::prelude::*;
use fikit_trace::{
    ApiCall, ApiDomain, Trace, fixture, metadata_pairs, to_dataframe, write_dataframe, write_trace,
};
use predicates::prelude::*;

/// A job of six kernels on one stream (ns):
///
/// ```text
/// a [10_000, 12_000)  launched  9_000                         busy [10_000, 12_000)
/// b [15_000, 16_000)  launched 14_000 >= 12_000: host gap 3_000
/// c [16_500, 17_000)  launched 15_500 <  16_000: other gap  500
/// sync [16_600, 20_000); d launched 20_500 after it: sync gap 17_000..22_000 = 5_000
/// d [22_000, 23_000)
/// e [23_000, 24_000)  back to back with d: no gap
/// f [30_000, 31_000)  launched 29_000 >= 24_000: host gap 6_000
/// ```
/// Gaps sorted: 500, 3_000, 5_000, 6_000 → p50 (rank 2) 3_000, p99 (rank 4) 6_000,
/// total 14_500 = host 9_000 + sync 5_000 + other 500. Busy 2_000+1_000+500+2_000+1_000 = 6_500.
fn hand_made() -> Trace {
    let mut t = fixture::empty("bert-b1", 0);
    t.kernels = vec![
        fixture::kernel("a", 7, 1, Some(9_000), 10_000, 12_000),
        fixture::kernel("b", 7, 2, Some(14_000), 15_000, 16_000),
        fixture::kernel("c", 7, 3, Some(15_500), 16_500, 17_000),
        fixture::kernel("d", 7, 5, Some(20_500), 22_000, 23_000),
        fixture::kernel("a", 7, 6, Some(20_600), 23_000, 24_000),
        fixture::kernel("f", 7, 7, Some(29_000), 30_000, 31_000),
    ];
    t.syncs = vec![fixture::stream_sync(7, 4, 16_600, 20_000)];
    t.api_calls = vec![ApiCall {
        domain: ApiDomain::Runtime,
        name: "cudaStreamSynchronize".into(),
        start_ns: 16_600,
        end_ns: 20_000,
        thread_id: 7,
        correlation_id: 4,
    }];
    t
}

fn write(dir: &Path, name: &str, t: &Trace) -> PathBuf {
    let p = dir.join(name);
    write_trace(&p, t).unwrap();
    p
}

#[test]
fn json_statistics_match_the_hand_computed_values() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "bert.parquet", &hand_made());
    let out = cmd("fikit-sim")
        .args(["inspect", "--format", "json"])
        .arg(&p)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let job = &v[0];
    assert_eq!(job["job"], "bert-b1");
    assert_eq!(job["kernels"], 6);
    assert_eq!(job["span_ns"], 21_000);
    assert_eq!(job["gpu_busy_ns"], 6_500);
    let idle = &job["idle"];
    assert_eq!(idle["count"], 4);
    assert_eq!(idle["p50_ns"], 3_000);
    assert_eq!(idle["p99_ns"], 6_000);
    assert_eq!(idle["total_ns"], 14_500);
    assert_eq!(idle["host_ns"], 9_000);
    assert_eq!(idle["sync_ns"], 5_000);
    assert_eq!(idle["other_ns"], 500);
    // a() ran twice: 2_000 + 1_000.
    assert_eq!(job["top_kernels"][0]["name"], "a()");
    assert_eq!(job["top_kernels"][0]["count"], 2);
    assert_eq!(job["top_kernels"][0]["total_ns"], 3_000);
    assert_eq!(job["top_kernels"][0]["mean_ns"], 1_500);
}

#[test]
fn table_output_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "b.parquet", &hand_made());
    let mut low = fixture::every_column("resnet-train");
    low.meta.priority = 9;
    write(dir.path(), "a.parquet", &low);
    let out = cmd("fikit-sim")
        .current_dir(dir.path())
        .args(["inspect", "--top", "3", "."])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    insta::assert_snapshot!(String::from_utf8(out).unwrap());
}

#[test]
fn folders_are_searched_recursively_in_path_order() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("z/deeper")).unwrap();
    write(
        dir.path(),
        "z/deeper/one.parquet",
        &fixture::empty("one", 1),
    );
    write(dir.path(), "two.parquet", &fixture::empty("two", 2));
    std::fs::write(dir.path().join("README.txt"), "not a trace").unwrap();
    let out = cmd("fikit-sim")
        .args(["inspect", "--format", "json"])
        .arg(dir.path())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let jobs: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["job"].as_str().unwrap())
        .collect();
    assert_eq!(jobs, ["two", "one"]); // "two.parquet" < "z/..."
}

/// Runs inspect on `path` and checks it fails with exit code 2, naming the file, and `what`.
fn rejects(path: &Path, what: &str) {
    let shown = path.display().to_string();
    cmd("fikit-sim")
        .arg("inspect")
        .arg(path)
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains(format!(
            "fikit-sim: error: {shown}: "
        )))
        .stderr(predicate::str::contains(what))
        .stderr(predicate::str::contains("panicked").not());
}

fn edited(dir: &Path, edit: impl FnOnce(&mut DataFrame, &mut Vec<(String, String)>)) -> PathBuf {
    let t = hand_made();
    let mut df = to_dataframe(&t).unwrap();
    let mut md = metadata_pairs(&t.meta);
    edit(&mut df, &mut md);
    let p = dir.join("bad.parquet");
    write_dataframe(&p, &mut df, md).unwrap();
    p
}

#[test]
fn bad_inputs_exit_2_with_a_message_naming_file_and_problem() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();

    let empty = d.join("empty.parquet");
    std::fs::write(&empty, b"").unwrap();
    rejects(&empty, "empty file (0 bytes)");

    let csv = d.join("table.parquet");
    std::fs::write(&csv, "kind,start_ns\n").unwrap();
    rejects(&csv, "not a Parquet file");

    let good = write(d, "good.parquet", &hand_made());
    let bytes = std::fs::read(&good).unwrap();
    let cut = d.join("cut.parquet");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    rejects(&cut, "truncated or corrupt Parquet file");

    let p = edited(d, |_, md| md[0].1 = "7".into());
    rejects(
        &p,
        "format version 7 is not supported: this build reads version 1",
    );

    let p = edited(d, |df, _| *df = df.drop("stream").unwrap());
    rejects(&p, "column `stream`: missing");

    let p = edited(d, |df, _| {
        let c = df
            .column("end_ns")
            .unwrap()
            .cast(&DataType::Float64)
            .unwrap();
        df.with_column(c).unwrap();
    });
    rejects(&p, "column `end_ns`: expected type i64, found f64");

    // Row 0 is kernel a [10_000, 12_000): end it before it starts.
    let p = edited(d, |df, _| {
        let mut v: Vec<Option<i64>> = df.column("end_ns").unwrap().i64().unwrap().iter().collect();
        v[0] = Some(5_000);
        df.with_column(Series::new("end_ns".into(), v).into_column())
            .unwrap();
    });
    rejects(&p, "row 0 (kernel): end_ns 5000 is before start_ns 10000");

    // Start kernel b (row 1) inside kernel a on the same stream.
    let p = edited(d, |df, _| {
        let mut v: Vec<Option<i64>> = df
            .column("start_ns")
            .unwrap()
            .i64()
            .unwrap()
            .iter()
            .collect();
        v[1] = Some(11_000);
        df.with_column(Series::new("start_ns".into(), v).into_column())
            .unwrap();
    });
    rejects(
        &p,
        "row 1 (kernel), column `start_ns`: starts at 11000 ns, before the previous kernel on device 0 context 1 stream 7 (row 0) ends at 12000 ns",
    );

    let missing = d.join("nowhere.parquet");
    rejects(&missing, "No such file or directory");
}

#[test]
fn a_folder_without_traces_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    cmd("fikit-sim")
        .arg("inspect")
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no trace files (*.parquet) found in",
        ));
}

#[test]
fn bad_arguments_exit_2() {
    cmd("fikit-sim")
        .args(["inspect", "--format", "xml", "x"])
        .assert()
        .code(2);
    cmd("fikit-sim").arg("inspect").assert().code(2);
}

#[test]
fn help_describes_every_subcommand() {
    cmd("fikit-sim")
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("inspect"));
    cmd("fikit-sim")
        .args(["inspect", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("--format"))
        .stdout(predicate::str::contains("--top"));
}
