//! Kernels far longer than a time slice: the engine skips whole rounds of
//! time slicing at once (`Policy::rotation`), and the results must be those
//! of replaying every slice; times that would pass 2^62 ns are an error, not
//! an overflow (fuzz/README.md, finding 6).

use fikit_sim::policy::PolicyKind;
use fikit_sim::sim::engine::{Engine, MAX_SIM_NS, RunError, RunOptions, RunResult};
use fikit_sim::sim::gpu::GpuModel;
use fikit_sim::sim::job::Job;
use fikit_sim::sim::simulate::{SimOptions, simulate};
use fikit_trace::{Kernel, Sync, SyncKind, Trace, fixture};

/// A kernel on `stream` launched at `launch`, running `[start, end)`.
fn k(stream: u32, corr: u32, launch: i64, start: i64, end: i64) -> Kernel {
    let mut k = fixture::kernel("k", stream, corr, Some(launch), start, end);
    k.launch.as_mut().unwrap().end_ns = launch;
    k
}

/// A blocking context synchronization `[start, end)`.
fn sync(corr: u32, start: i64, end: i64) -> Sync {
    Sync {
        kind: SyncKind::ContextSynchronize,
        start_ns: start,
        end_ns: end,
        context: 1,
        stream: None,
        thread_id: Some(1),
        correlation_id: corr,
    }
}

/// xorshift: deterministic cases.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A job of a few iterations: kernels on one or two streams, some long,
/// some short, host gaps, a blocking synchronization after each iteration.
fn random_trace(rng: &mut Rng, name: &str) -> Trace {
    let mut t = fixture::empty(name, rng.below(10) as u8);
    let mut now = rng.below(50) as i64;
    let mut corr = 1;
    for _ in 0..1 + rng.below(3) {
        let mut ends = [now; 2];
        for _ in 0..1 + rng.below(3) {
            let s = rng.below(2) as usize;
            let len = if rng.below(3) == 0 {
                1 + rng.below(40) as i64
            } else {
                200 + rng.below(8_000) as i64
            };
            let start = ends[s].max(now);
            t.kernels
                .push(k(s as u32 + 7, corr, now, start, start + len));
            corr += 1;
            ends[s] = start + len;
            now += rng.below(20) as i64;
        }
        let done = ends[0].max(ends[1]);
        t.syncs.push(sync(corr, now, done + 3));
        corr += 1;
        now = done + 3 + rng.below(500) as i64;
    }
    t
}

fn run(jobs: &[Job], arrivals: &[i64], model: &GpuModel, min_rounds: u64) -> RunResult {
    let mut policy = PolicyKind::Timeslice.build(model);
    let opts = RunOptions {
        record_segments: false,
        min_rounds_to_skip: Some(min_rounds),
    };
    Engine::new(jobs, arrivals, opts)
        .run(policy.as_mut())
        .unwrap()
}

/// Everything a report shows of a run but the count of events processed.
fn outcome(r: &RunResult) -> impl PartialEq + std::fmt::Debug {
    let jobs: Vec<_> = r
        .jobs
        .iter()
        .map(|j| (j.arrival_ns, j.finish_ns, j.iterations_ns.clone()))
        .collect();
    (jobs, r.busy_ns, r.makespan_ns)
}

#[test]
fn skipping_rounds_gives_the_results_of_replaying_every_slice() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut skipped_cases = 0;
    for case in 0..200 {
        let n = 2 + rng.below(3) as usize;
        let traces: Vec<Trace> = (0..n)
            .map(|i| random_trace(&mut rng, &format!("j{i}")))
            .collect();
        let jobs: Vec<Job> = traces.iter().map(Job::from_trace).collect();
        let arrivals: Vec<i64> = (0..n).map(|_| rng.below(3_000) as i64).collect();
        let model = GpuModel {
            timeslice_quantum_ns: 5 + rng.below(56) as i64,
            context_switch_ns: [0, 0, 1, 7, 25][rng.below(5) as usize],
            ..GpuModel::default()
        };
        let stepped = run(&jobs, &arrivals, &model, u64::MAX);
        for min_rounds in [1, 2, 5] {
            let skipped = run(&jobs, &arrivals, &model, min_rounds);
            assert_eq!(
                outcome(&skipped),
                outcome(&stepped),
                "case {case}, skipping from {min_rounds} rounds, {model:?}"
            );
            if skipped.events < stepped.events {
                skipped_cases += 1;
            }
        }
    }
    // The comparison is not vacuous: most of the 600 runs skipped rounds.
    assert!(skipped_cases > 300, "only {skipped_cases} runs skipped");
}

