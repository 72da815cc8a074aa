//! Jobs made from jobs: FIKIT's gaps predicted by kernel key, a slower or
//! faster host, a fixed MPS pressure, the program repeated, or serving
//! requests at given arrivals ([`poisson_arrivals`]).

use std::collections::HashMap;
use std::sync::Arc;

use super::{GpuOp, HostStep, Job, NO_OP};

impl Job {
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
        self.with_host_speed_from(0, factor)
    }

    /// [`Job::with_host_speed`] from its first kernel's launch on: the host
    /// delays up to that launch as recorded (they come before the region
    /// its untraced runs measure, [`crate::sim::host`]), so the first kernel
    /// starts where the profile has it.
    pub fn with_region_host_speed(&self, factor: f64) -> Job {
        let first = self.steps.iter().position(|s| {
            matches!(*s, HostStep::Issue { op, .. }
                if self.ops.get(op as usize).is_some_and(GpuOp::is_kernel))
        });
        self.with_host_speed_from(first.map_or(self.steps.len(), |i| i + 1), factor)
    }

    /// Every host delay of the steps from `from` on, and the tail, scaled by `factor`.
    fn with_host_speed_from(&self, from: usize, factor: f64) -> Job {
        let scale = |d: i64| (d as f64 * factor).round() as i64;
        let steps: Vec<HostStep> = self
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| match *s {
                _ if i < from => *s,
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
    /// as index ranges into [`Job::steps`], and where the steps after the
    /// last one begin.
    fn iterations(&self) -> (Vec<std::ops::Range<usize>>, usize) {
        let mut out = Vec::new();
        let mut from = 0;
        for (i, s) in self.steps.iter().enumerate() {
            if let HostStep::Wait {
                ends_iteration: true,
                ..
            } = s
            {
                out.push(from..i + 1);
                from = i + 1;
            }
        }
        (out, from)
    }

    /// The job with its whole program played `times` times back to back,
    /// each time with its set-up ([`Job::runs`]).
    pub fn repeated(&self, times: usize) -> Job {
        let parts: Vec<(Option<i64>, &[HostStep])> =
            (0..times).map(|_| (None, &self.steps[..])).collect();
        let mut job = self.rebuilt(&parts);
        job.runs = self.runs.max(1) * times;
        job
    }

    /// True when [`Job::serving`] has no recorded step past the set-up to
    /// serve requests with, so that each request replays the whole program,
    /// set-up included.
    pub fn serves_whole_program(&self) -> bool {
        let (ranges, _) = self.iterations();
        let setup = self.setup_iterations.max(1).min(ranges.len());
        let iters: Vec<&[HostStep]> = ranges.iter().map(|r| &self.steps[r.clone()]).collect();
        let period = request_period(self, &iters[setup..]);
        ranges.len() - setup < period
    }

    /// The job serving requests that arrive at `arrivals` (ns, ascending,
    /// counted from the end of its set-up: a server takes requests once it
    /// is up, as `scripts/workloads/workload.py --rate` counts them from the
    /// end of its warm-up).
    ///
    /// A request is one step of the recorded program: as many consecutive
    /// iterations as its kernels repeat with ([`request_period`]: two for a
    /// program that waits twice a step, e.g. for its input and for its
    /// result), its latency from its arrival to the step's last wait. The
    /// recorded set-up iterations ([`Job::setup_iterations`]) and the
    /// leading steps that took over twice the median step (the warm-up's
    /// first passes: lazy initialisation, autotuning) run once before the
    /// first request; request `k` replays steady step `k mod m`, starting
    /// when it has arrived and the previous request is done. Iterations past
    /// the last whole step are not replayed; the steps after the last
    /// recorded iteration run once at the end. A job with no step past its
    /// set-up serves each request with its whole program.
    ///
    /// The host's time before each iteration of a request is the least of
    /// the steady steps' at its place in the step ([`idle_floor`]):
    /// recorded as it served, a server waited before a request's first
    /// iteration (wherever the recording's steps are cut), and the new
    /// arrivals set that idle.
    pub fn serving(&self, arrivals: &[i64]) -> Job {
        let (ranges, tail_from) = self.iterations();
        let iters: Vec<&[HostStep]> = ranges.iter().map(|r| &self.steps[r.clone()]).collect();
        let tail = &self.steps[tail_from..];
        let setup = self.setup_iterations.max(1).min(iters.len());
        let period = request_period(self, &iters[setup..]);
        // Each step: `period` consecutive iterations, one slice of the steps.
        let steps: Vec<&[HostStep]> = ranges[setup..]
            .chunks_exact(period)
            .map(|c| &self.steps[c[0].start..c[period - 1].end])
            .collect();
        if steps.is_empty() {
            let parts: Vec<(Option<i64>, &[HostStep])> = arrivals
                .iter()
                .map(|&a| (Some(a), &self.steps[..]))
                .collect();
            let mut job = self.rebuilt(&parts);
            job.setup_iterations = 0;
            job.runs = 1;
            return job;
        }
        let warm = warm_up_steps(self, &steps);
        let steady = &steps[warm..];
        // The least delay before each of a step's iterations, by position.
        let floors: Vec<i64> = (0..period)
            .map(|p| {
                let firsts: Vec<&[HostStep]> = ranges[setup..]
                    .chunks_exact(period)
                    .skip(warm)
                    .map(|c| &self.steps[c[p].clone()])
                    .collect();
                idle_floor(&firsts).unwrap_or(i64::MAX)
            })
            .collect();
        let requests = arrivals
            .iter()
            .enumerate()
            .map(|(k, &a)| (Some(a), steady[k % steady.len()]));
        let parts: Vec<(Option<i64>, &[HostStep])> = iters[..setup]
            .iter()
            .chain(&steps[..warm])
            .map(|&i| (None, i))
            .chain(requests)
            .chain((!tail.is_empty()).then_some((None, tail)))
            .collect();
        let mut job = self.rebuilt(&parts);
        job.setup_iterations = 0;
        job.runs = 1;
        let mut steps = job.steps.to_vec();
        // Each of a request's iterations waits before its first step only
        // as long as the least of that iteration's recorded waits (the
        // server's idle, wherever in the recorded step a request began).
        let mut at: Option<usize> = None;
        let mut pending = false;
        for s in &mut steps {
            match s {
                HostStep::Arrive { .. } => (at, pending) = (Some(0), true),
                HostStep::Issue { delay_ns, .. } | HostStep::Wait { delay_ns, .. } => {
                    if let Some(p) = at
                        && std::mem::take(&mut pending)
                        && let Some(&f) = floors.get(p)
                    {
                        *delay_ns = (*delay_ns).min(f);
                    }
                    if let HostStep::Wait {
                        ends_iteration: true,
                        ..
                    } = s
                        && let Some(p) = at.as_mut()
                    {
                        *p += 1;
                        pending = *p < period;
                    }
                }
            }
        }
        // The set-up is no request (it ends before the first arrives), and a
        // request's latency ends at its step's last wait, not at each.
        let mut in_request = false;
        let mut last_end: Option<usize> = None;
        for i in 0..steps.len() {
            match &mut steps[i] {
                HostStep::Arrive { .. } => {
                    in_request = true;
                    if let Some(e) = last_end.take() {
                        set_ends_iteration(&mut steps[e]);
                    }
                }
                HostStep::Wait { ends_iteration, .. } if *ends_iteration => {
                    *ends_iteration = false;
                    if in_request {
                        last_end = Some(i);
                    }
                }
                _ => {}
            }
        }
        if let Some(e) = last_end {
            set_ends_iteration(&mut steps[e]);
        }
        job.steps = steps.into();
        job
    }

    /// The job with the host delays of its iterations from `from` on
    /// (counted from its first, set-up included) scaled, iteration
    /// `from + k`'s by `scale[k]`: every delay in it, the one before its
    /// first step only with `first_delay` (for a server, that one is its
    /// wait for a request, which the host's speed does not change).
    /// Iterations past `scale` and the steps after the last iteration stay
    /// as they are.
    pub fn with_iteration_host_scale(&self, from: usize, scale: &[f64], first_delay: bool) -> Job {
        let mut steps = self.steps.to_vec();
        let (mut iteration, mut first) = (0usize, true);
        for s in &mut steps {
            let f = iteration
                .checked_sub(from)
                .and_then(|k| scale.get(k))
                .copied()
                .filter(|_| first_delay || !first);
            match s {
                HostStep::Arrive { .. } => continue,
                HostStep::Issue { delay_ns, .. } => {
                    if let Some(f) = f {
                        *delay_ns = (*delay_ns as f64 * f).round() as i64;
                    }
                    first = false;
                }
                HostStep::Wait {
                    delay_ns,
                    ends_iteration,
                    ..
                } => {
                    if let Some(f) = f {
                        *delay_ns = (*delay_ns as f64 * f).round() as i64;
                    }
                    first = *ends_iteration;
                    if *ends_iteration {
                        iteration += 1;
                    }
                }
            }
        }
        Job {
            steps: steps.into(),
            ..self.clone()
        }
    }

    /// The GPU work of a typical iteration: the median, over the iterations
    /// after the set-up ([`Job::setup_iterations`]; all of them when that
    /// leaves none), of the recorded durations of the kernels issued in it,
    /// ns; 0 for a job without iterations. A server's is a request's.
    pub fn iteration_gpu_ns(&self) -> i64 {
        let (ranges, _) = self.iterations();
        let sums = |rs: &[std::ops::Range<usize>]| -> Vec<i64> {
            rs.iter()
                .map(|r| {
                    self.steps[r.clone()]
                        .iter()
                        .filter_map(|s| match *s {
                            HostStep::Issue { op, .. } => {
                                let o = &self.ops[op as usize];
                                o.is_kernel().then_some(o.duration_ns)
                            }
                            _ => None,
                        })
                        .sum()
                })
                .collect()
        };
        let setup = self.setup_iterations.min(ranges.len());
        let mut v = sums(&ranges[setup..]);
        if v.is_empty() {
            v = sums(&ranges);
        }
        v.sort_unstable();
        v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(0)
    }

    /// What other jobs may keep queued on the GPU while this one is away
    /// (a server between requests), ns: [`fikit_rules::hold_ns`] of
    /// [`Job::iteration_gpu_ns`]. The simulator's FIKIT and the live gate
    /// (through `fikit-run`'s table) both take it from here.
    pub fn hold_ns(&self) -> i64 {
        fikit_rules::hold_ns(self.iteration_gpu_ns())
    }

    /// The host delay before each iteration's first step (the idle before
    /// it, where the host waited for work, and the host's own work), in
    /// the order of the iterations; the job's first iteration's counts from
    /// its start.
    pub fn iteration_first_delays(&self) -> Vec<i64> {
        let mut out = Vec::new();
        let mut first = true;
        for s in self.steps.iter() {
            match *s {
                HostStep::Arrive { .. } => {}
                HostStep::Issue { delay_ns, .. } => {
                    if std::mem::take(&mut first) {
                        out.push(delay_ns);
                    }
                }
                HostStep::Wait {
                    delay_ns,
                    ends_iteration,
                    ..
                } => {
                    if std::mem::take(&mut first) {
                        out.push(delay_ns);
                    }
                    first = ends_iteration;
                }
            }
        }
        out
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
            kernel_position: kernel_position.into(),
            occupancies: Arc::clone(&self.occupancies),
            setup_iterations: self.setup_iterations,
            runs: self.runs,
            shapes: Arc::clone(&self.shapes),
            pressure_weight: self.pressure_weight,
            untraced_regions_ns: Arc::clone(&self.untraced_regions_ns),
            untraced_busy_ns: Arc::clone(&self.untraced_busy_ns),
            untraced_busy_parts_ns: Arc::clone(&self.untraced_busy_parts_ns),
            untraced_iterations_ns: Arc::clone(&self.untraced_iterations_ns),
            measured_pressure: self.measured_pressure,
            recorded: Some(
                self.recorded
                    .clone()
                    .unwrap_or_else(|| Arc::new(self.clone())),
            ),
        }
    }
}

