//! A job's prediction table: what FIKIT's gate knows of each kernel from the
//! job's profile (a fikit trace of the same program run alone), written by
//! `fikit-run` and read by the collector in the gated process.
//!
//! Per `kernel_key`: the mean duration (the filler's prediction, as the
//! simulator's FIKIT predicts) and the idle gap that followed it (the top
//! job's prediction): the 10th percentile (nearest rank) of the gaps after its
//! occurrences, so a fill sized by it overruns the top job's gap at most about
//! one time in ten on the profile, where the mean would overrun about half the
//! time. A gap is from the kernel's end to the start of the job's next GPU
//! operation (kernel, copy or memset), 0 when that overlapped; after the
//! job's last operation it is [`Table::END_GAP_NS`].
//!
//! The file is text: a first line `fikit-gate-table 1`, then `unknown_ns N`
//! (the prediction for a kernel not in the table: the job's longest profiled
//! kernel, so an unknown kernel fills only a gap any of its kernels would fit),
//! then `away_after_ns N` ([`Table::away_after_ns`]; a file without it
//! reads as 0), then `hold_ns N` ([`Table::hold_ns`]; likewise), then one
//! line per key: `KEY_HEX MEAN_NS GAP_NS`.

use std::collections::HashMap;

/// One GPU operation of a profile, in start order, as [`Table::from_ops`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfiledOp {
    /// The kernel key; `None` for a copy or memset.
    pub key: Option<u64>,
    /// Start on the GPU, ns.
    pub start_ns: i64,
    /// End on the GPU, ns.
    pub end_ns: i64,
}

/// Predictions by kernel key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Table {
    /// `(mean duration, gap after)` per kernel key, ns.
    pub kernels: HashMap<u64, (i64, i64)>,
    /// The predicted duration of a kernel not in the table, ns.
    pub unknown_ns: i64,
    /// How long the job may launch nothing and still be doing what its
    /// profile shows: its longest idle gap between GPU operations plus its
    /// longest kernel, ns (0: unknown, never away). A job quiet for longer
    /// has left its profiled behaviour, most often because its GPU work is
    /// over and its process is exiting (a Python program's teardown takes
    /// about a second), and FIKIT's gate lets the others run meanwhile.
    pub away_after_ns: i64,
    /// While the job is away, the most predicted kernel time another job of
    /// lower priority may keep in flight, ns (`fikit_rules::hold_ns` of the
    /// job's iteration, set by `fikit-run` from the job's profile; 0: no
    /// bound). [`Table::from_ops`] leaves it 0: it knows no iterations.
    pub hold_ns: i64,
}

const HEAD: &str = "fikit-gate-table 1";

impl Table {
    /// The gap after a job's last operation: the job does nothing more.
    pub const END_GAP_NS: i64 = i64::MAX / 4;

    /// Builds the table from a profile's GPU operations (any order: they are
    /// sorted by start).
    pub fn from_ops(ops: &[ProfiledOp]) -> Table {
        let mut ops = ops.to_vec();
        ops.sort_by_key(|o| (o.start_ns, o.end_ns));
        let mut durations: HashMap<u64, (i128, i64)> = HashMap::new();
        let mut gaps: HashMap<u64, Vec<i64>> = HashMap::new();
        let mut unknown_ns = 0i64;
        let mut longest_gap = 0i64;
        let mut busy_until = i64::MIN;
        for (i, o) in ops.iter().enumerate() {
            busy_until = busy_until.max(o.end_ns);
            if let Some(next) = ops.get(i + 1) {
                longest_gap = longest_gap.max(next.start_ns - busy_until);
            }
            let Some(key) = o.key else { continue };
            let d = (o.end_ns - o.start_ns).max(0);
            unknown_ns = unknown_ns.max(d);
            let e = durations.entry(key).or_insert((0, 0));
            e.0 += i128::from(d);
            e.1 += 1;
            let gap = match ops.get(i + 1) {
                Some(next) => (next.start_ns - o.end_ns).max(0),
                None => Table::END_GAP_NS,
            };
            gaps.entry(key).or_default().push(gap);
        }
        let kernels = durations
            .into_iter()
            .map(|(key, (sum, n))| {
                let mut g = gaps.remove(&key).unwrap_or_default();
                g.sort_unstable();
                // Nearest rank: the smallest gap with at least 10% of the gaps at or below it.
                let rank = (g.len() as f64 * 0.10).ceil().max(1.0) as usize;
                let gap = g.get(rank - 1).copied().unwrap_or(0);
                (key, ((sum / i128::from(n)) as i64, gap))
            })
            .collect();
        Table {
            kernels,
            unknown_ns,
            away_after_ns: if ops.is_empty() {
                0
            } else {
                longest_gap.saturating_add(unknown_ns)
            },
            hold_ns: 0,
        }
    }

    /// The predicted duration of kernel `key` (`None`: a graph launch or an
    /// unnamed kernel), and whether the table knows it.
    pub fn duration(&self, key: Option<u64>) -> (i64, bool) {
        match key.and_then(|k| self.kernels.get(&k)) {
            Some(&(d, _)) => (d, true),
            None => (self.unknown_ns, false),
        }
    }

    /// The predicted idle gap after kernel `key`: 0 for a kernel the table
    /// does not know (no fill is planned behind it).
    pub fn gap_after(&self, key: Option<u64>) -> i64 {
        key.and_then(|k| self.kernels.get(&k))
            .map_or(0, |&(_, g)| g)
    }

