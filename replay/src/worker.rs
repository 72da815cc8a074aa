//! One job's worker process: replays its [`Plan`] on the GPU.
//!
//! The host thread runs the plan's steps on the monotonic clock: each step is
//! due its delay after the previous one was due (so the schedule does not
//! drift when a launch call is slow), and a wait returns no earlier than its
//! recorded wake-up. Kernels become the synthetic kernel of
//! [`crate::gpu::KERNEL_SOURCE`] with the recorded block and shared memory
//! and the recorded grid, cut to one wave (as many blocks as fit on the
//! device at once): each block executes `duration - floor`, where `floor` is
//! the measured GPU time of an empty synthetic kernel. A kernel of several
//! waves keeps every slot it can use busy for its whole duration, as that one
//! wave does.
//! Copies and memsets move the recorded bytes.
//!
//! Under a gated policy (preemptive, fikit) the host thread hands operations
//! to a submission thread, which holds each kernel until the policy's
//! [`crate::gate`] lets it go; the host goes on issuing meanwhile, as in the
//! simulator, where issuing never blocks the host.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::mpsc;

use crate::control::{Control, state};
use crate::gate::{self, JobView};
use crate::gpu::{DeviceBuffer, Event, Gpu, PinnedBuffer, Stream};
use crate::plan::{LivePolicy, OpKind, Plan, Step, WorkerResult};
use crate::{ReplayError, now_ns, spin_until};

/// Largest copy or memset replayed, bytes (larger ones move this many).
pub const MAX_COPY_BYTES: u64 = 512 << 20;
/// A step due more than this late counts as late, ns.
pub const LATE_NS: i64 = 50_000;
/// How long a worker waits for the run to start, ns.
pub const START_TIMEOUT_NS: i64 = 300_000_000_000;
/// Environment variable: a folder where each worker writes its job's
/// timeline (a diagnostic for fitting the GPU model; see [`write_timeline`]).
pub const TIMELINE_ENV: &str = "FIKIT_LIVE_TIMELINE";

struct Shared {
    gpu: Gpu,
    streams: Vec<Stream>,
    counters: DeviceBuffer,
    done_ptr: u64,
    host: PinnedBuffer,
    dev: DeviceBuffer,
    dev2: DeviceBuffer,
    events: Vec<Option<Event>>,
    per_block_ns: Vec<u64>,
    counter_index: Vec<usize>,
    shapes: Vec<([u32; 3], [u32; 3], u32)>,
    submitted: Vec<AtomicBool>,
    gate_wait_ns: AtomicI64,
    /// Timeline stamps (4 words per kernel), or 0 when off.
    stamps: u64,
    /// Monotonic time each op was issued by the host thread and handed to the
    /// GPU (empty when timelines are off: nothing is stamped then).
    issued_ns: Vec<AtomicI64>,
    submitted_ns: Vec<AtomicI64>,
}

// SAFETY: CUDA driver handles may be used from any thread on which their
// context is current; the submission thread makes the primary context current
// before using them, and the host buffers are only touched by the GPU.
unsafe impl Send for Shared {}
// SAFETY: as above; the mutable state is atomics.
unsafe impl Sync for Shared {}

/// Replays `plan` as job `plan.index` of the run behind `control`, on device
/// `ordinal`. Marks the job ready, waits for the run's start, runs, and marks
/// it finished (or failed).
pub fn run(plan: &Plan, control: Arc<Control>, ordinal: i32) -> Result<WorkerResult, ReplayError> {
    let slot = control.slot(plan.index);
    let r = run_inner(plan, &control, ordinal);
    slot.state.store(
        if r.is_ok() {
            state::FINISHED
        } else {
            state::FAILED
        },
        Ordering::SeqCst,
    );
    if r.is_err() {
        control.header().abort.store(1, Ordering::SeqCst);
    }
    r
}

