//! The running collector: CUPTI setup, buffer callbacks, the flushing thread
//! and the exit handler.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use cudarc::cupti::sys;
use cudarc::driver::sys as ds;
use fikit_spool::{ApiMode, Domain, End, ProcessStart, Record, SpoolBuffer, SpoolWriter};

use crate::activity::{self, Activity};
use crate::cupti;
use crate::layout;
use crate::switch::{Plan, Step, Switches, Undo, switch_on};
use crate::{env_var, warn};

/// Environment variable: the folder spools are written to (default: the current folder).
pub const SPOOL_DIR_ENV: &str = "FIKIT_SPOOL_DIR";
/// Environment variable: the job name.
pub const JOB_ENV: &str = "FIKIT_JOB";
/// Environment variable: the priority, 0 (highest) to 9.
pub const PRIORITY_ENV: &str = "FIKIT_PRIORITY";
/// Environment variable: which API calls to record and how (see [`ApiSource`]):
/// `selected` (default), `activity`, `runtime`, `driver`, `all`, `none`, `latency`.
pub const API_ENV: &str = "FIKIT_API";
/// Environment variable: `1` turns CUPTI's synchronization activity on, `0`
/// off. Default: on only for `all`; otherwise the synchronizations come from
/// the recorded API calls (the cheaper way: see traces/README.md).
pub const SYNC_ENV: &str = "FIKIT_SYNC_ACTIVITY";

/// How API calls are recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiSource {
    /// `callback`: CUPTI callbacks on only the launch, copy, memset and
    /// synchronize functions; the collector times each call itself.
    Callback,
    /// `activity` (the default; also `selected`): CUPTI API activity records
    /// for only those functions (`cuptiActivityEnableRuntimeApi`/`DriverApi`
    /// per callback id); the synchronizations are the synchronizing calls
    /// among them. It measured cheaper than the callbacks in both
    /// measurements on an H200 (traces/README.md).
    ActivitySelected,
    /// `runtime`: as `activity`, but only the runtime API's functions (an
    /// overhead experiment: kernels launched through the driver API directly
    /// get no launch call).
    ActivityRuntime,
    /// `driver`: as `activity`, but only the driver API's functions (the
    /// runtime calls them underneath its own).
    ActivityDriver,
    /// `all`: API activity records for every runtime and driver call.
    ActivityAll,
    /// `none`: no API calls.
    None,
    /// `latency`: no API calls; kernels' queued/submitted timestamps on
    /// (only for overhead measurements: the trace keeps no launch times).
    Latency,
}

impl ApiSource {
    fn parse(v: Option<&str>) -> Self {
        match v {
            Some("callback") => ApiSource::Callback,
            Some("all") => ApiSource::ActivityAll,
            Some("none") => ApiSource::None,
            Some("latency") => ApiSource::Latency,
            Some("runtime") => ApiSource::ActivityRuntime,
            Some("driver") => ApiSource::ActivityDriver,
            _ => ApiSource::ActivitySelected,
        }
    }

    fn mode(self) -> ApiMode {
        match self {
            ApiSource::Callback
            | ApiSource::ActivitySelected
            | ApiSource::ActivityRuntime
            | ApiSource::ActivityDriver => ApiMode::Selected,
            ApiSource::ActivityAll => ApiMode::All,
            ApiSource::None | ApiSource::Latency => ApiMode::None,
        }
    }
}
/// Environment variable: flush period in milliseconds (default 100).
pub const FLUSH_MS_ENV: &str = "FIKIT_FLUSH_MS";
/// Environment variable: how completed CUPTI buffers are collected every
/// period: `flushall` (default; the flushing thread calls
/// `cuptiActivityFlushAll(0)`) or `period` (CUPTI's own worker delivers them,
/// `cuptiActivityFlushPeriod`; the thread only writes).
pub const FLUSH_MODE_ENV: &str = "FIKIT_FLUSH_MODE";

/// Size of each buffer handed to CUPTI.
const BUFFER_SIZE: usize = 4 << 20;
/// Alignment CUPTI requires of activity buffers.
const BUFFER_ALIGN: usize = 8;

