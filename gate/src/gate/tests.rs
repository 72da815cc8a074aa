//! The gate's rules, hand-driven: scripted clocks and blocks.

use super::*;
use crate::table::ProfiledOp;

/// What the test does at each pause: the other jobs, the GPU.
type Act<'b> = Box<dyn FnMut(i64, &Block) + 'b>;

/// A clock that advances 1 µs per pause and lets the test act on the
/// block at chosen times (the other job, the GPU).
struct Script<'b> {
    t: i64,
    block: &'b Block,
    act: Act<'b>,
}

impl Clock for Script<'_> {
    fn now(&mut self) -> i64 {
        self.t
    }
    fn pause(&mut self, _: i64) {
        self.t += 1_000;
        (self.act)(self.t, self.block);
    }
}

fn block(policy: GatePolicy, priorities: &[u32]) -> (tempfile::TempDir, Block) {
    let dir = tempfile::tempdir().unwrap();
    let b = Block::create(&dir.path().join("c"), priorities.len(), policy).unwrap();
    for (j, &p) in priorities.iter().enumerate() {
        b.slot(j).priority.store(p, SeqCst);
        b.slot(j).state.store(state::RUNNING, SeqCst);
    }
    (dir, b)
}

fn table(kernels: &[(u64, i64, i64)]) -> Table {
    Table {
        kernels: kernels.iter().map(|&(k, d, g)| (k, (d, g))).collect(),
        unknown_ns: 1_000_000,
        away_after_ns: 0,
        hold_ns: 0,
    }
}

fn script<'b>(b: &'b Block, t: i64, act: impl FnMut(i64, &Block) + 'b) -> Script<'b> {
    Script {
        t,
        block: b,
        act: Box::new(act),
    }
}

