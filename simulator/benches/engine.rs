//! Simulated kernel events per second of the discrete-event engine, one core.
//!
//! 2, 4 and 8 co-located jobs on one GPU run under each policy
//! (`simulate::run_policy`; exclusive: each job alone, `simulate::run_isolated`,
//! as every command runs it), on the shipped H200 model (MPS block by block
//! with its concurrent-kernel slowdown above 0, so the slowdown's
//! bookkeeping runs):
//! - `shipped_h200`: the first 2, 4 or 8 `traces/h200/*.parquet` at the
//!   workspace root, in path order (synthetic jobs stand in when it holds
//!   too few);
//! - `synthetic_200k`: 200 000 synthetic kernels split evenly over the jobs
//!   (`FIKIT_BENCH_KERNELS` overrides the total), built with
//!   `fikit_trace::fixture`.
//!
//! The counter is the events the engine processed (`RunResult::events`), so divan prints items/s.
//!
//! `cargo bench -p fikit-sim --bench engine`; `FIKIT_BENCH_CASE='mps x8'` runs
//! one policy and job count only (for a profiler). The target is at least
//! 10 million events per second for every policy at every job count.

use std::fmt;
use std::path::PathBuf;
use std::sync::OnceLock;

use divan::Bencher;
use divan::counter::ItemsCount;
use fikit_sim::policy::PolicyKind;
use fikit_sim::sim::gpu::GpuModel;
use fikit_sim::sim::job::Job;
use fikit_sim::sim::simulate::{run_isolated, run_policy};
use fikit_sim::sim::sweep::{self, SweepOptions};
use fikit_trace::{Kernel, Trace, fixture};

/// Jobs per GPU the benches run.
const JOBS: [usize; 3] = [2, 4, 8];

fn main() {
    // Only the job counts of the cases that run (`FIKIT_BENCH_CASE`): the
    // others' workloads would be loaded for nothing.
    for n in JOBS.into_iter().filter(|&n| cases().any(|c| c.jobs == n)) {
        for w in [shipped(n), synthetic_jobs(n)] {
            let kernels: Vec<String> = w
                .jobs
                .iter()
                .map(|j| j.kernel_count().to_string())
                .collect();
            eprintln!("{}: {} kernels", w.source, kernels.join(" + "));
        }
    }
    divan::main();
}

/// Jobs sharing one GPU.
struct Workload {
    source: String,
    jobs: Vec<Job>,
}

/// The first `n` shipped H200 traces; synthetic jobs when `traces/h200/` holds fewer.
fn shipped(n: usize) -> &'static Workload {
    static W: [OnceLock<Workload>; JOBS.len()] = [const { OnceLock::new() }; JOBS.len()];
    W[slot(n)].get_or_init(|| match shipped_jobs(n) {
        Some(w) => w,
        None => {
            let w = synthetic_jobs(n);
            Workload {
                source: format!("too few shipped traces; {}", w.source),
                jobs: w.jobs.clone(),
            }
        }
    })
}

/// `n` synthetic jobs sharing `FIKIT_BENCH_KERNELS` (default 200 000) kernels evenly.
fn synthetic_jobs(n: usize) -> &'static Workload {
    static W: [OnceLock<Workload>; JOBS.len()] = [const { OnceLock::new() }; JOBS.len()];
    W[slot(n)].get_or_init(|| {
        let total = std::env::var("FIKIT_BENCH_KERNELS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(200_000usize);
        let per_job = (total / n).max(1);
        Workload {
            source: format!("{n} synthetic jobs"),
            jobs: (0..n)
                .map(|i| {
                    let name = format!("job{i}");
                    Job::from_trace(&synthetic(&name, i as u8, per_job, i as u64 + 1))
                })
                .collect(),
        }
    })
}

/// The index of `n` in [`JOBS`].
fn slot(n: usize) -> usize {
    JOBS.iter()
        .position(|&j| j == n)
        .expect("a job count of JOBS")
}

/// The first `n` traces of `traces/h200/`, if it holds that many.
fn shipped_jobs(n: usize) -> Option<Workload> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../traces/h200"));
    let files = fikit_trace::discover(&[dir]).ok()?;
    let mut jobs = Vec::new();
    for f in files.iter().take(n) {
        match fikit_trace::read_trace(f) {
            Ok(t) => jobs.push(Job::from_trace(&t)),
            Err(e) => eprintln!("skipping {}: {e}", f.display()),
        }
    }
    (jobs.len() == n).then(|| Workload {
        source: format!("the first {n} of traces/h200/"),
        jobs,
    })
}

