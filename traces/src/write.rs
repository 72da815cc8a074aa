//! Writing a trace to Parquet.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use polars::prelude::*;

use crate::error::{Problem, TraceError};
use crate::model::{Metadata, Trace};
use crate::schema::KEY_PREFIX;
use crate::table::{Row, to_rows};

/// The metadata as `(key, value)` pairs, keys with the `fikit.` prefix, in the
/// order of [`crate::schema::METADATA_KEYS`].
pub fn metadata_pairs(meta: &Metadata) -> Vec<(String, String)> {
    let d = &meta.device;
    let command_line =
        serde_json::to_string(&meta.command_line).expect("a list of strings always serializes");
    [
        ("format_version", meta.format_version.to_string()),
        ("job_name", meta.job_name.clone()),
        ("priority", meta.priority.to_string()),
        ("pid", meta.pid.to_string()),
        ("command_line", command_line),
        ("host", meta.host.clone()),
        ("gpu_name", d.name.clone()),
        ("sm_count", d.sm_count.to_string()),
        ("max_threads_per_sm", d.max_threads_per_sm.to_string()),
        ("max_registers_per_sm", d.max_registers_per_sm.to_string()),
        (
            "max_shared_memory_per_sm",
            d.max_shared_memory_per_sm.to_string(),
        ),
        ("max_blocks_per_sm", d.max_blocks_per_sm.to_string()),
        ("driver_version", meta.driver_version.clone()),
        ("cuda_version", meta.cuda_version.clone()),
        (
            "cuda_version_source",
            meta.cuda_version_source
                .map(|s| s.as_str().to_string())
                .unwrap_or_default(),
        ),
        ("cupti_version", meta.cupti_version.to_string()),
        ("clock_offset_ns", meta.clock_offset_ns.to_string()),
        ("dropped_records", meta.dropped_records.to_string()),
        ("capture_complete", meta.capture_complete.to_string()),
        ("api_recording", meta.api_recording.as_str().to_string()),
        ("producer", meta.producer.clone()),
        (
            "characterization",
            meta.characterization
                .as_ref()
                .map(|c| serde_json::to_string(c).expect("a characterization always serializes"))
                .unwrap_or_default(),
        ),
    ]
    .into_iter()
    // An optional key without a value is left out.
    .filter(|(k, _)| match *k {
        "cuda_version_source" => meta.cuda_version_source.is_some(),
        "characterization" => meta.characterization.is_some(),
        _ => true,
    })
    .map(|(k, v)| (format!("{KEY_PREFIX}{k}"), v))
    .collect()
}

