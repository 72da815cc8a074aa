//! The CUPTI and driver calls the collector makes, over `cudarc`'s `sys` and
//! `result` layers, with errors as plain messages (cudarc's `Debug` for
//! `CuptiError` can panic, so it is never used here).

use std::ffi::CStr;

use cudarc::cupti::{result as cr, sys};
use cudarc::driver::sys as ds;

/// A failed CUPTI or driver call, ready to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The function that failed.
    pub call: &'static str,
    /// Numeric result code.
    pub code: u32,
    /// CUPTI's or the driver's description, when it gave one.
    pub message: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} failed: {} (code {})",
            self.call, self.message, self.code
        )
    }
}

/// True when the failure says another CUPTI client owns the subscription.
pub fn is_multiple_subscribers(f: &Failure) -> bool {
    f.code == sys::CUptiResult::CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED as u32
}

fn check(call: &'static str, r: sys::CUptiResult) -> Result<(), Failure> {
    if r == sys::CUptiResult::CUPTI_SUCCESS {
        return Ok(());
    }
    let mut s: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: cuptiGetResultString writes a pointer to a static string or fails.
    let ok = unsafe { sys::cuptiGetResultString(r, &mut s) } == sys::CUptiResult::CUPTI_SUCCESS;
    let message = if ok && !s.is_null() {
        // SAFETY: CUPTI returned a valid NUL-terminated static string.
        unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
    } else {
        "unknown CUPTI error".to_string()
    };
    Err(Failure {
        call,
        code: r as u32,
        message,
    })
}

fn check_result(call: &'static str, r: Result<(), cr::CuptiError>) -> Result<(), Failure> {
    match r {
        Ok(()) => Ok(()),
        Err(e) => check(call, e.0),
    }
}

/// `cuptiGetVersion`.
pub fn version() -> Result<u32, Failure> {
    let mut v = 0u32;
    // SAFETY: writes one u32.
    check("cuptiGetVersion", unsafe { sys::cuptiGetVersion(&mut v) })?;
    Ok(v)
}

/// `cuptiGetTimestamp`.
pub fn timestamp() -> Result<u64, Failure> {
    let mut t = 0u64;
    // SAFETY: writes one u64.
    check_result("cuptiGetTimestamp", unsafe { cr::get_timestamp(&mut t) })?;
    Ok(t)
}

/// `cuptiSubscribe` with no callback: claims CUPTI's one subscriber slot, so a
/// second CUPTI client is detected (by it or by us).
pub fn subscribe() -> Result<sys::CUpti_SubscriberHandle, Failure> {
    let mut h: sys::CUpti_SubscriberHandle = std::ptr::null_mut();
    // SAFETY: `h` is a valid out pointer; a null callback is allowed.
    check_result("cuptiSubscribe", unsafe {
        cr::subscribe(&mut h, None, std::ptr::null_mut())
    })?;
    Ok(h)
}

/// `cuptiSubscribe` with `callback`, for the callback API.
pub fn subscribe_with(
    callback: sys::CUpti_CallbackFunc,
) -> Result<sys::CUpti_SubscriberHandle, Failure> {
    let mut h: sys::CUpti_SubscriberHandle = std::ptr::null_mut();
    // SAFETY: `h` is a valid out pointer; the callback is an `extern "C"` fn that never unwinds.
    check_result("cuptiSubscribe", unsafe {
        cr::subscribe(&mut h, callback, std::ptr::null_mut())
    })?;
    Ok(h)
}

/// `cuptiEnableCallback(1, …)` for one runtime (`runtime`) or driver API callback id.
///
/// # Safety
/// `handle` must come from [`subscribe_with`].
pub unsafe fn enable_callback(
    handle: sys::CUpti_SubscriberHandle,
    runtime: bool,
    cbid: u32,
) -> Result<(), Failure> {
    let domain = if runtime {
        sys::CUpti_CallbackDomain::CUPTI_CB_DOMAIN_RUNTIME_API
    } else {
        sys::CUpti_CallbackDomain::CUPTI_CB_DOMAIN_DRIVER_API
    };
    // SAFETY: the caller passes a live subscriber handle.
    check_result("cuptiEnableCallback", unsafe {
        cr::enable_callback(1, handle, domain, cbid)
    })
}

/// `cuptiGetStreamId`: CUPTI's id of a stream handle.
///
/// # Safety
/// `ctx` and `stream` must be the context and a stream of it, as a CUDA API call received them.
pub unsafe fn stream_id(ctx: ds::CUcontext, stream: ds::CUstream) -> Option<u32> {
    let mut id = 0u32;
    // SAFETY: guaranteed by the caller; `id` is a valid out pointer.
    let r = unsafe { sys::cuptiGetStreamId(ctx, stream, &mut id) };
    (r == sys::CUptiResult::CUPTI_SUCCESS).then_some(id)
}

/// `cuptiSetThreadIdType(SYSTEM)`: API records carry the OS thread id.
pub fn use_system_thread_ids() -> Result<(), Failure> {
    check_result(
        "cuptiSetThreadIdType",
        cr::set_thread_id_type(
            sys::CUpti_ActivityThreadIdType::CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM,
        ),
    )
}

/// `cuptiActivityRegisterCallbacks`.
pub fn register_buffer_callbacks(
    requested: sys::CUpti_BuffersCallbackRequestFunc,
    completed: sys::CUpti_BuffersCallbackCompleteFunc,
) -> Result<(), Failure> {
    check_result(
        "cuptiActivityRegisterCallbacks",
        cr::activity::register_callbacks(requested, completed),
    )
}

/// `cuptiActivityEnable(kind)`.
pub fn enable(kind: sys::CUpti_ActivityKind) -> Result<(), Failure> {
    check_result("cuptiActivityEnable", cr::activity::enable(kind))
}

