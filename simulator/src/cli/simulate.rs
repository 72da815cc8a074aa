//! `fikit-sim [TRACES]` and `fikit-sim sweep`: the simulation runs, from
//! plain options.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use crate::interop::export::scenario_traces;
use crate::policy::PolicyKind;
use crate::report::{self, Format, html, plots};
use crate::sim::fleet::{self, Shard};
use crate::sim::gpu::GpuModel;
use crate::sim::scenario::{Scenario, traces_name};
use crate::sim::simulate::{Report, SimOptions, simulate_with_progress};
use crate::sim::sweep::{self, SweepOptions};
use anyhow::Context;

use super::{Failure, bad_input, other, print, traces};

/// Where the jobs come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// Trace files, or folders searched recursively.
    Traces(Vec<PathBuf>),
    /// A scenario file.
    Scenario(PathBuf),
}

impl Source {
    /// What a message calls these inputs: `the scenario FILE` or `the traces`.
    pub fn label(&self) -> String {
        match self {
            Source::Scenario(p) => format!("the scenario {}", p.display()),
            Source::Traces(_) => "the traces".to_string(),
        }
    }

    /// `--scenario FILE` where given (clap keeps it apart from the inputs),
    /// else the trace inputs.
    pub fn of(scenario: Option<PathBuf>, inputs: Vec<PathBuf>) -> Source {
        match scenario {
            Some(p) => Source::Scenario(p),
            None => Source::Traces(inputs),
        }
    }
}

/// Which GPU model to simulate.
#[derive(Debug, Clone)]
pub enum ModelChoice {
    /// The shipped calibrated model of the traces' GPU, else the defaults.
    Auto,
    /// The documented defaults.
    Default,
    /// A model file.
    File(PathBuf),
}

/// What `fikit-sim [TRACES]` runs.
#[derive(Debug, Clone)]
pub struct SimulateOptions {
    /// The jobs.
    pub source: Source,
    /// Only these jobs (by name) share the GPU; empty: see `together`.
    pub jobs: Vec<String>,
    /// All jobs of the traces share one GPU instead of the pairwise view.
    pub together: bool,
    /// Policies, in report order.
    pub policies: Vec<PolicyKind>,
    /// GPU model.
    pub model: ModelChoice,
    /// `JOB=N` priority overrides.
    pub priorities: Vec<String>,
    /// Output format.
    pub format: Format,
    /// Folder for the plots; `None`: no plots.
    pub plots: Option<PathBuf>,
    /// Also write an HTML report here.
    pub html: Option<PathBuf>,
    /// Ignore the traces' characterization (host speed, MPS pressure).
    pub as_profiled: bool,
    /// Serve the latency-critical job's requests at rates (`--serve`).
    pub serve: Option<Serve>,
}

/// `--serve`: the latency-critical job as a server of requests.
#[derive(Debug, Clone, PartialEq)]
pub struct Serve {
    /// Requests a second, one simulation each.
    pub rates: Vec<f64>,
    /// Requests at each rate.
    pub requests: usize,
    /// One period apart instead of Poisson.
    pub fixed: bool,
    /// Seed of the Poisson arrivals.
    pub seed: u64,
}

/// Which sweep.
#[derive(Debug, Clone)]
pub enum SweepWhat {
    /// Every ordered pair of these traces, printed.
    Traces(Vec<PathBuf>),
    /// A spec, whole or one shard, printed or written as Parquet.
    Spec {
        /// The spec file.
        spec: PathBuf,
        /// One shard; `None`: all items.
        shard: Option<Shard>,
        /// Write the rows here.
        output: Option<PathBuf>,
    },
    /// Join shards into one table.
    Merge {
        /// The merged table.
        output: PathBuf,
        /// The shards.
        shards: Vec<PathBuf>,
    },
    /// Print a rows file.
    Show {
        /// The file.
        file: PathBuf,
        /// How.
        format: Format,
    },
}

/// What `fikit-sim sweep` runs.
#[derive(Debug, Clone)]
pub struct SweepRun {
    /// Which sweep.
    pub what: SweepWhat,
    /// Policies, in report order.
    pub policies: Vec<PolicyKind>,
    /// GPU model.
    pub model: ModelChoice,
    /// Output format.
    pub format: Format,
    /// Worker threads; `None`: one per core.
    pub threads: Option<usize>,
    /// Ignore the traces' characterization (host speed, MPS pressure).
    pub as_profiled: bool,
}

