//! Whole time-slice rounds skipped at once ([`Policy::rotation`](super::Policy::rotation)).

use std::collections::BinaryHeap;

use super::{Engine, Event, MAX_SIM_NS, MIN_ROUNDS_TO_SKIP, Rotation, Segment, Status};

impl Engine<'_> {
    /// Skips whole rounds of rotation `r`, which has just begun at `now`
    /// (its first job's kernels all started now, every other job of it with
    /// all its kernels paused), while nothing else can happen: no host step,
    /// no operation becoming eligible or finishing, and no kernel of the
    /// rotation finishing. Leaves the state exactly as replaying the rounds
    /// slice by slice would (the same remaining work, stream order, busy
    /// time; a paused kernel's `eligible_at` and `resumed_at` those of its
    /// last turn), but for what no result shows: the events skipped are not
    /// counted, stale events are dropped, and recorded segments cover each
    /// kernel's turns of the skipped rounds with one segment. Remaining work
    /// is `f64`: exact, and so the same as stepping, below 2^53 ns (104
    /// days). Returns the time skipped, ns (0: nothing skipped).
    pub(super) fn skip_rounds(&mut self, r: &Rotation) -> i64 {
        let now = self.now;
        let n = r.jobs.len() as i64;
        let (q, c) = (r.slice_ns, r.switch_ns);
        if n < 2 || q <= 0 || c < 0 || self.sharing.is_some() {
            return 0;
        }
        let Some(period) = q.checked_add(c).and_then(|t| t.checked_mul(n)) else {
            return 0;
        };
        let owner = r.jobs[0];
        // The rotation's state: the owner's kernels all just started, the
        // others' all paused; no other job has kernel work.
        let mut rounds = u64::MAX;
        for (j, st) in self.state.iter().enumerate() {
            let in_rotation = r.jobs.contains(&j);
            let shape_ok = if j == owner {
                st.eligible.is_empty() && !st.running.is_empty()
            } else if in_rotation {
                st.running.is_empty() && !st.eligible.is_empty()
            } else {
                !st.has_kernel_work()
            };
            if !shape_ok {
                return 0;
            }
            for &op in st.running.iter().chain(&st.eligible) {
                let o = &st.ops[op];
                if j == owner && o.since != now {
                    return 0;
                }
                // A kernel survives round k's turn while its remaining work
                // before the turn exceeds the slice: rounds < remaining / q.
                // One round less, for rounding.
                let fit = (o.remaining / q as f64).ceil() - 2.0;
                if fit.is_nan() || fit < 1.0 {
                    return 0;
                }
                rounds = rounds.min(fit as u64);
            }
        }
        // Nothing else may happen before the rounds end: the earliest event
        // that is not a wake-up or a stale completion.
        let mut horizon = i64::MAX;
        for q in self.queue.iter() {
            let external = match self.events[q.slot] {
                Event::Wake => false,
                Event::Done(j, op, v) => {
                    let o = &self.state[j].ops[op];
                    let live = o.version == v && o.status == Status::Running;
                    live && !(j == owner && self.state[j].running.contains(&op))
                }
                Event::Host(_) | Event::Eligible(..) => true,
            };
            if external {
                horizon = horizon.min(q.time());
            }
        }
        let before_horizon = ((horizon.min(MAX_SIM_NS) - now - 1) / period).max(0) as u64;
        let rounds = rounds.min(before_horizon);
        let min = self.opts.min_rounds_to_skip.unwrap_or(MIN_ROUNDS_TO_SKIP);
        if rounds < min.max(1) {
            return 0;
        }
        let rounds = rounds as i64;
        let by = rounds * period; // < horizon - now: no overflow
        let t1 = now + by;
        let work = (rounds * q) as f64;
        for (p, &j) in r.jobs.iter().enumerate() {
            // This job's turn in the last skipped round.
            let turn = t1 - period + p as i64 * (q + c);
            let st = &mut self.state[j];
            for &op in st.running.iter().chain(&st.eligible) {
                let o = &mut st.ops[op];
                if self.opts.record_segments {
                    let start_ns = if j == owner {
                        now
                    } else {
                        now + p as i64 * (q + c)
                    };
                    self.segments.push(Segment {
                        job: j,
                        op,
                        ready_ns: o.eligible_at.min(start_ns),
                        start_ns,
                        end_ns: turn + q,
                    });
                }
                o.remaining -= work;
                o.version += 1;
                o.eligible_at = turn + q;
                if j == owner {
                    o.since = t1;
                    o.resumed_at = t1;
                } else {
                    o.resumed_at = turn;
                }
            }
        }
        self.busy_ns += rounds * n * q;
        self.busy_since = t1;
        // Drop what the skipped rounds would have consumed (wake-ups and
        // stale completions, none later than t1), then resume the owner.
        let mut kept = Vec::with_capacity(self.queue.len());
        for e in std::mem::take(&mut self.queue).into_vec() {
            if e.time() > t1 {
                kept.push(e);
            } else {
                self.free_slots.push(e.slot);
            }
        }
        self.queue = BinaryHeap::from(kept);
        self.now = t1;
        let live: Vec<usize> = self.state[owner].running.clone();
        for op in live {
            let o = &self.state[owner].ops[op];
            let done = t1.saturating_add(o.remaining.ceil() as i64);
            let v = o.version;
            self.schedule(done, Event::Done(owner, op, v));
        }
        self.wake_pending = None;
        let wake = t1.saturating_add(q);
        self.wake_pending = Some(wake);
        self.schedule(wake, Event::Wake);
        by
    }
}
