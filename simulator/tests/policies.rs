//! Each policy on tiny hand-built scenarios, JCTs checked against values worked
//! out by hand (every step is written next to the expected numbers).

use fikit_sim::policy::PolicyKind;
use fikit_sim::sim::engine::RunResult;
use fikit_sim::sim::gpu::{FikitGate, GpuModel, Granularity};
use fikit_sim::sim::job::Job;
use fikit_sim::sim::simulate::run_policy;
use fikit_trace::{Kernel, Trace, fixture};

/// A kernel launched at `start` (so it starts as soon as it is issued).
use fixture::launched_at_start as k;

/// A kernel that fills the fixture device (132 SMs × 2 blocks of 1024 threads): SM demand 1.
fn big(name: &str, corr: u32, start: i64, end: i64) -> Kernel {
    let mut k = k(name, corr, start, end);
    k.grid = [264, 1, 1];
    k.block = [1024, 1, 1];
    k
}

fn job(name: &str, priority: u8, kernels: Vec<Kernel>) -> Trace {
    let mut t = fixture::empty(name, priority);
    t.kernels = kernels;
    t
}

/// H (priority 0): k1 [0,100), host gap, k2 issued at 300 runs [300,400). Isolated JCT 400.
fn high() -> Trace {
    job("high", 0, vec![k("h1", 1, 0, 100), k("h2", 2, 300, 400)])
}

/// L (priority 9): one kernel of `len` ns issued at 0.
fn low(len: i64) -> Trace {
    job("low", 9, vec![k("l1", 1, 0, len)])
}

/// `traces` run together under `kind`, job `i`'s first host action at
/// `arrivals[i]`.
fn run_arriving(
    traces: &[Trace],
    arrivals: &[i64],
    kind: PolicyKind,
    model: &GpuModel,
) -> RunResult {
    let jobs: Vec<Job> = traces.iter().map(Job::from_trace).collect();
    run_policy(&jobs, arrivals, kind, model, false).unwrap()
}

/// `traces` run together under `kind`, every job arriving at 0.
fn together(traces: &[Trace], kind: PolicyKind, model: &GpuModel) -> RunResult {
    run_arriving(traces, &vec![0; traces.len()], kind, model)
}

/// Each job's JCT in a run.
fn jcts_of(r: &RunResult) -> Vec<i64> {
    r.jobs.iter().map(|j| j.jct_ns()).collect()
}

fn jcts(traces: &[Trace], kind: PolicyKind, model: &GpuModel) -> Vec<i64> {
    jcts_of(&together(traces, kind, model))
}

/// JCTs with job `i`'s first host action at `arrivals[i]`.
fn jcts_arriving(
    traces: &[Trace],
    arrivals: &[i64],
    kind: PolicyKind,
    model: &GpuModel,
) -> Vec<i64> {
    jcts_of(&run_arriving(traces, arrivals, kind, model))
}

fn model() -> GpuModel {
    GpuModel {
        timeslice_quantum_ns: 50,
        context_switch_ns: 10,
        timeslice_preempts: true,
        preempt_granularity: Granularity::Kernel,
        preempt_cost_ns: 40,
        block_waves: 4,
        ..GpuModel::default()
    }
}

#[test]
fn exclusive_reproduces_the_recorded_spans() {
    assert_eq!(jcts(&[high()], PolicyKind::Exclusive, &model()), [400]);
    assert_eq!(jcts(&[low(150)], PolicyKind::Exclusive, &model()), [150]);
}

#[test]
fn fikit_fills_a_gap_with_a_kernel_that_fits() {
    // t=0 both eligible: H goes (L waits). t=100 H in its gap; the profiled gap
    // after h1 is 300-100 = 200, L's predicted 150 fits: L runs [100,250).
    // t=300 h2 runs [300,400).
    assert_eq!(
        jcts(&[high(), low(150)], PolicyKind::Fikit, &model()),
        [400, 250]
    );
}

#[test]
fn fikit_holds_a_fillers_host_in_its_launch_until_the_kernel_goes() {
    // L alone: l1 [0,50) launched at 0, 100 ns of host, l2 launched at 100,
    // [100,150). Beside H (`high`: h1 [0,100), a 200 ns gap, h2 [300,400)):
    // L's launch of l1 waits at its gate, its host with it, until l1 goes
    // in H's gap at 100 ([100,150)); only then does L's host run its 100 ns
    // to launch l2 at 200, which fits the 100 ns left: [200,250). A host
    // that ran ahead would have launched l2 at 100 and finished at 200.
    let l = job("low", 9, vec![k("l1", 1, 0, 50), k("l2", 2, 100, 150)]);
    assert_eq!(
        jcts(std::slice::from_ref(&l), PolicyKind::Exclusive, &model()),
        [150]
    );
    assert_eq!(
        jcts(&[high(), l.clone()], PolicyKind::Fikit, &model()),
        [400, 250]
    );
    // Held, as the live gate counts waits: L's launch of l1 for 100 ns
    // (made at 0, returned at 100); l2's went into the gap at once, so it
    // returned when made. H's launches all returned at once.
    let r = together(&[high(), l.clone()], PolicyKind::Fikit, &model());
    assert_eq!(r.jobs[0].launches_held, (0, 0));
    assert_eq!(r.jobs[1].launches_held, (1, 100));
    // Filled, as the live gate counts fills: both of L's kernels went into
    // H's gap; H, the top job, filled none.
    assert_eq!((r.jobs[0].fills, r.jobs[1].fills), (Some(0), Some(2)));
    // A policy that holds no launch call and fills nothing counts neither.
    let r = together(&[high(), l], PolicyKind::Timeslice, &model());
    assert!(r.jobs.iter().all(|j| j.launches_held == (0, 0)));
    assert!(r.jobs.iter().all(|j| j.fills.is_none()));
}

