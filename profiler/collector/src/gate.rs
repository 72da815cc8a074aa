//! The launch gate, when `fikit-run` starts the program: every kernel launch
//! passes [`fikit_gate::Gate`] at the launch call's entry (a CUPTI driver-API
//! callback on the launching thread, so a launch that must wait blocks right
//! there), and a launch the gate marks gets a stream write of its sequence
//! number queued behind it, so the GPU itself says when it is done.
//!
//! Settings, from `fikit-run`: `FIKIT_GATE` (the control file), `FIKIT_GATE_JOB`
//! (this job's index), `FIKIT_GATE_TABLE` (its prediction table; without one
//! every kernel is unknown), `FIKIT_GATE_NAP_US` (how long a wait older than
//! 1 ms sleeps between looks, µs; unset or 0: it yields the core instead). The first CUDA process of a job takes the job's
//! slot; another process of the same job runs ungated and says so. With
//! the control block's `ab_period_ms` set (`fikit-lab gate-ab`), a thread
//! turns the launch callbacks off and on in phases ([`fikit_gate::ab`]).
//!
//! Two ways to see launches. With the preloaded shim in the process
//! (`libfikit_shim.so`, `fikit-run scenario --launch-hook preload`) the gate
//! registers hooks that the shim's wrappers of the driver's launch entry
//! points call, and CUPTI's launch callbacks stay off; otherwise those
//! callbacks call it. Either way the synchronizations come through CUPTI.
//! The slot's `launch_path` says which.
//!
//! Which launches are gated: `cuLaunchKernel`, `cuLaunchKernelEx`,
//! `cuLaunchCooperativeKernel` and `cuGraphLaunch` (and their per-thread
//! stream forms), the driver calls the runtime's launches end in. A graph
//! launch is one unit whose kernel is unknown to the table. Launches into a
//! stream that is capturing a graph do not run now and are not gated (the
//! driver is asked once the program has begun a capture, not before). The
//! blocking synchronizations (`cuCtxSynchronize`, `cuStreamSynchronize`,
//! `cuEventSynchronize`, `cuMemcpyDtoH`, each in every version the driver
//! has, e.g. CUDA 13's `cuCtxSynchronize_v2`) are stamped when they return.
//!
//! The callback runs on every launch of the program, so it keeps to atomics,
//! a table indexed by callback id and one cache lookup per launch; a forked
//! child (which shares no GPU work with the gate) is told apart by a
//! `pthread_atfork` flag, not a `getpid` per call.

use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use cudarc::cupti::sys;
use cudarc::driver::sys as ds;
use fikit_gate::block::{TIMED_EVERY, launch_path};
use fikit_gate::{Block, Gate, GatePolicy, RealClock, Table, now_ns};

use fikit_protocol::{GATE_ENV, GATE_JOB_ENV, GATE_NAP_US_ENV, GATE_TABLE_ENV};

use crate::{cupti, env_var, warn};

/// What a driver callback id is to the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Call {
    /// `cuLaunchKernel` (`ptsz`: the per-thread default stream form).
    Kernel { ptsz: bool },
    /// `cuLaunchKernelEx`.
    KernelEx { ptsz: bool },
    /// `cuGraphLaunch`.
    Graph { ptsz: bool },
    /// A blocking synchronization.
    Sync,
    /// `cuStreamBeginCapture` (any form, `…ToGraph` too): from the first,
    /// launches are checked for a capturing stream.
    BeginCapture,
}

/// The gate's call for a driver function name: the name without its
/// per-thread stream suffix (`_ptsz`, `_ptds`) and version suffix (`_v2`).
pub(crate) fn call_of(name: &str) -> Option<Call> {
    let (name, ptsz) = match name
        .strip_suffix("_ptsz")
        .or_else(|| name.strip_suffix("_ptds"))
    {
        Some(n) => (n, true),
        None => (name, false),
    };
    let base = match name.rsplit_once("_v") {
        Some((b, v)) if !v.is_empty() && v.bytes().all(|c| c.is_ascii_digit()) => b,
        _ => name,
    };
    match base {
        "cuLaunchKernel" | "cuLaunchCooperativeKernel" => Some(Call::Kernel { ptsz }),
        "cuLaunchKernelEx" => Some(Call::KernelEx { ptsz }),
        "cuGraphLaunch" => Some(Call::Graph { ptsz }),
        "cuCtxSynchronize" | "cuStreamSynchronize" | "cuEventSynchronize" | "cuMemcpyDtoH" => {
            Some(Call::Sync)
        }
        "cuStreamBeginCapture" | "cuStreamBeginCaptureToGraph" => Some(Call::BeginCapture),
        _ => None,
    }
}

