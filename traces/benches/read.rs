//! The reader's cost on the largest shipped trace
//! (`traces/h200/bert-base-bs1-eval-1319.parquet`, 17,877 kernels, 606 kB):
//! the whole validating read, and the structural checks it runs before
//! Polars decodes any column data (footer, row-group counts, every page
//! header). `cargo bench -p fikit-trace --bench read`.

fn main() {
    divan::main();
}

fn largest() -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/h200/bert-base-bs1-eval-1319.parquet"
    );
    std::fs::read(path).expect("the shipped trace")
}

#[divan::bench(sample_count = 40)]
fn parse_trace(b: divan::Bencher) {
    let bytes = largest();
    b.bench(|| fikit_trace::parse_trace(divan::black_box(&bytes)).unwrap());
}

#[divan::bench(sample_count = 200)]
fn check_structure(b: divan::Bencher) {
    let bytes = largest();
    b.bench(|| fikit_trace::check_structure(divan::black_box(&bytes)).unwrap());
}