/// What is shared between CUPTI's callbacks, the flushing thread and the exit handler.
pub struct Collector {
    /// The process that initialized the collector; any other pid is a fork child.
    pid: u32,
    /// Records decoded from CUPTI buffers, waiting to be written.
    pending: Mutex<Pending>,
    /// The spool file; also serializes flush-and-write sequences.
    file: Mutex<Option<SpoolWriter<File>>>,
    /// API names by (domain, cbid), resolved at init.
    api_names: HashMap<(Domain, u32), String>,
    /// Records CUPTI reported dropped, summed over buffers.
    dropped: AtomicU64,
    /// Records skipped as incomplete.
    incomplete: AtomicU64,
    /// Set once the exit handler has finished the spool.
    finished: AtomicBool,
    /// Set once device properties were written.
    devices_written: AtomicBool,
    /// Set once the program's CUDA runtime version (or why it is unknown) was looked for.
    version_written: AtomicBool,
    /// CUPTI synchronization type by callback id (runtime ids first, then
    /// driver ids at `MAX_CBID + cbid`); 0 for calls that do not synchronize.
    sync_types: Vec<u8>,
    flush_period: Duration,
    /// The flushing thread calls `cuptiActivityFlushAll(0)` itself.
    flush_all: bool,
}

#[derive(Default)]
struct Pending {
    buf: SpoolBuffer,
    names: HashMap<Box<[u8]>, u32>,
    api_names_written: HashSet<(Domain, u32)>,
}

static COLLECTOR: OnceLock<Collector> = OnceLock::new();
/// Set in a fork child (by the `pthread_atfork` child handler): it does nothing.
static FORKED: AtomicBool = AtomicBool::new(false);

fn getpid() -> u32 {
    std::process::id()
}

extern "C" fn on_fork_child() {
    FORKED.store(true, Ordering::Relaxed);
}

/// The collector of this process, unless this is a fork child of the process that started it.
fn this_process() -> Option<&'static Collector> {
    if FORKED.load(Ordering::Relaxed) {
        return None;
    }
    COLLECTOR.get().filter(|c| c.pid == getpid())
}

thread_local! {
    static TID: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// Inside a recorded runtime call: the driver calls it makes share its
    /// correlation id and are not recorded (as with CUPTI's API activity).
    static IN_RUNTIME: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn thread_id() -> u64 {
    TID.with(|t| {
        if t.get() == 0 {
            // SAFETY: gettid has no preconditions.
            t.set(unsafe { libc::gettid() } as u64);
        }
        t.get()
    })
}

fn realtime_ns() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is 256 bytes long and we pass one less.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len() - 1) };
    if r != 0 {
        return String::new();
    }
    let n = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

