//! PyTorch profiler traces: Kineto's Chrome-trace JSON (`export_chrome_trace`),
//! plain or gzipped.
//!
//! Read: `"ph": "X"` events with `cat` `kernel`, `gpu_memcpy`, `gpu_memset`
//! (GPU work; `args` carry `device`, `context`, `stream`, `correlation`,
//! `grid`, `block`, `registers per thread`, `shared memory`, `bytes`),
//! `cuda_runtime` and `cuda_driver` (API calls: `pid` is the process, `tid` the
//! thread, `args.correlation` the correlation id), `cuda_sync` (CUPTI
//! synchronization records, when the profiler recorded them); `ac2g` flow
//! events (`ph` `s` on the launch, `f` on the GPU event, `id` the correlation
//! id) link an event that lacks `args.correlation`; the top-level
//! `deviceProperties` describe the devices. Everything else (CPU operators,
//! Python functions, annotations, metadata events) is ignored.
//!
//! Times are microseconds with three decimals (Kineto writes nanoseconds as
//! `µs.nnn`); they are parsed from the JSON text exactly, never through a float,
//! so nanoseconds survive even for absolute timestamps.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::io::Read;
use std::path::Path;

use fikit_trace::{
    ApiCall, CopyKind, DeviceInfo, Kernel, MemOp, Placement, Sync, SyncKind, kernel_key,
};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::{
    Capture, ImportError, Source, api_domain_of, api_function_name, cuda_version_string,
    max_blocks_per_sm,
};

/// The first bytes of a gzip stream.
pub const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

#[derive(Deserialize)]
struct TopLevel<'a> {
    #[serde(rename = "traceEvents", borrow)]
    trace_events: Option<Vec<Event<'a>>>,
    #[serde(rename = "deviceProperties", default)]
    device_properties: Vec<serde_json::Value>,
    #[serde(rename = "baseTimeNanoseconds", default)]
    base_time_ns: Option<i64>,
    #[serde(default)]
    cuda_driver_version: Option<serde_json::Value>,
    #[serde(default)]
    cuda_runtime_version: Option<serde_json::Value>,
    #[serde(default)]
    cupti_version: Option<serde_json::Value>,
    #[serde(default)]
    hostname: Option<String>,
}

#[derive(Deserialize)]
struct Event<'a> {
    #[serde(borrow, default)]
    ph: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    cat: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pid: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tid: Option<&'a RawValue>,
    #[serde(borrow, default)]
    ts: Option<&'a RawValue>,
    #[serde(borrow, default)]
    dur: Option<&'a RawValue>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    args: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
struct Args {
    device: Option<i64>,
    context: Option<i64>,
    stream: Option<i64>,
    correlation: Option<i64>,
    #[serde(rename = "registers per thread")]
    registers: Option<i64>,
    #[serde(rename = "shared memory")]
    shared: Option<i64>,
    grid: Option<Vec<i64>>,
    block: Option<Vec<i64>>,
    bytes: Option<i64>,
    cuda_sync_kind: Option<String>,
}

/// What kind of event an entry of `traceEvents` is, for import.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Kernel,
    Memcpy,
    Memset,
    Runtime,
    Driver,
    Sync,
    FlowStart,
    FlowEnd,
}

fn classify(ev: &Event) -> Option<Class> {
    let cat = ev.cat.as_deref()?.to_ascii_lowercase();
    let ph = ev.ph.as_deref().unwrap_or("X");
    if cat == "ac2g" {
        return match ph {
            "s" => Some(Class::FlowStart),
            "f" => Some(Class::FlowEnd),
            _ => None,
        };
    }
    if ph != "X" {
        return None;
    }
    // Kineto's category names, and those of PyTorch 1.8-era traces.
    Some(match cat.as_str() {
        "kernel" => Class::Kernel,
        "gpu_memcpy" | "memcpy" => Class::Memcpy,
        "gpu_memset" | "memset" => Class::Memset,
        "cuda_runtime" | "runtime" => Class::Runtime,
        "cuda_driver" | "driver" => Class::Driver,
        "cuda_sync" => Class::Sync,
        _ => return None,
    })
}

