//! The in-memory form of a trace: one [`Trace`] per profiled process (one job).
//!
//! All times are integer nanoseconds on the capture's clock (CUPTI's timestamp
//! clock, which puts GPU and host records on one time base). Adding
//! [`Metadata::clock_offset_ns`] to a time gives nanoseconds since the Unix epoch.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The trace format version this crate writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// A host-side interval on one host thread: the API call that issued a GPU operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HostCall {
    /// When the call was entered, ns.
    pub start_ns: i64,
    /// When the call returned, ns.
    pub end_ns: i64,
    /// The operating-system id of the calling thread.
    pub thread_id: u64,
}

/// Where a GPU operation ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Placement {
    /// CUDA device ordinal.
    pub device: u32,
    /// CUPTI context id.
    pub context: u32,
    /// CUPTI stream id.
    pub stream: u32,
}

/// What is wrong with a kernel's launch shape, if anything: the column
/// (`grid_x` ... `block_z`) and why. CUDA launches only grids of 1 to
/// 2^31 - 1 blocks in x and 1 to 65,535 in y and z, and blocks of 1 to
/// 1,024 threads (at most 1,024 in x and y, 64 in z); no GPU runs any other
/// kernel, and the simulator's block-level MPS model would not finish one.
pub fn launch_shape_problem(grid: [u32; 3], block: [u32; 3]) -> Option<(&'static str, String)> {
    const GRID: [(&str, u32); 3] = [
        ("grid_x", i32::MAX as u32),
        ("grid_y", 65_535),
        ("grid_z", 65_535),
    ];
    const BLOCK: [(&str, u32); 3] = [("block_x", 1024), ("block_y", 1024), ("block_z", 64)];
    for ((name, max), v) in GRID
        .into_iter()
        .chain(BLOCK)
        .zip(grid.into_iter().chain(block))
    {
        if v == 0 || v > max {
            return Some((
                name,
                format!("{v} is outside CUDA's limits for it (1 to {max})"),
            ));
        }
    }
    let threads = u64::from(block[0]) * u64::from(block[1]) * u64::from(block[2]);
    (threads > 1024).then(|| {
        (
            "block_x",
            format!(
                "a block of {} x {} x {} = {threads} threads is over CUDA's 1,024",
                block[0], block[1], block[2]
            ),
        )
    })
}

/// One kernel execution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kernel {
    /// When the kernel started on the GPU, ns.
    pub start_ns: i64,
    /// When the kernel ended on the GPU, ns.
    pub end_ns: i64,
    /// Device, context and stream.
    pub placement: Placement,
    /// CUPTI correlation id; links the kernel to its launch call.
    pub correlation_id: u32,
    /// Mangled (symbol) name as CUPTI reports it.
    pub name: String,
    /// Demangled name; equal to `name` when the name is not mangled.
    pub demangled_name: String,
    /// Grid dimensions x, y, z in blocks.
    pub grid: [u32; 3],
    /// Block dimensions x, y, z in threads.
    pub block: [u32; 3],
    /// Registers per thread.
    pub registers_per_thread: u32,
    /// Static shared memory per block, bytes.
    pub static_shared_bytes: u32,
    /// Dynamic shared memory per block, bytes.
    pub dynamic_shared_bytes: u32,
    /// The launch call that issued it, when it was recorded.
    pub launch: Option<HostCall>,
    /// Stable identity of the kernel: see [`kernel_key`].
    pub kernel_key: u64,
    /// Shared memory per SM the driver configured while it ran (the SM's
    /// L1/shared-memory split), bytes, when recorded
    /// ([`crate::schema::SHARED_CONFIG_COLUMN`]).
    #[serde(default)]
    pub shared_config_bytes: Option<u32>,
}

impl Kernel {
    /// Duration on the GPU, ns.
    pub fn duration_ns(&self) -> i64 {
        self.end_ns - self.start_ns
    }

    /// Threads per block.
    pub fn threads_per_block(&self) -> u64 {
        self.block.iter().map(|&d| u64::from(d)).product()
    }

    /// Blocks in the grid.
    pub fn blocks(&self) -> u64 {
        self.grid.iter().map(|&d| u64::from(d)).product()
    }
}

pub use fikit_trace_api::kernel_key;

/// Direction of a memory copy, as CUPTI names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CopyKind {
    /// Host to device.
    HtoD,
    /// Device to host.
    DtoH,
    /// Device to device (same device).
    DtoD,
    /// Host to host.
    HtoH,
    /// Peer to peer (between devices).
    PtoP,
    /// Any other CUPTI copy kind (arrays, unknown).
    Other,
}

