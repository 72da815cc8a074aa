//! A job as the simulator replays it: its host thread's program, closed loop.
//!
//! The host's recorded actions become a sequence of [`HostStep`]s, each after a
//! host-side delay measured from the end of the previous step:
//! - [`HostStep::Issue`] hands a GPU operation to its stream (the launch call);
//! - [`HostStep::Wait`] blocks the host until a GPU operation is done (a
//!   synchronization or a blocking copy), then resumes after the recorded
//!   wake-up latency.
//!
//! So when another job delays a kernel, the host time behind a synchronization
//! moves with it, and the gaps behind asynchronous launches shrink, as on a
//! real GPU. Replayed alone, the program reproduces the recorded timeline: each
//! operation starts at `max(issue time, previous op on its stream done)` plus its
//! recorded start offset, and runs for its recorded duration.

use std::collections::HashMap;
use std::sync::Arc;

use fikit_trace::Trace;

/// One GPU operation of a job. Compact (56 bytes): a large input holds tens
/// of millions; a kernel's key and SM demand are read through
/// [`GpuOp::kernel_key`], [`Job::sm_demand`] and [`Job::occupancy`].
#[derive(Debug, Clone, PartialEq)]
pub struct GpuOp {
    /// Recorded duration, ns.
    pub duration_ns: i64,
    /// Time from the previous op on the stream done to this op's start, ns:
    /// the recorded one when the op was queued behind it, else the job's
    /// back-to-back gap (capped by what was recorded).
    pub start_offset_ns: i64,
    /// Time from the launch call to the op's start, ns (the launch latency):
    /// the recorded one when the op was launched to an idle stream, else the
    /// job's typical launch latency (capped by what was recorded). The op
    /// starts at `max(issue + issue_offset, previous done + start_offset)`,
    /// which alone is exactly the recorded start; when other jobs delay the
    /// stream, queued ops follow each other at the back-to-back gap, not at
    /// the launch latency.
    pub issue_offset_ns: i64,
    /// Recorded start, ns since the job's first host action (for reports).
    pub recorded_start_ns: i64,
    /// The kernel key (0 for a copy or memset).
    key: u64,
    /// The job-local stream index (0, 1, … in order of first use).
    pub stream: u32,
    /// Index of its launch shape in [`Job::shapes`] (copies of an op share it).
    pub shape: u32,
    /// Index of the kernel's occupancy in [`Job::occupancies`];
    /// [`GpuOp::NOT_A_KERNEL`] for a copy or memset.
    demand: u32,
}

/// How a kernel occupies the SMs: its blocks, how many fit on one SM, and
/// the device's SM count (from the trace's metadata).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Occupancy {
    /// Thread blocks in the grid (at least 1).
    pub blocks: u64,
    /// Blocks of this kernel that fit on one SM ([`blocks_per_sm`], at least 1).
    pub per_sm: u64,
    /// SMs of the device (at least 1).
    pub sms: u32,
    /// The fraction of the device's block room one wave takes: `blocks /
    /// (per_sm * sms)`, at most 1.
    pub demand: f64,
}

impl Occupancy {
    /// A kernel of `blocks` blocks, `per_sm` to an SM, on `sms` SMs.
    pub fn new(blocks: u64, per_sm: u64, sms: u32) -> Occupancy {
        let (blocks, per_sm, sms) = (blocks.max(1), per_sm.max(1), sms.max(1));
        let capacity = (per_sm * u64::from(sms)) as f64;
        Occupancy {
            blocks,
            per_sm,
            sms,
            demand: (blocks as f64 / capacity).min(1.0),
        }
    }

    /// Blocks of a full wave: as many as the device holds, or all of them.
    pub fn wave_blocks(&self) -> u64 {
        self.blocks.min(self.per_sm * u64::from(self.sms))
    }

    /// Waves the kernel runs alone: `ceil(blocks / wave_blocks)`.
    pub fn waves(&self) -> u64 {
        self.blocks.div_ceil(self.wave_blocks())
    }
}

