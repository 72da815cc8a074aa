//! Spool → [`Trace`]: reads the spool's records into a [`TraceBuilder`]
//! (which joins each GPU operation to the API call that issued it and
//! derives synchronizations) and fills the metadata.

use std::collections::HashMap;

use fikit_spool::{ApiMode, Domain, Record, Spool};
use fikit_trace::build::{self, SyncCall};
use fikit_trace::{
    ApiCall, ApiDomain, ApiRecording, CopyKind, DeviceInfo, FORMAT_VERSION, Kernel, MAX_PRIORITY,
    MemOp, Metadata, Placement, Sync, SyncKind, Trace, TraceBuilder, VersionSource, kernel_key,
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
    match domain {
        Domain::Runtime => build::strip_api_version(cupti_name).to_string(),
        Domain::Driver => cupti_name.to_string(),
    }
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

fn sync_kind(t: u32) -> SyncKind {
    SyncKind::from_cupti(i64::from(t))
}

/// `13000` → `13.0`.
pub fn cuda_version_string(v: u32) -> String {
    build::cuda_version_string(u64::from(v))
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
    build::cuda_version_of(
        runtime.map(cuda_version_string),
        driver.map(cuda_version_string),
    )
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

/// What a spool says besides its events: names, devices, counts, notes.
struct Facts<'s> {
    strings: HashMap<u32, &'s str>,
    api_names: HashMap<(Domain, u32), String>,
    devices: Vec<&'s fikit_spool::Device>,
    dropped: u64,
    runtime_version: Option<u32>,
    /// Collector notes and what the end record says.
    notes: Vec<String>,
}

impl<'s> Facts<'s> {
    /// The facts of `spool`; the metrics pass's figures go to `builder`.
    fn scan(spool: &'s Spool, builder: &mut TraceBuilder) -> Self {
        let mut facts = Facts {
            strings: HashMap::new(),
            api_names: HashMap::new(),
            devices: Vec::new(),
            dropped: 0,
            runtime_version: None,
            notes: Vec::new(),
        };
        let mut end = None;
        for r in &spool.records {
            match r {
                Record::String { id, text } => {
                    facts.strings.insert(*id, text);
                }
                Record::ApiName { domain, cbid, name } => {
                    facts
                        .api_names
                        .insert((*domain, *cbid), api_function_name(*domain, name));
                }
                Record::Device(d) => facts.devices.push(d),
                Record::Dropped { total } => facts.dropped = facts.dropped.max(*total),
                Record::Note { text } => facts.notes.push(format!("collector: {text}")),
                Record::End(e) => end = Some(*e),
                Record::CudaRuntime { version } => facts.runtime_version = Some(*version),
                Record::KernelMetrics {
                    kernel_key,
                    dram_read_bytes,
                    dram_write_bytes,
                    sm_issue_bp,
                    l2_bytes,
                } => {
                    // The metrics pass's figures, the first for each key.
                    builder.kernel_metrics(
                        *kernel_key,
                        fikit_trace::KernelMetrics {
                            dram_read_bytes: *dram_read_bytes,
                            dram_write_bytes: *dram_write_bytes,
                            sm_issue_bp: sm_issue_bp.map(|s| s.min(10_000)),
                            l2_bytes: *l2_bytes,
                        },
                    );
                }
                _ => {}
            }
        }
        if let Some(e) = end {
            facts.dropped = facts.dropped.max(e.dropped_records);
            if e.incomplete_records > 0 {
                facts.notes.push(format!(
                    "{} records had no valid end time (work still running at the final flush) and were left out",
                    e.incomplete_records
                ));
            }
        }
        facts
    }
}

/// Adds the spool's API calls, then its kernels, copies, memsets,
/// synchronizations and synchronizing calls, to `builder`.
fn add_events(
    spool: &Spool,
    facts: &Facts,
    builder: &mut TraceBuilder,
) -> Result<(), ConvertError> {
    for r in &spool.records {
        if let Record::Api(a) = r {
            let name = facts
                .api_names
                .get(&(a.domain, a.cbid))
                .cloned()
                .unwrap_or_else(|| format!("cbid{}", a.cbid));
            builder.api_call(ApiCall {
                domain: match a.domain {
                    Domain::Runtime => ApiDomain::Runtime,
                    Domain::Driver => ApiDomain::Driver,
                },
                name,
                start_ns: ns(a.start),
                end_ns: ns(a.end).max(ns(a.start)),
                thread_id: a.thread_id,
                correlation_id: a.correlation,
            });
        }
    }
    for r in &spool.records {
        match r {
            Record::Kernel(k) => {
                let name = *facts
                    .strings
                    .get(&k.name_id)
                    .ok_or(ConvertError::UndefinedName(k.name_id))?;
                builder.kernel(Kernel {
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
                    launch: None,
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
            Record::MemOp(m) => {
                builder.memop(MemOp {
                    start_ns: ns(m.start),
                    end_ns: ns(m.end),
                    placement: Placement {
                        device: m.device,
                        context: m.context,
                        stream: m.stream,
                    },
                    correlation_id: m.correlation,
                    copy_kind: m.copy_kind.map(|k| CopyKind::from_cupti(i64::from(k))),
                    bytes: m.bytes,
                    launch: None,
                });
            }
            Record::Sync(s) => {
                builder.sync(Sync {
                    kind: sync_kind(s.sync_type),
                    start_ns: ns(s.start),
                    end_ns: ns(s.end),
                    context: s.context,
                    stream: s.stream,
                    thread_id: None,
                    correlation_id: s.correlation,
                });
            }
            // Without CUPTI's synchronization activity, the synchronizing API
            // calls (recorded through callbacks) are the synchronizations.
            Record::SyncCall {
                correlation,
                sync_type,
                context,
                stream,
            } => {
                builder.sync_call(SyncCall {
                    correlation_id: *correlation,
                    kind: sync_kind(*sync_type),
                    context: *context,
                    stream: *stream,
                });
            }
            _ => {}
        }
    }
    Ok(())
}

/// The limits of a recorded device.
fn device_info(d: &fikit_spool::Device) -> DeviceInfo {
    DeviceInfo {
        name: d.name.clone(),
        sm_count: d.sm_count,
        max_threads_per_sm: d.max_threads_per_sm,
        max_registers_per_sm: d.max_registers_per_sm,
        max_shared_memory_per_sm: d.max_shared_memory_per_sm,
        max_blocks_per_sm: d.max_blocks_per_sm,
    }
}

/// Converts one spool into a trace.
pub fn spool_to_trace(spool: &Spool, opts: &ConvertOptions) -> Result<Converted, ConvertError> {
    let start = start_record(spool).ok_or(ConvertError::NoStart)?;
    let mut builder = TraceBuilder::new();
    let facts = Facts::scan(spool, &mut builder);
    add_events(spool, &facts, &mut builder)?;

    // The device that ran the most kernels (device 0 without kernels), else the first recorded.
    let main_device = builder.main_device().unwrap_or(0);
    let dev = facts
        .devices
        .iter()
        .find(|d| d.ordinal == main_device)
        .or(facts.devices.first());
    let device = dev.map_or_else(DeviceInfo::unknown, |d| device_info(d));
    let driver = dev.map(|d| cuda_version_string(d.driver_version));
    let (cuda_version, cuda_version_source) =
        cuda_version_of(facts.runtime_version, dev.map(|d| d.driver_version));
    let job = opts
        .job
        .clone()
        .filter(|j| !j.is_empty())
        .unwrap_or_else(|| start.job.clone());
    let meta = Metadata {
        format_version: FORMAT_VERSION,
        job_name: job,
        priority: opts.priority.unwrap_or(start.priority).min(MAX_PRIORITY),
        pid: start.pid,
        command_line: start.command_line.clone(),
        host: start.host.clone(),
        device,
        driver_version: driver.unwrap_or_else(|| "unknown".into()),
        cuda_version,
        cuda_version_source,
        cupti_version: start.cupti_version,
        clock_offset_ns: start
            .realtime_ns
            .saturating_sub(ns(start.cupti_timestamp_ns)),
        dropped_records: facts.dropped,
        capture_complete: spool.is_complete(),
        api_recording: match start.api_mode {
            ApiMode::None => ApiRecording::None,
            ApiMode::Selected => ApiRecording::Selected,
            ApiMode::All => ApiRecording::All,
        },
        producer: opts.producer.clone(),
        characterization: None,
    };
    // Kernels of one stream run one after another: the builder keeps the
    // trace in stream order (and notes what it moved).
    let built = builder.build(meta);
    let mut notes = facts.notes;
    notes.extend(built.notes);
    if dev.is_none() {
        notes.push("the device's properties were not recorded".into());
    }
    notes.extend(spool_notes(spool));
    Ok(Converted {
        trace: built.trace,
        notes,
    })
}

/// What the spool's own state says: bytes skipped, a capture cut short.
fn spool_notes(spool: &Spool) -> Vec<String> {
    let mut notes = Vec::new();
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
    notes
}

/// A file-name-safe form of a job name.
pub use fikit_trace::build::file_stem;

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