impl CopyKind {
    /// All kinds, in the order of their names.
    pub const ALL: [CopyKind; 6] = [
        CopyKind::HtoD,
        CopyKind::DtoH,
        CopyKind::DtoD,
        CopyKind::HtoH,
        CopyKind::PtoP,
        CopyKind::Other,
    ];

    /// The name stored in the trace.
    pub fn as_str(self) -> &'static str {
        match self {
            CopyKind::HtoD => "HtoD",
            CopyKind::DtoH => "DtoH",
            CopyKind::DtoD => "DtoD",
            CopyKind::HtoH => "HtoH",
            CopyKind::PtoP => "PtoP",
            CopyKind::Other => "other",
        }
    }

    /// Parses a stored name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The kind of CUPTI memcpy kind `k` (`CUpti_ActivityMemcpyKind`: 1 HtoD,
    /// 2 DtoH, 8 DtoD, 9 HtoH, 10 PtoP; anything else is [`CopyKind::Other`]).
    pub fn from_cupti(k: i64) -> CopyKind {
        match k {
            1 => CopyKind::HtoD,
            2 => CopyKind::DtoH,
            8 => CopyKind::DtoD,
            9 => CopyKind::HtoH,
            10 => CopyKind::PtoP,
            _ => CopyKind::Other,
        }
    }
}

/// A memory copy or memset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemOp {
    /// Start on the GPU, ns.
    pub start_ns: i64,
    /// End on the GPU, ns.
    pub end_ns: i64,
    /// Device, context and stream.
    pub placement: Placement,
    /// CUPTI correlation id.
    pub correlation_id: u32,
    /// `Some(direction)` for a copy, `None` for a memset.
    pub copy_kind: Option<CopyKind>,
    /// Bytes copied or set.
    pub bytes: u64,
    /// The API call that issued it, when it was recorded.
    pub launch: Option<HostCall>,
}

impl MemOp {
    /// True for a memset, false for a copy.
    pub fn is_memset(&self) -> bool {
        self.copy_kind.is_none()
    }
}

/// Which CUDA API an API call belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ApiDomain {
    /// The runtime API (`cuda*`).
    Runtime,
    /// The driver API (`cu*`).
    Driver,
}

impl ApiDomain {
    /// The name stored in the trace.
    pub fn as_str(self) -> &'static str {
        match self {
            ApiDomain::Runtime => "runtime",
            ApiDomain::Driver => "driver",
        }
    }

    /// Parses a stored name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "runtime" => Some(ApiDomain::Runtime),
            "driver" => Some(ApiDomain::Driver),
            _ => None,
        }
    }
}

/// One host API call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiCall {
    /// Runtime or driver.
    pub domain: ApiDomain,
    /// Function name, e.g. `cudaLaunchKernel`.
    pub name: String,
    /// Entry, ns.
    pub start_ns: i64,
    /// Return, ns.
    pub end_ns: i64,
    /// Calling thread.
    pub thread_id: u64,
    /// CUPTI correlation id; equal to the correlation id of the GPU work it issued.
    pub correlation_id: u32,
}

impl ApiCall {
    /// True when the call blocks the host until GPU work is done: the explicit
    /// synchronizations and the synchronous copies.
    pub fn is_blocking(&self) -> bool {
        is_blocking_api(&self.name)
    }
}

/// True for API functions that block the calling thread until GPU work is done.
pub fn is_blocking_api(name: &str) -> bool {
    let base = name.trim_end_matches("_v2").trim_end_matches("_ptsz");
    matches!(
        base,
        "cudaDeviceSynchronize"
            | "cudaStreamSynchronize"
            | "cudaEventSynchronize"
            | "cudaStreamWaitEvent"
            | "cudaMemcpy"
            | "cudaMemcpy2D"
            | "cudaMemcpy3D"
            | "cudaMemcpyToSymbol"
            | "cudaMemcpyFromSymbol"
            | "cudaMemset"
            | "cuCtxSynchronize"
            | "cuStreamSynchronize"
            | "cuEventSynchronize"
            | "cuMemcpy"
            | "cuMemcpyDtoH"
            | "cuMemcpyHtoD"
            | "cuMemcpyDtoD"
    )
}