fn command_line() -> Vec<String> {
    std::fs::read("/proc/self/cmdline")
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The real CUPTI calls behind [`Switches`].
struct Cupti {
    flush_period_ms: u32,
}

impl Switches for Cupti {
    fn on(&self, step: Step) -> Result<(), String> {
        // The test hook's kind never reaches CUPTI, whose handling of an
        // unknown kind is undefined: it fails here, as a rejected kind would.
        if step == Step::Kind(TEST_FAIL_KIND) {
            return Err(format!(
                "CUPTI_ERROR_INVALID_KIND (injected by {TEST_FAIL_ENV}=1)"
            ));
        }
        let r = match step {
            Step::Subscribed(_) => Ok(()),
            Step::Kind(k) => cupti::enable_raw(k),
            Step::ApiRecords(runtime, cbid) => cupti::enable_api(runtime, cbid, true),
            Step::Callback(runtime, cbid) => match SUBSCRIBER.get() {
                // SAFETY: the handle from `subscribe_with`, still subscribed.
                Some(h) => unsafe { cupti::enable_callback(h.0, runtime, cbid, true) },
                None => Ok(()),
            },
            Step::FlushPeriod => cupti::flush_period(self.flush_period_ms),
            Step::LatencyTimestamps => cupti::enable_latency_timestamps(true),
        };
        r.map_err(|e| e.to_string())
    }

    fn off(&self, step: Step) -> Result<(), String> {
        let r = match step {
            // SAFETY: the handle `subscribe` returned, not yet unsubscribed.
            Step::Subscribed(h) => unsafe { cupti::unsubscribe(h as sys::CUpti_SubscriberHandle) },
            Step::Kind(k) => cupti::disable(k),
            Step::ApiRecords(runtime, cbid) => cupti::enable_api(runtime, cbid, false),
            Step::Callback(runtime, cbid) => match SUBSCRIBER.get() {
                // SAFETY: as in `on`; callbacks are switched off before the unsubscription.
                Some(h) => unsafe { cupti::enable_callback(h.0, runtime, cbid, false) },
                None => Ok(()),
            },
            Step::FlushPeriod => cupti::flush_period(0),
            Step::LatencyTimestamps => cupti::enable_latency_timestamps(false),
        };
        r.map_err(|e| e.to_string())
    }
}

/// The CUPTI subscriber handle, shared with [`Cupti::on`].
struct Subscriber(sys::CUpti_SubscriberHandle);
// SAFETY: an opaque handle CUPTI accepts from any thread.
unsafe impl Send for Subscriber {}
// SAFETY: as above; it is never dereferenced here.
unsafe impl std::marker::Sync for Subscriber {}
static SUBSCRIBER: OnceLock<Subscriber> = OnceLock::new();

/// Sets CUPTI up and starts the flushing thread. Called once, from
/// `InitializeInjection`, after libcupti was bound; `load_notes` are what
/// choosing libcupti had to say. `gate` is the launch gate's subscription
/// when the program runs under `fikit-run`: CUPTI has one, so the collector
/// records through it (API records as activity, never its own callbacks).
pub fn start(
    load_notes: Vec<String>,
    gate: Option<sys::CUpti_SubscriberHandle>,
) -> Result<(), String> {
    let pid = getpid();
    let mut source = ApiSource::parse(env_var(API_ENV).as_deref());
    let mut load_notes = load_notes;
    if gate.is_some() && source == ApiSource::Callback {
        load_notes.push(
            "FIKIT_API=callback is not available under fikit-run's gate; API calls are              recorded as activity records"
                .into(),
        );
        source = ApiSource::ActivitySelected;
    }
    let api_mode = source.mode();
    let sync_activity = match env_var(SYNC_ENV).as_deref() {
        Some("1") => true,
        Some("0") => false,
        _ => source == ApiSource::ActivityAll,
    };
    let dir = PathBuf::from(env_var(SPOOL_DIR_ENV).unwrap_or_else(|| ".".to_string()));
    let job = env_var(JOB_ENV).unwrap_or_default();
    let priority = env_var(PRIORITY_ENV)
        .and_then(|p| p.parse::<u8>().ok())
        .filter(|p| *p <= 9)
        .unwrap_or(9);
    let flush_ms = env_var(FLUSH_MS_ENV)
        .and_then(|p| p.parse::<u64>().ok())
        .filter(|&p| p > 0)
        .unwrap_or(100);
    let flush_all = env_var(FLUSH_MODE_ENV).as_deref() != Some("period");

    let mut notes = load_notes;
    let cupti_version = cupti::version().map_err(|e| e.to_string())?;
    // A libcupti whose record layouts were never checked is not used at all.
    let refused = match layout::check(
        cupti_version,
        env_var(layout::UNCHECKED_ENV).as_deref() == Some("1"),
    ) {
        layout::Verdict::Known => None,
        layout::Verdict::Unchecked(n) => {
            warn(&n);
            notes.push(n);
            None
        }
        layout::Verdict::Refuse(why) => Some(why),
    };

    let switches = Cupti {
        flush_period_ms: u32::try_from(flush_ms / 2).unwrap_or(50).max(1),
    };
    // From the subscription on, every step is undone if start-up fails.
    let mut undo = Undo::new(&switches);
    let mut handle = None;
    if let Some(h) = gate {
        // The gate's subscription: unsubscribing it belongs to no undo.
        handle = Some(h);
        if let Err(e) = cupti::use_system_thread_ids() {
            notes.push(format!("{e}; thread ids are CUPTI's default"));
        }
    } else if refused.is_none() {
        let subscribed = if source == ApiSource::Callback {
            cupti::subscribe_with(Some(api_callback))
        } else {
            cupti::subscribe()
        };
        match subscribed {
            Ok(h) => {
                undo.push(Step::Subscribed(h as usize));
                handle = Some(h);
                let _ = SUBSCRIBER.set(Subscriber(h));
            }
            Err(e) if cupti::is_multiple_subscribers(&e) => {
                let msg = "another CUPTI client (e.g. torch.profiler, Nsight) is already \
                           subscribed in this process; recording anyway, records may be missing"
                    .to_string();
                warn(&msg);
                notes.push(msg);
            }
            Err(e) => notes.push(format!("{e}; continuing")),
        }
        if let Err(e) = cupti::use_system_thread_ids() {
            notes.push(format!("{e}; thread ids are CUPTI's default"));
        }
    }

    // API names, resolved now so the buffer callbacks never call back into CUPTI.
    let mut api_names = HashMap::new();
    let mut sync_types = vec![0u8; 2 * cupti::MAX_CBID as usize];
    if refused.is_none() {
        for (runtime, domain) in [(true, Domain::Runtime), (false, Domain::Driver)] {
            for cbid in 1..cupti::MAX_CBID {
                if let Some(n) = cupti::callback_name(runtime, cbid) {
                    if let Some(t) = cupti::sync_type_of(&n) {
                        sync_types[sync_index(domain, cbid)] = t as u8;
                    }
                    api_names.insert((domain, cbid), n);
                }
            }
        }
    }

    // A new file, never an existing one: a process that execs another CUDA
    // program keeps its pid, and the first program's spool must survive.
    let (path, file) = (0u32..1000)
        .map(|n| match n {
            0 => dir.join(format!("fikit-{pid}.spool")),
            n => dir.join(format!("fikit-{pid}-{n}.spool")),
        })
        .find_map(|path| {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(f) => Some(Ok((path, f))),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => None,
                Err(e) => Some(Err(format!("cannot create {}: {e}", path.display()))),
            }
        })
        .unwrap_or_else(|| {
            Err(format!(
                "cannot create a spool in {}: 1000 exist for pid {pid}",
                dir.display()
            ))
        })?;
    let mut writer =
        SpoolWriter::new(file).map_err(|e| format!("cannot write {}: {e}", path.display()))?;

    let cupti_ts = cupti::timestamp().map_err(|e| e.to_string())?;
    let real = realtime_ns();
    let mut first = SpoolBuffer::new();
    first.push(&Record::Start(ProcessStart {
        pid,
        // SAFETY: getppid has no preconditions.
        ppid: unsafe { libc::getppid() } as u32,
        job,
        priority,
        command_line: command_line(),
        host: hostname(),
        cupti_timestamp_ns: cupti_ts,
        realtime_ns: real,
        cupti_version,
        api_mode,
        collector: format!("fikit-collector {}", env!("CARGO_PKG_VERSION")),
    }));
    for n in &notes {
        first.push(&Record::Note { text: n.clone() });
    }
    if let Some(why) = &refused {
        // Nothing was switched on: the spool says why and is finished now.
        let text = format!("{}{why}", fikit_spool::STOPPED_PREFIX);
        warn(&text);
        first.push(&Record::Note { text });
        first.push(&Record::End(End {
            dropped_records: 0,
            incomplete_records: 0,
        }));
    }
    writer
        .write_buffer(&first)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    if refused.is_some() {
        return Ok(());
    }

    let collector = Collector {
        pid,
        pending: Mutex::new(Pending::default()),
        file: Mutex::new(Some(writer)),
        api_names,
        dropped: AtomicU64::new(0),
        incomplete: AtomicU64::new(0),
        finished: AtomicBool::new(false),
        devices_written: AtomicBool::new(false),
        version_written: AtomicBool::new(false),
        sync_types,
        flush_period: Duration::from_millis(flush_ms),
        flush_all,
    };
    if COLLECTOR.set(collector).is_err() {
        return Err("collector started twice".into());
    }
    let c = COLLECTOR.get().ok_or("collector missing")?;

    // Everything that can fail without touching CUPTI's recording comes
    // before any activity is enabled.
    if let Err(e) = cupti::register_buffer_callbacks(Some(buffer_requested), Some(buffer_completed))
    {
        c.abandon(&undo_now(undo, e.to_string()));
        return Ok(());
    }
    // SAFETY: `on_fork_child` only stores to an atomic.
    unsafe { libc::pthread_atfork(None, None, Some(on_fork_child)) };
    // SAFETY: `at_exit` is an `extern "C" fn()` that never unwinds.
    if unsafe { libc::atexit(at_exit) } != 0 {
        c.note("atexit registration failed: the last 100 ms may be lost".into());
    }
    if let Err(e) = std::thread::Builder::new()
        .name("fikit-flush".into())
        .spawn(flush_loop)
    {
        c.abandon(&undo_now(
            undo,
            format!("cannot start the flushing thread: {e}"),
        ));
        return Ok(());
    }

    let plan = recording_plan(
        source,
        sync_activity,
        handle.is_some(),
        flush_all,
        &c.api_names,
    );
    if source == ApiSource::Callback && handle.is_none() {
        c.note("no CUPTI subscription: launch calls are not recorded".into());
    }
    match switch_on(undo, &plan) {
        Ok((_, notes)) => {
            for n in notes {
                c.note(n);
            }
        }
        Err(why) => c.abandon(&why),
    }
    Ok(())
}

