//! Reading and validating a trace.

use std::collections::{BTreeMap, HashMap};
use std::io::Cursor;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::Once;
use std::sync::atomic::{AtomicUsize, Ordering};

use polars::prelude::*;

use crate::error::{Problem, TraceError};
use crate::model::{
    ApiCall, ApiDomain, ApiRecording, Characterization, CopyKind, DeviceInfo, FORMAT_VERSION,
    HostCall, Kernel, KernelMetrics, MemOp, Metadata, Placement, Sync, SyncKind, Trace,
    VersionSource,
};
use crate::schema::{self, API, COLUMNS, ColumnType, KERNEL, KEY_PREFIX, MEMCPY, MEMSET, SYNC};

/// The most SMs a trace's device may have: several times any GPU's (an
/// H200 has 132, a B200 148), so that a corrupt count is an error, not a
/// GPU the MPS model fills with thousands of SMs.
pub const MAX_SM_COUNT: u32 = 1024;

mod footer;
mod pages;

const MAGIC: &[u8; 4] = b"PAR1";

/// A trace's timestamps lie in `-MAX_TIMESTAMP_NS..MAX_TIMESTAMP_NS`, ns:
/// 2^62 is 146 years either side of the clock's zero (CUPTI's clock counts from the Unix epoch: 2026 is
/// about 1.8·10^18 ns). Within it, the difference of any two timestamps (a
/// duration, a gap, a delay) fits an `i64`, so nothing computed from a trace
/// overflows.
pub const MAX_TIMESTAMP_NS: i64 = 1 << 62;

/// Why `ns` cannot be a trace's time ([`MAX_TIMESTAMP_NS`]), or `None`: the
/// reader's check, for importers to make on their input's events.
pub fn timestamp_problem(ns: i64) -> Option<String> {
    (!(-MAX_TIMESTAMP_NS..MAX_TIMESTAMP_NS).contains(&ns)).then(|| {
        format!(
            "{ns} ns is outside -2^62 to 2^62 ns (146 years either side of \
             the clock's zero), the range a trace's times may take"
        )
    })
}

/// Reads and validates the trace at `path`.
///
/// Checks, in order: the file is a complete Parquet file; it carries fikit
/// metadata of a supported format version with every key well-typed; every
/// column exists with its type; every row has the cells its kind needs, a known
/// kind and `end_ns >= start_ns`; no kernel starts before the previous kernel on
/// its stream ends. The first problem found is returned; nothing panics.
pub fn read_trace(path: &Path) -> Result<Trace, TraceError> {
    let bytes = std::fs::read(path).map_err(|e| TraceError::new(path, Problem::Io(e)))?;
    parse_trace(&bytes).map_err(|p| TraceError::new(path, p))
}

/// Reads only the metadata of the trace at `path`: the file's tail (the
/// Parquet footer), not its events. A file whose tail does not parse is
/// read whole, so its error is the one [`read_trace`] gives.
pub fn read_metadata(path: &Path) -> Result<Metadata, TraceError> {
    if let Ok(Some(tail)) = read_tail(path)
        && let Ok(meta) = open(&tail).and_then(|mut r| metadata(&mut r))
    {
        return Ok(meta);
    }
    let bytes = std::fs::read(path).map_err(|e| TraceError::new(path, Problem::Io(e)))?;
    let mut reader = open(&bytes).map_err(|p| TraceError::new(path, p))?;
    metadata(&mut reader).map_err(|p| TraceError::new(path, p))
}

/// The magic bytes, then the file's footer, its length and the closing magic
/// bytes: a Parquet file without its column data, enough to decode the
/// footer. `None` when the file is too short or does not end like Parquet.
fn read_tail(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    if len < 12 {
        return Ok(None);
    }
    let mut end = [0u8; 8];
    f.seek(SeekFrom::End(-8))?;
    f.read_exact(&mut end)?;
    if &end[4..] != MAGIC {
        return Ok(None);
    }
    let footer = u64::from(u32::from_le_bytes([end[0], end[1], end[2], end[3]]));
    if footer + 12 > len {
        return Ok(None);
    }
    let mut buf = Vec::with_capacity(footer as usize + 12);
    buf.extend_from_slice(MAGIC);
    buf.resize(footer as usize + 12, 0);
    f.seek(SeekFrom::End(-(footer as i64 + 8)))?;
    f.read_exact(&mut buf[4..])?;
    Ok(Some(buf))
}

