//! `libfikit_shim.so`: preloaded (`LD_PRELOAD`) into a gated job, it hands
//! the program wrappers of the CUDA driver's launch entry points, so that a
//! gate sees every kernel launch at the cost of an indirect call instead of
//! CUPTI's callback dispatch (entry and exit) on each one.
//!
//! How launches reach it: every copy of the CUDA runtime (libcudart, and the
//! static copies inside cuBLAS and cuDNN) opens the driver and asks it for
//! `cuGetProcAddress` (or `cuGetProcAddress_v2`) by `dlsym`, then every
//! other driver function through it. The shim exports `dlsym`: asked for
//! those it returns its own `cuGetProcAddress`, which asks the driver and,
//! for a launch entry point (`cuLaunchKernel`, `cuLaunchKernelEx`,
//! `cuLaunchCooperativeKernel`, `cuGraphLaunch`, each in every version and
//! per-thread-stream form), returns a wrapper bound to the pointer the driver
//! gave. A program that looks a launch function up by `dlsym` directly (as
//! Triton does) gets a wrapper too. This has to be in place before the
//! runtime's first lookup, which comes before `cuInit` and so before the
//! injected collector loads: hence a preloaded library, which does nothing
//! else.
//!
//! The wrappers call [`Hooks`] that the injected collector registers
//! ([`fikit_shim_set_hooks`]) around the real call; without hooks they only
//! count the launch ([`fikit_shim_launches`]) and pass it on. Nothing here
//! can panic on a launch: atomics, one indirect call, no allocation. Binding
//! a wrapper (once per entry point and variant) takes a lock.
//!
//! A limit of any `dlsym` interposer: a lookup it answers by calling the C
//! library's `dlsym` is made from the shim, so `RTLD_DEFAULT` and
//! `RTLD_NEXT` would be answered in the shim's scope, not the caller's. On
//! x86_64 the shim jumps straight into the C library's `dlsym` for every
//! name not starting "cu", so only "cu…" lookups by those handles are
//! answered from the shim's scope (the CUDA stack looks the driver up by
//! its handle).
//!
//! Each wrapper is one of [`SLOTS`] per signature, bound to one driver
//! pointer and knowing whether that pointer is a per-thread-stream variant
//! (from the driver's own name for it, `dladdr`, or the lookup's flags). A
//! lookup that finds every slot of its signature taken gets the driver's
//! pointer unwrapped, and [`fikit_shim_unwrapped`] counts it.

use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::Mutex;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize};

/// The version of [`Hooks`] and [`LaunchInfo`] this shim calls.
pub const HOOKS_VERSION: u32 = 1;
/// Wrappers per launch signature.
pub const SLOTS: usize = 8;

/// Kinds of launch in [`LaunchInfo::kind`].
pub mod kind {
    /// `cuLaunchKernel`.
    pub const KERNEL: u32 = 0;
    /// `cuLaunchKernelEx`.
    pub const KERNEL_EX: u32 = 1;
    /// `cuLaunchCooperativeKernel`.
    pub const COOPERATIVE: u32 = 2;
    /// `cuGraphLaunch` (no function, grid or block).
    pub const GRAPH: u32 = 3;
}

/// One launch, as the hooks see it (C layout).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct LaunchInfo {
    /// [`kind`].
    pub kind: u32,
    /// 1 when the entry point is a per-thread-stream variant (a null stream
    /// is the calling thread's default stream), else 0.
    pub ptsz: u32,
    /// The `CUfunction` (null for a graph launch).
    pub function: *mut c_void,
    /// Grid dimensions (zeros for a graph launch).
    pub grid: [u32; 3],
    /// Block dimensions (zeros for a graph launch).
    pub block: [u32; 3],
    /// Dynamic shared memory, bytes.
    pub shared_bytes: u32,
    /// The `CUstream` as passed.
    pub stream: *mut c_void,
}