/// A kernel function's `(mangled name, static shared bytes, registers per thread)`.
type Identity = (String, u32, u32);

struct Gated {
    block: &'static Block,
    gate: Gate<'static>,
    me: usize,
    /// The gate's call per driver callback id.
    calls: Vec<Option<Call>>,
    /// The device address of this job's `done` word, once registered (None: it failed).
    done_addr: OnceLock<Option<ds::CUdeviceptr>>,
    /// Kernel keys of launched functions.
    ids: Identities,
    warned_timeout: AtomicBool,
    /// How a wait pauses between looks.
    clock: RealClock,
}

/// Set in a child forked from the gated process: the child's launches are
/// its own, not the job's.
static FORKED: AtomicBool = AtomicBool::new(false);

extern "C" fn forked_child() {
    FORKED.store(true, Ordering::Relaxed);
}

// SAFETY: the device address and function handles are plain integers here;
// everything shared is behind atomics or a mutex.
unsafe impl Send for Gated {}
// SAFETY: as above.
unsafe impl Sync for Gated {}

static GATED: OnceLock<Gated> = OnceLock::new();

/// Starts the gate when `FIKIT_GATE` is set: opens the control block, takes
/// the job's slot, reads the table, subscribes to CUPTI with the gate's
/// callback and enables it on the gated calls. Returns the subscription (the
/// recording collector, when it runs too, uses it) or `None` when not gated.
/// Notes for the trace go to `notes`.
pub fn start(notes: &mut Vec<String>) -> Result<Option<sys::CUpti_SubscriberHandle>, String> {
    let Some(path) = env_var(GATE_ENV) else {
        return Ok(None);
    };
    let block = Block::open(Path::new(&path)).map_err(|e| format!("gate: {e}"))?;
    let me = env_var(GATE_JOB_ENV)
        .and_then(|j| j.parse::<usize>().ok())
        .filter(|&j| j < block.jobs())
        .ok_or_else(|| format!("gate: {GATE_JOB_ENV} is not a job of {path}"))?;
    let pid = std::process::id();
    if let Err(holder) =
        block
            .slot(me)
            .pid
            .compare_exchange(0, pid, Ordering::SeqCst, Ordering::SeqCst)
    {
        let n = format!(
            "gate: process {holder} of this job holds its slot; this process ({pid}) is not gated"
        );
        warn(&n);
        notes.push(n);
        return Ok(None);
    }
    let table = match env_var(GATE_TABLE_ENV) {
        None => Table::default(),
        Some(t) => std::fs::read_to_string(&t)
            .map_err(|e| e.to_string())
            .and_then(|s| Table::parse(&s))
            .map_err(|e| format!("gate: {t}: {e}"))?,
    };
    let nap_us = match env_var(GATE_NAP_US_ENV) {
        None => 0,
        Some(v) => v
            .parse::<u64>()
            .map_err(|_| format!("gate: {GATE_NAP_US_ENV}={v:?} is not a whole number of µs"))?,
    };
    let handle = cupti::subscribe_with(Some(gate_callback)).map_err(|e| format!("gate: {e}"))?;
    let calls: Vec<Option<Call>> = (0..cupti::MAX_CBID)
        .map(|cbid| cupti::callback_name(false, cbid).and_then(|n| call_of(&n)))
        .collect();
    // SAFETY: registers a handler that only stores to a static atomic.
    unsafe { libc::pthread_atfork(None, None, Some(forked_child)) };
    let block: &'static Block = Box::leak(Box::new(block));
    let gated = Gated {
        block,
        gate: Gate::new(block, me, table),
        me,
        calls,
        done_addr: OnceLock::new(),
        ids: Identities::new("gate", false),
        warned_timeout: AtomicBool::new(false),
        clock: RealClock {
            nap_ns: nap_us.saturating_mul(1_000),
        },
    };
    let ids: Vec<u32> = (0..cupti::MAX_CBID)
        .filter(|&i| gated.calls[i as usize].is_some())
        .collect();
    if GATED.set(gated).is_err() {
        return Err("gate started twice".into());
    }
    // Launches through the preloaded shim when the program has it
    // (`fikit-run scenario --launch-hook preload`) and it takes the gate's hooks,
    // else through CUPTI's callbacks.
    let found = shim_registration();
    // SAFETY: SHIM_HOOKS is a static whose functions catch every panic.
    let shim = found.filter(|set| unsafe { set(&SHIM_HOOKS) } == SHIM_HOOKS_VERSION);
    if shim.is_none() && found.is_some() {
        let n = "gate: the preloaded fikit shim is of another version; launches through CUPTI";
        warn(n);
        notes.push(n.into());
    }
    let is_launch = |i: u32| {
        !matches!(
            GATED.get().and_then(|g| g.calls[i as usize]),
            Some(Call::Sync | Call::BeginCapture) | None
        )
    };
    for &cbid in &ids {
        if shim.is_some() && is_launch(cbid) {
            continue;
        }
        // SAFETY: the handle `subscribe_with` just returned.
        unsafe { cupti::enable_callback(handle, false, cbid, true) }
            .map_err(|e| format!("gate: {e}"))?;
    }
    let path = match shim {
        Some(_) => {
            notes.push("gate: launches through the preloaded shim".into());
            // SAFETY: registers a handler that reads the shim's counter and
            // stores it in the block, mapped for the process's life.
            unsafe { libc::atexit(count_unwrapped) };
            launch_path::SHIM
        }
        None => launch_path::CUPTI,
    };
    block.slot(me).launch_path.store(path, Ordering::SeqCst);
    if block.header().ab_period_ms.load(Ordering::SeqCst) > 0 {
        let flip = match shim {
            Some(set) => Flip::Shim(set),
            None => Flip::Cupti(
                handle as usize,
                ids.into_iter().filter(|&i| is_launch(i)).collect(),
            ),
        };
        // SAFETY: registers a handler that only stores to a static atomic.
        unsafe { libc::atexit(stop_ab) };
        std::thread::Builder::new()
            .name("fikit-gate-ab".into())
            .spawn(move || {
                let _ = std::panic::catch_unwind(|| ab_loop(&flip));
            })
            .map_err(|e| format!("gate: cannot start the A/B thread: {e}"))?;
        notes.push(format!(
            "gate: A/B, launch callbacks off and on in phases of {} ms",
            block.header().ab_period_ms.load(Ordering::SeqCst)
        ));
    }
    Ok(Some(handle))
}

