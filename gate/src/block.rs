//! The control block of one `fikit-run`: a small file mapped into the parent
//! and into every gated process, holding atomics only.
//!
//! Layout (little-endian; the header and each job's slot take whole cache
//! lines, so the word the GPU writes never shares a line with host words):
//! the [`Header`] (256 bytes), then [`MAX_JOBS`] [`Slot`]s of 320 bytes, then
//! per job [`STAMPS`] sync stamps (8 bytes each), then [`FLIPS`] flip times
//! of the gate's A/B (8 bytes each). Who writes what:
//! - the parent: the header, each slot's `state`, `priority`, `table` facts;
//! - the job's gated process: `launched`, `last_gap_ns`, the stamps and its counters;
//! - the GPU: `done`, through a stream memory write queued behind a marked launch;
//! - any gate that looks: `seen_done` and `seen_at_ns` (when `done` was first seen to change).
//!
//! The file, its mapping and the header's first words (magic, job count) are
//! [`crate::shm`]'s, shared with live replay's control block; this byte layout
//! and its magic stay fixed, as collectors of other builds read it.

use std::path::Path;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};

use crate::shm::{Head, MapError, Mapping};

/// Most jobs in one run.
pub const MAX_JOBS: usize = 8;
/// Sync stamps kept per job (later synchronizations are counted, not stamped).
pub const STAMPS: usize = 1 << 16;
const HEADER: usize = 256;
const SLOT: usize = 320;
const STAMPS_AT: usize = GPU_REGION;
/// The header and the slots: one page.
const GPU_REGION: usize = 4096;
/// The collector times every this many launches of a thread (the launch
/// call, the gate's own work): a clock read is a good part of the gate's
/// cost per launch, so the common launch reads the clock once.
pub const TIMED_EVERY: u32 = 8;
/// Flip times kept for the gate's A/B ([`Block::flips`]).
pub const FLIPS: usize = 4096;
const FLIPS_AT: usize = STAMPS_AT + MAX_JOBS * STAMPS * 8;
const BUSY_AT: usize = FLIPS_AT + FLIPS * 8;
/// Size of the control file.
pub const SIZE: usize = BUSY_AT + MAX_JOBS * STAMPS * 8;
// "fikitru4": the fourth layout (each slot's hold); a gate of another
// layout refuses the file.
const MAGIC: u64 = 0x6669_6b69_7472_7534;

/// The policy a run's gates apply, as stored in [`Header::policy`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum GatePolicy {
    /// No gating: launches are only counted and stamped (exclusive, time slicing, MPS).
    Open = 0,
    /// Preemptive priority at kernel granularity ([`crate::rules::preemptive`]).
    Preemptive = 1,
    /// FIKIT ([`crate::rules::fikit`]).
    Fikit = 2,
}

impl GatePolicy {
    fn from_u32(v: u32) -> Option<GatePolicy> {
        match v {
            0 => Some(GatePolicy::Open),
            1 => Some(GatePolicy::Preemptive),
            2 => Some(GatePolicy::Fikit),
            _ => None,
        }
    }
}

/// The header.
#[repr(C, align(64))]
pub struct Header {
    head: Head,
    policy: AtomicU32,
    /// Set by the parent to make every gate open at once (the run is stopping).
    pub abort: AtomicU32,
    /// A gate that sees no job's counters move for this long lets its launch
    /// go and says so, ms.
    pub timeout_ms: AtomicU64,
    /// The shortest predicted kernel of any job that may fill a gap, ns
    /// (`i64::MAX`: none): under FIKIT the top job marks only launches
    /// followed by a predicted gap at least this long, as no fill fits a shorter one.
    pub min_fill_ns: AtomicI64,
    /// The fill in progress under FIKIT: `(job + 1) << 32 | seq` of the
    /// filler's launch, 0 for none. Free once that launch is done or its job
    /// is no longer active.
    pub fill: AtomicU64,
    /// Set by the parent to line up the jobs' regions: each job's first
    /// kernel launch waits until every job has reached its first (or
    /// exited), so that no job's timed work runs while a partner is still
    /// loading its model. 0: off.
    pub align: AtomicU32,
    /// The gate's A/B in one process ([`crate::ab`]), set by the parent for
    /// a job alone: its launch callbacks go off and on in phases this long,
    /// ms. 0: off (the gate stays on).
    pub ab_period_ms: AtomicU64,
    /// Under the A/B, set by the parent: in on phases the launch callback
    /// only counts the launch (CUPTI's dispatch to a near-empty handler,
    /// the floor of any CUPTI-callback gate), not the gate. 0: the gate.
    pub ab_floor: AtomicU32,
}

