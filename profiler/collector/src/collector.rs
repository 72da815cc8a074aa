//! The running collector: CUPTI setup at start-up, the recording plan, and
//! how records go from CUPTI's buffers into the spool. Its settings
//! come from the environment (`settings.rs`); its entry points from C
//! (CUPTI's callbacks, the flushing thread, the exit handler) are in
//! `callbacks.rs`.

mod callbacks;
mod settings;

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use cudarc::cupti::sys;
use fikit_protocol::{CUPTI_UNCHECKED_ENV, TEST_FAIL_START_ENV};
use fikit_spool::{Domain, End, ProcessStart, Record, SpoolBuffer, SpoolWriter};

use crate::activity::{self, Activity};
use crate::cupti;
use crate::layout;
use crate::switch::{Plan, Step, Switches, Undo, switch_on};
use crate::{env_var, warn};
use callbacks::{FLUSH_TID, api_callback, at_exit, buffer_completed, buffer_requested, flush_loop};
pub use settings::ApiSource;
use settings::Settings;

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
                "CUPTI_ERROR_INVALID_KIND (injected by {TEST_FAIL_START_ENV}=1)"
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
    let mut notes = load_notes;
    let settings = Settings::from_env(gate.is_some(), &mut notes);
    let source = settings.source;

    let cupti_version = cupti::version().map_err(|e| e.to_string())?;
    // A libcupti whose record layouts were never checked is not used at all.
    let refused = match layout::check(
        cupti_version,
        env_var(CUPTI_UNCHECKED_ENV).as_deref() == Some("1"),
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
        flush_period_ms: u32::try_from(settings.flush_ms / 2).unwrap_or(50).max(1),
    };
    // From the subscription on, every step is undone if start-up fails.
    let mut undo = Undo::new(&switches);
    let handle = subscribe(gate, refused.is_none(), source, &mut undo, &mut notes);

    // API names, resolved now so the buffer callbacks never call back into CUPTI.
    let (api_names, sync_types) = if refused.is_none() {
        api_tables()
    } else {
        (HashMap::new(), vec![0u8; 2 * cupti::MAX_CBID as usize])
    };

    let (path, file) = create_spool(&settings.dir, pid)?;
    let mut writer =
        SpoolWriter::new(file).map_err(|e| format!("cannot write {}: {e}", path.display()))?;

    let cupti_ts = cupti::timestamp().map_err(|e| e.to_string())?;
    let real = realtime_ns();
    let start = ProcessStart {
        pid,
        // SAFETY: getppid has no preconditions.
        ppid: unsafe { libc::getppid() } as u32,
        job: settings.job,
        priority: settings.priority,
        command_line: command_line(),
        host: hostname(),
        cupti_timestamp_ns: cupti_ts,
        realtime_ns: real,
        cupti_version,
        api_mode: source.mode(),
        collector: format!("fikit-collector {}", env!("CARGO_PKG_VERSION")),
    };
    writer
        .write_buffer(&first_records(start, &notes, refused.as_deref()))
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
        flush_period: Duration::from_millis(settings.flush_ms),
        flush_all: settings.flush_all,
    };
    if COLLECTOR.set(collector).is_err() {
        return Err("collector started twice".into());
    }
    let c = COLLECTOR.get().ok_or("collector missing")?;
    start_recording(c, undo, source, settings.sync_activity, handle.is_some());
    Ok(())
}

/// Takes CUPTI's subscription for the recording (none when `gate`, the
/// gate's, is given, or when the libcupti was refused: `usable` false) and
/// asks for OS thread ids; what fails goes to `notes`.
fn subscribe(
    gate: Option<sys::CUpti_SubscriberHandle>,
    usable: bool,
    source: ApiSource,
    undo: &mut Undo<'_, Cupti>,
    notes: &mut Vec<String>,
) -> Option<sys::CUpti_SubscriberHandle> {
    let mut handle = None;
    if let Some(h) = gate {
        // The gate's subscription: unsubscribing it belongs to no undo.
        handle = Some(h);
        if let Err(e) = cupti::use_system_thread_ids() {
            notes.push(format!("{e}; thread ids are CUPTI's default"));
        }
    } else if usable {
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
    handle
}

/// Every API function's name by (domain, callback id), and the CUPTI
/// synchronization type of each callback id ([`sync_index`]).
fn api_tables() -> (HashMap<(Domain, u32), String>, Vec<u8>) {
    let mut api_names = HashMap::new();
    let mut sync_types = vec![0u8; 2 * cupti::MAX_CBID as usize];
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
    (api_names, sync_types)
}

/// Creates this process's spool in `dir`: a new file, never an existing one.
/// A process that execs another CUDA program keeps its pid, and the first
/// program's spool must survive.
fn create_spool(dir: &Path, pid: u32) -> Result<(PathBuf, File), String> {
    (0u32..1000)
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
        })
}

/// The spool's first records: the start record and `notes`; when the
/// libcupti was `refused`, why, and the end record (nothing was switched
/// on, and the spool is finished now).
fn first_records(start: ProcessStart, notes: &[String], refused: Option<&str>) -> SpoolBuffer {
    let mut first = SpoolBuffer::new();
    first.push(&Record::Start(start));
    for n in notes {
        first.push(&Record::Note { text: n.clone() });
    }
    if let Some(why) = refused {
        // Nothing was switched on: the spool says why and is finished now.
        let text = format!("{}{why}", fikit_spool::STOPPED_PREFIX);
        warn(&text);
        first.push(&Record::Note { text });
        first.push(&Record::End(End {
            dropped_records: 0,
            incomplete_records: 0,
        }));
    }
    first
}

/// Starts recording into `c`, the collector just installed: the buffer
/// callbacks, the fork and exit handlers and the flushing thread, then what
/// [`recording_plan`] switches on. A failure abandons the spool (after
/// `undo`), the program runs on.
fn start_recording(
    c: &'static Collector,
    undo: Undo<'_, Cupti>,
    source: ApiSource,
    sync_activity: bool,
    subscribed: bool,
) {
    // Everything that can fail without touching CUPTI's recording comes
    // before any activity is enabled.
    if let Err(e) = cupti::register_buffer_callbacks(Some(buffer_requested), Some(buffer_completed))
    {
        c.abandon(&undo_now(undo, e.to_string()));
        return;
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
        return;
    }

    let plan = recording_plan(source, sync_activity, subscribed, c.flush_all, &c.api_names);
    if source == ApiSource::Callback && !subscribed {
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
    if env_var(TEST_FAIL_START_ENV).as_deref() == Some("1") {
        // A required kind after the real ones, which `Cupti::on` rejects.
        kinds.push((TEST_FAIL_KIND, true));
    }
    plan.kinds = kinds;
    plan
}

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

/// Flushes everything and writes the final record now (also done at exit).
pub fn finish() {
    if let Some(c) = this_process() {
        c.flush(true, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_facts() {
        assert!(!command_line().is_empty());
        assert!(realtime_ns() > 1_600_000_000_000_000_000);
        let _ = hostname();
    }
}
