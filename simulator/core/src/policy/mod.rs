//! Scheduling policies: one type each, all behind [`Policy`].
//!
//! Kernels of one job keep the concurrency they had when recorded (they run at
//! their recorded durations). Between jobs:
//! - [`Exclusive`]: no other job exists (each job is run alone);
//! - [`TimeSlice`]: jobs (contexts) take turns in time slices; kernels of
//!   different jobs never overlap;
//! - [`Mps`]: kernels of all jobs run at once and share the SMs;
//! - [`Preemptive`]: the highest-priority job with work runs; it preempts lower
//!   ones at the configured granularity;
//! - [`Fikit`]: the highest-priority job's kernels go at once; its idle gaps
//!   are filled with lower-priority kernels whose predicted duration fits the
//!   predicted rest of the gap.
//!
//! Adding a policy: a file here with a type that implements [`Policy`] and
//! [`FromModel`], its `mod` line, and one line in the registry below, which
//! gives it its [`PolicyKind`], its name on the command line and in reports,
//! and its help text.

use serde::{Deserialize, Serialize};

use crate::sim::engine::{Commands, JobRt, Policy};
use crate::sim::gpu::GpuModel;

mod exclusive;
mod fikit;
mod mps;
mod preemptive;
mod timeslice;

pub use exclusive::Exclusive;
pub use fikit::Fikit;
pub use mps::Mps;
pub use preemptive::Preemptive;
pub use timeslice::TimeSlice;

/// A run's jobs by priority, then index, kept by a policy: its top job is
/// the first of them that qualifies, usually the first looked at, instead of
/// the best of a scan over every job at every decision.
#[derive(Debug, Default)]
pub(crate) struct ByPriority(Vec<usize>);

impl ByPriority {
    /// The job of highest priority (ties: lowest index) for which `pick`
    /// holds. A policy serves one run: the order is taken from the first
    /// state it sees.
    pub(crate) fn first(
        &mut self,
        state: &[JobRt],
        pick: impl Fn(&JobRt) -> bool,
    ) -> Option<usize> {
        if self.0.len() != state.len() {
            self.0 = (0..state.len()).collect();
            self.0.sort_by_key(|&j| (state[j].priority, j));
        }
        self.0.iter().copied().find(|&j| pick(&state[j]))
    }
}

/// A policy built fresh for one run from the GPU model (its quantum, switch
/// costs, preemption, concurrent-kernel slowdown).
pub trait FromModel {
    /// The policy for `model`'s GPU.
    fn from_model(model: &GpuModel) -> Self;
}

/// Declares [`PolicyKind`] from the registry's lines: `Variant = "name",
/// "help" => Type`, in report order.
macro_rules! registry {
    ($($variant:ident = $name:literal, $help:literal => $ty:ty),* $(,)?) => {
        /// The policies by name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum PolicyKind {
            $(
                #[doc = $help]
                #[serde(rename = $name)]
                $variant,
            )*
        }

        impl PolicyKind {
            /// All policies, in report order.
            pub const ALL: [PolicyKind; [$($name),*].len()] = [$(PolicyKind::$variant),*];

            /// The name on the command line and in reports.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(PolicyKind::$variant => $name,)*
                }
            }

            /// One line on what the policy does (the command line's help).
            pub fn help(self) -> &'static str {
                match self {
                    $(PolicyKind::$variant => $help,)*
                }
            }

            /// A fresh policy object for one run.
            pub fn build(self, model: &GpuModel) -> Box<dyn Policy> {
                match self {
                    $(PolicyKind::$variant => Box::new(<$ty as FromModel>::from_model(model)),)*
                }
            }
        }
    };
}

registry! {
    Exclusive = "exclusive", "Each job alone on the GPU (the isolated reference)." => Exclusive,
    Timeslice = "timeslice", "Default time slicing between processes (the baseline)." => TimeSlice,
    Mps = "mps", "NVIDIA MPS: kernels of all jobs share the SMs." => Mps,
    Preemptive = "preemptive", "Preemptive priority: the highest-priority job with work runs." => Preemptive,
    Fikit = "fikit", "FIKIT: fill the high-priority job's idle gaps with kernels that fit." => Fikit,
}

impl PolicyKind {
    /// The policy named `name` (as on the command line), if any.
    pub fn from_name(name: &str) -> Option<PolicyKind> {
        PolicyKind::ALL.iter().copied().find(|k| k.as_str() == name)
    }
}

/// Starts every eligible kernel of job `j`.
#[inline]
fn start_all_of(j: usize, state: &[JobRt], cmds: &mut Commands) {
    // Most jobs have nothing eligible at most decisions: no extend then.
    let eligible = &state[j].eligible;
    if !eligible.is_empty() {
        cmds.start.extend(eligible.iter().map(|&op| (j, op)));
    }
}