/// Values of [`Slot::launch_path`].
pub mod launch_path {
    /// CUPTI's launch callbacks.
    pub const CUPTI: u32 = 1;
    /// The preloaded shim's wrappers.
    pub const SHIM: u32 = 2;
}

/// Job states in [`Slot::state`], set by the parent.
pub mod state {
    /// Not started yet.
    pub const WAITING: u32 = 0;
    /// Its command runs.
    pub const RUNNING: u32 = 1;
    /// Its command exited (however it ended): it holds nothing.
    pub const EXITED: u32 = 2;
}

/// One job's words.
#[repr(C, align(64))]
pub struct Slot {
    /// Written by the GPU: the sequence number of the latest marked launch done.
    pub done: AtomicU32,
    _gpu_line: [u32; 15],
    /// Gated launches so far (its sequence number), raised before each one goes.
    pub launched: AtomicU64,
    /// The predicted idle gap after the latest launch, ns (FIKIT's top job).
    pub last_gap_ns: AtomicI64,
    /// When the first gated launch was made (monotonic clock, ns); 0: none yet.
    pub first_launch_ns: AtomicI64,
    /// When the gate let the latest launch go, ns.
    pub last_launch_ns: AtomicI64,
    /// When the latest blocking synchronization returned, ns.
    pub last_sync_ns: AtomicI64,
    /// Sync stamps written: blocking synchronizations that ended kernel
    /// work, i.e. with a launch since the previous stamp (a program's
    /// set-up, a synchronous copy per model parameter, stamps nothing), and
    /// every one in an off phase of the A/B ([`crate::ab`]).
    pub syncs: AtomicU64,
    /// `launched` when the latest stamp was written.
    pub stamped_launched: AtomicU64,
    /// The process that holds the slot (the job's first CUDA process); 0: none.
    pub pid: AtomicU32,
    _host_pad: u32,
    /// The last `done` value a gate saw change, and when it first saw it.
    pub seen_done: AtomicU64,
    /// See `seen_done`.
    pub seen_at_ns: AtomicI64,
    /// [`state`], set by the parent.
    pub state: AtomicU32,
    /// Priority, 0 highest, set by the parent.
    pub priority: AtomicU32,
    /// Time spent waiting at the gate, ns.
    pub wait_ns: AtomicU64,
    /// Launches that waited.
    pub waits: AtomicU64,
    /// Launches let go by the timeout.
    pub timeouts: AtomicU64,
    /// Launches of kernels the job's profile does not know.
    pub unknown: AtomicU64,
    /// Launches that went as fills into another job's idle gap.
    pub fills: AtomicU64,
    /// Launches the gate marked for completion (a stream write queued behind).
    pub marked: AtomicU64,
    /// When its first launch reached the gate, ns; 0: not yet (see
    /// [`Header::align`]).
    pub arrived_ns: AtomicI64,
    /// While the job waits at the gate under FIKIT: the predicted duration
    /// of the kernel it waits to launch, ns; 0 when it does not wait. The
    /// top job marks a launch only when a waiting job's kernel fits the gap
    /// after it.
    pub waiting_ns: AtomicI64,
    /// When it began to wait at the gate under FIKIT, ns (written before
    /// `waiting_ns`): its place in line among jobs of its priority.
    pub waiting_since_ns: AtomicI64,
    /// Under FIKIT, written by the job's own gate from its profile
    /// ([`crate::table::Table::away_after_ns`]): once the job has launched
    /// nothing for longer than this, the other gates count it as away (not
    /// the top job) until its next launch. 0: never away.
    pub away_after_ns: AtomicI64,
    /// Under the A/B ([`Header::ab_period_ms`]), written by the job's gate:
    /// when its first phase (off) began, ns; 0: not yet.
    pub ab_start_ns: AtomicI64,
    /// Time its timed launch calls (every [`TIMED_EVERY`]-th) took from the
    /// gate letting them go to their return (the driver's host work and
    /// CUPTI's), ns: with `launch_calls`, the host's speed in the round.
    pub launch_call_ns: AtomicU64,
    /// Launch calls timed in `launch_call_ns`.
    pub launch_calls: AtomicU64,
    /// The gate's own host time at launch entry, ns, over `gate_calls`
    /// timed launches (every [`TIMED_EVERY`]-th): from its callback's start
    /// to letting the launch go, less
    /// any wait (the kernel's identity and key, the stream's capture check,
    /// the rules, the block's atomics; not CUPTI's dispatch to it).
    pub gate_ns: AtomicU64,
    /// Launches timed in `gate_ns`.
    pub gate_calls: AtomicU64,
    /// Which way the gate sees launches ([`launch_path`]), written by the
    /// job's gate; 0 not yet.
    pub launch_path: AtomicU32,
    /// Set by the parent: 1 for a job that serves requests, which under
    /// FIKIT is away (not the top job) between them: once a blocking
    /// synchronization returned after its latest launch, as the simulator's
    /// FIKIT leaves out a server waiting for its next request.
    pub serving: AtomicU32,
    /// Through the shim: lookups of a launch entry point it could not wrap
    /// (their launches went ungated), written at the process's exit.
    pub shim_unwrapped: AtomicU64,
    /// When the first launch since the latest stamp was made, ns: where the
    /// busy part of the iteration that the next stamp ends began.
    pub busy_from_ns: AtomicI64,
    /// Under FIKIT, written by the job's own gate from its profile
    /// ([`crate::table::Table::hold_ns`]): while the job is away, a job of
    /// lower priority keeps at most this much predicted kernel time in
    /// flight ([`fikit_rules::may_queue`]). 0: no bound.
    pub hold_ns: AtomicI64,
    /// Launches that waited because a job above was away and this job's
    /// queue on the GPU was at that job's hold.
    pub held: AtomicU64,
}