/// Parses and validates a trace held in memory.
pub fn parse_trace(bytes: &[u8]) -> Result<Trace, Problem> {
    let (reader, meta) = checked(bytes)?;
    let df = guarded(|| {
        reader
            .finish()
            .map_err(|e| Problem::Truncated(e.to_string()))
    })?;
    let (kernels, memops, api_calls, syncs) = events(&df)?;
    let kernel_metrics = kernel_metrics(&df)?;
    let mut trace = Trace {
        meta,
        kernels,
        memops,
        api_calls,
        syncs,
        kernel_metrics,
    };
    check_streams(&df, &trace)?;
    trace.sort();
    Ok(trace)
}

/// Runs the checks [`parse_trace`] makes before Polars decodes any column
/// data: the file's framing, the footer's Thrift structure, fikit's
/// metadata, each row group's value counts and every page header (see
/// `read/pages.rs`). Cheap next to decoding; public so that its cost can be
/// measured (`cargo bench -p fikit-trace`).
pub fn check_structure(bytes: &[u8]) -> Result<Metadata, Problem> {
    checked(bytes).map(|(_, meta)| meta)
}

/// Reads any flat Parquet table fikit writes (a trace, or the rows of a
/// sweep shard) and its file-level key/value metadata, with the checks
/// [`read_trace`] makes before Polars decodes anything (framing, footer,
/// row-group counts, page headers): a corrupt file is an error, never a
/// panic or an abort.
pub fn read_table(path: &Path) -> Result<(DataFrame, Vec<(String, String)>), TraceError> {
    let bytes = std::fs::read(path).map_err(|e| TraceError::new(path, Problem::Io(e)))?;
    parse_table(&bytes).map_err(|p| TraceError::new(path, p))
}

/// [`read_table`] of bytes in memory.
pub fn parse_table(bytes: &[u8]) -> Result<(DataFrame, Vec<(String, String)>), Problem> {
    let mut reader = open(bytes)?;
    let md = file_metadata(&mut reader)?;
    check_row_groups(&md)?;
    pages::check(bytes, &md).map_err(Problem::Truncated)?;
    let kv = md
        .key_value_metadata()
        .iter()
        .flatten()
        .map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default()))
        .collect();
    let df = guarded(|| {
        reader
            .finish()
            .map_err(|e| Problem::Truncated(e.to_string()))
    })?;
    Ok((df, kv))
}

/// A Parquet reader over bytes in memory.
type Reader<'a> = ParquetReader<Cursor<&'a [u8]>>;

/// [`check_structure`], keeping the reader for decoding.
fn checked(bytes: &[u8]) -> Result<(Reader<'_>, Metadata), Problem> {
    let mut reader = open(bytes)?;
    let md = file_metadata(&mut reader)?;
    let meta = metadata_of(&md)?;
    // Page headers Polars would trust: checked before it decodes any.
    pages::check(bytes, &md).map_err(Problem::Truncated)?;
    Ok((reader, meta))
}

fn open(bytes: &[u8]) -> Result<ParquetReader<Cursor<&[u8]>>, Problem> {
    if bytes.is_empty() {
        return Err(Problem::Empty);
    }
    if !bytes.starts_with(MAGIC) {
        return Err(Problem::NotParquet);
    }
    if bytes.len() < 12 || !bytes.ends_with(MAGIC) {
        return Err(Problem::Truncated(format!(
            "{} bytes, and the footer's closing `PAR1` is missing: the file was cut short",
            bytes.len()
        )));
    }
    footer::check(bytes).map_err(Problem::Truncated)?;
    let mut reader = ParquetReader::new(Cursor::new(bytes));
    guarded(|| {
        reader
            .get_metadata()
            .map(|_| ())
            .map_err(|e| Problem::Truncated(e.to_string()))
    })?;
    Ok(reader)
}

/// Guarded Polars calls in progress, on any thread.
static GUARDED: AtomicUsize = AtomicUsize::new(0);

/// Runs a Polars call on file bytes and turns a panic into
/// [`Problem::Truncated`]. Polars' Parquet decoders assert on some corrupt
/// inputs (a fuzzer found, e.g., `thrift bool field` in the footer decoder)
/// instead of returning an error; a corrupt file must get an error, not
/// abort the program. While a guarded call runs, panic messages are not
/// printed (the decoding may run on Polars' worker threads): the error says
/// what failed. Other panics print as before.
fn guarded<T>(f: impl FnOnce() -> Result<T, Problem>) -> Result<T, Problem> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if GUARDED.load(Ordering::SeqCst) == 0 {
                previous(info);
            }
        }));
    });
    GUARDED.fetch_add(1, Ordering::SeqCst);
    let result = std::panic::catch_unwind(AssertUnwindSafe(f));
    GUARDED.fetch_sub(1, Ordering::SeqCst);
    result.unwrap_or_else(|payload| {
        let why = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown failure".into());
        Err(Problem::Truncated(format!(
            "the Parquet decoder failed: {why}"
        )))
    })
}

