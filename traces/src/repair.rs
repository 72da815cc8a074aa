//! Repairs and derivations shared by everything that builds traces
//! (`fikit-profile`'s conversion and `fikit-sim import`), so both make the
//! same trace from the same facts.

use crate::model::{ApiCall, Kernel, MemOp, Sync, SyncKind};

/// Kernels of one stream run one after another; profilers occasionally report
/// a start a little before the previous end (timer granularity, programmatic
/// dependent launch). Moves such starts to the previous end, so the trace
/// keeps the stream order, and returns a note saying how many moved, by how
/// much at most and how much kernel time that removed (`None`: none moved).
pub fn clamp_stream_order(kernels: &mut [Kernel]) -> Option<String> {
    let mut order: Vec<usize> = (0..kernels.len()).collect();
    order.sort_by_key(|&i| {
        let k = &kernels[i];
        (k.placement, k.start_ns, k.end_ns, k.correlation_id)
    });
    let mut clamped = 0usize;
    let mut max_shift = 0i64;
    let mut removed_ns = 0i64;
    for w in 1..order.len() {
        let (a, b) = (order[w - 1], order[w]);
        if kernels[a].placement == kernels[b].placement && kernels[b].start_ns < kernels[a].end_ns {
            let prev_end = kernels[a].end_ns;
            let kb = &mut kernels[b];
            let before = kb.end_ns - kb.start_ns;
            max_shift = max_shift.max(prev_end - kb.start_ns);
            kb.start_ns = prev_end;
            kb.end_ns = kb.end_ns.max(prev_end);
            removed_ns += before - (kb.end_ns - kb.start_ns);
            clamped += 1;
        }
    }
    (clamped > 0).then(|| {
        format!(
            "{clamped} kernels started before the previous kernel on their stream ended \
             (by up to {max_shift} ns); their start was moved to that end, which took \
             {removed_ns} ns off their durations in all"
        )
    })
}

/// The synchronizations, when no synchronization records exist: the
/// synchronizing calls among `api_calls[i]` for `i` in `chosen` (indices in
/// ascending order, one call per correlation id), `kind_of` telling which
/// calls synchronize. They name no stream (replay waits for the latest work
/// of any stream); the context is that of the latest GPU operation the same
/// thread launched before the call, else `default_context`.
pub fn syncs_from_calls(
    api_calls: &[ApiCall],
    chosen: &[usize],
    kernels: &[Kernel],
    memops: &[MemOp],
    default_context: u32,
    kind_of: impl Fn(&str) -> Option<SyncKind>,
) -> Vec<Sync> {
    let mut ops: Vec<(u64, i64, u32)> = kernels
        .iter()
        .map(|k| (k.launch, k.placement.context))
        .chain(memops.iter().map(|m| (m.launch, m.placement.context)))
        .filter_map(|(l, c)| l.map(|l| (l.thread_id, l.start_ns, c)))
        .collect();
    ops.sort_unstable();
    let mut syncs = Vec::new();
    for &i in chosen {
        let c = &api_calls[i];
        let Some(kind) = kind_of(&c.name) else {
            continue;
        };
        let n = ops.partition_point(|&(t, s, _)| (t, s) <= (c.thread_id, c.start_ns));
        let context = n
            .checked_sub(1)
            .map(|k| ops[k])
            .filter(|&(t, _, _)| t == c.thread_id)
            .map_or(default_context, |(_, _, ctx)| ctx);
        syncs.push(Sync {
            kind,
            start_ns: c.start_ns,
            end_ns: c.end_ns,
            context,
            stream: None,
            thread_id: Some(c.thread_id),
            correlation_id: c.correlation_id,
        });
    }
    syncs
}