/// Undoes what `undo` holds and says so.
fn undo_now(undo: Undo<'_, Cupti>, why: String) -> String {
    let failures = undo.undo();
    crate::switch::undone(why, &failures)
}

/// What to switch on for `source`: the activity kinds (kernels are required),
/// the API records or callbacks of the selected functions.
fn recording_plan(
    source: ApiSource,
    sync_activity: bool,
    subscribed: bool,
    flush_all: bool,
    api_names: &HashMap<(Domain, u32), String>,
) -> Plan {
    use sys::CUpti_ActivityKind as K;
    let mut kinds = vec![
        (K::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL as u32, true),
        (K::CUPTI_ACTIVITY_KIND_MEMCPY as u32, false),
        (K::CUPTI_ACTIVITY_KIND_MEMSET as u32, false),
    ];
    if sync_activity {
        kinds.push((K::CUPTI_ACTIVITY_KIND_SYNCHRONIZATION as u32, false));
    }
    let mut plan = Plan {
        flush_period: !flush_all,
        latency_timestamps: source == ApiSource::Latency,
        ..Plan::default()
    };
    let mut selected: Vec<(bool, u32)> = api_names
        .iter()
        .filter(|(_, name)| cupti::is_selected_api(name))
        .map(|((domain, cbid), _)| (*domain == Domain::Runtime, *cbid))
        .collect();
    selected.sort();
    match source {
        ApiSource::ActivityAll => {
            kinds.push((K::CUPTI_ACTIVITY_KIND_RUNTIME as u32, false));
            kinds.push((K::CUPTI_ACTIVITY_KIND_DRIVER as u32, false));
        }
        ApiSource::Callback if subscribed => plan.callbacks = selected,
        ApiSource::Callback => {}
        ApiSource::ActivitySelected => plan.api_records = selected,
        ApiSource::ActivityRuntime => {
            plan.api_records = selected.into_iter().filter(|(rt, _)| *rt).collect();
        }
        ApiSource::ActivityDriver => {
            plan.api_records = selected.into_iter().filter(|(rt, _)| !rt).collect();
        }
        ApiSource::None | ApiSource::Latency => {}
    }
    if env_var(TEST_FAIL_ENV).as_deref() == Some("1") {
        // A required kind after the real ones, which `Cupti::on` rejects.
        kinds.push((TEST_FAIL_KIND, true));
    }
    plan.kinds = kinds;
    plan
}

