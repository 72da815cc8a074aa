//! `fikit-sim import`: traces of other profilers as fikit traces (format v1).
//!
//! Two sources, each a module that reads its file into per-process [`Capture`]s
//! of fikit rows; [`finish`] then does, with the trace builder
//! (`fikit_trace::build`), what `fikit-profile`'s conversion does with a spool: joins each GPU operation to the API call with its correlation
//! id (the `launch_*` columns), keeps the API calls fikit-profile records by
//! default, takes the synchronizations from the source's synchronization
//! records or else from its synchronizing API calls, moves kernel starts that
//! overlap the previous kernel on their stream (with a note), and fills the
//! metadata.
//!
//! - [`kineto`]: PyTorch profiler traces (Kineto's Chrome-trace JSON, as
//!   `torch.profiler`'s `export_chrome_trace` writes it, optionally gzipped);
//! - [`nsys`]: Nsight Systems SQLite exports (`nsys export --type sqlite`).
//!
//! Every error names the file and the event or row and says what is wrong.

pub mod kineto;
pub mod nsys;
#[cfg(test)]
mod read_tests;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use fikit_trace::build::{Built, cuda_version_of};
use fikit_trace::{
    ApiCall, ApiDomain, ApiRecording, DeviceInfo, FORMAT_VERSION, Kernel, MemOp, Metadata, Sync,
    Trace, TraceBuilder, TraceError,
};

/// The formats `import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceFormat {
    /// PyTorch profiler (Kineto) Chrome-trace JSON, optionally gzipped.
    Kineto,
    /// Nsight Systems SQLite export.
    Nsys,
}

impl SourceFormat {
    /// The name used on the command line and in the `producer` metadata.
    pub fn name(self) -> &'static str {
        match self {
            SourceFormat::Kineto => "kineto",
            SourceFormat::Nsys => "nsys",
        }
    }

    /// The format a file's first bytes show: SQLite's header for an Nsight
    /// Systems export, gzip's magic bytes or a JSON object or array for Kineto.
    pub fn detect(head: &[u8]) -> Option<SourceFormat> {
        if head.starts_with(nsys::SQLITE_MAGIC) {
            return Some(SourceFormat::Nsys);
        }
        if head.starts_with(&kineto::GZIP_MAGIC) {
            return Some(SourceFormat::Kineto);
        }
        let text = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
        match text.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'{') | Some(b'[') => Some(SourceFormat::Kineto),
            _ => None,
        }
    }
}

/// What `import` does, independent of the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportOptions {
    /// The source format; `None` detects it from each file's contents.
    pub format: Option<SourceFormat>,
    /// Job name; `None` takes each file's name without its extensions.
    pub job: Option<String>,
    /// Priority, 0 (highest) to 9 (lowest).
    pub priority: u8,
}

/// Why a file could not be imported: always about the input.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct ImportError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong, and where in the file.
    pub message: String,
}

