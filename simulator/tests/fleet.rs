//! Fleet sweeps: item numbering, shards, merge and its refusals, grids, and
//! agreement with the classic pair sweep, on small hand-made traces.

use std::path::{Path, PathBuf};

use fikit_sim::policy::PolicyKind;
use fikit_sim::sim::fleet::{self, Combos, Resolved, RowsMeta, Shard, SweepSpec};
use fikit_sim::sim::job::Job;
use fikit_sim::sim::sweep::{self, SweepOptions};
use fikit_trace::{fixture, write_trace};

/// Four jobs: two latency-critical (priority 0), two throughput (9).
fn traces(dir: &Path) -> Vec<PathBuf> {
    let traces = [
        fixture::serving("serve-a", 0, 3),
        fixture::short_iterations("serve-b", 0, 4),
        fixture::training("train-a", 9, 12),
        fixture::back_to_back("train-b", 9, 6, 50_000),
    ];
    traces
        .iter()
        .map(|t| {
            let p = dir.join(format!("{}.parquet", t.meta.job_name));
            write_trace(&p, t).unwrap();
            p
        })
        .collect()
}

fn spec(dir: &Path) -> SweepSpec {
    SweepSpec {
        traces: vec![dir.to_path_buf()],
        group: 2,
        combos: Combos::Ordered,
        policies: vec![PolicyKind::Timeslice, PolicyKind::Mps, PolicyKind::Fikit],
        models: vec![],
        grid: Default::default(),
        as_profiled: false,
    }
}

fn resolve(s: SweepSpec, dir: &Path) -> Resolved {
    Resolved::new(s, dir, &dir.join("spec.json")).unwrap()
}

#[test]
fn a_spec_runs_each_job_as_characterized_unless_as_profiled() {
    // serve-a's trace with a characterization: its untraced runs (the
    // fixture's 9,000 and 8,000 ns regions) set its host's speed.
    let plain = tempfile::tempdir().unwrap();
    traces(plain.path());
    let charted = tempfile::tempdir().unwrap();
    traces(charted.path());
    let p = charted.path().join("serve-a.parquet");
    let mut t = fikit_trace::read_trace(&p).unwrap();
    t.meta.characterization = Some(fixture::characterization(&t.meta.device.name));
    write_trace(&p, &t).unwrap();
    let rows = |dir: &Path, as_profiled: bool| {
        let r = resolve(
            SweepSpec {
                as_profiled,
                ..spec(dir)
            },
            dir,
        );
        fleet::run_shard(&r, Shard::ALL, &|| {}).unwrap()
    };
    let plain_rows = rows(plain.path(), false);
    let charted_rows = rows(charted.path(), false);
    assert_ne!(
        charted_rows, plain_rows,
        "the characterized host changes serve-a's rows"
    );
    assert_eq!(
        rows(charted.path(), true),
        plain_rows,
        "as_profiled: the traces as traced"
    );
    // The option is part of the spec, so of its hash (shards of the two
    // cannot be merged), and a spec without it keeps its hash.
    let (a, b) = (
        resolve(spec(charted.path()), charted.path()).hash,
        resolve(
            SweepSpec {
                as_profiled: true,
                ..spec(charted.path())
            },
            charted.path(),
        )
        .hash,
    );
    assert_ne!(a, b);
}

#[test]
fn shards_parse_and_split_items_into_contiguous_ranges() {
    assert_eq!(Shard::parse("3/16").unwrap(), Shard { k: 3, n: 16 });
    for bad in ["0/4", "5/4", "1/0", "x/4", "3", "1/-2"] {
        assert!(Shard::parse(bad).is_err(), "{bad}");
    }
    let s = Shard::parse("2/3").unwrap();
    assert_eq!(s.range(10), 3..6);
    // The ranges of 1/N..N/N tile 0..items exactly, for awkward sizes too.
    for (items, n) in [(10, 3), (7, 7), (3, 5), (1 << 40, 977), (0, 2)] {
        let mut next = 0;
        for k in 1..=n {
            let r = Shard { k, n }.range(items);
            assert_eq!(r.start, next, "{items} {n} {k}");
            next = r.end;
            for i in [r.start, r.end.saturating_sub(1)] {
                if r.contains(&i) {
                    assert_eq!(Shard::of(i, items, n), k);
                }
            }
        }
        assert_eq!(next, items);
    }
}

