//! The metrics pass (`FIKIT_METRICS=1`, set by `fikit-profile --metrics`):
//! each kernel key's DRAM traffic and SM issue rate, from CUPTI's range
//! profiler, for the simulator's per-kernel interference term.
//!
//! The first launch of each key is bracketed by one user range: at the
//! launch call's entry the context is drained, the profiler configured and
//! started and the range opened; at its exit the context is drained again,
//! the range closed, decoded and evaluated, and a `KernelMetrics` record
//! goes to the spool. So a measured launch runs alone, and the pass's
//! timings are not representative: it is a run of its own. Not measured:
//! graph launches, cooperative launches and NCCL's kernels (which may wait
//! for launches still to come: draining behind one could hang), and any
//! launch while a stream capture is open anywhere in the process (a context
//! synchronization would break it). Launches are measured one at a time (a
//! launch that finds the profiler busy on another thread leaves its key to
//! a later launch). The metric set must fit one pass, since a launch cannot
//! be replayed from inside its own call: where the SM figure does not fit
//! the DRAM bytes' pass, the DRAM bytes are measured alone (a note says
//! so); where they do not fit one pass either, or on any failure, the pass
//! turns off with a note (the profilers disabled), and the program runs on.

use std::collections::HashMap;
use std::ffi::{CStr, c_void};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Mutex, OnceLock};

use cudarc::cupti::sys;
use cudarc::driver::sys as ds;
use fikit_spool::Record;

use crate::collector::{push_note, push_record};
use crate::cupti::{self, RangeProfiler, SetupError};
use crate::gate::{Call, Identities, call_of, launch_of};
use fikit_protocol::METRICS_ENV;

use crate::{env_var, warn};

/// The DRAM figures, in the order of the spool record's fields.
const DRAM: [&CStr; 2] = [c"dram__bytes_read.sum", c"dram__bytes_write.sum"];

/// The SM figure: per active cycle, since a
/// figure over the range's elapsed cycles is diluted by the range's own
/// overhead around a short kernel (`sm__cycles_active…pct_of_peak_sustained_elapsed`
/// gave 0.2% for a 4 µs layer norm on an H100, 2026-11-25). `sm__throughput`,
/// a maximum over many units' counters, needs 8 passes on an H100 (same
/// day; validation log).
const SM_ISSUE: &CStr = c"sm__inst_executed.avg.pct_of_peak_sustained_active";

/// The L2 traffic: bytes the L2 slices served (hits and misses), which the
/// DRAM bytes miss for a kernel whose data sits in L2 when it runs alone.
const L2: &CStr = c"lts__t_bytes.sum";

/// The metric sets tried on a context, in order; the first that fits one
/// pass is measured (the DRAM bytes always; the SM and L2 figures where
/// they fit the same pass).
pub const METRIC_SETS: [&[&CStr]; 4] = [
    &[DRAM[0], DRAM[1], SM_ISSUE, L2],
    &[DRAM[0], DRAM[1], SM_ISSUE],
    &[DRAM[0], DRAM[1], L2],
    &DRAM,
];

/// What the pass does with a driver callback id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Site {
    /// A kernel launch it may measure.
    Launch(Call),
    /// `cuStreamBeginCapture*`: one more capture open.
    BeginCapture,
    /// `cuStreamEndCapture`: one fewer.
    EndCapture,
}

struct Pass {
    /// Per driver callback id.
    sites: Vec<Option<Site>>,
    ids: Identities,
    /// Per context (by CUPTI's unique id), its profiler and the metric set
    /// it measures.
    contexts: Mutex<HashMap<u32, (RangeProfiler, &'static [&'static CStr])>>,
    /// Keys measured (or tried).
    seen: Mutex<std::collections::HashSet<u64>>,
    /// Stream captures open in the process.
    captures: AtomicI64,
    /// `cuptiProfilerInitialize` done (at the first launch measured, not
    /// inside `InitializeInjection`), or why not.
    initialized: OnceLock<Result<(), String>>,
    /// A launch is being measured.
    busy: AtomicBool,
    /// The pass stopped (a failure, or a metric set of several passes).
    off: AtomicBool,
}

static PASS: OnceLock<Pass> = OnceLock::new();

thread_local! {
    /// The key and context of the launch this thread is measuring, from its
    /// call's entry to its exit.
    static MEASURING: std::cell::Cell<Option<(u64, u32)>> = const { std::cell::Cell::new(None) };
}

