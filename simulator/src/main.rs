//! `fikit-sim`: replays traces of GPU jobs under GPU-sharing policies.
//! The command line is [`fikit_sim::cli`].

fn main() -> std::process::ExitCode {
    fikit_sim::cli::main()
}
