//! Measuring the GPU's scheduling parameters.
//!
//! Time slicing: `n` processes each run the probe kernel (every SM busy,
//! block 0 logging when its context was switched out) at the same time. In
//! each probe's log, the intervals it ran are its time slices, and the
//! intervals it was away are the other `n - 1` processes' slices plus `n`
//! context switches: `away = (n - 1) * quantum + n * switch`. So the quantum is
//! the median run interval and the switch cost `(away - (n - 1) * quantum) / n`.

use serde::{Deserialize, Serialize};

use crate::ReplayError;
use crate::gpu::{DeviceBuffer, Gpu, LoadMode, PREEMPT_JUMP_NS, Stream};

/// Most switch-outs a probe logs.
pub const MAX_JUMPS: u32 = 4096;

/// What one probe kernel saw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeLog {
    /// Start, GPU global timer ns.
    pub start: u64,
    /// End, GPU global timer ns.
    pub end: u64,
    /// Intervals it was switched out: (from, to).
    pub away: Vec<(u64, u64)>,
}

impl ProbeLog {
    /// The intervals it ran between switch-outs, ns (the first and last,
    /// which the probe's own start and end cut, left out).
    pub fn slices(&self) -> Vec<u64> {
        self.away
            .windows(2)
            .map(|w| w[1].0.saturating_sub(w[0].1))
            .collect()
    }

    /// How long each switch-out lasted, ns.
    pub fn away_ns(&self) -> Vec<u64> {
        self.away.iter().map(|(a, b)| b - a).collect()
    }
}

/// Runs the probe on every SM for `run_ns` and returns its log.
pub fn probe(gpu: &Gpu, run_ns: u64) -> Result<ProbeLog, ReplayError> {
    let s = gpu.stream(false)?;
    let words = 3 + 2 * MAX_JUMPS as usize;
    let out = gpu.alloc(8 * words)?;
    gpu.launch_probe(s, gpu.sm_count, run_ns, PREEMPT_JUMP_NS, out, MAX_JUMPS)?;
    gpu.synchronize()?;
    let w = gpu.read_u64(out, words)?;
    let n = (w[2] as usize).min(MAX_JUMPS as usize);
    Ok(ProbeLog {
        start: w[0],
        end: w[1],
        away: (0..n).map(|i| (w[3 + 2 * i], w[4 + 2 * i])).collect(),
    })
}

/// Host time of one launch call of the synthetic kernel, ns: the median over
/// `n` launches into an idle stream.
pub fn launch_cost(gpu: &Gpu, n: usize) -> Result<i64, ReplayError> {
    let s = gpu.stream(false)?;
    let mut t = Vec::with_capacity(n);
    for _ in 0..n {
        let a = crate::now_ns();
        gpu.launch_spin(s, [1, 1, 1], [32, 1, 1], 0, 0, None, 0)?;
        t.push(crate::now_ns() - a);
        gpu.synchronize()?;
    }
    t.sort_unstable();
    Ok(t.get(t.len() / 2).copied().unwrap_or(0))
}

/// Time-slice parameters estimated from the logs of `n` probes run at once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SliceEstimate {
    /// Processes that shared the GPU.
    pub processes: usize,
    /// Median slice, ns.
    pub quantum_ns: i64,
    /// Median time away, ns.
    pub away_ns: i64,
    /// Switch cost, ns: `(away - (n - 1) * quantum) / n`, at least 0.
    pub switch_ns: i64,
    /// Slices the medians came from.
    pub samples: usize,
}

fn median(mut v: Vec<u64>) -> Option<u64> {
    v.sort_unstable();
    v.get(v.len() / 2).copied()
}

/// Estimates the quantum and switch cost from `logs` of `n` probes that ran at
/// the same time; `None` when they never took turns.
pub fn estimate(logs: &[ProbeLog]) -> Option<SliceEstimate> {
    let n = logs.len();
    let slices: Vec<u64> = logs.iter().flat_map(|l| l.slices()).collect();
    let away: Vec<u64> = logs.iter().flat_map(|l| l.away_ns()).collect();
    let samples = slices.len();
    let q = median(slices)? as i64;
    let a = median(away)? as i64;
    let s = ((a - (n as i64 - 1) * q) / n.max(1) as i64).max(0);
    Some(SliceEstimate {
        processes: n,
        quantum_ns: q,
        away_ns: a,
        switch_ns: s,
        samples,
    })
}

/// Keeps the GPU busy for `run_ns` with back-to-back synthetic kernels of
/// `kernel_ns` each, filling every SM (one block per SM); returns how many ran.
pub fn busy(gpu: &Gpu, kernel_ns: u64, run_ns: u64) -> Result<u64, ReplayError> {
    let s = gpu.stream(false)?;
    let end = crate::now_ns() + run_ns as i64;
    let mut n = 0u64;
    let e = gpu.event(false)?;
    while crate::now_ns() < end {
        // Keep a few kernels queued, no more, so the stream never runs dry
        // and the host stops soon after `run_ns`.
        for _ in 0..4 {
            gpu.launch_spin(s, [gpu.sm_count, 1, 1], [32, 1, 1], 0, kernel_ns, None, 0)?;
            n += 1;
        }
        gpu.record(e, s)?;
        gpu.wait(e)?;
    }
    Ok(n)
}

/// The calibration load [`hold_load`] kept running.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HeldLoad {
    /// Its blocks, all resident at once.
    pub blocks: u32,
    /// Its share of the device's resident-block slots (`blocks` over
    /// the load kernel's blocks per SM times the SMs).
    pub demand: f64,
    /// Load kernels launched, each `kernel_ns` long.
    pub kernels: u64,
}