/// The pass's use of a driver function, by name.
fn site_of(name: &str) -> Option<Site> {
    if name.starts_with("cuStreamEndCapture") {
        return Some(Site::EndCapture);
    }
    match call_of(name)? {
        Call::BeginCapture => Some(Site::BeginCapture),
        c @ (Call::Kernel { .. } | Call::KernelEx { .. }) if !name.contains("Cooperative") => {
            Some(Site::Launch(c))
        }
        _ => None,
    }
}

/// Subscribes to CUPTI with the pass's launch callbacks when
/// `FIKIT_METRICS=1`; the handle is the one the recording collector then
/// records through (CUPTI has one subscriber). `None` when the pass is off.
pub fn start(notes: &mut Vec<String>) -> Result<Option<sys::CUpti_SubscriberHandle>, String> {
    if env_var(METRICS_ENV).as_deref() != Some("1") {
        return Ok(None);
    }
    let handle =
        cupti::subscribe_with(Some(metrics_callback)).map_err(|e| format!("metrics: {e}"))?;
    let sites: Vec<Option<Site>> = (0..cupti::MAX_CBID)
        .map(|cbid| cupti::callback_name(false, cbid).and_then(|n| site_of(&n)))
        .collect();
    let ids: Vec<u32> = (0..cupti::MAX_CBID)
        .filter(|&i| sites[i as usize].is_some())
        .collect();
    let pass = Pass {
        sites,
        ids: Identities::new("metrics", true),
        contexts: Mutex::new(HashMap::new()),
        seen: Mutex::new(Default::default()),
        captures: AtomicI64::new(0),
        initialized: OnceLock::new(),
        busy: AtomicBool::new(false),
        off: AtomicBool::new(false),
    };
    if PASS.set(pass).is_err() {
        return Err("metrics: started twice".into());
    }
    for &cbid in &ids {
        // SAFETY: the handle `subscribe_with` just returned.
        unsafe { cupti::enable_callback(handle, false, cbid, true) }
            .map_err(|e| format!("metrics: {e}"))?;
    }
    notes.push(format!(
        "metrics pass: the first launch of each kernel key measured alone ({}); timings of this run are not representative",
        names(METRIC_SETS[0])
    ));
    Ok(Some(handle))
}

/// The metrics' names, comma-separated, for notes.
fn names(set: &[&CStr]) -> String {
    set.iter()
        .map(|m| m.to_string_lossy())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Turns the pass off for good, saying why once; the profilers are
/// disabled (dropped).
fn give_up(p: &Pass, why: String) {
    if !p.off.swap(true, Ordering::SeqCst) {
        push_note(format!("metrics pass stopped: {why}"));
    }
    p.contexts
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clear();
}

/// The figures `v` of a measurement of `set` (one of [`METRIC_SETS`], in
/// its order), as the spool record holds them: bytes rounded, SM issue
/// rate in hundredths of a percent (a figure a hair over 100% by rounding
/// is kept at 100%), a metric the set lacks `None`; an error for a figure
/// CUPTI could not evaluate (NaN) or a negative one, never a made-up value.
fn record_of(key: u64, set: &[&CStr], v: &[f64]) -> Result<Record, String> {
    if v.len() != set.len() {
        return Err(format!("{} figures for {} metrics", v.len(), set.len()));
    }
    if let Some((i, x)) = v
        .iter()
        .enumerate()
        .find(|(_, x)| !x.is_finite() || **x < 0.0)
    {
        let name = set[i].to_string_lossy();
        return Err(format!("{name} came out as {x}"));
    }
    let of = |m: &CStr| set.iter().position(|n| *n == m).map(|i| v[i]);
    let (Some(read), Some(write)) = (of(DRAM[0]), of(DRAM[1])) else {
        return Err("a metric set without the DRAM bytes".into());
    };
    Ok(Record::KernelMetrics {
        kernel_key: key,
        dram_read_bytes: read.round() as u64,
        dram_write_bytes: write.round() as u64,
        sm_issue_bp: of(SM_ISSUE).map(|s| (s * 100.0).round().min(10_000.0) as u32),
        l2_bytes: of(L2).map(|b| b.round() as u64),
    })
}

/// A range profiler for the context and the set it measures: the first of
/// [`METRIC_SETS`] that CUPTI takes and that fits one pass (a set a GPU
/// cannot count, say L2 under some partitioning, is passed over like one of
/// several passes: nothing is enabled before the check); a note, once per
/// process, naming what was left out and why.
///
/// # Safety
/// As [`RangeProfiler::new`].
unsafe fn profiler_for(
    ctx: ds::CUcontext,
) -> Result<(RangeProfiler, &'static [&'static CStr]), String> {
    static LEFT_OUT: std::sync::Once = std::sync::Once::new();
    // Why each set tried before was passed over.
    let mut why: Vec<String> = Vec::new();
    for set in METRIC_SETS {
        // SAFETY: the caller's guarantees, passed on.
        match unsafe { RangeProfiler::new(ctx, set) } {
            Ok(rp) => {
                if !why.is_empty() {
                    LEFT_OUT.call_once(|| {
                        let left: Vec<&CStr> = METRIC_SETS[0]
                            .iter()
                            .copied()
                            .filter(|m| !set.contains(m))
                            .collect();
                        push_note(format!(
                            "metrics pass: measuring {} (left out: {}; the larger sets: {})",
                            names(set),
                            names(&left),
                            why.join("; ")
                        ))
                    });
                }
                return Ok((rp, set));
            }
            Err(SetupError::Passes(n)) => why.push(format!("{n} passes")),
            Err(SetupError::Call(f)) => why.push(f.to_string()),
        }
    }
    Err(format!(
        "no metric set fits one pass on this GPU (from all four metrics to the DRAM bytes alone: {}); a launch can be measured in one",
        why.join("; ")
    ))
}

