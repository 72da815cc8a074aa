//! Spool → [`Trace`]: joins each GPU operation to the API call that issued it,
//! derives synchronizations, and fills the metadata.

use std::collections::HashMap;

use fikit_spool::{ApiMode, Domain, Record, Spool};
use fikit_trace::{
    ApiCall, ApiDomain, ApiRecording, CopyKind, DeviceInfo, FORMAT_VERSION, HostCall, Kernel,
    MemOp, Metadata, Placement, Sync, SyncKind, Trace, VersionSource, kernel_key,
};

/// Why a spool could not become a trace.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    /// The spool holds no start record (its first write was lost).
    #[error("the spool has no start record")]
    NoStart,
    /// A kernel names a string id that was never defined.
    #[error("kernel record refers to undefined name id {0}")]
    UndefinedName(u32),
}

/// What the launcher knows that the spool does not.
#[derive(Debug, Clone, Default)]
pub struct ConvertOptions {
    /// Job name; `None` keeps the one in the spool.
    pub job: Option<String>,
    /// Priority; `None` keeps the one in the spool.
    pub priority: Option<u8>,
    /// `producer` metadata, e.g. `fikit-profile 0.1.0`.
    pub producer: String,
}

/// A converted trace and what the conversion noticed.
#[derive(Debug, Clone)]
pub struct Converted {
    /// The trace, sorted.
    pub trace: Trace,
    /// Messages for the user: collector notes, repairs made.
    pub notes: Vec<String>,
}

/// Runtime callback names carry CUPTI's API version (`cudaLaunchKernel_v7000`);
/// the function is `cudaLaunchKernel`. Driver names are real symbols (`cuMemcpyHtoD_v2`) and kept.
pub fn api_function_name(domain: Domain, cupti_name: &str) -> String {
    if domain == Domain::Runtime
        && let Some(i) = cupti_name.rfind("_v")
    {
        let digits = &cupti_name[i + 2..];
        if digits.len() >= 4 && digits.bytes().all(|b| b.is_ascii_digit()) {
            return cupti_name[..i].to_string();
        }
    }
    cupti_name.to_string()
}

/// The demangled form of a kernel name, or the name itself when it is not a mangled C++ name.
pub fn demangle(name: &str) -> String {
    if !name.starts_with("_Z") {
        return name.to_string();
    }
    cpp_demangle::Symbol::new(name)
        .ok()
        .and_then(|s| s.demangle(&cpp_demangle::DemangleOptions::default()).ok())
        .unwrap_or_else(|| name.to_string())
}

fn copy_kind(k: u8) -> CopyKind {
    match k {
        1 => CopyKind::HtoD,
        2 => CopyKind::DtoH,
        8 => CopyKind::DtoD,
        9 => CopyKind::HtoH,
        10 => CopyKind::PtoP,
        _ => CopyKind::Other,
    }
}

fn sync_kind(t: u32) -> SyncKind {
    SyncKind::from_cupti(i64::from(t))
}

