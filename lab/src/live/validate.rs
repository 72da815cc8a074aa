//! `fikit-lab validate`: scenarios simulated and live (or real pairs through
//! `fikit-run`), and the report of their JCT errors.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use fikit_replay::live;
use fikit_sim::cli::{Failure, bad_input, other, print};
use fikit_sim::policy::PolicyKind;
use fikit_sim::sim::gpu::GpuModel;
use fikit_sim::sim::scenario::Scenario;
use fikit_sim::sim::simulate::{SimOptions, simulate};

use super::{gpu_name, live_runs};

/// `fikit-lab validate`.
#[derive(Args)]
pub struct ValidateArgs {
    /// Scenario files (JSON), each run simulated and live.
    #[arg(value_name = "SCENARIO", required_unless_present = "real")]
    scenarios: Vec<PathBuf>,
    /// Real programs instead of replay: a validation set (JSON pairs of real
    /// commands; run/README.md). Runs `fikit-run set SET -o OUT` (fikit-run,
    /// fikit-profile and the collector beside this program): every job
    /// profiled alone, every pair run for real under the set's policies and
    /// simulated, and a summary of simulated against real slowdown, in and
    /// out of sample. OUT defaults to `fikit-real-out`.
    #[arg(long, value_name = "SET_JSON", conflicts_with_all = ["scenarios", "live_from"])]
    real: Option<PathBuf>,
    /// With --real: run only these pairs of the set (repeat or
    /// comma-separate); the summary covers every pair run so far in OUT.
    #[arg(long = "pair", value_name = "PAIR", value_delimiter = ',')]
    pairs: Vec<String>,
    /// GPU model file for the simulation (e.g. one `fikit-lab calibrate` wrote).
    #[arg(long, value_name = "FILE")]
    model: Option<PathBuf>,
    /// Folder for the validation report (Markdown and JSON) [default:
    /// reports; with --real, fikit-real-out].
    #[arg(short = 'o', long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    device: i32,
    /// Policies to validate, comma-separated (exclusive and timeslice always run).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "exclusive,timeslice,mps,preemptive,fikit"
    )]
    policy: Vec<String>,
    /// Take the live JCTs from these earlier validation reports (their
    /// `validation.json`) instead of running on the GPU: re-simulates with
    /// `--model` and compares with what was measured (no GPU needed). Every
    /// scenario must have rows in them (matched by scenario name); rows of
    /// several reports for one scenario are all compared.
    #[arg(long, value_name = "VALIDATION_JSON", num_args = 1..)]
    live_from: Vec<PathBuf>,
}

/// `fikit-lab validate --real`: runs `fikit-run set` beside this program
/// (its own process, as a user would run it).
fn run_validate_real(a: &ValidateArgs, set: &Path) -> Result<(), Failure> {
    let exe = std::env::current_exe()
        .context("finding this program")
        .map_err(other)?;
    let run = exe.with_file_name("fikit-run");
    if !run.is_file() {
        return Err(bad_input(anyhow::anyhow!(
            "--real runs the pairs with fikit-run, which is not beside this program ({} is missing): \
             cargo build --release -p fikit-run -p fikit-profile -p fikit-collector",
            run.display()
        )));
    }
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("fikit-real-out"));
    let mut c = std::process::Command::new(&run);
    c.arg("set").arg(set).arg("-o").arg(&out);
    if !a.pairs.is_empty() {
        c.arg("--pair").arg(a.pairs.join(","));
    }
    if let Some(m) = &a.model {
        c.arg("--model").arg(m);
    }
    let status = c
        .status()
        .with_context(|| format!("running {}", run.display()))
        .map_err(other)?;
    match status.code() {
        Some(0) => Ok(()),
        Some(2) => Err(bad_input(anyhow::anyhow!("fikit-run: bad input (above)"))),
        code => Err(Failure::with_code(
            code.map_or(1, |c| c.clamp(1, 255) as u8),
            anyhow::anyhow!("fikit-run {status}"),
        )),
    }
}

