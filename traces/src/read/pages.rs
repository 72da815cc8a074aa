//! A check of every column chunk's page headers before Polars decodes them.
//!
//! Polars (polars-parquet 0.55) sizes buffers from the counts in a page
//! header without checking them against the column chunk: a data page's
//! `num_values` (an `i32`, read `as usize`, so -1 becomes 2^64 − 1) is the
//! length of the validity bitmap it reserves (`decode_page_validity`,
//! `decode_hybrid_rle_into_bitmap`), and a fuzzed page asked for 2^61 bytes;
//! a version 2 page's `num_nulls` is subtracted from it the same way; a
//! dictionary page's `num_values` is a `Vec` capacity; `uncompressed_page_size`
//! is the size of the zeroed buffer a compressed page is decompressed into.
//! A failed allocation aborts the process, which no error handling can catch,
//! so these counts are checked here first, against the chunk they belong to.
//!
//! Every column of a trace is flat (no repetition), so each page's values
//! are rows: the pages of a chunk, walked from its first byte the way
//! Polars reads them (an optional dictionary page first, then data pages
//! until their values reach the chunk's `num_values`), must lie inside the
//! chunk, have non-negative counts, and sum to exactly the chunk's values.

use polars_parquet::parquet::metadata::{ColumnChunkMetadata, FileMetadata};
use polars_parquet::parquet::schema::types::PhysicalType;

use super::footer::Walk;

/// Bytes a page may take per value beyond the value's own width when the
/// value has a fixed width: every encoding Parquet has for such a value
/// takes at most its width plus a few bytes (plain: the width; a dictionary
/// index: at most 4 bytes plus run headers; delta: at most the width plus
/// about one byte of block headers), and its definition level at most 2
/// bytes (the worst hybrid-RLE layout, runs of one value). 8 is generous.
const SLACK_PER_VALUE: u64 = 8;
/// Bytes a page may take beyond its values: level length prefixes, bit
/// widths and encoding headers.
const SLACK_PER_PAGE: u64 = 1024;

/// Checks the pages of every column chunk in `file` (whose decoded footer
/// is `md`, its row-group value counts already checked); `Err` says where
/// and what is wrong.
pub(super) fn check(file: &[u8], md: &FileMetadata) -> Result<(), String> {
    // Column chunks lie before the footer.
    let n = file.len();
    let footer_len = u32::from_le_bytes([file[n - 8], file[n - 7], file[n - 6], file[n - 5]]);
    let data_end = n - 8 - footer_len as usize;
    for (g, rg) in md.row_groups.iter().enumerate() {
        for c in rg.parquet_columns() {
            check_chunk(file, data_end, c).map_err(|e| {
                format!(
                    "row group {g}, column {}: {e}",
                    c.descriptor().path_in_schema.join(".")
                )
            })?;
        }
    }
    Ok(())
}

/// What the page walk needs of a column chunk's metadata.
struct Chunk {
    /// First byte (the dictionary page's offset, else the first data page's).
    start: i64,
    /// `total_compressed_size`.
    len: i64,
    /// `num_values`.
    values: i64,
    /// Bytes per value for a fixed-width physical type; `None` for strings.
    width: Option<u64>,
    /// `total_uncompressed_size`.
    uncompressed: i64,
}

fn check_chunk(file: &[u8], data_end: usize, c: &ColumnChunkMetadata) -> Result<(), String> {
    let width = match c.physical_type() {
        PhysicalType::Boolean => Some(1),
        PhysicalType::Int32 | PhysicalType::Float => Some(4),
        PhysicalType::Int64 | PhysicalType::Double => Some(8),
        PhysicalType::Int96 => Some(12),
        PhysicalType::FixedLenByteArray(w) => Some(w as u64),
        PhysicalType::ByteArray => None,
    };
    check_pages(
        file,
        data_end,
        &Chunk {
            start: c.dictionary_page_offset().unwrap_or(c.data_page_offset()),
            len: c.compressed_size(),
            values: c.num_values(),
            width,
            uncompressed: c.uncompressed_size(),
        },
    )
}

