//! Rows files: sweep rows as Parquet, stamped with the spec's hash, the
//! item count and the shard (`fikit.sweep.*` metadata).

use std::path::Path;

use crate::policy::PolicyKind;
use crate::sim::sweep::PairRow;

use super::{FleetError, Shard, SweepRow};

/// What a rows file says about itself (Parquet key/value metadata `fikit.sweep.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowsMeta {
    /// The spec's hash.
    pub spec_hash: String,
    /// Items in the whole spec.
    pub items: u64,
    /// The shard the rows are; `None` for a merged table.
    pub shard: Option<Shard>,
}

const KEY: &str = "fikit.sweep.";

/// Writes sweep rows as Parquet (zstd), with `meta` as key/value metadata.
pub fn write_rows(path: &Path, rows: &[SweepRow], meta: &RowsMeta) -> Result<(), FleetError> {
    use fikit_trace::polars::prelude::*;
    let col = |name: &str, s: Series| s.with_name(name.into()).into_column();
    let strs = |f: fn(&SweepRow) -> &str| rows.iter().map(f).collect::<Vec<&str>>();
    let columns = vec![
        col(
            "item",
            Series::new("".into(), rows.iter().map(|r| r.item).collect::<Vec<u64>>()),
        ),
        col("model", Series::new("".into(), strs(|r| &r.model))),
        col("params", Series::new("".into(), strs(|r| &r.params))),
        col("high", Series::new("".into(), strs(|r| &r.row.high))),
        col("low", Series::new("".into(), strs(|r| &r.row.low))),
        col(
            "policy",
            Series::new("".into(), strs(|r| r.row.policy.as_str())),
        ),
        col(
            "high_vs_timeslice",
            Series::new(
                "".into(),
                rows.iter()
                    .map(|r| r.row.high_vs_timeslice)
                    .collect::<Vec<f64>>(),
            ),
        ),
        col(
            "low_vs_timeslice",
            Series::new(
                "".into(),
                rows.iter()
                    .map(|r| r.row.low_vs_timeslice)
                    .collect::<Vec<f64>>(),
            ),
        ),
        col(
            "high_slowdown",
            Series::new(
                "".into(),
                rows.iter()
                    .map(|r| r.row.high_slowdown)
                    .collect::<Vec<f64>>(),
            ),
        ),
        col(
            "low_slowdown",
            Series::new(
                "".into(),
                rows.iter()
                    .map(|r| r.row.low_slowdown)
                    .collect::<Vec<f64>>(),
            ),
        ),
        col(
            "high_p99_ns",
            Series::new(
                "".into(),
                rows.iter().map(|r| r.row.high_p99_ns).collect::<Vec<i64>>(),
            ),
        ),
    ];
    let mut df = DataFrame::new(rows.len(), columns)
        .map_err(|e| FleetError::invalid(path, e.to_string()))?;
    fikit_trace::write_dataframe(path, &mut df, rows_metadata(meta))?;
    Ok(())
}

/// A rows file's key/value metadata.
pub(super) fn rows_metadata(meta: &RowsMeta) -> Vec<(String, String)> {
    vec![
        (format!("{KEY}spec_hash"), meta.spec_hash.clone()),
        (format!("{KEY}items"), meta.items.to_string()),
        (
            format!("{KEY}shard"),
            meta.shard.map_or("merged".to_string(), |s| s.to_string()),
        ),
        (
            format!("{KEY}producer"),
            format!("fikit-sim {}", env!("CARGO_PKG_VERSION")),
        ),
    ]
}

/// Reads a rows file [`write_rows`] wrote, checking its metadata and columns.
pub fn read_rows(path: &Path) -> Result<(Vec<SweepRow>, RowsMeta), FleetError> {
    let (df, kv) = fikit_trace::read_table(path)?;
    let bad = |m: String| FleetError::invalid(path, m);
    let get = |k: &str| {
        kv.iter()
            .find(|(key, _)| key.strip_prefix(KEY) == Some(k))
            .map(|(_, v)| v.clone())
            .ok_or_else(|| {
                bad(format!(
                    "not a fikit sweep rows file: no `{KEY}{k}` metadata"
                ))
            })
    };
    let spec_hash = get("spec_hash")?;
    let items: u64 = get("items")?
        .parse()
        .map_err(|_| bad(format!("`{KEY}items` is not a number")))?;
    let shard = match get("shard")?.as_str() {
        "merged" => None,
        s => Some(Shard::parse(s).map_err(|e| bad(format!("`{KEY}shard`: {e}")))?),
    };
    let column = |name: &str| {
        df.column(name)
            .map_err(|_| bad(format!("column `{name}` is missing")))
    };
    let typed = |name: &str, what: &str| bad(format!("column `{name}` is not {what}"));
    let strs = |name: &str| -> Result<Vec<String>, FleetError> {
        let c = column(name)?.str().map_err(|_| typed(name, "text"))?;
        c.iter()
            .map(|v| {
                v.map(String::from)
                    .ok_or_else(|| bad(format!("column `{name}` has a null")))
            })
            .collect()
    };
    let f64s = |name: &str| -> Result<Vec<f64>, FleetError> {
        let c = column(name)?.f64().map_err(|_| typed(name, "f64"))?;
        c.iter()
            .map(|v| v.ok_or_else(|| bad(format!("column `{name}` has a null"))))
            .collect()
    };
    let item: Vec<u64> = column("item")?
        .u64()
        .map_err(|_| typed("item", "u64"))?
        .iter()
        .map(|v| v.ok_or_else(|| bad("column `item` has a null".into())))
        .collect::<Result<_, _>>()?;
    let p99: Vec<i64> = column("high_p99_ns")?
        .i64()
        .map_err(|_| typed("high_p99_ns", "i64"))?
        .iter()
        .map(|v| v.ok_or_else(|| bad("column `high_p99_ns` has a null".into())))
        .collect::<Result<_, _>>()?;
    let (model, params, high, low, policy) = (
        strs("model")?,
        strs("params")?,
        strs("high")?,
        strs("low")?,
        strs("policy")?,
    );
    let (hv, lv, hs, ls) = (
        f64s("high_vs_timeslice")?,
        f64s("low_vs_timeslice")?,
        f64s("high_slowdown")?,
        f64s("low_slowdown")?,
    );
    let mut rows = Vec::with_capacity(df.height());
    for i in 0..df.height() {
        let policy = PolicyKind::from_name(&policy[i])
            .ok_or_else(|| bad(format!("row {i}: unknown policy {:?}", policy[i])))?;
        if item[i] >= items {
            return Err(bad(format!(
                "row {i}: item {} of a sweep of {items}",
                item[i]
            )));
        }
        rows.push(SweepRow {
            item: item[i],
            model: model[i].clone(),
            params: params[i].clone(),
            row: PairRow {
                high: high[i].clone(),
                low: low[i].clone(),
                policy,
                high_vs_timeslice: hv[i],
                low_vs_timeslice: lv[i],
                high_slowdown: hs[i],
                low_slowdown: ls[i],
                high_p99_ns: p99[i],
                high_slowdown_range: None,
            },
        });
    }
    Ok((
        rows,
        RowsMeta {
            spec_hash,
            items,
            shard,
        },
    ))
}
