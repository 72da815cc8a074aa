//! `fikit-run`: see the library's docs and `fikit-run --help`.

fn main() {
    std::process::exit(fikit_run::cli::main());
}