fn run_inner(
    plan: &Plan,
    control: &Arc<Control>,
    ordinal: i32,
) -> Result<WorkerResult, ReplayError> {
    let slot = control.slot(plan.index);
    let Prepared {
        shared,
        floor,
        kernels,
        timeline,
    } = prepare(plan, control, ordinal)?;

    // Ready; wait for the start.
    slot.state.store(state::READY, Ordering::SeqCst);
    let start = wait_for_start(control)?;
    let arrived = spin_until(start + plan.arrival_ns);
    slot.state.store(state::ARRIVED, Ordering::SeqCst);

    // Under a gated policy, a submission thread launches.
    let (tx, submitter) = if plan.policy.gated() {
        let (tx, rx) = mpsc::channel::<usize>();
        let sh = Arc::clone(&shared);
        let plan2 = plan.clone();
        let ctl = Arc::clone(control);
        let h = std::thread::spawn(move || submit_loop(&plan2, &ctl, &sh, rx, start));
        (Some(tx), Some(h))
    } else {
        (None, None)
    };

    let mut r = replay_steps(plan, control, &shared, tx.as_ref(), arrived);
    drop(tx);
    if let Some(h) = submitter {
        match h.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => r.result = r.result.and(Err(e)),
            Err(_) => {
                r.result = r.result.and(Err(ReplayError::Timeout(
                    "the submission thread panicked".into(),
                )))
            }
        }
    }
    r.result?;
    shared.gpu.synchronize()?;
    let finished = now_ns().max(spin_until(r.t_ref + plan.tail_ns));
    if let Some((dir, b, clock)) = &timeline {
        let words = shared.gpu.read_u64(*b, 4 * kernels)?;
        write_timeline(dir, plan, &shared, &words, *clock).map_err(|e| {
            ReplayError::Timeout(format!(
                "cannot write the timeline in {}: {e}",
                dir.display()
            ))
        })?;
    }
    Ok(WorkerResult {
        job: plan.job.clone(),
        arrived_ns: arrived,
        finished_ns: finished,
        iterations_ns: r.iterations,
        kernels: r.launched,
        kernel_floor_ns: floor,
        gate_wait_ns: shared.gate_wait_ns.load(Ordering::SeqCst),
        late_steps: r.late,
    })
}

/// A worker's GPU state before the run starts ([`prepare`]).
struct Prepared {
    shared: Arc<Shared>,
    /// The measured GPU time of an empty synthetic kernel, ns.
    floor: i64,
    /// Kernels in the plan.
    kernels: usize,
    /// With [`TIMELINE_ENV`] set: its folder, the kernels' timeline stamps
    /// and the clock offset ([`clock_offset`]).
    timeline: Option<(std::path::PathBuf, DeviceBuffer, (i64, i64))>,
}

/// Opens device `ordinal` and sets up everything the plan's replay needs:
/// streams, the host mapping of the control block (gated policies),
/// buffers, events, the synthetic kernels' shapes, and timeline stamps.
fn prepare(plan: &Plan, control: &Control, ordinal: i32) -> Result<Prepared, ReplayError> {
    let me = plan.index;
    let gpu = Gpu::open(ordinal)?;
    let highest = plan.jobs.iter().map(|j| j.priority).min() == Some(plan.priority);
    let high = plan.policy == LivePolicy::Preemptive && highest;
    let streams = (0..plan.streams())
        .map(|_| gpu.stream(high))
        .collect::<Result<Vec<_>, _>>()?;
    let (base, len) = control.raw();
    // Only the gates read the completion words: the other policies' kernels
    // do not write them (no per-block atomics, nothing the recording lacked).
    let done_ptr = if plan.policy.gated() {
        // SAFETY: the control mapping lives (is never unmapped) for the rest of the process.
        let dmap = unsafe { gpu.map_host(base, len)? };
        dmap + Control::done_offset(me) as u64
    } else {
        0
    };

    let kernels = plan
        .ops
        .iter()
        .filter(|o| matches!(o.kind, OpKind::Kernel { .. }))
        .count();
    let counters = gpu.alloc(4 * kernels.max(1))?;
    let copy_bytes = plan
        .ops
        .iter()
        .map(|o| match o.kind {
            OpKind::Copy { bytes, .. } | OpKind::Memset { bytes } => bytes.min(MAX_COPY_BYTES),
            OpKind::Kernel { .. } => 0,
        })
        .max()
        .unwrap_or(0) as usize;
    let host = gpu.alloc_pinned(copy_bytes)?;
    let dev = gpu.alloc(copy_bytes)?;
    let dev2 = gpu.alloc(copy_bytes)?;
    let events = wait_events(&gpu, plan)?;

    let floor = kernel_floor(&gpu, streams[0])?;
    let KernelShapes {
        per_block_ns,
        counter_index,
        shapes,
    } = kernel_shapes(&gpu, plan, floor)?;

    let timeline = match std::env::var_os(TIMELINE_ENV).map(std::path::PathBuf::from) {
        Some(dir) => {
            let b = gpu.alloc(32 * kernels.max(1))?;
            gpu.fill(b, 0xFF)?;
            Some((dir, b, clock_offset(&gpu, streams[0])?))
        }
        None => None,
    };
    let stamps = timeline.as_ref().map(|t| t.1);

    let shared = Arc::new(Shared {
        gpu,
        streams,
        counters,
        done_ptr,
        host,
        dev,
        dev2,
        events,
        per_block_ns,
        counter_index,
        shapes,
        submitted: (0..plan.ops.len())
            .map(|_| AtomicBool::new(false))
            .collect(),
        gate_wait_ns: AtomicI64::new(0),
        stamps: stamps.map_or(0, |b| b.at(0)),
        issued_ns: stamp_slots(stamps.is_some(), plan.ops.len()),
        submitted_ns: stamp_slots(stamps.is_some(), plan.ops.len()),
    });
    Ok(Prepared {
        shared,
        floor,
        kernels,
        timeline,
    })
}

