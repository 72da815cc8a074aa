//! The gate's own work per kernel launch, on the CPU: what the collector's
//! callback adds to every launch of a gated program beyond CUPTI's dispatch
//! and the driver calls it makes (the kernel's identity, which is cached per
//! function, and the capture check).
//!
//! - `top_job_alone`: FIKIT, the job alone (the gate's cost measured on a GPU
//!   runs it so): `before_launch` and `after_launch` of a known kernel;
//! - `top_job_beside_a_waiting_filler`: the same with a second job waiting at
//!   the gate with a kernel that fits no gap (the top job reads its slot);
//! - `partner_while_the_server_is_away`: the partner of a server between
//!   requests that sets a hold (its queue summed at each launch; each launch
//!   done at once, as if the GPU ran it);
//! - `open`: the gate open (exclusive rounds: counts and stamps only).
//!
//! `cargo bench -p fikit-gate --bench launch`.

use std::sync::atomic::Ordering::SeqCst;

use divan::Bencher;
use fikit_gate::{Block, Gate, GatePolicy, RealClock, Table, now_ns};

fn main() {
    divan::main();
}

/// A table of 300 kernels (a batch-1 model's distinct launch shapes), each
/// 20 µs followed by a 5 µs gap.
fn table() -> Table {
    Table {
        kernels: (0..300u64).map(|k| (k, (20_000, 5_000))).collect(),
        unknown_ns: 1_000_000,
        away_after_ns: 0,
        hold_ns: 0,
    }
}

/// A control block of `priorities.len()` running jobs under `policy`.
fn block(policy: GatePolicy, priorities: &[u32]) -> (tempfile::TempDir, Block) {
    let dir = tempfile::tempdir().unwrap();
    let b = Block::create(&dir.path().join("c"), priorities.len(), policy).unwrap();
    for (j, &p) in priorities.iter().enumerate() {
        b.slot(j).priority.store(p, SeqCst);
        b.slot(j)
            .state
            .store(fikit_gate::block::state::RUNNING, SeqCst);
    }
    (dir, b)
}

fn launches(bencher: Bencher, policy: GatePolicy, priorities: &[u32], waiting: bool) {
    let (_dir, b) = block(policy, priorities);
    if waiting {
        // The filler has launched and waits with a 1 ms kernel: no gap fits it.
        let f = b.slot(1);
        f.first_launch_ns.store(1, SeqCst);
        f.last_launch_ns.store(now_ns(), SeqCst);
        f.waiting_ns.store(1_000_000, SeqCst);
    }
    gated(bencher, &b, 0, false);
}

/// Launches of job `me`, each a known kernel; with `done`, each launch is
/// seen done at once (as if the GPU ran it).
fn gated(bencher: Bencher, b: &Block, me: usize, done: bool) {
    let gate = Gate::new(b, me, table());
    let mut key = 0u64;
    bencher.bench_local(|| {
        key = (key + 1) % 300;
        let l = gate.before_launch(Some(divan::black_box(key)), &mut RealClock::default());
        gate.after_launch(l.went_ns, now_ns());
        if done {
            b.slot(me).done.store(l.seq, SeqCst);
        }
        l
    });
}

#[divan::bench]
fn top_job_alone(bencher: Bencher) {
    launches(bencher, GatePolicy::Fikit, &[0], false);
}

#[divan::bench]
fn top_job_beside_a_waiting_filler(bencher: Bencher) {
    launches(bencher, GatePolicy::Fikit, &[0, 9], true);
}

#[divan::bench]
fn partner_while_the_server_is_away(bencher: Bencher) {
    let (_dir, b) = block(GatePolicy::Fikit, &[0, 9]);
    let srv = b.slot(0);
    srv.serving.store(1, SeqCst);
    srv.hold_ns.store(100_000, SeqCst);
    srv.first_launch_ns.store(1, SeqCst);
    srv.last_launch_ns.store(2, SeqCst);
    srv.last_sync_ns.store(3, SeqCst);
    gated(bencher, &b, 1, true);
}

#[divan::bench]
fn open(bencher: Bencher) {
    launches(bencher, GatePolicy::Open, &[0, 9], false);
}
