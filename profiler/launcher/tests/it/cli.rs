//! The fikit-profile binary with commands that are not CUDA programs: exit
//! status, signal forwarding, the no-GPU / no-libcupti messages, bad input,
//! and the whole spool → trace path (a child that drops a spool where the
//! collector would).

use crate::common;

use std::path::Path;
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use predicates::prelude::*;

const BIN: &str = env!("CARGO_BIN_EXE_fikit-profile");

fn profile(out: &Path) -> Command {
    let mut c = profile_with_runs(out);
    // The commands here play the collector (they copy spools): no untraced
    // runs or pressure pass after them, which need the real one (see the
    // next helper).
    c.args(["--runs", "0", "--no-pressure"]);
    c
}

/// [`profile`] with fikit-profile's default untraced runs.
fn profile_with_runs(out: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.arg("-o").arg(out);
    // Keep the machine's CUDA toolkit (if any) out of the way.
    c.env("FIKIT_CUPTI_PATH", "/nonexistent/fikit-test");
    c
}

/// A folder with one finished spool in `src/`, the traces folder to write,
/// and the shell command that plays the collector by copying the spool.
fn one_finished_spool() -> (tempfile::TempDir, std::path::PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    common::write_spool(&src.join("fikit-4242.spool"), &common::records(true));
    let out = dir.path().join("traces");
    let copy = format!("cp {}/*.spool \"$FIKIT_SPOOL_DIR\"/", src.display());
    (dir, out, copy)
}

#[test]
fn an_untraced_run_that_cannot_start_keeps_the_trace_and_says_so() {
    // The command plays the collector for the traced run; the untraced runs
    // need the real one, which is missing here.
    let (dir, out, copy) = one_finished_spool();
    let run = profile_with_runs(&out)
        .env("FIKIT_COLLECTOR", dir.path().join("missing.so"))
        .args(["--name", "job", "--", "sh", "-c", &copy])
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
    assert!(
        err.lines().next().unwrap().starts_with(
            "fikit-profile: runs the command 5 times: once traced (the trace), then 3 times untraced"
        ),
        "{err}"
    );
    assert!(
        err.contains("the pressure pass did not run: an untraced run failed"),
        "{err}"
    );
    let trace = out.join("job-4242.parquet");
    assert!(
        err.contains(&format!(
            "untraced run 1 of 3 exited 1: no more runs; {} is whole, with 0 untraced runs before it",
            trace.display()
        )),
        "{err}"
    );
    assert!(!err.contains("untraced run 2 of 3"), "{err}");
    // The trace is whole, without a characterization.
    let t = fikit_trace::read_trace(&trace).unwrap();
    assert!(!t.kernels.is_empty());
    assert_eq!(t.meta.characterization, None);
}

#[test]
fn without_mps_the_pressure_pass_is_skipped_with_a_note_and_the_trace_kept() {
    // The command plays the collector; an nvidia-cuda-mps-control that
    // cannot start a daemon stands in for a machine without MPS.
    let (dir, out, copy) = one_finished_spool();
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let mps = bin.join("nvidia-cuda-mps-control");
    std::fs::write(&mps, "#!/bin/sh\necho 'no MPS here' >&2\nexit 1\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&mps, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let run = profile_with_runs(&out)
        .env("PATH", path)
        .args(["--runs", "0", "--name", "job", "--", "sh", "-c", &copy])
        .assert()
        .success();
    let err = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
    assert!(
        err.lines().next().unwrap().starts_with(
            "fikit-profile: runs the command twice: once traced (the trace), then once beside a victim kernel under MPS"
        ),
        "{err}"
    );
    assert!(
        err.contains("pressure pass: no figure (cannot run under MPS: nvidia-cuda-mps-control -d: exit status: 1 no MPS here")
            && err.contains("fikit-sim weighs this job's kernels under MPS as its model does"),
        "{err}"
    );
    let t = fikit_trace::read_trace(&out.join("job-4242.parquet")).unwrap();
    assert!(!t.kernels.is_empty());
    assert_eq!(t.meta.characterization, None);
    // The pass's folder is gone.
    let left: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["job-4242.parquet"], "{left:?}");
}

#[test]
fn an_empty_job_name_is_bad_input_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let ran = dir.path().join("ran");
    Command::new(BIN)
        .args(["-n", " ", "-o"])
        .arg(dir.path().join("out"))
        .args(["--", "touch"])
        .arg(&ran)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("a job name cannot be empty"));
    assert!(!ran.exists());
}

