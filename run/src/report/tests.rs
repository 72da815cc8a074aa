use super::predict::{as_gated, as_gated_measured};
use super::*;
use crate::exec::Round;
use fikit_sim_core::policy::PolicyKind;
use fikit_sim_core::sim::gpu::GpuModel;
use fikit_sim_core::sim::job::Job;
use fikit_sim_core::sim::simulate::{LaunchesHeld, run_isolated};

fn run(job: &str, first: i64, end: i64) -> JobRun {
    JobRun {
        job: job.into(),
        exit_code: Some(0),
        first_launch_ns: Some(first),
        end_ns: Some(end),
        iterations_ns: vec![1_000_000, 2_000_000, 3_000_000],
        ..JobRun::default()
    }
}

#[test]
fn spread_is_median_and_range() {
    let s = Spread::of(&[3.0, 1.0, 2.0]).unwrap();
    assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
    assert_eq!(Spread::of(&[1.0, 2.0]).unwrap().median, 1.5);
    assert!(Spread::of(&[]).is_none());
}

#[test]
fn overlap_is_the_covered_share() {
    // a: 0-100; b: 50-80 and c: 70-120 cover 50-100 of it.
    let jobs = vec![run("a", 0, 100), run("b", 50, 80), run("c", 70, 120)];
    assert_eq!(overlap(&jobs, 0), Some(0.5));
    // b is inside a: wholly covered.
    assert_eq!(overlap(&jobs, 1), Some(1.0));
    // Two jobs one after the other: no co-run at all.
    let apart = vec![run("a", 0, 100), run("b", 100, 200)];
    assert_eq!(overlap(&apart, 1), Some(0.0));
}

/// The two jobs of the row tests: "hi" (priority 0) and "lo" (9).
/// A round's prediction: these slowdowns, and iterations of 1 ms median
/// and 2 ms p99 scaled by them.
fn sim(slowdowns: &[f64]) -> Option<Vec<Predicted>> {
    Some(
        slowdowns
            .iter()
            .map(|&s| Predicted {
                slowdown: s,
                p50_ms: s,
                p99_ms: 2.0 * s,
                p999_ms: 3.0 * s,
                per_iteration: s + 0.5,
                region_ms: 100.0 * s,
                alone_region_ms: 100.0,
                slowdown_range: Some([s - 0.1, s + 0.1]),
                p99_range_ms: Some([2.0 * s - 0.5, 2.0 * s + 0.5]),
                fill_share: Some(s / 10.0),
                launches_held: Some(LaunchesHeld {
                    launches: (100.0 * s).round() as u64,
                    ns: (1e6 * s).round() as i64,
                }),
                fills: Some((10.0 * s).round() as u64),
            })
            .collect(),
    )
}

fn hi_lo() -> Vec<(String, u8)> {
    vec![("hi".to_string(), 0u8), ("lo".to_string(), 9u8)]
}

/// A round of "hi" and "lo" with their regions.
fn mk(p: RunPolicy, rep: usize, hi: (i64, i64), lo: (i64, i64)) -> Round {
    Round {
        policy: p,
        repetition: rep,
        jobs: vec![run("hi", hi.0, hi.1), run("lo", lo.0, lo.1)],
        gate_nap_us: 0,
    }
}

