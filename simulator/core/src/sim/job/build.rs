//! A trace becomes a [`Job`], by stage: its GPU operations in issue order
//! ([`raw_ops`]), their offsets ([`gpu_ops`]), the host's actions
//! ([`host_actions`]) and the host program they make ([`host_steps`]), then
//! the profiled figures FIKIT predicts with.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use fikit_trace::Trace;

use super::{GpuOp, HostStep, Job, NO_OP, Occupancy, OpShape, setup_iterations};

/// One recorded operation before it becomes a [`GpuOp`] (one per operation,
/// 56 bytes; tens of millions on large inputs): `src` indexes the kernels,
/// then the memory operations, of the trace.
struct Raw {
    issue: i64,
    start: i64,
    end: i64,
    key: u64,
    place: (u32, u32, u32),
    demand: u32,
    src: u32,
}

impl Raw {
    fn is_kernel(&self) -> bool {
        self.demand != GpuOp::NOT_A_KERNEL
    }
}

/// A host action in recorded time, before it becomes a [`HostStep`].
enum Action {
    Issue {
        at: i64,
        op: usize,
    },
    Wait {
        start: i64,
        end: i64,
        stream: Option<(u32, u32, u32)>,
        blocking: bool,
    },
}

impl Action {
    fn at(&self) -> i64 {
        match self {
            Action::Issue { at, .. } => *at,
            Action::Wait { start, .. } => *start,
        }
    }
}

/// How many blocks of a kernel fit on one SM, from the per-SM limits.
pub fn blocks_per_sm(
    device: &fikit_trace::DeviceInfo,
    threads_per_block: u64,
    registers_per_thread: u32,
    shared_bytes: u64,
) -> u64 {
    let threads = threads_per_block.max(1);
    let by_threads = u64::from(device.max_threads_per_sm) / threads;
    // Registers are allocated per warp in practice; per thread is close enough here.
    let regs = u64::from(registers_per_thread).max(1) * threads;
    let by_regs = u64::from(device.max_registers_per_sm) / regs;
    let by_shared = u64::from(device.max_shared_memory_per_sm)
        .checked_div(shared_bytes)
        .unwrap_or(u64::MAX);
    let by_blocks = u64::from(device.max_blocks_per_sm);
    by_threads.min(by_regs).min(by_shared).min(by_blocks).max(1)
}

impl Job {
    pub(super) fn build(trace: &Trace, keep_shapes: bool) -> Job {
        let (raw, occupancies) = raw_ops(trace);
        let origin = origin(trace, &raw);
        let ops = gpu_ops(&raw, origin);
        let shapes = if keep_shapes {
            launch_shapes(trace, &raw)
        } else {
            Vec::new()
        };
        let actions = host_actions(trace, &raw);
        let (steps, host_time) = host_steps(&actions, &raw, origin);
        let last_end = raw.iter().map(|r| r.end).max().unwrap_or(origin);
        let recorded_span_ns = last_end.max(host_time) - origin;

        // Profiled gaps after each kernel, by kernel position in issue order.
        let kernel_spans: Vec<(i64, i64)> = raw
            .iter()
            .filter(|r| r.is_kernel())
            .map(|r| (r.start, r.end))
            .collect();
        let gap_after_kernel_ns = profiled_gaps(&kernel_spans);
        let mean_duration_ns = mean_durations(trace);
        drop(raw);
        let kernel_position = kernel_positions(&ops);
        // The untraced runs' busy parts, of the runs that measured them.
        let busy_runs: Vec<Arc<[i64]>> = trace
            .meta
            .characterization
            .iter()
            .flat_map(|c| c.untraced_runs.iter())
            .filter(|r| !r.busy_ns.is_empty())
            .map(|r| Arc::from(r.busy_ns.as_slice()))
            .collect();
        Job {
            kernel_position: kernel_position.into(),
            occupancies: occupancies.into(),
            setup_iterations: setup_iterations(&steps),
            runs: 1,
            name: trace.meta.job_name.clone(),
            priority: trace.meta.priority,
            ops: ops.into(),
            steps: steps.into(),
            tail_ns: 0,
            recorded_span_ns,
            gap_after_kernel_ns: gap_after_kernel_ns.into(),
            mean_duration_ns: Arc::new(mean_duration_ns),
            shapes: shapes.into(),
            pressure_weight: None,
            recorded: None,
            untraced_regions_ns: trace
                .meta
                .characterization
                .iter()
                .flat_map(|c| c.untraced_runs.iter().map(|r| r.region_ns))
                .collect(),
            untraced_busy_ns: busy_runs
                .iter()
                .map(|b| {
                    let mut b = b.to_vec();
                    b.sort_unstable();
                    b[b.len() / 2]
                })
                .collect(),
            untraced_busy_parts_ns: busy_runs.into(),
            untraced_iterations_ns: trace
                .meta
                .characterization
                .iter()
                .flat_map(|c| c.untraced_runs.iter())
                .map(|r| Arc::from(r.iterations_ns.as_slice()))
                .collect(),
            measured_pressure: trace
                .meta
                .characterization
                .as_ref()
                .and_then(|c| c.pressure.as_ref())
                .map(|p| super::MeasuredPressure {
                    slowdown: p.slowdown,
                    share: crate::sim::pressure::share(trace),
                }),
        }
    }
}

