//! The records a spool holds and their payload encoding.

/// Which API calls the collector asked CUPTI to record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApiMode {
    /// No API calls.
    None,
    /// Only the calls that launch GPU work, copy, set memory or synchronize.
    Selected,
    /// Every runtime and driver API call.
    All,
}

impl ApiMode {
    fn to_u8(self) -> u8 {
        match self {
            ApiMode::None => 0,
            ApiMode::Selected => 1,
            ApiMode::All => 2,
        }
    }

    fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(ApiMode::None),
            1 => Some(ApiMode::Selected),
            2 => Some(ApiMode::All),
            _ => None,
        }
    }
}

/// Which CUDA API an API record belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Domain {
    /// Runtime API (`cuda*`).
    Runtime,
    /// Driver API (`cu*`).
    Driver,
}

impl Domain {
    fn to_u8(self) -> u8 {
        match self {
            Domain::Runtime => 0,
            Domain::Driver => 1,
        }
    }

    fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Domain::Runtime),
            1 => Some(Domain::Driver),
            _ => None,
        }
    }
}

/// The first record of a spool: who wrote it and how the clocks line up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessStart {
    /// Process id.
    pub pid: u32,
    /// Parent process id.
    pub ppid: u32,
    /// Job name (`FIKIT_JOB`), empty when unset.
    pub job: String,
    /// Priority (`FIKIT_PRIORITY`), 0 highest, 9 lowest.
    pub priority: u8,
    /// `/proc/self/cmdline`, one element per argument.
    pub command_line: Vec<String>,
    /// Host name.
    pub host: String,
    /// `cuptiGetTimestamp` at init, ns.
    pub cupti_timestamp_ns: u64,
    /// `CLOCK_REALTIME` read right after it, ns since the Unix epoch.
    pub realtime_ns: i64,
    /// `cuptiGetVersion`.
    pub cupti_version: u32,
    /// Which API calls are recorded.
    pub api_mode: ApiMode,
    /// The collector's name and version.
    pub collector: String,
}

/// A GPU and its limits, read from the driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// CUDA device ordinal.
    pub ordinal: u32,
    /// Device name.
    pub name: String,
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Maximum resident threads per SM.
    pub max_threads_per_sm: u32,
    /// 32-bit registers per SM.
    pub max_registers_per_sm: u32,
    /// Shared memory per SM, bytes.
    pub max_shared_memory_per_sm: u32,
    /// Maximum resident blocks per SM.
    pub max_blocks_per_sm: u32,
    /// `cuDriverGetVersion`, e.g. 13000.
    pub driver_version: u32,
}

/// One kernel execution (CUPTI concurrent-kernel activity).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kernel {
    /// Start on the GPU, ns.
    pub start: u64,
    /// End on the GPU, ns.
    pub end: u64,
    /// Device ordinal.
    pub device: u32,
    /// CUPTI context id.
    pub context: u32,
    /// CUPTI stream id.
    pub stream: u32,
    /// Correlation id of the launching API call.
    pub correlation: u32,
    /// Grid dimensions.
    pub grid: [u32; 3],
    /// Block dimensions.
    pub block: [u32; 3],
    /// Registers per thread.
    pub registers: u32,
    /// Static shared memory per block, bytes.
    pub static_shared: u32,
    /// Dynamic shared memory per block, bytes.
    pub dynamic_shared: u32,
    /// Id of the kernel's (mangled) name, given by an earlier [`Record::String`].
    pub name_id: u32,
    /// Shared memory per SM the driver configured for the kernel (CUPTI's
    /// `sharedMemoryExecuted`: the SM's L1/shared-memory split), bytes;
    /// `None` in spools written before 2026-11-27.
    pub shared_executed: Option<u32>,
}

/// A memory copy or memset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemOp {
    /// Start on the GPU, ns.
    pub start: u64,
    /// End on the GPU, ns.
    pub end: u64,
    /// Device ordinal.
    pub device: u32,
    /// CUPTI context id.
    pub context: u32,
    /// CUPTI stream id.
    pub stream: u32,
    /// Correlation id of the issuing API call.
    pub correlation: u32,
    /// CUPTI's `CUpti_ActivityMemcpyKind` for a copy; `None` for a memset.
    pub copy_kind: Option<u8>,
    /// Bytes copied or set.
    pub bytes: u64,
}

