//! The control block the processes of one live run share: a small file
//! mapped into every worker (and the parent), holding atomics only.
//!
//! Layout (all little-endian, 64-byte slots so no two jobs share a cache line):
//! a header (magic, job count, the run's start time on the monotonic clock,
//! an abort flag), then one [`JobSlot`] per job. The words a job's kernels
//! write (`done`, `last_done`) are written by the GPU through a host mapping
//! ([`crate::gpu::Gpu::map_host`]) of this same file.
//!
//! The file, its mapping and the header's first words (magic, job count) are
//! [`fikit_gate::shm`]'s, shared with `fikit-run`'s control block: this
//! module is only the layout on top.

use std::path::Path;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64};

use fikit_gate::shm::{Head, MapError, Mapping};

use crate::ReplayError;

/// Most jobs in one live run.
pub const MAX_JOBS: usize = 60;
/// Size of the control file (two pages).
pub const SIZE: usize = 8192;
const MAGIC: u64 = 0x6669_6b69_7431_6c76; // "fikit1lv"

/// The header.
#[repr(C, align(64))]
pub struct Header {
    head: Head,
    /// The run's time zero on the monotonic clock, ns; 0 until the parent
    /// sets it (after every worker is ready).
    pub start_ns: AtomicI64,
    /// Set by any process to make every worker stop.
    pub abort: AtomicU32,
}

/// Job states in [`JobSlot::state`].
pub mod state {
    /// Not ready yet.
    pub const STARTING: u32 = 0;
    /// Initialized, waiting for the start.
    pub const READY: u32 = 1;
    /// Arrived: its host program runs.
    pub const ARRIVED: u32 = 2;
    /// Finished.
    pub const FINISHED: u32 = 3;
    /// Failed.
    pub const FAILED: u32 = 4;
}

/// One job's words.
#[repr(C, align(64))]
pub struct JobSlot {
    /// Kernels launched (raised by the host before each launch).
    pub launched: AtomicU64,
    /// Kernels done (raised by the GPU as each finishes; `done[0]` of the kernel).
    pub done: AtomicU64,
    /// 1 + position of the latest kernel done (raised by the GPU; `done[1]`).
    pub last_done: AtomicU64,
    /// [`state`].
    pub state: AtomicU32,
}

/// A mapped control block (a [`Mapping`] of this layout).
pub struct Control {
    map: Mapping,
    jobs: usize,
}

impl From<MapError> for ReplayError {
    fn from(e: MapError) -> ReplayError {
        match e {
            MapError::Io { path, source } => ReplayError::Io { path, source },
            MapError::Invalid { path, message } => ReplayError::Invalid { path, message },
        }
    }
}

impl Control {
    /// Creates the control file for `jobs` jobs (zeroed) and maps it.
    pub fn create(path: &Path, jobs: usize) -> Result<Control, ReplayError> {
        if jobs == 0 || jobs > MAX_JOBS {
            return Err(ReplayError::Invalid {
                path: path.display().to_string(),
                message: format!("{jobs} jobs; live replay runs 1 to {MAX_JOBS}"),
            });
        }
        let map = Mapping::create(path, SIZE)?;
        map.publish(MAGIC, jobs);
        Ok(Control { map, jobs })
    }

    /// Maps an existing control file.
    pub fn open(path: &Path) -> Result<Control, ReplayError> {
        let map = Mapping::open(path, SIZE)?;
        match map.published_jobs(MAGIC, MAX_JOBS) {
            Some(jobs) => Ok(Control { map, jobs }),
            None => Err(ReplayError::Invalid {
                path: path.display().to_string(),
                message: "not a fikit live-replay control file".into(),
            }),
        }
    }

    /// Number of jobs.
    pub fn jobs(&self) -> usize {
        self.jobs
    }

    /// The header.
    pub fn header(&self) -> &Header {
        // SAFETY: the mapping starts with a Header (64-byte aligned: mmap is
        // page-aligned; atomics only).
        unsafe { self.map.get::<Header>(0) }
    }

    /// Job `j`'s slot.
    pub fn slot(&self, j: usize) -> &JobSlot {
        assert!(j < self.jobs, "job {j} of {}", self.jobs);
        // SAFETY: slots follow the header inside the SIZE-byte mapping
        // (MAX_JOBS + 1 slots of 64 bytes fit in SIZE).
        unsafe { self.map.get::<JobSlot>(64 * (j + 1)) }
    }

    /// The mapping's address and length (for [`crate::gpu::Gpu::map_host`]).
    pub fn raw(&self) -> (*mut std::ffi::c_void, usize) {
        (self.map.base().cast(), SIZE)
    }

    /// Byte offset of job `j`'s `done` word in the mapping.
    pub fn done_offset(j: usize) -> usize {
        64 * (j + 1) + 8
    }
}

const _: () = assert!(64 * (MAX_JOBS + 1) <= SIZE);
const _: () = assert!(std::mem::size_of::<JobSlot>() == 64);
const _: () = assert!(std::mem::size_of::<Header>() == 64);

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn two_mappings_see_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("control");
        let a = Control::create(&p, 3).unwrap();
        let b = Control::open(&p).unwrap();
        assert_eq!(b.jobs(), 3);
        a.slot(2).launched.fetch_add(5, Ordering::SeqCst);
        a.header().start_ns.store(42, Ordering::SeqCst);
        assert_eq!(b.slot(2).launched.load(Ordering::SeqCst), 5);
        assert_eq!(b.header().start_ns.load(Ordering::SeqCst), 42);
        assert_eq!(b.slot(1).launched.load(Ordering::SeqCst), 0);
        // The GPU's `done` word is where done_offset says.
        // SAFETY: inside the mapping; an aligned u64.
        let w = unsafe {
            &*a.raw()
                .0
                .cast::<u8>()
                .add(Control::done_offset(2))
                .cast::<AtomicU64>()
        };
        w.store(7, Ordering::SeqCst);
        assert_eq!(b.slot(2).done.load(Ordering::SeqCst), 7);
    }

    #[test]
    fn rejects_bad_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x");
        std::fs::write(&p, b"nope").unwrap();
        assert!(matches!(
            Control::open(&p),
            Err(ReplayError::Invalid { .. })
        ));
        std::fs::write(&p, vec![0u8; SIZE]).unwrap();
        assert!(matches!(
            Control::open(&p),
            Err(ReplayError::Invalid { .. })
        ));
        assert!(Control::create(&dir.path().join("y"), 0).is_err());
        assert!(Control::create(&dir.path().join("z"), MAX_JOBS + 1).is_err());
    }
}
