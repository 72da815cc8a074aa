//! The kernel identity the gate computes at every launch
//! (`fikit_trace_api::kernel_key`: the mangled name, launch shape, shared
//! memory and registers, hashed), for a name as long as PyTorch's.
//!
//! `cargo bench -p fikit-trace-api --bench key`.

use fikit_trace_api::kernel_key;

fn main() {
    divan::main();
}

/// A cuDNN/PyTorch-style mangled kernel name (173 characters).
const NAME: &str = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1";

#[divan::bench]
fn kernel_key_of_a_long_name() -> u64 {
    kernel_key(
        divan::black_box(NAME),
        [4, 1, 1],
        [128, 1, 1],
        0,
        divan::black_box(16_384),
        64,
    )
}