/// Keeps a calibration load running (`compute`: the dependent FMAs of
/// [`LoadKind::Compute`]'s load; else the memory-streaming load beside which
/// [`corun`] times its latency-bound victim, [`LoadKind::Latency`]'s) on a
/// share `demand` of the device's block slots, in kernels of `kernel_ns`
/// launched back to back on one stream, until `stop` returns true (checked
/// once a kernel). Another process's kernels then run beside a load of
/// known share, as calibrate's victims did: a job's own kernels become the
/// victims (`fikit-sim load`, the sensitivity pass). `carveout`: the load
/// kernel's preferred split of L1 and shared memory
/// ([`Gpu::set_load_carveout`]); `None` leaves the driver's default.
pub fn hold_load(
    gpu: &Gpu,
    compute: bool,
    demand: f64,
    kernel_ns: u64,
    carveout: Option<i32>,
    stop: &dyn Fn() -> bool,
) -> Result<HeldLoad, ReplayError> {
    if let Some(c) = carveout {
        gpu.set_load_carveout(c)?;
    }
    let mode = if compute {
        LoadMode::Compute
    } else {
        LoadMode::Stream
    };
    let threads = CORUN_THREADS;
    let per_sm = gpu.load_blocks_per_sm(threads)?.max(1);
    let capacity = f64::from(per_sm) * f64::from(gpu.sm_count);
    let blocks = ((demand * capacity).round() as u32).clamp(1, capacity as u32);
    let buf = gpu.alloc(if compute { 4096 } else { LOAD_BYTES })?;
    let stamp = gpu.alloc(32)?;
    gpu.write_u64(stamp, &[u64::MAX, 0, u64::MAX, 0])?;
    let s = gpu.stream(false)?;
    let events = [gpu.event(false)?, gpu.event(false)?];
    let mut kernels = 0u64;
    // Two kernels in the stream at a time: the next is queued while one
    // runs, so the load never stops between them.
    for i in 0.. {
        gpu.launch_load(s, blocks, threads, mode, buf, 0, kernel_ns, stamp)?;
        gpu.record(events[i % 2], s)?;
        kernels += 1;
        if i > 0 {
            gpu.wait(events[(i + 1) % 2])?;
        }
        if stop() {
            break;
        }
    }
    gpu.synchronize()?;
    Ok(HeldLoad {
        blocks,
        demand: f64::from(blocks) / capacity,
        kernels,
    })
}

/// Runs one of calibrate's victims (`compute`: the dependent FMAs of
/// [`LoadKind::Compute`]; else the latency-bound pointer chase of
/// [`LoadKind::Latency`]; a quarter as many blocks as SMs, [`CORUN_THREADS`]
/// threads each) back to back, each run waited for, until `stop` returns
/// true (checked after each run); returns how many ran. `passes`: the
/// victim's passes per run (`None`: calibrate's, about 0.45 ms a run on
/// Hopper; fewer make runs short enough to lie inside a batch-1 job's
/// kernels). Under `fikit-profile`
/// beside another process's job, its runs' stretch is how hard that job's
/// kernels press on a latency-bound neighbour (`fikit-sim load --victim`,
/// the pressure pass).
pub fn hold_victim(
    gpu: &Gpu,
    compute: bool,
    passes: Option<u32>,
    stop: &dyn Fn() -> bool,
) -> Result<u64, ReplayError> {
    let threads = CORUN_THREADS;
    let blocks = (gpu.sm_count / 4).max(1);
    let (mode, default_passes, bytes) = if compute {
        (LoadMode::Compute, COMPUTE_PASSES, 4096)
    } else {
        (LoadMode::Chase, CHASE_PASSES, VICTIM_BYTES)
    };
    let passes = passes.unwrap_or(default_passes).max(1);
    let buf = gpu.alloc(bytes)?;
    if !compute {
        gpu.write_u64(buf, &chase_links(VICTIM_BYTES / 8))?;
    }
    let stamp = gpu.alloc(32)?;
    gpu.write_u64(stamp, &[u64::MAX, 0, u64::MAX, 0])?;
    let s = gpu.stream(false)?;
    let done = gpu.event(false)?;
    let mut runs = 0u64;
    while !stop() {
        gpu.launch_load(s, blocks, threads, mode, buf, passes, 0, stamp)?;
        gpu.record(done, s)?;
        gpu.wait(done)?;
        runs += 1;
    }
    Ok(runs)
}

/// Every `period_ns` for `run_ns`, launches one short kernel (`kernel_ns`,
/// one block) and waits for it; returns each one's host-measured latency
/// (launch to completion), ns: what a sparse, latency-bound job sees while
/// another context keeps the GPU busy.
pub fn sparse(
    gpu: &Gpu,
    kernel_ns: u64,
    period_ns: u64,
    run_ns: u64,
) -> Result<Vec<i64>, ReplayError> {
    let s = gpu.stream(false)?;
    let e = gpu.event(false)?;
    let start = crate::now_ns();
    let mut out = Vec::new();
    let mut next = start;
    while next < start + run_ns as i64 {
        crate::spin_until(next);
        let a = crate::now_ns();
        gpu.launch_spin(s, [1, 1, 1], [32, 1, 1], 0, kernel_ns, None, 0)?;
        gpu.record(e, s)?;
        gpu.wait(e)?;
        out.push(crate::now_ns() - a);
        next += period_ns as i64;
    }
    Ok(out)
}