/// What a host synchronization waited for, as CUPTI's synchronization activity names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SyncKind {
    /// `cudaEventSynchronize`.
    EventSynchronize,
    /// `cudaStreamWaitEvent` (a device-side wait; the host does not block).
    StreamWaitEvent,
    /// `cudaStreamSynchronize`.
    StreamSynchronize,
    /// `cudaDeviceSynchronize` / `cuCtxSynchronize`.
    ContextSynchronize,
    /// Anything else CUPTI reports.
    Other,
}

impl SyncKind {
    /// All kinds.
    pub const ALL: [SyncKind; 5] = [
        SyncKind::EventSynchronize,
        SyncKind::StreamWaitEvent,
        SyncKind::StreamSynchronize,
        SyncKind::ContextSynchronize,
        SyncKind::Other,
    ];

    /// The kind of CUPTI synchronization type `t`
    /// (`CUpti_ActivitySynchronizationType`: 1 event, 2 stream wait event,
    /// 3 stream, 4 context; anything else is [`SyncKind::Other`]).
    pub fn from_cupti(t: i64) -> SyncKind {
        match t {
            1 => SyncKind::EventSynchronize,
            2 => SyncKind::StreamWaitEvent,
            3 => SyncKind::StreamSynchronize,
            4 => SyncKind::ContextSynchronize,
            _ => SyncKind::Other,
        }
    }

    /// The name stored in the trace.
    pub fn as_str(self) -> &'static str {
        match self {
            SyncKind::EventSynchronize => "event_synchronize",
            SyncKind::StreamWaitEvent => "stream_wait_event",
            SyncKind::StreamSynchronize => "stream_synchronize",
            SyncKind::ContextSynchronize => "context_synchronize",
            SyncKind::Other => "other",
        }
    }

    /// Parses a stored name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// True when the host thread blocks until the GPU work waited for is done.
    pub fn blocks_host(self) -> bool {
        !matches!(self, SyncKind::StreamWaitEvent)
    }
}

/// One host synchronization with the GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sync {
    /// What was waited for.
    pub kind: SyncKind,
    /// When the wait began, ns.
    pub start_ns: i64,
    /// When the wait ended, ns.
    pub end_ns: i64,
    /// The CUPTI context id.
    pub context: u32,
    /// The stream waited for; `None` for a context-wide synchronization.
    pub stream: Option<u32>,
    /// The waiting thread, when its API call was recorded.
    pub thread_id: Option<u64>,
    /// CUPTI correlation id of the synchronizing API call.
    pub correlation_id: u32,
}

/// Which API calls a capture recorded, so a reader knows what absence means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ApiRecording {
    /// No API calls.
    None,
    /// Only the calls that launch GPU work, copy, set memory or synchronize.
    Selected,
    /// Every runtime and driver API call.
    All,
}

impl ApiRecording {
    /// The name stored in the trace.
    pub fn as_str(self) -> &'static str {
        match self {
            ApiRecording::None => "none",
            ApiRecording::Selected => "selected",
            ApiRecording::All => "all",
        }
    }

    /// Parses a stored name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "none" => Some(ApiRecording::None),
            "selected" => Some(ApiRecording::Selected),
            "all" => Some(ApiRecording::All),
            _ => None,
        }
    }
}

/// Where `cuda_version` came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum VersionSource {
    /// The profiled program's CUDA runtime (`cudaRuntimeGetVersion`).
    Runtime,
    /// The driver (`cuDriverGetVersion`), because the runtime's was unknown.
    Driver,
}

impl VersionSource {
    /// The name stored in the trace.
    pub fn as_str(self) -> &'static str {
        match self {
            VersionSource::Runtime => "runtime",
            VersionSource::Driver => "driver",
        }
    }

    /// Parses a stored name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "runtime" => Some(VersionSource::Runtime),
            "driver" => Some(VersionSource::Driver),
            _ => None,
        }
    }
}

/// The device a job ran on, with the per-SM limits that decide how many of a
/// kernel's blocks fit at once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// Marketing name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// Number of streaming multiprocessors.
    pub sm_count: u32,
    /// Maximum resident threads per SM.
    pub max_threads_per_sm: u32,
    /// 32-bit registers per SM.
    pub max_registers_per_sm: u32,
    /// Shared memory per SM, bytes.
    pub max_shared_memory_per_sm: u32,
    /// Maximum resident blocks per SM.
    pub max_blocks_per_sm: u32,
}