impl ImportError {
    /// An error about `path`.
    pub fn new(path: &Path, message: impl Into<String>) -> Self {
        ImportError {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}

/// One imported process: a trace and what the import noticed.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The trace, sorted.
    pub trace: Trace,
    /// Messages for the user: defaults used, repairs made, what the source lacks.
    pub notes: Vec<String>,
}

/// One process of a source file, as fikit rows before the join.
#[derive(Debug, Clone, Default)]
pub(crate) struct Capture {
    /// Process id.
    pub pid: u32,
    /// Kernels; `launch` is filled by [`finish`].
    pub kernels: Vec<Kernel>,
    /// Copies and memsets; `launch` is filled by [`finish`].
    pub memops: Vec<MemOp>,
    /// Every API call the source recorded for the process.
    pub api_calls: Vec<ApiCall>,
    /// The source's own synchronization records (`thread_id` filled by [`finish`]).
    pub syncs: Vec<Sync>,
}

/// What a source file holds besides its processes' events.
#[derive(Debug, Clone, Default)]
pub(crate) struct Source {
    /// Devices by CUDA ordinal.
    pub devices: BTreeMap<u32, DeviceInfo>,
    /// CUDA driver version, `major.minor`.
    pub driver_version: Option<String>,
    /// CUDA runtime version, `major.minor`.
    pub cuda_version: Option<String>,
    /// CUPTI version.
    pub cupti_version: Option<u32>,
    /// Add to a time for Unix-epoch nanoseconds, when the source says.
    pub clock_offset_ns: Option<i64>,
    /// Host name.
    pub host: Option<String>,
    /// Command line (or process name) per pid.
    pub command_lines: HashMap<u32, Vec<String>>,
    /// True when the source recorded API calls at all.
    pub has_api: bool,
    /// Notes about the whole file.
    pub notes: Vec<String>,
}

/// Imports one file: one trace per process that ran GPU work.
pub fn import_file(path: &Path, opts: &ImportOptions) -> Result<Vec<Imported>, ImportError> {
    let format = match opts.format {
        Some(f) => f,
        None => detect_file(path)?,
    };
    let (source, captures) = match format {
        SourceFormat::Kineto => kineto::read(path)?,
        SourceFormat::Nsys => nsys::read(path)?,
    };
    let job = opts
        .job
        .clone()
        .filter(|j| !j.is_empty())
        .unwrap_or_else(|| job_from_path(path));
    let mut out = Vec::new();
    let mut idle = Vec::new();
    for capture in captures {
        if capture.kernels.is_empty() && capture.memops.is_empty() {
            idle.push(capture.pid);
            continue;
        }
        out.push(finish(capture, &source, format, &job, opts.priority));
    }
    if out.is_empty() {
        return Err(ImportError::new(
            path,
            format!(
                "no GPU events: the file holds no kernel, memory copy or memset{}",
                match format {
                    SourceFormat::Kineto =>
                        " (events with `cat` \"kernel\", \"gpu_memcpy\" or \"gpu_memset\"; was the \
                         profiler run with ProfilerActivity.CUDA?)",
                    SourceFormat::Nsys =>
                        " (rows in CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY or _MEMSET; was nsys run \
                         with --trace=cuda?)",
                }
            ),
        ));
    }
    if !idle.is_empty() {
        let pids: Vec<String> = idle.iter().map(u32::to_string).collect();
        out[0].notes.push(format!(
            "processes {} made API calls but ran no GPU work; no trace for them",
            pids.join(", ")
        ));
    }
    for n in source.notes.iter().rev() {
        for imported in &mut out {
            imported.notes.insert(0, n.clone());
        }
    }
    Ok(out)
}

/// Detects a file's format from its first bytes.
pub fn detect_file(path: &Path) -> Result<SourceFormat, ImportError> {
    use std::io::Read;
    let mut head = Vec::with_capacity(64);
    std::fs::File::open(path)
        .and_then(|f| f.take(64).read_to_end(&mut head))
        .map_err(|e| ImportError::new(path, e.to_string()))?;
    if head.is_empty() {
        return Err(ImportError::new(path, "empty file (0 bytes)"));
    }
    if head.starts_with(b"PAR1") {
        return Err(ImportError::new(
            path,
            "a Parquet file, not a profiler's trace: a fikit trace needs no import \
             (fikit-sim reads it as it is; `fikit-sim inspect` checks it)",
        ));
    }
    SourceFormat::detect(&head).ok_or_else(|| {
        ImportError::new(
            path,
            "not a format import reads: neither JSON (a Kineto/PyTorch profiler trace, \
             possibly gzipped) nor SQLite (an Nsight Systems export); choose one with --format",
        )
    })
}

/// The job name a file gets by default: its name without the extensions
/// profilers add (`.gz`, `.json`, `.pt.trace`, `.sqlite`, `.db`).
pub fn job_from_path(path: &Path) -> String {
    let mut name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for ext in [".gz", ".json", ".pt.trace", ".trace", ".sqlite", ".db"] {
        if name.len() > ext.len() && name.to_ascii_lowercase().ends_with(ext) {
            name.truncate(name.len() - ext.len());
        }
    }
    if name.is_empty() { "job".into() } else { name }
}

/// A file-name-safe form of a job name (as `fikit-profile` names its traces).
pub use fikit_trace::build::file_stem;

/// `DIR/BASE.parquet`, or `DIR/BASE-2.parquet`, `-3`, … when taken: an import
/// never replaces an existing file.
pub fn unused_path(dir: &Path, base: &str) -> PathBuf {
    (1u32..)
        .map(|n| match n {
            1 => dir.join(format!("{base}.{}", fikit_trace::EXTENSION)),
            n => dir.join(format!("{base}-{n}.{}", fikit_trace::EXTENSION)),
        })
        .find(|p| !p.exists())
        .expect("some numbered name is free")
}

/// Writes an imported trace into `dir` as `<job>-<pid>.parquet` (numbered when
/// that name is taken) and reads it back through the validating reader; a
/// trace that fails either is removed, so nothing invalid is left.
pub fn write_imported(dir: &Path, imported: &Imported) -> Result<PathBuf, TraceError> {
    let meta = &imported.trace.meta;
    let path = unused_path(dir, &format!("{}-{}", file_stem(&meta.job_name), meta.pid));
    let checked = fikit_trace::write_trace(&path, &imported.trace)
        .and_then(|()| fikit_trace::read_trace(&path).map(drop));
    if let Err(e) = checked {
        let _ = std::fs::remove_file(&path);
        return Err(e);
    }
    Ok(path)
}

/// Runtime API names in CUPTI's form carry the API version
/// (`cudaLaunchKernel_v7000`); the function is `cudaLaunchKernel`.
pub use fikit_trace::build::strip_api_version as api_function_name;

/// The API domain of a function name: `cuda*` is the runtime, other `cu*` the driver.
pub fn api_domain_of(name: &str) -> ApiDomain {
    if !name.starts_with("cuda") && name.starts_with("cu") {
        ApiDomain::Driver
    } else {
        ApiDomain::Runtime
    }
}

/// The synchronization a synchronizing API call makes, or `None` for a call
/// that does not synchronize (the table `fikit-profile`'s collector uses).
pub use fikit_trace::build::sync_kind_of_api;

pub use fikit_trace::api::is_selected_api;

/// Resident blocks per SM by compute capability (CUDA C++ Programming Guide,
/// "Technical Specifications per Compute Capability"); `None` when not in the table.
pub fn max_blocks_per_sm(major: u32, minor: u32) -> Option<u32> {
    match (major, minor) {
        (5 | 6, _) | (7, 0) | (7, 2) | (8, 0) | (9, 0) => Some(32),
        (7, 5) | (8, 6) | (8, 7) => Some(16),
        (8, 9) => Some(24),
        _ => None,
    }
}

/// `13000` → `13.0` (CUDA's version numbers).
pub use fikit_trace::build::cuda_version_string;

/// Names the device limits that are 0 (unknown) in `d`.
pub(crate) fn unknown_limits(d: &DeviceInfo) -> Vec<&'static str> {
    [
        ("sm_count", d.sm_count),
        ("max_threads_per_sm", d.max_threads_per_sm),
        ("max_registers_per_sm", d.max_registers_per_sm),
        ("max_shared_memory_per_sm", d.max_shared_memory_per_sm),
        ("max_blocks_per_sm", d.max_blocks_per_sm),
    ]
    .into_iter()
    .filter(|(_, v)| *v == 0)
    .map(|(k, _)| k)
    .collect()
}

