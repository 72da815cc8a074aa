//! Properties every policy must keep, on random small jobs.

use fikit_sim::policy::PolicyKind;
use fikit_sim::report::{Format, render};
use fikit_sim::sim::gpu::{GpuModel, Granularity};
use fikit_sim::sim::job::Job;
use fikit_sim::sim::simulate::{SimOptions, run_policy, simulate};
use fikit_trace::{Trace, fixture};
use proptest::prelude::*;

/// One kernel of a random job: host time before its launch, its duration, and
/// whether the host synchronizes on it right after launching. Every kernel of
/// a job is a different kernel (its own name), so FIKIT's profiled durations
/// predict exactly.
type Step = (i64, i64, bool);

/// A job whose host launches each kernel on one stream after `gap` ns of host
/// work (counted from the previous launch or sync return), the kernel starting
/// when issued or when the previous one ends; a sync waits for the kernel and
/// returns 5 ns after it ends.
fn trace(name: &str, priority: u8, steps: &[Step]) -> Trace {
    let mut t = fixture::empty(name, priority);
    let mut host = 0i64;
    let mut prev_end = 0i64;
    for (i, &(gap, dur, sync)) in steps.iter().enumerate() {
        let launch = host + gap;
        let start = launch.max(prev_end);
        let mut k = fixture::kernel(
            &format!("{name}{i}"),
            7,
            2 * i as u32,
            Some(launch),
            start,
            start + dur,
        );
        k.launch.as_mut().unwrap().end_ns = launch;
        if i % 2 == 1 {
            k.grid = [264, 1, 1];
            k.block = [1024, 1, 1];
            k.kernel_key =
                fikit_trace::kernel_key(&k.name, k.grid, k.block, 0, 0, k.registers_per_thread);
        }
        t.kernels.push(k);
        prev_end = start + dur;
        host = launch;
        if sync {
            t.syncs.push(fixture::stream_sync(
                7,
                2 * i as u32 + 1,
                launch,
                prev_end + 5,
            ));
            host = prev_end + 5;
        }
    }
    t
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec((0i64..400, 1i64..300, any::<bool>()), 1..8)
}

fn models() -> impl Strategy<Value = GpuModel> {
    (
        20i64..500,
        0i64..30,
        any::<bool>(),
        prop_oneof![
            Just(Granularity::Kernel),
            Just(Granularity::Block),
            Just(Granularity::Immediate)
        ],
        0i64..50,
    )
        .prop_map(|(q, c, p, g, cost)| GpuModel {
            timeslice_quantum_ns: q,
            context_switch_ns: c,
            timeslice_preempts: p,
            preempt_granularity: g,
            preempt_cost_ns: cost,
            ..GpuModel::default()
        })
}

const SHARED: [PolicyKind; 4] = [
    PolicyKind::Timeslice,
    PolicyKind::Mps,
    PolicyKind::Preemptive,
    PolicyKind::Fikit,
];

/// A kernel of a job on two streams: host time before its launch, its
/// duration, its stream (0 or 1) and its grid (blocks of 1024 threads, 2 to an
/// SM of the fixture device's 132: one block, a full wave, 4 waves, or 1.25
/// and 3.004 waves, whose last waves are thin).
type StreamStep = (i64, i64, u32, u32);

/// A job whose host launches each kernel after `gap` ns on one of two
/// streams, so its kernels overlap as the recorded run had them.
fn two_stream_trace(name: &str, steps: &[StreamStep]) -> Trace {
    let mut t = fixture::empty(name, 0);
    let mut host = 0i64;
    let mut prev_end = [0i64; 2];
    for (i, &(gap, dur, stream, blocks)) in steps.iter().enumerate() {
        let launch = host + gap;
        let s = stream as usize;
        let start = launch.max(prev_end[s]);
        let mut k = fixture::kernel(
            &format!("{name}{i}"),
            7 + stream,
            i as u32,
            Some(launch),
            start,
            start + dur,
        );
        k.launch.as_mut().unwrap().end_ns = launch;
        k.grid = [blocks, 1, 1];
        k.block = [1024, 1, 1];
        k.kernel_key = fikit_trace::kernel_key(&k.name, k.grid, k.block, 0, 0, 32);
        t.kernels.push(k);
        prev_end[s] = start + dur;
        host = launch;
    }
    t
}