#[test]
fn a_real_clock_with_a_nap_sleeps_between_looks_once_a_wait_is_old() {
    // Sleeping is at least as long as asked.
    let mut napping = RealClock { nap_ns: 5_000_000 };
    let t = std::time::Instant::now();
    napping.pause(YOUNG_WAIT_NS);
    assert!(t.elapsed() >= std::time::Duration::from_millis(5));
    // A young wait never sleeps: a 10 s nap would show.
    let mut long = RealClock {
        nap_ns: 10_000_000_000,
    };
    let t = std::time::Instant::now();
    long.pause(YOUNG_WAIT_NS - 1);
    assert!(t.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn the_top_job_never_waits_and_marks_only_before_fillable_gaps() {
    let (_d, b) = block(GatePolicy::Fikit, &[0, 9, 9]);
    b.header().min_fill_ns.store(50_000, SeqCst);
    // Kernels followed by gaps of 2 µs, 400 µs and 80 µs.
    let g = Gate::new(
        &b,
        0,
        table(&[
            (1, 10_000, 2_000),
            (2, 10_000, 400_000),
            (3, 10_000, 80_000),
        ]),
    );
    let mut c = script(&b, 100, |_, _| panic!("the top job waited"));
    // Job 1 waits to launch a 300 µs kernel.
    b.slot(1).waiting_ns.store(300_000, SeqCst);
    let l = g.before_launch(Some(1), &mut c);
    assert_eq!((l.seq, l.mark), (1, false), "a 2 µs gap fits no fill");
    let l = g.before_launch(Some(2), &mut c);
    assert_eq!((l.seq, l.mark), (2, true), "a 400 µs gap may be filled");
    assert_eq!(b.slot(0).last_gap_ns.load(SeqCst), 400_000);
    assert_eq!(b.slot(0).first_launch_ns.load(SeqCst), 100);
    // 80 µs: too short for job 1's kernel, and shorter than what is
    // marked for a job not yet waiting; job 2's 70 µs kernel fits.
    assert!(!g.before_launch(Some(3), &mut c).mark);
    b.slot(2).waiting_ns.store(70_000, SeqCst);
    assert!(g.before_launch(Some(3), &mut c).mark);
    // Nobody waits (job 2 exited while waiting): the 400 µs gap is
    // marked all the same (a job arriving in it may fill it), the 80 µs
    // one is not.
    b.slot(1).waiting_ns.store(0, SeqCst);
    b.slot(2).state.store(state::EXITED, SeqCst);
    assert!(!g.before_launch(Some(3), &mut c).mark);
    let l = g.before_launch(Some(2), &mut c);
    assert_eq!((l.seq, l.mark), (6, true));
    assert_eq!(b.slot(0).marked.load(SeqCst), 3);
}

#[test]
fn a_filler_waits_for_the_gap_and_goes_when_its_kernel_fits() {
    let (_d, b) = block(GatePolicy::Fikit, &[0, 9]);
    // The top job launched kernel 1 (seq 1, gap after 300 µs), still running.
    let top = b.slot(0);
    top.first_launch_ns.store(1, SeqCst);
    top.launched.store(1, SeqCst);
    top.last_gap_ns.store(300_000, SeqCst);
    let g = Gate::new(&b, 1, table(&[(5, 200_000, 0)]));
    // The GPU finishes the top's kernel at t = 50 µs. While it waits, the
    // filler says what it waits to launch (the top job marks for it).
    let mut waiting = Vec::new();
    let mut c = script(&b, 0, |t, b| {
        waiting.push(b.slot(1).waiting_ns.load(SeqCst));
        if t == 50_000 {
            b.slot(0).done.store(1, SeqCst);
        }
    });
    let l = g.before_launch(Some(5), &mut c);
    assert!(l.mark && !l.timed_out);
    let t = c.t;
    drop(c);
    assert!(waiting.len() == 50 && waiting.iter().all(|&w| w == 200_000));
    assert_eq!(b.slot(1).waiting_ns.load(SeqCst), 0, "cleared once it goes");
    // Seen done at 50 µs, so the gap is predicted to end at 350 µs: a
    // 200 µs kernel fits at once.
    assert_eq!(t, 50_000);
    assert_eq!(b.slot(0).seen_at_ns.load(SeqCst), 50_000);
    assert_eq!(b.header().fill.load(SeqCst), (2 << 32) | 1);
    assert_eq!(b.slot(1).fills.load(SeqCst), 1);
    assert_eq!(b.slot(1).wait_ns.load(SeqCst), 50_000);
}

#[test]
fn a_top_job_quiet_past_its_profile_is_away_until_it_launches() {
    let (_d, b) = block(GatePolicy::Fikit, &[0, 9]);
    // The top job may idle 2 ms (its longest gap plus longest kernel);
    // its latest launch returned at 1 ms, with work still in flight
    // (an unmarked launch: seq 2 launched, 1 seen done).
    let t = Table {
        away_after_ns: 2_000_000,
        ..table(&[])
    };
    let top = Gate::new(&b, 0, t);
    assert_eq!(b.slot(0).away_after_ns.load(SeqCst), 2_000_000);
    let s = b.slot(0);
    s.first_launch_ns.store(1, SeqCst);
    s.last_launch_ns.store(1_000_000, SeqCst);
    s.launched.store(2, SeqCst);
    s.done.store(1, SeqCst);
    s.last_gap_ns.store(0, SeqCst);
    let filler = Gate::new(&b, 1, table(&[(5, 500_000, 0)]));
    let active = |g: &Gate, now| g.views(now)[0].active;
    assert!(
        active(&filler, 3_000_000),
        "quiet exactly 2 ms: still there"
    );
    assert!(
        active(&filler, 9_000_000),
        "quiet 8 ms, but its launch is neither seen done nor waited for"
    );
    s.last_sync_ns.store(1_200_000, SeqCst);
    assert!(!active(&filler, 3_000_001), "a sync returned: away");
    assert!(active(&top, 9_000_000), "never away in its own view");
    // Away, the filler is the top job: its 500 µs kernel goes at once.
    let mut c = script(&b, 3_500_000, |_, _| panic!("the filler waited"));
    assert!(!filler.before_launch(Some(5), &mut c).timed_out);
    assert_eq!(
        b.slot(1).fills.load(SeqCst),
        0,
        "not a fill: it ran as the top"
    );
    // The top job launches again: present at once.
    s.last_launch_ns.store(3_600_000, SeqCst);
    assert!(active(&filler, 3_700_000));
    // A server is away as soon as a wait returns after its latest
    // launch, whether or not that launch was marked and seen done.
    s.serving.store(1, SeqCst);
    s.last_launch_ns.store(4_000_000, SeqCst);
    assert!(active(&filler, 4_000_100), "its launch not waited for");
    s.last_sync_ns.store(4_050_000, SeqCst);
    assert_ne!(s.launched.load(SeqCst) as u32, s.done.load(SeqCst));
    assert!(
        !active(&filler, 4_060_000),
        "between requests: away at once"
    );
    s.serving.store(0, SeqCst);
    assert!(active(&filler, 4_060_000), "not a server: quiet 60 µs only");
    // Under preemptive priority nobody is ever away.
    let (_d2, p) = block(GatePolicy::Preemptive, &[0, 9]);
    let ps = p.slot(0);
    ps.away_after_ns.store(1, SeqCst);
    ps.first_launch_ns.store(1, SeqCst);
    ps.last_sync_ns.store(1, SeqCst);
    assert!(Gate::new(&p, 1, table(&[])).views(1_000_000)[0].active);
}

/// Job 0's gate, a server with a hold of 100 µs between requests: it
/// launched (seq 3, done) and a wait returned since.
fn away_server(b: &Block) -> Gate<'_> {
    let srv = Gate::new(
        b,
        0,
        Table {
            hold_ns: 100_000,
            ..table(&[])
        },
    );
    let s = b.slot(0);
    s.serving.store(1, SeqCst);
    s.first_launch_ns.store(1, SeqCst);
    s.last_launch_ns.store(1_000, SeqCst);
    s.launched.store(3, SeqCst);
    s.done.store(3, SeqCst);
    s.last_sync_ns.store(2_000, SeqCst);
    srv
}

#[test]
fn while_a_server_is_away_its_partner_queues_at_most_its_hold() {
    let (_d, b) = block(GatePolicy::Fikit, &[0, 9]);
    let srv = away_server(&b);
    assert_eq!(b.slot(0).hold_ns.load(SeqCst), 100_000);
    let s = b.slot(0);
    // The partner's kernels are predicted 40 µs.
    let lo = Gate::new(&b, 1, table(&[(7, 40_000, 0)]));
    assert!(!lo.views(10_000)[0].active, "the server is away");
    // Nothing in flight, then 40 µs: both go at once, marked (the job
    // above is present).
    for seq in 1..=2 {
        let mut c = script(&b, 10_000, |_, _| panic!("launch {seq} waited"));
        let l = lo.before_launch(Some(7), &mut c);
        assert_eq!((l.seq, l.mark, l.waited_ns), (seq, true, 0));
    }
    // 80 µs in flight: a third would make 120, over the hold. It waits
    // until the GPU writes the first launch's marker (at 30 µs): 40 µs
    // in flight, 80 with it.
    let mut c = script(&b, 10_000, |t, b| {
        if t >= 30_000 {
            b.slot(1).done.store(1, SeqCst);
        }
    });
    let l = lo.before_launch(Some(7), &mut c);
    assert_eq!((l.seq, l.waited_ns, l.timed_out), (3, 20_000, false));
    assert_eq!(b.slot(1).held.load(SeqCst), 1);
    assert_eq!(b.slot(1).fills.load(SeqCst), 0, "not a fill");
    // A marker that never comes (80 µs in flight): once the queue has
    // shown no progress for twice its prediction and the slack, 180 µs,
    // the hold counts it drained, long before the gate's timeout.
    let mut c = script(&b, 50_000, |_, _| {});
    let l = lo.before_launch(Some(7), &mut c);
    assert_eq!((l.seq, l.waited_ns, l.timed_out), (4, 181_000, false));
    // A server that sets no hold bounds nothing.
    s.hold_ns.store(0, SeqCst);
    let mut c = script(&b, 60_000, |_, _| panic!("no hold: waited"));
    assert_eq!(lo.before_launch(Some(7), &mut c).waited_ns, 0);
    // Its own gate is never held (the server is the top).
    s.hold_ns.store(100_000, SeqCst);
    let mut c = script(&b, 70_000, |_, _| panic!("the server waited"));
    assert_eq!(srv.before_launch(None, &mut c).waited_ns, 0);
}

#[test]
fn markers_done_out_of_order_across_streams_do_not_stall_a_held_partner() {
    let (_d, b) = block(GatePolicy::Fikit, &[0, 9]);
    let _srv = away_server(&b);
    b.header().timeout_ms.store(5, SeqCst);
    let lo = Gate::new(&b, 1, table(&[(7, 40_000, 0), (8, 70_000, 0)]));
    // Two marked launches on two streams: seq 1 (stream A), seq 2 (stream B).
    for _ in 0..2 {
        let mut c = script(&b, 10_000, |_, _| panic!("waited"));
        assert!(lo.before_launch(Some(7), &mut c).mark);
    }
    // Stream B's marker lands first, then stream A's: `done` ends at 1
    // though both kernels are done. Nothing is in flight.
    b.slot(1).done.store(2, SeqCst);
    b.slot(1).done.store(1, SeqCst);
    // A 70 us launch: the queue on the GPU is empty, so it should go at once.
    let mut c = script(&b, 20_000, |_, _| {});
    let l = lo.before_launch(Some(8), &mut c);
    assert!(
        !l.timed_out,
        "stalled {} ns, until the gate's timeout",
        l.waited_ns
    );
}

#[test]
fn a_launch_counter_behind_done_does_not_stall_a_held_partner() {
    // Two threads launch at once: both take seq 4 from launched = 3;
    // one goes, launches again (seq 5, marked, done); the other stores
    // launched = 4 last. launched (4) is now behind done (5).
    let (_d, b) = block(GatePolicy::Fikit, &[0, 9]);
    let _srv = away_server(&b);
    b.header().timeout_ms.store(5, SeqCst);
    let lo = Gate::new(&b, 1, table(&[(7, 40_000, 0)]));
    b.slot(1).done.store(5, SeqCst);
    b.slot(1).launched.store(4, SeqCst);
    let mut c = script(&b, 20_000, |_, _| {});
    let l = lo.before_launch(Some(7), &mut c);
    assert!(
        !l.timed_out,
        "stalled {} ns, until the gate's timeout",
        l.waited_ns
    );
}

#[test]
fn a_filler_marks_its_free_launches_while_a_job_above_it_is_not_active() {
    // The H200 serving pair (2026-11-25): the filler's first launches
    // went before the top job's first one, unmarked; they stayed in
    // flight for the gate and the filler could fill none of the top
    // job's 5 ms pauses.
    let (_d, b) = block(GatePolicy::Fikit, &[0, 9]);
    b.header().min_fill_ns.store(50_000, SeqCst);
    // A 100 µs kernel followed by a 2 µs gap: no fill could follow it.
    let lo = Gate::new(&b, 1, table(&[(7, 100_000, 2_000)]));
    let mut c = script(&b, 100, |_, _| panic!("the filler waited"));
    // The top job runs but has not launched: the filler goes, marked.
    let l = lo.before_launch(Some(7), &mut c);
    assert_eq!((l.seq, l.mark), (1, true));
    // The top job launches (seq 5 marked, done) and pauses 5 ms; the
    // filler's launch is not seen done yet: no fill.
    let top = b.slot(0);
    top.first_launch_ns.store(200, SeqCst);
    top.last_launch_ns.store(300, SeqCst);
    top.launched.store(5, SeqCst);
    top.done.store(5, SeqCst);
    top.last_gap_ns.store(5_000_000, SeqCst);
    // The GPU writes the filler's marker at 20 µs: it fills then.
    let mut c = script(&b, 1_000, |t, b| {
        if t >= 20_000 {
            b.slot(1).done.store(1, SeqCst);
        }
    });
    let l = lo.before_launch(Some(7), &mut c);
    assert_eq!((l.seq, l.mark), (2, true));
    assert_eq!(b.slot(1).fills.load(SeqCst), 1);
    assert_eq!(b.slot(1).wait_ns.load(SeqCst), 19_000);
    // The top job exited: the filler's launches are marked only before
    // a gap a fill could use.
    top.state.store(state::EXITED, SeqCst);
    b.slot(1).done.store(2, SeqCst);
    let mut c = script(&b, 30_000, |_, _| panic!("the filler waited"));
    assert!(!lo.before_launch(Some(7), &mut c).mark);
    // A job above that has not started yet counts as present.
    let (_d2, b2) = block(GatePolicy::Fikit, &[0, 9]);
    b2.slot(0).state.store(state::WAITING, SeqCst);
    let lo2 = Gate::new(&b2, 1, table(&[(7, 100_000, 2_000)]));
    let mut c = script(&b2, 100, |_, _| panic!("the filler waited"));
    assert!(lo2.before_launch(Some(7), &mut c).mark);
    // The top job's own launches are unchanged: nobody is above it.
    b2.slot(0).state.store(state::RUNNING, SeqCst);
    let hi = Gate::new(&b2, 0, table(&[(7, 100_000, 2_000)]));
    let mut c = script(&b2, 200, |_, _| panic!("the top job waited"));
    assert!(!hi.before_launch(Some(7), &mut c).mark);
}

#[test]
fn a_filler_too_long_for_the_rest_of_the_gap_waits_for_the_next() {
    let (_d, b) = block(GatePolicy::Fikit, &[0, 9]);
    let top = b.slot(0);
    top.first_launch_ns.store(1, SeqCst);
    top.launched.store(1, SeqCst);
    top.done.store(1, SeqCst);
    top.last_gap_ns.store(100_000, SeqCst);
    let g = Gate::new(&b, 1, table(&[(5, 150_000, 0)]));
    // The gap opened (seen) at 0; at 120 µs the top launches seq 2 with a
    // 1 ms gap after it, done at 200 µs.
    let mut c = script(&b, 0, |t, b| {
        let s = b.slot(0);
        if t == 120_000 {
            s.last_gap_ns.store(1_000_000, SeqCst);
            s.launched.store(2, SeqCst);
        }
        if t == 200_000 {
            s.done.store(2, SeqCst);
        }
    });
    g.before_launch(Some(5), &mut c);
    assert_eq!(c.t, 200_000, "150 µs never fit the first 100 µs gap");
}

#[test]
fn one_fill_at_a_time_and_a_dead_filler_holds_nothing() {
    let (_d, b) = block(GatePolicy::Fikit, &[0, 9, 9]);
    b.slot(0).first_launch_ns.store(1, SeqCst);
    b.slot(0).last_gap_ns.store(10_000_000, SeqCst);
    // Job 1 holds the fill token for its seq 1, in flight.
    b.slot(1).first_launch_ns.store(1, SeqCst);
    b.slot(1).launched.store(1, SeqCst);
    b.header().fill.store((2 << 32) | 1, SeqCst);
    let g = Gate::new(&b, 2, table(&[(5, 1_000, 0)]));
    // Job 1 dies at 30 µs without its kernel ever seen done.
    let mut c = script(&b, 0, |t, b| {
        if t == 30_000 {
            b.slot(1).state.store(state::EXITED, SeqCst);
        }
    });
    let l = g.before_launch(Some(5), &mut c);
    assert_eq!(c.t, 30_000);
    assert_eq!(b.header().fill.load(SeqCst), (3 << 32) | u64::from(l.seq));
}

#[test]
fn preemptive_waits_while_a_higher_job_has_work() {
    let (_d, b) = block(GatePolicy::Preemptive, &[0, 9]);
    b.slot(0).first_launch_ns.store(1, SeqCst);
    b.slot(0).launched.store(3, SeqCst);
    b.slot(0).done.store(1, SeqCst);
    let g = Gate::new(&b, 1, Table::default());
    let mut c = script(&b, 0, |t, b| {
        if t == 7_000 {
            b.slot(0).done.store(3, SeqCst);
        }
    });
    let l = g.before_launch(None, &mut c);
    assert_eq!((c.t, l.mark), (7_000, true));
    assert_eq!((l.went_ns, l.waited_ns), (7_000, 7_000));
}

#[test]
fn a_stuck_gate_times_out_and_abort_opens_it() {
    let (_d, b) = block(GatePolicy::Preemptive, &[0, 9]);
    b.header().timeout_ms.store(2, SeqCst);
    b.slot(0).first_launch_ns.store(1, SeqCst);
    b.slot(0).launched.store(1, SeqCst);
    let g = Gate::new(&b, 1, Table::default());
    let mut c = script(&b, 0, |_, _| {});
    let l = g.before_launch(None, &mut c);
    assert!(l.timed_out);
    assert_eq!(c.t, 2_001_000, "the first look past 2 ms without progress");
    assert_eq!(b.slot(1).timeouts.load(SeqCst), 1);
    b.header().abort.store(1, SeqCst);
    let mut c = script(&b, 0, |_, _| panic!("waited after abort"));
    assert!(!g.before_launch(None, &mut c).timed_out);
}

#[test]
fn the_start_barrier_holds_a_first_launch_until_every_job_reached_its_own() {
    let (_d, b) = block(GatePolicy::Open, &[0, 9, 9]);
    b.header().align.store(1, SeqCst);
    // Job 1 reaches its first launch at 5.1 µs; job 2 exits at 9.1 µs
    // without launching anything.
    let g = Gate::new(&b, 0, table(&[]));
    let mut c = script(&b, 100, |t, b| {
        if t >= 5_000 && b.slot(1).arrived_ns.load(SeqCst) == 0 {
            b.slot(1).arrived_ns.store(t, SeqCst);
        }
        if t >= 9_000 {
            b.slot(2).state.store(state::EXITED, SeqCst);
        }
    });
    g.before_launch(Some(1), &mut c);
    let s = b.slot(0);
    assert_eq!(
        s.arrived_ns.load(SeqCst),
        100,
        "arrival is when it reached the gate"
    );
    // Pauses of 1 µs from 100: job 2 exits at 9,100, and the launch goes.
    assert_eq!(
        s.first_launch_ns.load(SeqCst),
        9_100,
        "the region starts at the release"
    );
    assert_eq!(
        (s.waits.load(SeqCst), s.wait_ns.load(SeqCst)),
        (0, 0),
        "setup, not gate waits"
    );
    // Its later launches pass at once.
    let mut c = script(&b, 20_000, |_, _| panic!("waited after the first launch"));
    assert_eq!(g.before_launch(Some(1), &mut c).seq, 2);
}

#[test]
fn the_start_barrier_opens_on_abort_and_is_off_by_default() {
    let (_d, b) = block(GatePolicy::Open, &[0, 9]);
    let g = Gate::new(&b, 0, table(&[]));
    let mut c = script(&b, 7, |_, _| panic!("waited with the barrier off"));
    g.before_launch(None, &mut c);
    assert_eq!(b.slot(0).first_launch_ns.load(SeqCst), 7);
    let (_d, b) = block(GatePolicy::Open, &[0, 9]);
    b.header().align.store(1, SeqCst);
    let g = Gate::new(&b, 0, table(&[]));
    let mut c = script(&b, 1, |t, b| {
        if t >= 3_001 {
            b.header().abort.store(1, SeqCst);
        }
    });
    g.before_launch(None, &mut c);
    assert_eq!(b.slot(0).first_launch_ns.load(SeqCst), 3_001);
}

fn g_launch(went_ns: i64, waited_ns: i64) -> Launch {
    Launch {
        seq: 1,
        mark: false,
        timed_out: false,
        went_ns,
        waited_ns,
    }
}

#[test]
fn open_runs_count_and_stamp_only() {
    let (_d, b) = block(GatePolicy::Open, &[0, 0]);
    b.slot(1).launched.store(5, SeqCst);
    let g = Gate::new(&b, 0, Table::default());
    let mut c = script(&b, 10, |_, _| panic!("waited"));
    assert_eq!(
        g.before_launch(Some(1), &mut c),
        Launch {
            seq: 1,
            mark: false,
            timed_out: false,
            went_ns: 10,
            waited_ns: 0,
        }
    );
    // Its callback began 4 ns before the gate let it go, and it did not wait.
    g.gate_work(6, &g_launch(10, 0));
    assert_eq!(b.slot(0).gate_ns.load(SeqCst), 4);
    assert_eq!(b.slot(0).gate_calls.load(SeqCst), 1);
    // A launch that waited 30 ns of the 33 since its callback began: 3 its own.
    g.gate_work(7, &g_launch(40, 30));
    assert_eq!(b.slot(0).gate_ns.load(SeqCst), 7);
    assert_eq!(b.slot(0).gate_calls.load(SeqCst), 2);
    assert_eq!(b.slot(0).last_launch_ns.load(SeqCst), 10, "when it went");
    // The call returns 7 ns after the gate let it go.
    g.after_launch(10, 17);
    assert_eq!(b.slot(0).launch_call_ns.load(SeqCst), 7);
    assert_eq!(b.slot(0).launch_calls.load(SeqCst), 1);
    // A return whose start the collector did not see counts no call time.
    g.after_launch(0, 18);
    assert_eq!(b.slot(0).launch_calls.load(SeqCst), 1);
    g.synced(20);
    // No launch since: the end of the region moves, no new iteration.
    g.synced(30);
    assert_eq!(b.slot(0).syncs.load(SeqCst), 1);
    assert_eq!(b.stamps(0)[0].load(SeqCst), 20);
    assert_eq!(b.slot(0).last_sync_ns.load(SeqCst), 30);
    let mut c = script(&b, 40, |_, _| panic!("waited"));
    g.before_launch(Some(1), &mut c);
    // A second launch in the same iteration: its busy part still began
    // at the first.
    let mut c = script(&b, 45, |_, _| panic!("waited"));
    g.before_launch(Some(1), &mut c);
    g.synced(50);
    assert_eq!(b.slot(0).syncs.load(SeqCst), 2);
    assert_eq!(b.stamps(0)[1].load(SeqCst), 50);
    assert_eq!(b.busy_starts(0)[1].load(SeqCst), 40);
}

#[test]
fn an_off_phase_of_the_ab_stamps_every_synchronization() {
    let (_d, b) = block(GatePolicy::Fikit, &[0]);
    let g = Gate::new(&b, 0, Table::default());
    let mut c = script(&b, 10, |_, _| panic!("waited"));
    g.before_launch(Some(1), &mut c);
    g.synced(20);
    // Phases of 1 ms from 1,000,000 ns: off, then on.
    b.header().ab_period_ms.store(1, SeqCst);
    b.slot(0).ab_start_ns.store(1_000_000, SeqCst);
    // Before the first phase the gate is on: no launch since, no stamp.
    g.synced(500_000);
    assert_eq!(b.slot(0).syncs.load(SeqCst), 1);
    // Off: the gate sees no launch, and each synchronization is stamped.
    g.synced(1_200_000);
    g.synced(1_400_000);
    assert_eq!(b.slot(0).syncs.load(SeqCst), 3);
    assert_eq!(b.stamps(0)[2].load(SeqCst), 1_400_000);
    // On again: only a synchronization after a launch.
    g.synced(2_100_000);
    assert_eq!(b.slot(0).syncs.load(SeqCst), 3);
    let mut c = script(&b, 2_200_000, |_, _| panic!("waited"));
    g.before_launch(Some(1), &mut c);
    g.synced(2_300_000);
    assert_eq!(b.slot(0).syncs.load(SeqCst), 4);
}

#[test]
fn table_from_a_profile_drives_the_gate() {
    let t = Table::from_ops(&[
        ProfiledOp {
            key: Some(1),
            start_ns: 0,
            end_ns: 10,
        },
        ProfiledOp {
            key: Some(1),
            start_ns: 1_000,
            end_ns: 1_010,
        },
    ]);
    assert_eq!(t.gap_after(Some(1)), 990);
}
