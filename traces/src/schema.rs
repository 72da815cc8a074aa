//! How a trace lies in Parquet: one table of events with a `kind` column, and the
//! metadata as file-level key/value pairs. traces/README.md documents every
//! column and key; this module is the single source of their names and types.

/// The type of a column, as Parquet/Arrow stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// UTF-8 string.
    Str,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 32-bit integer.
    U32,
    /// Unsigned 64-bit integer.
    U64,
}

impl ColumnType {
    /// The name Polars gives the type, as error messages print it.
    pub fn polars_name(self) -> &'static str {
        match self {
            ColumnType::Str => "str",
            ColumnType::I64 => "i64",
            ColumnType::U32 => "u32",
            ColumnType::U64 => "u64",
        }
    }
}

/// One column of the event table.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// Column name.
    pub name: &'static str,
    /// Stored type.
    pub ty: ColumnType,
    /// The event kinds for which the column must hold a value; null for all others.
    pub kinds: &'static [&'static str],
}

/// `kind` of a kernel row.
pub const KERNEL: &str = "kernel";
/// `kind` of a memory-copy row.
pub const MEMCPY: &str = "memcpy";
/// `kind` of a memset row.
pub const MEMSET: &str = "memset";
/// `kind` of an API-call row.
pub const API: &str = "api";
/// `kind` of a synchronization row.
pub const SYNC: &str = "sync";

/// Every event kind, in the order the table stores ties.
pub const KINDS: [&str; 5] = [KERNEL, MEMCPY, MEMSET, API, SYNC];

const ALL: &[&str] = &KINDS;
const GPU_OPS: &[&str] = &[KERNEL, MEMCPY, MEMSET];
const ON_STREAM: &[&str] = &[KERNEL, MEMCPY, MEMSET];
const K: &[&str] = &[KERNEL];
const MEM: &[&str] = &[MEMCPY, MEMSET];
/// Columns that may be null on rows of any kind (launch calls not recorded, a
/// context-wide synchronization without a stream, a sync whose API call was not recorded).
const OPTIONAL: &[&str] = &[];

macro_rules! col {
    ($name:literal, $ty:ident, $kinds:expr) => {
        Column {
            name: $name,
            ty: ColumnType::$ty,
            kinds: $kinds,
        }
    };
}

/// The columns of trace format v1, in file order.
pub const COLUMNS: &[Column] = &[
    col!("kind", Str, ALL),
    col!("start_ns", I64, ALL),
    col!("end_ns", I64, ALL),
    col!("device", U32, GPU_OPS),
    col!("context", U32, &[KERNEL, MEMCPY, MEMSET, SYNC]),
    col!("stream", U32, ON_STREAM),
    col!("correlation_id", U32, ALL),
    col!("name", Str, &[KERNEL, API]),
    col!("demangled_name", Str, K),
    col!("grid_x", U32, K),
    col!("grid_y", U32, K),
    col!("grid_z", U32, K),
    col!("block_x", U32, K),
    col!("block_y", U32, K),
    col!("block_z", U32, K),
    col!("registers_per_thread", U32, K),
    col!("static_shared_bytes", U32, K),
    col!("dynamic_shared_bytes", U32, K),
    col!("kernel_key", U64, K),
    col!("bytes", U64, MEM),
    col!("copy_kind", Str, &[MEMCPY]),
    col!("sync_kind", Str, &[SYNC]),
    col!("api_domain", Str, &[API]),
    col!("thread_id", U64, &[API]),
    col!("launch_start_ns", I64, OPTIONAL),
    col!("launch_end_ns", I64, OPTIONAL),
    col!("launch_thread_id", U64, OPTIONAL),
];

/// Columns a trace may leave out altogether: the metrics pass's figures
/// (`fikit-profile --metrics`), written only when it ran, after
/// [`COLUMNS`]; all three or none. On kernel rows only, and there null for a
/// kernel key the pass did not measure (the SM figure also where the GPU
/// could not count it with the DRAM bytes); every row of a key holds the
/// same figures ([`crate::KernelMetrics`]).
pub const METRIC_COLUMNS: &[Column] = &[
    col!("metric_dram_read_bytes", U64, OPTIONAL),
    col!("metric_dram_write_bytes", U64, OPTIONAL),
    col!("metric_sm_issue_bp", U32, OPTIONAL),
];

/// The metrics pass's L2 traffic (`lts__t_bytes.sum`), written with
/// [`METRIC_COLUMNS`] since 2026-11-25 and read where present (earlier
/// files have the three only); set only beside the DRAM figures.
pub const METRIC_L2_COLUMN: Column = col!("metric_l2_bytes", U64, OPTIONAL);

/// The shared memory per SM the driver configured for each kernel (CUPTI's
/// `sharedMemoryExecuted`: the SM's L1/shared-memory split while the kernel
/// ran), bytes. Written since 2026-11-27 where any kernel has it, after the
/// other columns; a trace may leave it out. Set on kernel rows only, and
/// there null where the collector did not record it.
pub const SHARED_CONFIG_COLUMN: Column = col!("shared_config_bytes", U32, OPTIONAL);

/// Looks a column up by name.
pub fn column(name: &str) -> Option<&'static Column> {
    COLUMNS
        .iter()
        .chain(METRIC_COLUMNS)
        .chain([&METRIC_L2_COLUMN, &SHARED_CONFIG_COLUMN])
        .find(|c| c.name == name)
}

/// Prefix of every metadata key fikit writes.
pub const KEY_PREFIX: &str = "fikit.";

/// Metadata keys of format v1 (without the `fikit.` prefix), in the order written.
pub const METADATA_KEYS: &[&str] = &[
    "format_version",
    "job_name",
    "priority",
    "pid",
    "command_line",
    "host",
    "gpu_name",
    "sm_count",
    "max_threads_per_sm",
    "max_registers_per_sm",
    "max_shared_memory_per_sm",
    "max_blocks_per_sm",
    "driver_version",
    "cuda_version",
    // Optional (absent in traces written before it existed).
    "cuda_version_source",
    "cupti_version",
    "clock_offset_ns",
    "dropped_records",
    "capture_complete",
    "api_recording",
    "producer",
    // Optional (fikit-profile's runs beside the traced one).
    "characterization",
];
