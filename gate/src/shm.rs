//! The shared-memory control file, whatever its layout: a small file mapped
//! shared into a parent and its child processes, holding atomics only.
//!
//! Two layouts are built on it: `fikit-run`'s [`crate::block::Block`] (the
//! parent and every gated process, through the injected collector) and live
//! replay's control block (`fikit_replay::control`: the parent and its worker
//! processes). This module owns what they have in common:
//! - where the file lives ([`ControlFile`]: `/dev/shm`, so that the GPU's
//!   stream writes can reach a host registration of it);
//! - creating it zeroed at its layout's size, or opening it and checking the
//!   size ([`Mapping::create`], [`Mapping::open`]);
//! - mapping it shared and read-write, and the views of atomics at byte
//!   offsets inside it ([`Mapping::get`], [`Mapping::slice`]);
//! - the header's first words ([`Head`]): the layout's magic number and the
//!   job count, published last by the creator so that an opener never sees a
//!   half-written header ([`Mapping::publish`], [`Mapping::published_jobs`]).
//!
//! A mapping is never unmapped: a GPU may write to its pages (through a
//! registration of the host memory) until the process exits, so unmapping
//! while a stream write may still land would be unsound. The few pages stay
//! mapped for the life of the process.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Where a control file lives that the GPU's stream writes must reach, and
/// its removal: in shared memory (`/dev/shm`) where there is one, because
/// the driver page-locks a shared mapping there (`cuMemHostRegister`) but
/// not of a file on disk (CUDA_ERROR_INVALID_VALUE); else at the fallback
/// path. A file left at that path is removed when this is made, and the
/// file again when this is dropped, on every way out.
#[derive(Debug)]
pub struct ControlFile(PathBuf);

impl ControlFile {
    /// `/dev/shm/<program>-<this process's id>-<tag>`, or `fallback`
    /// without `/dev/shm`.
    pub fn new(program: &str, tag: &str, fallback: &Path) -> ControlFile {
        let shm = Path::new("/dev/shm");
        let path = if shm.is_dir() {
            shm.join(format!("{program}-{}-{tag}", std::process::id()))
        } else {
            fallback.to_path_buf()
        };
        let _ = std::fs::remove_file(&path);
        ControlFile(path)
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ControlFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The words every layout's header starts with, at byte 0: the layout's
/// magic number, then the number of jobs. A layout's header struct holds
/// this as its first field.
#[repr(C)]
pub struct Head {
    magic: AtomicU64,
    jobs: AtomicU64,
}

/// A control file that cannot be created, opened or mapped, or is not of
/// the expected layout.
#[derive(Debug)]
pub enum MapError {
    /// The file could not be created, opened, sized or mapped.
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a control file of the expected layout.
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

impl MapError {
    /// An [`MapError::Invalid`] for `path`.
    pub fn invalid(path: &Path, message: impl Into<String>) -> MapError {
        MapError::Invalid {
            path: path.display().to_string(),
            message: message.into(),
        }
    }

    fn io(path: &Path) -> impl Fn(std::io::Error) -> MapError + '_ {
        move |source| MapError::Io {
            path: path.display().to_string(),
            source,
        }
    }

    /// The file the error is about.
    pub fn path(&self) -> &str {
        match self {
            MapError::Io { path, .. } | MapError::Invalid { path, .. } => path,
        }
    }

    /// What is wrong, without the path.
    pub fn message(&self) -> String {
        match self {
            MapError::Io { source, .. } => source.to_string(),
            MapError::Invalid { message, .. } => message.clone(),
        }
    }
}

impl std::fmt::Display for MapError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path(), self.message())
    }
}

impl std::error::Error for MapError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MapError::Io { source, .. } => Some(source),
            MapError::Invalid { .. } => None,
        }
    }
}

/// A control file mapped shared and read-write, for the life of the process.
#[derive(Debug)]
pub struct Mapping {
    base: *mut u8,
    len: usize,
}