#[test]
fn fikit_leaves_the_gap_idle_when_nothing_fits() {
    // L's 250 does not fit the 200 gap: it waits until H finishes at 400, runs [400,650).
    assert_eq!(
        jcts(&[high(), low(250)], PolicyKind::Fikit, &model()),
        [400, 650]
    );
    // It ran once H had finished: not a fill.
    let r = together(&[high(), low(250)], PolicyKind::Fikit, &model());
    assert_eq!(r.jobs[1].fills, Some(0));
}

/// [`model`] with the live FIKIT gate's costs.
fn gated(release_ns: i64, launch_ns: i64, switch_ns: i64) -> GpuModel {
    GpuModel {
        fikit_gate: Some(FikitGate {
            release_ns,
            launch_ns,
            switch_ns,
        }),
        ..model()
    }
}

#[test]
fn fikit_pays_the_live_gates_costs() {
    // Gate: sees a kernel end 10 late, a fill starts 5 after its release,
    // a switch between jobs costs 20. t=0 h1 [0,100) (the device's first
    // job: no switch). t=100 h1 ends; the gate sees it at 110, H has issued
    // nothing: the gap predicted from 110 ends at 310, L's 150 fits; it
    // starts 5 + 20 later: l1 [135,285). t=285 l1 ends (the gate sees it at
    // 295, nothing waits). t=300 h2 issued; the device passes back to H:
    // [320,420). Without the costs: [400, 250].
    let r = together(&[high(), low(150)], PolicyKind::Fikit, &gated(10, 5, 20));
    assert_eq!(jcts_of(&r), [420, 285]);
    assert_eq!(r.jobs[1].fills, Some(1));
    // L's launch returned when its kernel started: held 135.
    assert_eq!(r.jobs[1].launches_held, (1, 135));
}

#[test]
fn fikit_leaves_a_gap_the_gate_sees_too_late() {
    // The gate sees h1's end at 100 + 250 = 350; H issued h2 at 300, which
    // goes at once (H's kernels last started: no switch): [300,400). L
    // fills nothing and runs once H has finished, after the switch:
    // [420,570).
    let r = together(&[high(), low(150)], PolicyKind::Fikit, &gated(250, 0, 20));
    assert_eq!(jcts_of(&r), [400, 570]);
    assert_eq!(r.jobs[1].fills, Some(0));
}

#[test]
fn fikit_fills_nothing_while_the_top_job_has_a_kernel_on_its_way() {
    // H: h1 [0,100), h2 launched at 105, recorded start 125: [125,225); the
    // gap after h1 is 25 and L's 20 would fit. The gate sees h1's end at
    // 110, but h2 is launched and not done by then, as the live gate's
    // in-flight count shows it: no fill. h2 [125,225); L once H has
    // finished: [225,245).
    let h = job(
        "high",
        0,
        vec![
            k("h1", 1, 0, 100),
            fixture::kernel("h2", 7, 2, Some(105), 125, 225),
        ],
    );
    let r = together(&[h, low(20)], PolicyKind::Fikit, &gated(10, 0, 0));
    assert_eq!(jcts_of(&r), [225, 245]);
    assert_eq!(r.jobs[1].fills, Some(0));
}

#[test]
fn fikit_with_gaps_predicted_by_key() {
    // H's kernels h1 [0,100), gap 200, h2 [300,400), as in `high`, then h1
    // again at 400 (no gap after it, the last). By position the gap after
    // the first h1 is 200 and L's 150 fits (as above). Predicted by key,
    // h1's gap is what the gate's table says: 120 here, so L's 150 does not
    // fit and waits for H's end at 500: [500, 650). With 160, it fits again.
    let mut h = high();
    h.kernels.push(k("h1", 3, 400, 500));
    let by_key = |gap: i64| {
        let jobs: Vec<Job> = [h.clone(), low(150)].iter().map(Job::from_trace).collect();
        let h1 = jobs[0].ops[0].kernel_key().unwrap();
        let jobs = [
            jobs[0].with_gaps_by_key(|key| if key == h1 { gap } else { 0 }),
            jobs[1].clone(),
        ];
        assert_eq!(jobs[0].gap_after_kernel_ns[..], [gap, 0, gap]);
        jcts_of(&run_policy(&jobs, &[0, 0], PolicyKind::Fikit, &model(), false).unwrap())
    };
    assert_eq!(by_key(120), [500, 650]);
    assert_eq!(by_key(160), [500, 250]);
}

#[test]
fn fikit_counts_the_delay_of_a_wrong_prediction() {
    // L's kernel key was profiled at 150 ns but this launch runs 250 ns: it is
    // started in the 200 ns gap at 100 and runs to 350, so h2 (eligible at 300)
    // waits 50 ns: [350, 450).
    let mut l = low(250);
    let mut short = l.kernels[0].clone();
    short.start_ns = 1_000;
    short.end_ns = 1_000; // a second launch of the same key, 0 ns: the mean is (250+0)/2 = 125
    short.launch.as_mut().unwrap().start_ns = 1_000;
    short.launch.as_mut().unwrap().end_ns = 1_000;
    l.kernels.push(short);
    let jobs: Vec<Job> = [high(), l].iter().map(Job::from_trace).collect();
    let r = run_policy(&jobs, &[0, 0], PolicyKind::Fikit, &model(), false).unwrap();
    assert_eq!(r.jobs[0].jct_ns(), 450);
    assert_eq!(r.misprediction, Some((50, 1)));
}