#[test]
fn rows_take_per_repetition_ratios() {
    let names = hi_lo();
    let rounds = vec![
        mk(RunPolicy::Exclusive, 0, (0, 100), (0, 1000)),
        mk(RunPolicy::Timeslice, 0, (0, 200), (0, 1100)),
        mk(RunPolicy::Fikit, 0, (0, 110), (0, 1300)),
        mk(RunPolicy::Exclusive, 1, (0, 50), (0, 1000)),
        mk(RunPolicy::Timeslice, 1, (0, 150), (0, 1100)),
        mk(RunPolicy::Fikit, 1, (0, 60), (0, 1200)),
    ];
    // Traced fikit rounds: hi's idle GPU time 30% and 50% filled.
    let mut rounds = rounds;
    for (r, filled) in [(2, 30), (5, 50)] {
        rounds[r].jobs[0].fill = Some(crate::fill::LiveFill {
            idle_ns: 100,
            filled_ns: filled,
        });
    }
    let sims = vec![
        sim(&[1.0, 0.9]),
        sim(&[1.8, 1.05]),
        sim(&[1.2, 1.1]),
        sim(&[1.0, 0.7]),
        sim(&[2.4, 1.04]),
        sim(&[1.0, 1.3]),
    ];
    let policies = [RunPolicy::Exclusive, RunPolicy::Timeslice, RunPolicy::Fikit];
    let r = rows(&names, &policies, &rounds, &sims, 0.9);
    let hi_fikit = r
        .iter()
        .find(|x| x.policy == RunPolicy::Fikit && x.job == "hi")
        .unwrap();
    // Slowdowns 110/100 = 1.1 and 60/50 = 1.2 (per repetition, not of medians).
    let s = hi_fikit.slowdown.unwrap();
    assert!((s.median - 1.15).abs() < 1e-9 && s.min == 1.1 && (s.max - 1.2).abs() < 1e-9);
    // vs timeslice 200/110 and 150/60.
    let v = hi_fikit.vs_timeslice.unwrap();
    assert!((v.median - (200.0 / 110.0 + 2.5) / 2.0).abs() < 1e-9);
    // Simulated 1.2 and 1.0: median 1.1; error (1.1 - 1.15) / 1.15.
    assert!((hi_fikit.error.unwrap() - (1.1 - 1.15) / 1.15).abs() < 1e-9);
    assert_eq!(hi_fikit.within_spread, Some(true));
    // Simulated vs timeslice, per repetition: 1.8 / 1.2 and 2.4 / 1.0.
    let sv = hi_fikit.sim_vs_timeslice.unwrap();
    assert!((sv.median - 1.95).abs() < 1e-9 && (sv.min - 1.5).abs() < 1e-9);
    let lo_fikit = r
        .iter()
        .find(|x| x.policy == RunPolicy::Fikit && x.job == "lo")
        .unwrap();
    let lv = lo_fikit.sim_vs_timeslice.unwrap();
    assert!((lv.median - (1.05 / 1.1 + 1.04 / 1.3) / 2.0).abs() < 1e-9);
    assert_eq!(hi_fikit.p50_ms, Some(2.0));
    // Simulated iterations, median over the repetitions: p50 1.2 and 1.0 ms.
    assert_eq!(hi_fikit.sim_p50_ms, Some(1.1));
    assert_eq!(hi_fikit.sim_p99_ms, Some(2.2));
    // Real iterations are the same in every round (1, 2, 3 ms): per
    // iteration 1.0x; simulated 1.7 and 1.5: median 1.6, error +60%.
    let pi = hi_fikit.per_iteration.unwrap();
    assert_eq!((pi.median, pi.min, pi.max), (1.0, 1.0, 1.0));
    assert!((hi_fikit.sim_per_iteration.unwrap().median - 1.6).abs() < 1e-9);
    assert!((hi_fikit.per_iteration_error.unwrap() - 0.6).abs() < 1e-9);
    assert_eq!(hi_fikit.per_iteration_within, Some(false));
    assert_eq!(hi_fikit.overlap, Some(1.0));
    assert_eq!(hi_fikit.co_runs, Some(2));
    let excl = r
        .iter()
        .find(|x| x.policy == RunPolicy::Exclusive && x.job == "lo")
        .unwrap();
    assert_eq!(excl.slowdown.unwrap().median, 1.0);
    assert_eq!(excl.overlap, None);
    // Alone, the simulated iterations (0.9 and 0.7 ms) but no simulated slowdown.
    assert_eq!(excl.sim_p50_ms, Some(0.8));
    assert_eq!(
        (excl.sim_slowdown, excl.error, excl.sim_per_iteration),
        (None, None, None)
    );
    assert_eq!(hi_fikit.launch_us, None, "no launch call timed");
    // fikit-sim's ranges: 1.2 [1.1-1.3] and 1.0 [0.9-1.1] span 0.9-1.3,
    // which holds the real 1.15; p99 2.4 [1.9-2.9] and 2.0 [1.5-2.5] span
    // 1.5-2.9, which misses the real 3 ms.
    let [lo, hi] = hi_fikit.sim_slowdown_range.unwrap();
    assert!((lo - 0.9).abs() < 1e-9 && (hi - 1.3).abs() < 1e-9);
    assert_eq!(hi_fikit.in_sim_range, Some(true));
    let [lo, hi] = hi_fikit.sim_p99_range_ms.unwrap();
    assert!((lo - 1.5).abs() < 1e-9 && (hi - 2.9).abs() < 1e-9);
    assert_eq!(hi_fikit.p99_ms, Some(3.0));
    assert_eq!(hi_fikit.p99_in_sim_range, Some(false));
    // Fill, real from the traces (30%, 50%) and simulated (the rounds'
    // predictions 0.12 and 0.10), for the latency-critical job only.
    assert!((hi_fikit.fill_share.unwrap() - 0.4).abs() < 1e-9);
    assert!((hi_fikit.sim_fill_share.unwrap() - 0.11).abs() < 1e-9);
    assert_eq!((lo_fikit.fill_share, lo_fikit.sim_fill_share), (None, None));
    // The simulator's held launches, median over the rounds' predictions
    // (120 and 100 launches, 1.2 and 1.0 ms), beside the live gate's; none
    // alone.
    assert_eq!(hi_fikit.sim_held_waits, Some(110.0));
    assert!((hi_fikit.sim_held_wait_ms.unwrap() - 1.1).abs() < 1e-9);
    assert_eq!((excl.sim_held_waits, excl.sim_held_wait_ms), (None, None));
    // And its fills (12 and 10 in the two rounds' predictions); none alone.
    assert_eq!(hi_fikit.sim_fills, Some(11.0));
    assert_eq!(excl.sim_fills, None);
    // Alone no slowdown range, but the p99's: 1.8 [1.3-2.3], 1.4 [0.9-1.9].
    assert_eq!((excl.sim_slowdown_range, excl.in_sim_range), (None, None));
    let [lo, hi] = excl.sim_p99_range_ms.unwrap();
    assert!((lo - 0.9).abs() < 1e-9 && (hi - 2.3).abs() < 1e-9);
    let text = table(&r);
    assert!(text.contains("1.15x [1.10-1.20]"), "{text}");
    assert!(
        text.contains("1.10x [0.90-1.30]"),
        "simulated with its range: {text}"
    );
    assert!(
        text.contains("40% (11%)"),
        "fill, real and simulated: {text}"
    );
    assert!(
        text.contains("2.00 (1.10)"),
        "real p50 beside simulated: {text}"
    );
}