pub use crate::shm::ControlFile;

/// A mapped control block (a [`Mapping`] of this layout).
#[derive(Debug)]
pub struct Block {
    map: Mapping,
    jobs: usize,
}

/// A control file that cannot be created, opened or mapped.
#[derive(Debug)]
pub struct BlockError {
    /// The file.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for BlockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for BlockError {}

fn err(path: &Path, message: impl Into<String>) -> BlockError {
    BlockError {
        path: path.display().to_string(),
        message: message.into(),
    }
}

impl From<MapError> for BlockError {
    fn from(e: MapError) -> BlockError {
        BlockError {
            path: e.path().to_string(),
            message: e.message(),
        }
    }
}

impl Block {
    /// Creates the control file for `jobs` jobs under `policy` (zeroed; no
    /// fill possible until [`Header::min_fill_ns`] is set) and maps it.
    pub fn create(path: &Path, jobs: usize, policy: GatePolicy) -> Result<Block, BlockError> {
        if jobs == 0 || jobs > MAX_JOBS {
            return Err(err(path, format!("{jobs} jobs; a run has 1 to {MAX_JOBS}")));
        }
        let b = Block {
            map: Mapping::create(path, SIZE)?,
            jobs,
        };
        let h = b.header();
        h.policy.store(policy as u32, Ordering::SeqCst);
        h.min_fill_ns.store(i64::MAX, Ordering::SeqCst);
        h.timeout_ms.store(10_000, Ordering::SeqCst);
        b.map.publish(MAGIC, jobs);
        Ok(b)
    }

