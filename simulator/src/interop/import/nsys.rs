//! Nsight Systems SQLite exports (`nsys export --type sqlite report.nsys-rep`).
//!
//! Tables read (the schema is read first: columns vary by version, and nsys
//! creates a table only when it has rows):
//!
//! | table | columns used |
//! |---|---|
//! | `CUPTI_ACTIVITY_KIND_KERNEL` | `start`, `end`, `deviceId`, `contextId`, `streamId`, `correlationId`, `globalPid`, `mangledName` / `demangledName` / `shortName` (→ `StringIds`), `gridX..Z`, `blockX..Z`, `registersPerThread`, `staticSharedMemory`, `dynamicSharedMemory` |
//! | `CUPTI_ACTIVITY_KIND_MEMCPY` | `start`, `end`, `deviceId`, `contextId`, `streamId`, `correlationId`, `globalPid`, `bytes`, `copyKind` (CUPTI's memcpy kind) |
//! | `CUPTI_ACTIVITY_KIND_MEMSET` | `start`, `end`, `deviceId`, `contextId`, `streamId`, `correlationId`, `globalPid`, `bytes` |
//! | `CUPTI_ACTIVITY_KIND_RUNTIME` | `start`, `end`, `globalTid`, `correlationId`, `nameId` (→ `StringIds`) |
//! | `CUPTI_ACTIVITY_KIND_SYNCHRONIZATION` | `start`, `end`, `contextId`, `streamId`, `correlationId`, `globalPid`, `syncType` (CUPTI's synchronization type) |
//! | `TARGET_INFO_GPU` | `id` / `cuDevice`, `name`, `smCount`, `maxWarpsPerSm` × `threadsPerWarp`, `maxRegistersPerSm`, `maxShmemPerSm`, `maxBlocksPerSm` |
//! | `TARGET_INFO_SESSION_START_TIME` | `utcEpochNs` (the clock offset) |
//! | `PROCESSES` | `pid`, `name` (the command line's first element) |
//!
//! Times are integer nanoseconds already. A serialized global id holds the
//! process id in bits 24–47 and the thread id in bits 0–23.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use fikit_trace::{
    ApiCall, CopyKind, DeviceInfo, Kernel, MemOp, Placement, Sync, SyncKind, kernel_key,
};
use rusqlite::{Connection, OpenFlags, types::Value};

use super::{Capture, ImportError, Source, api_domain_of, api_function_name};

/// The first bytes of every SQLite 3 database.
pub const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

const KERNEL: &str = "CUPTI_ACTIVITY_KIND_KERNEL";
const MEMCPY: &str = "CUPTI_ACTIVITY_KIND_MEMCPY";
const MEMSET: &str = "CUPTI_ACTIVITY_KIND_MEMSET";
const RUNTIME: &str = "CUPTI_ACTIVITY_KIND_RUNTIME";
const SYNC: &str = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
const GPU_INFO: &str = "TARGET_INFO_GPU";

/// The process id in a serialized global id.
pub fn pid_of_global(id: i64) -> u32 {
    ((id >> 24) & 0x00FF_FFFF) as u32
}

/// The thread id in a serialized global id.
pub fn tid_of_global(id: i64) -> u64 {
    (id & 0x00FF_FFFF) as u64
}

/// A table's columns, and the rows of a query over them.
struct Table<'c> {
    conn: &'c Connection,
    name: &'static str,
    columns: BTreeSet<String>,
    path: &'c Path,
}

/// One row: the values of the selected columns, by name.
struct Row<'t> {
    table: &'t str,
    rowid: i64,
    names: &'t [&'t str],
    values: Vec<Value>,
}

