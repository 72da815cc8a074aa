//! Plots of a [`Report`], each written as PNG and SVG with plotters:
//!
//! - `<stem>-jct`: grouped bars of every job's region (first kernel launch
//!   to its end) under every policy over its region alone (the `slowdown`
//!   of [`JobRow`]), with a
//!   dashed line at 1.0;
//! - `<stem>-latency-cdf`: the CDF of the high-priority job's iteration
//!   latencies (lowest `priority` number; ties: the first job) per policy;
//! - `<stem>-timeline`: a Gantt chart of the kernels on the GPU, one panel per
//!   policy with recorded segments (`SimOptions::record_segments`), one row per
//!   job, over a window that covers [`TIMELINE_ITERATIONS`] iterations of the
//!   high-priority job from its middle one on, past setup and warm-up (at most
//!   [`TIMELINE_MAX_NS`]): where the low-priority kernels landed in the
//!   high-priority job's gaps.
//!
//! Text is drawn with DejaVu Sans, embedded in the binary (`simulator/assets/`,
//! license beside it) and registered with plotters once: nothing needs system
//! fonts or fontconfig. The output is a pure function of the input: the same
//! report gives the same SVG bytes.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontStyle, RGBColor, register_font};

use crate::policy::PolicyKind;
use crate::sim::engine::Segment;
use crate::sim::job::{HostStep, Job};
use crate::sim::simulate::{JobRow, Report};

/// High-priority iterations the timeline window covers (under the policy in
/// which they take longest), from the middle one on.
pub const TIMELINE_ITERATIONS: usize = 2;

/// The longest timeline window, ns.
pub const TIMELINE_MAX_NS: i64 = 10_000_000;

/// The font family every text uses; DejaVu Sans is registered under it.
const FONT: &str = "sans-serif";

/// DejaVu Sans 2.37 (Bitstream Vera license: `assets/DejaVuSans-LICENSE.txt`).
static DEJAVU_SANS: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