/// A clock standing at one time.
struct At(i64);

impl fikit_gate::Clock for At {
    fn now(&mut self) -> i64 {
        self.0
    }
    fn pause(&mut self, _: i64) {
        panic!("the gate waited")
    }
}

/// A program alone as a trace and as the gate sees it: `kernels` as
/// (launch call, start, end), every wait a stream synchronization
/// (start, end). Returns the job and the iterations the gate measures.
fn traced_and_gated(kernels: &[(i64, i64, i64)], syncs: &[(i64, i64)]) -> (Job, Vec<i64>) {
    use fikit_trace::fixture as fx;
    use std::sync::atomic::Ordering::SeqCst;
    let mut t = fx::empty("job", 0);
    for (i, &(launch, start, end)) in kernels.iter().enumerate() {
        let id = i as u32 + 1;
        t.kernels.push(fx::kernel(
            &format!("k{i}"),
            1,
            id,
            Some(launch),
            start,
            end,
        ));
    }
    for (i, &(start, end)) in syncs.iter().enumerate() {
        t.syncs.push(fx::stream_sync(1, 100 + i as u32, start, end));
    }
    let dir = tempfile::tempdir().unwrap();
    let b =
        fikit_gate::Block::create(&dir.path().join("c"), 1, fikit_gate::GatePolicy::Open).unwrap();
    let g = fikit_gate::Gate::new(&b, 0, fikit_gate::Table::default());
    let mut events: Vec<(i64, bool)> = kernels.iter().map(|k| (k.0, true)).collect();
    events.extend(syncs.iter().map(|s| (s.1, false)));
    events.sort_unstable();
    // Launches at their calls' entry, stamps as waits return (on the
    // monotonic clock, which is never 0).
    for (at, launch) in events.into_iter().map(|(t, l)| (t + 1_000_000, l)) {
        if launch {
            g.before_launch(None, &mut At(at));
        } else {
            g.synced(at);
        }
    }
    let slot = b.slot(0);
    let n = slot.syncs.load(SeqCst) as usize;
    let stamps: Vec<i64> = b.stamps(0)[..n].iter().map(|w| w.load(SeqCst)).collect();
    let real = fikit_gate::block::iterations(slot.first_launch_ns.load(SeqCst), &stamps);
    (Job::from_trace(&t), real)
}

