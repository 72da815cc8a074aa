//! Writes a synthetic trace set for large-input tests of the reader and the
//! simulator (simulator/README.md, "Large inputs"):
//!
//! ```sh
//! cargo run --release -p fikit-trace --example synth -- --kernels 50000000 --jobs 10 OUT_DIR
//! ```
//!
//! `--kernels` in all, split evenly over `--jobs` traces `synth-J.parquet`.
//! Job 0 is a latency-critical server (priority 0, 40 short kernels per request,
//! host think time between requests); the others are training-like loops (priority
//! 9, 400 kernels per iteration). Each iteration: a host-to-device copy, then
//! its kernels (90% on one stream, 10% on a second), each with its launch call
//! (the `launch_*` columns), from a set of 64 kernel shapes with fixed mean
//! durations (3–200 µs, ±10% jitter), then a blocking context synchronization.
//! No `api` rows: the kernels' `launch_*` columns carry their launches, and the
//! synchronizations are the `sync` rows, which is all the replay reads.
//! The output is deterministic (`--seed`, default 1). Written in batches of
//! whole iterations, so memory stays small whatever `--kernels` is.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use fikit_trace::polars::prelude::*;
use fikit_trace::{
    CopyKind, HostCall, Kernel, MemOp, Placement, Sync, SyncKind, Trace, fixture, kernel_key,
    metadata_pairs, to_dataframe,
};

/// Kernels per batch written.
const BATCH_KERNELS: usize = 1 << 20;

struct Args {
    kernels: u64,
    jobs: u64,
    seed: u64,
    out: PathBuf,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        kernels: 1_000_000,
        jobs: 4,
        seed: 1,
        out: PathBuf::new(),
    };
    let mut it = std::env::args().skip(1);
    let mut out = None;
    while let Some(a) = it.next() {
        let mut num = |name: &str| -> Result<u64, String> {
            let v = it.next().ok_or(format!("{name} needs a value"))?;
            v.parse()
                .map_err(|_| format!("{name}: not a number: {v:?}"))
        };
        match a.as_str() {
            "--kernels" => args.kernels = num("--kernels")?,
            "--jobs" => args.jobs = num("--jobs")?,
            "--seed" => args.seed = num("--seed")?,
            _ if a.starts_with("--") => return Err(format!("unknown option {a}")),
            _ => out = Some(PathBuf::from(a)),
        }
    }
    args.out = out.ok_or("the output folder is missing")?;
    if args.jobs == 0 || args.kernels < args.jobs {
        return Err("--jobs must be at least 1 and at most --kernels".into());
    }
    Ok(args)
}

/// xorshift64*: small, fast, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `[lo, hi)`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo) as u64) as i64
    }
}

/// One of the kernel shapes jobs draw from.
struct Shape {
    name: String,
    demangled: String,
    grid: [u32; 3],
    block: [u32; 3],
    registers: u32,
    shared: u32,
    key: u64,
    mean_ns: i64,
}

fn shapes() -> Vec<Shape> {
    let ops = [
        "gemm",
        "conv",
        "relu",
        "bn_fw",
        "softmax",
        "layernorm",
        "add",
        "copy",
    ];
    let mut rng = Rng(0x5EED);
    (0..64)
        .map(|i| {
            let op = ops[i % ops.len()];
            let name = format!(
                "_ZN5synth{}{op}_{i}EPfS0_i",
                op.len() + 2 + i.to_string().len()
            );
            let grid = [1 << (rng.next() % 10), 1 + (rng.next() % 4) as u32, 1];
            let block = [32 << (rng.next() % 4), 1, 1];
            let registers = 16 + 8 * (rng.next() % 16) as u32;
            let shared = 1024 * (rng.next() % 48) as u32;
            Shape {
                key: kernel_key(&name, grid, block, shared, 0, registers),
                demangled: format!("synth::{op}_{i}(float*, float*, int)"),
                name,
                grid,
                block,
                registers,
                shared,
                mean_ns: rng.range(3_000, 200_000),
            }
        })
        .collect()
}