/// The model to simulate and one line saying which it is and why.
pub fn resolve_model(
    choice: &ModelChoice,
    files: &[PathBuf],
) -> Result<(GpuModel, String), Failure> {
    match choice {
        ModelChoice::File(p) => {
            let m = GpuModel::load(p).map_err(bad_input)?;
            let line = format!("GPU model: {} ({})", m.name, p.display());
            Ok((m, line))
        }
        ModelChoice::Default => Ok((
            GpuModel::default(),
            "GPU model: documented defaults, not calibrated (--model default)".to_string(),
        )),
        ModelChoice::Auto => {
            let devices = files
                .iter()
                .map(|f| fikit_trace::read_metadata(f).map(|m| m.device.name))
                .collect::<Result<Vec<String>, _>>()
                .map_err(bad_input)?;
            Ok(crate::sim::model_for_traces(
                devices.iter().map(String::as_str),
                &crate::sim::ModelHints {
                    calibrated: "; --model default for the documented defaults",
                    none: "`fikit-lab calibrate` on that GPU writes one; --model FILE uses it",
                    mixed: "--model FILE chooses one",
                },
            ))
        }
    }
}

/// Puts each job's kernels at their measured MPS pressure
/// ([`crate::sim::pressure::set_measured_pressure`]) and its host at its
/// untraced speed ([`crate::sim::host::set_untraced_host`]), unless
/// `as_profiled`: the lines that say so, and the jobs at the ends of the
/// host's range.
pub fn characterize(
    jobs: &mut Vec<crate::sim::job::Job>,
    model: &GpuModel,
    as_profiled: bool,
) -> (Vec<String>, Option<crate::sim::host::Corners>) {
    let pressure = crate::sim::pressure::set_measured_pressure(jobs, model, as_profiled);
    let (host, corners) = crate::sim::host::set_untraced_host(jobs, model, as_profiled);
    (vec![with_hint(host), pressure], corners)
}

/// Notes on traces whose figures may mislead: a capture the collector did
/// not finish or that lost records (the trace's metadata, `capture_complete`
/// and `dropped_records`), and a job with no kernel (nothing of it runs on
/// the GPU, so every policy gives it 1.00x).
///
/// Made before the jobs are picked, `files` in the scenario's job order
/// (one a job); the notes are kept for the jobs `picked` names.
pub fn trace_notes(
    files: &[PathBuf],
    scenario: &Scenario,
    picked: &[String],
) -> Result<Vec<String>, Failure> {
    let mut notes = Vec::new();
    let one_a_job = files.len() == scenario.jobs.len();
    for (i, f) in files.iter().enumerate() {
        if one_a_job && !picked.is_empty() && !picked.contains(&scenario.jobs[i].name) {
            continue;
        }
        let meta = fikit_trace::read_metadata(f).map_err(bad_input)?;
        if !meta.capture_complete {
            notes.push(format!(
                "note: {}: capture incomplete (capture_complete false: the program was still \
                 running or the collector stopped early); its job's figures may be short",
                f.display()
            ));
        }
        if meta.dropped_records > 0 {
            notes.push(format!(
                "note: {}: CUPTI dropped {} records (dropped_records); its job's figures may be short",
                f.display(),
                meta.dropped_records
            ));
        }
    }
    let chosen = |name: &String| picked.is_empty() || picked.contains(name);
    for j in scenario
        .jobs
        .iter()
        .filter(|j| j.kernel_count() == 0 && chosen(&j.name))
    {
        notes.push(format!(
            "note: {} has no kernel: nothing of it runs on the GPU, so every policy leaves it as it is",
            j.name
        ));
    }
    Ok(notes)
}