impl Row<'_> {
    fn where_(&self) -> String {
        format!("table {}, row {}", self.table, self.rowid)
    }

    fn opt_i64(&self, col: &str) -> Result<Option<i64>, String> {
        let i = self
            .names
            .iter()
            .position(|n| *n == col)
            .expect("only selected columns are read");
        match &self.values[i] {
            Value::Null => Ok(None),
            Value::Integer(v) => Ok(Some(*v)),
            other => Err(format!(
                "{}: column `{col}` holds {other:?}, expected an integer",
                self.where_()
            )),
        }
    }

    fn i64(&self, col: &str) -> Result<i64, String> {
        self.opt_i64(col)?
            .ok_or_else(|| format!("{}: column `{col}` is null", self.where_()))
    }

    fn u32(&self, col: &str) -> Result<u32, String> {
        self.opt_u32(col)?
            .ok_or_else(|| format!("{}: column `{col}` is null", self.where_()))
    }

    /// An unsigned 32-bit value, or `None` when null.
    fn opt_u32(&self, col: &str) -> Result<Option<u32>, String> {
        self.opt_i64(col)?
            .map(|v| {
                u32::try_from(v).map_err(|_| {
                    format!(
                        "{}: column `{col}` is {v}, not an unsigned 32-bit integer",
                        self.where_()
                    )
                })
            })
            .transpose()
    }

    /// A correlation id; 0 when null (nsys leaves it null when there is none).
    fn correlation(&self) -> Result<u32, String> {
        Ok(self.opt_u32("correlationId")?.unwrap_or(0))
    }

    fn interval(&self) -> Result<(i64, i64), String> {
        let (s, e) = (self.i64("start")?, self.i64("end")?);
        for (v, field) in [(s, "start"), (e, "end")] {
            if let Some(why) = fikit_trace::timestamp_problem(v) {
                return Err(format!("{}: {field}: {why}", self.where_()));
            }
        }
        if e < s {
            return Err(format!(
                "{}: end {e} is before start {s} (negative duration {} ns)",
                self.where_(),
                e - s
            ));
        }
        Ok((s, e))
    }
}

impl<'c> Table<'c> {
    fn open(
        conn: &'c Connection,
        path: &'c Path,
        name: &'static str,
        present: &BTreeSet<String>,
    ) -> Result<Option<Self>, ImportError> {
        if !present.contains(name) {
            return Ok(None);
        }
        let mut stmt = conn
            .prepare(&format!("PRAGMA table_info(\"{name}\")"))
            .map_err(|e| ImportError::new(path, format!("table {name}: {e}")))?;
        let columns = stmt
            .query_map([], |r| r.get::<_, String>(1))
            .and_then(|rows| rows.collect::<Result<BTreeSet<_>, _>>())
            .map_err(|e| ImportError::new(path, format!("table {name}: {e}")))?;
        Ok(Some(Table {
            conn,
            name,
            columns,
            path,
        }))
    }

    fn has(&self, col: &str) -> bool {
        self.columns.contains(col)
    }

    /// Runs `f` on every row (in rowid order) with `required` columns, and
    /// `optional` ones where the table has them (null otherwise).
    fn rows(
        &self,
        required: &[&str],
        optional: &[&str],
        mut f: impl FnMut(&Row) -> Result<(), String>,
    ) -> Result<(), ImportError> {
        let err = |m: String| ImportError::new(self.path, m);
        if let Some(missing) = required.iter().find(|c| !self.has(c)) {
            let have: Vec<&str> = self.columns.iter().map(String::as_str).collect();
            return Err(err(format!(
                "table {}: column `{missing}` is missing (columns: {}); is this an Nsight \
                 Systems export?",
                self.name,
                have.join(", ")
            )));
        }
        let names: Vec<&str> = required.iter().chain(optional).copied().collect();
        let select: Vec<String> = names
            .iter()
            .map(|c| {
                if self.has(c) {
                    format!("\"{c}\"")
                } else {
                    "NULL".to_string()
                }
            })
            .collect();
        let sql = format!(
            "SELECT rowid, {} FROM \"{}\" ORDER BY rowid",
            select.join(", "),
            self.name
        );
        let mut stmt = self
            .conn
            .prepare(&sql)
            .map_err(|e| err(format!("table {}: {e}", self.name)))?;
        let mut rows = stmt
            .query([])
            .map_err(|e| err(format!("table {}: {e}", self.name)))?;
        while let Some(r) = rows
            .next()
            .map_err(|e| err(format!("table {}: {e}", self.name)))?
        {
            let rowid: i64 = r.get(0).unwrap_or(-1);
            let values = (1..=names.len())
                .map(|i| r.get::<_, Value>(i))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| err(format!("table {}, row {rowid}: {e}", self.name)))?;
            f(&Row {
                table: self.name,
                rowid,
                names: &names,
                values,
            })
            .map_err(err)?;
        }
        Ok(())
    }
}

