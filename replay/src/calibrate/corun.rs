//! The concurrent-kernel probes: how much a victim kernel slows beside a
//! load kernel of another stream, by what the kernels do ([`LoadKind`]).

use serde::{Deserialize, Serialize};

use crate::ReplayError;
use crate::gpu::{DeviceBuffer, Event, Gpu, LoadMode, Stream};
pub use fikit_device::victim::CORUN_THREADS;
use fikit_device::victim::{CHASE_PASSES, COMPUTE_PASSES, VICTIM_BYTES};

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

pub use fikit_device::victim::chase_links;

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

/// How long each load kernel runs, ns.
const CORUN_LOAD_NS: u64 = 40_000_000;
/// Load kernels per load share.
const CORUN_ROUNDS: usize = 5;
/// Victim runs alone.
const CORUN_ALONE: usize = 30;
/// The memory load's buffer, bytes.
pub(super) const LOAD_BYTES: usize = 1 << 30;
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
    let p = Probe::new(gpu, kind)?;
    let alone = p.alone()?;
    let alone_ns = median_ns(alone.clone()).max(1);
    let victim_bytes_per_s = p
        .modes
        .and_then(|(m, _)| {
            probe_bytes(m, VICTIM_BYTES, p.victim_blocks, p.threads, p.victim_passes)
        })
        .map_or(0.0, |b| b / (alone_ns as f64 * 1e-9));
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
        let blocks = ((d * p.capacity).round() as u32).max(1);
        let load_demand = f64::from(blocks) / p.capacity;
        let load_bytes_per_s = p.load_traffic(blocks)?;
        let (beside, outlived) = p.beside(blocks)?;
        let victim_ns = median_ns(beside.clone());
        points.push(CorunPoint {
            load_demand,
            samples: beside.len(),
            victim_ns,
            stretch: victim_ns as f64 / alone_ns as f64,
            outlived: outlived.len(),
            outlived_ns: median_ns(outlived),
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
        victim_blocks: p.victim_blocks,
        threads: p.threads,
        victim_demand: f64::from(p.victim_blocks) / p.capacity,
        slowdown: fit_slowdown(&fit),
        points,
        victim_bytes_per_s,
    })
}

/// Most victim runs stamped in one round beside a load.
const MAX_VICTIMS: usize = 512;

/// The median of `t` (the upper one of an even count), 0 without any.
fn median_ns(mut t: Vec<i64>) -> i64 {
    t.sort_unstable();
    t.get(t.len() / 2).copied().unwrap_or(0)
}

/// One concurrent-kernel probe's set-up ([`corun`]): its kernels, buffers,
/// streams and stamps.
struct Probe<'g> {
    gpu: &'g Gpu,
    kind: LoadKind,
    /// [`LoadKind::modes`].
    modes: Option<(LoadMode, LoadMode)>,
    threads: u32,
    /// Resident-block slots of the device for the probe's kernels.
    capacity: f64,
    victim_blocks: u32,
    victim_passes: u32,
    victim_buf: DeviceBuffer,
    load_buf: DeviceBuffer,
    /// The load's stream.
    a: Stream,
    /// The victim's stream.
    v: Stream,
    done: Event,
    /// Stamps: the load's, then one per victim run of a round.
    stamps: DeviceBuffer,
    /// The stamps' initial words.
    init: Vec<u64>,
}