/// A note where jobs share the best priority and a policy ranks jobs by it
/// (FIKIT, preemptive): the first of them as listed takes the top place.
fn tie_note(jobs: &[crate::sim::job::Job], policies: &[PolicyKind]) -> Option<String> {
    let ranked: Vec<&str> = policies
        .iter()
        .filter(|p| matches!(p, PolicyKind::Fikit | PolicyKind::Preemptive))
        .map(|p| p.as_str())
        .collect();
    let best = jobs.iter().map(|j| j.priority).min()?;
    let tied: Vec<&str> = jobs
        .iter()
        .filter(|j| j.priority == best)
        .map(|j| j.name.as_str())
        .collect();
    (tied.len() > 1 && !ranked.is_empty()).then(|| {
        format!(
            "note: {} share the best priority ({best}): under {} the first listed, {}, takes the \
             top place (--jobs order, else the traces' order; --priority JOB=N breaks the tie)",
            tied.join(", "),
            ranked.join(" and "),
            tied[0]
        )
    })
}

/// Says each of `lines` on stderr, after `fikit-sim: `.
pub fn say_lines(lines: &[String]) {
    for l in lines {
        eprintln!("fikit-sim: {l}");
    }
}

/// The host line with how to simulate the host as traced instead.
fn with_hint(line: String) -> String {
    if line.starts_with("host: as run untraced") {
        format!("{line}; --as-profiled: as traced")
    } else {
        line
    }
}

/// The trace files behind a source (a scenario's are the files it names).
pub fn source_files(source: &Source) -> Result<Vec<PathBuf>, Failure> {
    match source {
        Source::Traces(inputs) => traces(inputs),
        Source::Scenario(p) => scenario_traces(p).map_err(bad_input),
    }
}

/// Keeps only the jobs named in `names`, in the order given.
fn keep_jobs(scenario: &mut Scenario, names: &[String]) -> anyhow::Result<()> {
    let all: Vec<String> = scenario.jobs.iter().map(|j| j.name.clone()).collect();
    let mut picked = Vec::new();
    for name in names {
        let i = all
            .iter()
            .position(|n| n == name)
            .with_context(|| format!("--jobs: no job named {name:?} (jobs: {})", all.join(", ")))?;
        if picked.contains(&i) {
            anyhow::bail!("--jobs: {name:?} is named twice");
        }
        picked.push(i);
    }
    // A scenario of traces was named by all of them: name it by those kept.
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    if scenario.name == traces_name(&all) {
        let kept: Vec<&str> = picked.iter().map(|&i| all[i]).collect();
        scenario.name = traces_name(&kept);
    }
    scenario.jobs = picked.iter().map(|&i| scenario.jobs[i].clone()).collect();
    scenario.arrivals = picked.iter().map(|&i| scenario.arrivals[i]).collect();
    Ok(())
}

/// The scenario of `source` (`files`: its trace files); with `shapes`, the
/// jobs keep their launch shapes (for live replay).
pub fn load_scenario(
    source: &Source,
    files: &[PathBuf],
    shapes: bool,
) -> Result<Scenario, Failure> {
    match source {
        Source::Scenario(path) => Scenario::load_with(path, shapes).map_err(bad_input),
        Source::Traces(_) => Scenario::from_traces_with(files, shapes).map_err(bad_input),
    }
}

/// Applies the `JOB=N` priority overrides, then keeps only the jobs of
/// `jobs` (empty: all), in their order.
pub fn pick_jobs(
    scenario: &mut Scenario,
    priorities: &[String],
    jobs: &[String],
) -> Result<(), Failure> {
    set_priorities(scenario, priorities).map_err(bad_input)?;
    if !jobs.is_empty() {
        keep_jobs(scenario, jobs).map_err(bad_input)?;
    }
    Ok(())
}