/// Builds the trace of one process with the builder `fikit-profile`'s
/// conversion uses: joins launches, derives synchronizations, keeps the API
/// calls fikit-profile records by default, keeps the stream order; then fills
/// the metadata.
pub(crate) fn finish(
    capture: Capture,
    source: &Source,
    format: SourceFormat,
    job: &str,
    priority: u8,
) -> Imported {
    let Capture {
        pid,
        kernels,
        memops,
        api_calls,
        syncs,
    } = capture;
    let mut builder = TraceBuilder::new();
    for k in kernels {
        builder.kernel(k);
    }
    for m in memops {
        builder.memop(m);
    }
    for a in api_calls {
        builder.api_call(a);
    }
    for s in syncs {
        builder.sync(s);
    }
    builder
        .note_unlaunched(source.has_api)
        .keep_selected_api_calls();

    let mut device_notes = Vec::new();
    let device = main_device(&builder, source, &mut device_notes);
    let (cuda_version, cuda_version_source) =
        cuda_version_of(source.cuda_version.clone(), source.driver_version.clone());
    let meta = Metadata {
        format_version: FORMAT_VERSION,
        job_name: job.to_string(),
        priority,
        pid,
        command_line: source.command_lines.get(&pid).cloned().unwrap_or_default(),
        host: source.host.clone().unwrap_or_else(|| "unknown".into()),
        device,
        driver_version: source
            .driver_version
            .clone()
            .unwrap_or_else(|| "unknown".into()),
        cuda_version,
        cuda_version_source,
        cupti_version: source.cupti_version.unwrap_or(0),
        clock_offset_ns: source.clock_offset_ns.unwrap_or(0),
        dropped_records: 0,
        capture_complete: true,
        api_recording: if source.has_api {
            ApiRecording::Selected
        } else {
            ApiRecording::None
        },
        producer: format!(
            "fikit-sim import ({}) {}",
            format.name(),
            env!("CARGO_PKG_VERSION")
        ),
        characterization: None,
    };
    let Built { trace, mut notes } = builder.build(meta);
    notes.extend(device_notes);
    if source.has_api {
        notes.extend(shared_launch_note(&trace));
    }
    Imported { trace, notes }
}