/// Walks the pages of chunk `c` of `file` (column data ends at `data_end`).
fn check_pages(file: &[u8], data_end: usize, c: &Chunk) -> Result<(), String> {
    let values = u64::try_from(c.values).map_err(|_| "negative value count")?;
    let (Ok(start), Ok(len)) = (usize::try_from(c.start), usize::try_from(c.len)) else {
        return Err(format!(
            "the chunk claims to start at byte {} and take {} bytes",
            c.start, c.len
        ));
    };
    let end = start
        .checked_add(len)
        .filter(|&e| start >= 4 && e <= data_end);
    let Some(end) = end else {
        return Err(format!(
            "the chunk claims bytes {start} to {start} + {len}, but the column data \
             lies in bytes 4 to {data_end}"
        ));
    };
    // The most a page may decompress to (see SLACK_PER_VALUE): a fixed-width
    // value has a bound; a string has none (names have no length limit), so
    // a string page may be as large as its chunk says it is uncompressed.
    let chunk_uncompressed = u64::try_from(c.uncompressed).unwrap_or(0);
    let max_uncompressed = |page_values: u64| match c.width {
        Some(w) => page_values
            .saturating_mul(w + SLACK_PER_VALUE)
            .saturating_add(SLACK_PER_PAGE),
        None => chunk_uncompressed,
    };

    let mut pos = start;
    let mut seen = 0u64;
    let mut first = true;
    while seen < values {
        let at = |e: String| format!("page at byte {pos}: {e}");
        if pos == end {
            return Err(format!(
                "its pages hold {seen} of the chunk's {values} values"
            ));
        }
        let mut w = Walk {
            bytes: &file[pos..end],
            pos: 0,
        };
        let h = page_header(&mut w).map_err(|e| at(format!("corrupt page header: {e}")))?;
        let body = pos + w.pos;
        let compressed = u64::try_from(h.compressed).ok();
        let Some(compressed) = compressed.filter(|&s| s <= (end - body) as u64) else {
            return Err(at(format!(
                "compressed_page_size {} exceeds the {} bytes left in its column chunk",
                h.compressed,
                end - body
            )));
        };
        let uncompressed = u64::try_from(h.uncompressed).map_err(|_| {
            at(format!(
                "uncompressed_page_size {} is negative",
                h.uncompressed
            ))
        })?;
        let left = values - seen;
        let count = |name: &str, v: i64, most: u64| -> Result<u64, String> {
            match u64::try_from(v) {
                Ok(v) if v <= most => Ok(v),
                _ => Err(at(format!(
                    "{name} {v}, but its column chunk has {left} values left of {values}"
                ))),
            }
        };
        let page_values = match h.body {
            Body::Dictionary { num_values } => {
                if !first {
                    return Err(at("a dictionary page after the chunk's first page".into()));
                }
                // A dictionary holds at most one entry per value of the chunk.
                count("a dictionary page of num_values", num_values, values)?
            }
            Body::V1 { num_values } => {
                seen += count("a data page of num_values", num_values, left)?;
                num_values as u64
            }
            Body::V2 {
                num_values,
                num_nulls,
                num_rows,
                def_len,
                rep_len,
            } => {
                let nv = count("a data page (v2) of num_values", num_values, left)?;
                seen += nv;
                if !(0..=num_values).contains(&num_nulls) {
                    return Err(at(format!(
                        "a data page (v2) of {num_values} values claims {num_nulls} nulls"
                    )));
                }
                if num_rows != num_values {
                    return Err(at(format!(
                        "a data page (v2) of {num_values} values claims {num_rows} rows \
                         (the column is flat: each value is a row)"
                    )));
                }
                if rep_len != 0 {
                    return Err(at(format!(
                        "a data page (v2) has {rep_len} bytes of repetition levels \
                         (the column is flat: it has none)"
                    )));
                }
                let levels = u64::try_from(def_len).ok();
                if levels.is_none_or(|l| l > compressed || l > uncompressed) {
                    return Err(at(format!(
                        "a data page (v2) claims {def_len} bytes of definition levels \
                         in a page of {compressed} bytes ({uncompressed} uncompressed)"
                    )));
                }
                nv
            }
        };
        if uncompressed > max_uncompressed(page_values) {
            return Err(at(format!(
                "uncompressed_page_size {uncompressed} is more than {page_values} values \
                 of this column can take ({})",
                max_uncompressed(page_values)
            )));
        }
        first = false;
        pos = body + compressed as usize;
    }
    Ok(())
}

/// What the check needs of a `PageHeader`.
struct PageHeader {
    uncompressed: i64,
    compressed: i64,
    body: Body,
}

enum Body {
    Dictionary {
        num_values: i64,
    },
    V1 {
        num_values: i64,
    },
    V2 {
        num_values: i64,
        num_nulls: i64,
        num_rows: i64,
        def_len: i64,
        rep_len: i64,
    },
}