/// The Parquet footer Polars decoded.
fn file_metadata(
    reader: &mut ParquetReader<Cursor<&[u8]>>,
) -> Result<std::sync::Arc<polars_parquet::parquet::metadata::FileMetadata>, Problem> {
    guarded(|| {
        reader
            .get_metadata()
            .cloned()
            .map_err(|e| Problem::Truncated(e.to_string()))
    })
}

fn metadata(reader: &mut ParquetReader<Cursor<&[u8]>>) -> Result<Metadata, Problem> {
    let md = file_metadata(reader)?;
    metadata_of(&md)
}

/// Checks a decoded footer's row-group counts before Polars trusts them.
fn check_row_groups(md: &polars_parquet::parquet::metadata::FileMetadata) -> Result<(), Problem> {
    // Every column of a trace is flat: each chunk holds one value (or null)
    // per row of its row group. Polars trusts these counts when it sizes its
    // buffers; inconsistent ones (fuzzed files) made it ask for 2^61 bytes,
    // and a failed allocation aborts the process.
    for (i, rg) in md.row_groups.iter().enumerate() {
        let rows = rg.num_rows();
        if rows > i32::MAX as usize {
            return Err(Problem::Truncated(format!(
                "row group {i} claims {rows} rows"
            )));
        }
        for c in rg.parquet_columns() {
            if usize::try_from(c.num_values()).ok() != Some(rows) {
                return Err(Problem::Truncated(format!(
                    "row group {i} has {rows} rows, but a column chunk claims {} values",
                    c.num_values()
                )));
            }
        }
    }
    Ok(())
}

/// The trace metadata of a decoded footer, after checking its row-group counts.
fn metadata_of(md: &polars_parquet::parquet::metadata::FileMetadata) -> Result<Metadata, Problem> {
    check_row_groups(md)?;
    let kv: HashMap<&str, &str> = md
        .key_value_metadata()
        .iter()
        .flatten()
        .filter_map(|kv| {
            let key = kv.key.strip_prefix(KEY_PREFIX)?;
            Some((key, kv.value.as_deref().unwrap_or("")))
        })
        .collect();
    let version = kv.get("format_version").ok_or(Problem::NotATrace)?;
    if version.parse::<u32>().ok() != Some(FORMAT_VERSION) {
        return Err(Problem::Version {
            found: version.to_string(),
            supported: FORMAT_VERSION,
        });
    }
    let m = Meta(&kv);
    Ok(Metadata {
        format_version: FORMAT_VERSION,
        job_name: m.string("job_name").and_then(|n| {
            if n.trim().is_empty() {
                Err(Problem::key(
                    &format!("{KEY_PREFIX}job_name"),
                    "empty: a job needs a name (reports and options name jobs by it)",
                ))
            } else {
                Ok(n)
            }
        })?,
        priority: m
            .number::<u8>("priority", "an integer from 0 to 9")
            .and_then(|p| {
                if p <= 9 {
                    Ok(p)
                } else {
                    Err(Problem::key(
                        "fikit.priority",
                        format!("expected an integer from 0 to 9, found {p}"),
                    ))
                }
            })?,
        pid: m.number("pid", "an unsigned 32-bit integer")?,
        command_line: {
            let raw = m.raw("command_line")?;
            serde_json::from_str(raw).map_err(|_| {
                Problem::key(
                    "fikit.command_line",
                    format!("expected a JSON list of strings, found {raw:?}"),
                )
            })?
        },
        host: m.string("host")?,
        device: DeviceInfo {
            name: m.string("gpu_name")?,
            sm_count: m
                .number::<u32>("sm_count", "an unsigned 32-bit integer")
                .and_then(|n| {
                    if n <= MAX_SM_COUNT {
                        Ok(n)
                    } else {
                        Err(Problem::key(
                            "fikit.sm_count",
                            format!("expected 0 (unknown) to {MAX_SM_COUNT}, found {n}"),
                        ))
                    }
                })?,
            max_threads_per_sm: m.number("max_threads_per_sm", "an unsigned 32-bit integer")?,
            max_registers_per_sm: m.number("max_registers_per_sm", "an unsigned 32-bit integer")?,
            max_shared_memory_per_sm: m
                .number("max_shared_memory_per_sm", "an unsigned 32-bit integer")?,
            max_blocks_per_sm: m.number("max_blocks_per_sm", "an unsigned 32-bit integer")?,
        },
        driver_version: m.string("driver_version")?,
        cuda_version: m.string("cuda_version")?,
        // Optional: traces written before it existed lack it.
        cuda_version_source: match kv.get("cuda_version_source") {
            None => None,
            Some(raw) => Some(VersionSource::parse(raw).ok_or_else(|| {
                Problem::key(
                    "fikit.cuda_version_source",
                    format!("expected runtime or driver, found {raw:?}"),
                )
            })?),
        },
        cupti_version: m.number("cupti_version", "an unsigned 32-bit integer")?,
        clock_offset_ns: m.number("clock_offset_ns", "a signed 64-bit integer")?,
        dropped_records: m.number("dropped_records", "an unsigned 64-bit integer")?,
        capture_complete: m.number("capture_complete", "`true` or `false`")?,
        api_recording: {
            let raw = m.raw("api_recording")?;
            ApiRecording::parse(raw).ok_or_else(|| {
                Problem::key(
                    "fikit.api_recording",
                    format!("expected none, selected or all, found {raw:?}"),
                )
            })?
        },
        producer: m.string("producer")?,
        characterization: match kv.get("characterization") {
            None => None,
            Some(raw) => {
                let key = "fikit.characterization";
                let c: Characterization = serde_json::from_str(raw).map_err(|e| {
                    Problem::key(
                        key,
                        format!("expected fikit-profile's characterization JSON: {e}"),
                    )
                })?;
                c.check(&m.string("gpu_name")?)
                    .map_err(|e| Problem::key(key, e))?;
                Some(c)
            }
        },
    })
}

