//! Turning CUPTI recording on, all or nothing.
//!
//! [`switch_on`] enables what a [`Plan`] lists and remembers each step in an
//! [`Undo`] list. If a step the recording cannot do without fails, or anything
//! panics midway, every step already taken is reversed, newest first
//! (`cuptiActivityDisable`, `cuptiActivityEnable{Runtime,Driver}Api(…, 0)`,
//! `cuptiEnableCallback(0, …)`, `cuptiUnsubscribe`), so the program is left
//! as it was: no half-enabled recording. The CUPTI calls go through the
//! [`Switches`] trait, so this is tested without CUPTI.

/// One thing that was switched on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `cuptiSubscribe` (the handle, as an address).
    Subscribed(usize),
    /// `cuptiActivityEnable(kind)`.
    Kind(u32),
    /// API activity records for one runtime (`true`) or driver callback id.
    ApiRecords(bool, u32),
    /// `cuptiEnableCallback` for one runtime (`true`) or driver callback id.
    Callback(bool, u32),
    /// `cuptiActivityFlushPeriod(ms > 0)`.
    FlushPeriod,
    /// `cuptiActivityEnableLatencyTimestamps(1)`.
    LatencyTimestamps,
}

/// The CUPTI calls that switch recording on and off.
pub trait Switches {
    /// Turns `step` on.
    fn on(&self, step: Step) -> Result<(), String>;
    /// Turns `step` off again.
    fn off(&self, step: Step) -> Result<(), String>;
}

/// The steps taken so far; reversed when dropped while armed (on an error
/// return or a panic).
pub struct Undo<'a, S: Switches> {
    switches: &'a S,
    steps: Vec<Step>,
    armed: bool,
    failures: Vec<String>,
}

impl<'a, S: Switches> Undo<'a, S> {
    /// An empty, armed list.
    pub fn new(switches: &'a S) -> Self {
        Undo {
            switches,
            steps: Vec::new(),
            armed: true,
            failures: Vec::new(),
        }
    }

    /// Records a step that was taken.
    pub fn push(&mut self, step: Step) {
        self.steps.push(step);
    }

    /// Keeps everything switched on; returns the steps.
    pub fn keep(mut self) -> Vec<Step> {
        self.armed = false;
        std::mem::take(&mut self.steps)
    }

    /// Switches everything off now, newest first; returns the steps that
    /// could not be switched off, with why.
    pub fn undo(mut self) -> Vec<String> {
        self.run();
        std::mem::take(&mut self.failures)
    }

    fn run(&mut self) {
        self.armed = false;
        while let Some(step) = self.steps.pop() {
            if let Err(e) = self.switches.off(step) {
                self.failures.push(format!("{step:?}: {e}"));
            }
        }
    }
}

impl<S: Switches> Drop for Undo<'_, S> {
    fn drop(&mut self) {
        if self.armed {
            self.run();
        }
    }
}

/// What to switch on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Activity kinds, and whether recording is pointless without it.
    pub kinds: Vec<(u32, bool)>,
    /// API activity records, per (runtime?, callback id).
    pub api_records: Vec<(bool, u32)>,
    /// API callbacks, per (runtime?, callback id), on the subscription.
    pub callbacks: Vec<(bool, u32)>,
    /// Let CUPTI's worker deliver buffers periodically.
    pub flush_period: bool,
    /// Kernel queued/submitted timestamps.
    pub latency_timestamps: bool,
}

/// Switches `plan` on after the steps already in `undo` (the subscription).
/// Optional steps that fail become notes; a required kind that fails undoes
/// everything and returns why. On success the steps stay on.
pub fn switch_on<S: Switches>(
    mut undo: Undo<'_, S>,
    plan: &Plan,
) -> Result<(Vec<Step>, Vec<String>), String> {
    let s = undo.switches;
    let mut notes = Vec::new();
    for &(kind, required) in &plan.kinds {
        match s.on(Step::Kind(kind)) {
            Ok(()) => undo.push(Step::Kind(kind)),
            Err(e) if required => {
                let failures = undo.undo();
                return Err(undone(
                    format!("{e} for activity kind {kind}, which recording needs"),
                    &failures,
                ));
            }
            Err(e) => notes.push(format!("{e} for activity kind {kind}")),
        }
    }
    for (list, make) in [
        (&plan.api_records, Step::ApiRecords as fn(bool, u32) -> Step),
        (&plan.callbacks, Step::Callback as fn(bool, u32) -> Step),
    ] {
        let mut failed = 0;
        let mut last = None;
        for &(runtime, cbid) in list {
            let step = make(runtime, cbid);
            match s.on(step) {
                Ok(()) => undo.push(step),
                Err(e) => {
                    failed += 1;
                    last = Some(e);
                }
            }
        }
        if let Some(e) = last {
            notes.push(format!("{failed} API callbacks could not be enabled: {e}"));
        }
    }
    for (wanted, step) in [
        (plan.flush_period, Step::FlushPeriod),
        (plan.latency_timestamps, Step::LatencyTimestamps),
    ] {
        if wanted {
            match s.on(step) {
                Ok(()) => undo.push(step),
                Err(e) => notes.push(e),
            }
        }
    }
    Ok((undo.keep(), notes))
}

