//! The JSON writer: the document streamed event by event, times as exact
//! decimal microseconds.

use std::io::{self, Write};

use indicatif::ProgressBar;

use super::{Arg, ChromeTrace, SIZE_WARN_BYTES, Slice};

impl ChromeTrace {
    /// Writes the JSON document; returns the bytes written. `progress` is
    /// advanced once per slice.
    pub fn write_json<W: Write>(&self, out: W, progress: &ProgressBar) -> io::Result<u64> {
        let mut w = Counting {
            inner: io::BufWriter::with_capacity(1 << 20, out),
            bytes: 0,
        };
        w.write_all(b"{\"traceEvents\":[\n")?;
        let mut first = true;
        let mut sep = |w: &mut Counting<_>| -> io::Result<()> {
            if first {
                first = false;
                Ok(())
            } else {
                w.write_all(b",\n")
            }
        };
        for p in &self.processes {
            sep(&mut w)?;
            write_meta(&mut w, "process_name", p.pid, 0, &p.name)?;
            sep(&mut w)?;
            write!(
                w,
                "{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{},\"tid\":0,\"ts\":0,\"args\":{{\"sort_index\":{}}}}}",
                p.pid, p.pid
            )?;
        }
        for t in &self.tracks {
            sep(&mut w)?;
            write_meta(&mut w, "thread_name", t.pid, t.tid, &t.name)?;
            sep(&mut w)?;
            write!(
                w,
                "{{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":{},\"tid\":{},\"ts\":0,\"args\":{{\"sort_index\":{}}}}}",
                t.pid, t.tid, t.tid
            )?;
        }
        for (i, s) in self.slices.iter().enumerate() {
            sep(&mut w)?;
            write_slice(&mut w, s)?;
            for f in &s.flows {
                sep(&mut w)?;
                write!(
                    w,
                    "{{\"ph\":\"{}\",{}\"id\":{},\"cat\":\"{}\",\"name\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{}}}",
                    if f.start { 's' } else { 'f' },
                    if f.start { "" } else { "\"bp\":\"e\"," },
                    f.id,
                    f.cat,
                    f.cat,
                    s.pid,
                    s.tid,
                    us(s.start_ns)
                )?;
            }
            if i % 4096 == 4095 {
                progress.inc(4096);
            }
        }
        progress.set_position(self.slices.len() as u64);
        w.write_all(b"\n],\"displayTimeUnit\":\"ns\",\"otherData\":")?;
        serde_json::to_writer(&mut w, &self.metadata).map_err(io::Error::other)?;
        w.write_all(b"}\n")?;
        w.flush()?;
        Ok(w.bytes)
    }
}

/// A writer that counts the bytes through it.
struct Counting<W: Write> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Nanoseconds as exact decimal microseconds: `1234567` → `1234.567`.
pub fn us(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

fn write_str<W: Write>(w: &mut W, s: &str) -> io::Result<()> {
    serde_json::to_writer(w, s).map_err(io::Error::other)
}

fn write_meta<W: Write>(w: &mut W, what: &str, pid: u32, tid: u32, name: &str) -> io::Result<()> {
    write!(
        w,
        "{{\"ph\":\"M\",\"name\":\"{what}\",\"pid\":{pid},\"tid\":{tid},\"ts\":0,\"args\":{{\"name\":"
    )?;
    write_str(w, name)?;
    w.write_all(b"}}")
}

fn write_slice<W: Write>(w: &mut W, s: &Slice) -> io::Result<()> {
    w.write_all(b"{\"ph\":\"X\",\"name\":")?;
    write_str(w, &s.name)?;
    write!(
        w,
        ",\"cat\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{",
        s.cat,
        s.pid,
        s.tid,
        us(s.start_ns),
        us(s.dur_ns)
    )?;
    for (i, (k, v)) in s.args.iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        write!(w, "\"{k}\":")?;
        match v {
            Arg::Str(s) => write_str(w, s)?,
            Arg::Int(n) => write!(w, "{n}")?,
            Arg::UInt(n) => write!(w, "{n}")?,
            Arg::Dims([x, y, z]) => write!(w, "[{x},{y},{z}]")?,
        }
    }
    w.write_all(b"}}")
}

/// The warning to print when a written export is large: its size and event
/// count, and a `--max-events` that would bring it under [`SIZE_WARN_BYTES`].
pub fn size_warning(path: &str, bytes: u64, trace: &ChromeTrace) -> Option<String> {
    if bytes <= SIZE_WARN_BYTES {
        return None;
    }
    let per_job = trace.max_slices_per_process().max(1);
    let suggest = ((per_job as f64) * (SIZE_WARN_BYTES as f64 / bytes as f64) * 0.9) as usize;
    Some(format!(
        "warning: {path} is {:.0} MB ({} events): the Perfetto UI may fail to open JSON \
         traces of more than a few hundred MB; export fewer events with --max-events N \
         (keeps the first N slices of each job; e.g. --max-events {})",
        bytes as f64 / 1e6,
        trace.event_count(),
        suggest.max(1000)
    ))
}