/// Runs `fikit-sim [TRACES]`.
pub fn run_simulation(o: SimulateOptions) -> Result<(), Failure> {
    check_outputs(o.html.as_deref(), o.plots.as_deref())?;
    let progress = report::progress::Phases::new(std::io::stderr().is_terminal());
    progress.phase("reading traces");
    let files = source_files(&o.source)?;
    let (model, model_line) = resolve_model(&o.model, &files)?;
    let mut scenario = load_scenario(&o.source, &files, false)?;
    let traces_said = trace_notes(&files, &scenario, &o.jobs)?;
    pick_jobs(&mut scenario, &o.priorities, &o.jobs)?;
    say_lines(&traces_said);
    if let Some(s) = &o.serve {
        if o.jobs.is_empty() && !o.together {
            return Err(bad_input(anyhow::anyhow!(
                "--serve: name the jobs that share the GPU (--jobs SERVER,PARTNER or --together)"
            )));
        }
        if let Some(h) = &o.html {
            return Err(bad_input(anyhow::anyhow!(
                "--html {}: --serve writes its table, not an HTML report",
                h.display()
            )));
        }
        progress.phase("serving requests at each rate");
        let r = super::serve::run_serving(
            s,
            &scenario,
            &o.policies,
            model,
            &model_line,
            o.as_profiled,
            o.format,
        );
        progress.finish();
        return r;
    }
    let (lines, corners) = characterize(&mut scenario.jobs, &model, o.as_profiled);
    let pairwise = matches!(o.source, Source::Traces(_))
        && o.jobs.is_empty()
        && !o.together
        && scenario.jobs.len() > 2;
    let pairs = if pairwise {
        sweep::high_low_pairs(&scenario.jobs)
    } else {
        Vec::new()
    };
    if !pairs.is_empty() {
        if let Some(h) = &o.html {
            return Err(bad_input(anyhow::anyhow!(
                "--html {}: the HTML report is of one GPU's jobs: add --jobs HIGH,LOW or --together",
                h.display()
            )));
        }
        progress.finish();
        return run_pairwise(
            &o,
            &scenario,
            &pairs,
            model,
            &model_line,
            &lines,
            corners.as_ref(),
        );
    }
    let mut notes = Vec::new();
    if pairwise {
        notes.push(format!(
            "note: all {} jobs share one priority, so no pair is latency-critical beside throughput: \
             they are simulated together on one GPU (--priority JOB=N sets one apart)",
            scenario.jobs.len()
        ));
    }
    notes.extend(tie_note(&scenario.jobs, &o.policies));
    let opts = SimOptions {
        policies: o.policies.clone(),
        model,
        record_segments: o.plots.is_some() || o.html.is_some(),
    };
    // With a host range, the same with every host at the fastest, then the
    // slowest, of its untraced runs (each row's range), beside the answer.
    let plain = SimOptions {
        record_segments: false,
        ..opts.clone()
    };
    let (report, ends) = rayon::join(
        || {
            simulate_with_progress(&scenario.jobs, &scenario.arrivals, &opts, &|m| {
                progress.phase(m)
            })
        },
        || {
            corners.as_ref().map(|c| {
                rayon::join(
                    || crate::sim::simulate::simulate(&c.low, &scenario.arrivals, &plain),
                    || crate::sim::simulate::simulate(&c.high, &scenario.arrivals, &plain),
                )
            })
        },
    );
    let of = o.source.label();
    let mut report = report.map_err(|e| simulating_of(e, &of))?;
    if let Some((low, high)) = ends {
        let (low, high) = (
            low.map_err(|e| simulating_of(e, &of))?,
            high.map_err(|e| simulating_of(e, &of))?,
        );
        crate::sim::simulate::with_host_range(&mut report, &low, &high);
    }
    progress.finish();
    eprintln!("fikit-sim: {model_line}");
    say_lines(&lines);
    say_lines(&notes);
    print(&report::render(&report, o.format))?;
    let mut plot_files = Vec::new();
    if let Some(dir) = &o.plots {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating the plot folder {}", dir.display()))
            .map_err(other)?;
        let written = plots::write_plots(&report, &scenario.jobs, dir, "sim")
            .context("writing plots")
            .map_err(other)?;
        let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
        eprintln!("fikit-sim: plots: {}", names.join(", "));
        plot_files = written;
    }
    if let Some(path) = &o.html {
        let said: Vec<String> = lines
            .iter()
            .chain(&traces_said)
            .chain(&notes)
            .cloned()
            .collect();
        write_html_report(path, &scenario, &opts.model, &report, &plot_files, &said)?;
    }
    Ok(())
}