/// What the injected collector registers: called around each wrapped launch
/// on the launching thread (C layout; the functions must not unwind).
#[repr(C)]
pub struct Hooks {
    /// [`HOOKS_VERSION`] of the caller.
    pub version: u32,
    /// Before the driver's call; may block (a gate). Returns a token for `exit`.
    pub enter: unsafe extern "C" fn(info: *const LaunchInfo) -> u64,
    /// After the driver's call, with `enter`'s token and the call's result.
    pub exit: unsafe extern "C" fn(token: u64, result: c_int),
}

static HOOKS: AtomicPtr<Hooks> = AtomicPtr::new(std::ptr::null_mut());
static LAUNCHES: AtomicU64 = AtomicU64::new(0);
static UNWRAPPED: AtomicU64 = AtomicU64::new(0);

/// Registers `hooks` (null: none) and returns [`HOOKS_VERSION`]; hooks of
/// another version are refused (not registered) and 0 is returned.
///
/// # Safety
/// `hooks` must be null or point to a [`Hooks`] that lives for the rest of
/// the process, whose functions never unwind.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fikit_shim_set_hooks(hooks: *const Hooks) -> u32 {
    // SAFETY: non-null `hooks` points to a live Hooks (the caller's promise).
    if !hooks.is_null() && unsafe { (*hooks).version } != HOOKS_VERSION {
        return 0;
    }
    HOOKS.store(hooks.cast_mut(), Release);
    HOOKS_VERSION
}

/// Launches that went through a wrapper so far, hooked or not.
#[unsafe(no_mangle)]
pub extern "C" fn fikit_shim_launches() -> u64 {
    LAUNCHES.load(Relaxed)
}

/// Lookups of a launch entry point that got the driver's pointer unwrapped
/// (every slot of its signature taken).
#[unsafe(no_mangle)]
pub extern "C" fn fikit_shim_unwrapped() -> u64 {
    UNWRAPPED.load(Relaxed)
}

/// A driver entry point the shim wraps, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// `cuGetProcAddress` (`v2`: the five-argument `_v2`).
    GetProcAddress {
        /// The `_v2` signature.
        v2: bool,
    },
    /// A launch of [`kind`] `kind`.
    Launch {
        /// [`kind`].
        kind: u32,
        /// A per-thread-stream variant (`_ptsz`, `_ptds`).
        ptsz: bool,
    },
}

/// The entry point a driver function name is, if the shim wraps it: the
/// name without its per-thread-stream suffix and version suffix (`_v2`).
pub fn classify(name: &[u8]) -> Option<Entry> {
    let (name, ptsz) = match name
        .strip_suffix(b"_ptsz")
        .or_else(|| name.strip_suffix(b"_ptds"))
    {
        Some(n) => (n, true),
        None => (name, false),
    };
    let (base, version) = match name.iter().rposition(|&c| c == b'_') {
        Some(i)
            if name.len() > i + 2
                && name[i + 1] == b'v'
                && name[i + 2..].iter().all(u8::is_ascii_digit) =>
        {
            (
                &name[..i],
                std::str::from_utf8(&name[i + 2..])
                    .ok()?
                    .parse::<u32>()
                    .ok(),
            )
        }
        _ => (name, None),
    };
    let launch = |kind| Some(Entry::Launch { kind, ptsz });
    match base {
        b"cuGetProcAddress" if !ptsz => Some(Entry::GetProcAddress {
            v2: version == Some(2),
        }),
        b"cuLaunchKernel" => launch(kind::KERNEL),
        b"cuLaunchKernelEx" => launch(kind::KERNEL_EX),
        b"cuLaunchCooperativeKernel" => launch(kind::COOPERATIVE),
        b"cuGraphLaunch" => launch(kind::GRAPH),
        _ => None,
    }
}

type DlsymFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;
type Gpa1Fn = unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64) -> c_int;
type Gpa2Fn =
    unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64, *mut c_int) -> c_int;