/// The trace's kernels and memory operations in issue order (by issue time,
/// then start), and the distinct occupancies of its kernels (kernels have
/// few shapes), which [`Raw::demand`] indexes.
fn raw_ops(trace: &Trace) -> (Vec<Raw>, Vec<Occupancy>) {
    let dev = &trace.meta.device;
    let nk = trace.kernels.len();
    let mut occupancies: Vec<Occupancy> = Vec::new();
    let mut occupancy_index: HashMap<(u64, u64), u32> = HashMap::new();
    let mut raw: Vec<Raw> = Vec::with_capacity(nk + trace.memops.len());
    for (i, k) in trace.kernels.iter().enumerate() {
        let per_sm = blocks_per_sm(
            dev,
            k.threads_per_block(),
            k.registers_per_thread,
            u64::from(k.static_shared_bytes) + u64::from(k.dynamic_shared_bytes),
        );
        let occupancy = Occupancy::new(k.blocks(), per_sm, dev.sm_count);
        let demand = *occupancy_index
            .entry((occupancy.blocks, occupancy.per_sm))
            .or_insert_with(|| {
                occupancies.push(occupancy);
                occupancies.len() as u32 - 1
            });
        raw.push(Raw {
            issue: k.launch.map_or(k.start_ns, |l| l.start_ns.min(k.start_ns)),
            start: k.start_ns,
            end: k.end_ns,
            place: (k.placement.device, k.placement.context, k.placement.stream),
            key: k.kernel_key,
            demand,
            src: i as u32,
        });
    }
    for (i, m) in trace.memops.iter().enumerate() {
        raw.push(Raw {
            issue: m.launch.map_or(m.start_ns, |l| l.start_ns.min(m.start_ns)),
            start: m.start_ns,
            end: m.end_ns,
            place: (m.placement.device, m.placement.context, m.placement.stream),
            key: 0,
            demand: GpuOp::NOT_A_KERNEL,
            src: (nk + i) as u32,
        });
    }
    // Issue order: by issue time, then start.
    raw.sort_by_key(|r| (r.issue, r.start, r.end));
    (raw, occupancies)
}

/// The job's first host action: the earliest issue or blocking wait (0
/// without any).
fn origin(trace: &Trace, raw: &[Raw]) -> i64 {
    raw.iter()
        .map(|r| r.issue)
        .chain(trace.syncs.iter().map(|s| s.start_ns))
        .chain(
            trace
                .api_calls
                .iter()
                .filter(|a| a.is_blocking())
                .map(|a| a.start_ns),
        )
        .min()
        .unwrap_or(0)
}

/// The GPU operations, with their offsets: each op's recorded start is
/// max(issue + launch latency, previous op on the stream done + back-to-back
/// gap). The recording shows one of the two per op (the one that decided its
/// start); the other is the job's typical value (capped so that alone the op
/// still starts when recorded).
fn gpu_ops(raw: &[Raw], origin: i64) -> Vec<GpuOp> {
    let mut prev_end: HashMap<(u32, u32, u32), i64> = HashMap::new();
    let mut recorded: Vec<(i64, i64)> = Vec::with_capacity(raw.len()); // (start - issue, start - previous end)
    for r in raw {
        let prev = prev_end.insert(r.place, r.end).unwrap_or(i64::MIN);
        let after_prev = if prev == i64::MIN {
            i64::MAX
        } else {
            r.start - prev
        };
        recorded.push(((r.start - r.issue).max(0), after_prev));
    }
    let (latency, gap) = typical_offsets(&recorded);
    let mut streams: HashMap<(u32, u32, u32), u32> = HashMap::new();
    let mut ops = Vec::with_capacity(raw.len());
    for r in raw {
        let next = streams.len() as u32;
        let stream = *streams.entry(r.place).or_insert(next);
        let (since_issue, since_prev) = recorded[ops.len()];
        // Issued at or after its predecessor's end (issue <= start always).
        let (issue_offset_ns, start_offset_ns) = if since_prev >= since_issue {
            // Launched to an idle stream: the launch latency decided.
            // (Capped by its launch latency: after the predecessor's end,
            // which came before the launch, alone it still starts as recorded.)
            (since_issue, gap.min(since_issue))
        } else {
            // Queued behind the previous op: the back-to-back gap decided.
            (latency.min(since_issue), since_prev.max(0))
        };
        ops.push(GpuOp {
            stream,
            duration_ns: r.end - r.start,
            start_offset_ns,
            issue_offset_ns,
            key: r.key,
            demand: r.demand,
            recorded_start_ns: r.start - origin,
            shape: ops.len() as u32,
        });
    }
    ops
}

