//! Inputs the fuzzer (fuzz/, target `trace_reader`) found that once made the
//! reader panic or abort. Each must now get an error naming the problem. The
//! files are in tests/fixtures/fuzz/, named `.bin` so that nothing searching
//! the traces folder for `*.parquet` picks them up; fuzz/README.md lists what
//! each found.

use fikit_trace::{Problem, parse_trace};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/fuzz/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn a_footer_polars_cannot_decode_is_a_corrupt_file_not_a_panic() {
    // Polars' Thrift decoder panicked ("thrift bool field") on this footer.
    let err = parse_trace(&fixture("thrift-bool-field.bin")).unwrap_err();
    assert!(matches!(err, Problem::Truncated(_)), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.starts_with("truncated or corrupt Parquet file"),
        "{msg}"
    );
}

#[test]
fn every_fuzz_finding_gets_an_error() {
    let dir = format!("{}/tests/fixtures/fuzz", env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        assert!(
            parse_trace(&bytes).is_err(),
            "{} was accepted",
            path.display()
        );
        n += 1;
    }
    assert!(n > 0, "no fixtures in {dir}");
}

#[test]
fn a_footer_list_field_of_another_type_is_a_corrupt_file_not_an_abort() {
    // Polars' footer decoder reads FileMetaData's list fields by id whatever
    // their wire type, and sized a `Vec` from what it took for a list length:
    // here a request for 27.7 GB, whose failure aborted the process
    // ("memory allocation of 27696841952 bytes failed", SIGABRT). fikit's
    // footer check (src/read/footer.rs) rejects the file first.
    let err = parse_trace(&fixture("footer-list-field-mistyped.bin")).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("field 2 of the file metadata has Thrift type 7, not a list"),
        "{msg}"
    );
}

#[test]
fn a_column_chunk_whose_value_count_disagrees_with_its_row_group_is_corrupt() {
    // Polars sized its buffers from such counts (a fuzzed file asked for 2^61 bytes).
    let msg = parse_trace(&fixture("chunk-values-mismatch.bin"))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("but a column chunk claims"), "{msg}");
}

#[test]
fn a_page_whose_value_count_disagrees_with_its_chunk_is_corrupt_not_an_abort() {
    // The data page of column `kind` claims -3 values. Polars (polars-parquet
    // 0.55) reads the count `as usize` and reserved a validity bitmap of
    // (2^64 - 3) bits, 2^61 bytes: the failed allocation aborted the process
    // (`decode_hybrid_rle_into_bitmap`). fikit's page check (src/read/pages.rs)
    // refuses the file before Polars decodes a page.
    let err = parse_trace(&fixture("page-values-negative.bin")).unwrap_err();
    assert!(matches!(err, Problem::Truncated(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        "truncated or corrupt Parquet file (row group 0, column kind: page at byte 4: \
         a data page of num_values -3, but its column chunk has 7 values left of 7)"
    );
}

#[test]
fn a_kernel_ending_past_2_pow_62_ns_is_refused() {
    // A fuzzed, otherwise valid trace whose kernels last about 8·10^18 ns:
    // replaying two copies under time slicing took a 2 ms quantum at a time
    // (about 4·10^12 switches), and durations that large overflow i64 sums.
    // Timestamps now lie within ±2^62 ns (fikit_trace::MAX_TIMESTAMP_NS).
    let msg = parse_trace(&fixture("kernel-end-8e18ns.bin"))
        .unwrap_err()
        .to_string();
    assert_eq!(
        msg,
        "row 4 (kernel), column `end_ns`: 8791026472627238192 ns is outside -2^62 to 2^62 ns \
         (146 years either side of the clock's zero), the range a trace's times may take"
    );
}
