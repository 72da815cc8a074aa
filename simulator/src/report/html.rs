//! Self-contained HTML reports: one file with inline CSS and the plots
//! embedded (inline SVG, or PNG as a `data:` URI), which opens offline and
//! fetches nothing.
//!
//! [`HtmlReport`] is generic (a title and [`Section`]s of paragraphs,
//! key/value lists, tables and figures), so any comparison can be rendered
//! with it; [`simulation_report`] builds the report of a simulation run
//! (`fikit-sim --html FILE`): the scenario, the GPU model, the per-job and
//! per-policy tables of [`crate::report`] and the plots of [`crate::report::plots`].
//!
//! Every report carries a small script that, once the page has loaded, checks
//! that each table has rows and each figure has a non-zero size, and records
//! the result on the `<html>` element: `data-fikit-ok="true"` (or `"false"`
//! with `data-fikit-problems` and a console error), `data-fikit-tables` and
//! `data-fikit-figures` (how many rendered). A headless browser's dumped DOM
//! shows it (see `tests/html.rs`). The output is a pure function of the input.

use std::fmt::Write as _;
use std::path::Path;

use fikit_trace::summary::human_ns;

use crate::sim::gpu::GpuModel;
use crate::sim::scenario::Scenario;
use crate::sim::simulate::Report;

/// A report: a title and sections, rendered by [`HtmlReport::render`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HtmlReport {
    /// Page title and top heading.
    pub title: String,
    /// A line under the title (what produced the report), if any.
    pub subtitle: Option<String>,
    /// Sections, in order.
    pub sections: Vec<Section>,
}

/// A section: a heading and its blocks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Section {
    /// Heading.
    pub heading: String,
    /// Content, in order.
    pub blocks: Vec<Block>,
}

/// A piece of a section.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A paragraph of plain text.
    Paragraph(String),
    /// Key/value pairs, shown as a two-column list.
    KeyValues(Vec<(String, String)>),
    /// A table.
    Table(Table),
    /// A figure.
    Figure(Figure),
}

/// A table of text cells.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    /// Caption above the table, if any.
    pub caption: Option<String>,
    /// Column headings.
    pub header: Vec<String>,
    /// Which columns hold numbers (right-aligned); missing entries are text.
    pub numeric: Vec<bool>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
}

/// A figure: an image and its caption.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Caption under the image.
    pub caption: String,
    /// The image.
    pub image: Image,
}

/// An embedded image.
#[derive(Debug, Clone, PartialEq)]
pub enum Image {
    /// An SVG document, inlined (an XML declaration or doctype before `<svg` is dropped).
    Svg(String),
    /// PNG bytes, embedded as a base64 `data:` URI.
    Png(Vec<u8>),
}

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum HtmlError {
    /// Writing the file failed.
    #[error("{}: cannot write the HTML report: {reason}", path.display())]
    Write {
        /// The file.
        path: std::path::PathBuf,
        /// Why (in the message, so not also the error's source: `{:#}` names it once).
        reason: std::io::Error,
    },
    /// A figure could not be read.
    #[error("{}: cannot read the figure: {reason}", path.display())]
    Figure {
        /// The file.
        path: std::path::PathBuf,
        /// Why (in the message, so not also the error's source: `{:#}` names it once).
        reason: std::io::Error,
    },
}