/// A deterministic pseudo-random sequence (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// `n` kernels in iterations of 50 on one stream: each launched after 2-10 µs
/// of host time (the GPU queue runs ahead or drains, so some kernels follow at
/// once and some leave gaps), 5-60 µs long, from 16 kernel keys; each iteration
/// ends with a stream synchronization and 20-200 µs of host work.
fn synthetic(name: &str, priority: u8, n: usize, seed: u64) -> Trace {
    const NAMES: [&str; 16] = [
        "conv1", "conv2", "conv3", "bn", "relu", "pool", "gemm1", "gemm2", "softmax", "add", "mul",
        "norm", "attn", "gelu", "copy", "reduce",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ seed);
    let mut t = fixture::empty(name, priority);
    t.kernels.reserve(n);
    let (mut host, mut gpu_free) = (0i64, 0i64);
    let mut corr = 1u32;
    for i in 0..n {
        host += 2_000 + rng.below(8_000) as i64;
        let start = host.max(gpu_free) + 1_000;
        let end = start + 5_000 + rng.below(55_000) as i64;
        let mut k: Kernel = fixture::kernel(
            NAMES[rng.below(16) as usize],
            7,
            corr,
            Some(host),
            start,
            end,
        );
        k.launch.as_mut().expect("launched").end_ns = host + 1_000;
        t.kernels.push(k);
        corr += 1;
        gpu_free = end;
        host += 1_000;
        if i % 50 == 49 || i + 1 == n {
            t.syncs
                .push(fixture::stream_sync(7, corr, host, gpu_free + 3_000));
            corr += 1;
            host = gpu_free + 3_000 + 20_000 + rng.below(180_000) as i64;
        }
    }
    t
}

/// The shipped H200 model (its MPS concurrent-kernel slowdown is above 0).
fn h200() -> &'static GpuModel {
    static M: OnceLock<GpuModel> = OnceLock::new();
    M.get_or_init(|| {
        let (_, m) = GpuModel::shipped_for("NVIDIA H200").expect("the shipped H200 model");
        assert!(
            m.corun_slowdown > 0.0,
            "the H200 model has a concurrent-kernel slowdown"
        );
        m
    })
}

/// One bench case: a policy and how many jobs share the GPU.
#[derive(Clone, Copy)]
struct Case {
    kind: PolicyKind,
    jobs: usize,
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} x{}", self.kind.as_str(), self.jobs)
    }
}

/// Every policy at every job count of [`JOBS`]; `FIKIT_BENCH_CASE` (say
/// `mps x8`) keeps the one case named, to profile it alone.
fn cases() -> impl Iterator<Item = Case> {
    let only = std::env::var("FIKIT_BENCH_CASE").ok();
    JOBS.into_iter()
        .flat_map(|jobs| {
            PolicyKind::ALL
                .into_iter()
                .map(move |kind| Case { kind, jobs })
        })
        .filter(move |c| only.as_ref().is_none_or(|o| *o == c.to_string()))
}

/// Runs the jobs of `w` under `kind` on the H200 model as `fikit-sim` runs
/// them, counting the engine's events: together for a sharing policy, each
/// alone for exclusive (the product never puts two jobs in one exclusive
/// run: `simulate`, the sweeps and the exports all run each job alone).
fn bench_jobs(bencher: Bencher, w: &Workload, kind: PolicyKind) {
    let model = h200();
    let arrivals = vec![0; w.jobs.len()];
    let run = |jobs: &[Job]| -> u64 {
        if kind == PolicyKind::Exclusive {
            run_isolated(jobs, model)
                .expect("runs")
                .iter()
                .map(|r| r.events)
                .sum()
        } else {
            run_policy(jobs, &arrivals, kind, model, false)
                .expect("runs")
                .events
        }
    };
    let events = run(&w.jobs);
    bencher
        .counter(ItemsCount::new(events))
        .bench(|| run(divan::black_box(&w.jobs)));
}

/// The first 2, 4 or 8 shipped H200 traces under each policy.
#[divan::bench(args = cases(), sample_count = 10)]
fn shipped_h200(bencher: Bencher, case: Case) {
    bench_jobs(bencher, shipped(case.jobs), case.kind);
}

/// 2, 4 or 8 synthetic jobs sharing 200 000 kernels under each policy.
#[divan::bench(args = cases(), sample_count = 10)]
fn synthetic_200k(bencher: Bencher, case: Case) {
    bench_jobs(bencher, synthetic_jobs(case.jobs), case.kind);
}

/// Every shipped trace, loaded once (the synthetic pair when none ship).
fn all_shipped() -> &'static Vec<Job> {
    static W: OnceLock<Vec<Job>> = OnceLock::new();
    W.get_or_init(|| {
        let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../traces"));
        let files = fikit_trace::discover(&[dir]).unwrap_or_default();
        let jobs: Vec<Job> = files
            .iter()
            .filter_map(|f| fikit_trace::read_trace(f).ok())
            .map(|t| Job::from_trace(&t))
            .collect();
        if jobs.len() >= 2 {
            jobs
        } else {
            synthetic_jobs(2).jobs.clone()
        }
    })
}

/// The pair sweep (`fikit-sim sweep`: every ordered pair of the shipped
/// traces, every policy) on a pool of 1 and of 2 worker threads, traces
/// already loaded: the ratio of the two medians is the sweep's scaling. The
/// issue's target is at least 1.8x on 2 cores.
#[divan::bench(args = [1, 2], sample_count = 10)]
fn sweep_all_pairs(bencher: Bencher, threads: usize) {
    let jobs = all_shipped();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool");
    let opts = SweepOptions {
        policies: PolicyKind::ALL.to_vec(),
        model: GpuModel::default(),
        progress: false,
    };
    bencher.bench(|| pool.install(|| sweep::pairs(divan::black_box(jobs), &opts).expect("runs")));
}