/// Environment variable, for checking the start-up undo on a GPU: `1` adds a
/// required activity kind CUPTI rejects after the real ones were enabled, so
/// start-up fails halfway and everything is disabled again.
pub const TEST_FAIL_ENV: &str = "FIKIT_TEST_FAIL_START";

/// The activity kind the test hook adds; no CUPTI defines it, and it is
/// failed before any CUPTI call.
const TEST_FAIL_KIND: u32 = u32::MAX >> 1;

/// Queues `record` in this process's spool (written with the next flush),
/// when the collector is recording; false when it is not.
pub(crate) fn push_record(record: &Record) -> bool {
    let Some(c) = this_process() else {
        return false;
    };
    match c.pending.lock() {
        Ok(mut p) => {
            p.buf.push(record);
            true
        }
        Err(_) => false,
    }
}

/// Says `text` (a warning) and keeps it in the spool as a note.
pub(crate) fn push_note(text: String) {
    match this_process() {
        Some(c) => c.note(text),
        None => warn(&text),
    }
}

impl Collector {
    fn note(&self, text: String) {
        warn(&text);
        if let Ok(mut p) = self.pending.lock() {
            p.buf.push(&Record::Note { text });
        }
    }

    /// Start-up failed after the spool was opened (and whatever was enabled
    /// has been disabled again): writes why and the end record; nothing more
    /// is recorded.
    /// Called inside `InitializeInjection`, so it makes no CUDA or CUPTI call.
    fn abandon(&self, why: &str) {
        let text = format!("{}{why}", fikit_spool::STOPPED_PREFIX);
        warn(&text);
        let Ok(mut file) = self.file.lock() else {
            return;
        };
        let mut out = match self.pending.lock() {
            Ok(mut p) => p.buf.take(),
            Err(_) => SpoolBuffer::new(),
        };
        out.push(&Record::Note { text });
        out.push(&Record::End(End {
            dropped_records: 0,
            incomplete_records: 0,
        }));
        if let Some(w) = file.as_mut()
            && let Err(e) = w.write_buffer(&out)
        {
            warn(&format!("cannot write the spool: {e}"));
        }
        self.finished.store(true, Ordering::Release);
        *file = None;
    }