#[test]
fn kernels_of_days_under_time_slicing_replay_at_once() {
    // Two jobs, each two kernels of 10^15 ns (11.6 days) on two streams:
    // 5·10^8 slices of 2 ms each to replay one by one.
    let day = 86_400_000_000_000i64;
    let trace = |name: &str| {
        let mut t = fixture::empty(name, 0);
        t.kernels = vec![k(7, 1, 0, 0, 1_000_000_000_000_000), k(8, 2, 0, 0, day)];
        t
    };
    let jobs = vec![Job::from_trace(&trace("a")), Job::from_trace(&trace("b"))];
    let opts = SimOptions {
        policies: PolicyKind::ALL.to_vec(),
        model: GpuModel::default(),
        record_segments: true,
    };
    let started = std::time::Instant::now();
    let report = simulate(&jobs, &[0, 0], &opts).unwrap();
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    let timeslice: Vec<i64> = report
        .jobs
        .iter()
        .filter(|r| r.policy == PolicyKind::Timeslice)
        .map(|r| r.jct_ns)
        .collect();
    // Both jobs' 10^15 ns kernels share the GPU: each finishes after about
    // twice its length (plus the switches, 25 µs per 2 ms slice).
    for jct in timeslice {
        assert!(
            (2_000_000_000_000_000..2_030_000_000_000_000).contains(&jct),
            "{jct}"
        );
    }
}

#[test]
fn a_replay_past_2_pow_62_ns_is_an_error_not_an_overflow() {
    // Kernels of 2^61 ns (within the reader's bounds): alone, one job takes
    // 2^61 ns; two under time slicing take more than 2^62.
    let long = 1i64 << 61;
    let trace = |name: &str| {
        let mut t = fixture::empty(name, 0);
        t.kernels = vec![k(7, 1, 0, 0, long)];
        t
    };
    let jobs = vec![Job::from_trace(&trace("a")), Job::from_trace(&trace("b"))];
    let model = GpuModel::default();
    let alone = run(&jobs[..1], &[0], &model, 1);
    assert_eq!(alone.jobs[0].finish_ns, long);
    let mut policy = PolicyKind::Timeslice.build(&model);
    let err = Engine::new(&jobs, &[0, 0], RunOptions::default())
        .run(policy.as_mut())
        .unwrap_err();
    assert!(matches!(err, RunError::TooLong { .. }), "{err:?}");
    assert!(err.is_bad_input());
    let msg = err.to_string();
    assert!(
        msg.contains(&format!("past {MAX_SIM_NS} ns (2^62 ns, 146 years)")),
        "{msg}"
    );
    // Arrivals beyond the limit, too.
    let mut policy = PolicyKind::Fikit.build(&model);
    let err = Engine::new(&jobs, &[0, MAX_SIM_NS + 1], RunOptions::default())
        .run(policy.as_mut())
        .unwrap_err();
    assert!(matches!(err, RunError::TooLong { .. }), "{err:?}");
}

#[test]
fn fikit_sums_the_predictions_of_kernels_of_2_pow_61_ns_without_overflow() {
    // One job of four 2^61 ns kernels on four streams, launched together:
    // FIKIT keeps the sum of its queued kernels' predictions (4 * 2^61 ns,
    // past i64), and alone it ends as under exclusive.
    let long = 1i64 << 61;
    let mut t = fixture::empty("a", 0);
    t.kernels = (0..4).map(|s| k(7 + s, 1 + s, 0, 0, long)).collect();
    let jobs = vec![Job::from_trace(&t)];
    let model = GpuModel::default();
    let jct = |kind: PolicyKind| {
        let mut policy = kind.build(&model);
        Engine::new(&jobs, &[0], RunOptions::default())
            .run(policy.as_mut())
            .unwrap()
            .jobs[0]
            .jct_ns()
    };
    assert_eq!(jct(PolicyKind::Fikit), jct(PolicyKind::Exclusive));
}