struct Meta<'a>(&'a HashMap<&'a str, &'a str>);

impl Meta<'_> {
    fn raw(&self, key: &str) -> Result<&str, Problem> {
        self.0
            .get(key)
            .copied()
            .ok_or_else(|| Problem::key(&format!("{KEY_PREFIX}{key}"), "missing"))
    }

    fn string(&self, key: &str) -> Result<String, Problem> {
        self.raw(key).map(str::to_string)
    }

    fn number<T: std::str::FromStr>(&self, key: &str, expected: &str) -> Result<T, Problem> {
        let raw = self.raw(key)?;
        raw.parse().map_err(|_| {
            Problem::key(
                &format!("{KEY_PREFIX}{key}"),
                format!("expected {expected}, found {raw:?}"),
            )
        })
    }
}

/// The columns of a data frame, checked against the schema and taken out as vectors.
struct Columns<'a> {
    df: &'a DataFrame,
}

impl<'a> Columns<'a> {
    fn new(df: &'a DataFrame) -> Result<Self, Problem> {
        for c in COLUMNS {
            check_column(df, c)?;
        }
        Ok(Columns { df })
    }

    fn col(&self, name: &str) -> &'a polars::prelude::Column {
        self.df.column(name).expect("checked in Columns::new")
    }

    // The cells are read row by row, in order, straight from the data
    // frame's chunks: no copy of a column is made (on a trace of millions of
    // rows, copying the 24 columns as vectors took more memory than the
    // data frame itself).

    fn str(&self, name: &str) -> Cells<'a, &'a str> {
        Box::new(self.col(name).str().expect("checked").iter())
    }

    fn i64(&self, name: &str) -> Cells<'a, i64> {
        Box::new(self.col(name).i64().expect("checked").iter())
    }

    fn u32(&self, name: &str) -> Cells<'a, u32> {
        Box::new(self.col(name).u32().expect("checked").iter())
    }

    fn u64(&self, name: &str) -> Cells<'a, u64> {
        Box::new(self.col(name).u64().expect("checked").iter())
    }

    /// An optional column's cells, all null where the file has none.
    fn optional_u32(&self, c: &schema::Column) -> Result<Cells<'a, u32>, Problem> {
        if self.df.column(c.name).is_err() {
            return Ok(Box::new(std::iter::repeat(None)));
        }
        check_column(self.df, c)?;
        Ok(Box::new(
            self.df
                .column(c.name)
                .expect("checked")
                .u32()
                .expect("checked")
                .iter(),
        ))
    }
}