/// One runtime or driver API call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Api {
    /// Runtime or driver.
    pub domain: Domain,
    /// CUPTI callback id; its name comes from a [`Record::ApiName`].
    pub cbid: u32,
    /// Entry, ns.
    pub start: u64,
    /// Return, ns.
    pub end: u64,
    /// Operating-system thread id.
    pub thread_id: u64,
    /// Correlation id.
    pub correlation: u32,
}

/// One synchronization (CUPTI synchronization activity).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sync {
    /// CUPTI's `CUpti_ActivitySynchronizationType`.
    pub sync_type: u32,
    /// Start, ns.
    pub start: u64,
    /// End, ns.
    pub end: u64,
    /// Correlation id of the synchronizing API call.
    pub correlation: u32,
    /// CUPTI context id.
    pub context: u32,
    /// Stream waited for; `None` for a context-wide synchronization.
    pub stream: Option<u32>,
}

/// The last record of a capture that ended cleanly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct End {
    /// Records CUPTI dropped over the whole capture.
    pub dropped_records: u64,
    /// Records skipped because they were incomplete (e.g. `end` = 0 after a forced flush).
    pub incomplete_records: u64,
}

/// One spool record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// Process facts; the first record.
    Start(ProcessStart),
    /// A device's properties.
    Device(Device),
    /// An interned string (kernel names).
    String {
        /// Id used by later records.
        id: u32,
        /// The text.
        text: String,
    },
    /// The name of an API callback id.
    ApiName {
        /// Runtime or driver.
        domain: Domain,
        /// Callback id.
        cbid: u32,
        /// Function name, e.g. `cudaLaunchKernel`.
        name: String,
    },
    /// A kernel execution.
    Kernel(Kernel),
    /// A memcpy or memset.
    MemOp(MemOp),
    /// An API call.
    Api(Api),
    /// A synchronization.
    Sync(Sync),
    /// Where a synchronizing API call (recorded through CUPTI callbacks, with
    /// the same correlation id as its [`Record::Api`]) waited.
    SyncCall {
        /// Correlation id of the API call.
        correlation: u32,
        /// CUPTI's `CUpti_ActivitySynchronizationType` matching the call.
        sync_type: u32,
        /// CUPTI context id.
        context: u32,
        /// The stream waited for; `None` for a context-wide wait or when unknown.
        stream: Option<u32>,
    },
    /// The running total of records CUPTI dropped.
    Dropped {
        /// Dropped so far.
        total: u64,
    },
    /// A message from the collector (a warning the launcher shows).
    Note {
        /// The message.
        text: String,
    },
    /// Marks a capture that ended cleanly.
    End(End),
    /// The program's CUDA runtime version (`cudaRuntimeGetVersion`, e.g.
    /// 13000), written once, after start-up. Spools without it (older
    /// collectors, or a program without a dynamic libcudart) give the driver's
    /// version instead. Readers before this record skip it as an unknown tag.
    CudaRuntime {
        /// The version, `1000 * major + 10 * minor`.
        version: u32,
    },
    /// What the metrics pass (`FIKIT_METRICS=1`) measured of one launch of a
    /// kernel key. Readers before this record skip it as an unknown tag.
    KernelMetrics {
        /// The kernel key (`fikit_trace_api::kernel_key`).
        kernel_key: u64,
        /// `dram__bytes_read.sum`, bytes.
        dram_read_bytes: u64,
        /// `dram__bytes_write.sum`, bytes.
        dram_write_bytes: u64,
        /// `sm__inst_executed.avg.pct_of_peak_sustained_active`, hundredths
        /// of a percent; `None` where the GPU could not measure it in the
        /// same pass as the DRAM bytes (encoded as `u32::MAX`).
        sm_issue_bp: Option<u32>,
        /// `lts__t_bytes.sum`, bytes; `None` where it did not fit the DRAM
        /// bytes' pass (encoded as `u64::MAX`).
        l2_bytes: Option<u64>,
    },
}

/// A payload that does not decode as its tag says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeError;