#[test]
fn simulated_iterations_count_as_the_gates() {
    // Two weights copied and waited for (no kernel since: no iteration
    // ends), a warm-up step and three steps; launch calls take 2 µs.
    let steps = [
        (40_000, 42_500, 50_000),
        (60_000, 62_500, 65_000),
        (70_000, 72_500, 76_000),
        (80_000, 82_500, 84_000),
    ];
    let syncs = [
        (10_000, 10_100),
        (20_000, 20_100),
        (30_000, 30_100),
        (43_000, 50_100),
        (63_000, 65_100),
        (73_000, 76_100),
        (83_000, 84_100),
    ];
    let model = GpuModel::default();
    // A PyTorch program makes its input on the GPU first: the gate's
    // stamps begin at the first weight's wait.
    let input_first: Vec<_> = std::iter::once((0, 2_500, 3_000)).chain(steps).collect();
    let (job, real) = traced_and_gated(&input_first, &syncs);
    assert_eq!(real, [15_000, 11_000, 8_000]);
    assert_eq!(job.setup_iterations, 2);
    // The simulator's iterations, from the job's start: the first ends
    // at the first weight's wait, the second holds the upload and the
    // warm-up.
    let alone = run_isolated(std::slice::from_ref(&job), &model).unwrap();
    let raw = &alone[0].jobs[0].iterations_ns;
    assert_eq!(raw, &[10_100, 40_000, 15_000, 11_000, 8_000]);
    assert_eq!(as_gated(raw), real.as_slice());
    let measured = fikit_sim_core::sim::simulate::measured_iterations(&job, raw);
    assert_eq!(as_gated_measured(&job, &measured), real.as_slice());
    let p = predict(
        std::slice::from_ref(&job),
        &[0],
        PolicyKind::Exclusive,
        &model,
    )
    .unwrap();
    assert_eq!(p[0].p50_ms, 0.011);
    // Weights first: the first launch is the warm-up's, whose wait the
    // gate stamps first, and it leaves the warm-up out.
    let (job, real) = traced_and_gated(&steps, &syncs);
    assert_eq!(real, [11_000, 8_000]);
    assert_eq!(job.setup_iterations, 1);
    let alone = run_isolated(std::slice::from_ref(&job), &model).unwrap();
    let raw = &alone[0].jobs[0].iterations_ns;
    assert_eq!(as_gated(raw), real.as_slice());
    let measured = fikit_sim_core::sim::simulate::measured_iterations(&job, raw);
    assert_eq!(as_gated_measured(&job, &measured), real.as_slice());
}