#[test]
fn items_are_every_ordered_pair_once_or_each_high_beside_each_low() {
    let d = tempfile::tempdir().unwrap();
    traces(d.path());
    let r = resolve(spec(d.path()), d.path());
    assert_eq!(r.items(), 12);
    let mut pairs: Vec<Vec<usize>> = (0..12).map(|i| r.item(i).1).collect();
    let want: Vec<Vec<usize>> = (0..4)
        .flat_map(|h| (0..4).filter(move |&l| l != h).map(move |l| vec![h, l]))
        .collect();
    assert_eq!(pairs, want, "item order is the classic sweep's pair order");
    pairs.sort();
    pairs.dedup();
    assert_eq!(pairs.len(), 12);
    // High-low: the files sort as serve-a, serve-b, train-a, train-b.
    let r = resolve(
        SweepSpec {
            combos: Combos::HighLow,
            ..spec(d.path())
        },
        d.path(),
    );
    let got: Vec<Vec<usize>> = (0..r.items()).map(|i| r.item(i).1).collect();
    assert_eq!(got, [vec![0, 2], vec![0, 3], vec![1, 2], vec![1, 3]]);
    // Three jobs per GPU: each job as the high one beside each pair of the
    // other three: 4 x C(3, 2) = 12.
    let r = resolve(
        SweepSpec {
            group: 3,
            ..spec(d.path())
        },
        d.path(),
    );
    assert_eq!(r.items(), 12);
    assert_eq!(r.item(0).1, [0, 1, 2]);
    assert_eq!(r.item(11).1, [3, 1, 2]);
}