mod tag {
    pub const START: u8 = 1;
    pub const DEVICE: u8 = 2;
    pub const STRING: u8 = 3;
    pub const API_NAME: u8 = 4;
    pub const KERNEL: u8 = 5;
    pub const MEMOP: u8 = 6;
    pub const API: u8 = 7;
    pub const SYNC: u8 = 8;
    pub const DROPPED: u8 = 9;
    pub const NOTE: u8 = 10;
    pub const END: u8 = 11;
    pub const SYNC_CALL: u8 = 12;
    pub const CUDA_RUNTIME: u8 = 13;
    /// 14 held the first layout (no L2 figure, another SM metric); readers
    /// skip it as unknown.
    pub const KERNEL_METRICS: u8 = 15;
    /// A kernel with the shared memory the driver configured per SM (the
    /// [`KERNEL`] layout, then one `u32`); since 2026-11-27.
    pub const KERNEL_SHARED: u8 = 16;
}

struct Enc<'a>(&'a mut Vec<u8>);

impl Enc<'_> {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.u32(u32::try_from(s.len()).unwrap_or(u32::MAX));
        self.0.extend_from_slice(s.as_bytes());
    }
}

struct Dec<'a> {
    b: &'a [u8],
}

impl<'a> Dec<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.b.len() < n {
            return Err(DecodeError);
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }
    fn i64(&mut self) -> Result<i64, DecodeError> {
        Ok(self.u64()? as i64)
    }
    fn str(&mut self) -> Result<String, DecodeError> {
        let n = self.u32()? as usize;
        let b = self.take(n)?;
        String::from_utf8(b.to_vec()).map_err(|_| DecodeError)
    }
    fn dims(&mut self) -> Result<[u32; 3], DecodeError> {
        Ok([self.u32()?, self.u32()?, self.u32()?])
    }
    fn finish<T>(self, v: T) -> Result<T, DecodeError> {
        if self.b.is_empty() {
            Ok(v)
        } else {
            Err(DecodeError)
        }
    }
}

impl Record {
    /// The tag byte that frames this record.
    pub fn tag(&self) -> u8 {
        match self {
            Record::Start(_) => tag::START,
            Record::Device(_) => tag::DEVICE,
            Record::String { .. } => tag::STRING,
            Record::ApiName { .. } => tag::API_NAME,
            Record::Kernel(k) if k.shared_executed.is_some() => tag::KERNEL_SHARED,
            Record::Kernel(_) => tag::KERNEL,
            Record::MemOp(_) => tag::MEMOP,
            Record::Api(_) => tag::API,
            Record::Sync(_) => tag::SYNC,
            Record::SyncCall { .. } => tag::SYNC_CALL,
            Record::Dropped { .. } => tag::DROPPED,
            Record::Note { .. } => tag::NOTE,
            Record::End(_) => tag::END,
            Record::CudaRuntime { .. } => tag::CUDA_RUNTIME,
            Record::KernelMetrics { .. } => tag::KERNEL_METRICS,
        }
    }