/// Why a plot could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// The output folder could not be created.
    #[error("{}: cannot create the output folder: {reason}", path.display())]
    CreateDir {
        /// The folder.
        path: PathBuf,
        /// Why (in the message, so not also the error's source: `{:#}` names it once).
        reason: std::io::Error,
    },
    /// Drawing or writing a file failed.
    #[error("{}: drawing failed: {message}", path.display())]
    Draw {
        /// The file being written.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// The report and the jobs do not fit together (or there is nothing to plot).
    #[error("{}: cannot plot: {message}", path.display())]
    Input {
        /// The file that was to be written.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// Writes the plots of `report` (simulated from `jobs`, in the same order)
/// into `out_dir` (created if missing) as `<stem>-jct`, `<stem>-latency-cdf`
/// and `<stem>-timeline`, each `.png` and `.svg`, and returns the paths
/// written, in that order. The timeline needs the report's segments
/// (`SimOptions::record_segments`); when no policy recorded any (e.g. only
/// `exclusive` was simulated), it is left out of the returned paths.
pub fn write_plots(
    report: &Report,
    jobs: &[Job],
    out_dir: &Path,
    stem: &str,
) -> Result<Vec<PathBuf>, PlotError> {
    std::fs::create_dir_all(out_dir).map_err(|source| PlotError::CreateDir {
        path: out_dir.to_path_buf(),
        reason: source,
    })?;
    let file = |name: &str| out_dir.join(format!("{stem}-{name}"));
    let input = |name: &str, message: String| PlotError::Input {
        path: file(name),
        message,
    };

    let table = PolicyTable::new(report, jobs).map_err(|m| input("jct", m))?;
    let high = high_priority(jobs).ok_or_else(|| input("jct", "no jobs".to_string()))?;
    let labels: Vec<String> = jobs
        .iter()
        .map(|j| format!("{} (p{})", j.name, j.priority))
        .collect();

    let mut written = Vec::new();
    let jct = JctFigure {
        title: format!("Slowdown: region under the policy / alone ({stem})"),
        jobs: labels.clone(),
        bars: table
            .rows
            .iter()
            .map(|(p, rows)| (*p, rows.iter().map(|r| r.slowdown).collect()))
            .collect(),
    };
    written.extend(write_figure(&jct, &file("jct"))?);

    let cdf = CdfFigure {
        title: format!("Iteration latency CDF of {}", labels[high]),
        series: table
            .rows
            .iter()
            .map(|(p, rows)| (*p, sorted(&rows[high].iterations_ns)))
            .collect(),
    };
    written.extend(write_figure(&cdf, &file("latency-cdf"))?);

    if let Some(timeline) = TimelineFigure::new(report, jobs, &labels, high) {
        written.extend(write_figure(&timeline, &file("timeline"))?);
    }
    Ok(written)
}

/// The job rows of each policy, in report order; row `i` is job `i`.
struct PolicyTable<'r> {
    rows: Vec<(PolicyKind, Vec<&'r JobRow>)>,
}

impl<'r> PolicyTable<'r> {
    fn new(report: &'r Report, jobs: &[Job]) -> Result<Self, String> {
        if report.jobs.is_empty() {
            return Err("the report has no job rows".to_string());
        }
        let mut rows: Vec<(PolicyKind, Vec<&JobRow>)> = Vec::new();
        for r in &report.jobs {
            match rows.iter_mut().find(|(p, _)| *p == r.policy) {
                Some((_, v)) => v.push(r),
                None => rows.push((r.policy, vec![r])),
            }
        }
        for (p, v) in &rows {
            if v.len() != jobs.len() {
                return Err(format!(
                    "policy {} has {} job rows but {} jobs were given",
                    p.as_str(),
                    v.len(),
                    jobs.len()
                ));
            }
            for (r, j) in v.iter().zip(jobs) {
                if r.job != j.name {
                    return Err(format!(
                        "policy {}: row for job {:?} where job {:?} was expected (jobs must be given in simulation order)",
                        p.as_str(),
                        r.job,
                        j.name
                    ));
                }
            }
        }
        Ok(PolicyTable { rows })
    }
}

/// The high-priority job: lowest `priority` number, ties to the first.
fn high_priority(jobs: &[Job]) -> Option<usize> {
    (0..jobs.len()).min_by_key(|&i| (jobs[i].priority, i))
}

fn sorted(v: &[i64]) -> Vec<i64> {
    let mut v = v.to_vec();
    v.sort_unstable();
    v
}

/// A policy's color, the same in every plot.
fn policy_color(p: PolicyKind) -> RGBColor {
    match p {
        PolicyKind::Exclusive => RGBColor(127, 127, 127),
        PolicyKind::Timeslice => RGBColor(255, 127, 14),
        PolicyKind::Mps => RGBColor(44, 160, 44),
        PolicyKind::Preemptive => RGBColor(148, 103, 189),
        PolicyKind::Fikit => RGBColor(31, 119, 180),
    }
}

/// A job's color in the timeline.
fn job_color(i: usize) -> RGBColor {
    const PALETTE: [RGBColor; 10] = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(255, 127, 14),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(23, 190, 207),
        RGBColor(188, 189, 34),
        RGBColor(127, 127, 127),
    ];
    PALETTE[i % PALETTE.len()]
}

/// Registers the embedded font with plotters, once per process.
fn ensure_font() -> Result<(), String> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        register_font(FONT, FontStyle::Normal, DEJAVU_SANS).is_ok()
            && register_font(FONT, FontStyle::Bold, DEJAVU_SANS).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err("the embedded DejaVu Sans font could not be loaded".to_string())
    }
}

type DrawResult = Result<(), String>;

fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// A plot that can be drawn on any backend.
trait Figure {
    /// Size in pixels.
    fn size(&self) -> (u32, u32);
    /// Draws onto a blank area.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult;
}

