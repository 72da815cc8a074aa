//! Calibrate's latency-bound victim, run back to back: beside another
//! process's job under MPS its runs' stretch is how hard that job's kernels
//! press on a latency-bound neighbour (fikit-profile's pressure pass,
//! `fikit-lab load --victim`). The constants are calibrate's
//! concurrent-kernel probe's, which sets the model's `corun_slowdown` with
//! the same victim.

use crate::DeviceError;
use crate::gpu::{Gpu, LoadMode};

/// Threads per block of the concurrent-kernel probes and the victim.
pub const CORUN_THREADS: u32 = 256;
/// The memory victim's buffer (larger than the L2 cache of current GPUs,
/// 50-60 MB on H100/H200, so it streams from DRAM), bytes.
pub const VICTIM_BYTES: usize = 128 << 20;
/// Passes of the compute victim (1,024 dependent FMAs per thread each).
pub const COMPUTE_PASSES: u32 = 200;
/// Passes of the latency victim (64 dependent links per thread each).
pub const CHASE_PASSES: u32 = 12;
/// How far one link of the pointer chase jumps, words (about 8 MB).
const CHASE_STRIDE: u64 = 1_000_003;

/// Next indices of a pointer chase over `links` 64-bit words: each link
/// jumps `CHASE_STRIDE` words on (modulo `links`), so consecutive loads of
/// one thread fall in different DRAM pages and never in the same cache line.
pub fn chase_links(links: usize) -> Vec<u64> {
    (0..links as u64)
        .map(|i| (i + CHASE_STRIDE) % links as u64)
        .collect()
}

/// Runs one of calibrate's victims (`compute`: dependent FMAs; else the
/// latency-bound pointer chase; a quarter as many blocks as SMs,
/// [`CORUN_THREADS`] threads each) back to back, each run waited for, until
/// `stop` returns true (checked after each run); returns how many ran.
/// `passes`: the victim's passes per run (`None`: calibrate's, about 0.45 ms
/// a run on Hopper; fewer make runs short enough to lie inside a batch-1
/// job's kernels).
pub fn hold_victim(
    gpu: &Gpu,
    compute: bool,
    passes: Option<u32>,
    stop: &dyn Fn() -> bool,
) -> Result<u64, DeviceError> {
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
