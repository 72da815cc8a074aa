//! The CUDA runtime version of the profiled program.
//!
//! The program's own libcudart (PyTorch's `libcudart.so.13`, say) is already
//! loaded; the collector never loads one. It looks `cudaRuntimeGetVersion` up
//! with `dlsym(RTLD_DEFAULT)` and, when the runtime was loaded `RTLD_LOCAL`,
//! in each `libcudart.so*` mapped into the process (`dlopen` with
//! `RTLD_NOLOAD`, which never loads anything). It is called from the flushing
//! thread at the first flush (or at exit, for a shorter program), never inside
//! `InitializeInjection`: that runs within `cuInit`, possibly under the
//! runtime's own initialisation, where calling back into the runtime could
//! deadlock. `cudaRuntimeGetVersion` only reports the version the runtime was
//! built as; it initialises nothing.

use std::ffi::{CStr, c_int, c_void};
use std::path::Path;

type GetVersion = unsafe extern "C" fn(*mut c_int) -> c_int;

/// True for `libcudart.so`, `libcudart.so.13`, `libcudart.so.13.0.96`.
pub fn is_cudart_file_name(name: &str) -> bool {
    name == "libcudart.so" || name.starts_with("libcudart.so.")
}

/// Calls `cudaRuntimeGetVersion` at `f`, if not null.
///
/// # Safety
/// `f` must be null or the address of a function with the C signature
/// `cudaError_t cudaRuntimeGetVersion(int *)`.
unsafe fn call(f: *mut c_void) -> Option<Result<u32, String>> {
    if f.is_null() {
        return None;
    }
    // SAFETY: guaranteed by the caller.
    let f = unsafe { std::mem::transmute::<*mut c_void, GetVersion>(f) };
    let mut v: c_int = 0;
    // SAFETY: a valid out pointer.
    let rc = unsafe { f(&mut v) };
    Some(match (rc, u32::try_from(v)) {
        (0, Ok(v)) if v > 0 => Ok(v),
        (rc, _) => Err(format!(
            "cudaRuntimeGetVersion returned error {rc} (version {v})"
        )),
    })
}

const SYMBOL: &CStr = c"cudaRuntimeGetVersion";

/// The runtime version (e.g. 13000) of the libcudart this process uses, or
/// why it is unknown. `maps` is the text of `/proc/self/maps`.
pub fn runtime_version(maps: &str) -> Result<u32, String> {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name.
    let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, SYMBOL.as_ptr()) };
    // SAFETY: a symbol of that name is the CUDA runtime's function.
    if let Some(r) = unsafe { call(f) } {
        return r;
    }
    let libs = fikit_protocol::locate::mapped_files(maps, &is_cudart_file_name);
    let mut why = Vec::new();
    for lib in &libs {
        match version_in(lib) {
            Ok(v) => return Ok(v),
            Err(e) => why.push(e),
        }
    }
    if libs.is_empty() {
        Err(
            "no CUDA runtime (libcudart) is loaded in the process (linked statically, or \
             the program uses the driver API only)"
                .into(),
        )
    } else {
        Err(why.join("; "))
    }
}

/// `cudaRuntimeGetVersion` of the already loaded library at `path`.
fn version_in(path: &Path) -> Result<u32, String> {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("bad path {}", path.display()))?;
    // SAFETY: RTLD_NOLOAD returns a handle only for a library already loaded; nothing runs.
    let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
    if h.is_null() {
        return Err(format!("{} is not loaded", path.display()));
    }
    // SAFETY: a live handle and a NUL-terminated name.
    let f = unsafe { libc::dlsym(h, SYMBOL.as_ptr()) };
    // SAFETY: that library's cudaRuntimeGetVersion.
    let r = unsafe { call(f) }
        .unwrap_or_else(|| Err(format!("{} has no cudaRuntimeGetVersion", path.display())));
    // SAFETY: drops only the reference RTLD_NOLOAD added; the program's stays.
    unsafe { libc::dlclose(h) };
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(is_cudart_file_name("libcudart.so.13"));
        assert!(is_cudart_file_name("libcudart.so"));
        assert!(!is_cudart_file_name("libcudart_static.a"));
        assert!(!is_cudart_file_name("libcudart64.so"));
    }

    #[test]
    fn without_a_runtime_it_says_so() {
        // This test binary has no libcudart.
        let e = runtime_version("").unwrap_err();
        assert!(e.contains("no CUDA runtime"), "{e}");
        let maps = "7f-7f r-xp 0 0:0 1 /nonexistent/lib/libcudart.so.13\n";
        let e = runtime_version(maps).unwrap_err();
        assert!(
            e.contains("/nonexistent/lib/libcudart.so.13 is not loaded"),
            "{e}"
        );
    }
}
