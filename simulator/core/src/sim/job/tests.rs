use super::*;

fn issue() -> HostStep {
    HostStep::Issue { delay_ns: 0, op: 0 }
}

fn wait(ends_iteration: bool) -> HostStep {
    HostStep::Wait {
        delay_ns: 0,
        op: NO_OP,
        wake_ns: 0,
        ends_iteration,
    }
}

#[test]
fn set_up_runs_through_the_weight_upload() {
    // The input made on the GPU (a kernel), then two weights' copies,
    // each waited for: the first copy's wait ends iteration 1, the second
    // ends none, and iteration 2 (the upload) ends at the first warm-up
    // step's wait; steps follow.
    let input_first = [
        issue(),
        wait(true),
        issue(),
        wait(false),
        issue(),
        wait(true),
        issue(),
        wait(true),
        issue(),
        wait(true),
    ];
    assert_eq!(setup_iterations(&input_first), 2);
    // Weights first: the upload is all in iteration 1.
    let weights_first = [
        issue(),
        wait(false),
        issue(),
        wait(false),
        issue(),
        wait(true),
        issue(),
        wait(true),
    ];
    assert_eq!(setup_iterations(&weights_first), 1);
    // No waits at all: the one iteration is the set-up.
    assert_eq!(setup_iterations(&[issue()]), 1);
    // A copy-only wait later in the run does not reach back.
    let late = [
        issue(),
        wait(true),
        issue(),
        wait(true),
        issue(),
        wait(false),
        wait(true),
    ];
    assert_eq!(setup_iterations(&late), 1);
    // A copy waited for in every iteration: the set-up stops at two.
    let every: Vec<HostStep> = (0..5)
        .flat_map(|_| [issue(), wait(false), issue(), wait(true)])
        .collect();
    assert_eq!(setup_iterations(&every), 2);
}

#[test]
fn a_faster_host_shortens_its_delays_only() {
    let job = Job::from_trace(&fikit_trace::fixture::serving("j", 0, 3));
    let fast = job.with_host_speed(0.5);
    assert_eq!(fast.ops.len(), job.ops.len());
    let delays = |j: &Job| -> Vec<(i64, i64)> {
        j.steps
            .iter()
            .filter_map(|s| match *s {
                HostStep::Issue { delay_ns, .. } => Some((delay_ns, 0)),
                HostStep::Wait {
                    delay_ns, wake_ns, ..
                } => Some((delay_ns, wake_ns)),
                HostStep::Arrive { .. } => None,
            })
            .collect()
    };
    let (before, after) = (delays(&job), delays(&fast));
    assert!(
        before.iter().any(|&(d, _)| d > 1),
        "the fixture has host delays"
    );
    for ((d, w), (d2, w2)) in before.iter().zip(&after) {
        assert_eq!(*d2, (*d as f64 * 0.5).round() as i64);
        assert_eq!(w, w2, "the driver's wake-up stays");
    }
    assert_eq!(fast.gap_after_kernel_ns, job.gap_after_kernel_ns);
    assert_eq!(job.with_host_speed(1.0).steps.len(), job.steps.len());
}

#[test]
fn the_host_per_launch_leaves_out_the_set_up_the_waits_and_the_longest_hundredth() {
    let job = Job::from_trace(&fikit_trace::fixture::serving("j", 0, 3));
    let at = |delay_ns| HostStep::Issue { delay_ns, op: 0 };
    // Ten issues, a wait between them that counts for nothing: the
    // first two (1,000 and 5) are the set-up; the other eight average
    // (7 + 9 + 30 + 40 + 50 + 60 + 70 + 80) / 8 = 43.25, none left out
    // (8 / 100 rounds down to 0).
    let mut steps = Vec::new();
    for d in [1_000, 5, 7, 9, 30, 40, 50, 60, 70, 80] {
        steps.push(at(d));
        steps.push(HostStep::Wait {
            delay_ns: 99_999,
            op: NO_OP,
            wake_ns: 0,
            ends_iteration: true,
        });
    }
    let hand = Job {
        steps: steps.into(),
        ..job.clone()
    };
    assert_eq!(hand.host_ns_per_launch(), Some(43.25));
    // A host twice as slow doubles it.
    assert_eq!(hand.with_host_speed(2.0).host_ns_per_launch(), Some(86.5));
    // 251 issues: the first 50 (251 / 5) are the set-up, delays of 1 ms;
    // of the other 201, 198 of 10 ns, one of 30 and two pauses of 5 ms:
    // the longest two (201 / 100) are left out, the rest average
    // (198 x 10 + 30) / 199 = 10.1005...
    let mut d = vec![1_000_000; 50];
    d.extend([10; 99]);
    d.push(5_000_000);
    d.push(30);
    d.extend([10; 99]);
    d.push(5_000_000);
    let paused = Job {
        steps: d.into_iter().map(at).collect::<Vec<_>>().into(),
        ..job.clone()
    };
    let h = paused.host_ns_per_launch().unwrap();
    assert!((h - 2_010.0 / 199.0).abs() < 1e-9, "{h}");
    // One issue: its fifth (1 / 5) rounds down to none, so it is kept.
    let one = Job {
        steps: vec![at(7)].into(),
        ..job.clone()
    };
    assert_eq!(one.host_ns_per_launch(), Some(7.0));
    let none = Job {
        steps: Vec::new().into(),
        ..job
    };
    assert_eq!(none.host_ns_per_launch(), None);
}

#[test]
fn a_program_with_no_step_past_its_set_up_serves_each_request_whole() {
    // The fixture's first iteration is its set-up: one iteration leaves
    // nothing to serve with, two leave one step.
    let one = Job::from_trace(&fikit_trace::fixture::serving("j", 0, 1));
    let two = Job::from_trace(&fikit_trace::fixture::serving("j", 0, 2));
    assert_eq!((one.setup_iterations, two.setup_iterations), (1, 1));
    assert!(one.serves_whole_program());
    assert!(!two.serves_whole_program());
    // Served, the whole program replays per request: every op each time.
    assert_eq!(one.serving(&[0, 10]).ops.len(), 2 * one.ops.len());
}