/// What a concurrent-kernel probe's kernels do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadKind {
    /// The live replay's synthetic kernel: every block waits out a time on
    /// the global timer (moves no memory).
    Spin,
    /// Streams memory: reads and rewrites a buffer larger than the L2 cache.
    Memory,
    /// Dependent FMAs in registers (no memory traffic).
    Compute,
    /// A victim that chases pointers through a buffer larger than the L2
    /// cache (bound by memory latency, as a small inference kernel is more
    /// than by bandwidth) beside the memory-streaming load.
    Latency,
    /// The memory-streaming victim beside a pointer-chasing load: what a
    /// kernel that works memory hard feels beside kernels bound by memory
    /// latency, which keep few requests in flight (a busy job's kernels
    /// beside a batch-1 job's).
    ChaseLoad,
    /// The pointer-chasing victim beside the compute-bound load (dependent
    /// FMAs, no memory traffic): whether a kernel bound by memory latency
    /// slows beside work that fills the SMs' issue slots but not the memory
    /// system (a training job's matrix products move little from DRAM).
    LatencyCompute,
    /// The pointer-chasing victim beside a load streaming with 16-byte
    /// accesses, which moves more at the same share than the streaming load:
    /// how a latency-bound kernel slows beside a neighbour past the
    /// streaming load's traffic (resnet50 batch 128 streams 2.5 TB/s on an
    /// H100, the streaming load at most 2.1).
    LatencyWide,
}

impl LoadKind {
    /// Every kind, in the order calibrate measures them.
    pub const ALL: [LoadKind; 7] = [
        LoadKind::Spin,
        LoadKind::Memory,
        LoadKind::Compute,
        LoadKind::Latency,
        LoadKind::ChaseLoad,
        LoadKind::LatencyCompute,
        LoadKind::LatencyWide,
    ];

    /// What the victim's and the load's calibration kernels do (`None`: the
    /// spin kernel).
    fn modes(self) -> Option<(LoadMode, LoadMode)> {
        match self {
            LoadKind::Spin => None,
            LoadKind::Memory => Some((LoadMode::Stream, LoadMode::Stream)),
            LoadKind::Compute => Some((LoadMode::Compute, LoadMode::Compute)),
            LoadKind::Latency => Some((LoadMode::Chase, LoadMode::Stream)),
            LoadKind::ChaseLoad => Some((LoadMode::Stream, LoadMode::Chase)),
            LoadKind::LatencyCompute => Some((LoadMode::Chase, LoadMode::Compute)),
            LoadKind::LatencyWide => Some((LoadMode::Chase, LoadMode::Wide)),
        }
    }
}

/// Bytes a probe kernel of `mode` moves in `passes` passes over `buf_bytes`
/// with `blocks` blocks of `threads`: a stream (either width) reads and
/// rewrites the whole buffer each pass (the grid together); a chase loads one 8-byte link per
/// thread 64 times a pass (the bytes it asks for; DRAM moves at least a
/// 32-byte sector for each). `None` for the compute kernel.
pub fn probe_bytes(
    mode: LoadMode,
    buf_bytes: usize,
    blocks: u32,
    threads: u32,
    passes: u32,
) -> Option<f64> {
    match mode {
        LoadMode::Stream | LoadMode::Wide => Some(2.0 * buf_bytes as f64 * f64::from(passes)),
        LoadMode::Chase => {
            Some(f64::from(blocks) * f64::from(threads) * 64.0 * 8.0 * f64::from(passes))
        }
        LoadMode::Compute => None,
    }
}

/// Next indices of a pointer chase over `links` 64-bit words: each link
/// jumps `CHASE_STRIDE` words on (modulo `links`), so consecutive loads of
/// one thread fall in different DRAM pages and never in the same cache line.
pub fn chase_links(links: usize) -> Vec<u64> {
    (0..links as u64)
        .map(|i| (i + CHASE_STRIDE) % links as u64)
        .collect()
}

/// How far one link of the pointer chase jumps, words (about 8 MB).
const CHASE_STRIDE: u64 = 1_000_003;

/// A victim kernel's time beside a load kernel of another stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CorunPoint {
    /// The load's share of the device's resident-block slots (0: the victim alone).
    pub load_demand: f64,
    /// Victim runs that ran wholly while the load ran (all of them, alone).
    pub samples: usize,
    /// Median victim time, first block start to last block end, ns.
    pub victim_ns: i64,
    /// `victim_ns` over the victim's median alone.
    pub stretch: f64,
    /// Victim runs that started while the load ran but ended after the
    /// load's first block ended: slowed so much that they outlived it (a
    /// compute-saturated SM starves a newcomer's warps). Not in `samples`;
    /// their spans, lower bounds of the stretch beside the whole load, give
    /// `outlived_ns`.
    #[serde(default)]
    pub outlived: usize,
    /// Median span of the outlived runs, ns (0 without any): a lower bound
    /// of what the victim would take beside a load that did not end.
    #[serde(default)]
    pub outlived_ns: i64,
    /// The load's memory traffic running alone with these blocks, bytes/s
    /// ([`probe_bytes`] over its median span of fixed passes; 0 for a load
    /// that moves no memory, and at no load): what a real kernel's DRAM
    /// figures (`fikit-profile --metrics`) are set against.
    #[serde(default)]
    pub load_bytes_per_s: f64,
}