/// How the A/B turns the gate's launch path off and on.
enum Flip {
    /// CUPTI's launch callbacks `.1` of subscription `.0`.
    Cupti(usize, Vec<u32>),
    /// The preloaded shim's hooks.
    Shim(ShimSetHooks),
}

/// The gate's A/B ([`fikit_gate::ab`]): once the job's first launch has
/// gone and one more phase has passed with the gate on, turns the launch
/// path `flip` off and on in alternate phases, until the run aborts. A
/// launch in flight across a flip may miss its exit callback (harmless for
/// the job alone that an A/B runs), or its entry, and then its exit is
/// ignored.
fn ab_loop(flip: &Flip) {
    let Some(g) = GATED.get() else { return };
    let header = g.block.header();
    let slot = g.block.slot(g.me);
    let period_ns = header.ab_period_ms.load(Ordering::SeqCst) as i64 * 1_000_000;
    let aborted = || header.abort.load(Ordering::Relaxed) != 0;
    let sleep_until = |t: i64| {
        let now = now_ns();
        if t > now {
            std::thread::sleep(std::time::Duration::from_nanos((t - now) as u64));
        }
    };
    let first = loop {
        if aborted() {
            return;
        }
        match slot.first_launch_ns.load(Ordering::SeqCst) {
            0 => std::thread::sleep(std::time::Duration::from_millis(10)),
            f => break f,
        }
    };
    let start = (first + period_ns).max(now_ns());
    slot.ab_start_ns.store(start, Ordering::SeqCst);
    for phase in 0u64.. {
        let at = start + phase as i64 * period_ns;
        sleep_until(at);
        if AB_STOP.load(Ordering::SeqCst) {
            return;
        }
        AB_FLIPS.fetch_add(1, Ordering::Relaxed);
        let on = fikit_gate::ab::is_on(phase) || aborted();
        match flip {
            Flip::Cupti(handle, launches) => {
                for &cbid in launches {
                    // SAFETY: the live subscription the gate made; CUPTI allows
                    // enabling and disabling callbacks from any thread.
                    if let Err(e) = unsafe {
                        cupti::enable_callback(
                            *handle as sys::CUpti_SubscriberHandle,
                            false,
                            cbid,
                            on,
                        )
                    } {
                        warn(&format!("gate: A/B stopped: {e}"));
                        return;
                    }
                }
            }
            Flip::Shim(set) => {
                let hooks: *const ShimHooks = if on { &SHIM_HOOKS } else { std::ptr::null() };
                // SAFETY: the shim's registration; SHIM_HOOKS is a static.
                unsafe { set(hooks) };
            }
        }
        if let Some(f) = g.block.flips().get(phase as usize) {
            f.store(now_ns(), Ordering::SeqCst);
        }
        if aborted() {
            return;
        }
    }
}