/// Checks that `df` has column `c` of its schema type.
fn check_column(df: &DataFrame, c: &schema::Column) -> Result<(), Problem> {
    let column = df
        .column(c.name)
        .map_err(|_| Problem::column(c.name, "missing"))?;
    let expected = match c.ty {
        ColumnType::Str => DataType::String,
        ColumnType::I64 => DataType::Int64,
        ColumnType::U32 => DataType::UInt32,
        ColumnType::U64 => DataType::UInt64,
    };
    if column.dtype() != &expected {
        return Err(Problem::column(
            c.name,
            format!(
                "expected type {}, found {}",
                c.ty.polars_name(),
                column.dtype()
            ),
        ));
    }
    Ok(())
}

/// A column's cells in row order.
type Cells<'a, T> = Box<dyn Iterator<Item = Option<T>> + 'a>;

type Events = (Vec<Kernel>, Vec<MemOp>, Vec<ApiCall>, Vec<Sync>);

/// The event columns' cells, read one row at a time.
struct EventColumns<'a> {
    kind: Cells<'a, &'a str>,
    start: Cells<'a, i64>,
    end: Cells<'a, i64>,
    device: Cells<'a, u32>,
    context: Cells<'a, u32>,
    stream: Cells<'a, u32>,
    corr: Cells<'a, u32>,
    name: Cells<'a, &'a str>,
    demangled: Cells<'a, &'a str>,
    grid: [Cells<'a, u32>; 3],
    block: [Cells<'a, u32>; 3],
    regs: Cells<'a, u32>,
    sshared: Cells<'a, u32>,
    dshared: Cells<'a, u32>,
    key: Cells<'a, u64>,
    bytes: Cells<'a, u64>,
    copy_kind: Cells<'a, &'a str>,
    sync_kind: Cells<'a, &'a str>,
    domain: Cells<'a, &'a str>,
    thread: Cells<'a, u64>,
    lstart: Cells<'a, i64>,
    lend: Cells<'a, i64>,
    lthread: Cells<'a, u64>,
    shared_config: Cells<'a, u32>,
}

/// One row's cells.
struct Row<'a> {
    kind: Option<&'a str>,
    start: Option<i64>,
    end: Option<i64>,
    device: Option<u32>,
    context: Option<u32>,
    stream: Option<u32>,
    corr: Option<u32>,
    name: Option<&'a str>,
    demangled: Option<&'a str>,
    grid: [Option<u32>; 3],
    block: [Option<u32>; 3],
    regs: Option<u32>,
    sshared: Option<u32>,
    dshared: Option<u32>,
    key: Option<u64>,
    bytes: Option<u64>,
    copy_kind: Option<&'a str>,
    sync_kind: Option<&'a str>,
    domain: Option<&'a str>,
    thread: Option<u64>,
    lstart: Option<i64>,
    lend: Option<i64>,
    lthread: Option<u64>,
    shared_config: Option<u32>,
}

impl<'a> EventColumns<'a> {
    fn new(c: &Columns<'a>) -> Result<Self, Problem> {
        Ok(EventColumns {
            kind: c.str("kind"),
            start: c.i64("start_ns"),
            end: c.i64("end_ns"),
            device: c.u32("device"),
            context: c.u32("context"),
            stream: c.u32("stream"),
            corr: c.u32("correlation_id"),
            name: c.str("name"),
            demangled: c.str("demangled_name"),
            grid: [c.u32("grid_x"), c.u32("grid_y"), c.u32("grid_z")],
            block: [c.u32("block_x"), c.u32("block_y"), c.u32("block_z")],
            regs: c.u32("registers_per_thread"),
            sshared: c.u32("static_shared_bytes"),
            dshared: c.u32("dynamic_shared_bytes"),
            key: c.u64("kernel_key"),
            bytes: c.u64("bytes"),
            copy_kind: c.str("copy_kind"),
            sync_kind: c.str("sync_kind"),
            domain: c.str("api_domain"),
            thread: c.u64("thread_id"),
            lstart: c.i64("launch_start_ns"),
            lend: c.i64("launch_end_ns"),
            lthread: c.u64("launch_thread_id"),
            shared_config: c.optional_u32(&schema::SHARED_CONFIG_COLUMN)?,
        })
    }