#[test]
fn timeslice_takes_turns_with_switch_costs_and_preemption() {
    // quantum 50, switch 10, preempting:
    // t=0 H owns (first with work), h1 runs. t=50 slice ends, L waits: pause h1
    // (50 left), switch to L until 60. L runs [60,110), 100 left; switch to H
    // until 120; h1 finishes 170. H has no work: yield, switch until 180; L runs
    // its 100 to 280. t=300 h2 issued: L idle, switch until 310; h2 [310,410).
    assert_eq!(
        jcts(&[high(), low(150)], PolicyKind::Timeslice, &model()),
        [410, 280]
    );
}

#[test]
fn timeslice_without_preemption_lets_the_kernel_finish() {
    // quantum 50, switch 10, run to completion: H owns, h1 [0,100) finishes past
    // its slice. Then switch to L until 110; L [110,260). h2 issued at 300:
    // switch until 310, h2 [310,410).
    let m = GpuModel {
        timeslice_preempts: false,
        ..model()
    };
    assert_eq!(
        jcts(&[high(), low(150)], PolicyKind::Timeslice, &m),
        [410, 260]
    );
}

#[test]
fn preemptive_at_kernel_granularity_waits_for_the_running_kernel() {
    // h1 [0,100); L starts at 100 and runs to 350; h2 eligible at 300 waits: [350,450).
    assert_eq!(
        jcts(&[high(), low(250)], PolicyKind::Preemptive, &model()),
        [450, 350]
    );
}

#[test]
fn preemptive_immediate_pays_the_preemption_cost() {
    // L starts at 100; at 300 it is paused (50 left) and the device is blocked
    // 40 ns: h2 [340,440); L resumes [440,490).
    let m = GpuModel {
        preempt_granularity: Granularity::Immediate,
        ..model()
    };
    assert_eq!(
        jcts(&[high(), low(250)], PolicyKind::Preemptive, &m),
        [440, 490]
    );
}

#[test]
fn preemptive_at_block_granularity_stops_after_the_current_wave() {
    // L 400 ns from 100: a wave is 400/4 = 100 ns. At 300 (200 done, 200 left)
    // it stops at 300+min(200,100) = 400 with 100 left; h2 [400,500); L resumes
    // [500,600).
    let m = GpuModel {
        preempt_granularity: Granularity::Block,
        ..model()
    };
    assert_eq!(
        jcts(&[high(), low(400)], PolicyKind::Preemptive, &m),
        [500, 600]
    );
}

#[test]
fn the_replay_model_and_the_other_policies_leave_out_the_corun_slowdown() {
    // Half-device kernels (132 of 264 block slots): both jobs' fit at once.
    let half = |name: &str, corr: u32, start: i64, end: i64| {
        let mut k = k(name, corr, start, end);
        k.grid = [132, 1, 1];
        k.block = [1024, 1, 1];
        k
    };
    let h = job(
        "high",
        0,
        vec![half("h1", 1, 0, 100), half("h2", 2, 300, 400)],
    );
    let l = job("low", 9, vec![half("l1", 1, 0, 260)]);
    let m = GpuModel {
        corun_slowdown: 1.0,
        ..model()
    };
    // With it, a kernel beside the other job's (holding half the SMs) runs
    // 1 + 1 * 0.5 = 1.5x slower, taken again as blocks come and go: h1 and
    // l1 from 0 at 2/3 speed; h1 ends 150, l1 has 160 left, alone to 300 (10
    // left); h2 from 300 beside it at 2/3: l1 ends 315; h2 has 90 left alone:
    // 405.
    assert_eq!(
        jcts(&[h.clone(), l.clone()], PolicyKind::Mps, &m),
        [405, 315]
    );
    // Without the slowdown (the default, and what validation against the
    // replay uses when its kernels show none) they run as if alone.
    let replay = GpuModel {
        replay_corun_slowdown: 0.0,
        ..m.clone()
    }
    .for_replay();
    assert_eq!(replay.corun_slowdown, 0.0);
    assert_eq!(
        jcts(&[h.clone(), l.clone()], PolicyKind::Mps, &replay),
        [400, 260]
    );
    // Other policies never run two jobs' kernels at once: no effect.
    assert_eq!(
        jcts(&[h.clone(), l.clone()], PolicyKind::Timeslice, &m),
        jcts(&[h, l], PolicyKind::Timeslice, &model())
    );
}

/// A kernel of `blocks` blocks of 1024 threads (2 fit on an SM of the fixture
/// device: 264 block slots on its 132 SMs).
fn wide(name: &str, corr: u32, start: i64, end: i64, blocks: u32) -> Kernel {
    let mut k = big(name, corr, start, end);
    k.grid = [blocks, 1, 1];
    k
}

#[test]
fn mps_a_one_block_kernel_waits_behind_a_many_wave_kernel() {
    // L: 1056 blocks = 4 waves of 264, [0,400): a block takes 100. H arrives
    // at 50 and launches a one-block kernel of 30 ns (JCT 30 alone). Under MPS
    // L's kernel keeps the device while it has blocks to place (waves at 0,
    // 100, 200, 300), so H's block goes at 400 and ends at 430: JCT 380. L is
    // not slowed.
    let l = job("low", 9, vec![wide("l1", 1, 0, 400, 1056)]);
    let h = job("high", 0, vec![wide("h1", 1, 0, 30, 1)]);
    assert_eq!(
        jcts(std::slice::from_ref(&h), PolicyKind::Exclusive, &model()),
        [30]
    );
    let both = [h, l];
    assert_eq!(
        jcts_arriving(&both, &[50, 0], PolicyKind::Mps, &model()),
        [380, 400]
    );
}