/// The kernel keys of launched functions: each function handle's
/// `(mangled name, static shared bytes, registers)`, asked of the driver once.
pub(crate) struct Identities {
    functions: Mutex<HashMap<usize, Option<Identity>>>,
    /// Keys of NCCL's kernels (names starting `nccl`), which may wait for
    /// launches still to come (the metrics pass never drains behind one);
    /// `None`: not kept (the gate's launch path does not need them).
    nccl: Option<Mutex<std::collections::HashSet<u64>>>,
    warned: AtomicBool,
    /// Who warns (`gate`, `metrics`).
    who: &'static str,
}

impl Identities {
    /// Identities for `who` (in warnings); `keep_nccl`: keep the keys of
    /// NCCL's kernels for [`Identities::is_nccl`].
    pub(crate) fn new(who: &'static str, keep_nccl: bool) -> Self {
        Identities {
            functions: Mutex::new(HashMap::new()),
            nccl: keep_nccl.then(|| Mutex::new(Default::default())),
            warned: AtomicBool::new(false),
            who,
        }
    }

    /// True for a key of an NCCL kernel seen by [`Identities::key`] (with
    /// the keys kept; else never).
    pub(crate) fn is_nccl(&self, key: u64) -> bool {
        self.nccl
            .as_ref()
            .is_some_and(|n| n.lock().map(|s| s.contains(&key)).unwrap_or(true))
    }

    /// The kernel key of a launch of `f` with this shape; `None` where the
    /// driver could not name the function.
    pub(crate) fn key(
        &self,
        f: ds::CUfunction,
        grid: [u32; 3],
        block: [u32; 3],
        dynamic: u32,
    ) -> Option<u64> {
        let mut fs = self.functions.lock().ok()?;
        let id = fs.entry(f as usize).or_insert_with(|| {
            // SAFETY: `f` is the function handle this launch call received.
            match unsafe { cupti::function_identity(f) } {
                Ok(id) => Some(id),
                Err(e) => {
                    if !self.warned.swap(true, Ordering::Relaxed) {
                        warn(&format!(
                            "{}: a launched function has no name or attributes ({e}); \
                             its launches count as unknown kernels",
                            self.who
                        ));
                    }
                    None
                }
            }
        });
        let (name, shared, regs) = id.as_ref()?;
        let key = fikit_trace_api::kernel_key(name, grid, block, *shared, dynamic, *regs);
        if let Some(n) = &self.nccl
            && name.starts_with("nccl")
            && let Ok(mut n) = n.lock()
        {
            n.insert(key);
        }
        Some(key)
    }
}