/// `fikit-lab validate`.
pub fn run_validate(a: ValidateArgs) -> Result<(), Failure> {
    if let Some(set) = &a.real {
        return run_validate_real(&a, set);
    }
    // The options of real pairs, checked here: clap does not enforce
    // `requires = "real"` while an argument that conflicts with --real (the
    // scenarios, --live-from) is given, which is always the case here.
    for (given, name) in [(!a.pairs.is_empty(), "--pair")] {
        if given {
            return Err(bad_input(anyhow::anyhow!(
                "{name} applies to real pairs only: add --real SET_JSON"
            )));
        }
    }
    let out = a.out.clone().unwrap_or_else(|| PathBuf::from("reports"));
    let model = match &a.model {
        Some(p) => GpuModel::load(p).map_err(bad_input)?,
        None => GpuModel::default(),
    };
    // Live replay's kernels spin on the timer and move no memory: the
    // simulation it is compared with uses their concurrent-kernel slowdown.
    if model.corun_slowdown != model.replay_corun_slowdown {
        eprintln!(
            "fikit-lab: validate: simulating with the replay's concurrent-kernel slowdown ({:.3}) in place of corun_slowdown ({:.3})",
            model.replay_corun_slowdown, model.corun_slowdown
        );
    }
    let model = model.for_replay();
    let mut kinds = Vec::new();
    for p in &a.policy {
        let k = PolicyKind::ALL
            .iter()
            .copied()
            .find(|k| k.as_str() == p)
            .with_context(|| format!("--policy {p}: not a policy"))
            .map_err(bad_input)?;
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    let mut saved: Vec<(PathBuf, live::SavedValidation)> = Vec::new();
    for p in &a.live_from {
        let text = std::fs::read_to_string(p)
            .with_context(|| format!("reading {}", p.display()))
            .map_err(bad_input)?;
        let v: live::SavedValidation = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a validation report (validation.json)", p.display()))
            .map_err(bad_input)?;
        saved.push((p.clone(), v));
    }
    let device = if saved.is_empty() {
        gpu_name(a.device)
    } else {
        let mut devices: Vec<&str> = saved.iter().map(|(_, v)| v.device.as_str()).collect();
        devices.sort_unstable();
        devices.dedup();
        let files: Vec<String> = saved.iter().map(|(p, _)| p.display().to_string()).collect();
        format!(
            "{} (live runs saved in {})",
            devices.join(", "),
            files.join(", ")
        )
    };
    let mut rows = Vec::new();
    for path in &a.scenarios {
        let scenario = Scenario::load_with(path, true).map_err(bad_input)?;
        let sim = simulate(
            &scenario.jobs,
            &scenario.arrivals,
            &SimOptions {
                policies: kinds.clone(),
                model: model.clone(),
                record_segments: false,
            },
        )
        .context("simulating")
        .map_err(other)?;
        let measured = if saved.is_empty() {
            live::LiveJct::from_report(&live_runs(&scenario, &kinds, a.device)?)
        } else {
            let m: Vec<live::LiveJct> = saved
                .iter()
                .flat_map(|(_, v)| &v.rows)
                .filter(|r| r.scenario == scenario.name && kinds.contains(&r.live.policy))
                .map(|r| r.live.clone())
                .collect();
            if m.is_empty() {
                return Err(bad_input(anyhow::anyhow!(
                    "{}: the saved reports hold no live results of scenario \"{}\" under {}",
                    path.display(),
                    scenario.name,
                    a.policy.join(",")
                )));
            }
            m
        };
        rows.extend(live::compare(&scenario, &sim, &measured));
    }
    let summary = live::summarize(&rows);
    let md = render_validation(&rows, &summary, &device, &model);
    print(&md)?;
    std::fs::create_dir_all(&out)
        .with_context(|| format!("creating {}", out.display()))
        .map_err(other)?;
    let stem = out.join("validation");
    std::fs::write(stem.with_extension("md"), &md)
        .context("writing validation.md")
        .map_err(other)?;
    let json =
        serde_json::json!({ "device": device, "model": model, "rows": rows, "summary": summary });
    std::fs::write(
        stem.with_extension("json"),
        serde_json::to_string_pretty(&json).unwrap_or_default(),
    )
    .context("writing validation.json")
    .map_err(other)?;
    eprintln!("fikit-lab: wrote {}.md and .json", stem.display());
    Ok(())
}

fn ms(ns: i64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

/// The validation report as Markdown.
fn render_validation(
    rows: &[live::ValidationRow],
    summary: &[live::ErrorSummary],
    device: &str,
    model: &GpuModel,
) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "# Simulated vs live JCT\n\nDevice: {device}. GPU model: {} ({}).\n\n",
        model.name, model.source
    ));
    s.push_str(
        "| policy | scenarios × jobs | median abs error | worst abs error |\n|---|---|---|---|\n",
    );
    for e in summary {
        s.push_str(&format!(
            "| {} | {} | {:.1}% | {:.1}% |\n",
            e.policy.as_str(),
            e.rows,
            100.0 * e.median_abs_error,
            100.0 * e.max_abs_error
        ));
    }
    s.push_str("\n| scenario | policy | job | prio | sim JCT ms | live JCT ms | error | recorded span ms | live vs timeslice | sim vs timeslice |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {:+.1}% | {} | {:.3}x | {:.3}x |\n",
            r.scenario,
            r.policy.as_str(),
            r.job,
            r.priority,
            ms(r.sim_jct_ns),
            ms(r.live_jct_ns),
            100.0 * r.error,
            ms(r.recorded_span_ns),
            r.live_vs_timeslice,
            r.sim_vs_timeslice
        ));
    }
    s
}
