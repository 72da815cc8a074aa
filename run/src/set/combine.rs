//! Several summaries set together (`fikit-lab combine`): one set's rounds
//! on several machines, row by row or each job pooled.

use super::*;

/// Several sets' summaries read together (`fikit-lab combine`): e.g. one
/// set's rounds on several machines, each machine's `fikit-run set` folder
/// with its own `summary.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct Combined {
    /// Each summary file and its rows with an error (complete pairs only).
    pub sources: Vec<(PathBuf, usize)>,
    /// Whether each job's rows were pooled ([`Combine::Pool`]).
    pub pooled: bool,
    /// Per policy (but exclusive) and sample over every source's rows,
    /// each with its row of the worst |error|.
    pub fits: Vec<(Fit, WorstRow)>,
    /// Every row with an error, in the order each first appears: one per
    /// summary, or pooled one per job.
    pub rows: Vec<CombinedRow>,
}

/// One row of [`Combined`]: a job's real and simulated slowdown under one
/// policy, from one summary or pooled over several.
#[derive(Debug, Clone, PartialEq)]
pub struct CombinedRow {
    /// The summaries it comes from, as indices into [`Combined::sources`].
    pub from: Vec<usize>,
    /// Its pair.
    pub pair: String,
    /// Its sample.
    pub sample: Sample,
    /// Its policy.
    pub policy: RunPolicy,
    /// Its job.
    pub job: String,
    /// The co-runs it counts.
    pub co_runs: usize,
    /// The real slowdown: median and range over those co-runs.
    pub real: Spread,
    /// The simulated slowdown (the median of the predictions).
    pub simulated: f64,
    /// `(simulated - real) / real` of the medians.
    pub error: f64,
    /// Whether the simulated figure is inside the real range, as the
    /// summary's row (or the pooling) says.
    pub within: bool,
    /// Whether the real median is inside fikit-sim's range, likewise
    /// (`None` without a range).
    pub in_sim_range: Option<bool>,
}

/// How [`combine`] sets several summaries' rows together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// Each summary's rows as they are: one error per machine and job.
    Rows,
    /// Each job (pair, sample, policy and job) once: its real slowdown the
    /// median over every summary's counted repetitions, its simulated one
    /// the median over their predictions, and its error between the two;
    /// its range the least and greatest repetition. The real figure of a
    /// job is then the median of all its repetitions on every machine.
    Pool,
}

/// The row of a [`Fit`]'s worst |error| among several summaries.
#[derive(Debug, Clone, PartialEq)]
pub struct WorstRow {
    /// The summary file it is in; `None` for a row pooled over them.
    pub source: Option<PathBuf>,
    /// Its pair.
    pub pair: String,
    /// Its job.
    pub job: String,
    /// Its signed error, `(simulated - real) / real`.
    pub error: f64,
}