/// A note where kernels share a correlation id outside a graph launch: one
/// launch call launches one kernel, so the source's ids are wrong and the
/// kernels' launches (the job's host steps and iterations) cannot be told
/// apart. Needs the source's API calls (which name the graph launches).
fn shared_launch_note(trace: &Trace) -> Option<String> {
    let mut per_id: HashMap<u32, usize> = HashMap::new();
    for k in trace.kernels.iter().filter(|k| k.correlation_id != 0) {
        *per_id.entry(k.correlation_id).or_default() += 1;
    }
    let graphs: HashSet<u32> = trace
        .api_calls
        .iter()
        .filter(|a| a.name.contains("Graph"))
        .map(|a| a.correlation_id)
        .collect();
    let shared: usize = per_id
        .iter()
        .filter(|&(id, &n)| n > 1 && !graphs.contains(id))
        .map(|(_, &n)| n)
        .sum();
    (shared > 0).then(|| {
        format!(
            "{shared} of {} kernels share their correlation id with another kernel outside any \
             graph launch (a launch call launches one kernel): their launches cannot be told \
             apart, so the job's host steps and iterations may be wrong",
            trace.kernels.len()
        )
    })
}

/// The device the metadata describes: the one that ran the most kernels
/// (without kernels, the lowest that ran a copy or memset), with notes on
/// what the file does not say about it.
fn main_device(builder: &TraceBuilder, source: &Source, notes: &mut Vec<String>) -> DeviceInfo {
    let per_device = builder.devices();
    let main_device = builder
        .main_device()
        .or_else(|| per_device.keys().next().copied())
        .unwrap_or(0);
    if per_device.len() > 1 {
        notes.push(format!(
            "the process used {} devices; the metadata describes device {main_device}, which ran \
             the most kernels",
            per_device.len()
        ));
    }
    let device = match source.devices.get(&main_device) {
        Some(d) => d.clone(),
        None => {
            notes.push(format!(
                "the file does not describe device {main_device}: its name and limits are \
                 unknown (0); SM demand in replay treats every kernel as filling the GPU"
            ));
            DeviceInfo::unknown()
        }
    };
    let missing = unknown_limits(&device);
    if !missing.is_empty() && device.name != "unknown" {
        notes.push(format!(
            "device limits the file does not give are 0 (unknown): {}",
            missing.join(", ")
        ));
    }
    device
}

