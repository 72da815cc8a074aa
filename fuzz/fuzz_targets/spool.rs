//! The tolerant spool reader never panics: on the raw bytes, and on the bytes
//! framed as well-formed records (valid header, lengths and checksums), so the
//! record decoders see arbitrary payloads rather than failing the checksum.
#![no_main]

use fikit_spool::{FRAME_OVERHEAD, Tail, header_bytes, parse_spool};
use libfuzzer_sys::fuzz_target;

/// FNV-1a 32 of tag and payload: the spool's record checksum.
fn fnv1a(tag: u8, payload: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in std::iter::once(&tag).chain(payload) {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

fuzz_target!(|data: &[u8]| {
    let _ = parse_spool(data);

    // The input as records: [payload length: u8][tag: u8][payload], repeated.
    let mut framed = header_bytes().to_vec();
    let mut rest = data;
    let mut records = 0;
    while rest.len() >= 2 {
        let len = usize::from(rest[0]).min(rest.len() - 2);
        let tag = rest[1];
        let payload = &rest[2..2 + len];
        framed.extend_from_slice(&(len as u32).to_le_bytes());
        framed.push(tag);
        framed.extend_from_slice(payload);
        framed.extend_from_slice(&fnv1a(tag, payload).to_le_bytes());
        rest = &rest[2 + len..];
        records += 1;
    }
    let spool = parse_spool(&framed).expect("the header is valid");
    // Every frame is whole and its checksum right: each one is a record, an
    // unknown record, or (a payload its tag cannot decode) the start of the tail.
    let read = spool.records.len() as u64 + spool.unknown_records;
    match spool.tail {
        Tail::Clean => assert_eq!(read, records),
        Tail::Truncated { offset, bytes } => {
            assert!(read < records);
            assert_eq!(offset + bytes, framed.len() as u64);
            assert!(bytes as usize >= FRAME_OVERHEAD);
        }
    }
});
