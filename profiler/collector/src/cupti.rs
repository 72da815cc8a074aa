//! The CUPTI and driver calls the collector makes, with errors as plain messages.
//!
//! Every CUPTI function is called through a pointer looked up (`dlsym`) in the
//! one libcupti handle the collector chose ([`bind`]), never through cudarc's
//! own loader: cudarc's `culib()` opens `libcupti.so`, `libcupti.so.13`, …
//! by name through the dynamic loader's search, which can map a *second*
//! libcupti beside the one the program already has (two CUPTI instances in one
//! process do not work). The driver functions are looked up the same way in
//! the libcuda already loaded (`libcuda.so.1`, `RTLD_NOLOAD`). cudarc's `sys`
//! module is used only for types and constants. Results are taken as raw
//! integers, so a code unknown to the bindings is never an invalid Rust enum.

use std::ffi::{CStr, c_char, c_void};
use std::sync::OnceLock;

use cudarc::cupti::sys;
use cudarc::driver::sys as ds;

/// The last `dlerror()` message, or `fallback`.
pub(crate) fn dl_error(fallback: &str) -> String {
    // SAFETY: dlerror returns null or a valid NUL-terminated string.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        fallback.to_string()
    } else {
        // SAFETY: non-null dlerror result is a NUL-terminated string.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

/// Looks `name` (NUL-terminated) up in `handle`.
///
/// # Safety
/// `handle` must be a live handle from `dlopen`.
unsafe fn sym(handle: *mut c_void, name: &'static str) -> Option<*mut c_void> {
    // SAFETY: `name` is NUL-terminated (the macro below appends the NUL); the caller passes a live handle.
    let p = unsafe { libc::dlsym(handle, name.as_ptr().cast()) };
    (!p.is_null()).then_some(p)
}

macro_rules! fn_table {
    ($(#[$meta:meta])* $table:ident { $($name:ident($($arg:ty),*);)* }) => {
        $(#[$meta])*
        #[allow(non_snake_case)]
        struct $table {
            $($name: Option<unsafe extern "C" fn($($arg),*) -> u32>,)*
        }

        impl $table {
            /// Looks every function up in `handle` (missing ones stay `None`).
            ///
            /// # Safety
            /// `handle` must be a live `dlopen` handle of the library whose C
            /// functions have exactly these signatures.
            unsafe fn load(handle: *mut c_void) -> Self {
                Self {
                    $($name: {
                        // SAFETY: the caller passes a live handle.
                        let p = unsafe { sym(handle, concat!(stringify!($name), "\0")) };
                        // SAFETY: the symbol is this C function, whose signature
                        // (from the CUPTI / driver headers, as cudarc's bindings
                        // declare it) is the one in the table; enum arguments
                        // and results are 32-bit C enums, passed as u32.
                        p.map(|p| unsafe {
                            std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) -> u32>(p)
                        })
                    },)*
                }
            }
        }
    };
}

fn_table! {
    /// The CUPTI functions the collector calls.
    Cupti {
        cuptiGetVersion(*mut u32);
        cuptiGetResultString(u32, *mut *const c_char);
        cuptiGetTimestamp(*mut u64);
        cuptiSubscribe(*mut sys::CUpti_SubscriberHandle, sys::CUpti_CallbackFunc, *mut c_void);
        cuptiUnsubscribe(sys::CUpti_SubscriberHandle);
        cuptiEnableCallback(u32, sys::CUpti_SubscriberHandle, u32, u32);
        cuptiGetStreamId(ds::CUcontext, ds::CUstream, *mut u32);
        cuptiSetThreadIdType(u32);
        cuptiActivityRegisterCallbacks(
            sys::CUpti_BuffersCallbackRequestFunc,
            sys::CUpti_BuffersCallbackCompleteFunc
        );
        cuptiActivityEnable(u32);
        cuptiActivityDisable(u32);
        cuptiActivityEnableRuntimeApi(u32, u8);
        cuptiActivityEnableDriverApi(u32, u8);
        cuptiActivityFlushPeriod(u32);
        cuptiActivityEnableLatencyTimestamps(u8);
        cuptiActivityFlushAll(u32);
        cuptiActivityGetNumDroppedRecords(ds::CUcontext, u32, *mut usize);
        cuptiGetCallbackName(u32, u32, *mut *const c_char);
        cuptiActivityGetNextRecord(*mut u8, usize, *mut *mut sys::CUpti_Activity);
        cuptiProfilerInitialize(*mut sys::CUpti_Profiler_Initialize_Params);
        cuptiDeviceGetChipName(*mut sys::CUpti_Device_GetChipName_Params);
        cuptiProfilerGetCounterAvailability(*mut sys::CUpti_Profiler_GetCounterAvailability_Params);
        cuptiProfilerHostInitialize(*mut sys::CUpti_Profiler_Host_Initialize_Params);
        cuptiProfilerHostConfigAddMetrics(*mut sys::CUpti_Profiler_Host_ConfigAddMetrics_Params);
        cuptiProfilerHostGetConfigImageSize(*mut sys::CUpti_Profiler_Host_GetConfigImageSize_Params);
        cuptiProfilerHostGetConfigImage(*mut sys::CUpti_Profiler_Host_GetConfigImage_Params);
        cuptiProfilerHostGetNumOfPasses(*mut sys::CUpti_Profiler_Host_GetNumOfPasses_Params);
        cuptiProfilerHostEvaluateToGpuValues(
            *mut sys::CUpti_Profiler_Host_EvaluateToGpuValues_Params
        );
        cuptiRangeProfilerEnable(*mut sys::CUpti_RangeProfiler_Enable_Params);
        cuptiRangeProfilerGetCounterDataSize(*mut sys::CUpti_RangeProfiler_GetCounterDataSize_Params);
        cuptiRangeProfilerCounterDataImageInitialize(
            *mut sys::CUpti_RangeProfiler_CounterDataImage_Initialize_Params
        );
        cuptiRangeProfilerSetConfig(*mut sys::CUpti_RangeProfiler_SetConfig_Params);
        cuptiRangeProfilerStart(*mut sys::CUpti_RangeProfiler_Start_Params);
        cuptiRangeProfilerStop(*mut sys::CUpti_RangeProfiler_Stop_Params);
        cuptiRangeProfilerPushRange(*mut sys::CUpti_RangeProfiler_PushRange_Params);
        cuptiRangeProfilerPopRange(*mut sys::CUpti_RangeProfiler_PopRange_Params);
        cuptiRangeProfilerDecodeData(*mut sys::CUpti_RangeProfiler_DecodeData_Params);
        cuptiRangeProfilerDisable(*mut sys::CUpti_RangeProfiler_Disable_Params);
        cuptiProfilerHostDeinitialize(*mut sys::CUpti_Profiler_Host_Deinitialize_Params);
    }
}

fn_table! {
    /// The driver functions the collector calls.
    Driver {
        cuDeviceGet(*mut ds::CUdevice, i32);
        cuDeviceGetAttribute(*mut i32, u32, ds::CUdevice);
        cuDeviceGetName(*mut c_char, i32, ds::CUdevice);
        cuDriverGetVersion(*mut i32);
        cuDeviceGetCount(*mut i32);
        cuFuncGetName(*mut *const c_char, ds::CUfunction);
        cuFuncGetAttribute(*mut i32, u32, ds::CUfunction);
        cuKernelGetFunction(*mut ds::CUfunction, ds::CUkernel);
        cuStreamIsCapturing(ds::CUstream, *mut u32);
        cuStreamWriteValue32_v2(ds::CUstream, ds::CUdeviceptr, u32, u32);
        cuMemHostRegister_v2(*mut c_void, usize, u32);
        cuMemHostGetDevicePointer_v2(*mut ds::CUdeviceptr, *mut c_void, u32);
        cuCtxSynchronize();
        cuCtxGetDevice(*mut ds::CUdevice);
    }
}

static CUPTI: OnceLock<Cupti> = OnceLock::new();
static DRIVER: OnceLock<Driver> = OnceLock::new();

/// The CUPTI functions without which nothing can be recorded.
const REQUIRED: [&str; 7] = [
    "cuptiGetVersion",
    "cuptiGetTimestamp",
    "cuptiActivityRegisterCallbacks",
    "cuptiActivityEnable",
    "cuptiActivityDisable",
    "cuptiActivityFlushAll",
    "cuptiActivityGetNextRecord",
];

/// Takes every CUPTI function from `handle` (the chosen libcupti) and every
/// driver function from the libcuda already loaded. Fails when a function
/// the collector cannot do without is missing.
///
/// # Safety
/// `handle` must be a live `dlopen` handle of a libcupti, kept open for the
/// life of the process.
pub unsafe fn bind(handle: *mut c_void) -> Result<(), String> {
    // SAFETY: guaranteed by the caller.
    let t = unsafe { Cupti::load(handle) };
    let present = [
        t.cuptiGetVersion.is_some(),
        t.cuptiGetTimestamp.is_some(),
        t.cuptiActivityRegisterCallbacks.is_some(),
        t.cuptiActivityEnable.is_some(),
        t.cuptiActivityDisable.is_some(),
        t.cuptiActivityFlushAll.is_some(),
        t.cuptiActivityGetNextRecord.is_some(),
    ];
    let missing: Vec<&str> = REQUIRED
        .iter()
        .zip(present)
        .filter(|(_, p)| !p)
        .map(|(n, _)| *n)
        .collect();
    if !missing.is_empty() {
        return Err(format!("this libcupti lacks {}", missing.join(", ")));
    }
    let _ = CUPTI.set(t);
    // The driver called InitializeInjection, so it is loaded: never load another.
    let name = c"libcuda.so.1";
    // SAFETY: RTLD_NOLOAD only returns a handle of a library already loaded.
    let h = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    if !h.is_null() {
        // SAFETY: a live handle of libcuda, never closed.
        let _ = DRIVER.set(unsafe { Driver::load(h) });
    }
    Ok(())
}

/// True once [`bind`] succeeded.
pub fn is_bound() -> bool {
    CUPTI.get().is_some()
}

/// The code used for a function this libcupti or libcuda lacks.
pub const MISSING: u32 = u32::MAX;

/// Calls a CUPTI function of the table; a [`Failure`] when it is missing or fails.
macro_rules! cupti {
    ($name:ident($($arg:expr),*)) => {
        match CUPTI.get().and_then(|t| t.$name) {
            // SAFETY: a function of the bound libcupti, called with the
            // arguments its C signature takes; each call site's comment says
            // why its pointers are valid.
            Some(f) => check(stringify!($name), unsafe { f($($arg),*) }),
            None => Err(missing(stringify!($name))),
        }
    };
}

/// Calls a driver function of the table; a [`Failure`] when it is missing or fails.
macro_rules! driver {
    ($name:ident($($arg:expr),*)) => {
        match DRIVER.get().and_then(|t| t.$name) {
            // SAFETY: a function of the loaded libcuda, called with the
            // arguments its C signature takes (valid out pointers at each site).
            Some(f) => dcheck(stringify!($name), unsafe { f($($arg),*) }),
            None => Err(missing(stringify!($name))),
        }
    };
}

fn missing(call: &'static str) -> Failure {
    Failure {
        call,
        code: MISSING,
        message: "not found in the loaded library".to_string(),
    }
}

fn dcheck(call: &'static str, r: u32) -> Result<(), Failure> {
    if r == ds::CUresult::CUDA_SUCCESS as u32 {
        Ok(())
    } else {
        Err(Failure {
            call,
            code: r,
            message: "CUDA driver error".to_string(),
        })
    }
}

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

fn check(call: &'static str, r: u32) -> Result<(), Failure> {
    if r == sys::CUptiResult::CUPTI_SUCCESS as u32 {
        return Ok(());
    }
    let mut s: *const c_char = std::ptr::null();
    let ok = match CUPTI.get().and_then(|t| t.cuptiGetResultString) {
        // SAFETY: cuptiGetResultString writes a pointer to a static string or fails.
        Some(f) => (unsafe { f(r, &mut s) }) == sys::CUptiResult::CUPTI_SUCCESS as u32,
        None => false,
    };
    let message = if ok && !s.is_null() {
        // SAFETY: CUPTI returned a valid NUL-terminated static string.
        unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
    } else {
        "unknown CUPTI error".to_string()
    };
    Err(Failure {
        call,
        code: r,
        message,
    })
}

/// `cuptiGetVersion`.
pub fn version() -> Result<u32, Failure> {
    let mut v = 0u32;
    // Writes one u32.
    cupti!(cuptiGetVersion(&mut v))?;
    Ok(v)
}

/// `cuptiGetTimestamp`.
pub fn timestamp() -> Result<u64, Failure> {
    let mut t = 0u64;
    // Writes one u64.
    cupti!(cuptiGetTimestamp(&mut t))?;
    Ok(t)
}

/// `cuptiSubscribe` with no callback: claims CUPTI's one subscriber slot, so a
/// second CUPTI client is detected (by it or by us).
pub fn subscribe() -> Result<sys::CUpti_SubscriberHandle, Failure> {
    subscribe_with(None)
}

/// `cuptiSubscribe` with `callback` (or none), for the callback API.
pub fn subscribe_with(
    callback: sys::CUpti_CallbackFunc,
) -> Result<sys::CUpti_SubscriberHandle, Failure> {
    let mut h: sys::CUpti_SubscriberHandle = std::ptr::null_mut();
    // `h` is a valid out pointer; the callback is an `extern "C"` fn that never unwinds.
    cupti!(cuptiSubscribe(&mut h, callback, std::ptr::null_mut()))?;
    Ok(h)
}

/// `cuptiUnsubscribe`.
///
/// # Safety
/// `handle` must come from [`subscribe_with`] and not have been unsubscribed.
pub unsafe fn unsubscribe(handle: sys::CUpti_SubscriberHandle) -> Result<(), Failure> {
    // The caller passes a live subscriber handle.
    cupti!(cuptiUnsubscribe(handle))
}

fn api_domain(runtime: bool) -> u32 {
    if runtime {
        sys::CUpti_CallbackDomain::CUPTI_CB_DOMAIN_RUNTIME_API as u32
    } else {
        sys::CUpti_CallbackDomain::CUPTI_CB_DOMAIN_DRIVER_API as u32
    }
}

/// `cuptiEnableCallback(on, …)` for one runtime (`runtime`) or driver API callback id.
///
/// # Safety
/// `handle` must come from [`subscribe_with`] and still be subscribed.
pub unsafe fn enable_callback(
    handle: sys::CUpti_SubscriberHandle,
    runtime: bool,
    cbid: u32,
    on: bool,
) -> Result<(), Failure> {
    // The caller passes a live subscriber handle.
    cupti!(cuptiEnableCallback(
        u32::from(on),
        handle,
        api_domain(runtime),
        cbid
    ))
}

/// `cuptiGetStreamId`: CUPTI's id of a stream handle.
///
/// # Safety
/// `ctx` and `stream` must be the context and a stream of it, as a CUDA API call received them.
pub unsafe fn stream_id(ctx: ds::CUcontext, stream: ds::CUstream) -> Option<u32> {
    let mut id = 0u32;
    // Guaranteed by the caller; `id` is a valid out pointer.
    cupti!(cuptiGetStreamId(ctx, stream, &mut id)).ok()?;
    Some(id)
}

/// `cuptiSetThreadIdType(SYSTEM)`: API records carry the OS thread id.
pub fn use_system_thread_ids() -> Result<(), Failure> {
    let system = sys::CUpti_ActivityThreadIdType::CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM as u32;
    cupti!(cuptiSetThreadIdType(system))
}

/// `cuptiActivityRegisterCallbacks`.
pub fn register_buffer_callbacks(
    requested: sys::CUpti_BuffersCallbackRequestFunc,
    completed: sys::CUpti_BuffersCallbackCompleteFunc,
) -> Result<(), Failure> {
    // Both are `extern "C"` functions that never unwind.
    cupti!(cuptiActivityRegisterCallbacks(requested, completed))
}

/// `cuptiActivityEnable(kind)`.
pub fn enable(kind: sys::CUpti_ActivityKind) -> Result<(), Failure> {
    let kind = kind as u32;
    cupti!(cuptiActivityEnable(kind))
}

/// `cuptiActivityEnable(kind)`, for an activity kind as a raw number.
pub fn enable_raw(kind: u32) -> Result<(), Failure> {
    cupti!(cuptiActivityEnable(kind))
}

/// `cuptiActivityDisable(kind)`, for an activity kind as a raw number.
pub fn disable(kind: u32) -> Result<(), Failure> {
    cupti!(cuptiActivityDisable(kind))
}

/// `cuptiActivityEnableRuntimeApi` / `cuptiActivityEnableDriverApi` for one
/// callback id, on or off.
pub fn enable_api(runtime: bool, cbid: u32, on: bool) -> Result<(), Failure> {
    let on = u8::from(on);
    if runtime {
        cupti!(cuptiActivityEnableRuntimeApi(cbid, on))
    } else {
        cupti!(cuptiActivityEnableDriverApi(cbid, on))
    }
}

/// `cuptiActivityFlushPeriod(ms)`: CUPTI's worker delivers completed buffers every `ms` (0: off).
pub fn flush_period(ms: u32) -> Result<(), Failure> {
    cupti!(cuptiActivityFlushPeriod(ms))
}

/// `cuptiActivityEnableLatencyTimestamps(on)`.
pub fn enable_latency_timestamps(on: bool) -> Result<(), Failure> {
    let on = u8::from(on);
    cupti!(cuptiActivityEnableLatencyTimestamps(on))
}

/// `cuptiActivityFlushAll`; `forced` also returns records of work still running.
pub fn flush_all(forced: bool) -> Result<(), Failure> {
    let flag = if forced {
        sys::CUpti_ActivityFlag::CUPTI_ACTIVITY_FLAG_FLUSH_FORCED as u32
    } else {
        0
    };
    cupti!(cuptiActivityFlushAll(flag))
}

/// `cuptiActivityGetNumDroppedRecords` for a buffer's context and stream.
///
/// # Safety
/// `ctx` must be null or the context CUPTI passed to the completion callback.
pub unsafe fn dropped_records(ctx: ds::CUcontext, stream: u32) -> Result<u64, Failure> {
    let mut n = 0usize;
    // The caller passes a context from CUPTI (or null); `n` is a valid out pointer.
    cupti!(cuptiActivityGetNumDroppedRecords(ctx, stream, &mut n))?;
    Ok(n as u64)
}

/// `cuptiActivityGetNextRecord`: advances `rec` to the next record of the
/// buffer; false at the end (or on an error).
///
/// # Safety
/// `buffer` must hold `valid` bytes of records CUPTI completed, and `rec` must
/// be null (first call) or the record this function returned last.
pub unsafe fn next_record(
    buffer: *mut u8,
    valid: usize,
    rec: &mut *mut sys::CUpti_Activity,
) -> bool {
    // Guaranteed by the caller.
    cupti!(cuptiActivityGetNextRecord(buffer, valid, rec)).is_ok() && !rec.is_null()
}

/// `cuptiGetCallbackName` for the runtime (`runtime`) or driver API domain.
pub fn callback_name(runtime: bool, cbid: u32) -> Option<String> {
    let mut s: *const c_char = std::ptr::null();
    // `s` is a valid out pointer; CUPTI rejects unknown ids with an error.
    cupti!(cuptiGetCallbackName(api_domain(runtime), cbid, &mut s)).ok()?;
    if s.is_null() {
        return None;
    }
    // SAFETY: CUPTI returned a NUL-terminated static string.
    let name = unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned();
    (!name.is_empty()).then_some(name)
}

/// The highest callback id tried when listing API names.
pub const MAX_CBID: u32 = 1024;

pub use fikit_trace_api::{is_selected_api, sync_type_of};

/// `cuDriverGetVersion`, e.g. 13000.
pub fn driver_version() -> Result<u32, Failure> {
    let mut drv: i32 = 0;
    // Valid out pointer.
    driver!(cuDriverGetVersion(&mut drv))?;
    Ok(u32::try_from(drv).unwrap_or(0))
}

/// A device's properties from the driver.
pub fn device_properties(ordinal: i32) -> Result<fikit_spool::Device, Failure> {
    let mut dev: ds::CUdevice = 0;
    // Valid out pointer.
    driver!(cuDeviceGet(&mut dev, ordinal))?;
    let attr = |a: ds::CUdevice_attribute| -> Result<u32, Failure> {
        let mut v: i32 = 0;
        let a = a as u32;
        // Valid out pointer and device handle.
        driver!(cuDeviceGetAttribute(&mut v, a, dev))?;
        Ok(u32::try_from(v).unwrap_or(0))
    };
    use ds::CUdevice_attribute as A;
    let mut name = [0 as c_char; 256];
    // The buffer holds 256 bytes; the driver NUL-terminates within 255.
    driver!(cuDeviceGetName(name.as_mut_ptr(), 255, dev))?;
    // SAFETY: NUL-terminated by the driver (and the last byte was never written).
    let name = unsafe { CStr::from_ptr(name.as_ptr()) }
        .to_string_lossy()
        .into_owned();
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
        driver_version: driver_version()?,
    })
}

