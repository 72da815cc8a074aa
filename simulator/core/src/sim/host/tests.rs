//! The host's speed untraced and its spread, hand-computed on small programs.

use super::*;
use std::sync::Arc;

/// A job of 10 iterations: a kernel of `kernel_ns` launched as it
/// starts, waited for by a stream synchronization, then `host_ns` of
/// host before the next launch; with `setup_ns`, a synchronization at 0
/// and that much host before the first launch. Its region from its first
/// kernel is 10 `kernel_ns` + 9 `host_ns`.
fn iterations(kernel_ns: i64, host_ns: i64, setup_ns: i64) -> Job {
    use fikit_trace::fixture::{empty, launched_at_start, stream_sync};
    let mut t = empty("serial", 0);
    if setup_ns > 0 {
        t.syncs.push(stream_sync(7, 100, 0, 500));
    }
    let first = if setup_ns > 0 { 500 + setup_ns } else { 0 };
    for i in 0..10u32 {
        let base = first + i64::from(i) * (kernel_ns + host_ns);
        t.kernels
            .push(launched_at_start("k", i * 2 + 1, base, base + kernel_ns));
        t.syncs
            .push(stream_sync(7, i * 2 + 2, base, base + kernel_ns));
    }
    Job::from_trace(&t)
}

/// The default model without a context switch, so regions are the
/// programs' own arithmetic.
fn no_switch() -> GpuModel {
    GpuModel {
        context_switch_ns: 0,
        ..GpuModel::default()
    }
}

/// 10 kernels of 1000 ns, 2000 ns of host before each but the first:
/// region 28 000 ns, its host part 18 000 ns.
fn serial() -> Job {
    iterations(1_000, 2_000, 0)
}

#[test]
fn the_factor_brings_the_region_to_the_untraced_median() {
    let model = no_switch();
    // 10 kernels of 1000 ns, 2000 ns of host before each: from the first
    // kernel 10 x 1000 + 9 x 2000 = 28 000 ns. Untraced runs of 19 000,
    // 23 500 and 28 000 ns: the median needs 9 x 2000 f = 13 500, f =
    // 0.75; the runs 0.5, 0.75 and 1.
    let mut job = serial();
    let alone = run_isolated(std::slice::from_ref(&job), &model).unwrap();
    assert_eq!(alone[0].jobs[0].jct_ns() - first_kernel_ns(&job), 28_000);
    job.untraced_regions_ns = Arc::from(vec![23_500, 19_000, 28_000]);
    let h = untraced(&job, &model).unwrap();
    assert!((h.factor - 0.75).abs() < 1e-3, "{h:?}");
    assert!((h.low - 0.5).abs() < 1e-3, "{h:?}");
    assert!((h.high - 1.0).abs() < 1e-3, "{h:?}");
    assert_eq!(h.runs, 3);
    assert_eq!(
        describe(&job, Some(&h)),
        "serial 0.75x [0.50-1.00] (3 untraced runs)"
    );
    // Replayed alone at that factor, it takes the median region.
    let (jobs, speeds) = on_untraced_host(std::slice::from_ref(&job), &model);
    assert_eq!(speeds[0], Some(h));
    let alone = run_isolated(&jobs, &model).unwrap();
    let region = alone[0].jobs[0].jct_ns() - first_kernel_ns(&jobs[0]);
    assert!((region - 23_500).abs() <= 10, "{region}");
    // Without untraced runs: as profiled, and said so.
    job.untraced_regions_ns = Arc::from(Vec::new());
    assert_eq!(untraced(&job, &model), None);
    let (jobs, speeds) = on_untraced_host(std::slice::from_ref(&job), &model);
    assert_eq!((jobs[0].steps.len(), speeds[0]), (job.steps.len(), None));
    assert_eq!(
        describe(&job, None),
        "serial as traced (its trace has no untraced runs)"
    );
}

#[test]
fn a_rebuilt_program_keeps_the_speed_its_recorded_one_ran_untraced() {
    let model = no_switch();
    // The job above (0.75x for a median run of 23 500 ns) repeated 3
    // times: its runs measured one run, so the factor is the same, not
    // the one that would squeeze three runs into 23 500 ns.
    let mut job = serial();
    job.untraced_regions_ns = Arc::from(vec![23_500, 19_000, 28_000]);
    let once = untraced(&job, &model).unwrap();
    let thrice = job.repeated(3);
    assert!(thrice.recorded.is_some());
    assert_eq!(untraced(&thrice, &model), Some(once));
    // Rebuilt again (a repeated program serving requests), it still
    // fits on the program as recorded.
    let served = thrice.serving(&[0, 50_000]);
    assert!(Arc::ptr_eq(
        served.recorded.as_ref().unwrap(),
        thrice.recorded.as_ref().unwrap()
    ));
    assert_eq!(untraced(&served, &model), Some(once));
}