type KernelFn = unsafe extern "C" fn(
    *mut c_void,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    *mut c_void,
    *mut *mut c_void,
    *mut *mut c_void,
) -> c_int;
type KernelExFn = unsafe extern "C" fn(
    *const LaunchConfig,
    *mut c_void,
    *mut *mut c_void,
    *mut *mut c_void,
) -> c_int;
type CooperativeFn = unsafe extern "C" fn(
    *mut c_void,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    *mut c_void,
    *mut *mut c_void,
) -> c_int;
type GraphFn = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;

/// `CUlaunchConfig` of cuda.h, as far as a launch's shape goes.
#[repr(C)]
pub struct LaunchConfig {
    /// Grid dimensions.
    pub grid: [c_uint; 3],
    /// Block dimensions.
    pub block: [c_uint; 3],
    /// Dynamic shared memory, bytes.
    pub shared_bytes: c_uint,
    /// The stream.
    pub stream: *mut c_void,
    /// Launch attributes (not read).
    pub attrs: *mut c_void,
    /// Their number (not read).
    pub num_attrs: c_uint,
}

/// The C library's own `dlsym` (0 until found).
static REAL_DLSYM: AtomicUsize = AtomicUsize::new(0);
/// The driver's `cuGetProcAddress` and `_v2` (0 until seen).
static REAL_GPA1: AtomicUsize = AtomicUsize::new(0);
static REAL_GPA2: AtomicUsize = AtomicUsize::new(0);
/// Binding wrappers to driver pointers.
static BIND: Mutex<()> = Mutex::new(());

fn real_dlsym() -> DlsymFn {
    // SAFETY: resolve_dlsym returns the C library's dlsym (it aborts
    // rather than return 0).
    unsafe { std::mem::transmute::<usize, DlsymFn>(resolve_dlsym()) }
}

/// The C library's `dlsym`, found once by version (glibc 2.34 on, and the
/// first version on x86_64 and on aarch64); a process without it cannot
/// look anything up, so the shim says so and aborts rather than answer
/// every lookup with nothing.
extern "C" fn resolve_dlsym() -> usize {
    let mut p = REAL_DLSYM.load(Acquire);
    if p == 0 {
        for version in [c"GLIBC_2.34", c"GLIBC_2.2.5", c"GLIBC_2.17"] {
            // SAFETY: dlvsym with constant C strings; it is not interposed.
            p = unsafe { libc::dlvsym(libc::RTLD_NEXT, c"dlsym".as_ptr(), version.as_ptr()) }
                as usize;
            if p != 0 {
                break;
            }
        }
        if p == 0 {
            let m = b"fikit shim: the C library's dlsym not found; take libfikit_shim.so out of LD_PRELOAD\n";
            // SAFETY: writes a constant message to standard error, then aborts.
            unsafe {
                libc::write(2, m.as_ptr().cast(), m.len());
                libc::abort();
            }
        }
        REAL_DLSYM.store(p, Release);
    }
    p
}

/// The exported name of the function at `p`, when `p` is one's start.
fn name_at(p: *mut c_void) -> Option<&'static [u8]> {
    // SAFETY: dladdr only reads the loader's tables; `info` is a valid out pointer.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::dladdr(p, &mut info) } == 0 || info.dli_sname.is_null() || info.dli_saddr != p
    {
        return None;
    }
    // SAFETY: the loader's symbol names live as long as their library, which
    // the driver never unloads while the program uses it.
    Some(unsafe { CStr::from_ptr(info.dli_sname) }.to_bytes())
}

/// How a lookup asked: for the per-thread-stream variant (its flags), and
/// at which CUDA version (`cuGetProcAddress`'s; `None` through `dlsym`).
#[derive(Debug, Clone, Copy, Default)]
struct Asked {
    ptsz: bool,
    version: Option<c_int>,
}