/// `cuDeviceGetCount`.
pub fn device_count() -> Result<u32, Failure> {
    let mut n: i32 = 0;
    // Valid out pointer.
    driver!(cuDeviceGetCount(&mut n))?;
    Ok(u32::try_from(n).unwrap_or(0))
}

/// What the gate needs of a kernel function: its mangled name, static shared
/// memory per block and registers per thread (with the launch's grid, block
/// and dynamic shared memory they make the traces' `kernel_key`).
///
/// A launch call's function handle is either a `CUfunction` or, from the
/// runtime's context-independent loading (`cuLibrary`), a `CUkernel`: when the
/// function calls reject it, it is taken as a kernel and resolved to its
/// function in the current context (`cuKernelGetFunction`).
///
/// # Safety
/// `f` must be a function handle a launch call received, its context current.
pub unsafe fn function_identity(f: ds::CUfunction) -> Result<(String, u32, u32), Failure> {
    // SAFETY: guaranteed by the caller.
    match unsafe { identity_of(f) } {
        Ok(id) => Ok(id),
        Err(first) => {
            let mut func: ds::CUfunction = std::ptr::null_mut();
            // Valid out pointer; a handle that is not a kernel is rejected.
            if driver!(cuKernelGetFunction(&mut func, f.cast::<ds::CUkern_st>())).is_err()
                || func.is_null()
            {
                return Err(first);
            }
            // SAFETY: the driver's function for the kernel in the current context.
            unsafe { identity_of(func) }
        }
    }
}

