//! Kernels of different processes sharing the SMs block by block, as under
//! MPS ([`crate::policy::Mps`]).
//!
//! A kernel of `B` blocks, `p` of which fit on one SM (its grid, block,
//! registers and shared memory against the per-SM limits:
//! [`Occupancy`]), on a device of `S` SMs runs alone in
//! `W = ceil(B / (p S))` waves of at most `w = min(B, p S)` blocks, and each
//! block takes the block time `D / W` (`D`: its recorded duration). Beside
//! other jobs' kernels:
//!
//! - **room**: a block holds `1 / p` of an SM. A kernel places blocks while
//!   the SMs that other jobs' resident blocks hold, plus its own, leave room
//!   for them, at most `w` at a time. A job's own kernels do not take room
//!   from each other: its trace recorded how they shared the device.
//! - **order**: kernels take room in the order they reached the GPU. While a
//!   kernel has blocks it could not place, no later kernel of another job
//!   places a block, not even into room too small for the earlier one's
//!   (in-order, "left-over" dispatch: the hardware places a grid's blocks
//!   only after every block of the grids before it is placed; Gilman et al.,
//!   *Demystifying the Placement Policies of the NVIDIA GPU Thread Block
//!   Scheduler for Concurrent Kernels*, 2021). A kernel with blocks left keeps
//!   the room its own finished blocks free. Kernels that reach the GPU at the
//!   same instant are taken in the order the policy started them (MPS: by
//!   job index), so a run is deterministic.
//! - **waves**: the blocks a kernel places at one instant run together and
//!   retire together after the block time, slowed by the concurrent-kernel
//!   slowdown `1 + c o` (`c`:
//!   [`GpuModel::corun_slowdown`](crate::sim::gpu::GpuModel::corun_slowdown)).
//!   `o` is the share of the SMs other jobs' *started* kernels press on, at
//!   most 1: a kernel whose first block runs presses on a full wave's room,
//!   its resident blocks and those still waiting for room (at most `w`); a
//!   kernel with no block placed presses on nothing. Its waiting blocks take
//!   whatever room frees within a block time, so it works the memory system
//!   as a whole wave does. (Until 2026-11-26 `o` was the share other jobs'
//!   resident blocks held: a batch-1 kernel that took room first then ran
//!   as if the busy job beside it were smaller by that room, 1.6x where the
//!   GPU showed 3x; the validation log, 2026-11-26.) `o` changes whenever
//!   blocks are placed or retire, and every wave in flight then runs the
//!   work it has left at the new rate (before 2026-11-25, `o` was taken
//!   once, when a wave was placed). Each kernel's share counts times its
//!   weight, 1 unless the job carries a measured pressure
//!   ([`Job::pressure_weight`](crate::sim::job::Job::pressure_weight)). On the GPU blocks retire one by one, so
//!   a waiting kernel may start up to a block time earlier than here.
//!
//! - **joining**: blocks a kernel places within an eighth of its block time
//!   alone ([`MERGE`]) after placing a wave that is still in flight join
//!   that wave, whose work left becomes the mean over its blocks (so their
//!   total work is kept). Waves otherwise only split: each wave retiring
//!   anywhere frees room that a waiting kernel fills with a wave of its own,
//!   and beside many jobs the waves shrink towards single blocks. The nine
//!   shipped H200 traces together under MPS ran 11.2 M waves (231,550
//!   alone) in 5.1 s; joined, 0.91 M in 0.64 s, every job's slowdown within
//!   1.3% of the split waves' and, over the shipped pairs, the batch-1
//!   job's p99 within 0.02% median, 3.6% worst (lab log, 2026-11-28).
//!
//! - **the last wave**: a kernel of `W >= 2` waves whose last is a share `u`
//!   full has block time `b = D / (W - 1 + s)` and its last wave's blocks
//!   `s b`, `s = g + (1 - g) u` (`g`:
//!   [`GpuModel::last_wave_floor`](crate::sim::gpu::GpuModel::last_wave_floor)):
//!   on the GPU a block with fewer of its kernel's blocks beside it on its SM
//!   runs faster, so a thin last wave is short and other jobs' kernels find
//!   room later in it and for less time than equal waves give (the H200's
//!   cuDNN and cuBLAS kernels: `g` 0.15, `lab/validate/partial-waves.py`).
//!   With `g` 1 (the default) all its waves take `D / W`.
//!
//! Alone, a kernel runs its `W` waves back to back, their lengths the integer
//! split of `D` by those block times: exactly its recorded duration.
//!
//! The pool keeps its waves' ends itself, each with the engine's FIFO
//! sequence number of its event ([`SlotPool::place`]), and the engine takes
//! the earliest ([`SlotPool::next_wave`], [`SlotPool::retire_next`]) beside
//! its own queue: a wave whose end moves takes a new number, as a new event
//! would, and leaves nothing stale behind (the engine counts the event it
//! replaces: [`SlotPool::superseded`]).

use crate::sim::job::Occupancy;