#[test]
fn a_grid_multiplies_the_items_and_names_its_point() {
    let d = tempfile::tempdir().unwrap();
    traces(d.path());
    let mut s = spec(d.path());
    s.grid.insert(
        "timeslice_quantum_ns".into(),
        vec![1_000_000.into(), 4_000_000.into()],
    );
    let r = resolve(s.clone(), d.path());
    assert_eq!(r.variants.len(), 2);
    assert_eq!(r.items(), 24);
    assert_eq!(r.item(12), (1, vec![0, 1]));
    assert_eq!(r.variants[1].params, r#"{"timeslice_quantum_ns":4000000}"#);
    assert_eq!(r.variants[1].gpu.timeslice_quantum_ns, 4_000_000);
    // Not a model field, or an invalid value: bad input naming the spec.
    s.grid.insert("quantum".into(), vec![1.into()]);
    let e = Resolved::new(s.clone(), d.path(), Path::new("spec.json")).unwrap_err();
    assert!(
        e.to_string().contains("spec.json") && e.to_string().contains("quantum"),
        "{e}"
    );
    s.grid.remove("quantum");
    s.grid
        .insert("timeslice_quantum_ns".into(), vec![(-5).into()]);
    assert!(Resolved::new(s.clone(), d.path(), Path::new("spec.json")).is_err());
    // Rows that would repeat: a value listed twice, a model named twice, a
    // parameter the grid may not vary (its message lists those it may).
    let err = |s: &SweepSpec| {
        Resolved::new(s.clone(), d.path(), Path::new("spec.json"))
            .unwrap_err()
            .to_string()
    };
    s.grid.insert(
        "timeslice_quantum_ns".into(),
        vec![1_000_000.into(), 1_000_000.into()],
    );
    assert!(
        err(&s).contains("grid: \"timeslice_quantum_ns\" lists 1000000 twice"),
        "{}",
        err(&s)
    );
    s.grid.clear();
    s.grid.insert("name".into(), vec!["x".into()]);
    let e = err(&s);
    assert!(
        e.contains("grid: \"name\" is not a model parameter (parameters: "),
        "{e}"
    );
    assert!(
        e.contains("timeslice_quantum_ns") && !e.contains(" source"),
        "{e}"
    );
    s.grid.clear();
    let m = d.path().join("m.json");
    std::fs::write(
        &m,
        serde_json::to_string(&fikit_sim::sim::gpu::GpuModel::default()).unwrap(),
    )
    .unwrap();
    s.models = vec![m.clone(), m];
    assert!(
        err(&s).contains("models: model 1 is the same as an earlier one"),
        "{}",
        err(&s)
    );
}

#[test]
fn one_folder_named_twice_is_one_set_of_jobs() {
    let d = tempfile::tempdir().unwrap();
    traces(d.path());
    let mut s = spec(d.path());
    let once = resolve(s.clone(), d.path());
    // The same folder by another path: its jobs once, not each beside itself.
    s.traces
        .push(d.path().join("..").join(d.path().file_name().unwrap()));
    let twice = resolve(s, d.path());
    assert_eq!(twice.names, once.names);
    assert_eq!(twice.items(), once.items());
}

#[test]
fn shards_merge_into_the_whole_sweep_and_match_the_classic_pair_sweep() {
    let d = tempfile::tempdir().unwrap();
    let files = traces(d.path());
    let r = resolve(spec(d.path()), d.path());
    let whole = fleet::run_shard(&r, Shard::ALL, &|| {}).unwrap();
    assert_eq!(whole.len(), 12 * 3);
    let out = tempfile::tempdir().unwrap();
    let mut shard_files = Vec::new();
    for k in [3, 1, 2] {
        let s = Shard { k, n: 3 };
        let rows = fleet::run_shard(&r, s, &|| {}).unwrap();
        assert!(
            rows.iter()
                .all(|row| s.range(r.items()).contains(&row.item))
        );
        let p = out.path().join(format!("s{k}.parquet"));
        let meta = RowsMeta {
            spec_hash: r.hash.clone(),
            items: r.items(),
            shard: Some(s),
        };
        fleet::write_rows(&p, &rows, &meta).unwrap();
        let (back, m) = fleet::read_rows(&p).unwrap();
        assert_eq!((back, m), (rows, meta));
        shard_files.push(p);
    }
    let (merged, meta) = fleet::merge(&shard_files).unwrap();
    assert_eq!(merged, whole);
    assert_eq!(meta.shard, None);
    // Streamed into a file, one shard at a time: the same rows.
    let all = out.path().join("all.parquet");
    let (n, m) = fleet::merge_into(&shard_files, &all).unwrap();
    assert_eq!((n, &m), (whole.len() as u64, &meta));
    assert_eq!(fleet::read_rows(&all).unwrap(), (whole.clone(), meta));
    // The classic sweep of the same jobs gives the same numbers, pair by pair.
    let jobs: Vec<Job> = files
        .iter()
        .map(|f| Job::from_trace(&fikit_trace::read_trace(f).unwrap()))
        .collect();
    let classic = sweep::pairs(
        &jobs,
        &SweepOptions {
            policies: r.spec.policies.clone(),
            model: r.variants[0].gpu.clone(),
            progress: false,
        },
    )
    .unwrap();
    assert_eq!(classic.len(), whole.len());
    for (c, f) in classic.iter().zip(&whole) {
        assert_eq!(c, &f.row);
    }
    // Refusals: a missing shard, a shard twice, a shard of another spec.
    let e = fleet::merge(&shard_files[..2]).unwrap_err().to_string();
    assert!(e.contains("shards missing: 2/3"), "{e}");
    // Shard 3 alone: the others as one range.
    let e = fleet::merge(&shard_files[..1]).unwrap_err().to_string();
    assert!(e.contains("shards missing: 1-2/3 (of 3; given 1)"), "{e}");
    let twice = vec![
        shard_files[0].clone(),
        shard_files[0].clone(),
        shard_files[1].clone(),
    ];
    let e = fleet::merge(&twice).unwrap_err().to_string();
    assert!(e.contains("shard 3/3 is there twice"), "{e}");
    let other = out.path().join("other.parquet");
    let (rows, mut m) = fleet::read_rows(&shard_files[2]).unwrap();
    m.spec_hash = "0000000000000000".into();
    fleet::write_rows(&other, &rows, &m).unwrap();
    let mixed = vec![shard_files[0].clone(), shard_files[1].clone(), other];
    let e = fleet::merge(&mixed).unwrap_err().to_string();
    assert!(e.contains("is of another sweep"), "{e}");
    // A shard holding an item of another shard.
    let (mut rows, m) = fleet::read_rows(&shard_files[1]).unwrap();
    rows.last_mut().unwrap().item += 1;
    let wrong = out.path().join("wrong.parquet");
    fleet::write_rows(&wrong, &rows, &m).unwrap();
    let e = fleet::merge(&[shard_files[0].clone(), wrong, shard_files[2].clone()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("which belongs to shard"), "{e}");
}

#[test]
fn the_spec_hash_follows_the_spec_and_the_traces() {
    let d = tempfile::tempdir().unwrap();
    traces(d.path());
    let a = resolve(spec(d.path()), d.path()).hash;
    assert_eq!(a, resolve(spec(d.path()), d.path()).hash);
    let b = resolve(
        SweepSpec {
            policies: vec![PolicyKind::Mps],
            ..spec(d.path())
        },
        d.path(),
    )
    .hash;
    assert_ne!(a, b);
    // A trace that changes size changes the hash.
    write_trace(
        &d.path().join("train-a.parquet"),
        &fixture::training("train-a", 9, 13),
    )
    .unwrap();
    assert_ne!(a, resolve(spec(d.path()), d.path()).hash);
}

#[test]
fn a_file_that_is_not_a_rows_file_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let files = traces(d.path());
    let e = fleet::read_rows(&files[0]).unwrap_err().to_string();
    assert!(e.contains("not a fikit sweep rows file"), "{e}");
    let junk = d.path().join("junk.parquet");
    std::fs::write(&junk, b"PAR1 not really").unwrap();
    assert!(fleet::read_rows(&junk).is_err());
}

#[test]
fn tiled_pair_numbering_lists_every_pair_once() {
    use fikit_sim::sim::fleet::{TILE, cross_pair, ordered_pair};
    // Sizes around the tile's edges: one tile, a tile and one job, several.
    for n in [2, 3, TILE - 1, TILE, TILE + 1, 2 * TILE + 5] {
        let mut seen = std::collections::HashSet::new();
        for g in 0..n * (n - 1) {
            let (h, l) = ordered_pair(g, n);
            assert!(h < n && l < n && h != l, "n {n} g {g}: ({h}, {l})");
            assert!(seen.insert((h, l)), "n {n}: ({h}, {l}) twice");
        }
        assert_eq!(seen.len() as u64, n * (n - 1));
    }
    // With one tile the order is the classic sweep's.
    let classic: Vec<(u64, u64)> = (0..5)
        .flat_map(|h| (0..5).filter(move |&l| l != h).map(move |l| (h, l)))
        .collect();
    let tiled: Vec<(u64, u64)> = (0..20).map(|g| ordered_pair(g, 5)).collect();
    assert_eq!(tiled, classic);
    // A contiguous run of one tile's worth of items touches few jobs.
    let n = 10 * TILE;
    let mut jobs = std::collections::HashSet::new();
    for g in 0..TILE * TILE {
        let (h, l) = ordered_pair(3 * TILE * TILE + g, n);
        jobs.insert(h);
        jobs.insert(l);
    }
    assert!(jobs.len() as u64 <= 3 * TILE, "{}", jobs.len());
    for (hi, lo) in [(1, 1), (3, 70), (TILE + 3, TILE - 1), (130, 200)] {
        let mut seen = std::collections::HashSet::new();
        for g in 0..hi * lo {
            let (h, l) = cross_pair(g, hi, lo);
            assert!(h < hi && l < lo);
            assert!(seen.insert((h, l)));
        }
    }
}

#[test]
fn a_spec_with_nothing_to_simulate_or_too_much_to_list_is_refused() {
    let d = tempfile::tempdir().unwrap();
    traces(d.path());
    let origin = Path::new("spec.json");
    let mut s = spec(d.path());
    s.grid.insert("timeslice_quantum_ns".into(), vec![]);
    let e = Resolved::new(s, d.path(), origin).unwrap_err().to_string();
    assert!(e.contains("has no values"), "{e}");
    // High-low needs throughput jobs: here the two priority-9 jobs, so a
    // group of four (three partners) cannot be formed.
    let s = SweepSpec {
        combos: Combos::HighLow,
        group: 4,
        ..spec(d.path())
    };
    let e = Resolved::new(s, d.path(), origin).unwrap_err().to_string();
    assert!(
        e.contains("combos high-low") && e.contains("needs 3"),
        "{e}"
    );
    // Duplicate job names become name#2, as in `fikit-sim sweep TRACES`.
    let sub = d.path().join("again");
    std::fs::create_dir(&sub).unwrap();
    write_trace(&sub.join("x.parquet"), &fixture::training("train-a", 9, 12)).unwrap();
    let r = resolve(spec(d.path()), d.path());
    assert_eq!(
        r.names.iter().filter(|n| n.starts_with("train-a")).count(),
        2
    );
    assert!(r.names.contains(&"train-a#2".to_string()), "{:?}", r.names);
}