#[test]
fn the_set_up_before_the_first_kernel_stays_as_traced() {
    let model = no_switch();
    // A synchronization at 0 (the set-up), then 10 000 ns of host
    // before the first of 10 kernels as in `serial`: the region from the
    // first kernel is 28 000 ns, its host part 18 000 ns.
    let mut job = iterations(1_000, 2_000, 10_000);
    let pre = first_kernel_ns(&job);
    assert!(pre >= 10_000, "{pre}");
    job.untraced_regions_ns = Arc::from(vec![23_500]);
    let h = untraced(&job, &model).unwrap();
    assert!((h.factor - 0.75).abs() < 1e-3, "{h:?}");
    // At that factor the first kernel starts where it did, and the
    // region is the untraced one.
    let fast = job.with_region_host_speed(h.factor);
    let alone = run_isolated(std::slice::from_ref(&fast), &model).unwrap();
    assert_eq!(first_kernel_ns(&fast), pre);
    let region = alone[0].jobs[0].jct_ns() - pre;
    assert!((region - 23_500).abs() <= 10, "{region}");
}

#[test]
fn a_host_that_is_a_small_part_of_the_region_is_still_matched() {
    let model = no_switch();
    // 10 kernels of 10 000 ns, 200 ns of host between them: region
    // 100 000 + 9 x 200 = 101 800 ns. At half the host's time: 100 900
    // ns. Proportional steps move 1.8% a step here (eight of them end
    // near 0.93); the secant stops within the region's tolerance (10 ns
    // of host here, 0.6% of the factor).
    let mut job = iterations(10_000, 200, 0);
    let alone = run_isolated(std::slice::from_ref(&job), &model).unwrap();
    assert_eq!(alone[0].jobs[0].jct_ns() - first_kernel_ns(&job), 101_800);
    let f = region_factor(&job, 100_900.0, &model, 1.0).unwrap();
    assert!((f - 0.5).abs() < 0.01, "{f}");
    // The median's factor between the runs' (100 450, 100 900, 101 350 ns:
    // 0.25, 0.5, 0.75).
    job.untraced_regions_ns = Arc::from(vec![101_350, 100_450, 100_900]);
    let h = untraced(&job, &model).unwrap();
    assert!(h.low <= h.factor && h.factor <= h.high, "{h:?}");
    assert!(
        (h.low - 0.25).abs() < 0.01 && (h.high - 0.75).abs() < 0.01,
        "{h:?}"
    );
}

#[test]
fn a_factor_stays_within_its_limits() {
    let model = GpuModel::default();
    let mut job = serial();
    // Far shorter than the GPU time alone: no host speed reaches it.
    job.untraced_regions_ns = Arc::from(vec![10]);
    let h = untraced(&job, &model).unwrap();
    assert_eq!(h.factor, FACTOR_LIMITS.0);
    assert!(
        describe(&job, Some(&h))
            .ends_with("; at the factor's limit: the untraced runs do not look like this profile)")
    );
    job.untraced_regions_ns = Arc::from(vec![1_000_000_000]);
    assert_eq!(untraced(&job, &model).unwrap().factor, FACTOR_LIMITS.1);
}

/// A server recorded as it served: the iterations of
/// [`fikit_trace::fixture::serving`] (kernel `conv` [0, 10) us, `fc`
/// [40, 45) us, a stream synchronization [41, 46) us that waits for it),
/// starting at `starts_us`, so 54 us of host before each iteration that
/// follows the one before at once, and idle added before the others.
fn served_recording(starts_us: &[i64]) -> Job {
    use fikit_trace::fixture::{launched_at_start, serving_at};
    let starts: Vec<i64> = starts_us.iter().map(|s| s * 1_000).collect();
    let mut t = serving_at("server", 0, &starts);
    // A last kernel after the last wait (the program's end: no iteration).
    let end = starts_us.last().map_or(0, |s| s * 1_000 + 60_000);
    let c = starts_us.len() as u32 * 3 + 1;
    t.kernels
        .push(launched_at_start("free", c, end, end + 1_000));
    Job::from_trace(&t)
}