/// How a recorded operation was launched: what live replay needs to launch
/// a stand-in of the same shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpShape {
    /// A kernel.
    Kernel {
        /// Grid, blocks.
        grid: [u32; 3],
        /// Block, threads.
        block: [u32; 3],
        /// Static plus dynamic shared memory per block, bytes.
        shared_bytes: u32,
    },
    /// A copy of `bytes` (`kind` `None`: a memset).
    Mem {
        /// Bytes.
        bytes: u64,
        /// Direction; `None` for a memset.
        kind: Option<fikit_trace::CopyKind>,
    },
}

impl GpuOp {
    /// [`GpuOp::demand`] of a copy or memset (which occupy a copy engine, not
    /// the SMs: they never wait for other jobs).
    const NOT_A_KERNEL: u32 = u32::MAX;

    /// True when the op runs on the SMs (a kernel).
    pub fn is_kernel(&self) -> bool {
        self.demand != Self::NOT_A_KERNEL
    }

    /// `Some(kernel_key)` for a kernel, `None` for a copy or memset.
    pub fn kernel_key(&self) -> Option<u64> {
        self.is_kernel().then_some(self.key)
    }
}

/// Index of "no operation" in [`HostStep::Wait::op`].
pub const NO_OP: u32 = u32::MAX;

/// One step of the host program (24 bytes: one per operation at least).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostStep {
    /// After `delay_ns` of host time, issue GPU operation `op`.
    Issue {
        /// Host time since the previous step ended, ns.
        delay_ns: i64,
        /// Index into [`Job::ops`].
        op: u32,
    },
    /// After `delay_ns`, block until operation `op` is done, then `wake_ns` more.
    Wait {
        /// Host time since the previous step ended, ns.
        delay_ns: i64,
        /// The operation waited for (index into [`Job::ops`]); [`NO_OP`] when
        /// nothing was outstanding.
        op: u32,
        /// Recorded time from the op's end (or the wait's start, if later) to the wait's return, ns.
        wake_ns: i64,
        /// True when the wait ends an iteration (a blocking host synchronization).
        ends_iteration: bool,
    },
    /// Wait until `at_ns` after the job's arrival: a request arrives; the
    /// iteration that follows is measured from this time (queueing included).
    Arrive {
        /// Arrival time relative to the job's arrival, ns.
        at_ns: i64,
    },
}

/// A job ready to replay.
#[derive(Debug, Clone)]
pub struct Job {
    /// Name.
    pub name: String,
    /// Priority: 0 is the highest.
    pub priority: u8,
    /// GPU operations, in issue order.
    pub ops: Arc<[GpuOp]>,
    /// The host program.
    pub steps: Arc<[HostStep]>,
    /// Host time after the last step until the job ends, ns (0: it ends with its last step or op).
    pub tail_ns: i64,
    /// Recorded span: first host action to the later of last op end and last host action end, ns.
    pub recorded_span_ns: i64,
    /// Recorded idle gap after each kernel, by kernel position (issue order of
    /// kernels): the profiled gap FIKIT predicts with. 0 when the next kernel
    /// followed at once or overlapped; the last kernel's is 0.
    pub gap_after_kernel_ns: Arc<[i64]>,
    /// Profiled mean duration per kernel key, ns: FIKIT's duration prediction.
    pub mean_duration_ns: Arc<HashMap<u64, i64>>,
    /// A metrics pass's figures per kernel key, where the trace carries them
    /// (`fikit-profile --metrics`); empty without. Under MPS they can weigh
    /// how hard a kernel presses on other jobs' kernels
    /// ([`crate::sim::gpu::corun_weight`]).
    pub metrics: Arc<HashMap<u64, fikit_trace::KernelMetrics>>,
    /// For each op, its position among the job's kernels in issue order
    /// (`u32::MAX` for copies and memsets).
    pub kernel_position: Arc<[u32]>,
    /// The distinct occupancies of the job's kernels: blocks, blocks per SM
    /// from the grid, block, registers and shared memory against the per-SM
    /// limits, and the SM demand ([`Job::occupancy`], [`Job::sm_demand`]).
    pub occupancies: Arc<[Occupancy]>,
    /// How many of the first iterations are the process's setup (weight
    /// upload, warm-up, autotuning) rather than work to measure: latency
    /// statistics leave them out. For a job made from a trace, the first
    /// ([`setup_iterations`]); 0 for a serving job, whose setup is no iteration.
    pub setup_iterations: usize,
    /// Launch shapes of the recorded operations ([`GpuOp::shape`] indexes
    /// it); empty unless the job was built with [`Job::from_trace_with_shapes`].
    pub shapes: Arc<[OpShape]>,
    /// Under MPS, how hard every kernel of the job presses on other jobs'
    /// kernels, 0 to 1, where measured ([`crate::sim::pressure`]: the job
    /// beside a latency-bound victim); it takes the place of any per-kernel
    /// weight from metrics. `None`: as the model weighs it (1 without
    /// metrics).
    pub pressure_weight: Option<f64>,
}

