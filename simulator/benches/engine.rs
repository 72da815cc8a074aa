//! Simulated kernel events per second of the discrete-event engine, one core.
//!
//! Two co-located jobs run under each policy (`simulate::run_policy`):
//! - `shipped_traces`: the first two `*.parquet` under `traces/` at the
//!   workspace root, in path order (one trace is paired with itself; with none,
//!   the synthetic pair stands in);
//! - `synthetic_100k`: two synthetic jobs of 100 000 kernels each
//!   (`FIKIT_BENCH_KERNELS` overrides the count), built with `fikit_trace::fixture`.
//!
//! - `mps_h200_model`: both pairs under MPS with the shipped H200 model
//!   (`corun_slowdown` above 0: the slowdown's bookkeeping runs).
//!
//! The counter is the events the engine processed (`RunResult::events`), so divan prints items/s.
//!
//! `cargo bench -p fikit-sim --bench engine`; the target is at least
//! 10 million events per second.

use std::path::PathBuf;
use std::sync::OnceLock;

use divan::Bencher;
use divan::counter::ItemsCount;
use fikit_sim::policy::PolicyKind;
use fikit_sim::sim::gpu::GpuModel;
use fikit_sim::sim::job::Job;
use fikit_sim::sim::simulate::run_policy;
use fikit_sim::sim::sweep::{self, SweepOptions};
use fikit_trace::{Kernel, Trace, fixture};

fn main() {
    for w in [shipped(), synthetic_pair()] {
        eprintln!(
            "{}: {} + {} kernels",
            w.source,
            w.jobs[0].kernel_count(),
            w.jobs[1].kernel_count()
        );
    }
    divan::main();
}

struct Workload {
    source: String,
    jobs: Vec<Job>,
    model: GpuModel,
}

impl Workload {
    fn new(source: String, mut jobs: Vec<Job>) -> Workload {
        if jobs[1].priority == jobs[0].priority {
            jobs[1].priority = jobs[0].priority.saturating_add(1);
        }
        Workload {
            source,
            jobs,
            model: GpuModel::default(),
        }
    }
}

/// The shipped pair; the synthetic one when `traces/` holds none.
fn shipped() -> &'static Workload {
    static W: OnceLock<Workload> = OnceLock::new();
    W.get_or_init(|| match shipped_jobs() {
        Some((source, jobs)) => Workload::new(source, jobs),
        None => {
            let w = synthetic_pair();
            Workload::new(format!("no shipped traces; {}", w.source), w.jobs.clone())
        }
    })
}

/// Two synthetic jobs of `FIKIT_BENCH_KERNELS` (default 100 000) kernels each.
fn synthetic_pair() -> &'static Workload {
    static W: OnceLock<Workload> = OnceLock::new();
    W.get_or_init(|| {
        let n = std::env::var("FIKIT_BENCH_KERNELS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(100_000);
        Workload::new(
            format!("synthetic, {n} kernels per job"),
            vec![
                Job::from_trace(&synthetic("infer", 0, n, 1)),
                Job::from_trace(&synthetic("train", 5, n, 2)),
            ],
        )
    })
}

/// The first two shipped traces (one paired with itself), if any.
fn shipped_jobs() -> Option<(String, Vec<Job>)> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../traces"));
    let files = fikit_trace::discover(&[dir]).ok()?;
    let mut jobs = Vec::new();
    let mut names = Vec::new();
    for f in files.iter().take(2) {
        match fikit_trace::read_trace(f) {
            Ok(t) => {
                jobs.push(Job::from_trace(&t));
                names.push(f.display().to_string());
            }
            Err(e) => eprintln!("skipping {}: {e}", f.display()),
        }
    }
    match jobs.len() {
        0 => None,
        1 => {
            jobs.push(jobs[0].clone());
            Some((format!("{} (twice)", names[0]), jobs))
        }
        _ => Some((names.join(" + "), jobs)),
    }
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

const POLICIES: [PolicyKind; 5] = PolicyKind::ALL;

/// Runs both jobs of `w` under `kind` on `model`, counting the engine's events.
fn bench_pair(bencher: Bencher, w: &Workload, kind: PolicyKind, model: &GpuModel) {
    let arrivals = [0, 0];
    let events = run_policy(&w.jobs, &arrivals, kind, model, false)
        .expect("runs")
        .events;
    bencher.counter(ItemsCount::new(events)).bench(|| {
        run_policy(divan::black_box(&w.jobs), &arrivals, kind, model, false).expect("runs")
    });
}

/// The first two shipped traces under each policy.
#[divan::bench(args = POLICIES, sample_count = 20)]
fn shipped_traces(bencher: Bencher, kind: PolicyKind) {
    let w = shipped();
    bench_pair(bencher, w, kind, &w.model);
}

/// Two synthetic 100k-kernel jobs under each policy.
#[divan::bench(args = POLICIES, sample_count = 10)]
fn synthetic_100k(bencher: Bencher, kind: PolicyKind) {
    let w = synthetic_pair();
    bench_pair(bencher, w, kind, &w.model);
}

/// MPS with the shipped H200 model: block by block with its
/// concurrent-kernel slowdown, the path the default model (`corun_slowdown`
/// 0) skips.
#[divan::bench(args = ["shipped", "synthetic"], sample_count = 20)]
fn mps_h200_model(bencher: Bencher, pair: &str) {
    let w = if pair == "shipped" {
        shipped()
    } else {
        synthetic_pair()
    };
    let (_, model) = GpuModel::shipped_for("NVIDIA H200").expect("the shipped H200 model");
    bench_pair(bencher, w, PolicyKind::Mps, &model);
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
            synthetic_pair().jobs.clone()
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
