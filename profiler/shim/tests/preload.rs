//! The shim preloaded into a program that looks up a stand-in driver
//! (`tests/c/fake_cuda.c`) the way the CUDA runtime and Triton do
//! (`tests/c/driver.c`): launches come back wrapped, the hooks see each one
//! with its shape, variant and result, and everything else passes untouched.
//! Needs a C compiler (`cc`), as the Rust toolchain's linker already does.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The shim library cargo built for this test: beside its binary (in
/// `deps/`, where a test's build leaves it) or in the profile's folder.
fn shim() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps, deps.parent().unwrap()]
        .iter()
        .map(|d| d.join("libfikit_shim.so"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "libfikit_shim.so is in neither {} nor its parent",
                deps.display()
            )
        })
}

fn cc(args: &[&str], out: &Path) {
    let status = Command::new("cc")
        .args(args)
        .arg("-o")
        .arg(out)
        .status()
        .expect("cc runs");
    assert!(status.success(), "cc {args:?}");
}

#[test]
fn launches_looked_up_as_the_runtime_and_triton_do_are_wrapped_and_hooked() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c");
    let d = tempfile::tempdir().unwrap();
    let fake = d.path().join("libfake_cuda.so");
    let driver = d.path().join("driver");
    let group = d.path().join("libgroup.so");
    cc(
        &[
            "-shared",
            "-fPIC",
            "-O1",
            src.join("group.c").to_str().unwrap(),
            "-ldl",
        ],
        &group,
    );
    cc(
        &[
            "-shared",
            "-fPIC",
            "-O1",
            src.join("fake_cuda.c").to_str().unwrap(),
        ],
        &fake,
    );
    cc(
        &["-O1", src.join("driver.c").to_str().unwrap(), "-ldl"],
        &driver,
    );
    let out = Command::new(&driver)
        .arg(&fake)
        .arg(&group)
        .env("LD_PRELOAD", shim())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.trim() == "ok",
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Without the shim the same program sees the fake's own functions and
    // fails its first check: the test depends on the preload.
    let out = Command::new(&driver)
        .arg(&fake)
        .arg(&group)
        .output()
        .unwrap();
    assert!(!out.status.success());
}