/// Appends one iteration of `kernels` kernels to `t`, from host time `host`,
/// numbering correlation ids from `*corr` on; returns the host time after it.
fn iteration(
    t: &mut Trace,
    rng: &mut Rng,
    shapes: &[Shape],
    kernels: usize,
    mut host: i64,
    corr: &mut u32,
    scale: i64,
) -> i64 {
    const THREAD: u64 = 7;
    let (main, side) = (
        Placement {
            device: 0,
            context: 1,
            stream: 7,
        },
        Placement {
            device: 0,
            context: 1,
            stream: 13,
        },
    );
    let mut last_end = [i64::MIN; 2];
    // The input batch: a host-to-device copy.
    let launch = HostCall {
        start_ns: host,
        end_ns: host + 4_000,
        thread_id: THREAD,
    };
    let start = host + rng.range(2_000, 5_000);
    let end = start + rng.range(20_000, 60_000);
    t.memops.push(MemOp {
        start_ns: start,
        end_ns: end,
        placement: main,
        correlation_id: *corr,
        copy_kind: Some(CopyKind::HtoD),
        bytes: 4 << 20,
        launch: Some(launch),
    });
    *corr += 1;
    last_end[0] = end;
    host = launch.end_ns;
    for _ in 0..kernels {
        let s = &shapes[(rng.next() % shapes.len() as u64) as usize];
        let lane = usize::from(rng.next() % 10 == 0);
        host += rng.range(1_000, 6_000);
        let launch = HostCall {
            start_ns: host,
            end_ns: host + rng.range(2_000, 4_000),
            thread_id: THREAD,
        };
        host = launch.end_ns;
        let start = (launch.start_ns + rng.range(3_000, 8_000)).max(last_end[lane]);
        let mean = s.mean_ns / scale;
        let dur = mean * 9 / 10 + rng.range(0, mean / 5 + 1);
        last_end[lane] = start + dur;
        t.kernels.push(Kernel {
            start_ns: start,
            end_ns: start + dur,
            placement: if lane == 0 { main } else { side },
            correlation_id: *corr,
            name: s.name.clone(),
            demangled_name: s.demangled.clone(),
            grid: s.grid,
            block: s.block,
            registers_per_thread: s.registers,
            static_shared_bytes: s.shared,
            dynamic_shared_bytes: 0,
            launch: Some(launch),
            kernel_key: s.key,
            shared_config_bytes: None,
        });
        *corr += 1;
    }
    // The host waits for the GPU: the iteration's end.
    let sync_start = host + 1_000;
    let sync_end = sync_start.max(last_end[0].max(last_end[1])) + rng.range(3_000, 8_000);
    t.syncs.push(Sync {
        kind: SyncKind::ContextSynchronize,
        start_ns: sync_start,
        end_ns: sync_end,
        context: 1,
        stream: None,
        thread_id: Some(THREAD),
        correlation_id: *corr,
    });
    *corr += 1;
    sync_end
}

/// The columns the replay (`fikit_sim::sim::job::Job::from_trace`) takes its
/// values from: times, placement, correlation, launch start, kernel identity
/// and the launch shape the SM demand comes from.
const REPLAY_COLUMNS: [&str; 17] = [
    "kind",
    "start_ns",
    "end_ns",
    "device",
    "context",
    "stream",
    "correlation_id",
    "grid_x",
    "grid_y",
    "grid_z",
    "block_x",
    "block_y",
    "block_z",
    "registers_per_thread",
    "static_shared_bytes",
    "dynamic_shared_bytes",
    "kernel_key",
];

/// What a written trace holds.
#[derive(Default)]
struct Written {
    rows: u64,
    /// In-memory (Arrow/Polars) bytes of every column.
    all_bytes: u64,
    /// In-memory bytes of [`REPLAY_COLUMNS`] and `launch_start_ns`.
    replay_bytes: u64,
}