/// Every operation's launch shape ([`Job::shapes`]), in issue order.
fn launch_shapes(trace: &Trace, raw: &[Raw]) -> Vec<OpShape> {
    let nk = trace.kernels.len();
    raw.iter()
        .map(|r| match trace.kernels.get(r.src as usize) {
            Some(k) => OpShape::Kernel {
                grid: k.grid,
                block: k.block,
                shared_bytes: k.static_shared_bytes.saturating_add(k.dynamic_shared_bytes),
            },
            None => {
                let m = &trace.memops[r.src as usize - nk];
                OpShape::Mem {
                    bytes: m.bytes,
                    kind: m.copy_kind,
                }
            }
        })
        .collect()
}

/// The host's actions in recorded order: every issue, every `sync` row, and
/// the blocking API calls that a sync row does not already describe.
fn host_actions(trace: &Trace, raw: &[Raw]) -> Vec<Action> {
    let mut actions: Vec<Action> = raw
        .iter()
        .enumerate()
        .map(|(i, r)| Action::Issue { at: r.issue, op: i })
        .collect();
    for s in &trace.syncs {
        actions.push(Action::Wait {
            start: s.start_ns,
            end: s.end_ns,
            stream: s.stream.map(|st| (0, s.context, st)),
            blocking: s.kind.blocks_host(),
        });
    }
    // Blocking API calls that a sync row does not already describe, one
    // per correlation id (a driver call nested in a runtime call shares it).
    let mut synced: HashSet<u32> = trace.syncs.iter().map(|s| s.correlation_id).collect();
    for a in trace.api_calls.iter().filter(|a| a.is_blocking()) {
        if synced.insert(a.correlation_id) {
            actions.push(Action::Wait {
                start: a.start_ns,
                end: a.end_ns,
                stream: None,
                blocking: true,
            });
        }
    }
    actions.sort_by_key(|a| (a.at(), matches!(a, Action::Wait { .. })));
    actions
}

/// The host program of `actions`, and the host's time after its last one.
/// Each blocking wait waits for the operation, issued before it (on its
/// stream, when it names one), that ended last before the wait returned.
fn host_steps(actions: &[Action], raw: &[Raw], origin: i64) -> (Vec<HostStep>, i64) {
    let mut steps = Vec::with_capacity(actions.len());
    let mut host_time = origin;
    // Per (context, stream): the issued ops as (end, index), sorted; ends
    // arrive nearly in order, so inserting is cheap and each wait's lookup
    // is a binary search.
    let mut ended_by_stream: HashMap<(u32, u32), Vec<(i64, u32)>> = HashMap::new();
    let mut kernels_in_iteration = 0usize;
    for a in actions {
        match *a {
            Action::Issue { at, op } => {
                steps.push(HostStep::Issue {
                    delay_ns: (at - host_time).max(0),
                    op: op as u32,
                });
                host_time = host_time.max(at);
                let ended = ended_by_stream
                    .entry((raw[op].place.1, raw[op].place.2))
                    .or_default();
                let entry = (raw[op].end, op as u32);
                let pos = ended.partition_point(|&x| x <= entry);
                ended.insert(pos, entry);
                if raw[op].is_kernel() {
                    kernels_in_iteration += 1;
                }
            }
            Action::Wait {
                start,
                end,
                stream,
                blocking,
            } => {
                if !blocking {
                    continue; // a device-side wait: the GPU ops carry its effect in their offsets
                }
                // The op issued before the wait, on its stream if named, that ended last by its end.
                let last_on = |ops: &Vec<(i64, u32)>| {
                    let n = ops.partition_point(|&(e, _)| e <= end);
                    n.checked_sub(1).map(|k| ops[k])
                };
                let target = match stream {
                    Some((_, c, s)) => ended_by_stream.get(&(c, s)).and_then(last_on),
                    None => ended_by_stream.values().filter_map(last_on).max(),
                }
                .map(|(_, i)| i);
                let resume_from = target.map_or(start, |i| start.max(raw[i as usize].end));
                // An iteration holds at least one kernel: waits between
                // copies alone (e.g. uploading weights) do not end one.
                steps.push(HostStep::Wait {
                    delay_ns: (start - host_time).max(0),
                    op: target.unwrap_or(NO_OP),
                    wake_ns: (end - resume_from).max(0),
                    ends_iteration: kernels_in_iteration > 0,
                });
                kernels_in_iteration = 0;
                host_time = host_time.max(end);
            }
        }
    }
    (steps, host_time)
}

