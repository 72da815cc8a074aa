//! The wheel's `fikit-run`: [`fikit_run::cli::main`].

fn main() {
    std::process::exit(fikit_run::cli::main());
}