    /// The next row's cells (every column advances one row, whatever the kind).
    fn next_row(&mut self) -> Row<'a> {
        Row {
            kind: self.kind.next().flatten(),
            start: self.start.next().flatten(),
            end: self.end.next().flatten(),
            device: self.device.next().flatten(),
            context: self.context.next().flatten(),
            stream: self.stream.next().flatten(),
            corr: self.corr.next().flatten(),
            name: self.name.next().flatten(),
            demangled: self.demangled.next().flatten(),
            grid: [
                self.grid[0].next().flatten(),
                self.grid[1].next().flatten(),
                self.grid[2].next().flatten(),
            ],
            block: [
                self.block[0].next().flatten(),
                self.block[1].next().flatten(),
                self.block[2].next().flatten(),
            ],
            regs: self.regs.next().flatten(),
            sshared: self.sshared.next().flatten(),
            dshared: self.dshared.next().flatten(),
            key: self.key.next().flatten(),
            bytes: self.bytes.next().flatten(),
            copy_kind: self.copy_kind.next().flatten(),
            sync_kind: self.sync_kind.next().flatten(),
            domain: self.domain.next().flatten(),
            thread: self.thread.next().flatten(),
            lstart: self.lstart.next().flatten(),
            lend: self.lend.next().flatten(),
            lthread: self.lthread.next().flatten(),
            shared_config: self.shared_config.next().flatten(),
        }
    }
}

/// The cells every row needs, checked.
struct Common {
    start_ns: i64,
    end_ns: i64,
    correlation_id: u32,
    launch: Option<HostCall>,
}

/// Where a row is, for its problems.
#[derive(Clone, Copy)]
struct At {
    row: usize,
    kind: &'static str,
}

impl At {
    fn problem(self, column: Option<&str>, message: impl Into<String>) -> Problem {
        Problem::row(self.row, Some(self.kind), column, message)
    }

    /// A cell the row's kind requires.
    #[inline]
    fn need<T>(self, v: Option<T>, column: &str) -> Result<T, Problem> {
        v.ok_or_else(|| {
            self.problem(
                Some(column),
                format!(
                    "null, but {} {} row needs it",
                    if self.kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
                        "an"
                    } else {
                        "a"
                    },
                    self.kind
                ),
            )
        })
    }
}

fn events(df: &DataFrame) -> Result<Events, Problem> {
    let c = Columns::new(df)?;
    let mut columns = EventColumns::new(&c)?;

    // Exact capacities: grown by doubling, the vectors of a large trace held
    // up to twice the memory their events need.
    let mut counts = [0usize; 5];
    for k in c.str("kind").flatten() {
        if let Some(i) = schema::KINDS.iter().position(|x| *x == k) {
            counts[i] += 1;
        }
    }
    let mut out: Events = (
        Vec::with_capacity(counts[0]),
        Vec::with_capacity(counts[1] + counts[2]),
        Vec::with_capacity(counts[3]),
        Vec::with_capacity(counts[4]),
    );
    for row in 0..df.height() {
        let cells = columns.next_row();
        let at = row_kind(row, cells.kind)?;
        let common = common(at, &cells)?;
        push_event(&mut out, at, cells, common)?;
    }
    Ok(out)
}

/// The kind of row `row`, one of [`schema::KINDS`].
fn row_kind(row: usize, kind: Option<&str>) -> Result<At, Problem> {
    let Some(k) = kind else {
        return Err(Problem::row(
            row,
            None,
            Some("kind"),
            "null, expected one of kernel, memcpy, memset, api, sync",
        ));
    };
    let kind = schema::KINDS
        .iter()
        .find(|x| **x == k)
        .copied()
        .ok_or_else(|| {
            Problem::row(
                row,
                None,
                Some("kind"),
                format!("unknown kind {k:?}, expected one of kernel, memcpy, memset, api, sync"),
            )
        })?;
    Ok(At { row, kind })
}

/// Checks the cells every row has: times in range and in order, the
/// correlation id, the launch columns all set or all null, and the
/// shared-memory configuration only on kernels.
fn common(at: At, r: &Row) -> Result<Common, Problem> {
    let s = at.need(r.start, "start_ns")?;
    let e = at.need(r.end, "end_ns")?;
    for (v, col) in [(s, "start_ns"), (e, "end_ns")]
        .into_iter()
        .chain(r.lstart.map(|v| (v, "launch_start_ns")))
        .chain(r.lend.map(|v| (v, "launch_end_ns")))
    {
        if let Some(why) = timestamp_problem(v) {
            return Err(at.problem(Some(col), why));
        }
    }
    if e < s {
        return Err(at.problem(
            None,
            format!(
                "end_ns {e} is before start_ns {s} (negative duration {} ns)",
                e - s
            ),
        ));
    }
    let correlation_id = at.need(r.corr, "correlation_id")?;
    if r.shared_config.is_some() && at.kind != KERNEL {
        return Err(at.problem(
            Some(schema::SHARED_CONFIG_COLUMN.name),
            "set, but only kernel rows have a shared-memory configuration",
        ));
    }
    let launch = match (r.lstart, r.lend, r.lthread) {
        (Some(ls), Some(le), Some(lt)) => {
            if le < ls {
                return Err(at.problem(
                    Some("launch_end_ns"),
                    format!("launch_end_ns {le} is before launch_start_ns {ls}"),
                ));
            }
            Some(HostCall {
                start_ns: ls,
                end_ns: le,
                thread_id: lt,
            })
        }
        (None, None, None) => None,
        _ => {
            return Err(at.problem(
                Some("launch_start_ns"),
                "launch_start_ns, launch_end_ns and launch_thread_id must be all null or all set",
            ));
        }
    };
    Ok(Common {
        start_ns: s,
        end_ns: e,
        correlation_id,
        launch,
    })
}