impl<'g> Probe<'g> {
    fn new(gpu: &'g Gpu, kind: LoadKind) -> Result<Probe<'g>, ReplayError> {
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
        let victim_passes = match modes {
            Some((LoadMode::Stream, _)) => 1,
            Some((LoadMode::Chase, _)) => CHASE_PASSES,
            _ => COMPUTE_PASSES,
        };
        Ok(Probe {
            gpu,
            kind,
            modes,
            threads,
            capacity,
            victim_blocks,
            victim_passes,
            victim_buf,
            load_buf,
            a,
            v,
            done,
            stamps,
            init,
        })
    }

    /// One launch of a probe kernel of the kind: the spin kernel waits out
    /// `spin_ns` per block; the load kernel does `passes` passes or, with
    /// `run_ns` > 0, runs that long. `victim`: the victim's kernel of
    /// `modes` (`.0`, on its stream and buffer), else the load's (`.1`).
    fn launch(
        &self,
        victim: bool,
        blocks: u32,
        spin_ns: u64,
        passes: u32,
        run_ns: u64,
        stamp: DeviceBuffer,
    ) -> Result<(), ReplayError> {
        let (s, buf) = if victim {
            (self.v, self.victim_buf)
        } else {
            (self.a, self.load_buf)
        };
        match self.modes {
            None => self.gpu.launch_spin(
                s,
                [blocks, 1, 1],
                [self.threads, 1, 1],
                0,
                spin_ns,
                None,
                stamp.at(0),
            )?,
            Some((v, l)) => {
                let mode = if victim { v } else { l };
                self.gpu
                    .launch_load(s, blocks, self.threads, mode, buf, passes, run_ns, stamp)?
            }
        }
        Ok(())
    }

    /// One victim run, stamped at `stamp`.
    fn victim(&self, stamp: DeviceBuffer) -> Result<(), ReplayError> {
        self.launch(
            true,
            self.victim_blocks,
            SPIN_VICTIM_NS,
            self.victim_passes,
            0,
            stamp,
        )
    }

    /// A run's span from its stamp words: the spin kernel's stamp is
    /// `[start, !end, ..]`; the load's `[start, _, _, end]`.
    fn span(&self, w: &[u64]) -> Option<(u64, u64)> {
        let (s, e) = match self.kind {
            LoadKind::Spin => (w[0], !w[1]),
            _ => (w[0], w[3]),
        };
        (s != u64::MAX && e > s).then_some((s, e))
    }

    /// The victim's run times alone, ns (one warm-up run first).
    fn alone(&self) -> Result<Vec<i64>, ReplayError> {
        let (gpu, stamps) = (self.gpu, self.stamps);
        gpu.write_u64(stamps, &self.init)?;
        self.victim(stamps.slice(0, 32))?;
        gpu.synchronize()?;
        gpu.write_u64(stamps, &self.init)?;
        for i in 0..CORUN_ALONE {
            self.victim(stamps.slice(32 * (i + 1), 32))?;
            gpu.record(self.done, self.v)?;
            gpu.wait(self.done)?;
        }
        let w = gpu.read_u64(stamps, 4 * (CORUN_ALONE + 1))?;
        Ok((0..CORUN_ALONE)
            .filter_map(|i| self.span(&w[4 * (i + 1)..4 * (i + 2)]))
            .map(|(s, e)| (e - s) as i64)
            .collect())
    }

    /// A load of `blocks` alone, fixed passes: its traffic, bytes/s (0 for
    /// one that moves no memory).
    fn load_traffic(&self, blocks: u32) -> Result<f64, ReplayError> {
        let Some((_, mode)) = self.modes else {
            return Ok(0.0);
        };
        let passes = if mode == LoadMode::Chase {
            CHASE_PASSES
        } else {
            STREAM_TIMING_PASSES
        };
        let Some(bytes) = probe_bytes(mode, LOAD_BYTES, blocks, self.threads, passes) else {
            return Ok(0.0);
        };
        let mut spans = Vec::new();
        for _ in 0..LOAD_TIMING_RUNS {
            self.gpu.write_u64(self.stamps, &self.init)?;
            self.launch(false, blocks, 0, passes, 0, self.stamps.slice(0, 32))?;
            self.gpu.synchronize()?;
            let w = self.gpu.read_u64(self.stamps, 4)?;
            if let Some((s, e)) = self.span(&w) {
                spans.push((e - s) as i64);
            }
        }
        let ns = median_ns(spans);
        Ok(if ns > 0 {
            bytes / (ns as f64 * 1e-9)
        } else {
            0.0
        })
    }

    /// [`CORUN_ROUNDS`] rounds of victim runs beside a load of `blocks`: the
    /// run times wholly inside the load's window, and those of runs that
    /// outlived it, ns ([`split_spans`]).
    fn beside(&self, blocks: u32) -> Result<(Vec<i64>, Vec<i64>), ReplayError> {
        let (gpu, stamps) = (self.gpu, self.stamps);
        let mut beside = Vec::new();
        let mut outlived = Vec::new();
        for _ in 0..CORUN_ROUNDS {
            gpu.write_u64(stamps, &self.init)?;
            let t0 = crate::now_ns();
            self.launch(
                false,
                blocks,
                CORUN_LOAD_NS,
                0,
                CORUN_LOAD_NS,
                stamps.slice(0, 32),
            )?;
            // Let the load's blocks become resident first.
            crate::spin_until(t0 + 2_000_000);
            let mut n = 0;
            while n < MAX_VICTIMS && crate::now_ns() < t0 + (CORUN_LOAD_NS as i64) * 3 / 4 {
                self.victim(stamps.slice(32 * (n + 1), 32))?;
                gpu.record(self.done, self.v)?;
                gpu.wait(self.done)?;
                n += 1;
            }
            gpu.synchronize()?;
            let w = gpu.read_u64(stamps, 4 * (n + 1))?;
            // The load ran wholly from its latest block start to its earliest
            // block end (the spin kernel stamps only its earliest start and
            // latest end; its one wave of blocks starts and ends together).
            let (from, to) = match self.kind {
                LoadKind::Spin => (w[0], !w[1]),
                _ => (w[1], w[2]),
            };
            let (inside, after) = split_spans(
                (0..n).filter_map(|i| self.span(&w[4 * (i + 1)..4 * (i + 2)])),
                from,
                to,
            );
            beside.extend(inside);
            outlived.extend(after);
        }
        Ok((beside, outlived))
    }
}