/// The concurrent-kernel slowdown of one kind of kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CorunFit {
    /// What victim and load do.
    pub kind: LoadKind,
    /// Victim blocks and threads per block.
    pub victim_blocks: u32,
    /// Threads per block of victim and load.
    pub threads: u32,
    /// The victim's share of the device's resident-block slots.
    pub victim_demand: f64,
    /// The victim alone, then beside each load.
    pub points: Vec<CorunPoint>,
    /// The victim's memory traffic alone, bytes/s ([`probe_bytes`] over its
    /// median time alone; 0 for a victim that moves no memory).
    #[serde(default)]
    pub victim_bytes_per_s: f64,
    /// Least-squares `c` of `stretch = 1 + c * load_demand` (through 1 at
    /// no load) over the points beside a load.
    pub slowdown: f64,
}

/// Least-squares `c` of `stretch = 1 + c * demand` over `(demand, stretch)`
/// points (those of demand 0 carry no information); 0 without any.
pub fn fit_slowdown(points: &[(f64, f64)]) -> f64 {
    let (num, den) = points
        .iter()
        .filter(|(d, s)| *d > 0.0 && d.is_finite() && s.is_finite())
        .fold((0.0, 0.0), |(n, m), (d, s)| (n + d * (s - 1.0), m + d * d));
    if den > 0.0 { num / den } else { 0.0 }
}

/// Splits victim spans `(start, end)` by the window `[from, to]` in which
/// the whole load ran: the lengths of those wholly inside, and of those that
/// started inside but ended after it (outlived the load). Spans that started
/// before the load was wholly resident count in neither.
pub fn split_spans(
    spans: impl IntoIterator<Item = (u64, u64)>,
    from: u64,
    to: u64,
) -> (Vec<i64>, Vec<i64>) {
    let (mut inside, mut after) = (Vec::new(), Vec::new());
    for (s, e) in spans {
        if s < from || s >= to {
            continue;
        }
        let len = (e - s) as i64;
        if e <= to {
            inside.push(len);
        } else {
            after.push(len);
        }
    }
    (inside, after)
}

/// Threads per block of the concurrent-kernel probes.
pub const CORUN_THREADS: u32 = 256;
/// How long each load kernel runs, ns.
const CORUN_LOAD_NS: u64 = 40_000_000;
/// Load kernels per load share.
const CORUN_ROUNDS: usize = 5;
/// Victim runs alone.
const CORUN_ALONE: usize = 30;
/// The memory victim's buffer (larger than the L2 cache of current GPUs,
/// 50-60 MB on H100/H200, so it streams from DRAM), bytes.
const VICTIM_BYTES: usize = 128 << 20;
/// The memory load's buffer, bytes.
const LOAD_BYTES: usize = 1 << 30;
/// Passes of the compute victim (1,024 dependent FMAs per thread each).
const COMPUTE_PASSES: u32 = 200;
/// Passes of the latency victim (64 dependent links per thread each).
const CHASE_PASSES: u32 = 12;
/// Passes of a streaming load timed alone for its traffic (each moves its
/// 1 GiB buffer in and out: about a millisecond at a quarter of the SMs).
const STREAM_TIMING_PASSES: u32 = 8;
/// Runs of a load timed alone for its traffic (the median counts).
const LOAD_TIMING_RUNS: usize = 3;
/// How long each spin victim block runs, ns.
const SPIN_VICTIM_NS: u64 = 500_000;