fn col<'a, T, F>(rows: &'a [Row], name: &str, f: F) -> Column
where
    F: Fn(&'a Row) -> Option<T>,
    Series: NamedFrom<Vec<Option<T>>, [Option<T>]>,
{
    let values: Vec<Option<T>> = rows.iter().map(f).collect();
    Series::new(name.into(), values).into_column()
}

/// The event table of a trace as a Polars data frame, columns in the order of
/// [`crate::schema::COLUMNS`], then
/// [`crate::schema::SHARED_CONFIG_COLUMN`] where a kernel has its figure,
/// then [`crate::schema::METRIC_COLUMNS`] where the trace has metrics.
pub fn to_dataframe(trace: &Trace) -> Result<DataFrame, PolarsError> {
    let rows = to_rows(trace);
    let mut columns = vec![
        col(&rows, "kind", |r| Some(r.kind)),
        col(&rows, "start_ns", |r| Some(r.start_ns)),
        col(&rows, "end_ns", |r| Some(r.end_ns)),
        col(&rows, "device", |r| r.device),
        col(&rows, "context", |r| r.context),
        col(&rows, "stream", |r| r.stream),
        col(&rows, "correlation_id", |r| Some(r.correlation_id)),
        col(&rows, "name", |r| r.name.as_deref()),
        col(&rows, "demangled_name", |r| r.demangled_name.as_deref()),
        col(&rows, "grid_x", |r| r.grid.map(|g| g[0])),
        col(&rows, "grid_y", |r| r.grid.map(|g| g[1])),
        col(&rows, "grid_z", |r| r.grid.map(|g| g[2])),
        col(&rows, "block_x", |r| r.block.map(|b| b[0])),
        col(&rows, "block_y", |r| r.block.map(|b| b[1])),
        col(&rows, "block_z", |r| r.block.map(|b| b[2])),
        col(&rows, "registers_per_thread", |r| r.registers_per_thread),
        col(&rows, "static_shared_bytes", |r| r.static_shared_bytes),
        col(&rows, "dynamic_shared_bytes", |r| r.dynamic_shared_bytes),
        col(&rows, "kernel_key", |r| r.kernel_key),
        col(&rows, "bytes", |r| r.bytes),
        col(&rows, "copy_kind", |r| r.copy_kind),
        col(&rows, "sync_kind", |r| r.sync_kind),
        col(&rows, "api_domain", |r| r.api_domain),
        col(&rows, "thread_id", |r| r.thread_id),
        col(&rows, "launch_start_ns", |r| r.launch.map(|l| l.start_ns)),
        col(&rows, "launch_end_ns", |r| r.launch.map(|l| l.end_ns)),
        col(&rows, "launch_thread_id", |r| r.launch.map(|l| l.thread_id)),
    ];
    if trace
        .kernels
        .iter()
        .any(|k| k.shared_config_bytes.is_some())
    {
        let c = &crate::schema::SHARED_CONFIG_COLUMN;
        columns.push(col(&rows, c.name, |r| r.shared_config_bytes));
    }
    if !trace.kernel_metrics.is_empty() {
        let m = |r: &Row| r.kernel_key.and_then(|k| trace.kernel_metrics.get(&k));
        columns.push(col(&rows, "metric_dram_read_bytes", |r| {
            m(r).map(|m| m.dram_read_bytes)
        }));
        columns.push(col(&rows, "metric_dram_write_bytes", |r| {
            m(r).map(|m| m.dram_write_bytes)
        }));
        columns.push(col(&rows, "metric_sm_issue_bp", |r| {
            m(r).and_then(|m| m.sm_issue_bp)
        }));
        columns.push(col(&rows, crate::schema::METRIC_L2_COLUMN.name, |r| {
            m(r).and_then(|m| m.l2_bytes)
        }));
    }
    DataFrame::new(rows.len(), columns)
}

/// Writes `trace` to `path` as a Parquet file (zstd-compressed), with the
/// metadata as file-level key/value pairs. The file is written to a temporary
/// name beside `path` and renamed into place, so a failed write never leaves a
/// half-written trace under the final name.
pub fn write_trace(path: &Path, trace: &Trace) -> Result<(), TraceError> {
    let mut df =
        to_dataframe(trace).map_err(|e| TraceError::new(path, Problem::Parquet(e.to_string())))?;
    write_dataframe(path, &mut df, metadata_pairs(&trace.meta))
}

/// Writes any data frame with the given file-level key/value metadata, the way
/// [`write_trace`] does. Tests use it to build malformed traces.
pub fn write_dataframe(
    path: &Path,
    df: &mut DataFrame,
    metadata: Vec<(String, String)>,
) -> Result<(), TraceError> {
    let err = |p: Problem| TraceError::new(path, p);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".partial");
    let tmp = std::path::PathBuf::from(tmp);
    let file = File::create(&tmp).map_err(|e| err(Problem::Io(e)))?;
    let mut out = BufWriter::new(file);
    let result = ParquetWriter::new(&mut out)
        .with_compression(ParquetCompression::Zstd(None))
        .with_key_value_metadata(Some(KeyValueMetadata::from_static(metadata)))
        .finish(df)
        .map_err(|e| Problem::Parquet(e.to_string()))
        .and_then(|_| out.flush().map_err(Problem::Io))
        .and_then(|_| out.get_ref().sync_all().map_err(Problem::Io));
    drop(out);
    match result {
        Ok(()) => std::fs::rename(&tmp, path).map_err(|e| err(Problem::Io(e))),
        Err(p) => {
            let _ = std::fs::remove_file(&tmp);
            Err(err(p))
        }
    }
}

/// Writes data frames of one schema one after another into one Parquet file
/// (zstd; `metadata` as file-level key/value pairs), holding one frame at a
/// time: a table larger than memory is written piece by piece. Like
/// [`write_dataframe`], through a temporary name renamed into place.
pub fn write_dataframes<I>(
    path: &Path,
    schema: &Schema,
    frames: I,
    metadata: Vec<(String, String)>,
) -> Result<u64, TraceError>
where
    I: IntoIterator<Item = Result<DataFrame, TraceError>>,
{
    let err = |p: Problem| TraceError::new(path, p);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".partial");
    let tmp = std::path::PathBuf::from(tmp);
    let file = File::create(&tmp).map_err(|e| err(Problem::Io(e)))?;
    let result = (|| -> Result<u64, TraceError> {
        let parquet = |e: PolarsError| err(Problem::Parquet(e.to_string()));
        let mut writer = ParquetWriter::new(BufWriter::new(file))
            .with_compression(ParquetCompression::Zstd(None))
            .with_key_value_metadata(Some(KeyValueMetadata::from_static(metadata)))
            .batched(schema)
            .map_err(parquet)?;
        let mut rows = 0u64;
        for df in frames {
            let df = df?;
            rows += df.height() as u64;
            writer.write_batch(&df).map_err(parquet)?;
        }
        writer.finish().map_err(parquet)?;
        Ok(rows)
    })();
    match result {
        Ok(rows) => {
            std::fs::rename(&tmp, path).map_err(|e| err(Problem::Io(e)))?;
            Ok(rows)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}