/// Reads an Nsight Systems export: file-wide facts and one capture per process.
pub(crate) fn read(path: &Path) -> Result<(Source, Vec<Capture>), ImportError> {
    let (conn, present) = open(path)?;
    let mut r = Reader {
        conn: &conn,
        path,
        strings: strings(&conn, path)?,
        present: &present,
        source: Source::default(),
        captures: BTreeMap::new(),
        no_pid: false,
    };
    r.kernels()?;
    r.memops()?;
    r.runtime()?;
    r.syncs()?;
    r.gpu_info()?;
    r.session_and_processes();
    Ok(r.finish())
}

/// Opens the database after checking that it is an Nsight Systems export
/// with CUDA activity; returns it with the names of its tables and views.
fn open(path: &Path) -> Result<(Connection, BTreeSet<String>), ImportError> {
    let err = |m: String| ImportError::new(path, m);
    let mut head = [0u8; 16];
    {
        use std::io::Read;
        let mut f = std::fs::File::open(path).map_err(|e| err(e.to_string()))?;
        let n = f.read(&mut head).map_err(|e| err(e.to_string()))?;
        if n < head.len() || head != SQLITE_MAGIC {
            return Err(err(
                "not an Nsight Systems SQLite export: not an SQLite database (make one with \
                 `nsys export --type sqlite REPORT.nsys-rep`)"
                    .into(),
            ));
        }
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| err(format!("cannot open the SQLite database: {e}")))?;
    let present: BTreeSet<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
        .and_then(|mut s| {
            s.query_map([], |r| r.get::<_, String>(0))?
                .collect::<Result<_, _>>()
        })
        .map_err(|e| err(format!("cannot read the database's tables: {e}")))?;
    let gpu_tables = [KERNEL, MEMCPY, MEMSET];
    if !gpu_tables.iter().any(|t| present.contains(*t)) {
        let some: Vec<&str> = present.iter().take(12).map(String::as_str).collect();
        return Err(err(format!(
            "not an Nsight Systems export with CUDA activity: none of the tables {} \
             (tables: {}{}); profile with `nsys profile --trace=cuda`",
            gpu_tables.join(", "),
            if some.is_empty() {
                "none".to_string()
            } else {
                some.join(", ")
            },
            if present.len() > some.len() {
                ", …"
            } else {
                ""
            }
        )));
    }
    if !present.contains("StringIds") {
        return Err(err(
            "not an Nsight Systems export: the table StringIds (kernel and function names) is \
             missing"
                .into(),
        ));
    }
    Ok((conn, present))
}

/// The `StringIds` table: kernel and function names by id.
fn strings(conn: &Connection, path: &Path) -> Result<HashMap<i64, String>, ImportError> {
    conn.prepare("SELECT id, value FROM StringIds")
        .and_then(|mut s| {
            s.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?
                .collect::<Result<_, _>>()
        })
        .map_err(|e| ImportError::new(path, format!("table StringIds: {e}")))
}

/// The columns every GPU activity table has.
const COMMON: [&str; 6] = [
    "start",
    "end",
    "deviceId",
    "contextId",
    "streamId",
    "correlationId",
];

/// An export being read: the database, and what has been read so far.
struct Reader<'c> {
    conn: &'c Connection,
    path: &'c Path,
    strings: HashMap<i64, String>,
    present: &'c BTreeSet<String>,
    source: Source,
    captures: BTreeMap<u32, Capture>,
    /// True when a GPU row had no `globalPid`.
    no_pid: bool,
}

/// The string a column's string id refers to; `None` when the column is null.
fn string(strings: &HashMap<i64, String>, row: &Row, col: &str) -> Result<Option<String>, String> {
    match row.opt_i64(col)? {
        None => Ok(None),
        Some(id) => strings.get(&id).cloned().map(Some).ok_or_else(|| {
            format!(
                "{}: column `{col}` refers to string id {id}, which StringIds does not hold",
                row.where_()
            )
        }),
    }
}

/// The process of a GPU row; 0 (and `no_pid` set) when it has no `globalPid`.
fn pid_of(row: &Row, no_pid: &mut bool) -> Result<u32, String> {
    Ok(match row.opt_i64("globalPid")? {
        Some(g) => pid_of_global(g),
        None => {
            *no_pid = true;
            0
        }
    })
}