/// Writes `fig` as `<base>.png` and `<base>.svg`.
fn write_figure<F: Figure>(fig: &F, base: &Path) -> Result<[PathBuf; 2], PlotError> {
    let png = base.with_extension("png");
    let svg = base.with_extension("svg");
    let draw_err = |path: &Path| {
        let path = path.to_path_buf();
        move |message| PlotError::Draw { path, message }
    };
    ensure_font().map_err(draw_err(&png))?;
    {
        let root = BitMapBackend::new(&png, fig.size()).into_drawing_area();
        fill_and_draw(fig, &root).map_err(draw_err(&png))?;
    }
    {
        let root = SVGBackend::new(&svg, fig.size()).into_drawing_area();
        fill_and_draw(fig, &root).map_err(draw_err(&svg))?;
    }
    Ok([png, svg])
}

fn fill_and_draw<F: Figure, DB: DrawingBackend>(
    fig: &F,
    root: &DrawingArea<DB, Shift>,
) -> DrawResult {
    root.fill(&WHITE).map_err(err)?;
    fig.draw(root)?;
    root.present().map_err(err)
}

/// Labels for category positions `0..n` of an axis spanning `-0.5..n-0.5`.
/// The width in pixels of `text` in the plots' font at `px` pixels (an
/// estimate of 0.62 em per character if the font cannot measure it).
fn text_width(text: &str, px: u32) -> u32 {
    let measured = ensure_font()
        .ok()
        .and_then(|()| (FONT, px).into_font().box_size(text).ok());
    measured.map_or(
        (text.chars().count() as f64 * px as f64 * 0.62).ceil() as u32,
        |(w, _)| w,
    )
}

/// The widest of `labels` in the plots' font at `px` pixels.
fn widest(labels: &[String], px: u32) -> u32 {
    labels.iter().map(|l| text_width(l, px)).max().unwrap_or(0)
}

fn category_label(labels: &[String], v: f64) -> String {
    let i = v.round();
    if (v - i).abs() > 1e-6 || i < 0.0 {
        return String::new();
    }
    labels.get(i as usize).cloned().unwrap_or_default()
}

struct JctFigure {
    title: String,
    jobs: Vec<String>,
    /// Per policy, per job: region / region alone.
    bars: Vec<(PolicyKind, Vec<f64>)>,
}

impl Figure for JctFigure {
    fn size(&self) -> (u32, u32) {
        // Room for every bar, and for every job's label under its group.
        let bars = 240 + 40 * (self.jobs.len() * self.bars.len()) as u32;
        let labels = 120 + (widest(&self.jobs, 14) + 24) * self.jobs.len() as u32;
        (bars.max(labels).clamp(800, 4800), 600)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let n = self.jobs.len();
        let top = self
            .bars
            .iter()
            .flat_map(|(_, v)| v.iter().copied())
            .filter(|v| v.is_finite())
            .fold(1.0f64, f64::max);
        let x_range = -0.5..(n as f64 - 0.5);
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (FONT, 22))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(60)
            // Headroom for the legend (upper left) above the tallest bar.
            .build_cartesian_2d(x_range, 0.0..top * 1.5)
            .map_err(err)?;
        let labels = &self.jobs;
        let x_fmt = |v: &f64| category_label(labels, *v);
        let y_fmt = |v: &f64| format!("{v:.2}");
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .y_desc("region / region alone")
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 15))
            .draw()
            .map_err(err)?;

        let np = self.bars.len().max(1);
        let width = 0.8 / np as f64;
        let annotate = n * np <= 40;
        for (p, (policy, values)) in self.bars.iter().enumerate() {
            let color = policy_color(*policy);
            let rects = values.iter().enumerate().map(move |(i, &v)| {
                let x0 = i as f64 - 0.4 + p as f64 * width;
                Rectangle::new([(x0, 0.0), (x0 + width * 0.9, v)], color.filled())
            });
            chart
                .draw_series(rects)
                .map_err(err)?
                .label(policy.as_str())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled())
                });
            if annotate {
                let texts = values.iter().enumerate().map(move |(i, &v)| {
                    let x = i as f64 - 0.4 + (p as f64 + 0.45) * width;
                    Text::new(
                        format!("{v:.2}"),
                        (x, v),
                        TextStyle::from((FONT, 11).into_font())
                            .pos(Pos::new(HPos::Center, VPos::Bottom)),
                    )
                });
                chart.draw_series(texts).map_err(err)?;
            }
        }
        chart
            .draw_series(DashedLineSeries::new(
                [(-0.5, 1.0), (n as f64 - 0.5, 1.0)],
                8,
                5,
                BLACK.stroke_width(2),
            ))
            .map_err(err)?
            .label("alone = 1.0")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 14, y)], BLACK.stroke_width(2)));
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font((FONT, 14))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(err)?;
        Ok(())
    }
}