#[test]
fn a_profile_off_its_runs_alone_is_called_off() {
    let names = hi_lo();
    // Alone, hi took 100, 110 and 120 ms, lo 1,000 ms each time.
    let rounds: Vec<Round> = [100, 110, 120]
        .iter()
        .enumerate()
        .map(|(rep, &hi)| {
            mk(
                RunPolicy::Exclusive,
                rep,
                (0, hi * 1_000_000),
                (0, 1_000_000_000),
            )
        })
        .collect();
    let alone = |hi: f64, lo: f64| {
        let p = |region_ms| Predicted {
            slowdown: 1.0,
            p50_ms: 1.0,
            p99_ms: 1.0,
            p999_ms: 1.0,
            per_iteration: 1.0,
            region_ms,
            alone_region_ms: region_ms,
            slowdown_range: None,
            p99_range_ms: None,
            fill_share: None,
            launches_held: None,
            fills: None,
        };
        Some(vec![p(hi), p(lo)])
    };
    let check = |hi: f64, lo: f64| {
        let sims = vec![alone(hi, lo); 3];
        let r = rows(&names, &[RunPolicy::Exclusive], &rounds, &sims, 0.9);
        assert_eq!(r[0].sim_region_ms, Some(hi));
        (
            r[0].profile_vs_alone().unwrap(),
            r[1].profile_vs_alone().unwrap(),
            table(&r),
        )
    };
    // hi's profile 115 ms: 115 / 110, inside 100-120. lo's 1,030 ms:
    // outside its runs' range, but within 5% of them.
    let ((h, h_off), (l, l_off), t) = check(115.0, 1030.0);
    assert!((h - 115.0 / 110.0).abs() < 1e-12 && !h_off);
    assert!((l - 1.03).abs() < 1e-12 && !l_off);
    assert!(t.contains("110.00 [100.00-120.00] (115.00)"), "{t}");
    // hi's 130 ms: outside the range and 18% over the median; lo's 940
    // ms: 6% under.
    let ((h, h_off), (l, l_off), _) = check(130.0, 940.0);
    assert!((h - 130.0 / 110.0).abs() < 1e-12 && h_off);
    assert!((l - 0.94).abs() < 1e-12 && l_off);
    // Only exclusive rows say it.
    let shared = vec![mk(RunPolicy::Timeslice, 0, (0, 200), (0, 1100))];
    let r = rows(
        &names,
        &[RunPolicy::Timeslice],
        &shared,
        &[sim(&[2.0, 1.1])],
        0.9,
    );
    assert_eq!(r[0].sim_region_ms, Some(200.0));
    assert_eq!(r[0].profile_vs_alone(), None);
}

#[test]
fn mean_ratio_of_iterations() {
    assert_eq!(mean_ratio(&[6, 6, 9], &[3, 4, 5]), Some(1.75));
    assert_eq!(mean_ratio(&[], &[3]), None);
    assert_eq!(mean_ratio(&[3], &[]), None);
    assert_eq!(mean_ratio(&[3], &[0]), None);
}

#[test]
fn launch_call_time_per_repetition() {
    let names = hi_lo();
    let mut rounds = vec![
        mk(RunPolicy::Timeslice, 0, (0, 200), (0, 1100)),
        mk(RunPolicy::Timeslice, 1, (0, 150), (0, 1100)),
    ];
    // hi: 3,000 calls of 6 µs, then 2,000 of 8.5 µs.
    (
        rounds[0].jobs[0].launch_call_ns,
        rounds[0].jobs[0].launch_calls,
    ) = (18_000_000, 3_000);
    (
        rounds[1].jobs[0].launch_call_ns,
        rounds[1].jobs[0].launch_calls,
    ) = (17_000_000, 2_000);
    let r = rows(&names, &[RunPolicy::Timeslice], &rounds, &[None, None], 0.9);
    let l = r[0].launch_us.unwrap();
    assert_eq!((l.min, l.max), (6.0, 8.5));
    assert!((l.median - 7.25).abs() < 1e-9);
    assert_eq!(r[1].launch_us, None);
    assert!(table(&r).contains("7.25 [6.00-8.50]"));
    assert_eq!(r[0].host_vs_alone, None, "no exclusive round");
    // Alone, 6 µs in both repetitions: the host ran at its alone speed
    // in the first shared round and 8.5 / 6 slower in the second.
    rounds.push(mk(RunPolicy::Exclusive, 0, (0, 100), (0, 1000)));
    rounds.push(mk(RunPolicy::Exclusive, 1, (0, 100), (0, 1000)));
    for k in [2, 3] {
        (
            rounds[k].jobs[0].launch_call_ns,
            rounds[k].jobs[0].launch_calls,
        ) = (6_000_000, 1_000);
    }
    let policies = [RunPolicy::Exclusive, RunPolicy::Timeslice];
    let r = rows(&names, &policies, &rounds, &[None, None, None, None], 0.9);
    let h = r[2].host_vs_alone.unwrap();
    assert_eq!(
        (r[2].policy, r[2].job.as_str()),
        (RunPolicy::Timeslice, "hi")
    );
    assert_eq!(h.min, 1.0);
    assert!((h.max - 8.5 / 6.0).abs() < 1e-9);
}