/// An event per op that a step waits for, `None` for the others.
fn wait_events(gpu: &Gpu, plan: &Plan) -> Result<Vec<Option<Event>>, ReplayError> {
    let mut waited = vec![false; plan.ops.len()];
    for s in &plan.steps {
        if let Step::Wait { op: Some(op), .. } = *s {
            waited[op] = true;
        }
    }
    waited
        .iter()
        .map(|&w| {
            if w {
                Ok(Some(gpu.event(false)?))
            } else {
                Ok(None)
            }
        })
        .collect()
}

/// The synthetic kernels of a plan, per op (kernels only; zero for the rest).
struct KernelShapes {
    /// Each block's spin time, ns: the recorded duration less the floor.
    per_block_ns: Vec<u64>,
    /// The kernel's completion counter.
    counter_index: Vec<usize>,
    /// Grid, block and dynamic shared memory.
    shapes: Vec<([u32; 3], [u32; 3], u32)>,
}

/// The shapes the plan's kernels are replayed with: the recorded block (at
/// most 1,024 threads) and shared memory (without it where the block does
/// not fit with it), the grid cut to one wave.
fn kernel_shapes(gpu: &Gpu, plan: &Plan, floor: i64) -> Result<KernelShapes, ReplayError> {
    let mut occupancy: HashMap<(u32, u32), u32> = HashMap::new();
    let mut per_block_ns = vec![0u64; plan.ops.len()];
    let mut counter_index = vec![0usize; plan.ops.len()];
    let mut next_counter = 0;
    let mut shapes = vec![([1, 1, 1], [1, 1, 1], 0); plan.ops.len()];
    for (i, o) in plan.ops.iter().enumerate() {
        if let OpKind::Kernel {
            grid,
            block,
            shared_bytes,
            ..
        } = o.kind
        {
            let mut block = block;
            let threads: u32 = block.iter().product();
            if threads > 1024 {
                block = [1024, 1, 1];
            }
            let threads: u32 = block.iter().product();
            let mut shared = shared_bytes.min(gpu.max_shared());
            let mut per_sm = match occupancy.get(&(threads, shared)) {
                Some(&n) => n,
                None => {
                    let n = gpu.blocks_per_sm(threads, shared)?;
                    occupancy.insert((threads, shared), n);
                    n
                }
            };
            if per_sm == 0 {
                shared = 0;
                per_sm = gpu.blocks_per_sm(threads, 0)?.max(1);
            }
            // One wave stands for all: a kernel of several waves keeps every
            // slot it can use busy for its whole duration, as one full wave
            // spinning that long does (without paying for every later wave's
            // block scheduling, which the recorded duration already holds).
            let blocks: u64 = grid.iter().map(|&g| u64::from(g)).product();
            let capacity = u64::from(per_sm) * u64::from(gpu.sm_count);
            let grid = if blocks > capacity {
                [capacity.max(1) as u32, 1, 1]
            } else {
                grid
            };
            per_block_ns[i] = (o.duration_ns - floor).max(0) as u64;
            shapes[i] = (grid, block, shared);
            counter_index[i] = next_counter;
            next_counter += 1;
        }
    }
    Ok(KernelShapes {
        per_block_ns,
        counter_index,
        shapes,
    })
}