/// One kernel on the GPU.
#[derive(Debug, Clone)]
struct Active {
    job: usize,
    op: usize,
    duration_ns: i64,
    /// Blocks that fit on one SM, as `f64`.
    per_sm_f: f64,
    /// SMs its resident blocks hold ([`Active::held`]), kept as blocks
    /// are placed and retire.
    held_sms: f64,
    /// SMs it presses on ([`Active::pressing`]), kept likewise.
    press_sms: f64,
    /// Blocks of a full wave.
    width: u64,
    /// Waves alone.
    waves: u64,
    /// Blocks in all.
    blocks: u64,
    sms: f64,
    /// How hard it presses on other jobs' kernels, 0 to 1 (its job's
    /// measured pressure, [`crate::sim::job::Job::pressure_weight`]; 1
    /// without).
    weight: f64,
    /// Blocks not placed yet.
    to_place: u64,
    /// Blocks placed and not retired.
    resident: u64,
    /// Waves placed so far.
    placed_waves: u64,
    /// The slowdown of its waves in flight, each since its `since`: `1 + c
    /// o` (the share `o` is the same for all of a kernel's waves, so they
    /// all run at the kernel's rate; a wave just placed starts at 1).
    factor: f64,
    /// Waves in flight.
    in_flight: Vec<Wave>,
    /// Its wave that retires first (index in `in_flight`; [`NONE`]: none).
    next: usize,
    /// That wave's key ([`Wave::key`]; `(i64::MAX, u64::MAX)` while none),
    /// kept beside `next` so that finding the pool's next wave reads no
    /// wave.
    next_at: (i64, u64),
    /// Blocks it places within this long of placing a wave still in flight
    /// join that wave, ns.
    merge_ns: i64,
}

/// A wave in flight: its blocks run at `1 / factor` of full speed.
#[derive(Debug, Clone, Copy)]
struct Wave {
    blocks: u64,
    /// Work left at `since`, ns at full speed.
    left: f64,
    since: i64,
    /// When its blocks retire, ns.
    end: i64,
    /// When its first blocks were placed, ns (later blocks may join it:
    /// [`Active::merge_ns`]).
    placed: i64,
    /// Its end event's sequence number (see [`SlotPool::place`]);
    /// [`NO_EVENT`] while it has none.
    seq: u64,
}

/// [`Wave::seq`] of a wave without an event: placed in the current
/// [`SlotPool::place`], or due past the run's limit.
const NO_EVENT: u64 = u64::MAX;

/// No index ([`Active::next`]).
const NONE: usize = usize::MAX;

/// How long after a kernel places a wave later blocks of its own may join
/// that wave, as a share of its block time alone (see the module's
/// *joining*): an eighth costs each joined block at most an eighth of a
/// block time either way; a sixteenth ran the nine shipped H200 traces in
/// 0.72 s, a quarter in 0.58 s, against 5.1 s unjoined (2026-11-28).
const MERGE: f64 = 0.125;

/// [`Active::merge_ns`] of a kernel of `duration_ns` in `waves` waves alone.
fn merge_window(duration_ns: i64, waves: u64) -> i64 {
    (duration_ns.max(0) as f64 / waves.max(1) as f64 * MERGE) as i64
}

/// `x.round() as i64` for the wave arithmetic, without a call to `round`:
/// for `0 <= x < 2^52` the integer part `t` and the fraction `x - t` are
/// exact, so rounding half away from zero is `t`, plus 1 when the fraction
/// is at least one half; anything else (negative, huge, NaN) takes
/// `f64::round` itself. The same value as `x.round() as i64` for every `x`.
#[inline]
fn round_ns(x: f64) -> i64 {
    if (0.0..4_503_599_627_370_496.0).contains(&x) {
        let t = x as i64;
        t + i64::from(x - t as f64 >= 0.5)
    } else {
        x.round() as i64
    }
}

/// Counts `w`'s event, if it has one, as replaced ([`SlotPool::superseded`]):
/// its end moved, or its blocks joined a new wave.
fn supersede(w: &Wave, superseded: &mut u64, until: &mut i64) {
    if w.seq != NO_EVENT {
        *superseded += 1;
        *until = (*until).max(w.end);
    }
}

impl Wave {
    /// Its event, `(end, seq)`: the earliest retires first.
    fn key(&self) -> (i64, u64) {
        (self.end, self.seq)
    }
}

impl Active {
    /// SMs its resident blocks hold.
    fn held(&self) -> f64 {
        self.held_sms
    }

    /// Sets [`Active::held_sms`] and [`Active::press_sms`] after its blocks
    /// to place or resident changed: once a change, not at every read (the
    /// pool reads them at every decision).
    #[inline(always)]
    fn counts_changed(&mut self) {
        self.held_sms = self.resident as f64 / self.per_sm_f;
        self.press_sms = if self.resident == 0 {
            0.0
        } else {
            (self.resident + self.to_place).min(self.width) as f64 / self.per_sm_f
        };
    }

    /// SMs it presses on: once its first block runs, a full wave's room
    /// (its resident blocks and those still to place, at most `width`); 0
    /// before. Its blocks waiting for room take any SM room that frees
    /// within a block time, so a started kernel works the memory system as
    /// a whole wave would; a kernel that has not started works nothing.
    fn pressing(&self) -> f64 {
        self.press_sms
    }

    /// Length of the next wave at full speed, ns: the integer split of the
    /// duration over the waves alone (so they add up to it exactly), then
    /// the block time for each wave more.
    fn next_wave_ns(&self) -> i64 {
        let (d, w, i) = (
            self.duration_ns.max(0) as u64,
            self.waves,
            self.placed_waves,
        );
        if i < w {
            // `d i / w` in 64 bits where `d (i + 1)` fits (always, but for
            // kernels of hours in millions of waves), else in 128.
            match d.checked_mul(i + 1) {
                Some(next) => (next / w - d * i / w) as i64,
                None => {
                    let at = |i: u64| u128::from(d) * u128::from(i) / u128::from(w);
                    (at(i + 1) - at(i)) as i64
                }
            }
        } else {
            round_ns(d as f64 / w as f64)
        }
    }