#[test]
fn mps_a_thin_last_wave_is_short() {
    // L: 330 blocks = a wave of 264 and a last of 66 (a quarter full),
    // [0,280). With last_wave_floor 0.2 the last wave takes 0.2 + 0.8 x 0.25
    // = 0.4 of a block time: blocks of 200, then 80. H arrives at 50 with a
    // one-block kernel of 30 ns: it waits for L's last blocks to be placed,
    // at 200 (140 with equal waves), and ends at 230: JCT 180 (120).
    let l = job("low", 9, vec![wide("l1", 1, 0, 280, 330)]);
    let h = job("high", 0, vec![wide("h1", 1, 0, 30, 1)]);
    let both = [h, l];
    let thin = GpuModel {
        last_wave_floor: 0.2,
        ..model()
    };
    assert_eq!(
        jcts_arriving(&both, &[50, 0], PolicyKind::Mps, &thin),
        [180, 280]
    );
    assert_eq!(
        jcts_arriving(&both, &[50, 0], PolicyKind::Mps, &model()),
        [120, 280]
    );
}

#[test]
fn mps_in_ready_order() {
    // L launches two kernels at 0 on one stream: l1, 4 waves [0,400), and l2,
    // one full wave queued behind it, [400,500). H arrives at 50 with a
    // one-block kernel of 30 ns.
    let mut l2 = wide("l2", 2, 400, 500, 264);
    l2.launch.as_mut().unwrap().start_ns = 0;
    l2.launch.as_mut().unwrap().end_ns = 0;
    let l = job("low", 9, vec![wide("l1", 1, 0, 400, 1056), l2]);
    let h = job("high", 0, vec![wide("h1", 1, 0, 30, 1)]);
    let both = [h, l];
    // Ready order: H's kernel, ready since 50, goes at 400 before l2 (ready
    // at 400): [400,430). l2 gets 263 of its 264 blocks beside it; the last
    // goes when H's retires, [430,530). H 380, L 530.
    assert_eq!(
        jcts_arriving(&both, &[50, 0], PolicyKind::Mps, &model()),
        [380, 530]
    );
}

#[test]
fn mps_two_kernels_that_each_fit_alone_but_not_together() {
    // H's 200 blocks [0,100) and L's 200 blocks [0,100), both one wave.
    // H reaches the GPU first (job order at the same instant): its 200 go,
    // 64 of L's fit beside them ([0,100)); at 100 H's retire and L's other
    // 136 go: [100,200).
    let h = job("high", 0, vec![wide("h1", 1, 0, 100, 200)]);
    let l = job("low", 9, vec![wide("l1", 1, 0, 100, 200)]);
    assert_eq!(
        jcts(&[h.clone(), l.clone()], PolicyKind::Mps, &model()),
        [100, 200]
    );
    // With a concurrent-kernel slowdown of 1 each slows the other while both
    // have started. Each presses on a full wave, 100 SMs (L's 64 blocks
    // placed and its 136 waiting count alike), so both run
    // 1 + 100/132 = 1.7576x: H's blocks end at 175.76, so 176, and L's
    // first 64 with them; L's other 136, placed at 176 beside nothing, take
    // 100: L ends at 276.
    let c1 = GpuModel {
        corun_slowdown: 1.0,
        ..model()
    };
    assert_eq!(jcts(&[h, l], PolicyKind::Mps, &c1), [176, 276]);
}

#[test]
fn mps_a_jobs_measured_pressure_weighs_its_kernels() {
    // The case above with a weight given to H's job: at 1 the unweighted
    // case ([176, 276]); at 0 L runs at full speed beside H while H still
    // feels L. L's first 64 blocks end at 100. H runs 1 + 100/132 =
    // 1.7576x until then (56.9 of its 100 ns done); at 100 L places 64 more
    // (32 SMs free) and presses on 136 blocks, 68 SMs: H runs 1 + 68/132 =
    // 1.5152x, its 43.1 left take 65.3: H ends at 165. L's 64 end at 200,
    // its last 72 are placed when H leaves, 165, and end at 265.
    let h = Job::from_trace(&job("high", 0, vec![wide("h1", 1, 0, 100, 200)]));
    let l = Job::from_trace(&job("low", 9, vec![wide("l1", 1, 0, 100, 200)]));
    let c1 = GpuModel {
        corun_slowdown: 1.0,
        ..model()
    };
    let run = |w: Option<f64>| {
        let h = match w {
            Some(w) => h.with_pressure_weight(w),
            None => h.clone(),
        };
        jcts_of(&run_policy(&[h, l.clone()], &[0, 0], PolicyKind::Mps, &c1, false).unwrap())
    };
    assert_eq!(run(None), [176, 276]);
    assert_eq!(run(Some(1.0)), [176, 276]);
    assert_eq!(run(Some(0.0)), [165, 265]);
    // Half the weight: L's first blocks slowed half as much, so H (slowed by
    // L's full weight until they retire, less after) and L end between.
    let half = run(Some(0.5));
    assert!(half[0] > 165 && half[0] < 176, "{half:?}");
    assert!(half[1] > 265 && half[1] < 276, "{half:?}");
}

