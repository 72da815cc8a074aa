//! `fikit-gate`: when a job may hand its next kernel to the GPU under
//! preemptive priority or FIKIT.
//!
//! - [`rules`]: the decision rules, pure functions shared by live replay's
//!   workers and the gate in real programs;
//! - [`shm`]: the shared-memory control file under both control blocks
//!   (`fikit-run`'s and live replay's): where it lives, creating, opening,
//!   checking and mapping it, the views of its atomics, its header's first words;
//! - [`block`]: the control block a `fikit-run` shares with the gated
//!   processes (its layout on a [`shm::Mapping`]);
//! - [`table`]: a job's predictions from its profile (kernel durations, idle
//!   gaps), written by `fikit-run`, read by the collector;
//! - [`ab`]: the gate off and on in alternate phases of one process, to
//!   measure its own cost;
//! - [`gate`]: the gate itself, waiting where the rules say wait; the
//!   collector calls it at each launch and queues the completion marker it
//!   asks for.
//!
//! Light by design (only `libc`): the collector links it into the gated program.

pub mod ab;
pub mod block;
pub mod gate;
pub mod rules;
pub mod shm;
pub mod table;

pub use block::{Block, GatePolicy};
pub use gate::{Clock, Gate, Launch, RealClock, now_ns};
pub use table::{ProfiledOp, Table};
