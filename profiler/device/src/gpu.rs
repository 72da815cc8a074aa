//! The GPU, on cudarc's `result` and `sys` layers (the thin,
//! safe-where-possible wrappers of the CUDA driver API and NVRTC; the `safe`
//! layer's per-launch event tracking would add host time to every launch).
//! All `unsafe` of the GPU side is in this module.
//!
//! cudarc loads libcuda and libnvrtc on first use and panics when it cannot;
//! [`Gpu::open`] catches that and returns [`DeviceError::Library`].

use std::ffi::{CString, c_uint, c_void};
use std::panic::AssertUnwindSafe;

use cudarc::driver::{result, sys};

use crate::DeviceError;

/// The CUDA source of the synthetic kernel and the calibration probe.
pub const KERNEL_SOURCE: &str = include_str!("spin.cu");

/// A timer jump longer than this means the block was switched out, ns. The
/// global timer ticks in well under a microsecond on current GPUs; a block
/// that runs is never away from the timer this long.
pub const PREEMPT_JUMP_NS: u64 = 20_000;

fn driver(call: &'static str) -> impl FnOnce(result::DriverError) -> DeviceError {
    move |e| DeviceError::Driver {
        call,
        message: format!("{e:?}"),
    }
}

fn check(call: &'static str, r: sys::CUresult) -> Result<(), DeviceError> {
    r.result().map_err(driver(call))
}

/// Runs `f`, turning a panic of cudarc's library loader into an error (with
/// the panic message kept off stderr: the error says it).
fn loading<T>(
    library: &'static str,
    f: impl FnOnce() -> Result<T, DeviceError>,
) -> Result<T, DeviceError> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = std::panic::catch_unwind(AssertUnwindSafe(f));
    std::panic::set_hook(hook);
    r.unwrap_or_else(|p| {
        let message = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "the loader panicked".to_string());
        // cudarc lists every file name it tried; the first sentence says enough.
        let message = match message.split_once(" - searched") {
            Some((head, _)) => {
                format!("{head} (not found on the library search path; set LD_LIBRARY_PATH)")
            }
            None => message,
        };
        Err(DeviceError::Library { library, message })
    })
}

/// One CUDA context on one device, with the synthetic kernel loaded.
pub struct Gpu {
    ctx: sys::CUcontext,
    spin: sys::CUfunction,
    probe: sys::CUfunction,
    load: sys::CUfunction,
    /// Number of SMs.
    pub sm_count: u32,
    /// Device name.
    pub name: String,
    max_shared_optin: u32,
    _module: sys::CUmodule,
}

/// A stream of the context.
#[derive(Debug, Clone, Copy)]
pub struct Stream(sys::CUstream);

/// An event (completion marker) of the context.
#[derive(Debug, Clone, Copy)]
pub struct Event(sys::CUevent);

/// A copy's direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CopyDir {
    /// Host to device.
    HtoD,
    /// Device to host.
    DtoH,
    /// Device to device (and anything else).
    DtoD,
}

/// What the calibration load kernel (`fikit_load`) does, its `mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadMode {
    /// Reads and rewrites its buffer, grid-stride: bound by bandwidth.
    Stream = 0,
    /// Dependent FMAs in registers: bound by issue slots.
    Compute = 1,
    /// Follows dependent links through its buffer: bound by memory latency.
    Chase = 2,
    /// Streams like [`LoadMode::Stream`] with 16-byte loads and stores: more
    /// bytes in flight per thread, so it streams harder at the same share.
    Wide = 3,
}

/// Device memory, freed with the process.
#[derive(Debug, Clone, Copy)]
pub struct DeviceBuffer {
    ptr: sys::CUdeviceptr,
    /// Size, bytes.
    pub bytes: usize,
}

impl DeviceBuffer {
    /// The device address `offset` bytes in.
    pub fn at(&self, offset: usize) -> u64 {
        self.ptr + offset as u64
    }

    /// The `bytes` from `offset` on, as a buffer of their own.
    ///
    /// # Panics
    /// When they are not all within this buffer.
    pub fn slice(&self, offset: usize, bytes: usize) -> DeviceBuffer {
        assert!(
            offset.checked_add(bytes).is_some_and(|e| e <= self.bytes),
            "slice out of the buffer"
        );
        DeviceBuffer {
            ptr: self.ptr + offset as u64,
            bytes,
        }
    }
}

