use super::dispatch::DISPATCH_BLOCK_NS;
use super::*;

#[test]
fn dispatch_order_from_the_small_kernels_start() {
    use DispatchOrder::*;
    // 3.5 waves: in order, the block goes with the last wave at 3 block times.
    assert_eq!(classify_dispatch(3.5, 3.02), InOrder);
    assert_eq!(classify_dispatch(3.5, 2.6), InOrder);
    // Interleaved: at the first retirement after its launch (0.5 in).
    assert_eq!(classify_dispatch(3.5, 1.01), Interleaved);
    assert_eq!(classify_dispatch(3.5, 0.5), Interleaved);
    // Launch order: behind the queued second kernel too, at 3.5 + 3.
    assert_eq!(classify_dispatch(3.5, 6.4), LaunchOrder);
    assert_eq!(classify_dispatch(3.5, 2.0), Unclear);
    assert_eq!(classify_dispatch(3.5, 4.5), Unclear);
}

#[test]
fn dispatch_across_processes_pairs_the_rounds() {
    // Round 1: the block 3 block times (600 µs) after the wide kernel's
    // first block; round 2 lost on the small side; round 3 at 6.5.
    let wide = [1_000_000, 2_000_000, 3_000_000];
    let small = [1_600_000, u64::MAX, 4_300_000];
    let d = dispatch_across(3.5, &wide, &small);
    assert_eq!(d.starts_in_blocks, vec![3.0, 6.5]);
    // The median of two is the upper one (as calibrate's medians are).
    assert_eq!(d.median_in_blocks, 6.5);
    assert_eq!(d.order, DispatchOrder::LaunchOrder);
    assert_eq!(d.block_ns, DISPATCH_BLOCK_NS);
}

#[test]
fn probe_bytes_by_what_the_kernel_does() {
    // A stream reads and rewrites the whole buffer once a pass, whatever
    // its blocks: 1 GiB, 8 passes, 16 GiB.
    assert_eq!(
        probe_bytes(LoadMode::Stream, 1 << 30, 33, 256, 8),
        Some(16.0 * (1u64 << 30) as f64)
    );
    assert_eq!(
        probe_bytes(LoadMode::Stream, 1 << 30, 1000, 256, 8),
        probe_bytes(LoadMode::Stream, 1 << 30, 33, 256, 8)
    );
    // A chase: 8 bytes a link, 64 links a pass per thread: 2 blocks of 3
    // threads, 2 passes: 6 x 64 x 8 x 2 = 6,144, whatever the buffer.
    assert_eq!(probe_bytes(LoadMode::Chase, 1 << 30, 2, 3, 2), Some(6144.0));
    assert_eq!(probe_bytes(LoadMode::Chase, 4096, 2, 3, 2), Some(6144.0));
    assert_eq!(probe_bytes(LoadMode::Compute, 1 << 30, 2, 3, 2), None);
    assert_eq!(
        probe_bytes(LoadMode::Wide, 1 << 30, 33, 256, 8),
        probe_bytes(LoadMode::Stream, 1 << 30, 33, 256, 8)
    );
}

#[test]
fn chase_links_stay_in_the_buffer_and_form_a_permutation() {
    // 1,000,003 = 5 * 200,000 + 3: every link jumps 3 on, modulo 5.
    assert_eq!(chase_links(5), vec![3, 4, 0, 1, 2]);
    let mut l = chase_links(1 << 12);
    assert!(l.iter().all(|&i| i < 1 << 12));
    l.sort_unstable();
    assert_eq!(l, (0..1 << 12).collect::<Vec<u64>>());
}

#[test]
fn spans_split_by_the_loads_window() {
    // The load ran wholly from 100 to 200.
    let spans = [(90, 120), (100, 150), (150, 200), (180, 260), (200, 210)];
    let (inside, after) = split_spans(spans, 100, 200);
    // (90, 120) began before the load was resident; (200, 210) after it.
    assert_eq!(inside, vec![50, 50]);
    assert_eq!(after, vec![80]);
}

#[test]
fn fit_recovers_a_linear_slowdown() {
    let pts: Vec<(f64, f64)> = [0.0, 0.25, 0.5, 0.75]
        .iter()
        .map(|&d| (d, 1.0 + 1.6 * d))
        .collect();
    assert!((fit_slowdown(&pts) - 1.6).abs() < 1e-12);
    // No slowdown at all, and no points beside a load.
    assert_eq!(fit_slowdown(&[(0.0, 1.0), (0.5, 1.0)]), 0.0);
    assert_eq!(fit_slowdown(&[(0.0, 1.0)]), 0.0);
    // Noise around c = 0.5 gives about 0.5.
    let c = fit_slowdown(&[(0.25, 1.14), (0.5, 1.24), (0.75, 1.37)]);
    assert!((c - 0.5).abs() < 0.02, "{c}");
}

/// Logs of `n` processes taking turns: slices of `q`, switches of `s`.
fn turns(n: usize, q: u64, s: u64, rounds: usize) -> Vec<ProbeLog> {
    (0..n)
        .map(|i| {
            let period = n as u64 * (q + s);
            let first = i as u64 * (q + s);
            let away = (0..rounds as u64)
                .map(|r| {
                    let end = first + r * period + q;
                    (end, end + period - q)
                })
                .collect();
            ProbeLog {
                start: first,
                end: first + rounds as u64 * period,
                away,
            }
        })
        .collect()
}

#[test]
fn recovers_quantum_and_switch_cost() {
    for n in [2, 3] {
        let e = estimate(&turns(n, 2_000_000, 30_000, 50)).unwrap();
        assert_eq!(e.quantum_ns, 2_000_000, "n = {n}");
        assert_eq!(e.switch_ns, 30_000, "n = {n}");
        assert_eq!(e.away_ns, (n as i64 - 1) * 2_000_000 + n as i64 * 30_000);
    }
}

#[test]
fn no_turns_no_estimate() {
    let alone = ProbeLog {
        start: 0,
        end: 100,
        away: vec![],
    };
    assert!(estimate(&[alone]).is_none());
}