/// Measures how much a kernel of `kind` slows down while a load kernel of
/// the same kind runs on another stream of the context (kernels of one
/// context run at once as those of MPS clients do; they share SMs, caches
/// and memory bandwidth alike), at each SM share in `load_demands` (each
/// below 1, so the victim's blocks fit beside the load's: the slowdown
/// measured is interference, not waiting for room).
///
/// The victim has a quarter as many blocks as the GPU has SMs, so it lands
/// on SMs the load also uses, as a small kernel beside a large one does.
pub fn corun(gpu: &Gpu, kind: LoadKind, load_demands: &[f64]) -> Result<CorunFit, ReplayError> {
    let threads = CORUN_THREADS;
    let per_sm = match kind {
        LoadKind::Spin => gpu.blocks_per_sm(threads, 0)?,
        _ => gpu.load_blocks_per_sm(threads)?,
    }
    .max(1);
    let capacity = f64::from(per_sm) * f64::from(gpu.sm_count);
    let victim_blocks = (gpu.sm_count / 4).max(1);
    let modes = kind.modes();
    let moves_memory = |m: LoadMode| m != LoadMode::Compute;
    let victim_buf = gpu.alloc(match modes {
        Some((m, _)) if moves_memory(m) => VICTIM_BYTES,
        _ => 4096,
    })?;
    let load_buf = gpu.alloc(match modes {
        Some((_, m)) if moves_memory(m) => LOAD_BYTES,
        _ => 4096,
    })?;
    if let Some((v, l)) = modes {
        if v == LoadMode::Chase {
            gpu.write_u64(victim_buf, &chase_links(VICTIM_BYTES / 8))?;
        }
        if l == LoadMode::Chase {
            gpu.write_u64(load_buf, &chase_links(LOAD_BYTES / 8))?;
        }
    }
    let a = gpu.stream(false)?;
    let v = gpu.stream(false)?;
    let done = gpu.event(false)?;
    // Stamps: the load's, then one per victim run of a round.
    const MAX_VICTIMS: usize = 512;
    let stamps = gpu.alloc(32 * (MAX_VICTIMS + 1))?;
    // The spin kernel's stamp words start at all ones; the load kernel's
    // alternate all ones (minima) and zero (maxima).
    let init: Vec<u64> = (0..4 * (MAX_VICTIMS + 1))
        .map(|i| {
            if kind == LoadKind::Spin || i % 2 == 0 {
                u64::MAX
            } else {
                0
            }
        })
        .collect();
    // One launch of a probe kernel of `kind`: the spin kernel waits out
    // `spin_ns` per block; the load kernel does `passes` passes or, with
    // `run_ns` > 0, runs that long.
    // `victim`: the victim's kernel of `modes` (`.0`), else the load's (`.1`).
    let launch =
        |s, blocks, buf, spin_ns, passes, run_ns, stamp: DeviceBuffer, victim: bool| match modes {
            None => gpu.launch_spin(
                s,
                [blocks, 1, 1],
                [threads, 1, 1],
                0,
                spin_ns,
                None,
                stamp.at(0),
            ),
            Some((v, l)) => {
                let mode = if victim { v } else { l };
                gpu.launch_load(s, blocks, threads, mode, buf, passes, run_ns, stamp)
            }
        };
    let victim_passes = match modes {
        Some((LoadMode::Stream, _)) => 1,
        Some((LoadMode::Chase, _)) => CHASE_PASSES,
        _ => COMPUTE_PASSES,
    };
    let victim = |stamp| {
        launch(
            v,
            victim_blocks,
            victim_buf,
            SPIN_VICTIM_NS,
            victim_passes,
            0,
            stamp,
            true,
        )
    };
    // The spin kernel's stamp is [start, !end, ..]; the load's [start, _, _, end].
    let span = |w: &[u64]| -> Option<(u64, u64)> {
        let (s, e) = match kind {
            LoadKind::Spin => (w[0], !w[1]),
            _ => (w[0], w[3]),
        };
        (s != u64::MAX && e > s).then_some((s, e))
    };
    let median = |mut t: Vec<i64>| -> i64 {
        t.sort_unstable();
        t.get(t.len() / 2).copied().unwrap_or(0)
    };
    // Alone (one warm-up run first).
    gpu.write_u64(stamps, &init)?;
    victim(stamps.slice(0, 32))?;
    gpu.synchronize()?;
    gpu.write_u64(stamps, &init)?;
    for i in 0..CORUN_ALONE {
        victim(stamps.slice(32 * (i + 1), 32))?;
        gpu.record(done, v)?;
        gpu.wait(done)?;
    }
    let w = gpu.read_u64(stamps, 4 * (CORUN_ALONE + 1))?;
    let alone: Vec<i64> = (0..CORUN_ALONE)
        .filter_map(|i| span(&w[4 * (i + 1)..4 * (i + 2)]))
        .map(|(s, e)| (e - s) as i64)
        .collect();
    let alone_ns = median(alone.clone()).max(1);
    let victim_bytes_per_s = modes
        .and_then(|(m, _)| probe_bytes(m, VICTIM_BYTES, victim_blocks, threads, victim_passes))
        .map_or(0.0, |b| b / (alone_ns as f64 * 1e-9));
    // A load of `blocks` alone, fixed passes: its traffic, bytes/s (0 for
    // one that moves no memory).
    let load_traffic = |blocks: u32| -> Result<f64, ReplayError> {
        let Some((_, mode)) = modes else {
            return Ok(0.0);
        };
        let passes = if mode == LoadMode::Chase {
            CHASE_PASSES
        } else {
            STREAM_TIMING_PASSES
        };
        let Some(bytes) = probe_bytes(mode, LOAD_BYTES, blocks, threads, passes) else {
            return Ok(0.0);
        };
        let mut spans = Vec::new();
        for _ in 0..LOAD_TIMING_RUNS {
            gpu.write_u64(stamps, &init)?;
            launch(
                a,
                blocks,
                load_buf,
                0,
                passes,
                0,
                stamps.slice(0, 32),
                false,
            )?;
            gpu.synchronize()?;
            let w = gpu.read_u64(stamps, 4)?;
            if let Some((s, e)) = span(&w) {
                spans.push((e - s) as i64);
            }
        }
        let ns = median(spans);
        Ok(if ns > 0 {
            bytes / (ns as f64 * 1e-9)
        } else {
            0.0
        })
    };
    let mut points = vec![CorunPoint {
        load_demand: 0.0,
        samples: alone.len(),
        victim_ns: alone_ns,
        stretch: 1.0,
        outlived: 0,
        outlived_ns: 0,
        load_bytes_per_s: 0.0,
    }];
    for &d in load_demands {
        let blocks = ((d * capacity).round() as u32).max(1);
        let load_demand = f64::from(blocks) / capacity;
        let load_bytes_per_s = load_traffic(blocks)?;
        let mut beside = Vec::new();
        let mut outlived = Vec::new();
        for _ in 0..CORUN_ROUNDS {
            gpu.write_u64(stamps, &init)?;
            let t0 = crate::now_ns();
            launch(
                a,
                blocks,
                load_buf,
                CORUN_LOAD_NS,
                0,
                CORUN_LOAD_NS,
                stamps.slice(0, 32),
                false,
            )?;
            // Let the load's blocks become resident first.
            crate::spin_until(t0 + 2_000_000);
            let mut n = 0;
            while n < MAX_VICTIMS && crate::now_ns() < t0 + (CORUN_LOAD_NS as i64) * 3 / 4 {
                victim(stamps.slice(32 * (n + 1), 32))?;
                gpu.record(done, v)?;
                gpu.wait(done)?;
                n += 1;
            }
            gpu.synchronize()?;
            let w = gpu.read_u64(stamps, 4 * (n + 1))?;
            // The load ran wholly from its latest block start to its earliest
            // block end (the spin kernel stamps only its earliest start and
            // latest end; its one wave of blocks starts and ends together).
            let (from, to) = match kind {
                LoadKind::Spin => (w[0], !w[1]),
                _ => (w[1], w[2]),
            };
            let (inside, after) = split_spans(
                (0..n).filter_map(|i| span(&w[4 * (i + 1)..4 * (i + 2)])),
                from,
                to,
            );
            beside.extend(inside);
            outlived.extend(after);
        }
        let victim_ns = median(beside.clone());
        points.push(CorunPoint {
            load_demand,
            samples: beside.len(),
            victim_ns,
            stretch: victim_ns as f64 / alone_ns as f64,
            outlived: outlived.len(),
            outlived_ns: median(outlived),
            load_bytes_per_s,
        });
    }
    let fit: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.samples > 0)
        .map(|p| (p.load_demand, p.stretch))
        .collect();
    Ok(CorunFit {
        kind,
        victim_blocks,
        threads,
        victim_demand: f64::from(victim_blocks) / capacity,
        slowdown: fit_slowdown(&fit),
        points,
        victim_bytes_per_s,
    })
}