/// Makes the event of a row whose common cells are checked, and adds it to `out`.
fn push_event(out: &mut Events, at: At, r: Row, c: Common) -> Result<(), Problem> {
    let placement = |r: &Row| -> Result<Placement, Problem> {
        Ok(Placement {
            device: at.need(r.device, "device")?,
            context: at.need(r.context, "context")?,
            stream: at.need(r.stream, "stream")?,
        })
    };
    match at.kind {
        KERNEL => {
            let placement = placement(&r)?;
            let grid = [
                at.need(r.grid[0], "grid_x")?,
                at.need(r.grid[1], "grid_y")?,
                at.need(r.grid[2], "grid_z")?,
            ];
            let block = [
                at.need(r.block[0], "block_x")?,
                at.need(r.block[1], "block_y")?,
                at.need(r.block[2], "block_z")?,
            ];
            if let Some((column, why)) = crate::model::launch_shape_problem(grid, block) {
                return Err(at.problem(Some(column), why));
            }
            out.0.push(Kernel {
                start_ns: c.start_ns,
                end_ns: c.end_ns,
                placement,
                correlation_id: c.correlation_id,
                name: at.need(r.name, "name")?.to_string(),
                demangled_name: at.need(r.demangled, "demangled_name")?.to_string(),
                grid,
                block,
                registers_per_thread: at.need(r.regs, "registers_per_thread")?,
                static_shared_bytes: at.need(r.sshared, "static_shared_bytes")?,
                dynamic_shared_bytes: at.need(r.dshared, "dynamic_shared_bytes")?,
                launch: c.launch,
                kernel_key: at.need(r.key, "kernel_key")?,
                shared_config_bytes: r.shared_config,
            });
        }
        MEMCPY | MEMSET => {
            let copy_kind = if at.kind == MEMCPY {
                let raw = at.need(r.copy_kind, "copy_kind")?;
                Some(CopyKind::parse(raw).ok_or_else(|| {
                    at.problem(
                        Some("copy_kind"),
                        format!(
                            "unknown copy kind {raw:?}, expected HtoD, DtoH, DtoD, HtoH, PtoP or other"
                        ),
                    )
                })?)
            } else {
                None
            };
            out.1.push(MemOp {
                start_ns: c.start_ns,
                end_ns: c.end_ns,
                placement: placement(&r)?,
                correlation_id: c.correlation_id,
                copy_kind,
                bytes: at.need(r.bytes, "bytes")?,
                launch: c.launch,
            });
        }
        API => {
            let raw = at.need(r.domain, "api_domain")?;
            out.2.push(ApiCall {
                domain: ApiDomain::parse(raw).ok_or_else(|| {
                    at.problem(
                        Some("api_domain"),
                        format!("unknown API domain {raw:?}, expected runtime or driver"),
                    )
                })?,
                name: at.need(r.name, "name")?.to_string(),
                start_ns: c.start_ns,
                end_ns: c.end_ns,
                thread_id: at.need(r.thread, "thread_id")?,
                correlation_id: c.correlation_id,
            });
        }
        SYNC => {
            let raw = at.need(r.sync_kind, "sync_kind")?;
            out.3.push(Sync {
                kind: SyncKind::parse(raw).ok_or_else(|| {
                    at.problem(
                        Some("sync_kind"),
                        format!("unknown synchronization kind {raw:?}"),
                    )
                })?,
                start_ns: c.start_ns,
                end_ns: c.end_ns,
                context: at.need(r.context, "context")?,
                stream: r.stream,
                thread_id: r.thread,
                correlation_id: c.correlation_id,
            });
        }
        _ => unreachable!("kinds are matched above"),
    }
    Ok(())
}