#[test]
fn exits_with_the_commands_status() {
    let dir = tempfile::tempdir().unwrap();
    profile(dir.path())
        .args(["--", "sh", "-c", "exit 3"])
        .assert()
        .code(3);
    profile(dir.path())
        .args(["--", "sh", "-c", "exit 7"])
        .assert()
        .code(7)
        .stderr(predicate::str::contains("fikit-profile:"));
    // (A command that exits 0 with nothing recorded: says_why_nothing_was_recorded.)
    // Nothing was recorded, so nothing is written.
    let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(files.is_empty(), "{files:?}");
}

#[test]
fn the_spool_folder_is_absolute_so_a_command_may_change_folders() {
    let dir = tempfile::tempdir().unwrap();
    // A relative -o: the command still gets an absolute spool folder that exists.
    Command::new(BIN)
        .current_dir(dir.path())
        .args(["-o", "out", "--", "sh", "-c"])
        .arg(r#"cd / && case "$FIKIT_SPOOL_DIR" in /*) test -d "$FIKIT_SPOOL_DIR" && exit 4 ;; esac; exit 9"#)
        .env("FIKIT_CUPTI_PATH", "/nonexistent/fikit-test")
        .assert()
        // The command's own status (a 0 would read as 1 here: nothing can
        // be recorded without libcupti).
        .code(4);
}

#[test]
fn an_inherited_ignored_sigint_stays_ignored_for_the_command() {
    // As a shell starts a background job: SIGINT ignored. The command must
    // inherit that, so its own SIGINT does not kill it.
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        r#"trap '' INT; exec {BIN} -o {} -- sh -c 'kill -INT $$; echo survived; exit 3'"#,
        dir.path().display()
    );
    Command::new("sh")
        .args(["-c", &script])
        .env("FIKIT_CUPTI_PATH", "/nonexistent/fikit-test")
        .assert()
        .code(3)
        .stdout(predicate::str::contains("survived"));
}

#[test]
fn a_command_killed_by_a_signal_gives_128_plus_the_signal() {
    let dir = tempfile::tempdir().unwrap();
    profile(dir.path())
        .args(["--", "sh", "-c", "kill -TERM $$"])
        .assert()
        .code(128 + 15);
    profile(dir.path())
        .args(["--", "sh", "-c", "kill -KILL $$"])
        .assert()
        .code(128 + 9);
}

fn wait_for(path: &Path) {
    let t = Instant::now();
    while !path.exists() {
        assert!(t.elapsed() < Duration::from_secs(20), "child never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn send(pid: u32, sig: libc::c_int) {
    // SAFETY: sending a signal to a child we started.
    assert_eq!(unsafe { libc::kill(pid as i32, sig) }, 0);
}

#[test]
fn sigint_and_sigterm_are_forwarded() {
    let dir = tempfile::tempdir().unwrap();
    for (sig, script, want) in [
        // A child that traps SIGINT and exits with its own status.
        (
            libc::SIGINT,
            "trap 'exit 42' INT; touch \"$READY\"; while true; do sleep 0.05; done",
            42,
        ),
        // A child that does not handle SIGTERM dies of it.
        (
            libc::SIGTERM,
            "touch \"$READY\"; exec sleep 30",
            128 + libc::SIGTERM,
        ),
    ] {
        let ready = dir.path().join(format!("ready-{sig}"));
        let mut cmd = StdCommand::new(BIN);
        // The signal at its default in fikit-profile, whatever this test
        // process inherited: a test run started as a background job has
        // SIGINT ignored, and fikit-profile rightly keeps an inherited
        // ignored SIGINT (the test above), which would leave it waiting here.
        // SAFETY: between fork and exec only `signal`, async-signal-safe.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || {
                libc::signal(sig, libc::SIG_DFL);
                Ok(())
            });
        }
        let mut child = cmd
            .arg("-o")
            .arg(dir.path())
            .args(["--", "sh", "-c", script])
            .env("READY", &ready)
            .env("FIKIT_CUPTI_PATH", "/nonexistent/fikit-test")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for(&ready);
        let t = Instant::now();
        send(child.id(), sig);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(want), "signal {sig}");
        assert!(t.elapsed() < Duration::from_secs(10));
    }
}