    /// The shortest predicted kernel (what the smallest fill needs), ns.
    pub fn shortest_ns(&self) -> i64 {
        self.kernels
            .values()
            .map(|&(d, _)| d)
            .min()
            .unwrap_or(self.unknown_ns)
    }

    /// The file's text (keys in ascending order: the same table gives the same bytes).
    pub fn to_text(&self) -> String {
        let mut keys: Vec<_> = self.kernels.keys().copied().collect();
        keys.sort_unstable();
        let mut s = format!(
            "{HEAD}\nunknown_ns {}\naway_after_ns {}\nhold_ns {}\n",
            self.unknown_ns, self.away_after_ns, self.hold_ns
        );
        for k in keys {
            let (d, g) = self.kernels[&k];
            s.push_str(&format!("{k:016x} {d} {g}\n"));
        }
        s
    }

    /// Parses a table file's text; the error names the line and what is wrong.
    pub fn parse(text: &str) -> Result<Table, String> {
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, l)) if l.trim() == HEAD => {}
            _ => return Err(format!("line 1: expected `{HEAD}`")),
        }
        let mut t = Table::default();
        let num = |n: usize, v: Option<&str>| -> Result<i64, String> {
            v.and_then(|v| v.parse::<i64>().ok())
                .filter(|v| *v >= 0)
                .ok_or_else(|| format!("line {}: expected a non-negative integer", n + 1))
        };
        for (n, l) in lines {
            let mut f = l.split_whitespace();
            match f.next() {
                None => continue,
                Some("unknown_ns") => t.unknown_ns = num(n, f.next())?,
                Some("away_after_ns") => t.away_after_ns = num(n, f.next())?,
                Some("hold_ns") => t.hold_ns = num(n, f.next())?,
                Some(k) => {
                    let key = u64::from_str_radix(k, 16)
                        .map_err(|_| format!("line {}: `{k}` is not a hex kernel key", n + 1))?;
                    let (d, g) = (num(n, f.next())?, num(n, f.next())?);
                    t.kernels.insert(key, (d, g));
                }
            }
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(key: u64, start_ns: i64, end_ns: i64) -> ProfiledOp {
        ProfiledOp {
            key: Some(key),
            start_ns,
            end_ns,
        }
    }

    #[test]
    fn worked_example() {
        // Key 1 runs 10 ns three times, followed by gaps of 5, 100 and (a copy
        // at 300) 80 ns; key 2 runs 20 and 40 ns, then 0 (overlap) and the end.
        let ops = [
            k(1, 0, 10),
            k(2, 15, 35),
            k(1, 135, 145),
            ProfiledOp {
                key: None,
                start_ns: 225,
                end_ns: 300,
            },
            k(1, 300, 310),
            k(2, 410, 450),
            k(2, 440, 480),
        ];
        let t = Table::from_ops(&ops);
        // Key 1 gaps: 5, 80, 90 -> 10th percentile (rank 1) = 5.
        assert_eq!(t.kernels[&1], (10, 5));
        // Key 2: durations 20, 40, 40 -> mean 33; gaps 100, 0, END -> rank 1 = 0.
        assert_eq!(t.kernels[&2], (33, 0));
        assert_eq!(t.unknown_ns, 40);
        assert_eq!(t.duration(Some(9)), (40, false));
        assert_eq!(t.duration(Some(1)), (10, true));
        assert_eq!(t.gap_after(Some(9)), 0);
        assert_eq!(t.shortest_ns(), 10);
        // The longest gap, 100 (35 to 135 and 310 to 410), plus the longest
        // kernel, 40.
        assert_eq!(t.away_after_ns, 140);
        assert_eq!(Table::from_ops(&[]).away_after_ns, 0);
    }

    #[test]
    fn the_tenth_percentile_drops_one_short_gap_in_ten() {
        // Eleven occurrences: one short gap after it, ten long ones.
        let mut ops = Vec::new();
        for i in 0..11 {
            let start = i * 1_000;
            ops.push(k(7, start, start + 10));
            let gap = if i == 3 { 20 } else { 500 };
            ops.push(k(8, start + 10 + gap, start + 10 + gap + 1));
        }
        let t = Table::from_ops(&ops);
        // rank ceil(1.1) = 2: the second smallest, a long gap.
        assert_eq!(t.kernels[&7].1, 500);
        // Key 8's gaps: 489 nine times, 969 once, the end gap once.
        assert_eq!(t.kernels[&8].1, 489);
    }

    #[test]
    fn text_round_trip_and_errors() {
        let mut t = Table::from_ops(&[k(0xabc, 0, 10), k(0xdef, 20, 25)]);
        t.hold_ns = 7;
        let text = t.to_text();
        assert_eq!(
            text,
            "fikit-gate-table 1\nunknown_ns 10\naway_after_ns 20\nhold_ns 7\n0000000000000abc 10 10\n0000000000000def 5 2305843009213693951\n"
        );
        assert_eq!(Table::parse(&text).unwrap(), t);
        // Written before away_after_ns and hold_ns: never away, no bound.
        let old = Table::parse("fikit-gate-table 1\nunknown_ns 10\n0abc 10 10\n").unwrap();
        assert_eq!((old.unknown_ns, old.away_after_ns, old.hold_ns), (10, 0, 0));
        assert!(Table::parse("nope").unwrap_err().contains("line 1"));
        let e = Table::parse("fikit-gate-table 1\nzz 1 2\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("zz"), "{e}");
        let e = Table::parse("fikit-gate-table 1\nab 1 -2\n").unwrap_err();
        assert!(e.contains("line 2"), "{e}");
    }
}