/// The entry point the driver's pointer `p` for a lookup of `asked` is: by
/// the driver's own exported name for `p` when it has one, else by the
/// name asked and how (`cuGetProcAddress` at CUDA 12.0 or later is the
/// `_v2` signature; the lookup's flags tell the stream variant).
fn entry_of(asked: &[u8], how: Asked, p: *mut c_void) -> Option<Entry> {
    // Most lookups are of other functions: no loader call for them.
    let by_name = classify(asked)?;
    if let Some(e) = name_at(p).and_then(classify) {
        return Some(e);
    }
    Some(match by_name {
        Entry::GetProcAddress { v2 } => Entry::GetProcAddress {
            v2: v2 || how.version.is_some_and(|v| v >= 12_000),
        },
        Entry::Launch { kind, ptsz } => Entry::Launch {
            kind,
            ptsz: ptsz || how.ptsz,
        },
    })
}

/// What to hand the program for driver pointer `p`, found by a lookup of
/// `asked` ([`entry_of`]).
fn substitute(asked: &[u8], p: *mut c_void, how: Asked) -> *mut c_void {
    if p.is_null() {
        return p;
    }
    let Some(entry) = entry_of(asked, how, p) else {
        return p;
    };
    match entry {
        Entry::GetProcAddress { v2: true } => {
            REAL_GPA2.store(p as usize, Release);
            shim_gpa2 as Gpa2Fn as *mut c_void
        }
        Entry::GetProcAddress { v2: false } => {
            REAL_GPA1.store(p as usize, Release);
            shim_gpa1 as Gpa1Fn as *mut c_void
        }
        Entry::Launch { kind, ptsz } => {
            let bound = match kind {
                kind::KERNEL => bind(&KERNEL_REAL, &KERNEL_PTSZ, p, ptsz)
                    .map(|i| KERNEL_WRAPPERS[i] as *mut c_void),
                kind::KERNEL_EX => bind(&KERNEL_EX_REAL, &KERNEL_EX_PTSZ, p, ptsz)
                    .map(|i| KERNEL_EX_WRAPPERS[i] as *mut c_void),
                kind::COOPERATIVE => bind(&COOPERATIVE_REAL, &COOPERATIVE_PTSZ, p, ptsz)
                    .map(|i| COOPERATIVE_WRAPPERS[i] as *mut c_void),
                _ => bind(&GRAPH_REAL, &GRAPH_PTSZ, p, ptsz)
                    .map(|i| GRAPH_WRAPPERS[i] as *mut c_void),
            };
            bound.unwrap_or_else(|| {
                UNWRAPPED.fetch_add(1, Relaxed);
                p
            })
        }
    }
}

/// The slot bound to `p` (binding a free one), or `None` when all are taken.
fn bind(
    real: &[AtomicUsize; SLOTS],
    ptsz: &[AtomicBool; SLOTS],
    p: *mut c_void,
    is_ptsz: bool,
) -> Option<usize> {
    let _held = BIND.lock().unwrap_or_else(|e| e.into_inner());
    let p = p as usize;
    if let Some(i) = real.iter().position(|r| r.load(Acquire) == p) {
        return Some(i);
    }
    let i = real.iter().position(|r| r.load(Acquire) == 0)?;
    ptsz[i].store(is_ptsz, Relaxed);
    // Release: a wrapper that reads its pointer sees its flag.
    real[i].store(p, Release);
    Some(i)
}

/// `dlsym`, interposed: the C library's, except that the driver's
/// `cuGetProcAddress` and launch entry points come back as the shim's.
/// A lookup of a name not starting with "cu" jumps straight into the C
/// library's `dlsym`, so that it still sees its caller (`RTLD_DEFAULT` and
/// `RTLD_NEXT` are answered in the caller's scope, which a call from the
/// shim would change); a "cu…" name goes through [`dlsym_cu`].
///
/// # Safety
/// As the C library's `dlsym`.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void {
    // rdi: handle, rsi: symbol. A non-null symbol starting "cu" goes to
    // dlsym_cu; anything else to the C library's dlsym, by a jump (its
    // return address stays the caller's), resolved first if need be
    // (saving the arguments, the stack kept 16-byte aligned for the call).
    core::arch::naked_asm!(
        "test rsi, rsi",
        "jz 2f",
        "cmp byte ptr [rsi], 0x63", // 'c'
        "jne 2f",
        "cmp byte ptr [rsi + 1], 0x75", // 'u'
        "jne 2f",
        "jmp {cu}",
        "2:",
        "mov rax, qword ptr [rip + {real}]",
        "test rax, rax",
        "jz 3f",
        "jmp rax",
        "3:",
        "push rdi",
        "push rsi",
        "sub rsp, 8",
        "call {resolve}",
        "add rsp, 8",
        "pop rsi",
        "pop rdi",
        "jmp rax",
        cu = sym dlsym_cu,
        real = sym REAL_DLSYM,
        resolve = sym resolve_dlsym,
    )
}