#[test]
fn says_why_nothing_was_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let out = profile(dir.path())
        .env("CUDA_HOME", "/nonexistent/cuda")
        .args(["--", "sh", "-c", "echo ran; exit 5"])
        .assert()
        .code(5)
        .stdout(predicate::str::contains("ran"))
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    // This machine may or may not have a GPU or a CUDA toolkit; either way
    // the command ran and fikit-profile said why there is no trace.
    assert!(
        err.contains("nothing was recorded") || err.contains("no CUDA activity"),
        "{err}"
    );
    let env = |k: &str| match k {
        "FIKIT_CUPTI_PATH" => Some("/nonexistent/fikit-test".to_string()),
        "CUDA_HOME" => Some("/nonexistent/cuda".to_string()),
        _ => None,
    };
    if matches!(
        fikit_protocol::locate::locate_cupti(&env, ""),
        fikit_protocol::locate::Located::NotFound(_)
    ) {
        assert!(err.contains("libcupti was not found"), "{err}");
        assert!(err.contains("/nonexistent/fikit-test"), "{err}");
        assert!(err.contains("/usr/local/cuda/extras/CUPTI/lib64"), "{err}");
    }
    // A command that succeeds: where nothing could be recorded the run is
    // no success (exit 1); where recording worked and the command used no
    // GPU, it is (exit 0).
    let out = profile(dir.path())
        .env("CUDA_HOME", "/nonexistent/cuda")
        .args(["--", "true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("nothing was recorded") {
        assert_eq!(out.status.code(), Some(1), "{err}");
    } else {
        assert!(err.contains("no CUDA activity"), "{err}");
        assert_eq!(out.status.code(), Some(0), "{err}");
    }
}

#[test]
fn a_missing_collector_library_is_reported_and_the_command_still_runs() {
    let dir = tempfile::tempdir().unwrap();
    profile(dir.path())
        .env("FIKIT_COLLECTOR", "/nonexistent/libfikit_collector.so")
        .args(["--", "sh", "-c", "exit 4"])
        .assert()
        .code(4)
        .stderr(predicate::str::contains(
            "FIKIT_COLLECTOR=/nonexistent/libfikit_collector.so is not a file",
        ));
}

