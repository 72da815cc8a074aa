//! The table rows: for each policy and job, the real runs' medians and
//! per-repetition ratios beside the prediction's, in steps: the rounds that
//! count ([`Rounds`]), one job's rounds under one policy ([`Cell`]), the
//! real figures ([`measured`]), the simulated ones ([`simulated`]) and the
//! row they make ([`row`]).

use super::{
    GateStats, Predicted, Row, Spread, against, co_run, iteration_quantile_ms, mean_ratio, ms,
    overlap,
};
use crate::exec::{JobRun, RequestLatency, Round};
use crate::scenario::RunPolicy;

/// The table rows: for each policy and job, the medians over `rounds`.
/// `sims[r]` is the prediction for `rounds[r]` (`None` without one). A
/// repetition enters the slowdown, vs-timeslice and error columns of a
/// sharing policy only where its round (and, for vs timeslice, that
/// repetition's time-slicing round) was a co-run: [`co_run`] at least
/// `min_overlap`.
pub fn rows(
    names: &[(String, u8)],
    policies: &[RunPolicy],
    rounds: &[Round],
    sims: &[Option<Vec<Predicted>>],
    min_overlap: f64,
) -> Vec<Row> {
    let all = Rounds {
        names,
        rounds,
        sims,
        min_overlap,
    };
    let mut out = Vec::new();
    for &p in policies {
        for (j, (name, prio)) in names.iter().enumerate() {
            out.push(row(&all.cell(p, j), name, *prio));
        }
    }
    out
}

/// Every round with its prediction, and which of them count.
struct Rounds<'a> {
    /// The jobs, name and priority, in scenario order.
    names: &'a [(String, u8)],
    /// The rounds.
    rounds: &'a [Round],
    /// `sims[r]`: the prediction for `rounds[r]`.
    sims: &'a [Option<Vec<Predicted>>],
    /// The least [`co_run`] of a counted round.
    min_overlap: f64,
}

impl<'a> Rounds<'a> {
    /// The round of policy `p` in repetition `rep`.
    fn find(&self, p: RunPolicy, rep: usize) -> Option<usize> {
        self.rounds
            .iter()
            .position(|r| r.policy == p && r.repetition == rep)
    }

    /// Whether round `r` counts in the ratios: a co-run, or a round with
    /// nothing to overlap.
    fn counts(&self, r: usize) -> bool {
        // Exclusive rounds run each job alone: nothing to overlap.
        self.names.len() < 2
            || self.rounds[r].policy == RunPolicy::Exclusive
            || co_run(&self.rounds[r].jobs).is_some_and(|c| c >= self.min_overlap)
    }

    /// Job `j`'s rounds under `policy`.
    fn cell(&self, policy: RunPolicy, j: usize) -> Cell<'_, 'a> {
        let mine: Vec<usize> = (0..self.rounds.len())
            .filter(|&r| self.rounds[r].policy == policy)
            .collect();
        let ok: Vec<(usize, &JobRun)> = mine
            .iter()
            .map(|&r| (r, &self.rounds[r].jobs[j]))
            .filter(|(_, x)| x.ok())
            .collect();
        let shared: Vec<(usize, &JobRun)> = ok
            .iter()
            .copied()
            .filter(|&(r, _)| self.counts(r))
            .collect();
        Cell {
            all: self,
            policy,
            j,
            runs: mine.len(),
            ok,
            shared,
        }
    }
}

