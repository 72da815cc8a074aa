//! Which CUDA API calls fikit records by default and which of them
//! synchronize with the GPU: one table, shared by the collector (which
//! enables those calls), the launcher (which turns them into trace rows) and
//! `fikit-sim import` (which reads other profilers' traces the same way).

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
