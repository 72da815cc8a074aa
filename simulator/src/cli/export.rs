//! `fikit-sim export`: traces, or simulated runs, as Chrome trace-event JSON
//! for the Perfetto UI.

use std::io::IsTerminal;
use std::path::PathBuf;

use crate::interop::export::{self, ExportOptions};
use crate::policy::PolicyKind;
use crate::sim::scenario::Scenario;
use anyhow::Context;

use super::simulate::{
    ModelChoice, Source, characterize, resolve_model, say_lines, set_priorities,
};
use super::{Failure, bad_input, other, traces};

/// What `fikit-sim export --perfetto` runs.
#[derive(Debug, Clone)]
pub struct ExportRun {
    /// Output file; `-` for standard output.
    pub output: PathBuf,
    /// The jobs.
    pub source: Source,
    /// Simulate under these policies; empty: export the traces themselves.
    pub policies: Vec<PolicyKind>,
    /// GPU model for the simulation.
    pub model: ModelChoice,
    /// `JOB=N` priority overrides.
    pub priorities: Vec<String>,
    /// Keep only the first N slices of each job.
    pub max_events: Option<usize>,
    /// Traces on the Unix clock.
    pub wall_clock: bool,
    /// Ignore the traces' characterization (host speed, MPS pressure).
    pub as_profiled: bool,
}

/// Runs `fikit-sim export`.
pub fn run_export(args: ExportRun) -> Result<(), Failure> {
    if args.max_events == Some(0) {
        return Err(bad_input(anyhow::anyhow!(
            "--max-events must be at least 1"
        )));
    }
    if args.output.as_os_str() != "-" {
        super::simulate::check_output_file("-o", &args.output, "the JSON file to write")?;
    }
    let opts = ExportOptions {
        max_events: args.max_events,
        wall_clock: args.wall_clock,
    };
    let chrome = if args.policies.is_empty() {
        let Source::Traces(inputs) = &args.source else {
            unreachable!("clap requires --policy with --scenario")
        };
        let inputs = export::read_traces(&traces(inputs)?).map_err(bad_input)?;
        if let Some(why) = opts
            .wall_clock
            .then(|| export::wall_clock_problem(&inputs))
            .flatten()
        {
            return Err(bad_input(anyhow::anyhow!(why)));
        }
        export::from_traces(&inputs, &opts)
    } else {
        let (mut scenario, files) = match &args.source {
            Source::Scenario(path) => (
                Scenario::load(path).map_err(bad_input)?,
                export::scenario_traces(path).map_err(bad_input)?,
            ),
            Source::Traces(inputs) => {
                let files = traces(inputs)?;
                (Scenario::from_traces(&files).map_err(bad_input)?, files)
            }
        };
        let (model, model_line) = resolve_model(&args.model, &files)?;
        eprintln!("fikit-sim: {model_line}");
        set_priorities(&mut scenario, &args.priorities).map_err(bad_input)?;
        say_lines(&characterize(&mut scenario.jobs, &model, args.as_profiled).0);
        let inputs = export::read_traces(&files).map_err(bad_input)?;
        let infos: Vec<_> = scenario
            .jobs
            .iter()
            .zip(&inputs)
            .map(|(job, input)| export::op_infos(job, &input.trace))
            .collect();
        let runs = args
            .policies
            .iter()
            .copied()
            .map(|p| export::run_for_export(&scenario, p, &model))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| super::simulate::simulating_of(e, &args.source.label()))?;
        export::from_runs(&scenario, &infos, &runs, &model, &opts)
    };
    let bar = crate::report::progress::counter(
        chrome.slices.len() as u64,
        std::io::stderr().is_terminal() && chrome.slices.len() > 200_000,
        "{bar:40} {pos}/{len} slices written",
    );
    let to_stdout = args.output.as_os_str() == "-";
    let shown = if to_stdout {
        "standard output".to_string()
    } else {
        args.output.display().to_string()
    };
    let bytes = if to_stdout {
        chrome.write_json(std::io::stdout().lock(), &bar)
    } else {
        if let Some(dir) = args.output.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("creating the folder {}", dir.display()))
                .map_err(other)?;
        }
        std::fs::File::create(&args.output).and_then(|f| chrome.write_json(f, &bar))
    }
    .with_context(|| format!("writing {shown}"))
    .map_err(other)?;
    bar.finish_and_clear();
    eprintln!(
        "fikit-sim: wrote {} events ({:.1} MB) to {shown}; open it at https://ui.perfetto.dev",
        chrome.event_count(),
        bytes as f64 / 1e6
    );
    for t in &chrome.truncated {
        let name = chrome
            .processes
            .iter()
            .find(|p| p.pid == t.pid)
            .map_or("?", |p| p.name.as_str());
        eprintln!(
            "fikit-sim: {name}: kept the first {} of {} slices (--max-events), up to {} µs",
            t.kept,
            t.total,
            export::us(t.cut_at_ns)
        );
    }
    if let Some(w) = export::size_warning(&shown, bytes, &chrome) {
        eprintln!("fikit-sim: {w}");
    }
    Ok(())
}