/// Block time of the dispatch-order probe's wide kernel, ns.
const DISPATCH_BLOCK_NS: u64 = 200_000;
/// Waves of the wide kernel: three full and a half, so that its last wave
/// leaves room beside it.
const DISPATCH_WAVES: f64 = 3.5;
/// Rounds of the dispatch-order probe.
const DISPATCH_ROUNDS: usize = 7;

/// The order in which the GPU places the blocks of kernels that run at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DispatchOrder {
    /// A kernel's blocks are placed only after every block of the kernels
    /// that became ready (reached the head of their stream) before it: what
    /// the simulator's MPS model assumes (`fikit_sim::sim::slots`).
    InOrder,
    /// In order of launch: a kernel waits also for kernels launched before it
    /// that became ready after it (the busy stream's queued successors).
    LaunchOrder,
    /// A later kernel's blocks take room as soon as any block retires.
    Interleaved,
    /// Neither fits what was seen.
    Unclear,
}

impl DispatchOrder {
    /// In words, as calibrate's model source says it.
    pub fn describe(self) -> &'static str {
        match self {
            DispatchOrder::InOrder => "in order",
            DispatchOrder::LaunchOrder => "in launch order",
            DispatchOrder::Interleaved => "interleaved",
            DispatchOrder::Unclear => "in no clear order",
        }
    }
}

/// What the dispatch-order probe saw ([`dispatch_order`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DispatchProbe {
    /// Waves of the wide kernel (its blocks over the blocks the GPU holds).
    pub waves: f64,
    /// Its block time, ns.
    pub block_ns: u64,
    /// Per round: when the one-block kernel's block started after the wide
    /// kernel's first block, in block times.
    pub starts_in_blocks: Vec<f64>,
    /// Their median.
    pub median_in_blocks: f64,
    /// What that says.
    pub order: DispatchOrder,
}

/// Classifies the dispatch order from when a one-block kernel, launched on
/// another stream half a block time into a wide kernel of `waves` waves
/// (behind which a second one is queued on its stream, launched before the
/// one-block kernel), started (`start_in_blocks`, block times after the
/// first wide kernel's first block). In order, it waits until the first wide
/// kernel places its last, partial wave: `floor(waves)` block times. In
/// launch order, it waits for the second too: `waves + floor(waves)`.
/// Interleaved, it takes the first room a retiring block frees: about 1
/// block time.
pub fn classify_dispatch(waves: f64, start_in_blocks: f64) -> DispatchOrder {
    let last_wave = waves.floor();
    if (start_in_blocks - last_wave).abs() <= 0.5 {
        DispatchOrder::InOrder
    } else if (start_in_blocks - (waves + last_wave)).abs() <= 0.5 {
        DispatchOrder::LaunchOrder
    } else if start_in_blocks <= 1.5 {
        DispatchOrder::Interleaved
    } else {
        DispatchOrder::Unclear
    }
}

/// The dispatch-order probe: two wide spin kernels of [`DISPATCH_WAVES`]
/// waves of 200 µs blocks launched back to back on one stream (the second
/// waits for the first, as a busy job's queued kernels do); half a block
/// time after, a one-block kernel on another stream of the same context
/// (kernels of one context run at once as MPS clients' do); when did the one
/// block start? [`classify_dispatch`] reads the median over
/// [`DISPATCH_ROUNDS`] rounds.
pub fn dispatch_order(gpu: &Gpu) -> Result<DispatchProbe, ReplayError> {
    let (blocks, waves) = dispatch_shape(gpu)?;
    let wide = gpu.stream(false)?;
    let small = gpu.stream(false)?;
    let stamps = gpu.alloc(96)?;
    let mut starts = Vec::new();
    // One warm-up round, not counted.
    for round in 0..=DISPATCH_ROUNDS {
        gpu.write_u64(stamps, &[u64::MAX; 12])?;
        let t0 = crate::now_ns();
        launch_dispatch_wide(gpu, wide, blocks, [stamps.at(0), stamps.at(64)])?;
        crate::spin_until(t0 + (DISPATCH_BLOCK_NS / 2) as i64);
        launch_dispatch_block(gpu, small, stamps.at(32))?;
        gpu.synchronize()?;
        // Words: [0..4) the first wide kernel's, [4..8) the one block's,
        // [8..12) the second wide kernel's.
        let w = gpu.read_u64(stamps, 12)?;
        if round > 0 && w[0] != u64::MAX && w[4] != u64::MAX {
            starts.push((w[4] as f64 - w[0] as f64) / DISPATCH_BLOCK_NS as f64);
        }
    }
    Ok(summarize_dispatch(waves, starts))
}