    /// Looks for the program's CUDA runtime version once, from the flushing
    /// thread's first flush or at exit (never inside `InitializeInjection`).
    fn write_cuda_version(&self) {
        if self
            .version_written
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return;
        }
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        let rec = match crate::runtime::runtime_version(&maps) {
            Ok(v) => Record::CudaRuntime { version: v },
            Err(why) => Record::Note {
                text: format!(
                    "the program's CUDA runtime version is unknown ({why}); \
                     fikit.cuda_version is the driver's"
                ),
            },
        };
        if let Ok(mut p) = self.pending.lock() {
            p.buf.push(&rec);
        }
    }

    /// Writes device properties once the driver answers.
    fn write_devices(&self) {
        if self.devices_written.load(Ordering::Relaxed) {
            return;
        }
        let Ok(n) = cupti::device_count() else {
            return;
        };
        let mut recs = Vec::new();
        for i in 0..n {
            match cupti::device_properties(i as i32) {
                Ok(d) => recs.push(Record::Device(d)),
                Err(_) => return,
            }
        }
        if let Ok(mut p) = self.pending.lock() {
            for r in &recs {
                p.buf.push(r);
            }
        }
        self.devices_written.store(true, Ordering::Relaxed);
    }

    /// Asks CUPTI for completed buffers and appends all pending records to the spool.
    fn flush(&self, forced: bool, end: bool) {
        let Ok(mut file) = self.file.lock() else {
            return;
        };
        if self.finished.load(Ordering::Acquire) {
            return;
        }
        self.write_devices();
        self.write_cuda_version();
        if (forced || self.flush_all)
            && let Err(e) = cupti::flush_all(forced)
            && forced
        {
            warn(&e.to_string());
        }
        let mut out = match self.pending.lock() {
            Ok(mut p) => p.buf.take(),
            Err(_) => return,
        };
        let dropped = self.dropped.load(Ordering::Relaxed);
        if dropped > 0 {
            out.push(&Record::Dropped { total: dropped });
        }
        if end {
            out.push(&Record::End(End {
                dropped_records: dropped,
                incomplete_records: self.incomplete.load(Ordering::Relaxed),
            }));
        }
        if let Some(w) = file.as_mut()
            && let Err(e) = w.write_buffer(&out)
        {
            warn(&format!("cannot write the spool: {e}; recording stops"));
            *file = None;
        }
        if end {
            self.finished.store(true, Ordering::Release);
            *file = None;
        }
    }

    fn push_api(&self, p: &mut Pending, a: fikit_spool::Api) {
        let key = (a.domain, a.cbid);
        if !p.api_names_written.contains(&key) {
            p.api_names_written.insert(key);
            let name = self
                .api_names
                .get(&key)
                .cloned()
                .unwrap_or_else(|| format!("cbid{}", a.cbid));
            p.buf.push(&Record::ApiName {
                domain: a.domain,
                cbid: a.cbid,
                name,
            });
        }
        p.buf.push(&Record::Api(a));
    }

    fn add_records(&self, buffer: *mut u8, valid: usize) {
        let Ok(mut p) = self.pending.lock() else {
            return;
        };
        let p = &mut *p;
        let mut rec: *mut sys::CUpti_Activity = std::ptr::null_mut();
        loop {
            // SAFETY: `buffer` holds `valid` bytes of records from CUPTI; `rec`
            // is the iteration cursor CUPTI expects.
            if !unsafe { cupti::next_record(buffer, valid, &mut rec) } {
                break;
            }
            // SAFETY: CUPTI returned a pointer to a whole record in the live buffer.
            match unsafe { activity::decode(rec) } {
                Activity::Kernel { mut kernel, name } => {
                    let next = p.names.len() as u32;
                    let id = match p.names.get(name) {
                        Some(&id) => id,
                        None => {
                            p.names.insert(name.into(), next);
                            p.buf.push(&Record::String {
                                id: next,
                                text: String::from_utf8_lossy(name).into_owned(),
                            });
                            next
                        }
                    };
                    kernel.name_id = id;
                    p.buf.push(&Record::Kernel(kernel));
                }
                Activity::MemOp(m) => p.buf.push(&Record::MemOp(m)),
                // The collector's own calls (the flushing thread's) are not the program's.
                Activity::Api(a) if a.thread_id == FLUSH_TID.load(Ordering::Relaxed) => {}
                Activity::Api(a) => self.push_api(p, a),
                Activity::Sync(s) => p.buf.push(&Record::Sync(s)),
                Activity::Incomplete => {
                    self.incomplete.fetch_add(1, Ordering::Relaxed);
                }
                Activity::Other(_) => {}
            }
        }
    }
}