/// `cuptiActivityEnableRuntimeApi` / `cuptiActivityEnableDriverApi` for one callback id.
pub fn enable_api(runtime: bool, cbid: u32) -> Result<(), Failure> {
    if runtime {
        check_result(
            "cuptiActivityEnableRuntimeApi",
            cr::activity::enable_runtime_api(cbid, 1),
        )
    } else {
        check_result(
            "cuptiActivityEnableDriverApi",
            cr::activity::enable_driver_api(cbid, 1),
        )
    }
}

/// `cuptiActivityFlushPeriod(ms)`: CUPTI's worker delivers completed buffers every `ms`.
pub fn flush_period(ms: u32) -> Result<(), Failure> {
    check_result("cuptiActivityFlushPeriod", cr::activity::flush_period(ms))
}

/// `cuptiActivityEnableLatencyTimestamps(1)`.
pub fn enable_latency_timestamps() -> Result<(), Failure> {
    check_result(
        "cuptiActivityEnableLatencyTimestamps",
        cr::activity::enable_latency_timestamps(1),
    )
}

/// `cuptiActivityFlushAll`; `forced` also returns records of work still running.
pub fn flush_all(forced: bool) -> Result<(), Failure> {
    let flag = if forced {
        sys::CUpti_ActivityFlag::CUPTI_ACTIVITY_FLAG_FLUSH_FORCED as u32
    } else {
        0
    };
    check_result("cuptiActivityFlushAll", cr::activity::flush_all(flag))
}

/// `cuptiActivityGetNumDroppedRecords` for a buffer's context and stream.
///
/// # Safety
/// `ctx` must be null or the context CUPTI passed to the completion callback.
pub unsafe fn dropped_records(ctx: ds::CUcontext, stream: u32) -> Result<u64, Failure> {
    let mut n = 0usize;
    // SAFETY: the caller passes a context from CUPTI (or null); `n` is a valid out pointer.
    check_result("cuptiActivityGetNumDroppedRecords", unsafe {
        cr::activity::get_num_dropped_records(ctx, stream, &mut n)
    })?;
    Ok(n as u64)
}

/// `cuptiGetCallbackName` for the runtime (`runtime`) or driver API domain.
pub fn callback_name(runtime: bool, cbid: u32) -> Option<String> {
    let domain = if runtime {
        sys::CUpti_CallbackDomain::CUPTI_CB_DOMAIN_RUNTIME_API
    } else {
        sys::CUpti_CallbackDomain::CUPTI_CB_DOMAIN_DRIVER_API
    };
    let mut s: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: `s` is a valid out pointer; CUPTI rejects unknown ids with an error.
    let r = unsafe { cr::get_callback_name(domain, cbid, &mut s) };
    if r.is_err() || s.is_null() {
        return None;
    }
    // SAFETY: CUPTI returned a NUL-terminated static string.
    let name = unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned();
    (!name.is_empty()).then_some(name)
}

/// The highest callback id tried when listing API names.
pub const MAX_CBID: u32 = 1024;

pub use fikit_spool::api::{is_selected_api, sync_type_of};

/// A device's properties from the driver.
pub fn device_properties(ordinal: i32) -> Result<fikit_spool::Device, Failure> {
    fn dcheck(call: &'static str, r: ds::CUresult) -> Result<(), Failure> {
        if r == ds::CUresult::CUDA_SUCCESS {
            Ok(())
        } else {
            Err(Failure {
                call,
                code: r as u32,
                message: "CUDA driver error".to_string(),
            })
        }
    }
    let mut dev: ds::CUdevice = 0;
    // SAFETY: valid out pointer.
    dcheck("cuDeviceGet", unsafe { ds::cuDeviceGet(&mut dev, ordinal) })?;
    let attr = |a: ds::CUdevice_attribute| -> Result<u32, Failure> {
        let mut v: std::ffi::c_int = 0;
        // SAFETY: valid out pointer and device handle.
        dcheck("cuDeviceGetAttribute", unsafe {
            ds::cuDeviceGetAttribute(&mut v, a, dev)
        })?;
        Ok(u32::try_from(v).unwrap_or(0))
    };
    use ds::CUdevice_attribute as A;
    let mut name = [0 as std::ffi::c_char; 256];
    // SAFETY: the buffer holds 256 bytes; the driver NUL-terminates within len.
    dcheck("cuDeviceGetName", unsafe {
        ds::cuDeviceGetName(name.as_mut_ptr(), 255, dev)
    })?;
    // SAFETY: NUL-terminated by the driver (and the last byte was never written).
    let name = unsafe { CStr::from_ptr(name.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    let mut drv: std::ffi::c_int = 0;
    // SAFETY: valid out pointer.
    dcheck("cuDriverGetVersion", unsafe {
        ds::cuDriverGetVersion(&mut drv)
    })?;
    Ok(fikit_spool::Device {
        ordinal: u32::try_from(ordinal).unwrap_or(0),
        name,
        sm_count: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        max_threads_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
        max_registers_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)?,
        max_shared_memory_per_sm: attr(
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
        )?,
        max_blocks_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)?,
        driver_version: u32::try_from(drv).unwrap_or(0),
    })
}

/// `cuDeviceGetCount`.
pub fn device_count() -> Result<u32, Failure> {
    let mut n: std::ffi::c_int = 0;
    // SAFETY: valid out pointer.
    let r = unsafe { ds::cuDeviceGetCount(&mut n) };
    if r == ds::CUresult::CUDA_SUCCESS {
        Ok(u32::try_from(n).unwrap_or(0))
    } else {
        Err(Failure {
            call: "cuDeviceGetCount",
            code: r as u32,
            message: "CUDA driver error".to_string(),
        })
    }
}