/// Page-locked host memory, freed with the process.
#[derive(Debug)]
pub struct PinnedBuffer {
    ptr: *mut c_void,
    /// Size, bytes.
    pub bytes: usize,
}

impl Gpu {
    /// Opens device `ordinal` (its primary context, current on this thread),
    /// compiles the synthetic kernel with NVRTC and loads it.
    pub fn open(ordinal: i32) -> Result<Gpu, DeviceError> {
        let (ctx, name, cc) = loading("libcuda", || {
            result::init().map_err(driver("cuInit"))?;
            let dev = result::device::get(ordinal).map_err(driver("cuDeviceGet"))?;
            // SAFETY: the primary context of a valid device, made current on this thread.
            let ctx = unsafe {
                let ctx =
                    result::primary_ctx::retain(dev).map_err(driver("cuDevicePrimaryCtxRetain"))?;
                result::ctx::set_current(ctx).map_err(driver("cuCtxSetCurrent"))?;
                ctx
            };
            let name = result::device::get_name(dev).map_err(driver("cuDeviceGetName"))?;
            let attr = |a| -> Result<i32, DeviceError> {
                // SAFETY: a valid device and attribute.
                unsafe { result::device::get_attribute(dev, a) }
                    .map_err(driver("cuDeviceGetAttribute"))
            };
            let major =
                attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
            let sms = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
            let optin = attr(
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )?;
            Ok((ctx, name, (major, sms, optin)))
        })?;
        let (major, sms, optin) = cc;
        if major < 7 {
            return Err(DeviceError::Driver {
                call: "cuDeviceGetAttribute",
                message: format!(
                    "{name}: compute capability {major}.x; live replay needs 7.5 or newer"
                ),
            });
        }
        let ptx = loading("libnvrtc", || {
            cudarc::nvrtc::compile_ptx_with_opts(
                KERNEL_SOURCE,
                cudarc::nvrtc::CompileOptions {
                    arch: Some("compute_75"),
                    ..Default::default()
                },
            )
            .map_err(|e| DeviceError::Nvrtc(format!("{e:?}")))
        })?;
        let src = CString::new(ptx.to_src()).map_err(|e| DeviceError::Nvrtc(e.to_string()))?;
        // SAFETY: a NUL-terminated PTX image; the context is current.
        let module = unsafe { result::module::load_data(src.as_ptr().cast()) }
            .map_err(driver("cuModuleLoadData"))?;
        let get = |n: &str| {
            let n = CString::new(n).expect("no NUL in a kernel name");
            // SAFETY: a loaded module and a NUL-terminated name.
            unsafe { result::module::get_function(module, n) }
                .map_err(driver("cuModuleGetFunction"))
        };
        let spin = get("fikit_spin")?;
        let probe = get("fikit_probe")?;
        let load = get("fikit_load")?;
        // SAFETY: a valid function; the attribute allows the device's opt-in maximum.
        unsafe {
            result::function::set_function_attribute(
                spin,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                optin,
            )
        }
        .map_err(driver("cuFuncSetAttribute"))?;
        Ok(Gpu {
            ctx,
            spin,
            probe,
            load,
            sm_count: sms.max(1) as u32,
            name,
            max_shared_optin: optin.max(0) as u32,
            _module: module,
        })
    }

    /// Makes the context current on the calling thread.
    pub fn make_current(&self) -> Result<(), DeviceError> {
        // SAFETY: the primary context retained at open, never released.
        unsafe { result::ctx::set_current(self.ctx) }.map_err(driver("cuCtxSetCurrent"))
    }

    /// A non-blocking stream; `high_priority` gives it the device's greatest
    /// stream priority, otherwise the least.
    pub fn stream(&self, high_priority: bool) -> Result<Stream, DeviceError> {
        let (least, greatest) =
            result::stream::get_priority_range().map_err(driver("cuCtxGetStreamPriorityRange"))?;
        let p = if high_priority { greatest } else { least };
        result::stream::create_with_priority(result::stream::StreamKind::NonBlocking, p)
            .map(Stream)
            .map_err(driver("cuStreamCreateWithPriority"))
    }

    /// An event without timing (the cheapest to record and wait for).
    pub fn event(&self, timing: bool) -> Result<Event, DeviceError> {
        let flags = if timing {
            sys::CUevent_flags::CU_EVENT_DEFAULT
        } else {
            sys::CUevent_flags::CU_EVENT_DISABLE_TIMING
        };
        result::event::create(flags)
            .map(Event)
            .map_err(driver("cuEventCreate"))
    }