/// Profiled mean duration per kernel key, ns ([`Job::mean_duration_ns`]).
fn mean_durations(trace: &Trace) -> HashMap<u64, i64> {
    // Summed as i128: durations of many kernels can pass i64 (a mean cannot).
    let mut sums: HashMap<u64, (i128, i128)> = HashMap::new();
    for k in &trace.kernels {
        let e = sums.entry(k.kernel_key).or_default();
        e.0 += i128::from(k.duration_ns());
        e.1 += 1;
    }
    sums.into_iter()
        .map(|(k, (s, n))| (k, (s / n) as i64))
        .collect()
}

/// For each op, its position among the job's kernels in issue order
/// (`u32::MAX` for copies and memsets): [`Job::kernel_position`].
fn kernel_positions(ops: &[GpuOp]) -> Vec<u32> {
    let mut next_pos = 0;
    ops.iter()
        .map(|o| {
            if o.is_kernel() {
                next_pos += 1;
                next_pos - 1
            } else {
                u32::MAX
            }
        })
        .collect()
}

/// For kernels in issue order as `(start, end)`, the idle time between the end
/// of each kernel and the start of the next one that begins after every kernel
/// issued so far has ended: the gap FIKIT can fill after that kernel. 0 when
/// the next kernel overlaps or follows at once, and for the last kernel.
pub fn profiled_gaps(kernels: &[(i64, i64)]) -> Vec<i64> {
    let mut out = vec![0; kernels.len()];
    let mut busy_until = i64::MIN;
    for i in 0..kernels.len() {
        busy_until = busy_until.max(kernels[i].1);
        if let Some(&(next_start, _)) = kernels.get(i + 1)
            && next_start > busy_until
        {
            out[i] = next_start - busy_until;
        }
    }
    out
}

/// Back-to-back gap when a job's trace shows too few ops queued well behind
/// their predecessor to measure its own, ns: the medians measured in the
/// shipped H200 traces were 1.0 µs (bert-base batch 1), 1.8 µs (bert-base
/// training) and 1.9 µs (resnet50 batch 128) (the lab log, 2026-11-22).
pub const DEFAULT_BACK_TO_BACK_NS: i64 = 1_500;
/// Fewest samples a job's own typical offset is taken from.
const MIN_OFFSET_SAMPLES: usize = 20;

/// The job's typical launch latency (median start − issue of ops launched to
/// an idle stream) and back-to-back gap (median start − previous end of ops
/// issued at least that latency before their predecessor ended, so the
/// latency did not decide their start), ns, from each op's recorded
/// `(start − issue, start − previous end on its stream)` (`i64::MAX`: none).
fn typical_offsets(recorded: &[(i64, i64)]) -> (i64, i64) {
    fn median(mut v: Vec<i64>) -> Option<i64> {
        if v.len() < MIN_OFFSET_SAMPLES {
            return None;
        }
        let mid = v.len() / 2;
        Some(*v.select_nth_unstable(mid).1)
    }
    let idle: Vec<i64> = recorded
        .iter()
        .filter(|&&(i, p)| p >= i)
        .map(|&(i, _)| i)
        .collect();
    let latency = median(idle).unwrap_or(0);
    let queued: Vec<i64> = recorded
        .iter()
        .filter(|&&(i, p)| p != i64::MAX && i - p >= latency.max(1))
        .map(|&(_, p)| p.max(0))
        .collect();
    let gap = median(queued).unwrap_or(DEFAULT_BACK_TO_BACK_NS);
    (latency, gap)
}