/// The stream and kernel key of a launch, from its parameters.
///
/// # Safety
/// `params` must be the parameter struct of `call`, as CUPTI passed it.
pub(crate) unsafe fn launch_of(
    ids: &Identities,
    call: Call,
    params: *const c_void,
) -> (ds::CUstream, Option<u64>) {
    let (stream, key, ptsz) = match call {
        Call::Kernel { ptsz } => {
            // SAFETY: cuLaunchKernel's (and the cooperative form's) parameters start so.
            let p = unsafe { &*params.cast::<sys::cuLaunchKernel_params>() };
            let key = ids.key(
                p.f.cast::<ds::CUfunc_st>(),
                [p.gridDimX, p.gridDimY, p.gridDimZ],
                [p.blockDimX, p.blockDimY, p.blockDimZ],
                p.sharedMemBytes,
            );
            (p.hStream.cast::<ds::CUstream_st>(), key, ptsz)
        }
        Call::KernelEx { ptsz } => {
            // SAFETY: cuLaunchKernelEx's parameters.
            let p = unsafe { &*params.cast::<sys::cuLaunchKernelEx_params>() };
            if p.config.is_null() {
                return (std::ptr::null_mut(), None);
            }
            // SAFETY: a non-null launch configuration the call received.
            let c = unsafe { &*p.config };
            let key = ids.key(
                p.f.cast::<ds::CUfunc_st>(),
                [c.gridDimX, c.gridDimY, c.gridDimZ],
                [c.blockDimX, c.blockDimY, c.blockDimZ],
                c.sharedMemBytes,
            );
            (c.hStream.cast::<ds::CUstream_st>(), key, ptsz)
        }
        Call::Graph { ptsz } => {
            // SAFETY: cuGraphLaunch's parameters.
            let p = unsafe { &*params.cast::<sys::cuGraphLaunch_params>() };
            (p.hStream.cast::<ds::CUstream_st>(), None, ptsz)
        }
        Call::Sync | Call::BeginCapture => (std::ptr::null_mut(), None, false),
    };
    // In a per-thread-stream call the null stream is the thread's own stream.
    let stream = if ptsz && stream.is_null() {
        CU_STREAM_PER_THREAD as ds::CUstream
    } else {
        stream
    };
    (stream, key)
}

/// `CU_STREAM_PER_THREAD` of cuda.h (a macro the bindings lack).
const CU_STREAM_PER_THREAD: usize = 0x2;

/// Scratch word flags (kept in CUPTI's per-call scratch from entry to exit).
const GATED_CALL: u64 = 1 << 40;
const MARK: u64 = 1 << 41;
const TIMED: u64 = 1 << 42;

/// Set once the program began a stream capture: until then no stream can be
/// capturing (a stream joins a capture only through one begun elsewhere),
/// so a launch skips asking the driver (a call into it on every launch).
static CAPTURE_SEEN: AtomicBool = AtomicBool::new(false);

fn on_enter(g: &Gated, call: Call, d: &sys::CUpti_CallbackData) -> u64 {
    let (timed, entered) = tick();
    // SAFETY: CUPTI passes this call's parameter struct.
    let (stream, key) = unsafe { launch_of(&g.ids, call, d.functionParams) };
    gate_enter(g, timed, entered, stream, key)
}

/// Whether this launch of the thread is timed (every TIMED_EVERY-th: two
/// more clock reads), and when it entered the gate if so.
fn tick() -> (bool, i64) {
    let timed = TICK.with(|t| {
        let n = t.get().wrapping_add(1);
        t.set(n);
        n % TIMED_EVERY == 0
    });
    (timed, if timed { now_ns() } else { 0 })
}

/// A launch into `stream` of kernel `key` at its entry, by either path:
/// the gate's decision (this may wait), returned as the scratch word its
/// exit reads.
fn gate_enter(g: &Gated, timed: bool, entered: i64, stream: ds::CUstream, key: Option<u64>) -> u64 {
    if g.block.policy() != GatePolicy::Open
        && CAPTURE_SEEN.load(Ordering::Relaxed)
        // SAFETY: the stream this launch call received, in its (current) context.
        && unsafe { cupti::is_capturing(stream) }
    {
        return 0;
    }
    let mut clock = g.clock;
    let l = g.gate.before_launch(key, &mut clock);
    if timed {
        g.gate.gate_work(entered, &l);
    }
    if l.timed_out && !g.warned_timeout.swap(true, Ordering::Relaxed) {
        warn(&format!(
            "gate: job {} waited {} ms with no job's launches or completions moving; \
             launching anyway (counted as timeouts in fikit-run's table)",
            g.me,
            g.block.header().timeout_ms.load(Ordering::Relaxed)
        ));
    }
    WENT.set((l.went_ns, AB_FLIPS.load(Ordering::Relaxed)));
    GATED_CALL | if l.mark { MARK } else { 0 } | if timed { TIMED } else { 0 } | u64::from(l.seq)
}