    /// Records `e` on `s`.
    pub fn record(&self, e: Event, s: Stream) -> Result<(), DeviceError> {
        // SAFETY: both handles come from this context.
        unsafe { result::event::record(e.0, s.0) }.map_err(driver("cuEventRecord"))
    }

    /// Blocks until `e` has completed.
    pub fn wait(&self, e: Event) -> Result<(), DeviceError> {
        // SAFETY: an event of this context.
        unsafe { result::event::synchronize(e.0) }.map_err(driver("cuEventSynchronize"))
    }

    /// Milliseconds between two completed timing events.
    pub fn elapsed_ms(&self, a: Event, b: Event) -> Result<f32, DeviceError> {
        // SAFETY: two timing events of this context, both completed.
        unsafe { result::event::elapsed(a.0, b.0) }.map_err(driver("cuEventElapsedTime"))
    }

    /// Blocks until all work of the context is done.
    pub fn synchronize(&self) -> Result<(), DeviceError> {
        result::ctx::synchronize().map_err(driver("cuCtxSynchronize"))
    }

    /// `bytes` of device memory, zeroed.
    pub fn alloc(&self, bytes: usize) -> Result<DeviceBuffer, DeviceError> {
        let bytes = bytes.max(8);
        // SAFETY: a plain allocation in the current context.
        let ptr = unsafe { result::malloc_sync(bytes) }.map_err(driver("cuMemAlloc"))?;
        // SAFETY: the allocation just made, `bytes` long.
        unsafe { result::memset_d8_sync(ptr, 0, bytes) }.map_err(driver("cuMemsetD8"))?;
        Ok(DeviceBuffer { ptr, bytes })
    }

    /// `bytes` of page-locked host memory.
    pub fn alloc_pinned(&self, bytes: usize) -> Result<PinnedBuffer, DeviceError> {
        let bytes = bytes.max(8);
        // SAFETY: a plain allocation in the current context.
        let ptr = unsafe { result::malloc_host(bytes, 0) }.map_err(driver("cuMemHostAlloc"))?;
        Ok(PinnedBuffer { ptr, bytes })
    }

    /// Page-locks and maps for the device the host memory at `ptr`
    /// (`bytes`, page-aligned), returning its device address.
    ///
    /// # Safety
    /// `ptr..ptr + bytes` must be a live mapping that stays mapped for the
    /// rest of the process (kernels write to it).
    pub unsafe fn map_host(&self, ptr: *mut c_void, bytes: usize) -> Result<u64, DeviceError> {
        let flags = sys::CU_MEMHOSTREGISTER_PORTABLE | sys::CU_MEMHOSTREGISTER_DEVICEMAP;
        // SAFETY: the caller guarantees the mapping.
        check("cuMemHostRegister", unsafe {
            sys::cuMemHostRegister_v2(ptr, bytes, flags)
        })?;
        let mut dptr: sys::CUdeviceptr = 0;
        // SAFETY: registered just now, with DEVICEMAP.
        check("cuMemHostGetDevicePointer", unsafe {
            sys::cuMemHostGetDevicePointer_v2(&mut dptr, ptr, 0)
        })?;
        Ok(dptr)
    }

    /// Blocks of the synthetic kernel that fit on one SM with `threads` per
    /// block and `shared` bytes of dynamic shared memory.
    pub fn blocks_per_sm(&self, threads: u32, shared: u32) -> Result<u32, DeviceError> {
        // SAFETY: a valid function of the loaded module.
        unsafe {
            result::occupancy::max_active_block_per_multiprocessor(
                self.spin,
                threads as i32,
                shared as usize,
            )
        }
        .map(|n| n.max(0) as u32)
        .map_err(driver("cuOccupancyMaxActiveBlocksPerMultiprocessor"))
    }

    /// Blocks of the calibration load kernel ([`Gpu::launch_load`]) that fit
    /// on one SM with `threads` per block.
    pub fn load_blocks_per_sm(&self, threads: u32) -> Result<u32, DeviceError> {
        // SAFETY: a valid function of the loaded module.
        unsafe {
            result::occupancy::max_active_block_per_multiprocessor(self.load, threads as i32, 0)
        }
        .map(|n| n.max(0) as u32)
        .map_err(driver("cuOccupancyMaxActiveBlocksPerMultiprocessor"))
    }

    /// The most dynamic shared memory a block may ask for.
    pub fn max_shared(&self) -> u32 {
        self.max_shared_optin
    }

