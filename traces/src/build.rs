//! One way to assemble a [`Trace`] from a source's rows, shared by
//! `fikit-profile`'s conversion of a spool and `fikit-sim import`, so both
//! make the same trace from the same facts.
//!
//! A source adds its kernels, copies and memsets, API calls and
//! synchronizations to a [`TraceBuilder`]; [`TraceBuilder::build`] then joins
//! each GPU operation to the API call that issued it (its `launch`), gives
//! each synchronization the thread of its call, derives the synchronizations
//! from the synchronizing calls when the source recorded none, keeps the
//! stream order of kernels, and sorts the trace.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::model::{
    ApiCall, ApiDomain, DeviceInfo, HostCall, Kernel, KernelMetrics, MemOp, Metadata, Sync,
    SyncKind, Trace, VersionSource,
};
use crate::repair;

/// A synchronizing API call recorded without its synchronization (a callback,
/// not CUPTI's synchronization activity): it becomes a synchronization over
/// the interval of its call when the source recorded no synchronization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncCall {
    /// Correlation id of the API call.
    pub correlation_id: u32,
    /// What the call waits for.
    pub kind: SyncKind,
    /// The context id.
    pub context: u32,
    /// The stream waited for; `None` for a context-wide wait or when unknown.
    pub stream: Option<u32>,
}

/// A built trace and what building it noticed.
#[derive(Debug, Clone)]
pub struct Built {
    /// The trace, sorted.
    pub trace: Trace,
    /// Messages for the user, in the order of the steps that made them.
    pub notes: Vec<String>,
}

/// The rows of one process, before they are joined into a [`Trace`].
#[derive(Debug, Clone, Default)]
pub struct TraceBuilder {
    kernels: Vec<Kernel>,
    memops: Vec<MemOp>,
    api_calls: Vec<ApiCall>,
    syncs: Vec<Sync>,
    sync_calls: Vec<SyncCall>,
    kernel_metrics: BTreeMap<u64, KernelMetrics>,
    selected_api_only: bool,
    note_unlaunched: bool,
}

impl TraceBuilder {
    /// An empty builder that keeps every API call and notes nothing about launches.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a kernel; its `launch` is set by [`TraceBuilder::build`].
    pub fn kernel(&mut self, kernel: Kernel) -> &mut Self {
        self.kernels.push(kernel);
        self
    }

    /// Adds a copy or memset; its `launch` is set by [`TraceBuilder::build`].
    pub fn memop(&mut self, memop: MemOp) -> &mut Self {
        self.memops.push(memop);
        self
    }

    /// Adds an API call.
    pub fn api_call(&mut self, call: ApiCall) -> &mut Self {
        self.api_calls.push(call);
        self
    }

    /// Adds a synchronization record; its `thread_id` is set by
    /// [`TraceBuilder::build`] (the thread of the API call with its
    /// correlation id, `None` when there is none).
    pub fn sync(&mut self, sync: Sync) -> &mut Self {
        self.syncs.push(sync);
        self
    }

    /// Adds a synchronizing call, used only when no synchronization record is added.
    pub fn sync_call(&mut self, call: SyncCall) -> &mut Self {
        self.sync_calls.push(call);
        self
    }

    /// Adds a metrics pass's figures for a kernel key; the first figures of a key are kept.
    pub fn kernel_metrics(&mut self, kernel_key: u64, metrics: KernelMetrics) -> &mut Self {
        self.kernel_metrics.entry(kernel_key).or_insert(metrics);
        self
    }

    /// Keeps only the API calls `fikit-profile` records by default
    /// ([`crate::api::is_selected_api`]) and those that issued a recorded GPU
    /// operation, with a note when some are left out (for sources that
    /// recorded every call).
    pub fn keep_selected_api_calls(&mut self) -> &mut Self {
        self.selected_api_only = true;
        self
    }

    /// Notes how many GPU operations have no API call with their correlation
    /// id (for sources that recorded API calls, where that is a gap).
    pub fn note_unlaunched(&mut self, yes: bool) -> &mut Self {
        self.note_unlaunched = yes;
        self
    }

    /// True when a kernel, copy or memset was added.
    pub fn has_gpu_work(&self) -> bool {
        !self.kernels.is_empty() || !self.memops.is_empty()
    }