fn sync_index(domain: Domain, cbid: u32) -> usize {
    let base = match domain {
        Domain::Runtime => 0,
        Domain::Driver => cupti::MAX_CBID as usize,
    };
    base + cbid as usize
}

/// The CUPTI callback for the selected API functions: stamps entry, and at
/// exit appends the call (and, for a synchronization, where it waited).
unsafe extern "C" fn api_callback(
    _userdata: *mut std::ffi::c_void,
    domain: sys::CUpti_CallbackDomain,
    cbid: sys::CUpti_CallbackId,
    cbdata: *const std::ffi::c_void,
) {
    let _ = std::panic::catch_unwind(|| {
        if FORKED.load(Ordering::Relaxed) || cbdata.is_null() {
            return;
        }
        let Some(c) = COLLECTOR.get() else { return };
        let domain = match domain as u32 {
            2 => Domain::Runtime,
            1 => Domain::Driver,
            _ => return,
        };
        let d = cbdata.cast::<sys::CUpti_CallbackData>();
        // SAFETY: for API domains CUPTI passes a CUpti_CallbackData; the
        // enum-typed site is read as its raw u32.
        let (site, scratch) = unsafe {
            (
                std::ptr::addr_of!((*d).callbackSite).cast::<u32>().read(),
                std::ptr::addr_of!((*d).correlationData).read(),
            )
        };
        match domain {
            Domain::Driver if IN_RUNTIME.with(|f| f.get()) => return,
            Domain::Runtime => IN_RUNTIME.with(|f| f.set(site == 0)),
            Domain::Driver => {}
        }
        if scratch.is_null() {
            return;
        }
        let Ok(now) = cupti::timestamp() else { return };
        if site == 0 {
            // SAFETY: CUPTI gives each call an 8-byte scratch slot kept from entry to exit.
            unsafe { scratch.write(now) };
            return;
        }
        // SAFETY: as above; written at entry.
        let start = unsafe { scratch.read() };
        // SAFETY: plain fields of the CUpti_CallbackData.
        let (correlation, context_uid, ctx, params) = unsafe {
            (
                (*d).correlationId,
                (*d).contextUid,
                (*d).context,
                (*d).functionParams,
            )
        };
        let api = fikit_spool::Api {
            domain,
            cbid,
            start,
            end: now,
            thread_id: thread_id(),
            correlation,
        };
        let sync_type = c
            .sync_types
            .get(sync_index(domain, cbid))
            .copied()
            .unwrap_or(0);
        let sync = (sync_type != 0).then(|| {
            // Stream synchronize and stream wait event take the stream first.
            let stream =
                if (sync_type == 2 || sync_type == 3) && !params.is_null() && !ctx.is_null() {
                    // SAFETY: the parameter struct of these functions starts with the stream handle.
                    let s = unsafe {
                        params
                            .cast::<cudarc::driver::sys::CUstream>()
                            .read_unaligned()
                    };
                    // SAFETY: context and stream are the ones this call received.
                    unsafe { cupti::stream_id(ctx, s) }
                } else {
                    None
                };
            Record::SyncCall {
                correlation,
                sync_type: u32::from(sync_type),
                context: context_uid,
                stream,
            }
        });
        if let Ok(mut p) = c.pending.lock() {
            c.push_api(&mut p, api);
            if let Some(s) = sync {
                p.buf.push(&s);
            }
        }
    });
}

