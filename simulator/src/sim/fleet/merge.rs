//! The merge: every shard of one spec there exactly once, joined in item
//! order.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::policy::PolicyKind;

use super::rows::rows_metadata;
use super::{FleetError, RowsMeta, Shard, SweepRow, read_rows};

/// Checks that `files` are the shards of one sweep: one spec hash and shard
/// count, each shard exactly once, each holding exactly its items, every
/// item with the same policies' rows. Reads one shard at a time. Returns the
/// merged table's metadata and the files in shard order (which is item
/// order: shards are contiguous item ranges).
pub fn check_shards(files: &[PathBuf]) -> Result<(RowsMeta, Vec<PathBuf>), FleetError> {
    let first = files
        .first()
        .ok_or_else(|| FleetError::Merge("no shard files given".into()))?;
    let mut m0: Option<RowsMeta> = None;
    let mut want: Option<Vec<PolicyKind>> = None;
    let mut seen: BTreeMap<u64, PathBuf> = BTreeMap::new();
    for path in files {
        let (rows, m) = read_rows(path)?;
        let s = m.shard.ok_or_else(|| {
            FleetError::Merge(format!("{}: a merged table, not a shard", path.display()))
        })?;
        let m0 = m0.get_or_insert_with(|| m.clone());
        let n = m0.shard.map_or(s.n, |s0| s0.n);
        if m.spec_hash != m0.spec_hash || m.items != m0.items {
            return Err(FleetError::Merge(format!(
                "{} is of another sweep (spec hash {}, {} items) than {} (spec hash {}, {} items)",
                path.display(),
                m.spec_hash,
                m.items,
                first.display(),
                m0.spec_hash,
                m0.items
            )));
        }
        if s.n != n {
            return Err(FleetError::Merge(format!(
                "{} is shard {s} but {} is of {n} shards",
                path.display(),
                first.display()
            )));
        }
        if let Some(other) = seen.insert(s.k, path.clone()) {
            return Err(FleetError::Merge(format!(
                "shard {s} is there twice: {} and {}",
                other.display(),
                path.display()
            )));
        }
        let range = s.range(m.items);
        if let Some(r) = rows.iter().find(|r| !range.contains(&r.item)) {
            return Err(FleetError::Merge(format!(
                "{}: shard {s} holds item {}, which belongs to shard {}/{n}",
                path.display(),
                r.item,
                Shard::of(r.item, m.items, n)
            )));
        }
        let mut per_item: BTreeMap<u64, Vec<PolicyKind>> = BTreeMap::new();
        for r in &rows {
            per_item.entry(r.item).or_default().push(r.row.policy);
        }
        if want.is_none() {
            want = per_item.values().next().cloned();
        }
        if let Some(want) = &want
            && let Some((item, got)) = per_item.iter().find(|(_, got)| *got != want)
        {
            return Err(FleetError::Merge(format!(
                "{}: item {item} has rows for {:?}, the sweep's items for {:?}",
                path.display(),
                got.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
                want.iter().map(|p| p.as_str()).collect::<Vec<_>>()
            )));
        }
        let expected = range.end - range.start;
        if per_item.len() as u64 != expected {
            return Err(FleetError::Merge(format!(
                "{}: shard {s} holds {} of its {expected} items",
                path.display(),
                per_item.len()
            )));
        }
    }
    let m0 = m0.expect("at least one file was read");
    let n = m0.shard.map_or(1, |s| s.n);
    // Runs of missing shards as ranges (`2-999/1000`), so that one shard
    // of a thousand given is one line, not 999 numbers.
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for k in (1..=n).filter(|k| !seen.contains_key(k)) {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == k => *end = k,
            _ => runs.push((k, k)),
        }
    }
    let missing: Vec<String> = runs
        .iter()
        .map(|&(a, b)| {
            if a == b {
                format!("{a}/{n}")
            } else {
                format!("{a}-{b}/{n}")
            }
        })
        .collect();
    if !missing.is_empty() {
        return Err(FleetError::Merge(format!(
            "shards missing: {} (of {n}; given {})",
            missing.join(", "),
            files.len()
        )));
    }
    let meta = RowsMeta {
        spec_hash: m0.spec_hash,
        items: m0.items,
        shard: None,
    };
    Ok((meta, seen.into_values().collect()))
}

/// Joins the shards of one sweep ([`check_shards`]) in memory: the rows in
/// item order, as the whole sweep run on one machine gives them.
pub fn merge(files: &[PathBuf]) -> Result<(Vec<SweepRow>, RowsMeta), FleetError> {
    let (meta, ordered) = check_shards(files)?;
    let mut rows = Vec::new();
    for f in &ordered {
        rows.extend(read_rows(f)?.0);
    }
    Ok((rows, meta))
}

/// Joins the shards of one sweep ([`check_shards`]) into the rows file
/// `output`, one shard in memory at a time; returns the rows written.
pub fn merge_into(files: &[PathBuf], output: &Path) -> Result<(u64, RowsMeta), FleetError> {
    // Written over, a shard would be lost: refused before anything is read.
    if let Ok(out) = std::fs::canonicalize(output)
        && let Some(f) = files
            .iter()
            .find(|f| std::fs::canonicalize(f).is_ok_and(|c| c == out))
    {
        return Err(FleetError::Merge(format!(
            "{}: the output is one of the shards to merge ({}); write the merged rows elsewhere",
            output.display(),
            f.display()
        )));
    }
    let (meta, ordered) = check_shards(files)?;
    let (first, _) = fikit_trace::read_table(&ordered[0])?;
    let schema = first.schema().as_ref().clone();
    drop(first);
    let frames = ordered
        .iter()
        .map(|f| fikit_trace::read_table(f).map(|(df, _)| df));
    let rows = fikit_trace::write_dataframes(output, &schema, frames, rows_metadata(&meta))?;
    Ok((rows, meta))
}