/// Parses a JSON number of microseconds into nanoseconds, exactly for plain
/// decimals (rounding half away from zero past the third decimal), through a
/// float only for exponent notation.
pub fn parse_us_to_ns(text: &str) -> Option<i64> {
    let t = text.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    if digits.contains(['e', 'E']) {
        let v: f64 = t.parse().ok()?;
        let ns = (v * 1000.0).round();
        return (ns.is_finite() && ns.abs() < 9.2e18).then_some(ns as i64);
    }
    let (int, frac) = match digits.split_once('.') {
        Some((i, f)) => (i, f),
        None => (digits, ""),
    };
    if int.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let mut ns: i64 = int.parse::<i64>().ok()?.checked_mul(1000)?;
    let fb = frac.as_bytes();
    let mut sub = 0i64;
    for i in 0..3 {
        sub = sub * 10 + fb.get(i).map_or(0, |b| i64::from(b - b'0'));
    }
    ns = ns.checked_add(sub)?;
    if fb.get(3).is_some_and(|&b| b >= b'5') {
        ns = ns.checked_add(1)?;
    }
    Some(if neg { -ns } else { ns })
}

fn read_text(path: &Path) -> Result<String, ImportError> {
    let bytes = std::fs::read(path).map_err(|e| ImportError::new(path, e.to_string()))?;
    let bytes = if bytes.starts_with(&GZIP_MAGIC) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_end(&mut out)
            .map_err(|e| {
                ImportError::new(path, format!("gzip: {e} (truncated or corrupt .gz file?)"))
            })?;
        out
    } else {
        bytes
    };
    String::from_utf8(bytes).map_err(|e| {
        ImportError::new(
            path,
            format!(
                "not a Kineto JSON trace: not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// Where an event is, for messages: its index in `traceEvents`, its category and name.
fn at(i: usize, ev: &Event) -> String {
    let name = ev.name.as_deref().unwrap_or("");
    let short: String = name.chars().take(80).collect();
    let cat = ev.cat.as_deref().unwrap_or("?");
    if short.len() < name.len() {
        format!("traceEvents[{i}] ({cat} \"{short}…\")")
    } else {
        format!("traceEvents[{i}] ({cat} \"{short}\")")
    }
}

/// A numeric `pid`/`tid`/`id`, or `None` for a string or a missing one.
fn int_of(raw: Option<&RawValue>) -> Option<i64> {
    let t = raw?.get().trim();
    t.parse::<i64>().ok().or_else(|| {
        // Kineto writes ids as plain integers; accept "123" strings too.
        t.strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .and_then(|s| s.parse().ok())
    })
}

/// Reads a Kineto trace: file-wide facts and one capture per process.
pub(crate) fn read(path: &Path) -> Result<(Source, Vec<Capture>), ImportError> {
    let text = read_text(path)?;
    let top = parse_top(path, &text)?;
    let events = top.trace_events.as_deref().ok_or_else(|| {
        ImportError::new(
            path,
            "not a Kineto JSON trace: the top-level object has no `traceEvents` list",
        )
    })?;
    let mut source = source_of(path, &top)?;
    let classes: Vec<Option<Class>> = events.iter().map(classify).collect();
    let flows = Flows::of(events, &classes);
    let mut rows = Rows::default();
    for (i, (ev, class)) in events.iter().zip(&classes).enumerate() {
        let Some(class) = *class else { continue };
        if matches!(class, Class::FlowStart | Class::FlowEnd) {
            continue;
        }
        let e = Ev::new(path, i, ev, &flows)?;
        match class {
            Class::Kernel | Class::Memcpy | Class::Memset => e.gpu(class, &mut rows)?,
            Class::Runtime | Class::Driver => e.api(class, &mut rows)?,
            Class::Sync => e.sync(&mut rows)?,
            Class::FlowStart | Class::FlowEnd => {}
        }
    }
    let Rows {
        kernels,
        memops,
        calls,
        syncs,
        defaulted,
    } = rows;
    if !defaulted.is_empty() {
        source.notes.push(format!(
            "fields missing from some GPU events, defaulted: {}",
            defaulted.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    source.has_api = !calls.is_empty();
    if !kernels.is_empty() || !memops.is_empty() {
        source.notes.push(
            "Kineto gives a kernel's static plus dynamic shared memory as one number and no \
             mangled name: static_shared_bytes holds the sum, dynamic_shared_bytes 0, and \
             name, demangled_name and kernel_key use the demangled name"
                .into(),
        );
    }
    let captures = split_by_process(path, kernels, memops, calls, syncs, &mut source)?;
    Ok((source, captures))
}

/// The top level of the JSON text: an object, or a bare array of events.
fn parse_top<'a>(path: &Path, text: &'a str) -> Result<TopLevel<'a>, ImportError> {
    let err = |m: String| ImportError::new(path, m);
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('[') {
        // The Chrome trace format also allows a bare array of events.
        let events: Vec<Event> = serde_json::from_str(trimmed)
            .map_err(|e| err(format!("not a Kineto JSON trace: {e}")))?;
        Ok(TopLevel {
            trace_events: Some(events),
            device_properties: Vec::new(),
            base_time_ns: None,
            cuda_driver_version: None,
            cuda_runtime_version: None,
            cupti_version: None,
            hostname: None,
        })
    } else {
        serde_json::from_str(trimmed).map_err(|e| {
            err(format!(
                "not a Kineto JSON trace: {e}{}",
                if e.is_syntax() || e.is_eof() {
                    ""
                } else {
                    " (expected an object with a `traceEvents` list)"
                }
            ))
        })
    }
}

/// The file-wide facts of the top-level object: versions, host, devices.
fn source_of(path: &Path, top: &TopLevel) -> Result<Source, ImportError> {
    let mut source = Source {
        clock_offset_ns: top.base_time_ns,
        host: top.hostname.clone(),
        ..Source::default()
    };
    let version = |v: &Option<serde_json::Value>| -> Option<u64> {
        match v.as_ref()? {
            serde_json::Value::Number(n) => n.as_u64(),
            serde_json::Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    };
    source.driver_version = version(&top.cuda_driver_version).map(cuda_version_string);
    source.cuda_version = version(&top.cuda_runtime_version).map(cuda_version_string);
    source.cupti_version = version(&top.cupti_version).and_then(|v| u32::try_from(v).ok());
    for (i, d) in top.device_properties.iter().enumerate() {
        let (ordinal, info, notes) = device_info(d).map_err(|m| {
            ImportError::new(
                path,
                format!("deviceProperties[{i}]: {m} (expected an object with id, name, numSms, …)"),
            )
        })?;
        source.notes.extend(notes);
        source.devices.insert(ordinal, info);
    }
    Ok(source)
}

/// (pid, tid, ts) of the event a flow event binds to.
type FlowKey = (String, String, i64);

/// The `ac2g` flow events: where each links an event to a correlation id.
#[derive(Default)]
struct Flows {
    /// On the launching API call (`ph` `s`).
    starts: HashMap<FlowKey, u32>,
    /// On the GPU event (`ph` `f`).
    ends: HashMap<FlowKey, u32>,
}

impl Flows {
    fn of(events: &[Event], classes: &[Option<Class>]) -> Flows {
        let mut flows = Flows::default();
        for (ev, class) in events.iter().zip(classes) {
            let map = match class {
                Some(Class::FlowStart) => &mut flows.starts,
                Some(Class::FlowEnd) => &mut flows.ends,
                _ => continue,
            };
            let (Some(id), Some(ts)) = (
                int_of(ev.id).and_then(|v| u32::try_from(v).ok()),
                ev.ts.and_then(|t| parse_us_to_ns(t.get())),
            ) else {
                continue;
            };
            map.insert((raw_key(ev.pid), raw_key(ev.tid), ts), id);
        }
        flows
    }
}

/// The rows read so far.
#[derive(Default)]
struct Rows {
    kernels: Vec<Kernel>,
    memops: Vec<MemOp>,
    /// API calls with their process id.
    calls: Vec<(u32, ApiCall)>,
    syncs: Vec<Sync>,
    /// GPU event fields that were missing and given a default.
    defaulted: BTreeSet<&'static str>,
}

/// One event being read: where it is, its interval and its `args`.
struct Ev<'e> {
    path: &'e Path,
    i: usize,
    ev: &'e Event<'e>,
    flows: &'e Flows,
    start_ns: i64,
    end_ns: i64,
    args: Args,
}

impl<'e> Ev<'e> {
    /// Reads the interval and `args` of event `i`.
    fn new(
        path: &'e Path,
        i: usize,
        ev: &'e Event<'e>,
        flows: &'e Flows,
    ) -> Result<Self, ImportError> {
        let fail = |m: String| ImportError::new(path, format!("{}: {m}", at(i, ev)));
        let start_ns = time_field(ev.ts, "ts").map_err(fail)?;
        let dur_ns = time_field(ev.dur, "dur").map_err(fail)?;
        if dur_ns < 0 {
            return Err(fail(format!("`dur` is negative ({dur_ns} ns)")));
        }
        let end_ns = start_ns
            .checked_add(dur_ns)
            .ok_or_else(|| fail("`ts` + `dur` overflows".into()))?;
        if let Some(why) = fikit_trace::timestamp_problem(start_ns)
            .map(|w| format!("`ts`: {w}"))
            .or_else(|| {
                fikit_trace::timestamp_problem(end_ns).map(|w| format!("`ts` + `dur`: {w}"))
            })
        {
            return Err(fail(why));
        }
        let args: Args = match ev.args {
            Some(raw) => {
                serde_json::from_str(raw.get()).map_err(|e| fail(format!("`args`: {e}")))?
            }
            None => Args::default(),
        };
        Ok(Ev {
            path,
            i,
            ev,
            flows,
            start_ns,
            end_ns,
            args,
        })
    }

    /// An error about this event.
    fn fail(&self, m: String) -> ImportError {
        ImportError::new(self.path, format!("{}: {m}", at(self.i, self.ev)))
    }

    fn u32(&self, v: i64, field: &str) -> Result<u32, ImportError> {
        to_u32(v, field).map_err(|m| self.fail(m))
    }

    fn name(&self) -> String {
        self.ev.name.as_deref().unwrap_or("").to_string()
    }

    /// `args.correlation`, else the correlation id of the flow event in
    /// `map` that binds to this event.
    fn correlation(&self, map: &HashMap<FlowKey, u32>) -> Result<u32, ImportError> {
        match self.args.correlation {
            Some(c) => self.u32(c, "args.correlation"),
            None => map
                .get(&(raw_key(self.ev.pid), raw_key(self.ev.tid), self.start_ns))
                .copied()
                .ok_or_else(|| {
                    self.fail(
                        "`args.correlation` is missing and no ac2g flow event links it: its \
                         launch cannot be found"
                            .into(),
                    )
                }),
        }
    }

    /// A field a GPU event needs.
    fn need(&self, v: Option<i64>, field: &str) -> Result<u32, ImportError> {
        let v = v.ok_or_else(|| {
            self.fail(format!(
                "`args.{field}` is missing (a GPU event needs its {field})"
            ))
        })?;
        self.u32(v, &format!("args.{field}"))
    }

    /// A field a GPU event may lack: `default` (and a note) when it does.
    fn or_default(
        &self,
        v: Option<i64>,
        field: &str,
        noted: &'static str,
        defaulted: &mut BTreeSet<&'static str>,
    ) -> Result<u32, ImportError> {
        match v {
            Some(v) => self.u32(v, field),
            None => {
                defaulted.insert(noted);
                Ok(0)
            }
        }
    }

    /// A kernel's grid or block dimensions.
    fn dims(&self, v: &Option<Vec<i64>>, field: &str) -> Result<[u32; 3], ImportError> {
        let v = v.as_ref().ok_or_else(|| {
            self.fail(format!(
                "`args.{field}` is missing (a kernel needs its {field} dimensions)"
            ))
        })?;
        if v.len() != 3 {
            return Err(self.fail(format!(
                "`args.{field}` has {} values; expected [x, y, z]",
                v.len()
            )));
        }
        let mut out = [0u32; 3];
        for (o, x) in out.iter_mut().zip(v) {
            *o = self.u32(*x, &format!("args.{field}"))?;
        }
        Ok(out)
    }

    /// A kernel, copy or memset.
    fn gpu(&self, class: Class, rows: &mut Rows) -> Result<(), ImportError> {
        let placement = Placement {
            device: self.need(self.args.device, "device")?,
            context: self.or_default(
                self.args.context,
                "args.context",
                "context (0)",
                &mut rows.defaulted,
            )?,
            stream: self.need(self.args.stream, "stream")?,
        };
        let correlation_id = self.correlation(&self.flows.ends)?;
        if class == Class::Kernel {
            let grid = self.dims(&self.args.grid, "grid")?;
            let block = self.dims(&self.args.block, "block")?;
            if let Some((_, why)) = fikit_trace::launch_shape_problem(grid, block) {
                return Err(self.fail(format!("`args.grid`, `args.block`: {why}")));
            }
            let registers = self.or_default(
                self.args.registers,
                "args.registers per thread",
                "registers per thread (0)",
                &mut rows.defaulted,
            )?;
            let shared = self.or_default(
                self.args.shared,
                "args.shared memory",
                "shared memory (0)",
                &mut rows.defaulted,
            )?;
            let name = self.name();
            rows.kernels.push(Kernel {
                start_ns: self.start_ns,
                end_ns: self.end_ns,
                placement,
                correlation_id,
                kernel_key: kernel_key(&name, grid, block, shared, 0, registers),
                demangled_name: name.clone(),
                name,
                grid,
                block,
                registers_per_thread: registers,
                static_shared_bytes: shared,
                dynamic_shared_bytes: 0,
                launch: None,
                shared_config_bytes: None,
            });
        } else {
            let bytes = self.args.bytes.ok_or_else(|| {
                self.fail("`args.bytes` is missing (a copy or memset needs its size)".into())
            })?;
            let bytes = u64::try_from(bytes)
                .map_err(|_| self.fail(format!("`args.bytes` is negative ({bytes})")))?;
            rows.memops.push(MemOp {
                start_ns: self.start_ns,
                end_ns: self.end_ns,
                placement,
                correlation_id,
                copy_kind: (class == Class::Memcpy)
                    .then(|| copy_kind_of(self.ev.name.as_deref().unwrap_or(""))),
                bytes,
                launch: None,
            });
        }
        Ok(())
    }

    /// A runtime or driver API call.
    fn api(&self, class: Class, rows: &mut Rows) -> Result<(), ImportError> {
        let pid = int_of(self.ev.pid)
            .ok_or_else(|| self.fail("`pid` is not a number (the process id)".into()))?;
        let tid = int_of(self.ev.tid)
            .ok_or_else(|| self.fail("`tid` is not a number (the thread id)".into()))?;
        let full = self.name();
        let fname = api_function_name(&full).to_string();
        rows.calls.push((
            self.u32(pid, "pid")?,
            ApiCall {
                domain: if class == Class::Driver {
                    fikit_trace::ApiDomain::Driver
                } else {
                    api_domain_of(&fname)
                },
                name: fname,
                start_ns: self.start_ns,
                end_ns: self.end_ns,
                thread_id: tid.unsigned_abs(),
                correlation_id: self.correlation(&self.flows.starts)?,
            },
        ));
        Ok(())
    }

    /// A CUPTI synchronization record.
    fn sync(&self, rows: &mut Rows) -> Result<(), ImportError> {
        let correlation_id = self.correlation(&self.flows.ends).unwrap_or(0);
        let label = self
            .args
            .cuda_sync_kind
            .clone()
            .unwrap_or_else(|| self.name())
            .to_ascii_lowercase();
        let kind = if label.contains("wait") {
            SyncKind::StreamWaitEvent
        } else if label.contains("stream") {
            SyncKind::StreamSynchronize
        } else if label.contains("event") {
            SyncKind::EventSynchronize
        } else if label.contains("context") || label.contains("device") {
            SyncKind::ContextSynchronize
        } else {
            SyncKind::Other
        };
        rows.syncs.push(Sync {
            kind,
            start_ns: self.start_ns,
            end_ns: self.end_ns,
            context: match self.args.context {
                Some(c) => self.u32(c, "args.context")?,
                None => 0,
            },
            // CUPTI's "invalid" stream (-1, or its u32 form) on context and event syncs.
            stream: self
                .args
                .stream
                .filter(|&s| s >= 0 && s < i64::from(u32::MAX))
                .map(|s| s as u32),
            thread_id: None,
            correlation_id,
        });
        Ok(())
    }
}

/// The raw text of a `pid`/`tid`, as a flow-event key.
fn raw_key(raw: Option<&RawValue>) -> String {
    raw.map(|r| r.get().trim().to_string()).unwrap_or_default()
}

fn time_field(raw: Option<&RawValue>, field: &str) -> Result<i64, String> {
    let raw = raw.ok_or_else(|| format!("`{field}` is missing"))?;
    parse_us_to_ns(raw.get()).ok_or_else(|| {
        format!(
            "`{field}` is not a number of microseconds: {}",
            raw.get().chars().take(40).collect::<String>()
        )
    })
}

fn to_u32(v: i64, field: &str) -> Result<u32, String> {
    u32::try_from(v).map_err(|_| format!("`{field}` is {v}: not an unsigned 32-bit integer"))
}

/// `Memcpy HtoD (Pageable -> Device)` → `HtoD`.
fn copy_kind_of(name: &str) -> CopyKind {
    let token = name.split_whitespace().nth(1).unwrap_or("");
    CopyKind::parse(token).unwrap_or(CopyKind::Other)
}

/// One `deviceProperties` entry: its ordinal, the device, notes on what was derived.
fn device_info(v: &serde_json::Value) -> Result<(u32, DeviceInfo, Vec<String>), String> {
    let obj = v.as_object().ok_or("not an object")?;
    let num = |k: &str| -> Option<u32> {
        obj.get(k)
            .and_then(serde_json::Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
    };
    let ordinal = num("id").ok_or("`id` is missing or not a device ordinal")?;
    let name = obj
        .get("name")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("unknown")
        .to_string();
    let mut notes = Vec::new();
    let max_blocks = match (num("computeMajor"), num("computeMinor")) {
        (Some(ma), Some(mi)) => match max_blocks_per_sm(ma, mi) {
            Some(b) => {
                notes.push(format!(
                    "device {ordinal}: max_blocks_per_sm {b} is the CUDA limit of compute \
                     capability {ma}.{mi} (Kineto does not record it)"
                ));
                b
            }
            None => 0,
        },
        _ => 0,
    };
    // A limit not given is 0 (unknown); one given must be a count.
    let limit = |k: &str| -> Result<Option<u32>, String> {
        match obj.get(k) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .map(Some)
                .ok_or_else(|| format!("`{k}` is {v}: not an unsigned 32-bit count")),
        }
    };
    let info = DeviceInfo {
        name,
        sm_count: limit("numSms")?.unwrap_or(0),
        max_threads_per_sm: limit("maxThreadsPerMultiprocessor")?.unwrap_or(0),
        max_registers_per_sm: limit("regsPerMultiprocessor")?.unwrap_or(0),
        max_shared_memory_per_sm: limit("sharedMemPerMultiprocessor")?
            .or(limit("maxSharedMemoryPerMultiProcessor")?)
            .unwrap_or(0),
        max_blocks_per_sm: max_blocks,
    };
    Ok((ordinal, info, notes))
}

/// One capture per process. The API calls carry the process id; a GPU
/// operation or synchronization belongs to the process of the call with its
/// correlation id (Kineto writes one file per process, so there is usually one).
fn split_by_process(
    path: &Path,
    kernels: Vec<Kernel>,
    memops: Vec<MemOp>,
    calls: Vec<(u32, ApiCall)>,
    syncs: Vec<Sync>,
    source: &mut Source,
) -> Result<Vec<Capture>, ImportError> {
    let pids: BTreeSet<u32> = calls.iter().map(|(p, _)| *p).collect();
    let mut captures: Vec<Capture> = pids
        .iter()
        .map(|&pid| Capture {
            pid,
            ..Capture::default()
        })
        .collect();
    if captures.is_empty() {
        source.notes.push(
            "no CUDA runtime events (cat cuda_runtime): the process id is unknown (0) and no \
             GPU operation has its launch"
                .into(),
        );
        captures.push(Capture::default());
    }
    let index: HashMap<u32, usize> = pids.iter().enumerate().map(|(i, p)| (*p, i)).collect();
    let mut owner: HashMap<u32, u32> = HashMap::new();
    for (pid, call) in &calls {
        if let Some(other) = owner.insert(call.correlation_id, *pid)
            && other != *pid
        {
            return Err(ImportError::new(
                path,
                format!(
                    "correlation id {} is used by processes {other} and {pid}: GPU events cannot \
                     be assigned to a process; export one process per file",
                    call.correlation_id
                ),
            ));
        }
    }
    // GPU work whose launch is not in the file goes to the busiest process.
    let busiest = {
        let mut counts: HashMap<u32, usize> = HashMap::new();
        for (p, _) in &calls {
            *counts.entry(*p).or_default() += 1;
        }
        counts
            .into_iter()
            .max_by_key(|(p, n)| (*n, std::cmp::Reverse(*p)))
            .map(|(p, _)| index[&p])
            .unwrap_or(0)
    };
    let slot = |corr: u32| owner.get(&corr).map_or(busiest, |p| index[p]);
    for k in kernels {
        captures[slot(k.correlation_id)].kernels.push(k);
    }
    for m in memops {
        captures[slot(m.correlation_id)].memops.push(m);
    }
    for s in syncs {
        captures[slot(s.correlation_id)].syncs.push(s);
    }
    for (pid, call) in calls {
        captures[index[&pid]].api_calls.push(call);
    }
    Ok(captures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_become_exact_nanoseconds() {
        assert_eq!(parse_us_to_ns("1234.567"), Some(1_234_567));
        assert_eq!(parse_us_to_ns("0.001"), Some(1));
        assert_eq!(parse_us_to_ns("5"), Some(5_000));
        assert_eq!(parse_us_to_ns("5.5"), Some(5_500));
        assert_eq!(parse_us_to_ns("1.0005"), Some(1_001));
        assert_eq!(parse_us_to_ns("1.0004"), Some(1_000));
        assert_eq!(parse_us_to_ns("-2.5"), Some(-2_500));
        assert_eq!(parse_us_to_ns("1.5e3"), Some(1_500_000));
        // Absolute timestamps: 19 significant digits, more than a double holds.
        assert_eq!(
            parse_us_to_ns("1700000000123456.789"),
            Some(1_700_000_000_123_456_789)
        );
        assert_eq!(parse_us_to_ns("\"12\""), None);
        assert_eq!(parse_us_to_ns("1.2.3"), None);
        assert_eq!(parse_us_to_ns("99999999999999999999"), None);
    }

    #[test]
    fn copy_kinds_from_kineto_names() {
        assert_eq!(
            copy_kind_of("Memcpy HtoD (Pageable -> Device)"),
            CopyKind::HtoD
        );
        assert_eq!(
            copy_kind_of("Memcpy DtoD (Device -> Device)"),
            CopyKind::DtoD
        );
        assert_eq!(
            copy_kind_of("Memcpy AtoH (Array -> Pinned)"),
            CopyKind::Other
        );
        assert_eq!(copy_kind_of("Memcpy"), CopyKind::Other);
    }

    #[test]
    fn device_properties() {
        let v = serde_json::json!({"id": 1, "name": "NVIDIA H200", "computeMajor": 9,
            "computeMinor": 0, "maxThreadsPerMultiprocessor": 2048,
            "regsPerMultiprocessor": 65536, "sharedMemPerMultiprocessor": 233472, "numSms": 132});
        let (ordinal, d, notes) = device_info(&v).unwrap();
        assert_eq!(ordinal, 1);
        assert_eq!(d.sm_count, 132);
        assert_eq!(d.max_blocks_per_sm, 32);
        assert_eq!(d.max_shared_memory_per_sm, 233472);
        assert_eq!(notes.len(), 1);
        assert!(device_info(&serde_json::json!({"name": "x"})).is_err());
        assert!(device_info(&serde_json::json!(3)).is_err());
    }
}