    /// Length at full speed of the `n` blocks it places next, ns. With
    /// equal waves (`g` 1, or a kernel of one wave alone): its
    /// [`Active::next_wave_ns`]. Else by its blocks: those of its first
    /// `W - 1` waves alone take the block time `b = D / (W - 1 + s)`, those
    /// of its last wave `s b`, `s = g + (1 - g) u` (`u`: how full the last
    /// wave is), each wave's the integer split, so that its waves alone add
    /// up to `D` exactly; blocks of both, their mean.
    fn wave_ns(&self, n: u64, g: f64) -> i64 {
        let w = self.waves;
        if g >= 1.0 || w < 2 {
            return self.next_wave_ns();
        }
        let d = self.duration_ns.max(0) as f64;
        // Blocks of the full waves (fewer than all: `w` is the ceiling).
        let full = (w - 1) * self.width;
        let u = (self.blocks - full) as f64 / self.width as f64;
        let span = (w - 1) as f64 + g + (1.0 - g) * u;
        // Where full wave `i` ends alone, ns (whole).
        let end = |i: u64| (d * i as f64 / span).floor();
        let placed = self.blocks - self.to_place;
        let in_full = full.saturating_sub(placed).min(n);
        let j = (placed / self.width).min(w - 2);
        let full_ns = end(j + 1) - end(j);
        let last_ns = d - end(w - 1);
        let ns = if in_full == n {
            full_ns
        } else if in_full == 0 {
            last_ns
        } else {
            (in_full as f64 * full_ns + (n - in_full) as f64 * last_ns) / n as f64
        };
        round_ns(ns)
    }

    /// The key of its wave that retires first.
    fn next_key(&self) -> Option<(i64, u64)> {
        (self.next != NONE).then_some(self.next_at)
    }

    /// Finds its wave that retires first.
    fn find_next(&mut self) {
        self.next = NONE;
        let mut best = (i64::MAX, u64::MAX);
        for (i, w) in self.in_flight.iter().enumerate() {
            if w.key() < best {
                best = w.key();
                self.next = i;
            }
        }
        self.next_at = best;
    }
}

/// The sequence numbers [`SlotPool::place`] gives the wave ends it sets:
/// the engine's counter of events and its record of the first event due
/// past the run's limit (see [`SlotPool::place`]).
pub struct Tickets<'a> {
    /// The next event's sequence number.
    pub seq: &'a mut u64,
    /// The first event due past the limit: (when it was scheduled, when due).
    pub too_long: &'a mut Option<(i64, i64)>,
    /// The limit, ns.
    pub limit: i64,
}

/// The kernels sharing the SMs and their waves in flight.
#[derive(Debug, Default)]
pub struct SlotPool {
    /// In the order they reached the GPU.
    kernels: Vec<Active>,
    /// Kernels per job with blocks to place.
    queued: Vec<usize>,
    /// SMs held per job (scratch of [`SlotPool::place`]).
    held: Vec<f64>,
    /// SMs per job that its started kernels press on: held, plus what
    /// their blocks still to place would hold (scratch of
    /// [`SlotPool::place`]; see [`Active::pressing`]).
    pressing: Vec<f64>,
    /// Waves placed in the current [`SlotPool::place`], as (kernel, wave)
    /// indices (scratch).
    fresh: Vec<(usize, usize)>,
    /// Emptied `in_flight` vectors of kernels that left, for reuse.
    spare: Vec<Vec<Wave>>,
    /// The kernel whose wave retires next, while `next_known`.
    next: Option<usize>,
    /// Its wave's key, while `next_known`.
    next_key: Option<(i64, u64)>,
    next_known: bool,
    /// No kernel from this index on has a wave in flight (a bound, not
    /// always the least one): [`SlotPool::next_wave`] looks no further.
    /// Kernels take room in order, so those with waves are mostly the
    /// first few, while many later ones wait.
    active_end: usize,
    /// Events replaced by a moved end, and the latest time among them.
    superseded: u64,
    superseded_until: i64,
    /// A kernel arrived or a wave retired since the last [`SlotPool::place`]:
    /// only then can anything new be placed.
    changed: bool,
    /// Kernels in the pool whose weight is not finite (their pressure then
    /// counts even before they start: see [`SlotPool::place`]).
    nonfinite_weights: usize,
    /// The most SMs any kernel admitted could use (each kernel's room is
    /// at most its own).
    max_sms: f64,
    /// The share of a block time a multi-wave kernel's thin last wave takes
    /// however few blocks it holds ([`SlotPool::set_last_wave_floor`]).
    last_wave_floor: f64,
}

impl SlotPool {
    /// An empty pool for `jobs` jobs.
    pub fn new(jobs: usize) -> SlotPool {
        SlotPool {
            kernels: Vec::new(),
            queued: vec![0; jobs],
            held: vec![0.0; jobs],
            pressing: vec![0.0; jobs],
            fresh: Vec::new(),
            spare: Vec::new(),
            next: None,
            next_key: None,
            next_known: true,
            active_end: 0,
            superseded: 0,
            superseded_until: i64::MIN,
            changed: false,
            nonfinite_weights: 0,
            max_sms: 0.0,
            last_wave_floor: 1.0,
        }
    }

    /// Sets the share of a block time a multi-wave kernel's thin last wave
    /// takes however few blocks it holds (see the module's *the last wave*; 1, the
    /// default: equal waves). Before any kernel is admitted.
    pub fn set_last_wave_floor(&mut self, g: f64) {
        self.last_wave_floor = g;
    }