    /// Maps an existing control file.
    pub fn open(path: &Path) -> Result<Block, BlockError> {
        let b = Block {
            map: Mapping::open(path, SIZE)?,
            jobs: 0,
        };
        let policy = b.header().policy.load(Ordering::SeqCst);
        match b.map.published_jobs(MAGIC, MAX_JOBS) {
            Some(jobs) if GatePolicy::from_u32(policy).is_some() => Ok(Block { jobs, ..b }),
            _ => Err(err(path, "not a fikit-run control file")),
        }
    }

    /// Number of jobs.
    pub fn jobs(&self) -> usize {
        self.jobs
    }

    /// The policy the gates apply.
    pub fn policy(&self) -> GatePolicy {
        GatePolicy::from_u32(self.header().policy.load(Ordering::Relaxed))
            .unwrap_or(GatePolicy::Open)
    }

    /// The header.
    pub fn header(&self) -> &Header {
        // SAFETY: the mapping starts with a Header (page-aligned, so 64-byte
        // aligned; atomics only).
        unsafe { self.map.get::<Header>(0) }
    }

    /// Job `j`'s slot.
    ///
    /// # Panics
    /// When `j` is not below [`Block::jobs`].
    pub fn slot(&self, j: usize) -> &Slot {
        assert!(j < self.jobs, "job {j} of {}", self.jobs);
        // SAFETY: MAX_JOBS slots of SLOT bytes (a multiple of 64) follow the
        // header inside the mapping; atomics only.
        unsafe { self.map.get::<Slot>(HEADER + SLOT * j) }
    }

    /// Job `j`'s sync stamps (the first `min(syncs, STAMPS)` are written).
    pub fn stamps(&self, j: usize) -> &[AtomicI64] {
        self.stamps_of(j)
    }

    /// Under the gate's A/B ([`Header::ab_period_ms`]), written by the job's
    /// gate: entry `k`, when phase `k`'s flip was done (every launch
    /// callback set; monotonic ns); 0 where it was not (yet). A flip can
    /// take long (CUPTI's enable call has been seen to take seconds beside
    /// a program launching without pause), so a phase counts from its flip
    /// being done, not from its schedule.
    pub fn flips(&self) -> &[AtomicI64] {
        // SAFETY: FLIPS i64 follow the stamps inside the mapping; 8-byte aligned.
        unsafe { self.map.slice::<AtomicI64>(FLIPS_AT, FLIPS) }
    }

    /// Job `j`'s busy starts: entry `n`, when the first launch after stamp
    /// `n - 1` (after the job's start for `n` = 0) was made, written with
    /// stamp `n`. A stamp minus its busy start is the iteration's busy
    /// part: its first launch to its end, without the host's idle before
    /// it (a server waiting for its next request).
    pub fn busy_starts(&self, j: usize) -> &[AtomicI64] {
        assert!(j < self.jobs, "job {j} of {}", self.jobs);
        // SAFETY: MAX_JOBS arrays of STAMPS i64 follow the flips inside the mapping; 8-byte aligned.
        unsafe {
            self.map
                .slice::<AtomicI64>(BUSY_AT + j * STAMPS * 8, STAMPS)
        }
    }

    fn stamps_of(&self, j: usize) -> &[AtomicI64] {
        assert!(j < self.jobs, "job {j} of {}", self.jobs);
        // SAFETY: MAX_JOBS arrays of STAMPS i64 follow the slots inside the mapping; 8-byte aligned.
        unsafe {
            self.map
                .slice::<AtomicI64>(STAMPS_AT + j * STAMPS * 8, STAMPS)
        }
    }