/// `dlsym`, interposed (see the x86_64 form; here every lookup goes
/// through [`dlsym_cu`], so a library's `RTLD_DEFAULT` or `RTLD_NEXT`
/// lookup is answered in the shim's scope).
///
/// # Safety
/// As the C library's `dlsym`.
#[cfg(not(target_arch = "x86_64"))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void {
    // SAFETY: forwarded as received.
    unsafe { dlsym_cu(handle, symbol) }
}

/// A `dlsym` of a name starting "cu" (from [`dlsym`]): the C library's
/// answer, the driver's `cuGetProcAddress` and launch entry points
/// replaced by the shim's.
///
/// # Safety
/// As the C library's `dlsym`.
unsafe extern "C" fn dlsym_cu(handle: *mut c_void, symbol: *const c_char) -> *mut c_void {
    let real = real_dlsym();
    // SAFETY: forwarded as received.
    let p = unsafe { real(handle, symbol) };
    if p.is_null() || symbol.is_null() {
        return p;
    }
    // SAFETY: dlsym's symbol is a C string.
    let name = unsafe { CStr::from_ptr(symbol) }.to_bytes();
    if !name.starts_with(b"cu") {
        return p;
    }
    substitute(name, p, Asked::default())
}

/// `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM` of cuda.h.
const PER_THREAD_DEFAULT_STREAM: u64 = 2;

/// After the driver's lookup of `symbol` returned `rc` into `pfn`.
///
/// # Safety
/// `symbol` a C string, `pfn` valid, as the lookup received them.
unsafe fn after_lookup(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
    rc: c_int,
) {
    if rc != 0 || symbol.is_null() || pfn.is_null() {
        return;
    }
    // SAFETY: the caller's promise.
    let (name, p) = unsafe { (CStr::from_ptr(symbol).to_bytes(), *pfn) };
    let how = Asked {
        ptsz: flags & PER_THREAD_DEFAULT_STREAM != 0,
        version: Some(version),
    };
    let s = substitute(name, p, how);
    if s != p {
        // SAFETY: the caller's promise.
        unsafe { *pfn = s };
    }
}

unsafe extern "C" fn shim_gpa1(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
) -> c_int {
    let real = REAL_GPA1.load(Acquire);
    if real == 0 {
        return 1; // CUDA_ERROR_INVALID_VALUE: never handed out before it is set.
    }
    // SAFETY: the driver's cuGetProcAddress, set before this was handed out.
    let real = unsafe { std::mem::transmute::<usize, Gpa1Fn>(real) };
    // SAFETY: forwarded as received.
    let rc = unsafe { real(symbol, pfn, version, flags) };
    // SAFETY: as the lookup received them.
    unsafe { after_lookup(symbol, pfn, version, flags, rc) };
    rc
}

unsafe extern "C" fn shim_gpa2(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
    status: *mut c_int,
) -> c_int {
    let real = REAL_GPA2.load(Acquire);
    if real == 0 {
        return 1;
    }
    // SAFETY: the driver's cuGetProcAddress_v2, set before this was handed out.
    let real = unsafe { std::mem::transmute::<usize, Gpa2Fn>(real) };
    // SAFETY: forwarded as received.
    let rc = unsafe { real(symbol, pfn, version, flags, status) };
    // SAFETY: as the lookup received them.
    unsafe { after_lookup(symbol, pfn, version, flags, rc) };
    rc
}

