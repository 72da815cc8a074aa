//! A newcomer's first command: the README's quick start, run as a user of a
//! fresh clone would, in a folder that holds only the shipped H200 traces (so
//! the calibrated model must come with the binary, not from the checkout).

use std::path::Path;

use fikit_e2e::cmd;

/// The first command of the README's quick start, as `fikit-sim` arguments.
fn readme_first_command() -> Vec<String> {
    let root = fikit_e2e::root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let quick = readme
        .split("## Quick start")
        .nth(1)
        .expect("README.md has a Quick start section");
    let block = quick
        .split("```sh")
        .nth(1)
        .expect("the quick start has a sh block");
    let first = block
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap();
    let args = first
        .strip_prefix("cargo run -p fikit-sim -- ")
        .unwrap_or_else(|| panic!("the first command runs fikit-sim through cargo: {first}"));
    args.split_whitespace().map(String::from).collect()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

#[test]
fn the_readmes_first_command_names_the_calibrated_model_and_answers_pairwise() {
    let args = readme_first_command();
    assert_eq!(
        args,
        ["traces/h200/"],
        "the quick start simulates the shipped H200 traces"
    );
    let root = fikit_e2e::root();
    let fresh = tempfile::tempdir().unwrap();
    copy_dir(&root.join("traces/h200"), &fresh.path().join("traces/h200"));
    let out = cmd("fikit-sim")
        .current_dir(fresh.path())
        .args(&args)
        .assert()
        .success();
    let o = out.get_output();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = stdout.lines().collect();
    // First line: the calibrated model of the traces' GPU, and how to opt out.
    assert!(
        lines[0].starts_with("GPU model: NVIDIA H200, calibrated (simulator/models/h200.json)"),
        "{stdout}"
    );
    assert!(lines[0].contains("--model default"), "{}", lines[0]);
    // Second: how each job's host is simulated: at its untraced speed,
    // from the characterization every shipped trace holds, with its range.
    assert!(
        lines[1].starts_with("host: as run untraced, the profile's host time times: "),
        "{stdout}"
    );
    // Third: how each job's kernels press under MPS, from its pressure pass.
    assert!(
        lines[2].starts_with("MPS pressure, each job's weight: "),
        "{stdout}"
    );
    for job in [
        "resnet50-bs1-eval",
        "resnet50-bs1-eval-2ms-arrivals",
        "mobilenet_v3_large-bs1-eval",
        "efficientnet_b0-bs1-eval",
        "vit_b_16-bs1-eval",
        "bert-base-bs1-eval",
        "resnet50-bs32-train",
        "resnet50-bs128-eval",
        "bert-base-bs32-train",
    ] {
        assert!(
            lines[1].contains(&format!(" {job} ")),
            "{job}: {}",
            lines[1]
        );
        assert!(
            lines[2].contains(&format!(" {job} ")),
            "{job}: {}",
            lines[2]
        );
    }
    // Then the pairwise answer: every latency-critical job beside every
    // throughput job of the suite (6 x 3), with each policy's slowdown.
    assert!(
        lines[4].starts_with("Each latency-critical job"),
        "{stdout}"
    );
    let header = lines[6];
    for col in [
        "latency-critical job",
        "beside",
        "timeslice",
        "mps",
        "preemptive",
        "fikit",
        "FIKIT vs timeslice",
    ] {
        assert!(header.contains(col), "{header}");
    }
    let rows: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains("-eval") && l.contains('┆') && l.contains("faster"))
        .collect();
    assert_eq!(rows.len(), 18, "{stdout}");
    for r in &rows {
        let cells: Vec<&str> = r
            .split('┆')
            .map(|c| c.trim().trim_matches('│').trim())
            .collect();
        // A latency-critical job is never faster beside a partner than alone,
        // and each answer lies inside its range over the hosts' untraced
        // runs: `1.39x [1.24-1.45]`.
        for c in &cells[2..6] {
            let nums: Vec<f64> = c
                .split(|ch: char| !(ch.is_ascii_digit() || ch == '.'))
                .filter(|s| !s.is_empty())
                .map(|s| s.parse().unwrap_or_else(|_| panic!("{r}")))
                .collect();
            let [v, lo, hi] = nums[..] else {
                panic!("not `point [lo-hi]`: {c} in {r}")
            };
            assert!(v >= 0.995, "{r}");
            assert!(lo <= v && v <= hi, "{r}");
        }
    }
    // The README shows its rows as this command prints them.
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let shown: Vec<&str> = readme
        .split("## Quick start")
        .nth(1)
        .and_then(|q| q.split("```text").nth(1))
        .and_then(|b| b.split("```").next())
        .expect("the quick start shows its output in a text block")
        .lines()
        .filter(|l| l.contains('┆'))
        .collect();
    assert!(!shown.is_empty(), "the quick start's text block shows rows");
    for l in shown {
        assert!(
            lines.contains(&l),
            "README.md's quick start shows a line fikit-sim does not print:\n{l}\n{stdout}"
        );
    }
    // The way to the full table and plots is one flag away, and said.
    assert!(
        stderr.contains("--jobs ") && stderr.contains("--together"),
        "{stderr}"
    );
    // The pairwise view writes no plots into the user's folder.
    assert!(!fresh.path().join("reports").exists());
}