/// The dispatch-order probe's wide kernel: its blocks (of
/// [`CORUN_THREADS`]) and its waves, [`DISPATCH_WAVES`] rounded to whole
/// blocks.
fn dispatch_shape(gpu: &Gpu) -> Result<(u32, f64), ReplayError> {
    let per_sm = gpu.blocks_per_sm(CORUN_THREADS, 0)?.max(1);
    let capacity = f64::from(per_sm) * f64::from(gpu.sm_count);
    let blocks = (capacity * DISPATCH_WAVES).round() as u32;
    Ok((blocks, f64::from(blocks) / capacity))
}

/// Launches the probe's two wide kernels on `s`, one after the other, each
/// writing its spin stamp at its address in `stamps`.
fn launch_dispatch_wide(
    gpu: &Gpu,
    s: Stream,
    blocks: u32,
    stamps: [u64; 2],
) -> Result<(), ReplayError> {
    for stamp in stamps {
        gpu.launch_spin(
            s,
            [blocks, 1, 1],
            [CORUN_THREADS, 1, 1],
            0,
            DISPATCH_BLOCK_NS,
            None,
            stamp,
        )?;
    }
    Ok(())
}

/// Launches the probe's one-block kernel on `s`, stamping at `stamp`.
fn launch_dispatch_block(gpu: &Gpu, s: Stream, stamp: u64) -> Result<(), ReplayError> {
    gpu.launch_spin(s, [1, 1, 1], [CORUN_THREADS, 1, 1], 0, 10_000, None, stamp)
}

/// Time between the rounds of the dispatch-order probe across two
/// processes, ns (its two wide kernels take 1.4 ms).
pub const DISPATCH_PERIOD_NS: i64 = 5_000_000;

/// One side of the dispatch-order probe across two processes (two MPS
/// clients, each with its own context): from `start_ns` (the host clock,
/// shared by both), a round every [`DISPATCH_PERIOD_NS`], a warm-up round
/// first. The `wide` side launches the two wide kernels of
/// [`dispatch_order`] on one stream at each round's start; the other side one
/// block, half a block time later. Returns the wide kernel's waves (0 on the
/// small side) and, per counted round, the side's first kernel's earliest
/// block start (GPU global timer, ns, the same clock in both processes;
/// `u64::MAX` where none was stamped).
pub fn dispatch_side(gpu: &Gpu, start_ns: i64, wide: bool) -> Result<(f64, Vec<u64>), ReplayError> {
    let (blocks, waves) = dispatch_shape(gpu)?;
    let s = gpu.stream(false)?;
    // Two spin stamps of 4 words: the wide kernels', or the one block's.
    let stamps = gpu.alloc(64)?;
    let mut firsts = Vec::new();
    for round in 0..=DISPATCH_ROUNDS {
        gpu.write_u64(stamps, &[u64::MAX; 8])?;
        let t = start_ns + round as i64 * DISPATCH_PERIOD_NS;
        if wide {
            crate::spin_until(t);
            launch_dispatch_wide(gpu, s, blocks, [stamps.at(0), stamps.at(32)])?;
        } else {
            crate::spin_until(t + (DISPATCH_BLOCK_NS / 2) as i64);
            launch_dispatch_block(gpu, s, stamps.at(0))?;
        }
        gpu.synchronize()?;
        let w = gpu.read_u64(stamps, 8)?;
        if round > 0 {
            firsts.push(w[0]);
        }
    }
    Ok((if wide { waves } else { 0.0 }, firsts))
}

/// The dispatch-order probe across two processes from both sides' stamps
/// ([`dispatch_side`]), round by round; rounds either side did not stamp are
/// left out.
pub fn dispatch_across(waves: f64, wide: &[u64], small: &[u64]) -> DispatchProbe {
    let starts = wide
        .iter()
        .zip(small)
        .filter(|&(&w, &s)| w != u64::MAX && s != u64::MAX)
        .map(|(&w, &s)| (s as f64 - w as f64) / DISPATCH_BLOCK_NS as f64)
        .collect();
    summarize_dispatch(waves, starts)
}

