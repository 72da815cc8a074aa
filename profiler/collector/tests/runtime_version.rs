//! The program's CUDA runtime version, found in a fake libcudart built here
//! with the C compiler (the test says so and passes when there is none).

use std::path::Path;
use std::process::Command;

fn build_fake(dir: &Path, name: &str, version: i32) -> Option<std::path::PathBuf> {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(
        &src,
        format!(
            "int cudaRuntimeGetVersion(int *v) {{ if (!v) return 1; *v = {version}; return 0; }}\n"
        ),
    )
    .unwrap();
    let lib = dir.join(name);
    let ok = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&src)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    ok.then_some(lib)
}

fn dlopen(path: &Path, flags: i32) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: loads a library this test built; it has no initializers.
    let h = unsafe { libc::dlopen(c.as_ptr(), flags) };
    assert!(!h.is_null(), "cannot load {}", path.display());
}

#[test]
fn the_runtime_version_comes_from_the_loaded_libcudart() {
    let dir = tempfile::tempdir().unwrap();
    let Some(local) = build_fake(dir.path(), "libcudart.so.12", 12080) else {
        eprintln!("no C compiler: skipped");
        return;
    };
    // Loaded RTLD_LOCAL (as Python loads extension libraries): not visible
    // through RTLD_DEFAULT, found through /proc/self/maps and RTLD_NOLOAD.
    dlopen(&local, libc::RTLD_NOW | libc::RTLD_LOCAL);
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    assert_eq!(fikit_collector::runtime::runtime_version(&maps), Ok(12080));
    // A runtime in the global scope is the one the program's calls reach: it wins.
    let global = build_fake(dir.path(), "libcudart.so.13", 13000).unwrap();
    dlopen(&global, libc::RTLD_NOW | libc::RTLD_GLOBAL);
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    assert_eq!(fikit_collector::runtime::runtime_version(&maps), Ok(13000));
}
