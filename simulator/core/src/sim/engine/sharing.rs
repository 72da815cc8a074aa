//! Kernels of different jobs sharing the SMs (the policy's [`SmShare`](super::SmShare)):
//! block by block, or fluid with every running kernel's speed.

use crate::sim::gpu::SmSharing;

use crate::sim::slots::Tickets;

use super::{Engine, Event, MAX_SIM_NS};

impl Engine<'_> {
    /// How kernels share the SMs: block by block.
    pub(super) fn blocks(&self) -> bool {
        self.sharing
            .as_ref()
            .is_some_and(|s| s.mode == SmSharing::Blocks)
    }

    /// How kernels share the SMs: fluid.
    pub(super) fn fluid(&self) -> bool {
        self.sharing
            .as_ref()
            .is_some_and(|s| s.mode == SmSharing::Fluid)
    }

    /// The MPS share's concurrent-kernel slowdown (0 without one).
    pub(super) fn corun_slowdown(&self) -> f64 {
        self.sharing.as_ref().map_or(0.0, |s| s.corun_slowdown)
    }

    /// Block-by-block sharing: places the blocks that fit now; the SM
    /// slots keep their waves' ends, events numbered in this run's order
    /// ([`Tickets`]); a kernel's first block is its start on timelines.
    pub(super) fn place_blocks(&mut self) {
        let c = self.corun_slowdown();
        let now = self.now;
        let Engine {
            slots,
            first,
            seq,
            too_long,
            state,
            ..
        } = self;
        first.clear();
        let tickets = Tickets {
            seq,
            too_long,
            limit: MAX_SIM_NS,
        };
        slots.place(now, c, tickets, first);
        for &(j, op) in first.iter() {
            state[j].ops[op].resumed_at = now;
        }
    }

    /// MPS: when the jobs' SM demand exceeds the device, every running kernel
    /// slows down by the same factor. A job's own demand counts at most 1 (its
    /// recorded durations already include its own kernels' sharing), so a job
    /// alone always runs at its recorded speed.
    /// Under SM sharing: every running kernel's speed. When the jobs' SM
    /// demands (each job's at most 1) add up past the device, all run
    /// `1 / total` as fast; a kernel also runs `1 + c * o` times slower
    /// while other jobs' kernels hold a share `o` of the SMs (at most 1;
    /// `c`: [`SmShare::corun_slowdown`](super::SmShare::corun_slowdown)).
    pub(super) fn update_rates(&mut self) {
        let now = self.now;
        let c = self.corun_slowdown();
        let mut shares = std::mem::take(&mut self.shares);
        shares.clear();
        shares.extend(self.state.iter().enumerate().map(|(j, st)| {
            st.running
                .iter()
                .map(|&op| self.jobs[j].sm_demand(op))
                .sum::<f64>()
                .min(1.0)
        }));
        let total: f64 = shares.iter().sum();
        let over = if total > 1.0 { total } else { 1.0 };
        let mut reschedule = Vec::new();
        for (j, st) in self.state.iter_mut().enumerate() {
            let rate = if c > 0.0 {
                let others = (total - shares[j]).clamp(0.0, 1.0);
                1.0 / (over * crate::sim::gpu::corun_factor(c, others))
            } else {
                1.0 / over
            };
            for &op in &st.running {
                let o = &mut st.ops[op];
                if o.rate == rate {
                    continue;
                }
                o.remaining = (o.remaining - (now - o.since) as f64 * o.rate).max(0.0);
                o.since = now;
                o.rate = rate;
                o.version += 1;
                let done = now.saturating_add((o.remaining / rate).ceil() as i64);
                reschedule.push((j, op, done, o.version));
            }
        }
        self.shares = shares;
        for (j, op, t, v) in reschedule {
            self.schedule(t, Event::Done(j, op, v));
        }
    }
}