#[test]
fn mps_a_kernel_waits_for_room_and_its_host_waits_with_it() {
    // L fills the device for [0,300) (264 blocks, one wave). H arrives at 10:
    // h1 (one block) [0,30) of its time; the host syncs on it, the sync
    // returning 5 ns after it ends (35), and launches h2 (one block) 20 ns
    // later: [55,85), JCT 85 alone. Under MPS h1 waits for room until 300:
    // [300,330); the sync returns at 335, h2 goes at 355 into a free device
    // and ends at 385: JCT 375.
    let l = job("low", 9, vec![big("l1", 1, 0, 300)]);
    let mut h = job(
        "high",
        0,
        vec![wide("h1", 1, 0, 30, 1), wide("h2", 3, 55, 85, 1)],
    );
    h.syncs = vec![fixture::stream_sync(7, 2, 2, 35)];
    assert_eq!(jcts(&[h.clone()], PolicyKind::Exclusive, &model()), [85]);
    assert_eq!(
        jcts_arriving(&[h.clone(), l.clone()], &[10, 0], PolicyKind::Mps, &model()),
        [375, 300]
    );
    // The timeline says how long each waited: h1 was ready at 10 and got its
    // block at 300 (290 ns waiting for room); h2, ready at 355, went at once.
    let jobs = [Job::from_trace(&h), Job::from_trace(&l)];
    let r = run_policy(&jobs, &[10, 0], PolicyKind::Mps, &model(), true).unwrap();
    let mut waits: Vec<_> = r
        .segments
        .iter()
        .filter(|s| s.job == 0)
        .map(|s| (s.op, s.ready_ns, s.start_ns, s.end_ns))
        .collect();
    waits.sort_unstable();
    assert_eq!(waits, [(0, 10, 300, 330), (1, 355, 355, 385)]);
}

#[test]
fn the_host_waits_closed_loop_behind_a_delayed_kernel() {
    // H: h1 [0,100); the host syncs [10,110) (wakes 10 after h1 ends), then 40 ns
    // of host work, issues h2 at 150: [150,250). Isolated JCT 250.
    let mut h = job("high", 0, vec![k("h1", 1, 0, 100), k("h2", 3, 150, 250)]);
    h.syncs = vec![fixture::stream_sync(7, 2, 10, 110)];
    assert_eq!(jcts(&[h.clone()], PolicyKind::Exclusive, &model()), [250]);
    // Under time slicing with L (job 0, 250 ns) owning the device first
    // (quantum 1000, no switch cost): h1 runs [250,350), the host wakes at 360,
    // issues h2 at 400: [400,500). An open-loop replay would have run h2 at 350.
    let m = GpuModel {
        timeslice_quantum_ns: 1000,
        context_switch_ns: 0,
        ..model()
    };
    assert_eq!(jcts(&[low(250), h], PolicyKind::Timeslice, &m), [250, 500]);
}

#[test]
fn iterations_are_the_spans_between_blocking_syncs() {
    let mut h = job("high", 0, vec![k("h1", 1, 0, 100), k("h2", 3, 150, 250)]);
    h.syncs = vec![
        fixture::stream_sync(7, 2, 10, 110),
        fixture::stream_sync(7, 4, 160, 260),
    ];
    let jobs = vec![Job::from_trace(&h)];
    let r = run_policy(&jobs, &[0], PolicyKind::Exclusive, &model(), false).unwrap();
    assert_eq!(r.jobs[0].iterations_ns, [110, 150]);
    assert_eq!(r.jobs[0].jct_ns(), 260);
}

#[test]
fn a_serving_job_runs_its_setup_once_then_one_recorded_iteration_per_request() {
    // Recorded: setup a [0,100), then iterations b [100,150) and c [150,170),
    // each followed by a sync that returns as the kernel ends.
    let mut t = job(
        "srv",
        0,
        vec![k("a", 1, 0, 100), k("b", 3, 100, 150), k("c", 5, 150, 170)],
    );
    t.syncs = vec![
        fixture::stream_sync(7, 2, 0, 100),
        fixture::stream_sync(7, 4, 100, 150),
        fixture::stream_sync(7, 6, 150, 170),
    ];
    // Requests at 0, 1000 and 1010 after the setup (it ends at 100) replay
    // b, c, b. Request 0 arrives at 100: b [100,150), latency 50. Request
    // 1 at 1100: c [1100,1120), latency 20. Request 2 arrives at 1110
    // while c runs: b [1120,1170), latency 1170-1110 = 60.
    let jobs = vec![Job::from_trace(&t).serving(&[0, 1000, 1010])];
    let r = run_policy(&jobs, &[0], PolicyKind::Exclusive, &model(), false).unwrap();
    assert_eq!(r.jobs[0].iterations_ns, [50, 20, 60]);
    assert_eq!(r.jobs[0].jct_ns(), 1170);
    // Arriving later, the job counts its requests from its own set-up.
    let r = run_policy(&jobs, &[5000], PolicyKind::Exclusive, &model(), false).unwrap();
    assert_eq!(r.jobs[0].iterations_ns, [50, 20, 60]);
}

