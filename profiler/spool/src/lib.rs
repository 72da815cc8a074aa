//! The fikit spool: an append-only file of length-prefixed, checksummed records.
//!
//! The collector injected into a CUDA program streams what CUPTI delivers into
//! one spool per process and appends to it at least every 100 ms, so a program
//! killed with SIGKILL leaves a spool whose tail may be cut in the middle of a
//! record. [`parse_spool`] reads every whole record and reports the cut tail
//! instead of failing; an [`Record::End`] record marks a capture that ended cleanly.
//!
//! # Layout
//! A spool starts with the 8 bytes [`MAGIC`] and the format version as a
//! little-endian `u32` ([`SPOOL_VERSION`]). Each record is then framed as
//!
//! | field | type |
//! |---|---|
//! | payload length `n` | `u32` LE |
//! | tag | `u8` |
//! | payload | `n` bytes |
//! | checksum | `u32` LE, FNV-1a 32 of tag and payload |
//!
//! Integers in payloads are little-endian; strings are a `u32` byte length and
//! UTF-8 bytes. Records with an unknown tag are skipped and counted, so older
//! readers read newer spools.
//!
//! This crate depends on nothing but `std`: it is linked into the collector,
//! which runs inside the profiled program.

use std::fmt;
use std::io::{self, Write};
use std::path::Path;

mod record;
pub use record::*;

/// The 8 bytes every spool starts with.
pub const MAGIC: [u8; 8] = *b"FIKITSPL";
/// The spool format version written by this crate.
pub const SPOOL_VERSION: u32 = 1;
/// How a collector's note begins when it recorded nothing because start-up
/// stopped (a CUPTI call failed, or a libcupti it cannot read safely): the
/// program ran untraced, so its GPU work is unknown, not absent.
pub const STOPPED_PREFIX: &str = "recording stopped at start-up: ";
/// Length of the file header: magic and version.
pub const HEADER_LEN: usize = 12;
/// Bytes framing each record: length, tag and checksum.
pub const FRAME_OVERHEAD: usize = 9;
/// The largest payload a reader accepts; longer lengths are taken as a corrupt tail.
pub const MAX_PAYLOAD: u32 = 64 << 20;

/// FNV-1a 32-bit hash, used as the record checksum.
fn fnv1a(tag: u8, payload: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in std::iter::once(&tag).chain(payload) {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// The bytes a spool starts with.
pub fn header_bytes() -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(&MAGIC);
    h[8..].copy_from_slice(&SPOOL_VERSION.to_le_bytes());
    h
}

/// Records encoded and framed in memory, waiting to be written.
///
/// The collector fills one from CUPTI's buffer callbacks and hands its bytes
/// to a [`SpoolWriter`] from its flushing thread.
#[derive(Debug, Default, Clone)]
pub struct SpoolBuffer {
    bytes: Vec<u8>,
    records: usize,
}

impl SpoolBuffer {
    /// An empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Encodes and frames one record at the end of the buffer.
    pub fn push(&mut self, record: &Record) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(&[0; 4]);
        self.bytes.push(record.tag());
        record.encode_payload(&mut self.bytes);
        let payload = &self.bytes[start + 5..];
        let len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
        let sum = fnv1a(record.tag(), payload);
        self.bytes[start..start + 4].copy_from_slice(&len.to_le_bytes());
        self.bytes.extend_from_slice(&sum.to_le_bytes());
        self.records += 1;
    }

    /// The framed bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Number of records in the buffer.
    pub fn len(&self) -> usize {
        self.records
    }

    /// True when no record is waiting.
    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// Empties the buffer, keeping its allocation.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.records = 0;
    }

    /// Moves the contents out, leaving an empty buffer.
    pub fn take(&mut self) -> SpoolBuffer {
        std::mem::take(self)
    }
}

/// Writes a spool: the header once, then framed records.
#[derive(Debug)]
pub struct SpoolWriter<W: Write> {
    out: W,
}

impl<W: Write> SpoolWriter<W> {
    /// Writes the header and returns the writer.
    pub fn new(mut out: W) -> io::Result<Self> {
        out.write_all(&header_bytes())?;
        out.flush()?;
        Ok(Self { out })
    }

    /// Appends the buffer's records (whole records in one `write_all`) and flushes the sink.
    pub fn write_buffer(&mut self, buf: &SpoolBuffer) -> io::Result<()> {
        if !buf.is_empty() {
            self.out.write_all(buf.as_bytes())?;
        }
        self.out.flush()
    }