fn placement(row: &Row) -> Result<Placement, String> {
    Ok(Placement {
        device: row.u32("deviceId")?,
        context: row.u32("contextId")?,
        stream: row.u32("streamId")?,
    })
}

impl<'c> Reader<'c> {
    fn table(&self, name: &'static str) -> Result<Option<Table<'c>>, ImportError> {
        Table::open(self.conn, self.path, name, self.present)
    }

    /// `CUPTI_ACTIVITY_KIND_KERNEL`.
    fn kernels(&mut self) -> Result<(), ImportError> {
        let Some(t) = self.table(KERNEL)? else {
            return Ok(());
        };
        let names = ["mangledName", "demangledName", "shortName"];
        if !names.iter().any(|n| t.has(n)) {
            return Err(ImportError::new(
                self.path,
                format!(
                    "table {KERNEL}: no kernel name column (one of {})",
                    names.join(", ")
                ),
            ));
        }
        let required: Vec<&str> = COMMON
            .iter()
            .copied()
            .chain([
                "gridX",
                "gridY",
                "gridZ",
                "blockX",
                "blockY",
                "blockZ",
                "registersPerThread",
                "staticSharedMemory",
                "dynamicSharedMemory",
            ])
            .collect();
        let mut optional = vec!["globalPid", "sharedMemoryExecuted"];
        optional.extend(names);
        let Reader {
            strings,
            captures,
            no_pid,
            ..
        } = self;
        t.rows(&required, &optional, |row| {
            let (start_ns, end_ns) = row.interval()?;
            let mangled = string(strings, row, "mangledName")?;
            let demangled = string(strings, row, "demangledName")?;
            let short = string(strings, row, "shortName")?;
            let name = mangled
                .clone()
                .or_else(|| demangled.clone())
                .or_else(|| short.clone())
                .ok_or_else(|| format!("{}: the kernel has no name", row.where_()))?;
            let demangled_name = demangled.or(short).unwrap_or_else(|| name.clone());
            let grid = [row.u32("gridX")?, row.u32("gridY")?, row.u32("gridZ")?];
            let block = [row.u32("blockX")?, row.u32("blockY")?, row.u32("blockZ")?];
            if let Some((_, why)) = fikit_trace::launch_shape_problem(grid, block) {
                return Err(format!(
                    "{}: the kernel's launch shape: {why}",
                    row.where_()
                ));
            }
            let regs = row.u32("registersPerThread")?;
            let st = row.u32("staticSharedMemory")?;
            let dy = row.u32("dynamicSharedMemory")?;
            let shared_config_bytes = row.opt_u32("sharedMemoryExecuted")?;
            let pid = pid_of(row, no_pid)?;
            captures.entry(pid).or_default().kernels.push(Kernel {
                start_ns,
                end_ns,
                placement: placement(row)?,
                correlation_id: row.correlation()?,
                kernel_key: kernel_key(&name, grid, block, st, dy, regs),
                name,
                demangled_name,
                grid,
                block,
                registers_per_thread: regs,
                static_shared_bytes: st,
                dynamic_shared_bytes: dy,
                launch: None,
                shared_config_bytes,
            });
            Ok(())
        })
    }

    /// `CUPTI_ACTIVITY_KIND_MEMCPY` and `_MEMSET`.
    fn memops(&mut self) -> Result<(), ImportError> {
        for (table, is_copy) in [(MEMCPY, true), (MEMSET, false)] {
            let Some(t) = self.table(table)? else {
                continue;
            };
            let mut required: Vec<&str> = COMMON.iter().copied().chain(["bytes"]).collect();
            if is_copy {
                required.push("copyKind");
            }
            let Reader {
                captures, no_pid, ..
            } = self;
            t.rows(&required, &["globalPid"], |row| {
                let (start_ns, end_ns) = row.interval()?;
                let bytes = row.i64("bytes")?;
                let pid = pid_of(row, no_pid)?;
                captures.entry(pid).or_default().memops.push(MemOp {
                    start_ns,
                    end_ns,
                    placement: placement(row)?,
                    correlation_id: row.correlation()?,
                    copy_kind: if is_copy {
                        Some(CopyKind::from_cupti(row.i64("copyKind")?))
                    } else {
                        None
                    },
                    bytes: u64::try_from(bytes).map_err(|_| {
                        format!("{}: column `bytes` is negative ({bytes})", row.where_())
                    })?,
                    launch: None,
                });
                Ok(())
            })?;
        }
        Ok(())
    }

    /// `CUPTI_ACTIVITY_KIND_RUNTIME`.
    fn runtime(&mut self) -> Result<(), ImportError> {
        let Some(t) = self.table(RUNTIME)? else {
            return Ok(());
        };
        let Reader {
            strings,
            captures,
            source,
            ..
        } = self;
        t.rows(
            &["start", "end", "globalTid", "correlationId", "nameId"],
            &[],
            |row| {
                let (start_ns, end_ns) = row.interval()?;
                let g = row.i64("globalTid")?;
                let full = string(strings, row, "nameId")?
                    .ok_or_else(|| format!("{}: column `nameId` is null", row.where_()))?;
                let name = api_function_name(&full).to_string();
                source.has_api = true;
                captures
                    .entry(pid_of_global(g))
                    .or_default()
                    .api_calls
                    .push(ApiCall {
                        domain: api_domain_of(&name),
                        name,
                        start_ns,
                        end_ns,
                        thread_id: tid_of_global(g),
                        correlation_id: row.correlation()?,
                    });
                Ok(())
            },
        )
    }

    /// `CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`.
    fn syncs(&mut self) -> Result<(), ImportError> {
        let Some(t) = self.table(SYNC)? else {
            return Ok(());
        };
        let Reader {
            captures, no_pid, ..
        } = self;
        t.rows(
            &[
                "start",
                "end",
                "contextId",
                "streamId",
                "correlationId",
                "syncType",
            ],
            &["globalPid"],
            |row| {
                let (start_ns, end_ns) = row.interval()?;
                let stream = row.i64("streamId")?;
                let pid = pid_of(row, no_pid)?;
                captures.entry(pid).or_default().syncs.push(Sync {
                    kind: SyncKind::from_cupti(row.i64("syncType")?),
                    start_ns,
                    end_ns,
                    context: row.u32("contextId")?,
                    // CUPTI_SYNCHRONIZATION_INVALID_VALUE (-1, or its u32 form): no stream.
                    stream: (0..i64::from(u32::MAX))
                        .contains(&stream)
                        .then_some(stream as u32),
                    thread_id: None,
                    correlation_id: row.correlation()?,
                });
                Ok(())
            },
        )
    }

    /// `TARGET_INFO_GPU`: the devices.
    fn gpu_info(&mut self) -> Result<(), ImportError> {
        let Some(t) = self.table(GPU_INFO)? else {
            return Ok(());
        };
        let optional = [
            "cuDevice",
            "name",
            "smCount",
            "maxWarpsPerSm",
            "threadsPerWarp",
            "maxRegistersPerSm",
            "maxShmemPerSm",
            "maxBlocksPerSm",
        ];
        let mut names: HashMap<i64, String> = HashMap::new();
        if t.has("name") {
            // The name is text; read it on its own.
            let sql = format!(
                "SELECT {}, name FROM {GPU_INFO}",
                if t.has("cuDevice") {
                    "coalesce(cuDevice, id)"
                } else {
                    "id"
                }
            );
            names = self
                .conn
                .prepare(&sql)
                .and_then(|mut s| {
                    s.query_map([], |r| {
                        Ok((
                            r.get::<_, i64>(0)?,
                            r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                        ))
                    })?
                    .collect::<Result<_, _>>()
                })
                .map_err(|e| ImportError::new(self.path, format!("table {GPU_INFO}: {e}")))?;
        }
        let optional: Vec<&str> = optional.into_iter().filter(|c| *c != "name").collect();
        let source = &mut self.source;
        t.rows(&["id"], &optional, |row| {
            let ordinal = row.opt_i64("cuDevice")?.unwrap_or(row.i64("id")?);
            // A limit not given is 0 (unknown); one given must be a count.
            let num = |c: &str| -> Result<u32, String> {
                match row.opt_i64(c)? {
                    None => Ok(0),
                    Some(v) => u32::try_from(v).map_err(|_| {
                        format!("{}: {c} is {v}: not an unsigned 32-bit count", row.where_())
                    }),
                }
            };
            let info = DeviceInfo {
                name: names
                    .get(&ordinal)
                    .filter(|n| !n.is_empty())
                    .cloned()
                    .unwrap_or_else(|| "unknown".into()),
                sm_count: num("smCount")?,
                max_threads_per_sm: num("maxWarpsPerSm")?.saturating_mul(num("threadsPerWarp")?),
                max_registers_per_sm: num("maxRegistersPerSm")?,
                max_shared_memory_per_sm: num("maxShmemPerSm")?,
                max_blocks_per_sm: num("maxBlocksPerSm")?,
            };
            if let Ok(o) = u32::try_from(ordinal) {
                source.devices.insert(o, info);
            }
            Ok(())
        })
    }

    /// The clock offset (`TARGET_INFO_SESSION_START_TIME`) and the
    /// processes' names (`PROCESSES`), best effort.
    fn session_and_processes(&mut self) {
        let (conn, present, source) = (self.conn, self.present, &mut self.source);
        if present.contains("TARGET_INFO_SESSION_START_TIME") {
            source.clock_offset_ns = conn
                .query_row(
                    "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1",
                    [],
                    |r| r.get::<_, Option<i64>>(0),
                )
                .ok()
                .flatten();
        }
        if present.contains("PROCESSES") {
            // Best effort: the process's name as the first element of its command line.
            if let Ok(mut s) = conn.prepare("SELECT pid, name FROM PROCESSES") {
                let rows = s.query_map([], |r| {
                    Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, Option<String>>(1)?))
                });
                if let Ok(rows) = rows {
                    for (pid, name) in rows.flatten() {
                        if let (Some(pid), Some(name)) =
                            (pid.and_then(|p| u32::try_from(p).ok()), name)
                        {
                            source.command_lines.insert(pid, vec![name]);
                        }
                    }
                }
            }
        }
    }

    /// Gives GPU rows without a process to the one process that made API
    /// calls, adds the file-wide notes, and returns the captures.
    fn finish(self) -> (Source, Vec<Capture>) {
        let Reader {
            present,
            mut source,
            mut captures,
            no_pid,
            ..
        } = self;
        if no_pid {
            // Old exports without globalPid on GPU rows: one process, the API's.
            let api_pids: BTreeSet<u32> = captures
                .iter()
                .filter(|(p, c)| **p != 0 && !c.api_calls.is_empty())
                .map(|(p, _)| *p)
                .collect();
            if api_pids.len() == 1 {
                let pid = *api_pids.first().expect("one pid");
                let orphan = captures.remove(&0).unwrap_or_default();
                let c = captures.entry(pid).or_default();
                c.kernels.extend(orphan.kernels);
                c.memops.extend(orphan.memops);
                c.syncs.extend(orphan.syncs);
                c.api_calls.extend(orphan.api_calls);
            } else {
                source
                    .notes
                    .push("GPU rows carry no globalPid: their process is unknown (0)".to_string());
            }
        }
        if !present.contains(RUNTIME) {
            source.notes.push(format!(
                "no {RUNTIME} table: no API calls, so no launch times and no synchronizations \
                 (profile with `nsys profile --trace=cuda`)"
            ));
        }
        if !present.contains(GPU_INFO) {
            source.notes.push(format!(
                "no {GPU_INFO} table: the device's limits are unknown"
            ));
        }
        source.notes.push(
            "Nsight Systems records no driver or CUDA version in the tables read: they are \
             `unknown`"
                .into(),
        );
        let captures = captures
            .into_iter()
            .map(|(pid, mut c)| {
                c.pid = pid;
                c
            })
            .collect();
        (source, captures)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_ids() {
        let g = (1i64 << 56) | (4321i64 << 24) | 987;
        assert_eq!(pid_of_global(g), 4321);
        assert_eq!(tid_of_global(g), 987);
    }

    #[test]
    fn copy_kinds() {
        assert_eq!(CopyKind::from_cupti(1), CopyKind::HtoD);
        assert_eq!(CopyKind::from_cupti(2), CopyKind::DtoH);
        assert_eq!(CopyKind::from_cupti(8), CopyKind::DtoD);
        assert_eq!(CopyKind::from_cupti(3), CopyKind::Other);
    }
}