/// Everything about a capture that is not an event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metadata {
    /// Format version; [`FORMAT_VERSION`] for what this crate writes.
    pub format_version: u32,
    /// The job's name.
    pub job_name: String,
    /// Scheduling priority: 0 is the highest, 9 the lowest.
    pub priority: u8,
    /// Process id of the profiled process.
    pub pid: u32,
    /// The process's command line, one element per argument.
    pub command_line: Vec<String>,
    /// Host name.
    pub host: String,
    /// The GPU and its limits.
    pub device: DeviceInfo,
    /// CUDA driver version as `major.minor` (e.g. `13.0`), from `cuDriverGetVersion`.
    pub driver_version: String,
    /// CUDA version the profiled program's runtime reports, or the driver's when unknown.
    pub cuda_version: String,
    /// Where `cuda_version` came from; `None` in traces written before the
    /// key existed (they hold the driver's version) or when nothing was known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_version_source: Option<VersionSource>,
    /// CUPTI API version number (`cuptiGetVersion`).
    pub cupti_version: u32,
    /// Add to a trace time to get nanoseconds since the Unix epoch.
    pub clock_offset_ns: i64,
    /// Records CUPTI dropped because its buffers were full.
    pub dropped_records: u64,
    /// True when the capture ended with a final flush; false when the process
    /// was killed or the capture broke off (the trace holds what was flushed).
    pub capture_complete: bool,
    /// Which API calls were recorded.
    pub api_recording: ApiRecording,
    /// Which program wrote the trace, e.g. `fikit-profile 0.1.0`.
    pub producer: String,
    /// What `fikit-profile` measured of the job beyond this trace
    /// (`fikit.characterization`); `None` in traces without it (written
    /// before it existed, with `--single-run`, or imported).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub characterization: Option<Characterization>,
}

/// What `fikit-profile` measured of a job in runs beside its traced one
/// (the metadata key `fikit.characterization`, JSON): what the simulator
/// needs to predict the job as it runs when it is not traced.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Characterization {
    /// The GPU the runs ran on; a reader rejects a characterization whose
    /// GPU is not the trace's ([`Characterization::check`]).
    pub gpu_name: String,
    /// The command's runs without CUPTI's recording, in the order they ran.
    #[serde(default)]
    pub untraced_runs: Vec<UntracedRun>,
    /// How hard the job's kernels pressed on a latency-bound victim under
    /// MPS (the pressure pass); `None` where it did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure: Option<crate::pressure::PressurePass>,
}

/// One run of the command without CUPTI's recording: only the collector's
/// gate, open, seeing launches through the preloaded launch shim, as
/// `fikit-run` measures a job alone.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UntracedRun {
    /// From its first kernel launch to the later of its last launch and its
    /// last blocking synchronization, ns (on the host's monotonic clock).
    pub region_ns: i64,
    /// Kernel launches it made.
    pub launches: u64,
    /// Spans between consecutive blocking synchronizations after its first
    /// launch (those with a kernel launched since the previous one), the
    /// first span (setup) left out: its iterations, ns.
    #[serde(default)]
    pub iterations_ns: Vec<i64>,
    /// The busy part of each of the same iterations: from its first kernel
    /// launch to the blocking synchronization that ends it, ns (the host's
    /// idle before the launch, a server waiting for a request, left out).
    /// Empty in traces from before the field.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub busy_ns: Vec<i64>,
}

impl Characterization {
    /// Checks it against the trace's GPU `gpu_name`: the error names the
    /// field (`untraced_runs[1].region_ns`) and what is wrong.
    pub fn check(&self, gpu_name: &str) -> Result<(), String> {
        if self.gpu_name != gpu_name {
            return Err(format!(
                "gpu_name: recorded on {:?}, but the trace is of {gpu_name:?}: a characterization is of its trace's GPU",
                self.gpu_name
            ));
        }
        for (i, r) in self.untraced_runs.iter().enumerate() {
            if r.region_ns <= 0 {
                return Err(format!(
                    "untraced_runs[{i}].region_ns: expected a positive number of ns, found {}",
                    r.region_ns
                ));
            }
            if r.launches == 0 {
                return Err(format!(
                    "untraced_runs[{i}].launches: expected at least 1 (a run with a region launched a kernel), found 0"
                ));
            }
            for (field, what, spans) in [
                ("iterations_ns", "an iteration", &r.iterations_ns),
                ("busy_ns", "a busy part", &r.busy_ns),
            ] {
                if let Some((j, d)) = spans.iter().enumerate().find(|(_, d)| **d <= 0) {
                    return Err(format!(
                        "untraced_runs[{i}].{field}[{j}]: expected a positive number of ns, found {d}"
                    ));
                }
                if let Some(d) = spans.iter().find(|d| **d > r.region_ns) {
                    return Err(format!(
                        "untraced_runs[{i}].{field}: {what} of {d} ns is longer than the run's region ({} ns)",
                        r.region_ns
                    ));
                }
            }
        }
        if let Some(p) = &self.pressure {
            p.check().map_err(|e| format!("pressure.{e}"))?;
        }
        Ok(())
    }
}