/// The flushing thread's OS thread id (its driver and runtime calls are not recorded).
static FLUSH_TID: AtomicU64 = AtomicU64::new(u64::MAX);

fn flush_loop() {
    FLUSH_TID.store(thread_id(), Ordering::Relaxed);
    let Some(c) = COLLECTOR.get() else { return };
    loop {
        std::thread::sleep(if c.flush_all {
            c.flush_period
        } else {
            c.flush_period / 2
        });
        if c.pid != getpid() || c.finished.load(Ordering::Acquire) {
            return;
        }
        let r = std::panic::catch_unwind(|| c.flush(false, false));
        if r.is_err() {
            warn("internal error in the flushing thread; recording stops");
            return;
        }
    }
}

extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(|| {
        if let Some(c) = this_process() {
            c.flush(true, true);
        }
    });
}

/// Flushes everything and writes the final record now (also done at exit).
pub fn finish() {
    if let Some(c) = this_process() {
        c.flush(true, true);
    }
}

fn buffer_layout() -> Option<std::alloc::Layout> {
    std::alloc::Layout::from_size_align(BUFFER_SIZE, BUFFER_ALIGN).ok()
}

unsafe extern "C" fn buffer_requested(
    buffer: *mut *mut u8,
    size: *mut usize,
    max_num_records: *mut usize,
) {
    let r = std::panic::catch_unwind(|| {
        let p = match buffer_layout() {
            // SAFETY: the layout has a non-zero size.
            Some(l) => unsafe { std::alloc::alloc(l) },
            None => std::ptr::null_mut(),
        };
        // SAFETY: CUPTI passes valid out pointers.
        unsafe {
            *buffer = p;
            *size = if p.is_null() { 0 } else { BUFFER_SIZE };
            *max_num_records = 0;
        }
    });
    if r.is_err() {
        // SAFETY: as above; a null buffer makes CUPTI drop records rather than crash.
        unsafe {
            *buffer = std::ptr::null_mut();
            *size = 0;
        }
    }
}

unsafe extern "C" fn buffer_completed(
    ctx: ds::CUcontext,
    stream_id: u32,
    buffer: *mut u8,
    _size: usize,
    valid: usize,
) {
    let _ = std::panic::catch_unwind(|| {
        if buffer.is_null() {
            return;
        }
        if let Some(c) = this_process() {
            if valid > 0 {
                c.add_records(buffer, valid);
            }
            // SAFETY: ctx and stream id are the ones CUPTI passed to this callback.
            if let Ok(n) = unsafe { cupti::dropped_records(ctx, stream_id) }
                && n > 0
            {
                c.dropped.fetch_add(n, Ordering::Relaxed);
            }
        }
    });
    if !buffer.is_null()
        && let Some(l) = buffer_layout()
    {
        // SAFETY: every buffer CUPTI completes was allocated by `buffer_requested`
        // with this layout.
        unsafe { std::alloc::dealloc(buffer, l) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_modes() {
        assert_eq!(ApiSource::parse(None), ApiSource::ActivitySelected);
        assert_eq!(
            ApiSource::parse(Some("selected")),
            ApiSource::ActivitySelected
        );
        assert_eq!(ApiSource::parse(Some("callback")), ApiSource::Callback);
        assert_eq!(
            ApiSource::parse(Some("activity")),
            ApiSource::ActivitySelected
        );
        assert_eq!(ApiSource::parse(Some("all")).mode(), ApiMode::All);
        assert_eq!(ApiSource::parse(Some("none")).mode(), ApiMode::None);
        assert_eq!(ApiSource::parse(Some("latency")), ApiSource::Latency);
        assert_eq!(ApiSource::parse(Some("runtime")).mode(), ApiMode::Selected);
        assert_eq!(ApiSource::parse(Some("driver")), ApiSource::ActivityDriver);
    }

    #[test]
    fn host_facts() {
        assert!(!command_line().is_empty());
        assert!(realtime_ns() > 1_600_000_000_000_000_000);
        let _ = hostname();
    }
}