#[test]
fn a_request_spans_a_step_of_two_waits_and_the_slow_first_step_is_warm_up() {
    // Setup a [0,100); then steps of a short x and a longer y, each with
    // its own wait: x1 [100,110) y1 [110,400) (a slow first pass, 300 ns
    // the step), then x2..x5 and y2..y5, 60 ns a step.
    let mut kernels = vec![k("a", 1, 0, 100)];
    let mut syncs = vec![fixture::stream_sync(7, 1000, 0, 100)];
    let mut t0 = 100;
    for step in 0..5u32 {
        let y_ns = if step == 0 { 290 } else { 50 };
        let (c, t1, t2) = (10 + 4 * step, t0 + 10, t0 + 10 + y_ns);
        kernels.push(k("x", c, t0, t1));
        syncs.push(fixture::stream_sync(7, 1001 + 2 * step, t0, t1));
        kernels.push(k("y", c + 2, t1, t2));
        syncs.push(fixture::stream_sync(7, 1002 + 2 * step, t1, t2));
        t0 = t2;
    }
    let mut t = job("srv", 0, kernels);
    t.syncs = syncs;
    let job = Job::from_trace(&t);
    // The steps repeat every two waits: a request is an x and a y; the
    // first step, over twice the median, runs with the set-up, which ends
    // at 400. Requests at 0 and 1000 after it: x2 y2 [400,460), x3 y3
    // [1400,1460): 60 ns each, from arrival to the step's last wait.
    let r = run_policy(
        &[job.serving(&[0, 1000])],
        &[0],
        PolicyKind::Exclusive,
        &model(),
        false,
    )
    .unwrap();
    assert_eq!(r.jobs[0].iterations_ns, [60, 60]);
    assert_eq!(r.jobs[0].jct_ns(), 1460);
}

#[test]
fn fikit_lets_others_run_while_a_serving_job_waits_for_requests() {
    // srv: setup a [0,100), then b [100,150) per request; requests 0 and
    // 1000 after the setup, i.e. at 100 and 1100. low: one 300 ns kernel,
    // eligible at 0.
    let mut t = job("srv", 0, vec![k("a", 1, 0, 100), k("b", 3, 100, 150)]);
    t.syncs = vec![
        fixture::stream_sync(7, 2, 0, 100),
        fixture::stream_sync(7, 4, 100, 150),
    ];
    let jobs = vec![
        Job::from_trace(&t).serving(&[0, 1000]),
        Job::from_trace(&low(300)),
    ];
    let r = run_policy(&jobs, &[0, 0], PolicyKind::Fikit, &model(), false).unwrap();
    // a and request 0's b run first (srv is the top job); from 150 srv
    // waits for its next request with nothing outstanding, so low's kernel
    // runs [150,450) instead of waiting for srv's end (1150): no recorded
    // gap after b would hold it. Request 1's b runs [1100,1150).
    assert_eq!(r.jobs[1].jct_ns(), 450);
    assert_eq!(r.jobs[0].iterations_ns, [50, 50]);
    assert_eq!(r.jobs[0].jct_ns(), 1150);
}

/// srv: setup a [0,100), then b [100,2100) per request; requests 500
/// and 20,000 after the setup (at 600 and 20,100).
fn returning_server() -> Job {
    server("srv", 0, 2000, &[500, 20_000])
}

/// A server `name` at `priority`: setup a [0,100), then b of `b_ns` per
/// request, its requests `arrivals` after the setup.
fn server(name: &str, priority: u8, b_ns: i64, arrivals: &[i64]) -> Job {
    let end = 100 + b_ns;
    let mut t = job(name, priority, vec![k("a", 1, 0, 100), k("b", 3, 100, end)]);
    t.syncs = vec![
        fixture::stream_sync(7, 2, 0, 100),
        fixture::stream_sync(7, 4, 100, end),
    ];
    Job::from_trace(&t).serving(arrivals)
}

/// low: three 40 ns kernels on three streams, launched 0, 10 and `k2_at`
/// ns after it arrives.
fn three_kernels(k2_at: i64) -> Trace {
    let kernel = |name: &str, stream: u32, corr: u32, at: i64| {
        let mut x = fixture::kernel(name, stream, corr, Some(at), at, at + 40);
        x.launch.as_mut().unwrap().end_ns = at;
        x
    };
    job(
        "low",
        9,
        vec![
            kernel("k0", 7, 1, 0),
            kernel("k1", 8, 2, 10),
            kernel("k2", 9, 3, k2_at),
        ],
    )
}

/// 200 kernels of 40 ns back to back, issued every 10 ns (the host runs ahead).
fn running_ahead() -> Vec<Kernel> {
    (0..200)
        .map(|i| {
            let mut x = k("l", 1 + i as u32, 40 * i, 40 * i + 40);
            x.launch.as_mut().unwrap().start_ns = 10 * i;
            x.launch.as_mut().unwrap().end_ns = 10 * i;
            x
        })
        .collect()
}

#[test]
fn fikit_a_returning_server_waits_behind_the_queue_its_hold_allowed() {
    // srv: setup a [0,100), then b [100,2100) per request; requests 500
    // and 20,000 after the setup (at 600 and 20,100). Its iterations' GPU
    // work: 100, 2000, 2000, median 2000: hold 2000/20 = 100.
    let srv = returning_server();
    assert_eq!(srv.iteration_gpu_ns(), 2000);
    assert_eq!(srv.hold_ns(), 100);
    // low: 200 kernels of 40 ns, issued every 10 ns (its host runs ahead).
    let low = job("low", 9, running_ahead());
    let r = run_policy(
        &[srv, Job::from_trace(&low)],
        &[0, 0],
        PolicyKind::Fikit,
        &model(),
        false,
    )
    .unwrap();
    // a runs [0,100); from 100 srv waits for a request and low's kernels
    // run back to back: l12 [580,620) runs when the request comes at 600.
    // Held on the GPU: l12 (running, 40 ns) and l13 (80 ns, within the
    // hold); l14 would make 120. So l13 runs [620,660), b [660,2660):
    // latency 2060 (2020 with the queue at depth one). low resumes at
    // 2660 with l14..l199, 186 x 40 ns: done at 10,100. The second
    // request finds low done: 2000.
    assert_eq!(r.jobs[0].iterations_ns, [2060, 2000]);
    assert_eq!(r.jobs[1].jct_ns(), 10_100);
    assert_eq!(
        r.misprediction,
        Some((0, 0)),
        "the hold's wait counted as misprediction"
    );
}

