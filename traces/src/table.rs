//! The event table: a trace as rows of one wide table, and back.

use crate::model::{HostCall, Trace};
use crate::schema::{API, KERNEL, KINDS, MEMCPY, MEMSET, SYNC};

/// One row of the event table; `None` is a null cell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Row {
    /// `kind` (one of [`KINDS`]).
    pub kind: &'static str,
    /// `start_ns`.
    pub start_ns: i64,
    /// `end_ns`.
    pub end_ns: i64,
    /// `device`.
    pub device: Option<u32>,
    /// `context`.
    pub context: Option<u32>,
    /// `stream`.
    pub stream: Option<u32>,
    /// `correlation_id`.
    pub correlation_id: u32,
    /// `name`.
    pub name: Option<String>,
    /// `demangled_name`.
    pub demangled_name: Option<String>,
    /// `grid_x`, `grid_y`, `grid_z`.
    pub grid: Option<[u32; 3]>,
    /// `block_x`, `block_y`, `block_z`.
    pub block: Option<[u32; 3]>,
    /// `registers_per_thread`.
    pub registers_per_thread: Option<u32>,
    /// `static_shared_bytes`.
    pub static_shared_bytes: Option<u32>,
    /// `dynamic_shared_bytes`.
    pub dynamic_shared_bytes: Option<u32>,
    /// `kernel_key`.
    pub kernel_key: Option<u64>,
    /// `bytes`.
    pub bytes: Option<u64>,
    /// `copy_kind`.
    pub copy_kind: Option<&'static str>,
    /// `sync_kind`.
    pub sync_kind: Option<&'static str>,
    /// `api_domain`.
    pub api_domain: Option<&'static str>,
    /// `thread_id`.
    pub thread_id: Option<u64>,
    /// `launch_start_ns`, `launch_end_ns`, `launch_thread_id`.
    pub launch: Option<HostCall>,
    /// `shared_config_bytes` (optional column).
    pub shared_config_bytes: Option<u32>,
}

fn kind_rank(kind: &str) -> usize {
    KINDS.iter().position(|k| *k == kind).unwrap_or(KINDS.len())
}

/// The rows of a trace in file order: by start time, then kind (kernel, memcpy,
/// memset, api, sync), then end time, then correlation id.
pub fn to_rows(trace: &Trace) -> Vec<Row> {
    let mut rows = Vec::with_capacity(
        trace.kernels.len() + trace.memops.len() + trace.api_calls.len() + trace.syncs.len(),
    );
    for k in &trace.kernels {
        rows.push(Row {
            kind: KERNEL,
            start_ns: k.start_ns,
            end_ns: k.end_ns,
            device: Some(k.placement.device),
            context: Some(k.placement.context),
            stream: Some(k.placement.stream),
            correlation_id: k.correlation_id,
            name: Some(k.name.clone()),
            demangled_name: Some(k.demangled_name.clone()),
            grid: Some(k.grid),
            block: Some(k.block),
            registers_per_thread: Some(k.registers_per_thread),
            static_shared_bytes: Some(k.static_shared_bytes),
            dynamic_shared_bytes: Some(k.dynamic_shared_bytes),
            kernel_key: Some(k.kernel_key),
            launch: k.launch,
            shared_config_bytes: k.shared_config_bytes,
            ..Row::default()
        });
    }
    for m in &trace.memops {
        rows.push(Row {
            kind: if m.is_memset() { MEMSET } else { MEMCPY },
            start_ns: m.start_ns,
            end_ns: m.end_ns,
            device: Some(m.placement.device),
            context: Some(m.placement.context),
            stream: Some(m.placement.stream),
            correlation_id: m.correlation_id,
            bytes: Some(m.bytes),
            copy_kind: m.copy_kind.map(|c| c.as_str()),
            launch: m.launch,
            ..Row::default()
        });
    }
    for a in &trace.api_calls {
        rows.push(Row {
            kind: API,
            start_ns: a.start_ns,
            end_ns: a.end_ns,
            correlation_id: a.correlation_id,
            name: Some(a.name.clone()),
            api_domain: Some(a.domain.as_str()),
            thread_id: Some(a.thread_id),
            ..Row::default()
        });
    }
    for s in &trace.syncs {
        rows.push(Row {
            kind: SYNC,
            start_ns: s.start_ns,
            end_ns: s.end_ns,
            context: Some(s.context),
            stream: s.stream,
            correlation_id: s.correlation_id,
            sync_kind: Some(s.kind.as_str()),
            thread_id: s.thread_id,
            ..Row::default()
        });
    }
    rows.sort_by_key(|r| (r.start_ns, kind_rank(r.kind), r.end_ns, r.correlation_id));
    rows
}