    /// Encodes and appends one record, then flushes.
    pub fn write_record(&mut self, record: &Record) -> io::Result<()> {
        let mut b = SpoolBuffer::new();
        b.push(record);
        self.write_buffer(&b)
    }

    /// The sink.
    pub fn get_ref(&self) -> &W {
        &self.out
    }

    /// Returns the sink.
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// How a spool's bytes ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// Every byte belonged to a whole, valid record.
    Clean,
    /// The bytes from `offset` on (`bytes` of them) were not a whole valid
    /// record: the writer was killed mid-write, or the tail is corrupt.
    Truncated {
        /// File offset of the first byte not read.
        offset: u64,
        /// Bytes left unread.
        bytes: u64,
    },
}

/// Everything read from a spool.
#[derive(Debug, Clone, PartialEq)]
pub struct Spool {
    /// The records, in file order.
    pub records: Vec<Record>,
    /// Records with a tag this reader does not know; they were skipped.
    pub unknown_records: u64,
    /// How the bytes ended.
    pub tail: Tail,
}

impl Spool {
    /// True when the capture ended with an [`Record::End`] record.
    pub fn is_complete(&self) -> bool {
        self.records.iter().any(|r| matches!(r, Record::End(_)))
    }
}

/// Why a spool could not be read at all.
#[derive(Debug)]
pub enum SpoolError {
    /// The file could not be read.
    Io(io::Error),
    /// The file is shorter than the header or does not start with [`MAGIC`].
    NotASpool,
    /// The spool was written in a version this reader does not know.
    UnsupportedVersion(u32),
}

impl fmt::Display for SpoolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpoolError::Io(e) => write!(f, "cannot read spool: {e}"),
            SpoolError::NotASpool => write!(
                f,
                "not a fikit spool (missing the {:?} header)",
                String::from_utf8_lossy(&MAGIC)
            ),
            SpoolError::UnsupportedVersion(v) => write!(
                f,
                "spool format version {v} is not supported (this reader knows version {SPOOL_VERSION})"
            ),
        }
    }
}

impl std::error::Error for SpoolError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SpoolError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for SpoolError {
    fn from(e: io::Error) -> Self {
        SpoolError::Io(e)
    }
}

/// Reads a spool file; see [`parse_spool`].
pub fn read_spool(path: &Path) -> Result<Spool, SpoolError> {
    let bytes = std::fs::read(path)?;
    parse_spool(&bytes)
}

/// Parses spool bytes. Reads every whole, valid record; a cut or corrupt tail
/// ends the reading and is reported in [`Spool::tail`], not as an error.
pub fn parse_spool(bytes: &[u8]) -> Result<Spool, SpoolError> {
    if bytes.len() < HEADER_LEN || bytes[..8] != MAGIC {
        return Err(SpoolError::NotASpool);
    }
    let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if version != SPOOL_VERSION {
        return Err(SpoolError::UnsupportedVersion(version));
    }
    let mut records = Vec::new();
    let mut unknown = 0u64;
    let mut pos = HEADER_LEN;
    let tail = loop {
        let rest = &bytes[pos..];
        if rest.is_empty() {
            break Tail::Clean;
        }
        let truncated = Tail::Truncated {
            offset: pos as u64,
            bytes: rest.len() as u64,
        };
        if rest.len() < FRAME_OVERHEAD {
            break truncated;
        }
        let len = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
        if len > MAX_PAYLOAD || rest.len() < FRAME_OVERHEAD + len as usize {
            break truncated;
        }
        let len = len as usize;
        let tag = rest[4];
        let payload = &rest[5..5 + len];
        let sum = u32::from_le_bytes([rest[5 + len], rest[6 + len], rest[7 + len], rest[8 + len]]);
        if sum != fnv1a(tag, payload) {
            break truncated;
        }
        match Record::decode(tag, payload) {
            Some(Ok(r)) => records.push(r),
            Some(Err(_)) => break truncated,
            None => unknown += 1,
        }
        pos += FRAME_OVERHEAD + len;
    };
    Ok(Spool {
        records,
        unknown_records: unknown,
        tail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_known_value() {
        // FNV-1a 32 of "a" is 0xe40c292c.
        assert_eq!(fnv1a(b'a', b""), 0xe40c_292c);
    }
}
