//! Every kind of bad input tried against `fikit-sim`, with the exact message and
//! exit code each gets, as one table (an insta snapshot). The same table is in
//! traces/README.md ("Bad input and the errors it gets"); a test keeps the two
//! equal, so the documentation cannot go stale.

use std::path::Path;

use fikit_e2e::cmd;
use fikit_trace::polars::prelude::*;
use fikit_trace::{Trace, fixture, metadata_pairs, to_dataframe, write_dataframe, write_trace};

/// One bad input: what it is, the arguments that feed it to `fikit-sim`.
struct Case {
    input: &'static str,
    args: Vec<String>,
}

/// The trace the bad traces are edited from: every kind and column.
fn good() -> Trace {
    fixture::every_column("job")
}

/// File-order row of the first row of `kind`.
fn first_row(df: &DataFrame, kind: &str) -> usize {
    df.column("kind")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .position(|k| k == Some(kind))
        .unwrap()
}

fn set_i64(df: &mut DataFrame, col: &str, row: usize, v: Option<i64>) {
    let mut vals: Vec<Option<i64>> = df.column(col).unwrap().i64().unwrap().iter().collect();
    vals[row] = v;
    df.with_column(Series::new(col.into(), vals).into_column())
        .unwrap();
}

fn set_u32(df: &mut DataFrame, col: &str, row: usize, v: Option<u32>) {
    let mut vals: Vec<Option<u32>> = df.column(col).unwrap().u32().unwrap().iter().collect();
    vals[row] = v;
    df.with_column(Series::new(col.into(), vals).into_column())
        .unwrap();
}

fn set_str(df: &mut DataFrame, col: &str, row: usize, v: Option<&str>) {
    let mut vals: Vec<Option<String>> = df
        .column(col)
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .map(|s| s.map(str::to_string))
        .collect();
    vals[row] = v.map(str::to_string);
    df.with_column(Series::new(col.into(), vals).into_column())
        .unwrap();
}

/// Writes the good trace to `DIR/name`, its table and metadata edited first.
fn edited(
    dir: &Path,
    name: &str,
    edit: impl FnOnce(&mut DataFrame, &mut Vec<(String, String)>),
) -> String {
    let t = good();
    let mut df = to_dataframe(&t).unwrap();
    let mut md = metadata_pairs(&t.meta);
    edit(&mut df, &mut md);
    write_dataframe(&dir.join(name), &mut df, md).unwrap();
    name.to_string()
}

fn set_key(md: &mut [(String, String)], key: &str, value: &str) {
    md.iter_mut().find(|(k, _)| k == key).unwrap().1 = value.into();
}

fn inspect(input: &'static str, file: String) -> Case {
    Case {
        input,
        args: vec!["inspect".into(), file],
    }
}