/// The first screen: each latency-critical job beside each throughput job.
fn run_pairwise(
    o: &SimulateOptions,
    scenario: &Scenario,
    pairs: &[(usize, usize)],
    model: GpuModel,
    model_line: &str,
    lines: &[String],
    corners: Option<&crate::sim::host::Corners>,
) -> Result<(), Failure> {
    let opts = SweepOptions {
        policies: o.policies.clone(),
        model,
        progress: std::io::stderr().is_terminal(),
    };
    let point = sweep::sweep_pairs(&scenario.jobs, pairs, &opts).map_err(simulating)?;
    let mut rows = point.rows;
    if let Some(c) = corners {
        // The same pairs with every host at the fastest, then the slowest,
        // of its untraced runs: each row's range, over the high-priority
        // job alone at the point and at both ends.
        let [low, high] = [&c.low, &c.high]
            .map(|jobs| sweep::sweep_pairs(jobs, pairs, &opts).map_err(simulating));
        let (low, high) = (low?, high?);
        let alone = |name: &str| {
            let i = scenario.jobs.iter().position(|j| j.name == name)?;
            Some([
                point.alone_region_ns[i]?,
                low.alone_region_ns[i]?,
                high.alone_region_ns[i]?,
            ])
        };
        sweep::with_host_range(&mut rows, &low.rows, &high.rows, alone);
    }
    let high = scenario.jobs[pairs[0].0].priority;
    match o.format {
        Format::Table => print(&format!(
            "{model_line}\n{}\n\nEach latency-critical job (priority {high}) beside each throughput job, \
             two jobs per GPU: the latency-critical job's slowdown under each policy\n{}",
            lines.join("\n"),
            report::sweep::pairwise_table(&rows)
        ))?,
        f => {
            eprintln!("fikit-sim: {model_line}");
            say_lines(lines);
            print(&report::sweep::render(&rows, f))?;
        }
    }
    let (h, l) = pairs[0];
    eprintln!(
        "fikit-sim: the full table and plots of one pair: --jobs {},{}; all {} jobs on one GPU: --together",
        scenario.jobs[h].name,
        scenario.jobs[l].name,
        scenario.jobs.len()
    );
    Ok(())
}
/// Writes `--html FILE` with the plots inline (drawn into a temporary folder
/// when none were written).
pub fn write_html_report(
    path: &Path,
    scenario: &Scenario,
    model: &GpuModel,
    report: &Report,
    plot_files: &[PathBuf],
    notes: &[String],
) -> Result<(), Failure> {
    let figures = if plot_files.is_empty() {
        let dir = std::env::temp_dir().join(format!("fikit-sim-html-{}", std::process::id()));
        let figures = plots::write_plots(report, &scenario.jobs, &dir, "sim")
            .map_err(anyhow::Error::from)
            .and_then(|written| Ok(html::read_svg_figures(&written)?));
        let _ = std::fs::remove_dir_all(&dir);
        figures
    } else {
        html::read_svg_figures(plot_files).map_err(anyhow::Error::from)
    }
    .context("drawing the plots for the HTML report")
    .map_err(other)?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let doc = html::simulation_report(&html::SimulationHtml {
        scenario,
        model,
        report,
        figures,
        command: Some(format!("command: fikit-sim {}", args.join(" "))),
        notes: notes.to_vec(),
    });
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating the folder {}", dir.display()))
            .map_err(other)?;
    }
    doc.write(path).map_err(|e| other(e.into()))?;
    eprintln!("fikit-sim: HTML report: {}", path.display());
    Ok(())
}

/// Applies every `--priority JOB=N`, in order; one job named twice is an error,
/// not the last one winning.
pub fn set_priorities(scenario: &mut Scenario, specs: &[String]) -> anyhow::Result<()> {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for spec in specs {
        let name = set_priority(scenario, spec)?;
        if let Some((_, first)) = seen.iter().find(|(n, _)| *n == name) {
            anyhow::bail!("--priority {spec:?}: job {name:?} already has --priority {first:?}");
        }
        seen.push((name, spec));
    }
    Ok(())
}

/// One `--priority JOB=N`: the job's priority set (its name returned), or
/// why it cannot be.
fn set_priority<'a>(scenario: &mut Scenario, spec: &'a str) -> anyhow::Result<&'a str> {
    let (name, value) = spec.rsplit_once('=').with_context(|| {
        format!("--priority {spec:?}: expected JOB=N, e.g. resnet50-bs1-eval=0")
    })?;
    let priority: u8 = value.parse().ok().filter(|p| *p <= 9).with_context(|| {
        format!("--priority {spec:?}: the priority must be 0 (highest) to 9, found {value:?}")
    })?;
    let names: Vec<String> = scenario.jobs.iter().map(|j| j.name.clone()).collect();
    let job = scenario
        .jobs
        .iter_mut()
        .find(|j| j.name == name)
        .with_context(|| {
            format!(
                "--priority {spec:?}: no job named {name:?} (jobs: {})",
                names.join(", ")
            )
        })?;
    job.priority = priority;
    Ok(name)
}