    /// Kernel `op` of job `job` reached the GPU (became ready): it places
    /// blocks at the next [`SlotPool::place`], after every kernel admitted
    /// before it (in-order dispatch).
    /// `weight` (0 to 1): how hard it presses on other jobs' kernels.
    pub fn admit(
        &mut self,
        job: usize,
        op: usize,
        occupancy: &Occupancy,
        duration_ns: i64,
        weight: f64,
    ) {
        if job >= self.pressing.len() {
            self.queued.resize(job + 1, 0);
            self.held.resize(job + 1, 0.0);
            self.pressing.resize(job + 1, 0.0);
        }
        // Every kernel has a block (`Occupancy::new`).
        self.queued[job] += 1;
        self.changed = true;
        if !weight.is_finite() {
            self.nonfinite_weights += 1;
        }
        self.max_sms = self.max_sms.max(f64::from(occupancy.sms));
        // Last in line: the kernels before it keep their places (and the
        // next wave's kernel index).
        self.kernels.push(Active {
            job,
            op,
            duration_ns,
            per_sm_f: occupancy.per_sm as f64,
            held_sms: 0.0,
            press_sms: 0.0,
            width: occupancy.wave_blocks(),
            waves: occupancy.waves(),
            blocks: occupancy.blocks,
            sms: f64::from(occupancy.sms),
            weight,
            to_place: occupancy.blocks,
            resident: 0,
            placed_waves: 0,
            factor: 1.0,
            in_flight: self.spare.pop().unwrap_or_default(),
            next: NONE,
            next_at: (i64::MAX, u64::MAX),
            merge_ns: merge_window(duration_ns, occupancy.waves()),
        });
    }

    /// True when no kernel is on the GPU.
    pub fn is_empty(&self) -> bool {
        self.kernels.is_empty()
    }

    /// Places what fits now, kernels in the order they reached the GPU,
    /// and appends `(job, op)` of each kernel whose first blocks it placed
    /// to `first`. `corun_slowdown`: the `c` of the waves' slowdown. The
    /// share `o` a kernel feels is at most 1.
    ///
    /// Each wave end it sets is an event of the engine's, numbered from
    /// `tickets` in the order the engine would have queued them: the waves
    /// placed, in order, then the waves whose end moved, kernel by kernel.
    /// An end past `tickets.limit` gets no number (the run stops: the first
    /// such is recorded). A moved end replaces the wave's earlier event,
    /// which counts as one stale event ([`SlotPool::superseded`]).
    pub fn place(
        &mut self,
        now: i64,
        corun_slowdown: f64,
        tickets: Tickets<'_>,
        first: &mut Vec<(usize, usize)>,
    ) {
        if !std::mem::take(&mut self.changed) {
            return;
        }
        self.fresh.clear();
        self.place_waves(now, first);
        // The waves placed take the first numbers, those moved the next.
        let base = *tickets.seq;
        let mut seq = base + self.fresh.len() as u64;
        let mut late = None;
        if corun_slowdown > 0.0 {
            self.slow_waves(now, corun_slowdown, &mut seq, &mut late, tickets.limit);
        }
        for (n, &(k, w)) in self.fresh.iter().enumerate() {
            let kernel = &mut self.kernels[k];
            let wave = &mut kernel.in_flight[w];
            if wave.end > tickets.limit {
                tickets.too_long.get_or_insert((now, wave.end));
                wave.end = i64::MAX;
            } else {
                wave.seq = base + n as u64;
                let key = wave.key();
                if kernel.next_key().is_none_or(|next| key < next) {
                    kernel.next = w;
                    kernel.next_at = key;
                }
            }
        }
        if let Some(late) = late {
            tickets.too_long.get_or_insert(late);
        }
        *tickets.seq = seq;
        if seq != base {
            self.next_known = false;
        }
    }