fn on_enter(p: &Pass, call: Call, d: &sys::CUpti_CallbackData) {
    if p.off.load(Ordering::Relaxed) || p.captures.load(Ordering::SeqCst) > 0 {
        return;
    }
    // SAFETY: CUPTI passes this call's parameter struct.
    let (stream, key) = unsafe { launch_of(&p.ids, call, d.functionParams) };
    let Some(key) = key else { return };
    if p.ids.is_nccl(key) || p.seen.lock().map(|s| s.contains(&key)).unwrap_or(true) {
        return;
    }
    // SAFETY: the stream this launch call received, its context current.
    if unsafe { cupti::is_capturing(stream) } {
        return;
    }
    if p.busy
        .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        return;
    }
    let uid = d.contextUid;
    let started = (|| -> Result<(), String> {
        p.initialized
            .get_or_init(|| cupti::profiler_initialize().map_err(|e| e.to_string()))
            .clone()?;
        let mut contexts = p.contexts.lock().map_err(|_| "poisoned lock".to_string())?;
        let (rp, _) = match contexts.entry(uid) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                // SAFETY: the launch's context, current in its API callback;
                // the profiler was initialized above.
                e.insert(unsafe { profiler_for(d.context.cast::<ds::CUctx_st>()) }?)
            }
        };
        rp.begin().map_err(|e| e.to_string())
    })();
    match started {
        Ok(()) => {
            if let Ok(mut s) = p.seen.lock() {
                s.insert(key);
            }
            MEASURING.set(Some((key, uid)));
        }
        Err(why) => {
            give_up(p, why);
            p.busy.store(false, Ordering::SeqCst);
        }
    }
}

fn on_exit(p: &Pass) {
    let Some((key, uid)) = MEASURING.take() else {
        return;
    };
    let result = (|| -> Result<Record, String> {
        let mut contexts = p.contexts.lock().map_err(|_| "poisoned lock".to_string())?;
        let (rp, set) = contexts
            .get_mut(&uid)
            .ok_or("the context's profiler is gone")?;
        let v = rp.end().map_err(|e| e.to_string())?;
        record_of(key, set, &v)
    })();
    match result {
        Ok(record) => {
            if !push_record(&record) {
                warn("metrics pass: the collector is not recording; a measurement was lost");
            }
        }
        Err(why) => give_up(p, format!("kernel key {key:016x}: {why}")),
    }
    p.busy.store(false, Ordering::SeqCst);
}

/// A capture began or ended (at the call's exit, when it succeeded).
fn on_capture(p: &Pass, site: Site, d: &sys::CUpti_CallbackData) {
    let ok = !d.functionReturnValue.is_null()
        // SAFETY: at a driver API's exit CUPTI points this at its CUresult.
        && unsafe { d.functionReturnValue.cast::<u32>().read() } == 0;
    if !ok {
        return;
    }
    match site {
        Site::BeginCapture => {
            p.captures.fetch_add(1, Ordering::SeqCst);
        }
        Site::EndCapture => {
            let _ = p
                .captures
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| Some((n - 1).max(0)));
        }
        Site::Launch(_) => {}
    }
}

