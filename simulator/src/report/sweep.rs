//! Rendering the rows of a pairwise sweep ([`crate::sim::sweep`]) as a
//! table, JSON or CSV.

use comfy_table::{Cell, Table, presets::UTF8_FULL_CONDENSED};

use super::{Format, right};
use crate::policy::PolicyKind;
use crate::sim::fleet::SweepRow;
use crate::sim::sweep::PairRow;

/// Renders rows as JSON (as they serialize), CSV or a table: the `lead`
/// columns (CSV name, table name) from `lead_of`, then the pair columns.
fn render_rows<T: serde::Serialize>(
    rows: &[T],
    format: Format,
    lead: &[(&str, &str)],
    lead_of: impl Fn(&T) -> Vec<String>,
    pair_of: impl Fn(&T) -> &PairRow,
) -> String {
    match format {
        Format::Json => {
            let mut s = serde_json::to_string_pretty(rows).expect("rows serialize");
            s.push('\n');
            s
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(Vec::new());
            let mut header: Vec<&str> = lead.iter().map(|(c, _)| *c).collect();
            header.extend([
                "high",
                "low",
                "policy",
                "high_vs_timeslice",
                "low_vs_timeslice",
                "high_slowdown",
                "low_slowdown",
                "high_p99_ns",
                "high_slowdown_low",
                "high_slowdown_high",
            ]);
            w.write_record(&header).expect("writing to memory");
            for r in rows {
                let p = pair_of(r);
                let mut record = lead_of(r);
                record.extend([
                    p.high.clone(),
                    p.low.clone(),
                    p.policy.as_str().to_string(),
                    format!("{:.6}", p.high_vs_timeslice),
                    format!("{:.6}", p.low_vs_timeslice),
                    format!("{:.6}", p.high_slowdown),
                    format!("{:.6}", p.low_slowdown),
                    p.high_p99_ns.to_string(),
                ]);
                // The range's ends, as the JSON's `high_slowdown_range`
                // (empty without one).
                let end = |i: usize| {
                    p.high_slowdown_range
                        .map_or(String::new(), |r| format!("{:.6}", r[i]))
                };
                record.extend([end(0), end(1)]);
                w.write_record(&record).expect("writing to memory");
            }
            String::from_utf8(w.into_inner().expect("flushing to memory")).expect("UTF-8")
        }
        Format::Table => {
            let mut t = Table::new();
            t.load_preset(UTF8_FULL_CONDENSED);
            let mut header: Vec<&str> = lead.iter().map(|(_, t)| *t).collect();
            header.extend([
                "high (prio 0)",
                "low (prio 9)",
                "policy",
                "high vs timeslice",
                "low vs timeslice",
                "high slowdown",
                "low slowdown",
                "high p99",
            ]);
            t.set_header(header);
            for r in rows {
                let p = pair_of(r);
                let mut cells: Vec<Cell> = lead_of(r).into_iter().map(Cell::new).collect();
                cells.extend([
                    Cell::new(&p.high),
                    Cell::new(&p.low),
                    Cell::new(p.policy.as_str()),
                    right(format!("{:.3}x", p.high_vs_timeslice)),
                    right(format!("{:.3}x", p.low_vs_timeslice)),
                    right(format!("{:.3}x", p.high_slowdown)),
                    right(format!("{:.3}x", p.low_slowdown)),
                    right(fikit_trace::summary::human_ns(p.high_p99_ns)),
                ]);
                t.add_row(cells);
            }
            format!("{t}\n")
        }
    }
}

/// Renders sweep rows as a table, JSON or CSV.
pub fn render(rows: &[PairRow], format: Format) -> String {
    render_rows(rows, format, &[], |_| Vec::new(), |r| r)
}

/// The first screen of `fikit-sim` on traces: one line per latency-critical
/// job and partner, the latency-critical job's slowdown under each policy
/// but exclusive (its region beside the partner / alone), what FIKIT gains
/// over time slicing (its region under timeslice / under fikit), and the partner's
/// slowdown under FIKIT. Rows as [`crate::sim::sweep::pairs_of`] gives them.
pub fn pairwise_table(rows: &[PairRow]) -> String {
    let mut policies: Vec<PolicyKind> = rows
        .iter()
        .map(|r| r.policy)
        .filter(|&p| p != PolicyKind::Exclusive)
        .collect();
    policies.sort();
    policies.dedup();
    let has_fikit = policies.contains(&PolicyKind::Fikit);
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    let mut header: Vec<String> = vec!["latency-critical job".into(), "beside".into()];
    header.extend(policies.iter().map(|p| p.as_str().to_string()));
    if has_fikit {
        header.push("FIKIT vs timeslice".into());
        header.push("partner under fikit".into());
    }
    t.set_header(header);
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for r in rows {
        if !pairs.contains(&(r.high.as_str(), r.low.as_str())) {
            pairs.push((&r.high, &r.low));
        }
    }
    for (high, low) in pairs {
        let of = |p: PolicyKind| {
            rows.iter()
                .find(|r| r.high == high && r.low == low && r.policy == p)
        };
        let mut line = vec![Cell::new(high), Cell::new(low)];
        line.extend(policies.iter().map(|&p| {
            right(of(p).map_or("-".into(), |r| match r.high_slowdown_range {
                Some([lo, hi]) => format!("{:.2}x [{lo:.2}-{hi:.2}]", r.high_slowdown),
                None => format!("{:.2}x", r.high_slowdown),
            }))
        }));
        if let Some(f) = of(PolicyKind::Fikit) {
            line.push(right(format!("{:.2}x faster", f.high_vs_timeslice)));
            line.push(right(format!("{:.2}x", f.low_slowdown)));
        }
        t.add_row(line);
    }
    let ranged = rows.iter().any(|r| r.high_slowdown_range.is_some());
    format!(
        "{t}\nslowdown = its region beside the partner / alone, from its first kernel launch to its end \
         (1.00x: unaffected){}; FIKIT vs timeslice = its region under timeslice / under fikit\n",
        if ranged {
            "; [a-b]: over the hosts' untraced runs, a run beside the partner and one alone each anywhere between \
             the fastest and the slowest"
        } else {
            ""
        }
    )
}

/// Renders a fleet sweep's rows ([`crate::sim::fleet`]) as a table, JSON or
/// CSV: the item, model and grid point, then the pair columns.
pub fn render_fleet(rows: &[SweepRow], format: Format) -> String {
    render_rows(
        rows,
        format,
        &[("item", "item"), ("model", "model"), ("params", "params")],
        |r| vec![r.item.to_string(), r.model.clone(), r.params.clone()],
        |r| &r.row,
    )
}