    /// [`SlotPool::place`]: the blocks that fit now, each kernel's new wave
    /// at full speed.
    fn place_waves(&mut self, now: i64, first: &mut Vec<(usize, usize)>) {
        let SlotPool {
            kernels,
            queued,
            held,
            fresh,
            active_end,
            superseded,
            superseded_until,
            max_sms,
            last_wave_floor,
            ..
        } = self;
        let g = *last_wave_floor;
        held.iter_mut().for_each(|h| *h = 0.0);
        // A kernel with no block resident holds 0.0: adding it changes
        // no sum, so the sums are those of every kernel. Those with blocks
        // resident have waves in flight: all before `active_end`. (Sums
        // kept as blocks come and go would round differently from one run
        // of decisions to another, and the answers with them.)
        for k in kernels[..*active_end].iter().filter(|k| k.resident > 0) {
            held[k.job] += k.held();
        }
        let mut total: f64 = held.iter().sum();
        // The job of the first kernel with blocks left to place: later
        // kernels of other jobs place nothing (in-order dispatch).
        let mut waiting: Option<usize> = None;
        // Its kernels with blocks to place not visited yet.
        let mut later = 0;
        for (i, k) in kernels.iter_mut().enumerate() {
            // Once a job waits, only its own later kernels may place, in the
            // room other jobs leave; when there are none, or that room is
            // none of any kernel's SMs, nothing later places (the rest of
            // the list is mostly kernels of every job still queued).
            if let Some(w) = waiting
                && (later == 0 || (total - held[w]).max(0.0) >= *max_sms)
            {
                break;
            }
            if k.to_place == 0 || waiting.is_some_and(|w| w != k.job) {
                continue;
            }
            if waiting.is_some() {
                later -= 1;
            }
            let others = (total - held[k.job]).max(0.0);
            let room = k.sms - others - k.held();
            // Blocks that fit in `room` SMs; the tolerance keeps a whole
            // device's worth of blocks from losing one to rounding.
            let fit = if room > 0.0 {
                // Truncation is `floor` here: the value is positive.
                (room * k.per_sm_f + 1e-6) as u64
            } else {
                0
            };
            let n = k.to_place.min(k.width - k.resident).min(fit);
            if k.to_place > n && waiting.is_none() {
                waiting = Some(k.job);
                // Each earlier kernel of its job with blocks to place placed
                // them all (else it would wait): those it counts are this
                // one and later ones.
                later = queued[k.job] - 1;
            }
            if n == 0 {
                continue;
            }
            let base = k.wave_ns(n, g);
            k.placed_waves += 1;
            k.to_place -= n;
            if k.to_place == 0 {
                queued[k.job] -= 1;
            }
            k.resident += n;
            k.counts_changed();
            let added = n as f64 / k.per_sm_f;
            held[k.job] += added;
            total += added;
            if k.placed_waves == 1 {
                first.push((k.job, k.op));
            }
            // A wave of its own placed within the merge window and still in
            // flight takes these blocks: the joined wave's work left is the
            // blocks' mean (so the blocks' total work is kept), its event
            // replaced by the joined wave's.
            let recent = k
                .in_flight
                .iter()
                .enumerate()
                .filter(|(_, w)| now - w.placed <= k.merge_ns)
                .max_by_key(|(j, w)| (w.placed, *j))
                .map(|(j, _)| j);
            let (blocks, left, placed) = match recent {
                Some(j) => {
                    let w = k.in_flight.swap_remove(j);
                    supersede(&w, superseded, superseded_until);
                    k.find_next();
                    let left_now = (w.left - (now - w.since) as f64 / k.factor).max(0.0);
                    let blocks = w.blocks + n;
                    let left = (w.blocks as f64 * left_now + n as f64 * base.max(0) as f64)
                        / blocks as f64;
                    (blocks, left, w.placed)
                }
                None => (n, base.max(0) as f64, now),
            };
            // Full speed for now: its slowdown is set below, from the
            // room every kernel holds once this round's blocks are placed.
            fresh.push((i, k.in_flight.len()));
            *active_end = (*active_end).max(i + 1);
            k.in_flight.push(Wave {
                blocks,
                left,
                since: now,
                end: now.saturating_add(round_ns(left)),
                placed,
                seq: NO_EVENT,
            });
        }
    }

    /// [`SlotPool::place`]: every wave in flight runs `1 + c o` times
    /// slower while other jobs' started kernels press on a share `o` of the
    /// SMs: that share changes only when blocks are placed or retire (here),
    /// so each wave's end is moved to what its work left takes at the new
    /// rate, numbered from `seq`; `late`: the first end past `limit`.
    fn slow_waves(
        &mut self,
        now: i64,
        corun_slowdown: f64,
        seq: &mut u64,
        late: &mut Option<(i64, i64)>,
        limit: i64,
    ) {
        let SlotPool {
            kernels,
            pressing,
            fresh,
            superseded,
            superseded_until,
            active_end,
            nonfinite_weights,
            ..
        } = self;
        pressing.iter_mut().for_each(|p| *p = 0.0);
        // A kernel with no block resident presses on 0.0 SMs: with a
        // finite weight it adds 0.0, which changes no sum. Those with blocks
        // resident are before `active_end`; the others matter only with a
        // weight that is not finite.
        let pressing_end = if *nonfinite_weights > 0 {
            kernels.len()
        } else {
            *active_end
        };
        for k in kernels[..pressing_end]
            .iter()
            .filter(|k| k.resident > 0 || !k.weight.is_finite())
        {
            pressing[k.job] += k.pressing() * k.weight;
        }
        let pressed: f64 = pressing.iter().sum();
        let mut fresh = fresh.iter().peekable();
        // Kernels with a wave in flight (placed now or before) are all
        // before `active_end`.
        for (i, k) in kernels[..*active_end].iter_mut().enumerate() {
            // A kernel with no wave in flight (none placed now either) has
            // nothing to move, and its factor is set again before it is
            // read: when its next wave is placed.
            if k.in_flight.is_empty() {
                continue;
            }
            // At most the whole device.
            let o = ((pressed - pressing[k.job]).max(0.0) / k.sms).clamp(0.0, 1.0);
            let factor = crate::sim::gpu::corun_factor(corun_slowdown, o);
            // Its wave placed now, if any: the last, at full speed so far.
            let placed = fresh.next_if(|&&(f, _)| f == i).map(|&(_, w)| w);
            if let Some(w) = placed
                && factor != 1.0
            {
                let w = &mut k.in_flight[w];
                w.end = now.saturating_add(round_ns(w.left * factor));
            }
            let old = std::mem::replace(&mut k.factor, factor);
            let scheduled = placed.unwrap_or(k.in_flight.len());
            if old == factor || scheduled == 0 {
                continue;
            }
            // Its scheduled waves move: each event is replaced by one at the new end.
            k.next = NONE;
            let mut best = (i64::MAX, u64::MAX);
            // Waves placed at one instant share the work done since: one
            // division for each instant, not each wave.
            let mut done_since = (i64::MIN, 0.0);
            for (j, w) in k.in_flight[..scheduled].iter_mut().enumerate() {
                if done_since.0 != w.since {
                    done_since = (w.since, (now - w.since) as f64 / old);
                }
                w.left = (w.left - done_since.1).max(0.0);
                w.since = now;
                let end = now.saturating_add(round_ns(w.left * factor));
                supersede(w, superseded, superseded_until);
                w.end = end;
                if end > limit {
                    late.get_or_insert((now, end));
                    w.end = i64::MAX;
                    w.seq = NO_EVENT;
                    continue;
                }
                w.seq = *seq;
                *seq += 1;
                if w.key() < best {
                    best = w.key();
                    k.next = j;
                }
            }
            k.next_at = best;
        }
    }

