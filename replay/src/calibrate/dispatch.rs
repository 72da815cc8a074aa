//! The dispatch-order probe: in which order the GPU places the blocks of
//! kernels that run at once.

use serde::{Deserialize, Serialize};

use super::CORUN_THREADS;
use crate::ReplayError;
use crate::gpu::{Gpu, Stream};

/// Block time of the dispatch-order probe's wide kernel, ns.
pub(super) const DISPATCH_BLOCK_NS: u64 = 200_000;
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
    gpu.launch_spin(s, [1, 1, 1], [CORUN_THREADS, 1, 1], 0, 10_000, None, stamp)?;
    Ok(())
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
