//! The collector's entry points from C: CUPTI's API callback and activity
//! buffer callbacks, the flushing thread and the exit handler. None may
//! unwind into C: each runs its work inside `catch_unwind`.

use std::sync::atomic::{AtomicU64, Ordering};

use cudarc::cupti::sys;
use cudarc::driver::sys as ds;
use fikit_spool::{Domain, Record};

use super::{COLLECTOR, FORKED, getpid, sync_index, this_process, thread_id};
use crate::{cupti, warn};

/// Size of each buffer handed to CUPTI.
const BUFFER_SIZE: usize = 4 << 20;
/// Alignment CUPTI requires of activity buffers.
const BUFFER_ALIGN: usize = 8;

thread_local! {
    /// Inside a recorded runtime call: the driver calls it makes share its
    /// correlation id and are not recorded (as with CUPTI's API activity).
    static IN_RUNTIME: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The CUPTI callback for the selected API functions: stamps entry, and at
/// exit appends the call (and, for a synchronization, where it waited).
pub(super) unsafe extern "C" fn api_callback(
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
pub(super) static FLUSH_TID: AtomicU64 = AtomicU64::new(u64::MAX);

/// The flushing thread: a flush every period until the spool is finished.
pub(super) fn flush_loop() {
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

/// The `atexit` handler: the forced last flush and the end record.
pub(super) extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(|| {
        if let Some(c) = this_process() {
            c.flush(true, true);
        }
    });
}

fn buffer_layout() -> Option<std::alloc::Layout> {
    std::alloc::Layout::from_size_align(BUFFER_SIZE, BUFFER_ALIGN).ok()
}

/// CUPTI asks for an empty activity buffer.
pub(super) unsafe extern "C" fn buffer_requested(
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

/// CUPTI hands back a buffer of records: they are queued, the buffer freed.
pub(super) unsafe extern "C" fn buffer_completed(
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