/// Calls `real` between the hooks (if any) for a launch described by `info`.
#[inline(always)]
fn around(info: impl FnOnce() -> LaunchInfo, real: impl FnOnce() -> c_int) -> c_int {
    LAUNCHES.fetch_add(1, Relaxed);
    let h = HOOKS.load(Acquire);
    if h.is_null() {
        return real();
    }
    // SAFETY: registered hooks live for the rest of the process.
    let hooks = unsafe { &*h };
    let info = info();
    // SAFETY: the hooks' contract: C functions that do not unwind.
    let token = unsafe { (hooks.enter)(&info) };
    let rc = real();
    // SAFETY: as above.
    unsafe { (hooks.exit)(token, rc) };
    rc
}

/// One wrapper: slot `$i` of `$real`/`$ptsz`, with the signature's
/// parameters `$params` and the launch's description `$info`.
macro_rules! wrapper {
    ($w:ident, $i:literal, $real:ident, $ptsz:ident, $fnty:ty,
     ($($arg:ident: $ty:ty),*), |$flag:ident| $info:expr) => {
        unsafe extern "C" fn $w($($arg: $ty),*) -> c_int {
            // SAFETY: this wrapper is handed out only after its slot holds
            // the driver's pointer for this signature (`bind`).
            let real = unsafe { std::mem::transmute::<usize, $fnty>($real[$i].load(Acquire)) };
            let $flag = u32::from($ptsz[$i].load(Relaxed));
            // SAFETY: forwarded as received.
            around(|| $info, || unsafe { real($($arg),*) })
        }
    };
}

/// Defines one signature's slots: the driver pointers, their
/// per-thread-stream flags, the wrappers and their table.
macro_rules! slots {
    (
        $real:ident, $ptsz:ident, $table:ident, $fnty:ty,
        $params:tt,
        |$flag:ident| $info:expr,
        [$($w:ident $i:literal),*]
    ) => {
        static $real: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
        static $ptsz: [AtomicBool; SLOTS] = [const { AtomicBool::new(false) }; SLOTS];
        $(wrapper!($w, $i, $real, $ptsz, $fnty, $params, |$flag| $info);)*
        static $table: [$fnty; SLOTS] = [$($w),*];
    };
}

slots!(
    KERNEL_REAL, KERNEL_PTSZ, KERNEL_WRAPPERS, KernelFn,
    (f: *mut c_void, gx: c_uint, gy: c_uint, gz: c_uint, bx: c_uint, by: c_uint, bz: c_uint,
     shared: c_uint, stream: *mut c_void, params: *mut *mut c_void, extra: *mut *mut c_void),
    |ptsz| LaunchInfo {
        kind: kind::KERNEL, ptsz, function: f, grid: [gx, gy, gz], block: [bx, by, bz],
        shared_bytes: shared, stream,
    },
    [k0 0, k1 1, k2 2, k3 3, k4 4, k5 5, k6 6, k7 7]
);

slots!(
    COOPERATIVE_REAL, COOPERATIVE_PTSZ, COOPERATIVE_WRAPPERS, CooperativeFn,
    (f: *mut c_void, gx: c_uint, gy: c_uint, gz: c_uint, bx: c_uint, by: c_uint, bz: c_uint,
     shared: c_uint, stream: *mut c_void, params: *mut *mut c_void),
    |ptsz| LaunchInfo {
        kind: kind::COOPERATIVE, ptsz, function: f, grid: [gx, gy, gz], block: [bx, by, bz],
        shared_bytes: shared, stream,
    },
    [c0 0, c1 1, c2 2, c3 3, c4 4, c5 5, c6 6, c7 7]
);

slots!(
    KERNEL_EX_REAL, KERNEL_EX_PTSZ, KERNEL_EX_WRAPPERS, KernelExFn,
    (config: *const LaunchConfig, f: *mut c_void, params: *mut *mut c_void, extra: *mut *mut c_void),
    |ptsz| ex_info(config, f, ptsz),
    [e0 0, e1 1, e2 2, e3 3, e4 4, e5 5, e6 6, e7 7]
);

