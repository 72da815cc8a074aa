//! `fikit-profile`: records every CUDA kernel, memory operation, launch call
//! and synchronization of a command's CUDA processes into fikit traces. The
//! command line is [`fikit_profile::cli`].

fn main() -> std::process::ExitCode {
    fikit_profile::cli::main()
}