/// One job under one policy: its rounds, those it finished, and those of
/// them counted.
struct Cell<'s, 'a> {
    /// Every round.
    all: &'s Rounds<'a>,
    /// The policy.
    policy: RunPolicy,
    /// The job's index in every round.
    j: usize,
    /// Its rounds under the policy.
    runs: usize,
    /// Those it finished with 0: round index and its run.
    ok: Vec<(usize, &'a JobRun)>,
    /// Of those, the rounds that count ([`Rounds::counts`]).
    shared: Vec<(usize, &'a JobRun)>,
}

impl Cell<'_, '_> {
    /// The job's run in round `r`.
    fn job(&self, r: usize) -> &JobRun {
        &self.all.rounds[r].jobs[self.j]
    }

    /// A policy that shares the GPU (not exclusive).
    fn sharing(&self) -> bool {
        self.policy != RunPolicy::Exclusive
    }

    /// Its region in round `r`, where it finished with 0.
    fn region(&self, r: usize) -> Option<i64> {
        self.job(r).ok().then(|| self.job(r).region_ns()).flatten()
    }

    /// Its region in round `a` over its region in round `b`.
    fn ratio(&self, a: usize, b: usize) -> Option<f64> {
        Some(self.region(a)? as f64 / self.region(b)? as f64)
    }

    /// Its mean launch call time in round `r`, µs, where it finished with 0.
    fn launch(&self, r: usize) -> Option<f64> {
        let x = self.job(r);
        x.ok().then(|| x.launch_call_us()).flatten()
    }

    /// Its iterations in round `r`, where it finished with 0.
    fn iterations(&self, r: usize) -> Option<&[i64]> {
        let x = self.job(r);
        x.ok().then_some(x.iterations_ns.as_slice())
    }

    /// Per counted repetition, `f(base round, this round)` where that
    /// repetition's `base` round was a co-run too.
    fn per_rep(&self, base: RunPolicy, f: &dyn Fn(usize, usize) -> Option<f64>) -> Vec<f64> {
        self.shared
            .iter()
            .filter_map(|&(r, _)| {
                let b = self
                    .all
                    .find(base, self.all.rounds[r].repetition)
                    .filter(|&b| self.all.counts(b))?;
                f(b, r)
            })
            .collect()
    }

    /// The prediction for the job in round `r`.
    fn predicted(&self, r: usize) -> Option<Predicted> {
        self.all.sims.get(r)?.as_ref()?.get(self.j).copied()
    }

    /// The predicted slowdown in round `r`, under a sharing policy only.
    fn sim_of(&self, r: usize) -> Option<f64> {
        self.predicted(r)
            .filter(|_| self.sharing())
            .map(|p| p.slowdown)
    }

    /// The span of the predictions' ranges `f` over `rounds`: the least
    /// low end and the greatest high end; `None` where none has a range.
    fn sim_span(
        &self,
        rounds: &[(usize, &JobRun)],
        f: fn(Predicted) -> Option<[f64; 2]>,
    ) -> Option<[f64; 2]> {
        rounds
            .iter()
            .filter_map(|&(r, _)| self.predicted(r).and_then(f))
            .reduce(|a, b| [a[0].min(b[0]), a[1].max(b[1])])
    }

    /// The median over its finished rounds of `f` of the prediction.
    fn sim_median(&self, f: fn(Predicted) -> f64) -> Option<f64> {
        Spread::of(
            &self
                .ok
                .iter()
                .filter_map(|&(r, _)| self.predicted(r).map(f))
                .collect::<Vec<_>>(),
        )
        .map(|s| s.median)
    }

    /// The median over its shared rounds of `f` of the prediction, under a
    /// sharing policy (`None` alone, and where no prediction has it).
    fn sim_shared_median(&self, f: fn(Predicted) -> Option<f64>) -> Option<f64> {
        Spread::of(
            &self
                .shared
                .iter()
                .filter(|_| self.sharing())
                .filter_map(|&(r, _)| self.predicted(r).and_then(f))
                .collect::<Vec<_>>(),
        )
        .map(|s| s.median)
    }

    /// The median over its finished rounds of `f` of the run (0 without).
    fn median(&self, f: &dyn Fn(&JobRun) -> f64) -> f64 {
        Spread::of(&self.ok.iter().map(|(_, x)| f(x)).collect::<Vec<_>>()).map_or(0.0, |s| s.median)
    }
}

/// The real runs' ratios, per counted repetition against the same
/// repetition's other rounds.
struct Measured {
    /// Region over the exclusive region.
    slowdowns: Vec<f64>,
    /// Their spread.
    slowdown: Option<Spread>,
    /// The time-slicing region over this one.
    vs_timeslice: Option<Spread>,
    /// Mean iteration over the exclusive one.
    per_iteration: Option<Spread>,
    /// Mean launch call time over the exclusive one.
    host_vs_alone: Option<Spread>,
}

/// The real figures of `c`.
fn measured(c: &Cell) -> Measured {
    let host_vs_alone = Spread::of(&c.per_rep(RunPolicy::Exclusive, &|b, r| {
        Some(c.launch(r)? / c.launch(b)?)
    }));
    let slowdowns = c.per_rep(RunPolicy::Exclusive, &|b, r| c.ratio(r, b));
    let slowdown = Spread::of(&slowdowns);
    let vs_timeslice = Spread::of(&c.per_rep(RunPolicy::Timeslice, &|b, r| c.ratio(b, r)));
    let per_iteration = Spread::of(&c.per_rep(RunPolicy::Exclusive, &|b, r| {
        mean_ratio(c.iterations(r)?, c.iterations(b)?)
    }));
    Measured {
        slowdowns,
        slowdown,
        vs_timeslice,
        per_iteration,
        host_vs_alone,
    }
}

/// The prediction's figures, as [`Measured`]'s. Alone, only the simulated
/// iterations say something (the profile's own speed against the real
/// run's alone): the ratios are left empty.
struct Simulated {
    /// Slowdowns, one per counted repetition predicted.
    slowdowns: Vec<f64>,
    /// Their spread.
    slowdown: Option<Spread>,
    /// The time-slicing round's predicted slowdown over this one's.
    vs_timeslice: Option<Spread>,
    /// Mean iteration over the mean iteration alone.
    per_iteration: Option<Spread>,
}

/// The simulated ratios of `c`.
fn simulated(c: &Cell) -> Simulated {
    let slowdowns: Vec<f64> = c.shared.iter().filter_map(|&(r, _)| c.sim_of(r)).collect();
    let slowdown = Spread::of(&slowdowns);
    // As vs timeslice: the prediction of the repetition's
    // time-slicing round against the prediction of this one.
    let vs_timeslice = Spread::of(&c.per_rep(RunPolicy::Timeslice, &|b, r| {
        Some(c.sim_of(b)? / c.sim_of(r)?)
    }));
    let per_iteration = Spread::of(
        &c.shared
            .iter()
            .filter_map(|&(r, _)| {
                c.predicted(r)
                    .filter(|_| c.sharing())
                    .map(|p| p.per_iteration)
            })
            .collect::<Vec<_>>(),
    );
    Simulated {
        slowdowns,
        slowdown,
        vs_timeslice,
        per_iteration,
    }
}

/// The row of `c`, the job `name` of priority `priority`.
fn row(c: &Cell, name: &str, priority: u8) -> Row {
    let several = c.all.names.len() > 1;
    // The latency-critical job: best priority, then first (as the fill
    // counts it).
    let urgent = c
        .all
        .names
        .iter()
        .enumerate()
        .min_by_key(|&(k, (_, p))| (*p, k))
        .is_some_and(|(k, _)| k == c.j);
    let real = measured(c);
    let sim = simulated(c);
    let (error, within) = against(sim.slowdown, real.slowdown);
    let (per_iteration_error, per_iteration_within) =
        against(sim.per_iteration, real.per_iteration);
    let overlap = (c.sharing() && several)
        .then(|| {
            c.ok.iter()
                .filter_map(|&(r, _)| overlap(&c.all.rounds[r].jobs, c.j))
                .min_by(f64::total_cmp)
        })
        .flatten();
    // A serving job's latency is its requests', as its output gave them
    // (the median over its runs); else its iterations' as the gate saw them.
    let served: Vec<RequestLatency> = c.ok.iter().filter_map(|(_, x)| x.requests).collect();
    let pct = |q: f64, of_requests: fn(&RequestLatency) -> f64| {
        if served.is_empty() {
            iteration_quantile_ms(c.ok.iter().map(|&(_, x)| x), q)
        } else {
            Spread::of(&served.iter().map(of_requests).collect::<Vec<_>>()).map(|s| s.median)
        }
    };
    let sim_slowdown_range = c
        .sim_span(&c.shared, |p| p.slowdown_range)
        .filter(|_| c.sharing());
    let sim_p99_range_ms = c.sim_span(&c.ok, |p| p.p99_range_ms);
    let inside = |range: Option<[f64; 2]>, real: Option<f64>| {
        Some((range?, real?)).map(|(r, v)| r[0] <= v && v <= r[1])
    };
    let p99_ms = pct(0.99, |r| r.p99_ms);
    Row {
        policy: c.policy,
        job: name.to_string(),
        priority,
        ok_runs: c.ok.len(),
        runs: c.runs,
        region_ms: Spread::of(
            &c.ok
                .iter()
                .filter_map(|(_, x)| x.region_ns().map(ms))
                .collect::<Vec<_>>(),
        ),
        slowdown: real.slowdown,
        slowdowns: if c.sharing() {
            real.slowdowns
        } else {
            Vec::new()
        },
        vs_timeslice: real.vs_timeslice,
        sim_vs_timeslice: sim.vs_timeslice,
        p50_ms: pct(0.5, |r| r.p50_ms),
        p99_ms,
        p999_ms: pct(0.999, |r| r.p999_ms),
        sim_region_ms: c.sim_median(|p| p.region_ms),
        sim_p50_ms: c.sim_median(|p| p.p50_ms),
        sim_p99_ms: c.sim_median(|p| p.p99_ms),
        sim_p999_ms: c.sim_median(|p| p.p999_ms),
        sim_slowdown_range,
        sim_p99_range_ms,
        in_sim_range: inside(sim_slowdown_range, real.slowdown.map(|s| s.median)),
        p99_in_sim_range: inside(sim_p99_range_ms, p99_ms),
        busy_share: Spread::of(
            &served
                .iter()
                .filter_map(|r| r.busy_share)
                .collect::<Vec<_>>(),
        )
        .map(|s| s.median),
        fill_share: Spread::of(
            &c.shared
                .iter()
                .filter_map(|(_, x)| x.fill.and_then(|f| f.share()))
                .collect::<Vec<_>>(),
        )
        .map(|s| s.median),
        sim_fill_share: c.sim_shared_median(|p| p.fill_share).filter(|_| urgent),
        // The simulator's gate beside the live gate's, read as the live
        // gate's are: medians over the counted repetitions' predictions.
        sim_held_waits: c.sim_shared_median(|p| p.launches_held.map(|h| h.launches as f64)),
        sim_held_wait_ms: c.sim_shared_median(|p| p.launches_held.map(|h| h.ns as f64 / 1e6)),
        sim_fills: c.sim_shared_median(|p| p.fills.map(|n| n as f64)),
        overlap,
        co_runs: (c.sharing() && several).then_some(c.shared.len()),
        per_iteration: real.per_iteration,
        sim_per_iteration: sim.per_iteration,
        per_iteration_error,
        per_iteration_within,
        sim_slowdown: sim.slowdown,
        sim_slowdowns: sim.slowdowns,
        error,
        within_spread: within,
        gate: gate_stats(c),
        launch_us: Spread::of(
            &c.ok
                .iter()
                .filter_map(|(_, x)| x.launch_call_us())
                .collect::<Vec<_>>(),
        ),
        host_vs_alone: real.host_vs_alone,
    }
}

/// The gate's counters of `c`, medians over its finished rounds.
fn gate_stats(c: &Cell) -> GateStats {
    GateStats {
        launches: c.median(&|x| x.launches as f64),
        waits: c.median(&|x| x.waits as f64),
        wait_ms: c.median(&|x| x.wait_ns as f64 / 1e6),
        fills: c.median(&|x| x.fills as f64),
        timeouts: c.median(&|x| x.timeouts as f64),
        unknown: c.median(&|x| x.unknown as f64),
    }
}