#[test]
fn bad_input_exits_with_2() {
    let dir = tempfile::tempdir().unwrap();
    profile(dir.path())
        .args(["--priority", "medium", "--", "true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid priority"));
    profile(dir.path())
        .args(["--priority", "12", "--", "true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("0 (highest) to 9 (lowest)"));
    profile(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("COMMAND"));
    // A command that does not exist: like a shell, 127.
    profile(dir.path())
        .args(["--", "/nonexistent/fikit-no-such-program"])
        .assert()
        .code(127)
        .stderr(predicate::str::contains("cannot run"));
    // An output folder that cannot be created.
    Command::new(BIN)
        .args(["-o", "/proc/fikit-cannot-create", "--", "true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot create the output folder"));
    // Waits and run counts the clock or the plan cannot hold (a wait of
    // i64::MAX s panicked on the deadline's overflow; --runs u64::MAX
    // wrapped the plan to "once").
    for (opt, value, says) in [
        (
            "--wait-descendants",
            "9223372036854775807",
            "not in 0..=1000000",
        ),
        ("--runs", "18446744073709551615", "--runs <N>"),
        ("--runs", "101", "not in 0..=100"),
    ] {
        Command::new(BIN)
            .args(["-o"])
            .arg(dir.path())
            .args([opt, value, "--", "true"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says).and(predicate::str::contains("panicked").not()));
    }
}

#[test]
fn the_first_line_names_no_option_the_user_did_not_give() {
    let dir = tempfile::tempdir().unwrap();
    // --runs 0 --no-pressure is one traced run, as --single-run is, but
    // the line must not say the user asked for --single-run.
    profile(dir.path())
        .args(["--", "true"])
        .assert()
        .stderr(predicate::str::contains(
            "runs the command once, traced (no untraced runs and no pressure pass",
        ))
        .stderr(predicate::str::contains("--single-run").not());
}

#[test]
fn help_documents_every_option() {
    let out = Command::new(BIN).arg("--help").assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    for opt in [
        "--name",
        "--priority",
        "--output",
        "--all-api",
        "--keep-spools",
        "--quiet",
        "--metrics",
        "--runs",
        "--single-run",
        "--wait-descendants",
        "COMMAND",
        "128+signal",
        "FIKIT_COLLECTOR",
    ] {
        assert!(text.contains(opt), "--help lacks {opt}:\n{text}");
    }
}

#[test]
fn spools_left_by_the_command_become_traces() {
    // The command plays the collector: it drops a finished spool and a
    // killed one (no end record) into FIKIT_SPOOL_DIR, plus the spool of a
    // process that initialized CUDA but ran nothing.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    // Both processes' collectors say which libcupti they use: said once.
    let note = fikit_spool::Record::Note {
        text: "libcupti: /w/libcupti.so.13 (the program's own copy)".into(),
    };
    let mut finished = common::records(true);
    finished.insert(1, note.clone());
    common::write_spool(&src.join("fikit-4242.spool"), &finished);
    let mut killed = common::records(false);
    killed.insert(1, note);
    if let fikit_spool::Record::Start(s) = &mut killed[0] {
        s.pid = 4343;
    }
    common::write_spool(&src.join("fikit-4343.spool"), &killed);
    let idle: Vec<_> = common::records(true)
        .into_iter()
        .filter(|r| {
            !matches!(
                r,
                fikit_spool::Record::Kernel(_) | fikit_spool::Record::MemOp(_)
            )
        })
        .map(|mut r| {
            if let fikit_spool::Record::Start(s) = &mut r {
                s.pid = 4444;
            }
            r
        })
        .collect();
    common::write_spool(&src.join("fikit-4444.spool"), &idle);

    let out = dir.path().join("traces");
    let script = format!("cp {}/*.spool \"$FIKIT_SPOOL_DIR\"/", src.display());
    let assert = profile(&out)
        .args(["--name", "resnet50 bs1", "--priority", "high", "--"])
        .args(["sh", "-c", &script])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(stdout.contains("resnet50 bs1"), "{stdout}");
    assert!(stderr.contains("did not end cleanly"), "{stderr}");
    assert_eq!(
        stderr
            .matches("collector: libcupti: /w/libcupti.so.13")
            .count(),
        1,
        "{stderr}"
    );
    assert!(
        stderr.contains("process 4444 initialized CUDA but ran no GPU work"),
        "{stderr}"
    );

    let a = fikit_trace::read_trace(&out.join("resnet50_bs1-4242.parquet")).unwrap();
    assert!(a.meta.capture_complete);
    assert_eq!(a.meta.priority, 0);
    assert_eq!(a.meta.job_name, "resnet50 bs1");
    assert_eq!(a.kernels.len(), 3);
    let b = fikit_trace::read_trace(&out.join("resnet50_bs1-4343.parquet")).unwrap();
    assert!(!b.meta.capture_complete);
    assert!(!out.join("resnet50_bs1-4444.parquet").exists());
    // The spool folder is removed after a clean conversion.
    let left: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
}

#[test]
fn a_collector_that_stopped_at_start_up_is_not_reported_as_idle() {
    // The spool of a collector whose start-up failed: its start record, the
    // note why, and the end record, nothing else. The program ran untraced,
    // so fikit-profile must not say it ran no GPU work.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    let why = "CUPTI_ERROR_INVALID_KIND for activity kind 10, which recording needs";
    let stopped: Vec<_> = common::records(true)
        .into_iter()
        .filter(|r| {
            matches!(
                r,
                fikit_spool::Record::Start(_) | fikit_spool::Record::End(_)
            )
        })
        .flat_map(|r| {
            let end = matches!(r, fikit_spool::Record::End(_));
            let note = fikit_spool::Record::Note {
                text: format!("{}{why}", fikit_spool::STOPPED_PREFIX),
            };
            if end { vec![note, r] } else { vec![r] }
        })
        .collect();
    common::write_spool(&src.join("fikit-4545.spool"), &stopped);
    let out = dir.path().join("traces");
    let script = format!("cp {}/*.spool \"$FIKIT_SPOOL_DIR\"/", src.display());
    // The command succeeded and nothing could be recorded: exit 1.
    let assert = profile(&out)
        .args(["--"])
        .args(["sh", "-c", &script])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.contains("process 4242: the collector stopped at start-up"),
        "{stderr}"
    );
    assert!(stderr.contains(why), "{stderr}");
    assert!(
        stderr.contains("whether the command used the GPU is unknown"),
        "{stderr}"
    );
    assert!(!stderr.contains("ran no GPU work"), "{stderr}");
    assert!(!stderr.contains("no CUDA activity"), "{stderr}");
}

#[test]
fn a_daemonized_grandchild_is_waited_for() {
    // The command exits at once; the process it leaves behind (its output
    // closed, as a daemon's is) writes a file a second later. fikit-profile
    // must not return before that file exists, and exits with the command's
    // status (6: a 0 would read as 1 here, nothing recorded without libcupti).
    let dir = tempfile::tempdir().unwrap();
    let done = dir.path().join("done");
    let script = format!(
        "(sleep 1; touch {}) >/dev/null 2>&1 </dev/null & exit 6",
        done.display()
    );
    let t = Instant::now();
    let out = profile(&dir.path().join("traces"))
        .args(["--", "sh", "-c", &script])
        .assert()
        .code(6);
    assert!(
        done.exists(),
        "fikit-profile returned before the grandchild ended"
    );
    assert!(t.elapsed() >= Duration::from_millis(900));
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("waiting up to 10 s for 1 process(es)"),
        "{stderr}"
    );
}

