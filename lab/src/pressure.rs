//! `fikit-lab pressure`: how hard each job's kernels press on a neighbour
//! under MPS, from a pressure pass's traces ([`fikit_sim::sim::pressure`]),
//! and the weight the MPS model gives the job for it (what `fikit-run
//! --pressure` reads).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use clap::Args;
use fikit_sim::sim::pressure::{self, PressureFit};
use serde::Serialize;

use fikit_sim::cli::simulate::{ModelChoice, resolve_model};
use fikit_sim::cli::{Failure, bad_input, model_choice, other, print};

/// `fikit-lab pressure` on the command line.
#[derive(Args)]
pub struct PressureArgs {
    /// Folders of a pressure pass, one per job (lab/validate/pressure.sh
    /// writes OUT/JOB/): each holds the job's trace and the victim's (the
    /// trace whose job is named `victim`), recorded beside each other under
    /// MPS.
    #[arg(value_name = "DIR", required = true)]
    dirs: Vec<PathBuf>,
    /// GPU model whose latency-bound concurrent-kernel slowdown
    /// (`corun_slowdown`) the weights are for: a file, or `default`; without
    /// it the model the project ships for the traces' GPU.
    #[arg(long, value_name = "FILE")]
    model: Option<PathBuf>,
    /// Also write the figures and each job's weight as JSON (what fikit-run
    /// --pressure reads).
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// What `fikit-lab pressure` runs.
#[derive(Debug, Clone)]
pub struct PressureOptions {
    /// One folder per job.
    pub dirs: Vec<PathBuf>,
    /// The model whose `corun_slowdown` the weights are for.
    pub model: ModelChoice,
    /// JSON output.
    pub output: Option<PathBuf>,
}

impl From<PressureArgs> for PressureOptions {
    fn from(a: PressureArgs) -> Self {
        PressureOptions {
            dirs: a.dirs,
            model: model_choice(a.model),
            output: a.output,
        }
    }
}

/// One job's line of the JSON.
#[derive(Serialize)]
struct JobPressure {
    #[serde(flatten)]
    fit: PressureFit,
    /// `(slowdown - 1) / (corun_slowdown x share)`, clamped to 0..=1.
    weight: f64,
    job_trace: String,
    victim_trace: String,
}

/// The JSON file.
#[derive(Serialize)]
struct PressureFile {
    /// How the weights were made.
    about: &'static str,
    /// The model's `corun_slowdown` the weights are for, and its source.
    corun_slowdown: f64,
    model: String,
    jobs: BTreeMap<String, JobPressure>,
}

/// The job's trace and the victim's in one folder.
fn pair_in(dir: &Path) -> Result<(PathBuf, PathBuf), anyhow::Error> {
    let files = fikit_trace::discover(&[dir.to_path_buf()])
        .with_context(|| format!("{}: listing traces", dir.display()))?;
    let (mut victims, mut jobs) = (Vec::new(), Vec::new());
    for f in files {
        let meta = fikit_trace::read_metadata(&f)?;
        if meta.job_name == "victim" {
            victims.push(f);
        } else {
            jobs.push(f);
        }
    }
    match (jobs.as_slice(), victims.as_slice()) {
        ([j], [v]) => Ok((j.clone(), v.clone())),
        _ => Err(anyhow!(
            "{}: a pressure pass's folder holds one job trace and one victim trace (job name `victim`); found {} and {}",
            dir.display(),
            jobs.len(),
            victims.len()
        )),
    }
}

/// Runs `fikit-lab pressure`.
pub fn run_pressure(o: PressureOptions) -> Result<(), Failure> {
    let pairs = o
        .dirs
        .iter()
        .map(|d| pair_in(d))
        .collect::<Result<Vec<_>, _>>()
        .map_err(bad_input)?;
    let job_files: Vec<PathBuf> = pairs.iter().map(|(j, _)| j.clone()).collect();
    let (model, line) = resolve_model(&o.model, &job_files)?;
    eprintln!("fikit-lab: {line}");
    let c = model.corun_slowdown;
    let mut jobs = BTreeMap::new();
    let mut text = format!(
        "{:<14} {:>10} {:>6} {:>10} {:>8} {:>15} {:>6} {:>7} {:>8}\n",
        "job", "victim us", "runs", "overlap", "fit", "whole (runs)", "share", "weight", "host us"
    );
    for (job_file, victim_file) in &pairs {
        let job = fikit_trace::read_trace(job_file).map_err(bad_input)?;
        let victim = fikit_trace::read_trace(victim_file).map_err(bad_input)?;
        let fit = pressure::fit(&job, &victim)
            .with_context(|| format!("{} beside {}", job_file.display(), victim_file.display()))
            .map_err(bad_input)?;
        let weight = fit.weight(c);
        let name = job.meta.job_name.clone();
        if jobs.contains_key(&name) {
            return Err(bad_input(anyhow!(
                "{}: job {name} has a pressure pass already among the folders given",
                job_file.display()
            )));
        }
        text.push_str(&format!(
            "{:<14} {:>10.1} {:>6} {:>10.2} {:>8} {:>15} {:>6.2} {:>7.3} {:>8}\n",
            name,
            fit.pass.victim_alone_ns / 1e3,
            fit.pass.runs_steady,
            fit.pass.overlapped,
            fit.pass
                .slowdown
                .map_or("past".to_string(), |s| format!("{s:.2}x")),
            match fit.pass.whole_median {
                Some(m) => format!("{m:.2}x ({})", fit.pass.runs_whole),
                None => format!("- ({})", fit.pass.runs_whole),
            },
            fit.share,
            weight,
            fit.host_ns_per_launch
                .map_or("-".to_string(), |h| format!("{:.1}", h / 1e3))
        ));
        jobs.insert(
            name,
            JobPressure {
                fit,
                weight,
                job_trace: job_file.display().to_string(),
                victim_trace: victim_file.display().to_string(),
            },
        );
    }
    text.push_str(&format!(
        "weight = (fit - 1) / ({c} x share), clamped to 0..1 ({c}: the model's corun_slowdown); \
         \"past\": the victim waited for room, weight 1; host us: the job's mean host delay \
         before a launch in the pass (its first fifth and longest hundredth left out)\n"
    ));
    print(&text)?;
    if let Some(path) = &o.output {
        let file = PressureFile {
            about: "fikit-lab pressure: per job, the victim's slowdown beside the job under MPS \
                    (fit; each victim kernel shape against its own runs alone), the job's time-weighted one-wave SM share, and the weight \
                    (fit - 1) / (corun_slowdown x share) clamped to 0..1 with which its kernels \
                    press on other jobs' kernels in the MPS model (fikit-run --pressure); \
                    host_ns_per_launch: the job's mean host delay before a launch in the pass, \
                    its host beside a busy neighbour under MPS",
            corun_slowdown: c,
            model: line,
            jobs,
        };
        let json = serde_json::to_string_pretty(&file).map_err(|e| other(e.into()))?;
        std::fs::write(path, json + "\n")
            .with_context(|| format!("writing {}", path.display()))
            .map_err(other)?;
    }
    Ok(())
}