    /// The devices the GPU operations ran on, each with its number of
    /// kernels (0 for a device that ran only copies and memsets).
    pub fn devices(&self) -> BTreeMap<u32, usize> {
        let mut per_device: BTreeMap<u32, usize> = BTreeMap::new();
        for k in &self.kernels {
            *per_device.entry(k.placement.device).or_default() += 1;
        }
        for m in &self.memops {
            per_device.entry(m.placement.device).or_default();
        }
        per_device
    }

    /// The device that ran the most kernels, the lowest ordinal on a tie;
    /// `None` without kernels.
    pub fn main_device(&self) -> Option<u32> {
        self.devices()
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .max_by_key(|(d, n)| (*n, std::cmp::Reverse(*d)))
            .map(|(d, _)| d)
    }

    /// Joins the rows into a sorted trace with `meta`:
    ///
    /// 1. each kernel's and memory operation's `launch` is the API call with
    ///    its correlation id (the runtime call when both a runtime and a
    ///    driver call carry it, else the earliest), and each
    ///    synchronization's `thread_id` that call's thread;
    /// 2. without synchronization records, the synchronizing calls
    ///    ([`TraceBuilder::sync_call`]) whose API call was recorded are the
    ///    synchronizations; without those either, the synchronizing calls
    ///    among the API calls ([`repair::syncs_from_calls`]);
    /// 3. the API calls are filtered ([`TraceBuilder::keep_selected_api_calls`]);
    /// 4. kernel starts that overlap the previous kernel on their stream are
    ///    moved to its end ([`repair::clamp_stream_order`]).
    pub fn build(self, meta: Metadata) -> Built {
        let TraceBuilder {
            mut kernels,
            mut memops,
            api_calls,
            mut syncs,
            sync_calls,
            kernel_metrics,
            selected_api_only,
            note_unlaunched,
        } = self;
        let mut notes = Vec::new();

        let launches = Launches::new(&api_calls);
        for k in &mut kernels {
            k.launch = launches.of(k.correlation_id);
        }
        for m in &mut memops {
            m.launch = launches.of(m.correlation_id);
        }
        let unlaunched = kernels.iter().filter(|k| k.launch.is_none()).count()
            + memops.iter().filter(|m| m.launch.is_none()).count();
        if note_unlaunched && unlaunched > 0 {
            notes.push(format!(
                "{unlaunched} GPU operations have no API call with their correlation id: their \
                 launch columns are null (replay issues them at their recorded start)"
            ));
        }
        for s in &mut syncs {
            s.thread_id = launches.of(s.correlation_id).map(|h| h.thread_id);
        }
        if syncs.is_empty() {
            syncs = sync_calls
                .iter()
                .filter_map(|c| {
                    let h = launches.of(c.correlation_id)?;
                    Some(Sync {
                        kind: c.kind,
                        start_ns: h.start_ns,
                        end_ns: h.end_ns,
                        context: c.context,
                        stream: c.stream,
                        thread_id: Some(h.thread_id),
                        correlation_id: c.correlation_id,
                    })
                })
                .collect();
        }
        // Neither: the synchronizing calls among the API calls, one per
        // correlation id. They name no stream (replay waits for the latest
        // work of any stream); the context is that of the thread's latest GPU
        // operation.
        if syncs.is_empty() {
            syncs = repair::syncs_from_calls(
                &api_calls,
                launches.chosen(),
                &kernels,
                &memops,
                sync_kind_of_api,
            );
        }

        let api_calls = if selected_api_only {
            keep_selected(api_calls, &kernels, &memops, &mut notes)
        } else {
            api_calls
        };

        notes.extend(repair::clamp_stream_order(&mut kernels));

        let mut trace = Trace {
            meta,
            kernels,
            memops,
            api_calls,
            syncs,
            kernel_metrics,
        };
        trace.sort();
        Built { trace, notes }
    }
}

/// The launching call of each correlation id, by index into the API calls.
struct Launches<'a> {
    api_calls: &'a [ApiCall],
    by_corr: HashMap<u32, usize>,
}

