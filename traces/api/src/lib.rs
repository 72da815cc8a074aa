//! Which CUDA API calls fikit records by default and which of them
//! synchronize with the GPU: one table, shared by the collector (which
//! enables those calls), the launcher (which turns them into trace rows) and
//! `fikit-sim import` (which reads other profilers' traces the same way);
//! and the kernel identity ([`kernel_key`]) that traces record and the
//! launch gate looks kernels up by.

/// True for the API calls recorded by default: those that launch GPU work,
/// copy, set memory or synchronize with the GPU.
pub fn is_selected_api(name: &str) -> bool {
    const PREFIXES: [&str; 10] = [
        "cudaLaunch",
        "cudaMemcpy",
        "cudaMemset",
        "cudaGraphLaunch",
        "cudaStreamWaitEvent",
        "cuLaunch",
        "cuMemcpy",
        "cuMemset",
        "cuGraphLaunch",
        "cuStreamWaitEvent",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p))
        || (name.contains("Synchronize") && !name.contains("Graph"))
}

/// The CUPTI synchronization type matching a synchronizing API call, or `None`
/// for a call that does not synchronize (1 event, 2 stream wait event, 3 stream, 4 context).
pub fn sync_type_of(name: &str) -> Option<u32> {
    let base = name.split('_').next().unwrap_or(name);
    match base {
        "cudaEventSynchronize" | "cuEventSynchronize" => Some(1),
        "cudaStreamWaitEvent" | "cuStreamWaitEvent" => Some(2),
        "cudaStreamSynchronize" | "cuStreamSynchronize" => Some(3),
        "cudaDeviceSynchronize" | "cudaThreadSynchronize" | "cuCtxSynchronize" => Some(4),
        _ => None,
    }
}

/// The stable identity of a kernel: the xxh3-64 hash of its name, grid, block,
/// shared memory and registers, so that the same kernel launched the same way
/// gets the same key in every run, on every machine.
///
/// The hashed bytes are the UTF-8 name, a 0 byte, then grid x/y/z, block x/y/z,
/// static shared, dynamic shared and registers, each as a little-endian u32.
pub fn kernel_key(
    name: &str,
    grid: [u32; 3],
    block: [u32; 3],
    static_shared_bytes: u32,
    dynamic_shared_bytes: u32,
    registers_per_thread: u32,
) -> u64 {
    let mut bytes = Vec::with_capacity(name.len() + 1 + 11 * 4);
    bytes.extend_from_slice(name.as_bytes());
    bytes.push(0);
    for v in grid.into_iter().chain(block).chain([
        static_shared_bytes,
        dynamic_shared_bytes,
        registers_per_thread,
    ]) {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    xxhash_rust::xxh3::xxh3_64(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selected_api_names() {
        for n in [
            "cudaLaunchKernel",
            "cudaLaunchKernel_ptsz",
            "cudaMemcpyAsync",
            "cudaMemsetAsync",
            "cudaStreamSynchronize",
            "cudaDeviceSynchronize",
            "cudaEventSynchronize",
            "cudaStreamWaitEvent",
            "cudaGraphLaunch",
            "cuLaunchKernel",
            "cuLaunchKernelEx",
            "cuMemcpyHtoDAsync_v2",
            "cuCtxSynchronize",
            "cuStreamSynchronize",
        ] {
            assert!(is_selected_api(n), "{n}");
        }
        for n in [
            "cudaGetDevice",
            "cudaEventRecord",
            "cudaStreamIsCapturing",
            "cuCtxGetCurrent",
            "cudaMalloc",
            "cuMemAlloc_v2",
        ] {
            assert!(!is_selected_api(n), "{n}");
        }
        assert_eq!(sync_type_of("cudaStreamSynchronize_v3020"), Some(3));
        assert_eq!(sync_type_of("cuStreamSynchronize_ptsz"), Some(3));
        assert_eq!(sync_type_of("cudaDeviceSynchronize_v3020"), Some(4));
        assert_eq!(sync_type_of("cuCtxSynchronize"), Some(4));
        assert_eq!(sync_type_of("cudaEventSynchronize_v3020"), Some(1));
        assert_eq!(sync_type_of("cudaStreamWaitEvent_v3020"), Some(2));
        assert_eq!(sync_type_of("cudaLaunchKernel_v7000"), None);
    }
}