/// Marks a wait as the end of an iteration.
fn set_ends_iteration(step: &mut HostStep) {
    if let HostStep::Wait { ends_iteration, .. } = step {
        *ends_iteration = true;
    }
}

/// The kernels an iteration issues, by key, in order.
fn kernel_keys(job: &Job, iteration: &[HostStep]) -> Vec<u64> {
    iteration
        .iter()
        .filter_map(|s| match *s {
            HostStep::Issue { op, .. } => job.ops[op as usize].kernel_key(),
            _ => None,
        })
        .collect()
}

/// The most iterations a request may span ([`request_period`]).
pub const MAX_REQUEST_PERIOD: usize = 8;

/// How many consecutive recorded iterations make one step of a program
/// (one request of a server): the least `p` (1 to [`MAX_REQUEST_PERIOD`])
/// for which at least 80% of the iterations issue the same kernels, by
/// key and in order, as the one `p` later, and which fits twice into
/// `iterations`; 1 when none does. A program that waits for its input and
/// then for its result repeats every two.
pub fn request_period(job: &Job, iterations: &[&[HostStep]]) -> usize {
    let keys: Vec<Vec<u64>> = iterations.iter().map(|i| kernel_keys(job, i)).collect();
    (1..=MAX_REQUEST_PERIOD)
        .filter(|&p| 2 * p <= keys.len())
        .find(|&p| {
            let pairs = keys.len() - p;
            let same = (0..pairs).filter(|&i| keys[i] == keys[i + p]).count();
            5 * same >= 4 * pairs
        })
        .unwrap_or(1)
}