/// Eight iterations; a millisecond of idle before the fourth and two
/// before the sixth (a request that waited to arrive).
const SERVED_US: [i64; 8] = [0, 100, 200, 1_300, 1_400, 3_500, 3_600, 3_700];

#[test]
fn a_server_recorded_as_it_served_waits_only_for_its_new_arrivals() {
    let model = no_switch();
    let job = served_recording(&SERVED_US);
    assert_eq!(
        job.iteration_first_delays()[1..],
        [
            54_000, 54_000, 1_054_000, 54_000, 2_054_000, 54_000, 54_000, 14_000
        ]
    );
    // Requests 1 ms apart, each alone on the GPU: arrival, 54 us of
    // host, `conv`, `fc` launched 40 us after it, the wait back 6 us
    // later: 100 us each, the recording's idle gone.
    let served = job.serving(&[1_000_000, 2_000_000, 3_000_000, 4_000_000]);
    let alone = run_isolated(std::slice::from_ref(&served), &model).unwrap();
    assert_eq!(
        alone[0].jobs[0].iterations_ns,
        [100_000, 100_000, 100_000, 100_000]
    );
}

#[test]
fn a_servers_idle_goes_wherever_its_recorded_steps_are_cut() {
    use fikit_trace::fixture::{empty, launched_at_start, push_serving_iteration, stream_sync};
    let model = no_switch();
    // A request of two iterations: `pre` ([0, 5) us, its wait back at
    // 6), then `conv` and `fc` as in `served_recording` (back at 46),
    // 54 us of host before each. The recording's set-up is its first
    // `pre`, so its steps are cut `conv`-`pre`: the idle before each
    // request (a millisecond, before the 3rd, 4th and 5th `pre`) falls
    // inside a step.
    let mut t = empty("server", 0);
    let (mut at, mut c) = (0i64, 1u32);
    for i in 0..12 {
        if i % 2 == 0 {
            if (6..=10).contains(&i) {
                at += 1_000_000;
            }
            t.kernels.push(launched_at_start("pre", c, at, at + 5_000));
            t.syncs.push(stream_sync(7, c + 1, at + 1_000, at + 6_000));
            (at, c) = (at + 60_000, c + 2);
        } else {
            push_serving_iteration(&mut t, c, at);
            (at, c) = (at + 100_000, c + 3);
        }
    }
    let job = Job::from_trace(&t);
    // Each request alone: 54 + 46 + 54 + 6 us, none of the idle.
    let served = job.serving(&[5_000_000, 6_000_000, 7_000_000]);
    let alone = run_isolated(std::slice::from_ref(&served), &model).unwrap();
    assert_eq!(alone[0].jobs[0].iterations_ns, [160_000, 160_000, 160_000]);
}

#[test]
fn a_server_is_fitted_on_its_busy_parts() {
    let model = no_switch();
    let recorded = served_recording(&SERVED_US);
    // An iteration's busy part, its first launch to its wait's return:
    // `fc` issued at 40 us, done at 45, the wait issued at 41 and back
    // at 46. At half the host's time: `fc` at 20, done at 25, back at
    // 26 us.
    let f = busy_factor(&recorded, 26_000.0, &model, 1.0).unwrap();
    assert!((f - 0.5).abs() < 1e-3, "{f}");
    // As a server with its untraced runs' busy parts (26, 24 and 28 us:
    // 0.5, 0.45 and 0.55) it is fitted on them, not on its regions,
    // which hold the recording's idle.
    let mut served = recorded.serving(&[1_000_000, 2_000_000]);
    served.untraced_regions_ns = Arc::from(vec![3_000_000]);
    served.untraced_busy_ns = Arc::from(vec![26_000, 24_000, 28_000]);
    let h = untraced(&served, &model).unwrap();
    assert!(h.busy && (h.factor - 0.5).abs() < 1e-3, "{h:?}");
    assert!(
        (h.low - 0.45).abs() < 1e-3 && (h.high - 0.55).abs() < 1e-3,
        "{h:?}"
    );
    assert_eq!(
        describe(&served, Some(&h)),
        "server 0.50x [0.45-0.55] (3 untraced runs, busy parts)"
    );
    // Not serving, the same recording is fitted on its region.
    let mut plain = recorded.clone();
    plain.untraced_regions_ns = Arc::from(vec![3_000_000]);
    plain.untraced_busy_ns = Arc::from(vec![26_000]);
    assert!(!untraced(&plain, &model).unwrap().busy);
}