thread_local! {
    /// When the gate let this thread's current launch call go, ns, and
    /// [`AB_FLIPS`] then (a call's entry and exit callbacks run on its thread).
    static WENT: std::cell::Cell<(i64, u64)> = const { std::cell::Cell::new((0, 0)) };
    /// The thread's launches so far, for choosing the timed ones.
    static TICK: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Flips of the A/B so far: an exit whose entry was seen before a flip may
/// not be that entry's call (the callbacks were off in between).
static AB_FLIPS: AtomicU64 = AtomicU64::new(0);
/// Set at exit: the A/B flips no more while CUPTI and the driver shut down.
static AB_STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn stop_ab() {
    AB_STOP.store(true, Ordering::SeqCst);
}

fn on_exit(g: &Gated, call: Call, d: &sys::CUpti_CallbackData, scratch: u64) {
    gate_exit(g, scratch, true, || {
        // SAFETY: as at entry.
        unsafe { launch_of(&g.ids, call, d.functionParams) }.0
    });
}

/// A launch's exit, by either path, with its entry's scratch word; the
/// launch's stream (for a marker) from `stream`. `flipped_apart`: an exit
/// can come without its entry (CUPTI's callbacks turned on between them),
/// so one after an A/B flip since the entry is ignored; the shim always
/// pairs them.
fn gate_exit(g: &Gated, scratch: u64, flipped_apart: bool, stream: impl FnOnce() -> ds::CUstream) {
    // A timed call's own time ends here, before any marker is queued.
    let now = if scratch & TIMED != 0 { now_ns() } else { 0 };
    // No entry seen for this call on this thread since the last flip of the
    // A/B (it turned the callbacks on between the two): its scratch word is
    // not ours.
    let (went, flips) = WENT.replace((0, 0));
    let stale = flipped_apart && flips != AB_FLIPS.load(Ordering::Relaxed);
    if went == 0 || stale || scratch & GATED_CALL == 0 {
        return;
    }
    if scratch & MARK != 0 {
        mark(g, stream(), scratch as u32);
    }
    if now != 0 {
        g.gate.after_launch(went, now);
    }
}

/// The A/B's floor is on ([`fikit_gate::block::Header::ab_floor`]), from the
/// A/B's start: the first launches pass the gate, which starts the A/B.
fn floor_on(g: &Gated) -> bool {
    g.block.header().ab_floor.load(Ordering::Relaxed) != 0
        && g.block.slot(g.me).ab_start_ns.load(Ordering::Relaxed) != 0
}

/// The preloaded shim's `fikit_shim_set_hooks`.
type ShimSetHooks = unsafe extern "C" fn(*const ShimHooks) -> u32;

/// `fikit_shim::LaunchInfo` (C layout; a test holds the two alike).
#[repr(C)]
struct ShimLaunch {
    kind: u32,
    ptsz: u32,
    function: *mut c_void,
    grid: [u32; 3],
    block: [u32; 3],
    shared_bytes: u32,
    stream: *mut c_void,
}

/// `fikit_shim::Hooks` (C layout).
#[repr(C)]
struct ShimHooks {
    version: u32,
    enter: unsafe extern "C" fn(*const ShimLaunch) -> u64,
    exit: unsafe extern "C" fn(u64, c_int),
}

/// `fikit_shim::HOOKS_VERSION`.
const SHIM_HOOKS_VERSION: u32 = 1;
/// `fikit_shim::kind::GRAPH`.
const SHIM_GRAPH: u32 = 3;

static SHIM_HOOKS: ShimHooks = ShimHooks {
    version: SHIM_HOOKS_VERSION,
    enter: shim_enter,
    exit: shim_exit,
};

thread_local! {
    /// The stream of the thread's launch in progress through the shim.
    static SHIM_STREAM: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The preloaded shim's registration, when the process has the shim.
fn shim_registration() -> Option<ShimSetHooks> {
    // SAFETY: a lookup in the global scope by a constant name.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"fikit_shim_set_hooks".as_ptr()) };
    // SAFETY: the shim exports this name with this signature.
    (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, ShimSetHooks>(p) })
}

/// At exit: lookups the shim could not wrap (every slot of a signature
/// taken), whose launches the gate never saw; kept in the slot and said.
extern "C" fn count_unwrapped() {
    let _ = std::panic::catch_unwind(|| {
        let Some(g) = GATED.get() else { return };
        // SAFETY: a lookup in the global scope by a constant name.
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"fikit_shim_unwrapped".as_ptr()) };
        if p.is_null() {
            return;
        }
        // SAFETY: the shim exports this name with this signature.
        let f = unsafe { std::mem::transmute::<*mut c_void, extern "C" fn() -> u64>(p) };
        let n = f();
        g.block.slot(g.me).shim_unwrapped.store(n, Ordering::SeqCst);
        if n > 0 {
            warn(&format!(
                "gate: {n} launch entry point(s) the preloaded shim could not wrap; their launches went ungated"
            ));
        }
    });
}

