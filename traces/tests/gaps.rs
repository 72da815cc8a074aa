//! Busy intervals, idle gaps, their causes and the summary statistics, against values worked out by hand.

use fikit_trace::gaps::{GapCause, busy_intervals, busy_ns, idle_gaps, nearest_rank};
use fikit_trace::summary::summarize;
use fikit_trace::{ApiCall, ApiDomain, fixture};

/// Stream 7 and 8 kernels (times in ns):
///
/// ```text
/// k0 s7 [1000, 2000)  launched at 500
/// k1 s8 [1500, 2500)  launched at 600          -> busy [1000, 2500)
/// k2 s7 [3000, 3400)  launched at 2700 (host late: 2700 >= 2500)  gap 500 host
/// k3 s7 [3400, 3600)  launched at 2800                            (touches: no gap)
/// sync  [2900, 3650) on s7, launch of k4 at 3700 (after sync)     gap 3600..4000 = 400 sync
/// k4 s7 [4000, 4100)
/// k5 s7 [4200, 4300)  launched at 3800 < 4100 (already issued)    gap 100 other
/// k6 s7 [5300, 5400)  no launch recorded                          gap 1000 other
/// k7 s7 [6400, 6500)  launched 6000, a cudaMemcpy [4000, 6100)    gap 1000: waited in a blocking call
///                     was under way at 5400 and returned at 6100 <= 6000? no: 6100 > 6000, so host
/// ```
fn sample() -> fikit_trace::Trace {
    let mut t = fixture::empty("gaps", 0);
    t.kernels = vec![
        fixture::kernel("k0", 7, 1, Some(500), 1000, 2000),
        fixture::kernel("k1", 8, 2, Some(600), 1500, 2500),
        fixture::kernel("k2", 7, 3, Some(2700), 3000, 3400),
        fixture::kernel("k3", 7, 4, Some(2800), 3400, 3600),
        fixture::kernel("k4", 7, 6, Some(3700), 4000, 4100),
        fixture::kernel("k5", 7, 7, Some(3800), 4200, 4300),
        fixture::kernel("k6", 7, 8, None, 5300, 5400),
        fixture::kernel("k7", 7, 9, Some(6000), 6400, 6500),
    ];
    t.syncs = vec![fixture::stream_sync(7, 5, 2900, 3650)];
    t.api_calls = vec![ApiCall {
        domain: ApiDomain::Runtime,
        name: "cudaMemcpy".into(),
        start_ns: 4000,
        end_ns: 6100,
        thread_id: 7,
        correlation_id: 10,
    }];
    t
}

#[test]
fn busy_intervals_are_the_union_of_kernels() {
    let t = sample();
    let busy = busy_intervals(&t);
    let spans: Vec<(i64, i64)> = busy.iter().map(|b| (b.start_ns, b.end_ns)).collect();
    assert_eq!(
        spans,
        [
            (1000, 2500),
            (3000, 3600),
            (4000, 4100),
            (4200, 4300),
            (5300, 5400),
            (6400, 6500)
        ]
    );
    // 1500 + 600 + 100 + 100 + 100 + 100
    assert_eq!(busy_ns(&busy), 2500);
}

#[test]
fn gaps_and_their_causes() {
    let t = sample();
    let gaps = idle_gaps(&t, &busy_intervals(&t));
    let got: Vec<(i64, i64, GapCause)> = gaps
        .iter()
        .map(|g| (g.start_ns, g.end_ns, g.cause))
        .collect();
    assert_eq!(
        got,
        [
            (2500, 3000, GapCause::Host),
            (3600, 4000, GapCause::Sync),
            (4100, 4200, GapCause::Other),
            (4300, 5300, GapCause::Other),
            (5400, 6400, GapCause::Host),
        ]
    );
}

#[test]
fn a_blocking_call_that_returns_before_the_launch_makes_a_sync_gap() {
    let mut t = sample();
    t.api_calls[0].end_ns = 5900; // returns before the launch at 6000
    let gaps = idle_gaps(&t, &busy_intervals(&t));
    assert_eq!(gaps[4].cause, GapCause::Sync);
}

#[test]
fn nearest_rank_percentiles() {
    let v = [100, 400, 500, 1000, 1000];
    assert_eq!(nearest_rank(&v, 0.5), Some(500)); // rank ceil(2.5) = 3
    assert_eq!(nearest_rank(&v, 0.99), Some(1000)); // rank ceil(4.95) = 5
    assert_eq!(nearest_rank(&v, 0.2), Some(100)); // rank 1
    assert_eq!(nearest_rank(&v, 0.21), Some(400)); // rank ceil(1.05) = 2
    assert_eq!(nearest_rank(&[], 0.5), None);
}

#[test]
fn summary_statistics() {
    let s = summarize(&sample(), "gaps.parquet", 3);
    assert_eq!(s.kernels, 8);
    assert_eq!(s.span_ns, 5500);
    assert_eq!(s.gpu_busy_ns, 2500);
    assert_eq!(s.idle.count, 5);
    // sorted gaps: 100, 400, 500, 1000, 1000
    assert_eq!(s.idle.p50_ns, 500);
    assert_eq!(s.idle.p99_ns, 1000);
    assert_eq!(s.idle.total_ns, 3000);
    assert_eq!(s.idle.host_ns, 1500);
    assert_eq!(s.idle.sync_ns, 400);
    assert_eq!(s.idle.other_ns, 1100);
    // Each kernel has its own name here; k0 and k1 are the longest (1000 each), then k2 (400).
    let top: Vec<(&str, i64)> = s
        .top_kernels
        .iter()
        .map(|k| (k.name.as_str(), k.total_ns))
        .collect();
    assert_eq!(top, [("k0()", 1000), ("k1()", 1000), ("k2()", 400)]);
    assert!((s.top_kernels[0].share - 1000.0 / 3000.0).abs() < 1e-12);
}

#[test]
fn a_trace_without_kernels_has_no_gaps() {
    let s = summarize(&fixture::empty("none", 0), "none.parquet", 10);
    assert_eq!(
        (s.kernels, s.idle.count, s.idle.p50_ns, s.span_ns),
        (0, 0, 0, 0)
    );
}
