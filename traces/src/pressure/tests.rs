use super::*;
use crate::fixture;

/// A trace of kernels `(start, end)` on a device of 10 SMs, each kernel
/// `grid` blocks of 1,024 threads.
fn trace(spans: &[(i64, i64)], grid: u32) -> Trace {
    fixture::kernel_spans("job", 10, spans, grid)
}

#[test]
fn union_counts_overlapping_spans_once() {
    let u = Union::new(&[(0, 10), (5, 20), (30, 40)]);
    assert_eq!(u.covered(0, 40), 30);
    assert_eq!(u.covered(15, 35), 10);
    assert_eq!(u.covered(20, 30), 0);
    assert_eq!(u.covered(-5, 2), 2);
}

/// The victim runs 100 ns alone, ten times before the job; then the job
/// keeps one kernel running from 2,000 to 10,000 ns, and the victim's 20
/// runs beside it take `beside` ns.
fn pass(beside: i64) -> (Trace, Trace) {
    let job: Vec<(i64, i64)> = (0..80)
        .map(|i| (2_000 + i * 100, 2_100 + i * 100))
        .collect();
    let mut victim: Vec<(i64, i64)> = (0..10).map(|i| (i * 150, i * 150 + 100)).collect();
    victim.extend((0..20).map(|i| (4_000 + i * 200, 4_000 + i * 200 + beside)));
    (trace(&job, 4), trace(&victim, 1))
}

#[test]
fn a_wholly_overlapped_victim_gives_its_stretch() {
    let (job, victim) = pass(150);
    let f = measure(&job, &victim).unwrap();
    assert_eq!(f.victim_alone_ns, 100.0);
    assert_eq!((f.runs_alone, f.runs_steady, f.runs_whole), (10, 20, 20));
    assert!((f.slowdown.unwrap() - 1.5).abs() < 1e-9, "{f:?}");
    assert_eq!(f.whole_median, Some(1.5));
    assert!((f.overlapped - 1.0).abs() < 1e-12);
    assert_eq!(f.check(), Ok(()));
}

#[test]
fn a_victim_that_never_slows_gives_slowdown_one() {
    let (job, victim) = pass(100);
    assert_eq!(measure(&job, &victim).unwrap().slowdown, Some(1.0));
    // Faster beside the job than alone (noise) is no slowdown either.
    let (job, victim) = pass(90);
    let f = measure(&job, &victim).unwrap();
    assert_eq!((f.slowdown, f.whole_median), (Some(1.0), Some(1.0)));
}

#[test]
fn a_victim_waiting_for_room_is_past_any_slowdown() {
    // Wholly overlapped runs of 300 ns: d - alone = 200 = t (1 - 1/s)
    // with t = 300, so 1 - 1/s = 2/3 and s = 3.
    let (job, victim) = pass(300);
    assert!((measure(&job, &victim).unwrap().slowdown.unwrap() - 3.0).abs() < 1e-9);
    // The job's kernels cover half of the time (100 ns of every 200)
    // and the victim's runs take 400 ns: t = 200 and d - alone = 300,
    // more than t, past any slowdown (it waited for room).
    let half: Vec<(i64, i64)> = (0..40)
        .map(|i| (2_000 + i * 200, 2_100 + i * 200))
        .collect();
    let mut runs: Vec<(i64, i64)> = (0..10).map(|i| (i * 150, i * 150 + 100)).collect();
    runs.extend((0..12).map(|i| (4_000 + i * 400, 4_400 + i * 400)));
    let f = measure(&trace(&half, 4), &trace(&runs, 1)).unwrap();
    assert_eq!(f.slowdown, None, "{f:?}");
    assert!((f.overlapped - 0.5).abs() < 1e-12);
}

#[test]
fn a_victim_of_two_shapes_sets_each_against_its_own_runs_alone() {
    // Every second victim kernel of another shape (grid 2): alone 300 ns,
    // wholly overlapped 450 ns (also 1.5x). Set against one median alone
    // for both, the stretch would not come out.
    let job: Vec<(i64, i64)> = (0..80)
        .map(|i| (2_000 + i * 100, 2_100 + i * 100))
        .collect();
    let spans = |f: &dyn Fn(i64) -> (i64, i64)| (0..10).map(f).collect::<Vec<_>>();
    let mut a = trace(&spans(&|i| (i * 150, i * 150 + 100)), 1);
    let b = trace(&spans(&|i| (i * 150 + 100, i * 150 + 400)), 2);
    let beside_a = trace(&spans(&|i| (3_700 + i * 620, 3_850 + i * 620)), 1);
    let beside_b = trace(&spans(&|i| (3_860 + i * 620, 4_310 + i * 620)), 2);
    a.kernels.extend(b.kernels);
    a.kernels.extend(beside_a.kernels);
    a.kernels.extend(beside_b.kernels);
    let f = measure(&trace(&job, 4), &a).unwrap();
    assert_eq!((f.victim_shapes, f.runs_alone, f.runs_steady), (2, 20, 20));
    assert!((f.slowdown.unwrap() - 1.5).abs() < 1e-9, "{f:?}");
    assert_eq!(f.whole_median, Some(1.5));
    // The median over both shapes' 20 runs alone: (100 + 300) / 2.
    assert_eq!(f.victim_alone_ns, 200.0);
    // A shape with fewer than 10 runs alone is left out, its runs beside
    // the job with it: 3 runs alone of grid 2 only, 10 of grid 1.
    a.kernels
        .retain(|k| k.grid[0] == 1 || k.start_ns >= 3_700 || k.start_ns < 450);
    let f = measure(&trace(&job, 4), &a).unwrap();
    assert_eq!((f.victim_shapes, f.runs_alone, f.runs_steady), (1, 10, 10));
    assert!((f.slowdown.unwrap() - 1.5).abs() < 1e-9, "{f:?}");
}

#[test]
fn too_few_runs_alone_or_beside_are_errors() {
    let (job, victim) = pass(150);
    let mut few = victim.clone();
    few.kernels.drain(0..2);
    assert_eq!(measure(&job, &few), Err(PressureError::FewAlone(8)));
    let mut none = victim.clone();
    none.kernels.truncate(15);
    assert_eq!(measure(&job, &none), Err(PressureError::FewSteady(5)));
    assert_eq!(
        measure(&trace(&[], 1), &victim),
        Err(PressureError::NoKernels("the job trace"))
    );
}

#[test]
fn a_record_out_of_range_names_its_field() {
    let (job, victim) = pass(150);
    let good = measure(&job, &victim).unwrap();
    let bad = |f: &dyn Fn(&mut PressurePass)| {
        let mut p = good.clone();
        f(&mut p);
        p.check().unwrap_err()
    };
    assert!(bad(&|p| p.victim_alone_ns = 0.0).starts_with("victim_alone_ns:"));
    assert!(bad(&|p| p.runs_steady = 3).starts_with("runs_alone, runs_steady:"));
    assert!(bad(&|p| p.overlapped = 1.5).starts_with("overlapped:"));
    assert!(bad(&|p| p.slowdown = Some(0.5)).starts_with("slowdown:"));
    assert!(bad(&|p| p.whole_median = Some(f64::NAN)).starts_with("whole_median:"));
}