/// The metrics pass's figures per kernel key, from the optional
/// [`schema::METRIC_COLUMNS`] (none: an empty map): all three columns or
/// none, of their types (and [`schema::METRIC_L2_COLUMN`] where present),
/// set only on kernel rows, the two DRAM figures both set or both null on a
/// row and the SM and L2 figures only beside them, the same on every row of
/// a key, SM issue rate at most 100%.
fn kernel_metrics(df: &DataFrame) -> Result<BTreeMap<u64, KernelMetrics>, Problem> {
    let Some(first) = schema::METRIC_COLUMNS
        .iter()
        .find(|c| df.column(c.name).is_ok())
    else {
        return Ok(BTreeMap::new());
    };
    for c in schema::METRIC_COLUMNS {
        if df.column(c.name).is_err() {
            return Err(Problem::column(
                c.name,
                format!(
                    "missing beside {}: the metrics columns come all three or not at all",
                    first.name
                ),
            ));
        }
        check_column(df, c)?;
    }
    let cells = |name: &str| df.column(name).expect("checked above");
    let kinds = cells("kind").str().expect("checked").iter();
    let keys = cells("kernel_key").u64().expect("checked").iter();
    let read = cells("metric_dram_read_bytes")
        .u64()
        .expect("checked")
        .iter();
    let write = cells("metric_dram_write_bytes")
        .u64()
        .expect("checked")
        .iter();
    let sm = cells("metric_sm_issue_bp").u32().expect("checked").iter();
    let l2_col = schema::METRIC_L2_COLUMN;
    let l2: Vec<Option<u64>> = if df.column(l2_col.name).is_ok() {
        check_column(df, &l2_col)?;
        cells(l2_col.name).u64().expect("checked").iter().collect()
    } else {
        vec![None; df.height()]
    };
    let mut out: BTreeMap<u64, KernelMetrics> = BTreeMap::new();
    for (row, (((((kind, key), r), w), s), l2)) in kinds
        .zip(keys)
        .zip(read)
        .zip(write)
        .zip(sm)
        .zip(l2)
        .enumerate()
    {
        let m = match (r, w, s, l2) {
            (None, None, None, None) => continue,
            (Some(r), Some(w), s, l2) => KernelMetrics {
                dram_read_bytes: r,
                dram_write_bytes: w,
                sm_issue_bp: s,
                l2_bytes: l2,
            },
            _ => {
                return Err(Problem::row(
                    row,
                    kind,
                    Some("metric_dram_read_bytes"),
                    "the DRAM metrics must be both set or both null, and the SM and L2 figures set only beside them",
                ));
            }
        };
        let (Some(KERNEL), Some(key)) = (kind, key) else {
            return Err(Problem::row(
                row,
                kind,
                Some("metric_dram_read_bytes"),
                "metrics on a row that is no kernel",
            ));
        };
        if let Some(s) = m.sm_issue_bp.filter(|&s| s > 10_000) {
            return Err(Problem::row(
                row,
                kind,
                Some("metric_sm_issue_bp"),
                format!("{s} is over 10000 (100% of peak)"),
            ));
        }
        if let Some(first) = out.insert(key, m).filter(|first| *first != m) {
            return Err(Problem::row(
                row,
                kind,
                Some("metric_dram_read_bytes"),
                format!(
                    "kernel_key {key:#018x} has other metrics here than on an earlier row ({first:?}): a pass measures a key once"
                ),
            ));
        }
    }
    Ok(out)
}

/// No kernel may start before the previous kernel on its stream ended: kernels
/// of one stream run one after another.
fn check_streams(df: &DataFrame, trace: &Trace) -> Result<(), Problem> {
    // File row of each kernel, for the message: kernels are pushed in file order.
    let kinds = df.column("kind").expect("checked").str().expect("checked");
    let rows: Vec<usize> = kinds
        .iter()
        .enumerate()
        .filter(|(_, k)| *k == Some(KERNEL))
        .map(|(i, _)| i)
        .collect();
    let mut order: Vec<usize> = (0..trace.kernels.len()).collect();
    order.sort_by_key(|&i| {
        let k = &trace.kernels[i];
        (k.placement, k.start_ns, k.end_ns, rows[i])
    });
    for pair in order.windows(2) {
        let (a, b) = (&trace.kernels[pair[0]], &trace.kernels[pair[1]]);
        if a.placement == b.placement && b.start_ns < a.end_ns {
            return Err(Problem::row(
                rows[pair[1]],
                Some(KERNEL),
                Some("start_ns"),
                format!(
                    "starts at {} ns, before the previous kernel on device {} context {} stream {} (row {}) ends at {} ns",
                    b.start_ns,
                    b.placement.device,
                    b.placement.context,
                    b.placement.stream,
                    rows[pair[0]],
                    a.end_ns
                ),
            ));
        }
    }
    Ok(())
}
