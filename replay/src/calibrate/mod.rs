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
use crate::gpu::{Gpu, LoadMode, PREEMPT_JUMP_NS};

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
/// victims (`fikit-lab load`, the sensitivity pass). `carveout`: the load
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

mod corun;
mod dispatch;

use corun::LOAD_BYTES;
pub use corun::*;
pub use dispatch::*;

#[cfg(test)]
mod tests;