/// A unit for durations: (ns per unit, name).
fn time_unit(max_ns: i64) -> (f64, &'static str) {
    if max_ns < 10_000 {
        (1.0, "ns")
    } else if max_ns < 10_000_000 {
        (1e3, "µs")
    } else if max_ns < 10_000_000_000 {
        (1e6, "ms")
    } else {
        (1e9, "s")
    }
}

/// Decimals that tell apart ticks about `span / 10` apart.
fn decimals(span: f64) -> usize {
    if span <= 0.0 || !span.is_finite() {
        return 0;
    }
    (-(span / 10.0).log10().floor()).clamp(0.0, 6.0) as usize
}

struct CdfFigure {
    title: String,
    /// Per policy: the sorted iteration latencies, ns.
    series: Vec<(PolicyKind, Vec<i64>)>,
}

impl Figure for CdfFigure {
    fn size(&self) -> (u32, u32) {
        (900, 600)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let all = || self.series.iter().flat_map(|(_, v)| v.iter().copied());
        let max = all().max().unwrap_or(1).max(1);
        let min = all().min().unwrap_or(1).clamp(1, max);
        let (scale, unit) = time_unit(max);
        // A log axis: one setup iteration can be 100 times the steady ones.
        let (x_min, x_max) = (min as f64 / scale / 1.2, max as f64 / scale * 1.2);
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (FONT, 22))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d((x_min..x_max).log_scale(), 0.0..1.02)
            .map_err(err)?;
        let x_fmt = |v: &f64| {
            let dec = decimals(v.abs() * 10.0);
            format!("{v:.dec$}")
        };
        let y_fmt = |v: &f64| format!("{v:.1}");
        chart
            .configure_mesh()
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .x_desc(format!("iteration latency ({unit}, log scale)"))
            .y_desc("fraction of iterations ≤ latency")
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 15))
            .draw()
            .map_err(err)?;
        let np = self.series.len() as u32;
        for (i, (policy, values)) in self.series.iter().enumerate() {
            let color = policy_color(*policy);
            // Earlier series wider, so identical curves stay visible under later ones.
            let width = 2 + (np - 1 - i as u32).min(4);
            let n = values.len().max(1) as f64;
            let mut points = Vec::with_capacity(values.len() * 2 + 1);
            points.push((x_min, 0.0));
            for (i, &v) in values.iter().enumerate() {
                let x = (v as f64 / scale).max(x_min);
                points.push((x, i as f64 / n));
                points.push((x, (i + 1) as f64 / n));
            }
            points.push((x_max, if values.is_empty() { 0.0 } else { 1.0 }));
            chart
                .draw_series(LineSeries::new(points, color.stroke_width(width)))
                .map_err(err)?
                .label(policy.as_str())
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 16, y)], color.stroke_width(3))
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .label_font((FONT, 14))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(err)?;
        Ok(())
    }
}

/// Per job: busy intervals `(start, end)`, ns.
type Rows = Vec<Vec<(i64, i64)>>;

struct TimelineFigure {
    title: String,
    jobs: Vec<String>,
    /// What time 0 of the x axis is.
    origin: String,
    /// The window length, ns (the same in every panel).
    len: i64,
    /// Per policy: the window's start, ns, and per job the busy intervals
    /// within the window.
    panels: Vec<(PolicyKind, i64, Rows)>,
}

/// Horizontal resolution the timeline's intervals are merged to: intervals of
/// one job closer than `window / MERGE_RESOLUTION` become one rectangle.
const MERGE_RESOLUTION: i64 = 4000;

