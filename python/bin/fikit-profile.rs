//! The wheel's `fikit-profile`: [`fikit_profile::cli::main`].

fn main() -> std::process::ExitCode {
    fikit_profile::cli::main()
}
