//! Kernels of different jobs sharing the SMs (the policy's
//! [`SmShare`](super::SmShare)), block by block.

use crate::sim::slots::Tickets;

use super::{Engine, MAX_SIM_NS};

impl Engine<'_> {
    /// Whether kernels share the SMs block by block (the policy shares them).
    pub(super) fn blocks(&self) -> bool {
        self.sharing.is_some()
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
}