/// The first kernel op of each iteration of `job` (iterations end at the
/// waits that end one); iterations without kernels are left out.
fn iteration_first_kernels(job: &Job) -> Vec<usize> {
    let mut out = Vec::new();
    let mut open = true; // looking for the current iteration's first kernel
    for step in job.steps.iter() {
        match *step {
            HostStep::Issue { op, .. } if open && job.ops[op as usize].is_kernel() => {
                out.push(op as usize);
                open = false;
            }
            HostStep::Wait {
                ends_iteration: true,
                ..
            } => open = true,
            _ => {}
        }
    }
    out
}

impl TimelineFigure {
    /// The window: from the first kernel of the high-priority job's middle
    /// iteration (past the setup and warm-up) over [`TIMELINE_ITERATIONS`]
    /// iterations, under the policy where they take longest, at most
    /// [`TIMELINE_MAX_NS`]. Each panel starts where that kernel first ran
    /// under its policy, so the panels show the same work.
    fn new(report: &Report, jobs: &[Job], labels: &[String], high: usize) -> Option<Self> {
        let panels: Vec<_> = report
            .segments
            .iter()
            .filter(|s| !s.segments.is_empty())
            .collect();
        if panels.is_empty() {
            return None;
        }
        let firsts = iteration_first_kernels(&jobs[high]);
        let m = firsts.len() / 2;
        let anchor = firsts.get(m).copied();
        let until = firsts.get(m + TIMELINE_ITERATIONS).copied();
        // When op `op` of the high-priority job first ran under a policy.
        let first_run = |segs: &[Segment], op: usize| {
            segs.iter()
                .filter(|s| s.job == high && s.op == op)
                .map(|s| s.start_ns)
                .min()
        };
        let mut starts = Vec::with_capacity(panels.len());
        let mut len = 1;
        for p in &panels {
            let segs = &p.segments;
            let any_start = segs.iter().map(|s| s.start_ns).min().unwrap_or(0);
            let start = anchor
                .and_then(|op| first_run(segs, op))
                .unwrap_or(any_start);
            let end = until.and_then(|op| first_run(segs, op)).unwrap_or_else(|| {
                segs.iter()
                    .filter(|s| s.job == high)
                    .map(|s| s.end_ns)
                    .max()
                    .unwrap_or_else(|| segs.iter().map(|s| s.end_ns).max().unwrap_or(start))
            });
            len = len.max(end - start);
            starts.push(start);
        }
        let len = len.min(TIMELINE_MAX_NS);
        let merge_gap = len / MERGE_RESOLUTION;
        let (title, origin) = match anchor {
            Some(_) => (
                format!(
                    "Kernels on the GPU over iterations {}–{} of {} ({} in all)",
                    m + 1,
                    (m + TIMELINE_ITERATIONS).min(firsts.len()),
                    labels[high],
                    firsts.len()
                ),
                format!("µs since iteration {} of {} began", m + 1, jobs[high].name),
            ),
            None => (
                "Kernels on the GPU from the start".to_string(),
                "µs since the first kernel".to_string(),
            ),
        };
        Some(TimelineFigure {
            title,
            jobs: labels.to_vec(),
            origin,
            len,
            panels: panels
                .iter()
                .zip(starts)
                .map(|(p, start)| {
                    let window = (start, start + len);
                    (
                        p.policy,
                        start,
                        intervals(&p.segments, labels.len(), window, merge_gap),
                    )
                })
                .collect(),
        })
    }
}