    /// The address and length of the mapping's first page, which holds the
    /// header and every slot: what a process registers with the GPU
    /// (page-aligned) so that stream writes reach `done`.
    pub fn gpu_region(&self) -> (*mut std::ffi::c_void, usize) {
        (self.map.base().cast(), GPU_REGION)
    }

    /// Byte offset of job `j`'s `done` word from [`Block::gpu_region`]'s address.
    pub fn done_offset(j: usize) -> usize {
        HEADER + SLOT * j
    }
}

/// What job `j`'s slot says of its run, read once it has exited
/// ([`Block::measured`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Measured {
    /// Its first kernel launch, monotonic ns; `None` when it launched none.
    pub first_launch_ns: Option<i64>,
    /// The later of its last launch and its last blocking synchronization,
    /// ns; `None` when it launched nothing.
    pub end_ns: Option<i64>,
    /// Its iterations ([`iterations`]), ns.
    pub iterations_ns: Vec<i64>,
    /// The busy part of the same iterations ([`busy`]), ns.
    pub busy_ns: Vec<i64>,
    /// Kernel launches it made.
    pub launches: u64,
}

impl Measured {
    /// From its first kernel launch to its end, ns.
    pub fn region_ns(&self) -> Option<i64> {
        Some(self.end_ns? - self.first_launch_ns?)
    }
}

impl Block {
    /// Job `j`'s region, iterations and launches, as its gate wrote them.
    pub fn measured(&self, j: usize) -> Measured {
        let s = self.slot(j);
        let first = s.first_launch_ns.load(Ordering::SeqCst);
        let n = (s.syncs.load(Ordering::SeqCst) as usize).min(STAMPS);
        let stamps: Vec<i64> = self.stamps(j)[..n]
            .iter()
            .map(|w| w.load(Ordering::SeqCst))
            .collect();
        let starts: Vec<i64> = self.busy_starts(j)[..n]
            .iter()
            .map(|w| w.load(Ordering::SeqCst))
            .collect();
        Measured {
            first_launch_ns: (first != 0).then_some(first),
            end_ns: (first != 0).then(|| {
                s.last_launch_ns
                    .load(Ordering::SeqCst)
                    .max(s.last_sync_ns.load(Ordering::SeqCst))
            }),
            iterations_ns: iterations(first, &stamps),
            busy_ns: busy(first, &stamps, &starts),
            launches: s.launched.load(Ordering::SeqCst),
        }
    }
}

/// Iterations from sync stamps: the spans between consecutive stamps after
/// the first kernel launch (`first_launch`, 0: none), the first span
/// (setup) left out: of the simulator's iterations of the same program, the
/// first two.
pub fn iterations(first_launch: i64, stamps: &[i64]) -> Vec<i64> {
    let after: Vec<i64> = stamps
        .iter()
        .copied()
        .filter(|&t| first_launch != 0 && t >= first_launch)
        .collect();
    after.windows(2).skip(1).map(|w| w[1] - w[0]).collect()
}

/// The busy parts of the iterations [`iterations`] gives, in its order:
/// each stamp after the first two after the first launch, minus its busy
/// start (`starts`, entry for entry with `stamps`).
pub fn busy(first_launch: i64, stamps: &[i64], starts: &[i64]) -> Vec<i64> {
    stamps
        .iter()
        .zip(starts)
        .filter(|&(&t, _)| first_launch != 0 && t >= first_launch)
        .skip(2)
        .map(|(&t, &s)| t - s)
        .collect()
}