#[test]
fn fikit_keeps_a_launch_its_hold_holds_off_the_gpu() {
    // srv as above: away (between requests) from 100 to 600, hold 100.
    // low, arriving at 150: three 40 ns kernels on three streams, launched
    // 0, 10 and 20 ns after it arrives (alone: done at 60). Under FIKIT low
    // is the top while srv is away, its queue within srv's hold: k0 goes
    // at 150 (nothing queued), k1 at 160 (40 + 40 = 80), k2 at 170 would
    // make 120: its launch waits, off the GPU, until k0 is done at 190,
    // then runs [190,230) on its own stream: 80 after low arrived.
    let low = three_kernels(20);
    assert_eq!(
        jcts(std::slice::from_ref(&low), PolicyKind::Exclusive, &model()),
        [60]
    );
    let r = run_policy(
        &[returning_server(), Job::from_trace(&low)],
        &[0, 150],
        PolicyKind::Fikit,
        &model(),
        false,
    )
    .unwrap();
    assert_eq!(r.jobs[1].jct_ns(), 80);
}

#[test]
fn fikit_a_launch_held_off_the_gpu_waits_as_a_filler_once_the_server_returns() {
    // srv as above: away from 100, its request at 600 (b, 2000 ns, launched
    // as it arrives). low arrives at 580: k0 at 580, k1 at 590 (80
    // queued), k2 at 595 would make 120, over srv's hold of 100: held off
    // the GPU. srv returns at 600 and waits behind what is on the GPU (k0
    // and k1, done at 620 and 630): b runs [630,2630). k2 was not on the
    // GPU: it waits at its gate as a filler, and no gap of srv's fits it
    // until srv is away again at 2630: [2630,2670), low's end 2090 after it
    // arrived. srv's request: 600 to 2630.
    let low = three_kernels(15);
    let r = run_policy(
        &[returning_server(), Job::from_trace(&low)],
        &[0, 580],
        PolicyKind::Fikit,
        &model(),
        false,
    )
    .unwrap();
    assert_eq!(r.jobs[1].jct_ns(), 2090);
    // Its requests, arrival to end: the first behind k0 and k1, the second
    // alone.
    assert_eq!(r.jobs[0].iterations_ns, [2030, 2000]);
}

#[test]
fn fikit_holds_the_top_to_the_least_hold_of_the_servers_away() {
    // srv as above (hold 100); srv2 at priority 1 the same with b 4000 ns
    // long (hold 4000/20 = 200), its setup kernel after srv's (it waits
    // at its gate while srv runs): both are away from 200 on. low, as in
    // the test above but arriving at 300: the top, held to the lesser hold
    // (100), so k2 (launched at 320, 120 queued) waits for k0's end at 340
    // and low ends 80 after it arrived; held to srv2's 200 it would end
    // at 60. A server that is done holds nobody.
    let srv2 = server("srv2", 1, 4000, &[500, 20_000]);
    assert_eq!(srv2.hold_ns(), 200);
    let low = Job::from_trace(&three_kernels(20));
    let jct = |jobs: &[Job]| {
        let arrivals = [0, 0, 300];
        let r = run_policy(
            jobs,
            &arrivals[3 - jobs.len()..],
            PolicyKind::Fikit,
            &model(),
            false,
        );
        r.unwrap().jobs.last().unwrap().jct_ns()
    };
    assert_eq!(jct(&[returning_server(), srv2.clone(), low.clone()]), 80);
    // srv2 alone above low: its own hold lets k2 go at once.
    assert_eq!(jct(&[srv2, low.clone()]), 60);
    // A server done with its one request holds nobody: low, arriving after
    // it, launches freely.
    let once = server("once", 0, 2000, &[0]);
    // A hold that would keep k2 waiting (120 queued) if it applied.
    assert!((1..120).contains(&once.hold_ns()), "{}", once.hold_ns());
    let r = run_policy(&[once, low], &[0, 5000], PolicyKind::Fikit, &model(), false).unwrap();
    assert!(r.jobs[0].jct_ns() < 5000, "{}", r.jobs[0].jct_ns());
    assert_eq!(r.jobs[1].jct_ns(), 60);
}

#[test]
fn waits_between_copies_alone_end_no_iteration() {
    // Two blocking copies (weight uploads) before the first kernel: one iteration.
    let mut t = job("up", 0, vec![k("a", 3, 500, 600)]);
    for (i, (s, e)) in [(0, 100), (200, 300)].into_iter().enumerate() {
        t.memops.push(fikit_trace::MemOp {
            start_ns: s,
            end_ns: e,
            placement: fikit_trace::Placement {
                device: 0,
                context: 1,
                stream: 7,
            },
            correlation_id: 10 + i as u32,
            copy_kind: Some(fikit_trace::CopyKind::HtoD),
            bytes: 1 << 20,
            launch: Some(fikit_trace::HostCall {
                start_ns: s,
                end_ns: e,
                thread_id: 7,
            }),
        });
        t.api_calls.push(fikit_trace::ApiCall {
            domain: fikit_trace::ApiDomain::Runtime,
            name: "cudaMemcpy".into(),
            start_ns: s,
            end_ns: e,
            thread_id: 7,
            correlation_id: 10 + i as u32,
        });
    }
    t.syncs = vec![fixture::stream_sync(7, 4, 500, 600)];
    let jobs = vec![Job::from_trace(&t)];
    let r = run_policy(&jobs, &[0], PolicyKind::Exclusive, &model(), false).unwrap();
    assert_eq!(r.jobs[0].iterations_ns, [600]);
}

