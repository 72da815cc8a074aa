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
/// synchronizing calls among `api_calls[i]` for `i` in `chosen` (one call per
/// correlation id, in any order: they are taken in ascending index order),
/// `kind_of` telling which calls synchronize. They name no stream (replay
/// waits for the latest work of any stream); the context is that of the
/// latest GPU operation the same thread launched before the call, else that
/// of the first kernel, else of the first memory operation, else 0.
pub fn syncs_from_calls(
    api_calls: &[ApiCall],
    chosen: impl IntoIterator<Item = usize>,
    kernels: &[Kernel],
    memops: &[MemOp],
    kind_of: impl Fn(&str) -> Option<SyncKind>,
) -> Vec<Sync> {
    let default_context = kernels
        .first()
        .map(|k| k.placement.context)
        .or(memops.first().map(|m| m.placement.context))
        .unwrap_or(0);
    let mut chosen: Vec<usize> = chosen.into_iter().collect();
    chosen.sort_unstable();
    let mut ops: Vec<(u64, i64, u32)> = kernels
        .iter()
        .map(|k| (k.launch, k.placement.context))
        .chain(memops.iter().map(|m| (m.launch, m.placement.context)))
        .filter_map(|(l, c)| l.map(|l| (l.thread_id, l.start_ns, c)))
        .collect();
    ops.sort_unstable();
    let mut syncs = Vec::new();
    for i in chosen {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{every_column, kernel};
    use crate::model::ApiDomain;

    fn call(name: &str, corr: u32, thread_id: u64, start_ns: i64) -> ApiCall {
        ApiCall {
            domain: ApiDomain::Runtime,
            name: name.to_string(),
            start_ns,
            end_ns: start_ns + 500,
            thread_id,
            correlation_id: corr,
        }
    }

    fn kind_of(name: &str) -> Option<SyncKind> {
        (name == "cudaDeviceSynchronize").then_some(SyncKind::ContextSynchronize)
    }

    #[test]
    fn syncs_take_the_context_of_the_threads_latest_operation_in_call_order() {
        let mut k = kernel("relu", 7, 1, Some(1_000), 2_000, 3_000);
        k.placement.context = 5;
        let calls = vec![
            call("cudaLaunchKernel", 1, 7, 1_000),
            call("cudaDeviceSynchronize", 2, 7, 4_000),
            // Another thread, no operation of its own: the first kernel's context.
            call("cudaDeviceSynchronize", 3, 9, 500),
        ];
        // `chosen` in any order; the result follows the call indices.
        let s = syncs_from_calls(&calls, [2, 0, 1], &[k], &[], kind_of);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].correlation_id, s[0].context), (2, 5));
        assert_eq!((s[1].correlation_id, s[1].context), (3, 5));
        assert!(s.iter().all(|x| x.stream.is_none()));
    }

    #[test]
    fn without_kernels_the_memory_operations_context_is_the_default() {
        let t = every_column("copies");
        let mut memops = t.memops.clone();
        for m in &mut memops {
            m.placement.context = 3;
            m.launch = None;
        }
        let calls = vec![call("cudaDeviceSynchronize", 9, 7, 100)];
        let s = syncs_from_calls(&calls, [0], &[], &memops, kind_of);
        assert_eq!(s[0].context, 3);
        // Nothing at all: context 0.
        assert_eq!(
            syncs_from_calls(&calls, [0], &[], &[], kind_of)[0].context,
            0
        );
    }
}