const _: () = assert!(std::mem::size_of::<Header>() <= HEADER);
const _: () = assert!(std::mem::size_of::<Slot>() <= SLOT);
const _: () = assert!(std::mem::offset_of!(Slot, launched) == 64);
// fikit-run's byte layout is read by collectors of other builds: the header's
// words stay where they were (magic 0, jobs 8, policy 16, abort 20).
const _: () = assert!(std::mem::offset_of!(Header, policy) == 16);
const _: () = assert!(std::mem::offset_of!(Header, abort) == 20);
const _: () = assert!(std::mem::offset_of!(Header, timeout_ms) == 24);
const _: () = assert!(SLOT % 64 == 0 && HEADER + MAX_JOBS * SLOT <= GPU_REGION);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_mappings_see_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("control");
        let a = Block::create(&p, 3, GatePolicy::Fikit).unwrap();
        let b = Block::open(&p).unwrap();
        assert_eq!((b.jobs(), b.policy()), (3, GatePolicy::Fikit));
        assert_eq!(b.header().min_fill_ns.load(Ordering::SeqCst), i64::MAX);
        a.slot(2).launched.fetch_add(5, Ordering::SeqCst);
        a.stamps(1)[7].store(42, Ordering::SeqCst);
        assert_eq!(b.slot(2).launched.load(Ordering::SeqCst), 5);
        assert_eq!(b.stamps(1)[7].load(Ordering::SeqCst), 42);
        assert_eq!(b.slot(1).launched.load(Ordering::SeqCst), 0);
        // The GPU's `done` word is where done_offset says.
        // SAFETY: inside the mapping; an aligned u32.
        let w = unsafe {
            &*a.gpu_region()
                .0
                .cast::<u8>()
                .add(Block::done_offset(2))
                .cast::<AtomicU32>()
        };
        w.store(7, Ordering::SeqCst);
        assert_eq!(b.slot(2).done.load(Ordering::SeqCst), 7);
    }

    #[test]
    fn iterations_skip_setup_and_syncs_before_the_first_launch() {
        // Syncs at 5 (before any launch), 100, 150, 170, 230.
        assert_eq!(iterations(50, &[5, 100, 150, 170, 230]), vec![20, 60]);
        assert!(iterations(0, &[1, 2, 3]).is_empty());
        // The same iterations' busy parts: their first launches at 160 and
        // 200 (the idle before them, 150-160 and 170-200, left out).
        let starts = [0, 50, 120, 160, 200];
        assert_eq!(busy(50, &[5, 100, 150, 170, 230], &starts), vec![10, 30]);
        assert!(busy(0, &[1, 2, 3], &[0, 0, 0]).is_empty());
    }

    #[test]
    fn a_slot_measures_its_region_from_the_first_launch() {
        let dir = tempfile::tempdir().unwrap();
        let b = Block::create(&dir.path().join("control"), 1, GatePolicy::Open).unwrap();
        assert_eq!(b.measured(0), Measured::default());
        let s = b.slot(0);
        s.first_launch_ns.store(50, Ordering::SeqCst);
        s.last_launch_ns.store(200, Ordering::SeqCst);
        s.last_sync_ns.store(230, Ordering::SeqCst);
        s.launched.store(4, Ordering::SeqCst);
        for (i, t) in [5, 100, 150, 170, 230].into_iter().enumerate() {
            b.stamps(0)[i].store(t, Ordering::SeqCst);
        }
        s.syncs.store(5, Ordering::SeqCst);
        let m = b.measured(0);
        assert_eq!(
            (m.region_ns(), m.iterations_ns, m.launches),
            (Some(180), vec![20, 60], 4)
        );
    }

    #[test]
    fn rejects_bad_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x");
        std::fs::write(&p, b"nope").unwrap();
        assert!(Block::open(&p).unwrap_err().message.contains("bytes"));
        std::fs::write(&p, vec![0u8; SIZE]).unwrap();
        assert!(
            Block::open(&p)
                .unwrap_err()
                .message
                .contains("not a fikit-run")
        );
        assert!(Block::create(&dir.path().join("y"), 0, GatePolicy::Open).is_err());
        assert!(Block::create(&dir.path().join("z"), MAX_JOBS + 1, GatePolicy::Open).is_err());
        assert!(
            Block::create(&p, 1, GatePolicy::Open).is_err(),
            "never an existing file"
        );
    }
}