    /// The earliest wave end, `(time, sequence number)`; `None` when no
    /// wave is in flight.
    #[inline]
    pub fn next_wave(&mut self) -> Option<(i64, u64)> {
        if !self.next_known {
            self.find_next_wave();
        }
        self.next_key
    }

    /// [`SlotPool::next_wave`] after the pool changed: scans the kernels
    /// with waves in flight (the engine asks for the next wave several
    /// times an event, mostly of an unchanged pool).
    #[inline(never)]
    fn find_next_wave(&mut self) {
        self.next = None;
        // A kernel without a next wave has the greatest key: never taken.
        let mut best = (i64::MAX, u64::MAX);
        let mut end = 0;
        for (i, k) in self.kernels[..self.active_end].iter().enumerate() {
            if !k.in_flight.is_empty() {
                end = i + 1;
            }
            if k.next_at < best {
                best = k.next_at;
                self.next = Some(i);
            }
        }
        self.active_end = end;
        self.next_known = true;
        self.next_key = self.next.map(|_| best);
    }

    /// The wave [`SlotPool::next_wave`] gave retires: its kernel's `(job,
    /// op)`, and whether the kernel is done (no block left to place or
    /// running), in which case it leaves the pool.
    pub fn retire_next(&mut self) -> (usize, usize, bool) {
        let _ = self.next_wave();
        let i = self.next.take().expect("a wave in flight");
        self.next_known = false;
        self.changed = true;
        let k = &mut self.kernels[i];
        let n = k.in_flight.swap_remove(k.next).blocks;
        k.resident -= n;
        k.counts_changed();
        k.find_next();
        let (job, op) = (k.job, k.op);
        let done = k.to_place == 0 && k.in_flight.is_empty();
        if done {
            let mut k = self.kernels.remove(i);
            if i < self.active_end {
                self.active_end -= 1;
            }
            if !k.weight.is_finite() {
                self.nonfinite_weights -= 1;
            }
            k.in_flight.clear();
            self.spare.push(k.in_flight);
        }
        (job, op, done)
    }