    /// Launches the synthetic kernel: every block executes `per_block_ns`;
    /// with `done = Some((counter, words, position))`, the last block adds 1
    /// to `words[0]` and raises `words[1]` to `position + 1` (`counter`: a
    /// zeroed device word of this launch's own).
    #[allow(clippy::too_many_arguments)]
    pub fn launch_spin(
        &self,
        s: Stream,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        per_block_ns: u64,
        done: Option<(u64, u64, u64)>,
        stamp: u64,
    ) -> Result<(), DeviceError> {
        let mut a_ns = per_block_ns;
        let mut a_jump = PREEMPT_JUMP_NS;
        let (mut a_counter, mut a_done, mut a_pos) = done.unwrap_or((0, 0, 0));
        let mut a_stamp = stamp;
        let mut params: [*mut c_void; 6] = [
            (&raw mut a_ns).cast(),
            (&raw mut a_jump).cast(),
            (&raw mut a_counter).cast(),
            (&raw mut a_done).cast(),
            (&raw mut a_pos).cast(),
            (&raw mut a_stamp).cast(),
        ];
        // SAFETY: the kernel's six parameters (u64, u64, pointer, pointer,
        // u64, pointer) match `params`, which the driver copies before
        // returning; the pointers are device addresses this process owns (or
        // 0, which the kernel checks; `stamp` is 4 words of a buffer of this
        // process); shared memory is within the opt-in maximum set at open.
        unsafe {
            result::launch_kernel(
                self.spin,
                (grid[0], grid[1], grid[2]),
                (block[0], block[1], block[2]),
                shared.min(self.max_shared_optin) as c_uint,
                s.0,
                &mut params,
            )
        }
        .map_err(driver("cuLaunchKernel"))
    }

    /// Launches the calibration probe: `blocks` blocks of 32 threads run for
    /// `run_ns`; block 0 logs timer jumps of `jump_ns` or more into `out`
    /// (3 + 2 × `max_jumps` u64 words).
    pub fn launch_probe(
        &self,
        s: Stream,
        blocks: u32,
        run_ns: u64,
        jump_ns: u64,
        out: DeviceBuffer,
        max_jumps: u32,
    ) -> Result<(), DeviceError> {
        assert!(
            out.bytes >= (3 + 2 * max_jumps as usize) * 8,
            "probe buffer too small"
        );
        let (mut a_run, mut a_jump, mut a_out, mut a_max) = (run_ns, jump_ns, out.ptr, max_jumps);
        let mut params: [*mut c_void; 4] = [
            (&raw mut a_run).cast(),
            (&raw mut a_jump).cast(),
            (&raw mut a_out).cast(),
            (&raw mut a_max).cast(),
        ];
        // SAFETY: the probe's four parameters match `params`; `out` is a device
        // buffer of this process large enough for `max_jumps` (asserted).
        unsafe {
            result::launch_kernel(self.probe, (blocks, 1, 1), (32, 1, 1), 0, s.0, &mut params)
        }
        .map_err(driver("cuLaunchKernel"))
    }

    /// Sets the calibration load kernel's preferred split of each SM's L1
    /// and shared memory for its later launches: `percent` of the most
    /// shared memory the SM can hold (0: the most L1; 100: the most shared
    /// memory), or -1 for the driver's default. A hint the driver follows
    /// where the kernel's own needs allow.
    pub fn set_load_carveout(&self, percent: i32) -> Result<(), DeviceError> {
        assert!(
            (-1..=100).contains(&percent),
            "carveout {percent}: -1 or 0..=100"
        );
        // SAFETY: a valid function of this context's module; the attribute
        // takes -1 or a percentage 0..=100 (asserted).
        unsafe {
            result::function::set_function_attribute(
                self.load,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                percent,
            )
        }
        .map_err(driver("cuFuncSetAttribute"))
    }

