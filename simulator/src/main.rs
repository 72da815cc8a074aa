//! `fikit-sim`: replays traces of GPU jobs under GPU-sharing policies.
//! The command line lives in `cli/`.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
