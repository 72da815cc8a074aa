//! The wheel's `fikit-sim`: [`fikit_sim::cli::main`].

fn main() -> std::process::ExitCode {
    fikit_sim::cli::main()
}