#[test]
fn descendants_still_running_after_the_grace_period_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let out = profile(&dir.path().join("traces"))
        .args(["--wait-descendants", "1", "--"])
        .args(["sh", "-c", "sleep 6 >/dev/null 2>&1 </dev/null & exit 5"])
        .assert()
        .code(5);
    let elapsed = t.elapsed();
    assert!(elapsed >= Duration::from_millis(900), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("still run after 1 s: pid ") && stderr.contains("(sleep)"),
        "{stderr}"
    );
}

#[test]
fn signals_reach_descendants_after_the_command_exited() {
    // The grandchild traps SIGTERM and records that it got it; fikit-profile
    // receives SIGTERM after its direct child has exited with 7.
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let got = dir.path().join("got-term");
    let script = format!(
        "(trap 'touch {got}; exit 0' TERM; touch {ready}; while :; do sleep 0.05; done) \
         >/dev/null 2>&1 </dev/null & exit 7",
        got = got.display(),
        ready = ready.display()
    );
    let mut child = StdCommand::new(BIN)
        .arg("-o")
        .arg(dir.path().join("traces"))
        .args(["--wait-descendants", "30", "--", "sh", "-c", &script])
        .env("FIKIT_CUPTI_PATH", "/nonexistent/fikit-test")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&ready);
    // Give the direct child time to exit, so the signal goes the new way.
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    send(child.id(), libc::SIGTERM);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(7));
    assert!(got.exists(), "the grandchild never got SIGTERM");
    assert!(t.elapsed() < Duration::from_secs(10));
}