#[test]
fn co_run_is_the_shortest_regions_covered_share() {
    // The short job (10-30) inside the long one: a full co-run, though
    // the long job is only a fifth covered.
    assert_eq!(co_run(&[run("l", 0, 100), run("s", 10, 30)]), Some(1.0));
    // The short job half before the long one began.
    assert_eq!(co_run(&[run("l", 20, 120), run("s", 0, 40)]), Some(0.5));
    // One job: nothing to share.
    assert_eq!(co_run(&[run("l", 0, 100)]), None);
}

#[test]
fn repetitions_that_were_not_co_runs_leave_the_ratios() {
    let names = hi_lo();
    let rounds = vec![
        mk(RunPolicy::Exclusive, 0, (0, 100), (0, 1000)),
        mk(RunPolicy::Timeslice, 0, (0, 200), (0, 1100)),
        mk(RunPolicy::Fikit, 0, (0, 110), (0, 1300)),
        mk(RunPolicy::Exclusive, 1, (0, 100), (0, 1000)),
        // hi ran before lo began loading its model: one after the other.
        mk(RunPolicy::Timeslice, 1, (0, 100), (100, 1100)),
        mk(RunPolicy::Fikit, 1, (0, 400), (0, 1000)),
    ];
    let sims = vec![
        None,
        sim(&[1.5, 1.0]),
        sim(&[1.2, 1.1]),
        None,
        sim(&[1.0, 1.0]),
        sim(&[3.0, 1.0]),
    ];
    let policies = [RunPolicy::Exclusive, RunPolicy::Timeslice, RunPolicy::Fikit];
    let r = rows(&names, &policies, &rounds, &sims, 0.9);
    let get = |p, j: &str| r.iter().find(|x| x.policy == p && x.job == j).unwrap();
    let ts = get(RunPolicy::Timeslice, "hi");
    // Only repetition 1's 2.0x counts; its simulated 1.5x against it.
    assert_eq!(ts.co_runs, Some(1));
    assert_eq!(ts.slowdown.unwrap().median, 2.0);
    assert!((ts.error.unwrap() - (1.5 - 2.0) / 2.0).abs() < 1e-9);
    assert_eq!(ts.overlap, Some(0.0));
    // FIKIT's rounds both count (4.0x and 1.1x), but vs timeslice only
    // where the timeslice round was a co-run: 200/110.
    let fk = get(RunPolicy::Fikit, "hi");
    assert_eq!(fk.co_runs, Some(2));
    assert!((fk.slowdown.unwrap().median - 2.55).abs() < 1e-9);
    let v = fk.vs_timeslice.unwrap();
    assert!((v.median - 200.0 / 110.0).abs() < 1e-9 && v.min == v.max);
    // With no threshold every repetition counts again.
    let all = rows(&names, &policies, &rounds, &sims, 0.0);
    let ts = all
        .iter()
        .find(|x| x.policy == RunPolicy::Timeslice && x.job == "hi")
        .unwrap();
    assert_eq!((ts.co_runs, ts.slowdown.unwrap().median), (Some(2), 1.5));
    let text = table(&r);
    let line = text
        .lines()
        .find(|l| l.contains("timeslice") && l.contains(" hi "))
        .unwrap();
    assert!(line.contains("1/2"), "{line}");
}

#[test]
fn a_failed_repetition_is_left_out_and_counted() {
    let names = vec![("a".to_string(), 0u8)];
    let mut bad = run("a", 0, 100);
    bad.exit_code = Some(1);
    let rounds = vec![
        Round {
            policy: RunPolicy::Exclusive,
            repetition: 0,
            jobs: vec![run("a", 0, 100)],
            gate_nap_us: 0,
        },
        Round {
            policy: RunPolicy::Exclusive,
            repetition: 1,
            jobs: vec![bad],
            gate_nap_us: 0,
        },
    ];
    let r = rows(&names, &[RunPolicy::Exclusive], &rounds, &[None, None], 0.9);
    assert_eq!((r[0].ok_runs, r[0].runs), (1, 2));
}