/// Runs `fikit-sim sweep`.
pub fn run_sweep(o: SweepRun) -> Result<(), Failure> {
    let pool = thread_pool(o.threads)?;
    let output = match &o.what {
        SweepWhat::Spec { output, .. } => output.as_deref(),
        SweepWhat::Merge { output, .. } => Some(output.as_path()),
        _ => None,
    };
    if let Some(out) = output.filter(|p| p.as_os_str() != "-") {
        check_output_file("-o", out, "the Parquet file to write")?;
    }
    let inputs = match &o.what {
        SweepWhat::Traces(inputs) => inputs,
        SweepWhat::Spec {
            spec,
            shard,
            output,
        } => return pool.install(|| run_spec(spec, *shard, output.as_deref(), o.format)),
        SweepWhat::Merge { output, shards } => {
            // Writing the merged file failing is not bad input; a shard is.
            let (rows, meta) = fleet::merge_into(shards, output).map_err(|e| match e {
                fleet::FleetError::Trace(t) if t.path == *output => other(t.into()),
                e => bad_input(e),
            })?;
            eprintln!(
                "fikit-sim: merged {} shards: {} rows of {} items (spec {}) into {}",
                shards.len(),
                rows,
                meta.items,
                meta.spec_hash,
                output.display()
            );
            return Ok(());
        }
        SweepWhat::Show { file, format } => {
            let (rows, meta) = fleet::read_rows(file).map_err(bad_input)?;
            eprintln!(
                "fikit-sim: {}: {} rows, spec {}, {}",
                file.display(),
                rows.len(),
                meta.spec_hash,
                meta.shard
                    .map_or("merged".to_string(), |s| format!("shard {s}"))
            );
            return print(&report::sweep::render_fleet(&rows, *format));
        }
    };
    let files = traces(inputs)?;
    let (model, model_line) = resolve_model(&o.model, &files)?;
    eprintln!("fikit-sim: {model_line}");
    let mut scenario = Scenario::from_traces(&files).map_err(bad_input)?;
    say_lines(&characterize(&mut scenario.jobs, &model, o.as_profiled).0);
    if scenario.jobs.len() < 2 {
        return Err(bad_input(anyhow::anyhow!(
            "a sweep needs at least 2 traces, found {}",
            scenario.jobs.len()
        )));
    }
    let opts = SweepOptions {
        policies: o.policies,
        model,
        progress: std::io::stderr().is_terminal(),
    };
    let rows = pool
        .install(|| sweep::pairs(&scenario.jobs, &opts))
        .map_err(simulating)?;
    print(&report::sweep::render(&rows, o.format))
}

/// A pool of `threads` workers (default: one per core).
/// The most worker threads `--threads` starts.
pub const MAX_THREADS: usize = 1024;

fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool, Failure> {
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(n) = threads {
        if n == 0 {
            return Err(bad_input(anyhow::anyhow!("--threads must be at least 1")));
        }
        // Each thread has its own stack and copy of the work; past this many
        // they only cost (100,000 took minutes to start on 2 cores).
        if n > MAX_THREADS {
            return Err(bad_input(anyhow::anyhow!(
                "--threads {n}: at most {MAX_THREADS}"
            )));
        }
        builder = builder.num_threads(n);
    }
    builder
        .build()
        .context("starting worker threads")
        .map_err(other)
}