fn stream_steps() -> impl Strategy<Value = Vec<StreamStep>> {
    prop::collection::vec(
        (
            0i64..200,
            1i64..500,
            0u32..2,
            prop_oneof![Just(1u32), Just(264), Just(1056), Just(330), Just(793)],
        ),
        1..10,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    /// Alone, a job replays its recorded timeline exactly under every
    /// policy, with overlapping kernels of its own that fill the device: a
    /// job's kernels never take room from each other (its trace recorded how
    /// they shared), and a kernel's waves add up to its recorded duration,
    /// thin last waves or not.
    #[test]
    fn a_job_alone_replays_exactly_under_every_policy(steps in stream_steps(), c in 0.0f64..3.0, g in 0.0f64..=1.0) {
        let job = Job::from_trace(&two_stream_trace("a", &steps));
        let m = GpuModel { corun_slowdown: c, last_wave_floor: g, ..GpuModel::default() };
        for kind in PolicyKind::ALL {
            let r = run_policy(std::slice::from_ref(&job), &[0], kind, &m, true).unwrap();
            prop_assert_eq!(r.jobs[0].jct_ns(), job.recorded_span_ns, "{:?}", kind);
            for seg in &r.segments {
                prop_assert_eq!(
                    seg.start_ns - job.ops[seg.op].recorded_start_ns,
                    0,
                    "{:?}: op {} moved", kind, seg.op
                );
                prop_assert_eq!(seg.end_ns - seg.start_ns, job.ops[seg.op].duration_ns);
            }
        }
    }

    #[test]
    fn no_job_finishes_before_its_isolated_jct(a in steps(), b in steps(), c in steps(), m in models()) {
        let traces = [trace("a", 0, &a), trace("b", 9, &b), trace("c", 5, &c)];
        let jobs: Vec<Job> = traces.iter().map(Job::from_trace).collect();
        for (i, j) in jobs.iter().enumerate() {
            let alone = run_policy(std::slice::from_ref(j), &[0], PolicyKind::Exclusive, &m, false).unwrap();
            // Alone, the replay reproduces the recorded span exactly.
            prop_assert_eq!(alone.jobs[0].jct_ns(), j.recorded_span_ns);
            for kind in SHARED {
                let r = run_policy(&jobs, &[0, 0, 0], kind, &m, false).unwrap();
                prop_assert!(
                    r.jobs[i].jct_ns() >= alone.jobs[0].jct_ns(),
                    "{:?}: job {} finished in {} < isolated {}", kind, i, r.jobs[i].jct_ns(), alone.jobs[0].jct_ns()
                );
            }
        }
    }

    #[test]
    fn gpu_work_is_conserved(a in steps(), b in steps(), m in models()) {
        let jobs: Vec<Job> = [trace("a", 0, &a), trace("b", 9, &b)].iter().map(Job::from_trace).collect();
        let work: i64 = jobs.iter().flat_map(|j| j.ops.iter()).map(|o| o.duration_ns).sum();
        for kind in [PolicyKind::Exclusive, PolicyKind::Timeslice, PolicyKind::Preemptive, PolicyKind::Fikit] {
            let r = run_policy(&jobs, &[0, 0], kind, &m, true).unwrap();
            let ran: i64 = r.segments.iter().map(|s| s.end_ns - s.start_ns).sum();
            prop_assert_eq!(ran, work, "{:?}", kind);
            // Busy time is at most the work (kernels of a job may overlap) and
            // at least the longest kernel.
            prop_assert!(r.busy_ns <= work);
        }
        // Under MPS kernels only ever slow down: every segment lasts at least its kernel.
        let r = run_policy(&jobs, &[0, 0], PolicyKind::Mps, &m, true).unwrap();
        for s in &r.segments {
            prop_assert!(s.end_ns - s.start_ns >= jobs[s.job].ops[s.op].duration_ns);
        }
    }

    /// FIKIT, when its duration predictions are exact: a job raised to the
    /// other job's priority, or above it, never finishes later (a misprediction
    /// can break this: see `a_fikit_misprediction_delays_the_top_job`). Preemptive priority with free, immediate preemption: a
    /// job raised above the other never finishes later. Not covered, because
    /// they do not hold: preemption at kernel or block boundaries (see
    /// `non_preemptive_boundaries_allow_a_priority_anomaly`); a preemption cost,
    /// which the preempting job pays (found: 864 ns as the highest priority
    /// against 863 ns as the lowest, with a 1 ns cost); and a raise into a tie
    /// under the preemptive policy, which serves equal priorities without
    /// preemption (found: 363 ns tied against 362 ns as the lowest).
    #[test]
    fn raising_a_priority_never_makes_the_job_finish_later(a in steps(), b in steps(), m in models()) {
        let immediate = GpuModel {
            preempt_granularity: Granularity::Immediate,
            preempt_cost_ns: 0,
            ..m.clone()
        };
        let jct = |kind: PolicyKind, model: &GpuModel, ts: &[Trace], who: usize| {
            let jobs: Vec<Job> = ts.iter().map(Job::from_trace).collect();
            run_policy(&jobs, &[0, 0], kind, model, false).unwrap().jobs[who].jct_ns()
        };
        let low = [trace("a", 5, &a), trace("b", 9, &b)];
        let tied = [trace("a", 5, &a), trace("b", 5, &b)];
        let highest = [trace("b", 0, &b), trace("a", 5, &a)];
        let f_low = jct(PolicyKind::Fikit, &m, &low, 1);
        let f_tied = jct(PolicyKind::Fikit, &m, &tied, 1);
        let f_high = jct(PolicyKind::Fikit, &m, &highest, 0);
        prop_assert!(f_tied <= f_low, "fikit: tied {} > low {}", f_tied, f_low);
        prop_assert!(f_high <= f_low, "fikit: highest {} > low {}", f_high, f_low);
        let p_low = jct(PolicyKind::Preemptive, &immediate, &low, 1);
        let p_high = jct(PolicyKind::Preemptive, &immediate, &highest, 0);
        prop_assert!(p_high <= p_low, "preemptive: highest {} > low {}", p_high, p_low);
    }
}

/// Preemption at kernel boundaries is not monotone in priority, the classic
/// non-preemptive scheduling anomaly. Found by the property test above; kept
/// as a worked example. b alone ends at 863 (its last kernel is issued at 862).
/// As the low-priority job it runs in a's gap and still ends at 863. As the
/// high-priority job it runs first, which moves a's first kernel to [284,437)
/// and a's second (issued 394 ns after a's sync returns) to [836,899): b's last
/// kernel, eligible at 862, must wait for it and ends at 900.
#[test]
fn non_preemptive_boundaries_allow_a_priority_anomaly() {
    let a: &[Step] = &[(0, 153, true), (394, 63, false)];
    let b: &[Step] = &[
        (0, 283, false),
        (76, 1, false),
        (298, 1, false),
        (90, 1, false),
        (398, 1, false),
    ];
    let m = GpuModel {
        preempt_granularity: Granularity::Kernel,
        ..GpuModel::default()
    };
    let jct = |ts: &[Trace], who: usize| {
        let jobs: Vec<Job> = ts.iter().map(Job::from_trace).collect();
        run_policy(&jobs, &[0, 0], PolicyKind::Preemptive, &m, false)
            .unwrap()
            .jobs[who]
            .jct_ns()
    };
    assert_eq!(jct(&[trace("a", 0, a), trace("b", 9, b)], 1), 863);
    assert_eq!(jct(&[trace("b", 0, b), trace("a", 5, a)], 0), 900);
}

/// FIKIT predicts a kernel's duration by its key's profiled mean. Here a's
/// first two kernels (246 and 204 ns) share their keys with 1 ns kernels
/// launched later, so the first is predicted at 123 ns and fills b's 123 ns
/// gap when b is the top job: b's next kernel waits for it, and b ends at
/// 739 (an exact prediction, 246 ns, would not have filled it). Found by the property
/// test before its kernels were made distinct, when b as the low-priority
/// job ended at 727 (earlier than as the top): its host ran ahead of its
/// gate then. A filler's launch now holds its host until the kernel goes,
/// as the live gate does: as the low-priority job b ends at 760 (b0 goes in
/// a's gap at 246, b1 is launched 135 ns later at 381 and fits what is left
/// of the gap, [381, 486), its sync returns at 491, b2 launched at 759 goes
/// in a's next gap, [759, 760)).
#[test]
fn a_fikit_misprediction_delays_the_top_job() {
    let a: &[Step] = &[
        (0, 246, true),
        (271, 204, true),
        (152, 1, false),
        (0, 1, false),
        (0, 1, false),
    ];
    let b: &[Step] = &[(0, 12, false), (135, 105, true), (268, 1, false)];
    let mut ta = trace("a", 5, a);
    ta.kernels[3].kernel_key = ta.kernels[0].kernel_key;
    ta.kernels[4].kernel_key = ta.kernels[1].kernel_key;
    let run = |ts: &[Trace]| {
        let jobs: Vec<Job> = ts.iter().map(Job::from_trace).collect();
        run_policy(
            &jobs,
            &[0, 0],
            PolicyKind::Fikit,
            &GpuModel::default(),
            false,
        )
        .unwrap()
    };
    let low = run(&[ta.clone(), trace("b", 9, b)]);
    assert_eq!(low.jobs[1].jct_ns(), 760);
    let high = run(&[trace("b", 0, b), ta]);
    assert_eq!(high.jobs[0].jct_ns(), 739);
    // b's second kernel waited 258 - 135 = 123 for a's first (filled at 12);
    // its third, issued at 636, waited 738 - 636 = 102 for a's second
    // (predicted 102, ran 204 from 534).
    assert_eq!(high.misprediction, Some((225, 2)));
}

#[test]
fn the_same_seed_gives_the_same_output_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let a = trace("a", 0, &[(10, 50, true), (30, 20, false), (5, 80, true)]);
    let b = trace("b", 9, &[(0, 120, false), (3, 40, true)]);
    fikit_trace::write_trace(&dir.path().join("a.parquet"), &a).unwrap();
    fikit_trace::write_trace(&dir.path().join("b.parquet"), &b).unwrap();
    let scenario = dir.path().join("s.json");
    let write = |seed: u64| {
        std::fs::write(
            &scenario,
            format!(
                r#"{{"seed": {seed}, "jobs": [
                    {{"trace": "a.parquet", "requests": {{"count": 50, "rate_per_s": 2000000}}}},
                    {{"trace": "b.parquet", "repeat": 20}}]}}"#
            ),
        )
        .unwrap();
    };
    let run = || {
        let s = fikit_sim::sim::scenario::Scenario::load(&scenario).unwrap();
        let opts = SimOptions {
            policies: PolicyKind::ALL.to_vec(),
            model: GpuModel::default(),
            record_segments: false,
        };
        let r = simulate(&s.jobs, &s.arrivals, &opts).unwrap();
        (render(&r, Format::Json), render(&r, Format::Csv))
    };
    write(7);
    let first = run();
    let second = run();
    assert_eq!(first, second);
    write(8);
    assert_ne!(run().0, first.0, "another seed draws other arrivals");
}