#[test]
fn the_libcupti_the_launcher_found_is_not_passed_as_the_users_choice() {
    // A toolkit with a libcupti, and no FIKIT_CUPTI_PATH from the user: the
    // launcher passes its find as FIKIT_CUPTI_FOUND (which a program's own
    // libcupti overrules without a note), never as FIKIT_CUPTI_PATH, and
    // tells the collector that it prints the notes (FIKIT_LAUNCHER).
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("cuda/extras/CUPTI/lib64");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::write(lib.join("libcupti.so.13"), b"").unwrap();
    let out = Command::new(BIN)
        .args(["-o"])
        .arg(dir.path().join("out"))
        .args(["--", "sh", "-c"])
        .arg(r#"echo "path=${FIKIT_CUPTI_PATH-unset} found=${FIKIT_CUPTI_FOUND-unset} launcher=${FIKIT_LAUNCHER-unset}""#)
        .env_remove("FIKIT_CUPTI_PATH")
        .env("CUDA_HOME", dir.path().join("cuda"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("path=unset"), "{stdout}");
    assert!(stdout.contains("launcher=1"), "{stdout}");
    // The machine's own toolkit may come first in the search; either way the
    // launcher found one and passed it as its own find.
    assert!(!stdout.contains("found=unset"), "{stdout}");
    assert!(stdout.contains("libcupti"), "{stdout}");
}

#[test]
fn the_metrics_pass_runs_the_command_again_and_its_figures_go_into_the_traces() {
    // The command plays the collector: without FIKIT_METRICS it drops the
    // profile's spool; with FIKIT_METRICS=1 (the metrics pass) a spool of
    // another pid whose records carry the figures of one of the kernels'
    // keys, and of a key the profile never ran.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("metrics")).unwrap();
    let profile_records = common::records(true);
    common::write_spool(&src.join("fikit-4242.spool"), &profile_records);
    // The profile alone, for its kernels and keys.
    let plain = dir.path().join("plain");
    let copy = format!("cp {}/*.spool \"$FIKIT_SPOOL_DIR\"/", src.display());
    profile(&plain)
        .args(["--name", "job", "--", "sh", "-c", &copy])
        .assert()
        .success();
    let first = fikit_trace::read_trace(&plain.join("job-4242.parquet")).unwrap();
    let key = first.kernels[0].kernel_key;
    let mut pass = profile_records.clone();
    if let fikit_spool::Record::Start(s) = &mut pass[0] {
        s.pid = 5252;
    }
    let figures = |k: u64, bytes: u64| fikit_spool::Record::KernelMetrics {
        kernel_key: k,
        dram_read_bytes: bytes,
        dram_write_bytes: bytes / 2,
        sm_issue_bp: Some(3_100),
        l2_bytes: Some(bytes * 3),
    };
    // In the pass's run one kernel launched with another grid (another key),
    // and that key measured too.
    let last = pass
        .iter()
        .rposition(|r| matches!(r, fikit_spool::Record::Kernel(_)))
        .unwrap();
    if let fikit_spool::Record::Kernel(k) = &mut pass[last] {
        k.grid[0] += 1000;
    }
    let pass_trace = {
        let d = dir.path().join("pass-only");
        std::fs::create_dir_all(src.join("pass-only")).unwrap();
        common::write_spool(&src.join("pass-only/fikit-5252.spool"), &pass);
        let copy = format!(
            "cp {}/pass-only/*.spool \"$FIKIT_SPOOL_DIR\"/",
            src.display()
        );
        profile(&d)
            .args(["--name", "job", "--", "sh", "-c", &copy])
            .assert()
            .success();
        fikit_trace::read_trace(&d.join("job-5252.parquet")).unwrap()
    };
    let other = pass_trace
        .kernels
        .iter()
        .map(|k| k.kernel_key)
        .find(|o| !first.kernels.iter().any(|k| k.kernel_key == *o))
        .expect("the changed grid gives a key of its own");
    pass.insert(1, figures(key, 1 << 20));
    pass.insert(2, figures(other, 9));
    common::write_spool(&src.join("metrics/fikit-5252.spool"), &pass);
    let out = dir.path().join("traces");
    let script = format!(
        "if [ \"$FIKIT_METRICS\" = 1 ]; then cp {0}/metrics/*.spool \"$FIKIT_SPOOL_DIR\"/; \
         else cp {0}/*.spool \"$FIKIT_SPOOL_DIR\"/; fi",
        src.display()
    );
    let assert = profile(&out)
        .args(["--name", "job", "--metrics", "--"])
        .args(["sh", "-c", &script])
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    let t = fikit_trace::read_trace(&out.join("job-4242.parquet")).unwrap();
    let keys: std::collections::BTreeSet<u64> = t.kernels.iter().map(|k| k.kernel_key).collect();
    assert_eq!(
        t.kernel_metrics.keys().copied().collect::<Vec<_>>(),
        vec![key],
        "only keys the profile ran"
    );
    assert_eq!(t.kernel_metrics[&key].dram_read_bytes, 1 << 20);
    assert_eq!(t.kernel_metrics[&key].dram_write_bytes, 1 << 19);
    assert_eq!(t.kernel_metrics[&key].sm_issue_bp, Some(3_100));
    assert_eq!(t.kernel_metrics[&key].l2_bytes, Some(3 << 20));
    // The profile's own timings are kept, not the pass's.
    assert_eq!(t.meta.pid, 4242);
    assert_eq!(t.kernels, first.kernels);
    assert!(
        stderr.contains(&format!("metrics for 1 of {} kernel keys", keys.len())),
        "{stderr}"
    );
    // The pass's run measured both keys it launched, one of which the
    // profile never ran: said, since that key's figures are lost.
    assert!(
        stderr.contains("metrics pass: 0 of the 2 kernel keys its run launched were not measured")
            && stderr.contains("; 1 measured keys are not in the profile's traces"),
        "{stderr}"
    );
    // Only the profile's trace is left.
    let left: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, vec!["job-4242.parquet".to_string()]);
}

#[test]
fn a_metrics_pass_that_measures_nothing_leaves_the_traces_as_they_were() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    common::write_spool(&src.join("fikit-4242.spool"), &common::records(true));
    let out = dir.path().join("traces");
    let script = format!(
        "[ \"$FIKIT_METRICS\" = 1 ] || cp {}/*.spool \"$FIKIT_SPOOL_DIR\"/",
        src.display()
    );
    profile(&out)
        .args(["--name", "job", "--metrics", "--"])
        .args(["sh", "-c", &script])
        .assert()
        .success()
        .stderr(predicate::str::contains("metrics pass: nothing measured"));
    let t = fikit_trace::read_trace(&out.join("job-4242.parquet")).unwrap();
    assert!(t.kernel_metrics.is_empty());
}