    /// Appends the payload (no framing) to `out`.
    pub fn encode_payload(&self, out: &mut Vec<u8>) {
        let mut e = Enc(out);
        match self {
            Record::Start(s) => {
                e.u32(s.pid);
                e.u32(s.ppid);
                e.str(&s.job);
                e.u8(s.priority);
                e.u32(u32::try_from(s.command_line.len()).unwrap_or(u32::MAX));
                for a in &s.command_line {
                    e.str(a);
                }
                e.str(&s.host);
                e.u64(s.cupti_timestamp_ns);
                e.i64(s.realtime_ns);
                e.u32(s.cupti_version);
                e.u8(s.api_mode.to_u8());
                e.str(&s.collector);
            }
            Record::Device(d) => {
                e.u32(d.ordinal);
                e.str(&d.name);
                e.u32(d.sm_count);
                e.u32(d.max_threads_per_sm);
                e.u32(d.max_registers_per_sm);
                e.u32(d.max_shared_memory_per_sm);
                e.u32(d.max_blocks_per_sm);
                e.u32(d.driver_version);
            }
            Record::String { id, text } => {
                e.u32(*id);
                e.str(text);
            }
            Record::ApiName { domain, cbid, name } => {
                e.u8(domain.to_u8());
                e.u32(*cbid);
                e.str(name);
            }
            Record::Kernel(k) => {
                e.u64(k.start);
                e.u64(k.end);
                e.u32(k.device);
                e.u32(k.context);
                e.u32(k.stream);
                e.u32(k.correlation);
                for v in k.grid.into_iter().chain(k.block) {
                    e.u32(v);
                }
                e.u32(k.registers);
                e.u32(k.static_shared);
                e.u32(k.dynamic_shared);
                e.u32(k.name_id);
                if let Some(v) = k.shared_executed {
                    e.u32(v);
                }
            }
            Record::MemOp(m) => {
                e.u64(m.start);
                e.u64(m.end);
                e.u32(m.device);
                e.u32(m.context);
                e.u32(m.stream);
                e.u32(m.correlation);
                match m.copy_kind {
                    Some(k) => {
                        e.u8(1);
                        e.u8(k);
                    }
                    None => {
                        e.u8(0);
                        e.u8(0);
                    }
                }
                e.u64(m.bytes);
            }
            Record::Api(a) => {
                e.u8(a.domain.to_u8());
                e.u32(a.cbid);
                e.u64(a.start);
                e.u64(a.end);
                e.u64(a.thread_id);
                e.u32(a.correlation);
            }
            Record::Sync(s) => {
                e.u32(s.sync_type);
                e.u64(s.start);
                e.u64(s.end);
                e.u32(s.correlation);
                e.u32(s.context);
                match s.stream {
                    Some(v) => {
                        e.u8(1);
                        e.u32(v);
                    }
                    None => {
                        e.u8(0);
                        e.u32(0);
                    }
                }
            }
            Record::SyncCall {
                correlation,
                sync_type,
                context,
                stream,
            } => {
                e.u32(*correlation);
                e.u32(*sync_type);
                e.u32(*context);
                e.u8(u8::from(stream.is_some()));
                e.u32(stream.unwrap_or(0));
            }
            Record::Dropped { total } => e.u64(*total),
            Record::Note { text } => e.str(text),
            Record::End(x) => {
                e.u64(x.dropped_records);
                e.u64(x.incomplete_records);
            }
            Record::CudaRuntime { version } => e.u32(*version),
            Record::KernelMetrics {
                kernel_key,
                dram_read_bytes,
                dram_write_bytes,
                sm_issue_bp,
                l2_bytes,
            } => {
                e.u64(*kernel_key);
                e.u64(*dram_read_bytes);
                e.u64(*dram_write_bytes);
                e.u32(sm_issue_bp.unwrap_or(u32::MAX));
                e.u64(l2_bytes.unwrap_or(u64::MAX));
            }
        }
    }

    /// Decodes a payload: `None` for an unknown tag, `Some(Err)` for a payload
    /// that does not match its tag.
    pub fn decode(tag: u8, payload: &[u8]) -> Option<Result<Record, DecodeError>> {
        let mut d = Dec { b: payload };
        let r = match tag {
            tag::START => decode_start(&mut d, payload.len()),
            tag::DEVICE => (|| {
                Ok(Record::Device(Device {
                    ordinal: d.u32()?,
                    name: d.str()?,
                    sm_count: d.u32()?,
                    max_threads_per_sm: d.u32()?,
                    max_registers_per_sm: d.u32()?,
                    max_shared_memory_per_sm: d.u32()?,
                    max_blocks_per_sm: d.u32()?,
                    driver_version: d.u32()?,
                }))
            })(),
            tag::STRING => (|| {
                Ok(Record::String {
                    id: d.u32()?,
                    text: d.str()?,
                })
            })(),
            tag::API_NAME => (|| {
                Ok(Record::ApiName {
                    domain: Domain::from_u8(d.u8()?).ok_or(DecodeError)?,
                    cbid: d.u32()?,
                    name: d.str()?,
                })
            })(),
            t @ (tag::KERNEL | tag::KERNEL_SHARED) => (|| {
                Ok(Record::Kernel(Kernel {
                    start: d.u64()?,
                    end: d.u64()?,
                    device: d.u32()?,
                    context: d.u32()?,
                    stream: d.u32()?,
                    correlation: d.u32()?,
                    grid: d.dims()?,
                    block: d.dims()?,
                    registers: d.u32()?,
                    static_shared: d.u32()?,
                    dynamic_shared: d.u32()?,
                    name_id: d.u32()?,
                    shared_executed: if t == tag::KERNEL_SHARED {
                        Some(d.u32()?)
                    } else {
                        None
                    },
                }))
            })(),
            tag::MEMOP => decode_memop(&mut d),
            tag::API => (|| {
                Ok(Record::Api(Api {
                    domain: Domain::from_u8(d.u8()?).ok_or(DecodeError)?,
                    cbid: d.u32()?,
                    start: d.u64()?,
                    end: d.u64()?,
                    thread_id: d.u64()?,
                    correlation: d.u32()?,
                }))
            })(),
            tag::SYNC => decode_sync(&mut d),
            tag::SYNC_CALL => decode_sync_call(&mut d),
            tag::DROPPED => (|| Ok(Record::Dropped { total: d.u64()? }))(),
            tag::NOTE => (|| Ok(Record::Note { text: d.str()? }))(),
            tag::CUDA_RUNTIME => (|| Ok(Record::CudaRuntime { version: d.u32()? }))(),
            tag::KERNEL_METRICS => (|| {
                Ok(Record::KernelMetrics {
                    kernel_key: d.u64()?,
                    dram_read_bytes: d.u64()?,
                    dram_write_bytes: d.u64()?,
                    sm_issue_bp: Some(d.u32()?).filter(|&v| v != u32::MAX),
                    l2_bytes: Some(d.u64()?).filter(|&v| v != u64::MAX),
                })
            })(),
            tag::END => (|| {
                Ok(Record::End(End {
                    dropped_records: d.u64()?,
                    incomplete_records: d.u64()?,
                }))
            })(),
            _ => return None,
        };
        Some(r.and_then(|r| d.finish(r)))
    }
}

