//! Progress of long `fikit-sim` runs on the terminal: which phase runs
//! (reading traces, each policy's replay) and for how long, so a run over
//! tens of millions of kernels is visibly alive. Hidden when standard error
//! is not a terminal (logs and pipes get only the results).

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar on standard error counting `len` units with `template` (indicatif's
/// template syntax) when `visible`; hidden otherwise.
pub fn counter(len: u64, visible: bool, template: &str) -> ProgressBar {
    if !visible {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    bar.set_draw_target(ProgressDrawTarget::stderr());
    bar.set_style(ProgressStyle::with_template(template).expect("a valid template"));
    bar
}

/// A spinner on standard error naming the current phase, with the elapsed time.
pub struct Phases {
    bar: ProgressBar,
}

impl Phases {
    /// A spinner drawn when `visible` (e.g. standard error is a terminal);
    /// otherwise every call does nothing.
    pub fn new(visible: bool) -> Phases {
        if !visible {
            return Phases {
                bar: ProgressBar::hidden(),
            };
        }
        let bar = ProgressBar::new_spinner();
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        Phases { bar }
    }

    /// Starts a phase: `msg` replaces the previous one.
    pub fn phase(&self, msg: impl Into<String>) {
        self.bar.set_message(msg.into());
    }

    /// Removes the spinner.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for Phases {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