/// How many of a traced program's first iterations are its setup: the
/// first, and the second too when it holds a blocking wait ending no
/// iteration (a synchronous copy with no kernel since the previous wait: a
/// model's weights, uploaded one parameter at a time). A PyTorch program
/// that makes its input on the GPU before uploading its weights ends its
/// first iteration at the first weight's copy, and its second holds the
/// whole upload. At most two: a program that waits for a copy in every
/// iteration keeps the rest measured.
pub fn setup_iterations(steps: &[HostStep]) -> usize {
    let mut copy_waits = vec![0usize];
    for s in steps {
        if let HostStep::Wait { ends_iteration, .. } = *s {
            if ends_iteration {
                copy_waits.push(0);
            } else if let Some(last) = copy_waits.last_mut() {
                *last += 1;
            }
        }
    }
    if copy_waits.get(1).is_some_and(|&c| c > 0) {
        2
    } else {
        1
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
    /// The SM demand of operation `op` (0 for a copy or memset): the
    /// fraction of the device's SMs one wave of the kernel occupies (0..=1).
    pub fn sm_demand(&self, op: usize) -> f64 {
        self.occupancy(op).map_or(0.0, |o| o.demand)
    }

    /// Kernel `op`'s DRAM traffic, bytes/s (its key's DRAM bytes read and
    /// written over its recorded duration), and its SM issue rate, 0 to 1,
    /// where measured ([`Job::metrics`]). `None` for a copy or memset, or a
    /// kernel without figures.
    pub fn pressure(&self, op: usize) -> Option<(f64, Option<f64>)> {
        let o = &self.ops[op];
        let m = self.metrics.get(&o.kernel_key()?)?;
        let bytes = m.dram_read_bytes.saturating_add(m.dram_write_bytes);
        Some((
            bytes as f64 / (o.duration_ns.max(1) as f64 * 1e-9),
            m.sm_issue_bp.map(|b| f64::from(b) / 10_000.0),
        ))
    }

    /// How kernel `op` occupies the SMs (`None` for a copy or memset).
    pub fn occupancy(&self, op: usize) -> Option<&Occupancy> {
        let d = self.ops[op].demand;
        (d != GpuOp::NOT_A_KERNEL).then(|| &self.occupancies[d as usize])
    }

    /// Builds the replayable program of a trace.
    ///
    /// GPU operations without a recorded launch are issued at their recorded
    /// start. Blocking waits are the `sync` rows that block the host and the
    /// blocking API calls (`cudaMemcpy`, `cudaStreamSynchronize`, …); each waits
    /// for the operation, issued before it (on its stream, when it names one),
    /// that ended last before the wait returned.
    pub fn from_trace(trace: &Trace) -> Job {
        Job::build(trace, false)
    }

    /// [`Job::from_trace`] keeping every operation's launch shape
    /// ([`Job::shapes`]), which live replay needs; simulation does not (and
    /// saves their memory on large traces).
    pub fn from_trace_with_shapes(trace: &Trace) -> Job {
        Job::build(trace, true)
    }

    fn build(trace: &Trace, keep_shapes: bool) -> Job {
        let dev = &trace.meta.device;
        let mut streams: HashMap<(u32, u32, u32), u32> = HashMap::new();
        // One per operation (56 bytes; tens of millions on large inputs):
        // `src` indexes the kernels, then the memory operations, of the trace.
        struct Raw {
            issue: i64,
            start: i64,
            end: i64,
            key: u64,
            place: (u32, u32, u32),
            demand: u32,
            src: u32,
        }
        let nk = trace.kernels.len();
        // The distinct occupancies (kernels have few shapes).
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
        let is_kernel = |r: &Raw| r.demand != GpuOp::NOT_A_KERNEL;
        // Issue order: by issue time, then start.
        raw.sort_by_key(|r| (r.issue, r.start, r.end));

        let origin = raw
            .iter()
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
            .unwrap_or(0);

        // Offsets: each op's recorded start is max(issue + launch latency,
        // previous op on the stream done + back-to-back gap). The recording
        // shows one of the two per op (the one that decided its start); the
        // other is the job's typical value (capped so that alone the op
        // still starts when recorded).
        let mut prev_end: HashMap<(u32, u32, u32), i64> = HashMap::new();
        let mut recorded: Vec<(i64, i64)> = Vec::with_capacity(raw.len()); // (start - issue, start - previous end)
        for r in &raw {
            let prev = prev_end.insert(r.place, r.end).unwrap_or(i64::MIN);
            let after_prev = if prev == i64::MIN {
                i64::MAX
            } else {
                r.start - prev
            };
            recorded.push(((r.start - r.issue).max(0), after_prev));
        }
        let (latency, gap) = typical_offsets(&recorded);
        let mut ops = Vec::with_capacity(raw.len());
        let shapes: Vec<OpShape> = if keep_shapes {
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
        } else {
            Vec::new()
        };
        for r in &raw {
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

        // Host actions in recorded order.
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
        let mut synced: std::collections::HashSet<u32> =
            trace.syncs.iter().map(|s| s.correlation_id).collect();
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

        let mut steps = Vec::with_capacity(actions.len());
        let mut host_time = origin;
        // Per (context, stream): the issued ops as (end, index), sorted; ends
        // arrive nearly in order, so inserting is cheap and each wait's lookup
        // is a binary search.
        let mut ended_by_stream: HashMap<(u32, u32), Vec<(i64, u32)>> = HashMap::new();
        let mut kernels_in_iteration = 0usize;
        for a in &actions {
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
                    if is_kernel(&raw[op]) {
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
        let last_end = raw.iter().map(|r| r.end).max().unwrap_or(origin);
        let recorded_span_ns = last_end.max(host_time) - origin;

        // Profiled gaps after each kernel, by kernel position in issue order.
        let kernel_spans: Vec<(i64, i64)> = raw
            .iter()
            .filter(|r| is_kernel(r))
            .map(|r| (r.start, r.end))
            .collect();
        let gap_after_kernel_ns = profiled_gaps(&kernel_spans);

        // Summed as i128: durations of many kernels can pass i64 (a mean cannot).
        let mut sums: HashMap<u64, (i128, i128)> = HashMap::new();
        for k in &trace.kernels {
            let e = sums.entry(k.kernel_key).or_default();
            e.0 += i128::from(k.duration_ns());
            e.1 += 1;
        }
        let mean_duration_ns = sums
            .into_iter()
            .map(|(k, (s, n))| (k, (s / n) as i64))
            .collect();
        drop(raw);
        let mut next_pos = 0;
        let kernel_position: Vec<u32> = ops
            .iter()
            .map(|o| {
                if o.is_kernel() {
                    next_pos += 1;
                    next_pos - 1
                } else {
                    u32::MAX
                }
            })
            .collect();
        Job {
            kernel_position: kernel_position.into(),
            occupancies: occupancies.into(),
            setup_iterations: setup_iterations(&steps),
            name: trace.meta.job_name.clone(),
            priority: trace.meta.priority,
            ops: ops.into(),
            steps: steps.into(),
            tail_ns: 0,
            recorded_span_ns,
            gap_after_kernel_ns: gap_after_kernel_ns.into(),
            mean_duration_ns: Arc::new(mean_duration_ns),
            metrics: Arc::new(trace.kernel_metrics.iter().map(|(&k, &m)| (k, m)).collect()),
            shapes: shapes.into(),
            pressure_weight: None,
        }
    }

    /// The job with FIKIT's gap predictions made by kernel key instead of by
    /// position: the gap after each kernel is `gap_of(its key)`. A real
    /// program's gate (`fikit-run`) cannot know a kernel's position in the
    /// profile, only its key, so it predicts the gap after a key (the 10th
    /// percentile of the gaps after it: `fikit_gate::Table`); this is how
    /// the simulator predicts that gate.
    pub fn with_gaps_by_key(&self, gap_of: impl Fn(u64) -> i64) -> Job {
        let mut gaps = self.gap_after_kernel_ns.to_vec();
        for (op, &pos) in self.ops.iter().zip(self.kernel_position.iter()) {
            if let (Some(key), Some(g)) = (op.kernel_key(), gaps.get_mut(pos as usize)) {
                *g = gap_of(key);
            }
        }
        Job {
            gap_after_kernel_ns: gaps.into(),
            ..self.clone()
        }
    }

    /// The job on a host `factor` times as slow (below 1: faster): every
    /// host delay between its steps scaled, its GPU operations, the driver's
    /// wake-up after a wait and its profiled gaps (what a gate predicts
    /// with) as recorded. For a profile recorded while the host ran at
    /// another speed than the job's runs ([`Job::setup_iterations`] aside,
    /// a launch-bound job's iterations are its host delays).
    pub fn with_host_speed(&self, factor: f64) -> Job {
        let scale = |d: i64| (d as f64 * factor).round() as i64;
        let steps: Vec<HostStep> = self
            .steps
            .iter()
            .map(|s| match *s {
                HostStep::Issue { delay_ns, op } => HostStep::Issue {
                    delay_ns: scale(delay_ns),
                    op,
                },
                HostStep::Wait {
                    delay_ns,
                    op,
                    wake_ns,
                    ends_iteration,
                } => HostStep::Wait {
                    delay_ns: scale(delay_ns),
                    op,
                    wake_ns,
                    ends_iteration,
                },
                arrive @ HostStep::Arrive { .. } => arrive,
            })
            .collect();
        Job {
            steps: steps.into(),
            tail_ns: scale(self.tail_ns),
            ..self.clone()
        }
    }

    /// The job with every kernel pressing on other jobs' kernels under MPS
    /// at `weight` ([`Job::pressure_weight`]; clamped to 0..=1).
    pub fn with_pressure_weight(&self, weight: f64) -> Job {
        Job {
            pressure_weight: Some(if weight.is_finite() {
                weight.clamp(0.0, 1.0)
            } else {
                1.0
            }),
            ..self.clone()
        }
    }

    /// The mean host delay before a launch (an [`HostStep::Issue`]'s
    /// `delay_ns`), ns, over the issues after the first fifth of them (the
    /// set-up left out), the longest hundredth of those (rounded down) left
    /// out too (a pause between requests, a stray stall): how fast the
    /// job's host ran, as one figure that two recordings of one program can
    /// be compared by. `None` without issues after the first fifth.
    pub fn host_ns_per_launch(&self) -> Option<f64> {
        let mut d: Vec<i64> = self
            .steps
            .iter()
            .filter_map(|s| match *s {
                HostStep::Issue { delay_ns, .. } => Some(delay_ns),
                _ => None,
            })
            .collect();
        let mut steady = d.split_off(d.len() / 5);
        steady.sort_unstable();
        let keep = steady.len() - steady.len() / 100;
        (keep > 0).then(|| steady[..keep].iter().sum::<i64>() as f64 / keep as f64)
    }

    /// Number of kernels.
    pub fn kernel_count(&self) -> usize {
        self.ops.iter().filter(|o| o.is_kernel()).count()
    }

    /// The host program cut into iterations (each ends with a blocking wait),
    /// and the steps after the last one.
    fn iterations(&self) -> (Vec<&[HostStep]>, &[HostStep]) {
        let mut out = Vec::new();
        let mut from = 0;
        for (i, s) in self.steps.iter().enumerate() {
            if let HostStep::Wait {
                ends_iteration: true,
                ..
            } = s
            {
                out.push(&self.steps[from..=i]);
                from = i + 1;
            }
        }
        (out, &self.steps[from..])
    }

    /// The job with its whole program played `times` times back to back.
    pub fn repeated(&self, times: usize) -> Job {
        let parts: Vec<(Option<i64>, &[HostStep])> =
            (0..times).map(|_| (None, &self.steps[..])).collect();
        self.rebuilt(&parts)
    }

    /// The job serving requests that arrive at `arrivals` (ns after the job's
    /// arrival, ascending). The first recorded iteration (setup: weight
    /// uploads, warm-up, autotuning) runs once before the first request (which
    /// waits for it; it is no iteration of its own), and
    /// request `k` replays recorded iteration `1 + k mod (n - 1)`, starting
    /// when it has arrived and the previous request is done; its latency runs
    /// from its arrival. The steps after the last recorded iteration run once
    /// at the end. A job with one iteration or none serves each request with
    /// its whole program. (Of a program that makes its input on the GPU
    /// before uploading its weights, whose second iteration is the upload
    /// ([`Job::setup_iterations`]), that upload is one of the requests
    /// replayed: kept so, as the saved live replays of serving scenarios
    /// ran it so.)
    pub fn serving(&self, arrivals: &[i64]) -> Job {
        let (iters, tail) = self.iterations();
        if iters.len() >= 2 {
            let requests = arrivals
                .iter()
                .enumerate()
                .map(|(k, &a)| (Some(a), iters[1 + k % (iters.len() - 1)]));
            let parts: Vec<(Option<i64>, &[HostStep])> = std::iter::once((None, iters[0]))
                .chain(requests)
                .chain((!tail.is_empty()).then_some((None, tail)))
                .collect();
            let mut job = self.rebuilt(&parts);
            job.setup_iterations = 0;
            // The setup is no request: its time counts in the first request's
            // latency (which waits for it), not as an iteration of its own.
            let mut steps = job.steps.to_vec();
            for step in steps.iter_mut() {
                match step {
                    HostStep::Arrive { .. } => break,
                    HostStep::Wait { ends_iteration, .. } => *ends_iteration = false,
                    HostStep::Issue { .. } => {}
                }
            }
            job.steps = steps.into();
            return job;
        }
        let parts: Vec<(Option<i64>, &[HostStep])> = arrivals
            .iter()
            .map(|&a| (Some(a), &self.steps[..]))
            .collect();
        let mut job = self.rebuilt(&parts);
        job.setup_iterations = 0;
        job
    }

    /// A job whose program is `parts` in order, each optionally preceded by an
    /// arrival. Ops are copied per part; a wait for an op issued outside its
    /// part waits for nothing.
    fn rebuilt(&self, parts: &[(Option<i64>, &[HostStep])]) -> Job {
        let mut ops = Vec::new();
        let mut steps = Vec::new();
        let mut kernel_position = Vec::new();
        let mut next_pos = 0;
        for (arrival, part) in parts {
            if let Some(at_ns) = arrival {
                steps.push(HostStep::Arrive { at_ns: *at_ns });
            }
            let mut map: HashMap<u32, u32> = HashMap::new();
            for step in part.iter() {
                match *step {
                    HostStep::Issue { delay_ns, op } => {
                        let o = &self.ops[op as usize];
                        map.insert(op, ops.len() as u32);
                        ops.push(o.clone());
                        if o.is_kernel() {
                            kernel_position.push(next_pos);
                            next_pos += 1;
                        } else {
                            kernel_position.push(u32::MAX);
                        }
                        steps.push(HostStep::Issue {
                            delay_ns,
                            op: ops.len() as u32 - 1,
                        });
                    }
                    HostStep::Wait {
                        delay_ns,
                        op,
                        wake_ns,
                        ends_iteration,
                    } => steps.push(HostStep::Wait {
                        delay_ns,
                        op: map.get(&op).copied().unwrap_or(NO_OP),
                        wake_ns,
                        ends_iteration,
                    }),
                    HostStep::Arrive { at_ns } => steps.push(HostStep::Arrive { at_ns }),
                }
            }
        }
        // Profiled gaps follow the copied kernels, by their original positions.
        let mut gaps = Vec::with_capacity(next_pos as usize);
        for (_, part) in parts {
            for step in part.iter() {
                if let HostStep::Issue { op, .. } = *step
                    && self.ops[op as usize].is_kernel()
                {
                    gaps.push(self.gap_after_kernel_ns[self.kernel_position[op as usize] as usize]);
                }
            }
        }
        Job {
            name: self.name.clone(),
            priority: self.priority,
            ops: ops.into(),
            steps: steps.into(),
            tail_ns: self.tail_ns,
            recorded_span_ns: self.recorded_span_ns,
            gap_after_kernel_ns: gaps.into(),
            mean_duration_ns: Arc::clone(&self.mean_duration_ns),
            metrics: Arc::clone(&self.metrics),
            kernel_position: kernel_position.into(),
            occupancies: Arc::clone(&self.occupancies),
            setup_iterations: self.setup_iterations,
            shapes: Arc::clone(&self.shapes),
            pressure_weight: self.pressure_weight,
        }
    }
}

/// `count` Poisson arrivals at `rate_per_s`, ns from 0, from `seed`: the
/// inter-arrival times are exponential, drawn with SplitMix64 (a fixed
/// algorithm, so a seed gives the same arrivals on every machine and version).
pub fn poisson_arrivals(count: usize, rate_per_s: f64, seed: u64) -> Vec<i64> {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mean_ns = 1e9 / rate_per_s;
    let mut t = 0.0f64;
    (0..count)
        .map(|_| {
            // Uniform in (0, 1]: 53 random bits.
            let u = ((next() >> 11) + 1) as f64 / (1u64 << 53) as f64;
            t += -u.ln() * mean_ns;
            t.round() as i64
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
/// training) and 1.9 µs (resnet50 batch 128) (simulator/README.md).
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

// The sizes the large-input figures (simulator/README.md, "Large inputs")
// depend on: one of each per operation.
const _: () = assert!(std::mem::size_of::<GpuOp>() == 56);
const _: () = assert!(std::mem::size_of::<HostStep>() == 24);

#[cfg(test)]
mod tests {
    use super::*;

    fn issue() -> HostStep {
        HostStep::Issue { delay_ns: 0, op: 0 }
    }

    fn wait(ends_iteration: bool) -> HostStep {
        HostStep::Wait {
            delay_ns: 0,
            op: NO_OP,
            wake_ns: 0,
            ends_iteration,
        }
    }

    #[test]
    fn set_up_runs_through_the_weight_upload() {
        // The input made on the GPU (a kernel), then two weights' copies,
        // each waited for: the first copy's wait ends iteration 1, the second
        // ends none, and iteration 2 (the upload) ends at the first warm-up
        // step's wait; steps follow.
        let input_first = [
            issue(),
            wait(true),
            issue(),
            wait(false),
            issue(),
            wait(true),
            issue(),
            wait(true),
            issue(),
            wait(true),
        ];
        assert_eq!(setup_iterations(&input_first), 2);
        // Weights first: the upload is all in iteration 1.
        let weights_first = [
            issue(),
            wait(false),
            issue(),
            wait(false),
            issue(),
            wait(true),
            issue(),
            wait(true),
        ];
        assert_eq!(setup_iterations(&weights_first), 1);
        // No waits at all: the one iteration is the set-up.
        assert_eq!(setup_iterations(&[issue()]), 1);
        // A copy-only wait later in the run does not reach back.
        let late = [
            issue(),
            wait(true),
            issue(),
            wait(true),
            issue(),
            wait(false),
            wait(true),
        ];
        assert_eq!(setup_iterations(&late), 1);
        // A copy waited for in every iteration: the set-up stops at two.
        let every: Vec<HostStep> = (0..5)
            .flat_map(|_| [issue(), wait(false), issue(), wait(true)])
            .collect();
        assert_eq!(setup_iterations(&every), 2);
    }

    #[test]
    fn a_faster_host_shortens_its_delays_only() {
        let job = Job::from_trace(&fikit_trace::fixture::serving("j", 0, 3));
        let fast = job.with_host_speed(0.5);
        assert_eq!(fast.ops.len(), job.ops.len());
        let delays = |j: &Job| -> Vec<(i64, i64)> {
            j.steps
                .iter()
                .filter_map(|s| match *s {
                    HostStep::Issue { delay_ns, .. } => Some((delay_ns, 0)),
                    HostStep::Wait {
                        delay_ns, wake_ns, ..
                    } => Some((delay_ns, wake_ns)),
                    HostStep::Arrive { .. } => None,
                })
                .collect()
        };
        let (before, after) = (delays(&job), delays(&fast));
        assert!(
            before.iter().any(|&(d, _)| d > 1),
            "the fixture has host delays"
        );
        for ((d, w), (d2, w2)) in before.iter().zip(&after) {
            assert_eq!(*d2, (*d as f64 * 0.5).round() as i64);
            assert_eq!(w, w2, "the driver's wake-up stays");
        }
        assert_eq!(fast.gap_after_kernel_ns, job.gap_after_kernel_ns);
        assert_eq!(job.with_host_speed(1.0).steps.len(), job.steps.len());
    }

    #[test]
    fn the_host_per_launch_leaves_out_the_set_up_the_waits_and_the_longest_hundredth() {
        let job = Job::from_trace(&fikit_trace::fixture::serving("j", 0, 3));
        let at = |delay_ns| HostStep::Issue { delay_ns, op: 0 };
        // Ten issues, a wait between them that counts for nothing: the
        // first two (1,000 and 5) are the set-up; the other eight average
        // (7 + 9 + 30 + 40 + 50 + 60 + 70 + 80) / 8 = 43.25, none left out
        // (8 / 100 rounds down to 0).
        let mut steps = Vec::new();
        for d in [1_000, 5, 7, 9, 30, 40, 50, 60, 70, 80] {
            steps.push(at(d));
            steps.push(HostStep::Wait {
                delay_ns: 99_999,
                op: NO_OP,
                wake_ns: 0,
                ends_iteration: true,
            });
        }
        let hand = Job {
            steps: steps.into(),
            ..job.clone()
        };
        assert_eq!(hand.host_ns_per_launch(), Some(43.25));
        // A host twice as slow doubles it.
        assert_eq!(hand.with_host_speed(2.0).host_ns_per_launch(), Some(86.5));
        // 251 issues: the first 50 (251 / 5) are the set-up, delays of 1 ms;
        // of the other 201, 198 of 10 ns, one of 30 and two pauses of 5 ms:
        // the longest two (201 / 100) are left out, the rest average
        // (198 x 10 + 30) / 199 = 10.1005...
        let mut d = vec![1_000_000; 50];
        d.extend([10; 99]);
        d.push(5_000_000);
        d.push(30);
        d.extend([10; 99]);
        d.push(5_000_000);
        let paused = Job {
            steps: d.into_iter().map(at).collect::<Vec<_>>().into(),
            ..job.clone()
        };
        let h = paused.host_ns_per_launch().unwrap();
        assert!((h - 2_010.0 / 199.0).abs() < 1e-9, "{h}");
        // One issue: its fifth (1 / 5) rounds down to none, so it is kept.
        let one = Job {
            steps: vec![at(7)].into(),
            ..job.clone()
        };
        assert_eq!(one.host_ns_per_launch(), Some(7.0));
        let none = Job {
            steps: Vec::new().into(),
            ..job
        };
        assert_eq!(none.host_ns_per_launch(), None);
    }
}
