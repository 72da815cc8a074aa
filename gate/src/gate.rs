//! The gate a gated process passes at each kernel launch: the decision rules
//! of [`crate::rules`] applied to what the [`Block`] shows, waiting where they
//! say wait. No CUDA here: the caller (the collector) queues the completion
//! marker the returned [`Launch`] asks for, so the protocol is tested on the CPU.

use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::sync::atomic::{AtomicI64, AtomicU32};

use crate::block::{Block, GatePolicy, MAX_JOBS, Slot, state};
use crate::rules::{self, JobView};
use crate::table::Table;

/// The top job marks a launch followed by a predicted gap at least this long
/// whether or not another job waits to fill it, ns: a marker (one stream
/// write) costs a few µs, under a few percent of such a gap, and a job that
/// reaches the gate during the gap can still use it. Shorter gaps are marked
/// only for a job already waiting with a kernel that fits.
pub const ALWAYS_MARK_GAP_NS: i64 = 100_000;

/// The clock and the pause between looks; [`RealClock`] outside tests.
pub trait Clock {
    /// Now, ns (monotonic).
    fn now(&mut self) -> i64;
    /// Waits a little before the gate looks again.
    fn pause(&mut self, waited_ns: i64);
    /// Waits before looking again where nothing races (the start barrier).
    fn idle(&mut self) {
        self.pause(i64::MAX);
    }
}

/// `CLOCK_MONOTONIC`, shared by every process of the machine; spins while a
/// wait is young (a fill must start within microseconds of a gap opening),
/// then yields the core between looks, or sleeps `nap_ns` between them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RealClock {
    /// Once a wait is older than [`YOUNG_WAIT_NS`], sleep this long between
    /// looks instead of yielding, ns (0: yield). A yielding waiter keeps a
    /// core busy and reads the other jobs' slots without pause; a sleeping
    /// one sees a gap open up to a nap (plus the kernel's timer slack) late.
    pub nap_ns: u64,
}

/// A wait younger than this spins between looks, ns.
pub const YOUNG_WAIT_NS: i64 = 1_000_000;

/// Now on the monotonic clock, ns.
pub fn now_ns() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

impl Clock for RealClock {
    fn now(&mut self) -> i64 {
        now_ns()
    }
    fn pause(&mut self, waited_ns: i64) {
        if waited_ns < YOUNG_WAIT_NS {
            for _ in 0..16 {
                std::hint::spin_loop();
            }
        } else if self.nap_ns > 0 {
            std::thread::sleep(std::time::Duration::from_nanos(self.nap_ns));
        } else {
            std::thread::yield_now();
        }
    }
    fn idle(&mut self) {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// What the gate decided for one launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    /// The launch's sequence number (the value its marker writes to `done`).
    pub seq: u32,
    /// Queue a completion marker behind the launch (a stream write of `seq`).
    pub mark: bool,
    /// It went because no job's counters moved for the timeout, not by the rules.
    pub timed_out: bool,
    /// When the gate let it go (monotonic ns): the launch call's own work
    /// starts here ([`Gate::after_launch`]).
    pub went_ns: i64,
    /// How long it waited at the gate, ns (0: it went at once).
    pub waited_ns: i64,
}

/// A slot of [`Gate::views_in`]'s buffer before it is filled.
const EMPTY_VIEW: JobView = JobView {
    index: 0,
    priority: 0,
    active: false,
    in_flight: 0,
    done: 0,
    last_done: 0,
    waiting_ns: 0,
    waiting_since_ns: 0,
};

/// The longest a job's first launch waits for its partners at the start
/// barrier ([`Header::align`]), ns: longer than any model load seen
/// (17 s for bert-base with transformers' import), short enough that a
/// partner that never launches a kernel costs one delay, not a hang.
pub const ALIGN_LIMIT_NS: i64 = 120_000_000_000;

/// How much longer than twice its predicted time a job's queue on the GPU
/// may show no progress before the hold counts it drained, ns: `done` holds
/// one marker, and where a job's streams' markers land out of order the
/// latest written may be an earlier launch's, after which none comes. 20 µs
/// covers a marker's own latency (a few µs) and the clock's.
pub const STALE_QUEUE_SLACK_NS: i64 = 20_000;

/// Launches whose predicted durations a gate keeps for its in-flight sum;
/// more launches in flight than this count as over any hold.
const RING: usize = 4096;

/// One job's gate.
pub struct Gate<'a> {
    block: &'a Block,
    me: usize,
    table: Table,
    /// The predicted kernel time of this job's launches up to and including
    /// sequence number `seq`, at `seq % RING`, ns.
    through: Box<[AtomicI64]>,
    /// The highest `done` this gate has seen ([`Gate::in_flight`]).
    done_high: AtomicU32,
}