// SAFETY: the mapping is only accessed through atomics (the views' contract)
// and is never unmapped, so any thread may hold and use it.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Creates the file (never over an existing one) with `len` zero bytes
    /// and maps it. The caller fills its layout's header, then
    /// [`Mapping::publish`]es it.
    pub fn create(path: &Path, len: usize) -> Result<Mapping, MapError> {
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(MapError::io(path))?;
        f.set_len(len as u64).map_err(MapError::io(path))?;
        Mapping::map(&f, path, len)
    }

    /// Maps an existing file of exactly `len` bytes. The caller checks the
    /// header ([`Mapping::published_jobs`]).
    pub fn open(path: &Path, len: usize) -> Result<Mapping, MapError> {
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(MapError::io(path))?;
        let n = f.metadata().map(|m| m.len()).unwrap_or(0);
        if n != len as u64 {
            return Err(MapError::invalid(
                path,
                format!("{n} bytes; a control file has {len}"),
            ));
        }
        Mapping::map(&f, path, len)
    }

    fn map(f: &std::fs::File, path: &Path, len: usize) -> Result<Mapping, MapError> {
        use std::os::fd::AsRawFd;
        // SAFETY: a shared read-write mapping of an open file that is `len`
        // bytes long (sized by `create`, checked by `open`); it is never
        // unmapped, and outlives the file descriptor by design.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(MapError::io(path)(std::io::Error::last_os_error()));
        }
        Ok(Mapping {
            base: p.cast(),
            len,
        })
    }

    /// The header's common words.
    pub fn head(&self) -> &Head {
        // SAFETY: a Head (two atomics) at offset 0: page-aligned, and every
        // layout is longer than 16 bytes.
        unsafe { self.get::<Head>(0) }
    }

    /// Writes the job count, then the magic number: after this an opener
    /// accepts the file. Call once the layout's other header words are set.
    pub fn publish(&self, magic: u64, jobs: usize) {
        let h = self.head();
        h.jobs.store(jobs as u64, Ordering::SeqCst);
        h.magic.store(magic, Ordering::SeqCst);
    }

    /// The published job count, when the header has `magic` and a count of
    /// 1 to `max_jobs`; else `None` (not a file of this layout, or not yet
    /// published).
    pub fn published_jobs(&self, magic: u64, max_jobs: usize) -> Option<usize> {
        let h = self.head();
        let jobs = h.jobs.load(Ordering::SeqCst) as usize;
        (h.magic.load(Ordering::SeqCst) == magic && (1..=max_jobs).contains(&jobs)).then_some(jobs)
    }

    /// The mapping's address (page-aligned).
    pub fn base(&self) -> *mut u8 {
        self.base
    }

    /// The mapping's length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mapping is empty (never, for a control file).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A view of the `T` at byte `offset`.
    ///
    /// # Safety
    /// `T` is made of atomics only (so that any bytes are a valid `T`, and
    /// other processes and the GPU may write them at any time); `offset` is
    /// a multiple of `T`'s alignment (at most 4096: the base is page-aligned);
    /// and `offset + size_of::<T>()` is at most [`Mapping::len`].
    pub unsafe fn get<T>(&self, offset: usize) -> &T {
        debug_assert!(offset + std::mem::size_of::<T>() <= self.len);
        debug_assert!(offset % std::mem::align_of::<T>() == 0);
        // SAFETY: inside the mapping and aligned (the caller's contract);
        // atomics only, and the mapping lives as long as `self`.
        unsafe { &*self.base.add(offset).cast::<T>() }
    }

    /// A view of the `n` `T`s from byte `offset`.
    ///
    /// # Safety
    /// As [`Mapping::get`], for `n` consecutive `T`s.
    pub unsafe fn slice<T>(&self, offset: usize, n: usize) -> &[T] {
        debug_assert!(offset + n * std::mem::size_of::<T>() <= self.len);
        debug_assert!(offset % std::mem::align_of::<T>() == 0);
        // SAFETY: as in `get`, for `n` elements.
        unsafe { std::slice::from_raw_parts(self.base.add(offset).cast::<T>(), n) }
    }
}

const _: () = assert!(std::mem::size_of::<Head>() == 16);

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    const MAGIC: u64 = 0x7465_7374_7465_7374;

    #[test]
    fn two_handles_see_each_others_writes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("control");
        let a = Mapping::create(&p, 4096).unwrap();
        let b = Mapping::open(&p, 4096).unwrap();
        assert_eq!(b.published_jobs(MAGIC, 4), None, "not published yet");
        a.publish(MAGIC, 3);
        assert_eq!(b.published_jobs(MAGIC, 4), Some(3));
        assert_eq!(b.published_jobs(MAGIC, 2), None, "too many jobs");
        assert_eq!(b.published_jobs(MAGIC + 1, 4), None, "another layout");
        // SAFETY: an aligned u32 and 8 i64 inside the 4096 bytes.
        let (wa, wb, sa, sb) = unsafe {
            (
                a.get::<AtomicU32>(100),
                b.get::<AtomicU32>(100),
                a.slice::<AtomicU64>(512, 8),
                b.slice::<AtomicU64>(512, 8),
            )
        };
        wa.store(7, Ordering::SeqCst);
        sb[5].store(9, Ordering::SeqCst);
        assert_eq!(wb.load(Ordering::SeqCst), 7);
        assert_eq!(sa[5].load(Ordering::SeqCst), 9);
        assert_eq!(sa[4].load(Ordering::SeqCst), 0);
        assert_eq!((a.len(), b.len()), (4096, 4096));
    }

    #[test]
    fn open_checks_the_size_and_create_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x");
        std::fs::write(&p, b"nope").unwrap();
        let e = Mapping::open(&p, 4096).unwrap_err();
        assert!(matches!(e, MapError::Invalid { .. }));
        assert_eq!(e.message(), "4 bytes; a control file has 4096");
        assert!(matches!(
            Mapping::create(&p, 4096),
            Err(MapError::Io { .. })
        ));
        assert!(matches!(
            Mapping::open(&dir.path().join("missing"), 4096),
            Err(MapError::Io { .. })
        ));
    }
}