const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;margin:2rem auto;max-width:1250px;padding:0 1rem;color:#1b1b1b;line-height:1.45}\
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.25rem;margin-top:2.2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}\
.subtitle{color:#555;margin-top:0}\
table{border-collapse:collapse;margin:.6rem 0 1.2rem;font-size:.9rem}\
caption{text-align:left;font-weight:600;padding-bottom:.3rem}\
th,td{border:1px solid #d0d0d0;padding:.25rem .6rem;vertical-align:top}\
th{background:#f2f4f7;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}\
tbody tr:nth-child(even){background:#fafbfc}\
dl.kv{display:grid;grid-template-columns:max-content auto;gap:.15rem 1rem;font-size:.9rem}dl.kv dt{font-weight:600}dl.kv dd{margin:0}\
figure{margin:1rem 0 2rem}figure svg,figure img{max-width:100%;height:auto;border:1px solid #e3e3e3;display:block}\
figcaption{color:#444;font-size:.9rem;margin-top:.3rem}";

/// The page's self-check (see the module documentation).
const CHECK_SCRIPT: &str = "\
(function(){\
function check(){\
var problems=[],tables=0,figures=0;\
document.querySelectorAll('table').forEach(function(t,i){\
if(t.tBodies.length>0&&t.tBodies[0].rows.length>0&&t.getBoundingClientRect().height>0){tables++;}\
else{problems.push('table '+(i+1)+' has no rows');}});\
document.querySelectorAll('figure').forEach(function(f,i){\
var img=f.querySelector('img'),svg=f.querySelector('svg'),ok=false;\
if(img){ok=img.complete&&img.naturalWidth>0&&img.naturalHeight>0;}\
else if(svg){var r=svg.getBoundingClientRect();ok=r.width>0&&r.height>0&&svg.childElementCount>0;}\
if(ok){figures++;}else{problems.push('figure '+(i+1)+' did not render');}});\
var root=document.documentElement;\
root.setAttribute('data-fikit-tables',String(tables));\
root.setAttribute('data-fikit-figures',String(figures));\
root.setAttribute('data-fikit-ok',problems.length===0?'true':'false');\
if(problems.length>0){root.setAttribute('data-fikit-problems',problems.join('; '));\
console.error('fikit report check failed: '+problems.join('; '));}}\
if(document.readyState==='complete'){check();}else{window.addEventListener('load',check);}\
})();";

/// `s` with the characters HTML gives a meaning escaped.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Standard base64 (RFC 4648, with padding).
pub fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

impl HtmlReport {
    /// The whole HTML document.
    pub fn render(&self) -> String {
        let mut h = String::with_capacity(64 * 1024);
        let title = escape(&self.title);
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n"
        );
        if let Some(s) = &self.subtitle {
            let _ = writeln!(h, "<p class=\"subtitle\">{}</p>", escape(s));
        }
        for (i, section) in self.sections.iter().enumerate() {
            let _ = writeln!(
                h,
                "<section id=\"s{}\">\n<h2>{}</h2>",
                i + 1,
                escape(&section.heading)
            );
            for block in &section.blocks {
                render_block(&mut h, block);
            }
            h.push_str("</section>\n");
        }
        let _ = write!(h, "<script>{CHECK_SCRIPT}</script>\n</body>\n</html>\n");
        h
    }

    /// Writes [`HtmlReport::render`] to `path`.
    pub fn write(&self, path: &Path) -> Result<(), HtmlError> {
        std::fs::write(path, self.render()).map_err(|source| HtmlError::Write {
            path: path.to_path_buf(),
            reason: source,
        })
    }
}

fn render_block(h: &mut String, block: &Block) {
    match block {
        Block::Paragraph(p) => {
            let _ = writeln!(h, "<p>{}</p>", escape(p));
        }
        Block::KeyValues(kv) => {
            h.push_str("<dl class=\"kv\">\n");
            for (k, v) in kv {
                let _ = writeln!(h, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(v));
            }
            h.push_str("</dl>\n");
        }
        Block::Table(t) => render_table(h, t),
        Block::Figure(f) => {
            h.push_str("<figure>\n");
            match &f.image {
                Image::Svg(svg) => {
                    let body = svg.find("<svg").map_or(svg.as_str(), |i| &svg[i..]);
                    h.push_str(body.trim_end());
                    h.push('\n');
                }
                Image::Png(bytes) => {
                    let _ = writeln!(
                        h,
                        "<img alt=\"{}\" src=\"data:image/png;base64,{}\">",
                        escape(&f.caption),
                        base64(bytes)
                    );
                }
            }
            let _ = writeln!(
                h,
                "<figcaption>{}</figcaption>\n</figure>",
                escape(&f.caption)
            );
        }
    }
}

fn render_table(h: &mut String, t: &Table) {
    h.push_str("<table>\n");
    if let Some(c) = &t.caption {
        let _ = writeln!(h, "<caption>{}</caption>", escape(c));
    }
    h.push_str("<thead><tr>");
    for c in &t.header {
        let _ = write!(h, "<th scope=\"col\">{}</th>", escape(c));
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    for row in &t.rows {
        h.push_str("<tr>");
        for (i, c) in row.iter().enumerate() {
            if t.numeric.get(i).copied().unwrap_or(false) {
                let _ = write!(h, "<td class=\"num\">{}</td>", escape(c));
            } else {
                let _ = write!(h, "<td>{}</td>", escape(c));
            }
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody>\n</table>\n");
}

/// Reads figures written by [`crate::report::plots::write_plots`]: the `.svg` files
/// among `paths`, each with the caption of its plot.
pub fn read_svg_figures(paths: &[std::path::PathBuf]) -> Result<Vec<Figure>, HtmlError> {
    paths
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "svg"))
        .map(|p| {
            let svg = std::fs::read_to_string(p).map_err(|source| HtmlError::Figure {
                path: p.clone(),
                reason: source,
            })?;
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            Ok(Figure {
                caption: plot_caption(&stem),
                image: Image::Svg(svg),
            })
        })
        .collect()
}

/// The caption of a plot of [`crate::report::plots`], by its file stem.
fn plot_caption(stem: &str) -> String {
    if stem.ends_with("-jct") {
        "Every job's region (first kernel launch to its end) under every policy over its region alone (1.0 = as fast as alone).".into()
    } else if stem.ends_with("-latency-cdf") {
        "CDF of the high-priority job's iteration latencies under each policy (setup iteration left out).".into()
    } else if stem.ends_with("-timeline") {
        "Where each policy ran the jobs' kernels, over a window of the high-priority job's iterations.".into()
    } else {
        stem.to_string()
    }
}

/// What a simulation report shows.
#[derive(Debug, Clone)]
pub struct SimulationHtml<'a> {
    /// The simulated scenario (jobs in simulation order).
    pub scenario: &'a Scenario,
    /// The GPU model used.
    pub model: &'a GpuModel,
    /// The results.
    pub report: &'a Report,
    /// The plots.
    pub figures: Vec<Figure>,
    /// How the run was started (e.g. the command line), if known.
    pub command: Option<String>,
    /// How the jobs were simulated: the lines `fikit-sim` says first (each
    /// job's host speed, its MPS pressure) and its notes.
    pub notes: Vec<String>,
}

/// The HTML report of a simulation: scenario, GPU model, results, plots.
pub fn simulation_report(input: &SimulationHtml<'_>) -> HtmlReport {
    let SimulationHtml {
        scenario,
        model,
        report,
        ..
    } = input;
    let mut sections = vec![scenario_section(scenario), model_section(model)];
    if !input.notes.is_empty() {
        sections.push(Section {
            heading: "How the jobs were simulated".into(),
            blocks: input
                .notes
                .iter()
                .map(|n| Block::Paragraph(n.clone()))
                .collect(),
        });
    }
    sections.push(results_section(report));
    if !input.figures.is_empty() {
        sections.push(Section {
            heading: "Plots".into(),
            blocks: input.figures.iter().cloned().map(Block::Figure).collect(),
        });
    }

    let mut subtitle = format!(
        "fikit-sim {}; GPU model {}",
        env!("CARGO_PKG_VERSION"),
        report.model
    );
    if let Some(c) = &input.command {
        subtitle.push_str("; ");
        subtitle.push_str(c);
    }
    HtmlReport {
        title: format!("fikit-sim: {}", scenario.name),
        subtitle: Some(subtitle),
        sections,
    }
}

/// The scenario's jobs: priority, arrival, size, recorded span.
fn scenario_section(scenario: &Scenario) -> Section {
    let jobs = Table {
        caption: Some(format!(
            "Jobs of scenario \u{201c}{}\u{201d}",
            scenario.name
        )),
        header: [
            "job",
            "priority",
            "arrives at",
            "kernels",
            "GPU operations",
            "recorded span",
            "latency statistics",
        ]
        .map(String::from)
        .to_vec(),
        numeric: vec![false, true, true, true, true, true, false],
        rows: scenario
            .jobs
            .iter()
            .zip(&scenario.arrivals)
            .map(|(j, &at)| {
                vec![
                    j.name.clone(),
                    j.priority.to_string(),
                    human_ns(at),
                    j.kernel_count().to_string(),
                    j.ops.len().to_string(),
                    human_ns(j.recorded_span_ns),
                    match j.setup_iterations {
                        0 => "every request".to_string(),
                        1 => "setup iteration left out".to_string(),
                        n => format!("{n} setup iterations left out"),
                    },
                ]
            })
            .collect(),
    };
    Section {
        heading: "Scenario".into(),
        blocks: vec![
            Block::Paragraph(
                "The jobs share one modeled GPU; priority 0 is the highest. Each job replays its \
                 trace as a closed loop (simulator/README.md describes the model)."
                    .into(),
            ),
            Block::Table(jobs),
        ],
    }
}

/// The GPU model's parameters.
fn model_section(model: &GpuModel) -> Section {
    let model_rows: Vec<(String, String)> = match serde_json::to_value(model) {
        Ok(serde_json::Value::Object(m)) => m
            .into_iter()
            .map(|(k, v)| {
                let v = match v {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                };
                (k, v)
            })
            .collect(),
        _ => vec![("name".into(), model.name.clone())],
    };
    Section {
        heading: "GPU model".into(),
        blocks: vec![
            Block::Paragraph(
                "Scheduling parameters (simulator/README.md, \u{201c}GPU model file\u{201d}); SM counts \
                 and per-SM limits come from each trace."
                    .into(),
            ),
            Block::KeyValues(model_rows),
        ],
    }
}

/// The results: per policy and job, then per policy.
fn results_section(report: &Report) -> Section {
    let per_job = Table {
        caption: Some("Per policy and job".into()),
        header: [
            "policy",
            "job",
            "prio",
            "alone",
            "shared",
            "slowdown",
            "vs timeslice",
            "iters",
            "p50",
            "p99",
            "p99.9",
        ]
        .map(String::from)
        .to_vec(),
        numeric: vec![
            false, false, true, true, true, true, true, true, true, true, true,
        ],
        rows: report
            .jobs
            .iter()
            .map(|r| {
                vec![
                    r.policy.as_str().to_string(),
                    r.job.clone(),
                    r.priority.to_string(),
                    human_ns(r.isolated_region_ns),
                    human_ns(r.region_ns),
                    super::slowdown_with_range(r),
                    format!("{:.3}x", r.vs_timeslice),
                    r.iterations.to_string(),
                    human_ns(r.p50_ns),
                    super::p99_with_range(r.p99_ns, r.p99_range),
                    human_ns(r.p999_ns),
                ]
            })
            .collect(),
    };
    let per_policy = Table {
        caption: Some("Per policy".into()),
        header: [
            "policy",
            "makespan",
            "GPU busy",
            "utilization",
            "misprediction delay",
            "idle filled",
            "engine events",
        ]
        .map(String::from)
        .to_vec(),
        numeric: vec![false, true, true, true, true, true, true],
        rows: report
            .policies
            .iter()
            .map(|r| {
                vec![
                    r.policy.as_str().to_string(),
                    human_ns(r.makespan_ns),
                    human_ns(r.busy_ns),
                    format!("{:.1}%", 100.0 * r.utilization),
                    match (r.misprediction_delay_ns, r.mispredicted_kernels) {
                        (Some(d), Some(n)) => format!("{} over {n} kernels", human_ns(d)),
                        _ => "-".to_string(),
                    },
                    super::idle_filled(r),
                    r.events.to_string(),
                ]
            })
            .collect(),
    };
    Section {
        heading: "Results".into(),
        blocks: vec![
            Block::Paragraph(
                "alone, shared: the job's region, from its first kernel launch to its end (its \
                 set-up before it left out, as fikit-run measures); slowdown = shared / alone; vs \
                 timeslice = shared under timeslice / shared under the policy (the high-priority \
                 job's speedup over default sharing; below 1 = slower). p50/p99/p99.9: iteration \
                 latency, nearest rank; [a-b]: the range over the hosts' untraced runs (the \
                 slowdown's: a shared run and a run alone each anywhere between the fastest and the \
                 slowest; a p99's: one run at either). idle filled: the share of the \
                 latency-critical job's idle GPU time (none of its kernels queued or running) in \
                 which other jobs' kernels ran."
                    .into(),
            ),
            Block::Table(per_job),
            Block::Table(per_policy),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded, "{plain:?}");
        }
        assert_eq!(base64(&[0xff, 0xfe, 0xfd]), "//79");
    }

    #[test]
    fn text_is_escaped_everywhere() {
        let evil = "<script>alert('x')</script> & \"q\"";
        let r = HtmlReport {
            title: evil.into(),
            subtitle: Some(evil.into()),
            sections: vec![Section {
                heading: evil.into(),
                blocks: vec![
                    Block::Paragraph(evil.into()),
                    Block::KeyValues(vec![(evil.into(), evil.into())]),
                    Block::Table(Table {
                        caption: Some(evil.into()),
                        header: vec![evil.into()],
                        numeric: vec![true],
                        rows: vec![vec![evil.into()]],
                    }),
                    Block::Figure(Figure {
                        caption: evil.into(),
                        image: Image::Png(vec![1, 2, 3]),
                    }),
                ],
            }],
        };
        let html = r.render();
        // The one script is the self-check.
        assert_eq!(html.matches("<script>").count(), 1, "{html}");
        assert!(!html.contains("alert('x')"));
        assert!(
            html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;")
        );
        assert!(html.contains("<td class=\"num\">"));
        assert!(html.contains("src=\"data:image/png;base64,AQID\""));
    }

    #[test]
    fn svg_figures_are_inlined_without_their_prolog() {
        let r = HtmlReport {
            title: "t".into(),
            subtitle: None,
            sections: vec![Section {
                heading: "h".into(),
                blocks: vec![Block::Figure(Figure {
                    caption: "c".into(),
                    image: Image::Svg(
                        "<?xml version=\"1.0\"?>\n<svg width=\"10\" height=\"10\"><rect/></svg>\n"
                            .into(),
                    ),
                })],
            }],
        };
        let html = r.render();
        assert!(!html.contains("<?xml"));
        assert!(html.contains(
            "<figure>\n<svg width=\"10\" height=\"10\"><rect/></svg>\n<figcaption>c</figcaption>"
        ));
        // Nothing is fetched: no external references.
        for needle in ["http://", "https://", "src=\"/", "href="] {
            let outside_svg_ns = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
            assert!(!outside_svg_ns.contains(needle), "{needle} in {html}");
        }
    }
}