/// Waits for the parent to set the run's start time; returns it.
fn wait_for_start(control: &Control) -> Result<i64, ReplayError> {
    let waiting_since = now_ns();
    loop {
        let s = control.header().start_ns.load(Ordering::SeqCst);
        if s != 0 {
            return Ok(s);
        }
        if control.header().abort.load(Ordering::SeqCst) != 0 {
            return Err(ReplayError::Timeout(
                "the run was aborted before it started".into(),
            ));
        }
        if now_ns() - waiting_since > START_TIMEOUT_NS {
            return Err(ReplayError::Timeout(
                "the run did not start within 300 s".into(),
            ));
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

/// What the host thread's pass over the plan's steps saw ([`replay_steps`]).
struct Replayed {
    /// When the latest step was due (or returned), ns.
    t_ref: i64,
    iterations: Vec<i64>,
    late: usize,
    launched: usize,
    result: Result<(), ReplayError>,
}

/// Runs the plan's steps on the host thread from `arrived`: issues each op
/// (to the submission thread `tx` under a gated policy, else to the GPU at
/// once) and waits where the plan waits. Stops at the first error or abort.
fn replay_steps(
    plan: &Plan,
    control: &Control,
    shared: &Shared,
    tx: Option<&mpsc::Sender<usize>>,
    arrived: i64,
) -> Replayed {
    let mut r = Replayed {
        t_ref: arrived,
        iterations: Vec::new(),
        late: 0,
        launched: 0,
        result: Ok(()),
    };
    let mut iteration_start = arrived;
    // What request arrivals count from: when the host first reached one
    // (a serving job's set-up done), as the simulator counts them.
    let mut requests_from: Option<i64> = None;
    for step in &plan.steps {
        if control.header().abort.load(Ordering::Relaxed) != 0 {
            r.result = Err(ReplayError::Timeout(
                "another worker failed; run aborted".into(),
            ));
            break;
        }
        match *step {
            Step::Issue { delay_ns, op } => {
                let due = r.t_ref + delay_ns;
                if spin_until(due) - due > LATE_NS {
                    r.late += 1;
                }
                r.t_ref = due;
                if let Some(t) = shared.issued_ns.get(op) {
                    t.store(now_ns(), Ordering::Relaxed);
                }
                if matches!(plan.ops[op].kind, OpKind::Kernel { .. }) {
                    r.launched += 1;
                }
                match tx {
                    Some(tx) => {
                        if tx.send(op).is_err() {
                            r.result =
                                Err(ReplayError::Timeout("the submission thread stopped".into()));
                            break;
                        }
                    }
                    None => {
                        if let Err(e) = submit(plan, control, shared, op) {
                            r.result = Err(e);
                            break;
                        }
                    }
                }
            }
            Step::Wait {
                delay_ns,
                op,
                wake_ns,
                ends_iteration,
            } => {
                let due = r.t_ref + delay_ns;
                if spin_until(due) - due > LATE_NS {
                    r.late += 1;
                }
                if let Some(op) = op {
                    while !shared.submitted[op].load(Ordering::Acquire) {
                        if control.header().abort.load(Ordering::Relaxed) != 0 {
                            break;
                        }
                        std::hint::spin_loop();
                    }
                    if let Some(e) = shared.events[op]
                        && let Err(e) = shared.gpu.wait(e)
                    {
                        r.result = Err(e.into());
                        break;
                    }
                }
                r.t_ref = spin_until(due + wake_ns);
                if ends_iteration {
                    r.iterations.push(r.t_ref - iteration_start);
                    iteration_start = r.t_ref;
                }
            }
            Step::Arrive { at_ns } => {
                let from = *requests_from.get_or_insert(r.t_ref);
                r.t_ref = spin_until(from + at_ns).max(r.t_ref);
                iteration_start = from + at_ns;
            }
        }
    }
    r
}

/// Hands op `op` to the GPU now.
fn submit(plan: &Plan, control: &Control, sh: &Shared, op: usize) -> Result<(), ReplayError> {
    let o = &plan.ops[op];
    let s = sh.streams[o.stream as usize];
    match o.kind {
        OpKind::Kernel { position, .. } => {
            let (grid, block, shared) = sh.shapes[op];
            let slot = control.slot(plan.index);
            slot.launched.fetch_add(1, Ordering::SeqCst);
            let counter = sh.counters.at(4 * sh.counter_index[op]);
            let stamp = if sh.stamps == 0 {
                0
            } else {
                sh.stamps + 32 * sh.counter_index[op] as u64
            };
            if let Some(t) = sh.submitted_ns.get(op) {
                t.store(now_ns(), Ordering::Relaxed);
            }
            sh.gpu.launch_spin(
                s,
                grid,
                block,
                shared,
                sh.per_block_ns[op],
                (sh.done_ptr != 0).then_some((counter, sh.done_ptr, u64::from(position))),
                stamp,
            )?;
        }
        OpKind::Copy { bytes, dir } => {
            sh.gpu.copy(
                s,
                dir,
                bytes.min(MAX_COPY_BYTES) as usize,
                &sh.host,
                sh.dev,
                sh.dev2,
            )?;
        }
        OpKind::Memset { bytes } => {
            sh.gpu
                .memset(s, bytes.min(MAX_COPY_BYTES) as usize, sh.dev)?;
        }
    }
    if let Some(e) = sh.events[op] {
        sh.gpu.record(e, s)?;
    }
    sh.submitted[op].store(true, Ordering::Release);
    Ok(())
}

/// What the gates see now, into `out` (reused: the gate polls in a spin loop).
fn views(plan: &Plan, control: &Control, out: &mut Vec<JobView>) {
    out.clear();
    out.extend(plan.jobs.iter().map(|j| {
        let s = control.slot(j.index);
        let done = s.done.load(Ordering::SeqCst);
        let launched = s.launched.load(Ordering::SeqCst);
        JobView {
            index: j.index,
            priority: j.priority,
            active: s.state.load(Ordering::SeqCst) == state::ARRIVED,
            in_flight: launched.saturating_sub(done),
            done,
            last_done: s.last_done.load(Ordering::SeqCst),
            waiting_ns: 0,
            waiting_since_ns: 0,
        }
    }));
}

fn submit_loop(
    plan: &Plan,
    control: &Control,
    sh: &Shared,
    rx: mpsc::Receiver<usize>,
    start: i64,
) -> Result<(), ReplayError> {
    sh.gpu.make_current()?;
    let me = plan
        .jobs
        .iter()
        .position(|j| j.index == plan.index)
        .expect("validated: the job is among `jobs`");
    // The top job's idle gap: (top index, its done count) when first seen idle, and when.
    let mut idle: Option<((usize, u64), i64)> = None;
    let mut v = Vec::with_capacity(plan.jobs.len());
    while let Ok(op) = rx.recv() {
        if let OpKind::Kernel { predicted_ns, .. } = plan.ops[op].kind {
            let t0 = now_ns();
            loop {
                if control.header().abort.load(Ordering::Relaxed) != 0 {
                    return Err(ReplayError::Timeout("run aborted".into()));
                }
                views(plan, control, &mut v);
                let go = match plan.policy {
                    LivePolicy::Preemptive => gate::preemptive(me, &v),
                    LivePolicy::Fikit => {
                        let now = now_ns();
                        match gate::top(&v) {
                            Some(t) if t.index != plan.index => {
                                let key = (t.index, t.done);
                                let since = match idle {
                                    Some((k, at)) if k == key => at,
                                    _ => {
                                        idle = Some((key, now));
                                        now
                                    }
                                };
                                let info = plan
                                    .jobs
                                    .iter()
                                    .find(|j| j.index == t.index)
                                    .expect("views come from plan.jobs");
                                let end = gate::gap_end(t, info, since, start);
                                gate::fikit(me, &v, predicted_ns, now, end)
                            }
                            _ => true,
                        }
                    }
                    _ => true,
                };
                if go {
                    break;
                }
                std::hint::spin_loop();
            }
            sh.gate_wait_ns.fetch_add(now_ns() - t0, Ordering::Relaxed);
        }
        submit(plan, control, sh, op)?;
    }
    Ok(())
}

/// GPU time of one empty synthetic kernel in a back-to-back stream, ns.
fn kernel_floor(gpu: &Gpu, s: Stream) -> Result<i64, ReplayError> {
    for _ in 0..20 {
        gpu.launch_spin(s, [1, 1, 1], [32, 1, 1], 0, 0, None, 0)?;
    }
    let (a, b) = (gpu.event(true)?, gpu.event(true)?);
    const N: i64 = 200;
    gpu.record(a, s)?;
    for _ in 0..N {
        gpu.launch_spin(s, [1, 1, 1], [32, 1, 1], 0, 0, None, 0)?;
    }
    gpu.record(b, s)?;
    gpu.wait(b)?;
    let ms = gpu.elapsed_ms(a, b)?;
    Ok((f64::from(ms) * 1e6 / N as f64).round() as i64)
}

/// `n` host time stamps when timelines are on, none otherwise.
fn stamp_slots(on: bool, n: usize) -> Vec<AtomicI64> {
    (0..if on { n } else { 0 })
        .map(|_| AtomicI64::new(0))
        .collect()
}

/// The GPU's global timer minus the monotonic clock, ns, and its uncertainty
/// (half the shortest host round trip around a one-thread kernel that reads
/// the timer), from 20 tries.
fn clock_offset(gpu: &Gpu, s: Stream) -> Result<(i64, i64), ReplayError> {
    let out = gpu.alloc(8 * 3)?;
    let mut best = (0, i64::MAX);
    for _ in 0..20 {
        let t0 = now_ns();
        gpu.launch_probe(s, 1, 0, u64::MAX / 2, out, 0)?;
        gpu.synchronize()?;
        let t1 = now_ns();
        let gt = gpu.read_u64(out, 1)?[0] as i64;
        let half = (t1 - t0) / 2;
        if half < best.1 {
            best = (gt - (t0 + half), half);
        }
    }
    Ok(best)
}

/// Writes the job's timeline to `DIR/INDEX-JOB.csv`: one row per operation,
/// in the GPU's global-timer nanoseconds: when the host thread issued it,
/// when it was handed to the driver (later under a gated policy), and for
/// kernels the first block's start, the last block's end, and the time block
/// 0 spent switched out (`switched_ns`, over `jumps` timer jumps). Copies
/// and memsets have no GPU stamps (empty fields). Host times carry the clock
/// offset's uncertainty (in the header).
fn write_timeline(
    dir: &std::path::Path,
    plan: &Plan,
    sh: &Shared,
    words: &[u64],
    (offset, uncertainty): (i64, i64),
) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::create_dir_all(dir)?;
    let name: String = plan
        .job
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = dir.join(format!("{}-{name}.csv", plan.index));
    let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(
        w,
        "# job={} index={} priority={} policy={:?} clock_offset_ns={offset} uncertainty_ns={uncertainty}",
        plan.job, plan.index, plan.priority, plan.policy
    )?;
    writeln!(
        w,
        "op,kind,stream,duration_ns,issued_ns,submitted_ns,start_ns,end_ns,switched_ns,jumps"
    )?;
    let host = |t: i64| {
        if t == 0 {
            String::new()
        } else {
            (t + offset).to_string()
        }
    };
    for (i, o) in plan.ops.iter().enumerate() {
        let (kind, gpu) = match o.kind {
            OpKind::Kernel { .. } => {
                let k = sh.counter_index[i];
                let v = &words[4 * k..4 * k + 4];
                let ran = v[0] != u64::MAX;
                (
                    "kernel",
                    if ran {
                        format!("{},{},{},{}", v[0], !v[1], v[2], v[3])
                    } else {
                        ",,,".into()
                    },
                )
            }
            OpKind::Copy { .. } => ("copy", ",,,".into()),
            OpKind::Memset { .. } => ("memset", ",,,".into()),
        };
        let submitted = match o.kind {
            OpKind::Kernel { .. } => sh.submitted_ns[i].load(Ordering::Relaxed),
            _ => 0,
        };
        writeln!(
            w,
            "{i},{kind},{},{},{},{},{gpu}",
            o.stream,
            o.duration_ns,
            host(sh.issued_ns[i].load(Ordering::Relaxed)),
            host(submitted),
        )?;
    }
    w.flush()
}