/// Writes the scenario `DIR/name`: two jobs of one kernel lasting 2^61 ns
/// (a valid trace, `long.parquet`); under time slicing they take more than
/// 2^62 ns.
fn long_kernels(dir: &Path, name: &str) -> String {
    let mut t = fixture::empty("long", 0);
    t.kernels = vec![fixture::kernel("k", 7, 1, Some(0), 0, 1 << 61)];
    write_trace(&dir.join("long.parquet"), &t).unwrap();
    let job = r#"{"trace": "long.parquet"}"#;
    std::fs::write(dir.join(name), format!(r#"{{"jobs": [{job}, {job}]}}"#)).unwrap();
    name.to_string()
}

fn trace_cases(d: &Path) -> Vec<Case> {
    let good_file = "good.parquet";
    write_trace(&d.join(good_file), &good()).unwrap();
    let bytes = std::fs::read(d.join(good_file)).unwrap();
    std::fs::write(d.join("empty.parquet"), b"").unwrap();
    std::fs::write(d.join("text.parquet"), "kind,start_ns\nkernel,1\n").unwrap();
    std::fs::write(d.join("cut.parquet"), &bytes[..bytes.len() / 2]).unwrap();
    // The footer (and its closing magic) intact, its length field broken.
    let mut bad_footer = bytes.clone();
    let n = bad_footer.len();
    bad_footer[n - 8..n - 4].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(d.join("footer.parquet"), &bad_footer).unwrap();
    // A fuzzer's input: the first data page claims -3 values (Polars sized
    // a buffer of 2^61 bytes from it and aborted).
    std::fs::copy(
        fikit_e2e::root().join("traces/tests/fixtures/fuzz/page-values-negative.bin"),
        d.join("page-count.parquet"),
    )
    .unwrap();
    std::fs::create_dir(d.join("no-traces")).unwrap();
    std::fs::write(d.join("no-traces/notes.txt"), "not a trace").unwrap();

    vec![
        inspect("file does not exist", "missing.parquet".into()),
        inspect("folder without any `*.parquet`", "no-traces".into()),
        inspect("empty file", "empty.parquet".into()),
        inspect("not Parquet (CSV text)", "text.parquet".into()),
        inspect("truncated (first half of a trace)", "cut.parquet".into()),
        inspect(
            "broken footer length (last 8 bytes edited)",
            "footer.parquet".into(),
        ),
        inspect(
            "a page header's value count negative (fuzzed)",
            "page-count.parquet".into(),
        ),
        inspect(
            "Parquet without fikit metadata",
            edited(d, "plain.parquet", |_, md| md.clear()),
        ),
        inspect(
            "other format version",
            edited(d, "v2.parquet", |_, md| {
                set_key(md, "fikit.format_version", "2")
            }),
        ),
        inspect(
            "metadata key missing",
            edited(d, "no-pid.parquet", |_, md| {
                md.retain(|(k, _)| k != "fikit.pid")
            }),
        ),
        inspect(
            "metadata value unparsable",
            edited(d, "pid.parquet", |_, md| set_key(md, "fikit.pid", "12x")),
        ),
        inspect(
            "job name empty",
            edited(d, "noname.parquet", |_, md| {
                set_key(md, "fikit.job_name", "")
            }),
        ),
        inspect(
            "priority out of range",
            edited(d, "prio.parquet", |_, md| {
                set_key(md, "fikit.priority", "12")
            }),
        ),
        inspect(
            "command line not a JSON list",
            edited(d, "cmd.parquet", |_, md| {
                set_key(md, "fikit.command_line", "python3 x.py")
            }),
        ),
        inspect(
            "characterization field out of range",
            edited(d, "runs.parquet", |_, md| {
                md.push((
                    "fikit.characterization".into(),
                    r#"{"gpu_name": "NVIDIA H100 80GB HBM3", "untraced_runs": [{"region_ns": -5, "launches": 9}]}"#.into(),
                ))
            }),
        ),
        inspect(
            "characterization of another GPU",
            edited(d, "gpu.parquet", |_, md| {
                md.push((
                    "fikit.characterization".into(),
                    r#"{"gpu_name": "NVIDIA H200", "untraced_runs": [{"region_ns": 5, "launches": 9}]}"#.into(),
                ))
            }),
        ),
        inspect(
            "column missing",
            edited(d, "no-grid.parquet", |df, _| {
                *df = df.drop("grid_y").unwrap()
            }),
        ),
        inspect(
            "column of the wrong type",
            edited(d, "type.parquet", |df, _| {
                let c = df
                    .column("start_ns")
                    .unwrap()
                    .cast(&DataType::String)
                    .unwrap();
                df.with_column(c).unwrap();
            }),
        ),
        inspect(
            "unknown kind",
            edited(d, "kind.parquet", |df, _| {
                set_str(df, "kind", 1, Some("marker"))
            }),
        ),
        inspect(
            "null kind",
            edited(d, "null-kind.parquet", |df, _| set_str(df, "kind", 1, None)),
        ),
        inspect(
            "null cell a kernel needs",
            edited(d, "null-grid.parquet", |df, _| {
                let r = first_row(df, "kernel");
                set_u32(df, "grid_x", r, None)
            }),
        ),
        inspect(
            "a kernel's grid outside CUDA's limits",
            edited(d, "grid-0.parquet", |df, _| {
                let r = first_row(df, "kernel");
                set_u32(df, "grid_y", r, Some(0))
            }),
        ),
        inspect(
            "a block of more than 1,024 threads",
            edited(d, "block-2048.parquet", |df, _| {
                let r = first_row(df, "kernel");
                set_u32(df, "block_x", r, Some(1024));
                set_u32(df, "block_y", r, Some(2))
            }),
        ),
        inspect(
            "end before start",
            edited(d, "end.parquet", |df, _| {
                let r = first_row(df, "kernel");
                set_i64(df, "end_ns", r, Some(0))
            }),
        ),
        inspect(
            "launch call ends before it starts",
            edited(d, "launch.parquet", |df, _| {
                let r = first_row(df, "kernel");
                set_i64(df, "launch_end_ns", r, Some(0))
            }),
        ),
        inspect(
            "launch columns partly null",
            edited(d, "launch-null.parquet", |df, _| {
                let r = first_row(df, "kernel");
                set_i64(df, "launch_end_ns", r, None)
            }),
        ),
        inspect(
            "timestamp beyond 2^62 ns",
            edited(d, "far.parquet", |df, _| {
                let r = first_row(df, "kernel");
                set_i64(df, "end_ns", r, Some(1 << 62))
            }),
        ),
        Case {
            input: "kernels too long to replay (two jobs of one 2^61 ns kernel)",
            args: vec![
                "--no-plots".into(),
                "--scenario".into(),
                long_kernels(d, "s-long.json"),
            ],
        },
        inspect(
            "overlapping kernels on one stream",
            edited(d, "overlap.parquet", |df, _| {
                // Move the second kernel onto the first one's stream, inside it.
                let first = first_row(df, "kernel");
                let stream = df.column("stream").unwrap().u32().unwrap().get(first);
                let start = df.column("start_ns").unwrap().i64().unwrap().get(first);
                let second = (first + 1..df.height())
                    .find(|&r| df.column("kind").unwrap().str().unwrap().get(r) == Some("kernel"))
                    .unwrap();
                set_u32(df, "stream", second, stream);
                set_i64(df, "start_ns", second, start.map(|s| s + 1));
            }),
        ),
        inspect(
            "unknown copy kind",
            edited(d, "copy.parquet", |df, _| {
                let r = first_row(df, "memcpy");
                set_str(df, "copy_kind", r, Some("HtoX"))
            }),
        ),
        inspect(
            "unknown API domain",
            edited(d, "domain.parquet", |df, _| {
                let r = first_row(df, "api");
                set_str(df, "api_domain", r, Some("kernel"))
            }),
        ),
        inspect(
            "unknown synchronization kind",
            edited(d, "sync.parquet", |df, _| {
                let r = first_row(df, "sync");
                set_str(df, "sync_kind", r, Some("barrier"))
            }),
        ),
    ]
}

fn scenario_cases(d: &Path) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut scenario = |input: &'static str, name: &str, json: &str, extra: &[&str]| {
        std::fs::write(d.join(name), json).unwrap();
        let mut args = vec!["--no-plots".to_string(), "--scenario".into(), name.into()];
        args.extend(extra.iter().map(|s| s.to_string()));
        cases.push(Case { input, args });
    };
    let job = r#"{"trace": "good.parquet"}"#;
    scenario(
        "scenario: not JSON",
        "s-text.json",
        "jobs: [good.parquet]",
        &[],
    );
    scenario(
        "scenario: an array, not an object",
        "s-array.json",
        r#"[{"trace": "good.parquet"}]"#,
        &[],
    );
    scenario(
        "scenario: no `jobs`",
        "s-nojobs.json",
        r#"{"name": "x"}"#,
        &[],
    );
    scenario(
        "scenario: `jobs` empty",
        "s-empty.json",
        r#"{"jobs": []}"#,
        &[],
    );
    scenario(
        "scenario: unknown field",
        "s-field.json",
        r#"{"jobs": [{"trace": "good.parquet", "prio": 0}]}"#,
        &[],
    );
    scenario(
        "scenario: field of the wrong type",
        "s-type.json",
        r#"{"jobs": [{"trace": "good.parquet", "priority": "high"}]}"#,
        &[],
    );
    scenario(
        "scenario: priority out of range",
        "s-prio.json",
        r#"{"jobs": [{"trace": "good.parquet", "priority": 12}]}"#,
        &[],
    );
    scenario(
        "scenario: empty job name",
        "s-name.json",
        r#"{"jobs": [{"trace": "good.parquet", "name": ""}]}"#,
        &[],
    );
    scenario(
        "scenario: negative start",
        "s-start.json",
        r#"{"jobs": [{"trace": "good.parquet", "start_ns": -5}]}"#,
        &[],
    );
    scenario(
        "scenario: repeat 0",
        "s-repeat.json",
        r#"{"jobs": [{"trace": "good.parquet", "repeat": 0}]}"#,
        &[],
    );
    scenario(
        "scenario: repeat too large for memory",
        "s-repeat-huge.json",
        r#"{"jobs": [{"trace": "good.parquet", "repeat": 1000000000000000}]}"#,
        &[],
    );
    scenario(
        "scenario: request count too large for memory",
        "s-count-huge.json",
        r#"{"jobs": [{"trace": "good.parquet", "requests": {"count": 1000000000000000, "rate_per_s": 5}}]}"#,
        &[],
    );
    scenario(
        "scenario: no requests",
        "s-count.json",
        r#"{"jobs": [{"trace": "good.parquet", "requests": {"count": 0, "rate_per_s": 10}}]}"#,
        &[],
    );
    scenario(
        "scenario: request rate not positive",
        "s-rate.json",
        r#"{"jobs": [{"trace": "good.parquet", "requests": {"count": 3, "rate_per_s": -1}}]}"#,
        &[],
    );
    scenario(
        "scenario: trace file missing",
        "s-missing.json",
        r#"{"jobs": [{"trace": "gone.parquet"}]}"#,
        &[],
    );
    scenario(
        "scenario: trace file bad",
        "s-bad.json",
        r#"{"jobs": [{"trace": "text.parquet"}]}"#,
        &[],
    );
    scenario(
        "`--priority` for a job the scenario lacks",
        "s-ok.json",
        &format!(r#"{{"jobs": [{job}]}}"#),
        &["--priority", "nope=0"],
    );
    scenario(
        "`--priority` value out of range",
        "s-ok.json",
        &format!(r#"{{"jobs": [{job}]}}"#),
        &["--priority", "job=10"],
    );
    cases.push(Case {
        input: "scenario file missing",
        args: vec!["--no-plots".into(), "--scenario".into(), "gone.json".into()],
    });
    cases
}

/// Runs every case in `DIR` and renders the table.
fn table() -> String {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut cases = trace_cases(d);
    cases.extend(scenario_cases(d));
    let mut out =
        String::from("| bad input | command | exit | message (stderr) |\n|---|---|---|---|\n");
    for case in cases {
        let output = cmd("fikit-sim")
            .current_dir(d)
            .args(&case.args)
            .output()
            .unwrap();
        let code = output.status.code().unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(code, 2, "{}: exit {code}, {stderr}", case.input);
        assert!(output.stdout.is_empty(), "{}: printed a result", case.input);
        assert!(!stderr.contains("panicked"), "{}: {stderr}", case.input);
        let message = stderr.trim().replace('\n', " ").replace('|', "\\|");
        out.push_str(&format!(
            "| {} | `fikit-sim {}` | {code} | {message} |\n",
            case.input,
            case.args.join(" ")
        ));
    }
    out
}

#[test]
fn every_bad_input_gets_exit_2_and_a_message_and_the_docs_list_them() {
    let table = table();
    insta::assert_snapshot!("bad_inputs", table);
    let readme = std::fs::read_to_string(fikit_e2e::root().join("traces/README.md")).unwrap();
    assert!(
        readme.contains(&table),
        "traces/README.md's table \"Bad input and the errors it gets\" differs from the \
         snapshot: copy tests/snapshots/bad_inputs__bad_inputs.snap's table there"
    );
}