#[test]
fn a_servers_requests_spread_as_its_untraced_runs_did() {
    let model = no_switch();
    // Seven requests after the set-up, each busy 46 us as recorded
    // (`fc` issued at 40 us, its wait back at 46: 40 c + 6 at a host
    // factor c). Three untraced runs busy 20/30/40, 26/46/66 and
    // 30/50/90 us: medians 30, 46 and 50, so the median's factor is 1
    // and the fastest run's 0.6.
    let mut served =
        served_recording(&SERVED_US).serving(&(1..=7).map(|k| k * 1_000_000).collect::<Vec<_>>());
    served.untraced_regions_ns = Arc::from(vec![3_000_000; 3]);
    served.untraced_busy_ns = Arc::from(vec![30_000, 46_000, 50_000]);
    served.untraced_busy_parts_ns = Arc::from(vec![
        Arc::from(vec![40_000, 20_000, 30_000]),
        Arc::from(vec![26_000, 46_000, 66_000]),
        Arc::from(vec![90_000, 30_000, 50_000]),
    ]);
    let h = untraced(&served, &model).unwrap();
    assert!((h.factor - 1.0).abs() < 1e-3 && h.busy, "{h:?}");
    assert!((h.low - 0.6).abs() < 1e-3, "{h:?}");
    let latencies = |j: &Job| {
        run_isolated(std::slice::from_ref(j), &model).unwrap()[0].jobs[0]
            .iterations_ns
            .clone()
    };
    // At the median, the requests take by rank (equal as recorded, so
    // in order) the runs' median at each quantile: the least parts'
    // median 26, the middle ones' 46, the greatest ones' 66 us (not the
    // pooled 20 and 90): 26, 26, 46, 46, 46, 66, 66 us, after 54 us of
    // host each, within 0.1 us (the factor's tolerance; the replays
    // find the GPU's 6 us, which does not scale).
    let at = latencies(&at_speed(&served, &h, Speed::Median, &model));
    let want = [26, 26, 46, 46, 46, 66, 66].map(|b| (54 + b) * 1_000);
    assert_eq!(at.len(), want.len(), "{at:?}");
    for (a, w) in at.iter().zip(want) {
        assert!((a - w).abs() <= 100, "{at:?} against {want:?}");
    }
    // At the fastest run, its factor and its parts alone: 32.4 us of
    // host, then 20, 20, 30, 30, 30, 40, 40 us busy.
    let low = latencies(&at_speed(&served, &h, Speed::Low, &model));
    let want = [20, 20, 30, 30, 30, 40, 40].map(|b| 32_400 + b * 1_000);
    for (a, w) in low.iter().zip(want) {
        assert!((a - w).abs() <= 1_000, "{low:?} against {want:?}");
    }
    // Without the runs' parts, the factor alone: every request alike.
    served.untraced_busy_parts_ns = Arc::from(Vec::new());
    let flat = latencies(&at_speed(&served, &h, Speed::Median, &model));
    assert!(flat.iter().all(|&a| a == flat[0]), "{flat:?}");
}

#[test]
fn a_closed_loop_jobs_iterations_spread_as_its_untraced_runs_did() {
    let model = no_switch();
    // `serial`'s iterations: the first ends with its kernel (1 us), each
    // later one is 2 us of host and a 1 us kernel. A gate counts from
    // the third: eight of 3 us. Three untraced runs of the region as
    // recorded (factor 1), iterations 2/3/5, 2.5/3/6 and 2.2/3.5/9 us:
    // the runs' median at the least 2.2, the middle 3, the greatest
    // 6 us.
    let mut job = serial();
    job.untraced_regions_ns = Arc::from(vec![28_000, 28_000, 28_000]);
    job.untraced_iterations_ns = Arc::from(vec![
        Arc::from(vec![2_000, 3_000, 5_000]),
        Arc::from(vec![6_000, 2_500, 3_000]),
        Arc::from(vec![2_200, 3_500, 9_000]),
    ]);
    let h = untraced(&job, &model).unwrap();
    assert!((h.factor - 1.0).abs() < 1e-3 && !h.busy, "{h:?}");
    let at = run_isolated(&[at_speed(&job, &h, Speed::Median, &model)], &model).unwrap()[0].jobs[0]
        .iterations_ns
        .clone();
    // The two the gate leaves out as recorded; the eight by rank (equal,
    // so in order) at quantiles 0, 1/7, ..., 1 of three values each:
    // the host before each kernel scaled with the rest (2.2 us is 1.2 us
    // of host and the kernel).
    let want = [
        1_000, 3_000, 2_200, 2_200, 3_000, 3_000, 3_000, 3_000, 6_000, 6_000,
    ];
    assert_eq!(at.len(), want.len(), "{at:?}");
    for (a, w) in at.iter().zip(want) {
        assert!((a - w).abs() <= 20, "{at:?} against {want:?}");
    }
    // A run without iterations recorded (a trace from before them):
    // the factor alone, every iteration alike.
    job.untraced_iterations_ns = Arc::from(vec![
        Arc::from(vec![2_000, 3_000, 5_000]),
        Arc::from(Vec::new()),
        Arc::from(vec![2_200, 3_500, 9_000]),
    ]);
    let flat = run_isolated(&[at_speed(&job, &h, Speed::Median, &model)], &model).unwrap()[0].jobs
        [0]
    .iterations_ns
    .clone();
    assert!(flat[1..].iter().all(|&a| a == 3_000), "{flat:?}");
}