/// Runs a sweep spec's items (one shard, or all) and prints or writes the rows.
fn run_spec(
    spec: &Path,
    shard: Option<Shard>,
    output: Option<&Path>,
    format: Format,
) -> Result<(), Failure> {
    let resolved = fleet::Resolved::load(spec).map_err(bad_input)?;
    eprintln!("fikit-sim: {}", resolved.model_line);
    if let Some(out) = output
        && resolved.would_find(out)
    {
        return Err(bad_input(anyhow::anyhow!(
            "-o {}: inside a folder the spec searches for traces, where the next shard would read it as one; write the rows elsewhere",
            out.display()
        )));
    }
    let asked = shard;
    let shard = shard.unwrap_or(Shard::ALL);
    let range = shard.range(resolved.items());
    let count = range.end - range.start;
    let bar = report::progress::counter(
        count,
        std::io::stderr().is_terminal(),
        "{bar:40} {pos}/{len} items {elapsed_precise} ETA {eta}",
    );
    let rows = fleet::run_shard(&resolved, shard, &|| bar.inc(1)).map_err(|e| match e {
        fleet::FleetError::Run(r) => simulating_of(r, &format!("the spec {}", spec.display())),
        e => bad_input(e),
    })?;
    bar.finish_and_clear();
    let meta = fleet::RowsMeta {
        spec_hash: resolved.hash.clone(),
        items: resolved.items(),
        shard: asked,
    };
    match output {
        Some(path) => {
            fleet::write_rows(path, &rows, &meta).map_err(|e| other(e.into()))?;
            eprintln!(
                "fikit-sim: shard {shard}: {} items, {} rows (spec {}) written to {}",
                count,
                rows.len(),
                resolved.hash,
                path.display()
            );
            Ok(())
        }
        None => print(&report::sweep::render_fleet(&rows, format)),
    }
}

/// A simulation's failure: exit 2 where the inputs are at fault (a replay
/// that would run implausibly long), 1 otherwise.
pub(super) fn simulating(e: crate::sim::engine::RunError) -> Failure {
    simulating_of(e, "the traces")
}

/// [`simulating`], naming the inputs (`the scenario FILE`, `the traces`).
pub(super) fn simulating_of(e: crate::sim::engine::RunError, inputs: &str) -> Failure {
    let bad = e.is_bad_input();
    let e = anyhow::Error::from(e).context(format!("simulating {inputs}"));
    if bad { bad_input(e) } else { other(e) }
}

/// A file `flag` names to write, refused before any work where it cannot
/// be: a folder (`what`: what to name instead), or in a folder that cannot
/// be made or written ([`check_writable_folder`]).
pub(super) fn check_output_file(flag: &str, path: &Path, what: &str) -> Result<(), Failure> {
    if path.is_dir() {
        return Err(bad_input(anyhow::anyhow!(
            "{flag} {}: a folder; name {what}",
            path.display()
        )));
    }
    // A parent that is a file is refused there, with its name.
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    check_writable_folder(flag, path, parent)
}

/// Whether `dir` could be made (where missing) and written in, before any
/// work: a file is written in and removed from `dir`, or from its nearest
/// folder that exists, nothing left behind. An output that cannot be
/// written is bad input (`flag shown` names it), not a failure after the
/// work is done.
pub(super) fn check_writable_folder(flag: &str, shown: &Path, dir: &Path) -> Result<(), Failure> {
    let mut there = dir;
    while !there.as_os_str().is_empty() && !there.exists() {
        there = there.parent().unwrap_or(Path::new(""));
    }
    let there = if there.as_os_str().is_empty() {
        Path::new(".")
    } else {
        there
    };
    if !there.is_dir() {
        return Err(bad_input(anyhow::anyhow!(
            "{flag} {}: {} is a file, not a folder",
            shown.display(),
            there.display()
        )));
    }
    let probe = there.join(format!(".fikit-sim-probe-{}", std::process::id()));
    std::fs::File::create(&probe).map_err(|e| {
        bad_input(anyhow::anyhow!(
            "{flag} {}: cannot write in {}: {e}",
            shown.display(),
            there.display()
        ))
    })?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Outputs that could not be written, refused before any work: an HTML
/// report that names a folder or whose folder is a file, plots into a path
/// that is a file.
fn check_outputs(html: Option<&Path>, plots: Option<&Path>) -> Result<(), Failure> {
    if let Some(h) = html {
        check_output_file("--html", h, "the report's file")?;
    }
    // A missing folder is made; a path that is there but no folder cannot be.
    let not_a_folder = |p: &Path| p.exists() && !p.is_dir();
    if let Some(d) = plots.filter(|d| not_a_folder(d)) {
        return Err(bad_input(anyhow::anyhow!(
            "--plots {}: a file, not a folder",
            d.display()
        )));
    }
    if let Some(d) = plots {
        check_writable_folder("--plots", d, d)?;
    }
    Ok(())
}