impl<'a> Gate<'a> {
    /// The gate of job `me` (below `block.jobs()`), predicting with `table`.
    pub fn new(block: &'a Block, me: usize, table: Table) -> Gate<'a> {
        let s = block.slot(me);
        s.away_after_ns.store(table.away_after_ns, SeqCst);
        s.hold_ns.store(table.hold_ns, SeqCst);
        Gate {
            block,
            me,
            table,
            through: (0..RING).map(|_| AtomicI64::new(0)).collect(),
            done_high: AtomicU32::new(0),
        }
    }

    /// This job's launches in flight (launched, not seen done) and their
    /// predicted kernel time, ns (`i64::MAX` when more than the gate keeps).
    ///
    /// `done` is the latest marker the GPU wrote, and markers on different
    /// streams can land out of order: the gate keeps the highest seen. A
    /// launch count behind it (two threads launching at once) counts as
    /// nothing in flight.
    fn in_flight(&self) -> (u64, i64) {
        let s = self.block.slot(self.me);
        let launched = s.launched.load(Relaxed) as u32;
        let seen = s.done.load(SeqCst);
        let ahead = |a: u32, b: u32| (a.wrapping_sub(b) as i32) > 0;
        let done = match self
            .done_high
            .fetch_update(Relaxed, Relaxed, |hw| ahead(seen, hw).then_some(seen))
        {
            Ok(_) => seen,
            Err(hw) => hw,
        };
        if !ahead(launched, done) {
            return (0, 0);
        }
        let n = launched.wrapping_sub(done);
        if n as usize >= RING {
            return (u64::from(n), i64::MAX);
        }
        let at = |seq: u32| self.through[seq as usize % RING].load(Relaxed);
        (u64::from(n), at(launched).saturating_sub(at(done)))
    }

    /// The hold of the jobs above this one that are away (running, launched
    /// before, not active in `views`): the least of theirs that set one, ns;
    /// 0 when none is away or none sets a bound.
    fn away_hold(&self, views: &[JobView]) -> i64 {
        self.above_me()
            .filter(|&(j, o)| {
                !views[j].active
                    && o.state.load(SeqCst) == state::RUNNING
                    && o.first_launch_ns.load(Relaxed) != 0
            })
            .map(|(_, o)| o.hold_ns.load(Relaxed))
            .filter(|&h| h > 0)
            .min()
            .unwrap_or(0)
    }

    /// The jobs that would be the top over this one (better priority, then
    /// lower index), with their slots.
    fn above_me(&self) -> impl Iterator<Item = (usize, &Slot)> + '_ {
        let mine = (self.block.slot(self.me).priority.load(Relaxed), self.me);
        (0..self.block.jobs())
            .filter(move |&j| j != self.me)
            .map(|j| (j, self.block.slot(j)))
            .filter(move |&(j, o)| (o.priority.load(Relaxed), j) < mine)
    }

    /// What the gate sees of every job at `now`: active once its command
    /// runs and has launched (a job still starting up competes for nothing)
    /// and, under FIKIT, unless another job is away: it has launched nothing
    /// for longer than its `away_after_ns` and its launches were seen done or
    /// a blocking synchronization returned since, or it serves requests
    /// ([`crate::block::Slot::serving`]) and such a synchronization returned
    /// since its latest launch (a job is never away in its own view: it is
    /// launching); in flight = launches not yet seen done.
    pub fn views(&self, now: i64) -> Vec<JobView> {
        let mut buf = [EMPTY_VIEW; MAX_JOBS];
        self.views_in(now, &mut buf).to_vec()
    }