/// 10 iterations 13 us apart: kernel `a` [0, 10) us launched as it
/// starts, kernel `b` launched at 8 us (queued behind `a`, so [10, 11)),
/// a synchronization back at 11 us, 2 us of host before the next. An
/// iteration at host scale `s` takes 2 s + max(10 s, 2 s + 10) + 1 us:
/// below 1.25 the host hides behind `a`.
fn partly_hidden() -> Job {
    use fikit_trace::fixture::{empty, kernel, launched_at_start, stream_sync};
    let mut t = empty("hidden", 0);
    for i in 0..10u32 {
        let (base, c) = (i64::from(i) * 13_000, i * 3 + 1);
        t.kernels
            .push(launched_at_start("a", c, base, base + 10_000));
        let mut b = kernel(
            "b",
            7,
            c + 1,
            Some(base + 6_000),
            base + 10_000,
            base + 11_000,
        );
        b.launch.as_mut().unwrap().end_ns = base + 8_000;
        t.kernels.push(b);
        t.syncs
            .push(stream_sync(7, c + 2, base + 8_500, base + 11_000));
    }
    Job::from_trace(&t)
}

#[test]
fn iterations_reach_their_spread_where_the_host_is_partly_hidden() {
    let model = no_switch();
    let mut job = partly_hidden();
    // Untraced runs of the region as recorded (factor 1), each with
    // iterations of 12, 20 and 30 us: scales 0.5 (hidden), 1.9 and 2.9.
    let region = run_isolated(std::slice::from_ref(&job), &model).unwrap()[0].jobs[0].jct_ns()
        - first_kernel_ns(&job);
    job.untraced_regions_ns = Arc::from(vec![region; 3]);
    let its: Arc<[i64]> = Arc::from(vec![12_000, 20_000, 30_000]);
    job.untraced_iterations_ns = Arc::from(vec![its.clone(), its.clone(), its]);
    let h = untraced(&job, &model).unwrap();
    assert!((h.factor - 1.0).abs() < 1e-3, "{h:?}");
    let latencies = |j: &Job| {
        run_isolated(std::slice::from_ref(j), &model).unwrap()[0].jobs[0]
            .iterations_ns
            .clone()
    };
    let at = latencies(&at_speed(&job, &h, Speed::Median, &model));
    // The eight a gate counts, equal as recorded, in order at
    // quantiles 0, 1/7, ..., 1 of the three values, each within 0.1%
    // (a proportional step alone would leave 30 us at 24.1, and one
    // secant after it at 31.1).
    let want = [12, 12, 20, 20, 20, 20, 30, 30].map(|u| u * 1_000);
    assert_eq!(at.len(), 10, "{at:?}");
    for (a, w) in at[2..].iter().zip(want) {
        assert!((a - w).abs() <= w / 1_000, "{at:?} against {want:?}");
    }
    // Repeated (a scenario's `repeat`), each pass spreads alike.
    let twice = latencies(&at_speed(&job.repeated(2), &h, Speed::Median, &model));
    assert_eq!(twice.len(), 20, "{twice:?}");
    for (a, w) in twice[12..].iter().zip(want) {
        assert!((a - w).abs() <= w / 1_000, "{twice:?} against {want:?}");
    }
}

#[test]
fn medians() {
    assert_eq!(median(&[]), None);
    assert_eq!(median(&[3, 1, 2]), Some(2.0));
    assert_eq!(median(&[4, 1, 2, 3]), Some(2.5));
}