/// The start record (`tag::START`); a command line longer than the payload is corrupt.
fn decode_start(d: &mut Dec<'_>, payload_len: usize) -> Result<Record, DecodeError> {
    let pid = d.u32()?;
    let ppid = d.u32()?;
    let job = d.str()?;
    let priority = d.u8()?;
    let n = d.u32()? as usize;
    if n > payload_len {
        return Err(DecodeError);
    }
    let mut command_line = Vec::with_capacity(n);
    for _ in 0..n {
        command_line.push(d.str()?);
    }
    let host = d.str()?;
    let cupti_timestamp_ns = d.u64()?;
    let realtime_ns = d.i64()?;
    let cupti_version = d.u32()?;
    let api_mode = ApiMode::from_u8(d.u8()?).ok_or(DecodeError)?;
    let collector = d.str()?;
    Ok(Record::Start(ProcessStart {
        pid,
        ppid,
        job,
        priority,
        command_line,
        host,
        cupti_timestamp_ns,
        realtime_ns,
        cupti_version,
        api_mode,
        collector,
    }))
}

/// An optional value as the encoder writes it: a flag byte (0 absent, 1
/// present) before the value, which is always there; any other flag is a
/// bad record.
fn flagged<T>(has: u8, value: T) -> Result<Option<T>, DecodeError> {
    match has {
        0 => Ok(None),
        1 => Ok(Some(value)),
        _ => Err(DecodeError),
    }
}

/// A copy or memset (`tag::MEMOP`).
fn decode_memop(d: &mut Dec<'_>) -> Result<Record, DecodeError> {
    let start = d.u64()?;
    let end = d.u64()?;
    let device = d.u32()?;
    let context = d.u32()?;
    let stream = d.u32()?;
    let correlation = d.u32()?;
    let has = d.u8()?;
    let kind = d.u8()?;
    let copy_kind = flagged(has, kind)?;
    Ok(Record::MemOp(MemOp {
        start,
        end,
        device,
        context,
        stream,
        correlation,
        copy_kind,
        bytes: d.u64()?,
    }))
}

/// A synchronization activity record (`tag::SYNC`).
fn decode_sync(d: &mut Dec<'_>) -> Result<Record, DecodeError> {
    let sync_type = d.u32()?;
    let start = d.u64()?;
    let end = d.u64()?;
    let correlation = d.u32()?;
    let context = d.u32()?;
    let has = d.u8()?;
    let v = d.u32()?;
    let stream = flagged(has, v)?;
    Ok(Record::Sync(Sync {
        sync_type,
        start,
        end,
        correlation,
        context,
        stream,
    }))
}

/// A synchronizing API call (`tag::SYNC_CALL`).
fn decode_sync_call(d: &mut Dec<'_>) -> Result<Record, DecodeError> {
    let correlation = d.u32()?;
    let sync_type = d.u32()?;
    let context = d.u32()?;
    let has = d.u8()?;
    let v = d.u32()?;
    let stream = flagged(has, v)?;
    Ok(Record::SyncCall {
        correlation,
        sync_type,
        context,
        stream,
    })
}
