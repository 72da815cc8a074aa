//! Helpers for the end-to-end tests: locating the built binaries and building traces.

pub mod run_json;

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

/// The workspace's binaries the tests run, each with the package that owns it.
const BINARIES: [(&str, &str); 4] = [
    ("fikit-sim", "fikit-sim"),
    ("fikit-profile", "fikit-profile"),
    ("fikit-run", "fikit-run"),
    ("fikit-lab", "fikit-lab"),
];

/// The path of a workspace binary, built first (all of them at once, once per
/// test process) so the tests never run a stale one: `cargo test` builds the
/// binaries of a package only for that package's own tests. One build of the
/// four packages together unifies their dependencies' features, so the target
/// folder holds one build of polars for all of them instead of one per binary.
pub fn bin(name: &str) -> PathBuf {
    static BUILT: Mutex<bool> = Mutex::new(false);
    assert!(
        BINARIES.iter().any(|(bin, _)| *bin == name),
        "unknown binary {name}"
    );
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if !*built {
        let mut args = vec!["build", "--quiet", "--bins"];
        for (_, package) in BINARIES {
            args.extend(["-p", package]);
        }
        let status = Command::new(env!("CARGO"))
            .args(&args)
            .status()
            .expect("running cargo build");
        assert!(status.success(), "building {BINARIES:?} failed");
        *built = true;
    }
    #[allow(deprecated)] // cargo_bin finds target/<profile>/<name> next to the test executable.
    let path = assert_cmd::cargo::cargo_bin(name);
    assert!(path.exists(), "{} was not built", path.display());
    path
}

/// The workspace root, where the shipped traces, reports and README are.
pub fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// A command running a workspace binary (`fikit-run` with
/// [`stand_in_collector`]).
pub fn cmd(name: &str) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::new(bin(name));
    if name == "fikit-run" {
        c.env("FIKIT_COLLECTOR", stand_in_collector());
    }
    c
}

/// What the tests give `fikit-run` as its collector (`FIKIT_COLLECTOR`):
/// their jobs are no CUDA programs, so any file stands in for the library it
/// injects. Building the real one here would leave a second build of the
/// collector's rlib in the target folder, which the doc tests then refuse
/// (E0460).
pub fn stand_in_collector() -> PathBuf {
    std::env::current_exe().expect("the test executable")
}