    /// Wave-end events replaced by a later one since the pool was made
    /// (each an event the engine would have dropped as stale when it came
    /// due), and the latest time among them (`i64::MIN`: none).
    pub fn superseded(&self) -> (u64, i64) {
        (self.superseded, self.superseded_until)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl SlotPool {
        /// Asserts that what the pool keeps is what recounting gives: each
        /// kernel's next wave's key, SMs held and pressed on, and per job
        /// the kernels with blocks to place.
        fn check_kept(&self) {
            for k in &self.kernels {
                let key = (k.next != NONE).then(|| k.in_flight[k.next].key());
                assert_eq!(k.next_at, key.unwrap_or((i64::MAX, u64::MAX)));
                assert_eq!(k.held_sms, k.resident as f64 / k.per_sm_f);
                let pressing = if k.resident == 0 {
                    0.0
                } else {
                    (k.resident + k.to_place).min(k.width) as f64 / k.per_sm_f
                };
                assert_eq!(k.press_sms, pressing);
            }
            for (j, &queued) in self.queued.iter().enumerate() {
                let of_job = self.kernels.iter().filter(|k| k.job == j && k.to_place > 0);
                assert_eq!(queued, of_job.count(), "job {j}");
            }
        }
    }

    /// Runs the pool by itself: kernels `(job, occupancy, duration, admitted
    /// at)`, each wave's end the next event; returns each kernel's (first
    /// block, end).
    fn run(kernels: &[(usize, Occupancy, i64, i64)], c: f64) -> Vec<(i64, i64)> {
        run_weighted(kernels, &vec![1.0; kernels.len()], c)
    }

    /// [`run`] with each kernel's weight (how hard it presses on the others).
    fn run_weighted(
        kernels: &[(usize, Occupancy, i64, i64)],
        weights: &[f64],
        c: f64,
    ) -> Vec<(i64, i64)> {
        run_with(kernels, weights, c, 1.0)
    }

    /// [`run`] with thin last waves taking `g` of a block time at least
    /// ([`SlotPool::set_last_wave_floor`]).
    fn run_floor(kernels: &[(usize, Occupancy, i64, i64)], g: f64, c: f64) -> Vec<(i64, i64)> {
        run_with(kernels, &vec![1.0; kernels.len()], c, g)
    }

    fn run_with(
        kernels: &[(usize, Occupancy, i64, i64)],
        weights: &[f64],
        c: f64,
        g: f64,
    ) -> Vec<(i64, i64)> {
        let mut pool = SlotPool::new(4);
        pool.set_last_wave_floor(g);
        let mut first = Vec::new();
        let (mut seq, mut too_long) = (0u64, None);
        let mut result = vec![(i64::MIN, i64::MIN); kernels.len()];
        let mut admitted = 0;
        let mut now = 0;
        loop {
            while admitted < kernels.len() && kernels[admitted].3 <= now {
                let (job, occ, d, _) = kernels[admitted];
                pool.admit(job, admitted, &occ, d, weights[admitted]);
                admitted += 1;
            }
            first.clear();
            let tickets = Tickets {
                seq: &mut seq,
                too_long: &mut too_long,
                limit: i64::MAX,
            };
            pool.place(now, c, tickets, &mut first);
            pool.check_kept();
            for &(_, op) in &first {
                result[op].0 = now;
            }
            // The next event: a wave's end or an admission.
            let next_end = pool.next_wave().map(|(t, _)| t);
            let next_admit = kernels.get(admitted).map(|k| k.3);
            let Some(t) = [next_end, next_admit].into_iter().flatten().min() else {
                break;
            };
            now = t;
            while pool.next_wave().is_some_and(|(t, _)| t == now) {
                let (_, op, done) = pool.retire_next();
                pool.check_kept();
                if done {
                    result[op].1 = now;
                }
            }
        }
        assert!(pool.is_empty());
        result
    }

    /// A device of 10 SMs.
    fn occ(blocks: u64, per_sm: u64) -> Occupancy {
        Occupancy::new(blocks, per_sm, 10)
    }

    #[test]
    fn alone_a_kernel_runs_its_waves_in_exactly_its_duration() {
        // 25 blocks, 2 per SM on 10 SMs: waves of 20, 2 waves of 50 + 51 ns.
        assert_eq!(run(&[(0, occ(25, 2), 101, 0)], 1.0), [(0, 101)]);
        // Two kernels of one job overlapping take no room from each other.
        assert_eq!(
            run(&[(0, occ(20, 2), 100, 0), (0, occ(20, 2), 100, 10)], 1.0),
            [(0, 100), (10, 110)]
        );
    }

    #[test]
    fn a_thin_last_wave_takes_its_share_of_a_block_time() {
        // 25 blocks, 2 per SM on 10 SMs: waves of 20 and 5 (u = 0.25). With
        // g = 0.2 the last takes s = 0.2 + 0.8 x 0.25 = 0.4 of a block time:
        // 140 ns alone as 100 + 40, exactly its duration.
        assert_eq!(run_floor(&[(0, occ(25, 2), 140, 0)], 0.2, 0.0), [(0, 140)]);
        // Job 1's one-block kernel arrives at 10 and waits for job 0's
        // blocks to be placed: at the first wave's end, 100 (70 with equal
        // waves, 140 / 2), it fits beside the last wave and runs 30 ns.
        let pair = [(0, occ(25, 2), 140, 0), (1, occ(1, 1), 30, 10)];
        assert_eq!(run_floor(&pair, 0.2, 0.0), [(0, 140), (100, 130)]);
        assert_eq!(run_floor(&pair, 1.0, 0.0), [(0, 140), (70, 100)]);
        // Blocks of both kinds placed together take their mean: job 1 holds
        // 5 SMs until 100; job 0's kernel places 10 blocks of its first
        // wave at 0 (100 ns), then at 100 the other 10 of the first wave
        // and the last 5: (10 x 100 + 5 x 40) / 15 = 80, to 180.
        let held = [(1, occ(5, 1), 100, 0), (0, occ(25, 2), 140, 0)];
        assert_eq!(run_floor(&held, 0.2, 0.0), [(0, 100), (0, 180)]);
    }

    #[test]
    fn a_small_kernel_waits_behind_a_many_wave_kernel_of_another_job() {
        // Job 0: 40 blocks, 1 per SM on 10 SMs: 4 waves of 10, 100 ns each.
        // Job 1's one-block kernel arrives at 50: the device is full and job
        // 0's kernel keeps its room while it has blocks to place (waves at
        // 100, 200, 300), so the small kernel's block is placed at 400 and
        // ends at 400 + 30. Job 0's kernel is not slowed.
        assert_eq!(
            run(&[(0, occ(40, 1), 400, 0), (1, occ(1, 1), 30, 50)], 0.0),
            [(0, 400), (400, 430)]
        );
    }

    #[test]
    fn two_kernels_that_fit_alone_but_not_together() {
        // 8 SMs each (8 blocks, 1 per SM) on 10 SMs. Job 0's (50 ns) from 0;
        // job 1's (100 ns) at 0 too, after it: 2 blocks fit (block time 100,
        // end 100). At 50 job 0's blocks retire: the 6 left are placed, end 150.
        let pair = [(0, occ(8, 1), 50, 0), (1, occ(8, 1), 100, 0)];
        assert_eq!(run(&pair, 0.0), [(0, 50), (0, 150)]);
        // With c = 1 each slows the other while both have started: job 1's
        // kernel presses on a full wave (its 2 blocks placed and the 6
        // waiting: 8 SMs), as job 0's does (8), so o = 0.8 for both and
        // both run 1.8x. Job 0's blocks end at 90. By then job 1's 2 blocks
        // have done 90 / 1.8 = 50 ns of their 100 and, alone from then on,
        // end at 140; its other 6 blocks, placed at 90 beside nothing, take
        // 100: the kernel ends at 190.
        assert_eq!(run(&pair, 1.0), [(0, 90), (0, 190)]);
    }

    #[test]
    fn a_kernel_placed_first_still_feels_the_whole_wave_beside_it() {
        // Job 1's small kernel (2 blocks, 1 per SM, 100 ns) reaches the GPU
        // first; job 0's (30 blocks, 1 per SM on 10 SMs: 3 waves of 100 ns)
        // at the same instant, after it. Job 1 places 2 blocks, job 0 the 8
        // that fit, 22 waiting. Job 0 presses on a full wave (10 SMs), so
        // with c = 1 job 1's blocks run 1 + 1 x 1 = 2x: (0, 200). (Before
        // 2026-11-26, o was the 8 SMs job 0 held: 1.8x, end 180.)
        // Job 0 beside job 1's 2 SMs runs 1.2x: its first 8 blocks end at
        // 120, the next 8 are placed then; at 200 job 1 leaves, so they have
        // done 80 / 1.2 = 66.7 ns and end at 233. Its other 14 blocks, a
        // block time (100 ns) each, go as room frees: 2 at 200 (end 300), 8
        // at 233 (end 333), 2 at 300 (end 400) and the last 2 at 333: end 433.
        let pair = [(1, occ(2, 1), 100, 0), (0, occ(30, 1), 300, 0)];
        assert_eq!(run(&pair, 1.0), [(0, 200), (0, 433)]);
        // Without the slowdown job 1 ends at 100 and job 0 runs its waves
        // around the 2 SMs job 1 held for the first 100 ns.
        assert_eq!(run(&pair, 0.0)[0], (0, 100));
    }

    #[test]
    fn a_light_kernel_presses_on_its_neighbour_by_its_weight() {
        // The case above with job 1's small kernel at weight 0.25 (its job's
        // measured pressure). Job 1 still
        // feels job 0's full wave (weight 1): 2x, (0, 200). Job 0 feels job
        // 1's 2 SMs x 0.25 = 0.5 SM, o = 0.05: 1.05x. Its first 8 blocks end
        // at 105 and the next 8 are placed then; at 200 job 1 leaves, they
        // have done 95 / 1.05 = 90.5 ns of 100 and end at 210. Of the other
        // 14, 2 go at 200; the 8 placed at 210 join them (10 ns later,
        // within an eighth of the 100 ns block time): (2 x 90 + 8 x 100) /
        // 10 = 98 ns left, end 308. The last 4 go at 308: end 408. (Unjoined:
        // 2 end at 300, 8 at 310, and the last 4 go 2 at 300 and 2 at 310,
        // end 410.)
        let pair = [(1, occ(2, 1), 100, 0), (0, occ(30, 1), 300, 0)];
        assert_eq!(run_weighted(&pair, &[0.25, 1.0], 1.0), [(0, 200), (0, 408)]);
        // At weight 0 job 0 is not slowed, only kept off job 1's 2 SMs: 8
        // blocks end at 100, 8 more at 200; at 200 job 1's 2 SMs free too,
        // so the last 14 go 10 at 200 (end 300) and 4 at 300: end 400.
        assert_eq!(run_weighted(&pair, &[0.0, 1.0], 1.0), [(0, 200), (0, 400)]);
        // At weight 1 it is the case above.
        assert_eq!(run_weighted(&pair, &[1.0, 1.0], 1.0), [(0, 200), (0, 433)]);
    }

    #[test]
    fn a_waiting_kernel_holds_back_later_kernels_of_other_jobs() {
        // Job 0 holds 9.5 of 10 SMs (19 blocks, 2 per SM) for 100 ns. Job 1's
        // kernel (1 block per SM) arrives at 10: half an SM is free, too
        // little for one block, so it waits. Job 2's (half-SM blocks) arrives
        // at 20: one block would fit, but it is behind job 1's. At 100 both
        // place (5 SMs and half of one).
        assert_eq!(
            run(
                &[
                    (0, occ(19, 2), 100, 0),
                    (1, occ(5, 1), 50, 10),
                    (2, occ(1, 2), 50, 20)
                ],
                0.0
            ),
            [(0, 100), (100, 150), (100, 150)]
        );
        // Job 1's kernel placed one of its three blocks (1.5 SMs were free):
        // job 2's half-SM block would fit the half SM left, but waits behind
        // job 1's two unplaced blocks until 100.
        assert_eq!(
            run(
                &[
                    (0, occ(17, 2), 100, 0),
                    (1, occ(3, 1), 50, 10),
                    (2, occ(1, 2), 50, 20)
                ],
                0.0
            ),
            [(0, 100), (10, 150), (100, 150)]
        );
        // Without job 1, job 2's block goes at once.
        assert_eq!(
            run(&[(0, occ(19, 2), 100, 0), (2, occ(1, 2), 50, 20)], 0.0),
            [(0, 100), (20, 70)]
        );
    }

    #[test]
    fn blocks_placed_soon_after_a_wave_join_it() {
        // Job 1's two kernels hold the 10 SMs (5 blocks each, 1 per SM)
        // until 100 and 104. Job 0's kernel (20 blocks: 2 waves of 100 ns
        // alone, so it may join a wave for 100 / 8 = 12 ns) waits. At 100
        // it places 5 blocks (the first wave's 100 ns: end 200); at 104
        // another 5 join them: (5 x 96 + 5 x 100) / 10 = 98 ns left, end
        // 202. Its last 10 blocks go at 202 for a block time: end 302. Had
        // they not joined, 5 would end at 200 and 5 at 204, the last 10 go
        // 5 at 200 and 5 at 204, and the kernel would end at 304.
        let kernels = [
            (1, occ(5, 1), 100, 0),
            (1, occ(5, 1), 104, 0),
            (0, occ(20, 1), 200, 0),
        ];
        assert_eq!(run(&kernels, 0.0), [(0, 100), (0, 104), (100, 302)]);
        // 13 ns after the first wave is past the window: no joining.
        let kernels = [
            (1, occ(5, 1), 100, 0),
            (1, occ(5, 1), 113, 0),
            (0, occ(20, 1), 200, 0),
        ];
        // 5 blocks at 100 (end 200), 5 at 113 (end 213), 5 at 200 (end
        // 300) and 5 at 213: end 313.
        assert_eq!(run(&kernels, 0.0), [(0, 100), (0, 113), (100, 313)]);
    }

    #[test]
    fn waiting_for_room_then_more_waves_than_alone() {
        // Job 0 holds 6 of 10 SMs for 100 ns. Job 1's 10 blocks (1 per SM, one
        // wave alone, 50 ns) get 4 SMs at 0 (end 50), 4 more at 50 (end 100),
        // the last 2 at 100 (job 0 gone): end 150.
        assert_eq!(
            run(&[(0, occ(6, 1), 100, 0), (1, occ(10, 1), 50, 0)], 0.0),
            [(0, 100), (0, 150)]
        );
    }
}