/// The probe's result from the one block's starts, in block times.
fn summarize_dispatch(waves: f64, starts: Vec<f64>) -> DispatchProbe {
    let mut sorted = starts.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN);
    DispatchProbe {
        waves,
        block_ns: DISPATCH_BLOCK_NS,
        starts_in_blocks: starts,
        median_in_blocks: median,
        order: if median.is_finite() {
            classify_dispatch(waves, median)
        } else {
            DispatchOrder::Unclear
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatch_order_from_the_small_kernels_start() {
        use DispatchOrder::*;
        // 3.5 waves: in order, the block goes with the last wave at 3 block times.
        assert_eq!(classify_dispatch(3.5, 3.02), InOrder);
        assert_eq!(classify_dispatch(3.5, 2.6), InOrder);
        // Interleaved: at the first retirement after its launch (0.5 in).
        assert_eq!(classify_dispatch(3.5, 1.01), Interleaved);
        assert_eq!(classify_dispatch(3.5, 0.5), Interleaved);
        // Launch order: behind the queued second kernel too, at 3.5 + 3.
        assert_eq!(classify_dispatch(3.5, 6.4), LaunchOrder);
        assert_eq!(classify_dispatch(3.5, 2.0), Unclear);
        assert_eq!(classify_dispatch(3.5, 4.5), Unclear);
    }

    #[test]
    fn dispatch_across_processes_pairs_the_rounds() {
        // Round 1: the block 3 block times (600 µs) after the wide kernel's
        // first block; round 2 lost on the small side; round 3 at 6.5.
        let wide = [1_000_000, 2_000_000, 3_000_000];
        let small = [1_600_000, u64::MAX, 4_300_000];
        let d = dispatch_across(3.5, &wide, &small);
        assert_eq!(d.starts_in_blocks, vec![3.0, 6.5]);
        // The median of two is the upper one (as calibrate's medians are).
        assert_eq!(d.median_in_blocks, 6.5);
        assert_eq!(d.order, DispatchOrder::LaunchOrder);
        assert_eq!(d.block_ns, DISPATCH_BLOCK_NS);
    }

    #[test]
    fn probe_bytes_by_what_the_kernel_does() {
        // A stream reads and rewrites the whole buffer once a pass, whatever
        // its blocks: 1 GiB, 8 passes, 16 GiB.
        assert_eq!(
            probe_bytes(LoadMode::Stream, 1 << 30, 33, 256, 8),
            Some(16.0 * (1u64 << 30) as f64)
        );
        assert_eq!(
            probe_bytes(LoadMode::Stream, 1 << 30, 1000, 256, 8),
            probe_bytes(LoadMode::Stream, 1 << 30, 33, 256, 8)
        );
        // A chase: 8 bytes a link, 64 links a pass per thread: 2 blocks of 3
        // threads, 2 passes: 6 x 64 x 8 x 2 = 6,144, whatever the buffer.
        assert_eq!(probe_bytes(LoadMode::Chase, 1 << 30, 2, 3, 2), Some(6144.0));
        assert_eq!(probe_bytes(LoadMode::Chase, 4096, 2, 3, 2), Some(6144.0));
        assert_eq!(probe_bytes(LoadMode::Compute, 1 << 30, 2, 3, 2), None);
        assert_eq!(
            probe_bytes(LoadMode::Wide, 1 << 30, 33, 256, 8),
            probe_bytes(LoadMode::Stream, 1 << 30, 33, 256, 8)
        );
    }

    #[test]
    fn chase_links_stay_in_the_buffer_and_form_a_permutation() {
        // 1,000,003 = 5 * 200,000 + 3: every link jumps 3 on, modulo 5.
        assert_eq!(chase_links(5), vec![3, 4, 0, 1, 2]);
        let mut l = chase_links(1 << 12);
        assert!(l.iter().all(|&i| i < 1 << 12));
        l.sort_unstable();
        assert_eq!(l, (0..1 << 12).collect::<Vec<u64>>());
    }

    #[test]
    fn spans_split_by_the_loads_window() {
        // The load ran wholly from 100 to 200.
        let spans = [(90, 120), (100, 150), (150, 200), (180, 260), (200, 210)];
        let (inside, after) = split_spans(spans, 100, 200);
        // (90, 120) began before the load was resident; (200, 210) after it.
        assert_eq!(inside, vec![50, 50]);
        assert_eq!(after, vec![80]);
    }

    #[test]
    fn fit_recovers_a_linear_slowdown() {
        let pts: Vec<(f64, f64)> = [0.0, 0.25, 0.5, 0.75]
            .iter()
            .map(|&d| (d, 1.0 + 1.6 * d))
            .collect();
        assert!((fit_slowdown(&pts) - 1.6).abs() < 1e-12);
        // No slowdown at all, and no points beside a load.
        assert_eq!(fit_slowdown(&[(0.0, 1.0), (0.5, 1.0)]), 0.0);
        assert_eq!(fit_slowdown(&[(0.0, 1.0)]), 0.0);
        // Noise around c = 0.5 gives about 0.5.
        let c = fit_slowdown(&[(0.25, 1.14), (0.5, 1.24), (0.75, 1.37)]);
        assert!((c - 0.5).abs() < 0.02, "{c}");
    }

    /// Logs of `n` processes taking turns: slices of `q`, switches of `s`.
    fn turns(n: usize, q: u64, s: u64, rounds: usize) -> Vec<ProbeLog> {
        (0..n)
            .map(|i| {
                let period = n as u64 * (q + s);
                let first = i as u64 * (q + s);
                let away = (0..rounds as u64)
                    .map(|r| {
                        let end = first + r * period + q;
                        (end, end + period - q)
                    })
                    .collect();
                ProbeLog {
                    start: first,
                    end: first + rounds as u64 * period,
                    away,
                }
            })
            .collect()
    }

    #[test]
    fn recovers_quantum_and_switch_cost() {
        for n in [2, 3] {
            let e = estimate(&turns(n, 2_000_000, 30_000, 50)).unwrap();
            assert_eq!(e.quantum_ns, 2_000_000, "n = {n}");
            assert_eq!(e.switch_ns, 30_000, "n = {n}");
            assert_eq!(e.away_ns, (n as i64 - 1) * 2_000_000 + n as i64 * 30_000);
        }
    }

    #[test]
    fn no_turns_no_estimate() {
        let alone = ProbeLog {
            start: 0,
            end: 100,
            away: vec![],
        };
        assert!(estimate(&[alone]).is_none());
    }
}