    /// [`Gate::views`] into `buf`, without allocating (a launch's path).
    fn views_in<'b>(&self, now: i64, buf: &'b mut [JobView; MAX_JOBS]) -> &'b [JobView] {
        let fikit = self.block.policy() == GatePolicy::Fikit;
        let n = self.block.jobs();
        for (j, v) in buf.iter_mut().enumerate().take(n) {
            *v = {
                let s = self.block.slot(j);
                let launched = s.launched.load(SeqCst) as u32;
                let done = s.done.load(SeqCst);
                let first = s.first_launch_ns.load(Relaxed);
                let last = first.max(s.last_launch_ns.load(Relaxed));
                let away_after = s.away_after_ns.load(Relaxed);
                let synced = s.last_sync_ns.load(Relaxed) >= last;
                // Quiet that long, with its work seen done or waited for; or
                // a server between requests: a blocking synchronization
                // returned since its latest launch (its launches need not
                // be marked to be seen done).
                let away = fikit
                    && j != self.me
                    && ((away_after > 0
                        && now.saturating_sub(last) > away_after
                        && (launched == done || synced))
                        || (s.serving.load(Relaxed) != 0 && synced));
                JobView {
                    index: j,
                    priority: s.priority.load(Relaxed).min(255) as u8,
                    active: s.state.load(SeqCst) == state::RUNNING && first != 0 && !away,
                    in_flight: u64::from(launched.wrapping_sub(done)),
                    done: u64::from(done),
                    last_done: 0,
                    waiting_ns: s.waiting_ns.load(SeqCst),
                    waiting_since_ns: s.waiting_since_ns.load(SeqCst),
                }
            };
        }
        &buf[..n]
    }

    /// When job `t`'s current idle gap is predicted to end: when its latest
    /// `done` was first seen (this look records it if it is the first) plus
    /// the gap predicted after its latest launch.
    fn gap_end(&self, t: usize, now: i64) -> i64 {
        let s = self.block.slot(t);
        let seen = u64::from(s.done.load(SeqCst)) + 1;
        let old = s.seen_done.load(SeqCst);
        if old != seen
            && s.seen_done
                .compare_exchange(old, seen, SeqCst, SeqCst)
                .is_ok()
        {
            s.seen_at_ns.store(now, SeqCst);
        }
        s.seen_at_ns
            .load(SeqCst)
            .saturating_add(s.last_gap_ns.load(SeqCst))
    }

    /// Whether a job that would be the top over this one has not exited: it
    /// is starting, away, or between launches. While it is, this job marks
    /// every launch: once it is active again this job may only fill, and the
    /// fill rule needs this job's own kernels seen done (an unmarked launch
    /// stays in flight for the gate until a later marked one is done, so a
    /// filler whose last free launch went unmarked could never fill).
    fn above_me_present(&self) -> bool {
        self.above_me()
            .any(|(_, o)| o.state.load(SeqCst) != state::EXITED)
    }

    /// The shortest predicted kernel another running job waits at the gate
    /// to launch, ns; `None` when no other job waits.
    fn shortest_waiting(&self) -> Option<i64> {
        (0..self.block.jobs())
            .filter(|&j| j != self.me)
            .map(|j| self.block.slot(j))
            .filter(|o| o.state.load(SeqCst) == state::RUNNING)
            .map(|o| o.waiting_ns.load(SeqCst))
            .filter(|&w| w > 0)
            .min()
    }

    /// Takes the fill token for `seq` when it is free: no fill, or the last
    /// filler's launch is done, or its job is no longer running.
    fn take_fill(&self, seq: u32) -> bool {
        let h = self.block.header();
        let token = h.fill.load(SeqCst);
        if token != 0 {
            let holder = (token >> 32) as usize - 1;
            let tseq = token as u32;
            let hs = self.block.slot(holder.min(self.block.jobs() - 1));
            let done = (hs.done.load(SeqCst).wrapping_sub(tseq) as i32) >= 0;
            let gone = hs.state.load(SeqCst) != state::RUNNING;
            if !(done || gone) {
                return false;
            }
        }
        let mine = ((self.me as u64 + 1) << 32) | u64::from(seq);
        h.fill.compare_exchange(token, mine, SeqCst, SeqCst).is_ok()
    }

    /// A summary of every job's counters and the fill token: the gate's
    /// timeout runs while it does not change.
    fn progress(&self) -> u64 {
        let mut p = self.block.header().fill.load(SeqCst);
        for j in 0..self.block.jobs() {
            let s = self.block.slot(j);
            p = p
                .wrapping_mul(31)
                .wrapping_add(s.launched.load(SeqCst))
                .wrapping_mul(31)
                .wrapping_add(u64::from(s.done.load(SeqCst)))
                .wrapping_mul(31)
                .wrapping_add(u64::from(s.state.load(SeqCst)));
        }
        p
    }

    /// Called at the entry of a launch of kernel `key` (`None`: a graph
    /// launch, or a kernel whose name is unknown): waits as the policy says,
    /// then counts the launch. The caller queues a marker when asked.
    pub fn before_launch(&self, key: Option<u64>, clock: &mut impl Clock) -> Launch {
        let b = self.block;
        let s = b.slot(self.me);
        let mut start = clock.now();
        if s.first_launch_ns.load(Relaxed) == 0 {
            if b.header().align.load(Relaxed) != 0 {
                start = self.line_up(start, clock);
            }
            s.first_launch_ns.store(start, SeqCst);
        }
        let launched = s.launched.load(Relaxed);
        if launched == s.stamped_launched.load(Relaxed) {
            // The first launch since the latest stamp: the iteration's busy
            // part begins (whatever the policy then makes it wait).
            s.busy_from_ns.store(start, Relaxed);
        }
        let seq = (launched as u32).wrapping_add(1);
        let policy = b.policy();
        let (predicted, known) = self.table.duration(key);
        if policy == GatePolicy::Fikit && !known {
            s.unknown.fetch_add(1, Relaxed);
        }
        let (mut last_progress, mut since) = (self.progress(), start);
        let mut now = start;
        let mut timed_out = false;
        let mut held = false;
        let (mut queue, mut queue_since) = ((0u64, 0i64), start);
        let mut buf = [EMPTY_VIEW; MAX_JOBS];
        let mark = loop {
            if b.header().abort.load(Relaxed) != 0 {
                break policy != GatePolicy::Open;
            }
            if policy == GatePolicy::Open {
                break false;
            }
            let v = self.views_in(now, &mut buf);
            match policy {
                GatePolicy::Open => break false,
                GatePolicy::Preemptive => {
                    if rules::preemptive(self.me, v) {
                        break true;
                    }
                }
                GatePolicy::Fikit => match rules::top(v) {
                    Some(t) if t.index != self.me => {
                        let end = self.gap_end(t.index, now);
                        if rules::fikit(self.me, v, predicted, now, end) && self.take_fill(seq) {
                            s.fills.fetch_add(1, Relaxed);
                            break true;
                        }
                    }
                    // The top job (or nothing else active): go at once, but
                    // while a job above this one is away keep this job's
                    // queue on the GPU within that job's hold (the
                    // simulator's FIKIT holds the same queue); mark where a
                    // fill could follow (a job waits with a kernel that fits
                    // the predicted gap after this launch, or the gap is
                    // long enough that one arriving in it may still use it),
                    // and every launch while a job above this one is present
                    // but not active.
                    _ => {
                        let hold = self.away_hold(v);
                        let (n, ns) = if hold > 0 { self.in_flight() } else { (0, 0) };
                        if (n, ns) != queue {
                            (queue, queue_since) = ((n, ns), now);
                        }
                        // A queue that outlives twice its prediction has
                        // drained unseen (a marker overwritten by another
                        // stream's): go.
                        let stale = now - queue_since
                            > ns.saturating_mul(2).saturating_add(STALE_QUEUE_SLACK_NS);
                        if !stale && !fikit_rules::may_queue(n, ns, predicted, hold) {
                            // Wait (with the timeout) for its queue to drain.
                            if !held {
                                held = true;
                                s.held.fetch_add(1, Relaxed);
                            }
                        } else {
                            let gap = self.table.gap_after(key);
                            s.last_gap_ns.store(gap, SeqCst);
                            break self.above_me_present()
                                || gap >= b.header().min_fill_ns.load(Relaxed)
                                    && (gap >= ALWAYS_MARK_GAP_NS
                                        || self.shortest_waiting().is_some_and(|w| w <= gap));
                        }
                    }
                },
            }
            let p = self.progress();
            if p != last_progress {
                (last_progress, since) = (p, now);
            } else if now - since
                > i64::try_from(b.header().timeout_ms.load(Relaxed))
                    .unwrap_or(i64::MAX)
                    .saturating_mul(1_000_000)
            {
                s.timeouts.fetch_add(1, Relaxed);
                timed_out = true;
                break true;
            }
            if policy == GatePolicy::Fikit && s.waiting_ns.load(Relaxed) == 0 {
                // Tell the top job what would fill its next gap (at least 1
                // ns), and the other fillers this job's place in line.
                s.waiting_since_ns.store(start, SeqCst);
                s.waiting_ns.store(predicted.max(1), SeqCst);
            }
            clock.pause(now - start);
            now = clock.now();
        };
        if s.waiting_ns.load(Relaxed) != 0 {
            s.waiting_ns.store(0, SeqCst);
        }
        if now > start {
            s.waits.fetch_add(1, Relaxed);
            s.wait_ns.fetch_add((now - start) as u64, Relaxed);
        }
        let before = self.through[(seq.wrapping_sub(1)) as usize % RING].load(Relaxed);
        self.through[seq as usize % RING].store(before.saturating_add(predicted), Relaxed);
        s.launched.store(u64::from(seq), SeqCst);
        s.last_launch_ns.store(now, Relaxed);
        if mark {
            s.marked.fetch_add(1, Relaxed);
        }
        Launch {
            seq,
            mark,
            timed_out,
            went_ns: now,
            waited_ns: now - start,
        }
    }

    /// Counts a launch and nothing else (the A/B's floor,
    /// [`crate::block::Header::ab_floor`]): what stamps its iterations.
    pub fn count_launch(&self) {
        self.block.slot(self.me).launched.fetch_add(1, Relaxed);
    }

    /// Counts the gate's own host time for launch `l`, whose callback began
    /// at `entered_ns`: up to letting it go, less its wait
    /// ([`crate::block::Slot::gate_ns`]).
    pub fn gate_work(&self, entered_ns: i64, l: &Launch) {
        let own = l.went_ns - entered_ns - l.waited_ns;
        if own >= 0 {
            let s = self.block.slot(self.me);
            s.gate_ns.fetch_add(own as u64, Relaxed);
            s.gate_calls.fetch_add(1, Relaxed);
        }
    }

    /// The start barrier ([`Header::align`]): this job has reached its first
    /// launch; waits until every job has (or exited, or the run aborts), at
    /// most [`ALIGN_LIMIT_NS`]. Returns when it let the launch go. The wait
    /// is setup, not gate waiting: it is counted in no gate counter.
    fn line_up(&self, start: i64, clock: &mut impl Clock) -> i64 {
        let b = self.block;
        b.slot(self.me).arrived_ns.store(start, SeqCst);
        let mut now = start;
        loop {
            let all = (0..b.jobs()).all(|j| {
                let o = b.slot(j);
                o.arrived_ns.load(SeqCst) != 0 || o.state.load(SeqCst) == state::EXITED
            });
            if all || b.header().abort.load(Relaxed) != 0 || now - start > ALIGN_LIMIT_NS {
                return now;
            }
            clock.idle();
            now = clock.now();
        }
    }

    /// Called when a timed launch call returns, at `now`, that the gate let
    /// go at `went_ns` ([`Launch::went_ns`]; 0: not known): the call's own
    /// time (the driver's host work, and CUPTI's) is added to the job's
    /// [`crate::block::Slot::launch_call_ns`]. (A clock read costs as much as
    /// the gate's other work on some hosts, so the collector times a sample
    /// of the calls, not every one.)
    pub fn after_launch(&self, went_ns: i64, now: i64) {
        let s = self.block.slot(self.me);
        if went_ns != 0 && now >= went_ns {
            s.launch_call_ns.fetch_add((now - went_ns) as u64, Relaxed);
            s.launch_calls.fetch_add(1, Relaxed);
        }
    }

    /// Called when a blocking synchronization returns: stamps it when the
    /// job launched a kernel since the previous stamp (an iteration's end),
    /// so that the spans between stamps are iterations, not the set-up's
    /// synchronous copies. In an off phase of the A/B ([`crate::ab`]), which
    /// sees no launch, every one is stamped.
    pub fn synced(&self, now: i64) {
        let s = self.block.slot(self.me);
        s.last_sync_ns.store(now, Relaxed);
        let launched = s.launched.load(Relaxed);
        let period_ns = self.block.header().ab_period_ms.load(Relaxed) as i64 * 1_000_000;
        let off = period_ns > 0 && crate::ab::off_at(s.ab_start_ns.load(Relaxed), period_ns, now);
        if s.syncs.load(Relaxed) > 0 && s.stamped_launched.load(Relaxed) == launched && !off {
            return;
        }
        s.stamped_launched.store(launched, Relaxed);
        let n = s.syncs.fetch_add(1, Relaxed) as usize;
        if let Some(w) = self.block.stamps(self.me).get(n) {
            w.store(now, Relaxed);
            self.block.busy_starts(self.me)[n].store(s.busy_from_ns.load(Relaxed), Relaxed);
        }
    }
}

#[cfg(test)]
mod tests;