slots!(
    GRAPH_REAL, GRAPH_PTSZ, GRAPH_WRAPPERS, GraphFn,
    (exec: *mut c_void, stream: *mut c_void),
    |ptsz| LaunchInfo {
        kind: kind::GRAPH, ptsz, function: std::ptr::null_mut(), grid: [0; 3], block: [0; 3],
        shared_bytes: 0, stream,
    },
    [g0 0, g1 1, g2 2, g3 3, g4 4, g5 5, g6 6, g7 7]
);

/// A `cuLaunchKernelEx` launch's shape from its configuration (zeros and a
/// null stream for a null configuration, which the driver refuses).
fn ex_info(config: *const LaunchConfig, f: *mut c_void, ptsz: u32) -> LaunchInfo {
    // SAFETY: a non-null configuration the launch call received.
    let c = unsafe { config.as_ref() };
    LaunchInfo {
        kind: kind::KERNEL_EX,
        ptsz,
        function: f,
        grid: c.map_or([0; 3], |c| c.grid),
        block: c.map_or([0; 3], |c| c.block),
        shared_bytes: c.map_or(0, |c| c.shared_bytes),
        stream: c.map_or(std::ptr::null_mut(), |c| c.stream),
    }
}

// The shim's claim to keep CUDA's struct layout: CUlaunchConfig's stream
// sits after seven 32-bit fields, padded to 8.
const _: () = assert!(std::mem::offset_of!(LaunchConfig, stream) == 32);
const _: () = assert!(std::mem::size_of::<LaunchConfig>() == 56);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_entry_points_in_every_form() {
        let l = |kind, ptsz| Some(Entry::Launch { kind, ptsz });
        assert_eq!(classify(b"cuLaunchKernel"), l(kind::KERNEL, false));
        assert_eq!(classify(b"cuLaunchKernel_ptsz"), l(kind::KERNEL, true));
        assert_eq!(classify(b"cuLaunchKernelEx_ptsz"), l(kind::KERNEL_EX, true));
        assert_eq!(classify(b"cuLaunchKernelEx"), l(kind::KERNEL_EX, false));
        assert_eq!(
            classify(b"cuLaunchCooperativeKernel_ptsz"),
            l(kind::COOPERATIVE, true)
        );
        assert_eq!(classify(b"cuGraphLaunch"), l(kind::GRAPH, false));
        assert_eq!(classify(b"cuGraphLaunch_ptsz"), l(kind::GRAPH, true));
        assert_eq!(classify(b"cuLaunchKernel_v2"), l(kind::KERNEL, false));
        assert_eq!(
            classify(b"cuGetProcAddress"),
            Some(Entry::GetProcAddress { v2: false })
        );
        assert_eq!(
            classify(b"cuGetProcAddress_v2"),
            Some(Entry::GetProcAddress { v2: true })
        );
        for other in [
            &b"cuLaunchHostFunc"[..],
            b"cuGraphLaunchWhatever",
            b"cuLaunchKernel_vx",
            b"cuLaunchKernel_v",
            b"cuMemcpyDtoH_v2",
            b"cuGetProcAddress_ptsz",
            b"",
        ] {
            assert_eq!(classify(other), None, "{}", String::from_utf8_lossy(other));
        }
    }

    #[test]
    fn launch_config_layout_is_cudas() {
        let c = LaunchConfig {
            grid: [1, 2, 3],
            block: [4, 5, 6],
            shared_bytes: 7,
            stream: 8 as *mut c_void,
            attrs: std::ptr::null_mut(),
            num_attrs: 0,
        };
        let i = ex_info(&c, 9 as *mut c_void, 1);
        assert_eq!(
            (i.kind, i.ptsz, i.grid, i.block, i.shared_bytes),
            (kind::KERNEL_EX, 1, [1, 2, 3], [4, 5, 6], 7)
        );
        assert_eq!((i.stream as usize, i.function as usize), (8, 9));
        let n = ex_info(std::ptr::null(), 9 as *mut c_void, 0);
        assert_eq!((n.grid, n.stream as usize), ([0; 3], 0));
    }
}