/// Thrift field types the page header structs declare (compact protocol ids).
#[derive(Clone, Copy, PartialEq)]
enum Ty {
    Bool,
    I32,
    Struct,
}

/// `PageHeader` (parquet.thrift): type, uncompressed_page_size,
/// compressed_page_size, crc, data_page_header, index_page_header,
/// dictionary_page_header, data_page_header_v2.
const PAGE_HEADER: &[(i64, Ty)] = &[
    (1, Ty::I32),
    (2, Ty::I32),
    (3, Ty::I32),
    (4, Ty::I32),
    (5, Ty::Struct),
    (6, Ty::Struct),
    (7, Ty::Struct),
    (8, Ty::Struct),
];
/// `DataPageHeader`: num_values, encoding, definition and repetition level
/// encodings, statistics.
const DATA_PAGE_HEADER: &[(i64, Ty)] = &[
    (1, Ty::I32),
    (2, Ty::I32),
    (3, Ty::I32),
    (4, Ty::I32),
    (5, Ty::Struct),
];
/// `DictionaryPageHeader`: num_values, encoding, is_sorted.
const DICTIONARY_PAGE_HEADER: &[(i64, Ty)] = &[(1, Ty::I32), (2, Ty::I32), (3, Ty::Bool)];
/// `DataPageHeaderV2`: num_values, num_nulls, num_rows, encoding,
/// definition_levels_byte_length, repetition_levels_byte_length,
/// is_compressed, statistics.
const DATA_PAGE_HEADER_V2: &[(i64, Ty)] = &[
    (1, Ty::I32),
    (2, Ty::I32),
    (3, Ty::I32),
    (4, Ty::I32),
    (5, Ty::I32),
    (6, Ty::I32),
    (7, Ty::Bool),
    (8, Ty::Struct),
];

/// The `i32` fields of one struct by id (the last wins, as in Polars), and
/// where its struct fields of interest start.
#[derive(Default)]
struct Fields {
    ints: Vec<(i64, i64)>,
    structs: Vec<(i64, usize)>,
}

impl Fields {
    fn int(&self, id: i64) -> Option<i64> {
        self.ints.iter().rev().find(|(i, _)| *i == id).map(|x| x.1)
    }

    fn need(&self, id: i64, what: &str) -> Result<i64, String> {
        self.int(id)
            .ok_or_else(|| format!("{what} (field {id}) is missing"))
    }

    fn nested(&self, id: i64) -> Option<usize> {
        self.structs
            .iter()
            .rev()
            .find(|(i, _)| *i == id)
            .map(|x| x.1)
    }
}

/// Reads one struct whose known fields are `spec`: each must have its
/// declared type (Polars reads them by id whatever type the bytes declare);
/// other fields are skipped. Struct fields are skipped too, their start kept.
fn read_struct(w: &mut Walk<'_>, spec: &[(i64, Ty)], depth: usize) -> Result<Fields, String> {
    let mut out = Fields::default();
    let mut id = 0i64;
    loop {
        let h = w.byte()?;
        if h == 0 {
            return Ok(out);
        }
        id = match h >> 4 {
            0 => zigzag(w.varint()?),
            delta => id + i64::from(delta),
        };
        let ty = h & 0x0f;
        let declared = match ty {
            1 | 2 => Some(Ty::Bool),
            5 => Some(Ty::I32),
            12 => Some(Ty::Struct),
            _ => None,
        };
        if let Some(&(_, want)) = spec.iter().find(|(i, _)| *i == id)
            && declared != Some(want)
        {
            return Err(format!("field {id} has Thrift type {ty}"));
        }
        match declared {
            Some(Ty::I32) if spec.iter().any(|(i, _)| *i == id) => {
                let v = zigzag(w.varint()?);
                if i32::try_from(v).is_err() {
                    return Err(format!("field {id} = {v} does not fit an i32"));
                }
                out.ints.push((id, v));
            }
            Some(Ty::Struct) if spec.iter().any(|(i, _)| *i == id) => {
                out.structs.push((id, w.pos));
                w.value(12, depth + 1)?;
            }
            _ => w.value(ty, depth + 1)?,
        }
    }
}

fn zigzag(z: u64) -> i64 {
    (z >> 1) as i64 ^ -((z & 1) as i64)
}