#[cfg(test)]
mod tests {
    use super::*;
    use fikit_trace::fixture;
    use fikit_trace::{HostCall, SyncKind};

    #[test]
    fn formats_are_detected_from_the_first_bytes() {
        assert_eq!(
            SourceFormat::detect(b"SQLite format 3\0rest"),
            Some(SourceFormat::Nsys)
        );
        assert_eq!(
            SourceFormat::detect(&[0x1f, 0x8b, 8, 0]),
            Some(SourceFormat::Kineto)
        );
        assert_eq!(
            SourceFormat::detect(b"\n  {\"traceEvents\""),
            Some(SourceFormat::Kineto)
        );
        assert_eq!(SourceFormat::detect(b"[{}]"), Some(SourceFormat::Kineto));
        assert_eq!(SourceFormat::detect(b"PAR1"), None);
        assert_eq!(SourceFormat::detect(b"   "), None);
    }

    #[test]
    fn job_names_lose_profiler_extensions() {
        let j = |p: &str| job_from_path(Path::new(p));
        assert_eq!(j("/tmp/resnet.pt.trace.json.gz"), "resnet");
        assert_eq!(j("run_1.json"), "run_1");
        assert_eq!(j("report1.sqlite"), "report1");
        assert_eq!(j("weird.JSON"), "weird");
        assert_eq!(j(".json"), ".json");
        assert_eq!(j("noext"), "noext");
        assert_eq!(file_stem("a b/c"), "a_b_c");
        assert_eq!(file_stem(".x"), "job.x");
    }

    #[test]
    fn names_and_tables() {
        assert_eq!(
            api_function_name("cudaLaunchKernel_v7000"),
            "cudaLaunchKernel"
        );
        assert_eq!(api_function_name("cuMemcpyHtoD_v2"), "cuMemcpyHtoD_v2");
        assert_eq!(api_domain_of("cuLaunchKernel"), ApiDomain::Driver);
        assert_eq!(api_domain_of("cudaMemcpyAsync"), ApiDomain::Runtime);
        assert_eq!(
            sync_kind_of_api("cudaDeviceSynchronize"),
            Some(SyncKind::ContextSynchronize)
        );
        assert_eq!(
            sync_kind_of_api("cuStreamSynchronize_ptsz"),
            Some(SyncKind::StreamSynchronize)
        );
        assert_eq!(sync_kind_of_api("cudaLaunchKernel"), None);
        assert!(is_selected_api("cudaLaunchKernelExC"));
        assert!(is_selected_api("cudaStreamSynchronize"));
        assert!(!is_selected_api("cudaGetDevice"));
        assert!(!is_selected_api("cudaGraphSynchronize"));
        assert_eq!(max_blocks_per_sm(9, 0), Some(32));
        assert_eq!(max_blocks_per_sm(8, 9), Some(24));
        assert_eq!(max_blocks_per_sm(12, 1), None);
        assert_eq!(cuda_version_string(12080), "12.8");
    }

