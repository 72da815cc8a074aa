//! Writes the fixture trace that uses every column and kind to the path given,
//! e.g. to try the format with Polars, pandas or DuckDB:
//! `cargo run -p fikit-trace --example fixture -- /tmp/every_column.parquet`.

fn main() {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: fixture OUT.parquet");
        std::process::exit(2);
    };
    let trace = fikit_trace::fixture::every_column("every-column");
    if let Err(e) = fikit_trace::write_trace(std::path::Path::new(&path), &trace) {
        eprintln!("fixture: {e}");
        std::process::exit(1);
    }
}