/// Reads a `PageHeader`, leaving `w` after it.
fn page_header(w: &mut Walk<'_>) -> Result<PageHeader, String> {
    let top = read_struct(w, PAGE_HEADER, 0)?;
    let end = w.pos;
    let ty = top.need(1, "the page type")?;
    let uncompressed = top.need(2, "uncompressed_page_size")?;
    let compressed = top.need(3, "compressed_page_size")?;
    let mut sub = |id: i64, spec: &[(i64, Ty)], what: &str| -> Result<Fields, String> {
        let at = top
            .nested(id)
            .ok_or_else(|| format!("a {what} page without its {what} page header"))?;
        w.pos = at;
        read_struct(w, spec, 1)
    };
    let body = match ty {
        0 => {
            let f = sub(5, DATA_PAGE_HEADER, "data")?;
            Body::V1 {
                num_values: f.need(1, "num_values")?,
            }
        }
        2 => {
            let f = sub(7, DICTIONARY_PAGE_HEADER, "dictionary")?;
            Body::Dictionary {
                num_values: f.need(1, "num_values")?,
            }
        }
        3 => {
            let f = sub(8, DATA_PAGE_HEADER_V2, "data (v2)")?;
            Body::V2 {
                num_values: f.need(1, "num_values")?,
                num_nulls: f.need(2, "num_nulls")?,
                num_rows: f.need(3, "num_rows")?,
                def_len: f.need(5, "definition_levels_byte_length")?,
                rep_len: f.need(6, "repetition_levels_byte_length")?,
            }
        }
        1 => return Err("an index page inside a column chunk".into()),
        t => return Err(format!("unknown page type {t}")),
    };
    w.pos = end;
    Ok(PageHeader {
        uncompressed,
        compressed,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compact-protocol Thrift, just enough to write page headers.
    #[derive(Default)]
    struct Enc(Vec<u8>, Vec<i64>);

    impl Enc {
        fn varint(&mut self, mut v: u64) {
            while v >= 0x80 {
                self.0.push((v as u8) | 0x80);
                v >>= 7;
            }
            self.0.push(v as u8);
        }
        fn field(&mut self, id: i64, ty: u8) {
            let last = self.1.last().copied().unwrap_or(0);
            self.0.push((((id - last) as u8) << 4) | ty);
            *self.1.last_mut().unwrap() = id;
        }
        fn i32(&mut self, id: i64, v: i64) -> &mut Self {
            self.field(id, 5);
            self.varint(((v << 1) ^ (v >> 63)) as u64);
            self
        }
        fn begin(&mut self, id: Option<i64>) -> &mut Self {
            if let Some(id) = id {
                self.field(id, 12);
            }
            self.1.push(0);
            self
        }
        fn end(&mut self) -> &mut Self {
            self.0.push(0);
            self.1.pop();
            self
        }
    }

    /// A page header and `compressed` body bytes.
    fn page(ty: i64, uncompressed: i64, compressed: i64, body: &[(i64, i64)]) -> Vec<u8> {
        let mut e = Enc::default();
        e.begin(None)
            .i32(1, ty)
            .i32(2, uncompressed)
            .i32(3, compressed);
        let sub = match ty {
            0 => 5,
            2 => 7,
            _ => 8,
        };
        e.begin(Some(sub));
        for &(id, v) in body {
            e.i32(id, v);
        }
        e.end().end();
        e.0.extend(std::iter::repeat_n(0u8, compressed.max(0) as usize));
        e.0
    }

    fn v1(values: i64, size: i64) -> Vec<u8> {
        page(0, size, size, &[(1, values), (2, 0), (3, 3), (4, 3)])
    }

    fn v2(values: i64, nulls: i64, rows: i64, def: i64, rep: i64, size: i64) -> Vec<u8> {
        page(
            3,
            size,
            size,
            &[
                (1, values),
                (2, nulls),
                (3, rows),
                (4, 0),
                (5, def),
                (6, rep),
            ],
        )
    }

    fn dict(values: i64, size: i64) -> Vec<u8> {
        page(2, size, size, &[(1, values), (2, 0)])
    }

    /// Checks `pages` as the one chunk of a file of int64 values (`width`
    /// `Some(8)`) or strings (`None`).
    fn walk(pages: &[Vec<u8>], values: i64, width: Option<u64>) -> Result<(), String> {
        let mut file = b"PAR1".to_vec();
        for p in pages {
            file.extend_from_slice(p);
        }
        let len = file.len() as i64 - 4;
        check_pages(
            &file,
            file.len(),
            &Chunk {
                start: 4,
                len,
                values,
                width,
                uncompressed: len,
            },
        )
    }

    #[test]
    fn consistent_pages_pass() {
        walk(&[dict(2, 16), v1(5, 20), v1(2, 20)], 7, Some(8)).unwrap();
        walk(&[v2(7, 2, 7, 3, 0, 30)], 7, Some(8)).unwrap();
        walk(&[v1(7, 40)], 7, None).unwrap();
    }

    #[test]
    fn a_negative_page_value_count_is_refused() {
        // What the fuzzer found: -3 values, read by Polars as 2^64 - 3.
        let e = walk(&[v1(-3, 20)], 7, Some(8)).unwrap_err();
        assert!(
            e.contains("a data page of num_values -3, but its column chunk has 7 values left of 7"),
            "{e}"
        );
    }

    #[test]
    fn page_values_must_sum_to_the_chunk() {
        let e = walk(&[v1(5, 20), v1(5, 20)], 7, Some(8)).unwrap_err();
        assert!(
            e.contains("num_values 5, but its column chunk has 2 values left of 7"),
            "{e}"
        );
        let e = walk(&[v1(5, 20)], 7, Some(8)).unwrap_err();
        assert!(
            e.contains("its pages hold 5 of the chunk's 7 values"),
            "{e}"
        );
    }

    #[test]
    fn a_page_larger_than_its_chunk_is_refused() {
        let mut p = v1(7, 20);
        p.truncate(p.len() - 5);
        let e = walk(&[p], 7, Some(8)).unwrap_err();
        assert!(
            e.contains("compressed_page_size 20 exceeds the 15 bytes left"),
            "{e}"
        );
    }

    #[test]
    fn a_dictionary_larger_than_its_chunk_or_not_first_is_refused() {
        let e = walk(&[dict(8, 16), v1(7, 20)], 7, Some(8)).unwrap_err();
        assert!(
            e.contains("a dictionary page of num_values 8, but its column chunk has 7"),
            "{e}"
        );
        let e = walk(&[v1(3, 20), dict(2, 16), v1(4, 20)], 7, Some(8)).unwrap_err();
        assert!(
            e.contains("a dictionary page after the chunk's first page"),
            "{e}"
        );
    }

    #[test]
    fn inconsistent_v2_counts_are_refused() {
        for (page, why) in [
            (v2(7, 8, 7, 3, 0, 30), "claims 8 nulls"),
            (v2(7, -1, 7, 3, 0, 30), "claims -1 nulls"),
            (v2(7, 0, 6, 3, 0, 30), "claims 6 rows"),
            (v2(7, 0, 7, 3, 2, 30), "2 bytes of repetition levels"),
            (v2(7, 0, 7, 31, 0, 30), "31 bytes of definition levels"),
            (v2(7, 0, 7, -4, 0, 30), "-4 bytes of definition levels"),
        ] {
            let e = walk(&[page], 7, Some(8)).unwrap_err();
            assert!(e.contains(why), "{why}: {e}");
        }
    }

    #[test]
    fn an_implausible_uncompressed_size_is_refused() {
        // 7 int64 values take at most 7 * (8 + 8) + 1024 = 1136 bytes.
        let ok = page(0, 1136, 20, &[(1, 7)]);
        walk(&[ok], 7, Some(8)).unwrap();
        let big = page(0, 1137, 20, &[(1, 7)]);
        let e = walk(&[big], 7, Some(8)).unwrap_err();
        assert!(
            e.contains("uncompressed_page_size 1137 is more than 7 values"),
            "{e}"
        );
        // Strings: at most what the chunk says it takes uncompressed.
        let e = walk(&[page(0, 1_000_000, 20, &[(1, 7)])], 7, None).unwrap_err();
        assert!(e.contains("uncompressed_page_size 1000000"), "{e}");
        let e = walk(&[page(0, -1, 20, &[(1, 7)])], 7, None).unwrap_err();
        assert!(e.contains("uncompressed_page_size -1 is negative"), "{e}");
    }

    #[test]
    fn a_field_of_another_type_or_missing_is_refused() {
        let mut e = Enc::default();
        e.begin(None).i32(1, 0).i32(2, 20);
        e.field(3, 8); // compressed_page_size as a string
        e.0.extend([1, b'x']);
        e.end();
        let err = walk(&[e.0], 7, Some(8)).unwrap_err();
        assert!(err.contains("field 3 has Thrift type 8"), "{err}");
        let p = page(0, 20, 20, &[(2, 0)]); // no num_values
        let err = walk(&[p], 7, Some(8)).unwrap_err();
        assert!(err.contains("num_values (field 1) is missing"), "{err}");
        let p = page(1, 20, 20, &[]);
        let err = walk(&[p], 7, Some(8)).unwrap_err();
        assert!(err.contains("an index page"), "{err}");
    }
}