/// The message for a start-up that was undone.
pub fn undone(why: String, failures: &[String]) -> String {
    if failures.is_empty() {
        format!(
            "{why}; everything the collector had enabled was disabled again, the program runs untraced"
        )
    } else {
        format!(
            "{why}; disabling what was enabled failed for {} step(s) ({}): CUPTI may still \
             record, unread",
            failures.len(),
            failures.join("; ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// Records every call; fails `on` for the listed steps, panics on `panic_on`.
    #[derive(Default)]
    struct Fake {
        log: RefCell<Vec<(bool, Step)>>,
        fail: Vec<Step>,
        panic_on: Option<Step>,
    }

    impl Switches for Fake {
        fn on(&self, step: Step) -> Result<(), String> {
            if self.panic_on == Some(step) {
                panic!("injected");
            }
            self.log.borrow_mut().push((true, step));
            if self.fail.contains(&step) {
                self.log.borrow_mut().pop();
                return Err("CUPTI_ERROR_NOT_SUPPORTED".into());
            }
            Ok(())
        }
        fn off(&self, step: Step) -> Result<(), String> {
            self.log.borrow_mut().push((false, step));
            Ok(())
        }
    }

    impl Fake {
        /// What is still switched on after the log's calls.
        fn still_on(&self) -> Vec<Step> {
            let mut on = Vec::new();
            for &(enable, step) in self.log.borrow().iter() {
                if enable {
                    on.push(step);
                } else {
                    on.retain(|s| *s != step);
                }
            }
            on
        }
    }

    const KERNEL: u32 = 10;
    const MEMCPY: u32 = 1;

    fn plan() -> Plan {
        Plan {
            kinds: vec![(MEMCPY, false), (KERNEL, true)],
            api_records: vec![(true, 211), (false, 307)],
            callbacks: vec![],
            flush_period: true,
            latency_timestamps: false,
        }
    }

    fn subscribed(f: &Fake) -> Undo<'_, Fake> {
        f.log.borrow_mut().push((true, Step::Subscribed(0x1000)));
        let mut u = Undo::new(f);
        u.push(Step::Subscribed(0x1000));
        u
    }

    #[test]
    fn everything_stays_on_when_it_works() {
        let f = Fake::default();
        let (steps, notes) = switch_on(subscribed(&f), &plan()).unwrap();
        assert!(notes.is_empty());
        assert_eq!(steps.len(), 6);
        assert_eq!(f.still_on(), steps);
    }

    #[test]
    fn a_required_kind_that_fails_undoes_everything_newest_first() {
        // MEMCPY was enabled before KERNEL failed.
        let f = Fake {
            fail: vec![Step::Kind(KERNEL)],
            ..Fake::default()
        };
        let e = switch_on(subscribed(&f), &plan()).unwrap_err();
        assert!(e.contains("activity kind 10"), "{e}");
        assert!(e.contains("disabled again"), "{e}");
        assert!(f.still_on().is_empty(), "{:?}", f.log.borrow());
        let log = f.log.borrow();
        let offs: Vec<Step> = log.iter().filter(|(on, _)| !on).map(|(_, s)| *s).collect();
        assert_eq!(offs, [Step::Kind(MEMCPY), Step::Subscribed(0x1000)]);
    }

    #[test]
    fn optional_failures_are_notes_and_the_rest_stays_on() {
        let f = Fake {
            fail: vec![Step::Kind(MEMCPY), Step::ApiRecords(false, 307)],
            ..Fake::default()
        };
        let (steps, notes) = switch_on(subscribed(&f), &plan()).unwrap();
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[1].starts_with("1 API callbacks could not be enabled"));
        assert!(!steps.contains(&Step::Kind(MEMCPY)));
        assert_eq!(f.still_on(), steps);
    }

    #[test]
    fn a_panic_midway_undoes_what_was_enabled() {
        let f = Fake {
            panic_on: Some(Step::ApiRecords(false, 307)),
            ..Fake::default()
        };
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            switch_on(subscribed(&f), &plan())
        }));
        assert!(r.is_err());
        // Kinds and the first API id had been switched on: all off again.
        assert!(f.still_on().is_empty(), "{:?}", f.log.borrow());
        assert_eq!(f.log.borrow().iter().filter(|(on, _)| !on).count(), 4);
    }

    #[test]
    fn kept_steps_are_not_undone_and_undo_reports_failures() {
        let f = Fake::default();
        let mut u = Undo::new(&f);
        u.push(Step::Kind(KERNEL));
        assert_eq!(u.keep(), [Step::Kind(KERNEL)]);
        assert!(f.log.borrow().is_empty());

        struct Stuck;
        impl Switches for Stuck {
            fn on(&self, _: Step) -> Result<(), String> {
                Ok(())
            }
            fn off(&self, _: Step) -> Result<(), String> {
                Err("CUPTI_ERROR_INVALID_OPERATION".into())
            }
        }
        let mut u = Undo::new(&Stuck);
        u.push(Step::Kind(KERNEL));
        let failures = u.undo();
        assert_eq!(failures.len(), 1);
        let msg = undone("x".into(), &failures);
        assert!(msg.contains("may still record"), "{msg}");
    }
}