/// `13000` → `13.0`.
pub fn cuda_version_string(v: u32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

fn ns(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// `fikit.cuda_version` and where it came from: the program's runtime when
/// the collector found it, else the driver's, else `unknown`.
pub fn cuda_version_of(
    runtime: Option<u32>,
    driver: Option<u32>,
) -> (String, Option<VersionSource>) {
    match (runtime, driver) {
        (Some(v), _) => (cuda_version_string(v), Some(VersionSource::Runtime)),
        (None, Some(v)) => (cuda_version_string(v), Some(VersionSource::Driver)),
        (None, None) => ("unknown".into(), None),
    }
}

/// True when the spool recorded any GPU operation.
pub fn has_gpu_work(spool: &Spool) -> bool {
    spool
        .records
        .iter()
        .any(|r| matches!(r, Record::Kernel(_) | Record::MemOp(_)))
}

/// Why the collector recorded nothing, when it stopped at start-up (its note
/// without [`fikit_spool::STOPPED_PREFIX`]).
pub fn stopped_at_start(spool: &Spool) -> Option<&str> {
    spool.records.iter().find_map(|r| match r {
        Record::Note { text } => text.strip_prefix(fikit_spool::STOPPED_PREFIX),
        _ => None,
    })
}

/// The start record of a spool.
pub fn start_record(spool: &Spool) -> Option<&fikit_spool::ProcessStart> {
    spool.records.iter().find_map(|r| match r {
        Record::Start(s) => Some(s),
        _ => None,
    })
}

/// Converts one spool into a trace.
pub fn spool_to_trace(spool: &Spool, opts: &ConvertOptions) -> Result<Converted, ConvertError> {
    let start = start_record(spool).ok_or(ConvertError::NoStart)?;
    let mut notes = Vec::new();
    let mut strings: HashMap<u32, &str> = HashMap::new();
    let mut api_names: HashMap<(Domain, u32), String> = HashMap::new();
    let mut devices: Vec<&fikit_spool::Device> = Vec::new();
    let mut dropped = 0u64;
    let mut end = None;
    let mut runtime_version = None;
    // The metrics pass's figures, the first for each key.
    let mut kernel_metrics = std::collections::BTreeMap::new();
    for r in &spool.records {
        match r {
            Record::String { id, text } => {
                strings.insert(*id, text);
            }
            Record::ApiName { domain, cbid, name } => {
                api_names.insert((*domain, *cbid), api_function_name(*domain, name));
            }
            Record::Device(d) => devices.push(d),
            Record::Dropped { total } => dropped = dropped.max(*total),
            Record::Note { text } => notes.push(format!("collector: {text}")),
            Record::End(e) => end = Some(*e),
            Record::CudaRuntime { version } => runtime_version = Some(*version),
            Record::KernelMetrics {
                kernel_key,
                dram_read_bytes,
                dram_write_bytes,
                sm_issue_bp,
                l2_bytes,
            } => {
                kernel_metrics
                    .entry(*kernel_key)
                    .or_insert(fikit_trace::KernelMetrics {
                        dram_read_bytes: *dram_read_bytes,
                        dram_write_bytes: *dram_write_bytes,
                        sm_issue_bp: sm_issue_bp.map(|s| s.min(10_000)),
                        l2_bytes: *l2_bytes,
                    });
            }
            _ => {}
        }
    }
    if let Some(e) = end {
        dropped = dropped.max(e.dropped_records);
        if e.incomplete_records > 0 {
            notes.push(format!(
                "{} records had no valid end time (work still running at the final flush) and were left out",
                e.incomplete_records
            ));
        }
    }

    // API calls, and the launching call of each correlation id: the runtime
    // call when both a runtime and a driver call carry it, else the earliest.
    let mut api_calls = Vec::new();
    let mut by_corr: HashMap<u32, usize> = HashMap::new();
    for r in &spool.records {
        if let Record::Api(a) = r {
            let name = api_names
                .get(&(a.domain, a.cbid))
                .cloned()
                .unwrap_or_else(|| format!("cbid{}", a.cbid));
            let call = ApiCall {
                domain: match a.domain {
                    Domain::Runtime => ApiDomain::Runtime,
                    Domain::Driver => ApiDomain::Driver,
                },
                name,
                start_ns: ns(a.start),
                end_ns: ns(a.end).max(ns(a.start)),
                thread_id: a.thread_id,
                correlation_id: a.correlation,
            };
            let idx = api_calls.len();
            api_calls.push(call);
            match by_corr.get(&a.correlation) {
                None => {
                    by_corr.insert(a.correlation, idx);
                }
                Some(&old) => {
                    let o: &ApiCall = &api_calls[old];
                    let n: &ApiCall = &api_calls[idx];
                    let better = (n.domain == ApiDomain::Runtime && o.domain != ApiDomain::Runtime)
                        || (n.domain == o.domain && n.start_ns < o.start_ns);
                    if better {
                        by_corr.insert(a.correlation, idx);
                    }
                }
            }
        }
    }
    let launch = |corr: u32| -> Option<HostCall> {
        by_corr.get(&corr).map(|&i| {
            let c = &api_calls[i];
            HostCall {
                start_ns: c.start_ns,
                end_ns: c.end_ns,
                thread_id: c.thread_id,
            }
        })
    };

    let mut kernels = Vec::new();
    let mut memops = Vec::new();
    let mut syncs = Vec::new();
    let mut sync_calls = Vec::new();
    let mut kernels_per_device: HashMap<u32, usize> = HashMap::new();
    for r in &spool.records {
        match r {
            Record::Kernel(k) => {
                let name = *strings
                    .get(&k.name_id)
                    .ok_or(ConvertError::UndefinedName(k.name_id))?;
                *kernels_per_device.entry(k.device).or_default() += 1;
                kernels.push(Kernel {
                    start_ns: ns(k.start),
                    end_ns: ns(k.end),
                    placement: Placement {
                        device: k.device,
                        context: k.context,
                        stream: k.stream,
                    },
                    correlation_id: k.correlation,
                    name: name.to_string(),
                    demangled_name: demangle(name),
                    grid: k.grid,
                    block: k.block,
                    registers_per_thread: k.registers,
                    static_shared_bytes: k.static_shared,
                    dynamic_shared_bytes: k.dynamic_shared,
                    launch: launch(k.correlation),
                    kernel_key: kernel_key(
                        name,
                        k.grid,
                        k.block,
                        k.static_shared,
                        k.dynamic_shared,
                        k.registers,
                    ),
                    shared_config_bytes: k.shared_executed,
                });
            }
            Record::MemOp(m) => memops.push(MemOp {
                start_ns: ns(m.start),
                end_ns: ns(m.end),
                placement: Placement {
                    device: m.device,
                    context: m.context,
                    stream: m.stream,
                },
                correlation_id: m.correlation,
                copy_kind: m.copy_kind.map(copy_kind),
                bytes: m.bytes,
                launch: launch(m.correlation),
            }),
            Record::Sync(s) => syncs.push(Sync {
                kind: sync_kind(s.sync_type),
                start_ns: ns(s.start),
                end_ns: ns(s.end),
                context: s.context,
                stream: s.stream,
                thread_id: launch(s.correlation).map(|h| h.thread_id),
                correlation_id: s.correlation,
            }),
            Record::SyncCall {
                correlation,
                sync_type,
                context,
                stream,
            } => sync_calls.push((*correlation, *sync_type, *context, *stream)),
            _ => {}
        }
    }
    // Without CUPTI's synchronization activity, the synchronizing API calls
    // (recorded through callbacks) are the synchronizations.
    if syncs.is_empty() {
        for (corr, t, context, stream) in sync_calls {
            if let Some(h) = launch(corr) {
                syncs.push(Sync {
                    kind: sync_kind(t),
                    start_ns: h.start_ns,
                    end_ns: h.end_ns,
                    context,
                    stream,
                    thread_id: Some(h.thread_id),
                    correlation_id: corr,
                });
            }
        }
    }
    // Neither (API calls recorded as CUPTI activity, without its
    // synchronization activity): the synchronizing calls among the recorded
    // API calls are the synchronizations, one per correlation id. The record
    // names no stream (`None`: replay waits for the latest work of any
    // stream); the context is that of the thread's latest GPU operation.
    if syncs.is_empty() {
        // The collector's own name → synchronization-type table.
        syncs = fikit_trace::repair::syncs_from_calls(
            &api_calls,
            by_corr.values().copied(),
            &kernels,
            &memops,
            |name| fikit_trace::api::sync_type_of(name).map(sync_kind),
        );
    }

    // Kernels of one stream run one after another: keep the trace in stream order.
    notes.extend(fikit_trace::repair::clamp_stream_order(&mut kernels));

    let main_device = kernels_per_device
        .iter()
        .max_by_key(|(d, n)| (**n, std::cmp::Reverse(**d)))
        .map(|(d, _)| *d)
        .unwrap_or(0);
    let dev = devices
        .iter()
        .find(|d| d.ordinal == main_device)
        .or(devices.first());
    let device = match dev {
        Some(d) => DeviceInfo {
            name: d.name.clone(),
            sm_count: d.sm_count,
            max_threads_per_sm: d.max_threads_per_sm,
            max_registers_per_sm: d.max_registers_per_sm,
            max_shared_memory_per_sm: d.max_shared_memory_per_sm,
            max_blocks_per_sm: d.max_blocks_per_sm,
        },
        None => {
            notes.push("the device's properties were not recorded".into());
            DeviceInfo {
                name: "unknown".into(),
                sm_count: 0,
                max_threads_per_sm: 0,
                max_registers_per_sm: 0,
                max_shared_memory_per_sm: 0,
                max_blocks_per_sm: 0,
            }
        }
    };
    let driver = dev.map(|d| cuda_version_string(d.driver_version));
    let (cuda_version, cuda_version_source) =
        cuda_version_of(runtime_version, dev.map(|d| d.driver_version));
    if let fikit_spool::Tail::Truncated { offset, bytes } = spool.tail {
        notes.push(format!(
            "{bytes} bytes of the spool from offset {offset} were not whole records and were \
             skipped{}",
            if spool.is_complete() {
                " (corrupt: the records in them are lost)"
            } else {
                " (cut off when the process died)"
            }
        ));
    }
    if !spool.is_complete() {
        notes.push(
            "the capture did not end cleanly (the process was killed or exited without \
             running exit handlers): the trace holds what was flushed, up to the last 100 ms"
                .into(),
        );
    }
    let job = opts
        .job
        .clone()
        .filter(|j| !j.is_empty())
        .unwrap_or_else(|| start.job.clone());
    let meta = Metadata {
        format_version: FORMAT_VERSION,
        job_name: job,
        priority: opts.priority.unwrap_or(start.priority).min(9),
        pid: start.pid,
        command_line: start.command_line.clone(),
        host: start.host.clone(),
        device,
        driver_version: driver.clone().unwrap_or_else(|| "unknown".into()),
        cuda_version,
        cuda_version_source,
        cupti_version: start.cupti_version,
        clock_offset_ns: start
            .realtime_ns
            .saturating_sub(ns(start.cupti_timestamp_ns)),
        dropped_records: dropped,
        capture_complete: spool.is_complete(),
        api_recording: match start.api_mode {
            ApiMode::None => ApiRecording::None,
            ApiMode::Selected => ApiRecording::Selected,
            ApiMode::All => ApiRecording::All,
        },
        producer: opts.producer.clone(),
    };
    let mut trace = Trace {
        meta,
        kernels,
        memops,
        api_calls,
        syncs,
        kernel_metrics,
    };
    trace.sort();
    Ok(Converted { trace, notes })
}

/// A file-name-safe form of a job name.
pub fn file_stem(job: &str) -> String {
    let s: String = job
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        format!("job{s}")
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_names_lose_the_api_version() {
        assert_eq!(
            api_function_name(Domain::Runtime, "cudaLaunchKernel_v7000"),
            "cudaLaunchKernel"
        );
        assert_eq!(
            api_function_name(Domain::Runtime, "cudaLaunchKernelExC_v11060"),
            "cudaLaunchKernelExC"
        );
        assert_eq!(
            api_function_name(Domain::Runtime, "cudaMemcpyAsync_ptsz_v7000"),
            "cudaMemcpyAsync_ptsz"
        );
        assert_eq!(
            api_function_name(Domain::Driver, "cuMemcpyHtoD_v2"),
            "cuMemcpyHtoD_v2"
        );
        assert_eq!(
            api_function_name(Domain::Runtime, "cudaMemcpy_v2x"),
            "cudaMemcpy_v2x"
        );
    }

    #[test]
    fn demangling() {
        assert_eq!(demangle("_Z6kernelPfi"), "kernel(float*, int)");
        assert_eq!(demangle("triton_poi_fused_0"), "triton_poi_fused_0");
        assert_eq!(demangle("_Znot valid"), "_Znot valid");
    }

    #[test]
    fn versions_and_stems() {
        assert_eq!(cuda_version_string(13000), "13.0");
        assert_eq!(
            cuda_version_of(Some(12080), Some(13000)),
            ("12.8".to_string(), Some(VersionSource::Runtime))
        );
        assert_eq!(
            cuda_version_of(None, Some(13000)),
            ("13.0".to_string(), Some(VersionSource::Driver))
        );
        assert_eq!(cuda_version_of(None, None), ("unknown".to_string(), None));
        assert_eq!(cuda_version_string(12080), "12.8");
        assert_eq!(file_stem("resnet50 bs1/eval"), "resnet50_bs1_eval");
        assert_eq!(file_stem(""), "job");
        assert_eq!(file_stem(".."), "job..");
    }
}