/// The shim's hook at a launch's entry.
unsafe extern "C" fn shim_enter(info: *const ShimLaunch) -> u64 {
    std::panic::catch_unwind(|| {
        let Some(g) = GATED.get() else { return 0 };
        if info.is_null() || FORKED.load(Ordering::Relaxed) {
            return 0;
        }
        if floor_on(g) {
            g.gate.count_launch();
            return 0;
        }
        // SAFETY: the shim passes its launch's description, live for the call.
        let i = unsafe { &*info };
        let (timed, entered) = tick();
        let stream = if i.ptsz != 0 && i.stream.is_null() {
            CU_STREAM_PER_THREAD as ds::CUstream
        } else {
            i.stream.cast::<ds::CUstream_st>()
        };
        let key = (i.kind != SHIM_GRAPH)
            .then(|| {
                g.ids.key(
                    i.function.cast::<ds::CUfunc_st>(),
                    i.grid,
                    i.block,
                    i.shared_bytes,
                )
            })
            .flatten();
        SHIM_STREAM.set(stream as usize);
        gate_enter(g, timed, entered, stream, key)
    })
    .unwrap_or(0)
}

/// The shim's hook at a launch's exit.
unsafe extern "C" fn shim_exit(token: u64, _result: c_int) {
    let _ = std::panic::catch_unwind(|| {
        let Some(g) = GATED.get() else { return };
        if FORKED.load(Ordering::Relaxed) {
            return;
        }
        gate_exit(g, token, false, || SHIM_STREAM.get() as ds::CUstream);
    });
}

/// Queues the write of `seq` to this job's `done` behind the launch; if that
/// cannot be done, says so once and stores it from the host (the others then
/// see the launch done when it was only queued).
fn mark(g: &Gated, stream: ds::CUstream, seq: u32) {
    let addr = *g.done_addr.get_or_init(|| {
        let (p, len) = g.block.gpu_region();
        // SAFETY: the block's first page, mapped for the process's life; a
        // launch call is in progress, so its context is current.
        match unsafe { cupti::register_host(p, len) } {
            Ok(base) => Some(base + Block::done_offset(g.me) as u64),
            Err(e) => {
                warn(&format!("gate: {e}; completions are assumed at launch"));
                None
            }
        }
    });
    // SAFETY: the launch's stream; `a` from `register_host`.
    let ok = addr.is_some_and(|a| unsafe { cupti::write_after(stream, a, seq) }.is_ok());
    if !ok {
        g.block.slot(g.me).done.store(seq, Ordering::SeqCst);
    }
}