/// Reads each `summary.json` (what `--set` writes) and sets the errors of
/// all their rows together, per policy and sample, leaving out each file's
/// incomplete pairs as its own summary does; `how` pools each job's
/// repetitions or keeps each file's rows. Bad input: a file that cannot be
/// read or is not such a summary, and, to pool, a row with an error but
/// without its repetitions' figures (a summary from before they were kept).
pub fn combine(files: &[PathBuf], how: Combine) -> Result<Combined, String> {
    #[derive(Deserialize)]
    struct Saved {
        rows: Vec<SummaryRow>,
        #[serde(default)]
        incomplete: Vec<String>,
    }
    let mut rows: Vec<(usize, SummaryRow)> = Vec::new();
    let mut sources = Vec::new();
    for (k, f) in files.iter().enumerate() {
        let text = std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
        let saved: Saved = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a fikit-run set summary.json: {e}", f.display()))?;
        let mut kept: Vec<SummaryRow> = saved
            .rows
            .into_iter()
            .filter(|r| !saved.incomplete.contains(&r.pair))
            .collect();
        let with_error = kept
            .iter()
            .filter(|r| r.row.error.is_some_and(f64::is_finite))
            .count();
        if how == Combine::Pool {
            if let Some(r) = fill_repetitions(&mut kept) {
                return Err(format!(
                    "{}: {} in {} ({}) has no per-repetition slowdowns to pool; rebuild the summary with --set SET --resimulate -o FOLDER",
                    f.display(),
                    r.row.job,
                    r.pair,
                    r.row.policy.name()
                ));
            }
        }
        sources.push((f.clone(), with_error));
        rows.extend(kept.into_iter().map(|r| (k, r)));
    }
    let rows: Vec<(Vec<usize>, SummaryRow)> = match how {
        Combine::Rows => rows.into_iter().map(|(k, r)| (vec![k], r)).collect(),
        Combine::Pool => pool(rows),
    };
    // Every shared-policy row with an error; the errors per policy and
    // sample and each one's worst row are read from these.
    let rows: Vec<CombinedRow> = rows
        .into_iter()
        .filter(|(_, r)| r.row.policy != RunPolicy::Exclusive)
        .filter_map(|(from, r)| {
            let error = r.row.error.filter(|e| e.is_finite())?;
            Some(CombinedRow {
                co_runs: r.row.co_runs.unwrap_or(0),
                real: r.row.slowdown?,
                simulated: r.row.sim_slowdown?.median,
                error,
                within: r.row.within_spread.unwrap_or(false),
                in_sim_range: r.row.in_sim_range,
                from,
                pair: r.pair,
                sample: r.sample,
                policy: r.row.policy,
                job: r.row.job,
            })
        })
        .collect();
    let mut fits = Vec::new();
    for policy in RunPolicy::ALL
        .into_iter()
        .filter(|&p| p != RunPolicy::Exclusive)
    {
        for sample in [Sample::In, Sample::Out] {
            let of: Vec<&CombinedRow> = rows
                .iter()
                .filter(|r| r.sample == sample && r.policy == policy)
                .collect();
            let Some(fit) = fit_of(
                policy,
                sample,
                of.iter().map(|r| (Some(r.error), Some(r.within))),
            ) else {
                continue;
            };
            let fit = with_ranges(fit, of.iter().map(|r| r.in_sim_range));
            let Some(w) = of
                .iter()
                .max_by(|a, b| a.error.abs().total_cmp(&b.error.abs()))
            else {
                continue;
            };
            fits.push((
                fit,
                WorstRow {
                    source: match w.from.as_slice() {
                        [k] => Some(files[*k].clone()),
                        _ => None,
                    },
                    pair: w.pair.clone(),
                    job: w.job.clone(),
                    error: w.error,
                },
            ));
        }
    }
    Ok(Combined {
        sources,
        pooled: how == Combine::Pool,
        fits,
        rows,
    })
}

/// For [`Combine::Pool`]: gives each of one summary's rows without
/// [`Row::slowdowns`] its figures from its spreads ([`from_spread`]) where
/// the job's runs alone of the same pair all exited 0; returns the first
/// row with an error still without them, which cannot be pooled.
pub(super) fn fill_repetitions(rows: &mut [SummaryRow]) -> Option<&SummaryRow> {
    for i in 0..rows.len() {
        let r = &rows[i];
        if !r.row.slowdowns.is_empty() {
            continue;
        }
        let n = r.row.co_runs.unwrap_or(0);
        let alone_ok = rows.iter().any(|o| {
            o.pair == r.pair
                && o.row.job == r.row.job
                && o.row.policy == RunPolicy::Exclusive
                && o.row.ok_runs == o.row.runs
                && o.row.runs >= n
        });
        if let Some((real, sim)) = from_spread(&r.row).filter(|_| alone_ok) {
            rows[i].row.slowdowns = real;
            rows[i].row.sim_slowdowns = sim;
        }
    }
    rows.iter().find(|r| {
        r.row.error.is_some_and(f64::is_finite)
            && (r.row.slowdowns.is_empty() || r.row.sim_slowdowns.is_empty())
    })
}

/// A row's per-repetition slowdowns, real and simulated, read back from
/// its spreads where they hold them all: at most three repetitions, every
/// one a co-run that exited 0 (the least, median and greatest of three
/// figures are the figures; of two, the least and greatest). For summaries
/// from before [`Row::slowdowns`] was kept; exact when the job's runs
/// alone of the same pair exited 0 too, which the caller checks. `None`
/// otherwise.
pub(super) fn from_spread(row: &Row) -> Option<(Vec<f64>, Vec<f64>)> {
    let n = row.co_runs?;
    if !(1..=3).contains(&n) || row.runs != n || row.ok_runs != n {
        return None;
    }
    let figures = |s: Spread| match n {
        1 => vec![s.median],
        2 => vec![s.min, s.max],
        _ => vec![s.min, s.median, s.max],
    };
    Some((figures(row.slowdown?), figures(row.sim_slowdown?)))
}

