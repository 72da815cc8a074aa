//! `fikit-sim --html`: the report is one self-contained file, and headless
//! Chromium renders its tables and plots with no console error.
//!
//! Chromium (`chromium`, or the browser named by `FIKIT_CHROMIUM`) is needed;
//! without it the browser checks print a notice and pass, unless `CI` is set
//! (as `.ci/run` does), where they fail: CI cannot skip them silently.

use std::path::{Path, PathBuf};
use std::process::Command;

use fikit_e2e::cmd;
use fikit_trace::{fixture, write_trace};

/// The browser to test with; `None` (after a notice) when there is none and
/// this is not CI.
fn chromium() -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = std::env::var_os("FIKIT_CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(
            ["chromium", "chromium-browser", "google-chrome"]
                .iter()
                .flat_map(|name| {
                    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                        .map(move |dir| dir.join(name))
                        .collect::<Vec<_>>()
                }),
        )
        .collect();
    if let Some(found) = candidates.into_iter().find(|p| p.is_file()) {
        return Some(found);
    }
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    assert!(
        !ci,
        "CI is set but no chromium was found: install it (apt-get install chromium) or set FIKIT_CHROMIUM"
    );
    eprintln!(
        "skipping the browser check: no chromium found (set FIKIT_CHROMIUM, or install chromium)"
    );
    None
}

/// What headless Chromium made of a page: the DOM after load, and its log.
struct Rendered {
    dom: String,
    log: String,
}

fn render(browser: &Path, page: &Path) -> Rendered {
    let profile = tempfile::tempdir().unwrap();
    let page = page.canonicalize().unwrap();
    let out = Command::new(browser)
        .args([
            "--headless=new",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
            "--window-size=1300,1000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("running chromium");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Rendered {
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
        log: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Lines of the browser log that come from the page: console messages and
/// uncaught errors.
fn page_messages(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
        .collect()
}

/// Two traces: a serving job with host gaps and syncs, a training job.
fn setup(dir: &Path) {
    let serving = fixture::serving("serving", 0, 4);
    let training = fixture::training("training", 9, 16);
    write_trace(&dir.join("serving.parquet"), &serving).unwrap();
    write_trace(&dir.join("training.parquet"), &training).unwrap();
}

/// Runs `fikit-sim ARGS` in `dir` and returns the HTML report it wrote.
fn report(dir: &Path, args: &[&str]) -> String {
    cmd("fikit-sim")
        .current_dir(dir)
        .args(args)
        .assert()
        .success();
    std::fs::read_to_string(dir.join("out/report.html")).unwrap()
}

/// The attribute `name` of the `<html>` element in a dumped DOM.
fn root_attr<'a>(dom: &'a str, name: &str) -> Option<&'a str> {
    let start = dom.find("<html")?;
    let tag = &dom[start..start + dom[start..].find('>')?];
    let key = format!("{name}=\"");
    let at = tag.find(&key)? + key.len();
    Some(&tag[at..at + tag[at..].find('"')?])
}

#[test]
fn the_report_is_self_contained_with_every_table_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let html = report(
        dir.path(),
        &["--no-plots", "--html", "out/report.html", "."],
    );
    assert!(
        !dir.path().join("reports").exists(),
        "--no-plots writes no plot files"
    );
    assert!(html.starts_with("<!DOCTYPE html>"));
    // Named by its jobs (the traces' order: file names sorted).
    assert!(
        html.contains("<title>fikit-sim: serving + training</title>"),
        "{}",
        &html[..html.len().min(400)]
    );
    // --jobs names the jobs it keeps, in its order.
    let picked = report(
        dir.path(),
        &[
            "--no-plots",
            "--jobs",
            "training,serving",
            "--html",
            "out/report.html",
            ".",
        ],
    );
    assert!(picked.contains("<title>fikit-sim: training + serving</title>"));
    // Nothing fetched: no URL but the SVG namespace, no external script or style.
    let without_ns = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    for needle in ["http://", "https://", "<link", "src=\"http", "<script src"] {
        assert!(!without_ns.contains(needle), "found {needle}");
    }
    assert_eq!(
        html.matches("<table>").count(),
        3,
        "jobs, per job, per policy"
    );
    assert_eq!(
        html.matches("<svg ").count(),
        3,
        "jct, latency CDF, timeline"
    );
    for text in [
        "serving",
        "training",
        "fikit",
        "timeslice",
        "timeslice_quantum_ns",
        "Iteration latency CDF",
        // The text table's columns and first lines, as the text shows them.
        "<th scope=\"col\">p99.9</th>",
        "<th scope=\"col\">idle filled</th>",
        "How the jobs were simulated",
        "host: as traced",
    ] {
        assert!(html.contains(text), "the report lacks {text}");
    }
    // One row per job and policy in the per-job table.
    let per_job = html
        .split("<caption>Per policy and job</caption>")
        .nth(1)
        .unwrap();
    let per_job = &per_job[..per_job.find("</table>").unwrap()];
    assert_eq!(per_job.matches("<tr>").count(), 1 + 2 * 5);
}

#[test]
fn chromium_renders_the_tables_and_plots_without_console_errors() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    // With plots written too: the report inlines the same SVGs.
    let html = report(
        dir.path(),
        &["--plots", "plots", "--html", "out/report.html", "."],
    );
    let svg = std::fs::read_to_string(dir.path().join("plots/sim-timeline.svg")).unwrap();
    assert!(
        html.contains(svg.trim_end()),
        "the timeline SVG is inlined as written"
    );
    let Some(browser) = chromium() else { return };
    let page = dir.path().join("out/report.html");
    let r = render(&browser, &page);
    assert_eq!(
        root_attr(&r.dom, "data-fikit-ok"),
        Some("true"),
        "problems: {:?}\n{}",
        root_attr(&r.dom, "data-fikit-problems"),
        r.log
    );
    assert_eq!(root_attr(&r.dom, "data-fikit-tables"), Some("3"));
    assert_eq!(root_attr(&r.dom, "data-fikit-figures"), Some("3"));
    assert!(r.dom.contains("<td>serving</td>"));
    assert_eq!(page_messages(&r.log), Vec::<&str>::new(), "console output");

    // The check can fail: a table without rows and an image that does not
    // decode are reported, on the page and on the console.
    let broken = html
        .replacen("<tbody>\n<tr>", "<tbody>\n<!--<tr>", 1)
        .replacen("</tr>\n</tbody>", "</tr>-->\n</tbody>", 1)
        .replacen(
            "<figure>",
            "<figure><img alt=\"x\" src=\"data:image/png;base64,AAAA\"><figcaption>bad</figcaption></figure>\n<figure>",
            1,
        );
    let bad = dir.path().join("out/broken.html");
    std::fs::write(&bad, broken).unwrap();
    let r = render(&browser, &bad);
    assert_eq!(root_attr(&r.dom, "data-fikit-ok"), Some("false"));
    let problems = root_attr(&r.dom, "data-fikit-problems").unwrap();
    assert!(problems.contains("table 1 has no rows"), "{problems}");
    assert!(problems.contains("figure 1 did not render"), "{problems}");
    let messages = page_messages(&r.log);
    assert!(
        messages
            .iter()
            .any(|l| l.contains("fikit report check failed")),
        "{messages:?}"
    );
}