/// The pass's CUPTI callback: kernel launch calls' entries and exits.
unsafe extern "C" fn metrics_callback(
    _userdata: *mut c_void,
    domain: sys::CUpti_CallbackDomain,
    cbid: sys::CUpti_CallbackId,
    cbdata: *const c_void,
) {
    let Some(p) = PASS.get() else { return };
    let caught = std::panic::catch_unwind(|| {
        if domain as u32 != sys::CUpti_CallbackDomain::CUPTI_CB_DOMAIN_DRIVER_API as u32
            || cbdata.is_null()
        {
            return;
        }
        let Some(&Some(site)) = p.sites.get(cbid as usize) else {
            return;
        };
        // SAFETY: for API domains CUPTI passes a CUpti_CallbackData, valid for the call.
        let d = unsafe { &*cbdata.cast::<sys::CUpti_CallbackData>() };
        // SAFETY: the enum-typed site read as its raw u32 (0: entry).
        let entry = unsafe { std::ptr::addr_of!(d.callbackSite).cast::<u32>().read() } == 0;
        match (site, entry) {
            (Site::Launch(call), true) => on_enter(p, call, d),
            (Site::Launch(_), false) => on_exit(p),
            (_, false) => on_capture(p, site, d),
            (_, true) => {}
        }
    });
    if caught.is_err() {
        // Never again, no profiler left started, never left busy.
        MEASURING.set(None);
        let _ = std::panic::catch_unwind(|| give_up(p, "an internal error (a panic)".into()));
        p.off.store(true, Ordering::SeqCst);
        p.busy.store(false, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_driver_calls_the_pass_watches() {
        assert_eq!(
            site_of("cuLaunchKernel"),
            Some(Site::Launch(Call::Kernel { ptsz: false }))
        );
        assert_eq!(
            site_of("cuLaunchKernel_ptsz"),
            Some(Site::Launch(Call::Kernel { ptsz: true }))
        );
        assert_eq!(
            site_of("cuLaunchKernelEx"),
            Some(Site::Launch(Call::KernelEx { ptsz: false }))
        );
        // Cooperative kernels may wait for each other's blocks; graphs are
        // one launch of many kernels: neither is measured.
        assert_eq!(site_of("cuLaunchCooperativeKernel"), None);
        assert_eq!(site_of("cuLaunchCooperativeKernel_ptsz"), None);
        assert_eq!(site_of("cuGraphLaunch"), None);
        assert_eq!(site_of("cuStreamBeginCapture_v2"), Some(Site::BeginCapture));
        assert_eq!(
            site_of("cuStreamBeginCaptureToGraph"),
            Some(Site::BeginCapture)
        );
        assert_eq!(site_of("cuStreamEndCapture"), Some(Site::EndCapture));
        assert_eq!(site_of("cuCtxSynchronize"), None);
    }

    #[test]
    fn figures_are_rounded_and_bounded() {
        let [all, sm_only, l2_only, dram] = METRIC_SETS;
        assert_eq!(
            record_of(7, all, &[1.6e9, 2.4, 42.556, 3.2e9]),
            Ok(Record::KernelMetrics {
                kernel_key: 7,
                dram_read_bytes: 1_600_000_000,
                dram_write_bytes: 2,
                sm_issue_bp: Some(4_256),
                l2_bytes: Some(3_200_000_000),
            })
        );
        assert_eq!(
            record_of(7, sm_only, &[0.0, 0.0, 100.004]),
            Ok(Record::KernelMetrics {
                kernel_key: 7,
                dram_read_bytes: 0,
                dram_write_bytes: 0,
                sm_issue_bp: Some(10_000),
                l2_bytes: None,
            })
        );
        // The L2 figure in the third place of its set, not the SM figure.
        assert_eq!(
            record_of(7, l2_only, &[1.0, 2.0, 64.4]),
            Ok(Record::KernelMetrics {
                kernel_key: 7,
                dram_read_bytes: 1,
                dram_write_bytes: 2,
                sm_issue_bp: None,
                l2_bytes: Some(64),
            })
        );
        // The DRAM bytes alone.
        assert_eq!(
            record_of(7, dram, &[5.0, 6.0]),
            Ok(Record::KernelMetrics {
                kernel_key: 7,
                dram_read_bytes: 5,
                dram_write_bytes: 6,
                sm_issue_bp: None,
                l2_bytes: None,
            })
        );
        assert!(record_of(7, dram, &[5.0]).is_err());
        assert!(record_of(7, &[SM_ISSUE], &[5.0]).is_err());
        // A figure CUPTI could not evaluate is an error, not a zero.
        let e = record_of(7, sm_only, &[1.0, f64::NAN, 1.0]).unwrap_err();
        assert!(
            e.contains("dram__bytes_write.sum") && e.contains("NaN"),
            "{e}"
        );
        assert!(record_of(7, sm_only, &[-1.0, 0.0, 1.0]).is_err());
    }
}
