//! A structural check of a Parquet footer before Polars decodes it.
//!
//! The footer is a Thrift compact-protocol struct. Polars' decoder
//! (polars-parquet 0.55) reads the fields it knows by id whatever wire type
//! the bytes declare, and sizes vectors from list lengths it does not check:
//! a fuzzer found a footer whose schema field, declared a double, was read
//! as a list of 27.7 GB, and a failed allocation aborts the process, which no
//! error handling can catch. This walk reads the footer's structure (compact
//! Thrift is self-describing) and rejects: a top-level list field (schema,
//! row groups, key/value metadata, column orders) of another type; a list,
//! set, map or string that declares more elements than bytes are left;
//! nesting deeper than any Parquet footer has. Fields nested deeper are only
//! checked for consistent lengths, not against Polars' idea of their types.

/// Deepest struct/list nesting accepted (Parquet footers nest a few levels).
const MAX_DEPTH: usize = 64;

/// Checks the footer of `file` (a whole Parquet file that ends with
/// `<footer><u32 LE footer length>PAR1`); `Err` says what is wrong.
pub(super) fn check(file: &[u8]) -> Result<(), String> {
    let n = file.len();
    let len = u32::from_le_bytes([file[n - 8], file[n - 7], file[n - 6], file[n - 5]]) as usize;
    if len + 12 > n {
        return Err(format!(
            "the footer length {len} exceeds the file's {n} bytes"
        ));
    }
    let mut w = Walk {
        bytes: &file[n - 8 - len..n - 8],
        pos: 0,
    };
    w.file_metadata()
        .map_err(|e| format!("corrupt footer at byte {}: {e}", w.pos))
}

/// `FileMetaData` fields Polars decodes as lists by their id, whatever type
/// the bytes declare: schema, row groups, key/value metadata, column orders.
const FILE_METADATA_LISTS: [i64; 4] = [2, 4, 5, 7];

/// A cursor over compact-protocol Thrift bytes (also used by the page
/// header check, `pages.rs`).
pub(super) struct Walk<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
}

impl Walk<'_> {
    pub(super) fn left(&self) -> usize {
        self.bytes.len() - self.pos
    }

    pub(super) fn byte(&mut self) -> Result<u8, String> {
        let b = *self.bytes.get(self.pos).ok_or("it ends early")?;
        self.pos += 1;
        Ok(b)
    }

    pub(super) fn skip(&mut self, n: usize) -> Result<(), String> {
        if n > self.left() {
            return Err(format!("{n} bytes declared, {} left", self.left()));
        }
        self.pos += n;
        Ok(())
    }

    pub(super) fn varint(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f).checked_shl(shift).unwrap_or(0);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("a varint longer than 10 bytes".into())
    }

    /// A count of elements of at least `min_bytes` each, checked against what is left.
    fn count(&mut self, declared: u64, min_bytes: usize) -> Result<usize, String> {
        match usize::try_from(declared) {
            Ok(c) if c.saturating_mul(min_bytes) <= self.left() => Ok(c),
            _ => Err(format!(
                "{declared} elements declared in {} bytes",
                self.left()
            )),
        }
    }

    /// Walks the top-level `FileMetaData` struct: its list fields must be
    /// lists (Polars reads them as lists by field id), then any value.
    fn file_metadata(&mut self) -> Result<(), String> {
        let mut id = 0i64;
        loop {
            let h = self.byte()?;
            if h == 0 {
                return Ok(());
            }
            id = match h >> 4 {
                0 => {
                    let z = self.varint()?;
                    (z >> 1) as i64 ^ -((z & 1) as i64)
                }
                delta => id + i64::from(delta),
            };
            let ty = h & 0x0f;
            if FILE_METADATA_LISTS.contains(&id) && ty != 9 {
                return Err(format!(
                    "field {id} of the file metadata has Thrift type {ty}, not a list"
                ));
            }
            self.value(ty, 1)?;
        }
    }

    /// Skips one value of compact type `ty`.
    pub(super) fn value(&mut self, ty: u8, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(format!("nested deeper than {MAX_DEPTH} levels"));
        }
        match ty {
            1 | 2 => Ok(()),   // boolean in a field header
            3 => self.skip(1), // byte
            4..=6 => self.varint().map(|_| ()),
            7 => self.skip(8), // double
            8 => {
                let n = self.varint()?;
                let n = self.count(n, 1)?;
                self.skip(n)
            }
            9 | 10 => {
                let h = self.byte()?;
                let elem = h & 0x0f;
                let size = match h >> 4 {
                    15 => self.varint()?,
                    s => u64::from(s),
                };
                let size = self.count(size, 1)?;
                for _ in 0..size {
                    if elem == 1 || elem == 2 {
                        self.skip(1)?; // a boolean element is one byte
                    } else {
                        self.value(elem, depth + 1)?;
                    }
                }
                Ok(())
            }
            11 => {
                let size = self.varint()?;
                let size = self.count(size, 2)?;
                if size == 0 {
                    return Ok(());
                }
                let kv = self.byte()?;
                for _ in 0..size {
                    for t in [kv >> 4, kv & 0x0f] {
                        if t == 1 || t == 2 {
                            self.skip(1)?;
                        } else {
                            self.value(t, depth + 1)?;
                        }
                    }
                }
                Ok(())
            }
            12 => loop {
                let h = self.byte()?;
                if h == 0 {
                    return Ok(()); // STOP
                }
                if h >> 4 == 0 {
                    self.varint()?; // a field id that is no delta
                }
                self.value(h & 0x0f, depth + 1)?;
            },
            t => Err(format!("unknown Thrift type {t}")),
        }
    }
}