/// The least host delay before the first of `steps` (each one request's
/// part of a program; `None` when there are none): in a program recorded
/// as it served requests, that delay is the idle until the request arrived
/// plus the host's own work before its first launch, and a request that
/// arrived while the one before it was served waited for nothing, so the
/// least is the host's own work. In a program recorded back to back, the
/// delays differ only by the host's noise.
pub fn idle_floor(steps: &[&[HostStep]]) -> Option<i64> {
    steps
        .iter()
        .filter_map(|s| match s.first()? {
            HostStep::Issue { delay_ns, .. } | HostStep::Wait { delay_ns, .. } => Some(*delay_ns),
            HostStep::Arrive { .. } => None,
        })
        .min()
}

/// A step's recorded time, as the replay would spend it alone without the
/// host's delay before its first step (the idle there in a served
/// recording): its other host delays and its operations' durations, ns.
fn step_ns(job: &Job, step: &[HostStep]) -> i64 {
    let before = match step.first() {
        Some(HostStep::Issue { delay_ns, .. } | HostStep::Wait { delay_ns, .. }) => *delay_ns,
        _ => 0,
    };
    -before
        + step
            .iter()
            .map(|s| match *s {
                HostStep::Issue { delay_ns, op } => delay_ns + job.ops[op as usize].duration_ns,
                HostStep::Wait { delay_ns, .. } => delay_ns,
                HostStep::Arrive { .. } => 0,
            })
            .sum::<i64>()
}

/// How many of `steps` lead as warm-up: the leading ones over twice the
/// median step's time, at most half of them.
fn warm_up_steps(job: &Job, steps: &[&[HostStep]]) -> usize {
    let times: Vec<i64> = steps.iter().map(|s| step_ns(job, s)).collect();
    let mut sorted = times.clone();
    sorted.sort_unstable();
    let median = sorted[sorted.len() / 2];
    times
        .iter()
        .take(steps.len() / 2)
        .take_while(|&&t| t > 2 * median)
        .count()
}

/// `count` arrivals one period (`1 / rate_per_s`) apart, ns from 0, the
/// first one period in.
pub fn fixed_arrivals(count: usize, rate_per_s: f64) -> Vec<i64> {
    (1..=count)
        .map(|i| (i as f64 * 1e9 / rate_per_s).round() as i64)
        .collect()
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
