//! Busy intervals and inter-kernel idle gaps of one job, and what caused each gap.
//!
//! The job's GPU is *busy* while at least one of its kernels runs (on any
//! stream); busy intervals are the union of kernel intervals. An *idle gap* is
//! the time between two consecutive busy intervals: the inter-kernel idle time
//! FIKIT fills. Time before the first kernel and after the last is not a gap.
//!
//! Each gap is attributed, from the kernel that ends it (the first kernel of the
//! next busy interval):
//! - [`GapCause::Sync`]: the host was blocked in a synchronization (a `sync`
//!   row, or a blocking API call such as `cudaMemcpy`) when the GPU went idle,
//!   and launched the next kernel only after that wait returned: the gap is the
//!   host's round trip through a synchronization;
//! - [`GapCause::Host`]: the next kernel's launch call began after the GPU went
//!   idle, with no synchronization in between: the host was too slow to keep
//!   the GPU fed (HTA's "host wait");
//! - [`GapCause::Other`]: the next kernel was already issued when the GPU went
//!   idle (launch latency, a copy or a dependency held it), or its launch call
//!   was not recorded.

use serde::Serialize;

use crate::model::Trace;

/// Why the GPU was idle in a gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GapCause {
    /// The host launched late, with no synchronization in between.
    Host,
    /// The host was waiting in a synchronization, then launched.
    Sync,
    /// The work was already issued, or the launch is unknown.
    Other,
}

/// One idle gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Gap {
    /// When the GPU went idle (end of the previous busy interval), ns.
    pub start_ns: i64,
    /// When the next kernel started, ns.
    pub end_ns: i64,
    /// Index in `trace.kernels` of the kernel that ends the gap.
    pub next_kernel: usize,
    /// What caused it.
    pub cause: GapCause,
}

impl Gap {
    /// Length, ns.
    pub fn duration_ns(&self) -> i64 {
        self.end_ns - self.start_ns
    }
}

/// A busy interval: `[start_ns, end_ns)` with the first kernel that opened it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Busy {
    /// Start, ns.
    pub start_ns: i64,
    /// End, ns.
    pub end_ns: i64,
    /// Index in `trace.kernels` of the kernel that opened the interval.
    pub first_kernel: usize,
}

/// The union of the kernels' intervals, in time order. `kernels` is expected in
/// start order (as [`Trace::sort`] leaves it); touching intervals merge.
pub fn busy_intervals(trace: &Trace) -> Vec<Busy> {
    let mut order: Vec<usize> = (0..trace.kernels.len()).collect();
    order.sort_by_key(|&i| (trace.kernels[i].start_ns, i));
    let mut out: Vec<Busy> = Vec::new();
    for i in order {
        let k = &trace.kernels[i];
        match out.last_mut() {
            Some(b) if k.start_ns <= b.end_ns => b.end_ns = b.end_ns.max(k.end_ns),
            _ => out.push(Busy {
                start_ns: k.start_ns,
                end_ns: k.end_ns,
                first_kernel: i,
            }),
        }
    }
    out
}

/// Total busy time, ns.
pub fn busy_ns(busy: &[Busy]) -> i64 {
    busy.iter().map(|b| b.end_ns - b.start_ns).sum()
}

/// The idle gaps between the busy intervals, each with its cause.
pub fn idle_gaps(trace: &Trace, busy: &[Busy]) -> Vec<Gap> {
    // Host waits: blocking syncs and blocking API calls, as (start, end) sorted by end.
    let mut waits: Vec<(i64, i64)> = trace
        .syncs
        .iter()
        .filter(|s| s.kind.blocks_host())
        .map(|s| (s.start_ns, s.end_ns))
        .chain(
            trace
                .api_calls
                .iter()
                .filter(|a| a.is_blocking())
                .map(|a| (a.start_ns, a.end_ns)),
        )
        .collect();
    waits.sort_by_key(|&(s, e)| (e, s));
    busy.windows(2)
        .map(|w| {
            let (prev, next) = (w[0], w[1]);
            let k = &trace.kernels[next.first_kernel];
            let cause = match k.launch {
                None => GapCause::Other,
                Some(l) if l.start_ns < prev.end_ns => GapCause::Other,
                Some(l) => {
                    // A wait that was under way when the GPU went idle and returned
                    // before the launch began.
                    let lo = waits.partition_point(|&(_, e)| e < prev.end_ns);
                    let waited = waits[lo..]
                        .iter()
                        .take_while(|&&(_, e)| e <= l.start_ns)
                        .any(|&(s, _)| s <= prev.end_ns);
                    if waited {
                        GapCause::Sync
                    } else {
                        GapCause::Host
                    }
                }
            };
            Gap {
                start_ns: prev.end_ns,
                end_ns: next.start_ns,
                next_kernel: next.first_kernel,
                cause,
            }
        })
        .collect()
}

/// The `q`-quantile (0 < q ≤ 1) of `sorted` by the nearest-rank method: the
/// smallest value such that at least `q` of the values are at or below it, i.e.
/// the value at 1-based rank ⌈q·n⌉. `None` for an empty slice.
pub fn nearest_rank(sorted: &[i64], q: f64) -> Option<i64> {
    if sorted.is_empty() {
        return None;
    }
    let n = sorted.len();
    let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
    Some(sorted[rank - 1])
}