#[test]
fn timeslice_hands_over_by_quantum_only() {
    // L runs 100 ns kernels back to back [0,500); H arrives at 250 with one
    // 50 ns kernel. Quantum 1000, so by quantum alone H waits for L to run out
    // of work: L done at 500, switch 10, h1 [510,560): H's JCT 310.
    let l = job(
        "low",
        9,
        (0..5)
            .map(|i| {
                k(
                    &format!("l{i}"),
                    i + 1,
                    100 * i64::from(i),
                    100 * i64::from(i) + 100,
                )
            })
            .collect(),
    );
    let h = job("high", 0, vec![k("h1", 1, 0, 50)]);
    let jobs: Vec<Job> = [h, l].iter().map(Job::from_trace).collect();
    let run = |m: &GpuModel| -> Vec<i64> {
        jcts_of(&run_policy(&jobs, &[250, 0], PolicyKind::Timeslice, m, false).unwrap())
    };
    let quantum = GpuModel {
        timeslice_quantum_ns: 1000,
        context_switch_ns: 10,
        ..GpuModel::default()
    };
    assert_eq!(run(&quantum), [310, 500]);
}

/// The latency-critical job's idle time and its filled part, (idle, filled).
fn fill(traces: &[Trace], kind: PolicyKind) -> Option<(i64, i64)> {
    let jobs: Vec<Job> = traces.iter().map(Job::from_trace).collect();
    let r = run_policy(&jobs, &vec![0; jobs.len()], kind, &model(), false).unwrap();
    r.fill.map(|f| {
        assert_eq!(f.job, 0, "H is the latency-critical job");
        (f.idle_ns, f.filled_ns)
    })
}

#[test]
fn fill_counts_what_others_ran_in_the_high_jobs_idle_time() {
    // H is idle in its host gap [100,300): 200 ns, whatever the policy.
    // FIKIT: L's 150 fits the gap and runs [100,250): 150 of the 200.
    assert_eq!(
        fill(&[high(), low(150)], PolicyKind::Fikit),
        Some((200, 150))
    );
    // L's 250 does not fit: it waits for H's end and runs [400,650),
    // after H's last kernel, where nothing is H's idle time: nothing filled.
    assert_eq!(fill(&[high(), low(250)], PolicyKind::Fikit), Some((200, 0)));
    // Preemptive: L runs once H has nothing queued, [100,...): L's 250
    // runs [100,350), so the whole gap is filled (h2 waits for it).
    assert_eq!(
        fill(&[high(), low(250)], PolicyKind::Preemptive),
        Some((200, 200))
    );
    // A job alone has no one to fill its gaps.
    assert_eq!(fill(&[high()], PolicyKind::Fikit), None);
}

#[test]
fn fikit_a_job_that_never_left_is_not_held_behind_a_filler() {
    // mid (prio 1): ten back-to-back 100 ns kernels from 0, then a sync:
    // one iteration of 1000 ns of GPU work, hold 50. top (prio 0) arrives at
    // 250 with one 50 ns kernel. low (prio 9): one 10 us kernel, eligible at
    // 0, never fits mid's (zero) gaps.
    let mut m = job(
        "mid",
        1,
        (0..10)
            .map(|i| k("m", 1 + i as u32, 100 * i, 100 * i + 100))
            .collect(),
    );
    m.syncs = vec![fixture::stream_sync(7, 11, 950, 1000)];
    let top = job("top", 0, vec![k("t", 1, 0, 50)]);
    let lo = job("low", 9, vec![k("l", 1, 0, 10_000)]);
    let j = jcts_arriving(
        &[m.clone(), top.clone(), lo.clone()],
        &[0, 250, 0],
        PolicyKind::Fikit,
        &model(),
    );
    // mid's m2 runs [200,300) when top arrives: t runs [300,350). mid never
    // went away, so nothing is held: m3..m9 run [350,1050), its sync
    // returns at 1050; low's 10 µs kernel goes after, [1050,11050).
    assert_eq!(j, [1050, 100, 11_050]);
}

#[test]
fn fikit_a_returning_server_is_not_held_behind_a_fillers_unlaunched_kernel() {
    // As fikit_a_returning_server_waits_behind_the_queue_its_hold_allowed,
    // plus a third job (prio 9) whose one 10 us kernel is eligible from 0
    // and never fits: in the live gate it waits at the gate, not on the GPU.
    let srv = returning_server();
    let mid = job("mid", 1, running_ahead());
    let far = job("far", 9, vec![k("f", 1, 0, 10_000)]);
    let r = run_policy(
        &[srv, Job::from_trace(&mid), Job::from_trace(&far)],
        &[0, 0, 0],
        PolicyKind::Fikit,
        &model(),
        false,
    )
    .unwrap();
    assert_eq!(r.jobs[0].iterations_ns, [2060, 2000]);
}
