//! Helpers for the end-to-end tests: locating the built binaries and building traces.

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

/// The workspace's packages that own each binary.
fn package_of(bin: &str) -> &'static str {
    match bin {
        "fikit-sim" => "fikit-sim",
        "fikit-profile" => "fikit-profile",
        "fikit-run" => "fikit-run",
        other => panic!("unknown binary {other}"),
    }
}

/// The path of a workspace binary, built first (once per test process) so the
/// tests never run a stale one: `cargo test` builds the binaries of a package
/// only for that package's own tests.
pub fn bin(name: &str) -> PathBuf {
    static BUILT: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if built
        .get_or_insert_with(HashSet::new)
        .insert(name.to_string())
    {
        let mut builds = vec![vec![
            "build",
            "--quiet",
            "-p",
            package_of(name),
            "--bin",
            name,
        ]];
        if name == "fikit-run" {
            // fikit-run injects the collector, found beside it. A separate build:
            // `--bin` would leave the collector's library target out.
            builds.push(vec!["build", "--quiet", "-p", "fikit-collector", "--lib"]);
        }
        for args in builds {
            let status = Command::new(env!("CARGO"))
                .args(&args)
                .status()
                .expect("running cargo build");
            assert!(status.success(), "building {name} failed ({args:?})");
        }
    }
    #[allow(deprecated)] // cargo_bin finds target/<profile>/<name> next to the test executable.
    let path = assert_cmd::cargo::cargo_bin(name);
    assert!(path.exists(), "{} was not built", path.display());
    path
}

/// A command running a workspace binary.
pub fn cmd(name: &str) -> assert_cmd::Command {
    assert_cmd::Command::new(bin(name))
}
