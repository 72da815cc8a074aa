//! Decoding CUPTI activity records into spool records.
//!
//! CUPTI hands out records whose struct version follows the CUPTI library that
//! was loaded (CUDA 13.0: `CUpti_ActivityKernel10`; 13.1/13.2: `Kernel11`;
//! 13.3: `Kernel12`). The fields read here are the common prefix, which has
//! kept its layout since `Kernel4`, so the same code reads every version.
//! Enum-typed fields are read as raw integers, so a value unknown to these
//! bindings is never turned into an invalid Rust enum.

use cudarc::cupti::sys;
use fikit_spool::{Api, Domain, MemOp, Sync};

/// One decoded activity record.
#[derive(Debug, Clone, Copy)]
pub enum Activity<'a> {
    /// A kernel; `name_id` is left 0 for the caller to fill from `name`.
    Kernel {
        /// Everything but the name id.
        kernel: fikit_spool::Kernel,
        /// The mangled name as CUPTI gives it (valid while the buffer is).
        name: &'a [u8],
    },
    /// A copy or memset.
    MemOp(MemOp),
    /// A runtime or driver API call.
    Api(Api),
    /// A synchronization.
    Sync(Sync),
    /// A record of a wanted kind that has no valid end (a kernel still running at a forced flush).
    Incomplete,
    /// A kind this collector does not keep.
    Other(u32),
}

/// CUPTI's "no stream" value in synchronization records.
const INVALID: u32 = u32::MAX;

macro_rules! field {
    ($p:expr, $f:ident) => {
        // SAFETY: the caller of `decode` guarantees `$p` points to a whole record
        // of this type; read_unaligned copes with the packed layout.
        unsafe { std::ptr::addr_of!((*$p).$f).read_unaligned() }
    };
}

fn dim(v: i32) -> u32 {
    u32::try_from(v).unwrap_or(0)
}

/// Decodes one record.
///
/// # Safety
/// `rec` must point to a whole activity record that CUPTI delivered in a
/// completed buffer, and the buffer must stay alive for the returned lifetime.
pub unsafe fn decode<'a>(rec: *const sys::CUpti_Activity) -> Activity<'a> {
    use sys::CUpti_ActivityKind as K;
    // SAFETY: every record starts with its 4-byte kind.
    let kind = unsafe { rec.cast::<u32>().read_unaligned() };
    if kind == K::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL as u32
        || kind == K::CUPTI_ACTIVITY_KIND_KERNEL as u32
    {
        let p = rec.cast::<sys::CUpti_ActivityKernel10>();
        let start: u64 = field!(p, start);
        let end: u64 = field!(p, end);
        if end == 0 || end < start {
            return Activity::Incomplete;
        }
        let name_ptr: *const std::ffi::c_char = field!(p, name);
        let name: &[u8] = if name_ptr.is_null() {
            b"<unknown>"
        } else {
            // SAFETY: CUPTI's kernel name is a NUL-terminated string that lives
            // at least as long as the buffer holding the record.
            unsafe { std::ffi::CStr::from_ptr(name_ptr) }.to_bytes()
        };
        let regs: u16 = field!(p, registersPerThread);
        return Activity::Kernel {
            kernel: fikit_spool::Kernel {
                start,
                end,
                device: field!(p, deviceId),
                context: field!(p, contextId),
                stream: field!(p, streamId),
                correlation: field!(p, correlationId),
                grid: [
                    dim(field!(p, gridX)),
                    dim(field!(p, gridY)),
                    dim(field!(p, gridZ)),
                ],
                block: [
                    dim(field!(p, blockX)),
                    dim(field!(p, blockY)),
                    dim(field!(p, blockZ)),
                ],
                registers: u32::from(regs),
                static_shared: dim(field!(p, staticSharedMemory)),
                dynamic_shared: dim(field!(p, dynamicSharedMemory)),
                name_id: 0,
            },
            name,
        };
    }
    if kind == K::CUPTI_ACTIVITY_KIND_MEMCPY as u32 {
        let p = rec.cast::<sys::CUpti_ActivityMemcpy6>();
        let start: u64 = field!(p, start);
        let end: u64 = field!(p, end);
        if end == 0 || end < start {
            return Activity::Incomplete;
        }
        return Activity::MemOp(MemOp {
            start,
            end,
            device: field!(p, deviceId),
            context: field!(p, contextId),
            stream: field!(p, streamId),
            correlation: field!(p, correlationId),
            copy_kind: Some(field!(p, copyKind)),
            bytes: field!(p, bytes),
        });
    }
    if kind == K::CUPTI_ACTIVITY_KIND_MEMSET as u32 {
        let p = rec.cast::<sys::CUpti_ActivityMemset4>();
        let start: u64 = field!(p, start);
        let end: u64 = field!(p, end);
        if end == 0 || end < start {
            return Activity::Incomplete;
        }
        return Activity::MemOp(MemOp {
            start,
            end,
            device: field!(p, deviceId),
            context: field!(p, contextId),
            stream: field!(p, streamId),
            correlation: field!(p, correlationId),
            copy_kind: None,
            bytes: field!(p, bytes),
        });
    }
    let runtime = kind == K::CUPTI_ACTIVITY_KIND_RUNTIME as u32;
    if runtime || kind == K::CUPTI_ACTIVITY_KIND_DRIVER as u32 {
        let p = rec.cast::<sys::CUpti_ActivityAPI>();
        let start: u64 = field!(p, start);
        let end: u64 = field!(p, end);
        if end < start {
            return Activity::Incomplete;
        }
        let tid: u32 = field!(p, threadId);
        return Activity::Api(Api {
            domain: if runtime {
                Domain::Runtime
            } else {
                Domain::Driver
            },
            cbid: field!(p, cbid),
            start,
            end,
            thread_id: u64::from(tid),
            correlation: field!(p, correlationId),
        });
    }
    if kind == K::CUPTI_ACTIVITY_KIND_SYNCHRONIZATION as u32 {
        let p = rec.cast::<sys::CUpti_ActivitySynchronization>();
        let start: u64 = field!(p, start);
        let end: u64 = field!(p, end);
        if end == 0 || end < start {
            return Activity::Incomplete;
        }
        // SAFETY: `type_` is a 4-byte enum right after the kind; read as u32.
        let sync_type = unsafe {
            std::ptr::addr_of!((*p).type_)
                .cast::<u32>()
                .read_unaligned()
        };
        let stream: u32 = field!(p, streamId);
        return Activity::Sync(Sync {
            sync_type,
            start,
            end,
            correlation: field!(p, correlationId),
            context: field!(p, contextId),
            stream: (stream != INVALID).then_some(stream),
        });
    }
    Activity::Other(kind)
}