    /// Launches the calibration load kernel (`fikit_load` in spin.cu):
    /// `blocks` blocks of `threads`, doing what `mode` says with `buf`
    /// (for [`LoadMode::Chase`], `buf` holds 64-bit next indices, each below
    /// `buf.bytes / 8`); `run_ns` = 0 does
    /// `passes` passes (fixed work), otherwise each block runs `run_ns`.
    /// `stamp` (4 words, set to [all ones, 0, all ones, 0] before) receives
    /// the earliest and latest block start and end, GPU global timer ns.
    #[allow(clippy::too_many_arguments)]
    pub fn launch_load(
        &self,
        s: Stream,
        blocks: u32,
        threads: u32,
        mode: LoadMode,
        buf: DeviceBuffer,
        passes: u32,
        run_ns: u64,
        stamp: DeviceBuffer,
    ) -> Result<(), DeviceError> {
        assert!(stamp.bytes >= 32, "stamp buffer too small");
        assert!(buf.bytes >= 8, "load buffer too small");
        let mut a_mode = mode as u32;
        let mut a_buf = buf.ptr;
        let mut a_words = (buf.bytes / 4) as u64;
        let mut a_passes = passes;
        let mut a_run = run_ns;
        let mut a_stamp = stamp.ptr;
        let mut params: [*mut c_void; 6] = [
            (&raw mut a_mode).cast(),
            (&raw mut a_buf).cast(),
            (&raw mut a_words).cast(),
            (&raw mut a_passes).cast(),
            (&raw mut a_run).cast(),
            (&raw mut a_stamp).cast(),
        ];
        // SAFETY: the kernel's six parameters (u32, pointer, u64, u32, u64,
        // pointer) match `params`; `buf` holds `words` floats and `stamp` 4
        // words (asserted), both device buffers of this process; a chase
        // reads only indices below `words / 2`, as the caller wrote them.
        unsafe {
            result::launch_kernel(
                self.load,
                (blocks.max(1), 1, 1),
                (threads.max(1), 1, 1),
                0,
                s.0,
                &mut params,
            )
        }
        .map_err(driver("cuLaunchKernel"))
    }

    /// Copies `bytes` on `s` in direction `dir`, between `host` (pinned) and
    /// `dev` (and `dev2` for device to device).
    pub fn copy(
        &self,
        s: Stream,
        dir: CopyDir,
        bytes: usize,
        host: &PinnedBuffer,
        dev: DeviceBuffer,
        dev2: DeviceBuffer,
    ) -> Result<(), DeviceError> {
        let n = bytes.min(host.bytes).min(dev.bytes).min(dev2.bytes).max(1);
        // SAFETY: every buffer is at least `n` bytes and owned by this process;
        // the pinned buffer outlives the copy (it lives as long as the process).
        let r = unsafe {
            match dir {
                CopyDir::HtoD => sys::cuMemcpyHtoDAsync_v2(dev.ptr, host.ptr, n, s.0),
                CopyDir::DtoH => sys::cuMemcpyDtoHAsync_v2(host.ptr, dev.ptr, n, s.0),
                CopyDir::DtoD => sys::cuMemcpyDtoDAsync_v2(dev2.ptr, dev.ptr, n, s.0),
            }
        };
        check("cuMemcpyAsync", r)
    }

    /// Sets `bytes` of `dev` on `s`.
    pub fn memset(&self, s: Stream, bytes: usize, dev: DeviceBuffer) -> Result<(), DeviceError> {
        let n = bytes.min(dev.bytes).max(1);
        // SAFETY: `dev` holds at least `n` bytes.
        unsafe { result::memset_d8_async(dev.ptr, 0, n, s.0) }.map_err(driver("cuMemsetD8Async"))
    }

    /// Sets every byte of `dev` to `value` (synchronously).
    pub fn fill(&self, dev: DeviceBuffer, value: u8) -> Result<(), DeviceError> {
        // SAFETY: `dev` holds `dev.bytes` bytes of this process.
        unsafe { result::memset_d8_sync(dev.ptr, value, dev.bytes) }.map_err(driver("cuMemsetD8"))
    }

    /// Copies `words` from the host into `dev` (synchronously).
    pub fn write_u64(&self, dev: DeviceBuffer, words: &[u64]) -> Result<(), DeviceError> {
        let n = words.len().min(dev.bytes / 8);
        // SAFETY: `dev` holds at least `n` words.
        unsafe { result::memcpy_htod_sync(dev.ptr, &words[..n]) }.map_err(driver("cuMemcpyHtoD"))
    }

    /// Copies device memory to a host vector (synchronously).
    pub fn read_u64(&self, dev: DeviceBuffer, words: usize) -> Result<Vec<u64>, DeviceError> {
        let mut out = vec![0u64; words.min(dev.bytes / 8)];
        // SAFETY: `out` holds at most `dev.bytes` bytes.
        unsafe { result::memcpy_dtoh_sync(&mut out, dev.ptr) }.map_err(driver("cuMemcpyDtoH"))?;
        Ok(out)
    }
}