/// Writes job `j` with `kernels` kernels to `path`.
fn write_job(
    path: &Path,
    j: u64,
    kernels: u64,
    seed: u64,
    shapes: &[Shape],
) -> Result<Written, String> {
    let err = |e: PolarsError| format!("{}: {e}", path.display());
    let serving = j == 0;
    // Batch-1 serving: short kernels (a tenth of the shapes' means), so the
    // host's launches leave the GPU mostly idle; training: full-length kernels.
    let (per_iter, think, scale) = if serving {
        (40, 150_000, 10)
    } else {
        (400, 20_000, 1)
    };
    let mut meta = fixture::metadata(&format!("synth-{j}"), if serving { 0 } else { 9 });
    meta.pid = 1000 + j as u32;
    meta.producer = "fikit-trace example synth".into();
    let mut t = Trace {
        meta,
        kernels: Vec::new(),
        memops: Vec::new(),
        api_calls: Vec::new(),
        syncs: Vec::new(),
        kernel_metrics: Default::default(),
    };
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (j + 1));
    let mut file = Some(File::create(path).map_err(|e| format!("{}: {e}", path.display()))?);
    let mut writer = None;
    let (mut left, mut host, mut corr) = (kernels, 1_000_000i64, 1u32);
    let mut out = Written::default();
    while left > 0 {
        while left > 0 && t.kernels.len() < BATCH_KERNELS {
            let n = per_iter.min(left as usize);
            host = iteration(&mut t, &mut rng, shapes, n, host, &mut corr, scale) + think;
            left -= n as u64;
        }
        let mut df = to_dataframe(&t).map_err(err)?;
        let w = match &mut writer {
            Some(w) => w,
            None => writer.insert(
                ParquetWriter::new(BufWriter::new(file.take().expect("opened once")))
                    .with_compression(ParquetCompression::Zstd(None))
                    .with_key_value_metadata(Some(KeyValueMetadata::from_static(metadata_pairs(
                        &t.meta,
                    ))))
                    .batched(df.schema())
                    .map_err(err)?,
            ),
        };
        df.rechunk_mut();
        w.write_batch(&df).map_err(err)?;
        out.rows += df.height() as u64;
        out.all_bytes += df.estimated_size() as u64;
        let replay = REPLAY_COLUMNS.iter().chain(&["launch_start_ns"]);
        out.replay_bytes += df.select(replay.copied()).map_err(err)?.estimated_size() as u64;
        t.kernels.clear();
        t.memops.clear();
        t.syncs.clear();
    }
    if let Some(w) = writer {
        w.finish().map_err(err)?;
    }
    Ok(out)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("synth: {e}\nusage: synth [--kernels N] [--jobs J] [--seed S] OUT_DIR");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!("synth: {}: {e}", args.out.display());
        return ExitCode::FAILURE;
    }
    let shapes = shapes();
    let mut total = Written::default();
    for j in 0..args.jobs {
        let kernels = args.kernels / args.jobs + u64::from(j < args.kernels % args.jobs);
        let path = args.out.join(format!("synth-{j}.parquet"));
        match write_job(&path, j, kernels, args.seed, &shapes) {
            Ok(w) => {
                eprintln!(
                    "synth: {} ({kernels} kernels, {} rows)",
                    path.display(),
                    w.rows
                );
                total.rows += w.rows;
                total.all_bytes += w.all_bytes;
                total.replay_bytes += w.replay_bytes;
            }
            Err(e) => {
                eprintln!("synth: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    eprintln!(
        "synth: {} kernels, {} rows in {} traces; in memory: every column {} bytes, \
         the columns the replay reads {} bytes",
        args.kernels, total.rows, args.jobs, total.all_bytes, total.replay_bytes
    );
    ExitCode::SUCCESS
}