unsafe extern "C" fn gate_callback(
    _userdata: *mut c_void,
    domain: sys::CUpti_CallbackDomain,
    cbid: sys::CUpti_CallbackId,
    cbdata: *const c_void,
) {
    let _ = std::panic::catch_unwind(|| {
        let Some(g) = GATED.get() else { return };
        if domain as u32 != sys::CUpti_CallbackDomain::CUPTI_CB_DOMAIN_DRIVER_API as u32
            || cbdata.is_null()
            || FORKED.load(Ordering::Relaxed)
        {
            return;
        }
        let Some(&Some(call)) = g.calls.get(cbid as usize) else {
            return;
        };
        // SAFETY: for API domains CUPTI passes a CUpti_CallbackData, valid for the call.
        let d = unsafe { &*cbdata.cast::<sys::CUpti_CallbackData>() };
        // SAFETY: the enum-typed site read as its raw u32 (0: entry).
        let site = unsafe { std::ptr::addr_of!(d.callbackSite).cast::<u32>().read() };
        match call {
            Call::Sync => {
                if site != 0 {
                    g.gate.synced(now_ns());
                }
                return;
            }
            Call::BeginCapture => {
                // At entry: a launch into the stream may follow on another
                // thread as soon as the call returns.
                if site == 0 {
                    CAPTURE_SEEN.store(true, Ordering::SeqCst);
                }
                return;
            }
            _ => {}
        }
        if floor_on(g) {
            // The A/B's floor: count the launch (its iterations are stamped
            // by it), nothing else, at entry only.
            if site == 0 {
                g.gate.count_launch();
            }
            return;
        }
        let scratch = d.correlationData;
        if scratch.is_null() {
            return;
        }
        if site == 0 {
            let s = on_enter(g, call, d);
            // SAFETY: CUPTI's 8-byte per-call scratch slot, kept from entry to exit.
            unsafe { scratch.write(s) };
        } else {
            // SAFETY: as above; written at entry.
            let s = unsafe { scratch.read() };
            on_exit(g, call, d, s);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shims_layout_is_the_collectors() {
        use std::mem::{offset_of, size_of};
        assert_eq!(size_of::<ShimLaunch>(), size_of::<fikit_shim::LaunchInfo>());
        assert_eq!(
            offset_of!(ShimLaunch, stream),
            offset_of!(fikit_shim::LaunchInfo, stream)
        );
        assert_eq!(
            offset_of!(ShimLaunch, shared_bytes),
            offset_of!(fikit_shim::LaunchInfo, shared_bytes)
        );
        assert_eq!(
            offset_of!(ShimLaunch, function),
            offset_of!(fikit_shim::LaunchInfo, function)
        );
        assert_eq!(size_of::<ShimHooks>(), size_of::<fikit_shim::Hooks>());
        assert_eq!(
            offset_of!(ShimHooks, exit),
            offset_of!(fikit_shim::Hooks, exit)
        );
        assert_eq!(SHIM_HOOKS_VERSION, fikit_shim::HOOKS_VERSION);
        assert_eq!(SHIM_GRAPH, fikit_shim::kind::GRAPH);
    }

    #[test]
    fn gated_calls() {
        assert_eq!(
            call_of("cuLaunchKernel"),
            Some(Call::Kernel { ptsz: false })
        );
        assert_eq!(
            call_of("cuLaunchKernel_ptsz"),
            Some(Call::Kernel { ptsz: true })
        );
        assert_eq!(
            call_of("cuLaunchCooperativeKernel_ptsz"),
            Some(Call::Kernel { ptsz: true })
        );
        assert_eq!(
            call_of("cuLaunchKernelEx"),
            Some(Call::KernelEx { ptsz: false })
        );
        assert_eq!(
            call_of("cuGraphLaunch_ptsz"),
            Some(Call::Graph { ptsz: true })
        );
        assert_eq!(call_of("cuStreamSynchronize_ptsz"), Some(Call::Sync));
        assert_eq!(call_of("cuMemcpyDtoH_v2"), Some(Call::Sync));
        assert_eq!(call_of("cuMemcpyDtoH_v2_ptds"), Some(Call::Sync));
        assert_eq!(call_of("cuCtxSynchronize_v2"), Some(Call::Sync));
        assert_eq!(call_of("cuCtxSynchronize"), Some(Call::Sync));
        assert_eq!(call_of("cuStreamBeginCapture_v2"), Some(Call::BeginCapture));
        assert_eq!(
            call_of("cuStreamBeginCapture_v2_ptsz"),
            Some(Call::BeginCapture)
        );
        assert_eq!(
            call_of("cuStreamBeginCaptureToGraph"),
            Some(Call::BeginCapture)
        );
        assert_eq!(call_of("cuStreamEndCapture"), None);
        assert_eq!(call_of("cuMemcpyDtoHAsync_v2"), None);
        assert_eq!(call_of("cuCtxSynchronize_vx"), None);
        assert_eq!(call_of("cuGraphLaunchWithArguments"), None);
        assert_eq!(call_of("cuLaunchHostFunc"), None);
        assert_eq!(call_of("cuGraphLaunchWhatever"), None);
    }

    #[test]
    fn scratch_keeps_seq_and_mark() {
        let s = GATED_CALL | MARK | u64::from(u32::MAX);
        assert_eq!(s as u32, u32::MAX);
        assert_ne!(s & MARK, 0);
    }
}