/// [`Combine::Pool`]: one row per pair, sample, policy and job, in the
/// order each first appears, its repetitions those of every summary's row
/// of it, with the summaries it comes from (rows without an error pass
/// through as they are, one per summary).
pub(super) fn pool(rows: Vec<(usize, SummaryRow)>) -> Vec<(Vec<usize>, SummaryRow)> {
    let mut out: Vec<(Vec<usize>, SummaryRow)> = Vec::new();
    for (k, r) in rows {
        if !r.row.error.is_some_and(f64::is_finite) {
            out.push((vec![k], r));
            continue;
        }
        let same = |o: &SummaryRow| {
            o.pair == r.pair
                && o.sample == r.sample
                && o.row.policy == r.row.policy
                && o.row.job == r.row.job
                && o.row.error.is_some()
        };
        match out.iter_mut().find(|(_, o)| same(o)) {
            Some((from, o)) => {
                from.push(k);
                o.row.slowdowns.extend(&r.row.slowdowns);
                o.row.sim_slowdowns.extend(&r.row.sim_slowdowns);
                o.row.co_runs = Some(o.row.co_runs.unwrap_or(0) + r.row.co_runs.unwrap_or(0));
                // fikit-sim's ranges joined: the least and greatest end.
                o.row.sim_slowdown_range =
                    match (o.row.sim_slowdown_range, r.row.sim_slowdown_range) {
                        (Some(a), Some(b)) => Some([a[0].min(b[0]), a[1].max(b[1])]),
                        _ => None,
                    };
            }
            None => out.push((vec![k], r)),
        }
    }
    for (_, o) in &mut out {
        let (Some(real), Some(sim)) = (
            Spread::of(&o.row.slowdowns),
            Spread::of(&o.row.sim_slowdowns),
        ) else {
            continue;
        };
        o.row.slowdown = Some(real);
        o.row.sim_slowdown = Some(sim);
        (o.row.error, o.row.within_spread) = against(Some(sim), Some(real));
        o.row.in_sim_range = o
            .row
            .sim_slowdown_range
            .map(|[lo, hi]| lo <= real.median && real.median <= hi);
    }
    out
}

/// [`Combined`] as text: the sources (numbered), the errors per policy and
/// sample, each one's worst row, then every row with the summaries it
/// comes from.
pub fn combined_text(c: &Combined) -> String {
    let mut out = String::from(if c.pooled {
        "simulated against real slowdown over the summaries, each job's repetitions pooled (its figure the median over all of them)\n"
    } else {
        "simulated against real slowdown over the summaries\n"
    });
    for (k, (f, n)) in c.sources.iter().enumerate() {
        out.push_str(&format!(
            "  [{}] {} ({n} rows with an error)\n",
            k + 1,
            f.display()
        ));
    }
    out.push_str(&format!("{}\n", fits_table(c.fits.iter().map(|(f, _)| f))));
    for (fit, w) in &c.fits {
        out.push_str(&format!(
            "worst {} {}: {} in {}, {}{:.1}% ({})\n",
            fit.policy.name(),
            fit.sample.name(),
            w.job,
            w.pair,
            if w.error >= 0.0 { "+" } else { "" },
            100.0 * w.error,
            w.source
                .as_ref()
                .map_or("pooled".to_string(), |f| f.display().to_string())
        ));
    }
    let mut t = table_with([
        "pair",
        "sample",
        "policy",
        "job",
        "from",
        "co-runs",
        "real slowdown",
        "simulated",
        "error",
    ]);
    for r in &c.rows {
        let from: Vec<String> = r.from.iter().map(|k| (k + 1).to_string()).collect();
        t.add_row([
            r.pair.clone(),
            r.sample.name().to_string(),
            r.policy.name().to_string(),
            r.job.clone(),
            format!("[{}]", from.join(", ")),
            r.co_runs.to_string(),
            format!(
                "{:.2}x [{:.2}-{:.2}]",
                r.real.median, r.real.min, r.real.max
            ),
            format!("{:.2}x", r.simulated),
            signed_pct(Some(r.error), Some(r.within)),
        ]);
    }
    out.push_str(&format!("{t}\n"));
    out
}