/// What a metrics pass (`fikit-profile --metrics`) measured of one kernel
/// key: one launch of it, run alone and serialized by the profiler, so its
/// figures describe the kernel, not its neighbours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelMetrics {
    /// Bytes read from DRAM (`dram__bytes_read.sum`).
    pub dram_read_bytes: u64,
    /// Bytes written to DRAM (`dram__bytes_write.sum`).
    pub dram_write_bytes: u64,
    /// How hard the kernel drives the SMs while they run it: instructions
    /// issued per active cycle, the average SM's, in hundredths of a percent
    /// of the peak (`sm__inst_executed.avg.pct_of_peak_sustained_active`
    /// times 100, rounded), 0 to 10,000. Per active cycle, so the range's
    /// own overhead around a short kernel does not dilute it. `None` where
    /// the GPU could not count it in the same pass as the DRAM bytes.
    pub sm_issue_bp: Option<u32>,
    /// Bytes through the L2 cache (`lts__t_bytes.sum`: reads, writes and
    /// atomics the L2 slices served, hits and misses); `None` where the GPU
    /// could not count it in the same pass as the DRAM bytes, and in files
    /// from before the column.
    #[serde(default)]
    pub l2_bytes: Option<u64>,
}

/// A whole job: metadata and its events, each list in the order of its start times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// Capture metadata.
    pub meta: Metadata,
    /// Kernel executions.
    pub kernels: Vec<Kernel>,
    /// Memory copies and memsets.
    pub memops: Vec<MemOp>,
    /// Recorded API calls.
    pub api_calls: Vec<ApiCall>,
    /// Host synchronizations.
    pub syncs: Vec<Sync>,
    /// Per kernel key, what a metrics pass measured (empty without one).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub kernel_metrics: BTreeMap<u64, KernelMetrics>,
}

impl Trace {
    /// Sorts every list by start time (ties: end time, then correlation id), the order the writer stores.
    pub fn sort(&mut self) {
        self.kernels
            .sort_by_key(|k| (k.start_ns, k.end_ns, k.correlation_id));
        self.memops
            .sort_by_key(|m| (m.start_ns, m.end_ns, m.correlation_id));
        self.api_calls
            .sort_by_key(|a| (a.start_ns, a.end_ns, a.correlation_id));
        self.syncs
            .sort_by_key(|s| (s.start_ns, s.end_ns, s.correlation_id));
    }

    /// Earliest start and latest end over all GPU operations, or `None` without any.
    pub fn gpu_span(&self) -> Option<(i64, i64)> {
        let starts = self
            .kernels
            .iter()
            .map(|k| (k.start_ns, k.end_ns))
            .chain(self.memops.iter().map(|m| (m.start_ns, m.end_ns)));
        starts.fold(None, |acc, (s, e)| match acc {
            None => Some((s, e)),
            Some((a, b)) => Some((a.min(s), b.max(e))),
        })
    }
}

#[cfg(test)]
mod launch_shape_tests {
    use super::launch_shape_problem;

    #[test]
    fn cudas_limits_pass_and_one_past_any_of_them_is_named() {
        let column = |g, b| launch_shape_problem(g, b).map(|(c, _)| c);
        assert_eq!(
            column([i32::MAX as u32, 65_535, 65_535], [1024, 1, 1]),
            None
        );
        assert_eq!(column([1, 1, 1], [32, 32, 1]), None);
        assert_eq!(column([1, 1, 1], [1, 1, 64]), None);
        assert_eq!(column([1 << 31, 1, 1], [1, 1, 1]), Some("grid_x"));
        assert_eq!(column([1, 65_536, 1], [1, 1, 1]), Some("grid_y"));
        assert_eq!(column([1, 1, 0], [1, 1, 1]), Some("grid_z"));
        assert_eq!(column([1, 1, 1], [0, 1, 1]), Some("block_x"));
        assert_eq!(column([1, 1, 1], [1, 1025, 1]), Some("block_y"));
        assert_eq!(column([1, 1, 1], [1, 1, 65]), Some("block_z"));
        // Each within its own limit, 2,048 threads together.
        assert_eq!(column([1, 1, 1], [32, 32, 2]), Some("block_x"));
    }
}