/// [`function_identity`] of a `CUfunction`.
///
/// # Safety
/// `f` must be a live function handle.
unsafe fn identity_of(f: ds::CUfunction) -> Result<(String, u32, u32), Failure> {
    let mut name: *const c_char = std::ptr::null();
    // Valid out pointer; `f` is guaranteed by the caller.
    driver!(cuFuncGetName(&mut name, f))?;
    if name.is_null() {
        return Err(missing("cuFuncGetName"));
    }
    // SAFETY: the driver returned a NUL-terminated string it owns.
    let name = unsafe { CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned();
    let attr = |a: ds::CUfunction_attribute| -> Result<u32, Failure> {
        let mut v = 0i32;
        // Valid out pointer; `f` is guaranteed by the caller.
        driver!(cuFuncGetAttribute(&mut v, a as u32, f))?;
        Ok(u32::try_from(v).unwrap_or(0))
    };
    use ds::CUfunction_attribute as A;
    let shared = attr(A::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?;
    let regs = attr(A::CU_FUNC_ATTRIBUTE_NUM_REGS)?;
    Ok((name, shared, regs))
}

/// True when `stream` is capturing a graph (its launches do not run now).
///
/// # Safety
/// `stream` must be a stream handle a call received, in the current context.
pub unsafe fn is_capturing(stream: ds::CUstream) -> bool {
    let mut status = 0u32;
    // Valid out pointer; `stream` is guaranteed by the caller.
    driver!(cuStreamIsCapturing(stream, &mut status)).is_ok() && status != 0
}

/// Registers `len` bytes at `p` (page-aligned, mapped for the process's life)
/// with the GPU and returns their device address.
///
/// # Safety
/// `p..p+len` must be a page-aligned mapping that is never unmapped; a
/// context must be current.
pub unsafe fn register_host(p: *mut c_void, len: usize) -> Result<ds::CUdeviceptr, Failure> {
    // PORTABLE: every context; DEVICEMAP: a device address for it.
    let flags = ds::CU_MEMHOSTREGISTER_PORTABLE | ds::CU_MEMHOSTREGISTER_DEVICEMAP;
    // Guaranteed by the caller.
    driver!(cuMemHostRegister_v2(p, len, flags))?;
    let mut d: ds::CUdeviceptr = 0;
    // Valid out pointer; `p` was just registered.
    driver!(cuMemHostGetDevicePointer_v2(&mut d, p, 0))?;
    Ok(d)
}

/// Queues a write of `value` to `addr` on `stream`, done once the work
/// queued before it on the stream is done.
///
/// # Safety
/// `stream` must be a stream handle a call received; `addr` a device address
/// from [`register_host`].
pub unsafe fn write_after(
    stream: ds::CUstream,
    addr: ds::CUdeviceptr,
    value: u32,
) -> Result<(), Failure> {
    // Flags 0: the default (the write waits for the stream's earlier work).
    driver!(cuStreamWriteValue32_v2(stream, addr, value, 0))
}

mod range;

pub(crate) use range::{RangeProfiler, SetupError, profiler_initialize};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unbound_calls_fail_instead_of_loading_a_library() {
        // Nothing was bound in this test process: every call says which
        // function is missing, and none makes cudarc load a libcupti.
        let e = flush_all(false).unwrap_err();
        assert_eq!(e.call, "cuptiActivityFlushAll");
        assert_eq!(e.code, MISSING);
        assert_eq!(device_count().unwrap_err().call, "cuDeviceGetCount");
        assert_eq!(callback_name(true, 1), None);
    }

    #[test]
    fn no_call_goes_through_cudarcs_loader() {
        // cudarc's CUPTI and driver functions (`sys::cupti…`, `sys::cu…`,
        // `result::…`) load their library by name; the collector must use
        // only the table above.
        for (file, text) in [
            ("lib.rs", include_str!("lib.rs")),
            ("collector.rs", include_str!("collector.rs")),
            (
                "collector/callbacks.rs",
                include_str!("collector/callbacks.rs"),
            ),
            (
                "collector/settings.rs",
                include_str!("collector/settings.rs"),
            ),
            ("cupti/range.rs", include_str!("cupti/range.rs")),
            ("activity.rs", include_str!("activity.rs")),
            // The libcupti search, now in fikit-protocol (which has no cudarc at all).
            ("locate.rs", include_str!("../../protocol/src/locate.rs")),
        ] {
            for bad in [
                "sys::cupti",
                "sys::cu",
                "cupti::result",
                "is_culib_present",
                "culib(",
            ] {
                assert!(!text.contains(bad), "{file} calls cudarc's loader: {bad}");
            }
        }
    }
}
