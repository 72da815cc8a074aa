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
                shared_executed: Some(field!(p, sharedMemoryExecuted)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr::addr_of_mut;

    /// An 8-byte aligned, zeroed buffer big enough for any record; fields are
    /// written through raw pointers so no enum value is ever materialized.
    fn buffer() -> Vec<u64> {
        vec![0u64; 64]
    }

    /// Decodes the record at the start of `buf`.
    fn decode_buf(buf: &[u64]) -> Activity<'_> {
        // SAFETY: every test writes a whole record of the kind it sets into a
        // zeroed buffer larger than any record.
        unsafe { decode(buf.as_ptr().cast()) }
    }

    fn set_kind(buf: &mut [u64], kind: sys::CUpti_ActivityKind) {
        // SAFETY: the buffer is at least 4 bytes long and 8-byte aligned.
        unsafe { buf.as_mut_ptr().cast::<u32>().write(kind as u32) };
    }

    macro_rules! put {
        ($p:expr, $f:ident, $v:expr) => {
            // SAFETY: `$p` points into a zeroed buffer larger than the record.
            unsafe { addr_of_mut!((*$p).$f).write_unaligned($v) }
        };
    }

    #[test]
    fn kernel_record() {
        let mut buf = buffer();
        set_kind(
            &mut buf,
            sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
        );
        let name = std::ffi::CString::new("_Z3fooPf").unwrap();
        let p = buf.as_mut_ptr().cast::<sys::CUpti_ActivityKernel10>();
        put!(p, registersPerThread, 40u16);
        put!(p, start, 100u64);
        put!(p, end, 250u64);
        put!(p, deviceId, 1u32);
        put!(p, contextId, 2u32);
        put!(p, streamId, 7u32);
        put!(p, gridX, 64i32);
        put!(p, gridY, 2i32);
        put!(p, gridZ, 1i32);
        put!(p, blockX, 128i32);
        put!(p, blockY, 1i32);
        put!(p, blockZ, 1i32);
        put!(p, staticSharedMemory, 1024i32);
        put!(p, dynamicSharedMemory, 2048i32);
        put!(p, correlationId, 99u32);
        put!(p, sharedMemoryExecuted, 102_400u32);
        put!(p, name, name.as_ptr());
        match decode_buf(&buf) {
            Activity::Kernel { kernel, name } => {
                assert_eq!(name, b"_Z3fooPf");
                assert_eq!((kernel.start, kernel.end), (100, 250));
                assert_eq!((kernel.device, kernel.context, kernel.stream), (1, 2, 7));
                assert_eq!(kernel.grid, [64, 2, 1]);
                assert_eq!(kernel.block, [128, 1, 1]);
                assert_eq!(kernel.registers, 40);
                assert_eq!((kernel.static_shared, kernel.dynamic_shared), (1024, 2048));
                assert_eq!(kernel.correlation, 99);
                assert_eq!(kernel.shared_executed, Some(102_400));
            }
            other => panic!("{other:?}"),
        }
        // A kernel still running at a forced flush has end = 0.
        put!(p, end, 0u64);
        assert!(matches!(decode_buf(&buf), Activity::Incomplete));
    }

    #[test]
    fn memory_records() {
        let mut buf = buffer();
        set_kind(
            &mut buf,
            sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_MEMCPY,
        );
        let p = buf.as_mut_ptr().cast::<sys::CUpti_ActivityMemcpy6>();
        put!(p, copyKind, 2u8);
        put!(p, bytes, 4096u64);
        put!(p, start, 10u64);
        put!(p, end, 20u64);
        put!(p, streamId, 7u32);
        put!(p, correlationId, 5u32);
        match decode_buf(&buf) {
            Activity::MemOp(m) => {
                assert_eq!(m.copy_kind, Some(2));
                assert_eq!(
                    (m.bytes, m.start, m.end, m.stream, m.correlation),
                    (4096, 10, 20, 7, 5)
                );
            }
            other => panic!("{other:?}"),
        }
        let mut buf = buffer();
        set_kind(
            &mut buf,
            sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_MEMSET,
        );
        let p = buf.as_mut_ptr().cast::<sys::CUpti_ActivityMemset4>();
        put!(p, bytes, 512u64);
        put!(p, start, 30u64);
        put!(p, end, 31u64);
        match decode_buf(&buf) {
            Activity::MemOp(m) => {
                assert_eq!(m.copy_kind, None);
                assert_eq!(m.bytes, 512);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn api_and_sync_records() {
        let mut buf = buffer();
        set_kind(
            &mut buf,
            sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_DRIVER,
        );
        let p = buf.as_mut_ptr().cast::<sys::CUpti_ActivityAPI>();
        put!(p, cbid, 307u32);
        put!(p, start, 1u64);
        put!(p, end, 3u64);
        put!(p, threadId, 4243u32);
        put!(p, correlationId, 8u32);
        match decode_buf(&buf) {
            Activity::Api(a) => {
                assert_eq!(a.domain, Domain::Driver);
                assert_eq!(
                    (a.cbid, a.start, a.end, a.thread_id, a.correlation),
                    (307, 1, 3, 4243, 8)
                );
            }
            other => panic!("{other:?}"),
        }
        let mut buf = buffer();
        set_kind(
            &mut buf,
            sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
        );
        let p = buf
            .as_mut_ptr()
            .cast::<sys::CUpti_ActivitySynchronization>();
        // SAFETY: the type field is a 4-byte enum; written as its raw value.
        unsafe { addr_of_mut!((*p).type_).cast::<u32>().write_unaligned(4) };
        put!(p, start, 5u64);
        put!(p, end, 9u64);
        put!(p, contextId, 1u32);
        put!(p, streamId, u32::MAX);
        put!(p, correlationId, 11u32);
        match decode_buf(&buf) {
            Activity::Sync(s) => {
                assert_eq!(s.sync_type, 4);
                assert_eq!(s.stream, None);
                assert_eq!((s.start, s.end, s.context, s.correlation), (5, 9, 1, 11));
            }
            other => panic!("{other:?}"),
        }
        // Unknown kinds are reported, not misread.
        let mut buf = buffer();
        // SAFETY: writes the 4-byte kind.
        unsafe { buf.as_mut_ptr().cast::<u32>().write(4242) };
        assert!(matches!(decode_buf(&buf), Activity::Other(4242)));
    }
}