    #[test]
    fn unused_paths_never_replace_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let first = unused_path(dir.path(), "job-1");
        assert_eq!(first, dir.path().join("job-1.parquet"));
        std::fs::write(&first, b"x").unwrap();
        assert_eq!(
            unused_path(dir.path(), "job-1"),
            dir.path().join("job-1-2.parquet")
        );
    }

    #[test]
    fn overlapping_kernels_are_clamped_with_a_note() {
        let mut ks = vec![
            fixture::kernel("a", 7, 1, None, 0, 1000),
            fixture::kernel("b", 7, 2, None, 900, 1500),
            fixture::kernel("c", 8, 3, None, 100, 200),
            fixture::kernel("d", 7, 4, None, 1200, 1300),
        ];
        let notes: Vec<String> = fikit_trace::repair::clamp_stream_order(&mut ks)
            .into_iter()
            .collect();
        assert_eq!((ks[1].start_ns, ks[1].end_ns), (1000, 1500));
        assert_eq!((ks[2].start_ns, ks[2].end_ns), (100, 200));
        // Wholly inside the previous kernel: it becomes an empty kernel at its end.
        assert_eq!((ks[3].start_ns, ks[3].end_ns), (1500, 1500));
        assert_eq!(notes.len(), 1);
        assert!(notes[0].starts_with("2 kernels"), "{}", notes[0]);
        assert!(notes[0].contains("up to 300 ns"), "{}", notes[0]);
        assert!(notes[0].contains("took 200 ns"), "{}", notes[0]);
    }

    #[test]
    fn finish_joins_launches_derives_syncs_and_filters_calls() {
        let mut capture = Capture {
            pid: 77,
            ..Capture::default()
        };
        capture
            .kernels
            .push(fixture::kernel("k", 7, 5, None, 10_000, 12_000));
        let call = |name: &str, domain, corr, start| ApiCall {
            domain,
            name: name.into(),
            start_ns: start,
            end_ns: start + 500,
            thread_id: 9,
            correlation_id: corr,
        };
        capture.api_calls = vec![
            call("cuLaunchKernel", ApiDomain::Driver, 5, 1_000),
            call("cudaLaunchKernel", ApiDomain::Runtime, 5, 2_000),
            call("cudaGetDevice", ApiDomain::Runtime, 6, 3_000),
            call("cudaDeviceSynchronize", ApiDomain::Runtime, 7, 13_000),
        ];
        let source = Source {
            has_api: true,
            ..Source::default()
        };
        let out = finish(capture, &source, SourceFormat::Kineto, "j", 3);
        let t = &out.trace;
        // The runtime call wins over the driver call of the same correlation id.
        assert_eq!(
            t.kernels[0].launch,
            Some(HostCall {
                start_ns: 2_000,
                end_ns: 2_500,
                thread_id: 9
            })
        );
        let names: Vec<&str> = t.api_calls.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "cuLaunchKernel",
                "cudaLaunchKernel",
                "cudaDeviceSynchronize"
            ]
        );
        assert_eq!(t.syncs.len(), 1);
        assert_eq!(t.syncs[0].kind, SyncKind::ContextSynchronize);
        assert_eq!(t.syncs[0].context, 1);
        assert_eq!(t.syncs[0].thread_id, Some(9));
        assert_eq!(t.meta.pid, 77);
        assert_eq!(t.meta.priority, 3);
        assert_eq!(t.meta.device.name, "unknown");
        assert!(t.meta.producer.starts_with("fikit-sim import (kineto)"));
        assert!(out.notes.iter().any(|n| n.contains("3 of 4 API calls")));
        assert!(
            out.notes
                .iter()
                .any(|n| n.contains("does not describe device 0"))
        );
        assert!(
            !out.notes
                .iter()
                .any(|n| n.contains("share their correlation"))
        );
    }

    #[test]
    fn kernels_sharing_a_launch_outside_a_graph_get_a_note() {
        let note = |launch: &str| {
            let mut capture = Capture {
                pid: 7,
                ..Capture::default()
            };
            for (i, s) in [10_000, 20_000, 30_000].into_iter().enumerate() {
                let corr = if i < 2 { 5 } else { 6 };
                capture
                    .kernels
                    .push(fixture::kernel("k", 7, corr, None, s, s + 1_000));
            }
            capture.api_calls = [(5, 1_000), (6, 2_000)]
                .into_iter()
                .map(|(corr, start)| ApiCall {
                    domain: ApiDomain::Runtime,
                    name: launch.into(),
                    start_ns: start,
                    end_ns: start + 500,
                    thread_id: 9,
                    correlation_id: corr,
                })
                .collect();
            let source = Source {
                has_api: true,
                ..Source::default()
            };
            finish(capture, &source, SourceFormat::Kineto, "j", 3)
                .notes
                .into_iter()
                .find(|n| n.contains("share their correlation id"))
        };
        let n = note("cudaLaunchKernel").expect("a note");
        assert!(n.starts_with("2 of 3 kernels"), "{n}");
        // A graph launch runs many kernels under one id.
        assert_eq!(note("cudaGraphLaunch"), None);
    }
}
