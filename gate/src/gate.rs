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
            } else if now - since > b.header().timeout_ms.load(Relaxed) as i64 * 1_000_000 {
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
mod tests {
    use super::*;
    use crate::table::ProfiledOp;

    /// What the test does at each pause: the other jobs, the GPU.
    type Act<'b> = Box<dyn FnMut(i64, &Block) + 'b>;

    /// A clock that advances 1 µs per pause and lets the test act on the
    /// block at chosen times (the other job, the GPU).
    struct Script<'b> {
        t: i64,
        block: &'b Block,
        act: Act<'b>,
    }

    impl Clock for Script<'_> {
        fn now(&mut self) -> i64 {
            self.t
        }
        fn pause(&mut self, _: i64) {
            self.t += 1_000;
            (self.act)(self.t, self.block);
        }
    }

    fn block(policy: GatePolicy, priorities: &[u32]) -> (tempfile::TempDir, Block) {
        let dir = tempfile::tempdir().unwrap();
        let b = Block::create(&dir.path().join("c"), priorities.len(), policy).unwrap();
        for (j, &p) in priorities.iter().enumerate() {
            b.slot(j).priority.store(p, SeqCst);
            b.slot(j).state.store(state::RUNNING, SeqCst);
        }
        (dir, b)
    }

    fn table(kernels: &[(u64, i64, i64)]) -> Table {
        Table {
            kernels: kernels.iter().map(|&(k, d, g)| (k, (d, g))).collect(),
            unknown_ns: 1_000_000,
            away_after_ns: 0,
            hold_ns: 0,
        }
    }

    fn script<'b>(b: &'b Block, t: i64, act: impl FnMut(i64, &Block) + 'b) -> Script<'b> {
        Script {
            t,
            block: b,
            act: Box::new(act),
        }
    }

    #[test]
    fn a_real_clock_with_a_nap_sleeps_between_looks_once_a_wait_is_old() {
        // Sleeping is at least as long as asked.
        let mut napping = RealClock { nap_ns: 5_000_000 };
        let t = std::time::Instant::now();
        napping.pause(YOUNG_WAIT_NS);
        assert!(t.elapsed() >= std::time::Duration::from_millis(5));
        // A young wait never sleeps: a 10 s nap would show.
        let mut long = RealClock {
            nap_ns: 10_000_000_000,
        };
        let t = std::time::Instant::now();
        long.pause(YOUNG_WAIT_NS - 1);
        assert!(t.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn the_top_job_never_waits_and_marks_only_before_fillable_gaps() {
        let (_d, b) = block(GatePolicy::Fikit, &[0, 9, 9]);
        b.header().min_fill_ns.store(50_000, SeqCst);
        // Kernels followed by gaps of 2 µs, 400 µs and 80 µs.
        let g = Gate::new(
            &b,
            0,
            table(&[
                (1, 10_000, 2_000),
                (2, 10_000, 400_000),
                (3, 10_000, 80_000),
            ]),
        );
        let mut c = script(&b, 100, |_, _| panic!("the top job waited"));
        // Job 1 waits to launch a 300 µs kernel.
        b.slot(1).waiting_ns.store(300_000, SeqCst);
        let l = g.before_launch(Some(1), &mut c);
        assert_eq!((l.seq, l.mark), (1, false), "a 2 µs gap fits no fill");
        let l = g.before_launch(Some(2), &mut c);
        assert_eq!((l.seq, l.mark), (2, true), "a 400 µs gap may be filled");
        assert_eq!(b.slot(0).last_gap_ns.load(SeqCst), 400_000);
        assert_eq!(b.slot(0).first_launch_ns.load(SeqCst), 100);
        // 80 µs: too short for job 1's kernel, and shorter than what is
        // marked for a job not yet waiting; job 2's 70 µs kernel fits.
        assert!(!g.before_launch(Some(3), &mut c).mark);
        b.slot(2).waiting_ns.store(70_000, SeqCst);
        assert!(g.before_launch(Some(3), &mut c).mark);
        // Nobody waits (job 2 exited while waiting): the 400 µs gap is
        // marked all the same (a job arriving in it may fill it), the 80 µs
        // one is not.
        b.slot(1).waiting_ns.store(0, SeqCst);
        b.slot(2).state.store(state::EXITED, SeqCst);
        assert!(!g.before_launch(Some(3), &mut c).mark);
        let l = g.before_launch(Some(2), &mut c);
        assert_eq!((l.seq, l.mark), (6, true));
        assert_eq!(b.slot(0).marked.load(SeqCst), 3);
    }

    #[test]
    fn a_filler_waits_for_the_gap_and_goes_when_its_kernel_fits() {
        let (_d, b) = block(GatePolicy::Fikit, &[0, 9]);
        // The top job launched kernel 1 (seq 1, gap after 300 µs), still running.
        let top = b.slot(0);
        top.first_launch_ns.store(1, SeqCst);
        top.launched.store(1, SeqCst);
        top.last_gap_ns.store(300_000, SeqCst);
        let g = Gate::new(&b, 1, table(&[(5, 200_000, 0)]));
        // The GPU finishes the top's kernel at t = 50 µs. While it waits, the
        // filler says what it waits to launch (the top job marks for it).
        let mut waiting = Vec::new();
        let mut c = script(&b, 0, |t, b| {
            waiting.push(b.slot(1).waiting_ns.load(SeqCst));
            if t == 50_000 {
                b.slot(0).done.store(1, SeqCst);
            }
        });
        let l = g.before_launch(Some(5), &mut c);
        assert!(l.mark && !l.timed_out);
        let t = c.t;
        drop(c);
        assert!(waiting.len() == 50 && waiting.iter().all(|&w| w == 200_000));
        assert_eq!(b.slot(1).waiting_ns.load(SeqCst), 0, "cleared once it goes");
        // Seen done at 50 µs, so the gap is predicted to end at 350 µs: a
        // 200 µs kernel fits at once.
        assert_eq!(t, 50_000);
        assert_eq!(b.slot(0).seen_at_ns.load(SeqCst), 50_000);
        assert_eq!(b.header().fill.load(SeqCst), (2 << 32) | 1);
        assert_eq!(b.slot(1).fills.load(SeqCst), 1);
        assert_eq!(b.slot(1).wait_ns.load(SeqCst), 50_000);
    }

    #[test]
    fn a_top_job_quiet_past_its_profile_is_away_until_it_launches() {
        let (_d, b) = block(GatePolicy::Fikit, &[0, 9]);
        // The top job may idle 2 ms (its longest gap plus longest kernel);
        // its latest launch returned at 1 ms, with work still in flight
        // (an unmarked launch: seq 2 launched, 1 seen done).
        let t = Table {
            away_after_ns: 2_000_000,
            ..table(&[])
        };
        let top = Gate::new(&b, 0, t);
        assert_eq!(b.slot(0).away_after_ns.load(SeqCst), 2_000_000);
        let s = b.slot(0);
        s.first_launch_ns.store(1, SeqCst);
        s.last_launch_ns.store(1_000_000, SeqCst);
        s.launched.store(2, SeqCst);
        s.done.store(1, SeqCst);
        s.last_gap_ns.store(0, SeqCst);
        let filler = Gate::new(&b, 1, table(&[(5, 500_000, 0)]));
        let active = |g: &Gate, now| g.views(now)[0].active;
        assert!(
            active(&filler, 3_000_000),
            "quiet exactly 2 ms: still there"
        );
        assert!(
            active(&filler, 9_000_000),
            "quiet 8 ms, but its launch is neither seen done nor waited for"
        );
        s.last_sync_ns.store(1_200_000, SeqCst);
        assert!(!active(&filler, 3_000_001), "a sync returned: away");
        assert!(active(&top, 9_000_000), "never away in its own view");
        // Away, the filler is the top job: its 500 µs kernel goes at once.
        let mut c = script(&b, 3_500_000, |_, _| panic!("the filler waited"));
        assert!(!filler.before_launch(Some(5), &mut c).timed_out);
        assert_eq!(
            b.slot(1).fills.load(SeqCst),
            0,
            "not a fill: it ran as the top"
        );
        // The top job launches again: present at once.
        s.last_launch_ns.store(3_600_000, SeqCst);
        assert!(active(&filler, 3_700_000));
        // A server is away as soon as a wait returns after its latest
        // launch, whether or not that launch was marked and seen done.
        s.serving.store(1, SeqCst);
        s.last_launch_ns.store(4_000_000, SeqCst);
        assert!(active(&filler, 4_000_100), "its launch not waited for");
        s.last_sync_ns.store(4_050_000, SeqCst);
        assert_ne!(s.launched.load(SeqCst) as u32, s.done.load(SeqCst));
        assert!(
            !active(&filler, 4_060_000),
            "between requests: away at once"
        );
        s.serving.store(0, SeqCst);
        assert!(active(&filler, 4_060_000), "not a server: quiet 60 µs only");
        // Under preemptive priority nobody is ever away.
        let (_d2, p) = block(GatePolicy::Preemptive, &[0, 9]);
        let ps = p.slot(0);
        ps.away_after_ns.store(1, SeqCst);
        ps.first_launch_ns.store(1, SeqCst);
        ps.last_sync_ns.store(1, SeqCst);
        assert!(Gate::new(&p, 1, table(&[])).views(1_000_000)[0].active);
    }

    /// Job 0's gate, a server with a hold of 100 µs between requests: it
    /// launched (seq 3, done) and a wait returned since.
    fn away_server(b: &Block) -> Gate<'_> {
        let srv = Gate::new(
            b,
            0,
            Table {
                hold_ns: 100_000,
                ..table(&[])
            },
        );
        let s = b.slot(0);
        s.serving.store(1, SeqCst);
        s.first_launch_ns.store(1, SeqCst);
        s.last_launch_ns.store(1_000, SeqCst);
        s.launched.store(3, SeqCst);
        s.done.store(3, SeqCst);
        s.last_sync_ns.store(2_000, SeqCst);
        srv
    }

    #[test]
    fn while_a_server_is_away_its_partner_queues_at_most_its_hold() {
        let (_d, b) = block(GatePolicy::Fikit, &[0, 9]);
        let srv = away_server(&b);
        assert_eq!(b.slot(0).hold_ns.load(SeqCst), 100_000);
        let s = b.slot(0);
        // The partner's kernels are predicted 40 µs.
        let lo = Gate::new(&b, 1, table(&[(7, 40_000, 0)]));
        assert!(!lo.views(10_000)[0].active, "the server is away");
        // Nothing in flight, then 40 µs: both go at once, marked (the job
        // above is present).
        for seq in 1..=2 {
            let mut c = script(&b, 10_000, |_, _| panic!("launch {seq} waited"));
            let l = lo.before_launch(Some(7), &mut c);
            assert_eq!((l.seq, l.mark, l.waited_ns), (seq, true, 0));
        }
        // 80 µs in flight: a third would make 120, over the hold. It waits
        // until the GPU writes the first launch's marker (at 30 µs): 40 µs
        // in flight, 80 with it.
        let mut c = script(&b, 10_000, |t, b| {
            if t >= 30_000 {
                b.slot(1).done.store(1, SeqCst);
            }
        });
        let l = lo.before_launch(Some(7), &mut c);
        assert_eq!((l.seq, l.waited_ns, l.timed_out), (3, 20_000, false));
        assert_eq!(b.slot(1).held.load(SeqCst), 1);
        assert_eq!(b.slot(1).fills.load(SeqCst), 0, "not a fill");
        // A marker that never comes (80 µs in flight): once the queue has
        // shown no progress for twice its prediction and the slack, 180 µs,
        // the hold counts it drained, long before the gate's timeout.
        let mut c = script(&b, 50_000, |_, _| {});
        let l = lo.before_launch(Some(7), &mut c);
        assert_eq!((l.seq, l.waited_ns, l.timed_out), (4, 181_000, false));
        // A server that sets no hold bounds nothing.
        s.hold_ns.store(0, SeqCst);
        let mut c = script(&b, 60_000, |_, _| panic!("no hold: waited"));
        assert_eq!(lo.before_launch(Some(7), &mut c).waited_ns, 0);
        // Its own gate is never held (the server is the top).
        s.hold_ns.store(100_000, SeqCst);
        let mut c = script(&b, 70_000, |_, _| panic!("the server waited"));
        assert_eq!(srv.before_launch(None, &mut c).waited_ns, 0);
    }

    #[test]
    fn markers_done_out_of_order_across_streams_do_not_stall_a_held_partner() {
        let (_d, b) = block(GatePolicy::Fikit, &[0, 9]);
        let _srv = away_server(&b);
        b.header().timeout_ms.store(5, SeqCst);
        let lo = Gate::new(&b, 1, table(&[(7, 40_000, 0), (8, 70_000, 0)]));
        // Two marked launches on two streams: seq 1 (stream A), seq 2 (stream B).
        for _ in 0..2 {
            let mut c = script(&b, 10_000, |_, _| panic!("waited"));
            assert!(lo.before_launch(Some(7), &mut c).mark);
        }
        // Stream B's marker lands first, then stream A's: `done` ends at 1
        // though both kernels are done. Nothing is in flight.
        b.slot(1).done.store(2, SeqCst);
        b.slot(1).done.store(1, SeqCst);
        // A 70 us launch: the queue on the GPU is empty, so it should go at once.
        let mut c = script(&b, 20_000, |_, _| {});
        let l = lo.before_launch(Some(8), &mut c);
        assert!(
            !l.timed_out,
            "stalled {} ns, until the gate's timeout",
            l.waited_ns
        );
    }

    #[test]
    fn a_launch_counter_behind_done_does_not_stall_a_held_partner() {
        // Two threads launch at once: both take seq 4 from launched = 3;
        // one goes, launches again (seq 5, marked, done); the other stores
        // launched = 4 last. launched (4) is now behind done (5).
        let (_d, b) = block(GatePolicy::Fikit, &[0, 9]);
        let _srv = away_server(&b);
        b.header().timeout_ms.store(5, SeqCst);
        let lo = Gate::new(&b, 1, table(&[(7, 40_000, 0)]));
        b.slot(1).done.store(5, SeqCst);
        b.slot(1).launched.store(4, SeqCst);
        let mut c = script(&b, 20_000, |_, _| {});
        let l = lo.before_launch(Some(7), &mut c);
        assert!(
            !l.timed_out,
            "stalled {} ns, until the gate's timeout",
            l.waited_ns
        );
    }

    #[test]
    fn a_filler_marks_its_free_launches_while_a_job_above_it_is_not_active() {
        // The H200 serving pair (2026-11-25): the filler's first launches
        // went before the top job's first one, unmarked; they stayed in
        // flight for the gate and the filler could fill none of the top
        // job's 5 ms pauses.
        let (_d, b) = block(GatePolicy::Fikit, &[0, 9]);
        b.header().min_fill_ns.store(50_000, SeqCst);
        // A 100 µs kernel followed by a 2 µs gap: no fill could follow it.
        let lo = Gate::new(&b, 1, table(&[(7, 100_000, 2_000)]));
        let mut c = script(&b, 100, |_, _| panic!("the filler waited"));
        // The top job runs but has not launched: the filler goes, marked.
        let l = lo.before_launch(Some(7), &mut c);
        assert_eq!((l.seq, l.mark), (1, true));
        // The top job launches (seq 5 marked, done) and pauses 5 ms; the
        // filler's launch is not seen done yet: no fill.
        let top = b.slot(0);
        top.first_launch_ns.store(200, SeqCst);
        top.last_launch_ns.store(300, SeqCst);
        top.launched.store(5, SeqCst);
        top.done.store(5, SeqCst);
        top.last_gap_ns.store(5_000_000, SeqCst);
        // The GPU writes the filler's marker at 20 µs: it fills then.
        let mut c = script(&b, 1_000, |t, b| {
            if t >= 20_000 {
                b.slot(1).done.store(1, SeqCst);
            }
        });
        let l = lo.before_launch(Some(7), &mut c);
        assert_eq!((l.seq, l.mark), (2, true));
        assert_eq!(b.slot(1).fills.load(SeqCst), 1);
        assert_eq!(b.slot(1).wait_ns.load(SeqCst), 19_000);
        // The top job exited: the filler's launches are marked only before
        // a gap a fill could use.
        top.state.store(state::EXITED, SeqCst);
        b.slot(1).done.store(2, SeqCst);
        let mut c = script(&b, 30_000, |_, _| panic!("the filler waited"));
        assert!(!lo.before_launch(Some(7), &mut c).mark);
        // A job above that has not started yet counts as present.
        let (_d2, b2) = block(GatePolicy::Fikit, &[0, 9]);
        b2.slot(0).state.store(state::WAITING, SeqCst);
        let lo2 = Gate::new(&b2, 1, table(&[(7, 100_000, 2_000)]));
        let mut c = script(&b2, 100, |_, _| panic!("the filler waited"));
        assert!(lo2.before_launch(Some(7), &mut c).mark);
        // The top job's own launches are unchanged: nobody is above it.
        b2.slot(0).state.store(state::RUNNING, SeqCst);
        let hi = Gate::new(&b2, 0, table(&[(7, 100_000, 2_000)]));
        let mut c = script(&b2, 200, |_, _| panic!("the top job waited"));
        assert!(!hi.before_launch(Some(7), &mut c).mark);
    }

    #[test]
    fn a_filler_too_long_for_the_rest_of_the_gap_waits_for_the_next() {
        let (_d, b) = block(GatePolicy::Fikit, &[0, 9]);
        let top = b.slot(0);
        top.first_launch_ns.store(1, SeqCst);
        top.launched.store(1, SeqCst);
        top.done.store(1, SeqCst);
        top.last_gap_ns.store(100_000, SeqCst);
        let g = Gate::new(&b, 1, table(&[(5, 150_000, 0)]));
        // The gap opened (seen) at 0; at 120 µs the top launches seq 2 with a
        // 1 ms gap after it, done at 200 µs.
        let mut c = script(&b, 0, |t, b| {
            let s = b.slot(0);
            if t == 120_000 {
                s.last_gap_ns.store(1_000_000, SeqCst);
                s.launched.store(2, SeqCst);
            }
            if t == 200_000 {
                s.done.store(2, SeqCst);
            }
        });
        g.before_launch(Some(5), &mut c);
        assert_eq!(c.t, 200_000, "150 µs never fit the first 100 µs gap");
    }

    #[test]
    fn one_fill_at_a_time_and_a_dead_filler_holds_nothing() {
        let (_d, b) = block(GatePolicy::Fikit, &[0, 9, 9]);
        b.slot(0).first_launch_ns.store(1, SeqCst);
        b.slot(0).last_gap_ns.store(10_000_000, SeqCst);
        // Job 1 holds the fill token for its seq 1, in flight.
        b.slot(1).first_launch_ns.store(1, SeqCst);
        b.slot(1).launched.store(1, SeqCst);
        b.header().fill.store((2 << 32) | 1, SeqCst);
        let g = Gate::new(&b, 2, table(&[(5, 1_000, 0)]));
        // Job 1 dies at 30 µs without its kernel ever seen done.
        let mut c = script(&b, 0, |t, b| {
            if t == 30_000 {
                b.slot(1).state.store(state::EXITED, SeqCst);
            }
        });
        let l = g.before_launch(Some(5), &mut c);
        assert_eq!(c.t, 30_000);
        assert_eq!(b.header().fill.load(SeqCst), (3 << 32) | u64::from(l.seq));
    }

    #[test]
    fn preemptive_waits_while_a_higher_job_has_work() {
        let (_d, b) = block(GatePolicy::Preemptive, &[0, 9]);
        b.slot(0).first_launch_ns.store(1, SeqCst);
        b.slot(0).launched.store(3, SeqCst);
        b.slot(0).done.store(1, SeqCst);
        let g = Gate::new(&b, 1, Table::default());
        let mut c = script(&b, 0, |t, b| {
            if t == 7_000 {
                b.slot(0).done.store(3, SeqCst);
            }
        });
        let l = g.before_launch(None, &mut c);
        assert_eq!((c.t, l.mark), (7_000, true));
        assert_eq!((l.went_ns, l.waited_ns), (7_000, 7_000));
    }

    #[test]
    fn a_stuck_gate_times_out_and_abort_opens_it() {
        let (_d, b) = block(GatePolicy::Preemptive, &[0, 9]);
        b.header().timeout_ms.store(2, SeqCst);
        b.slot(0).first_launch_ns.store(1, SeqCst);
        b.slot(0).launched.store(1, SeqCst);
        let g = Gate::new(&b, 1, Table::default());
        let mut c = script(&b, 0, |_, _| {});
        let l = g.before_launch(None, &mut c);
        assert!(l.timed_out);
        assert_eq!(c.t, 2_001_000, "the first look past 2 ms without progress");
        assert_eq!(b.slot(1).timeouts.load(SeqCst), 1);
        b.header().abort.store(1, SeqCst);
        let mut c = script(&b, 0, |_, _| panic!("waited after abort"));
        assert!(!g.before_launch(None, &mut c).timed_out);
    }

    #[test]
    fn the_start_barrier_holds_a_first_launch_until_every_job_reached_its_own() {
        let (_d, b) = block(GatePolicy::Open, &[0, 9, 9]);
        b.header().align.store(1, SeqCst);
        // Job 1 reaches its first launch at 5.1 µs; job 2 exits at 9.1 µs
        // without launching anything.
        let g = Gate::new(&b, 0, table(&[]));
        let mut c = script(&b, 100, |t, b| {
            if t >= 5_000 && b.slot(1).arrived_ns.load(SeqCst) == 0 {
                b.slot(1).arrived_ns.store(t, SeqCst);
            }
            if t >= 9_000 {
                b.slot(2).state.store(state::EXITED, SeqCst);
            }
        });
        g.before_launch(Some(1), &mut c);
        let s = b.slot(0);
        assert_eq!(
            s.arrived_ns.load(SeqCst),
            100,
            "arrival is when it reached the gate"
        );
        // Pauses of 1 µs from 100: job 2 exits at 9,100, and the launch goes.
        assert_eq!(
            s.first_launch_ns.load(SeqCst),
            9_100,
            "the region starts at the release"
        );
        assert_eq!(
            (s.waits.load(SeqCst), s.wait_ns.load(SeqCst)),
            (0, 0),
            "setup, not gate waits"
        );
        // Its later launches pass at once.
        let mut c = script(&b, 20_000, |_, _| panic!("waited after the first launch"));
        assert_eq!(g.before_launch(Some(1), &mut c).seq, 2);
    }

    #[test]
    fn the_start_barrier_opens_on_abort_and_is_off_by_default() {
        let (_d, b) = block(GatePolicy::Open, &[0, 9]);
        let g = Gate::new(&b, 0, table(&[]));
        let mut c = script(&b, 7, |_, _| panic!("waited with the barrier off"));
        g.before_launch(None, &mut c);
        assert_eq!(b.slot(0).first_launch_ns.load(SeqCst), 7);
        let (_d, b) = block(GatePolicy::Open, &[0, 9]);
        b.header().align.store(1, SeqCst);
        let g = Gate::new(&b, 0, table(&[]));
        let mut c = script(&b, 1, |t, b| {
            if t >= 3_001 {
                b.header().abort.store(1, SeqCst);
            }
        });
        g.before_launch(None, &mut c);
        assert_eq!(b.slot(0).first_launch_ns.load(SeqCst), 3_001);
    }

    fn g_launch(went_ns: i64, waited_ns: i64) -> Launch {
        Launch {
            seq: 1,
            mark: false,
            timed_out: false,
            went_ns,
            waited_ns,
        }
    }

    #[test]
    fn open_runs_count_and_stamp_only() {
        let (_d, b) = block(GatePolicy::Open, &[0, 0]);
        b.slot(1).launched.store(5, SeqCst);
        let g = Gate::new(&b, 0, Table::default());
        let mut c = script(&b, 10, |_, _| panic!("waited"));
        assert_eq!(
            g.before_launch(Some(1), &mut c),
            Launch {
                seq: 1,
                mark: false,
                timed_out: false,
                went_ns: 10,
                waited_ns: 0,
            }
        );
        // Its callback began 4 ns before the gate let it go, and it did not wait.
        g.gate_work(6, &g_launch(10, 0));
        assert_eq!(b.slot(0).gate_ns.load(SeqCst), 4);
        assert_eq!(b.slot(0).gate_calls.load(SeqCst), 1);
        // A launch that waited 30 ns of the 33 since its callback began: 3 its own.
        g.gate_work(7, &g_launch(40, 30));
        assert_eq!(b.slot(0).gate_ns.load(SeqCst), 7);
        assert_eq!(b.slot(0).gate_calls.load(SeqCst), 2);
        assert_eq!(b.slot(0).last_launch_ns.load(SeqCst), 10, "when it went");
        // The call returns 7 ns after the gate let it go.
        g.after_launch(10, 17);
        assert_eq!(b.slot(0).launch_call_ns.load(SeqCst), 7);
        assert_eq!(b.slot(0).launch_calls.load(SeqCst), 1);
        // A return whose start the collector did not see counts no call time.
        g.after_launch(0, 18);
        assert_eq!(b.slot(0).launch_calls.load(SeqCst), 1);
        g.synced(20);
        // No launch since: the end of the region moves, no new iteration.
        g.synced(30);
        assert_eq!(b.slot(0).syncs.load(SeqCst), 1);
        assert_eq!(b.stamps(0)[0].load(SeqCst), 20);
        assert_eq!(b.slot(0).last_sync_ns.load(SeqCst), 30);
        let mut c = script(&b, 40, |_, _| panic!("waited"));
        g.before_launch(Some(1), &mut c);
        // A second launch in the same iteration: its busy part still began
        // at the first.
        let mut c = script(&b, 45, |_, _| panic!("waited"));
        g.before_launch(Some(1), &mut c);
        g.synced(50);
        assert_eq!(b.slot(0).syncs.load(SeqCst), 2);
        assert_eq!(b.stamps(0)[1].load(SeqCst), 50);
        assert_eq!(b.busy_starts(0)[1].load(SeqCst), 40);
    }

    #[test]
    fn an_off_phase_of_the_ab_stamps_every_synchronization() {
        let (_d, b) = block(GatePolicy::Fikit, &[0]);
        let g = Gate::new(&b, 0, Table::default());
        let mut c = script(&b, 10, |_, _| panic!("waited"));
        g.before_launch(Some(1), &mut c);
        g.synced(20);
        // Phases of 1 ms from 1,000,000 ns: off, then on.
        b.header().ab_period_ms.store(1, SeqCst);
        b.slot(0).ab_start_ns.store(1_000_000, SeqCst);
        // Before the first phase the gate is on: no launch since, no stamp.
        g.synced(500_000);
        assert_eq!(b.slot(0).syncs.load(SeqCst), 1);
        // Off: the gate sees no launch, and each synchronization is stamped.
        g.synced(1_200_000);
        g.synced(1_400_000);
        assert_eq!(b.slot(0).syncs.load(SeqCst), 3);
        assert_eq!(b.stamps(0)[2].load(SeqCst), 1_400_000);
        // On again: only a synchronization after a launch.
        g.synced(2_100_000);
        assert_eq!(b.slot(0).syncs.load(SeqCst), 3);
        let mut c = script(&b, 2_200_000, |_, _| panic!("waited"));
        g.before_launch(Some(1), &mut c);
        g.synced(2_300_000);
        assert_eq!(b.slot(0).syncs.load(SeqCst), 4);
    }

    #[test]
    fn table_from_a_profile_drives_the_gate() {
        let t = Table::from_ops(&[
            ProfiledOp {
                key: Some(1),
                start_ns: 0,
                end_ns: 10,
            },
            ProfiledOp {
                key: Some(1),
                start_ns: 1_000,
                end_ns: 1_010,
            },
        ]);
        assert_eq!(t.gap_after(Some(1)), 990);
    }
}