/// Each job's busy intervals within `window`, clipped to it, sorted, with
/// intervals that overlap or lie closer than `merge_gap` merged.
fn intervals(segments: &[Segment], jobs: usize, window: (i64, i64), merge_gap: i64) -> Rows {
    let mut rows: Rows = vec![Vec::new(); jobs];
    for s in segments {
        let (a, b) = (s.start_ns.max(window.0), s.end_ns.min(window.1));
        if b > a
            && let Some(row) = rows.get_mut(s.job)
        {
            row.push((a, b));
        }
    }
    for row in &mut rows {
        row.sort_unstable();
        let mut merged: Vec<(i64, i64)> = Vec::with_capacity(row.len());
        for &(a, b) in row.iter() {
            match merged.last_mut() {
                Some(last) if a <= last.1 + merge_gap => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        *row = merged;
    }
    rows
}

impl Figure for TimelineFigure {
    fn size(&self) -> (u32, u32) {
        let per_panel = 90 + 40 * self.jobs.len() as u32;
        (
            1040 + widest(&self.jobs, 13),
            60 + per_panel * self.panels.len() as u32,
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let area = root.titled(&self.title, (FONT, 20)).map_err(err)?;
        let n = self.jobs.len();
        let span = self.len as f64 / 1e3;
        let dec = decimals(span);
        let x_fmt = |v: &f64| format!("{v:.dec$}");
        let labels = &self.jobs;
        // Row 0 (the first job) at the top.
        let y_fmt = |v: &f64| category_label(labels, (n as f64 - 1.0) - *v);
        for ((policy, start, rows), panel) in self
            .panels
            .iter()
            .zip(area.split_evenly((self.panels.len(), 1)))
        {
            let us = |t: i64| (t - start) as f64 / 1e3;
            let mut chart = ChartBuilder::on(&panel)
                .caption(policy.as_str(), (FONT, 18))
                .margin(8)
                .margin_right(30)
                .x_label_area_size(40)
                .y_label_area_size(widest(labels, 13) + 20)
                .build_cartesian_2d(0.0..span, -0.5..(n as f64 - 0.5))
                .map_err(err)?;
            chart
                .configure_mesh()
                .disable_y_mesh()
                .y_labels(n)
                .y_label_formatter(&y_fmt)
                .x_label_formatter(&x_fmt)
                .x_desc(self.origin.as_str())
                .label_style((FONT, 13))
                .axis_desc_style((FONT, 14))
                .draw()
                .map_err(err)?;
            for (j, row) in rows.iter().enumerate() {
                let color = job_color(j);
                let y = (n - 1 - j) as f64;
                chart
                    .draw_series(row.iter().map(|&(a, b)| {
                        Rectangle::new([(us(a), y - 0.35), (us(b), y + 0.35)], color.filled())
                    }))
                    .map_err(err)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::gpu::GpuModel;
    use crate::sim::simulate::{SimOptions, simulate};
    use fikit_trace::{Trace, fixture};

    /// A high-priority job with three iterations of two kernels and a host
    /// gap each, ended by a stream sync; and a low-priority job of short kernels.
    fn traces() -> Vec<Trace> {
        vec![
            fixture::short_iterations("resnet-infer", 0, 3),
            fixture::back_to_back("bert-train", 5, 12, 150),
        ]
    }

    fn report(record_segments: bool) -> (Report, Vec<Job>) {
        let jobs: Vec<Job> = traces().iter().map(Job::from_trace).collect();
        let opts = SimOptions {
            policies: PolicyKind::ALL.to_vec(),
            model: GpuModel {
                timeslice_quantum_ns: 300,
                context_switch_ns: 20,
                ..GpuModel::default()
            },
            record_segments,
        };
        (simulate(&jobs, &[0, 0], &opts).unwrap(), jobs)
    }

    fn is_png(path: &Path) -> bool {
        let bytes = std::fs::read(path).unwrap();
        bytes.len() > 2_000 && bytes.starts_with(b"\x89PNG\r\n\x1a\n")
    }

    #[test]
    fn writes_every_plot_as_png_and_svg() {
        let (report, jobs) = report(true);
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("plots");
        let paths = write_plots(&report, &jobs, &out, "run").unwrap();
        let names: Vec<String> = paths
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "run-jct.png",
                "run-jct.svg",
                "run-latency-cdf.png",
                "run-latency-cdf.svg",
                "run-timeline.png",
                "run-timeline.svg"
            ]
        );
        for p in &paths {
            assert!(p.starts_with(&out));
            if p.extension().unwrap() == "png" {
                assert!(is_png(p), "{} is not a PNG", p.display());
            }
        }
        let svg = |name: &str| std::fs::read_to_string(out.join(name)).unwrap();
        let (jct, cdf, timeline) = (
            svg("run-jct.svg"),
            svg("run-latency-cdf.svg"),
            svg("run-timeline.svg"),
        );
        for job in ["resnet-infer", "bert-train"] {
            assert!(jct.contains(job), "JCT plot lacks {job}");
            assert!(timeline.contains(job), "timeline lacks {job}");
        }
        assert!(
            cdf.contains("resnet-infer"),
            "the CDF names the high-priority job"
        );
        for p in PolicyKind::ALL {
            assert!(jct.contains(p.as_str()), "JCT plot lacks {}", p.as_str());
            assert!(cdf.contains(p.as_str()), "CDF lacks {}", p.as_str());
        }
        // Every policy but exclusive records segments: one panel each.
        for p in &PolicyKind::ALL[1..] {
            assert!(
                timeline.contains(p.as_str()),
                "timeline lacks {}",
                p.as_str()
            );
        }
        // Kernel rectangles in both job colors.
        assert!(timeline.contains("#1F77B4") || timeline.contains("#1f77b4"));
        assert!(timeline.contains("#D62728") || timeline.contains("#d62728"));
    }

    #[test]
    fn the_same_report_gives_the_same_svg_bytes() {
        let (report, jobs) = report(true);
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        write_plots(&report, &jobs, a.path(), "x").unwrap();
        let (report, jobs) = self::report(true);
        write_plots(&report, &jobs, b.path(), "x").unwrap();
        for name in ["x-jct.svg", "x-latency-cdf.svg", "x-timeline.svg"] {
            let (x, y) = (
                std::fs::read(a.path().join(name)).unwrap(),
                std::fs::read(b.path().join(name)).unwrap(),
            );
            assert!(x == y, "{name} differs between runs");
        }
    }

    #[test]
    fn without_segments_the_timeline_is_left_out() {
        let (report, jobs) = report(false);
        let dir = tempfile::tempdir().unwrap();
        let paths = write_plots(&report, &jobs, dir.path(), "s").unwrap();
        assert_eq!(paths.len(), 4);
        assert!(!dir.path().join("s-timeline.svg").exists());
    }

    #[test]
    fn jobs_that_do_not_match_the_report_are_refused() {
        let (report, jobs) = report(true);
        let dir = tempfile::tempdir().unwrap();
        let e = write_plots(&report, &jobs[..1], dir.path(), "m").unwrap_err();
        assert!(matches!(e, PlotError::Input { .. }));
        assert!(e.to_string().contains("m-jct"), "{e}");
    }

    #[test]
    fn the_timeline_window_starts_at_the_middle_iteration_and_merges_close_segments() {
        let seg = |job, start_ns, end_ns| Segment {
            job,
            op: 0,
            ready_ns: start_ns,
            start_ns,
            end_ns,
        };
        let rows = intervals(
            &[
                seg(0, 0, 10),
                seg(0, 12, 20),
                seg(0, 40, 50),
                seg(1, 90, 200),
            ],
            2,
            (0, 100),
            2,
        );
        assert_eq!(rows, [vec![(0, 20), (40, 50)], vec![(90, 100)]]);

        let (report, jobs) = report(true);
        // Iterations start with conv at 0, 1000, 2000: the middle one is the second.
        assert_eq!(iteration_first_kernels(&jobs[0]), [0, 2, 4]);
        let labels: Vec<String> = jobs.iter().map(|j| j.name.clone()).collect();
        let t = TimelineFigure::new(&report, &jobs, &labels, 0).unwrap();
        assert_eq!(t.panels.len(), 4);
        // Under fikit the high-priority job runs as if alone: its second
        // iteration starts at 1000 and its last kernel ends at 2700.
        let fikit = t.panels.iter().find(|p| p.0 == PolicyKind::Fikit).unwrap();
        assert_eq!(fikit.1, 1_000);
        assert!(t.len >= 1_700, "{}", t.len);
        assert_eq!(fikit.2[0][0].0, 1_000);
    }
}