impl<'a> Launches<'a> {
    /// The runtime call when both a runtime and a driver call carry a
    /// correlation id, else the earliest.
    fn new(api_calls: &'a [ApiCall]) -> Self {
        let mut by_corr: HashMap<u32, usize> = HashMap::new();
        for (idx, n) in api_calls.iter().enumerate() {
            match by_corr.get(&n.correlation_id) {
                None => {
                    by_corr.insert(n.correlation_id, idx);
                }
                Some(&old) => {
                    let o = &api_calls[old];
                    let better = (n.domain == ApiDomain::Runtime && o.domain != ApiDomain::Runtime)
                        || (n.domain == o.domain && n.start_ns < o.start_ns);
                    if better {
                        by_corr.insert(n.correlation_id, idx);
                    }
                }
            }
        }
        Launches { api_calls, by_corr }
    }

    /// The launching call of `corr`, as a host interval.
    fn of(&self, corr: u32) -> Option<HostCall> {
        self.by_corr.get(&corr).map(|&i| {
            let c = &self.api_calls[i];
            HostCall {
                start_ns: c.start_ns,
                end_ns: c.end_ns,
                thread_id: c.thread_id,
            }
        })
    }

    /// The indices of the launching calls, in no order.
    fn chosen(&self) -> impl Iterator<Item = usize> + '_ {
        self.by_corr.values().copied()
    }
}

/// The API calls fikit-profile records by default, and any call that issued
/// a recorded GPU operation; a note when some are left out.
fn keep_selected(
    api_calls: Vec<ApiCall>,
    kernels: &[Kernel],
    memops: &[MemOp],
    notes: &mut Vec<String>,
) -> Vec<ApiCall> {
    let issued: HashSet<u32> = kernels
        .iter()
        .map(|k| k.correlation_id)
        .chain(memops.iter().map(|m| m.correlation_id))
        .collect();
    let total = api_calls.len();
    let kept: Vec<ApiCall> = api_calls
        .into_iter()
        .filter(|a| crate::api::is_selected_api(&a.name) || issued.contains(&a.correlation_id))
        .collect();
    if kept.len() < total {
        notes.push(format!(
            "{} of {total} API calls kept: those that launch, copy, set memory or \
             synchronize (what fikit-profile records by default)",
            kept.len()
        ));
    }
    kept
}

/// The synchronization a synchronizing API call makes, or `None` for a call
/// that does not synchronize (the table `fikit-profile`'s collector uses,
/// [`crate::api::sync_type_of`]).
pub fn sync_kind_of_api(name: &str) -> Option<SyncKind> {
    crate::api::sync_type_of(name).map(|t| SyncKind::from_cupti(i64::from(t)))
}

/// An API function name without the API version CUPTI appends to runtime
/// callback names: `cudaLaunchKernel_v7000` → `cudaLaunchKernel`. A suffix
/// `_v` with fewer than four digits (`cuMemcpyHtoD_v2`) is part of the name.
pub fn strip_api_version(name: &str) -> &str {
    if let Some(i) = name.rfind("_v") {
        let digits = &name[i + 2..];
        if digits.len() >= 4 && digits.bytes().all(|b| b.is_ascii_digit()) {
            return &name[..i];
        }
    }
    name
}

/// `13000` → `13.0` (CUDA's version numbers).
pub fn cuda_version_string(v: u64) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

/// `fikit.cuda_version` and where it came from: the program's runtime
/// version when known, else the driver's, else `unknown`.
pub fn cuda_version_of(
    runtime: Option<String>,
    driver: Option<String>,
) -> (String, Option<VersionSource>) {
    match (runtime, driver) {
        (Some(v), _) => (v, Some(VersionSource::Runtime)),
        (None, Some(v)) => (v, Some(VersionSource::Driver)),
        (None, None) => ("unknown".into(), None),
    }
}

impl DeviceInfo {
    /// A device with every limit unknown (0), named `unknown`.
    pub fn unknown() -> Self {
        DeviceInfo {
            name: "unknown".into(),
            sm_count: 0,
            max_threads_per_sm: 0,
            max_registers_per_sm: 0,
            max_shared_memory_per_sm: 0,
            max_blocks_per_sm: 0,
        }
    }
}

/// A file-name-safe form of a job name, as traces are named
/// (`<stem>-<pid>.parquet`): characters other than ASCII letters, digits,
/// `-`, `_` and `.` become `_`, and an empty name or one starting with `.`
/// gets `job` in front.
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
#[path = "build_tests.rs"]
mod tests;
